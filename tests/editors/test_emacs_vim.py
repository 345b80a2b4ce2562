"""The Emacs (eglot) and Vim (ALE) snippets of docs/editors/other.md, in the real editors,
headless: Emacs 28 + eglot in batch mode, Vim 9 + ALE in a pseudo-terminal (``script``).

Each loads the docs' snippet as written (so the docs are what is tested), opens
examples/legacy_kernel.py, gets flydsl-ls's findings and a hover on a deprecated API; Emacs
also saves with the snippet's fix-all hook (the file then equals ``flydsl-ls check --fix``).
``flydsl-ls`` is found on PATH, as a user's would be: the interpreter's bin folder is put
first. Debian's ``emacs-nox elpa-eglot vim-ale`` come from .ci/run; without them these tests
skip (except under FLYDSL_REQUIRE_EDITORS=1, as in CI).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
REPO = HERE.parents[1]
DOCS = REPO / "docs" / "editors" / "other.md"
ALE = Path("/usr/share/vim-ale")


def _absent(what: str) -> None:
    if os.environ.get("FLYDSL_REQUIRE_EDITORS") == "1":
        pytest.fail(f"{what} not installed, but FLYDSL_REQUIRE_EDITORS=1")
    pytest.skip(f"{what} not installed (.ci/run installs it)")


def _snippet(language: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(), re.S)
    assert len(blocks) == 1, f"one {language} block expected in {DOCS}"
    return blocks[0]


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "kernels"\nversion = "0"\n')
    shutil.copy(REPO / "examples" / "legacy_kernel.py", project / "legacy_kernel.py")
    return project


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    bin_dir = Path(sys.executable).parent  # where pip put the flydsl-ls script
    assert (bin_dir / "flydsl-ls").exists() or shutil.which("flydsl-ls"), "flydsl-ls is not installed as a command"
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
        "HOME": str(tmp_path / "home"),
        "TERM": "xterm",
        **extra,
    }


def _report(path: Path, proc: subprocess.CompletedProcess) -> dict:
    assert path.exists(), f"no report:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return json.loads(path.read_text())


def test_emacs_eglot_snippet(tmp_path: Path):
    emacs = shutil.which("emacs")
    if emacs is None or not list(Path("/usr/share/emacs/site-lisp/elpa").glob("eglot-*")):
        _absent("Emacs with eglot (apt emacs-nox elpa-eglot)")
    project = _project(tmp_path)
    snippet = tmp_path / "flydsl-ls.el"
    snippet.write_text(_snippet("elisp"))
    result_file = tmp_path / "emacs.json"
    env = _env(
        tmp_path,
        FLYDSL_E2E_SNIPPET=str(snippet),
        FLYDSL_E2E_FILE=str(project / "legacy_kernel.py"),
        FLYDSL_E2E_RESULT=str(result_file),
    )
    (tmp_path / "home").mkdir()
    proc = subprocess.run(
        [emacs, "--batch", "-l", str(HERE / "eglot_e2e.el")],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300,
    )
    result = _report(result_file, proc)
    assert result["ok"], f"{result}\n{proc.stderr[-4000:]}"
    assert result["steps"] == ["connected", "diagnostics", "hover", "fix-all on save"]
    assert result["server"][-2:] == ["flydsl-ls", "serve"]
    assert any("FLY101" in d or "ArithValue" in d for d in result["diagnostics"]), result["diagnostics"]
    assert "FLY901" in result["hover"] and "fx.max" in result["hover"]
    # fix-all on save == the CLI's --fix
    cli = tmp_path / "cli"
    shutil.copytree(project, cli, ignore=shutil.ignore_patterns("*~"))
    shutil.copy(REPO / "examples" / "legacy_kernel.py", cli / "legacy_kernel.py")
    subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "check", "--fix", "--exit-zero", "-q", "legacy_kernel.py"],
        cwd=cli, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, timeout=120,
    )
    fixed = (project / "legacy_kernel.py").read_text()
    assert fixed != (REPO / "examples" / "legacy_kernel.py").read_text()
    assert fixed == (cli / "legacy_kernel.py").read_text()


def test_vim_ale_snippet(tmp_path: Path):
    vim, script = shutil.which("vim"), shutil.which("script")
    if vim is None or script is None or not (ALE / "autoload" / "ale.vim").exists():
        _absent("Vim with ALE (apt vim-ale)")
    project = _project(tmp_path)
    snippet = tmp_path / "flydsl-ls.vim"
    snippet.write_text(_snippet("vim"))
    result_file = tmp_path / "vim.json"
    env = _env(
        tmp_path,
        FLYDSL_E2E_ALE=str(ALE),
        FLYDSL_E2E_SNIPPET=str(snippet),
        FLYDSL_E2E_RESULT=str(result_file),
    )
    (tmp_path / "home").mkdir()
    command = f"{vim} -N -u {HERE / 'ale_e2e.vim'} -i NONE -n legacy_kernel.py"
    proc = subprocess.run(
        [script, "-qec", command, "/dev/null"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300,
    )
    result = _report(result_file, proc)
    assert result["ok"], result
    assert result["steps"] == ["diagnostics", "hover"]
    codes = {d["code"] for d in result["diagnostics"]}
    assert {"FLY101", "FLY103", "FLY901"} <= codes, result["diagnostics"]
    lines = {d["lnum"] for d in result["diagnostics"] if d["code"] == "FLY103"}
    assert 34 in lines  # 1-based, as the CLI prints it
    assert "FLY901" in result["hover"]

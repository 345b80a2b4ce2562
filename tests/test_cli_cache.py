"""`flydsl-ls check` in worker processes and with its result cache, run as a user runs it.

A cached result is recognised by tampering with the cache: every cached message gets a
``CACHED`` prefix, so a run that prints it was served from the cache, and a file whose
findings must be recomputed (its bytes, its settings or a file it read changed) prints
without it.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LEGACY = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr.arith import ArithValue\n"
    "tid = fx.thread_idx.x\n"
    "lane = ArithValue(tid) % 64\n"
    "wrap = fx.Int32(fx.Int32(3))\n"
)
# helpers.reduce gets its dialect module from a caller in another file.
HELPERS = "def reduce(m, a, b):\n    return m.arith.maximumf(a, b)\n"
KERNEL = "import flydsl.expr as fx\nfrom helpers import reduce\n\n\ndef k(a, b):\n    return reduce(fx, a, b)\n"
RUN_COMPILED = "def _run_compiled(exe, *args):\n    return exe(*args)\n"
# A module-level waitcnt constant is dead (FLY402) unless another project file mentions it.
SHIM = "_LGKMCNT_0_ONLY = 0xC07F\n"
READER = "from shim import _LGKMCNT_0_ONLY\nprint(_LGKMCNT_0_ONLY)\n"


def run(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "FLYDSL_GPU_ARCH"}
    environment.update(env or {}, FLYDSL_LS_CACHE=str(cwd / "user-cache"))
    result = subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def outcome(result: subprocess.CompletedProcess) -> tuple:
    return result.returncode, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    (root / "requirements.txt").write_text("flydsl==0.5.0\n")
    (root / "legacy.py").write_text(LEGACY)
    (root / "helpers.py").write_text(HELPERS)
    (root / "kern.py").write_text(KERNEL)
    (root / "runner_a.py").write_text(RUN_COMPILED)
    (root / "sub" / "runner_b.py").write_text(RUN_COMPILED)
    (root / "shim.py").write_text(SHIM)
    (root / "reader.py").write_text(READER)
    (root / "broken.py").write_text("def f(:\n")
    (root / "latin.py").write_bytes(b"x = '\xe9'\n")  # not UTF-8: reported and skipped
    return root


def entries_file(folder: Path) -> Path:
    found = list(folder.rglob("entries.pickle"))
    assert len(found) == 1, found
    return found[0]


def tamper(folder: Path) -> None:
    """Prefix every cached message with CACHED."""
    path = entries_file(folder)
    entries = pickle.loads(path.read_bytes())
    for entry in entries.values():
        for diagnostic in entry.result.diagnostics:
            diagnostic.message = "CACHED " + diagnostic.message
    path.write_bytes(pickle.dumps(entries))


def cached_files(result: subprocess.CompletedProcess) -> set[str]:
    return {line.split(":")[0] for line in result.stdout.splitlines() if "CACHED" in line}


def lines_of(result: subprocess.CompletedProcess, name: str) -> list[str]:
    return [line.replace("CACHED ", "") for line in result.stdout.splitlines() if line.startswith(name + ":")]


def test_the_fixture_has_cross_file_findings(project):
    result = run("--no-cache", ".", cwd=project)
    assert "FLY301" in "\n".join(lines_of(result, "helpers.py"))  # its module comes from kern.py
    assert lines_of(result, "shim.py") == []  # reader.py uses the constant
    assert any("FLY702" in line for line in lines_of(result, "sub/runner_b.py"))
    assert "FLY000" in "\n".join(lines_of(result, "broken.py"))
    assert "latin.py" in result.stderr


@pytest.mark.parametrize("extra", [(), ("--output-format", "json"), ("--statistics",), ("--select", "FLY1,FLY7")])
def test_parallel_output_is_the_serial_output(project, extra):
    serial = run("--no-cache", "-j1", *extra, ".", cwd=project)
    assert serial.returncode == 1
    for jobs in ("2", "3"):
        assert outcome(run("--no-cache", "-j", jobs, *extra, ".", cwd=project)) == outcome(serial)


@pytest.mark.parametrize("mode", [("--fix",), ("--fix", "--unsafe-fixes"), ("--diff",), ("--fix-only",)])
def test_parallel_fixes_are_the_serial_fixes(project, tmp_path, mode):
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    serial = run("-j1", *mode, ".", cwd=project)
    parallel = run("-j2", *mode, ".", cwd=copy)
    assert outcome(parallel) == outcome(serial)
    for path in project.rglob("*.py"):
        assert (copy / path.relative_to(project)).read_bytes() == path.read_bytes(), path
    if mode == ("--diff",):
        assert (project / "legacy.py").read_text() == LEGACY
    else:
        assert (project / "legacy.py").read_text() != LEGACY


def test_a_cache_hit_gives_the_same_output(project):
    cold = run(".", cwd=project)
    warm = run(".", cwd=project)
    assert outcome(warm) == outcome(cold)
    assert outcome(warm) == outcome(run("--no-cache", ".", cwd=project))
    tamper(project / "user-cache")
    hit = run(".", cwd=project)
    # Every file that was checked comes from the cache (latin.py was never cached).
    assert cached_files(hit) == {line.split(":")[0] for line in cold.stdout.splitlines() if line.count(":") >= 3}
    assert hit.returncode == cold.returncode


def test_an_edit_of_the_file_invalidates_it(project):
    run(".", cwd=project)
    tamper(project / "user-cache")
    (project / "legacy.py").write_text(LEGACY + "more = fx.Int32(fx.Int32(4))\n")
    result = run(".", cwd=project)
    assert "legacy.py" not in cached_files(result)
    assert "helpers.py" in cached_files(result)  # helpers reads kern.py, not legacy.py
    assert len(lines_of(result, "legacy.py")) == 3


@pytest.mark.parametrize(
    "change",
    [
        ("--select", "FLY1"),
        ("--ignore", "FLY104"),
        ("--target-arch", "gfx942"),
        ("--flydsl-version", "0.3.1"),
    ],
)
def test_a_settings_change_invalidates(project, change):
    run(".", cwd=project)
    tamper(project / "user-cache")
    changed = run(*change, ".", cwd=project)
    assert cached_files(changed) == set()
    assert outcome(changed) == outcome(run("--no-cache", *change, ".", cwd=project))


def test_pyproject_settings_and_the_arch_variable_invalidate(project):
    run(".", cwd=project)
    tamper(project / "user-cache")
    assert cached_files(run(".", cwd=project, env={"FLYDSL_GPU_ARCH": "gfx950"})) == set()
    (project / "requirements.txt").write_text("flydsl==0.3.1\n")  # the release the project declares
    assert cached_files(run(".", cwd=project)) == set()


def test_pyproject_table_moves_the_cache_and_keys_it(project):
    (project / "pyproject.toml").write_text('[tool.flydsl-ls]\nignore = ["FLY104"]\n')
    first = run(".", cwd=project)
    assert (project / ".flydsl-ls-cache" / ".gitignore").read_text().endswith("*\n")
    assert not (project / "user-cache").exists()
    tamper(project / ".flydsl-ls-cache")
    (project / "pyproject.toml").write_text('[tool.flydsl-ls]\nignore = ["FLY101"]\n')
    second = run(".", cwd=project)
    assert cached_files(second) == set()
    assert "FLY104" not in first.stdout and "FLY104" in second.stdout


def test_cache_dir_setting_and_flag(project, tmp_path):
    (project / "pyproject.toml").write_text('[tool.flydsl-ls]\ncache-dir = "build-cache"\n')
    run(".", cwd=project)
    assert entries_file(project / "build-cache")
    elsewhere = tmp_path / "flag-cache"
    run("--cache-dir", str(elsewhere), ".", cwd=project)
    assert entries_file(elsewhere)


def test_a_caller_edit_in_another_file_invalidates_the_callee(project):
    before = run(".", cwd=project)
    assert "FLY301" in "\n".join(lines_of(before, "helpers.py"))
    tamper(project / "user-cache")
    (project / "kern.py").write_text(KERNEL.replace("reduce(fx, a, b)", "max(a, b)"))
    after = run(".", cwd=project)
    assert "helpers.py" not in cached_files(after)
    assert "legacy.py" in cached_files(after)  # reads no other file
    assert lines_of(after, "helpers.py") != lines_of(before, "helpers.py")
    assert after.stdout.replace("CACHED ", "") == run("--no-cache", ".", cwd=project).stdout


def test_workspace_facts_invalidate(project):
    run(".", cwd=project)
    tamper(project / "user-cache")
    # FLY402: the constant's only reader stops reading it.
    (project / "reader.py").write_text("print(0)\n")
    # FLY702: a tensor_shim.py defining _run_compiled becomes the one to import from.
    (project / "tensor_shim.py").write_text(RUN_COMPILED)
    after = run(".", cwd=project)
    assert any("FLY402" in line for line in lines_of(after, "shim.py"))
    assert "shim.py" not in cached_files(after)
    assert all("tensor_shim" in line for line in lines_of(after, "runner_a.py"))
    assert after.stdout.replace("CACHED ", "") == run("--no-cache", ".", cwd=project).stdout


def test_an_edit_of_a_sibling_module_invalidates_its_importer(tmp_path):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "requirements.txt").write_text("flydsl==0.5.0\n")
    (root / "use.py").write_text("from utils import _raw\n\nv = _raw(x)\n")
    (root / "utils.py").write_text("from flydsl.expr.arith import _to_raw as _raw\n")
    # Checked alone: utils.py is read from disk, not a file of the run.
    first = run("use.py", cwd=root)
    assert "FLY102" in first.stdout
    tamper(root / "user-cache")
    (root / "utils.py").write_text("def _raw(v):\n    return v\n")
    second = run("use.py", cwd=root)
    assert "CACHED" not in second.stdout
    assert second.stdout == run("--no-cache", "use.py", cwd=root).stdout


def test_no_cache_neither_reads_nor_writes(project):
    assert run("--no-cache", ".", cwd=project).returncode == 1
    assert not (project / "user-cache").exists()
    run(".", cwd=project)
    tamper(project / "user-cache")
    written = entries_file(project / "user-cache").read_bytes()
    assert "CACHED" not in run("--no-cache", ".", cwd=project).stdout
    assert entries_file(project / "user-cache").read_bytes() == written


def test_an_edit_of_flydsl_ls_invalidates(project, tmp_path):
    """A development install is keyed by its sources: editing a rule re-checks every file."""
    copy = tmp_path / "install"
    shutil.copytree(ROOT / "flydsl_ls", copy / "flydsl_ls", ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": str(copy)}
    run(".", cwd=project, env=env)
    tamper(project / "user-cache")
    assert "CACHED" in run(".", cwd=project, env=env).stdout
    rule = next((copy / "flydsl_ls" / "analysis" / "rules").glob("fly104_*.py"))
    rule.write_text(rule.read_text() + "\n# edited\n")
    assert "CACHED" not in run(".", cwd=project, env=env).stdout


def test_needles_are_words(tmp_path):
    """A file's findings that depended on the callers of `act` do not depend on a file that
    only has `activation` (the project index looks callers up by word)."""
    from flydsl_ls.cache import Snapshot

    (tmp_path / "a.py").write_text("def act(m):\n    return m\n")
    (tmp_path / "b.py").write_text("activation = 1\n")
    (tmp_path / "c.py").write_text("from a import act\nact(fx)\n")
    files = sorted(tmp_path.glob("*.py"))
    before = Snapshot(files)
    (tmp_path / "b.py").write_text("activation = 2  # edited\n")
    after = Snapshot(files)
    assert before.project != after.project
    assert before.needle("act") == after.needle("act")
    assert before.needle("def act") == after.needle("def act")
    (tmp_path / "c.py").write_text("from a import act\nact(None)\n")
    assert Snapshot(files).needle("act") != before.needle("act")
    assert Snapshot(files).needle("def act") == before.needle("def act")  # c.py has no `def act`

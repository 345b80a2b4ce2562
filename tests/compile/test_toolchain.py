"""ld.lld from ROCm or from ziglang behind a wrapper; missing pieces named with their pip command,
also in an environment where numpy (which flydsl imports) is really not installed."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from flydsl_ls.compile import CompileService, Status, toolchain
from flydsl_ls.compile.toolchain import REQUIRED, find_toolchain, install_everything, private_rocm
from tests.compile.conftest import ROOT, VECTOR_ADD
from tests.compiler import needs_compiler, python_without


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("FLYDSL_LS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ROCM_PATH", raising=False)


@pytest.mark.skipif(importlib.util.find_spec("ziglang") is None, reason="needs ziglang: pip install ziglang")
def test_private_rocm_wrapper_runs_ziglang_lld(tmp_path):
    root = private_rocm(sys.executable)
    lld = root / "llvm" / "bin" / "ld.lld"
    assert root == tmp_path / "cache" / "rocm"
    assert lld.read_text().splitlines() == ["#!/bin/sh", f'exec {sys.executable} -m ziglang ld.lld "$@"']
    out = subprocess.run([str(lld), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "LLD" in out.stdout


def test_existing_rocm_is_used(monkeypatch, tmp_path):
    lld = tmp_path / "rocm" / "llvm" / "bin" / "ld.lld"
    lld.parent.mkdir(parents=True)
    lld.write_text("#!/bin/sh\n")
    lld.chmod(0o755)
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    monkeypatch.setattr(toolchain, "_absent", lambda names, python: [])
    found = find_toolchain()
    assert (found.lld_source, found.rocm_path, found.ok) == ("ROCm", tmp_path / "rocm", True)
    assert found.worker_env() == {"ROCM_PATH": str(tmp_path / "rocm")}


def test_missing_pieces_name_their_install_command(monkeypatch):
    monkeypatch.setattr(toolchain, "_rocm_lld", lambda: None)
    monkeypatch.setattr(toolchain, "_absent", lambda names, python: [n for n in names if n != "flydsl"])
    found = find_toolchain()
    assert not found.ok
    assert set(found.missing) == {"torch", "numpy", "typing_extensions", "ld.lld"}
    problem = found.problem()
    assert "pip install torch==2.13.0" in problem
    assert "pip install numpy" in problem
    assert "pip install ziglang" in problem
    # no flydsl-ls package is published: the extra of this checkout, by its path
    assert install_everything() == f"pip install torch==2.13.0 -e '{ROOT}[compile]'"
    assert f"or everything at once: {install_everything()}" in problem


def test_this_interpreter():
    found = find_toolchain()
    for name in REQUIRED:
        assert (name in found.missing) == (importlib.util.find_spec(name) is None)


def test_another_interpreter_is_probed_in_a_subprocess(tmp_path):
    python = python_without(("numpy", "flydsl"), tmp_path / "venv")
    found = find_toolchain(python, create=False)
    assert found.python == python
    assert {"numpy", "flydsl"} <= set(found.missing)
    assert "torch" not in found.missing or importlib.util.find_spec("torch") is None


# --- numpy really not installed (a venv with everything else this interpreter has) -----------
@pytest.fixture(scope="module")
def no_numpy(tmp_path_factory) -> str:
    return python_without(("numpy",), tmp_path_factory.mktemp("no-numpy") / "venv")


@needs_compiler
def test_cli_without_numpy_names_the_install_command(no_numpy, tmp_path):
    proc = subprocess.run(
        [no_numpy, "-m", "flydsl_ls", "compile", str(VECTOR_ADD)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "FLYDSL_LS_CACHE": str(tmp_path)},
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"error: compiling FlyDSL kernels with {no_numpy} needs numpy\ninstall with:\n" in proc.stderr
    assert "  pip install numpy" in proc.stderr
    assert f"or everything at once: {install_everything()}" in proc.stderr


@needs_compiler
def test_a_module_flydsl_cannot_import_names_its_install_command(no_numpy, monkeypatch, tmp_path):
    """As if flydsl grew a dependency the toolchain check does not know: the check passes,
    the worker really starts and really fails to import flydsl; its ModuleNotFoundError
    becomes the install command."""
    monkeypatch.setattr(toolchain, "REQUIRED", tuple(m for m in REQUIRED if m != "numpy"))
    with CompileService(python=no_numpy, cache=tmp_path, startup_timeout=240) as service:
        assert service.toolchain().ok
        result = service.compile(VECTOR_ADD, None, "gfx942")
    assert result.status is Status.UNAVAILABLE, result.error
    message = result.error.message
    assert "the compiler worker cannot import torch/flydsl: ModuleNotFoundError: No module named 'numpy'" in message
    assert "needs numpy\ninstall with:\n  pip install numpy" in message
    assert message.endswith(f"or everything at once: {install_everything()}")
    assert "/flydsl/" in result.error.detail  # the traceback: the import flydsl itself made


def test_an_interpreter_path_with_shell_metacharacters_is_taken_literally(tmp_path):
    """The ld.lld wrapper is the one place a path meets a shell: quoted, `$(...)`, `;` and
    spaces stay part of the name, nothing else runs."""
    folder = tmp_path / "a b;touch pwned$(touch pwned2)"
    folder.mkdir()
    fake = folder / "python"
    seen = tmp_path / "seen"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{seen}'\n")
    fake.chmod(0o755)
    root = private_rocm(str(fake), tmp_path / "rocm")
    done = subprocess.run([str(root / "llvm" / "bin" / "ld.lld"), "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert seen.read_text().split() == ["-m", "ziglang", "ld.lld", "--version"]
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()

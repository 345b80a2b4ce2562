"""ld.lld from ROCm or from ziglang behind a wrapper; missing pieces named with their pip command."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from flydsl_ls.compile import toolchain
from flydsl_ls.compile.toolchain import find_toolchain, private_rocm


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
    monkeypatch.setattr(toolchain, "_importable", lambda name, python: True)
    found = find_toolchain()
    assert (found.lld_source, found.rocm_path, found.ok) == ("ROCm", tmp_path / "rocm", True)
    assert found.worker_env() == {"ROCM_PATH": str(tmp_path / "rocm")}


def test_missing_pieces_name_their_install_command(monkeypatch):
    monkeypatch.setattr(toolchain, "_rocm_lld", lambda: None)
    monkeypatch.setattr(toolchain, "_importable", lambda name, python: name == "flydsl")
    found = find_toolchain()
    assert not found.ok
    assert set(found.missing) == {"torch", "ld.lld"}
    problem = found.problem()
    assert "pip install torch==2.13.0" in problem
    assert "pip install ziglang" in problem
    assert 'pip install "flydsl-ls[compile]"' in problem


def test_this_interpreter():
    found = find_toolchain()
    for name in ("torch", "flydsl"):
        assert (name in found.missing) == (importlib.util.find_spec(name) is None)

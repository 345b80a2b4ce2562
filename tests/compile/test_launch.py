"""GPU detection, tested on what this machine really has (no fake GPU that pretends to run)."""

from __future__ import annotations

import ctypes
import os
import shutil

import pytest

from flydsl_ls.compile import Status
from flydsl_ls.compile.launch import HIP_LIBRARY, check_agents, check_hip, describe, detect_gpu
from tests.compile.conftest import VECTOR_ADD
from tests.compiler import needs_compiler


def _hip_loads() -> bool:
    try:
        ctypes.CDLL(HIP_LIBRARY)
        return True
    except OSError:
        return False


HAS_GPU = all(c.ok for c in detect_gpu(include_flydsl=False)) and _hip_loads()


def _fake_enumerator(tmp_path, monkeypatch, agents: str):
    """A stand-in for ROCm's enumerator: tests only how its output is read."""
    tool = tmp_path / "rocm_agent_enumerator"
    tool.write_text(f"#!/bin/sh\nprintf '{agents}'\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")


def test_enumerator_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder
    check = check_agents()
    assert not check.ok and "not on PATH" in check.detail


def test_enumerator_lists_only_the_cpu(monkeypatch, tmp_path):
    _fake_enumerator(tmp_path, monkeypatch, "gfx000\\n")
    check = check_agents()
    assert not check.ok and "lists no GPU agent" in check.detail


def test_enumerator_lists_a_gpu(monkeypatch, tmp_path):
    _fake_enumerator(tmp_path, monkeypatch, "gfx000\\ngfx942\\n")
    check = check_agents()
    assert check.ok and check.detail == "GPU agents: gfx942"


def test_this_machine_is_reported_as_it_is():
    checks = detect_gpu(include_flydsl=False)
    agents, hip = checks
    if shutil.which("rocm_agent_enumerator") is None:
        assert not agents.ok and "not on PATH" in agents.detail
    assert hip.ok == _hip_loads()
    if not hip.ok:
        assert f"{HIP_LIBRARY} cannot be loaded" in hip.detail
    if not HAS_GPU:
        message = describe(checks)
        assert message.startswith("no launch: ") and message.endswith("Compile-only ran.")
        for failed in (c for c in checks if not c.ok):
            assert failed.detail in message


def test_check_hip_reports_the_loader_error():
    check = check_hip()
    assert check.name == HIP_LIBRARY
    assert check.ok == _hip_loads()


@needs_compiler
@pytest.mark.skipif(HAS_GPU, reason="this machine has a ROCm GPU; see test_launch_runs_on_gpu")
def test_launch_without_gpu_compiles_only(service):
    result = service.compile(VECTOR_ADD, None, "gfx942", launch=True)
    assert result.status is Status.OK, result.error
    assert result.kernels and result.kernels[0].resources.vgprs > 0  # compile-only did run
    launch = result.launch
    assert launch is not None and not launch.ran and launch.seconds is None
    assert [c.name for c in launch.checks] == ["rocm_agent_enumerator", HIP_LIBRARY, "flydsl device count"]
    assert any(not c.ok for c in launch.checks)
    assert launch.message.endswith("Compile-only ran.")
    for failed in (c for c in launch.checks if not c.ok):
        assert failed.detail in launch.message


@needs_compiler
@pytest.mark.skipif(not HAS_GPU, reason="needs a ROCm GPU (rocm_agent_enumerator and libamdhip64.so.7)")
def test_launch_runs_on_gpu(service):
    result = service.compile(VECTOR_ADD, None, None, launch=True)
    assert result.status is Status.OK, result.error
    assert result.launch.ran and result.launch.seconds > 0

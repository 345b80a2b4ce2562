"""Is there a ROCm GPU to launch on? Three checks, each reported by name.

1. ``rocm_agent_enumerator`` is on PATH and lists a gfx agent other than ``gfx000`` (the CPU);
2. the HIP runtime ``libamdhip64.so.7`` (ROCm 7) loads;
3. FlyDSL sees a device: ``flydsl.runtime.device.get_rocm_device_count() > 0`` (run in the
   worker, where flydsl is imported).

Launching without all three would abort the process, so the worker launches only when all
pass; otherwise the request is compile-only and the report says which check failed.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

from flydsl_ls.compile.result import GpuCheck

HIP_LIBRARY = "libamdhip64.so.7"


def check_agents() -> GpuCheck:
    tool = shutil.which("rocm_agent_enumerator")
    if tool is None:
        return GpuCheck("rocm_agent_enumerator", False, "rocm_agent_enumerator is not on PATH (ROCm not installed)")
    try:
        out = subprocess.run([tool, "-name"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError) as error:
        return GpuCheck("rocm_agent_enumerator", False, f"{tool} failed: {error}")
    agents = [a.strip() for a in out.splitlines() if a.strip().startswith("gfx") and a.strip() != "gfx000"]
    if not agents:
        return GpuCheck("rocm_agent_enumerator", False, f"{tool} lists no GPU agent (only gfx000 or nothing)")
    return GpuCheck("rocm_agent_enumerator", True, "GPU agents: " + ", ".join(agents))


def check_hip() -> GpuCheck:
    try:
        ctypes.CDLL(HIP_LIBRARY)
    except OSError as error:
        return GpuCheck(HIP_LIBRARY, False, f"{HIP_LIBRARY} cannot be loaded (ROCm 7 HIP runtime missing): {error}")
    return GpuCheck(HIP_LIBRARY, True, f"{HIP_LIBRARY} loads")


def check_flydsl_devices() -> GpuCheck:
    name = "flydsl device count"
    try:
        from flydsl.runtime.device import get_rocm_device_count
    except Exception as error:  # noqa: BLE001 - any import failure means "cannot tell"
        return GpuCheck(name, False, f"flydsl.runtime.device unavailable: {error}")
    count = get_rocm_device_count()
    if count <= 0:
        return GpuCheck(name, False, "flydsl.runtime.device.get_rocm_device_count() is 0")
    return GpuCheck(name, True, f"get_rocm_device_count() = {count}")


def detect_gpu(*, include_flydsl: bool = True) -> list[GpuCheck]:
    checks = [check_agents(), check_hip()]
    if include_flydsl:
        checks.append(check_flydsl_devices())
    return checks


def describe(checks: list[GpuCheck]) -> str:
    """A plain sentence: what is missing, and that only compile-only ran."""
    failed = [c for c in checks if not c.ok]
    if not failed:
        return "ROCm GPU found: " + "; ".join(c.detail for c in checks)
    return "no launch: " + "; ".join(c.detail for c in failed) + ". Compile-only ran."

"""What compiling needs besides flydsl-ls: torch, flydsl and an ``ld.lld``.

FlyDSL's final link runs ``$ROCM_PATH/llvm/bin/ld.lld`` (default ``/opt/rocm``); the flydsl
wheel does not ship one. Without ROCm, the PyPI ``ziglang`` wheel's LLD serves: a private
ROCm-shaped folder under the cache holds ``llvm/bin/ld.lld``, a two-line script that runs
``python -m ziglang ld.lld "$@"``. Nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

INSTALL_EXTRA = 'pip install "flydsl-ls[compile]"'
INSTALL = {
    "flydsl": "pip install flydsl",
    "torch": "pip install torch==2.13.0  # the CPU build is enough for compile-only",
    "ziglang": "pip install ziglang  # provides ld.lld when ROCm is not installed",
}


def cache_dir() -> Path:
    """``$FLYDSL_LS_CACHE`` or ``$XDG_CACHE_HOME/flydsl-ls`` (``~/.cache/flydsl-ls``)."""
    explicit = os.environ.get("FLYDSL_LS_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flydsl-ls"


@dataclass
class Toolchain:
    python: str
    rocm_path: Path | None  # the ROCM_PATH the worker gets (real or private)
    lld: Path | None
    lld_source: str  # "ROCm", "ziglang wrapper" or "missing"
    missing: dict[str, str] = field(default_factory=dict)  # piece -> exact install command

    @property
    def ok(self) -> bool:
        return not self.missing

    def problem(self) -> str:
        """One message naming every missing piece with its install command."""
        if not self.missing:
            return ""
        lines = [f"compiling FlyDSL kernels needs {', '.join(self.missing)}; install with:"]
        lines += [f"  {cmd}" for cmd in dict.fromkeys(self.missing.values())]
        lines.append(f"or everything at once: {INSTALL_EXTRA}")
        return "\n".join(lines)

    def worker_env(self) -> dict[str, str]:
        env = {}
        if self.rocm_path is not None:
            env["ROCM_PATH"] = str(self.rocm_path)
        return env


def _importable(name: str, python: str) -> bool:
    if python == sys.executable:
        return importlib.util.find_spec(name) is not None
    import subprocess

    probe = f"import importlib.util,sys; sys.exit(importlib.util.find_spec({name!r}) is None)"
    return subprocess.run([python, "-c", probe], capture_output=True, timeout=30).returncode == 0


def _rocm_lld() -> Path | None:
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if root:
            lld = Path(root) / "llvm" / "bin" / "ld.lld"
            if os.access(lld, os.X_OK):
                return lld
    return None


def wrapper_text(python: str) -> str:
    return f'#!/bin/sh\nexec {shlex.quote(python)} -m ziglang ld.lld "$@"\n'


def private_rocm(python: str, root: Path | None = None) -> Path:
    """Create (or refresh) ``<cache>/rocm/llvm/bin/ld.lld`` wrapping ziglang's LLD."""
    root = root or cache_dir() / "rocm"
    lld = root / "llvm" / "bin" / "ld.lld"
    text = wrapper_text(python)
    if not lld.is_file() or lld.read_text() != text:
        lld.parent.mkdir(parents=True, exist_ok=True)
        tmp = lld.with_name(f".ld.lld.{os.getpid()}")
        tmp.write_text(text)
        tmp.chmod(0o755)
        tmp.replace(lld)
    return root


def find_toolchain(python: str | None = None, *, create: bool = True) -> Toolchain:
    """Inspect (and, with ``create``, complete) the compile toolchain for ``python``."""
    python = python or sys.executable
    missing: dict[str, str] = {}
    for name in ("torch", "flydsl"):
        if not _importable(name, python):
            missing[name] = INSTALL[name]
    lld = _rocm_lld()
    if lld is not None:
        return Toolchain(python, lld.parent.parent.parent, lld, "ROCm", missing)
    if not _importable("ziglang", python):
        missing["ld.lld"] = INSTALL["ziglang"]
        return Toolchain(python, None, None, "missing", missing)
    root = private_rocm(python) if create else cache_dir() / "rocm"
    return Toolchain(python, root, root / "llvm" / "bin" / "ld.lld", "ziglang wrapper", missing)

"""What compiling needs besides flydsl-ls: torch, numpy, flydsl and an ``ld.lld``.

The flydsl wheel declares no dependencies, yet ``import flydsl.compiler`` imports torch, numpy
(``flydsl.expr.numeric``) and typing_extensions (``ml_dtypes`` and ``rocm_sdk`` only inside a
``try``); :data:`REQUIRED` lists them and :func:`find_toolchain` checks each one (a spec lookup,
nothing imported). A module flydsl needs that is not in that list is caught when the worker
imports flydsl, and reported the same way (:func:`install_command`).

FlyDSL's final link runs ``$ROCM_PATH/llvm/bin/ld.lld`` (default ``/opt/rocm``); the flydsl
wheel does not ship one. Without ROCm, the PyPI ``ziglang`` wheel's LLD serves: a private
ROCm-shaped folder under the cache holds ``llvm/bin/ld.lld``, a two-line script that runs
``python -m ziglang ld.lld "$@"``. Nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# The modules ``import flydsl.compiler`` needs, in the order they are checked.
REQUIRED = ("torch", "numpy", "typing_extensions", "flydsl")
INSTALL = {
    "flydsl": "pip install flydsl",
    "numpy": "pip install numpy  # flydsl imports it; its wheel does not declare it",
    "torch": "pip install torch==2.13.0  # the CPU build is enough for compile-only",
    "typing_extensions": "pip install typing_extensions",
    "ziglang": "pip install ziglang  # provides ld.lld when ROCm is not installed",
}
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def install_command(module: str) -> str:
    """The ``pip install`` command for a missing top-level module (``numpy.core`` -> numpy)."""
    top = module.split(".")[0]
    return INSTALL.get(top, f"pip install {top}")


def install_everything() -> str:
    """One command installing the whole ``compile`` extra. No flydsl-ls package is published:
    from a checkout (an editable install) it is that checkout's extra, else the pieces."""
    pyproject = _PACKAGE_ROOT / "pyproject.toml"
    try:
        ours = 'name = "flydsl-ls"' in pyproject.read_text(encoding="utf-8")
    except OSError:
        ours = False
    if ours:
        return f"pip install torch==2.13.0 -e {shlex.quote(f'{_PACKAGE_ROOT}[compile]')}"
    return "pip install torch==2.13.0 numpy flydsl ziglang"


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
        """One message naming every missing piece with its install command. The first line
        says what is missing and stands alone (an editor's notification shows it, the rest
        is in the log), each command is a line of its own."""
        if not self.missing:
            return ""
        lines = [f"compiling FlyDSL kernels with {self.python} needs {', '.join(self.missing)}", "install with:"]
        lines += [f"  {cmd}" for cmd in dict.fromkeys(self.missing.values())]
        lines.append(f"or everything at once: {install_everything()}")
        return "\n".join(lines)

    def worker_env(self) -> dict[str, str]:
        env = {}
        if self.rocm_path is not None:
            env["ROCM_PATH"] = str(self.rocm_path)
        return env


def _absent(names: tuple[str, ...], python: str) -> list[str]:
    """Those of ``names`` that ``python`` cannot find (a spec lookup: nothing is imported)."""
    if python == sys.executable:
        return [name for name in names if importlib.util.find_spec(name) is None]
    probe = (
        "import importlib.util, json, sys\n"
        "print(json.dumps([n for n in sys.argv[1:] if importlib.util.find_spec(n) is None]))"
    )
    try:
        out = subprocess.run([python, "-c", probe, *names], capture_output=True, text=True, timeout=30)
        return list(json.loads(out.stdout))
    except (OSError, subprocess.SubprocessError, ValueError):
        return list(names)


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
    lld = _rocm_lld()
    absent = _absent(REQUIRED + (() if lld is not None else ("ziglang",)), python)
    missing = {name: INSTALL[name] for name in REQUIRED if name in absent}
    if lld is not None:
        return Toolchain(python, lld.parent.parent.parent, lld, "ROCm", missing)
    if "ziglang" in absent:
        missing["ld.lld"] = INSTALL["ziglang"]
        return Toolchain(python, None, None, "missing", missing)
    root = private_rocm(python) if create else cache_dir() / "rocm"
    return Toolchain(python, root, root / "llvm" / "bin" / "ld.lld", "ziglang wrapper", missing)

"""Turn what went wrong in the worker into a :class:`CompileError` at the user's source line.

Three sources of a line, best first:
- an MLIR diagnostic naming a location in the user's file, ``loc("/x/k.py":23:4)`` or
  ``/x/k.py:23:4``: FlyDSL records the Python call site of every op it emits;
- the innermost traceback frame in the user's file (a Python error while tracing the kernel);
- nothing: the error is reported without a line.
A crash (the worker died) gets its reason from the request's log: ``LLVM ERROR: ...``.
"""

from __future__ import annotations

import re
import signal

from flydsl_ls.compile.result import CompileError
from flydsl_ls.compile.toolchain import Toolchain, install_command
from flydsl_ls.compile.worker import FIRST_CHAIN

_LOC = re.compile(r'(?:loc\()?"?(?P<file>[^"\s():]+\.py)"?:(?P<line>\d+):(?P<col>\d+)')


def locate(error: dict, path: str, origin: str) -> tuple[int | None, int | None, str]:
    """(line, column, how) of ``error`` (a worker error dict) in ``path``."""
    text = error.get("message", "")
    for match in _LOC.finditer(text):
        if match.group("file") in (path, origin):
            column = int(match.group("col"))
            # a line-info compile numbers call chains as columns (worker._number_call_chains)
            return int(match.group("line")), max(column - 1, 0) if column < FIRST_CHAIN else None, "mlir"
    for frame in reversed(error.get("frames", [])):
        if frame["file"] in (path, origin):
            column = frame.get("column")
            return frame["line"], column, "python"
    return None, None, ""


def from_worker(error: dict, path: str, origin: str) -> CompileError:
    line, column, how = locate(error, path, origin)
    stage = error.get("stage", "")
    kind = "example" if stage in ("import", "example") and how != "mlir" else (how or "python")
    message = f"{error.get('type', 'Error')}: {error.get('message', '')}".strip()
    if "lld invocation failed" in message:
        message += " (the final link needs ld.lld: pip install ziglang, or set ROCM_PATH to a ROCm install)"
    detail = error.get("traceback", "").replace(path, origin) if path != origin else error.get("traceback", "")
    return CompileError(message, kind, origin if line else None, line, column, detail)


def from_startup(error: dict, toolchain: Toolchain) -> CompileError:
    """The worker could not import torch/flydsl: what failed, and the install commands.

    ``toolchain`` is a fresh check of the worker's interpreter. A module missing at import
    time (``ModuleNotFoundError``, e.g. a dependency flydsl imports that the check does not
    know of) is added to it, so it always comes with its ``pip install`` command.
    """
    module = error.get("module")
    if module and module.split(".")[0] not in toolchain.missing:
        toolchain.missing[module.split(".")[0]] = install_command(module)
    message = f"the compiler worker cannot import torch/flydsl: {error.get('type', 'Error')}: {error.get('message', '')}"
    problem = toolchain.problem()
    return CompileError(f"{message}\n{problem}" if problem else message, "setup", detail=error.get("traceback", ""))


def signal_name(returncode: int | None) -> str:
    if returncode is None:
        return "unknown exit"
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


def from_crash(returncode: int | None, log: str, arch: str) -> CompileError:
    """The worker died mid-request: say how, and why when the log tells."""
    reason = ""
    for line in log.splitlines():
        if "LLVM ERROR" in line or "error:" in line.lower() or "Assertion" in line:
            reason = line.strip()
            break
    how = signal_name(returncode)
    message = f"the compiler process crashed ({how})"
    if reason:
        message += f": {reason}"
    elif returncode is not None and returncode < 0 and -returncode == signal.SIGABRT:
        message += f"; LLVM aborted. Is `{arch}` a valid AMD GPU arch for this FlyDSL build?"
    elif returncode is not None and returncode < 0 and -returncode == signal.SIGKILL:
        message += "; killed from outside, often by the system when memory runs out (lower compileMemoryLimit)"
    tail = "\n".join(log.splitlines()[-40:])
    return CompileError(message + ". The worker was restarted.", "crash", detail=tail)

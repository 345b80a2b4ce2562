"""The warm compile worker: ``python -m flydsl_ls.compile.worker``.

Imports torch and flydsl once, then serves requests, one JSON object per line on stdin.
Replies and progress go, one JSON object per line, to the process's original stdout; the
worker points file descriptors 1 and 2 elsewhere (FlyDSL prints its dump progress and LLVM
writes its errors there), so nothing else can corrupt the protocol.

Request::

    {"id": 1, "op": "compile", "path": "/x/k.py", "origin": "/x/k.py", "example": "ex",
     "arch": "gfx942", "dump_dir": "/fresh/dir", "launch": false}

Replies: ``{"id": 1, "event": "progress", "message": "..."}`` any number of times, then
``{"id": 1, "event": "done", "ok": true, ...}``. At start-up: ``{"event": "ready", ...}``.
A crash (SIGABRT from LLVM, a bad arch) kills this process; the client notices and restarts it.
"""

from __future__ import annotations

import json
import linecache
import os
import re
import sys
import time
import traceback
from importlib import util as importlib_util
from pathlib import Path

_OUT = None  # the protocol stream (a dup of the original stdout)


def send(message: dict) -> None:
    _OUT.write(json.dumps(message) + "\n")
    _OUT.flush()


class _Redirect:
    """Point fds 1 and 2 (C and Python level) at a log file for one request."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = os.dup(1), os.dup(2)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0])
        os.close(self.saved[1])
        return False


def _frames(tb) -> list[dict]:
    return [
        {"file": f.filename, "line": f.lineno, "column": getattr(f, "colno", None), "function": f.name}
        for f in traceback.extract_tb(tb)
    ]


def _error(stage: str, error: BaseException) -> dict:
    message = str(error)
    if isinstance(error, MemoryError) and _MEMORY_LIMIT:
        message = (
            f"out of memory: the compile worker may use {_MEMORY_LIMIT / 2**30:.1f} GiB "
            "(setting compileMemoryLimit, or FLYDSL_LS_WORKER_MEMORY in bytes)"
            + (f"; {message}" if message else "")
        )
    return {
        "stage": stage,
        "type": type(error).__name__,
        "message": message,
        "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__)),
        "frames": _frames(error.__traceback__),
        # ModuleNotFoundError: the module that is not installed (at startup: one flydsl imports)
        "module": getattr(error, "name", None) if isinstance(error, ModuleNotFoundError) else None,
    }


def _kernels(ir_dir: Path) -> list[dict]:
    out = []
    if not ir_dir.is_dir():
        return out
    for kdir in sorted(p for p in ir_dir.iterdir() if p.is_dir()):
        out.append({"dir": str(kdir), "files": sorted(f.name for f in kdir.iterdir() if f.is_file())})
    return out


def _set_env(request: dict, ir_dir: Path) -> None:
    arch = request["arch"]
    os.environ.update(
        {
            "ARCH": arch,
            "FLYDSL_GPU_ARCH": arch,
            "FLYDSL_DUMP_IR": "1",
            "FLYDSL_DUMP_DIR": str(ir_dir),
            "FLYDSL_RUNTIME_ENABLE_CACHE": "0",  # always compile, so the dumps are written
            # Line tables down to the ISA's .loc (FlyDSL's own switch), or none, whatever the
            # environment says: the worker serves both kinds of request.
            "FLYDSL_DEBUG_ENABLE_DEBUG_INFO": "1" if request.get("line_info") else "0",
        }
    )
    # Every frame of a call chain, not FlyDSL's 5 (it drops the middle ones: the call lines).
    if request.get("line_info"):
        os.environ["FLYDSL_DEBUG_MAX_LOC_DEPTH"] = "64"
    else:
        os.environ.pop("FLYDSL_DEBUG_MAX_LOC_DEPTH", None)
    if request.get("launch"):
        os.environ.pop("COMPILE_ONLY", None)
    else:
        os.environ["COMPILE_ONLY"] = "1"


def _gpu_checks(reply: dict) -> bool:
    """Run the three GPU checks; record them; True when a launch can run."""
    from flydsl_ls.compile.launch import describe, detect_gpu

    checks = detect_gpu()
    reply["gpu_checks"] = [c.__dict__ for c in checks]
    reply["launch_message"] = describe(checks)
    return all(c.ok for c in checks)


def _launch(jit_fn, args, reply: dict) -> None:
    import torch

    jit_fn(*args)  # compiles (dumps) and runs once
    torch.cuda.synchronize()
    runs = 10
    start = time.perf_counter()
    for _ in range(runs):
        jit_fn(*args)
    torch.cuda.synchronize()
    reply["launch_seconds"] = (time.perf_counter() - start) / runs
    reply["launch_runs"] = runs
    reply["launch_message"] = f"launched {runs} times; " + reply["launch_message"]


def _locate_past_the_standard_library() -> None:
    """FlyDSL locates an op at the innermost frame outside its own package, and the standard
    library is outside it: every arithmetic operator (a ``functools.partialmethod``) was at
    ``functools.py:388`` instead of the kernel line that wrote it, in the MLIR and in the
    ISA's line tables. Its frames are skipped too. Only locations change (the instruction
    streams of the real kernels are identical: docs/compile.md); an older FlyDSL without
    this function is left as it is."""
    import sysconfig
    from functools import lru_cache

    try:
        from flydsl.expr import meta
    except ImportError:
        return
    framework = getattr(meta, "_is_framework_file", None)
    if framework is None:
        return
    paths = sysconfig.get_paths()
    stdlib = os.path.realpath(paths["stdlib"]) + os.sep
    installed = tuple({os.path.realpath(paths[key]) + os.sep for key in ("purelib", "platlib")})  # may be inside it
    here = os.path.realpath(__file__)

    @lru_cache(maxsize=4096)
    def outside_the_kernels(filename: str) -> bool:
        if framework(filename):
            return True
        real = os.path.realpath(filename)
        if real == here:  # _number_call_chains's wrapper, between FlyDSL and the kernel
            return True
        return real.startswith(stdlib) and not real.startswith(installed)

    meta._is_framework_file = outside_the_kernels


# --- call chains for the line tables -------------------------------------------------------
# LLVM's line tables keep an instruction's innermost line and its outermost inlined call only:
# a kernel line calling a helper that calls another lost every line between. While a
# line-info request traces, each call chain FlyDSL captures gets a number, written as the
# innermost frame's column (what ``.loc`` carries down to the ISA); the numbers are saved
# beside the dumps (CHAINS_FILE) and ``flydsl_ls.compile.lines`` reads them back. Columns
# are positions on a line only: the instructions do not change (docs/compile.md).
CHAINS_FILE = "line_chains.json"
FIRST_CHAIN = 1 << 14  # above any real column; LLVM keeps 16 bits of a column
_LAST_CHAIN = (1 << 16) - 1
_chains: dict[tuple, int] | None = None  # the request's chains, while a line-info request traces
_FRAME = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


def _number_call_chains() -> None:
    """Wrap FlyDSL's ``capture_user_location`` everywhere it was imported by name."""
    try:
        from flydsl.expr import meta
    except ImportError:
        return
    original = getattr(meta, "capture_user_location", None)
    if original is None:
        return

    def numbered():
        loc = original()
        if _chains is None:
            return loc
        frames = _FRAME.findall(str(loc))
        if len(frames) < 2:
            return loc  # one frame: its line is all there is to know
        chain = tuple((path, int(line)) for path, line, _ in frames)
        number = _chains.setdefault(chain, FIRST_CHAIN + len(_chains))
        if number > _LAST_CHAIN:
            return loc
        from flydsl._mlir import ir

        path, line, _ = frames[0]
        inner = ir.Location.file(path, int(line), number)
        return ir.Location.callsite(inner, [ir.Location.file(p, int(n), int(c)) for p, n, c in frames[1:]])

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("flydsl") and getattr(module, "capture_user_location", None) is original:
            module.capture_user_location = numbered


def _save_chains(dump_dir: Path) -> None:
    if _chains:
        table = {number: [list(frame) for frame in chain] for chain, number in _chains.items() if number <= _LAST_CHAIN}
        try:
            (dump_dir / CHAINS_FILE).write_text(json.dumps(table), encoding="utf-8")
        except OSError:
            pass  # the lines then name innermost lines and outermost calls only


_RELATIVE_IMPORT = re.compile(r"^\s*from\s+\.", re.M)


def _relative_imports(path: Path) -> bool:
    try:
        return bool(_RELATIVE_IMPORT.search(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def _package_of(origin: Path) -> tuple[str, str | None]:
    """(the folder above its top package, the dotted package) of a file inside packages
    (folders with ``__init__.py``: ``kernels/moe/gemm.py`` -> (the repository, "kernels.moe")),
    else (its folder, None). With that folder on ``sys.path`` the file's relative imports and
    its absolute imports of its own packages resolve, as when its repository is installed."""
    folder, parts = origin.parent, []
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    return str(folder), ".".join(parts) or None


def handle(request: dict, counter: int) -> dict:
    rid = request.get("id")
    if request.get("op") == "ping":
        return {"id": rid, "event": "done", "ok": True, "pid": os.getpid()}
    if request.get("op") == "sleep":  # for tests of the timeout path
        time.sleep(float(request.get("seconds", 1)))
        return {"id": rid, "event": "done", "ok": True}

    import flydsl.compiler as flyc

    dump_dir = Path(request["dump_dir"])
    ir_dir = dump_dir / "ir"
    ir_dir.mkdir(parents=True, exist_ok=True)
    reply: dict = {"id": rid, "event": "done", "ok": False, "log": str(dump_dir / "output.log")}
    path = Path(request["path"])
    origin_dir = str(Path(request.get("origin") or path).resolve().parent)
    package_root, package = _package_of(Path(request.get("origin") or path).resolve())
    module_name = f"_flydsl_ls_example_{os.getpid()}_{counter}"
    if package and _relative_imports(path):
        module_name = f"{package}.{module_name}"  # so that `from .utils import x` resolves
    launch = bool(request.get("launch")) and _gpu_checks(reply)
    device = "cuda" if launch else request.get("device", "cpu")  # torch's ROCm device is "cuda"

    def progress(message: str) -> None:
        send({"id": rid, "event": "progress", "message": message})

    global _chains
    _set_env(request, ir_dir)
    _chains = {} if request.get("line_info") else None
    linecache.clearcache()
    added = [p for p in dict.fromkeys((origin_dir, package_root)) if p not in sys.path]
    sys.path[:0] = added
    stage = "import"
    try:
        with _Redirect(dump_dir / "output.log"):
            progress(f"importing {path.name}")
            spec = importlib_util.spec_from_file_location(module_name, path)
            module = importlib_util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
            stage = "example"
            fn = getattr(module, request["example"], None)
            if fn is None:
                raise LookupError(f"{path.name} has no function `{request['example']}`")
            progress(f"calling {request['example']}({device!r})")
            made = fn(device)
            if not (isinstance(made, tuple) and len(made) == 2):
                raise TypeError(f"{request['example']}() must return (jit_fn, args), got {type(made).__name__}")
            jit_fn, args = made
            args = tuple(args)
            if launch:
                stage = "launch"
                progress("launching on the GPU")
                _launch(jit_fn, args, reply)
            if "launch_seconds" not in reply:
                stage = "compile"
                os.environ["COMPILE_ONLY"] = "1"
                progress(f"compiling for {request['arch']}")
                start = time.perf_counter()
                flyc.compile(jit_fn, *args)
                reply["compile_seconds"] = time.perf_counter() - start
        reply["ok"] = True
    except (Exception, SystemExit) as error:  # noqa: BLE001 - everything goes to the client
        reply["error"] = _error(stage, error)
    finally:
        if _chains is not None:
            _save_chains(dump_dir)
            _chains = None
        sys.modules.pop(module_name, None)
        for folder in added:
            if folder in sys.path:
                sys.path.remove(folder)
    reply["kernels"] = _kernels(ir_dir)
    return reply


def limit_memory() -> int:
    """The memory limit the service asks for (bytes of data segment and anonymous memory,
    RLIMIT_DATA), set before anything is imported; 0 when none."""
    given = os.environ.get("FLYDSL_LS_WORKER_MEMORY", "")
    limit = int(given) if given.isdigit() else 0
    if limit > 0:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        limit = min(limit, hard) if hard != resource.RLIM_INFINITY else limit
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    return limit


_MEMORY_LIMIT = 0


def main() -> int:
    global _OUT, _MEMORY_LIMIT
    _MEMORY_LIMIT = limit_memory()
    _OUT = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # stray prints go to stderr, never into the protocol
    sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", closefd=False)
    start = time.perf_counter()
    ready: dict = {"event": "ready", "pid": os.getpid(), "python": sys.executable}
    try:
        import torch

        import flydsl
        import flydsl.compiler  # noqa: F401 - the expensive import, done once

        _locate_past_the_standard_library()
        _number_call_chains()

        ready["versions"] = {"torch": torch.__version__, "flydsl": getattr(flydsl, "__version__", "?")}
    except Exception as error:  # noqa: BLE001
        ready["error"] = _error("startup", error)
    ready["import_seconds"] = time.perf_counter() - start
    send(ready)
    if "error" in ready:
        return 1
    counter = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        counter += 1
        try:
            request = json.loads(line)
        except json.JSONDecodeError as error:
            send({"event": "done", "ok": False, "error": _error("protocol", error)})
            continue
        send(handle(request, counter))
    return 0


if __name__ == "__main__":
    sys.exit(main())

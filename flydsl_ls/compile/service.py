"""The client side of the compile worker: start it, keep it warm, survive its deaths.

    service = CompileService()
    service.start()                      # optional: warm up (imports torch + flydsl) now
    result = service.compile("k.py", "small_example", "gfx942",
                             timeout=60, progress=print, cancel=event)
    await service.compile_async(...)     # the same, off the event loop

One request runs at a time (a lock serialises callers). Every request gets a fresh dump
folder under the cache. If the worker dies (LLVM aborts with SIGABRT on a bad arch or an
unsupported intrinsic), hangs past the timeout, or the request is cancelled, the worker is
killed and a new one started; the caller gets a :class:`CompileResult` saying so. No method
raises for a compile problem.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Union

from flydsl_ls.compile import errors
from flydsl_ls.compile.examples import choose_example, find_examples
from flydsl_ls.compile.isa import parse_isa
from flydsl_ls.compile.lines import Located, located
from flydsl_ls.compile.result import (
    CompileError,
    CompileResult,
    GpuCheck,
    KernelOutput,
    LaunchReport,
    Status,
)
from flydsl_ls.compile.toolchain import Toolchain, cache_dir, find_toolchain
from flydsl_ls.compile.worker import CHAINS_FILE

DEFAULT_ARCH = "gfx942"
Progress = Callable[[str], None]
Cancel = Union[threading.Event, Callable[[], bool], None]
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def _cancelled(cancel: Cancel) -> bool:
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    return bool(cancel())


MEMORY_ENV = "FLYDSL_LS_WORKER_MEMORY"  # bytes; read by the worker at start (worker.py)


def default_memory_limit() -> int:
    """``$FLYDSL_LS_WORKER_MEMORY`` bytes if set, else half the machine's memory."""
    given = os.environ.get(MEMORY_ENV, "").strip()
    if given.isdigit():
        return int(given)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 0


class _Worker:
    """One worker process, its protocol reader and a tail of its stderr."""

    def __init__(self, python: str, env: dict[str, str]):
        self.proc = subprocess.Popen(
            [python, "-u", "-m", "flydsl_ls.compile.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            start_new_session=True,  # its own process group: a kill also ends ld.lld etc.
        )
        self.messages: queue.Queue = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=200)
        self.ready: dict | None = None
        threading.Thread(target=self._read, daemon=True, name="flydsl-worker-out").start()
        threading.Thread(target=self._drain, daemon=True, name="flydsl-worker-err").start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                self.messages.put(json.loads(line))
            except json.JSONDecodeError:
                self.stderr.append(line.rstrip())
        self.messages.put(None)  # end of stream: the worker exited

    def _drain(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip())

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict) -> bool:
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def returncode(self, wait: float = 5.0) -> int | None:
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


class CompileService:
    """Compile (and, with a GPU, launch) FlyDSL examples in a warm worker process."""

    def __init__(
        self,
        *,
        python: str | None = None,
        cache: str | Path | None = None,
        default_arch: str = DEFAULT_ARCH,
        default_timeout: float = 120.0,
        startup_timeout: float = 180.0,
        keep_runs: int = 30,
        memory_limit: int | None = None,
    ):
        self.python = python or sys.executable
        self.cache = Path(cache) if cache else cache_dir()
        self.default_arch = default_arch
        self.default_timeout = default_timeout
        self.startup_timeout = startup_timeout
        self.keep_runs = keep_runs
        # Bytes the worker may allocate (RLIMIT_DATA): an example allocating without bound
        # gets a MemoryError instead of taking the machine down. 0: no limit.
        self.memory_limit = default_memory_limit() if memory_limit is None else memory_limit
        self.restarts = 0  # how many times a worker was replaced (crash, timeout, cancel)
        self._worker: _Worker | None = None
        self._toolchain: Toolchain | None = None
        self._lock = threading.Lock()
        self._cancel_current = threading.Event()
        self._ids = 0

    # -- lifecycle ---------------------------------------------------------------------
    def toolchain(self) -> Toolchain:
        if self._toolchain is None or not self._toolchain.ok:
            self._toolchain = find_toolchain(self.python)
        return self._toolchain

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.toolchain().worker_env())
        env["PYTHONUNBUFFERED"] = "1"
        env[MEMORY_ENV] = str(self.memory_limit)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        return env

    def start(self) -> None:
        """Start the worker now (it imports torch and flydsl in the background)."""
        if self._worker is None or not self._worker.alive():
            if self._worker is not None:
                self._worker.kill()
            self._worker = _Worker(self.python, self._env())

    def _replace_worker(self) -> None:
        if self._worker is not None:
            self._worker.kill()
        self._worker = None
        self.restarts += 1
        self.start()

    @property
    def worker_pid(self) -> int | None:
        return self._worker.pid if self._worker and self._worker.alive() else None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None

    def __enter__(self) -> CompileService:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def cancel(self) -> None:
        """Cancel the request in progress, if any (its worker is killed and replaced)."""
        self._cancel_current.set()

    # -- requests ----------------------------------------------------------------------
    def compile(
        self,
        file: str | Path,
        example: str | None = None,
        arch: str | None = None,
        *,
        launch: bool = False,
        line_info: bool = False,
        source: str | None = None,
        timeout: float | None = None,
        progress: Progress | None = None,
        cancel: Cancel = None,
    ) -> CompileResult:
        """Compile ``example`` of ``file`` for ``arch`` (default: the example's, else gfx942).

        ``source``: compile this text instead of the file on disk (unsaved buffer, or the
        text after a fix); errors still point into ``file``. ``launch``: also run it when a
        ROCm GPU is present. ``line_info``: with FlyDSL's debug line tables, so that each
        kernel's ``lines`` say which source line each instruction came from (the instruction
        stream is the same: docs/compile.md). Never raises for compile problems; see
        ``CompileResult.status``.
        """
        started = time.perf_counter()
        origin = str(Path(file).resolve())
        report = progress or (lambda message: None)
        result = CompileResult(Status.UNAVAILABLE, origin, example, arch or self.default_arch)
        try:
            text = source if source is not None else Path(origin).read_text(encoding="utf-8")
        except OSError as error:
            result.error = CompileError(f"cannot read {origin}: {error}", "setup")
            return result
        try:
            chosen = choose_example(find_examples(text), example)
        except LookupError as error:
            result.error = CompileError(str(error), "example", origin if example is None else None)
            return result
        result.example = chosen.name
        result.arch = arch or chosen.arch or self.default_arch
        toolchain = self.toolchain()
        if not toolchain.ok:
            result.error = CompileError(toolchain.problem(), "setup")
            return result
        if toolchain.lld_source != "ROCm":
            result.notes.append(f"ld.lld: {toolchain.lld} ({toolchain.lld_source})")

        with self._lock:
            self._cancel_current.clear()
            result.dump_dir = self._new_run_dir(chosen.name, result.arch)
            path = origin
            if source is not None:
                copy = result.dump_dir / "src" / Path(origin).name
                copy.parent.mkdir(parents=True)
                copy.write_text(source, encoding="utf-8")
                path = str(copy)
            self._ids += 1
            request = {
                "id": self._ids,
                "op": "compile",
                "path": path,
                "origin": origin,
                "example": chosen.name,
                "arch": result.arch,
                "dump_dir": str(result.dump_dir),
                "launch": launch,
                "line_info": line_info,
            }
            self._run(request, result, timeout, report, cancel)
        result.total_seconds = time.perf_counter() - started
        self._prune_runs()
        return result

    async def compile_async(self, *args, **kwargs) -> CompileResult:
        """:meth:`compile` in a thread, for asyncio servers (pygls)."""
        return await asyncio.to_thread(self.compile, *args, **kwargs)

    def ping(self, timeout: float | None = None) -> dict:
        """Round trip to the worker (starting it if needed). For health checks and tests."""
        return self.request({"op": "ping"}, timeout)

    def request(self, message: dict, timeout: float | None = None) -> dict:
        """Send a raw request; returns the reply, or ``{"ok": False, "status": ...}``."""
        result = CompileResult(Status.OK, "", None, self.default_arch)
        with self._lock:
            self._cancel_current.clear()
            self._ids += 1
            message = {**message, "id": self._ids}
            reply = self._run(message, result, timeout, lambda m: None, None)
        if reply is None:
            return {"ok": False, "status": result.status.value, "error": result.error}
        return reply

    # -- the exchange --------------------------------------------------------------------
    def _wait_ready(self, deadline: float, report: Progress, cancel: Cancel) -> str | None:
        """None when the worker is ready, else the Status value that ended the wait."""
        self.start()
        worker = self._worker
        if worker.ready is not None:
            return None
        report("starting the compiler worker (imports torch and flydsl)")
        while True:
            try:
                message = worker.messages.get(timeout=0.1)
            except queue.Empty:
                message = False
            if message is None:
                return "startup-crash"
            if message and message.get("event") == "ready":
                worker.ready = message
                return None
            if _cancelled(cancel) or self._cancel_current.is_set():
                return Status.CANCELLED.value
            if time.monotonic() > deadline:
                return Status.TIMEOUT.value

    def _run(self, request, result: CompileResult, timeout, report: Progress, cancel: Cancel) -> dict | None:
        startup_deadline = time.monotonic() + self.startup_timeout
        state = self._wait_ready(startup_deadline, report, cancel)
        worker = self._worker
        if state == "startup-crash":
            tail = "\n".join(worker.stderr)
            code = errors.signal_name(worker.returncode())
            result.status = Status.UNAVAILABLE
            result.error = CompileError(f"the compiler worker failed to start ({code})", "setup", detail=tail)
            self._worker = None
            return None
        if state is not None:
            return self._abort(result, Status(state), "while the worker was starting")
        if "error" in worker.ready:
            result.status = Status.UNAVAILABLE
            result.error = errors.from_startup(worker.ready["error"], find_toolchain(self.python, create=False))
            self._toolchain = None  # check again next time: the user may install what is missing
            self._worker.kill()
            self._worker = None
            return None

        if not worker.send(request):
            return self._crashed(result, request)
        limit = self.default_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            try:
                message = worker.messages.get(timeout=0.05)
            except queue.Empty:
                message = False
            if message is None:
                return self._crashed(result, request)
            if message and message.get("id") == request["id"]:
                if message.get("event") == "progress":
                    report(message.get("message", ""))
                elif message.get("event") == "done":
                    self._finish(result, request, message)
                    return message
            if _cancelled(cancel) or self._cancel_current.is_set():
                return self._abort(result, Status.CANCELLED, "")
            if time.monotonic() > deadline:
                return self._abort(result, Status.TIMEOUT, f"after {limit:g} s")

    def _abort(self, result: CompileResult, status: Status, when: str) -> None:
        self._replace_worker()
        result.status = status
        what = "timed out" if status is Status.TIMEOUT else "was cancelled"
        message = f"the compile {what}{' ' + when if when else ''}; the worker was restarted"
        result.error = CompileError(message, status.value)
        result.log = self._read_log(result)
        return None

    def _crashed(self, result: CompileResult, request: dict) -> None:
        worker = self._worker
        code = worker.returncode()
        log = self._read_log(result)
        stderr = "\n".join(worker.stderr)
        result.status = Status.CRASH
        result.error = errors.from_crash(code, log + "\n" + stderr, request.get("arch", "?"))
        result.log = log
        self._replace_worker()
        return None

    def _read_log(self, result: CompileResult) -> str:
        if result.dump_dir is None:
            return ""
        try:
            return (result.dump_dir / "output.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _finish(self, result: CompileResult, request: dict, reply: dict) -> None:
        result.log = self._read_log(result)
        result.seconds = reply.get("compile_seconds")
        # an unsaved text is compiled from a copy: its lines are the origin's
        renamed = {os.path.realpath(request["path"]): request["origin"]} if "path" in request else {}
        for entry in reply.get("kernels", []):
            result.kernels.append(_kernel_output(Path(entry["dir"]), entry["files"], renamed))
        if request.get("launch"):
            checks = [GpuCheck(**c) for c in reply.get("gpu_checks", [])]
            result.launch = LaunchReport(
                ran="launch_seconds" in reply,
                checks=checks,
                seconds=reply.get("launch_seconds"),
                runs=reply.get("launch_runs", 0),
                message=reply.get("launch_message", ""),
            )
        if reply.get("ok"):
            result.status = Status.OK
            result.error = None
        else:
            result.status = Status.ERROR
            result.error = errors.from_worker(reply["error"], request["path"], request["origin"])

    # -- run folders ---------------------------------------------------------------------
    def _new_run_dir(self, example: str, arch: str) -> Path:
        runs = self.cache / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return Path(tempfile.mkdtemp(prefix=f"{stamp}-{example}-{arch}-", dir=runs))

    def _prune_runs(self) -> None:
        runs = self.cache / "runs"
        try:
            entries = sorted((p for p in runs.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
        except OSError:
            return
        now = time.time()
        for old in entries[: max(len(entries) - self.keep_runs, 0)]:
            try:
                if now - old.stat().st_mtime > 600:
                    shutil.rmtree(old, ignore_errors=True)
            except OSError:
                pass


def _chains(dump_dir: Path) -> dict[int, list] | None:
    """The call chains the worker numbered for a line-info request (worker.CHAINS_FILE)."""
    try:
        table = json.loads((dump_dir / CHAINS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {int(number): frames for number, frames in table.items()}


def _kernel_output(kdir: Path, files: list[str], renamed: dict[str, str]) -> KernelOutput:
    name = kdir.name
    mlir = [f for f in files if f.endswith(".mlir")]
    before_binary = [f for f in mlir if "to_binary" not in f]
    out = KernelOutput(
        name=name,
        dump_dir=kdir,
        mlir_first=kdir / mlir[0] if mlir else None,
        mlir_final=kdir / before_binary[-1] if before_binary else None,
        llvm_ir=next((kdir / f for f in files if f.endswith(".ll")), None),
        isa=next((kdir / f for f in files if f.endswith(".s")), None),
    )
    if out.isa is not None:
        text = out.isa.read_text(encoding="utf-8", errors="replace")
        report = parse_isa(text)
        if report.kernels:
            out.resources = report.kernels[0]
            out.name = report.kernels[0].name
        out.instructions = report.instructions
        out.located = located(text, _chains(kdir.parent.parent))
        if renamed:
            out.located = [_renamed(item, renamed) for item in out.located]
    return out


_realpath = functools.lru_cache(maxsize=1024)(os.path.realpath)  # a few files, thousands of instructions


def _renamed(item: Located, renamed: dict[str, str]) -> Located:
    def name(path: str | None) -> str | None:
        return renamed.get(_realpath(path), path) if path is not None else path

    return Located(item.text, name(item.file), item.line, tuple((name(f), n) for f, n in item.calls), item.row)

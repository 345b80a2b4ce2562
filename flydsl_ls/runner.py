"""Checking (and fixing) the files of one ``check`` run, in worker processes (this process
is one of them).

Every worker reads the project (sibling modules, callers in other files, the files the
workspace-wide rules look through) from its own ``ProjectIndex`` over the same list of
files, and no file is written while workers run: fixed texts come back to the CLI, which
writes them once every file has been checked. So each file is checked against the project
as it was when the run started, whichever worker takes it and in whatever order, and a
run with one worker gives the same output as a run with many.

The workspace facts (every file's text and words: the filter of every caller, definer and
FLY702 question) are built once per run, in this process, before the workers start; they
inherit them. With several workers, each file's module calls and top-level functions are
then scanned once, by one worker, and every worker answers the callers and definers
questions from that scan instead of building the model of nearly every file. Files are
taken one at a time, the largest first, so that no worker is left with a large file while
the others are idle at the end; but a worker takes first a file it has parsed already
(``_Queue``). The cyclic garbage collector is off while files are
checked: the models a run keeps are long-lived, and each full collection walked all of
them (about 40% of a run's CPU time on the real corpus).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.project import (
    Consulted,
    IndexStats,
    ProjectIndex,
    Scanned,
    WorkspaceFacts,
    scan,
)
from flydsl_ls.analysis.model.sources import file_time_bound
from flydsl_ls.config import Settings
from flydsl_ls.pins import resolve_version


@dataclass(frozen=True)
class FileJob:
    path: Path
    settings: Settings
    fix: bool = False  # fix to a fixpoint and check what remains
    unsafe: bool = False
    diff: bool = False  # with fix: only the fixed text is wanted


@dataclass
class FileResult:
    error: str | None = None  # why the file was skipped
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    source: str | None = None  # with fix: the text as read
    fixed: str | None = None  # with fix: the text after the fixes (None: unchanged)
    applied: dict[str, int] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    # with fix: the other files the fixes edited, path -> (text as read, text after)
    others: dict[str, tuple[str, str]] = field(default_factory=dict)
    consulted: Consulted | None = None  # what the analysis read of the rest of the project
    timing: FileTiming | None = None  # where and when it was checked (for --timings)


@dataclass
class FileTiming:
    worker: int  # process id
    start: float  # time.time()
    end: float
    index: IndexStats  # the worker's index after this file (cumulative)


@dataclass
class RunTimings:
    """Where a run's time went: filled by ``run_jobs`` for ``check --timings``."""

    facts: WorkspaceFacts | None = None  # built once, here
    scans: int = 0  # files whose module calls the workers scanned before checking (once each)
    passing: int = 0  # of them, the files with a call passing a module
    scan_seconds: float = 0.0  # wall time of that first pass
    workers: int = 0
    start: float = 0.0  # time.time() when the checking started (after the facts)
    end: float = 0.0


def settings_key(path: Path, settings: Settings) -> tuple:
    """What in the settings decides a file's findings: its rules and analysis options
    (the FlyDSL release resolved as ``check_source`` resolves it)."""
    options = settings.options()
    if options.flydsl_version is None:
        resolved = resolve_version(None, path.parent)
        options.flydsl_version = resolved.version if resolved else None
    rules = tuple(rule.code for rule in settings.rules_for(path))
    # the file's own arch comes from its path (cached per path) and text (hashed) or this
    return (rules, options.target_arch, settings.arch_for(path), options.flydsl_version)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run_jobs(
    jobs: list[FileJob], files: list[Path], workers: int, timings: RunTimings | None = None
) -> list[FileResult]:
    """The results of ``jobs``, in their order; ``files`` are the run's (the project)."""
    if not jobs:
        return []
    import flydsl_ls.checker  # noqa: F401 - imported once, before the workers fork
    global _facts, _project
    timings = timings if timings is not None else RunTimings()
    workers = min(workers, len(jobs))
    # The collector is off for the whole run, here as in the workers: what the run builds
    # lives until it ends. Left on, this process spent half its time during a `-j2` run of the
    # corpus collecting while it read the workers' results (0.18 -> 0.09 s), time taken
    # from the workers' two cores.
    collecting = gc.isenabled()
    gc.disable()
    try:
        timings.facts = _facts = ProjectIndex(files=files).workspace_facts()
        timings.workers, timings.start = workers, time.time()
        if workers <= 1:
            _start(files, None)
            return [_run(job) for job in jobs]
        methods = multiprocessing.get_all_start_methods()
        method = "fork" if "fork" in methods else "spawn"
        context = multiprocessing.get_context(method)
        # Forked workers inherit the facts; spawned ones get a copy each.
        order = sorted(range(len(jobs)), key=lambda i: -_size(jobs[i].path))  # largest first
        queue = _Queue(jobs, order, context, _facts)
        shares = _ScanShares(_shares(files, workers * 4), context)
        initargs = (files, None if method == "fork" else _facts, queue, shares)
        results: list[FileResult | None] = [None] * len(jobs)
        # This process is one of the workers: one process fewer to start, and the results
        # of its files are not pickled and read back.
        with _stopped_on_interrupt(
            ProcessPoolExecutor(workers - 1, mp_context=context, initializer=_start_worker, initargs=initargs)
        ) as pool:
            # First the module calls of every file, once for the run: otherwise each worker
            # builds the model of nearly every file to learn who passes modules to whom.
            scan_start = time.time()
            scanning = [pool.submit(_scan_shares) for _ in range(workers - 1)]
            _start_worker(files, _facts, queue, shares, interruptible=True)
            scanned = _scan_shares()
            for future in scanning:
                scanned.update(future.result())
            timings.scans, timings.passing = len(scanned), sum(1 for s in scanned.values() if s.calls)
            timings.scan_seconds = time.time() - scan_start
            shared = _Shared(scanned)  # pickled into each task, read once per worker
            # Each worker picks the jobs it runs (``_Queue.take``), a few per task: a task's
            # round trip through this process cost each worker ~0.1 s over the corpus.
            tasks = -(-len(order) // _JOBS_PER_TASK)
            futures = [pool.submit(_run_next, shared, _JOBS_PER_TASK) for _ in range(tasks)]
            _project.adopt(scanned)
            # The pool's threads here hand the other workers their next tasks: waiting the
            # default 5 ms for this thread to let go of the interpreter left them idle
            # (0.09 s of a `-j2` run over the corpus; 0.04 s at 0.5 ms).
            switching = sys.getswitchinterval()
            sys.setswitchinterval(0.0005)
            try:
                while (index := queue.take(_project)) is not None:
                    results[index] = _run(jobs[index])
            finally:
                sys.setswitchinterval(switching)
            for future in futures:
                for i, result in future.result():
                    results[i] = result
        return results
    finally:
        timings.end = time.time()
        _facts = None
        if collecting:
            # The caller lives on (`--watch`, a test): this process's models go now, or the
            # freeze below would keep them, cycles and all, for the process's life.
            if _project is not None:
                _project.dispose()
                _project = None
                gc.collect()  # the index's own cycles: quick once the models are gone
            # Frozen first: the run's objects, all young while the collector was off, would
            # otherwise be traversed by its next collections (2.5 s over the 213 corpus files).
            gc.freeze()
            gc.enable()


class _stopped_on_interrupt:
    """The pool, shut down as usual, or at once on Ctrl-C: its workers terminated, not left
    to finish the queue (``ProcessPoolExecutor.__exit__`` would wait for every file)."""

    def __init__(self, pool: ProcessPoolExecutor):
        self.pool = pool

    def __enter__(self) -> ProcessPoolExecutor:
        return self.pool

    def __exit__(self, kind, error, trace) -> None:
        if kind is None or not issubclass(kind, KeyboardInterrupt):
            self.pool.shutdown(wait=True)
            return
        workers = list((self.pool._processes or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.join(5)
        # Now that its workers are gone, its manager thread ends at once: waiting for it
        # leaves nothing for the interpreter's exit to wake (an "Exception ignored" trace).
        self.pool.shutdown(wait=True)


def _shares(files: list[Path], count: int) -> list[list[Path]]:
    """``files`` in ``count`` shares of about equal bytes (largest first, each to the lightest)."""
    shares: list[list[Path]] = [[] for _ in range(min(count, len(files)))]
    weights = [0] * len(shares)
    for path in sorted(files, key=_size, reverse=True):
        lightest = weights.index(min(weights))
        shares[lightest].append(path)
        weights[lightest] += _size(path) + 1
    return shares


def _scan(paths: list[Path]) -> dict[Path, Scanned]:
    """What the project index asks of ``paths`` (by resolved path). The worker keeps the
    trees it parsed: if it checks one of these files, it does not parse it again."""
    found = {}
    for path in map(_project.resolved, paths):  # the facts' (resolved before the workers forked)
        try:
            with _bounded(file_time_bound()):
                found[path] = scan(path, _project.trees)
        except _TooSlow:  # its own check will say so
            found[path] = Scanned()
    return found


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


_GARBAGE_CHECK = 3_000_000
_JOBS_PER_TASK = 4
# A module this large is worth checking in the worker that parsed it for its importers.
_SHARED_MODULE_CHARACTERS = 16_000
# The worker's; this process's after a run that ends it (a one-shot check: freeing its
# models would cost the check's end what the run saved), disposed after any other.
_project: ProjectIndex | None = None
_queue: _Queue | None = None  # the worker's view of the run's jobs
_scan_work: _ScanShares | None = None  # the worker's view of the run's scan
_facts: WorkspaceFacts | None = None  # the run's, while it runs


def _start_worker(
    files: list[Path], facts: WorkspaceFacts | None, queue: _Queue, shares: _ScanShares, interruptible: bool = False
) -> None:
    """``interruptible``: this is the run's own process, which Ctrl-C stops."""
    global _queue, _scan_work
    if not interruptible:
        # Ctrl-C reaches the whole process group: the parent stops the run and its workers,
        # which would otherwise each print a KeyboardInterrupt traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _queue, _scan_work = queue, shares
    _start(files, facts)


class _ScanShares:
    """The run's files in shares of about equal bytes, handed out one at a time to the
    workers that scan them (``_scan_shares``)."""

    def __init__(self, shares: list[list[Path]], context):
        self.shares = shares
        self.next = context.RawValue("i", 0)
        self.lock = context.Lock()

    def take(self) -> list[Path] | None:
        with self.lock:
            at = self.next.value
            if at >= len(self.shares):
                return None
            self.next.value = at + 1
        return self.shares[at]


def _scan_shares() -> dict[Path, Scanned]:
    """``_scan`` of the shares this worker takes, until none is left."""
    assert _scan_work is not None
    found: dict[Path, Scanned] = {}
    while (share := _scan_work.take()) is not None:
        found.update(_scan(share))
    return found


class _Queue:
    """The run's jobs, shared by its workers: each takes, of the jobs no worker took yet,
    the largest whose file it has parsed already (a module its earlier files import, read
    for their resolution), else the largest that names a large module it has parsed (one
    it imports, most likely), else the largest. Handed out in a fixed order, a file a worker
    had parsed went to the other one in half the cases, which parsed it again: 74 of the
    corpus's files, 1.9 MB of source; with the first rule 50 files, 1.8 MB (the importers
    of a large module went to both workers); with the second, 34 files, 0.7 MB."""

    def __init__(self, jobs: list[FileJob], order: list[int], context, facts: WorkspaceFacts):
        self.jobs = jobs
        self.order = order
        # The facts' resolved paths (before the workers start, every millisecond here is
        # one the run waits for).
        self.paths = [facts.paths.get(jobs[i].path) or jobs[i].path.resolve() for i in order]
        self.names = _large_modules_named(self.paths, facts)
        self.taken = context.RawArray("b", len(order))  # shared memory: 1 once a worker took it
        self.lock = context.Lock()

    def take(self, project: ProjectIndex) -> int | None:
        """The index of the job this worker runs next (in ``jobs``); None: none is left."""
        with self.lock:
            taken = self.taken
            first = importer = None
            for at, path in enumerate(self.paths):
                if taken[at]:
                    continue
                if first is None:
                    first = at
                if project.holds(path):
                    break
                if importer is None and any(map(project.holds, self.names[at])):
                    importer = at
            else:
                at = importer if importer is not None else first
            if at is None:
                return None
            taken[at] = 1
        return self.order[at]


def _large_modules_named(paths: list[Path], facts: WorkspaceFacts) -> list[tuple[Path, ...]]:
    """For each of ``paths``, the other run files larger than ``_SHARED_MODULE_CHARACTERS``
    whose module name it has as a word."""
    large: dict[str, list[Path]] = {}
    for path in paths:
        if path.stem != "__init__" and len(facts.texts.get(path, "")) > _SHARED_MODULE_CHARACTERS:
            large.setdefault(path.stem, []).append(path)
    named = []
    for path in paths:
        words = facts.file_words.get(path, set())
        named.append(tuple(m for stem, modules in large.items() if stem in words for m in modules if m != path))
    return named


def _run_next(shared: _Shared, count: int) -> list[tuple[int, FileResult]]:
    """The next ``count`` jobs this worker takes (fewer when the run has no more), each
    taken as the one before ends."""
    assert _queue is not None and _project is not None
    done = []
    for _ in range(count):
        index = _queue.take(_project)
        if index is None:
            break
        done.append((index, _run(_queue.jobs[index], shared)))
    return done


def _start(files: list[Path], facts: WorkspaceFacts | None) -> None:
    global _project
    # Sibling modules and cross-file callers are read from the same run's files.
    _project = ProjectIndex.with_facts(files, facts if facts is not None else _facts)
    _project.keep_trees = True
    gc.disable()  # a worker's models live until it ends: nothing for the collector to gain


class _Shared:
    """The run's scan, pickled once: every job carries the bytes (copied, not pickled again)
    and a worker unpickles them for its first job only."""

    def __init__(self, scanned: dict[Path, Scanned]):
        self.data = pickle.dumps(scanned, protocol=pickle.HIGHEST_PROTOCOL)

    def load(self) -> dict[Path, Scanned]:
        return pickle.loads(self.data)


class _TooSlow(Exception):
    pass


@contextmanager
def _bounded(seconds: float):
    """Raise ``_TooSlow`` in the block past ``seconds``: where signals arrive (a worker
    process's or this process's main thread), between two bytecodes."""

    def too_slow(signum, frame):
        raise _TooSlow()

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _run(job: FileJob, shared: _Shared | None = None) -> FileResult:
    bound = file_time_bound()
    try:
        with _bounded(bound):
            return _run_bounded(job, shared)
    except _TooSlow:
        return FileResult(error=f"took longer than {bound:g} s to analyse (FLYDSL_LS_FILE_TIMEOUT): a generated file?")


def _run_bounded(job: FileJob, shared: _Shared | None = None) -> FileResult:
    """``shared``: what the index asks of every run file, when it was scanned for the run."""
    from flydsl_ls.actions.elsewhere import OtherFiles
    from flydsl_ls.checker import check_path, check_source, fix_source

    project, settings, path = _project, job.settings, job.path
    if shared is not None and not project.adopted:
        project.adopt(shared.load())
    start = time.time()
    report = check_path(path, settings, project)
    if report.error is not None:
        return FileResult(error=report.error)
    result = FileResult(diagnostics=report.diagnostics, internal_errors=report.internal_errors)
    if job.fix:
        source = report.source
        others = OtherFiles()
        outcome = fix_source(source, path, settings, unsafe=job.unsafe, project=project, others=others)
        result.source, result.applied, result.rejected = source, dict(outcome.applied), list(outcome.rejected)
        result.others = others.changed()
        if outcome.text == source:
            result.diagnostics = check_source(source, path, settings, project).diagnostics
        else:
            result.fixed = outcome.text
            result.diagnostics = [] if job.diff else check_source(outcome.text, path, settings, project).diagnostics
    result.consulted = _dependencies(project, path)
    if gc.get_count()[0] > _GARBAGE_CHECK:  # net new objects since the last look: a safety net
        gc.collect()
    stats = project.stats
    result.timing = FileTiming(os.getpid(), start, time.time(), IndexStats(**vars(stats)))
    return result


def _dependencies(project: ProjectIndex, path: Path) -> Consulted:
    asked = project.dependencies(path)
    if asked.scanned:
        # It looked through every file, and the models it read there asked in turn:
        # all the modules and lookups this worker's index has read so far.
        asked = Consulted(scanned=True)
        for other in project.consulted.values():
            asked.reads |= other.reads
            asked.probes.update(other.probes)
            asked.needles |= other.needles
    return asked

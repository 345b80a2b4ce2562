"""Checking (and fixing) the files of one ``check`` run, in worker processes.

Every worker reads the project (sibling modules, callers in other files, the files the
workspace-wide rules look through) from its own ``ProjectIndex`` over the same list of
files, and no file is written while workers run: fixed texts come back to the CLI, which
writes them once every file has been checked. So each file is checked against the project
as it was when the run started, whichever worker takes it and in whatever order, and a
run with one worker gives the same output as a run with many.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from flydsl_ls.analysis.diagnostic import Diagnostic
from flydsl_ls.analysis.project import Consulted, ProjectIndex
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
    consulted: Consulted | None = None  # what the analysis read of the rest of the project


def settings_key(path: Path, settings: Settings) -> tuple:
    """What in the settings decides a file's findings: its rules and analysis options
    (the FlyDSL release resolved as ``check_source`` resolves it)."""
    options = settings.options()
    if options.flydsl_version is None:
        resolved = resolve_version(None, path.parent)
        options.flydsl_version = resolved.version if resolved else None
    rules = tuple(rule.code for rule in settings.rules_for(path))
    return (rules, options.target_arch, options.flydsl_version)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run_jobs(jobs: list[FileJob], files: list[Path], workers: int) -> list[FileResult]:
    """The results of ``jobs``, in their order; ``files`` are the run's (the project)."""
    if not jobs:
        return []
    import flydsl_ls.checker  # noqa: F401 - imported once, before the workers fork
    workers = min(workers, len(jobs))
    if workers <= 1:
        _start(files)
        return [_run(job) for job in jobs]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    results: list[FileResult] = []
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start, initargs=(files,)) as pool:
        for batch in pool.map(_run_batch, _batches(jobs, workers * _BATCHES_PER_WORKER)):
            results += batch
    return results


_BATCHES_PER_WORKER = 4


def _batches(jobs: list[FileJob], count: int) -> list[list[FileJob]]:
    """Runs of neighbouring files of about equal size: files of one folder call each other,
    and a worker that checks them together builds each one's model once."""
    sizes = [_size(job.path) + 1 for job in jobs]
    share = sum(sizes) / count
    batches: list[list[FileJob]] = [[]]
    filled = 0.0
    for job, size in zip(jobs, sizes):
        if filled >= share and len(batches) < count:
            batches.append([])
            filled = 0.0
        batches[-1].append(job)
        filled += size
    return batches


def _run_batch(jobs: list[FileJob]) -> list[FileResult]:
    return [_run(job) for job in jobs]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


_project: ProjectIndex | None = None  # the worker's


def _start(files: list[Path]) -> None:
    global _project
    # Sibling modules and cross-file callers are read from the same run's files.
    _project = ProjectIndex(files=files)


def _run(job: FileJob) -> FileResult:
    from flydsl_ls.checker import check_path, check_source, fix_source

    project, settings, path = _project, job.settings, job.path
    report = check_path(path, settings, project)
    if report.error is not None:
        return FileResult(error=report.error)
    result = FileResult(diagnostics=report.diagnostics, internal_errors=report.internal_errors)
    if job.fix:
        source = report.source
        outcome = fix_source(source, path, settings, unsafe=job.unsafe, project=project)
        result.source, result.applied, result.rejected = source, dict(outcome.applied), list(outcome.rejected)
        if outcome.text == source:
            result.diagnostics = check_source(source, path, settings, project).diagnostics
        else:
            result.fixed = outcome.text
            result.diagnostics = [] if job.diff else check_source(outcome.text, path, settings, project).diagnostics
    result.consulted = _dependencies(project, path)
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

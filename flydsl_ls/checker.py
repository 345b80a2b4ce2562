"""Checking one file or text with resolved settings: the entry the CLI and server share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from flydsl_ls.actions.elsewhere import OtherFiles
from flydsl_ls.actions.fixes import FixOutcome, fix_all
from flydsl_ls.actions.validate import without_broken_fixes
from flydsl_ls.analysis.engine import AnalysisRequest, FileAnalysis, analyze
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.project import ProjectIndex
from flydsl_ls.analysis.model.sources import UnreadableFile, package_of, read_source
from flydsl_ls.analysis.model.text import LineIndex
from flydsl_ls.config import Settings
from flydsl_ls.file_arch import file_arch
from flydsl_ls.pins import resolve_version


@dataclass
class FileReport:
    path: Path
    source: str | None  # None when the file could not be read
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None  # why the file was skipped
    internal_errors: list[str] = field(default_factory=list)


def check_source(
    source: str,
    path: Path | None,
    settings: Settings,
    project: ProjectIndex | None = None,
    incremental: IncrementalAnalyzer | None = None,
    index: LineIndex | None = None,
    keep_model: bool = True,
    early: Callable[[FileAnalysis], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> FileAnalysis:
    """``incremental``: the document's analyzer, reusing what its last analysis learnt
    (``early``: its first findings, when it stages them, and ``stop``: whether to leave the
    rest for later: ``IncrementalAnalyzer.analyze``);
    ``index``: the source's line table, when the caller has it; ``keep_model=False``: only
    the diagnostics are wanted, the model built for them is disposed at once (a fix-all
    lints several times: each whole-file model would otherwise wait, in cycles, for a full
    collection)."""
    package = package_of(path) if path is not None else None
    options = settings.options()
    options.target_arch = file_arch(path, source, settings.arch_for(path)) or options.target_arch
    if options.flydsl_version is None:
        resolved = resolve_version(None, path.parent if path is not None else None)
        options.flydsl_version = resolved.version if resolved else None
    view = project.view(path, package) if project is not None else None
    rules = settings.rules_for(path)
    where = str(path) if path else None
    request = AnalysisRequest(source, rules=rules, options=options, package=package, path=where, project=view)
    if incremental is not None:
        return incremental.analyze(request, index=index, early=early, stop=stop)
    model = None
    if project is not None and path is not None:
        # The project may already hold this file's model (read as a sibling or caller).
        known = project.model_of(project.resolved(path))
        model = known if known is not None and known.source == source else None
    result = analyze(request, model=model)
    if not keep_model and result.model is not None and result.model is not model:  # not the project's
        result.model.dispose()
        result.model = None
    return result


def linter(path: Path | None, settings: Settings, project: ProjectIndex | None = None):
    """``text -> diagnostics`` for ``fix_all``: lint ``text`` as the file ``path``."""
    return lambda text: check_source(text, path, settings, project, keep_model=False).diagnostics


def fix_source(
    source: str,
    path: Path | None,
    settings: Settings,
    unsafe: bool,
    project: ProjectIndex | None = None,
    others: OtherFiles | None = None,
) -> FixOutcome:
    """All wanted fixes applied to a fixpoint, with imports they made unused removed.
    ``others``: where fixes that edit other files too keep those files' texts; while the
    fixes run, the project reads those files as edited so far (a second kernel's fix then
    plans on the helper the first one edited, not on the disk's stale text)."""
    if project is None or others is None:
        return fix_all(source, linter(path, settings, project), unsafe=unsafe, others=others)
    project.overlay = lambda p: others.current.get(str(Path(p).resolve()))
    try:
        return fix_all(source, linter(path, settings, project), unsafe=unsafe, others=others)
    finally:
        project.overlay = None


def check_path(path: Path, settings: Settings, project: ProjectIndex | None = None) -> FileReport:
    try:
        source = read_source(path)
    except UnreadableFile as error:
        return FileReport(path, None, error=str(error))
    result = check_source(source, path, settings, project)
    diagnostics = result.diagnostics
    if result.model is not None:
        diagnostics = without_broken_fixes(result.model.index, diagnostics, result.model.tree)
    return FileReport(path, source, diagnostics, internal_errors=result.internal_errors)

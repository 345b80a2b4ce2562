"""Diagnostics: lint once per (version, settings), push or answer pulls, never publish stale.

Pushing is debounced on change and immediate on open and save. A lint runs in a worker
thread on a ``Snapshot`` of the document (text, version, settings; never the session); its
result is kept only if the document still has that version when it finishes. Clients that pull (``textDocument/diagnostic``) are not pushed to,
so they never show every diagnostic twice (Neovim keeps the two in separate namespaces).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Callable

from lsprotocol import types

from flydsl_ls import baseline
from flydsl_ls.analysis.engine import SYNTAX_ERROR, FileAnalysis
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.sources import MAX_SOURCE_SIZE, file_time_bound, too_large
from flydsl_ls.analysis.model.text import Encoding, LineIndex
from flydsl_ls.checker import check_source
from flydsl_ls.server import schedule
from flydsl_ls.server.client import Client
from flydsl_ls.server.diagnostic_json import SEVERITY, SOURCE, FragmentCache, items_json, struck
from flydsl_ls.server.edits import lsp_range
from flydsl_ls.server.protocol import RawJSON
from flydsl_ls.server.session import Analysis, Document, Session, Snapshot

log = logging.getLogger(__name__)

# Beyond this size a file is not linted (a generated or data file opened by mistake); the
# CLI's bound too.
MAX_SOURCE_CHARS = MAX_SOURCE_SIZE

# --- conversion -------------------------------------------------------------------------
def to_lsp(d: Diagnostic, index: LineIndex, encoding: Encoding, version: int) -> types.Diagnostic:
    """One diagnostic as lsprotocol's type (tests and tools; the server sends JSON, below)."""
    message = d.message if not d.note else f"{d.message}\n{d.note}"
    return types.Diagnostic(
        range=lsp_range(d.range, index, encoding),
        message=message,
        severity=SEVERITY.get(d.severity, types.DiagnosticSeverity.Warning),
        code=d.code,
        code_description=types.CodeDescription(href=d.url) if d.code != SYNTAX_ERROR else None,
        source=SOURCE,
        tags=[types.DiagnosticTag.Deprecated] if struck(d) else None,
        data={"version": version},
    )


def find(
    analysis: Analysis, data: Any, code: str | None, rng: types.Range | None, encoding: Encoding
) -> tuple[int, Diagnostic] | None:
    """The analysis diagnostic (and its index) a client's diagnostic stands for: the one at
    ``data["index"]`` when code and range agree, else the first with that code and range."""
    internal = analysis.result.diagnostics
    position = data.get("index") if isinstance(data, dict) else None

    def agrees(d: Diagnostic) -> bool:
        return (not code or d.code == code) and (rng is None or lsp_range(d.range, analysis.index, encoding) == rng)

    if isinstance(position, int) and 0 <= position < len(internal) and agrees(internal[position]):
        return position, internal[position]
    if not code:
        return None
    return next(((i, d) for i, d in enumerate(internal) if d.code == code and agrees(d)), None)


# --- linting ----------------------------------------------------------------------------
def lint(
    snap: Snapshot,
    incremental: IncrementalAnalyzer,
    json_cache: FragmentCache,
    current: Callable[[], bool],
    early: Callable[[Analysis], None] | None = None,
) -> Analysis | None:
    """Lint one snapshot (worker thread) with the document's caches (the lint thread's only).
    None when ``current()`` says the document moved on meanwhile (a newer lint is queued).
    ``early``: given the analysis's first findings when it stages them (an edited
    helper's own, its callers' of before) while it analyses the rest, which a newer
    version interrupts."""
    if not current():
        return None
    started = time.monotonic()
    index = snap.index or LineIndex(snap.text)

    def first(found: FileAnalysis) -> None:
        if current():
            staged = Analysis(snap.version, snap.generation, snap.text, _baselined(snap, found))
            staged.__dict__["index"] = index
            staged.fragments = json_cache.fragments(staged.result.diagnostics, index, snap.encoding, prune=False)
            early(staged)

    if len(snap.text) > MAX_SOURCE_CHARS:  # warned about on the loop
        result = FileAnalysis([], None)
    else:
        try:
            result = check_source(
                snap.text,
                snap.path,
                snap.settings,
                snap.project,
                incremental=incremental,
                index=index,
                early=first if early is not None else None,
                stop=lambda: not current(),
            )
            if incremental.interrupted:
                return None  # a newer version is queued: its lint redoes what this one left
        except Exception:  # an analysis bug must not take the server down
            log.exception("analysis of %s failed", snap.uri)
            result = FileAnalysis([], None, ["analysis failed; see the server log"])
    for problem in result.internal_errors:
        log.warning("%s: internal error: %s", snap.uri, problem)
    result = _baselined(snap, result)
    analysis = Analysis(snap.version, snap.generation, snap.text, result)
    analysis.seconds = time.monotonic() - started
    analysis.__dict__["index"] = index  # rather than splitting the text again
    # While a statement is half typed the diagnostics are the recovered analysis's, without
    # fixes (analysis/model/recovery.py): keep the entries of the last lint that parsed for when
    # it does again (its diagnostics come back).
    half_typed = any(d.code == SYNTAX_ERROR for d in result.diagnostics)
    analysis.fragments = json_cache.fragments(result.diagnostics, analysis.index, snap.encoding, prune=not half_typed)
    return analysis


def _baselined(snap: Snapshot, result: FileAnalysis) -> FileAnalysis:
    """The findings the project's baseline holds become hints (their fixes kept), as the CLI
    sets them aside (flydsl_ls/baseline.py)."""
    if snap.baseline is None or snap.path is None or not result.diagnostics:
        return result
    try:
        recorded = baseline.load(snap.baseline)
    except baseline.BaselineError as error:
        log.warning("%s", error)
        return result
    if not recorded.files:
        return result
    _, known = recorded.split(snap.path, result.diagnostics, baseline.lines_of(snap.text))
    if not known:
        return result
    return FileAnalysis(baseline.as_hints(result.diagnostics, known), result.model, result.internal_errors)


async def analyse(
    session: Session, doc: Document, early: Callable[[Analysis], None] | None = None
) -> Analysis | None:
    """The current analysis of ``doc``, linting it now if there is none; ``early`` (on the
    loop): its first findings, when the lint stages them."""
    generation = session.generation
    current = doc.current(generation)
    if current is not None:
        return current
    if doc.too_slow and doc.analysis is not None:
        return doc.analysis  # its last findings, kept: no more waiting on it while it is edited
    loop = asyncio.get_running_loop()
    snap = session.snapshot(doc)
    if len(snap.text) > MAX_SOURCE_CHARS:
        session.warn_once(f"{doc.uri}: {too_large(len(snap.text))}; not checked")
    version = snap.version

    def still_current() -> bool:  # two integers, read from the lint thread
        return doc.version == version and session.generation == generation

    staged = None
    if early is not None:
        staged = lambda first: loop.call_soon_threadsafe(early, first)
    analysis = await loop.run_in_executor(
        schedule.LINT, lint, snap, doc.incremental, doc.json_cache, still_current, staged
    )
    if snap.project.store is not None:  # what the lint scanned, for the next server
        schedule.LINT.submit(snap.project.store.save)
    if analysis is None:
        return None
    bound = file_time_bound()
    if analysis.seconds > bound:
        doc.too_slow = True
        session.warn_once(
            f"{doc.uri}: took {analysis.seconds:.0f} s to analyse (the bound is {bound:g} s, "
            "FLYDSL_LS_FILE_TIMEOUT): not checked again until it is saved"
        )
    if session.get(doc.uri) is not doc:
        return None  # closed meanwhile
    _store(session, doc, analysis)
    return analysis


def _store(session: Session, doc: Document, analysis: Analysis) -> None:
    doc.early = None
    key = (analysis.version, analysis.generation)
    if doc.analysis is None or key >= (doc.analysis.version, doc.analysis.generation):
        doc.analysis = analysis
        doc.linted = key
    if analysis.result.model is not None:
        doc.good_model = analysis.result.model
    session.touch(doc)


def schedule_lint(session: Session, client: Client, doc: Document, delay: float) -> None:
    """(Re)start the lint of ``doc`` after ``delay`` seconds, replacing a pending one."""
    if doc.pending is not None and not doc.pending.done():
        doc.pending.cancel()
    doc.pending = asyncio.ensure_future(_lint_and_publish(session, client, doc, delay))


async def _lint_and_publish(session: Session, client: Client, doc: Document, delay: float) -> None:
    try:
        if delay > 0:
            await asyncio.sleep(delay)
        def first(staged: Analysis) -> None:
            # Published at once; the lint's final findings follow (the same, as a rule).
            if session.get(doc.uri) is doc and (staged.version, staged.generation) == (doc.version, session.generation):
                doc.early = staged
                _publish(session, client, doc, staged.version, staged.fragments)

        analysis = await analyse(session, doc, None if session.features.pull_diagnostics else first)
        if analysis is None or analysis.version != doc.version:
            return  # stale: a newer version will publish
        if session.get(doc.uri) is not doc:
            return
        if session.features.pull_diagnostics:
            return
        key = (analysis.version, analysis.generation)
        if doc.published == key:
            return
        doc.published = key
        _publish(session, client, doc, analysis.version, analysis.fragments)
        # The hover models the lint dropped, a few ms each: freed now rather than all at
        # the next hover (17 after aiter's edit series: 41 ms of its first hover).
        doc.incremental.release_models()
    except asyncio.CancelledError:
        pass
    except Exception:
        log.exception("diagnostics for %s failed", doc.uri)


def _publish(session: Session, client: Client, doc: Document, version: int, fragments: list[str]) -> None:
    compiled = session.compile_diagnostics.get(doc.uri, [])  # see commands.py
    params = (
        f'{{"uri":{json.dumps(doc.uri)},"version":{version},'
        f'"diagnostics":{items_json(fragments, version, compiled)}}}'
    )
    client.notify(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, RawJSON(params))


def clear(session: Session, client: Client, uri: str) -> None:
    if not session.features.pull_diagnostics:
        client.notify(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def refresh_all(session: Session, client: Client) -> None:
    """After a settings change: re-lint open documents, or ask a pulling client to re-pull."""
    if session.features.pull_diagnostics:
        if session.features.diagnostic_refresh:
            client.refresh(types.WORKSPACE_DIAGNOSTIC_REFRESH)
        return
    for doc in list(session.documents.values()):
        schedule_lint(session, client, doc, 0)


# --- pull -------------------------------------------------------------------------------
async def pull(session: Session, client: Client, params: types.DocumentDiagnosticParams):
    doc = session.get(params.text_document.uri)
    if doc is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[], result_id=None)
    previous = params.previous_result_id
    linted = doc.linted
    if previous is not None and linted == (doc.version, session.generation):
        if previous == f"{linted[0]}.{linted[1]}":  # answered without the analysis
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=previous)
    # Only the current version's diagnostics: the client lays them over the text it has
    # now (an older version's FLY000 would show at another column). The document may
    # change while it is linted: lint again, the newest version (a lint of a version
    # already left is skipped, see ``lint``).
    while True:
        analysis = await analyse(session, doc)
        if session.get(doc.uri) is not doc:
            return types.RelatedFullDocumentDiagnosticReport(items=[])  # closed meanwhile
        if analysis is not None and (analysis.version, analysis.generation) == (doc.version, session.generation):
            break
    session.touch(doc)
    if previous == analysis.result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=analysis.result_id)
    return RawJSON(
        f'{{"kind":"full","resultId":{json.dumps(analysis.result_id)},"items":{items_json(analysis.fragments, analysis.version)}}}'
    )

"""textDocument/inlayHint: the inferred type after each assigned name (``tid: Int32``,
``c: ir.Value i32``; analysis/model/typehints.py says which), for the range asked.

With the ``isa-hints`` setting, after a compile (with line info) of the file as it is, each
source line that became instructions gets their counts at its end (``12 instr, 2 memory,
1 wait, 4 MFMA``, its calls' included), from the compile's result (``Session.compiled``).

The ``inlay-hints`` setting turns the types off (and back on: the client is asked to refresh,
``workspace/inlayHint/refresh``). Computed on the lint's worker thread (between lints) from
a ``Snapshot``. A view inside one top-level statement reads the model the lint's last
(incremental) analysis has of that statement, when it was of the same text: after an edit
there, the one the lint built. Otherwise one whole-file model per text, kept (on that
thread only, ``Document.hints``) for the next range asked of the same text, as a client
asks again when the view scrolls; one document at a time keeps it (``Session.hinted``). A text that does not
parse while a statement is half typed is analysed repaired (analysis/model/recovery.py):
the other lines keep their hints.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified

from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.analysis.model import recovery
from flydsl_ls.analysis.model.deep import on_deep_stack
from flydsl_ls.analysis.model.parsing import parse
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.sources import package_of
from flydsl_ls.analysis.model.text import Position
from flydsl_ls.analysis.model.typehints import TypeHint, type_hints
from flydsl_ls.compile.lines import count_words
from flydsl_ls.server import schedule
from flydsl_ls.server.client import Client
from flydsl_ls.server.protocol import RawJSON
from flydsl_ls.server.session import HintsModel, Session, Snapshot

log = logging.getLogger(__name__)

_TYPE = types.InlayHintKind.Type.value


async def inlay_hints(session: Session, client: Client, params: types.InlayHintParams) -> RawJSON | None:
    doc = session.get(params.text_document.uri)
    if doc is None:
        return None
    snap = session.snapshot(doc)
    index, encoding = snap.index, snap.encoding
    first = index.from_client(params.range.start.line, params.range.start.character, encoding)
    last = index.from_client(params.range.end.line, params.range.end.character, encoding)
    counts = isa_counts(session, doc, first.line, last.line) if session.editor.isa_counts else []
    if not session.editor.hints:
        return RawJSON(json.dumps(counts))
    version = snap.version

    def current() -> bool:  # read from the lint thread
        return doc.version == version

    if session.hinted is not None and session.hinted is not doc:  # one document keeps a model
        schedule.LINT.submit(session.hinted.hints.release)
    session.hinted = doc
    loop = asyncio.get_running_loop()
    found = await loop.run_in_executor(schedule.LINT, hints_json, snap, first, last, current, doc.incremental, doc.hints)
    if found is None or doc.version != version:
        raise JsonRpcContentModified("the document changed; ask for its hints again")
    return RawJSON(json.dumps(json.loads(found) + counts) if counts else found)


def isa_counts(session: Session, doc, first: int, last: int) -> list[dict]:
    """The instruction counts of the lines ``first``..``last`` (0-based) of the last compile of
    ``doc``, at their ends; none when the text changed since (the lines may have moved)."""
    compiled = session.compiled.get(doc.uri)
    if compiled is None or compiled.text != doc.text or doc.path is None:
        return []
    if compiled.counts is None:  # once per compile, not per request
        compiled.counts = _line_totals(compiled.result, doc.path)
    hints = []
    for number in range(first, last + 1):
        total = compiled.counts.get(number)
        if total is None:
            continue
        end = doc.index.to_client(Position(number, len(doc.index.line_text(number))), session.encoding)
        label = ", ".join([f"{total['instructions']} instr", *count_words(total)])
        hints.append({"position": {"line": end[0], "character": end[1]}, "label": label, "paddingLeft": True})
    return hints


def _line_totals(result, path: Path) -> dict[int, dict[str, int]]:
    """0-based line of ``path`` -> its summary, summed over the result's kernels."""
    here, same = path.resolve(), {}
    totals: dict[int, dict[str, int]] = {}
    for kernel in result.kernels:
        for line in kernel.lines:
            if line.file not in same:
                same[line.file] = Path(line.file).resolve() == here
            if same[line.file]:
                total = totals.setdefault(line.line - 1, {})
                for key, value in line.summary().items():
                    total[key] = total.get(key, 0) + value
    return totals


def refresh(session: Session, client: Client) -> None:
    """Ask the client to ask again (the setting changed)."""
    if session.features.inlay_hint_refresh:
        client.refresh(types.WORKSPACE_INLAY_HINT_REFRESH)


# --- on the lint thread -----------------------------------------------------------------
def hints_json(
    snap: Snapshot,
    first: Position,
    last: Position,
    current: Callable[[], bool],
    incremental: IncrementalAnalyzer,
    kept: HintsModel,
) -> str | None:
    """The hints between ``first`` and ``last`` as LSP JSON; None when the document moved on
    before they were computed."""
    if not current():
        return None
    try:
        try:
            hints = _linted_hints(incremental, snap, first, last)
            if hints is None:
                hints = _hints(_model_of(snap, kept), first, last)
        except RecursionError:  # a deeply nested file: again with room to recurse
            hints = on_deep_stack(lambda: _hints(_model_of(snap, kept), first, last))
    except Exception:  # an analysis bug must not take the server down
        log.exception("inlay hints of %s failed", snap.uri)
        return "[]"
    index, encoding = snap.index, snap.encoding
    items = []
    for hint in hints:
        line, character = index.to_client(hint.position, encoding)
        items.append(
            {
                "position": {"line": line, "character": character},
                "label": f": {hint.label}",
                "kind": _TYPE,
                "tooltip": hint.origin,
            }
        )
    return json.dumps(items)


def _linted_hints(incremental: IncrementalAnalyzer, snap: Snapshot, first: Position, last: Position):
    """From the models of the top-level statements in the range, as the lint's last
    (incremental) analysis has them, when it was of this text: no parse, and after an edit
    the statement edited has the model the lint built. None otherwise (then the whole
    file's)."""
    if incremental.analysed != snap.text:
        return None
    with incremental.models_in_use():
        found = incremental.models_of_lines(first.line, last.line)
        if found is None:
            return None
        hints = []
        for start, end, model in found:
            hints += type_hints(model, max(first, Position(start, 0)), min(last, Position(end + 1, 0)))
        return hints


def _hints(model: SemanticModel | None, first: Position, last: Position) -> list[TypeHint]:
    return type_hints(model, first, last) if model is not None else []


def _model_of(snap: Snapshot, kept: HintsModel) -> SemanticModel | None:
    """The whole-file model of the snapshot's text: the one ``kept``, else built and kept."""
    project = snap.project
    if kept.text == snap.text and kept.project_generation == project.generation:
        return kept.model
    old, kept.model, kept.text = kept.model, None, None
    if old is not None:
        schedule.LINT.submit(old.dispose)  # freed after this answer
    generation = project.generation
    text = snap.text
    try:
        tree = parse(text)
    except SyntaxError as error:  # the broken lines stand aside; they hold no assignment then
        fixed = recovery.repair(text, error)
        text = fixed.text if fixed is not None else text
        tree = _parsed(fixed.text) if fixed is not None else None
    except ValueError:  # null bytes
        tree = None
    model = None
    if tree is not None:
        package = package_of(snap.path) if snap.path is not None else None
        model = SemanticModel(text, tree, package, project.view(snap.path, package))
        if text is snap.text:
            model.__dict__["index"] = snap.index  # the same text's line table
    kept.text, kept.project_generation, kept.model = snap.text, generation, model
    return model


def _parsed(text: str):
    try:
        return parse(text)
    except (SyntaxError, ValueError):
        return None

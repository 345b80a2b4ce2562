"""Code actions: a quick fix per fixable diagnostic (from the fix carried in its ``data``),
"Ignore FLYnnn for this line", and ``source.fixAll.flydsl-ls`` (resolved lazily)."""

from __future__ import annotations

import asyncio
import logging
from enum import Enum
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified

from flydsl_ls.actions.fixes import apply_fix, fix_all
from flydsl_ls.actions.suppress import suppression_edit, suppression_title
from flydsl_ls.actions.textdiff import minimal_edits
from flydsl_ls.actions.validate import fix_parses
from flydsl_ls.analysis.diagnostic import Applicability, Edit, Fix
from flydsl_ls.analysis.engine import SYNTAX_ERROR
from flydsl_ls.analysis.text import LineIndex, Range
from flydsl_ls.checker import check_source
from flydsl_ls.server.diagnostics import SOURCE, lsp_range
from flydsl_ls.server.session import Document

if TYPE_CHECKING:
    from flydsl_ls.server.app import FlyServer

log = logging.getLogger(__name__)

FIX_ALL_TITLE = "Fix all safe flydsl-ls problems"


class ActionKind(str, Enum):
    """What the server offers; drives both the advertised kinds and the routing."""

    QUICKFIX = types.CodeActionKind.QuickFix.value
    FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.flydsl-ls"

    @classmethod
    def advertised(cls) -> list[str]:
        return [kind.value for kind in cls]


STALE = "the document changed; request the action again"


def _wanted(kind: ActionKind, only: list[str] | None) -> bool:
    if not only:
        return True
    return any(kind.value == o or kind.value.startswith(o + ".") for o in only)


def code_actions(server: FlyServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    doc = server.session.get(params.text_document.uri)
    if doc is None:
        return None
    only = list(params.context.only) if params.context.only else None
    actions: list[types.CodeAction] = []
    ours = [d for d in params.context.diagnostics if d.source == SOURCE and _current(d, doc)]
    if _wanted(ActionKind.QUICKFIX, only):
        actions += [a for d in ours if (a := _quick_fix(server, doc, d)) is not None]
        actions += _suppressions(server, doc, ours)
    if _wanted(ActionKind.FIX_ALL, only) and _has_safe_fix(server, doc):
        action = types.CodeAction(title=FIX_ALL_TITLE, kind=ActionKind.FIX_ALL.value)
        if server.session.features.code_action_resolve:
            action.data = {"action": ActionKind.FIX_ALL.value, "uri": doc.uri, "version": doc.version}
        else:
            action.edit = _fix_all_edit(server, doc, doc.text, doc.version)
            if action.edit is None:
                action = None
        if action is not None:
            actions.append(action)
    return actions


def _fix_parses(server: FlyServer, doc: Document, d: types.Diagnostic) -> bool:
    """Re-parse the fix in its statement before offering it (libcst; see actions.validate)."""
    analysis = doc.current(server.session.generation)
    position = _data(d).get("index")
    if analysis is None or not isinstance(position, int):
        return True  # checked again, on the whole text, when the edit is computed
    internal = analysis.result.diagnostics
    if not 0 <= position < len(internal):
        return True
    return fix_parses(analysis.index, internal[position])


def _data(d: types.Diagnostic) -> dict:
    return d.data if isinstance(d.data, dict) else {}


def _current(d: types.Diagnostic, doc: Document) -> bool:
    """A diagnostic of the document's current version: its carried fix still applies."""
    version = _data(d).get("version")
    return version is None or version == doc.version


def _quick_fix(server: FlyServer, doc: Document, d: types.Diagnostic) -> types.CodeAction | None:
    fix = _data(d).get("fix")
    if not isinstance(fix, dict) or not isinstance(fix.get("title"), str):
        return None
    if not _fix_parses(server, doc, d):
        return None
    action = types.CodeAction(
        title=fix["title"],
        kind=ActionKind.QUICKFIX.value,
        diagnostics=[d],
        is_preferred=fix.get("applicability") == Applicability.SAFE.value,
    )
    if server.session.features.code_action_resolve:
        action.data = {"action": ActionKind.QUICKFIX.value, "uri": doc.uri, "version": doc.version, "fix": fix}
        return action
    action.edit = _quick_fix_edit(server, doc, fix, doc.text, doc.version)
    return action if action.edit is not None else None


def _quick_fix_edit(server: FlyServer, doc: Document, fix: dict, text: str, version: int) -> types.WorkspaceEdit | None:
    """The carried fix, plus the removal of imports it leaves unused, as minimal edits."""
    index = LineIndex(text)
    encoding = server.session.encoding
    try:
        raw = [(_range(e["range"]), str(e["newText"])) for e in fix["edits"]]
        applicability = Applicability(fix.get("applicability", Applicability.UNSAFE.value))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        log.debug("ignoring malformed fix data: %s", error)
        return None
    internal = Fix(
        str(fix["title"]),
        applicability,
        tuple(
            Edit(
                Range(
                    index.from_client(r.start.line, r.start.character, encoding),
                    index.from_client(r.end.line, r.end.character, encoding),
                ),
                new_text,
            )
            for r, new_text in raw
        ),
    )
    new = apply_fix(text, internal)
    if new is None:
        log.warning("%s: fix %r withheld: the result would not parse", doc.uri, internal.title)
        return None
    edits = [
        types.TextEdit(range=lsp_range(e.range, index, encoding), new_text=e.content)
        for e in minimal_edits(text, new)
    ]
    if not edits:
        return None
    return workspace_edit(server, doc, edits, version)


def _range(raw: dict) -> types.Range:
    start, end = raw["start"], raw["end"]
    return types.Range(
        start=types.Position(line=int(start["line"]), character=int(start["character"])),
        end=types.Position(line=int(end["line"]), character=int(end["character"])),
    )


def _suppressions(server: FlyServer, doc: Document, ours: list[types.Diagnostic]) -> list[types.CodeAction]:
    actions = []
    seen: set[tuple[str, int]] = set()
    for d in ours:
        code = str(d.code or "")
        line = d.range.start.line  # the same in every encoding
        if not code or code == SYNTAX_ERROR or (code, line) in seen:
            continue
        seen.add((code, line))
        edit = suppression_edit(doc.text, line, code, doc.index)
        if edit is None:
            continue
        text_edit = types.TextEdit(
            range=lsp_range(edit.range, doc.index, server.session.encoding), new_text=edit.content
        )
        actions.append(
            types.CodeAction(
                title=suppression_title(code),
                kind=ActionKind.QUICKFIX.value,
                diagnostics=[d],
                edit=workspace_edit(server, doc, [text_edit]),
            )
        )
    return actions


def _has_safe_fix(server: FlyServer, doc: Document) -> bool:
    analysis = doc.current(server.session.generation)
    if analysis is None:  # not linted yet: offer it, resolve finds out
        return True
    return any(
        d.fix is not None and d.fix.applicability is Applicability.SAFE
        for d in analysis.result.diagnostics
    )


def _fix_all_edit(server: FlyServer, doc: Document, text: str, version: int) -> types.WorkspaceEdit | None:
    """All safe fixes applied to ``text`` (a snapshot), as a few minimal edits."""
    settings = server.session.settings_for(doc)
    project = server.session.project
    outcome = fix_all(text, lambda source: check_source(source, doc.path, settings, project).diagnostics)
    for rejected in outcome.rejected:
        log.warning("fix-all: dropped %s (the result did not parse)", rejected)
    edits = minimal_edits(text, outcome.text)
    if not edits:
        return None
    encoding = server.session.encoding
    index = LineIndex(text)
    return workspace_edit(
        server,
        doc,
        [types.TextEdit(range=lsp_range(e.range, index, encoding), new_text=e.content) for e in edits],
        version,
    )


async def resolve(server: FlyServer, action: types.CodeAction) -> types.CodeAction:
    """The edit of a quick fix or of fix-all, computed only when the user picks it."""
    data: Any = action.data if isinstance(action.data, dict) else {}
    kind = data.get("action")
    if kind not in (ActionKind.QUICKFIX.value, ActionKind.FIX_ALL.value) or action.edit is not None:
        return action
    doc = server.session.get(str(data.get("uri")))
    if doc is None or doc.version != data.get("version"):
        raise JsonRpcContentModified(STALE)
    version, text = doc.version, doc.text
    loop = asyncio.get_running_loop()
    if kind == ActionKind.FIX_ALL.value:
        edit = await loop.run_in_executor(server.worker, _fix_all_edit, server, doc, text, version)
    else:
        edit = await loop.run_in_executor(
            server.worker, _quick_fix_edit, server, doc, data.get("fix") or {}, text, version
        )
    if doc.version != version:
        raise JsonRpcContentModified(STALE)
    action.edit = edit or workspace_edit(server, doc, [], version)
    return action


def workspace_edit(
    server: FlyServer, doc: Document, edits: list[types.TextEdit], version: int | None = None
) -> types.WorkspaceEdit:
    if server.session.features.document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=doc.uri, version=doc.version if version is None else version
                    ),
                    edits=edits,
                )
            ]
        )
    return types.WorkspaceEdit(changes={doc.uri: edits})

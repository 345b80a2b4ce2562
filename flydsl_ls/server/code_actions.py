"""Code actions: a quick fix per fixable diagnostic, "Ignore FLYnnn for this line", "Disable
FLYnnn in this project" (an edit of pyproject.toml: actions/project_ignore.py), and
``source.fixAll.flydsl-ls``.

A diagnostic's ``data`` holds its version and its index in that version's lint; its fix is
looked up in the server's analysis of that version (re-linted if it was dropped). Edits
are computed only when they are wanted, and once per version:

- a client that resolves code actions (VS Code, Neovim) gets ``data`` and asks for the
  edit with codeAction/resolve when the user picks the action;
- another client that can apply server edits (``workspace.applyEdit``: eglot, Helix...)
  gets a ``command`` (``flydsl-ls.applyFix``, ``flydsl-ls.fixAll``) that computes the edit
  and sends it with workspace/applyEdit; but a request that asks for fix-all by name
  (``only``, as on save) gets the edit itself in the answer;
- a client with neither gets the quick fixes' edits in the answer, and fix-all only when it
  asks for it by name (a fix-all edit of a long file re-lints it several times: seconds,
  too slow to compute for every cursor move).

In a file with ``# flydsl: example`` functions, a client that can apply server edits also
gets the source action "Fix all safe flydsl-ls problems, verified by compiling" (kind
``source.verifiedFixAll.flydsl-ls``, outside ``source.fixAll`` so that saving never runs it):
it runs ``flydsl-ls.fixAll``, which compiles the examples before and after and keeps only the
fixes with identical IR (server/commands.py). The plain fix-all (the resolved action, the edit
on save) never compiles.

On the header of a kernel builder or ``@flyc.jit`` launcher (``scaffold.targets``), "Add a
compile example" (kind ``refactor.addCompileExample.flydsl-ls``) inserts a ``# flydsl:
example`` written from its signature and the repository's tests (``scaffold.example_for``),
computed only when picked: on resolve, or by ``flydsl-ls.addExample [uri, version, name]``
(also the command of the CodeLens of the same name). Once inserted, the example is revealed
(``window/showDocument`` with its name selected, when the client supports it): by the
command after its ``workspace/applyEdit``; after a resolved edit, by the action's command
``flydsl-ls.showExample [uri, name]``.

Inside a module-level kernel, launcher or builder (``migrate.kernels``) whose scope (it and
the helpers only it uses) has a fixable finding, "Migrate {name}" (kind
``refactor.rewrite.migrateKernel.flydsl-ls``, for a client that can apply server edits) runs
``flydsl-ls.migrateKernel [uri, version, name]`` (server/commands.py, server/migrate.py): every fix, unsafe
included, verified by compiling when the file has examples.
"""

from __future__ import annotations

import asyncio
import logging
import re
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified

from flydsl_ls.actions import migrate as migration
from flydsl_ls.actions import project_ignore
from flydsl_ls.actions.elsewhere import OtherFiles, read_or_none
from flydsl_ls.actions.fixes import apply_fix, fix_all
from flydsl_ls.actions.suppress import suppression_edit, suppression_title
from flydsl_ls.actions.validate import fix_parses
from flydsl_ls.analysis.engine import SYNTAX_ERROR
from flydsl_ls.analysis.model.diagnostic import Applicability, Diagnostic, Edit, Fix
from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.checker import check_source
from flydsl_ls.compile.examples import find_examples
from flydsl_ls.compile.scaffold import apply, example_for, targets
from flydsl_ls.server import diagnostics, edits, schedule
from flydsl_ls.server.client import Client
from flydsl_ls.server.diagnostics import SOURCE
from flydsl_ls.server.session import Analysis, Document, Session, Snapshot

log = logging.getLogger(__name__)

FIX_ALL_TITLE = "Fix all safe flydsl-ls problems"
VERIFIED_FIX_ALL_TITLE = "Fix all safe flydsl-ls problems, verified by compiling the examples"
EXAMPLE_MARKER = re.compile(r"flydsl:\s*example", re.I)  # a cheap test before find_examples
APPLY_FIX_COMMAND = "flydsl-ls.applyFix"  # [uri, version, index]
FIX_ALL_COMMAND = "flydsl-ls.fixAll"  # [uri, version]
ADD_EXAMPLE_COMMAND = "flydsl-ls.addExample"  # [uri, version, name]
SHOW_EXAMPLE_COMMAND = "flydsl-ls.showExample"  # [uri, name]
REVEAL_TIMEOUT = 10.0  # seconds the client may take to answer window/showDocument
ADD_EXAMPLE_TITLE = "Add a compile example for {name}"
MIGRATE_COMMAND = "flydsl-ls.migrateKernel"  # [uri, version, name]
MIGRATE_TITLE = "Migrate {name}: apply every fix in it and the helpers only it uses"


class ActionKind(str, Enum):
    """What the server offers; drives both the advertised kinds and the routing."""

    QUICKFIX = types.CodeActionKind.QuickFix.value
    FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.flydsl-ls"
    # Not under source.fixAll: a client asking for source.fixAll on save never gets it.
    VERIFIED_FIX_ALL = f"{types.CodeActionKind.Source.value}.verifiedFixAll.flydsl-ls"
    ADD_EXAMPLE = f"{types.CodeActionKind.Refactor.value}.addCompileExample.flydsl-ls"
    MIGRATE_KERNEL = f"{types.CodeActionKind.RefactorRewrite.value}.migrateKernel.flydsl-ls"

    @classmethod
    def advertised(cls) -> list[str]:
        return [kind.value for kind in cls]


STALE = "the document changed; request the action again"


def _wanted(kind: ActionKind, only: list[str] | None) -> bool:
    if not only:
        return True
    return any(kind.value == o or kind.value.startswith(o + ".") for o in only)


async def code_actions(session: Session, client: Client, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    doc = session.get(params.text_document.uri)
    if doc is None:
        return None
    features = session.features
    only = list(params.context.only) if params.context.only else None
    ours = [d for d in params.context.diagnostics if d.source == SOURCE and _current(d, doc)]
    fix_all_wanted = _wanted(ActionKind.FIX_ALL, only)
    analysis = doc.current(session.generation)
    if analysis is None and (ours or (fix_all_wanted and doc.analysis is None)):
        # Dropped (a document not used for a while) or a new settings generation: re-lint.
        analysis = await diagnostics.analyse(session, doc)
        if analysis is None or analysis.version != doc.version:
            ours, analysis = [], None
    if analysis is not None:
        session.touch(doc)
    actions: list[types.CodeAction] = []
    if _wanted(ActionKind.QUICKFIX, only):
        for d in ours:
            action = await _quick_fix(session, doc, analysis, d)
            if action is not None:
                actions.append(action)
        actions += _suppressions(session, doc, analysis, ours)
        actions += _project_ignores(session, doc, ours)
    if fix_all_wanted and _has_safe_fix(analysis):
        action = types.CodeAction(title=FIX_ALL_TITLE, kind=ActionKind.FIX_ALL.value)
        version = doc.version
        if features.code_action_resolve:
            action.data = {"action": ActionKind.FIX_ALL.value, "uri": doc.uri, "version": version}
        elif features.apply_edit and not only:
            action.command = types.Command(title=FIX_ALL_TITLE, command=FIX_ALL_COMMAND, arguments=[doc.uri, version])
        elif only or (analysis is not None and "edit" in analysis.fix_all_edits):
            action.edit = await fix_all_edit(session, doc, analysis)
            if doc.version != version:
                raise JsonRpcContentModified(STALE)
        else:
            action = None  # asked for nothing in particular: not worth seconds of work
        if action is not None and (action.edit is not None or action.data or action.command):
            actions.append(action)
    if (
        _wanted(ActionKind.VERIFIED_FIX_ALL, only)
        and features.apply_edit
        and analysis is not None
        and EXAMPLE_MARKER.search(analysis.text)
        and _has_safe_fix(analysis)
    ):
        actions.append(
            types.CodeAction(
                title=VERIFIED_FIX_ALL_TITLE,
                kind=ActionKind.VERIFIED_FIX_ALL.value,
                command=types.Command(
                    title=VERIFIED_FIX_ALL_TITLE, command=FIX_ALL_COMMAND, arguments=[doc.uri, analysis.version]
                ),
            )
        )
    if _wanted(ActionKind.ADD_EXAMPLE, only):
        actions += await _add_example_actions(session, doc, params.range.start.line)
    if _wanted(ActionKind.MIGRATE_KERNEL, only) and features.apply_edit and analysis is not None:
        if "kernel" in analysis.text or "jit" in analysis.text:  # a cheap test before parsing, done off the loop
            loop = asyncio.get_running_loop()
            line = params.range.start.line
            found = analysis.text, analysis.version, analysis.result.diagnostics
            # the lint's top-level statement there, when it analysed this text (no parse)
            statement = doc.incremental.statement_at(line, analysis.text)
            actions += await loop.run_in_executor(
                schedule.ACTIONS, _migrate_actions, doc.uri, *found, line, statement
            )
    return actions


# --- "Migrate this kernel" ----------------------------------------------------------------------
def _migrate_actions(
    uri: str, text: str, version: int, diagnostics: list[Diagnostic], line: int, statement=None
) -> list[types.CodeAction]:
    """The action in the module-level kernel at ``line`` (0-based), when its scope has a fix
    (worker thread). ``statement``: the top-level statement there (``statement_at``), which
    decides it when a fix lies in the kernel's own lines; else the text is parsed once
    (see migrate._module): the first code action on a 5,700-line text took 115-150 ms."""
    names = None
    if statement is not None and statement[2] is None:
        names = []  # not in a module-level function: in no kernel (an import, a constant)
    elif statement is not None:
        first, _, name, statement_text = statement
        found = migration.kernel_with_fix_in(statement_text, name, first + 1, line + 1, diagnostics)
        names = [found] if found else None
    if names is None:
        names = [kernel.name for kernel in migration.with_fix(text, diagnostics, line + 1)]
    actions = []
    for name in names:
        title = MIGRATE_TITLE.format(name=name)
        command = types.Command(title=title, command=MIGRATE_COMMAND, arguments=[uri, version, name])
        actions.append(types.CodeAction(title=title, kind=ActionKind.MIGRATE_KERNEL.value, command=command))
    return actions


# --- "Add a compile example" ------------------------------------------------------------------
async def _add_example_actions(session: Session, doc: Document, line: int) -> list[types.CodeAction]:
    """The action on the header (decorators to ``def``) of a builder or launcher at ``line``."""
    if "jit" not in doc.text or not doc.index.line_text(line).startswith(("def ", "@")):
        return []  # cheap tests before parsing: a module-level `def` or decorator line
    features = session.features
    actions = []
    for target in targets(doc.text):
        if not target.first_line - 1 <= line <= target.line - 1:
            continue
        title = ADD_EXAMPLE_TITLE.format(name=target.name)
        action = types.CodeAction(title=title, kind=ActionKind.ADD_EXAMPLE.value)
        arguments = [doc.uri, doc.version, target.name]
        if features.code_action_resolve:
            action.data = {"action": ActionKind.ADD_EXAMPLE.value, "uri": doc.uri, "version": doc.version, "name": target.name}
        elif features.apply_edit:
            action.command = types.Command(title=title, command=ADD_EXAMPLE_COMMAND, arguments=arguments)
        else:  # a client that can only take the edit itself: written now, off the loop
            added = await add_example_edit(session, doc, target.name)
            if added is None:
                continue
            action.edit = added.edit
        actions.append(action)
    return actions


class Added(NamedTuple):
    edit: types.WorkspaceEdit
    example: str  # the new function's name
    line: int  # 0-based line of its ``def`` once inserted


async def add_example_edit(session: Session, doc: Document, name: str) -> Added | None:
    """The insertion of the example of ``name`` in the document's current text, written off
    the loop; None if it cannot be written."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(schedule.ACTIONS, _add_example_edit, session.snapshot(doc), name)


def _add_example_edit(snap: Snapshot, name: str) -> Added | None:
    """The insertion of the example of ``name`` in the snapshot's text; None if it cannot be
    written. Reads the tests folder: run on a worker thread."""
    try:
        insertion = example_for(snap.text, name, snap.path)
    except (LookupError, SyntaxError, ValueError) as error:
        log.info("%s: no compile example for %s: %s", snap.uri, name, error)
        return None
    except Exception:  # noqa: BLE001 - a heuristic's bug must not fail the request
        log.exception("%s: writing the compile example for %s failed", snap.uri, name)
        return None
    edit = edits.document_edit(snap.uri, snap.version, [edits.insertion_edit(snap, insertion)], snap.document_changes)
    new = next(e for e in find_examples(apply(snap.text, insertion)) if e.name == insertion.example)
    return Added(edit, insertion.example, new.line - 1)


async def reveal(session: Session, client: Client, uri: str, line: int, name: str) -> bool:
    """Ask the client to show ``uri`` with ``name`` selected on ``line`` (the ``def`` of a
    new example); False when it cannot or did not."""
    if not session.features.show_document:
        return False
    start = len("def ")  # an example is a module-level ``def`` with an ASCII name
    selection = types.Range(types.Position(line, start), types.Position(line, start + len(name)))
    params = types.ShowDocumentParams(uri=uri, take_focus=True, selection=selection)
    try:
        shown = await asyncio.wait_for(client.request(types.WINDOW_SHOW_DOCUMENT, params), REVEAL_TIMEOUT)
    except Exception as error:  # noqa: BLE001 - a client that fails it keeps the edit
        log.warning("window/showDocument %s failed: %s", uri, error)
        return False
    return shown is None or bool(getattr(shown, "success", True))


def _data(d: types.Diagnostic) -> dict:
    return d.data if isinstance(d.data, dict) else {}


def _current(d: types.Diagnostic, doc: Document) -> bool:
    """A diagnostic of the document's current version: its fix still applies."""
    version = _data(d).get("version")
    return version is None or version == doc.version


def _fix_parses(analysis: Analysis, position: int, internal: Diagnostic) -> bool:
    """Re-parse the fix in its statement before offering it (libcst; see actions.validate),
    once per version."""
    known = analysis.fix_parses.get(position)
    if known is None:
        known = analysis.fix_parses[position] = fix_parses(analysis.index, internal)
    return known


async def _quick_fix(
    session: Session, doc: Document, analysis: Analysis | None, d: types.Diagnostic
) -> types.CodeAction | None:
    if analysis is None:
        return None
    located = diagnostics.find(analysis, _data(d), str(d.code or ""), d.range, session.encoding)
    if located is None:
        return None
    position, internal = located
    fix = internal.fix
    if fix is None or not fix.edits or not _fix_parses(analysis, position, internal):
        return None
    action = types.CodeAction(
        title=fix.title,
        kind=ActionKind.QUICKFIX.value,
        diagnostics=[d],
        is_preferred=fix.applicability is Applicability.SAFE,
    )
    features = session.features
    if features.code_action_resolve:
        action.data = {
            "action": ActionKind.QUICKFIX.value,
            "uri": doc.uri,
            "version": analysis.version,
            "index": position,
        }
        return action
    if features.apply_edit:
        action.command = types.Command(title=fix.title, command=APPLY_FIX_COMMAND, arguments=[doc.uri, analysis.version, position])
        return action
    action.edit = await quick_fix_edit(session, doc, analysis, position)
    return action if action.edit is not None else None


async def quick_fix_edit(session: Session, doc: Document, analysis: Analysis, position: int) -> types.WorkspaceEdit | None:
    """The edit of the fix of diagnostic ``position`` of ``analysis``, computed off the event
    loop, once."""
    if position not in analysis.quick_fix_edits:
        loop = asyncio.get_running_loop()
        fix = analysis.result.diagnostics[position].fix
        index = analysis.index  # on the loop: the worker only reads it
        snap = session.snapshot(doc, analysis.text, analysis.version, index)
        edit = await loop.run_in_executor(schedule.ACTIONS, _quick_fix_edit, snap, fix)
        analysis.quick_fix_edits[position] = edit
    return analysis.quick_fix_edits[position]


def _quick_fix_edit(snap: Snapshot, fix: Fix | None) -> types.WorkspaceEdit | None:
    """``fix`` (of a diagnostic of the analysed text ``snap.text``), plus the removal of
    imports it leaves unused, as minimal edits on that text, and on each other file it
    edits (worker thread)."""
    if fix is None:
        return None
    others = _other_files(snap)
    new = apply_fix(snap.text, fix, others)
    if new is None:
        log.warning("%s: fix %r withheld: the result would not parse, or its edits of other files are stale", snap.uri, fix.title)
        return None
    return edits.snapshot_edit(snap, new, others)


def _other_files(snap: Snapshot) -> OtherFiles:
    """Other files as the editor has them: the open buffer, else the disk."""
    opened = {str(Path(p).resolve()): found for p, found in snap.open_texts.items()}
    return OtherFiles(lambda path: opened[path][1] if path in opened else read_or_none(path))


def _suppressions(
    session: Session, doc: Document, analysis: Analysis | None, ours: list[types.Diagnostic]
) -> list[types.CodeAction]:
    actions = []
    seen: set[tuple[str, int]] = set()
    for d in ours:
        code = str(d.code or "")
        line = d.range.start.line  # the same in every encoding
        if not code or code == SYNTAX_ERROR or (code, line) in seen:
            continue
        seen.add((code, line))
        edit = _suppression_in_statement(session, doc, analysis, d, line, code)
        if edit is None:
            edit = suppression_edit(doc.text, line, code, doc.index)
        if edit is None:
            continue
        text_edit = edits.text_edit(edit, doc.index, session.encoding)
        actions.append(
            types.CodeAction(
                title=suppression_title(code),
                kind=ActionKind.QUICKFIX.value,
                diagnostics=[d],
                edit=edits.document_edit(doc.uri, doc.version, [text_edit], session.features.document_changes),
            )
        )
    return actions


def _project_ignores(session: Session, doc: Document, ours: list[types.Diagnostic]) -> list[types.CodeAction]:
    """"Disable FLYnnn in this project": the code added to ``ignore`` of ``[tool.flydsl-ls]``
    in the project's pyproject.toml (actions/project_ignore.py), once per code."""
    codes = list(dict.fromkeys(str(d.code) for d in ours if d.code and d.code != SYNTAX_ERROR))
    if not codes or doc.path is None:
        return []
    target = _project_file(session, doc)
    if target is None:
        return []
    try:
        text = target.read_text(encoding="utf-8") if target.exists() else None
    except (OSError, UnicodeDecodeError):
        return []
    if text is None and not session.features.create_files:
        return []
    features = session.features
    actions = []
    for code in codes:
        new = project_ignore.disable(text or "", code)
        if new is None:
            continue
        uri = target.as_uri()
        if text is None:  # a new pyproject.toml
            edit = edits.new_file_edit(uri, new)
        else:
            edit = edits.minimal_edit(uri, None, text, new, features.encoding, features.document_changes)
        actions.append(
            types.CodeAction(
                title=project_ignore.title(code),
                kind=ActionKind.QUICKFIX.value,
                diagnostics=[d for d in ours if d.code == code],
                edit=edit,
            )
        )
    return actions


def _project_file(session: Session, doc: Document) -> Path | None:
    """The pyproject.toml whose ``[tool.flydsl-ls]`` the document's settings come from; else
    the nearest one in the workspace; else a new one at the workspace root."""
    settings = session.settings_for(doc)
    if settings.root is not None:
        return settings.root / "pyproject.toml"
    root = session.root
    folder = doc.path.parent
    while True:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
        if folder == root or folder.parent == folder or (root is not None and root not in folder.parents):
            break
        folder = folder.parent
    return root / "pyproject.toml" if root is not None else None


def _suppression_in_statement(
    session: Session, doc: Document, analysis: Analysis | None, d: types.Diagnostic, line: int, code: str
) -> Edit | None:
    """``suppression_edit`` checked on the diagnostic's statement instead of the whole file
    (which it re-parses and tokenizes twice: seconds on a 6,000-line kernel). The comment
    suppresses, and so cannot change the parse, when it tokenizes as a comment on that line,
    which the statement's own lines decide: a statement starts outside any string. None
    when this cannot be told (the caller then checks on the whole file)."""
    if analysis is None or analysis.text != doc.text:
        return None
    found = diagnostics.find(analysis, _data(d), code, d.range, session.encoding)
    statement = found[1].statement if found is not None else None
    if statement is not None and statement.start.line <= line <= statement.end.line:
        first, last = statement.start.line, statement.end.line
    else:  # no statement recorded: the top-level statement holding the line
        lines = _top_level_statement(analysis, doc, line)
        if lines is None:
            return None
        first, last = lines
    window = "".join(analysis.index.lines[first : last + 1])
    edit = suppression_edit(window, line - first, code)
    if edit is None:
        return None
    start, end = edit.range.start, edit.range.end
    return Edit(
        Range(Position(start.line + first, start.column), Position(end.line + first, end.column)),
        edit.content,
    )


def _top_level_statement(analysis: Analysis, doc: Document, line: int) -> tuple[int, int] | None:
    """First and last 0-based lines of the top-level statement holding ``line`` (decorators
    included), from the analysis's model, or from the incremental analyzer's statements when
    it analysed this text (the lines after the statement included: blank or comments; no
    model built, 100 ms in a large builder)."""
    model = analysis.result.model
    if model is None:
        found = doc.incremental.statement_at(line, analysis.text)
        return (found[0], found[1]) if found is not None else None
    for node in model.tree.body:
        first = min([node.lineno, *(dec.lineno for dec in getattr(node, "decorator_list", ()))]) - 1
        if first <= line <= (node.end_lineno or node.lineno) - 1:
            return first, (node.end_lineno or node.lineno) - 1
    return None


def _has_safe_fix(analysis: Analysis | None) -> bool:
    if analysis is None:  # not linted yet: offer it, resolve finds out
        return True
    return any(
        d.fix is not None and d.fix.applicability is Applicability.SAFE
        for d in analysis.result.diagnostics
    )


async def fix_all_edit(session: Session, doc: Document, analysis: Analysis | None) -> types.WorkspaceEdit | None:
    """The fix-all edit of the current version, computed off the event loop, once."""
    if analysis is not None and "edit" in analysis.fix_all_edits:
        return analysis.fix_all_edits["edit"]
    snap = session.snapshot(doc)
    loop = asyncio.get_running_loop()
    edit = await loop.run_in_executor(schedule.ACTIONS, _fix_all_edit, snap)
    if analysis is not None and analysis.version == snap.version:
        analysis.fix_all_edits["edit"] = edit
    return edit


def _fix_all_edit(snap: Snapshot) -> types.WorkspaceEdit | None:
    """All safe fixes applied to the snapshot's text, as a few minimal edits (worker thread)."""
    others = _other_files(snap)
    outcome = fix_all(
        snap.text,
        lambda source: check_source(source, snap.path, snap.settings, snap.project, keep_model=False).diagnostics,
        others=others,
    )
    for rejected in outcome.rejected:
        log.warning("fix-all: dropped %s (the result did not parse)", rejected)
    return edits.snapshot_edit(snap, outcome.text, others)


async def analysis_of(session: Session, uri: Any, version: Any) -> tuple[Document, Analysis]:
    """The document and its current analysis, if it is still at ``version``."""
    doc = session.get(str(uri))
    if doc is None or doc.version != version:
        raise JsonRpcContentModified(STALE)
    analysis = await diagnostics.analyse(session, doc)
    if analysis is None or analysis.version != version or doc.version != version:
        raise JsonRpcContentModified(STALE)
    session.touch(doc)
    return doc, analysis


async def resolve(session: Session, client: Client, action: types.CodeAction) -> types.CodeAction:
    """The edit of a quick fix or of fix-all, computed only when the user picks it."""
    data: Any = action.data if isinstance(action.data, dict) else {}
    kind = data.get("action")
    if kind == ActionKind.ADD_EXAMPLE.value and action.edit is None:
        doc = session.get(str(data.get("uri")))
        if doc is None or doc.version != data.get("version"):
            raise JsonRpcContentModified(STALE)
        added = await add_example_edit(session, doc, str(data.get("name")))
        if doc.version != data.get("version"):
            raise JsonRpcContentModified(STALE)
        if added is not None:
            action.edit = added.edit
            if session.features.show_document:  # run by the client once the edit is in
                action.command = types.Command(
                    title=action.title, command=SHOW_EXAMPLE_COMMAND, arguments=[doc.uri, added.example]
                )
        return action
    if kind not in (ActionKind.QUICKFIX.value, ActionKind.FIX_ALL.value) or action.edit is not None:
        return action
    doc, analysis = await analysis_of(session, data.get("uri"), data.get("version"))
    version = analysis.version
    if kind == ActionKind.FIX_ALL.value:
        edit = await fix_all_edit(session, doc, analysis)
    else:
        position = data.get("index")
        if not isinstance(position, int) or not 0 <= position < len(analysis.result.diagnostics):
            raise JsonRpcContentModified(STALE)
        edit = await quick_fix_edit(session, doc, analysis, position)
    if doc.version != version:
        raise JsonRpcContentModified(STALE)
    action.edit = edit or edits.document_edit(doc.uri, version, [], session.features.document_changes)
    return action

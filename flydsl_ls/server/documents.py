"""textDocument/didOpen, didChange, didSave, didClose: keep the text, schedule the lint."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from flydsl_ls.server import diagnostics, hover
from flydsl_ls.server.client import Client
from flydsl_ls.server.session import Document, Session
from flydsl_ls.server.workspace import is_settings_file, settings_changed


def did_open(session: Session, client: Client, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    doc = session.open(item.uri, item.text, item.version)
    diagnostics.schedule_lint(session, client, doc, 0)
    if not session.docs_warm and "flydsl" in item.text:
        session.docs_warm = True
        warm_up_when_idle(session, doc)


def warm_up_when_idle(session: Session, doc: Document) -> None:
    """Load hover's API docs (tens of ms in a thread, sharing the interpreter with the
    lint) at the first check, every ``WARM_UP_DELAY``, that finds no lint pending: not
    during the first lint of a long file, and before the first hover, which had to wait
    for them when only a pause of the edits started the load (~50 ms of its 158 ms on
    aiter's 5,718-line file). A hover that needs them first cancels it (hover.py)."""
    if session.warm_up_timer is not None:
        session.warm_up_timer.cancel()

    def start() -> None:
        if any(doc.pending is not None and not doc.pending.done() for doc in session.documents.values()):
            warm_up_when_idle(session, doc)
            return
        session.warm_up_timer = None
        hover.warm_up(session, doc)

    session.warm_up_timer = asyncio.get_running_loop().call_later(hover.WARM_UP_DELAY, start)


def did_change(session: Session, client: Client, params: types.DidChangeTextDocumentParams) -> None:
    doc = session.get(params.text_document.uri)
    if doc is None:
        return
    for change in params.content_changes:
        doc.apply_change(change, session.encoding)
    doc.version = params.text_document.version
    diagnostics.schedule_lint(session, client, doc, session.editor.delay)


def did_save(session: Session, client: Client, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if is_settings_file(uri):
        settings_changed(session, client)
        return
    doc = session.get(uri)
    if doc is None:
        return
    if doc.path is not None:
        session.project.forget(doc.path)  # its siblings read it from disk
    doc.too_slow = False  # saved: worth one more try
    if params.text is not None and params.text != doc.text:
        doc.update(params.text, doc.version)
        doc.analysis = doc.early = None
        doc.published = doc.linted = None  # the same version number, another text
    diagnostics.schedule_lint(session, client, doc, 0)


def did_close(session: Session, client: Client, params: types.DidCloseTextDocumentParams) -> None:
    if session.close(params.text_document.uri) is not None:  # its inlay hints' model released too
        diagnostics.clear(session, client, params.text_document.uri)

"""textDocument/didOpen, didChange, didSave, didClose: keep the text, schedule the lint."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from lsprotocol import types

from flydsl_ls.server import diagnostics, hover, inlay_hints
from flydsl_ls.server.workspace import is_settings_file, settings_changed

if TYPE_CHECKING:
    from flydsl_ls.server.app import FlyServer


def did_open(server: FlyServer, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    doc = server.session.open(item.uri, item.text, item.version)
    diagnostics.schedule(server, doc, 0)
    if not server.docs_warm and "flydsl" in item.text:
        server.docs_warm = True
        warm_up_when_idle(server, doc)


def warm_up_when_idle(server: FlyServer, doc) -> None:
    """Load hover's API docs (tens of ms in a thread, sharing the interpreter with the
    lint) once the edits pause and no lint is pending: neither the first lint of a long
    file nor typing right after opening it is slowed. A hover that needs them first
    cancels it (hover.py)."""
    if server.warm_up_timer is not None:
        server.warm_up_timer.cancel()

    def start() -> None:
        if any(doc.pending is not None and not doc.pending.done() for doc in server.session.documents.values()):
            warm_up_when_idle(server, doc)
            return
        server.warm_up_timer = None
        hover.warm_up(server, doc)

    server.warm_up_timer = asyncio.get_running_loop().call_later(hover.WARM_UP_DELAY, start)


def did_change(server: FlyServer, params: types.DidChangeTextDocumentParams) -> None:
    doc = server.session.get(params.text_document.uri)
    if doc is None:
        return
    for change in params.content_changes:
        doc.apply_change(change, server.session.encoding)
    doc.version = params.text_document.version
    diagnostics.schedule(server, doc, server.session.editor.delay)
    if server.warm_up_timer is not None:
        warm_up_when_idle(server, doc)


def did_save(server: FlyServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if is_settings_file(uri):
        settings_changed(server)
        return
    doc = server.session.get(uri)
    if doc is None:
        return
    if doc.path is not None:
        server.session.project.forget(doc.path)  # its siblings read it from disk
    doc.too_slow = False  # saved: worth one more try
    if params.text is not None and params.text != doc.text:
        doc.update(params.text, doc.version)
        doc.analysis = None
        doc.published = doc.linted = None  # the same version number, another text
    diagnostics.schedule(server, doc, 0)


def did_close(server: FlyServer, params: types.DidCloseTextDocumentParams) -> None:
    if server.session.close(params.text_document.uri) is not None:
        diagnostics.clear(server, params.text_document.uri)
        inlay_hints.forget(params.text_document.uri)

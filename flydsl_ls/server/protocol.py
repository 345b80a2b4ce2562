"""pygls protocol adjustments: our position-encoding choice, and one document store.

- Encoding: UTF-8 whenever the client offers it (no conversion for ASCII-heavy Python),
  else UTF-16 (the LSP default), whatever order the client listed them in.
- Documents: the session owns the text of open documents and applies changes through
  ``LineIndex`` (the one place positions are converted); pygls's own copy is not kept.
- Pre-serialized payloads: a notification's params or a request's result given as
  :class:`RawJSON` is written as it is. pygls would otherwise walk every attrs object with
  cattrs and ``json.dumps`` the lot on the event loop: ~330 ms for the 4,096 diagnostics of
  a 6,000-line kernel, where joining their cached JSON takes a few milliseconds.
- In-flight bookkeeping: an entry of ``_request_futures`` goes when its handler is done.
  pygls (2.1) files every handler it runs there, but only a request's answer takes its
  entry out: each notification (a didChange is one per keystroke) and each step of a
  generator handler left a finished future behind, ~1.8 KB a time, for good.
- ``$/cancelRequest`` for a request already answered (VS Code cancels a hover, a code
  action or a pull when the cursor moves on, often after the answer left) is nothing to
  report: pygls warned "Cancel notification for unknown message id" each time, and the
  warnings filled the log. Logged at debug instead.
- A token (remote TCP only, ``tcp.py``): until ``initialize`` carries it, every other
  message is refused, and a wrong token closes the connection.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from dataclasses import dataclass
from typing import Any

import attrs
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest
from pygls.protocol.language_server import lsp_method

from flydsl_ls.server.tcp import token_matches

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RawJSON:
    """A JSON value already serialized (ASCII, as ``json.dumps`` writes by default)."""

    text: str


def negotiated_encodings(caps: types.ClientCapabilities) -> list[str]:
    general = caps.general
    offered = (general.position_encodings if general else None) or []
    if types.PositionEncodingKind.Utf8 in offered:
        return [types.PositionEncodingKind.Utf8]
    return [types.PositionEncodingKind.Utf16]


# JSON-RPC "server not initialized": what a client without the token gets.
NOT_INITIALIZED = -32002


class FlyProtocol(LanguageServerProtocol):
    required_token: str | None = None  # set by tcp.serve for remote listening
    authenticated = True

    def handle_message(self, message):
        if self.authenticated:
            return super().handle_message(message)
        method = getattr(message, "method", None)
        if method == types.INITIALIZE:
            if token_matches(self.required_token or "", getattr(message.params, "initialization_options", None)):
                self.authenticated = True
                return super().handle_message(message)
            log.warning("a client without the right token was refused")
            self._refuse(message, "flydsl-ls: wrong or missing initializationOptions.token")
            self._close()
            return None
        if method == types.EXIT:
            return super().handle_message(message)
        self._refuse(message, "flydsl-ls: initialize with the token first")
        return None

    def _refuse(self, message, why: str) -> None:
        if isinstance(message, RPCRequest):
            super()._send_response(message.id, None, types.ResponseError(code=NOT_INITIALIZED, message=why))

    def _close(self) -> None:
        writer = getattr(self, "writer", None)
        close = getattr(writer, "close", None)
        if close is not None:
            close()

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        caps = params.capabilities
        general = caps.general or types.GeneralClientCapabilities()
        general = attrs.evolve(general, position_encodings=negotiated_encodings(caps))
        params = attrs.evolve(params, capabilities=attrs.evolve(caps, general=general))
        return (yield from super().lsp_initialize(params))

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        def done(future):
            # Only our own entry: a request id may be reused once its answer is sent. Not a
            # cancelled one: pygls cancels pending handlers at shutdown while iterating
            # this dict, and a concurrent future's callbacks run inside cancel().
            if not future.cancelled() and self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def _handle_cancel_notification(self, msg_id):
        if msg_id not in self._request_futures:
            log.debug("$/cancelRequest for %s: already answered", msg_id)
            return
        super()._handle_cancel_notification(msg_id)

    def _user(self, method: str, params):
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        yield from self._user(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        yield from self._user(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        yield from self._user(types.TEXT_DOCUMENT_DID_CLOSE, params)

    # --- pre-serialized payloads -------------------------------------------------------------
    def notify(self, method: str, params: Any | None = None):
        if isinstance(params, RawJSON):
            self._write_raw(f'{{"jsonrpc":"2.0","method":{json.dumps(method)},"params":{params.text}}}')
            return
        super().notify(method, params)

    def _send_response(self, msg_id, result=None, error=None):
        if error is None and isinstance(result, RawJSON):
            self._result_types.pop(msg_id, None)
            self._write_raw(f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"result":{result.text}}}')
            return
        super()._send_response(msg_id, result, error)

    def _write_raw(self, body: str) -> None:
        """What pygls's ``_send_data`` does after ``json.dumps``: header, encode, write."""
        if self.writer is None:
            log.error("unable to send data: no transport")
            return
        data = body.encode(self.CHARSET)
        if self._include_headers:
            header = (
                f"Content-Length: {len(data)}\r\n"
                f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            data = header.encode(self.CHARSET) + data
        try:
            written = self.writer.write(data)
            if inspect.isawaitable(written):
                asyncio.ensure_future(written)
        except BrokenPipeError:
            log.error("the client closed the connection")
            raise

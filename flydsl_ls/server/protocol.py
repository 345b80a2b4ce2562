"""pygls protocol adjustments: our position-encoding choice, and one document store.

- Encoding: UTF-8 whenever the client offers it (no conversion for ASCII-heavy Python),
  else UTF-16 (the LSP default), whatever order the client listed them in.
- Documents: the session owns the text of open documents and applies changes through
  ``LineIndex`` (the one place positions are converted); pygls's own copy is not kept.
"""

from __future__ import annotations

import attrs
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method


def negotiated_encodings(caps: types.ClientCapabilities) -> list[str]:
    general = caps.general
    offered = (general.position_encodings if general else None) or []
    if types.PositionEncodingKind.Utf8 in offered:
        return [types.PositionEncodingKind.Utf8]
    return [types.PositionEncodingKind.Utf16]


class FlyProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        caps = params.capabilities
        general = caps.general or types.GeneralClientCapabilities()
        general = attrs.evolve(general, position_encodings=negotiated_encodings(caps))
        params = attrs.evolve(params, capabilities=attrs.evolve(caps, general=general))
        return (yield from super().lsp_initialize(params))

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

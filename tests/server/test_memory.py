"""What a long session must not accumulate (issue 9: a soak of 10,000 edits)."""

from __future__ import annotations

from lsprotocol import types

from flydsl_ls.server.app import create_server


def test_handled_notifications_leave_no_bookkeeping_behind():
    # pygls files every handler it runs under an id and only a request's answer took the
    # entry out: one finished future per keystroke stayed alive for good.
    protocol = create_server().protocol
    uri = "file:///not-open.py"
    messages = [
        {"method": types.TEXT_DOCUMENT_DID_CHANGE, "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "x = 1\n"}]}},
        {"method": types.TEXT_DOCUMENT_DID_CLOSE, "params": {"textDocument": {"uri": uri}}},
        {"method": types.SET_TRACE, "params": {"value": "off"}},
    ]
    for _ in range(100):
        for message in messages:
            protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))
    assert protocol._request_futures == {}

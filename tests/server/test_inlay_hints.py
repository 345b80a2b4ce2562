"""Inlay hints (textDocument/inlayHint) from the real server, as Neovim 0.11 and VS Code 1.65
ask for them: the inferred type after each assigned name, for the range asked."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from lsprotocol import types

from tests.server.helpers import FIXTURES, TIMEOUT, change_doc, diagnostics, encoding_of, lsp, open_doc

HINTS_KERNEL = (FIXTURES / "hints_kernel.py").read_text(encoding="utf-8")
LINES = HINTS_KERNEL.splitlines()
# (0-based line, the name whose end the hint follows, its label), as the fixture's comments say.
EXPECTED = [
    (15, "tid", ": Int32"),
    (16, "bid", ": Int32"),
    (17, "row", ": Int32"),
    (18, "valid", ": Boolean"),
    (20, "half", ": Float32"),
    (21, "a_buf", ": Tensor"),
    (24, "c4", ": ir.Value i32"),
    (25, "c16", ": ir.Value index"),
    (26, "one", ": ir.Value index"),
    (27, "off", ": ir.Value i32"),
    (28, "in_range", ": ir.Value i1"),
    (29, "wide", ": ArithValue i32"),
    (30, "lane", ": ir.Value index"),
    (31, "lo", ": Int32"),
    (31, "hi", ": ir.Value i32"),
]


@pytest.fixture
def hints_workspace(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    shutil.copy(FIXTURES / "hints_kernel.py", root / "hints_kernel.py")
    return root


def whole(text: str) -> types.Range:
    return types.Range(types.Position(0, 0), types.Position(len(text.splitlines()) + 1, 0))


async def hints(client, uri, rng: types.Range) -> list[types.InlayHint]:
    result = await asyncio.wait_for(
        client.text_document_inlay_hint_async(
            types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=uri), range=rng)
        ),
        TIMEOUT,
    )
    return list(result or [])


def shown(found: list[types.InlayHint]) -> list[tuple[int, int, str]]:
    return [(h.position.line, h.position.character, h.label) for h in found]


def expected(lines=None) -> list[tuple[int, int, str]]:
    return [
        (line, LINES[line].index(name + (" " if name != "lo" else ",")) + len(name), label)
        for line, name, label in EXPECTED
        if lines is None or line in lines
    ]


async def test_initialize_advertises_inlay_hints(spec, hints_workspace):
    async with lsp(spec, hints_workspace) as client:
        assert client.init_result.capabilities.inlay_hint_provider is not None


async def test_the_inferred_types_of_a_kernel(spec, hints_workspace):
    async with lsp(spec, hints_workspace) as client:
        uri = open_doc(client, hints_workspace / "hints_kernel.py")
        found = await hints(client, uri, whole(HINTS_KERNEL))
        assert shown(found) == expected()
        assert all(h.kind == types.InlayHintKind.Type for h in found)
        # the tooltip says where the type comes from, as hover does
        assert found[0].tooltip == "fx.Int32: fx.thread_idx.x (line 16)"


async def test_only_the_range_asked(spec, hints_workspace):
    async with lsp(spec, hints_workspace) as client:
        uri = open_doc(client, hints_workspace / "hints_kernel.py")
        rng = types.Range(types.Position(24, 0), types.Position(27, 0))  # the end is line 27's start
        assert shown(await hints(client, uri, rng)) == expected(lines={24, 25, 26})
        # A range ending inside a line: the hints before that column only.
        lo = LINES[31].index("lo,") + 2
        rng = types.Range(types.Position(31, 0), types.Position(31, lo + 1))
        assert shown(await hints(client, uri, rng)) == [(31, lo, ": Int32")]


async def test_columns_in_the_negotiated_encoding(spec, hints_workspace):
    text = HINTS_KERNEL.replace("    tid = fx.thread_idx.x", "    é = 0; 𝔱id = fx.thread_idx.x")
    async with lsp(spec, hints_workspace) as client:
        uri = open_doc(client, hints_workspace / "hints_kernel.py", text)
        rng = types.Range(types.Position(15, 0), types.Position(16, 0))
        (hint,) = await hints(client, uri, rng)
        before = text.splitlines()[15][: text.splitlines()[15].index(" = fx.thread_idx.x")]
        unit = "utf-8" if encoding_of(client) == "utf-8" else "utf-16-le"
        width = len(before.encode(unit)) // (1 if unit == "utf-8" else 2)
        assert (hint.position.line, hint.position.character, hint.label) == (15, width, ": Int32")


async def test_the_setting_turns_them_off(spec, hints_workspace):
    async with lsp(spec, hints_workspace, init_options={"flydsl-ls": {"inlayHints": False}}) as client:
        uri = open_doc(client, hints_workspace / "hints_kernel.py")
        assert await hints(client, uri, whole(HINTS_KERNEL)) == []


async def test_a_live_settings_change_refreshes_them(hints_workspace):
    """Neovim 0.11 supports workspace/inlayHint/refresh: asked when the setting changes only."""
    async with lsp("neovim@v0.11.0", hints_workspace) as client:
        refreshes = []

        @client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
        def refreshed(params):
            refreshes.append(params)

        uri = open_doc(client, hints_workspace / "hints_kernel.py")
        assert len(await hints(client, uri, whole(HINTS_KERNEL))) == len(EXPECTED)
        for settings, count, hinted in (
            ({"inlayHints": False}, 1, 0),
            ({"inlayHints": False, "targetArch": "gfx942"}, 1, 0),  # another setting: no refresh
            ({}, 2, len(EXPECTED)),  # back to the default: on
        ):
            changed = types.DidChangeConfigurationParams(settings={"flydsl-ls": settings})
            client.workspace_did_change_configuration(changed)
            # The server handles the notification, refresh sent, before it answers this request.
            found = await hints(client, uri, whole(HINTS_KERNEL))
            assert (len(refreshes), len(found)) == (count, hinted)


async def test_a_bad_setting_is_a_warning(spec, hints_workspace):
    async with lsp(spec, hints_workspace, init_options={"inlay-hints": "no"}) as client:
        uri = open_doc(client, hints_workspace / "hints_kernel.py")
        assert len(await hints(client, uri, whole(HINTS_KERNEL))) == len(EXPECTED)
        await asyncio.sleep(0.2)
        assert any("`inlay-hints` must be true or false" in m.message for m in client.log_messages)


async def test_half_typed_and_broken_input(spec, hints_workspace):
    async with lsp(spec, hints_workspace) as client:
        uri = open_doc(client, hints_workspace / "hints_kernel.py")
        # A half-typed statement: the other lines keep their hints, the broken one has none.
        typed = HINTS_KERNEL.replace("    c16 = arith.constant(16, index=True)", "    c16 = arith.constant(16, index=")
        change_doc(client, uri, 2, typed)
        found = await hints(client, uri, whole(typed))
        assert shown(found) == [h for h in expected() if h[0] != 25]
        # Text that is no Python at all, a deeply nested expression, an empty document.
        deep = "import flydsl.expr as fx\nx = " + "(" * 400 + "fx.thread_idx.x" + ")" * 400 + "\n"
        long_sum = "import flydsl.expr as fx\nt = fx.thread_idx.x\ny = " + " + ".join(["t"] * 3000) + "\n"
        for version, text in enumerate(("def (:\n\x00 ]]", deep, long_sum, ""), start=3):
            change_doc(client, uri, version, text)
            found = await hints(client, uri, whole(text))
            assert all(h.label.startswith(": ") for h in found)
        assert shown(found) == []
        change_doc(client, uri, 7, long_sum)
        assert [h.label for h in await hints(client, uri, whole(long_sum))] == [": Int32", ": Int32"]
        # A range past the end of the document, and a document the server does not have.
        change_doc(client, uri, 8, HINTS_KERNEL)
        far = types.Range(types.Position(900, 0), types.Position(1000, 0))
        assert await hints(client, uri, far) == []
        assert await hints(client, "file:///nowhere/else.py", far) == []


async def test_deep_files_analysed_on_several_threads_at_once(spec, hints_workspace):
    """Inlay hints (the lint's thread) and a quick fix (the actions' thread) analyse a
    4,000-term sum (a 4,000-deep tree) at once, over several versions: all answer and the
    server lives (a recursion limit raised by one thread while another recursed on a small
    stack could kill the process; deep.py)."""
    from tests.server.test_protocol import code_actions

    async with lsp(spec, hints_workspace) as client:
        uri = open_doc(client, hints_workspace / "hints_kernel.py")
        for version in range(2, 6):
            terms = " + ".join(["t"] * (4000 + version))
            text = f"import flydsl.expr as fx\nfrom flydsl.expr import arith\nt = fx.thread_idx.x\ny = arith.ArithValue(t) + {terms}\n"
            change_doc(client, uri, version, text)
            diags = [d for d in await diagnostics(client, uri, version) if d.code == "FLY101"]
            hover = client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(2, 0))
            )
            found, actions, hovered = await asyncio.gather(
                hints(client, uri, whole(text)), code_actions(client, uri, diags), hover
            )
            assert [h.label for h in found] == [": Int32", ": ArithValue"]
            assert any("FLY101" in a.title for a in actions), [a.title for a in actions]
            assert "fx.Int32" in hovered.contents.value
        change_doc(client, uri, 9, HINTS_KERNEL)
        assert shown(await hints(client, uri, whole(HINTS_KERNEL))) == expected()


async def test_a_closed_document_keeps_no_model(monkeypatch, tmp_path):
    """The model kept for the next range (~11 MB on a 5.7k-line kernel) goes when its
    document closes, not when another document next asks for hints; and one document at a
    time keeps one."""
    from flydsl_ls.server import diagnostics, documents, inlay_hints, schedule
    from flydsl_ls.server.app import create_server
    from tests.server.helpers import KERNEL

    monkeypatch.setattr(diagnostics, "schedule_lint", lambda *args: None)  # no lint: hints alone
    server = create_server()
    session, client = server.session, server.client
    everything = types.Range(types.Position(0, 0), types.Position(30, 0))
    docs = []
    for name in ("kernel.py", "other.py"):
        path = tmp_path / name
        path.write_text(KERNEL)
        documents.did_open(session, client, types.DidOpenTextDocumentParams(types.TextDocumentItem(path.as_uri(), "python", 1, KERNEL)))
        hints = await inlay_hints.inlay_hints(session, client, types.InlayHintParams(types.TextDocumentIdentifier(path.as_uri()), everything))
        assert ": Int32" in hints.text
        docs.append(session.get(path.as_uri()))
    schedule.LINT.submit(lambda: None).result(timeout=TIMEOUT)  # after the lint thread's queue
    first, second = docs
    assert first.hints.model is None and second.hints.model is not None and session.hinted is second

    documents.did_close(session, client, types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(second.uri)))
    schedule.LINT.submit(lambda: None).result(timeout=TIMEOUT)
    assert second.hints.model is None and session.hinted is None

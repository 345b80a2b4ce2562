"""Code actions for clients that do not resolve them (edits through commands, or computed
only when asked for by name), and documents whose analysis was dropped (more open files
than the server keeps analysed): they still answer code actions, hovers and pulls."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from lsprotocol import types

from flydsl_ls.actions.fixes import fix_all
from flydsl_ls.checker import check_source
from flydsl_ls.config import Settings
from flydsl_ls.server.session import KEEP_ANALYSED
from tests.server.helpers import FIXTURES, KERNEL, TIMEOUT, apply, diagnostics, encoding_of, lsp, open_doc, pull, pulls
from tests.server.test_protocol import LANE_LINE, code_actions, hover_text, resolved

EXPECTED_FIX_ALL = None


def expected_fix_all() -> str:
    global EXPECTED_FIX_ALL
    if EXPECTED_FIX_ALL is None:
        EXPECTED_FIX_ALL = fix_all(KERNEL, lambda s: check_source(s, None, Settings()).diagnostics).text
    return EXPECTED_FIX_ALL


def without_resolve(apply_edit: bool):
    def adjust(caps: types.ClientCapabilities) -> None:
        caps.text_document.code_action.resolve_support = None
        caps.workspace.apply_edit = apply_edit

    return adjust


async def execute(client, command: types.Command):
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
        ),
        TIMEOUT,
    )


def lane_diagnostic(diags):
    return [d for d in diags if d.range.start.line == LANE_LINE]


async def test_commands_carry_the_edits_for_a_client_without_resolve(spec, workspace):
    async with lsp(spec, workspace, adjust=without_resolve(apply_edit=True)) as client:
        encoding = encoding_of(client)
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        actions = await code_actions(client, uri, lane_diagnostic(diags))
        (quick,) = [a for a in actions if a.is_preferred]
        assert quick.edit is None and quick.command.command == "flydsl-ls.applyFix"
        (fix_all_action,) = [a for a in actions if a.kind == "source.fixAll.flydsl-ls"]
        assert fix_all_action.edit is None and fix_all_action.command.command == "flydsl-ls.fixAll"
        # Picking the quick fix: the server sends the edit with workspace/applyEdit.
        assert await execute(client, quick.command) == {"applied": True}
        (sent,) = client.applied_edits
        text = apply(KERNEL, sent.edit, uri, encoding)
        assert "    lane = tid % 64\n" in text and "ArithValue as _AV" not in text
        assert await execute(client, fix_all_action.command) == {"applied": True}
        assert apply(KERNEL, client.applied_edits[-1].edit, uri, encoding) == expected_fix_all()


async def test_fix_all_asked_for_by_name_comes_with_its_edit(spec, workspace):
    """As on save: the answer must hold the edit, not a command to run later."""
    async with lsp(spec, workspace, adjust=without_resolve(apply_edit=True)) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        actions = await code_actions(client, uri, [], only=["source.fixAll.flydsl-ls"], line=0)
        assert [a.kind for a in actions] == ["source.fixAll.flydsl-ls"]
        assert actions[0].command is None
        assert apply(KERNEL, actions[0].edit, uri, encoding_of(client)) == expected_fix_all()


async def test_a_client_without_resolve_nor_apply_edit_gets_edits(spec, workspace):
    async with lsp(spec, workspace, adjust=without_resolve(apply_edit=False)) as client:
        encoding = encoding_of(client)
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        actions = await code_actions(client, uri, lane_diagnostic(diags))
        (quick,) = [a for a in actions if a.is_preferred]
        assert quick.command is None
        assert "    lane = tid % 64\n" in apply(KERNEL, quick.edit, uri, encoding)
        # Fix-all re-lints the file until no fix is left: only when asked for by name.
        assert not [a for a in actions if a.kind == "source.fixAll.flydsl-ls"]
        named = await code_actions(client, uri, [], only=["source.fixAll"], line=0)
        assert apply(KERNEL, named[0].edit, uri, encoding) == expected_fix_all()
        # Asked again for the same version: the same edit.
        again = await code_actions(client, uri, lane_diagnostic(diags))
        assert [a.edit for a in again if a.is_preferred] == [quick.edit]


async def test_a_stale_command_edits_nothing(spec, workspace):
    async with lsp(spec, workspace, adjust=without_resolve(apply_edit=True)) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        actions = await code_actions(client, uri, lane_diagnostic(diags))
        (quick,) = [a for a in actions if a.is_preferred]
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="\n" + KERNEL)],
            )
        )
        with pytest.raises(Exception, match="changed"):
            await execute(client, quick.command)
        assert client.applied_edits == []


async def test_documents_beyond_the_analysed_ones_still_answer(spec, workspace):
    """More files open than the server keeps analysed: the first one's analysis is dropped
    and comes back when a request needs it."""
    paths = [workspace / "kernel.py"]
    for i in range(KEEP_ANALYSED + 2):
        paths.append(workspace / f"kernel_{i}.py")
        shutil.copy(FIXTURES / "kernel.py", paths[-1])
    async with lsp(spec, workspace) as client:
        encoding = encoding_of(client)
        first = paths[0].as_uri()
        open_doc(client, paths[0])
        first_diags = await diagnostics(client, first, 1)
        result_id = (await pull(client, first)).result_id if pulls(client) else None
        for path in paths[1:]:
            await diagnostics(client, open_doc(client, path), 1)
        if pulls(client):  # unchanged since: answered without re-linting
            report = await pull(client, first, previous=result_id)
            assert report.kind == "unchanged" and report.result_id == result_id
        # A quick fix from the diagnostics published before the analysis was dropped.
        actions = await code_actions(client, first, lane_diagnostic(first_diags))
        fix = await resolved(client, [a for a in actions if a.is_preferred][0])
        assert "    lane = tid % 64\n" in apply(KERNEL, fix.edit, first, encoding)
        # The same for hovers, on another dropped document (not asked about since it was).
        second = paths[1].as_uri()
        text = await hover_text(client, second, LANE_LINE, 12)
        assert "FLY101" in text and "arith-value-wrapper" in text
        hovered = await hover_text(client, second, LANE_LINE, KERNEL.splitlines()[LANE_LINE].index("tid") + 1)
        assert "fx.Int32" in hovered
        if pulls(client):  # a full report, identical to the first one's
            full = await pull(client, second)
            assert full.kind == "full"
            assert [(d.code, d.range, d.data) for d in full.items] == [
                (d.code, d.range, d.data) for d in first_diags
            ]

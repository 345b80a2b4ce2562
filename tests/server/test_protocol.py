"""Protocol tests: the real server over stdio, as Neovim 0.11 and VS Code 1.65 drive it."""

from __future__ import annotations

import asyncio
import re

import pytest
from lsprotocol import types

from flydsl_ls.actions.fixes import fix_all
from flydsl_ls.checker import check_source
from flydsl_ls.config import Settings
from flydsl_ls.data import RULE_PAGES
from tests.rule_pages import installed_page
from tests.server.helpers import (
    KERNEL,
    TIMEOUT,
    apply,
    change_doc,
    diagnostics,
    encoding_of,
    lsp,
    open_doc,
    published,
    pull,
    pulls,
)

LANE_LINE = 9  # 0-based: `    lane = _AV(tid) % 64`
FINITE_LINE = 14  # `    fx.printf(arith.ArithValue(v) + 0.0)`
GET_LINE = 19  # `    return fx.get(t, 0), layout`


def by_code(diags, code):
    return [d for d in diags if d.code == code]


async def code_actions(client, uri, diags, only=None, line=None):
    if line is not None:
        rng = types.Range(types.Position(line, 0), types.Position(line, 0))
    else:
        rng = diags[0].range
    result = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=rng,
                context=types.CodeActionContext(diagnostics=diags, only=only),
            )
        ),
        TIMEOUT,
    )
    return result or []


async def resolved(client, action: types.CodeAction) -> types.CodeAction:
    if action.edit is not None:
        return action
    return await asyncio.wait_for(client.code_action_resolve_async(action), TIMEOUT)


async def hover_text(client, uri, line, character) -> str | None:
    result = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line, character),
            )
        ),
        TIMEOUT,
    )
    if result is None:
        return None
    return result.contents.value


# --- initialize ---------------------------------------------------------------------------
async def test_initialize_advertises_features(spec, workspace):
    async with lsp(spec, workspace) as client:
        caps = client.init_result.capabilities
        expected = "utf-8" if spec.startswith("neovim") else "utf-16"
        assert caps.position_encoding == expected
        assert caps.hover_provider
        assert caps.diagnostic_provider is not None
        assert caps.diagnostic_provider.identifier == "flydsl-ls"
        kinds = caps.code_action_provider.code_action_kinds
        assert "quickfix" in kinds and "source.fixAll.flydsl-ls" in kinds
        assert "refactor.addCompileExample.flydsl-ls" in kinds
        assert caps.code_action_provider.resolve_provider


# --- diagnostics --------------------------------------------------------------------------
async def test_diagnostic_fields(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, version=1)
        assert sorted(d.code for d in diags) == ["FLY101", "FLY101", "FLY901"]
        safe = [d for d in diags if d.range.start.line == LANE_LINE][0]
        assert safe.code == "FLY101"
        assert safe.source == "flydsl-ls"
        assert installed_page(safe.code_description.href) == RULE_PAGES / "FLY101.md"
        assert list(safe.tags) == [types.DiagnosticTag.Deprecated]
        assert safe.severity == types.DiagnosticSeverity.Warning
        assert safe.range == types.Range(types.Position(LANE_LINE, 11), types.Position(LANE_LINE, 19))
        # Compact data: the version and the diagnostic's place in that lint, not its fix
        # (the server looks the fix up in its analysis of that version).
        assert safe.data == {"version": 1, "index": diags.index(safe)}
        assert all(set(d.data) == {"version", "index"} for d in diags)
        assert sorted(d.data["index"] for d in diags) == [0, 1, 2]


@pytest.mark.parametrize("pull_mode", [True, False])
async def test_push_only_when_the_client_does_not_pull(spec, workspace, pull_mode):
    async with lsp(spec, workspace, pull=None if pull_mode else False) as client:
        uri = open_doc(client, workspace / "kernel.py")
        if pulls(client):
            report = await pull(client, uri)
            assert len(report.items) == 3
            await asyncio.sleep(0.5)
            assert client.published == []  # no duplicate push (Neovim shows both)
        else:
            diags = await published(client, uri, 1)
            assert len(diags) == 3


async def test_pull_result_ids_and_unchanged(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        first = await pull(client, uri)
        assert first.kind == "full" and first.result_id
        again = await pull(client, uri, previous=first.result_id)
        assert again.kind == "unchanged"
        assert again.result_id == first.result_id
        change_doc(client, uri, 2, KERNEL.replace("_AV(tid)", "tid"))
        changed = await pull(client, uri, previous=first.result_id)
        assert changed.kind == "full"
        assert changed.result_id != first.result_id
        assert sorted(d.code for d in changed.items) == ["FLY101", "FLY901"]


async def test_rapid_changes_publish_only_the_latest_version(spec, workspace):
    async with lsp(spec, workspace, pull=False) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await published(client, uri, 1)
        text = KERNEL
        for version in range(2, 22):
            text = text.replace("\n\n\ndef finite", "\n\n\ndef finite", 1) + f"# edit {version}\n"
            change_doc(client, uri, version, text)
        final = await published(client, uri, 21)
        assert len(final) == 3
        await asyncio.sleep(0.4)
        versions = [p.version for p in client.published if p.uri == uri]
        assert versions == sorted(versions)  # never an older version after a newer one
        assert versions[-1] == 21
        assert len(versions) < 10  # debounced, not one lint per keystroke


async def test_save_and_close(spec, workspace):
    async with lsp(spec, workspace, pull=False) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await published(client, uri, 1)
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        for _ in range(100):
            if list(client.published[-1].diagnostics) == []:
                break
            await asyncio.sleep(0.05)
        assert client.published[-1].uri == uri and list(client.published[-1].diagnostics) == []


# --- code actions -------------------------------------------------------------------------
async def test_quick_fix_is_preferred_and_applies(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        safe = [d for d in diags if d.range.start.line == LANE_LINE]
        actions = await code_actions(client, uri, safe)
        fixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.is_preferred]
        assert [a.title for a in fixes] == ["Remove the ArithValue wrapper"]
        assert fixes[0].diagnostics[0].code == "FLY101"
        action = await resolved(client, fixes[0])
        text = apply(KERNEL, action.edit, uri, encoding_of(client))
        assert "    lane = tid % 64\n" in text
        # The import the fix left unused goes too, as with `flydsl-ls check --fix`.
        assert "ArithValue as _AV" not in text
        if action.edit.document_changes:
            assert action.edit.document_changes[0].text_document.version == 1


async def test_unsafe_quick_fix_is_titled_and_not_preferred(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        unsafe = [d for d in diags if d.range.start.line == FINITE_LINE]
        actions = await code_actions(client, uri, unsafe, only=[types.CodeActionKind.QuickFix])
        fixes = [a for a in actions if not a.title.startswith(("Ignore", "Disable"))]
        assert [a.title for a in fixes] == ["Remove the ArithValue wrapper (unsafe)"]
        assert not fixes[0].is_preferred
        action = await resolved(client, fixes[0])
        text = apply(KERNEL, action.edit, uri, encoding_of(client))
        assert "    fx.printf(v + 0.0)\n" in text


async def test_fix_all(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        actions = await code_actions(client, uri, [], only=[types.CodeActionKind.SourceFixAll], line=0)
        assert [a.kind for a in actions] == ["source.fixAll.flydsl-ls"]
        action = await resolved(client, actions[0])
        edit = action.edit
        text = apply(KERNEL, edit, uri, encoding_of(client))
        expected = fix_all(KERNEL, lambda s: check_source(s, None, Settings()).diagnostics).text
        assert text == expected
        edits = edit.document_changes[0].edits if edit.document_changes else edit.changes[uri]
        assert all(e.range.end.line - e.range.start.line <= 1 for e in edits)  # minimal, not whole-document
        # Only safe fixes: the unsafe one stays.
        assert "arith.ArithValue(v)" in text


async def test_no_fix_all_when_nothing_is_safe(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py", text=KERNEL.replace("_AV(tid)", "tid"))
        await diagnostics(client, uri, 1)
        actions = await code_actions(client, uri, [], only=["source.fixAll"], line=0)
        assert actions == []


async def test_suppression_action(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        safe = [d for d in diags if d.range.start.line == LANE_LINE]
        actions = await code_actions(client, uri, safe)
        ignore = [a for a in actions if a.title == "Ignore FLY101 for this line"]
        assert len(ignore) == 1 and ignore[0].kind == types.CodeActionKind.QuickFix
        text = apply(KERNEL, ignore[0].edit, uri, encoding_of(client))
        assert "    lane = _AV(tid) % 64  # flydsl: ignore[FLY101]\n" in text
        change_doc(client, uri, 2, text)
        after = await diagnostics(client, uri, 2)
        assert [d.range.start.line for d in by_code(after, "FLY101")] == [FINITE_LINE]


async def test_suppression_extends_an_existing_comment(spec, workspace):
    text = KERNEL.replace("    lane = _AV(tid) % 64\n", "    lane = fx.get(_AV(tid), 0)  # flydsl: ignore[FLY901]\n")
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py", text=text)
        diags = await diagnostics(client, uri, 1)
        on_line = [d for d in diags if d.range.start.line == LANE_LINE]
        assert [d.code for d in on_line] == ["FLY101"]
        actions = await code_actions(client, uri, on_line)
        ignore = [a for a in actions if a.title == "Ignore FLY101 for this line"][0]
        fixed = apply(text, ignore.edit, uri, encoding_of(client))
        assert "# flydsl: ignore[FLY101, FLY901]\n" in fixed
        assert fixed.count("flydsl: ignore") == 1


async def test_stale_diagnostics_get_no_quick_fix(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        change_doc(client, uri, 2, "\n" + KERNEL)
        actions = await code_actions(client, uri, diags, only=[types.CodeActionKind.QuickFix])
        assert actions == []


# --- hover --------------------------------------------------------------------------------
async def test_hover_on_a_legacy_api_through_an_alias(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        text = await hover_text(client, uri, LANE_LINE, 12)  # on `_AV`
        assert "FLY101" in text and "arith-value-wrapper" in text
        link = re.search(r"\[FLY101 documentation\]\((\S+)\)", text)
        assert link and installed_page(link.group(1)) == RULE_PAGES / "FLY101.md", text
        assert "# before" in text and "# after" in text
        # On the import alias itself, where no diagnostic is: the same rule.
        alias = await hover_text(client, uri, 4, KERNEL.splitlines()[4].index("_AV") + 1)
        assert "FLY101" in alias
        # FLY901's table: fx.get, its replacement and removal release.
        get = await hover_text(client, uri, GET_LINE, KERNEL.splitlines()[GET_LINE].index("get") + 1)
        assert "FLY901" in get and "fx.get_(...).unpack()" in get and "0.4" in get
        assert "maximumf" not in get  # the rule's one example is about another API


async def test_hover_shows_the_inferred_type(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        line = KERNEL.splitlines()[LANE_LINE]
        text = await hover_text(client, uri, LANE_LINE, line.index("tid") + 1)
        assert "fx.Int32" in text
        assert "fx.thread_idx.x" in text and "line 9" in text
        # where it is assigned, too
        assigned = await hover_text(client, uri, LANE_LINE - 1, KERNEL.splitlines()[LANE_LINE - 1].index("tid") + 1)
        assert "fx.Int32" in assigned and "fx.thread_idx.x" in assigned


async def test_hover_shows_flydsl_docs_for_the_project_release(spec, workspace):
    """From the table built ahead of time (no FlyDSL import, no jedi): the signature and
    docstring of the release the project pins, on the first hover after opening."""
    (workspace / "requirements.txt").write_text("flydsl==0.3.1\n")
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        line = KERNEL.splitlines()[18]
        text = await hover_text(client, uri, 18, line.index("make_layout") + 2)
        assert "def make_layout(shape, stride)" in text
        assert "flydsl.expr" in text and "FlyDSL 0.3.1" in text


# --- logging ------------------------------------------------------------------------------
async def test_logs_go_to_the_client_not_to_stderr(spec, workspace, capfd):
    """The server's log lines reach the client as window/logMessage with their type; stderr,
    which Neovim logs at ERROR whatever it says, stays empty in normal operation."""
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        assert "FLY101" in await hover_text(client, uri, LANE_LINE, 12)
        await asyncio.sleep(0.2)
        started = [m for m in client.log_messages if "positions" in m.message]
        assert [m.type for m in started] == [types.MessageType.Info], client.log_messages
    assert "flydsl" not in capfd.readouterr().err


# --- settings -----------------------------------------------------------------------------
async def test_initialization_options(spec, workspace):
    options = {"ignore": ["FLY101"], "targetArch": "gfx942", "flydsl-version": "0.5.0", "bogusKey": 1}
    async with lsp(spec, workspace, init_options=options) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        assert [d.code for d in diags] == ["FLY901"]
        # flydsl-version 0.5.0 is past fx.get's declared removal, and still has it: the
        # message says so, and it stays a warning.
        assert "0.5.0 still has it" in diags[0].message
        assert diags[0].severity == types.DiagnosticSeverity.Warning
        await asyncio.sleep(0.2)
        assert any("bogusKey" in m.message for m in client.log_messages)


async def test_did_change_configuration(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        assert len(await diagnostics(client, uri, 1)) == 3
        count = len(client.published)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"flydsl-ls": {"select": ["FLY9"], "what": True}})
        )
        if pulls(client):
            await asyncio.sleep(0.3)
            diags = (await pull(client, uri)).items
        else:
            for _ in range(200):
                if len(client.published) > count:
                    break
                await asyncio.sleep(0.02)
            diags = client.published[-1].diagnostics
        assert [d.code for d in diags] == ["FLY901"]
        await asyncio.sleep(0.2)
        assert any("`what`" in m.message for m in client.log_messages)


async def test_pyproject_settings_then_editor_settings(spec, workspace):
    (workspace / "pyproject.toml").write_text('[tool.flydsl-ls]\nignore = ["FLY901"]\n')
    async with lsp(spec, workspace, init_options={"flydsl-ls": {"targetArch": "gfx950"}}) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        assert sorted(d.code for d in diags) == ["FLY101", "FLY101"]
    async with lsp(spec, workspace, init_options={"ignore": ["FLY101"]}) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        # The editor's ignore replaces pyproject's, as `flydsl-ls check --ignore` does.
        assert [d.code for d in diags] == ["FLY901"]


async def _shown(client, *needles: str) -> list[str]:
    """The window/showMessage texts, once one holding every needle has arrived."""
    for _ in range(100):
        texts = [m.message for m in client.messages]
        if any(all(n in t for n in needles) for t in texts):
            break
        await asyncio.sleep(0.05)
    return texts


async def test_bad_pyproject_settings_are_shown_and_defaults_used(spec, workspace):
    """A pyproject.toml the CLI rejects (exit 2) does not stop the server: it says why in a
    window/showMessage and checks with the defaults."""
    (workspace / "pyproject.toml").write_text('[tool.flydsl-ls]\nselect = "FLY901"\ntarget-arch = "gfx999"\n')
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        assert sorted(d.code for d in diags) == ["FLY101", "FLY101", "FLY901"]  # every rule: the defaults
        texts = await _shown(client, "`select` must be a list of strings", "using defaults")
        assert any("pyproject.toml" in t and "`select` must be a list of strings" in t for t in texts), texts


async def test_bad_editor_settings_are_shown_and_ignored(spec, workspace):
    options = {"targetArch": "gfx999", "flydslVersion": "banana", "select": ["FLY9"]}
    async with lsp(spec, workspace, init_options=options) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        assert [d.code for d in diags] == ["FLY901"]  # the good setting still applies
        texts = await _shown(client, "gfx999")
        assert any("unknown GPU arch `gfx999`" in t and "gfx942" in t for t in texts), texts
        texts = await _shown(client, "banana")
        assert any("`banana` is not a FlyDSL release number" in t and "0.5.0" in t for t in texts), texts


# --- positions ------------------------------------------------------------------------------
async def test_columns_on_a_line_with_non_ascii_text(spec, workspace):
    prefix = '    s = "é😀"; lane = '
    text = KERNEL.replace("    lane = _AV(tid) % 64\n", prefix + "_AV(tid) % 64\n")
    async with lsp(spec, workspace) as client:
        encoding = encoding_of(client)
        uri = open_doc(client, workspace / "kernel.py", text=text)
        diags = await diagnostics(client, uri, 1)
        d = [d for d in diags if d.range.start.line == LANE_LINE][0]
        width = {"utf-8": len(prefix.encode("utf-8")), "utf-16": len(prefix.encode("utf-16-le")) // 2}[encoding]
        assert d.range.start.character == width
        assert d.range.end.character == width + len("_AV(tid)")
        assert width != len(prefix)  # the line really tests the conversion
        actions = await code_actions(client, uri, [d])
        fix = await resolved(client, [a for a in actions if a.is_preferred][0])
        assert prefix + "tid % 64\n" in apply(text, fix.edit, uri, encoding)
        # Hover positions come in the same units.
        hovered = await hover_text(client, uri, LANE_LINE, width + 1)
        assert "FLY101" in hovered
        # An incremental change on that line, in the negotiated units.
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            types.Position(LANE_LINE, width), types.Position(LANE_LINE, width + 8)
                        ),
                        text="tid",
                    )
                ],
            )
        )
        after = await diagnostics(client, uri, 2)
        assert [d.range.start.line for d in after if d.code == "FLY101"] == [FINITE_LINE]


# --- robustness -----------------------------------------------------------------------------
async def test_syntax_error_while_typing(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        broken = KERNEL.replace("def finite(v):", "def finite(v:")
        change_doc(client, uri, 2, broken)
        diags = await diagnostics(client, uri, 2)
        # The other functions' findings stay while `finite`'s header is half typed.
        assert sorted(d.code for d in diags) == ["FLY000", "FLY101", "FLY101", "FLY901"]
        (error,) = by_code(diags, "FLY000")
        assert (error.range.start.line, error.range.start.character) == (13, len("def finite"))  # its unclosed `(`
        assert error.severity == types.DiagnosticSeverity.Error
        actions = await code_actions(client, uri, by_code(diags, "FLY101")[:1])
        # no fix on a broken file: the suppressions only (the project one where the client can
        # create the missing pyproject.toml)
        titles = [a.title for a in actions]
        assert titles[0] == "Ignore FLY101 for this line"
        assert titles[1:] in ([], ["Disable FLY101 in this project (pyproject.toml)"])
        lines = broken.splitlines()
        for d in diags:
            assert d.range.start.line < len(lines)
            assert d.range.end.character <= len(lines[d.range.end.line].encode("utf-16-le")) // 2
        # Hover keeps working from the last model that parsed.
        line = lines[LANE_LINE]
        text = await hover_text(client, uri, LANE_LINE, line.index("tid") + 1)
        assert text is not None and "fx.Int32" in text
        change_doc(client, uri, 3, KERNEL)
        assert len(await diagnostics(client, uri, 3)) == 3


async def test_a_half_typed_statement_keeps_the_other_findings(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        before = await diagnostics(client, uri, 1)
        typed = KERNEL.replace("    lane = _AV(tid) % 64\n", "    lane = _AV(tid) % 64\n    x = \n")
        change_doc(client, uri, 2, typed)
        diags = await diagnostics(client, uri, 2)
        moved = {(d.code, d.range.start.line + (d.range.start.line > LANE_LINE), d.range.start.character) for d in before}
        assert {(d.code, d.range.start.line, d.range.start.character) for d in diags} == moved | {("FLY000", LANE_LINE + 1, 8)}
        change_doc(client, uri, 3, KERNEL)
        assert len(await diagnostics(client, uri, 3)) == 3


def _long_kernel() -> str:
    """The fixture and a 2,000-line function: a lint of an edit in it is long enough to
    edit again during."""
    body = "".join(f"    v{i} = _AV(tid) % {i + 2}\n" for i in range(2000))
    return KERNEL + "\n\ndef big():\n    tid = fx.thread_idx.x\n" + body + "    ZZ = 0\n"


async def test_diagnostics_are_of_the_newest_version(spec, workspace):
    """A pull answered while the document changes answers for the newest version (an
    older version's FLY000 would show at its column in the newer text), and pushes
    never go back to an older version."""
    text = _long_kernel()
    first = text.replace("    ZZ = 0\n", "    ZZ = 0\n    x = \n")  # FLY000 in big(), its lint is long
    second = text.replace("def finite(v):", "def finite(v:")  # FLY000 at 13:10, its `(`
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py", text)
        await diagnostics(client, uri, 1)
        change_doc(client, uri, 2, first)
        if pulls(client):
            pending = asyncio.ensure_future(pull(client, uri))
            await asyncio.sleep(0.05)  # the pull's lint of version 2 is under way
            change_doc(client, uri, 3, second)
            items = list((await pending).items)
        else:
            change_doc(client, uri, 3, second)
            items = await published(client, uri, 3)
            await asyncio.sleep(0.5)
            versions = [p.version for p in client.published if p.uri == uri]
            assert versions == sorted(versions) and versions[-1] == 3
        (error,) = by_code(items, "FLY000")
        assert (error.range.start.line, error.range.start.character) == (13, len("def finite"))  # its unclosed `(`
        assert len(items) > 2000  # and the other findings


async def test_out_of_range_and_odd_requests_do_not_crash(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        assert await hover_text(client, uri, 9999, 9999) is None or True
        assert await hover_text(client, "file:///nowhere/else.py", 0, 0) is None
        # A change whose range runs past the end is clamped, as LSP asks.
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(types.Position(500, 3), types.Position(900, 0)),
                        text="\nx = 1\n",
                    )
                ],
            )
        )
        diags = await diagnostics(client, uri, 2)
        assert len(diags) == 3
        # Malformed diagnostic data and an unknown resolve payload.
        bogus = types.Diagnostic(
            range=types.Range(types.Position(0, 0), types.Position(0, 1)),
            message="x",
            source="flydsl-ls",
            code="FLY101",
            data={"fix": {"title": "t", "edits": "nonsense"}},
        )
        await code_actions(client, uri, [bogus])
        action = types.CodeAction(title="x", data={"action": "nothing"})
        assert (await client.code_action_resolve_async(action)).title == "x"


async def test_huge_file(spec, workspace):
    body = "\n".join(f"def f{i}(a):\n    return _AV(fx.thread_idx.x) + {i}\n" for i in range(1500))
    text = "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue as _AV\n" + body
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "big.py", text=text)
        diags = await diagnostics(client, uri, 1)
        assert len(diags) == 1500
        assert max(d.range.end.line for d in diags) < len(text.splitlines())


async def test_cancelled_request(spec, workspace):
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        params = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(18, 16)
        )
        future = client.protocol.send_request(types.TEXT_DOCUMENT_HOVER, params, msg_id="to-cancel")
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="to-cancel"))
        try:
            await asyncio.wait_for(asyncio.wrap_future(future), TIMEOUT)
        except Exception:
            pass  # cancelled: an error response is the expected outcome
        assert "FLY101" in await hover_text(client, uri, LANE_LINE, 12)


async def test_a_failing_handler_is_answered_with_an_error(spec, workspace):
    async with lsp(spec, workspace, env={"FLYDSL_LS_FAULT": "textDocument/hover"}) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = await diagnostics(client, uri, 1)
        with pytest.raises(Exception, match="injected fault"):
            await hover_text(client, uri, LANE_LINE, 12)
        # Still serving.
        actions = await code_actions(client, uri, [d for d in diags if d.range.start.line == LANE_LINE])
        assert actions
        await asyncio.sleep(0.2)
        faults = [m for m in client.log_messages if "injected fault" in m.message]
        assert faults and all(m.type == types.MessageType.Error for m in faults)


# --- what the editor shows: strike-through, late cancels -------------------------------------------
NESTED = '''import flydsl.expr as fx
from flydsl.expr import arith
from flydsl.expr.typing import T


def narrow(idx: fx.Int32, limit: fx.Int32):
    return arith.index_cast(
        T.i32,
        arith.unwrap(idx < limit),
    )
'''


async def test_a_multi_line_finding_is_not_struck_through(spec, workspace):
    """The Deprecated tag makes editors strike the whole range through: over several lines,
    the indentation of the continuation lines too. A legacy API on one line keeps it; one
    spanning lines (FLY301 around a call whose arguments have lines of their own) keeps its
    range, message and squiggle, without the tag."""
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "nested.py", text=NESTED)
        diags = await diagnostics(client, uri, 1)
        (outer,) = by_code(diags, "FLY301")
        (inner,) = by_code(diags, "FLY102")
        assert (outer.range.start.line, outer.range.end.line) == (6, 9)
        assert not outer.tags
        assert inner.range.start.line == inner.range.end.line == 8
        assert list(inner.tags) == [types.DiagnosticTag.Deprecated]
        # the same after an edit above them (the JSON of unchanged diagnostics is cached)
        change_doc(client, uri, 2, "\n" + NESTED)
        diags = await diagnostics(client, uri, 2)
        assert not by_code(diags, "FLY301")[0].tags
        assert list(by_code(diags, "FLY102")[0].tags) == [types.DiagnosticTag.Deprecated]


async def test_a_late_cancel_is_not_a_warning(spec, workspace, capfd):
    """A $/cancelRequest for a request already answered (VS Code sends them all the time,
    when the cursor moves on) is nothing to report: pygls warned "Cancel notification for
    unknown message id" each time, and the warnings filled the editor's log."""
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        await diagnostics(client, uri, 1)
        assert "FLY101" in await hover_text(client, uri, LANE_LINE, 12)
        for msg_id in ("answered-long-ago", 12345):
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        assert "FLY101" in await hover_text(client, uri, LANE_LINE, 12)  # still serving
        await asyncio.sleep(0.3)
        logged = [m.message for m in client.log_messages]
    assert not [m for m in logged if "Cancel notification" in m or "unknown message id" in m], logged
    stderr = capfd.readouterr().err
    assert "Cancel notification" not in stderr and "unknown message id" not in stderr, stderr


async def test_unused_suppressions_follow_the_edits(spec, workspace):
    """FLY001 in the server: enabled by pyproject's extend-select, judged after every edit
    (the incremental analysis) as the CLI judges the file."""
    (workspace / "pyproject.toml").write_text('[tool.flydsl-ls]\nextend-select = ["FLY001"]\n')
    text = KERNEL.replace("    lane = _AV(tid) % 64\n", "    lane = _AV(tid) % 64  # noqa: FLY101, FLY104\n")
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kernel.py", text=text)
        diags = await diagnostics(client, uri, 1)
        (unused,) = by_code(diags, "FLY001")
        assert unused.range.start.line == LANE_LINE
        assert unused.message == "Unused `noqa` directive (unused: `FLY104`)"
        assert not [d for d in by_code(diags, "FLY101") if d.range.start.line == LANE_LINE]
        # The wrapper goes: FLY101 is unused too, and the whole comment is flagged.
        change_doc(client, uri, 2, text.replace("_AV(tid) % 64  #", "tid % 64  #"))
        diags = await diagnostics(client, uri, 2)
        (unused,) = by_code(diags, "FLY001")
        assert unused.message == "Unused `noqa` directive (unused: `FLY101`, `FLY104`)"
        change_doc(client, uri, 3, text.replace("FLY101, FLY104", "FLY101"))
        assert by_code(await diagnostics(client, uri, 3), "FLY001") == []


async def test_an_edited_helper_publishes_its_findings_before_its_callers_are_redone(spec, workspace):
    """A helper's edit is published with its own new findings and its callers' findings of
    before (moved), then with the callers analysed again: the same findings here."""
    helper = "def scale(v):\n    w = ArithValue(v) * 2\n    return fx.Int32(w)\n\n\n"
    caller = "@fx.kernel\ndef kernel(A: fx.Tensor):\n    base = fx.Int32(fx.block_idx.x) * 128\n    return scale(ArithValue(base) + 1)\n"
    text = "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\n\n\n" + helper + caller
    async with lsp(spec, workspace, pull=False, init_options={"diagnosticsDelay": 0}) as client:
        uri = open_doc(client, workspace / "kernel.py", text=text)
        first = await published(client, uri, 1)
        typed = text.replace("    w = ArithValue(v) * 2\n", "    w = ArithValue(v) * 2\n    c = arith.constant(1)\n")
        change_doc(client, uri, 2, typed)
        await published(client, uri, 2)
        twice = lambda: [p.diagnostics for p in client.published if p.uri == uri and p.version == 2]
        for _ in range(int(TIMEOUT / 0.05)):  # the callers' analysis, then the second publish
            if len(twice()) > 1:
                break
            await asyncio.sleep(0.05)
        (early, final) = twice()
        assert early == final
        lines = lambda ds, first_line: sorted((d.code, d.range.start.line) for d in ds if d.range.start.line >= first_line)
        assert any(d.range.start.line == 7 for d in final)  # the line typed into the helper
        assert lines(final, 9) == [(code, line + 1) for code, line in lines(first, 8)]  # the caller's, moved
        assert lines(final, 9)

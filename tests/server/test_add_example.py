""""Add a compile example": the code action and the CodeLens on a kernel builder, over stdio,
as Neovim 0.11 and VS Code 1.65 drive them (no compile here: tests/compile/test_scaffold.py
compiles what is inserted).

The workspace is a repository in miniature: ``kernels/copy_builder.py`` (a builder shaped like
FlyDSL's) and ``tests/test_copy.py``, whose parametrized call of the builder gives the
example its arguments.
"""

from __future__ import annotations

import asyncio
import shutil

import pytest
from lsprotocol import types

from flydsl_ls.server.code_actions import ActionKind
from flydsl_ls.server.commands import Command
from tests.server.helpers import REPO, TIMEOUT, change_doc, execute, lsp, open_doc

FIXTURE = REPO / "tests" / "compile" / "fixtures" / "copy_builder.py"
TEST_FILE = '''import pytest

from kernels.copy_builder import build_copy_module


@pytest.mark.parametrize("N, dtype_str", [(2048, "f16"), (1024, "bf16")])
def test_copy(N, dtype_str):
    launch = build_copy_module(N, dtype_str)
'''
SOURCE = FIXTURE.read_text(encoding="utf-8")
DEF_LINE = SOURCE.splitlines().index("def build_copy_module(N: int, dtype_str: str, *, block_threads: int = 256):")
# The builder ends the file: the example goes before its final line end, not past its last
# line (Neovim would take that as new lines and leave a blank line at the end of the file).
LAST = types.Position(len(SOURCE.splitlines()) - 1, len(SOURCE.splitlines()[-1]))
# What is inserted after the builder: the arguments of the test's first case.
EXPECTED = '''

# flydsl: example
def build_copy_module_example(device):
    """Written by flydsl-ls from the signature of `build_copy_module`: check the shapes and dtypes."""
    import torch

    launch = build_copy_module(2048, "f16")
    X = torch.empty(256, 2048, dtype=torch.float16, device=device)
    Y = torch.empty(256, 2048, dtype=torch.float16, device=device)
    return launch, (X, Y, 256)
'''


@pytest.fixture
def repository(tmp_path):
    root = tmp_path / "repo"
    (root / "kernels").mkdir(parents=True)
    (root / "tests").mkdir()
    shutil.copy(FIXTURE, root / "kernels" / "copy_builder.py")
    (root / "tests" / "test_copy.py").write_text(TEST_FILE, encoding="utf-8")
    return root


async def lenses(client, uri) -> list[types.CodeLens]:
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    return await asyncio.wait_for(client.text_document_code_lens_async(params), TIMEOUT) or []


async def actions_at(client, uri, line) -> list[types.CodeAction]:
    at = types.Position(line, 4)
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(at, at),
        context=types.CodeActionContext(diagnostics=[]),
    )
    found = await asyncio.wait_for(client.text_document_code_action_async(params), TIMEOUT) or []
    return [a for a in found if isinstance(a, types.CodeAction) and a.kind == ActionKind.ADD_EXAMPLE.value]


def inserted(edit: types.WorkspaceEdit, uri: str) -> tuple[types.Position, str]:
    """Where ``edit``'s one insertion goes (as documentChanges or changes), and the fixture
    with it made (ASCII: a column is a character)."""
    if edit.document_changes:
        (change,) = edit.document_changes
        assert change.text_document.uri == uri
        (text_edit,) = change.edits
    else:
        (text_edit,) = edit.changes[uri]
    at = text_edit.range.start
    assert text_edit.range.end == at
    offset = sum(len(line) for line in SOURCE.splitlines(keepends=True)[: at.line]) + at.character
    return at, SOURCE[:offset] + text_edit.new_text + SOURCE[offset:]


def assert_revealed(client, uri: str, text: str) -> None:
    """One window/showDocument, after the edit: the new example's name selected, focused."""
    (shown,) = client.shown_documents
    line = text.splitlines().index("def build_copy_module_example(device):")
    assert shown.uri == uri and shown.take_focus
    assert shown.selection == types.Range(types.Position(line, 4), types.Position(line, 4 + len("build_copy_module_example")))


async def test_the_action_on_the_builder_inserts_the_example(spec, repository):
    path = repository / "kernels" / "copy_builder.py"
    async with lsp(spec, repository) as client:
        uri = open_doc(client, path)
        (action,) = await actions_at(client, uri, DEF_LINE)
        assert action.title == "Add a compile example for build_copy_module"
        assert action.edit is None  # computed only when picked: both clients resolve
        action = await asyncio.wait_for(client.code_action_resolve_async(action), TIMEOUT)
        at, text = inserted(action.edit, uri)
        assert at == LAST and text == SOURCE + EXPECTED
        assert await actions_at(client, uri, DEF_LINE + 3) == []  # inside the body: not offered
        # The client applies the edit, then runs the action's command: the example is revealed.
        assert action.command.command == Command.SHOW_EXAMPLE.value
        assert list(action.command.arguments) == [uri, "build_copy_module_example"]
        change_doc(client, uri, 2, text)
        assert await execute(client, action.command.command, *action.command.arguments) == {"shown": True}
        assert_revealed(client, uri, text)


async def test_the_code_lens_adds_the_example_then_gives_way_to_compile(spec, repository):
    path = repository / "kernels" / "copy_builder.py"
    async with lsp(spec, repository) as client:
        uri = open_doc(client, path)
        (lens,) = await lenses(client, uri)
        assert lens.range.start.line == DEF_LINE
        assert lens.command.title == "Add compile example"
        assert lens.command.command == Command.ADD_EXAMPLE.value
        assert list(lens.command.arguments) == [uri, None, "build_copy_module"]
        result = await execute(client, lens.command.command, *lens.command.arguments)
        assert result == {"applied": True, "shown": True}
        (applied,) = client.applied_edits
        at, text = inserted(applied.edit, uri)
        assert at == LAST and text == SOURCE + EXPECTED
        assert_revealed(client, uri, text)  # after the edit: the cursor goes to the example
        # The client applied it: the builder now has its example, which gets the compile lenses.
        change_doc(client, uri, 2, text)
        titles = [lens.command.title for lens in await lenses(client, uri)]
        assert titles == ["Compile (gfx942)", "Show ISA", "Launch"]


def without_resolve(apply_edit: bool):
    def adjust(caps: types.ClientCapabilities) -> None:
        caps.text_document.code_action.resolve_support = None
        caps.workspace.apply_edit = apply_edit

    return adjust


@pytest.mark.parametrize("apply_edit", [True, False], ids=["command", "edit"])
async def test_clients_that_do_not_resolve(spec, repository, apply_edit):
    """With workspace/applyEdit the action carries the command; without, the edit itself."""
    path = repository / "kernels" / "copy_builder.py"
    async with lsp(spec, repository, adjust=without_resolve(apply_edit)) as client:
        uri = open_doc(client, path)
        (action,) = await actions_at(client, uri, DEF_LINE)
        if apply_edit:
            assert action.edit is None
            assert list(action.command.arguments) == [uri, 1, "build_copy_module"]
            result = await execute(client, action.command.command, *action.command.arguments)
            assert result == {"applied": True, "shown": True}
            (applied,) = client.applied_edits
            edit = applied.edit
        else:
            edit = action.edit
        assert inserted(edit, uri)[1] == SOURCE + EXPECTED


def without_show_document(caps: types.ClientCapabilities) -> None:
    caps.window.show_document = None


async def test_a_client_without_show_document_gets_the_example_unrevealed(spec, repository):
    path = repository / "kernels" / "copy_builder.py"
    async with lsp(spec, repository, adjust=without_show_document) as client:
        uri = open_doc(client, path)
        (action,) = await actions_at(client, uri, DEF_LINE)
        action = await asyncio.wait_for(client.code_action_resolve_async(action), TIMEOUT)
        assert inserted(action.edit, uri)[1] == SOURCE + EXPECTED and action.command is None
        (lens,) = await lenses(client, uri)
        assert await execute(client, lens.command.command, *lens.command.arguments) == {"applied": True, "shown": False}
        assert client.shown_documents == []


async def test_a_file_with_no_launcher_says_why_on_a_lens(spec, tmp_path):
    """Device-side @flyc.jit helpers: no "Add compile example", a lens that says why (and, clicked, what to do)."""
    path = tmp_path / "helpers.py"
    path.write_text("import flydsl.compiler as flyc\n\n\n@flyc.jit\ndef helper(x):\n    return x\n", encoding="utf-8")
    async with lsp(spec, tmp_path) as client:
        uri = open_doc(client, path)
        (lens,) = await lenses(client, uri)
        assert lens.range.start.line == 4 and lens.command.command == Command.NO_EXAMPLE.value
        assert lens.command.title == (
            "No compile example: no launcher found: its @flyc.jit function `helper` (line 5) launches no kernel "
            "(no `.launch(...)` in it or in a function it calls): device-side helpers are compiled by the example "
            "of a file that launches them"
        )
        # Clicked, it says why and what to do (Neovim runs the command of any lens it shows).
        assert await execute(client, lens.command.command, *lens.command.arguments) == {"shown": True}
        (message,) = [m for m in client.messages if "no compile example can be added" in m.message]
        assert message.type == types.MessageType.Info and "launches no kernel" in message.message
        plain = tmp_path / "plain.py"
        plain.write_text("x = 1\n", encoding="utf-8")
        assert await lenses(client, open_doc(client, plain)) == []  # nothing kernel-like: nothing said

""""Disable FLYnnn in this project": the code added to `ignore` of `[tool.flydsl-ls]` in
pyproject.toml, over the real server."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from flydsl_ls.actions.project_ignore import disable
from tests.server.helpers import CLIENTS, TIMEOUT, apply, diagnostics, encoding_of, lsp, open_doc
from tests.server.test_protocol import code_actions

PYPROJECT = (
    "[project]\n"
    'name = "kernels"  # the package\n'
    "\n"
    "[tool.flydsl-ls]\n"
    "ignore = [\n"
    '    "FLY104",  # kept on purpose\n'
    "]\n"
    'target-arch = "gfx942"\n'
    "\n"
    "[tool.flydsl-ls.per-file-ignores]\n"
    '"tests/*" = ["FLY1"]\n'
)


@pytest.mark.parametrize(
    "before, after",
    [
        ("", '[tool.flydsl-ls]\nignore = ["FLY101"]\n'),
        ('[project]\nname = "k"', '[project]\nname = "k"\n\n[tool.flydsl-ls]\nignore = ["FLY101"]\n'),
        ('[tool.flydsl-ls]\ntarget-arch = "gfx942"\n', '[tool.flydsl-ls]\nignore = ["FLY101"]\ntarget-arch = "gfx942"\n'),
        ('[tool.flydsl-ls]\nignore = []  # none\n', '[tool.flydsl-ls]\nignore = ["FLY101"]  # none\n'),
        ('[tool.flydsl-ls]\nignore = ["FLY104"]\n', '[tool.flydsl-ls]\nignore = ["FLY104", "FLY101"]\n'),
        ('[tool.flydsl-ls]\nignore = [\n  "FLY104"  # why\n]\n', '[tool.flydsl-ls]\nignore = [\n  "FLY104",  # why\n  "FLY101",\n]\n'),
        ('[tool.flydsl-ls]\nignore = ["FLY101"]\n', None),  # already
        ("[tool]\nflydsl-ls = { select = [] }\n", None),  # an inline table: not edited
        ("[tool.flydsl-ls\n", None),  # not TOML
    ],
)
def test_disable_keeps_the_file_as_written(before, after):
    assert disable(before, "FLY101") == after


async def test_disable_a_rule_in_the_project(workspace):
    (workspace / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    async with lsp(CLIENTS[1], workspace) as client:  # VS Code: applies workspace edits
        uri = open_doc(client, workspace / "kernel.py")
        diags = [d for d in await diagnostics(client, uri, version=1) if d.code == "FLY101"]
        assert diags
        actions = await code_actions(client, uri, diags[:1])
        (action,) = [a for a in actions if a.title == "Disable FLY101 in this project (pyproject.toml)"]
        assert action.kind == types.CodeActionKind.QuickFix
        target = (workspace / "pyproject.toml").as_uri()
        edited = apply(PYPROJECT, action.edit, target, encoding_of(client))
        assert edited == PYPROJECT.replace(
            '    "FLY104",  # kept on purpose\n', '    "FLY104",  # kept on purpose\n    "FLY101",\n'
        )
        # Saved, the server reads it again (the client reports the change): FLY101 is gone.
        (workspace / "pyproject.toml").write_text(edited, encoding="utf-8")
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=target, type=types.FileChangeType.Changed)])
        )
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while True:
            codes = [d.code for d in await diagnostics(client, uri)]
            if "FLY101" not in codes or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.2)
        assert "FLY101" not in codes and codes


async def test_a_new_pyproject_is_created(workspace):
    async with lsp(CLIENTS[1], workspace) as client:
        uri = open_doc(client, workspace / "kernel.py")
        diags = [d for d in await diagnostics(client, uri, version=1) if d.code == "FLY901"]
        actions = await code_actions(client, uri, diags[:1])
        (action,) = [a for a in actions if a.title.startswith("Disable FLY901")]
        create, insert = action.edit.document_changes
        assert create.kind == "create" and create.uri == (workspace / "pyproject.toml").as_uri()
        assert insert.edits[0].new_text == '[tool.flydsl-ls]\nignore = ["FLY901"]\n'

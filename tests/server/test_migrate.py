""""Migrate this kernel" over stdio, as Neovim 0.11 and VS Code 1.65 drive it: the CodeLens
on the kernels whose scope has a fixable finding, the ``refactor.rewrite`` code action inside
one, and ``flydsl-ls.migrateKernel``, which applies what ``flydsl-ls migrate FILE::kernel``
writes (unverified in a file without examples; compiled before and after in one with)."""

from __future__ import annotations

import asyncio
import shutil

from lsprotocol import types

from flydsl_ls.actions.migrate import migrate
from flydsl_ls.checker import linter
from flydsl_ls.config import settings_for
from flydsl_ls.server.code_actions import ActionKind
from flydsl_ls.server.commands import Command
from tests.compiler import needs_compiler
from tests.server.helpers import REPO, TIMEOUT, apply, diagnostics, encoding_of, execute, lsp, open_doc
from tests.server.test_add_example import lenses

LEGACY = REPO / "examples" / "legacy_kernel.py"
SOURCE = LEGACY.read_text(encoding="utf-8")
KERNEL_LINE = SOURCE.splitlines().index("@flyc.kernel")  # softmax_kernel's decorator
BODY_LINE = SOURCE.splitlines().index("    lane, warp = _lane_and_warp()")
LAUNCHER_LINE = SOURCE.splitlines().index("@flyc.jit")


async def migrate_actions(client, uri, line) -> list[types.CodeAction]:
    at = types.Position(line, 4)
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(at, at),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.RefactorRewrite.value]),
    )
    found = await asyncio.wait_for(client.text_document_code_action_async(params), TIMEOUT) or []
    return [a for a in found if isinstance(a, types.CodeAction)]


def expected(path, name: str) -> str:
    return migrate(SOURCE, linter(path, settings_for(path)), name).text


async def test_lens_action_and_command_apply_the_migration(spec, tmp_path):
    path = tmp_path / "legacy_kernel.py"
    shutil.copy(LEGACY, path)
    async with lsp(spec, tmp_path) as client:
        uri = open_doc(client, path)
        await diagnostics(client, uri)
        # softmax_kernel's scope has fixes; so has softmax's (it alone launches the kernel):
        # one lens each, on the first decorator line
        found = [
            (lens.range.start.line, lens.command.title, lens.command.command)
            for lens in await lenses(client, uri)
            if lens.command.command == Command.MIGRATE_KERNEL.value
        ]
        assert found == [
            (KERNEL_LINE, "Migrate this kernel", Command.MIGRATE_KERNEL.value),
            (LAUNCHER_LINE, "Migrate this kernel", Command.MIGRATE_KERNEL.value),
        ]
        (action,) = await migrate_actions(client, uri, BODY_LINE)
        assert action.kind == ActionKind.MIGRATE_KERNEL.value == "refactor.rewrite.migrateKernel.flydsl-ls"
        assert action.title == "Migrate softmax_kernel: apply every fix in it and the helpers only it uses"
        assert list(action.command.arguments) == [uri, 1, "softmax_kernel"]
        assert await migrate_actions(client, uri, 2) == []  # the module docstring: no kernel there

        result = await execute(client, action.command.command, *action.command.arguments)
        assert result["applied"] is True and result["verified"] is False
        assert result["fixes"] == {"FLY101": 3, "FLY102": 2, "FLY103": 4, "FLY104": 3, "FLY105": 1, "FLY301": 2, "FLY901": 1}
        assert result["findings"] == {"before": 17, "after": 1}
        assert "_lane_and_warp" in result["helpers"]
        assert "no `# flydsl: example`" in result["message"]
        (applied,) = client.applied_edits
        assert apply(SOURCE, applied.edit, uri, encoding_of(client)) == expected(path, "softmax_kernel")


async def test_stale_version_and_unknown_function(spec, tmp_path):
    path = tmp_path / "legacy_kernel.py"
    shutil.copy(LEGACY, path)
    async with lsp(spec, tmp_path) as client:
        uri = open_doc(client, path)
        result = await execute(client, Command.MIGRATE_KERNEL.value, uri, None, "nope")
        assert result["applied"] is False and "no function `nope`" in result["message"]
        assert client.applied_edits == []


@needs_compiler
async def test_with_an_example_the_migration_is_compiled_first(tmp_path):
    path = tmp_path / "unsafe_fixes.py"
    shutil.copy(REPO / "tests" / "semantics" / "fixtures" / "unsafe_fixes.py", path)
    source = path.read_text(encoding="utf-8")
    env = {"FLYDSL_LS_CACHE": str(tmp_path / "cache")}
    async with lsp("neovim@v0.11.0", tmp_path, env=env, init_options={"compileTimeout": 120}) as client:
        uri = open_doc(client, path)
        await diagnostics(client, uri)
        params = types.ExecuteCommandParams(command=Command.MIGRATE_KERNEL.value, arguments=[uri, None, "unsafe_kernel"])
        result = await asyncio.wait_for(client.workspace_execute_command_async(params), 300)
        assert result["applied"] is True and result["verified"] is True, result
        (kernel,) = result["kernels"]
        assert kernel["verdict"] == "ISA differs" and kernel["kernel"] == "unsafe_kernel_0"
        assert kernel["isa"]["after"].startswith("v_cvt_f32_i32")
        (applied,) = client.applied_edits
        assert "    half = n / 2\n" in apply(source, applied.edit, uri, encoding_of(client))


async def test_each_kernel_counts_its_legacy_findings(tmp_path):
    """Which kernel of a long file to migrate first: a lens with the count of its legacy
    findings and how many are fixable, before its "Migrate this kernel" (the example file has
    17 findings, 8 with a safe fix and 7 with an unsafe one, as `check` reports them, all in
    softmax_kernel's scope and in its launcher's)."""
    path = tmp_path / "legacy_kernel.py"
    shutil.copy(LEGACY, path)
    async with lsp("neovim@v0.11.0", tmp_path) as client:
        uri = open_doc(client, path)
        await diagnostics(client, uri)
        found = [(lens.range.start.line, lens.command.title) for lens in await lenses(client, uri)]
        summary = "17 legacy constructs, 15 fixable (8 safe, 7 unsafe)"
        assert found.index((KERNEL_LINE, summary)) < found.index((KERNEL_LINE, "Migrate this kernel"))
        assert (LAUNCHER_LINE, summary) in found
        lens = next(x for x in await lenses(client, uri) if x.command.title == summary)
        assert lens.command.arguments[0].startswith("softmax_kernel: " + summary + ": FLY103 ×4 (4 fixable), ")
        assert await execute(client, lens.command.command, *lens.command.arguments) == {"shown": True}

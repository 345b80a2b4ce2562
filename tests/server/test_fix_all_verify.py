"""The editor's verified fix-all: `flydsl-ls.fixAll` in a file with `# flydsl: example`s
compiles the examples before and after (the server's own compile worker) and applies only
the fixes with identical IR; the source action that runs it is offered only there, never
under `source.fixAll` (what saving asks for).

Compiles need the compile extra: the `service` fixture (tests/compile/conftest.py) decides
whether they can run here.
"""

from __future__ import annotations

import asyncio
import os
import shutil

import pytest
import pytest_asyncio
from lsprotocol import types

from tests.compile.conftest import compile_cache, service  # noqa: F401  (fixtures: the compile gate)
from tests.server.helpers import CLIENTS, REPO, apply, diagnostics, encoding_of, lsp, open_doc

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIXTURE = REPO / "tests" / "compile" / "fixtures" / "verify_kernel.py"
TIMEOUT = 300.0
VERIFIED_KIND = "source.verifiedFixAll.flydsl-ls"


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(request, tmp_path_factory, service):  # noqa: F811
    root = tmp_path_factory.mktemp("ws")
    shutil.copy(FIXTURE, root / "verify_kernel.py")
    broken = FIXTURE.read_text().replace("    return run, (out, f, -7, 1.5)\n", "    raise RuntimeError('no inputs')\n")
    (root / "broken_example.py").write_text(broken)
    env = {"FLYDSL_LS_CACHE": str(tmp_path_factory.mktemp("cache"))}
    async with lsp(request.param, root, env=env, init_options={"compileTimeout": 120}) as client:
        yield client, root


async def _actions(client, uri: str, only: list[str]) -> list[types.CodeAction]:
    rng = types.Range(types.Position(0, 0), types.Position(0, 0))
    result = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=rng,
                context=types.CodeActionContext(diagnostics=[], only=only),
            )
        ),
        30,
    )
    return result or []


async def _execute(client, command: types.Command):
    params = types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    return await asyncio.wait_for(client.workspace_execute_command_async(params), TIMEOUT)


async def test_verified_fix_all_applies_the_fixes_with_identical_ir(session):
    client, root = session
    path = root / "verify_kernel.py"
    uri = open_doc(client, path)
    await diagnostics(client, uri, 1)
    assert not [a for a in await _actions(client, uri, ["source.fixAll"]) if a.kind == VERIFIED_KIND]
    (action,) = [a for a in await _actions(client, uri, ["source"]) if a.kind == VERIFIED_KIND]
    assert action.title == "Fix all safe flydsl-ls problems, verified by compiling the examples"
    assert action.command.command == "flydsl-ls.fixAll" and list(action.command.arguments) == [uri, 1]
    seen = len(client.messages)
    result = await _execute(client, action.command)
    assert result["applied"] is True and result["verified"] is True, result
    assert [k["code"] for k in result["kept"]] == ["FLY104", "FLY104"] and result["dropped"] == []
    assert result["targets"] == [{"example": "example", "arch": "gfx942"}]
    assert result["message"].startswith(
        "fix-all of verify_kernel.py: fixes verified by compiling example (gfx942): 2 fixes kept, 0 dropped ("
    )
    text = apply(path.read_text(), client.applied_edits[-1].edit, uri, encoding_of(client))
    assert "    twice = n * 2\n" in text and "half = ArithValue(n) / 2" in text  # safe fixes only
    shown = [m for m in client.messages[seen:] if "fix-all of verify_kernel.py" in m.message]
    assert shown and shown[-1].type == types.MessageType.Info


async def test_fix_all_says_when_it_could_not_verify(session):
    """The example raises before anything compiles: the fix-all is applied as without
    examples, and says it was not verified."""
    client, root = session
    path = root / "broken_example.py"
    uri = open_doc(client, path)
    await diagnostics(client, uri, 1)
    (action,) = [a for a in await _actions(client, uri, ["source"]) if a.kind == VERIFIED_KIND]
    seen = len(client.messages)
    result = await _execute(client, action.command)
    assert result["applied"] is True and result["verified"] is False, result
    assert "not verified" in result["message"] and "no example compiles before the fixes" in result["message"]
    assert "RuntimeError: no inputs" in result["message"]
    text = apply(path.read_text(), client.applied_edits[-1].edit, uri, encoding_of(client))
    assert "    twice = n * 2\n" in text
    shown = [m for m in client.messages[seen:] if "not verified" in m.message]
    assert shown and shown[-1].type == types.MessageType.Warning


@pytest.mark.asyncio(loop_scope="function")
async def test_fix_all_without_the_compiler_applies_unverified_and_says_so(tmp_path):
    """torch and flydsl made unimportable in the server (a sitecustomize on its PYTHONPATH):
    the verified fix-all falls back to the plain one and names the install commands."""
    blocker = tmp_path / "site"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\nsys.modules['flydsl'] = None\n")
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "verify_kernel.py"
    shutil.copy(FIXTURE, path)
    env = {"PYTHONPATH": f"{blocker}{os.pathsep}{REPO}", "FLYDSL_LS_CACHE": str(tmp_path / "cache")}
    async with lsp(CLIENTS[0], root, env=env) as client:
        uri = open_doc(client, path)
        await diagnostics(client, uri, 1)
        (action,) = [a for a in await _actions(client, uri, ["source"]) if a.kind == VERIFIED_KIND]
        result = await _execute(client, action.command)
        assert result["applied"] is True and result["verified"] is False, result
        assert result["message"].startswith("fix-all of verify_kernel.py not verified (the compiler is not installed: ")
        assert "pip install flydsl" in result["message"]
        assert "the safe fixes were applied unverified" in result["message"]
        text = apply(path.read_text(), client.applied_edits[-1].edit, uri, encoding_of(client))
        assert "    twice = n * 2\n" in text
        assert not (tmp_path / "cache" / "runs").exists()  # nothing compiled

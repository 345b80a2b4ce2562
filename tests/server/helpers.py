"""Drive the real server (``python -m flydsl_ls serve``) over stdio with pytest-lsp, as
the recorded Neovim 0.11 and VS Code 1.65 clients would."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from pathlib import Path
from typing import Callable, Union

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
KERNEL = (FIXTURES / "kernel.py").read_text(encoding="utf-8")
CLIENTS = ["neovim@v0.11.0", "visual-studio-code@v1.65.2"]
TIMEOUT = 20.0


def make_client() -> LanguageClient:
    """pytest-lsp's client, also recording every publishDiagnostics (with its version) and
    every workspace/applyEdit (answered "applied")."""
    client = make_test_lsp_client()
    client.published = []  # type: ignore[attr-defined]
    client.applied_edits = []  # type: ignore[attr-defined]
    default = client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(params: types.PublishDiagnosticsParams):
        client.published.append(params)  # type: ignore[attr-defined]
        return default(params)

    def apply_edit(params: types.ApplyWorkspaceEditParams):
        client.applied_edits.append(params)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    client.protocol.fm.features[types.WORKSPACE_APPLY_EDIT] = apply_edit
    converter = client.protocol._converter

    def command_or_action(obj, _):
        # lsprotocol reads any object with a "command" key as a Command; a CodeAction may
        # carry one too (an object): a Command's "command" is a string (as clients test it).
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], command_or_action)
    return client


@contextlib.asynccontextmanager
async def lsp(
    spec: str,
    root: Path,
    *,
    init_options=None,
    env: dict[str, str] | None = None,
    pull: bool | None = None,
    adjust: Callable[[types.ClientCapabilities], None] | None = None,
    python: str | None = None,
):
    """A started and initialised server; ``pull=False`` removes pull-diagnostic support
    from the recorded capabilities (to exercise push on every client); ``adjust`` may
    change them further; ``python`` runs the server (and so its compile worker) with
    another interpreter than this one."""
    server_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    config = ClientServerConfig(
        server_command=[python or sys.executable, "-m", "flydsl_ls", "serve"],
        client_factory=make_client,
        server_env=server_env,
    )
    client = await config.start()
    caps = client_capabilities(spec)
    if pull is False and caps.text_document is not None:
        caps.text_document.diagnostic = None
    if adjust is not None:
        adjust(caps)
    try:
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                initialization_options=init_options,
            )
        )
        client.init_result = result  # type: ignore[attr-defined]
        yield client
    finally:
        try:
            await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
        finally:
            await client.stop()


@pytest.fixture(params=CLIENTS)
def spec(request) -> str:
    return request.param


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    shutil.copy(FIXTURES / "kernel.py", root / "kernel.py")
    return root


def pulls(client: LanguageClient) -> bool:
    td = client.capabilities.text_document if client.capabilities else None
    return bool(td and td.diagnostic is not None)


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="python",
                version=version,
                text=path.read_text(encoding="utf-8") if text is None else text,
            )
        )
    )
    return uri


def change_doc(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def pull(client: LanguageClient, uri: str, previous: str | None = None):
    return await asyncio.wait_for(
        client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous
            )
        ),
        TIMEOUT,
    )


async def published(client: LanguageClient, uri: str, version: int | None = None) -> list[types.Diagnostic]:
    """The diagnostics pushed for ``uri`` (at ``version`` when given), waiting for them."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while loop.time() < deadline:
        for params in reversed(client.published):
            if params.uri == uri and (version is None or params.version == version):
                return list(params.diagnostics)
        await asyncio.sleep(0.02)
    raise AssertionError(f"no diagnostics published for {uri} version {version}")


async def diagnostics(client: LanguageClient, uri: str, version: int | None = None) -> list[types.Diagnostic]:
    """What the client shows: pulled when it pulls, else pushed."""
    if pulls(client):
        report = await pull(client, uri)
        return list(report.items)
    return await published(client, uri, version)


def apply(text: str, edit: types.WorkspaceEdit, uri: str, encoding: str) -> str:
    """Apply a WorkspaceEdit as a client would (positions in the negotiated encoding)."""
    from flydsl_ls.analysis.model.diagnostic import Edit
    from flydsl_ls.analysis.model.text import LineIndex, Range, apply_edits

    if edit.document_changes:
        edits = [e for change in edit.document_changes if change.text_document.uri == uri for e in change.edits]
    else:
        edits = list((edit.changes or {}).get(uri, []))
    index = LineIndex(text)
    internal = [
        Edit(
            Range(
                index.from_client(e.range.start.line, e.range.start.character, encoding),
                index.from_client(e.range.end.line, e.range.end.character, encoding),
            ),
            e.new_text,
        )
        for e in edits
    ]
    return apply_edits(text, internal)


def encoding_of(client: LanguageClient) -> str:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    return caps.position_encoding or "utf-16"


async def execute(client: LanguageClient, command: str, *arguments, timeout: float = TIMEOUT):
    """``workspace/executeCommand``: the command's result."""
    return await asyncio.wait_for(
        client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=list(arguments))),
        timeout,
    )

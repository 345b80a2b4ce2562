"""The flydsl-ls language server: the server object, one dispatch table, and ``serve``.

Every handler lives in the module of its LSP concern (documents, diagnostics,
code_actions, hover, inlay_hints, workspace, code_lens, commands) and takes
``(session, client, params)``; this module only wires them to methods and commands, adapts
the pygls server to the ``Client`` they talk to (client.py), and guards them:
a failing handler is logged, a request is answered with an error, and the server keeps
serving.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.progress import Progress
from pygls.uris import to_fs_path

from flydsl_ls import __version__
from flydsl_ls.analysis.model.deep import run_with_deep_stacks
from flydsl_ls.server import code_actions, code_lens, commands, diagnostics, documents, hover, inlay_hints, work, workspace
from flydsl_ls.server import log as server_log
from flydsl_ls.server.protocol import FlyProtocol
from flydsl_ls.server.session import ClientFeatures, Session
from flydsl_ls.server.tcp import Listen, Refused, plan
from flydsl_ls.server.tcp import serve as serve_tcp

log = logging.getLogger(__name__)

NAME = "flydsl-ls"
# Testing hook: a comma-separated list of LSP methods whose handler raises.
FAULT_ENV = "FLYDSL_LS_FAULT"


class FlyServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, __version__, protocol_cls=FlyProtocol)
        self.session = Session()
        self.client = ServerClient(self)
        self.client_log: server_log.ClientLogHandler | None = None
        self.faults = {m.strip() for m in os.environ.get(FAULT_ENV, "").split(",") if m.strip()}


class ServerClient:
    """The pygls server as the handlers' ``Client``."""

    def __init__(self, server: FlyServer) -> None:
        self._server = server

    def notify(self, method: str, params: Any) -> None:
        self._server.protocol.notify(method, params)

    def request(self, method: str, params: Any) -> asyncio.Future:
        return self._server.protocol.send_request_async(method, params)

    def refresh(self, method: str) -> None:
        self._server.protocol.send_request(method, None)

    @property
    def progress(self) -> Progress:
        return self._server.work_done_progress

    def workspace_folders(self) -> list[str]:
        try:
            workspace = self._server.workspace
        except RuntimeError:  # not initialised: no folder yet
            return []
        uris = [workspace.root_uri, *(folder.uri for folder in workspace.folders.values())]
        return [uri for uri in uris if uri]

    def current_request(self) -> asyncio.Future | None:
        # registered under the client's id, which the handler's context still holds
        protocol = self._server.protocol
        msg_id = protocol.msg_id
        return getattr(protocol, "_request_futures", {}).get(msg_id) if msg_id is not None else None


def initialize(server: FlyServer, params: types.InitializeParams) -> None:
    if server.client_log is not None:  # window/logMessage is allowed from here on
        server.client_log.loop = asyncio.get_running_loop()
    encoding = server.workspace.position_encoding  # chosen by FlyProtocol
    session = server.session
    session.features = ClientFeatures.from_capabilities(params.capabilities, encoding)
    root = params.root_uri or (params.workspace_folders[0].uri if params.workspace_folders else None)
    if root:
        path = to_fs_path(root)
        session.set_root(Path(path) if path else None)
    workspace.apply_initialization_options(session, params.initialization_options)
    log.info(
        "flydsl-ls %s: %s positions, %s diagnostics",
        __version__,
        session.encoding,
        "pull" if session.features.pull_diagnostics else "push",
    )


async def initialized(server: FlyServer, params: types.InitializedParams) -> None:
    await workspace.pull_configuration(server.session, server.client)
    await workspace.watch_settings_files(server.session, server.client)


def shutdown(server: FlyServer, params: Any) -> None:
    for doc in server.session.documents.values():
        if doc.pending is not None:
            doc.pending.cancel()
    work.close(server.session)  # the compile worker process
    if server.session.project.store is not None:
        server.session.project.store.save()  # a lint's own save may not have run yet


# method -> (handler, options, is_request). The server's own: ``handler(server, params)``.
LIFECYCLE: dict[str, tuple[Callable, Any, bool]] = {
    types.INITIALIZE: (initialize, None, True),
    types.INITIALIZED: (initialized, None, False),
    types.SHUTDOWN: (shutdown, None, True),
}
# The handlers of the LSP concerns: ``handler(session, client, params)``.
DISPATCH: dict[str, tuple[Callable, Any, bool]] = {
    types.TEXT_DOCUMENT_DID_OPEN: (documents.did_open, None, False),
    types.TEXT_DOCUMENT_DID_CHANGE: (documents.did_change, None, False),
    types.TEXT_DOCUMENT_DID_SAVE: (documents.did_save, types.SaveOptions(include_text=False), False),
    types.TEXT_DOCUMENT_DID_CLOSE: (documents.did_close, None, False),
    types.WORKSPACE_DID_CHANGE_CONFIGURATION: (workspace.did_change_configuration, None, False),
    types.WORKSPACE_DID_CHANGE_WATCHED_FILES: (workspace.did_change_watched_files, None, False),
    types.TEXT_DOCUMENT_DIAGNOSTIC: (
        diagnostics.pull,
        types.DiagnosticOptions(
            identifier=NAME, inter_file_dependencies=False, workspace_diagnostics=False
        ),
        True,
    ),
    types.TEXT_DOCUMENT_CODE_ACTION: (
        code_actions.code_actions,
        types.CodeActionOptions(
            code_action_kinds=code_actions.ActionKind.advertised(), resolve_provider=True
        ),
        True,
    ),
    types.CODE_ACTION_RESOLVE: (code_actions.resolve, None, True),
    types.TEXT_DOCUMENT_HOVER: (hover.hover, None, True),
    types.TEXT_DOCUMENT_CODE_LENS: (code_lens.code_lens, types.CodeLensOptions(resolve_provider=False), True),
    types.TEXT_DOCUMENT_INLAY_HINT: (inlay_hints.inlay_hints, types.InlayHintOptions(resolve_provider=False), True),
}
# workspace/executeCommand: pygls advertises the registered commands (executeCommandProvider)
# and routes each to its handler; the Command enum is the one list of both.
COMMANDS = commands.HANDLERS


def guarded(server: FlyServer, method: str, handler: Callable, is_request: bool) -> Callable:
    """``handler(params)`` as a pygls handler that logs its failures. A request's
    failure is re-raised so pygls answers it with an error; a notification's is absorbed."""

    def failed(error: Exception):
        log.error("%s failed: %s: %s", method, type(error).__name__, error, exc_info=True)
        if is_request:
            raise error
        return None

    def check_faults() -> None:
        if method in server.faults:
            raise RuntimeError(f"injected fault in {method}")

    if asyncio.iscoroutinefunction(handler):

        async def run_async(params):
            try:
                check_faults()
                return await handler(params)
            except (JsonRpcException, asyncio.CancelledError):
                raise
            except Exception as error:
                return failed(error)

        return run_async

    def run(params):
        try:
            check_faults()
            return handler(params)
        except JsonRpcException:
            raise
        except Exception as error:
            return failed(error)

    return run


def create_server(log_level: str = "info") -> FlyServer:
    server = FlyServer()
    server.client_log = server_log.configure(server.client, log_level)
    for method, (handler, options, is_request) in LIFECYCLE.items():
        server.feature(method, options)(guarded(server, method, partial(handler, server), is_request))
    served = server.session, server.client
    for method, (handler, options, is_request) in DISPATCH.items():
        server.feature(method, options)(guarded(server, method, partial(handler, *served), is_request))
    for command, handler in COMMANDS.items():
        run = guarded(server, command.value, partial(handler, *served), True)
        server.command(command.value)(_with_arguments(run))
    return server


def _with_arguments(run: Callable) -> Callable:
    """A command handler taking the request's ``arguments`` as they came (raw JSON values)."""

    async def command(*arguments):
        return await run(list(arguments))

    return command


def serve(tcp: str | None = None, log_level: str = "info", allow_remote: bool = False, token_file: str | None = None) -> int:
    """Run until the client says exit (stdio), or until the TCP client leaves. Every thread
    of the server may analyse a deeply nested file: all get room to recurse (deep.py)."""
    listen = None
    if tcp:
        try:
            listen = plan(tcp, allow_remote, token_file)
        except (Refused, OSError) as error:
            print(f"flydsl-ls serve: {error}", file=sys.stderr)
            return 2
    return run_with_deep_stacks(lambda: _serve(listen, log_level))


def _serve(listen: Listen | None, log_level: str) -> int:
    server = create_server(log_level)
    _tune_garbage_collector()
    if listen is not None:
        serve_tcp(server, listen)
    else:
        server.start_io()
    _exit_now(0)
    return 0


def _tune_garbage_collector() -> None:
    """Keep full collections out of keystrokes. Analysis frees its models by reference
    counting (``SemanticModel.dispose``), so the collector has little to find, but with the
    default thresholds a keystroke's short-lived objects get promoted and trigger a full
    collection every few edits, each a 50-170 ms scan of everything alive (the imported
    libraries' objects first: frozen, they are skipped). Not much higher than 20,000: what
    little cyclic garbage is left (asyncio's) then waits long enough to raise the
    allocator's high-water mark (10,000 edits: RSS +4 MB, flat after 3,000; at 50,000:
    +13 MB, still creeping; docs/performance.md)."""
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


def _exit_now(code: int) -> None:
    """Leave at once when the client says exit: a lint or docs lookup still running in a
    worker thread would otherwise hold the process (executor threads are joined at exit)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)

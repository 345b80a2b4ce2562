"""What every long-running command shares: the session's compile worker, work-done progress
with its cancel button, cancellation by ``$/cancelRequest``, window/showMessage, the arch.
Used by the compile commands (server/commands.py) and "Migrate this kernel" (server/migrate.py).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from flydsl_ls.compile import DEFAULT_ARCH, CompileService
from flydsl_ls.compile.service import default_memory_limit
from flydsl_ls.server.client import Client
from flydsl_ls.server.session import Document, Session

log = logging.getLogger(__name__)

PROGRESS_CREATE_TIMEOUT = 10.0  # seconds the client has to accept a progress token


def target_arch(session: Session, doc: Document) -> str:
    """The ``target-arch`` setting (pyproject.toml, editor settings), else gfx942."""
    return session.settings_for(doc).target_arch or DEFAULT_ARCH



def why_not_run(session: Session, client: Client, path: Path) -> str | None:
    """Why the server will not run code from ``path`` (the compile commands import it);
    None when it may: the client did not call the workspace untrusted, and ``path`` lies
    in one of its workspace folders (with none, is open in the editor)."""
    if session.editor.trust is False:
        return "the workspace is not trusted: commands that run its code (compile, launch, verify) are off"
    roots = workspace_roots(client)
    real = path.resolve()
    if not roots:  # single-file mode (Neovim without a root): the files open in the editor
        if any(doc.path is not None and doc.path.resolve() == real for doc in session.documents.values()):
            return None
        return f"{path} is not open in the editor, and no workspace folder is: flydsl-ls runs code only from those"
    if not any(real.is_relative_to(root) for root in roots):
        return f"{path} is outside the workspace folders: flydsl-ls runs code only from them"
    return None


def workspace_roots(client: Client) -> list[Path]:
    roots = []
    for uri in client.workspace_folders():
        path = to_fs_path(uri)
        if path:
            roots.append(Path(path).resolve())
    return roots


def service(session: Session) -> CompileService:
    """The session's compile service; a new one (a new worker) when the memory limit
    setting changed, since the worker takes its limit when it starts."""
    mib = session.editor.compile_memory_limit
    limit = default_memory_limit() if mib is None else mib * 2**20
    compiler = session.compiler
    if compiler is not None and compiler.memory_limit != limit:
        close(session)
        compiler = None
    if compiler is None:
        compiler = session.compiler = CompileService(default_timeout=session.editor.timeout, memory_limit=limit)
    return compiler


def close(session: Session) -> None:
    """At shutdown: stop the worker process."""
    compiler, session.compiler = session.compiler, None
    if compiler is not None:
        compiler.close()



def cancel_with_request(client: Client, cancel: threading.Event) -> None:
    """Set ``cancel`` when the client cancels this executeCommand request.

    pygls runs a command as a step of its own executeCommand handler: ``$/cancelRequest``
    cancels that outer request's future, not our task; so we watch that future."""
    future = client.current_request()
    if future is not None:
        future.add_done_callback(lambda f: cancel.set() if f.cancelled() else None)



def reporting_compiler(compiler: CompileService, path, progress: WorkProgress, timeout: float, stopped):
    """``(compile_text, compile_lines)``, each ``(source, example, arch) -> CompileResult``
    for a verification, without and with line info: each compile of ``path``'s text is
    reported on ``progress`` ("compile 3: example (gfx942)") and stops when ``stopped()``
    says so."""
    count = 0

    def compiler_with(line_info: bool):
        def compile_text(source: str, example: str, arch: str):
            nonlocal count
            count += 1
            progress.report(f"compile {count}: {example} ({arch})")
            return compiler.compile(path, example, arch, source=source, timeout=timeout, cancel=stopped, line_info=line_info)

        return compile_text

    return compiler_with(False), compiler_with(True)


class WorkProgress:
    """``window/workDoneProgress`` around one command, when the client supports it; its
    cancel button sets ``cancel``. ``report`` may be called from any thread."""

    def __init__(self, session: Session, client: Client, title: str, cancel: threading.Event):
        self.session = session
        self.client = client
        self.title = title
        self.cancel = cancel
        self.token: str | None = None
        self.loop = asyncio.get_running_loop()

    async def __aenter__(self) -> WorkProgress:
        if not self.session.features.work_done_progress:
            return self
        token = f"flydsl-ls/{uuid.uuid4()}"
        progress = self.client.progress
        try:
            await asyncio.wait_for(progress.create_async(token), PROGRESS_CREATE_TIMEOUT)
        except Exception as error:  # refused or unanswered: go on without a progress bar
            log.debug("no work-done progress: %s", error)
            return self
        self.token = token
        progress.begin(token, types.WorkDoneProgressBegin(title=self.title, cancellable=True))
        future = progress.tokens.get(token)
        if future is not None:
            future.add_done_callback(lambda f: self.cancel.set() if f.cancelled() else None)
        return self

    def report(self, message: str) -> None:
        log.debug("%s: %s", self.title, message)
        if self.token is not None:
            self.loop.call_soon_threadsafe(self._report, message)

    def _report(self, message: str) -> None:
        if self.token is not None:
            self.client.progress.report(self.token, types.WorkDoneProgressReport(message=message))

    def end(self, message: str) -> None:
        if self.token is not None:
            progress = self.client.progress
            progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            progress.tokens.pop(self.token, None)
            self.token = None

    async def __aexit__(self, *exc) -> None:
        self.end("cancelled" if self.cancel.is_set() else "done")



# a shown message is also logged, at the same severity
LOG_LEVELS = {types.MessageType.Error: logging.ERROR, types.MessageType.Warning: logging.WARNING}


def show(client: Client, kind: types.MessageType, text: str) -> None:
    log.log(LOG_LEVELS.get(kind, logging.INFO), "%s", text)
    client.notify(types.WINDOW_SHOW_MESSAGE, types.ShowMessageParams(type=kind, message=f"flydsl-ls: {text}"))

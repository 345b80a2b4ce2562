"""Server logging: ``window/logMessage`` to the client, stderr only for what it cannot get.

Once the client has sent ``initialize``, every record of the package (and pygls's warnings)
goes to the client as ``window/logMessage`` with its type (Error, Warning, Info, Log), from
any thread. stderr gets only what the client cannot receive: records from before
``initialize`` or after the connection is gone, and a record whose sending failed; Python
writes a crash's traceback there itself. Clients treat stderr as trouble: Neovim logs every
line of it at ERROR, so informational lines there would read as errors. A record marked
``SHOW_USER`` (a setting that is ignored) is also a ``window/showMessage``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from flydsl_ls.server.client import Client

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_TYPES = [
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
    (0, types.MessageType.Log),
]
PACKAGE_LOGGER = logging.getLogger("flydsl_ls")
# `log.warning(..., extra=SHOW_USER)`: also a window/showMessage, for what the user must fix
# (settings that are ignored), not only a line in the log.
SHOW = "flydsl_show_user"
SHOW_USER = {SHOW: True}


class ClientLogHandler(logging.Handler):
    """Sends the package's log records to the client once it is connected, and the ones it
    cannot send to ``fallback`` (stderr)."""

    def __init__(self, client: Client, fallback: logging.Handler):
        super().__init__()
        self.client = client
        self.fallback = fallback
        self.loop: asyncio.AbstractEventLoop | None = None
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False):
            # Logged while a record is being sent (pygls's debug lines about it, or its
            # failure): it must not loop back here.
            if record.levelno >= logging.WARNING:
                self.fallback.handle(record)
            return
        if self.loop is None or self.loop.is_closed():
            self.fallback.handle(record)
            return
        try:
            message = self.format(record)
        except Exception:
            self.fallback.handle(record)
            return
        kind = next(t for level, t in _TYPES if record.levelno >= level)
        shown = bool(getattr(record, SHOW, False))
        try:
            self.loop.call_soon_threadsafe(self._send, kind, message, shown, record)
        except RuntimeError:  # the loop is shutting down
            self.fallback.handle(record)

    def _send(self, kind: types.MessageType, message: str, shown: bool, record: logging.LogRecord) -> None:
        self._local.busy = True
        try:
            self.client.notify(types.WINDOW_LOG_MESSAGE, types.LogMessageParams(type=kind, message=message))
            if shown:
                self.client.notify(types.WINDOW_SHOW_MESSAGE, types.ShowMessageParams(type=kind, message=message))
        except Exception:
            self.fallback.handle(record)
        finally:
            self._local.busy = False


def configure(client: Client, level: str) -> ClientLogHandler:
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler = ClientLogHandler(client, stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    PACKAGE_LOGGER.handlers[:] = [handler]
    PACKAGE_LOGGER.propagate = False
    set_level(level)
    # pygls logs every message at debug/info: keep it to warnings unless debugging.
    pygls = logging.getLogger("pygls")
    pygls.handlers[:] = [handler]
    pygls.propagate = False
    return handler


def set_level(level: str) -> None:
    value = LEVELS.get(level, logging.INFO)
    PACKAGE_LOGGER.setLevel(value)
    logging.getLogger("pygls").setLevel(logging.DEBUG if value <= logging.DEBUG else logging.WARNING)

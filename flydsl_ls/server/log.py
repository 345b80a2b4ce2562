"""Server logging: ``window/logMessage`` to the client, stderr only for what it cannot get.

Once the client has sent ``initialize``, every record of the package (and pygls's warnings)
goes to the client as ``window/logMessage`` with its type (Error, Warning, Info, Log), from
any thread. stderr gets only what the client cannot receive: records from before
``initialize`` or after the connection is gone, and a record whose sending failed; Python
writes a crash's traceback there itself. Clients treat stderr as trouble: Neovim logs every
line of it at ERROR, so informational lines there would read as errors.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from flydsl_ls.server.app import FlyServer

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_TYPES = [
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
    (0, types.MessageType.Log),
]
PACKAGE_LOGGER = logging.getLogger("flydsl_ls")


class ClientLogHandler(logging.Handler):
    """Sends the package's log records to the client once it is connected, and the ones it
    cannot send to ``fallback`` (stderr)."""

    def __init__(self, server: FlyServer, fallback: logging.Handler):
        super().__init__()
        self.server = server
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
        params = types.LogMessageParams(type=kind, message=message)
        try:
            self.loop.call_soon_threadsafe(self._send, params, record)
        except RuntimeError:  # the loop is shutting down
            self.fallback.handle(record)

    def _send(self, params: types.LogMessageParams, record: logging.LogRecord) -> None:
        self._local.busy = True
        try:
            self.server.window_log_message(params)
        except Exception:
            self.fallback.handle(record)
        finally:
            self._local.busy = False


def configure(server: FlyServer, level: str) -> ClientLogHandler:
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    client = ClientLogHandler(server, stderr)
    client.setFormatter(logging.Formatter("%(message)s"))
    PACKAGE_LOGGER.handlers[:] = [client]
    PACKAGE_LOGGER.propagate = False
    set_level(level)
    # pygls logs every message at debug/info: keep it to warnings unless debugging.
    pygls = logging.getLogger("pygls")
    pygls.handlers[:] = [client]
    pygls.propagate = False
    return client


def set_level(level: str) -> None:
    value = LEVELS.get(level, logging.INFO)
    PACKAGE_LOGGER.setLevel(value)
    logging.getLogger("pygls").setLevel(logging.DEBUG if value <= logging.DEBUG else logging.WARNING)

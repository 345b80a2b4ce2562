"""Server logging: stderr, plus ``window/logMessage`` to the client from any thread."""

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
    """Forwards the package's log records to the client once it is connected."""

    def __init__(self, server: FlyServer):
        super().__init__()
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if self.loop is None or self.loop.is_closed() or getattr(self._local, "busy", False):
            return
        try:
            message = self.format(record)
        except Exception:
            return
        kind = next(t for level, t in _TYPES if record.levelno >= level)
        params = types.LogMessageParams(type=kind, message=message)
        try:
            self.loop.call_soon_threadsafe(self._send, params)
        except RuntimeError:  # the loop is shutting down
            pass

    def _send(self, params: types.LogMessageParams) -> None:
        self._local.busy = True  # a failure to send must not log, and loop back here
        try:
            self.server.window_log_message(params)
        except Exception:
            pass
        finally:
            self._local.busy = False


def configure(server: FlyServer, level: str) -> ClientLogHandler:
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    client = ClientLogHandler(server)
    client.setFormatter(logging.Formatter("%(message)s"))
    PACKAGE_LOGGER.handlers[:] = [stderr, client]
    PACKAGE_LOGGER.propagate = False
    set_level(level)
    # pygls logs every message at debug/info: keep it to warnings unless debugging.
    logging.getLogger("pygls").addHandler(stderr)
    logging.getLogger("pygls").propagate = False
    return client


def set_level(level: str) -> None:
    value = LEVELS.get(level, logging.INFO)
    PACKAGE_LOGGER.setLevel(value)
    logging.getLogger("pygls").setLevel(logging.DEBUG if value <= logging.DEBUG else logging.WARNING)

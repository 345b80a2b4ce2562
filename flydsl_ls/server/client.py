"""What the handlers need of the connection to the editor, and nothing else: every handler
takes ``(session, client, params)``. ``app.py`` adapts the pygls server to it; no other
module of the server knows that server, so none can reach pygls's state past this."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Protocol

from pygls.progress import Progress


class Client(Protocol):
    def notify(self, method: str, params: Any) -> None:
        """Send a notification (``params`` may be ``protocol.RawJSON``)."""

    def request(self, method: str, params: Any) -> Awaitable[Any]:
        """Send a request; its answer, awaited."""

    def refresh(self, method: str) -> None:
        """Ask the client to ask again (``workspace/diagnostic/refresh``,
        ``workspace/inlayHint/refresh``), not waiting for its answer."""

    @property
    def progress(self) -> Progress:
        """Work-done progress: pygls keeps its tokens, and cancels one when the user does."""

    def workspace_folders(self) -> list[str]:
        """The URIs of the workspace root and folders (none before initialize)."""

    def current_request(self) -> asyncio.Future | None:
        """The future of the request being handled, cancelled by ``$/cancelRequest``."""

"""Serving over TCP without handing the machine to whoever connects.

The compile commands import and run the kernel text they are given, so a client of this
server can run code as the user. Over stdio the client is the user's editor. Over TCP it is
whoever reaches the port, hence:

- the default host is loopback; any other host needs ``--allow-remote``;
- with ``--allow-remote`` a client must present a token in ``initializationOptions.token``
  (printed at start, or read from ``--token-file`` / ``FLYDSL_LS_TOKEN``); until it has,
  every message but ``initialize`` and ``exit`` is refused;
- one connection at a time: pygls shares one protocol between connections, so a second
  one could otherwise read the first one's answers.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from pygls.io_ import run_async

log = logging.getLogger(__name__)

TOKEN_ENV = "FLYDSL_LS_TOKEN"
LOOPBACK_NAMES = {"localhost", "ip6-localhost"}


@dataclass(frozen=True)
class Listen:
    host: str
    port: int
    token: str | None  # required from clients (remote listening only)


class Refused(Exception):
    """Not listening; the message says why (exit 2)."""


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def plan(address: str, allow_remote: bool, token_file: str | None) -> Listen:
    """Where to listen and which token to ask for, from ``--tcp HOST:PORT`` and the flags."""
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        raise Refused(f"--tcp expects HOST:PORT or :PORT, got {address!r}")
    host = host.strip("[]") or "127.0.0.1"
    if is_loopback(host):
        return Listen(host, int(port), None)
    if not allow_remote:
        raise Refused(
            f"refusing to listen on {host}: anyone who reaches that address could run code as "
            "you (the compile commands import the kernels they are sent). Listen on loopback "
            "(--tcp 127.0.0.1:PORT), or pass --allow-remote to accept the risk: clients then "
            "need a token"
        )
    return Listen(host, int(port), _token(token_file))


def _token(token_file: str | None) -> str:
    if token_file:
        token = Path(token_file).read_text(encoding="utf-8").strip()
        if not token:
            raise Refused(f"the token file {token_file} is empty")
        return token
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return token
    token = secrets.token_urlsafe(24)
    print(f"flydsl-ls: clients must send initializationOptions.token = {token}", flush=True)
    return token


def token_matches(expected: str, options) -> bool:
    given = options.get("token") if isinstance(options, dict) else None
    return isinstance(given, str) and hmac.compare_digest(given.encode(), expected.encode())


def serve(server, listen: Listen) -> None:
    """``server`` (a FlyServer) on ``listen``, one client at a time, until the client exits."""
    protocol = server.protocol
    protocol.required_token = listen.token
    if listen.token is not None:
        log.warning(
            "listening on %s:%s, reachable from other hosts: clients must present the token",
            listen.host, listen.port,
        )
    busy = False

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal busy
        if busy:
            log.warning("refused a second connection from %s", writer.get_extra_info("peername"))
            writer.close()
            return
        busy = True
        protocol.authenticated = listen.token is None
        protocol.set_writer(writer)
        try:
            await run_async(
                stop_event=server._stop_event, reader=reader, protocol=protocol,
                logger=log, error_handler=server.report_server_error,
            )
        finally:
            busy = False
            if protocol.authenticated:  # the client left: so does the server
                server.shutdown()

    async def main() -> None:
        listening = await asyncio.start_server(connection, listen.host, listen.port)
        server._server = listening  # closed by server.shutdown() when the client leaves
        log.info("serving on %s", ", ".join(str(s.getsockname()) for s in listening.sockets))
        async with listening:
            await listening.serve_forever()

    server._stop_event = threading.Event()
    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        pass

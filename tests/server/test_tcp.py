"""`flydsl-ls serve --tcp`: loopback by default, another host only with --allow-remote, and
then only for a client with the token (the server runs the kernels it is sent)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

INIT = {"processId": None, "rootUri": None, "capabilities": {}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "flydsl_ls", "serve", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})},
    )


def connect(port: int) -> socket.socket:
    deadline = time.monotonic() + 60
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=60)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def send(sock: socket.socket, msg_id: int | None, method: str, params: dict) -> None:
    body = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        body["id"] = msg_id
    data = json.dumps(body).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(data) + data)


def receive(sock: socket.socket, msg_id: int) -> dict | None:
    """The answer to ``msg_id`` (notifications skipped); None when the server hung up."""
    buffer = b""
    while True:
        while b"\r\n\r\n" not in buffer:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            buffer += chunk
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        while len(buffer) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            buffer += chunk
        message, buffer = json.loads(buffer[:length]), buffer[length:]
        if message.get("id") == msg_id:
            return message


def leave(sock: socket.socket) -> None:
    send(sock, 2, "shutdown", {})
    receive(sock, 2)
    send(sock, None, "exit", {})


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "example.org"])
def test_a_host_beyond_loopback_needs_allow_remote(host):
    done = subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "serve", "--tcp", f"{host}:{free_port()}"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert "refusing to listen" in done.stderr and "--allow-remote" in done.stderr and "run code" in done.stderr


def test_loopback_needs_no_token():
    port = free_port()
    server = start("--tcp", f"127.0.0.1:{port}")
    try:
        with connect(port) as sock:
            send(sock, 1, "initialize", INIT)
            assert "capabilities" in receive(sock, 1)["result"]
            leave(sock)
        assert server.wait(timeout=60) == 0
    finally:
        server.kill()


def test_remote_listening_asks_every_client_for_the_token():
    port = free_port()
    server = start("--tcp", f"0.0.0.0:{port}", "--allow-remote", env={"FLYDSL_LS_TOKEN": "s3cret"})
    try:
        with connect(port) as sock:  # nothing before the token, not even a document
            send(sock, None, "textDocument/didOpen", {"textDocument": {"uri": "file:///k.py", "languageId": "python", "version": 1, "text": "import os\n"}})
            send(sock, 1, "workspace/executeCommand", {"command": "flydsl-ls.compile", "arguments": ["file:///k.py", "e", "gfx942"]})
            assert receive(sock, 1)["error"]["code"] == -32002
            send(sock, 2, "initialize", {**INIT, "initializationOptions": {"token": "guess"}})
            assert receive(sock, 2)["error"]["code"] == -32002
            assert receive(sock, 3) is None  # and the connection is closed
        with connect(port) as sock:  # the server is still there for the right client
            send(sock, 1, "initialize", {**INIT, "initializationOptions": {"token": "s3cret"}})
            assert "capabilities" in receive(sock, 1)["result"]
            leave(sock)
        assert server.wait(timeout=60) == 0
    finally:
        server.kill()
    assert "reachable from other hosts" in server.stderr.read()


def test_without_a_token_given_one_is_printed():
    port = free_port()
    server = start("--tcp", f"0.0.0.0:{port}", "--allow-remote", env={"FLYDSL_LS_TOKEN": ""})
    try:
        line = server.stdout.readline()
        token = line.rsplit("= ", 1)[1].strip()
        assert "initializationOptions.token" in line and len(token) >= 24
        with connect(port) as sock:
            send(sock, 1, "initialize", {**INIT, "initializationOptions": {"token": token}})
            assert "capabilities" in receive(sock, 1)["result"]
    finally:
        server.kill()

"""Editor latency of the real server over stdio, beside ``ruff server`` on the same edits.

    python benchmarks/bench_latency.py                      # generated 6,000-line kernel
    python benchmarks/bench_latency.py k1.py kernels/       # plus real files (or folders)
    python benchmarks/bench_latency.py --rounds 3 --ruff /path/to/ruff
    python benchmarks/bench_latency.py --cli-only           # CLI throughput only
    python benchmarks/bench_latency.py --open-many 200      # RSS with 200 kernel files open

What it does, per file: start ``python -m flydsl_ls serve`` (stdio) as a client without
pull-diagnostic support (so the server pushes), with ``diagnosticsDelay: 0``; didOpen; then
a fixed series of edits (typing characters inside a function body, inserting and deleting
a line, pasting and cutting a block, near the top, in the middle and near the bottom, and
changing a module-level constant), each sent alone and timed from the didChange to the
publishDiagnostics of that version. Then code actions at diagnostics' ranges, hovers on
names, inlay hints (flydsl-ls only: ruff server has none) for a 60-line viewport and for the
whole file, each first after an edit (the server builds the text's model) and then again on
the same text (scrolling), and the server's peak RSS (``VmHWM``). The same file and edits
go to ``ruff server`` when a ``ruff`` is found (``--ruff``, or on PATH), and the ratios are
printed. Then CLI throughput over a folder, ``python -m flydsl_ls check`` beside ``ruff
check``.

Nothing here imports the analysis: only the protocol is used, so the figures hold whatever
the server does inside. This is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
# tests/lsp_text.py is shared with the fuzz test, where pytest has the repo on the path already
sys.path.insert(1, str(REPO))
from bench_analysis import generate
from tests.lsp_text import lsp_position, split_lines

TIMEOUT = 600.0  # seconds to wait for one answer (a loaded machine, a slow full analysis)

CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False},
        "publishDiagnostics": {"versionSupport": True, "relatedInformation": True},
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {
                    "valueSet": ["", "quickfix", "refactor", "source", "source.fixAll", "source.organizeImports"]
                }
            },
            "dataSupport": True,
        },
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        # No "diagnostic" key: the client cannot pull, so both servers push.
    },
    "workspace": {"workspaceFolders": True, "configuration": False},
}
# What VS Code and Neovim declare on top: they resolve a code action's edit when it is
# picked, and apply edits the server sends.
RESOLVING = {
    **CAPABILITIES,
    "textDocument": {
        **CAPABILITIES["textDocument"],
        "codeAction": {**CAPABILITIES["textDocument"]["codeAction"], "resolveSupport": {"properties": ["edit"]}},
    },
    "workspace": {**CAPABILITIES["workspace"], "applyEdit": True},
}
CLIENTS = {"plain": CAPABILITIES, "resolving": RESOLVING}


# --- a small JSON-RPC client ---------------------------------------------------------------
class Client:
    """One language server over stdio; a reader thread timestamps every message."""

    def __init__(self, command: list[str], cwd: Path, env: dict | None = None):
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if not os.environ.get("BENCH_SERVER_STDERR") else None,
            cwd=str(cwd),
            env=env,
        )
        self.pid = self.proc.pid
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._responses: dict[int, tuple[float, dict]] = {}
        self.published: list[tuple[float, dict]] = []  # (arrival, params)
        self.log_messages: list[dict] = []
        self.server_capabilities: dict = {}
        self.closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # wire
    def _send(self, message: dict) -> float:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        with self._lock:
            sent = time.perf_counter()
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()
        return sent

    def _read(self) -> None:
        stream = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                body = stream.read(length)
                now = time.perf_counter()
                message = json.loads(body)
                self._dispatch(now, message)
        finally:
            with self._cond:
                self.closed = True
                self._cond.notify_all()

    def _dispatch(self, now: float, message: dict) -> None:
        method = message.get("method")
        if method is not None and "id" in message:  # a request from the server
            result = [None] * len(message.get("params", {}).get("items", [])) if method == "workspace/configuration" else None
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            return
        with self._cond:
            if method == "textDocument/publishDiagnostics":
                self.published.append((now, message["params"]))
            elif method == "window/logMessage":
                self.log_messages.append(message["params"])
            elif method is None:
                self._responses[message["id"]] = (now, message)
            self._cond.notify_all()

    # api
    def request(self, method: str, params) -> tuple[float, dict]:
        """(seconds from send to response, response)."""
        ident = next(self._ids)
        sent = self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        with self._cond:
            if not self._cond.wait_for(lambda: ident in self._responses or self.closed, TIMEOUT):
                raise TimeoutError(f"{method}: no answer in {TIMEOUT} s")
            if ident not in self._responses:
                raise RuntimeError(f"{method}: the server exited")
            arrived, response = self._responses.pop(ident)
        if "error" in response:
            raise RuntimeError(f"{method}: {response['error']}")
        return arrived - sent, response.get("result")

    def notify(self, method: str, params) -> float:
        return self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_published(self, uri: str, version: int | None, after: int, sent: float) -> tuple[float, dict]:
        """The first publishDiagnostics for ``uri`` at ``version`` among messages from
        index ``after`` on (any version when the server does not send one)."""

        def find():
            for arrived, params in self.published[after:]:
                if params["uri"] != uri:
                    continue
                if version is None or params.get("version") in (None, version):
                    return arrived, params
            return None

        with self._cond:
            found = None
            if not self._cond.wait_for(lambda: (found := find()) is not None or self.closed, TIMEOUT):
                raise TimeoutError(f"no diagnostics for {uri} v{version} in {TIMEOUT} s")
            found = find()
            if found is None:
                raise RuntimeError("the server exited")
        return found[0] - sent, found[1]

    def mark(self) -> int:
        with self._cond:
            return len(self.published)

    def initialize(self, root: Path, options: dict | None, capabilities: dict = CAPABILITIES) -> dict:
        _, result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": capabilities,
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        self.server_capabilities = (result or {}).get("capabilities", {})
        return result

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
            self.proc.wait()

    def rss(self) -> dict[str, float]:
        """VmRSS and VmHWM (peak) of the server process, in MB."""
        out = {}
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(value.split()[0]) / 1024
        except OSError:
            pass
        return out


def flydsl_server(root: Path, capabilities: dict = CAPABILITIES) -> Client:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    client = Client([sys.executable, "-m", "flydsl_ls", "serve"], root, env)
    client.initialize(root, {"diagnosticsDelay": 0}, capabilities)
    return client


def ruff_server(ruff: str, root: Path, capabilities: dict = CAPABILITIES, select: list[str] | None = None) -> Client:
    """``ruff server``; ``select``: its lint rules (the issue's comparison is ``ALL``)."""
    client = Client([ruff, "server"], root)
    client.initialize(root, {"settings": {"lint": {"select": select}}} if select else {}, capabilities)
    return client


# --- documents and edits (client side, UTF-16 positions) -------------------------------
def position_of(text: str, offset: int) -> dict:
    line, character = lsp_position(text, offset)
    return {"line": line, "character": character}


class Doc:
    def __init__(self, path: Path, text: str):
        self.path, self.uri, self.text, self.version = path, path.as_uri(), text, 1

    def change(self, start: int, end: int, new: str) -> dict:
        """A ranged didChange replacing text[start:end] with ``new`` (offsets in code points)."""
        rng = {"start": position_of(self.text, start), "end": position_of(self.text, end)}
        self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        return {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [{"range": rng, "text": new}],
        }


PASTE = '''\
def _pasted_{r}(x: fx.Int32, y: fx.Int32):
    """Pasted while editing."""
    s = fx.Int32(x) + y  # x＋y, café 😀
    t = arith.ArithValue(s) * 2
    if t > 4:
        t = t - 1
    return fx.Int32(t)


'''


def def_starts(text: str) -> list[int]:
    """Offsets of the lines that start a top-level ``def`` (its first decorator if any)."""
    out, offset, previous = [], 0, ""
    for line in split_lines(text):
        if line.startswith(("def ", "async def ", "@")) and not previous.startswith("@"):
            out.append(offset)
        offset += len(line)
        previous = line
    return out


def body_line(text: str, def_offset: int) -> int:
    """The offset of the first line of the function body after the ``def`` at def_offset."""
    i = text.index(":\n", text.index("def ", def_offset)) + 2
    # skip a docstring line
    if text[i:].lstrip(" ").startswith(('"""', "'''")):
        i = text.index("\n", i) + 1
    return i


def edit_script(doc: Doc, rounds: int):
    """Yield (step, zone, didChange params) for the realistic edit series, applying each to
    ``doc``; the text returns to where it started after every round."""
    defs = def_starts(doc.text)
    if not defs:
        return
    zones = [("top", defs[0]), ("middle", defs[len(defs) // 2]), ("bottom", defs[-1])]
    for r in range(rounds):
        for zone, def_offset in zones:
            # zones ahead of earlier edits keep their offsets: every round restores the text
            at = body_line(doc.text, def_offset)
            indent = len(doc.text[at:]) - len(doc.text[at:].lstrip(" "))
            line = " " * indent + f"dbg_{r} = 0\n"
            yield "insert line", zone, doc.change(at, at, line)
            cursor = at + len(line) - 1
            for ch in " + tid":
                yield "type char", zone, doc.change(cursor, cursor, ch)
                cursor += 1
            yield "delete char", zone, doc.change(cursor - 1, cursor, "")
            end = doc.text.index("\n", at) + 1
            yield "delete line", zone, doc.change(at, end, "")
            block = PASTE.format(r=r)
            yield "paste block", zone, doc.change(def_offset, def_offset, block)
            yield "cut block", zone, doc.change(def_offset, def_offset + len(block), "")
        # a module-level constant near the top (what whole-module reuse cannot skip)
        marker = doc.text.find(" = ", 0, defs[0])
        if marker != -1:
            eol = doc.text.index("\n", marker)
            old = doc.text[marker + 3 : eol]
            yield "edit constant", "top", doc.change(marker + 3, eol, old + "1")
            yield "edit constant", "top", doc.change(marker + 3, marker + 3 + len(old) + 1, old)


# --- measuring one server on one file --------------------------------------------------------
def pct(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def hover_points(text: str, count: int) -> list[dict]:
    """Positions on attribute names (``fx.Int32``, ``arith.index_cast``...) spread over the file."""
    import re

    hits = [m.start(2) for m in re.finditer(r"\b(fx|arith|buffer_ops|rocdl|gpu)\.([A-Za-z_]\w*)", text)]
    if not hits:
        hits = [m.start() for m in re.finditer(r"\b[A-Za-z_]\w{3,}", text)]
    step = max(1, len(hits) // count)
    return [position_of(text, offset + 1) for offset in hits[::step][:count]]


def measure(client: Client, path: Path, text: str, rounds: int, actions: int, hovers: int, hints: int = 0) -> dict:
    doc = Doc(path, text)
    mark = client.mark()
    sent = client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": doc.uri, "languageId": "python", "version": 1, "text": text}},
    )
    open_time, first = client.wait_published(doc.uri, 1, mark, sent)
    out: dict = {"open": open_time, "steps": {}, "diagnostics": len(first["diagnostics"])}
    # A first hover, as a user looking at the file before typing: it waits for the
    # server's start-up work (flydsl-ls warms jedi up in the background after the first
    # lint), which would otherwise run during the first edits and slow them.
    points = hover_points(doc.text, hovers + 1)
    if hovers:
        out["cold_hover"], _ = client.request(
            "textDocument/hover", {"textDocument": {"uri": doc.uri}, "position": points[0]}
        )
    last = first
    for step, zone, params in edit_script(doc, rounds):
        mark = client.mark()
        sent = client.notify("textDocument/didChange", params)
        elapsed, last = client.wait_published(doc.uri, doc.version, mark, sent)
        out["steps"].setdefault((step, zone), []).append(elapsed)
    # code actions at diagnostics' ranges (what a client asks when the cursor is on one)
    diags = last["diagnostics"]
    picked = diags[:: max(1, len(diags) // actions)][:actions] if diags else []
    ranges = [(d["range"], [d]) for d in picked]
    if not ranges:  # no diagnostics: ask at lines spread over the file
        ranges = [({"start": p, "end": p}, []) for p in hover_points(doc.text, actions)]
    action_times, action_counts = [], []
    for rng, context in ranges:
        elapsed, result = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": doc.uri}, "range": rng, "context": {"diagnostics": context}},
        )
        action_times.append(elapsed)
        action_counts.append(len(result or []))
    out["code_action"] = action_times
    out["actions_offered"] = sum(action_counts)
    hover_times = []
    for position in points[1 : hovers + 1]:
        elapsed, _ = client.request("textDocument/hover", {"textDocument": {"uri": doc.uri}, "position": position})
        hover_times.append(elapsed)
    out["hover"] = hover_times
    if hints:
        out.update(measure_hints(client, doc, hints))
    client.notify("textDocument/didClose", {"textDocument": {"uri": doc.uri}})
    return out


VIEWPORT = 60  # lines: an editor window


def measure_hints(client: Client, doc: Doc, rounds: int) -> dict:
    """textDocument/inlayHint: per round an edit (a comment line added at the end, or removed
    again; its diagnostics awaited), then the first request on the new text (a viewport, or
    the whole file, in turn), then both on the same text, as when scrolling."""
    lines = doc.text.count("\n") + 1
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": lines + 1, "character": 0}}
    out: dict = {key: [] for key in ("hints_viewport_new", "hints_viewport", "hints_whole_new", "hints_whole")}
    comment = "# scrolled\n"
    for r in range(rounds):
        mark = client.mark()
        if doc.text.endswith(comment):
            params = doc.change(len(doc.text) - len(comment), len(doc.text), "")
        else:
            params = doc.change(len(doc.text), len(doc.text), ("" if doc.text.endswith("\n") else "\n") + comment)
        sent = client.notify("textDocument/didChange", params)
        client.wait_published(doc.uri, doc.version, mark, sent)
        first = (r * 7919) % max(1, lines - VIEWPORT)  # spread over the file
        viewports = [first, (first + lines // 2) % max(1, lines - VIEWPORT)]
        asks = [("viewport", v) for v in viewports] + [("whole", None)]
        if r % 2:
            asks = asks[-1:] + asks[:-1]
        seen = set()
        for kind, start in asks:
            rng = whole if start is None else {
                "start": {"line": start, "character": 0}, "end": {"line": start + VIEWPORT, "character": 0}
            }
            elapsed, result = client.request("textDocument/inlayHint", {"textDocument": {"uri": doc.uri}, "range": rng})
            out[f"hints_{kind}" + ("" if seen else "_new")].append(elapsed)
            seen.add(kind)
            if kind == "whole":
                out["hints_count"] = len(result or [])
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


def report_file(name: str, lines: int, ours: dict, ruff: dict | None) -> None:
    print(f"\n== {name} ({lines} lines): didChange -> publishDiagnostics of that version, ms")
    head = f"{'step':<14} {'zone':<7} {'n':>3} {'p50':>8} {'p95':>8}"
    if ruff:
        head += f" | {'ruff p50':>8} {'ruff p95':>8} {'x p50':>7}"
    print(head)
    rows = list(ours["steps"].items())
    everything = [t for _, samples in rows for t in samples]
    rows.append((("all edits", ""), everything))
    for (step, zone), samples in rows:
        line = f"{step:<14} {zone:<7} {len(samples):>3} {ms(pct(samples, .5))} {ms(pct(samples, .95))}"
        if ruff:
            theirs = (
                [t for s in ruff["steps"].values() for t in s] if step == "all edits" else ruff["steps"].get((step, zone), [])
            )
            if theirs:
                line += f" | {ms(pct(theirs, .5))} {ms(pct(theirs, .95))} {pct(samples, .5) / pct(theirs, .5):>6.1f}x"
        print(line)
    print(f"{'didOpen':<22} {'':>3} {ms(ours['open'])}" + (f"          | {ms(ruff['open'])}" if ruff else ""))
    for key, label in (("code_action", "code action"), ("hover", "hover")):
        samples = ours[key]
        line = f"{label:<14} {'':<7} {len(samples):>3} {ms(pct(samples, .5))} {ms(pct(samples, .95))}"
        if ruff and ruff[key] and key == "code_action":
            theirs = ruff[key]
            line += f" | {ms(pct(theirs, .5))} {ms(pct(theirs, .95))} {pct(samples, .5) / pct(theirs, .5):>6.1f}x"
        print(line)
    for key, label in (
        ("hints_viewport_new", "hints 60 ln*"),
        ("hints_viewport", "hints 60 ln"),
        ("hints_whole_new", "hints whole*"),
        ("hints_whole", "hints whole"),
    ):
        samples = ours.get(key)
        if samples:
            print(f"{label:<14} {'':<7} {len(samples):>3} {ms(pct(samples, .5))} {ms(pct(samples, .95))}")
    if "hints_count" in ours:
        print(f"  (inlay hints: {ours['hints_count']} in the file; * the first request after an edit; ruff server has none)")
    if "cold_hover" in ours:
        print(f"  (first hover, before the edits: {ours['cold_hover'] * 1000:.0f} ms; ruff hovers only noqa codes: not compared)")
    print(
        f"  diagnostics at open: {ours['diagnostics']}"
        + (f" (ruff: {ruff['diagnostics']})" if ruff else "")
        + f"; code actions offered: {ours['actions_offered']}"
    )


# --- CLI throughput ---------------------------------------------------------------------------
def count_lines(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*.py")]
    return len(files), sum(p.read_text(encoding="utf-8", errors="replace").count("\n") + 1 for p in files)


def cli_throughput(folder: Path, ruff: str | None, runs: int) -> None:
    files, lines = count_lines(folder)
    print(f"\n== CLI throughput over {folder} ({files} .py files, {lines} lines), median of {runs} runs")
    commands = [("flydsl-ls check", [sys.executable, "-m", "flydsl_ls", "check", "-q", "--exit-zero", str(folder)])]
    if ruff:
        commands.append(("ruff check", [ruff, "check", "--no-cache", "--isolated", "-q", "--exit-zero", str(folder)]))
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    results = {}
    for name, command in commands:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(command, capture_output=True, check=False, env=env, cwd=str(folder))
            times.append(time.perf_counter() - start)
        results[name] = statistics.median(times)
        t = results[name]
        print(f"{name:<16} {t * 1000:9.0f} ms  {files / t:9.1f} files/s  {lines / t:11.0f} lines/s")
    if len(results) == 2:
        ratio = results["flydsl-ls check"] / results["ruff check"]
        print(f"flydsl-ls check / ruff check: {ratio:.1f}x the time")
    elif not ruff:
        print("ruff check: skipped (no ruff found; pass --ruff PATH or put ruff on PATH)")


def distinct(text: str, i: int) -> str:
    """The generated kernel with file-specific function names: real kernel files do not all
    define the same helpers (which would make every file a caller of every other)."""
    for old in ("bench_kernel_", "_load_tile_", "_store_tile_", "launch_"):
        text = text.replace(old, f"f{i}{old}")
    return text


def make_cli_folder(base: Path, sizes: list[int], extra: list[Path]) -> Path:
    folder = base / "cli"
    folder.mkdir()
    for i, size in enumerate(sizes):
        (folder / f"kernel_{i:03d}.py").write_text(distinct(generate(size), i), encoding="utf-8")
    for path in extra:
        if path.is_file():
            shutil.copy(path, folder / path.name)
    return folder


# --- many files open ----------------------------------------------------------------------------
def open_many(count: int, sizes: list[int], base: Path) -> None:
    root = base / "many"
    root.mkdir()
    texts = {}
    for i in range(count):
        texts[root / f"kernel_{i:03d}.py"] = distinct(generate(sizes[i % len(sizes)]), i)
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    total = sum(t.count("\n") for t in texts.values())
    client = flydsl_server(root)
    try:
        before = client.rss()
        start = time.perf_counter()
        for i, (path, text) in enumerate(texts.items()):
            mark = client.mark()
            sent = client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}},
            )
            client.wait_published(path.as_uri(), 1, mark, sent)
            if (i + 1) % 50 == 0 or i + 1 == count:
                now = client.rss()
                print(f"  {i + 1:4d} open: RSS {now.get('VmRSS', 0):6.0f} MB (peak {now.get('VmHWM', 0):6.0f} MB)", flush=True)
        elapsed = time.perf_counter() - start
        after = client.rss()
    finally:
        client.close()
    print(
        f"== {count} kernel files open ({total} lines; sizes cycling {sizes}) in {elapsed:.0f} s: "
        f"RSS {after.get('VmRSS', 0):.0f} MB, peak {after.get('VmHWM', 0):.0f} MB "
        f"(idle after initialize: {before.get('VmRSS', 0):.0f} MB; target < 300 MB)"
    )


# --- main ---------------------------------------------------------------------------------
def machine() -> str:
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        cpu = platform.processor() or "?"
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {' '.join(f'{x:.2f}' for x in load)}"
    )


def find_ruff(given: str | None) -> str | None:
    if given:
        return given
    return shutil.which("ruff")


def sizes_arg(value: str) -> list[int]:
    return [int(x) for x in value.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="real kernel files or folders to measure too")
    parser.add_argument("--lines", type=int, default=6000, help="size of the generated file (default 6000)")
    parser.add_argument("--ruff-select", type=lambda s: s.split(","), default=["ALL"],
                        help="ruff's lint rules, comma separated (default ALL; ruff's own default: E4,E7,E9,F)")
    parser.add_argument("--no-generated", action="store_true", help="only the files given (real kernels)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the edit series per file (default 2)")
    parser.add_argument("--actions", type=int, default=20, help="code-action requests per file")
    parser.add_argument("--hovers", type=int, default=20, help="hover requests per file")
    parser.add_argument("--hints", type=int, default=10, help="rounds of inlay-hint requests per file (0: none)")
    parser.add_argument("--ruff", help="the ruff executable (default: ruff on PATH; skipped when none)")
    parser.add_argument("--no-ruff", action="store_true", help="do not compare with ruff")
    parser.add_argument(
        "--client",
        choices=sorted(CLIENTS),
        default="plain",
        help="plain: no codeAction/resolve nor applyEdit, so quick fixes carry their edits "
        "(the worst case); resolving: as VS Code and Neovim (edits computed when picked)",
    )
    parser.add_argument("--cli-folder", type=Path, help="folder for CLI throughput (default: generated kernels)")
    parser.add_argument("--cli-sizes", type=sizes_arg, default=[500, 1000, 2000, 3000, 6000] * 4,
                        help="sizes of the generated kernels for CLI throughput (comma-separated)")
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--no-cli", action="store_true", help="skip CLI throughput")
    parser.add_argument("--cli-only", action="store_true", help="only CLI throughput")
    parser.add_argument("--open-many", type=int, metavar="N", help="only: open N kernel files, print RSS")
    parser.add_argument("--many-sizes", type=sizes_arg, default=[500, 1000, 1500, 2000, 6000],
                        help="sizes (lines) cycled over the --open-many files (default 500,1000,1500,2000,6000)")
    args = parser.parse_args(argv)

    ruff = None if args.no_ruff else find_ruff(args.ruff)
    print(machine())
    print(f"client: {args.client}")
    if ruff:
        version = subprocess.run([ruff, "--version"], capture_output=True, text=True, check=False).stdout.strip()
        print(f"comparing with {version} ({ruff})")
    else:
        print("ruff: not installed (pass --ruff PATH or put ruff on PATH); ruff columns skipped")
    with tempfile.TemporaryDirectory(prefix="flydsl-bench-") as tmp:
        base = Path(tmp)
        if args.open_many:
            open_many(args.open_many, args.many_sizes, base)
            return 0
        if not args.cli_only:
            files: list[tuple[str, Path, str]] = []
            gen_root = base / "gen"
            gen_root.mkdir()
            generated = gen_root / "generated_kernel.py"
            generated.write_text(generate(args.lines), encoding="utf-8")
            if not args.no_generated:
                files.append((f"<generated {args.lines}-line kernel>", generated, generated.read_text(encoding="utf-8")))
            for given in args.paths:
                for path in sorted(given.rglob("*.py")) if given.is_dir() else [given]:
                    files.append((str(path), path.resolve(), path.read_text(encoding="utf-8")))
            peaks = {}
            for name, path, text in files:
                ours_client = flydsl_server(path.parent, CLIENTS[args.client])
                try:
                    ours = measure(ours_client, path, text, args.rounds, args.actions, args.hovers, args.hints)
                    ours_rss = ours_client.rss()
                finally:
                    ours_client.close()
                theirs = None
                if ruff:
                    ruff_client = ruff_server(ruff, path.parent, CLIENTS[args.client], args.ruff_select)
                    try:
                        theirs = measure(ruff_client, path, text, args.rounds, args.actions, args.hovers)
                        theirs_rss = ruff_client.rss()
                    finally:
                        ruff_client.close()
                report_file(name, text.count("\n") + 1, ours, theirs)
                line = f"  server peak RSS (VmHWM): {ours_rss.get('VmHWM', 0):.0f} MB"
                if theirs:
                    line += f" (ruff server: {theirs_rss.get('VmHWM', 0):.0f} MB)"
                print(line, flush=True)
                peaks[name] = ours_rss.get("VmHWM", 0)
        if not args.no_cli:
            folder = args.cli_folder or make_cli_folder(base, args.cli_sizes, [])
            cli_throughput(folder, ruff, args.cli_runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

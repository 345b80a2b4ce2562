"""Findings kept while a statement is half typed, on real files.

    python benchmarks/bench_typing.py PATH [PATH ...]            # files or folders
    python benchmarks/bench_typing.py --per-file 20 --seed 0 --ruff kernels/
    python benchmarks/bench_typing.py --time BIG.py              # keystroke times only

For each file, at ``--per-file`` code lines chosen with ``--seed``, three half-typed
edits are simulated, each on the clean file:

| kind | edit |
|---|---|
| ``assign`` | a new line ``x = `` after the line, at its indentation |
| ``truncate`` | the line cut after the operator, ``(``, ``,`` or ``=`` nearest its middle |
| ``call`` | a new line ``foo(`` after the line, at its indentation |

and the edited file analysed as the editor does (``IncrementalAnalyzer``, holding the
previous edit's analysis; its result is the full analysis's, tests/test_incremental.py).
Kept = the clean file's findings (code, line, column; lines moved by an inserted line)
still reported, over those not on the edited line. Printed: mean, median and worst of
that fraction per edit kind (samples of files with findings), the pooled fraction, the
same for ruff (``--ruff``: ``ruff check --select ALL --isolated``, its syntax errors
aside), and per file with ``--show``. ``--time FILE`` times a normal keystroke (a comment
typed at the end of the line nearest the middle) against a half-typed one there.

A measurement, not a test: nothing here fails.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from flydsl_ls.analysis.engine import AnalysisRequest
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.analysis.model.text import split_lines

RUFF = "/tmp/ruff-venv/bin/ruff"
KINDS = ("assign", "truncate", "call")
_CUTS = "=(,+-*/[<>%&|"


def code_lines(lines: list[str]) -> list[int]:
    return [i for i, row in enumerate(lines) if row.strip() and not row.lstrip().startswith(("#", "@"))]


def edit(lines: list[str], i: int, kind: str) -> tuple[str, int | None, int]:
    """The edited text, the clean line no longer there (None) and where lines after
    ``i`` moved (+1 for an inserted line)."""
    row = lines[i]
    body = row.rstrip("\r\n")
    indent = body[: len(body) - len(body.lstrip())]
    if kind in ("assign", "call"):
        typed = indent + ("x = " if kind == "assign" else "foo(") + "\n"
        return "".join(lines[: i + 1] + [typed] + lines[i + 1 :]), None, 1
    middle = (len(indent) + len(body)) // 2
    cuts = [k + 1 for k in range(len(indent), len(body) - 1) if body[k] in _CUTS]
    cut = min(cuts, key=lambda k: abs(k - middle)) if cuts else middle
    truncated = body[:cut] + row[len(body) :]
    return "".join(lines[:i] + [truncated] + lines[i + 1 :]), i, 0


def keys(found) -> Counter:
    return Counter(found)


def ours(analyzer: IncrementalAnalyzer, text: str) -> list[tuple]:
    result = analyzer.analyze(AnalysisRequest(text))
    return [(d.code, d.range.start.line, d.range.start.column) for d in result.diagnostics if d.code != "FLY000"]


def ruff(text: str) -> list[tuple]:
    out = subprocess.run(
        [RUFF, "check", "--select", "ALL", "--isolated", "--output-format", "json", "--exit-zero", "-"],
        input=text, capture_output=True, text=True, check=False,
    ).stdout
    return [
        (f["code"], f["location"]["row"] - 1, f["location"]["column"] - 1)
        for f in json.loads(out or "[]")
        if f["code"] is not None and f["code"] not in ("E999", "invalid-syntax")
    ]


def kept(clean: list[tuple], broken: list[tuple], gone: int | None, at: int, shift: int) -> tuple[int, int]:
    want = Counter()
    for code, line, column in clean:
        if line == gone:
            continue
        want[(code, line + shift if line > at else line, column)] += 1
    have = Counter(broken)
    return sum(min(n, have[k]) for k, n in want.items()), sum(want.values())


def files_of(paths: list[str]) -> list[Path]:
    found = []
    for p in map(Path, paths):
        found += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return found


def measure(path: Path, per_file: int, seed: int, with_ruff: bool) -> dict:
    source = path.read_text(encoding="utf-8")
    lines = split_lines(source)
    analyzer = IncrementalAnalyzer()
    clean = ours(analyzer, source)
    clean_ruff = ruff(source) if with_ruff else []
    rows = code_lines(lines)
    picked = sorted(random.Random(f"{seed}:{path.name}").sample(rows, min(per_file, len(rows))))
    samples = {kind: [] for kind in KINDS}
    for i in picked:
        for kind in KINDS:
            text, gone, shift = edit(lines, i, kind)
            got = kept(clean, ours(analyzer, text), gone, i, shift)
            theirs = kept(clean_ruff, ruff(text), gone, i, shift) if with_ruff else (0, 0)
            samples[kind].append((got, theirs))
    return {"file": str(path), "lines": len(lines), "findings": len(clean), "ruff": len(clean_ruff), "samples": samples}


def summary(results: list[dict], which: int) -> dict[str, tuple]:
    out = {}
    for kind in [*KINDS, "all"]:
        fractions, kept_sum, total_sum = [], 0, 0
        for r in results:
            for k in KINDS if kind == "all" else [kind]:
                for pair in r["samples"][k]:
                    got, total = pair[which]
                    if total:
                        fractions.append(got / total)
                        kept_sum += got
                        total_sum += total
        if fractions:
            out[kind] = (
                statistics.mean(fractions), statistics.median(fractions), min(fractions),
                kept_sum / total_sum, len(fractions),
            )
    return out


def print_summary(title: str, table: dict[str, tuple]) -> None:
    print(title)
    print(f"  {'kind':<9} {'mean':>7} {'median':>7} {'worst':>7} {'pooled':>7} {'samples':>8}")
    for kind, (mean, median, worst, pooled, n) in table.items():
        print(f"  {kind:<9} {mean:>7.1%} {median:>7.1%} {worst:>7.1%} {pooled:>7.1%} {n:>8}")


def time_keystrokes(path: Path, runs: int) -> None:
    source = path.read_text(encoding="utf-8")
    lines = split_lines(source)
    middle = len(lines) // 2
    target = min(code_lines(lines), key=lambda i: abs(i - middle))
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(source))
    times: dict[str, list[float]] = {"comment typed": [], "x = typed": []}
    for k in range(runs):
        commented = lines[:]
        commented[target] = commented[target].rstrip("\r\n") + ("  # x" if k % 2 == 0 else "  # y") + "\n"
        broken, _, _ = edit(lines, target, "assign")
        for name, text in (("comment typed", "".join(commented)), ("x = typed", broken)):
            start = time.perf_counter()
            analyzer.analyze(AnalysisRequest(text))
            times[name].append((time.perf_counter() - start) * 1000)
    print(f"{path.name} ({len(lines)} lines), edit after line {target + 1}, ms min/median over {runs}:")
    for name, samples in times.items():
        print(f"  {name:<14} {min(samples):8.1f} / {statistics.median(samples):8.1f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--per-file", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ruff", action="store_true", help=f"also measure ruff ({RUFF})")
    parser.add_argument("--show", action="store_true", help="a line per file")
    parser.add_argument("--time", action="store_true", help="time keystrokes instead")
    parser.add_argument("--runs", type=int, default=6)
    args = parser.parse_args(argv)
    files = files_of(args.paths)
    if args.time:
        for path in files:
            time_keystrokes(path, args.runs)
        return
    results = []
    for path in files:
        results.append(measure(path, args.per_file, args.seed, args.ruff))
        if args.show:
            table = summary([results[-1]], 0).get("all")
            if table:
                line = f"{path.name:<48} {results[-1]['lines']:>6} lines {results[-1]['findings']:>5} found"
                line += f"  kept mean {table[0]:.1%} worst {table[2]:.1%}"
                if args.ruff and (theirs := summary([results[-1]], 1).get("all")):
                    line += f"  ruff mean {theirs[0]:.1%} worst {theirs[2]:.1%}"
                print(line, flush=True)
    print(f"{len(files)} files, {sum(r['findings'] for r in results)} findings on the clean files")
    print_summary("flydsl-ls: fraction of the clean file's findings kept", summary(results, 0))
    if args.ruff:
        print_summary("ruff: fraction of the clean file's findings kept", summary(results, 1))


if __name__ == "__main__":
    sys.exit(main())

"""How much legacy code `check --fix --unsafe-fixes` leaves, on the real trees.

    python benchmarks/fix_coverage.py --flydsl-mirror M --aiter-mirror M [--arch gfx942]
        [--keep DIR] [--reasons N] [--rule FLY301]

Extracts FlyDSL's kernels/ and aiter's aiter/ops/flydsl at their pinned commits (each tree
declares the FlyDSL release its project pins), counts the warning- and error-level findings
(keep-case notes are information and do not count), runs `check --fix --unsafe-fixes`, and
counts again. Prints per rule: before, left, left %, and the most common reasons a finding was
left (its message's "no fix: ..." part, with names and line numbers blanked). A measurement,
not a test.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# this checkout's flydsl_ls, whatever the venv has installed (a worktree measures itself)
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(HERE.parent), os.environ.get("PYTHONPATH")) if p)}

from fix_audit import extract  # noqa: E402  (the same git archive of a pinned commit)

TREES = {
    "FlyDSL": ("11c4174d", ["kernels"], "0.5.0"),
    "aiter": ("e4048607a5", ["aiter/ops/flydsl"], "0.3.1"),
}


def findings(root: Path, arch: str) -> list[dict]:
    # SARIF, the format that carries the level: a keep-case note is "note"
    cmd = [sys.executable, "-m", "flydsl_ls", "check", "--no-cache", "--output-format", "sarif", "--exit-zero",
           "--target-arch", arch, "."]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=ENV)
    if done.returncode != 0:
        raise SystemExit(f"check failed in {root}: {done.stderr[-2000:]}")
    results = json.loads(done.stdout)["runs"][0]["results"]
    return [{"code": r["ruleId"], "message": r["message"]["text"]} for r in results if r["level"] != "note"]


def fix(root: Path, arch: str) -> str:
    cmd = [sys.executable, "-m", "flydsl_ls", "check", "--no-cache", "--fix", "--unsafe-fixes", "--exit-zero",
           "--quiet", "--target-arch", arch, "."]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=ENV)
    return done.stderr.strip()


_NAME = re.compile(r"`[^`]*`")
_LINE = re.compile(r"\bline \d+\b")


def reason(message: str) -> str:
    """The part of a message that says why there is no fix, names and lines blanked."""
    for marker in ("(no fix: ", "no fix: ", "(no fix", "(unsafe: "):
        at = message.find(marker)
        if at >= 0:
            text = message[at:]
            break
    else:
        text = "(no reason given) " + message.split(":")[0]
    return _LINE.sub("line N", _NAME.sub("`x`", text))[:160]


def parses(root: Path) -> list[str]:
    import ast

    bad = []
    for path in root.rglob("*.py"):
        try:
            ast.parse(path.read_bytes())
        except SyntaxError as err:
            bad.append(f"{path.relative_to(root)}: {err}")
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flydsl-mirror", required=True, help="git directory of a FlyDSL clone")
    parser.add_argument("--aiter-mirror", required=True, help="git directory of an aiter clone")
    parser.add_argument("--arch", default="gfx942")
    parser.add_argument("--keep", type=Path, help="extract into this folder and keep it (else a temporary one)")
    parser.add_argument("--reasons", type=int, default=12, help="how many reasons to print")
    parser.add_argument("--rule", help="only print the reasons of this rule")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="fix-coverage-"))
    if work.exists():
        shutil.rmtree(work)
    mirrors = {"FlyDSL": args.flydsl_mirror, "aiter": args.aiter_mirror}
    before: collections.Counter = collections.Counter()
    left: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    for name, (commit, paths, release) in TREES.items():
        root = work / name
        extract(mirrors[name], commit, paths, root, release)
        before.update(f["code"] for f in findings(root, args.arch))
        problems = fix(root, args.arch)
        if problems:
            print(f"{name}: fix run said: {problems[:500]}")
        remaining = findings(root, args.arch)
        left.update(f["code"] for f in remaining)
        reasons.update((f["code"], reason(f["message"])) for f in remaining if not args.rule or f["code"] == args.rule)
        for bad in parses(root):
            print(f"{name}: DOES NOT PARSE after the fixes: {bad}")
    total_before, total_left = sum(before.values()), sum(left.values())
    print(f"\nwarning/error findings, both trees, --target-arch {args.arch}")
    print(f"{'rule':<8} {'before':>7} {'left':>7} {'left %':>7}")
    for code in sorted(before | left, key=lambda c: -left[c]):
        share = 100 * left[code] / before[code] if before[code] else 0
        print(f"{code:<8} {before[code]:>7} {left[code]:>7} {share:>6.0f}%")
    print(f"{'all':<8} {total_before:>7} {total_left:>7} {100 * total_left / max(total_before, 1):>6.1f}%")
    print("\nmost common reasons left:")
    for (code, text), count in reasons.most_common(args.reasons):
        print(f"{count:>6}  {code}  {text}")
    if not args.keep:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Precision audit: sample findings per rule from real trees, show each with its code for a
reviewer, and keep the verdicts in a file so the precision figure can be measured again.

    python benchmarks/precision_audit.py sample TREE... --verdicts FILE [--per-rule N] [--seed S]
    python benchmarks/precision_audit.py show TREE... --verdicts FILE [--rule FLY301] [--pending]
    python benchmarks/precision_audit.py judge --verdicts FILE ID right|wrong|debatable [NOTE]
    python benchmarks/precision_audit.py score --verdicts FILE

`sample` runs `flydsl-ls check` over the trees and keeps up to N findings per rule in the
verdicts file: the sampled findings still reported keep their verdict, those no longer
reported (a false positive fixed, a message reworded) leave, and new seeded draws fill the
rest. A finding's id hashes its file
(relative to its tree), rule, severity, message and the text of its line, not the line
number, so verdicts survive edits elsewhere in the file. `show` prints each sampled finding with the
code around it; `judge` records a verdict; `score` prints precision per rule and overall:
right / (right + wrong), with debatable findings counted apart.

Verdicts: right (the code is legacy and the message says the right thing), wrong (a false
positive or a wrong message), debatable (reasonable people would differ).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

VERDICTS = ("right", "wrong", "debatable")
CONTEXT = 6  # lines of code shown on either side of a finding


def findings(trees: list[Path]) -> list[dict]:
    from flydsl_ls import config
    from flydsl_ls.analysis.model.project import ProjectIndex
    from flydsl_ls.checker import check_path
    from flydsl_ls.files import discover

    found = []
    for tree in trees:
        files = list(discover([tree]))
        project = ProjectIndex(files=files)
        for path in files:
            report = check_path(path, config.settings_for(path), project)
            if report.error is not None:
                continue
            lines = report.source.splitlines()
            for d in report.diagnostics:
                line = d.range.start.line
                text = lines[line] if line < len(lines) else ""
                rel = f"{tree.name}/{path.relative_to(tree)}"
                key = finding_id(rel, d.code, d.severity.value, d.message, text)
                found.append({
                    "id": key, "file": rel, "line": line + 1, "code": d.code,
                    "severity": d.severity.value, "message": d.message,
                    "fix": d.fix.applicability.value if d.fix else None,
                })
    return found


def finding_id(rel: str, code: str, severity: str, message: str, line_text: str) -> str:
    """Stable across edits elsewhere in the file; a new finding when its severity or message changes."""
    return hashlib.sha1(f"{rel}\0{code}\0{severity}\0{message}\0{line_text.strip()}".encode()).hexdigest()[:12]


def load(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    return {entry["id"]: entry for entry in json.loads(path.read_text(encoding="utf-8"))}


def save(path: Path, entries: dict[str, dict]) -> None:
    ordered = sorted(entries.values(), key=lambda e: (e["code"], e["file"], e["line"]))
    path.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")


def sample(args) -> None:
    """Keep the sampled findings that still exist (with their verdicts), drop the ones the
    rules no longer report (a fixed false positive, a reworded message), and top each rule
    up to N with new draws."""
    old = load(args.verdicts)
    by_rule: dict[str, list[dict]] = defaultdict(list)
    for finding in findings([Path(t).resolve() for t in args.trees]):
        by_rule[finding["code"]].append(finding)
    entries: dict[str, dict] = {}
    added = 0
    for code, items in sorted(by_rule.items()):
        items = sorted({f["id"]: f for f in items}.values(), key=lambda f: f["id"])  # one per id
        kept = [f for f in items if f["id"] in old]
        fresh = [f for f in items if f["id"] not in old]
        wanted = max(0, args.per_rule - len(kept))
        drawn = random.Random(f"{args.seed}:{code}").sample(fresh, min(wanted, len(fresh)))
        for finding in [*kept, *drawn]:
            previous = old.get(finding["id"], {})
            finding["verdict"] = previous.get("verdict")
            finding["note"] = previous.get("note", "")
            added += not previous
            entries[finding["id"]] = finding
    save(args.verdicts, entries)
    gone = len(set(old) - set(entries))
    total = sum(len(items) for items in by_rule.values())
    print(f"{total} findings in the trees; {len(entries)} sampled ({added} new, {gone} no longer reported) -> {args.verdicts}")


def show(args) -> None:
    trees = {Path(t).resolve().name: Path(t).resolve() for t in args.trees}
    for entry in load(args.verdicts).values():
        if (args.rule and entry["code"] != args.rule) or (args.pending and entry.get("verdict")):
            continue
        print(f"=== {entry['id']}  {entry['code']} ({entry['severity']}, fix: {entry['fix']})  "
              f"{entry['file']}:{entry['line']}  verdict: {entry.get('verdict')}")
        print(f"    {entry['message']}")
        tree_name, _, rest = entry["file"].partition("/")
        try:
            lines = (trees[tree_name] / rest).read_text(encoding="utf-8").splitlines()
        except (KeyError, OSError):
            print("    (file not readable)")
            continue
        lo, hi = max(0, entry["line"] - 1 - CONTEXT), min(len(lines), entry["line"] + CONTEXT)
        for number in range(lo, hi):
            mark = ">>" if number == entry["line"] - 1 else "  "
            print(f"{mark}{number + 1:6d}  {lines[number]}")


def judge(args) -> None:
    entries = load(args.verdicts)
    if args.id not in entries:
        sys.exit(f"no sampled finding {args.id}")
    entries[args.id]["verdict"] = args.verdict
    entries[args.id]["note"] = " ".join(args.note)
    save(args.verdicts, entries)


def score(args) -> None:
    tally: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for entry in load(args.verdicts).values():
        tally[entry["code"]][entry.get("verdict") or "pending"] += 1
    print(f"{'rule':8} {'right':>6} {'wrong':>6} {'debat.':>6} {'pending':>7} {'precision':>9}")
    overall: dict[str, int] = defaultdict(int)
    for code in sorted(tally):
        t = tally[code]
        for key, n in t.items():
            overall[key] += n
        print(f"{code:8} {t['right']:6d} {t['wrong']:6d} {t['debatable']:6d} {t['pending']:7d} {_precision(t):>9}")
    print(f"{'all':8} {overall['right']:6d} {overall['wrong']:6d} {overall['debatable']:6d} {overall['pending']:7d} {_precision(overall):>9}")


def _precision(t: dict[str, int]) -> str:
    judged = t["right"] + t["wrong"]
    return f"{100 * t['right'] / judged:.1f}%" if judged else "-"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sample")
    p.add_argument("trees", nargs="+")
    p.add_argument("--per-rule", type=int, default=15)
    p.add_argument("--seed", default="1")
    p.set_defaults(run=sample)
    p = sub.add_parser("show")
    p.add_argument("--rule")
    p.add_argument("--pending", action="store_true", help="only findings without a verdict")
    p.add_argument("trees", nargs="+", help="the trees sampled (a finding's file starts with its tree's name)")
    p.set_defaults(run=show)
    p = sub.add_parser("judge")
    p.add_argument("id")
    p.add_argument("verdict", choices=VERDICTS)
    p.add_argument("note", nargs="*")
    p.set_defaults(run=judge)
    p = sub.add_parser("score")
    p.set_defaults(run=score)
    for p in sub.choices.values():
        p.add_argument("--verdicts", type=Path, required=True)
    args = parser.parse_args(argv)
    args.run(args)


if __name__ == "__main__":
    main()

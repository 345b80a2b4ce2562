"""Report formats, as ruff prints them: concise text, JSON, GitHub annotations, SARIF."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from flydsl_ls import __version__
from flydsl_ls.analysis.model.diagnostic import Diagnostic, Severity, rule_url
from flydsl_ls.analysis.model.text import Position
from flydsl_ls.analysis.rules import ALL_RULES

FORMATS = ("concise", "grouped", "json", "github", "sarif")

Entry = tuple[Path, Diagnostic]


def _location(pos: Position) -> dict:
    return {"row": pos.line + 1, "column": pos.column + 1}


def _display(path: Path) -> str:
    return _relative(path, os.getcwd())


@lru_cache(maxsize=4096)
def _relative(path: Path, cwd: str) -> str:
    """Once per file and folder: a run prints thousands of findings in a few hundred files."""
    try:
        return os.path.relpath(path, cwd)
    except ValueError:
        return str(path)


def concise(entries: Iterable[Entry]) -> str:
    lines = []
    for path, d in entries:
        start = d.range.start
        marker = " [*]" if d.fix and d.fix.applicability.value == "safe" else ""
        lines.append(f"{_display(path)}:{start.line + 1}:{start.column + 1}: {d.code}{marker} {d.message}")
    return "\n".join(lines)


def to_json(entries: Iterable[Entry]) -> str:
    items = []
    for path, d in entries:
        fix = None
        if d.fix is not None:
            fix = {
                "applicability": d.fix.applicability.value,
                "message": d.fix.title,
                "edits": [
                    {
                        "content": e.content,
                        "location": _location(e.range.start),
                        "end_location": _location(e.range.end),
                    }
                    for e in d.fix.edits
                ],
            }
            if d.fix.elsewhere:  # other files the fix edits too (all of them, or none)
                fix["other_files"] = [
                    {
                        "filename": group.path,
                        "edits": [
                            {"content": e.content, "location": _location(e.range.start), "end_location": _location(e.range.end)}
                            for e in group.edits
                        ],
                    }
                    for group in d.fix.elsewhere
                ]
        items.append(
            {
                "cell": None,
                "code": d.code,
                "message": d.message,
                "filename": str(path.resolve()),
                "location": _location(d.range.start),
                "end_location": _location(d.range.end),
                "fix": fix,
                "noqa_row": d.range.start.line + 1,
                "url": d.url,
            }
        )
    return json.dumps(items, indent=2)


# Severities as the formats spell them: a kept construct (information, hint) is a note.
_GITHUB_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice", Severity.HINT: "notice"}
_SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note", Severity.HINT: "note"}


def github(entries: Iterable[Entry]) -> str:
    lines = []
    for path, d in entries:
        level = _GITHUB_LEVELS[d.severity]
        s, e = d.range.start, d.range.end
        lines.append(
            f"::{level} title=flydsl-ls ({d.code}),file={_display(path)},line={s.line + 1},"
            f"col={s.column + 1},endLine={e.line + 1},endColumn={e.column + 1}::"
            f"{_display(path)}:{s.line + 1}:{s.column + 1}: {d.code} {_escape(d.message)}"
        )
    return "\n".join(lines)


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def sarif(entries: Iterable[Entry]) -> str:
    results = []
    for path, d in entries:
        s, e = d.range.start, d.range.end
        results.append(
            {
                "ruleId": d.code,
                "level": _SARIF_LEVELS[d.severity],
                "message": {"text": d.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": path.resolve().as_uri()},
                            "region": {
                                "startLine": s.line + 1,
                                "startColumn": s.column + 1,
                                "endLine": e.line + 1,
                                "endColumn": e.column + 1,
                            },
                        }
                    }
                ],
            }
        )
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.explanation()},
            "helpUri": rule_url(rule.code),
            "properties": {"fix": rule.fix_safety},
        }
        for rule in ALL_RULES
    ]
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "flydsl-ls",
                        "version": __version__,
                        # no informationUri: flydsl-ls has no public web page
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)


def grouped(entries: Iterable[Entry]) -> str:
    """ruff's ``grouped`` format: each file's name, then its findings under it (``row:col CODE``)."""
    by_file: dict[Path, list[Diagnostic]] = {}
    for path, d in entries:
        by_file.setdefault(path, []).append(d)
    blocks = []
    for path, found in by_file.items():
        width = max(len(f"{d.range.start.line + 1}:{d.range.start.column + 1}") for d in found)
        lines = [f"{_display(path)}:"]
        for d in found:
            at = f"{d.range.start.line + 1}:{d.range.start.column + 1}"
            marker = " [*]" if d.fix and d.fix.applicability.value == "safe" else ""
            lines.append(f"  {at:<{width}} {d.code}{marker} {d.message}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n" if blocks else ""  # a blank line before the summary, as ruff


def render(fmt: str, entries: list[Entry]) -> str:
    return {"concise": concise, "grouped": grouped, "json": to_json, "github": github, "sarif": sarif}[fmt](entries)



def statistics(entries: list[Entry], fmt: str, unsafe: bool = False) -> str:
    """``--statistics``: findings counted per rule, most first, as ruff prints them: a table
    (count, code, ``[*]`` when every finding of the rule has a fix that ``--fix`` applies,
    name); in JSON, ``[{"code", "name", "count", "fixable"}]``. With ``grouped`` (ruff's
    format grouped by file), one table per file, the files with most findings first."""
    if fmt == "grouped":
        return _statistics_per_file(entries, unsafe)
    from flydsl_ls.analysis.rules import lookup_rule

    applicable = ("safe", "unsafe") if unsafe else ("safe",)
    counts: dict[str, list[int]] = {}
    for _, d in entries:
        row = counts.setdefault(d.code, [0, 0])
        row[0] += 1
        row[1] += bool(d.fix and d.fix.applicability.value in applicable)
    rows = [
        {"code": code, "name": rule.name if (rule := lookup_rule(code)) else "", "count": count, "fixable": count == fixable}
        for code, (count, fixable) in sorted(counts.items())
    ]
    rows.sort(key=lambda row: -row["count"])  # stable: ties stay in code order
    if fmt == "json":
        return json.dumps(rows, indent=2)
    if not rows:
        return ""
    count_width = len(str(max(row["count"] for row in rows)))
    code_width = max(len(row["code"]) for row in rows)
    any_fixable = any(row["fixable"] for row in rows)
    lines = []
    for row in rows:
        marker = ("[*] " if row["fixable"] else "[ ] ") if any_fixable else ""
        lines.append(f"{row['count']:>{count_width}}\t{row['code']:<{code_width}}\t{marker}{row['name']}")
    return "\n".join(lines)


def _statistics_per_file(entries: list[Entry], unsafe: bool) -> str:
    """Each file: ``path: N findings, M fixable (S safe, U unsafe)``, then its rule table."""
    by_file: dict[Path, list[Entry]] = {}
    for entry in entries:
        by_file.setdefault(entry[0], []).append(entry)
    blocks = []
    for path, found in sorted(by_file.items(), key=lambda item: (-len(item[1]), _display(item[0]))):
        safe = sum(1 for _, d in found if d.fix and d.fix.applicability.value == "safe")
        risky = sum(1 for _, d in found if d.fix and d.fix.applicability.value == "unsafe")
        head = f"{_display(path)}: {len(found)} finding{'s' if len(found) != 1 else ''}"
        head += f", {safe + risky} fixable ({safe} safe, {risky} unsafe)" if safe + risky else ", none fixable"
        table = statistics(found, "concise", unsafe)
        blocks.append(head + "\n" + "\n".join("  " + line for line in table.splitlines()))
    return "\n\n".join(blocks)


def fix_summary(fixed: dict[Path, dict[str, int]]) -> str:
    """``--show-fixes`` with ``--fix``: the fixes applied, per file and rule, as ruff lists them."""
    from flydsl_ls.analysis.rules import lookup_rule

    fixed = {path: table for path, table in fixed.items() if table}
    total = sum(sum(table.values()) for table in fixed.values())
    if not total:
        return ""
    width = len(str(max(max(table.values()) for table in fixed.values())))
    lines = [f"Fixed {total} error{'s' if total != 1 else ''}:"]
    for path, table in sorted(fixed.items(), key=lambda item: _display(item[0])):
        lines.append(f"- {_display(path)}:")
        for code, count in sorted(table.items(), key=lambda item: (-item[1], item[0])):
            rule = lookup_rule(code)
            lines.append(f"    {count:>{width}} × {code} ({rule.name if rule else code})")
    return "\n".join(lines)


def concise_with_fixes(entries: Iterable[Entry]) -> str:
    """``--show-fixes`` without ``--fix``: each finding, then the fix it offers."""
    lines = []
    for entry in entries:
        lines.append(concise([entry]))
        fix = entry[1].fix
        if fix is not None:
            lines.append(f"  fix ({fix.applicability.value}): {fix.title.removesuffix(' (unsafe)')}")
    return "\n".join(lines)

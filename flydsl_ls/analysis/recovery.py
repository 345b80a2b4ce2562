"""Analysing a file that does not parse: the broken statement's lines stand aside.

While a statement is half typed (``x = ``, ``foo(``) the file does not parse, and a
linter that reports only the syntax error makes every other finding blink out and back
on each keystroke. The fix is text-only, so the full and the incremental analysis agree:
the smallest run of whole lines around the error whose replacement by a stand-in (``pass``
at the first line's indentation, or ``if True:`` when deeper lines follow, then blank
lines: the line count is kept) makes the file parse is found by following the errors
(a later error extends the run down to it, an earlier one up to it); the repaired text
is analysed as usual, the findings touching the replaced lines are dropped, and the real
error is reported where it is. Fixes are withheld on such a file: the user is in the
middle of an edit, and a fix computed on the repaired text is best offered once the
real one parses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from flydsl_ls.analysis.diagnostic import Diagnostic
from flydsl_ls.analysis.parsing import parse
from flydsl_ls.analysis.text import split_lines

MAX_ATTEMPTS = 8  # parses tried before giving up (then only the syntax error is reported)


@dataclass(frozen=True)
class Repair:
    text: str  # the source with lines first..last (0-based, inclusive) replaced
    first: int
    last: int

    def kept(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        """The findings of the repaired text that do not touch the replaced lines, without
        their fixes."""
        kept = []
        for d in diagnostics:
            if self._touches(d.range.start.line, d.range.end.line):
                continue
            if d.fix is not None and any(self._touches(e.range.start.line, e.range.end.line) for e in d.fix.edits):
                continue
            kept.append(dataclasses.replace(d, fix=None) if d.fix is not None else d)
        return kept

    def _touches(self, start: int, end: int) -> bool:
        return start <= self.last and end >= self.first


def _whole(text: str, first: int) -> None:
    parse(text)


def repair(source: str, error: SyntaxError, check: Callable[[str, int], None] = _whole) -> Repair | None:
    """The repaired source, or None when no small repair parses. ``check(text, first)``
    raises the SyntaxError ``parse(text)`` would (it may skip the statements before 0-based
    line ``first``, which are the source's and parsed)."""
    lines = split_lines(source)
    if not lines:
        return None
    if source and source[-1] in "\r\n":
        lines.append("")  # an error at the end of the file is on the empty last line
    top = len(lines) - 1
    first = min(max((error.lineno or 1) - 1, 0), top)
    last = min(max((getattr(error, "end_lineno", None) or error.lineno or 1) - 1, first), top)
    for _ in range(MAX_ATTEMPTS):
        text = _replaced(lines, first, last)
        try:
            check(text, first)
        except SyntaxError as again:
            line = min(max((again.lineno or 1) - 1, 0), top)
            if line < first:
                first = line
            elif line > last:
                last = _run_end(lines, line, _indent(lines[first]))
            elif first > 0:
                first -= 1  # the stand-in itself does not fit (a continuation line's indentation)
            elif last < top:
                last += 1
            else:
                return None
            continue
        except (ValueError, RecursionError, MemoryError):
            return None
        return Repair(text, first, last)
    return None


def _replaced(lines: list[str], first: int, last: int) -> str:
    indent = _indent(lines[first])
    after = next((row for row in lines[last + 1 :] if row.strip() and not row.lstrip().startswith("#")), None)
    opener = after is not None and len(_indent(after)) > len(indent)
    stand_in = [indent + ("if True:" if opener else "pass")] + [""] * (last - first)
    ends = [_line_end(row) for row in lines[first : last + 1]]
    return "".join(lines[:first]) + "".join(s + e for s, e in zip(stand_in, ends)) + "".join(lines[last + 1 :])


def _run_end(lines: list[str], line: int, indent: str) -> int:
    """``line``, and the lines after it deeper than ``indent`` (the rest of a broken
    statement: its continuation lines or the body of its broken header)."""
    end = line
    for i in range(line + 1, len(lines)):
        row = lines[i]
        if not row.strip():
            continue
        if len(_indent(row)) <= len(indent):
            break
        end = i
    return end


def _indent(row: str) -> str:
    return row[: len(row) - len(row.lstrip(" \t"))]


def _line_end(row: str) -> str:
    return row[len(row.rstrip("\r\n")) :]

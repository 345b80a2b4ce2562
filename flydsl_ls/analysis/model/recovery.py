"""Analysing a file that does not parse: the broken statement's lines stand aside.

While a statement is half typed (``x = ``, ``foo(``) the file does not parse, and a
linter that reports only the syntax error makes every other finding blink out and back
on each keystroke. The fix is text-only, so the full and the incremental analysis agree:
the smallest run of whole lines around the error whose replacement by a stand-in (``pass``
at the first line's indentation, or ``if True:`` when deeper lines follow, then blank
lines; or only blank lines, inside brackets: the line count is kept) makes the file parse
is found by following the errors: an error on a deeper line after the run (the rest of
a broken statement) extends it down over those deeper lines; an error before it, or any
other (the line before the run is unfinished, as a half-typed line usually is: the error
shows on the line after it), moves it up to that line (or the previous code line, after
trying the line of a later error alone), and extends it there when that alone does not
parse. The repaired text
is analysed as usual, the findings touching the replaced lines are dropped, and the real
error is reported where it is. Fixes are withheld on such a file: the user is in the
middle of an edit, and a fix computed on the repaired text is best offered once the
real one parses.
"""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass

from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.parsing import parse
from flydsl_ls.analysis.model.text import split_lines

_OPENED_ON = re.compile(r"does not match opening parenthesis '.' on line (\d+)")
MAX_ATTEMPTS = 16  # parses tried before giving up (then only the syntax error is reported)


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
    message = str(error.msg)
    opened = _OPENED_ON.search(message)  # a closing bracket not matching the one opened there
    if "was never closed" in message:
        first = last = _unclosed(lines, first)
    elif message == "unexpected indent" and first > 0:  # the rest of a statement cut short
        first = _previous(lines, first)
        last = _run_end(lines, last, _indent(lines[first]))
    elif opened and int(opened.group(1)) - 1 < first:
        first = int(opened.group(1)) - 1
    runs = [(first, last)]  # to try in turn; the last one's error says where to look next
    if first < last:
        runs.insert(0, (first, first))  # the error's first line alone
    attempts = 0
    while attempts < MAX_ATTEMPTS:
        first, last = runs.pop(0)
        failures = []
        for blank in (False, True):  # a statement, else blank lines (inside brackets)
            text = _replaced(lines, first, last, blank)
            attempts += 1
            try:
                check(text, first)
            except SyntaxError as again:
                failures.append(min(max((again.lineno or 1) - 1, 0), top))
                continue
            except (ValueError, RecursionError, MemoryError):
                return None
            return Repair(text, first, last)
        # The statement's error, unless no statement fits there (inside brackets).
        failed = failures[0] if not first <= failures[0] <= last else failures[1]
        if runs:
            continue
        if failed < first:  # a broken line before: it (and what follows) alone, then with these
            runs = [(failed, first - 1), (failed, last)]
        elif failed > last and len(_indent(lines[failed])) > len(_indent(lines[first])):
            runs = [(first, _run_end(lines, failed, _indent(lines[first])))]  # the rest of a broken statement
        elif first > 0:  # the line before is unfinished (the error shows after it): likewise
            before = _previous(lines, first)
            runs = [(before, first - 1), (before, last)]
            if failed > last:  # or the line the error is on now
                runs.insert(0, (failed, failed))
        elif last < top:
            runs = [(first, last + 1)]
        else:
            return None
    return None


def _replaced(lines: list[str], first: int, last: int, blank: bool) -> str:
    """Lines ``first``..``last`` replaced by ``pass`` (``if True:`` when deeper lines
    follow, a header's body) or, with ``blank``, by blank lines only."""
    indent = _indent(lines[first])
    after = next((row for row in lines[last + 1 :] if row.strip() and not row.lstrip().startswith("#")), None)
    opener = after is not None and len(_indent(after)) > len(indent)
    stand_in = [indent + ("if True:" if opener else "pass")] + [""] * (last - first)
    if blank:
        stand_in = [""] * (last - first + 1)
    ends = [_line_end(row) for row in lines[first : last + 1]]
    return "".join(lines[:first]) + "".join(s + e for s, e in zip(stand_in, ends)) + "".join(lines[last + 1 :])


def _run_end(lines: list[str], line: int, indent: str) -> int:
    """``line``, and the lines after it deeper than ``indent`` (the rest of a broken
    statement: its continuation lines or the body of its broken header), with a closing
    bracket's line at ``indent`` that ends them."""
    end = line
    for i in range(line + 1, len(lines)):
        row = lines[i]
        if not row.strip():
            continue
        if len(_indent(row)) < len(indent):
            break
        if len(_indent(row)) == len(indent):
            if row.lstrip()[:1] in (")", "]", "}"):
                end = i  # the closing bracket of a hanging construct
            break
        end = i
    return end


def _unclosed(lines: list[str], start: int) -> int:
    """For a bracket on line ``start`` reported never closed: the line of the bracket that
    is, judged by indentation (a bracket typed later took its closing one): the innermost
    open bracket when a line starts left of the line it was opened on (a closing bracket
    may start on that line's indentation)."""
    stack: list[int] = []
    row = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO("".join(lines[start:])).readline):
            if token.type in _LAYOUT:
                continue
            if token.start[0] != row:
                row = token.start[0]
                if stack:
                    opened = len(_indent(lines[start + stack[-1]]))
                    column = token.start[1]
                    if column < opened or (column == opened and token.string not in ")]}"):
                        return start + stack[-1]
            if token.type == tokenize.OP and token.string in "([{":
                stack.append(token.start[0] - 1)
            elif token.type == tokenize.OP and token.string in ")]}" and stack:
                stack.pop()
    except (tokenize.TokenError, SyntaxError):
        pass
    return start


_LAYOUT = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)


def _previous(lines: list[str], first: int) -> int:
    """The code line before ``first`` (blank and comment lines skipped)."""
    for i in range(first - 1, 0, -1):
        if lines[i].strip() and not lines[i].lstrip().startswith("#"):
            return i
    return 0


def _indent(row: str) -> str:
    return row[: len(row) - len(row.lstrip(" \t"))]


def _line_end(row: str) -> str:
    return row[len(row.rstrip("\r\n")) :]

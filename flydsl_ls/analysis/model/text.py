"""Positions and text arithmetic: the one place where column units are converted.

Internally a position is (0-based line, column in code points). Python's `ast`
reports UTF-8 byte columns; LSP clients count UTF-16 code units unless they
negotiate UTF-8; ruff-style CLI output shows 1-based code-point columns.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Literal, NamedTuple

Encoding = Literal["utf-8", "utf-16", "utf-32"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_OTHER_LINE_ENDS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


class Position(NamedTuple):
    """A tuple, so creating and comparing millions of them stays cheap."""

    line: int  # 0-based
    column: int  # 0-based, code points


class Range(NamedTuple):
    start: Position
    end: Position

    def contains(self, pos: Position) -> bool:
        return self.start <= pos <= self.end

    def overlaps(self, other: Range) -> bool:
        return not (self.end <= other.start or other.end <= self.start)


_position = functools.partial(tuple.__new__, Position)
_range = functools.partial(tuple.__new__, Range)


class LineIndex:
    """Line table of one text, converting between column units and offsets."""

    def __init__(self, text: str, lines: list[str] | None = None):
        self.text = text
        self.lines = (split_lines(text) if lines is None else lines) or [""]
        if self.lines[-1].endswith(("\n", "\r")):
            self.lines.append("")
        self._starts = [0, *itertools.accumulate(map(len, self.lines[:-1]))]

    def edited(self, start: int, end: int, new: str) -> LineIndex:
        """The index of this text with ``text[start:end]`` replaced by ``new``: only the
        lines the edit touches are split again (a keystroke in a 6,000-line file). One
        line more on each side is re-split, so a line end the edit makes or breaks
        (a "\r" meeting a "\n") comes out as splitting the whole text would."""
        text = self.text[:start] + new + self.text[end:]
        first = max(self.position_at(start).line - 1, 0)
        last = min(self.position_at(end).line + 1, len(self.lines) - 1)
        segment_start = self._starts[first]
        segment_end = self._starts[last] + len(self.lines[last]) + len(new) - (end - start)
        lines = [*self.lines[:first], *split_lines(text[segment_start:segment_end]), *self.lines[last + 1 :]]
        if lines and lines[-1] == "":
            lines.pop()  # the empty last line after a final line end: __init__ adds it back
        return LineIndex(text, lines)

    def line_text(self, line: int) -> str:
        if 0 <= line < len(self.lines):
            return self.lines[line].rstrip("\r\n")
        return ""

    def indentation(self, line: int) -> str:
        """The leading whitespace of 0-based ``line`` as written (tabs stay tabs): what an
        edit that adds or moves lines there must repeat."""
        text = self.line_text(line)
        return text[: len(text) - len(text.lstrip())]

    # --- ast (1-based line, UTF-8 byte column) -----------------------------
    def from_ast(self, lineno: int, byte_col: int) -> Position:
        line = lineno - 1
        if 0 <= line < len(self.lines) and (text := self.lines[line]).isascii():
            # A byte is a character: the column, up to the line's end (read without a copy)
            end = len(text) - (2 if text.endswith("\r\n") else 1 if text.endswith(("\n", "\r")) else 0)
            return _position((line, byte_col if byte_col <= end else end))
        text = self.line_text(line)
        return Position(line, len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace")))

    def node_range(self, node) -> Range:
        # Built as tuples: the named tuples' own constructors are Python calls (the engine
        # asks for a range per finding, per fix edit, per statement).
        return _range((self.from_ast(node.lineno, node.col_offset), self.from_ast(node.end_lineno, node.end_col_offset)))

    # --- offsets ------------------------------------------------------------
    def offset(self, pos: Position) -> int:
        if pos.line >= len(self._starts):
            return len(self.text)
        return min(self._starts[pos.line] + pos.column, len(self.text))

    def position_at(self, offset: int) -> Position:
        import bisect

        line = bisect.bisect_right(self._starts, offset) - 1
        return Position(line, offset - self._starts[line])

    def slice(self, rng: Range) -> str:
        return self.text[self.offset(rng.start) : self.offset(rng.end)]

    # --- client column units ------------------------------------------------
    def to_client(self, pos: Position, encoding: Encoding) -> tuple[int, int]:
        text = self.line_text(pos.line)
        column = min(pos.column, len(text))
        if encoding == "utf-32" or text.isascii():
            return pos.line, column
        prefix = text[:column]
        if encoding == "utf-8":
            return pos.line, len(prefix.encode("utf-8"))
        return pos.line, len(prefix.encode("utf-16-le")) // 2

    def from_client(self, line: int, column: int, encoding: Encoding) -> Position:
        """Clamp out-of-range client positions to the document, as LSP asks."""
        if line >= len(self.lines):
            last = len(self.lines) - 1
            return Position(last, len(self.line_text(last)))
        text = self.line_text(line)
        if encoding == "utf-32" or text.isascii():
            return Position(line, min(column, len(text)))
        unit = "utf-8" if encoding == "utf-8" else "utf-16-le"
        width = 1 if encoding == "utf-8" else 2
        encoded = text.encode(unit)[: column * width]
        return Position(line, len(encoded.decode(unit, "ignore")))


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, each with its line end. Only \n, \r\n and \r end lines for
    ast and LSP; str.splitlines knows more line ends, but is much faster: it is used when
    the text has none of the others."""
    if _no_other_line_ends(text):
        return text.splitlines(keepends=True)
    return _LINE.findall(text)[:-1]


def _no_other_line_ends(text: str) -> bool:
    if text.isascii():  # five scans for a character are 40x faster than the pattern's one
        return not any(end in text for end in "\v\f\x1c\x1d\x1e")
    return _OTHER_LINE_ENDS.search(text) is None


def apply_edits(text: str, edits) -> str:
    """Apply non-overlapping edits (each with .range and .content) to text."""
    index = LineIndex(text)
    spans = sorted(
        ((index.offset(e.range.start), index.offset(e.range.end), e.content) for e in edits),
        reverse=True,
    )
    for start, end, content in spans:
        text = text[:start] + content + text[end:]
    return text

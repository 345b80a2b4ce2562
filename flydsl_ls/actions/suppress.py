"""The "Ignore FLY101 for this line" action: add or extend a ``# flydsl: ignore[...]`` comment."""

from __future__ import annotations

from flydsl_ls.actions.fixes import parses
from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.suppression import (
    comment_for,
    existing_comment,
    is_suppressed,
    suppressions,
)
from flydsl_ls.analysis.model.text import LineIndex, Position, Range, apply_edits


def suppression_title(code: str) -> str:
    return f"Ignore {code} for this line"


def suppression_edit(source: str, line: int, code: str, index: LineIndex | None = None) -> Edit | None:
    """An edit suppressing ``code`` on ``line`` (0-based), or None when that cannot be done
    honestly: the line already ignores everything, its end is inside a string or after a
    backslash continuation, or the result would not parse or not suppress."""
    index = index or LineIndex(source)
    if not 0 <= line < len(index.lines):
        return None
    text = index.line_text(line)
    match = existing_comment(text)
    if match is not None:
        if match.group("codes") is None:
            return None  # a bare ``# flydsl: ignore`` already covers every code
        codes = [c.strip().upper() for c in match.group("codes").split(",") if c.strip()]
        if code in codes:
            return None
        start = Position(line, match.start())
        end = Position(line, match.end())
        edit = Edit(Range(start, end), comment_for([*codes, code]))
    else:
        if text.rstrip().endswith("\\"):
            return None
        body = text.rstrip()
        separator = "  " if body else ""
        start = Position(line, len(body))
        end = Position(line, len(text))
        edit = Edit(Range(start, end), f"{separator}{comment_for([code])}")
    result = apply_edits(source, [edit])
    if parses(source) and not parses(result):
        return None
    if not is_suppressed(code, line, suppressions(result)):
        return None  # the "comment" landed inside a string literal
    return edit

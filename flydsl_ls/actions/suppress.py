"""Suppression comments written: the "Ignore FLY101 for this line" action (a ``# flydsl:
ignore[...]`` added or extended) and the lines of ``check --add-noqa`` (``# noqa: ...``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.suppression import (
    comment_for,
    existing_comment,
    existing_noqa,
    is_suppressed,
    noqa_codes,
    suppressions,
)
from flydsl_ls.analysis.model.text import LineIndex, Position, Range, apply_edits


def suppression_title(code: str) -> str:
    return f"Ignore {code} for this line"


def suppression_edit(source: str, line: int, code: str, index: LineIndex | None = None) -> Edit | None:
    """An edit suppressing ``code`` on ``line`` (0-based), or None when that cannot be done
    honestly: the line already ignores everything, its end is inside a string or after a
    backslash continuation, or the result would not suppress. The result parses when the
    source did: the edit only writes a comment (which the scanner of ``suppressions``
    finds outside every string), and the parser never sees comments."""
    index = index or LineIndex(source)
    if not 0 <= line < len(index.lines):
        return None
    edit = comment_edit(index, line, [code], IGNORE)
    if edit is None:
        return None
    result = apply_edits(source, [edit])
    if not is_suppressed(code, line, suppressions(result)):
        return None  # the "comment" landed inside a string literal
    return edit


@dataclass(frozen=True)
class CommentStyle:
    """One kind of suppression comment: how to find it on a line, read its codes (None: it
    names none, so it suppresses every code) and write it."""

    find: Callable[[str], re.Match | None]
    codes: Callable[[re.Match], list[str] | None]
    write: Callable[[list[str]], str]


def _ignore_codes(match: re.Match) -> list[str] | None:
    text = match.group("codes")
    return None if text is None else [c.strip().upper() for c in text.split(",") if c.strip()]


IGNORE = CommentStyle(existing_comment, _ignore_codes, comment_for)  # codes sorted
NOQA = CommentStyle(existing_noqa, noqa_codes, lambda codes: f"# noqa: {', '.join(codes)}")  # in order


def comment_edit(index: LineIndex, line: int, codes: list[str], style: CommentStyle) -> Edit | None:
    """The edit putting ``codes`` in ``line``'s comment of ``style``: the codes merged into
    one already there, else a new comment at the line's end. None when there is nothing to
    add or no comment can follow the line (a backslash continuation). Not checked: whether
    the comment lands inside a string is the caller's to find out."""
    text = index.line_text(line)
    match = style.find(text)
    if match is not None:
        existing = style.codes(match)
        if existing is None:
            return None  # a bare comment already covers every code
        merged = existing + [c for c in codes if c not in existing]
        if merged == existing:
            return None
        return Edit(Range(Position(line, match.start()), Position(line, match.end())), style.write(merged))
    body = text.rstrip()
    if body.endswith("\\"):
        return None  # a comment cannot follow a line continuation
    where = Range(Position(line, len(body)), Position(line, len(text)))
    return Edit(where, f"{'  ' if body else ''}{style.write(codes)}")

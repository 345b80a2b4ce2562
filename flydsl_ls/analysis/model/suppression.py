"""``# flydsl: ignore`` and ``# flydsl: ignore[FLY101, FLY401]`` comments."""

from __future__ import annotations

import io
import re
import tokenize

MARKER = "flydsl:"
_IGNORE = re.compile(r"#\s*flydsl:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)


def suppressions(source: str) -> dict[int, frozenset[str] | None]:
    """Suppressed codes per 0-based line; None means every code."""
    if MARKER not in source:
        return {}
    found: dict[int, frozenset[str] | None] = {}
    for line, comment in _comments(source):
        match = _IGNORE.search(comment)
        if not match:
            continue
        codes = match.group("codes")
        if codes is None:
            found[line] = None
        else:
            parsed = frozenset(c.strip().upper() for c in codes.split(",") if c.strip())
            previous = found.get(line, frozenset())
            found[line] = None if previous is None else previous | parsed
    return found


def is_suppressed(code: str, line: int, table: dict[int, frozenset[str] | None]) -> bool:
    if line not in table:
        return False
    codes = table[line]
    return codes is None or code in codes


def comment_for(codes: list[str]) -> str:
    return f"# flydsl: ignore[{', '.join(sorted(codes))}]"


def existing_comment(line_text: str) -> re.Match | None:
    """The suppression comment already on a line, to extend rather than duplicate."""
    return _IGNORE.search(line_text)


def _comments(source: str):
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT and MARKER in token.string:
                yield token.start[0] - 1, token.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return

"""Suppression comments: ``# flydsl: ignore[FLY101, FLY401]`` (bare: every code) and ruff's
``# noqa: FLY101`` (bare ``# noqa``: every code).

A directive suppresses the findings that start on its line. Only real comments count:
the same text inside a string does nothing. Comments are found with a small scanner that
skips strings (much cheaper than ``tokenize``, which the server would otherwise run on
every keystroke of a file that has a ``# noqa`` anywhere).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flydsl_ls.analysis.model.text import LineIndex

FLYDSL, NOQA = "flydsl", "noqa"
_IGNORE = re.compile(r"#\s*flydsl:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_CODE = r"[A-Za-z]+[0-9]+"
# ruff's line directive: `# noqa`, `#noqa:E501`, `# noqa: E501, FLY101` (codes separated by
# commas or blanks); `# ruff: noqa` and `# flake8: noqa` are file-level, not ours.
_NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODE}(?:(?:\s*,\s*|\s+){_CODE})*))?(?![\w])", re.IGNORECASE)
_CANDIDATE = re.compile(r"flydsl:|noqa", re.IGNORECASE)
_START = re.compile(r"[#'\"]")
_COMMENT_END = re.compile(r"[\r\n]")
_SINGLE = {q: re.compile(rf"(?:[^\\{q}\r\n]|\\(?:\r\n|.))*{q}", re.DOTALL) for q in "'\""}
_TRIPLE = {q: re.compile(rf"(?:[^\\{q}]|\\.|{q}(?!{q}{q}))*{q}{q}{q}", re.DOTALL) for q in "'\""}


@dataclass(frozen=True)
class Directive:
    """One suppression comment (columns are code points of its line)."""

    kind: str  # FLYDSL or NOQA
    line: int  # 0-based
    start: int  # the directive, e.g. `# noqa: FLY101`
    end: int
    codes: tuple[str, ...] | None  # upper-cased, as listed (duplicates kept); None: every code
    comment_start: int  # the comment holding it (it may hold more: `# type: ignore  # noqa`)
    comment_end: int

    @property
    def label(self) -> str:
        return "flydsl: ignore" if self.kind == FLYDSL else "noqa"

    def spelled(self, codes: list[str]) -> str:
        """This directive listing ``codes``."""
        if self.kind == FLYDSL:
            return comment_for(codes, sort=False)
        return f"# noqa: {', '.join(codes)}"


def directives(source: str) -> list[Directive]:
    """Every suppression directive in ``source``, in order."""
    if not _may_hold_directive(source):
        return []
    found: list[Directive] = []
    index: LineIndex | None = None
    for offset, comment in _comments(source):
        if _CANDIDATE.search(comment) is None:
            continue
        if index is None:
            index = LineIndex(source)
        line, column = index.position_at(offset)
        for kind, pattern in ((FLYDSL, _IGNORE), (NOQA, _NOQA)):
            for match in pattern.finditer(comment):
                text = match.group("codes")
                if kind == FLYDSL and text is not None:
                    codes = tuple(c.strip().upper() for c in text.split(",") if c.strip())
                elif text is not None:
                    codes = tuple(c.upper() for c in re.findall(_CODE, text))
                else:
                    codes = None
                found.append(
                    Directive(kind, line, column + match.start(), column + match.end(), codes, column, column + len(comment))
                )
    found.sort(key=lambda d: (d.line, d.start))
    return found


def _may_hold_directive(source: str) -> bool:
    """``_CANDIDATE`` is in ``source``: searched in its lower case, which is 5x faster than
    the case-blind pattern over a whole file. The pattern also takes `ſ` for an `s`."""
    lowered = source.lower()
    return "flydsl:" in lowered or "noqa" in lowered or ("\u017f" in source and _CANDIDATE.search(source) is not None)


def suppressions(source: str, found_directives: list[Directive] | None = None) -> dict[int, frozenset[str] | None]:
    """Suppressed codes per 0-based line; None means every code. ``found_directives``:
    ``directives(source)``, when the caller has them."""
    found: dict[int, frozenset[str] | None] = {}
    for directive in directives(source) if found_directives is None else found_directives:
        line = directive.line
        if directive.codes is None:
            found[line] = None
        elif line not in found or found[line] is not None:
            found[line] = found.get(line, frozenset()) | frozenset(directive.codes)
    return found


def is_suppressed(code: str, line: int, table: dict[int, frozenset[str] | None]) -> bool:
    if line not in table:
        return False
    codes = table[line]
    return codes is None or code in codes


def comment_for(codes: list[str], sort: bool = True) -> str:
    return f"# flydsl: ignore[{', '.join(sorted(codes) if sort else codes)}]"


def existing_comment(line_text: str) -> re.Match | None:
    """The suppression comment already on a line, to extend rather than duplicate."""
    return _IGNORE.search(line_text)


def existing_noqa(line_text: str) -> re.Match | None:
    """The ``# noqa`` directive already on a line (``--add-noqa`` extends it)."""
    return _NOQA.search(line_text)


def noqa_codes(match: re.Match) -> list[str] | None:
    text = match.group("codes")
    return None if text is None else [c.upper() for c in re.findall(_CODE, text)]


def _comments(source: str):
    """(offset, text) of every comment: a scan from quote to quote that steps over strings
    (an unterminated one ends at its line's end, a triple-quoted one at the end of the text)."""
    search, length = _START.search, len(source)
    pos = 0
    while True:
        match = search(source, pos)
        if match is None:
            return
        start = match.start()
        char = source[start]
        if char == "#":
            end_match = _COMMENT_END.search(source, start)
            end = end_match.start() if end_match else length
            yield start, source[start:end]
            pos = end
            continue
        if source.startswith(char * 3, start):
            body = _TRIPLE[char].match(source, start + 3)
            if body is None:
                return  # unterminated: the rest is the string
            pos = body.end()
            continue
        body = _SINGLE[char].match(source, start + 1)
        if body is None:  # unterminated: the string ends with its line
            end_match = _COMMENT_END.search(source, start)
            pos = end_match.start() if end_match else length
        else:
            pos = body.end()

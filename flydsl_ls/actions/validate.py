"""Re-parsing a fix before it is offered: Python's own parser on the smallest enclosing
statement.

Cheap enough for every fix a check offers (a code action, CLI output: libcst took a fifth
of a check of aiter's kernels), and exact about what it checks: the statement the fix
edits still parses, and every edit outside it (an added import) parses on its own.
"""

from __future__ import annotations

import ast
import textwrap
from functools import lru_cache

from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.text import LineIndex, Position, Range


def fix_parses(index: LineIndex, diagnostic: Diagnostic) -> bool:
    fix = diagnostic.fix
    if fix is None:
        return True
    statement = diagnostic.statement
    inside = [e for e in fix.edits if statement and _within(e.range, statement)]
    outside = [e for e in fix.edits if e not in inside]
    if any(not _parses_alone(e.content) for e in outside if e.content.strip()):
        return False
    if not inside:
        return True
    return _statement_parses(index, statement, inside)


# Re-parsing a statement per fix is quadratic in a statement holding thousands of fixes
# (a generated table): past this budget of characters re-parsed per statement, its fixes
# are left to the whole-file re-parse that applying them does anyway.
_BUDGET_PER_STATEMENT = 2_000_000


def without_broken_fixes(index: LineIndex, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics, each fix that would not parse withheld (with a note why)."""
    per_statement: dict = {}
    for d in diagnostics:
        if d.fix is not None and d.statement is not None:
            per_statement[d.statement] = per_statement.get(d.statement, 0) + 1
    for diagnostic in diagnostics:
        statement = diagnostic.statement
        if statement is not None:
            size = index.offset(statement.end) - index.offset(statement.start)
            if size * per_statement.get(statement, 0) > _BUDGET_PER_STATEMENT:
                continue
        if diagnostic.fix is not None and not fix_parses(index, diagnostic):
            diagnostic.note = f"fix withheld: `{diagnostic.fix.title}` would not parse"
            diagnostic.fix = None
    return diagnostics


def _within(inner: Range, outer: Range) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


@lru_cache(maxsize=1024)  # the same few import lines, added by most fixes of a file
def _parses_alone(content: str) -> bool:
    try:
        ast.parse(textwrap.dedent(content))
    except SyntaxError:
        return False
    return True


def _statement_parses(index: LineIndex, statement: Range, edits) -> bool:
    # Take whole lines so that dedent sees the statement's own indentation.
    start = Position(statement.start.line, 0)
    base = index.offset(start)
    text = index.slice(Range(start, statement.end))
    for edit in sorted(edits, key=lambda e: e.range.start, reverse=True):
        lo = index.offset(edit.range.start) - base
        hi = index.offset(edit.range.end) - base
        text = text[:lo] + edit.content + text[hi:]
    snippet = textwrap.dedent(text)
    if not snippet.endswith("\n"):
        snippet += "\n"
    code = [line for line in snippet.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if code and code[-1].rstrip().endswith(":"):  # a compound statement's header (comments may follow): a body
        snippet += "    pass\n"
    try:
        ast.parse(snippet)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


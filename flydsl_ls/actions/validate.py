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
from typing import NamedTuple

from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.statements import BLOCK_FIELDS, first_line
from flydsl_ls.analysis.model.text import LineIndex, Position, Range


def fix_parses(index: LineIndex, diagnostic: Diagnostic, tree: ast.Module | None = None) -> bool:
    """``tree``: the file's, when known: a fix editing a few statements of a large one (a
    whole function FLY302 rewrites) parses those first (``_run_parses``)."""
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
    if tree is not None and statement.end.line - statement.start.line > _NARROWED_LINES and _run_parses(index, tree, inside):
        return True
    return _statement_parses(index, statement, inside)


# Re-parsing a statement per fix is quadratic in a statement holding thousands of fixes
# (a generated table): past this budget of characters re-parsed per statement, its fixes
# are left to the whole-file re-parse that applying them does anyway.
_BUDGET_PER_STATEMENT = 2_000_000


def without_broken_fixes(index: LineIndex, diagnostics: list[Diagnostic], tree: ast.Module | None = None) -> list[Diagnostic]:
    """The diagnostics, each fix that would not parse withheld (with a note why);
    ``tree``: as ``fix_parses``."""
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
        if diagnostic.fix is not None and not fix_parses(index, diagnostic, tree):
            diagnostic.note = f"fix withheld: `{diagnostic.fix.title}` would not parse"
            diagnostic.fix = None
    return diagnostics


def _within(inner: Range, outer: Range) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


def _parses_alone(content: str) -> bool:
    return _snippet_parses(textwrap.dedent(content))  # the same few import lines, for most fixes of a file


def _statement_parses(index: LineIndex, statement: Range, edits) -> bool:
    # Whole lines, parsed at the statement's own indentation inside an `if` (dedented, a
    # statement with a line left of its first, a string's or a bracket's, did not parse).
    start = Position(statement.start.line, 0)
    base = index.offset(start)
    text = index.slice(Range(start, statement.end))
    for edit in sorted(edits, key=lambda e: e.range.start, reverse=True):
        lo = index.offset(edit.range.start) - base
        hi = index.offset(edit.range.end) - base
        text = text[:lo] + edit.content + text[hi:]
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    snippet = text if text.endswith("\n") else text + "\n"
    code = [line for line in snippet.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if code and code[-1].rstrip().endswith(":"):  # a compound statement's header (comments may follow): a body
        snippet += indent + "    pass\n"
    if indent:
        snippet = "if 1:\n" + snippet
    return _snippet_parses(snippet)


@lru_cache(maxsize=4096)  # a third of the 5,257 statements a corpus check re-parses are repeats
def _snippet_parses(snippet: str) -> bool:
    try:
        ast.parse(snippet)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True



# A statement longer than this (lines) is re-parsed whole only when the runs of statements
# its fix edits do not parse: FLY302's fixes name the whole function they rewrite, and
# re-parsing those was 1.5 MB of text for 55 fixes over the corpus (half of all re-parsing).
_NARROWED_LINES = 40


class _Run(NamedTuple):
    """Lines ``start`` to ``end`` (from 1, as the tree's) hold ``count`` whole statements of
    ``block`` at ``column``, and no other statement; ``header``: only a compound
    statement's lines before its body (decorators, the signature), which a body then
    completes (``count`` 0: the statement stays)."""

    start: int
    end: int
    column: int
    block: list
    count: int
    header: bool = False


def _run_parses(index: LineIndex, tree: ast.Module, edits) -> bool:
    """The edits grouped by the smallest runs of sibling statements holding them (a
    compound statement's header alone, for an edit there), and each run, edited, parses
    on its own, taken out at its block's indentation (each of its lines starts with it).
    Then the statement around them parses too: each run stands where complete statements
    (or a complete header) stood, at the same indentation, and ends as they did (no
    bracket, string or continued line left open). False says nothing: the statement is
    re-parsed whole."""
    groups: list[tuple[_Run, list]] = []
    for edit in sorted(edits, key=lambda e: e.range.start):
        span = _lines_of(edit)
        if groups and span[0] <= groups[-1][0].end:  # in the last run: one run for both
            run, grouped = groups.pop()
            span = (run.start, max(run.end, span[1]))
            edit_list = [*grouped, edit]
        else:
            edit_list = [edit]
        run = _run_holding(tree, *span)
        if run is None:
            return False
        while groups and run.start <= groups[-1][0].end:  # grown over the run before
            before, grouped = groups.pop()
            edit_list = [*grouped, *edit_list]
            run = _run_holding(tree, min(before.start, run.start), run.end)
            if run is None:
                return False
        groups.append((run, edit_list))
    # A block whose every statement is in runs that all came out empty would be empty.
    covered: dict[int, list] = {}  # id(block) -> [statements in runs, statements left]
    for run, grouped in groups:
        left = _edited_run_parses(index, run, grouped)
        if left is None:
            return False
        counts = covered.setdefault(id(run.block), [0, 0])
        counts[0] += run.count
        counts[1] += left
    return all(kept or len(block) > count for block, (count, kept) in ((run.block, covered[id(run.block)]) for run, _ in groups))


def _lines_of(edit) -> tuple[int, int]:
    """The first and last lines (from 1) an edit touches: one ending at a line's start (a
    statement deleted with its newline) ends on the line before."""
    start, end = edit.range
    return start.line + 1, end.line + (end.column > 0 or end.line == start.line)


def _edited_run_parses(index: LineIndex, run: _Run, edits) -> int | None:
    """How many statements ``run``, edited, leaves in its block; None: it does not parse."""
    text = index.slice(Range(Position(run.start - 1, 0), Position(run.end, 0)))
    indent = text[: run.column]
    if indent.strip(" \t") or text[run.column : run.column + 1].isspace():
        return None  # code before the run on its first line
    base = index.offset(Position(run.start - 1, 0))
    for edit in sorted(edits, key=lambda e: e.range.start, reverse=True):
        lo, hi = index.offset(edit.range.start) - base, index.offset(edit.range.end) - base
        if not 0 <= lo <= hi <= len(text):
            return None
        text = text[:lo] + edit.content + text[hi:]
    dedented = []
    for line in text.split("\n"):  # (a line ending in a lone \r keeps the next: it fails the test)
        if not line.startswith(indent) and line.strip():
            return None  # a line left of the block (or in a string): the whole statement decides
        dedented.append(line.removeprefix(indent))
    snippet = "\n".join(dedented)
    if run.header:
        snippet += "\n    pass\n"  # the body, which the edits left as it was
    try:
        return len(ast.parse(snippet).body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _run_holding(tree: ast.Module, first: int, last: int) -> _Run | None:
    """The innermost run of sibling statements whose lines hold lines ``first`` to
    ``last`` and no other statement (a body on its header's line, statements joined by
    `;`), else None; or the header of the one compound statement holding them before its
    body."""
    found = None
    block: list[ast.AST] = tree.body
    while block:
        inside = [s for s in block if s.end_lineno >= first and first_line(s) <= last]
        if not inside or first_line(inside[0]) > first or inside[-1].end_lineno < last:
            break
        at, to = block.index(inside[0]), block.index(inside[-1])
        if (at and block[at - 1].end_lineno >= first_line(inside[0])) or (
            to + 1 < len(block) and first_line(block[to + 1]) <= inside[-1].end_lineno
        ):
            break
        if isinstance(inside[0], ast.stmt):
            found = _Run(first_line(inside[0]), inside[-1].end_lineno, inside[0].col_offset, block, len(inside))
        if len(inside) > 1:
            break
        blocks = _blocks(inside[0])
        block = next((b for b in blocks if first_line(b[0]) <= first and b[-1].end_lineno >= last), [])
        # A header alone when its body is the statement's only block: any compound header
        # that takes `pass` takes that body (after an `if`'s, a `with` would not take `else:`).
        if not block and len(blocks) == 1 and isinstance(inside[0], ast.stmt):
            body = first_line(blocks[0][0])
            if found.start < body and last < body:
                return found._replace(end=body - 1, count=0, header=True)
    return found


def _blocks(node: ast.AST) -> list[list]:
    blocks = [getattr(node, name, None) for name in BLOCK_FIELDS]
    return [b for b in blocks if isinstance(b, list) and b]

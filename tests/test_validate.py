"""A fix is re-parsed (smallest enclosing statement) before it is offered."""

import ast

import pytest

from flydsl_ls.actions.validate import fix_parses, without_broken_fixes
from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.model.diagnostic import Applicability, Edit, Fix
from flydsl_ls.analysis.model.text import Position, Range

SOURCE = (
    "import flydsl.expr as fx\n"
    "def f(n):\n"
    "    for i in fx.range_constexpr(fx.Int32(8)):\n"
    "        x = fx.Int32(fx.Int32(n))\n"
    "    return x\n"
)


def _fixable():
    result = analyze(AnalysisRequest(SOURCE))
    return result.model.index, [d for d in result.diagnostics if d.fix]


def test_real_fixes_parse_in_their_statement_or_header():
    index, diagnostics = _fixable()
    assert len(diagnostics) == 2
    header, body = diagnostics
    assert (header.statement.start.line, header.statement.end.line) == (2, 3)  # the `for` header
    assert (body.statement.start.line, body.statement.end.line) == (3, 3)
    assert all(fix_parses(index, d) for d in diagnostics)


def test_a_fix_that_breaks_its_statement_is_withheld():
    index, diagnostics = _fixable()
    body = diagnostics[1]
    broken = Fix("break it", Applicability.SAFE, (Edit(body.fix.edits[0].range, "fx.Int32((n"),))
    body.fix = broken
    assert not fix_parses(index, body)
    kept = without_broken_fixes(index, diagnostics)
    assert kept[1].fix is None and "would not parse" in kept[1].note
    assert kept[0].fix is not None


def test_an_added_import_must_parse_on_its_own():
    index, diagnostics = _fixable()
    header = diagnostics[0]
    start = header.fix.edits[0].range.start
    top = Range(Position(0, 0), Position(0, 0))
    header.fix = Fix("t", Applicability.SAFE, (*header.fix.edits, Edit(top, "import (\n")))
    assert not fix_parses(index, header)
    header.fix = Fix("t", Applicability.SAFE, (Edit(Range(start, start), ""), Edit(top, "import os\n")))
    assert fix_parses(index, header)


def test_a_header_followed_by_comments_gets_a_body():
    """The header's statement runs on through the comment lines under it (real kernels
    comment a branch before its first statement): the header still parses."""
    source = (
        "import flydsl.expr as fx\n"
        "def f(n):\n"
        "    if fx.Int32(fx.Int32(n)):\n"
        "        # the first branch\n"
        "        # says what it does\n"
        "        return 1\n"
    )
    result = analyze(AnalysisRequest(source))
    [header] = [d for d in result.diagnostics if d.code == "FLY104"]
    assert header.statement.end.line > header.statement.start.line
    assert fix_parses(result.model.index, header)


# A function longer than validate._NARROWED_LINES, whose fixes name all of it (as FLY302's do).
BIG = (
    "import flydsl.expr as fx\n"
    "def build(n):\n"
    + "".join(f"    v{i} = fx.Int32(n) + {i}\n" for i in range(50))
    + "    for i in range(4):\n"
    "        acc = fx.Int32(i)\n"
    "        acc = acc + 1\n"
    "    return acc\n"
)


def _big_fix(*edits):
    """A diagnostic on ``BIG`` whose fix makes ``edits`` and names the whole function."""
    from flydsl_ls.analysis.model.diagnostic import Diagnostic

    result = analyze(AnalysisRequest(BIG))
    function = Range(Position(1, 0), Position(55, 14))
    fix = Fix("t", Applicability.UNSAFE, tuple(Edit(Range(Position(*a), Position(*b)), text) for a, b, text in edits))
    return result.model, Diagnostic("FLY302", "m", function, fix=fix, statement=function)


@pytest.mark.parametrize(
    "edits, parses",
    [
        ([((53, 14), (53, 22), "fx.Int64")], True),  # in the loop's body
        ([((53, 14), (53, 22), "fx.Int64(")], False),
        ([((52, 4), (55, 0), "with fx.scope():\n        acc = 0\n")], True),  # the loop replaced
        ([((52, 4), (55, 0), "with fx.scope():\n    acc = 0\n")], False),  # its body left of it
        ([((54, 0), (54, 8), "acc = acc + 1")], False),  # a line moved out of the loop: `return` then dedents to nothing
        ([((1, 0), (1, 0), "@fx.jit\n"), ((53, 14), (53, 22), "fx.Int64")], True),  # a decorator, and the body
        ([((1, 0), (1, 0), "@fx.jit(\n")], False),
        ([((1, 0), (1, 0), "@fx.jit\n"), ((2, 0), (3, 0), "")], True),  # a statement deleted with its newline
        ([((53, 0), (55, 0), "")], False),  # every statement of the loop's body deleted
        ([((53, 0), (54, 0), ""), ((54, 0), (55, 0), "")], False),  # the same, one edit each
        ([((53, 0), (54, 0), "")], True),  # one of two
    ],
)
def test_a_long_statements_fix_parses_as_its_whole_statement_does(edits, parses):
    """A fix in a long statement is parsed in the runs of statements it edits (a header
    alone, with a body after it): the answer is the whole statement's."""
    from flydsl_ls.actions import validate

    model, diagnostic = _big_fix(*edits)
    inside = list(diagnostic.fix.edits)
    assert validate._statement_parses(model.index, diagnostic.statement, inside) is parses
    assert fix_parses(model.index, diagnostic, model.tree) is parses
    if parses:  # and it was the runs that said so
        assert validate._run_parses(model.index, model.tree, inside)


@pytest.mark.parametrize(
    "header, parses",
    [
        ("    with fx.scope():", False),  # a `with` takes no `else:`
        ("    while fx.Int32(n) > 0:", True),  # a `while` does
        ("    if fx.Int32(n) > 1:", True),
    ],
)
def test_a_header_edited_in_a_statement_with_other_clauses_is_parsed_with_them(header, parses):
    """Only a statement whose body is its only block has its header parsed alone (with a
    `pass` body): the `if` below has an `else:`, which a `with` header would not take."""
    from flydsl_ls.actions import validate
    from flydsl_ls.analysis.model.diagnostic import Diagnostic

    source = (
        "import flydsl.expr as fx\n"
        "def build(n):\n"
        + "".join(f"    v{i} = fx.Int32(n) + {i}\n" for i in range(45))
        + "    if fx.Int32(n) > 0:\n"
        "        acc = 1\n"
        "    else:\n"
        "        acc = 2\n"
        "    return acc\n"
    )
    result = analyze(AnalysisRequest(source))
    line = 47  # the `if` (0-based)
    old = source.splitlines()[line]
    edit = Edit(Range(Position(line, 0), Position(line, len(old))), header)
    function = Range(Position(1, 0), Position(line + 4, 14))
    diagnostic = Diagnostic("FLY302", "m", function, fix=Fix("t", Applicability.UNSAFE, (edit,)), statement=function)
    assert validate._statement_parses(result.model.index, function, [edit]) is parses
    assert fix_parses(result.model.index, diagnostic, result.model.tree) is parses


@pytest.mark.parametrize(
    "continued",
    ['    y = g(x, """\nabc""")\n', "    y = g(\nx)\n", "    if g(x, '''\nabc'''):\n        x = 1\n"],
    ids=["string", "bracket", "header"],
)
def test_a_statement_with_a_line_left_of_its_first_parses(continued):
    """A string's or a bracket's line at column 0 inside an indented statement: Python
    parses it in place, so must the check (dedented, it did not, and the fix was withheld)."""
    from flydsl_ls.actions import validate

    source = "def f(x):\n" + continued + "    return x\n"
    model = analyze(AnalysisRequest(source)).model
    statement = model.tree.body[0].body[0]
    last = statement.test if isinstance(statement, ast.If) else statement  # a header: to its colon
    end = Position(last.end_lineno - 1, last.end_col_offset + isinstance(statement, ast.If))
    where = Range(Position(statement.lineno - 1, statement.col_offset), end)
    assert validate._statement_parses(model.index, where, [])
    broken = Edit(Range(Position(1, 4), Position(1, 5)), "(")
    assert not validate._statement_parses(model.index, where, [broken])

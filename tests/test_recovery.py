"""A half-typed statement: the file's other findings stay, the syntax error is where it is.

The fixtures reproduce what the real kernels showed (benchmarks/bench_typing.py): a line
typed inside a nested kernel body, a line cut in the middle of an expression, an unclosed
call, and a half-typed parameter in a multi-line signature, where the error is reported
on the line after the one being typed or at a bracket opened lines before.
"""

from __future__ import annotations

import ast

import pytest

from flydsl_ls.actions.fixes import fix_all
from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.analysis.model import recovery

KERNEL = '''\
import flydsl.expr as fx
from flydsl.expr import arith, gpu
from flydsl.expr.arith import ArithValue


@fx.kernel
def kernel(
    A: fx.Tensor,
    n: fx.Int32,
    m: fx.Int32,
):
    tid = fx.Int32(fx.thread_idx.x)

    def body(i: fx.Int32):
        a = ArithValue(i) + 1
        b = ArithValue(tid) * 2
        return a + b

    for k in range(4):
        c = ArithValue(n) + k
        d = gpu.thread_id("x") + 1
        A[k] = body(c) + d + m
    return arith.index_cast(fx.T.index, n)


def helper(v: fx.Int32):
    return ArithValue(v) + 1
'''

LINES = KERNEL.splitlines(keepends=True)


def line_of(text: str) -> int:
    return next(i for i, row in enumerate(LINES) if text in row)


def insert_after(line: int, typed: str) -> str:
    indent = LINES[line][: len(LINES[line]) - len(LINES[line].lstrip())]
    return "".join(LINES[: line + 1] + [indent + typed + "\n"] + LINES[line + 1 :])


def replace_line(line: int, new: str) -> str:
    return "".join(LINES[:line] + [new + "\n"] + LINES[line + 1 :])


def findings(text: str) -> list[tuple[str, int, int]]:
    return [(d.code, d.range.start.line, d.range.start.column) for d in analyze(AnalysisRequest(text)).diagnostics]


CLEAN = findings(KERNEL)

EDITS = {
    # name: (broken text, the edited line, lines inserted there)
    "assign in a nested body": (insert_after(line_of("b = ArithValue(tid)"), "x = "), line_of("b = ArithValue(tid)") + 1, 1),
    "assign in a loop": (insert_after(line_of("c = ArithValue(n)"), "x = "), line_of("c = ArithValue(n)") + 1, 1),
    "truncated expression": (replace_line(line_of("A[k] = body"), "        A[k] = body(c) +"), line_of("A[k] = body"), 0),
    "unclosed call": (insert_after(line_of("d = gpu.thread_id"), "foo("), line_of("d = gpu.thread_id") + 1, 1),
    "assign among parameters": (insert_after(line_of("n: fx.Int32,"), "x = "), line_of("n: fx.Int32,") + 1, 1),
    "unclosed call among parameters": (insert_after(line_of("n: fx.Int32,"), "foo("), line_of("n: fx.Int32,") + 1, 1),
}


def test_the_fixture_has_findings_in_every_part():
    lines = {line for _, line, _ in CLEAN}
    for text in ("a = ArithValue(i)", "b = ArithValue(tid)", "c = ArithValue(n)", "d = gpu.thread_id", "index_cast", "return ArithValue(v)"):
        assert line_of(text) in lines, text


@pytest.mark.parametrize("name", EDITS)
def test_a_half_typed_statement_keeps_the_other_findings(name):
    text, edited, inserted = EDITS[name]
    expected = sorted(
        (code, line + inserted if line >= edited and inserted else line, col)
        for code, line, col in CLEAN
        if line != edited or inserted
    )
    got = findings(text)
    assert sorted(f for f in got if f[0] != "FLY000") == expected
    with pytest.raises(SyntaxError) as error:
        ast.parse(text)
    assert [f for f in got if f[0] == "FLY000"] == [("FLY000", error.value.lineno - 1, error.value.offset - 1)]


@pytest.mark.parametrize("name", EDITS)
def test_the_repair_replaces_only_the_broken_statement(name):
    text, edited, inserted = EDITS[name]
    with pytest.raises(SyntaxError) as error:
        ast.parse(text)
    repair = recovery.repair(text, error.value)
    assert repair is not None
    assert repair.first == repair.last == edited
    assert repair.text.count("\n") == text.count("\n")
    ast.parse(repair.text)


def test_findings_on_the_replaced_lines_are_dropped():
    line = line_of("c = ArithValue(n)")
    text = replace_line(line, "        c = ArithValue(n) +")
    got = findings(text)
    assert not [f for f in got if f[1] == line and f[0] != "FLY000"]
    assert ("FLY000", line, len("        c = ArithValue(n) +")) in got
    assert len(got) == len(CLEAN)  # the FLY101 there gave way to the syntax error


def test_a_broken_file_offers_no_fix_and_fix_all_leaves_it_alone():
    text = EDITS["assign in a loop"][0]
    assert any(d.fix is not None for d in analyze(AnalysisRequest(KERNEL)).diagnostics)
    result = analyze(AnalysisRequest(text))
    assert result.model is None
    assert all(d.fix is None for d in result.diagnostics)
    outcome = fix_all(text, lambda t: analyze(AnalysisRequest(t)).diagnostics, unsafe=True)
    assert outcome.text == text


def test_an_unrepairable_file_reports_the_syntax_error_alone():
    text = KERNEL + "x = (\n" * 40
    assert [d.code for d in analyze(AnalysisRequest(text)).diagnostics] == ["FLY000"]


@pytest.mark.parametrize("name", EDITS)
def test_incremental_agrees_and_hover_has_no_model_on_the_stand_in(name):
    text, edited, _ = EDITS[name]
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(KERNEL))
    assert analyzer.analyze(AnalysisRequest(text)).diagnostics == analyze(AnalysisRequest(text)).diagnostics
    assert analyzer.repaired == (edited, edited)
    assert analyzer.model_at(edited) is None
    assert analyzer.model_at(line_of("return ArithValue(v)")) is not None
    assert analyzer.analyze(AnalysisRequest(KERNEL)).diagnostics == analyze(AnalysisRequest(KERNEL)).diagnostics
    assert analyzer.repaired is None

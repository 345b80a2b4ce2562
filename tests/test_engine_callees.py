"""A rule's ``callees`` (the calls the engine hands its ``visit_Call``) and its
``symbol_reads`` (the names it hands its ``visit_Name``) never hide a finding: each rule that
declares them finds the same with them as when it is handed every call and every name, over
the code of every rule's cases."""

from __future__ import annotations

import ast

import pytest

from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.rules import ALL_RULES
from flydsl_ls.analysis.rules.base import Callees, Rule
from tests.rule_cases import CaseProject, all_cases, options

FILTERED = [rule for rule in ALL_RULES if rule.callees is not None]
SYMBOL_READERS = [rule for rule in ALL_RULES if rule.symbol_reads]


def _findings(rule, source: str, settings: dict, project: CaseProject | None) -> list[tuple]:
    where = {} if project is None else project.request()
    result = analyze(AnalysisRequest(source, rules=[rule], options=options(settings), **where))
    assert not result.internal_errors, result.internal_errors
    return [(d.code, d.message, d.range, d.fix) for d in result.diagnostics]


def test_most_call_rules_declare_their_callees():
    assert len(FILTERED) >= 14, [rule.code for rule in FILTERED]


@pytest.mark.parametrize(
    ("rule", "declared"),
    [(rule, "callees") for rule in FILTERED] + [(rule, "symbol_reads") for rule in SYMBOL_READERS],
    ids=lambda value: value.code if isinstance(value, type) else value,
)
def test_declared_filters_hide_no_finding(rule, declared, tmp_path, monkeypatch):
    checked = found = 0
    for other, _kind, index, case in all_cases():
        source = case.code
        try:
            ast.parse(source)
        except SyntaxError:
            continue
        files = getattr(case, "files", {})
        project = CaseProject(tmp_path / f"{other.code}-{_kind}-{index}", files, source) if files else None
        settings = case.settings
        with_callees = _findings(rule, source, settings, project)
        monkeypatch.setattr(rule, declared, None if declared == "callees" else False)
        every_call = _findings(rule, source, settings, project)
        monkeypatch.undo()
        assert with_callees == every_call, (other.code, _kind, index)
        checked += 1
        found += bool(every_call)
    assert checked > 100 and found > 0  # the rule's own cases are among them


def test_the_name_rules_declare_symbol_reads():
    assert {rule.code for rule in SYMBOL_READERS} == {"FLY503", "FLY901"}


def test_callees_take_symbols_modules_and_prefixes():
    callees = Callees(symbols=frozenset({"fx.a.b"}), modules=frozenset({"mlir.math"}), prefixes=("shim.buffer_ops.",))
    assert callees.take("fx.a.b") and not callees.take("fx.a.bc")
    assert callees.take("mlir.math.exp2") and not callees.take("mlir.math") and not callees.take("mlir.mathx.exp2")
    assert callees.take("shim.buffer_ops.buffer_load") and not callees.take("shim.vector.load")


class _BrokenOnCalls(Rule):  # fails on the first call or name it is handed
    code = "FLY999"
    visits = 0

    def visit_Call(self, node):
        type(self).visits += 1
        raise ValueError("broken")

    def visit_Name(self, node):
        type(self).visits += 1
        raise KeyError("broken")


def test_a_crashing_rule_is_dropped_and_the_others_still_report():
    from flydsl_ls.analysis.rules.fly101_arith_value_wrapper import ArithValueWrapper

    source = "from flydsl.expr.arith import ArithValue\n\ndef f(x):\n    a = ArithValue(x)\n    return ArithValue(a)\n"
    alone = analyze(AnalysisRequest(source, rules=[ArithValueWrapper])).diagnostics
    _BrokenOnCalls.visits = 0
    result = analyze(AnalysisRequest(source, rules=[_BrokenOnCalls, ArithValueWrapper]))
    assert [d.message for d in result.diagnostics] == [d.message for d in alone] and len(alone) == 2
    assert _BrokenOnCalls.visits == 1  # not asked again after it failed
    assert len(result.internal_errors) == 1
    assert result.internal_errors[0].startswith("FLY999 crashed at line ")

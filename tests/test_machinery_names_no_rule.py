"""Whole-module rules declare what of a file they judge (``Rule.module_scope``); the shared
incremental machinery reads the declaration and never names a rule (issue 17)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import flydsl_ls
from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.analysis.incremental.module_policies import WholeModule, policy_for
from flydsl_ls.analysis.rules import ALL_RULES
from flydsl_ls.analysis.rules.base import Rule
from flydsl_ls.analysis.rules.context import AnalysisOptions
from flydsl_ls.analysis.rules.module_scope import ModuleScope

SHARED = ("chunks", "chunk_graph", "chunk_results", "module_policies", "analyzer", "engine", "tracking")
ROOT = Path(flydsl_ls.__file__).parent / "analysis"


def _shared_module(name: str) -> Path:
    found = list(ROOT.rglob(f"{name}.py"))  # wherever the layers put it
    assert len(found) == 1, found
    return found[0]


def _rule_imports(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if ".rules.fly" in a.name]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if ".rules.fly" in f".{module}":
                found.append(module)
            elif module.endswith("rules"):
                found += [f"{module}.{a.name}" for a in node.names if a.name.startswith("fly")]
    return found


@pytest.mark.parametrize("name", SHARED)
def test_shared_machinery_names_no_rule(name):
    text = _shared_module(name).read_text(encoding="utf-8")
    assert not re.findall(r"FLY\d{3}", text)
    assert not _rule_imports(ast.parse(text))


def test_a_whole_module_rule_without_a_scope_sees_the_whole_file():
    class Undeclared(Rule):
        code = "X901"

        def visit_Module(self, node):
            pass

    assert isinstance(policy_for(Undeclared), WholeModule)
    declared = {r.code for r in ALL_RULES if hasattr(r, "visit_Module") and r.module_scope is not None}
    assert {"FLY203", "FLY402"} <= declared


class _ToyConstants(Rule):
    """Flags module-level ``TOY_*`` constants; judges only the statements naming one."""

    code = "X902"
    name = "toy-constants"
    module_scope = ModuleScope(lambda text, statements: "TOY_" in text)

    def visit_Module(self, node):
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(getattr(t, "id", "").startswith("TOY_") for t in stmt.targets):
                self.report(stmt, "toy constant")


def test_a_declared_scope_is_interpreted_by_the_machinery():
    functions = "".join(f"\n\ndef f_{i}(x):\n    return x + {i}\n" for i in range(6))
    text = f"TOY_A = 1\n{functions}\nTOY_B = f_2(TOY_A)\n"
    analyzer = IncrementalAnalyzer()
    for edited in (text, text.replace("x + 4", "x + 44"), text.replace("TOY_B = f_2", "\nTOY_B = f_2")):
        mine = analyzer.analyze(AnalysisRequest(edited, rules=[_ToyConstants], options=AnalysisOptions()))
        assert mine.diagnostics == analyze(AnalysisRequest(edited, rules=[_ToyConstants])).diagnostics
        assert len(mine.diagnostics) == 2
        if edited is not text and "x + 44" in edited:
            assert analyzer.reanalysed == 0  # f_4 is outside its core, readers and neighbours

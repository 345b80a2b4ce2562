"""Running a rule's embedded VALID/INVALID cases (shared by the rule tests and hypothesis)."""

from __future__ import annotations

from flydsl_ls.actions.fixes import fix_all
from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.rules import ALL_RULES
from flydsl_ls.analysis.rules.context import AnalysisOptions


def options(settings: dict) -> AnalysisOptions:
    return AnalysisOptions(**settings)


def diagnostics(code: str, source: str, settings: dict | None = None):
    result = analyze(AnalysisRequest(source, options=options(settings or {})))
    assert not result.internal_errors, result.internal_errors
    return [d for d in result.diagnostics if d.code == code]


def fixed(code: str, source: str, unsafe: bool, settings: dict | None = None) -> str:
    return fix_all(
        source, lambda text: diagnostics(code, text, settings), unsafe=unsafe
    ).text


def all_cases():
    for rule in ALL_RULES:
        for index, case in enumerate(rule.VALID):
            yield rule, "valid", index, case
        for index, case in enumerate(rule.INVALID):
            yield rule, "invalid", index, case

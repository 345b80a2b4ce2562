"""Every rule's embedded cases: what is flagged, where, and the exact fixed text."""

import pytest

from flydsl_ls.actions.fixes import parses
from flydsl_ls.analysis.rules import ALL_RULES
from tests.rule_cases import CaseProject, all_cases, diagnostics, fixed

CASES = list(all_cases())


@pytest.mark.parametrize(
    "rule,kind,index,case", CASES, ids=[f"{r.code}-{k}-{i}" for r, k, i, _ in CASES]
)
def test_case(rule, kind, index, case, tmp_path):
    project = CaseProject(tmp_path, case.files, case.code) if getattr(case, "files", None) else None
    found = diagnostics(rule.code, case.code, case.settings, project)
    if kind == "valid":
        assert found == [], [d.message for d in found]
        return
    assert len(found) == case.count, [d.message for d in found]
    first = found[0]
    if case.line is not None:
        assert first.range.start.line + 1 == case.line
    if case.column is not None:
        assert first.range.start.column + 1 == case.column
    if case.message is not None:
        assert case.message in first.message
    safe_result = fixed(rule.code, case.code, unsafe=False, settings=case.settings, project=project)
    if case.expected is None:
        assert all(d.fix is None for d in found), "case says no fix, but one is offered"
        return
    if case.unsafe:
        assert safe_result == case.code, "an unsafe-only case must not change under safe fixes"
        result = fixed(rule.code, case.code, unsafe=True, settings=case.settings, project=project)
    else:
        result = safe_result
    assert result == case.expected
    assert parses(result)
    if project is not None:  # the other files, as the fix left them (only those it edits)
        assert project.after() == case.expected_files
    # Idempotent: fixing the fixed text changes nothing (here or in the other files).
    assert fixed(rule.code, result, unsafe=case.unsafe, settings=case.settings, project=project) == result
    if project is not None:
        assert project.after() == case.expected_files


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_is_documented_and_tested(rule):
    assert rule.code.startswith("FLY") and len(rule.code) == 6
    assert rule.name and rule.name == rule.name.lower() and " " not in rule.name
    assert rule.summary and rule.replacement and rule.fix_safety
    assert len(rule.explanation()) > 80
    assert rule.VALID and rule.INVALID


def test_codes_and_names_are_unique():
    assert len({r.code for r in ALL_RULES}) == len(ALL_RULES)
    assert len({r.name for r in ALL_RULES}) == len(ALL_RULES)


def test_only_code_to_migrate_is_struck_through():
    """The Deprecated tag (strikethrough) marks code the guides retire; a construct they keep
    is reported as information, without it."""
    source = (
        "from flydsl.expr import arith\n"
        "def f(a, b):\n"
        "    kept = arith.MulFOp(a, b, fastmath=arith.FastMathFlags.fast).result\n"
        "    return arith.addf(kept, b)\n"
    )
    found = {d.message.split(":")[0]: d for d in diagnostics("FLY301", source)}
    kept = found["`arith.MulFOp(...).result` carries `fastmath=arith.FastMathFlags.fast`"]
    legacy = found["`arith.addf(...)` is a raw arith op"]
    assert (kept.severity.value, kept.deprecated) == ("information", False)
    assert (legacy.severity.value, legacy.deprecated) == ("warning", True)
    # FLY305's metadata-carrying store and FLY601's intrinsic with no atom: kept, information.
    store = "from flydsl._mlir.dialects import llvm\ndef f(v, p):\n    llvm.StoreOp(v, p, alignment=4, nontemporal=True)\n"
    (kept_store,) = diagnostics("FLY305", store)
    assert (kept_store.severity.value, kept_store.deprecated) == ("information", False)
    mfma = "from flydsl.expr import rocdl\ndef f(ty, ops):\n    return rocdl.mfma_f32_32x32x16_bf8_fp8(ty, ops)\n"
    (kept_mfma,) = diagnostics("FLY601", mfma)
    assert (kept_mfma.severity.value, kept_mfma.deprecated) == ("information", False)

"""Diagnostics cross processes (a worker's results) and runs (the CLI cache) pickled flat:
what comes back equals what went, down to the types of its ranges and of its fixes' edits."""

from __future__ import annotations

import ast
import pickle

from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.model.text import Position, Range
from tests.rule_cases import CaseProject, all_cases, options


def _ranges(diagnostic) -> list:
    found = [diagnostic.range, diagnostic.statement]
    if diagnostic.fix is not None:
        found += [edit.range for edit in diagnostic.fix.edits]
        found += [edit.range for other in diagnostic.fix.elsewhere for edit in other.edits]
    return [r for r in found if r is not None]


def test_every_rule_case_finding_comes_back_from_pickling_equal(tmp_path):
    checked = fixes = 0
    for rule, kind, index, case in all_cases():
        if kind != "invalid":
            continue
        try:
            ast.parse(case.code)
        except SyntaxError:
            continue
        files = getattr(case, "files", {})
        project = CaseProject(tmp_path / f"{rule.code}-{index}", files, case.code) if files else None
        where = {} if project is None else project.request()
        found = analyze(AnalysisRequest(case.code, options=options(case.settings), **where)).diagnostics
        for diagnostic in found:
            diagnostic.sort_key()  # kept on the object: not pickled, made again when asked
            back = pickle.loads(pickle.dumps(diagnostic, protocol=pickle.HIGHEST_PROTOCOL))
            assert back == diagnostic and back.identity() == diagnostic.identity(), (rule.code, index)
            assert back.sort_key() == diagnostic.sort_key()
            for before, after in zip(_ranges(diagnostic), _ranges(back), strict=True):
                assert type(after) is Range and type(after.start) is Position and after == before
            if back.fix is not None:
                assert hash(back.fix) == hash(diagnostic.fix)
                fixes += 1
            checked += 1
    assert checked > 300 and fixes > 100

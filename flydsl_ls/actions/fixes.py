"""Applying fixes: non-overlapping, re-parsed before they are kept, repeated to a fixpoint."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from flydsl_ls.analysis.diagnostic import Applicability, Diagnostic, Edit, Fix
from flydsl_ls.actions.imports import cleanup_edits
from flydsl_ls.analysis.text import LineIndex, apply_edits

MAX_PASSES = 10


@dataclass
class FixOutcome:
    text: str
    applied: dict[str, int] = field(default_factory=dict)  # per rule code
    rejected: list[str] = field(default_factory=list)  # fixes dropped because they broke parsing

    @property
    def count(self) -> int:
        return sum(self.applied.values())


def wanted(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def apply_edits_once(text: str, fixes: Iterable[tuple[str, Fix]]) -> tuple[str, dict[str, int]]:
    """Apply every fix whose edits do not overlap an earlier one; identical edits (the
    same import added by two fixes) are applied once."""
    index = LineIndex(text)
    taken: list[tuple[int, int]] = []
    planned: dict[tuple[int, int, str], None] = {}
    applied: dict[str, int] = {}
    ordered = sorted(fixes, key=lambda item: min((e.range.start for e in item[1].edits), default=None))
    for code, fix in ordered:
        spans = [(index.offset(e.range.start), index.offset(e.range.end), e.content) for e in fix.edits]
        new = [s for s in spans if s not in planned]
        if any(_overlaps(s, t) for s in new for t in taken):
            continue
        for span in new:
            planned[span] = None
            taken.append(span[:2])
        applied[code] = applied.get(code, 0) + 1
    for start, end, content in sorted(planned, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def _overlaps(a: tuple, b: tuple[int, int]) -> bool:
    a_start, a_end = a[0], a[1]
    b_start, b_end = b
    if a_start == a_end or b_start == b_end:  # insertions conflict only strictly inside
        return b_start < a_start < b_end or a_start < b_start < a_end
    return a_start < b_end and b_start < a_end


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_all(
    text: str,
    lint: Callable[[str], list[Diagnostic]],
    *,
    unsafe: bool = False,
    codes: set[str] | None = None,
) -> FixOutcome:
    """Apply fixes until none is left (or MAX_PASSES); never keep a result that does not
    parse: a pass that breaks parsing is retried one fix at a time."""
    outcome = FixOutcome(text)
    for _ in range(MAX_PASSES):
        fixes = [
            (d.code, d.fix)
            for d in lint(outcome.text)
            if wanted(d.fix, unsafe) and (codes is None or d.code in codes)
        ]
        if not fixes:
            break
        candidate, applied = apply_edits_once(outcome.text, fixes)
        if candidate == outcome.text:
            break
        if not parses(candidate):
            candidate, applied = _one_at_a_time(outcome, fixes)
            if not applied:
                break
        outcome.text = candidate
        for code, count in applied.items():
            outcome.applied[code] = outcome.applied.get(code, 0) + count
    if outcome.count:
        outcome.text = without_stale_imports(text, outcome.text)
    return outcome


def without_stale_imports(before: str, after: str) -> str:
    """``after`` minus the imports that only the applied fixes had made unused."""
    cleaned = apply_edits(after, cleanup_edits(before, after))
    return cleaned if parses(cleaned) else after


def apply_fix(text: str, fix: Fix) -> str | None:
    """The text after one quick fix and its import clean-up; None if it would not parse."""
    candidate, applied = apply_edits_once(text, [("", fix)])
    if not applied or not parses(candidate):
        return None
    return without_stale_imports(text, candidate)


def _one_at_a_time(outcome: FixOutcome, fixes: list[tuple[str, Fix]]):
    """Keep the fixes that parse on their own; combine them if that still parses."""
    good = []
    for code, fix in fixes:
        alone, done = apply_edits_once(outcome.text, [(code, fix)])
        if done and parses(alone):
            good.append((code, fix))
        else:
            outcome.rejected.append(f"{code}: {fix.title}")
    if not good:
        return outcome.text, {}
    combined, applied = apply_edits_once(outcome.text, good)
    if parses(combined):
        return combined, applied
    return apply_edits_once(outcome.text, good[:1])


def edits_of(diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> list[Edit]:
    """The edits of every wanted fix, for one-shot application by an editor."""
    return [e for d in diagnostics if wanted(d.fix, unsafe) for e in d.fix.edits]

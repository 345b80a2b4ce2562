"""Applying fixes: non-overlapping, re-parsed before they are kept, repeated to a fixpoint.

Every fix ``fix_all`` meets is named by a :class:`FixKey`: its rule code and its
diagnostic's span mapped back to the text the fixpoint started from (through the edits of
the earlier passes). The key of a finding is the same in every run that reaches it, so a
run can be told which fixes to apply (``accept``), e.g. all but the ones a compile showed
to change the IR (actions/fix_verify.py). A finding inside text that another fix wrote maps
to that fix's span.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from flydsl_ls.actions.elsewhere import OtherFiles, Pending
from flydsl_ls.actions.imports import cleanup_edits
from flydsl_ls.analysis.model.deep import on_deep_stack
from flydsl_ls.analysis.model.diagnostic import Applicability, Diagnostic, Edit, Fix
from flydsl_ls.analysis.model.parsing import parse
from flydsl_ls.analysis.model.text import LineIndex, apply_edits

MAX_PASSES = 60  # one rule per pass (see fix_all), a few rounds each


class FixKey(NamedTuple):
    """A fix, by its rule code and its diagnostic's span in the original text (offsets)."""

    code: str
    start: int
    end: int


Span = tuple[int, int, str]  # (start, end, new text): one replacement, offsets in the text it edits


class Origins:
    """Maps offsets of the text after some passes back to the text before the first pass.
    An offset inside text a replacement wrote maps to the replaced span's start (or, with
    ``right``, its end)."""

    def __init__(self) -> None:
        self._passes: list[list[tuple[int, int, int]]] = []

    def add(self, spans: Iterable[Span]) -> None:
        self._passes.append(sorted((start, end, len(new)) for start, end, new in spans))

    def back(self, offset: int, right: bool = False) -> int:
        for spans in reversed(self._passes):
            offset = self._back_one(spans, offset, right)
        return offset

    @staticmethod
    def _back_one(spans: list[tuple[int, int, int]], offset: int, right: bool) -> int:
        """``right``: ``offset`` ends a range (what is before it matters), else it starts
        one (what is after it matters)."""
        shift = 0
        for start, end, length in spans:
            new_start = start + shift
            if offset < new_start:
                break
            new_end = new_start + length
            if offset == new_start:
                # a range ending here ends before the new text; one starting here starts
                # in it, or (nothing written) after the removed text
                return start if right or length else end
            if offset < new_end:
                return end if right else start
            if offset == new_end:
                return end
            shift += length - (end - start)
        return offset - shift


@dataclass
class FixOutcome:
    text: str
    applied: dict[str, int] = field(default_factory=dict)  # per rule code
    rejected: list[str] = field(default_factory=list)  # fixes dropped because they broke parsing
    # Every wanted fix met in any pass (accepted or not), in the order met: key -> title.
    found: dict[FixKey, str] = field(default_factory=dict)
    keys: list[FixKey] = field(default_factory=list)  # the fixes applied, in the order applied

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
    same import added by two fixes) are applied once. A fix that edits other files too is
    left out: it is applied whole or not at all (``fix_all`` with ``others``)."""
    spans, taken = _plan(text, [(code, fix, None) for code, fix in fixes], Pending(None))
    return _replace(text, spans), _counts(taken)


def _plan(
    text: str, fixes: list[tuple[str, Fix, object]], pending: Pending
) -> tuple[list[Span], list[tuple[str, Fix, object]]]:
    """The replacements of the fixes that do not overlap an earlier one, and those fixes;
    their edits of other files go to ``pending``."""
    index = LineIndex(text)
    taken: list[Span] = []
    planned: dict[Span, None] = {}
    chosen: list[tuple[str, Fix, object]] = []
    ordered = sorted(fixes, key=lambda item: min((e.range.start for e in item[1].edits), default=None))
    for item in ordered:
        spans = [(index.offset(e.range.start), index.offset(e.range.end), e.content) for e in item[1].edits]
        new = [s for s in spans if s not in planned]
        if any(_overlaps(s, t) for s in new for t in taken) or not pending.take(item[1]):
            continue
        for span in new:
            planned[span] = None
            taken.append(span)
        chosen.append(item)
    return sorted(planned, key=lambda s: (s[0], s[1])), chosen


def _replace(text: str, spans: list[Span]) -> str:
    for start, end, content in reversed(spans):
        text = text[:start] + content + text[end:]
    return text


def _counts(taken: Iterable[tuple[str, Fix, object]]) -> dict[str, int]:
    applied: dict[str, int] = {}
    for code, _fix, _key in taken:
        applied[code] = applied.get(code, 0) + 1
    return applied


def _overlaps(a: Span, b: Span) -> bool:
    a_start, a_end, a_text = a
    b_start, b_end, b_text = b
    if a_start == a_end and b_start == b_end and a_start == b_start:
        # Two fixes inserting at one point: the order of their texts is no one's choice
        # (`.ir_value()` after `)`, `).ir_value()` after `x`). Whole lines (imports) are
        # independent; otherwise the later fix waits for the next pass, linted anew.
        return not (a_text.endswith("\n") and b_text.endswith("\n"))
    if a_start == a_end or b_start == b_end:  # insertions conflict only strictly inside
        return b_start < a_start < b_end or a_start < b_start < a_end
    return a_start < b_end and b_start < a_end


def parses(text: str) -> bool:
    try:
        try:
            parse(text)
        except RecursionError:
            on_deep_stack(lambda: parse(text))  # valid, only deeper than the recursion limit
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_all(
    text: str,
    lint: Callable[[str], list[Diagnostic]],
    *,
    unsafe: bool = False,
    codes: set[str] | None = None,
    accept: Callable[[FixKey], bool] | None = None,
    others: OtherFiles | None = None,
) -> FixOutcome:
    """Apply fixes until none is left (or MAX_PASSES); never keep a result that does not
    parse: a pass that breaks parsing is retried one fix at a time. ``accept``: apply only
    the fixes whose :class:`FixKey` it accepts (all are recorded in ``found``). ``others``:
    where the fixes' edits of other files go (without it, such fixes are not applied)."""
    outcome = FixOutcome(text)
    origins = Origins()
    for _ in range(MAX_PASSES):
        current = outcome.text
        index = LineIndex(current)
        fixes: list[tuple[str, Fix, object]] = []
        for d in lint(current):
            if not wanted(d.fix, unsafe) or (codes is not None and d.code not in codes):
                continue
            key = FixKey(
                d.code,
                origins.back(index.offset(d.range.start)),
                origins.back(index.offset(d.range.end), right=True),
            )
            outcome.found.setdefault(key, d.fix.title)
            if accept is None or accept(key):
                fixes.append((d.code, d.fix, key))
        if not fixes:
            break
        # One rule per pass: a fix is decided on the text it was linted on, and another
        # rule's fix in the same pass can change the facts it relied on (FLY301 makes a
        # value fx where FLY102 found it raw and dropped an unwrap a raw builder needed).
        first = min(code for code, _fix, _key in fixes)
        fixes = [item for item in fixes if item[0] == first]
        pending = Pending(others)
        spans, taken = _plan(current, fixes, pending)
        candidate = _replace(current, spans)
        if candidate == current and not pending.texts:
            break
        if not parses(candidate):
            spans, taken, pending = _one_at_a_time(outcome, fixes, others)
            if not taken:
                break
            candidate = _replace(current, spans)
        pending.commit()
        origins.add(spans)
        outcome.text = candidate
        for code, count in _counts(taken).items():
            outcome.applied[code] = outcome.applied.get(code, 0) + count
        outcome.keys.extend(key for _code, _fix, key in taken)
    if outcome.count:
        outcome.text = without_stale_imports(text, outcome.text)
    return outcome


def without_stale_imports(before: str, after: str) -> str:
    """``after`` minus the imports that only the applied fixes had made unused."""
    cleaned = apply_edits(after, cleanup_edits(before, after))
    return cleaned if parses(cleaned) else after


def apply_fix(text: str, fix: Fix, others: OtherFiles | None = None) -> str | None:
    """The text after one quick fix and its import clean-up; None if it would not parse.
    ``others``: where its edits of other files go (without it, such a fix gives None)."""
    pending = Pending(others)
    spans, taken = _plan(text, [("", fix, None)], pending)
    candidate = _replace(text, spans)
    if not taken or not parses(candidate):
        return None
    pending.commit()
    return without_stale_imports(text, candidate)


def _one_at_a_time(outcome: FixOutcome, fixes: list[tuple[str, Fix, object]], others: OtherFiles | None):
    """Keep the fixes that parse on their own; combine them if that still parses.
    Returns (replacements, fixes taken, their other-file edits) on ``outcome.text``."""
    good = []
    for item in fixes:
        spans, taken = _plan(outcome.text, [item], Pending(others))
        if taken and parses(_replace(outcome.text, spans)):
            good.append(item)
        else:
            outcome.rejected.append(f"{item[0]}: {item[1].title}")
    if not good:
        return [], [], Pending(others)
    pending = Pending(others)
    spans, taken = _plan(outcome.text, good, pending)
    if parses(_replace(outcome.text, spans)):
        return spans, taken, pending
    pending = Pending(others)
    return (*_plan(outcome.text, good[:1], pending), pending)


def edits_of(diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> list[Edit]:
    """The edits of every wanted fix, for one-shot application by an editor (not those
    that edit other files too: half of one must not be applied)."""
    return [e for d in diagnostics if wanted(d.fix, unsafe) and not d.fix.elsewhere for e in d.fix.edits]

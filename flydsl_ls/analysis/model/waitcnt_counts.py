"""A wait whose bitfield is no constant but counts one unknown: `_waitcnt_vm_n(ctx.NUM_DMA_V)`,
`s_waitcnt(_encode_waitcnt(vmcnt=loads))`, `s_waitcnt((n & 0xF) | 0x0F70 | ...)` of a
parameter `n`. The bitfield is evaluated for every count the counter can hold; when each one
waits on exactly that count (and on the same other counters), the keyword form can name the
unknown itself: `fx.rocdl.s_waitcnt(vmcnt=ctx.NUM_DMA_V)`. Model-layer facts for FLY401."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from flydsl_ls.analysis.model import waitcnt
from flydsl_ls.analysis.model.locate import encloses
from flydsl_ls.analysis.model.waitcnt_facts import WaitcntFacts

_CANDIDATES = 6  # unknowns tried per wait (each costs one evaluation per count)


@dataclass(frozen=True)
class CountedWait:
    counter: str  # the counter the unknown counts
    unknown: ast.expr  # the expression to pass as that counter
    others: dict  # the other counters waited on, whatever the count
    exact: bool  # FlyDSL's encoder gives the same bitfield for every count
    assumed: frozenset  # helpers of other modules whose body was taken on trust

    def keywords(self, spelled: str) -> str:
        parts = []
        for counter in waitcnt.COUNTERS:
            if counter == self.counter:
                parts.append(f"{counter}={spelled}")
            elif counter in self.others:
                parts.append(f"{counter}={self.others[counter]}")
        return ", ".join(parts)


def counted_wait(facts: WaitcntFacts, call: ast.Call, function, layout: waitcnt.Layout) -> CountedWait | None:
    """The one unknown of ``call``'s bitfield, when the bitfield counts it (see the module)."""
    for key, unknown in _unknowns(facts, call, function):
        for counter in ("vmcnt", "lgkmcnt"):
            found = _counts(facts, call, key, unknown, counter, layout)
            if found is not None:
                return found
    return None


def _counts(facts, call, key, unknown, counter, layout) -> CountedWait | None:
    top = layout.maximum(counter)
    others, exact, assumed = None, True, frozenset()
    for count in range(top + 1):
        facts.hole = (key, count)
        try:
            site = facts.site(call)
        finally:
            facts.hole = None
        if site is None or site.value is None:
            return None
        decoded = waitcnt.decode(layout, site.value.bits)
        if decoded is None:
            return None
        waits = dict(decoded.waits)
        if waits.pop(counter, top) != count or (others is not None and waits != others):
            return None
        others = waits
        exact = exact and decoded.exact
        assumed |= site.value.assumed
    return CountedWait(counter, unknown, others, exact, assumed)


def _unknowns(facts: WaitcntFacts, call: ast.Call, function):
    """(hole key, expression) for each unknown the bitfield reads: expressions inside the call
    (their text is valid where the call is), and parameters of the function the call is in,
    also when read through that function's single assignments."""
    seen, found = set(), []
    pending = [*call.args, *(k.value for k in call.keywords)]
    while pending and len(found) < _CANDIDATES:
        expr = pending.pop(0)
        if isinstance(expr, ast.Constant):
            continue
        if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
            # The whole arithmetic first (`ctx.NUM_DMA_K + ctx.NUM_DMA_V` is one count), then its parts.
            if encloses(call, expr) and facts.value(expr) is None and facts.hole_key(expr) not in seen:
                seen.add(facts.hole_key(expr))
                found.append((facts.hole_key(expr), expr))
            pending.extend(c for c in ast.iter_child_nodes(expr) if isinstance(c, ast.expr))
            continue
        if isinstance(expr, ast.Call) and (facts.is_encoder_call(expr) or facts.helper_called(expr)):
            pending.extend([*expr.args, *(k.value for k in expr.keywords)])
            continue
        if isinstance(expr, ast.Name):
            binding = facts.model.binding_of(expr)
            if binding is not None and binding.kind == "param":
                if binding.scope.node is not function or len(binding.scope.bindings[binding.name]) != 1:
                    continue
            elif binding is not None and binding.kind == "assign" and binding.value is not None:
                if binding.scope.node is function and len(binding.scope.bindings[binding.name]) == 1:
                    if facts.value(expr) is None:
                        pending.append(binding.value)
                    continue
        if not encloses(call, expr) and not isinstance(expr, ast.Name):
            continue
        key = facts.hole_key(expr)
        if key[0] == "node" and not encloses(call, expr):
            continue
        if key not in seen and facts.value(expr) is None:
            seen.add(key)
            found.append((key, expr))
    return found


"""A wait whose bitfield is no constant but counts one unknown: `_waitcnt_vm_n(ctx.NUM_DMA_V)`,
`s_waitcnt(_encode_waitcnt(vmcnt=loads))`, `s_waitcnt((n & 0xF) | 0x0F70 | ...)` of a
parameter `n`. The bitfield is evaluated for every count the counter can hold; when each one
waits on exactly that count (and on the same other counters), the keyword form can name the
unknown itself: `fx.rocdl.s_waitcnt(vmcnt=ctx.NUM_DMA_V)`. A raw count handed over as the
bitfield, `s_waitcnt(num_loads)`, counts vmcnt only up to 15 on CDNA (16 carries into expcnt):
it is counted over that part of the range, which the wait reports. Model-layer facts for FLY401."""

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
    upto: int | None = None  # the last count it counts, when not the counter's maximum
    spill: str = ""  # what the bitfield waits for at ``upto + 1`` (keywords)

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
    partial = None  # counted over part of the range only: taken when nothing counts over all of it
    for key, unknown in _unknowns(facts, call, function):
        for counter in ("vmcnt", "lgkmcnt"):
            found = _counts(facts, call, key, unknown, counter, layout)
            if found is not None and found.upto is None:
                return found
            if found is not None and _is_count(facts, unknown):
                partial = partial or found
    return partial


_COUNTING = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)


def _is_count(facts: WaitcntFacts, expr: ast.expr) -> bool:
    """A value handed over whole as the bitfield is taken for a count only when it is one:
    sums, products and quotients (``(tile_n * tile_k) // threads // 16``), directly or through
    the name's single assignment; a magic field (``traits.LGKMCNT_0_ONLY``) or a bare
    parameter may be an encoded bitfield."""
    if isinstance(expr, ast.Name):
        binding = facts.model.binding_of(expr)
        if binding is None or binding.kind != "assign" or binding.value is None:
            return False
        if len(binding.scope.bindings.get(binding.name, ())) != 1:
            return False
        expr = binding.value
    if not isinstance(expr, ast.BinOp):
        return False
    pending = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, _COUNTING):
                return False
            pending += [node.left, node.right]
        elif not isinstance(node, (ast.Name, ast.Constant, ast.Attribute)):
            return False
    return True


def _counts(facts, call, key, unknown, counter, layout) -> CountedWait | None:
    """Counted for 0..maximum, or for 0..k only: a raw count handed over as the bitfield
    (`s_waitcnt(num_loads)`) counts vmcnt's low field, then carries into expcnt."""
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
            if count < 2:
                return None
            return CountedWait(counter, unknown, others, exact, assumed, count - 1, decoded.keywords or "no wait")
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


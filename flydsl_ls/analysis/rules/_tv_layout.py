"""Thread and value layouts behind a hand-built TV layout (FLY603).

`fx.make_layout_tv(thr, val)` is `composition(right_inverse(raked_product(thr, val)),
(T, V):(1, T))` with `T = size(thr)`, `V = size(val)`. For one-to-one `thr` of shape
`(Tm, Tn)` and `val` of shape `(Vm, Vn)` the raked product sends tile coordinate
`(vm + Vm*tm, vn + Vn*tn)` to `thr(tm, tn) + T*val(vm, vn)`, so its inverse sends thread
`t = thr(tm, tn)`, value `v = val(vm, vn)` to tile element `(vm + Vm*tm) + M*(vn + Vn*tn)`
of the `(M, N) = (Vm*Tm, Vn*Tn)` tile: every thread gets a Vm x Vn block and the threads
step over the tile by (Vm, Vn). `decompose` reads a layout written by hand that way.

Sizes are monomials: an int times build-time names the rule cannot evaluate (`_e_vec`).
Each name is a shape of the layout, so at least 1; a monomial that divides or equals
another does so for every value of the names, and so does what is derived from them.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections import Counter
from dataclasses import dataclass

from flydsl_ls.analysis.model.fxtypes import PY_INT
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.rules._buffer_access import int_value


@dataclass(frozen=True)
class Mono:
    coef: int
    names: tuple = ()  # sorted keys of the names multiplied in: (name, where it was bound)

    def __mul__(self, other: Mono) -> Mono:
        return Mono(self.coef * other.coef, tuple(sorted(self.names + other.names)))

    def divides(self, other: Mono) -> bool:
        return (
            self.coef != 0
            and other.coef % self.coef == 0
            and not Counter(self.names) - Counter(other.names)
        )

    def __floordiv__(self, other: Mono) -> Mono:  # exact: only after `other.divides(self)`
        return Mono(self.coef // other.coef, tuple(sorted((Counter(self.names) - Counter(other.names)).elements())))


ONE = Mono(1)


def monomial(model: SemanticModel, expr: ast.expr, depth: int = 0) -> Mono | None:
    """``expr`` as a monomial: a build-time int, a name (bound once to a monomial, or kept
    as a name unless it is known to hold something else than a Python int), or a product /
    exact quotient of those."""
    value = int_value(model, expr)
    if value is not None:
        return Mono(value) if value >= 0 else None
    if depth > 4:
        return None
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        if not bindings:
            return None
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            found = monomial(model, bindings[0].value, depth + 1)
            if found is not None:
                return found
        kind = model.type_of(expr)
        if kind.known and kind.name != PY_INT:
            return None  # an IR value: make_layout_tv takes static layouts only
        return Mono(1, ((expr.id, tuple(sorted(b.position for b in bindings))),))
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.FloorDiv)):
        left, right = monomial(model, expr.left, depth + 1), monomial(model, expr.right, depth + 1)
        if left is None or right is None:
            return None
        if isinstance(expr.op, ast.Mult):
            return left * right
        return left // right if right.divides(left) else None
    return None


@dataclass(frozen=True)
class Leaf:
    """One mode of the layout: ``size`` elements ``stride`` apart, the ``pos``-th thread
    (or value) index onwards; ``size_text``/``pos_text`` are the factors to print."""

    size: Mono
    stride: Mono
    pos: Mono
    size_text: tuple
    pos_text: tuple


@dataclass
class Decomposition:
    thr: list  # per axis (M, N), the thread layout's flat modes: stride = thread index
    val: list
    tile: tuple  # (M, N) monomials of make_layout_tv's tile


@dataclass
class Failure:
    reason: str


def leaves(model: SemanticModel, shape: ast.expr, stride: ast.expr, text) -> list[Leaf] | None:
    """The flat modes of one (shape, stride) mode, in index order, with their positions."""
    flat: list[tuple[ast.expr, ast.expr]] = []

    def walk(sh: ast.expr, st: ast.expr) -> bool:
        if isinstance(sh, ast.Tuple):
            if not (isinstance(st, ast.Tuple) and len(st.elts) == len(sh.elts)):
                return False
            return all(walk(a, b) for a, b in zip(sh.elts, st.elts))
        if isinstance(st, ast.Tuple):
            return False
        flat.append((sh, st))
        return True

    if not walk(shape, stride):
        return None
    out, pos, pos_text = [], ONE, ()
    for sh, st in flat:
        size, step = monomial(model, sh), monomial(model, st)
        if size is None or step is None or size.coef == 0:
            return None
        out.append(Leaf(size, step, pos, (text(sh),), pos_text))
        pos, pos_text = pos * size, pos_text + (text(sh),)
    return out


def decompose(thread: list[Leaf], value: list[Leaf], tile: tuple) -> Decomposition | Failure:
    """Thread and value layouts whose make_layout_tv maps every (thread, value) where these
    flat modes do in an (M, N) tile (N may be None: unknown)."""
    big_m, big_n = tile
    shapes = Counter(n for leaf in thread + value for n in leaf.size.names)
    if any(n not in shapes for leaf in thread + value for n in leaf.stride.names):
        return Failure("a stride is a name that is no shape of the layout")
    sides: dict[str, list] = {"thread": ([], []), "value": ([], [])}  # type: ignore[dict-item]
    for kind, group in (("thread", thread), ("value", value)):
        for leaf in group:
            if leaf.size == ONE:
                continue
            placed = _place(leaf, big_m)
            if placed is None:
                return Failure(f"its mode {_show(leaf.size)}:{_show(leaf.stride)} runs across the tile's M = {_show(big_m)}")
            for axis, piece in placed:
                sides[kind][axis].append(piece)
    modes, extents = {"thread": [], "value": []}, []
    for axis, name in ((0, "M"), (1, "N")):
        cur = ONE
        for kind in ("value", "thread"):
            pool, order = list(sides[kind][axis]), []
            while (nxt := next((p for p in pool if p.stride == cur), None)) is not None:
                pool.remove(nxt)
                order.append(nxt)
                cur = cur * nxt.size
            if pool:
                return Failure(
                    f"the {kind}s do not step over the tile's {name} by whole blocks (mode "
                    f"{_show(pool[0].size)}:{_show(pool[0].stride)} along {name})"
                )
            modes[kind].append(order)
        extents.append(cur)
    if extents[0] != big_m:
        return Failure(f"it covers {_show(extents[0])} of the tile's M = {_show(big_m)}")
    return Decomposition(modes["thread"], modes["value"], tuple(extents))


def _place(leaf: Leaf, big_m: Mono) -> list | None:
    """Where a flat mode lands in the (M, N) tile: along M (stride d), along N (stride d/M),
    or split in two when its steps wrap M exactly."""
    size, stride = leaf.size, leaf.stride
    if big_m.divides(stride):
        return [(1, Leaf(size, stride // big_m, leaf.pos, leaf.size_text, leaf.pos_text))]
    if (stride * size).divides(big_m):
        return [(0, leaf)]
    if stride.divides(big_m) and not (size.names or big_m.names or stride.names):
        rows = big_m // stride
        if rows.divides(size):
            rest = size // rows
            pos = leaf.pos * rows
            return [
                (0, Leaf(rows, stride, leaf.pos, (str(rows.coef),), leaf.pos_text)),
                (1, Leaf(rest, ONE, pos, (str(rest.coef),), leaf.pos_text + (str(rows.coef),))),
            ]
    return None


def layout_text(modes: list) -> str:
    """`(shape), (stride)` text of a rank-2 layout with these flat modes per axis; modes one
    after the other in index order are merged."""
    shapes, strides = [], []
    for order in modes:
        merged: list[Leaf] = []
        for leaf in order:
            last = merged[-1] if merged else None
            if last is not None and leaf.pos == last.pos * last.size:
                merged[-1] = Leaf(last.size * leaf.size, last.stride, last.pos, last.size_text + leaf.size_text, last.pos_text)
            else:
                merged.append(leaf)
        sizes = [_product(leaf.size_text) for leaf in merged] or ["1"]
        steps = [_product(leaf.pos_text) for leaf in merged] or ["1"]
        shapes.append(sizes[0] if len(sizes) == 1 else f"({', '.join(sizes)})")
        strides.append(steps[0] if len(steps) == 1 else f"({', '.join(steps)})")
    return f"({', '.join(shapes)}), ({', '.join(strides)})"


def _product(factors: tuple) -> str:
    numbers = [int(f) for f in factors if f.isdigit()]
    others = [f if _atomic(f) else f"({f})" for f in factors if not f.isdigit()]
    number = math.prod(numbers)
    if not others:
        return str(number)
    return " * ".join(([str(number)] if number != 1 else []) + others)


def _atomic(text: str) -> bool:
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    return not isinstance(node, (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.UnaryOp))


def _show(mono: Mono) -> str:
    return " * ".join(([str(mono.coef)] if mono.coef != 1 or not mono.names else []) + [n for n, _ in mono.names])


# --- static layouts: the mapping itself, and why no thread/value layouts give it --------------
MAX_PAIRS = 1 << 16  # (thread, value) pairs enumerated at most, while typing


def pairs(group: list[Leaf]) -> int:
    return math.prod(leaf.size.coef for leaf in group)


def table(group: list[Leaf]) -> list[int]:
    """The index each (colexicographic) coordinate of static flat modes maps to."""
    values = [0]
    for leaf in group:
        values = [v + i * leaf.stride.coef for i in range(leaf.size.coef) for v in values]
    return values


def layout_tv_table(thr: list[tuple[list, list]], val: list[tuple[list, list]], big_m: int) -> dict:
    """(t, v) -> tile element of make_layout_tv(thr, val), both one-to-one rank-2 layouts
    given as per-axis (sizes, strides): thread thr(tm, tn) and value val(vm, vn) sit at
    (vm + Vm*tm) + M*(vn + Vn*tn)."""
    def points(axes):
        m_sizes, n_sizes = math.prod(axes[0][0]), math.prod(axes[1][0])
        grid = {}
        for i, j in itertools.product(range(m_sizes), range(n_sizes)):
            index = _flat(axes[0], i) + _flat(axes[1], j)
            grid[index] = (i, j)
        return grid, m_sizes, n_sizes

    threads, _, _ = points(thr)
    values, vm, vn = points(val)
    return {
        (t, v): (a + vm * tm) + big_m * (b + vn * tn)
        for t, (tm, tn) in threads.items()
        for v, (a, b) in values.items()
    }


def _flat(axis: tuple[list, list], coord: int) -> int:
    total = 0
    for size, stride in zip(*axis):
        total, coord = total + (coord % size) * stride, coord // size
    return total


def why_none(thread: list[Leaf], value: list[Leaf], big_m: int, big_n: int | None) -> str:
    """Why no one-to-one thread/value layouts give this static layout (of at most
    MAX_PAIRS pairs) in an (M, N) tile."""
    threads, values = table(thread), table(value)
    count = len(threads) * len(values)
    if big_n is not None and count != big_m * big_n:
        return (
            f"it pairs {len(threads)} threads x {len(values)} values but the tile has {big_m} x {big_n} "
            "elements, and make_layout_tv's tile has exactly one element per pair"
        )
    seen: dict[int, tuple] = {}
    for (t, a), (v, b) in itertools.product(enumerate(threads), enumerate(values)):
        if a + b in seen:
            (t0, v0) = seen[a + b]
            return (
                f"thread {t0} value {v0} and thread {t} value {v} share tile element {a + b}; "
                "make_layout_tv gives every pair its own element"
            )
        seen[a + b] = (t, v)
    where = ", ".join(f"({b % big_m}, {b // big_m})" for b in values[:4]) + (", ..." if len(values) > 4 else "")
    value_set, thread_set = set(values), set(threads)
    blocks = [
        (vm, len(values) // vm)
        for vm in range(1, big_m + 1)
        if big_m % vm == 0 and len(values) % vm == 0
        and value_set == {a + big_m * b for a in range(vm) for b in range(len(values) // vm)}
    ]
    if not blocks:
        return (
            f"thread 0's values sit at tile (m, n) {where}: not a block of neighbouring elements, "
            "and make_layout_tv gives each thread a Vm x Vn block"
        )
    for vm, vn in blocks:
        tm = big_m // vm
        if len(threads) % tm == 0 and thread_set == {
            vm * a + big_m * vn * b for a in range(tm) for b in range(len(threads) // tm)
        }:
            return "its threads and values fit a make_layout_tv tile, but no layout form of them was found"
    vm, vn = blocks[0]
    tm = big_m // vm
    if len(threads) % tm:
        return f"its {len(threads)} threads do not fill whole columns of the {tm} threads a {vm} x {vn} block per thread needs along M = {big_m}"
    grid = {vm * a + big_m * vn * b for a in range(tm) for b in range(len(threads) // tm)}
    t, start = next(((t, a) for t, a in enumerate(threads) if a not in grid), (0, threads[0]))
    return (
        f"each thread's values form a {vm} x {vn} block, but thread {t} starts at tile (m, n) "
        f"({start % big_m}, {start // big_m}), off the grid of ({vm}, {vn}) steps make_layout_tv puts the threads on"
    )


def matches(thread: list[Leaf], value: list[Leaf], found: Decomposition, big_m: int) -> bool:
    """Whether make_layout_tv of the static layouts found maps every (thread, value) where
    the layout written by hand does."""
    def axes(modes):
        return [([leaf.size.coef for leaf in order], [leaf.pos.coef for leaf in order]) for order in modes]

    made = layout_tv_table(axes(found.thr), axes(found.val), big_m)
    threads, values = table(thread), table(value)
    return len(made) == len(threads) * len(values) and all(
        made.get((t, v)) == a + b for (t, a), (v, b) in itertools.product(enumerate(threads), enumerate(values))
    )

"""The values a Python int operand can take, as far as the source says: literals, names bound
only to such values, loops over `range`/`range_constexpr` of them, and `+`, `-`, `*` of them.

FlyDSL types `fx.Int32(x) + n` by the value of `n` (an Int64 past i32), so a type that rests
on an int whose values are not known here is not known either (`promotion.python_class`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flydsl_ls.analysis.model.semantic import SemanticModel

Bounds = tuple[int, int]
_RANGES = {"fx.range_constexpr", "flyc.range_constexpr"}
_MAX_DEPTH = 8


def int_bounds(model: SemanticModel, expr: ast.expr, depth: int = 0) -> Bounds | None:
    """(lowest, highest) value of the Python int ``expr``, or None when it cannot be read."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.Constant):
        return (expr.value, expr.value) if type(expr.value) is int else None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        inner = int_bounds(model, expr.operand, depth + 1)
        if inner is None or isinstance(expr.op, ast.UAdd):
            return inner
        return (-inner[1], -inner[0])
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult)):
        left, right = int_bounds(model, expr.left, depth + 1), int_bounds(model, expr.right, depth + 1)
        if left is None or right is None:
            return None
        if isinstance(expr.op, ast.Add):
            return (left[0] + right[0], left[1] + right[1])
        if isinstance(expr.op, ast.Sub):
            return (left[0] - right[1], left[1] - right[0])
        corners = [a * b for a in left for b in right]
        return (min(corners), max(corners))
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        found = [_binding_bounds(model, b, depth + 1) for b in bindings]
        if not found or None in found:
            return None
        return (min(b[0] for b in found), max(b[1] for b in found))
    return None


def _binding_bounds(model: SemanticModel, binding, depth: int) -> Bounds | None:
    if binding.kind in ("assign", "annassign", "walrus") and binding.value is not None:
        return int_bounds(model, binding.value, depth)
    loop = binding.iter
    if binding.kind == "for" and isinstance(loop, ast.Call) and loop.args and not loop.keywords:
        callee = loop.func
        is_range = model.resolve(callee) in _RANGES or (
            isinstance(callee, ast.Name) and callee.id == "range" and model.binding_of(callee) is None
        )
        ends = [int_bounds(model, a, depth) for a in loop.args[:2]]
        if is_range and None not in ends:
            if len(ends) == 1:
                ends.append((0, 0))
            return (min(e[0] for e in ends), max(e[1] for e in ends))  # the hull of start and stop
    return None

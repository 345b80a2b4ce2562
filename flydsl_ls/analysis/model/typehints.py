"""The types worth showing beside assigned names (the server's inlay hints): what the model
infers for the IR values of a kernel, ``tid: Int32``, ``c: ir.Value i32``.

Only the values that live in the IR are labelled (fx scalars, vectors and tensors,
``ArithValue``s, raw ``ir.Value``s); Python values and the types the model cannot tell get
no label, and neither does a name whose right-hand side already spells its type
(``x = fx.Int32(...)``, ``x.to(fx.Int32)``) or that is annotated.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from flydsl_ls.analysis.model import fxtypes as T
from flydsl_ls.analysis.model.fxtypes import FxType
from flydsl_ls.analysis.model.rawtypes import element_type, mlir_spelling
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.text import Position

_LABELS = {T.VECTOR: "Vector", T.TENSOR: "Tensor"}
_WITH_ELEMENT = {T.RAW: "ir.Value", T.ARITH_VALUE: "ArithValue"}


@dataclass(frozen=True)
class TypeHint:
    position: Position  # just after the name
    label: str  # "Int32", "ir.Value i32"
    origin: str  # how the type was inferred, as hover says it


def type_hints(model: SemanticModel, first: Position, last: Position) -> list[TypeHint]:
    """The hints of the names assigned between ``first`` and ``last``, in source order."""
    hints: list[TypeHint] = []
    for node in _assignments(model.tree, first.line + 1, last.line + 1):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for name, value in _named_values(target, node.value):
                hint = _hint(model, name, value)
                if hint is not None and first <= hint.position <= last:
                    hints.append(hint)
    hints.sort(key=lambda h: h.position)
    return hints


def _assignments(tree: ast.Module, start: int, end: int):
    """The assignments and walruses on lines ``start``..``end`` (1-based): only the nodes
    whose lines reach into them are walked (a viewport of a 6,000-line file)."""
    stack: list[ast.AST] = [tree]
    while stack:
        for child in ast.iter_child_nodes(stack.pop()):
            line = getattr(child, "lineno", None)
            if line is not None:
                if line > end or child.end_lineno < start:
                    continue
                if isinstance(child, (ast.Assign, ast.NamedExpr)):
                    yield child
            stack.append(child)


def _named_values(target: ast.expr, value: ast.expr):
    """(name, the value it gets) of a target: a name, or a tuple unpacking a tuple of the
    same length (``a, b = x, y``)."""
    if isinstance(target, ast.Name):
        yield target, value
    elif (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (ast.Tuple, ast.List))
        and len(target.elts) == len(value.elts)
        and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))
    ):
        for element, element_value in zip(target.elts, value.elts):
            yield from _named_values(element, element_value)


def _hint(model: SemanticModel, name: ast.Name, value: ast.expr) -> TypeHint | None:
    kind = model.type_of(value)
    label = _label(model, kind, value)
    if label is None or _spelled(model, kind, value):
        return None
    position = model.index.from_ast(name.end_lineno, name.end_col_offset)
    return TypeHint(position, label, kind.describe())


def _label(model: SemanticModel, kind: FxType, value: ast.expr) -> str | None:
    if kind.is_fx_scalar:
        return kind.name.removeprefix("fx.")
    if kind.name in _LABELS:
        return _LABELS[kind.name]
    if kind.name in _WITH_ELEMENT:
        element = element_type(model, value)
        base = _WITH_ELEMENT[kind.name]
        return f"{base} {mlir_spelling(element)}" if element else base
    return None


def _spelled(model: SemanticModel, kind: FxType, value: ast.expr) -> bool:
    """The right-hand side names the type itself: ``fx.Int32(...)``, ``fx.Vector.filled(...)``,
    ``v.to(fx.Int32)``."""
    if not isinstance(value, ast.Call) or not kind.name.startswith("fx."):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr == "to" and len(value.args) == 1:
        return model.resolve(value.args[0]) == kind.name
    symbol = model.resolve(func) or ""
    return symbol == kind.name or symbol.startswith(kind.name + ".")

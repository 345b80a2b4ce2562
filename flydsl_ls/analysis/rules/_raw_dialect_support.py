"""Shared by the raw-dialect rules (FLY301 arith, FLY303 vector, FLY304 math).

- Operator text with correct parentheses (``arith.addi(a, b)`` -> ``a + b``), keeping every
  operand's source text verbatim.
- MLIR type expressions (``T.f32``, ``T.f32()``, ``T.i32x4``, ``T.vec(4, T.f16)``,
  ``ir.F32Type.get()``, ``ir.VectorType.get([4], T.f32)``) read as fx dtypes.
- Whether a call's result may change Python type safely: a fix that turns a raw
  ``ArithValue`` result into a typed ``fx.Int32``/``fx.Boolean``/``fx.Vector`` is
  behaviour-preserving only where every use of the result accepts both.
- The ``fastmath=`` keep case.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from pathlib import PurePath
from typing import TYPE_CHECKING

from flydsl_ls.analysis.model import fxtypes as T
from flydsl_ls.analysis.model.rawtypes import fx_type_of_mlir_type
from flydsl_ls.analysis.model.semantic import is_raw_op

if TYPE_CHECKING:
    from flydsl_ls.analysis.model.semantic import SemanticModel
    from flydsl_ls.analysis.rules.base import Rule

# --- precedence ---------------------------------------------------------------
ATOM = 16
_BINOP_PREC = {
    ast.BitOr: 7,
    ast.BitXor: 8,
    ast.BitAnd: 9,
    ast.LShift: 10,
    ast.RShift: 10,
    ast.Add: 11,
    ast.Sub: 11,
    ast.Mult: 12,
    ast.Div: 12,
    ast.FloorDiv: 12,
    ast.Mod: 12,
    ast.MatMult: 12,
    ast.Pow: 14,
}
OPERATOR_PREC = {
    "|": 7, "^": 8, "&": 9, "<<": 10, ">>": 10, "+": 11, "-": 11,
    "*": 12, "/": 12, "//": 12, "%": 12,
    "<": 6, "<=": 6, ">": 6, ">=": 6, "==": 6, "!=": 6,
}
COMPARE = 6
UNARY = 13


def precedence(node: ast.AST) -> int:
    if isinstance(node, ast.NamedExpr):
        return 0
    if isinstance(node, ast.Lambda):
        return 1
    if isinstance(node, ast.IfExp):
        return 2
    if isinstance(node, ast.BoolOp):
        return 3 if isinstance(node.op, ast.Or) else 4
    if isinstance(node, ast.UnaryOp):
        return 5 if isinstance(node.op, ast.Not) else UNARY
    if isinstance(node, ast.Compare):
        return COMPARE
    if isinstance(node, ast.BinOp):
        return _BINOP_PREC[type(node.op)]
    if isinstance(node, ast.Await):
        return 15
    if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Starred)):
        return -1
    if isinstance(node, ast.Tuple):
        return ATOM if _parenthesised_tuple(node) else -1
    return ATOM


def _parenthesised_tuple(node: ast.Tuple) -> bool:
    # ``(a, b)`` starts at the parenthesis: the first element starts after it.
    return not node.elts or (node.elts[0].lineno, node.elts[0].col_offset) != (node.lineno, node.col_offset)


def operand(rule: Rule, node: ast.expr, op_prec: int, right: bool) -> str:
    """Source of ``node`` as the left/right operand of an operator of ``op_prec``."""
    text = rule.text(node)
    prec = precedence(node)
    if prec < op_prec or (prec == op_prec and (right or op_prec == COMPARE)):
        return f"({text})"
    return text


def receiver(rule: Rule, node: ast.expr) -> str:
    """Source of ``node`` fit to stand before ``.method(...)``."""
    text = rule.text(node)
    if precedence(node) < ATOM or (
        isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex))
    ):
        return f"({text})"
    return text


def binary(rule: Rule, op: str, left: ast.expr, right: ast.expr) -> str:
    prec = OPERATOR_PREC[op]
    return f"{operand(rule, left, prec, False)} {op} {operand(rule, right, prec, True)}"


def in_context(text: str, prec: int, replaced: ast.AST, parent: ast.AST | None) -> str:
    """``text`` (an expression of precedence ``prec``) fit to stand where ``replaced`` stood."""
    if prec >= ATOM:  # a call/subscript: its own brackets hold any line breaks
        return text
    if "\n" in text or not _accepts(prec, replaced, parent):
        return f"({text})"
    return text


def _accepts(prec: int, replaced: ast.AST, parent: ast.AST | None) -> bool:
    if prec >= ATOM:
        return True
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr, ast.keyword)):
        return True
    if isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp, ast.Dict, ast.comprehension,
                           ast.FormattedValue, ast.Slice, ast.List, ast.Set, ast.Tuple)):
        return prec > 2
    if isinstance(parent, ast.Subscript):
        return replaced is not parent.value
    if isinstance(parent, ast.Call):
        return replaced is not parent.func
    if isinstance(parent, ast.BinOp):
        if isinstance(parent.op, ast.Pow):
            return False
        parent_prec = _BINOP_PREC[type(parent.op)]
        return prec > parent_prec or (prec == parent_prec and parent.left is replaced)
    if isinstance(parent, (ast.Compare, ast.BoolOp, ast.UnaryOp)):
        return prec > precedence(parent)
    return False


COMMENTS_WHY = " (no fix: the call holds comments, which the typed form would drop)"


def comments_dropped(rule: Rule, node: ast.AST, kept: list[ast.AST]) -> bool:
    """Would replacing ``node`` by text built from ``kept`` lose a comment?"""
    text = rule.text(node)
    if "#" not in text:
        return False
    return _comments(text) > sum(_comments(rule.text(k)) for k in kept)


def _comments(text: str) -> int:
    try:
        tokens = tokenize.generate_tokens(io.StringIO(f"({text}\n)").readline)
        return sum(1 for t in tokens if t.type == tokenize.COMMENT)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text.count("#")


# --- MLIR type expressions --------------------------------------------------------
_T_VECTOR_ATTR = re.compile(r"^(i8|i16|i32|i64|f16|bf16|f32|f64)x(\d+)$")
_EXTRA_SCALARS = {
    "i128": "fx.Int128",
    "f8E4M3FN": "fx.Float8E4M3FN",
    "f8E5M2": "fx.Float8E5M2",
    "f8E4M3FNUZ": "fx.Float8E4M3FNUZ",
    "f8E4M3": "fx.Float8E4M3",
    "f8E4M3B11FNUZ": "fx.Float8E4M3B11FNUZ",
    "f8E8M0FNU": "fx.Float8E8M0FNU",
}


def scalar_dtype(model: SemanticModel, expr: ast.expr, depth: int = 0) -> str | None:
    """fx class (``fx.Float32``) of a scalar MLIR type expression, else None."""
    if isinstance(expr, ast.Name) and depth < 3:
        value = _constant_value(model, expr)
        return scalar_dtype(model, value, depth + 1) if value is not None else None
    found = fx_type_of_mlir_type(model, expr)
    if found:
        return found
    target = expr.func if isinstance(expr, ast.Call) and not expr.args else expr
    symbol = model.resolve(target) or ""
    if symbol.startswith("fx.T."):
        return _EXTRA_SCALARS.get(symbol[len("fx.T."):])
    if (isinstance(expr, ast.Call) and len(expr.args) == 1
            and model.resolve(expr.func) == "mlir.ir.IntegerType.get_signless"):
        width = int_literal(model, expr.args[0])
        if width in (1, 8, 16, 32, 64, 128):
            return "fx.Boolean" if width == 1 else f"fx.Int{width}"
    if isinstance(expr, ast.Attribute) and expr.attr == "ir_type":
        owner = model.resolve(expr.value) or ""
        if owner.startswith("fx.") and T.is_numeric_class(owner[3:]):
            return owner
    return None


def vector_dtype(model: SemanticModel, expr: ast.expr, depth: int = 0) -> tuple[str | None, ast.expr | int | None] | None:
    """(fx element class, element count: a literal int or the count's expression) of a
    1-D MLIR vector type expression; None when ``expr`` is not recognisably one."""
    if isinstance(expr, ast.Name) and depth < 3:
        value = _constant_value(model, expr)
        if value is None:
            return None
        found = vector_dtype(model, value, depth + 1)
        if found is None:
            return None
        element, count = found
        return element, count if isinstance(count, int) else None  # the count's text is elsewhere
    symbol = model.resolve(expr) or ""
    match = _T_VECTOR_ATTR.match(symbol[len("fx.T."):]) if symbol.startswith("fx.T.") else None
    if match:
        return fx_type_of_mlir_type_name(match.group(1)), int(match.group(2))
    if not isinstance(expr, ast.Call):
        return None
    func = model.resolve(expr.func) or ""
    if func in ("fx.T.vec", "fx.T.vector") and len(expr.args) == 2 and not expr.keywords:
        count = int_literal(model, expr.args[0])
        return scalar_dtype(model, expr.args[1], depth + 1), count if count is not None else expr.args[0]
    if func == "mlir.ir.VectorType.get" and len(expr.args) == 2:
        shape = expr.args[0]
        if isinstance(shape, (ast.List, ast.Tuple)) and len(shape.elts) == 1:
            count = int_literal(model, shape.elts[0])
            return scalar_dtype(model, expr.args[1], depth + 1), count if count is not None else shape.elts[0]
        return None
    return None


def vector_class_variable(model: SemanticModel, expr: ast.expr) -> ast.Name | None:
    """``X`` of ``T.vec(n, X.ir_type)`` where the name ``X`` holds an fx numeric class on every
    path (``out_elem_cls = BFloat16 if bf16 else Float16``): the fx dtype to pass is ``X``."""
    if not (isinstance(expr, ast.Call) and len(expr.args) == 2 and not expr.keywords):
        return None
    if model.resolve(expr.func) not in ("fx.T.vec", "fx.T.vector"):
        return None
    element = expr.args[1]
    if not (isinstance(element, ast.Attribute) and element.attr == "ir_type" and isinstance(element.value, ast.Name)):
        return None
    bindings = model.reaching_bindings(element.value)
    if not bindings or any(b.kind != "assign" or b.value is None for b in bindings):
        return None
    pending = [b.value for b in bindings]
    while pending:
        value = pending.pop()
        if isinstance(value, ast.IfExp):
            pending += [value.body, value.orelse]
            continue
        symbol = model.resolve(value) or ""
        if not (symbol.startswith("fx.") and T.is_numeric_class(symbol[3:])):
            return None
    return element.value


def fx_type_of_mlir_type_name(name: str) -> str | None:
    return {
        "i8": "fx.Int8", "i16": "fx.Int16", "i32": "fx.Int32", "i64": "fx.Int64",
        "f16": "fx.Float16", "bf16": "fx.BFloat16", "f32": "fx.Float32", "f64": "fx.Float64",
    }.get(name)


def _constant_value(model: SemanticModel, name: ast.Name) -> ast.expr | None:
    bindings = model.reaching_bindings(name)
    if len(bindings) == 1 and bindings[0].kind in ("assign", "annassign") and bindings[0].value is not None:
        return bindings[0].value
    return None


def int_literal(model: SemanticModel, expr: ast.expr) -> int | None:
    if isinstance(expr, ast.Name):
        value = _constant_value(model, expr)
        expr = value if value is not None else expr
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    return None


def non_negative_literal(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and type(expr.value) is int and expr.value >= 0


# --- fx operand types ---------------------------------------------------------------
FLOATS = ("fx.Float", "fx.BFloat16", "fx.TFloat32")


def is_float_type(name: str) -> bool:
    return name.startswith(FLOATS)


def is_int_type(name: str) -> bool:
    return bool(re.match(r"^fx\.((Int|Uint)\d+|Index)$", name))


def is_signed_int_type(name: str) -> bool:
    return bool(re.match(r"^fx\.Int\d+$", name))


# --- where a result goes ------------------------------------------------------------
# Calls that take either a raw ir.Value or an fx value and turn both into the same raw
# value (``_to_raw``/``as_ir_value`` inside), so a typed result is accepted unchanged.
_RAW_OR_TYPED = {
    "fx.arith.select",
    "fx.arith._to_raw",
    "fx.arith.unwrap",
    "fx.as_ir_value",
    "shim.tensor_shim._to_raw",
}


def accepts_typed_scalar(model: SemanticModel, use: ast.AST, parent: ast.AST | None) -> bool:
    """Does this use accept an fx scalar (``fx.Int32``/``fx.Boolean``) where a raw
    ``ArithValue`` of the same MLIR type stood, producing the same IR?"""
    if isinstance(parent, ast.Expr):
        return True
    if not isinstance(parent, ast.Call) or use is parent.func or use not in parent.args:
        return False
    symbol = model.resolve(parent.func) or ""
    if symbol in _RAW_OR_TYPED:
        return not parent.keywords or symbol == "fx.arith.select"
    # fx.Int32(x)/fx.Float32(x): the same cast (or none) from an fx value as from a raw one.
    return (
        symbol.startswith("fx.")
        and T.is_numeric_class(symbol[3:])
        and symbol not in ("fx.Boolean", "fx.Index")
        and len(parent.args) == 1
        and not parent.keywords
    )


def accepts_typed_vector(model: SemanticModel, use: ast.AST, parent: ast.AST | None) -> bool:
    """Does this use accept an ``fx.Vector`` where a raw vector ``ArithValue`` stood? An
    fx.Vector is itself an ir.Value, so raw builders take it as they took the raw one."""
    if accepts_typed_scalar(model, use, parent):
        return True
    if not isinstance(parent, ast.Call) or use is parent.func or use not in parent.args:
        return False
    symbol = model.resolve(parent.func) or ""
    return symbol == "fx.Vector" or is_raw_builder(symbol)


def is_raw_builder(symbol: str) -> bool:
    module = symbol.rpartition(".")[0]
    return is_raw_op(symbol) or module.startswith(("mlir.", "shim.")) or module == "fx.rocdl"


def result_uses_accept(rule: Rule, replaced: ast.AST, accept) -> bool:
    """True when every use of the value ``replaced`` computes is accepted by
    ``accept(model, use, parent)``: the expression itself when it is used in place, or
    every read of the one name it is assigned to."""
    parent = parent_of(rule, replaced)
    if isinstance(parent, ast.Expr):
        return True
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is replaced:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return False
        binding = _binding_for(rule.model, targets[0], replaced)
        if binding is None or binding.scope.kind not in ("function", "module"):
            return False
        if binding.name in binding.scope.nonlocal_names or _rebound_in_place(binding):
            return False
        root = binding.scope.node
        parents = rule.model.parent_map(root)
        for use in rule.model.uses_of(binding):
            if not accept(rule.model, use, parents.get(id(use))):
                return False
        return True
    return accept(rule.model, replaced, parent)


def parent_of(rule: Rule, replaced: ast.AST) -> ast.AST | None:
    parents = rule.ctx.parents
    # ``replaced`` is the visited node (parent = parents[-1]) or its parent (``.result``).
    if parents and parents[-1] is replaced:
        return parents[-2] if len(parents) > 1 else None
    return parents[-1] if parents else None


def _binding_for(model: SemanticModel, target: ast.Name, value: ast.AST):
    candidates = [
        binding
        for scope in model.scopes
        for binding in scope.bindings.get(target.id, ())
        if binding.value is value
    ]
    return candidates[0] if len(candidates) == 1 else None


def _rebound_in_place(binding) -> bool:
    """``x += ...`` or ``global x`` style rebinding: uses may see a changed value."""
    return any(b.kind == "augassign" for b in binding.scope.bindings.get(binding.name, ()))


# --- fastmath -------------------------------------------------------------------
def explicit_fastmath(call: ast.Call) -> ast.keyword | None:
    """The ``fastmath=`` keyword when it is given and not ``None``."""
    for keyword in call.keywords:
        if keyword.arg == "fastmath" and not (
            isinstance(keyword.value, ast.Constant) and keyword.value.value is None
        ):
            return keyword
    return None


# --- the legacy helper layers themselves ---------------------------------------------
@functools.lru_cache(maxsize=64)  # asked for every raw call of a file
def is_shim_definition(path: str | None) -> bool:
    """Is this file one of the legacy helper layers kernels ship (aiter's
    ``kernels/vector.py``, ``buffer_ops.py``, ``tensor_shim.py``, FlyDSL's
    ``kernels/common/...``)? Their bodies implement the legacy API on the raw dialects;
    they are retired as a whole, not migrated line by line, so their raw calls are not
    reported (their callers are)."""
    if not path:
        return False
    from flydsl_ls.analysis.model.modules import SHIM_MODULE_TAILS

    parts = PurePath(path).parts
    return PurePath(path).stem in SHIM_MODULE_TAILS and "kernels" in parts[:-1]

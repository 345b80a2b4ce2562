"""The fx type a raw dialect result would have, when its MLIR type can be read off the op.

Used to "wrap once at source": ``v = std_arith.mulf(a, b)`` with fx.Float32 operands
is an f32 value, so ``v = fx.Float32(std_arith.mulf(a, b))``.
"""

from __future__ import annotations

import ast

from flydsl_ls.analysis.model.semantic import SemanticModel

# MLIR type spellings (``T.f32``, ``T.f32()``, ``ir.F32Type.get()``) -> fx class.
_TYPE_NAMES = {
    "f16": "fx.Float16",
    "bf16": "fx.BFloat16",
    "f32": "fx.Float32",
    "f64": "fx.Float64",
    "i1": "fx.Boolean",
    "bool": "fx.Boolean",
    "i8": "fx.Int8",
    "i16": "fx.Int16",
    "i32": "fx.Int32",
    "i64": "fx.Int64",
    "index": "fx.Index",
}
_IR_TYPES = {
    "mlir.ir.F16Type.get": "fx.Float16",
    "mlir.ir.BF16Type.get": "fx.BFloat16",
    "mlir.ir.F32Type.get": "fx.Float32",
    "mlir.ir.F64Type.get": "fx.Float64",
    "mlir.ir.IndexType.get": "fx.Index",
}
# Ops whose result has the type of their (first) value operand.
_SAME_AS_OPERAND = {
    "addf", "subf", "mulf", "divf", "remf", "negf", "maximumf", "minimumf", "maxnumf",
    "minnumf", "addi", "subi", "muli", "divsi", "remsi", "andi", "ori", "xori", "shli",
    "shrsi", "maxsi", "minsi",
}
# Ops taking the result type first: (target_type, value).
_RESULT_TYPE_FIRST = {
    "index_cast", "extf", "truncf", "trunc_f", "ext_f", "sitofp", "fptosi", "extsi",
    "trunci", "bitcast",
}
_ARITH_MODULES = ("fx.arith.", "mlir.arith.")


def fx_type_of_mlir_type(model: SemanticModel, expr: ast.expr) -> str | None:
    target = expr.func if isinstance(expr, ast.Call) and not expr.args else expr
    symbol = model.resolve(target)
    if symbol is None:
        return None
    if symbol in _IR_TYPES:
        return _IR_TYPES[symbol]
    if symbol.startswith("fx.T."):
        return _TYPE_NAMES.get(symbol[len("fx.T.") :])
    return None


def raw_result_type(model: SemanticModel, call: ast.Call, depth: int = 0) -> str | None:
    """fx class name for a raw arith op's result, or None when it cannot be read."""
    symbol = model.resolve(call.func) or ""
    if not symbol.startswith(_ARITH_MODULES) or depth > 3:
        return None
    op = symbol.split(".")[-1]
    if op in _SAME_AS_OPERAND and call.args:
        return operand_type(model, call.args[0], depth) or (
            operand_type(model, call.args[1], depth) if len(call.args) > 1 else None
        )
    if op in _RESULT_TYPE_FIRST and len(call.args) == 2:
        return fx_type_of_mlir_type(model, call.args[0])
    if op == "constant" and symbol.startswith("mlir.") and len(call.args) == 2:
        return fx_type_of_mlir_type(model, call.args[0])
    return None


def operand_type(model: SemanticModel, expr: ast.expr, depth: int) -> str | None:
    kind = model.type_of(expr)
    if kind.is_fx_scalar:
        return kind.name
    if isinstance(expr, ast.Call):
        return raw_result_type(model, expr, depth + 1)
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        if len(bindings) == 1 and isinstance(bindings[0].value, ast.Call):
            return raw_result_type(model, bindings[0].value, depth + 1)
    return None

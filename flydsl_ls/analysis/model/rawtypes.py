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
_SIGNLESS = "mlir.ir.IntegerType.get_signless"
# Ops whose result has the type of their (first) value operand.
_SAME_AS_OPERAND = {
    "addf", "subf", "mulf", "divf", "remf", "negf", "maximumf", "minimumf", "maxnumf",
    "minnumf", "addi", "subi", "muli", "divsi", "remsi", "andi", "ori", "xori", "shli",
    "shrsi", "maxsi", "minsi", "divui", "remui", "shrui", "maxui", "minui", "ceildivsi",
    "ceildivui", "floordivsi",
}
# Ops taking the result type first: (target_type, value).
_RESULT_TYPE_FIRST = {
    "index_cast", "extf", "truncf", "trunc_f", "ext_f", "sitofp", "fptosi", "extsi",
    "trunci", "bitcast",
}
_ARITH_MODULES = ("fx.arith.", "mlir.arith.")


def fx_type_of_mlir_type(model: SemanticModel, expr: ast.expr, depth: int = 0) -> str | None:
    if isinstance(expr, ast.Name) and depth < 3:  # `i32 = T.i32`, defined once
        bindings = model.reaching_bindings(expr)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return fx_type_of_mlir_type(model, bindings[0].value, depth + 1)
        return None
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and model.resolve(expr.func) == _SIGNLESS:
        width = expr.args[0]
        if isinstance(width, ast.Constant) and width.value in (1, 8, 16, 32, 64) and type(width.value) is int:
            return "fx.Boolean" if width.value == 1 else f"fx.Int{width.value}"
        return None
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
    if op == "constant" and len(call.args) == 1:  # FlyDSL's constant(value, *, type=, index=)
        return _constant_type(model, call)
    if op == "select" and len(call.args) == 3:
        return operand_type(model, call.args[1], depth) or operand_type(model, call.args[2], depth)
    if op in _COMPARISONS and len(call.args) == 3:  # i1 where the operands are scalars
        return "fx.Boolean" if any(operand_type(model, a, depth) for a in call.args[1:]) else None
    return None


def operand_type(model: SemanticModel, expr: ast.expr, depth: int) -> str | None:
    kind = model.type_of(expr)
    if kind.is_fx_scalar:
        return kind.name
    if isinstance(expr, ast.Call) and depth <= 3:
        # `v.ir_value()` / `fx.as_ir_value(v)`: the raw value of `v`, of `v`'s type
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "ir_value" and not expr.args:
            return operand_type(model, expr.func.value, depth + 1)
        if model.resolve(expr.func) in _UNWRAPS and len(expr.args) == 1 and not expr.keywords:
            return operand_type(model, expr.args[0], depth + 1)
    if isinstance(expr, ast.Call):
        return raw_result_type(model, expr, depth + 1)
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        if len(bindings) == 1 and isinstance(bindings[0].value, ast.Call):
            return raw_result_type(model, bindings[0].value, depth + 1)
    return None


# --- the element type of any IR value, for display (hover, inlay hints) ---------------------
# Wider than ``raw_result_type``, which the fixes rely on: it also reads the DSL's own
# constructors (``fx.arith.constant(1, type=T.i32)``, ``arith.index(4)``), the wrappers that
# keep their operand's type (``ArithValue(v)``, ``v.ir_value()``), comparisons and selects,
# following names to their one definition.
_CONSTANT_DEFAULTS = {"bool": "fx.Boolean", "int": "fx.Int32", "float": "fx.Float32"}  # fx.arith.constant
_COMPARISONS = {"cmpi", "cmpf"}
_MORE_SAME_AS_OPERAND = {"shrui", "divui", "remui", "maxui", "minui", "ceildivsi", "floordivsi", "ceildivui"}
_ID_CALLS = {"fx.gpu.thread_id", "fx.gpu.block_id", "mlir.gpu.thread_id", "mlir.gpu.block_id"}
_ARITH_VALUE = "fx.arith.ArithValue"
_UNWRAPS = {"fx.arith.unwrap", "fx.arith._to_raw", "fx.as_ir_value"}  # the same value, raw
_MAX_DEPTH = 8  # names, wrappers and operators followed


def element_type(model: SemanticModel, expr: ast.expr, depth: int = 0) -> str | None:
    """fx class (``fx.Int32``) of the MLIR type of the scalar value ``expr`` computes (an fx
    value, an ``ArithValue`` or a raw ``ir.Value``), or None when it cannot be read."""
    if depth > _MAX_DEPTH:
        return None
    kind = model.type_of(expr)
    if kind.is_fx_scalar:
        return kind.name
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        if not bindings or any(b.kind not in ("assign", "walrus") or b.value is None for b in bindings):
            return None
        found = {element_type(model, b.value, depth + 1) for b in bindings}
        return found.pop() if len(found) == 1 else None
    if isinstance(expr, ast.BinOp):  # arithmetic on an ArithValue: its IR operands agree
        sides = [s for s in (expr.left, expr.right) if not model.type_of(s).is_python]
        found = {element_type(model, s, depth + 1) for s in sides}
        return found.pop() if len(found) == 1 else None
    if isinstance(expr, ast.IfExp):
        body = element_type(model, expr.body, depth + 1)
        return body if body == element_type(model, expr.orelse, depth + 1) else None
    if isinstance(expr, ast.Call):
        return _call_element_type(model, expr, depth)
    return None


def _call_element_type(model: SemanticModel, call: ast.Call, depth: int) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "ir_value" and not call.args:
        return element_type(model, func.value, depth + 1)
    symbol = model.resolve(func) or ""
    if (symbol == _ARITH_VALUE or symbol in _UNWRAPS) and len(call.args) == 1 and not call.keywords:
        return element_type(model, call.args[0], depth + 1)
    if symbol in _ID_CALLS:
        return "fx.Index"
    if not symbol.startswith(_ARITH_MODULES):
        return None
    op = symbol.rsplit(".", 1)[-1]
    args = call.args
    if op in _SAME_AS_OPERAND or op in _MORE_SAME_AS_OPERAND:
        return next(filter(None, (element_type(model, a, depth + 1) for a in args[:2])), None)
    if op == "select" and len(args) == 3:
        return element_type(model, args[1], depth + 1) or element_type(model, args[2], depth + 1)
    if op in _COMPARISONS and len(args) == 3:
        # i1 for scalar operands; an operand whose type is read is a scalar one
        return "fx.Boolean" if any(element_type(model, a, depth + 1) for a in args[1:]) else None
    if symbol.startswith("fx.arith."):
        if op == "index":
            return "fx.Index"
        if op == "constant" and len(args) == 1:
            return _constant_type(model, call)
    return raw_result_type(model, call)


def _constant_type(model: SemanticModel, call: ast.Call) -> str | None:
    """``fx.arith.constant(value, *, type=None, index=False)``'s result type."""
    keywords = {k.arg: k.value for k in call.keywords}
    index = keywords.get("index")
    if isinstance(index, ast.Constant) and index.value is True:
        return "fx.Index"
    if index is not None and not (isinstance(index, ast.Constant) and index.value is False):
        return None  # decided at trace time
    if "type" in keywords:
        return fx_type_of_mlir_type(model, keywords["type"])
    return _CONSTANT_DEFAULTS.get(model.type_of(call.args[0]).name)


def mlir_spelling(fx_class: str) -> str:
    """The MLIR type an fx numeric class wraps: ``fx.Int32`` -> ``i32``, ``fx.Index`` -> ``index``."""
    name = fx_class.removeprefix("fx.")
    if name == "Boolean":
        return "i1"
    if name == "Index":
        return "index"
    if name == "BFloat16":
        return "bf16"
    if name == "TFloat32":
        return "tf32"
    for prefix, short in (("Uint", "ui"), ("Int", "i"), ("Float", "f")):
        if name.startswith(prefix):
            return short + name[len(prefix):]
    return name

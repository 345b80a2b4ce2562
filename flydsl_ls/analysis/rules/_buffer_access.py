"""FLY201's reading of `buffer_ops.buffer_load`/`buffer_store` calls and the fx text that
replaces them.

The shim scales an ELEMENT offset by the access's element size and emits a raw buffer
load/store at that byte offset. On a buffer-descriptor pointer (the iterator of
`fx.rocdl.make_buffer_tensor(t)`, or `fx.rocdl.make_buffer_ptr(p)`), `ptr + off` does the
same scaling by the pointer's element type, and `fx.ptr_load`/`fx.ptr_store` lower to the
same raw buffer load/store (FlyDSL's FlyToROCDL; checked on gfx942 with FlyDSL 0.5.0 and
0.3.1: identical ISA). So the pointer is recast to the access's element type first,
`fx.recast_iter(D, p)`, unless it already has it; a vector load reads a `(V, 1)` view with
`fx.memref_load_vec`. Offsets go in as `fx.Int32`, the width the shim casts them to:
FlyDSL 0.3.1 crashes (SIGSEGV) on an `fx.Index` pointer offset.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from flydsl_ls.analysis.model.rawtypes import element_type, operand_type
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.rules.base import call_argument

SHIM = "shim.buffer_ops."
LOAD, STORE = SHIM + "buffer_load", SHIM + "buffer_store"
# Element types named through the MLIR type helpers (`T.i32`, `T.i32()`), as fx classes.
_MLIR_TYPES = {
    "i8": "Int8", "i16": "Int16", "i32": "Int32", "i64": "Int64",
    "f16": "Float16", "bf16": "BFloat16", "f32": "Float32", "f64": "Float64",
}
_FX_NUMERIC = set(_MLIR_TYPES.values()) | {"Uint8", "Uint16", "Uint32", "Uint64"}
# Options with no counterpart on fx.ptr_load/ptr_store (their aux and soffset are 0).
_LOAD_OPTIONS = {"mask": 4, "cache_modifier": 5, "soffset_bytes": 6, "is_scalar": 7}
_STORE_OPTIONS = {"mask": 3, "cache_modifier": 4, "soffset_bytes": None}
KEPT = "a load or store with no layout form may stay on buffer_ops (the cleanup guide keeps it)"
_BYTES = {"Int8": 1, "Uint8": 1, "Int16": 2, "Uint16": 2, "Float16": 2, "BFloat16": 2, "Int32": 4, "Uint32": 4,
          "Float32": 4, "Int64": 8, "Uint64": 8, "Float64": 8}


def element_bytes(dtype: str) -> int:
    return _BYTES[dtype]


@dataclass
class Access:
    """One shim load or store: what it reads or writes, and whether fx can say it."""

    call: ast.Call
    load: bool
    rsrc: ast.expr | None
    offset: ast.expr | None = None
    data: ast.expr | None = None  # stores
    width: int = 1  # loads: vec_width
    dtype: str | None = None  # the fx class of the element type ("Int32")
    problem: str | None = None  # why fx has no form for it (None: it does)
    raw: bool = False  # a scalar load whose users need the raw value the shim gave
    kept: bool = False  # no layout form: the cleanup guide lets it stay on the shim


def read_access(model: SemanticModel, call: ast.Call, symbol: str) -> Access:
    load = symbol == LOAD
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return Access(call, load, None, problem="its arguments are unpacked from `*`/`**`")
    if load:
        access = Access(call, True, call_argument(call, 0, "rsrc"), call_argument(call, 1, "offset"))
        options = _LOAD_OPTIONS
    else:
        rsrc, offset = call_argument(call, 1, "rsrc"), call_argument(call, 2, "offset")
        access = Access(call, False, rsrc, offset, call_argument(call, 0, "data"))
        options = _STORE_OPTIONS
    for name, index in options.items():
        value = call_argument(call, index, name) if index is not None else _keyword(call, name)
        if value is not None and not _is_default(value):
            access.problem = f"`{name}=` has no counterpart on `fx.ptr_load`/`fx.ptr_store`; {KEPT}"
            access.kept = True
            return access
    if access.rsrc is None or access.offset is None or (not load and access.data is None):
        access.problem = "its resource, offset or data is not passed"
        return access
    if load:
        width = call_argument(call, 2, "vec_width")
        value = 4 if width is None else int_value(model, width)
        if value is not None and value > 0:
            access.width = value
        else:
            access.problem = f"its width `{ast.unparse(width)}` is not a literal (a width of 1 loads a scalar)"
            return access
        dtype = call_argument(call, 3, "dtype")
        access.dtype = "Float32" if dtype is None else element_class(model, dtype)
        if access.dtype is None:
            access.problem = f"its element type `{ast.unparse(dtype)}` is not an fx numeric type"
        return access
    in_bytes = _keyword(call, "offset_is_bytes")
    if in_bytes is not None and not _is_default(in_bytes):
        if isinstance(in_bytes, ast.Constant) and in_bytes.value is True:
            access.dtype, access.width = "Int8", 0  # a byte pointer; width 0: the offset is in bytes
            return access
        access.problem = "`offset_is_bytes=` is not a literal"
        return access
    access.dtype = stored_class(model, access.data)
    if access.dtype is None:
        access.problem = (
            f"the element type of `{ast.unparse(access.data)}` is not known here, and the offset is "
            "in elements of it"
        )
    return access


def element_class(model: SemanticModel, expr: ast.expr) -> str | None:
    """The fx numeric class ``expr`` names as an element type: `fx.Int32`, `T.i32`, `T.i32()`,
    or a name bound once to one of these."""
    if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
        expr = expr.func
    symbol = model.resolve(expr) or ""
    if symbol.startswith("fx.T."):
        return _MLIR_TYPES.get(symbol[5:])
    if symbol.startswith("fx.") and symbol[3:] in _FX_NUMERIC:
        return symbol[3:]
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            value = bindings[0].value
            if not (isinstance(value, ast.Name) and value.id == expr.id):
                return element_class(model, value)
    return None


def stored_class(model: SemanticModel, data: ast.expr, depth: int = 0) -> str | None:
    """The element type of a stored value, when the code shows it: an fx scalar, a raw arith
    op's result, what a shim load or `fx.ptr_load`/`fx.memref_load_vec` gave, an fx.Vector
    built or bitcast with a dtype, an element or slice of a vector, and integer arithmetic or
    a select on one of these."""
    if depth > 4:
        return None
    typed = operand_type(model, data, 0) or element_type(model, data)
    if typed and typed.startswith("fx.") and typed[3:] in _FX_NUMERIC:
        return typed[3:]
    if isinstance(data, ast.Subscript):  # an element of a vector (a list is never typed here)
        return stored_class(model, data.value, depth + 1)
    if isinstance(data, ast.Attribute) and data.attr == "result" and isinstance(data.value, ast.Call):
        return _op_class(model, data.value)
    if isinstance(data, ast.Name):  # every value that may reach it, alike
        bindings = model.reaching_bindings(data)
        if not bindings or any(b.kind != "assign" or b.value is None for b in bindings):
            return None
        found = {stored_class(model, b.value, depth + 1) for b in bindings}
        return found.pop() if len(found) == 1 else None
    if isinstance(data, ast.BinOp) and not isinstance(data.op, (ast.Div, ast.Pow, ast.MatMult)):
        # Both operands typed alike, or a Python int beside a typed one.
        left, right = (stored_class(model, side, depth + 1) for side in (data.left, data.right))
        if left == right or (left and int_value(model, data.right) is not None):
            return left
        return right if int_value(model, data.left) is not None else None
    if isinstance(data, ast.IfExp):
        return stored_class(model, data.body, depth + 1) or stored_class(model, data.orelse, depth + 1)
    if not isinstance(data, ast.Call):
        return None
    if isinstance(data.func, ast.Attribute) and data.func.attr == "ir_value" and not data.args:
        return stored_class(model, data.func.value, depth + 1)
    symbol = model.resolve(data.func) or ""
    if symbol == LOAD:
        loaded = read_access(model, data, LOAD)
        return loaded.dtype if loaded.problem is None else None
    if symbol == "fx.ptr_load" and data.args:
        result = call_argument(data, 1, "result_type")
        return pointer_class(model, data.args[0]) if result is None else value_type_class(model, result)
    if symbol == "fx.memref_load_vec" and len(data.args) == 1 and isinstance(data.args[0], ast.Call):
        view = data.args[0]
        if model.resolve(view.func) == "fx.make_view" and view.args:
            return pointer_class(model, view.args[0])
        return None
    if symbol.endswith(".vector.extract") and data.args:  # one element of the source vector
        return stored_class(model, data.args[0], depth + 1)
    if symbol.endswith(".vector.extract_strided_slice") and data.args:  # (result type, source, ...)
        return value_type_class(model, data.args[0])
    if (
        isinstance(data.func, ast.Attribute)
        and data.func.attr in ("to", "bitcast")
        and len(data.args) == 1
        and model.type_of(data.func.value).is_fx_scalar
    ):
        return element_class(model, data.args[0])
    if symbol in ("fx.Vector.from_elements", "fx.Vector.filled"):
        dtype = call_argument(data, 1 if symbol.endswith("from_elements") else 2, "dtype")
        return element_class(model, dtype) if dtype is not None else None
    if isinstance(data.func, ast.Attribute) and data.func.attr == "select" and len(data.args) == 2:
        return stored_class(model, data.args[0], depth + 1) or stored_class(model, data.args[1], depth + 1)
    if (
        isinstance(data.func, ast.Attribute)
        and data.func.attr == "bitcast"
        and len(data.args) == 1
        and model.type_of(data.func.value).name == "fx.Vector"
    ):
        return element_class(model, data.args[0])
    return None


def value_type_class(model: SemanticModel, expr: ast.expr) -> str | None:
    """The element fx class of a scalar or vector type: `fx.Int32`, `T.i32`,
    `fx.Vector[fx.Int32, 4]`, `fx.Vector.make_type(4, fx.Int32)`, `T.vec(4, T.i32)`."""
    if isinstance(expr, ast.Subscript) and model.resolve(expr.value) == "fx.Vector":
        index = expr.slice
        return element_class(model, index.elts[0]) if isinstance(index, ast.Tuple) and index.elts else None
    if isinstance(expr, ast.Call) and len(expr.args) == 2 and not expr.keywords:
        if model.resolve(expr.func) in ("fx.Vector.make_type", "fx.T.vec"):
            return element_class(model, expr.args[1])
    return element_class(model, expr)


def pointer_class(model: SemanticModel, expr: ast.expr, depth: int = 0) -> str | None:
    """The element fx class of an fx pointer the code types: `fx.recast_iter(D, p)`,
    `fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(D.ir_type, ...), addr))`, plus
    an offset, or a name bound once to one of these. None for a tensor's iterator."""
    if depth > 4:
        return None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return pointer_class(model, expr.left, depth + 1)
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return pointer_class(model, bindings[0].value, depth + 1)
        return None
    if not (isinstance(expr, ast.Call) and expr.args):
        return None
    symbol = model.resolve(expr.func)
    if symbol == "fx.recast_iter" and len(expr.args) == 2:
        return element_class(model, expr.args[0])
    if symbol == "fx.rocdl.make_buffer_ptr":
        return pointer_class(model, expr.args[0], depth + 1)
    if symbol == "fx.inttoptr" and isinstance(expr.args[0], ast.Call) and expr.args[0].args:
        kind = expr.args[0]
        element = kind.args[0]
        if model.resolve(kind.func) == "fx.PointerType.get" and isinstance(element, ast.Attribute):
            return element_class(model, element.value) if element.attr == "ir_type" else None
    return None


# arith's op classes whose result type is their first argument (`arith.TruncIOp(T.i8, x).result`)
_TYPED_OPS = {"TruncIOp", "ExtSIOp", "ExtUIOp", "TruncFOp", "ExtFOp", "BitcastOp", "SIToFPOp", "UIToFPOp",
              "FPToSIOp", "FPToUIOp", "IndexCastOp"}


def _op_class(model: SemanticModel, op: ast.Call) -> str | None:
    symbol = model.resolve(op.func) or ""
    if symbol.startswith(("fx.arith.", "mlir.arith.")) and symbol.rsplit(".", 1)[-1] in _TYPED_OPS and op.args:
        return element_class(model, op.args[0])
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_default(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value in (None, False, 0)


def int_value(model: SemanticModel, expr: ast.expr, depth: int = 0) -> int | None:
    """The Python int ``expr`` always is: a literal, a name bound once to one, or arithmetic
    on those."""
    if isinstance(expr, ast.Constant):
        return expr.value if type(expr.value) is int else None
    if depth > 4:
        return None
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return int_value(model, bindings[0].value, depth + 1)
        return None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        left, right = int_value(model, expr.left, depth + 1), int_value(model, expr.right, depth + 1)
        if left is None or right is None or (isinstance(expr.op, ast.FloorDiv) and right == 0):
            return None
        ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__}
        return ops[type(expr.op)](left, right)
    return None

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
from flydsl_ls.analysis.model.semantic import SemanticModel, own_returns
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
    width_text: str | None = None  # a width more than 1 that only tracing knows (its source text)
    dtype_text: str | None = None  # an element type chosen at trace time, as fx code ("{fx}" the alias)
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
        elif value is None and width is not None and _more_than_one(model, width):
            # any width over 1 picks the vector form; the text says which one
            access.width, access.width_text = 2, model.index.slice(model.index.node_range(width))
        else:
            access.problem = f"its width `{ast.unparse(width)}` is not a literal (a width of 1 loads a scalar)"
            return access
        dtype = call_argument(call, 3, "dtype")
        access.dtype = "Float32" if dtype is None else element_class(model, dtype)
        if access.dtype is None and dtype is not None:
            access.dtype, access.dtype_text = chosen_class(model, dtype, call) or (None, None)
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
    access.dtype, access.dtype_text = stored_class(model, access.data, call) or (None, None)
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


def stored_class(model: SemanticModel, data: ast.expr, at: ast.AST) -> tuple[str, str | None] | None:
    """(fx class, fx code or None) of a stored value's element type, when the code shows it: an
    fx scalar, a raw arith op's or a rocdl op's result, what a shim load, `fx.ptr_load` or
    `fx.memref_load_vec` gave, an fx.Vector built or bitcast with a dtype, an element or slice
    of a vector, an element of a list whose items agree, integer arithmetic or a select on one
    of these, a `range` loop's variable, what a helper of the file returns, and a helper's
    parameter given the same type at every call. A value carried around a loop
    (`acc = acc + x`) has the type its other definitions agree on. An element type chosen at
    trace time (``chosen_class``) comes with its fx code, written again at ``at``."""
    stored = _Stored(model, at)
    found = stored.of(data, 0)
    if not found:
        return None
    return stored.chosen[found] if found in stored.chosen else (found, None)


# A read of a definition being followed (a loop-carried value): it has the type the others agree on.
_PENDING = ""


class _Stored:
    def __init__(self, model: SemanticModel, at: ast.AST):
        self.model = model
        self.at = at
        self.open: set[int] = set()  # id() of the definitions and functions being followed
        # a trace-time choice stands for itself (its fx code), so it agrees only with itself
        self.chosen: dict[str, tuple[str, str]] = {}

    def dtype(self, expr: ast.expr) -> str | None:
        """The class an element type names, or a trace-time choice's fx code."""
        named = value_type_class(self.model, expr)
        if named:
            return named
        choice = chosen_class(self.model, expr, self.at)
        if choice is None:
            return None
        self.chosen[choice[1]] = choice
        return choice[1]

    def of(self, data: ast.expr, depth: int) -> str | None:
        if depth > 24:  # a bound on the work; cycles are cut by ``open``
            return None
        model = self.model
        typed = operand_type(model, data, 0) or element_type(model, data)
        if typed and typed.startswith("fx.") and typed[3:] in _FX_NUMERIC:
            return typed[3:]
        if isinstance(data, ast.Subscript):  # an element of a vector, or of a list (``_listed``)
            return self.of(data.value, depth + 1)
        if isinstance(data, ast.Attribute) and data.attr == "result" and isinstance(data.value, ast.Call):
            return _op_class(model, data.value)
        if isinstance(data, ast.Name):  # every value that may reach it, alike
            bindings = model.reaching_bindings(data)
            return self._agreed([self._binding(b, depth) for b in bindings]) if bindings else None
        if isinstance(data, ast.BinOp) and not isinstance(data.op, (ast.Div, ast.Pow, ast.MatMult)):
            return self._binop(data.left, data.right, depth)
        if isinstance(data, ast.IfExp):
            return self._either(data.body, data.orelse, depth)
        if isinstance(data, ast.Call):
            return self._call(data, depth)
        return None

    def _agreed(self, found: list) -> str | None:
        """The one type the definitions agree on (reads of pending ones aside)."""
        if None in found:
            return None
        types = set(found) - {_PENDING}
        if len(types) > 1:
            return None
        return types.pop() if types else _PENDING

    def _binop(self, left_node: ast.expr, right_node: ast.expr, depth: int) -> str | None:
        # Both operands typed alike, a Python int beside a typed one, or a float beside a float.
        left, right = self.of(left_node, depth + 1), self.of(right_node, depth + 1)
        if left is None and _python_number(self.model, left_node, right):
            return right
        if right is None and _python_number(self.model, right_node, left):
            return left
        return self._agreed([left, right])

    def _either(self, first: ast.expr, second: ast.expr, depth: int) -> str | None:
        one = self.of(first, depth + 1)
        return one if one else self.of(second, depth + 1) or one

    def _binding(self, binding, depth: int) -> str | None:
        if id(binding) in self.open:
            return _PENDING
        self.open.add(id(binding))
        try:
            if binding.kind == "assign" and isinstance(binding.value, ast.List):
                return self._listed(binding, depth)
            if binding.kind in ("assign", "walrus") and binding.value is not None:
                return self.of(binding.value, depth + 1)
            if binding.kind == "augassign" and isinstance(binding.value, ast.AugAssign):
                statement = binding.value
                if isinstance(statement.op, (ast.Div, ast.Pow, ast.MatMult)):
                    return None
                return self._binop(statement.target, statement.value, depth)
            if binding.kind == "for" and isinstance(binding.iter, ast.Call) and _builtin_range(self.model, binding.iter):
                # A stored loop variable is an IR value: the scf.for's i32 induction variable
                # (FlyDSL 0.3.1 and 0.5.0 cast the bounds to i32); a Python int cannot be stored.
                return "Int32"
            if binding.kind == "param":
                return self._passed(binding, depth)
            return None
        finally:
            self.open.discard(id(binding))

    def _listed(self, binding, depth: int) -> str | None:
        """A list's items, alike: its literal's and those appended to it. Any other use that
        could change it (another method, an item assigned, passed along) leaves it untyped."""
        items = list(binding.value.elts)
        for use in self.model.uses_of(binding):
            parent = self.model.parents_around(use).get(id(use))
            if isinstance(parent, ast.Subscript) and parent.value is use and isinstance(parent.ctx, ast.Load):
                continue
            if isinstance(parent, ast.Return):
                continue
            call = self.model.parents_around(use).get(id(parent))
            if (
                isinstance(parent, ast.Attribute)
                and parent.attr == "append"
                and isinstance(call, ast.Call)
                and call.func is parent
                and len(call.args) == 1
                and not call.keywords
            ):
                items.append(call.args[0])
                continue
            return None
        if not items or any(isinstance(item, ast.Starred) for item in items):
            return None
        return self._agreed([self.of(item, depth + 1) for item in items])

    def _call(self, data: ast.Call, depth: int) -> str | None:
        model = self.model
        if isinstance(data.func, ast.Attribute) and data.func.attr == "ir_value" and not data.args:
            return self.of(data.func.value, depth + 1)
        symbol = model.resolve(data.func) or ""
        if symbol == LOAD:
            loaded = read_access(model, data, LOAD)
            return loaded.dtype if loaded.problem is None else None
        if symbol == "fx.ptr_load" and data.args:
            result = call_argument(data, 1, "result_type")
            return pointer_class(model, data.args[0]) if result is None else value_type_class(model, result)
        if symbol == "fx.memref_load_vec" and len(data.args) == 1:
            return self._memref_class(data.args[0])
        if symbol == "fx.Vector" and len(data.args) == 1 and not data.keywords:  # wraps a raw vector
            return self.of(data.args[0], depth + 1)
        if symbol.endswith(".vector.extract") and data.args:  # one element of the source vector
            return self.of(data.args[0], depth + 1)
        if symbol.endswith(".vector.extract_strided_slice") and data.args:  # (result type, source, ...)
            return value_type_class(model, data.args[0])
        if symbol.startswith(("fx.arith.", "mlir.arith.")) and symbol.endswith(".select") and len(data.args) == 3:
            return self._either(data.args[1], data.args[2], depth)
        if (
            isinstance(data.func, ast.Attribute)
            and data.func.attr in ("to", "bitcast")
            and len(data.args) == 1
            and model.type_of(data.func.value).is_fx_scalar
        ):
            return element_class(model, data.args[0])
        if symbol in ("fx.Vector.from_elements", "fx.Vector.filled"):
            dtype = call_argument(data, 1 if symbol.endswith("from_elements") else 2, "dtype")
            return self.dtype(dtype) if dtype is not None else None
        if symbol.startswith(("fx.rocdl.", "mlir.rocdl.")) and data.args:
            return value_type_class(model, data.args[0])  # a rocdl op's result type comes first
        if isinstance(data.func, ast.Attribute) and data.func.attr == "select" and len(data.args) == 2:
            return self._either(data.args[0], data.args[1], depth)
        if (
            isinstance(data.func, ast.Attribute)
            and data.func.attr == "bitcast"
            and len(data.args) == 1
            and (model.type_of(data.func.value).name == "fx.Vector" or _wraps_vector(model, data.func.value))
        ):
            return self.dtype(data.args[0])
        if isinstance(data.func, ast.Name):
            return self._returned(data.func, depth)
        return None

    def _memref_class(self, memref: ast.expr) -> str | None:
        """The element type of a view over a typed pointer, or of a register tensor."""
        if isinstance(memref, ast.Name):
            bindings = self.model.reaching_bindings(memref)
            if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
                return None
            memref = bindings[0].value
        if not (isinstance(memref, ast.Call) and memref.args):
            return None
        symbol = self.model.resolve(memref.func)
        if symbol == "fx.make_view":
            return pointer_class(self.model, memref.args[0])
        if symbol == "fx.make_rmem_tensor" and len(memref.args) == 2:
            return self.dtype(memref.args[1])
        return None

    def _returned(self, func: ast.Name, depth: int) -> str | None:
        """What a helper of this file returns, when its returns agree."""
        function = file_helper(self.model, func)
        if function is None or id(function) in self.open:
            return None
        self.open.add(id(function))
        try:
            values = [node.value for node in own_returns(function)]
            if not values or any(v is None for v in values):
                return None
            return self._agreed([self.of(v, depth + 1) for v in values])
        finally:
            self.open.discard(id(function))

    def _passed(self, param, depth: int) -> str | None:
        """A helper's parameter: what every call of it passes, alike."""
        function = param.scope.node
        binding = _definition(self.model, param.scope)  # None unless a plain `def`
        if binding is None or _helper_binding(self.model, binding) is None:
            return None
        calls = self.model.calls_to(function)
        if not calls or len(calls) != len(self.model.uses_of(binding)):
            return None  # passed around as a value
        found = []
        for call in calls:
            arg = _passed_argument(call, function, param.name)
            if arg is None:
                return None
            found.append(self.of(arg, depth + 1))
        return self._agreed(found)


def _python_number(model: SemanticModel, node: ast.expr, other: str | None) -> bool:
    """``node`` is a Python int, or a float literal beside a float type (fx takes its type)."""
    if int_value(model, node) is not None:
        return True
    is_float = isinstance(node, ast.Constant) and type(node.value) is float
    return is_float and other is not None and other.startswith(("Float", "BFloat"))


def _wraps_vector(model: SemanticModel, expr: ast.expr) -> bool:
    """`fx.Vector(v)`: a raw vector wrapped (its `.bitcast(D)` has elements of `D`)."""
    return isinstance(expr, ast.Call) and model.resolve(expr.func) == "fx.Vector" and len(expr.args) == 1


def _builtin_range(model: SemanticModel, call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == "range" and model.binding_of(call.func) is None


def file_helper(model: SemanticModel, func: ast.Name) -> ast.FunctionDef | None:
    """The function a call of ``func`` calls, when only this file calls it (see below)."""
    binding = model.binding_of(func)
    return _helper_binding(model, binding) if binding is not None and binding.kind == "def" else None


def _helper_binding(model: SemanticModel, binding) -> ast.FunctionDef | None:
    """The function ``binding`` defines when only this file calls it as itself: a nested one or
    a private one of the module no other project file names; plain or `@flyc.jit` (called
    while tracing, it runs the function itself)."""
    function = binding.node
    if not isinstance(function, ast.FunctionDef) or len(binding.scope.bindings.get(binding.name, ())) != 1:
        return None
    if any(model.resolve(d) != "flyc.jit" for d in function.decorator_list):
        return None
    if binding.scope.kind == "module":
        if not function.name.startswith("_"):
            return None
        if model.project is not None and model.project.mentioned_elsewhere(function.name):
            return None
    elif binding.scope.kind != "function":
        return None
    return function


def _definition(model: SemanticModel, scope):
    """The `def` binding of a function scope's function."""
    function, outer = scope.node, scope.parent
    if outer is None or not isinstance(function, ast.FunctionDef):
        return None
    return next((b for b in outer.bindings.get(function.name, ()) if b.kind == "def" and b.node is function), None)


def _passed_argument(call: ast.Call, function: ast.FunctionDef, name: str) -> ast.expr | None:
    args = function.args
    if args.vararg or args.kwarg or args.posonlyargs or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    names = [a.arg for a in args.args]
    if name in names and names.index(name) < len(call.args):
        return call.args[names.index(name)]
    return next((k.value for k in call.keywords if k.arg == name), None)


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
    """The Python int ``expr`` always is: a literal, a name bound once to one or asserted equal
    to one before (`assert VEC == 8`), or arithmetic on those."""
    if isinstance(expr, ast.Constant):
        return expr.value if type(expr.value) is int else None
    if depth > 4:
        return None
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        if len(bindings) != 1:
            return None
        found = None
        if bindings[0].kind == "assign" and bindings[0].value is not None:
            found = int_value(model, bindings[0].value, depth + 1)
        return found if found is not None else _asserted(model, expr, bindings[0])
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        left, right = int_value(model, expr.left, depth + 1), int_value(model, expr.right, depth + 1)
        if left is None or right is None or (isinstance(expr.op, ast.FloorDiv) and right == 0):
            return None
        ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__}
        return ops[type(expr.op)](left, right)
    return None


# --- what a trace-time branch or assertion says of a Python int ----------------------------
def _enclosing(model: SemanticModel, node: ast.AST):
    """(statement, the block it is in, its parent) from ``node`` outwards."""
    parents = model.parent_map(model.tree)
    child, parent = node, parents.get(id(node))
    while parent is not None:
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and any(s is child for s in block):
                yield child, name, block, parent
        child, parent = parent, parents.get(id(parent))


def _test(expr: ast.expr) -> ast.expr:
    """The condition of `if const_expr(c):` (or of a plain `if c:`)."""
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        func = expr.func
        if (isinstance(func, ast.Name) and func.id == "const_expr") or (
            isinstance(func, ast.Attribute) and func.attr == "const_expr"
        ):
            return expr.args[0]
    return expr


def _compared(test: ast.expr, expr: ast.expr) -> tuple[type, int] | None:
    """(operator, k) when ``test`` is `expr <op> k` with a literal int k."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and len(test.comparators) == 1):
        return None
    right = test.comparators[0]
    if ast.dump(test.left) != ast.dump(expr) or not (isinstance(right, ast.Constant) and type(right.value) is int):
        return None
    return type(test.ops[0]), right.value


def _asserted(model: SemanticModel, name: ast.Name, binding) -> int | None:
    """``k`` when `assert name == k` comes before ``name`` in a block around it (after its one
    binding): the trace stops otherwise."""
    for statement, _, block, _ in _enclosing(model, name):
        for earlier in block[: next(i for i, s in enumerate(block) if s is statement)]:
            if isinstance(earlier, ast.Assert) and earlier.lineno > binding.position[0]:
                found = _compared(earlier.test, name)
                if found is not None and found[0] is ast.Eq:
                    return found[1]
    return None


def _more_than_one(model: SemanticModel, width: ast.expr) -> bool:
    """A width the code only reaches when it is more than 1: in the `else` of `if W == 1`, or
    under `if W > 1` / `W >= 2` / `W != 1` (at trace time, `const_expr` or plain)."""
    for _, field, _, parent in _enclosing(model, width):
        if not isinstance(parent, ast.If):
            continue
        found = _compared(_test(parent.test), width)
        if found is None:
            continue
        op, k = found
        if field == "orelse" and op is ast.Eq and k == 1:
            return True
        if field == "body" and ((op is ast.Gt and k >= 1) or (op is ast.GtE and k >= 2) or (op is ast.NotEq and k == 1)):
            return True
    return False


# --- an element type chosen at trace time ----------------------------------------------------
def chosen_class(model: SemanticModel, expr: ast.expr, at: ast.AST) -> tuple[str, str] | None:
    """(a representative fx class, fx code) for `A if c else B` (inline, or a name bound once to
    it) choosing between float types of one size: the offset scales alike either way. The
    condition is written again at ``at``, so its names must mean the same there."""
    choice = expr
    if isinstance(expr, ast.Name):
        bindings = model.reaching_bindings(expr)
        if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
            return None
        choice = bindings[0].value
    if not isinstance(choice, ast.IfExp):
        return None
    body, orelse = element_class(model, choice.body), element_class(model, choice.orelse)
    if not (body and orelse) or element_bytes(body) != element_bytes(orelse):
        return None
    if body != orelse and not all(c.startswith(("Float", "BFloat")) for c in (body, orelse)):
        return None  # integers of one size differ in signedness
    if choice is not expr and not _visible_alike(model, choice.test, at):
        return None
    test = model.index.slice(model.index.node_range(choice.test)).replace("{", "{{").replace("}", "}}")
    return body, f"({{fx}}.{body} if {test} else {{fx}}.{orelse})"


def _visible_alike(model: SemanticModel, test: ast.expr, at: ast.AST) -> bool:
    """Every name ``test`` reads is bound once, in a scope around ``at``'s function that no scope
    between them rebinds: written at ``at``, it reads the same values."""
    parents = model.parent_map(model.tree)
    function = parents.get(id(at))
    while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        function = parents.get(id(function))
    scope = model.function_scope(function) if function is not None else None
    for name in (n for n in ast.walk(test) if isinstance(n, ast.Name)):
        bindings = model.reaching_bindings(name)
        if len(bindings) != 1 or bindings[0].kind not in ("param", "assign", "import"):
            return False
        inner = scope
        while inner is not None and inner is not bindings[0].scope:
            if name.id in inner.bindings:
                return False
            inner = inner.parent
        if inner is None or len(inner.bindings.get(name.id, ())) != 1:
            return False
    return True

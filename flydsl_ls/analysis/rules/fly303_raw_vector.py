import ast

from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.valueflow import value_kind
from flydsl_ls.analysis.rules import _raw_dialect_support as S
from flydsl_ls.analysis.rules._boundary import raw_boundaries
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

VECTOR_MODULES = ("mlir.vector", "shim.vector")
OPS = {"extract", "bitcast", "splat", "broadcast", "from_elements", "load", "store", "load_op", "extract_strided_slice"}
OP_CLASSES = {
    "ExtractOp": "extract",
    "BitCastOp": "bitcast",
    "BroadcastOp": "broadcast",
    "SplatOp": "splat",
    "FromElementsOp": "from_elements",
    "ExtractStridedSliceOp": "extract_strided_slice",
    "LoadOp": "load",
    "StoreOp": "store",
}
MEMORY = {"load", "store", "load_op"}
MEMORY_WHY = (
    " (no fix: the replacement depends on the memref, a register one or memory that wants a "
    "layout view, which cannot be told from the call)"
)
UNCLEAN = " (no fix: the call is not the plain `(type, value)` form)"


class RawVector(Rule):
    """
    Raw `vector` dialect ops on register vectors: `vector.extract`, `vector.bitcast`,
    `vector.splat`/`vector.broadcast`, `vector.from_elements`,
    `vector.extract_strided_slice`, and vector loads/stores
    of register memrefs, through the MLIR dialect (`flydsl._mlir.dialects.vector`, also
    `_vector`, `mlir_vector`, ...) or aiter's vendored shim (`from
    aiter.ops.flydsl.kernels import vector`, `from . import vector`), including the
    `*Op` classes. A helper that receives the dialect as a parameter named `vector` is
    covered when the calls in the file pass the module in.

    `fx.Vector` has all of it: `vector.extract(v, static_position=[i])` ->
    `fx.Vector(v)[i]`; `vector.bitcast(T.i32x4, v)` -> `fx.Vector(v).bitcast(fx.Int32)`;
    `vector.broadcast(T.f32x4, s)` -> `fx.Vector.filled(4, s, fx.Float32)`;
    `vector.from_elements(T.f32x2, [a, b])` -> `fx.Vector.from_elements([a, b],
    fx.Float32)`; `vector.extract_strided_slice(T.vec(4, T.i32), v, offsets=[4], sizes=[4],
    strides=[1])` of an 8-element `v` -> `fx.Vector(v).reshape((2, 4))[1, None]` (the
    `i`-th whole run of `k` elements; 0.3.1 and 0.5.0); register-memref load/store -> `fx.memref_load_vec(r)` /
    `fx.memref_store_vec(v, r)` (or a layout view and a copy atom for shared memory).
    `T.vec(n, cls.ir_type)`, with `cls` a name holding an fx class on every path
    (`out_elem_cls = BFloat16 if bf16 else Float16`), passes `cls` itself.
    `fx.Vector`, `Vector` from `flydsl.expr.typing` and the shim's re-exported `Vector`
    are the modern API and are never flagged.

    Fix safety. `extract` with one literal static position and `bitcast` to a known fx
    element type are safe when `v` is already an `fx.Vector` (a flat 1-D vector, so the
    op is the same `vector.extract`/`vector.bitcast`) and every use of the result accepts
    the typed result (`extract` now gives an `fx.Float32`, not a raw value: fine for
    `arith.select`, an `fx.Float32(...)` cast or an `as_ir_value`/`_to_raw` call; `bitcast`
    gives an `fx.Vector`, which raw builders still accept). On a raw value, `fx.Vector(v)`
    reads an n-D vector's shape, where `[i]` takes a flat element instead of a row: unsafe.
    An element that reaches a consumer needing the raw value (a raw builder, `.truncf`, code
    the file does not show) gets `e.ir_value()` there, in the same (unsafe) fix.
    `filled`/`from_elements` coerce their operands: unsafe. The slice is unsafe: its first MLIR
    goes through a `vector.shape_cast` to 2-D and back (the LLVM IR and ISA were identical on
    gfx942), and it is offered only when `v`'s length is read off the op that makes it. A static position that is not
    an IR value is a Python int when traced (`static_position=[i]`): unsafe `[i]`. Dynamic
    positions and loads/stores get no fix (a memref's replacement depends on what it is). Calls inside the legacy helper layers themselves (aiter's
    `kernels/vector.py`, `tensor_shim.py`, ...) are not reported; their callers are.
    """

    code = "FLY303"
    name = "raw-vector"
    summary = "raw `vector.extract/bitcast/splat/broadcast/from_elements/extract_strided_slice`, vector loads/stores"
    replacement = (
        "`fx.Vector(v)[i]`, `.bitcast(fx.T)`, `fx.Vector.filled`, `fx.Vector.from_elements`, "
        "`fx.Vector(v).reshape((n // k, k))[i, None]`, `fx.memref_load_vec/store_vec`"
    )
    fix_safety = "safe for extract/bitcast on fx.Vector values with static positions; unsafe otherwise"
    fix_title = "Use fx.Vector"
    example_before = "x = vector.extract(v, static_position=[0], dynamic_position=[])"
    example_after = "x = fx.Vector(v)[0]"

    callees = Callees(modules=frozenset(VECTOR_MODULES))

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol is None:
            return
        module, _, op = symbol.rpartition(".")
        if module not in VECTOR_MODULES:
            return
        if S.is_shim_definition(self.ctx.path):
            return
        spelled = f"{self.text(node.func)}(...)"
        replaced: ast.AST = node
        raw = module == "mlir.vector"
        if op in OP_CLASSES:
            op = OP_CLASSES[op]
            parent = self.ctx.parent
            if op in MEMORY or not (
                isinstance(parent, ast.Attribute) and parent.attr == "result" and parent.value is node
            ):
                why = MEMORY_WHY if op in MEMORY else " (no fix: the op object itself is used, not its `.result`)"
                self.report(node, f"`{spelled}` builds a raw vector op: {self._hint(op)}{why}")
                return
            replaced, raw, spelled = parent, True, f"{spelled}.result"
        elif op not in OPS:
            return
        if op in MEMORY:
            self.report(node, f"`{spelled}` is a raw vector {op.split('_')[0]}: {self._hint(op)}{MEMORY_WHY}")
            return
        getattr(self, f"_{op}")(node, replaced, raw, spelled)

    @staticmethod
    def _hint(op: str) -> str:
        return {
            "extract": "use `fx.Vector(v)[i]`",
            "bitcast": "use `fx.Vector(v).bitcast(fx.T)`",
            "broadcast": "use `fx.Vector.filled(n, value, fx.T)`",
            "splat": "use `fx.Vector.filled(n, value, fx.T)`",
            "from_elements": "use `fx.Vector.from_elements([...], fx.T)`",
            "extract_strided_slice": "use `fx.Vector(v).reshape((n // k, k))[i, None]` for the `i`-th run of `k` elements",
        }.get(op, "use `fx.memref_load_vec(r)`/`fx.memref_store_vec(v, r)` for register memrefs, "
                  "or a layout view and a copy atom")

    def _offer(self, node, replaced, spelled, message, text, *, safe=False, imports=(), title=None, edits=()):
        fix = None
        if text is not None and S.comments_dropped(self, replaced, list(node.args)):
            message = f"{message.split(' (unsafe: ')[0]}{S.COMMENTS_WHY}"
        elif text is not None:
            text = S.in_context(text, S.ATOM, replaced, S.parent_of(self, replaced))
            fix = self.replace(replaced, text, title or self.fix_title, safe=safe, extra=(*imports, *edits))
        self.report(node, f"`{spelled}` is a raw vector op: {message}", fix=fix)

    # --- extract ----------------------------------------------------------------------
    def _extract(self, node, replaced, raw, spelled) -> None:
        source, static, dynamic, other = self._extract_args(node, raw)
        hint = self._hint("extract")
        why = None
        if source is None or other or static is None:
            why = " (no fix: the call's arguments are not the plain source and static position list)"
        elif dynamic and dynamic.elts:
            why = " (no fix: a dynamic position; `fx.Vector` indexing takes a static one here)"
        elif len(static) != 1:
            why = f" (no fix: {len(static)} static positions; `fx.Vector(v)[i]` takes one)"
        elif value_kind(self.model.type_of(static[0])) not in ("python", "unknown"):
            # a static position is a Python int when traced: anything not an IR value is one
            why = f" (no fix: the position `{self.text(static[0])}` is an IR value, not a static index)"
        if why is not None:
            return self._offer(node, replaced, spelled, f"{hint}{why}", None)
        position = static[0]
        kind = self.model.type_of(source)
        fx, imports = fx_alias(self.model)
        if kind.name == "fx.Vector":
            text = f"{S.receiver(self, source)}[{self.text(position)}]"
            imports = ()
        else:
            text = f"{fx}.Vector({self.text(source)})[{self.text(position)}]"
        safe = (
            kind.name == "fx.Vector"
            and S.non_negative_literal(position)
            and S.result_uses_accept(self, replaced, S.accepts_typed_scalar)
        )
        why = "" if safe else self._why_unsafe(kind.name, S.non_negative_literal(position), "a typed scalar")
        # The element is an fx scalar: each consumer that needs the raw value gets
        # `.ir_value()` in the same fix.
        boundaries = None if safe else raw_boundaries(self, replaced)
        if boundaries is not None and boundaries.blocker is not None:
            why = f" (no fix: the element would be an fx scalar, and {boundaries.blocker})"
            return self._offer(node, replaced, spelled, f"{hint}{why}", None)
        edits = ()
        if boundaries is not None and boundaries.places:
            why = f"{why[:-1]}; {boundaries.note})" if why.endswith(")") else f" (unsafe: {boundaries.note})"
            text += ".ir_value()" if boundaries.wrap_self else ""
            edits = boundaries.edits
        self._offer(node, replaced, spelled, f"{hint}{why}", text, safe=safe, imports=imports,
                    title="Replace with fx.Vector indexing", edits=edits)

    def _extract_args(self, node: ast.Call, raw: bool):
        """(source, static positions, dynamic position list node, other keywords)."""
        if any(isinstance(a, ast.Starred) for a in node.args):
            return None, None, None, True
        names = ["source", "dynamic_position", "static_position"] if raw else [
            "vector", "static_position", "dynamic_position"]
        given = dict(zip(names, node.args))
        other = len(node.args) > 3
        for keyword in node.keywords:
            if keyword.arg in names and keyword.arg not in given:
                given[keyword.arg] = keyword.value
            else:
                other = True
        source = given.get(names[0])
        static = given.get("static_position")
        dynamic = given.get("dynamic_position")
        elts = static.elts if isinstance(static, (ast.List, ast.Tuple)) else None
        if dynamic is not None and not isinstance(dynamic, (ast.List, ast.Tuple)):
            other = True
        return source, elts, dynamic, other

    def _why_unsafe(self, kind: str, literal: bool, result: str) -> str:
        if kind != "fx.Vector":
            return " (unsafe: `v` is not known to be a flat fx.Vector; `fx.Vector(v)` keeps an n-D shape)"
        if not literal:
            return " (unsafe: the position is not a non-negative literal)"
        return f" (unsafe: the result becomes {result}, where a raw value was used)"

    # --- extract_strided_slice ----------------------------------------------------------
    def _extract_strided_slice(self, node, replaced, raw, spelled) -> None:
        """`vector.extract_strided_slice(T.vec(k, t), v, offsets=[o], sizes=[k], strides=[1])`
        of an n-element vector, `o` a multiple of `k`: `fx.Vector(v).reshape((n // k, k))[o // k,
        None]` (0.3.1 and 0.5.0), which builds a `shape_cast` around the same slice: unsafe."""
        hint = self._hint("extract_strided_slice")
        parts = self._slice_args(node)
        if parts is None:
            return self._offer(node, replaced, spelled, f"{hint} (no fix: not a 1-D slice of literal offset, size and stride 1)", None)
        source, offset, size = parts
        count = self._source_count(source)
        if count is None:
            why = f" (no fix: the length of `{self.text(source)}` cannot be read here, and the reshape needs it)"
            return self._offer(node, replaced, spelled, f"{hint}{why}", None)
        if size <= 0 or count % size or offset % size or offset + size > count:
            why = f" (no fix: elements {offset}..{offset + size - 1} of {count} are no whole run of {size})"
            return self._offer(node, replaced, spelled, f"{hint}{why}", None)
        fx, imports = fx_alias(self.model)
        kind = self.model.type_of(source)
        base = S.receiver(self, source) if kind.name == "fx.Vector" else f"{fx}.Vector({self.text(source)})"
        if kind.name == "fx.Vector":
            imports = ()
        shape = f"({count // size}, {size})"
        text = f"{base}.reshape({shape})[{offset // size}, None]"
        message = (
            f"use `{text}`"
            " (unsafe: it slices through a `vector.shape_cast` and gives an fx.Vector, where a raw value was used)"
        )
        self._offer(node, replaced, spelled, message, text, imports=imports, title="Replace with fx.Vector slicing")

    def _slice_args(self, node: ast.Call):
        """(source, offset, size) of a 1-D slice with literal offset and size, stride 1."""
        if len(node.args) != 2 or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        given = {k.arg: k.value for k in node.keywords}
        if set(given) != {"offsets", "sizes", "strides"}:
            return None
        values = []
        for name in ("offsets", "sizes", "strides"):
            elts = given[name].elts if isinstance(given[name], (ast.List, ast.Tuple)) else None
            value = S.int_literal(self.model, elts[0]) if elts and len(elts) == 1 else None
            if value is None:
                return None
            values.append(value)
        offset, size, stride = values
        result = S.vector_dtype(self.model, node.args[0])
        if stride != 1 or result is None or result[1] != size:
            return None
        return node.args[1], offset, size

    def _source_count(self, source: ast.expr) -> int | None:
        """The element count of a 1-D vector defined by a call that names its type
        (`vector.bitcast(T.vec(8, T.i32), x)`), read through one assignment."""
        if isinstance(source, ast.Name):
            bindings = self.model.reaching_bindings(source)
            if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
                return None
            source = bindings[0].value
        if not isinstance(source, ast.Call) or not source.args:
            return None
        found = S.vector_dtype(self.model, source.args[0])
        return found[1] if found is not None and isinstance(found[1], int) else None

    # --- bitcast ----------------------------------------------------------------------
    def _bitcast(self, node, replaced, raw, spelled) -> None:
        hint = self._hint("bitcast")
        if len(node.args) != 2 or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return self._offer(node, replaced, spelled, f"{hint}{UNCLEAN}", None)
        type_expr, source = node.args
        vector = S.vector_dtype(self.model, type_expr)
        if vector is None or vector[0] is None:
            return self._offer(node, replaced, spelled, f"{hint}{self._unread(type_expr)}", None)
        fx, imports = fx_alias(self.model)
        dtype = vector[0].removeprefix("fx.")
        kind = self.model.type_of(source)
        if kind.name == "fx.Vector":
            text = f"{S.receiver(self, source)}.bitcast({fx}.{dtype})"
        else:
            text = f"{fx}.Vector({self.text(source)}).bitcast({fx}.{dtype})"
        safe = kind.name == "fx.Vector" and S.result_uses_accept(self, replaced, S.accepts_typed_vector)
        why = "" if safe else self._why_unsafe(kind.name, True, "an fx.Vector")
        self._offer(node, replaced, spelled, f"use `.bitcast(fx.{dtype})`{why}", text, safe=safe,
                    imports=imports, title=f"Replace with .bitcast({fx}.{dtype})")

    def _unread(self, type_expr: ast.expr) -> str:
        return f" (no fix: `{self.text(type_expr)}` is not a 1-D vector type whose element type can be read here)"

    # --- splat / broadcast --------------------------------------------------------------
    def _broadcast(self, node, replaced, raw, spelled) -> None:
        hint = self._hint("broadcast")
        if len(node.args) != 2 or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return self._offer(node, replaced, spelled, f"{hint}{UNCLEAN}", None)
        type_expr, value = node.args
        vector = S.vector_dtype(self.model, type_expr)
        kind = self.model.type_of(value)
        if vector is None or vector[0] is None or vector[1] is None:
            return self._offer(node, replaced, spelled, f"{hint}{self._unread(type_expr)}", None)
        if not (kind.is_fx_scalar or kind.is_python):
            why = (f" (no fix: `{self.text(value)}` is not known to be an fx scalar or a Python number, "
                   "which `filled` takes)")
            return self._offer(node, replaced, spelled, f"{hint}{why}", None)
        element, count = vector
        count_text = str(count) if isinstance(count, int) else self.text(count)
        fx, imports = fx_alias(self.model)
        dtype = element.removeprefix("fx.")
        text = f"{fx}.Vector.filled({count_text}, {self.text(value)}, {fx}.{dtype})"
        self._offer(node, replaced, spelled,
                    f"use `fx.Vector.filled({count_text}, value, fx.{dtype})` (unsafe: the fill value is "
                    "coerced to the element type)", text, imports=imports,
                    title="Replace with fx.Vector.filled(...)")

    _splat = _broadcast

    # --- from_elements ----------------------------------------------------------------
    def _from_elements(self, node, replaced, raw, spelled) -> None:
        hint = self._hint("from_elements")
        if len(node.args) != 2 or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return self._offer(node, replaced, spelled, f"{hint}{UNCLEAN}", None)
        type_expr, elements = node.args
        vector = S.vector_dtype(self.model, type_expr)
        fx, imports = fx_alias(self.model)
        if vector is not None and vector[0] is not None:
            dtype = f"{fx}.{vector[0].removeprefix('fx.')}"
        else:
            # `T.vec(n, cls.ir_type)` with `cls` an fx class chosen at build time: pass `cls`.
            variable = S.vector_class_variable(self.model, type_expr)
            if variable is None:
                return self._offer(node, replaced, spelled, f"{hint}{self._unread(type_expr)}", None)
            dtype = variable.id
        text = f"{fx}.Vector.from_elements({self.text(elements)}, {dtype})"
        self._offer(node, replaced, spelled,
                    f"use `fx.Vector.from_elements([...], {dtype})` (unsafe: elements are coerced "
                    "to the element type)", text, imports=imports,
                    title="Replace with fx.Vector.from_elements(...)")

    VALID = [
        # The modern API, under any spelling.
        Valid(
            "import flydsl.expr as fx\nfrom flydsl.expr.typing import Vector as Vec\n"
            "def f(v):\n    a = fx.Vector(v)[0]\n    b = Vec(v).bitcast(fx.Int32)\n"
            "    c = fx.Vector.filled(4, 0.0, fx.Float32)\n    return a, b, c\n"
        ),
        # A parameter named `vector` that is not the dialect: nothing passes the module in.
        Valid("def f(vector, i):\n    return vector.extract(i)\n"),
        Valid("import numpy as np\ndef f(vector):\n    return vector.bitcast(np.int32)\n\nf(np.zeros(4))\n"),
        # Ops the guides do not map to fx.Vector, and text.
        Valid(
            "from flydsl._mlir.dialects import vector\n"
            "# vector.extract(v, static_position=[0]) in a comment\n"
            "s = 'vector.bitcast(T.i32x4, v)'\n"
            "def f(v, w):\n    return vector.shuffle(v, w, [0, 1])\n"
        ),
        Valid("from aiter.ops.flydsl.kernels import vector\nv = vector.Vector(x)\nz = vector.full(4, 0.0)\n"),
    ]
    INVALID = [
        # The element class picked at build time (FlyDSL's preshuffle_gemm epilogue): the
        # class itself is the dtype.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import vector\n"
            "from flydsl.expr.typing import BFloat16, Float16, T\n\n"
            "def build(out_dtype):\n    out_elem_cls = BFloat16 if out_dtype == 'bf16' else Float16\n\n"
            "    def epilogue(vals):\n"
            "        return vector.from_elements(T.vec(len(vals), out_elem_cls.ir_type), vals)\n\n"
            "    return epilogue\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl.expr.typing import BFloat16, Float16\n\n"
            "def build(out_dtype):\n    out_elem_cls = BFloat16 if out_dtype == 'bf16' else Float16\n\n"
            "    def epilogue(vals):\n"
            "        return fx.Vector.from_elements(vals, out_elem_cls)\n\n"
            "    return epilogue\n",
            unsafe=True,
            message="use `fx.Vector.from_elements([...], out_elem_cls)`",
        ),
        # A class handed in by the caller may be anything: no fix.
        Invalid(
            "from flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n\n"
            "def epilogue(vals, cls):\n    return vector.from_elements(T.vec(4, cls.ir_type), vals)\n",
            expected=None,
            message="(no fix: `T.vec(4, cls.ir_type)` is not a 1-D vector type whose element type can be read here)",
        ),
        # Halves of an 8-dword vector (aiter's qk_norm_rope / fused_compress_attn stores).
        Invalid(
            "from flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n"
            "def f(x):\n"
            "    v = vector.bitcast(T.vec(8, T.i32), x)\n"
            "    lo = vector.extract_strided_slice(T.vec(4, T.i32), v, offsets=[0], sizes=[4], strides=[1])\n"
            "    hi = vector.extract_strided_slice(T.vec(4, T.i32), v, offsets=[4], sizes=[4], strides=[1])\n"
            "    return lo, hi\n",
            expected="import flydsl.expr as fx\n"
            "def f(x):\n"
            "    v = fx.Vector(x).bitcast(fx.Int32)\n"
            "    lo = fx.Vector(v).reshape((2, 4))[0, None]\n"
            "    hi = fx.Vector(v).reshape((2, 4))[1, None]\n"
            "    return lo, hi\n",
            unsafe=True,
            count=3,
            line=4,
        ),
        Invalid(
            "from aiter.ops.flydsl.kernels import vector\nfrom flydsl.expr.typing import T\n"
            "def f(v, i32):\n"
            "    return vector.extract_strided_slice(T.vec(4, i32), v, offsets=[4], sizes=[4], strides=[1])\n",
            expected=None,
            message="use `fx.Vector(v).reshape((n // k, k))[i, None]` for the `i`-th run of `k` elements (no fix: the length of `v` cannot be read here",
        ),
        # The element of an fx.Vector is an fx scalar, which has no `truncf` (aiter's
        # splitk_hgemm.py) and which a raw builder cannot take.
        Invalid(
            "from flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n"
            "def f(frags, k):\n    val = vector.extract(frags[k], static_position=[0], dynamic_position=[])\n"
            "    return val.truncf(T.bf16)\n",
            expected="from flydsl.expr.typing import T\nimport flydsl.expr as fx\n"
            "def f(frags, k):\n    val = fx.Vector(frags[k])[0]\n"
            "    return val.ir_value().truncf(T.bf16)\n",
            unsafe=True,
            message="`.ir_value()` at the raw boundaries: line 5",
        ),
        # Packed in a conditional expression or a list whose readers are followed: the raw
        # value goes in (the other branch stays raw; FlyDSL's topk_gating_softmax_kernel.py).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n"
            "def f(atom_vec, c, thread_max):\n"
            "    val_e = vector.extract(atom_vec, dynamic_position=[], static_position=[0])\n"
            "    xv = val_e if c else val_e.extf(T.f32)\n"
            "    pair = [val_e, 1]\n"
            "    fx.printf(pair)\n"
            "    return fx.max(thread_max, xv)\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr.typing import T\n"
            "def f(atom_vec, c, thread_max):\n"
            "    val_e = fx.Vector(atom_vec)[0]\n"
            "    xv = val_e.ir_value() if c else val_e.ir_value().extf(T.f32)\n"
            "    pair = [val_e.ir_value(), 1]\n"
            "    fx.printf(pair)\n"
            "    return fx.max(thread_max, xv)\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import vector\n"
            "def f(v):\n    fx.printf(vector.extract(v, static_position=[0], dynamic_position=[]))\n",
            expected="import flydsl.expr as fx\ndef f(v):\n    fx.printf(fx.Vector(v)[0])\n",
            unsafe=True,
            line=4,
            column=15,
            message="fx.Vector(v)[i]",
        ),
        # Safe: an fx.Vector source, a literal position, the result cast once.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import vector as _vector\n"
            "def f(v: fx.Vector):\n"
            "    x = _vector.extract(v, static_position=[3], dynamic_position=[])\n"
            "    return fx.Float32(x)\n",
            expected="import flydsl.expr as fx\n"
            "def f(v: fx.Vector):\n    x = v[3]\n    return fx.Float32(x)\n",
        ),
        # ...but returning the element (a raw value before) is unsafe.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import vector\n"
            "def f(v: fx.Vector):\n    fx.printf(vector.extract(v, static_position=[3], dynamic_position=[]))\n",
            expected="import flydsl.expr as fx\ndef f(v: fx.Vector):\n    fx.printf(v[3])\n",
            unsafe=True,
        ),
        # aiter's vendored shim (keyword order static-then-dynamic), relative import.
        Invalid(
            "import flydsl.expr as fx\nfrom . import vector\ndef f(v):\n    fx.printf(vector.extract(v, static_position=[2]))\n",
            expected="import flydsl.expr as fx\ndef f(v):\n    fx.printf(fx.Vector(v)[2])\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom aiter.ops.flydsl.kernels import vector\n"
            "def f(v):\n    fx.printf(vector.extract(v, [1]))\n",
            expected="import flydsl.expr as fx\ndef f(v):\n    fx.printf(fx.Vector(v)[1])\n",
            unsafe=True,
        ),
        Invalid(
            "from . import vector\nfrom flydsl.expr.typing import T\n"
            "def f(v):\n    return vector.bitcast(T.i32x4, v)\n",
            expected="import flydsl.expr as fx\n"
            "def f(v):\n    return fx.Vector(v).bitcast(fx.Int32)\n",
            unsafe=True,
        ),
        # Dynamic positions: no fix.
        Invalid(
            "from flydsl._mlir.dialects import vector\n"
            "def f(v, i):\n    return vector.extract(v, static_position=[-9223372036854775808], dynamic_position=[i])\n",
            expected=None,
            message="no fix: a dynamic position",
        ),
        # An unreadable vector type; two positions into an n-D vector.
        Invalid(
            "from flydsl._mlir.dialects import vector\ndef f(ty, v):\n    return vector.bitcast(ty, v)\n",
            expected=None,
            message="no fix: `ty` is not a 1-D vector type",
        ),
        Invalid(
            "from flydsl._mlir.dialects import vector\n"
            "def f(v):\n    return vector.extract(v, static_position=[0, 1], dynamic_position=[])\n",
            expected=None,
            message="no fix: 2 static positions",
        ),
        # A static position is a Python int when traced, whatever its name.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import vector\n"
            "def f(v, i):\n    fx.printf(vector.extract(v, static_position=[i], dynamic_position=[]))\n",
            expected="import flydsl.expr as fx\ndef f(v, i):\n    fx.printf(fx.Vector(v)[i])\n",
            unsafe=True,
        ),
        # bitcast of an fx.Vector feeding a raw builder: safe (an fx.Vector is an ir.Value).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n"
            "def f(v: fx.Vector):\n    w = vector.bitcast(T.vec(4, T.i32), v)\n"
            "    return vector.extract(w, static_position=[0], dynamic_position=[])\n",
            expected="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import vector\n"
            "def f(v: fx.Vector):\n    w = v.bitcast(fx.Int32)\n"
            "    return vector.extract(w, static_position=[0], dynamic_position=[])\n",
            count=2,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import vector as mlir_vector\n"
            "from flydsl.expr.typing import T\n"
            "def f(a: fx.Float32, b: fx.Float32):\n"
            "    z = mlir_vector.broadcast(T.f32x4, a)\n"
            "    return z, mlir_vector.from_elements(T.vec(2, T.f32), [a, b])\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Float32, b: fx.Float32):\n"
            "    z = fx.Vector.filled(4, a, fx.Float32)\n"
            "    return z, fx.Vector.from_elements([a, b], fx.Float32)\n",
            unsafe=True,
            count=2,
        ),
        # A raw scalar cannot fill an fx.Vector: reported without a fix.
        Invalid(
            "from flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n"
            "def f(s):\n    return vector.broadcast(T.f32x4, s)\n",
            expected=None,
            message="no fix: `s` is not known to be an fx scalar or a Python number",
        ),
        # Loads and stores of register memrefs, op classes without .result.
        Invalid(
            "from flydsl._mlir.dialects import vector\n"
            "def f(vt, r, i, v):\n    x = vector.load(vt, r, [i])\n    vector.store(v, r, [i])\n    return x\n",
            expected=None,
            count=2,
            message="no fix: the replacement depends on the memref",
        ),
        Invalid(
            "from flydsl._mlir.dialects import vector\nfrom flydsl.expr.typing import T\n"
            "def f(v):\n    return vector.BitCastOp(T.i8x4, v).result\n",
            expected="import flydsl.expr as fx\n"
            "def f(v):\n    return fx.Vector(v).bitcast(fx.Int8)\n",
            unsafe=True,
        ),
        # The dialect passed in as a parameter named `vector`, resolved from the call site.
        Invalid(
            "from flydsl._mlir.dialects import vector as _vector\nimport flydsl.expr as fx\n"
            "def helper(vector, v):\n    return vector.extract(v, static_position=[0], dynamic_position=[])\n"
            "def kernel(v):\n    fx.printf(helper(_vector, v))\n",
            expected="from flydsl._mlir.dialects import vector as _vector\nimport flydsl.expr as fx\n"
            "def helper(vector, v):\n    return fx.Vector(v)[0]\n"
            "def kernel(v):\n    fx.printf(helper(_vector, v))\n",
            unsafe=True,
        ),
    ]

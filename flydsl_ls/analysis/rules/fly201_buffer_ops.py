import ast

from flydsl_ls.analysis.model import _is_raw_op
from flydsl_ls.analysis.rewrite import fx_alias
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

SHIM = "shim.buffer_ops."
CREATE = SHIM + "create_buffer_resource"
LOADS_STORES = {SHIM + "buffer_load", SHIM + "buffer_store"}
COPY_FORM = (
    "`t = fx.make_view(fx.get_iter(buf), fx.make_layout(shape, stride))` + "
    "`atom = fx.make_copy_atom(fx.rocdl.BufferCopy128b(), dtype)` + `fx.copy(atom, src, dst)`"
)
OTHER_HELPERS = {
    SHIM + "create_buffer_resource_from_addr": (
        "builds a buffer resource from a raw 64-bit address: build a typed fx pointer "
        "(`fx.inttoptr(fx.PointerType.get(elem, fx.AddressSpace.Global, align), addr)`), view it with "
        "`fx.make_view(ptr, layout)` and make it a buffer tensor with `fx.rocdl.make_buffer_tensor(view)` "
        "(`num_records_bytes=` for the byte bound)"
    ),
    SHIM + "extract_base_index": "reads a tensor's base address by hand: use `fx.ptrtoint(fx.get_iter(t))`",
}


class BufferOps(Rule):
    """
    The `buffer_ops` helper layer (FlyDSL's `kernels/common/buffer_ops.py`, aiter's
    `aiter/ops/flydsl/kernels/buffer_ops.py`, and the historical `flydsl.expr.buffer_ops`)
    builds raw buffer resources and loads/stores at hand-computed offsets. The modern form
    makes a buffer *tensor* with `fx.rocdl.make_buffer_tensor(t)` (same layout, iterator
    replaced by a buffer descriptor), views it with a layout and moves data with a copy
    atom (`fx.rocdl.BufferCopy128b()` ...) and `fx.copy`.

    `create_buffer_resource(t)` / `create_buffer_resource(t, max_size=True)` gets the fix
    `fx.rocdl.make_buffer_tensor(t)` (unsafe: the value becomes an fx tensor instead of a raw
    `!llvm.ptr<8>` resource). It is offered only where the resource is not consumed as a raw
    resource (no `buffer_load`/`buffer_store`/raw intrinsic takes it): otherwise those uses
    must move to `fx.copy` first, and the diagnostic says which. `stride=`,
    `num_records_bytes=`, `base_byte_offset=` or `max_size=False` get no fix
    (`make_buffer_tensor` takes `max_size=`/`num_records_bytes=` itself; check the bound).

    `buffer_load`/`buffer_store` get a diagnostic only: their offsets are in ELEMENTS of the
    dtype (multiplied by sizeof(dtype) internally, a classic bug source when ported to byte
    offsets); the replacement is a layout view plus a copy atom and `fx.copy`.
    `create_buffer_resource_from_addr` and `extract_base_index` get a diagnostic with their
    replacement (`fx.ptrtoint(fx.get_iter(t))` for the latter). The shims' own definitions
    and `rocdl.raw_ptr_buffer_load`/`buffer_load_to_lds` are never flagged.
    """

    code = "FLY201"
    name = "buffer-ops"
    summary = "`buffer_ops.create_buffer_resource/buffer_load/buffer_store` (and bare calls of them)"
    replacement = "`fx.rocdl.make_buffer_tensor` + layout view + copy atom + `fx.copy` (offsets are in elements)"
    fix_safety = "unsafe for `create_buffer_resource(t, max_size=True)`; none for load/store"
    fix_title = "Use fx.rocdl.make_buffer_tensor"
    example_before = (
        "rsrc = buffer_ops.create_buffer_resource(A, max_size=True)\n"
        "data = buffer_ops.buffer_load(rsrc, row * K + k, vec_width=4, dtype=fx.Float32)"
    )
    example_after = (
        "bufA = fx.rocdl.make_buffer_tensor(A)\n"
        "tA = fx.make_view(fx.get_iter(bufA), fx.make_layout((M, K), (K, 1)))\n"
        "copy = fx.make_copy_atom(fx.rocdl.BufferCopy128b(), fx.Float32)\n"
        "fx.copy(copy, fx.slice(tA, (None, tid)), rA)"
    )

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if not symbol or not symbol.startswith(SHIM):
            return
        spelled = ast.unparse(node.func)
        if symbol == CREATE:
            self._create(node, spelled)
        elif symbol in LOADS_STORES:
            verb = "load" if symbol.endswith("load") else "store"
            self.report(
                node,
                f"`{spelled}(...)` is a hand-addressed buffer {verb}: its offset is in ELEMENTS of the "
                f"dtype (the shim multiplies by sizeof(dtype)), not bytes. Use a buffer tensor and a copy "
                f"atom: {COPY_FORM}",
            )
        elif symbol in OTHER_HELPERS:
            self.report(node, f"`{spelled}(...)` {OTHER_HELPERS[symbol]}")

    def _create(self, node: ast.Call, spelled: str) -> None:
        base = f"`{spelled}(...)` builds a raw buffer resource: use `fx.rocdl.make_buffer_tensor(t)` and a copy atom + `fx.copy` (buffer offsets are in elements)"
        reason = self._why_no_fix(node)
        if reason is not None:
            self.report(node, f"{base}; no automatic fix: {reason}")
            return
        fx, imports = fx_alias(self.model)
        text = f"{fx}.rocdl.make_buffer_tensor({self.text(node.args[0])})"
        self.report(node, base, fix=self.replace(node, text, self.fix_title, safe=False, extra=imports))

    def _why_no_fix(self, node: ast.Call) -> str | None:
        if len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            return "only `create_buffer_resource(t)` with one tensor argument maps 1:1"
        for kw in node.keywords:
            if kw.arg == "max_size" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
                continue
            name = kw.arg or "**kwargs"
            return f"`{name}=` changes the record bound or base (pass `max_size=`/`num_records_bytes=` to `make_buffer_tensor` by hand)"
        parent = self.ctx.parent
        if isinstance(parent, ast.Expr):
            return None
        if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
            return "the resource is used in place (it must be a tensor where it is consumed)"
        bindings = [b for b in self._target_bindings(parent)]
        if len(bindings) != 1:
            return "the resource's name is rebound"
        # Its uses lie in its scope: that scope's parent map will do (a module's is big).
        parent_map = self.model.parent_map(bindings[0].scope.node)
        for use in self.model.uses_of(bindings[0]):
            problem = self._raw_use(use, parent_map)
            if problem:
                return problem
        return None

    def _target_bindings(self, stmt: ast.Assign):
        target = stmt.targets[0]
        function = self.ctx.enclosing_function()
        scope = self.model.function_scope(function) if function is not None else self.model.module_scope
        for binding in scope.bindings.get(target.id, ()) if scope else ():
            if binding.node is stmt or binding.node is target:
                yield binding
        if scope and len(scope.bindings.get(target.id, ())) > 1:
            yield None

    def _raw_use(self, use: ast.Name, parent_map: dict[int, ast.AST]) -> str | None:
        call = parent_map.get(id(use))
        if isinstance(call, ast.Call) and use is not call.func:
            symbol = self.model.resolve(call.func) or ""
            if symbol.startswith(SHIM) or symbol.startswith("mlir.") or _is_raw_op(symbol) or (
                symbol.startswith("fx.rocdl.") and symbol.split(".")[-1][:1].islower() and "make_buffer" not in symbol
            ):
                return (
                    f"the resource is consumed raw by `{ast.unparse(call.func)}` (line {call.lineno}); "
                    f"migrate that to a copy atom + `fx.copy` first (offsets in elements)"
                )
            if symbol.startswith("fx."):
                return None
            return f"the resource is passed to `{ast.unparse(call.func)}` (line {call.lineno}), which may need the raw resource"
        if isinstance(call, (ast.Subscript, ast.Attribute)):
            return None
        return f"the resource is used at line {use.lineno} in a way a tensor may not support"

    VALID = [
        Valid("import flydsl.expr as fx\ndef f(A):\n    return fx.rocdl.make_buffer_tensor(A)\n"),
        Valid(
            "from kernels.common import buffer_ops\n"
            "# buffer_ops.create_buffer_resource(A) in a comment\n"
            's = "buffer_ops.buffer_load(rsrc, 0)"\n'
        ),
        Valid(
            # The shim's own definition and its internal calls.
            "def buffer_load(rsrc, offset, vec_width=4, dtype=None):\n    return rsrc\n"
            "def create_buffer_resource(t, max_size=True):\n    return t\n"
            "x = buffer_load(create_buffer_resource(1), 0)\n"
        ),
        Valid(
            "from flydsl.expr import rocdl\n"
            "def f(rsrc, voff, soff, aux, ty):\n"
            "    a = rocdl.raw_ptr_buffer_load(ty, rsrc, voff, soff, aux)\n"
            "    rocdl.buffer_load_to_lds(rsrc, voff)\n"
            "    return a\n"
        ),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, tid):\n"
            "    rsrc = buffer_ops.create_buffer_resource(A, max_size=True)\n"
            "    tA = fx.make_view(fx.get_iter(rsrc), fx.make_layout(64, 1))\n"
            "    return tA\n",
            expected="import flydsl.expr as fx\n"
            "def f(A, tid):\n"
            "    rsrc = fx.rocdl.make_buffer_tensor(A)\n"
            "    tA = fx.make_view(fx.get_iter(rsrc), fx.make_layout(64, 1))\n"
            "    return tA\n",
            unsafe=True,
            line=4,
            column=12,
        ),
        Invalid(
            # Bare import from aiter's shim, no fx import yet: one is added.
            "from aiter.ops.flydsl.kernels.buffer_ops import create_buffer_resource\n"
            "def f(A):\n"
            "    out = create_buffer_resource(A)\n"
            "    return out[0]\n",
            # The fx import is added; the shim import, now unused, is cleaned up.
            expected="import flydsl.expr as fx\n"
            "def f(A):\n"
            "    out = fx.rocdl.make_buffer_tensor(A)\n"
            "    return out[0]\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, row, K, k):\n"
            "    rsrc = buffer_ops.create_buffer_resource(A, max_size=True)\n"
            "    return buffer_ops.buffer_load(rsrc, row * K + k, vec_width=4, dtype=fx.Float32)\n",
            expected=None,
            count=2,
            message="consumed raw by `buffer_ops.buffer_load`",
        ),
        Invalid(
            "from kernels.common import buffer_ops as _bo\n"
            "def f(data, rsrc, off):\n"
            "    _bo.buffer_store(data, rsrc, off)\n",
            expected=None,
            message="ELEMENTS",
        ),
        Invalid(
            "from kernels.common.buffer_ops import buffer_load\n"
            "def f(rsrc, i):\n"
            "    return buffer_load(rsrc, i, vec_width=1)\n",
            expected=None,
            message="fx.make_copy_atom(fx.rocdl.BufferCopy128b(), dtype)",
        ),
        Invalid(
            "from kernels.common import buffer_ops\n"
            "def f(A):\n"
            "    return buffer_ops.create_buffer_resource(A, max_size=False)\n",
            expected=None,
            message="`max_size=`",
        ),
        Invalid(
            "from kernels.common import buffer_ops\n"
            "def f(t):\n"
            "    return buffer_ops.extract_base_index(t)\n",
            expected=None,
            message="fx.ptrtoint(fx.get_iter(t))",
        ),
        Invalid(
            "from aiter.ops.flydsl.kernels import buffer_ops\n"
            "def f(addr, n):\n"
            "    crfa = buffer_ops.create_buffer_resource_from_addr\n"
            "    return crfa(addr, num_records_bytes=n)\n",
            expected=None,
            message="fx.inttoptr",
        ),
    ]

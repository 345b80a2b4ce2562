import ast

from flydsl_ls.analysis.model.locate import spelled as spelled_callee
from flydsl_ls.analysis.model.rawtypes import raw_result_type
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.versions import at_least, parse
from flydsl_ls.analysis.rules._llvm_pointer_support import (
    FX_ADDRESS_SPACES,
    constant_value,
    llvm_address_space,
)
from flydsl_ls.analysis.rules._raw_dialect_support import is_shim_definition
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid, call_argument

# Legacy helpers that turn an integer address into an !llvm.ptr with a hard-coded
# address space, and the address space each one defaults to.
INT_TO_PTR_HELPERS = {
    "shim.buffer_ops.create_llvm_ptr": 0,
    "shim.mem_ops._create_llvm_ptr": 1,
    "shim.mem_ops.to_llvm_ptr": 1,  # not fx.to_llvm_ptr: mem_ops' alias of _create_llvm_ptr
}
# ptr + offset * dtype_bytes, then a hand-made global pointer: the offset math stays.
ELEMENT_PTR_HELPERS = {"shim.mem_ops.get_llvm_ptr", "shim.mem_ops.element_ptr"}
RAW_INT_TO_PTR = {"mlir.llvm.IntToPtrOp", "mlir.llvm.inttoptr"}
_REPORTED = frozenset((*INT_TO_PTR_HELPERS, *ELEMENT_PTR_HELPERS, *RAW_INT_TO_PTR))  # the calls visit_Call reports

# Calls that only re-type an address on its way from fx.ptrtoint to the int-to-ptr cast.
_PASS_THROUGH = {
    "fx.Index",
    "fx.Int64",
    "fx.Int32",
    "fx.Uint64",
    "fx.Uint32",
    "fx.as_ir_value",
    "fx.arith.unwrap",
    "fx.arith._to_raw",
    "fx.arith.ArithValue",
    "shim.tensor_shim._to_raw",
}
_INDEX_CASTS = {"fx.arith.index_cast", "fx.index_cast", "mlir.arith.index_cast"}
_PTRTOINT = "fx.ptrtoint"
# Pointer-valued calls that may be repeated at the use site (no side effects).
_PURE_POINTER_CALLS = {"fx.get_iter", "fx.recast_iter", "fx.add_offset"}
_MAX_HOPS = 8
_I32_I64 = ("fx.Int32", "fx.Int64")
LLVM_PTR_SINCE = "0.3.0"  # fx.to_llvm_ptr / Pointer.llvm_ptr (DESIGN.md, PyPI wheels)


class LlvmPtrCast(Rule):
    """
    An `!llvm.ptr` built by hand from an integer address hard-codes the address space
    (`<1>` global, `<3>` LDS) and loses the pointer's element type and alignment:
    `buffer_ops.create_llvm_ptr(v, address_space=N)`, `mem_ops._create_llvm_ptr(v)` (also
    spelled `mem_ops.to_llvm_ptr`, FlyDSL's `kernels_common` and aiter's
    `kernels_common` re-export it), `mem_ops.get_llvm_ptr(ptr, offset, dtype_bytes)` /
    `element_ptr`, and a raw `llvm.IntToPtrOp(...)` / `llvm.inttoptr(...)` from the llvm
    dialect under any alias (`_llvm`, `llvm_dialect`, `fx.rocdl.llvm`).

    When you hold an fx pointer, ask it: `ptr.llvm_ptr` (or `fx.to_llvm_ptr(ptr)`) lets
    the backend resolve the address space. For a raw integer address, build a typed fx
    pointer with `fx.inttoptr(fx.PointerType.get(elem, fx.AddressSpace.Shared, align),
    addr)` and convert it only where an `!llvm.ptr` is really needed. `fx.to_llvm_ptr`
    itself is the modern API and is never flagged (`mem_ops.to_llvm_ptr` is a different
    function).

    When the address visibly comes from an fx pointer in the same function, as in
    `idx = fx.Index(fx.ptrtoint(lds.x.ptr))` ... `create_llvm_ptr(idx, address_space=3)`,
    the fix is `lds.x.ptr.llvm_ptr` (unsafe: the address space now comes from the pointer
    instead of the literal `N`).

    Any other integer address gets `fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(
    fx.Int8.ir_type, fx.AddressSpace.Shared), addr))` when the address space is a constant
    the file spells: `address_space=` (or the helper's default), `ir.Type.parse` of a
    literal or a string constant, `llvm.PointerType.get(address_space=N)`, or a name, a
    lazily set global or an argument-less helper bound to one. LLVM 0/1/3 are
    `Generic`/`Global`/`Shared`. The result is the same `!llvm.ptr<N>` the raw consumers
    took, and it lowers to the same `llvm.inttoptr` (the first MLIR gains `fly.inttoptr`
    and `fly.to_llvm_ptr`). An i8 element type and no alignment are what an opaque
    `!llvm.ptr` carries; set real ones when the pointer moves on to fx loads and views.
    An address `create_llvm_ptr` received as an index (or of unknown type) is wrapped in
    `fx.Int64(...)`, as the helper cast it; the fix stays unsafe because a raw i32 there
    would now be sign-extended. No fix for an address space passed in or built from an
    f-string, 5 and the buffer spaces (no fx pointer), an `IntToPtrOp` used as an op, or
    `dereferenceable=`. `get_llvm_ptr` keeps its offset arithmetic (a layout view or
    `fx.add_offset`), so it is reported without a fix.
    """

    code = "FLY202"
    name = "llvm-ptr-cast"
    summary = (
        "`create_llvm_ptr(v, address_space=N)`, `_create_llvm_ptr`, `mem_ops.to_llvm_ptr/get_llvm_ptr`, "
        "hand-made `llvm.IntToPtrOp`/`llvm.inttoptr`"
    )
    replacement = "`ptr.llvm_ptr` / `fx.to_llvm_ptr(ptr)`; `fx.inttoptr` for raw integer addresses"
    fix_safety = "unsafe"
    fix_title = "Use ptr.llvm_ptr"
    example_before = (
        "lds_idx = fx.Index(fx.ptrtoint(lds.x.ptr))\n"
        "p = buffer_ops.create_llvm_ptr(lds_idx, address_space=3)"
    )
    example_after = "lds_idx = fx.Index(fx.ptrtoint(lds.x.ptr))\np = lds.x.ptr.llvm_ptr"

    callees = Callees(symbols=_REPORTED)

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol not in _REPORTED or is_shim_definition(self.ctx.path):
            return  # a shim's own body implements the legacy helpers: its callers are reported
        spelled = spelled_callee(node.func)
        if symbol in INT_TO_PTR_HELPERS:
            space = self._helper_space(node, INT_TO_PTR_HELPERS[symbol])
            address = call_argument(node, 0, "value")
            self._int_to_ptr(node, node, address, f"`{spelled}(...)`", space, helper=True)
        elif symbol in ELEMENT_PTR_HELPERS:
            self.report(
                node,
                f"`{spelled}(ptr, offset, dtype_bytes)` hand-builds a global !llvm.ptr: keep the "
                "offset math (a layout view or `fx.add_offset`) and take `.llvm_ptr` of the fx pointer (no fix: "
                "it takes a raw base and a byte offset, and the fx pointer they were taken from is not in the call)",
            )
        elif symbol in RAW_INT_TO_PTR:
            replaced = node
            if symbol.endswith("IntToPtrOp"):
                parent = self.ctx.parent
                is_result = isinstance(parent, ast.Attribute) and parent.attr == "result"
                replaced = parent if is_result else None
            if any(k.arg not in ("res", "arg") for k in node.keywords):
                replaced = None  # `dereferenceable=`, `loc=`, `ip=`: fx.inttoptr takes none
            pointer_type = call_argument(node, 0, "res")
            space = llvm_address_space(self.model, pointer_type) if pointer_type is not None else None
            address = call_argument(node, 1, "arg")
            self._int_to_ptr(node, replaced, address, f"hand-made `{spelled}(...)`", space, helper=False)

    def _helper_space(self, node: ast.Call, default: int) -> int | None:
        given = call_argument(node, 1, "address_space")
        if given is None:
            return None if any(k.arg is None for k in node.keywords) else default
        return constant_value(self.model, given, int)

    def _int_to_ptr(self, node, replaced, address, spelled: str, space: int | None, helper: bool) -> None:
        pointer = self._pointer_source(address) if address is not None else None
        if pointer is None:
            self._raw_address(node, replaced, address, spelled, space, helper)
            return
        text = self.model.index.slice(self.model.index.node_range(pointer))
        simple = isinstance(pointer, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
        receiver = text if simple and "\n" not in text else f"({text})"
        version = self.ctx.options.flydsl_version
        fix = None
        message = (
            f"{spelled} casts the address of the fx pointer `{ast.unparse(pointer)}` back to an "
            f"!llvm.ptr by hand: use `{ast.unparse(pointer)}.llvm_ptr` (the backend resolves the "
            "address space)"
        )
        if replaced is None:
            message += " (no fix: the op itself is used, not its `.result`)"
        elif parse(version) is None or at_least(version, LLVM_PTR_SINCE):
            fix = self.replace(replaced, f"{receiver}.llvm_ptr", self.fix_title, safe=False)
        else:
            message += f" (no fix: `.llvm_ptr` is not in FlyDSL {version}; it arrives in {LLVM_PTR_SINCE})"
        self.report(node, message, fix=fix)

    def _raw_address(self, node, replaced, address, spelled: str, space: int | None, helper: bool) -> None:
        """A raw integer address: `fx.to_llvm_ptr(fx.inttoptr(<i8 pointer type>, addr))`
        when the address space is a constant fx has a pointer for."""
        message = (
            f"{spelled} builds an !llvm.ptr from an integer with a hard-coded address space: "
            "use `ptr.llvm_ptr` / `fx.to_llvm_ptr(ptr)` on the fx pointer, or "
            "`fx.inttoptr(ptr_type, addr)` for a raw integer address"
        )
        space_name = FX_ADDRESS_SPACES.get(space) if space is not None else None
        reason = None
        if address is None:
            reason = "the address is not a plain argument"
        elif space is None:
            reason = "the address space is not a constant this file spells"
        elif space_name is None:
            reason = f"address space {space} has no fx pointer"
        elif replaced is None:
            reason = "the op itself is used, or it takes options `fx.inttoptr` has not"
        if reason is not None:
            self.report(node, f"{message} (no fix: {reason})")
            return
        fx, imports = fx_alias(self.model)
        addr = self.text(address)
        if isinstance(address, (ast.NamedExpr, ast.Lambda, ast.Yield, ast.YieldFrom)):
            addr = f"({addr})"
        if helper and not self._is_int32_or_int64(address):
            addr = f"{fx}.Int64({addr})"  # fx.inttoptr takes i32/i64, the helper also index
        pointer_type = f"{fx}.PointerType.get({fx}.Int8.ir_type, {fx}.AddressSpace.{space_name})"
        content = f"{fx}.to_llvm_ptr({fx}.inttoptr({pointer_type}, {addr}))"
        fix = self.replace(replaced, content, "Build the pointer with fx.inttoptr", safe=False, extra=imports)
        self.report(
            node,
            f"{spelled} builds an !llvm.ptr<{space}> from an integer by hand: build a typed fx pointer "
            f"with `fx.inttoptr(fx.PointerType.get(elem, fx.AddressSpace.{space_name}, align), addr)` "
            "and convert it with `fx.to_llvm_ptr` only where an !llvm.ptr is needed (the fix "
            "uses an i8 element type and no alignment: the !llvm.ptr keeps neither)",
            fix=fix,
        )

    def _is_int32_or_int64(self, expr: ast.expr) -> bool:
        if self.model.type_of(expr).name in _I32_I64:
            return True
        return isinstance(expr, ast.Call) and raw_result_type(self.model, expr) in _I32_I64

    # --- where an address comes from -------------------------------------------
    def _pointer_source(self, expr: ast.expr) -> ast.expr | None:
        """The fx pointer ``P`` when ``expr`` is ``fx.ptrtoint(P)``, possibly re-typed and
        reached through single assignments in this function; else None."""
        copied_from = None  # the earliest binding whose value we looked through, if any
        for _ in range(_MAX_HOPS):
            if isinstance(expr, ast.Name):
                binding = self._single_local_binding(expr)
                if binding is None:
                    return None
                copied_from = binding
                expr = binding.value
                continue
            if isinstance(expr, ast.Attribute) and expr.attr == "result" and isinstance(expr.value, ast.Call):
                if self.model.resolve(expr.value.func) == "mlir.arith.IndexCastOp":
                    expr = call_argument(expr.value, 1, "in_")
                    if expr is None:
                        return None
                    continue
                return None
            if not isinstance(expr, ast.Call) or any(isinstance(a, ast.Starred) for a in expr.args):
                return None
            if isinstance(expr.func, ast.Attribute) and expr.func.attr == "ir_value" and not expr.args:
                expr = expr.func.value
                continue
            symbol = self.model.resolve(expr.func)
            if symbol == _PTRTOINT and len(expr.args) == 1 and not expr.keywords:
                pointer = expr.args[0]
                if copied_from is not None and not self._movable(pointer, copied_from):
                    return None
                return pointer
            if symbol in _PASS_THROUGH and len(expr.args) == 1 and not expr.keywords:
                expr = expr.args[0]
            elif symbol in _INDEX_CASTS and len(expr.args) == 2 and not expr.keywords:
                expr = expr.args[1]
            else:
                return None
        return None

    def _single_local_binding(self, name: ast.Name):
        bindings = self.model.reaching_bindings(name)
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        if binding.kind not in ("assign", "annassign") or binding.value is None:
            return None
        if binding.scope is not self.model.scope_of(name) or binding.scope.kind == "class":
            return None
        return binding

    def _movable(self, pointer: ast.expr, binding) -> bool:
        """Whether ``pointer`` (read where ``binding`` is assigned) means the same thing at
        the use: only names, attributes, constant subscripts and pure pointer calls, and no
        name of this function rebound after the assignment."""
        for node in ast.walk(pointer):
            if isinstance(node, ast.Call):
                if self.model.resolve(node.func) not in _PURE_POINTER_CALLS:
                    return False
            elif isinstance(node, ast.Subscript):
                if not isinstance(node.slice, (ast.Constant, ast.Name)):
                    return False
            elif isinstance(node, ast.Name):
                owner = self.model.binding_of(node)
                if owner is not None and owner.scope is binding.scope:
                    later = [b for b in owner.scope.bindings.get(node.id, ()) if b.position > binding.position]
                    if later:
                        return False
            elif not isinstance(node, (ast.Attribute, ast.Constant, ast.expr_context, ast.keyword)):
                return False
        return True

    VALID = [
        Valid("import flydsl.expr as fx\ndef f(lds):\n    return fx.to_llvm_ptr(lds.x.ptr)\n"),
        Valid("import flydsl.expr as fx\ndef f(lds):\n    return lds.x.ptr.llvm_ptr\n"),
        Valid("from flydsl.expr import to_llvm_ptr\ndef f(p):\n    return to_llvm_ptr(p)\n"),
        Valid("import flydsl.expr as fx\ndef f(ty, addr):\n    return fx.inttoptr(ty, fx.Int64(addr))\n"),
        Valid(
            "from kernels.common import buffer_ops\n"
            '# buffer_ops.create_llvm_ptr(x, address_space=3) in a comment\n'
            'doc = "llvm.IntToPtrOp(ty, v).result"\n'
        ),
        Valid("def create_llvm_ptr(v, address_space=0):\n    return v\np = create_llvm_ptr(1, address_space=3)\n"),
        Valid("from flydsl._mlir.dialects import llvm\nop_type = llvm.IntToPtrOp\n"),
        Valid("from kernels.common.kernels_common import get_warp_size\nw = get_warp_size()\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(lds):\n"
            "    x_idx = fx.Index(fx.ptrtoint(lds.x.ptr))\n"
            "    return buffer_ops.create_llvm_ptr(x_idx, address_space=3)\n",
            # buffer_ops is no longer used: the fix engine drops its import.
            expected="import flydsl.expr as fx\n"
            "def f(lds):\n"
            "    x_idx = fx.Index(fx.ptrtoint(lds.x.ptr))\n"
            "    return lds.x.ptr.llvm_ptr\n",
            unsafe=True,
            line=5,
            column=12,
            message="lds.x.ptr.llvm_ptr",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops as _buffer_ops\n"
            "def f(t):\n"
            "    p = _buffer_ops.create_llvm_ptr(fx.Int64(fx.ptrtoint(fx.get_iter(t))), address_space=1)\n"
            "    return p\n",
            expected="import flydsl.expr as fx\n"
            "def f(t):\n"
            "    p = fx.get_iter(t).llvm_ptr\n"
            "    return p\n",
            unsafe=True,
        ),
        Invalid(
            # A raw integer address of unknown kind: fx.Int64 takes index, i32 and i64 alike.
            "from aiter.ops.flydsl.kernels.buffer_ops import create_llvm_ptr\n"
            "def f(counter_addr):\n"
            "    return create_llvm_ptr(counter_addr, address_space=1)\n",
            expected="import flydsl.expr as fx\n"
            "def f(counter_addr):\n"
            "    return fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Global), "
            "fx.Int64(counter_addr)))\n",
            unsafe=True,
            message="fx.inttoptr",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common.mem_ops import _create_llvm_ptr\n"
            "from kernels.common import mem_ops\n"
            "def f(stream_ptr, lds):\n"
            "    a = _create_llvm_ptr(stream_ptr)\n"
            "    b = mem_ops.to_llvm_ptr(fx.ptrtoint(lds.ptr), address_space=3)\n"
            "    return a, b\n",
            # _create_llvm_ptr's address space defaults to 1 (global)
            expected="import flydsl.expr as fx\n"
            "def f(stream_ptr, lds):\n"
            "    a = fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Global), "
            "fx.Int64(stream_ptr)))\n"
            "    b = lds.ptr.llvm_ptr\n"
            "    return a, b\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            "from kernels.common.kernels_common import get_llvm_ptr\n"
            "def f(signal, idx):\n"
            "    return get_llvm_ptr(signal, idx, 4)\n",
            expected=None,
            message="offset math",
        ),
        Invalid(
            # The raw op takes an i32/i64 address already: it is passed on as it is.
            "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm as _llvm\n"
            "def f(addr):\n"
            '    return _llvm.IntToPtrOp(ir.Type.parse("!llvm.ptr<1>"), addr).result\n',
            expected="import flydsl.expr as fx\n"
            "def f(addr):\n"
            "    return fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Global), addr))\n",
            unsafe=True,
            message="fx.inttoptr",
            line=4,
            column=12,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import llvm as llvm_dialect\n"
            "def f(ty, lds):\n"
            "    base = fx.ptrtoint(lds.kv.ptr)\n"
            "    addr = fx.as_ir_value(base)\n"
            "    return llvm_dialect.IntToPtrOp(ty, addr).result\n",
            expected="import flydsl.expr as fx\n"
            "def f(ty, lds):\n"
            "    base = fx.ptrtoint(lds.kv.ptr)\n"
            "    addr = fx.as_ir_value(base)\n"
            "    return lds.kv.ptr.llvm_ptr\n",
            unsafe=True,
        ),
        Invalid(
            # The pointer type is a parameter: its address space is unknown.
            "import flydsl.expr as fx\n"
            "def f(ty, addr):\n"
            "    return fx.rocdl.llvm.inttoptr(ty, addr)\n",
            expected=None,
            message="no fix: the address space is not a constant",
        ),
        Invalid(
            # The pointer's name is rebound after the address was taken: not `lds.ptr.llvm_ptr`,
            # a raw address (an fx.Index, made i64 as create_llvm_ptr does).
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(lds, other):\n"
            "    idx = fx.Index(fx.ptrtoint(lds.ptr))\n"
            "    lds = other\n"
            "    return buffer_ops.create_llvm_ptr(idx, address_space=3)\n",
            expected="import flydsl.expr as fx\n"
            "def f(lds, other):\n"
            "    idx = fx.Index(fx.ptrtoint(lds.ptr))\n"
            "    lds = other\n"
            "    return fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Shared), "
            "fx.Int64(idx)))\n",
            unsafe=True,
        ),
        Invalid(
            # The address is offset after ptrtoint: a raw integer address, no fix.
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(ty, lds, off):\n"
            "    addr = fx.Int64(fx.ptrtoint(lds.ptr)) + off\n"
            "    return llvm.inttoptr(ty, fx.as_ir_value(addr))\n",
            expected=None,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(lds):\n"
            "    return buffer_ops.create_llvm_ptr(fx.ptrtoint(lds.ptr), address_space=3)\n",
            expected=None,
            settings={"flydsl_version": "0.2.4"},
            message="no fix: `.llvm_ptr` is not in FlyDSL 0.2.4",
        ),
        Invalid(
            "from aiter.ops.flydsl.kernels import buffer_ops\n"
            "def f(addr):\n"
            "    return buffer_ops.create_llvm_ptr(addr, address_space=3)\n",
            expected=None,
            settings={"flydsl_version": "0.2.4"},
            message="no fix: `fx.to_llvm_ptr` is not in FlyDSL 0.2.4",
        ),
        Invalid(
            # An fx.Int64 / a raw i64 address is passed on unwrapped; the pointer types are read
            # off a module constant, a helper returning one, and llvm.PointerType.get.
            "import flydsl.expr as fx\nfrom flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm\n"
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from kernels.common import buffer_ops\n"
            '_PTR3 = "!llvm.ptr<3>"\n'
            "def _lds_ptr_t():\n"
            '    """the LDS pointer type"""\n'
            "    return ir.Type.parse(_PTR3)\n"
            "def f(base, off, i):\n"
            "    a = buffer_ops.create_llvm_ptr(fx.Int64(base) + 4, address_space=3)\n"
            "    b = buffer_ops.create_llvm_ptr(arith.index_cast(T.i64, i), address_space=1)\n"
            "    c = llvm.inttoptr(_lds_ptr_t(), fx.as_ir_value(off))\n"
            "    d = llvm.IntToPtrOp(llvm.PointerType.get(address_space=1), off).result\n"
            "    return a, b, c, d\n",
            expected="import flydsl.expr as fx\nfrom flydsl._mlir import ir\n"
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            '_PTR3 = "!llvm.ptr<3>"\n'
            "def _lds_ptr_t():\n"
            '    """the LDS pointer type"""\n'
            "    return ir.Type.parse(_PTR3)\n"
            "def f(base, off, i):\n"
            "    a = fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Shared), "
            "fx.Int64(base) + 4))\n"
            "    b = fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Global), "
            "arith.index_cast(T.i64, i)))\n"
            "    c = fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Shared), "
            "fx.as_ir_value(off)))\n"
            "    d = fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Global), off))\n"
            "    return a, b, c, d\n",
            unsafe=True,
            count=4,
        ),
        Invalid(
            # A lazily set module global (None first), a type bound in the enclosing function,
            # and the generic `!llvm.ptr` (address space 0).
            "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm\n"
            "_LDS = None\n"
            "def lds(addr):\n"
            "    global _LDS\n"
            "    if _LDS is None:\n"
            '        _LDS = ir.Type.parse("!llvm.ptr<3>")\n'
            "    return llvm.inttoptr(_LDS, addr)\n"
            "def outer():\n"
            '    ptr_ty = ir.Type.parse("!llvm.ptr")\n'
            "    def inner(addr):\n"
            "        return llvm.IntToPtrOp(ptr_ty, addr).result\n"
            "    return inner\n",
            expected="from flydsl._mlir import ir\nimport flydsl.expr as fx\n"
            "_LDS = None\n"
            "def lds(addr):\n"
            "    global _LDS\n"
            "    if _LDS is None:\n"
            '        _LDS = ir.Type.parse("!llvm.ptr<3>")\n'
            "    return fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Shared), addr))\n"
            "def outer():\n"
            "    def inner(addr):\n"
            "        return fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Generic), addr))\n"
            "    return inner\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            "from aiter.ops.flydsl.kernels import buffer_ops\n"
            "def f(addr, address_space):\n"
            "    return buffer_ops.create_llvm_ptr(addr, address_space=address_space)\n",
            expected=None,
            message="no fix: the address space is not a constant",
        ),
        Invalid(
            "from aiter.ops.flydsl.kernels import buffer_ops\n"
            "def f(addr):\n"
            "    return buffer_ops.create_llvm_ptr(addr, address_space=5)\n",
            expected=None,
            message="no fix: address space 5 has no fx pointer",
        ),
        Invalid(
            "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(addr, space):\n"
            '    return llvm.inttoptr(ir.Type.parse(f"!llvm.ptr<{space}>"), addr)\n',
            expected=None,
            message="no fix: the address space is not a constant",
        ),
        Invalid(
            # The op, not its result, and an attribute fx.inttoptr cannot carry.
            "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(addr, attr):\n"
            '    op = llvm.IntToPtrOp(ir.Type.parse("!llvm.ptr<1>"), addr)\n'
            '    p = llvm.inttoptr(ir.Type.parse("!llvm.ptr<1>"), addr, dereferenceable=attr)\n'
            "    return op.result, p\n",
            expected=None,
            count=2,
            message="no fix: the op itself is used",
        ),
    ]

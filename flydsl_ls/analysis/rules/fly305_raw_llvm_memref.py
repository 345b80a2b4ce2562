import ast

from flydsl_ls.analysis.model.diagnostic import Severity
from flydsl_ls.analysis.model.locate import spelled as spelled_callee
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.rules._raw_dialect_support import is_shim_definition
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid, call_argument

LLVM_KINDS = {
    "load": "load", "LoadOp": "load", "store": "store", "StoreOp": "store",
    "getelementptr": "GEP", "GEPOp": "GEP", "ConstantOp": "constant", "mlir_constant": "constant",
    "constant": "constant", "mlir_zero": "constant", "ZeroOp": "constant",
}
# Hard boundaries (traps.md §3) and FLY202's pointer casts: never this rule's business.
LLVM_KEEP = {"inline_asm", "InlineAsmOp", "call_intrinsic", "CallIntrinsicOp", "IntToPtrOp", "inttoptr"}
ADVICE = {
    "load": "read through a layout view (`view[i]`, `fx.make_view(fx.get_iter(t), layout)`) or `fx.ptr_load` on an fx pointer",
    "store": "write through a layout view (`view[i] = v`) or `fx.ptr_store` on an fx pointer",
    "GEP": "offset an fx pointer with `fx.add_offset(fx.get_iter(t), n)` or index a layout view",
    "constant": "use a Python constant or a typed fx value (`fx.Int32(c)`, `fx.Float32(c)`)",
    "memref-alloc": "declare LDS as an `@fx.struct` of `fx.Array` fields allocated with `fx.SharedAllocator()`, registers with `fx.make_rmem_tensor`",
    "memref-access": "use a layout view: `view[i]`, `view[i] = v`, `fx.make_view(fx.get_iter(t), layout)`, or a copy atom + `fx.copy`",
}
# Memory-model options of llvm loads/stores no layout view or copy expresses: such an access
# is kept as it is (keyword -> what it makes the access).
KEPT_OPTIONS = {
    "volatile_": "volatile",
    "ordering": "atomic",
    "syncscope": "atomic",
    "nontemporal": "nontemporal",
    "invariant": "invariant",
    "invariantGroup": "invariant",
    "invariant_group": "invariant",
    "alias_scopes": "alias-scoped",
    "noalias_scopes": "alias-scoped",
    "tbaa": "TBAA-tagged",
}
# Why no fix is offered, per kind (the pointer kinds depend on where the pointer comes from).
RAW_POINTER = "{ptr} is no fx pointer's `.llvm_ptr`, and `fx.{fx_op}` takes an fx pointer: make one with `fx.inttoptr` or `fx.get_iter` where it is built"
FX_POINTER_ALIGNED = "it states `alignment={align}`, and `fx.{fx_op}` takes the alignment its fx pointer carries"
FX_POINTER = "`fx.{fx_op}` on the fx pointer behind {ptr} is a different op that takes the pointer's alignment: swap it by hand and compare the loads and stores"
NO_FIX = {
    "GEP": "it offsets a raw `!llvm.ptr` by bytes, and `fx.add_offset` offsets an fx pointer by elements",
    "constant": "an fx constant is an `arith.constant`, and the raw llvm ops it feeds take `llvm.mlir.constant`",
    "memref-alloc": "the builtin memref it makes is used by raw memref ops; move them together to `fx.SharedAllocator`",
    "memref-access": "the builtin memref it reads comes from a hand-managed buffer that has no fx layout; give that buffer one first",
    "memref-address": "it reads the address of a builtin memref, and `fx.ptrtoint` takes an fx pointer (`fx.get_iter` of an fx tensor)",
}
MEMREF_ALLOC = {"global_", "get_global", "alloca", "alloc", "AllocaOp", "AllocOp", "GlobalOp", "GetGlobalOp"}


def _is_fx_pointer_view(model: SemanticModel, expr: ast.expr, depth: int = 0) -> bool:
    """``expr`` is an fx pointer's `!llvm.ptr` view (``p.llvm_ptr``, ``fx.to_llvm_ptr(p)``),
    or a name only ever bound to one."""
    if isinstance(expr, ast.Attribute):
        return expr.attr == "llvm_ptr"
    if isinstance(expr, ast.Call):
        return model.resolve(expr.func) == "fx.to_llvm_ptr"
    if isinstance(expr, ast.Name) and depth < 4:
        bindings = model.reaching_bindings(expr)
        return bool(bindings) and all(
            b.kind == "assign" and b.value is not None and _is_fx_pointer_view(model, b.value, depth + 1) for b in bindings
        )
    return False


class RawLlvmMemref(Rule):
    """
    Raw `llvm` dialect memory ops (`llvm.load`/`store`/`LoadOp`/`StoreOp`, `getelementptr`/
    `GEPOp`, `llvm.mlir_constant`/`ConstantOp`) and any raw `memref` dialect call
    (`memref.view`, `memref.load/store`, `memref.global_`/`get_global`, `alloca`, ...) work
    below FlyDSL's typed memory model: hand-computed byte offsets, hard-coded address spaces
    and builtin memrefs that fx layouts cannot see. Guide §3: address memory through layout
    views (`fx.make_view(fx.get_iter(t), layout)`, `view[i]`), pointers through
    `fx.get_iter`/`fx.add_offset`/`fx.ptr_load`, LDS through `fx.SharedAllocator` with an
    `@fx.struct` of `fx.Array` fields, bulk moves through a copy atom and `fx.copy`.

    Resolved through every alias: `_llvm`, `llvm_dialect`, the raw llvm dialect leaked as
    `fx.rocdl.llvm`, `flydsl.expr.llvm._llvm`, `memref_dialect`, `_memref`. Never flagged:
    `llvm.inline_asm`/`InlineAsmOp`/`call_intrinsic` (hard boundaries, kept on purpose),
    the pointer casts `IntToPtrOp`/`inttoptr` (FLY202), the modern `fx.llvm.*` atomics and
    `generic_load/store`, type references that are not calls, and the bodies of the legacy
    helper layers kernels ship (`kernels/common/mem_ops.py`, aiter's `kernels/buffer_ops.py`,
    ...: retired whole; their callers are reported), as for FLY202/301/303/304. Diagnostic only: the
    replacement depends on the surrounding data layout. A load or store that is volatile,
    atomic (`ordering=`, `syncscope=`), nontemporal, invariant or carries alias-scope / TBAA
    metadata is reported as one to keep: a layout view cannot say any of that. Every other
    finding says why it has no fix: a load/store pointer that is not an fx pointer's
    `.llvm_ptr` (`fx.ptr_load`/`fx.ptr_store` take the fx pointer), an explicit `alignment=`
    the fx pointer would not carry, a byte-offset GEP, an `llvm.mlir.constant` feeding raw
    llvm ops, a builtin memref with no fx layout.
    """

    code = "FLY305"
    name = "raw-llvm-memref"
    summary = "raw `llvm.*` load/store/GEP/constant and `memref.*` dialect calls"
    replacement = "layout views, `fx.make_view`, `fx.get_iter`, `SharedAllocator`"
    fix_safety = "none"
    example_before = "p = llvm.GEPOp(ptr_ty, base, [idx], elem_type=T.f32)\nv = llvm.load(T.f32, p)"
    example_after = "t = fx.make_view(fx.get_iter(buf), fx.make_layout(n, 1))\nv = t[idx]"

    callees = Callees(modules=frozenset({"mlir.llvm", "mlir.memref"}))

    def visit_Call(self, node: ast.Call) -> None:
        if is_shim_definition(self.ctx.path):  # the helper layers' own bodies: their callers are reported
            return
        symbol = self.model.resolve(node.func)
        if not symbol:
            return
        module, _, op = symbol.rpartition(".")
        if module not in ("mlir.llvm", "mlir.memref"):
            return
        spelled = spelled_callee(node.func)
        if module == "mlir.llvm" and op in LLVM_KINDS and op not in LLVM_KEEP:
            kind = LLVM_KINDS[op]
            kept = self._kept_options(node) if kind in ("load", "store") else []
            if kept:
                self.report(
                    node,
                    f"raw llvm {kind} `{spelled}(...)` is {' and '.join(kept)}: keep it as it is "
                    f"(no fix: a layout view cannot express that)",
                    severity=Severity.INFORMATION,
                )
                return
            why = self._access_reason(node, kind) if kind in ("load", "store") else NO_FIX[kind]
            self.report(node, f"raw llvm {kind} `{spelled}(...)`: {ADVICE[kind]} (no fix: {why})")
        elif module == "mlir.memref" and op[:1].isalpha():
            kind = "memref-alloc" if op in MEMREF_ALLOC else "memref-access"
            why = NO_FIX["memref-address" if op == "extract_aligned_pointer_as_index" else kind]
            self.report(
                node,
                f"raw memref op `{spelled}(...)` works on builtin memrefs fx layouts cannot see: {ADVICE[kind]} (no fix: {why})",
            )

    def _access_reason(self, node: ast.Call, kind: str) -> str:
        """Why a plain llvm load/store gets no fix: what its pointer operand is."""
        fx_op = "ptr_load" if kind == "load" else "ptr_store"
        pointer = call_argument(node, 1, "addr")
        spelled = ast.unparse(pointer) if pointer is not None else ""
        spelled = f"`{spelled}`" if 0 < len(spelled) <= 40 else "its pointer"
        if pointer is None or not _is_fx_pointer_view(self.model, pointer):
            return RAW_POINTER.format(ptr=spelled, fx_op=fx_op)
        align = next((k.value for k in node.keywords if k.arg == "alignment"), None)
        if align is not None:
            return FX_POINTER_ALIGNED.format(align=ast.unparse(align), fx_op=fx_op)
        return FX_POINTER.format(ptr=spelled, fx_op=fx_op)

    @staticmethod
    def _kept_options(node: ast.Call) -> list[str]:
        """What the access's memory-model keywords make it (``volatile_=False`` and the like
        are no option)."""
        kept = []
        for keyword in node.keywords:
            what = KEPT_OPTIONS.get(keyword.arg or "")
            value = keyword.value
            if what is None or (isinstance(value, ast.Constant) and value.value in (False, None)):
                continue
            if isinstance(value, ast.Attribute) and value.attr == "not_atomic":
                continue
            if what not in kept:
                kept.append(what)
        return kept

    VALID = [
        Valid(
            "from flydsl._mlir.dialects import llvm\n"
            "def f(ty, args):\n"
            '    llvm.inline_asm(ty, args, "s_nop 0", "=v", has_side_effects=True)\n'
            '    llvm.InlineAsmOp(ty, args, "s_waitcnt lgkmcnt(0)", "")\n'
            '    return llvm.call_intrinsic(ty, "llvm.amdgcn.s.sleep", args)\n'
        ),
        Valid(
            "from flydsl._mlir.dialects import llvm as _llvm\n"
            "def f(ty, addr):\n"
            "    return _llvm.IntToPtrOp(ty, addr).result, _llvm.inttoptr(ty, addr)\n"
        ),
        Valid(
            "import flydsl.expr as fx\n"
            "def f(p, v, t):\n"
            "    fx.llvm.atomic_add(p, v)\n"
            "    return fx.make_view(fx.get_iter(t), fx.make_layout(4, 1))\n"
        ),
        Valid(
            "from flydsl._mlir.dialects import llvm, memref\n"
            "# llvm.load(ty, p) and memref.view(...) in a comment\n"
            'doc = "llvm.GEPOp(ptr_ty, base, [i])"\n'
            "ptr_type = llvm.PointerType\n"
        ),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import llvm\n"
            "def f(p, v):\n"
            "    q = (fx.recast_iter(fx.Uint8, p) + fx.Int32(4)).llvm_ptr\n"
            "    llvm.StoreOp(v, q, alignment=16)\n",
            expected=None,
            message="(no fix: it states `alignment=16`, and `fx.ptr_store` takes the alignment its fx pointer carries)",
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import llvm\n"
            "def f(p, ty):\n"
            "    return llvm.LoadOp(ty, fx.to_llvm_ptr(p)).result\n",
            expected=None,
            message="(no fix: `fx.ptr_load` on the fx pointer behind `fx.to_llvm_ptr(p)` is a different op",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm\n"
            "def f(ty, addr):\n"
            "    ptr = llvm.IntToPtrOp(llvm.PointerType.get(address_space=1), addr).result\n"
            "    return llvm.load(ty, ptr)\n",
            expected=None,
            message="(no fix: `ptr` is no fx pointer's `.llvm_ptr`, and `fx.ptr_load` takes an fx pointer",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm\n"
            "def f(ty, p):\n"
            "    return llvm.load(ty, p)\n",
            expected=None,
            line=3,
            column=12,
            message="layout view",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm as llvm_dialect\n"
            "def f(ptr_ty, base, i, v, ty):\n"
            "    p = llvm_dialect.GEPOp(ptr_ty, base, [], [i], ty)\n"
            "    llvm_dialect.StoreOp(v, p)\n",
            expected=None,
            count=2,
            message="raw llvm GEP",
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(ty, p):\n"
            "    return fx.rocdl.llvm.load(ty, p)\n",
            expected=None,
            message="raw llvm load",
        ),
        Invalid(
            "from flydsl._mlir.dialects import memref as memref_dialect\n"
            "def f(ty, base, off, i):\n"
            "    v = memref_dialect.view(ty, base, off, sizes=[])\n"
            "    return memref_dialect.load(v, [i])\n",
            expected=None,
            count=2,
            message="(no fix: the builtin memref it reads comes from a hand-managed buffer",
        ),
        Invalid(
            "from flydsl._mlir.dialects import memref\n"
            "def f(m):\n"
            "    return memref.extract_aligned_pointer_as_index(m)\n",
            expected=None,
            message="(no fix: it reads the address of a builtin memref, and `fx.ptrtoint` takes an fx pointer",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm\n"
            "def f(v, p, ty, scopes):\n"
            '    llvm.StoreOp(v, p, alignment=4, ordering=llvm.AtomicOrdering.release, syncscope="agent")\n',
            expected=None,
            message="is atomic: keep it as it is (no fix: a layout view cannot express that)",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm\n"
            "def f(v, p, ty, scopes):\n"
            "    llvm.StoreOp(v, p, nontemporal=True, volatile_=True)\n",
            expected=None,
            message="is nontemporal and volatile: keep it",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm\n"
            "def f(ty, p):\n"
            "    return llvm.load(ty, p, invariant=True)\n",
            expected=None,
            message="is invariant: keep it",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm as _llvm\n"
            "def f(ty, p, scopes):\n"
            "    return _llvm.LoadOp(ty, p, alias_scopes=scopes).result\n",
            expected=None,
            message="is alias-scoped: keep it",
        ),
        Invalid(
            # Options switched off, or a non-atomic ordering: an ordinary access.
            "from flydsl._mlir.dialects import llvm\n"
            "def f(ty, p):\n"
            "    return llvm.LoadOp(ty, p, volatile_=False, ordering=llvm.AtomicOrdering.not_atomic).result\n",
            expected=None,
            message="read through a layout view",
        ),
        Invalid(
            "from flydsl._mlir.dialects import memref\n"
            "def f(ty):\n"
            '    return memref.get_global(ty, "smem")\n',
            expected=None,
            message="registers with `fx.make_rmem_tensor` (no fix: the builtin memref it makes",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm\nfrom flydsl._mlir import ir\n"
            "def f():\n"
            "    return llvm.mlir_constant(ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0))\n",
            expected=None,
            message="Python constant or a typed fx value (`fx.Int32(c)`, `fx.Float32(c)`) (no fix: an fx constant is an `arith.constant`",
        ),
    ]

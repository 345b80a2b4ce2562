import ast

from flydsl_ls.analysis.model.diagnostic import Severity
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

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
MEMREF_ALLOC = {"global_", "get_global", "alloca", "alloc", "AllocaOp", "AllocOp", "GlobalOp", "GetGlobalOp"}


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
    `generic_load/store`, and type references that are not calls. Diagnostic only: the
    replacement depends on the surrounding data layout. A load or store that is volatile,
    atomic (`ordering=`, `syncscope=`), nontemporal, invariant or carries alias-scope / TBAA
    metadata is reported as one to keep: a layout view cannot say any of that.
    """

    code = "FLY305"
    name = "raw-llvm-memref"
    summary = "raw `llvm.*` load/store/GEP/constant and `memref.*` dialect calls"
    replacement = "layout views, `fx.make_view`, `fx.get_iter`, `SharedAllocator`"
    fix_safety = "none"
    example_before = "p = llvm.GEPOp(ptr_ty, base, [idx], elem_type=T.f32)\nv = llvm.load(T.f32, p)"
    example_after = "t = fx.make_view(fx.get_iter(buf), fx.make_layout(n, 1))\nv = t[idx]"

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if not symbol:
            return
        module, _, op = symbol.rpartition(".")
        spelled = ast.unparse(node.func)
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
            self.report(node, f"raw llvm {kind} `{spelled}(...)`: {ADVICE[kind]}")
        elif module == "mlir.memref" and op[:1].isalpha():
            kind = "memref-alloc" if op in MEMREF_ALLOC else "memref-access"
            self.report(node, f"raw memref op `{spelled}(...)` works on builtin memrefs fx layouts cannot see: {ADVICE[kind]}")

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
            message="fx.add_offset",
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
            message="SharedAllocator",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm\nfrom flydsl._mlir import ir\n"
            "def f():\n"
            "    return llvm.mlir_constant(ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0))\n",
            expected=None,
            message="Python constant",
        ),
    ]

import ast
import re

from flydsl_ls.analysis.diagnostic import Applicability, Fix
from flydsl_ls.analysis.rewrite import fx_alias
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid
from flydsl_ls.analysis.text import Range

_NAME = re.compile(
    r"^(?P<scale>mfma_scale_|wmma_scale_|smfmac_)?(?P<family>mfma|wmma)?_?"
    r"(?P<acc>f32|i32|f16|bf16)_(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)_?(?P<ty>[a-z0-9_]+?)_?$"
)
# Operand type suffix -> fx class (per arch where it differs). Derived from FlyDSL's
# CDNA3 MMA atom (lib/Dialect/FlyROCDL/CDNA3/MmaAtom.cpp): fp8 is f8E4M3FNUZ on gfx942
# and f8E4M3FN on gfx950; there is no fx class for bf8 FNUZ, no xf32 form and no mixed
# fp8/bf8 operand pair in `fx.rocdl.MFMA(m, n, k, ty)`.
_TYPES = {
    "f16": "Float16",
    "bf16": "BFloat16",
    "bf16_1k": "BFloat16",
    "f32": "Float32",
    "i8": "Int8",
}
_FP8 = {"gfx942": "Float8E4M3FNUZ", "gfx950": "Float8E4M3FN"}
# Producers of fx tensors (fragments, partitions) in a function.
_FRAGMENT_METHODS = {
    "make_fragment_A",
    "make_fragment_B",
    "make_fragment_C",
    "partition_fragment_A",
    "partition_fragment_B",
    "partition_fragment_C",
    "partition_S",
    "partition_D",
    "partition_A",
    "partition_B",
    "partition_C",
    "retile",
}
_FRAGMENT_CALLS = {"fx.make_fragment_like", "fx.make_rmem_tensor", "fx.mma_make_fragment", "fx.make_view"}


def decode(op: str) -> dict | None:
    match = _NAME.match(op)
    if match is None or not (match["family"] or match["scale"]):
        return None
    return match.groupdict()


class RawMfma(Rule):
    """
    Raw `rocdl.mfma_*` / `rocdl.wmma_*` intrinsics hard-code the instruction, the fragment
    vector types and the `[a, b, c, cbsz, abid, blgp]` operand list. An MMA atom names the
    instruction by shape and element type, and `fx.gemm(mma, d, a, b, c)` issues it over
    fragments whose layouts FlyDSL derives (guide §6):
    `fx.make_mma_atom(fx.rocdl.MFMA(M, N, K, fx.<ty>))` (accumulator f32 by default;
    `fx.Int32` for the i8 forms). M, N, K and the operand type are read off the
    intrinsic's name: `f16` → `fx.Float16`, `bf16`/`bf16_1k` → `fx.BFloat16`, `i8` →
    `fx.Int8`, `f32` → `fx.Float32`, `fp8_fp8` → `fx.Float8E4M3FNUZ` on gfx942 and
    `fx.Float8E4M3FN` on gfx950 (FlyDSL's CDNA3 atom accepts both). Mixed fp8/bf8 pairs,
    bf8 and xf32 have no `fx.rocdl.MFMA` form: keep those raw. Scaled MFMA
    (`mfma_scale_*`) maps to `fx.rocdl.cdna4.MFMA_Scale`, WMMA to `fx.rocdl.WMMA`.

    Both spellings are flagged: the `fx.rocdl` list-convention wrappers
    `(result_type, [a, b, c, 0, 0, 0])` and the raw ODS classes. Helpers whose names
    merely contain `mfma` (`_unwrap_mfma_operand`, `mfma_epilog`, `sched_mfma`) and MFMA
    text in inline-asm strings are not intrinsic calls and are never flagged.

    The fix (unsafe) is offered only when the operands are fx tensors visible in the
    function: `d.store(rocdl.mfma_...(ty, [a.load(), b.load(), c.load(), 0, 0, 0]))` with
    `a`, `b`, `c` built by `make_fragment_*` / `partition_*` / `retile` /
    `fx.make_fragment_like` / `fx.make_rmem_tensor`. It becomes
    `mma = fx.make_mma_atom(...)` and `fx.gemm(mma, d, a, b, c)`; `fx.gemm` walks the
    fragments' layouts, so check that they are one atom's worth (compare the generated
    code). Everywhere else the diagnostic names the exact atom to use.
    """

    code = "FLY601"
    name = "raw-mfma"
    summary = "`rocdl.mfma_*` / `rocdl.wmma_*` intrinsic calls"
    replacement = "`fx.make_mma_atom(fx.rocdl.MFMA(m, n, k, ty))` + `fx.gemm(mma, d, a, b, c)`"
    fix_safety = "unsafe (only where the operands are fx fragments)"
    fix_title = "Use an MMA atom and fx.gemm"
    example_before = "c = rocdl.mfma_f32_16x16x16f16(T.f32x4, [a, b, c, 0, 0, 0])"
    example_after = "mma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))\nfx.gemm(mma, frag_c, frag_a, frag_b, frag_c)"

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if not symbol or not symbol.startswith(("fx.rocdl.", "mlir.rocdl.")):
            return
        op = symbol.rsplit(".", 1)[-1]
        parts = decode(op)
        if parts is None:
            return
        atom, why = self._atom(parts)
        spelled = f"`{ast.unparse(node.func)}(...)`"
        if atom is None:
            self.report(node, f"raw MMA intrinsic {spelled}: {why}")
            return
        message = f"raw MMA intrinsic {spelled}: use `fx.make_mma_atom({atom})` + `fx.gemm(mma, d, a, b, c)`"
        fix = self._fix(node, atom) if parts["family"] == "mfma" and not parts["scale"] else None
        self.report(node, message, fix=fix)
        if fix is not None:
            self.ctx.diagnostics[-1].statement = self.ctx.range(self.ctx.parents[-2])

    def _atom(self, parts: dict) -> tuple[str | None, str]:
        m, n, k, ty = parts["m"], parts["n"], parts["k"], parts["ty"]
        arch = self.ctx.options.target_arch or ""
        if parts["scale"] == "mfma_scale_":
            return None, (
                f"scaled MFMA: use `fx.make_mma_atom(fx.rocdl.cdna4.MFMA_Scale({m}, {n}, {k}, <a type>[, <b type>]))` "
                "+ `fx.gemm(mma, d, a, b, c, scale_a=..., scale_b=...)` (gfx950)"
            )
        if parts["scale"]:
            return None, "no MMA atom form; keep the raw intrinsic at this boundary"
        if ty in ("fp8_fp8", "fp8"):
            fp8 = next((v for a, v in _FP8.items() if arch.startswith(a)), None)
            if fp8 is None:
                return None, (
                    f"use `fx.make_mma_atom(fx.rocdl.MFMA({m}, {n}, {k}, fx.Float8E4M3FNUZ))` on gfx942 / "
                    f"`fx.rocdl.MFMA({m}, {n}, {k}, fx.Float8E4M3FN)` on gfx950 + `fx.gemm(mma, d, a, b, c)` "
                    "(set target-arch to pick one)"
                )
            fx_ty = fp8
        elif ty in _TYPES:
            fx_ty = _TYPES[ty]
        else:
            return None, (
                f"`{ty}` operands have no `fx.rocdl.{'WMMA' if parts['family'] == 'wmma' else 'MFMA'}` "
                "atom form in FlyDSL 0.5.0; keep the raw intrinsic at this boundary"
            )
        ctor = "WMMA" if parts["family"] == "wmma" else "MFMA"
        acc = ", fx.Int32" if parts["acc"] == "i32" else ""
        return f"fx.rocdl.{ctor}({m}, {n}, {k}, fx.{fx_ty}{acc})", ""

    def _fix(self, node: ast.Call, atom: str) -> Fix | None:
        """`d.store(mfma(ty, [a.load(), b.load(), c.load(), 0, 0, 0]))` on fx fragments."""
        parents = self.ctx.parents
        if len(parents) < 3:
            return None
        store, stmt = parents[-1], parents[-2]
        if not (
            isinstance(store, ast.Call)
            and isinstance(store.func, ast.Attribute)
            and store.func.attr == "store"
            and store.args == [node]
            and not store.keywords
            and isinstance(stmt, ast.Expr)
            and stmt.value is store
            and isinstance(store.func.value, ast.Name)
        ):
            return None
        if len(node.args) != 2 or node.keywords or not isinstance(node.args[1], ast.List):
            return None
        operands = node.args[1].elts
        if len(operands) != 6 or any(not (isinstance(o, ast.Constant) and o.value == 0) for o in operands[3:]):
            return None
        frags = []
        for operand in operands[:3]:
            if not (
                isinstance(operand, ast.Call)
                and not operand.args
                and isinstance(operand.func, ast.Attribute)
                and operand.func.attr == "load"
                and isinstance(operand.func.value, ast.Name)
            ):
                return None
            frags.append(operand.func.value)
        dest = store.func.value
        if not all(self._is_fragment(name) for name in (*frags, dest)):
            return None
        alias, imports = fx_alias(self.model)
        atom = atom.replace("fx.", f"{alias}.")
        scope = self.model.scope_of(dest)
        taken = set(scope.bindings) if scope is not None else set()
        mma = next(c for c in ("mma", "mma_atom", "raw_mma_atom") + tuple(f"mma{i}" for i in range(2, 99)) if c not in taken)
        start = self.model.index.from_ast(stmt.lineno, stmt.col_offset)
        # the statement's own indentation (tabs too); spaces when it does not start its line
        prefix = self.model.index.line_text(stmt.lineno - 1)[: start.column]
        indent = prefix if not prefix.strip() else " " * stmt.col_offset
        a, b, c = (self.text(f) for f in frags)
        text = f"{mma} = {alias}.make_mma_atom({atom})\n{indent}{alias}.gemm({mma}, {self.text(dest)}, {a}, {b}, {c})"
        end = self.model.index.from_ast(stmt.end_lineno, stmt.end_col_offset)
        return Fix("Use an MMA atom and fx.gemm (unsafe)", Applicability.UNSAFE, (self.edit(Range(start, end), text), *imports))

    def _is_fragment(self, name: ast.Name) -> bool:
        bindings = self.model.reaching_bindings(name)
        if len(bindings) != 1:
            return False
        binding = bindings[0]
        if binding.kind == "param":
            return binding.annotation is not None and self.model.resolve(binding.annotation) == "fx.Tensor"
        value = binding.value if binding.kind in ("assign", "annassign") else None
        if not isinstance(value, ast.Call):
            return False
        if self.model.resolve(value.func) in _FRAGMENT_CALLS:
            return True
        return isinstance(value.func, ast.Attribute) and value.func.attr in _FRAGMENT_METHODS

    VALID = [
        Valid(
            "import flydsl.expr as fx\n"
            "def f(frag_c, frag_a, frag_b):\n"
            "    mma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))\n"
            "    fx.gemm(mma, frag_c, frag_a, frag_b, frag_c)\n"
        ),
        Valid(
            # Names that contain mfma but are not intrinsics; inline-asm text.
            "from flydsl.expr import rocdl\n"
            "from .utils import _unwrap_mfma_operand, mfma_epilog\n"
            "def f(v, llvm):\n"
            "    rocdl.sched_mfma(2)\n"
            "    mfma_epilog(_unwrap_mfma_operand(v))\n"
            "    llvm.inline_asm(None, [], 'v_mfma_f32_16x16x16_f16 $0, $1, $2, $3', '=v')\n"
            "# rocdl.mfma_f32_16x16x16f16(ty, [a, b, c, 0, 0, 0])\n"
        ),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\n"
            "from flydsl.expr import rocdl\n"
            "def mma_step(tiled_mma, tid, tile_a, tile_b, tile_c):\n"
            "    thr = tiled_mma.thr_slice(tid)\n"
            "    frag_a = thr.make_fragment_A(tile_a)\n"
            "    frag_b = thr.make_fragment_B(tile_b)\n"
            "    frag_c = thr.make_fragment_C(tile_c)\n"
            "    frag_c.store(rocdl.mfma_f32_16x16x16f16(fx.T.f32x4, [frag_a.load(), frag_b.load(), frag_c.load(), 0, 0, 0]))\n",
            expected="import flydsl.expr as fx\n"
            "def mma_step(tiled_mma, tid, tile_a, tile_b, tile_c):\n"
            "    thr = tiled_mma.thr_slice(tid)\n"
            "    frag_a = thr.make_fragment_A(tile_a)\n"
            "    frag_b = thr.make_fragment_B(tile_b)\n"
            "    frag_c = thr.make_fragment_C(tile_c)\n"
            "    mma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))\n"
            "    fx.gemm(mma, frag_c, frag_a, frag_b, frag_c)\n",
            unsafe=True,
            line=8,
            column=18,
            message="fx.rocdl.MFMA(16, 16, 16, fx.Float16)",
        ),
        Invalid(
            # A tab-indented body: the fix's second line takes the same tab.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import rocdl\n"
            "def mma_step(thr, tile_a, tile_b, tile_c):\n"
            "\tfrag_a = thr.make_fragment_A(tile_a)\n"
            "\tfrag_b = thr.make_fragment_B(tile_b)\n"
            "\tfrag_c = thr.make_fragment_C(tile_c)\n"
            "\tfrag_c.store(rocdl.mfma_f32_16x16x16f16(fx.T.f32x4, [frag_a.load(), frag_b.load(), frag_c.load(), 0, 0, 0]))\n",
            expected="import flydsl.expr as fx\n"
            "def mma_step(thr, tile_a, tile_b, tile_c):\n"
            "\tfrag_a = thr.make_fragment_A(tile_a)\n"
            "\tfrag_b = thr.make_fragment_B(tile_b)\n"
            "\tfrag_c = thr.make_fragment_C(tile_c)\n"
            "\tmma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))\n"
            "\tfx.gemm(mma, frag_c, frag_a, frag_b, frag_c)\n",
            unsafe=True,
            line=7,
        ),
        Invalid(
            # Vectors, not fragments: the diagnostic names the exact atom.
            "from flydsl.expr import rocdl, T\n"
            "def qk(k_ops, q_ops, acc):\n"
            "    return rocdl.mfma_f32_32x32x8bf16_1k(T.f32x16, [k_ops, q_ops, acc, 0, 0, 0])\n",
            expected=None,
            message="fx.make_mma_atom(fx.rocdl.MFMA(32, 32, 8, fx.BFloat16))",
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def qk(k, q, acc):\n"
            "    return fx.rocdl.mfma_f32_16x16x32_fp8_fp8(fx.T.f32x4, [k, q, acc, 0, 0, 0])\n",
            expected=None,
            message="fx.rocdl.MFMA(16, 16, 32, fx.Float8E4M3FNUZ)",
            settings={"target_arch": "gfx942", "flydsl_version": "0.5.0"},
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def qk(k, q, acc):\n"
            "    return fx.rocdl.mfma_f32_16x16x32_fp8_fp8(fx.T.f32x4, [k, q, acc, 0, 0, 0])\n",
            expected=None,
            message="fx.rocdl.MFMA(16, 16, 32, fx.Float8E4M3FN)",
            settings={"target_arch": "gfx950", "flydsl_version": "0.5.0"},
        ),
        Invalid(
            # Raw ODS class through the raw dialect; i8 accumulates in i32.
            "from flydsl._mlir.dialects import rocdl as _rocdl\n"
            "def f(ty, a, b, c, z):\n"
            "    return _rocdl.mfma_i32_16x16x32_i8(ty, a, b, c, z, z, z).result\n",
            message="fx.rocdl.MFMA(16, 16, 32, fx.Int8, fx.Int32)",
        ),
        Invalid(
            "from flydsl.expr import rocdl\n"
            "def f(ty, ops):\n"
            "    return rocdl.mfma_scale_f32_16x16x128_f8f6f4(ty, ops)\n",
            message="fx.rocdl.cdna4.MFMA_Scale(16, 16, 128",
        ),
        Invalid(
            "from flydsl.expr import rocdl\n"
            "def f(ty, a, b, c):\n"
            "    return rocdl.wmma_f32_16x16x16_f16(ty, a, b, c)\n",
            message="fx.rocdl.WMMA(16, 16, 16, fx.Float16)",
        ),
        Invalid(
            "from flydsl.expr import rocdl\n"
            "def f(ty, ops):\n"
            "    return rocdl.mfma_f32_32x32x16_bf8_fp8(ty, ops)\n",
            message="keep the raw intrinsic",
        ),
    ]

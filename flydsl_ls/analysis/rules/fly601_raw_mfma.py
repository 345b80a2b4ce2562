import ast
import re

from flydsl_ls.analysis.model.diagnostic import Applicability, Fix, Severity
from flydsl_ls.analysis.model.rewrite import fx_alias, module_alias, name_import
from flydsl_ls.analysis.model.scopes import lookup
from flydsl_ls.analysis.model.text import Range
from flydsl_ls.analysis.rules._arch import arch_at
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

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
# (M, K, operand suffix) of the single-block MFMAs FlyDSL's CDNA3 atom issues from its SSA
# call (`emitAtomCallSSA`, the same table in 0.3.1 and 0.5.0). The multi-block forms
# (`32x32x4f16`, `16x16x4f16`, `32x32x1f32`...) return more accumulator lanes than the atom's
# f32x4 / f32x16 and are left raw.
_SSA_MFMA = {
    (16, 4, "f32"), (32, 2, "f32"),
    (16, 16, "f16"), (32, 8, "f16"), (16, 32, "f16"), (32, 16, "f16"),
    (16, 16, "bf16_1k"), (32, 8, "bf16_1k"), (16, 32, "bf16"), (32, 16, "bf16"),
    (16, 32, "fp8_fp8"), (32, 16, "fp8_fp8"), (16, 32, "i8"), (32, 16, "i8"),
}
# cbsz / blgp of a scaled MFMA (ROCDL MatrixFormat) -> the operand's fx class.
_SCALE_FORMATS = {0: "Float8E4M3FN", 1: "Float8E5M2", 2: "Float6E2M3FN", 3: "Float6E3M2FN", 4: "Float4E2M1FN"}
_SCALED_SHAPES = {(16, 16, 128), (32, 32, 64)}
# Calls whose result already is an ``ir.Value``: not wrapped again in ``fx.as_ir_value``.
_RAW_VALUE_CALLS = {"fx.as_ir_value", "fx.arith.unwrap", "fx.arith._to_raw"}
_FLY_DIALECT = "flydsl._mlir.dialects.fly"


def decode(op: str) -> dict | None:
    match = _NAME.match(op)
    if match is None or not (match["family"] or match["scale"]):
        return None
    return match.groupdict()


def _leftmost_name(expr: ast.expr) -> ast.Name | None:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr if isinstance(expr, ast.Name) else None


def _visible(name: str, dotted: str, scope, at: tuple[int, int], imports: tuple) -> bool:
    """Whether ``name`` means ``dotted`` at ``at`` (or is free there, when the fix imports it)."""
    binding = lookup(name, scope, at)
    if imports:
        return binding is None
    return binding is not None and binding.dotted == dotted


def _int_literal(expr: ast.expr) -> int | None:
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    return None


def _is_zero(expr: ast.expr) -> bool:
    return _int_literal(expr) == 0


def _scale_formats(node: ast.Call) -> list[str] | None:
    """The fx classes of a scaled MFMA's A and B, from its literal cbsz / blgp operands."""
    if len(node.args) != 2 or not isinstance(node.args[1], ast.List) or len(node.args[1].elts) != 9:
        return None
    formats = [_SCALE_FORMATS.get(_int_literal(o)) for o in node.args[1].elts[3:5]]
    return None if None in formats else formats


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

    Two fixes, both unsafe. Where the operands are fx tensors visible in the function,
    `d.store(rocdl.mfma_...(ty, [a.load(), b.load(), c.load(), 0, 0, 0]))` with `a`, `b`,
    `c` built by `make_fragment_*` / `partition_*` / `retile` / `fx.make_fragment_like` /
    `fx.make_rmem_tensor` becomes `mma = fx.make_mma_atom(...)` and
    `fx.gemm(mma, d, a, b, c)`; `fx.gemm` walks the fragments' layouts, so check that they
    are one atom's worth (compare the generated code).

    Elsewhere the operands are register values (vectors, packed `i64`s) whose fragment
    layouts the code does not show, and `fx.gemm` cannot take them (it needs rank-1 or
    rank-3 fragments, see FLY602). A list-convention call
    `rocdl.mfma_...(ty, [a, b, c, 0, 0, 0])` — also through a local alias
    (`mfma_fn = rocdl.mfma_...` then `mfma_fn(ty, [...])`) — becomes the atom applied to the
    same values, as FlyDSL's own kernels do:
    `fly.mma_atom_call_ssa([ty], fx.make_mma_atom(fx.rocdl.MFMA(...)), fx.as_ir_value(a),
    fx.as_ir_value(b), fx.as_ir_value(c))` (`fly` is `flydsl._mlir.dialects.fly`; the SSA
    call takes `ir.Value`s only, where the raw wrapper unwrapped fx values itself). The
    atom issues the same instruction (FlyDSL 0.3.1 and 0.5.0 dispatch on M, K and the
    operand type; operands of another vector type are bitcast), so the ISA is unchanged.
    Offered for the single-block shapes the atom issues: f16, bf16 (`_1k` up to K=16),
    f32 16x16x4 / 32x32x2, i8 and fp8 16x16x32 / 32x32x16. The fp8 class follows
    `target-arch`; without one, a binding of the file choosing
    `fx.Float8E4M3FN if ... else fx.Float8E4M3FNUZ` is reused, else the choice is made at
    trace time (`fx.Float8E4M3FN if "gfx95" in get_rocm_arch() else fx.Float8E4M3FNUZ`).
    A scaled MFMA `[a, b, c, cbsz, blgp, opsel_a, scale_a, opsel_b, scale_b]` with literal
    formats becomes `fx.rocdl.cdna4.MFMA_Scale(m, n, k, <types>, opsel_a=..., opsel_b=...)`
    with the scales as atom state (`.set_value({"scale_a": ..., "scale_b": ...})`); its
    A/B vectors must have the format's width (8 x i32 for fp8, 4 x i32 for fp4), which the
    atom bitcasts to. The ODS spelling `rocdl.wmma_f32_16x16x16_{f16,bf16}(ty, a, b, c).result`
    becomes the same SSA call on `fx.rocdl.WMMA(16, 16, 16, <type>)`, which picks the gfx11
    or gfx120x atom by the arch at trace time; gfx1250's WMMA (modifier/reuse state) is
    left raw, and gfx120x has no fp8 WMMA atom at all.
    """

    code = "FLY601"
    name = "raw-mfma"
    summary = "`rocdl.mfma_*` / `rocdl.wmma_*` intrinsic calls"
    replacement = "`fx.make_mma_atom(fx.rocdl.MFMA(m, n, k, ty))` + `fx.gemm(mma, d, a, b, c)`"
    fix_safety = "unsafe (fragments: fx.gemm; register values: the atom's SSA call, same instruction)"
    fix_title = "Use an MMA atom and fx.gemm"
    example_before = "c = rocdl.mfma_f32_16x16x16f16(T.f32x4, [a, b, c, 0, 0, 0])"
    example_after = "mma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))\nfx.gemm(mma, frag_c, frag_a, frag_b, frag_c)"

    def visit_Call(self, node: ast.Call) -> None:
        self._intrinsics_passed(node)
        symbol = self.model.resolve(node.func)
        if not symbol or not symbol.startswith(("fx.rocdl.", "mlir.rocdl.")):
            return
        op = symbol.rsplit(".", 1)[-1]
        parts = decode(op)
        if parts is None:
            return
        atom, why = self._atom(parts, node)
        spelled = f"`{ast.unparse(node.func)}(...)`"
        message = (
            f"raw MMA intrinsic {spelled}: {why}" if atom is None
            else f"raw MMA intrinsic {spelled}: use `fx.make_mma_atom({atom})` + `fx.gemm(mma, d, a, b, c)`"
        )
        fix = self._fix(node, atom) if atom and parts["family"] == "mfma" and not parts["scale"] else None
        if fix is not None:
            self.report(node, message, fix=fix, statement=self.ctx.range(self.ctx.parents[-2]))
            return
        fix, declined = self._ssa_fix(node, parts)
        kept = "keep the raw" in message  # no atom in FlyDSL for this op: the guides keep it
        if fix is None and declined and not kept:
            message = f"{message} (no fix: {declined})"
        self.report(node, message, fix=fix, severity=Severity.INFORMATION if kept and fix is None else None)

    def _intrinsics_passed(self, call: ast.Call) -> None:
        """`self._mfma(rocdl.mfma_f32_32x32x8f16, a, b, c)`: the intrinsic handed to a helper
        that calls it (FlyDSL's flash_attn_utils). No fix: the call is in the helper."""
        for arg in [*call.args, *(k.value for k in call.keywords)] if call.keywords else call.args:
            # Resolving every argument of every call is costly (a parameter asks the project
            # who passes it what): skip those that cannot name an intrinsic.
            kind = type(arg)
            if kind is ast.Attribute:
                if decode(arg.attr) is None:
                    continue  # its symbol ends in the attribute's name (or a module's)
            elif kind is not ast.Name or not self.model.may_name_symbol(arg):
                continue  # a local computed, or a parameter: a module passed in, never a function
            symbol = self.model.resolve(arg)
            if not symbol or not symbol.startswith(("fx.rocdl.", "mlir.rocdl.")):
                continue
            parts = decode(symbol.rsplit(".", 1)[-1])
            if parts is None:
                continue
            atom, why = self._atom(parts, call)
            advice = f"use `fx.make_mma_atom({atom})` in the helper" if atom else why
            self.report(
                arg,
                f"raw MMA intrinsic `{ast.unparse(arg)}` passed as a callable: {advice} "
                "(no fix: the helper that calls it decides the operands)",
                severity=Severity.INFORMATION if atom is None and "keep the raw" in why else None,
            )

    def _atom(self, parts: dict, node: ast.Call) -> tuple[str | None, str]:
        m, n, k, ty = parts["m"], parts["n"], parts["k"], parts["ty"]
        arch = arch_at(self.ctx, node) or ""
        if parts["scale"] == "mfma_scale_":
            formats = _scale_formats(node)
            types = ", ".join(f"fx.{f}" for f in dict.fromkeys(formats)) if formats else "<a type>[, <b type>]"
            return None, (
                f"scaled MFMA: use `fx.make_mma_atom(fx.rocdl.cdna4.MFMA_Scale({m}, {n}, {k}, {types}))` "
                "+ `fx.gemm(mma, d, a, b, c, scale_a=..., scale_b=...)` (gfx950)"
            )
        if parts["scale"]:
            return None, "no MMA atom form; keep the raw intrinsic at this boundary"
        if parts["family"] == "wmma" and ty in ("fp8_fp8", "fp8"):
            return None, (
                "RDNA4 fp8 is E4M3FN, but FlyDSL's gfx120x WMMA atom issues only f16/bf16; "
                "keep the raw intrinsic at this boundary"
            )
        if ty in ("fp8_fp8", "fp8"):
            fp8 = next((v for a, v in _FP8.items() if arch.startswith(a)), None)
            own = self._own_fp8_choice(node)
            if own is not None:  # the kernel picks its fp8 class per arch: so does the atom
                return f"fx.rocdl.MFMA({m}, {n}, {k}, {own})", ""
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
        taken = scope.bindings if scope is not None else {}  # looked up, not listed (scopes.unbound_name)
        mma = next(c for c in ("mma", "mma_atom", "raw_mma_atom") + tuple(f"mma{i}" for i in range(2, 99)) if c not in taken)
        start = self.model.index.from_ast(stmt.lineno, stmt.col_offset)
        # the statement's own indentation (tabs too); spaces when it does not start its line
        prefix = self.model.index.line_text(stmt.lineno - 1)[: start.column]
        indent = prefix if not prefix.strip() else " " * stmt.col_offset
        a, b, c = (self.text(f) for f in frags)
        text = f"{mma} = {alias}.make_mma_atom({atom})\n{indent}{alias}.gemm({mma}, {self.text(dest)}, {a}, {b}, {c})"
        end = self.model.index.from_ast(stmt.end_lineno, stmt.end_col_offset)
        return Fix("Use an MMA atom and fx.gemm (unsafe)", Applicability.UNSAFE, (self.edit(Range(start, end), text), *imports))

    def _ssa_fix(self, node: ast.Call, parts: dict) -> tuple[Fix | None, str]:
        """`mfma(ty, [a, b, c, 0, 0, 0])` / `wmma(ty, a, b, c).result` on register values ->
        `fly.mma_atom_call_ssa([ty], fx.make_mma_atom(<atom>), a, b, c)`: the same values in
        and out, the atom picks the instruction (what FlyDSL's own kernels call on vectors).
        Else (None, why not)."""
        if parts["family"] == "wmma" and not parts["scale"] and self._wmma_atom(parts, "fx") is None:
            return None, "only the gfx11/gfx120x 16x16x16 f16/bf16 WMMA is rewritten"
        shape, declined = self._call_shape(node, parts)
        if shape is None:
            return None, declined
        replaced, result_type, operands = shape
        if any(isinstance(o, ast.Starred) for o in (result_type, *operands)):
            return None, "starred operands"
        head = _leftmost_name(node.func)
        scope = self.model.scope_of(head) if head is not None else None
        if scope is None:
            return None, ""
        at = (node.lineno, node.col_offset)
        fx, fx_imports = fx_alias(self.model)
        fly, fly_imports = name_import(self.model, "flydsl._mlir.dialects", "fly") or module_alias(self.model, _FLY_DIALECT, "fly")
        if not (_visible(fx, "flydsl.expr", scope, at, fx_imports) and _visible(fly, _FLY_DIALECT, scope, at, fly_imports)):
            return None, f"`{fx}` or `{fly}` means something else here"
        extra: tuple = ()
        if parts["scale"] == "mfma_scale_":
            atom = self._scaled_atom(parts, node, fx)
            declined = "the A/B formats (cbsz, blgp) are not int literals"
        elif parts["family"] == "wmma":
            atom = self._wmma_atom(parts, fx)
        else:
            atom, extra = self._mfma_atom(parts, fx, scope, at)
            declined = "the atom's SSA call does not issue this shape"
        if atom is None:
            return None, declined
        values = ", ".join(self._raw_value(o, fx) for o in operands[:3])
        text = f"{fly}.mma_atom_call_ssa([{self.text(result_type)}], {atom}, {values})"
        fix = self.replace(replaced, text, "Call an MMA atom on the same values", safe=False, extra=(*fx_imports, *fly_imports, *extra))
        return fix, ""

    def _call_shape(self, node: ast.Call, parts: dict) -> tuple[tuple[ast.expr, ast.expr, list[ast.expr]] | None, str]:
        """(the expression to replace, the result type, the operands) of the two spellings:
        the `fx.rocdl` list wrappers `mfma(ty, [a, b, c, ...])` (MFMA), and the ODS class
        `wmma(ty, a, b, c).result` (WMMA, default attributes only). Else (None, why not)."""
        if parts["family"] == "wmma" and not parts["scale"]:
            parent = self.ctx.parent
            result = isinstance(parent, ast.Attribute) and parent.attr == "result" and parent.value is node
            if len(node.args) == 4 and not node.keywords and result:
                return (parent, node.args[0], node.args[1:]), ""
            return None, "only `wmma(ty, a, b, c).result` is rewritten (the op itself is used here)"
        if len(node.args) != 2 or not isinstance(node.args[1], ast.List) or node.keywords:
            return None, "the operands are not a literal `(ty, [a, b, c, ...])` list"
        operands = node.args[1].elts
        if not 3 <= len(operands) <= (9 if parts["scale"] else 6):
            return None, "unexpected operand count"
        if not parts["scale"] and not all(_is_zero(o) for o in operands[3:]):
            return None, "cbsz / abid / blgp are set; the atom issues them as 0"
        return (node, node.args[0], operands), ""

    def _wmma_atom(self, parts: dict, fx: str) -> str | None:
        """The 16x16x16 f16 / bf16 WMMA with an f32 accumulator, which `fx.rocdl.WMMA`
        issues on gfx11 and gfx120x alike (the atom is picked by the arch at trace time)."""
        if (parts["m"], parts["n"], parts["k"], parts["acc"]) != ("16", "16", "16", "f32") or parts["ty"] not in ("f16", "bf16"):
            return None
        return f"{fx}.make_mma_atom({fx}.rocdl.WMMA(16, 16, 16, {fx}.{_TYPES[parts['ty']]}))"

    def _mfma_atom(self, parts: dict, fx: str, scope, at) -> tuple[str | None, tuple]:
        m, n, k, ty = int(parts["m"]), int(parts["n"]), int(parts["k"]), parts["ty"]
        if m != n or (m, k, ty) not in _SSA_MFMA:
            return None, ()
        extra: tuple = ()
        if ty == "fp8_fp8":
            fx_ty, extra = self._fp8_type(fx, scope, at)
            if fx_ty is None:
                return None, ()
        else:
            fx_ty = f"{fx}.{_TYPES[ty]}"
        acc = f", {fx}.Int32" if parts["acc"] == "i32" else ""
        return f"{fx}.make_mma_atom({fx}.rocdl.MFMA({m}, {n}, {k}, {fx_ty}{acc}))", extra

    def _own_fp8_choice(self, node: ast.Call) -> str | None:
        """The name of the kernel's own per-arch fp8 class visible at ``node``, if any."""
        head = _leftmost_name(node.func)
        scope = self.model.scope_of(head) if head is not None else None
        if scope is None:
            return None
        at = (node.lineno, node.col_offset)
        for name, value in self._fp8_choices():
            binding = lookup(name, scope, at)
            if binding is not None and binding.value is value:
                return name
        return None

    def _fp8_type(self, fx: str, scope, at) -> tuple[str | None, tuple]:
        """CDNA fp8 is E4M3FNUZ on gfx942 and E4M3FN (OCP) on gfx950: the kernel's own arch
        choice of the two (a kernel built for both archs), else the target arch's class,
        else one made at trace time."""
        for name, value in self._fp8_choices():
            binding = lookup(name, scope, at)
            if binding is not None and binding.value is value:
                return name, ()
        arch = arch_at(self.ctx) or ""  # the call being visited is inside the ancestors' guards
        for prefix, name in _FP8.items():
            if arch.startswith(prefix):
                return f"{fx}.{name}", ()
        if arch:
            return None, ()
        found = name_import(self.model, "flydsl.runtime.device", "get_rocm_arch")
        if found is None or not _visible(found[0], "flydsl.runtime.device.get_rocm_arch", scope, at, found[1]):
            return None, ()
        arch_of, imports = found
        return f'{fx}.Float8E4M3FN if "gfx95" in {arch_of}() else {fx}.Float8E4M3FNUZ', imports

    def _fp8_choices(self) -> list[tuple[str, ast.IfExp]]:
        """(name, value) of the file's assignments `X = fx.Float8E4M3FN if c else
        fx.Float8E4M3FNUZ` (either order)."""
        # The answer reads every statement of the file, not the names the call reads: asking
        # for the use counts says so to the editor's incremental analysis (the whole file).
        self.model.use_counts  # noqa: B018
        found = []
        for stmt in self.model.nodes_of(ast.Assign):
            if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            value = stmt.value
            if isinstance(value, ast.IfExp) and {self.model.resolve(value.body), self.model.resolve(value.orelse)} == {
                "fx.Float8E4M3FN", "fx.Float8E4M3FNUZ"
            }:
                found.append((stmt.targets[0].id, value))
        return found

    def _scaled_atom(self, parts: dict, node: ast.Call, fx: str) -> str | None:
        """`[a, b, c, cbsz, blgp, opsel_a, scale_a, opsel_b, scale_b]`: the formats pick the
        operand classes, the opsels are atom parameters, the scales atom state."""
        m, n, k = int(parts["m"]), int(parts["n"]), int(parts["k"])
        formats = _scale_formats(node)
        if formats is None or (m, n, k) not in _SCALED_SHAPES:
            return None
        operands = node.args[1].elts
        types = f"{fx}.{formats[0]}" + (f", {fx}.{formats[1]}" if formats[1] != formats[0] else "")
        opsel = "".join(
            f", {key}={self.text(o)}" for key, o in (("opsel_a", operands[5]), ("opsel_b", operands[7])) if not _is_zero(o)
        )
        state = f'{{"scale_a": {self.text(operands[6])}, "scale_b": {self.text(operands[8])}}}'
        return f"{fx}.make_mma_atom({fx}.rocdl.cdna4.MFMA_Scale({m}, {n}, {k}, {types}{opsel})).set_value({state})"

    def _raw_value(self, operand: ast.expr, fx: str) -> str:
        """`fly.mma_atom_call_ssa` takes `ir.Value`s only (the raw wrappers unwrapped fx values)."""
        if isinstance(operand, ast.Call) and self.model.resolve(operand.func) in _RAW_VALUE_CALLS:
            return self.text(operand)
        return f"{fx}.as_ir_value({self.text(operand)})"

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
        # A kernel that picks its fp8 class per arch: the atom takes that choice, whatever
        # the target arch says (pa_decode_tile.py builds for gfx942 and gfx950).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.typing import T\n"
            "FP8 = fx.Float8E4M3FN if IS_GFX950 else fx.Float8E4M3FNUZ\n"
            "def k(a, b, acc):\n    return fx.rocdl.mfma_f32_16x16x32_fp8_fp8(T.f32x4, [a, b, acc, 0, 0, 0])\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr.typing import T\nfrom flydsl._mlir.dialects import fly\n"
            "FP8 = fx.Float8E4M3FN if IS_GFX950 else fx.Float8E4M3FNUZ\n"
            "def k(a, b, acc):\n    return fly.mma_atom_call_ssa([T.f32x4], fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 32, FP8)), "
            "fx.as_ir_value(a), fx.as_ir_value(b), fx.as_ir_value(acc))\n",
            unsafe=True,
            message="use `fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 32, FP8))`",
            settings={"target_arch": "gfx942"},
        ),
        # Handed to a helper that calls it (FlyDSL's flash_attn_utils).
        Invalid(
            "from flydsl.expr import rocdl\n"
            "def f(self, a, b, c):\n    return self._mfma(rocdl.mfma_f32_32x32x8f16, a, b, c)\n",
            expected=None,
            message="raw MMA intrinsic `rocdl.mfma_f32_32x32x8f16` passed as a callable: use "
            "`fx.make_mma_atom(fx.rocdl.MFMA(32, 32, 8, fx.Float16))` in the helper",
            column=23,
        ),
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
            # Register values, not fragments: the atom's SSA call on the same values.
            "from flydsl.expr import rocdl, T\n"
            "def qk(k_ops, q_ops, acc):\n"
            "    return rocdl.mfma_f32_32x32x8bf16_1k(T.f32x16, [k_ops, q_ops, acc, 0, 0, 0])\n",
            expected="from flydsl.expr import T\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "def qk(k_ops, q_ops, acc):\n"
            "    return fly.mma_atom_call_ssa([T.f32x16], fx.make_mma_atom(fx.rocdl.MFMA(32, 32, 8, fx.BFloat16)), "
            "fx.as_ir_value(k_ops), fx.as_ir_value(q_ops), fx.as_ir_value(acc))\n",
            unsafe=True,
            line=3,
            column=12,
            message="fx.make_mma_atom(fx.rocdl.MFMA(32, 32, 8, fx.BFloat16))",
        ),
        Invalid(
            # fp8 on gfx942 is E4M3FNUZ; an operand already an ir.Value is not wrapped again.
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "def qk(k, q, acc):\n"
            "    return fx.rocdl.mfma_f32_16x16x32_fp8_fp8(fx.T.f32x4, [k, q, fx.as_ir_value(acc), 0, 0, 0])\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "def qk(k, q, acc):\n"
            "    return fly.mma_atom_call_ssa([fx.T.f32x4], fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 32, fx.Float8E4M3FNUZ)), "
            "fx.as_ir_value(k), fx.as_ir_value(q), fx.as_ir_value(acc))\n",
            unsafe=True,
            message="fx.rocdl.MFMA(16, 16, 32, fx.Float8E4M3FNUZ)",
            settings={"target_arch": "gfx942", "flydsl_version": "0.5.0"},
        ),
        Invalid(
            # gfx950's fp8 is OCP E4M3FN; FlyDSL 0.3.1 has the same atom and SSA call.
            "import flydsl.expr as fx\n"
            "def qk(k, q, acc):\n"
            "    return fx.rocdl.mfma_f32_16x16x32_fp8_fp8(fx.T.f32x4, [k, q, acc, 0, 0, 0])\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "def qk(k, q, acc):\n"
            "    return fly.mma_atom_call_ssa([fx.T.f32x4], fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 32, fx.Float8E4M3FN)), "
            "fx.as_ir_value(k), fx.as_ir_value(q), fx.as_ir_value(acc))\n",
            unsafe=True,
            message="fx.rocdl.MFMA(16, 16, 32, fx.Float8E4M3FN)",
            settings={"target_arch": "gfx950", "flydsl_version": "0.3.1"},
        ),
        Invalid(
            # The arch guard around the call wins over target-arch (analysis/rules/_arch.py).
            "import flydsl.expr as fx\n"
            "def qk(k, q, acc, is_gfx950):\n"
            "    if is_gfx950:\n"
            "        return fx.rocdl.mfma_f32_16x16x32_fp8_fp8(fx.T.f32x4, [k, q, acc, 0, 0, 0])\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "def qk(k, q, acc, is_gfx950):\n"
            "    if is_gfx950:\n"
            "        return fly.mma_atom_call_ssa([fx.T.f32x4], fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 32, fx.Float8E4M3FN)), "
            "fx.as_ir_value(k), fx.as_ir_value(q), fx.as_ir_value(acc))\n",
            unsafe=True,
            message="fx.rocdl.MFMA(16, 16, 32, fx.Float8E4M3FN)",
            settings={"target_arch": "gfx942", "flydsl_version": "0.5.0"},
        ),
        Invalid(
            # No target arch: fp8's class is picked at trace time, as the kernels do.
            "from flydsl.expr import rocdl, T\n"
            "def qk(k, q, acc):\n"
            "    return rocdl.mfma_f32_16x16x32_fp8_fp8(T.f32x4, [k, q, acc, 0, 0, 0])\n",
            expected="from flydsl.expr import T\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "from flydsl.runtime.device import get_rocm_arch\n"
            "def qk(k, q, acc):\n"
            "    return fly.mma_atom_call_ssa([T.f32x4], fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 32, "
            'fx.Float8E4M3FN if "gfx95" in get_rocm_arch() else fx.Float8E4M3FNUZ)), '
            "fx.as_ir_value(k), fx.as_ir_value(q), fx.as_ir_value(acc))\n",
            unsafe=True,
            message="set target-arch to pick one",
        ),
        Invalid(
            # No target arch, but the builder already chose its fp8 class by arch: reuse it.
            "import flydsl.expr as fx\n"
            "from flydsl.runtime.device import get_rocm_arch\n"
            "def build():\n"
            "    FP8 = fx.Float8E4M3FN if 'gfx95' in get_rocm_arch() else fx.Float8E4M3FNUZ\n"
            "    def qk(k, q, acc):\n"
            "        return fx.rocdl.mfma_f32_32x32x16_fp8_fp8(fx.T.f32x16, [k, q, acc, 0, 0, 0])\n"
            "    return qk, FP8\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl.runtime.device import get_rocm_arch\n"
            "from flydsl._mlir.dialects import fly\n"
            "def build():\n"
            "    FP8 = fx.Float8E4M3FN if 'gfx95' in get_rocm_arch() else fx.Float8E4M3FNUZ\n"
            "    def qk(k, q, acc):\n"
            "        return fly.mma_atom_call_ssa([fx.T.f32x16], fx.make_mma_atom(fx.rocdl.MFMA(32, 32, 16, FP8)), "
            "fx.as_ir_value(k), fx.as_ir_value(q), fx.as_ir_value(acc))\n"
            "    return qk, FP8\n",
            unsafe=True,
        ),
        Invalid(
            # The intrinsic passed around as a callable: the call is fixed, the alias dropped.
            "from flydsl.expr import rocdl, T\n"
            "def build(n):\n"
            "    mfma_fn = rocdl.mfma_f32_16x16x32_bf16\n"
            "    def step(a, b, acc):\n"
            "        return mfma_fn(T.vec(n, T.f32), [a, b, acc, 0, 0, 0])\n"
            "    return step\n",
            expected="from flydsl.expr import T\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "def build(n):\n"
            "    def step(a, b, acc):\n"
            "        return fly.mma_atom_call_ssa([T.vec(n, T.f32)], fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 32, fx.BFloat16)), "
            "fx.as_ir_value(a), fx.as_ir_value(b), fx.as_ir_value(acc))\n"
            "    return step\n",
            unsafe=True,
            line=5,
            column=16,
            message="`mfma_fn(...)`",
        ),
        Invalid(
            # Scaled fp4 MFMA: formats -> operand classes, opsels -> atom parameters, scales
            # -> atom state.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import rocdl\n"
            "def step(a, b, acc, sa, sb, in_b):\n"
            "    return rocdl.mfma_scale_f32_16x16x128_f8f6f4(fx.T.f32x4, [a, b, acc, 4, 4, 2, sa, 2 + in_b, sb])\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "def step(a, b, acc, sa, sb, in_b):\n"
            "    return fly.mma_atom_call_ssa([fx.T.f32x4], fx.make_mma_atom(fx.rocdl.cdna4.MFMA_Scale(16, 16, 128, "
            'fx.Float4E2M1FN, opsel_a=2, opsel_b=2 + in_b)).set_value({"scale_a": sa, "scale_b": sb}), '
            "fx.as_ir_value(a), fx.as_ir_value(b), fx.as_ir_value(acc))\n",
            unsafe=True,
            message="fx.rocdl.cdna4.MFMA_Scale(16, 16, 128, fx.Float4E2M1FN)",
            settings={"flydsl_version": "0.3.1"},
        ),
        Invalid(
            # Mixed formats (fp8 A, fp4 B); zero opsels are left out.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import rocdl\n"
            "def step(a, b, acc, sa, sb):\n"
            "    return rocdl.mfma_scale_f32_32x32x64_f8f6f4(fx.T.f32x16, [a, b, acc, 0, 4, 0, sa, 0, sb])\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "def step(a, b, acc, sa, sb):\n"
            "    return fly.mma_atom_call_ssa([fx.T.f32x16], fx.make_mma_atom(fx.rocdl.cdna4.MFMA_Scale(32, 32, 64, "
            'fx.Float8E4M3FN, fx.Float4E2M1FN)).set_value({"scale_a": sa, "scale_b": sb}), '
            "fx.as_ir_value(a), fx.as_ir_value(b), fx.as_ir_value(acc))\n",
            unsafe=True,
        ),
        Invalid(
            # Formats held in variables: the operand classes are not in the code.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import rocdl\n"
            "def step(a, b, acc, cbsz, blgp, sa, sb):\n"
            "    return rocdl.mfma_scale_f32_16x16x128_f8f6f4(fx.T.f32x4, [a, b, acc, cbsz, blgp, 0, sa, 0, sb])\n",
            expected=None,
            message="<a type>[, <b type>]))` + `fx.gemm(mma, d, a, b, c, scale_a=..., scale_b=...)` (gfx950) "
            "(no fix: the A/B formats (cbsz, blgp) are not int literals)",
        ),
        Invalid(
            # A multi-block shape (f32x32 result) the atom does not issue; cbsz/abid/blgp set.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import rocdl\n"
            "def f(a, b, c):\n"
            "    x = rocdl.mfma_f32_32x32x4f16(fx.T.vec(32, fx.T.f32), [a, b, c, 0, 0, 0])\n"
            "    return rocdl.mfma_f32_16x16x16f16(fx.T.f32x4, [a, b, x, 1, 0, 0])\n",
            expected=None,
            count=2,
        ),
        Invalid(
            # `fx` means something else where the call is: no fix.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import rocdl, T\n"
            "def f(fx, a, b, c):\n"
            "    return rocdl.mfma_f32_16x16x16f16(T.f32x4, [a, b, c, 0, 0, 0])\n",
            expected=None,
        ),
        Invalid(
            # gfx120x WMMA has no fp8 atom (RDNA4 fp8 is E4M3FN): keep it raw.
            "from flydsl.expr import rocdl\n"
            "def f(ty, a, b, c):\n"
            "    return rocdl.wmma_f32_16x16x16_fp8_fp8(ty, a, b, c).result\n",
            expected=None,
            message="gfx120x WMMA atom issues only f16/bf16",
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
            # The ODS op itself, not its `.result`: no value to replace it with.
            "from flydsl.expr import rocdl\n"
            "def f(ty, a, b, c):\n"
            "    return rocdl.wmma_f32_16x16x16_f16(ty, a, b, c)\n",
            expected=None,
            message="fx.rocdl.WMMA(16, 16, 16, fx.Float16)",
        ),
        Invalid(
            # WMMA's ODS class and its `.result`: the arch-picked WMMA atom (gfx11 / gfx120x).
            "import flydsl.expr as fx\n"
            "from flydsl.expr import rocdl\n"
            "def f(acc, a, b):\n"
            "    return rocdl.wmma_f32_16x16x16_bf16(acc.type, a.bitcast(fx.Int16), b, acc).result\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import fly\n"
            "def f(acc, a, b):\n"
            "    return fly.mma_atom_call_ssa([acc.type], fx.make_mma_atom(fx.rocdl.WMMA(16, 16, 16, fx.BFloat16)), "
            "fx.as_ir_value(a.bitcast(fx.Int16)), fx.as_ir_value(b), fx.as_ir_value(acc))\n",
            unsafe=True,
            settings={"flydsl_version": "0.3.1"},
        ),
        Invalid(
            # gfx1250's 16x16x32 WMMA (its atom has modifier/reuse state): no fix yet.
            "from flydsl._mlir.dialects import rocdl\n"
            "def f(ty, a, b, c):\n"
            "    return rocdl.wmma_f32_16x16x32_bf16(ty, a, b, c).result\n",
            expected=None,
            message="(no fix: only the gfx11/gfx120x 16x16x16 f16/bf16 WMMA is rewritten)",
        ),
        Invalid(
            "from flydsl.expr import rocdl\n"
            "def f(ty, ops):\n"
            "    return rocdl.mfma_f32_32x32x16_bf8_fp8(ty, ops)\n",
            message="keep the raw intrinsic",
        ),
    ]

import ast

from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.scopes import lookup
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

# legacy call -> (modern name, positional arity of the 1:1 form, keywords it may carry)
ATOM_CALLS = {
    "fx.copy_atom_call": ("copy", 3, {"pred"}),
    "fx.mma_atom_call": ("gemm", 5, set()),
}
# Modules that define both the legacy and the modern name: the callee's own spelling of
# the module is kept (``fx.``, ``_fx.``, ``primitive.``).
_FX_MODULES = {"flydsl.expr", "flydsl.expr.primitive"}


class AtomCall(Rule):
    """
    `fx.copy_atom_call(atom, src, dst)` and `fx.mma_atom_call(mma, d, a, b, c)` issue one
    atom by hand. `fx.copy(atom, src, dst)` and `fx.gemm(mma, d, a, b, c)` take the same
    arguments, iterate the atom over a tiled or partitioned tensor, and take atom state
    as keywords; prefer them for single-atom sites too (guide §7b). The module spelling
    of the call is kept (`fx.`, or the file's own alias).

    The SSA-returning primitives `fly.copy_atom_call_ssa` / `fly.mma_atom_call_ssa`
    (`flydsl._mlir.dialects.fly`) are a different operation and are never flagged.

    The fix is offered for the exact 1:1 form only: positional arguments, plus `pred=`
    for a copy. It is unsafe: `fx.copy` emits `fly.copy`, which the layout lowering
    expands per atom. For a tile that is exactly one atom the generated LLVM IR and ISA
    are identical, but a multi-atom tile is issued in a different order. No fix is offered
    for `mma_atom_call`: `fx.gemm` accepts only rank-1 fragments or rank-2/3 A/B with rank-3
    C/D, which the code does not show (sliced fragments failed on FlyDSL's MoE GEMM).
    """

    code = "FLY602"
    name = "atom-call"
    summary = "`fx.copy_atom_call(a, s, d)`, `fx.mma_atom_call(m, d, a, b, c)` (not the `_ssa` variants)"
    replacement = "`fx.copy(a, s, d)` / `fx.gemm(m, d, a, b, c)`"
    fix_safety = "unsafe for copy_atom_call (1:1 form only; multi-atom tiles lower in a different order); none for mma_atom_call"
    fix_title = "Use fx.copy / fx.gemm"
    deprecated_tag = False
    example_before = "fx.copy_atom_call(atom, fx.slice(tiles, (None, idx)), r)"
    example_after = "fx.copy(atom, fx.slice(tiles, (None, idx)), r)"

    callees = Callees(symbols=frozenset(ATOM_CALLS))

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol not in ATOM_CALLS:
            return
        modern, arity, keywords = ATOM_CALLS[symbol]
        legacy = symbol[3:]
        message = (
            f"`{ast.unparse(node.func)}(...)` issues one atom by hand: use `fx.{modern}(...)` "
            "with the same arguments"
        )
        one_to_one = (
            len(node.args) == arity
            and not any(isinstance(a, ast.Starred) for a in node.args)
            and all(k.arg in keywords for k in node.keywords)
        )
        if modern == "gemm":
            # fx.gemm takes rank-1 fragments or rank-2/3 A/B with rank-3 C/D, and the ranks
            # of sliced fragments (`c_frag[None, m, n]`) are not in the code: FlyDSL's
            # moe_gemm_2stage/gemm2.py failed with "GEMM requires rank-1 fragments ...".
            self.report(node, f"{message} (no fix: `fx.gemm` needs rank-1 fragments, or rank-2/3 A/B "
                        "with rank-3 C/D, and the fragments' ranks cannot be read from the code)")
            return
        callee = self._callee(node, modern) if one_to_one else None
        if callee is None:
            self.report(node, message)
            return
        text, extra = callee
        fix = self.replace(node.func, text, f"Replace {legacy} with {modern}", safe=False, extra=extra)
        self.report(node, message, fix=fix)

    def _callee(self, node: ast.Call, modern: str):
        """The modern callee's text (and import edits), or None when it cannot be spelled."""
        func = node.func
        if isinstance(func, ast.Attribute) and self.model.dotted(func.value) in _FX_MODULES:
            return f"{self.text(func.value)}.{modern}", ()
        if not isinstance(func, ast.Name):
            return None
        alias, imports = fx_alias(self.model)
        scope = self.model.scope_of(func)
        binding = lookup(alias, scope, (func.lineno, func.col_offset)) if scope else None
        if imports and binding is not None:
            return None  # ``fx`` means something else here
        if not imports and (binding is None or binding.dotted != "flydsl.expr"):
            return None  # the module alias is shadowed at the call
        return f"{alias}.{modern}", imports

    VALID = [
        Valid("import flydsl.expr as fx\ndef f(atom, src, dst):\n    fx.copy(atom, src, dst)\n"),
        Valid("import flydsl.expr as fx\ndef f(m, d, a, b, c):\n    fx.gemm(m, d, a, b, c)\n"),
        Valid(
            "from flydsl._mlir.dialects import fly\n"
            "def f(ty, atom, src, mma, a, b, c):\n"
            "    v = fly.copy_atom_call_ssa([ty], atom, src)\n"
            "    return fly.mma_atom_call_ssa([ty], mma, a, b, c), v\n"
        ),
        Valid(
            "import flydsl.expr as fx\n"
            '# fx.copy_atom_call(atom, src, dst) in a comment\n'
            'doc = "fx.mma_atom_call(m, d, a, b, c)"\n'
        ),
        Valid("def copy_atom_call(a, s, d):\n    return a\ncopy_atom_call(1, 2, 3)\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\n"
            "def load(atom, tiles, idx, r):\n"
            "    fx.copy_atom_call(atom, fx.slice(tiles, (None, idx)), r)\n",
            expected="import flydsl.expr as fx\n"
            "def load(atom, tiles, idx, r):\n"
            "    fx.copy(atom, fx.slice(tiles, (None, idx)), r)\n",
            unsafe=True,
            line=3,
            column=5,
            message="fx.copy",
        ),
        Invalid(
            "import flydsl.expr as _fx\n"
            "def mma(m, frag_c, frag_a, frag_b):\n"
            "    _fx.mma_atom_call(m, frag_c, frag_a, frag_b, frag_c)\n",
            expected=None,
            message="no fix: `fx.gemm` needs rank-1 fragments",
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def store(atom, r, dst, mask):\n"
            "    fx.copy_atom_call(atom, r, dst, pred=mask)  # predicated store\n",
            expected="import flydsl.expr as fx\n"
            "def store(atom, r, dst, mask):\n"
            "    fx.copy(atom, r, dst, pred=mask)  # predicated store\n",
            unsafe=True,
        ),
        Invalid(
            "from flydsl.expr import copy_atom_call\n"
            "def load(atom, src, r):\n"
            "    copy_atom_call(atom, src, r)\n",
            expected="import flydsl.expr as fx\n"
            "def load(atom, src, r):\n"
            "    fx.copy(atom, src, r)\n",
            unsafe=True,
        ),
        Invalid(
            # Atom state as keywords (0.5.0) is not the 1:1 form: reported, no fix.
            "import flydsl.expr as fx\n"
            "def mma(m, d, a, b, c, sa):\n"
            "    fx.mma_atom_call(m, d, a, b, c, scale_a=sa)\n",
            expected=None,
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def load(atom, args):\n"
            "    fx.copy_atom_call(atom, *args)\n",
            expected=None,
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def loop(atom, part_src, frag, K):\n"
            "    for k in fx.range_constexpr(K):\n"
            "        fx.copy_atom_call(\n"
            "            atom,\n"
            "            part_src[k],  # one tile\n"
            "            frag[k],\n"
            "        )\n",
            expected="import flydsl.expr as fx\n"
            "def loop(atom, part_src, frag, K):\n"
            "    for k in fx.range_constexpr(K):\n"
            "        fx.copy(\n"
            "            atom,\n"
            "            part_src[k],  # one tile\n"
            "            frag[k],\n"
            "        )\n",
            unsafe=True,
            line=4,
            column=9,
        ),
    ]

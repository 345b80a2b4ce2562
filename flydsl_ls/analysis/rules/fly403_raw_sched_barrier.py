import ast

from flydsl_ls.analysis.rewrite import fx_alias
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid
from flydsl_ls.analysis.versions import at_least, parse

RAW_BARRIERS = {
    "mlir.rocdl.sched_barrier": "sched_barrier",
    "mlir.rocdl.sched_group_barrier": "sched_group_barrier",
}
WRAPPERS_SINCE = "0.2.0"  # fx.rocdl.sched_barrier / sched_group_barrier: every release since


class RawSchedBarrier(Rule):
    """
    The raw ROCDL builders `sched_barrier(mask)` and `sched_group_barrier(mask, size,
    group_id)` from `flydsl._mlir.dialects.rocdl` (any alias, or the `_rocdl_ops_gen`
    module). FlyDSL wraps both as `fx.rocdl.sched_barrier` / `fx.rocdl.sched_group_barrier`
    (`expr/rocdl/__init__.py`), which accept the mask as an int (`0x008`), a keyword string
    (`"mfma_wmma|valu"`) or an `ir.Attribute`; the raw builders accept only an attribute
    (`#rocdl<sched_group_mask ...>`) and raise `TypeError` on an int.

    The fix swaps the callee and keeps every argument as written. It is safe: an attribute
    mask is passed through unchanged, sizes, group ids and `loc=`/`ip=` are forwarded, and
    the op built is the same (FlyDSL 0.5.0, checked by building both under an MLIR
    context). When the mask is visibly an int or a string, the raw call raised, so the
    rewrite changes behaviour (it starts working): that fix is unsafe. Calls through the DSL
    module (`from flydsl.expr import rocdl; rocdl.sched_barrier(0)`, `fx.rocdl.sched_barrier`)
    already reach the wrappers and are not flagged. The wrappers are not in
    `fx.rocdl.__all__`, like every scheduling primitive of the ROCDL backend.
    """

    code = "FLY403"
    name = "raw-sched-barrier"
    summary = "raw `rocdl.sched_barrier(...)` / `rocdl.sched_group_barrier(...)` from `flydsl._mlir.dialects`"
    replacement = "`fx.rocdl.sched_barrier(...)` / `fx.rocdl.sched_group_barrier(...)` with the same arguments"
    fix_safety = "safe (unsafe when the mask is an int or string literal, which the raw builder rejects)"
    fix_title = "Use the fx.rocdl wrapper"
    example_before = "rocdl_dialect.sched_group_barrier(mask_attr, 1, 0)"
    example_after = "fx.rocdl.sched_group_barrier(mask_attr, 1, 0)"

    def visit_Call(self, node: ast.Call) -> None:
        name = RAW_BARRIERS.get(self.model.resolve(node.func))
        if name is None:
            return
        spelled = ast.unparse(node.func)
        fx, imports = fx_alias(self.model)
        wrapper = f"{fx}.rocdl.{name}"
        message = f"`{spelled}(...)` is the raw ROCDL builder: use `{wrapper}(...)` (same arguments)"
        version = self.ctx.options.flydsl_version
        if parse(version) is not None and not at_least(version, WRAPPERS_SINCE):
            self.report(node, f"{message}; not offered: FlyDSL {version} predates the wrapper")
            return
        mask = self._mask(node)
        literal = isinstance(mask, ast.Constant) and isinstance(mask.value, (int, str))
        if literal:
            message += " (unsafe: the raw builder rejects a literal mask with TypeError; the wrapper converts it)"
        self.report(
            node,
            message,
            fix=self.replace(node.func, wrapper, f"Use {fx}.rocdl.{name}", safe=not literal, extra=imports),
        )

    @staticmethod
    def _mask(node: ast.Call) -> ast.expr | None:
        if node.args and not isinstance(node.args[0], ast.Starred):
            return node.args[0]
        for keyword in node.keywords:
            if keyword.arg == "mask":
                return keyword.value
        return None

    VALID = [
        # The DSL module already reaches the wrappers.
        Valid("from flydsl.expr import rocdl\nrocdl.sched_barrier(0)\nrocdl.sched_group_barrier(rocdl.mask_dsrd, 2, 0)\n"),
        Valid("import flydsl.expr as fx\nfx.rocdl.sched_barrier(0)\nfx.rocdl.sched_mfma(2)\n"),
        # Not calls, or not FlyDSL.
        Valid("from flydsl._mlir.dialects import rocdl\nop = rocdl.SchedBarrier\n# rocdl.sched_barrier(0)\n"),
        Valid("import torch\ntorch.sched_barrier(0)\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir import ir\nfrom flydsl._mlir.dialects import rocdl as rocdl_dialect\n\n"
            "def k():\n    mask = ir.Attribute.parse('#rocdl<sched_group_mask mfma_wmma>')\n"
            "    rocdl_dialect.sched_group_barrier(mask, 1, 0)\n"
            "    rocdl_dialect.sched_barrier(mask=mask, loc=None)\n",
            expected="import flydsl.expr as fx\nfrom flydsl._mlir import ir\n\n"
            "def k():\n    mask = ir.Attribute.parse('#rocdl<sched_group_mask mfma_wmma>')\n"
            "    fx.rocdl.sched_group_barrier(mask, 1, 0)\n"
            "    fx.rocdl.sched_barrier(mask=mask, loc=None)\n",
            line=7,
            column=5,
            count=2,
        ),
        # Imported by name from the generated ops module; the fx import is added.
        Invalid(
            "from flydsl._mlir.dialects._rocdl_ops_gen import sched_barrier as _sb\n_sb(NONE_MASK)\n",
            expected="import flydsl.expr as fx\nfx.rocdl.sched_barrier(NONE_MASK)\n",
        ),
        # A literal int mask made the raw builder raise: the rewrite is unsafe.
        Invalid(
            "import flydsl.expr as _fx\nfrom flydsl._mlir.dialects import rocdl\nrocdl.sched_barrier(0)\n",
            expected="import flydsl.expr as _fx\n_fx.rocdl.sched_barrier(0)\n",
            unsafe=True,
            message="TypeError",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import rocdl\nrocdl.sched_barrier(m)\n",
            expected=None,
            message="predates",
            settings={"flydsl_version": "0.1.8"},
        ),
    ]

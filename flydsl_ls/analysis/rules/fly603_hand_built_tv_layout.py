import ast

from flydsl_ls.analysis.model.diagnostic import Applicability, Fix
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

TILED_COPY = {"fx.make_tiled_copy"}
_LAYOUT_BUILDERS = {
    "fx.make_layout",
    "fx.make_ordered_layout",
    "fx.make_composed_layout",
    "fx.make_layout_like",
    "fx.make_identity_layout",
    "fx.logical_product",
    "fx.raked_product",
    "fx.blocked_product",
    "fx.composition",
    "fx.right_inverse",
    "fx.left_inverse",
    "fx.coalesce",
}


class HandBuiltTvLayout(Rule):
    """
    `fx.make_tiled_copy(atom, tv_layout, tile_mn)` takes a thread-value layout. Writing
    that layout inline (`fx.make_tiled_copy(atom, fx.make_layout(((4, 64), 8), ...),
    tile)`) encodes the thread→data mapping by hand. Build it from a thread layout and a
    value layout instead (guide §7a): `tile_mn, tv = fx.make_layout_tv(thr, val)` and
    `fx.make_tiled_copy(atom, tv, tile_mn)`, or the one-call `fx.make_tiled_copy_tv(atom,
    thr, val)`. For copies feeding an MMA operand use `fx.make_tiled_copy_A/B/C(atom,
    tiled_mma)`.

    `make_tiled_copy(atom, tv_layout, tile_mn)` with named layouts (from
    `make_layout_tv`, parameters, ...) is the modern form and is not flagged, nor is an
    inline layout with a 0 stride (a broadcast: several threads read one element, which
    `make_layout_tv`, one-to-one by construction, cannot express).

    A hand-written TV layout has no unique thread/value decomposition, so it gets a
    diagnostic only. The one form that maps exactly, `fx.make_tiled_copy(atom,
    fx.make_layout_tv(thr, val)[1], fx.make_layout_tv(thr, val)[0])`, is rewritten to
    `fx.make_tiled_copy_tv(atom, thr, val)` (unsafe: the layout pair is built once
    instead of twice; check the generated code).
    """

    code = "FLY603"
    name = "hand-built-tv-layout"
    summary = "a TV layout built inline inside `make_tiled_copy(...)`"
    replacement = "`fx.make_layout_tv` + `fx.make_tiled_copy`, or `fx.make_tiled_copy_tv`"
    fix_safety = "unsafe (exact make_layout_tv pairs only; otherwise none)"
    fix_title = "Use fx.make_tiled_copy_tv"
    example_before = "fx.make_tiled_copy(atom, fx.make_layout(((4, 64), 8), ((512, 1), 64)), (4, 512))"
    example_after = (
        "tile_mn, tv = fx.make_layout_tv(thr_layout, val_layout)\n"
        "fx.make_tiled_copy(atom, tv, tile_mn)  # or fx.make_tiled_copy_tv(atom, thr_layout, val_layout)"
    )

    def visit_Call(self, node: ast.Call) -> None:
        if self.model.resolve(node.func) not in TILED_COPY:
            return
        args = node.args
        layout = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "layout_thr_val"), None)
        if layout is None:
            return
        pair = self._layout_tv_pair(node)
        if pair is not None:
            thr, val = pair
            func = self.text(node.func)
            text = f"{func}_tv({self.text(args[0])}, {self.text(thr)}, {self.text(val)})"
            fix = Fix("Use fx.make_tiled_copy_tv (unsafe)", Applicability.UNSAFE, (self.edit(self.ctx.range(node), text),))
            self.report(node, "the TV layout is built inline: use `fx.make_tiled_copy_tv(atom, thr, val)`", fix=fix)
            return
        inline = isinstance(layout, (ast.Tuple, ast.List)) or (
            isinstance(layout, ast.Call) and self.model.resolve(layout.func) in _LAYOUT_BUILDERS
        )
        if not inline or self._broadcasts(layout):
            return
        self.report(
            layout,
            f"hand-built TV layout `{ast.unparse(layout)[:60]}` inside `make_tiled_copy`: build it from thread "
            "and value layouts with `tile_mn, tv = fx.make_layout_tv(thr, val)` + `fx.make_tiled_copy(atom, tv, "
            "tile_mn)` or `fx.make_tiled_copy_tv(atom, thr, val)` (`fx.make_tiled_copy_A/B/C` for MMA operands) "
            "(no fix: a TV layout has no unique thread/value decomposition)",
        )

    def _broadcasts(self, layout: ast.expr) -> bool:
        """A stride of 0 in the layout: threads or values share an element (index copies,
        scale broadcasts in FlyDSL's MoE GEMMs). `make_layout_tv` builds a right inverse of
        a raked product, one-to-one by construction: such a layout has no thread/value form."""
        if not (isinstance(layout, ast.Call) and self.model.resolve(layout.func) == "fx.make_layout"):
            return False
        stride = layout.args[1] if len(layout.args) > 1 else next((k.value for k in layout.keywords if k.arg == "stride"), None)
        return stride is not None and any(
            isinstance(n, ast.Constant) and type(n.value) is int and n.value == 0 for n in ast.walk(stride)
        )

    def _layout_tv_pair(self, node: ast.Call):
        if len(node.args) != 3 or node.keywords:
            return None
        tv, tile = node.args[1], node.args[2]
        parts = []
        for expr, index in ((tv, 1), (tile, 0)):
            if not (
                isinstance(expr, ast.Subscript)
                and isinstance(expr.slice, ast.Constant)
                and expr.slice.value == index
                and isinstance(expr.value, ast.Call)
                and self.model.resolve(expr.value.func) == "fx.make_layout_tv"
                and len(expr.value.args) == 2
                and not expr.value.keywords
            ):
                return None
            parts.append(expr.value)
        if [ast.dump(a) for a in parts[0].args] != [ast.dump(a) for a in parts[1].args]:
            return None
        if not all(isinstance(a, (ast.Name, ast.Attribute)) for a in parts[0].args):
            return None  # evaluated twice before: only side-effect-free names are merged
        return parts[0].args

    VALID = [
        Valid(
            "import flydsl.expr as fx\n"
            "def f(atom, thr, val):\n"
            "    tile_mn, tv = fx.make_layout_tv(thr, val)\n"
            "    return fx.make_tiled_copy(atom, tv, tile_mn)\n"
        ),
        Valid("import flydsl.expr as fx\ndef f(atom, thr, val):\n    return fx.make_tiled_copy_tv(atom, thr, val)\n"),
        Valid("import flydsl.expr as fx\ndef f(atom, tv_layout, tile_mn):\n    return fx.make_tiled_copy(atom, tv_layout, tile_mn)\n"),
        # A broadcast (stride 0: threads share an element) has no thread/value form.
        Valid(
            "import flydsl.expr as fx\n"
            "def f(atom):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((16, 4, 4), 4), ((0, 4, 16), 1)), (64, 4))\n"
        ),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((4, 64), 8), ((512, 1), 64)), (4, 512))\n",
            expected=None,
            line=3,
            column=37,
            message="(no fix: a TV layout has no unique thread/value decomposition)",
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom, thr, val):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout_tv(thr, val)[1], fx.make_layout_tv(thr, val)[0])\n",
            expected="import flydsl.expr as fx\n"
            "def f(atom, thr, val):\n"
            "    return fx.make_tiled_copy_tv(atom, thr, val)\n",
            unsafe=True,
        ),
    ]

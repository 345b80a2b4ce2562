import ast

from flydsl_ls.analysis.model.diagnostic import Applicability, Fix
from flydsl_ls.analysis.model.text import Range
from flydsl_ls.analysis.rules._tv_layout import (
    MAX_PAIRS,
    Failure,
    decompose,
    layout_text,
    leaves,
    matches,
    monomial,
    pairs,
    why_none,
)
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid, call_argument

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

    An inline `fx.make_layout(shape, stride)` with a (thread, value) pair of modes and a
    `fx.make_tile(M, N)` tile is rebuilt: `make_layout_tv(thr, val)` gives each thread a
    Vm x Vn block of its (M, N) tile with the threads stepping over it by (Vm, Vn), so
    the layout's modes are read as steps along M or N (a mode wrapping M exactly is split
    in two) and must chain up: the values' from 1, the threads' on from Vm (Vn). Any
    thread/value pair doing so is a fix (the decomposition need not be unique): it maps
    every (thread, value) to the same tile element. Sizes may be build-time ints or names
    (`_e_vec`), read as monomials that divide or equal one another for every value of
    the names. When make_layout_tv's tile is the one passed, the call becomes
    `fx.make_tiled_copy_tv(atom, thr, val)`; when its N is not known to be (`tile_k` next
    to `thrs_k = tile_k // vec`), the tile is kept: `fx.make_tiled_copy(atom,
    fx.make_layout_tv(thr, val)[1], tile)`. The fix is unsafe: the TV layout's type
    becomes the form make_layout_tv builds (`((4,32,2),8)` for `((4,16,2,2),8)`), so the
    first MLIR differs; on the six real sites (FlyDSL's MoE gemm1/gemm2 epilogues, the
    preshuffle and RDNA GEMMs' G2S copies, aiter's preshuffle GEMM) every compiled case
    keeps its LLVM IR, ISA and resources (docs/fix-safety.md). A static layout no
    thread/value layouts give (a thread's values not one block, threads off the grid,
    two pairs on one element, a tile of another size) says exactly why.

    The form `fx.make_tiled_copy(atom, fx.make_layout_tv(thr, val)[1],
    fx.make_layout_tv(thr, val)[0])` becomes `fx.make_tiled_copy_tv(atom, thr, val)`
    (unsafe: the layout pair is built once instead of twice; check the generated code).
    """

    code = "FLY603"
    name = "hand-built-tv-layout"
    summary = "a TV layout built inline inside `make_tiled_copy(...)`"
    replacement = "`fx.make_layout_tv` + `fx.make_tiled_copy`, or `fx.make_tiled_copy_tv`"
    fix_safety = "unsafe (thread/value layouts found from the layout and its tile; otherwise none)"
    fix_title = "Build the TV layout with fx.make_layout_tv"
    example_before = (
        "fx.make_tiled_copy(atom, fx.make_layout(((2, 8, 2, 2), 4), ((64, 1, 8, 128), 16)), fx.make_tile(16, 16))"
    )
    example_after = (
        "fx.make_tiled_copy_tv(atom, fx.make_layout((16, (2, 2)), (2, (1, 32))), fx.make_layout((1, 4), (1, 1)))"
    )

    callees = Callees(symbols=frozenset(TILED_COPY))

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
        fix, why = self._from_thr_val(node, layout)
        message = (
            f"hand-built TV layout `{ast.unparse(layout)[:60]}` inside `make_tiled_copy`: build it from thread "
            "and value layouts with `tile_mn, tv = fx.make_layout_tv(thr, val)` + `fx.make_tiled_copy(atom, tv, "
            "tile_mn)` or `fx.make_tiled_copy_tv(atom, thr, val)` (`fx.make_tiled_copy_A/B/C` for MMA operands)"
        )
        self.report(layout, message if fix else f"{message} (no fix: {why})", fix=fix)

    def _from_thr_val(self, node: ast.Call, layout: ast.expr) -> tuple[Fix | None, str]:
        """A fix building ``layout`` with make_layout_tv from thread/value layouts that map
        every (thread, value) to the same tile element; else why there is none."""
        parts = self._shape_stride(layout)
        if parts is None or len(node.args) != 3 or node.keywords or not isinstance(node.func, ast.Attribute):
            return None, "only `fx.make_tiled_copy(atom, fx.make_layout(shape, stride), tile)` is rebuilt"
        (thr_shape, val_shape), (thr_stride, val_stride) = parts
        thread = leaves(self.model, thr_shape, thr_stride, self.text)
        value = leaves(self.model, val_shape, val_stride, self.text)
        tile = self._tile(node.args[2])
        if thread is None or value is None:
            return None, "its sizes are not build-time ints, names of them or products: make_layout_tv takes static layouts"
        if tile is None:
            return None, "the tile is not `fx.make_tile(M, N)` with M a build-time int or name"
        big_m, big_n = tile
        static = not any(m.names for m in (big_m, *[x for leaf in thread + value for x in (leaf.size, leaf.stride)]))
        found = decompose(thread, value, tile)
        enumerable = static and pairs(thread) * pairs(value) <= MAX_PAIRS
        if isinstance(found, Failure):
            if enumerable:
                n = big_n.coef if big_n is not None and not big_n.names else None
                return None, f"no thread/value layouts give it: {why_none(thread, value, big_m.coef, n)}"
            if static:
                return None, f"no thread/value layouts found: {found.reason}"
            names = sorted({n for leaf in thread + value for n, _ in (*leaf.size.names, *leaf.stride.names)})
            return None, f"no thread/value layouts found that fit every value of `{'`, `'.join(names)}`: {found.reason}"
        if enumerable and not matches(thread, value, found, big_m.coef):
            return None, "no thread/value layouts of the same mapping were found"
        make_layout = self.text(layout.func)
        thr = f"{make_layout}({layout_text(found.thr)})"
        val = f"{make_layout}({layout_text(found.val)})"
        tile_arg = node.args[2]
        if found.tile == tile:  # make_layout_tv's own tile is the one passed
            joint = ",\n" + " " * layout.col_offset if tile_arg.lineno != layout.lineno else ", "
            span = Range(self.ctx.range(layout).start, self.ctx.range(tile_arg).end)
            edits = (self.edit(self.ctx.range(node.func), f"{self.text(node.func)}_tv"), self.edit(span, f"{thr}{joint}{val}"))
        else:  # the tile's N is not known to be make_layout_tv's: keep the tile passed
            prefix = self.text(node.func.value)
            edits = (self.edit(self.ctx.range(layout), f"{prefix}.make_layout_tv({thr}, {val})[1]"),)
        return Fix(f"{self.fix_title} (unsafe)", Applicability.UNSAFE, edits), ""

    def _shape_stride(self, layout: ast.expr):
        """((thread shape, value shape), (thread stride, value stride)) of an
        `fx.make_layout(shape, stride)` with a (thread, value) pair of modes."""
        if not (isinstance(layout, ast.Call) and self.model.resolve(layout.func) == "fx.make_layout"):
            return None
        shape = call_argument(layout, 0, "shape")
        stride = call_argument(layout, 1, "stride")
        pairs = [x for x in (shape, stride) if isinstance(x, ast.Tuple) and len(x.elts) == 2]
        if len(pairs) != 2 or len(layout.args) + len(layout.keywords) != 2:
            return None
        return tuple(pairs[0].elts), tuple(pairs[1].elts)

    def _tile(self, tile: ast.expr):
        """(M, N) monomials of `fx.make_tile(M, N)` or `(M, N)`; N None when unknown."""
        if isinstance(tile, ast.Call) and self.model.resolve(tile.func) == "fx.make_tile" and not tile.keywords:
            sizes = tile.args
        elif isinstance(tile, (ast.Tuple, ast.List)):
            sizes = tile.elts
        else:
            return None
        if len(sizes) != 2 or any(isinstance(x, ast.Starred) for x in sizes):
            return None
        big_m, big_n = (monomial(self.model, x) for x in sizes)
        return (big_m, big_n) if big_m is not None and big_m.coef > 0 else None

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
        # Threads (2, 8, 2, 2) step 4 along N, 1 and 8 along M, 8 along N; 4 values along N.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((2, 8, 2, 2), 4), ((64, 1, 8, 128), 16)), fx.make_tile(16, 16))\n",
            expected="import flydsl.expr as fx\n"
            "def f(atom):\n"
            "    return fx.make_tiled_copy_tv(atom, fx.make_layout((16, (2, 2)), (2, (1, 32))), fx.make_layout((1, 4), (1, 1)))\n",
            unsafe=True,
        ),
        # Names: `vec` has two values; `cols` is `lanes * vec`, the tile make_layout_tv builds
        # (and goes with the call).
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom, wide):\n"
            "    lanes = 16\n"
            "    rows = 64 // lanes\n"
            "    vec = 8 if wide else 2\n"
            "    cols = lanes * vec\n"
            "    return fx.make_tiled_copy(\n"
            "        atom,\n"
            "        fx.make_layout(((lanes, rows), vec), ((rows * vec, 1), rows)),\n"
            "        fx.make_tile(rows, cols),\n"
            "    )\n",
            expected="import flydsl.expr as fx\n"
            "def f(atom, wide):\n"
            "    lanes = 16\n"
            "    rows = 64 // lanes\n"
            "    vec = 8 if wide else 2\n"
            "    return fx.make_tiled_copy_tv(\n"
            "        atom,\n"
            "        fx.make_layout((rows, lanes), (lanes, 1)),\n"
            "        fx.make_layout((1, vec), (1, 1)),\n"
            "    )\n",
            unsafe=True,
        ),
        # `tile_k` is not known to be `thrs_k * vec`: the tile passed is kept.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom, tile_k, vec):\n"
            "    thrs_k = tile_k // vec\n"
            "    thrs_m = 256 // thrs_k\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((thrs_k, thrs_m), (1, vec)), ((thrs_m * vec, 1), (1, thrs_m))), fx.make_tile(thrs_m, tile_k))\n",
            expected="import flydsl.expr as fx\n"
            "def f(atom, tile_k, vec):\n"
            "    thrs_k = tile_k // vec\n"
            "    thrs_m = 256 // thrs_k\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout_tv(fx.make_layout((thrs_m, thrs_k), (thrs_k, 1)), fx.make_layout((1, vec), (1, 1)))[1], fx.make_tile(thrs_m, tile_k))\n",
            unsafe=True,
        ),
        # A thread's 8 values are 16 apart along N: make_layout_tv gives it one block.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((4, 64), 8), ((512, 1), 64)), (4, 512))\n",
            expected=None,
            line=3,
            column=37,
            message="(no fix: no thread/value layouts give it: thread 0's values sit at tile (m, n) (0, 0), (0, 16), "
            "(0, 32), (0, 48), ...: not a block of neighbouring elements, and make_layout_tv gives each thread "
            "a Vm x Vn block)",
        ),
        # Threads 0 and 1 both reach element 1.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((2, 32), 2), ((1, 2), 1)), fx.make_tile(8, 16))\n",
            expected=None,
            message="(no fix: no thread/value layouts give it: thread 0 value 1 and thread 1 value 0 share tile "
            "element 1; make_layout_tv gives every pair its own element)",
        ),
        # 4-value blocks down M, but the threads step 8 columns along N and run off the tile.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((4, 16), 4), ((4, 128), 1)), fx.make_tile(16, 16))\n",
            expected=None,
            message="(no fix: no thread/value layouts give it: each thread's values form a 4 x 1 block, but thread "
            "8 starts at tile (m, n) (0, 16), off the grid of (4, 1) steps make_layout_tv puts the threads on)",
        ),
        # Values 8 * n apart along M: with a name the rule compares products, and says so.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom, n):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((n, 8), 4), ((1, n), 8 * n)), fx.make_tile(n, 32))\n",
            expected=None,
            message="(no fix: no thread/value layouts found that fit every value of `n`: the values do not step "
            "over the tile's N by whole blocks (mode 4:8 along N))",
        ),
        # `n` is an fx.Int32: a layout of it is no static layout.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom, n: fx.Int32):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((n, 8), 4), ((4, 4 * n), 1)), fx.make_tile(4 * n, 8))\n",
            expected=None,
            message="(no fix: its sizes are not build-time ints, names of them or products: make_layout_tv takes "
            "static layouts)",
        ),
        # The same with a build-time `n`.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom, n):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((n, 8), 4), ((4, 4 * n), 1)), fx.make_tile(4 * n, 8))\n",
            expected="import flydsl.expr as fx\n"
            "def f(atom, n):\n"
            "    return fx.make_tiled_copy_tv(atom, fx.make_layout((n, 8), (1, n)), fx.make_layout((4, 1), (1, 1)))\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(atom, tile):\n"
            "    return fx.make_tiled_copy(atom, fx.make_layout(((4, 16), 4), ((64, 1), 16)), tile)\n",
            expected=None,
            message="(no fix: the tile is not `fx.make_tile(M, N)` with M a build-time int or name)",
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

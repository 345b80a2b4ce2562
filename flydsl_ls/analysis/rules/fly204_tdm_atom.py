import ast

from flydsl_ls.analysis.model.semantic import nodes_under
from flydsl_ls.analysis.model.versions import at_least, parse
from flydsl_ls.analysis.rules._tdm_tile import tile_row
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

TDM_ATOM = {"fx.rocdl.make_tdm_atom", "fx.rocdl.cdna5.make_tdm_atom"}
TILED_SINCE = "0.3.4"  # guide 000 (pinned 0.3.4.1) documents cdna5.make_tiled_tdm_atom
_GATHER_WORDS = ("gather", "scatter")
_NARROW_ROW = 16  # bytes: a narrower innermost row keeps the per-tile atom (guide 000)


class TdmAtom(Rule):
    """
    On gfx1250, `fx.rocdl.make_tdm_atom(tensor, tensor_extents, strides=..., num_warps=...)`
    builds a per-tile TDM copy atom whose extents, strides and tile offset (`imm_offset=`) are
    hand-carried state. The tiled form `fx.rocdl.cdna5.make_tiled_tdm_atom` +
    `fx.rocdl.cdna5.tdm_partition` derives them from layouts: `tensor_extents=` and
    `strides=` move into the global view's layout, and `imm_offset=` becomes the coordinate
    tensor's i32 tile index (guide 000 §2).

    Kept (never flagged): the gather/scatter family (`make_tensor_gather_descriptor`,
    `tensor_load_gather`, per-row addresses), visible as gather/scatter calls on the same
    tensor; and tiles whose innermost dimension spans under 16 bytes. The tile is read off
    the global view the atom copies from (`fx.make_view(ptr, fx.make_layout(shape, stride))`),
    followed through local variables and through a helper of the file that returns the
    view (`global_view(base, off, (tile_m, 2), (2, 1))`); the element size comes from an
    `fx.recast_iter(fx.Int32, ...)` pointer. A literal innermost extent whose width
    depends on an element type that cannot be read (2 elements: 2 to 16 bytes) is not
    reported: the rule cannot know. Not reported when the project's FlyDSL predates the
    tiled API. Diagnostic only: the rewrite restructures the copy loop.
    """

    code = "FLY204"
    name = "tdm-atom"
    summary = "`fx.rocdl.make_tdm_atom(...)` (gfx1250), except the gather/scatter family and <16-byte tiles"
    replacement = "`fx.rocdl.cdna5.make_tiled_tdm_atom` + `tdm_partition`"
    fix_safety = "none"
    example_before = (
        "atom = fx.rocdl.make_tdm_atom(gA, [m, k], strides=[lda, None], num_warps=1)\n"
        "fx.copy(atom, gA, lds_a, imm_offset=tile)"
    )
    example_after = (
        "gA = fx.make_view(fx.get_iter(A), fx.make_layout((m, k), (lda, 1)))\n"
        "atom = fx.rocdl.cdna5.make_tiled_tdm_atom(...)\n"
        "src, dst = fx.rocdl.cdna5.tdm_partition(atom, gA, lds_a, coord)  # coord: i32 tile index"
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._gathered_in: dict[int, set[str]] = {}  # id(function or module) -> ``_gathered``

    callees = Callees(symbols=frozenset(TDM_ATOM))

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol not in TDM_ATOM:
            return
        version = self.ctx.options.flydsl_version
        if parse(version) is not None and not at_least(version, TILED_SINCE):
            return
        tensor = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
        if tensor is not None and self._gather_family(tensor):
            return
        row = tile_row(self.model, tensor) if tensor is not None else None
        if row is not None and row.under(_NARROW_ROW) is not False:
            return  # a narrow row keeps the per-tile atom, or its width cannot be known
        moved = []
        keywords = {kw.arg for kw in node.keywords}
        if len(node.args) > 1 or "tensor_extents" in keywords:
            moved.append("its `tensor_extents` move into the global view's layout shape")
        if len(node.args) > 2 or "strides" in keywords:
            moved.append("`strides=` into that layout's stride")
        moved.append("an `imm_offset=` tile offset becomes the coordinate tensor's i32 tile index")
        self.report(
            node,
            "use `fx.rocdl.cdna5.make_tiled_tdm_atom` + `fx.rocdl.cdna5.tdm_partition`: "
            f"`{ast.unparse(node.func)}(...)` hand-carries the TDM tile descriptor; "
            + "; ".join(moved)
            + " (keep this form only for the gather/scatter family or a tile whose innermost "
            "dimension spans under 16 bytes; no fix: the global view, the atom and every "
            "`fx.copy` that uses it change together)",
        )

    def _gather_family(self, tensor: ast.expr) -> bool:
        if not isinstance(tensor, ast.Name):
            return False
        function = self.ctx.enclosing_function()
        return tensor.id in self._gathered(function if function is not None else self.model.tree)

    def _gathered(self, root: ast.AST) -> set[str]:
        """The names passed to the gather/scatter calls under ``root``, kept per root (a
        5,000-line builder was walked again for each of its atoms)."""
        found = self._gathered_in.get(id(root))
        if found is None:
            found = self._gathered_in[id(root)] = set()
            for call in nodes_under(root):
                if not isinstance(call, ast.Call):
                    continue
                name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
                if any(word in name for word in _GATHER_WORDS):
                    found.update(arg.id for arg in [*call.args, *(kw.value for kw in call.keywords)] if isinstance(arg, ast.Name))
        return found

    VALID = [
        Valid(
            "import flydsl.expr as fx\n"
            "def f(atom_args):\n"
            "    return fx.rocdl.cdna5.make_tiled_tdm_atom(*atom_args)\n"
        ),
        Valid(
            "import flydsl.expr as fx\nfrom flydsl.expr.rocdl import tdm_ops\n"
            "def f(gA, rows, m, k):\n"
            "    desc = tdm_ops.make_tensor_gather_descriptor(gA, rows)\n"
            "    atom = fx.rocdl.make_tdm_atom(gA, [m, k], num_warps=1)\n"
            "    return desc, atom\n"
        ),
        Valid('# fx.rocdl.make_tdm_atom(gA, [m, k]) in a comment\ns = "fx.rocdl.make_tdm_atom(x)"\n'),
        Valid(
            "import flydsl.expr as fx\n"
            "def f(gA, m, k):\n"
            "    return fx.rocdl.make_tdm_atom(gA, [m, k], num_warps=1)\n",
            settings={"flydsl_version": "0.3.2"},
        ),
        # An 8-byte row through a helper and variables (aiter's rowmap tile, `(tile_m, 2)` of
        # i32): the pointer gives the element size.
        Valid(
            "import flydsl.expr as fx\n"
            "def f(arg, off, tile_m, mn_oob):\n"
            "    def global_view(base, off, shape, stride):\n"
            "        return fx.Tensor(fx.make_view(base + off, fx.make_layout(shape, stride)))\n"
            "    rows = fx.recast_iter(fx.Int32, arg)\n"
            "    gt = global_view(rows, off, (tile_m, 2), (2, 1))\n"
            "    return fx.rocdl.make_tdm_atom(gt, [mn_oob, None], strides=[fx.Int64(2), None], num_warps=4)\n"
        ),
        # The same row of an element type that cannot be read (`fx.get_iter`): 2 to 16 bytes,
        # the rule cannot know.
        Valid(
            "import flydsl.expr as fx\n"
            "def f(arg, off, tile_m, mn_oob):\n"
            "    def global_view(base, off, shape, stride):\n"
            "        return fx.Tensor(fx.make_view(base + off, fx.make_layout(shape, stride)))\n"
            "    gt = global_view(fx.get_iter(arg), off, (tile_m, 2), (2, 1))\n"
            "    return fx.rocdl.make_tdm_atom(gt, [mn_oob, None], strides=[fx.Int64(2), None], num_warps=4)\n"
        ),
    ]
    INVALID = [
        # A 64-byte row read through the same helper: flagged.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(arg, off, tile_m, mn_oob):\n"
            "    def global_view(base, off, shape, stride):\n"
            "        return fx.Tensor(fx.make_view(fx.add_offset(base, off), fx.make_layout(shape, stride)))\n"
            "    a = fx.recast_iter(fx.Int8, arg)\n"
            "    gt = global_view(a, off, (tile_m, 64), (64, 1))\n"
            "    return fx.rocdl.make_tdm_atom(gt, [mn_oob, None], strides=[64, None], num_warps=1)\n",
            expected=None,
            line=7,
            message="use `fx.rocdl.cdna5.make_tiled_tdm_atom` + `fx.rocdl.cdna5.tdm_partition`: `fx.rocdl.make_tdm_atom(...)` hand-carries",
        ),
        # 16 elements are at least 16 bytes whatever the element type.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(ptr, m):\n"
            "    gt = fx.make_view(ptr, fx.make_layout((m, 16), (16, 1)))\n"
            "    return fx.rocdl.make_tdm_atom(gt, [m, None], num_warps=1)\n",
            expected=None,
            line=4,
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(gA, mn_oob, lda64):\n"
            "    return fx.rocdl.make_tdm_atom(gA, [mn_oob, None], strides=[lda64, None], num_warps=1)\n",
            expected=None,
            line=3,
            column=12,
            message="no fix: the global view, the atom and every `fx.copy` that uses it change together)",
            settings={"target_arch": "gfx1250", "flydsl_version": "0.5.0"},
        ),
        Invalid(
            "from flydsl.expr import rocdl\n"
            "def f(gt, outer, inner):\n"
            "    return rocdl.make_tdm_atom(gt, [outer, inner], num_warps=4)\n",
            expected=None,
            message="imm_offset",
        ),
        Invalid(
            "from flydsl.expr.rocdl import cdna5\n"
            "def f(gt, e):\n"
            "    return cdna5.make_tdm_atom(gt, e, num_warps=1)\n",
            expected=None,
            message="tdm_partition",
        ),
    ]

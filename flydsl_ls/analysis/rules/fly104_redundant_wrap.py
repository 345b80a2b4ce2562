import ast

from flydsl_ls.analysis.model import fxtypes as T
from flydsl_ls.analysis.model.locate import spelled as spelled_callee
from flydsl_ls.analysis.model.rewrite import replacement_text
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

# Builders whose shapes, strides and bounds are compile-time Python ints.
STATIC_BUILDERS = {
    "fx.make_layout",
    "fx.make_shape",
    "fx.make_stride",
    "fx.make_ordered_layout",
    "fx.range_constexpr",
    "flyc.range_constexpr",
    "fx.Constexpr",
    "flyc.Constexpr",
}
_INT_WRAPPERS = {f"fx.{n}" for n in ("Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64", "Index")}


class RedundantWrap(Rule):
    """
    Wrap a value only to give it a type or to change it. Re-wrapping a value that already
    has the type is noise, and a double wrap `fx.Int32(fx.Int32(x))` is dead.

    Flagged: `fx.T(fx.T(x))`; `fx.T(v)` where `v` is already inferred as `fx.T` (from
    an annotation, a constructor, `fx.thread_idx.x`, ...); and `fx.IntN(<Python int>)`
    passed to `make_layout`/`make_shape`/`make_stride`/`range_constexpr`/`Constexpr`,
    which take plain Python ints. A real cast such as `fx.Int64(i32_value)` is not
    redundant and is never flagged.
    """

    code = "FLY104"
    name = "redundant-wrap"
    summary = "`fx.T(fx.T(x))`, `fx.T(v)` with `v` already `fx.T`, `fx.IntN(<int>)` in static builders"
    replacement = "the inner value, or the plain Python int"
    fix_safety = "safe"
    fix_title = "Remove the redundant wrap"
    deprecated_tag = False
    example_before = "tile = fx.make_layout(fx.Int32(BLOCK), fx.Int32(1))"
    example_after = "tile = fx.make_layout(BLOCK, 1)"

    callees = Callees(prefixes=("fx.",))

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if not symbol or not symbol.startswith("fx.") or not T.is_numeric_class(symbol[3:]):
            return
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            return
        inner = node.args[0]
        kind = self.model.type_of(inner)
        spelled = spelled_callee(node.func)
        if kind.name == symbol:
            text = replacement_text(self.model, inner, node, self.ctx.parent)
            if isinstance(inner, ast.Call) and self.model.resolve(inner.func) == symbol:
                message = f"`{spelled}({spelled}(x))` wraps twice: one wrap is enough"
            else:
                message = f"`{spelled}(v)` where `v` is already `{symbol}` ({kind.origin}): drop the wrap"
            self.report(node, message, fix=self.replace(node, text, self.fix_title))
        elif symbol in _INT_WRAPPERS and kind.name == T.PY_INT and self._in_static_builder(node):
            text = replacement_text(self.model, inner, node, self.ctx.parent)
            self.report(
                node,
                f"`{spelled}(...)` of a Python int inside a static builder: pass the plain int",
                fix=self.replace(node, text, "Pass the plain Python int"),
            )

    def _in_static_builder(self, node: ast.Call) -> bool:
        child = node
        for parent in reversed(self.ctx.parents):
            if isinstance(parent, (ast.Tuple, ast.List)):
                child = parent
                continue
            if isinstance(parent, ast.Call) and child is not parent.func:
                return self.model.resolve(parent.func) in STATIC_BUILDERS
            if isinstance(parent, ast.Subscript) and child is parent.slice:
                return self.model.resolve(parent.value) in STATIC_BUILDERS
            return False
        return False

    VALID = [
        Valid("import flydsl.expr as fx\ndef f(x: fx.Int32):\n    return fx.Int64(x)\n"),
        Valid("import flydsl.expr as fx\ny = fx.Int32(v)\n"),
        Valid("import flydsl.expr as fx\ndef f(n):\n    return fx.make_layout(fx.Int32(n), 1)\n"),
        Valid("import flydsl.expr as fx\nx = fx.Int32(4) + 1\n"),
        Valid("import flydsl.expr as fx\nx = fx.Int64(fx.Int32(3))\n"),
        # FlyDSL promotes: `/` on an fx integer is a float division, a float literal makes a
        # float, a literal past i32 an Int64, a narrow integer an Int32. The wrap converts.
        Valid(
            "import flydsl.expr as fx\ndef f(a: fx.Int32, h: fx.Int16, b: fx.BFloat16):\n"
            "    s = a / 2\n    t = (a + 1) / 3\n    u = a * 1.5\n    v = a + 3000000000\n"
            "    return fx.Int32(s), fx.Int32(t), fx.Int32(u), fx.Int32(v), fx.Int16(h + 1), fx.BFloat16(b * 2)\n"
        ),
        # The type oracle (tests/test_promotion.py): an int whose value is not known may be past
        # i32 (an Int64); `.to` keeps a Vector a Vector, and the type of `v.to(T)` of an unknown
        # `v` is not known.
        Valid(
            "import flydsl.expr as fx\ndef f(a: fx.Int32, n: fx.Constexpr[int], vec: fx.Vector, v):\n"
            "    return fx.Int32(a + n), fx.Float16(vec.to(fx.Float16)), fx.Float16(v.to(fx.Float16))\n"
        ),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\ndef f(base):\n    return fx.Int64(fx.Int64(base) + fx.Int64(4))\n",
            expected="import flydsl.expr as fx\ndef f(base):\n    return fx.Int64(base) + fx.Int64(4)\n",
            message="already `fx.Int64`",
        ),
        Invalid(
            "import flydsl.expr as fx\nN = 64\ndef f(a: fx.Int32, h: fx.Float16):\n"
            "    for i in fx.range_constexpr(N):\n        r = fx.Int32(a + i * N)\n",
            expected="import flydsl.expr as fx\nN = 64\ndef f(a: fx.Int32, h: fx.Float16):\n"
            "    for i in fx.range_constexpr(N):\n        r = a + i * N\n",
            message="already `fx.Int32`",
        ),
        Invalid(
            "import flydsl.expr as fx\nx = fx.Int32(fx.Int32(v))\n",
            expected="import flydsl.expr as fx\nx = fx.Int32(v)\n",
            message="wraps twice",
            column=5,
        ),
        Invalid(
            "import flydsl.expr as fx\nBLOCK = 256\ntile = fx.make_layout(fx.Int32(BLOCK), fx.Int32(1))\n",
            expected="import flydsl.expr as fx\nBLOCK = 256\ntile = fx.make_layout(BLOCK, 1)\n",
            count=2,
        ),
        Invalid(
            "import flydsl.expr as fx\nfor i in fx.range_constexpr(fx.Int32(8)):\n    pass\n",
            expected="import flydsl.expr as fx\nfor i in fx.range_constexpr(8):\n    pass\n",
        ),
        Invalid(
            "import flydsl.expr as fx\ntid = fx.thread_idx.x\nidx = fx.Int32(tid)\n",
            expected="import flydsl.expr as fx\ntid = fx.thread_idx.x\nidx = tid\n",
        ),
        Invalid(
            "import flydsl.expr as fx\nshape = fx.make_shape((fx.Int32(4), 8))\n",
            expected="import flydsl.expr as fx\nshape = fx.make_shape((4, 8))\n",
        ),
    ]

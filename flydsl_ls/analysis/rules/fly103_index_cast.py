import ast

from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.valueflow import kind_change_hazard
from flydsl_ls.analysis.rules._boundary import raw_boundaries
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

INDEX_CASTS = {"fx.arith.index_cast", "fx.index_cast"}
INDEX_CONSTANTS = {"fx.arith.index"}
CONSTANTS = {"fx.arith.constant"}
INDEX_TYPES = {"fx.T.index", "mlir.ir.IndexType.get"}


class IndexCast(Rule):
    """
    Index-typed values built with the arith helpers: `arith.index_cast(T.index, v)`,
    `arith.index(n)`, `arith.constant(n, index=True)` and the deprecated
    `fx.index_cast(T.index, v)`.

    At an index-typed boundary (a launch, layout, loop or other API that needs
    `index`), write `fx.Index(v)`; the fix does exactly that. For plain counters prefer
    an explicit width, `fx.Int64(...)` or `fx.Int32(...)`, chosen on purpose: that
    choice changes the IR and is left to you. `fx.Index(...)` is an fx value: each consumer
    that needs the raw `ir.Value` (a raw builder such as `scf.for_`, an ArithValue method,
    code the file does not show) gets `v.ir_value()` in the same fix (unsafe). Casts to other types
    (`index_cast(T.i32, v)`) belong to FLY301. `fx.Index(...)` itself is not flagged.
    """

    code = "FLY103"
    name = "index-cast"
    summary = "`arith.index_cast(T.index, v)`, `arith.index(n)`, `arith.constant(n, index=True)`, `fx.index_cast`"
    replacement = "`fx.Index(v)` at index-typed boundaries; `fx.Int64`/`fx.Int32` for plain counters"
    fix_safety = (
        "safe for index_cast(T.index, v) -> fx.Index(v) where every consumer takes an fx value; unsafe "
        "at operators and for the index constants; none where a raw builder consumes it"
    )
    fix_title = "Replace with fx.Index(v)"
    example_before = "off = arith.index_cast(T.index, x)"
    example_after = "off = fx.Index(x)"

    callees = Callees(symbols=frozenset(INDEX_CASTS | INDEX_CONSTANTS | CONSTANTS))

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol in INDEX_CASTS:
            if len(node.args) == 2 and not node.keywords and self._is_index_type(node.args[0]):
                self._offer(node, node.args[1], f"`{ast.unparse(node.func)}(T.index, v)`")
            elif symbol == "fx.index_cast":
                self.report(node, "`fx.index_cast` is deprecated: use `fx.Int32(v)`/`fx.Int64(v)`/`fx.Index(v)`")
        elif symbol in INDEX_CONSTANTS and len(node.args) == 1 and not node.keywords:
            self._offer(node, node.args[0], f"`{ast.unparse(node.func)}(n)`", safe=False)
        elif symbol in CONSTANTS and self._index_keyword(node) and len(node.args) == 1:
            self._offer(node, node.args[0], f"`{ast.unparse(node.func)}(n, index=True)`", safe=False)

    def _offer(self, node: ast.Call, value: ast.expr, spelled: str, safe: bool = True) -> None:
        # Unsafe for the constants: `arith.index(4)` emits `arith.constant 4 : index` where
        # it stands, `fx.Index(4)` emits nothing there and each use makes an i32 constant
        # instead (the first MLIR differs; tests/semantics/ compiles both).
        if isinstance(value, ast.Starred):
            return
        message = (
            f"{spelled} builds an index value by hand: use `fx.Index(...)` "
            "(or an explicit-width `fx.Int64`/`fx.Int32` for plain counters)"
        )
        # The helper returns a raw ir.Value, fx.Index(...) an fx value: its operators are
        # unsigned, and each consumer that needs the raw value gets `.ir_value()` in the fix.
        boundaries = raw_boundaries(self, node)
        if boundaries.blocker is not None:
            self.report(node, f"{message} (no fix: {boundaries.blocker})")
            return
        unsafe = []
        # (The constants' fixes are unsafe anyway: their uses are not followed again for it.)
        hazard = kind_change_hazard(self.value_uses(node, through_operators=True)) if safe else None
        if hazard is not None:
            unsafe.append(f"fx.Index's operators and kind differ from the raw value's at {hazard.describe()}")
        fx, imports = fx_alias(self.model)
        replacement = f"{fx}.Index({self.text(value)})"
        if boundaries.places:
            unsafe.append(boundaries.note)
            replacement += ".ir_value()" if boundaries.wrap_self else ""
        if unsafe and safe:
            safe = False
            message += f" (unsafe: {'; '.join(unsafe)})"
        self.report(
            node,
            message,
            fix=self.replace(
                node, replacement, f"Replace with {fx}.Index(...)", extra=(*imports, *boundaries.edits), safe=safe
            ),
        )

    def _is_index_type(self, expr: ast.expr) -> bool:
        target = expr.func if isinstance(expr, ast.Call) and not expr.args else expr
        return self.model.resolve(target) in INDEX_TYPES

    @staticmethod
    def _index_keyword(node: ast.Call) -> bool:
        keywords = {k.arg: k.value for k in node.keywords}
        flag = keywords.get("index")
        return (
            set(keywords) == {"index"}
            and isinstance(flag, ast.Constant)
            and flag.value is True
        )

    VALID = [
        Valid("import flydsl.expr as fx\noff = fx.Index(x)\n"),
        Valid("from flydsl.expr import arith\nc = arith.constant(4)\n"),
        Valid("from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nv = arith.index_cast(T.i32, x)\n"),
        Valid("import pandas as pd\nidx = pd.index_cast(x)\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def tile(x: fx.Int32):\n"
            "    off = arith.index_cast(T.index, x)\n"
            "    return fx.make_layout(off, 1)\n",
            expected="import flydsl.expr as fx\n"
                     "def tile(x: fx.Int32):\n"
                     "    off = fx.Index(x)\n"
                     "    return fx.make_layout(off, 1)\n",
            line=5,
            column=11,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "off = arith.index_cast(T.index, x)\nlast = off - 1\n",
            expected="import flydsl.expr as fx\n"
                     "off = fx.Index(x)\nlast = off - 1\n",
            message="unsafe: fx.Index's operators and kind differ from the raw value's at `-` on line 5",
            unsafe=True,
        ),
        # Compared: ArithValue compares signed (slt), fx.Index unsigned (ult).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(x: fx.Int32, n):\n"
            "    i = arith.index_cast(T.index, x)\n"
            "    fx.printf(fx.make_layout(i, 1) if n else i < n)\n",
            expected="import flydsl.expr as fx\n"
                     "def f(x: fx.Int32, n):\n"
                     "    i = fx.Index(x)\n"
                     "    fx.printf(fx.make_layout(i, 1) if n else i < n)\n",
            message="`comparison` on line 6",
            unsafe=True,
        ),
        # ... also after arithmetic (aiter's moe_m_tile_map.py: "scf.for must be a Value").
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import scf\n"
            "def k(n, c0, c1):\n"
            "    trips = (arith.index_cast(T.index, n) + arith.index(63)) // arith.index(64)\n"
            "    return scf.ForOp(c0, trips, c1)\n",
            expected="from flydsl._mlir.dialects import scf\nimport flydsl.expr as fx\n"
            "def k(n, c0, c1):\n"
            "    trips = (fx.Index(n) + fx.Index(63)) // fx.Index(64)\n"
            "    return scf.ForOp(c0, trips.ir_value(), c1)\n",
            unsafe=True,
            count=3,
            message="`.ir_value()` at the raw boundaries: line 6",
        ),
        # `x += c` rebinds x, and its later uses see the fx value. In aiter's moe gemm1 the
        # sum goes to a helper in another file that index_casts only raw values; FlyDSL 0.3.1
        # crashed on an fx.Index there.
        Invalid(
            "from flydsl.expr import arith\nfrom .layout_utils import crd2idx\n"
            "def f(base, layout):\n    k0 = base // 64\n    k0 += arith.constant(2, index=True)\n"
            "    return crd2idx((k0, 0), layout)\n",
            expected=None,
            message="no fix: `+=` on line 5 may have a Python number on the left",
        ),
        # A raw builder needs an ir.Value, also through a helper of the file.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import scf\n"
            "def loop(lo, hi):\n"
            "    return scf.for_(lo, hi, 1)\n"
            "def k(n):\n"
            "    hi = arith.index_cast(T.index, n)\n"
            "    loop(0, hi)\n",
            expected="from flydsl._mlir.dialects import scf\nimport flydsl.expr as fx\n"
            "def loop(lo, hi):\n"
            "    return scf.for_(lo, hi, 1)\n"
            "def k(n):\n"
            "    hi = fx.Index(n)\n"
            "    loop(0, hi.ir_value())\n",
            unsafe=True,
            message="`.ir_value()` at the raw boundaries: line 8",
        ),
        # After a raw left operand the result stays raw (an ArithValue takes the fx operand):
        # nothing to add there. The left operand's own fix follows its result.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import scf\n"
            "def k(n, c0, c1):\n"
            "    trips = arith.index_cast(T.index, n) * arith.index(4)\n"
            "    return scf.ForOp(c0, trips, c1)\n",
            expected="from flydsl._mlir.dialects import scf\nimport flydsl.expr as fx\n"
            "def k(n, c0, c1):\n"
            "    trips = fx.Index(n) * fx.Index(4)\n"
            "    return scf.ForOp(c0, trips.ir_value(), c1)\n",
            unsafe=True,
            count=2,
        ),
        # A left operand that is an IR value on every path (here a raw value every caller of
        # the helper passes) keeps the result's kind: nothing to add (aiter's mixed MoE).
        Invalid(
            "from flydsl.expr import arith, gpu\nfrom flydsl._mlir.dialects import scf\n"
            "def k(c0, c1):\n    def tile(base):\n"
            "        return scf.ForOp(c0, base * arith.constant(4, index=True), c1)\n"
            "    tile(gpu.block_id(\"x\"))\n",
            expected="from flydsl.expr import gpu\nfrom flydsl._mlir.dialects import scf\nimport flydsl.expr as fx\n"
            "def k(c0, c1):\n    def tile(base):\n"
            "        return scf.ForOp(c0, base * fx.Index(4), c1)\n"
            "    tile(gpu.block_id(\"x\"))\n",
            unsafe=True,
        ),
        # A kind-keeping fx.arith helper types its result like its first operand: beside it
        # the value is unwrapped and the result is as it was (FlyDSL's layout_utils.py).
        Invalid(
            "from flydsl.expr import arith\n"
            "def f(val):\n    return arith.shrui(val, arith.index(2))\n",
            expected="from flydsl.expr import arith\nimport flydsl.expr as fx\n"
            "def f(val):\n    return arith.shrui(val, fx.Index(2))\n",
            unsafe=True,
        ),
        # An ArithValue method fx values lack gets the raw value.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def k(n):\n"
            "    return arith.index_cast(T.index, n).index_cast(T.i32)\n",
            expected="from flydsl.expr.typing import T\nimport flydsl.expr as fx\n"
            "def k(n):\n"
            "    return fx.Index(n).ir_value().index_cast(T.i32)\n",
            unsafe=True,
        ),
        # A helper that takes fx values as well is handed the fx value.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import scf\n"
            "def tile(x):\n"
            "    return fx.make_layout(x, 1)\n"
            "def k(n):\n"
            "    hi = arith.index_cast(T.index, n)\n"
            "    scf.for_(0, hi, 1)\n"
            "    return tile(hi)\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\n"
            "def tile(x):\n"
            "    return fx.make_layout(x, 1)\n"
            "def k(n):\n"
            "    hi = fx.Index(n)\n"
            "    scf.for_(0, hi.ir_value(), 1)\n"
            "    return tile(hi)\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as _fx\nfrom flydsl.expr import arith as _arith\n"
            "n = _arith.index(16)\nm = _arith.constant(8, index=True)\n",
            expected="import flydsl.expr as _fx\n"
                     "n = _fx.Index(16)\n"
                     "m = _fx.Index(8)\n",
            count=2,
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl._mlir import ir\n"
            "def f(x):\n    return fx.make_layout(arith.index_cast(ir.IndexType.get(), x), 1)\n",
            expected="import flydsl.expr as fx\n"
                     "def f(x):\n    return fx.make_layout(fx.Index(x), 1)\n",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.typing import T\nv = fx.index_cast(T.i64, x)\n",
            expected=None,
            message="deprecated",
        ),
    ]

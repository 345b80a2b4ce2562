import ast

from flydsl_ls.analysis import fxtypes as T
from flydsl_ls.analysis.rewrite import replacement_text
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

ARITH_VALUE = "fx.arith.ArithValue"


class ArithValueWrapper(Rule):
    """
    `ArithValue(x)` wraps a value so that Python operators work on it. fx values
    (`fx.Int32`, `fx.Float32`, `fx.Vector`, ...) already overload `+ - * / % << >> == <`,
    so the wrapper is noise on them; `ArithValue` itself is deprecated in
    `flydsl.expr.arith` and `flydsl.expr.utils.arith` (both homes are recognised, under
    any alias).

    When `x` is already an fx value the wrapper is dropped (safe). When `x` is a raw
    `ir.Value` (a dialect op result, `gpu.thread_id(...)`, `.ir_value()`), wrap it once
    where it is defined, e.g. `v = fx.Float32(raw)`, instead of at every use. When the
    type of `x` cannot be inferred, dropping the wrapper is offered as an unsafe fix.
    """

    code = "FLY101"
    name = "arith-value-wrapper"
    summary = "`ArithValue(x)` wrapper around a value"
    replacement = "the fx value itself; wrap a raw ir.Value once at its source (`fx.Float32(raw)`)"
    fix_safety = "safe when x's type is known, else unsafe"
    fix_title = "Remove the ArithValue wrapper"
    example_before = "acc = ArithValue(val) + peer"
    example_after = "acc = val + peer  # val is already fx.Float32"

    def visit_Call(self, node: ast.Call) -> None:
        if self.model.resolve(node.func) != ARITH_VALUE:
            return
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            self.report(node, "`ArithValue(...)` is deprecated: use fx typed values")
            return
        inner = node.args[0]
        kind = self.model.type_of(inner)
        text = replacement_text(self.model, inner, node, self.ctx.parent)
        if kind.is_typed:
            self.report(
                node,
                f"`ArithValue(...)` around a value that is already `{kind.name}`: drop the wrapper",
                fix=self.replace(node, text, self.fix_title),
            )
        elif kind.is_raw:
            where = f" ({kind.origin}, line {kind.line})" if kind.line else ""
            self.report(
                node,
                f"`ArithValue(...)` around a raw ir.Value{where}: wrap it once at its source "
                "with an fx type (e.g. `fx.Float32(raw)`)",
            )
        elif kind.known:
            self.report(node, f"`ArithValue(...)` around a {kind.name}: use an fx type instead")
        else:
            self.report(
                node,
                "`ArithValue(...)` is deprecated: fx values already support operators",
                fix=self.replace(node, text, self.fix_title, safe=False),
            )

    VALID = [
        Valid("import flydsl.expr as fx\nx = fx.Int32(3) + 1\n"),
        Valid("from mylib import ArithValue\ny = ArithValue(x)\n"),
        Valid('from flydsl.expr.arith import ArithValue\ns = "ArithValue(x)"  # ArithValue(x)\n'),
        Valid("from flydsl.expr.arith import ArithValue\nok = isinstance(v, ArithValue)\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(val: fx.Float32, peer):\n    return ArithValue(val) + peer\n",
            expected="import flydsl.expr as fx\n"
                     "def f(val: fx.Float32, peer):\n"
                     "    return val + peer\n",
            line=4,
            column=12,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.utils.arith import ArithValue as _AV\n"
            "tid = fx.thread_idx.x\nlane = _AV(tid) % 64\n",
            expected="import flydsl.expr as fx\n"
                     "tid = fx.thread_idx.x\n"
                     "lane = tid % 64\n",
            message="already `fx.Int32`",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "a = fx.Int32(1)\nb = fx.Int32(2)\nc = arith.ArithValue(a + b) * 2\n",
            expected="import flydsl.expr as fx\n"
                     "a = fx.Int32(1)\n"
                     "b = fx.Int32(2)\n"
                     "c = (a + b) * 2\n",
        ),
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b):\n    s = std_arith.addf(a, b)\n    return arith.ArithValue(s) * 2\n",
            expected=None,
            message="raw ir.Value",
        ),
        Invalid(
            "from flydsl.expr.arith import ArithValue\ndef f(v):\n    return ArithValue(v) + 1\n",
            expected="def f(v):\n"
                     "    return v + 1\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as fx\ndef f(a: fx.Float32):\n    return fx.arith.ArithValue(a)\n",
            expected="import flydsl.expr as fx\ndef f(a: fx.Float32):\n    return a\n",
        ),
    ]

import ast

from flydsl_ls.analysis.model.diagnostic import Severity
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.rules import _raw_dialect_support as S
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

# flydsl.expr.math.__all__ (FlyDSL 0.5.0): typed wrappers with the raw ops' positional
# operands, re-exported on fx. fma and absf have the guide's own spelling (fx.fma, fx.absf).
FX_MATH = {
    "absf", "ceil", "floor", "trunc", "round", "roundeven", "exp", "exp2", "expm1", "log",
    "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "sincos",
    "absi", "ctlz", "cttz", "ctpop", "powf", "fpowi", "ipowi", "atan2", "copysign", "fma",
    "clampf", "isnan", "isinf", "isfinite", "isnormal",
}
TOP_LEVEL = {"fma", "absf"}
# Intrinsics emitted by hand with `llvm.call_intrinsic(ty, name, [x], [], [])` that FlyDSL
# wraps (in 0.3.1 and 0.5.0): name -> (wrapper, whether it takes the result type first).
CALL_INTRINSIC = "mlir.llvm.call_intrinsic"
WRAPPED_INTRINSICS = {
    "llvm.amdgcn.exp2.f32": ("rocdl.exp2", True),
    "llvm.amdgcn.rcp.f32": ("rocdl.rcp", True),
    "llvm.fabs.f32": ("math.absf", False),
}
INTEGER_OPS = {"absi", "ctlz", "cttz", "ctpop", "ipowi"}


class RawMath(Rule):
    """
    Raw `math` dialect ops (`flydsl._mlir.dialects.math`, also spelled `mlir_math`,
    `math_dialect`, or `fx.math.math`): `math.fma(a, b, c)`, `math.absf(v)`,
    `math.exp2(x)`, ... FlyDSL wraps each of them in `flydsl.expr.math`: write
    `fx.fma(a, b, c)` (it keeps the fused rounding), `fx.absf(v)`, and `fx.math.<op>(...)`
    for the rest. Python's own `math` (`import math`, `host_math`) and the modern
    `fx.math`/`fmath` are never flagged; an op without an fx wrapper is reported as
    information and kept.

    Every fix is unsafe. The fx wrappers take the ambient fastmath when none is passed
    (an `arith.fastmath(...)` block, or the `fastmath`/`fast_fp_math` compile hints a
    launcher sets, possibly in another file), and they return typed values for typed
    operands; the raw op carries no fastmath and returns a raw value. A raw op called
    with an explicit `fastmath=` is a keep case (information, no fix). A separate
    `a * b + c` is never rewritten to `fx.fma`: that would change the rounding. Calls
    inside the legacy helper layers themselves (aiter's `kernels/vector.py`, ...) are not
    reported.
    """

    code = "FLY304"
    name = "raw-math"
    summary = "raw `math` dialect ops (`math.fma`, `math.absf`, `math.exp2`, ...), not Python's `math`"
    replacement = "`fx.fma(a, b, c)`, `fx.absf(v)`, `fx.math.<op>(...)`"
    fix_safety = "unsafe (the fx wrappers inherit the ambient fastmath); none with an explicit fastmath="
    fix_title = "Use the fx.math wrapper"
    example_before = "y = mlir_math.fma(a, b, c)"
    example_after = "y = fx.fma(a, b, c)"

    callees = Callees(symbols=frozenset({CALL_INTRINSIC}), modules=frozenset({"mlir.math"}))

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol is None:
            return
        if symbol == CALL_INTRINSIC:
            self._intrinsic(node)
            return
        module, _, op = symbol.rpartition(".")
        if module != "mlir.math" or not op[:1].isalpha():
            return
        if S.is_shim_definition(self.ctx.path):
            return
        spelled = f"{self.text(node.func)}(...)"
        if op[:1].isupper():
            if op.endswith("Op"):
                self.report(node, f"`{spelled}` builds a raw math op: use the `fx.math` wrapper")
            return
        if op not in FX_MATH:
            self.report(
                node,
                f"`{spelled}` is a raw math op with no fx wrapper: keep it",
                severity=Severity.INFORMATION,
            )
            return
        target = op if op in TOP_LEVEL else f"math.{op}"
        fastmath = S.explicit_fastmath(node)
        if fastmath is not None:
            self.report(
                node,
                f"`{spelled}` carries `fastmath={self.text(fastmath.value)}`: keep the explicit op "
                f"(or write `fx.{target}(..., fastmath=...)` by hand)",
                severity=Severity.INFORMATION,
            )
            return
        message = f"`{spelled}` is a raw math op: use `fx.{target}(...)`"
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) or not node.args:
            self.report(node, message)
            return
        why = (
            "the wrapper returns a typed value for typed operands"
            if op in INTEGER_OPS
            else "the wrapper picks up the ambient fastmath (`arith.fastmath(...)` blocks, the "
            "`fastmath`/`fast_fp_math` compile hints), the raw op does not"
        )
        fix = None
        if not S.comments_dropped(self, node, list(node.args)):
            fx, imports = fx_alias(self.model)
            text = f"{fx}.{target}({', '.join(self.text(a) for a in node.args)})"
            fix = self.replace(node, text, f"Replace with {fx}.{target}(...)", safe=False, extra=imports)
        self.report(node, f"{message} (unsafe: {why})", fix=fix)

    def _intrinsic(self, node: ast.Call) -> None:
        """`llvm.call_intrinsic(f32, "llvm.amdgcn.exp2.f32", [x], [], [])` ->
        `fx.rocdl.exp2(f32, x)`: FlyDSL's op lowers to the same intrinsic call."""
        args = node.args
        name = args[1].value if len(args) > 1 and isinstance(args[1], ast.Constant) else None
        if name not in WRAPPED_INTRINSICS:
            return
        wrapper, typed = WRAPPED_INTRINSICS[name]
        spelled = f"{self.text(node.func)}(..., \"{name}\", ...)"
        message = f"`{spelled}` hand-emits an intrinsic FlyDSL wraps: use `fx.{wrapper}(...)`"
        empty = all(isinstance(a, (ast.List, ast.Tuple)) and not a.elts for a in args[3:])
        operand = args[2].elts if len(args) > 2 and isinstance(args[2], (ast.List, ast.Tuple)) else None
        if node.keywords or len(args) != 5 or not empty or operand is None or len(operand) != 1:
            self.report(node, f"{message} (no fix: only `call_intrinsic(ty, name, [x], [], [])` is rewritten)")
            return
        fx, imports = fx_alias(self.model)
        parts = [self.text(args[0]), self.text(operand[0])] if typed else [self.text(operand[0])]
        why = (
            "the MLIR has FlyDSL's `rocdl` op instead of the call, lowered to the same intrinsic"
            if typed
            else "`math.absf` takes the ambient fastmath, the call carries none"
        )
        fix = None
        if not S.comments_dropped(self, node, [args[0], operand[0]]):
            text = f"{fx}.{wrapper}({', '.join(parts)})"
            fix = self.replace(node, text, f"Replace with {fx}.{wrapper}(...)", safe=False, extra=imports)
        self.report(node, f"{message} (unsafe: {why})", fix=fix)

    VALID = [
        Valid("import math\nn = math.ceil(x / 4)\nl = math.log2(n)\n"),
        Valid("import math as host_math\ny = host_math.exp2(3)\n"),
        Valid(
            "import flydsl.expr as fx\nfrom flydsl.expr import math as fmath\n"
            "def f(a, b, c):\n    return fx.fma(a, b, c), fx.absf(a), fx.math.exp2(a), fmath.rsqrt(b)\n"
        ),
        # a * b + c stays as written (never fx.fma); text is never flagged.
        Valid(
            "from flydsl._mlir.dialects import math as mlir_math\n"
            "# mlir_math.fma(a, b, c)\ndef f(a, b, c):\n    return a * b + c, 'mlir_math.absf(x)'\n"
        ),
        Valid("from flydsl._mlir.dialects import math as mlir_math\nflags = mlir_math.FmaOp\n"),
        # Intrinsics FlyDSL does not wrap stay as they are.
        Valid("from flydsl._mlir.dialects import llvm\nllvm.call_intrinsic(t, 'llvm.amdgcn.cvt.pk.bf16.f32', [a, b], [], [])\n"),
    ]
    INVALID = [
        Invalid(
            "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(x, w, v):\n    f32 = ir.F32Type.get()\n"
            "    e = llvm.call_intrinsic(f32, \"llvm.amdgcn.exp2.f32\", [x], [], [])\n"
            "    r = llvm.call_intrinsic(\n        f32, \"llvm.amdgcn.rcp.f32\", [w], [], []\n    )\n"
            "    a = llvm.call_intrinsic(f32, \"llvm.fabs.f32\", [v], [], [])\n    return e, r, a\n",
            expected="from flydsl._mlir import ir\nimport flydsl.expr as fx\n"
            "def f(x, w, v):\n    f32 = ir.F32Type.get()\n"
            "    e = fx.rocdl.exp2(f32, x)\n    r = fx.rocdl.rcp(f32, w)\n    a = fx.math.absf(v)\n    return e, r, a\n",
            unsafe=True,
            count=3,
            message="hand-emits an intrinsic FlyDSL wraps: use `fx.rocdl.exp2(...)`",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import math as mlir_math\n"
            "def f(a: fx.Float32, b: fx.Float32, c: fx.Float32):\n    return mlir_math.fma(a, b, c)\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Float32, b: fx.Float32, c: fx.Float32):\n    return fx.fma(a, b, c)\n",
            unsafe=True,
            line=4,
            column=12,
            message="fastmath",
        ),
        Invalid(
            "from flydsl._mlir.dialects import (\n    math as mlir_math,\n)\n"
            "def f(v, x):\n    return mlir_math.absf(v), mlir_math.exp2(x)\n",
            expected="import flydsl.expr as fx\n"
            "def f(v, x):\n    return fx.absf(v), fx.math.exp2(x)\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            "import flydsl.expr as fx\ndef f(x):\n    return fx.math.math.rsqrt(x)\n",
            expected="import flydsl.expr as fx\ndef f(x):\n    return fx.math.rsqrt(x)\n",
            unsafe=True,
        ),
        Invalid(
            "from flydsl._mlir.dialects import math\nfrom flydsl.expr import arith\n"
            "def f(x):\n    return math.exp2(x, fastmath=arith.FastMathFlags.fast)\n",
            expected=None,
            message="fastmath",
        ),
        Invalid(
            "from flydsl._mlir.dialects import math as math_dialect\n"
            "def f(a, b):\n    return math_dialect.FmaOp(a, b, b).result\n",
            expected=None,
        ),
        Invalid(
            "from flydsl._mlir.dialects import math as math_dialect\n"
            "def f(a):\n    return math_dialect.ctlz(a)\n",
            expected="import flydsl.expr as fx\ndef f(a):\n    return fx.math.ctlz(a)\n",
            unsafe=True,
            message="typed value",
        ),
    ]

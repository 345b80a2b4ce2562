import ast

from flydsl_ls.analysis.model.semantic import RAW_ID_CALLS, TYPED_INDEX_ACCESSORS, nodes_under
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

CONST_EXPR = {"fx.const_expr", "flyc.const_expr"}
# Calls whose result is a per-lane runtime value.
_RUNTIME_CALLS = RAW_ID_CALLS | {"fx.gpu.lane_id", "fx.lane_id", "fx.rocdl.wave_id", "fx.rocdl.lane_id"}


class ConstExprOnRuntime(Rule):
    """
    `const_expr(x)` tells FlyDSL's AST rewriter that `x` is known at compile time: the
    branch is decided by Python while tracing and only one side is emitted. Wrapping a
    runtime value (`fx.thread_idx.x`, `gpu.thread_id("x")`, lane arithmetic, any fx
    value) in it asks Python for the truth value of an IR value: the branch is not
    emitted as `scf.if`, so every lane takes the same side (guide §5). Use a plain
    `if cond:`, which the rewriter turns into `scf.if`.

    Flagged: `const_expr(...)` (any alias of `flydsl.expr.const_expr`) whose argument
    contains a thread/block/lane id, or whose type the model knows is an fx value, a
    raw `ir.Value` or an `ArithValue`. Diagnostic only: this is a bug, and which branch
    was meant is for the author to say.
    """

    code = "FLY502"
    name = "const-expr-on-runtime"
    summary = "`const_expr(...)` wrapping a runtime value (`thread_idx`, `gpu.thread_id`, lane math)"
    replacement = "a plain `if`"
    fix_safety = "none (it is a bug)"
    deprecated_tag = False
    example_before = "if const_expr(fx.thread_idx.x == 0):\n    fx.printf('lane 0')"
    example_after = "if fx.thread_idx.x == 0:\n    fx.printf('lane 0')"

    callees = Callees(symbols=frozenset(CONST_EXPR))

    def visit_Call(self, node: ast.Call) -> None:
        if self.model.resolve(node.func) not in CONST_EXPR or len(node.args) != 1:
            return
        arg = node.args[0]
        why = self._runtime(arg)
        if why is None:
            return
        self.report(
            node,
            f"`const_expr({self.text(arg)})` wraps a runtime value ({why}): the branch is decided "
            "once while tracing, not per lane; use a plain `if` (the rewriter builds `scf.if`)",
        )

    def _runtime(self, arg: ast.expr) -> str | None:
        for sub in nodes_under(arg):
            if isinstance(sub, ast.Attribute) and self.model.resolve(sub) in TYPED_INDEX_ACCESSORS:
                return f"`{ast.unparse(sub)}`"
            if isinstance(sub, ast.Call) and self.model.resolve(sub.func) in _RUNTIME_CALLS:
                return f"`{ast.unparse(sub.func)}(...)`"
        # Positive evidence only: a name or raw op whose value is a runtime fx/IR value
        # (`fx.Index(NPF)` of a Python constant is known while tracing).
        for sub in nodes_under(arg):
            if isinstance(sub, (ast.Name, ast.Call)):
                kind = self.model.type_of(sub)
                if kind.is_raw or (isinstance(sub, ast.Name) and (kind.is_typed or kind.name == "fx.Boolean")):
                    return f"`{ast.unparse(sub)}` is {kind.name}" + (f" ({kind.origin})" if kind.origin else "")
        return None

    VALID = [
        Valid(
            "from flydsl.expr import const_expr\n"
            "BLOCK = 256\n"
            "def k(flag, n: int):\n"
            "    if const_expr(flag and n > 4):\n"
            "        pass\n"
            "    if const_expr(BLOCK % 64 == 0):\n"
            "        pass\n"
        ),
        Valid("import flydsl.expr as fx\ndef k(n: fx.Int32):\n    if n > 0:\n        pass\n"),
        Valid("import flydsl.expr as fx\nNPF = 2\ndef k():\n    if fx.const_expr(fx.Index(NPF)):\n        pass\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\n"
            "def k():\n"
            "    if fx.const_expr(fx.thread_idx.x == 0):\n"
            "        fx.printf('lane 0')\n",
            line=3,
            column=8,
            message="fx.thread_idx.x",
        ),
        Invalid(
            "from flydsl.expr import const_expr, gpu\n"
            "def k():\n"
            "    lane = gpu.thread_id('x') % 64\n"
            "    if const_expr(gpu.thread_id('x') < 32):\n"
            "        pass\n",
            message="gpu.thread_id",
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "from flydsl.expr import const_expr as ce\n"
            "def k(n: fx.Int32):\n"
            "    big = n > 128\n"
            "    if ce(big):\n"
            "        pass\n",
            message="`big` is fx.Boolean",
        ),
    ]

import ast

from flydsl_ls.analysis.model.diagnostic import Applicability, Fix
from flydsl_ls.analysis.rules import _control_flow_support as cf
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid


class RuntimeIfInHelper(Rule):
    """
    FlyDSL turns a Python `if` on a runtime fx value into `scf.if` only inside functions
    its AST rewriter processes: `@flyc.kernel` / `@flyc.jit` functions and the functions
    nested in them. A plain module-level helper is run as ordinary Python even when a
    kernel calls it, so `if tid < n:` there asks Python for the truth value of an IR
    value instead of building a branch (guide §5). Give the helper a local `@flyc.jit`
    boundary: called while a kernel is being traced, a `@flyc.jit` function runs inline
    with its control flow rewritten. Do not call `ReplaceIfWithDispatch.scf_if_dispatch`
    by hand (FLY503).

    Flagged: an `if` whose condition the model knows is an fx boolean or fx scalar (a
    comparison of fx values, `fx.thread_idx.x`, ...) in a function that is not under a
    `@flyc.kernel` / `@flyc.jit`. `if const_expr(...)` and conditions on Python values
    are compile-time and never flagged.

    The fix (unsafe) adds `@flyc.jit` above the helper, with the file's alias for
    `flydsl.compiler` (or an added `import flydsl.compiler as flyc`). It is unsafe
    because a `@flyc.jit` function called outside a trace compiles and launches instead
    of running; methods get no fix.
    """

    code = "FLY501"
    name = "runtime-if-in-helper"
    summary = "a runtime `if` on an fx value inside a plain helper (not `@flyc.kernel`/`@flyc.jit`)"
    replacement = "a local `@flyc.jit` boundary"
    fix_safety = "unsafe"
    fix_title = "Add @flyc.jit"
    example_before = "def store_if(out, i: fx.Int32, n: fx.Int32):\n    if i < n:\n        out[i] = 0.0"
    example_after = "@flyc.jit\ndef store_if(out, i: fx.Int32, n: fx.Int32):\n    if i < n:\n        out[i] = 0.0"

    def visit_If(self, node: ast.If) -> None:
        function = cf.innermost_function(self.ctx.parents)
        if function is None or cf.rewritten(self.model, self.ctx.parents):
            return
        kind = self.model.type_of(node.test)
        if not kind.is_fx_scalar:
            return
        message = (
            f"runtime `if` on an fx value (`{self.text(node.test)}`: {kind.name}) in the plain helper "
            f"`{function.name}`: FlyDSL rewrites it into `scf.if` only under `@flyc.kernel`/`@flyc.jit`; "
            "add a local `@flyc.jit`"
        )
        edits = None if cf.is_method(function, self.ctx.parents) else cf.jit_decorator_edits(self.model, function)
        if edits is None:
            self.report(node.test, message)
            return
        fix = Fix(f"Add @flyc.jit to {function.name} (unsafe)", Applicability.UNSAFE, edits)
        self.report(node.test, message, fix=fix, statement=cf.function_range(self.model, function))

    VALID = [
        Valid(
            "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    def nested(i):\n"
            "        if fx.thread_idx.x < n:\n"
            "            out[i] = 0.0\n"
            "    nested(0)\n"
        ),
        Valid(
            "import flydsl.compiler as fc\nimport flydsl.expr as fx\n"
            "@fc.jit\n"
            "def helper(i: fx.Int32, n: fx.Int32):\n"
            "    if i < n:\n"
            "        pass\n"
        ),
        Valid(
            "import flydsl.expr as fx\n"
            "def helper(n: int, flag):\n"
            "    if n > 4:\n"
            "        pass\n"
            "    if fx.const_expr(flag):\n"
            "        pass\n"
        ),
    ]
    INVALID = [
        Invalid(
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "\n"
            "def store_if(out, i: fx.Int32, n: fx.Int32):\n"
            "    if i < n:\n"
            "        out[i] = 0.0\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "\n"
            "@flyc.jit\n"
            "def store_if(out, i: fx.Int32, n: fx.Int32):\n"
            "    if i < n:\n"
            "        out[i] = 0.0\n",
            unsafe=True,
            line=5,
            column=8,
            message="@flyc.jit",
        ),
        Invalid(
            # No flydsl.compiler import yet; an existing decorator stays below the new one.
            "import functools\n"
            "import flydsl.expr as fx\n"
            "\n"
            "@functools.lru_cache\n"
            "def lane0():\n"
            "    if fx.thread_idx.x == 0:\n"
            "        fx.printf('lane 0')\n",
            expected="import functools\n"
            "import flydsl.expr as fx\n"
            "import flydsl.compiler as flyc\n"
            "\n"
            "@flyc.jit\n"
            "@functools.lru_cache\n"
            "def lane0():\n"
            "    if fx.thread_idx.x == 0:\n"
            "        fx.printf('lane 0')\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "class Epilogue:\n"
            "    def store(self, i: fx.Int32, n: fx.Int32):\n"
            "        if i < n:\n"
            "            pass\n",
            expected=None,
        ),
    ]

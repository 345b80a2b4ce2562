import ast

from flydsl_ls.analysis.model.semantic import nodes_under
from flydsl_ls.analysis.rules import _control_flow_support as cf
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class JitCallInLoop(Rule):
    """
    Calling a `@flyc.jit` launcher re-runs its per-call dispatch every time: DLPack
    conversion, argument marshalling and the compile-cache lookup. In a host loop (a
    benchmark, a per-layer or per-expert dispatch) that overhead is paid on every
    iteration (guide §9). Compile once and fast-dispatch: `_run_compiled(exe, *args)`
    from the project's `tensor_shim` caches the `CompiledFunction` on first use, and
    flat scalar/pointer arguments (`ptr_arg(t)`, strides, sizes, stream) bypass DLPack.

    Flagged: a direct call of a launcher (a function defined in the same file with
    `@flyc.jit` whose body calls `.launch(...)`) from inside a `for`/`while` loop or
    comprehension of host code. `@flyc.jit` device helpers, which run inline while a
    kernel is traced, are not launchers. Calls made while a kernel
    or jit function is traced (inside `@flyc.kernel`/`@flyc.jit` bodies) run inline and
    are not flagged. Diagnostic only: argument order and types must match the compiled
    signature, and one-shot cold launches do not need it.
    """

    code = "FLY701"
    name = "jit-call-in-loop"
    summary = "a `@flyc.jit` function called directly inside a loop"
    replacement = "compile once, then `_run_compiled(exe, ...)`"
    fix_safety = "none"
    deprecated_tag = False
    example_before = "for _ in range(iters):\n    launch(a, b, c)"
    example_after = "for _ in range(iters):\n    _run_compiled(launch, ptr_arg(a), ptr_arg(b), ptr_arg(c), stream)"

    def visit_Call(self, node: ast.Call) -> None:
        if not isinstance(node.func, ast.Name):
            return
        binding = self.model.binding_of(node.func)
        if binding is None or binding.kind != "def":
            return
        if not any(cf.decorator_symbol(self.model, d) == "flyc.jit" for d in binding.node.decorator_list):
            return
        if not _launches(binding.node):
            return  # a traced device helper, not a launcher
        if cf.rewritten(self.model, self.ctx.parents) or not self._in_loop():
            return
        self.report(
            node,
            f"`@flyc.jit` function `{node.func.id}` called directly inside a loop: every call re-runs "
            "dispatch (DLPack, marshalling, cache lookup); compile once and call `_run_compiled(exe, ...)` "
            "from tensor_shim",
        )

    def _in_loop(self) -> bool:
        for parent in reversed(self.ctx.parents):
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return False
            if isinstance(parent, _LOOPS):
                return True
        return False

    VALID = [
        Valid(
            # A @flyc.jit device helper called in a helper's loop: inline at trace time.
            "import flydsl.compiler as flyc\n"
            "@flyc.jit\n"
            "def copy_chunk(i):\n"
            "    return i\n"
            "def copy_all(n):\n"
            "    for i in range(n):\n"
            "        copy_chunk(i)\n"
        ),
        Valid(
            "import flydsl.compiler as flyc\n"
            "@flyc.jit\n"
            "def launch(a):\n"
            "    pass\n"
            "def run(a):\n"
            "    launch(a)\n"
        ),
        Valid(
            # Traced calls inside a jit body are inline, not launches.
            "import flydsl.compiler as flyc\n"
            "@flyc.jit\n"
            "def step(x):\n"
            "    return x\n"
            "@flyc.jit\n"
            "def launch(a):\n"
            "    for i in range(4):\n"
            "        step(a)\n"
        ),
        Valid(
            "import flydsl.compiler as flyc\n"
            "@flyc.jit\n"
            "def launch(a):\n"
            "    pass\n"
            "def run(a, n):\n"
            "    for _ in range(n):\n"
            "        def later():\n"
            "            launch(a)\n"
        ),
    ]
    INVALID = [
        Invalid(
            "import flydsl.compiler as flyc\n"
            "@flyc.jit\n"
            "def launch(a, b):\n"
            "    kernel(a, b).launch(grid=(1, 1, 1), block=(64, 1, 1))\n"
            "def bench(a, b, iters):\n"
            "    for _ in range(iters):\n"
            "        launch(a, b)\n",
            line=7,
            column=9,
            message="_run_compiled",
        ),
        Invalid(
            "from flydsl import compiler as fc\n"
            "@fc.jit()\n"
            "def launch(x):\n"
            "    kernel(x).launch(grid=(1, 1, 1), block=(64, 1, 1))\n"
            "def run_all(xs):\n"
            "    while xs:\n"
            "        launch(xs.pop())\n"
            "    return [launch(x) for x in xs]\n",
            count=2,
        ),
    ]


def _launches(function: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "launch"
        for n in nodes_under(function)
    )

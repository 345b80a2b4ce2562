import ast

from flydsl_ls.analysis.model.diagnostic import Applicability, Edit, Fix
from flydsl_ls.analysis.model.rewrite import module_alias
from flydsl_ls.analysis.model.statements import block_of, delete_statement
from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.analysis.rules._control_flow_support import is_jit_function
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

_MODULE = "flyc.ast_rewriter"
PRIVATE_ENTRY_POINTS = {
    f"{_MODULE}.ASTRewriter.transform": "`ASTRewriter.transform(fn)`",
    f"{_MODULE}.ReplaceIfWithDispatch.scf_if_dispatch": "`ReplaceIfWithDispatch.scf_if_dispatch`",
}
_ENTRY_POINT_NAMES = {symbol.rsplit(".", 1)[-1] for symbol in PRIVATE_ENTRY_POINTS}
PRIVATE_BASES = {
    f"{_MODULE}.{name}"
    for name in ("ASTRewriter", "Transformer", "ReplaceIfWithDispatch", "InsertEmptyYieldForSCFFor", "RewriteBoolOps")
}


NO_FIX = "`@flyc.jit` goes on the function's definition, and the code that calls the rewritten function changes with it"


class PrivateRewriter(Rule):
    """
    `flydsl.compiler.ast_rewriter` is FlyDSL's private machinery behind `@flyc.kernel` and
    `@flyc.jit`: it is not in any `__all__` and changes between releases. Calling
    `ASTRewriter.transform(fn)` by hand, calling (or aliasing, as in
    `scf_if_dispatch = ReplaceIfWithDispatch.scf_if_dispatch`) the dispatch helper, or
    subclassing its transformers (a private `_IfOnlyASTRewriter`) re-implements what the
    public decorator does (guide §5). Use `@flyc.jit` on the function instead.

    `def f(...)` followed in the same block of a function (a builder) by
    `f = ASTRewriter.transform(f)` gets `@flyc.jit`
    on the def (unsafe: `@flyc.jit` also handles the arguments of a call made outside a
    trace; inside a kernel, FlyDSL's moe_gemm_2stage traces to the same IR). Before deleting
    a private rewriting decorator, search every import and decorator use across the
    project: decorators run at import time; the rest is diagnostic only.
    """

    code = "FLY503"
    name = "private-rewriter"
    summary = "`ASTRewriter.transform`, `ReplaceIfWithDispatch.scf_if_dispatch`, private AST-rewriting decorators"
    replacement = "`@flyc.jit`"
    fix_safety = "unsafe for `f = ASTRewriter.transform(f)` right after `def f` (`@flyc.jit` on the def); none otherwise"
    example_before = "helper = ASTRewriter.transform(helper)"
    example_after = "@flyc.jit\ndef helper(...): ..."
    symbol_reads = True  # visit_Name: an import or an alias may name the API bare

    def visit_Attribute(self, node: ast.Attribute) -> None:
        # Its symbol ends in its attribute (or a module's name): only these can be one.
        if isinstance(node.ctx, ast.Load) and node.attr in _ENTRY_POINT_NAMES:
            self._check(node)

    def visit_Name(self, node: ast.Name) -> None:
        # Aliases: `scf_if_dispatch = ReplaceIfWithDispatch.scf_if_dispatch` then calls. The
        # engine hands over only the reads that may name a symbol (``symbol_reads``): not a
        # parameter, which resolves to a module passed in, never to one.
        self._check(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            symbol = self.model.resolve(base)
            if symbol in PRIVATE_BASES:
                self.report(
                    node,
                    f"`{node.name}` subclasses FlyDSL's private `{symbol.rsplit('.', 1)[-1]}`: "
                    "a private AST rewriter; decorate the functions with `@flyc.jit` instead "
                    f"(no fix: {NO_FIX})",
                )
                return

    def _check(self, node) -> None:
        symbol = self.model.resolve(node)
        what = PRIVATE_ENTRY_POINTS.get(symbol)
        if what is None:
            return
        function = self.ctx.enclosing_function()
        if function is not None and is_jit_function(self.model, function) and symbol.endswith("scf_if_dispatch"):
            # Already traced: its own `if` on a runtime value becomes this very dispatch.
            self.report(
                node,
                f"{what} is FlyDSL's private AST rewriter: `{function.name}` is already traced "
                "(`@flyc.jit`/`@flyc.kernel`), so write a Python `if` on the condition there (no fix: "
                "the branches are callables over carried state, which the `if` names as variables)",
            )
            return
        fix = self._decorated(node) if symbol.endswith("transform") else None
        self.report(
            node,
            f"{what} is FlyDSL's private AST rewriter: decorate the function with `@flyc.jit` instead"
            + (" (unsafe: `@flyc.jit` also handles the arguments of a call made outside a trace)" if fix else f" (no fix: {NO_FIX})"),
            fix=fix,
        )

    def _decorated(self, node) -> Fix | None:
        """`def f(...)` then, next in the same block, `f = ASTRewriter.transform(f)` ->
        `@flyc.jit` on `def f` (the assignment goes): the kernel built by FlyDSL's
        moe_gemm_2stage gemm1 traces to the same MLIR, LLVM IR and ISA."""
        call = self.ctx.parent
        statement = self.ctx.parents[-2] if len(self.ctx.parents) > 1 else None
        if not (
            isinstance(call, ast.Call) and call.func is node and len(call.args) == 1 and not call.keywords
            and isinstance(call.args[0], ast.Name) and isinstance(statement, ast.Assign)
            and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == call.args[0].id
        ):
            return None
        found = block_of(self.model.tree, statement)
        if found is None or isinstance(found[0], ast.Module):
            return None  # the def is another top-level statement, analysed apart while typing
        body = found[1]
        index = next((i for i, s in enumerate(body) if s is statement), 0)
        function = body[index - 1] if index else None
        if not isinstance(function, ast.FunctionDef) or function.name != call.args[0].id or function.decorator_list:
            return None
        alias, imports = module_alias(self.model, "flydsl.compiler", "flyc")
        start = self.ctx.range(function).start
        decorator = Edit(Range(start, start), f"@{alias}.jit\n{self.model.index.indentation(start.line)}")
        deletion = delete_statement(self.model, statement)
        lines = self.model.index
        end = deletion.range.end.line
        if (
            deletion.content == "" and 0 < deletion.range.start.line and end < len(lines.lines) - 1
            and not lines.line_text(deletion.range.start.line - 1).strip() and not lines.line_text(end).strip()
        ):
            # Blank lines on both sides: one of them goes too.
            deletion = Edit(Range(deletion.range.start, Position(end + 1, 0)), "")
        return Fix(
            title="Decorate with @flyc.jit (unsafe)",
            applicability=Applicability.UNSAFE,
            edits=(*imports, decorator, deletion),  # an import landing before the def comes first
        )

    VALID = [
        Valid(
            "import flydsl.compiler as flyc\n"
            "@flyc.jit\n"
            "def helper(x):\n"
            "    return x\n"
        ),
        Valid("# ASTRewriter.transform(fn) in a comment\ns = 'ReplaceIfWithDispatch.scf_if_dispatch'\n"),
        Valid("class ASTRewriter:\n    @staticmethod\n    def transform(f):\n        return f\nASTRewriter.transform(print)\n"),
    ]
    INVALID = [
        Invalid(
            "from flydsl.compiler.ast_rewriter import ASTRewriter\n"
            "def helper(x):\n"
            "    return x\n"
            "helper = ASTRewriter.transform(helper)\n",
            line=4,
            column=10,
            message="instead (no fix: `@flyc.jit` goes on the function's definition",
        ),
        # Nested in a builder (FlyDSL's moe_gemm_2stage): the same IR, measured.
        Invalid(
            "import flydsl.compiler as flyc\nfrom flydsl.compiler.ast_rewriter import ASTRewriter\n"
            "def build():\n"
            "    def _gemm(a):  # the main loop\n"
            "        return a\n\n"
            "    _gemm = ASTRewriter.transform(_gemm)\n\n"
            "    @flyc.kernel\n    def k(a):\n        _gemm(a)\n    return k\n",
            expected="import flydsl.compiler as flyc\n"
            "def build():\n"
            "    @flyc.jit\n    def _gemm(a):  # the main loop\n"
            "        return a\n\n"
            "    @flyc.kernel\n    def k(a):\n        _gemm(a)\n    return k\n",
            unsafe=True,
        ),
        # Not right after its definition, or not a plain name: no fix.
        Invalid(
            "from flydsl.compiler.ast_rewriter import ASTRewriter\n"
            "def helper(x):\n    return x\nprint(helper)\nhelper = ASTRewriter.transform(helper)\n",
            expected=None,
            message="(no fix:",
        ),
        Invalid(
            "from flydsl.compiler.ast_rewriter import ReplaceIfWithDispatch\n"
            "scf_if_dispatch = ReplaceIfWithDispatch.scf_if_dispatch\n"
            "def f(c, then_fn):\n"
            "    scf_if_dispatch(c, then_fn)\n",
            count=2,
            line=2,
        ),
        # Inside a function already under @flyc.jit: a Python `if`, not another decorator.
        Invalid(
            "import flydsl.compiler as flyc\n"
            "from flydsl.compiler.ast_rewriter import ReplaceIfWithDispatch\n"
            "def outer(c, a, b):\n"
            "    @flyc.jit\n"
            "    def inner(c, a, b):\n"
            "        return ReplaceIfWithDispatch.scf_if_dispatch(c, a, b)\n"
            "    return inner(c, a, b)\n",
            line=6,
            message="`inner` is already traced (`@flyc.jit`/`@flyc.kernel`), so write a Python `if` on the condition there",
        ),
        Invalid(
            "import flydsl.compiler.ast_rewriter as ar\n"
            "class _IfOnlyASTRewriter(ar.ASTRewriter):\n"
            "    transformers = []\n",
            message="_IfOnlyASTRewriter",
        ),
        Invalid(
            "from flydsl.compiler.ast_rewriter import ASTRewriter\n"
            "def if_only(fn):\n"
            "    return ASTRewriter.transform(fn)\n"
            "@if_only\n"
            "def helper(x):\n"
            "    return x\n",
            line=3,
        ),
    ]

"""FLY302 raw-scf: finds raw `scf` builders and offers the Python control flow the rewriter builds them from."""

import ast

from flydsl_ls.analysis.model.diagnostic import Applicability, Edit, Fix
from flydsl_ls.analysis.model.scopes import unbound_name
from flydsl_ls.analysis.model.statements import shares_lines
from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.analysis.rules import _control_flow_support as cf
from flydsl_ls.analysis.rules.base import Rule
from flydsl_ls.analysis.rules.fly302.cases import INVALID, VALID
from flydsl_ls.analysis.rules.fly302.if_migration import IfMigration
from flydsl_ls.analysis.rules.fly302.loop_migration import LoopMigration
from flydsl_ls.analysis.rules.fly302.while_migration import CONDITION_OP, WHILE_OP, WhileMigration
from flydsl_ls.analysis.rules.fly302.syntax import (
    FOR_OP,
    IF_OP,
    INSERTION_POINT,
    YIELD_OP,
    NoFix,
    bound_in,
    const_expr_test,
    empty_list,
    outside_entered,
    within,
)


class PlainControlFlow(dict[int, "str | None"]):
    """Per model: id(helper) -> the first control flow `@flyc.jit` would change in it."""

    def __init__(self, model):
        super().__init__()


class RawScf(IfMigration, LoopMigration, WhileMigration, Rule):
    """
    Raw `scf` builders (`scf.IfOp`, `scf.ForOp`, `scf.WhileOp`/`scf.ConditionOp`, `scf.YieldOp`, and local `_if_then(if_op)`
    context managers around them) hand-build what FlyDSL's AST rewriter builds from plain
    Python control flow inside `@flyc.kernel` / `@flyc.jit` functions (guide §3 scf, §5):

    - `with _if_then(scf.IfOp(cond)):` / `with ir.InsertionPoint(if_op.then_block):`
      (and an `else_block` twin) become `if cond:` / `else:`. The `_raw(...)`,
      `arith.unwrap(...)`, `ArithValue(...)` around the condition are dropped; the fix is
      offered when the condition is a typed fx boolean (a comparison of fx values) or a
      raw `ir.Value` (`arith.cmpi(...)`, `arith.andi(...)`: the rewriter dispatches any
      `ir.Value` condition to `scf.if`, as the raw op was given that `i1`). On anything
      else a Python `if` could be decided while tracing, so no fix.
    - `loop = scf.ForOp(lo, hi, step, [init...])` + `with ir.InsertionPoint(loop.body):`
      becomes `for loop_iv, loop_state in range(lo, hi, step, init=[init...]):` — the
      pinned 0.3.4.1 contract: `range(..., init=)` emits `scf.for` with the carried values,
      index bounds unchanged. `loop.induction_variable` becomes `loop_iv`,
      `loop.inner_iter_args[k]` becomes `loop_state[k]`, the closing
      `scf.YieldOp([...])` becomes `loop_results = yield [...]` and `loop.results[k]`
      after the loop becomes `loop_results` (one value) or `loop_results[k]`. A loop
      with nothing carried keeps its index bounds through `init=[]` (ordinary `range`
      would cast them to i32), or becomes `range_constexpr(n)` when the bounds are
      integer constants and the induction variable is unused (the loop is unrolled).
      A body entered by hand (`ip = ir.InsertionPoint(loop.body)`, `ip.__enter__()`, ...,
      `ip.__exit__(None, None, None)` in the same block) is indented under the `for`.
    - `loop = scf.WhileOp([T], [init])` with its `before`/`after` blocks made by
      `ir.Block.create_at_start(loop.before/after, [T])` and entered with
      `ir.InsertionPoint(...)` (`cur = before.arguments[0]`, an optional `ok = <test on
      cur>`, `scf.ConditionOp(_raw(ok), [cur])`; the body, then `scf.YieldOp([next])`)
      becomes `cur = init` / `while <test on cur>:` / body / `cur = next` (FlyDSL's own
      polling loops in custom_all_reduce_kernel.py, as its maintainers rewrote them). One
      carried value, forwarded as it is, a test that fits in the `while` line, a body that
      does not read its block argument, and a loop whose results are not read; a function
      under another decorator (a private rewriter may keep `while` as Python) gets no fix.
      A lone `scf.ConditionOp` is reported where no `scf.WhileOp` is built.
    - A plain helper that gains a Python `if` (or the loop's `yield`) is not rewritten
      by FlyDSL unless it is a `@flyc.jit` function: the fix adds `@flyc.jit` (FLY501).

    The fixes are unsafe. A Python `if` carries out, as `scf.if` results, every variable
    the rewriter has seen bound before it (in the function, or in an enclosing one under
    the same `@flyc.kernel`) that the body assigns, subscript-stores into (`out[i] = v`)
    or calls a method on; the raw form yields nothing. Stores into and method calls on fx
    values and tensors come back unchanged (the MLIR gains an `scf.if` result and an
    `else` that yields the same value). When the body would rebind such a variable, or
    carry a variable of an enclosing function (the trace fails: "initialized as None"),
    or a value FlyDSL cannot yield (a Python object such as aiter's `GTensor`, a list),
    the body becomes a local function the `if` calls (guide §5's `then_path()`):

        def _then_ok():
            <body>
        if ok:
            _then_ok()

    The `if` then carries nothing, like the raw op. That needs a body that can move into
    a function: no `return`/`yield`/`break` out of it, no local it sets read after it or
    read before it rebinds it, and no control flow in it that would then carry a
    variable of the function around it. Forms the fix cannot map exactly (ops with
    result types, `else` blocks that yield values, an insertion point used for more than
    entering and leaving, statements between the op and its body, results used other
    than by index) get a diagnostic saying why.
    """

    code = "FLY302"
    name = "raw-scf"
    summary = "`scf.ForOp`, `scf.IfOp`, `scf.WhileOp`/`scf.ConditionOp`, `scf.YieldOp`, `_if_then(...)` helpers"
    replacement = "`range_constexpr`/`range(..., init=[...])`, Python `if`, Python `while`, `const_expr`"
    fix_safety = "unsafe"
    fix_title = "Use Python control flow"
    example_before = (
        "with _if_then(scf.IfOp(arith.unwrap(tid < n))):\n"
        "    out[tid] = v\n"
        "loop = scf.ForOp(lo, hi, one, [acc0])\n"
        "with ir.InsertionPoint(loop.body):\n"
        "    scf.YieldOp([loop.inner_iter_args[0] + x])\n"
        "total = loop.results[0]"
    )
    example_after = (
        "if tid < n:\n"
        "    out[tid] = v\n"
        "for loop_iv, loop_state in range(lo, hi, one, init=[acc0]):\n"
        "    loop_results = yield [loop_state[0] + x]\n"
        "total = loop_results"
    )

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol == IF_OP:
            self._site(node, "scf.IfOp", "write a Python `if cond:` (the rewriter builds the `scf.if`)", self._if_fix)
        elif symbol == FOR_OP:
            self._site(
                node,
                "scf.ForOp",
                "write `for iv, state in range(lo, hi, step, init=[...])` (loop-carried values kept) "
                "or `range_constexpr(...)`",
                self._for_fix,
            )
        elif symbol == WHILE_OP:
            self._site(
                node,
                "scf.WhileOp",
                "write a Python `while cond:` that reassigns the carried value (the rewriter builds the "
                "`scf.while`)",
                self._while_fix,
            )
        elif symbol == CONDITION_OP and not self._in_while_shape(node):
            self.report(
                node,
                "write a Python `while cond:` (the rewriter builds the `scf.while` and its `scf.condition`): "
                "raw `scf.ConditionOp`; no fix: its `scf.WhileOp` is built elsewhere",
            )
        elif self._is_if_then(node.func) and not self._if_op_of(node):
            self.report(
                node,
                f"raw scf through `{ast.unparse(node.func)}(...)`: write a Python `if cond:`; "
                "no fix: the `scf.IfOp` is built elsewhere",
            )

    def _in_while_shape(self, node: ast.Call) -> bool:
        """An `scf.ConditionOp` of a function that builds an `scf.WhileOp`: reported there."""
        function = cf.innermost_function(self.ctx.parents)
        root = function if function is not None else self.model.tree
        return any(
            isinstance(n, ast.Call) and self.model.resolve(n.func) == WHILE_OP for n in ast.walk(root)
        )

    # --- reporting --------------------------------------------------------------
    def _site(self, node, what, advice, planner) -> None:
        function = cf.innermost_function(self.ctx.parents)
        message = f"{advice}: raw `{what}`"
        if function is not None and not cf.rewritten(self.model, self.ctx.parents):
            message = (
                f"{advice}, in a `@flyc.jit` function: raw `{what}`; FlyDSL rewrites Python control flow "
                f"only in `@flyc.kernel`/`@flyc.jit` functions, and `{function.name}` is neither (guide §5)"
            )
        try:
            if function is None:
                raise NoFix("it is not inside a function")
            edits, title = planner(node, function)
            edits = tuple(edits) + self._jit_edits(function)
        except NoFix as why:
            self.report(node, f"{message}; no fix: {why}")
            return
        fix = Fix(f"{title} (unsafe)", Applicability.UNSAFE, edits)
        self.report(node, message, fix=fix, statement=cf.function_range(self.model, function))

    def _jit_edits(self, function) -> tuple[Edit, ...]:
        if cf.rewritten(self.model, self.ctx.parents):
            return ()
        if cf.is_method(function, self.ctx.parents):
            raise NoFix(f"`{function.name}` is a method, and a plain method is not rewritten by FlyDSL")
        why = self._plain_control_flow(function)
        if why:
            raise NoFix(f"`{function.name}` would need `@flyc.jit`, and {why}")
        edits = cf.jit_decorator_edits(self.model, function)
        if edits is None:
            raise NoFix("`flyc` names something else in this file")
        return edits

    def _plain_control_flow(self, function) -> str | None:
        """Python control flow of a plain helper that `@flyc.jit` would change: the rewriter
        turns `for ... in range(...)` into an `scf.for` (its body runs once while tracing), a
        `while` into an `scf.while`, and runs the branches of an `if` that is not
        `const_expr(...)` as functions, so a name they bind is gone after the `if`.
        Asked once per helper (every raw op in it asks; a builder walks thousands of nodes)."""
        answers = self.model.facts(PlainControlFlow)
        if id(function) not in answers:
            answers[id(function)] = self._first_plain_control_flow(function)
        return answers[id(function)]

    def _first_plain_control_flow(self, function) -> str | None:
        scopes = None  # the function scopes inside ``function``: found at its first `if`
        inside = self.model.parent_map(function)
        for node in self.model.nodes_of((ast.While, ast.For, ast.If)):
            if id(node) not in inside:
                continue
            if isinstance(node, ast.While):
                return f"its `while` (line {node.lineno}) would become an `scf.while`"
            if isinstance(node, ast.For) and cf.called(node.iter, "range"):
                return f"its `for` over `range(...)` (line {node.lineno}) would become an `scf.for`"
            if isinstance(node, ast.If) and not const_expr_test(node):
                names = bound_in(node)
                if scopes is None:
                    scopes = [s for s in self.model.scopes if s.kind == "function" and within(s.node, function)]
                for scope in scopes:
                    for name in names & set(scope.bindings):
                        for binding in scope.bindings[name]:
                            if not within(binding.node, node):
                                continue
                            for use in self.model.uses_of(binding):
                                if not within(use, node):
                                    return (
                                        f"`{name}`, set under its `if` on line {node.lineno}, is read "
                                        f"after it (line {use.lineno}): the rewriter keeps it in the branch"
                                    )
        return None

    def _base_name(self, name: str, binding, scope) -> str:
        base = name.strip("_") or "loop"
        same = scope.bindings.get(name, []) if scope is not None else []
        if len(same) > 1 and binding in same:
            base += str(same.index(binding) + 1)
        return base

    def _fresh(self, name: str, scope) -> str:
        return unbound_name(name, scope, self.model.module_scope)

    # --- shared pieces ------------------------------------------------------------
    def _is_if_then(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Name):
            binding = self.model.binding_of(func)
            if binding is None:
                return False
            if binding.kind == "def":
                return binding.node.name.endswith("if_then")
            if binding.kind == "import" and binding.dotted:
                return binding.dotted.rsplit(".", 1)[-1].endswith("if_then")
            return False
        if isinstance(func, ast.Attribute) and func.attr.endswith("if_then"):
            dotted = self.model.dotted(func)
            return dotted is not None
        return False

    def _if_op_of(self, call: ast.Call) -> bool:
        """`_if_then(x)` whose `x` is an `scf.IfOp` this rule reports by itself."""
        if not call.args:
            return False
        arg = call.args[0]
        if isinstance(arg, ast.Call):
            return self.model.resolve(arg.func) == IF_OP
        if isinstance(arg, ast.Name):
            return any(
                b.kind == "assign" and isinstance(b.value, ast.Call) and self.model.resolve(b.value.func) == IF_OP
                for b in self.model.reaching_bindings(arg)
            )
        return False

    def _is_then_with(self, stmt, name: str) -> bool:
        if not isinstance(stmt, ast.With) or len(stmt.items) != 1:
            return False
        expr = stmt.items[0].context_expr
        if isinstance(expr, ast.Call) and self._is_if_then(expr.func):
            return bool(expr.args) and isinstance(expr.args[0], ast.Name) and expr.args[0].id == name
        return self._is_block_with(stmt, name, "then_block")

    def _is_if_block(self, expr: ast.expr) -> bool:
        """`_if_then(...)` or `ir.InsertionPoint(x.then_block / x.else_block)`."""
        if not isinstance(expr, ast.Call):
            return False
        if self._is_if_then(expr.func):
            return True
        return (
            self.model.resolve(expr.func) == INSERTION_POINT
            and len(expr.args) == 1
            and isinstance(expr.args[0], ast.Attribute)
            and expr.args[0].attr in ("then_block", "else_block")
        )

    def _is_block_with(self, stmt, name: str, block: str) -> bool:
        if not isinstance(stmt, ast.With) or len(stmt.items) != 1:
            return False
        return self._is_block_call(stmt.items[0].context_expr, name, block)

    def _check_with(self, with_stmt: ast.With) -> None:
        if with_stmt.items[0].optional_vars is not None:
            raise NoFix("the `with` statement binds an `as` target")

    def _yield_call(self, stmt) -> ast.Call | None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            if self.model.resolve(stmt.value.func) == YIELD_OP:
                return stmt.value
        return None

    def _strip_trailing_yield(self, body: list, allow_values: bool) -> list[Edit]:
        for stmt in outside_entered(body[:-1]):
            if self._yield_call(stmt) is not None:
                raise NoFix("a block yields before its last statement")
        call = self._yield_call(body[-1])
        if call is None:
            return []
        if not allow_values and (call.keywords or any(not empty_list(a) for a in call.args)):
            raise NoFix("a block yields values")
        if len(body) == 1:
            return [self.edit(self.ctx.range(body[-1]), "pass")]
        return [self._delete_statement(body[-1])]

    def _header(self, with_stmt: ast.With, text: str) -> Edit:
        item = with_stmt.items[0]
        end = item.optional_vars or item.context_expr
        start = self.model.index.from_ast(with_stmt.lineno, with_stmt.col_offset)
        stop = self.model.index.from_ast(end.end_lineno, end.end_col_offset)
        return self.edit(Range(start, stop), text)

    def _delete_statement(self, stmt: ast.stmt) -> Edit:
        if shares_lines(self.model, stmt):
            raise NoFix("the statement shares its line with other code")
        return self.edit(Range(Position(stmt.lineno - 1, 0), Position(stmt.end_lineno, 0)), "")

    def _block_of(self, stmt: ast.stmt) -> tuple[list, int]:
        # The engine visits the Call; its statement is the last parent, its block the one before.
        chain = self.ctx.parents
        position = next((i for i in range(len(chain) - 1, -1, -1) if chain[i] is stmt), None)
        holder = chain[position - 1] if position else None
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(holder, field, None)
            if isinstance(block, list) and stmt in block:
                return block, block.index(stmt)
        raise NoFix("its block could not be found")

    def _binding_at(self, target: ast.Name):
        for scope in self.model.scopes:
            for binding in scope.bindings.get(target.id, ()):
                if binding.node is target:
                    return binding
        return None

    VALID = VALID
    INVALID = INVALID

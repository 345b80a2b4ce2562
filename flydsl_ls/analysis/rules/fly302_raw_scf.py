import ast
import re
from dataclasses import dataclass

from flydsl_ls.analysis.model import fxtypes as T
from flydsl_ls.analysis.model.diagnostic import Applicability, Edit, Fix
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.statements import shares_lines
from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.analysis.rules import _control_flow_support as cf
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

IF_OP, FOR_OP, YIELD_OP = "mlir.scf.IfOp", "mlir.scf.ForOp", "mlir.scf.YieldOp"
INSERTION_POINT = "mlir.ir.InsertionPoint"
# Wrappers that only turn a typed value into a raw one: `if` takes the typed value itself.
_UNWRAPS = {
    "fx.arith.unwrap",
    "fx.arith._to_raw",
    "fx.arith.ArithValue",
    "fx.as_ir_value",
    "fx.arith.as_ir_value",
    "shim.tensor_shim._to_raw",
}
_INDEX_CONSTANTS = {"fx.arith.index", "fx.arith.constant", "fx.Index"}
# Bindings FlyDSL's rewriter records as symbols (so it carries them through control flow).
_RECORDED = {"assign", "augassign", "annassign", "param", "for", "with"}
# What it can carry through an `scf.if` and give back unchanged (fx scalars too).
_CARRIABLE = {T.TENSOR, T.VECTOR}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# Statements that do something else inside a function than in the block they came from.
_LEAVES_FUNCTION = (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)


class PlainControlFlow(dict[int, "str | None"]):
    """Per model: id(helper) -> the first control flow `@flyc.jit` would change in it."""

    def __init__(self, model):
        super().__init__()


class _NoFix(Exception):
    """Why a site gets a diagnostic without a fix."""


class RawScf(Rule):
    """
    Raw `scf` builders (`scf.IfOp`, `scf.ForOp`, `scf.YieldOp`, and local `_if_then(if_op)`
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
    summary = "`scf.ForOp`, `scf.IfOp`, `scf.YieldOp`, `_if_then(...)` helpers"
    replacement = "`range_constexpr`/`range(..., init=[...])`, Python `if`, `const_expr`"
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
        elif self._is_if_then(node.func) and not self._if_op_of(node):
            self.report(
                node,
                f"raw scf through `{ast.unparse(node.func)}(...)`: write a Python `if cond:`; "
                "no automatic fix: the `scf.IfOp` is built elsewhere",
            )

    # --- reporting --------------------------------------------------------------
    def _site(self, node, what, advice, planner) -> None:
        message = f"raw `{what}`: {advice}"
        function = cf.innermost_function(self.ctx.parents)
        if function is not None and not cf.rewritten(self.model, self.ctx.parents):
            message += (
                f", in a `@flyc.jit` function: FlyDSL rewrites Python control flow only in "
                f"`@flyc.kernel`/`@flyc.jit` functions, and `{function.name}` is neither (guide §5)"
            )
        try:
            if function is None:
                raise _NoFix("it is not inside a function")
            edits, title = planner(node, function)
            edits = tuple(edits) + self._jit_edits(function)
        except _NoFix as why:
            self.report(node, f"{message}; no automatic fix: {why}")
            return
        fix = Fix(f"{title} (unsafe)", Applicability.UNSAFE, edits)
        self.report(node, message, fix=fix, statement=cf.function_range(self.model, function))

    def _jit_edits(self, function) -> tuple[Edit, ...]:
        if cf.rewritten(self.model, self.ctx.parents):
            return ()
        if cf.is_method(function, self.ctx.parents):
            raise _NoFix(f"`{function.name}` is a method, and a plain method is not rewritten by FlyDSL")
        why = self._plain_control_flow(function)
        if why:
            raise _NoFix(f"`{function.name}` would need `@flyc.jit`, and {why}")
        edits = cf.jit_decorator_edits(self.model, function)
        if edits is None:
            raise _NoFix("`flyc` names something else in this file")
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
            if isinstance(node, ast.For) and cf._called(node.iter, "range"):
                return f"its `for` over `range(...)` (line {node.lineno}) would become an `scf.for`"
            if isinstance(node, ast.If) and not _const_expr_test(node):
                names = _bound_in(node)
                if scopes is None:
                    scopes = [s for s in self.model.scopes if s.kind == "function" and _within(s.node, function)]
                for scope in scopes:
                    for name in names & set(scope.bindings):
                        for binding in scope.bindings[name]:
                            if not _within(binding.node, node):
                                continue
                            for use in self.model.uses_of(binding):
                                if not _within(use, node):
                                    return (
                                        f"`{name}`, set under its `if` on line {node.lineno}, is read "
                                        f"after it (line {use.lineno}): the rewriter keeps it in the branch"
                                    )
        return None

    # --- if -----------------------------------------------------------------------
    def _if_fix(self, node: ast.Call, function):
        cond, results, has_else = _if_arguments(node)
        if cond is None:
            raise _NoFix("its arguments are not the `scf.IfOp(cond, ...)` form")
        if results is not None and not (isinstance(results, ast.List) and not results.elts):
            raise _NoFix("the op has results (a Python `if` computes its own carried state)")
        parents = self.ctx.parents
        edits: list[Edit] = []
        op_name = None
        parent = parents[-1] if parents else None
        if isinstance(parent, ast.Call) and self._is_if_then(parent.func) and node in parent.args:
            item = parents[-2] if len(parents) > 1 else None
            with_stmt = parents[-3] if len(parents) > 2 else None
            if not (isinstance(item, ast.withitem) and isinstance(with_stmt, ast.With)):
                raise _NoFix("`_if_then(...)` is not used as a `with` statement")
            then_with, else_with = with_stmt, None
            if has_else:
                raise _NoFix("the op has an else block that is filled elsewhere")
        elif isinstance(parent, ast.Assign) and parent.value is node and _single_name(parent):
            name = op_name = parent.targets[0].id
            body, index = self._block_of(parent)
            then_with = _next(body, index)
            if not self._is_then_with(then_with, name):
                raise _NoFix(f"the statement after it is not `with _if_then({name}):` or "
                             f"`with ir.InsertionPoint({name}.then_block):`")
            else_with = _next(body, index + 1)
            if not self._is_block_with(else_with, name, "else_block"):
                else_with = None
            if has_else and else_with is None:
                raise _NoFix("its else block is not filled right after the then block")
            allowed = {id(n) for w in (then_with, else_with) if w for n in ast.walk(w.items[0].context_expr)}
            binding = self._binding_at(parent.targets[0])
            for use in self.model.uses_of(binding) if binding else ():
                if id(use) not in allowed:
                    raise _NoFix(f"`{name}` is used elsewhere (line {use.lineno})")
            edits.append(self._delete_statement(parent))
        else:
            raise _NoFix("the op is not opened by a `with` block right where it is built")
        inner = self._unwrapped(cond)
        hint = (inner.id if isinstance(inner, ast.Name) else op_name or "branch").strip("_")
        kind = self._condition_kind(inner)
        if not _dynamic_condition(kind):
            raise _NoFix(
                f"the condition `{self.text(inner)}` is not known to be an fx boolean or a raw `ir.Value` "
                f"({kind.describe() if kind.known else 'type unknown'}); a Python `if` on anything else "
                "is decided while tracing"
            )
        blocks = [w for w in (then_with, else_with) if w is not None]
        for w in blocks:
            self._check_with(w)
        try:
            for w in blocks:
                self._check_carried_state(w, function)
        except _NoFix as direct:
            edits += self._local_function_edits(then_with, else_with, inner, function, hint, direct)
            return edits, "Replace scf.IfOp with a Python if calling a local function"
        edits.append(self._header(then_with, f"if {self._condition_text(inner)}"))
        edits += self._strip_trailing_yield(then_with.body, allow_values=False)
        if else_with is not None:
            edits.append(self._header(else_with, "else"))
            edits += self._strip_trailing_yield(else_with.body, allow_values=False)
        return edits, "Replace scf.IfOp with a Python if"

    # --- if through local functions (guide §5: then_path()/else_path()) -----------------
    def _local_function_edits(self, then_with, else_with, cond, function, hint, direct):
        """`def _then_c(): <body>` in place of the `with`, then `if c: _then_c()`: the region
        of the `if` only calls a function, so FlyDSL's rewriter carries nothing out of it (no
        `scf.if` results, as in the raw form), and the body keeps its own locals."""
        scope = self.model.function_scope(function)
        if scope is None:
            raise direct
        outer = self._rewritten_scopes(function, scope)
        blocks = [w for w in (then_with, else_with) if w is not None]
        for w in blocks:
            why = self._local_function_blocker(w, scope, outer)
            if why:
                raise _NoFix(f"{direct}; nor can its body become a local function: {why}")
        last = blocks[-1]
        index = self.model.index
        line = index.line_text(then_with.lineno - 1)
        indent = line[: len(line) - len(line.lstrip())]
        body_line = index.line_text(then_with.body[0].lineno - 1)
        inner = body_line[: len(body_line) - len(body_line.lstrip())]  # tabs kept as written
        rest = index.line_text(last.end_lineno - 1).encode("utf-8")[last.end_col_offset :]
        rest = rest.decode("utf-8", "replace")
        if not re.fullmatch(r"\s*(#.*)?", rest):
            raise _NoFix(f"{direct}; and the block shares its last line with other code")
        then_name = self._fresh(f"_then_{hint}", scope)
        edits = [self._header(then_with, f"def {then_name}()")]
        edits += self._strip_trailing_yield(then_with.body, allow_values=False)
        call = f"{indent}if {self._condition_text(cond)}:\n{inner}{then_name}()\n"
        if else_with is not None:
            else_name = self._fresh(f"_else_{hint}", scope)
            edits.append(self._header(else_with, f"def {else_name}()"))
            edits += self._strip_trailing_yield(else_with.body, allow_values=False)
            call += f"{indent}else:\n{inner}{else_name}()\n"
        after = Position(last.end_lineno, 0)
        edits.append(self.edit(Range(after, after), call))
        return edits

    def _local_function_blocker(self, with_stmt: ast.With, scope, outer: list) -> str | None:
        """Why the body of ``with_stmt`` cannot move into a local function, or None."""
        for node in _own_nodes(with_stmt.body, loops=False):
            if isinstance(node, _LEAVES_FUNCTION):
                return f"it has a `{type(node).__name__.lower()}` (line {node.lineno})"
        for node in _loop_exits(with_stmt.body):
            kind = type(node).__name__.lower()
            return f"it has a `{kind}` of a loop around it (line {node.lineno})"
        inside = lambda n: _within(n, with_stmt)  # noqa: E731
        local = set()
        for name, bindings in scope.bindings.items():
            for b in bindings:
                if not inside(b.node):
                    continue
                local.add(name)
                for use in self.model.uses_of(b):
                    if not inside(use):
                        return f"`{name}`, set in it, is read after it (line {use.lineno})"
        # A name the body binds becomes a local of the new function: the body must not read
        # the function's own value of it first.
        for node in _own_nodes(with_stmt.body):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in local:
                if any(not inside(b.node) for b in self.model.reaching_bindings(node)):
                    return f"it reads `{node.id}` (line {node.lineno}) from before it and then rebinds it"
        # Control flow inside the body carries names of the function around it, which would
        # become variables of an enclosing function (the trace fails).
        around = [scope, *outer]

        def bound_around(name, scopes):
            return any(
                b.kind in _RECORDED and not inside(b.node) for s in scopes for b in s.bindings.get(name, ())
            )

        for region, raw in self._dynamic_regions(with_stmt.body):
            names = cf.carried_names(region)
            if raw and any(bound_around(n, outer) for n in names):
                continue  # this rule turns it into a local function too, or leaves it raw
            for name in sorted(names):
                if bound_around(name, around):
                    return (
                        f"the control flow on line {region[0].lineno} would carry `{name}`, "
                        "which would then belong to an enclosing function (the trace would fail)"
                    )
        return None

    def _dynamic_regions(self, body: list):
        """The regions in ``body`` FlyDSL's rewriter carries state out of: branches of an `if`
        that is not `const_expr(...)`, `while` loops, `for` over `range(...)` without `init=`,
        and (flagged True) the raw `scf.if` blocks this rule turns into Python `if`s. A raw
        block that would carry a variable of an enclosing function never becomes a plain
        `if` (see `_check_carried_state`)."""
        for node in _own_nodes(body):
            if isinstance(node, ast.If) and not _const_expr_test(node):
                yield [*node.body, *node.orelse], False
            elif isinstance(node, ast.While):
                yield [node.test, *node.body, *node.orelse], False
            elif isinstance(node, ast.For) and cf._called(node.iter, "range") and not any(
                k.arg == "init" for k in node.iter.keywords
            ):
                yield node.body, False
            elif isinstance(node, ast.With) and len(node.items) == 1:
                if self._is_if_block(node.items[0].context_expr):
                    yield node.body, True

    def _condition_kind(self, cond: ast.expr):
        """The condition's kind; an element of a list of conditions built in this function
        (aiter's `tile_actives = [arith.cmpi(...) for ...]`, `tile_actives[i]`) has the kind
        all its elements share."""
        kind = self.model.type_of(cond)
        if kind.known or not (isinstance(cond, ast.Subscript) and isinstance(cond.value, ast.Name)):
            return kind
        bindings = self.model.reaching_bindings(cond.value)
        value = bindings[0].value if len(bindings) == 1 and bindings[0].kind == "assign" else None
        if isinstance(value, ast.ListComp) and not any(g.ifs for g in value.generators):
            elements = [value.elt]
        elif isinstance(value, (ast.List, ast.Tuple)) and value.elts:
            elements = value.elts
        else:
            return kind
        kinds = [self.model.type_of(e) for e in elements]
        return kinds[0] if all(k.name == kinds[0].name for k in kinds) else kind

    def _condition_text(self, inner: ast.expr) -> str:
        text = self.text(inner)
        return f"({text})" if "\n" in text or isinstance(inner, (ast.NamedExpr, ast.Lambda)) else text

    def _unwrapped(self, cond: ast.expr) -> ast.expr:
        while True:
            if isinstance(cond, ast.Call) and len(cond.args) == 1 and not cond.keywords:
                if self.model.resolve(cond.func) in _UNWRAPS:
                    cond = cond.args[0]
                    continue
            if (
                isinstance(cond, ast.Call)
                and not cond.args
                and isinstance(cond.func, ast.Attribute)
                and cond.func.attr == "ir_value"
            ):
                cond = cond.func.value
                continue
            return cond

    def _check_carried_state(self, with_stmt: ast.With, function) -> None:
        """FlyDSL's rewriter carries out of a Python `if`, as `scf.if` results, every name the
        body assigns, stores into or calls a method on that it has seen bound before, in the
        function or in an enclosing one it rewrites too (`_collect_assigned_vars`). The raw
        form carries nothing, so: rebinding an earlier variable changes the meaning; a variable
        of an enclosing function cannot be carried at all (the trace fails: "initialized as
        None before a dynamic if/else"); and a carried value must be one FlyDSL can yield (an
        fx value or tensor; a Python object or list fails to flatten, a raw `ir.Value` comes
        back re-wrapped as an fx value)."""
        scope = self.model.function_scope(function)
        if scope is None:
            return
        start = (with_stmt.lineno, with_stmt.col_offset)
        outer = self._rewritten_scopes(function, scope)
        parent_of = self.model.parent_map(outer[0].node if outer else function)

        def earlier(s, name):
            return [
                b
                for b in s.bindings.get(name, ())
                if b.kind in _RECORDED
                and b.position < start
                and _still_recorded(b, with_stmt, parent_of)
            ]

        for stmt in with_stmt.body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and earlier(scope, sub.id):
                    raise _NoFix(
                        f"the body rebinds `{sub.id}` (defined before it), which a Python `if` "
                        "would carry out as an `scf.if` result"
                    )
        for name in sorted(cf.carried_names(with_stmt.body)):
            mine = earlier(scope, name)
            if mine:
                kinds = [self.model.binding_type(b) for b in mine]
                if not all(k is not None and (k.is_fx_scalar or k.name in _CARRIABLE) for k in kinds):
                    last = kinds[-1]
                    shown = last.describe() if last is not None and last.known else "type unknown"
                    raise _NoFix(
                        f"the body stores into or calls a method on `{name}` ({shown}), which a "
                        "Python `if` would carry out as an `scf.if` result, and only fx values and "
                        "tensors can be carried"
                    )
            elif any(earlier(s, name) for s in outer):
                raise _NoFix(
                    f"the body assigns, stores into or calls a method on `{name}`, a variable of an "
                    "enclosing function, which a Python `if` cannot carry (the trace would fail)"
                )

    def _rewritten_scopes(self, function, scope) -> list:
        """The scopes of the functions around ``function`` that FlyDSL's rewriter parses with it:
        up to the outermost `@flyc.kernel`/`@flyc.jit` one (a builder around a kernel is not)."""
        chain = cf.functions_of(self.ctx.parents)
        jit = [i for i, f in enumerate(chain) if cf.is_jit_function(self.model, f)]
        if not jit:
            return []
        scopes = []
        for f in chain[jit[0] : chain.index(function) if function in chain else len(chain)]:
            s = self.model.function_scope(f)
            if s is not None and s is not scope:
                scopes.append(s)
        return scopes

    # --- for ----------------------------------------------------------------------
    def _for_fix(self, node: ast.Call, function):
        parent = self.ctx.parent
        if not (isinstance(parent, ast.Assign) and parent.value is node and _single_name(parent)):
            raise _NoFix("the op is not assigned to a name")
        bounds, init = _for_arguments(node)
        if bounds is None:
            raise _NoFix("its arguments are not the `scf.ForOp(lo, hi, step[, [init...]])` form")
        if init is not None and not isinstance(init, ast.List):
            raise _NoFix("the carried values are not a list literal")
        carried = init is not None and bool(init.elts)
        name = parent.targets[0].id
        body, index = self._block_of(parent)
        region = self._loop_region(body, index, name)
        binding = self._binding_at(parent.targets[0])
        parent_of = self.model.parent_map(function)
        iv_uses, state_uses, result_uses = [], [], []
        for use in self.model.uses_of(binding) if binding else ():
            attr = parent_of.get(id(use))
            inside = _within(use, region.span)
            if not isinstance(attr, ast.Attribute):
                raise _NoFix(f"`{name}` is used directly (line {use.lineno})")
            if attr.attr == "body" and any(attr is n for n in ast.walk(region.opener)):
                continue
            if attr.attr == "induction_variable" and inside:
                iv_uses.append(attr)
            elif attr.attr == "inner_iter_args" and inside and carried:
                state_uses.append(attr)
            elif attr.attr in ("results", "result") and not inside and _after(use, region.end) and carried:
                result_uses.append((attr, parent_of.get(id(attr))))
            else:
                raise _NoFix(f"`{name}.{attr.attr}` is used in a way the fix cannot follow (line {use.lineno})")
        last = region.body[-1]
        closing = self._yield_call(last)
        for stmt in region.body[:-1]:
            if self._yield_call(stmt) is not None:
                raise _NoFix("the body yields before its last statement")
        scope = self.model.function_scope(function)
        base = self._base_name(name, binding, scope)
        iv = self._fresh(f"{base}_iv", scope) if iv_uses else "_"
        state = self._fresh(f"{base}_state", scope)
        results = self._fresh(f"{base}_results", scope)
        lo, hi, step = bounds
        edits = [self._delete_statement(parent)]
        if carried:
            if closing is None or len(closing.args) != 1 or closing.keywords:
                raise _NoFix("the body does not end with `scf.YieldOp([...])` of the carried values")
            header = (
                f"for {iv}, {state} in range({self.text(lo)}, {self.text(hi)}, {self.text(step)}, "
                f"init={self.text(init)})"
            )
            # Two edits around the yielded value, so that edits inside it (the induction
            # variable, the carried state) do not overlap.
            value = closing.args[0]
            target = f"{results} = " if result_uses else ""
            index = self.model.index
            edits.append(self.edit(Range(index.from_ast(last.lineno, last.col_offset), index.from_ast(value.lineno, value.col_offset)), f"{target}yield "))
            edits.append(self.edit(Range(index.from_ast(value.end_lineno, value.end_col_offset), index.from_ast(last.end_lineno, last.end_col_offset)), ""))
            for attr in state_uses:
                edits.append(self.edit(self.ctx.range(attr), state))
            for attr, outer in result_uses:
                edits.append(self._result_edit(attr, outer, results, len(init.elts)))
        else:
            if closing is not None and (closing.keywords or any(not _empty_list(a) for a in closing.args)):
                raise _NoFix("the body yields values but the loop carries none")
            constant = [self._int_constant(b) for b in bounds]
            if not iv_uses and all(c is not None for c in constant):
                header = f"for _ in {self._range_constexpr()}({_range_args(*constant)})"
            else:
                header = f"for {iv}, _ in range({self.text(lo)}, {self.text(hi)}, {self.text(step)}, init=[])"
            if closing is not None:
                edits += self._strip_trailing_yield(region.body, allow_values=False)
        for attr in iv_uses:
            edits.append(self.edit(self.ctx.range(attr), iv))
        deleted = closing is not None and not carried and len(region.body) > 1
        edits += region.header_edits(self, header, keep=region.body[:-1] if deleted else region.body)
        return edits, "Replace scf.ForOp with a Python for over range"

    def _loop_region(self, block: list, index: int, name: str) -> "_LoopRegion":
        """The body of the loop built at ``block[index]``: `with ir.InsertionPoint(name.body):`
        right after it, or `ip = ir.InsertionPoint(name.body)`, `ip.__enter__()`, the body,
        `ip.__exit__(None, None, None)` in the same block."""
        opener = _next(block, index)
        if self._is_block_with(opener, name, "body"):
            self._check_with(opener)
            return _LoopRegion(opener.body, opener, opener, opener)
        entered = _next(block, index + 1)
        if not (
            isinstance(opener, ast.Assign)
            and _single_name(opener)
            and self._is_block_call(opener.value, name, "body")
            and _method_call(entered, opener.targets[0].id, "__enter__")
        ):
            raise _NoFix(
                f"the statement after it is not `with ir.InsertionPoint({name}.body):` or "
                f"`ip = ir.InsertionPoint({name}.body)` + `ip.__enter__()`"
            )
        ip = opener.targets[0].id
        end = next((i for i in range(index + 3, len(block)) if _method_call(block[i], ip, "__exit__")), None)
        if end is None or end == index + 3:
            raise _NoFix(f"`{ip}.__exit__(...)` does not close a body in the same block")
        binding = self._binding_at(opener.targets[0])
        if binding is None or len(self.model.uses_of(binding)) != 2:
            raise _NoFix(f"`{ip}` is used other than by `__enter__()` and `__exit__()`")
        body = block[index + 3 : end]
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno != node.lineno:
                raise _NoFix(f"the body has a string over several lines (line {node.lineno}), which indenting it would change")
        return _LoopRegion(body, opener, _Span(body[0], body[-1]), block[end], entered)

    def _is_block_call(self, expr, name: str, block: str) -> bool:
        return (
            isinstance(expr, ast.Call)
            and self.model.resolve(expr.func) == INSERTION_POINT
            and len(expr.args) == 1
            and not expr.keywords
            and isinstance(expr.args[0], ast.Attribute)
            and expr.args[0].attr == block
            and isinstance(expr.args[0].value, ast.Name)
            and expr.args[0].value.id == name
        )

    def _result_edit(self, attr: ast.Attribute, outer, results: str, count: int) -> Edit:
        if attr.attr == "result":
            if count != 1:
                raise _NoFix("`.result` of a loop with several results")
            return self.edit(self.ctx.range(attr), results)
        if isinstance(outer, ast.Subscript) and outer.value is attr:
            key = outer.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, int) and not isinstance(key.value, bool):
                k = key.value if key.value >= 0 else count + key.value
                if 0 <= k < count:
                    return self.edit(self.ctx.range(outer), results if count == 1 else f"{results}[{k}]")
            raise _NoFix("a loop result is indexed by something other than a constant")
        if count == 1:
            return self.edit(self.ctx.range(attr), f"[{results}]")
        return self.edit(self.ctx.range(attr), results)

    def _range_constexpr(self) -> str:
        for name, binding in self.model.module_imports:
            if name == "range_constexpr" and self.model.binding_dotted(binding) in (
                "flydsl.expr.range_constexpr",
                "flydsl.expr.primitive.range_constexpr",
            ):
                return name
        alias, imports = fx_alias(self.model)
        if imports:
            raise _NoFix("the file does not import flydsl.expr")
        return f"{alias}.range_constexpr"

    def _int_constant(self, expr: ast.expr) -> int | None:
        """The Python int an index-constant bound holds (`arith.constant(4, index=True)`)."""
        if isinstance(expr, ast.Name):
            bindings = self.model.reaching_bindings(expr)
            if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
                return None
            expr = bindings[0].value
        if not isinstance(expr, ast.Call) or not expr.args:
            return None
        symbol = self.model.resolve(expr.func)
        if symbol not in _INDEX_CONSTANTS:
            return None
        if symbol == "fx.arith.constant" and not any(
            k.arg == "index" and isinstance(k.value, ast.Constant) and k.value.value is True for k in expr.keywords
        ):
            return None
        value = expr.args[0]
        if isinstance(value, ast.Constant) and type(value.value) is int:
            return value.value
        return None

    def _base_name(self, name: str, binding, scope) -> str:
        base = name.strip("_") or "loop"
        same = scope.bindings.get(name, []) if scope is not None else []
        if len(same) > 1 and binding in same:
            base += str(same.index(binding) + 1)
        return base

    def _fresh(self, name: str, scope) -> str:
        candidate, n = name, 1
        taken = set(scope.bindings) if scope is not None else set()
        taken |= set(self.model.module_scope.bindings)
        while candidate in taken:
            n += 1
            candidate = f"{name}{n}"
        return candidate

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
            raise _NoFix("the `with` statement binds an `as` target")

    def _yield_call(self, stmt) -> ast.Call | None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            if self.model.resolve(stmt.value.func) == YIELD_OP:
                return stmt.value
        return None

    def _strip_trailing_yield(self, body: list, allow_values: bool) -> list[Edit]:
        for stmt in _outside_entered(body[:-1]):
            if self._yield_call(stmt) is not None:
                raise _NoFix("a block yields before its last statement")
        call = self._yield_call(body[-1])
        if call is None:
            return []
        if not allow_values and (call.keywords or any(not _empty_list(a) for a in call.args)):
            raise _NoFix("a block yields values")
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
            raise _NoFix("the statement shares its line with other code")
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
        raise _NoFix("its block could not be found")

    def _binding_at(self, target: ast.Name):
        for scope in self.model.scopes:
            for binding in scope.bindings.get(target.id, ()):
                if binding.node is target:
                    return binding
        return None

    VALID = [
        Valid(
            "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    tid = fx.thread_idx.x\n"
            "    if tid < n:\n"
            "        out[tid] = 1.0\n"
            "    for i in fx.range_constexpr(4):\n"
            "        pass\n"
        ),
        Valid(
            # Text in comments and strings is not code.
            "# with _if_then(scf.IfOp(c)): ... emits scf.for / scf.if\n"
            'doc = "scf.ForOp(lo, hi, step) and scf.YieldOp([])"\n'
        ),
        Valid(
            # An _if_then definition that is never called is not a site.
            "from contextlib import contextmanager\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "@contextmanager\n"
            "def _if_then(if_op):\n"
            "    with ir.InsertionPoint(if_op.then_block):\n"
            "        yield\n"
        ),
        Valid("class scf:\n    IfOp = staticmethod(lambda c: c)\nscf.IfOp(1)\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    tid = fx.thread_idx.x\n"
            "    with _if_then(scf.IfOp(arith.unwrap(tid < n))):\n"
            "        out[tid] = 1.0\n"
            "from kernels.common.scf_helpers import _if_then\n",
            # The imports only the raw form used are removed with it.
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    tid = fx.thread_idx.x\n"
            "    if tid < n:\n"
            "        out[tid] = 1.0\n",
            unsafe=True,
            line=8,
            column=19,
            message="Python `if",
        ),
        Invalid(
            # IfOp bound to a name, then/else blocks through ir.InsertionPoint.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf as _scf\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    tid = fx.thread_idx.x\n"
            "    in_range = tid < n\n"
            "    if_op = _scf.IfOp(in_range.ir_value(), has_else=True)\n"
            "    with ir.InsertionPoint(if_op.then_block):  # then\n"
            "        out[tid] = 1.0\n"
            "        _scf.YieldOp([])\n"
            "    with ir.InsertionPoint(if_op.else_block):\n"
            "        _scf.YieldOp([])\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    tid = fx.thread_idx.x\n"
            "    in_range = tid < n\n"
            "    if in_range:  # then\n"
            "        out[tid] = 1.0\n"
            "    else:\n"
            "        pass\n",
            unsafe=True,
            line=9,
        ),
        Invalid(
            # A plain helper gains the Python `if`: it also gets @flyc.jit (FLY501).
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr.arith import ArithValue\n"
            "from .common import _if_then\n"
            "\n"
            "def store_if(out: fx.Tensor, i: fx.Int32, n: fx.Int32):\n"
            "    guard = scf.IfOp(ArithValue(i < n))\n"
            "    with _if_then(guard):\n"
            "        out[i] = 0.0\n",
            expected="import flydsl.expr as fx\n"
            "import flydsl.compiler as flyc\n"
            "\n"
            "@flyc.jit\n"
            "def store_if(out: fx.Tensor, i: fx.Int32, n: fx.Int32):\n"
            "    if i < n:\n"
            "        out[i] = 0.0\n",
            unsafe=True,
            message="in a `@flyc.jit` function: FlyDSL rewrites Python control flow only in "
            "`@flyc.kernel`/`@flyc.jit` functions, and `store_if` is neither (guide §5)",
        ),
        Invalid(
            # Loop-carried value: range(..., init=[...]), yield, results.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "from flydsl.expr.arith import ArithValue\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor):\n"
            "    c0 = arith.constant(0, index=True)\n"
            "    c4 = arith.constant(4, index=True)\n"
            "    c1 = arith.constant(1, index=True)\n"
            "    acc0 = arith.constant(0.0, type=fx.T.f32)\n"
            "    loop = scf.ForOp(c0, c4, c1, [acc0])\n"
            "    with ir.InsertionPoint(loop.body):\n"
            "        i = arith.index_cast(fx.T.i32, loop.induction_variable)\n"
            "        acc = ArithValue(loop.inner_iter_args[0])\n"
            "        scf.YieldOp([acc + 2.0])\n"
            "    out[0] = loop.results[0]\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "from flydsl.expr.arith import ArithValue\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor):\n"
            "    c0 = arith.constant(0, index=True)\n"
            "    c4 = arith.constant(4, index=True)\n"
            "    c1 = arith.constant(1, index=True)\n"
            "    acc0 = arith.constant(0.0, type=fx.T.f32)\n"
            "    for loop_iv, loop_state in range(c0, c4, c1, init=[acc0]):\n"
            "        i = arith.index_cast(fx.T.i32, loop_iv)\n"
            "        acc = ArithValue(loop_state[0])\n"
            "        loop_results = yield [acc + 2.0]\n"
            "    out[0] = loop_results\n",
            unsafe=True,
            line=13,
            column=12,
            message="init=",
        ),
        Invalid(
            # The induction variable and the state inside the yielded value; a plain helper.
            "import flydsl.compiler as flyc\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "def row_sum(row, c0, n, c1, acc0):\n"
            "    loop = scf.ForOp(c0, n, c1, [acc0])\n"
            "    with ir.InsertionPoint(loop.body):\n"
            "        scf.YieldOp([loop.inner_iter_args[0] + row[loop.induction_variable]])\n"
            "    return loop.results[0]\n",
            expected="import flydsl.compiler as flyc\n"
            "@flyc.jit\n"
            "def row_sum(row, c0, n, c1, acc0):\n"
            "    for loop_iv, loop_state in range(c0, n, c1, init=[acc0]):\n"
            "        loop_results = yield [loop_state[0] + row[loop_iv]]\n"
            "    return loop_results\n",
            unsafe=True,
        ),
        Invalid(
            # Nothing carried, index bounds from runtime values: range(..., init=[]).
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    hi = arith.index_cast(fx.T.index, n)\n"
            "    step = arith.constant(1, index=True)\n"
            "    loop = scf.ForOp(arith.constant(0, index=True), hi, step)\n"
            "    with ir.InsertionPoint(loop.body):\n"
            "        out[arith.index_cast(fx.T.i32, loop.induction_variable)] = 0.0\n"
            "        scf.YieldOp([])\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    hi = arith.index_cast(fx.T.index, n)\n"
            "    step = arith.constant(1, index=True)\n"
            "    for loop_iv, _ in range(arith.constant(0, index=True), hi, step, init=[]):\n"
            "        out[arith.index_cast(fx.T.i32, loop_iv)] = 0.0\n",
            unsafe=True,
        ),
        Invalid(
            # Constant bounds, nothing carried, induction variable unused: range_constexpr.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor):\n"
            "    c0 = arith.index(0)\n"
            "    loop = scf.ForOp(c0, arith.index(3), arith.index(1))\n"
            "    with ir.InsertionPoint(loop.body):\n"
            "        fx.gpu.barrier()\n"
            "        scf.YieldOp([])\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor):\n"
            "    c0 = arith.index(0)\n"
            "    for _ in fx.range_constexpr(3):\n"
            "        fx.gpu.barrier()\n",
            unsafe=True,
        ),
        Invalid(
            # A raw i1 from a raw comparison (aiter's `arith.cmpi(...)` conditions): the rewriter
            # dispatches a Python `if` on any ir.Value to scf.if, as the raw op did.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(a, b):\n"
            "    ok = arith.cmpi(arith.CmpIPredicate.ult, a, b)\n"
            "    _if_ok = scf.IfOp(ok, results_=[], has_else=False)\n"
            "    with ir.InsertionPoint(_if_ok.then_block):\n"
            "        fx.gpu.barrier()\n"
            "        scf.YieldOp([])\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(a, b):\n"
            "    ok = arith.cmpi(arith.CmpIPredicate.ult, a, b)\n"
            "    if ok:\n"
            "        fx.gpu.barrier()\n",
            unsafe=True,
        ),
        Invalid(
            # An element of a list of raw conditions built in the function (aiter's
            # small_m_hgemm.py: `tile_actives[tile_i]`).
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith, range_constexpr\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    tid = fx.thread_idx.x\n"
            "    actives = [arith.cmpi(arith.CmpIPredicate.ult, tid + t, n) for t in range_constexpr(2)]\n"
            "    for t in range_constexpr(2):\n"
            "        if_t = scf.IfOp(actives[t], results_=[], has_else=False)\n"
            "        with ir.InsertionPoint(if_t.then_block):\n"
            "            out[tid + t] = 0.0\n"
            "            scf.YieldOp([])\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith, range_constexpr\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    tid = fx.thread_idx.x\n"
            "    actives = [arith.cmpi(arith.CmpIPredicate.ult, tid + t, n) for t in range_constexpr(2)]\n"
            "    for t in range_constexpr(2):\n"
            "        if actives[t]:\n"
            "            out[tid + t] = 0.0\n",
            unsafe=True,
        ),
        Invalid(
            # A condition of unknown type (a parameter): a Python `if` might be decided while
            # tracing, so no fix.
            "import flydsl.compiler as flyc\n"
            "from flydsl._mlir.dialects import scf\n"
            "from .common import _if_then\n"
            "@flyc.kernel\n"
            "def k(ok):\n"
            "    with _if_then(scf.IfOp(ok)):\n"
            "        pass\n",
            expected=None,
            message="not known to be an fx boolean or a raw `ir.Value`",
        ),
        Invalid(
            # An op with results: no fix.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "@flyc.kernel\n"
            "def k(x: fx.Int32, n: fx.Int32):\n"
            "    if_op = scf.IfOp((x < n).ir_value(), [fx.T.i32], has_else=True)\n"
            "    with ir.InsertionPoint(if_op.then_block):\n"
            "        scf.YieldOp([x.ir_value()])\n"
            "    with ir.InsertionPoint(if_op.else_block):\n"
            "        scf.YieldOp([n.ir_value()])\n"
            "    return if_op.results[0]\n",
            expected=None,
            message="has results",
        ),
        Invalid(
            # The body rebinds a variable defined before it and read after it: a Python `if`
            # would carry it, a local function would not set it: no fix.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\n"
            "from .common import _if_then\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, x: fx.Int32, n: fx.Int32):\n"
            "    y = x\n"
            "    with _if_then(scf.IfOp((x < n).ir_value())):\n"
            "        y = n\n"
            "    out[0] = y\n",
            expected=None,
            message="rebinds `y` (defined before it), which a Python `if` would carry out as an `scf.if` result; "
            "nor can its body become a local function: `y`, set in it, is read after it (line 10)",
        ),
        Invalid(
            # The body reads a variable and then rebinds it: as a local function it would read
            # an unbound local: no fix.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\n"
            "from .common import _if_then\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, x: fx.Int32, n: fx.Int32):\n"
            "    y = out\n"
            "    with _if_then(scf.IfOp((x < n).ir_value())):\n"
            "        y[0] = x\n"
            "        y = n\n",
            expected=None,
            message="it reads `y` (line 9) from before it and then rebinds it",
        ),
        Invalid(
            # A local that only the body uses, rebound there (aiter's small_m_hgemm.py reuses an
            # op's name): as a local function the body keeps it to itself.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\n"
            "from .common import _if_then\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, x: fx.Int32, n: fx.Int32):\n"
            "    v = x + 1\n"
            "    out[0] = v\n"
            "    with _if_then(scf.IfOp((x < n).ir_value())):\n"
            "        v = n + 2\n"
            "        out[1] = v\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, x: fx.Int32, n: fx.Int32):\n"
            "    v = x + 1\n"
            "    out[0] = v\n"
            "    def _then_branch():\n"
            "        v = n + 2\n"
            "        out[1] = v\n"
            "    if x < n:\n"
            "        _then_branch()\n",
            unsafe=True,
        ),
        Invalid(
            # A variable of the enclosing kernel, stored into in the body of a nested helper: a
            # Python `if` would have to carry it (aiter's splitk_hgemm.py: "initialized as
            # None"), so the body becomes a local function the `if` calls (guide §5).
            "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\nfrom flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    tid = fx.thread_idx.x\n"
            "    def zero(i: fx.Int32):\n"
            "        with _if_then(scf.IfOp(arith.unwrap(i < n))):\n"
            "            out[i] = 0.0\n"
            "    zero(tid)\n"
            "from kernels.common.scf_helpers import _if_then\n",
            expected="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    tid = fx.thread_idx.x\n"
            "    def zero(i: fx.Int32):\n"
            "        def _then_branch():\n"
            "            out[i] = 0.0\n"
            "        if i < n:\n"
            "            _then_branch()\n"
            "    zero(tid)\n",
            unsafe=True,
        ),
        Invalid(
            # A loop entered with __enter__() and left with __exit__() (aiter's moe_m_tile_map.py):
            # the body between them is indented under the Python `for`.
            "import flydsl.compiler as flyc\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "def helper(c0, n, c1, init):\n"
            "    loop = scf.ForOp(c0, n, c1, [init])\n"
            "    ip = ir.InsertionPoint(loop.body)\n"
            "    ip.__enter__()\n"
            "    acc = loop.inner_iter_args[0]\n"
            "\n"
            "    scf.YieldOp([acc + loop.induction_variable])\n"
            "    ip.__exit__(None, None, None)\n"
            "    return loop.results[0]\n",
            expected="import flydsl.compiler as flyc\n"
            "@flyc.jit\n"
            "def helper(c0, n, c1, init):\n"
            "    for loop_iv, loop_state in range(c0, n, c1, init=[init]):\n"
            "        acc = loop_state[0]\n"
            "\n"
            "        loop_results = yield [acc + loop_iv]\n"
            "    return loop_results\n",
            unsafe=True,
        ),
        Invalid(
            # Nothing carried, the closing yield dropped, the body indented.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    loop = scf.ForOp(arith.index(0), arith.index_cast(fx.T.index, n), arith.index(1))\n"
            "    loop_ip = ir.InsertionPoint(loop.body)\n"
            "    loop_ip.__enter__()\n"
            "    it = arith.index_cast(fx.T.i32, loop.induction_variable)\n"
            "    out[it] = 0.0\n"
            "    scf.YieldOp([])\n"
            "    loop_ip.__exit__(None, None, None)\n"
            "    out[0] = 1.0\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    for loop_iv, _ in range(arith.index(0), arith.index_cast(fx.T.index, n), arith.index(1), init=[]):\n"
            "        it = arith.index_cast(fx.T.i32, loop_iv)\n"
            "        out[it] = 0.0\n"
            "    out[0] = 1.0\n",
            unsafe=True,
        ),
        Invalid(
            # A local function may hold a `range(..., init=...)` loop: its `yield` is the
            # rewriter's scf.yield (aiter's fused_compress_attn_gfx1250.py).
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    def fill(i: fx.Int32):\n"
            "        ok = arith.cmpi(arith.CmpIPredicate.ult, i, n)\n"
            "        _if_ok = scf.IfOp(ok)\n"
            "        with ir.InsertionPoint(_if_ok.then_block):\n"
            "            for j, state in range(0, 4, 1, init=[i]):\n"
            "                acc = yield [state[0] + j]\n"
            "            out[i] = acc\n"
            "            scf.YieldOp([])\n"
            "    fill(fx.thread_idx.x)\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32):\n"
            "    def fill(i: fx.Int32):\n"
            "        ok = arith.cmpi(arith.CmpIPredicate.ult, i, n)\n"
            "        def _then_ok():\n"
            "            for j, state in range(0, 4, 1, init=[i]):\n"
            "                acc = yield [state[0] + j]\n"
            "            out[i] = acc\n"
            "        if ok:\n"
            "            _then_ok()\n"
            "    fill(fx.thread_idx.x)\n",
            unsafe=True,
        ),
        Invalid(
            # A then block holding a loop entered by hand: the loop's closing yield is not the
            # block's (aiter's moe_m_tile_map.py); both become Python control flow.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32, m: fx.Int32):\n"
            "    ok = arith.cmpi(arith.CmpIPredicate.ult, n, m)\n"
            "    if_ok = scf.IfOp(ok)\n"
            "    with ir.InsertionPoint(if_ok.then_block):\n"
            "        loop = scf.ForOp(arith.index(0), arith.index_cast(fx.T.index, n), arith.index(1))\n"
            "        loop_ip = ir.InsertionPoint(loop.body)\n"
            "        loop_ip.__enter__()\n"
            "        out[arith.index_cast(fx.T.i32, loop.induction_variable)] = 0.0\n"
            "        scf.YieldOp([])\n"
            "        loop_ip.__exit__(None, None, None)\n"
            "        scf.YieldOp([])\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "@flyc.kernel\n"
            "def k(out: fx.Tensor, n: fx.Int32, m: fx.Int32):\n"
            "    ok = arith.cmpi(arith.CmpIPredicate.ult, n, m)\n"
            "    if ok:\n"
            "        for loop_iv, _ in range(arith.index(0), arith.index_cast(fx.T.index, n), arith.index(1), init=[]):\n"
            "            out[arith.index_cast(fx.T.i32, loop_iv)] = 0.0\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            # A plain helper with a Python loop over range(): @flyc.jit would make it an
            # scf.for, so no fix.
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "from .common import _if_then\n"
            "def store_rows(out: fx.Tensor, i: fx.Int32, n: fx.Int32):\n"
            "    ok = arith.cmpi(arith.CmpIPredicate.ult, i, n)\n"
            "    with _if_then(scf.IfOp(ok)):\n"
            "        for r in range(4):\n"
            "            out[i * 4 + r] = 0.0\n",
            expected=None,
            message="`store_rows` would need `@flyc.jit`, and its `for` over `range(...)` (line 8)",
        ),
        Invalid(
            # ... or a Python `if` whose branch binds a name read after it.
            "import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\n"
            "from flydsl.expr import arith\n"
            "from .common import _if_then\n"
            "def store_one(out: fx.Tensor, i: fx.Int32, n: fx.Int32, wide: bool):\n"
            "    if wide:\n"
            "        v = 2.0\n"
            "    else:\n"
            "        v = 1.0\n"
            "    ok = arith.cmpi(arith.CmpIPredicate.ult, i, n)\n"
            "    with _if_then(scf.IfOp(ok)):\n"
            "        out[i] = v\n",
            expected=None,
            message="`v`, set under its `if` on line 6, is read after it (line 12)",
        ),
        Invalid(
            # The insertion point is used for more than entering and leaving: no fix.
            "from flydsl._mlir import ir\n"
            "from flydsl._mlir.dialects import scf\n"
            "def helper(c0, n, c1, init):\n"
            "    loop = scf.ForOp(c0, n, c1, [init])\n"
            "    ip = ir.InsertionPoint(loop.body)\n"
            "    ip.__enter__()\n"
            "    scf.YieldOp([loop.inner_iter_args[0]])\n"
            "    ip.__exit__(None, None, None)\n"
            "    ip.__enter__()\n"
            "    return loop.results[0]\n",
            expected=None,
            count=1,
            message="`ip` is used other than by `__enter__()` and `__exit__()`",
        ),
        Invalid(
            # _if_then on an op built elsewhere (a parameter): reported at the call.
            "from .common import _if_then\n"
            "def body(if_op, out, i):\n"
            "    with _if_then(if_op):\n"
            "        out[i] = 0.0\n",
            expected=None,
            line=3,
            column=10,
        ),
    ]


def _if_arguments(node: ast.Call):
    args = list(node.args)
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in node.keywords):
        return None, None, False
    cond = args[0] if args else keywords.get("cond")
    results = args[1] if len(args) > 1 else keywords.get("results_")
    has_else = keywords.get("has_else", keywords.get("hasElse"))
    if has_else is not None and not isinstance(has_else, ast.Constant):
        return None, None, False
    if set(keywords) - {"cond", "results_", "has_else", "hasElse", "loc", "ip"}:
        return None, None, False
    return cond, results, bool(has_else.value) if has_else is not None else False


def _for_arguments(node: ast.Call):
    args = list(node.args)
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in node.keywords):
        return None, None
    if set(keywords) - {"lower_bound", "upper_bound", "step", "iter_args", "loc", "ip"}:
        return None, None
    names = ("lower_bound", "upper_bound", "step")
    bounds = [args[i] if i < len(args) else keywords.get(n) for i, n in enumerate(names)]
    if any(b is None for b in bounds):
        return None, None
    init = args[3] if len(args) > 3 else keywords.get("iter_args")
    return tuple(bounds), init


def _dynamic_condition(kind) -> bool:
    """A condition FlyDSL's rewriter turns into `scf.if` (`ReplaceIfWithDispatch._is_dynamic`):
    an fx boolean, or a raw `ir.Value` (the `i1` the raw `scf.IfOp` was given)."""
    return kind.name == "fx.Boolean" or kind.is_raw


def _still_recorded(binding, site: ast.stmt, parent_of: dict) -> bool:
    """Whether FlyDSL's rewriter still has ``binding`` among its symbols at ``site``: a name
    bound in a `for` loop (its target too) or in a branch of an `if` that is not
    `const_expr(...)`, or in a `while`, is forgotten after that region (`control_flow_scope`)."""
    node, parent = binding.node, parent_of.get(id(binding.node))
    while parent is not None and parent is not binding.scope.node:
        region = None
        if isinstance(parent, (ast.For, ast.AsyncFor)):
            region = [parent]
        elif isinstance(parent, ast.While) or (isinstance(parent, ast.If) and not _const_expr_test(parent)):
            region = parent.body if node in parent.body else parent.orelse if node in parent.orelse else None
        if region and not any(_within(site, stmt) for stmt in region):
            return False
        node, parent = parent, parent_of.get(id(parent))
    return True


def _const_expr_test(node: ast.If) -> bool:
    """The rewriter's own test (`_is_constexpr`): a call of something named `const_expr`."""
    test = node.test
    return isinstance(test, ast.Call) and cf._called(test, "const_expr")


@dataclass(frozen=True)
class _Span:
    """Where a run of statements starts and ends (for `_within` / `_after`)."""

    first: ast.stmt
    last: ast.stmt

    @property
    def lineno(self):
        return self.first.lineno

    @property
    def col_offset(self):
        return self.first.col_offset

    @property
    def end_lineno(self):
        return self.last.end_lineno

    @property
    def end_col_offset(self):
        return self.last.end_col_offset


@dataclass(frozen=True)
class _LoopRegion:
    """A raw loop's body: under `with ir.InsertionPoint(loop.body):` (``entered`` None), or
    between `ip.__enter__()` (``entered``) and `ip.__exit__(...)` (``end``)."""

    body: list
    opener: ast.stmt  # the `with`, or `ip = ir.InsertionPoint(loop.body)`
    span: object  # the body, for uses inside it
    end: ast.stmt  # what the loop's results are read after
    entered: ast.stmt | None = None

    def header_edits(self, rule: "RawScf", header: str, keep: list) -> list[Edit]:
        """The header edit; for the `__enter__()` form also the edits that remove the
        enter/exit calls and indent ``keep`` (the statements that stay in the body)."""
        if self.entered is None:
            return [rule._header(self.opener, header)]
        index = rule.model.index
        edits = [
            rule.edit(rule.ctx.range(self.opener), f"{header}:"),
            rule._delete_statement(self.entered),
            rule._delete_statement(self.end),
        ]
        # One more level after the block's own indentation, as written (tabs stay tabs).
        opener = index.line_text(self.opener.lineno - 1)
        base = opener[: len(opener) - len(opener.lstrip())]
        unit = "\t" if base.endswith("\t") else " " * 4
        for line in range(keep[0].lineno - 1, keep[-1].end_lineno):
            text = index.line_text(line)
            if not text.strip():
                continue  # blank lines stay empty
            if not text.startswith(base):
                raise _NoFix(f"line {line + 1} is indented differently from its block")
            edits.append(rule.edit(Range(Position(line, len(base)), Position(line, len(base))), unit))
        return edits


def _method_call(stmt, name: str, method: str) -> bool:
    """``stmt`` is the expression statement `name.method(...)`."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == method
        and isinstance(stmt.value.func.value, ast.Name)
        and stmt.value.func.value.id == name
    )


def _bound_in(node: ast.If) -> set[str]:
    """Names the branches of ``node`` bind (not in functions defined there)."""
    return {
        n.id
        for n in _own_nodes([*node.body, *node.orelse])
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _own_nodes(body: list, loops: bool = True):
    """The nodes of ``body``, not those of functions, lambdas or classes defined in it (nor,
    with ``loops=False``, of `for` loops: the `yield` of a `range(..., init=...)` loop is
    the rewriter's `scf.yield`, not the function's)."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES) and (loops or not isinstance(node, ast.For)):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _outside_entered(body: list):
    """The statements of ``body`` not between `ip.__enter__()` and `ip.__exit__(...)` (a loop
    body entered by hand, whose closing `scf.YieldOp` belongs to the loop)."""
    entered = None
    for stmt in body:
        call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
        target = call.func if call is not None and isinstance(call.func, ast.Attribute) else None
        name = target.value.id if target is not None and isinstance(target.value, ast.Name) else None
        if entered is None and name and target.attr == "__enter__":
            entered = name
        elif entered is not None and name == entered and target.attr == "__exit__":
            entered = None
        elif entered is None:
            yield stmt


def _loop_exits(body: list):
    """`break` / `continue` in ``body`` that leave a loop around it."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            yield node
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            stack.extend(node.orelse)  # a loop's own body may break out of it
        elif not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _single_name(assign: ast.Assign) -> bool:
    return len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)


def _next(body: list, index: int):
    return body[index + 1] if index + 1 < len(body) else None


def _empty_list(node) -> bool:
    return isinstance(node, (ast.List, ast.Tuple)) and not node.elts


def _within(node: ast.AST, stmt: ast.stmt) -> bool:
    start = (stmt.lineno, stmt.col_offset)
    end = (stmt.end_lineno, stmt.end_col_offset)
    return start <= (node.lineno, node.col_offset) <= end


def _after(node: ast.AST, stmt: ast.stmt) -> bool:
    return (node.lineno, node.col_offset) > (stmt.end_lineno, stmt.end_col_offset)


def _range_args(lo: int, hi: int, step: int) -> str:
    if step == 1:
        return str(hi) if lo == 0 else f"{lo}, {hi}"
    return f"{lo}, {hi}, {step}"

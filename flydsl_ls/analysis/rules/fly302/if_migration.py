"""`scf.IfOp` -> a Python `if`: the plan and its edits."""

import ast
import re

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.semantic import nodes_under
from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.analysis.rules import _control_flow_support as cf
from flydsl_ls.analysis.rules.fly302.syntax import (
    CARRIABLE,
    LEAVES_FUNCTION,
    RECORDED,
    UNWRAPS,
    NoFix,
    const_expr_test,
    dynamic_condition,
    if_arguments,
    loop_exits,
    next_statement,
    own_nodes,
    single_name,
    still_recorded,
    within,
)


class IfMigration:
    """The `scf.IfOp` half of `RawScf`."""

    def _if_fix(self, node: ast.Call, function):
        cond, results, has_else = if_arguments(node)
        if cond is None:
            raise NoFix("its arguments are not the `scf.IfOp(cond, ...)` form")
        if results is not None and not (isinstance(results, ast.List) and not results.elts):
            raise NoFix("the op has results (a Python `if` computes its own carried state)")
        parents = self.ctx.parents
        edits: list[Edit] = []
        op_name = None
        parent = parents[-1] if parents else None
        if isinstance(parent, ast.Call) and self._is_if_then(parent.func) and node in parent.args:
            item = parents[-2] if len(parents) > 1 else None
            with_stmt = parents[-3] if len(parents) > 2 else None
            if not (isinstance(item, ast.withitem) and isinstance(with_stmt, ast.With)):
                raise NoFix("`_if_then(...)` is not used as a `with` statement")
            then_with, else_with = with_stmt, None
            if has_else:
                raise NoFix("the op has an else block that is filled elsewhere")
        elif isinstance(parent, ast.Assign) and parent.value is node and single_name(parent):
            name = op_name = parent.targets[0].id
            body, index = self._block_of(parent)
            then_with = next_statement(body, index)
            if not self._is_then_with(then_with, name):
                raise NoFix(f"the statement after it is not `with _if_then({name}):` or "
                             f"`with ir.InsertionPoint({name}.then_block):`")
            else_with = next_statement(body, index + 1)
            if not self._is_block_with(else_with, name, "else_block"):
                else_with = None
            if has_else and else_with is None:
                raise NoFix("its else block is not filled right after the then block")
            allowed = {id(n) for w in (then_with, else_with) if w for n in nodes_under(w.items[0].context_expr)}
            binding = self._binding_at(parent.targets[0])
            for use in self.model.uses_of(binding) if binding else ():
                if id(use) not in allowed:
                    raise NoFix(f"`{name}` is used elsewhere (line {use.lineno})")
            edits.append(self._delete_statement(parent))
        else:
            raise NoFix("the op is not opened by a `with` block right where it is built")
        inner = self._unwrapped(cond)
        hint = (inner.id if isinstance(inner, ast.Name) else op_name or "branch").strip("_")
        kind = self._condition_kind(inner)
        if not dynamic_condition(kind):
            raise NoFix(
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
        except NoFix as direct:
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
                raise NoFix(f"{direct}; nor can its body become a local function: {why}")
        last = blocks[-1]
        index = self.model.index
        indent = index.indentation(then_with.lineno - 1)
        inner = index.indentation(then_with.body[0].lineno - 1)
        rest = index.line_text(last.end_lineno - 1).encode("utf-8")[last.end_col_offset :]
        rest = rest.decode("utf-8", "replace")
        if not re.fullmatch(r"\s*(#.*)?", rest):
            raise NoFix(f"{direct}; and the block shares its last line with other code")
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
        for node in own_nodes(with_stmt.body, loops=False):
            if isinstance(node, LEAVES_FUNCTION):
                return f"it has a `{type(node).__name__.lower()}` (line {node.lineno})"
        for node in loop_exits(with_stmt.body):
            kind = type(node).__name__.lower()
            return f"it has a `{kind}` of a loop around it (line {node.lineno})"
        inside = lambda n: within(n, with_stmt)  # noqa: E731
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
        for node in own_nodes(with_stmt.body):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in local:
                if any(not inside(b.node) for b in self.model.reaching_bindings(node)):
                    return f"it reads `{node.id}` (line {node.lineno}) from before it and then rebinds it"
        # Control flow inside the body carries names of the function around it, which would
        # become variables of an enclosing function (the trace fails).
        around = [scope, *outer]

        def bound_around(name, scopes):
            return any(
                b.kind in RECORDED and not inside(b.node) for s in scopes for b in s.bindings.get(name, ())
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
        for node in own_nodes(body):
            if isinstance(node, ast.If) and not const_expr_test(node):
                yield [*node.body, *node.orelse], False
            elif isinstance(node, ast.While):
                yield [node.test, *node.body, *node.orelse], False
            elif isinstance(node, ast.For) and cf.called(node.iter, "range") and not any(
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
                if self.model.resolve(cond.func) in UNWRAPS:
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
                if b.kind in RECORDED
                and b.position < start
                and still_recorded(b, with_stmt, parent_of)
            ]

        for stmt in with_stmt.body:
            for sub in nodes_under(stmt):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and earlier(scope, sub.id):
                    raise NoFix(
                        f"the body rebinds `{sub.id}` (defined before it), which a Python `if` "
                        "would carry out as an `scf.if` result"
                    )
        for name in sorted(cf.carried_names(with_stmt.body)):
            mine = earlier(scope, name)
            if mine:
                kinds = [self.model.binding_type(b) for b in mine]
                if not all(k is not None and (k.is_fx_scalar or k.name in CARRIABLE) for k in kinds):
                    last = kinds[-1]
                    shown = last.describe() if last is not None and last.known else "type unknown"
                    raise NoFix(
                        f"the body stores into or calls a method on `{name}` ({shown}), which a "
                        "Python `if` would carry out as an `scf.if` result, and only fx values and "
                        "tensors can be carried"
                    )
            elif any(earlier(s, name) for s in outer):
                raise NoFix(
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

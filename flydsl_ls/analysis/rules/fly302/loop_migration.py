"""`scf.ForOp` -> `for ... in range(..., init=[...])`: the plan and its edits."""

import ast
from dataclasses import dataclass

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.analysis.rules.fly302.syntax import (
    INDEX_CONSTANTS,
    INSERTION_POINT,
    NoFix,
    after,
    empty_list,
    for_arguments,
    method_call,
    next_statement,
    range_args,
    single_name,
    within,
)


class LoopMigration:
    """The `scf.ForOp` half of `RawScf`."""

    def _for_fix(self, node: ast.Call, function):
        parent = self.ctx.parent
        if not (isinstance(parent, ast.Assign) and parent.value is node and single_name(parent)):
            raise NoFix("the op is not assigned to a name")
        bounds, init = for_arguments(node)
        if bounds is None:
            raise NoFix("its arguments are not the `scf.ForOp(lo, hi, step[, [init...]])` form")
        if init is not None and not isinstance(init, ast.List):
            raise NoFix("the carried values are not a list literal")
        carried = init is not None and bool(init.elts)
        name = parent.targets[0].id
        body, index = self._block_of(parent)
        region = self._loop_region(body, index, name)
        binding = self._binding_at(parent.targets[0])
        parent_of = self.model.parent_map(function)
        iv_uses, state_uses, result_uses = [], [], []
        for use in self.model.uses_of(binding) if binding else ():
            attr = parent_of.get(id(use))
            inside = within(use, region.span)
            if not isinstance(attr, ast.Attribute):
                raise NoFix(f"`{name}` is used directly (line {use.lineno})")
            if attr.attr == "body" and any(attr is n for n in ast.walk(region.opener)):
                continue
            if attr.attr == "induction_variable" and inside:
                iv_uses.append(attr)
            elif attr.attr == "inner_iter_args" and inside and carried:
                state_uses.append(attr)
            elif attr.attr in ("results", "result") and not inside and after(use, region.end) and carried:
                result_uses.append((attr, parent_of.get(id(attr))))
            else:
                raise NoFix(f"`{name}.{attr.attr}` is used in a way the fix cannot follow (line {use.lineno})")
        last = region.body[-1]
        closing = self._yield_call(last)
        for stmt in region.body[:-1]:
            if self._yield_call(stmt) is not None:
                raise NoFix("the body yields before its last statement")
        scope = self.model.function_scope(function)
        base = self._base_name(name, binding, scope)
        iv = self._fresh(f"{base}_iv", scope) if iv_uses else "_"
        state = self._fresh(f"{base}_state", scope)
        results = self._fresh(f"{base}_results", scope)
        lo, hi, step = bounds
        edits = [self._delete_statement(parent)]
        if carried:
            if closing is None or len(closing.args) != 1 or closing.keywords:
                raise NoFix("the body does not end with `scf.YieldOp([...])` of the carried values")
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
            if closing is not None and (closing.keywords or any(not empty_list(a) for a in closing.args)):
                raise NoFix("the body yields values but the loop carries none")
            constant = [self._int_constant(b) for b in bounds]
            if not iv_uses and all(c is not None for c in constant):
                header = f"for _ in {self._range_constexpr()}({range_args(*constant)})"
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
        opener = next_statement(block, index)
        if self._is_block_with(opener, name, "body"):
            self._check_with(opener)
            return _LoopRegion(opener.body, opener, opener, opener)
        entered = next_statement(block, index + 1)
        if not (
            isinstance(opener, ast.Assign)
            and single_name(opener)
            and self._is_block_call(opener.value, name, "body")
            and method_call(entered, opener.targets[0].id, "__enter__")
        ):
            raise NoFix(
                f"the statement after it is not `with ir.InsertionPoint({name}.body):` or "
                f"`ip = ir.InsertionPoint({name}.body)` + `ip.__enter__()`"
            )
        ip = opener.targets[0].id
        end = next((i for i in range(index + 3, len(block)) if method_call(block[i], ip, "__exit__")), None)
        if end is None or end == index + 3:
            raise NoFix(f"`{ip}.__exit__(...)` does not close a body in the same block")
        binding = self._binding_at(opener.targets[0])
        if binding is None or len(self.model.uses_of(binding)) != 2:
            raise NoFix(f"`{ip}` is used other than by `__enter__()` and `__exit__()`")
        body = block[index + 3 : end]
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno != node.lineno:
                raise NoFix(f"the body has a string over several lines (line {node.lineno}), which indenting it would change")
        return _LoopRegion(body, opener, Span(body[0], body[-1]), block[end], entered)

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
                raise NoFix("`.result` of a loop with several results")
            return self.edit(self.ctx.range(attr), results)
        if isinstance(outer, ast.Subscript) and outer.value is attr:
            key = outer.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, int) and not isinstance(key.value, bool):
                k = key.value if key.value >= 0 else count + key.value
                if 0 <= k < count:
                    return self.edit(self.ctx.range(outer), results if count == 1 else f"{results}[{k}]")
            raise NoFix("a loop result is indexed by something other than a constant")
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
            raise NoFix("the file does not import flydsl.expr")
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
        if symbol not in INDEX_CONSTANTS:
            return None
        if symbol == "fx.arith.constant" and not any(
            k.arg == "index" and isinstance(k.value, ast.Constant) and k.value.value is True for k in expr.keywords
        ):
            return None
        value = expr.args[0]
        if isinstance(value, ast.Constant) and type(value.value) is int:
            return value.value
        return None


@dataclass(frozen=True)
class Span:
    """Where a run of statements starts and ends (for `within` / `after`)."""

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

    def header_edits(self, rule: "LoopMigration", header: str, keep: list) -> list[Edit]:
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
                raise NoFix(f"line {line + 1} is indented differently from its block")
            edits.append(rule.edit(Range(Position(line, len(base)), Position(line, len(base))), unit))
        return edits

"""`scf.WhileOp` + `scf.ConditionOp` + `scf.YieldOp` -> a Python `while`: the plan and its edits.

The shape FlyDSL's own polling loops had (custom_all_reduce_kernel.py before its maintainers
rewrote them as Python `while` loops):

    loop = scf.WhileOp([T.i32], [init])
    before = ir.Block.create_at_start(loop.before, [T.i32])
    after = ir.Block.create_at_start(loop.after, [T.i32])
    with ir.InsertionPoint(before):
        cur = before.arguments[0]
        ok = <condition on cur>            # optional
        scf.ConditionOp(_raw(ok), [cur])
    with ir.InsertionPoint(after):
        <body>
        scf.YieldOp([<next>])

becomes

    cur = init
    while <condition on cur>:
        <body>
        cur = <next>
"""

import ast

from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.analysis.rules import _control_flow_support as cf
from flydsl_ls.analysis.rules._raw_dialect_support import is_raw_builder
from flydsl_ls.analysis.rules.fly302.syntax import INSERTION_POINT, UNWRAPS, NoFix, single_name

WHILE_OP, CONDITION_OP = "mlir.scf.WhileOp", "mlir.scf.ConditionOp"
CREATE_BLOCK = "mlir.ir.Block.create_at_start"


class WhileMigration:
    """The `scf.WhileOp` part of `RawScf`."""

    def _while_fix(self, node: ast.Call, function):
        parent = self.ctx.parent
        if not (isinstance(parent, ast.Assign) and parent.value is node and single_name(parent)):
            raise NoFix("the op is not assigned to a name")
        others = [d for d in function.decorator_list if not self._jit_decorator(d)]
        if others:
            raise NoFix(
                f"`{function.name}` is decorated with `@{ast.unparse(others[0])}`, which may keep a `while` "
                "as Python: decorate it with `@flyc.jit` first"
            )
        if node.keywords or len(node.args) != 2 or not all(isinstance(a, ast.List) for a in node.args):
            raise NoFix("its arguments are not the `scf.WhileOp([types], [inits])` form")
        types, inits = node.args
        if len(types.elts) != 1 or len(inits.elts) != 1:
            raise NoFix("it carries more or fewer than one value")
        name = parent.targets[0].id
        body, index = self._block_of(parent)
        statements = body[index + 1 : index + 5]
        if len(statements) != 4:
            raise NoFix("the blocks and their bodies do not follow the op")
        blocks = {}
        for stmt in statements[:2]:
            region, block = self._created_block(stmt, name)
            blocks[region] = block
        if set(blocks) != {"before", "after"}:
            raise NoFix("`before`/`after` blocks are not created right after the op")
        before_with, after_with = statements[2:]
        if not (self._entered(before_with, blocks["before"]) and self._entered(after_with, blocks["after"])):
            raise NoFix("the blocks are not entered with `ir.InsertionPoint(...)` right after they are made")
        current, condition, hidden = self._condition(before_with.body, blocks["before"])
        self._check_uses(function, parent, statements, blocks, name, hidden)
        self._check_typed_uses(current, [*before_with.body[1:-1], *after_with.body[:-1]], condition)
        *loop_body, closing = after_with.body
        yielded = self._yielded(closing)
        indent = self.model.index.indentation(parent.lineno - 1)
        lines = [f"{indent}{current} = {self.text(inits.elts[0])}"]
        lines += self._comments(before_with, indent)
        lines.append(f"{indent}while {self.text(condition)}:")
        if loop_body:
            first, last = loop_body[0], loop_body[-1]
            text = self.model.index.slice(Range(Position(first.lineno - 1, 0), Position(last.end_lineno, 0)))
            lines.append(text.rstrip("\n"))
        lines.append(f"{self.model.index.indentation(closing.lineno - 1)}{current} = {self.text(yielded)}")
        end = Position(after_with.end_lineno, 0)
        edit = self.edit(Range(Position(parent.lineno - 1, 0), end), "\n".join(lines) + "\n")
        return [edit], "Use a Python while"

    def _jit_decorator(self, decorator: ast.expr) -> bool:
        return cf.decorator_symbol(self.model, decorator) in cf.JIT_DECORATORS

    def _created_block(self, stmt, loop: str) -> tuple[str, str]:
        """`b = ir.Block.create_at_start(loop.before, [T])` -> ("before", "b")."""
        if not (isinstance(stmt, ast.Assign) and single_name(stmt) and isinstance(stmt.value, ast.Call)):
            raise NoFix("`before`/`after` blocks are not created right after the op")
        call = stmt.value
        if self.model.resolve(call.func) != CREATE_BLOCK or len(call.args) != 2 or call.keywords:
            raise NoFix("`before`/`after` blocks are not created right after the op")
        region = call.args[0]
        if not (
            isinstance(region, ast.Attribute) and isinstance(region.value, ast.Name)
            and region.value.id == loop and region.attr in ("before", "after")
        ):
            raise NoFix("`before`/`after` blocks are not created right after the op")
        return region.attr, stmt.targets[0].id

    def _entered(self, stmt, block: str) -> bool:
        if not isinstance(stmt, ast.With) or len(stmt.items) != 1 or stmt.items[0].optional_vars is not None:
            return False
        call = stmt.items[0].context_expr
        return (
            isinstance(call, ast.Call) and self.model.resolve(call.func) == INSERTION_POINT
            and len(call.args) == 1 and isinstance(call.args[0], ast.Name) and call.args[0].id == block
        )

    def _condition(self, statements: list, block: str):
        """(carried name, condition expression, the condition's own local or None)."""
        first, *middle, last = statements if len(statements) >= 2 else (None, None)
        if not (
            isinstance(first, ast.Assign) and single_name(first)
            and isinstance(first.value, ast.Subscript) and ast.unparse(first.value) == f"{block}.arguments[0]"
        ):
            raise NoFix("the `before` block does not start with `x = block.arguments[0]`")
        current = first.targets[0].id
        call = last.value if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) else None
        if call is None or self.model.resolve(call.func) != CONDITION_OP or len(call.args) != 2 or call.keywords:
            raise NoFix("the `before` block does not end with `scf.ConditionOp(cond, [x])`")
        forwarded = call.args[1]
        if not (isinstance(forwarded, ast.List) and len(forwarded.elts) == 1
                and isinstance(forwarded.elts[0], ast.Name) and forwarded.elts[0].id == current):
            raise NoFix("the condition does not forward the carried value as it is")
        condition = self._unwrapped(call.args[0])
        if not middle:
            return current, condition, None
        if len(middle) != 1 or not (isinstance(middle[0], ast.Assign) and single_name(middle[0])):
            raise NoFix("the `before` block computes more than the condition, which a `while` test cannot hold")
        local = middle[0].targets[0].id
        if not (isinstance(condition, ast.Name) and condition.id == local):
            raise NoFix("the `before` block computes more than the condition, which a `while` test cannot hold")
        return current, middle[0].value, local

    def _unwrapped(self, expr: ast.expr) -> ast.expr:
        """The condition without `_raw(...)`/`arith.unwrap(...)`/`.ir_value()`: the `while`
        takes the typed value (the raw op was given its `i1`)."""
        while True:
            if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
                symbol = self.model.resolve(expr.func)
                helper = isinstance(expr.func, ast.Name) and expr.func.id in ("_raw", "_to_raw", "_unwrap")
                if symbol in UNWRAPS or helper:
                    expr = expr.args[0]
                    continue
            if (isinstance(expr, ast.Call) and not expr.args and not expr.keywords
                    and isinstance(expr.func, ast.Attribute) and expr.func.attr == "ir_value"):
                expr = expr.func.value
                continue
            return expr

    def _yielded(self, closing) -> ast.expr:
        call = closing.value if isinstance(closing, ast.Expr) and isinstance(closing.value, ast.Call) else None
        if call is None or self.model.resolve(call.func) != "mlir.scf.YieldOp" or len(call.args) != 1 or call.keywords:
            raise NoFix("the `after` block does not end with `scf.YieldOp([next])`")
        values = call.args[0]
        if not isinstance(values, ast.List) or len(values.elts) != 1:
            raise NoFix("the `after` block does not yield one value")
        return values.elts[0]

    def _check_uses(self, function, assign, statements, blocks, loop, local) -> None:
        """The loop, its blocks and the condition's local are used only by the shape itself;
        the body does not read its block argument."""
        end = statements[-1]
        owned = {loop, *blocks.values()} | ({local} if local else set())
        for node in ast.walk(function):
            if not isinstance(node, ast.Name) or node.id not in owned:
                continue
            if not (assign.lineno <= node.lineno <= end.end_lineno):
                raise NoFix(f"`{node.id}` is used outside the loop's blocks (line {node.lineno})")
        after_block = blocks["after"]
        for node in ast.walk(statements[3]):
            if isinstance(node, ast.Name) and node.id == after_block and node is not statements[3].items[0].context_expr.args[0]:
                raise NoFix("the `after` block reads its own argument")
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return)) for n in ast.walk(statements[3])):
            raise NoFix("the body leaves the block (`break`/`continue`/`return`)")

    def _check_typed_uses(self, current: str, statements: list, condition: ast.expr) -> None:
        """The `while` hands the test and the body the carried value as an fx value (the
        rewriter wraps a loop's state), where the raw blocks had a raw block argument: a raw
        builder given it fails to trace (aiter's splitk_hgemm: `arith.CmpIOp(eq, cur, c0)`).
        Operators, fx functions and a helper that only wraps it in one (`_u(v)` returning
        `fx.Uint32(v)`) take either."""
        roots = [*statements, condition]
        for root in roots:
            parents = {id(c): p for p in ast.walk(root) for c in ast.iter_child_nodes(p)}
            for use in ast.walk(root):
                if not (isinstance(use, ast.Name) and use.id == current and isinstance(use.ctx, ast.Load)):
                    continue
                parent = parents.get(id(use))
                if isinstance(parent, (ast.BinOp, ast.Compare, ast.UnaryOp, ast.BoolOp)):
                    continue
                if isinstance(parent, ast.Call) and use is not parent.func and self._takes_fx(parent.func):
                    continue
                what = f"`{ast.unparse(parent.func)}`" if isinstance(parent, ast.Call) else "code the fix cannot follow"
                raise NoFix(
                    f"`{current}` reaches {what} (line {use.lineno}), which may need the raw value: the "
                    "`while` carries it as an fx value"
                )

    def _takes_fx(self, func: ast.expr) -> bool:
        binding = self.model.binding_of(func) if isinstance(func, ast.Name) else None
        helper = binding.node if binding is not None and binding.kind == "def" else None
        if helper is None:
            symbol = self.model.resolve(func) or ""
            last = symbol.rpartition(".")[2]
            op_class = last[:1].isupper() and last.endswith("Op")  # `arith.CmpIOp`: MLIR's own builder
            return symbol.startswith("fx.") and not is_raw_builder(symbol) and not op_class
        if not isinstance(helper, ast.FunctionDef) or len(helper.args.args) != 1:
            return False
        body = helper.body[1:] if ast.get_docstring(helper) is not None else helper.body
        returned = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
        if not (
            isinstance(returned, ast.Call) and len(returned.args) == 1 and not returned.keywords
            and isinstance(returned.args[0], ast.Name) and returned.args[0].id == helper.args.args[0].arg
        ):
            return False
        inner = self.model.binding_of(returned.func) if isinstance(returned.func, ast.Name) else None
        return (inner is None or inner.kind != "def") and self._takes_fx(returned.func)

    def _comments(self, with_stmt: ast.With, indent: str) -> list[str]:
        """The `before` block's comment lines, kept above the `while`."""
        index = self.model.index
        kept = []
        for line in range(with_stmt.lineno, with_stmt.end_lineno):
            text = index.line_text(line).strip()
            if text.startswith("#"):
                kept.append(f"{indent}{text}")
        return kept

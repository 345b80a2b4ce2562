"""FLY302's vocabulary: the raw ops it knows and what it reads off the syntax tree."""

import ast

from flydsl_ls.analysis.model import fxtypes as T
from flydsl_ls.analysis.rules import _control_flow_support as cf

IF_OP, FOR_OP, YIELD_OP = "mlir.scf.IfOp", "mlir.scf.ForOp", "mlir.scf.YieldOp"
INSERTION_POINT = "mlir.ir.InsertionPoint"
# Wrappers that only turn a typed value into a raw one: `if` takes the typed value itself.
UNWRAPS = {
    "fx.arith.unwrap",
    "fx.arith._to_raw",
    "fx.arith.ArithValue",
    "fx.as_ir_value",
    "fx.arith.as_ir_value",
    "shim.tensor_shim._to_raw",
}
INDEX_CONSTANTS = {"fx.arith.index", "fx.arith.constant", "fx.Index"}
# Bindings FlyDSL's rewriter records as symbols (so it carries them through control flow).
RECORDED = {"assign", "augassign", "annassign", "param", "for", "with"}
# What it can carry through an `scf.if` and give back unchanged (fx scalars too).
CARRIABLE = {T.TENSOR, T.VECTOR}
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# Statements that do something else inside a function than in the block they came from.
LEAVES_FUNCTION = (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)

class NoFix(Exception):
    """Why a site gets a diagnostic without a fix."""


def if_arguments(node: ast.Call):
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


def for_arguments(node: ast.Call):
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


def dynamic_condition(kind) -> bool:
    """A condition FlyDSL's rewriter turns into `scf.if` (`ReplaceIfWithDispatch._is_dynamic`):
    an fx boolean, or a raw `ir.Value` (the `i1` the raw `scf.IfOp` was given)."""
    return kind.name == "fx.Boolean" or kind.is_raw


def still_recorded(binding, site: ast.stmt, parent_of: dict) -> bool:
    """Whether FlyDSL's rewriter still has ``binding`` among its symbols at ``site``: a name
    bound in a `for` loop (its target too) or in a branch of an `if` that is not
    `const_expr(...)`, or in a `while`, is forgotten after that region (`control_flow_scope`)."""
    node, parent = binding.node, parent_of.get(id(binding.node))
    while parent is not None and parent is not binding.scope.node:
        region = None
        if isinstance(parent, (ast.For, ast.AsyncFor)):
            region = [parent]
        elif isinstance(parent, ast.While) or (isinstance(parent, ast.If) and not const_expr_test(parent)):
            region = parent.body if node in parent.body else parent.orelse if node in parent.orelse else None
        if region and not any(within(site, stmt) for stmt in region):
            return False
        node, parent = parent, parent_of.get(id(parent))
    return True


def const_expr_test(node: ast.If) -> bool:
    """The rewriter's own test (`_is_constexpr`): a call of something named `const_expr`."""
    test = node.test
    return isinstance(test, ast.Call) and cf.called(test, "const_expr")


def method_call(stmt, name: str, method: str) -> bool:
    """``stmt`` is the expression statement `name.method(...)`."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr == method
        and isinstance(stmt.value.func.value, ast.Name)
        and stmt.value.func.value.id == name
    )


def bound_in(node: ast.If) -> set[str]:
    """Names the branches of ``node`` bind (not in functions defined there)."""
    return {
        n.id
        for n in own_nodes([*node.body, *node.orelse])
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def own_nodes(body: list, loops: bool = True):
    """The nodes of ``body``, not those of functions, lambdas or classes defined in it (nor,
    with ``loops=False``, of `for` loops: the `yield` of a `range(..., init=...)` loop is
    the rewriter's `scf.yield`, not the function's)."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES) and (loops or not isinstance(node, ast.For)):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def outside_entered(body: list):
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


def loop_exits(body: list):
    """`break` / `continue` in ``body`` that leave a loop around it."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            yield node
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            stack.extend(node.orelse)  # a loop's own body may break out of it
        elif not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def single_name(assign: ast.Assign) -> bool:
    return len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)


def next_statement(body: list, index: int):
    return body[index + 1] if index + 1 < len(body) else None


def empty_list(node) -> bool:
    return isinstance(node, (ast.List, ast.Tuple)) and not node.elts


def within(node: ast.AST, stmt: ast.stmt) -> bool:
    start = (stmt.lineno, stmt.col_offset)
    end = (stmt.end_lineno, stmt.end_col_offset)
    return start <= (node.lineno, node.col_offset) <= end


def after(node: ast.AST, stmt: ast.stmt) -> bool:
    return (node.lineno, node.col_offset) > (stmt.end_lineno, stmt.end_col_offset)


def range_args(lo: int, hi: int, step: int) -> str:
    if step == 1:
        return str(hi) if lo == 0 else f"{lo}, {hi}"
    return f"{lo}, {hi}, {step}"

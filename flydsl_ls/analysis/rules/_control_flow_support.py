"""Shared by the control-flow rules (FLY302, FLY501, FLY701): where FlyDSL's AST rewriter
runs, and the `@flyc.jit` boundary a plain helper needs.

`ASTRewriter.transform` rewrites a `@flyc.kernel` / `@flyc.jit` function *and every
function nested in it* (it parses the whole source of the decorated function). A
module-level helper called from a kernel is not rewritten: its Python `if` on an fx
value, or its `yield`, runs as plain Python.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.rewrite import module_alias
from flydsl_ls.analysis.model.semantic import SemanticModel, nodes_under
from flydsl_ls.analysis.model.text import Position, Range

JIT_DECORATORS = {"flyc.kernel", "flyc.jit"}
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def decorator_symbol(model: SemanticModel, decorator: ast.expr) -> str | None:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return model.resolve(target)


def is_jit_function(model: SemanticModel, function: ast.AST) -> bool:
    """Decorated with `@flyc.kernel` / `@flyc.jit` (any alias, with or without arguments)."""
    if not isinstance(function, FUNCTIONS):
        return False
    return any(decorator_symbol(model, d) in JIT_DECORATORS for d in function.decorator_list)


def functions_of(parents: list[ast.AST]) -> list[ast.AST]:
    return [p for p in parents if isinstance(p, (*FUNCTIONS, ast.Lambda))]


def rewritten(model: SemanticModel, parents: list[ast.AST]) -> bool:
    """True when code under ``parents`` runs through the AST rewriter: some enclosing
    function is a `@flyc.kernel` / `@flyc.jit`."""
    return any(is_jit_function(model, f) for f in functions_of(parents))


def in_dynamic_region(model: SemanticModel, parents: list[ast.AST]) -> bool:
    """Code under ``parents`` (outermost first, ending with the code itself) sits in an
    `if`/`for`/`while` the rewriter turns into an MLIR region."""
    return rewritten(model, parents) and any(
        _carries_state(model, node, parents[i + 1]) for i, node in enumerate(parents[:-1])
    )


def innermost_function(parents: list[ast.AST]) -> ast.AST | None:
    for node in reversed(parents):
        if isinstance(node, (*FUNCTIONS, ast.Lambda, ast.ClassDef)):
            return node if isinstance(node, FUNCTIONS) else None
    return None


def is_method(function: ast.AST, parents: list[ast.AST]) -> bool:
    index = next((i for i, p in enumerate(parents) if p is function), None)
    return index is not None and index > 0 and isinstance(parents[index - 1], ast.ClassDef)


def jit_decorator_edits(model: SemanticModel, function: ast.AST) -> tuple[Edit, ...] | None:
    """Edits adding `@flyc.jit` above ``function`` (and the import when missing)."""
    name, imports = module_alias(model, "flydsl.compiler", "flyc")
    first = function.decorator_list[0] if function.decorator_list else function
    line = first.lineno - 1
    indent = model.index.line_text(line)[: len(model.index.line_text(line)) - len(model.index.line_text(line).lstrip())]
    start = Position(line, 0)
    return (Edit(Range(start, start), f"{indent}@{name}.jit\n"), *imports)


def function_range(model: SemanticModel, function: ast.AST) -> Range:
    """The whole function, decorators included, in whole lines."""
    first = function.decorator_list[0] if function.decorator_list else function
    end = model.index.from_ast(function.end_lineno, function.end_col_offset)
    return Range(Position(first.lineno - 1, 0), end)


# --- the state FlyDSL's rewriter carries through control flow ------------------------------
# For each dynamic `if`, `while` and `for ... in range(...)` (no `init=`) of a rewritten
# function, the rewriter carries every name its region assigns *or calls a method on*
# (`x.ir_value()`, `x.select(...)`: it assumes the call may mutate `x`). A fix that makes the
# region call a method on a name it did not touch adds an scf.if result or a loop-carried
# value (the MLIR differs). The rewriter hands it the name's value at the region's entry, and
# fails ("initialized as None before a dynamic if/else") where that is None: the name is a
# variable of an enclosing function (unseen in `locals()`), is unbound on some path (bound in
# one branch of a `const_expr` if only) or is assigned None.


@dataclass(frozen=True)
class CarriedState:
    statement: ast.stmt  # the control-flow statement whose carried state would change
    name: str
    closure: bool  # the name belongs to an enclosing function: tracing then fails
    unset: str = ""  # why the name may be None at the region's entry: tracing then fails

    @property
    def fails(self) -> bool:
        """Carrying the name makes the trace fail on some path."""
        return self.closure or bool(self.unset)

    def describe(self) -> str:
        kind = type(self.statement).__name__.lower()
        if self.fails:
            why = "it belongs to an enclosing function" if self.closure else self.unset
            return (
                f"inside the `{kind}` on line {self.statement.lineno}, a method call on `{self.name}` "
                f"would make FlyDSL's rewriter carry it, and {why}: the trace would fail"
            )
        return (
            f"inside the `{kind}` on line {self.statement.lineno}, a method call on `{self.name}` "
            "makes FlyDSL's rewriter carry it through the region (the MLIR changes)"
        )


def method_call_state(
    model: SemanticModel, parents: list[ast.AST], site: ast.AST, receiver: ast.expr
) -> CarriedState | None:
    """What calling a method on ``receiver`` at ``site`` (under ``parents``) would add to the
    state the rewriter carries, or None when nothing changes."""
    root = call_base(receiver)
    if root is None or root.id == "self" or not rewritten(model, parents):
        return None
    parents = [*parents, site]
    binding = model.binding_of(root)
    if binding is None or binding.scope.kind != "function":
        return None
    for index, node in enumerate(parents):
        child = parents[index + 1] if index + 1 < len(parents) else None
        if not _carries_state(model, node, child) or root.id in _region_names(model, node):
            continue
        around = innermost_function(parents[:index])
        closure = binding.scope.node is not around
        return CarriedState(node, root.id, closure, "" if closure else _unset(model, root))
    return None


def _unset(model: SemanticModel, name: ast.Name) -> str:
    """Why ``name`` (read in a region that does not bind it) may be None at the region's
    entry, the value the rewriter carries; "" when it surely holds a value."""
    if not model.surely_bound(name):
        return f"`{name.id}` is bound on some paths only (unbound, None to the rewriter, on the others)"
    if any(isinstance(b.value, ast.Constant) and b.value.value is None for b in model.reaching_bindings(name)):
        return f"`{name.id}` may be None there"
    return ""


def call_base(expr: ast.expr) -> ast.Name | None:
    """The name the rewriter sees as the base of ``expr.method(...)``."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr if isinstance(expr, ast.Name) else None


def _carries_state(model: SemanticModel, node: ast.AST, child: ast.AST | None) -> bool:
    if isinstance(node, ast.While):
        return True
    if not isinstance(node, (ast.If, ast.For)):
        return False
    in_region = child is not None and (child in node.body or child in node.orelse)
    if isinstance(node, ast.If):
        return in_region and not called(node.test, "const_expr")
    if isinstance(node, ast.For):
        iterated = node.iter
        return (
            in_region
            and called(iterated, "range")
            and not any(k.arg == "init" for k in iterated.keywords)
        )
    return False


def called(expr: ast.expr, name: str) -> bool:
    """The rewriter's own test: a call whose callee is named ``name`` (any module)."""
    if not isinstance(expr, ast.Call):
        return False
    target = expr.func
    return (getattr(target, "id", None) or getattr(target, "attr", None)) == name


class RewriterRegions(dict[int, set[str]]):
    """Per model: id(statement) -> the names the rewriter carries for its region."""

    def __init__(self, model: SemanticModel):
        super().__init__()


def _region_names(model: SemanticModel, statement: ast.stmt) -> set[str]:
    """Names the region of ``statement`` assigns or calls a method on (the rewriter's view)."""
    cache = model.facts(RewriterRegions)
    if id(statement) not in cache:
        roots = [*statement.body, *statement.orelse]
        if isinstance(statement, ast.While):
            roots.append(statement.test)
        cache[id(statement)] = carried_names(roots)
    return cache[id(statement)]


def carried_names(roots: list[ast.AST]) -> set[str]:
    """The names FlyDSL's rewriter carries for a region made of ``roots``: those it assigns
    (also `x.a = ...`, `x[i] = ...`) or calls a method on (`x.m(...)`)."""
    names: set[str] = set()
    for root in roots:
        for node in nodes_under(root):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
                base = node.value
                while isinstance(base, (ast.Attribute, ast.Subscript)):
                    base = base.value
                if isinstance(base, ast.Name):
                    names.add(base.id)
            elif isinstance(node, ast.Call) and (base := call_base(node.func)) is not None:
                if base is not node.func:
                    names.add(base.id)
    names.discard("self")
    return names

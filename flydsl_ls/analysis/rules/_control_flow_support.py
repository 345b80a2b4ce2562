"""Shared by the control-flow rules (FLY302, FLY501, FLY701): where FlyDSL's AST rewriter
runs, and the `@flyc.jit` boundary a plain helper needs.

`ASTRewriter.transform` rewrites a `@flyc.kernel` / `@flyc.jit` function *and every
function nested in it* (it parses the whole source of the decorated function). A
module-level helper called from a kernel is not rewritten: its Python `if` on an fx
value, or its `yield`, runs as plain Python.
"""

from __future__ import annotations

import ast

from flydsl_ls.analysis.diagnostic import Edit
from flydsl_ls.analysis.model import SemanticModel
from flydsl_ls.analysis.rewrite import module_alias
from flydsl_ls.analysis.text import Position, Range

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

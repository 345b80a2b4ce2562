"""Small text-level building blocks for fixes: operand parenthesising, the fx alias."""

from __future__ import annotations

import ast

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.text import Position, Range

_ATOMS = (
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.Subscript,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
)
# Parents in which any expression may stand in place of a call without parentheses.
_OPEN_CONTEXTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr, ast.keyword)


def replacement_text(model: SemanticModel, inner: ast.expr, outer: ast.AST, parent) -> str:
    """Source of ``inner`` fit to stand where ``outer`` (a call around it) stood."""
    text = model.index.slice(model.index.node_range(inner))
    if _is_atom(inner) and not (isinstance(inner, ast.Tuple) and not text.startswith("(")):
        return text
    if "\n" not in text and _accepts_any(parent, outer):
        return text
    return f"({text})"


def ungrouped_range(model: SemanticModel, node: ast.AST, content: str) -> Range:
    """``node``'s range, widened over the grouping parentheses around it when ``content``
    (its replacement) is a call, name, attribute or subscript, which needs none:
    `-((-x).maximumf(y))` -> `-fx.maximumf(-x, y)`, not `-(fx.maximumf(-x, y))`. Only
    parentheses on the node's own lines, with nothing but spaces inside; never a call's
    or a class's own parentheses, nor those that part a keyword from it (`not(x)`)."""
    index = model.index
    rng = index.node_range(node)
    if not isinstance(node, ast.expr):
        return rng
    text = index.text
    start, end = index.offset(rng.start), index.offset(rng.end)
    around = _parentheses_around(text, start, end)
    if around is None or not _atomic_text(content):
        return rng  # most nodes: no parentheses around, nothing to parse
    parent = model.parent_map(model.tree).get(id(node))
    if isinstance(parent, ast.ClassDef) or (isinstance(parent, ast.Call) and node is not parent.func):
        return rng
    while around is not None:
        opening, closing = around
        if (opening > 0 and _word(text[opening - 1])) or (closing + 1 < len(text) and _word(text[closing + 1])):
            break  # `not(x)`, `return(x)`: the parentheses also separate a keyword
        start, end = opening, closing + 1
        around = _parentheses_around(text, start, end)
    return Range(index.position_at(start), index.position_at(end))


def _parentheses_around(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The offsets of the `(` and the `)` around ``text[start:end]``, spaces apart."""
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if before == 0 or after >= len(text) or text[before - 1] != "(" or text[after] != ")":
        return None
    return before - 1, after


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _atomic_text(content: str) -> bool:
    if "\n" in content:
        return False
    try:
        tree = ast.parse(content.strip(), mode="eval")
    except SyntaxError:
        return False
    return isinstance(tree.body, (ast.Call, ast.Name, ast.Attribute, ast.Subscript))


def _is_atom(node: ast.expr) -> bool:
    return isinstance(node, (ast.Constant, *_ATOMS))


def _accepts_any(parent, outer) -> bool:
    if isinstance(parent, _OPEN_CONTEXTS):
        return True
    if isinstance(parent, ast.Call):
        return outer is not parent.func and not any(
            isinstance(a, ast.Starred) and a.value is outer for a in parent.args
        )
    if isinstance(parent, (ast.List, ast.Set)):
        return True
    return False


def fx_alias(model: SemanticModel) -> tuple[str, tuple[Edit, ...]]:
    """The module-level name bound to ``flydsl.expr``, or ``fx`` plus an edit importing it."""
    return module_alias(model, "flydsl.expr", "fx")


class ModuleAliases(dict[str, "tuple[str, tuple[Edit, ...]]"]):
    """Per model: dotted module -> the name bound to it, or a free name and its import."""

    def __init__(self, model: SemanticModel):
        super().__init__()


def module_alias(model: SemanticModel, dotted: str, preferred: str) -> tuple[str, tuple[Edit, ...]]:
    """The module-level name bound to module ``dotted`` (``preferred`` if several), or a
    free name plus an edit importing it there (``_fx`` when ``fx`` means something else)."""
    cache = model.facts(ModuleAliases)
    if dotted not in cache:
        cache[dotted] = _find_alias(model, dotted, preferred)
    return cache[dotted]


def _find_alias(model: SemanticModel, dotted: str, preferred: str) -> tuple[str, tuple[Edit, ...]]:
    best = None
    for name, binding in model.module_imports:
        if binding.dotted == dotted and (best is None or name == preferred):
            best = name
    if best is not None:
        return best, ()
    name = preferred
    while name in model.module_scope.bindings:
        name = f"_{name}"
    return name, (_import_edit(model, f"import {dotted} as {name}"),)


def name_import(model: SemanticModel, module: str, name: str) -> tuple[str, tuple[Edit, ...]] | None:
    """The module-level name bound to ``module.name`` by an import, or ``name`` plus an edit
    adding ``from module import name``; None when ``name`` means something else there."""
    dotted = f"{module}.{name}"
    for local, binding in model.module_imports:
        if binding.dotted == dotted:
            return local, ()
    if name in model.module_scope.bindings:
        return None
    return name, (_import_edit(model, f"from {module} import {name}"),)


def _import_edit(model: SemanticModel, statement: str) -> Edit:
    """Insert ``statement`` after the module's last top-level import (or docstring)."""
    body = model.tree.body
    anchor = None
    for index, stmt in enumerate(body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            anchor = stmt
        elif index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            anchor = stmt
    if anchor is None:
        start = Position(0, 0)
        return Edit(Range(start, start), statement + "\n")
    line = anchor.end_lineno  # the line after the anchor, 0-based
    start = Position(line, 0)
    if line >= len(model.index.lines) or not model.index.lines[line - 1].endswith(("\n", "\r")):
        end_of_anchor = model.index.from_ast(anchor.end_lineno, anchor.end_col_offset)
        return Edit(Range(end_of_anchor, end_of_anchor), "\n" + statement)
    return Edit(Range(start, start), statement + "\n")

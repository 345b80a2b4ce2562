"""Which syntax node is at a position (for hover), and the name a call target is spelled
with: the stdlib ``ast`` only, no LSP types."""

from __future__ import annotations

import ast

from flydsl_ls.analysis.model.text import LineIndex, Position


def nodes_at(tree: ast.AST, index: LineIndex, pos: Position) -> list[ast.AST]:
    """Every node whose source span contains ``pos``, outermost first.

    Line spans prune the walk cheaply; exact columns are compared in code points
    through ``index`` (ast columns are UTF-8 bytes).
    """
    found: list[ast.AST] = []
    line = pos.line + 1
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            start = getattr(child, "lineno", None)
            if start is None:  # arguments, operators, comprehension: look inside
                stack.append(child)
                continue
            end = getattr(child, "end_lineno", None) or start
            if not start <= line <= end:
                continue
            if index.node_range(child).contains(pos):
                found.append(child)
                stack.append(child)
    return found


def expression_at(tree: ast.AST, index: LineIndex, pos: Position) -> ast.expr | None:
    """The innermost expression under ``pos``; a name or attribute chain when there is one.

    For ``fx.arith.ArithValue`` the cursor on ``ArithValue`` gives the whole chain, on
    ``arith`` the ``fx.arith`` part, on ``fx`` the name.
    """
    nodes = nodes_at(tree, index, pos)
    for node in reversed(nodes):
        if isinstance(node, (ast.Name, ast.Attribute)):
            return node
        if isinstance(node, ast.expr):
            return node
    return None


def alias_at(tree: ast.AST, index: LineIndex, pos: Position) -> tuple[ast.AST, ast.alias] | None:
    """The ``import`` statement and alias under ``pos`` (``import a.b as c``, ``from m import n``)."""
    nodes = nodes_at(tree, index, pos)
    for node in reversed(nodes):
        if isinstance(node, ast.alias):
            parent = next(
                (n for n in reversed(nodes) if isinstance(n, (ast.Import, ast.ImportFrom))), None
            )
            if parent is not None:
                return parent, node
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return None
    return None


def encloses(outer: ast.AST, inner: ast.AST) -> bool:
    """``inner``'s source span lies within ``outer``'s."""
    return (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset) and (
        inner.end_lineno,
        inner.end_col_offset,
    ) <= (outer.end_lineno, outer.end_col_offset)


def spelled_name(func: ast.expr) -> str | None:
    """The last name a callee is written with: ``f`` for ``f(...)`` and ``m.f(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def spelled(func: ast.expr) -> str:
    """``ast.unparse(func)``, without the unparser for the usual callee, a dotted name:
    every call of a file asks (about 30k calls of the corpus for each of three rules)."""
    parts = []
    node = func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ast.unparse(func)
    parts.append(node.id)
    return ".".join(reversed(parts))

"""Deleting a whole statement: the fix clean-up (stale imports, stale locals) and rule fixes
that make a statement dead."""

from __future__ import annotations

import ast

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.text import Position, Range


def shares_lines(model: SemanticModel, stmt: ast.stmt) -> bool:
    """Whether code other than a trailing comment sits on the statement's lines (``a; b``)."""
    index = model.index
    rng = index.node_range(stmt)
    before = index.line_text(rng.start.line)[: rng.start.column].strip()
    after = index.line_text(rng.end.line)[rng.end.column :].strip()
    return bool(before) or (bool(after) and not after.startswith("#"))


def delete_statement(model: SemanticModel, stmt: ast.stmt) -> Edit:
    """Delete whole lines when the statement owns them (a trailing comment goes with it);
    else, or when it is alone in its block, leave a harmless `pass`."""
    index = model.index
    rng = index.node_range(stmt)
    if shares_lines(model, stmt) or only_statement_in_block(model.tree, stmt):
        return Edit(rng, "pass")
    return Edit(Range(Position(rng.start.line, 0), Position(rng.end.line + 1, 0)), "")


# The fields of a node holding statement lists (a match's ``cases`` hold ``match_case``
# nodes, which have no lines of their own).
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers")


def first_line(node: ast.AST) -> int:
    """The statement's first line (from 1), its decorators' included."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def block_of(tree: ast.Module, stmt: ast.stmt) -> tuple[ast.AST, list[ast.stmt]] | None:
    """(owner, statement list) holding ``stmt``."""
    for node in ast.walk(tree):
        for field in BLOCK_FIELDS:
            block = getattr(node, field, None)
            if isinstance(block, list) and stmt in block:
                return node, block
    return None


def only_statement_in_block(tree: ast.Module, stmt: ast.stmt) -> bool:
    found = block_of(tree, stmt)
    return found is not None and len(found[1]) == 1 and not isinstance(found[0], ast.Module)

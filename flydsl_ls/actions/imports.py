"""Imports a fix made unused are removed; the statement's other names and layout are kept.

The removal is computed with libcst on the import statement alone (never the module),
so parenthesised multi-line imports keep their formatting and comments.
"""

from __future__ import annotations

import ast

import libcst as cst

from flydsl_ls.analysis.diagnostic import Edit
from flydsl_ls.analysis.model import SemanticModel
from flydsl_ls.analysis.scopes import Binding
from flydsl_ls.analysis.text import Position, Range

ImportKey = tuple[str, str, str]  # (bound name, dotted target, enclosing def name or "")


def _model(text: str) -> SemanticModel | None:
    try:
        return SemanticModel(text, ast.parse(text))
    except (SyntaxError, ValueError, RecursionError):
        return None


def _imports(model: SemanticModel) -> dict[ImportKey, list[Binding]]:
    found: dict[ImportKey, list[Binding]] = {}
    for scope in model.scopes:
        owner = getattr(scope.node, "name", "")
        for bindings in scope.bindings.values():
            for binding in bindings:
                if binding.kind == "import":
                    key = (binding.name, binding.dotted or "", owner)
                    found.setdefault(key, []).append(binding)
    return found


def _used(model: SemanticModel, bindings: list[Binding]) -> bool:
    return any(model.use_counts.get(id(b), 0) for b in bindings)


def cleanup_edits(before: str, after: str) -> list[Edit]:
    """Edits on ``after`` removing imports used in ``before`` but no longer in ``after``."""
    old, new = _model(before), _model(after)
    try:
        if old is None or new is None:
            return []
        old_imports = _imports(old)
        stale: dict[int, tuple[ast.stmt, set[str]]] = {}
        statements = _import_statements(new.tree)
        for key, bindings in _imports(new).items():
            if key in old_imports and _used(old, old_imports[key]) and not _used(new, bindings):
                for binding in bindings:
                    stmt = statements.get(id(binding.node))
                    if stmt is not None:
                        stale.setdefault(id(stmt), (stmt, set()))[1].add(_alias_text(binding.node))
        return [edit for stmt, names in stale.values() if (edit := _removal(new, stmt, names))]
    finally:
        # Two whole-file models per fix: freed now, not left to the cyclic collector.
        for model in (old, new):
            if model is not None:
                model.dispose()


def _import_statements(tree: ast.Module) -> dict[int, ast.stmt]:
    owners = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                owners[id(alias)] = node
    return owners


def _alias_text(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def _removal(model: SemanticModel, stmt: ast.stmt, names: set[str]) -> Edit | None:
    index = model.index
    remaining = [a for a in stmt.names if _alias_text(a) not in names]
    if not remaining:
        return _delete_statement(model, stmt)
    rng = index.node_range(stmt)
    source = index.slice(rng)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return None
    new_source = module.visit(_DropAliases(names)).code
    return Edit(rng, new_source) if new_source != source else None


def _delete_statement(model: SemanticModel, stmt: ast.stmt) -> Edit | None:
    """Delete whole lines when the statement owns them; else leave a harmless `pass`."""
    index = model.index
    rng = index.node_range(stmt)
    first, last = rng.start.line, rng.end.line
    before = index.line_text(first)[: rng.start.column].strip()
    after = index.line_text(last)[rng.end.column :].strip()
    shares_lines = bool(before) or (bool(after) and not after.startswith("#"))
    if shares_lines or _only_statement_in_block(model.tree, stmt):
        return Edit(rng, "pass")
    return Edit(Range(Position(first, 0), Position(last + 1, 0)), "")


def _only_statement_in_block(tree: ast.Module, stmt: ast.stmt) -> bool:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, field, None)
            if isinstance(block, list) and stmt in block:
                return len(block) == 1 and not isinstance(node, ast.Module)
    return False


class _DropAliases(cst.CSTTransformer):
    def __init__(self, names: set[str]):
        self.names = names

    def _keep(self, alias: cst.ImportAlias) -> bool:
        name = cst.helpers.get_full_name_for_node(alias.name)
        text = f"{name} as {alias.asname.name.value}" if alias.asname else name
        return text not in self.names

    def _trim(self, aliases):
        kept = [a for a in aliases if self._keep(a)]
        if kept and kept[-1].comma is not cst.MaybeSentinel.DEFAULT and aliases[-1] not in kept:
            kept[-1] = kept[-1].with_changes(comma=aliases[-1].comma)
        return kept

    def leave_ImportFrom(self, original, updated):
        if isinstance(updated.names, cst.ImportStar):
            return updated
        return updated.with_changes(names=self._trim(list(updated.names)))

    def leave_Import(self, original, updated):
        return updated.with_changes(names=self._trim(list(updated.names)))

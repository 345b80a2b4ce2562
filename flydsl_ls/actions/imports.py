"""Imports a fix made unused are removed; the statement's other names and layout are kept.

The removal is computed with libcst on the import statement alone (never the module),
so parenthesised multi-line imports keep their formatting and comments. ``cleanup_edits``
first deletes the locals the fixes left unused (``unused_locals``), which may leave more
imports unused.
"""

from __future__ import annotations

import ast

from flydsl_ls.actions.textdiff import minimal_edits
from flydsl_ls.actions.unused_locals import stale_local_edits
from flydsl_ls.analysis.model.deep import on_deep_stack
from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.scopes import Binding
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.statements import delete_statement
from flydsl_ls.analysis.model.text import apply_edits

ImportKey = tuple[str, str, str]  # (bound name, dotted target, enclosing def name or "")


def _model(text: str) -> SemanticModel | None:
    def build() -> SemanticModel:
        return SemanticModel(text, ast.parse(text))

    try:
        try:
            return build()
        except RecursionError:  # deeper than the recursion limit: the imports still go
            return on_deep_stack(build)
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


# Rounds of local deletions: each may leave the locals its values read unused.
MAX_LOCAL_ROUNDS = 20


def cleanup_edits(before: str, after: str) -> list[Edit]:
    """Edits on ``after`` removing the locals and imports used in ``before`` but no longer
    in ``after`` (locals first, to a fixpoint: deleting one may leave an import unused)."""
    old = _model(before)
    new = None
    try:
        if old is None:
            return []
        text, new = _without_stale_locals(old, after)
        if new is None:
            return []
        edits = _import_edits(old, new)
        return edits if text == after else minimal_edits(after, apply_edits(text, edits))
    finally:
        # Whole-file models per fix: freed now, not left to the cyclic collector.
        for model in (old, new):
            if model is not None:
                model.dispose()


def _without_stale_locals(old: SemanticModel, text: str) -> tuple[str, SemanticModel | None]:
    """``text`` without the locals ``old`` read and it leaves unused, and its model."""
    new = _model(text)
    for _ in range(MAX_LOCAL_ROUNDS):
        if new is None:
            break
        edits = stale_local_edits(old, new)
        candidate = apply_edits(text, edits) if edits else text
        model = _model(candidate) if candidate != text else None
        if model is None:  # nothing deleted, or the deletions would not parse
            break
        new.dispose()
        text, new = candidate, model
    return text, new


def _import_edits(old: SemanticModel, new: SemanticModel) -> list[Edit]:
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
        return delete_statement(model, stmt)
    rng = index.node_range(stmt)
    source = index.slice(rng)
    # libcst takes ~0.2 s to import: a check that applies no fix never needs it.
    from flydsl_ls.actions.import_aliases import without_aliases

    new_source = without_aliases(source, names)
    return Edit(rng, new_source) if new_source is not None and new_source != source else None

"""What a rule sees while the engine walks one file."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.text import Position, Range


@dataclass
class AnalysisOptions:
    """The resolved settings analysis depends on."""

    target_arch: str | None = None
    flydsl_version: str | None = None


@dataclass
class RuleContext:
    model: SemanticModel
    options: AnalysisOptions
    path: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Ancestors of the node being visited, innermost last (set by the engine).
    parents: list[ast.AST] = field(default_factory=list)

    def range(self, node: ast.AST) -> Range:
        return self.model.index.node_range(node)

    def segment(self, node: ast.AST) -> str:
        return self.model.index.slice(self.range(node))

    @property
    def parent(self) -> ast.AST | None:
        return self.parents[-1] if self.parents else None

    def statement_range(self, node: ast.AST) -> Range | None:
        """The innermost statement holding ``node``; for a compound statement only its
        header (up to the line its body starts on)."""
        stmt = node if isinstance(node, ast.stmt) else None
        if stmt is None:
            for parent in reversed(self.parents):
                if isinstance(parent, ast.stmt):
                    stmt = parent
                    break
        if stmt is None:
            return None
        full = self.range(stmt)
        target = self.range(node)
        if not (full.start <= target.start and target.end <= full.end):
            return None  # reported away from the statement being visited
        body = getattr(stmt, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            header_end = Position(body[0].lineno - 1, 0)
            if header_end > full.start:
                return Range(full.start, header_end)
        return full

    def enclosing_function(self) -> ast.AST | None:
        for node in reversed(self.parents):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
        return None

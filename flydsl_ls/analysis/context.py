"""What a rule sees while the engine walks one file."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from flydsl_ls.analysis.diagnostic import Diagnostic
from flydsl_ls.analysis.model import SemanticModel
from flydsl_ls.analysis.text import Range


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

    def enclosing_function(self) -> ast.AST | None:
        for node in reversed(self.parents):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
        return None

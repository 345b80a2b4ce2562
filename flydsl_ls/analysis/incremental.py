"""Incremental analysis of one document across versions (interface; full analysis for now)."""

from __future__ import annotations

from collections.abc import Sequence

from flydsl_ls.analysis.context import AnalysisOptions
from flydsl_ls.analysis.engine import FileAnalysis, analyze
from flydsl_ls.analysis.model import SemanticModel
from flydsl_ls.analysis.project import ProjectView
from flydsl_ls.analysis.rules import ALL_RULES
from flydsl_ls.analysis.rules.base import Rule


class IncrementalAnalyzer:
    """Keeps what one document's last analysis learnt, to redo only what an edit changed."""

    def __init__(self) -> None:
        self._model: SemanticModel | None = None

    def analyze(
        self,
        source: str,
        *,
        rules: Sequence[type[Rule]] = ALL_RULES,
        options: AnalysisOptions | None = None,
        package: str | None = None,
        path: str | None = None,
        project: ProjectView | None = None,
    ) -> FileAnalysis:
        result = analyze(source, rules=rules, options=options, package=package, path=path, project=project)
        if result.model is not None:
            self._model = result.model
        return result

    def model_at(self, line: int) -> SemanticModel | None:
        """A model answering for the statement holding 0-based ``line`` of the last source
        that parsed (names, types): for hover."""
        return self._model

    def forget(self) -> None:
        """Drop every cache (a document not edited for a while)."""
        self._model = None

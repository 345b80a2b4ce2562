"""Incremental analysis (see ``analyzer``): redo only what an edit changed."""

from flydsl_ls.analysis.incremental.analyzer import IncrementalAnalyzer

__all__ = ["IncrementalAnalyzer"]

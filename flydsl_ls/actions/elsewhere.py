"""The other files a fix edits (``Fix.elsewhere``): their texts as read and as edited.

A fix's edits of another file are applied with its own edits or not at all: they must
have been computed on that file's current text (else they are stale), not overlap one
another, and leave the file parsing. The same edits carried by several fixes (every
finding of one kernel, or two kernels moving the helper they share to the same form) are
applied once.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

from flydsl_ls.analysis.model.diagnostic import FileEdits, Fix, text_digest
from flydsl_ls.analysis.model.parsing import parse
from flydsl_ls.analysis.model.sources import UnreadableFile, read_source
from flydsl_ls.analysis.model.text import LineIndex, apply_edits


def read_or_none(path: str) -> str | None:
    try:
        return read_source(Path(path))
    except (OSError, UnreadableFile):
        return None


class OtherFiles:
    """``read``: a file's text as the run (or the editor) has it, None if it cannot be read."""

    def __init__(self, read: Callable[[str], str | None] = read_or_none):
        self._read = read
        self.original: dict[str, str | None] = {}
        self.current: dict[str, str] = {}  # only the files edited so far
        self.applied: set[FileEdits] = set()

    def text(self, path: str) -> str | None:
        if path in self.current:
            return self.current[path]
        if path not in self.original:
            self.original[path] = self._read(path)
        return self.original[path]

    def changed(self) -> dict[str, tuple[str, str]]:
        """path -> (text as read, text now), for every file whose text changed; imports
        that only the fixes made unused are gone."""
        from flydsl_ls.actions.fixes import without_stale_imports

        return {
            p: (self.original[p], without_stale_imports(self.original[p], t))
            for p, t in self.current.items()
            if self.original.get(p) != t
        }


class Pending:
    """The other-file edits of the fixes chosen in one pass, kept apart until the pass is."""

    def __init__(self, others: OtherFiles | None):
        self.others = others
        self.texts: dict[str, str] = {}
        self.applied: set[FileEdits] = set()

    def take(self, fix: Fix) -> bool:
        """Plan ``fix``'s edits of other files; False (nothing planned) when they are stale,
        conflict, do not parse, or there is no run to apply them in."""
        if not fix.elsewhere:
            return True
        if self.others is None:
            return False
        texts = dict(self.texts)
        fresh = [f for f in fix.elsewhere if f not in self.others.applied and f not in self.applied]
        for group in fresh:
            text = texts.get(group.path, self.others.text(group.path))
            if text is None or text_digest(text) != group.digest or not _disjoint(text, group):
                return False
            texts[group.path] = apply_edits(text, group.edits)
        if not all(_parses(texts[group.path]) for group in fresh):
            return False
        self.texts = texts
        self.applied.update(fresh)
        return True

    def commit(self) -> None:
        if self.others is not None:
            self.others.current.update(self.texts)
            self.others.applied.update(self.applied)


def _disjoint(text: str, group: FileEdits) -> bool:
    index = LineIndex(text)
    spans = sorted((index.offset(e.range.start), index.offset(e.range.end)) for e in group.edits)
    return all(end <= start for (_, end), (start, _) in pairwise(spans))


def _parses(text: str) -> bool:
    try:
        parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True

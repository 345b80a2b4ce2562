"""What analysis produces: diagnostics and the fixes they carry (no LSP types here)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import Enum
from functools import cache

from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.data import RULE_PAGES


@cache
def rule_url(code: str) -> str:
    """The rule's documentation page (the diagnostic's codeDescription): a ``file:`` URL of
    the page installed with flydsl-ls, so that it opens offline and matches the installed
    rules. flydsl-ls has no public web page to link to."""
    return (RULE_PAGES / f"{code}.md").as_uri()


class Applicability(str, Enum):
    """Fix safety, as in ruff."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"


@dataclass(frozen=True)
class Edit:
    range: Range
    content: str


def text_digest(text: str) -> str:
    """Names the text a :class:`FileEdits` was computed on."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


@dataclass(frozen=True)
class FileEdits:
    """Edits of another project file that a fix needs with its own (a helper it migrates
    with the kernel that calls it). ``digest``: :func:`text_digest` of the text they were
    computed on; once that file has changed they are stale, and the whole fix is skipped."""

    path: str  # absolute
    digest: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Fix:
    title: str  # human title of the quick fix, e.g. "Replace with fx.Int32(x)"
    applicability: Applicability
    edits: tuple[Edit, ...]  # of the file the diagnostic is in
    elsewhere: tuple[FileEdits, ...] = ()  # of other files, applied with it or not at all

    def __post_init__(self):
        # Two parts of one fix may add the same edit (an import both need): once. Different
        # insertions at one point become one edit, in the order given (applied apart, they
        # would be ordered by their text).
        merged: dict = {}
        for edit in dict.fromkeys(self.edits):
            key = edit.range if edit.range.start == edit.range.end else edit
            if key in merged and key is edit.range:
                merged[key] = Edit(edit.range, merged[key].content + edit.content)
            else:
                merged[key] = edit
        object.__setattr__(self, "edits", tuple(merged.values()))

    def __reduce__(self):
        # Flat, as a Diagnostic (below): each edit's range as four numbers.
        edits = tuple((_flat(edit.range), edit.content) for edit in self.edits)
        return (_restored_fix, (self.title, self.applicability, edits, self.elsewhere))


def _restored_fix(title: str, applicability: Applicability, edits: tuple, elsewhere: tuple) -> Fix:
    fix = object.__new__(Fix)  # its edits were merged when it was made
    for name, value in (("title", title), ("applicability", applicability), ("elsewhere", elsewhere)):
        object.__setattr__(fix, name, value)
    object.__setattr__(fix, "edits", tuple(Edit(_unflat(at), content) for at, content in edits))
    return fix


@dataclass
class Diagnostic:
    code: str
    message: str
    range: Range
    severity: Severity = Severity.WARNING
    fix: Fix | None = None
    deprecated: bool = False  # carries the LSP "Deprecated" tag
    # Why no safe fix was offered, when that is worth telling the user.
    note: str | None = None
    # The smallest statement around the diagnostic (a compound statement's header only):
    # a fix is re-parsed within it before it is offered.
    statement: Range | None = None

    @property
    def url(self) -> str:
        return rule_url(self.code)

    def sort_key(self):
        # Total: the order must not depend on which rule or walk produced what first.
        # Kept on the object: an unchanged diagnostic is sorted again on every edit.
        key = self.__dict__.get("_sort_key")
        if key is None:
            start, end = self.range.start, self.range.end
            key = (start.line, start.column, self.code, end.line, end.column, self.message, self.note or "")
            self.__dict__["_sort_key"] = key
        return key

    def __reduce__(self):
        # Pickled flat (a worker's results, the cache): a range as four numbers. As objects,
        # positions and ranges were half the pickling of a corpus run's 7,000 findings.
        fields = (self.code, self.message, _flat(self.range), self.severity, self.fix, self.deprecated, self.note)
        return (_restored, (*fields, _flat(self.statement)))

    def identity(self) -> tuple:
        return (self.code, self.message, self.range, self.severity, self.fix, self.deprecated, self.note, self.statement)


def _flat(at: Range | None) -> tuple[int, int, int, int] | None:
    return None if at is None else (*at.start, *at.end)


def _unflat(at: tuple[int, int, int, int] | None) -> Range | None:
    return None if at is None else Range(Position(at[0], at[1]), Position(at[2], at[3]))


def _restored(code, message, at, severity, fix, deprecated, note, statement) -> Diagnostic:
    return Diagnostic(code, message, _unflat(at), severity, fix, deprecated, note, _unflat(statement))

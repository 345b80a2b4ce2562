"""Diagnostics as the JSON the client gets, built for thousands of diagnostics per
keystroke: each one's JSON cached while it shows the same, joined without re-serializing.

A diagnostic's ``data`` is ``{"version", "index"}``: the document version it was reported
for and its position in that lint (``analysis.result.diagnostics``), where code actions,
resolve and verifyFix find its fix. The fix itself is not sent: it made every publish of a
6,000-line kernel 2.5 MB instead of 1.9, and the server has it anyway.
"""

from __future__ import annotations

import itertools
import json

from lsprotocol import types
from pygls.protocol import default_converter

from flydsl_ls.analysis.engine import SYNTAX_ERROR
from flydsl_ls.analysis.model.diagnostic import Diagnostic, Severity
from flydsl_ls.analysis.model.text import Encoding, LineIndex, Range

SOURCE = "flydsl-ls"
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}
_CONVERTER = default_converter()  # for the few lsprotocol diagnostics (compile errors)
ClientRange = tuple[int, int, int, int]


class _Columns:
    """Internal ranges to client ranges on one text, with a fast path for ASCII lines (where
    every encoding counts code points): ~4,000 ranges per publish on a long kernel."""

    def __init__(self, index: LineIndex, encoding: Encoding):
        self.index = index
        self.encoding = encoding
        self.lines = index.lines
        self.widths: dict[int, int] = {}  # line -> its length when it is ASCII, else -1

    def width(self, line: int) -> int:
        text = self.lines[line] if 0 <= line < len(self.lines) else ""
        known = self.widths[line] = len(text.rstrip("\r\n")) if text.isascii() else -1
        return known

    def convert(self, rng: Range) -> ClientRange:
        start, end = rng.start, rng.end
        widths = self.widths
        a = widths.get(start.line)
        if a is None:
            a = self.width(start.line)
        b = widths.get(end.line)
        if b is None:
            b = self.width(end.line)
        if a >= 0 and b >= 0:
            c, d = start.column, end.column
            return start.line, c if c < a else a, end.line, d if d < b else b
        s = self.index.to_client(start, self.encoding)
        e = self.index.to_client(end, self.encoding)
        return s[0], s[1], e[0], e[1]


def struck(d: Diagnostic) -> bool:
    """Whether the diagnostic carries the LSP ``Deprecated`` tag: a legacy API on one line.
    Editors strike the whole range through, and a finding over several lines (a call whose
    arguments are on lines of their own) would have the indentation of its continuation
    lines struck through too; it keeps its squiggle, its range (where its fixes and hover
    are found) and its message, without the tag."""
    return d.deprecated and d.range.start.line == d.range.end.line


def _tail(d: Diagnostic) -> str:
    """The diagnostic's JSON object after its range, open after ``"data":`` (its data
    differs per version): what does not move when lines are inserted above it."""
    body: dict = {
        "message": d.message if not d.note else f"{d.message}\n{d.note}",
        "severity": SEVERITY.get(d.severity, types.DiagnosticSeverity.Warning).value,
        "code": d.code,
    }
    if d.code != SYNTAX_ERROR:
        body["codeDescription"] = {"href": d.url}
    body["source"] = SOURCE
    if struck(d):
        body["tags"] = [types.DiagnosticTag.Deprecated.value]
    return json.dumps(body)[1:-1] + ',"data":'


def _fragment(rng: ClientRange, tail: str) -> str:
    return (
        f'{{"range":{{"start":{{"line":{rng[0]},"character":{rng[1]}}},'
        f'"end":{{"line":{rng[2]},"character":{rng[3]}}}}},{tail}'
    )


class FragmentCache:
    """The JSON of the last lints' diagnostics, for the next lint of the document: by
    diagnostic object (the incremental analysis hands back the very objects of diagnostics
    whose lines did not change: no range conversion, no key to hash) and, for the others,
    the part after the range (a ``json.dumps``) by what it shows. Kept across lints and
    pruned when the entries of diagnostics gone outnumber the current ones."""

    def __init__(self) -> None:
        self.by_object: dict[int, tuple[Diagnostic, str]] = {}  # id -> (the object, its JSON)
        self.tails: dict[tuple, str] = {}

    def fragments(self, diagnostics: list[Diagnostic], index: LineIndex, encoding: Encoding, prune: bool = True) -> list[str]:
        """Each diagnostic's JSON object, open after ``"data":`` (see ``items_json``)."""
        by_object, tails = self.by_object, self.tails
        convert = _Columns(index, encoding).convert
        seen = map(by_object.get, map(id, diagnostics))
        out = [s[1] if s is not None and s[0] is d else None for s, d in zip(seen, diagnostics)]
        for i in [i for i, fragment in enumerate(out) if fragment is None] if None in out else ():
            d = diagnostics[i]
            key = _tail_key(d)
            tail = tails.get(key)
            if tail is None:
                tail = tails[key] = _tail(d)
            fragment = out[i] = _fragment(convert(d.range), tail)
            by_object[id(d)] = (d, fragment)
        if prune and len(by_object) > 2 * len(diagnostics) + 64:
            self.by_object = {id(d): by_object[id(d)] for d in diagnostics}
            self.tails = {key: tails[key] for key in map(_tail_key, diagnostics)}
        return out


def _tail_key(d: Diagnostic) -> tuple:
    return (d.code, d.message, d.note, d.severity, struck(d))


# ',"index":i}}' for i = 0, 1, ...: the end of every diagnostic's JSON, the same each publish.
_INDEX_ENDS: list[str] = []


def items_json(fragments: list[str], version: int, extra: list[types.Diagnostic] = ()) -> str:
    """The JSON array of the diagnostics of one lint of version ``version``, their
    ``fragments`` (``FragmentCache.fragments``), and ``extra`` ones (e.g. compile errors).
    Joined in C (``zip``/``map``): thousands of diagnostics on every keystroke."""
    while len(_INDEX_ENDS) < len(fragments):
        _INDEX_ENDS.append(f',"index":{len(_INDEX_ENDS)}}}}}')
    data = f'{{"version":{version}'
    parts = list(map("".join, zip(fragments, itertools.repeat(data), _INDEX_ENDS)))
    parts += [json.dumps(_CONVERTER.unstructure(d)) for d in extra]
    return "[" + ",".join(parts) + "]"



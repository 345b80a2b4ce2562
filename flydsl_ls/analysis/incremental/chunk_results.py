"""One chunk's (or whole-module rule's) analysis result, what it depended on, and how its
positions follow the text when the chunks they lie in move (see ``incremental``)."""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

from flydsl_ls.analysis.incremental.chunk_graph import ChunkGraph
from flydsl_ls.analysis.incremental.chunks import Chunk
from flydsl_ls.analysis.model.diagnostic import Diagnostic, Edit, Fix
from flydsl_ls.analysis.model.text import Position, Range


@dataclass
class ChunkResult:
    diagnostics: list[Diagnostic]
    errors: list[str]
    members: object  # what the closure was (compared as a whole to the current one)
    asked: frozenset[str]
    everything: bool
    looked_up: frozenset[str]
    all_names: bool
    presence: object
    names: frozenset[str]  # the version's module-level names ``presence`` was taken in
    prelude: tuple  # the version's chunks deciding where an added import goes
    anchors: tuple[tuple[Chunk, int], ...]  # chunks holding its positions, with their starts
    movable: bool  # every position lies in a chunk (so it can follow that chunk)

    @classmethod
    def of(cls, found, errors, members, asked, everything, tracker, version) -> ChunkResult:
        looked_up = frozenset(tracker.looked_up)
        anchors: dict[int, tuple[Chunk, int]] = {}
        movable = True
        for line, column in _positions(found):
            index = version.chunk_at(line)
            if column == 0 and index > 0 and line == version.starts[index]:
                index -= 1  # the end of the chunk before (a deleted line's end): moves with it
            if not version.chunks or not version.starts[index] <= line <= version.starts[index] + version.chunks[index].lines:
                movable = False
                continue
            anchors[index] = (version.chunks[index], version.starts[index])
        return cls(
            found,
            errors,
            members,
            asked,
            everything,
            looked_up,
            tracker.all_names,
            version.presence(looked_up, tracker.all_names),
            version.names,
            version.prelude,
            tuple(anchors[i] for i in sorted(anchors)),
            movable,
        )

    def moved_to(self, version: ChunkGraph) -> ChunkResult | None:
        """This result with its positions where its chunks now are; None when one is gone."""
        if not self.movable:
            return None
        deltas = []
        for chunk, start in self.anchors:
            now = version.start_of.get(id(chunk))
            if now is None:
                return None
            deltas.append((start, chunk.lines, now - start))
        if all(delta == 0 for _, _, delta in deltas):
            return self
        starts = [start for start, _, _ in deltas]
        shifts = {delta for _, _, delta in deltas}
        boundary = None
        if len(shifts) == 1:  # the usual case (lines inserted above): one offset for all
            shift = shifts.pop()

            def line(old: int) -> int:
                return old + shift

        else:

            def line(old: int) -> int:
                i = bisect.bisect_right(starts, old) - 1
                return old + deltas[max(i, 0)][2]

            ends = {start + lines: delta for start, lines, delta in deltas}

            def boundary(old: int) -> int:
                # An insertion at column 0 where a chunk ends (an import added after the
                # last one) is that chunk's, as ``of`` anchored it: it moves with it.
                delta = ends.get(old)
                return line(old) if delta is None else old + delta

        moved = [_shift(d, line, boundary) for d in self.diagnostics]
        anchors = tuple((chunk, version.start_of[id(chunk)]) for chunk, _ in self.anchors)
        return dataclasses.replace(self, diagnostics=moved, anchors=anchors)


# Messages name lines ("(raw dialect op ..., line 302)"): they move with the text too.
_LINE_REF = re.compile(r"\bline (\d+)\b")


def _positions(diagnostics: list[Diagnostic]) -> Iterable[tuple[int, int | None]]:
    """(line, column) of every position the diagnostics hold; column None for the lines
    their messages name."""
    for d in diagnostics:
        for text in (d.message, d.note or ""):
            for match in _LINE_REF.finditer(text):
                yield int(match.group(1)) - 1, None
        yield from d.range
        if d.statement is not None:
            yield from d.statement
        if d.fix is not None:
            for edit in d.fix.edits:
                yield from edit.range


_new = tuple.__new__  # Position(...) and Range(...) without their Python-level __new__


def _moved(rng: Range, line) -> Range:
    start, end = rng
    return _new(Range, (_new(Position, (line(start[0]), start[1])), _new(Position, (line(end[0]), end[1]))))


def _shift(d: Diagnostic, line, boundary=None) -> Diagnostic:
    """``d`` with its lines mapped by ``line`` (an insertion at column 0 by ``boundary``,
    when given): every result below an inserted line, on every keystroke there, so built
    as directly as Python allows."""
    fix = d.fix
    if fix is not None:
        fix = Fix(
            fix.title,
            fix.applicability,
            tuple(
                [
                    Edit(_moved(e.range, boundary if boundary and _insertion_at_0(e.range) else line), e.content)
                    for e in fix.edits
                ]
            ),
            fix.elsewhere,  # other files: nothing there moved
        )
    statement = _moved(d.statement, line) if d.statement is not None else None
    message, note = d.message, d.note
    if "line " in message:
        message = _renumbered(message, line)
    if note and "line " in note:
        note = _renumbered(note, line)
    return Diagnostic(d.code, message, _moved(d.range, line), d.severity, fix, d.deprecated, note, statement)


def _insertion_at_0(rng: Range) -> bool:
    start, end = rng
    return start == end and start[1] == 0


def _renumbered(text: str, line) -> str:
    return _LINE_REF.sub(lambda m: f"line {line(int(m.group(1)) - 1) + 1}", text)

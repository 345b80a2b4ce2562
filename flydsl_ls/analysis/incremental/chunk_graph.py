"""The chunks of one version of a document as a graph of names: who defines and who
reads each module-level name, the closures a chunk's analysis needs, and the reduced
module that keeps a closure and stubs the rest (see ``incremental``)."""

from __future__ import annotations

import ast
import bisect
import itertools
from collections.abc import Iterable

from flydsl_ls.analysis.incremental.chunks import Chunk, first_line
from flydsl_ls.analysis.model.parsing import parse


class ChunkGraph:
    """The chunks of one source, with what closures need: where each starts, who defines
    and who reads each module-level name. What the previous version computed is carried
    over where the edit cannot have changed it."""

    def __init__(self, chunks: list[Chunk], previous: ChunkGraph | None = None):
        self.chunks = chunks
        self.starts = list(itertools.accumulate((c.lines for c in chunks[:-1]), initial=0)) if chunks else []
        self.start_of = {id(c): s for c, s in zip(chunks, self.starts)}
        change = previous._change_to(chunks) if previous is not None else None
        if change is not None and not change[1]:
            # No chunk came, went, or changed the names it binds or reads (typing in a
            # body): the name tables are the previous version's.
            self.definers, self.readers = previous.definers, previous.readers
            self.always, self.names, self.bindings = previous.always, previous.names, previous.bindings
            self.first_definition = previous.first_definition
        else:
            self._index_names()
        # Where an added import goes (rewrite._import_edit): after the last import above the
        # first definition, else at the very top, which is the first chunk's.
        first = self.first_definition if self.first_definition is not None else len(chunks)
        self.prelude = (chunks[0] if chunks else None, *(chunks[i] for i in self.always if i < first))
        self._closures: dict[tuple, tuple[tuple[Chunk, ...], frozenset[int]]] = {}
        if previous is not None:
            if previous.bindings == self.bindings:
                self.names = previous.names  # results compare it by identity
            if change is not None:
                self._closures = previous._still_valid(*change)

    def _index_names(self) -> None:
        chunks = self.chunks
        self.definers: dict[str, list[int]] = {}
        self.readers: dict[str, list[int]] = {}
        for i, chunk in enumerate(chunks):
            for name in chunk.defines:
                self.definers.setdefault(name, []).append(i)
            for name in chunk.reads:
                self.readers.setdefault(name, []).append(i)
        self.always = [i for i, c in enumerate(chunks) if c.always or not c.stubbable]
        self.names = frozenset(self.definers)
        # What binds each name: a `def fx` after `import ... as fx` changes what `fx` is.
        self.bindings = frozenset(
            (name, tuple(chunks[j].kind for j in where)) for name, where in self.definers.items()
        )
        # The first def or class: where imports stop counting as the import block.
        self.first_definition = next((i for i, c in enumerate(chunks) if c.kind in ("def", "class")), None)

    def _change_to(self, chunks: list[Chunk]) -> tuple[set[int], set[str]] | None:
        """The chunks that changed on the way to ``chunks`` and the module-level names
        they started or stopped reading; None when a chunk came or went or one changed
        what it binds, its kind or whether it stands in every reduced module."""
        if len(self.chunks) != len(chunks):
            return None
        changed: set[int] = set()
        reads_changed: set[str] = set()
        for i, (a, b) in enumerate(zip(self.chunks, chunks)):
            if a is b:
                continue
            if a.defines != b.defines or a.kind != b.kind or a.always != b.always or a.stubbable != b.stubbable:
                return None
            changed.add(i)
            reads_changed |= a.reads ^ b.reads
        return changed, reads_changed

    def _still_valid(self, changed: set[int], reads_changed: set[str]) -> dict:
        """The closures of this version that are the same in the next, where ``changed``
        chunks changed (not what they bind) and ``reads_changed`` names were read or not:
        those not holding a changed chunk and not asking for readers of such a name."""
        return {
            key: value
            for key, value in self._closures.items()
            if not key[2] and not value[1] & changed and not key[1] & reads_changed
        }

    def chunk_closure(self, index: int, asked: frozenset[str], everything: bool) -> tuple[Chunk, ...]:
        """``closure([index], ...)``, remembered (and carried to the next version)."""
        key = (index, asked, everything)
        found = self._closures.get(key)
        if found is None:
            members = self.closure([index], asked, everything)
            indices = frozenset(range(len(self.chunks))) if everything else frozenset(self._indices(index, asked))
            found = self._closures[key] = (members, indices)
        return found[0]

    def _indices(self, index: int, asked: frozenset[str]) -> set[int]:
        start = {index}
        for name in asked:
            start.update(self.readers.get(name, ()))
        return self.forward(start) | set(self.always)

    def chunk_at(self, line: int) -> int:
        return max(bisect.bisect_right(self.starts, line) - 1, 0)

    def closure(self, seeds: Iterable[int], asked: frozenset[str], everything: bool) -> tuple[Chunk, ...]:
        """The chunks a reduced module for ``seeds`` keeps, in file order."""
        if everything:
            return tuple(self.chunks)
        start = set(seeds)
        for name in asked:
            start.update(self.readers.get(name, ()))
        return tuple(self.chunks[i] for i in sorted(self.forward(start) | set(self.always)))

    def forward(self, start: Iterable[int]) -> set[int]:
        """``start`` and, transitively, the chunks defining a name one of them reads or binds."""
        seen = set(start)
        stack = list(seen)
        definers = self.definers
        while stack:
            chunk = self.chunks[stack.pop()]
            for names in (chunk.reads, chunk.defines):
                for name in names:
                    for j in definers.get(name, ()):
                        if j not in seen:
                            seen.add(j)
                            stack.append(j)
        return seen

    def presence(self, looked_up: frozenset[str], all_names: bool):
        """The answers to "is this module-level name bound, and by what?" a result depended
        on: each name with the kinds of the chunks binding it (an import followed by a
        `def` of the same name answers a lookup with the def)."""
        if all_names:
            return self.bindings
        return frozenset(b for b in self.bindings if b[0] in looked_up)

    def reduced(self, members: tuple[Chunk, ...], stand_ins: dict[int, str] | None = None) -> tuple[str, ast.Module]:
        """The module with every chunk not in ``members`` replaced by its stub (or by
        its text in ``stand_ins``). A stub's statements are parsed once per chunk and
        place: a keystroke parses the members (and the stubs that moved), not hundreds of
        stubs again."""
        keep = set(map(id, members))
        first = self.first_definition
        stand_ins = stand_ins or {}
        texts: list[str] = []
        code: list[str] = []  # what is parsed now: other chunks as blank lines
        known: dict[int, list[ast.stmt]] = {}  # stubs parsed before at the same place
        fresh: dict[int, str] = {}  # stubs parsed now
        for i, (c, start) in enumerate(zip(self.chunks, self.starts)):
            if id(c) in keep:
                stub = c.text  # kept whole (its statements are known when an edit parsed it here)
            else:
                stub = stand_ins.get(i) or (c.stub if i == first else c.plain_stub)
            texts.append(stub)
            statements = c.known_stub(stub, start)
            if statements is None:
                fresh[i] = stub
                code.append(stub)
            else:
                known[i] = statements
                code.append("\n" * c.lines)
        tree = parse("".join(code))
        parsed = self.statements_by_chunk(tree)
        body: list[ast.stmt] = []
        for i, c in enumerate(self.chunks):
            statements = known[i] if i in known else parsed.get(i, [])
            body.extend(statements)
            if i in fresh:  # a member's own text too: dropped after the analysis unless hot
                c.remember_stub(fresh[i], self.starts[i], statements)
        tree.body = body
        return "".join(texts), tree

    def statements_by_chunk(self, tree: ast.Module) -> dict[int, list[ast.stmt]]:
        """A reduced module's top-level statements, by the chunk they stand in."""
        by_chunk: dict[int, list[ast.stmt]] = {}
        starts, chunk, last = self.starts, 0, len(self.starts) - 1
        for stmt in tree.body:  # in line order, as the chunks: walk both
            line = first_line(stmt) - 1
            while chunk < last and starts[chunk + 1] <= line:
                chunk += 1
            by_chunk.setdefault(chunk, []).append(stmt)
        return by_chunk


def union(closures: Iterable[tuple[Chunk, ...]]) -> tuple[Chunk, ...]:
    seen: dict[int, Chunk] = {}
    for closure in closures:
        for chunk in closure:
            seen.setdefault(id(chunk), chunk)
    return tuple(seen.values())


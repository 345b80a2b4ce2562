"""Which chunks a whole-module rule (``visit_Module``) looks at, and what its result is
reused by: the rule's *policy* (see ``incremental``), read from the ``module_scope`` it
declares (``rules/module_scope``). A rule declaring none sees the whole file."""

from __future__ import annotations

import functools

from flydsl_ls.analysis.incremental.chunk_graph import ChunkGraph
from flydsl_ls.analysis.incremental.chunks import Chunk
from flydsl_ls.analysis.rules.base import Rule
from flydsl_ls.analysis.rules.module_scope import ModuleScope, Neighbours, Readers


class Policy:
    """Which chunks a whole-module rule looks at (its *core*, plus what they need), and
    the key its result is reused by."""

    def __init__(self, scope: ModuleScope) -> None:
        self.scope = scope
        # The readers of the core's names stand in as stubs reading them.
        self.reading_stubs = scope.readers is Readers.STUBS
        # A rule that only asks whether the lines around the core are blank sees the same
        # in its neighbours' stubs (blank and comment lines kept, code at both ends).
        self.full_neighbours = scope.neighbours is Neighbours.FULL

    def core_of(self, version: ChunkGraph) -> list[int]:
        scope = self.scope
        return [i for i, chunk in enumerate(version.chunks) if scope in chunk.cores]

    def seeds(self, version: ChunkGraph, core: list[int]) -> set[int]:
        """The core and, when the rule follows them, the chunks reading what it binds,
        through module-level aliases."""
        seeds = set(core)
        if self.reading_stubs:
            return seeds
        names = {name for i in core for name in version.chunks[i].defines}
        while names:
            found = {j for name in names for j in version.readers.get(name, ())} - seeds
            seeds |= found
            names = {n for j in found if version.chunks[j].kind == "other" for n in version.chunks[j].defines}
        return seeds

    def domain(self, version: ChunkGraph, asked: frozenset[str]) -> tuple[Chunk, ...]:
        core = self.core_of(version)
        if not core:
            return ()
        near = self._neighbours(version, core) if self.full_neighbours else set()
        return version.closure(self.seeds(version, core) | near, asked, False)

    def _neighbours(self, version: ChunkGraph, core: list[int]) -> set[int]:
        return {j for i in core for j in (i - 1, i + 1) if 0 <= j < len(version.chunks)}

    def key(self, version: ChunkGraph, asked: frozenset[str]):
        domain = self.domain(version, asked)
        if not self.reading_stubs and self.full_neighbours:
            return domain
        kept = set(map(id, domain))
        read = None
        if self.reading_stubs:
            read = frozenset(name for names in self._reads(version).values() for name in names)
        ends = None
        if not self.full_neighbours:
            neighbours = (version.chunks[j] for j in sorted(self._neighbours(version, self.core_of(version))))
            ends = tuple(c.blank_ends for c in neighbours if id(c) not in kept)
        return (domain, read, ends)

    def stand_ins(self, version: ChunkGraph, members: tuple[Chunk, ...]) -> dict[int, str]:
        """Texts standing in for chunks outside the domain, when not their stubs."""
        if not self.reading_stubs:
            return {}
        kept = set(map(id, members))
        return {j: version.chunks[j].reading_stub(sorted(names)) for j, names in self._reads(version).items() if id(version.chunks[j]) not in kept}

    def _reads(self, version: ChunkGraph) -> dict[int, set[str]]:
        """The core's module-level names each other chunk reads."""
        core = self.core_of(version)
        core_set = set(core)
        reads: dict[int, set[str]] = {}
        for name in {name for i in core for name in version.chunks[i].defines}:
            for j in version.readers.get(name, ()):
                if j not in core_set:
                    reads.setdefault(j, set()).add(name)
        return reads


class WholeModule(Policy):
    """A whole-module rule that declared no scope: it sees the whole file."""

    def __init__(self) -> None:
        pass

    def domain(self, version: ChunkGraph, asked: frozenset[str]) -> tuple[Chunk, ...]:
        return tuple(version.chunks)

    def key(self, version: ChunkGraph, asked: frozenset[str]):
        return tuple(version.chunks)

    def stand_ins(self, version: ChunkGraph, members: tuple[Chunk, ...]) -> dict[int, str]:
        return {}


_WHOLE_MODULE = WholeModule()


def policy_for(rule: type[Rule]) -> Policy:
    return _policy(rule.module_scope) if rule.module_scope is not None else _WHOLE_MODULE


@functools.cache
def _policy(scope: ModuleScope) -> Policy:
    return Policy(scope)

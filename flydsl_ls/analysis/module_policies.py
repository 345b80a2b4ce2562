"""Which chunks a whole-module rule (``visit_Module``) looks at, and what its result is
reused by: the rule's *policy* (see ``incremental``). A rule without one sees the whole
file."""

from __future__ import annotations

import weakref

from flydsl_ls.analysis.chunk_graph import ChunkGraph
from flydsl_ls.analysis.chunks import Chunk
from flydsl_ls.analysis.waitcnt_facts import COUNTER_CONSTANT


class Policy:
    """Which chunks a whole-module rule looks at (its *core*, plus what they need), and
    the key its result is reused by."""

    def __init__(self) -> None:
        self._cores: weakref.WeakKeyDictionary[Chunk, bool] = weakref.WeakKeyDictionary()

    def core(self, chunk: Chunk) -> bool:
        raise NotImplementedError

    def core_of(self, version: ChunkGraph) -> list[int]:
        cores = self._cores
        found = []
        for i, chunk in enumerate(version.chunks):
            is_core = cores.get(chunk)
            if is_core is None:
                is_core = cores[chunk] = self.core(chunk)
            if is_core:
                found.append(i)
        return found

    # Whether the core's neighbouring chunks are analysed in full: deleting a statement
    # looks at the lines and statements around it. A rule that only asks whether the
    # lines around are blank sees the same in their stubs (blank and comment lines kept,
    # code at both ends).
    full_neighbours = True

    def seeds(self, version: ChunkGraph, core: list[int]) -> set[int]:
        return set(core)

    def domain(self, version: ChunkGraph, asked: frozenset[str]) -> tuple[Chunk, ...]:
        core = self.core_of(version)
        if not core:
            return ()
        near = self._neighbours(version, core) if self.full_neighbours else set()
        return version.closure(self.seeds(version, core) | near, asked, False)

    def _neighbours(self, version: ChunkGraph, core: list[int]) -> set[int]:
        return {j for i in core for j in (i - 1, i + 1) if 0 <= j < len(version.chunks)}

    def key(self, version: ChunkGraph, asked: frozenset[str]):
        return self.domain(version, asked)

    def stand_ins(self, version: ChunkGraph, members: tuple[Chunk, ...]) -> dict[int, str]:
        """Texts standing in for chunks outside the domain, when not their stubs."""
        return {}


class WholeModule(Policy):
    """A whole-module rule nobody described: it sees the whole file."""

    def domain(self, version: ChunkGraph, asked: frozenset[str]) -> tuple[Chunk, ...]:
        return tuple(version.chunks)

    def key(self, version: ChunkGraph, asked: frozenset[str]):
        return tuple(version.chunks)


class SmemAllocatorPolicy(Policy):
    """FLY203 follows allocators and what they hand out: the chunks naming SmemAllocator
    or SmemPtr (its own gate), and those reading what they bind, through module-level
    aliases."""

    def core(self, chunk: Chunk) -> bool:
        return "SmemAllocator" in chunk.text or "SmemPtr" in chunk.text

    def seeds(self, version: ChunkGraph, core: list[int]) -> set[int]:
        seeds = set(core)
        names = {name for i in core for name in version.chunks[i].defines}
        while names:
            found = {j for name in names for j in version.readers.get(name, ())} - seeds
            seeds |= found
            names = {n for j in found if version.chunks[j].kind == "other" for n in version.chunks[j].defines}
        return seeds


class DeadWaitcntShimPolicy(Policy):
    """FLY402 judges shims and ``*CNT_*`` constants: the chunks binding such a name or
    holding a shim-shaped def (and ``__all__``). Of the chunks reading those names it only
    needs to know which names they read (a use outside the candidates keeps one alive), so
    they are in its reduced module but only that summary is in its key."""

    def core(self, chunk: Chunk) -> bool:
        return chunk.helper_shaped or "__all__" in chunk.defines or any(COUNTER_CONSTANT.search(n) for n in chunk.bound)

    def stand_ins(self, version: ChunkGraph, members: tuple[Chunk, ...]) -> dict[int, str]:
        kept = set(map(id, members))
        return {j: version.chunks[j].reading_stub(sorted(names)) for j, names in self._reads(version).items() if id(version.chunks[j]) not in kept}

    def _reads(self, version: ChunkGraph) -> dict[int, set[str]]:
        """The candidates' module-level names each other chunk reads."""
        core = self.core_of(version)
        core_set = set(core)
        reads: dict[int, set[str]] = {}
        for name in {name for i in core for name in version.chunks[i].defines}:
            for j in version.readers.get(name, ()):
                if j not in core_set:
                    reads.setdefault(j, set()).add(name)
        return reads

    def seeds(self, version: ChunkGraph, core: list[int]) -> set[int]:
        return set(core)  # the chunks reading their names stand in by reading_stub

    full_neighbours = False  # its deletions only ask which lines around are blank: their blank ends

    def key(self, version: ChunkGraph, asked: frozenset[str]):
        read = frozenset(name for names in self._reads(version).values() for name in names)
        domain = self.domain(version, asked)
        kept = set(map(id, domain))
        neighbours = (version.chunks[j] for j in sorted(self._neighbours(version, self.core_of(version))))
        return (domain, read, tuple(c.blank_ends for c in neighbours if id(c) not in kept))


POLICIES: dict[str, Policy] = {"FLY203": SmemAllocatorPolicy(), "FLY402": DeadWaitcntShimPolicy()}


def policy_for(code: str) -> Policy:
    return POLICIES.get(code) or WholeModule()

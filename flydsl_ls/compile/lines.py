"""Which source line each ISA instruction came from, read from the ``.loc`` directives of
a kernel's ``.s`` (FlyDSL writes them when its debug line tables are on: the compile
worker's ``line_info``, FlyDSL's ``FLYDSL_DEBUG_ENABLE_DEBUG_INFO``).

An instruction belongs to the line of the last ``.loc`` above it; ``.loc`` line 0 (code the
compiler made up, no line of its own) and instructions before the first ``.loc`` belong to
no line. The lines may be in other files than the kernel's (helpers it calls, inlined).
An instruction made by an inlined call also belongs to the line of the call, and of every
call around it: a kernel line calling a helper becomes the helper's instructions. The calls
come from the call chains the compile worker numbered into the ``.loc`` column (``chains``:
number -> frames, innermost first; the worker's CHAINS_FILE) and from the DWARF's inlined
calls (``dwarf.inlined_calls``: the outermost one only, as LLVM keeps it).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from flydsl_ls.compile.dwarf import inlined_calls

_FILE = re.compile(r'\s*\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"((?:[^"\\]|\\.)*)")?')
_LOC = re.compile(r"\s*\.loc\s+(\d+)\s+(\d+)(?:\s+(\d+))?")
_SECTION = re.compile(r"\s*\.(?:section\s+(\S+)|text\b|data\b|bss\b)")
_INSTRUCTION = re.compile(r"\s+([a-z_][a-z0-9_.]*)(?:\s+(.*?))?\s*(?:;.*)?$")

MEMORY_PREFIXES = (
    "buffer_", "tbuffer_", "global_", "flat_", "scratch_", "ds_", "image_",
    "s_load_", "s_buffer_load_", "s_store_", "s_buffer_store_", "s_scratch_",
)
WAIT_PREFIXES = ("s_waitcnt", "s_wait_")  # s_wait_loadcnt ... on gfx12
MMA_PREFIXES = ("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")


@dataclass(frozen=True)
class Located:
    """One instruction in program order, with the source line it came from (or none)."""

    text: str  # mnemonic and operands, whitespace collapsed, comment dropped
    file: str | None
    line: int | None
    calls: tuple[tuple[str, int], ...] = ()  # the inlined calls it came from, outermost first
    row: int = -1  # its line in the .s (0-based): where an ISA view shows it

    @property
    def mnemonic(self) -> str:
        return self.text.split(" ", 1)[0]


@dataclass
class SourceLine:
    """A source line's instructions, in program order: its own (``.loc`` names it) and those
    of the inlined calls made on it."""

    file: str
    line: int
    isa: list[str] = field(default_factory=list)
    own: int = 0  # how many of ``isa`` are the line's own; the others came through its calls

    @property
    def through_calls(self) -> int:
        return len(self.isa) - self.own

    def summary(self) -> dict[str, int]:
        mnemonics = [text.split(" ", 1)[0] for text in self.isa]
        return {
            "instructions": len(mnemonics),
            "memory": sum(m.startswith(MEMORY_PREFIXES) for m in mnemonics),
            "waits": sum(m.startswith(WAIT_PREFIXES) for m in mnemonics),
            "mfma": sum(m.startswith(MMA_PREFIXES) for m in mnemonics),
        }

    def counts(self) -> list[str]:
        """``["2 memory", "1 wait", "4 MFMA"]``: the summary's kinds that are there."""
        return count_words(self.summary())

    def to_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "isa": list(self.isa),
            "through_calls": self.through_calls,
            "summary": self.summary(),
        }


def located(isa_text: str, chains: dict[int, list] | None = None) -> list[Located]:
    """Every instruction of the code sections, in program order, with its line and the
    calls it came from."""
    files: dict[int, str] = {}
    found: list[Located] = []
    labels: dict[str, int] = {}  # a code label -> the index of the instruction after it
    in_code = True  # a kernel's .s opens with its .text
    where: tuple[str | None, int | None] = (None, None)
    chained: list[tuple[str, int]] = []  # the calls of the current .loc's chain, outermost first
    for row, raw in enumerate(isa_text.splitlines()):
        stripped = raw.strip()
        if not stripped or stripped.startswith((";", "//")):
            continue
        if in_code and stripped.endswith(":"):
            labels[stripped[:-1]] = len(found)
            continue
        if stripped.startswith("."):
            if match := _LOC.match(raw):
                number, line = int(match.group(1)), int(match.group(2))
                where = (files.get(number), line) if line else (None, None)
                chained = _chain(chains, where, int(match.group(3) or 0))
            elif match := _FILE.match(raw):
                folder, name = match.group(2), match.group(3)
                files[int(match.group(1))] = os.path.join(folder, name) if name is not None else folder
            elif match := _SECTION.match(raw):
                section = match.group(1)
                in_code = section is None and stripped.startswith(".text") or (section or "").startswith(".text")
            continue
        if not in_code or not raw[:1].isspace():
            continue  # text outside the code
        if match := _INSTRUCTION.match(raw):
            operands = " ".join((match.group(2) or "").split())
            text = f"{match.group(1)} {operands}" if operands else match.group(1)
            if where[0] is None:
                found.append(Located(text, None, None, row=row))
            else:
                found.append(Located(text, where[0], where[1], tuple(chained), row))
    return _with_calls(found, labels, files, isa_text)


def _chain(chains: dict[int, list] | None, where: tuple[str | None, int | None], column: int) -> list[tuple[str, int]]:
    """The calls around a ``.loc`` whose column numbers a chain starting at its own line."""
    frames = (chains or {}).get(column)
    if not frames or where[0] is None or (os.path.normpath(frames[0][0]), frames[0][1]) != (os.path.normpath(where[0]), where[1]):
        return []  # a real column, or a number from another text
    return [(path, line) for path, line in reversed(frames[1:])]


def _with_calls(found: list[Located], labels: dict[str, int], files: dict[int, str], isa_text: str) -> list[Located]:
    around: list[list[tuple[str, int]]] = [list(item.calls) for item in found]
    for call in sorted(inlined_calls(isa_text), key=lambda c: c.depth):
        file = files.get(call.file)
        if file is None or not call.line:
            continue
        for begin, end in call.ranges:
            if begin in labels and end in labels:
                for index in range(labels[begin], labels[end]):
                    if (file, call.line) not in around[index]:
                        around[index].append((file, call.line))
    return [Located(item.text, item.file, item.line, tuple(calls), item.row) if calls else item for item, calls in zip(found, around)]


def by_line(instructions: list[Located]) -> list[SourceLine]:
    """The instructions grouped by source line, sorted by file and line."""
    table: dict[tuple[str, int], SourceLine] = {}
    for item in instructions:
        own = (item.file, item.line) if item.file is not None and item.line is not None else None
        for key in dict.fromkeys([*((own,) if own else ()), *item.calls]):
            entry = table.get(key)
            if entry is None:
                entry = table[key] = SourceLine(*key)
            entry.isa.append(item.text)
            entry.own += key == own
    return [table[key] for key in sorted(table)]


def count_words(summary: dict[str, int]) -> list[str]:
    """The non-zero kinds of a line's (or lines') summary: ``["2 memory", "1 wait"]``."""
    words = (("memory", "memory"), ("waits", "wait"), ("mfma", "MFMA"))
    return [f"{summary[key]} {label}" for key, label in words if summary.get(key)]

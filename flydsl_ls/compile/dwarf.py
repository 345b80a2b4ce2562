"""The inlined calls of a kernel's ``.s``: which instructions each call site (file, line)
made, read from the DWARF the assembler text carries (``.debug_abbrev``, ``.debug_info``,
``.debug_ranges`` / ``.debug_rnglists`` written as ``.byte``/``.short``/``.long``/``.quad``
directives over ``.Ltmp`` labels in the code).

``.loc`` names only the innermost line of an instruction: a helper's line, not the kernel
line that called it. The ``DW_TAG_inlined_subroutine`` entries give the calls around it
(``DW_AT_call_file``/``DW_AT_call_line`` and the code ranges), so a call line gets the
instructions of its call. Anything this reader does not know (a form, a range encoding)
gives no calls at all rather than wrong ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIRECTIVE = re.compile(r"\s*\.(byte|short|long|quad|uleb128|sleb128|asciz|ascii|string)\s+(.*?)\s*$")
_SECTION = re.compile(r"\s*\.section\s+([^,\s]+)")
_LABEL = re.compile(r"^([.\w$]+):\s*$")

_INLINED_SUBROUTINE = 0x1D
_AT_LOW_PC, _AT_HIGH_PC, _AT_RANGES = 0x11, 0x12, 0x55
_AT_CALL_FILE, _AT_CALL_LINE = 0x58, 0x59
_ONE_TOKEN = {  # forms whose value is one directive (.byte, .short, .long, .quad, .asciz)
    0x01, 0x05, 0x06, 0x07, 0x08, 0x0B, 0x0C, 0x0E, 0x10, 0x11, 0x12, 0x13, 0x14, 0x17, 0x1F,
    0x20, 0x25, 0x26, 0x28, 0x29, 0x2A, 0x2C,
}
_LEB = {0x0D, 0x0F, 0x15, 0x1A, 0x1B, 0x22, 0x23}  # sdata, udata, ref_udata, strx, addrx, loclistx, rnglistx
_BLOCKS = {0x09: "leb", 0x18: "leb", 0x0A: "byte"}  # block, exprloc, block1: a length, then bytes
_FLAG_PRESENT, _IMPLICIT_CONST = 0x19, 0x21


class _Unknown(Exception):
    """Something this reader does not decode: no calls rather than guessed ones."""


@dataclass(frozen=True)
class Call:
    """An inlined call: the line it is on, and the code ranges (label pairs) it made."""

    file: int  # the line table's file number (``.file N``)
    line: int
    ranges: tuple[tuple[str, str], ...]
    depth: int  # 0: called from the kernel's own code


def inlined_calls(isa_text: str) -> list[Call]:
    """Every inlined call of the text, outermost first; [] when there is no DWARF or it
    uses what this reader does not decode."""
    sections = _sections(isa_text)
    try:
        abbrevs = _abbreviations(_Reader(sections.get(".debug_abbrev", ([], {}))))
        return _calls(_Reader(sections.get(".debug_info", ([], {}))), abbrevs, sections)
    except (_Unknown, IndexError, ValueError):
        return []


def _sections(text: str) -> dict[str, tuple[list[tuple[str, str]], dict[str, int]]]:
    """The directives of each debug section, and where its labels point in them."""
    found: dict[str, tuple[list[tuple[str, str]], dict[str, int]]] = {}
    current = None
    for raw in text.splitlines():
        if match := _SECTION.match(raw):
            name = match.group(1).strip('"')
            current = found.setdefault(name, ([], {})) if name.startswith(".debug_") else None
        elif raw.lstrip().startswith((".text", ".data", ".bss")):
            current = None
        elif current is not None:
            if match := _DIRECTIVE.match(raw):
                current[0].append((match.group(1), match.group(2)))
            elif match := _LABEL.match(raw.strip()):
                current[1][match.group(1)] = len(current[0])
    return found


class _Reader:
    def __init__(self, section: tuple[list[tuple[str, str]], dict[str, int]], at: int = 0):
        self.tokens, self.labels, self.at = section[0], section[1], at

    def done(self) -> bool:
        return self.at >= len(self.tokens)

    def token(self) -> tuple[str, str]:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def number(self) -> int:
        return _integer(self.token()[1])

    def leb(self, signed: bool = False) -> int:
        kind, value = self.token()
        if kind in ("uleb128", "sleb128"):
            return _integer(value)
        if kind != "byte":
            raise _Unknown(kind)
        result, shift, byte = 0, 0, _integer(value)
        while True:
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
            byte = self.number()
        if signed and byte & 0x40:
            result -= 1 << shift
        return result


def _integer(text: str) -> int:
    return int(text, 0)


def _abbreviations(reader: _Reader) -> dict[int, tuple[int, bool, list[tuple[int, int, int | None]]]]:
    table = {}
    while not reader.done():
        code = reader.leb()
        if code == 0:
            break
        tag, children = reader.leb(), bool(reader.number())
        attributes = []
        while True:
            name, form = reader.leb(), reader.leb()
            if name == 0 and form == 0:
                break
            attributes.append((name, form, reader.leb(signed=True) if form == _IMPLICIT_CONST else None))
        table[code] = (tag, children, attributes)
    return table


def _calls(reader: _Reader, abbrevs, sections) -> list[Call]:
    calls: list[Call] = []
    while not reader.done():
        reader.token()  # unit_length
        version = reader.number()
        if version == 4:
            reader.token()  # abbrev offset (one table)
            reader.number()  # address size
        elif version == 5:
            reader.number()  # unit type
            reader.number()  # address size
            reader.token()  # abbrev offset
        else:
            raise _Unknown(f"DWARF {version}")
        stack: list[Call | None] = []  # the open entries with children (None: not a call)
        while True:
            code = reader.leb()
            if code == 0:
                if not stack:
                    break
                stack.pop()
                if not stack:
                    break  # the unit's root entry closed
                continue
            tag, children, attributes = abbrevs[code]
            values = {name: _value(reader, form) for name, form, _ in attributes}
            call = None
            if tag == _INLINED_SUBROUTINE:
                depth = sum(1 for entry in stack if entry is not None)
                call = Call(
                    _integer(values.get(_AT_CALL_FILE) or "0"),
                    _integer(values.get(_AT_CALL_LINE) or "0"),
                    _ranges(values, sections, version),
                    depth,
                )
                calls.append(call)
            if children:
                stack.append(call)
    return calls


def _value(reader: _Reader, form: int) -> str | None:
    if form in _ONE_TOKEN:
        return reader.token()[1]
    if form in _LEB:
        return str(reader.leb(signed=form == 0x0D))
    if form in _BLOCKS:
        length = reader.leb() if _BLOCKS[form] == "leb" else reader.number()
        for _ in range(length):
            reader.token()
        return None
    if form in (_FLAG_PRESENT, _IMPLICIT_CONST):
        return None
    raise _Unknown(f"form {form:#x}")


def _ranges(values: dict, sections, version: int) -> tuple[tuple[str, str], ...]:
    if values.get(_AT_LOW_PC) is not None and values.get(_AT_HIGH_PC) is not None:
        low, high = values[_AT_LOW_PC], values[_AT_HIGH_PC]
        end = high.split("-")[0] if "-" in high else None  # ``.Ltmp4-.Ltmp3``: a length from low_pc
        if end is None:
            raise _Unknown("high_pc as a number")
        return ((low, end),)
    label = values.get(_AT_RANGES)
    if label is None:
        return ()
    if version == 4:
        reader = _Reader(sections[".debug_ranges"], sections[".debug_ranges"][1][label])
        pairs = []
        while True:
            begin, end = reader.token()[1], reader.token()[1]
            if begin == "0" and end == "0":
                return tuple(pairs)
            pairs.append((_start(begin), _start(end)))
    reader = _Reader(sections[".debug_rnglists"], sections[".debug_rnglists"][1][label])
    pairs = []
    while True:
        kind = reader.number()
        if kind == 0:  # DW_RLE_end_of_list
            return tuple(pairs)
        if kind != 4:  # only DW_RLE_offset_pair, what LLVM writes inside one function
            raise _Unknown(f"range list entry {kind}")
        pairs.append((_start(reader.token()[1]), _start(reader.token()[1])))


def _start(expression: str) -> str:
    """``.Ltmp0-.Lfunc_begin0`` -> ``.Ltmp0`` (ranges are offsets from the function's start)."""
    return expression.split("-")[0]

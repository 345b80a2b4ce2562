"""What a change did to the ISA, source line by source line: for ``migrate --verify`` and
``check --fix --verify`` when a kernel's ISA differs (compiles with line info).

The edited file's lines are paired through a line diff of the two texts (an unchanged line
with its new number; an edited stretch of lines as a whole); the other files' lines keep
their numbers. Each line's own instructions (the ``.loc`` names it) are compared by
mnemonic: operands alone (registers renumbered, offsets moved) are not a difference, and a
line whose instructions only moved among themselves says so.
"""

from __future__ import annotations

import difflib
import os
from collections import Counter
from dataclasses import dataclass, field

from flydsl_ls.compile.lines import Located


@dataclass
class LineChange:
    file: str
    before: tuple[int, int]  # first and last line, in the text before
    after: tuple[int, int]  # in the text after
    removed: Counter = field(default_factory=Counter)  # mnemonic -> count
    added: Counter = field(default_factory=Counter)

    def describe(self, display=os.path.basename) -> str:
        if self.before[1] < self.before[0]:
            where = f"{display(self.file)}:{_span(self.after)} (new lines)"
        elif self.after[1] < self.after[0]:
            where = f"{display(self.file)}:{_span(self.before)} (deleted)"
        else:
            where = f"{display(self.file)}:{_span(self.before)}"
            if self.after != self.before:
                where += f" (now {_span(self.after)})"
        if not self.removed and not self.added:
            return f"{where}: the same instructions in another order"
        parts = [f"-{m}{_times(n)}" for m, n in sorted(self.removed.items())]
        parts += [f"+{m}{_times(n)}" for m, n in sorted(self.added.items())]
        return f"{where}: {', '.join(parts)}"


def line_changes(before: list[Located], after: list[Located], path: str, text_before: str, text_after: str) -> list[LineChange]:
    """The source lines (of ``path``, edited from ``text_before`` to ``text_after``, and of
    the files it calls into) whose own instructions differ, in file and line order."""
    own_before, own_after = _own(before), _own(after)
    real = os.path.realpath(path)
    changes: list[LineChange] = []
    files = sorted({f for f, _ in own_before} | {f for f, _ in own_after})
    for file in files:
        if os.path.realpath(file) == real:
            pairs = _paired(text_before, text_after)
        else:
            numbers = sorted({n for f, n in own_before if f == file} | {n for f, n in own_after if f == file})
            pairs = [((n, n), (n, n)) for n in numbers]
        for old, new in pairs:
            a = [m for n in range(old[0], old[1] + 1) for m in own_before.get((file, n), ())]
            b = [m for n in range(new[0], new[1] + 1) for m in own_after.get((file, n), ())]
            if a != b:
                changes.append(LineChange(file, old, new, Counter(a) - Counter(b), Counter(b) - Counter(a)))
    return changes


def _own(instructions: list[Located]) -> dict[tuple[str, int], list[str]]:
    table: dict[tuple[str, int], list[str]] = {}
    for item in instructions:
        if item.file is not None and item.line is not None:
            table.setdefault((item.file, item.line), []).append(item.mnemonic)
    return table


def _paired(text_before: str, text_after: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(lines before, lines after), 1-based and inclusive: each unchanged line with its new
    number, each edited stretch as one pair."""
    old, new = text_before.splitlines(), text_after.splitlines()
    pairs = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            pairs += [((i + 1, i + 1), (j + 1, j + 1)) for i, j in zip(range(i1, i2), range(j1, j2))]
        else:  # an empty side (lines inserted or deleted) is (k, k - 1): no line
            pairs.append(((i1 + 1, i2), (j1 + 1, j2)))
    return pairs


def _span(lines: tuple[int, int]) -> str:
    return str(lines[0]) if lines[0] == lines[1] else f"{lines[0]}-{lines[1]}"


def _times(count: int) -> str:
    return f" x{count}" if count > 1 else ""


def isa_by_line(before, after, text_before: str, text_after: str, limit: int = 3) -> str:
    """``ISA by source line: k.py:18: -v_add_u32, +v_add_i32; ...`` for two compiles
    (``CompileResult``) of ``text_before`` and ``text_after`` whose kernels' ISA differs
    by source line; "" when no kernel's does (or they have no line info)."""
    said = []
    for old, new in zip(before.kernels, after.kernels):
        changes = line_changes(old.located, new.located, before.file, text_before, text_after)
        said += [change.describe() for change in changes]
    if not said:
        return ""
    more = f"; {len(said) - limit} more" if len(said) > limit else ""
    return "ISA by source line: " + "; ".join(said[:limit]) + more

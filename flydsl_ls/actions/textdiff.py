"""Turning "old text -> new text" into a few minimal edits (as jedi-language-server does)."""

from __future__ import annotations

import difflib

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.text import LineIndex, Position, Range


def minimal_edits(old: str, new: str) -> list[Edit]:
    """Line-level diff, each changed hunk trimmed to the characters that differ."""
    if old == new:
        return []
    old_index = LineIndex(old)
    old_lines, new_lines = old_index.lines, LineIndex(new).lines
    edits = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        before = "".join(old_lines[i1:i2])
        after = "".join(new_lines[j1:j2])
        start = old_index.offset(Position(i1, 0))
        # Trim the common prefix and suffix inside the hunk.
        prefix = 0
        while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
            prefix += 1
        suffix = 0
        while (
            suffix < min(len(before), len(after)) - prefix
            and before[len(before) - 1 - suffix] == after[len(after) - 1 - suffix]
        ):
            suffix += 1
        begin = old_index.position_at(start + prefix)
        end = old_index.position_at(start + len(before) - suffix)
        edits.append(Edit(Range(begin, end), after[prefix : len(after) - suffix]))
    return edits

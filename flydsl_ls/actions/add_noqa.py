"""``check --add-noqa``: a ``# noqa: CODE`` on each line with a finding, as ruff adds them.

A line that already has a ``# noqa: ...`` gets the codes merged into it; one with a bare
``# noqa`` already suppresses everything. A finding is suppressed on the line where it
starts, so that is where the comment goes; a line whose end is inside a string or after a
backslash continuation cannot take one, and is left as it is (and counted).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flydsl_ls.actions.fixes import parses
from flydsl_ls.actions.suppress import NOQA, comment_edit
from flydsl_ls.analysis.model.diagnostic import Diagnostic, Edit
from flydsl_ls.analysis.model.suppression import is_suppressed, suppressions
from flydsl_ls.analysis.model.text import LineIndex, apply_edits
from flydsl_ls.analysis.rules import SYNTAX_ERROR


@dataclass
class NoqaOutcome:
    text: str
    added: int = 0  # directives added or extended
    skipped: list[int] = field(default_factory=list)  # 0-based lines that could not take one


def add_noqa(source: str, diagnostics: list[Diagnostic]) -> NoqaOutcome:
    """``source`` with the codes of ``diagnostics`` (those not suppressed) in ``# noqa``
    comments on the lines where they start."""
    wanted: dict[int, list[str]] = {}
    for d in diagnostics:
        if d.code == SYNTAX_ERROR:
            continue  # nothing to suppress: the file does not parse
        codes = wanted.setdefault(d.range.start.line, [])
        if d.code not in codes:
            codes.append(d.code)
    if not wanted:
        return NoqaOutcome(source)
    index = LineIndex(source)
    edits = {line: e for line, codes in wanted.items() if (e := comment_edit(index, line, codes, NOQA)) is not None}
    skipped = sorted(set(wanted) - set(edits))
    text = apply_edits(source, list(edits.values()))
    broken = _failing(source, text, wanted, edits)
    if broken:  # rare: find the lines at fault one at a time
        for line in broken:
            del edits[line]
        skipped = sorted(set(skipped) | set(broken))
        text = apply_edits(source, list(edits.values()))
    return NoqaOutcome(text, len(edits), skipped)


def _failing(source: str, text: str, wanted: dict[int, list[str]], edits: dict[int, Edit]) -> list[int]:
    """The edited lines whose comment did not land as one (inside a string), or all of them
    that break parsing, when the text no longer parses."""
    table = suppressions(text)
    failing = [line for line in edits if not all(is_suppressed(c, line, table) for c in wanted[line])]
    if parses(source) and not parses(apply_edits(source, [e for line, e in edits.items() if line not in failing])):
        for line, edit in edits.items():
            if line not in failing and not parses(apply_edits(source, [edit])):
                failing.append(line)
    return failing

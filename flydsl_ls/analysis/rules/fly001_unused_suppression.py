from __future__ import annotations

from collections.abc import Collection

from flydsl_ls.analysis.model.diagnostic import Applicability, Diagnostic, Edit, Fix, Severity
from flydsl_ls.analysis.model.suppression import FLYDSL, Directive, directives
from flydsl_ls.analysis.model.text import LineIndex, Position, Range
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

_HEADER = "import flydsl.expr as fx\n"


class UnusedSuppression(Rule):
    """
    A suppression comment that suppresses nothing, like ruff's RUF100 (`unused-noqa`).

    Both kinds of comment are judged, `# flydsl: ignore[...]` and `# noqa: ...`, once every
    other rule has run on the file. A code is flagged when it is:

    - **unused**: its rule is selected for the file and reports nothing that starts on the
      comment's line (a comment suppresses the findings that *start* on its line, also for
      a finding spanning several lines);
    - **unknown**: no flydsl-ls rule has that code (`FLY999`, or a rule name written where
      a code belongs); in a `# noqa` comment only `FLY` codes are ours: `E501` or `F401`
      belong to ruff or flake8 and are left alone;
    - **duplicated**: listed twice in the same comment.

    A code whose rule is not selected for the file (`--select`, `ignore`,
    `per-file-ignores`) is never flagged: nothing says whether it would fire. (ruff flags
    such codes as "non-enabled"; flydsl-ls does not, so a CI job checking a subset of the
    rules never strips the suppressions of the others.) A bare `# flydsl: ignore` is
    flagged when nothing on its line is reported and every rule is selected; a bare
    `# noqa` never is: it may be there for another linter. A comment listing `FLY001`
    itself is not judged. A file that does not parse is not judged either (part of it is
    set aside until it does).

    Not in the default set, as in ruff: enable it with `--extend-select FLY001` (or
    `extend-select = ["FLY001"]`, or `--select ALL`).
    """

    code = "FLY001"
    name = "unused-suppression"
    summary = "A `# flydsl: ignore` or `# noqa` code that suppresses nothing (unused, unknown or duplicated)"
    replacement = "Remove the code from the comment, or the comment when nothing is left"
    fix_safety = "safe"
    fix_title = "Remove unused suppression"
    deprecated_tag = False
    default = False
    severity = Severity.WARNING

    VALID = [
        Valid(_HEADER + "w = fx.Int32(fx.Int32(3))  # flydsl: ignore[FLY104]\n"),
        Valid(_HEADER + "w = fx.Int32(fx.Int32(3))  # noqa: FLY104, E501\n"),
        Valid(_HEADER + "w = fx.Int32(fx.Int32(3))  # flydsl: ignore\n"),
        Valid("x = 1  # noqa: E501\n"),
        Valid("x = 1  # noqa\n"),
        Valid("x = 1  # flydsl: ignore[FLY001, FLY104]\n"),
        Valid('text = "# flydsl: ignore[FLY104]"\n'),
        # A finding spanning lines is suppressed on its first line.
        Valid(_HEADER + "w = fx.Int32(  # flydsl: ignore[FLY104]\n    fx.Int32(3))\n"),
    ]
    INVALID = [
        Invalid("x = 1  # flydsl: ignore[FLY104]\n", "x = 1\n", line=1, column=8, message="unused: `FLY104`"),
        Invalid("x = 1  # noqa: FLY104, E501\n", "x = 1  # noqa: E501\n", message="Unused `noqa` directive (unused: `FLY104`)"),
        Invalid(
            _HEADER + "w = fx.Int32(fx.Int32(3))  # flydsl: ignore[FLY101, FLY104]\n",
            _HEADER + "w = fx.Int32(fx.Int32(3))  # flydsl: ignore[FLY104]\n",
            line=2,
        ),
        Invalid("x = 1  # flydsl: ignore[FLY999]\n", "x = 1\n", message="unknown: `FLY999`"),
        Invalid("x = 1  # flydsl: ignore[raw-unwrap]\n", "x = 1\n", message="unknown: `RAW-UNWRAP`"),
        Invalid("x = 1  # flydsl: ignore\n", "x = 1\n", message="Unused blanket `flydsl: ignore` directive"),
        Invalid(
            _HEADER + "w = fx.Int32(fx.Int32(3))  # noqa: FLY104, FLY104\n",
            _HEADER + "w = fx.Int32(fx.Int32(3))  # noqa: FLY104\n",
            message="duplicated: `FLY104`",
        ),
        Invalid("x = 1  # type: ignore  # noqa: FLY104\n", "x = 1  # type: ignore\n"),
        Invalid("x = 1  # noqa: FLY104  # keep the type\n", "x = 1  # keep the type\n"),
        Invalid(
            _HEADER + "w = fx.Int32(\n    fx.Int32(3))  # flydsl: ignore[FLY104]\n",
            _HEADER + "w = fx.Int32(\n    fx.Int32(3))\n",
            line=3,
        ),
        Invalid("def f():\n    # flydsl: ignore[FLY104]\n    return 1\n", "def f():\n    return 1\n", line=2),
        Invalid(
            "x = 1  # flydsl: ignore[FLY104]  # noqa: FLY101\n",
            "x = 1\n",
            count=2,
        ),
    ]

    @classmethod
    def judge_suppressions(cls, source, findings, selected, directives):
        return unused_suppressions(source, findings, selected, directives)


def unused_suppressions(
    source: str, diagnostics: list[Diagnostic], selected: Collection[str], found: list[Directive] | None = None
) -> list[Diagnostic]:
    """FLY001's findings: the codes of ``source``'s suppression comments (``found``, when
    the caller has them) that suppress none of ``diagnostics`` (every rule's findings,
    before suppression), judged against the ``selected`` rule codes."""
    from flydsl_ls.analysis.rules import BY_CODE  # the registry imports this module

    found = directives(source) if found is None else found
    if not found:
        return []
    reported: dict[int, set[str]] = {}
    for d in diagnostics:
        reported.setdefault(d.range.start.line, set()).add(d.code)
    waived = {d.line for d in found if d.codes is not None and UnusedSuppression.code in d.codes}
    everything = all(code in selected for code in BY_CODE if code != UnusedSuppression.code)
    index: LineIndex | None = None
    results = []
    for directive in found:
        if directive.line in waived:
            continue
        on_line = reported.get(directive.line, set())
        if directive.codes is None:
            if directive.kind == FLYDSL and everything and not on_line:
                message = f"Unused blanket `{directive.label}` directive"
                kept: list[str] = []
            else:
                continue
        else:
            kept, unused, unknown, duplicated = [], [], [], []
            seen: set[str] = set()
            for code in directive.codes:
                if code in seen:
                    duplicated.append(code)
                elif directive.kind != FLYDSL and not code.startswith("FLY"):
                    kept.append(code)  # another linter's
                elif code in on_line or (code in BY_CODE and code not in selected):
                    kept.append(code)
                elif code not in BY_CODE:
                    unknown.append(code)
                else:
                    unused.append(code)
                seen.add(code)
            if not (unused or unknown or duplicated):
                continue
            groups = [(name, codes) for name, codes in (("unused", unused), ("unknown", unknown), ("duplicated", duplicated)) if codes]
            listed = "; ".join(f"{name}: {', '.join(f'`{c}`' for c in codes)}" for name, codes in groups)
            message = f"Unused `{directive.label}` directive ({listed})"
        if index is None:
            index = LineIndex(source)
        edit = _edit(index, directive, kept)
        fix = Fix(UnusedSuppression.fix_title, Applicability.SAFE, (edit,))
        where = Range(Position(directive.line, directive.start), Position(directive.line, directive.end))
        results.append(Diagnostic(UnusedSuppression.code, message, where, UnusedSuppression.severity, fix))
    return results


def _edit(index: LineIndex, directive: Directive, kept: list[str]) -> Edit:
    """The directive listing only ``kept``; without it when nothing is kept (the comment
    too when it held nothing else, the line too when it held nothing else)."""
    line = directive.line
    if kept:
        where = Range(Position(line, directive.start), Position(line, directive.end))
        return Edit(where, directive.spelled(kept))
    text = index.line_text(line)
    before = text[directive.comment_start : directive.start]
    after = text[directive.end : directive.comment_end]
    if after.lstrip().startswith("#"):  # `# noqa: X  # why`: the comment after it stays
        end = directive.end + len(after) - len(after.lstrip())
        return Edit(Range(Position(line, directive.start), Position(line, end)), "")
    if before.strip():  # `# type: ignore  # noqa: X`: the comment before it stays
        start = directive.comment_start + len(before.rstrip())
        return Edit(Range(Position(line, start), Position(line, directive.comment_end)), "")
    code = text[: directive.comment_start]
    if not code.strip():  # a line holding only the comment
        if line + 1 < len(index.lines):
            return Edit(Range(Position(line, 0), Position(line + 1, 0)), "")
        return Edit(Range(Position(line, 0), Position(line, len(text))), "")
    start = len(code.rstrip())
    return Edit(Range(Position(line, start), Position(line, directive.comment_end)), "")

"""Suppression comments: what counts as one, and where (``analysis/model/suppression.py``)."""

from __future__ import annotations

import io
import time
import tokenize
from pathlib import Path

import pytest

from flydsl_ls.analysis.model.suppression import FLYDSL, NOQA, _comments, directives, suppressions
from flydsl_ls.analysis.model.text import LineIndex

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for folder in ("flydsl_ls", "tests", "examples", "benchmarks") for p in (ROOT / folder).rglob("*.py"))


def _scanned(text: str) -> list[tuple[tuple[int, int], str]]:
    index = LineIndex(text)
    found = []
    for offset, comment in _comments(text):
        line, column = index.position_at(offset)
        found.append(((line + 1, column), comment))
    return found


def test_the_scanner_finds_the_comments_tokenize_finds():
    """The scanner stepping over strings (the server runs it on every keystroke of a file
    with a `# noqa`) against tokenize, on every Python file of this repository."""
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        expected = [
            (t.start, t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT
        ]
        assert _scanned(text) == expected, path


@pytest.mark.parametrize(
    "text,comments",
    [
        ("x = '# no'  # yes\n", ["# yes"]),
        ('x = """\n# no\n"""  # yes\n', ["# yes"]),
        ("x = '''a\\''' # yes'''  # real\n", ["# real"]),
        ('x = "a\\\\"  # yes\n', ["# yes"]),
        ('x = "a \\\n# no"  # yes\n', ["# yes"]),
        ("x = 'open # here\ny = 1  # next\n", ["# next"]),  # an unterminated string ends its line
        ('x = """never closed # no\n# no\n', []),
        ("x = 1  # a\r\ny = 2  # b\rz = 3  # c", ["# a", "# b", "# c"]),
    ],
)
def test_strings_and_line_ends(text, comments):
    assert [c for _, c in _comments(text)] == comments


def test_unterminated_strings_stay_linear():
    text = '"""' + "x = 'a' # noqa\n" * 20000 + "'" * 20000
    start = time.perf_counter()
    assert directives(text) == []
    assert time.perf_counter() - start < 2  # quadratic would be minutes


def test_directives():
    text = (
        "a = 1  # noqa: FLY101, e501\n"
        "b = 2  #noqa:FLY104 FLY101 - why\n"
        "c = 3  # NOQA\n"
        "d = 4  # noqa: - nothing valid\n"
        "e = 5  # ruff: noqa: FLY101\n"
        "f = 6  # type: ignore  # flydsl: ignore[fly101,  FLY104]\n"
        "g = 7  # flydsl: ignore  # noqa: FLY301\n"
        "h = '# noqa: FLY101'\n"
        "i = 8  # noqanything\n"
    )
    found = [(d.kind, d.line, d.codes) for d in directives(text)]
    assert found == [
        (NOQA, 0, ("FLY101", "E501")),
        (NOQA, 1, ("FLY104", "FLY101")),
        (NOQA, 2, None),
        (NOQA, 3, None),
        (FLYDSL, 5, ("FLY101", "FLY104")),
        (FLYDSL, 6, None),
        (NOQA, 6, ("FLY301",)),
    ]
    first = directives(text)[0]
    assert text.splitlines()[0][first.start : first.end] == "# noqa: FLY101, e501"
    assert suppressions(text) == {
        0: frozenset({"FLY101", "E501"}),
        1: frozenset({"FLY104", "FLY101"}),
        2: None,
        3: None,
        5: frozenset({"FLY101", "FLY104"}),
        6: None,
    }


def test_directives_found_as_the_case_blind_pattern_finds_them():
    """The whole text is searched in its lower case first; `ſ` is an `s` to the pattern."""
    for text in ("x = 1  # FLYDSL: IGNORE\n", "x = 1  # NoQa\r\n", "x = 1  # flydſl: ignore\ny = 2\n", "é = 1  # noqa\r"):
        assert [d.line for d in directives(text)] == [0], repr(text)
    assert directives("x = 1  # flydsl ignore, no qa\n") == []

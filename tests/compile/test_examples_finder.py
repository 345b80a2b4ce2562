"""The `# flydsl: example` convention, found from the source text alone."""

from __future__ import annotations

import pytest

from flydsl_ls.compile.examples import choose_example, find_examples, split_target
from tests.compile.conftest import MFMA_GEMM, VECTOR_ADD


def names(source: str) -> list[tuple[str, int, str | None]]:
    return [(e.name, e.line, e.arch) for e in find_examples(source)]


def test_marker_on_the_line_above():
    src = "import x\n\n# flydsl: example\ndef small(device):\n    return 1, ()\n"
    assert names(src) == [("small", 4, None)]


def test_marker_on_the_def_line_and_with_arch():
    src = "def big(device):  # flydsl: example gfx950\n    pass\n"
    assert names(src) == [("big", 1, "gfx950")]


def test_marker_above_decorators():
    src = "import functools\n# flydsl: example GFX942\n@functools.cache\ndef cached(device):\n    pass\n"
    assert names(src) == [("cached", 4, "gfx942")]


def test_spacing_variants():
    src = "#flydsl:example\ndef a(d): pass\n#   flydsl:   example   gfx90a\ndef b(d): pass\n"
    assert names(src) == [("a", 2, None), ("b", 4, "gfx90a")]


@pytest.mark.parametrize(
    "src",
    [
        # not module level
        "class K:\n    # flydsl: example\n    def m(self, d): pass\n",
        "def outer():\n    # flydsl: example\n    def inner(d): pass\n",
        # marker in a string or docstring, not a comment
        'X = """\n# flydsl: example\n"""\ndef f(d): pass\n',
        # marker too far from the def
        "# flydsl: example\n\ndef f(d): pass\n",
        # other comments
        "# flydsl: examples\ndef f(d): pass\n# flydsl: example of nothing\ndef g(d): pass\n",
        # syntax error: nothing is reported
        "# flydsl: example\ndef f(d:\n",
    ],
)
def test_not_examples(src):
    assert find_examples(src) == []


def test_file_is_not_imported(tmp_path):
    src = "raise SystemExit('imported!')\n# flydsl: example\ndef f(device): pass\n"
    assert names(src) == [("f", 3, None)]


def test_shipped_examples():
    assert names(VECTOR_ADD.read_text()) == [("small", 56, None)]
    found = find_examples(MFMA_GEMM.read_text())
    assert [(e.name, e.arch) for e in found] == [("one_tile", None), ("one_tile_gfx950", "gfx950")]


def test_split_and_choose():
    assert split_target("a/b.py::ex") == ("a/b.py", "ex")
    assert split_target("a/b.py") == ("a/b.py", None)
    found = find_examples(MFMA_GEMM.read_text())
    assert choose_example(found, None).name == "one_tile"
    assert choose_example(found, "one_tile_gfx950").arch == "gfx950"
    with pytest.raises(LookupError, match="one_tile, one_tile_gfx950"):
        choose_example(found, "nope")
    with pytest.raises(LookupError, match="flydsl: example"):
        choose_example([], None)

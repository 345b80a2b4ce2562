"""The line table: an edited index equals one built from the edited text."""

from hypothesis import given, settings
from hypothesis import strategies as st

from flydsl_ls.analysis.model.text import LineIndex

# Every line end LSP and ast know, the ones only str.splitlines knows, and wide characters.
_PIECES = st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "\x0c", "\v", "\x85", "\u2028", "é", "😀"])
_TEXTS = st.lists(_PIECES, max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(_TEXTS, st.data())
def test_edited_index_equals_a_fresh_one(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    new = data.draw(_TEXTS)
    edited = LineIndex(text).edited(start, end, new)
    fresh = LineIndex(text[:start] + new + text[end:])
    assert (edited.text, edited.lines, edited._starts) == (fresh.text, fresh.lines, fresh._starts)

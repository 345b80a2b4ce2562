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


@given(
    st.lists(st.sampled_from(["x = 1", "é = 'ü'", "", "  y", "😀", "a\r", "b\r\n", "c\n"]), max_size=6).map("".join),
    st.integers(min_value=0, max_value=8),
    st.integers(min_value=0, max_value=12),
)
@settings(max_examples=400, deadline=None)
def test_an_ast_position_is_the_code_points_of_its_utf8_bytes_up_to_the_line_end(text, lineno, byte_col):
    from flydsl_ls.analysis.model.text import Position, Range

    index = LineIndex(text)
    line = index.line_text(lineno - 1)  # without its line end ("" past the last line)
    expected = Position(lineno - 1, len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace")))
    found = index.from_ast(lineno, byte_col)
    assert found == expected and type(found) is Position

    class Node:  # the four positions a node carries
        pass

    node = Node()
    node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = lineno, byte_col, lineno, byte_col
    span = index.node_range(node)
    assert span == Range(expected, expected) and type(span) is Range and type(span.end) is Position

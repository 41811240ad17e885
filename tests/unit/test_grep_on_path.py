"""Which matching entries are on their session's active path (core.grep_match.marked, the @ or .
of each line grep prints): the path's rows (int32 each, as the catalogue and a direct read keep
them) read as a text of a character per row, and past the last code point compared as ints. Any
path, any rows, judged by plain membership."""

from array import array

from hypothesis import given, settings, strategies as st

from stree.core.grep_match import marked

# rows anywhere, and where a text of them is unusual: 0, the surrogates, the last code point and past it
ROWS = st.one_of(st.integers(0, 300), st.sampled_from([0, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFEFF,
                                                       0xFFFE, 0x10FFFF, 0x110000, 2**31 - 1]),
                 st.integers(0, 2**31 - 1))


def on_path(path, rows):
    """The rows of `rows` marked on the path `path` (a list of rows)."""
    hits = [((0, r, None, None, "user", None, f"e{r}"), [(1, "line")]) for r in rows]
    got = marked(array("i", path).tobytes(), hits)
    assert [(c, lines) for c, _, lines in got] == hits  # (each hit kept, in its place)
    return {c[1] for c, on, _ in got if on}


@settings(max_examples=2000, deadline=None)
@given(st.lists(ROWS, unique=True, max_size=40), st.lists(ROWS, max_size=20))
def test_the_rows_on_the_path_are_those_it_holds(path, rows):
    assert on_path(path, rows) == set(path) & set(rows)


def test_an_empty_path_holds_no_row():
    assert on_path([], [0, 1, 2]) == set()


def test_a_first_row_that_spells_a_byte_order_mark_is_a_row():
    assert on_path([0xFEFF, 0xFFFE, 7], [0xFEFF, 0xFFFE, 7, 8]) == {0xFEFF, 0xFFFE, 7}

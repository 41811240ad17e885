"""The word index of the shared catalogue (stree.storage.catalog.postgres): whatever a text
holds, every word-part of a literal it contains is found among the words a push keeps for it
(exactly, as the start or end of one, or inside one), so narrowing a search by them never
loses a session that holds the literal. No server needed: the words are cut in Python."""

from hypothesis import given, settings
from hypothesis import strategies as st

from stree.storage.catalog.postgres import WORD_CHUNK, word_parts, words_of

ALPHABET = st.sampled_from(list("ab_1 .-(é\u0130\u212a\u00df\u0300\n\t/") + ["\u4e2d", "\U0001f600"])


def found(part, where, words):
    test = {"exact": lambda w: w == part, "prefix": lambda w: w.startswith(part),
            "end": lambda w: w.endswith(part), "in": lambda w: part in w}[where]
    return any(test(w) for w in words)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(ALPHABET, max_size=60), min_size=1, max_size=4), st.data())
def test_every_part_of_a_literal_a_text_holds_is_among_its_words(texts, data):
    words = words_of(texts)
    text = data.draw(st.sampled_from(texts))
    start = data.draw(st.integers(0, len(text)))
    literal = text[start:data.draw(st.integers(start, len(text)))]
    for part, where in word_parts(literal):
        assert found(part, where, words), (literal, part, where, words)


@settings(max_examples=60, deadline=None)
@given(st.integers(2 * WORD_CHUNK + 1, 5 * WORD_CHUNK), st.data())
def test_a_long_word_is_kept_as_pieces_that_hold_any_part_of_it(length, data):
    word = "".join(chr(ord("a") + (i * 7 + i // 26) % 26) for i in range(length))
    words = words_of([f"x {word} y"])
    assert all(len(w) <= 2 * WORD_CHUNK for w in words)  # (what a btree index on them takes)
    start = data.draw(st.integers(0, length - 1))
    literal = word[start:start + data.draw(st.integers(1, WORD_CHUNK))]
    for part, where in word_parts(" " * (start == 0) + literal + " " * (start + len(literal) == length)):
        assert found(part, where, words), (start, len(literal), where)


def test_the_parts_of_a_literal_and_where_a_text_holds_them():
    assert word_parts("parse_line(rows") == [("parse_line", "end"), ("rows", "prefix")]
    assert word_parts("zebra") == [("zebra", "in")]
    assert word_parts(" foo.bar baz ") == [("foo", "exact"), ("bar", "exact"), ("baz", "exact")]
    assert word_parts("x" * (WORD_CHUNK + 1)) == []  # (too long a part: not used to narrow)
    assert words_of(["Foo bar, foo_bar! é\u0300"]) == {"Foo", "bar", "foo_bar", "é"}  # (a combining mark: not \\w)

"""Terminal widths: the quick way (a whole text of one-column characters measured by its
length, cut by slicing) gives exactly what the character-by-character rule gives."""

from hypothesis import given, strategies as st

from stree.output import modes

# box drawing, the ellipsis, arrows, combining marks, wide (CJK, emoji) and two-column
# geometric shapes next to one-column ones, ASCII and Latin
CHARS = st.sampled_from("ab Z~\x7f│├└─┬…→é\u0301\u0300中日😀◽◾■□éñ")
TEXT = st.text(CHARS, max_size=14)


def by_character(segments, width):
    out, used = [], 0
    for style, text in segments:
        kept = []
        for c in text:
            w = modes._char_width(c)
            if used + w > width - 1:
                out.append((style, "".join(kept) + "…"))
                return out
            kept.append(c)
            used += w
        out.append((style, "".join(kept)))
    return out


@given(st.lists(st.tuples(st.sampled_from([None, "id", "label"]), TEXT), max_size=5), st.integers(-2, 40))
def test_fit_is_the_character_rule(segments, width):
    assert modes.fit(segments, width) == by_character(segments, width)


@given(TEXT)
def test_display_width_is_the_sum_of_the_characters(text):
    assert modes.display_width(text) == sum(modes._char_width(c) for c in text)


def test_every_character_taken_as_one_column_is_one():
    narrow = [chr(cp) for cp in range(0x3000) if not modes._NOT_NARROW.search(chr(cp))]
    assert len(narrow) > 1000 and all(modes._char_width(c) == 1 for c in narrow)

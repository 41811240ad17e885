"""The previews section an index is rewritten with: after a few appended entries only their
previews are new, and the kept part is copied whole. The section must be the one the general
merge writes, byte for byte, and read back to the same previews."""

from types import SimpleNamespace

from hypothesis import given, settings, strategies as st

from stree.storage.previews import PreviewCache

SEGMENTS = st.lists(st.tuples(st.sampled_from(["text", "dim", "label"]), st.text(max_size=12)), max_size=3).map(tuple)


def put(cache, previews):
    """New previews {offset: segments}, as a command computes them."""
    for off, seg in previews.items():
        cache.put(SimpleNamespace(offset=off), seg)


def cache_with(old, covered):
    """A PreviewCache as a load finds it: an index's section holding `old` {offset: segments}."""
    first = PreviewCache()
    put(first, old)
    return PreviewCache(section=first.section(SimpleNamespace(covered=covered)))


@settings(max_examples=200, deadline=None)
@given(old=st.dictionaries(st.integers(0, 5000), SEGMENTS, max_size=30),
       new=st.dictionaries(st.integers(0, 7000), SEGMENTS, max_size=10),
       covered=st.integers(0, 8000))
def test_the_section_is_the_general_merge_byte_for_byte(old, new, covered):
    cache = cache_with(old, 10_000)
    put(cache, new)
    s = SimpleNamespace(covered=covered)
    got = cache.section(s)
    assert got == cache._merged(*cache._load(), covered)
    back = PreviewCache(section=got)
    expected = {off: seg for off, seg in {**old, **new}.items() if off < covered}
    for off, seg in expected.items():
        assert back.get(SimpleNamespace(offset=off)) == seg
    assert len(back._load()[0]) == len(expected)


def test_appended_previews_take_the_copying_path():
    """Entries appended after every kept one: the section comes from the kept bytes plus the new
    ones, without re-reading each kept preview (the general merge is not called)."""
    cache = cache_with({off: (("text", f"entry {off}"),) for off in range(0, 1000, 10)}, 10_000)
    put(cache, {2000: (("text", "appended"),), 2100: (("text", "and another"),)})
    assert cache.get(SimpleNamespace(offset=2000)) == (("text", "appended"),)  # (kept marshalled until written)
    calls = []
    cache._merged = lambda *a: calls.append(a)
    got = cache.section(SimpleNamespace(covered=3000))
    assert not calls
    back = PreviewCache(section=got)
    assert back.get(SimpleNamespace(offset=2100)) == (("text", "and another"),)
    assert back.get(SimpleNamespace(offset=990)) == (("text", "entry 990"),)

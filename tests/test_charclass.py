"""Where a cut may fall: never inside a user-perceived character (a grapheme cluster), in every
chunker and every unit. The oracle is the construction: texts are built from clusters, so the
offsets between clusters are exactly the allowed cuts."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.chunkers.dispatch import chunk_by
from logichunk.text import _marks
from logichunk.text.charclass import cut_allowed


def test_mark_ranges_are_unicodes_combining_marks():
    if unicodedata.unidata_version != _marks.UNICODE_VERSION:
        pytest.skip(f"this Python has Unicode {unicodedata.unidata_version}, the table {_marks.UNICODE_VERSION}")
    marks = [cp for cp in range(0x110000) if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me")]
    table = [cp for lo, hi in _marks.RANGES for cp in range(lo, hi + 1)]
    assert table == marks


NFD = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731
CLUSTERS = [
    "e\u0301", "a\u0308\u0304", "\U0001F1E8\U0001F1F3", "\U0001F1FA\U0001F1F8", "\U0001F468\u200d\U0001F469\u200d\U0001F467",
    "\U0001F44B\U0001F3FD", "स्", "ते", "न", "मे", NFD("한"), NFD("글"), NFD("ガ"), NFD("ぎ"), "ก", "ั", "1\ufe0f\u20e3",
    "x", "y", "中", "文", " ", ".", "。", "\r\n", "\n", "ש\u05c1", "ب\u0670",
]
# "ั" (Thai mai han-akat) alone is a mark: it joins the cluster before it, so build it onto one
CLUSTERS = [c if c != "ั" else "กั" for c in CLUSTERS]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(CLUSTERS), min_size=1, max_size=80), st.integers(1, 12),
       st.sampled_from(["chars", "bytes", "tokens"]), st.sampled_from(["logic-chain", "fixed", "recursive"]))
def test_no_cut_inside_a_cluster(clusters, size, unit, method):
    text = "".join(clusters)
    edges = set(np.cumsum([0, *map(len, clusters)]).tolist())
    ok = cut_allowed(text)
    assert set(np.flatnonzero(ok).tolist()) >= edges  # every cluster edge may be cut
    assert not (set(np.flatnonzero(ok).tolist()) - edges)  # and nothing else
    tree = chunk_by(method, text, max_size=size, unit=unit)
    assert "".join(tree.text_of(c) for c in tree.leaves()) == text
    assert {c.start for c in tree} <= edges


def test_fixed_and_recursive_never_exceed_the_size_in_bytes():
    for method in ("fixed", "recursive"):
        for text, size in (("中" * 1000, 200), ("é" * 1000, 101), ("a中é" * 300, 7)):
            sizes = [c.meta["size"] for c in chunk_by(method, text, max_size=size, unit="bytes").roots()]
            assert max(sizes) <= size and sum(sizes) == len(text.encode())


def test_lone_surrogates_can_be_cut_pairs_cannot():
    lone = chunk("\ud800" * 2500, max_size=1000)
    assert [c.end - c.start for c in lone.roots()] == [1000, 1000, 500]
    paired = "\ud83d\ude00" * 50  # a pair of surrogates as str (surrogatepass decoding)
    t = chunk(paired, max_size=7)
    assert all(c.start % 2 == 0 for c in t) and "".join(t.text_of(c) for c in t.leaves()) == paired


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(list("ab cd,.中文 \n") + ["hello", "world", "e\u0301"]), max_size=60).map("".join),
       st.integers(1, 9), st.sampled_from(["chars", "bytes", "tokens"]))
@example("hello world hello world", 1, "tokens")
def test_fixed_cuts_before_a_unit_and_fills_each_chunk(text, size, unit):
    """Each cut of ``fixed`` lies where a unit (token) starts and a character stays whole, and each
    chunk but the last is as full as the next such place allows (no premature cut)."""
    from logichunk.chunkers.baselines import fixed_spans
    from logichunk.text.measure import Meter

    p = Meter(text, unit).prefix
    ok = cut_allowed(text)
    places = [k for k in range(1, len(text)) if ok[k] and p[k + 1] > p[k]]
    spans = fixed_spans(text, size, unit).tolist()
    for a, b in spans[:-1]:
        assert b in places
        later = [k for k in places if k > b]
        if later and p[b] - p[a] <= size:  # the next place would overflow (or it is one long unit)
            assert p[later[0]] - p[a] > size


@pytest.mark.parametrize("after, free", [("\n", True), ("\r\n", True), (" ", True), ("!", True), ("！", True),
                                         ("\t", True), ("\U0001F469", False), ("a", False), ("中", False),
                                         ("ष", False), ("\u0301", False)])
def test_a_joiner_holds_what_it_can_join_and_nothing_else(after, free):
    """A ZWJ joins an emoji, a letter of a conjunct (or a mark, which no cut precedes), never a line break,
    a space, punctuation or a control character: a cut after it there keeps every character whole, and a
    chunk at a tiny limit is not one odd character wider than it (``"x\\u200d\\ny"`` at 2 was 3)."""
    text = "x\u200d" + after
    assert bool(cut_allowed(text)[2]) == free
    if free and after != "\r\n":
        tree = chunk(text + "y", max_size=2, levels=1)
        assert max(c.meta["size"] for c in tree.leaves()) <= 2
        assert "".join(tree.text_of(c) for c in tree.leaves()) == text + "y"


@settings(max_examples=100, deadline=None)
@given(st.text(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr), st.sampled_from("\x00\n")), max_size=40))
@example("")
@example("\x00")
@example("ab\x00\x00")
@example("\ud800x\udc00\U0001F600")
def test_code_points_read_through_numpy_are_the_codecs(text):
    from logichunk.text.charclass import codepoints, encoded_codepoints

    codepoints.cache_clear()
    got = codepoints(text)
    assert got.dtype == np.uint32 and not got.flags.writeable
    assert got.tolist() == encoded_codepoints(text).tolist() == [ord(c) for c in text]

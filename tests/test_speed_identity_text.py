"""The text layer's and tier 1's faster paths give the answers of the passes they replace: the compiled
search for a text's quotation marks (:func:`logichunk.native.table_hits`) against its numpy twin, the layout's
quotation reading with and without it, and the novelty walk's id table, lent from one call to the next,
left zeroed and giving the same prefix sums a fresh table gives."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import native
from logichunk.signals import novelty
from logichunk.text import structure
from logichunk.text.charclass import codepoints
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled kernels are not available")

#: code points around and inside the quotation marks' range, and their edges
_NEAR = [0, 0x20, 0x41, 0x201B, 0x201C, 0x201D, 0x201E, 0x2019, 0x300C, 0x300D, 0x300E, 0x300F, 0x3010, 0x4E00,
         0xFFFF, 0x10FFFF]


def _hits_numpy(cp: np.ndarray, lo: int, table: np.ndarray) -> np.ndarray:
    inside = (cp >= lo) & (cp < lo + table.size)
    pos = np.flatnonzero(inside)
    return pos[table[cp[pos] - lo] != 0]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_NEAR), st.integers(0, 0x10FFFF)), max_size=400),
       st.sampled_from([0, 1, 0x201C, 0x3000, 0xFFFFFF]), st.lists(st.integers(0, 3), min_size=1, max_size=5000))
def test_table_hits_is_its_numpy_twin(cps: list[int], lo: int, table: list[int]) -> None:
    cp = np.asarray(cps, np.uint32)
    tab = np.asarray(table, np.int64)
    got = native.table_hits(cp, lo, tab)
    assert got is not None and got.dtype == np.int64
    assert got.tolist() == _hits_numpy(cp, lo, tab).tolist()


_PIECES = ["“", "”", "「", "」", "『", "』", "《", "》", "„", "’", "\"", " ", "\n", "\n\n", "。", ". ", "Yes. ", "他说",
           "a", "He said", "(", "—"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=80))
def test_the_quotation_reading_is_the_numpy_reading(pieces: list[str]) -> None:
    """:func:`~logichunk.text.structure._inside_quotes` finds the marks in one compiled pass; without the kernel
    it reads them with numpy passes: the same sentence breaks inside quotations, and the same layout."""
    text = "".join(pieces)
    sents = split_sentences(text)
    if len(sents) < 2:
        return
    strength = np.full(len(sents) - 1, structure.SENTENCE, np.int8)
    strength[::3] = structure.PARAGRAPH
    fast = structure._inside_quotes(text, sents.starts, sents.ends, strength)
    fast_layout = layout(sents)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "table_hits", lambda *a: None)
        slow = structure._inside_quotes(text, sents.starts, sents.ends, strength)
        slow_layout = layout(sents)
    assert fast.tolist() == slow.tolist()
    for f in dataclasses.fields(fast_layout):
        a, b = getattr(fast_layout, f.name), getattr(slow_layout, f.name)
        assert (a is None and b is None) or (a is not None and b is not None and a.tolist() == b.tolist()), f.name


def test_a_long_text_s_novelty_walk_borrows_this_thread_s_table_and_leaves_it_zeroed() -> None:
    """A long text's walk reads a table of one entry per id (a megabyte of pages); the table is lent from one
    call to the next (fresh pages cost more than the walk) and the kernel leaves it zeroed, so the next text
    reads the same prefix sums a fresh table gives."""
    rng = np.random.default_rng(7)
    for n in (native._DENSE_IDS + 1, 20_000):
        ids = rng.integers(1, 1 << 20, n).astype(np.uint32)
        ids[::3] = rng.integers(1, 50, ids[::3].size)  # (links within reach)
        q = novelty._quantised(200).astype(np.int64)
        first = native.novelty_prefix(ids, q)
        table = native._novelty_tables.last
        assert table.size >= 1 << 20 and not table.any()
        again = native.novelty_prefix(ids, q)
        assert native._novelty_tables.last is table  # (lent, not made again)
        qb, qf = novelty._link_fields(ids, *novelty._quantised_tables(200))
        want = np.concatenate(([0], np.cumsum(qb.astype(np.int64) - qf)))
        assert first.tolist() == again.tolist() == want.tolist()


def test_the_quotation_marks_are_read_from_the_text_s_own_code_points() -> None:
    text = "He said: “Go. Now.” Then “more. And more.\n\nNext paragraph. 「好。走。」"
    cp = codepoints(text)
    got = native.table_hits(cp, structure._QUOTE_LO, structure._QUOTE_SIDE)
    assert [text[i] for i in got.tolist()] == ["“", "”", "“", "「", "」"]


def test_a_text_s_content_items_are_read_in_one_call_into_buffers_of_its_length(monkeypatch) -> None:
    """A text of up to ``_ITEMS_BLOCK`` characters is read by one kernel call (fresh 64K-item blocks, copied or
    concatenated after, faulted in twice the pages), with the items of the numpy passes."""
    from logichunk.signals import items

    lib = native._load()
    calls = []

    class Counting:
        def __getattr__(self, name: str):
            fn = getattr(lib, name)
            if name != "lc_items":
                return fn
            def counted(*a):
                calls.append(a[0])
                return fn(*a)
            return counted

    monkeypatch.setattr(native, "_load", lambda: Counting())
    text = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(70_000)) + " words of English, more of them"
    items.content_items.cache_clear()
    got = items.content_items(text)
    items.content_items.cache_clear()
    want = items._items_numpy(text)
    assert len(calls) == 1
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


_RUNS = ["The economy grew. ", "x" * 70, "a b c d e f g ", "Ab12 cd_34 ", "\t\n", "中文的字", "ÀÉ ß Ω ", "“", "—", "of the and ",
         "\U0001d400\U0001d401", " ", "A"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_RUNS), max_size=60), st.sampled_from([1, 3, 63, 64, 65, 200, 1 << 22]))
def test_content_items_read_64_ascii_characters_at_once_are_the_numpy_items(runs: list[str], block: int) -> None:
    """The compiled pass reads a stretch of 64 ASCII characters at once (AVX2, where the processor has it): long
    ASCII runs among CJK and accented text, cut anywhere by the buffer's end, give the numpy passes' items."""
    from logichunk.signals import items

    text = "".join(runs)
    saved = native._ITEMS_BLOCK
    native._ITEMS_BLOCK = block
    try:
        items.content_items.cache_clear()
        got = items.content_items(text)
    finally:
        native._ITEMS_BLOCK = saved
        items.content_items.cache_clear()
    want = items._items_numpy(text)
    assert got[0].tolist() == want[0].tolist()
    assert got[1].tolist() == want[1].tolist()

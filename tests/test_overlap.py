"""Overlap without altering text (issue 20): context windows around chunks, the tiling untouched."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import InputError, check_tree, chunk
from logichunk.chunkers.dispatch import chunk_by
from logichunk.text.charclass import cut_allowed
from logichunk.text.measure import Meter

WORDS = st.sampled_from(["Hello", "world", "overlap", "naïve", "e\u0301", "中文", "句子", "😀", "👍🏽", "12.5", "x" * 12])
SEPS = st.sampled_from([" ", ", ", ". ", "。", "\n", "\n\n", ""])
TEXTS = st.lists(st.tuples(WORDS, SEPS), min_size=1, max_size=80).map(lambda xs: "".join(a + b for a, b in xs))


def check_windows(tree, plain, unit, n):
    check_tree(tree)
    # the chunks themselves are those without overlap: same ids, same spans
    assert [(c.id, c.span) for c in tree] == [(c.id, c.span) for c in plain]
    meter = Meter(tree.text, unit)
    ok = cut_allowed(tree.text)
    if meter.allowed is not None:
        ok &= meter.allowed
    for c in tree:
        a, b = c.meta["overlap_span"]
        assert 0 <= a <= c.span.start <= c.span.end <= b <= len(tree.text)
        assert meter.size(a, c.span.start) <= n and meter.size(c.span.end, b) <= n
        assert ok[a] and ok[b], (c.id, a, b)


@settings(max_examples=60, deadline=None)
@given(text=TEXTS, n=st.integers(0, 30), unit=st.sampled_from(["chars", "bytes", "tokens"]))
def test_windows_in_every_unit(text, n, unit):
    plain = chunk(text, max_size=40, levels=2, unit=unit)
    tree = chunk(text, max_size=40, levels=2, unit=unit, overlap=n)
    if n == 0:
        assert all("overlap_span" not in c.meta for c in tree)
        return
    check_windows(tree, plain, unit, n)


@settings(max_examples=40, deadline=None)
@given(text=TEXTS, n=st.integers(1, 12), method=st.sampled_from(["fixed", "recursive", "logic-chain"]))
def test_windows_in_exact_tokens(text, n, method):
    pytest.importorskip("tiktoken")
    from logichunk.text.tokens import resolve_tokenizer

    m = resolve_tokenizer("cl100k_base")
    plain = chunk_by(method, text, max_size=16, tokenizer=m)
    tree = chunk_by(method, text, max_size=16, tokenizer=m, overlap=n)
    check_windows(tree, plain, m, n)


def test_windows_reach_into_neighbours_at_word_edges():
    t = "Hello world. This is a test of overlap windows. Another sentence follows here. And the last one!"
    tree = chunk(t, max_size=40, levels=1, overlap=10)
    spans = [c.meta["overlap_span"] for c in tree]
    first, second = tree.roots()[0], tree.roots()[1]
    assert t[slice(*spans[0])] == "Hello world. This is a"  # 10 characters on, back to a word's end
    assert t[slice(*spans[1])].startswith("world. ") and spans[1][0] < second.span.start
    assert spans[0][0] == first.span.start == 0


def test_bad_overlap():
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(InputError, match="overlap"):
            chunk("some text", overlap=bad)


@pytest.mark.parametrize("unit", ["chars", "bytes"])
def test_an_overlap_past_any_text_is_the_whole_text(unit):
    """``--overlap 99999999999999999999`` was a traceback (OverflowError), ``overlap=2**63 - 1`` an
    IndexError (``ends + overlap`` wrapped round): an overlap wider than the text reaches the text's edges."""
    t = "Hello world. This is a test. Another sentence here. And one more."
    for big in (2**63 - 1, 2**63, 10**20):
        tree = chunk(t, max_size=20, levels=1, overlap=big, unit=unit)
        assert len(tree.roots()) > 1 and all(tuple(c.meta["overlap_span"]) == (0, len(t)) for c in tree)

"""The layout reads every sentence's last character once (structure._last_ats, compiled as native.last_ats) and
its queries read that table: the compiled pass gives the numpy walks' offsets bit for bit, a query through the
memo gives the walk of that query alone, and a layout with the memo is the layout without it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import native
from logichunk.text import structure as S
from logichunk.text.sentences import split_sentences

_CHARS = "ab.?!,:\"')]」）» \t\n\r\x0b中"
texts = st.text(alphabet=_CHARS, min_size=1, max_size=120)


def _spans(data: st.DataObject, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Spans inside a text of ``n`` characters, empty and one-character ones among them, in any order."""
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), min_size=1, max_size=30))
    starts = np.array([min(a, b) for a, b in pairs], np.int64)
    ends = np.array([max(a, b) for a, b in pairs], np.int64)
    return starts, ends


def _walked(text: str, starts: np.ndarray, ends: np.ndarray, idx: np.ndarray, closers: bool) -> np.ndarray:
    """_last_at with no layout under way: the walk of these queries alone."""
    assert S._LAST_MEMO.get() is None
    return S._last_at(text, starts, ends, idx, closers)


@settings(max_examples=100, deadline=None)
@given(texts, st.data())
def test_the_compiled_last_characters_are_the_numpy_walks(text, data):
    """native.last_ats against _last_ats' numpy twin (its two walks over all spans): the same offsets, without and
    with the closers, for spans of any length (empty ones, one character, the text's last)."""
    assert native.available(), native.status()
    starts, ends = _spans(data, len(text))
    fast = S._last_ats(text, starts, ends)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "last_ats", lambda *a, **k: None)
        mp.setattr(native, "walk", lambda *a, **k: None)
        slow = S._last_ats(text, starts, ends)
    for a, b in zip(fast, slow, strict=True):
        assert a.dtype == b.dtype == np.int64 and a.tobytes() == b.tobytes()
    for closers in (False, True):  # and each is what a query walks alone
        idx = np.arange(starts.size)
        assert fast[closers].tolist() == _walked(text, starts, ends, idx, closers).tolist()


@settings(max_examples=60, deadline=None)
@given(texts, st.data())
def test_a_query_through_the_memo_is_the_query_walked(text, data):
    """Within a layout's memo, _last_at of its own sentences reads the table (computed once: on the first query
    where the sentences are few, else once the queries pass a share of them) and gives the walk's offsets for any
    queries, repeated or unordered; another set of spans, or another count of blanks, walks its own."""
    starts, ends = _spans(data, len(text))
    idx = np.array(data.draw(st.lists(st.integers(0, starts.size - 1), max_size=20)), np.int64)
    want = [_walked(text, starts, ends, idx, c).tolist() for c in (False, True)]
    want44 = S._last_at(text, starts, ends, idx, blanks=44).tolist()
    for few in (S._LAST_TABLE_ALL, -1):  # (as the sentences are few, or not)
        memo = S._LastMemo(text, starts, ends)
        token = S._LAST_MEMO.set(memo)
        try:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(S, "_LAST_TABLE_ALL", few)
                got = [S._last_at(text, starts, ends, idx, c).tolist() for c in (False, True)]
                # (read from the table once the queries pass a share of the sentences, walked before)
                assert (memo.lasts is not None) == (2 * idx.size >= S._LAST_TABLE_SHARE * starts.size
                                                    or starts.size <= few)
                more = S._last_at(text, starts, ends, np.repeat(idx, starts.size)).tolist()  # (past the share)
                assert memo.lasts is not None or idx.size == 0
                assert more == np.repeat(np.array(want[0], np.int64), starts.size).tolist()
                assert S._last_at(text, starts, ends, idx, blanks=44).tolist() == want44
                other = ends.copy()  # (equal, not the same: walked)
                assert S._last_at(text, starts, other, idx).tolist() == want[0]
        finally:
            S._LAST_MEMO.reset(token)
        assert got == want


_LAYOUT_TEXTS = [
    "# Title\n\nSome prose here. And more:\n\n- one item\n- two \"quoted.\"\n\nRegards,\nAnn\n",
    "def f(x):\n    return (x)\n\n\nclass A:\n    '''Doc.'''\n    pass\n",
    "INTRODUCTION\n\nThe study (see below.)\nMethods:\n  1. First\n  2. Second\n\n第一章 总则\n本法。」\n",
    "Subject: hi\nFrom: a@b.c\n\nDear Bob,\nthanks!\n\nBest regards,\nAl\n",
]


@pytest.mark.parametrize("text", _LAYOUT_TEXTS)
def test_a_layout_with_the_memo_is_the_layout_without(text, monkeypatch):
    """layout (its sentences' last characters read once) against its reading with every query walked alone: the
    same Layout, field for field; the table computed once, and the memo gone after the call."""
    sents = split_sentences(text)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "_LastMemo", lambda *a: None)
        want = S.layout(sents)
    calls = []
    real = S._last_ats
    monkeypatch.setattr(S, "_last_ats", lambda *a: calls.append(1) or real(*a))
    got = S.layout(sents)
    assert len(calls) <= 1 and S._LAST_MEMO.get() is None
    for f in want.__dataclass_fields__:
        a, b = getattr(want, f), getattr(got, f)
        assert (a is None and b is None) or np.array_equal(np.asarray(a), np.asarray(b)), f


def test_the_table_is_read_where_a_layout_asks_of_many_sentences_and_not_where_it_asks_of_few(monkeypatch):
    """A source file's layout asks of most of its sentences' last characters (the table, once); prose laid out in
    long paragraphs asks of a few (each walked, no table), unless its sentences are few (the table at the first
    ask: a short text's layout asks some ten times, each call costing more than the table's pass)."""
    calls = []
    real = S._last_ats
    monkeypatch.setattr(S, "_last_ats", lambda *a: calls.append(1) or real(*a))
    S.layout(split_sentences("def f(x):\n    return (x)\n\n\nclass A:\n    '''Doc.'''\n    pass\n" * 20))
    assert len(calls) == 1
    calls.clear()
    prose = "The study ran for a year. It found little. " * 8 + "\n\n"
    long = split_sentences(prose * 40)
    assert len(long) > S._LAST_TABLE_ALL
    S.layout(long)
    assert calls == []
    short = split_sentences(prose * 4)
    assert len(short) <= S._LAST_TABLE_ALL
    S.layout(short)
    assert len(calls) == 1

"""The layout's compiled readings give what their numpy twins give: the reading of a definition list's terms
(:func:`logichunk.native.read_terms` for :func:`~logichunk.text.structure._read_terms`), on every sentence of
texts built from indents, tabs, closers, sentence marks and odd whitespace, and on sentence spans that start
or end anywhere (the walks' bounds and the text's edges); and the layout itself, with the kernels and
without."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import native
from logichunk.text import structure as S
from logichunk.text.charclass import codepoints
from logichunk.text.sentences import split_sentences

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled kernels are not available")

_PIECES = ["\n", "\n", "\n\n", " ", "  ", "    ", "\t", "\r\n", "\x0b", "\u3000", "\u00a0", "\u2028", "NAME", "term",
           "x", ".", "!", ":", ")", "\"", "」", "’", "))", "-a, --all", "def f(x):", "中文", "𝔘", "a" * 45, "b" * 79]
_INDENTS = ["", "", " ", "  ", "    ", "\t", " \t", " " * 39, " " * 40, " " * 41]
_lines = st.lists(st.tuples(st.sampled_from(_INDENTS), st.lists(st.sampled_from(_PIECES), max_size=4).map("".join),
                            st.sampled_from(["\n", "\n", "\n\n", "\r\n", ""])).map("".join), min_size=1, max_size=30)
_texts = st.one_of(_lines.map("".join), st.lists(st.sampled_from(_PIECES), min_size=1, max_size=60).map("".join))


def _numpy(fn, *args):  # the numpy twin: the kernel unavailable
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "read_terms", lambda *a, **k: None)
        return fn(*args)


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_read_terms_is_its_numpy_twin_on_every_sentence(text: str) -> None:
    s = split_sentences(text)
    if len(s) == 0:
        return
    cp = codepoints(text)
    fast = S._read_terms(cp, s.starts, s.ends)
    slow = _numpy(S._read_terms, cp, s.starts, s.ends)
    assert fast[0].tolist() == slow[0].tolist()
    assert fast[1].tolist() == slow[1].tolist()


@settings(max_examples=300, deadline=None)
@given(_texts, st.lists(st.tuples(st.integers(-2, 300), st.integers(-2, 300)), min_size=1, max_size=40))
def test_read_terms_is_its_numpy_twin_on_any_spans(text: str, spans: list[tuple[int, int]]) -> None:
    cp = codepoints(text)
    n = cp.size
    if n == 0:  # (no sentence to read)
        return
    starts = np.asarray([min(max(a, 0), n) for a, _ in spans], np.int64)
    ends = np.asarray([min(max(b, 1), n) for _, b in spans], np.int64)
    fast = S._read_terms(cp, starts, ends)
    slow = _numpy(S._read_terms, cp, starts, ends)
    assert fast[0].tolist() == slow[0].tolist()
    assert fast[1].tolist() == slow[1].tolist()


@settings(max_examples=150, deadline=None)
@given(_texts)
def test_the_layout_is_the_same_without_the_kernels(text: str) -> None:
    sents = split_sentences(text)
    fast = S.layout(sents)
    slow = _numpy(S.layout, sents)
    for f in dataclasses.fields(fast):
        a, b = getattr(fast, f.name), getattr(slow, f.name)
        assert (a is None and b is None) or (a is not None and b is not None and a.tolist() == b.tolist()), f.name

"""The faster readings of source code give what the readings they replace gave: the compiled per-line reads of
:func:`~logichunk.text.code_text.code_lines` (:func:`logichunk.native.code_lines`) against their numpy twin, on
code units of every width and on lines that start and end anywhere; the docstrings' search against the search
it replaced (kept here); the ranks of the lines' indents against ``np.unique`` and a search; and code's split and
layout with the kernel and without."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import native
from logichunk.text._arrays import _walk
from logichunk.text.charclass import codepoints
from logichunk.text.code_lines import indent_ranks
from logichunk.text.code_text import _line_reads, docstrings
from logichunk.text.end_candidates import _units
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout

_PIECES = ["\n", "\n", "\r\n", " ", "  ", "\t", "\x0b", "\x0c", "\u3000", "\u00a0", "/", "*", "/*", "*/", "//", "#",
           "{", "}", ";", ":", "x", "def f():", "中", "𝔘", "\u0085", "a" * 9]
_texts = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=60).map("".join)


def _numpy_reads(cp, ts, te):  # the numpy twin: the kernel unavailable
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "code_lines", lambda *a, **k: None)
        return _line_reads(cp, ts, te)


@pytest.mark.skipif(not native.available(), reason="the compiled kernels are not available")
@settings(max_examples=80, deadline=None)
@given(_texts, st.lists(st.tuples(st.integers(0, 400), st.integers(-2, 400)), min_size=1, max_size=30),
       st.booleans())
def test_the_compiled_line_reads_are_the_numpy_reads(text: str, spans: list[tuple[int, int]], narrow: bool) -> None:
    cp = _units(text) if narrow else codepoints(text)  # (the splitter's narrowest units, the layout's uint32)
    n = cp.size
    ts = np.asarray([a % n for a, _ in spans], np.int64)
    te = np.asarray([min(b, n) for _, b in spans], np.int64)
    fast = native.code_lines(cp, ts, te, np.array([False, True]))  # (a table shorter than the code points)
    assert fast is not None
    back, _, _ = _walk(cp, te - 1, ts, np.array([False, True]), 256, back=True)
    assert fast[3].tolist() == back.tolist()
    got, want = _line_reads(cp, ts, te), _numpy_reads(cp, ts, te)
    for a, b in zip(got, want, strict=True):
        assert a.tolist() == b.tolist()


@pytest.mark.skipif(not native.available(), reason="the compiled kernels are not available")
def test_the_compiled_reads_decline_lines_outside_the_text() -> None:
    cp = codepoints("ab\ncd")
    tail = np.array([False, True])
    assert native.code_lines(cp, np.array([5]), np.array([5]), tail) is None  # (numpy raises there)
    assert native.code_lines(cp, np.array([0]), np.array([6]), tail) is None
    assert native.code_lines(cp, np.array([-1]), np.array([2]), tail) is None  # (numpy reads from the end)
    assert native.code_lines(cp[:0], np.zeros(0, np.int64), np.zeros(0, np.int64), tail) is None


def _docstrings_before(text: str, lo: int, hi: int) -> tuple[list[int], list[int]]:
    """The search :func:`docstrings` made before: each kind's next quotes kept, the earlier opening first."""
    starts: list[int] = []
    ends: list[int] = []
    nxt = {q: text.find(q, lo, hi) for q in ('"""', "'''")}
    while True:
        open_ = [(at, q) for q, at in nxt.items() if at >= 0]
        if not open_:
            break
        a, q = min(open_)
        b = text.find(q, a + 3, hi)
        if b < 0:
            break
        starts.append(a)
        ends.append(b + 3)
        for k, at in nxt.items():
            if 0 <= at < b + 3:
                nxt[k] = text.find(k, b + 3, hi)
    return starts, ends


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(['"', "'", '"""', "'''", "a", "\n", '""""', "''''"]), max_size=40).map("".join),
       st.integers(0, 6), st.integers(0, 80))
def test_the_docstrings_are_those_the_search_before_found(text: str, lo: int, hi: int) -> None:
    starts, ends = docstrings.__wrapped__(text, lo, hi)
    assert (starts.tolist(), ends.tolist()) == _docstrings_before(text, lo, hi)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.booleans()), max_size=50))
def test_indent_ranks_are_the_ranks_among_the_distinct_indents(lines: list[tuple[int, bool]]) -> None:
    indent = np.asarray([i for i, _ in lines], np.int64)
    counted = np.asarray([c for _, c in lines], bool)
    want = np.searchsorted(np.unique(indent[counted]), indent, side="left")
    assert indent_ranks(indent, counted).tolist() == want.tolist()


_CODE_LINES = ["import os", "def f(x):", "    return x", "    # a comment", "# a comment", '    """Doc."""', '"""', "}",
               "if (x) {", "  y = 1;", "} else {", "/* a", " * b */", "// c", "", "    ", "x = [", "    1,", "]", "中文。"]


@pytest.mark.skipif(not native.available(), reason="the compiled kernels are not available")
@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(_CODE_LINES), min_size=2, max_size=40), st.sampled_from(["\n", "\r\n"]))
def test_code_is_split_and_laid_out_the_same_without_the_kernel(lines: list[str], eol: str) -> None:
    text = eol.join(lines) + eol
    fast_s = split_sentences(text)
    fast = layout(fast_s)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "code_lines", lambda *a, **k: None)
        slow_s = split_sentences(text)
        slow = layout(slow_s)
    assert fast_s.starts.tolist() == slow_s.starts.tolist() and fast_s.breaks.tolist() == slow_s.breaks.tolist()
    for f in dataclasses.fields(fast):
        a, b = getattr(fast, f.name), getattr(slow, f.name)
        assert (a is None and b is None) or (a is not None and b is not None and a.tolist() == b.tolist()), f.name

"""A chat export's header lines are read before the regular expression by one compiled pass over the candidate
lines (:func:`logichunk.native.stamps`) or by numpy's passes (:func:`logichunk.text.structure._stamp_lines`): the
same lines either way, on texts dense in clocks, brackets, "AM", colons and blanks, and at the text's edges (an
index below 0 reads from the end, as numpy's does); and the layout finds the same message headers."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import native
from logichunk.text import structure as S
from logichunk.text.charclass import codepoints
from logichunk.text.sentences import split_sentences

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled kernels are not available")

_PIECES = ["1", "09", ":", "：", "12:30", "9:14 ", "[", "]", "(", ")", "):", "AM", "pm", " ", "\t", "\u202f", "\r",
           "\n", "\r\n", "Alice", "x", "-", "2024-03-12 ", "[10:27] ", "(00:03):", "中"]
_texts = st.lists(st.sampled_from(_PIECES), min_size=3, max_size=80).map("".join)


def _both(cp: np.ndarray, starts: np.ndarray, seams: np.ndarray, cand: np.ndarray) -> tuple[list[int], list[int]]:
    fast = native.stamps(cp, starts[cand], seams[cand], S._stamp_bits(), S._CLOCK_NEAR)
    assert fast is not None
    got = [] if np.count_nonzero(fast & 1) < S._LOG_RECORDS_MIN else cand[(fast & 2) != 0].tolist()
    return got, S._stamp_lines(cp, cp[starts], starts, seams, cand).tolist()


@settings(max_examples=120, deadline=None)
@given(_texts)
def test_the_pass_reads_the_sentences_lines_as_the_numpy_passes(text: str) -> None:
    sents = split_sentences(text)
    if len(sents) < 4:
        return
    cand = np.arange(len(sents) - 1, dtype=np.int64)
    got, want = _both(codepoints(text), np.asarray(sents.starts, np.int64), sents.seams(), cand)
    assert got == want


@settings(max_examples=120, deadline=None)
@given(_texts.filter(lambda t: len(t) >= 3), st.data())
def test_the_pass_reads_any_start_and_seam_as_the_numpy_passes(text: str, data: st.DataObject) -> None:
    """Starts and seams anywhere (a seam of 1: the reads before the text's start wrap to its end, as numpy's)."""
    n = len(text)
    k = data.draw(st.integers(3, 12))
    starts = np.asarray(data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)), np.int64)
    seams = np.asarray(data.draw(st.lists(st.integers(1, n), min_size=k, max_size=k)), np.int64)
    got, want = _both(codepoints(text), starts, seams, np.arange(k, dtype=np.int64))
    assert got == want


def test_the_layout_finds_the_same_headers_with_and_without_the_pass() -> None:
    log = "".join(f"Alice  {9 + i % 3}:{10 + i:02d}\nHello there, number {i}.\n\n" for i in range(6))
    text = "Intro paragraph of a chat export.\n\n" + log + "[10:27] Bob\nA reply.\n\nBob (00:03):\nAnd more.\n"
    sents = split_sentences(text)
    lay = S.layout(sents)
    with mock.patch.object(native, "stamps", lambda *a: None):
        plain = S.layout(sents)
    assert np.array_equal(lay.no_cut, plain.no_cut) and np.array_equal(lay.strength, plain.strength)
    assert lay.no_cut.sum() >= 6  # (each header stays with its message)

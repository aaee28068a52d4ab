"""Tier 3's divergence made cheaper without changing a bit: the compiled run sums (repeats read as bits) and the
windows copied a row at a time against the numpy passes they replace, the whole text's keys an earlier level made
serving a later level's few windows, and a three-level cascade with and without those kernels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

from logichunk import chunk, native
from logichunk.signals import ngrams

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled kernels are not available")

_TEXT = ("The river rose in the spring and the farmers moved their herds to the hills. "
         "Prices of grain fell; the market in town closed early on Fridays. 北京的春天风很大，沙尘天气常见。"
         "def main(argv):\n    return run(argv[1:])\n\n") * 12


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([1, 2, 7, 63, 64, 65, 99, 127, 128, 129, 199, 257]), st.integers(1, 30),
       st.sampled_from([np.uint32, np.uint64]), st.floats(0.0, 0.3), st.integers(0, 2**31 - 1))
def test_the_run_sums_of_text_windows_are_the_numpy_passes(w: int, r: int, dtype: type, hole: float,
                                                         seed: int) -> None:
    """Windows of a text's real bigram keys (short runs, as tier 3 reads them; the hypothesis test in
    test_entropy.py has rows of few kinds, long runs), widths around the 64 keys a word of repeats holds: the
    compiled sums (the 32-bit keys' AVX2 reading, the 64-bit keys' plain one) are numpy's, to the bit."""
    key = ngrams._keys_of(np.frombuffer(_TEXT.encode("utf-32-le"), np.uint32), 2)[0]
    rng = np.random.default_rng(seed)
    rows = sliding_window_view(key, w)[rng.integers(0, key.size - w + 1, r)].astype(dtype)
    rows[rows == np.iinfo(np.uint32).max] = np.iinfo(dtype).max  # (the sentinel of the wider type)
    rows[rng.random(rows.shape) < hole] = np.iinfo(dtype).max
    rows.sort(axis=1)
    fast = native.sorted_run_sums(rows, ngrams._clogc(w))
    assert fast is not None
    slow = ngrams._run_sums(rows)
    assert fast[0].tobytes() == slow[0].tobytes()
    assert fast[1].tobytes() == slow[1].tobytes()


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 500), st.integers(1, 120), st.lists(st.integers(-5, 700), max_size=40),
       st.sampled_from([np.uint32, np.uint64]))
def test_the_windows_copied_a_row_at_a_time_are_the_views_rows(n: int, w: int, starts: list[int],
                                                              dtype: type) -> None:
    """native.windows is the index of the sliding window view by the starts, a fresh writable array; a start
    whose window is not inside the keys gets None (numpy's index then wraps or raises, as before)."""
    key = np.random.default_rng(n).integers(0, 2**32 - 1, n).astype(dtype)
    at = np.asarray(starts, np.int64)
    got = native.windows(key, at, w)
    if w > n or (at.size and (at.min() < 0 or at.max() + w > n)):
        assert got is None
        return
    assert got is not None and got.flags.writeable and got.dtype == dtype
    assert got.shape == (at.size, w)
    assert got.tobytes() == sliding_window_view(key, w)[at].tobytes()


def test_a_later_levels_few_windows_read_the_keys_an_earlier_level_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the whole text's keys are cached (the first level's windows covered much of it), a later level's
    few windows read them rather than gather and key their own segments again; the same bits as a call that
    keys its segments."""
    text = _TEXT * 4
    few = np.array([len(text) // 3, len(text) // 2])
    ngrams._gram_keys.cache_clear()
    try:
        fresh = ngrams.divergence_at(text, few, 100, 2)  # (few windows, nothing cached: their own segments)
        ngrams._gram_keys(text, 2)  # (what the first level's many windows leave)
        made = []
        keys_of = ngrams._keys_of
        monkeypatch.setattr(ngrams, "_keys_of", lambda *a, **k: made.append(1) or keys_of(*a, **k))
        again = ngrams.divergence_at(text, few, 100, 2)
    finally:
        ngrams._gram_keys.cache_clear()
    assert not made
    assert again.tobytes() == fresh.tobytes()


def test_a_three_level_cascade_is_the_same_without_the_tier3_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole tree (ids, spans, methods, scores) with the compiled run sums and window copies, and with their
    numpy twins in their place."""
    text = _TEXT * 3

    def tree() -> list[tuple]:
        t = chunk(text, max_size=300)
        return [(c.id, c.span.start, c.span.end, c.method, c.meta.get("cut_score")) for c in t]

    with_kernels = tree()
    monkeypatch.setattr(native, "sorted_run_sums", lambda *a, **k: None)
    monkeypatch.setattr(native, "windows", lambda *a, **k: None)
    ngrams._gram_keys.cache_clear()
    assert tree() == with_kernels
    assert any(m == "composite" for _, _, _, m, _ in with_kernels)  # (tier 3 scored gaps here)

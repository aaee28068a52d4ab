"""A level's per-boundary columns read by one gather of its gap index, and tier 4's inserts with their positions
found once, against the mask scatters and np.insert they replace: the same arrays, dtypes included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import boundaries as bd
from logichunk.chunkers.logic_chain import _Gaps, _Inserts


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 40), st.lists(st.integers(0, 6), min_size=1, max_size=8), st.integers(0, 2**31 - 1),
       st.sampled_from([np.float64, np.int64, np.bool_, np.int8]))
def test_a_gather_of_the_gap_index_is_the_mask_scatter(nb: int, counts: list[int], seed: int, dtype: type) -> None:
    """Pieces of ``counts`` inner gaps each, laid one after another over ``nb`` boundaries (as a level's pieces):
    every gap reads its boundary's entry, a piece edge the edge value, as zeros(A - 1) with the inner gaps
    scattered through a mask gave."""
    rng = np.random.default_rng(seed)
    total = sum(counts)
    if total > nb:
        counts = [0] * len(counts)
    cnt = np.asarray(counts, np.int64)
    spare = nb - int(cnt.sum())
    gaps_before = np.sort(rng.integers(0, spare + 1, cnt.size))  # (pieces need not cover every boundary)
    lo = np.concatenate(([0], np.cumsum(cnt)[:-1])) + gaps_before
    hi = lo + cnt
    P = cnt.size
    A = int(cnt.sum()) + P
    off = np.zeros(P + 1, np.int64)
    np.cumsum(cnt + 1, out=off[1:])
    column = (rng.random(nb) * 10).astype(dtype)
    gaps = _Gaps(bd.ranges(lo, hi + 1)[:-1], off[1:-1] - 1, nb)
    last = np.zeros(A, bool)
    last[off[1:] - 1] = True
    inner = ~last[:-1]
    want = np.zeros(A - 1, dtype)
    want[inner] = column[bd.ranges(lo, hi)]
    got = gaps.read(column)
    assert got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()
    assert np.array_equal(gaps.inner(), inner)
    want_b = np.full(A - 1, -1, np.int64)
    want_b[inner] = bd.ranges(lo, hi)
    assert np.array_equal(gaps.read(np.arange(nb), -1), want_b)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 30), st.lists(st.integers(0, 30), max_size=10), st.integers(0, 2**31 - 1))
def test_the_inserts_are_np_inserts(n: int, at: list[int], seed: int) -> None:
    """Every column np.insert would make at the same sorted positions, a scalar or one value per position."""
    rng = np.random.default_rng(seed)
    pos = np.sort(np.minimum(np.asarray(at, np.int64), n))
    ins = _Inserts(pos, n)
    for column, value in ((rng.random(n), -1.0), (rng.integers(0, 9, n), 3), (rng.random(n) < 0.5, False),
                          (rng.integers(0, 5, n).astype(np.int8), 0)):
        assert ins(column, value).tobytes() == np.insert(column, pos, value).tobytes()
        values = rng.integers(0, 2, pos.size).astype(column.dtype)
        got = ins(column, values)
        assert got.dtype == column.dtype
        assert got.tobytes() == np.insert(column, pos, values).tobytes()

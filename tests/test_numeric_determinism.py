"""The same input gives the same cuts, to the bit, wherever its arrays lie in memory, however many threads the BLAS
runs, whatever the hash seed, and with the compiled kernels or their numpy twins. Why: stores keep chunks by content
hash and re-chunk on edits; a cut that moved between two runs of the same text would re-embed chunks for nothing.
(What decides a cut is summed in a fixed order: bincount, cumsum, numpy's pairwise sums, elementwise passes; the
compiled kernels in the order of their twins. These tests pin that down against the perturbations a busy machine
brings: a fresh allocation lands at another address, a BLAS runs another number of threads.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

from logichunk import boundaries as bd
from logichunk import chunk, native
from logichunk.sparse_rows import SparseRows

SRC = Path(__file__).resolve().parents[1] / "src"


def _shifted(a: np.ndarray, k: int) -> np.ndarray:
    """A copy of ``a`` whose data starts ``k`` elements past a 64-byte boundary (another address, as a fresh
    allocation under memory pressure gets)."""
    a = np.ascontiguousarray(a)
    per = max(1, 64 // a.itemsize)
    buf = np.empty(a.size + 2 * per, a.dtype)
    s = (-(buf.ctypes.data // a.itemsize)) % per
    out = buf[s + k : s + k + a.size].reshape(a.shape)
    out[...] = a
    # (an empty view's address is numpy's own choice: nothing is read from it)
    assert a.size == 0 or out.ctypes.data % 64 == (k * a.itemsize) % 64
    return out


def _placed(X: np.ndarray | SparseRows, k: int) -> np.ndarray | SparseRows:
    if isinstance(X, SparseRows):
        return SparseRows(_shifted(X.row, k), _shifted(X.col, k), _shifted(X.val, k), X.n, X.ncol)
    return _shifted(X, k)


def _problem(n: int, ncol: int, density: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, ncol)) * (rng.random((n, ncol)) < density), 3)
    keys = rng.integers(1, 2**62, n).astype(np.uint64)
    sizes = rng.integers(5, 60, n)
    reward = rng.normal(size=n - 1)
    return X, keys, sizes, reward


def _decisions(X: np.ndarray | SparseRows, keys: np.ndarray, sizes: np.ndarray, reward: np.ndarray) -> bytes:
    """Every number a size-limited choice reads and the cuts it makes, as bytes."""
    costs = bd.scatter_costs(X, 8)
    prices = bd.chunk_prices(X, keys, window=16)
    cuts = bd.fit_global(sizes, X, reward, bd.SizeLimits(150, target=100), penalty=prices)
    return costs.tobytes() + prices.tobytes() + np.float64(bd.null_penalty(X, keys)).tobytes() + cuts.tobytes()


@settings(max_examples=25, deadline=None)
@given(st.tuples(st.integers(3, 70), st.integers(1, 30), st.floats(0.05, 1.0), st.integers(0, 2**31 - 1)),
       st.sampled_from([np.asarray, SparseRows.from_dense]))
def test_costs_prices_and_cuts_do_not_depend_on_where_the_rows_lie_or_on_the_blas_threads(problem, make):
    """Sparse rows (the lexical default) and dense rows (an embedder's), compiled and numpy passes: the same bytes
    at every alignment of the rows' arrays, with the BLAS on one thread or on its default."""
    X, keys, sizes, reward = _problem(*problem)
    rows = make(X)
    want = _decisions(rows, keys, sizes, reward)
    for k in (1, 3, 5):
        assert _decisions(_placed(rows, k), keys, sizes, reward) == want
    with threadpool_limits(1):
        assert _decisions(_placed(rows, 7), keys, sizes, reward) == want
    with pytest.MonkeyPatch.context() as mp:  # the numpy passes fit_global falls back to
        mp.setattr(native, "available", lambda: False)
        assert _decisions(_placed(rows, 2), keys, sizes, reward) == want


_TEXTS = (
    "# Notes\n\nThe store keeps chunks by content hash. Re-chunking after an edit must give the same ids.\n\n"
    "## Why\n\nA cut that moves re-embeds chunks for nothing. " * 6,
    "def capabilities(self):\n    \"\"\"\n    Return a dictionary.\n\n    The dictionary has the following keys:\n\n"
    "    - **\"boolean indexing\"**: whether it supports boolean indexing.\n\n"
    "    - **\"data-dependent shapes\"**: whether it supports them.\n    \"\"\"\n    return {}\n\n" * 8,
)
_TREES = ("import json, sys\nfrom logichunk import chunk\n"
          "print(json.dumps([[(c.id, c.span.start, c.span.end) for c in chunk(t, max_size=m)]"
          " for t in json.loads(sys.stdin.read()) for m in (120, 400)]))\n")


def test_a_tree_is_the_same_in_a_process_with_another_hash_seed_one_blas_thread_and_the_numpy_passes():
    """End to end: another process, another ``PYTHONHASHSEED``, the BLAS on one thread and the kernels off gives the
    trees this process gives with the kernels (set and dict orders, thread counts and the twins decide nothing)."""
    here = [[[c.id, c.span.start, c.span.end] for c in chunk(t, max_size=m)] for t in _TEXTS for m in (120, 400)]
    env = {**os.environ, "PYTHONHASHSEED": "12345", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "LOGICHUNK_NATIVE": "0", "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    got = subprocess.run([sys.executable, "-c", _TREES], input=json.dumps(_TEXTS), env=env, capture_output=True,
                         text=True, check=True, timeout=120)
    assert json.loads(got.stdout) == here


def test_the_best_single_gain_over_a_wide_vocabulary_does_not_follow_the_blas_threads():
    """``|T|^2`` over a vocabulary of 30,000 columns: a BLAS dot splits a vector that long among its threads and sums
    the parts in another order (on the base, one thread and two gave other last bits for about half of such texts);
    a fixed-order sum does not."""
    n, ncol = 60, 30_000
    for seed in range(6):
        rng = np.random.default_rng(seed)
        row = np.repeat(np.arange(n), 500)
        key = np.unique(rng.integers(0, ncol, row.size).astype(np.int64) * n + row)  # by column, then row
        X = SparseRows((key % n).astype(np.int32), (key // n).astype(np.int32), rng.random(key.size), n, ncol)
        for rows in (X, X.dense()):
            want = np.float64(bd.best_single_gain(rows)).tobytes()
            with threadpool_limits(1):
                assert np.float64(bd.best_single_gain(_placed(rows, 3))).tobytes() == want

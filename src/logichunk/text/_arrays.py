"""Small numpy helpers shared by the sentence splitter's modules (:mod:`.sentences`,
:mod:`.end_candidates`, :mod:`.abbreviations`, :mod:`.line_kinds`): read-only empty arrays,
membership in a small sorted set, sorted unique values, and reads that see 0 past the end. They
live apart so that each of those modules can use them without importing another."""

from __future__ import annotations

import numpy as np

_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_I64.flags.writeable = False
_EMPTY_I8 = np.zeros(0, dtype=np.int8)
_EMPTY_I8.flags.writeable = False


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``np.isin`` for a small sorted set, without its sorting overhead."""
    if values.size == 0 or sorted_set.size == 0:
        return np.zeros(values.shape, dtype=bool)
    i = np.searchsorted(sorted_set, values)
    return sorted_set[np.minimum(i, sorted_set.size - 1)] == values


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    a = np.sort(a)
    if a.size > 1:
        keep = np.empty(a.size, dtype=bool)
        keep[0] = True
        np.not_equal(a[1:], a[:-1], out=keep[1:])
        a = a[keep]
    return a


def _at(cp: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``cp[pos]`` with positions at or past the end reading as 0 (NUL: no flag set)."""
    n = cp.size
    out = cp[np.minimum(pos, n - 1)]
    return np.where(pos < n, out, 0)

"""Stable 64-bit hashing of integer arrays, never Python's salted ``hash()``: the same text gets the
same features in every process (the hashed embedder's buckets, the lexical vectors' folded columns)."""

from __future__ import annotations

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(h: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: spreads a uint64 value over all 64 bits (wraps)."""
    h = h ^ (h >> np.uint64(30))
    h = h * _M1
    h = h ^ (h >> np.uint64(27))
    h = h * _M2
    return h ^ (h >> np.uint64(31))

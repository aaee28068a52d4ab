"""Stable 64-bit hashing of integer arrays, never Python's salted ``hash()``: the same text gets the
same features in every process (the hashed embedder's buckets, the lexical vectors' folded columns)."""

from __future__ import annotations

import numpy as np

from . import native

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(h: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: spreads a uint64 value over all 64 bits (wraps)."""
    h = h ^ (h >> np.uint64(30))
    h = h * _M1
    h = h ^ (h >> np.uint64(27))
    h = h * _M2
    return h ^ (h >> np.uint64(31))


#: splitmix64's increment (the golden ratio): added before the finaliser so that a value of 0 does not
#: hash to 0
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def bag_hashes(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each slice ``values[lo[i]:hi[i]]`` as a multiset: the wrapping sum of a mix of
    each value. Why a sum: the same items in any order hash alike, and one item more or less changes
    one term, so a span's key depends on nothing outside it. The mix is half of splitmix64's (one
    multiply, one xor-shift): nonlinear, so two bags whose ids add up alike (``一`` and ``三`` against
    ``二`` twice) do not collide; the sums are re-mixed before they are read as random (:func:`salted`)."""
    v = np.asarray(values).astype(np.uint64)
    v += GOLDEN
    v *= _M1
    v ^= v >> np.uint64(29)
    c = np.zeros(v.size + 1, np.uint64)
    np.cumsum(v, out=c[1:])  # uint64 arithmetic wraps, as a hash's should
    return c[np.asarray(hi, dtype=np.int64)] - c[np.asarray(lo, dtype=np.int64)]


def occurrence_keys(keys: np.ndarray) -> np.ndarray:
    """``keys`` made distinct where they repeat: the ``r``-th equal key (in order) has its rank ``r``
    mixed in. Why: equal keys mark equal content (a repeated line), and a hash order must scatter
    the copies like any other rows, not keep them side by side."""
    k = np.asarray(keys, dtype=np.uint64)
    rank = native.occurrence_ranks(k)  # the same ranks from a hash table, no sort
    if rank is None:
        order = np.argsort(k, kind="stable")
        ks = k[order]
        first = np.ones(ks.size, bool)
        first[1:] = ks[1:] != ks[:-1]
        at = np.arange(ks.size)
        rank = np.empty(ks.size, np.uint64)
        rank[order] = (at - np.maximum.accumulate(np.where(first, at, 0))).astype(np.uint64)
    return k ^ splitmix64(rank + GOLDEN)


def salted(keys: np.ndarray, salt: int | np.ndarray) -> np.ndarray:
    """``keys`` re-hashed under ``salt``: one more independent order of the same content. Several salts
    (an array): one row per salt."""
    salts = np.asarray(salt, np.uint64).reshape(-1, 1) if np.ndim(salt) else np.array([salt], np.uint64)
    return splitmix64(np.asarray(keys, dtype=np.uint64) ^ splitmix64(salts + GOLDEN))

"""Sparse row vectors (coordinate form): the lexical sentence vectors of the global boundary decision.

Why sparse: a sentence shares a dozen content items with its neighbours out of a vocabulary of
thousands. Kept sparse, the scatter of every window costs work per shared item, not per column, so
the decision needs no folding of the vocabulary into a few hundred hashed columns (which mixed
unrelated words) and stays exact at any vocabulary size.

Why column order: what the decision reads is inner products of nearby rows, found by walking each
column's entries in row order (:func:`logichunk.boundaries.gram_band`). Entries are kept in that
order from the start, and every operation here keeps it without sorting: selecting rows and summing
runs of rows only filter and merge neighbouring entries of a column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SparseRows:
    """``n`` rows over ``ncol`` columns; entry ``k`` is ``val[k]`` at ``(row[k], col[k])``.
    Entries are sorted by column, then row, with no repeated ``(row, col)``."""

    row: np.ndarray  # int64
    col: np.ndarray  # int64
    val: np.ndarray  # float64
    n: int
    ncol: int

    @staticmethod
    def empty(n: int) -> SparseRows:
        z = np.zeros(0, np.int64)
        return SparseRows(z, z.copy(), np.zeros(0), int(n), 1)

    @staticmethod
    def from_dense(X: np.ndarray) -> SparseRows:
        X = np.asarray(X, dtype=np.float64)
        c, r = np.nonzero(X.T)  # column-major: by column, then row
        return SparseRows(r.astype(np.int64), c.astype(np.int64), X[r, c], X.shape[0], max(1, X.shape[1]))

    @staticmethod
    def concat(parts: list[SparseRows]) -> SparseRows:
        """Rows of ``parts`` one after another, each part's columns kept apart from the others' (an
        offset per part, in order, so the column order holds and a part's entries keep theirs)."""
        if not parts:
            return SparseRows.empty(0)
        roff = np.cumsum([0] + [p.n for p in parts])
        coff = np.cumsum([0] + [p.ncol for p in parts])
        return SparseRows(np.concatenate([p.row + o for p, o in zip(parts, roff.tolist(), strict=False)]),
                          np.concatenate([p.col + o for p, o in zip(parts, coff.tolist(), strict=False)]),
                          np.concatenate([p.val for p in parts]), int(roff[-1]), max(1, int(coff[-1])))

    def dense(self) -> np.ndarray:
        X = np.zeros((self.n, self.ncol))
        X[self.row, self.col] = self.val
        return X

    def sqnorms(self) -> np.ndarray:
        return np.bincount(self.row, weights=self.val * self.val, minlength=self.n)

    def take(self, idx: np.ndarray) -> SparseRows:
        """Rows ``idx`` (sorted, distinct), renumbered ``0..len(idx)-1``."""
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size == self.n:  # sorted and distinct: every row, in order
            return self
        where = np.full(self.n + 1, -1, np.int64)
        where[idx] = np.arange(idx.size)
        new = where[self.row]
        keep = np.flatnonzero(new >= 0)
        return SparseRows(new[keep], self.col[keep], self.val[keep], int(idx.size), self.ncol)

    def group(self, grp: np.ndarray, m: int) -> SparseRows:
        """``m`` rows, row ``g`` the sum of the rows ``i`` with ``grp[i] == g`` (``grp`` non-decreasing,
        so a group's entries in one column are neighbours: merged in place, no sort)."""
        g = np.asarray(grp, dtype=np.int64)[self.row]
        if g.size == 0:
            return SparseRows.empty(m)
        new = np.ones(g.size, bool)
        new[1:] = (g[1:] != g[:-1]) | (self.col[1:] != self.col[:-1])
        at = np.flatnonzero(new)
        return SparseRows(g[at], self.col[at], np.add.reduceat(self.val, at), int(m), self.ncol)

    def permuted(self, order: np.ndarray) -> SparseRows:
        """Row ``i`` of the result is row ``order[i]`` of this one."""
        order = np.asarray(order, dtype=np.int64)
        inv = np.empty(self.n, np.int64)
        inv[order] = np.arange(order.size)
        r = inv[self.row]
        n = max(self.n, 1)
        k = stable_order(self.col * n + r, self.ncol * n)  # distinct keys: any sort gives this order
        return SparseRows(r[k], self.col[k], self.val[k], self.n, self.ncol)


def stable_order(a: np.ndarray, bound: int) -> np.ndarray:
    """``np.argsort(a, kind="stable")`` for non-negative integers below ``bound``, as 16-bit radix
    passes (numpy's stable sort of 16-bit integers is a radix sort, about 10x a comparison sort on
    the hundreds of thousands of entries of a long text; two passes cover ids up to 2^32)."""
    if bound <= 1 << 16:
        return np.argsort(a.astype(np.uint16), kind="stable")
    if bound > 1 << 32:
        return np.argsort(a, kind="stable")
    k = np.argsort(a.astype(np.uint16), kind="stable")  # the low 16 bits (a cast wraps)
    return k[np.argsort((a[k] >> 16).astype(np.uint16), kind="stable")]

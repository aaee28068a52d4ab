"""Sparse row vectors (coordinate form): the lexical sentence vectors of the global boundary decision;
and item bags (:class:`ItemBags`): each sentence's content items as they occur, what the evidence cost
of a segment without a size limit counts.

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
from functools import cached_property

import numpy as np

from . import native

#: the dtype of row and column indices: half the memory of int64, and the entries of a long text's rows
#: are most of a chunk call's memory (fresh memory costs page faults on every call)
INDEX = np.int32


@dataclass(frozen=True)
class SparseRows:
    """``n`` rows over ``ncol`` columns; entry ``k`` is ``val[k]`` at ``(row[k], col[k])``.
    Entries are sorted by column, then row, with no repeated ``(row, col)``. Indices are
    :data:`INDEX` (int32): fewer than 2**31 rows and columns."""

    row: np.ndarray  # INDEX
    col: np.ndarray  # INDEX
    val: np.ndarray  # float64
    n: int
    ncol: int

    def __post_init__(self) -> None:
        if max(self.n, self.ncol) > np.iinfo(INDEX).max:
            raise ValueError(f"{self.n} rows or {self.ncol} columns do not fit {np.dtype(INDEX).name} indices")

    @staticmethod
    def empty(n: int) -> SparseRows:
        z = np.zeros(0, INDEX)
        return SparseRows(z, z.copy(), np.zeros(0), int(n), 1)

    @staticmethod
    def from_dense(X: np.ndarray) -> SparseRows:
        X = np.asarray(X, dtype=np.float64)
        c, r = np.nonzero(X.T)  # column-major: by column, then row
        return SparseRows(r.astype(INDEX), c.astype(INDEX), X[r, c], X.shape[0], max(1, X.shape[1]))

    @staticmethod
    def concat(parts: list[SparseRows]) -> SparseRows:
        """Rows of ``parts`` one after another, each part's columns kept apart from the others' (an
        offset per part, in order, so the column order holds and a part's entries keep theirs)."""
        if not parts:
            return SparseRows.empty(0)
        roff = np.cumsum([0] + [p.n for p in parts])
        coff = np.cumsum([0] + [p.ncol for p in parts])
        n, ncol = int(roff[-1]), max(1, int(coff[-1]))  # (totals past the index type: an error below)
        return SparseRows(np.concatenate([p.row + INDEX(o) for p, o in zip(parts, roff.tolist(), strict=False)]),
                          np.concatenate([p.col + INDEX(o) for p, o in zip(parts, coff.tolist(), strict=False)]),
                          np.concatenate([p.val for p in parts]), n, ncol)

    def dense(self) -> np.ndarray:
        X = np.zeros((self.n, self.ncol))
        X[self.row, self.col] = self.val
        return X

    def sqnorms(self) -> np.ndarray:
        """Each row's squared norm (computed once per object: the levels of a text all read it)."""
        return self._sqnorms

    @cached_property
    def _sqnorms(self) -> np.ndarray:
        sq = np.bincount(self.row, weights=self.val * self.val, minlength=self.n)
        sq.flags.writeable = False
        return sq

    def knowing_sqnorms(self, sq: np.ndarray) -> SparseRows:
        """These rows, their squared norms already summed by the caller exactly as :meth:`sqnorms`
        sums them (each row's entries in order): not summed again."""
        sq.flags.writeable = False
        self.__dict__["_sqnorms"] = sq  # the cached property's own slot
        return self

    def rows(self, r0: int, r1: int) -> SparseRows:
        """Rows ``[r0, r1)``, renumbered from 0, their entries in the same order: a block of a long text's
        rows. The group kernel's one pass over the entries when it is available (each kept row a group of
        one, as :meth:`take` uses it): ~0.1 s a block of a long text, where sorting its entries by row cost
        seconds (17 M characters of Chinese: 1.4 s); else :meth:`_rows_sorted`."""
        where = np.full(self.n, -1, np.int64)
        where[r0:r1] = np.arange(r1 - r0, dtype=np.int64)
        fast = native.group_entries(self.row, self.col, self.val, where)
        if fast is not None:
            return SparseRows(*fast, int(r1 - r0), self.ncol)
        return self._rows_sorted(r0, r1)

    def _rows_sorted(self, r0: int, r1: int) -> SparseRows:
        """:meth:`rows` at the cost of the block's own entries, the entries by row sorted once per object."""
        by_row, ptr = self._by_row
        idx = np.sort(by_row[ptr[r0] : ptr[r1]])  # (entry order, by column then row, restored)
        return SparseRows(self.row[idx] - INDEX(r0), self.col[idx], self.val[idx], int(r1 - r0), self.ncol)

    @cached_property
    def _by_row(self) -> tuple[np.ndarray, np.ndarray]:
        ptr = np.zeros(self.n + 1, np.int64)
        np.cumsum(np.bincount(self.row, minlength=self.n), out=ptr[1:])
        return stable_order(self.row, self.n), ptr

    def take(self, idx: np.ndarray) -> SparseRows:
        """Rows ``idx`` (sorted, distinct), renumbered ``0..len(idx)-1``."""
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size == self.n:  # sorted and distinct: every row, in order
            return self
        where = np.full(self.n + 1, -1, INDEX)
        where[idx] = np.arange(idx.size, dtype=INDEX)
        # the kept rows renumbered in order are groups of one row each: the group kernel's one pass gives the
        # same entries (a sum of one value is that value)
        fast = native.group_entries(self.row, self.col, self.val, where[: self.n])
        if fast is not None:
            out = SparseRows(*fast, int(idx.size), self.ncol)
        else:
            new = where[self.row]
            keep = new >= 0
            out = SparseRows(np.compress(keep, new), np.compress(keep, self.col), np.compress(keep, self.val),
                             int(idx.size), self.ncol)
        known = self.__dict__.get("_sqnorms")  # a row keeps its entries in order: the same sums
        return out if known is None else out.knowing_sqnorms(known[idx])

    def group(self, grp: np.ndarray, m: int) -> SparseRows:
        """``m`` rows, row ``g`` the sum of the rows ``i`` with ``grp[i] == g``; rows with ``grp[i] < 0``
        are left out (``grp`` non-decreasing over the others, so a group's entries in one column are
        neighbours: merged in place, no sort)."""
        fast = native.group_entries(self.row, self.col, self.val, grp)  # the same sums, in one pass
        if fast is not None:
            return SparseRows(*fast, int(m), self.ncol) if fast[0].size else SparseRows.empty(m)
        g = np.asarray(grp, dtype=INDEX)[self.row]
        col, val = self.col, self.val
        if g.size and g.min() < 0:
            kept = g >= 0
            g, col, val = np.compress(kept, g), np.compress(kept, col), np.compress(kept, val)
            del kept
        if g.size == 0:
            return SparseRows.empty(m)
        new = np.ones(g.size, bool)
        new[1:] = (g[1:] != g[:-1]) | (col[1:] != col[:-1])
        at = np.flatnonzero(new)
        rows, cols = g[at], col[at]
        del g, col  # (copies when rows were left out: dropped before the sums are made)
        return SparseRows(rows, cols, run_sums(val, new, at), int(m), self.ncol)


@dataclass(frozen=True)
class GroupedRows:
    """The ``n`` rows ``rows.group(grp, n)`` would make (:meth:`SparseRows.group`), not made yet. Why: what the
    size-limited choice reads of glued atoms is the Gram band of their sums, and the compiled kernel computes it
    straight from the ungrouped entries (:func:`logichunk.native.group_band`), the same bits without the grouped
    entries written out at every level (megabytes a long text); whatever else needs the rows makes them
    (:meth:`made`)."""

    rows: SparseRows
    grp: np.ndarray  # int64, per row of ``rows``: its group, < 0 left out
    n: int

    def made(self) -> SparseRows:
        """The grouped rows themselves."""
        return self.rows.group(self.grp, self.n)


@dataclass(frozen=True)
class ItemBags:
    """``n`` bags of items: bag ``i`` holds the items ``item[ptr[i]:ptr[i+1]]`` (dense ids
    ``0..kinds-1``, one entry per occurrence, in text order). Why not :class:`SparseRows`: a
    likelihood counts every occurrence of every item, those seen once included, and merging
    neighbouring bags (glued sentences) is only dropping offsets from ``ptr``."""

    ptr: np.ndarray  # int64, n + 1, non-decreasing from 0
    item: np.ndarray  # INDEX
    kinds: int

    @property
    def n(self) -> int:
        return int(self.ptr.size) - 1

    @property
    def tokens(self) -> int:
        return int(self.item.size)

    def merged(self, first: np.ndarray) -> ItemBags:
        """Bags made of runs of these: run ``g`` starts at bag ``first[g]`` (sorted, ``first[0] == 0``)
        and ends where the next starts."""
        first = np.asarray(first, dtype=np.int64)
        return ItemBags(np.append(self.ptr[first], self.ptr[-1]), self.item, self.kinds)


def run_sums(val: np.ndarray, first: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``np.add.reduceat(val, at)``: the sums of the runs ``val[at[k]:at[k+1]]``, ``at`` the entries
    where ``first`` is True (``first[0]`` is). The same numbers, with reduceat called on the runs of
    two entries or more only: reduceat's cost is per run, and merging neighbouring rows leaves most
    runs one entry long, copied as they are."""
    out = val[at]
    longer = np.flatnonzero(first[:-1] & ~first[1:])  # the entries that start a run of two or more
    if longer.size:
        k = np.searchsorted(at, longer)  # ... and their runs
        nxt = np.minimum(k + 1, at.size - 1)
        bounds = np.empty(2 * longer.size, np.int64)  # each long run, and the (unused) stretch after it
        bounds[0::2] = longer
        bounds[1::2] = np.where(k + 1 < at.size, at[nxt], val.size)
        if bounds[-1] == val.size:
            bounds = bounds[:-1]
        out[k] = np.add.reduceat(val, bounds)[0::2]
    return out


def stable_order(a: np.ndarray, bound: int) -> np.ndarray:
    """``np.argsort(a, kind="stable")`` for non-negative integers below ``bound``, as 16-bit radix
    passes (numpy's stable sort of 16-bit integers is a radix sort, about 10x a comparison sort on
    the hundreds of thousands of entries of a long text; two passes cover ids up to 2^32). When most
    values are below 2^16 (Chinese characters' code points among a few word ids) those are sorted in
    one pass and the rest after them: ~35 % less work on 2 MB of Chinese."""
    if bound <= 1 << 16:
        return np.argsort(a.astype(np.uint16), kind="stable")
    if bound > 1 << 32:
        return np.argsort(a, kind="stable")
    small = a < 1 << 16
    if 2 * np.count_nonzero(small) > a.size:
        lo, hi = np.flatnonzero(small), np.flatnonzero(~small)
        return np.concatenate((lo[np.argsort(a[lo].astype(np.uint16), kind="stable")], hi[stable_order(a[hi], bound)]))
    k = np.argsort(a.astype(np.uint16), kind="stable")  # the low 16 bits (a cast wraps)
    return k[np.argsort((a[k] >> 16).astype(np.uint16), kind="stable")]

"""Model-free sentence vectors for lexical cohesion: what the global boundary decision measures
when no embedder is given.

Why not the hashed n-gram embedder: its vectors weigh every word alike and count inflection
grams, so two sentences of one topic look barely closer than two of different topics, and a
segmentation built on them only ties "no boundary". Cohesion is carried by the *content* words a
stretch of text keeps returning to (Halliday & Hasan; TextTiling, C99). So:

* items are the entropy signal's content items (:func:`~logichunk.signals.items.content_items`:
  stemmed content words, CJK characters; stop words out), counted per span;
* an item seen in only one span is dropped — it cannot tie two spans together, it would only
  shrink that span's vector (a fixed rule, not a tuned threshold);
* weights are ``sqrt(count) * idf`` with the idf of the document itself (spans as documents), so
  a word the whole text repeats counts little and a word a few neighbouring sentences share a lot;
* rows are L2-normalised (a span without a shared item is the zero vector: it pulls no segment
  either way) and kept sparse (:class:`~logichunk.sparse_rows.SparseRows`): each shared item is a
  column of its own, at any vocabulary size — no hashing of items into a few columns, which made
  unrelated words look alike.
"""

from __future__ import annotations

import numpy as np

from .. import native
from ..boundaries import ranges
from ..hashing import bag_hashes
from ..sparse_rows import INDEX, ItemBags, SparseRows, stable_order
from .items import content_items


def _item_ranges(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The text's content item ids, and the range ``[lo[i], hi[i])`` of them inside each span ``[starts[i],
    ends[i])`` (spans sorted): a range of the position-sorted items, by n searches, not one per item."""
    allpos, allids = content_items(text)
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    lo = native.searchsorted(allpos, starts)
    if starts.size and np.array_equal(starts[1:], ends[:-1]):  # spans that tile their range: each range ends
        hi = np.empty_like(lo)  # where the next begins (a search of a long text's items cost ~1 ms a 2 MB text)
        hi[:-1] = lo[1:]
        hi[-1] = np.searchsorted(allpos, ends[-1])
    else:
        hi = native.searchsorted(allpos, ends)
    return allids, lo, hi


def lexical_rows(text: str, starts: np.ndarray, ends: np.ndarray) -> SparseRows:
    """One sparse row per span ``[starts[i], ends[i])`` of ``text`` (spans sorted and disjoint),
    L2-normalised, as the module docstring describes. Reads only the items inside the spans' range,
    so many short texts laid end to end cost their own length each."""
    if np.asarray(starts).size == 0:
        return SparseRows.empty(0)
    return _rows(*_item_ranges(text, starts, ends))


def lexical_rows_keys(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[SparseRows, np.ndarray]:
    """:func:`lexical_rows` and :func:`span_keys` of the same spans, their items found once (what the global
    choice reads of a text: its rows, and the keys its chunk prices shuffle them by)."""
    if np.asarray(starts).size == 0:
        return SparseRows.empty(0), span_keys(text, starts, ends)
    ranges = _item_ranges(text, starts, ends)
    return _rows(*ranges), _keys(*ranges)


def _rows(allids: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> SparseRows:
    """:func:`lexical_rows` of the spans holding the items ``allids[lo[i]:hi[i]]``."""
    n = lo.size
    found = native.lexical_entries(lo, hi, allids)  # the same entries, counted without a sort
    prow, col, cnt, df = found if found is not None else _entries(lo, hi, allids, n)
    if prow.size == 0:
        return SparseRows.empty(n)
    idf = np.log(n / df)  # each column's idf once (the same numbers as per entry)
    fast = native.lexical_weights(prow, col, cnt, idf, n)  # the same weights, no temporaries
    if fast is not None:
        return SparseRows(prow, col, fast[0], n, int(df.size)).knowing_sqnorms(fast[1])
    w = np.sqrt(cnt) * idf[col]
    norm = np.sqrt(np.bincount(prow, weights=w * w, minlength=n))
    w = w / np.where(norm > 0, norm, 1.0)[prow]
    return SparseRows(prow, col, w, n, int(df.size))


def span_keys(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """A 64-bit key per span ``[starts[i], ends[i])`` of ``text``: the hash of its content items as a
    multiset (:func:`~logichunk.hashing.bag_hashes`). What the price of a chunk orders its shuffles by
    (:func:`logichunk.boundaries.null_penalty`): unlike the rows of :func:`lexical_rows`, whose columns
    and idf move with every sentence of the document, a span's key moves only when the span does."""
    return _keys(*_item_ranges(text, starts, ends))


def _keys(allids: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """:func:`span_keys` of the spans holding the items ``allids[lo[i]:hi[i]]``."""
    fast = native.bag_keys(lo, hi, allids)  # the same keys in one pass
    return bag_hashes(allids, lo, hi) if fast is None else fast


def item_bags(text: str, starts: np.ndarray, ends: np.ndarray) -> ItemBags:
    """The content items (:func:`~logichunk.signals.items.content_items`) of each span
    ``[starts[i], ends[i])`` of ``text`` (spans sorted and disjoint), every occurrence kept, items
    numbered densely in the order of their ids: what the evidence cost of a segment
    (:func:`logichunk.boundaries.evidence_costs`) counts."""
    allids, lo, hi = _item_ranges(text, starts, ends)
    ptr = np.zeros(lo.size + 1, np.int64)
    np.cumsum(hi - lo, out=ptr[1:])
    ids = allids[ranges(lo, hi)] if lo.size else allids[:0]
    if ids.size == 0:
        return ItemBags(ptr, np.zeros(0, INDEX), 0)
    kinds, dense = np.unique(ids, return_inverse=True)
    return ItemBags(ptr, dense.astype(INDEX).ravel(), int(kinds.size))


_NO_ENTRIES = (np.zeros(0, INDEX), np.zeros(0, INDEX), np.zeros(0, np.int64), np.zeros(0, np.int64))


def _entries(lo: np.ndarray, hi: np.ndarray, allids: np.ndarray, n: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`lexical_rows`' entries before weighting, in numpy passes (what
    :func:`logichunk.native.lexical_entries` does in one C pass): ``(row, col, count, df)``, by
    column, then row; the columns are the items in at least two spans and not in all of them, in
    ascending id order; ``df`` per column."""
    per = hi - lo
    if (lo[1:] == hi[:-1]).all():  # spans that tile their range: one slice
        ids = allids[lo[0] : hi[-1]]
    else:
        ids = allids[ranges(lo, hi)]
    if ids.size == 0:
        return _NO_ENTRIES
    # items numbered by id, and the entries put in column order, by one stable radix sort of the ids
    # (work in the number of items, not in the id range: many short texts stay cheap): repeats of an
    # item in one span are then neighbours, counted by their runs. Index arrays are int32 and dropped
    # as soon as they are read: on a long text these temporaries are most of a chunk call's memory,
    # and fresh memory costs page faults (CPU time) on every call
    order = stable_order(ids, int(ids.max()) + 1)  # rows stay in order inside a column
    first = np.ones(ids.size, bool)
    sid = ids[order]
    np.not_equal(sid[1:], sid[:-1], out=first[1:])
    del sid
    c = np.cumsum(first, dtype=INDEX)
    c -= 1
    nv = int(c[-1]) + 1
    r = np.repeat(np.arange(n, dtype=INDEX), per)[order]
    del order
    first[1:] |= r[1:] != r[:-1]
    at = np.flatnonzero(first)
    del first
    cnt = np.diff(at, append=r.size)
    prow, pcol = r[at], c[at]
    del r, c, at
    df = np.bincount(pcol, minlength=nv)
    shared = (df >= 2) & (df < n)  # an item in every span weighs log(1) = 0: no entries for it
    keep = shared[pcol]
    if not keep.any():
        return _NO_ENTRIES
    # np.compress: boolean indexing is several times slower on masks this mixed
    prow, pcol, cnt = np.compress(keep, prow), np.compress(keep, pcol), np.compress(keep, cnt)
    local = np.cumsum(shared, dtype=INDEX)  # shared items numbered in order: the column order is kept
    local -= 1
    return prow.astype(INDEX, copy=False), local[pcol], cnt, df[shared]

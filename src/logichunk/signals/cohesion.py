"""Model-free sentence vectors for lexical cohesion: what the global boundary decision measures
when no embedder is given.

Why not the hashed n-gram embedder: its vectors weigh every word alike and count inflection
grams, so two sentences of one topic look barely closer than two of different topics, and a
segmentation built on them only ties "no boundary". Cohesion is carried by the *content* words a
stretch of text keeps returning to (Halliday & Hasan; TextTiling, C99). So:

* items are the entropy signal's content items (:func:`~logichunk.signals.entropy.content_items`:
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

from ..sparse_rows import SparseRows, stable_order
from .entropy import content_items


def lexical_rows(text: str, starts: np.ndarray, ends: np.ndarray) -> SparseRows:
    """One sparse row per span ``[starts[i], ends[i])`` of ``text`` (spans sorted and disjoint),
    L2-normalised, as the module docstring describes. Reads only the items inside the spans' range,
    so many short texts laid end to end cost their own length each."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    n = starts.size
    if n == 0:
        return SparseRows.empty(0)
    allpos, allids = content_items(text)
    a, b = np.searchsorted(allpos, [starts[0], ends[-1]])
    pos, ids = allpos[a:b], allids[a:b]
    # items inside the spans, and the span each lies in
    row = np.searchsorted(ends, pos, side="right")
    ok = row < n
    ok[ok] &= pos[ok] >= starts[row[ok]]
    row, ids = row[ok], ids[ok]
    if ids.size == 0:
        return SparseRows.empty(n)
    # items numbered by id, and the entries put in column order, by one stable radix sort of the ids
    # (work in the number of items, not in the id range: many short texts stay cheap): repeats of an
    # item in one span are then neighbours, counted by their runs
    order = stable_order(ids.astype(np.int64), int(ids.max()) + 1)  # rows stay in order inside a column
    sid = ids[order]
    first_of_item = np.ones(sid.size, bool)
    first_of_item[1:] = sid[1:] != sid[:-1]
    c = np.cumsum(first_of_item) - 1
    nv = int(c[-1]) + 1
    r = row[order]
    first = np.ones(r.size, bool)
    first[1:] = (c[1:] != c[:-1]) | (r[1:] != r[:-1])
    at = np.flatnonzero(first)
    cnt = np.diff(np.append(at, r.size))
    prow, pcol = r[at], c[at]
    df = np.bincount(pcol, minlength=nv)
    shared = (df >= 2) & (df < n)  # an item in every span weighs log(1) = 0: no entries for it
    keep = shared[pcol]
    if not keep.any():
        return SparseRows.empty(n)
    prow, pcol, cnt = prow[keep], pcol[keep], cnt[keep]
    local = np.cumsum(shared) - 1  # shared items numbered in order: the column order is kept
    w = np.sqrt(cnt) * np.log(n / df[pcol])
    norm = np.sqrt(np.bincount(prow, weights=w * w, minlength=n))
    w = w / np.where(norm > 0, norm, 1.0)[prow]
    return SparseRows(prow, local[pcol], w, n, int(shared.sum()))

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
  either way), and the item space is folded into ``dim`` signed buckets only when the document's
  shared vocabulary is larger than ``dim`` (below that, each item has its own column: exact).
"""

from __future__ import annotations

import numpy as np

from ..hashing import splitmix64
from .entropy import content_items

#: Columns of the folded item space; a document sharing fewer items than this keeps them exact.
DIM = 512
#: The chunking cascade's columns: its DP reads every window of up to w atoms, so its cost grows with
#: the dimension; 128 keeps the default chunk() within a few times the local rule's time. Segmentation
#: keeps :data:`DIM` (on the dev split, 128 columns cost Choi 0.185 -> 0.246 Pk).
CHUNK_DIM = 128


def lexical_vectors(text: str, starts: np.ndarray, ends: np.ndarray, dim: int = DIM) -> np.ndarray:
    """One float32 row per span ``[starts[i], ends[i])`` of ``text`` (spans sorted and disjoint),
    L2-normalised, as the module docstring describes."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    n = starts.size
    if n == 0:
        return np.zeros((0, 1), dtype=np.float32)
    pos, ids = content_items(text)
    # items inside the spans, and the span each lies in
    row = np.searchsorted(ends, pos, side="right")
    ok = (row < n)
    ok[ok] &= pos[ok] >= starts[row[ok]]
    row, ids = row[ok], ids[ok]
    if ids.size == 0:
        return np.zeros((n, 1), dtype=np.float32)
    vocab, col = np.unique(ids, return_inverse=True)
    pair = np.unique(row * vocab.size + col, return_counts=True)
    prow, pcol = np.divmod(pair[0], vocab.size)
    cnt = pair[1].astype(np.float64)
    df = np.bincount(pcol, minlength=vocab.size)
    shared = df >= 2
    keep = shared[pcol]
    prow, pcol, cnt = prow[keep], pcol[keep], cnt[keep]
    if prow.size == 0:
        return np.zeros((n, 1), dtype=np.float32)
    idf = np.log(n / df)
    w = np.sqrt(cnt) * idf[pcol]
    nv = int(shared.sum())
    if nv <= dim:
        local = np.cumsum(shared) - 1
        X = np.bincount(prow * nv + local[pcol], weights=w, minlength=n * nv).reshape(n, nv)
    else:
        h = splitmix64(vocab.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15))
        bucket = (h % np.uint64(dim)).astype(np.int64)
        sign = np.where((h >> np.uint64(63)) != 0, -1.0, 1.0)
        X = np.bincount(prow * dim + bucket[pcol], weights=w * sign[pcol], minlength=n * dim).reshape(n, dim)
    norm = np.sqrt(np.einsum("ij,ij->i", X, X))
    X /= np.where(norm > 0, norm, 1.0)[:, None]
    return X.astype(np.float32)

"""Semantic cliffs: where the meaning of adjacent sentences stops overlapping.

Each sentence is embedded exactly once (never overlapping windows of text: that multiplies the
embedding cost by the window size), then the cosine similarity of neighbours is computed in one
vectorised step. The gap score is ``1 - similarity``, so the signal fits the gap-signal protocol
(higher = stronger break).

``window`` > 1 compares *blocks* instead of single sentences: the mean of the ``window`` sentence
vectors before a gap against the mean of the ``window`` after it (TextTiling-style, built from the
same per-sentence vectors with cumulative sums, so it costs no extra embedding). Single sentences
are noisy — one short aside looks like a topic change — and blocks average that out. Measured
(``bench/bench_embedders.py --segmentation``, Pk with the gold number of boundaries, lower is
better): Choi, E5 0.263 (w=1) -> 0.132 (w=2), hash 0.408 -> 0.335; wiki300, hash 0.452 -> 0.442
(0.365 at w=3). Hence the default ``window=2``; ``window=1`` is the plain adjacent-sentence cosine.

:func:`cliffs` turns similarities into cut candidates: gaps whose similarity falls below an absolute
threshold, and/or whose drop from the previous gap is unusually large for this document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .. import boundaries as bd
from ..models.embedding import Embedder
from ..text.sentences import SentenceSpans
from .composite import CompositeSignal

__all__ = ["SemanticSignal", "adjacent_similarities", "cliffs", "depth_scores", "embed_unique", "fused_signal"]


def adjacent_similarities(vectors: np.ndarray, window: int = 1) -> np.ndarray:
    """Cosine similarity across each of the n-1 gaps of n row vectors (float64, len n-1).

    With ``window`` = w > 1, gap i compares the mean of rows ``max(0, i-w+1)..i`` with the mean of
    rows ``i+1..min(n, i+w)``. All-zero rows (text with no features) carry no evidence: they take
    the vector of the nearest preceding (else following) non-zero row, so they never fake a break.
    Memory: one float64 prefix sum besides the input; the window means are formed a block of gaps
    at a time (a long document's n x d left/right matrices would otherwise dominate the peak).
    """
    v = np.asarray(vectors)
    if not np.issubdtype(v.dtype, np.floating):
        v = v.astype(np.float64)
    n = v.shape[0]
    if n < 2:
        return np.zeros(0, dtype=np.float64)
    if window < 1:
        raise ValueError("window must be >= 1")
    v = _fill_empty(v)
    csum = np.zeros((n + 1, v.shape[1]), dtype=np.float64)
    np.cumsum(v, axis=0, dtype=np.float64, out=csum[1:])
    out = np.zeros(n - 1, dtype=np.float64)
    block = max(1, (1 << 20) // max(1, v.shape[1]))  # ~8 MB of float64 per side
    for a in range(0, n - 1, block):
        gaps = np.arange(a, min(n - 1, a + block))
        lo = np.maximum(0, gaps - window + 1)
        hi = np.minimum(n, gaps + 1 + window)
        left = csum[gaps + 1] - csum[lo]
        right = csum[hi] - csum[gaps + 1]
        num = np.einsum("ij,ij->i", left, right)
        den = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
        out[a : a + gaps.size] = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return out.clip(-1.0, 1.0)


def _fill_empty(v: np.ndarray) -> np.ndarray:
    nonzero = np.any(v != 0, axis=1)
    if nonzero.all() or not nonzero.any():
        return v
    idx = np.where(nonzero, np.arange(v.shape[0]), -1)
    idx = np.maximum.accumulate(idx)  # nearest preceding non-zero row
    first = int(np.argmax(nonzero))
    idx[idx < 0] = first  # leading empty rows borrow the first non-zero one
    return v[idx]


@dataclass(frozen=True)
class SemanticSignal:
    """Gap signal from sentence embeddings. ``embedder`` is any :class:`~logichunk.models.Embedder`
    (wrap it in an :class:`~logichunk.models.EmbeddingCache` to reuse vectors across re-chunking)."""

    embedder: Embedder
    window: int = 2
    name: str = "semantic"
    # the last text's vectors: the cascade reads them again for its global decision (one model pass)
    _last: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def embed_sentences(self, sents: SentenceSpans) -> np.ndarray:
        """One vector per sentence. Surrounding whitespace is stripped for the model only — the
        spans are untouched — and identical sentences are embedded once. The last text's vectors
        are kept, so a second call on the same sentences costs no model pass."""
        key = (hash(sents.text), len(sents.text), sents.starts.tobytes(), sents.ends.tobytes())
        last = self._last.get("text")  # one (key, vectors) pair, replaced whole: threads sharing the
        if last is not None and last[0] == key:  # signal never read one text's key with another's vectors
            return last[1]
        vectors = embed_unique(self.embedder, [t.strip() for t in sents.texts()])
        self._last["text"] = (key, vectors)
        return vectors

    def sentence_vectors(self, sents: SentenceSpans) -> np.ndarray:
        """The sentence vectors the cascade's global decision measures cohesion with (see
        :meth:`embed_sentences`)."""
        return self.embed_sentences(sents)

    def similarities(self, sents: SentenceSpans) -> np.ndarray:
        """Cosine similarity across each gap (len n-1)."""
        if len(sents) < 2:
            return np.zeros(0, dtype=np.float64)
        return adjacent_similarities(self.embed_sentences(sents), self.window)

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        """``1 - similarity`` for each gap (0..2, float64, len n-1): higher is a stronger break."""
        return 1.0 - self.similarities(sents)


def fused_signal(embedder: Embedder, *, window: int = 2) -> CompositeSignal:
    """The entropy signal and semantic cliffs, each z-scored within the document, mixed with equal
    weights: tier 3's composite mechanism without its divergence term and without its logistic
    squash (a tier-1 signal needs only the order and the contrast of its scores; the squash flattens
    the strongest breaks, which the segmentation count rule reads).

    Why: the two fail differently — cliffs need a model that separates topics and lose on short
    Chinese clauses, the entropy signal sees word reuse but not paraphrase. With E5 the mix had a
    lower Pk than entropy on all six segmentation sets and than the cliffs on five (Choi 0.127 vs
    0.178 / 0.153); with the model-free hash embedder it is no better than entropy alone, which stays
    the default (``bench/QUALITY.md``). Equal weights were chosen before measuring; a weight of 0.5
    for the cliffs was worse. The squashed mix was measured too (wiki300 0.582 against 0.522) before
    the squash was dropped: a choice made with those numbers in view.
    """
    return CompositeSignal(name="fused", extra=SemanticSignal(embedder, window=window), weights=(1.0, 0.0, 1.0),
                           squash=False)


def embed_unique(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Embed each distinct text once (empty texts get a zero vector without calling the model)."""
    index: dict[str, int] = {}
    inverse = np.empty(len(texts), dtype=np.int64)
    for i, t in enumerate(texts):
        inverse[i] = index.setdefault(t, len(index))
    uniq = list(index)
    nonempty = [u for u in uniq if u]
    vecs = np.asarray(embedder.embed(nonempty, kind="passage"), dtype=np.float32) if nonempty else None
    dim = vecs.shape[1] if vecs is not None else 1
    table = np.zeros((len(uniq), dim), dtype=np.float32)
    if vecs is not None:
        table[[k for k, u in enumerate(uniq) if u]] = vecs
    return table[inverse]


def depth_scores(similarities: np.ndarray) -> np.ndarray:
    """TextTiling depth of each gap: how far the similarity falls below the nearest peaks on both
    sides (climbing while it keeps rising): ``(left_peak - s) + (right_peak - s)``, >= 0. Unlike the
    drop from the previous gap, it sees a slope that falls over several gaps as one cliff. (The
    depth of the break score ``-similarity``: :func:`logichunk.boundaries.depth_scores`.)"""
    return bd.depth_scores(-np.asarray(similarities, dtype=np.float64))


def cliffs(similarities: np.ndarray, threshold: float | None = 0.3, percentile: float | None = None,
           *, drop: Literal["previous", "depth"] = "previous") -> np.ndarray:
    """Gap indices (sorted int64) that are semantic cliffs.

    * ``threshold``: the similarity across the gap is below it (absolute; its scale depends on the
      embedder — E5 similarities rarely go below 0.7, hashed n-grams sit near 0 for unrelated text);
    * ``percentile``: the gap's drop is positive and at or above that percentile of this document's
      positive drops (relative: adapts to any embedder). ``drop="previous"`` measures the fall from
      the previous gap, ``sim[i-1] - sim[i]``; ``drop="depth"`` uses :func:`depth_scores`, which is
      steadier when a topic fades out over two or three sentences.

    Either rule may be disabled with None; a gap is a cliff if any enabled rule fires.
    """
    sim = np.asarray(similarities, dtype=np.float64)
    hit = np.zeros(sim.size, dtype=bool)
    if sim.size == 0:
        return np.zeros(0, dtype=np.int64)
    if threshold is not None:
        hit |= sim < threshold
    if percentile is not None:
        if not 0 <= percentile <= 100:
            raise ValueError("percentile must be within [0, 100]")
        if drop == "previous":
            fall = np.concatenate(([0.0], sim[:-1] - sim[1:]))
        elif drop == "depth":
            fall = depth_scores(sim)
        else:
            raise ValueError(f"drop must be 'previous' or 'depth', got {drop!r}")
        positive = fall[fall > 0]
        if positive.size:
            hit |= (fall > 0) & (fall >= np.percentile(positive, percentile))
    return np.flatnonzero(hit).astype(np.int64)

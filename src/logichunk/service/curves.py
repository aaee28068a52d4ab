"""Gap-score curves for the web page's plot: the signals the chunkers cut on, along the text.

Two kinds of series, both with ``x`` in character offsets (Python ``str`` indices, like every span):

* ``gap`` series have one value per sentence gap, at the offset where the gap is: ``entropy``
  (tier 1 of the logic-chain cascade), ``composite`` (tier 3) and, with an embedder, ``similarity``
  (adjacent-sentence cosine, what parent-child children are cut on; lower = stronger break), and
  ``structure``: the strength of the author's layout at each gap (:mod:`logichunk.text.structure`:
  5 before a heading, 4 around lists/tables/fences, 3 blank line, 2 line break, 1 inside a paragraph,
  0 before a sentence that continues the one before it),
  the rewards the global boundary decision reads;
* ``window`` series come from :meth:`EntropySignal.curves`: windowed n-gram entropy, perplexity,
  divergence and the novelty profile.

Each series carries its thresholds: configured ones (the similarity threshold), and the *weakest
cut* actually taken on it (the lowest score among the chunker's cut points that sit on a gap), which
is what a reader needs to see why a lower peak was not cut. Long series are thinned to a min/max
envelope per bucket so the browser receives a few thousand points, with every peak kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..signals.composite import CompositeSignal
from ..signals.entropy import EntropySignal
from ..text.sentences import split_sentences
from ..text.structure import layout

MAX_POINTS = 4000

LABELS = {
    "entropy": "entropy gap score (tier 1)",
    "composite": "composite score (tier 3)",
    "similarity": "adjacent-sentence similarity",
    "structure": "author's structure (0 continues, 1 sentence, 2 line, 3 paragraph, 4 block, 5 section / heading)",
    "window_entropy": "window entropy (bits)",
    "perplexity": "window perplexity",
    "divergence": "window divergence (JSD bits)",
    "novelty": "novelty (cache surprisal)",
}


def envelope(x: np.ndarray, y: np.ndarray, max_points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``max_points`` points: the min and the max of each of ``max_points // 2`` buckets,
    in x order, so a thinned curve keeps its peaks and its dips."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    n = x.size
    if n <= max_points:
        return x, y
    buckets = max(1, max_points // 2)
    edges = np.linspace(0, n, buckets + 1).astype(np.int64)
    lo = np.minimum.reduceat(y, edges[:-1])
    hi = np.maximum.reduceat(y, edges[:-1])
    idx = np.arange(n)
    # position of the min / max inside each bucket (first occurrence)
    bucket = np.searchsorted(edges[1:], idx, side="right")
    imin = np.full(buckets, n, np.int64)
    imax = np.full(buckets, n, np.int64)
    np.minimum.at(imin, bucket[y == lo[bucket]], idx[y == lo[bucket]])
    np.minimum.at(imax, bucket[y == hi[bucket]], idx[y == hi[bucket]])
    pick = np.unique(np.concatenate([imin, imax]))
    pick = pick[pick < n]
    return x[pick], y[pick]


def _finite(y: np.ndarray) -> np.ndarray:
    return np.nan_to_num(np.asarray(y, np.float64), nan=0.0, posinf=0.0, neginf=0.0)


def _series(name: str, kind: str, x: np.ndarray, y: np.ndarray, *, higher_is_break: bool,
            thresholds: list[dict[str, Any]] | None = None, max_points: int = MAX_POINTS) -> dict[str, Any]:
    y = _finite(y)
    xs, ys = envelope(np.asarray(x), y, max_points)
    return {"name": name, "label": LABELS.get(name, name), "kind": kind, "higher_is_break": higher_is_break,
            "x": [int(v) for v in xs.tolist()], "y": [round(float(v), 5) for v in ys.tolist()],
            "points": int(np.asarray(x).size), "thresholds": thresholds or []}


def weakest_cut(gaps: np.ndarray, scores: np.ndarray, cuts: Sequence[int], higher_is_break: bool) -> float | None:
    """The weakest score among the gaps that were cut (None when no cut sits on a gap)."""
    if not len(cuts) or not gaps.size:
        return None
    on = np.isin(gaps, np.asarray(list(cuts), np.int64))
    if not on.any():
        return None
    v = scores[on]
    return float(v.min() if higher_is_break else v.max())


def text_curves(text: str, *, cuts: Sequence[int] = (), embed: Callable[[list[str]], np.ndarray] | None = None,
                similarity_threshold: float | None = None, max_points: int = MAX_POINTS) -> dict[str, Any]:
    """All series of ``text``; ``cuts`` are the level-1 cut offsets (for the weakest-cut lines) and
    ``embed`` (texts -> L2-normalised rows) adds the similarity series."""
    sents = split_sentences(text)
    gaps = np.asarray(sents.seams(), np.int64)  # where a chunker cuts each gap (the cuts are read there)
    series: list[dict[str, Any]] = []

    def gap_series(name: str, scores: np.ndarray, higher: bool, extra: list[dict[str, Any]] | None = None) -> None:
        th = list(extra or [])
        w = weakest_cut(gaps, scores, cuts, higher)
        if w is not None:
            th.append({"value": round(w, 5), "label": "weakest cut taken", "kind": "derived"})
        series.append(_series(name, "gap", gaps, scores, higher_is_break=higher, thresholds=th, max_points=max_points))

    if gaps.size:
        gap_series("entropy", EntropySignal().gap_scores(sents), True)
        gap_series("structure", layout(sents).strength.astype(np.float64), True)
        gap_series("composite", CompositeSignal().gap_scores(sents), True,
                   [{"value": 0.5, "label": "average gap", "kind": "reference"}])
        if embed is not None:
            vecs = np.asarray(embed(sents.texts()), np.float64)
            sim = np.einsum("ij,ij->i", vecs[:-1], vecs[1:])
            extra = [] if similarity_threshold is None else [
                {"value": similarity_threshold, "label": "similarity threshold", "kind": "setting"}]
            gap_series("similarity", sim, False, extra)
    for name, (x, y) in EntropySignal().curves(text).items():
        key = "window_entropy" if name == "entropy" else name
        series.append(_series(key, "window", x, y, higher_is_break=name != "perplexity", max_points=max_points))
    return {"length": len(text), "sentences": len(sents), "series": series}

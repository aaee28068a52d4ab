"""Tier 3 of the logic-chain cascade: :class:`CompositeSignal`, which mixes the entropy signal's gap
score (:mod:`logichunk.signals.entropy`) with the character bigram divergence at the gap
(:func:`~logichunk.signals.ngrams.divergence_at`) and, when configured, an LM perplexity signal, each
z-normalised within the document. The cascade runs it only where tier 1 could not split a run, and
only in a run long enough for its windows (:meth:`CompositeSignal.window`); the fused signal (:mod:`logichunk.signals.semantic`) is a composite with sentence embeddings as its extra.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..text.sentences import SentenceSpans
from . import GapSignal
from .entropy import EntropySignal, zscore
from .ngrams import divergence_at

__all__ = ["CompositeSignal"]


@dataclass(frozen=True)
class CompositeSignal:
    """Tier 3 of the cascade: a composite of the entropy signal, the character n-gram divergence
    (the information gain of cutting there, an entropy/perplexity-of-windows quantity), and an
    optional ``extra`` signal (an LM perplexity signal when one is configured).

    Each component is z-normalised within the document (so signals of different scale mix), the
    weighted mean ``z`` is squashed with a logistic to ``(0, 1)``; 0.5 is an average gap.
    ``weights`` are (entropy, divergence, extra); the divergence is the information gain of
    cutting exactly at the gap (:func:`divergence_at`, windows of ``entropy.window`` characters).
    """

    name: str = "composite"
    extra: GapSignal | None = None
    weights: tuple[float, float, float] = (1.0, 0.5, 1.0)
    entropy: EntropySignal = EntropySignal()
    squash: bool = True  # False: the weighted mean z itself (a tier-1 signal keeps its contrast)

    def components(self, sents: SentenceSpans, gaps: np.ndarray | None = None, *,
                   entropy: np.ndarray | None = None,
                   edges: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """The raw component scores per gap (before normalisation), for all gaps or the given gap
        indices. ``entropy``: the entropy signal's scores of those gaps when known (tier 1 computed
        them); ``edges``: see :func:`divergence_at`."""
        ns = len(sents)
        if ns < 2:
            return {}
        idx = np.arange(ns - 1) if gaps is None else np.asarray(gaps, dtype=np.int64)
        offsets = np.asarray(sents.ends[:-1], dtype=np.int64)[idx]
        e = self.entropy
        out = {"entropy": e.scores_at(sents.text, offsets) if entropy is None else np.asarray(entropy, np.float64)}
        if self.weights[1]:  # weighted 0 (the fused signal), the divergence is not computed at all
            out["divergence"] = divergence_at(sents.text, offsets, e.window, e.n, edges=edges)
        if self.extra is not None:
            ex = np.asarray(self.extra.gap_scores(sents), dtype=np.float64)
            if ex.shape != (ns - 1,):
                raise ValueError(f"extra signal {getattr(self.extra, 'name', '?')!r} returned shape "
                                 f"{ex.shape}, expected {(ns - 1,)}")
            out["extra"] = ex[idx]
        return out

    def window(self, tier1: GapSignal) -> int | None:
        """The characters tier 3 reads around a gap beyond what ``tier1`` scored there, or None where a
        component reads without such a bound. With ``tier1`` this signal's own ``entropy`` and no ``extra``,
        the entropy component is tier 1's score itself and only the divergence is new: it reads
        ``[t - w, t + w)`` around the gap, ``2 * w`` characters (``w = entropy.window``), so a run of
        gaps shorter than that holds no gap whose windows lie inside it: every score would contrast text
        beyond the run's edges, breaks tier 1 already trusts (the cascade leaves such a run to tier 1).
        An ``extra`` signal (the LM reads all the text before a gap) or another tier 1 (then the entropy
        score, over 10 to 80 content items, is new too) has no such bound."""
        if self.extra is not None or tier1 != self.entropy:
            return None
        return 2 * self.entropy.window

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        if len(sents) < 2:
            return np.zeros(0)
        return self.gap_scores_at(sents, np.arange(len(sents) - 1))

    def sentence_vectors(self, sents: SentenceSpans) -> np.ndarray | None:
        """The ``extra`` signal's sentence vectors when it has them (the fused signal's embedder),
        else None: what the cascade's global decision measures cohesion with."""
        get = getattr(self.extra, "sentence_vectors", None)
        return None if get is None else get(sents)

    def gap_scores_at(self, sents: SentenceSpans, gaps: np.ndarray) -> np.ndarray:
        """Composite scores of the gap indices ``gaps`` only, z-normalised among them: what tier 3
        needs inside runs that entropy could not split, without scoring the whole document."""
        gaps = np.asarray(gaps, dtype=np.int64)
        if len(sents) < 2 or gaps.size == 0:
            return np.zeros(gaps.size)
        return self.combine(self.components(sents, gaps))

    def combine(self, comp: dict[str, np.ndarray]) -> np.ndarray:
        """Scores in ``(0, 1)`` from raw components (as :meth:`components` returns them), each
        z-normalised among the gaps given, mixed by ``weights``, squashed by a logistic (with
        ``squash=False``, the mixed z-score itself)."""
        if not comp or comp["entropy"].size == 0:
            return np.zeros(0)
        we, wd, wx = self.weights
        z = we * zscore(comp["entropy"])
        tot = we
        if "divergence" in comp:
            z = z + wd * zscore(comp["divergence"])
            tot += wd
        if "extra" in comp:
            z = z + wx * zscore(comp["extra"])
            tot += wx
        z = z / tot if tot > 0 else z
        if not self.squash:
            return z
        return 1.0 / (1.0 + np.exp(-np.minimum(np.maximum(z, -50.0), 50.0)))  # (np.clip's own overhead: ~10 µs)

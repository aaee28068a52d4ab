"""Tier 1 of the logic-chain cascade: :class:`EntropySignal`, the model-free gap score, and
:func:`zscore`, the within-document normalisation that lets signals of different scale be mixed.

**The gap score.** On six public segmentation sets (Choi, Wiki-300, Weibo, DialSeg711, TIAGE, DAct;
``bench/bench_signals.py``) the character-bigram entropy jump ``|H_right - H_left|`` cut no better
than random (mean Pk 0.46 vs 0.48) and the bigram divergence barely better (0.42), while vocabulary
shift finds topic breaks (0.31). So the score is a vocabulary-shift statistic with an
information-theoretic reading:

1. *Content items* (:mod:`logichunk.signals.items`): words by a hash of their first four letters,
   CJK characters, stop words and function characters left out;
2. *Cache-perplexity jump* (:mod:`logichunk.signals.novelty`): how much less predictable, under a
   recency cache model, the items after a gap are than those before it, plus the mirror reading
   backwards, averaged over scales of 10 to 80 items and weighed down near the document's edges;
3. *Scale*: the score is ``tanh(jump / 0.1)`` in ``[0, 1]``, comparable across documents.

The character n-gram curves of :meth:`EntropySignal.curves` come from :mod:`logichunk.signals.ngrams`;
:class:`~logichunk.signals.composite.CompositeSignal` (tier 3) mixes this score with the bigram
divergence and, when configured, an LM perplexity signal.

The names that lived here before the module was split by job are still importable from here, but
for ``CompositeSignal``: :mod:`logichunk.signals.composite` imports this module, and imports run one
way. To patch one of them in a test, patch the module that reads it: :mod:`~logichunk.signals.items`,
:mod:`~logichunk.signals.ngrams`, :mod:`~logichunk.signals.novelty` or
:mod:`~logichunk.signals.composite`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..text.sentences import SentenceSpans
from .items import _STOP_EN, _STOP_ZH, content_items  # noqa: F401 (re-exported)
from .ngrams import (  # noqa: F401 (re-exported)
    _clogc,
    _gram_keys,
    _rows_entropy,
    _run_sums,
    _window_entropy,
    divergence_at,
    divergence_curve,
    entropy_curve,
    perplexity_curve,
)
from .novelty import (  # noqa: F401 (re-exported)
    MAX_LOOKBACK,
    _link_fields,
    _novelty_prefix,
    _quantised,
    _quantised_tables,
    link_distances,
    novelty_gap_scores,
    novelty_jump,
    novelty_prefix_of,
    novelty_profile,
)

__all__ = [
    "EntropySignal",
    "content_items",
    "divergence_curve",
    "entropy_curve",
    "novelty_profile",
    "perplexity_curve",
]


@dataclass(frozen=True)
class EntropySignal:
    """Tier 1 of the logic-chain cascade: the model-free gap score (see the module docstring).

    ``window``/``step``/``n`` define the character n-gram curves (:meth:`curves`) and the
    n-gram divergence the composite uses; ``scales`` (in content items) and ``lookback`` (items,
    at most 256) define the gap score, ``saturation`` its scale: the score is
    ``tanh(jump / saturation)`` where ``jump`` is the mean cache-perplexity jump in ``[0, 1]``
    (:func:`novelty_gap_scores`). On the public sets, gold topic boundaries have a median jump of
    about 0.05 and other gaps a 90th percentile of about 0.04, so with 0.1 a clear break scores
    0.5-0.9 and mixes sensibly with the cascade's structure bonuses (0.3 for a blank line).
    Defaults were chosen on six public segmentation sets at once (English and Chinese, prose and
    dialogue), not tuned to one.
    """

    name: str = "entropy"
    window: int = 100
    step: int = 50
    n: int = 2
    scales: tuple[int, ...] = (10, 20, 40, 80)
    lookback: int = 200
    saturation: float = 0.1

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        """float64 array of ``len(sents) - 1`` scores in ``[0, 1]``; higher = stronger break."""
        if len(sents) < 2:
            return np.zeros(0)
        return self.scores_at(sents.text, np.asarray(sents.ends[:-1]))

    def scores_at(self, text: str, offsets: np.ndarray) -> np.ndarray:
        """The gap score of a cut at each character offset (any offsets, not only sentence ends)."""
        return self.squash(novelty_gap_scores(text, np.asarray(offsets), self.scales, self.lookback))

    def squash(self, jump: np.ndarray) -> np.ndarray:
        """The score of a cache-perplexity jump: ``tanh(jump / saturation)``."""
        return np.tanh(jump / self.saturation) if self.saturation > 0 else jump

    def curves(self, text: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The plottable curves of ``text``, each ``(x offsets in characters, values)``:
        ``entropy`` (bits per window), ``perplexity`` (per window, under the document model),
        ``divergence`` (JSD bits at window boundaries), ``novelty`` (per content item, its
        backward cache surprisal in [0, 1])."""
        pos, back, _ = novelty_profile(text, self.lookback)
        return {
            "entropy": entropy_curve(text, self.window, self.step, self.n),
            "perplexity": perplexity_curve(text, self.window, self.step, self.n),
            "divergence": divergence_curve(text, self.window, self.step, self.n),
            "novelty": (pos.astype(np.float64), np.asarray(back)),
        }


def zscore(x: np.ndarray) -> np.ndarray:
    """``(x - mean) / std`` over the document (zeros when it does not vary; non-finite entries count
    as missing and score 0): a score with no unit, so signals of different scale can be mixed or
    weighed against the structure rewards."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    if np.isfinite(x).all():  # the usual case, without the nan-aware reductions (the same numbers)
        mu, sd = _mean_std(x) if x.ndim == 1 else (x.mean(), x.std())
        return (x - mu) / sd if sd > 1e-12 else np.zeros_like(x)
    x = np.where(np.isfinite(x), x, np.nan)
    mu = np.nanmean(x) if np.isfinite(x).any() else 0.0
    sd = np.nanstd(x) if np.isfinite(x).any() else 0.0
    z = (x - mu) / sd if sd > 1e-12 else np.zeros_like(x)
    return np.nan_to_num(z, nan=0.0)


def _mean_std(x: np.ndarray) -> tuple[float, float]:
    """``x.mean()`` and ``x.std()`` of a 1-d float64 array, the same bits: the operations numpy's ``_mean`` and
    ``_var`` make (the pairwise sum ``np.add.reduce``, divided by the count; the deviations squared, summed so,
    divided, the square root), without their Python wrappers' argument handling (~40 µs of a short text's ~80 µs
    per z-score, several a level)."""
    n = x.size
    mu = float(np.add.reduce(x)) / n
    d = x - mu
    np.multiply(d, d, out=d)
    return mu, math.sqrt(float(np.add.reduce(d)) / n)

"""Is one method's lead over another real, or a few documents' luck? A paired bootstrap.

Two methods scored on the same documents (segmentation: Pk per document) or the same queries
(chunking: recall and IoU per query) give paired values. The mean of the differences is the lead; its
95 % interval comes from resampling the items with replacement (percentile bootstrap, a fixed seed, so
a table reproduces to the digit). An interval that holds 0 says the sets cannot tell the two apart:
"method A loses to B" is then a trend, not a finding. Wins and losses count the items where one side
is strictly better, so a lead carried by a handful of items shows.

Why a bootstrap and not a t-interval: per-item scores of these tasks are far from normal (most
queries of a hard set score 0, a few score 1), and the bootstrap needs no such assumption.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Paired", "ROUNDS", "SEED", "paired", "paired_keys"]

#: resamples per interval: the 2.5th and 97.5th percentiles of 2,000 means move by about 0.1 of the
#: interval's width between seeds, enough for the second digit of a difference
ROUNDS = 2000
SEED = 0
_BLOCK = 1 << 22  # resampled items per block: the index matrix stays ~32 MB however many queries


@dataclass(frozen=True)
class Paired:
    """``a - b`` over the items both scored: its mean ``diff``, the 95 % interval ``[lo, hi]``,
    the items where ``a`` is better (``wins``) and worse (``losses``), and how many items counted."""

    diff: float
    lo: float
    hi: float
    wins: int
    losses: int
    n: int


def paired(a: np.ndarray, b: np.ndarray, *, higher_is_better: bool, rounds: int = ROUNDS,
           seed: int = SEED) -> Paired | None:
    """The paired comparison of per-item scores ``a`` and ``b`` (same length, same items in the same
    order). Items where either is not finite (Pk of a one-unit document) are left out; None when no
    item is left."""
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same items: {a.size} against {b.size}")
    ok = np.isfinite(a) & np.isfinite(b)
    d = a[ok] - b[ok]
    n = d.size
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(rounds)
    per = max(1, _BLOCK // n)
    for lo in range(0, rounds, per):
        k = min(per, rounds - lo)
        means[lo : lo + k] = d[rng.integers(0, n, size=(k, n))].mean(axis=1)
    q_lo, q_hi = np.percentile(means, [2.5, 97.5])
    better = d > 0 if higher_is_better else d < 0
    worse = d < 0 if higher_is_better else d > 0
    return Paired(float(d.mean()), float(q_lo), float(q_hi), int(better.sum()), int(worse.sum()), n)


def paired_keys(metric: str, p: Paired | None) -> dict[str, Any]:
    """The row keys of one comparison against the reference row: ``<metric>_diff`` (this row minus
    the reference), ``<metric>_ci95`` (its interval), ``<metric>_wins`` and ``<metric>_losses``
    (items where this row is better, worse); None values when no item could be compared."""
    if p is None:
        return {f"{metric}_diff": None, f"{metric}_ci95": None, f"{metric}_wins": None, f"{metric}_losses": None}
    return {f"{metric}_diff": p.diff, f"{metric}_ci95": [p.lo, p.hi], f"{metric}_wins": p.wins,
            f"{metric}_losses": p.losses}

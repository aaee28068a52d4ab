"""Cuts chosen from gap scores by local rules, one gap against its neighbours, and pieces fitted to
size by the same local rule.

* *choosing* cuts from scores: :func:`peaks` (local maxima with a minimum drop θ, as Meta-Chunking
  uses on perplexity minima), :func:`minima` (its mirror for per-sentence curves), :func:`above`
  (a threshold), :func:`top_k`, and :func:`select_by_depth` (TextTiling depth, cut where a break
  is at least half as deep as the document's deepest: how many cuts a document gets when no size
  limit decides it);
* *fitting* the pieces to size by the earlier local rule: :func:`fit` cuts at candidate gaps, splits
  anything over the maximum at its best inner gap, then merges neighbours weakest-cut-first up to the
  target (``selection="local"``; the Meta-Chunking and parent-child chunkers use it);
* per-segment numpy helpers the rules are built on: :func:`ranges`, :func:`segment_argmax`.

Why apart from the global choice (:mod:`logichunk.boundaries.sized`): these rules need no vectors and
no programme, only the scores and the sizes; the eval's gap signals and ``selection="local"`` use them
alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .limits import SizeLimits

# --------------------------------------------------------------------------- choosing cuts


def peaks(scores: np.ndarray, min_drop: float = 0.0) -> np.ndarray:
    """Boolean mask of local maxima: ``s[i] >= both neighbours`` and higher than at least one of them
    by more than ``min_drop`` (θ). Edges compare with their one neighbour; a score of ``-inf``
    counts as an edge (it marks the seam between texts laid end to end). An element with no
    neighbour on either side (a gap sequence of one element) is a peak. High break scores mean
    strong breaks, so peaks are candidate cuts."""
    s = np.asarray(scores, dtype=np.float64)
    n = s.size
    if n == 0:
        return np.zeros(0, dtype=bool)
    left = np.empty(n)
    right = np.empty(n)
    left[0] = -np.inf
    left[1:] = s[:-1]
    right[-1] = -np.inf
    right[:-1] = s[1:]
    is_max = (s >= left) & (s >= right)
    with np.errstate(invalid="ignore"):  # -inf - -inf at a seam: NaN, never a drop
        drop = np.maximum(s - np.where(np.isfinite(left), left, s), s - np.where(np.isfinite(right), right, s))
    alone = np.isneginf(left) & np.isneginf(right)
    return (is_max & (drop > min_drop)) | alone


def minima(values: np.ndarray, min_drop: float = 0.0) -> np.ndarray:
    """Local minima with drop θ (Meta-Chunking's PPL rule): the mirror of :func:`peaks`."""
    return peaks(-np.asarray(values, dtype=np.float64), min_drop)


def above(scores: np.ndarray, threshold: float) -> np.ndarray:
    return np.asarray(scores, dtype=np.float64) >= threshold


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Mask of the ``k`` highest scores (ties broken by position, earlier first)."""
    s = np.asarray(scores, dtype=np.float64)
    mask = np.zeros(s.size, dtype=bool)
    if k > 0 and s.size:
        order = np.argsort(-s, kind="stable")[: min(k, s.size)]
        mask[order] = True
    return mask


def peak_indices(scores: np.ndarray) -> np.ndarray:
    """Indices of local maxima (a plateau counts once, at its left end)."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return np.zeros(0, dtype=np.int64)
    left = np.concatenate(([-np.inf], s[:-1]))
    right = np.concatenate((s[1:], [-np.inf]))
    return np.flatnonzero((s > left) & (s >= right))


def depth_scores(scores: np.ndarray) -> np.ndarray:
    """TextTiling depth of every gap for break scores: ``(s[i] - s[l]) + (s[i] - s[r])`` where ``l``
    and ``r`` are reached by walking down from ``i`` on each side while the score does not rise."""
    s = np.asarray(scores, dtype=np.float64)
    n = s.size
    if n == 0:
        return s.copy()
    idx = np.arange(n)
    # walking left from i continues while s[j-1] <= s[j]; it stops at j with s[j-1] > s[j] (or 0)
    stop_l = np.ones(n, dtype=bool)
    stop_l[1:] = s[:-1] > s[1:]
    left = np.maximum.accumulate(np.where(stop_l, idx, 0))
    # walking right continues while s[j+1] <= s[j]; it stops at j with s[j+1] > s[j] (or n-1)
    stop_r = np.ones(n, dtype=bool)
    stop_r[:-1] = s[1:] > s[:-1]
    right = np.minimum.accumulate(np.where(stop_r, idx, n - 1)[::-1])[::-1]
    return (s - s[left]) + (s - s[right])


#: :func:`select_by_depth`'s default: a cut is at least this share of the deepest break's depth
RELATIVE_DEPTH = 0.5


def select_by_depth(scores: np.ndarray, k: int | None = None, *,
                    relative: float | None = RELATIVE_DEPTH) -> np.ndarray:
    """The count rule for a whole document's gap scores: cuts (sorted gap indices) at the peaks
    whose TextTiling depth is at least ``relative`` × the deepest peak's; with ``relative=None``, at
    the peaks deeper than ``mean - std/2`` of the peaks' depths (TextTiling's own cutoff); with
    ``k``, at the ``k`` deepest peaks (then the highest other gaps if peaks run out).

    Why relative to the deepest: TextTiling's cutoff keeps a fixed share of a document's peaks, so
    the number of cuts grows with its length whatever its topics (34 cuts per wiki300 article
    against 6.5 gold). "At least half as deep as the strongest break" is scale-free and lets a
    long, single-topic stretch stay whole. Measured on six sets we did not write, the first 300
    documents and, as a check, the next 300 (``bench/QUALITY.md``): lower Pk for the cliff signal
    on all of them and for entropy on four of six (wiki300 0.623 -> 0.540), at most 0.009 worse on
    the two dialogue sets. Only the value 1/2 was tried."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return np.zeros(0, dtype=np.int64)
    finite = np.isfinite(s)
    if not finite.all():  # a gap without a score is no evidence of a break: the lowest score
        s = np.where(finite, s, s[finite].min() if finite.any() else 0.0)
    d = depth_scores(s)
    pk_ = peak_indices(s)
    if k is None:
        dp = d[pk_]
        if dp.size == 0 or dp.max() <= 0:
            return np.zeros(0, dtype=np.int64)
        if relative is None:
            return np.sort(pk_[dp > dp.mean() - dp.std() / 2])
        if not 0 < relative <= 1:
            raise ValueError(f"relative must be in (0, 1], got {relative!r}")
        return np.sort(pk_[dp >= relative * dp.max()])
    k = max(0, min(int(k), s.size))
    order = pk_[np.lexsort((-s[pk_], -d[pk_]))]  # deepest first, ties by score
    chosen = order[:k]
    if chosen.size < k:
        rest = np.argsort(-s, kind="stable")
        rest = rest[~np.isin(rest, chosen)]
        chosen = np.concatenate((chosen, rest[: k - chosen.size]))
    return np.sort(chosen).astype(np.int64)


# --------------------------------------------------------------------------- segment helpers


def ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``concatenate([arange(a, b) for a, b in zip(lo, hi)])`` without the Python loop."""
    lo = np.asarray(lo, dtype=np.int64)
    cnt = np.asarray(hi, dtype=np.int64) - lo
    total = int(cnt.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    first = np.repeat(lo - np.concatenate(([0], np.cumsum(cnt)[:-1])), cnt)
    return first + np.arange(total, dtype=np.int64)


def segment_argmax(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Index of the maximum of ``values[lo[i]:hi[i]]`` for every (non-empty) segment ``i``, the
    first one on ties — ``np.argmax`` per segment, in one pass."""
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    idx = ranges(lo, hi)
    if idx.size == 0:
        return idx
    starts = np.concatenate(([0], np.cumsum(hi - lo)[:-1]))
    v = values[idx]
    best = np.maximum.reduceat(v, starts)
    seg = np.repeat(np.arange(lo.size), hi - lo)
    return np.minimum.reduceat(np.where(v == best[seg], idx, np.iinfo(np.int64).max), starts)


# --------------------------------------------------------------------------- fitting pieces to size


@dataclass(frozen=True, slots=True)
class Fit:
    """Result of :func:`fit` over ``n`` atoms: ``cuts`` are gap indices (cut after atom i), sorted;
    ``rank`` is each cut's preference class as given by the caller (default: 0 for a candidate,
    1 for a gap that was forced to fit the maximum); ``oversized`` lists atoms that alone exceed
    the maximum (the caller must split them inside)."""

    cuts: np.ndarray
    rank: np.ndarray
    oversized: np.ndarray


def fit(
    sizes: np.ndarray,
    scores: np.ndarray,
    limits: SizeLimits,
    candidates: np.ndarray | None = None,
    *,
    rank: np.ndarray | None = None,
    fixed: np.ndarray | None = None,
) -> Fit:
    """Cut ``n`` atoms (sentences, or sub-sentence pieces) into runs that fit ``limits``.

    ``sizes``: size of each atom (n). ``scores``: strength of each gap (n-1), higher = better cut.
    ``candidates``: mask of gaps the signal proposes (default: every gap). ``rank`` (n-1, int):
    per-gap preference class, lower = more trusted (e.g. tier that proposed it); merging removes
    less trusted cuts first, and among equals the weaker score first. ``fixed`` (n-1, bool): gaps
    that are always cut and never merged away — edges of independent pieces fitted in one call.

    1. cut at every candidate;
    2. a run still over the maximum is split at its best gap (highest rank-adjusted score),
       recursively, whether or not that gap was a candidate (recorded with rank ``max+1``);
    3. neighbours are merged weakest cut first while the merged run fits the target;
    4. runs under ``min_size`` merge into the neighbour across the weaker cut if that fits the maximum.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    n = sizes.size
    g = max(n - 1, 0)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size != g:
        raise ValueError(f"expected {g} gap scores for {n} atoms, got {scores.size}")
    cand = np.ones(g, dtype=bool) if candidates is None else np.asarray(candidates, dtype=bool)
    rk = np.where(cand, 0, 1).astype(np.int64) if rank is None else np.asarray(rank, dtype=np.int64)
    oversized = np.flatnonzero(sizes > limits.max_size)
    if n <= 1:
        return Fit(np.zeros(0, np.int64), np.zeros(0, np.int64), oversized)

    cum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=cum[1:])
    # an over-long atom is always isolated: cut on both sides of it
    iso = np.zeros(g, dtype=bool)
    if oversized.size:
        iso[oversized[oversized < g]] = True
        iso[oversized[oversized > 0] - 1] = True
    if fixed is not None:
        iso |= np.asarray(fixed, dtype=bool)
    cut_mask = cand | iso

    # 2. split runs over the maximum at their best inner gap (trusted ranks first, then the
    #    highest score), all such runs at once, round after round until every run fits
    key = scores - 1e6 * rk
    while True:
        bounds = np.concatenate(([0], np.flatnonzero(cut_mask) + 1, [n]))
        over = (cum[bounds[1:]] - cum[bounds[:-1]] > limits.max_size) & (bounds[1:] - bounds[:-1] > 1)
        if not over.any():
            break
        a, b = bounds[:-1][over], bounds[1:][over] - 1  # inner gaps a .. b-1 of each run
        cut_mask[segment_argmax(key, a, b)] = True

    cuts = np.flatnonzero(cut_mask)
    keep = _merge(cuts, rk[cuts], scores[cuts], cum, limits, iso)
    cuts = cuts[keep]
    return Fit(cuts.astype(np.int64), rk[cuts].astype(np.int64), oversized)


def _merge(
    cuts: np.ndarray, ranks: np.ndarray, strengths: np.ndarray, cum: np.ndarray, limits: SizeLimits,
    pinned: np.ndarray,
) -> np.ndarray:
    """Weakest-cut-first agglomeration. Returns a keep-mask over ``cuts``.

    The cuts still standing are a doubly linked list; removing cut ``c`` merges the runs either
    side of it, whose size is read off the two cuts now next to it. Each cut is visited once, in
    one sorted order (priorities never change, and runs only grow, so a cut that cannot merge now
    never can): O(m log m), the sort in numpy, O(1) list operations per cut in Python."""
    m = cuts.size
    keep = np.ones(m, dtype=bool)
    if m == 0:
        return keep
    n = cum.size - 1
    # slot k+1 is cut k; slots 0 and m+1 are the text's edges. E[slot]: size before that edge.
    edge_cum = cum[np.concatenate(([0], cuts + 1, [n]))]
    run_size = edge_cum[1:] - edge_cum[:-1]
    goal = limits.goal
    # runs only grow, so a cut whose two initial runs already exceed the goal never merges:
    # leave those out of the Python loop (most cuts, once the signal has proposed good ones)
    may = ~pinned[cuts] & (run_size[:-1] + run_size[1:] <= goal)
    # less trusted (higher rank) first, then weaker score, then left to right (lexsort is stable)
    order = np.lexsort((strengths, -np.asarray(ranks, dtype=np.int64)))
    E = edge_cum.tolist()
    prv = list(range(-1, m + 1))  # prv[slot]: the standing slot to the left
    nxt = list(range(1, m + 3))  # nxt[slot]: the standing slot to the right
    removed: list[int] = []
    for c in (order[may[order]] + 1).tolist():
        p, q = prv[c], nxt[c]
        if E[q] - E[p] <= goal:
            removed.append(c - 1)
            nxt[p] = q
            prv[q] = p
    keep[removed] = False
    if limits.min_size > 0:
        keep = _absorb_small(cuts, keep, strengths, cum, limits, pinned[cuts].tolist())
    return keep


def _absorb_small(
    cuts: np.ndarray, keep: np.ndarray, strengths: np.ndarray, cum: np.ndarray, limits: SizeLimits,
    pin: list[bool],
) -> np.ndarray:
    """Runs under ``min_size`` join the neighbour across the weaker cut, if the result fits, the first such
    run first, again and again. After a merge the scan goes on from the run before it: the runs further
    left did not change, nor did their right neighbours shrink, so none of them could merge now (one
    pass, not one pass per merge: a chapter's thousands of paragraphs)."""
    n = cum.size - 1
    live = np.flatnonzero(keep).tolist()
    edges = [0] + [int(cuts[c]) + 1 for c in live] + [n]
    r = 0
    while r < len(edges) - 1:
        size = int(cum[edges[r + 1]] - cum[edges[r]])
        if size >= limits.min_size:
            r += 1
            continue
        options = []
        if r > 0 and not pin[live[r - 1]]:
            options.append((float(strengths[live[r - 1]]), r - 1, int(cum[edges[r + 1]] - cum[edges[r - 1]])))
        if r < len(live) and not pin[live[r]]:
            options.append((float(strengths[live[r]]), r, int(cum[edges[r + 2]] - cum[edges[r]])))
        options = [o for o in options if o[2] <= limits.max_size]
        if not options:
            r += 1
            continue
        _, k, _ = min(options)
        keep[live[k]] = False
        del live[k]
        del edges[k + 1]
        r = max(r - 1, 0)
    return keep


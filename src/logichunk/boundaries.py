"""Where a boundary is decided: gap scores -> cut points, under size limits.

Every chunker goes through here, so the rules are the same everywhere:

* *choosing* cuts from scores: :func:`peaks` (local maxima with a minimum drop θ, as Meta-Chunking
  uses on perplexity minima), :func:`minima` (its mirror for per-sentence curves), :func:`above`
  (a threshold), :func:`top_k`, and :func:`select_by_depth` (TextTiling depth, cut where a break
  is at least half as deep as the document's deepest: how many cuts a document gets when no size
  limit decides it);
* *the global choice* (the cascade's default): :func:`fit_global` picks the cut set that is optimal
  for the whole piece under its size limit — within-chunk scatter of the atoms' vectors, a price per
  chunk, a fill preference, rewards per gap, forbidden and glued gaps — by exact dynamic programming
  (:func:`optimal_cuts`, its loop in C when a compiler is there: :mod:`logichunk.native`);
  :func:`segment_global` does the same without a size limit (a permutation-rule penalty, or the count
  given), and :func:`segment_evidence` without a size limit on the document's own items: the Bayesian
  evidence of each segment's items (:func:`evidence_costs`) and Utiyama and Isahara's prior on the
  count — what :func:`logichunk.segment` decides topics by;
* *fitting* the pieces to size by the earlier local rule: :func:`fit` cuts at candidate gaps, splits
  anything over the maximum at its best inner gap, then merges neighbours weakest-cut-first up to the
  target (``selection="local"``; the Meta-Chunking and parent-child chunkers use it);
* *splitting a single over-long sentence* at the best clause/word break inside it:
  :func:`inner_breaks` — never inside a character (combining marks, surrogate pairs, ZWJ emoji,
  CRLF stay whole).

Sizes are always measured through a prefix array (see :mod:`logichunk.text.measure`), so every rule
works in characters, bytes or tokens alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import native
from .errors import InputError
from .sparse_rows import ItemBags, SparseRows
from .text.charclass import CJK, WS, class_table, codepoints, pair_cut_allowed
from .types import Bubble


@dataclass(frozen=True, slots=True)
class SizeLimits:
    """``max_size`` is a hard ceiling; pieces are merged up to ``target`` (default: the maximum);
    pieces under ``min_size`` are merged into a neighbour when that fits under the maximum."""

    max_size: int
    target: int | None = None
    min_size: int = 0

    def __post_init__(self) -> None:
        if self.max_size < 1:
            raise InputError(f"max size must be at least 1, got {self.max_size}")
        if self.target is not None and not (1 <= self.target <= self.max_size):
            raise InputError(f"target size must be between 1 and max size ({self.max_size}), got {self.target}")
        if not (0 <= self.min_size <= self.max_size):
            raise InputError(f"min size must be between 0 and max size ({self.max_size}), got {self.min_size}")

    @property
    def goal(self) -> int:
        return self.max_size if self.target is None else self.target


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
    """Runs under ``min_size`` join the neighbour across the weaker cut, if the result fits."""
    n = cum.size - 1
    idx = np.flatnonzero(keep)
    live = idx.tolist()
    changed = True
    while changed and live:
        changed = False
        edges = [0] + [int(cuts[c]) + 1 for c in live] + [n]
        for r in range(len(edges) - 1):
            size = int(cum[edges[r + 1]] - cum[edges[r]])
            if size >= limits.min_size:
                continue
            options = []
            if r > 0 and not pin[live[r - 1]]:
                options.append((float(strengths[live[r - 1]]), r - 1, int(cum[edges[r + 1]] - cum[edges[r - 1]])))
            if r < len(live) and not pin[live[r]]:
                options.append((float(strengths[live[r]]), r, int(cum[edges[r + 2]] - cum[edges[r]])))
            options = [o for o in options if o[2] <= limits.max_size]
            if options:
                _, k, _ = min(options)
                keep[live[k]] = False
                del live[k]
                changed = True
                break
    return keep


# --------------------------------------------------------------------------- inside one sentence

# break quality inside a sentence, best first
_CLAUSE_CODES = np.array([ord(c) for c in "，、,;；:：)）」』”’》】—"], dtype=np.uint32)
_CLAUSE_TABLE = np.zeros(0x10000, dtype=bool)  # every clause mark is in the BMP; U+FFFF is none
_CLAUSE_TABLE[_CLAUSE_CODES] = True


def break_priorities(text: str, start: int, end: int) -> np.ndarray:
    """Priority of cutting at each offset in ``(start, end)`` (array index k = offset start+1+k):
    3 after a clause mark (and its following spaces), 2 at a word start after whitespace,
    1 at a CJK character boundary, 0 anywhere else a character stays whole, -1 never."""
    return break_priorities_many(text, np.array([start]), np.array([end]))[0]


def break_priorities_many(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`break_priorities` of many spans in one pass (a text may hold a hundred over-long
    sentences): ``(pri, o)`` where span ``i``'s priorities are ``pri[o[i] : o[i+1] - 1]``."""
    starts = np.asarray(starts, dtype=np.int64)
    lens = np.maximum(np.asarray(ends, dtype=np.int64) - starts, 0)
    o = np.zeros(lens.size + 1, np.int64)
    np.cumsum(lens, out=o[1:])
    total = int(o[-1])
    if total < 2:
        return np.zeros(max(total - 1, 0), dtype=np.int8), o
    # pairs (k, k+1) of the concatenated spans; those across two spans are never read
    cp = codepoints(text)[ranges(starts, starts + lens)]
    cls = class_table()[cp]
    prev, cur = cls[:-1], cls[1:]
    pri = ((prev | cur) & CJK != 0).astype(np.int8)
    pri[((prev & WS) != 0) & ((cur & WS) == 0)] = 2
    marks = _CLAUSE_TABLE[np.minimum(cp, 0xFFFF)]
    if marks.any():
        is_ws = (cls & WS) != 0
        # directly after a mark, or where the whitespace run that follows a mark ends (the last
        # non-space character before a pair must lie in the pair's own span)
        last_solid = np.maximum.accumulate(np.where(~is_ws, np.arange(total), -1))[:-1]
        span_start = np.repeat(o[:-1], lens)[:-1]
        after = ~is_ws[1:] & (last_solid >= span_start) & marks[np.maximum(last_solid, 0)]
        pri[after] = 3
    pri[~pair_cut_allowed(cp, cls)] = -1
    return pri, o


def inner_breaks(text: str, start: int, end: int, prefix: np.ndarray, max_size: int,
                 pri: np.ndarray | None = None) -> tuple[list[int], int]:
    """Offsets strictly inside ``[start, end)`` that cut one over-long sentence into pieces of at most
    ``max_size`` units, each cut at the best break in the back half of the allowed window.
    ``prefix`` is the span's own prefix (:meth:`~logichunk.text.measure.Meter.span_prefix`:
    ``prefix[i]`` = size of ``text[start:start+i]``), so the searches stay in a small array; the
    whole text's prefix (``len(text) + 1`` entries) is accepted too.

    Returns ``(cuts, worst)`` where ``worst`` is the lowest break priority used (3 clause, 2 word,
    1 CJK, 0 raw character) so callers can say how rough the split was. A single character larger
    than ``max_size`` (a 4-byte emoji at ``max_size=3`` bytes) becomes its own piece. ``pri``: the
    span's :func:`break_priorities`, when the caller computed many at once."""
    if pri is None:
        pri = break_priorities(text, start, end)
    n = end - start
    prefix = _span_prefix(prefix, start, end)
    cuts: list[int] = []
    worst = 3
    pos = 0  # local offsets from here on; pri[k] is the priority of a cut at local offset k+1
    while prefix[n] - prefix[pos] > max_size:
        budget = prefix[pos] + max_size
        hi = int(np.searchsorted(prefix, budget, side="right")) - 1  # furthest offset that fits
        hi = min(hi, n - 1)
        lo = int(np.searchsorted(prefix, prefix[pos] + max(1, max_size // 2), side="left"))
        lo = max(lo, pos + 1)
        choice = -1
        for a in (lo, pos + 1):  # the back half of the window first, then all of it
            window = pri[a - 1 : hi] if hi >= pos + 1 else pri[:0]
            if window.size and window.max() >= 0:
                best = int(window.max())
                choice = a + int(np.flatnonzero(window == best)[-1])
                worst = min(worst, best)
                break
        if choice < 0:
            # nothing fits (one character wider than the limit): take the next allowed offset
            nxt = np.flatnonzero(pri[pos:] >= 0)
            if nxt.size == 0:
                break
            choice = pos + 1 + int(nxt[0])
            worst = 0
        cuts.append(start + choice)
        pos = choice
    return cuts, worst


def _span_prefix(prefix: np.ndarray, start: int, end: int) -> np.ndarray:
    """The span's own prefix, given it or the whole text's (the two sizes differ unless the span is
    the whole text, where they are the same array)."""
    prefix = np.asarray(prefix)
    if prefix.size == end - start + 1:
        return prefix
    return prefix[start : end + 1] - prefix[start]


BREAK_NAMES = {3: "clause", 2: "word", 1: "cjk-char", 0: "char"}


def forced_split_bubble(text: str, start: int, end: int, cuts: list[int], worst: int, prefix: np.ndarray, *,
                        limit: int, unit: str, source: str = "<text>", level: int = 1,
                        attempts: tuple[str, ...] = ("forced",), **context: object) -> Bubble:
    """The record every chunker leaves when one sentence ``[start, end)`` had to be cut inside
    (at ``cuts``, the roughest break being ``worst`` as :func:`inner_breaks` reports it; ``prefix``
    the span's own prefix, as there), so an LLM reviewer can look at it: the same category,
    priority rule and context keys everywhere."""
    prefix = _span_prefix(prefix, start, end)
    edges = [0, *(c - start for c in cuts), end - start]
    return Bubble(
        category="forced_split",
        content=text[start : min(end, start + 120)] + ("…" if end - start > 120 else ""),
        priority="high" if worst <= 1 else "medium",
        context={"source": source, "span": [start, end], "level": level, "limit": limit, "unit": unit,
                 "attempts": list(attempts), "final_method": "forced", "break": BREAK_NAMES[worst],
                 "sizes": [int(prefix[b] - prefix[a]) for a, b in zip(edges, edges[1:], strict=False)], **context},
    )


# --------------------------------------------------------------------------- the global choice
#
# Cuts chosen for the whole piece at once, by dynamic programming over atom gaps, instead of peak
# by peak: the cut set minimises
#
#     sum over chunks of   scatter(chunk) + penalty + fill(chunk)    -    sum over cuts of reward(cut)
#
# where scatter is the within-chunk scatter of the atoms' vectors (kernel change-point detection
# with a linear kernel: ``sum |x_i|^2 - |sum x_i|^2 / m``; splitting a chunk lowers it by
# ``m_a m_b / m |mean_a - mean_b|^2``), ``penalty`` the price of one more chunk, ``fill`` a soft
# preference for chunks near the target size, and ``reward`` what a gap itself says (structure the
# author wrote, a signal's break score); a reward of ``-inf`` forbids a cut. Every chunk fits the
# maximum (an atom alone over it is a chunk of its own: the caller splits it inside).


def gram_band(X: np.ndarray | SparseRows, width: int, lo: np.ndarray | None = None) -> np.ndarray:
    """``P[i, d] = <x_i, x_{i+d}>`` for ``d < width`` (0 past the last row): every inner product a
    window of ``width`` rows needs. Dense rows: one vector pass per ``d``. Sparse rows: one pass per
    step along each column's entries, so the work follows the shared items, not the vocabulary; with
    ``lo`` (each end's earliest start, :func:`earliest_starts`) only the products some window within
    reach needs are computed (the others are 0)."""
    w = max(1, int(width))
    if isinstance(X, SparseRows):
        n = X.n
        if X.row.size == 0 or n == 0:
            return np.zeros((n, w))
        r, c, v = X.row, X.col, X.val  # by column, then row
        lo_l = np.arange(n + 1) - w if lo is None else np.maximum(np.asarray(lo, np.int64), np.arange(n + 1) - w)
        compiled = native.gram_band(w, r, c, v, lo_l, n)
        if compiled is not None:
            return compiled
        return _band_numpy(r, c, v, lo_l, n, w)
    Xd = np.asarray(X, dtype=np.float64)
    n = Xd.shape[0]
    P = np.zeros((n, w))
    if n == 0:
        return P
    P[:, 0] = np.einsum("ij,ij->i", Xd, Xd)
    for d in range(1, min(w, n)):
        P[: n - d, d] = np.einsum("ij,ij->i", Xd[: n - d], Xd[d:])
    return P


def _band_numpy(r: np.ndarray, c: np.ndarray, v: np.ndarray, lo: np.ndarray, n: int, w: int) -> np.ndarray:
    """The sparse :func:`gram_band` in numpy passes (what :func:`logichunk.native.gram_band` does in
    C, in the same order: step ``t`` along every column, then the next step)."""
    r = r.astype(np.int64)  # row * width may pass the index type's range
    keys = [r * w]
    vals = [v * v]
    i = np.arange(r.size)  # entries whose t-th successor may still share their column within reach
    for t in range(1, w):
        i = i[: np.searchsorted(i, r.size - t)]
        j = i + t
        ok = (c[j] == c[i]) & (r[i] >= lo[r[j] + 1])
        i, j = i[ok], j[ok]  # an entry out of reach at step t is out of reach after it
        if i.size == 0:
            break
        keys.append(r[i] * w + (r[j] - r[i]))
        vals.append(v[i] * v[j])
    return np.bincount(np.concatenate(keys), weights=np.concatenate(vals), minlength=n * w).reshape(n, w)


def scatter_costs(X: np.ndarray | SparseRows, width: int, counts: np.ndarray | None = None,
                  sqnorms: np.ndarray | None = None, lo: np.ndarray | None = None) -> np.ndarray:
    """``C[b, k-1]`` = scatter of the atoms ``[b-k, b)`` (rows of ``X``, dense or
    :class:`~logichunk.sparse_rows.SparseRows`) for ``k = 1..width`` (``inf`` where ``k > b``, or
    where ``b - k < lo[b]`` when ``lo`` gives each end its earliest start): one vector pass per
    ``k`` over the ends that still need it, no Python loop over atoms. The squared norm of a window's
    sum grows one atom per pass from the inner products of :func:`gram_band`, so a chunk's cost
    reads only its own rows and does not depend on what precedes it (texts chunked together get the
    costs each gets alone, to the last bit). A row may stand for several atoms glued together: ``X``
    holds their sum, ``counts`` how many they are and ``sqnorms`` the sum of their squared norms (the
    scatter is then exactly that of the atoms)."""
    n = X.n if isinstance(X, SparseRows) else np.asarray(X).shape[0]
    w = max(1, min(int(width), n))
    C = np.full((n + 1, w), np.inf)
    if n == 0:
        return C
    P = gram_band(X, w, lo)
    CP = np.cumsum(P, axis=1)  # CP[s, k-1]: <x_s, x_s + ... + x_{s+k-1}>
    norms = P[:, 0] if sqnorms is None else np.asarray(sqnorms, np.float64)
    cnt = np.ones(n) if counts is None else np.asarray(counts, np.float64)
    ends = np.arange(n)  # the windows ending at atom ends[j]
    reach = ends + 1 if lo is None else ends + 1 - np.asarray(lo, np.int64)[1:]  # widest window per end
    q = np.zeros(n)  # |sum of the window|^2
    sq = np.zeros(n)
    m = np.zeros(n)
    for k in range(1, w + 1):
        keep = reach[ends] >= k
        if not keep.all():
            ends, q, sq, m = ends[keep], q[keep], sq[keep], m[keep]
            if ends.size == 0:
                break
        src = ends - k + 1  # the atom the window gains on the left
        q += 2.0 * CP[src, k - 1] - P[src, 0]
        sq += norms[src]
        m += cnt[src]
        C[ends + 1, k - 1] = np.maximum(sq - q / m, 0.0)
    return C


def earliest_starts(sizes: np.ndarray, max_size: int | None, fixed: np.ndarray | None = None) -> np.ndarray:
    """``lo[b]``: the first atom a chunk ending at atom ``b`` (exclusive) may start at: it fits
    ``max_size`` (one atom always may), and crosses no ``fixed`` gap."""
    sizes = np.asarray(sizes, dtype=np.int64)
    n = sizes.size
    cum = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=cum[1:])
    b = np.arange(n + 1)
    if max_size is None:
        lo = np.zeros(n + 1, np.int64)
    else:
        lo = np.searchsorted(cum, cum - max_size, side="left")
        lo = np.minimum(lo, np.maximum(b - 1, 0))
    if fixed is not None and n > 1:
        f = np.asarray(fixed, dtype=bool)
        # the atom after the last fixed gap before b
        after = np.where(f, np.arange(1, n), 0)
        last = np.zeros(n + 1, np.int64)
        last[2:] = np.maximum.accumulate(after)
        lo = np.maximum(lo, last)
    return lo


#: what a forbidden cut is worth where it cannot be avoided: far below any real reward, finite so the
#: DP still compares the ways around it
_FORBIDDEN = -1e12


def optimal_cuts(cost: np.ndarray, lo: np.ndarray, reward: np.ndarray | None = None,
                 fixed: np.ndarray | None = None, price: float = 0.0) -> np.ndarray:
    """The cut set (sorted gap indices: a cut after atom ``i``) minimising the sum of chunk costs
    ``cost[b, k-1]`` (chunk ``[b-k, b)``, see :func:`scatter_costs`; add penalties before) minus the
    rewards of the gaps cut (``reward[i]`` for the gap after atom ``i``; ``-inf`` forbids it).
    ``lo[b]``: the earliest start of a chunk ending at ``b`` (:func:`earliest_starts`).

    Exact dynamic programming, O(n·w) for chunks of at most ``w`` atoms. A gap whose cut is
    forbidden but unavoidable (a single atom over the limit between two forbidden gaps) is cut
    anyway: the size limit comes first. ``fixed`` gaps (always cut; ``lo`` must not cross them)
    restart the running total, so independent pieces solved together get each its own answer.
    ``price``: added to every chunk's cost as ``cost + price`` would, without the copy of the matrix
    (a count search or a penalty path runs many programmes on one matrix)."""
    n = cost.shape[0] - 1
    if n <= 1:
        return np.zeros(0, np.int64)
    w = cost.shape[1]
    lo, rw_soft, restart = _dp_inputs(lo, w, reward, fixed)
    back = native.dp_back(cost, lo, rw_soft, restart, price)
    if back is None:
        back = (_dp_lists(cost, lo, rw_soft, restart, price) if w <= _LIST_DP_WIDTH
                else _dp_numpy(cost, lo, rw_soft, restart, price))
    return _read_back(back)


def _dp_inputs(lo: np.ndarray, w: int, reward: np.ndarray | None,
               fixed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the DP loop reads besides the costs, for ``n = len(lo) - 1`` atoms and chunks of at most
    ``w``: each end's earliest start, the reward of starting a chunk at each atom (a forbidden cut
    priced at :data:`_FORBIDDEN`), and where a fixed cut restarts the running total."""
    n = len(lo) - 1
    rw = np.zeros(n)  # rw[a]: reward of starting a chunk at atom a (the gap after atom a-1)
    if reward is not None:
        rw[1:] = np.asarray(reward, dtype=np.float64)
    rw_soft = np.where(np.isneginf(rw), _FORBIDDEN, rw)  # forbidden, unless nothing else fits
    restart = np.zeros(n + 1, dtype=bool)
    if fixed is not None:
        restart[1:n] = np.asarray(fixed, dtype=bool)
    return np.maximum(np.asarray(lo, dtype=np.int64), np.arange(n + 1) - w), rw_soft, restart


def _read_back(back: np.ndarray | list[int]) -> np.ndarray:
    """The cuts along the DP's back pointers, from the end (a list walk: an element read from a numpy
    array costs several times more)."""
    ptr = back.tolist() if isinstance(back, np.ndarray) else back
    cuts = []
    b = len(ptr) - 1
    while b > 0:
        a = ptr[b]
        if a > 0:
            cuts.append(a - 1)
        b = a
    return np.asarray(cuts[::-1], dtype=np.int64)


#: up to this many atoms per chunk the DP runs on Python lists (a few list reads per candidate beat
#: numpy's per-call overhead); wider, one numpy argmin per chunk end
_LIST_DP_WIDTH = 32


def _dp_lists(cost: np.ndarray, lo: np.ndarray, rw: np.ndarray, restart: np.ndarray, price: float = 0.0
              ) -> list[int]:
    """``back[b]``: where the best last chunk ending at ``b`` starts (ties: the latest start)."""
    n = cost.shape[0] - 1
    rows = cost.tolist()
    lo_l = lo.tolist()
    rw_l = rw.tolist()
    rs = restart.tolist()
    Fm = [0.0] * (n + 1)  # F[a] - the reward of a cut before atom a
    back = [0] * (n + 1)
    inf = float("inf")
    for b in range(1, n + 1):
        row = rows[b]
        best = inf
        arg = b - 1
        for a in range(lo_l[b], b):
            v = Fm[a] + (row[b - a - 1] + price)
            if v <= best:
                best = v
                arg = a
        back[b] = arg
        if b < n:
            Fm[b] = 0.0 if rs[b] else best - rw_l[b]  # a forced cut: a fresh start, exactly
    return back


def _dp_numpy(cost: np.ndarray, lo: np.ndarray, rw: np.ndarray, restart: np.ndarray, price: float = 0.0
              ) -> np.ndarray:
    """:func:`_dp_lists` with one numpy pass per chunk end (for wide windows)."""
    n = cost.shape[0] - 1
    Fm = np.zeros(n + 1)
    back = np.zeros(n + 1, np.int64)
    _dp_rows_numpy(cost[1:], 1, lo, rw, restart, Fm, back, price)
    return back


def _dp_rows_numpy(rows: np.ndarray, b0: int, lo: np.ndarray, rw: np.ndarray, restart: np.ndarray,
                   Fm: np.ndarray, back: np.ndarray, price: float = 0.0) -> None:
    """The DP's steps for the chunk ends ``b0 ..`` (``rows[b - b0]``: the costs of the chunks ending at
    ``b``), ``Fm`` and ``back`` updated in place (kept between bands of rows)."""
    n = Fm.size - 1
    for b in range(b0, b0 + rows.shape[0]):
        a0 = int(lo[b])
        vals = Fm[a0:b][::-1] + (rows[b - b0, : b - a0] + price)
        j = int(np.argmin(vals))
        back[b] = b - 1 - j
        if b < n:
            Fm[b] = 0.0 if restart[b] else vals[j] - rw[b]


#: shuffles behind :func:`null_penalty` (a fixed seed: the same text always gets the same cuts)
NULL_SHUFFLES = 5
#: atoms :func:`null_penalty` shuffles at most (a fixed-seed sample of a longer text: the price of a
#: cut is a property of the vocabulary's spread, which a sample this size shows; keeps it O(1) per text)
NULL_SAMPLE = 2048


def _prefix_dots(X: np.ndarray | SparseRows, base: np.ndarray | None = None,
                 sq: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per row ``i``: ``|x_i|^2``, ``<x_i, x_0 + ... + x_{i-1}>`` and ``<x_i, T>`` (``T`` the sum of
    all rows), and ``|T|^2`` — what the scatter of every prefix and suffix is made of. Sparse rows
    only: ``base`` (each entry's column start, :func:`_column_starts`) and ``sq`` (the squared norms)
    when the caller knows them already, as :func:`null_penalty` does for shuffles of the same rows."""
    if isinstance(X, SparseRows):
        n = X.n
        r, c, v = X.row, X.col, X.val  # by column, then row
        cs = np.cumsum(v)
        if base is None:
            base = _column_starts(c)
        before = cs - v - (cs[base] - v[base])  # the column's sum over earlier rows
        T = np.bincount(c, weights=v, minlength=X.ncol)
        return (X.sqnorms() if sq is None else sq, np.bincount(r, weights=v * before, minlength=n),
                np.bincount(r, weights=v * T[c], minlength=n), float(T @ T))
    Xd = np.asarray(X, dtype=np.float64)
    S = np.cumsum(Xd, axis=0)
    prev = np.zeros(Xd.shape[0])
    prev[1:] = np.einsum("ij,ij->i", Xd[1:], S[:-1])
    T = S[-1]
    return np.einsum("ij,ij->i", Xd, Xd), prev, Xd @ T, float(T @ T)


def _column_starts(col: np.ndarray) -> np.ndarray:
    """Per entry of sparse rows (sorted by column), the index of its column's first entry."""
    first = np.ones(col.size, bool)
    first[1:] = col[1:] != col[:-1]
    return np.maximum.accumulate(np.where(first, np.arange(col.size), 0))


def best_single_gain(X: np.ndarray | SparseRows) -> float:
    """How much the best single cut lowers the scatter of the whole sequence ``X`` (dense rows or
    :class:`~logichunk.sparse_rows.SparseRows`)."""
    n = X.n if isinstance(X, SparseRows) else np.asarray(X).shape[0]
    if n < 2:
        return 0.0
    return _best_gain(*_prefix_dots(X))


def _best_gain(sq: np.ndarray, prev: np.ndarray, xt: np.ndarray, tt: float) -> float:
    """:func:`best_single_gain` from the rows' :func:`_prefix_dots` (two rows or more)."""
    n = sq.size
    ll = np.cumsum(2.0 * prev + sq)[:-1]  # |L_m|^2, L_m the sum of the first m rows (m = 1..n-1)
    lt = np.cumsum(xt)[:-1]  # <L_m, T>
    m = np.arange(1, n)
    # scatter(all) - scatter(left) - scatter(right) = |L|^2/m + |T-L|^2/(n-m) - |T|^2/n
    gain = ll / m + (tt - 2.0 * lt + ll) / (n - m) - tt / n
    return float(gain.max())


def null_penalty(X: np.ndarray | SparseRows, shuffles: int = NULL_SHUFFLES, seed: int = 0) -> float:
    """The price of one more segment: the largest, over a few shuffles of the same atoms, of the
    scatter the best single cut removes. A permutation rule: a boundary must explain more of the
    text than the best boundary explains in the same sentences in random order, where there is no
    topic to find (a test at level about 1/(shuffles+1)). Scale-free: it moves with the document's
    length and vocabulary. The largest rather than the median of the five was chosen on a named dev
    split (documents 300-600 of Choi, DialSeg711, Weibo and DAct and TIAGE's last 100), never reported:
    ``bench/QUALITY.md``."""
    n = X.n if isinstance(X, SparseRows) else np.asarray(X).shape[0]
    if n < 3:
        return 0.0
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.choice(n, NULL_SAMPLE, replace=False)) if n > NULL_SAMPLE else None
    if isinstance(X, SparseRows):
        S = X if keep is None else X.take(keep)
        # a shuffle of the rows keeps every column's extent and each row's entries in column order:
        # the column starts once, the squared norms reordered (the same sums, bit for bit)
        sq = S.sqnorms()
        orders = np.stack([rng.permutation(S.n) for _ in range(shuffles)])
        dots = native.shuffled_dots(S.row, S.col, S.val, S.n, S.ncol, orders)  # the same sums, no sort
        if dots is not None:
            return float(max(_best_gain(sq[o], p, x, float(t @ t)) for o, p, x, t in zip(orders, *dots, strict=True)))
        base = _column_starts(S.col)
        return float(max(_best_gain(*_prefix_dots(S.permuted(o), base, sq[o])) for o in orders))
    Xd = np.asarray(X, dtype=np.float64)  # dense rows (an embedder's)
    Xd = Xd if keep is None else Xd[keep]
    n = Xd.shape[0]
    return float(max(best_single_gain(Xd[rng.permutation(n)]) for _ in range(shuffles)))


#: atoms a segment may span when no size limit bounds it (keeps the DP O(n·w) on long streams)
MAX_SEGMENT_ATOMS = 512

#: a text's sentences up to which a topic costs :func:`null_penalty` as it is, and how fast the price
#: grows past them (:func:`segment_penalty`); fitted on the dev splits named in ``bench/QUALITY.md``
#: (man pages, READMEs, documents 300-600 of Choi, Weibo, DAct and DialSeg711, TIAGE 300-400), by the
#: mean Pk over them, from a grid of 0.25-1 for the growth and 32-100 for the knee; never on a reported set
SEGMENT_KNEE = 64
SEGMENT_GROWTH = 0.75


def segment_penalty(X: np.ndarray | SparseRows) -> float:
    """The price of one more topic in a text with no size limit: :func:`null_penalty`, times
    ``(n / SEGMENT_KNEE) ** SEGMENT_GROWTH`` for a text of ``n > SEGMENT_KNEE`` sentences. Why it grows:
    the permutation rule prices one boundary against one shuffled text, which has no topics but also no
    drift, and a long text's sections drift in vocabulary inside them — on long documents (manual pages,
    Wikipedia articles) it let through three to four cuts per true one, in sentences that each made a
    real but sub-section shift of vocabulary. Short texts (a dialogue, a news story) keep the rule as is.
    The growth stops at :data:`MAX_SEGMENT_ATOMS` sentences, the most one segment may span: the drift a
    segment can hold is bounded there, and a longer text has more sections, not longer ones.
    (:func:`logichunk.segment` decided topics this way until the evidence of the words replaced it,
    :func:`segment_evidence`; the eval keeps it as its ``global-scatter`` row, for comparison.)"""
    n = X.n if isinstance(X, SparseRows) else np.asarray(X).shape[0]
    return null_penalty(X) * max(1.0, min(n, MAX_SEGMENT_ATOMS) / SEGMENT_KNEE) ** SEGMENT_GROWTH


def segment_global(X: np.ndarray | SparseRows, reward: np.ndarray | None = None, *,
                   penalty: float | None = None, max_atoms: int = MAX_SEGMENT_ATOMS,
                   fixed: np.ndarray | None = None, glue: np.ndarray | None = None,
                   count: int | None = None, select: Callable[[np.ndarray], float] | None = None,
                   max_cuts: int | None = None) -> np.ndarray:
    """Boundaries of a whole document with no size limit (segmentation, a document's topic level,
    the memory review): :func:`fit_global` without limits, on the scatter of ``X`` (dense rows or
    :class:`~logichunk.sparse_rows.SparseRows`) with one ``penalty`` per segment, by default
    :func:`segment_penalty` of the rows themselves (before any gluing: the price of a segment is a
    property of the sentences). ``fixed`` gaps are always cut, ``glue`` gaps never, a segment spans
    at most ``max_atoms`` atoms (glued groups count as one). ``count``: the caller knows how many
    cuts it wants (fixed ones included); the penalty is then the one that gives that many (the
    nearest count the cost can give, fewer on a tie, where it cannot give exactly that many).
    ``select``: of every cut set that is optimal for some price (:func:`penalty_path`; with at most
    ``max_cuts`` cuts), the one ``select`` scores lowest (another model's judgement of how many
    segments, among this cost's placements of them). Returns sorted gap indices."""
    if not isinstance(X, SparseRows):
        X = np.asarray(X, dtype=np.float64)
    n = X.n if isinstance(X, SparseRows) else X.shape[0]
    if n < 2:
        return np.zeros(0, np.int64)
    if count is not None or select is not None:
        return fit_global(np.ones(n, np.int64), X, reward, None, fixed=fixed, glue=glue,
                          count=None if count is None else int(count), select=select, max_cuts=max_cuts,
                          max_atoms=max_atoms)
    beta = segment_penalty(X) if penalty is None else float(penalty)
    # a boundary must explain something: where chance explains nothing (rows without a shared item),
    # a cut that explains nothing either is not made (without this, ties would cut every gap)
    beta = max(beta, _MIN_PENALTY)
    return fit_global(np.ones(n, np.int64), X, reward, None, fixed=fixed, glue=glue, penalty=beta,
                      max_atoms=max_atoms)


#: the Dirichlet prior of a segment's distribution of items: Jeffreys' prior, 1/2 per item (the
#: non-informative prior of a multinomial; fixed a priori, not fitted)
EVIDENCE_PRIOR = 0.5


def _lgamma_table(m: int, shift: float) -> np.ndarray:
    """``lgamma(x + shift)`` for ``x = 0..m`` (numpy has no lgamma; ``m`` is at most a text's items)."""
    return np.fromiter(map(math.lgamma, np.arange(m + 1) + shift), np.float64, count=m + 1)


#: how far a topic's vocabulary reaches: the prior of a segment spreads over the kinds of item within
#: this many items around it (the segment's own kinds where it is longer). Why: over a whole long
#: text the prior would spread over every kind the text has, which grows with its length while a
#: topic's vocabulary does not, so a cut would gain less the longer the text (881 articles laid end to
#: end got 2 topics). Chosen on the dev splits alone (bench/QUALITY.md, "A topic's vocabulary is its
#: neighbourhood's"): the smallest window whose mean Pk on the short dev documents stays within 0.005
#: of the whole text's vocabulary, for the most topics in dev documents laid end to end.
EVIDENCE_WINDOW = 1536


def _kind_priors(bags: ItemBags, alpha: float | np.ndarray) -> np.ndarray:
    """The Dirichlet concentration of each kind of item (``alpha`` broadcast to ``bags.kinds``)."""
    return np.broadcast_to(np.asarray(alpha, dtype=np.float64), (bags.kinds,))


def _evidence_steps(bags: ItemBags, alpha: float | np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """What the evidence of a segment is made of, per kind ``v`` of item: ``log(r + a_v)`` for
    ``r = 0 .. count_v - 1`` (the factor the ``(r+1)``-th occurrence of ``v`` in a segment adds:
    ``lgamma(r + 1 + a) - lgamma(r + a)``), the kinds' runs laid end to end from ``off[v]``; and the
    prior's mass ``sum_v a_v``. ``alpha``: one concentration for every kind, or one per kind."""
    cnt = np.bincount(bags.item, minlength=bags.kinds)
    off = np.zeros(bags.kinds + 1, np.int64)
    np.cumsum(cnt, out=off[1:])
    a = _kind_priors(bags, alpha)
    r = np.arange(bags.tokens, dtype=np.float64) - np.repeat(off[:-1], cnt)
    return off, np.log(r + np.repeat(a, cnt)), float(a.sum())


def _lgamma(x: np.ndarray) -> np.ndarray:
    """``lgamma`` of positive floats, vectorised (numpy has none): Stirling's series to ``z^-9`` at
    ``z >= 8`` (error below 3e-13 there, 1e-12 relative and better everywhere), smaller values raised
    to ``x + 8`` by the recurrence first."""
    x = np.asarray(x, dtype=np.float64)
    small = x < 8.0
    z = np.where(small, x + 8.0, x)
    iz = 1.0 / z
    iz2 = iz * iz
    series = iz * (1 / 12 - iz2 * (1 / 360 - iz2 * (1 / 1260 - iz2 * (1 / 1680 - iz2 / 1188))))
    out = (z - 0.5) * np.log(z) - z + (0.5 * math.log(2.0 * math.pi)) + series
    if small.any():
        y = x[small]
        out[small] -= np.log(y * (y + 1.0) * (y + 2.0) * (y + 3.0)) + np.log((y + 4.0) * (y + 5.0) * (y + 6.0) * (y + 7.0))
    return out


def _window_masses(bags: ItemBags, a: np.ndarray, window: int) -> np.ndarray:
    """``M[s]``: the prior's mass over the kinds in the items ``[s, s + window)``, for every start
    ``s = 0 .. N - window`` (``N > window``). One pass: moving the window by one item drops the kind
    of the item that leaves unless it recurs inside, and adds the kind of the one that enters unless
    it was already there (``D[s] = D[s-1] - 1 + [next[s-1] < s+window-1] + [prev[s+window-1] < s]``,
    weighted by the kinds' concentrations)."""
    item = bags.item
    N = item.size
    order = np.argsort(item, kind="stable")
    same = np.zeros(N, bool)
    same[1:] = item[order[1:]] == item[order[:-1]]
    prev = np.full(N, -1, np.int64)
    prev[order[1:][same[1:]]] = order[:-1][same[1:]]
    nxt = np.full(N, N, np.int64)
    nxt[order[:-1][same[1:]]] = order[1:][same[1:]]
    w = a[item]
    first = float(w[:window][prev[:window] < 0].sum())
    s = np.arange(1, N - window + 1)
    step = w[s - 1] * ((nxt[s - 1] < s + window - 1) - 1.0) + w[s + window - 1] * (prev[s + window - 1] < s)
    out = np.empty(N - window + 1)
    out[0] = first
    np.cumsum(step, out=out[1:])
    out[1:] += first
    return out


def _segment_masses(ns: np.ndarray, pa: np.ndarray, pb: np.ndarray, masses: np.ndarray, window: int,
                    own: Callable[[], np.ndarray]) -> np.ndarray:
    """The prior's mass of segments with items ``[pa, pb)`` (``ns = pb - pa``): over the kinds of the
    ``window`` items around the segment (centred on it, kept inside the text, always holding it), or of
    the segment itself where it is longer than the window (``own()``, asked only then). Either way
    every kind the segment uses is in the prior's support, so each segment's evidence is a proper
    probability."""
    last = masses.size - 1
    s0 = np.clip(np.clip((pa + pb - window) // 2, pb - window, pa), 0, last)
    out = masses[s0]
    if (ns > window).any():
        out = np.where(ns > window, own(), out)
    return out


def evidence_costs(bags: ItemBags, lo: np.ndarray, alpha: float | np.ndarray = EVIDENCE_PRIOR,
                   window: int | None = EVIDENCE_WINDOW) -> np.ndarray:
    """``C[b, k-1]``: minus the log evidence of the items of the atoms ``[b-k, b)`` (``inf`` where
    ``b - k < lo[b]``), laid out as :func:`scatter_costs`' costs. The evidence is the probability of
    the segment's items, in order, when they are drawn from one distribution over the kinds of item in
    use around it that is itself unknown, with a Dirichlet prior (``alpha``: symmetric, or one
    concentration per kind): ``lgamma(A) - lgamma(N + A) + sum_v [lgamma(f_v + a_v) - lgamma(a_v)]``
    for ``N`` items of which ``f_v`` of kind ``v``, ``A = sum_v a_v`` over the kinds in use: the
    text's kinds when it has at most ``window`` items (or ``window`` is None), else those of the
    ``window`` items around the segment (:data:`EVIDENCE_WINDOW`, :func:`_segment_masses`). Why: a
    topic is a stretch of text that one distribution of words explains; the evidence rewards a segment
    whose words repeat, and, integrated over the unknown distribution, charges a segment for the words
    it would need alone — so a cut pays only where the two sides really use different words, with
    nothing to fit. Work: each item once per window start that reaches it, O(items x w); in C
    (:func:`logichunk.native.evidence_sums`) or a numpy loop over starts, the same bits; in a text
    longer than the window the same pass also sums each window's prior mass over its own kinds."""
    n = bags.n
    return evidence_rows(bags, lo, alpha, window)(0, n + 1) if n else np.full((1, 1), np.inf)


def evidence_rows(bags: ItemBags, lo: np.ndarray, alpha: float | np.ndarray = EVIDENCE_PRIOR,
                  window: int | None = EVIDENCE_WINDOW) -> Callable[[int, int], np.ndarray]:
    """:func:`evidence_costs` a band of rows at a time: ``rows(r0, r1)`` gives its rows ``r0 .. r1-1``
    with the bits of the whole matrix's. Why: the whole matrix is ``(n+1) x w`` floats (twice that in
    a text longer than the window), hundreds of megabytes for a text of many short sentences; a band
    needs only the window sums from the starts that reach it, those from the ``w`` starts before the
    band summed again (a share ``w / 2B`` more work for a band of ``B`` rows). For bit-identical rows,
    bands start at multiples of :func:`_row_block`."""
    n = bags.n
    lo = np.asarray(lo, dtype=np.int64)
    w = max(1, int((np.arange(n + 1) - lo).max())) if n else 1
    hi = np.searchsorted(lo, np.arange(n), side="right") - 1  # the furthest end a window from a may reach
    if bags.tokens == 0:  # no items: every segment is as likely as any other
        return lambda r0, r1: _costs_from_sums(np.zeros((r1 - r0, w)), bags, hi, None, r0)
    off, steps, mass = _evidence_steps(bags, alpha)
    local = window is not None and bags.tokens > int(window)
    a = _kind_priors(bags, alpha)
    masses = _window_masses(bags, a, int(window)) if local else None
    if not local:  # one vocabulary: the text's
        TN, lgk = _lgamma_table(bags.tokens, mass), math.lgamma(mass)
    # the numpy loop's ranks of the items in the whole text: once, not once per band
    at_kind = None if native.available() else off[bags.item] + _ranks(bags.item)

    def rows(r0: int, r1: int) -> np.ndarray:
        a0 = int(lo[max(r0, 1)]) if r0 < r1 else 0  # the first start that reaches the band
        a1 = max(a0, min(n, r1 - 1))
        band_hi = np.minimum(hi, r1 - 1)
        S, own = _window_sums(bags, band_hi, off, steps, w, a if local else None, (a0, a1), (r0, r1), at_kind)
        if not local:
            return _costs_from_sums(S, bags, hi, lambda ns, pa, pb, sub: TN[ns] - lgk, r0)
        assert own is not None and masses is not None

        def norm(ns: np.ndarray, pa: np.ndarray, pb: np.ndarray, sub: slice) -> np.ndarray:
            m = _segment_masses(ns, pa, pb, masses, int(window), lambda: own[sub])
            m = np.where(m > 0, m, 1.0)  # 0 only in cells beyond a start's reach (their cost is inf)
            return _lgamma(ns + m) - _lgamma(m)

        return _costs_from_sums(S, bags, hi, norm, r0)

    return rows


def _window_sums(bags: ItemBags, hi: np.ndarray, off: np.ndarray, steps: np.ndarray, w: int,
                 first: np.ndarray | None, starts: tuple[int, int], rows: tuple[int, int],
                 at_kind: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`_evidence_sums` in C where it is built, else in numpy (the same bits)."""
    got = native.evidence_sums(bags.ptr, bags.item, hi, off, steps, w, first, starts, rows)
    if got is None:
        return _evidence_sums(bags.ptr, bags.item, hi, off, steps, w, first, starts, rows, at_kind)
    return got


def _row_block(w: int) -> int:
    """Rows per block when window sums become costs (about 32K cells: cache-sized temporaries)."""
    return max(1, (1 << 15) // w)


def _costs_from_sums(C: np.ndarray, bags: ItemBags, hi: np.ndarray,
                     norm: Callable[[np.ndarray, np.ndarray, np.ndarray, slice], np.ndarray] | None,
                     r0: int = 0) -> np.ndarray:
    """The window sums ``C`` (the matrix's rows ``r0 ..``) become costs in place: ``norm(ns, pa, pb,
    sub)`` (``lgamma(N + A) - lgamma(A)`` of the segments ending at the rows ``sub`` of ``C``, one
    column per length) less the sums, ``inf`` beyond a start's reach. ``norm`` None: no items, every
    cost 0. Blocks of whole rows, at multiples of :func:`_row_block` of the whole matrix: the matrix is
    read and written in the order it lies in memory, and a band's rows get the bits of the whole's."""
    n, w = bags.n, C.shape[1]
    k = np.arange(1, w + 1)
    step = _row_block(w)
    for b0 in range(r0, r0 + C.shape[0], step):
        sub = slice(b0 - r0, min(r0 + C.shape[0], b0 + step) - r0)
        b = np.arange(b0, b0 + sub.stop - sub.start)[:, None]
        a = b - k  # each cell's first atom
        ok = a >= 0
        a = np.maximum(a, 0)
        ok &= hi[np.minimum(a, n - 1)] >= b
        pa, pb = bags.ptr[a], bags.ptr[b]
        block = C[sub]
        val = -block if norm is None else norm(pb - pa, pa, pb, sub) - block
        C[sub] = np.where(ok, val, np.inf)
    return C


def _evidence_sums(ptr: np.ndarray, item: np.ndarray, hi: np.ndarray, off: np.ndarray, steps: np.ndarray,
                   w: int, first: np.ndarray | None = None, starts: tuple[int, int] | None = None,
                   rows: tuple[int, int] | None = None, at_kind: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """``S[b - r0, k-1]``: the sum over the items of the atoms ``[b-k, b)``, in order, of
    ``steps[off[v] + r]``, ``v`` the item's kind and ``r`` how often it came before in that window (for
    ``b <= hi[b-k]``; other cells 0); and, given ``first`` (a weight per kind), ``F``: the same
    windows' sums of ``first[v]`` over their items with ``r == 0`` (their kinds). ``starts`` (``a0,
    a1``): only the windows from those starts; ``rows`` (``r0, r1``): only those ends; ``at_kind``:
    ``off[item] + _ranks(item)``, when the caller has it (a band at a time). One numpy pass
    per start: an item's rank in its window is its rank in the whole text less the occurrences of its
    kind before the window (kept up to date as the start moves, no sort per start), then a running sum
    (numpy's cumulative sum adds in order, as the C loop does)."""
    n = hi.size
    a0, a1 = (0, n) if starts is None else starts
    r0, r1 = (0, n + 1) if rows is None else rows
    S = np.zeros((r1 - r0, w))
    F = None if first is None else np.zeros((r1 - r0, w))
    if at_kind is None:  # where each item's step would be, were the window the whole text
        at_kind = off[item] + _ranks(item)
    # occurrences of each kind before the window's start
    before = np.bincount(item[: int(ptr[a0])], minlength=off.size - 1).astype(np.int64)
    for a in range(a0, a1):
        e0, e1, b = int(ptr[a]), int(ptr[a + 1]), int(hi[a])
        ids = item[e0 : int(ptr[b])]
        if ids.size:
            at = at_kind[e0 : int(ptr[b])] - before[ids]
            run = np.cumsum(steps[at])
            k = np.arange(max(1, r0 - a), b - a + 1)  # the windows whose end is a stored row
            last = ptr[a + k] - e0 - 1  # each window's last item
            S[a + k - r0, k - 1] = np.where(last >= 0, run[np.maximum(last, 0)], 0.0)
            if F is not None:
                runf = np.cumsum(np.where(at == off[ids], first[ids], 0.0))
                F[a + k - r0, k - 1] = np.where(last >= 0, runf[np.maximum(last, 0)], 0.0)
        if e1 > e0:
            np.add.at(before, item[e0:e1], 1)
    return S, F


def _ranks(keys: np.ndarray) -> np.ndarray:
    """For each entry, how many entries before it have the same key."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    first = np.ones(sk.size, bool)
    np.not_equal(sk[1:], sk[:-1], out=first[1:])
    pos = np.arange(sk.size)
    r = np.empty(sk.size, np.int64)
    r[order] = pos - np.maximum.accumulate(np.where(first, pos, 0))
    return r


def evidence_penalty(bags: ItemBags) -> float:
    """The price of one more segment under :func:`evidence_costs`: ``log N`` for a text of ``N``
    items — Utiyama and Isahara's prior (2001), under which a segmentation into ``m`` segments has
    probability ``N^-m``: a statement about segmentations, made before any data is seen."""
    return math.log(max(bags.tokens, 2))


def evidence_scorer(bags: ItemBags, alpha: float | np.ndarray = EVIDENCE_PRIOR,
                    window: int | None = EVIDENCE_WINDOW) -> Callable[[np.ndarray], float]:
    """What :func:`segment_evidence` minimises, as a function of any cut set (gap indices over the
    bags): minus the log evidence of each segment's items (:func:`evidence_costs`' formula, counted
    directly, no window limit) plus :func:`evidence_penalty` per segment. Why: to let the words judge
    cut sets another cost placed (an embedder's, :func:`segment_global` ``select``); the per-kind
    tables are made once for all the sets judged."""
    n, price = bags.n, evidence_penalty(bags)
    if bags.tokens == 0:
        return lambda cuts: price * (len(cuts) + 1)
    off, steps, mass = _evidence_steps(bags, alpha)
    base = off[bags.item]  # where each item's kind starts among the steps
    local = window is not None and bags.tokens > int(window)
    a = _kind_priors(bags, alpha)
    masses = _window_masses(bags, a, int(window)) if local else None

    def value(cuts: np.ndarray) -> float:
        edges = np.concatenate(([0], np.asarray(cuts, np.int64) + 1, [n]))
        pa, pb = bags.ptr[edges[:-1]], bags.ptr[edges[1:]]
        ns = pb - pa
        seg_of = np.repeat(np.arange(ns.size, dtype=np.int64), ns)
        rank = _ranks(seg_of * np.int64(bags.kinds) + bags.item)
        words = float(steps[base + rank].sum())
        if masses is None:
            m = np.full(ns.size, mass)
        else:  # each segment's own kinds: the concentrations of its items' first occurrences
            m = _segment_masses(ns, pa, pb, masses, int(window),
                                lambda: np.bincount(seg_of, weights=np.where(rank == 0, a[bags.item], 0.0),
                                                    minlength=ns.size))
        norm = sum(math.lgamma(mm) - math.lgamma(int(k) + mm) for k, mm in zip(ns.tolist(), m.tolist(), strict=True))
        return price * ns.size - (words + norm)

    return value


def segment_evidence(bags: ItemBags, reward: np.ndarray | None = None, *, penalty: float | None = None,
                     max_atoms: int = MAX_SEGMENT_ATOMS, fixed: np.ndarray | None = None,
                     glue: np.ndarray | None = None, count: int | None = None,
                     alpha: float | np.ndarray = EVIDENCE_PRIOR, window: int | None = EVIDENCE_WINDOW) -> np.ndarray:
    """Boundaries of a whole document with no size limit, on the items of its atoms (``bags``): the
    cut set of least total :func:`evidence_costs` plus ``penalty`` per segment (default
    :func:`evidence_penalty`) less the ``reward`` of the gaps cut; ``fixed``, ``glue``, ``max_atoms``
    and ``count`` as in :func:`segment_global`; ``alpha`` the Dirichlet prior and ``window`` the reach
    of a topic's vocabulary (:func:`evidence_costs`). Returns sorted gap indices. A text of more atoms
    than a band (:func:`_evidence_band`) is decided a band of rows at a time, in the memory of one band
    (the same cuts); a count search keeps the whole matrix (it runs many programmes on it)."""
    n = bags.n
    if n < 2:
        return np.zeros(0, np.int64)
    beta = evidence_penalty(bags) if penalty is None else float(penalty)
    if glue is not None and np.any(glue):
        keep, _ = _glued_groups(glue, fixed, n)
        first = np.concatenate(([0], keep + 1))
        sub = segment_evidence(bags.merged(first), None if reward is None else np.asarray(reward)[keep],
                               penalty=beta, max_atoms=max_atoms,
                               fixed=None if fixed is None else np.asarray(fixed, dtype=bool)[keep], count=count,
                               alpha=alpha, window=window)
        return keep[sub].astype(np.int64)
    lo = earliest_starts(np.ones(n, np.int64), None, fixed)
    lo = np.maximum(lo, np.arange(n + 1) - max(1, int(max_atoms)))
    beta = max(beta, _MIN_PENALTY)
    w = max(1, int((np.arange(n + 1) - lo).max()))
    band = _evidence_band(w)
    if count is None and n + 1 > band:  # a long text: the matrix a band of rows at a time
        return _banded_cuts(evidence_rows(bags, lo, alpha, window), lo, w, reward, fixed, beta, band)
    C = evidence_costs(bags, lo, alpha, window)
    if count is not None:
        return _cuts_for_count(C, lo, reward, fixed, int(count))
    return optimal_cuts(C, lo, reward, fixed, beta)


def _evidence_band(w: int) -> int:
    """Rows of the evidence costs made at a time in a long text: about 4M cells (32 MB a matrix), a
    multiple of :func:`_row_block` (so a band's rows have the bits of the whole matrix's)."""
    step = _row_block(w)
    return max(step, ((1 << 22) // w) // step * step)


def _banded_cuts(rows: Callable[[int, int], np.ndarray], lo: np.ndarray, w: int, reward: np.ndarray | None,
                 fixed: np.ndarray | None, price: float, band: int) -> np.ndarray:
    """:func:`optimal_cuts` on the costs ``rows(r0, r1)`` plus ``price`` per chunk, a band of rows at a
    time (the DP's running totals kept between bands): the same cuts as on the whole matrix, in the
    memory of one band."""
    n = len(lo) - 1
    lo, rw_soft, restart = _dp_inputs(lo, w, reward, fixed)
    Fm = np.zeros(n + 1)
    back = np.zeros(n + 1, np.int64)
    for r0 in range(0, n + 1, band):
        C = rows(r0, min(n + 1, r0 + band))
        b0 = max(r0, 1)
        if not native.dp_rows(C[b0 - r0 :], b0, lo, rw_soft, restart, Fm, back, price):
            _dp_rows_numpy(C[b0 - r0 :], b0, lo, rw_soft, restart, Fm, back, price)
    return _read_back(back)


def _fewest_cuts_price(C: np.ndarray, reward: np.ndarray | None) -> float:
    """A price per segment no cut can pay for (more than any segment's cost and every reward): the
    penalised programme then makes the fewest cuts it may."""
    finite = C[np.isfinite(C)]
    hi = 2.0 * float(np.abs(finite).max()) + 1.0 if finite.size else 1.0
    if reward is not None:
        r = np.asarray(reward, dtype=np.float64)
        hi += 2.0 * float(np.abs(r[np.isfinite(r)]).sum())
    return hi


def _cuts_for_count(C: np.ndarray, lo: np.ndarray, reward: np.ndarray | None, fixed: np.ndarray | None,
                    count: int) -> np.ndarray:
    """The penalised programme's cuts whose number is nearest ``count``, the penalty found by bisection
    (the number of cuts never grows with the penalty). ``C``: the chunk costs without any penalty."""
    hi = _fewest_cuts_price(C, reward)
    best = optimal_cuts(C, lo, reward, fixed, hi)
    lo_b = 0.0
    for _ in range(60):
        if best.size == count or hi - lo_b <= 1e-12 * max(hi, 1.0):
            break
        mid = 0.5 * (lo_b + hi)
        cuts = optimal_cuts(C, lo, reward, fixed, mid)
        if cuts.size > count:
            lo_b = mid
        else:
            hi = mid
        gap, best_gap = abs(cuts.size - count), abs(best.size - count)
        if gap < best_gap or (gap == best_gap and cuts.size < best.size):
            best = cuts
    return best


def _path_value(C: np.ndarray, cuts: np.ndarray, reward: np.ndarray | None) -> tuple[float, int]:
    """The bare cost of a cut set (its segments' costs ``C[b, k-1]`` less the rewards of its cuts) and
    its number of segments: the line ``value + price * segments`` it follows as the price moves."""
    edges = np.concatenate(([0], np.asarray(cuts, np.int64) + 1, [C.shape[0] - 1]))
    value = float(C[edges[1:], edges[1:] - edges[:-1] - 1].sum()) - _cut_rewards(cuts, reward)
    return value, int(edges.size - 1)


def _cut_rewards(cuts: np.ndarray, reward: np.ndarray | None) -> float:
    """The rewards of the gaps ``cuts`` cuts, a forbidden one counted at :data:`_FORBIDDEN` (as the DP
    counts it)."""
    if reward is None or not len(cuts):
        return 0.0
    r = np.asarray(reward, dtype=np.float64)[np.asarray(cuts, dtype=np.int64)]
    return float(np.where(np.isneginf(r), _FORBIDDEN, r).sum())


def penalty_path(C: np.ndarray, lo: np.ndarray, reward: np.ndarray | None = None,
                 fixed: np.ndarray | None = None, max_cuts: int | None = None,
                 budget: int | None = None) -> list[np.ndarray] | None:
    """Every cut set that the penalised programme (:func:`optimal_cuts` on ``C`` plus one price per
    segment) gives for some price from :data:`_MIN_PENALTY` up, fewest cuts first: CROPS (Haynes,
    Eckley and Fearnhead, 2017) — solve at the price where the optimal lines of two known sets cross;
    a set with a count between theirs lies on the path, else none does. One programme per set on the
    path and one per gap between two, no grid of prices to choose. ``max_cuts``: only the sets with at
    most that many cuts (the path is not explored beyond them: on a long text the whole path is
    thousands of programmes). ``budget``: at most that many programmes, else None (the path is longer
    than that)."""
    got = _crops(C, lo, reward, fixed, _MIN_PENALTY, _fewest_cuts_price(C, reward), max_cuts, budget)
    return None if got[1] else [cuts for cuts, _ in got[0]]


def _crops(C: np.ndarray, lo: np.ndarray, reward: np.ndarray | None, fixed: np.ndarray | None,
           beta_lo: float, beta_hi: float, max_cuts: int | None, budget: int | None,
           breadth_first: bool = False) -> tuple[list[tuple[np.ndarray, float]], bool]:
    """:func:`penalty_path` between the prices ``beta_lo`` and ``beta_hi``: the sets optimal for some
    price between them, fewest cuts first, each with a price it is optimal at; and whether the
    exploration stopped at ``budget`` programmes between the two ends before the path was complete (the
    sets found so far: spread over the whole range when ``breadth_first``)."""
    cap = np.inf if max_cuts is None else int(max_cuts) + 1  # in segments
    solves = 0

    def solve(beta: float) -> tuple[np.ndarray, float, int, float]:
        nonlocal solves
        solves += 1
        cuts = optimal_cuts(C, lo, reward, fixed, beta)
        return (cuts, *_path_value(C, cuts, reward), beta)

    found = {}
    todo = [(solve(beta_lo), solve(beta_hi))]
    for a, b in todo:
        found[a[2]], found[b[2]] = a, b
    stopped = False
    while todo:
        if budget is not None and solves - 2 >= budget:  # (the two ends are not counted)
            stopped = True
            break
        a, b = todo.pop(0) if breadth_first else todo.pop()  # a: more segments (a lower price), b: fewer
        if a[2] - b[2] <= 1 or b[2] >= cap:
            continue
        beta = (b[1] - a[1]) / (a[2] - b[2])  # where the two lines cross
        mid = solve(max(beta, _MIN_PENALTY))
        if mid[2] in found or mid[1] + beta * mid[2] >= a[1] + beta * a[2] - 1e-9 * max(1.0, abs(a[1])):
            continue  # nothing on the path between a and b
        found[mid[2]] = mid
        todo += [(a, mid), (mid, b)]
    return [(found[k][0], found[k][3]) for k in sorted(found) if k <= cap], stopped


#: programmes the exact penalty path may take before a long text's path is searched instead
#: (:func:`_select_on_path`); also the programmes of each round of that search. A bound on work, fixed
#: a priori: the dev documents' paths stay under it (the choice is exact on all of them)
PATH_BUDGET = 200


def _select_on_path(C: np.ndarray, lo: np.ndarray, reward: np.ndarray | None, fixed: np.ndarray | None,
                    max_cuts: int | None, select: Callable[[np.ndarray], float]) -> np.ndarray:
    """The set on the penalty path (:func:`penalty_path`, up to ``max_cuts``) that ``select`` scores
    lowest, fewest cuts first on a tie. Exact while the path takes at most :data:`PATH_BUDGET`
    programmes. A longer path (a long text: hundreds of sets, each a programme over the whole text) is
    searched instead, in rounds: the path explored breadth first (sets spread over its whole range) up
    to the budget, then between the best set so far and each of its neighbours, until no set of the
    path lies between the best and either neighbour — work linear in the text, not quadratic, and the
    exact choice wherever ``select`` falls and rises once along the path (on long texts it does: one
    valley around the count the words find)."""
    sets, stopped = _crops(C, lo, reward, fixed, _MIN_PENALTY, _fewest_cuts_price(C, reward), max_cuts,
                           PATH_BUDGET, breadth_first=True)
    if not stopped:
        return min((cuts for cuts, _ in sets), key=select)
    scored: dict[int, tuple[float, np.ndarray, float]] = {}  # count -> (score, cuts, a price it is optimal at)
    adjacent: set[tuple[int, int]] = set()  # counts with no set of the path between them
    while True:  # each round finds sets between the best and a neighbour, or proves there are none
        for cuts, beta in sets:
            scored.setdefault(cuts.size, (select(cuts), cuts, beta))
        counts = sorted(scored)
        best = min(counts, key=lambda k: (scored[k][0], k))
        i = counts.index(best)
        sides = [(counts[j], best) if j < i else (best, counts[j]) for j in (i - 1, i + 1) if 0 <= j < len(counts)]
        sides = [side for side in sides if side not in adjacent]
        if not sides:
            return scored[best][1]
        sets = []
        for few, many in sides:  # more cuts: a lower price
            got, stopped = _crops(C, lo, reward, fixed, scored[many][2], scored[few][2], max_cuts, PATH_BUDGET,
                                  breadth_first=True)
            sets += got
            if not stopped:
                inside = sorted({few, many, *(c.size for c, _ in got)})
                adjacent.update(zip(inside[:-1], inside[1:], strict=False))


#: the least price of a segment without a size limit: far below any real gain, above rounding noise
_MIN_PENALTY = 1e-9


#: the soft preference for filling chunks towards the target: an empty chunk would cost this much
#: more than a full one, in units of one sentence's scatter (a fixed choice, not tuned)
FILL_WEIGHT = 1.0


def _glued_groups(glue: np.ndarray, fixed: np.ndarray | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` atoms with ``glue`` gaps (never cut; a ``fixed`` one stays a cut) as groups: the gaps that
    remain (group ``k`` ends after atom ``keep[k]``) and each atom's group."""
    g = np.asarray(glue, dtype=bool)
    if fixed is not None:
        g = g & ~np.asarray(fixed, dtype=bool)
    keep = np.flatnonzero(~g)
    grp = np.zeros(n, np.int64)
    np.cumsum(~g, out=grp[1:])
    return keep, grp


def fit_global(sizes: np.ndarray, X: np.ndarray | SparseRows, reward: np.ndarray | None,
               limits: SizeLimits | None, *, fixed: np.ndarray | None = None,
               penalty: float | np.ndarray | None = None, glue: np.ndarray | None = None,
               atoms: np.ndarray | None = None, max_atoms: int = MAX_SEGMENT_ATOMS, count: int | None = None,
               select: Callable[[np.ndarray], float] | None = None, max_cuts: int | None = None,
               _counts: np.ndarray | None = None, _sqnorms: np.ndarray | None = None) -> np.ndarray:
    """The size-limited global choice: sorted cut gap indices over ``n`` atoms (sizes ``sizes``,
    vectors ``X``, dense rows or :class:`~logichunk.sparse_rows.SparseRows`) such that every chunk fits ``limits.max_size`` (an atom alone over it stands alone:
    the caller splits it inside), ``fixed`` gaps are always cut, and the objective of this section
    is minimal with one ``penalty`` per chunk (default :func:`null_penalty`; an array gives each
    atom's, charged to the chunk it ends: texts chunked together keep their own) and a fill cost
    ``FILL_WEIGHT * (1 - size/target)^2`` for chunks under the target. O(n·w), w = the most atoms
    that fit one chunk. ``glue`` gaps are never cut, even where the chunk then exceeds the maximum
    (a heading and the over-long sentence it titles, at a level that keeps such a sentence whole).
    ``atoms``: which rows of ``X`` are the atoms, in order (sorted and distinct; default: all rows):
    a caller that cuts part of a text passes the whole text's rows and these, and glued atoms are
    summed straight from them, without a copy of the selected rows first. ``limits=None``: no size
    limit and no fill term (:func:`segment_global`); a chunk then spans at most ``max_atoms`` atoms,
    which keeps the programme O(n·max_atoms); ``count`` (only without limits): the penalty is found
    that gives that many cuts; ``select`` and ``max_cuts`` (only without limits): see :func:`segment_global`."""
    sizes = np.asarray(sizes, dtype=np.int64)
    n = sizes.size
    if n <= 1:
        return np.zeros(0, np.int64)
    if glue is not None and np.any(glue):
        keep, grp = _glued_groups(glue, fixed, n)
        m = int(grp[-1]) + 1
        Xg: np.ndarray | SparseRows
        if isinstance(X, SparseRows):
            if atoms is None:
                Xg, rowsq = X.group(grp, m), X.sqnorms()
            else:  # rows that are no atom are left out of the groups (a row's norm: the same sum either way)
                of_row = np.full(X.n, -1, np.int64)
                of_row[atoms] = grp
                Xg, rowsq = X.group(of_row, m), X.sqnorms()[atoms]
        else:
            Xa = np.asarray(X, dtype=np.float64)
            if atoms is not None:
                Xa = Xa[atoms]
            Xg = np.add.reduceat(Xa, np.flatnonzero(np.diff(grp, prepend=-1)), axis=0)  # groups are runs
            rowsq = np.einsum("ij,ij->i", Xa, Xa)
        counts = np.bincount(grp, minlength=m).astype(np.float64)
        sqn = np.bincount(grp, weights=rowsq, minlength=m)
        last = np.concatenate((keep, [n - 1]))  # the last atom of each group
        pen = penalty if penalty is None or np.ndim(penalty) == 0 else np.asarray(penalty)[last]
        sub = fit_global(np.bincount(grp, weights=sizes, minlength=m).astype(np.int64), Xg,
                         None if reward is None else np.asarray(reward)[keep], limits,
                         fixed=None if fixed is None else np.asarray(fixed, dtype=bool)[keep], penalty=pen,
                         max_atoms=max_atoms, count=count, _counts=counts, _sqnorms=sqn,
                         select=None if select is None else (lambda sub: select(keep[sub])), max_cuts=max_cuts)
        return keep[sub].astype(np.int64)
    if atoms is not None:
        X = X.take(atoms) if isinstance(X, SparseRows) else np.asarray(X)[atoms]
    lo = earliest_starts(sizes, None if limits is None else limits.max_size, fixed)
    if limits is None:
        lo = np.maximum(lo, np.arange(n + 1) - max(1, int(max_atoms)))
    w = int((np.arange(n + 1) - lo).max())
    if limits is None and count is not None:  # the penalty that gives that many cuts, found on the bare scatter
        return _cuts_for_count(scatter_costs(X, w, _counts, _sqnorms, lo), lo, reward, fixed, count)
    if limits is None and select is not None:  # the best of the cut sets optimal for some price, by select
        return _select_on_path(scatter_costs(X, w, _counts, _sqnorms, lo), lo, reward, fixed, max_cuts, select)
    beta = np.broadcast_to(np.asarray(null_penalty(X) if penalty is None else penalty, dtype=np.float64), (n,))
    if limits is None:  # segmentation: the scatter and one price per segment, no fill term
        C = scatter_costs(X, w, _counts, _sqnorms, lo)
        for k in range(1, C.shape[1] + 1):
            C[k:, k - 1] += beta[k - 1 :]
        return optimal_cuts(C, lo, reward, fixed)
    cum = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=cum[1:])
    goal = float(limits.goal)
    if native.available():  # the passes below, fused: no (n+1) x w cost matrix
        w = max(1, min(w, n))
        P = gram_band(X, w, lo)
        norms = P[:, 0] if _sqnorms is None else _sqnorms
        counts = np.ones(n) if _counts is None else _counts
        lo_w, rw, restart = _dp_inputs(lo, w, reward, fixed)
        cuts = native.fit_cuts(P, norms, counts, lo_w, cum, beta, goal, FILL_WEIGHT, rw, restart)
        if cuts is not None:
            return cuts
    C = scatter_costs(X, w, _counts, _sqnorms, lo)
    for k in range(1, C.shape[1] + 1):
        short = 1.0 - np.minimum((cum[k:] - cum[:-k]) / goal, 1.0)
        C[k:, k - 1] += beta[k - 1 :] + FILL_WEIGHT * short * short
    return optimal_cuts(C, lo, reward, fixed)


def objective(cuts: np.ndarray, sizes: np.ndarray, X: np.ndarray | SparseRows, reward: np.ndarray | None, limits: SizeLimits,
              penalty: float) -> float:
    """The value :func:`fit_global` minimises, for any cut set (to compare two choices)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    X = X.dense() if isinstance(X, SparseRows) else np.asarray(X, dtype=np.float64)
    edges = np.concatenate(([0], np.asarray(cuts, dtype=np.int64) + 1, [sizes.size]))
    total = 0.0
    for a, b in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
        seg = X[a:b]
        s = seg.sum(0)
        total += float(np.einsum("ij,ij->", seg, seg) - s @ s / (b - a))
        short = 1.0 - min(float(sizes[a:b].sum()) / limits.goal, 1.0)
        total += penalty + FILL_WEIGHT * short * short
    return total - _cut_rewards(cuts, reward)

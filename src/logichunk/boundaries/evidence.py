"""The Bayesian evidence of a segment's items as its cost, and the segmentation on it with no size
limit.

:func:`evidence_costs` (a band of rows at a time: :func:`evidence_rows`) is minus the log probability
of a segment's items drawn from one unknown distribution with a Dirichlet prior
(:data:`EVIDENCE_PRIOR`) over the kinds of item in use around it (:data:`EVIDENCE_WINDOW`);
:func:`evidence_penalty` is Utiyama and Isahara's prior on the count; :func:`segment_evidence` decides
a whole document's boundaries by them — what :func:`logichunk.segment` decides topics by — and
:func:`evidence_scorer` lets the words judge cut sets another cost placed.

Why apart: the second cost the programme (:mod:`~logichunk.boundaries.dp`) runs on, on a document's own
items (:class:`~logichunk.sparse_rows.ItemBags`) rather than vectors, with its own window sums (in C:
:func:`logichunk.native.evidence_sums`, or a numpy loop, the same bits).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .. import native
from ..sparse_rows import ItemBags
from .dp import (
    _MIN_PENALTY,
    MAX_SEGMENT_ATOMS,
    _banded_cuts,
    _glued_groups,
    earliest_starts,
    optimal_cuts,
    widest,
)
from .path import _cuts_for_count

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


def local_vocabulary(bags: ItemBags, window: int | None) -> bool:
    """Whether a segment's prior spreads over the kinds around it (a text of more items than
    ``window``) rather than over the whole text's kinds (``window`` None, or a shorter text)."""
    return window is not None and bags.tokens > int(window)


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
    w = widest(lo)
    hi = np.searchsorted(lo, np.arange(n), side="right") - 1  # the furthest end a window from a may reach
    if bags.tokens == 0:  # no items: every segment is as likely as any other
        return lambda r0, r1: _costs_from_sums(np.zeros((r1 - r0, w)), bags, hi, None, r0)
    off, steps, mass = _evidence_steps(bags, alpha)
    local = local_vocabulary(bags, window)
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
    local = local_vocabulary(bags, window)
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
    w = widest(lo)
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


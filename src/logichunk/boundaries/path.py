"""How many cuts, where no size limit says: the price per segment that gives a count of cuts
(``_cuts_for_count``, by bisection), and every cut set the penalised programme gives for some price
(:func:`penalty_path`, CROPS), with the choice among them by another judge (``_select_on_path``,
searched past :data:`PATH_BUDGET` programmes).

Why apart: it runs the programme (:mod:`~logichunk.boundaries.dp`) on any cost matrix, the scatter of
vectors (:mod:`~logichunk.boundaries.sized`) and the evidence of items
(:mod:`~logichunk.boundaries.evidence`) alike.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .dp import _MIN_PENALTY, _dp_inputs, optimal_cuts, soft_rewards


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
    """The best ``count`` cuts: the penalised programme's, the penalty found by bisection (the number of
    cuts never grows with the penalty); where no penalty gives that many (a count off the cost's convex
    hull: asked for 3 topics of a six-line transcript, the penalty gave 2 or 4), the programme over exactly
    that many segments (:func:`_cuts_exactly`). Fewer only where the text has too few places to cut (fixed
    and glued gaps: then the nearest count there is). ``C``: the chunk costs without any penalty."""
    # more cuts than gaps asked: every gap cut, the most there are (the search for a count no programme can give
    # ended at the cost's own count: 4 topics asked of three sentences gave 1, where 3 gave 3)
    count = min(count, C.shape[0] - 2)
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
    if best.size != count:  # (a penalty that gives it is the exact programme's answer too: asked only where none does)
        exact = _cuts_exactly(C, lo, reward, fixed, count)
        if exact is not None:
            return exact
    return best


#: the most cells (segments x chunk ends x widths) the exact-count programme reads: past it (thousands of topics
#: asked of a long text) the penalty's nearest count stands (a bound on time and memory, not a tuned number)
EXACT_COUNT_CELLS = 1 << 28


def _cuts_exactly(C: np.ndarray, lo: np.ndarray, reward: np.ndarray | None, fixed: np.ndarray | None,
                  count: int) -> np.ndarray | None:
    """The cut set of exactly ``count`` cuts minimising the chunk costs ``C`` less the rewards of the gaps
    cut, by a programme over the number of segments (O(count·n·w)); None when no such set exists (fewer open
    gaps than that) or it would read more than :data:`EXACT_COUNT_CELLS` cells. Chunks never cross a fixed
    gap (``lo``), so each fixed cut is one of the ``count``; ties take the latest start, as :func:`optimal_cuts`
    does."""
    n = C.shape[0] - 1
    w = C.shape[1]
    segs = count + 1
    if count < 0 or segs > n or segs * (n + 1) * w > EXACT_COUNT_CELLS:
        return None
    lo_w, rw, _ = _dp_inputs(lo, w, reward, fixed)
    ends = np.arange(n + 1)
    start = ends[:, None] - 1 - np.arange(w)[None, :]  # chunk [start, b) of k + 1 atoms costs C[b, k]
    ok = (start >= lo_w[:, None]) & (start >= 0)
    at = np.where(ok, start, 0)
    cost = np.where(ok, C - np.where(at > 0, rw[at], 0.0), np.inf)
    F = np.full(n + 1, np.inf)
    F[0] = 0.0
    back = np.zeros((segs, n + 1), np.int64)
    for j in range(segs):
        cand = F[at] + cost
        k = np.argmin(cand, axis=1)  # (the first: the latest start)
        F = cand[ends, k]
        back[j] = start[ends, k]
    if not np.isfinite(F[n]):
        return None
    cuts, b = [], n
    for j in range(segs - 1, -1, -1):
        a = int(back[j, b])
        if a > 0:
            cuts.append(a - 1)
        b = a
    return np.asarray(cuts[::-1], dtype=np.int64) if b == 0 else None


def _path_value(C: np.ndarray, cuts: np.ndarray, reward: np.ndarray | None) -> tuple[float, int]:
    """The bare cost of a cut set (its segments' costs ``C[b, k-1]`` less the rewards of its cuts) and
    its number of segments: the line ``value + price * segments`` it follows as the price moves."""
    edges = np.concatenate(([0], np.asarray(cuts, np.int64) + 1, [C.shape[0] - 1]))
    value = float(C[edges[1:], edges[1:] - edges[:-1] - 1].sum()) - _cut_rewards(cuts, reward)
    return value, int(edges.size - 1)


def _cut_rewards(cuts: np.ndarray, reward: np.ndarray | None) -> float:
    """The rewards of the gaps ``cuts`` cuts, a forbidden one counted as the DP counts it
    (:func:`~.dp.soft_rewards`)."""
    if reward is None or not len(cuts):
        return 0.0
    return float(soft_rewards(reward)[np.asarray(cuts, dtype=np.int64)].sum())


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


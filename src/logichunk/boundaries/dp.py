"""The exact dynamic programme every global choice runs: :func:`optimal_cuts`, the cut set of least
total chunk cost less the rewards of the gaps cut, O(n·w) for chunks of at most ``w`` atoms; its loop
in C when a compiler is there (:mod:`logichunk.native`), else on Python lists or in numpy, the same
cuts.

Also what shapes its input: :func:`earliest_starts` (where a chunk ending at an atom may start, under
a size limit and fixed gaps), ``_glued_groups`` (gaps never cut, as groups of atoms),
:data:`MAX_SEGMENT_ATOMS` (the most atoms a segment spans with no size limit); and ``_banded_cuts``,
the same programme on a cost matrix made a band of rows at a time.

Why apart: the costs (:mod:`~logichunk.boundaries.scatter`, :mod:`~logichunk.boundaries.evidence`)
and the way the price of a chunk is chosen (:mod:`~logichunk.boundaries.path`,
:mod:`~logichunk.boundaries.sized`) vary; the programme is the same for all of them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import native
from .local import ranges


def earliest_starts(sizes: np.ndarray, max_size: int | None, fixed: np.ndarray | None = None) -> np.ndarray:
    """``lo[b]``: the first atom a chunk ending at atom ``b`` (exclusive) may start at: it fits
    ``max_size`` (one atom always may), and crosses no ``fixed`` gap."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if max_size is not None:  # (one compiled pass where it is there: the same starts)
        fast = native.earliest(sizes, max_size, None if fixed is None else np.asarray(fixed, dtype=bool))
        if fast is not None:
            return fast
    n = sizes.size
    cum = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=cum[1:])
    b = np.arange(n + 1)
    if max_size is None:
        lo = np.zeros(n + 1, np.int64)
    else:
        lo = native.searchsorted(cum, cum - max_size, side="left")
        lo = np.minimum(lo, np.maximum(b - 1, 0))
    if fixed is not None and n > 1:
        f = np.asarray(fixed, dtype=bool)
        # the atom after the last fixed gap before b
        after = np.where(f, np.arange(1, n), 0)
        last = np.zeros(n + 1, np.int64)
        last[2:] = np.maximum.accumulate(after)
        lo = np.maximum(lo, last)
    return lo


def widest(lo: np.ndarray) -> int:
    """The most atoms any chunk may hold, given each end's earliest start ``lo`` (:func:`earliest_starts`;
    ``n + 1`` entries): the width of the cost matrices the programme reads (at least 1)."""
    lo = np.asarray(lo, dtype=np.int64)
    return max(1, int((np.arange(lo.size) - lo).max())) if lo.size > 1 else 1


#: what a forbidden cut is worth where it cannot be avoided: far below any real reward, finite so the
#: DP still compares the ways around it
_FORBIDDEN = -1e12
#: ... less this much for each forbidden gap right after it: where a run of them must be cut (a heading,
#: its subtitle and the sentence they title, over the limit together), the cut goes at the run's end,
#: so the run stays whole (far above any real cost difference, far below :data:`_FORBIDDEN`; exact in
#: float64)
_FORBIDDEN_STEP = 1e6


def forbidden_runs(reward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs of consecutive forbidden gaps (``-inf``) in ``reward``: each run's first and last gap.
    One pass over ``reward``, then work in the forbidden gaps only (a text's headings, a few)."""
    forb = np.flatnonzero(np.isneginf(reward))
    if forb.size == 0:
        return forb, forb
    new = np.ones(forb.size, dtype=bool)
    np.not_equal(forb[1:], forb[:-1] + 1, out=new[1:])
    last = np.ones(forb.size, dtype=bool)
    last[:-1] = new[1:]
    return forb[new], forb[last]


#: what a weak no-cut (a lead-in over what it introduces: ``as follows:`` over its list) is worth: cheaper
#: than any forbidden gap, so where the limit breaks a run of no-cuts it breaks there first (a heading
#: stays with its text, a term with its definition), still far below any real reward
_WEAK_FORBIDDEN = _FORBIDDEN / 2
#: what the gap before a lead-in is worth where the fit rule keeps it uncut (inside a paragraph that fits,
#: after what another lead-in introduces: two lead-ins in a row): a step above a weak no-cut, so where such a
#: paragraph must break it breaks before the second lead-in first and the lead-in goes with what it introduces,
#: never by choice (still far below any real reward)
HEAD_FORBIDDEN = _WEAK_FORBIDDEN / 2


def forbid(reward: np.ndarray, no_cut: np.ndarray, weak: np.ndarray | None = None) -> np.ndarray:
    """``reward`` with the ``no_cut`` gaps forbidden (``-inf``: cut only where the size limit leaves no
    way round, and then at a run's end, :func:`soft_rewards`), those also ``weak`` priced at
    :data:`_WEAK_FORBIDDEN`, or left at their price where ``reward`` prices them as a lead-in's opening
    already (:data:`HEAD_FORBIDDEN`: a lead-in's bond where the next lead-in of a chain opens): what every
    chunker's global choice sets before :func:`fit_global`."""
    reward = np.asarray(reward, dtype=np.float64)
    out = reward.copy()
    no_cut = np.asarray(no_cut, dtype=bool)
    out[no_cut] = -np.inf
    if weak is not None:
        w = no_cut & np.asarray(weak, dtype=bool)
        out[w] = np.where(reward[w] <= HEAD_FORBIDDEN / 2, reward[w], _WEAK_FORBIDDEN)
    return out


def soft_rewards(reward: np.ndarray) -> np.ndarray:
    """``reward`` with each forbidden gap (``-inf``) priced as the DP prices it: :data:`_FORBIDDEN`,
    less :data:`_FORBIDDEN_STEP` per forbidden gap that directly follows it."""
    reward = np.asarray(reward, dtype=np.float64)
    r0, r1 = forbidden_runs(reward)
    if r0.size == 0:
        return reward
    gap = ranges(r0, r1 + 1)
    out = reward.copy()
    out[gap] = _FORBIDDEN - _FORBIDDEN_STEP * (np.repeat(r1, r1 - r0 + 1) - gap)
    return out


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
    rw_soft = soft_rewards(rw)  # forbidden, unless nothing else fits (then at the end of a forbidden run)
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


#: atoms a segment may span when no size limit bounds it (keeps the DP O(n·w) on long streams)
MAX_SEGMENT_ATOMS = 512


#: the least price of a segment without a size limit: far below any real gain, above rounding noise
_MIN_PENALTY = 1e-9


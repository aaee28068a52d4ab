"""The global choice on the atoms' vectors, the cascade's default: :func:`fit_global` picks the cut set
that is optimal for the whole piece under its size limit — within-chunk scatter of the atoms' vectors,
a price per chunk, a fill preference, rewards per gap, forbidden and glued gaps — by exact dynamic
programming (:func:`~logichunk.boundaries.dp.optimal_cuts`); :func:`segment_global` does the same
without a size limit (a permutation-rule penalty, or the count given, or the choice on the penalty
path); :func:`objective` is the value it minimises, to compare two cut sets.

Why apart: this is where the size limits (:mod:`~logichunk.boundaries.limits`), the scatter cost
(:mod:`~logichunk.boundaries.scatter`), the programme (:mod:`~logichunk.boundaries.dp`) and the choice
of its price (:mod:`~logichunk.boundaries.path`) meet; with a compiler the size-limited decision runs
fused in C (:func:`logichunk.native.fit_cuts`), without a cost matrix.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import native
from ..sparse_rows import GroupedRows, SparseRows
from .dp import (
    _MIN_PENALTY,
    MAX_SEGMENT_ATOMS,
    _dp_inputs,
    _glued_groups,
    earliest_starts,
    forbidden_runs,
    optimal_cuts,
    widest,
)
from .limits import SizeLimits
from .path import _cut_rewards, _cuts_for_count, _select_on_path
from .scatter import band_blocks, null_penalty, scatter_costs, segment_penalty

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


#: the soft preference for filling chunks towards the target: an empty chunk would cost this much
#: more than a full one, in units of one sentence's scatter (a fixed choice, not tuned)
FILL_WEIGHT = 1.0


def fit_global(sizes: np.ndarray, X: np.ndarray | SparseRows | GroupedRows, reward: np.ndarray | None,
               limits: SizeLimits | None, *, fixed: np.ndarray | None = None,
               penalty: float | np.ndarray | None = None, glue: np.ndarray | None = None,
               atoms: np.ndarray | None = None, max_atoms: int = MAX_SEGMENT_ATOMS, count: int | None = None,
               select: Callable[[np.ndarray], float] | None = None, max_cuts: int | None = None,
               apart: np.ndarray | None = None,
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
    that gives that many cuts; ``select`` and ``max_cuts`` (only without limits): see :func:`segment_global`.
    A run of forbidden gaps (``-inf``: a heading, its subtitle, the sentence they title) that the
    maximum breaks is cut at its end (:func:`~.dp.soft_rewards`), and stands alone where the gap before
    it is one of ``apart`` (the author's paragraph and section breaks; None: any gap): a heading opens
    its chunk, while a line that leads into the next inside a paragraph may end the chunk it is in."""
    sizes = np.asarray(sizes, dtype=np.int64)
    n = sizes.size
    if n <= 1:
        return np.zeros(0, np.int64)
    if isinstance(X, GroupedRows) and (glue is not None or atoms is not None or limits is None or penalty is None
                                       or not native.available()):
        X = X.made()  # (only the compiled band of a size-limited choice at a given price reads them unmade)
    if limits is not None and reward is not None:
        fixed = _lone_runs(sizes, np.asarray(reward, dtype=np.float64), fixed, glue, apart, limits.max_size)
    if glue is not None and np.any(glue):
        keep, grp = _glued_groups(glue, fixed, n)
        m = int(grp[-1]) + 1
        Xg: np.ndarray | SparseRows | GroupedRows
        if isinstance(X, SparseRows):
            if atoms is None:
                Xg, rowsq = GroupedRows(X, grp, m), X.sqnorms()
            else:  # rows that are no atom are left out of the groups (a row's norm: the same sum either way)
                of_row = np.full(X.n, -1, np.int64)
                of_row[atoms] = grp
                Xg, rowsq = GroupedRows(X, of_row, m), X.sqnorms()[atoms]
        else:
            Xa = np.asarray(X, dtype=np.float64)
            if atoms is not None:
                Xa = Xa[atoms]
            Xg = np.add.reduceat(Xa, np.flatnonzero(np.diff(grp, prepend=-1)), axis=0)  # groups are runs
            rowsq = np.einsum("ij,ij->i", Xa, Xa)
        last = np.concatenate((keep, [n - 1]))  # the last atom of each group
        # (groups are runs of atoms: their counts and sizes read from where each ends, the same integers the sums
        # over every atom made, without two passes of them)
        ends = np.concatenate(([-1], last))
        counts = np.diff(ends).astype(np.float64)
        cum = np.zeros(n + 1, np.int64)
        np.cumsum(sizes, out=cum[1:])
        sqn = np.bincount(grp, weights=rowsq, minlength=m)
        pen = penalty if penalty is None or np.ndim(penalty) == 0 else np.asarray(penalty)[last]
        sub = fit_global(cum[last + 1] - cum[ends[:-1] + 1], Xg,
                         None if reward is None else np.asarray(reward)[keep], limits,
                         fixed=None if fixed is None else np.asarray(fixed, dtype=bool)[keep], penalty=pen,
                         max_atoms=max_atoms, count=count, _counts=counts, _sqnorms=sqn,
                         select=None if select is None else (lambda sub: select(keep[sub])), max_cuts=max_cuts,
                         apart=None if apart is None else np.asarray(apart, dtype=bool)[keep])
        return keep[sub].astype(np.int64)
    if atoms is not None:
        X = X.take(atoms) if isinstance(X, SparseRows) else np.asarray(X)[atoms]
    lo = earliest_starts(sizes, None if limits is None else limits.max_size, fixed)
    if limits is None:
        lo = np.maximum(lo, np.arange(n + 1) - max(1, int(max_atoms)))
    w = widest(lo)
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
    if native.available():  # the passes below, fused: no (n+1) x w cost matrix, the band a block at a time
        w = max(1, min(w, n))
        counts = np.ones(n) if _counts is None else _counts
        lo_w, rw, restart = _dp_inputs(lo, w, reward, fixed)
        cuts = native.fit_cuts(band_blocks(X, w, lo, lo_w), n, w, _sqnorms, counts, lo_w, cum, beta, goal, FILL_WEIGHT,
                               rw, restart)
        if cuts is not None:
            return cuts
    if isinstance(X, GroupedRows):
        X = X.made()
    C = scatter_costs(X, w, _counts, _sqnorms, lo)
    for k in range(1, C.shape[1] + 1):
        short = 1.0 - np.minimum((cum[k:] - cum[:-k]) / goal, 1.0)
        C[k:, k - 1] += beta[k - 1 :] + FILL_WEIGHT * short * short
    return optimal_cuts(C, lo, reward, fixed)


def _lone_runs(sizes: np.ndarray, reward: np.ndarray, fixed: np.ndarray | None, glue: np.ndarray | None,
               apart: np.ndarray | None, max_size: int) -> np.ndarray | None:
    """``fixed`` with a cut right before every run of forbidden gaps whose atoms, with the atom they
    lead into, exceed ``max_size`` while the run alone fits, where that gap is one of ``apart`` (None:
    any). Why: such a run (a heading and its subtitle, a subtitle cue's number and timing, a speaker's
    name) must then end a chunk; the DP alone would as soon append it to the chunk before as let it
    open its own, and a heading at the end of a chunk of other text is the worse of the two."""
    r0, r1 = forbidden_runs(reward)  # each run's first and last gap
    if r0.size == 0:
        return fixed
    cum = np.zeros(sizes.size + 1, np.int64)
    np.cumsum(sizes, out=cum[1:])
    lone = (cum[r1 + 2] - cum[r0] > max_size) & (cum[r1 + 1] - cum[r0] <= max_size) & (r0 > 0)
    at = r0[lone] - 1
    if glue is not None:
        at = at[~np.asarray(glue, dtype=bool)[at]]
    if apart is not None:
        at = at[np.asarray(apart, dtype=bool)[at]]
    if at.size == 0:
        return fixed
    out = np.zeros(sizes.size - 1, dtype=bool) if fixed is None else np.array(fixed, dtype=bool)
    out[at] = True
    return out


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


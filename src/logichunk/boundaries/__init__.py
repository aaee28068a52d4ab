"""Where a boundary is decided: gap scores -> cut points, under size limits.

Every chunker goes through here, so the rules are the same everywhere. Each module below has one job;
every public name is re-exported here (``from logichunk import boundaries as bd; bd.fit_global(...)``).
Their imports run one way: :mod:`.limits` <- :mod:`.local` <- :mod:`.forced` and :mod:`.dp`; :mod:`.dp` <-
:mod:`.scatter`, :mod:`.path` <- :mod:`.sized` (which also takes :mod:`.limits`), and :mod:`.dp`,
:mod:`.path` <- :mod:`.evidence`.

:mod:`~logichunk.boundaries.limits` — :class:`SizeLimits`: a hard maximum, a target that merging fills
up to, a minimum under which a piece joins a neighbour.

:mod:`~logichunk.boundaries.local` — *choosing* cuts from scores: :func:`peaks` (local maxima with a
minimum drop θ, as Meta-Chunking uses on perplexity minima), :func:`minima` (its mirror for
per-sentence curves), :func:`above` (a threshold), :func:`top_k`, and :func:`select_by_depth`
(TextTiling depth, cut where a break is at least half as deep as the document's deepest: how many cuts
a document gets when no size limit decides it); and *fitting* the pieces to size by the earlier local
rule: :func:`fit` cuts at candidate gaps, splits anything over the maximum at its best inner gap, then
merges neighbours weakest-cut-first up to the target (``selection="local"``; the Meta-Chunking and
parent-child chunkers use it).

:mod:`~logichunk.boundaries.forced` — *splitting a single over-long sentence* at the best clause/word
break inside it: :func:`inner_breaks` — never inside a character (combining marks, surrogate pairs,
ZWJ emoji, CRLF stay whole) — and the record it leaves for review, :func:`forced_split_bubble`.

:mod:`~logichunk.boundaries.dp` — the exact dynamic programme under every global choice:
:func:`optimal_cuts`, its loop in C when a compiler is there (:mod:`logichunk.native`), and what shapes
its input (:func:`earliest_starts`, glued gaps, a matrix a band of rows at a time).

:mod:`~logichunk.boundaries.scatter` — the within-chunk scatter of the atoms' vectors as a chunk's cost
(:func:`scatter_costs`), and the price of one more segment on it by a permutation rule
(:func:`null_penalty`, :func:`segment_penalty`).

:mod:`~logichunk.boundaries.evidence` — the Bayesian evidence of each segment's items as its cost
(:func:`evidence_costs`) and Utiyama and Isahara's prior on the count: :func:`segment_evidence` decides
a document's boundaries without a size limit on its own items — what :func:`logichunk.segment` decides
topics by.

:mod:`~logichunk.boundaries.path` — how many cuts where no size limit says: the price that gives a
count, the penalty path (:func:`penalty_path`, CROPS) and the choice on it by another judge.

:mod:`~logichunk.boundaries.sized` — *the global choice* (the cascade's default): :func:`fit_global`
picks the cut set that is optimal for the whole piece under its size limit — within-chunk scatter of
the atoms' vectors, a price per chunk, a fill preference, rewards per gap, forbidden and glued gaps —
by exact dynamic programming; :func:`segment_global` does the same without a size limit (a
permutation-rule penalty, or the count given).

Sizes are always measured through a prefix array (see :mod:`logichunk.text.measure`), so every rule
works in characters, bytes or tokens alike.
"""

from __future__ import annotations

from .dp import HEAD_FORBIDDEN, MAX_SEGMENT_ATOMS, earliest_starts, forbid, optimal_cuts
from .evidence import (
    EVIDENCE_PRIOR,
    EVIDENCE_WINDOW,
    evidence_costs,
    evidence_penalty,
    evidence_rows,
    evidence_scorer,
    local_vocabulary,
    segment_evidence,
)
from .forced import (
    BREAK_NAMES,
    break_priorities,
    break_priorities_many,
    forced_cuts,
    forced_split_bubble,
    forced_splits,
    inner_breaks,
    inner_breaks_many,
)
from .limits import SizeLimits
from .local import (
    RELATIVE_DEPTH,
    Fit,
    above,
    depth_scores,
    fit,
    minima,
    peak_indices,
    peaks,
    ranges,
    segment_argmax,
    select_by_depth,
    top_k,
)
from .path import PATH_BUDGET, penalty_path
from .scatter import (
    NULL_SAMPLE,
    NULL_SHUFFLES,
    PRICE_WINDOW,
    SEGMENT_GROWTH,
    SEGMENT_KNEE,
    best_single_gain,
    chunk_prices,
    gram_band,
    null_orders,
    null_penalty,
    price_windows,
    row_keys,
    scatter_costs,
    segment_penalty,
)
from .sized import FILL_WEIGHT, fit_global, objective, segment_global

__all__ = [
    # limits
    "SizeLimits",
    # local
    "RELATIVE_DEPTH", "Fit", "above", "depth_scores", "fit", "minima", "peak_indices", "peaks", "ranges",
    "segment_argmax", "select_by_depth", "top_k",
    # forced
    "BREAK_NAMES", "break_priorities", "break_priorities_many", "forced_cuts", "forced_split_bubble", "forced_splits",
    "inner_breaks", "inner_breaks_many",
    # dp
    "HEAD_FORBIDDEN", "MAX_SEGMENT_ATOMS", "earliest_starts", "forbid", "optimal_cuts",
    # scatter
    "NULL_SAMPLE", "NULL_SHUFFLES", "SEGMENT_GROWTH", "SEGMENT_KNEE", "best_single_gain", "gram_band",
    "null_orders", "null_penalty", "row_keys", "scatter_costs", "segment_penalty", "PRICE_WINDOW", "chunk_prices",
    "price_windows",
    # evidence
    "EVIDENCE_PRIOR", "EVIDENCE_WINDOW", "evidence_costs", "evidence_penalty", "evidence_rows",
    "evidence_scorer", "local_vocabulary", "segment_evidence",
    # path
    "PATH_BUDGET", "penalty_path",
    # sized
    "FILL_WEIGHT", "fit_global", "objective", "segment_global",
]

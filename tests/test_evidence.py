"""The evidence cost of a segment and the segmentation on it (boundaries.evidence_costs,
segment_evidence; signals.cohesion.item_bags; the C kernel native.evidence_sums)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import boundaries as bd
from logichunk import native
from logichunk.boundaries import dp as bd_dp
from logichunk.boundaries import evidence as bd_ev
from logichunk.boundaries import path as bd_path
from logichunk.signals.cohesion import item_bags
from logichunk.signals.entropy import content_items
from logichunk.sparse_rows import INDEX, ItemBags


def _bags(lists: list[list[int]]) -> ItemBags:
    """Bags from lists of raw item ids, numbered densely as item_bags does."""
    flat = np.asarray([i for b in lists for i in b], dtype=np.int64)
    ptr = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(b) for b in lists], out=ptr[1:])
    if flat.size == 0:
        return ItemBags(ptr, np.zeros(0, INDEX), 0)
    kinds, dense = np.unique(flat, return_inverse=True)
    return ItemBags(ptr, dense.astype(INDEX), int(kinds.size))


def _support(flat: list[int], pa: int, pb: int, window: int | None) -> set[int]:
    """The kinds a segment's prior spreads over, from the rule's words: every kind of the text when it
    has at most ``window`` items; else those of the ``window`` consecutive items that hold the segment,
    as near centred on it as the text allows (their start: (pa + pb - window) // 2 pulled into
    [pb - window, pa], then into the text); the segment's own kinds when it is longer than the window."""
    if window is None or len(flat) <= window:
        return set(flat)
    if pb - pa > window:
        return set(flat[pa:pb])
    s0 = min(max((pa + pb - window) // 2, pb - window), pa)
    s0 = min(max(s0, 0), len(flat) - window)
    assert s0 <= pa and pb <= s0 + window
    return set(flat[s0 : s0 + window])


def _log_evidence(items: list[int], kinds: int, alpha: float | np.ndarray, support: set[int] | None = None) -> float:
    """The Dirichlet-multinomial evidence of one segment, straight from its definition: a distribution
    over the ``support`` kinds (all ``kinds`` when None) with the prior ``alpha``."""
    if kinds == 0:
        return 0.0
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (kinds,))
    counts: dict[int, int] = {}
    for i in items:
        counts[i] = counts.get(i, 0) + 1
    assert support is None or set(counts) <= support
    mass = float(a.sum()) if support is None else float(sum(a[v] for v in support))
    out = math.lgamma(mass) - math.lgamma(len(items) + mass)
    return out + sum(math.lgamma(c + a[i]) - math.lgamma(a[i]) for i, c in counts.items())


_LISTS = st.lists(st.lists(st.integers(0, 6), max_size=6), min_size=1, max_size=12)


@settings(max_examples=800, deadline=None)
@given(_LISTS, st.integers(1, 12), st.data())
def test_costs_are_minus_the_log_evidence_of_each_window(lists, width, data):
    bags = _bags(lists)
    n = bags.n
    fixed = np.asarray(data.draw(st.lists(st.booleans(), min_size=max(n - 1, 0), max_size=max(n - 1, 0))), bool)
    lo = np.maximum(bd.earliest_starts(np.ones(n, np.int64), None, fixed if n > 1 else None),
                    np.arange(n + 1) - width)
    alpha = data.draw(st.sampled_from(["jeffreys", "per kind"]))
    alpha = bd.EVIDENCE_PRIOR if alpha == "jeffreys" else np.linspace(0.05, 1.5, max(bags.kinds, 1))[: bags.kinds]
    window = data.draw(st.sampled_from([None, 1, 2, 3, 5, 8, 13, bd.EVIDENCE_WINDOW]))
    C = bd.evidence_costs(bags, lo, alpha, window)
    flat = [int(x) for x in bags.item]
    for b in range(n + 1):
        for k in range(1, C.shape[1] + 1):
            a = b - k
            if a < 0 or a < lo[b]:
                assert C[b, k - 1] == np.inf
            else:
                pa, pb = int(bags.ptr[a]), int(bags.ptr[b])
                want = -_log_evidence(flat[pa:pb], bags.kinds, alpha, _support(flat, pa, pb, window))
                assert C[b, k - 1] == pytest.approx(want, rel=1e-9, abs=1e-9)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.integers(0, 40), max_size=9), min_size=1, max_size=40), st.integers(1, 40))
def test_the_kernel_and_the_numpy_loop_give_the_same_bits(lists, width):
    assert native.available(), native.status()  # cc is on every machine we test on
    bags = _bags(lists)
    if bags.tokens == 0:
        return
    n = bags.n
    lo = np.maximum(np.zeros(n + 1, np.int64), np.arange(n + 1) - width)
    lo[1:] = np.minimum(lo[1:], np.arange(n))
    hi = np.searchsorted(lo, np.arange(n), side="right") - 1
    w = int((np.arange(n + 1) - lo).max())
    alpha = np.random.default_rng(len(lists)).uniform(0.01, 2.0, bags.kinds) if width % 2 else bd.EVIDENCE_PRIOR
    off, steps, _ = bd_ev._evidence_steps(bags, alpha)
    first = bd_ev._kind_priors(bags, alpha) if width % 3 else None  # and each window's mass over its kinds
    fast = native.evidence_sums(bags.ptr, bags.item, hi, off, steps, w, first)
    slow = bd_ev._evidence_sums(bags.ptr, bags.item, hi, off, steps, w, first)
    assert fast is not None and fast[0].tobytes() == slow[0].tobytes()
    if first is None:
        assert fast[1] is None and slow[1] is None
    else:
        assert fast[1] is not None and slow[1] is not None and fast[1].tobytes() == slow[1].tobytes()
        for b in range(1, n + 1):  # the masses are what they say
            for k in range(1, b - lo[b] + 1):
                kinds = set(bags.item[bags.ptr[b - k] : bags.ptr[b]].tolist())
                assert slow[1][b, k - 1] == pytest.approx(sum(first[v] for v in kinds), rel=1e-12, abs=1e-12)


def _objective(cuts: tuple[int, ...], C: np.ndarray, beta: float) -> float:
    edges = [0, *(c + 1 for c in cuts), C.shape[0] - 1]
    return sum(C[b, b - a - 1] + beta for a, b in zip(edges[:-1], edges[1:], strict=True))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), max_size=5), min_size=2, max_size=8), st.data())
def test_the_choice_is_the_best_cut_set_by_brute_force(lists, data):
    """Over every cut set that keeps the fixed gaps and none of the glued ones, none beats the choice."""
    bags = _bags(lists)
    n = bags.n
    fixed = np.asarray(data.draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1)), bool)
    glue = np.asarray(data.draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1)), bool) & ~fixed
    beta = data.draw(st.sampled_from([0.0, 0.5, bd.evidence_penalty(bags), 50.0]))
    window = data.draw(st.sampled_from([None, 3, 7, bd.EVIDENCE_WINDOW]))
    got = bd.segment_evidence(bags, penalty=beta, fixed=fixed, glue=glue, window=window)
    assert set(np.flatnonzero(fixed).tolist()) <= set(got.tolist())
    assert not glue[got].any()
    C = bd.evidence_costs(bags, np.zeros(n + 1, np.int64), window=window)
    free = [i for i in range(n - 1) if not fixed[i] and not glue[i]]
    best = min(_objective(tuple(sorted([*np.flatnonzero(fixed).tolist(), *extra])), C, max(beta, 1e-9))
               for r in range(len(free) + 1) for extra in itertools.combinations(free, r))
    assert _objective(tuple(got.tolist()), C, max(beta, 1e-9)) <= best + 1e-9 * max(1.0, abs(best))


def test_a_change_of_vocabulary_is_found_and_one_vocabulary_is_not_cut():
    rng = np.random.default_rng(0)
    a = [rng.integers(0, 30, 8).tolist() for _ in range(20)]
    b = [rng.integers(30, 60, 8).tolist() for _ in range(20)]
    assert bd.segment_evidence(_bags(a + b)).tolist() == [19]
    assert bd.segment_evidence(_bags(a + a)).tolist() == []
    # the count asked for, where the cost can give it
    assert bd.segment_evidence(_bags(a + b + a), count=2).tolist() == [19, 39]


def test_no_items_no_cuts_and_no_error():
    assert bd.segment_evidence(_bags([[], [], []])).tolist() == []
    assert bd.segment_evidence(_bags([[1]])).tolist() == []
    assert bd.segment_evidence(_bags([[], []]), fixed=np.array([True])).tolist() == [0]


def test_item_bags_hold_every_content_item_of_each_span_in_order():
    text = "Cats purr. Cats sleep all day! 猫在睡觉。 The end"
    starts = np.array([0, 11, 31, 37])
    ends = np.array([11, 31, 37, len(text)])
    bags = item_bags(text, starts, ends)
    pos, ids = content_items(text)
    for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
        raw = ids[(pos >= s) & (pos < e)]
        dense = bags.item[bags.ptr[i] : bags.ptr[i + 1]]
        kinds = np.unique(ids)
        assert kinds[dense].tolist() == raw.tolist()  # dense ids in the order of the raw ids
    assert bags.tokens == ids.size and bags.kinds == np.unique(ids).size
    merged = bags.merged(np.array([0, 2]))
    assert merged.n == 2 and merged.ptr.tolist() == [0, int(bags.ptr[2]), bags.tokens]


@settings(max_examples=500, deadline=None)
@given(_LISTS, st.data())
def test_the_scorer_is_the_objective_of_segment_evidence(lists, data):
    bags = _bags(lists)
    n = bags.n
    cuts = np.asarray(sorted(data.draw(st.sets(st.integers(0, max(n - 2, 0)), max_size=max(n - 1, 0)))), np.int64)
    cuts = cuts[cuts < n - 1]
    window = data.draw(st.sampled_from([None, 2, 5, 9, bd.EVIDENCE_WINDOW]))
    C = bd.evidence_costs(bags, np.zeros(n + 1, np.int64), window=window)
    want = _objective(tuple(cuts.tolist()), C, bd.evidence_penalty(bags))
    score = bd.evidence_scorer(bags, window=window)
    assert score(cuts) == pytest.approx(want, rel=1e-9, abs=1e-9)
    chosen = bd.segment_evidence(bags, window=window) if n > 1 else np.zeros(0, np.int64)
    assert score(chosen) <= score(cuts) + 1e-9 * max(1.0, abs(want))


_DENSE = st.lists(st.lists(st.floats(-1, 1, allow_nan=False, width=32), min_size=3, max_size=3), min_size=2, max_size=14)


@settings(max_examples=500, deadline=None)
@given(_DENSE, st.floats(1e-6, 20.0), st.data())
def test_the_penalty_path_holds_the_optimum_for_every_price(rows, beta, data):
    """Whatever the price, the penalised optimum's value is reached by a cut set of the path."""
    X = np.asarray(rows, dtype=np.float64)
    n = X.shape[0]
    fixed = np.asarray(data.draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1)), bool)
    lo = bd.earliest_starts(np.ones(n, np.int64), None, fixed)
    C = bd.scatter_costs(X, n, lo=lo)
    path = bd.penalty_path(C, lo, None, fixed)
    counts = [p.size for p in path]
    assert counts == sorted(set(counts))  # fewest cuts first, one set per count
    assert all(set(np.flatnonzero(fixed).tolist()) <= set(p.tolist()) for p in path)

    def value(cuts: np.ndarray) -> float:
        v, segs = bd_path._path_value(C, cuts, None)
        return v + beta * segs

    best = bd.optimal_cuts(C + beta, lo, None, fixed)
    assert min(value(p) for p in path) <= value(best) + 1e-9 * max(1.0, abs(value(best)))
    # bounded: exactly the sets of the whole path with at most that many cuts
    cap = data.draw(st.integers(0, n))
    assert [p.tolist() for p in bd.penalty_path(C, lo, None, fixed, max_cuts=cap)] == \
        [p.tolist() for p in path if p.size <= cap]


def test_select_picks_the_placement_the_words_prefer():
    """An embedder's path of placements, judged by the words: the chosen set is on the path and no set
    on the path scores lower by the words' evidence."""
    rng = np.random.default_rng(1)
    lists = [rng.integers(0, 20, 6).tolist() for _ in range(10)] + [rng.integers(20, 40, 6).tolist() for _ in range(10)]
    bags = _bags(lists)
    X = np.vstack([rng.normal(size=(10, 4)) + 3 * np.eye(4)[0], rng.normal(size=(10, 4)) + 3 * np.eye(4)[1]])
    score = bd.evidence_scorer(bags)
    got = bd.segment_global(X, select=score)
    lo = np.maximum(bd.earliest_starts(np.ones(20, np.int64), None, None), np.arange(21) - bd.MAX_SEGMENT_ATOMS)
    path = bd.penalty_path(bd.scatter_costs(X, 20, lo=lo), lo)
    assert any(p.tolist() == got.tolist() for p in path)
    assert score(got) == min(score(p) for p in path)
    assert 9 in got.tolist()  # both views agree where the subject changes
    # with glue, the choice never cuts a glued gap and still comes from the words
    glue = np.zeros(19, bool)
    glue[9] = True
    glued = bd.segment_global(X, glue=glue, select=score)
    assert 9 not in glued.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(1e-3, 1e7, allow_nan=False), min_size=1, max_size=50))
def test_the_vectorised_lgamma_is_lgamma(xs):
    got = bd_ev._lgamma(np.asarray(xs))
    for x, g in zip(xs, got.tolist(), strict=True):
        assert g == pytest.approx(math.lgamma(x), rel=1e-12, abs=1e-12)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=2, max_size=60), st.integers(1, 59), st.booleans())
def test_window_masses_are_the_prior_mass_of_each_window(flat, window, per_kind):
    if window >= len(flat):
        window = len(flat) - 1
    bags = _bags([flat])
    a = np.linspace(0.1, 2.0, bags.kinds) if per_kind else np.full(bags.kinds, bd.EVIDENCE_PRIOR)
    got = bd_ev._window_masses(bags, a, window)
    dense = [int(x) for x in bags.item]
    want = [sum(a[v] for v in set(dense[s : s + window])) for s in range(len(dense) - window + 1)]
    assert got == pytest.approx(want, rel=1e-9, abs=1e-9)


def _documents_end_to_end(docs: int, seed: int) -> tuple[ItemBags, set[int]]:
    """``docs`` documents of 25 sentences each, laid end to end: each sentence draws 6 items from its
    document's own 40 words and 4 from 200 words every document shares; the gaps between documents."""
    rng = np.random.default_rng(seed)
    lists, joins = [], set()
    for d in range(docs):
        own = 100_000 + 40 * d + np.arange(40)
        for _ in range(25):
            lists.append([int(x) for x in rng.choice(own, 6)] + [int(x) for x in rng.choice(200, 4)])
        joins.add(len(lists) - 1)
    joins.discard(len(lists) - 1)
    return _bags(lists), joins


def test_documents_laid_end_to_end_keep_their_topics_in_a_long_text():
    """A topic's prior spreads over the vocabulary around it, not over the whole text's: 5 documents
    are cut where they join, and so are 150 of them laid end to end (37,500 items). Over the whole
    text's vocabulary (``window=None``) the long text loses most of its joins: the regression this
    rule was made for (each topic paid for a distribution over every kind of the text)."""
    few, few_joins = _documents_end_to_end(5, 0)
    assert few.tokens < bd.EVIDENCE_WINDOW and set(bd.segment_evidence(few).tolist()) == few_joins
    many, joins = _documents_end_to_end(150, 1)
    assert many.tokens > 20 * bd.EVIDENCE_WINDOW
    assert set(bd.segment_evidence(many).tolist()) == joins
    whole = set(bd.segment_evidence(many, window=None).tolist())
    assert len(whole & joins) < 0.5 * len(joins)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.integers(0, 12), max_size=6), min_size=2, max_size=40), st.integers(1, 9),
       st.integers(1, 4), st.sampled_from([None, 4, 9, 30]), st.booleans(), st.data())
def test_a_band_of_rows_is_those_rows_of_the_whole_matrix(lists, width, block, window, compiled, data):
    """evidence_rows(r0, r1) has the bits of evidence_costs' rows r0..r1-1 (bands at multiples of the
    row block), from the compiled kernel and from the numpy loop."""
    bags = _bags(lists)
    n = bags.n
    fixed = np.asarray(data.draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1)), bool)
    lo = np.maximum(bd.earliest_starts(np.ones(n, np.int64), None, fixed), np.arange(n + 1) - width)
    saved_block, saved_sums = bd_ev._row_block, native.evidence_sums
    try:
        bd_ev._row_block = lambda w: block
        if not compiled:
            native.evidence_sums = lambda *a, **k: None
        whole = bd.evidence_costs(bags, lo, window=window)
        rows = bd.evidence_rows(bags, lo, window=window)
        band = block * data.draw(st.integers(1, 4))
        for r0 in range(0, n + 1, band):
            part = rows(r0, min(n + 1, r0 + band))
            assert part.tobytes() == whole[r0 : r0 + band].tobytes()
    finally:
        bd_ev._row_block, native.evidence_sums = saved_block, saved_sums


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.integers(0, 12), max_size=6), min_size=2, max_size=40), st.integers(2, 9),
       st.sampled_from([None, 4, 9, 30]), st.booleans(), st.data())
def test_the_banded_decision_makes_the_cuts_of_the_whole_matrix(lists, width, window, compiled, data):
    """A long text's decision a band of rows at a time (the DP's totals kept between bands) makes the
    cuts the whole matrix makes, whatever the band, with the kernels and without them."""
    bags = _bags(lists)
    n = bags.n
    fixed = np.asarray(data.draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1)), bool)
    lo = np.maximum(bd.earliest_starts(np.ones(n, np.int64), None, fixed), np.arange(n + 1) - width)
    w = int((np.arange(n + 1) - lo).max())
    price = data.draw(st.sampled_from([0.5, bd.evidence_penalty(bags), 6.0]))
    saved_block, saved_sums, saved_dp = bd_ev._row_block, native.evidence_sums, native.dp_rows
    try:
        bd_ev._row_block = lambda w: 1
        if not compiled:
            native.evidence_sums = lambda *a, **k: None
            native.dp_rows = lambda *a, **k: False
        C = bd.evidence_costs(bags, lo, window=window)
        want = bd.optimal_cuts(C + price, lo, None, fixed)
        band = data.draw(st.integers(1, n + 1))
        got = bd_dp._banded_cuts(bd.evidence_rows(bags, lo, window=window), lo, w, None, fixed, price, band)
        assert got.tolist() == want.tolist()
    finally:
        bd_ev._row_block, native.evidence_sums, native.dp_rows = saved_block, saved_sums, saved_dp


def test_a_long_text_is_decided_a_band_at_a_time_with_the_same_cuts():
    """segment_evidence takes the banded path when the matrix is longer than a band: the same cuts as
    the whole matrix (340 documents end to end: 8,500 atoms, bands of 8,192 rows), and finds the joins."""
    bags, joins = _documents_end_to_end(340, 2)
    assert bags.n + 1 > bd_ev._evidence_band(512)
    lo = np.maximum(bd.earliest_starts(np.ones(bags.n, np.int64), None, None), np.arange(bags.n + 1) - 512)
    whole = bd.optimal_cuts(bd.evidence_costs(bags, lo) + bd.evidence_penalty(bags), lo)
    got = bd.segment_evidence(bags)
    assert got.tolist() == whole.tolist() and set(got.tolist()) == joins


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.floats(-1, 1, allow_nan=False, width=32), min_size=3, max_size=3), min_size=4, max_size=40),
       st.integers(1, 6), st.data())
def test_a_long_path_is_searched_to_the_same_choice_where_the_judge_has_one_valley(rows, budget, data):
    """Past PATH_BUDGET programmes the path is searched in rounds instead of walked whole: with a judge
    that falls and rises once along the path (the distance of a set's count to a target), the search
    picks the set the whole path would; with any judge, a set of the path. Budgets of 1 to 6
    programmes force the search on these short paths."""
    X = np.asarray(rows, dtype=np.float64)
    n = X.shape[0]
    lo = bd.earliest_starts(np.ones(n, np.int64), None, None)
    C = bd.scatter_costs(X, n, lo=lo)
    path = bd.penalty_path(C, lo)
    target = data.draw(st.integers(0, n))
    valley = lambda cuts: abs(cuts.size - target) + 1e-3 * cuts.size  # noqa: E731
    rng = np.random.default_rng(n)
    noise = {p.size: float(rng.random()) for p in path}
    bumpy = lambda cuts: noise.get(cuts.size, 0.0)  # noqa: E731
    saved = bd_path.PATH_BUDGET
    try:
        bd_path.PATH_BUDGET = budget
        got = bd_path._select_on_path(C, lo, None, None, None, valley)
        any_judge = bd_path._select_on_path(C, lo, None, None, None, bumpy)
    finally:
        bd_path.PATH_BUDGET = saved
    assert got.tolist() == min(path, key=valley).tolist()
    assert any(p.tolist() == any_judge.tolist() for p in path)
    assert bd_path._select_on_path(C, lo, None, None, None, valley).tolist() == got.tolist()  # exact, within budget

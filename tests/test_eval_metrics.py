"""Metrics of the evaluation harness against hand-computed cases (and segeval, when installed)."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from logichunk.eval import metrics as M

# --------------------------------------------------------------------------- Pk / WindowDiff


def test_pk_windowdiff_hand_computed():
    # 6 units, gold segments [3, 3] -> boundary after unit 2; k = 2 -> windows (0,2) (1,3) (2,4) (3,5)
    # gold "same segment" per window: T F F T; no hypothesis boundary: T T T T -> 2 of 4 disagree
    assert M.pk([2], [], 6, k=2) == pytest.approx(0.5)
    assert M.windowdiff([2], [], 6, k=2) == pytest.approx(0.5)
    # hypothesis cuts after units 1 and 2: segments 0 0 1 2 2 2
    # Pk: hyp same-segment T? F F F T vs gold T F F T -> only window 0 disagrees -> 1/4
    # WD: boundary counts per window gold 0 1 1 0, hyp 1 2 1 0 -> windows 0 and 1 differ -> 2/4
    assert M.pk([2], [1, 2], 6, k=2) == pytest.approx(0.25)
    assert M.windowdiff([2], [1, 2], 6, k=2) == pytest.approx(0.5)
    assert M.pk([2], [2], 6) == 0.0
    assert M.windowdiff([2, 4], [2, 4], 9) == 0.0


def test_window_size_follows_segeval():
    assert M.segeval_window(6, [2]) == 2       # mean 3 -> 1.5 -> 2
    assert M.segeval_window(10, [4]) == 2      # mean 5 -> 2.5 -> 2 (half to even)
    assert M.segeval_window(14, [6]) == 4      # mean 7 -> 3.5 -> 4 (half to even)
    assert M.segeval_window(20, []) == 10
    assert M.segeval_window(4, [0, 1, 2]) == 2  # never below 2


def test_short_documents():
    assert math.isnan(M.pk([], [], 1))
    # n=3, k would be 2 -> 1 window: gold (0,2) different segments, hyp same -> 1.0
    assert M.pk([0], [], 3) == 1.0
    # window shrinks to n-1 when the default would leave no window
    assert M.pk([], [0], 2) == 1.0
    with pytest.raises(ValueError):
        M.pk([5], [], 4)


def test_pk_catches_near_misses_less_than_f1():
    ref = [9, 19, 29]
    near = [10, 20, 30]
    far = [4, 14, 24]
    assert M.pk(ref, near, 40) < M.pk(ref, far, 40)
    assert M.prf(M.boundary_counts(ref, near))[2] == 1.0
    assert M.prf(M.boundary_counts(ref, near, tolerance=0))[2] == 0.0


@pytest.mark.skipif(importlib.util.find_spec("segeval") is None,
                    reason="segeval not installed (pip install 'logichunk[eval]')")
def test_pk_windowdiff_match_segeval():
    import segeval

    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(60):
        n = int(rng.integers(4, 60))
        ref = np.sort(rng.choice(n - 1, size=int(rng.integers(0, min(8, n - 1))), replace=False))
        hyp = np.sort(rng.choice(n - 1, size=int(rng.integers(0, min(8, n - 1))), replace=False))

        def masses(b, n=n):
            edges = np.concatenate(([0], np.asarray(b) + 1, [n]))
            return tuple(int(x) for x in np.diff(edges))

        k = M.segeval_window(n, ref)
        if n - k < 1:
            continue
        want_pk = float(segeval.pk(masses(hyp), masses(ref)))
        want_wd = float(segeval.window_diff(masses(hyp), masses(ref)))
        assert M.pk(ref, hyp, n) == pytest.approx(want_pk, abs=1e-12)
        assert M.windowdiff(ref, hyp, n) == pytest.approx(want_wd, abs=1e-12)
        checked += 1
    assert checked > 40


# --------------------------------------------------------------------------- boundary F1


def test_boundary_counts_tolerance_one_to_one():
    c = M.boundary_counts([3, 10], [4, 9, 20])
    assert (c.tp, c.hyp, c.ref) == (2, 3, 2)
    p, r, f = M.prf(c)
    assert (p, r) == (pytest.approx(2 / 3), 1.0) and f == pytest.approx(0.8)
    assert M.boundary_counts([5], [4, 5, 6]).tp == 1       # one gold boundary matches once
    assert M.boundary_counts([4, 5], [5]).tp == 1          # one proposal matches once
    assert M.boundary_counts([3, 4], [3, 5]).tp == 2       # greedy still finds the full matching
    assert M.boundary_counts([3, 5], [4]).tp == 1
    assert M.boundary_counts([3], [5]).tp == 0
    assert (M.boundary_counts([1], [2]) + M.boundary_counts([7], [])).ref == 2


def test_prf_edges():
    assert M.prf(M.BoundaryCounts(0, 0, 0)) == (1.0, 1.0, 1.0)
    assert M.prf(M.BoundaryCounts(0, 3, 0))[0] == 0.0
    assert M.prf(M.BoundaryCounts(0, 0, 2)) == (0.0, 0.0, 0.0)


# --------------------------------------------------------------------------- intervals and spans


def test_merge_intervals():
    s, e = M.merge_intervals([5, 1, 2, 8, 10, 20], [8, 3, 4, 9, 10, 25])
    assert s.tolist() == [1, 5, 20] and e.tolist() == [4, 9, 25]  # touching merges, empty vanishes
    assert M.total_length([0, 5], [10, 7]) == 10
    assert M.union_intersection_length([0, 20], [10, 30], [5], [25]) == 10
    s, e = M.merge_intervals([], [])
    assert s.size == 0


def test_span_scores_hand_computed():
    # gold [10,20); chunks [0,15) and [15,30): all of gold found, 30 retrieved
    sc = M.span_scores([0, 15], [15, 30], [10], [20])
    assert sc["recall"] == 1.0 and sc["precision"] == pytest.approx(1 / 3) and sc["iou"] == pytest.approx(1 / 3)
    # two gold spans, one small chunk inside the first: 6 of 20 gold found, nothing wasted
    sc = M.span_scores([12], [18], [10, 40], [20, 50])
    assert sc["recall"] == pytest.approx(0.3) and sc["precision"] == 1.0
    assert sc["iou"] == pytest.approx(6 / (6 + 14))
    # overlapping gold answers count once (Chroma sums them; we take the union)
    assert M.span_scores([0], [10], [0, 5], [10, 10])["recall"] == 1.0
    # the same chunk retrieved twice pays twice in precision
    assert M.span_scores([0, 0], [10, 10], [0], [10])["precision"] == 0.5
    assert M.span_scores([], [], [0], [5]) == {"recall": 0.0, "precision": 0.0, "iou": 0.0}


def test_span_scores_match_a_set_model():
    rng = np.random.default_rng(3)
    for _ in range(200):
        rs = rng.integers(0, 90, size=int(rng.integers(0, 5)))
        re_ = rs + rng.integers(1, 20, size=rs.size)
        gs = rng.integers(0, 90, size=int(rng.integers(1, 4)))
        ge = gs + rng.integers(1, 15, size=gs.size)
        R = set().union(*[set(range(a, b)) for a, b in zip(rs, re_, strict=True)])
        G = set().union(*[set(range(a, b)) for a, b in zip(gs, ge, strict=True)])
        retrieved = int((re_ - rs).sum())
        inter = len(R & G)
        got = M.span_scores(rs, re_, gs, ge)
        assert got["recall"] == pytest.approx(inter / len(G))
        assert got["precision"] == pytest.approx(inter / retrieved if retrieved else 0.0)
        denom = retrieved + len(G - R)
        assert got["iou"] == pytest.approx(inter / denom if denom else 0.0)
        covered = [set(range(a, b)) <= R for a, b in zip(gs, ge, strict=True)]
        assert M.evidence_recall(rs, re_, gs, ge) == pytest.approx(np.mean(covered))


def test_evidence_recall_needs_the_whole_span():
    # first gold span covered by two adjacent chunks together, second only half
    assert M.evidence_recall([0, 15, 30], [15, 25, 35], [10, 30], [20, 40]) == 0.5
    assert M.evidence_recall([], [], [1], [2]) == 0.0


def test_ranks_and_doc_recall():
    assert M.reciprocal_rank([False, False, True, True]) == pytest.approx(1 / 3)
    assert M.reciprocal_rank([False]) == 0.0
    assert M.first_hit_rank([True]) == 1
    assert M.doc_recall(["a", "b", "a"], ["a", "c"]) == 0.5
    assert M.doc_recall([], ["a"]) == 0.0
    hit = M.overlaps([0, 10, 30], [10, 20, 40], [15, 40], [16, 45])
    assert hit.tolist() == [False, True, False]  # [30,40) only touches [40,45)


def test_doc_offsets_keep_documents_apart():
    off = M.doc_offsets([3, 0, 5])
    assert off.tolist() == [0, 4, 5]
    # spans ending one document and starting the next never merge
    s, e = M.merge_intervals(off[[0, 2]], off[[0, 2]] + [3, 5])
    assert s.size == 2


# --------------------------------------------------------------------------- graph retrieval metrics


def test_covered_length_hand_computed():
    # retrieved [0,10) and [20,30); gold [5,25) has 5 + 5 = 10 covered, [10,20) none, [28,40) 2, [0,30) 20
    got = M.covered_length([0, 20], [10, 30], [5, 10, 28, 0], [25, 20, 40, 30])
    assert got.tolist() == [10, 0, 2, 20]
    # overlapping retrieved spans count once; an empty interval covers nothing
    assert M.covered_length([0, 5], [10, 12], [0, 3], [12, 3]).tolist() == [12, 0]
    assert M.covered_length([], [], [0], [5]).tolist() == [0]


def test_supporting_recall_hand_computed():
    # gold sentences [0,10) [10,30) [30,40); retrieved [0,6) and [12,30)
    # coverage 6/10 ≥ .5 yes; 18/20 yes; 0/10 no -> 2/3
    assert M.supporting_recall([0, 12], [6, 30], [0, 10, 30], [10, 30, 40]) == pytest.approx(2 / 3)
    # a retrieved sentence that misses one character of whitespace still counts; full coverage does not
    assert M.supporting_recall([1], [10], [0], [10]) == 1.0
    assert M.evidence_recall([1], [10], [0], [10]) == 0.0
    assert M.supporting_recall([0], [4], [0], [10]) == 0.0  # 40% < half
    assert M.supporting_recall([0], [4], [0], [10], min_cover=0.4) == 1.0
    assert M.supporting_recall([0], [4], [], []) == 0.0
    assert M.supporting_recall([], [], [0, 5], [5, 5]) == 0.0  # only the non-empty gold span counts: missed


def test_all_docs_hit_hand_computed():
    assert M.all_docs_hit(["a", "b", "c"], ["a", "b"]) == 1.0
    assert M.all_docs_hit(["a", "a", "c"], ["a", "b"]) == 0.0  # half is not both
    assert M.all_docs_hit([], ["a"]) == 0.0 and M.all_docs_hit(["a"], []) == 0.0
    assert M.doc_recall(["a", "a", "c"], ["a", "b"]) == 0.5

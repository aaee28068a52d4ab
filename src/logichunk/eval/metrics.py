"""Evaluation metrics: segmentation (Pk, WindowDiff, boundary F1) and span retrieval (Chroma-style
recall / precision / IoU, evidence recall, doc recall, MRR).

Conventions (all arrays are numpy, nothing loops over characters):

* A segmentation of ``n`` units is given by its **boundaries**: gap indices ``i`` in ``[0, n-2]``,
  "a boundary falls after unit i" (the format of ``../shared/data``).
* Pk and WindowDiff follow the ``segeval`` package exactly (so our numbers can be checked against
  it): the window ``k`` is half the mean *reference* segment length, rounded half-to-even, at least
  2; there are ``n - k`` windows. Where a document is so short that ``n - k < 1`` we shrink ``k`` to
  ``n - 1`` (segeval would divide by zero there); a document of one unit has no windows (NaN).
* Spans are half-open ``[start, end)`` in one coordinate space. For several documents, shift each
  document by an offset (:func:`doc_offsets`) so spans of different documents never touch.
* Span metrics measure lengths in characters, as ``chunking_evaluation`` (Chroma's benchmark) does,
  with one deliberate difference: recall divides by the length of the *union* of the gold spans
  (Chroma sums them, so overlapping gold answers — common in DRCD/CMRC — could never reach 1).
  Identical when the gold spans don't overlap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = [
    "BoundaryCounts", "all_docs_hit", "boundary_counts", "covered_length", "doc_offsets", "doc_recall",
    "evidence_recall", "first_hit_rank", "merge_intervals", "overlaps", "pk", "prf", "reciprocal_rank",
    "segeval_window", "span_scores", "supporting_recall", "total_length", "union_intersection_length", "windowdiff",
]


# --------------------------------------------------------------------------- segmentation


def _indicator(n: int, boundaries: Sequence[int] | np.ndarray) -> np.ndarray:
    """0/1 per gap (len n-1) from boundary gap indices; out-of-range indices are an error."""
    b = np.asarray(boundaries, dtype=np.int64).reshape(-1)
    gaps = np.zeros(max(n - 1, 0), dtype=np.int64)
    if b.size:
        if b.min() < 0 or b.max() > n - 2:
            raise ValueError(f"boundary index out of range for {n} units: {b.min()}..{b.max()}")
        gaps[b] = 1
    return gaps


def _labels(n: int, boundaries) -> np.ndarray:
    """Segment number of each unit (len n): 0 for the first segment, +1 after each boundary."""
    out = np.zeros(n, dtype=np.int64)
    if n > 1:
        np.cumsum(_indicator(n, boundaries), out=out[1:])
    return out


def segeval_window(n: int, ref_boundaries) -> int:
    """segeval's default window: round-half-even(mean reference segment length / 2), at least 2."""
    nseg = len(set(np.asarray(ref_boundaries, dtype=np.int64).tolist())) + 1
    k = round(Fraction(n, 2 * nseg))  # exact, half-to-even: segeval rounds a Decimal the same way
    return max(k, 2)


def _window(n: int, ref, k: int | None) -> int | None:
    if n < 2:
        return None
    k = segeval_window(n, ref) if k is None else int(k)
    if k < 1:
        raise ValueError("window size must be >= 1")
    return min(k, n - 1)


def pk(ref, hyp, n: int, k: int | None = None) -> float:
    """Pk (Beeferman et al. 1999): share of windows of ``k`` units where reference and hypothesis
    disagree on whether the window's two ends lie in the same segment. 0 is perfect; lower is better."""
    k = _window(n, ref, k)
    if k is None:
        return float("nan")
    lr, lh = _labels(n, ref), _labels(n, hyp)
    same_r = lr[:-k] == lr[k:]
    same_h = lh[:-k] == lh[k:]
    return float(np.mean(same_r != same_h))


def windowdiff(ref, hyp, n: int, k: int | None = None) -> float:
    """WindowDiff (Pevzner & Hearst 2002): share of windows of ``k`` units whose number of
    boundaries differs between reference and hypothesis. Lower is better."""
    k = _window(n, ref, k)
    if k is None:
        return float("nan")
    lr, lh = _labels(n, ref), _labels(n, hyp)
    return float(np.mean((lr[k:] - lr[:-k]) != (lh[k:] - lh[:-k])))


@dataclass(frozen=True)
class BoundaryCounts:
    """Matched boundaries (``tp``), boundaries proposed (``hyp``) and gold boundaries (``ref``)."""

    tp: int
    hyp: int
    ref: int

    def __add__(self, other: BoundaryCounts) -> BoundaryCounts:
        return BoundaryCounts(self.tp + other.tp, self.hyp + other.hyp, self.ref + other.ref)


def boundary_counts(ref, hyp, tolerance: int = 1) -> BoundaryCounts:
    """One-to-one matching of hypothesis to reference boundaries at most ``tolerance`` gaps apart.

    Greedy in document order (each reference boundary takes the leftmost free hypothesis boundary
    within reach) — optimal for equal-width windows on a line, so ``tp`` is the maximum matching.
    """
    r = np.unique(np.asarray(ref, dtype=np.int64))
    h = np.unique(np.asarray(hyp, dtype=np.int64))
    tp, j = 0, 0
    for x in r.tolist():
        # skip hypothesis boundaries too far left to match this or any later reference boundary
        j += int(np.searchsorted(h[j:], x - tolerance, side="left"))
        if j < h.size and h[j] <= x + tolerance:
            tp += 1
            j += 1
    return BoundaryCounts(tp, int(h.size), int(r.size))


def prf(c: BoundaryCounts) -> tuple[float, float, float]:
    """(precision, recall, F1). Precision of no proposals is 1 when there was nothing to find, else 0;
    likewise recall of no gold boundaries."""
    p = c.tp / c.hyp if c.hyp else (1.0 if c.ref == 0 else 0.0)
    r = c.tp / c.ref if c.ref else (1.0 if c.hyp == 0 else 0.0)
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f


# --------------------------------------------------------------------------- interval arithmetic


def merge_intervals(starts, ends) -> tuple[np.ndarray, np.ndarray]:
    """Union of half-open intervals as sorted, disjoint, non-touching intervals. Empty ones vanish."""
    s = np.asarray(starts, dtype=np.int64).reshape(-1)
    e = np.asarray(ends, dtype=np.int64).reshape(-1)
    keep = e > s
    s, e = s[keep], e[keep]
    if s.size == 0:
        return s, e
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(s.size, dtype=bool)
    new[1:] = s[1:] > reach[:-1]  # a gap before this interval starts a new group
    group = np.cumsum(new) - 1
    ms = s[new]
    me = np.zeros(ms.size, dtype=np.int64)
    np.maximum.at(me, group, e)
    return ms, me


def total_length(starts, ends) -> int:
    """Length of the union of the intervals."""
    s, e = merge_intervals(starts, ends)
    return int((e - s).sum())


def union_intersection_length(a_starts, a_ends, b_starts, b_ends) -> int:
    """|(union of A) ∩ (union of B)| via |A| + |B| - |A ∪ B|."""
    la = total_length(a_starts, a_ends)
    lb = total_length(b_starts, b_ends)
    lab = total_length(np.concatenate([np.asarray(a_starts), np.asarray(b_starts)]),
                       np.concatenate([np.asarray(a_ends), np.asarray(b_ends)]))
    return la + lb - lab


def doc_offsets(lengths: Sequence[int]) -> np.ndarray:
    """Offset of each document in one coordinate space; one empty position between documents so
    spans of neighbouring documents never touch (touching intervals would merge)."""
    ln = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(ln.size, dtype=np.int64)
    if ln.size > 1:
        np.cumsum(ln[:-1] + 1, out=out[1:])
    return out


# --------------------------------------------------------------------------- span retrieval


def span_scores(ret_starts, ret_ends, gold_starts, gold_ends) -> dict[str, float]:
    """Chroma-style scores of one query's retrieved spans against its gold spans.

    * ``recall``    = |R ∩ G| / |G|                (G, R: unions of the spans)
    * ``precision`` = |R ∩ G| / Σ|r_i|             (retrieved lengths summed: overlap is paid twice)
    * ``iou``       = |R ∩ G| / (Σ|r_i| + |G \\ R|)
    """
    rs = np.asarray(ret_starts, dtype=np.int64)
    re_ = np.asarray(ret_ends, dtype=np.int64)
    inter = union_intersection_length(rs, re_, gold_starts, gold_ends)
    gold = total_length(gold_starts, gold_ends)
    retrieved = int(np.clip(re_ - rs, 0, None).sum())
    missed = gold - inter
    return {
        "recall": inter / gold if gold else 0.0,
        "precision": inter / retrieved if retrieved else 0.0,
        "iou": inter / (retrieved + missed) if retrieved + missed else 0.0,
    }


def evidence_recall(ret_starts, ret_ends, gold_starts, gold_ends) -> float:
    """Share of gold spans covered *entirely* by the union of the retrieved spans."""
    gs = np.asarray(gold_starts, dtype=np.int64).reshape(-1)
    ge = np.asarray(gold_ends, dtype=np.int64).reshape(-1)
    if gs.size == 0:
        return 0.0
    ms, me = merge_intervals(ret_starts, ret_ends)
    if ms.size == 0:
        return 0.0
    i = np.searchsorted(ms, gs, side="right") - 1  # the merged interval starting at or before gs
    ok = (i >= 0) & (me[np.clip(i, 0, None)] >= ge)
    return float(ok.mean())


def covered_length(ret_starts, ret_ends, starts, ends) -> np.ndarray:
    """For each interval ``[starts[i], ends[i])``: how many of its positions lie in the union of the
    retrieved intervals (prefix sums over the merged union, no loop)."""
    s = np.asarray(starts, dtype=np.int64).reshape(-1)
    e = np.asarray(ends, dtype=np.int64).reshape(-1)
    ms, me = merge_intervals(ret_starts, ret_ends)
    if ms.size == 0 or s.size == 0:
        return np.zeros(s.size, dtype=np.int64)
    cum = np.concatenate([[0], np.cumsum(me - ms)])

    def upto(x: np.ndarray) -> np.ndarray:  # covered positions before x
        j = np.searchsorted(ms, x, side="right") - 1
        jj = np.clip(j, 0, None)
        inside = np.clip(np.minimum(x, me[jj]) - ms[jj], 0, None)
        return np.where(j >= 0, cum[jj] + inside, 0)

    return np.clip(upto(np.maximum(e, s)) - upto(s), 0, None)


def supporting_recall(ret_starts, ret_ends, gold_starts, gold_ends, min_cover: float = 0.5) -> float:
    """Supporting-sentence recall: share of gold spans at least ``min_cover`` of whose characters lie
    in the retrieved spans. A sentence-level retriever's spans need not match the gold sentence
    boundaries to the character (whitespace, a splitter's choices), hence a share rather than
    full coverage (:func:`evidence_recall` is the full-coverage variant). Empty gold spans are skipped."""
    gs = np.asarray(gold_starts, dtype=np.int64).reshape(-1)
    ge = np.asarray(gold_ends, dtype=np.int64).reshape(-1)
    keep = ge > gs
    gs, ge = gs[keep], ge[keep]
    if gs.size == 0:
        return 0.0
    cov = covered_length(ret_starts, ret_ends, gs, ge)
    return float(np.mean(cov >= min_cover * (ge - gs)))


def all_docs_hit(retrieved_doc_ids: Sequence, gold_doc_ids: Sequence) -> float:
    """1.0 when every gold document has a retrieved item (HotpotQA: *both* supporting paragraphs),
    else 0.0 — the multi-hop question is answerable from the retrieved text only then."""
    gold = set(gold_doc_ids)
    if not gold:
        return 0.0
    return 1.0 if gold <= set(retrieved_doc_ids) else 0.0


def doc_recall(retrieved_doc_ids: Sequence, gold_doc_ids: Sequence) -> float:
    """Share of gold documents among the documents of the retrieved items."""
    gold = set(gold_doc_ids)
    if not gold:
        return 0.0
    return len(gold & set(retrieved_doc_ids)) / len(gold)


def first_hit_rank(hits) -> int | None:
    """1-based rank of the first True, or None."""
    h = np.asarray(hits, dtype=bool).reshape(-1)
    if not h.any():
        return None
    return int(np.argmax(h)) + 1


def reciprocal_rank(hits) -> float:
    """1 / rank of the first relevant item in a ranked list (0 if none); average it for MRR."""
    r = first_hit_rank(hits)
    return 0.0 if r is None else 1.0 / r


def overlaps(ret_starts, ret_ends, gold_starts, gold_ends) -> np.ndarray:
    """For each retrieved span, whether it shares at least one position with any gold span."""
    rs = np.asarray(ret_starts, dtype=np.int64).reshape(-1)
    re_ = np.asarray(ret_ends, dtype=np.int64).reshape(-1)
    ms, me = merge_intervals(gold_starts, gold_ends)
    if ms.size == 0 or rs.size == 0:
        return np.zeros(rs.size, dtype=bool)
    # the last gold interval starting before re_ overlaps iff it ends after rs
    i = np.searchsorted(ms, re_, side="left") - 1
    return (i >= 0) & (me[np.clip(i, 0, None)] > rs) & (re_ > rs)

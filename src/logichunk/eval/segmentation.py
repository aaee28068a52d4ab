"""The segmentation task: units are given, a method chooses boundaries between them.

How a method's output becomes boundaries:

* gap signals (entropy, cliff, ppl): scores per gap -> :func:`~logichunk.boundaries.select_by_depth`
  (imported here as ``select_boundaries``): local maxima whose *depth* (TextTiling's: how far the
  score falls on both sides before it rises again) is at least half the depth of the document's
  deepest one. That is the main, honest number. (It replaced TextTiling's own cutoff, ``mean -
  std/2`` of the peaks' depths, which keeps a fixed share of the peaks and so over-segments long
  documents; the new rule was tried with the value 1/2 only, and checked on documents 300–600 of
  every set that has them before it was adopted — ``bench/QUALITY.md``.) With ``oracle=True`` the
  same peaks are ranked by depth and the top *gold-count* kept instead (labelled ``@gold-k``): it
  shows how good the signal's ranking is when the count is known, never the headline.
* segmenters (TextTiling, baselines, logichunk's ``global`` = :func:`logichunk.segment_units`) give
  boundaries directly; a segmenter with ``segment_count`` (``global``) also gives an ``@gold-k`` row
  with ``oracle=True``: its own cuts when told the gold count.
* chunkers (the semantic peers) chunk the units joined by newlines, told each line is a sentence;
  each chunk end snaps to the nearest unit boundary.

Metrics per document (Pk and WindowDiff averaged over documents; boundary P/R/F1 with ±1 tolerance
summed over the data set, then divided) — see :mod:`.metrics`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..boundaries import RELATIVE_DEPTH, depth_scores
from ..boundaries import peak_indices as peaks
from ..boundaries import select_by_depth as select_boundaries
from ..text.sentences import join_units as units_to_sents
from . import metrics as M
from .readers import SegDoc

__all__ = ["SegOutcome", "depth_scores", "peaks", "run_segmentation", "select_boundaries", "units_to_sents"]


def snap_to_units(ends: np.ndarray, unit_ends: np.ndarray) -> np.ndarray:
    """Chunk end offsets -> boundaries after the unit whose end is nearest (the last unit excluded)."""
    n = unit_ends.size
    if n < 2 or ends.size == 0:
        return np.zeros(0, dtype=np.int64)
    j = np.clip(np.searchsorted(unit_ends, ends), 0, n - 1)
    prev = np.clip(j - 1, 0, n - 1)
    pick = np.where(np.abs(unit_ends[prev] - ends) <= np.abs(unit_ends[j] - ends), prev, j)
    return np.unique(pick[pick <= n - 2]).astype(np.int64)


@dataclass
class SegOutcome:
    """Per-method results on one data set: ``rows`` (the oracle variant too, if asked), a sample
    gap-score ``curve`` for plotting (signals only), and the first row's Pk and WindowDiff per
    document (``per_doc``, for :mod:`.paired`)."""

    rows: list[dict[str, Any]]
    curve: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    per_doc: dict[str, np.ndarray] = field(default_factory=dict)


class _Acc:
    def __init__(self) -> None:
        self.pk: list[float] = []
        self.wd: list[float] = []
        self.counts = M.BoundaryCounts(0, 0, 0)
        self.docs = 0

    def add(self, doc: SegDoc, hyp: np.ndarray) -> None:
        self.docs += 1
        self.pk.append(M.pk(doc.boundaries, hyp, doc.n))
        self.wd.append(M.windowdiff(doc.boundaries, hyp, doc.n))
        self.counts = self.counts + M.boundary_counts(doc.boundaries, hyp, tolerance=1)

    def row(self) -> dict[str, Any]:
        if not self.docs:  # nothing was scored: no number, not a perfect one
            return {k: None for k in ("pk", "windowdiff", "f1", "boundary_precision", "boundary_recall",
                                      "hyp_per_doc", "gold_per_doc")}
        p, r, f = M.prf(self.counts)
        pk = np.asarray(self.pk, dtype=np.float64)
        wd = np.asarray(self.wd, dtype=np.float64)
        return {
            "pk": float(np.nanmean(pk)) if np.isfinite(pk).any() else None,
            "windowdiff": float(np.nanmean(wd)) if np.isfinite(wd).any() else None,
            "f1": f, "boundary_precision": p, "boundary_recall": r,
            "hyp_per_doc": self.counts.hyp / max(self.docs, 1), "gold_per_doc": self.counts.ref / max(self.docs, 1),
        }


def run_segmentation(docs: Sequence[SegDoc], name: str, runner: Any, *, peer: bool, dataset: str,
                     oracle: bool = False, method_is_oracle: bool = False, curve_index: int = 0,
                     progress: Callable[[int], None] | None = None,
                     relative: float | None = RELATIVE_DEPTH) -> SegOutcome:
    """Run one method over the documents and score it. ``relative``: the count rule of
    :func:`~logichunk.boundaries.select_by_depth` (None: TextTiling's mean - std/2 cutoff)."""
    main, orc = _Acc(), _Acc()
    curve = None
    notes: list[str] = []
    failures_before = getattr(runner, "failures", 0)
    t0 = time.perf_counter()
    has_scores = hasattr(runner, "gap_scores")
    for i, doc in enumerate(docs):
        sents = units_to_sents(doc.units)
        scores = None
        if doc.n < 2:
            hyp = np.zeros(0, dtype=np.int64)
        elif has_scores:
            scores = np.asarray(runner.gap_scores(sents), dtype=np.float64)
            if scores.shape != (doc.n - 1,):
                raise ValueError(f"{name}: gap_scores gave shape {scores.shape} for {doc.n} units")
            hyp = select_boundaries(scores, relative=relative)
            if oracle:
                orc.add(doc, select_boundaries(scores, k=doc.boundaries.size))
        elif hasattr(runner, "segment"):
            hyp = np.asarray(runner.segment(doc.units, doc.lang, gold_count=doc.boundaries.size), dtype=np.int64)
            if oracle and hasattr(runner, "segment_count"):
                orc.add(doc, np.asarray(runner.segment_count(doc.units, doc.boundaries.size), dtype=np.int64))
        else:
            located = runner.chunk(sents.text, doc.lang, units=True)
            hyp = snap_to_units(located.spans[:, 1] if located.spans.size else np.zeros(0, np.int64), sents.ends)
        main.add(doc, hyp)
        if i == curve_index and scores is not None:
            curve = {"dataset": dataset, "method": name, "doc_id": doc.id, "scores": scores.tolist(),
                     "gold": doc.boundaries.tolist(), "predicted": hyp.tolist(),
                     "units": [u[:80] for u in doc.units]}
        if progress:
            progress(i + 1)
    seconds = time.perf_counter() - t0
    base = {"task": "segmentation", "dataset": dataset, "method": name, "peer": peer, "n": len(docs),
            "seconds": round(seconds, 3), "oracle": method_is_oracle}
    rows = [{**base, **main.row()}]
    if oracle and (has_scores or hasattr(runner, "segment_count")):
        rows.append({**base, "method": f"{name}@gold-k", "oracle": True, **orc.row()})
    failures = getattr(runner, "failures", 0) - failures_before
    if failures:
        notes.append(f"{name}: failed on {failures} of {len(docs)} documents (scored as no boundary)")
        rows[0]["failures"] = failures
    per_doc = {"pk": np.asarray(main.pk, dtype=np.float64), "windowdiff": np.asarray(main.wd, dtype=np.float64)}
    return SegOutcome(rows, curve, notes, per_doc)

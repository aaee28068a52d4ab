"""Fit a :class:`~logichunk.memory.calibration.Calibration` on labelled conversations.

A labelled conversation is a list of turns and the turns that start a topic (the dialogue
segmentation sets of ``../shared/data/dialogue``: each unit one turn). What is fitted, in order:

1. **The rule** (step 3's default arbiter): a logistic regression of "this turn starts a topic" on the
   online features, computed *teacher-forced* — the perception is told the gold decisions, so each
   turn is compared with the kernel of its true topic, as it would be when the earlier decisions were
   right. Its threshold is then chosen by replaying the real pipeline (every turn in the grey zone).
2. **The screen** ``hi`` / ``lo``: chosen among quantiles of the cosine distribution (including "never")
   by replaying the pipeline with the fitted rule.
3. **The review** (``lookahead`` > 0): a logistic regression of the gold boundary on the review
   features, collected by replaying the immediate pipeline; then its threshold and the minimum topic
   length, by replay.
4. **The baseline** the design replaces: one cosine threshold on adjacent turns' embeddings (the raw
   turn texts), chosen the same way, so the comparison is calibrated on equal terms.

Every choice minimises the mean Pk over the calibration conversations (ties: the earlier candidate,
ordered from the simplest). Embeddings are computed once; the lexical features are memoised across
replays. Calibrate on data you will not report on (``logichunk memory calibrate`` records what it used).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .block import LogicalBlock, anchor_text, is_filler
from .calibration import ONLINE_FEATURES, OPTIONAL_FEATURES, REVIEW_FEATURES, Calibration, Logistic
from .perception import Perception
from .resume import FALSE_LINK_RATE, fit_threshold

__all__ = ["LabelledConversation", "arbiter_threshold", "calibrate", "conversations_from_units", "cosine_baseline",
           "pk_of", "segment"]


@dataclass(frozen=True)
class LabelledConversation:
    """Turns and the indices of the turns that start a topic (turn 0 excluded)."""

    id: str
    blocks: tuple[LogicalBlock, ...]
    starts: frozenset[int]

    @property
    def boundaries(self) -> np.ndarray:
        """Gap indices (a boundary after turn i), the segmentation sets' convention."""
        return np.asarray(sorted(s - 1 for s in self.starts), dtype=np.int64)


def conversations_from_units(docs: Iterable[Any]) -> list[LabelledConversation]:
    """Segmentation documents (``units`` + ``boundaries``, e.g. :class:`logichunk.eval.readers.SegDoc`)
    as conversations: each unit one turn (its text the user text; the previous unit is its context)."""
    out = []
    for d in docs:
        units = [u if u.strip() else "." for u in d.units]
        if not units:
            continue
        out.append(LabelledConversation(str(d.id), tuple(LogicalBlock(user=u) for u in units),
                                        frozenset(int(b) + 1 for b in np.asarray(d.boundaries).tolist())))
    return out


def pk_of(conv: LabelledConversation, starts: Iterable[int]) -> float:
    from ..eval.metrics import pk

    hyp = np.asarray(sorted(s - 1 for s in starts if 0 < s < len(conv.blocks)), dtype=np.int64)
    return float(pk(conv.boundaries, hyp, len(conv.blocks)))


class _Vectors:
    """Anchor vectors of every content turn, embedded once (in batches) for all replays."""

    def __init__(self, convs: Sequence[LabelledConversation], embedder: Any,
                 progress: Callable[[str], None] | None) -> None:
        texts: list[str] = []
        where: list[tuple[int, int]] = []
        for ci, c in enumerate(convs):
            prev = None
            for t, b in enumerate(c.blocks):
                if not is_filler(b.query, 0)[0]:  # (a short turn is a filler only if it says nothing new: embed it too)
                    texts.append(anchor_text(b, prev))
                    where.append((ci, t))
                prev = b
        t0 = time.perf_counter()
        vecs = _embed_all(embedder, texts, "query", progress, "anchors")
        self.vecs = {w: v for w, v in zip(where, vecs, strict=True)}
        self.seconds = time.perf_counter() - t0
        self.count = len(texts)

    def get(self, ci: int, t: int) -> np.ndarray | None:
        return self.vecs.get((ci, t))


def _embed_all(embedder: Any, texts: list[str], kind: str, progress: Callable[[str], None] | None,
               what: str, batch: int = 256) -> np.ndarray:
    dim = int(embedder.dim)
    out = np.zeros((len(texts), dim), np.float32)
    for lo in range(0, len(texts), batch):
        out[lo : lo + batch] = np.asarray(embedder.embed(texts[lo : lo + batch], kind=kind), np.float32)
        if progress and len(texts) > batch and (lo // batch) % 10 == 9:
            progress(f"embedded {min(lo + batch, len(texts))}/{len(texts)} {what}")
    return out


def segment(conv: LabelledConversation, ci: int, vectors: _Vectors, calibration: Calibration, embedder: Any,
            memo: dict[Any, Any], *, arbiter: Any = None, forced: bool = False,
            trace: list[tuple[int, int, dict[str, float], float, bool]] | None = None,
            online: list[tuple[int, int, dict[str, float]]] | None = None) -> set[int]:
    """Run the pipeline over one conversation; returns the turns that start a topic (final episodes).
    ``forced``: teacher forcing (gold decisions) — ``online`` collects each content turn's features."""
    p = Perception(embedder=embedder, calibration=calibration, arbiter=arbiter, lexical_memo=memo, links=False)
    if trace is not None:
        p.review_trace = []
    for t, b in enumerate(conv.blocks):
        d = p.observe(b, vector=vectors.get(ci, t), _forced=(t in conv.starts) if forced else None)
        if online is not None and "sim" in d.features:
            online.append((ci, t, dict(d.features)))
    p.flush()
    if trace is not None and p.review_trace is not None:
        trace.extend((ci, g, f, pr, g in conv.starts) for g, f, pr in p.review_trace)
    return set(p.boundaries())


def _mean_pk(convs: Sequence[LabelledConversation], vectors: _Vectors, cal: Calibration, embedder: Any,
             memo: dict[Any, Any]) -> float:
    vals = [pk_of(c, segment(c, i, vectors, cal, embedder, memo)) for i, c in enumerate(convs)]
    arr = np.asarray(vals, dtype=np.float64)
    return float(np.nanmean(arr)) if np.isfinite(arr).any() else float("nan")


def _best(cands: Sequence[Any], score: Callable[[Any], float]) -> tuple[Any, float, list[tuple[Any, float]]]:
    scored = [(c, score(c)) for c in cands]
    best = min(scored, key=lambda cs: (cs[1], scored.index(cs)))
    return best[0], best[1], scored


def _keep_immediate() -> Logistic:
    """A review model that confirms every immediate decision (P = split_now, saturated)."""
    return Logistic(("split_now",), (0.5,), (0.5,), (40.0,), 0.0)


#: Below any cosine: the "never split" comparison of the baseline search (evaluated, never returned).
_NEVER = -1.01


def cosine_baseline(convs: Sequence[LabelledConversation], embedder: Any, threshold: float | None = None,
                    progress: Callable[[str], None] | None = None,
                    notes: list[str] | None = None) -> tuple[float, list[set[int]], float]:
    """The plain cosine baseline: a topic starts where the cosine of adjacent turns' embeddings (their
    raw texts) falls below ``threshold``. With ``threshold=None`` it is chosen by Pk over quantiles of
    the cosines; when no quantile beats never splitting (the cosines cannot separate topic starts
    from continuations: an embedder that does not see topics), the stated default
    (``Calibration.baseline_threshold``, 0.3) is used instead and the reason goes to ``notes`` and
    ``progress``. The threshold returned is always within [-1, 1]. Returns ``(threshold, starts per
    conversation, mean Pk)``."""
    sims: list[np.ndarray] = []
    texts = [b.lexical_text() for c in convs for b in c.blocks]
    vecs = _embed_all(embedder, texts, "query", progress, "turns")
    at = 0
    for c in convs:
        v = vecs[at : at + len(c.blocks)]
        at += len(c.blocks)
        sims.append(np.einsum("ij,ij->i", v[1:], v[:-1]) if len(v) > 1 else np.zeros(0))

    def run(th: float) -> tuple[list[set[int]], float]:
        starts = [set((np.flatnonzero(s < th) + 1).tolist()) for s in sims]
        vals = np.asarray([pk_of(c, st) for c, st in zip(convs, starts, strict=True)])
        return starts, float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan")

    if threshold is None:
        allv = np.concatenate([s for s in sims if s.size]) if any(s.size for s in sims) else np.zeros(1)
        cands = np.unique(np.clip(np.quantile(allv, np.linspace(0.01, 0.6, 40)), -1.0, 1.0)).tolist()
        never = run(_NEVER)[1]
        threshold, best, _ = _best(cands, lambda th: run(th)[1])
        if not best < never:  # nan included: nothing to choose by
            default = Calibration.__dataclass_fields__["baseline_threshold"].default
            why = (f"the cosine baseline cannot separate topic starts on this data (no threshold beats never "
                   f"splitting: Pk {best:.4f} vs {never:.4f}); using the default threshold {default} instead")
            if notes is not None:
                notes.append(why)
            if progress:
                progress(why)
            threshold = default
    elif not -1.0 <= float(threshold) <= 1.0:
        raise InputError(f"a cosine threshold must be within [-1, 1], got {threshold}")
    starts, score = run(float(threshold))
    return float(threshold), starts, score


def _rows(items: Sequence[dict[str, float]], features: Sequence[str]) -> np.ndarray:
    x = np.asarray([[f.get(k, np.nan) for k in features] for f in items], dtype=np.float64)
    # a missing feature (a window without anchors on one side) takes the column mean: no evidence
    if x.size:
        col = np.nanmean(np.where(np.isfinite(x), x, np.nan), axis=0)
        col = np.where(np.isfinite(col), col, 0.0)
        bad = ~np.isfinite(x)
        x[bad] = np.take(col, np.nonzero(bad)[1])
    return x


def calibrate(convs: Sequence[LabelledConversation], embedder: Any, *, lookahead: int = 3, lookahead_items: int = 0,
              short_tokens: int = 5, kernel_decay: float = 0.8, without: Sequence[str] = (),
              extra: Sequence[str] = (), source: dict[str, Any] | None = None,
              progress: Callable[[str], None] | None = None) -> Calibration:
    """Fit a calibration on ``convs`` (see the module docstring). ``without`` leaves features out of
    both rules (ablations: ``("sim", "sim_prev", "window_sim")`` is the lexical-only pipeline);
    ``extra`` adds optional ones (:data:`~logichunk.memory.calibration.OPTIONAL_FEATURES`)."""
    known = set(ONLINE_FEATURES) | set(REVIEW_FEATURES) | set(OPTIONAL_FEATURES)
    bad = (set(without) | set(extra)) - known
    if bad or set(extra) - set(OPTIONAL_FEATURES):
        raise InputError(f"unknown features {sorted(bad or set(extra))}: known are {', '.join(sorted(known))} "
                         f"(optional: {', '.join(OPTIONAL_FEATURES)})")
    online_f = tuple(f for f in ONLINE_FEATURES + tuple(extra) if f not in without)
    review_f = tuple(f for f in REVIEW_FEATURES[:-3] + tuple(extra) + REVIEW_FEATURES[-3:] if f not in without)
    convs = [c for c in convs if len(c.blocks) >= 2]
    if not convs:
        raise InputError("calibration needs labelled conversations of at least two turns")
    if not any(c.starts for c in convs):
        raise InputError("calibration needs at least one labelled topic boundary")
    if lookahead < 0:
        raise InputError("lookahead must be >= 0")
    say = progress or (lambda _m: None)
    t0 = time.perf_counter()
    model_id = str(getattr(embedder, "model_id", ""))
    vectors = _Vectors(convs, embedder, progress)
    memo: dict[Any, Any] = {}
    base = Calibration(embedder=model_id, hi=1.0, lo=-1.0, short_tokens=short_tokens, kernel_decay=kernel_decay)

    # 1. the rule, teacher-forced
    online: list[tuple[int, int, dict[str, float]]] = []
    for i, c in enumerate(convs):
        segment(c, i, vectors, base, embedder, memo, forced=True, online=online)
    if not online:
        raise InputError("no content turns to fit on (every turn is a filler?)")
    x = _rows([f for _, _, f in online], online_f)
    y = np.asarray([0.0 if t in convs[ci].starts else 1.0 for ci, t, _ in online])  # 1 = same topic
    if y.min() == y.max():
        raise InputError("the calibration data has no topic start on a content turn")
    rule = Logistic.fit(x, y, online_f)
    say(f"rule fitted on {len(y)} turns ({int((1 - y).sum())} topic starts)")
    cal = base.with_(rule=rule)
    th, pk_rule, _ = _best([0.5, 0.4, 0.6, 0.3, 0.7, 0.8],
                           lambda v: _mean_pk(convs, vectors, cal.with_(rule_threshold=v), embedder, memo))
    cal = cal.with_(rule_threshold=th)
    say(f"rule threshold {th} (Pk {pk_rule:.3f})")

    # 2. the screen: hi first (lo off), then lo — coordinate search over quantiles, "never" first
    sims = np.asarray([f["sim"] for _, _, f in online], dtype=np.float64)
    his = [1.0] + sorted({round(float(np.quantile(sims, q)), 4) for q in (0.99, 0.95, 0.9, 0.8)}, reverse=True)
    if "sim" in without:  # no cosine in the rules: no cosine screen either
        his = [1.0]
    hi, _, _ = _best(his, lambda h: _mean_pk(convs, vectors, cal.with_(hi=h), embedder, memo))
    los = [-1.0] + sorted({round(float(np.quantile(sims, q)), 4) for q in (0.01, 0.03, 0.05, 0.1)})
    if "sim" in without:
        los = [-1.0]
    lo, pk_screen, _ = _best([v for v in los if v < hi],
                             lambda v: _mean_pk(convs, vectors, cal.with_(hi=hi, lo=v), embedder, memo))
    cal = cal.with_(hi=hi, lo=lo)
    say(f"screen hi={hi} lo={lo} (Pk {pk_screen:.3f})")
    report: dict[str, Any] = {"pk_rule_only": round(pk_rule, 4), "pk_immediate": round(pk_screen, 4)}

    # 3. the review
    if lookahead:
        probe = cal.with_(lookahead=lookahead, lookahead_items=lookahead_items, review=_keep_immediate(),
                          review_threshold=0.5)
        trace: list[tuple[int, int, dict[str, float], float, bool]] = []
        for i, c in enumerate(convs):
            segment(c, i, vectors, probe, embedder, memo, trace=trace)
        rx = _rows([f for _, _, f, _, _ in trace], review_f)
        ry = np.asarray([1.0 if gold else 0.0 for *_, gold in trace])
        if ry.min() == ry.max():
            raise InputError("the calibration data has no reviewable topic boundary")
        review = Logistic.fit(rx, ry, review_f)
        cal = cal.with_(lookahead=lookahead, lookahead_items=lookahead_items, review=review)
        cands = [(t, m) for m in (1, 2) for t in (0.5, 0.4, 0.3, 0.6, 0.25, 0.35, 0.2)]
        (rt, mt), pk_review, _ = _best(cands, lambda tm: _mean_pk(
            convs, vectors, cal.with_(review_threshold=tm[0], min_topic_turns=tm[1]), embedder, memo))
        cal = cal.with_(review_threshold=rt, min_topic_turns=mt)
        report["pk_review"] = round(pk_review, 4)
        say(f"review threshold {rt}, min topic turns {mt} (Pk {pk_review:.3f})")

    # the resume links' threshold, on the episodes the calibrated pipeline makes (resume.py)
    rt = fit_threshold([_episodes(c, segment(c, i, vectors, cal, embedder, memo)) for i, c in enumerate(convs)],
                       embedder)
    if rt is not None:
        cal = cal.with_(resume_threshold=rt)
        say(f"resume threshold {rt} (subject cosine; {FALSE_LINK_RATE:.0%} of the different-topic pairs reach it)")

    # 4. the baseline
    baseline_notes: list[str] = []
    bth, _, pk_base = cosine_baseline(convs, embedder, progress=progress, notes=baseline_notes)
    report["pk_baseline"] = round(pk_base, 4)
    if baseline_notes:
        report["baseline_fallback"] = baseline_notes[0]
    say(f"cosine baseline threshold {bth:.4f} (Pk {pk_base:.3f})")
    info = dict(source or {})
    if without:
        info["without"] = sorted(without)
    if extra:
        info["extra"] = sorted(extra)
    info.update({"conversations": len(convs), "turns": sum(len(c.blocks) for c in convs),
                 "topic_starts": sum(len(c.starts) for c in convs), "embedded_anchors": vectors.count,
                 "seconds": round(time.perf_counter() - t0, 1), **report})
    return cal.with_(baseline_threshold=round(bth, 6), source=info)


def _episodes(conv: LabelledConversation, starts: set[int]) -> list[tuple[tuple[LogicalBlock, ...], list[int]]]:
    """The conversation cut at ``starts``: each episode's blocks and its turns' gold topic numbers."""
    n = len(conv.blocks)
    gold = np.cumsum([1 if t in conv.starts and t > 0 else 0 for t in range(n)]).tolist()
    cuts = sorted({0, *starts, n})
    return [(conv.blocks[a:b], gold[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]


class _Recorder:
    """Wraps an arbiter during teacher forcing: keeps (score, truly the same topic) per question."""

    def __init__(self, inner: Any, conv: LabelledConversation) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "arbiter")
        self.reads_text = getattr(inner, "reads_text", True)
        self.conv = conv
        self.turn = 0
        self.seen: list[tuple[float, bool]] = []

    def judge(self, q: Any) -> Any:
        v = self.inner.judge(q)
        self.seen.append((float(v.score), self.turn not in self.conv.starts))
        return v


def arbiter_threshold(arbiter: Any, convs: Sequence[LabelledConversation], embedder: Any, calibration: Calibration,
                      *, progress: Callable[[str], None] | None = None) -> tuple[float, dict[str, Any]]:
    """The threshold on a scoring arbiter's ``score`` (P(same topic) of an LM, a reranker's score) that
    best separates same-topic from new-topic turns in the grey zone of ``calibration``: the perception
    is teacher-forced (each question is asked about the true topic), and the threshold maximises the
    balanced accuracy. Why: an LM's P(YES) is not calibrated at 0.5 (the packaged 0.5B model says NO
    far too often). Costs one arbiter call per grey-zone turn of ``convs``."""
    scores: list[tuple[float, bool]] = []
    vectors = _Vectors(convs, embedder, None)
    base = calibration.with_(lookahead=0)
    for i, c in enumerate(convs):
        rec = _Recorder(arbiter, c)
        p = Perception(embedder=embedder, calibration=base, arbiter=rec, links=False)
        for t, b in enumerate(c.blocks):
            rec.turn = t
            p.observe(b, vector=vectors.get(i, t), _forced=t in c.starts)
        scores.extend(rec.seen)
        if progress:
            progress(f"arbiter asked {len(scores)} question(s) in {i + 1}/{len(convs)} conversation(s)")
    if not scores or all(s for _, s in scores) or not any(s for _, s in scores):
        raise InputError("the grey zone of these conversations holds no questions of both kinds to fit on")
    x = np.asarray([a for a, _ in scores])
    same = np.asarray([b for _, b in scores])
    best, best_acc = 0.5, -1.0
    for th in np.unique(np.quantile(x, np.linspace(0.02, 0.98, 49))):
        pred = x >= th
        acc = 0.5 * (pred[same].mean() + (~pred[~same]).mean())
        if acc > best_acc:
            best, best_acc = float(th), float(acc)
    return best, {"questions": len(scores), "same_topic": int(same.sum()), "balanced_accuracy": round(best_acc, 4),
                  "mean_score_same": round(float(x[same].mean()), 4), "mean_score_new": round(float(x[~same].mean()), 4)}

"""Meta-Chunking: PPL chunking and margin-sampling (MSP) chunking, then dynamic merge to a target.

Both methods first find *meta-chunks* — runs of sentences the LM reads as one logical unit — and then
merge neighbouring meta-chunks up to the user's target length ``L`` through the shared
:func:`logichunk.boundaries.fit`. A cut is never placed inside a meta-chunk, unless that meta-chunk
alone is over the maximum (then ``fit`` splits it at its best gap by the signal); a single sentence
over the maximum is cut inside at its best clause/word break and a ``forced_split`` bubble says so.

* **PPL** (:func:`chunk_ppl`): per-sentence perplexity conditioned on all preceding text
  (:class:`~logichunk.signals.lm.PerplexitySignal`); a meta-chunk ends at sentence ``i`` when ``i`` is
  a local minimum whose drop from a neighbour exceeds θ — the paper's two kinds: lower than both
  neighbours, or lower than the previous one and equal to the next (the first sentence of a low
  plateau). The first and last sentences are never minima (the first is scored with no context).
* **MSP** (:func:`chunk_msp`): for each next sentence, the LM chooses between "1: split" and "2: keep
  together" given the current meta-chunk and that sentence (chat template when the model has one);
  ``margin = P(keep) − P(split)``; the sentence joins the meta-chunk when the margin exceeds a
  dynamic threshold — 0 at first, then the running mean of the last ``history`` margins.

Both return a flat :class:`~logichunk.tree.ChunkTree` (level 1 only) of exact spans, with method
``"ppl"`` or ``"msp"``.

``selection="global"`` keeps each signal but drops the per-point rules: the signal's break strength
per sentence gap, standardised over the document (PPL: :func:`~logichunk.signals.lm.minimum_depth` of
the curve; MSP: ``P(split) − P(keep)``, each next sentence judged against the text before it), becomes
the reward of cutting there in the default cascade's global choice (:func:`boundaries.fit_global`:
lexical cohesion inside chunks, a price per chunk, a fill preference, and the author's structure by
:func:`~logichunk.chunkers.logic_chain.structure_rewards` — a heading never ends a chunk, no cut inside
a paragraph that fits). ``"paper"`` is the rule above, unchanged; :data:`DEFAULT_SELECTION` says which
each chunker uses unless told (global for both).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .. import boundaries as bd
from ..errors import InputError
from ..ids import make_id
from ..models.lm import LanguageModel
from ..signals.cohesion import lexical_rows, span_keys
from ..signals.entropy import zscore as standardised  # the LM's break strength with no unit
from ..signals.lm import PerplexitySignal, minimum_depth
from ..text.charclass import CJK, classes
from ..text.measure import Measure, Meter
from ..text.sentences import SentenceSpans, split_sentences
from ..text.structure import PARAGRAPH, layout
from ..tree import ChunkTree, build_tree
from ..types import Bubble

__all__ = ["MSP_PROMPTS", "DEFAULT_SELECTION", "SELECTIONS", "chunk_meta", "chunk_msp", "chunk_ppl", "msp_margin", "ppl_minima"]

#: how the cuts are chosen from the LM's signal: ``"paper"`` — Meta-Chunking's per-point rules, then
#: the dynamic merge (:func:`boundaries.fit`); ``"global"`` — the signal as rewards of the cascade's
#: global choice (:func:`boundaries.fit_global`)
SELECTIONS = ("paper", "global")
#: the selection each meta chunker uses unless told, chosen on a named dev split (documents 300-329 of
#: Choi and DialSeg711; bench/QUALITY.md, "Meta-Chunking with the global selection"): global for both,
#: which won on both sets (MSP measured on 2026-11-26, after PPL)
DEFAULT_SELECTION = {"ppl": "global", "msp": "global"}


# --------------------------------------------------------------------------- PPL minima


def ppl_minima(values: np.ndarray, theta: float = 0.0) -> np.ndarray:
    """Mask of sentences after which a meta-chunk ends (Meta-Chunking's rule, via
    :func:`logichunk.boundaries.minima`): ``v[i]`` is a local minimum that lies more than θ below a
    neighbour, and strictly below the previous sentence (so a low plateau is cut once, at its first
    sentence — the paper's second kind). Never the first or the last sentence."""
    v = np.asarray(values, dtype=np.float64)
    n = v.size
    if n < 3:
        return np.zeros(n, dtype=bool)
    m = bd.minima(v, theta)
    m[1:] &= v[1:] < v[:-1]
    m[0] = False
    m[-1] = False
    return m


# --------------------------------------------------------------------------- shared assembly


def _check_sizes(max_size: int, target: int | None, min_size: int) -> bd.SizeLimits:
    if not isinstance(max_size, int | np.integer) or max_size < 1:
        raise InputError(f"max size must be a positive integer, got {max_size!r}")
    return bd.SizeLimits(int(max_size), None if target is None else int(target), int(min_size))


def _atoms(text: str, sents: SentenceSpans, limits: bd.SizeLimits, meter: Meter, method: str,
           source: str) -> tuple[np.ndarray, np.ndarray, list[Bubble]]:
    """Sentences as atoms, any sentence over the maximum cut inside first (tier 4, with a bubble; one
    under a heading leaves it room in its first piece, :func:`~logichunk.boundaries.forced_splits`): the
    atoms' edge offsets ``off`` and, per atom gap, the sentence gap it is (-1: a cut inside a
    sentence)."""
    starts, ends = sents.seam_spans()  # a line's indent goes with its line
    n = len(sents)
    big = np.flatnonzero(meter.sizes(starts, ends) > limits.max_size)
    inside: dict[int, list[int]] = {}
    bubbles: list[Bubble] = []
    if big.size:
        glued = np.zeros(n, dtype=bool)
        if n > 1:
            glued[1:] = layout(sents).no_cut
        found, bubbles = bd.forced_splits(text, meter, starts, ends, glued, big, limits.max_size, source=source,
                                          attempts=(method, "forced"))
        inside = dict(zip(big.tolist(), found, strict=True))
    offs: list[int] = [0]
    sent_of_gap: list[int] = []
    for i in range(n):
        for c in inside.get(i, ()):
            offs.append(c)
            sent_of_gap.append(-1)
        offs.append(int(ends[i]))
        if i < n - 1:
            sent_of_gap.append(i)
    return np.asarray(offs, dtype=np.int64), np.asarray(sent_of_gap, dtype=np.int64), bubbles


def _rows(text: str, sents: SentenceSpans, off: np.ndarray, cuts: list[int], prefix: np.ndarray, method: str,
          fields: Callable[[int, int, int | None], dict[str, Any]]) -> list[tuple[str, int, int, str, Mapping[str, Any]]]:
    """The chunk rows of ``text`` cut after the atoms ``cuts`` (atoms bounded by ``off``): each
    chunk's size and sentence range, then the selection's own ``fields(start, end, gap)`` (``gap``:
    the atom gap that closes the chunk, None for the last one)."""
    bounds = [0, *(int(off[c + 1]) for c in cuts), len(text)]
    seam_starts = sents.seam_spans()[0]
    gap_at = {int(off[g + 1]): g for g in range(off.size - 2)}
    rows: list[tuple[str, int, int, str, Mapping[str, Any]]] = []
    for k in range(len(bounds) - 1):
        a, b = bounds[k], bounds[k + 1]
        rows.append((make_id(None, k + 1), a, b, method, {
            "size": int(prefix[b] - prefix[a]),
            "sentences": [int(np.searchsorted(seam_starts, a, side="right")) - 1,
                          int(np.searchsorted(seam_starts, b, side="left"))],
            **fields(a, b, gap_at.get(b)),
        }))
    return rows


def _assemble(
    text: str,
    sents: SentenceSpans,
    cand: np.ndarray,
    scores: np.ndarray,
    limits: bd.SizeLimits,
    meter: Meter,
    method: str,
    stats: dict[str, Any],
    source: str,
) -> ChunkTree:
    """Cut ``text`` at candidate sentence gaps, fitted to ``limits`` by :func:`boundaries.fit`
    (the paper's selection)."""
    prefix = meter.prefix
    n = len(sents)
    off, sg, bubbles = _atoms(text, sents, limits, meter, method, source)
    forced = sg < 0
    floor = float(np.min(scores)) - 1.0 if scores.size else -1.0
    sc = np.full(sg.size, floor)  # a cut inside a sentence: weaker than any sentence gap
    cm = np.ones(sg.size, dtype=bool)
    ins = ~forced
    sc[ins] = np.asarray(scores, dtype=np.float64)[sg[ins]]
    cm[ins] = np.asarray(cand, dtype=bool)[sg[ins]]
    sizes = prefix[off[1:]] - prefix[off[:-1]]
    res = bd.fit(sizes, sc, limits, cm)
    # meta-chunk ends (candidate cuts) as offsets, to count meta-chunks per chunk
    meta_ends = off[1:-1][cm]

    def fields(a: int, b: int, g: int | None) -> dict[str, Any]:
        cut = "end" if g is None else "inner" if forced[g] else "meta" if cm[g] else "size"
        inside = int(np.count_nonzero((meta_ends > a) & (meta_ends < b)))
        return {"meta_chunks": inside + 1, "cut": cut, "cut_score": float(sc[g]) if g is not None else None}

    rows = _rows(text, sents, off, res.cuts.tolist(), prefix, method, fields)
    forced_cuts = sum(r[4]["cut"] == "size" for r in rows)
    stats.update({"sentences": n, "meta_chunks": int(cm.sum()) + 1, "chunks": len(rows),
                  "size_cuts": forced_cuts, "bubbles": len(bubbles)})
    return build_tree(text, rows, bubbles=tuple(bubbles), stats=stats, unit=meter.unit)


def _assemble_global(
    text: str,
    sents: SentenceSpans,
    signal_reward: np.ndarray,
    limits: bd.SizeLimits,
    meter: Meter,
    method: str,
    stats: dict[str, Any],
    source: str,
) -> ChunkTree:
    """Cut ``text`` by the cascade's global choice (:func:`boundaries.fit_global`): lexical cohesion
    inside chunks, the author's structure (:func:`~.logic_chain.structure_rewards`: a heading never
    ends a chunk, no cut inside a paragraph that fits) and ``signal_reward`` — the LM's standardised
    break strength per sentence gap — as rewards of the gaps cut. A text that fits the target is one
    chunk, as under the paper's merge."""
    from .logic_chain import structure_rewards  # the cascade's rules, one place

    prefix = meter.prefix
    n = len(sents)
    off, sg, bubbles = _atoms(text, sents, limits, meter, method, source)
    forced = sg < 0
    sizes = prefix[off[1:]] - prefix[off[:-1]]
    lay = layout(sents)
    inner = ~forced
    strength = np.zeros(sg.size, np.int64)  # a cut inside a sentence: the weakest structure
    heading = np.zeros(sg.size, dtype=bool)
    sig = np.zeros(sg.size)
    strength[inner] = lay.strength[sg[inner]]
    heading[inner] = lay.no_cut[sg[inner]]
    weak = np.zeros(sg.size, dtype=bool)
    weak[inner] = lay.lead_in[sg[inner]]
    sig[inner] = np.asarray(signal_reward, dtype=np.float64)[sg[inner]]
    m = lay.marks_at(inner, sg[inner], sg.size)
    reward, forbid = structure_rewards(strength, sizes, limits.max_size, block=m.block, held=heading, weak=weak,
                                       introduces=m.introduces, parts=m.parts, lists=m.lists, depth=m.depth)
    reward = reward + sig
    if int(sizes.sum()) <= limits.goal:
        forbid = inner.copy()
    reward = bd.forbid(reward, heading, weak)
    X = lexical_rows(text, off[:-1], off[1:])
    price = bd.chunk_prices(X, span_keys(text, off[:-1], off[1:]))
    cuts = bd.fit_global(sizes, X, reward, limits, glue=forbid, penalty=price, apart=strength >= PARAGRAPH).tolist()

    def fields(a: int, b: int, g: int | None) -> dict[str, Any]:
        cut = "end" if g is None else "inner" if forced[g] else "global"
        return {"cut": cut, "cut_score": float(sig[g]) if g is not None else None}

    rows = _rows(text, sents, off, cuts, prefix, method, fields)
    stats.update({"sentences": n, "chunks": len(rows), "bubbles": len(bubbles)})
    return build_tree(text, rows, bubbles=tuple(bubbles), stats=stats, unit=meter.unit)


def _check_selection(selection: str | None, method: str) -> str:
    """The selection asked for, or the method's default (:data:`DEFAULT_SELECTION`)."""
    if selection is None:
        return DEFAULT_SELECTION[method]
    if selection not in SELECTIONS:
        raise InputError(f"selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
    return selection


def _check_text(text: object) -> None:
    """A text is a str, checked before an empty one returns its empty tree: ``chunk_ppl(None, lm)`` gave a tree
    of text None, and ``b""`` one of bytes."""
    if not isinstance(text, str):
        raise InputError(f"text must be str, got {type(text).__name__}; decode bytes with logichunk.text.decode.read_text")


def _prepare(text: str) -> SentenceSpans:
    _check_text(text)
    return split_sentences(text)


def _given(text: str, sentences: SentenceSpans | None) -> SentenceSpans:
    """The splitter's sentences of ``text``, or the caller's units (checked to be its spans)."""
    if sentences is None:
        return _prepare(text)
    if sentences.text != text:
        raise InputError("sentences must be spans of the text being chunked")
    return sentences


def _unit_name(unit: str | Measure) -> str:
    return unit if isinstance(unit, str) else unit.name


# --------------------------------------------------------------------------- PPL chunking


def chunk_ppl(
    text: str,
    lm: LanguageModel | PerplexitySignal,
    *,
    max_size: int = 1000,
    target: int | None = None,
    min_size: int = 0,
    unit: str | Measure = "chars",
    theta: float = 0.0,
    selection: str | None = None,
    sentences: SentenceSpans | None = None,
    source: str = "<text>",
) -> ChunkTree:
    """PPL chunking + dynamic merge. ``target`` is ``L`` (default: ``max_size``), in ``unit``;
    ``theta`` is the minimum drop (nats of mean token NLL) for a minimum to end a meta-chunk.
    ``stats["curve"]`` holds the per-sentence NLL curve.

    ``selection="global"``: no meta-chunks and no θ; the curve's minimum depth per sentence gap
    (:func:`~logichunk.signals.lm.minimum_depth`), standardised over the document, is the reward of
    cutting there in the cascade's global choice (lexical cohesion, the author's structure, every chunk
    within ``max_size``; ``min_size`` is not used) — the default (:data:`DEFAULT_SELECTION`).
    ``"paper"``: the rule above.
    ``sentences``: spans of ``text`` to use as the units instead of the splitter's."""
    limits = _check_sizes(max_size, target, min_size)
    selection = _check_selection(selection, "ppl")
    _check_text(text)
    sig = lm if isinstance(lm, PerplexitySignal) else PerplexitySignal(lm)
    if not text:
        return build_tree(text, [], stats={"method": "ppl", "sentences": 0}, unit=_unit_name(unit))
    sents = _given(text, sentences)
    meter = Meter(text, unit)
    curve = sig.curve(sents)
    if selection == "global":
        stats_g: dict[str, Any] = {"method": "ppl", "model": sig.model_id, "selection": "global",
                                   "curve": curve.nll.tolist()}
        reward = standardised(minimum_depth(curve.nll))
        return _assemble_global(text, sents, reward, limits, meter, "ppl", stats_g, source)
    mins = ppl_minima(curve.nll, theta)
    cand = mins[:-1]
    scores = minimum_depth(curve.nll)
    stats: dict[str, Any] = {"method": "ppl", "model": sig.model_id, "theta": float(theta),
                             "curve": curve.nll.tolist()}
    return _assemble(text, sents, cand, scores, limits, meter, "ppl", stats, source)


# --------------------------------------------------------------------------- MSP chunking

MSP_PROMPTS = {
    "en": (
        "This is a text chunking task. You are an expert in text analysis. Given two consecutive "
        "pieces of a document, decide from their logical structure and meaning whether they belong "
        "in separate chunks.",
        "Piece A:\n{a}\n\nPiece B:\n{b}\n\nOptions:\n1. Split: B starts a new chunk.\n"
        "2. Keep: B continues A and stays in the same chunk.\nAnswer 1 or 2.",
    ),
    "zh": (
        "这是一个文本分块任务。你是一位文本分析专家，请根据两段相邻文字的逻辑结构和语义内容，判断它们是否应分在不同的块中。",
        "片段A：\n{a}\n\n片段B：\n{b}\n\n选项：\n1. 分割：B 开始一个新的块。\n2. 不分割：B 承接 A，保持在同一块中。\n请回答1或2。",
    ),
}


def _language(text: str) -> str:
    cls = classes(text[:4000])
    cjk = int(np.count_nonzero((cls & CJK) != 0))
    return "zh" if cjk * 4 >= max(1, cls.size) else "en"


def msp_margin(lm: LanguageModel, a: str, b: str, language: str = "en") -> float:
    """``P(keep) − P(split)`` for piece ``b`` after piece ``a`` (answers "2" and "1")."""
    system, user = MSP_PROMPTS[language]
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user.format(a=a, b=b)}]
    lp = np.asarray(lm.option_logprobs(messages, ["1", "2"]), dtype=np.float64)
    p = np.exp(lp)
    return float(p[1] - p[0])


def chunk_msp(
    text: str,
    lm: LanguageModel,
    *,
    max_size: int = 1000,
    target: int | None = None,
    min_size: int = 0,
    unit: str | Measure = "chars",
    history: int = 5,
    warmup: int = 1,
    context_chars: int = 1500,
    language: str | None = None,
    margin_fn: Callable[[str, str], float] | None = None,
    sentences: SentenceSpans | None = None,
    selection: str | None = None,
    source: str = "<text>",
) -> ChunkTree:
    """MSP chunking + dynamic merge. The threshold starts at 0 and, once ``warmup`` margins have
    been seen, becomes the mean of the last ``history`` margins (the reference uses ``warmup=5``;
    the default 1 adapts sooner to small models, which lean to one answer). The prompt shows the
    current meta-chunk (its last
    ``context_chars`` characters — the spans themselves are never shortened) and the next sentence.
    ``language``: ``"zh"``/``"en"`` prompt (default: detected). ``margin_fn(a, b)`` replaces the LM
    call (tests, or a remote judge). ``stats["margins"]`` and ``stats["thresholds"]`` hold the
    sequence of decisions, one per sentence gap. ``sentences``: spans of ``text`` to use as the units
    instead of the splitter's (given units, as in segmentation benchmarks).

    ``selection="global"``: no running threshold; each next sentence is judged against the text
    before it (its last ``context_chars`` characters, whatever was decided before), and ``P(split) −
    P(keep)``, standardised over the document, is the reward of cutting there in the cascade's global
    choice (as in :func:`chunk_ppl`; ``history`` and ``warmup`` are not used). ``"paper"`` (the
    default, :data:`DEFAULT_SELECTION`): the rule above."""
    limits = _check_sizes(max_size, target, min_size)
    selection = _check_selection(selection, "msp")
    if history < 1 or warmup < 1:
        raise InputError(f"history and warmup must be at least 1, got {history} and {warmup}")
    _check_text(text)
    if not text:
        return build_tree(text, [], stats={"method": "msp", "sentences": 0}, unit=_unit_name(unit))
    sents = _given(text, sentences)
    meter = Meter(text, unit)
    lang = language or _language(text)
    if lang not in MSP_PROMPTS:
        raise InputError(f"language must be one of {sorted(MSP_PROMPTS)}, got {lang!r}")
    fn = margin_fn or (lambda a, b: msp_margin(lm, a, b, lang))
    n = len(sents)
    starts, ends = sents.starts, sents.ends
    if selection == "global":
        gm = np.zeros(max(n - 1, 0))
        for j in range(1, n):
            a = text[max(0, int(ends[j - 1]) - context_chars) : int(ends[j - 1])].strip()
            b = text[int(starts[j]) : int(ends[j])].strip()[:context_chars]
            gm[j - 1] = float(fn(a, b))
        stats_g: dict[str, Any] = {"method": "msp", "model": getattr(lm, "model_id", ""), "language": lang,
                                   "selection": "global", "margins": gm.tolist()}
        return _assemble_global(text, sents, standardised(-gm), limits, meter, "msp", stats_g, source)
    margins: list[float] = []
    thresholds: list[float] = []
    cand = np.zeros(max(n - 1, 0), dtype=bool)
    cur = 0  # first sentence of the current meta-chunk
    threshold = 0.0
    for j in range(1, n):
        a_lo = max(int(starts[cur]), int(ends[j - 1]) - context_chars)
        a = text[a_lo : int(ends[j - 1])].strip()
        b = text[int(starts[j]) : int(ends[j])].strip()
        if len(b) > context_chars:
            b = b[:context_chars]
        m = float(fn(a, b))
        margins.append(m)
        thresholds.append(threshold)
        if not m > threshold:
            cand[j - 1] = True
            cur = j
        if len(margins) >= warmup:
            threshold = float(np.mean(margins[-history:]))
    mg = np.asarray(margins, dtype=np.float64)
    # gap strength for fit: how far below its threshold the keep-margin fell
    scores = np.asarray(thresholds, dtype=np.float64) - mg if mg.size else np.zeros(0)
    stats: dict[str, Any] = {"method": "msp", "model": getattr(lm, "model_id", ""), "language": lang,
                             "history": history, "warmup": warmup, "margins": mg.tolist(), "thresholds": thresholds}
    return _assemble(text, sents, cand, scores, limits, meter, "msp", stats, source)


def chunk_meta(text: str, lm: LanguageModel, method: str = "ppl", **kwargs: Any) -> ChunkTree:
    """``method="ppl"`` → :func:`chunk_ppl`, ``"msp"`` → :func:`chunk_msp` (keyword arguments pass on)."""
    if method == "ppl":
        return chunk_ppl(text, lm, **kwargs)
    if method == "msp":
        return chunk_msp(text, lm, **kwargs)
    raise InputError(f"meta-chunking method must be 'ppl' or 'msp', got {method!r}")

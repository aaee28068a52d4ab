"""Many short texts through the logic-chain cascade in one pass: the same trees as one call per text.

Why: a knowledge base is mostly paragraphs, and one :func:`~logichunk.chunk` call costs a few hundred
small numpy operations whatever the text's length (~0.3–0.5 ms). Here the texts that need a cut share
those operations. Nothing of one text can reach another:

* the texts are joined by a line break, which no word or sentence crosses, and each text is a piece
  of the cascade, whose edges are always cut and never merged away;
* sentences are split text by text (their rules look at what follows a mark);
* the tier-1 signal reads the content items of the joined texts with 256 filler items (an id no item
  has) between two texts, so no cache-model link crosses, and every gap is judged on the items of its
  own text only (windows shrink at a text's edges exactly as they do for a text alone);
* tier-1 candidates are peaks within a text (the seams score −∞, which :func:`boundaries.peaks`
  reads as an edge);
* tier 3 reads each text's own windows and normalises its components over that text's gaps only;
* stats and bubbles are counted and located per text.

With a custom measure (a real tokenizer may read across the seams) texts go one by one, and so do they
with an LLM, an LM signal or another tier-1 signal (an LLM reads one text at a time; another signal scores
gaps its own way). The shared pass takes about a megabyte of text at a time, so its working arrays stay
bounded however many texts a framework hands over.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..signals import GapSignal
from ..signals.items import content_items
from ..signals.novelty import novelty_jump, novelty_prefix_of
from ..text.measure import Measure, Meter
from ..text.sentences import SentenceSpans, laid_end_to_end, split_many
from ..text.tokens import fit_limit, measure_for
from ..tree import ChunkTree, build_tree, build_tree_columns
from .llm_breaks import ChatModel
from .logic_chain import (
    CascadeSettings,
    Pieces,
    _cascade,
    _Columns,
    _one_chunk,
    _Run,
    check_sizes,
    chunk,
    level_sizes,
)
from .overlap import add_overlap, check_overlap
from .snap import snap_tree

__all__ = ["chunk_many"]

SEP = "\n"
FILLERS = 256  # at least MAX_LOOKBACK items: no link of the cache model crosses a seam
FILLER_ID = np.uint32(1 << 18)  # no item has it: word ids are in [2^19, 2^20), CJK code points below 2^18


def chunk_many(
    texts: Iterable[str],
    *,
    max_size: int = 1000,
    sizes: Sequence[int] | None = None,
    levels: int = 3,
    unit: str | Measure = "chars",
    target_ratio: float = 1.0,
    composite: bool = True,
    selection: str = "global",
    sources: Sequence[str] | None = None,
    tokenizer: Any = None,
    overlap: int = 0,
    llm: ChatModel | None = None,
    lm_signal: GapSignal | None = None,
    signal: GapSignal | None = None,
) -> list[ChunkTree]:
    """:func:`~logichunk.chunk` for each of ``texts`` (same arguments), as one pass where it can be:
    the result is the list of trees one call per text would give. ``sources`` names each text in
    its bubbles (default ``<text>``). With a ``tokenizer`` each text is its own pass; with ``llm``,
    ``lm_signal`` or ``signal`` each text is one :func:`~logichunk.chunk` call (no speed-up: they read
    one text at a time). ``overlap`` gives every chunk its ``meta["overlap_span"]``, as ``chunk`` does."""
    unit = measure_for(unit, tokenizer)
    lim = check_sizes(sizes) if sizes is not None else level_sizes(max_size, levels)
    lim = tuple(fit_limit(x, unit) for x in lim)
    cfg = CascadeSettings(sizes=lim, unit=unit, target_ratio=target_ratio, composite=composite,
                          selection=selection)
    check_overlap(overlap)
    if isinstance(texts, str | bytes):  # a str is a sequence of characters: almost surely a mistake
        raise InputError("chunk_many takes a list of texts; for one text use chunk(text)")
    if not isinstance(texts, Iterable):
        raise InputError(f"chunk_many takes a list of texts, got {type(texts).__name__}")
    texts = list(texts)  # (any iterable of texts: a generator too)
    names = list(sources) if sources is not None else ["<text>"] * len(texts)
    if len(names) != len(texts):
        raise InputError(f"{len(names)} sources for {len(texts)} texts")
    if not all(isinstance(n, str) for n in names):
        raise InputError("each source must be a str (a file name, a URL): what bubbles and records name")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"text {i} must be str, got {type(text).__name__}")
    if llm is not None or lm_signal is not None or signal is not None:
        return [chunk(text, max_size=max_size, sizes=sizes, levels=levels, unit=unit, target_ratio=target_ratio,
                      llm=llm, lm_signal=lm_signal, signal=signal, composite=composite, selection=selection,
                      source=name, overlap=overlap) for text, name in zip(texts, names, strict=True)]
    out: list[ChunkTree | None] = [None] * len(texts)
    batch: list[tuple[int, Meter, SentenceSpans]] = []
    shared = isinstance(unit, str)  # a custom measure (a real tokenizer) may read across the seams
    splits = split_many(texts)  # (the short texts' soft wraps read in one pass)
    for i, text in enumerate(texts):
        if not text:
            out[i] = build_tree(text, [], stats={"llm_calls": 0, "tier2_skipped": 0, "tier3_skipped": 0, "sentences": 0},
                                unit=unit if isinstance(unit, str) else unit.name)
            continue
        meter, sents = Meter(text, unit), splits[i]
        out[i] = _one_chunk(text, cfg, meter, sents)
        if out[i] is None and not shared:
            out[i] = snap_tree(_cascade(text, cfg, None, None, names[i], meter, sents), unit)
        elif out[i] is None:
            batch.append((i, meter, sents))
    for group in _groups(batch, [len(texts[i]) for i, _, _ in batch]):
        for i, tree in _shared_pass([texts[i] for i, _, _ in group], [s for _, _, s in group], cfg,
                                    [names[i] for i, _, _ in group], [m for _, m, _ in group]):
            out[group[i][0]] = tree
    return [add_overlap(t, overlap, unit) for t in out if t is not None]


GROUP = 1 << 20  # characters a shared pass takes at most (unless one text is longer): ~20 MiB of arrays


def _groups(batch: list[Any], lengths: list[int]) -> list[list[Any]]:
    """``batch`` in consecutive runs of about :data:`GROUP` characters (each text in one run whole)."""
    out: list[list[Any]] = []
    run: list[Any] = []
    size = 0
    for item, n in zip(batch, lengths, strict=True):
        if run and size + n > GROUP:
            out.append(run)
            run, size = [], 0
        run.append(item)
        size += n
    return out + [run] if run else out


def _shared_pass(texts: list[str], sents: list[SentenceSpans], cfg: CascadeSettings, names: list[str],
                 meters: list[Meter]) -> list[tuple[int, ChunkTree]]:
    """Trees for ``texts`` (each needs a cut), from one cascade over all of them."""
    n = len(texts)
    lens = np.fromiter((len(t) for t in texts), np.int64, n)
    # sentences: each text's own, shifted; the separator is a one-character sentence of its own
    all_sents, starts, is_seam = laid_end_to_end(texts, sents, SEP)
    joined = all_sents.text
    sig = cfg.signal

    # tier 1: the cache-perplexity jump of each text's gaps, on its own items only
    pos, ids = content_items(joined)
    lo = np.searchsorted(pos, starts)
    hi = np.searchsorted(pos, starts + lens)
    at = np.repeat(hi[:-1], FILLERS)  # fillers after each text but the last
    pos_aug = np.insert(pos, at, np.repeat(starts[:-1] + lens[:-1], FILLERS))
    ids_aug = np.insert(ids, at, FILLER_ID)
    P = novelty_prefix_of(ids_aug, sig.lookback)
    shift = np.arange(n, dtype=np.int64) * FILLERS
    lo_aug, hi_aug = lo + shift, hi + shift
    gaps = all_sents.ends[:-1]
    text_of_gap = np.searchsorted(starts, gaps, side="right") - 1
    b = np.searchsorted(pos_aug, gaps, side="left")
    room = np.maximum(np.minimum(b - lo_aug[text_of_gap], hi_aug[text_of_gap] - b), 0)
    raw = sig.squash(novelty_jump(P, b, room, sig.scales)) if sig.scales else np.zeros(gaps.size)
    few = (hi - lo)[text_of_gap] < 2  # a text with fewer than two items scores 0, as on its own
    raw[few] = sig.squash(np.zeros(int(few.sum())))
    raw[is_seam] = -np.inf

    run = _Run(joined, cfg, None, None, "<many>", Meter(joined, cfg.unit), all_sents, raw=raw,
               gap_text=text_of_gap, text_edges=(starts, starts + lens))
    cols = _Columns()
    run.levels(Pieces(np.asarray(starts, np.int64), np.asarray(starts + lens, np.int64)), cols)
    return _split(texts, sents, starts, run, cols, cfg, names, meters)


def _split(texts: list[str], sents: list[SentenceSpans], starts: np.ndarray, run: _Run, cols: _Columns,
           cfg: CascadeSettings, names: list[str], meters: list[Meter]) -> list[tuple[int, ChunkTree]]:
    """One tree per text from the shared pass: its rows shifted back, its stats and bubbles."""
    ids, lo_col, hi_col, methods, size_col, score_col = cols.ordered()
    row_starts = np.asarray(lo_col, np.int64)
    edges = np.searchsorted(row_starts, np.append(starts, np.iinfo(np.int64).max), side="left")
    skipped, skipped3 = (np.bincount(np.searchsorted(starts, np.asarray(at, np.int64), side="right") - 1,
                                     minlength=len(texts)) if at else np.zeros(len(texts), np.int64)
                         for at in (run.skipped_at, run.t3_skipped_at))
    bubbles: list[list] = [[] for _ in texts]
    for bb in run.bubbles:
        a, e = bb.context["span"]
        k = int(np.searchsorted(starts, a, side="right")) - 1
        o = int(starts[k])
        bubbles[k].append(replace(bb, context={**bb.context, "source": names[k], "span": [a - o, e - o]}))
    out = []
    order = ("whole", *run.tiers)
    for k, text in enumerate(texts):
        a, e = int(edges[k]), int(edges[k + 1])
        o = int(starts[k])
        mine = methods[a:e]
        counts = {name: c for name in dict.fromkeys(order) if (c := mine.count(name))}
        stats = {"llm_calls": 0, "tier2_skipped": int(skipped[k]), "tier3_skipped": int(skipped3[k]),
                 "sentences": len(sents[k]),
                 "signal": cfg.signal.name, "methods": counts, "bubbles": len(bubbles[k])}
        out.append((k, build_tree_columns(text, ids[a:e], [x - o for x in lo_col[a:e]], [x - o for x in hi_col[a:e]],
                                          methods[a:e], {"size": size_col[a:e], "cut_score": score_col[a:e]},
                                          bubbles=tuple(bubbles[k]), stats=stats, unit=meters[k].unit)))
    return out

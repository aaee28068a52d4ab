"""The logic-chain chunker: a four-tier cascade that falls back from pure algorithm to LLM help to a
forced split, level by level, and records every failure.

For each piece (the whole text at level 1, a chunk at deeper levels) with a size limit ``L``:

* **tier 1, entropy** — the model-free gap signal proposes cuts at its peaks (and at paragraph or
  heading breaks); if the runs between them fit ``L`` the tier succeeded;
* **tier 2, llm** — runs still over ``L`` are shown to the LLM, which points at sentence numbers
  where the logic breaks (skipped, and counted as skipped, without an LLM);
* **tier 3, composite** — runs still over ``L`` are split at their best gaps by a composite of
  entropy and n-gram perplexity (and LM perplexity when one is configured);
* **tier 4, forced** — a single sentence over ``L`` is cut inside at its best clause/word break,
  and a :class:`~logichunk.types.Bubble` records it for an LLM reviewer.

Then neighbours merge, least trusted and weakest cut first, up to the target. Pieces over the next
level's limit get children the same way, down to ``len(sizes)`` levels. Every chunk records the
tier of the cut that closes it (the last chunk of a piece: the cut that opens it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import boundaries as bd
from ..errors import InputError
from ..ids import make_id
from ..signals import GapSignal
from ..signals.entropy import CompositeSignal, EntropySignal
from ..text.measure import Measure, Meter
from ..text.sentences import BREAK_PARAGRAPH, SentenceSpans, split_sentences
from ..tree import ChunkTree, build_tree
from ..types import Bubble
from .llm_breaks import ChatModel, llm_breaks

TIERS = ("entropy", "llm", "composite", "forced")
_BREAK_NAMES = {3: "clause", 2: "word", 1: "cjk-char", 0: "char"}


def level_sizes(max_size: int = 1000, levels: int = 3) -> tuple[int, ...]:
    """Default limits per level, from the top down: the maximum, half, a fifth (1000/500/200)."""
    if not isinstance(max_size, int | np.integer) or max_size < 1:
        raise InputError(f"max size must be a positive integer, got {max_size!r}")
    if levels < 1:
        raise InputError(f"levels must be at least 1, got {levels}")
    ratios = (1.0, 0.5, 0.2, 0.1, 0.05)
    out = []
    for k in range(levels):
        r = ratios[k] if k < len(ratios) else ratios[-1] / 2 ** (k - len(ratios) + 1)
        out.append(max(1, int(max_size * r)))
    return tuple(out)


@dataclass(frozen=True)
class CascadeSettings:
    """Knobs of the cascade. ``sizes`` are the limits per level (top first), in ``unit``.

    ``target_ratio``: pieces merge up to ``ratio * limit``. ``peak_drop``: θ, how far a gap score
    must rise above a neighbour to be a tier-1 candidate. ``structure_bonus``: added to gap scores
    by break kind (none, line, paragraph, heading/fence) so structure the author wrote counts.
    """

    sizes: tuple[int, ...] = (1000, 500, 200)
    unit: str | Measure = "chars"
    target_ratio: float = 1.0
    peak_drop: float = 0.0
    structure_bonus: tuple[float, float, float, float] = (0.0, 0.05, 0.3, 1.0)
    signal: GapSignal = field(default_factory=EntropySignal)

    def __post_init__(self) -> None:
        if not self.sizes:
            raise InputError("at least one size limit is needed")
        for s in self.sizes:
            if not isinstance(s, int | np.integer) or s < 1:
                raise InputError(f"size limits must be positive integers, got {self.sizes}")
        if list(self.sizes) != sorted(self.sizes, reverse=True):
            raise InputError(f"size limits must not grow with depth, got {self.sizes}")
        if not 0 < self.target_ratio <= 1:
            raise InputError(f"target ratio must be in (0, 1], got {self.target_ratio}")


class _Run:
    """State of one cascade over one text (boundaries grow as tier 4 splits sentences)."""

    def __init__(self, text: str, settings: CascadeSettings, llm: ChatModel | None,
                 lm_signal: GapSignal | None, source: str) -> None:
        self.text = text
        self.cfg = settings
        self.llm = llm
        self.lm_signal = lm_signal
        self.source = source
        self.meter = Meter(text, settings.unit)
        self.prefix = self.meter.prefix
        self.sents: SentenceSpans = split_sentences(text)
        ns = len(self.sents)
        raw = settings.signal.gap_scores(self.sents) if ns > 1 else np.zeros(0)
        bonus = np.asarray(settings.structure_bonus, dtype=np.float64)[self.sents.breaks.astype(np.int64)]
        score = np.asarray(raw, dtype=np.float64) + bonus
        cand = bd.peaks(score, settings.peak_drop) | (self.sents.breaks >= BREAK_PARAGRAPH)
        # boundary offsets inside the text, their scores and their tier rank (0..3)
        self.B = self.sents.ends[:-1].astype(np.int64) if ns else np.zeros(0, np.int64)
        self.S = score
        self.R = np.where(cand, 0, 2).astype(np.int64)
        self.composite_done = False
        self.bubbles: list[Bubble] = []
        self.bubbled: set[int] = set()
        self.stats: dict[str, Any] = {"llm_calls": 0, "tier2_skipped": 0, "sentences": ns,
                                      "signal": settings.signal.name}

    # ------------------------------------------------------------------ tiers 2-4 helpers
    def _ensure_composite(self) -> None:
        if self.composite_done:
            return
        self.composite_done = True
        ns = len(self.sents)
        if ns < 2:
            return
        comp = np.asarray(CompositeSignal(extra=self.lm_signal).gap_scores(self.sents), dtype=np.float64)
        bonus = np.asarray(self.cfg.structure_bonus, dtype=np.float64)[self.sents.breaks.astype(np.int64)]
        comp = comp + bonus
        # map sentence gaps to current boundaries (tier-4 cuts may have been inserted)
        pos = np.searchsorted(self.B, self.sents.ends[:-1])
        rank2 = self.R[pos] == 2
        self.S[pos[rank2]] = comp[rank2]

    def _insert(self, offsets: list[int]) -> None:
        offsets = sorted(offsets)
        at = np.searchsorted(self.B, offsets)
        self.B = np.insert(self.B, at, offsets)
        self.S = np.insert(self.S, at, -1.0)
        self.R = np.insert(self.R, at, 3)

    def _force_inner(self, start: int, end: int, limit: int, level: int) -> list[int]:
        """Tier 4 on one over-long atom: its inner cut offsets, and a bubble (once per sentence)."""
        cuts, worst = bd.inner_breaks(self.text, start, end, self.prefix, limit)
        if not cuts:
            worst = 0  # one character wider than the limit: it stays over, and the bubble says so
        sent = int(np.searchsorted(self.sents.ends, start, side="right"))
        if sent in self.bubbled:
            return cuts
        self.bubbled.add(sent)
        edges = [start, *cuts, end]
        sizes = [int(self.prefix[b] - self.prefix[a]) for a, b in zip(edges, edges[1:], strict=False)]
        excerpt = self.text[start : min(end, start + 120)]
        attempts = ["entropy", "llm" if self.llm is not None else "llm:skipped", "composite", "forced"]
        self.bubbles.append(Bubble(
            category="forced_split",
            content=excerpt + ("…" if end - start > 120 else ""),
            priority="high" if worst <= 1 else "medium",
            context={
                "source": self.source, "span": [start, end], "level": level, "limit": limit,
                "unit": self.meter.unit, "attempts": attempts, "final_method": "forced",
                "break": _BREAK_NAMES[worst], "sizes": sizes,
            },
        ))
        return cuts

    def _ask_llm(self, offs: np.ndarray, lo: int, a: int, b: int) -> None:
        """Tier 2 on atoms a..b-1 of the current piece (global boundary index lo+k is gap k)."""
        texts = [self.text[int(offs[k]) : int(offs[k + 1])] for k in range(a, b)]
        self.stats["llm_calls"] += 1
        for g in llm_breaks(self.llm, texts):  # type: ignore[arg-type]
            gi = lo + a + g
            if self.R[gi] >= 1:
                self.R[gi] = 1

    # ------------------------------------------------------------------ one piece
    def split(self, cs: int, ce: int, level: int, parent: str | None, rows: list) -> None:
        limit = self.cfg.sizes[level - 1]
        for _ in range(2):
            lo = int(np.searchsorted(self.B, cs, side="right"))
            hi = int(np.searchsorted(self.B, ce, side="left"))
            offs = np.concatenate(([cs], self.B[lo:hi], [ce]))
            asz = self.prefix[offs[1:]] - self.prefix[offs[:-1]]
            big = np.flatnonzero(asz > limit)
            # only the user's maximum (level 1) cuts inside a sentence; deeper levels keep an
            # over-long sentence whole as a leaf rather than break it for a finer view
            if big.size == 0 or level > 1:
                break
            new: list[int] = []
            for k in big.tolist():
                new.extend(self._force_inner(int(offs[k]), int(offs[k + 1]), limit, level))
            if new:
                self._insert(new)
        rk = self.R[lo:hi]
        if rk.size:
            # runs between trusted candidates that are still too big: tier 1 failed there
            cand = rk <= 1
            edges = np.concatenate(([0], np.flatnonzero(cand) + 1, [asz.size]))
            cum = np.concatenate(([0], np.cumsum(asz)))
            run_size = cum[edges[1:]] - cum[edges[:-1]]
            failed = [(int(edges[i]), int(edges[i + 1])) for i in np.flatnonzero(
                (run_size > limit) & (edges[1:] - edges[:-1] > 1)).tolist()]
            if failed:
                if self.llm is not None:
                    for a, b in failed:
                        self._ask_llm(offs, lo, a, b)
                else:
                    self.stats["tier2_skipped"] += len(failed)
                self._ensure_composite()
                rk = self.R[lo:hi]
        sc = self.S[lo:hi]
        target = max(1, int(limit * self.cfg.target_ratio))
        res = bd.fit(asz, sc, bd.SizeLimits(limit, target=target), rk <= 1, rank=rk)
        cuts = res.cuts
        if cuts.size == 0 and level > 1:
            return
        bounds = np.concatenate(([cs], offs[cuts + 1], [ce])).tolist()
        cut_rank = res.rank.tolist()
        cut_score = sc[cuts].tolist() if cuts.size else []
        nxt = self.cfg.sizes[level] if level < len(self.cfg.sizes) else None
        for i in range(len(bounds) - 1):
            a, b = bounds[i], bounds[i + 1]
            # the cut that closes a chunk names it (the last chunk: the cut that opened it)
            closing = i if i < len(cut_rank) else i - 1
            method = TIERS[cut_rank[closing]] if cut_rank else "whole"
            size = int(self.prefix[b] - self.prefix[a])
            cid = make_id(parent, i + 1)
            meta = {"size": size, "cut_score": cut_score[i] if i < len(cut_score) else None}
            rows.append((cid, a, b, method, meta))
            if nxt is not None and size > nxt:
                self.split(a, b, level + 1, cid, rows)


def chunk_logic_chain(
    text: str,
    settings: CascadeSettings | None = None,
    *,
    llm: ChatModel | None = None,
    lm_signal: GapSignal | None = None,
    source: str = "<text>",
) -> ChunkTree:
    """Run the cascade over ``text`` and return its chunk tree (see the module docstring)."""
    if not isinstance(text, str):
        raise InputError(f"text must be str, got {type(text).__name__}; decode bytes with logichunk.read_text")
    cfg = settings or CascadeSettings()
    unit = cfg.unit if isinstance(cfg.unit, str) else cfg.unit.name
    if not text:
        return build_tree(text, [], stats={"llm_calls": 0, "tier2_skipped": 0, "sentences": 0}, unit=unit)
    run = _Run(text, cfg, llm, lm_signal, source)
    rows: list[tuple[str, int, int, str, Mapping[str, Any]]] = []
    run.split(0, len(text), 1, None, rows)
    counts: dict[str, int] = {}
    for _, _, _, method, _ in rows:
        counts[method] = counts.get(method, 0) + 1
    run.stats["methods"] = counts
    run.stats["bubbles"] = len(run.bubbles)
    return build_tree(text, rows, bubbles=tuple(run.bubbles), stats=run.stats, unit=unit)


def chunk(
    text: str,
    *,
    max_size: int = 1000,
    sizes: Sequence[int] | None = None,
    levels: int = 3,
    unit: str | Measure = "chars",
    target_ratio: float = 1.0,
    llm: ChatModel | None = None,
    lm_signal: GapSignal | None = None,
    signal: GapSignal | None = None,
    source: str = "<text>",
) -> ChunkTree:
    """Chunk ``text`` where its logic breaks, as a tree of dotted ids.

    ``max_size`` is the limit of level-1 chunks (in ``unit``: ``"chars"``, ``"bytes"``,
    ``"tokens"`` or a :class:`~logichunk.text.measure.Measure`); deeper levels default to half and
    a fifth of it (``levels`` deep). Pass ``sizes`` to set every level's limit yourself.
    """
    lim = tuple(int(s) for s in sizes) if sizes is not None else level_sizes(max_size, levels)
    cfg = CascadeSettings(sizes=lim, unit=unit, target_ratio=target_ratio,
                          signal=signal if signal is not None else EntropySignal())
    return chunk_logic_chain(text, cfg, llm=llm, lm_signal=lm_signal, source=source)

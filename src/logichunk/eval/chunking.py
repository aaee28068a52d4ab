"""The chunking task (span retrieval at a fixed token budget) and the retrieval task's extension point.

Chunking: every method chunks every document of a corpus at the same target size; chunks and
queries are embedded by the *same* embedder; for each query the chunks are ranked by cosine and
taken in order until the retrieved-token budget is spent — the last chunk is cut to fit, so every
method gets exactly the same number of tokens per query whatever its chunk sizes. The retrieved
spans are scored against the gold character spans (Chroma-style recall / precision / IoU, evidence
recall, doc recall, MRR — see :mod:`.metrics`). Tokens are logichunk's offline heuristic tokens
(``unit="tokens"``: one per CJK character or punctuation mark, one per started 6 letters of a word).

Retrieval: ``MODES`` maps a mode name to a factory building a :class:`Searcher` over a corpus.
``basic`` (exact dense search over one method's chunks) lives here; store-based modes (parent,
hybrid, ...) register themselves with :func:`register_mode` when the store lands, and are scored by
the same code. A mode that is not registered is skipped with a note.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..models.embedding import l2_normalize
from ..text.measure import get_measure
from ..text.tokens import unit_label
from . import metrics as M
from .methods import Located, Settings
from .readers import Corpus

__all__ = [
    "ChunkIndex", "Hitlist", "MODES", "Searcher", "budget_take", "chunk_corpus", "embed", "register_mode",
    "run_chunking", "run_retrieval", "score_hits", "score_items",
]


# --------------------------------------------------------------------------- corpus layout


@dataclass(frozen=True)
class Layout:
    """All documents in one coordinate space (``"\\n"`` between them) and its token prefix."""

    offsets: np.ndarray
    lengths: np.ndarray
    prefix: np.ndarray  # tokens before each global position (len total+1)
    doc_ids: list[str]

    @classmethod
    def of(cls, corpus: Corpus, unit: str) -> Layout:
        lengths = np.asarray([len(d.text) for d in corpus.docs], dtype=np.int64)
        offsets = M.doc_offsets(lengths)
        joined = "\n".join(d.text for d in corpus.docs)
        return cls(offsets, lengths, get_measure(unit).prefix(joined), [d.doc_id for d in corpus.docs])

    def gold(self, q, index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        off = np.asarray([self.offsets[index[d]] for d, _, _ in q.gold_spans], dtype=np.int64)
        s = np.asarray([a for _, a, _ in q.gold_spans], dtype=np.int64) + off
        e = np.asarray([b for _, _, b in q.gold_spans], dtype=np.int64) + off
        return s, e


@dataclass(frozen=True)
class ChunkIndex:
    """One method's chunks of a corpus: document index, global ``[start, end)``, token counts, texts."""

    doc: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    tokens: np.ndarray
    texts: list[str]
    unlocated: int
    produced: int
    failed_docs: int = 0


def chunk_corpus(corpus: Corpus, runner: Any, layout: Layout, *, context: bool = False) -> tuple[ChunkIndex, list[str]]:
    """Chunk every document; spans are checked (inside the text, non-empty). A document the method
    fails on is indexed as one chunk (and counted), so one peer crash does not end the run.
    ``context``: the text to embed is each chunk's LLM-free context then its text
    (:func:`logichunk.context.span_contexts`; not counted in the budget, which counts spans)."""
    docs, starts, ends, texts = [], [], [], []
    unloc = produced = failed = 0
    notes: list[str] = []
    for i, d in enumerate(corpus.docs):
        try:
            loc: Located = runner.chunk(d.text, d.lang)
            sp = np.asarray(loc.spans, dtype=np.int64).reshape(-1, 2)
        except Exception as e:  # noqa: BLE001 - a peer's bug must not end the benchmark
            failed += 1
            if failed <= 3:
                notes.append(f"failed on {d.doc_id}: {type(e).__name__}: {str(e)[:120]}")
            sp = np.asarray([[0, len(d.text)]], dtype=np.int64)
            loc = Located(sp, 0, 1)
        sp = sp[(sp[:, 1] > sp[:, 0]) & (sp[:, 0] >= 0) & (sp[:, 1] <= len(d.text))]
        unloc += loc.unlocated
        produced += loc.produced
        docs.append(np.full(sp.shape[0], i, dtype=np.int64))
        starts.append(sp[:, 0] + layout.offsets[i])
        ends.append(sp[:, 1] + layout.offsets[i])
        if context:
            from ..context import span_contexts

            ctx = span_contexts(d.text, sp[:, 0].tolist(), sp[:, 1].tolist())
            texts.extend(f"{c}\n{d.text[a:b]}" if c else d.text[a:b] for c, (a, b) in zip(ctx, sp.tolist(), strict=True))
        else:
            texts.extend(d.text[a:b] for a, b in sp.tolist())
    def cat(xs: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(xs) if xs else np.zeros(0, np.int64)

    s, e = cat(starts), cat(ends)
    tokens = layout.prefix[e] - layout.prefix[s]
    return ChunkIndex(cat(docs), s, e, tokens, texts, unloc, produced, failed), notes


def embed(embedder: Any, texts: Sequence[str], kind: str) -> np.ndarray:
    """L2-normalised float32 rows (whitespace-only texts get zero rows)."""
    if not texts:
        return np.zeros((0, int(getattr(embedder, "dim", 1))), dtype=np.float32)
    return l2_normalize(embedder.embed([t if t.strip() else "." for t in texts], kind=kind))


# --------------------------------------------------------------------------- ranking under a budget


def budget_take(order: np.ndarray, tokens: np.ndarray, budget: int) -> tuple[np.ndarray, int]:
    """How many ranked chunks fill ``budget`` tokens, and how many tokens the last one keeps.
    Returns (the chunk indices taken, tokens kept of the last one)."""
    t = tokens[order]
    cum = np.cumsum(t)
    c = int(np.searchsorted(cum, budget, side="left"))  # first rank where the budget is reached
    if c >= order.size:
        return order, int(t[-1]) if order.size else 0
    before = int(cum[c - 1]) if c > 0 else 0
    return order[: c + 1], budget - before


def _rank(sims: np.ndarray, tokens: np.ndarray, budget: int) -> list[np.ndarray]:
    """Per query (rows of ``sims``): chunk indices in score order, enough to fill ``budget``."""
    m = sims.shape[1]
    if m == 0:
        return [np.zeros(0, np.int64) for _ in range(sims.shape[0])]
    med = max(1.0, float(np.median(tokens)))
    first = min(m, int(np.ceil(4 * budget / med)) + 8)
    part = np.argpartition(-sims, first - 1, axis=1)[:, :first] if first < m else np.tile(np.arange(m), (sims.shape[0], 1))
    out = []
    for r in range(sims.shape[0]):
        cand = part[r][np.argsort(-sims[r, part[r]], kind="stable")]
        if tokens[cand].sum() < budget and first < m:
            cand = np.argsort(-sims[r], kind="stable")
        out.append(cand)
    return out


def _truncate_end(layout: Layout, start: int, end: int, keep: int) -> int:
    """The end position keeping ``keep`` tokens of ``[start, end)``."""
    p = layout.prefix
    e = int(np.searchsorted(p, p[start] + keep, side="right")) - 1
    return max(start, min(end, e))


# --------------------------------------------------------------------------- scoring


@dataclass
class Hitlist:
    """One query's retrieved spans, best first (global coordinates) and their documents."""

    starts: np.ndarray
    ends: np.ndarray
    doc: np.ndarray
    full_ends: np.ndarray | None = None  # before budget truncation (for rank-based metrics)


def score_items(hits: Sequence[Hitlist], corpus: Corpus, layout: Layout) -> dict[str, np.ndarray]:
    """Per-query metrics of ranked hit lists, one array per metric in query order (what
    :mod:`.paired` compares between two methods)."""
    index = corpus.by_id()
    acc: dict[str, list[float]] = {k: [] for k in
                                   ("recall", "precision", "iou", "evidence_recall_at_k", "recall_at_k", "mrr",
                                    "support_recall_at_k", "all_docs_at_k")}
    for q, h in zip(corpus.queries, hits, strict=True):
        gs, ge = layout.gold(q, index)
        sc = M.span_scores(h.starts, h.ends, gs, ge)
        for k in ("recall", "precision", "iou"):
            acc[k].append(sc[k])
        acc["evidence_recall_at_k"].append(M.evidence_recall(h.starts, h.ends, gs, ge))
        got_docs = [layout.doc_ids[i] for i in h.doc.tolist()]
        acc["recall_at_k"].append(M.doc_recall(got_docs, q.gold_doc_ids))
        acc["support_recall_at_k"].append(M.supporting_recall(h.starts, h.ends, gs, ge))
        acc["all_docs_at_k"].append(M.all_docs_hit(got_docs, q.gold_doc_ids))
        fe = h.full_ends if h.full_ends is not None else h.ends
        acc["mrr"].append(M.reciprocal_rank(M.overlaps(h.starts, fe, gs, ge)))
    return {k: np.asarray(v, dtype=np.float64) for k, v in acc.items()}


def _means(items: dict[str, np.ndarray]) -> dict[str, float | None]:
    """Each metric's mean over the queries (no queries: no score, not 0)."""
    return {k: float(v.mean()) if v.size else None for k, v in items.items()}


def score_hits(hits: Sequence[Hitlist], corpus: Corpus, layout: Layout) -> dict[str, float | None]:
    """Mean per-query metrics of ranked hit lists."""
    return _means(score_items(hits, corpus, layout))


def run_chunking(corpus: Corpus, name: str, runner: Any, settings: Settings, *, peer: bool, dataset: str,
                 budget: int, query_vecs: np.ndarray, layout: Layout | None = None,
                 block: int = 256) -> tuple[dict[str, Any], list[str], dict[str, np.ndarray]]:
    """Chunk, embed, retrieve within ``budget`` tokens per query, score. Returns the row, notes, and
    the per-query recall and IoU (for :mod:`.paired`)."""
    layout = layout or Layout.of(corpus, settings.unit)
    t0 = time.perf_counter()
    idx, notes = chunk_corpus(corpus, runner, layout, context=settings.embed_context)
    t1 = time.perf_counter()
    cvecs = embed(settings.embedder, idx.texts, "passage")
    t2 = time.perf_counter()
    hits: list[Hitlist] = []
    taken = []
    for lo in range(0, len(corpus.queries), block):
        sims = query_vecs[lo: lo + block] @ cvecs.T
        for order in _rank(sims, idx.tokens, budget):
            chosen, keep = budget_take(order, idx.tokens, budget)
            s = idx.starts[chosen]
            full = idx.ends[chosen]
            e = full.copy()
            if chosen.size:
                e[-1] = _truncate_end(layout, int(s[-1]), int(full[-1]), keep)
            hits.append(Hitlist(s, e, idx.doc[chosen], full))
            taken.append(chosen.size)
    t3 = time.perf_counter()
    items = score_items(hits, corpus, layout)
    row = {"task": "chunking", "dataset": dataset, "method": name, "peer": peer, "n": len(corpus.queries),
           "seconds": round(t3 - t0, 3), **_means(items),
           "chunks": int(idx.starts.size), "mean_tokens": float(idx.tokens.mean()) if idx.tokens.size else 0.0,
           "k_mean": float(np.mean(taken)) if taken else 0.0, "budget_tokens": int(budget),
           "size": settings.size, "unit": unit_label(settings.unit), "embedder": settings.embedder_name,
           "embed_context": settings.embed_context, "docs": len(corpus.docs), "chunk_seconds": round(t1 - t0, 3), "embed_seconds": round(t2 - t1, 3)}
    if peer or idx.unlocated:
        row["unlocated"] = int(idx.unlocated)
        row["unlocated_share"] = idx.unlocated / max(idx.produced, 1)
    if idx.failed_docs:
        row["failed_docs"] = idx.failed_docs
        notes = [f"{name}: {n}" for n in notes]
    return row, notes, {"recall": items["recall"], "iou": items["iou"]}


def _subtract(a: int, b: int, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[a, b)`` outside every interval of ``taken``."""
    parts = [(a, b)]
    for x, y in taken:
        nxt = []
        for p, q in parts:
            if y <= p or q <= x:
                nxt.append((p, q))
                continue
            if p < x:
                nxt.append((p, x))
            if y < q:
                nxt.append((y, q))
        parts = nxt
    return parts


def _cut_to_budget(h: Hitlist, layout: Layout, budget: int) -> Hitlist:
    """The ranked hits of one query cut to ``budget`` tokens of text not already taken (overlaps
    between hits, e.g. a child and its parent, count once), the last piece truncated to fit."""
    starts: list[int] = []
    ends: list[int] = []
    left = budget
    for a0, b0 in zip(h.starts.tolist(), h.ends.tolist(), strict=True):
        for a, b in _subtract(a0, b0, list(zip(starts, ends, strict=True))):
            if left <= 0:
                break
            t = int(layout.prefix[b] - layout.prefix[a])
            if t > left:
                b = _truncate_end(layout, a, b, left)
                t = left
            if b > a:
                starts.append(a)
                ends.append(b)
                left -= t
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    doc = np.searchsorted(layout.offsets, s, side="right") - 1 if s.size else np.zeros(0, np.int64)
    return Hitlist(s, e, doc, e)


# --------------------------------------------------------------------------- retrieval modes


class Searcher(Protocol):
    """A retrieval mode over one corpus: ``search`` returns, per query, ranked hits as
    ``(doc_index, start, end)`` rows in *document* coordinates (the harness globalises them)."""

    def search(self, queries: Sequence[str], k: int) -> list[np.ndarray]: ...


ModeFactory = Callable[[Corpus, Settings, Any], Searcher]
MODES: dict[str, ModeFactory] = {}


def register_mode(name: str, factory: ModeFactory) -> None:
    """Add a retrieval mode (the store/index issues register ``parent``, ``hybrid``, ...)."""
    MODES[name] = factory


class _Basic:
    """Exact dense search over one method's chunks (no store): the floor every mode should beat."""

    def __init__(self, corpus: Corpus, settings: Settings, runner: Any) -> None:
        self.settings = settings
        self.layout = Layout.of(corpus, settings.unit)
        self.idx, self.notes = chunk_corpus(corpus, runner, self.layout)
        self.vecs = embed(settings.embedder, self.idx.texts, "passage")

    def search(self, queries: Sequence[str], k: int) -> list[np.ndarray]:
        qv = embed(self.settings.embedder, list(queries), "query")
        out = []
        for lo in range(0, len(queries), 256):
            sims = qv[lo: lo + 256] @ self.vecs.T
            kk = min(k, sims.shape[1])
            if kk == 0:
                out.extend(np.zeros((0, 3), np.int64) for _ in range(sims.shape[0]))
                continue
            top = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
            for r in range(sims.shape[0]):
                order = top[r][np.argsort(-sims[r, top[r]], kind="stable")]
                d = self.idx.doc[order]
                off = self.layout.offsets[d]
                out.append(np.stack([d, self.idx.starts[order] - off, self.idx.ends[order] - off], axis=1))
        return out


register_mode("basic", _Basic)


def run_retrieval(corpus: Corpus, mode: str, method: str, runner: Any, settings: Settings, *, dataset: str,
                  k: int, budget: int | None = None) -> tuple[dict[str, Any], list[str]]:
    """Build the mode's searcher, query, score the top ``k`` hits. With ``budget`` (tokens), the
    ranked hits are also cut to that many retrieved tokens, as in the chunking task, so modes that
    return more text (parents, expansions) are compared at equal cost (``*_at_budget`` keys)."""
    layout = Layout.of(corpus, settings.unit)
    t0 = time.perf_counter()
    searcher = MODES[mode](corpus, settings, runner)
    rows = searcher.search([q.question for q in corpus.queries], k)
    hits = []
    for r in rows:
        r = np.asarray(r, dtype=np.int64).reshape(-1, 3)
        off = layout.offsets[r[:, 0]] if r.size else np.zeros(0, np.int64)
        hits.append(Hitlist(r[:, 1] + off, r[:, 2] + off, r[:, 0]))
    seconds = time.perf_counter() - t0
    at_budget = {}
    if budget is not None:
        cut = [_cut_to_budget(h, layout, budget) for h in hits]
        at_budget = {f"{key}_at_budget": v for key, v in score_hits(cut, corpus, layout).items()}
        at_budget["budget_tokens"] = int(budget)
    # retrieved tokens per query: modes return different amounts of text (parents, expansions)
    tokens = [float((layout.prefix[h.ends] - layout.prefix[h.starts]).sum()) for h in hits]
    label = mode if not getattr(MODES[mode], "uses_method", True) else f"{mode}:{method}"
    row = {"task": "retrieval", "dataset": dataset, "method": label, "peer": False,
           "n": len(corpus.queries), "seconds": round(seconds, 3), "k": k, **score_hits(hits, corpus, layout),
           "tokens_per_query": float(np.mean(tokens)) if tokens else None, **at_budget,
           "embedder": settings.embedder_name, "size": settings.size, "unit": unit_label(settings.unit)}
    row.update(getattr(searcher, "stats", {}))  # latency, build time... from modes that measure them
    notes = list(getattr(searcher, "notes", []))
    close = getattr(searcher, "close", None)
    if close is not None:
        close()
    return row, notes

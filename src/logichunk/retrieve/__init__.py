"""One retrieval entry point, several strategies::

    from logichunk.retrieve import retrieve
    res = retrieve(store, "主角第一次见到师父是在哪里", mode="parent", top_k=5)
    for hit in res:
        print(hit.score, hit.chunk.id, hit.chunk.meta["text"][:80])
    res.fallback   # None, or "document" when the child index was empty or failed

Modes:

* ``basic`` — top-k child chunks by cosine similarity.
* ``parent`` — search children, map each to its parent, keep a parent once (with its best child),
  rank by ``raw`` or, with ``size_normalization`` on (off by default: it hurt recall on most public
  sets, see ``config.py``), by ``raw * sqrt(avg_parent_size / parent_size)`` (
  ``size_normalization_power`` replaces the square root's 0.5, and ``size_normalization_max_boost``
  caps how far a small parent is lifted, so a heading-sized parent cannot win on size alone),
  and for a parent larger than ``context_window_size`` return a window of whole sentences around the
  matched child (``Hit.context``, ``meta["context_text"]``). If the child index is empty or fails,
  it falls back to document-level search (parent vectors, else BM25 over blocks) and says so.
* ``hierarchical`` — basic hits expanded along dotted ids: each hit, then its parent, then its
  siblings (and descendants of a parent hit), deduplicated, in that order.
* ``hybrid`` — BM25 (Chinese-aware) and vector ranks fused by reciprocal rank fusion.
* ``graph-basic``, ``graph-ssg``, ``graph-tri``, ``graph-hybrid`` — sentences gathered along the
  semantic similarity graph, with the path (``retrieve/graph.py``); ``top_k`` caps the sentences
  (default ``graph_max_results``).

Any mode accepts a ``reranker`` (``score(query, texts) -> array``), applied to the top
``rerank_candidates`` before the cut to ``top_k``; ``raw_score`` keeps the first-stage score.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..config import RETRIEVE_MODES
from ..errors import InputError, LogichunkError
from ..index.bm25 import BM25Index, tokenize
from ..models.rerank import Reranker
from ..text.sentences import split_sentences
from ..types import Chunk, Hit, Span

__all__ = ["Reranker", "Results", "context_window", "retrieve"]


@dataclass(frozen=True)
class Results(Sequence[Hit]):
    hits: tuple[Hit, ...]
    mode: str
    query: str
    fallback: str | None = None  # "document" when the child index was empty or failed
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i):  # type: ignore[override]
        return self.hits[i]

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)


def context_window(text: str, start: int, end: int, size: int) -> tuple[int, int] | None:
    """A window of at most ``size`` characters of ``text`` containing ``[start, end)``, grown from it
    by whole sentences on both sides; ``None`` when the whole text fits."""
    if len(text) <= size:
        return None
    if end - start >= size:
        return (start, end)
    ss = split_sentences(text)
    starts = ss.starts.tolist()
    ends = ss.ends.tolist()
    left = [s for s in reversed(starts) if s < start]
    right = [e for e in ends if e > end]
    s, e = start, end
    grew = True
    while grew:
        grew = False
        if right and right[0] - s <= size:
            e = right.pop(0)
            grew = True
        if left and e - left[0] <= size:
            s = left.pop(0)
            grew = True
    return (s, e)


def _norm(raw: float, factor: float) -> float:
    # monotone in raw for either sign: large parents are pulled toward zero, small pushed away
    return raw * factor if raw >= 0 else raw / factor


def retrieve(store: Any, query: str, mode: str | None = None, top_k: int | None = None, *,
             size_normalization: bool | None = None, context_window_size: int | None = None,
             reranker: Reranker | None = None, expand: Sequence[str] = ("parent", "siblings", "descendants"),
             candidates: int | None = None, size_normalization_power: float | None = None) -> Results:
    s = store.settings
    mode = mode or s.retrieve_mode
    if mode not in RETRIEVE_MODES:
        raise InputError(f"unknown retrieval mode {mode!r}: use {', '.join(RETRIEVE_MODES)}")
    if not isinstance(query, str) or not query.strip():
        raise InputError("the query is empty")
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):  # the setting is checked by Settings
        raise InputError(f"top_k must be a positive integer, got {top_k!r}")
    if mode.startswith("graph-"):  # sentences and a path over the similarity graph (retrieve/graph.py)
        from .graph import retrieve_graph

        return retrieve_graph(store, query, mode, top_k, reranker=reranker)
    top_k = s.top_k if top_k is None else top_k
    bad = set(expand) - {"parent", "siblings", "descendants"}
    if bad:
        raise InputError(f"unknown expansion {sorted(bad)}: use parent, siblings, descendants")
    want = max(top_k, s.rerank_candidates) if reranker else top_k
    norm = s.size_normalization if size_normalization is None else size_normalization
    power = s.size_normalization_power if size_normalization_power is None else size_normalization_power
    window = s.context_window_size if context_window_size is None else context_window_size
    notes: list[str] = []
    fallback = None
    if mode == "basic":
        hits = _basic(store, query, want)
    elif mode == "hierarchical":
        hits = _hierarchical(store, query, want, tuple(expand))
    elif mode == "hybrid":
        hits = _hybrid(store, query, want, candidates or max(4 * want, 40), notes)
    else:
        hits = None
        try:
            hits = _parent(store, query, want, norm, power, window, candidates or max(10 * want, 50),
                           s.size_normalization_max_boost)
            if not hits:
                notes.append(store.embedder_mismatch() or "child index is empty")
        except LogichunkError as e:
            notes.append(f"child search failed: {e}")
        if not hits:
            fallback = "document"
            hits = _document_fallback(store, query, want, window, notes)
    if not hits and fallback is None and (why := store.embedder_mismatch()):
        notes.append(why)
    if reranker is not None and hits:
        hits = _rerank(reranker, query, hits)
    return Results(tuple(hits[:top_k]), mode, query, fallback, tuple(notes))


# ----------------------------------------------------------------------------- strategies


def _basic(store, query: str, k: int) -> list[Hit]:
    found = store.vector_search(store.embed_query(query), k, "child")
    rows = store.chunks_by_pk([pk for pk, _ in found])
    return [Hit(rows[pk].to_chunk(), sim, sim, rows[pk].document_id) for pk, sim in found if pk in rows]


def _parent(store, query: str, k: int, norm: bool, power: float, window: int, n_children: int,
            max_boost: float = float("inf")) -> list[Hit]:
    found = store.vector_search(store.embed_query(query), n_children, "child")
    if not found:
        return []
    rows = store.chunks_by_pk([pk for pk, _ in found])
    best: dict[int, tuple[int, float]] = {}
    for pk, sim in found:  # best first: the first child seen of a parent is its best
        r = rows.get(pk)
        if r is not None and r.parent_pk is not None and r.parent_pk not in best:
            best[r.parent_pk] = (pk, sim)
    parents = store.chunks_by_pk(list(best))
    avg = store.avg_parent_size() if norm else 0.0
    scored = []
    for ppk, (cpk, sim) in best.items():
        p = parents.get(ppk)
        if p is None:
            continue
        factor = min((avg / p.size) ** power, max_boost) if norm and p.size > 0 and avg > 0 else 1.0
        scored.append((_norm(sim, factor), sim, p, rows[cpk]))
    scored.sort(key=lambda t: -t[0])
    hits = []
    for score, raw, p, c in scored[:k]:
        rel_s, rel_e = c.start - p.start, c.end - p.start
        win = context_window(p.content, rel_s, rel_e, window)
        extra: dict[str, Any] = {"child": c.dotted_id, "child_pk": c.pk, "child_span": (c.start, c.end),
                                 "child_text": c.content}
        ctx = None
        if win is not None:
            ctx = Span(p.start + win[0], p.start + win[1])
            extra["context_text"] = p.content[win[0] : win[1]]
        hits.append(Hit(p.to_chunk(**extra), float(score), float(raw), p.document_id, ctx))
    return hits


def _document_fallback(store, query: str, k: int, window: int, notes: list[str]) -> list[Hit]:
    try:
        found = store.vector_search(store.embed_query(query), k, "parent")
    except LogichunkError as e:
        notes.append(f"parent search failed: {e}")
        found = []
    if found:
        notes.append("fell back to parent-level vectors")
        rows = store.chunks_by_pk([pk for pk, _ in found])
        return [Hit(rows[pk].to_chunk(fallback=True), sim, sim, rows[pk].document_id) for pk, sim in found if pk in rows]
    notes.append("fell back to lexical search over blocks")
    blocks = store.blocks()
    idx = BM25Index()
    for i, b in enumerate(blocks):
        idx.add(i, b.content)
    ids, scores = idx.search(query, k)
    docs = {}
    hits = []
    qtok = set(tokenize(query))
    for i, sc in zip(ids.tolist(), scores.tolist(), strict=True):
        b = blocks[i]
        if b.chapter_id not in docs:
            docs[b.chapter_id] = store._q("SELECT document_id FROM chapters WHERE id = ?", (b.chapter_id,))[0][0]
        ctx = None
        extra = {}
        if len(b.content) > window:
            # a window of sentences around the sentence sharing most tokens with the query
            ss = split_sentences(b.content)
            texts = ss.texts()
            j = max(range(len(texts)), key=lambda t: len(qtok & set(tokenize(texts[t]))))
            w = context_window(b.content, int(ss.starts[j]), int(ss.ends[j]), window)
            if w is not None:
                ctx = Span(*w)
                extra["context_text"] = b.content[w[0] : w[1]]
        ch = Chunk(id=b.id, span=Span(0, len(b.content)), level=0, parent=None, method="block",
                   meta={"block_id": b.id, "chapter_id": b.chapter_id, "document_id": docs[b.chapter_id],
                         "level_name": "block", "text": b.content, "size": len(b.content), "fallback": True, **extra})
        hits.append(Hit(ch, float(sc), float(sc), docs[b.chapter_id], ctx))
    return hits


def _hierarchical(store, query: str, k: int, expand: tuple[str, ...]) -> list[Hit]:
    seeds = _basic(store, query, k)
    seen: set[int] = set()
    out: list[Hit] = []

    def add(row, hit: Hit, relation: str) -> None:
        if row.pk in seen:
            return
        seen.add(row.pk)
        out.append(Hit(row.to_chunk(relation=relation, expanded_from=hit.chunk.id), hit.score, hit.raw_score,
                       row.document_id))

    for h in seeds:
        pk = h.chunk.meta["pk"]
        if pk in seen:
            continue
        row = store.chunks_by_pk([pk]).get(pk)
        if row is None:  # re-chunked away since the vector search (an edit landed in between)
            continue
        add(row, h, "hit")
        if row.parent_pk is not None and "parent" in expand:
            parent = store.chunks_by_pk([row.parent_pk]).get(row.parent_pk)
            if parent is not None:
                add(parent, h, "parent")
        if row.parent_pk is not None and "siblings" in expand:
            for sib in store.children_of(row.parent_pk):
                add(sib, h, "sibling")
        if row.level == "parent" and "descendants" in expand:
            for kid in store.children_of(row.pk):
                add(kid, h, "descendant")
    return out


def _hybrid(store, query: str, k: int, n: int, notes: list[str]) -> list[Hit]:
    rrf_k = store.settings.rrf_k
    vec: list[tuple[int, float]] = []
    try:
        vec = store.vector_search(store.embed_query(query), n, "child")
    except LogichunkError as e:
        notes.append(f"vector search failed, BM25 only: {e}")
    lex = store.text_search(query, n, "child")
    fused: dict[int, float] = {}
    info: dict[int, dict[str, Any]] = {}
    for name, lst in (("vector", vec), ("bm25", lex)):
        for rank, (pk, sc) in enumerate(lst, 1):
            fused[pk] = fused.get(pk, 0.0) + 1.0 / (rrf_k + rank)
            info.setdefault(pk, {})[f"{name}_rank"] = rank
            info[pk]["cosine" if name == "vector" else "bm25"] = sc
    order = sorted(fused, key=lambda pk: -fused[pk])[:k]
    rows = store.chunks_by_pk(order)
    return [Hit(rows[pk].to_chunk(**info[pk]), fused[pk], fused[pk], rows[pk].document_id) for pk in order if pk in rows]


def _rerank(reranker: Reranker, query: str, hits: list[Hit]) -> list[Hit]:
    texts = [h.chunk.meta.get("context_text") or h.chunk.meta.get("text", "") for h in hits]
    scores = np.asarray(reranker.score(query, texts), dtype=np.float64).reshape(-1)
    if scores.size != len(hits):
        raise InputError(f"reranker returned {scores.size} scores for {len(hits)} texts")
    order = np.argsort(-scores, kind="stable")
    return [replace(hits[i], score=float(scores[i])) for i in order.tolist()]

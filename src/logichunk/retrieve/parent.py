"""``parent`` mode: children searched, each parent kept once with its best child, optionally
size-normalised, with a window of sentences around the match in a large parent; and the
document-level fallback (parent vectors, else BM25 over blocks) when the child index is empty."""

from __future__ import annotations

from typing import Any

from ..errors import LogichunkError
from ..index.bm25 import BM25Index, tokenize
from ..text.sentences import split_sentences
from ..types import Chunk, Hit, Span
from .context import context_window


def _normalized(raw: float, factor: float) -> float:
    # monotone in raw for either sign: large parents are pulled toward zero, small pushed away
    return raw * factor if raw >= 0 else raw / factor


def parent_hits(store, query: str, k: int, norm: bool, power: float, window: int, n_children: int,
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
        scored.append((_normalized(sim, factor), sim, p, rows[cpk]))
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


def document_fallback(store, query: str, k: int, window: int, notes: list[str]) -> list[Hit]:
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

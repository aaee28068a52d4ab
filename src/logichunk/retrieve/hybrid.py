"""``hybrid`` mode: BM25 and vector ranks of child chunks fused by reciprocal rank fusion."""

from __future__ import annotations

from typing import Any

from ..errors import LogichunkError
from ..types import Hit


def hybrid_hits(store, query: str, k: int, n: int, notes: list[str]) -> list[Hit]:
    rrf_k = store.settings.rrf_k
    vec: list[tuple[int, float]] = []
    try:
        vec = store.vector_search(store.embed_query(query), n, "child")
    except LogichunkError as e:
        notes.append(f"vector search failed, BM25 only: {e}")
    else:
        if not vec and (why := store.embedder_mismatch()):  # as the other modes say it
            notes.append(f"BM25 only: {why}")
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

"""``basic`` mode: top-k child chunks by cosine similarity."""

from __future__ import annotations

from ..types import Hit


def basic_hits(store, query: str, k: int) -> list[Hit]:
    found = store.vector_search(store.embed_query(query), k, "child")
    rows = store.chunks_by_pk([pk for pk, _ in found])
    return [Hit(rows[pk].to_chunk(), sim, sim, rows[pk].document_id) for pk, sim in found if pk in rows]

"""``hierarchical`` mode: basic hits expanded along dotted ids (parent, siblings, descendants)."""

from __future__ import annotations

from ..types import Hit
from .basic import basic_hits


def position(hit: Hit) -> tuple:
    """Where a hit sits: its document, then its dotted id as numbers (``1.10`` after ``1.9``)."""
    return (hit.doc_id, tuple(int(p) if p.isdigit() else -1 for p in hit.chunk.id.split(".")))


def hierarchical_hits(store, query: str, k: int, expand: tuple[str, ...]) -> list[Hit]:
    """Each seed (a basic hit) followed by its expansions, which share its score. Seeds with equal
    scores come in document position (the vector index returns ties in any order), so the output
    does not change from one run to the next."""
    seeds = sorted(basic_hits(store, query, k), key=lambda h: (-h.score, position(h)))
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

"""What every retrieval mode returns: the hits, the mode, and any fallback or notes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..types import Hit


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


def hit_record(h: Hit, rank: int, title: str | None = None, source: str | None = None) -> dict[str, Any]:
    """The fields a hit of any mode has in every interface (the CLI's ``search --format jsonl``, the HTTP
    search, the MCP ``search``; each adds its own around them, a graph hit its ``sentence``:
    :func:`~logichunk.retrieve.graph.graph_hit`): ``rank``, ``score`` (the ranking's) and ``raw_score`` (before
    fusion or size normalisation), the chunk (``ref``, dotted ``id``, ``level``, the ``method`` that cut it) and
    its document (``document_id``, its ``title`` as ``document_title`` and, from its ``source``, its ``origin``:
    a document or a conversation topic, :func:`~logichunk.store.origins.hit_origin`). One function, so a field
    one interface had and another lacked (MCP's hits had no ``raw_score`` nor ``level``) cannot come back."""
    from ..store.origins import hit_origin
    from ..store.refs import hit_ref

    m = h.chunk.meta
    return {"rank": rank, "score": float(h.score), "raw_score": float(h.raw_score),
            "ref": hit_ref(h.doc_id, h.chunk.id, m.get("level_name"), m.get("text")), "id": h.chunk.id,
            "level": m.get("level_name"), "method": h.chunk.method, "document_id": h.doc_id,
            "document_title": title, **hit_origin(source)}

"""A stored document read back whole: its text (its blocks laid end to end, chapter by chapter) and
where each block and chapter starts in it.

Why: the store keeps a chunk's span counted from its block's start (an edit re-chunks one block), while a
reader (a search hit shown in its document, a citation's page) wants document offsets. The MCP tools and
the CLI's search read them here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..text.pages import chunk_pages
from .base import BlockRow, Store

__all__ = ["DocLayout", "document_summary", "hit_pages"]


@dataclass(frozen=True)
class DocLayout:
    """A document's text and where each block and chapter starts in it."""

    text: str
    block_start: dict[str, int]
    chapters: list[tuple[str, int, str | None, int, int]]  # id, rank, title, start, end
    blocks: list[tuple[BlockRow, int, int, int]]  # row, start, end, chapter rank

    @classmethod
    def of(cls, store: Store, doc_id: str) -> DocLayout:
        parts: list[str] = []
        starts: dict[str, int] = {}
        chapters = []
        blocks = []
        pos = 0
        for rank, (cid, _order, title) in enumerate(store.chapters(doc_id), 1):
            c0 = pos
            for b in store.blocks(cid):
                starts[b.id] = pos
                blocks.append((b, pos, pos + len(b.content), rank))
                parts.append(b.content)
                pos += len(b.content)
            chapters.append((cid, rank, title, c0, pos))
        return cls("".join(parts), starts, chapters, blocks)

    def span(self, block_id: Any, start: int, end: int, text: str | None) -> list[int] | None:
        """``[start, end)`` of a block-relative span in document offsets; None when the document's
        text there is no longer ``text`` (the block was edited since it was chunked)."""
        base = self.block_start.get(block_id) if isinstance(block_id, str) else None
        if base is None:
            return None
        a, b = base + start, base + end
        if text is not None and self.text[a:b] != text:
            return None
        return [a, b]

    def hit_spans(self, hit: Any) -> tuple[list[int] | None, list[int] | None]:
        """A stored hit's span and context window (both counted from its block) in document offsets, so a
        client can highlight it in the document it shows; None where the document's text there is no longer
        the chunk's (an edit waits for its re-chunk) or the block is gone."""
        m = hit.chunk.meta
        if m.get("text") is None:  # (no text to check the document's against)
            return None, None
        span = self.span(m.get("block_id"), hit.chunk.span.start, hit.chunk.span.end, m["text"])
        if span is None or hit.context is None:
            return span, None
        base = span[0] - hit.chunk.span.start
        return span, [base + hit.context.start, base + hit.context.end]


def hit_pages(layouts: dict[str, DocLayout], spans: list[tuple[str, list[int] | None]]) -> list[list[int] | None]:
    """Per ``(document id, document span or None)``, the first and last page the span's text lies on in
    a document of pages joined by form feeds (a PDF: :func:`~logichunk.text.pages.chunk_pages`), else
    None; each document's pages read once."""
    out: list[list[int] | None] = [None] * len(spans)
    for doc_id, lay in layouts.items():
        mine = [k for k, (d, sp) in enumerate(spans) if d == doc_id and sp is not None]
        pages = chunk_pages(lay.text, [spans[k][1][0] for k in mine], [spans[k][1][1] for k in mine]) if mine else None
        for k, pg in zip(mine, pages or (), strict=False):
            out[k] = list(pg)
    return out


def document_summary(store: Store, doc_id: str, title: str, source: str | None) -> dict[str, Any]:
    """A stored document in one record: id, title, source, characters, chapters, parents, children and
    ``status`` (``pending`` while a block waits for its re-chunk): what the MCP tools and the CLI's
    ``documents`` list."""
    lay = DocLayout.of(store, doc_id)
    rows = store.chunks(document_id=doc_id)
    dirty = sum(1 for b, *_ in lay.blocks if b.is_dirty)
    return {"id": doc_id, "title": title, "source": source, "chars": len(lay.text), "chapters": len(lay.chapters),
            "parents": sum(r.level == "parent" for r in rows), "children": sum(r.level == "child" for r in rows),
            "status": "pending" if dirty else "ready"}

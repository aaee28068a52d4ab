"""What the API returns, assembled from the store: a document as one text with its chapters,
blocks and chunk tree in document offsets, and search hits as "the child inside its parent".

Stored chunks keep spans relative to their owning block; here they are moved to offsets in the
document's text (the blocks, in order, concatenate to it). A chunk whose block was edited since it
was cut no longer matches the text at those offsets: it is returned with ``stale: true`` (its
chapter is being re-chunked) instead of being drawn over the wrong characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..jsonable import jsonable
from ..retrieve.graph import graph_hit
from ..retrieve.results import hit_record
from ..store import BlockRow, ChunkRow, Store
from ..store.document_layout import DocLayout, hit_pages
from .errors import ApiError
from .jobs import ProjectRuntime


@dataclass
class Layout:
    """A stored document as the API shows it: its name beside :class:`DocLayout` (text, chapters, blocks)."""

    doc_id: str
    title: str
    source: str | None
    doc: DocLayout

    @property
    def text(self) -> str:
        return self.doc.text

    @property
    def chapters(self) -> list[tuple[str, int, str | None, int, int]]:  # id, rank, title, start, end
        return self.doc.chapters

    @property
    def blocks(self) -> list[tuple[BlockRow, int, int, int]]:  # row, start, end, chapter rank
        return self.doc.blocks


def documents_by_id(store: Store) -> dict[str, tuple[str, str | None]]:
    return {d: (t, s) for d, t, s in store.documents()}


def layout(store: Store, doc_id: str) -> Layout:
    docs = documents_by_id(store)
    if doc_id not in docs:
        raise ApiError(404, "not_found", f"no document {doc_id!r} in this project")
    title, source = docs[doc_id]
    return Layout(doc_id, title, source, DocLayout.of(store, doc_id))


def block_json(rt: ProjectRuntime, b: BlockRow, start: int | None = None, end: int | None = None,
               chapter: int | None = None, with_text: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"id": b.id, "chapter_id": b.chapter_id, "order": b.order, "title": b.title,
                           "size": len(b.content), **rt.block_status(b)}
    if start is not None:
        out.update(start=start, end=end, chapter=chapter)
    if with_text:
        out["content"] = b.content
    return out


def document_summary(rt: ProjectRuntime, doc_id: str, title: str, source: str | None,
                     lay: Layout | None = None) -> dict[str, Any]:
    """``lay``: the document's layout when the caller read it already (one read of every block, not two)."""
    lay = lay if lay is not None else layout(rt.store, doc_id)
    statuses: dict[str, int] = {}
    for b, *_ in lay.blocks:
        s = rt.block_status(b)["status"]
        statuses[s] = statuses.get(s, 0) + 1
    busy = any(s in statuses for s in ("queued", "running", "dirty"))
    return {"id": doc_id, "title": title, "source": source, "chars": len(lay.text), "chapters": len(lay.chapters),
            "blocks": len(lay.blocks), "block_status": statuses,
            "status": "failed" if statuses.get("failed") else ("pending" if busy else "ready")}


def document_tree(rt: ProjectRuntime, lay: Layout) -> dict[str, Any]:
    """Chapters (level 1), parents (level 2) and children (level 3) in pre-order, in document offsets."""
    store = rt.store
    text = lay.text
    boff = {b.id: s for b, s, _, _ in lay.blocks}
    dirty_chapters = {b.chapter_id for b, *_ in lay.blocks if b.is_dirty}
    rows = store.chunks(document_id=lay.doc_id)
    parents: dict[str, list[ChunkRow]] = {}
    kids: dict[int, list[ChunkRow]] = {}
    for r in rows:
        if r.level == "parent":
            parents.setdefault(r.chapter_id, []).append(r)
        elif r.level == "child" and r.parent_pk is not None:
            kids.setdefault(r.parent_pk, []).append(r)
    nodes: list[dict[str, Any]] = []

    def node(r: ChunkRow, level: int, parent: str) -> dict[str, Any]:
        s = boff.get(r.block_id)
        ok = s is not None and text[s + r.start : s + r.end] == r.content
        d: dict[str, Any] = {"id": r.dotted_id, "kind": r.level, "level": level, "parent": parent, "pk": r.pk,
                             "method": r.method, "size": r.size, "block_id": r.block_id,
                             "stale": (not ok) or r.chapter_id in dirty_chapters}
        if ok:
            d.update(start=s + r.start, end=s + r.end)
        else:
            d.update(start=None, end=None, text=r.content)
        return d

    for cid, rank, title, c0, c1 in lay.chapters:
        cnode = {"id": str(rank), "kind": "chapter", "level": 1, "parent": None, "method": "chapter",
                 "title": title, "start": c0, "end": c1, "size": c1 - c0, "stale": cid in dirty_chapters,
                 "chapter_id": cid}
        nodes.append(cnode)
        for p in sorted(parents.get(cid, []), key=lambda r: r.order):
            nodes.append(node(p, 2, cnode["id"]))
            for c in sorted(kids.get(p.pk, []), key=lambda r: r.order):
                nodes.append(node(c, 3, p.dotted_id))
    methods: dict[str, int] = {}
    for n in nodes:
        if n["kind"] != "chapter":
            methods[n["method"]] = methods.get(n["method"], 0) + 1
    bubbles = []
    for cid, rank, *_ in lay.chapters:
        for bub in store.bubbles(cid):
            d = bub.to_dict()
            d["chapter"] = rank
            bubbles.append(jsonable(d))
    return {"document": {"id": lay.doc_id, "title": lay.title, "source": lay.source}, "text": text,
            "length": len(text), "chunks": nodes,
            "blocks": [block_json(rt, b, s, e, rank) for b, s, e, rank in lay.blocks],
            "stats": {"chapters": len(lay.chapters), "parents": sum(n["kind"] == "parent" for n in nodes),
                      "children": sum(n["kind"] == "child" for n in nodes), "methods": methods,
                      "stale": sum(bool(n["stale"]) for n in nodes)},
            "bubbles": bubbles}


def cut_points(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where each chunk that is not the first of its parent starts: the cuts, with level and method."""
    firsts: set[str | None] = set()
    out = []
    for n in nodes:
        if n.get("start") is None or n.get("stale"):
            continue
        key = n.get("parent")
        if key in firsts:
            out.append({"offset": n["start"], "level": n["level"], "id": n["id"], "method": n["method"]})
        else:
            firsts.add(key)
    return out


_SKIP_META = {"text", "context_text", "child_text", "pk", "child_pk", "blocks", "segments"}


def hits_json(store: Store, res: Any) -> list[dict[str, Any]]:
    """Hits of any retrieval mode, each with ``view``: the text to show (the parent, or a window of
    it) and ``highlight``, the matched child's ``[start, end)`` inside that text, when one is known."""
    hits = list(res)
    docs = documents_by_id(store)
    # children whose parent we need (basic, hybrid, hierarchical and other child-level hits)
    child_pks = [h.chunk.meta.get("pk") for h in hits if h.chunk.meta.get("level_name") == "child"
                 and "child_span" not in h.chunk.meta]
    rows = store.chunks_by_pk([p for p in child_pks if isinstance(p, int)]) if child_pks else {}
    prow = store.chunks_by_pk([r.parent_pk for r in rows.values() if r.parent_pk is not None]) if rows else {}
    layouts: dict[str, Layout | None] = {}
    out = []
    for rank, h in enumerate(hits, 1):
        m = h.chunk.meta
        rec: dict[str, Any] = {
            **jsonable(hit_record(h, rank, *docs.get(h.doc_id, (None, None)))),  # (as the CLI's and MCP's hits)
            "block_id": m.get("block_id"),
            "span": [h.chunk.span.start, h.chunk.span.end], "size": m.get("size"), "text": m.get("text"),
            "context": None if h.context is None else [h.context.start, h.context.end],
            "meta": jsonable({k: v for k, v in m.items() if k not in _SKIP_META}),
        }
        view = None
        if "child_span" in m and m.get("text") is not None:  # parent mode: the child is known
            cs, ce = m["child_span"]
            ptext = m["text"]
            a, b = cs - h.chunk.span.start, ce - h.chunk.span.start
            if h.context is not None and m.get("context_text") is not None:
                off = h.context.start - h.chunk.span.start
                view = {"text": m["context_text"], "highlight": [a - off, b - off], "window": True,
                        "parent_id": h.chunk.id, "child_id": m.get("child")}
            else:
                view = {"text": ptext, "highlight": [a, b], "window": False, "parent_id": h.chunk.id,
                        "child_id": m.get("child")}
        elif m.get("level_name") == "child" and m.get("pk") in rows:
            r = rows[m["pk"]]
            p = prow.get(r.parent_pk) if r.parent_pk is not None else None
            if p is not None and p.content[r.start - p.start : r.end - p.start] == r.content:
                view = {"text": p.content, "highlight": [r.start - p.start, r.end - p.start], "window": False,
                        "parent_id": p.dotted_id, "child_id": r.dotted_id}
        elif m.get("level_name") == "parent" and m.get("expanded_from") and m.get("text") is not None:
            c = store.chunk_by_dotted(h.doc_id, str(m["expanded_from"]))  # hierarchical: the child it grew from
            if c is not None and c.parent_pk == m.get("pk"):
                view = {"text": m["text"], "highlight": [c.start - h.chunk.span.start, c.end - h.chunk.span.start],
                        "window": False, "parent_id": h.chunk.id, "child_id": c.dotted_id}
        if view is None and m.get("text") is not None:
            view = {"text": m.get("context_text") or m["text"], "highlight": None, "window": bool(m.get("context_text")),
                    "parent_id": None, "child_id": None}
        rec["view"] = view
        rec["document_span"], rec["document_context"] = _document_spans(store, layouts, h)
        if "sentence_block_span" in m:  # graph modes: the sentence found, as every interface gives it
            lay = layouts.get(h.doc_id)
            rec["sentence"] = jsonable(graph_hit(h, rank, layout=None if lay is None else lay.doc)["sentence"])
        out.append(rec)
    _document_pages(out, layouts)
    return out


def _document_pages(recs: list[dict[str, Any]], layouts: dict[str, Layout | None]) -> None:
    """Each hit's ``document_pages``: the first and last page its text lies on in a document of pages
    joined by form feeds (a PDF: :func:`~logichunk.text.pages.chunk_pages`), for a citation; None in a
    document without pages or where ``document_span`` is. One reading of each document's pages."""
    docs = {d: lay.doc for d, lay in layouts.items() if lay is not None}
    for r, pages in zip(recs, hit_pages(docs, [(r["document_id"], r["document_span"]) for r in recs]), strict=True):
        r["document_pages"] = pages


def _document_spans(store: Store, layouts: dict[str, Layout | None],
                    h: Any) -> tuple[list[int] | None, list[int] | None]:
    """A hit's span and context in document offsets (:meth:`~logichunk.store.document_layout.DocLayout.hit_spans`),
    each document's layout read once."""
    if h.doc_id not in layouts:
        try:
            layouts[h.doc_id] = layout(store, h.doc_id)
        except ApiError:
            layouts[h.doc_id] = None
    lay = layouts[h.doc_id]
    return (None, None) if lay is None else lay.doc.hit_spans(h)

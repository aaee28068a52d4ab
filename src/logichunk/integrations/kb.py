"""The knowledge-base operations an agent calls, as plain functions of a store, returning JSON
values: search, add a document or a file, list documents, read a chunk with its neighbours, read a
document, chunk a text without storing it. Framework-free (the MCP server in
:mod:`logichunk.integrations.mcp_server` wraps them as tools), so each is testable on its own, and
every refusal is an :class:`~logichunk.errors.InputError` with a sentence an agent can act on.

Chunks are named by a *ref* ``DOCUMENT_ID#DOTTED_ID@TAG`` (``4f3a…#2.3.1@9c1e07ab``: chapter 2, parent 3,
child 1 of that document, whose text hashes to that tag: :mod:`logichunk.store.refs`), so a ref kept
across an edit reads the text it named or says it changed; spans are ``[start, end)`` offsets into the
document's text (its blocks, in order), so ``document_text(ref's document)[start:end]`` is the chunk's
text exactly.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import config as config_mod
from ..config import Settings
from ..errors import InputError, LogichunkError, check_choice
from ..jsonable import jsonable as plain
from ..retrieve.graph import graph_hit
from ..retrieve.kept import retrieve_kept
from ..retrieve.results import hit_record
from ..store import ChunkRow, Store, origins, refs
from ..store.document_layout import DocLayout, document_summary, hit_pages
from ..store.ingest import ingest_text, read_text_file
from ..text.decode import (
    Undecoded,
    check_encoding,
    check_not_blank,
    check_storable,
    check_title,
    empty_input,
    file_title,
    text_file_name,
)
from ..text.folders import TEXT_SUFFIXES

PROJECT_CHARS = 100
#: the most topics a caller of the service or the MCP tools may ask ``segment`` for (the library takes any
#: count): far past any text's topics, so a bound only against a count no text is cut into
MAX_TOPICS = 100_000


# --------------------------------------------------------------------------- stores


@dataclass
class Project:
    """One project's store and the lock searches take (the in-memory indexes sync lazily)."""

    name: str
    store: Store
    lock: Any = field(default_factory=threading.Lock)
    prime: Callable[[str], None] | None = None  # embeds a query ahead of the locked search, when cached


class Stores:
    """The projects of one database, opened on first use with one embedder (what ``logichunk mcp``
    uses; the HTTP service passes its own registry's stores instead, see :mod:`.mcp_http`)."""

    def __init__(self, settings: Settings, embedder: Any = None, *, embedder_choice: str = "") -> None:
        """``embedder_choice``: the line saying the embedder is the project's own, when no embedder was named
        (:func:`~logichunk.store.embedder_choice.store_embedder`); the tools' results carry it."""
        self.settings = settings
        self.embedder = embedder
        self.embedder_choice = embedder_choice
        self.default = settings.project
        self._lock = threading.Lock()
        self._open: dict[str, Project] = {}
        self.get(None, create=True)  # a wrong --db fails at start, not at the first call

    def get(self, project: str | None, *, create: bool = False) -> Project:
        name = check_project(project) if project is not None else self.default
        with self._lock:
            p = self._open.get(name)
            if p is None:
                store = Store.open(self.settings.db, settings=self.settings, embedder=self.embedder, project=name,
                                   create=create or name == self.default)
                if self.embedder is None:
                    self.embedder = store.embedder
                p = self._open[name] = Project(name, store)
            return p

    def close(self) -> None:
        with self._lock:
            for p in self._open.values():
                p.store.close()
            self._open.clear()


def check_project(name: Any) -> str:
    if not isinstance(name, str) or not name or len(name) > PROJECT_CHARS or not (name[0].isalnum() or name[0] == "_") \
            or not all(c.isalnum() or c in "_-." for c in name):
        raise InputError(f"project name {name!r} is not valid: 1-{PROJECT_CHARS} letters, digits, '_', '-' or '.', "
                         "not starting with '.' or '-'")
    return name


# --------------------------------------------------------------------------- limits and checks


@dataclass(frozen=True)
class Limits:
    max_query_chars: int = 1000
    max_text_chars: int = 1_000_000
    max_top_k: int = 100

    @classmethod
    def from_settings(cls, s: Settings) -> Limits:
        return cls(s.service_max_query_chars, s.service_max_chunk_chars, s.service_max_top_k)


def check_text(text: Any, what: str, limit: int) -> str:
    if not isinstance(text, str):
        raise InputError(f"{what} must be a string")
    check_not_blank(text, what)
    if len(text) > limit:
        raise InputError(f"{what} is {len(text):,} characters; this server takes at most {limit:,}")
    return check_storable(text, what)


def top_k_refusal(top_k: Any, limit: int) -> str:
    """The one sentence for a ``top_k`` outside 1 to ``limit`` (the setting ``service_max_top_k``), in the
    service's and the MCP tools' words alike."""
    return f"top_k must be an integer from 1 to {limit} (setting service_max_top_k), got {top_k!r}"


def _check_top_k(top_k: Any, limits: Limits) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= limits.max_top_k:
        raise InputError(top_k_refusal(top_k, limits.max_top_k))
    return top_k


# --------------------------------------------------------------------------- documents


def _doc_titles(store: Store) -> dict[str, tuple[str, str | None]]:
    return {d: (t, s) for d, t, s in store.documents()}


def _require_doc(store: Store, doc_id: str) -> tuple[str, str | None]:
    docs = _doc_titles(store)
    if doc_id not in docs:
        raise InputError(f"no document {doc_id!r} in this project (list_documents shows the ids)")
    return docs[doc_id]


_ADDING = threading.Lock()


def add_document(project: Project, title: str, text: str, limits: Limits, *, source: str | None = None) -> dict[str, Any]:
    """Store ``text`` as a document and chunk it now (chapters at headings, blocks at blank lines)."""
    title = check_title(title)  # (stripped, as the service stores it)
    text = check_text(text, "text", limits.max_text_chars)
    store = project.store
    with _ADDING:  # (two calls at once with one text store it once)
        same = store.documents_with_text(text)
        doc = same[0] if same else ingest_text(store, title, text, source=source)
    if same:  # an agent's retried call, or the text added before: that document, nothing stored (as the API does)
        title, source = next((t, s) for d, t, s in store.documents() if d == doc)
        return {**document_summary(store, doc, title, source), "existing": True}
    errors = []
    for cid, _order, _title in store.chapters(doc):
        try:
            store.rechunk_chapter(cid)
        except LogichunkError as e:  # stored, chunked later (the embedder is down, say): say so
            errors.append(str(e))
    out = {**document_summary(store, doc, title, source), "existing": False}
    if errors:
        out["errors"] = errors[:3]
    return out


class Folders:
    """The folders ``add_file`` may read (resolved, symlinks followed): nothing outside them."""

    def __init__(self, folders: Sequence[str | os.PathLike[str]]) -> None:
        roots = []
        for f in folders:
            p = Path(f).expanduser()
            if not p.is_dir():
                raise InputError(f"{f}: not a folder (the folders add_file may read must exist)")
            roots.append(p.resolve())
        self.roots = tuple(roots)

    def check(self, path: Any) -> Path:
        if not isinstance(path, str) or not path.strip():
            raise InputError("path is empty")
        if not self.roots:
            raise InputError("add_file is off: this server was started without folders to read from "
                             "(start it with: logichunk mcp --allow DIR, or logichunk serve --mcp-allow DIR)")
        p = Path(path).expanduser()
        if not p.is_absolute():
            p = self.roots[0] / p
        real = p.resolve()
        if not any(real == r or r in real.parents for r in self.roots):
            raise InputError(f"{path} is outside the folders this server may read: "
                             + ", ".join(str(r) for r in self.roots))
        if not real.is_file():
            where = "" if Path(path).expanduser().is_absolute() else \
                f" in {self.roots[0]} (a relative path is read from the first folder this server may read)"
            raise InputError(f"{path}: no such file{where}")
        if not text_file_name(real.name, TEXT_SUFFIXES):
            raise InputError(f"{path}: only text files ({', '.join(TEXT_SUFFIXES)}) are read")
        return real


def add_file(project: Project, path: str, folders: Folders, limits: Limits, title: str | None = None, *,
             encoding: str | None = None) -> dict[str, Any]:
    """Store a file of the allowed ``folders`` (``encoding``: the codec its bytes are read with; how they were
    read, when not as UTF-8, is said in the answer's ``decoded``)."""
    encoding = check_encoding(encoding)  # (an unknown name refused before the file is looked at)
    real = folders.check(path)
    if real.stat().st_size > 4 * limits.max_text_chars:
        raise InputError(f"{path} is {real.stat().st_size:,} bytes; this server takes at most "
                         f"{limits.max_text_chars:,} characters")
    # (a compressed file is refused once it unpacks past the bound, as an upload is: a small gzip file
    # may hold gigabytes)
    how: list[str] = []
    try:
        text = read_text_file(real, max_unpacked=4 * limits.max_text_chars, encoding=encoding, on_decoding=how.append)
    except Undecoded as e:  # (said with this tool's argument, not the CLI's flag)
        raise e.said_by("mcp") from None
    why = empty_input(text)
    if why:  # (the CLI's words for a file: ``logichunk ingest`` refuses it so)
        raise InputError(f"{path}: {why}, nothing to store")
    out = add_document(project, title or file_title(real), text, limits, source=str(real))
    return {**out, "decoded": "".join(how)} if "".join(how) else out


def list_documents(project: Project) -> dict[str, Any]:
    store = project.store
    return {"project": project.name,
            "documents": [document_summary(store, d, t, s) for d, t, s in store.documents()]}


def document_text(project: Project, doc_id: str) -> dict[str, Any]:
    store = project.store
    title, source = _require_doc(store, doc_id)
    lay = DocLayout.of(store, doc_id)
    return {"id": doc_id, "title": title, "source": source, "text": lay.text,
            "chapters": [{"id": refs.make_ref(doc_id, str(rank), lay.text[a:b]), "title": t, "span": [a, b]}
                         for _c, rank, t, a, b in lay.chapters]}


def project_bubbles(project: Project, doc_id: str | None = None) -> dict[str, Any]:
    store = project.store
    if doc_id is None:
        items = [b.to_dict() for b in store.bubbles()]
    else:
        _require_doc(store, doc_id)
        items = [{**b.to_dict(), "chapter": rank} for rank, (c, _o, _t) in enumerate(store.chapters(doc_id), 1)
                 for b in store.bubbles(c)]
    return {"project": project.name, "bubbles": plain(items)}


# --------------------------------------------------------------------------- chunks by ref


def parse_ref(ref: Any, document_id: str | None = None) -> tuple[str, str]:
    """``(document id, dotted id)`` of a ref (its tag, if any, checked and dropped: :func:`get_chunk` reads it)."""
    r = refs.parse_ref(ref, document_id)
    return r.document_id, r.dotted_id


def _node(store: Store, lay: DocLayout, doc_id: str, row: ChunkRow, *, with_text: bool = True) -> dict[str, Any]:
    d: dict[str, Any] = {"ref": refs.make_ref(doc_id, row.dotted_id, row.content), "id": row.dotted_id,
                         "kind": row.level, "method": row.method, "size": row.size,
                         "span": lay.span(row.block_id, row.start, row.end, row.content)}
    if with_text:
        d["text"] = row.content
    return d


def _chapter_text(lay: DocLayout, rank: int) -> str:
    _cid, _rank, _title, a, b = lay.chapters[rank - 1]
    return lay.text[a:b]


def _chapter_node(doc_id: str, lay: DocLayout, rank: int, *, with_text: bool = True) -> dict[str, Any]:
    _cid, _rank, title, a, b = lay.chapters[rank - 1]
    text = _chapter_text(lay, rank)
    d: dict[str, Any] = {"ref": refs.make_ref(doc_id, str(rank), text), "id": str(rank), "kind": "chapter",
                         "method": "chapter", "title": title, "size": b - a, "span": [a, b]}
    if with_text:
        d["text"] = text
    return d


def get_chunk(project: Project, ref: str, document_id: str | None = None) -> dict[str, Any]:
    """A chunk by ref with its parent, siblings and children (chapter > parent > child). A tagged ref
    (``DOC#2.3.1@9c1e07ab``, as search gives it) reads the text it was made for or fails saying it
    changed; renumbered by a re-chunk since, the chunk comes with ``moved_from`` (:mod:`logichunk.store.refs`)."""
    store = project.store
    asked = refs.parse_ref(ref, document_id)
    doc = asked.document_id
    docs = _doc_titles(store)
    if doc not in docs:  # (deleted; or several documents of one file replaced by a new one at a re-ingest)
        raise refs.RefNotFound(f"no document {doc!r} in this project: deleted, or replaced by a re-ingest of its "
                               "file; search again (list_documents shows the ids)")
    title = docs[doc][0]
    lay = DocLayout.of(store, doc)
    rows = store.chunks(document_id=doc)
    by_id = {r.dotted_id: r for r in rows}

    def text_at(dotted: str) -> str | None:
        if "." in dotted:
            return by_id[dotted].content if dotted in by_id else None
        return _chapter_text(lay, int(dotted)) if int(dotted) <= len(lay.chapters) else None

    def every_text() -> dict[str, str]:
        return {**{str(r): _chapter_text(lay, r) for r in range(1, len(lay.chapters) + 1)},
                **{r.dotted_id: r.content for r in rows}}

    if asked.tag is None and "." not in asked.dotted_id and int(asked.dotted_id) > len(lay.chapters):
        raise refs.RefNotFound(f"document {doc!r} has {len(lay.chapters)} chapter(s); no chapter {asked.dotted_id}")
    found = refs.resolve(asked, text_at, every_text)
    dotted = found.dotted_id

    def kids_of(prefix: str) -> list[ChunkRow]:
        depth = prefix.count(".") + 1
        return sorted((r for r in rows if r.dotted_id.startswith(prefix + ".") and r.dotted_id.count(".") == depth),
                      key=lambda r: [int(p) for p in r.dotted_id.split(".")])

    if "." not in dotted:  # a chapter
        rank = int(dotted)
        node = _chapter_node(doc, lay, rank)
        parent = None
        siblings = [_chapter_node(doc, lay, r, with_text=False) for r in range(1, len(lay.chapters) + 1) if r != rank]
    else:
        node = _node(store, lay, doc, by_id[dotted])
        up = dotted.rpartition(".")[0]
        if "." in up:
            parent = _node(store, lay, doc, by_id[up], with_text=False) if up in by_id else None
        else:
            parent = _chapter_node(doc, lay, int(up), with_text=False) if int(up) <= len(lay.chapters) else None
        siblings = [_node(store, lay, doc, r, with_text=False) for r in kids_of(up) if r.dotted_id != dotted]
    children = [_node(store, lay, doc, r, with_text=False) for r in kids_of(dotted)]
    out = {**node, "document_id": doc, "document_title": title, "parent": parent, "siblings": siblings,
           "children": children}
    if found.moved_from is not None:  # the same text, renumbered by a re-chunk after an edit
        out["moved_from"] = str(asked)
        out["note"] = (f"{asked} was renumbered by a re-chunk after an edit: the same text is {node['ref']} now "
                       "(use that ref from here on)")
    return out


# --------------------------------------------------------------------------- search


def search(project: Project, query: str, limits: Limits, mode: str = "hybrid", top_k: int = 5,
           include: str = "documents") -> dict[str, Any]:
    """The knowledge base's hits for ``query``, each saying its ``origin``: a ``document`` or an archived
    ``conversation`` topic. ``include``: documents (the default: an agent's RAG cites documents, not its
    own earlier replies; ``recall`` is the memory tool), conversations, or all."""
    modes = tuple(config_mod.RETRIEVE_MODES)
    check_choice(mode, modes, "mode")
    query = check_text(query, "query", limits.max_query_chars)
    top_k = _check_top_k(top_k, limits)
    include = origins.check_include(include)
    store = project.store
    if project.prime is not None:
        project.prime(query)  # the model runs outside the lock (the service caches query vectors)
    res = retrieve_kept(store, query, mode, top_k, include, project.lock)
    titles = _doc_titles(store)
    layouts: dict[str, DocLayout] = {}
    hits = []
    for rank, h in enumerate(res, 1):
        m = h.chunk.meta
        if h.doc_id not in layouts:
            layouts[h.doc_id] = DocLayout.of(store, h.doc_id)
        lay = layouts[h.doc_id]
        text = m.get("text")
        rec: dict[str, Any] = {
            **plain(hit_record(h, rank, *titles.get(h.doc_id, (None, None)))),  # (as the CLI's and HTTP's hits)
            "kind": m.get("level_name"),  # (``level``'s earlier name here)
            "text": text, "span": lay.span(m.get("block_id"), h.chunk.span.start, h.chunk.span.end, text),
        }
        if "sentence_block_span" in m:  # graph modes: the hit as every interface gives it (``span``: the sentence's
            g = graph_hit(h, rank, *titles.get(h.doc_id, (None, None)), lay)  # document_span, this tool's name)
            rec["sentence"] = {**plain(g["sentence"]), "span": g["sentence"]["document_span"]}
        elif h.context is not None and m.get("context_text") is not None:  # a window of a large parent
            rec["context"] = {"text": m["context_text"],
                              "span": lay.span(m.get("block_id"), h.context.start, h.context.end, m["context_text"])}
        if "child_span" in m:  # parent mode: the child that matched
            cs, ce = m["child_span"]
            rec["matched_child"] = {"ref": refs.hit_ref(h.doc_id, m.get("child"), "child", m.get("child_text")),
                                    "id": m.get("child"),
                                    "text": m.get("child_text"),
                                    "span": lay.span(m.get("block_id"), cs, ce, m.get("child_text"))}
        if m.get("relation"):  # hierarchical expansion
            rec["relation"] = m["relation"]
            rec["expanded_from"] = m.get("expanded_from")
        if m.get("fallback"):
            rec["fallback"] = True
        hits.append(rec)
    for r, pg in zip(hits, hit_pages(layouts, [(r["document_id"], r["span"]) for r in hits]), strict=True):
        if pg is not None:  # a PDF's hit: the pages its text lies on, to cite
            r["pages"] = pg
    out: dict[str, Any] = {"query": query, "mode": mode, "project": project.name, "include": include, "hits": hits}
    if res.fallback:
        out["fallback"] = res.fallback
    if res.notes:
        out["notes"] = list(res.notes)
    if getattr(res, "result", None) is not None:  # graph modes: the walk over the similarity graph (as the CLI's,
        out["graph"] = plain(res.walk())  # HTTP's)
        out["path"] = out["graph"]  # (its name before: kept for agents that read it)
    return out


# --------------------------------------------------------------------------- chunk a text


CHUNK_METHODS = ("logic-chain", "cliff", "fused", "parent-child", "fixed", "recursive")  # no causal LM needed


def chunk_text(text: str, limits: Limits, settings: Settings, embedder: Callable[[], Any], method: str = "logic-chain",
               max_size: int | None = None, unit: str = "chars") -> dict[str, Any]:
    """The chunk tree of ``text`` (nothing stored): ids, spans, methods, and the bubbles."""
    from ..chunkers.dispatch import chunk_by, needs

    text = check_text(text, "text", limits.max_text_chars)
    check_choice(method, CHUNK_METHODS, "method")
    if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 1):
        raise InputError(f"max_size must be a positive integer, got {max_size!r}")
    emb = embedder() if "embedder" in needs(method) else None
    tree = chunk_by(method, text, max_size=max_size, unit=unit, embedder=emb, settings=settings, source="<mcp>")
    chunks = [{"id": c.id, "parent": c.parent, "level": c.level, "span": [c.span.start, c.span.end],
               "method": c.method, "text": text[c.span.start:c.span.end]} for c in tree]
    return {"method": method, "unit": tree.unit, "length": len(text), "depth": tree.depth(), "chunks": chunks,
            "bubbles": plain([b.to_dict() for b in tree.bubbles])}


def segment_text(text: str, limits: Limits, embedder: Callable[[], Any] | None = None,
                 units: str = "sentences", topics: int | None = None) -> dict[str, Any]:
    """The topics of ``text`` (nothing stored): where the subject changes, with no size limit
    (:func:`logichunk.segment`); model-free unless an embedder is given."""
    from ..chunkers.topics import segment

    text = check_text(text, "text", limits.max_text_chars)
    tree = segment(text, units=units, embedder=embedder() if embedder is not None else None, topics=topics)
    found = [{"id": c.id, "span": [c.span.start, c.span.end], "sentences": c.meta["sentences"],
              "text": text[c.span.start:c.span.end]} for c in tree.roots()]
    return {"units": units, "length": len(text), "topics": found, "vectors": tree.stats.get("vectors")}

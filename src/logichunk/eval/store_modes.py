"""Store-backed retrieval modes for ``logichunk eval retrieval``: the real ``retrieve()`` path.

Each corpus document becomes a store document (chapters by headings, blank-line blocks — the
``logichunk ingest`` layout), is chunked parent-child and embedded with the run's embedder; then
every query goes through :func:`logichunk.retrieve.retrieve`. Modes:

* ``parent``, ``hybrid`` — chunk hits (a parent, or its context window; hybrid children);
* ``graph-basic``, ``graph-ssg``, ``graph-tri``, ``graph-hybrid`` — sentence hits from
  :mod:`logichunk.retrieve.graph` (``--k`` caps the sentences).

Hits come back in document coordinates (block offsets added), so the harness scores them like any
mode. The store chunks with its own parent-child layout, so ``--methods`` does not apply (run with
``--methods parent-child``, the same layout, to label the rows truthfully). The searcher measures
what a user waits for: ``build_s`` (ingest, chunk, embed), ``graph_s`` (graph sync), per-query wall
``p50_ms``/``p95_ms`` (query embedding included) and process CPU seconds of the query loop.

Settings come from ``Settings.load()`` (so ``LOGICHUNK_GRAPH_CROSS_K=5`` and friends work). With
``$LOGICHUNK_EVAL_STORE`` naming a SQLite file, the built store (chunks, embeddings, graph) is kept
there per data set and embedder and reused by later runs — what makes a second E5 pass cheap.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .chunking import register_mode
from .readers import Corpus

__all__ = ["STORE_MODES", "reset"]

STORE_MODES = ("parent", "hybrid", "graph-basic", "graph-ssg", "graph-tri", "graph-hybrid")
_BUILT: dict[tuple, _Built] = {}


class _Built:
    """One corpus in a store: the store, doc index by store document id, block offsets."""

    def __init__(self, store: Any, doc_index: dict[str, int], block_offset: dict[str, int], build_s: float,
                 reused: bool) -> None:
        self.store = store
        self.doc_index = doc_index
        self.block_offset = block_offset
        self.build_s = build_s
        self.reused = reused


def reset() -> None:
    """Close and forget the stores built so far (tests; a long-running caller between data sets)."""
    for k in list(_BUILT):
        _BUILT.pop(k).store.close()


def _fingerprint(corpus: Corpus, model_id: str) -> str:
    h = hashlib.sha1(model_id.encode())
    for d in corpus.docs:
        h.update(d.doc_id.encode())
        h.update(str(len(d.text)).encode())
    return h.hexdigest()[:16]


def _build(corpus: Corpus, settings: Any) -> _Built:
    from ..config import Settings
    from ..store import Store
    from ..store.ingest import ingest_text

    emb = settings.embedder
    key = (id(corpus), str(getattr(emb, "model_id", "")))
    if key in _BUILT:
        return _BUILT[key]
    reset()  # one corpus at a time in memory
    s = Settings.load()
    path = os.environ.get("LOGICHUNK_EVAL_STORE") or ":memory:"
    project = "eval-" + _fingerprint(corpus, str(getattr(emb, "model_id", "")))
    t0 = time.perf_counter()
    store = Store.open(path, settings=s, embedder=emb, project=project)
    have = store.documents()
    reused = len(have) == len(corpus.docs) and not store.blocks(dirty=True)
    if not reused:
        for did, *_ in have:
            store.delete_document(did)
        for d in corpus.docs:
            ingest_text(store, d.doc_id, d.text)
        store.rechunk_dirty()
    rows = store._q("SELECT b.id, d.title, b.content FROM blocks b JOIN chapters c ON c.id = b.chapter_id "
                    "JOIN documents d ON d.id = c.document_id WHERE d.project_id = ? "
                    "ORDER BY d.doc_order, c.chapter_order, b.block_order", (store.project_id,))
    by_title = corpus.by_id()
    offset: dict[str, int] = {}
    run: dict[str, int] = {}
    for bid, title, content in rows:
        offset[bid] = run.get(title, 0)
        run[title] = offset[bid] + len(content)
    doc_index = {did: by_title[title] for did, title, _ in store.documents()}
    built = _Built(store, doc_index, offset, time.perf_counter() - t0, reused)
    _BUILT[key] = built
    return built


class _StoreSearcher:
    def __init__(self, corpus: Corpus, settings: Any, runner: Any, mode: str) -> None:
        self.mode = mode
        self.b = _build(corpus, settings)
        self.notes: list[str] = []
        if type(runner).__name__ != "_ParentChild":
            self.notes.append(f"{mode}: the store chunks parent-child; --methods does not apply")
        self.stats: dict[str, Any] = {"build_s": round(self.b.build_s, 3), "store_reused": self.b.reused}
        st = self.b.store.settings
        if mode.startswith("graph-"):
            self.stats["graph_params"] = {k: getattr(st, "graph_" + k) for k in (
                "similarity_threshold", "intra_k", "cross_k", "cross_threshold", "max_hops", "min_sentences",
                "early_stop")}
        if mode.startswith("graph-"):
            from ..index.graph_store import sync_graph

            t0 = time.perf_counter()
            g, rep = sync_graph(self.b.store)
            self.stats.update(graph_s=round(time.perf_counter() - t0, 3), graph_status=rep.status,
                              graph_chunks=g.n_chunks, graph_sentences=g.n_sentences, graph_edges=g.n_edges)

    def search(self, queries: Sequence[str], k: int) -> list[np.ndarray]:
        from ..retrieve import retrieve

        st = self.b.store
        out: list[np.ndarray] = []
        lat: list[float] = []
        returned: list[int] = []
        stops: dict[str, int] = {}
        hops: list[int] = []
        c0 = time.process_time()
        for q in queries:
            t = time.perf_counter()
            res = retrieve(st, q, mode=self.mode, top_k=k)
            lat.append(time.perf_counter() - t)
            rows = []
            for h in res:
                span = h.context if h.context is not None else h.chunk.span
                base = self.b.block_offset[h.chunk.meta["block_id"]]
                rows.append((self.b.doc_index[h.doc_id], base + span.start, base + span.end))
            out.append(np.asarray(rows, np.int64).reshape(-1, 3))
            returned.append(len(rows))
            r = getattr(res, "result", None)
            if r is not None:
                stops[r.stop] = stops.get(r.stop, 0) + 1
                hops.append(sum(1 for p in r.path if p.via == "hop"))
        ms = np.asarray(lat) * 1000
        self.stats.update(p50_ms=round(float(np.percentile(ms, 50)), 2) if ms.size else 0.0,
                          p95_ms=round(float(np.percentile(ms, 95)), 2) if ms.size else 0.0,
                          query_cpu_s=round(time.process_time() - c0, 3),
                          items_per_query=round(float(np.mean(returned)), 2) if returned else 0.0)
        if stops:
            self.stats["stops"] = dict(sorted(stops.items()))
            self.stats["hops_mean"] = round(float(np.mean(hops)), 2)
        return out


def _factory(mode: str):
    def make(corpus: Corpus, settings: Any, runner: Any) -> _StoreSearcher:
        return _StoreSearcher(corpus, settings, runner, mode)

    return make


for _m in STORE_MODES:
    register_mode(_m, _factory(_m))

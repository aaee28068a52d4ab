"""Store-backed retrieval modes for the harness: the corpus goes through the same path a user's
documents do — :func:`logichunk.store.ingest.ingest_text` into a SQLite store (chapters, blocks,
parent-child chunks, embeddings) — and every query through :func:`logichunk.retrieve.retrieve`.

Every retrieval mode of :data:`logichunk.config.RETRIEVE_MODES` is registered as ``store:MODE``
(``store:basic`` is the store's own child top-k, to tell apart from the harness's no-store
``basic``), and ``parent``, ``hierarchical``, ``hybrid``, the ``graph-*`` modes and any later store
mode under their own names. A hit is scored by the text the user would get: the context window when
the mode returned one (large parents; a graph mode's sentence), else the chunk. Hits are mapped back
from block-relative spans to document coordinates through the blocks' positions, which tile each
document exactly.

One store per corpus and embedder is shared by the modes of a run (building it — embedding every
sentence and child — is most of the cost with a real model), in a temporary folder; with
``$LOGICHUNK_EVAL_STORE`` naming a SQLite file, it is kept there (one project per corpus and
embedder) and reused by later runs. Searchers report what a user waits for in ``stats``:
``build_s`` (ingest, chunk, embed), ``graph_s`` (graph sync, graph modes), per-query wall
``p50_ms``/``p95_ms`` (query embedding included), process CPU of the query loop, items per query,
and for graph modes why walks stopped.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..config import RETRIEVE_MODES
from ..config import Settings as StoreSettings
from .chunking import register_mode
from .methods import Settings
from .readers import Corpus

__all__ = ["StoreSearcher", "register_store_modes", "reset"]


class _Built:
    """A corpus in a store: the store, block id -> (document index, offset), how it was made."""

    def __init__(self, store: Any, block_at: dict[str, tuple[int, int]], build_s: float, reused: bool,
                 tmp: str | None) -> None:
        self.store = store
        self.block_at = block_at
        self.build_s = build_s
        self.reused = reused
        self.tmp = tmp

    def close(self) -> None:
        self.store.close()
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


_BUILT: dict[tuple, _Built] = {}


def reset() -> None:
    """Close and forget the shared stores (the next searcher builds afresh)."""
    for k in list(_BUILT):
        _BUILT.pop(k).close()


atexit.register(reset)


_LAYOUT = ("max_parent_size", "min_parent_size", "child_min_size", "child_max_size", "child_target_size",
           "similarity_threshold", "cliff_drop", "unit")


def _fingerprint(corpus: Corpus, model_id: str, s: StoreSettings) -> str:
    """Names the store: the documents, the embedder and the settings that shape the chunks."""
    h = hashlib.sha1(model_id.encode())
    h.update(repr([getattr(s, f) for f in _LAYOUT]).encode())
    for d in corpus.docs:
        h.update(d.doc_id.encode())
        h.update(b"\0")
        h.update(d.text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


def _build(corpus: Corpus, settings: Settings, overrides: dict[str, Any]) -> _Built:
    from ..store.base import Store
    from ..store.ingest import ingest_text

    emb = settings.embedder
    store_settings = StoreSettings.load(**overrides)  # LOGICHUNK_* variables apply (graph settings...)
    fp = _fingerprint(corpus, str(getattr(emb, "model_id", type(emb).__name__)), store_settings)
    path = os.environ.get("LOGICHUNK_EVAL_STORE") or ""
    key = (fp, path, repr(sorted(overrides.items())))
    if key in _BUILT:
        return _BUILT[key]
    reset()  # one corpus at a time
    t0 = time.perf_counter()
    tmp = None
    if not path:
        tmp = tempfile.mkdtemp(prefix="logichunk-eval-")
        path = str(Path(tmp) / "eval.db")
    store_settings = store_settings.with_overrides({"db": path})
    store = Store.open(path, settings=store_settings, embedder=emb, project=f"eval-{fp}")
    have = store.documents()
    reused = len(have) == len(corpus.docs) and bool(have) and not store.blocks(dirty=True)
    if not reused:
        for did, *_ in have:
            store.delete_document(did)
        for d in corpus.docs:
            ingest_text(store, d.doc_id, d.text)
        store.rechunk_dirty()
    index = corpus.by_id()
    block_at: dict[str, tuple[int, int]] = {}
    for did, title, _ in store.documents():
        i = index[title]
        pos = 0
        for cid, _, _ in store.chapters(did):
            for b in store.blocks(cid):
                block_at[b.id] = (i, pos)
                pos += len(b.content)
        if pos != len(corpus.docs[i].text):
            raise AssertionError(f"blocks of {corpus.docs[i].doc_id} do not tile it ({pos} != "
                                 f"{len(corpus.docs[i].text)})")
    built = _Built(store, block_at, time.perf_counter() - t0, reused, tmp)
    _BUILT[key] = built
    return built


class StoreSearcher:
    """A store mode over a corpus; ``uses_method`` is False: the store chunks with its own
    parent-child chunker, so the harness runs a store mode once, not once per method."""

    uses_method = False

    def __init__(self, mode: str, corpus: Corpus, settings: Settings, runner: Any = None,
                 overrides: dict[str, Any] | None = None) -> None:
        self.mode = mode.removeprefix("store:")
        self.notes: list[str] = []
        self._built = _build(corpus, settings, dict(overrides or {}))
        self.store = self._built.store
        self.settings = self.store.settings
        self.block_at = self._built.block_at
        self.stats: dict[str, Any] = {"build_s": round(self._built.build_s, 3), "store_reused": self._built.reused}
        if self.mode.startswith("graph-"):
            from ..index.graph_store import sync_graph

            st = self.settings
            t0 = time.perf_counter()
            g, rep = sync_graph(self.store)
            self.stats.update(graph_s=round(time.perf_counter() - t0, 3), graph_status=rep.status,
                              graph_chunks=g.n_chunks, graph_sentences=g.n_sentences, graph_edges=g.n_edges,
                              graph_params={k: getattr(st, "graph_" + k) for k in (
                                  "similarity_threshold", "intra_k", "cross_k", "cross_threshold", "max_hops",
                                  "min_sentences", "early_stop")})

    def search(self, queries: Sequence[str], k: int) -> list[np.ndarray]:
        from ..retrieve import retrieve

        out = []
        fallbacks = 0
        lat: list[float] = []
        returned: list[int] = []
        stops: dict[str, int] = {}
        hops: list[int] = []
        c0 = time.process_time()
        for q in queries:
            rows = []
            if q.strip():
                t = time.perf_counter()
                res = retrieve(self.store, q, mode=self.mode, top_k=k)
                lat.append(time.perf_counter() - t)
                fallbacks += res.fallback is not None
                for h in res:
                    m = h.chunk.meta
                    at = self.block_at.get(m.get("block_id"))
                    if at is None:
                        continue
                    span = h.context if h.context is not None else h.chunk.span
                    rows.append((at[0], at[1] + span.start, at[1] + span.end))
                r = getattr(res, "result", None)  # graph modes: the walk
                if r is not None:
                    stops[r.stop] = stops.get(r.stop, 0) + 1
                    hops.append(sum(1 for p in r.path if p.via == "hop"))
            returned.append(len(rows))
            out.append(np.asarray(rows, dtype=np.int64).reshape(-1, 3))
        if fallbacks:
            self.notes.append(f"{self.mode}: {fallbacks} of {len(queries)} queries fell back to document search")
        ms = np.asarray(lat) * 1000
        self.stats.update(p50_ms=round(float(np.percentile(ms, 50)), 2) if ms.size else 0.0,
                          p95_ms=round(float(np.percentile(ms, 95)), 2) if ms.size else 0.0,
                          query_cpu_s=round(time.process_time() - c0, 3),
                          items_per_query=round(float(np.mean(returned)), 2) if returned else 0.0)
        if stops:
            self.stats["stops"] = dict(sorted(stops.items()))
            self.stats["hops_mean"] = round(float(np.mean(hops)), 2)
        return out

    def close(self) -> None:
        """Nothing to release per searcher: the store is shared by the run's modes (see :func:`reset`)."""


def _factory(mode: str):
    def make(corpus: Corpus, settings: Settings, runner: Any) -> StoreSearcher:
        return StoreSearcher(mode, corpus, settings, runner)

    make.uses_method = False  # type: ignore[attr-defined]
    return make


def register_store_modes() -> None:
    for mode in RETRIEVE_MODES:
        register_mode(f"store:{mode}", _factory(mode))
        if mode != "basic":
            register_mode(mode, _factory(mode))


register_store_modes()

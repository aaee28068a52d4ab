"""Keep a :class:`~logichunk.index.graph.SimilarityGraph` in step with a store, and persist it there.

Why on demand, with the store's generation, rather than inside the store's re-chunk transaction:
the graph is derived data, like the in-memory vector index, which already syncs the same way (the
store bumps ``generation`` on every change; a reader compares and loads the difference). Building
inside ``rechunk`` would put sentence embedding and neighbour search into every ingest and every
edit's short write transaction, for users who never ask for a graph mode. On demand, the first
graph query (or ``logichunk graph build``) pays once; after an edit the next one pays only for what
changed: chunk pks never come back (kept parents keep their children's rows), so the set difference
of pks *is* the edit, and :func:`~logichunk.index.graph.update_graph` relinks only the out-lists it
can affect.

Why tables in the store (schema version 2) rather than a file beside it: PostgreSQL stores have no
file beside them, one transaction keeps the graph consistent with its ``graph_state`` row, and
several processes on one database see the same graph. Rows are keyed by project and embedding
model, carry no foreign keys (a deleted chunk's rows go at the next sync) and hold each chunk's
sentence spans and vectors and its out-edges; chunk vectors and texts are read from ``chunks``.

Concurrency: a sync reads ``graph_state`` first and writes only if it is unchanged when its write
transaction starts; otherwise another process got there first and its rows stand (this process
keeps its own equal result in memory).
"""

from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import LogichunkError
from .graph import GraphParams, NodeBatch, SimilarityGraph, empty_graph, graph_from_parts, update_graph

__all__ = ["SyncReport", "drop_graph", "graph_for", "position_key", "sync_graph"]

_CACHE: weakref.WeakKeyDictionary[Any, dict[str, _Entry]] = weakref.WeakKeyDictionary()
# one sync at a time per store object (threads of a server), without holding the store's own lock
_LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


@dataclass
class _Entry:
    generation: int
    db_generation: int  # graph_state.generation this copy matches (-1: none)
    key: str
    graph: SimilarityGraph
    ann: Any = None


@dataclass(frozen=True)
class SyncReport:
    """``status``: ``fresh`` (nothing to do), ``loaded`` (read from the tables), ``updated``
    (incremental), ``built`` (from scratch or re-linked for new parameters)."""

    status: str
    chunks: int
    sentences: int
    edges: int
    added: int = 0
    removed: int = 0
    relinked: int = 0
    embedded_sentences: int = 0
    seconds: float = 0.0
    neighbours: str = "exact"
    persisted: bool = True


def position_key(dotted: str) -> int:
    """Reading order of a chunk inside its document from its dotted id (``chapter.parent.child``)."""
    parts = [int(p) if p.isdigit() else 0 for p in dotted.split(".")[:3]]
    parts += [0] * (3 - len(parts))
    return (parts[0] * 1_000_000 + parts[1]) * 1_000_000 + parts[2]


# --------------------------------------------------------------------------- reading the store


def _listing(store: Any, model: str) -> tuple[np.ndarray, list[str], np.ndarray, list[str], np.ndarray]:
    rows = store._q("SELECT pk, document_id, dotted_id, start_offset FROM chunks WHERE project_id = ? AND "
                    "chunk_level = 'child' AND embedding_model = ? ORDER BY pk", (store.project_id, model))
    keys = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    docs = [r[1] for r in rows]
    labels = [r[2] for r in rows]
    pos = np.fromiter((position_key(r[2]) for r in rows), np.int64, len(rows))
    offs = np.fromiter((r[3] for r in rows), np.int64, len(rows))
    return keys, docs, pos, labels, offs


def _in_batches(store: Any, sql: str, keys: np.ndarray, head: tuple = (), *, write: bool = False) -> list[tuple]:
    """``sql`` with ``(?*)`` expanded to at most 500 placeholders a call, over ``keys``."""
    out: list[tuple] = []
    kl = keys.tolist()
    for lo in range(0, len(kl), 500):
        part = kl[lo : lo + 500]
        q = sql.replace("(?*)", "(" + ",".join("?" * len(part)) + ")")
        if write:
            store._x(q, (*head, *part))
        else:
            out += store._q(q, (*head, *part))
    return out


def _chunk_payload(store: Any, keys: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Vectors and texts of chunks ``keys`` (sorted), from ``chunks``."""
    rows = _in_batches(store, "SELECT pk, content, embedding FROM chunks WHERE pk IN (?*)", keys)
    by = {int(r[0]): r for r in rows}
    missing = [int(k) for k in keys.tolist() if int(k) not in by]
    if missing:  # deleted between the listing and now: the caller sees a stale graph and syncs again
        raise _Stale(f"chunks {missing[:3]} vanished during the graph sync")
    vecs = np.stack([store._vec_value(by[int(k)][2]) for k in keys.tolist()]) if keys.size else None
    return vecs, [by[int(k)][1] for k in keys.tolist()]


class _Stale(LogichunkError):
    pass


def _state(store: Any, model: str) -> tuple[int, str] | None:
    rows = store._q("SELECT generation, params FROM graph_state WHERE project_id = ? AND model_id = ?",
                    (store.project_id, model))
    return (int(rows[0][0]), rows[0][1]) if rows else None


def _load(store: Any, model: str, dim: int, keys: np.ndarray, docs: list[str], pos: np.ndarray,
          labels: list[str], offs: np.ndarray) -> tuple[SimilarityGraph, np.ndarray]:
    """The stored graph, restricted to chunks that still exist (``keys``: current child pks, sorted), and
    the stored nodes of chunks that are gone (their rows to delete: the loaded graph no longer names
    them). Edges of vanished sources are dropped; edges *to* vanished chunks stay, so the update relinks
    their sources."""
    head = (store.project_id, model)
    stored = np.asarray(sorted(int(r[0]) for r in store._q(
        "SELECT chunk_pk FROM graph_nodes WHERE project_id = ? AND model_id = ?", head)), np.int64)
    live = np.intersect1d(stored, keys)
    at = np.searchsorted(keys, live)
    vecs, texts = _chunk_payload(store, live)
    srows = store._q("SELECT chunk_pk, sent_order, start_offset, end_offset, vector FROM graph_sentences "
                     "WHERE project_id = ? AND model_id = ? ORDER BY chunk_pk, sent_order", head)
    sk = np.fromiter((r[0] for r in srows), np.int64, len(srows))
    ok = np.isin(sk, live)
    srows = [r for r, good in zip(srows, ok.tolist(), strict=True) if good]
    sk = sk[ok]
    ptr = np.zeros(live.size + 1, np.int64)
    np.cumsum(np.bincount(np.searchsorted(live, sk), minlength=live.size), out=ptr[1:])
    st = np.fromiter((r[2] for r in srows), np.int64, len(srows))
    en = np.fromiter((r[3] for r in srows), np.int64, len(srows))
    sv = (np.stack([np.frombuffer(bytes(r[4]), dtype="<f4") for r in srows]).astype(np.float32)
          if srows else np.zeros((0, dim), np.float32))
    batch = NodeBatch.of(live, [docs[i] for i in at.tolist()], pos[at],
                         vecs if vecs is not None else np.zeros((0, dim), np.float32), texts,
                         [labels[i] for i in at.tolist()], offs[at])
    batch = NodeBatch(batch.keys, batch.docs, batch.positions, batch.vecs, batch.texts, batch.labels,
                      batch.offsets, (ptr, st, en, sv))
    erows = store._q("SELECT src_pk, dst_pk, weight, kind FROM graph_edges WHERE project_id = ? AND model_id = ?",
                     head)
    es = np.fromiter((r[0] for r in erows), np.int64, len(erows))
    ed = np.fromiter((r[1] for r in erows), np.int64, len(erows))
    ew = np.fromiter((r[2] for r in erows), np.float32, len(erows))
    ek = np.fromiter((r[3] for r in erows), np.int8, len(erows))
    m = np.isin(es, live)
    return graph_from_parts(batch, es[m], ed[m], ew[m], ek[m]), np.setdiff1d(stored, keys)


# --------------------------------------------------------------------------- writing


def _persist(store: Any, model: str, g: SimilarityGraph, removed: np.ndarray, added: np.ndarray,
             relinked: np.ndarray, generation: int, key: str, expect: int, wipe: bool) -> bool:
    head = (store.project_id, model)
    with store.tx():
        now = _state(store, model)
        if (now[0] if now else -1) != expect:
            return False
        if wipe:
            for t in ("graph_nodes", "graph_sentences", "graph_edges"):
                store._x(f"DELETE FROM {t} WHERE project_id = ? AND model_id = ?", head)
        else:
            gone = removed
            for t, col in (("graph_nodes", "chunk_pk"), ("graph_sentences", "chunk_pk")):
                _in_batches(store, f"DELETE FROM {t} WHERE project_id = ? AND model_id = ? AND {col} IN (?*)",
                            gone, head, write=True)
            _in_batches(store, "DELETE FROM graph_edges WHERE project_id = ? AND model_id = ? AND src_pk IN (?*)",
                        np.union1d(gone, relinked), head, write=True)
        new_nodes = g.keys if wipe else added
        idx = g.index_of(new_nodes)
        store._xmany("INSERT INTO graph_nodes(project_id, model_id, chunk_pk) VALUES (?, ?, ?)",
                     [(*head, int(k)) for k in new_nodes.tolist()])
        rows = []
        for i, k in zip(idx.tolist(), new_nodes.tolist(), strict=True):
            for j, r in enumerate(range(int(g.sent_ptr[i]), int(g.sent_ptr[i + 1]))):
                rows.append((*head, int(k), j, int(g.sent_start[r]), int(g.sent_end[r]),
                             np.ascontiguousarray(g.sent_vecs[r], "<f4").tobytes()))
        store._xmany("INSERT INTO graph_sentences(project_id, model_id, chunk_pk, sent_order, start_offset, "
                     "end_offset, vector) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        srcs = g.keys if wipe else np.union1d(relinked, added)
        m = np.isin(g.edge_src, srcs)
        store._xmany("INSERT INTO graph_edges(project_id, model_id, src_pk, dst_pk, kind, weight) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     [(*head, int(a), int(b), int(c), float(w)) for a, b, c, w in zip(
                         g.edge_src[m].tolist(), g.edge_dst[m].tolist(), g.edge_kind[m].tolist(),
                         g.edge_weight[m].tolist(), strict=True)])
        store._x("DELETE FROM graph_state WHERE project_id = ? AND model_id = ?", head)
        store._x("INSERT INTO graph_state(project_id, model_id, generation, params, built_at) VALUES (?, ?, ?, ?, ?)",
                 (*head, int(generation), key, time.time()))
    return True


# --------------------------------------------------------------------------- the entry points


def sync_graph(store: Any, params: GraphParams | None = None, *, force: bool = False,
               persist: bool = True) -> tuple[SimilarityGraph, SyncReport]:
    """Bring the store's graph up to date (see the module docstring) and return it with a report.
    ``force`` rebuilds every edge from the stored nodes; ``persist=False`` computes a graph (from the
    cached one) without writing it or caching it — to compare parameters, say."""
    p = params or GraphParams.from_settings(store.settings)
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault(store, threading.Lock())
    with lock:
        for _attempt in range(3):
            try:
                return _sync(store, p, force, persist)
            except _Stale:
                continue
        return _sync(store, p, force, persist)


def graph_for(store: Any, params: GraphParams | None = None) -> SimilarityGraph:
    """The store's graph at its current generation (synced and cached per store and model)."""
    return sync_graph(store, params)[0]


def drop_graph(store: Any) -> None:
    """Forget the stored graph of this project and model (it is rebuilt on next use)."""
    model = store.model_id
    head = (store.project_id, model)
    with store.tx():
        for t in ("graph_nodes", "graph_sentences", "graph_edges", "graph_state"):
            store._x(f"DELETE FROM {t} WHERE project_id = ? AND model_id = ?", head)
    _CACHE.get(store, {}).pop(model, None)


def _sync(store: Any, params: GraphParams, force: bool, persist: bool) -> tuple[SimilarityGraph, SyncReport]:
    t0 = time.perf_counter()
    model = store.model_id
    dim = int(store.embedder.dim)
    key = params.edge_key()
    gen = store.generation()
    per_store = _CACHE.setdefault(store, {})
    entry = per_store.get(model)
    if entry is not None and entry.generation == gen and entry.key == key and not force:
        g = entry.graph
        return g, SyncReport("fresh", g.n_chunks, g.n_sentences, g.n_edges, neighbours=_kind(entry.ann))
    state = _state(store, model) if persist else None
    db_gen = state[0] if state else -1
    keys, docs, pos, labels, offs = _listing(store, model)
    stale = np.zeros(0, np.int64)  # stored nodes of chunks gone before this load (a reader in another process)
    if entry is not None and (entry.db_generation == db_gen or not persist):
        old, status, old_key = entry.graph, "updated", entry.key
    elif state is not None:
        (old, stale), status, old_key = _load(store, model, dim, keys, docs, pos, labels, offs), "loaded", state[1]
    else:
        old, status, old_key = empty_graph(dim), "built", key
    relink = force or old_key != key
    removed = np.setdiff1d(old.keys, keys)
    added = np.setdiff1d(keys, old.keys)
    at = np.searchsorted(keys, added)
    vecs, texts = _chunk_payload(store, added)
    add = NodeBatch.of(added, [docs[i] for i in at.tolist()], pos[at],
                       vecs if vecs is not None else np.zeros((0, dim), np.float32), texts,
                       [labels[i] for i in at.tolist()], offs[at])
    kept = np.intersect1d(old.keys, keys)
    ka = np.searchsorted(keys, kept)
    ko = old.index_of(kept)
    moved_mask = (old.positions[ko] != pos[ka]) | (old.offsets[ko] != offs[ka] if old.offsets is not None else True)
    moved_mask |= np.asarray([old.docs[i] != docs[j] or old.label(i) != labels[j]
                              for i, j in zip(ko.tolist(), ka.tolist(), strict=True)], bool).reshape(-1)
    mk = np.flatnonzero(moved_mask)
    moved = NodeBatch(kept[mk], tuple(docs[i] for i in ka[mk].tolist()), pos[ka[mk]],
                      np.zeros((mk.size, dim), np.float32), ("",) * mk.size,
                      tuple(labels[i] for i in ka[mk].tolist()), offs[ka[mk]])
    changed = bool(removed.size or added.size or mk.size or relink)
    # (the approximate index only where edges are to be found: a process that loads an unchanged graph
    # built a private HNSW index of every chunk first, 62 s on 51k chunks, for nothing)
    ann = _ann_for(store, params, keys.size, entry, removed, added, add.vecs) if changed else \
        (entry.ann if entry is not None else None)
    if not changed:
        g, relinked, embedded = old, np.zeros(0, np.int64), 0
    else:
        g, d = update_graph(old, removed, add, store.embed, params, ann=ann, moved=moved, relink_all=relink)
        relinked, embedded = d.relinked, d.embedded_sentences
        if relink:
            status = "built"
    wrote = False
    if persist and not getattr(store, "read_only", False):  # a read-only database: the graph stays in memory
        wrote = _persist(store, model, g, np.union1d(removed, stale), added, relinked, gen, key, db_gen,
                         wipe=relink or state is None)
    if persist:  # an in-memory-only sync (other parameters, say) leaves the cached graph alone
        per_store[model] = _Entry(gen, gen if wrote else db_gen, key, g,
                                  ann if getattr(ann, "_graph_owned", False) else None)
    rep = SyncReport(status, g.n_chunks, g.n_sentences, g.n_edges, int(added.size), int(removed.size + stale.size),
                     int(relinked.size), int(embedded), time.perf_counter() - t0, _kind(ann), wrote)
    return g, rep


def _kind(ann: Any) -> str:
    return "exact" if ann is None else "hnsw"


def _ann_for(store: Any, params: GraphParams, n: int, entry: _Entry | None, removed: np.ndarray,
             added: np.ndarray, add_vecs: np.ndarray) -> Any:
    """The approximate index for cross-document neighbours, or None for exact: the store's own
    child index when it is HNSW (same rows, already in step), else one of our own, kept with the
    cached graph and updated with the same difference."""
    if not params.use_ann(n):
        return None
    idx = store.vector_index("child")
    if getattr(idx, "kind", "") == "hnsw":
        return idx
    from .vectors import HnswIndex

    own = entry.ann if entry is not None and entry.ann is not None else None
    if own is not None and entry is not None and len(own) == entry.graph.n_chunks:
        own.update(added, add_vecs, removed)
        return own
    own = HnswIndex(int(store.embedder.dim), m=params.hnsw_m, ef_construction=params.hnsw_ef_construction,
                    ef_search=params.hnsw_ef_search, capacity=max(1024, int(n * 1.2)))
    own._graph_owned = True
    ids, vecs = store._load_vectors("child", store.model_id, None)
    own.update(ids, vecs, np.zeros(0, np.int64))
    return own

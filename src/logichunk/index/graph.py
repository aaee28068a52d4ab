"""The semantic similarity graph (SSG): chunks and their sentences as nodes, similarity edges.

Nodes are chunks (a unit vector and the text each) and the sentences of every chunk (exact spans
from :func:`logichunk.text.sentences.split_sentences`, trimmed of surrounding whitespace, a unit
vector each). A chunk owns its sentences (``sent_ptr``: the chunk↔sentence edges). Chunk↔chunk
edges are kept as each chunk's *out-list*, and traversal uses their symmetric union:

* ``seq``   — the previous and the next chunk of the same document, in reading order;
* ``intra`` — the ``intra_k`` most similar chunks of the same document, cosine ≥ ``similarity_threshold``;
* ``cross`` — the ``cross_k`` most similar chunks of *other* documents, cosine ≥ ``cross_threshold``.

Why out-lists: a chunk's out-list is a function of the node set alone, so an update after an edit
only recomputes the out-lists it can change — every chunk of a touched document, the chunks whose
list named a removed chunk, and the chunks an added chunk now beats their weakest cross edge for —
and, with exact neighbours, the result equals a build from scratch (the tests check it). Ties are
broken by key (sims rounded to 1e-6 first, so BLAS blocking cannot reorder them).

Construction is numpy throughout: within a document one matrix product per document; across
documents a blocked ``rows × all`` product with the same document masked out, or, above
``ann_threshold`` chunks (or with ``neighbours="hnsw"``), hnswlib queries in one batch (rows whose
candidates were all from their own document fall back to the exact product). Nothing here knows
the store; :mod:`logichunk.index.graph_store` keeps a graph in step with one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..config import Settings as _D
from ..errors import InputError
from ..models.embedding import l2_normalize
from ..text.sentences import split_sentences

__all__ = [
    "CROSS", "INTRA", "KIND_NAMES", "SEQ", "GraphDelta", "GraphParams", "NodeBatch", "SimilarityGraph",
    "build_graph", "empty_graph", "graph_from_parts", "sentence_spans", "update_graph",
]

SEQ, INTRA, CROSS = 1, 2, 3
KIND_NAMES = {SEQ: "seq", INTRA: "intra", CROSS: "cross"}
_ROUND = 6  # decimals of cosine kept for ordering and thresholds (stable across BLAS blockings)
_BLOCK_BYTES = 32 << 20  # memory of one block of the rows x all similarity product


@dataclass(frozen=True)
class GraphParams:
    """How edges are chosen. ``neighbours``: ``exact``, ``hnsw`` or ``auto`` (HNSW from
    ``ann_threshold`` chunks on, when hnswlib is installed). Defaults are
    :class:`~logichunk.config.Settings`'s (``graph_*``, ``hnsw_*``)."""

    similarity_threshold: float = _D.graph_similarity_threshold
    intra_k: int = _D.graph_intra_k
    cross_k: int = _D.graph_cross_k
    cross_threshold: float = _D.graph_cross_threshold
    neighbours: str = _D.graph_neighbours
    ann_threshold: int = _D.hnsw_threshold
    hnsw_m: int = _D.hnsw_m
    hnsw_ef_construction: int = _D.hnsw_ef_construction
    hnsw_ef_search: int = _D.hnsw_ef_search

    def __post_init__(self) -> None:
        if self.intra_k < 0 or self.cross_k < 0:
            raise InputError("graph intra_k and cross_k must not be negative")
        for name in ("similarity_threshold", "cross_threshold"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise InputError(f"graph {name} must be in [-1, 1], got {getattr(self, name)}")
        if self.neighbours not in ("auto", "exact", "hnsw"):
            raise InputError(f"graph neighbours must be auto, exact or hnsw, got {self.neighbours!r}")

    @classmethod
    def from_settings(cls, s: Any) -> GraphParams:
        return cls(s.graph_similarity_threshold, s.graph_intra_k, s.graph_cross_k, s.graph_cross_threshold,
                   s.graph_neighbours, s.hnsw_threshold, s.hnsw_m, s.hnsw_ef_construction, s.hnsw_ef_search)

    def edge_key(self) -> str:
        """What the edges depend on: a stored graph built with another key is re-linked. (With
        ``auto``, crossing ``ann_threshold`` does not re-link: later out-lists are approximate.)"""
        return json.dumps({"similarity_threshold": self.similarity_threshold, "intra_k": self.intra_k,
                           "cross_k": self.cross_k, "cross_threshold": self.cross_threshold,
                           "neighbours": self.neighbours}, sort_keys=True)

    def use_ann(self, n: int) -> bool:
        if self.neighbours == "exact":
            return False
        if self.neighbours == "hnsw":
            return True
        from .vectors import hnsw_available

        return n >= self.ann_threshold and hnsw_available()


@dataclass(frozen=True, eq=False)
class SimilarityGraph:
    """A graph snapshot as arrays. Nodes are sorted by ``keys`` (chunk pks in a store, any unique
    int64 ids otherwise); edges name nodes by key. Sentence ``j`` of chunk ``i`` is row
    ``sent_ptr[i] + j``; its span ``[sent_start, sent_end)`` is relative to the chunk text."""

    keys: np.ndarray
    docs: tuple[str, ...]
    positions: np.ndarray
    vecs: np.ndarray
    texts: tuple[str, ...]
    sent_ptr: np.ndarray
    sent_start: np.ndarray
    sent_end: np.ndarray
    sent_vecs: np.ndarray
    edge_src: np.ndarray
    edge_dst: np.ndarray
    edge_weight: np.ndarray
    edge_kind: np.ndarray
    labels: tuple[str, ...] = ()
    offsets: np.ndarray | None = None
    notes: tuple[str, ...] = field(default=())

    # ------------------------------------------------------------------ sizes
    @property
    def dim(self) -> int:
        return int(self.vecs.shape[1])

    @property
    def n_chunks(self) -> int:
        return int(self.keys.size)

    @property
    def n_sentences(self) -> int:
        return int(self.sent_start.size)

    @property
    def n_edges(self) -> int:
        """Undirected chunk↔chunk edges."""
        return int(self.adjacency[1].size // 2)

    def __len__(self) -> int:
        return self.n_chunks

    # ------------------------------------------------------------------ lookups
    def index_of(self, keys: Sequence[int] | np.ndarray) -> np.ndarray:
        """Node indices of ``keys`` (-1 where a key is not in the graph)."""
        k = np.asarray(keys, np.int64).reshape(-1)
        if self.keys.size == 0:
            return np.full(k.size, -1, np.int64)
        i = np.searchsorted(self.keys, k)
        i = np.clip(i, 0, self.keys.size - 1)
        return np.where(self.keys[i] == k, i, -1)

    @cached_property
    def doc_codes(self) -> np.ndarray:
        """Integer code of each node's document (equal codes = same document)."""
        if not self.docs:
            return np.zeros(0, np.int64)
        return np.unique(_str_array(self.docs), return_inverse=True)[1].astype(np.int64).reshape(-1)

    @cached_property
    def adjacency(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR ``(indptr, indices)`` of the symmetric union of the out-lists, neighbours ascending."""
        n = self.n_chunks
        if self.edge_src.size == 0:
            return np.zeros(n + 1, np.int64), np.zeros(0, np.int64)
        s = self.index_of(self.edge_src)
        d = self.index_of(self.edge_dst)
        ok = (s >= 0) & (d >= 0) & (s != d)
        s, d = s[ok], d[ok]
        a = np.concatenate([s, d])
        b = np.concatenate([d, s])
        pair = np.unique(a * max(n, 1) + b)
        a, b = pair // max(n, 1), pair % max(n, 1)
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(a, minlength=n), out=indptr[1:])
        return indptr, b

    def neighbours(self, i: int) -> np.ndarray:
        indptr, idx = self.adjacency
        return idx[indptr[i] : indptr[i + 1]]

    def sentence_rows(self, i: int) -> np.ndarray:
        return np.arange(self.sent_ptr[i], self.sent_ptr[i + 1], dtype=np.int64)

    @cached_property
    def sent_node(self) -> np.ndarray:
        """The chunk (node index) of each sentence row."""
        return np.repeat(np.arange(self.n_chunks, dtype=np.int64), np.diff(self.sent_ptr))

    def sentence_text(self, j: int) -> str:
        i = int(self.sent_node[j])
        return self.texts[i][int(self.sent_start[j]) : int(self.sent_end[j])]

    def label(self, i: int) -> str:
        return self.labels[i] if self.labels else str(int(self.keys[i]))

    def offset(self, i: int) -> int:
        return 0 if self.offsets is None else int(self.offsets[i])

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-``k`` chunks by cosine: (node indices, sims), best first, ties by key."""
        if self.n_chunks == 0 or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        sims = self.vecs @ np.asarray(q, np.float32).reshape(-1)
        order = np.lexsort((self.keys, -np.round(sims, _ROUND)))[:k]
        return order.astype(np.int64), sims[order]

    def edges(self) -> list[tuple[int, int, str, float]]:
        """Out-edges as ``(src key, dst key, kind, cosine)``, sorted (for inspection and tests)."""
        order = np.lexsort((self.edge_dst, self.edge_src))
        return [(int(self.edge_src[i]), int(self.edge_dst[i]), KIND_NAMES[int(self.edge_kind[i])],
                 float(self.edge_weight[i])) for i in order.tolist()]

    def stats(self) -> dict[str, Any]:
        kinds = {name: int((self.edge_kind == k).sum()) for k, name in KIND_NAMES.items()}
        deg = np.diff(self.adjacency[0])
        return {"chunks": self.n_chunks, "sentences": self.n_sentences, "edges": self.n_edges,
                "out_edges": kinds, "documents": len(set(self.docs)),
                "isolated": int((deg == 0).sum()) if deg.size else 0,
                "mean_degree": float(deg.mean()) if deg.size else 0.0}


# --------------------------------------------------------------------------- inputs and outputs


@dataclass(frozen=True)
class NodeBatch:
    """Chunks to add: keys, documents, reading positions, vectors, texts (labels/offsets optional).
    ``sentences`` may carry known ``(ptr, starts, ends, vecs)`` (a stored graph), else they are split
    and embedded."""

    keys: np.ndarray
    docs: tuple[str, ...]
    positions: np.ndarray
    vecs: np.ndarray
    texts: tuple[str, ...]
    labels: tuple[str, ...] = ()
    offsets: np.ndarray | None = None
    sentences: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, keys: Sequence[int], docs: Sequence[str], positions: Sequence[int], vecs: Any, texts: Sequence[str],
           labels: Sequence[str] = (), offsets: Sequence[int] | None = None) -> NodeBatch:
        k = np.asarray(keys, np.int64).reshape(-1)
        v = np.asarray(vecs, np.float32)
        v = l2_normalize(v.reshape(k.size, -1) if k.size else v.reshape(0, v.shape[-1] if v.ndim == 2 else 0))
        if not (len(docs) == len(texts) == k.size == len(positions)) or (labels and len(labels) != k.size):
            raise InputError("node batch: keys, docs, positions, vecs and texts must have the same length")
        if np.unique(k).size != k.size:
            raise InputError("node batch: keys must be unique")
        return cls(k, tuple(str(d) for d in docs), np.asarray(positions, np.int64).reshape(-1), v,
                   tuple(texts), tuple(labels), None if offsets is None else np.asarray(offsets, np.int64))


@dataclass(frozen=True)
class GraphDelta:
    """What an update changed: removed and added node keys, and the nodes whose out-lists were
    recomputed (what a persistent copy must rewrite)."""

    removed: np.ndarray
    added: np.ndarray
    relinked: np.ndarray
    embedded_sentences: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def empty_graph(dim: int) -> SimilarityGraph:
    z = np.zeros(0, np.int64)
    return SimilarityGraph(z, (), z, np.zeros((0, dim), np.float32), (), np.zeros(1, np.int64), z, z,
                           np.zeros((0, dim), np.float32), z, z, np.zeros(0, np.float32), np.zeros(0, np.int8))


def _sentences(text: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Trimmed spans and the untrimmed pieces (what the parent-child chunker embedded, so the
    store's embedding cache answers for them)."""
    ss = split_sentences(text)
    starts, ends, raw = [], [], []
    for s, e in zip(ss.starts.tolist(), ss.ends.tolist(), strict=True):
        piece = text[s:e]
        stripped = piece.strip()
        if not stripped:
            continue
        lead = len(piece) - len(piece.lstrip())
        starts.append(s + lead)
        ends.append(s + lead + len(stripped))
        raw.append(piece)
    return np.asarray(starts, np.int64), np.asarray(ends, np.int64), raw


def sentence_spans(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Sentences of ``text`` from the shared splitter, each trimmed of surrounding whitespace
    (still an exact slice); whitespace-only pieces are dropped. Their vectors are those of the
    untrimmed pieces (the same meaning; and cache hits for chunks the store made)."""
    s, e, _ = _sentences(text)
    return s, e


def _split_and_embed(texts: Sequence[str], embed: Callable[[list[str]], np.ndarray], dim: int):
    ptr = np.zeros(len(texts) + 1, np.int64)
    st, en, pieces = [], [], []
    for i, t in enumerate(texts):
        s, e, raw = _sentences(t)
        st.append(s)
        en.append(e)
        ptr[i + 1] = ptr[i] + s.size
        pieces.extend(raw)
    starts = np.concatenate(st) if st else np.zeros(0, np.int64)
    ends = np.concatenate(en) if en else np.zeros(0, np.int64)
    vecs = l2_normalize(np.asarray(embed(pieces), np.float32).reshape(len(pieces), -1)) if pieces \
        else np.zeros((0, dim), np.float32)
    if vecs.shape[1] != dim:
        raise InputError(f"sentence vectors have dimension {vecs.shape[1]}, chunk vectors {dim}")
    return ptr, starts, ends, vecs, len(pieces)


# --------------------------------------------------------------------------- neighbour selection


def _top_rows(sims: np.ndarray, keys: np.ndarray, k: int, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``sims`` (masked entries are -inf): the ``k`` best columns with rounded cosine
    ≥ ``threshold``, ties by key. Returns (row, column, sim) triples as arrays."""
    r_, c_ = sims.shape
    if k <= 0 or r_ == 0 or c_ == 0:
        z = np.zeros(0, np.int64)
        return z, z, np.zeros(0, np.float32)
    rs = np.round(sims, _ROUND)
    kk = min(c_, k + 8)  # a margin of candidates so exact ties at the cut are ordered by key
    cand = np.argpartition(-rs, kk - 1, axis=1)[:, :kk] if kk < c_ else np.tile(np.arange(c_), (r_, 1))
    cs = np.take_along_axis(rs, cand, axis=1)
    order = np.lexsort((keys[cand], -cs), axis=1)[:, :k]
    cols = np.take_along_axis(cand, order, axis=1)
    vals = np.take_along_axis(cs, order, axis=1)
    rows = np.repeat(np.arange(r_, dtype=np.int64), cols.shape[1]).reshape(cols.shape)
    ok = np.isfinite(vals) & (vals >= threshold)
    return rows[ok], cols[ok].astype(np.int64), vals[ok].astype(np.float32)


def _block_rows(n_cols: int) -> int:
    return max(1, min(4096, _BLOCK_BYTES // max(4 * n_cols, 1)))


def _cross_exact(vecs: np.ndarray, codes: np.ndarray, keys: np.ndarray, rows: np.ndarray, k: int,
                 threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    out_r, out_c, out_w = [], [], []
    if k <= 0 or rows.size == 0:
        return _cat([]), _cat([]), _cat([], np.float32)
    step = _block_rows(vecs.shape[0])
    for lo in range(0, rows.size, step):
        r = rows[lo : lo + step]
        sims = vecs[r] @ vecs.T
        sims[codes[r][:, None] == codes[None, :]] = -np.inf
        a, c, w = _top_rows(sims, keys, k, threshold)
        out_r.append(r[a])
        out_c.append(c)
        out_w.append(w)
    return _cat(out_r), _cat(out_c), _cat(out_w, np.float32)


def _cross_ann(ann: Any, vecs: np.ndarray, codes: np.ndarray, keys: np.ndarray, rows: np.ndarray, k: int,
               threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cross-document neighbours from an HNSW index over all node keys; rows whose candidates were
    too few once their own document is filtered out are redone exactly."""
    n = keys.size
    if rows.size == 0 or k <= 0:
        return _cat([]), _cat([]), _cat([], np.float32)
    doc_size = np.bincount(codes)
    pad = int(min(doc_size.max(initial=1), 64))
    kk = min(n, k + pad + 1)
    out_r, out_c, out_w, redo = [], [], [], []
    # a block of rows at a time: the candidates' vectors are rows x kk x dim floats (51k rows of 1,024
    # dimensions and 68 candidates each took 13 GiB at once; a store's whole graph is built this way)
    step = _block_rows(kk * vecs.shape[1])
    for lo in range(0, rows.size, step):
        part = rows[lo : lo + step]
        labels, sims = ann.search_many(vecs[part], kk)
        cols = np.searchsorted(keys, labels)
        cols = np.clip(cols, 0, n - 1)
        valid = (keys[cols] == labels) & (labels >= 0)
        valid &= codes[cols] != codes[part][:, None]
        # exact cosine of the candidates (the index may store approximate distances)
        exact = np.einsum("rd,rkd->rk", vecs[part], vecs[cols])
        exact = np.where(valid, exact, -np.inf)
        a, c, w = _top_rows_on(exact, cols, keys, k, threshold)
        # too few candidates from other documents (not the threshold): ask the exact product
        others = n - doc_size[codes[part]]
        again = np.flatnonzero(valid.sum(axis=1) < np.minimum(k, others))
        keep = ~np.isin(a, again)
        out_r.append(part[a[keep]])
        out_c.append(c[keep])
        out_w.append(w[keep])
        redo.append(part[again])
    r_, c_, w_ = _cat(out_r), _cat(out_c), _cat(out_w, np.float32)
    again = _cat(redo)
    if again.size:
        r2, c2, w2 = _cross_exact(vecs, codes, keys, again, k, threshold)
        r_, c_, w_ = np.concatenate([r_, r2]), np.concatenate([c_, c2]), np.concatenate([w_, w2])
    return r_, c_, w_


def _top_rows_on(sims: np.ndarray, cols: np.ndarray, keys: np.ndarray, k: int, threshold: float):
    """:func:`_top_rows` over per-row candidate columns ``cols`` (same shape as ``sims``)."""
    if sims.size == 0:
        z = np.zeros(0, np.int64)
        return z, z, np.zeros(0, np.float32)
    rs = np.round(sims, _ROUND)
    order = np.lexsort((keys[cols], -rs), axis=1)[:, :k]
    c = np.take_along_axis(cols, order, axis=1)
    v = np.take_along_axis(rs, order, axis=1)
    rows = np.repeat(np.arange(sims.shape[0], dtype=np.int64), c.shape[1]).reshape(c.shape)
    ok = np.isfinite(v) & (v >= threshold)
    return rows[ok], c[ok].astype(np.int64), v[ok].astype(np.float32)


def _str_array(xs: Sequence[str]) -> np.ndarray:
    return np.asarray(list(xs), dtype=str) if len(xs) else np.zeros(0, dtype="<U1")


def _cat(xs: list[np.ndarray], dtype: Any = np.int64) -> np.ndarray:
    return np.concatenate(xs).astype(dtype, copy=False) if xs else np.zeros(0, dtype)


def _seq_and_intra(vecs: np.ndarray, codes: np.ndarray, positions: np.ndarray, keys: np.ndarray, rows: np.ndarray,
                   k: int, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Out-edges (src, dst, sim, kind) of ``rows`` inside their own documents."""
    n = keys.size
    if rows.size == 0 or n == 0:
        z = np.zeros(0, np.int64)
        return z, z, np.zeros(0, np.float32), np.zeros(0, np.int8)
    # reading order: by document, then position, then key
    order = np.lexsort((keys, positions, codes))
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    same_next = np.zeros(n, bool)
    same_next[:-1] = codes[order[:-1]] == codes[order[1:]]
    nxt = np.full(n, -1, np.int64)
    prv = np.full(n, -1, np.int64)
    nxt[order[:-1][same_next[:-1]]] = order[1:][same_next[:-1]]
    prv[order[1:][same_next[:-1]]] = order[:-1][same_next[:-1]]
    src_l, dst_l, kind_l = [], [], []
    for nb in (prv, nxt):
        m = nb[rows] >= 0
        src_l.append(rows[m])
        dst_l.append(nb[rows][m])
        kind_l.append(np.full(int(m.sum()), SEQ, np.int8))
    # similar chunks of the same document: one product per document that has rows to redo
    if k > 0:
        row_codes = codes[rows]
        by_doc = np.argsort(row_codes, kind="stable")
        bounds = np.flatnonzero(np.diff(row_codes[by_doc])) + 1
        members_order = np.argsort(codes, kind="stable")
        mstarts = np.searchsorted(codes[members_order], np.arange(codes.max() + 1))
        mends = np.searchsorted(codes[members_order], np.arange(codes.max() + 1), side="right")
        for grp in np.split(by_doc, bounds):
            if grp.size == 0:
                continue
            code = int(row_codes[grp[0]])
            members = members_order[mstarts[code] : mends[code]]
            if members.size < 2:
                continue
            mv = vecs[members]
            step = _block_rows(members.size)  # (a block of rows at a time: one document of 15k chunks took a
            for lo in range(0, grp.size, step):  # 15k x 15k product and its sort at once, 4.3 GB)
                r = rows[grp[lo : lo + step]]
                sims = vecs[r] @ mv.T
                sims[r[:, None] == members[None, :]] = -np.inf
                a, c, w = _top_rows(sims, keys[members], k, threshold)
                src_l.append(r[a])
                dst_l.append(members[c])
                kind_l.append(np.full(a.size, INTRA, np.int8))
    src = _cat(src_l)
    dst = _cat(dst_l)
    kind = _cat(kind_l, np.int8)
    w = np.einsum("ij,ij->i", vecs[src], vecs[dst]).astype(np.float32) if src.size else np.zeros(0, np.float32)
    # one edge per (src, dst): seq wins over intra
    if src.size:
        o = np.lexsort((kind, dst, src))
        first = np.ones(o.size, bool)
        first[1:] = (src[o][1:] != src[o][:-1]) | (dst[o][1:] != dst[o][:-1])
        o = o[first]
        src, dst, w, kind = src[o], dst[o], w[o], kind[o]
    return src, dst, w, kind


def _out_edges(vecs: np.ndarray, codes: np.ndarray, positions: np.ndarray, keys: np.ndarray, rows: np.ndarray,
               p: GraphParams, ann: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """All out-edges (src key, dst key, cosine, kind) of the nodes ``rows``."""
    s1, d1, w1, k1 = _seq_and_intra(vecs, codes, positions, keys, rows, p.intra_k, p.similarity_threshold)
    if ann is not None:
        s2, d2, w2 = _cross_ann(ann, vecs, codes, keys, rows, p.cross_k, p.cross_threshold)
    else:
        s2, d2, w2 = _cross_exact(vecs, codes, keys, rows, p.cross_k, p.cross_threshold)
    src = np.concatenate([s1, s2])
    dst = np.concatenate([d1, d2])
    w = np.concatenate([w1, w2]).astype(np.float32)
    kind = np.concatenate([k1, np.full(s2.size, CROSS, np.int8)])
    return keys[src], keys[dst], w, kind


def _reverse_affected(vecs: np.ndarray, codes: np.ndarray, keys: np.ndarray, added: np.ndarray, kth: np.ndarray,
                      candidates: np.ndarray, p: GraphParams, ann: Any = None) -> np.ndarray:
    """Nodes among ``candidates`` whose cross list an added node now enters: cosine ≥ their weakest
    cross edge (``kth``; ``cross_threshold`` where the list is not full)."""
    if added.size == 0 or candidates.size == 0 or p.cross_k == 0:
        return np.zeros(0, np.int64)
    hit = np.zeros(keys.size, bool)
    if ann is not None:
        kk = min(keys.size, 4 * p.cross_k + 8)
        step = _block_rows(kk * vecs.shape[1])
        for lo in range(0, added.size, step):  # (a block of rows at a time, as _cross_ann)
            part = added[lo : lo + step]
            labels, _ = ann.search_many(vecs[part], kk)
            cols = np.clip(np.searchsorted(keys, labels), 0, keys.size - 1)
            ok = (keys[cols] == labels) & (codes[cols] != codes[part][:, None])
            sims = np.round(np.einsum("rd,rkd->rk", vecs[part], vecs[cols]), _ROUND)
            ok &= sims >= kth[cols]
            hit[cols[ok]] = True
    else:
        step = _block_rows(keys.size)
        for lo in range(0, added.size, step):
            a = added[lo : lo + step]
            sims = np.round(vecs[a] @ vecs.T, _ROUND)
            sims[codes[a][:, None] == codes[None, :]] = -np.inf
            hit |= (sims >= kth[None, :]).any(axis=0)
    cand = np.zeros(keys.size, bool)
    cand[candidates] = True
    return np.flatnonzero(hit & cand)


# --------------------------------------------------------------------------- build and update


def graph_from_parts(batch: NodeBatch, edge_src: np.ndarray, edge_dst: np.ndarray, edge_weight: np.ndarray,
                     edge_kind: np.ndarray) -> SimilarityGraph:
    """A graph from stored pieces: nodes with their sentences (``batch.sentences`` required) and
    out-edges as they were saved. Nothing is embedded or searched."""
    if batch.sentences is None:
        raise InputError("graph_from_parts needs the nodes' sentences")
    order = np.argsort(batch.keys, kind="stable")
    ptr, st, en, sv = batch.sentences
    counts = np.diff(ptr)[order]
    new_ptr = np.zeros(order.size + 1, np.int64)
    np.cumsum(counts, out=new_ptr[1:])
    rows = np.repeat(ptr[:-1][order] - new_ptr[:-1], counts) + np.arange(new_ptr[-1], dtype=np.int64)
    dim = batch.vecs.shape[1] if batch.vecs.ndim == 2 else 0
    eo = np.lexsort((edge_dst, edge_src))
    return SimilarityGraph(batch.keys[order], tuple(batch.docs[i] for i in order.tolist()), batch.positions[order],
                           batch.vecs[order], tuple(batch.texts[i] for i in order.tolist()), new_ptr, st[rows], en[rows],
                           l2_normalize(sv[rows]) if rows.size else np.zeros((0, dim), np.float32),
                           np.asarray(edge_src, np.int64)[eo], np.asarray(edge_dst, np.int64)[eo],
                           np.asarray(edge_weight, np.float32)[eo], np.asarray(edge_kind, np.int8)[eo],
                           tuple(batch.labels[i] for i in order.tolist()) if batch.labels else (),
                           None if batch.offsets is None else batch.offsets[order])


def build_graph(batch: NodeBatch, embed: Callable[[list[str]], np.ndarray], params: GraphParams | None = None,
                *, ann: Any = None, dim: int | None = None) -> SimilarityGraph:
    """A graph over ``batch`` from scratch (sentences split and embedded with ``embed``)."""
    d = dim or (batch.vecs.shape[1] if batch.vecs.ndim == 2 and batch.vecs.shape[0] else 0)
    g, _ = update_graph(empty_graph(d), np.zeros(0, np.int64), batch, embed, params or GraphParams(), ann=ann)
    return g


def update_graph(old: SimilarityGraph, remove: np.ndarray, add: NodeBatch,
                 embed: Callable[[list[str]], np.ndarray], params: GraphParams, *, ann: Any = None,
                 moved: NodeBatch | None = None, relink_all: bool = False) -> tuple[SimilarityGraph, GraphDelta]:
    """``old`` without the nodes ``remove`` and with the nodes of ``add``; out-lists recomputed
    where they can have changed (see the module docstring). ``moved`` gives new documents,
    positions, labels and offsets of kept nodes (their vectors and texts are ignored); a node that
    changed document or position touches both documents. ``ann``: an index over the *new* node set
    with ``search_many(queries, k) -> (keys, sims)``, or None for exact neighbours.
    ``relink_all`` recomputes every out-list (new edge parameters)."""
    import time

    t0 = time.perf_counter()
    remove = np.intersect1d(np.asarray(remove, np.int64), old.keys)
    # edges may name nodes that are already gone (a stored graph loaded after chunks were deleted):
    # their sources are relinked like those of removed nodes
    gone = np.union1d(remove, np.setdiff1d(old.edge_dst, old.keys))
    if np.intersect1d(add.keys, np.setdiff1d(old.keys, remove)).size:
        raise InputError("node batch: some keys are already in the graph (remove them first)")
    dim = old.dim if old.n_chunks or add.keys.size == 0 else add.vecs.shape[1]
    if add.keys.size and add.vecs.shape[1] != dim and old.n_chunks:
        raise InputError(f"new chunk vectors have dimension {add.vecs.shape[1]}, the graph has {dim}")
    keep = ~np.isin(old.keys, remove)
    kept_idx = np.flatnonzero(keep)
    # ---- sentences of the added nodes
    if add.sentences is not None:
        a_ptr, a_st, a_en, a_vec = add.sentences
        a_vec = l2_normalize(a_vec) if a_vec.shape[0] else np.zeros((0, dim), np.float32)
        embedded = 0
    else:
        a_ptr, a_st, a_en, a_vec, embedded = _split_and_embed(add.texts, embed, dim)
    t1 = time.perf_counter()
    # ---- new node arrays, sorted by key
    keys = np.concatenate([old.keys[kept_idx], add.keys])
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    n_old = kept_idx.size
    docs_all = [old.docs[i] for i in kept_idx.tolist()] + list(add.docs)
    pos_all = np.concatenate([old.positions[kept_idx], add.positions])
    labels_src = (list(old.labels) if old.labels else [str(int(x)) for x in old.keys]) if old.n_chunks else []
    lab_all = [labels_src[i] for i in kept_idx.tolist()] + (list(add.labels) if add.labels else
                                                             [str(int(x)) for x in add.keys])
    off_old = old.offsets if old.offsets is not None else np.zeros(old.n_chunks, np.int64)
    off_add = add.offsets if add.offsets is not None else np.zeros(add.keys.size, np.int64)
    off_all = np.concatenate([off_old[kept_idx], off_add])
    docs_old_of_kept = [old.docs[i] for i in kept_idx.tolist()]
    pos_old_of_kept = old.positions[kept_idx].copy()
    if moved is not None and moved.keys.size:
        where = {int(k): j for j, k in enumerate(np.concatenate([old.keys[kept_idx], add.keys]).tolist())}
        for j, kk in enumerate(moved.keys.tolist()):
            t = where.get(int(kk))
            if t is None:
                continue
            docs_all[t] = moved.docs[j]
            pos_all[t] = moved.positions[j]
            if moved.labels:
                lab_all[t] = moved.labels[j]
            if moved.offsets is not None:
                off_all[t] = moved.offsets[j]
    add_vecs = add.vecs.reshape(-1, dim) if add.keys.size else np.zeros((0, dim), np.float32)
    # kept nodes first, then the added ones: already in key order when every added key is larger
    # (store pks only grow) — then the big arrays are copied once, in runs, instead of gathered
    in_order = bool(np.all(order[1:] > order[:-1])) if order.size > 1 else True
    vecs = _keep_then_append(old.vecs, keep, add_vecs) if in_order else \
        np.concatenate([old.vecs[kept_idx], add_vecs])[order]
    texts = [*(old.texts[i] for i in kept_idx.tolist()), *add.texts]
    docs = tuple(docs_all[i] for i in order.tolist())
    texts_t = tuple(texts[i] for i in order.tolist())
    labels = tuple(lab_all[i] for i in order.tolist())
    positions = pos_all[order]
    offsets = off_all[order]
    # sentences: gather per node from the old pool (kept) and the added pool
    counts_old = np.diff(old.sent_ptr)[kept_idx]
    counts_add = np.diff(a_ptr)
    pool_start = np.concatenate([old.sent_ptr[:-1][kept_idx], a_ptr[:-1] + old.sent_start.size])
    counts = np.concatenate([counts_old, counts_add])[order]
    pool_start = pool_start[order]
    sent_ptr = np.zeros(keys.size + 1, np.int64)
    np.cumsum(counts, out=sent_ptr[1:])
    a_vec = a_vec.reshape(-1, dim)
    if in_order:
        keep_s = np.repeat(keep, np.diff(old.sent_ptr))
        sent_start = _keep_then_append(old.sent_start, keep_s, a_st)
        sent_end = _keep_then_append(old.sent_end, keep_s, a_en)
        sent_vecs = _keep_then_append(old.sent_vecs.reshape(-1, dim), keep_s, a_vec)
    else:
        rows = np.repeat(pool_start - sent_ptr[:-1], counts) + np.arange(sent_ptr[-1], dtype=np.int64)
        sent_start = np.concatenate([old.sent_start, a_st])[rows]
        sent_end = np.concatenate([old.sent_end, a_en])[rows]
        sent_vecs = np.concatenate([old.sent_vecs.reshape(-1, dim), a_vec])[rows]
    # ---- which out-lists to recompute
    doc_arr = _str_array(docs)
    codes = np.unique(doc_arr, return_inverse=True)[1].astype(np.int64).reshape(-1) if docs else np.zeros(0, np.int64)
    old_docs_kept = _str_array(docs_old_of_kept)
    new_docs_kept = _str_array(docs_all[:n_old])
    changed = (old_docs_kept != new_docs_kept) | (pos_all[:n_old] != pos_old_of_kept) if n_old else np.zeros(0, bool)
    touched = np.concatenate([_str_array([old.docs[i] for i in np.flatnonzero(~keep).tolist()]),
                              _str_array(add.docs), old_docs_kept[changed], new_docs_kept[changed]])
    n = keys.size
    is_added = np.isin(keys, add.keys)
    if relink_all:
        redo = np.ones(n, bool)
    else:
        redo = is_added | np.isin(doc_arr, touched) if n else np.zeros(0, bool)
        # nodes whose out-list named a removed node
        if gone.size and old.edge_src.size:
            srcs = old.edge_src[np.isin(old.edge_dst, gone)]
            redo |= np.isin(keys, srcs)
    use_ann = ann is not None
    if not relink_all and is_added.any() and n:
        kth = _kth_cross(old, keys, params)
        cand = np.flatnonzero(~redo)
        redo[_reverse_affected(vecs, codes, keys, np.flatnonzero(is_added), kth, cand, params,
                               ann if use_ann else None)] = True
    t2 = time.perf_counter()
    redo_idx = np.flatnonzero(redo)
    s, d, w, k = _out_edges(vecs, codes, positions, keys, redo_idx, params, ann if use_ann else None)
    keep_e = ~np.isin(old.edge_src, keys[redo_idx]) & np.isin(old.edge_src, keys) & np.isin(old.edge_dst, keys)
    edge_src = np.concatenate([old.edge_src[keep_e], s])
    edge_dst = np.concatenate([old.edge_dst[keep_e], d])
    edge_w = np.concatenate([old.edge_weight[keep_e], w]).astype(np.float32)
    edge_k = np.concatenate([old.edge_kind[keep_e], k]).astype(np.int8)
    eo = np.lexsort((edge_dst, edge_src))
    t3 = time.perf_counter()
    g = SimilarityGraph(keys, docs, positions, vecs, texts_t, sent_ptr, sent_start, sent_end, sent_vecs,
                        edge_src[eo], edge_dst[eo], edge_w[eo], edge_k[eo], labels, offsets)
    delta = GraphDelta(remove, add.keys.copy(), keys[redo_idx], embedded,
                       {"sentences": t1 - t0, "plan": t2 - t1, "edges": t3 - t2})
    return g, delta


def _keep_then_append(a: np.ndarray, keep: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``concatenate([a[keep], b])`` with one copy: the kept rows move in runs (slices), not by a
    gather — what an edit costs on a large graph is mostly this copy."""
    n_keep = int(keep.sum())
    out = np.empty((n_keep + b.shape[0], *a.shape[1:]), dtype=np.result_type(a, b))
    if n_keep == a.shape[0]:
        out[:n_keep] = a
    elif n_keep:
        edges = np.flatnonzero(np.diff(np.concatenate([[0], keep.astype(np.int8), [0]])))
        at = 0
        for lo, hi in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            out[at : at + hi - lo] = a[lo:hi]
            at += hi - lo
    out[n_keep:] = b
    return out


def _kth_cross(old: SimilarityGraph, keys: np.ndarray, p: GraphParams) -> np.ndarray:
    """Per node of the new key set: the weakest weight of its current cross list if that list is
    full, else ``cross_threshold`` (anything at or above it would enter)."""
    kth = np.full(keys.size, np.float32(p.cross_threshold), np.float32)
    m = old.edge_kind == CROSS
    if not m.any() or keys.size == 0:
        return kth
    src = old.edge_src[m]
    w = np.round(old.edge_weight[m], _ROUND)
    uniq, inv, cnt = np.unique(src, return_inverse=True, return_counts=True)
    low = np.full(uniq.size, np.inf, np.float32)
    np.minimum.at(low, inv, w)
    full = cnt >= p.cross_k
    idx = np.searchsorted(keys, uniq)
    idx = np.clip(idx, 0, keys.size - 1)
    ok = (keys[idx] == uniq) & full
    kth[idx[ok]] = low[ok]
    return kth

"""In-memory vector indexes over L2-normalised float32 rows, keyed by integer ids.

:class:`ExactIndex` is one matrix product and an ``argpartition``: exact, and fast enough up to
~10^5 rows on one core. :class:`HnswIndex` wraps ``hnswlib`` (optional extra) for larger
collections. Both support incremental ``update(add_ids, add_vecs, remove_ids)`` so an edit costs
time proportional to what changed, not to the collection.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from pathlib import Path
from typing import Protocol

import numpy as np

from ..errors import InputError, ModelUnavailable
from ..models._files import sha256_file


class VectorIndex(Protocol):
    kind: str
    dim: int

    def __len__(self) -> int: ...

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosine similarities), best first, at most ``k``."""
        ...

    def update(self, add_ids: np.ndarray, add_vecs: np.ndarray, remove_ids: np.ndarray) -> None: ...

    def ids(self) -> np.ndarray: ...


def _check_query(q: np.ndarray, dim: int) -> np.ndarray:
    q = np.asarray(q, dtype=np.float32).reshape(-1)
    if q.size != dim:
        raise InputError(f"query vector has dimension {q.size}, the index has {dim}")
    return q


def _best(sims: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` best ``sims``, best first, equal scores by ascending id, in O(n) plus a sort of
    the k: which of several equal chunks (a repeated paragraph, boilerplate) a search returns is then the same
    on every backend and in every run (PostgreSQL orders by distance, then key), not an accident of the
    partition."""
    n = sims.size
    if k >= n:
        top = np.arange(n)
    else:
        kth = np.partition(sims, n - k)[n - k]  # the k-th best score
        top = np.flatnonzero(sims > kth)
        tie = np.flatnonzero(sims == kth)
        if tie.size > k - top.size:
            tie = tie[np.argsort(ids[tie], kind="stable")[: k - top.size]]
        top = np.concatenate((top, tie))
    return top[np.lexsort((ids[top], -sims[top]))]


class ExactIndex:
    """Exact cosine search over rows kept in buffers with room to grow: an update moves the rows it adds and
    removes, not the whole matrix (a copy of every vector per write cost a long-lived process 175 ms on the
    next search at 51k rows). Row order is not kept (a removed row's place takes the last row); results
    never depend on it: equal scores are taken by id."""

    kind = "exact"

    def __init__(self, dim: int, ids: np.ndarray | None = None, vecs: np.ndarray | None = None) -> None:
        self.dim = int(dim)
        self._id_buf = np.zeros(0, np.int64) if ids is None else np.array(ids, np.int64)
        self._mat_buf = np.zeros((0, self.dim), np.float32) if vecs is None else np.array(vecs, np.float32, order="C")
        if self._mat_buf.shape != (self._id_buf.size, self.dim):
            raise InputError(f"vectors of shape {self._mat_buf.shape} do not match {self._id_buf.size} ids of dim {dim}")
        self._n = int(self._id_buf.size)

    @property
    def _ids(self) -> np.ndarray:
        return self._id_buf[: self._n]

    @property
    def _mat(self) -> np.ndarray:
        return self._mat_buf[: self._n]

    def __len__(self) -> int:
        return int(self._ids.size)

    def ids(self) -> np.ndarray:
        return self._ids.copy()  # (the buffer changes in place at the next update)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        q = _check_query(query, self.dim)
        n = self._ids.size
        if n == 0 or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        sims = self._mat @ q
        order = _best(sims, self._ids, min(k, n))
        return self._ids[order], sims[order]

    def search_many(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, sims) of shape (q, min(k, n)) for a batch of queries, best first; blocked product."""
        qs = np.asarray(queries, dtype=np.float32).reshape(-1, self.dim)
        n = self._ids.size
        k = min(k, n)
        if k <= 0 or qs.shape[0] == 0:
            return np.zeros((qs.shape[0], 0), np.int64), np.zeros((qs.shape[0], 0), np.float32)
        ids = np.empty((qs.shape[0], k), np.int64)
        sims = np.empty((qs.shape[0], k), np.float32)
        step = max(1, (32 << 20) // max(4 * n, 1))
        for lo in range(0, qs.shape[0], step):
            s = qs[lo : lo + step] @ self._mat.T
            top = np.argpartition(-s, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (s.shape[0], 1))
            ts = np.take_along_axis(s, top, axis=1)
            # rows where a tie straddles the k-th place: its members by id, as search() takes them
            tied = np.flatnonzero((s >= ts.min(axis=1, keepdims=True)).sum(axis=1) > k) if k < n else []
            for r in tied:
                top[r] = _best(s[r], self._ids, k)
            ts = np.take_along_axis(s, top, axis=1)
            o = np.lexsort((self._ids[top], -ts), axis=1)  # best first, equal scores by id
            ids[lo : lo + step] = self._ids[np.take_along_axis(top, o, axis=1)]
            sims[lo : lo + step] = np.take_along_axis(ts, o, axis=1)
        return ids, sims

    def update(self, add_ids: np.ndarray, add_vecs: np.ndarray, remove_ids: np.ndarray) -> None:
        add_ids = np.asarray(add_ids, np.int64).reshape(-1)
        remove_ids = np.asarray(remove_ids, np.int64).reshape(-1)
        if self._n:  # removed (and re-added) rows: each hole takes a kept row from the end
            gone = np.flatnonzero(np.isin(self._ids, np.concatenate([remove_ids, add_ids])))
            if gone.size:
                left = self._n - gone.size
                holes = gone[gone < left]
                tail = np.setdiff1d(np.arange(left, self._n), gone, assume_unique=True)
                self._id_buf[holes] = self._id_buf[tail]
                self._mat_buf[holes] = self._mat_buf[tail]
                self._n = left
        if add_ids.size:
            vecs = np.asarray(add_vecs, np.float32).reshape(add_ids.size, self.dim)
            need = self._n + add_ids.size
            if need > self._id_buf.size:  # room for a quarter more, so a run of writes rarely copies
                cap = max(need, self._id_buf.size + self._id_buf.size // 4, 64)
                ids, mat = np.empty(cap, np.int64), np.empty((cap, self.dim), np.float32)
                ids[: self._n], mat[: self._n] = self._ids, self._mat
                self._id_buf, self._mat_buf = ids, mat
            self._id_buf[self._n : need] = add_ids
            self._mat_buf[self._n : need] = vecs
            self._n = need


def hnsw_available() -> bool:
    try:
        import hnswlib  # noqa: F401
    except ImportError:
        return False
    return True


class HnswIndex:
    """Approximate search with hnswlib (cosine space). Deletions are marked, not compacted."""

    kind = "hnsw"

    def __init__(self, dim: int, *, m: int = 16, ef_construction: int = 200, ef_search: int = 64,
                 capacity: int = 1024, threads: int = 1) -> None:
        try:
            import hnswlib
        except ImportError:
            raise ModelUnavailable("the HNSW index needs hnswlib: pip install 'logichunk[hnsw]'") from None
        self.dim = int(dim)
        self.m, self.ef_construction = int(m), int(ef_construction)
        self.ef_search = ef_search
        self._threads = threads
        self._index = hnswlib.Index(space="cosine", dim=self.dim)
        self._index.init_index(max_elements=max(capacity, 16), M=m, ef_construction=ef_construction,
                               allow_replace_deleted=True)
        self._index.set_num_threads(threads)
        self._live: set[int] = set()

    def _meta(self) -> dict[str, object]:
        return {"dim": self.dim, "m": self.m, "ef_construction": self.ef_construction,
                "hnswlib": _package_version("hnswlib")}

    def save_to(self, folder: Path) -> None:
        """Write the index (hnswlib's own file), its live ids, and what it is with the file's sha256 into
        ``folder`` (hnswlib reads a damaged or foreign file into a crash, not an error: it is checked first)."""
        self._index.save_index(str(folder / "index.bin"))
        np.save(folder / "live.npy", self.ids())
        meta = {**self._meta(), "sha256": sha256_file(str(folder / "index.bin"))}
        (folder / "meta.json").write_text(json.dumps(meta))

    def load_from(self, folder: Path, capacity: int) -> HnswIndex | None:
        """An index like this one (its parameters) read from ``folder`` (:meth:`save_to`), with room for
        ``capacity`` rows; None where there is none, or another kind, or it cannot be read."""
        try:
            meta = json.loads((folder / "meta.json").read_text())
            digest = meta.pop("sha256", None)
            if meta != self._meta() or digest != sha256_file(str(folder / "index.bin")):
                return None
            live = np.load(folder / "live.npy", allow_pickle=False)
            import hnswlib

            out = HnswIndex.__new__(HnswIndex)
            out.dim, out.m, out.ef_construction = self.dim, self.m, self.ef_construction
            out.ef_search, out._threads = self.ef_search, self._threads
            out._index = hnswlib.Index(space="cosine", dim=self.dim)
            out._index.load_index(str(folder / "index.bin"), max_elements=max(capacity, live.size + 16),
                                  allow_replace_deleted=True)
            out._index.set_num_threads(self._threads)
            out._live = set(np.asarray(live, np.int64).tolist())
        except (OSError, ValueError, RuntimeError, KeyError, TypeError):
            return None
        return out


    def __len__(self) -> int:
        return len(self._live)

    def ids(self) -> np.ndarray:
        return np.fromiter(self._live, np.int64, len(self._live))

    def update(self, add_ids: np.ndarray, add_vecs: np.ndarray, remove_ids: np.ndarray) -> None:
        for i in np.asarray(remove_ids, np.int64).tolist():
            if i in self._live:
                self._index.mark_deleted(i)
                self._live.discard(i)
        add_ids = np.asarray(add_ids, np.int64)
        if add_ids.size == 0:
            return
        for i in add_ids.tolist():  # re-added ids replace the old vector
            if i in self._live:
                self._index.mark_deleted(i)
                self._live.discard(i)
        need = self._index.element_count + add_ids.size
        if need > self._index.get_max_elements():
            self._index.resize_index(max(need, 2 * self._index.get_max_elements()))
        vecs = np.asarray(add_vecs, np.float32).reshape(add_ids.size, self.dim)
        self._index.add_items(vecs, add_ids, num_threads=self._threads, replace_deleted=True)
        self._live.update(add_ids.tolist())

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        ids, sims = self.search_many(_check_query(query, self.dim).reshape(1, -1), k)
        return ids[0], sims[0]

    def search_many(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, sims) of shape (q, min(k, n)) for a batch of queries, in one hnswlib call. The
        search list is at least ``ef_search`` and twice ``k``, so a large k keeps its recall."""
        qs = np.asarray(queries, dtype=np.float32).reshape(-1, self.dim)
        k = min(k, len(self._live))
        if k <= 0 or qs.shape[0] == 0:
            return np.zeros((qs.shape[0], 0), np.int64), np.zeros((qs.shape[0], 0), np.float32)
        self._index.set_ef(max(self.ef_search, 2 * k))
        labels, dist = self._index.knn_query(qs, k=k, num_threads=self._threads)
        ids, sims = labels.astype(np.int64), (1.0 - dist).astype(np.float32)
        o = np.lexsort((ids, -sims), axis=1)  # equal scores by id, as the exact index orders them
        return np.take_along_axis(ids, o, axis=1), np.take_along_axis(sims, o, axis=1)


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return ""


def make_index(dim: int, n_expected: int, *, threshold: int = 50_000, kind: str = "auto",
               m: int = 16, ef_construction: int = 200, ef_search: int = 64) -> VectorIndex:
    """``kind``: ``exact``, ``hnsw`` or ``auto`` (HNSW above ``threshold`` rows when hnswlib is installed)."""
    if kind not in ("auto", "exact", "hnsw"):
        raise InputError(f"unknown index kind {kind!r}: use auto, exact or hnsw")
    if kind == "hnsw" or (kind == "auto" and n_expected >= threshold and hnsw_available()):
        # building is the slow part of a large index: use every core for it (searches are single queries)
        return HnswIndex(dim, m=m, ef_construction=ef_construction, ef_search=ef_search,
                         capacity=max(1024, int(n_expected * 1.2)), threads=max(1, os.cpu_count() or 1))
    return ExactIndex(dim)

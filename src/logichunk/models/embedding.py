"""The embedder protocol, and the cache every embedder should sit behind.

An embedder turns texts into L2-normalised float32 rows, so that a dot product is a cosine
similarity everywhere downstream (signals, indexes, memory). Embedding is the expensive step of
chunking and indexing, and edited documents are re-chunked often, so :class:`EmbeddingCache` keys
vectors by *(model id, kind, sha256 of the text)*: the same content is never embedded twice by the
same model, whichever document or chunk it comes from. Its backing store is any
``MutableMapping[str, np.ndarray]`` — an in-memory LRU by default, a persistent table later.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar, runtime_checkable

import numpy as np

V = TypeVar("V")

__all__ = [
    "Embedder", "EmbeddingCache", "EmbedKind", "LRUMapping", "CacheStats", "batched_embed", "cache_key",
    "l2_normalize", "unwrap",
]

EmbedKind = Literal["query", "passage"]


@runtime_checkable
class Embedder(Protocol):
    """Anything that embeds texts.

    ``model_id`` names the model *and its weights* (a cache key: two embedders with the same id must
    give the same vectors). ``kind`` matters for asymmetric models (E5 wants ``query:`` /
    ``passage:`` prefixes); symmetric ones ignore it. An embedder may say ``persist_vectors = False``
    (the hash embedder does): it computes a vector faster than a database reads one back, so a store
    keeps its vectors in memory only, not in its ``embeddings`` table (default: True).
    """

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> np.ndarray:
        """float32 array (len(texts), dim), rows L2-normalised (all-zero for a text with no features)."""
        ...


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32; zero rows stay zero (no NaN)."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {x.shape}")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.maximum(norms, np.float32(1e-12), out=norms)
    out = x / norms
    out[(norms[:, 0] <= 1e-12)] = 0.0
    return out.astype(np.float32, copy=False)


def unit(v: np.ndarray) -> np.ndarray:
    """One vector scaled to unit length, its dtype kept; a zero vector stays as it is."""
    n = float(np.sqrt(v @ v))
    return v / n if n > 1e-12 else v


def batched_embed(fn, texts: Sequence[str], batch_size: int, dim: int) -> np.ndarray:
    """Call ``fn(batch) -> array`` on slices of ``texts`` and stack the results in input order:
    bounds the peak memory of backends that materialise per-batch activations. Texts are batched
    in order of length, so a batch pads to similar lengths (a transformer's cost is its longest
    row times the batch size; mixing a 10-token and a 200-token sentence wastes 95 % of a row)."""
    n = len(texts)
    if n == 0:
        return np.zeros((0, dim), dtype=np.float32)
    order = np.argsort(np.fromiter((len(t) for t in texts), np.int64, n), kind="stable")
    out = np.empty((n, dim), dtype=np.float32)
    for lo in range(0, n, batch_size):
        idx = order[lo : lo + batch_size]
        part = np.asarray(fn([texts[i] for i in idx.tolist()]), dtype=np.float32)
        if part.shape != (idx.size, dim):
            raise ValueError(f"backend returned shape {part.shape}, expected ({idx.size}, {dim})")
        out[idx] = part
    return out


def cache_key(model_id: str, kind: str, text: str) -> str:
    """The cache key of one text: model id, kind and the sha256 of the UTF-8 text."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{model_id}\x1f{kind}\x1f{digest}"


class LRUMapping(MutableMapping[str, V]):
    """A bounded, thread-safe in-memory mapping that forgets the least recently used entries: past
    ``max_items`` entries, or past ``max_key_chars`` characters of keys (texts as keys: a memo of what was
    computed from them, whose size grows with theirs)."""

    def __init__(self, max_items: int = 100_000, *, max_key_chars: int | None = None) -> None:
        if max_items < 1:
            raise ValueError("max_items must be >= 1")
        self.max_items = max_items
        self.max_key_chars = max_key_chars
        self._data: OrderedDict[str, V] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def __getitem__(self, key: str) -> V:
        with self._lock:
            value = self._data[key]
            self._data.move_to_end(key)
            return value

    def __setitem__(self, key: str, value: V) -> None:
        if self.max_key_chars is not None and len(key) > self.max_key_chars:
            return  # (a key alone over the bound would push out every other entry, then itself)
        with self._lock:
            if key not in self._data:
                self._chars += len(key)
            self._data[key] = value
            self._data.move_to_end(key)
            cap = self.max_key_chars
            while len(self._data) > self.max_items or (cap is not None and self._chars > cap and self._data):
                old, _ = self._data.popitem(last=False)
                self._chars -= len(old)

    def __delitem__(self, key: str) -> None:
        with self._lock:
            del self._data[key]
            self._chars -= len(key)

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)


@dataclass(frozen=True, slots=True)
class CacheStats:
    """``calls``: batches sent to the wrapped model; ``embedded``: texts it embedded; ``hits`` /
    ``misses``: per requested text (a text repeated inside one batch is one miss, then hits)."""

    calls: int
    embedded: int
    hits: int
    misses: int


class EmbeddingCache:
    """Wrap an :class:`Embedder` so the same content is never embedded twice.

    ``backing`` is any mutable mapping from :func:`cache_key` strings to float32 vectors; the default
    is an :class:`LRUMapping`. Vectors are stored read-only, so a caller cannot corrupt the cache by
    editing a result (results are fresh arrays anyway).
    """

    def __init__(self, embedder: Embedder, backing: MutableMapping[str, np.ndarray] | None = None,
                 *, max_items: int = 100_000) -> None:
        self.inner = embedder
        self.backing: MutableMapping[str, np.ndarray] = LRUMapping(max_items) if backing is None else backing
        self._lock = threading.Lock()
        self._calls = self._embedded = self._hits = self._misses = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def asymmetric(self) -> bool:
        return bool(getattr(self.inner, "asymmetric", True))

    @property
    def stats(self) -> CacheStats:
        return CacheStats(self._calls, self._embedded, self._hits, self._misses)

    def __repr__(self) -> str:
        return f"EmbeddingCache({self.inner!r}, items={len(self.backing)})"

    def embed(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> np.ndarray:
        if isinstance(texts, str):  # as every embedder: a str would be embedded character by character
            raise TypeError("embed() takes a sequence of texts, not a single str")
        texts = list(texts)
        # Symmetric models give the same vector for either kind: share one cache entry.
        key_kind = kind if self.asymmetric else "any"
        model_id = self.model_id
        keys = [cache_key(model_id, key_kind, t) for t in texts]
        found: dict[str, np.ndarray] = {}
        todo: dict[str, str] = {}  # key -> text, first occurrence order
        for key, text in zip(keys, texts, strict=True):
            if key in found or key in todo:
                continue
            vec = self.backing.get(key)
            if vec is not None:
                found[key] = vec
            else:
                todo[key] = text
        hits = len(texts) - len(todo)
        if todo:
            vecs = np.asarray(self.inner.embed(list(todo.values()), kind=kind), dtype=np.float32)
            for key, vec in zip(todo, vecs, strict=True):
                vec = vec.copy()
                vec.flags.writeable = False
                self.backing[key] = vec
                found[key] = vec
        with self._lock:
            self._calls += 1 if todo else 0
            self._embedded += len(todo)
            self._hits += hits
            self._misses += len(todo)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)


def unwrap(embedder: Embedder) -> Embedder:
    """The model behind any cache layers (for reporting which backend is in use)."""
    while isinstance(embedder, EmbeddingCache):
        embedder = embedder.inner
    return embedder

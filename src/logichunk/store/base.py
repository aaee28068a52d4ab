"""The store: one schema and one body of logic over two SQL backends.

:class:`Store` holds everything that does not depend on the database (the parent-child layout,
the embedding cache, incremental re-chunking, index maintenance); :class:`SQLiteStore` and
:class:`PostgresStore` supply connections, transactions, the vector column codec and (on
PostgreSQL) pgvector search. ``Store.open(url)`` picks one: a ``postgresql://`` URL, or a file path
(the backends register themselves here; this module does not import them: imports run one way).

Re-chunking works on one chapter at a time, because parents may merge small neighbouring blocks
(never across a chapter). It reads a snapshot, computes the new layout *outside* any lock or
transaction (embedding is the slow part), then writes everything in one short transaction that
first checks no block of the chapter changed meanwhile. Parents whose owner block, offsets and
content hash are unchanged keep their rows, children and vectors; only the rest are recomputed,
and sentence/child embeddings come from the ``embeddings`` table when the content was seen before.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .. import ids as idmod
from ..chunkers.parent_child import PCParams, text_memo
from ..config import Settings
from ..errors import InputError, LogichunkError
from ..index.bm25 import BM25Index
from ..index.vectors import HnswIndex, VectorIndex, make_index
from ..models.embedding import LRUMapping
from ..models.registry import embedder_of
from ..text.decode import check_storable
from ..types import Bubble, Chunk, Span
from . import saved_index, schema
from .chapters import heading_title
from .plan import (
    ChapterPlan,
    ParentKey,
    cut_mode,
    cut_vectors,
    embed_batches,
    parent_key,
    plan_chapter,
    sha256,
)


def _check_blocks(texts: Sequence[Any], chapter: str | None = None, block_id: str | None = None) -> None:
    """Blocks a store can hold: strings UTF-8 can encode, without NUL (one line of error naming the first that
    is not; an unpaired surrogate from JSON reached the database driver as a traceback before, a NUL PostgreSQL's
    as a vague error while SQLite kept it). ``block_id``: the one block edited, named by its id (its place in
    this list, ``block 1``, named none)."""
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InputError("block content must be a string" + (f" (block {block_id})" if block_id else ""))
        what = f"block {block_id}" if block_id else f"block {i + 1}" + (f" of chapter {chapter!r}" if chapter else "")
        check_storable(t, what)


def _chapter_pairs(chapters: Any) -> list[tuple[str | None, list[str]]]:
    """``add_document``'s chapters as ``(title, [block texts])`` pairs, checked before anything is written. Why:
    a text given whole (``add_document(title, text)``) failed inside the write with Python's unpacking error, and a
    chapter's blocks given as one string (``[("Intro", "Some text.")]``) were stored a character a block."""
    whole = "; to store a text, use logichunk.store.ingest.ingest_text(store, title, text)"
    if isinstance(chapters, str | bytes) or not isinstance(chapters, Iterable):
        raise InputError(f"chapters must be (title, [block texts]) pairs, got {type(chapters).__name__}{whole}")
    pairs = []
    for i, pair in enumerate(chapters):
        if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
            got = f"{len(pair)} items" if isinstance(pair, Sequence) and not isinstance(pair, str | bytes) else \
                type(pair).__name__
            raise InputError(f"chapter {i + 1} must be a (title, [block texts]) pair, got {got}{whole}")
        title, blocks = pair
        if isinstance(blocks, str | bytes) or not isinstance(blocks, Iterable):
            raise InputError(f"the blocks of chapter {i + 1} must be a list of texts, got {type(blocks).__name__} "
                             "(one block: [text])")
        pairs.append((title, list(blocks)))
    return pairs


def _check_revision(revision: Any) -> None:
    """An ``expected_revision`` is a block's revision, an int: ``"1"`` from a form or JSON was taken for another
    revision (``block X is at revision 1, not 1``), and ``True`` for revision 1."""
    if revision is not None and (not isinstance(revision, int) or isinstance(revision, bool)):
        raise InputError(f"expected_revision must be a block's revision (an int), got {revision!r}")


def block_emptied(changed: bool, content: str) -> bool:
    """Whether an edit (:meth:`Store.edit_block` said ``changed``) left the block empty or only whitespace: a
    paragraph deleted, which is a legitimate edit (``ingest`` refuses an empty *file*, not an empty block), so it
    is done, and said (``logichunk edit`` prints "emptied", the service answers ``emptied: true``), never silent:
    an edit ``--file`` that was empty by mistake is seen at once."""
    return changed and not content.strip()


class StoreError(LogichunkError):
    """The store cannot do what was asked: unknown ids, an unreachable or unwritable database..."""


class UnknownIdError(StoreError):
    """An id that names nothing in this project: never there, or deleted meanwhile (a document deleted while its
    edited block waited for its re-chunk). Waiting will not bring it back: a re-chunk of it is not retried."""


class StoreUnavailable(StoreError):
    """The database itself cannot be reached or used right now (server down, file gone): worth
    retrying later, unlike an unknown id."""


class RechunkError(StoreError):
    """A re-chunk failed (embedding, most often); the blocks stay dirty for a retry."""


class CutSettingsError(RechunkError):
    """A re-chunk refused: the project's chunks were cut with other size settings than the store's
    (:meth:`Store.cut_mismatch`); the blocks stay dirty until the settings match or :meth:`Store.recut`."""


class EmbedderMismatchError(CutSettingsError):
    """A re-chunk refused: the project's chunks were embedded with another model than the store's embedder
    (:meth:`Store.other_embedders`); writing this chapter's with this one would leave a project whose
    searches silently miss part of it. The blocks stay dirty until the store is opened with the project's
    embedder or everything is re-embedded (:meth:`Store.reembed`, ``logichunk ingest --reembed``)."""


class StaleRevisionError(StoreError):
    """An edit made from a revision of the block that is no longer its own: someone else's edit came first.
    ``revision`` is the block's revision now (reload the block, apply the edit again)."""

    def __init__(self, block_id: str, expected: int, revision: int) -> None:
        super().__init__(f"block {block_id} is at revision {revision}, not {expected}: reload it and apply your "
                         "edit again")
        self.revision = revision


class StaleTextError(StoreError):
    """A document's text replaced from a text that is no longer its own (:func:`~logichunk.store.replace.replace_text`
    with ``expected_sha256``): someone else's edit came first. ``sha256`` is the hash of its text now."""

    def __init__(self, document_id: str, expected: str, now: str) -> None:
        super().__init__(f"document {document_id}'s text hashes to {now} now, not {expected}: reload it and apply "
                         "your edit again")
        self.sha256 = now


def redact_url(url: str) -> str:
    """A database URL as it may be shown (banners, errors): the password of ``user:password@`` and
    of a ``password=`` parameter replaced by ``***``."""
    url = re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", url)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", url, flags=re.IGNORECASE)


def reached_of(value: str | None) -> tuple[str, ...]:
    """The paths a document's ``reached_by`` column holds: one path as itself (what a store of the last logichunk
    holds, and still reads), several as a JSON list (an absolute path never starts with ``[``)."""
    if not value:
        return ()
    if value.startswith("["):
        try:
            paths = json.loads(value)
        except ValueError:
            return (value,)
        return tuple(p for p in paths if isinstance(p, str))
    return (value,)


def reached_value(paths: Sequence[str]) -> str | None:
    """``reached_by``'s value for ``paths`` (:func:`reached_of`): NULL for none, a path alone as itself."""
    if not paths:
        return None
    return paths[0] if len(paths) == 1 else json.dumps(list(paths), ensure_ascii=False)


def _new_id() -> str:
    return secrets.token_hex(6)


LEVELS = ("document", "parent", "child")


@dataclass(frozen=True)
class BlockRow:
    id: str
    chapter_id: str
    order: int
    title: str | None
    content: str
    is_dirty: bool
    content_hash: str | None
    last_chunked_at: float | None
    revision: int
    last_error: str | None = None


@dataclass(frozen=True)
class SourcedBlock:
    """A block as an ingest compares it with its file (:meth:`Store.source_blocks`): its text, and the sha256
    of the text the document's source gave it at the last ingest, None where that is not known (a block added
    by hand, or edited in a store before it recorded this: an older logichunk's)."""

    id: str
    revision: int
    content: str
    source_hash: str | None


@dataclass(frozen=True)
class MergedBlock:
    """A block of a document as a re-ingest restructures it (:meth:`Store.rewrite_document`): a stored block kept
    (``id``; ``take``: it gets ``text``, else its text stays) or a new one (``id`` None: ``text``), and the hash of
    the text its file gave it, recorded (None: a block the file does not hold, kept for the store's sake)."""

    id: str | None
    text: str
    source_hash: str | None
    take: bool = False


@dataclass(frozen=True)
class ChunkRow:
    pk: int
    project_id: str
    document_id: str
    chapter_id: str
    block_id: str
    parent_pk: int | None
    level: str
    dotted_id: str
    order: int
    start: int
    end: int
    size: int
    content: str
    content_hash: str
    method: str
    meta: dict[str, Any] = field(default_factory=dict)

    def to_chunk(self, **extra: Any) -> Chunk:
        """As a :class:`~logichunk.types.Chunk`: dotted id, span relative to the owning block."""
        meta = {"pk": self.pk, "level_name": self.level, "block_id": self.block_id, "chapter_id": self.chapter_id,
                "document_id": self.document_id, "size": self.size, "text": self.content, **self.meta, **extra}
        return Chunk(id=self.dotted_id, span=Span(self.start, self.end), level=self.dotted_id.count(".") + 1,
                     parent=idmod.parent_of(self.dotted_id), method=self.method, meta=meta)


@dataclass(frozen=True)
class RechunkResult:
    chapter_id: str
    status: str  # "clean" | "unchanged" | "rechunked" | "stale"
    parents_kept: int = 0
    parents_written: int = 0
    children_written: int = 0
    embedded: int = 0  # texts sent to the embedder (cache misses; for a plan made elsewhere: vectors new to the cache)
    seconds: float = 0.0


_CHUNK_COLS = ("pk, project_id, document_id, chapter_id, block_id, parent_pk, chunk_level, dotted_id, chunk_order, "
               "start_offset, end_offset, size, content, content_hash, method, meta")
_BLOCK_COLS = "id, chapter_id, block_order, title, content, is_dirty, content_hash, last_chunked_at, revision, last_error"


def _chunk_row(r: Sequence[Any]) -> ChunkRow:
    return ChunkRow(int(r[0]), r[1], r[2], r[3], r[4], None if r[5] is None else int(r[5]), r[6], r[7], int(r[8]),
                    int(r[9]), int(r[10]), int(r[11]), r[12], r[13], r[14], json.loads(r[15]) if r[15] else {})


def _block_row(r: Sequence[Any]) -> BlockRow:
    return BlockRow(r[0], r[1], int(r[2]), r[3], r[4], bool(r[5]), r[6], r[7], int(r[8]), r[9])


@dataclass
class _Snapshot:
    chapter_id: str
    document_id: str
    rank: int
    blocks: list[BlockRow]
    # pk, block, start, end, hash, order, dotted, method, meta (its blocks' ids and segments)
    old_parents: list[tuple[int, str, int, int, str, int, str, str, dict[str, Any]]]


class _IndexCache:
    def __init__(self) -> None:
        self.generation = -1
        self.index: Any = None
        self.building = threading.Lock()  # (one first build of an index at a time, outside the store's lock)


#: dialect -> backend class; each backend module registers itself (:func:`register_backend`) and
#: ``logichunk/store/__init__.py`` imports them, so this module never imports its subclasses.
_BACKENDS: dict[str, type[Store]] = {}


def register_backend(cls: type[Store]) -> type[Store]:
    """Make ``cls`` the backend :meth:`Store.open` uses for its ``dialect``."""
    _BACKENDS[cls.dialect] = cls
    return cls


class Store:
    """Base class and factory. Use :meth:`open`; see the module docstring."""

    dialect: ClassVar[str] = ""
    placeholder: ClassVar[str] = "?"

    # ------------------------------------------------------------------ opening
    @staticmethod
    def open(url: str, *, settings: Settings | None = None, embedder: Any = None, project: str | None = None,
             create: bool = True) -> Store:
        """``postgresql://...`` (or ``postgres://``) for PostgreSQL + pgvector, anything else is a
        SQLite file path (``:memory:`` too). ``embedder``: a model (the Embedder protocol) or its name
        (``"hash"``, ``"e5"``, ...: :func:`~logichunk.models.registry.resolve_embedder`); default: the one
        ``settings.embedder`` names. ``settings`` default: as the CLI reads them (``$LOGICHUNK_CONFIG``'s
        file, then ``LOGICHUNK_*`` variables), so a library call and a CLI verb in one environment open the
        store alike. ``create=False``: the SQLite file and the project must
        exist already (a mistyped path or project name is an error, not a new empty store). ``settings`` may
        also be a mapping of setting names to values (``{"max_size": 400}``): applied over those defaults."""
        if not isinstance(url, str) or not url.strip():
            raise InputError("a database URL or path is needed")
        if isinstance(settings, Mapping):
            settings = Settings.load().with_overrides(settings, source="Store.open(settings=...)")
        elif settings is not None and not isinstance(settings, Settings):
            raise InputError(f"settings must be a logichunk.config.Settings or a mapping of setting names to values, "
                             f"got {type(settings).__name__}")
        dialect = "postgres" if url.startswith(("postgresql://", "postgres://")) else "sqlite"
        backend = _BACKENDS.get(dialect)
        if backend is None:  # pragma: no cover - logichunk/store/__init__.py imports both backends
            raise StoreError(f"the {dialect} backend is not loaded (import logichunk.store)")
        return backend.open_url(url, settings=settings or Settings.load(), embedder=embedder, project=project,
                                create=create)

    @classmethod
    def open_url(cls, url: str, *, settings: Settings, embedder: Any = None, project: str | None = None,
                 create: bool = True) -> Store:
        """This backend's half of :meth:`open`: the URL as this backend reads it."""
        return cls(url, settings=settings, embedder=embedder, project=project, create=create)

    def __init__(self, url: str, *, settings: Settings, embedder: Any = None, project: str | None = None,
                 create: bool = True) -> None:
        self.url = url
        self.settings = settings
        if embedder is not None and not isinstance(embedder, str):
            embedder = embedder_of(embedder)  # (a wrong type: one clear error now, not at the first re-chunk)
        self._embedder = embedder  # (a name: resolved at first use, as the settings' own)
        self.embedder_note = ""
        # the line saying the embedder is the project's own, no embedder being named
        # (:func:`~logichunk.store.embedder_choice.store_embedder`), '' otherwise: what searches' notes carry
        self.embedder_choice = ""
        self.params = PCParams.from_settings(settings)
        self._lock = threading.RLock()
        self._closed = False
        self._memo: LRUMapping[np.ndarray] = LRUMapping(50_000)  # "model\0kind\0content hash" -> vector
        # the blocks' sentences and over-long blocks' pieces, from one re-chunk of a chapter to the next
        self._plan_memo = (text_memo(), text_memo())
        self._vindex: dict[tuple[str, str], _IndexCache] = {}
        self._bm25: dict[str, _IndexCache] = {}
        self._avg_cache: tuple[int, float] = (-1, 0.0)
        self.embed_calls = 0  # texts sent to the embedder by this store object
        self.embed_requests = 0  # texts asked of embed() (hits + misses): the cache hit rate's denominator
        # an existing database the process may not write (a read-only mount or folder) still opens
        # for reading when nothing asked to create it: the backend sets read_only then
        self.read_only = False
        self._read_only_ok = not create
        self._connect()
        self._migrate()
        self.project = project or settings.project
        self.project_id = self._ensure_project(self.project, create)

    # backend hooks -----------------------------------------------------
    def _connect(self) -> None:
        raise NotImplementedError

    def _raw_execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def _raw_executemany(self, sql: str, seq: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        raise NotImplementedError
        yield

    def _translate_error(self, exc: BaseException) -> StoreError | None:
        return None

    def _insert_pk(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError

    def _ensure_connected(self) -> None:
        """Hook: reconnect a lost connection before a new transaction (PostgreSQL)."""

    def _vec_param(self, v: np.ndarray) -> Any:
        return np.ascontiguousarray(v, dtype="<f4").tobytes()

    def _vec_value(self, x: Any) -> np.ndarray:
        return np.frombuffer(x, dtype="<f4").astype(np.float32)

    def _lock_chapter_blocks_sql(self) -> str:
        return "SELECT id, revision FROM blocks WHERE chapter_id = ?"

    def _lock_block_sql(self) -> str:
        return "SELECT revision FROM blocks WHERE id = ?"  # (SQLite: the write transaction holds the lock already)

    def _lock_project_sql(self) -> str:
        return "SELECT id FROM projects WHERE id = ?"  # (SQLite: the write transaction holds the lock already)

    def lock_documents(self) -> None:
        """Inside a transaction: hold off other writers of this project's documents until it ends, so a
        check of what is stored, made inside it, stays true while it writes (an ingest's file checks)."""
        if not getattr(self, "_in_tx", False):
            raise StoreError("lock_documents() is for inside a transaction (store.tx())")
        self._q(self._lock_project_sql(), (self.project_id,))

    def _after_vectors_written(self, model_id: str, dim: int) -> None:
        """Hook: PostgreSQL creates its HNSW index for a (model, dim) here (inside the transaction)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ SQL helpers
    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        if self._closed:
            raise StoreError("the store is closed")
        try:
            yield
        except LogichunkError:
            raise
        except Exception as e:
            err = self._translate_error(e)
            if err is None:
                raise
            raise err from e

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock, self._guard():
            return list(self._raw_execute(self._sql(sql), tuple(params)))

    def _x(self, sql: str, params: Sequence[Any] = ()) -> None:
        with self._lock, self._guard():
            self._raw_execute(self._sql(sql), tuple(params))

    def _xmany(self, sql: str, seq: Sequence[Sequence[Any]]) -> None:
        if seq:
            with self._lock, self._guard():
                self._raw_executemany(self._sql(sql), seq)

    @contextlib.contextmanager
    def tx(self) -> Iterator[None]:
        """One transaction (re-entrant calls join the outer one)."""
        with self._lock, self._guard():
            if getattr(self, "_in_tx", False):
                yield
                return
            self._ensure_connected()
            self._in_tx = True
            try:
                with self._transaction():
                    yield
            finally:
                self._in_tx = False

    def _migrate(self) -> None:
        with self.tx():
            if not self.read_only:
                self._x("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            rows = self._q("SELECT MAX(version) FROM schema_version")
            current = rows[0][0] or 0
            if current > schema.LATEST:
                raise StoreError(f"database schema version {current} is newer than this logichunk supports "
                                 f"({schema.LATEST}); upgrade logichunk")
            if self.read_only and current < schema.LATEST:
                raise StoreError(f"database {self.url} is read-only here and its schema (version {current}) needs "
                                 f"an upgrade to {schema.LATEST}: open it once where it can be written")
            for version, stmts in schema.statements(self.dialect, current):
                for s in stmts:
                    self._x(s)
                self._x("INSERT INTO schema_version(version) VALUES (?)", (version,))
            # (a database of an older logichunk gets them here; one that may not be written is read without them)
            added = set()
            for table, column, stmts in schema.ADDED_COLUMNS:
                if column not in self._columns(table) and not self.read_only:
                    for s in schema.rendered(self.dialect, stmts):
                        self._x(s)
                if column in self._columns(table):
                    added.add(column)
            self._source_hash = "source_hash" in added
            self._reached_by = "reached_by" in added

    def _columns(self, table: str) -> set[str]:
        """The names of a table's columns, as the database has them (either backend: a query of no rows)."""
        with self._lock, self._guard():
            return {d[0] for d in self._raw_execute(f"SELECT * FROM {table} WHERE 1 = 0").description}

    def schema_version(self) -> int:
        return int(self._q("SELECT MAX(version) FROM schema_version")[0][0])

    def _ensure_project(self, name: str, create: bool = True) -> str:
        with self.tx():
            rows = self._q("SELECT id FROM projects WHERE name = ?", (name,))
            if rows:
                return rows[0][0]
            if not create:
                known = ", ".join(repr(r[0]) for r in self._q("SELECT name FROM projects ORDER BY name")) or "none"
                raise StoreError(f"no project {name!r} in this database (projects: {known}; check --project)")
            pid = _new_id()
            self._x("INSERT INTO projects(id, name, created_at) VALUES (?, ?, ?)", (pid, name, time.time()))
            return pid

    def projects(self) -> list[tuple[str, str, float]]:
        """Every project in this database as ``(id, name, created_at)``, oldest first (a store
        object works inside one project; this is how a caller finds the others)."""
        return [(r[0], r[1], float(r[2])) for r in self._q("SELECT id, name, created_at FROM projects ORDER BY created_at, name")]

    def generation(self) -> int:
        return int(self._q("SELECT value FROM store_meta WHERE key = 'generation'")[0][0])

    def _bump(self) -> None:
        self._x("UPDATE store_meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'generation'")

    # ------------------------------------------------------------------ embedder
    @property
    def embedder(self) -> Any:
        if self._embedder is None or isinstance(self._embedder, str):
            from ..models import resolve_embedder

            r = resolve_embedder(self._embedder or self.settings.embedder, cached=False)
            self._embedder = r.model
            self.embedder_note = r.description
        return self._embedder

    @property
    def model_id(self) -> str:
        return str(self.embedder.model_id)

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        """Embeddings through the persistent cache: texts seen before (same model, kind, content)
        are read back, never sent to the model again; misses go in batches of
        ``embedding_batch_size`` and are written to the ``embeddings`` table at once. An embedder that
        says ``persist_vectors = False`` (the hash embedder: computing is cheaper than reading back)
        goes through the in-memory memo only."""
        emb = self.embedder
        model = self.model_id
        dim = int(emb.dim)
        texts = list(texts)
        if not texts:
            return np.zeros((0, dim), np.float32)
        hashes = [sha256(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:  # the memo is shared by the service's request threads and its re-chunk worker
            self.embed_requests += len(texts)
            for h in hashes:
                v = self._memo.get(f"{model}\0{kind}\0{h}")
                if v is not None:
                    found[h] = v
        persist = bool(getattr(emb, "persist_vectors", True))
        missing = list(dict.fromkeys(h for h in hashes if h not in found)) if persist else []
        for lo in range(0, len(missing), 500):
            part = missing[lo : lo + 500]
            marks = ",".join("?" * len(part))
            for h, blob in self._q(f"SELECT content_hash, vector FROM embeddings WHERE model_id = ? AND kind = ? "
                                   f"AND content_hash IN ({marks})", (model, kind, *part)):
                found[h] = np.frombuffer(bytes(blob), dtype="<f4").astype(np.float32)
        todo: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in found and h not in todo:
                todo[h] = t
        if todo:
            keys = list(todo)
            vecs = embed_batches(emb, [todo[k] for k in keys], self.settings.embedding_batch_size, kind=kind,
                                 error=RechunkError)
            self.embed_calls += len(keys)
            found.update(zip(keys, vecs, strict=True))
            if persist:
                now = time.time()
                rows = [(model, kind, k, dim, np.ascontiguousarray(v, "<f4").tobytes(), now)
                        for k, v in zip(keys, vecs, strict=True)]
                with self.tx():
                    self._xmany(self._upsert_embedding_sql(), rows)
        self._remember(kind, [(h, found[h]) for h in hashes])
        return np.stack([found[h] for h in hashes])

    def _remember(self, kind: str, vectors: Sequence[tuple[str, np.ndarray]]) -> int:
        """``(content hash, vector)`` pairs into the in-memory memo, the newest kept; returns how many
        it lacked."""
        model = self.model_id
        fresh = 0
        with self._lock:
            for h, v in vectors:
                key = f"{model}\0{kind}\0{h}"
                fresh += key not in self._memo
                self._memo[key] = v
        return fresh

    def _upsert_embedding_sql(self) -> str:
        return ("INSERT INTO embeddings(model_id, kind, content_hash, dim, vector, created_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (model_id, kind, content_hash) DO NOTHING")

    def embed_query(self, query: str) -> np.ndarray:
        return np.asarray(self.embedder.embed([query], kind="query"), dtype=np.float32)[0]

    # ------------------------------------------------------------------ documents, chapters, blocks
    def add_document(self, title: str, chapters: Sequence[tuple[str | None, Sequence[str]]] = (),
                     source: str | None = None, reached_by: str | None = None) -> str:
        """A document with ``chapters`` = ``[(title, [block texts...]), ...]``; blocks start dirty. ``reached_by``:
        the path its file was reached by (:meth:`add_reached_by`)."""
        if not isinstance(title, str):
            raise InputError("document title must be a string")
        check_storable(title, "document title")
        pairs = _chapter_pairs(chapters)
        with self.tx():
            order = self._q("SELECT COALESCE(MAX(doc_order), 0) + 1 FROM documents WHERE project_id = ?",
                            (self.project_id,))[0][0]
            did = _new_id()
            self._x("INSERT INTO documents(id, project_id, title, source, doc_order, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (did, self.project_id, title, source, order, time.time()))
            if reached_by is not None:
                self.add_reached_by(did, reached_by)
            for ctitle, blocks in pairs:
                cid = self.add_chapter(did, ctitle)
                self._add_blocks(cid, blocks, chapter=ctitle, from_source=True)
            self._bump()
        return did

    def add_chapter(self, document_id: str, title: str | None = None) -> str:
        if title is not None:
            check_storable(title, "chapter title")
        with self.tx():
            self._require("documents", document_id, "document")
            order = self._q("SELECT COALESCE(MAX(chapter_order), 0) + 1 FROM chapters WHERE document_id = ?",
                            (document_id,))[0][0]
            cid = _new_id()
            self._x("INSERT INTO chapters(id, document_id, chapter_order, title) VALUES (?, ?, ?, ?)",
                    (cid, document_id, order, title))
        return cid

    def _add_blocks(self, chapter_id: str, texts: list[str], titles: Sequence[str | None] | None = None,
                    chapter: str | None = None, from_source: bool = False) -> list[str]:
        """Blocks appended to a chapter, dirty. ``from_source``: their texts are the document's source's (a
        file's, as an ingest splits it): each one's hash is recorded as what the source gave it
        (:meth:`source_blocks`); a block added later by hand is no text of the source's."""
        _check_blocks(texts, chapter)
        start = self._q("SELECT COALESCE(MAX(block_order), 0) FROM blocks WHERE chapter_id = ?", (chapter_id,))[0][0]
        now = time.time()
        ids = [_new_id() for _ in texts]
        titles = list(titles) if titles is not None else [None] * len(texts)
        rows = [(bid, chapter_id, start + i + 1, titles[i], t, now) for i, (bid, t) in enumerate(zip(ids, texts, strict=True))]
        cols, marks = "id, chapter_id, block_order, title, content, is_dirty, revision, updated_at", "?, ?, ?, ?, ?, 1, 1, ?"
        if self._source_hash:  # (a read-only older store has no such column: the write fails as read-only)
            cols, marks = cols + ", source_hash", marks + ", ?"
            rows = [(*r, sha256(r[4]) if from_source else None) for r in rows]
        self._xmany(f"INSERT INTO blocks({cols}) VALUES ({marks})", rows)
        return ids

    def add_block(self, chapter_id: str, content: str, title: str | None = None) -> str:
        """Append a (dirty) block to a chapter."""
        with self.tx():
            self._require("chapters", chapter_id, "chapter")
            bid = self._add_blocks(chapter_id, [content], [title])[0]
            self._bump()
        return bid

    def _require(self, table: str, key: str, what: str) -> None:
        """``key`` names a document or chapter of *this* project (else :class:`StoreError`)."""
        sql = {"documents": "SELECT 1 FROM documents WHERE id = ? AND project_id = ?",
               "chapters": "SELECT 1 FROM chapters c JOIN documents d ON d.id = c.document_id "
                           "WHERE c.id = ? AND d.project_id = ?"}[table]
        if not isinstance(key, str) or not self._q(sql, (key, self.project_id)):
            raise UnknownIdError(f"unknown {what} id {key!r}" + self._elsewhere(table, key))

    def _elsewhere(self, table: str, key: Any) -> str:
        """`` (it belongs to project P)`` when ``key`` exists in another project: the usual cause."""
        if not isinstance(key, str) or not key:
            return ""
        join = {"documents": "documents d",
                "chapters": "chapters x JOIN documents d ON d.id = x.document_id",
                "blocks": "blocks x JOIN chapters c ON c.id = x.chapter_id JOIN documents d ON d.id = c.document_id"}[table]
        col = "d.id" if table == "documents" else "x.id"
        rows = self._q(f"SELECT p.name FROM {join} JOIN projects p ON p.id = d.project_id WHERE {col} = ?", (key,))
        return f" in project {self.project!r} (it belongs to project {rows[0][0]!r})" if rows else ""

    def edit_block(self, block_id: str, content: str, *, expected_revision: int | None = None) -> bool:
        """Replace a block's content and mark it dirty (cheap; the re-chunk runs later).
        Returns False when the content is identical (nothing marked). ``expected_revision``: optimistic
        locking — :class:`StaleRevisionError`, nothing written, unless the block is still at that revision.
        The block's row is held from the check to the write (PostgreSQL: ``FOR UPDATE``; SQLite's write
        transaction holds the file): a check made before it, outside, let two writers of one revision in
        from two processes on PostgreSQL, the second overwriting the first unsaid."""
        _check_blocks([content], block_id=block_id if isinstance(block_id, str) else None)
        _check_revision(expected_revision)
        with self.tx():
            self._q(self._lock_block_sql(), (block_id,))
            b = self.get_block(block_id)
            if expected_revision is not None and b.revision != expected_revision:
                raise StaleRevisionError(block_id, expected_revision, b.revision)
            if b.content == content:
                return False
            self._x("UPDATE blocks SET content = ?, is_dirty = 1, revision = revision + 1, updated_at = ? WHERE id = ?",
                    (content, time.time(), block_id))
            self._retitle(b, content)
        return True

    def _retitle(self, block: BlockRow, content: str) -> None:
        """A chapter's title follows its heading: ``block``, its first block, edited to ``content`` that opens with
        a heading gives the chapter that heading's title, as an ingest of the text would (an outline read from the
        chapters showed ``Methods`` after ``## Methods`` became ``## Materials and methods``). Where the edit
        removed the heading the title stays: the chapter no longer opens where an ingest would open one (the
        ingest's merge leaves such a title too, :func:`~logichunk.store.ingest.merged_titles`)."""
        first = self._q("SELECT id FROM blocks WHERE chapter_id = ? ORDER BY block_order LIMIT 1", (block.chapter_id,))
        title = heading_title(content) if first and first[0][0] == block.id else None
        if title is not None:
            for cid in self._chapter_parts(block.chapter_id):
                self._x("UPDATE chapters SET title = ? WHERE id = ? AND (title IS NULL OR title <> ?)",
                        (title, cid, title))

    def _chapter_parts(self, chapter_id: str) -> list[str]:
        """``chapter_id`` and the chapters after it that are parts of the same chapter (one over
        :data:`~logichunk.store.ingest.CHAPTER_PART_CHARS` is stored as consecutive chapters of its title): each
        next one of the same title whose first block opens no chapter. Why: a heading edited renamed the first
        part only, and an outline showed the old title for the rest of the chapter."""
        rows = self._q("SELECT c.document_id, c.chapter_order, c.title FROM chapters c WHERE c.id = ?", (chapter_id,))
        if not rows:
            return [chapter_id]
        doc, order, title = rows[0]
        parts = [chapter_id]
        for cid, ctitle in self._q("SELECT id, title FROM chapters WHERE document_id = ? AND chapter_order > ? "
                                   "ORDER BY chapter_order", (doc, order)):
            first = self._q("SELECT content FROM blocks WHERE chapter_id = ? ORDER BY block_order LIMIT 1", (cid,))
            if ctitle != title or not first or heading_title(first[0][0]) is not None:
                break
            parts.append(cid)
        return parts

    def source_blocks(self, document_id: str) -> list[list[SourcedBlock]]:
        """The document's blocks, chapter by chapter in order, each with what its document's source (its file)
        gave it when it was last ingested (:class:`SourcedBlock`), in one read: what tells a change of the file
        from an edit made in the store (:func:`~logichunk.store.ingest.block_merge`)."""
        source = "b.source_hash" if self._source_hash else "NULL"  # (a read-only older store: none recorded)
        out: dict[str, list[SourcedBlock]] = {}
        for cid, bid, rev, content, h in self._q(
                f"SELECT c.id, b.id, b.revision, b.content, {source} FROM chapters c LEFT JOIN blocks b ON "
                "b.chapter_id = c.id WHERE c.document_id = ? ORDER BY c.chapter_order, b.block_order", (document_id,)):
            row = out.setdefault(cid, [])
            if bid is not None:
                row.append(SourcedBlock(bid, int(rev), content, h))
        return list(out.values())

    def take_source_texts(self, document_id: str, take: Sequence[tuple[str, int, str]],
                          agree: Sequence[tuple[str, int, str]] = (),
                          titles: Mapping[str, str | None] | None = None, *,
                          revisions: Mapping[str, int] | None = None) -> bool:
        """An ingest's merge of a changed file into its document, in one transaction: each ``(block id, revision,
        text)`` of ``take`` (blocks changed only in the file) gets the file's text, marked dirty as an edit is,
        and its hash recorded as the source's; each ``(block id, revision, hash)`` of ``agree`` (blocks whose
        text is the file's already) gets only that record; each chapter of ``titles`` (id -> title) that title
        (its heading block renamed). The document's blocks are held while it checks them (PostgreSQL: ``FOR
        UPDATE``): False, nothing written, when one is no longer at its revision (edited meanwhile: decide
        again). ``revisions``: every block of the document, id -> revision, held to them all (a block added or
        deleted meanwhile too), and ``take``'s texts written as edits, not recorded as the source's (a text that is
        no file's: :func:`~logichunk.store.replace.replace_text`)."""
        _check_blocks([text for _bid, _rev, text in take])
        for t in (titles or {}).values():
            if t is not None:
                check_storable(t, "chapter title")
        with self.tx():
            now: dict[str, int] = {}
            for cid, _o, _t in self.chapters(document_id):
                now.update((r[0], int(r[1])) for r in self._q(self._lock_chapter_blocks_sql(), (cid,)))
            if any(now.get(bid) != rev for bid, rev, _ in (*take, *agree)) or \
                    (revisions is not None and now != dict(revisions)):
                return False
            ts = time.time()
            if revisions is None:
                self._xmany("UPDATE blocks SET content = ?, is_dirty = 1, revision = revision + 1, updated_at = ?, "
                            "source_hash = ? WHERE id = ?", [(text, ts, sha256(text), bid) for bid, _rev, text in take])
            else:
                self._xmany("UPDATE blocks SET content = ?, is_dirty = 1, revision = revision + 1, updated_at = ? "
                            "WHERE id = ?", [(text, ts, bid) for bid, _rev, text in take])
            self._xmany("UPDATE blocks SET source_hash = ? WHERE id = ?", [(h, bid) for bid, _rev, h in agree])
            self._xmany("UPDATE chapters SET title = ? WHERE id = ? AND document_id = ?",
                        [(t, cid, document_id) for cid, t in (titles or {}).items()])
            if take or titles:
                self._bump()
        return True

    def rewrite_document(self, document_id: str, revisions: Mapping[str, int],
                         chapters: Sequence[tuple[str | None, Sequence[MergedBlock]]]) -> list[str] | None:
        """A re-ingest's merge of a file whose blocks or chapters no longer line up with the document's, in one
        transaction: the document becomes ``chapters`` (``[(title, [MergedBlock...]), ...]``). Stored blocks
        named there keep their ids (moved where they now lie, ``take`` ones getting their text); the others are
        deleted, new ones added. A chapter reuses the id of the chapter its first kept block came from (so its
        chunks stay where it is the same chapter); the chapters left over are deleted. Every chapter whose blocks
        or rank changed is marked for a re-chunk as :meth:`delete_block` marks one: its unchanged parents are kept
        by the plan (renumbered), the rest cut again. None, nothing written, when the document's blocks are no
        longer ``revisions`` (edited meanwhile: decide again); else the ids of the blocks added, in order."""
        _check_blocks([b.text for _t, row in chapters for b in row])
        for t, _row in chapters:
            if t is not None:
                check_storable(t, "chapter title")
        with self.tx():
            old_chapters = self.chapters(document_id)
            now: dict[str, int] = {}
            before: dict[str, list[str]] = {}
            where: dict[str, str] = {}
            for cid, _o, _t in old_chapters:
                rows = self._q(self._lock_chapter_blocks_sql(), (cid,))
                now.update((r[0], int(r[1])) for r in rows)
                before[cid] = [b.id for b in self.blocks(cid)]
                where.update((bid, cid) for bid in before[cid])
            if now != dict(revisions):
                return None
            ids = self._chapter_ids(chapters, where)
            rank = {cid: k for k, (cid, _o, _t) in enumerate(old_chapters)}
            self._xmany("INSERT INTO chapters(id, document_id, chapter_order, title) VALUES (?, ?, ?, ?)",
                        [(cid, document_id, k + 1, title) for k, (cid, (title, _row)) in
                         enumerate(zip(ids, chapters, strict=True)) if cid not in rank])  # (first: parents move there)
            to: dict[str, str | None] = dict.fromkeys(where)  # block id -> its chapter now (None: removed)
            to.update((b.id, cid) for cid, (_t, row) in zip(ids, chapters, strict=True) for b in row
                      if b.id is not None)
            self._rehome_parents({c for bid, c in where.items() if to[bid] != c}, where, to)
            self._xmany("DELETE FROM blocks WHERE id = ?", [(bid,) for bid, c in to.items() if c is None])
            ts = time.time()
            new_ids: list[str] = []
            for k, (cid, (title, row)) in enumerate(zip(ids, chapters, strict=True)):
                if cid in rank:
                    self._x("UPDATE chapters SET chapter_order = ?, title = ? WHERE id = ?", (k + 1, title, cid))
                self._xmany("UPDATE blocks SET content = ?, is_dirty = 1, revision = revision + 1, updated_at = ? "
                            "WHERE id = ?", [(b.text, ts, b.id) for b in row if b.id is not None and b.take])
                self._xmany("UPDATE blocks SET chapter_id = ?, block_order = ?, source_hash = ? WHERE id = ?",
                            [(cid, i + 1, b.source_hash, b.id) for i, b in enumerate(row) if b.id is not None])
                new = [(i, b) for i, b in enumerate(row) if b.id is None]
                if new:
                    added = self._add_blocks(cid, [b.text for _i, b in new], chapter=title, from_source=True)
                    self._xmany("UPDATE blocks SET block_order = ?, source_hash = ? WHERE id = ?",
                                [(i + 1, b.source_hash, bid) for (i, b), bid in zip(new, added, strict=True)])
                    new_ids.extend(added)
                if rank.get(cid) != k or before.get(cid) != [b.id for b in row]:
                    self._x("UPDATE blocks SET is_dirty = 1, content_hash = NULL, revision = revision + 1 "
                            "WHERE chapter_id = ?", (cid,))
            self._xmany("DELETE FROM chapters WHERE id = ?", [(c,) for c in rank if c not in ids])
            self._bump()
        return new_ids

    @staticmethod
    def _chapter_ids(chapters: Sequence[tuple[str | None, Sequence[MergedBlock]]], where: Mapping[str, str]
                     ) -> list[str]:
        """The id each chapter of a rewritten document takes: that of the stored chapter its first kept block
        lay in, unless an earlier chapter took it; else a new one."""
        used: set[str] = set()
        out: list[str] = []
        for _t, row in chapters:
            cid = next((where[b.id] for b in row if b.id is not None and where[b.id] not in used), None)
            cid = cid if cid is not None else _new_id()
            used.add(cid)
            out.append(cid)
        return out

    def _rehome_parents(self, chapters: set[str], where: Mapping[str, str], to: Mapping[str, str | None]) -> None:
        """The parents of ``chapters`` (blocks left them) as their blocks go from chapter ``where`` to ``to``: a
        parent whose blocks all go to one chapter goes there with its children (the next re-chunk keeps it,
        renumbered, where it still fits); one whose blocks part, or go (None), is deleted, children and all."""
        for cid in chapters:
            for pk, owner, meta in self._q("SELECT pk, block_id, meta FROM chunks WHERE chapter_id = ? AND "
                                           "chunk_level = 'parent'", (cid,)):
                dest = {to.get(b) for b in {owner, *(json.loads(meta or "{}").get("blocks") or [])}}
                if dest == {cid}:
                    continue
                if len(dest) == 1 and None not in dest:
                    self._x("UPDATE chunks SET chapter_id = ? WHERE pk = ? OR parent_pk = ?", (dest.pop(), pk, pk))
                else:
                    self._x("DELETE FROM chunks WHERE pk = ?", (pk,))
                    self._x("DELETE FROM chunks WHERE parent_pk = ?", (pk,))

    def _drop_covering_parents(self, chapter_id: str, block_id: str) -> None:
        """Delete the parents of a chapter owned by other blocks that cover ``block_id`` (merged parents): the
        block leaves the chapter."""
        for pk, meta in self._q("SELECT pk, meta FROM chunks WHERE chapter_id = ? AND chunk_level = 'parent'",
                                (chapter_id,)):
            if block_id in (json.loads(meta or "{}").get("blocks") or []):
                self._x("DELETE FROM chunks WHERE pk = ?", (pk,))

    def mark_dirty(self, block_id: str) -> None:
        with self.tx():
            self.get_block(block_id)
            self._x("UPDATE blocks SET is_dirty = 1, revision = revision + 1 WHERE id = ?", (block_id,))

    def delete_block(self, block_id: str) -> None:
        """Delete a block (its chunks cascade); the chapter's blocks are marked for a re-chunk,
        since merged parents may have covered it. Their revisions stay: their texts did not change, so an
        edit of the next paragraph made from its revision is no conflict (it was refused as stale, as if
        someone had edited it). A re-chunk planned before the delete sees the chapter's blocks changed and
        plans again, and does not take them for clean (its ``content_hash``, cleared here, is compared)."""
        with self.tx():
            b = self.get_block(block_id)
            # the chapter's blocks held first, as a re-chunk's write holds them (_apply) before it deletes chunks:
            # taking the chunks first deadlocked with it on PostgreSQL ("deadlock detected", one side's write lost)
            self._q(self._lock_chapter_blocks_sql(), (b.chapter_id,))
            self._drop_covering_parents(b.chapter_id, block_id)  # (parents of other blocks that covered it)
            self._x("DELETE FROM blocks WHERE id = ?", (block_id,))
            self._x("UPDATE blocks SET is_dirty = 1, content_hash = NULL WHERE chapter_id = ?", (b.chapter_id,))
            self._bump()

    def set_document_source(self, document_id: str, source: str, title: str | None = None) -> None:
        """Record another ``source`` for a document: an ingest writes a stored relative path, which names a file
        only from the folder it was ingested from, as the full path, and follows a file moved or renamed (then
        with its new ``title``, the name's stem). Its text and chunks are untouched, so the store's generation
        (what caches of them and an ingest's checks go by) does not move for the source; a new title, which hits
        show, moves it."""
        with self.tx():
            self._require("documents", document_id, "document")
            self._x("UPDATE documents SET source = ? WHERE id = ?", (source, document_id))
            if title is not None:
                check_storable(title, "document title")
                self._x("UPDATE documents SET title = ? WHERE id = ?", (title, document_id))
                self._bump()

    def add_reached_by(self, document_id: str, path: str) -> None:
        """Record a path a document's file was reached by (an ingest of a folder: through a link, the link's path),
        which names it in the folder where its source, the real path, lies outside it. Every path is kept, not the
        last alone: a file reached from two folders synced (two links, or a link and its own path) stays while
        either still reaches it (:func:`~logichunk.store.ingest.prune_missing`). Like the source it leaves the text
        and the generation alone; a document deleted meanwhile records nothing. A store of an older logichunk that
        may not be written has no such column: nothing is recorded there."""
        self._change_reached(document_id, lambda paths: paths if path in paths else (*paths, path))

    def drop_reached_by(self, document_id: str, gone: Sequence[str]) -> None:
        """Forget paths that no longer reach a document's file (a link deleted, or leading elsewhere now)."""
        self._change_reached(document_id, lambda paths: tuple(p for p in paths if p not in gone))

    def _change_reached(self, document_id: str, change: Callable[[tuple[str, ...]], tuple[str, ...]]) -> None:
        """``change`` (paths -> paths) applied to a document's recorded paths, written only over the value it read
        (two ingests adding a path each at once: neither write loses the other's)."""
        if not self._reached_by:
            return
        for _ in range(5):
            with self.tx():
                rows = self._q("SELECT reached_by FROM documents WHERE id = ? AND project_id = ?",
                               (document_id, self.project_id))
                if not rows:
                    return
                before = rows[0][0]
                after = reached_value(change(reached_of(before)))
                if after == before:
                    return
                same = "reached_by IS NULL" if before is None else "reached_by = ?"
                self._x(f"UPDATE documents SET reached_by = ? WHERE id = ? AND {same}",
                        (after, document_id) if before is None else (after, document_id, before))
                now = self._q("SELECT reached_by FROM documents WHERE id = ?", (document_id,))
                if now and now[0][0] == after:
                    return

    def reached_paths(self) -> dict[str, tuple[str, ...]]:
        """Document id -> the paths its file was reached by (:meth:`add_reached_by`), where one is recorded."""
        if not self._reached_by:
            return {}
        return {r[0]: reached_of(r[1]) for r in self._q("SELECT id, reached_by FROM documents WHERE project_id = ? "
                                                         "AND reached_by IS NOT NULL", (self.project_id,))}

    def delete_document(self, document_id: str) -> None:
        with self.tx():
            self._require("documents", document_id, "document")
            self._x("DELETE FROM documents WHERE id = ?", (document_id,))
            self._bump()

    def get_block(self, block_id: str) -> BlockRow:
        if not isinstance(block_id, str) or not block_id:
            raise UnknownIdError(f"unknown block id {block_id!r}")
        cols = ", ".join("b." + c.strip() for c in _BLOCK_COLS.split(","))
        rows = self._q(f"SELECT {cols} FROM blocks b JOIN chapters c ON c.id = b.chapter_id "
                       "JOIN documents d ON d.id = c.document_id WHERE b.id = ? AND d.project_id = ?",
                       (block_id, self.project_id))
        if not rows:  # a block of another project is unknown here: edits never cross projects
            raise UnknownIdError(f"unknown block id {block_id!r}" + self._elsewhere("blocks", block_id))
        return _block_row(rows[0])

    def blocks(self, chapter_id: str | None = None, *, dirty: bool | None = None) -> list[BlockRow]:
        """Blocks of one chapter, or of the whole project, in document/chapter/block order."""
        cols = ", ".join("b." + c.strip() for c in _BLOCK_COLS.split(","))
        sql = (f"SELECT {cols} FROM blocks b JOIN chapters c ON c.id = b.chapter_id "
               "JOIN documents d ON d.id = c.document_id WHERE d.project_id = ?")
        params: list[Any] = [self.project_id]
        if chapter_id is not None:
            sql += " AND b.chapter_id = ?"
            params.append(chapter_id)
        if dirty is not None:
            sql += " AND b.is_dirty = ?"
            params.append(int(dirty))
        sql += " ORDER BY d.doc_order, c.chapter_order, b.block_order"
        return [_block_row(r) for r in self._q(sql, params)]

    def documents(self) -> list[tuple[str, str, str | None]]:
        return [tuple(r) for r in self._q("SELECT id, title, source FROM documents WHERE project_id = ? ORDER BY doc_order",
                                          (self.project_id,))]

    def chapters(self, document_id: str) -> list[tuple[str, int, str | None]]:
        return [(r[0], int(r[1]), r[2]) for r in self._q(
            "SELECT id, chapter_order, title FROM chapters WHERE document_id = ? ORDER BY chapter_order", (document_id,))]

    def chapter_text(self, chapter_id: str) -> str:
        return "".join(b.content for b in self.blocks(chapter_id))

    # ------------------------------------------------------------------ chunks (reads)
    def chunks(self, *, level: str | None = None, chapter_id: str | None = None, document_id: str | None = None,
               block_id: str | None = None) -> list[ChunkRow]:
        cond, params = ["project_id = ?"], [self.project_id]
        for col, val in (("chunk_level", level), ("chapter_id", chapter_id), ("document_id", document_id),
                         ("block_id", block_id)):
            if val is not None:
                cond.append(f"{col} = ?")
                params.append(val)
        return [_chunk_row(r) for r in self._q(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE {' AND '.join(cond)} ORDER BY document_id, chapter_id, "
            "chunk_level, parent_pk, chunk_order", params)]

    def chunks_by_pk(self, pks: Sequence[int]) -> dict[int, ChunkRow]:
        out: dict[int, ChunkRow] = {}
        pks = [int(p) for p in dict.fromkeys(pks)]
        for lo in range(0, len(pks), 500):
            part = pks[lo : lo + 500]
            for r in self._q(f"SELECT {_CHUNK_COLS} FROM chunks WHERE pk IN ({','.join('?' * len(part))})", part):
                row = _chunk_row(r)
                out[row.pk] = row
        return out

    def children_of(self, parent_pk: int) -> list[ChunkRow]:
        return [_chunk_row(r) for r in self._q(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE parent_pk = ? ORDER BY chunk_order", (int(parent_pk),))]

    def chunk_by_dotted(self, document_id: str, dotted_id: str) -> ChunkRow | None:
        rows = self._q(f"SELECT {_CHUNK_COLS} FROM chunks WHERE document_id = ? AND dotted_id = ?", (document_id, dotted_id))
        return _chunk_row(rows[0]) if rows else None

    def other_embedders(self) -> bool:
        """Whether any of the project's chunks carries another model's vectors than the current embedder's:
        four seeks of the (project, level, model) index (below and above the model, at both levels), so a
        live edit can ask it on every re-chunk."""
        for level in ("parent", "child"):
            for op in ("<", ">"):
                if self._q(f"SELECT 1 FROM chunks WHERE project_id = ? AND chunk_level = ? AND embedding_model {op} ? "
                           "LIMIT 1", (self.project_id, level, self.model_id)):
                    return True
        return False

    def other_embedder_counts(self) -> dict[str, int]:
        """The other models than the current embedder's whose vectors the project's chunks carry, and how many
        chunks each (empty, from :meth:`other_embedders`' seeks alone, when there are none)."""
        if not self.other_embedders():
            return {}
        return {m: n for m, n in self.stored_embedders().items() if m != self.model_id}

    def other_embedders_said(self, others: dict[str, int] | None = None) -> str:
        """'' when every chunk of the project carries the current embedder's vectors, else the sentence that
        says which models' (and how many chunks) instead: what an ingest, an edit and a re-chunk refuse with.
        ``others``: :meth:`other_embedder_counts`, when the caller has it already."""
        others = self.other_embedder_counts() if others is None else others
        if not others:
            return ""
        had = ", ".join(f"{m} ({n} chunks)" for m, n in sorted(others.items()))
        return f"this project was embedded with {had}, not with the current embedder {self.model_id}"

    def embedder_mismatch(self) -> str:
        """Why vector search finds nothing here, when that is the reason: the project's chunks were
        embedded with other models than the current embedder's ('' otherwise)."""
        rows = self._q("SELECT embedding_model, COUNT(*) FROM chunks WHERE project_id = ? AND chunk_level = 'child' "
                       "GROUP BY embedding_model", (self.project_id,))
        if not rows or any(m == self.model_id for m, _ in rows):
            return ""
        from ..models.embed_hash import hash_spec

        spec = hash_spec(str(rows[0][0])) if len(rows) == 1 else None  # (a hash embedder's: the flag that builds it)
        return ("the chunks were embedded with " + ", ".join(f"{m} ({n})" for m, n in rows)
                + f", not with the current embedder {self.model_id}; open the store with that embedder"
                + (f" (--embedder {spec}), or re-embed them with this one (logichunk ingest --reembed)" if spec else ""))

    def documents_with_text(self, text: str) -> list[str]:
        """Ids of the project's documents whose current text (their blocks, in order) is ``text``,
        oldest first. Lengths are compared in SQL first; only documents of the same length are read."""
        rows = self._q("SELECT d.id FROM documents d JOIN chapters c ON c.document_id = d.id "
                       "JOIN blocks b ON b.chapter_id = c.id WHERE d.project_id = ? "
                       "GROUP BY d.id, d.doc_order HAVING SUM(LENGTH(b.content)) = ? ORDER BY d.doc_order",
                       (self.project_id, len(text)))
        want = sha256(text)
        return [d for (d,) in rows
                if sha256("".join(self.chapter_text(c) for c, _o, _t in self.chapters(d))) == want]

    def stored_embedders(self) -> dict[str, int]:
        """Embedding model -> how many of the project's stored chunks carry its vectors."""
        rows = self._q("SELECT embedding_model, COUNT(*) FROM chunks WHERE project_id = ? AND embedding_model IS NOT NULL "
                       "GROUP BY embedding_model", (self.project_id,))
        return {str(m): int(n) for m, n in rows}

    def reembed(self) -> list[RechunkResult]:
        """Re-chunk, with the current embedder, every chapter of the project whose chunks were
        embedded with another model (the layout of children depends on the embedder's cliffs where the
        store cuts by them, ``cut_vectors = "embedder"``, so the chapter is planned again, not only its
        vectors replaced)."""
        chapters = [c for (c,) in self._q(
            "SELECT DISTINCT chapter_id FROM chunks WHERE project_id = ? AND embedding_model IS NOT NULL "
            "AND embedding_model <> ? ORDER BY chapter_id", (self.project_id, self.model_id))]
        out = []
        for c in chapters:  # (the other models' chunks are what this replaces: no embedder check)
            self._check_cuts(c)
            out.append(self._rechunk(c, True, None))
        return out

    # the settings a project's chunks were cut with ---------------------------------------------
    def cut_settings(self) -> dict[str, Any]:
        """What shapes this store's cuts, as a project records it: the parent-child layout's limits and
        thresholds, the unit and tokenizer they are measured in, and what the cuts are decided by
        (``cut_vectors``). The embedder itself is checked apart (:func:`~logichunk.store.ingest.check_embedder`)."""
        p = self.params
        tok = p.tokenizer
        return {"max_parent_size": p.max_parent_size, "min_parent_size": p.min_parent_size,
                "child_min_size": p.child_min_size, "child_max_size": p.child_max_size,
                "child_target_size": p.child_target_size, "similarity_threshold": p.similarity_threshold,
                "cliff_drop": p.cliff_drop, "unit": p.unit if isinstance(p.unit, str) else type(p.unit).__name__,
                "tokenizer": tok if tok is None or isinstance(tok, str) else type(tok).__name__,
                "cut_vectors": cut_mode(self.settings.cut_vectors, self.embedder)}

    def _cuts_key(self) -> str:
        return f"cut_settings:{self.project_id}"

    def stored_cut_settings(self) -> dict[str, Any] | None:
        """The settings this project's chunks were cut with (recorded at its first re-chunk, and by
        :meth:`recut`); None before any. A store made before they were recorded records the settings of
        its first re-chunk after."""
        rows = self._q("SELECT value FROM store_meta WHERE key = ?", (self._cuts_key(),))
        return json.loads(rows[0][0]) if rows else None

    def _cut_diff(self) -> list[str]:
        """Each setting whose recorded value (:meth:`stored_cut_settings`) this store's differs from, said
        as ``name recorded, now current``; none before anything is recorded."""
        stored = self.stored_cut_settings()
        if stored is None:
            return []
        now = self.cut_settings()
        return [f"{k} {stored.get(k)!r}, now {now.get(k)!r}" for k in sorted(set(stored) | set(now))
                if stored.get(k) != now.get(k)]

    def _has_chunks(self) -> bool:
        return bool(self._q("SELECT 1 FROM chunks WHERE project_id = ? LIMIT 1", (self.project_id,)))

    def cut_mismatch(self) -> str:
        """Why re-chunking here would mix two kinds of chunks, when it would: the project holds chunks cut
        with other settings than this store's ('' otherwise)."""
        diff = self._cut_diff()
        return self._other_settings(diff) if diff and self._has_chunks() else ""

    def _other_settings(self, diff: list[str]) -> str:
        return f"project {self.project!r} was chunked with other settings ({'; '.join(diff)})"

    def _check_cuts(self, chapter_id: str) -> None:
        """Refuse to re-chunk with other settings than the project's chunks were cut with; a project
        without chunks takes the settings it is cut with now."""
        diff = self._cut_diff()
        if not diff:
            return
        if self._has_chunks():
            raise CutSettingsError(f"{self._other_settings(diff)}; chapter {chapter_id} was not re-chunked (its "
                                   "blocks stay as they are) — open the store with those settings (--tokenizer, "
                                   "--config, LOGICHUNK_* variables), or cut every chapter again with these "
                                   "(logichunk ingest --recut, Store.recut())")
        with self.tx():  # other settings, but no chunks of them left
            self._record_cuts(replace=True)

    def _record_cuts(self, replace: bool) -> None:
        """Record :meth:`cut_settings` as the project's (``replace``: over an earlier record)."""
        sql = ("INSERT INTO store_meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO "
               + ("UPDATE SET value = excluded.value" if replace else "NOTHING"))
        self._x(sql, (self._cuts_key(), json.dumps(self.cut_settings(), sort_keys=True)))

    def recut(self) -> list[RechunkResult]:
        """Cut every chapter of the project again with this store's settings, and record them as the
        project's: what changing the sizes (or ``cut_vectors``, or the unit) of a store with chunks takes,
        since a store never holds chunks of two kinds."""
        chapters = [c for (c,) in self._q(
            "SELECT c.id FROM chapters c JOIN documents d ON d.id = c.document_id WHERE d.project_id = ? "
            "ORDER BY d.doc_order, c.chapter_order", (self.project_id,))]
        out = [self._rechunk(c, True, None) for c in chapters]
        with self.tx():
            self._record_cuts(replace=True)
        return out

    def avg_parent_size(self) -> float:
        gen = self.generation()
        if self._avg_cache[0] != gen:
            v = self._q("SELECT AVG(size) FROM chunks WHERE project_id = ? AND chunk_level = 'parent'", (self.project_id,))
            self._avg_cache = (gen, float(v[0][0] or 0.0))
        return self._avg_cache[1]

    def counts(self) -> dict[str, int]:
        out = {lvl: 0 for lvl in LEVELS}
        for lvl, n in self._q("SELECT chunk_level, COUNT(*) FROM chunks WHERE project_id = ? GROUP BY chunk_level",
                              (self.project_id,)):
            out[lvl] = int(n)
        out["dirty_blocks"] = len(self.blocks(dirty=True))
        return out

    def bubbles(self, chapter_id: str | None = None) -> list[Bubble]:
        sql = "SELECT category, content, priority, context FROM bubbles WHERE project_id = ?"
        params: list[Any] = [self.project_id]
        if chapter_id:
            sql += " AND chapter_id = ?"
            params.append(chapter_id)
        return [Bubble(c, t, p, json.loads(x or "{}")) for c, t, p, x in self._q(sql + " ORDER BY pk", params)]

    # ------------------------------------------------------------------ re-chunking
    def rechunk_block(self, block_id: str, *, force: bool = False) -> RechunkResult:
        """Bring the block's chapter up to date (see the module docstring)."""
        b = self.get_block(block_id)
        return self.rechunk_chapter(b.chapter_id, force=force)

    def rechunk_dirty(self) -> list[RechunkResult]:
        """Re-chunk every chapter of the project that has a dirty block."""
        chapters = list(dict.fromkeys(b.chapter_id for b in self.blocks(dirty=True)))
        return [self.rechunk_chapter(c) for c in chapters]

    def _snapshot(self, chapter_id: str) -> _Snapshot:
        with self.tx():
            rows = self._q("SELECT c.document_id, c.chapter_order FROM chapters c WHERE c.id = ?", (chapter_id,))
            if not rows:
                raise UnknownIdError(f"unknown chapter id {chapter_id!r}")
            doc, order = rows[0]
            rank = self._q("SELECT COUNT(*) FROM chapters WHERE document_id = ? AND chapter_order <= ?", (doc, order))[0][0]
            blocks = self.blocks(chapter_id)
            old = [(int(r[0]), r[1], int(r[2]), int(r[3]), r[4], int(r[5]), r[6], r[7], json.loads(r[8] or "{}"))
                   for r in self._q("SELECT pk, block_id, start_offset, end_offset, content_hash, chunk_order, dotted_id, "
                                    "method, meta FROM chunks WHERE chapter_id = ? AND chunk_level = 'parent'",
                                    (chapter_id,))]
        return _Snapshot(chapter_id, doc, int(rank), blocks, old)

    def rechunk_chapter(self, chapter_id: str, *, force: bool = False, plan: ChapterPlan | None = None,
                        cut_vectors: str | None = None) -> RechunkResult:
        """Bring one chapter up to date. ``plan``: a :class:`~logichunk.store.plan.ChapterPlan` made
        elsewhere (a Ray worker) from this chapter's blocks with this store's embedder; it is written
        as it is, its vectors go to the embedding cache, and ``embedded`` counts the ones the cache
        did not hold. A plan that no longer fits the chapter (other blocks, rank or model) is set
        aside and the chapter is planned here. ``cut_vectors``: what this chapter's cuts are read from
        (``"lexical"`` / ``"embedder"``, :func:`~logichunk.store.plan.cut_vectors`) in place of the
        settings' — a writer that knows its texts cut as well by their words (memory's archived topics,
        :mod:`logichunk.memory.archive`) spares the embedder; a later re-chunk or :meth:`recut` follows
        the settings again."""
        if cut_vectors is not None and cut_vectors not in ("lexical", "embedder"):
            raise InputError(f"cut_vectors must be lexical or embedder, got {cut_vectors!r}")
        try:
            self._check_cuts(chapter_id)
            self._check_embedder(chapter_id)
        except CutSettingsError as e:  # said on the blocks that wait, as a failed re-chunk is
            self._record_error(self.blocks(chapter_id, dirty=True), e)
            raise
        return self._rechunk(chapter_id, force, plan, cut_vectors)

    def _check_embedder(self, chapter_id: str) -> None:
        """Refuse to re-chunk with another embedder than the project's chunks were embedded with (a service or
        an edit opened with the default embedder on a project of hash vectors wrote its chunks beside theirs)."""
        if said := self.other_embedders_said():
            raise EmbedderMismatchError(f"{said}; chapter {chapter_id} was not re-chunked (its blocks stay as they "
                                        "are) — open the store with that embedder (--embedder), or re-embed "
                                        "everything with this one (logichunk ingest --reembed, Store.reembed())")

    def _rechunk(self, chapter_id: str, force: bool, plan: ChapterPlan | None,
                 cut_vectors: str | None = None) -> RechunkResult:
        """:meth:`rechunk_chapter` once the settings are known to be the project's (or :meth:`recut` runs)."""
        t0 = time.perf_counter()
        for _attempt in range(3):
            snap = self._snapshot(chapter_id)
            changed = [b for b in snap.blocks if b.content_hash != sha256(b.content)]
            dirty = [b for b in snap.blocks if b.is_dirty]
            if not changed and not force:
                if not dirty:
                    return RechunkResult(chapter_id, "clean", seconds=time.perf_counter() - t0)
                with self.tx():  # (not one edited, nor one whose chapter lost a block, since the snapshot)
                    for b in dirty:
                        self._x("UPDATE blocks SET is_dirty = 0, last_error = NULL WHERE id = ? AND revision = ? "
                                "AND content_hash = ?", (b.id, b.revision, b.content_hash))
                return RechunkResult(chapter_id, "unchanged", seconds=time.perf_counter() - t0)
            calls0 = self.embed_calls
            if plan is not None and self._plan_fits(snap, plan):
                current, plan = plan, None  # used once: a retry after a concurrent edit plans here
            else:
                plan = None
                try:
                    current = self._plan(snap, force, cut_vectors)
                except LogichunkError as e:
                    self._record_error(changed or dirty, e)
                    raise RechunkError(f"re-chunk of chapter {chapter_id} failed, blocks stay dirty: {e}") from e
                except Exception as e:  # an embedder failing in any way keeps the blocks dirty
                    self._record_error(changed or dirty, e)
                    raise RechunkError(f"re-chunk of chapter {chapter_id} failed, blocks stay dirty: "
                                       f"{type(e).__name__}: {e}") from e
            with self.tx():
                applied = self._apply(snap, current)
                cached = self._cache_vectors(current.vectors) if applied and current.vectors else 0
            if applied:
                return RechunkResult(chapter_id, "rechunked", len(current.kept), len(current.new),
                                     current.children, self.embed_calls - calls0 + cached, time.perf_counter() - t0)
        return RechunkResult(chapter_id, "stale", seconds=time.perf_counter() - t0)

    def _plan_fits(self, snap: _Snapshot, plan: ChapterPlan) -> bool:
        """A plan made elsewhere is for this chapter as it is now: same rank, same block texts, no
        stored parents to keep or delete, this store's embedder."""
        return (plan.rank == snap.rank and not snap.old_parents and not plan.kept and plan.model_id == self.model_id
                and plan.block_hashes == tuple(sha256(b.content) for b in snap.blocks))

    def _cache_vectors(self, vectors: Mapping[str, np.ndarray], kind: str = "passage") -> int:
        """Put passage vectors computed elsewhere into the embedding cache; returns how many it lacked
        (an embedder that is not persisted, :meth:`embed`: into the memo, as a serial plan leaves them)."""
        if not getattr(self.embedder, "persist_vectors", True):
            return self._remember(kind, list(vectors.items()))
        model, dim = self.model_id, int(self.embedder.dim)
        hashes = list(vectors)
        have: set[str] = set()
        for lo in range(0, len(hashes), 500):
            part = hashes[lo : lo + 500]
            have.update(h for (h,) in self._q(f"SELECT content_hash FROM embeddings WHERE model_id = ? AND kind = ? "
                                              f"AND content_hash IN ({','.join('?' * len(part))})", (model, kind, *part)))
        now = time.time()
        rows = [(model, kind, h, dim, np.ascontiguousarray(vectors[h], "<f4").tobytes(), now)
                for h in hashes if h not in have]
        self._xmany(self._upsert_embedding_sql(), rows)
        return len(rows)

    def _record_error(self, blocks: Sequence[BlockRow], exc: BaseException) -> None:
        msg = f"{type(exc).__name__}: {exc}"[:500]
        with contextlib.suppress(StoreError), self.tx():
            for b in blocks:
                self._x("UPDATE blocks SET last_error = ?, is_dirty = 1 WHERE id = ?", (msg, b.id))

    def _plan(self, snap: _Snapshot, force: bool, mode: str | None = None) -> ChapterPlan:
        index = {b.id: i for i, b in enumerate(snap.blocks)}
        old: dict[ParentKey, tuple[int, int, str]] = {}
        for pk, blk, s, e, h, order, dotted, method, meta in snap.old_parents:
            covered = meta.get("blocks") or [blk]
            if covered[0] == blk and all(b in index for b in covered):
                old[parent_key([index[b] for b in covered], s, e, h, method, meta.get("segments") or ())] = (
                    pk, order, dotted)
        mode = mode or self.settings.cut_vectors
        cut = cut_vectors(mode, self.embedder, self.embed, self.settings.embedding_batch_size)
        memo = self._plan_memo
        if cut_mode(mode, self.embedder) != cut_mode(self.settings.cut_vectors, self.embedder):
            # (an over-long block's pieces depend on the cut: the other mode's are kept apart)
            memo = (memo[0], self.__dict__.setdefault("_other_cut_memo", text_memo()))
        return plan_chapter([b.content for b in snap.blocks], snap.rank, self.embed, self.run_params, old=old,
                            force=force, memo=memo, cut=cut)

    @property
    def run_params(self) -> PCParams:
        """:attr:`params` as chapters are planned with: the settings' tokenizer resolved (``embedder``:
        this store's embedder's own), its limits fitted (:meth:`PCParams.resolved`); once per store."""
        got = self.__dict__.get("_run_params")
        if got is None:
            emb = self.embedder if self.params.tokenizer == "embedder" else None
            got = self.__dict__["_run_params"] = self.params.resolved(emb)
        return got

    def _apply(self, snap: _Snapshot, plan: ChapterPlan) -> bool:
        model = self.model_id
        dim = int(self.embedder.dim)
        ids = [b.id for b in snap.blocks]
        kept, new = plan.kept, plan.new
        bubbles = [(ids[i], b) for i, b in plan.bubbles]
        with self.tx():
            now = {r[0]: int(r[1]) for r in self._q(self._lock_chapter_blocks_sql(), (snap.chapter_id,))}
            if now != {b.id: b.revision for b in snap.blocks}:
                return False  # edited meanwhile: plan again
            # re-chunked meanwhile (by another process, or the service's debouncer): a re-chunk does not
            # change revisions, so the parents themselves tell; applying on top would store the
            # chapter's chunks twice
            parents = {int(r[0]) for r in self._q(
                "SELECT pk FROM chunks WHERE chapter_id = ? AND chunk_level = 'parent'", (snap.chapter_id,))}
            if parents != {row[0] for row in snap.old_parents}:
                return False
            keep_pks = {k[0] for k in kept}
            for pk, *_ in snap.old_parents:
                if pk not in keep_pks:
                    self._x("DELETE FROM chunks WHERE pk = ?", (pk,))
            self._rename_bubble_parents(snap.chapter_id, {old: d for _, _, d, old, _ in kept if d != old})
            for pk, order, dotted, old_dotted, old_order in kept:
                if dotted != old_dotted or order != old_order:
                    self._x("UPDATE chunks SET chunk_order = ?, dotted_id = ? WHERE pk = ?", (order, dotted, pk))
                    if dotted != old_dotted:
                        self._x("UPDATE chunks SET dotted_id = CAST(? AS TEXT) || substr(dotted_id, CAST(? AS INTEGER)) "
                                "WHERE parent_pk = ?", (dotted, len(old_dotted) + 1, pk))
            ins = ("INSERT INTO chunks(project_id, document_id, chapter_id, block_id, parent_pk, chunk_level, dotted_id, "
                   "chunk_order, start_offset, end_offset, size, content, content_hash, method, meta, embedding_model, "
                   "embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, " + self._vec_marker() + ")")
            for par in new:
                sp = par.spec
                meta = json.dumps({"blocks": [ids[j] for j in sp.blocks], "segments": sp.segments})
                ppk = self._insert_pk(ins, (self.project_id, snap.document_id, snap.chapter_id, ids[par.owner], None, "parent",
                                            par.dotted, par.order, sp.start, sp.end, len(sp.text), sp.text,
                                            sha256(sp.text), sp.method, meta, model, self._vec_param(par.vec)))
                self._xmany(ins, [(self.project_id, snap.document_id, snap.chapter_id, ids[par.owner], ppk, "child",
                                   f"{par.dotted}.{k}", k, s, e, len(t), t, sha256(t), m, None, model,
                                   self._vec_param(v))
                                  for k, (s, e, t, m, v) in enumerate(par.children, 1)])
            touched = {ids[j] for par in new for j in par.spec.blocks} | {
                b.id for b in snap.blocks if b.content_hash != sha256(b.content)}
            if touched:
                marks = ",".join("?" * len(touched))
                self._x(f"DELETE FROM bubbles WHERE block_id IN ({marks})", tuple(touched))
            self._xmany("INSERT INTO bubbles(project_id, document_id, chapter_id, block_id, category, content, priority, "
                        "context, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(self.project_id, snap.document_id, snap.chapter_id, blk, b.category, b.content, b.priority,
                          json.dumps(dict(b.context), ensure_ascii=False), time.time())
                         for blk, b in bubbles if blk in touched])
            ts = time.time()
            self._xmany("UPDATE blocks SET is_dirty = 0, content_hash = ?, last_chunked_at = ?, last_error = NULL "
                        "WHERE id = ? AND revision = ?",
                        [(sha256(b.content), ts, b.id, b.revision) for b in snap.blocks])
            if new:
                self._after_vectors_written(model, dim)
            self._record_cuts(replace=False)
            self._bump()
        return True

    def _rename_bubble_parents(self, chapter_id: str, renamed: dict[str, str]) -> None:
        """Kept parents renumbered by a re-chunk: their stored bubbles' ``where`` follows them (it
        names the parent by dotted id)."""
        if not renamed:
            return
        for pk, ctx in self._q("SELECT pk, context FROM bubbles WHERE chapter_id = ?", (chapter_id,)):
            c = json.loads(ctx or "{}")
            where = str(c.get("where", ""))
            kind, _, dotted = where.rpartition(" ")
            if kind == "parent" and dotted in renamed:
                c["where"] = f"parent {renamed[dotted]}"
                self._x("UPDATE bubbles SET context = ? WHERE pk = ?", (json.dumps(c, ensure_ascii=False), pk))

    def _vec_marker(self) -> str:
        return "?"

    # ------------------------------------------------------------------ search primitives
    def _load_vectors(self, level: str, model: str, pks: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        sql = "SELECT pk, embedding FROM chunks WHERE project_id = ? AND chunk_level = ? AND embedding_model = ?"
        rows: list[tuple] = []
        if pks is None:
            rows = self._q(sql, (self.project_id, level, model))
        else:
            pl = pks.tolist()
            for lo in range(0, len(pl), 500):
                part = pl[lo : lo + 500]
                rows += self._q(sql + f" AND pk IN ({','.join('?' * len(part))})", (self.project_id, level, model, *part))
        if not rows:
            return np.zeros(0, np.int64), np.zeros((0, int(self.embedder.dim)), np.float32)
        ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        vecs = np.stack([self._vec_value(r[1]) for r in rows])
        return ids, vecs

    def vector_index(self, level: str = "child") -> VectorIndex:
        """The in-memory index of ``level`` vectors for the current model, synced incrementally with
        the store (only rows added or removed since the last call are loaded). One sync at a time: the
        service's request threads share the index, and two updating it at once corrupted it (a search
        raised, or found nothing, while another thread loaded the vectors). A process's first index is
        built outside the store's lock, one builder at a time, so other requests go on meanwhile (a health
        check waited 46 s behind a 51k-row HNSW build); an HNSW index is read from where an earlier process
        saved it, when one did (:mod:`.saved_index`), rather than built again."""
        model = self.model_id
        with self._lock:
            cache = self._vindex.setdefault((level, model), _IndexCache())
            if cache.index is not None:
                return self._synced_index(cache, level, model)
        with cache.building:
            with self._lock:
                if cache.index is not None:  # (another thread built it meanwhile)
                    return self._synced_index(cache, level, model)
                gen = self.generation()
                ids, vecs = self._load_vectors(level, model, None)
            index = self._first_index(level, model, ids, vecs)
            with self._lock:
                cache.index, cache.generation = index, gen
                return self._synced_index(cache, level, model)

    def _synced_index(self, cache: _IndexCache, level: str, model: str) -> VectorIndex:
        """``cache``'s index brought level with the store (under the store's lock)."""
        gen = self.generation()
        if cache.generation == gen:
            return cache.index
        pks = np.asarray([r[0] for r in self._q(
            "SELECT pk FROM chunks WHERE project_id = ? AND chunk_level = ? AND embedding_model = ?",
            (self.project_id, level, model))], np.int64)
        cur = cache.index.ids()
        add = np.setdiff1d(pks, cur)
        rem = np.setdiff1d(cur, pks)
        ids, vecs = self._load_vectors(level, model, add) if add.size else (add, None)
        cache.index.update(ids, vecs if vecs is not None else np.zeros((0, cache.index.dim), np.float32), rem)
        cache.generation = gen
        return cache.index

    def _first_index(self, level: str, model: str, ids: np.ndarray, vecs: np.ndarray) -> VectorIndex:
        """A new index of the rows ``ids`` (the kind the settings ask for at this size), an HNSW one read
        from the cache where an earlier process saved it, and saved there when it was built or read far
        behind (no lock held: CPU and a file, no SQL)."""
        s = self.settings
        kind = {"exact": "exact", "hnsw": "hnsw"}.get(s.vector_index, "auto")
        index = make_index(int(self.embedder.dim), ids.size, threshold=s.hnsw_threshold, kind=kind,
                           m=s.hnsw_m, ef_construction=s.hnsw_ef_construction, ef_search=s.hnsw_ef_search)
        folder = self._saved_index_folder(level, model, index) if isinstance(index, HnswIndex) else None
        if folder is not None:
            got = saved_index.load_synced(folder, index, ids, vecs)
            if got is not None:
                if got[1]:
                    saved_index.save(got[0], folder, ids, vecs)
                return got[0]
        index.update(ids, vecs, np.zeros(0, np.int64))
        if folder is not None:
            saved_index.save(index, folder, ids, vecs)
        return index

    def _saved_index_folder(self, level: str, model: str, index: HnswIndex) -> Path | None:
        """Where this store's HNSW index of ``level`` rows is saved between processes; None: not saved
        (a server's database keeps its own index: pgvector)."""
        return None

    def vector_search(self, query_vec: np.ndarray, k: int, level: str = "child") -> list[tuple[int, float]]:
        """(chunk pk, cosine) of the ``k`` nearest ``level`` chunks embedded with the current model."""
        self.vector_index(level)  # (a first build, outside the lock)
        with self._lock:  # (an update swaps the index's ids and vectors one after the other)
            ids, sims = self.vector_index(level).search(query_vec, k)
        return list(zip(ids.tolist(), sims.astype(float).tolist(), strict=True))

    def bm25_index(self, level: str = "child") -> BM25Index:
        cache = self._bm25.setdefault(level, _IndexCache())
        gen = self.generation()
        if cache.generation == gen and cache.index is not None:
            return cache.index
        if cache.index is None:
            cache.index = BM25Index()
        pks = np.asarray([r[0] for r in self._q(
            "SELECT pk FROM chunks WHERE project_id = ? AND chunk_level = ?", (self.project_id, level))], np.int64)
        cur = cache.index.ids()
        for pk in np.setdiff1d(cur, pks).tolist():
            cache.index.remove(pk)
        add = np.setdiff1d(pks, cur).tolist()
        for lo in range(0, len(add), 500):
            part = add[lo : lo + 500]
            cache.index.add_many((int(a), b) for a, b in self._q(
                f"SELECT pk, content FROM chunks WHERE pk IN ({','.join('?' * len(part))})", part))
        cache.generation = gen
        return cache.index

    def text_search(self, query: str, k: int, level: str = "child") -> list[tuple[int, float]]:
        ids, sc = self.bm25_index(level).search(query, k)
        return list(zip(ids.tolist(), sc.astype(float).tolist(), strict=True))

"""PostgreSQL 16 + pgvector backend (psycopg 3, optional extra ``[postgres]``).

Vectors live in a ``vector`` column (dimension-free, so several models can share the table); search
uses a partial HNSW expression index per (model, dimension), created on first write:
``USING hnsw ((embedding::vector(D)) vector_cosine_ops) WHERE embedding_model = '...'``.
"""

from __future__ import annotations

import contextlib
import hashlib
import struct
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import ModelUnavailable, first_line
from .base import Store, StoreError, StoreUnavailable, redact_url, register_backend


def _psycopg() -> Any:
    """psycopg 3, imported on first use (a SQLite user never pays for it: the store package imports
    this module to register the backend); missing, a one-line ModelUnavailable."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - exercised on installs without the extra
        raise ModelUnavailable("PostgreSQL needs psycopg 3: pip install 'logichunk[postgres]'") from None
    return psycopg


def _register_vector(conn: Any) -> int:
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StoreError("the pgvector extension is not available on this PostgreSQL server")
    oid = info.oid

    class VecBinaryDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: Any) -> bytes:
            v = np.asarray(obj, dtype=">f4").reshape(-1)
            return struct.pack(">HH", v.size, 0) + v.tobytes()

    VecBinaryDumper.oid = oid

    class VecBinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> np.ndarray:
            dim = struct.unpack_from(">H", data, 0)[0]
            return np.frombuffer(bytes(data), dtype=">f4", count=dim, offset=4).astype(np.float32)

    class VecTextLoader(Loader):
        format = Format.TEXT

        def load(self, data: Any) -> np.ndarray:
            s = bytes(data).decode()
            return np.array(s.strip("[]").split(","), dtype=np.float32) if len(s) > 2 else np.zeros(0, np.float32)

    conn.adapters.register_dumper(np.ndarray, VecBinaryDumper)
    conn.adapters.register_loader(oid, VecBinaryLoader)
    conn.adapters.register_loader(oid, VecTextLoader)
    return oid


@register_backend
class PostgresStore(Store):
    dialect = "postgres"
    placeholder = "%s"

    def _connect(self) -> None:
        psycopg = _psycopg()
        self._hnsw_done: set[tuple[str, int]] = set()
        try:
            self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            self._conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            _register_vector(self._conn)
        except psycopg.Error as e:
            raise StoreUnavailable(f"cannot connect to PostgreSQL at {redact_url(self.url)}: {first_line(e)}") from None

    def _check_conn(self) -> None:
        if self._conn.closed and not getattr(self, "_in_tx", False):
            psycopg = _psycopg()
            try:
                self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
                _register_vector(self._conn)
            except psycopg.Error as e:
                raise StoreUnavailable(f"PostgreSQL at {redact_url(self.url)} is unreachable: {first_line(e)}") from None

    def _raw_execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        self._check_conn()
        return self._conn.execute(sql, params or None)

    def _raw_executemany(self, sql: str, seq: Sequence[Sequence[Any]]) -> None:
        self._check_conn()
        with self._conn.cursor() as cur:
            cur.executemany(sql, seq)

    def _insert_pk(self, sql: str, params: Sequence[Any]) -> int:
        with self._lock, self._guard():
            return int(self._raw_execute(self._sql(sql) + " RETURNING pk", tuple(params)).fetchone()[0])

    def _ensure_connected(self) -> None:
        self._check_conn()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._conn.transaction():
            yield

    def _lock_chapter_blocks_sql(self) -> str:
        return "SELECT id, revision FROM blocks WHERE chapter_id = ? FOR UPDATE"

    def _lock_block_sql(self) -> str:
        return "SELECT revision FROM blocks WHERE id = ? FOR UPDATE"

    def _lock_project_sql(self) -> str:
        return "SELECT id FROM projects WHERE id = ? FOR UPDATE"

    def _vec_param(self, v: np.ndarray) -> Any:
        return np.asarray(v, dtype=np.float32)

    def _vec_value(self, x: Any) -> np.ndarray:
        return np.asarray(x, dtype=np.float32)

    def _translate_error(self, exc: BaseException) -> StoreError | None:
        psycopg = sys.modules.get("psycopg")  # loaded by _connect; its errors are what is translated
        if psycopg is not None and isinstance(exc, psycopg.OperationalError):
            return StoreUnavailable(f"PostgreSQL at {redact_url(self.url)} failed or went away: {first_line(exc)}")
        if psycopg is not None and isinstance(exc, psycopg.Error):
            return StoreError(f"PostgreSQL error: {first_line(exc)}")
        return None

    def _index_name(self, model: str, dim: int) -> str:
        return f"chunks_hnsw_{hashlib.sha1(model.encode()).hexdigest()[:12]}_{dim}"

    def _after_vectors_written(self, model: str, dim: int) -> None:
        """pgvector's HNSW index of this model's child vectors, made once they are ``hnsw_threshold`` rows
        (``vector_index = "auto"``; ``"pgvector"``: at once). Below that an exact scan answers in tens of
        milliseconds, and every row written into an HNSW index pays its upkeep: an ingest of 100 files ran
        27.6 s with the index, 4.3 s without. ``exact`` and ``hnsw`` search in process: no index here."""
        if (model, dim) in self._hnsw_done:
            return
        mode = self.settings.vector_index
        if mode in ("exact", "hnsw"):
            return
        if mode == "auto" and self._q("SELECT COUNT(*) FROM chunks WHERE embedding_model = ? AND chunk_level = 'child'",
                                      (model,))[0][0] < self.settings.hnsw_threshold:
            return
        from psycopg import sql as psql

        stmt = psql.SQL(
            "CREATE INDEX IF NOT EXISTS {name} ON chunks USING hnsw ((embedding::vector({dim})) vector_cosine_ops) "
            "WITH (m = {m}, ef_construction = {efc}) WHERE embedding_model = {model} AND chunk_level = 'child'"
        ).format(name=psql.Identifier(self._index_name(model, dim)), dim=psql.Literal(int(dim)),
                 m=psql.Literal(int(self.settings.hnsw_m)), efc=psql.Literal(int(self.settings.hnsw_ef_construction)),
                 model=psql.Literal(model))
        with self._lock, self._guard():
            self._conn.execute(stmt)
            # fresh statistics, or the planner may sort a btree scan instead of using the HNSW index
            self._conn.execute("ANALYZE chunks")
        self._hnsw_done.add((model, dim))

    def vector_search(self, query_vec: np.ndarray, k: int, level: str = "child", *,
                      exact: bool | None = None) -> list[tuple[int, float]]:
        mode = self.settings.vector_index
        if mode in ("exact", "hnsw") and exact is None:
            return super().vector_search(query_vec, k, level)
        if k <= 0:
            return []
        dim = int(self.embedder.dim)
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        if q.size != dim:
            raise StoreError(f"query vector has dimension {q.size}, the model has {dim}")
        model = self.model_id
        # exact and approximate searches must not share a statement: psycopg prepares a statement
        # after a few runs, and a prepared plan keeps the access path (index or scan) it was planned
        # with, whatever enable_indexscan says later
        from psycopg import sql as psql

        stmt = psql.SQL(
            "SELECT /* {how} */ pk, 1 - (embedding::vector({dim}) <=> %s::vector({dim})) FROM chunks "
            "WHERE embedding_model = {model} AND chunk_level = {level} AND project_id = %s "
            "ORDER BY embedding::vector({dim}) <=> %s::vector({dim}){then} LIMIT {k}"
        ).format(how=psql.SQL("exact" if exact else "hnsw"), dim=psql.Literal(dim), model=psql.Literal(model),
                 level=psql.Literal(level), k=psql.Literal(int(k)),
                 # equal distances by key, as the in-process index takes them (the HNSW scan keeps its own
                 # order: a second key would make it sort every row; its k are put in that order below)
                 then=psql.SQL(", pk" if exact else ""))
        with self.tx():
            if exact:
                self._conn.execute("SET LOCAL enable_indexscan = off")
            else:
                self._conn.execute(psql.SQL("SET LOCAL hnsw.ef_search = {}").format(
                    psql.Literal(max(int(self.settings.hnsw_ef_search), int(k)))))
            rows = list(self._conn.execute(stmt, (q, self.project_id, q)))
        return sorted(((int(a), float(b)) for a, b in rows), key=lambda r: (-r[1], r[0]))

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                with contextlib.suppress(Exception):
                    self._conn.close()

"""SQLite backend: the standard library's sqlite3, WAL journal, one file, no server."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..config import Settings
from ..index.vectors import HnswIndex
from . import saved_index
from .base import Store, StoreError, StoreUnavailable, register_backend

#: seconds a statement waits for another process's write lock before it fails
BUSY_WAIT = 30.0

T = TypeVar("T")


def _when_unlocked(step: Callable[[], T]) -> T:
    """``step`` retried while the database is locked, for up to :data:`BUSY_WAIT` seconds. Turning a new
    file to WAL takes the lock with no wait of SQLite's own: two processes opening one new database (two
    ingests started together) failed at once with "database is locked"."""
    deadline = time.monotonic() + BUSY_WAIT
    pause = 0.01
    while True:
        try:
            return step()
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def _writable(path: str) -> bool:
    """Whether this process may write the database file and create its journal files beside it."""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK)


@register_backend
class SQLiteStore(Store):
    dialect = "sqlite"
    placeholder = "?"

    @classmethod
    def open_url(cls, url: str, *, settings: Settings, embedder: Any = None, project: str | None = None,
                 create: bool = True) -> Store:
        """A file path (``sqlite:///`` or ``sqlite://`` prefixes dropped) or ``:memory:``;
        ``create=False``: the file must exist."""
        path = url.removeprefix("sqlite:///").removeprefix("sqlite://")
        if not create and path != ":memory:" and not os.path.isfile(path):
            raise StoreError(f"no database at {path} (nothing ingested there yet? check --db)")
        return cls(path, settings=settings, embedder=embedder, project=project, create=create)

    def _connect(self) -> None:
        path = self.url
        if path != ":memory:":
            parent = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(parent):
                raise StoreError(f"cannot open database {path}: folder {parent} does not exist")
            if os.path.isdir(path):
                raise StoreError(f"cannot open database {path}: it is a folder")
        if path != ":memory:" and self._read_only_ok and not _writable(path):
            self._connect_read_only(path)
            return
        try:
            self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_WAIT)
            if path != ":memory:":
                mode = _when_unlocked(lambda: self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0])
                if str(mode).lower() != "wal":
                    raise StoreError(f"cannot open database {path}: WAL journal not available ({mode})")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_WAIT * 1000)}")
        except sqlite3.DatabaseError as e:
            why = " (the file or its folder is not writable here)" if path != ":memory:" and not _writable(path) else ""
            raise StoreError(f"cannot open database {path}: {e}{why}") from None
        self._abspath = os.path.abspath(path)  # a later chdir must not look like a deleted file
        self._file = self._identity()

    def _connect_read_only(self, path: str) -> None:
        """Open a database this process may not write, for reading. A WAL database needs its
        ``-shm`` index, which a read-only folder cannot hold: with no ``-wal`` file left (the last
        writer closed cleanly, so the main file is complete) it is read as immutable."""
        abspath = os.path.abspath(path)
        uri = "file:" + urllib.parse.quote(abspath) + "?mode=ro"
        if not os.path.exists(abspath + "-wal") and not os.access(os.path.dirname(abspath), os.W_OK):
            uri += "&immutable=1"
        try:
            self._conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=BUSY_WAIT)
            self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_WAIT * 1000)}")
            self._conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as e:
            raise StoreError(f"cannot open database {path} (read-only here): {e}") from None
        self.read_only = True
        self._abspath = abspath
        self._file = self._identity()

    def _identity(self) -> tuple[int, int] | None:
        """(device, inode) of the database file, None in memory or when the path is gone."""
        if self.url == ":memory:":
            return None
        try:
            st = os.stat(self._abspath)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def _check_file(self) -> None:
        """An open SQLite connection keeps working on a file deleted (or replaced) under it, and
        everything written then is lost when the process ends: refuse instead."""
        if self.url != ":memory:" and self._identity() != self._file:
            raise StoreUnavailable(f"database {self.url} was deleted or replaced while open; nothing is written to it "
                             "any more (restore the file, or restart on the new one)")

    def _ensure_connected(self) -> None:
        self._check_file()

    def _saved_index_folder(self, level: str, model: str, index: HnswIndex) -> Path | None:
        if self.url == ":memory:":
            return None
        return saved_index.index_folder(self._abspath, self.project_id, model, level, index)

    def _raw_execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if not getattr(self, "_in_tx", False):  # statements of a transaction were checked at its start
            self._check_file()
        return self._conn.execute(sql, params)

    def _raw_executemany(self, sql: str, seq: Sequence[Sequence[Any]]) -> None:
        self._conn.executemany(sql, seq)

    def _insert_pk(self, sql: str, params: Sequence[Any]) -> int:
        with self._lock, self._guard():
            return int(self._conn.execute(self._sql(sql), tuple(params)).lastrowid)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN" if self.read_only else "BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            raise
        else:
            self._conn.execute("COMMIT")

    def _translate_error(self, exc: BaseException) -> StoreError | None:
        if isinstance(exc, sqlite3.Error):
            msg = str(exc)
            if self.read_only and "readonly" in msg:
                return StoreError(f"database {self.url} is read-only here (its file or folder is not writable): "
                                  "this needs to write to it")
            if "readonly" in msg or "unable to open" in msg:
                return StoreUnavailable(f"cannot write database {self.url}: {msg}")
            if "locked" in msg:
                return StoreError(f"database {self.url} is locked: another process has been writing to it for "
                                  f"{BUSY_WAIT:.0f} s (an ingest, a re-chunk); try again when it is done")
            return StoreError(f"database error ({self.url}): {msg}")
        return None

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()

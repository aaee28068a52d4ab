"""A real PostgreSQL 16 + pgvector for the tests, started once per session by the ``pgserver``
PyPI package in a temporary folder. Tests that need it skip, saying why, when it cannot start."""

from __future__ import annotations

import pytest


def start_pg(folder):
    """(server, uri of a fresh database) or pytest.skip."""
    try:
        import pgserver
        import psycopg
    except ImportError:
        pytest.skip("PostgreSQL tests need pgserver and psycopg: pip install -e '.[postgres]'")
    try:
        srv = pgserver.get_server(str(folder), cleanup_mode="stop")
        uri = srv.get_uri()
        with psycopg.connect(uri, autocommit=True) as c:
            c.execute("CREATE DATABASE logichunk_test")
    except Exception as e:  # noqa: BLE001 - any failure to start means: skip, with the reason
        pytest.skip(f"pgserver could not start PostgreSQL: {type(e).__name__}: {e}")
    return srv, uri.replace("/postgres?", "/logichunk_test?")


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory):
    import warnings

    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    srv, uri = start_pg(tmp_path_factory.mktemp("pg"))
    yield uri
    try:
        srv.cleanup()
    except Exception:  # noqa: BLE001
        pass


def fresh_pg_database(pg_url: str) -> str:
    """A database of its own on the test server: a schema downgraded there (an older store) is no other test's."""
    import psycopg

    name = f"logichunk_old_{next(_counter)}"
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {name}")
        c.execute(f"CREATE DATABASE {name}")
    return pg_url.replace("/logichunk_test?", f"/{name}?")


# ----------------------------------------------------------------------------- shared test helpers

import itertools  # noqa: E402
import threading  # noqa: E402

import numpy as np  # noqa: E402

_counter = itertools.count()


class CountingEmbedder:
    """The model-free hash embedder, counting every text it is asked to embed; ``fail`` makes it raise."""

    def __init__(self, dim: int = 64) -> None:
        from logichunk.models import HashEmbedder

        self.inner = HashEmbedder(dim)
        self.model_id = self.inner.model_id
        self.dim = dim
        self.texts: list[str] = []
        self.calls = 0
        self.fail = False
        self._lock = threading.Lock()

    def embed(self, texts, *, kind="passage"):
        if self.fail:
            raise RuntimeError("embedding service down")
        with self._lock:
            self.calls += 1
            if kind == "passage":
                self.texts.extend(texts)
        return self.inner.embed(texts, kind=kind)


class TableEmbedder:
    """Vectors from a lookup (text -> vector); unknown texts get a seeded random unit vector."""

    model_id = "table-test"

    def __init__(self, dim: int, table: dict[str, np.ndarray] | None = None) -> None:
        self.dim = dim
        self.table = table or {}

    def embed(self, texts, *, kind="passage"):
        import hashlib

        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            v = self.table.get(t)
            if v is None:
                seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
                v = np.random.default_rng(seed).standard_normal(self.dim)
            out[i] = v / np.linalg.norm(v)
        return out


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request):
    return request.param


@pytest.fixture
def make_store(backend, request, tmp_path):
    """``make_store(settings=None, embedder=None)`` -> a fresh store (new file / new project)."""
    from logichunk.store import Store

    url = request.getfixturevalue("pg_url") if backend == "postgres" else None
    opened = []

    def make(settings=None, embedder=None, project=None):
        target = url or str(tmp_path / f"s{next(_counter)}.db")
        s = Store.open(target, settings=settings, embedder=embedder or CountingEmbedder(),
                       project=project or f"p{next(_counter)}-{id(opened)}")
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()

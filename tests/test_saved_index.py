"""An SQLite store's HNSW index saved between processes (store/saved_index.py): a later process reads it
and adds only what changed, never a wrong answer (a vector changed under a kept pk is re-added), and a
first build runs outside the store's lock. Every new process rebuilt the index before: 47 s per CLI
search on a 51k-chunk store."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from logichunk.config import Settings
from logichunk.index import vectors as V
from logichunk.store import Store
from logichunk.store.ingest import ingest_text

pytestmark = pytest.mark.skipif(not V.hnsw_available(), reason="hnswlib not installed")

TEXTS = {f"doc{i}": " ".join(f"Paragraph {j} of document {i} talks about topic {i * 7 + j}. It has a second sentence."
                              for j in range(12)) for i in range(6)}


def _settings() -> Settings:
    return Settings(embedder="hash:64", vector_index="hnsw", max_parent_size=300, min_parent_size=40,
                    child_min_size=30, child_target_size=80, child_max_size=160)


def _open(path) -> Store:
    return Store.open(str(path), settings=_settings())


def _rows_added(monkeypatch) -> list[int]:
    added: list[int] = []
    real = V.HnswIndex.update

    def update(self, add_ids, add_vecs, remove_ids):
        added.append(int(np.asarray(add_ids).size))
        return real(self, add_ids, add_vecs, remove_ids)

    monkeypatch.setattr(V.HnswIndex, "update", update)
    return added


def _exact_top(store: Store, query: str, k: int = 5) -> list[int]:
    ids, vecs = store._load_vectors("child", store.model_id, None)
    ex = V.ExactIndex(vecs.shape[1])
    ex.update(ids, vecs, np.zeros(0, np.int64))
    return ex.search(store.embed([query], kind="query")[0], k)[0].tolist()


def test_a_later_process_reads_the_saved_index_and_adds_only_what_changed(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "kb.db"
    first = _open(db)
    for title, text in list(TEXTS.items())[:5]:
        ingest_text(first, title, text)
    first.rechunk_dirty()
    n = len(first.vector_index("child"))
    assert n > 20 and any((tmp_path / "cache" / "hnsw").iterdir())  # built once, saved
    first.close()
    added = _rows_added(monkeypatch)
    again = _open(db)  # (a new process: a new store object, nothing in memory)
    assert len(again.vector_index("child")) == n and sum(added) == 0  # read, not built
    # another process adds a document: the next one adds its rows only
    title, text = list(TEXTS.items())[5]
    ingest_text(again, title, text)
    again.rechunk_dirty()
    m = again._q("SELECT COUNT(*) FROM chunks WHERE chunk_level = 'child'")[0][0]
    again.close()
    added.clear()
    third = _open(db)
    assert len(third.vector_index("child")) == m and sum(added) == m - n
    query = "topic 38 of document 5"
    got = [pk for pk, _ in third.vector_search(third.embed([query], kind="query")[0], 5)]
    assert got == _exact_top(third, query)
    third.close()


def test_a_vector_changed_under_a_kept_pk_is_read_again(tmp_path, monkeypatch):
    """A restored or replaced database at the same path may hold other vectors under the same pks: the
    saved index is checked row by row against the store's, and what differs is added again."""
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "kb.db"
    s = _open(db)
    for title, text in TEXTS.items():
        ingest_text(s, title, text)
    s.rechunk_dirty()
    s.vector_index("child")
    pk = s._q("SELECT pk FROM chunks WHERE chunk_level = 'child' ORDER BY pk LIMIT 1")[0][0]
    other = s.embed(["an entirely different passage about violins and cellos"], kind="passage")[0]
    with s.tx():
        s._x("UPDATE chunks SET embedding = ? WHERE pk = ?", (s._vec_param(np.asarray(other, np.float32)), pk))
    s.close()
    added = _rows_added(monkeypatch)
    again = _open(db)
    q = again.embed(["violins and cellos"], kind="query")[0]
    assert again.vector_search(q, 1)[0][0] == pk and sum(added) == 1
    again.close()


def test_an_unreadable_saved_index_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "kb.db"
    s = _open(db)
    ingest_text(s, "a", TEXTS["doc0"])
    s.rechunk_dirty()
    n = len(s.vector_index("child"))
    s.close()
    for f in (tmp_path / "cache" / "hnsw").rglob("index.bin"):
        f.write_bytes(b"not an index")
    added = _rows_added(monkeypatch)
    again = _open(db)
    assert len(again.vector_index("child")) == n and sum(added) == n
    again.close()


def test_a_first_build_leaves_the_store_free_for_other_requests(tmp_path, monkeypatch):
    """The build held the store's lock: a service's health check (it reads the generation) waited for it."""
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path / "cache"))
    s = _open(tmp_path / "kb.db")
    ingest_text(s, "a", TEXTS["doc0"])
    s.rechunk_dirty()
    s.close()
    s = _open(tmp_path / "kb.db")
    started, release = threading.Event(), threading.Event()
    real = Store._first_index

    def slow(self, *a, **k):
        started.set()
        assert release.wait(10)
        return real(self, *a, **k)

    monkeypatch.setattr(Store, "_first_index", slow)
    t = threading.Thread(target=s.vector_index, args=("child",))
    t.start()
    assert started.wait(10)
    got: list[int] = []
    reader = threading.Thread(target=lambda: got.append(s.generation()))
    reader.start()
    reader.join(5)
    release.set()
    t.join(10)
    assert got and not reader.is_alive()  # answered while the index was being built
    s.close()

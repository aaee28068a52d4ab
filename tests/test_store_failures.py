"""Debounced re-chunking, crash safety (SIGKILL inside the write transaction), PostgreSQL going away."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from logichunk.config import Settings
from logichunk.retrieve import retrieve
from logichunk.store import Debouncer, Store, StoreError
from pg_fixture import CountingEmbedder, backend, make_store, pg_url, start_pg  # noqa: F401

SMALL = Settings(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50,
                 child_max_size=80, embedder="hash:64")


def _doc(store, chapters=2, blocks=3):
    return store.add_document("d", [(f"c{c}", [f"Chapter {c} block {b} talks about tea and rain. "
                                               f"Then about the market {b}.\n\n" for b in range(blocks)])
                                    for c in range(chapters)])


def test_debounce_many_edits_one_rechunk(make_store):
    store = make_store(settings=SMALL)
    _doc(store)
    store.rechunk_dirty()
    bl = store.blocks()
    a, b = bl[0], bl[-1]  # different chapters
    with Debouncer(store, delay_ms=300) as deb:
        for i in range(10):
            deb.edit(a.id, f"Edit number {i} of block a about snow.\n\n")
            time.sleep(0.01)
        deb.edit(b.id, "Block b changed about the sword.\n\n")
        assert store.get_block(a.id).is_dirty  # writes are immediate, re-chunks later
        assert deb.wait_idle(10)
        ran = [blk for blk, _ in deb.results]
    assert sorted(ran) == sorted([a.id, b.id]), ran  # one re-chunk each; b did not cancel a
    assert deb.runs == 2 and not deb.errors
    assert not store.get_block(a.id).is_dirty and not store.get_block(b.id).is_dirty
    assert any("Edit number 9" in c.content for c in store.chunks(level="child"))


def test_debounce_retries_failed_rechunk(tmp_path):
    emb = CountingEmbedder()
    store = Store.open(str(tmp_path / "d.db"), settings=SMALL, embedder=emb)
    _doc(store, 1, 2)
    store.rechunk_dirty()
    blk = store.blocks()[0]
    emb.fail = True
    deb = Debouncer(store, delay_ms=100, max_retries=5)
    deb.edit(blk.id, "A new text about rain.\n\n")
    deadline = time.time() + 5
    while not deb.errors and time.time() < deadline:
        time.sleep(0.02)
    assert deb.errors and store.get_block(blk.id).is_dirty
    emb.fail = False
    assert deb.wait_idle(5)
    deb.close()
    assert not store.get_block(blk.id).is_dirty
    store.close()


def test_debounce_outlasts_a_database_outage(tmp_path):
    """While the database is unavailable the re-chunk keeps being retried (with a growing wait) past
    max_retries, so an edit made just before an outage is chunked once the database is back; another
    error gives up after max_retries."""
    from logichunk.store import StoreUnavailable

    store = Store.open(str(tmp_path / "d.db"), settings=SMALL, embedder=CountingEmbedder())
    _doc(store, 1, 2)
    store.rechunk_dirty()
    blk = store.blocks()[0]
    real = store.rechunk_block
    down = {"left": 6}

    def flaky(block_id, **kw):
        if down["left"]:
            down["left"] -= 1
            raise StoreUnavailable("database gone for a moment")
        return real(block_id, **kw)

    store.rechunk_block = flaky
    deb = Debouncer(store, delay_ms=5, max_retries=2, max_backoff=0.05)
    deb.edit(blk.id, "A new text about rain.\n\n")
    assert deb.wait_idle(10)
    assert len(deb.errors) == 6 and not store.get_block(blk.id).is_dirty  # 6 failures > max_retries 2
    down["left"] = 1_000
    store.rechunk_block = lambda block_id, **kw: (_ for _ in ()).throw(RuntimeError("embedder broken"))
    deb.edit(blk.id, "Another text about snow.\n\n")
    assert deb.wait_idle(10)
    assert len(deb.errors) == 6 + 3 and store.get_block(blk.id).is_dirty  # first try + 2 retries, then stop
    deb.close()
    store.close()


CRASH = textwrap.dedent("""
    import sys, os, time
    sys.path.insert(0, {tests!r})
    from pg_fixture import CountingEmbedder
    from logichunk.store import Store
    from logichunk.config import Settings
    s = Settings(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50, child_max_size=80)
    store = Store.open({url!r}, settings=s, embedder=CountingEmbedder(), project={project!r})
    block = {block!r}
    store.edit_block(block, "Replaced text about the sword. " * 12 + "\\n\\n")
    real = store._insert_pk
    def slow(*a, **k):
        pk = real(*a, **k)
        open({flag!r}, "w").close()   # inside the transaction, rows half written
        time.sleep(60)
        return pk
    store._insert_pk = slow
    store.rechunk_block(block)
""")


def test_crash_mid_rechunk_leaves_old_or_new(make_store, tmp_path):
    store = make_store(settings=SMALL)
    _doc(store, 3, 3)
    store.rechunk_dirty()
    target = store.blocks()[4]
    before = {c.pk: c for c in store.chunks()}
    pname = store._q("SELECT name FROM projects WHERE id = ?", (store.project_id,))[0][0]
    url = store.url
    store.close()
    flag = tmp_path / "in-tx"
    code = CRASH.format(tests=os.path.dirname(__file__), url=url, project=pname, block=target.id, flag=str(flag))
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 30
        while not flag.exists():
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.time() < deadline, "the child never reached the transaction"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.2)  # PostgreSQL notices the dead client and rolls back
    again = Store.open(url, settings=SMALL, embedder=CountingEmbedder(), project=pname)
    try:
        blk = again.get_block(target.id)
        assert blk.content.startswith("Replaced text")  # the edit itself was committed
        assert blk.is_dirty  # ... the re-chunk was not: dirty, old chunks intact
        after = {c.pk: c for c in again.chunks()}
        assert after == before
        r = again.rechunk_block(target.id)
        assert r.status == "rechunked" and not again.get_block(target.id).is_dirty
        others = {pk: c for pk, c in before.items() if c.chapter_id != target.chapter_id}
        now = {c.pk: c for c in again.chunks()}
        assert all(now[pk] == c for pk, c in others.items())
    finally:
        again.close()


def test_postgres_connection_killed_mid_session(pg_url):
    import psycopg

    store = Store.open(pg_url, settings=SMALL, embedder=CountingEmbedder(), project="killed")
    try:
        _doc(store, 1, 2)
        store.rechunk_dirty()
        pid = store._conn.info.backend_pid
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(StoreError, match="PostgreSQL"):
            retrieve(store, "tea and rain", mode="basic")
        # the next call reconnects
        assert len(retrieve(store, "tea and rain", mode="basic")) > 0
    finally:
        store.close()


def test_postgres_server_stopped(tmp_path):
    srv, url = start_pg(tmp_path / "pg")
    store = Store.open(url, settings=SMALL, embedder=CountingEmbedder())
    try:
        _doc(store, 1, 2)
        store.rechunk_dirty()
        srv.cleanup()  # stops the server
        with pytest.raises(StoreError, match="PostgreSQL"):
            retrieve(store, "tea", mode="parent")
        with pytest.raises(StoreError, match="PostgreSQL"):
            store.rechunk_dirty()
    finally:
        store.close()
    with pytest.raises(StoreError, match="cannot connect"):
        Store.open(url, embedder=CountingEmbedder())

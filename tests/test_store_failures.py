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



def test_a_block_whose_document_was_deleted_while_it_waited_is_not_retried(make_store):
    """A document deleted while an edited block of it waited for its re-chunk: the re-chunk failed ("unknown block
    id") and was retried with backoff, three times, a warning each, and a service's exit waited for the retries."""
    from logichunk.store import UnknownIdError

    store = make_store(settings=SMALL)
    doc = _doc(store, chapters=1, blocks=2)
    store.rechunk_dirty()
    block = store.blocks()[0]
    with Debouncer(store, delay_ms=50) as deb:
        deb.edit(block.id, "An edit about snow.\n\n")
        store.delete_document(doc)
        assert deb.flush(10)
        assert deb.runs == 1 and [type(e) for _, e in deb.errors] == [UnknownIdError]
    with pytest.raises(UnknownIdError, match=f"^unknown block id '{block.id}'$"):
        store.get_block(block.id)
    with pytest.raises(StoreError):  # (still a StoreError, as callers catch it)
        store.delete_document(doc)

def test_a_block_typed_into_without_a_pause_is_chunked_by_the_maximum_wait():
    """A writer streaming text into one paragraph with gaps under the delay: the block was re-chunked only once they
    stopped (never searchable while typing); now once its first pending edit is max_wait old, and again after."""

    class Counting:
        settings = Settings()

        def __init__(self) -> None:
            self.runs: list[float] = []

        def rechunk_block(self, block: str) -> str:
            self.runs.append(time.monotonic())
            return block

    store = Counting()
    deb = Debouncer(store, delay_ms=300, max_wait_ms=600)  # type: ignore[arg-type]
    try:
        start = time.monotonic()
        while time.monotonic() - start < 2.0:  # an edit every 20 ms (under the delay) for two seconds
            deb.touch("para")
            time.sleep(0.02)
        typing_ended = time.monotonic()
        assert deb.wait_idle(10)
    finally:
        deb.close(flush=False)
    during = [t for t in store.runs if t < typing_ended]
    assert len(during) >= 2, store.runs  # ~every 0.6 s while typing (base: none)
    assert during[0] - start < 1.5  # the first no later than the maximum wait, with room for a loaded machine
    assert len(store.runs) == len(during) + 1  # and once more for the edits after the last run



def test_a_debounce_delay_that_is_no_number_of_milliseconds_is_one_line():
    """``Debouncer(store, delay_ms="3000")`` (a form's or an env var's text) was a TypeError from a division, and a
    negative or NaN delay was taken as given."""
    from logichunk.errors import InputError

    class Quiet:
        settings = Settings()

    for kw in ({"delay_ms": "3000"}, {"delay_ms": -1}, {"delay_ms": float("nan")}, {"delay_ms": True},
               {"max_wait_ms": "600"}, {"max_wait_ms": -5}):
        name = next(iter(kw))
        with pytest.raises(InputError, match=f"^{name} must be a number of milliseconds, 0 or more, got "):
            Debouncer(Quiet(), **kw)  # type: ignore[arg-type]
    deb = Debouncer(Quiet(), delay_ms=0, max_wait_ms=250.5)  # type: ignore[arg-type]
    try:
        assert (deb.delay, deb.max_wait) == (0.0, 0.2505)
    finally:
        deb.close(flush=False)

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


def _read_only_db(folder):
    from pathlib import Path

    from logichunk.models import HashEmbedder
    from logichunk.store.ingest import ingest_text

    emb = HashEmbedder(dim=64)
    db = str(folder / "k.db")
    from logichunk.index.graph_store import sync_graph

    with Store.open(db, embedder=emb) as s:
        ingest_text(s, "桃花源记", (Path(__file__).parent.parent / "examples" / "zh_public_domain.txt").read_text("utf-8"))
        s.rechunk_dirty()
        sync_graph(s)
    return db, emb


def test_a_database_this_process_may_not_write_opens_for_reading(tmp_path, monkeypatch):
    import hashlib

    import logichunk.store.sqlite as sq

    db, emb = _read_only_db(tmp_path)
    before = hashlib.sha256(open(db, "rb").read()).hexdigest()
    monkeypatch.setattr(sq, "_writable", lambda path: False)
    with Store.open(db, embedder=emb, create=False) as s:
        assert s.read_only
        hits = retrieve(s, "武陵人捕鱼", mode="parent", top_k=1)
        assert len(hits) == 1
        chapter = hits[0].chunk.meta["chapter_id"] if "chapter_id" in hits[0].chunk.meta else None
        text = s.chapter_text(chapter) if chapter else ""
        assert "武陵人" in text[hits[0].chunk.span.start:hits[0].chunk.span.end]
        block = s.blocks(s.chapters(s.documents()[0][0])[0][0])[0]
        assert len(retrieve(s, "武陵人捕鱼", mode="graph-ssg")) >= 1  # the stored graph, read, not rewritten
        with pytest.raises(StoreError, match="read-only here"):
            s.edit_block(block.id, "changed")
    assert hashlib.sha256(open(db, "rb").read()).hexdigest() == before


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_cli_searches_a_database_in_a_read_only_folder(tmp_path):
    import tempfile

    folder = tempfile.mkdtemp(prefix="lc-ro-")
    try:
        from pathlib import Path

        db, _ = _read_only_db(Path(folder))
        os.chmod(db, 0o644)
        os.chmod(folder, 0o555)
        cmd = [sys.executable, "-m", "logichunk", "search", "武陵人", "--db", db, "--embedder", "hash:64",
               "--format", "jsonl"]
        if os.geteuid() == 0:  # root writes anywhere: search as an unprivileged user instead
            def drop() -> None:
                os.setgid(65534)
                os.setuid(65534)
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=drop, timeout=120)
            except (OSError, subprocess.SubprocessError) as e:
                pytest.skip(f"cannot run as an unprivileged user here: {e}")
            if "Permission denied" in proc.stderr and "logichunk" not in proc.stderr:
                pytest.skip("the Python install is not readable by an unprivileged user")
        else:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "武陵人" in proc.stdout
        assert os.listdir(folder) == ["k.db"]  # nothing written beside it
        if os.geteuid() == 0:  # ingesting there is refused with the reason
            ingest = [sys.executable, "-m", "logichunk", "ingest", db, "--db", db, "--embedder", "hash:64"]
            proc = subprocess.run(ingest, capture_output=True, text=True, preexec_fn=drop, timeout=120)
            assert proc.returncode != 0 and "not writable" in proc.stderr and "Traceback" not in proc.stderr
    finally:
        os.chmod(folder, 0o755)
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def test_an_edit_runs_before_a_queued_upload_s_chapters():
    """A writing assistant's edit must not wait behind a large upload's chapters (each a re-chunk of up to a
    megabyte, half a minute with a model): bulk work queued before it runs after it, and the edit waits for the
    one chapter running when it came, at most. A retried failure of bulk work stays behind edits too."""
    import threading

    class Slow:
        settings = Settings()

        def __init__(self) -> None:
            self.order: list[str] = []
            self.gate = threading.Event()
            self.failed = False

        def rechunk_block(self, block: str) -> str:
            self.order.append(block)
            if block == "upload-1":
                self.gate.wait(10)  # the first chapter is still running when the edits come
            if block == "upload-2" and not self.failed:
                self.failed = True
                raise RuntimeError("the embedder went away")
            return block

    store = Slow()
    deb = Debouncer(store, delay_ms=0, max_backoff=0.05)  # type: ignore[arg-type]
    try:
        for k in range(1, 5):
            deb.touch(f"upload-{k}", 0, bulk=True)
        deadline = time.time() + 5
        while store.order != ["upload-1"] and time.time() < deadline:
            time.sleep(0.01)
        deb.touch("edit-a", 0)
        deb.touch("upload-4", 0)  # an edit to a block queued as bulk work: someone's edit now
        deb.touch("edit-b", 0)
        store.gate.set()
        assert deb.wait_idle(10)
    finally:
        deb.close()
    assert store.order[:4] == ["upload-1", "edit-a", "upload-4", "edit-b"], store.order
    assert store.order[4:] == ["upload-2", "upload-3", "upload-2"], store.order


def test_two_ingests_of_one_file_store_it_once(make_store, tmp_path):
    """Two processes ingesting one folder each found a file new and both stored it (the same text under
    two ids, every hit in it twice). The check is made again under the project's lock when the write
    starts: the second skips it as unchanged; another text stored meanwhile stops the ingest in one line."""
    from logichunk.errors import InputError
    from logichunk.store.ingest import FileChecks, FileDocument, ingest, store_file_document
    from logichunk.store.plan import sha256

    store = make_store(settings=Settings(embedder="hash"))
    other = Store.open(store.url, settings=store.settings, embedder=store.embedder, project=store.project)
    try:
        path = tmp_path / "notes.txt"
        path.write_text("First paragraph here. It has two sentences.\n\nSecond one.\n", encoding="utf-8")
        text = path.read_text(encoding="utf-8")
        checks = FileChecks(store, replace=False)
        earlier = checks.check(path, sha256(text))
        assert earlier == []  # new to this ingest ...
        ingest(other, [str(path)], rechunk=False)  # ... which another process stores meanwhile
        assert store_file_document(store, FileDocument.of(path, text), earlier, checks) is None
        assert [src for _d, _t, src in store.documents()] == [str(path)] and checks.unchanged == [str(path)]
        # a file written with other text after this ingest read it, stored meanwhile by the other
        path2 = tmp_path / "draft.txt"
        path2.write_text("An early draft.\n", encoding="utf-8")
        checks = FileChecks(store, replace=False)
        earlier = checks.check(path2, sha256("A later draft.\n"))
        ingest(other, [str(path2)], rechunk=False)
        with pytest.raises(InputError, match="stored by another ingest while this one ran"):
            store_file_document(store, FileDocument.of(path2, "A later draft.\n"), earlier, checks)
        assert len(store.documents()) == 2
        # nobody else wrote: the check stands without a second read of the stored sources
        path3 = tmp_path / "third.txt"
        path3.write_text("Third.\n", encoding="utf-8")
        checks = FileChecks(store, replace=False)
        earlier = checks.check(path3, sha256("Third.\n"))
        checks.known = {}  # (a re-read would restore what is stored; none is made)
        assert store_file_document(store, FileDocument.of(path3, "Third.\n"), earlier, checks) is not None
        assert checks.known == {} and len(store.documents()) == 3
    finally:
        other.close()


def test_two_ingests_of_one_folder_store_each_file_once(make_store, tmp_path):
    """Two ``logichunk ingest`` of one folder at once stored most files twice: the first file found stored
    meanwhile read the stored sources again, and from then on the generation matched, so every later file
    was written on its stale check (new) without a look at what the other ingest had stored."""
    from logichunk.store.ingest import FileChecks, FileDocument, ingest, store_file_document
    from logichunk.store.plan import sha256

    store = make_store(settings=Settings(embedder="hash"))
    other = Store.open(store.url, settings=store.settings, embedder=store.embedder, project=store.project)
    try:
        paths = []
        for k in range(3):
            paths.append(tmp_path / f"f{k}.txt")
            paths[-1].write_text(f"File {k} speaks of its own things. A second sentence.\n", encoding="utf-8")
        checks = FileChecks(store, replace=False, files=len(paths))
        earlier = [checks.check(p, sha256(p.read_text(encoding="utf-8"))) for p in paths]
        assert earlier == [[], [], []]  # all new to this ingest ...
        ingest(other, [str(tmp_path)], rechunk=False)  # ... which another process stores meanwhile
        for p, e in zip(paths, earlier, strict=True):
            assert store_file_document(store, FileDocument.of(p, p.read_text(encoding="utf-8")), e, checks) is None
        assert sorted(src for _d, _t, src in store.documents()) == sorted(map(str, paths))
        assert checks.unchanged == list(map(str, paths))
    finally:
        other.close()


def test_a_merge_while_checking_does_not_vouch_for_another_ingests_writes(make_store, tmp_path):
    """Two ingests of one folder, a file changed and a file new: the other stored the new file while this one
    was checking, then this one merged the changed file and took the generation after it as the store it had
    checked — its stale check of the new file (new) passed its re-check unread, and the file was stored twice."""
    from logichunk.store.ingest import FileChecks, FileDocument, ingest, store_file_document
    from logichunk.store.plan import sha256

    store = make_store(settings=Settings(embedder="hash"))
    other = Store.open(store.url, settings=store.settings, embedder=store.embedder, project=store.project)
    try:
        old, new = tmp_path / "old.txt", tmp_path / "new.txt"
        old.write_text("The old file. It speaks of stones.\n", encoding="utf-8")
        ingest(store, [str(old)], rechunk=False)
        old.write_text("The old file. It speaks of stones.\n\nA paragraph added to it.\n", encoding="utf-8")
        new.write_text("A new file about rivers. Two sentences.\n", encoding="utf-8")
        checks = FileChecks(store, replace=False, files=2)
        ingest(other, [str(new)], rechunk=False)  # the other ingest stores the new file meanwhile
        assert checks.check(old, sha256(old.read_text(encoding="utf-8"))) is None and checks.updated == [str(old)]
        earlier = checks.check(new, sha256(new.read_text(encoding="utf-8")))
        assert earlier == []  # (checked against the sources read before the other's write)
        doc = FileDocument.of(new, new.read_text(encoding="utf-8"))
        assert store_file_document(store, doc, earlier, checks) is None
        assert sorted(src for _d, _t, src in store.documents()) == [str(new), str(old)]
    finally:
        other.close()


def test_a_new_database_another_process_is_creating_is_waited_for(tmp_path):
    """Turning a new file to WAL takes SQLite's lock without its busy wait: two ingests started together on
    a new database failed at once, once in a few tries ("cannot open database: database is locked"). That
    step is retried while the lock is held, and only then; an open behind a writer's lock still succeeds."""
    import sqlite3
    import threading

    from logichunk.store.sqlite import _when_unlocked

    tries = []

    def step():
        tries.append(1)
        if len(tries) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "wal"

    assert _when_unlocked(step) == "wal" and len(tries) == 3
    tries.clear()

    def broken():
        tries.append(1)
        raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _when_unlocked(broken)
    assert len(tries) == 1
    path = tmp_path / "new.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE t (x)")
    timer = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    timer.start()
    try:
        store = Store.open(str(path), settings=Settings(embedder="hash"))
        try:
            assert store.documents() == []
        finally:
            store.close()
    finally:
        timer.join()
        holder.close()


def test_store_open_takes_settings_as_a_mapping_and_refuses_other_kinds_in_one_line(tmp_path):
    """``Store.open(settings={...})`` failed with an AttributeError deep in the store; a mapping is now applied
    over the defaults (its values checked as a config file's are), anything else refused in one line."""
    from logichunk.errors import InputError

    with Store.open(str(tmp_path / "a.db"), settings={"top_k": 7, "embedder": "hash:64"}) as s:
        assert s.settings.top_k == 7 and s.settings.embedder == "hash:64"
    with pytest.raises(InputError, match="unknown setting 'no_such'.*Store.open"):
        Store.open(str(tmp_path / "b.db"), settings={"no_such": 1})
    with pytest.raises(InputError, match="settings must be .*got list"):
        Store.open(str(tmp_path / "c.db"), settings=[("max_size", 1)])
    assert not (tmp_path / "b.db").exists() and not (tmp_path / "c.db").exists()

"""A document edited live, as a writing assistant edits it: random edits of its blocks (insert, delete, replace
anywhere — inside a heading, across a paragraph break, at the very start or end, a block emptied, a long paste,
CRLF, a lone CR, emoji, Chinese), blocks added and deleted, a boundary between two blocks moved, flushed now and
then by a re-chunk or by the debouncer. At every step the stored text is the edited text; after every flush the
chunks tile it, each at its span, every content hash is its text's, the stored tree is the one a fresh store of
the same blocks holds (kept parents and all: a re-chunk that keeps rows changes nothing a fresh one would cut
otherwise), and a search finds only current text.

Before, a boundary moved between two merged blocks (the text of the pair unchanged) kept the parent with its old
children, one of them across the new block boundary, and a parent whose block now split kept its old ``method``:
the tree was not a fresh store's. And an edit with ``expected_revision`` was checked before the block's row was
held: on PostgreSQL two writers of one revision were both accepted, the second overwriting the first unsaid."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import tempfile
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from logichunk.config import Settings
from logichunk.store import Debouncer, StaleRevisionError, Store, sha256
from logichunk.store.document_layout import DocLayout
from pg_fixture import backend, make_store, pg_url  # noqa: F401

SMALL = Settings(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50,
                 child_max_size=80, embedder="hash:64")
PIECES = ["The river runs past the mill. ", "Markets fell sharply today! ", "猫在夜里轻轻地叫。", "投资者卖出了债券？",
          "## A heading\n", "# H\n\n", "- an item\n", "\n\n", "\n", "\r\n", "\r\n\r\n", "\r", "😀🎉 emoji. ",
          "def f(x):\n    return x\n", " ", "x", "Short Title\n\n", "river " * 40, "长" * 90]
PIECE = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map("".join)
BLOCK = PIECE.map(lambda t: t + "\n\n")
QUERIES = ["river mill", "猫", "emoji", "heading", "market", "长"]


def tree(store: Store, doc: str) -> list[tuple]:
    """Every chunk of ``doc`` as a fresh store would hold it: blocks by their place in the chapter, not by id;
    with its method, meta (covered blocks, segments) and vector."""
    out = []
    vec = {pk: bytes(v) for pk, v in store._q("SELECT pk, embedding FROM chunks WHERE document_id = ?", (doc,))}
    for rank, (cid, _o, _t) in enumerate(store.chapters(doc), 1):
        place = {b.id: i for i, b in enumerate(store.blocks(cid))}
        for c in store.chunks(chapter_id=cid):
            meta = {**c.meta, "blocks": [place[b] for b in c.meta.get("blocks", [])]}
            out.append((rank, c.level, c.dotted_id, c.order, place[c.block_id], c.start, c.end, c.content,
                        c.content_hash, c.method, sorted(meta.items()), vec[c.pk]))
    return sorted(out)


def check_flushed(store: Store, doc: str, chapters: list[list[str]]) -> None:
    """After a flush: the text, tiling, spans, hashes, the fresh store's tree, and searches of current text."""
    assert store.blocks(dirty=True) == []
    lay = DocLayout.of(store, doc)
    assert lay.text == "".join(map("".join, chapters))
    for (cid, _o, _t), texts in zip(store.chapters(doc), chapters, strict=True):
        blocks = store.blocks(cid)
        assert [b.content for b in blocks] == texts
        assert all(b.content_hash == sha256(b.content) for b in blocks)
        text = "".join(texts)
        parents = sorted(store.chunks(level="parent", chapter_id=cid), key=lambda p: p.order)
        assert "".join(p.content for p in parents) == text
        for p in parents:
            kids = store.children_of(p.pk)
            assert kids and "".join(k.content for k in kids) == p.content
            for c in (p, *kids):
                assert lay.span(c.block_id, c.start, c.end, c.content) is not None, c.dotted_id
                assert c.content_hash == sha256(c.content)
    fresh = Store.open(":memory:", settings=SMALL)
    try:
        again = fresh.add_document("d", [(t, texts) for (_c, _o, t), texts in zip(store.chapters(doc), chapters,
                                                                                   strict=True)])
        fresh.rechunk_dirty()
        assert tree(store, doc) == tree(fresh, again)
    finally:
        fresh.close()
    now = {c.pk: c for c in store.chunks(document_id=doc)}
    for q in QUERIES:
        for level in ("child", "parent"):
            for pk, _s in store.text_search(q, 50, level) + store.vector_search(store.embed_query(q), 50, level):
                assert pk in now, "a search found a chunk that is no longer stored"
                c = now[pk]
                assert lay.span(c.block_id, c.start, c.end, c.content) is not None


class EditedDocument(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = tempfile.TemporaryDirectory()
        self.store = Store.open(str(Path(self.folder.name) / "live.db"), settings=SMALL)
        self.debouncer: Debouncer | None = None
        self.ids: list[list[str]] = []
        self.chapters: list[list[str]] = []

    @initialize(chapters=st.lists(st.lists(BLOCK, min_size=1, max_size=4), min_size=1, max_size=3),
                debounced=st.booleans())
    def start(self, chapters: list[list[str]], debounced: bool) -> None:
        self.doc = self.store.add_document("d", [(f"c{i}", bl) for i, bl in enumerate(chapters)])
        self.store.rechunk_dirty()
        self.chapters = [list(bl) for bl in chapters]
        self.ids = [[b.id for b in self.store.blocks(cid)] for cid, _o, _t in self.store.chapters(self.doc)]
        if debounced:  # (edits through the debouncer, its timer running between them)
            self.debouncer = Debouncer(self.store, delay_ms=5)

    def _write(self, c: int, b: int, text: str) -> None:
        if self.debouncer is not None:
            self.debouncer.edit(self.ids[c][b], text)
        else:
            self.store.edit_block(self.ids[c][b], text)
        self.chapters[c][b] = text

    def _pick(self, c: int, b: int) -> tuple[int, int]:
        c %= len(self.chapters)
        return c, b % max(len(self.chapters[c]), 1)

    @precondition(lambda self: any(self.chapters))
    @rule(c=st.integers(0, 9), b=st.integers(0, 9), op=st.sampled_from(["insert", "delete", "replace"]),
          at=st.floats(0, 1), span=st.integers(0, 400), piece=PIECE)
    def edit(self, c: int, b: int, op: str, at: float, span: int, piece: str) -> None:
        c, b = self._pick(c, b)
        if not self.chapters[c]:
            return
        t = self.chapters[c][b]
        i = int(at * len(t))
        j = min(len(t), i + span)
        self._write(c, b, t[:i] + piece + t[i:] if op == "insert" else t[:i] + t[j:] if op == "delete"
                    else t[:i] + piece + t[j:])

    @precondition(lambda self: any(self.chapters))
    @rule(c=st.integers(0, 9), b=st.integers(0, 9), how=st.sampled_from(["empty", "paste", "start", "end"]),
          piece=PIECE)
    def edit_whole(self, c: int, b: int, how: str, piece: str) -> None:
        c, b = self._pick(c, b)
        if not self.chapters[c]:
            return
        t = self.chapters[c][b]
        new = {"empty": "", "paste": t + ("A pasted sentence about the river. " * 60) + piece,
               "start": piece + t, "end": t + piece}[how]
        self._write(c, b, new)

    @precondition(lambda self: any(len(bl) > 1 for bl in self.chapters))
    @rule(c=st.integers(0, 9), b=st.integers(0, 9), shift=st.integers(-60, 60))
    def move_boundary(self, c: int, b: int, shift: int) -> None:
        """Two neighbouring blocks keep their joined text, the boundary between them moves."""
        c = next(k for k in [(c + d) % len(self.chapters) for d in range(len(self.chapters))]
                 if len(self.chapters[k]) > 1)
        b %= len(self.chapters[c]) - 1
        joined = self.chapters[c][b] + self.chapters[c][b + 1]
        cut = max(0, min(len(joined), len(self.chapters[c][b]) + shift))
        self._write(c, b, joined[:cut])
        self._write(c, b + 1, joined[cut:])

    @rule(c=st.integers(0, 9), text=BLOCK)
    def add_block(self, c: int, text: str) -> None:
        c %= len(self.chapters)
        cid = self.store.chapters(self.doc)[c][0]
        self.ids[c].append(self.store.add_block(cid, text))
        self.chapters[c].append(text)
        if self.debouncer is not None:
            self.debouncer.touch(self.ids[c][-1])

    @precondition(lambda self: sum(map(len, self.chapters)) > 1)
    @rule(c=st.integers(0, 9), b=st.integers(0, 9))
    def delete_block(self, c: int, b: int) -> None:
        c, b = self._pick(c, b)
        if not self.chapters[c]:
            return
        bid = self.ids[c].pop(b)
        del self.chapters[c][b]
        if self.debouncer is not None:
            self.debouncer.cancel(bid)
            if self.ids[c]:
                self.debouncer.touch(self.ids[c][0])
        self.store.delete_block(bid)

    @rule()
    def flush(self) -> None:
        if self.debouncer is not None:  # (it alone: every edited chapter had one of its blocks touched)
            assert self.debouncer.flush(60)
            assert not self.debouncer.errors, list(self.debouncer.errors)
        else:
            self.store.rechunk_dirty()
        check_flushed(self.store, self.doc, self.chapters)

    @invariant()
    def the_stored_text_is_the_edited_text(self) -> None:
        if self.ids:
            got = [[b.content for b in self.store.blocks(cid)] for cid, _o, _t in self.store.chapters(self.doc)]
            assert got == self.chapters

    def teardown(self) -> None:
        if self.debouncer is not None:
            self.debouncer.close(flush=False)
        self.store.close()
        self.folder.cleanup()


EditedDocument.TestCase.settings = settings(max_examples=25, stateful_step_count=14, deadline=None,
                                            suppress_health_check=[HealthCheck.too_slow])
TestEditedDocument = EditedDocument.TestCase


# ----------------------------------------------------------------------------- the cases it found, both backends


def _fresh_tree(store: Store) -> list[tuple]:
    (doc, _t, _s), = store.documents()
    fresh = Store.open(":memory:", settings=SMALL)
    try:
        again = fresh.add_document("d", [(t, [b.content for b in store.blocks(c)]) for c, _o, t in store.chapters(doc)])
        fresh.rechunk_dirty()
        return tree(fresh, again)
    finally:
        fresh.close()


def test_a_boundary_moved_between_two_merged_blocks_cuts_their_parent_again(make_store):
    """The two blocks' joined text is the same, so is their parent's text, owner and offsets: before, the parent
    was kept with its old segments and children, a child running across the new boundary between the blocks."""
    store = make_store(settings=SMALL)
    a, b = "The river runs past the mill. Markets fell. ", "Snow on the market today. Tea in winter.\n\n"
    store.add_document("d", [("c", [a, b])])
    store.rechunk_dirty()
    (parent,) = store.chunks(level="parent")
    assert parent.method == "block-merge" and parent.meta["segments"] == [[0, len(a)], [len(a), len(a + b)]]
    first, second = store.blocks()
    store.edit_block(first.id, (a + b)[:15])
    store.edit_block(second.id, (a + b)[15:])
    store.rechunk_dirty()
    (parent,) = store.chunks(level="parent")
    assert parent.meta["segments"] == [[0, 15], [15, len(a + b)]]
    assert all(k.end <= 15 or k.start >= 15 for k in store.children_of(parent.pk))  # no child across blocks
    (doc, _t, _s), = store.documents()
    assert tree(store, doc) == _fresh_tree(store)


def test_a_parent_whose_block_now_splits_is_said_so(make_store):
    """The block grew past the parent size; its first piece is the whole old block: same text and offsets, but
    now a piece of a split block (``block-split``), as a fresh store says, not the ``block`` it was."""
    store = make_store(settings=SMALL)
    old = "The river runs past the mill and the market was quiet. " * 4 + "\n\n"
    store.add_document("d", [("c", [old])])
    store.rechunk_dirty()
    assert [p.method for p in store.chunks(level="parent")] == ["block"]
    bid = store.blocks()[0].id
    store.edit_block(bid, old + "长" * 290)
    store.rechunk_dirty()
    parents = sorted(store.chunks(level="parent"), key=lambda p: p.order)
    assert parents[0].content == old and {p.method for p in parents} == {"block-split"}
    (doc, _t, _s), = store.documents()
    assert tree(store, doc) == _fresh_tree(store)


def test_a_heading_edited_renames_its_chapter_as_an_ingest_would(make_store):
    """An outline read from the chapters follows the headings typed: before, ``## Methods`` edited into ``## Materials
    and methods`` left its chapter titled ``Methods`` until the next ingest of a file (a document added over the API
    has none). A heading typed at the very start titles the first chapter; a heading typed inside a chapter, or a
    heading deleted, leaves the titles as they were (the chapters no longer open where an ingest would open them,
    and the ingest's merge leaves those titles too)."""
    from logichunk.store.ingest import chapter_blocks, ingest_text

    store = make_store(settings=SMALL)
    doc = ingest_text(store, "t", "Before any heading.\n\n## Methods\n\nWe did things.\n\n## Results\n\nIt worked.\n\n")
    titles = lambda: [t for _c, _o, t in store.chapters(doc)]  # noqa: E731
    assert titles() == [None, "Methods", "Results"]
    blocks = {b.content: b for b in store.blocks()}
    store.edit_block(blocks["## Methods\n\n"].id, "## Materials and methods\n\n")
    store.edit_block(blocks["Before any heading.\n\n"].id, "# Thesis\n\nBefore any heading.\n\n")
    text = DocLayout.of(store, doc).text
    assert titles() == [t for t, _b in chapter_blocks(text)] == ["Thesis", "Materials and methods", "Results"]
    store.edit_block(blocks["We did things.\n\n"].id, "## Inside\n\nWe did things.\n\n")  # not a chapter's first
    store.edit_block(blocks["## Results\n\n"].id, "Results, no heading.\n\n")  # the heading deleted
    store.edit_block(blocks["It worked.\n\n"].id, "### Not first\n\n")
    assert titles() == ["Thesis", "Materials and methods", "Results"]
    store.rechunk_dirty()
    assert titles() == ["Thesis", "Materials and methods", "Results"]


def test_a_paragraph_deleted_is_no_conflict_for_the_next_ones_edit(make_store):
    """Deleting a block leaves the revisions of its chapter's other blocks alone: the writer edits the next
    paragraph from the revision it holds. Before, every block of the chapter went up a revision and that edit was
    refused as stale (``reload it and apply your edit again``), though no one had touched it."""
    store = make_store(settings=SMALL)
    store.add_document("d", [("c", ["First paragraph.\n\n", "Second one.\n\n", "Third one.\n\n"])])
    store.rechunk_dirty()
    first, second, third = store.blocks()
    store.delete_block(second.id)
    assert store.edit_block(third.id, "Third one, edited.\n\n", expected_revision=third.revision)
    store.rechunk_dirty()
    check_flushed(store, store.documents()[0][0], [["First paragraph.\n\n", "Third one, edited.\n\n"]])


def test_a_rechunk_that_finds_nothing_changed_keeps_a_chapter_that_lost_a_block_meanwhile_dirty(make_store):
    """A re-chunk that saw only a block marked dirty with its text unchanged clears the mark, unless the chapter
    lost a block between its read and its write: that took the merged parent covering both, so the chapter must
    be cut again, and a block's revision no longer tells (a delete leaves it)."""
    store = make_store(settings=SMALL)
    store.add_document("d", [("c", ["Short one.\n\n", "Short two.\n\n"])])
    store.rechunk_dirty()
    a, b = store.blocks()
    assert [p.meta["blocks"] for p in store.chunks(level="parent")] == [[a.id, b.id]]
    store.mark_dirty(a.id)  # (dirty, its text unchanged)
    snapshot = store._snapshot

    def then_delete(chapter_id):
        snap = snapshot(chapter_id)
        store.delete_block(b.id)  # (another writer, between the re-chunk's read and its write)
        store._snapshot = snapshot
        return snap

    store._snapshot = then_delete
    assert [r.status for r in store.rechunk_dirty()] == ["unchanged"]
    assert [x.id for x in store.blocks(dirty=True)] == [a.id]
    store.rechunk_dirty()
    check_flushed(store, store.documents()[0][0], [["Short one.\n\n"]])


def test_an_edit_from_a_stale_revision_is_refused_and_writes_nothing(make_store):
    store = make_store(settings=SMALL)
    store.add_document("d", [("c", ["First text.\n\n"])])
    bid = store.blocks()[0].id
    assert store.edit_block(bid, "Mine.\n\n", expected_revision=1)
    with pytest.raises(StaleRevisionError, match="at revision 2, not 1") as e:
        store.edit_block(bid, "Theirs.\n\n", expected_revision=1)
    assert e.value.revision == 2
    b = store.get_block(bid)
    assert (b.content, b.revision) == ("Mine.\n\n", 2)


def test_two_services_editing_one_revision_on_postgresql_accept_one(pg_url):
    """Two service processes (two connections) take an edit of one block from revision 1 (``PUT`` with
    ``expected_revision``): the other's commits between this one's read of the block and its write. Exactly one
    is accepted, the other is a 409. Before, the revision was compared before the block's row was held: both
    were accepted, the second overwriting the first unsaid."""
    pytest.importorskip("fastapi", reason="the service tests need the [service] extra (fastapi, httpx)")
    import uuid

    from fastapi.testclient import TestClient

    from logichunk.service.app import create_app

    key = "test-key-0123456789abcdef"
    project = f"race-{uuid.uuid4().hex[:8]}"
    app = create_app(replace(SMALL, db=pg_url, project=project), api_key=key, debounce_ms=20)
    other = Store.open(pg_url, settings=SMALL, project=project)
    try:
        with TestClient(app) as client:
            rt = app.state.service.registry.get(project)
            rt.store.add_document("d", [("c", ["First text.\n\n"])])
            bid = rt.store.blocks()[0].id
            read = rt.store.get_block
            said: list[object] = []

            def read_then_the_other_writes(block_id: str):
                row = read(block_id)
                if not said:
                    said.append(other.edit_block(block_id, "The other's edit.\n\n"))  # (it is at revision 1)
                return row

            rt.store.get_block = read_then_the_other_writes
            r = client.put(f"/api/projects/{project}/blocks/{bid}", headers={"X-API-Key": key},
                           json={"content": "This one's edit.\n\n", "expected_revision": 1})
            rt.store.get_block = read
            assert said == [True]
            assert r.status_code == 409 and r.json()["error"]["details"]["current_revision"] == 2, r.text
            b = other.get_block(bid)
            assert (b.content, b.revision) == ("The other's edit.\n\n", 2)
    finally:
        other.close()


def test_a_block_deleted_while_its_chapter_is_written_on_postgresql_deadlocks_no_one(pg_url):
    """A re-chunk's write holds its chapter's blocks, then deletes the chapter's old parents; a block of that
    chapter deleted meanwhile by another connection deleted the merged parent covering it first, then waited for
    its block: each waited for the other, and PostgreSQL aborted one ("deadlock detected", said as the database
    gone away). Now the delete holds the chapter's blocks first, waits, and both go through."""
    import uuid

    psycopg = pytest.importorskip("psycopg")
    project = f"delete-{uuid.uuid4().hex[:8]}"
    a = Store.open(pg_url, settings=SMALL, project=project)
    b = Store.open(pg_url, settings=SMALL, project=project)
    try:
        doc = a.add_document("d", [("c", ["Short one.\n\n", "Short two.\n\n"])])
        a.rechunk_dirty()
        x, y = a.blocks()
        (parent,) = a.chunks(level="parent")
        assert parent.meta["blocks"] == [x.id, y.id]
        failed: list[BaseException] = []

        def delete() -> None:
            try:
                b.delete_block(y.id)
            except BaseException as e:  # noqa: BLE001 - the test says what failed
                failed.append(e)

        waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
        with psycopg.connect(pg_url, autocommit=True) as watch, a.tx():  # (as a re-chunk's write, _apply, does it)
            a._q(a._lock_chapter_blocks_sql(), (x.chapter_id,))
            t = threading.Thread(target=delete)
            t.start()
            for _ in range(3000):  # (until the delete waits for a lock: the blocks', or, before, a chunk's)
                if watch.execute(waiting).fetchone()[0]:
                    break
                threading.Event().wait(0.01)
            a._x("DELETE FROM chunks WHERE pk = ?", (parent.pk,))
        t.join(30)
        assert failed == []
        a.rechunk_dirty()
        check_flushed(a, doc, [["Short one.\n\n"]])
    finally:
        a.close()
        b.close()


def test_two_writers_in_two_threads_lose_no_edit(make_store):
    """Two store objects (two connections) edit and re-chunk one document at once, some blocks both: every
    accepted edit is counted in its block's revision, and the store ends as a fresh one of its final text."""
    a = make_store(settings=SMALL)
    a.add_document("d", [("c1", ["One block. " * 3 + "\n\n", "Two.\n\n"]), ("c2", ["Three.\n\n", "猫。\n\n"])])
    a.rechunk_dirty()
    b = Store.open(a.url, settings=SMALL, project=a.project)
    ids = [x.id for x in a.blocks()]
    accepted: list[list[str]] = [[], []]
    errors: list[BaseException] = []

    def writer(k: int, store: Store) -> None:
        try:
            for i in range(12):
                bid = ids[(i * (k + 1)) % len(ids)]
                if store.edit_block(bid, f"Writer {k} edit {i} about the river. 猫在夜里叫。\n\n"):
                    accepted[k].append(bid)
                if i % 3 == k:
                    store.rechunk_dirty()
        except BaseException as e:  # noqa: BLE001 - said by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k, s)) for k, s in enumerate((a, b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    b.close()
    assert not errors, errors
    a.rechunk_dirty()
    for x in a.blocks():
        assert x.revision == 1 + sum(acc.count(x.id) for acc in accepted)
    (doc, _t, _s), = a.documents()
    check_flushed(a, doc, [[x.content for x in a.blocks(c)] for c, _o, _t in a.chapters(doc)])

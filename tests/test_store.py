"""The store against both backends (SQLite file and a real PostgreSQL + pgvector from pgserver):
the seed design's properties P1-P4, P7, P10, incremental re-chunking, failures, bad input."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.store import RechunkError, Store, StoreError
from logichunk.store.schema import LATEST
from pg_fixture import CountingEmbedder, TableEmbedder, backend, make_store, pg_url  # noqa: F401

SMALL = Settings(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50,
                 child_max_size=80, embedder="hash:64")

WORDS = ["river", "mountain", "teacher", "sword", "market", "price", "winter", "snow", "tea", "rain",
         "师父", "山路", "商人", "粮食", "剑法", "大雨", "茶馆", "少年"]


def sentence(draw_words: list[str], end: str) -> str:
    return " ".join(draw_words) + end


sentences = st.builds(sentence, st.lists(st.sampled_from(WORDS), min_size=1, max_size=14),
                      st.sampled_from([". ", "! ", "。", "？", ".\n"]))
blocks = st.lists(sentences, min_size=0, max_size=12).map(lambda ss: "".join(ss) + "\n\n")
chapters = st.lists(st.lists(blocks, min_size=1, max_size=6), min_size=1, max_size=3)


def check_invariants(store, s: Settings) -> None:
    """P1, P2, P3, P4, P10 over everything in the store."""
    for doc_id, _, _ in store.documents():
        for chapter_id, _, _ in store.chapters(doc_id):
            bl = store.blocks(chapter_id)
            by_id = {b.id: b for b in bl}
            offset = {}
            acc = 0
            for b in bl:
                offset[b.id] = acc
                acc += len(b.content)
            chapter_text = "".join(b.content for b in bl)
            parents = store.chunks(level="parent", chapter_id=chapter_id)
            parents.sort(key=lambda p: p.order)
            # P3 for parents, and parents tile the chapter (P1: nothing crosses the chapter's edges)
            assert [p.order for p in parents] == list(range(1, len(parents) + 1))
            assert "".join(p.content for p in parents) == chapter_text
            for p in parents:
                # P1: every block a parent covers is in its chapter, and its text is where it says
                assert all(bid in by_id for bid in p.meta["blocks"])
                g = offset[p.block_id] + p.start
                assert chapter_text[g : g + p.size] == p.content
                # P10: within bounds; under the minimum only when no neighbour could take it
                assert 0 < p.size <= s.max_parent_size
                if p.size < s.min_parent_size and len(parents) > 1:
                    i = p.order - 1
                    left = parents[i - 1].size + p.size if i > 0 else None
                    right = parents[i + 1].size + p.size if i + 1 < len(parents) else None
                    assert all(x is None or x > s.max_parent_size for x in (left, right)), (p.size, left, right)
                kids = store.children_of(p.pk)
                # P2: children point at a valid parent of the same chapter
                assert kids and all(k.parent_pk == p.pk and k.chapter_id == chapter_id for k in kids)
                # P3: contiguous orders; P4: children's text joined is the parent's
                assert [k.order for k in kids] == list(range(1, len(kids) + 1))
                assert "".join(k.content for k in kids) == p.content
                assert [k.dotted_id for k in kids] == [f"{p.dotted_id}.{i}" for i in range(1, len(kids) + 1)]
                assert all(k.size <= s.child_max_size for k in kids)
    for c in store.chunks(level="child"):
        assert c.parent_pk is not None


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chapters)
def test_properties_p1_p4_p10(make_store, chs):
    store = make_store(settings=SMALL)
    store.add_document("d", [(f"c{i}", bl) for i, bl in enumerate(chs)])
    store.rechunk_dirty()
    assert store.counts()["dirty_blocks"] == 0
    check_invariants(store, SMALL)


def _novel(n_chapters=3, n_blocks=4):
    out = []
    for c in range(n_chapters):
        bl = []
        for b in range(n_blocks):
            bl.append("".join(f"Sentence {c}-{b}-{k} about {WORDS[(c * 7 + b * 3 + k) % len(WORDS)]} and "
                              f"{WORDS[(b + k) % len(WORDS)]}. " for k in range(3 + (b * 5) % 9)) + "\n\n")
        out.append((f"Chapter {c + 1}", bl))
    return out


def test_schema_version_and_reopen(make_store, backend, tmp_path, pg_url_or_none):
    store = make_store(settings=SMALL)
    assert store.schema_version() == LATEST
    store.add_document("d", _novel(1, 2))
    store.rechunk_dirty()
    n = store.counts()
    url = store.url
    pname = store._q("SELECT name FROM projects WHERE id = ?", (store.project_id,))[0][0]
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.counts()
    again = Store.open(url, settings=SMALL, embedder=CountingEmbedder(), project=pname)
    try:
        assert again.schema_version() == LATEST
        assert again.counts() == n
    finally:
        again.close()


@pytest.fixture
def pg_url_or_none(backend, request):
    return request.getfixturevalue("pg_url") if backend == "postgres" else None


def test_p7_same_content_never_reembedded(make_store):
    emb = CountingEmbedder()
    store = make_store(settings=SMALL, embedder=emb)
    novel = _novel(2, 4)
    store.add_document("a", novel)
    store.rechunk_dirty()
    first = len(emb.texts)
    assert first > 0 and len(set(emb.texts)) == first
    # the same content again, as another document: nothing new to embed
    store.add_document("b", novel)
    store.rechunk_dirty()
    assert len(emb.texts) == first
    # an edit appending one sentence embeds only new texts (the new sentence, new children)
    b = store.blocks()[1]
    store.edit_block(b.id, b.content.rstrip("\n") + " A brand new closing sentence here.\n\n")
    r = store.rechunk_block(b.id)
    assert r.status == "rechunked" and r.parents_kept >= 1
    new = emb.texts[first:]
    assert 0 < len(new) <= 4
    assert len(set(emb.texts)) == len(emb.texts), "a text was embedded twice"
    check_invariants(store, SMALL)


def test_a_cheap_embedders_vectors_stay_out_of_the_cache_table(make_store):
    """An embedder that computes faster than a database reads back (``persist_vectors = False``, the
    hash embedder) writes nothing to the ``embeddings`` table and stores the same chunks as one that is
    cached, which writes every text it embedded there."""
    class Named(CountingEmbedder):  # (a model id of its own: the PostgreSQL projects share one table)
        def __init__(self, name):
            super().__init__()
            self.model_id = f"{name}-{uuid.uuid4().hex}"

    class Cheap(Named):
        persist_vectors = False

    novel = _novel(2, 4)
    cached, cheap = Named("cached"), Cheap("cheap")
    a, b = make_store(settings=SMALL, embedder=cached), make_store(settings=SMALL, embedder=cheap)
    for st_ in (a, b):
        st_.add_document("a", novel)
        st_.rechunk_dirty()

    def rows(st_):
        return st_._q("SELECT COUNT(*) FROM embeddings WHERE model_id = ?", (st_.model_id,))[0][0]

    def stored(st_):
        return sorted((c.level, c.dotted_id, c.start, c.end, c.method) for c in st_.chunks())

    assert stored(a) == stored(b) and cached.texts == cheap.texts
    assert rows(b) == 0 and rows(a) == len(set(cached.texts)) > 0
    check_invariants(b, SMALL)


def test_incremental_edit_touches_only_its_parent(make_store):
    store = make_store(settings=SMALL)
    store.add_document("a", _novel(3, 4))
    store.rechunk_dirty()
    before = {c.pk: c for c in store.chunks()}
    b = store.blocks()[5]  # a block of chapter 2
    store.edit_block(b.id, "Completely different text about tea. And snow falls on the market.\n\n")
    assert store.get_block(b.id).is_dirty
    r = store.rechunk_block(b.id)
    assert r.status == "rechunked"
    after = {c.pk: c for c in store.chunks()}
    changed_chapters = {before[pk].chapter_id for pk in set(before) ^ set(after) if pk in before} | {
        after[pk].chapter_id for pk in set(after) - set(before)}
    assert changed_chapters == {b.chapter_id}
    for pk, c in before.items():  # other chapters' rows are untouched
        if c.chapter_id != b.chapter_id:
            assert after[pk] == c
    assert not store.get_block(b.id).is_dirty
    check_invariants(store, SMALL)
    # same content again: clean; marked dirty without a change: only the flag is cleared
    assert store.edit_block(b.id, store.get_block(b.id).content) is False
    store.mark_dirty(b.id)
    assert store.rechunk_block(b.id).status == "unchanged"
    assert not store.get_block(b.id).is_dirty
    assert store.rechunk_block(b.id).status == "clean"


def test_delete_block_and_document(make_store):
    store = make_store(settings=SMALL)
    doc = store.add_document("a", _novel(2, 3))
    store.rechunk_dirty()
    b = store.blocks()[1]
    store.delete_block(b.id)
    store.rechunk_dirty()
    check_invariants(store, SMALL)
    assert all(b.id not in c.meta.get("blocks", [b.id if c.level == "parent" else ""]) for c in store.chunks(level="parent"))
    store.delete_document(doc)
    assert store.counts()["child"] == 0 and store.blocks() == []


def test_embedding_failure_keeps_block_dirty(make_store):
    emb = CountingEmbedder()
    store = make_store(settings=SMALL, embedder=emb)
    store.add_document("a", _novel(1, 3))
    store.rechunk_dirty()
    old = {c.pk for c in store.chunks()}
    b = store.blocks()[0]
    store.edit_block(b.id, "New words about rain in the mountain. Tea in the market.\n\n")
    emb.fail = True
    with pytest.raises(RechunkError, match="stay dirty"):
        store.rechunk_block(b.id)
    row = store.get_block(b.id)
    assert row.is_dirty and "embedding service down" in row.last_error
    assert {c.pk for c in store.chunks()} == old  # the old chunks are still there
    emb.fail = False
    assert store.rechunk_block(b.id).status == "rechunked"
    assert store.get_block(b.id).last_error is None and not store.get_block(b.id).is_dirty


BAD = ["'; DROP TABLE blocks; --", "1 OR 1=1", "\" OR \"\"=\"", "%s %(x)s ?", "Robert'); DELETE FROM chunks;--"]


def test_bad_input(make_store):
    from logichunk.retrieve import retrieve

    store = make_store(settings=SMALL)
    with pytest.raises(StoreError, match="unknown block id"):
        store.get_block("nope")
    with pytest.raises(StoreError, match="unknown block id"):
        store.edit_block("nope", "x")
    with pytest.raises(StoreError, match="unknown block id"):
        store.rechunk_block(BAD[0])
    with pytest.raises(StoreError, match="unknown chapter id"):
        store.add_block(BAD[1], "x")
    with pytest.raises(InputError):
        store.edit_block(store.add_block(store.add_chapter(store.add_document("t")), "x"), None)  # type: ignore[arg-type]
    bid = store.blocks()[-1].id
    for rev in ("1", True, 1.0):  # (a revision read from a form or JSON as text was "at revision 1, not 1": stale)
        with pytest.raises(InputError, match=f"^expected_revision must be a block's revision \\(an int\\), got {rev!r}$"):
            store.edit_block(bid, "y", expected_revision=rev)  # type: ignore[arg-type]
    assert store.get_block(bid).content == "x"
    doc = store.add_document(BAD[0], [(BAD[1], [b + " text.\n\n" for b in BAD])])
    store.rechunk_dirty()
    assert [b.content for b in store.blocks()[1:]] == [b + " text.\n\n" for b in BAD]
    assert store.documents()[-1] == (doc, BAD[0], None)
    for q in BAD:
        for mode in ("basic", "parent", "hierarchical", "hybrid"):
            retrieve(store, q, mode=mode)
    for q, why in (("", "empty"), ("   \n", "only whitespace")):  # (the service's and MCP's words)
        with pytest.raises(InputError, match=f"^query is {why}$"):
            retrieve(store, q)
    with pytest.raises(InputError, match="mode"):
        retrieve(store, "x", mode="nope")
    with pytest.raises(InputError, match="top_k"):
        retrieve(store, "x", top_k=0)
    assert store.counts()["child"] > 0  # nothing was dropped


def test_text_no_database_can_hold_is_one_line_of_error_and_nothing_is_stored(make_store):
    """An unpaired surrogate (JSON's ``"\\ud800"``, bytes decoded with ``surrogateescape``) reached the driver
    as a UnicodeEncodeError traceback; on both backends it is refused before anything is written."""
    store = make_store(settings=SMALL)
    before = store.documents()
    bad = "A block. Then \ud800 a lone surrogate.\n\n"
    for call, where in ((lambda: store.add_document("t", [("c", ["Fine.\n\n", bad])]), "block 2 of chapter 'c'"),
                        (lambda: store.add_document("t\udfff"), "document title"),
                        (lambda: store.add_document("t", [("c\ud800", ["Fine.\n\n"])]), "chapter title")):
        with pytest.raises(InputError, match=f"^{where} holds an unpaired surrogate at character \\d+"):
            call()
    assert store.documents() == before  # (the document of the first call was not half written)
    doc = store.add_document("t", [("c", ["Fine text here.\n\n"])])
    block = store.blocks()[0]
    with pytest.raises(InputError, match=f"^block {block.id} holds an unpaired surrogate at character 14"):
        store.edit_block(block.id, bad)  # (named by its id: "block 1" named every block edited)
    with pytest.raises(InputError, match="unpaired surrogate"):
        store.add_block(store.chapters(doc)[0][0], bad)
    assert [b.content for b in store.blocks()] == ["Fine text here.\n\n"]


def test_a_nul_character_is_refused_alike_on_both_backends_and_nothing_is_stored(make_store):
    """A NUL (``\\x00``) in a block or a title: SQLite kept it while PostgreSQL's driver failed with a vague
    error, so a text fared differently by backend; both now refuse it in one line before anything is written."""
    store = make_store(settings=SMALL)
    before = store.documents()
    bad = "A block. Then \x00 a NUL.\n\n"
    for call, where in ((lambda: store.add_document("t", [("c", ["Fine.\n\n", bad])]), "block 2 of chapter 'c'"),
                        (lambda: store.add_document("t\x00"), "document title"),
                        (lambda: store.add_document("t", [("c\x00", ["Fine.\n\n"])]), "chapter title")):
        with pytest.raises(InputError, match=f"^{where} holds a NUL character \\(\\\\x00\\) at character \\d+"):
            call()
    assert store.documents() == before
    doc = store.add_document("t", [("c", ["Fine text here.\n\n"])])
    block = store.blocks()[0]
    with pytest.raises(InputError, match=f"^block {block.id} holds a NUL character .* at character 14"):
        store.edit_block(block.id, bad)
    with pytest.raises(InputError, match="NUL character"):
        store.add_block(store.chapters(doc)[0][0], bad)
    assert [b.content for b in store.blocks()] == ["Fine text here.\n\n"]


def test_chapters_of_the_wrong_shape_are_one_line_and_nothing_is_stored(make_store):
    """``add_document(title, text)`` failed inside the write with Python's "not enough values to unpack", and a
    chapter's blocks given as one string were stored a character a block (``"Some text."``: ten blocks)."""
    store = make_store(settings=SMALL)
    before = store.documents()
    for chapters, why in (("Some text.", "chapters must be .* got str; to store a text, use .*ingest_text"),
                          ([("Intro", "Some text.")], "the blocks of chapter 1 must be a list of texts, got str"),
                          ([("Intro", None)], "the blocks of chapter 1 must be a list of texts, got NoneType"),
                          ([("Intro",)], r"chapter 1 must be a \(title, \[block texts\]\) pair, got 1 items"),
                          (None, "chapters must be .* got NoneType")):
        with pytest.raises(InputError, match=why):
            store.add_document("t", chapters)  # type: ignore[arg-type]
    assert store.documents() == before
    store.add_document("t", (pair for pair in [("Intro", ("Some text.\n\n", "More.\n\n"))]))  # any iterables
    assert [b.content for b in store.blocks()] == ["Some text.\n\n", "More.\n\n"]


@pytest.mark.parametrize("path", ["/nonexistent-folder/x.db", "/sys/logichunk.db", "/"])
def test_unwritable_sqlite_path(path):
    with pytest.raises(StoreError, match="cannot"):
        Store.open(path, embedder=CountingEmbedder())


def test_empty_url():
    with pytest.raises(InputError):
        Store.open("  ")


def test_postgres_exact_search_stays_exact_after_approximate_ones(pg_url):
    """psycopg prepares a statement after a few runs and the plan keeps its access path: an exact
    search must not reuse the HNSW plan of earlier approximate searches (nor the other way round)."""
    from logichunk.store.ingest import ingest_text

    settings = Settings(embedder="hash", vector_index="pgvector", hnsw_threshold=0, hnsw_m=4,
                        hnsw_ef_construction=8, hnsw_ef_search=1)
    store = Store.open(pg_url, settings=settings, embedder=TableEmbedder(32), project="exact-after-hnsw")
    try:
        text = "\n\n".join(f"Paragraph {i} is about item number {i * 7919 % 10007}." for i in range(3000))
        ingest_text(store, "d", text)
        store.rechunk_dirty()
        ids, vecs = store._load_vectors("child", store.model_id, None)
        assert len(ids) > 500
        rng = np.random.default_rng(1)
        queries = rng.standard_normal((12, 32)).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        truth = [set(ids[np.argsort(-(vecs @ q))[:10]].tolist()) for q in queries]
        approx = [{p for p, _ in store.vector_search(q, 10, exact=False)} for q in queries]
        # the precondition that makes this test mean something: the index really is approximate
        assert any(a != t for a, t in zip(approx, truth, strict=True))
        exact = [{p for p, _ in store.vector_search(q, 10, exact=True)} for q in queries]
        assert exact == truth
    finally:
        store.close()


@pytest.mark.parametrize("mode, threshold, indexed, dim", [("auto", 50_000, False, 23), ("auto", 10, True, 29),
                                                           ("pgvector", 50_000, True, 31), ("exact", 0, False, 37)])
def test_postgres_makes_its_hnsw_index_from_the_threshold(pg_url, mode, threshold, indexed, dim):
    """Every row written into pgvector's HNSW index pays its upkeep (an ingest of 100 files: 27.6 s with it,
    4.3 s without), and below ``hnsw_threshold`` rows an exact scan is fast: the index waits for the
    threshold (``auto``), comes at once when asked for (``pgvector``), never for in-process searches."""
    from logichunk.store.ingest import ingest_text

    settings = Settings(embedder="hash", vector_index=mode, hnsw_threshold=threshold)
    emb = TableEmbedder(dim)
    emb.model_id = f"table-test-{dim}"
    store = Store.open(pg_url, settings=settings, embedder=emb, project=f"idx-{mode}-{threshold}")
    try:
        name = store._index_name(store.model_id, dim)  # (one model per case: the index is the model's)
        with store.tx():
            store._x(f'DROP INDEX IF EXISTS "{name}"')
        ingest_text(store, "d", "\n\n".join(f"Paragraph {i} is about item {i * 31 % 97}." for i in range(60)))
        store.rechunk_dirty()
        made = store._q("SELECT COUNT(*) FROM pg_indexes WHERE indexname = ?", (name,))[0][0] == 1
        assert made == indexed
        q = np.ones(dim, np.float32) / np.sqrt(dim)
        ids, vecs = store._load_vectors("child", store.model_id, None)
        best = ids[np.argsort(-(vecs @ q), kind="stable")[:3]].tolist()
        assert [pk for pk, _ in store.vector_search(q, 3)] == best or indexed  # (exact where no index)
    finally:
        store.close()


def _second(store, project=None):
    """Another store object (another connection) on the same database and project."""
    return Store.open(store.url, settings=SMALL, embedder=CountingEmbedder(), project=project or store.project)


def test_concurrent_rechunks_of_a_chapter_store_it_once(make_store):
    a = make_store(SMALL)
    a.add_document("d", [("c", ["River and mountain. Tea in winter.\n\n", "Snow on the market. Rain.\n\n"])])
    a.rechunk_dirty()
    b = _second(a)
    bid = a.blocks()[0].id
    a.edit_block(bid, "The teacher sold a sword. The price rose.\n\n")
    raced = []
    plan = b._plan

    def plan_while_another_writer_finishes(snap, force, *cut):
        out = plan(snap, force, *cut)
        if not raced:  # between b's snapshot and b's write, a re-chunks the same chapter
            raced.append(a.rechunk_block(bid))
        return out

    b._plan = plan_while_another_writer_finishes
    r = b.rechunk_block(bid)
    b.close()
    assert raced[0].status == "rechunked" and r.status == "clean"
    chapter = a.get_block(bid).chapter_id
    ids = [c.dotted_id for c in a.chunks(chapter_id=chapter)]
    assert len(ids) == len(set(ids))  # one set of chunks, not two
    check_invariants(a, SMALL)


def test_ids_of_another_project_are_unknown_there(make_store):
    a = make_store(SMALL)
    did = a.add_document("d", [("c", ["River and mountain. Tea in winter.\n\n"])])
    a.rechunk_dirty()
    bid = a.blocks()[0].id
    before = a.get_block(bid)
    other = _second(a, project=f"{a.project}-other")
    try:
        for call in (lambda: other.edit_block(bid, "Changed.\n\n"), lambda: other.delete_block(bid),
                     lambda: other.mark_dirty(bid), lambda: other.rechunk_block(bid),
                     lambda: other.delete_document(did), lambda: other.add_chapter(did),
                     lambda: other.add_block(before.chapter_id, "x")):
            with pytest.raises(StoreError, match=f"belongs to project '{a.project}'"):
                call()
    finally:
        other.close()
    after = a.get_block(bid)
    assert (after.content, after.revision, after.is_dirty) == (before.content, before.revision, False)
    assert len(a.documents()) == 1 and len(a.chapters(did)) == 1


def test_opening_without_create_needs_the_project(make_store):
    a = make_store(SMALL)
    with pytest.raises(StoreError, match="no project 'nope'"):
        Store.open(a.url, settings=SMALL, embedder=CountingEmbedder(), project="nope", create=False)
    assert "nope" not in [p[1] for p in a.projects()]
    Store.open(a.url, settings=SMALL, embedder=CountingEmbedder(), project=a.project, create=False).close()


def test_sqlite_file_deleted_under_an_open_store_is_an_error_not_lost_writes(tmp_path):
    path = tmp_path / "gone.db"
    s = Store.open(str(path), settings=SMALL, embedder=CountingEmbedder())
    s.add_document("d", [("c", ["River and mountain.\n\n"])])
    for f in tmp_path.iterdir():
        f.unlink()
    with pytest.raises(StoreError, match="deleted or replaced"):
        s.add_document("later", [("c", ["Written after the delete.\n\n"])])
    with pytest.raises(StoreError, match="deleted or replaced"):
        s.generation()  # what the service's health check reads
    s.close()
    with pytest.raises(StoreError, match="no database"):
        Store.open(str(path), settings=SMALL, create=False)


def test_a_renumbered_parent_takes_its_bubbles_along(make_store):
    s = make_store(SMALL)
    long_sentence = " ".join(["river"] * 30) + ".\n\n"  # one sentence over the child limit: a forced split
    opening = "".join(f"The teacher sold sword number {i} at the market. " for i in range(5)) + "\n\n"
    s.add_document("d", [("c", [opening, long_sentence])])
    s.rechunk_dirty()
    first = s.blocks()[0].id
    before = [b.context["where"] for b in s.bubbles()]
    assert before == ["parent 1.2"]  # the river block's own parent
    s.edit_block(first, "".join(f"The teacher sold sword number {i} at the market. " for i in range(12)) + "\n\n")
    assert s.rechunk_block(first).parents_kept == 1  # the river parent is kept, renumbered
    owner = {c.dotted_id: c for c in s.chunks(level="parent")}
    after = [b.context["where"] for b in s.bubbles()]
    assert before and len(after) == len(before) and after != before  # renumbered, and followed
    for where in after:
        assert "river" in owner[where.split()[-1]].content


def test_documents_with_text_and_reembed_on_both_backends(make_store):
    # issue 21: the service finds a stored copy of a text; ingest re-embeds a project for a new embedder
    s = make_store(settings=Settings(), embedder=CountingEmbedder(32))
    a = s.add_document("a", [("t", ["One block. ", "Two blocks.\n\n"])])
    s.add_document("b", [(None, ["Another text entirely.\n"])])
    same_len = s.add_document("c", [(None, ["One block. ", "Two blockz.\n\n"])])  # same length, other text
    assert s.documents_with_text("One block. Two blocks.\n\n") == [a]
    assert s.documents_with_text("One block.") == [] and same_len not in s.documents_with_text("x" * 24)
    s.rechunk_dirty()
    assert set(s.stored_embedders()) == {s.model_id} and s.reembed() == []  # nothing embedded otherwise


def test_store_open_reads_the_settings_as_the_cli_does(tmp_path, monkeypatch):
    """``Store.open(path)`` with no settings reads ``LOGICHUNK_*`` as every CLI verb does: a user who set
    ``LOGICHUNK_EMBEDDER=hash`` for ``logichunk ingest`` gets the same embedder from the library, not the default
    (which searched the hash-embedded chunks with E5 and found nothing)."""
    from logichunk.store import Store

    monkeypatch.setenv("LOGICHUNK_EMBEDDER", "hash:64")
    monkeypatch.setenv("LOGICHUNK_TOP_K", "3")
    with Store.open(str(tmp_path / "a.db")) as s:
        assert s.settings.top_k == 3 and s.model_id == "hash-v2-d64"
    monkeypatch.delenv("LOGICHUNK_TOP_K")
    with Store.open(str(tmp_path / "a.db"), settings=Settings(embedder="hash:32")) as s:  # given: as given
        assert s.settings.top_k == Settings().top_k and s.model_id == "hash-v2-d32"


def test_chunks_of_equal_text_are_found_in_key_order_on_every_backend(make_store):
    """Six files with the same paragraph: the chunks score alike, and which three a top-3 search returns was an
    accident of each backend's partition (SQLite gave files 1, 2, 4 and PostgreSQL 1, 2, 3). Equal scores are
    taken by key now, exact and approximate, in process and in pgvector."""
    from logichunk.store.ingest import ingest_text

    store = make_store(settings=SMALL, embedder="hash:64")
    for i in range(6):
        ingest_text(store, f"f{i}", f"The cat sat on the mat near the door.\n\nA different paragraph {i} about dogs.\n")
    store.rechunk_dirty()
    q = store.embed_query("cat on the mat")
    same = sorted(c.pk for c in store.chunks(level="child") if c.content.startswith("The cat"))
    for exact in (None, True, False):
        kw = {} if exact is None else {"exact": exact}
        if exact is not None and type(store).__name__ != "PostgresStore":
            continue  # (the in-process index has one path; pgvector an exact scan and an HNSW one)
        got = store.vector_search(q, 3, "child", **kw)
        assert [pk for pk, _ in got] == same[:3], (exact, got, same)

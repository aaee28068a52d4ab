"""The similarity graph over a store, on both backends: persistence, incremental update after an
edit (equal to a rebuild), retrieve() graph modes with exact spans, the CLI."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import json

import numpy as np
import pytest

from logichunk.cli import main
from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.index import graph_store
from logichunk.index.graph_store import drop_graph, position_key, sync_graph
from logichunk.retrieve import retrieve
from logichunk.store import Store
from logichunk.store.ingest import ingest_text
from pg_fixture import CountingEmbedder, backend, make_store, pg_url  # noqa: F401

EN = ("# Darwin\n\nCharles Darwin sailed on the Beagle as a naturalist. He collected finches on the Galapagos "
      "islands. The finches had beaks shaped by their food.\n\nBack in England he wrote On the Origin of Species. "
      "The book argued for natural selection. It was published in 1859 by John Murray.\n\n"
      "# Murray\n\nJohn Murray was a publisher in London. His firm also published Jane Austen and Lord Byron. "
      "The house stood on Albemarle Street.\n\n")
ZH = ("第一章 桃花源\n\n晋太元中，武陵人捕鱼为业。缘溪行，忘路之远近。忽逢桃花林，夹岸数百步，中无杂树。"
      "芳草鲜美，落英缤纷。渔人甚异之。\n\n林尽水源，便得一山，山有小口，仿佛若有光。便舍船，从口入。"
      "初极狭，才通人。复行数十步，豁然开朗。\n\n")
OTHER = ("Finches are small passerine birds. Their beaks vary with diet. Seed eaters have thick beaks.\n\n"
         "A publisher prints and sells books. London had many publishers in the nineteenth century.\n\n")


def small_settings(**kw) -> Settings:
    return Settings(max_parent_size=300, min_parent_size=40, child_min_size=30, child_target_size=80,
                    child_max_size=160, **kw)


@pytest.fixture
def filled(make_store):
    store = make_store(settings=small_settings(), embedder=CountingEmbedder(64))
    for title, text in (("darwin", EN), ("taohua", ZH), ("birds", OTHER)):
        ingest_text(store, title, text)
    store.rechunk_dirty()
    return store


def _edges(g):
    return [(a, b, k) for a, b, k, _ in g.edges()]


def test_graph_of_a_store_has_its_child_chunks_and_their_sentences(filled):
    g, rep = sync_graph(filled)
    children = filled.chunks(level="child")
    assert rep.status == "built" and g.n_chunks == len(children) > 5
    assert g.keys.tolist() == sorted(c.pk for c in children)
    by = {c.pk: c for c in children}
    for i, k in enumerate(g.keys.tolist()):
        c = by[k]
        assert g.texts[i] == c.content and g.docs[i] == c.document_id and g.labels[i] == c.dotted_id
        assert g.offset(i) == c.start and g.positions[i] == position_key(c.dotted_id)
    assert g.n_sentences >= g.n_chunks and g.n_edges > 0
    assert sync_graph(filled)[1].status == "fresh"


def test_graph_persists_and_reloads_without_embedding(make_store, backend, tmp_path):
    emb = CountingEmbedder(64)
    store = make_store(settings=small_settings(), embedder=emb, project="graph-persist")
    ingest_text(store, "darwin", EN)
    ingest_text(store, "birds", OTHER)
    store.rechunk_dirty()
    g, _ = sync_graph(store)
    url = store.url
    store.close()
    emb2 = CountingEmbedder(64)
    again = Store.open(url, settings=small_settings(), embedder=emb2, project="graph-persist")
    try:
        g2, rep = sync_graph(again)
        assert rep.status == "loaded" and rep.embedded_sentences == 0 and emb2.calls == 0
        assert _edges(g2) == _edges(g) and np.array_equal(g2.keys, g.keys) and g2.texts == g.texts
        assert np.array_equal(g2.sent_start, g.sent_start) and np.allclose(g2.sent_vecs, g.sent_vecs)
        assert np.allclose(np.sort(g2.edge_weight), np.sort(g.edge_weight), atol=1e-5)
        # same answers from the reloaded graph
        for mode in ("graph-ssg", "graph-tri"):
            assert [h.context for h in retrieve(again, "finches beaks", mode=mode)] == \
                [h.context for h in retrieve(again, "finches beaks", mode=mode)]
    finally:
        again.close()


def test_editing_a_block_updates_the_graph_like_a_rebuild(filled):
    g0, _ = sync_graph(filled)
    blocks = filled.blocks()
    target = next(b for b in blocks if "Origin of Species" in b.content)
    filled.edit_block(target.id, "Back home he wrote a famous book about evolution. Critics attacked it at once. "
                                 "Later editions answered them.\n\n")
    filled.rechunk_block(target.id)
    calls = filled.embedder.calls
    g1, rep = sync_graph(filled)
    assert rep.status == "updated" and rep.added >= 1 and rep.removed >= 1
    assert 0 < rep.relinked < g1.n_chunks  # not everything
    assert filled.embedder.calls == calls  # the new sentences were embedded by the re-chunk already (cache)
    assert any("Critics attacked it at once." == g1.sentence_text(j) for j in range(g1.n_sentences))
    assert not any("natural selection" in t for t in g1.texts)
    # equal to a build from scratch of the same store
    drop_graph(filled)
    g2, rep2 = sync_graph(filled)
    assert rep2.status == "built"
    assert _edges(g1) == _edges(g2) and g1.texts == g2.texts and np.array_equal(g1.sent_start, g2.sent_start)
    assert g1.labels == g2.labels and np.array_equal(g1.positions, g2.positions)


def test_stored_rows_follow_an_edit_and_a_deleted_document(filled):
    sync_graph(filled)
    docs = {t: d for d, t, _ in filled.documents()}
    filled.delete_document(docs["birds"])
    g, rep = sync_graph(filled)
    assert rep.removed > 0 and rep.added == 0
    graph_store._CACHE.clear()  # a new process: reads the tables
    g2, rep2 = sync_graph(filled)
    assert rep2.status == "loaded" and _edges(g2) == _edges(g)
    assert set(g2.docs) == {docs["darwin"], docs["taohua"]}
    rows = filled._q("SELECT COUNT(*) FROM graph_nodes WHERE project_id = ?", (filled.project_id,))
    assert rows[0][0] == g.n_chunks


def test_rows_of_chunks_gone_before_a_load_are_deleted(filled):
    """Every CLI call and every restart reads the graph from the tables; the rows of chunks deleted since
    the last sync were left out of the loaded graph, so no sync ever deleted them: a database edited all
    day grew without end (4 KB of sentence vector per sentence). The next sync deletes them."""
    sync_graph(filled)
    docs = {t: d for d, t, _ in filled.documents()}
    filled.delete_document(docs["birds"])
    target = next(b for b in filled.blocks() if "Origin of Species" in b.content)
    filled.edit_block(target.id, "Back home he kept pigeons. He bred them for years.\n\n")
    filled.rechunk_block(target.id)
    graph_store._CACHE.clear()  # a new process: reads the tables

    def dead(table: str) -> int:
        return filled._q(f"SELECT COUNT(*) FROM {table} g LEFT JOIN chunks c ON c.pk = g.chunk_pk "
                         "WHERE g.project_id = ? AND c.pk IS NULL", (filled.project_id,))[0][0]

    assert dead("graph_nodes") > 0 and dead("graph_sentences") > 0  # (what a search used to leave behind)
    g, rep = sync_graph(filled)
    assert rep.status == "loaded" and rep.removed > 0
    assert dead("graph_nodes") == 0 and dead("graph_sentences") == 0
    assert filled._q("SELECT COUNT(*) FROM graph_edges g LEFT JOIN chunks c ON c.pk = g.src_pk "
                     "WHERE g.project_id = ? AND c.pk IS NULL", (filled.project_id,))[0][0] == 0
    graph_store._CACHE.clear()
    g2, _ = sync_graph(filled)
    assert _edges(g2) == _edges(g) and g2.n_chunks == g.n_chunks


def test_an_unchanged_graph_loads_without_building_a_neighbour_index(filled, monkeypatch):
    """A new process that loads an unchanged graph built a private HNSW index of every chunk first (62 s at
    51k chunks) although no edge was to be found."""
    g, _ = sync_graph(filled)
    graph_store._CACHE.clear()

    def no(*_a, **_k):
        raise AssertionError("a neighbour index was built for an unchanged graph")

    monkeypatch.setattr(graph_store, "_ann_for", no)
    g2, rep = sync_graph(filled)
    assert rep.status == "loaded" and _edges(g2) == _edges(g)


def test_other_process_rows_are_picked_up(make_store, backend):
    """Two store objects on one database: the second sees the first one's graph and its updates."""
    a = make_store(settings=small_settings(), embedder=CountingEmbedder(64), project="shared-graph")
    ingest_text(a, "darwin", EN)
    a.rechunk_dirty()
    sync_graph(a)
    b = Store.open(a.url, settings=small_settings(), embedder=CountingEmbedder(64), project="shared-graph")
    try:
        assert sync_graph(b)[1].status == "loaded"
        ingest_text(a, "birds", OTHER)
        a.rechunk_dirty()
        ga, _ = sync_graph(a)
        gb, rep = sync_graph(b)
        assert rep.status == "loaded" and _edges(gb) == _edges(ga)
    finally:
        b.close()


def test_changed_edge_settings_relink_every_edge(filled):
    g, _ = sync_graph(filled)
    from logichunk.index.graph import GraphParams

    g2, rep = sync_graph(filled, GraphParams(cross_k=1, intra_k=0))
    assert rep.status == "built" and rep.embedded_sentences == 0
    assert (g2.edge_kind == 2).sum() == 0 and len(g2.edges()) < len(g.edges())


def test_empty_store_gives_empty_results(make_store):
    store = make_store(settings=small_settings(), embedder=CountingEmbedder(64))
    for mode in ("graph-basic", "graph-ssg", "graph-tri", "graph-hybrid"):
        res = retrieve(store, "anything at all", mode=mode)
        assert len(res) == 0 and res.result.stop == "empty" and res.notes


@pytest.mark.parametrize("mode", ["graph-basic", "graph-ssg", "graph-tri", "graph-hybrid"])
def test_graph_modes_return_exact_sentence_spans_and_a_path(filled, mode):
    blocks = {b.id: b.content for b in filled.blocks()}
    ends = 0
    for q in ("Darwin finches beaks", "who published the book", "渔人看到了什么"):
        res = retrieve(filled, q, mode=mode, top_k=4)
        assert 0 < len(res) <= 4 and res.mode == mode and res.path
        seen = set()
        for h in res:
            m = h.chunk.meta
            text = m["context_text"]
            s, e = m["sentence_block_span"]
            assert blocks[m["sentence_block_id"]][s:e] == text  # never altered
            # hit.context: the same sentence in the chunk's coordinates (the chapter's blocks from the owner on)
            chapter = [b for b in filled.blocks(m["chapter_id"])]
            at = [b.id for b in chapter].index(m["block_id"])
            joined = "".join(b.content for b in chapter[at:])
            assert joined[h.context.start : h.context.end] == text
            assert h.chunk.span.start <= h.context.start and h.context.end <= h.chunk.span.end
            assert text not in seen
            seen.add(text)
        assert [h.score for h in res] == sorted((h.score for h in res), reverse=True)
        assert {h.chunk.meta["pk"] for h in res} <= {p.key for p in res.path}
        # the jsonl lines: the end sentence in the coordinates the sentence lines use (its block, named)
        end = [r for r in res.records() if r["type"] == "path"][0]["end_sentence"]
        if end is not None:
            a, b = end["span"]
            assert blocks[end["block_id"]][a:b] == end["text"]
            ends += 1
    assert ends or mode != "graph-tri"  # (triangulation ends at a sentence here)


def test_graph_modes_reject_bad_top_k(filled):
    with pytest.raises(InputError):
        retrieve(filled, "x", mode="graph-ssg", top_k=0)


def test_settings_validate_graph_values():
    with pytest.raises(InputError):
        Settings(graph_similarity_threshold=2.0)
    with pytest.raises(InputError):
        Settings(graph_neighbours="faiss")
    with pytest.raises(InputError):
        Settings(graph_max_results=0)
    assert Settings.load(env={"LOGICHUNK_GRAPH_EARLY_STOP": "false"}).graph_early_stop is False
    s = Settings()
    assert (s.graph_similarity_threshold, s.graph_max_hops, s.graph_min_sentences, s.graph_max_results) == (
        0.3, 5, 10, 10)


def test_migration_adds_graph_tables_to_a_version_1_database(tmp_path):
    path = str(tmp_path / "old.db")
    s = Store.open(path, embedder=CountingEmbedder(64))
    with s.tx():
        for t in ("graph_state", "graph_nodes", "graph_sentences", "graph_edges"):
            s._x(f"DROP TABLE {t}")
        s._x("DELETE FROM schema_version WHERE version = 2")
    s.close()
    again = Store.open(path, settings=small_settings(), embedder=CountingEmbedder(64))
    try:
        assert again.schema_version() == 2
        ingest_text(again, "darwin", EN)
        again.rechunk_dirty()
        assert sync_graph(again)[0].n_chunks > 0
    finally:
        again.close()


# --------------------------------------------------------------------------- CLI


def test_cli_search_graph_modes_and_graph_verbs(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "darwin.md").write_text(EN, encoding="utf-8")
    (docs / "taohua.txt").write_text(ZH, encoding="utf-8")
    db = str(tmp_path / "kb.db")
    common = ["--db", db, "--embedder", "hash"]
    assert main(["ingest", str(docs), *common, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["graph", "build", *common, "--format", "jsonl"]) == 0
    rec = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rec["status"] == "built" and rec["chunks"] > 0 and rec["sentences"] >= rec["chunks"]
    assert main(["search", "Darwin finches", "--mode", "graph-ssg", "--format", "jsonl", "--top-k", "3", *common]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    sents = [x for x in lines if x["type"] == "sentence"]
    path = [x for x in lines if x["type"] == "path"]
    assert 0 < len(sents) <= 3 and len(path) == 1 and path[0]["path"][0]["via"] == "anchor"
    store = Store.open(db, settings=Settings(embedder="hash"))
    try:
        blocks = {b.id: b.content for b in store.blocks()}
    finally:
        store.close()
    for x in sents:
        assert blocks[x["block_id"]][x["span"][0] : x["span"][1]] == x["text"]
    assert main(["search", "渔人看到了什么", "--mode", "graph-tri", *common]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# path (graph-tri, stopped:") and "score" in out
    assert main(["graph", "stats", *common]) == 0
    assert capsys.readouterr().out.startswith("graph loaded:")  # a new process reads the stored graph
    assert main(["graph", "drop", *common]) == 0
    assert main(["graph", "stats", *common, "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["status"] == "built"


def test_cli_unknown_mode_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["search", "x", "--mode", "graph-nope", "--db", str(tmp_path / "x.db")])


def test_concurrent_searches_share_one_sync(filled):
    import threading

    results, errors = [], []

    def run():
        try:
            results.append([h.context for h in retrieve(filled, "Darwin finches", mode="graph-ssg")])
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 4 and all(r == results[0] for r in results)
    rows = filled._q("SELECT COUNT(*) FROM graph_state WHERE project_id = ?", (filled.project_id,))
    assert rows[0][0] == 1


@pytest.mark.skipif(not __import__("logichunk.index.vectors", fromlist=["x"]).hnsw_available(),
                    reason="hnswlib not installed")
def test_hnsw_neighbours_on_a_store_follow_edits(make_store):
    store = make_store(settings=small_settings(graph_neighbours="hnsw"), embedder=CountingEmbedder(64))
    for title, text in (("darwin", EN), ("taohua", ZH), ("birds", OTHER)):
        ingest_text(store, title, text)
    store.rechunk_dirty()
    g, rep = sync_graph(store)
    assert rep.neighbours == "hnsw" and g.n_edges > 0
    exact, _ = sync_graph(store, __import__("logichunk.index.graph", fromlist=["x"]).GraphParams(
        neighbours="exact", similarity_threshold=0.3, intra_k=3, cross_k=3), persist=False)
    both = set(_edges(g)) & set(_edges(exact))
    assert len(both) >= 0.9 * len(_edges(exact))  # a tiny collection: HNSW is all but exact
    b = next(x for x in store.blocks() if "finches" in x.content)
    store.edit_block(b.id, "Finches are birds of many islands. Each island has its own beak shape.\n\n")
    store.rechunk_block(b.id)
    g2, rep2 = sync_graph(store)
    assert rep2.status == "updated" and rep2.neighbours == "hnsw" and rep2.added > 0
    assert set(g2.keys.tolist()) == {c.pk for c in store.chunks(level="child")}
    assert len(retrieve(store, "island beaks", mode="graph-ssg")) > 0


def test_a_store_embedded_with_another_model_says_so(tmp_path):
    path = str(tmp_path / "m.db")
    a = Store.open(path, settings=small_settings(), embedder=CountingEmbedder(64))
    ingest_text(a, "darwin", EN)
    a.rechunk_dirty()
    a.close()
    from logichunk.models import HashEmbedder

    b = Store.open(path, settings=small_settings(), embedder=HashEmbedder(32))  # another model id
    try:
        res = retrieve(b, "finches", mode="graph-ssg")
        assert len(res) == 0 and "not with the current embedder" in res.notes[0]
    finally:
        b.close()

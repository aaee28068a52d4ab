"""``logichunk search`` in a graph mode gives its sentences what the other modes' hits carry: the ref of the
chunk holding each (jsonl and the table) and its origin, a document or a conversation topic (jsonl)."""

from __future__ import annotations

import json

import pytest

from logichunk.cli import main
from logichunk.models.registry import resolve_embedder
from logichunk.store import Store
from logichunk.store.ingest import ingest_text
from logichunk.store.refs import make_ref

DOC = ("Charles Darwin sailed on the Beagle as a naturalist. He collected finches on the Galapagos islands. "
       "The finches had beaks shaped by their food.\n\nBack in England he wrote On the Origin of Species.\n\n")
TOPIC = ("User: how do I keep sourdough from sticking?\nAssistant: Flour the banneton with rice flour. A wetter "
         "dough sticks more, so lower the hydration a little.\n\n")


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "kb.db")
    store = Store.open(path, embedder=resolve_embedder("hash").model)
    try:
        ingest_text(store, "darwin", DOC)
        store.add_document("sourdough [chat #0]", [("sourdough", [TOPIC])], source="memory:chat#0")
        store.rechunk_dirty()
    finally:
        store.close()
    return path


@pytest.mark.parametrize("mode", ["graph-ssg", "graph-basic"])
def test_graph_sentences_carry_origin_and_the_ref_of_their_chunk(db, capsys, mode):
    common = ["--db", db, "--embedder", "hash"]
    last: list[dict] = []
    sents = []
    for query in ("Darwin finches on the Beagle", "sourdough sticking rice flour"):
        assert main(["search", query, "--mode", mode, "--format", "jsonl", "--top-k", "10", *common]) == 0
        last = [r for r in map(json.loads, capsys.readouterr().out.splitlines()) if r["type"] == "sentence"]
        sents += last
    store = Store.open(db, embedder=resolve_embedder("hash").model)
    try:
        rows = store.chunks_by_pk([r["chunk"] for r in sents])
    finally:
        store.close()
    for r in sents:
        chunk = rows[r["chunk"]]
        assert r["ref"] == make_ref(r["document_id"], r["id"], chunk.content) and r["text"] in chunk.content
        want = {"origin": "conversation", "conversation_id": "chat", "topic": 0} \
            if r["source"] == "memory:chat#0" else {"origin": "document"}
        assert {k: r.get(k) for k in want} == want and ("conversation_id" in r) == (want["origin"] == "conversation")
    assert {r["origin"] for r in sents} == {"document", "conversation"}
    assert main(["search", "sourdough sticking rice flour", "--mode", mode, "--top-k", "10", *common]) == 0
    table = capsys.readouterr().out.splitlines()
    head = next(k for k, line in enumerate(table) if line.lstrip().startswith("#  "))
    assert " ref " in table[head]
    assert [line.split()[2] for line in table[head + 1:]] == [r["ref"] for r in last]


@pytest.mark.parametrize("mode", ["graph-tri", "graph-ssg"])
def test_the_walk_has_one_shape_in_the_cli_http_and_mcp(db, capsys, mode):
    """The same query's walk: the CLI's path line had no algorithm or sentences, HTTP's `graph` no mode and
    its sentences in their chunk's coordinates, MCP's was `path`. Now one dict (``GraphResults.walk``) in all
    three, its sentences in their blocks as the hits' ``sentence_block_*``; MCP keeps `path` as an alias."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from logichunk.config import Settings
    from logichunk.integrations import kb
    from logichunk.service.app import create_app

    query = "Darwin finches on the Beagle"
    assert main(["search", query, "--mode", mode, "--format", "jsonl", "--top-k", "4", "--db", db, "--embedder",
                 "hash"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    (cli,) = [{k: v for k, v in x.items() if k not in ("type", "notes")} for x in lines if x["type"] == "path"]
    key = "k" * 24
    with TestClient(create_app(Settings(db=db, embedder="hash"), api_key=key)) as c:
        r = c.post("/api/projects/default/search", headers={"X-API-Key": key},
                   json={"query": query, "mode": mode, "top_k": 4, "include": "all"})
        assert r.status_code == 200, r.text
        http = r.json()["graph"]
    stores = kb.Stores(Settings(db=db, embedder="hash"))
    try:
        mcp = kb.search(stores.get(None), query, kb.Limits(), mode, 4, "all")
    finally:
        stores.close()
    assert cli == http == mcp["graph"] == mcp["path"]
    assert cli["mode"] == mode and cli["algorithm"] == mode.removeprefix("graph-") and cli["path"]
    blocks = {}
    store = Store.open(db, embedder=resolve_embedder("hash").model)
    try:
        blocks = {b.id: b.content for b in store.blocks()}
    finally:
        store.close()
    said = [x for x in lines if x["type"] == "sentence"]
    assert [s["text"] for s in cli["sentences"]] == [x["text"] for x in said]
    for s in [*cli["sentences"], *([cli["end_sentence"]] if cli["end_sentence"] else [])]:
        a, b = s["span"]
        assert blocks[s["block_id"]][a:b] == s["text"]

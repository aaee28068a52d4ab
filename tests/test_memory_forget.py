"""Deleting a conversation (memory/forget.py, ``logichunk memory forget``): its archived topics and its open
turns go, together, and nothing of another conversation. Deleting the topics' documents alone left the open
turns, which the next Perception (or MCP ``remember``) of that id observed again and archived: the deleted
conversation came back."""

from __future__ import annotations

import json

import pytest

from logichunk.cli import main
from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.integrations import kb
from logichunk.integrations.conversations import Conversations
from logichunk.memory import LogicalBlock, Perception, forget, load_conversation, topics

TURNS = [("How do I read a CSV file into a pandas DataFrame?", "Use pandas.read_csv('file.csv')."),
         ("Can I sort that DataFrame by date afterwards?", "df.sort_values('date')."),
         ("Recommend a vegetarian lasagna recipe for six people", "Layer pasta with ricotta and spinach."),
         ("My bank password is hunter2, keep it", "Noted.")]


@pytest.fixture
def memory(tmp_path):
    stores = kb.Stores(Settings(db=str(tmp_path / "m.db"), embedder="hash:128"))
    yield Conversations(stores.get(None, create=True), kb.Limits())
    stores.close()


def test_forget_deletes_the_topics_and_the_open_turns_of_one_conversation(memory):
    store = memory.project.store
    for u, a in TURNS[:2]:
        memory.remember("keep", u, a)
    memory.end("keep")
    p = Perception(store=store, conversation_id="gone", lookahead=0)
    for u, a in TURNS[:3]:
        p.observe(LogicalBlock(u, a))
    p.flush()  # archived
    p.observe(LogicalBlock(*TURNS[3]))  # open: in the store, not archived (the process may die here)
    archived = [t.document_id for t in topics(store, "gone")]
    assert archived and Perception(store=store, conversation_id="gone").resumed == 1

    done = forget(store, "gone")
    assert (sorted(done.documents), done.open_turns) == (sorted(archived), 1)
    assert topics(store, "gone") == [] and all(d not in {x[0] for x in store.documents()} for d in archived)
    with pytest.raises(InputError, match="no archived conversation"):
        load_conversation(store, "gone")
    again = Perception(store=store, conversation_id="gone")
    assert again.resumed == 0 and again.observe(LogicalBlock("hello again")).turn == 0
    said = memory.recall("password hunter2", conversation_id="gone")
    assert not said["episodes"] and "hunter2" not in json.dumps(said["open_turns"])
    assert [(b.user, b.assistant) for b in load_conversation(store, "keep")] == TURNS[:2]  # the other one stays
    with pytest.raises(InputError, match="no conversation 'nobody'"):
        forget(store, "nobody")


def test_the_cli_forgets_and_says_so_in_one_line(memory, tmp_path, capsys):
    memory.remember("chat-1", *TURNS[0])
    db = str(tmp_path / "m.db")
    assert main(["memory", "forget", "chat-1", "--db", db, "--embedder", "hash:128", "--format", "jsonl"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["conversation_id"], out["topics"], out["open_turns"], out["deleted"]) == ("chat-1", 0, 1, True)
    assert main(["memory", "forget", "chat-1", "--db", db, "--embedder", "hash:128"]) == 2
    err = capsys.readouterr().err
    assert "no conversation 'chat-1'" in err and err.count("\n") == 1


def test_an_agent_forgets_a_conversation_over_mcp(tmp_path):
    """The MCP tool: the conversation's topics and open turns go, the server's cached perception with them (a
    remember after it starts the id anew at turn 0), and an unknown id is a tool error of one line."""
    import anyio
    from mcp import Client

    from logichunk.integrations.mcp_server import build_server

    settings = Settings(db=str(tmp_path / "m.db"), embedder="hash:128")
    stores = kb.Stores(settings)

    async def main() -> None:
        async with Client(build_server(stores, settings)) as agent:
            for u, a in TURNS:
                await agent.call_tool("remember", {"conversation_id": "c", "user": u, "assistant": a})
            await agent.call_tool("end_conversation", {"conversation_id": "c"})
            await agent.call_tool("remember", {"conversation_id": "c", "user": TURNS[3][0]})
            gone = (await agent.call_tool("forget_conversation", {"conversation_id": "c"})).structured_content
            assert gone["topics"] >= 1 and gone["open_turns"] == 1 and gone["deleted"] is True
            said = (await agent.call_tool("recall", {"query": "bank password hunter2", "conversation_id": "c"}))
            assert not said.structured_content["episodes"] and "open_turns" not in said.structured_content
            again = await agent.call_tool("remember", {"conversation_id": "c", "user": "hello again"})
            assert again.structured_content["turn"] == 0
            await agent.call_tool("forget_conversation", {"conversation_id": "c"})
            r = await agent.call_tool("forget_conversation", {"conversation_id": "c"})
            assert r.is_error and "no conversation 'c'" in r.content[0].text and "\n" not in r.content[0].text

    try:
        anyio.run(main)
    finally:
        stores.close()

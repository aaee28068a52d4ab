"""The open turns of a conversation kept in the store (memory/journal.py), shared by the library's
Perception and the MCP server's conversations, and the one rule for an empty assistant reply."""

from __future__ import annotations

import pytest

from logichunk.config import Settings
from logichunk.integrations import kb
from logichunk.integrations.conversations import Conversations
from logichunk.memory import LogicalBlock, Perception, load_conversation
from pg_fixture import pg_url  # noqa: F401

TURNS = [("How do I read a CSV file into a pandas DataFrame?", "Use pandas.read_csv('file.csv')."),
         ("Can I sort that DataFrame by date afterwards?", "df.sort_values('date')."),
         ("And keep only the rows of 2024?", "df[df.date.dt.year == 2024]")]


@pytest.fixture
def memory(tmp_path):
    stores = kb.Stores(Settings(db=str(tmp_path / "m.db"), embedder="hash:128"))
    yield Conversations(stores.get(None, create=True), kb.Limits())
    stores.close()


@pytest.mark.parametrize("reply", ["", " \n "])
def test_an_empty_or_blank_reply_is_taken_as_it_is(memory, reply):
    """remember refused a blank reply ("assistant is empty") but took an empty one; the library takes both: a
    user turn awaiting its answer is a turn, never lost."""
    out = memory.remember("c", "What is the capital of Australia?", reply)
    assert out["turn"] == 0
    memory.end("c")
    assert [(b.user, b.assistant) for b in load_conversation(memory.project.store, "c")] == \
        [("What is the capital of Australia?", reply)]
    with pytest.raises(Exception, match="at most 10"):
        Conversations(memory.project, kb.Limits(max_text_chars=10)).remember("d", "hi", " " * 11)


def test_the_library_carries_on_a_conversation_the_server_left_open(memory):
    """One table of open turns: a conversation remembered over MCP and not ended is observed again by a
    library Perception on the same store, and numbered on."""
    for u, a in TURNS[:2]:
        memory.remember("c", u, a)
    store = memory.project.store
    p = Perception(store=store, conversation_id="c", lookahead=0)
    assert p.resumed == 2
    p.observe(LogicalBlock(*TURNS[2]))
    p.flush()
    assert [(b.user, b.assistant) for b in load_conversation(store, "c")] == TURNS


@pytest.mark.parametrize("first_flushes", [False, True])
def test_two_writers_of_one_conversation_lose_no_turn(memory, first_flushes):
    """Two agents on one conversation_id at once (each its own Perception on one store): both numbered their
    turns from 0; the second's clashed with the first's (kept in memory "until the store takes it", never) or,
    once the first had archived and dropped them, was stored and then cut from the archive as archived
    already: its turns silently gone. Now the second is told, in one line, before its turn is observed."""
    store = memory.project.store
    one = Perception(store=store, conversation_id="c", lookahead=0)
    two = Perception(store=store, conversation_id="c", lookahead=0)
    one.observe(LogicalBlock(*TURNS[0]))
    if first_flushes:
        one.flush()
    with pytest.raises(Exception, match=r"conversation 'c': turn 0 is taken .*another writer") as e:
        two.observe(LogicalBlock(*TURNS[1]))
    assert "\n" not in str(e.value) and two.turns_observed == 0
    one.observe(LogicalBlock(*TURNS[2]))
    one.flush()
    assert [(b.user, b.assistant) for b in load_conversation(store, "c")] == [TURNS[0], TURNS[2]]
    again = Perception(store=store, conversation_id="c", lookahead=0)  # a writer that reads the store first
    again.observe(LogicalBlock(*TURNS[1]))
    again.flush()
    assert [(b.user, b.assistant) for b in load_conversation(store, "c")] == [TURNS[0], TURNS[2], TURNS[1]]


def test_two_writers_of_one_conversation_on_postgres_one_is_told(request):
    """PostgreSQL does not serialise transactions as SQLite's file lock does: both writers' checks passed, the
    second's insert then failed on the key (not TurnTaken), and its turn stayed in memory, never stored. The
    check now holds the project's writers off until the first commits, so the second is told in one line."""
    import threading
    import time
    import uuid

    from logichunk.memory import journal
    from logichunk.store import Store

    url = request.getfixturevalue("pg_url")
    project = f"journal-{uuid.uuid4().hex[:8]}"
    first = Store.open(url, embedder="hash:64", project=project)
    second = Store.open(url, embedder="hash:64", project=project)
    try:
        journal.ensure_table(first)
        journal.write(first, "setup", [(0, LogicalBlock(*TURNS[0]))])  # (tables made before the race)
        written = threading.Event()

        def slow_writer() -> None:
            with first.tx():
                journal.write(first, "c", [(0, LogicalBlock(*TURNS[0]))])
                written.set()
                time.sleep(0.5)  # (the second writer checks while this transaction is open)

        t = threading.Thread(target=slow_writer)
        t.start()
        assert written.wait(10)
        with pytest.raises(journal.TurnTaken, match=r"turn 0 is taken"):
            journal.write(second, "c", [(0, LogicalBlock(*TURNS[1]))])
        t.join()
        assert [n for n, _ in journal.rows(second, "c")] == [0]
    finally:
        first.close()
        second.close()

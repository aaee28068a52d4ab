"""Archiving finished topics into the store (SQLite and PostgreSQL) and reading them back exactly."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.errors import InputError
from logichunk.memory import (
    Calibration,
    LogicalBlock,
    Perception,
    ToolCall,
    load_conversation,
    replay,
    search_topics,
    topics,
)
from logichunk.memory.archive import conversations, render_block
from logichunk.retrieve import retrieve
from pg_fixture import CountingEmbedder, backend, make_store, pg_url  # noqa: F401

CODE = [
    LogicalBlock("写一个 Python 贪吃蛇游戏，用 pygame", "好的，这是贪吃蛇游戏的代码：import pygame ……蛇吃到食物会变长。",
                 started_at=100.0, ended_at=104.5, meta={"lang": "zh"}),
    LogicalBlock("继续", "加上了计分板和游戏结束画面。", started_at=110.0, ended_at=111.0),
    LogicalBlock("报错了：pygame.error: video system not initialized", "需要先调用 pygame.init()，已修复。",
                 rewritten_query="贪吃蛇游戏报错：pygame.error: video system not initialized",
                 tool_calls=(ToolCall("run_python", '{"file": "snake.py"}', "Traceback ... pygame.error"),),
                 started_at=120.0, ended_at=125.0),
]
TRIP = [
    LogicalBlock("Plan a three day trip to Kyoto in April: temples, gardens and cherry blossoms",
                 "Day 1: Kiyomizu-dera and Gion; day 2: Arashiyama bamboo grove; day 3: Fushimi Inari.",
                 started_at=500.0, ended_at=502.0),
    LogicalBlock("Which ryokan near Gion has a private onsen?", "Gion Hatanaka and Yoshi-ima both have private baths.",
                 started_at=510.0, ended_at=512.0),
]


def two_topics(embedder) -> Calibration:
    """With the 64-d hash embedder the anchors of these turns have cosines 0.44 (bug report vs the
    game), 0.02 (Kyoto vs the game) and 0.35 (ryokan vs Kyoto): the screen alone splits once, between
    the topics. Lookahead 0: a topic is archived as soon as the next one starts."""
    return Calibration(embedder=embedder.model_id, hi=0.3, lo=0.1)


def test_archive_round_trip(make_store):
    emb = CountingEmbedder(64)
    store = make_store(embedder=emb)
    p = Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="chat-1")
    blocks = CODE + TRIP
    decisions, episodes = replay(blocks, p)
    assert [e.start for e in episodes] == [0, 3], [d.reason for d in decisions]
    assert all(e.document_id for e in episodes)
    # exact reconstruction: text, rewritten query, tool calls, timestamps, meta
    assert load_conversation(store, "chat-1") == blocks
    recs = topics(store, "chat-1")
    assert [(t.index, t.start, t.end, t.turns) for t in recs] == [(0, 0, 2, 3), (1, 3, 4, 2)]
    assert (recs[0].started_at, recs[0].ended_at) == (100.0, 125.0) and recs[1].started_at == 500.0
    assert recs[0].title.startswith("写一个 Python 贪吃蛇游戏") and conversations(store) == ["chat-1"]
    # the topics are ordinary documents: chunked, embedded, found by every retrieval mode
    doc_titles = {d[0]: d[1] for d in store.documents()}
    assert "chat-1 #1" in doc_titles[episodes[1].document_id]
    assert store.counts()["dirty_blocks"] == 0 and store.counts()["child"] > 0
    for mode in ("basic", "parent", "hybrid", "hierarchical"):
        hits = retrieve(store, "Kyoto ryokan onsen", mode=mode, top_k=3)
        assert hits and hits[0].doc_id == episodes[1].document_id, mode
    # the topic index: what did we discuss about X
    hit = search_topics(store, "贪吃蛇 pygame 报错", top_k=2)[0]
    assert hit.topic.index == 0 and "pygame" in hit.text
    khit = search_topics(store, "Kyoto temples cherry blossoms", top_k=1, mode="kernel")
    assert khit and khit[0].topic.index == 1
    assert search_topics(store, "Kyoto", since=400.0, top_k=5)[0].topic.index == 1
    assert all(h.topic.index == 0 for h in search_topics(store, "Kyoto", until=200.0, top_k=5))
    # deleting a topic's document forgets it; the rest of the conversation still reads back
    store.delete_document(episodes[0].document_id)
    assert [t.index for t in topics(store, "chat-1")] == [1]
    assert load_conversation(store, "chat-1") == TRIP


def test_a_deleted_middle_topic_is_reported(make_store):
    emb = CountingEmbedder(64)
    store = make_store(embedder=emb)
    p = Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="c")
    _, episodes = replay(CODE + TRIP + CODE, p)
    assert len(episodes) == 3
    store.delete_document(episodes[1].document_id)
    with pytest.raises(InputError, match="missing turns"):
        load_conversation(store, "c")


def test_two_conversations_and_unknown_ids(make_store):
    emb = CountingEmbedder(64)
    store = make_store(embedder=emb)
    c = Calibration(embedder=emb.model_id, hi=1.0, lo=-1.0)
    for cid, blocks in (("a", CODE), ("b", TRIP)):
        replay(blocks, Perception(store=store, embedder=emb, calibration=c, conversation_id=cid))
    assert load_conversation(store, "a") == CODE and load_conversation(store, "b") == TRIP
    assert conversations(store) == ["a", "b"] and len(topics(store)) == 2
    with pytest.raises(InputError, match="no archived conversation"):
        load_conversation(store, "nope")
    with pytest.raises(InputError, match="^query is only whitespace$"):
        search_topics(store, "  ")



def test_a_conversation_id_of_the_wrong_kind_says_so():
    """``Perception(conversation_id=5)`` was told "conversation_id is empty"."""
    from logichunk.memory.archive import check_conversation_id

    for bad, why in ((5, "must be a string, got int"), (b"c", "must be a string, got bytes"), (None, "is empty"),
                     ("", "is empty"), ("  ", "is empty")):
        with pytest.raises(InputError, match=f"^conversation_id {why}$"):
            check_conversation_id(bad)
    assert check_conversation_id("chat-42") == "chat-42"

def test_indexing_failure_keeps_the_topic(tmp_path):
    from logichunk.store import Store

    emb = CountingEmbedder(64)
    store = Store.open(str(tmp_path / "m.db"), embedder=emb)
    emb.fail = True
    c = Calibration(embedder=emb.model_id, hi=1.0, lo=-1.0)
    p = Perception(store=store, embedder=CountingEmbedder(64), calibration=c, conversation_id="x")
    replay(TRIP, p)
    assert p.archiver.errors and "embedding service down" in p.archiver.errors[0]
    assert load_conversation(store, "x") == TRIP
    assert store.counts()["dirty_blocks"] == 2
    emb.fail = False
    store.rechunk_dirty()
    assert store.counts()["dirty_blocks"] == 0 and retrieve(store, "ryokan onsen", mode="basic", top_k=1)
    store.close()


def test_render_block_reads_as_a_transcript():
    text = render_block(CODE[2])
    assert text.startswith("User: 报错了") and "(Rewritten: 贪吃蛇游戏报错" in text
    assert 'Tool: run_python({"file": "snake.py"}) -> Traceback ... pygame.error' in text and text.endswith("\n\n")


def test_a_store_failure_keeps_the_episode_for_retry(tmp_path):
    from logichunk.store import Store

    emb = CountingEmbedder(64)
    store = Store.open(str(tmp_path / "m.db"), embedder=emb)
    p = Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="r")
    for b in CODE:
        p.observe(b)
    store.close()  # the database goes away mid-conversation
    d = p.observe(TRIP[0])  # the game topic closes now and cannot be archived
    assert d.closed and d.closed[0].document_id is None and p.archive_errors
    assert "closed" in p.archive_errors[0]
    p.archiver.store = Store.open(str(tmp_path / "m.db"), embedder=emb)  # back
    done = p.retry_archive()
    assert [e.index for e in done] == [0] and done[0].document_id and not p.unarchived
    p.flush()
    assert load_conversation(p.archiver.store, "r") == CODE + TRIP[:1]
    p.archiver.store.close()


def test_flush_keeps_the_conversation_and_numbers_on(make_store):
    """flush() renamed the conversation to a random conv-xxxx: an agent that flushed at the end of each
    session and kept its Perception found only the first session under its id."""
    emb = CountingEmbedder(64)
    store = make_store(embedder=emb)
    p = Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="first")
    replay(CODE, p)  # replay ends with flush()
    assert p.conversation_id == "first"
    replay(TRIP, p)
    assert load_conversation(store, "first") == CODE + TRIP and conversations(store) == ["first"]
    assert [(t.index, t.start, t.end) for t in topics(store, "first")] == [(0, 0, 2), (1, 3, 4)]
    p.flush("third")  # (nothing open: only the name changes)
    assert p.conversation_id == "third"
    replay(TRIP, p)
    assert load_conversation(store, "third") == TRIP and conversations(store) == ["first", "third"]
    with pytest.raises(InputError, match="control character"):
        p.flush("a\nb")


def test_turns_not_flushed_survive_the_process(make_store):
    """Turns observed but not flushed lived only in the Perception: a process that died lost them (the
    open topics), and the next one numbered on from the last archived turn, hiding the gap."""
    emb = CountingEmbedder(64)
    store = make_store(embedder=emb)
    whole = CODE + TRIP + CODE
    replay(whole, Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="once"))
    p = Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="c")
    for b in whole[:5]:  # the game topic is archived, the trip's two turns are open ...
        p.observe(b)
    assert [(t.start, t.end) for t in topics(store, "c")] == [(0, 2)] and p.pending() == (3, 5)
    del p  # ... when the process dies, without flush()
    again = Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="c")
    # (the archived game topic left the journal with the state the first perception had then: the new one
    # takes that state and carries the first one's session on, the two open trip turns held as they were)
    assert again.resumed == 2 and again.first_turn == 0 and again.pending() == (3, 5) and again.topic == tuple(TRIP)
    for b in whole[5:]:
        again.observe(b)
    again.flush()
    assert load_conversation(store, "c") == whole  # every turn, each once, in order
    assert [(t.index, t.start, t.end) for t in topics(store, "c")] == \
        [(t.index, t.start, t.end) for t in topics(store, "once")]  # as if it never stopped
    assert Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="c").resumed == 0


class ModelLike:
    """The hash embedder's vectors under a model's name: a store cuts by such a model's sentence vectors
    (``cut_vectors = "embedder"``), not by the words as it does for the hash embedder itself."""

    model_id = "model-like-64"
    dim = 64

    def __init__(self) -> None:
        from logichunk.models import HashEmbedder

        self._hash = HashEmbedder(64)
        self.passages: list[str] = []

    def embed(self, texts, *, kind="passage"):
        if kind == "passage":
            self.passages.extend(texts)
        return self._hash.embed(texts, kind=kind)


def test_a_topic_is_cut_by_its_words_and_only_its_chunks_are_embedded(make_store):
    """With a model embedder the store embedded every sentence of an archived topic to decide its cuts, then
    again inside its chunk (with E5, 40 % of a long replay): a topic is cut by its words now, and the model
    embeds only the chunks a query matches. ``cut_vectors=None`` keeps the store's own cuts."""
    from logichunk.memory.archive import Archiver

    for cut in ("lexical", None):
        emb = ModelLike()
        store = make_store(embedder=emb)
        arch = None if cut == "lexical" else Archiver(store, "c", cut_vectors=cut)
        replay(CODE + TRIP, Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="c",
                                       archiver=arch))
        chunks = {c.content for c in store.chunks()}
        assert emb.passages and len(topics(store, "c")) == 2
        assert set(emb.passages) <= chunks if cut == "lexical" else not set(emb.passages) <= chunks
        assert search_topics(store, "ryokan with a private onsen in Gion", top_k=1)[0].topic.index == 1
    with pytest.raises(InputError, match="cut_vectors must be"):
        Archiver(store, "c", cut_vectors="words")


def test_a_conversation_archived_before_continues(make_store):
    """A new Perception on a conversation id that is archived (an agent restarted on it) appends:
    turn and topic numbers go on after the stored ones, nothing is duplicated or reordered."""
    emb = CountingEmbedder(64)
    store = make_store(embedder=emb)
    blocks = CODE + TRIP
    for _ in range(2):
        replay(blocks, Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="chat-1"))
    assert load_conversation(store, "chat-1") == blocks + blocks
    assert [(t.index, t.start, t.end, t.turns) for t in topics(store, "chat-1")] == [
        (0, 0, 2, 3), (1, 3, 4, 2), (2, 5, 7, 3), (3, 8, 9, 2)]


PANDAS = [LogicalBlock("How do I sort a DataFrame in pandas by date?", "Use df.sort_values('date')."),
          LogicalBlock("Can I sort by two columns in pandas?", "df.sort_values(['date', 'price'])")]
MANUAL = [f"To sort a pandas DataFrame by date, call DataFrame.sort_values with by='date'. Sorting pandas frames "
          f"by date column {i} is common.\n" for i in range(200)]


@pytest.mark.parametrize("mode", ["hybrid", "basic", "parent", "hierarchical"])
def test_a_topic_is_found_whatever_else_the_store_holds(make_store, mode):
    """search_topics ranked the top 40 chunks of the whole store and only then kept topics: a knowledge-base
    document (or another conversation) ranked above them hid every topic."""
    from logichunk.models import HashEmbedder

    emb = HashEmbedder(256)
    store = make_store(embedder=emb)
    c = Calibration(embedder=emb.model_id, hi=1.0, lo=-1.0)
    replay(PANDAS, Perception(store=store, embedder=emb, calibration=c, conversation_id="c1"))
    doc = store.add_document("pandas manual", [("Sorting", MANUAL)])
    store.rechunk_chapter(store.chapters(doc)[0][0])
    query = "sort a pandas DataFrame by date"
    assert {h.doc_id for h in retrieve(store, query, mode=mode, top_k=40)} == {doc}, "the manual outranks the topic"
    for conv in (None, "c1"):
        hits = search_topics(store, query, 3, mode=mode, conversation_id=conv)
        assert [(h.topic.conversation_id, h.topic.start, h.topic.end) for h in hits] == [("c1", 0, 1)]


def test_a_turn_the_store_cannot_hold_is_refused_and_the_others_are_archived(make_store):
    """A lone surrogate in one turn kept its whole topic out of the store (document_id None, the reason only
    in archive_errors): every turn of it, the valid ones too, lived only in memory."""
    emb = CountingEmbedder(64)
    store = make_store(embedder=emb)
    p = Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="s")
    with pytest.raises(InputError, match="user holds an unpaired surrogate at character 13"):
        p.observe(LogicalBlock("My cat still \ud83d ignores the litter box", "answer"))
    with pytest.raises(InputError, match="unpaired surrogate"):
        p.observe("bad \udfff text")
    # a NUL, which PostgreSQL text cannot hold, is refused the same way on both backends
    for bad in ({"user": "my log has a NUL \x00 in it", "assistant": "binary"}, {"user": "q", "assistant": "a\x00"},
                {"user": "q", "rewritten_query": "\x00"}, {"user": "q", "tool_calls": [{"name": "cat", "result": "\x00"}]}):
        with pytest.raises(InputError, match="NUL character"):
            p.observe(bad)
    for b in CODE:
        p.observe(b)
    episodes = p.flush()
    assert all(e.document_id for e in episodes) and not p.archive_errors
    assert load_conversation(store, "s") == CODE


def test_search_topics_checks_its_arguments_in_one_line(make_store):
    store = make_store()
    for bad in ("3", 2.0, True, 0):
        with pytest.raises(InputError, match="top_k must be"):
            search_topics(store, "q", top_k=bad)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["en", "zh"]), st.lists(st.floats(0, 1), min_size=1, max_size=3))
def test_a_conversation_stopped_anywhere_any_number_of_times_loses_no_turn(seed, lang, cuts):
    """Invariant of the stored open turns: wherever the processes die (between any two turns, several
    times), the archive ends holding every turn once, in order, in contiguous topics; a stop changes
    nothing archived before it, and the next process observes again only the turns not archived yet
    (the journal holds the open topics: a stop is a session boundary at the oldest open topic's start)."""
    import tempfile

    from logichunk.models import HashEmbedder
    from logichunk.store import Store
    from memory_data import conversation

    blocks = list(conversation(seed, lang).blocks)
    stops = sorted({int(c * len(blocks)) for c in cuts})
    with tempfile.TemporaryDirectory() as folder:
        emb = HashEmbedder(64)
        store = Store.open(f"{folder}/m.db", embedder=emb)
        done = 0
        for stop in [*stops, len(blocks)]:
            before = [(t.index, t.start, t.end) for t in topics(store, "c")]
            p = Perception(store=store, embedder=emb, conversation_id="c")  # a new process
            assert [(t.index, t.start, t.end) for t in topics(store, "c")] == before
            assert p.resumed == done - (before[-1][2] + 1 if before else 0)  # the turns not archived
            for b in blocks[done:stop]:
                p.observe(b)
            done = stop
        p.flush()
        assert load_conversation(store, "c") == blocks
        spans = [(t.index, t.start, t.end) for t in topics(store, "c")]
        assert [i for i, _, _ in spans] == list(range(len(spans))) and spans[0][1] == 0
        assert all(a[2] + 1 == b[1] for a, b in zip(spans[:-1], spans[1:], strict=True)) and spans[-1][2] == len(blocks) - 1
        store.close()


def test_the_open_turns_journal_holds_only_the_open_topics(make_store):
    """A Perception that never flushes kept every turn of its session in the journal (memory_session_turns),
    archived or not: it grew with the conversation. Once a topic is archived its turns leave it (they are
    in memory_turns): the journal holds the turns not yet in a closed episode, and no turn is lost."""
    from logichunk.memory import journal

    emb = CountingEmbedder(64)
    store = make_store(embedder=emb)
    whole = (CODE + TRIP) * 4
    p = Perception(store=store, embedder=emb, calibration=two_topics(emb), conversation_id="c")
    most = 0
    for b in whole:
        p.observe(b)
        first, end = p.pending()
        assert journal.stamp(store, "c") == (end - first, first, end - 1)
        most = max(most, end - first)
    assert len(topics(store, "c")) >= 6 and most <= len(CODE + TRIP)
    p.flush()
    assert load_conversation(store, "c") == whole and journal.stamp(store, "c") == (0, None, None)


def test_the_memory_servers_topics_are_cut_by_their_words_too(make_store):
    """The memory server indexes its topics through its own archiver (after the write transaction) or, when
    its embedder failed then, through ``index_pending_topics``: both cut by the store's setting before,
    embedding every sentence of a topic with a model embedder; they cut by the words now, as the
    :class:`Archiver` does."""
    from logichunk.integrations.conversations import SessionArchiver, index_pending_topics

    for index in ("session", "pending"):
        emb = ModelLike()
        emb.model_id = f"model-like-64-{index}-{uuid.uuid4().hex}"  # (no vector cached by another test's store)
        store = make_store(embedder=emb)
        arch = SessionArchiver(store, "c", 0, 0, None)
        replay(CODE + TRIP, Perception(embedder=emb, calibration=two_topics(emb), conversation_id="c",
                                       archiver=arch))
        assert len(topics(store, "c")) == 2 and not store.chunks()  # stored unchunked until indexed
        emb.passages.clear()
        assert (arch.rechunk() if index == "session" else index_pending_topics(store)) == []
        chunks = {c.content for c in store.chunks()}
        assert emb.passages and set(emb.passages) <= chunks, index

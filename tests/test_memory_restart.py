"""A library conversation restarted anywhere is cut as if it had never stopped.

Before: the journal kept only the open topics' turns, and a new Perception observed them again from the
oldest open topic's start without the kernel, lexical window and review state the first one had there, so a
restart could cut the open topics differently (a topic 4-7 became 4-6 and 7). Now the journal keeps that
state with the turns (:func:`logichunk.memory.journal.save_state`)."""

from __future__ import annotations

import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.memory import Perception
from logichunk.memory.archive import load_conversation, topics
from logichunk.models import HashEmbedder
from logichunk.store import Store
from memory_data import conversation

EMB = HashEmbedder(64)


def _spans(store: Store, conv: str) -> list[tuple[int, int, int, int | None]]:
    return [(t.index, t.start, t.end, t.resumes_topic) for t in topics(store, conv)]


def _run(store: Store, conv: str, blocks: list, stops: list[int]) -> list[tuple]:
    """Feed ``blocks`` to ``conv``, a new Perception (a new process: only the store carries over) at each stop;
    the decisions in the conversation's numbers, with the features they read."""
    done, p, seen = 0, None, []
    for stop in [*stops, len(blocks)]:
        p = Perception(store=store, embedder=EMB, conversation_id=conv)
        for b in blocks[done:stop]:
            d = p.observe(b)
            seen.append((p.first_turn + d.turn, p.first_topic + d.topic, str(d.action), str(d.step), round(d.score, 6),
                         {k: round(v, 6) for k, v in d.features.items()}))
        done = stop
    assert p is not None
    p.flush()
    return seen


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["en", "zh"]), st.lists(st.floats(0, 1), min_size=1, max_size=4))
def test_a_conversation_restarted_anywhere_is_cut_as_the_uninterrupted_one(seed, lang, cuts):
    blocks = list(conversation(seed, lang, topics=5).blocks)
    stops = sorted({int(c * len(blocks)) for c in cuts})
    with tempfile.TemporaryDirectory() as folder, Store.open(f"{folder}/m.db", embedder=EMB) as store:
        whole = _run(store, "whole", blocks, [])
        cut = _run(store, "cut", blocks, stops)
        assert load_conversation(store, "cut") == blocks
        assert cut == whole  # each turn decided on the same evidence
        assert _spans(store, "cut") == _spans(store, "whole")


def test_a_state_that_no_longer_matches_the_stored_turns_is_not_used():
    """Another calibration (or another writer since) makes the saved state stale: the stored open turns are
    observed again from the oldest open topic's start, as before, and none is lost."""
    blocks = list(conversation(7, "en", topics=5).blocks)
    with tempfile.TemporaryDirectory() as folder, Store.open(f"{folder}/m.db", embedder=EMB) as store:
        p = Perception(store=store, embedder=EMB, conversation_id="c")
        for b in blocks[: len(blocks) * 2 // 3]:
            p.observe(b)
        assert topics(store, "c")  # a topic was archived: a state was saved
        q = Perception(store=store, embedder=EMB, conversation_id="c", lookahead=0)  # another calibration
        assert q.resumed == p.pending()[1] - p.pending()[0] and q.pending()[0] == 0
        for b in blocks[len(blocks) * 2 // 3:]:
            q.observe(b)
        q.flush()
        assert load_conversation(store, "c") == blocks

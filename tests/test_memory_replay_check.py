"""An episode met again in a replay (a perception rebuilt after a restart observes stored turns again) is
recognised the same way by the library's :class:`Archiver` and by the memory server's
:class:`SessionArchiver`, which hands it to the Archiver: the stored topic that holds the episode's first
turn, with its stored link. A replay starts afresh at a topic's start without the state the first
perception had there, so its boundaries may fall inside archived topics (SQLite and PostgreSQL)."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.integrations.conversations import SessionArchiver
from logichunk.memory import LogicalBlock
from logichunk.memory.archive import Archiver, topics
from logichunk.memory.episode import Episode
from pg_fixture import backend, make_store, pg_url  # noqa: F401

MODEL = "replay-check-model"
BASES = np.linalg.qr(np.random.default_rng(0).normal(size=(16, 16)))[0][:3]  # three orthonormal subjects


def _subject(base: int, noise: int) -> np.ndarray:
    v = BASES[base] + 0.05 * np.random.default_rng(noise).normal(size=16)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _episode(index: int, start: int, end: int, vec: np.ndarray) -> Episode:
    """Turns ``start`` .. ``end - 1`` (numbered as the session numbers them) as one episode."""
    blocks = tuple(LogicalBlock(f"question {i}", f"answer {i}") for i in range(start, end))
    return Episode(index, start, blocks, conversation_id="c", subject=vec)


def _stored(store, cuts: list[int], subjects: list[np.ndarray]) -> None:
    """The conversation as archived before the restart: topics ``cuts[k] .. cuts[k + 1] - 1``."""
    a = Archiver(store, "c", rechunk=False, kernel_model=MODEL)
    for k in range(len(cuts) - 1):
        a.archive(_episode(k, cuts[k], cuts[k + 1], subjects[k]), start=cuts[k], index=k)


def _replays(make, cuts, subjects, session, replay) -> list[tuple]:
    """The replay's episodes (``replay``: (start, end, subject) numbered from the session's first turn,
    ``session`` = (first turn, first topic)) through both archivers, each on a store holding the same
    conversation; per archiver the topics met or made (number, turns) with their links, and the
    conversation's records after it."""
    out = []
    for kind in ("library", "server"):
        store = make(embedder=None)
        _stored(store, cuts, subjects)
        turn0, topic0 = session
        if kind == "server":
            arch = SessionArchiver(store, "c", turn0, topic0, MODEL)
        else:
            arch = Archiver(store, "c", rechunk=False, kernel_model=MODEL)
        by_doc = {}
        got = []
        for i, (a, b, vec) in enumerate(replay):
            ep = _episode(i, a, b, vec)
            doc = arch.archive(ep) if kind == "server" else arch.archive(ep, start=turn0 + a, index=topic0 + i)
            by_doc = {t.document_id: t for t in topics(store, "c")}
            t = by_doc.get(doc)
            link = arch.links.get(doc)
            got.append((None if t is None else (t.index, t.start, t.end),
                        None if link is None else (link.topic, round(link.similarity, 5), link.of)))
        recs = [(t.index, t.start, t.end, t.turns, t.resumes_topic,
                 None if t.resumes_similarity is None else round(t.resumes_similarity, 5))
                for t in topics(store, "c")]
        out.append((got, recs))
    return out


def test_an_episode_met_again_inside_an_archived_topic(make_store):
    """Stored: topics 0-3, 4-5, 6-8 (the last one returns to the first one's subject). The replay, from the
    conversation's start, finds 0-1, 2-5 (inside topic 0: the two archivers disagreed here, the server's
    looking for a topic starting at turn 2), 6-7, 8-10 (turn 8 archived, 9-10 new)."""
    subjects = [_subject(0, 1), _subject(1, 2), _subject(0, 3)]
    replay = [(0, 2, _subject(0, 4)), (2, 6, _subject(1, 5)), (6, 8, _subject(0, 6)), (8, 11, _subject(2, 7))]
    (lib, lib_recs), (srv, srv_recs) = _replays(make_store, [0, 4, 6, 9], subjects, (0, 0), replay)
    assert srv == lib and srv_recs == lib_recs
    assert [g[0][:2] for g in lib] == [(0, 0), (0, 0), (2, 6), (3, 9)]  # each met again: the topic holding its first turn
    assert lib[2][1][0] == 0  # the stored link of topic 2, met again
    assert [r[:3] for r in lib_recs] == [(0, 0, 3), (1, 4, 5), (2, 6, 8), (3, 9, 10)]


SEGMENTS = st.lists(st.integers(1, 4), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stored=SEGMENTS, again=SEGMENTS, first=st.integers(0, 5), bases=st.lists(st.integers(0, 2), min_size=12,
                                                                                  max_size=12))
def test_a_replay_through_either_archiver_is_the_same(make_store, stored, again, first, bases):
    """Any stored segmentation, any replay from one of its topics' starts (where a session resumes) with any
    boundaries: the same topics met, made and linked by the library's archiver and the server's."""
    cuts = [0]
    for n in stored:
        cuts.append(cuts[-1] + n)
    k = min(first, len(cuts) - 2)
    turn0 = cuts[k]
    subjects = [_subject(bases[j % 12], j) for j in range(len(cuts) - 1)]
    replay, a = [], 0
    for j, n in enumerate(again):
        replay.append((a, a + n, _subject(bases[(j + 5) % 12], 100 + j)))
        a += n
    (lib, lib_recs), (srv, srv_recs) = _replays(make_store, cuts, subjects, (turn0, k), replay)
    assert srv == lib and srv_recs == lib_recs
    assert all(g[0] is not None for g in lib)  # every episode has its topic, met again or archived now

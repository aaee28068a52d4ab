"""The archive's links over the conversation's stored subjects held as one matrix (``memory/subjects.py``,
``resume.best_link``): the same links as the loop over every earlier topic read from the store anew, whatever
other archivers write or delete in between (a topic deleted and archived again under its number included),
and each stored subject read once, not once per later topic (SQLite and PostgreSQL)."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.memory import LogicalBlock
from logichunk.memory.archive import Archiver, topics
from logichunk.memory.episode import Episode
from logichunk.memory.resume import Link, resumed
from pg_fixture import backend, make_store, pg_url  # noqa: F401

MODEL = "subjects-test-model"
DIM = 6
THRESHOLD = 4.0  # (vectors of small integers: every product is exact in float32, in any order of summation)


def _loop(vec, topic, earlier, threshold) -> Link | None:
    """The rule as a loop over the earlier episodes, as it was written before the matrix (7456c5b)."""
    k = np.asarray(vec, np.float32).reshape(-1)
    best = None
    for no, other, doc in earlier:
        if other is None or no >= topic - 1:
            continue
        o = np.asarray(other, np.float32).reshape(-1)
        if o.shape != k.shape:
            continue
        sim = float(k @ o)
        if sim >= threshold and (best is None or sim > best.similarity):
            best = Link(int(no), sim, doc, int(topic))
    return best


def _from_scratch(store, conv: str, vec: np.ndarray, index: int) -> Link | None:
    """The link as the archiver made it before the matrix: every earlier subject read from the store."""
    rows = store._q("SELECT topic_no, subject, document_id FROM memory_topics WHERE project_id = ? AND "
                    "conversation_id = ? AND topic_no < ? AND model_id = ? AND subject IS NOT NULL "
                    "ORDER BY topic_no", (store.project_id, conv, index, MODEL))
    return _loop(vec, index, [(int(r[0]), np.frombuffer(bytes(r[1]), "<f4"), str(r[2])) for r in rows], THRESHOLD)


VECTOR = st.lists(st.integers(-2, 2), min_size=DIM, max_size=DIM).map(lambda v: np.asarray(v, np.float32))


@settings(max_examples=200, deadline=None)
@given(vec=VECTOR, topic=st.integers(0, 12),
       earlier=st.lists(st.tuples(st.integers(0, 12), st.one_of(st.none(), VECTOR, st.just(np.ones(3, np.float32))),
                                  st.sampled_from(["a", "b", None])), max_size=12),
       threshold=st.sampled_from([-1.0, 0.0, 2.0, 4.0]))
def test_the_matrix_rule_is_the_loop(vec, topic, earlier, threshold):
    """Ties (the first one wins), vectors of another length, missing vectors, the adjacent topic: as the loop."""
    assert resumed(vec, topic, earlier, threshold) == _loop(vec, topic, earlier, threshold)


def _episode(vec: np.ndarray, index: int = 0) -> Episode:
    """Topic ``index`` of a session: its one turn is turn ``index``."""
    return Episode(index=index, start=index, blocks=(LogicalBlock(f"q{index}", "a"),), subject=vec)


# one step: (which archiver 0-2, subject, explicit start?, delete a stored topic first?, archive another
# subject under its number?)
STEP = st.tuples(st.integers(0, 2), VECTOR, st.booleans(), st.booleans(), st.booleans())


def _archived(store, a: Archiver, vec: np.ndarray, **where) -> None:
    """Archive one topic; when it is new (not met again), its link is the one read from scratch."""
    before = {t.document_id for t in topics(store, "conv")}
    doc = a.archive(_episode(vec, where.pop("count", 0)), **where)
    if doc not in before:
        index = next(t.index for t in topics(store, "conv") if t.document_id == doc)
        assert a.links[doc] == _from_scratch(store, "conv", vec, index)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=20), pick=st.randoms(use_true_random=False))
def test_the_held_subjects_link_as_a_read_from_scratch(make_store, steps, pick):
    store = make_store()
    # three archivers interleave on one conversation (two processes and a restarted one)
    archivers = [Archiver(store, "conv", rechunk=False, kernel_model=MODEL, resume_threshold=THRESHOLD)
                 for _ in range(3)]
    count = [0, 0, 0]
    for who, vec, explicit, delete, rewrite in steps:
        a = archivers[who]
        done = topics(store, "conv")
        if delete and done:
            gone = done[-1] if rewrite else pick.choice(done)
            store.delete_document(gone.document_id)
            if rewrite:  # another subject archived under the deleted topic's number and turns
                _archived(store, a, -vec, start=gone.start, index=gone.index)
        if explicit:
            _archived(store, a, vec, start=max((t.end for t in topics(store, "conv")), default=-1) + 1)
        else:
            _archived(store, a, vec, count=count[who])
            count[who] += 1


def test_a_topic_deleted_and_archived_again_under_its_number_is_read_again(make_store):
    """A topic the archiver holds, deleted and another subject archived under its number and turns by another
    archiver: the archiver that held the old subject links the new one."""
    store = make_store()
    a = Archiver(store, "conv", rechunk=False, kernel_model=MODEL, resume_threshold=THRESHOLD)
    x, y, u, w = (np.asarray(v, np.float32) for v in ([2, 2, 0, 0, 0, 0], [0, 0, 2, 2, 0, 0], [0, 0, 0, 0, 2, 2],
                                                      [0, 0, 0, 0, 2, -2]))
    for i, v in enumerate((x, y, u, y, u)):
        a.archive(_episode(v, i))  # (archiving topic 4 read topic 3's subject, y)
    for t in topics(store, "conv")[3:]:
        store.delete_document(t.document_id)  # topics 3 (y) and 4 are gone ...
    Archiver(store, "conv", rechunk=False, kernel_model=MODEL).archive(_episode(w, 3), start=3, index=3)  # ... 3 is w
    link = a.links[a.archive(_episode(w, 5))]
    assert link is not None and (link.topic, link.similarity) == (3, 8.0)
    assert a.links[a.archive(_episode(y, 6))].topic == 1  # (y: topic 1 only now)


def test_each_stored_subject_is_read_once(make_store):
    """A long conversation read every earlier subject again for each topic it archived (topic i read i of
    them: quadratic); now each is read once, then held."""
    store = make_store()
    read = {"rows": 0}
    query = store._q

    def counting(sql, params=()):
        rows = query(sql, params)
        if "subject" in sql.split("FROM")[0]:
            read["rows"] += len(rows)
        return rows

    store._q = counting
    a = Archiver(store, "conv", rechunk=False, kernel_model=MODEL, resume_threshold=THRESHOLD)
    rng = np.random.default_rng(0)
    for i in range(30):
        a.archive(_episode(rng.integers(-2, 3, DIM).astype(np.float32), i))
    assert read["rows"] <= 30, read  # (before: 0 + 1 + ... + 29 = 435)
    other = Archiver(store, "conv", rechunk=False, kernel_model=MODEL)
    other.archive(_episode(np.ones(DIM, np.float32), 30), start=10**6)  # another archiver's topic: read once more
    n = read["rows"]
    a.archive(_episode(np.ones(DIM, np.float32), 31))
    assert read["rows"] - n == 2  # (that one and ours before this archive)

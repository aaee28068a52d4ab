"""The perception's steps, decisions and invariants (no turn lost, episodes tile the conversation)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.errors import InputError
from logichunk.memory import (
    Action,
    Calibration,
    LogicalBlock,
    Logistic,
    Perception,
    Step,
    Verdict,
    replay,
)
from logichunk.models import HashEmbedder


class QueryEmbedder:
    """Vectors chosen by the test: the anchor's query line is looked up in ``table`` (a unit vector per
    query); other texts get a fixed vector. Counts what it embeds."""

    model_id = "query-table"

    def __init__(self, table: dict[str, np.ndarray], dim: int = 4) -> None:
        self.table = table
        self.dim = dim
        self.seen: list[str] = []

    def embed(self, texts, *, kind="passage"):
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            self.seen.append(t)
            q = t.split("\nQuery: ", 1)[-1]
            v = np.asarray(self.table.get(q, np.eye(self.dim)[-1]), np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


class Recorder:
    """An arbiter that answers what it is told and keeps the queries it saw."""

    name = "recorder"

    def __init__(self, same: bool) -> None:
        self.same = same
        self.queries = []

    def judge(self, q):
        self.queries.append(q)
        return Verdict(self.same, 0.9 if self.same else 0.1, self.name, "scripted")


def unit(*xs):
    v = np.asarray(xs, np.float64)
    return v / np.linalg.norm(v)


TABLE = {
    "write the parser for the config format": unit(1, 0, 0, 0),
    "add error messages to the parser": unit(0.95, 0.3, 0, 0),   # cos ~0.95 with the kernel: adsorb
    "what about unicode input files": unit(0.6, 0.8, 0, 0),            # cos ~0.6: grey zone
    "plan a trip to Kyoto in April": unit(0, 0, 1, 0),           # cos 0: split
}


def cal(**kw) -> Calibration:
    base = dict(embedder="query-table", hi=0.8, lo=0.3, short_tokens=5)
    base.update(kw)
    return Calibration(**base)


def test_steps_screen_heuristic_arbiter():
    emb = QueryEmbedder(TABLE)
    arb = Recorder(same=True)
    p = Perception(embedder=emb, calibration=cal(), arbiter=arb)
    d0 = p.observe(LogicalBlock("write the parser for the config format", "Here is a recursive descent parser."))
    assert (d0.action, d0.step, d0.topic) == (Action.SPLIT, Step.FIRST, 0)
    k0 = p.kernel.copy()
    d1 = p.observe(LogicalBlock("ok", "Anything else?"))
    assert (d1.action, d1.step, d1.similarity) == (Action.FORCE_ADSORB, Step.HEURISTIC, None)
    assert np.array_equal(p.kernel, k0), "a filler must not move the kernel"
    assert len(emb.seen) == 1, "a filler is not embedded"
    d2 = p.observe(LogicalBlock("add error messages to the parser", "Done: each error has a line number."))
    assert (d2.action, d2.step) == (Action.ADSORB, Step.SCREEN) and d2.similarity > 0.8
    assert not np.array_equal(p.kernel, k0), "an adsorbed turn updates the kernel"
    d3 = p.observe(LogicalBlock("what about unicode input files", "Decode as UTF-8 first."))
    assert (d3.action, d3.step, d3.arbiter) == (Action.ADSORB, Step.ARBITER, "recorder")
    q = arb.queries[-1]
    assert q.query == "what about unicode input files" and "write the parser" in q.summary
    assert 0.3 < q.similarity < 0.8 and q.anchor.startswith("Context: Done: each error")
    d4 = p.observe(LogicalBlock("plan a trip to Kyoto in April", "Cherry blossoms peak in early April."))
    assert (d4.action, d4.step, d4.topic) == (Action.SPLIT, Step.SCREEN, 1)
    assert d4.closed and d4.closed[0].start == 0 and len(d4.closed[0].blocks) == 4, "lookahead 0: closed at once"
    assert len(arb.queries) == 1, "the arbiter is asked only in the grey zone"


def test_arbiter_can_split_and_anchor_uses_previous_reply():
    emb = QueryEmbedder(TABLE)
    p = Perception(embedder=emb, calibration=cal(), arbiter=Recorder(same=False))
    p.observe(LogicalBlock("write the parser for the config format", "A" * 300))
    d = p.observe(LogicalBlock("what about unicode input files"))
    assert (d.action, d.step, d.arbiter) == (Action.SPLIT, Step.ARBITER, "recorder")
    # (the anchor; the episode closed by the split embeds its subject after it: memory/resume.py)
    assert "Context: " + "A" * 100 + "\nQuery: what about unicode input files" in emb.seen


def test_summary_is_preferred_as_context_and_rewritten_query_is_used():
    emb = QueryEmbedder(TABLE)
    p = Perception(embedder=emb, calibration=cal(), arbiter=Recorder(True))
    p.observe(LogicalBlock("write the parser for the config format", "long reply " * 50,
                           assistant_summary="Wrote a parser."))
    p.observe(LogicalBlock("and the errors?", rewritten_query="add error messages to the parser"))
    assert emb.seen[-1] == "Context: Wrote a parser.\nQuery: add error messages to the parser"


def test_guard_keeps_young_topics():
    emb = QueryEmbedder(TABLE)
    p = Perception(embedder=emb, calibration=cal(min_topic_turns=3))
    p.observe("write the parser for the config format")
    d = p.observe("plan a trip to Kyoto in April")
    assert (d.action, d.step) == (Action.ADSORB, Step.GUARD)


def _review(weight_jump: float, bias: float) -> Logistic:
    return Logistic(("jump", "split_now"), (0.0, 0.0), (1.0, 1.0), (weight_jump, 0.0), bias)


def _bread_then_rail(rail_turns: int):
    """Five turns about bread, then ``rail_turns`` about trains; every turn adsorbs at once (hi = -1)
    and the review (lookahead 3) splits where the vocabulary jumps. (perception, decisions, episodes)"""
    emb = HashEmbedder(128)
    c = Calibration(embedder=emb.model_id, hi=-1.0, lo=-1.0, lookahead=3, review=_review(12.0, -4.0),
                    review_threshold=0.5, min_topic_turns=2)
    food = [f"bake the bread dough with flour butter and yeast for {k} minutes" for k in range(5)]
    rail = [f"railway ticket platform departure timetable carriage seat {k}" for k in range(rail_turns)]
    p = Perception(embedder=emb, calibration=c)
    return (p, *replay([LogicalBlock(t) for t in food + rail], p))


def test_review_adds_a_boundary_the_screen_missed():
    _, decisions, episodes = _bread_then_rail(5)
    assert all(d.action is not Action.SPLIT for d in decisions[1:])
    revs = [r for d in decisions for r in d.revisions]
    assert [(r.turn, r.action) for r in revs] == [(5, Action.SPLIT)]
    assert [e.start for e in episodes] == [0, 5]
    assert revs[0].score >= 0.5 and revs[0].step is Step.REVIEW


def test_review_removes_a_false_split():
    emb = HashEmbedder(128)
    c = Calibration(embedder=emb.model_id, hi=1.0, lo=0.99, lookahead=2, review=_review(12.0, -6.0),
                    review_threshold=0.5)
    same = [f"bake the bread dough with flour butter yeast sugar oven tray {k}" for k in range(6)]
    p = Perception(embedder=emb, calibration=c)
    decisions, episodes = replay(same, p)
    assert sum(d.is_split for d in decisions[1:]) >= 3, "the screen splits everything here"
    assert len(episodes) == 1 and len(episodes[0].blocks) == 6
    assert all(r.action is Action.ADSORB for d in decisions for r in d.revisions)


def test_lookahead_delays_closing_until_reviewed():
    emb = QueryEmbedder(TABLE)
    c = cal(lookahead=2, review=Logistic(("split_now",), (0.5,), (0.5,), (40.0,), 0.0))
    p = Perception(embedder=emb, calibration=c)
    p.observe("write the parser for the config format")
    d = p.observe("plan a trip to Kyoto in April")
    assert d.is_split and not d.closed, "a split waits for its review"
    assert not p.observe("plan a trip to Kyoto in April").closed
    d = p.observe("plan a trip to Kyoto in April")
    assert [e.start for e in d.closed] == [0]
    assert p.pending() == (1, 4)


def test_embedder_mismatch_is_an_error():
    with pytest.raises(InputError, match="fitted for embedder"):
        Perception(embedder=HashEmbedder(64), calibration=cal())
    with pytest.raises(InputError, match="review model"):
        Perception(embedder=QueryEmbedder(TABLE), calibration=cal(), lookahead=2)


def test_observe_rejects_bad_turns():
    p = Perception(embedder=QueryEmbedder(TABLE), calibration=cal())
    with pytest.raises(InputError):
        p.observe({"assistant": 3})
    with pytest.raises(InputError):
        p.observe(LogicalBlock("  "))
    with pytest.raises(InputError):
        p.observe(42)  # type: ignore[arg-type]


def test_default_calibration_for_an_unknown_embedder_says_so():
    p = Perception(embedder=QueryEmbedder(TABLE))
    assert "no calibration" in p.note and p.calibration.hi == 0.75 and p.calibration.lo == 0.40


WORDS = ("parser", "unicode", "kyoto", "bread", "ticket", "ok", "好的", "继续", "部署", "服务器", "报错了", "yes")


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join), min_size=1, max_size=30),
       lookahead=st.integers(0, 4), items=st.sampled_from([0, 0, 6]), hi=st.floats(-0.2, 1.0),
       lo=st.floats(-1.0, 0.5), thr=st.floats(0.05, 0.95), min_turns=st.integers(1, 3))
def test_no_turn_is_lost(texts, lookahead, items, hi, lo, thr, min_turns):
    emb = HashEmbedder(64)
    c = Calibration(embedder=emb.model_id, hi=max(hi, lo), lo=min(hi, lo), lookahead=lookahead,
                    lookahead_items=items if lookahead else 0,
                    review=_review(6.0, -2.0) if lookahead else None, review_threshold=thr,
                    min_topic_turns=min_turns)
    blocks = [LogicalBlock(t) for t in texts]
    p = Perception(embedder=emb, calibration=c)
    decisions = [p.observe(b) for b in blocks]
    assert [d.turn for d in decisions] == list(range(len(blocks)))
    episodes = [e for d in decisions for e in d.closed] + p.flush()
    assert [e.index for e in episodes] == list(range(len(episodes)))
    assert [b for e in episodes for b in e.blocks] == blocks, "episodes concatenated are the conversation"
    assert episodes[0].start == 0
    assert all(a.end + 1 == b.start for a, b in zip(episodes, episodes[1:], strict=False))
    assert p.boundaries() == [e.start for e in episodes[1:]]
    # a boundary never falls before a filler turn
    assert all(not (d.action is Action.FORCE_ADSORB and d.turn in p.boundaries()) for d in decisions)


class FlakyEmbedder(QueryEmbedder):
    def __init__(self, table):
        super().__init__(table)
        self.down = False

    def embed(self, texts, *, kind="passage"):
        if self.down:
            raise ConnectionError("embedding endpoint unreachable")
        return super().embed(texts, kind=kind)


def test_an_embedder_failure_is_a_recorded_fallback():
    emb = FlakyEmbedder(TABLE)
    rule = Logistic(("novelty",), (0.5,), (0.1,), (-1.0,), 0.0)
    p = Perception(embedder=emb, calibration=cal(rule=rule))
    p.observe(LogicalBlock("write the parser for the config format", "Here it is."))
    emb.down = True
    d = p.observe(LogicalBlock("plan a trip to Kyoto in April", "Go in early April."))
    assert d.step is Step.ARBITER and d.arbiter == "rule" and "embedding failed (ConnectionError" in d.reason
    assert d.similarity is None and p.embed_failures == 1
    emb.down = False
    seen = len(emb.seen)
    p.observe(LogicalBlock("add error messages to the parser", "Done."))
    assert len(emb.seen) == seen + 1 and p.kernel is not None, "the next turn embeds again"
    assert [b.user for e in p.flush() for b in e.blocks][-1] == "add error messages to the parser"


def test_a_boundary_the_review_adds_at_the_end_is_reported():
    # the topic changes two turns before the end: its review can only run in flush()
    p, decisions, episodes = _bread_then_rail(2)
    assert [e.start for e in episodes] == [0, 5]
    assert not [r for d in decisions for r in d.revisions]  # not known while the turns were observed
    assert [(r.turn, r.action) for r in p.flush_revisions] == [(5, Action.SPLIT)]


def test_an_embedder_named_is_resolved_and_bad_arguments_are_one_line():
    """``Perception(embedder="hash")`` kept the string: every turn's embedding failed into lexical-only
    decisions, silently, even for a name that is no embedder. A name is resolved as everywhere else; a bad one,
    a store that is no store, turns that are no list: one line."""
    import pytest as _pytest

    from logichunk.errors import InputError, LogichunkError
    from logichunk.memory import Perception
    from logichunk.memory.perception import replay

    p = Perception(embedder="hash:64")
    assert p.embedder.model_id == "hash-v2-d64"
    d = [p.observe("Write a snake game in Python with pygame"), p.observe("Recommend a vegetarian lasagna recipe")]
    assert all("embedding failed" not in (x.reason or "") for x in d)
    with _pytest.raises(LogichunkError, match="unknown embedder spec 'nope'"):
        Perception(embedder="nope")
    with _pytest.raises(InputError, match="must be a logichunk Store"):
        Perception(store="kb.db")
    for bad in (None, "hello world", 5):
        with _pytest.raises(InputError, match="replay takes the turns in order"):
            replay(bad, p)


PORK_THEN_K8S = [
    LogicalBlock("How long should I braise pork belly for hong shao rou?",
                 "About an hour on low heat, then reduce the sauce on high heat."),
    LogicalBlock("Should I blanch the pork belly first before braising?",
                 "Yes, blanch it for three minutes to remove impurities."),
    LogicalBlock("How much rock sugar goes into the braised pork belly?", "About 30 grams for 500 grams of pork belly."),
    LogicalBlock("What is Kubernetes?",
                 "Kubernetes is a container orchestration system that schedules pods across a cluster of nodes."),
    LogicalBlock("How do kubernetes pods get scheduled onto cluster nodes?",
                 "The kube-scheduler picks a node for each pod based on resource requests and affinity."),
    LogicalBlock("What happens to kubernetes pods when a cluster node fails?",
                 "The controller recreates the pods on healthy nodes after the eviction timeout."),
    LogicalBlock("How do I scale a kubernetes deployment?", "kubectl scale deployment web --replicas=5."),
]


def test_a_short_question_that_changes_the_topic_opens_the_next_one():
    """"What is Kubernetes?" (3 tokens) was a filler: force-adsorbed, never reviewed, and the kubernetes turns
    merged into the cooking topic (hash and E5 alike)."""
    decisions, episodes = replay(PORK_THEN_K8S, Perception(embedder=HashEmbedder(1024)))
    assert decisions[3].step is not Step.HEURISTIC, decisions[3]
    assert [(e.start, e.end) for e in episodes] == [(0, 2), (3, 6)], [d.reason for d in decisions]


def test_a_short_turn_with_nothing_new_is_still_a_filler():
    p = Perception(embedder=HashEmbedder(128), lookahead=0)
    p.observe(LogicalBlock("How do kubernetes pods get scheduled onto cluster nodes?", "The kube-scheduler does it."))
    d = p.observe(LogicalBlock("and kubernetes pods?", ""))
    assert (d.action, d.step) == (Action.FORCE_ADSORB, Step.HEURISTIC) and "no word new" in d.reason


@pytest.mark.parametrize("kw, match", [({"lookahead": "2"}, "lookahead must be an integer"),
                                       ({"lookahead": 1.0}, "lookahead must be an integer"),
                                       ({"lookahead": -1}, "lookahead must be at least 0"),
                                       ({"conversation_id": "a\x00b", "store": "db"}, "control character")])
def test_bad_arguments_are_one_input_error_line(tmp_path, kw, match):
    """``Perception(lookahead="2")`` raised a raw TypeError; a NUL in a conversation id was stored."""
    from logichunk.store import Store

    with Store.open(str(tmp_path / "a.db"), embedder="hash:64") as store:
        if kw.get("store") == "db":
            kw = {**kw, "store": store}
        with pytest.raises(InputError, match=match) as e:
            Perception(embedder=HashEmbedder(64), **kw)
    assert "\n" not in str(e.value)

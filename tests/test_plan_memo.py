"""A store's plans remember what they computed from texts (their sentences, an over-long block's pieces),
so an edit splits and cuts again only what it changed — and a plan that remembers is the plan that does
not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk.chunkers import parent_child as pc
from logichunk.config import Settings
from logichunk.models import HashEmbedder, LRUMapping
from logichunk.store import Store
from logichunk.store.plan import plan_chapter

EMB = HashEmbedder(64)
P = pc.PCParams(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50, child_max_size=80)


def vec_fn(texts: list[str]) -> np.ndarray:
    return np.asarray(EMB.embed(texts), np.float32)


SENTENCES = ["The river runs past the mill. ", "Markets fell sharply today! ", "猫在夜里轻轻地叫。", "投资者卖出了债券？",
             "## A heading\n", "- an item of a list\n", "as follows:\n", "def f(x):\n    return x\n",
             "river " * 70, "长" * 130, "Short Title Line\n\n"]
BLOCKS = st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=14).map(lambda ss: "".join(ss) + "\n\n")
EDITS = st.lists(st.tuples(st.sampled_from(["edit", "insert", "delete"]), st.integers(0, 50), BLOCKS),
                 min_size=1, max_size=6)


def _plan_rows(plan) -> tuple:
    """Everything a plan would write, vectors as lists (a plan's parents are ``PlannedParent``s)."""
    new = [(p.order, p.dotted, p.spec, p.vec.tolist(),
            [(s, e, t, m, v.tolist()) for s, e, t, m, v in p.children]) for p in plan.new]
    bubbles = [(b, x.to_dict()) for b, x in plan.bubbles]
    return plan.rank, plan.block_hashes, plan.kept, new, bubbles


@settings(max_examples=80, deadline=None)  # 150 took ~20 s of the suite on two cores
@example([("x" * 20 + "\n\n")], [("insert", 0, "river " * 70 + "\n\n"), ("insert", 0, "A new opening. \n\n")])
@given(st.lists(BLOCKS, min_size=1, max_size=8), EDITS)
def test_a_plan_that_remembers_earlier_plans_is_the_plan_made_afresh(blocks, edits):
    memo = (pc.text_memo(), pc.text_memo())
    for op, at, text in [("start", 0, ""), *edits]:
        if op == "edit":
            blocks[at % len(blocks)] = text
        elif op == "insert":
            blocks.insert(at % (len(blocks) + 1), text)
        elif op == "delete" and len(blocks) > 1:
            del blocks[at % len(blocks)]
        kept = plan_chapter(list(blocks), 2, vec_fn, P, memo=memo)
        fresh = plan_chapter(list(blocks), 2, vec_fn, P)
        assert _plan_rows(kept) == _plan_rows(fresh)


def test_a_block_cut_before_names_its_bubble_where_it_is_now():
    long_block = "river " * 70 + "\n\n"  # one sentence over the parent limit: a forced split, a bubble
    memo = (pc.text_memo(), pc.text_memo())
    first = plan_chapter(["Opening words. \n\n", long_block], 1, vec_fn, P, memo=memo)
    assert {b for b, _ in first.bubbles} == {1}
    assert [x.context["where"] for _, x in first.bubbles if x.context["where"].startswith("block")] == ["block 1"]
    assert len(memo[1]) == 1  # the long block's pieces, kept
    moved = plan_chapter(["New first block. \n\n", "Opening words. \n\n", long_block], 1, vec_fn, P, memo=memo)
    assert {b for b, _ in moved.bubbles} == {2}
    assert [x.context["where"] for _, x in moved.bubbles if x.context["where"].startswith("block")] == ["block 2"]


def test_an_edit_splits_again_only_the_texts_it_changed(tmp_path, monkeypatch):
    store = Store.open(str(tmp_path / "kb.db"), settings=Settings(max_parent_size=300, min_parent_size=60,
                                                                  child_min_size=20, child_target_size=50,
                                                                  child_max_size=80),
                       embedder=EMB)
    blocks = [f"Block {i} tells of the {w} and the {w}s of the town. It goes on. \n\n"
              for i, w in enumerate(["river", "market", "teacher", "winter"] * 10)]
    doc = store.add_document("d", [("c", blocks)])
    store.rechunk_dirty()
    split = []
    one, many = pc.split_sentences, pc.split_many
    monkeypatch.setattr(pc, "split_sentences", lambda t: split.append(t) or one(t))
    monkeypatch.setattr(pc, "split_many", lambda ts: split.extend(ts) or many(ts))
    block = store.blocks(store.chapters(doc)[0][0])[17]
    store.edit_block(block.id, "Block 17 now speaks of tea. Nothing else. \n\n")
    store.rechunk_dirty()
    # the edited block, the parent it is in, and the chapter read whole for its headings — not forty blocks
    assert 1 <= len(split) <= 4 and "Block 17 now speaks of tea. Nothing else. \n\n" in split
    assert any(len(t) > 1000 for t in split)  # (the chapter)
    # and what is stored is what a store that never saw the old text stores
    other = Store.open(str(tmp_path / "kb2.db"), settings=store.settings, embedder=EMB)
    doc2 = other.add_document("d", [("c", [b.content for b in store.blocks(store.chapters(doc)[0][0])])])
    other.rechunk_dirty()

    def rows(s, d):
        ch = s.chapters(d)[0][0]
        return [(c.dotted_id, c.level, c.content, c.method) for c in sorted(s.chunks(chapter_id=ch),
                                                                           key=lambda c: c.dotted_id)]

    assert rows(store, doc) == rows(other, doc2)
    store.close()
    other.close()


# ----------------------------------------------------------------------------- the memo's bound


def test_a_memo_of_texts_forgets_the_oldest_past_its_characters():
    m = LRUMapping(100, max_key_chars=10)
    m["abcd"] = 1
    m["efgh"] = 2
    assert m["abcd"] == 1  # (now the most recent)
    m["ijkl"] = 3  # 12 characters: the least recently used goes
    assert "efgh" not in m and set(m) == {"abcd", "ijkl"}
    m["x" * 11] = 4  # alone over the bound: not kept, and nothing pushed out for it
    assert set(m) == {"abcd", "ijkl"}
    m["abcd"] = 5  # the same key again counts once
    del m["ijkl"]
    m["mnopqr"] = 6
    assert set(m) == {"abcd", "mnopqr"} and m["abcd"] == 5
    with pytest.raises(ValueError):
        LRUMapping(0)

"""Vector indexes (exact, HNSW) and BM25 with Chinese-aware tokens."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.errors import InputError
from logichunk.index import BM25Index, ExactIndex, HnswIndex, hnsw_available, make_index, tokenize


def _unit(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_exact_matches_brute_force_and_updates():
    rng = np.random.default_rng(0)
    vecs = _unit(rng, 500, 32)
    ids = np.arange(1000, 1500)
    idx = ExactIndex(32)
    idx.update(ids, vecs, np.zeros(0, np.int64))
    q = _unit(rng, 1, 32)[0]
    got, sims = idx.search(q, 10)
    want = ids[np.argsort(-(vecs @ q))[:10]]
    assert got.tolist() == want.tolist()
    assert np.all(np.diff(sims) <= 0)
    # remove the best one, add a perfect match
    idx.update(np.array([7]), q[None, :], np.array([got[0]]))
    got2, sims2 = idx.search(q, 3)
    assert got2[0] == 7 and sims2[0] == pytest.approx(1.0, abs=1e-5) and got[0] not in got2
    assert len(idx) == 500
    assert idx.search(q, 0)[0].size == 0
    with pytest.raises(InputError):
        idx.search(np.zeros(5), 3)


_OPS = st.lists(st.tuples(st.lists(st.integers(0, 40), max_size=12), st.lists(st.integers(0, 40), max_size=12)),
                min_size=1, max_size=12)


@settings(max_examples=400, deadline=None)
@given(_OPS, st.integers(0, 2**32 - 1))
def test_exact_updates_in_place_answer_as_a_rebuild_does(ops, seed):
    """Updates move only the rows they add and remove (no copy of every vector per write): after any run of
    adds (re-adds replace) and removals, the index holds what a fresh one of the same rows holds and
    answers every query alike, ties by id included."""
    rng = np.random.default_rng(seed)
    dim = 6
    idx = ExactIndex(dim)
    truth: dict[int, np.ndarray] = {}
    for add, rem in ops:
        add = sorted(set(add))
        # (halves: every product and sum is exact in float32, whatever the row order, and ties are many)
        vecs = (np.round(2 * rng.standard_normal((len(add), dim))) / 2).astype(np.float32)
        idx.update(np.array(add, np.int64), vecs, np.array(rem, np.int64))
        for r in rem:
            truth.pop(r, None)
        truth.update(zip(add, vecs, strict=True))
        keys = np.array(sorted(truth), np.int64)
        assert sorted(idx.ids().tolist()) == keys.tolist() and len(idx) == keys.size
        fresh = ExactIndex(dim, keys, np.array([truth[k] for k in keys.tolist()]).reshape(-1, dim))
        qs = (np.round(2 * rng.standard_normal((3, dim))) / 2).astype(np.float32)
        for q in qs:
            for k in (1, 3, 50):
                a, b = idx.search(q, k), fresh.search(q, k)
                assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
        got, want = idx.search_many(qs, 4), fresh.search_many(qs, 4)
        assert got[0].tolist() == want[0].tolist()


@pytest.mark.skipif(not hnsw_available(), reason="hnswlib not installed")
def test_hnsw_recall_and_updates():
    rng = np.random.default_rng(1)
    vecs = _unit(rng, 3000, 32)
    ids = np.arange(3000)
    h = HnswIndex(32, ef_search=100, capacity=100)
    h.update(ids, vecs, np.zeros(0, np.int64))
    e = ExactIndex(32, ids, vecs)
    recall = []
    for q in _unit(rng, 30, 32):
        recall.append(len(set(h.search(q, 10)[0]) & set(e.search(q, 10)[0])) / 10)
    assert np.mean(recall) > 0.9
    h.update(np.zeros(0, np.int64), np.zeros((0, 32)), np.array([int(e.search(vecs[5], 1)[0][0])]))
    assert 5 not in h.search(vecs[5], 5)[0].tolist()
    assert len(h) == 2999
    assert make_index(32, 10).kind == "exact" and make_index(32, 10**6, threshold=1000).kind == "hnsw"


def test_tokenize_chinese_bigrams_and_words():
    assert tokenize("主角见到师父") == ["主角", "角见", "见到", "到师", "师父"]
    assert tokenize("Hello, World! 你") == ["hello", "world", "你"]
    assert tokenize("GPT-4o 模型") == ["gpt", "4o", "模型"]
    assert tokenize("") == []
    with pytest.raises(InputError):
        tokenize("x", segmenter="nope")



def test_tokenize_mixed_chinese_and_latin_without_spaces():
    """Chinese writes ``5G模组``, ``2026年``, ``MQTT断线`` with no space: the CJK run after a letter or
    digit is read as its own bigrams (it was glued into one word, so ``兼容性测试`` never found
    ``5G模组兼容性测试``), and full-width letters and digits read as their ASCII forms."""
    assert tokenize("5G模组兼容性测试") == ["5g", "模组", "组兼", "兼容", "容性", "性测", "测试"]
    assert tokenize("MQTT断线重连") == ["mqtt", "断线", "线重", "重连"]
    assert tokenize("3号楼502会议室") == ["3", "号楼", "502", "会议", "议室"]
    assert tokenize("ＭＱＴＴ端口２０２６年") == ["mqtt", "端口", "2026", "年"]
    idx = BM25Index()
    idx.add_many([(1, "李娜负责完成SG-200的5G模组兼容性测试。"), (2, "刘洋负责整理FAQ文档。"),
                  (3, "默认端口 MQTT 1883。")])
    assert idx.search("兼容性测试", 3)[0].tolist() == [1]
    assert idx.search("ＦＡＱ", 3)[0].tolist() == [2]
    assert idx.search("mqtt", 3)[0].tolist() == [3]


_WORD = st.text(st.sampled_from("aZ09Ｍ２"), min_size=1, max_size=4)
_HAN = st.text(st.sampled_from("模组测试会议室年"), min_size=1, max_size=5)


@settings(max_examples=100, deadline=None)
@given(_WORD, _HAN, _WORD)
def test_tokens_do_not_depend_on_spaces_between_scripts(a, b, c):
    """Where Latin meets CJK no space is needed: the tokens are those of the text spaced out."""
    assert tokenize(a + b + c) == tokenize(f"{a} {b} {c}")

def test_bm25_ranks_and_updates():
    idx = BM25Index()
    idx.add_many([(1, "主角第一次见到师父是在山脚下"), (2, "商人囤积粮食"), (3, "the teacher met the hero"),
                  (4, "师父 师父 teacher")])
    ids, sc = idx.search("师父在哪里", 3)
    assert set(ids.tolist()) == {1, 4}
    ids, _ = idx.search("teacher hero", 3)
    assert ids[0] == 3
    idx.remove(3)
    assert 3 not in idx.search("teacher hero", 3)[0].tolist()
    idx.add(2, "hero teacher hero")  # replace
    assert idx.search("hero", 1)[0][0] == 2 and len(idx) == 3
    assert idx.search("", 3)[0].size == 0 and idx.search("zzz", 3)[0].size == 0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=60), st.integers(1, 70), st.integers(0, 2**31 - 1))
def test_equal_scores_are_taken_and_ordered_by_id(kinds, k, seed):
    """Chunks of equal text score alike: which of them a search returns, and in which order, is by id (as
    PostgreSQL's ORDER BY distance, pk), not an accident of the partition, so every backend and every run
    return the same chunks. Rows of few kinds make ties at every place, the k-th included."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((4, 8)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    ids = rng.permutation(10_000)[: len(kinds)].astype(np.int64)
    idx = ExactIndex(8, ids, base[kinds])
    q = rng.standard_normal(8).astype(np.float32)
    got_ids, got = idx.search(q, k)
    sims = base[kinds] @ q
    want = sorted(zip((-sims).tolist(), ids.tolist(), strict=True))[:k]
    assert got_ids.tolist() == [i for _, i in want] and got.tolist() == [-s for s, _ in want]
    # (a batch's product rounds apart from one query's: its own ties, taken the same way)
    many_ids, many = idx.search_many(np.stack([q, q]), k)
    s2 = (np.stack([q, q]) @ base[kinds].T)[0]
    want2 = sorted(zip((-s2).tolist(), ids.tolist(), strict=True))[:k]
    assert many_ids.tolist() == [[i for _, i in want2]] * 2 and np.allclose(many, got[None, :], atol=1e-6)


def test_a_lone_chinese_character_finds_the_bigrams_that_hold_it():
    """A one-character query (``假``) finds the texts that hold it inside words (``婚假``, ``假期``): the index
    holds bigrams, and the character alone matched none of them. Its count is read from those bigrams."""
    idx = BM25Index()
    idx.add_many([(1, "婚假十天"), (2, "病假半薪，病假假期"), (3, "报销流程"), (4, "假")])
    ids, sc = idx.search("假", 5)
    assert set(ids.tolist()) == {1, 2, 4}
    assert sc[ids.tolist().index(2)] > sc[ids.tolist().index(1)]  # (three of it, against one)
    assert idx.search("税", 5)[0].size == 0
    idx.add(5, "税务")  # (after the first such query the index keeps its characters up to date)
    assert idx.search("税", 5)[0].tolist() == [5]
    idx.remove(5)
    assert idx.search("税", 5)[0].size == 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.sampled_from("婚假期病a ，"), max_size=8), min_size=1, max_size=6), st.integers(0, 5))
def test_a_lone_character_finds_exactly_the_texts_that_hold_it(texts, drop):
    idx = BM25Index()
    idx.add_many(enumerate(texts))
    idx.search("假", 1)
    if drop < len(texts):  # (kept up to date as texts leave and come)
        idx.remove(drop)
        idx.add(len(texts), texts[drop] + "期")
    held = {i: t for i, t in enumerate(texts) if i != drop} | ({len(texts): texts[drop] + "期"} if drop < len(texts) else {})
    for ch in "婚假期病":
        assert set(idx.search(ch, 10)[0].tolist()) == {i for i, t in held.items() if ch in t}, ch

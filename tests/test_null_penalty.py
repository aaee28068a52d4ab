"""The price of a chunk (boundaries.null_penalty): its shuffles are orders of the rows' content, so the
price depends on what the rows are, not on where they stand or how many there are — and an edit in one
place of a document leaves the cuts far from it where they were."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from logichunk import boundaries as bd
from logichunk import chunk
from logichunk.hashing import occurrence_keys
from logichunk.signals.cohesion import lexical_rows, span_keys
from logichunk.sparse_rows import SparseRows

rows_strategy = st.tuples(st.integers(3, 60), st.integers(1, 10), st.floats(0.05, 1.0), st.integers(0, 2**31 - 1))


def _rows(n: int, ncol: int, density: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, ncol)) * (rng.random((n, ncol)) < density), 2)
    # a few repeated rows, as a document's repeated lines are
    dup = rng.integers(0, n, size=n // 4)
    X[rng.integers(0, n, size=dup.size)] = X[dup]
    return X


@settings(max_examples=400, deadline=None)
@given(rows_strategy, st.integers(0, 2**31 - 1))
def test_the_price_is_a_function_of_the_rows_not_of_their_order(problem, seed):
    """The same rows in any order get the same price, to the bit, sparse and dense."""
    X = _rows(*problem)
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    for make in (np.asarray, SparseRows.from_dense):
        assert np.float64(bd.null_penalty(make(X))).tobytes() == np.float64(bd.null_penalty(make(X[perm]))).tobytes()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=2, max_size=80), st.integers(0, 80), st.integers(0, 12),
       st.integers(1, 30))
def test_one_row_more_is_inserted_into_every_shuffle_and_the_others_keep_their_order(keys, at, new, sample):
    """An edit that adds one row (a key, anywhere) leaves each shuffle of the other rows' contents in
    the order it was, and the sample of a longer text changes by at most that row."""
    at = min(at, len(keys))
    old = np.asarray(keys, dtype=np.uint64)
    grown = np.insert(old, at, np.uint64(new))
    # (the text's salt is its smallest key of content: a row that brings a smaller one re-draws all)
    assume(_salt(old) == _salt(grown))
    # copies of one content are told apart by their rank: the grown text holds every old copy's key
    # and one more, wherever the new copy stands
    ka, kb = occurrence_keys(old), occurrence_keys(grown)
    assert set(ka) < set(kb) and len(set(kb)) == len(set(ka)) + 1 == grown.size
    keep_a, orders_a = bd.null_orders(old, sample=sample)
    keep_b, orders_b = bd.null_orders(grown, sample=sample)
    kept_a = ka if keep_a is None else ka[keep_a]
    kept_b = kb if keep_b is None else kb[keep_b]
    left, extra = set(kept_a) - set(kept_b), set(kept_b) - set(kept_a)
    assert len(left) <= 1 and len(extra) <= 1  # the sample: the new row in, at most one old row out
    for oa, ob in zip(orders_a, orders_b, strict=True):
        seq_a = [k for k in kept_a[oa] if k not in left]
        seq_b = [k for k in kept_b[ob] if k not in extra]
        assert seq_a == seq_b


def _salt(keys: np.ndarray) -> int:
    filled = keys[keys != 0]
    return int(filled.min()) if filled.size else 0


def test_rows_without_content_take_no_fixed_places_in_the_shuffles():
    """Rows without content have the same key in every text; salted with each text's own smallest key,
    they fall anywhere in its shuffles — not at places one salt's luck gives them in every text (the
    ``r``-th such row at the same fraction of every text's shuffle, which biased the price of texts with
    many empty rows, as dialogues of short turns have)."""
    rng = np.random.default_rng(0)
    where = np.zeros((300, 10))
    for t in range(300):
        keys = np.concatenate((np.zeros(10, np.uint64), rng.integers(1, 2**63, 10, dtype=np.uint64)))
        _, orders = bd.null_orders(keys)
        place = np.argsort(orders[0])  # each row's place in the first shuffle
        where[t] = place[:10] / 19
    assert np.all(np.abs(where.mean(axis=0) - 0.5) < 0.1)


def test_copies_of_one_row_are_scattered_by_the_shuffles_not_kept_together():
    """Twenty copies of one sentence and twenty of another: a shuffle that kept equal rows side by side
    would find the perfect cut between them and price a chunk at the whole scatter; scattered copies
    leave a random order's far smaller best cut."""
    X = np.repeat(np.eye(2), 20, axis=0)
    whole = bd.best_single_gain(X)  # the two blocks as the text lays them: a cut removes all scatter
    assert whole == pytest.approx(20.0)
    for make in (np.asarray, SparseRows.from_dense):
        assert bd.null_penalty(make(X)) < 0.5 * whole


def test_span_keys_follow_the_spans_content_not_their_place():
    """A span's key is its content items' multiset hash: the same words in another place or order get
    the same key; a word more changes it; the rows' idf would move with the document, the keys do not."""
    text = "Rivers flow to seas. Markets rise and fall. Seas flow to rivers. Markets rise and fall again."
    starts = np.array([0, 21, 44, 65])
    ends = np.array([20, 43, 64, len(text)])
    k = span_keys(text, starts, ends)
    assert k[0] == k[2]  # the same content items, in another order
    assert k[1] != k[3]  # "again" more
    longer = "Markets glow. " + text  # a span before them, sharing a word with two of them
    k2 = span_keys(longer, starts + 14, ends + 14)
    assert np.array_equal(k, k2)
    rows = lexical_rows(text, starts, ends).dense()
    moved = lexical_rows(longer, np.r_[0, starts + 14], np.r_[13, ends + 14]).dense()[1:]
    assert not np.allclose(rows, moved)  # the rows' weights did move (the idf of five spans)


_TOPICS = [
    "river water bank flood boat bridge fish stream current valley delta rain".split(),
    "market price trade stock bond investor profit loss share fund bank rate".split(),
    "garden flower seed soil plant root leaf tree water sun spring grow".split(),
    "engine piston fuel wheel gear motor speed brake driver road car oil".split(),
    "court judge law trial jury verdict appeal lawyer case witness crime".split(),
    "planet star orbit moon telescope galaxy light comet space dust sun".split(),
]
_FILL = "the a of and to in that it with as for on was is by this".split()


def _document(seed: int) -> str:
    """Paragraphs of four to twelve sentences, each on one of six topics, no headings: the size limit,
    not the layout, decides most cuts (a seeded generator, no quality set)."""
    r = random.Random(seed)
    paragraphs = []
    for _ in range(24):
        words = r.choice(_TOPICS)
        for _ in range(r.randint(2, 4)):
            sents = [" ".join(r.choice(words) if r.random() < 0.6 else r.choice(_FILL)
                              for _ in range(r.randint(6, 14))).capitalize() + "." for _ in range(r.randint(4, 12))]
            paragraphs.append(" ".join(sents))
    return "\n\n".join(paragraphs) + "\n"


def test_an_edit_leaves_the_cuts_far_from_it_where_they_were():
    """A paragraph inserted in the middle of a document moves no top-level cut more than 2,000
    characters away from it (the price of a chunk drawn from a generator seeded by the sentence count
    moved 31 of 3,888 such cuts on these sixty documents and limits)."""
    para = "\n\nThis paragraph was inserted by an edit and speaks of something else entirely."
    moved = []
    for seed in range(20):
        text = _document(seed)
        mid = text.find("\n\n", len(text) // 2)
        edited = text[:mid] + para + text[mid:]
        for size in (300, 600, 1000):
            before = sorted({c.end for c in chunk(text, max_size=size) if "." not in c.id})[:-1]
            after = {c.end for c in chunk(edited, max_size=size) if "." not in c.id}
            far = [c for c in before if abs(c - mid) > 2000]
            moved += [(seed, size, c) for c in far if (c if c < mid else c + len(para)) not in after]
    assert moved == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), max_size=200), st.lists(st.tuples(st.integers(0, 200), st.integers(0, 200)),
                                                                  max_size=30))
def test_the_compiled_bag_keys_are_the_numpy_bag_hashes_to_the_bit(ids, spans):
    """Each span's key from the kernel's one pass and from the numpy passes: the same 64 bits."""
    from logichunk import native
    from logichunk.hashing import bag_hashes

    assert native.available(), native.status()
    ids_arr = np.asarray(ids, dtype=np.uint32)
    lo = np.asarray([min(a, b, len(ids)) for a, b in spans], dtype=np.int64)
    hi = np.asarray([min(max(a, b), len(ids)) for a, b in spans], dtype=np.int64)
    assert np.array_equal(native.bag_keys(lo, hi, ids_arr), bag_hashes(ids_arr, lo, hi))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 5), max_size=300))
def test_the_compiled_ranks_of_equal_keys_are_the_sorted_ones(keys):
    """occurrence_keys from the kernel's hash table and from the numpy sort: the same keys, to the bit."""
    from logichunk import native

    assert native.available(), native.status()
    k = np.asarray(keys, dtype=np.uint64)
    compiled = occurrence_keys(k)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "occurrence_ranks", lambda *a: None)
        passes = occurrence_keys(k)
    assert np.array_equal(compiled, passes)
    assert np.unique(compiled).size == compiled.size  # copies told apart

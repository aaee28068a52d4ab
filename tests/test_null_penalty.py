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


def _edges(keys: np.ndarray, window: int) -> np.ndarray:
    win = bd.price_windows(keys, window)
    return np.flatnonzero(np.diff(win)) + 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=900), st.integers(4, 40), st.data())
def test_an_edit_moves_the_price_windows_next_to_it_only(keys, window, data):
    """The windows each priced alone (boundaries.price_windows): every edge before an edit stays, and every edge
    some windows after it comes back shifted by the atoms the edit added or removed; no window is shorter than a
    quarter of ``window`` (but one alone), none longer than four times it and a quarter."""
    k = np.asarray(keys, dtype=np.uint64)
    n = k.size
    at = data.draw(st.integers(0, n))
    gone = data.draw(st.integers(0, min(3, n - at)))
    new = np.asarray(data.draw(st.lists(st.integers(0, 2**64 - 1), max_size=3)), dtype=np.uint64)
    k2 = np.concatenate((k[:at], new, k[at + gone :]))
    e1, e2 = _edges(k, window), _edges(k2, window)
    lengths = np.diff(np.concatenate(([0], e1, [n])))
    if lengths.size > 1:
        assert lengths.min() >= window // 4 and lengths.max() <= 4 * window + window // 4
    if n - at > 5 * window:  # (the text's last window joins the one before it: the end must lie far)
        assert np.array_equal(e1[e1 < at], e2[e2 < at])
    shift = new.size - gone
    far = at + 5 * window
    if n - far > 2 * window:
        after1 = e1[(e1 > far) & (e1 < n - window)]
        after2 = e2[(e2 > far + shift) & (e2 < n + shift - window)] - shift
        assert np.array_equal(after1, after2)


def test_a_text_of_one_window_pays_the_texts_price():
    """Below a window's size nothing changes: every atom's price is the text's permutation price."""
    text = _document(3)[:4000]
    from logichunk.text.sentences import split_sentences

    s = split_sentences(text)
    rows, keys = lexical_rows(text, s.starts, s.ends), span_keys(text, s.starts, s.ends)
    assert len(s) < bd.PRICE_WINDOW // 2
    assert np.array_equal(bd.chunk_prices(rows, keys), np.full(len(s), bd.null_penalty(rows, keys)))


_NAMES = "Alice Marcus Helena Tobias Greta Ivan Nora Felix Ruth Oscar Clara Edwin Mabel Silas Iris Jasper".split()
_ADJ = "quiet heavy bright cold broken ancient strange gentle bitter golden".split()
_VERBS = "watched remembered carried discussed feared admired counted ignored noticed repaired found lost".split()


def _novel(seed: int, chapters: int) -> str:
    """Chapters of paragraphs of varied sentences on drifting topics (a seeded generator, no quality set)."""
    r = random.Random(seed)
    out = []
    for ch in range(1, chapters + 1):
        out.append(f"CHAPTER {ch}.\n\n")
        topic, names = _TOPICS[ch % len(_TOPICS)], r.sample(_NAMES, 4)
        for _ in range(r.randint(8, 16)):
            if r.random() < 0.3:
                topic = r.choice(_TOPICS)
            sents = []
            for _ in range(r.randint(2, 7)):
                a, b = r.sample(names, 2)
                w = r.sample(topic, 3)
                sents.append(r.choice([
                    f"{a} {r.choice(_VERBS)} the {r.choice(_ADJ)} {w[0]} by the {w[1]}.",
                    f"\u201cThe {w[0]} will not wait for us,\u201d said {a}, looking at the {w[1]}.",
                    f"However, {b} {r.choice(_VERBS)} the {w[1]} and the {w[2]} with {r.choice(_ADJ)} care.",
                    f"{a} asked {b} whether the {w[1]} was {r.choice(_ADJ)}; {b} did not answer.",
                    f"The {r.choice(_ADJ)} {w[0]} was something {a} would remember for years."]))
            out.append(" ".join(sents) + "\n\n")
    return "".join(out)


def test_a_word_added_near_a_long_texts_end_moves_no_cut_far_before_it():
    """One price for a whole text moved with any edit, and the optimum's near-ties moved cuts a hundred thousand
    characters away (a word added near a novel's end moved an earlier level-1 cut in 19 of 60 edits): each window
    is priced on its own now."""
    text = _novel(3, 80)  # (272,274 characters: three of these twelve edits moved an earlier cut)
    r = random.Random(7)
    moved = []
    base = {size: [c.span.end for c in chunk(text, max_size=size).roots()] for size in (300,)}
    for _ in range(12):
        at = text.find(" ", r.randrange(int(len(text) * 0.9), len(text) - 20))
        edited = text[:at] + " suddenly" + text[at:]
        for size, cuts in base.items():
            after = {c.span.end for c in chunk(edited, max_size=size).roots()}
            moved += [(at, size, c) for c in cuts if c < at - 5000 and c not in after]
    assert moved == []


windowed = st.tuples(st.integers(1, 70), st.integers(1, 9), st.floats(0.05, 1.0), st.integers(0, 2**31 - 1),
                     st.lists(st.integers(1, 69), max_size=6), st.integers(0, 3))


def _windowed(n: int, ncol: int, density: float, seed: int, cuts: list[int], spread: int
              ) -> tuple[SparseRows, np.ndarray, np.ndarray]:
    """Sparse rows (some repeated, some empty, values of both signs), their keys (copies of one key, zeros among
    them) and the windows' starts."""
    X = _rows(n, ncol, density, seed)
    keys = np.random.default_rng(seed).integers(0, 1 + 4**spread, n).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    ws = np.unique(np.asarray([0] + [c for c in cuts if c < n], dtype=np.int64))
    return SparseRows.from_dense(X), keys, ws


@settings(max_examples=400, deadline=None)
@given(windowed, st.booleans())
def test_the_compiled_window_prices_are_the_numpy_ones_to_the_last_bit(problem, fresh):
    """Each window's price from the compiled pass (one pass per window and shuffle over its own entries) and from
    the numpy passes: the same additions in the same order, so the same bits, ties and empty rows included."""
    from logichunk import native
    from logichunk.boundaries import scatter

    assert native.available(), native.status()
    S, keys, ws = _windowed(*problem)
    compiled = native.window_prices(S.row, S.col, S.val, S.sqnorms(), keys, ws, S.ncol, bd.NULL_SHUFFLES, 0, fresh)
    passes = scatter._window_prices_numpy(S, keys, ws, bd.NULL_SHUFFLES, 0, fresh)
    assert compiled.tobytes() == passes.tobytes()
    with pytest.MonkeyPatch.context() as mp:  # without the kernel: a few windows at a time, the same bits
        mp.setattr(native, "window_prices", lambda *a: None)
        mp.setattr(scatter, "_WINDOW_BLOCK", 7)
        blocks = scatter._window_prices(S, keys, ws, fresh=fresh)
    assert blocks.tobytes() == compiled.tobytes()


@settings(max_examples=300, deadline=None)
@given(windowed)
def test_each_window_is_priced_as_the_permutation_price_of_its_rows_alone(problem):
    """A window's price is null_penalty of its rows alone, to the bit, whatever the other windows hold; and that
    is what the permutation rule says: the largest best single gain over null_orders' shuffles of its rows."""
    from logichunk.boundaries import scatter

    S, keys, ws = _windowed(*problem)
    got = scatter._window_prices(S, keys, ws)
    D = S.dense()
    for w, (a, b) in enumerate(zip(ws.tolist(), np.append(ws[1:], S.n).tolist(), strict=True)):
        alone = bd.null_penalty(S.take(np.arange(a, b)), keys[a:b])
        assert np.float64(got[w]).tobytes() == np.float64(alone).tobytes()
        if b - a >= 3:
            _, orders = bd.null_orders(keys[a:b])
            rule = max(bd.best_single_gain(D[a:b][o]) for o in orders)
            assert got[w] == pytest.approx(rule, rel=1e-9, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(windowed, st.data())
def test_an_edit_in_one_window_leaves_the_other_windows_prices_as_they_were(problem, data):
    """Rows changed, added or removed in one window: every other window's price is the same bits (its sums are
    its own rows' alone)."""
    from logichunk.boundaries import scatter

    S, keys, ws = _windowed(*problem)
    assume(ws.size > 1)
    D = S.dense()
    bounds = np.append(ws, S.n)
    w = data.draw(st.integers(0, ws.size - 1))
    a, b = int(bounds[w]), int(bounds[w + 1])
    at = data.draw(st.integers(a, b))
    gone = data.draw(st.integers(0, b - at))
    new = np.round(np.asarray(data.draw(st.lists(st.lists(st.floats(-2, 2), min_size=D.shape[1],
                                                             max_size=D.shape[1]), max_size=3))).reshape(-1, D.shape[1]), 2)
    assume(b - a - gone + len(new) > 0)
    D2 = np.concatenate((D[:at], new, D[at + gone :]))
    k2 = np.concatenate((keys[:at], np.arange(len(new), dtype=np.uint64) + np.uint64(77), keys[at + gone :]))
    shift = len(new) - gone
    ws2 = np.concatenate((ws[: w + 1], ws[w + 1 :] + shift))
    before = scatter._window_prices(S, keys, ws)
    after = scatter._window_prices(SparseRows.from_dense(D2), k2, ws2)
    others = np.arange(ws.size) != w
    assert before[others].tobytes() == after[others].tobytes()

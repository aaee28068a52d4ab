"""Parents' children in one pass: the layouts of many texts read together, the children of many parents cut
together, the price of a few dense rows from their Gram matrix, small runs absorbed in one scan — each the
answer of the one-at-a-time version it replaces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk.boundaries import SizeLimits, local, scatter
from logichunk.chunkers import parent_child as pc
from logichunk.models import HashEmbedder
from logichunk.text.sentences import laid_end_to_end, split_sentences
from logichunk.text.structure import layout, layouts

EMB = HashEmbedder(64)
P = pc.PCParams(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50, child_max_size=80)

PIECES = ["Cats purr softly. ", "Dogs bark at night. ", "Markets fell sharply today. ", "\n\n", "\n", "## Heading\n",
          "- item one\n", "猫在夜里轻轻地叫。", "投资者卖出了债券，", "Dr. Smith e.g. 3.14 ", "x" * 90, "长" * 70,
          "```\n", "# not a heading\n", "Short Title Line\n\n", "KING.\n", "SCENE II. Elsinore. A room.\n\n", "12\n",
          "Q: Why is it so?\n", "A: Because it is.\n", "<!-- a note\n", "-->\n", "  An indented line of it.\n",
          "1．加强组织领导\n", "| Key | Value |\n|---|---|\n", "as follows:\n", "    code_line = 1\n", "def f(x):\n",
          "the river, which we measured\nto be wide, ran on and on past the\nold mill and the town where\n",
          "---\ntitle: x\n---\n", "\f", "Page 3\n", "       -a, --all\n              do not ignore it.\n\n",
          "NOTES\n       Read on.\n"]
texts = st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=30).map("".join), min_size=1, max_size=10)


def _same_layout(a, b) -> None:
    for f in ("heading", "strength", "no_cut", "leans", "lead_in"):
        assert getattr(a, f).tolist() == getattr(b, f).tolist(), f
    for f in ("in_block", "in_terms"):
        blk_a = getattr(a, f) if getattr(a, f) is not None else np.zeros(a.no_cut.size, bool)
        blk_b = getattr(b, f) if getattr(b, f) is not None else np.zeros(b.no_cut.size, bool)
        assert blk_a.tolist() == blk_b.tolist(), f


@settings(max_examples=250, deadline=None)
@example(["```\nopen fence", "# Title\n\nclosed?\n```\n"])  # a fence never pairs across two texts
@example(["one text alone"])
@example(["Cats purr softly. ", "Page 3\n\x0c1．加强组织领导\n## Heading\n\x0c"])  # (a text that opens with furniture)
@given(texts)
def test_the_layouts_of_many_texts_are_each_texts_own(batch):
    sents = [split_sentences(t) for t in batch]
    for ss, lay in zip(sents, layouts(batch, sents), strict=True):
        _same_layout(lay, layout(ss))
        assert lay.heading.size == len(ss)


def test_texts_laid_end_to_end_keep_their_sentences():
    batch = ["One. Two.", "三。四。", "Five"]
    sents = [split_sentences(t) for t in batch]
    joined, starts, seam = laid_end_to_end(batch, sents)
    assert joined.text == "\n".join(batch) and starts.tolist() == [0, 10, 15]
    o = 0
    for ss, at in zip(sents, starts.tolist(), strict=True):
        n = len(ss)
        assert [joined.text[a:b] for a, b in zip(joined.starts[o : o + n], joined.ends[o : o + n], strict=True)] \
            == ss.texts()
        assert not seam[o : o + n - 1].any() and joined.breaks[o : o + n - 1].tolist() == ss.breaks.tolist()
        assert at == joined.starts[o]
        o += n + 1  # each separator is a sentence of its own, with a seam on both sides
    assert seam.sum() == 2 * (len(batch) - 1)
    with pytest.raises(ValueError):
        laid_end_to_end(["a", ""], [split_sentences("a"), split_sentences("")])


def _vec(texts):
    return np.asarray(EMB.embed(texts, kind="passage"), np.float32)


parent_texts = st.lists(st.sampled_from(["Tea and rain. ", "主角见到师父。", "A long winding sentence about the road, ",
                                         "\n\n", "## Snow\n", "价格一天比一天高！", "\n", "word " * 30, "- item\n"]),
                        max_size=120).map("".join)


@settings(max_examples=200, deadline=None)
@given(parent_texts, st.sampled_from([pc.GROUP_CHARS, 1, 200]))
def test_the_children_of_many_parents_are_each_parents_own(text, group):
    """Every parent's children, bubbles included, as a call for that parent alone gives them, however the
    parents are grouped."""
    parents = pc.layout_parents(pc.blank_line_blocks(text), _vec, P)
    found = [[] for _ in parents]
    old = pc.GROUP_CHARS
    pc.GROUP_CHARS = group
    try:
        together = pc.children_of([p.text for p in parents], _vec, P, [p.segments for p in parents], found,
                                  [f"parent {i}" for i in range(len(parents))])
    finally:
        pc.GROUP_CHARS = old
    for i, (par, kids, bubbles) in enumerate(zip(parents, together, found, strict=True)):
        alone: list = []
        assert kids == pc.split_children(par.text, _vec, P, par.segments, alone, where=f"parent {i}")
        assert bubbles == alone
        assert kids[0].start == 0 and kids[-1].end == len(par.text)
        assert all(a.end == b.start for a, b in zip(kids, kids[1:], strict=False))


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 300), st.integers(1, 40), st.integers(0, 2**31 - 1))
def test_the_price_of_a_few_rows_from_their_gram_matrix_is_the_prefix_sums_price(n, dim, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, dim)) * (rng.random((n, dim)) < 0.5)
    _, orders = scatter.null_orders(rng.integers(1, 2**62, n).astype(np.uint64))
    plain = max(scatter.best_single_gain(X[o]) for o in orders)
    gram = scatter._dense_gain(X, orders)
    old = scatter._GRAM_MAX
    scatter._GRAM_MAX = 0  # every size through the prefix sums
    try:
        prefix = scatter._dense_gain(X, orders)
    finally:
        scatter._GRAM_MAX = old
    assert gram == pytest.approx(plain, rel=1e-9, abs=1e-9) and prefix == pytest.approx(plain, rel=1e-9, abs=1e-9)


def _absorb_plainly(cuts, keep, strengths, cum, limits, pin):
    """The rule as first written: after each merge, scan again from the first run."""
    n = cum.size - 1
    live = np.flatnonzero(keep).tolist()
    changed = True
    while changed and live:
        changed = False
        edges = [0] + [int(cuts[c]) + 1 for c in live] + [n]
        for r in range(len(edges) - 1):
            if int(cum[edges[r + 1]] - cum[edges[r]]) >= limits.min_size:
                continue
            options = []
            if r > 0 and not pin[live[r - 1]]:
                options.append((float(strengths[live[r - 1]]), r - 1, int(cum[edges[r + 1]] - cum[edges[r - 1]])))
            if r < len(live) and not pin[live[r]]:
                options.append((float(strengths[live[r]]), r, int(cum[edges[r + 2]] - cum[edges[r]])))
            options = [o for o in options if o[2] <= limits.max_size]
            if options:
                _, k, _ = min(options)
                keep[live[k]] = False
                del live[k]
                changed = True
                break
    return keep


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=2, max_size=40), st.integers(0, 2**31 - 1), st.integers(20, 200),
       st.integers(1, 200))
def test_small_runs_are_absorbed_in_one_scan_as_in_many(sizes, seed, max_size, min_size):
    rng = np.random.default_rng(seed)
    n = len(sizes)
    cum = np.concatenate(([0], np.cumsum(sizes)))
    cuts = np.sort(rng.choice(n - 1, size=int(rng.integers(0, n)), replace=False)).astype(np.int64)
    keep = rng.random(cuts.size) < 0.8
    strengths = np.round(rng.random(cuts.size), 1)  # (ties: the earlier run's option first, as before)
    pin = (rng.random(cuts.size) < 0.1).tolist()
    limits = SizeLimits(max_size, min(min_size, max_size), min(min_size, max_size))
    assert local._absorb_small(cuts, keep.copy(), strengths, cum, limits, pin).tolist() == \
        _absorb_plainly(cuts, keep.copy(), strengths, cum, limits, pin).tolist()


def test_a_parent_child_tree_does_not_depend_on_how_many_vectors_are_remembered(monkeypatch):
    """The library entry keeps only its latest texts' vectors (its memory stays flat on a long text): with room
    for three it cuts as with room for thousands, asking the embedder again for what it let go."""
    text = "".join(f"## Part {i}\n\nTea and rain fall on the road {i}. The market opens late. 主角见到师父。\n\n"
                   f"{'A long winding sentence about the mountain road, ' * (i % 4 + 1)}\n\n" for i in range(30))
    calls: list[int] = []

    class Counting:
        dim, model_id = EMB.dim, EMB.model_id

        def embed(self, texts, *, kind="passage"):
            calls.append(len(texts))
            return EMB.embed(texts, kind=kind)

    full = pc.chunk_parent_child(text, Counting(), P)
    asked = sum(calls)
    monkeypatch.setattr(pc, "MEMO_TEXTS", 3)
    small = pc.chunk_parent_child(text, Counting(), P)
    assert [(c.id, c.span, c.method) for c in small] == [(c.id, c.span, c.method) for c in full]
    assert sum(calls) - asked > asked  # (texts it let go were asked for again)

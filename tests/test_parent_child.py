"""The parent-child chunker on its own: tree invariants, size bounds, merges, oversized sentences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk.chunkers.parent_child import PCParams, blank_line_blocks, chunk_parent_child, layout_parents
from logichunk.models import HashEmbedder
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout
from logichunk.tree import check_tree

EMB = HashEmbedder(64)
P = PCParams(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50, child_max_size=80)

piece = st.sampled_from(["Tea and rain. ", "主角见到师父。", "A long winding sentence about the mountain road, ",
                         "\n\n", "x", "价格一天比一天高！", "\n", "Snow. "])
texts = st.lists(piece, max_size=120).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts)
@example("Tea and rain. Tea and rain. Tea and rain. Tea and rain. 主角见到师父。\n\nTea and rain. Tea and rain. 主角见到师父。\n\n"
         "主角见到师父。A long winding sentence about the mountain road, " + "Tea and rain. " * 7
         + "A long winding sentence about the mountain road, " * 2 + "\n\nTea and rain. ")  # (a lead-in's cut moved
# before its piece stranded the 37-character parent the fit had merged across it, beside one of 65)
def test_tree_invariants_and_bounds(text):
    tree = chunk_parent_child(text, EMB, P)
    check_tree(tree)
    for c in tree:
        assert len(c.span) <= (P.max_parent_size if c.level == 1 else P.child_max_size)
    roots = tree.roots()
    sents = split_sentences(text)
    heads = {int(sents.starts[i]) for i in np.flatnonzero(layout(sents).heading)}
    for i, r in enumerate(roots):
        if len(r.span) < P.min_parent_size and len(roots) > 1:
            # a small parent merges with a neighbour that has room, unless the later of the two
            # opens with a heading (a heading opens a parent: the merge would bury it)
            nb = [len(roots[j].span) for j in (i - 1, i + 1) if 0 <= j < len(roots)
                  and roots[max(i, j)].span.start not in heads]
            assert all(len(r.span) + n > P.max_parent_size for n in nb)


def test_small_blocks_merge_big_block_splits():
    blocks = ["Title\n\n", "Short one.\n\n", "Tea and rain fall. " * 40 + "\n\n"]
    parents = layout_parents(blocks, lambda t: EMB.embed(t), P)
    assert parents[0].method == "block-merge" and parents[0].blocks[:2] == (0, 1)
    assert all(len(p.text) <= 300 for p in parents)
    assert "".join(p.text for p in parents) == "".join(blocks)


def test_oversized_sentence_is_split_with_bubble():
    text = "word " * 200 + ".\n\n"
    tree = chunk_parent_child(text, EMB, P)
    check_tree(tree)
    assert any(b.category == "forced_split" and b.context["where"] for b in tree.bubbles)


def test_blank_line_blocks_tile():
    t = "a\n\nb\n \n\nc"
    assert blank_line_blocks(t) == ["a\n\n", "b\n \n\n", "c"]
    assert blank_line_blocks("") == []
    # a text's leading blank lines belong to its first block, as they belong to its first sentence
    assert blank_line_blocks("\n\n" + t) == ["\n\na\n\n", "b\n \n\n", "c"]
    assert blank_line_blocks(" \n\n ") == [" \n\n "]


def test_blank_line_blocks_of_crlf_text_match_lf_text():
    from logichunk.chunkers.parent_child import blank_line_blocks

    lf = "First para. Two.\n\nSecond para.\n\n\nThird.\n"
    crlf = lf.replace("\n", "\r\n")
    assert len(blank_line_blocks(crlf)) == len(blank_line_blocks(lf)) == 3
    assert "".join(blank_line_blocks(crlf)) == crlf


@pytest.mark.parametrize("text, fences", [
    ("a\n```py\nx\n\ny\n```\nb", [(2, 16)]),
    ("~~~\nopen\n\nforever", [(0, 17)]),  # unclosed: to the end
    ("````\n```\nstill code\n\n````\n", [(0, 25)]),  # a shorter run does not close
    ("```\ncode\n``` not a closer\n\n```\n", [(0, 30)]),  # text after the marks: not a closer
    ("``` inline `code` here\n\npara\n", []),  # backticks in the info string: inline code
    ("```\na\n```\n\n~~~\nb\n~~~\n", [(0, 9), (11, 20)]),
])
def test_fence_spans_pair_like_the_splitter(text, fences):
    from logichunk.text.sentences import fence_spans

    assert fence_spans(text) == fences


def test_blank_line_blocks_keep_fenced_code_whole():
    from logichunk.chunkers.parent_child import blank_line_blocks

    text = "Intro.\r\n\r\n```python\r\nimport sys\r\n\r\ndef main():\r\n    pass\r\n```\r\n\r\nAfter.\r\n"
    blocks = blank_line_blocks(text)
    assert "".join(blocks) == text and len(blocks) == 3
    assert blocks[1].startswith("```python") and "def main" in blocks[1]


def _parent_ending_in_heading(text, tree):
    from logichunk.text.sentences import split_sentences
    from logichunk.text.structure import layout

    sents = split_sentences(text)
    lay = layout(sents)
    end_of = {int(e): i for i, e in enumerate(sents.ends.tolist())}
    for c in tree.roots():
        i = end_of.get(c.span.end)
        if i is not None and i < len(sents) - 1 and lay.no_cut[i]:
            return c
    return None


@pytest.mark.parametrize("path", ["examples/en_public_domain.md", "examples/zh_public_domain.txt"])
def test_parents_open_at_headings_in_the_examples(path):
    from pathlib import Path

    from logichunk.models.embed_hash import HashEmbedder

    text = (Path(__file__).resolve().parents[1] / path).read_text(encoding="utf-8")
    tree = chunk_parent_child(text, HashEmbedder())
    assert _parent_ending_in_heading(text, tree) is None
    assert "".join(tree.text_of(c) for c in tree.roots()) == text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["# Title\n\n", "## Part\n\n", "短标题\n\n", "A paragraph of some words here. " * 3 + "\n\n",
                                 "中文的段落在这里，有一些字。" * 4 + "\n\n"]), min_size=2, max_size=25))
def test_no_parent_ends_with_a_heading_when_the_next_parent_has_room(parts):
    from logichunk.models.embed_hash import HashEmbedder

    text = "".join(parts)
    tree = chunk_parent_child(text, HashEmbedder())
    c = _parent_ending_in_heading(text, tree)
    if c is not None:  # only where the heading and what follows it would not fit one parent
        nxt = tree.roots()[tree.roots().index(c) + 1]
        assert nxt.span.end - c.span.start > 1500


@pytest.mark.parametrize("child_max", [200, 300, 400, 800])
@pytest.mark.parametrize("name", ["en_public_domain.md", "zh_public_domain.txt"])
def test_children_never_end_on_a_heading(name, child_max):
    """A child ends on a heading (or a lead-in) only where it cannot be helped: the headings take half
    the child's maximum or more, or the sentence under them fits alone but not with them. A block edge
    after a heading is no place to end a child, and a long sentence under a heading leaves it room in
    its first piece (before, `## The Declaration of Independence (1776)` was a child of its own)."""
    from pathlib import Path

    from logichunk.text.measure import Meter

    text = (Path(__file__).resolve().parents[1] / "examples" / name).read_text(encoding="utf-8")
    m = child_max
    tree = chunk_parent_child(text, EMB, PCParams(max_parent_size=6 * m, min_parent_size=m // 2,
                                                 child_min_size=m // 4, child_max_size=m,
                                                 child_target_size=(5 * m) // 8))
    check_tree(tree)
    sents = split_sentences(text)
    lay = layout(sents)
    meter = Meter(text)
    end_of = {int(e): i for i, e in enumerate(sents.ends.tolist())}
    for c in tree:
        i = end_of.get(c.span.end)
        if c.level != 2 or i is None or i == len(sents) - 1 or not lay.no_cut[i]:
            continue
        k = i
        while k > 0 and lay.no_cut[k - 1]:
            k -= 1
        run = meter.size(int(sents.starts[k]), int(sents.ends[i]))
        nxt = meter.size(int(sents.starts[i + 1]), int(sents.ends[i + 1]))
        assert 2 * run >= m or (nxt <= m < run + nxt), (c, tree.text_of(c))


_SENTENCES = st.sampled_from(["Tea and rain fall on the hill.", "The market closed early today.",
                              "价格一天比一天高。", "Snow covers the road.", "主角见到师父，拜了三拜。",
                              "Judges heard the appeal at noon."])
_PARAGRAPHS = st.lists(st.lists(_SENTENCES, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=8)


@settings(max_examples=500, deadline=None)
@given(_PARAGRAPHS, st.sampled_from([60, 100, 160]))
def test_children_keep_a_paragraph_that_fits_whole(paragraphs, child_max):
    """The children are the global decision's (the cascade's structure rules): no cut falls inside a
    paragraph that fits the child's maximum. The rule before, cliffs first, then sizes, cut inside such
    paragraphs wherever the hash embedder's cosine dipped."""
    from logichunk.chunkers.parent_child import split_children

    text = "\n\n".join(paragraphs) + "\n"
    p = PCParams(max_parent_size=10_000, min_parent_size=1, child_min_size=child_max // 4,
                 child_max_size=child_max, child_target_size=(5 * child_max) // 8)
    kids = split_children(text, lambda t: EMB.embed(t), p)
    assert kids[0].start == 0 and kids[-1].end == len(text)
    assert all(a.end == b.start for a, b in zip(kids, kids[1:], strict=False))
    starts = [0]
    for para in paragraphs[:-1]:
        starts.append(starts[-1] + len(para) + 2)
    for lo, hi in zip(starts, [*starts[1:], len(text)], strict=True):  # a paragraph with the blank line after it
        if hi - lo <= child_max:
            assert not any(lo < k.end < hi for k in kids), (text[lo:hi], [text[k.start:k.end] for k in kids])


def test_children_follow_the_meaning_where_the_layout_says_nothing():
    """One paragraph too long for one child, of two topics the embedder tells apart: the children
    break where the topic changes, not where a size fill would."""
    from logichunk.chunkers.parent_child import split_children

    a = ["Rivers carry water to the sea."] * 5
    b = ["Markets set the price of bread."] * 3
    text = " ".join(a + b) + "\n"

    class Topics:  # two orthogonal directions, one per topic
        dim = 2

        def embed(self, texts, kind="passage"):
            return np.asarray([[1.0, 0.0] if "River" in t else [0.0, 1.0] for t in texts], np.float32)

    p = PCParams(max_parent_size=10_000, min_parent_size=1, child_min_size=10, child_max_size=200,
                 child_target_size=160)
    kids = split_children(text, lambda t: Topics().embed(t), p)
    assert [text[k.start:k.end].strip().split(" ")[0] for k in kids] == ["Rivers", "Markets"]
    assert kids[1].method == "semantic-cliff"

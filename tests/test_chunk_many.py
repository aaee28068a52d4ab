"""chunk_many: many texts in one pass give exactly the trees of one call per text."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk import chunk, chunk_many
from logichunk.errors import InputError


def _fingerprint(tree):
    return ([(c.id, c.span.start, c.span.end, c.method, dict(c.meta)) for c in tree],
            json.dumps(list(dict(tree.stats).items()), default=str),
            [(b.category, b.content, b.priority, json.dumps(b.context, sort_keys=True)) for b in tree.bubbles],
            tree.unit, tree.text)


PIECES = ["Cats purr softly. ", "Dogs bark at night. ", "Markets fell sharply today. ", "Investors sold bonds. ",
          "\n\n", "\n", "## Heading\n", "- item one\n", "猫在夜里轻轻地叫。", "股市今天大幅下跌！", "投资者卖出了债券，",
          "Dr. Smith e.g. 3.14 ", "x" * 90, "长" * 70, "😀 ", "word " * 12, "```\n", "# not a heading\n",
          "Short Title Line\n\n", "KING.\n", "SCENE II. Elsinore. A room.\n\n", "12\n",
          "00:00:01,000 --> 00:00:04,000\n", "Q: Why is it so?\n", "A: Because it is.\n", "\\section{Intro}\n",
          "<!-- a note\n", "-->\n", "``TERM``\n", "  An indented definition of it.\n", "1．加强组织领导\n", "（1）苹果\n",
          "| Key | Value |\n|---|---|\n", "张三 2024-03-12 09:14\n", "[12/03/24, 09:14:22] Ann: ", "09:14 <ann> ",
          "    \"MY DEAR FRIEND,--\n\n", "Yours ever,\n"]  # an unclosed fence in one text must not pair with a fence in the next
texts = st.lists(st.lists(st.sampled_from(PIECES), max_size=40).map("".join), min_size=1, max_size=12)
shapes = st.sampled_from([dict(max_size=120, levels=1), dict(max_size=200, levels=2, composite=False),
                          dict(max_size=300, levels=3), dict(max_size=150, levels=1, unit="bytes", composite=False),
                          dict(max_size=60, levels=2, unit="tokens", target_ratio=0.7)])


@settings(max_examples=400, deadline=None)
@example(["", "One sentence only.", "x" * 500, "a. " * 80], dict(max_size=100, levels=1, composite=False))
@example(["A long first sentence with many words in it that goes on and on. A second one, also long enough here."],
         dict(max_size=100, levels=1, composite=False))  # one gap only: it is a tier-1 candidate
@example(["Some opening words here. More of them follow.\n\nAnd a last paragraph to close it.",
          "KING.\nThough yet of Hamlet our dear brother's death the memory be green. And that it us befitted to bear "
          "our hearts in grief.\n\nFRANCISCO.\nNot a mouse stirring."],
         dict(max_size=60, levels=1))  # a speaker's name opening a text is no label there, in one pass too
@example([']\n```\n; #\n\u3000单项\ud800https://x.com/a_(b)  */😀 ： Grad G 单项 ',
          'plain text here. And more of it, to be cut somewhere else.'],
         dict(max_size=40))  # a cut inside a text's last sentence, in a fence the text ends in: in the block there too
@example(["Cats purr softly. \n\n1．加强组织领导\n（1）苹果\nCats purr softly. Cats purr softly. " + "长" * 70
          + "Cats purr softly. [12/03/24, 09:14:22] Ann: ", "Cats purr softly. " * 4],
         dict(max_size=300, levels=3))  # a text ending in a lead-in (a chat's header) binds nothing of the next text
@given(texts, shapes)
def test_many_texts_in_one_pass_are_one_call_each(batch, shape):
    many = chunk_many(batch, **shape)
    assert len(many) == len(batch)
    for text, tree in zip(batch, many, strict=True):
        assert _fingerprint(tree) == _fingerprint(chunk(text, **shape))


def test_sources_name_each_texts_bubbles_and_spans_are_its_own():
    texts = ["Short. " * 3, "y" * 400, "z" * 300]
    trees = chunk_many(texts, max_size=100, levels=1, sources=["a.txt", "b.txt", "c.txt"])
    assert [len(t.bubbles) for t in trees] == [0, 1, 1]
    assert trees[1].bubbles[0].context["source"] == "b.txt" and trees[2].bubbles[0].context["span"] == [0, 300]
    with pytest.raises(InputError):
        chunk_many(texts, sources=["only one"])
    with pytest.raises(InputError):
        chunk_many(["fine", b"bytes"])  # type: ignore[list-item]
    with pytest.raises(InputError, match="source must be a str"):
        chunk_many(texts, sources=[1, 2, 3])  # type: ignore[list-item]
    with pytest.raises(InputError, match="list of texts, got int"):
        chunk_many(5)  # type: ignore[arg-type]
    # any iterable of texts, a generator too (it asked for its len())
    assert [t.records() for t in chunk_many(t for t in texts[:2])] == [t.records() for t in chunk_many(texts[:2])]


@settings(max_examples=150, deadline=None)
@given(texts, shapes, st.integers(0, 40))
def test_overlap_is_the_overlap_of_one_call_each(batch, shape, overlap):
    """``chunk()`` takes ``overlap=`` and chunk_many refused it (a TypeError): the same windows now."""
    many = chunk_many(batch, overlap=overlap, **shape)
    for text, tree in zip(batch, many, strict=True):
        assert _fingerprint(tree) == _fingerprint(chunk(text, overlap=overlap, **shape))


@settings(max_examples=60, deadline=None)
@given(texts, shapes)
def test_small_shared_passes_give_the_same_trees(batch, shape):
    """The shared pass takes about GROUP characters at a time (bounded memory for a framework's whole
    corpus): any grouping gives the trees of one call per text."""
    import logichunk.chunkers.many as many_mod

    old = many_mod.GROUP
    many_mod.GROUP = 150
    try:
        many = chunk_many(batch, **shape)
    finally:
        many_mod.GROUP = old
    for text, tree in zip(batch, many, strict=True):
        assert _fingerprint(tree) == _fingerprint(chunk(text, **shape))


def test_llm_and_signals_fall_back_to_one_call_each():
    import numpy as np

    class Scripted:  # a chat model that always answers the middle sentence
        def __init__(self):
            self.calls = 0

        def complete(self, messages, *, max_tokens=128, temperature=0.0):
            self.calls += 1
            n = messages[-1]["content"].count("\n") + 1
            return type("R", (), {"text": f"Breaks: [{n // 2}]"})()

    class Alternating:  # a tier-1 signal of its own
        name = "alternating"

        def gap_scores(self, sents):
            return np.resize(np.array([0.0, 1.0]), max(len(sents) - 1, 0)).astype(np.float64)

    batch = ["同样的句子在这里。" * 60, "Cats purr. Dogs bark. " * 30, "short"]
    for kw in ({"llm": Scripted()}, {"signal": Alternating()}, {"lm_signal": Alternating()}):
        many = chunk_many(batch, max_size=200, levels=2, overlap=10, sources=["a", "b", "c"], **kw)
        for text, src, tree in zip(batch, "abc", many, strict=True):
            if "llm" in kw:
                kw = {"llm": Scripted()}  # (a fresh count for the one call compared with)
            one = chunk(text, max_size=200, levels=2, overlap=10, source=src, **kw)
            assert [(c.id, c.span, c.method) for c in tree] == [(c.id, c.span, c.method) for c in one]
            assert tree.stats["llm_calls"] == one.stats["llm_calls"]
    llm = Scripted()
    chunk_many(batch[:1], max_size=200, levels=1, llm=llm)
    assert llm.calls >= 1  # the LLM was asked, as chunk() asks it
    with pytest.raises(InputError, match="overlap must be"):
        chunk_many(batch, overlap=-1)

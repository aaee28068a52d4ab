"""Hard-wrapped prose (a Gutenberg novel, an RFC, mail, text from a PDF): a line break inside a sentence
is a soft wrap, not a sentence end; short lines, transcripts, tables, code and Markdown keep theirs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.sentences import (
    BREAK_LINE,
    BREAK_NONE,
    BREAK_PARAGRAPH,
    _split_scalar,
    _split_vector,
    split_sentences,
)
from logichunk.text.soft_wraps import MIN_WRAP_WIDTH, MIN_WRAPPED_LINES, WRAP_QUANTILE

TALE = """It was the best of times, it was the worst of times, it was the age of
wisdom, it was the age of foolishness, it was the epoch of belief, it
was the epoch of incredulity. It was the season of Light, it was the
season of Darkness, it was the spring of hope, it was the winter of
despair.

There were a king with a large jaw and a queen with a plain face, on the
throne of England; there were a king with a large jaw and a queen with
a fair face, on the throne of France.
"""


def split(text):
    """The sentences, with the scalar and the vector splitter agreeing on them."""
    s = split_sentences(text)
    for impl in (_split_scalar, _split_vector):
        bounds, brk = impl(text)
        assert bounds.tolist() == s.starts[1:].tolist() and brk.tolist() == s.breaks.tolist(), impl.__name__
    assert "".join(s.texts()) == text
    return s


def test_wrapped_prose_splits_into_its_sentences():
    s = split(TALE)
    assert [t.split()[-1] for t in s.texts()] == ["incredulity.", "despair.", "France."]
    assert s.breaks.tolist() == [BREAK_NONE, BREAK_PARAGRAPH]  # the wraps inside a sentence break nothing


def test_a_word_hyphenated_across_lines_and_wrapped_chinese_stay_one_sentence():
    text = ("The committee agreed that the proposal, once revised, was a well-\n"
            "founded plan for the coming year and deserved the support of all of\n"
            "the members present at the meeting that evening in the town hall.\n")
    assert len(split(text)) == 1
    zh = ("在很久很久以前的一个小村庄里住着一位老人他每天清晨都会\n"
          "到河边去打水然后沿着弯弯曲曲的小路慢慢地走回家中从来不\n"
          "曾间断过哪怕是刮风下雨的日子也是如此。村里的孩子们都很\n"
          "喜欢听他讲故事。\n")
    assert [t.rstrip() for t in split(zh).texts()] == [
        "在很久很久以前的一个小村庄里住着一位老人他每天清晨都会\n到河边去打水然后沿着弯弯曲曲的小路慢慢地走回家中从来不\n"
        "曾间断过哪怕是刮风下雨的日子也是如此。", "村里的孩子们都很\n喜欢听他讲故事。"]


@pytest.mark.parametrize("text", [
    "roses are red\nviolets are blue\nsugar is sweet\nand so are you\n",  # verse: short lines
    "alice: what do you think about the weather we had today my friend\nbob: sunny and warm all day long"
    " i would say\nalice: yes that is what i thought as well to be honest\nbob: great\n",  # speakers
    "name | value | note\nalpha beta gamma | 1 | first row of the data table\nbeta | 2 | second row here"
    "\ngamma | 3 | third row of the table\n",  # tabular lines
    "    result = compute_the_value(first_argument, second_argument, third_arg\n"
    "        another_argument, yet_another_argument)\n    return result and more result\n"
    "    value = other\n",  # deeper indentation: code
    "- the first item of a list that is long enough to fill the line width\n- the second item of the list"
    " that is long enough too\n- and the third item of the list that is also long\n",  # list items
])
def test_short_lines_speakers_tables_code_and_lists_keep_their_line_breaks(text):
    s = split(text)
    assert len(s) == text.count("\n"), s.texts()


def test_a_line_that_ends_a_thought_or_a_capital_after_it_keeps_the_break():
    text = ("This line is long enough to be a wrapped line of prose but it ends here.\n"
            "this next line starts in lower case, yet the line above ended with a dot\n"
            "So here is a line that starts with a capital letter and goes on a while\n"
            "and this one is a plain continuation of the sentence above it, wrapped.\n")
    s = split(text)
    assert [t.split()[0] for t in s.texts()] == ["This", "this", "So"]


_WORDS = st.sampled_from(["the", "old", "man", "walked", "slowly", "towards", "river", "and", "a", "of",
                          "morning", "light,", "quiet", "houses;", "well-known", "x", "extraordinarily", "I"])


@st.composite
def paragraphs(draw):
    paras = []
    for _ in range(draw(st.integers(1, 3))):
        sents = []
        for _ in range(draw(st.integers(1, 4))):
            words = draw(st.lists(_WORDS, min_size=3, max_size=25))
            sents.append(" ".join([words[0].capitalize(), *words[1:]]).rstrip(",;") + ".")
        paras.append(" ".join(sents))
    return "\n\n".join(paras) + "\n"


def wrap(text, width):
    """``text`` wrapped greedily at ``width`` by turning spaces into line breaks: the same offsets."""
    out = list(text)
    start = 0
    last_space = -1
    for i, ch in enumerate(text):
        if ch == "\n":
            start, last_space = i + 1, -1
        elif ch == " ":
            if i - start > width and last_space > start:
                out[last_space] = "\n"
                start = last_space + 1
            last_space = i
    return "".join(out)


@settings(max_examples=1500, deadline=None)
@given(paragraphs(), st.integers(40, 100))
def test_wrapping_adds_sentence_ends_only_before_a_capital(text, width):
    """A sentence end of the text stays one when it is wrapped; a new one falls only where a line break
    comes before a word that does not start in lower case (a wrap there looks like a new line), once
    the text has enough wrapped lines to read a width from."""
    wrapped = wrap(text, width)
    assert len(wrapped) == len(text)
    lines = wrapped.split("\n")
    wrapped_lines = [len(a) for a, b in zip(lines[:-1], lines[1:], strict=True) if a and b]  # a single line break after them
    assume(len(wrapped_lines) >= MIN_WRAPPED_LINES and np.quantile(wrapped_lines, WRAP_QUANTILE) >= MIN_WRAP_WIDTH)
    plain = set(split(text).starts.tolist())
    ends = set(split(wrapped).starts.tolist())
    assert plain <= ends
    for b in ends - plain:
        assert wrapped[b - 1] == "\n" and not wrapped[b].islower(), (wrapped, b)


@settings(max_examples=300, deadline=None)
@given(paragraphs(), st.integers(60, 80))
def test_chunks_of_wrapped_prose_end_where_its_sentences_do(text, width):
    """Where every sentence fits the limit, wrapping the text moves no chunk boundary into a sentence
    (but for the line breaks before a capital, which stay line breaks)."""
    wrapped = wrap(text, width)
    lines = wrapped.split("\n")
    wrapped_lines = [len(a) for a, b in zip(lines[:-1], lines[1:], strict=True) if a and b]
    assume(len(wrapped_lines) >= MIN_WRAPPED_LINES and np.quantile(wrapped_lines, WRAP_QUANTILE) >= MIN_WRAP_WIDTH)
    sizes = (400, 200)
    sents = split_sentences(text)
    if (sents.ends - sents.starts).max() > sizes[-1]:
        return
    plain = set(sents.ends.tolist())
    tree = chunk(wrapped, sizes=sizes)
    assert "".join(tree.text_of(c) for c in tree.roots()) == wrapped
    for c in tree:
        e = c.span.end
        assert e in plain or (wrapped[e - 1] == "\n" and not wrapped[e].islower()), (c, wrapped)


def test_breaks_between_wrapped_lines_are_no_line_breaks():
    s = split(TALE.replace("\n\n", "\n"))  # no blank line: the paragraph edge is one line break
    assert s.breaks.tolist() == [BREAK_NONE, BREAK_LINE]
    assert np.all(s.ends[:-1] <= len(TALE))

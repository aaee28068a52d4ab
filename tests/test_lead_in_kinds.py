"""Lines that end with a lead-in's mark but introduce nothing (issue 18): a program's values ending with a comma
(numpy's ``array([[[[0.]],`` over a blank line, ``...,``), reStructuredText's field marker alone (``:returns:``,
``:orphan:``: a field list's item), a doctest's line over its continuation (``>>> for i in x:`` over ``...``:
code's bond, as ``def f():`` over its body). A lead-in's bond there glued the line to the next paragraph and
counted a chunk ending after it as a rule break."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout
from logichunk.tree import check_tree


def _gap_after(text: str, line: str) -> tuple[bool, bool, bool]:
    """(introduces, lead_in, no_cut) at the gap after the sentence that holds ``line``."""
    sents = split_sentences(text)
    lay = layout(sents)
    at = text.index(line)
    i = max(k for k in range(len(sents)) if sents.starts[k] <= at)
    intro = bool(lay.introduces[i]) if lay.introduces is not None else False
    return intro, bool(lay.lead_in[i]), bool(lay.no_cut[i])


_NOT_LEAD_INS = {
    "numpy-output": (">>> np.zeros((2, 1, 1, 1))\narray([[[[0.]]],\n\n       [[[0.]]]])\n\n"
                     "The result has four dimensions in all, as the shape says.\n", "array([[[[0.]]],"),
    "elided-values": ("array([[1, 2],\n       ...,\n\n       [5, 6]])\n\nThe middle rows are elided.\n", "...,"),
    "open-call": ("        assert_equal(np.dot(a, b),\n\n                     95)\n", "assert_equal("),
    "docstring-field": ('def f(x):\n    """Do it.\n\n    :returns:\n\n    More text here in a paragraph.\n    """\n',
                        ":returns:"),
    "file-field": (":orphan:\n\nThis page is not in any toctree and says so in a sentence.\n", ":orphan:"),
    "field-over-field": ("Some text is here.\n\n:noindex:\n:module: spam\n\nMore text here.\n", ":noindex:"),
}


@pytest.mark.parametrize("name", sorted(_NOT_LEAD_INS))
def test_a_programs_values_or_a_field_alone_introduce_nothing(name):
    text, line = _NOT_LEAD_INS[name]
    intro, lead_in, no_cut = _gap_after(text, line)
    assert not intro and not lead_in and not no_cut


def test_a_doctest_line_over_its_continuation_is_codes_bond():
    """``>>> for i in range(5):`` over ``...     print(i)``: glued as a block's opening line, not a lead-in's bond
    (which a limit breaks first)."""
    text = "Count them:\n\n>>> for i in range(5):\n...     print(i)\n0\n"
    assert _gap_after(text, ">>> for") == (False, False, True)


@pytest.mark.parametrize("text,line", [("Dear Bob,\n\nI write to say hello.\n", "Dear Bob,"),
                                       ("具体步骤如下，\n\n先做第一步。\n", "具体步骤如下，"),
                                       ("The steps are:\n\n1. Go.\n2. Stop.\n", "The steps are:"),
                                       ("Bob wrote:\n> hello there\n", "Bob wrote:"),
                                       ("If you prefer 2.7.6 over 3.3.3,\n\n    $ pyenv local 2.7.6\n", "3.3.3,"),
                                       ("It lists the branch; e.g.,\n\n    $ git log -1\n", "e.g.,")])
def test_a_words_comma_or_colon_still_introduces(text, line):
    assert _gap_after(text, line)[:2] == (True, True)


_LINES = [">>> for i in range(3):", "...     print(i)", "array([[[[0.]],", "...,", "       [[0.]]]])", ":returns:",
          ":param x: the value", ":noindex:", "Dear Bob,", "The steps are:", "A plain sentence ends here.", ""]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_LINES), min_size=1, max_size=14), st.integers(20, 300))
def test_chunks_of_such_lines_tile_the_text(lines, max_size):
    text = "\n".join(lines) + "\n"
    tree = chunk(text, max_size=max_size)
    check_tree(tree)  # (level-1 chunks tile the text, children tile their parent)
    assert "".join(tree.text_of(c) for c in tree.roots()) == text

"""The lines the layout's reading loop no longer reads are lines it read as nothing.

``_no_form_past_mark`` narrows what may open as a heading form (a ``-`` that is no setext underline, a ``(`` that
opens no ``(1)``, a capital that opens no *Chapter*), ``_indented_hash`` passes over indented ``#`` lines that
stand where no title may, and ``_unlisted_code`` over lines of code alone between blank lines outside a run that
may be a list: each is checked against the reading it stands before (the patterns, and the whole
layout read with both skips off), on texts built from the pieces those readings turn on.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.text import structure as S
from logichunk.text.charclass import codepoints
from logichunk.text.sentences import split_sentences

_OPENERS = ["-", "--", "----------", "(", "(0", "(12)", "(1١)", "(一)", "(x", "C", "Chapter", "CHAPTER", "Chap",
            "S", "Section", "SECTION", "See Also", "P", "Part", "PART", "Parameters", "A", "Appendix", "APPENDIX",
            "Appe", "Cx", "#", "## ", "=", "1", "12", "123", "1234", "2007", "1.2", "１２３４", "12١٢"]
_TAILS = ["", " ", "\t", "5", ".", ". A", " Scope", " net revenue", " 3", " IV", "-", "---", " -", "1)", "2) 中", ")",
          ") 中", ",", " x", "一)", "\n", "\r\n", "\n    ", "\n\n", "\r", "\u3000", "、", "x", "中"]
_INDENTS = ["", " ", "   ", "    ", "\t", "        "]
lines = st.tuples(st.sampled_from(_INDENTS), st.sampled_from(_OPENERS),
                  st.lists(st.sampled_from(_TAILS), max_size=3).map("".join)).map("".join)


@settings(max_examples=300, deadline=None)
@given(lines)
def test_a_line_read_as_no_form_past_its_mark_matches_no_form(line: str) -> None:
    text = line + "\n"
    cp = codepoints(text)
    ok = S._opens_heading_form(cp, np.array([0]), np.array([len(line)]), np.array([0]))
    if not ok[0]:
        assert not S._ATX.match(line), repr(line)
        assert not S._ASCIIDOC.match(line), repr(line)
        assert not S._LATEX.match(line), repr(line)
        assert not S._html_heading(line), repr(line)
        assert not S._SETEXT_LINE.match(line.rstrip("\r\n")), repr(line)
        assert not S._numbered_heading(line), repr(line)


def test_code_lines_are_no_form_and_headings_stay_forms() -> None:
    lines = ["----------\n    ", "- item\n", "--flag x\n", "(0, 1)\n    ", '("float", x),\n', "See Also\n    ",
             "Parameters\n", "Apples\n", "-----\n", "---  \r\n", "(1) Scope\n", "(12) 中\n", "(一)方法\n",
             "Chapter 3\n", "SECTION 2\n", "Part IV\n", "Appendix 1\n", "2007 net revenue | $231.0\n", "12 Scope\n",
             "123 Scope\n", "1.2 Scope\n"]
    text = "".join(lines)
    ends = np.cumsum([len(x) for x in lines])
    starts = ends - [len(x) for x in lines]
    ok = S._opens_heading_form(codepoints(text), starts, ends, np.arange(len(lines)))
    assert ok.tolist() == [False] * 8 + [True] * 9 + [False, True, True, True]


_PIECES = ["def f(x):\n", "    \"\"\"Sum.\n\n", "    Parameters\n    ----------\n    x : int\n", "    See Also\n",
           "    --------\n", "    \"\"\"\n", "    # import with `from numpy import *`.\n", "    # Helpers\n", "# Notes\n",
           "        # probably wait\n", "    (0, 1)\n", "(1) Scope\n", "\n", "\n\n", "Title\n", "Parameters\n",
           "----------\n", "Chapter 3\n", "x = (1, 2)\n", "    return x\n", "Some text here.\n", "1.2 Scope\n",
           "**Bold**\n", "#include <x.h>\n", "    #define X 1\n", "=====\n", "  - item\n", "return total\n\n",
           "@property\n\n", "// note\n\n", ":param x:\n\n", "import os\n\n", "Title\n\n", "Notes\n\n", "a title\n\n",
           "    return x\n\n", "CHAPTER I.\n\n", "Some Title\n::::::::::\n\n", "chapter ii.\n\n"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=30).map("".join))
def test_the_layout_with_the_skips_is_the_layout_without(text: str) -> None:
    sents = split_sentences(text)
    fast = S.layout(sents)
    with pytest.MonkeyPatch.context() as mp:  # (the reference: every loop line read by the loop's rules)
        mp.setattr(S, "_no_form_past_mark", lambda cp, p, e, c, deep: np.zeros(p.size, dtype=bool))
        mp.setattr(S, "_indented_hash", lambda first, deep, placed: np.zeros(first.size, dtype=bool))
        mp.setattr(S, "_unlisted_code", lambda first, listed, other: np.zeros(first.size, dtype=bool))
        slow = S.layout(sents)
    for f in dataclasses.fields(fast):
        a, b = getattr(fast, f.name), getattr(slow, f.name)
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, f.name


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=40), st.integers(1, 5))
def test_a_run_is_found_as_counting_each_run_finds_it(values: list[bool], k: int) -> None:
    mask = np.array(values, dtype=bool)
    want, j = [], 0
    while j < len(values):  # (each run of True, counted)
        r = j
        while r < len(values) and values[r] == values[j]:
            r += 1
        want += [values[j] and r - j >= k] * (r - j)
        j = r
    assert S._in_runs(mask, k).tolist() == want

"""The soft-wrap reader reads only the breaks whose answer the splitter keeps, and answers as it did.

``soft_wraps(..., needed)`` asks, once a text reads as wrapped, which breaks are read at all (in source code, those
between two lines of a comment: the splitter keeps every other break as code's). The width and the vote still read
every line, so each break it reads gets the answer it had; here against the reading of every break (the old one)
masked afterwards, and the whole splitter against the splitter that reads every break.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.text import sentences as S
from logichunk.text import soft_wraps as W

_WRAPPED = ("the reader goes on across the width of the line in lower case as wrapped prose does and then\n"
            "goes on again in lower case on the next line where the tool ran out of its width of text\n")
_PIECES = ["def f(x):\n", '    """Sum the values of x and return what the sum of them comes to in the end, as\n',
           "    wrapped prose does across the width of its lines; a docstring is prose.\n", '    """\n',
           "    # a comment that goes on across the width of the line in lower case as wrapped prose\n",
           "    # does, and goes on here in lower case again where the tool ran out of width\n",
           "    total = sum(values_of_the_argument_given_here_and_the_rest_of_them_too, start=0)\n",
           "    return total\n", "x = compute(the_first_argument, the_second_argument, the_third_one_here)\n",
           "if (x) {\n", "}\n", "// a slash comment that goes on across the width in lower case as prose\n",
           "// does and goes on here\n", "\n", "\n\n", _WRAPPED, "Short line\n", "import os\n", "| a | b |\n",
           "\tindented by a tab and going on in lower case across the width of the line\n"]
texts = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=24).map("".join)


def _reads(text: str) -> list[tuple]:
    """The arguments the splitter hands the soft-wrap reader for ``text`` (none where it asks nothing)."""
    seen: list[tuple] = []
    real = S.soft_wraps

    def grab(*args, **kwargs):
        seen.append(args)
        return real(*args, **kwargs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "soft_wraps", grab)
        S.split_sentences(text)
    return seen


@settings(max_examples=60, deadline=None)
@given(texts, st.randoms(use_true_random=False))
def test_a_break_read_gets_the_answer_every_break_read_gives(text: str, rnd) -> None:
    for args in _reads(text):
        every = W.soft_wraps(*args)
        mask = np.array([rnd.random() < 0.5 for _ in range(every.size)], dtype=bool)
        some = W.soft_wraps(*args, needed=lambda mask=mask: mask)
        assert np.array_equal(some, every & mask)
        assert np.array_equal(W.soft_wraps(*args, needed=lambda: None), every)


@settings(max_examples=60, deadline=None)
@given(texts)
def test_the_splitter_reading_only_the_comments_breaks_is_the_splitter_reading_all(text: str) -> None:
    fast = S.split_sentences(text)
    real = S.soft_wraps
    with pytest.MonkeyPatch.context() as mp:  # (the reference: every break read, code's breaks cleared after)
        mp.setattr(S, "soft_wraps", lambda *args, needed=None: real(*args))
        slow = S.split_sentences(text)
    assert np.array_equal(fast.starts, slow.starts) and np.array_equal(fast.ends, slow.ends)
    assert np.array_equal(np.asarray(fast.breaks), np.asarray(slow.breaks))


def test_a_docstrings_wrapped_lines_are_joined_and_codes_kept_apart() -> None:
    text = "".join(_PIECES[:8]) * 4
    s = S.split_sentences(text)
    lines = [text[int(a) : int(b)] for a, b in zip(s.starts, s.ends, strict=True)]
    assert any("as\n    wrapped prose" in x for x in lines)  # (a docstring's wrap: one sentence)
    assert any(x.startswith("total = sum(") for x in lines)  # (a statement: its own)
    assert _reads(text)  # (and the reader was asked)

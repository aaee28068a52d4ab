"""The layout's cheaper paths keep every answer of the readings they stand before: a numbered heading's
first-character test drops no line its pattern matches, and the walk before the framed titles' patterns drops no
line they match."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.text import structure as S
from logichunk.text.charclass import codepoints

_TAILS = ["1 A", "1. A", "1.2 Scope", "三章", "一章", "、方法", "一）x", "）x", ") 中", "1）x", "1) 中", "．x", "x", "制定",
          "hapter 1", "HAPTER 1", "ection 2", "ECTION 2", "art 3", "ART 3", "ppendix 4", "PPENDIX 4"]


def test_a_numbered_heading_opens_with_a_character_its_first_test_keeps() -> None:
    """Every character below U+3400, the CJK numerals and brackets, each before tails that let one of the
    pattern's forms match: where the pattern matches, the first-character test keeps the line."""
    chars = [chr(c) for c in range(0x3400) if not 0xD800 <= c <= 0xDFFF] + list("第一二三四五六七八九十百千零〇两（）")
    for c in chars:
        for tail in _TAILS:
            line = c + tail
            if S._NUMBERED.match(line) is not None:
                first = line.lstrip()[:1]
                assert first.isdecimal() or first in S._NUMBERED_FIRST, repr(line)


_FRAME_PIECES = ["-", "=", "--", "==", "---", " ", "\t", "History", "Log opened", "Day changed", "Tue Mar 12", "x",
                 "1", "_", "é", "中", "\u00a0", "\u3000", "\n", "\r\n", "    "]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAME_PIECES), min_size=1, max_size=10).map("".join))
def test_the_framed_titles_walk_drops_no_line_their_patterns_match(line: str) -> None:
    text = "-" + line  # (what the walk is asked: lines that open with a mark)
    cp = codepoints(text)
    keep = S._may_frame(cp, np.array([0]), np.array([len(text)]), np.array([0]))
    if S._FRAMED_TITLE.fullmatch(text) or S._LOG_OPENS.fullmatch(text):
        assert keep[0], repr(text)


def test_the_framed_titles_walk_drops_a_rule_and_keeps_a_title() -> None:
    text = "--------\n    == History ==\n--- Log opened Tue Mar 12 09:00:01 2024\n=====  \n"
    starts = np.array([0, 13, 27, 67])
    ends = np.array([13, 27, 67, len(text)])
    assert S._may_frame(codepoints(text), starts, ends, np.arange(4)).tolist() == [False, True, True, False]

"""The layout's cheaper paths keep every answer of the readings they stand before: a numbered heading's
first-character test drops no line its pattern matches, the walk before the framed titles' patterns drops no line
they match, and the leading words read over the offsets whose word goes on are those read one offset at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.text import structure as S
from logichunk.text.charclass import codepoints
from logichunk.text.discourse import leading_words

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


@settings(max_examples=200, deadline=None)
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


def _leading_words_one_by_one(cp: np.ndarray, first: np.ndarray, lim: np.ndarray, letters: int):
    keys, lengths = [], []
    for f, stop in zip(first.tolist(), lim.tolist(), strict=True):
        key, length = 0, -1
        for k in range(letters + 1):
            p = f + k
            low = (int(cp[min(p, cp.size - 1)]) if p < stop else 0) | 0x20
            if not 0x61 <= low <= 0x7A:
                length = k
                break
            if k < letters:
                key += (low - 96) << (5 * k)
        keys.append(key)
        lengths.append(length)
    return keys, lengths


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([0x41, 0x5A, 0x61, 0x7A, 0x40, 0x5B, 0x60, 0x7B, 0x20, 0x31, 0xE9, 0x4E00]),
                min_size=1, max_size=40),
       st.lists(st.tuples(st.integers(0, 45), st.integers(0, 14)), max_size=20), st.integers(0, 9))
def test_leading_words_read_over_the_words_that_go_on_are_read_one_offset_at_a_time(cps, spans, letters) -> None:
    """The words read a gather per letter over only the offsets whose word goes on: each offset's key and length
    are those a reading of that offset alone gives (past the text's end it reads its last character, as before)."""
    cp = np.asarray(cps, np.uint32)
    first = np.asarray([min(a, cp.size - 1) for a, _ in spans], np.int64)
    lim = first + np.asarray([w for _, w in spans], np.int64)
    key, length = leading_words(cp, first, lim, letters)
    assert (key.tolist(), length.tolist()) == _leading_words_one_by_one(cp, first, lim, letters)


def _fields_by_window(text: str, at: np.ndarray) -> np.ndarray:
    """The first reading of which colons open a field: the window of :data:`~logichunk.text.structure._FIELD_MAX`
    characters before each, gathered at once, its nearest colon or line feed."""
    cp = codepoints(text)
    pos = at[:, None] - np.arange(1, S._FIELD_MAX + 1)
    seen = cp[np.maximum(pos, 0)]
    k = ((seen == 0x3A) | (seen == 0x0A)).argmax(axis=1)
    row = np.arange(at.size)
    opens = pos[row, k]
    return (seen[row, k] == 0x3A) & (opens >= 0) & ((opens == 0) | np.isin(cp[np.maximum(opens - 1, 0)], [0x20, 0x09])
                                                    | (cp[np.maximum(opens - 1, 0)] == 0x0A))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([":", "\n", " ", "\t", "param", "x" * 20, ",", ".", ")", "é", "returns"]), min_size=1,
                max_size=30).map("".join))
def test_a_lead_ins_colon_opens_a_field_as_the_window_before_it_read(text: str) -> None:
    """The walk back to the nearest colon or line feed finds the fields the window of gathers found: where such a
    colon opens a field whose marker stands alone (``:returns:``), the colon ends no lead-in."""
    cp = codepoints(text)
    at = np.flatnonzero((cp == 0x3A) | (cp == 0x2C))
    if at.size == 0:
        return
    field = _fields_by_window(text, at) & (cp[at] == 0x3A)
    expect = np.ones(at.size, bool)
    for i in np.flatnonzero(field).tolist():
        a = int(at[i])
        expect[i] = S.FIELD_ALONE.fullmatch(text[text.rfind("\n", 0, a) + 1 : a + 1].strip()) is None
    value = np.isin(cp[np.maximum(at - 1, 0)], [0x29, 0x5D, 0x7D]) | ((cp[np.maximum(at - 1, 0)] == 0x2E)
                                                                    & (cp[np.maximum(at - 2, 0)] == 0x2E)
                                                                    & (cp[np.maximum(at - 3, 0)] == 0x2E))
    expect[(cp[at] == 0x2C) & value] = False
    assert S._introducing_mark(text, at).tolist() == expect.tolist()

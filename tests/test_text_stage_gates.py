"""The text stage's cheap gates keep every answer: a reader skipped because the text cannot hold what it needs
(two spaces in a row for an aligned table's gutters, colons for a mail's header, a chat's clocks or a lead-in's
colon), the marker words read only under their first two letters and against that word alone, a short layout's
table of last characters read at the first ask."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.text import structure as S
from logichunk.text.charclass import codepoints
from logichunk.text.discourse import _word_key, leading_words
from logichunk.text.records import _gutters
from logichunk.text.sentences import split_sentences


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=":：a \n", max_size=30), st.sampled_from([":", S._COLONS]), st.integers(1, 4))
def test_holds_says_whether_the_text_has_that_many_of_the_characters(text: str, chars: str, k: int) -> None:
    assert S._holds(text, chars, k) == (sum(text.count(c) for c in chars) >= k)


_GUTTER = re.compile(r"(?<=[^\x00-\x20.!?]) {2,}(?=[^\x00-\x20])")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=" a\t.!\n\xa0", max_size=40))
def test_the_gutters_are_the_runs_of_spaces_between_two_cells(text: str) -> None:
    """Two spaces or more after a character past U+0020 that is no full stop, before another past U+0020 (none
    where no two spaces lie in a row: the read stops there)."""
    want = [[m.start(), m.end()] for m in _GUTTER.finditer(text)]
    assert _gutters.__wrapped__(text).tolist() == want


_PIECES = ["From: Ann <a@b.c>\n", "To: Bob\n", "Subject: Tiles\n", "主题：会议\n", "Ann 09:14\n", "[10:27] <carol> hi\n",
           "Bob, 9:15 AM\n", "The steps are:\n", "  - one\n", "def area(shape):\n", "    return 1\n", "Chapter 1\n",
           "CHAPTER II.\n", "Section 4.2 Scope\n", "Appendix A\n", "chapter_count = 3\n", "self.data = x\n",
           "Part of it went on.\n", "IV.\n", "Act I, Scene 2\n", "USER   PID %CPU\n", "root     1  0.0\n",
           "ann      2  1.5\n", "Hi Bob,\n", "It rained. It poured.\n", "例如：\n", "\n", "\n", "Yours ever,\n"]


def _layouts_equal(a: S.Layout, b: S.Layout) -> None:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert (x is None) == (y is None), f.name
        if x is not None:
            assert np.array_equal(x, y), f.name


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=14).map("".join))
def test_the_layout_is_the_one_read_without_its_gates(text: str) -> None:
    """With every gate open (each reader run, the table of last characters read only past a quarter of the
    sentences, the colons' gathers before the walk), the layout is the same."""
    sents = split_sentences(text)
    gated = S.layout(sents)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "_holds", lambda text, chars, k: True)
        mp.setattr(S, "_LAST_TABLE_ALL", -1)
        mp.setattr(S.native, "available", lambda: False)
        _layouts_equal(gated, S.layout(sents))


@pytest.mark.parametrize(("text", "gap"), [
    ("From: Ann\nSubject: Tiles\n\nThe tiles came today.\n", 1),  # (two fields: two colons in all)
    ("Ann 09:14\nHello there.\nBob 09:15\nHi.\nAnn 09:16\nBye.\n", 0),  # (three clocks: three colons)
    ("It went so.\nThe steps are:\nmix the paint\n", 1),  # (one colon)
])
def test_a_text_with_just_enough_colons_is_read_as_without_the_gates(text: str, gap: int) -> None:
    """At each gate's threshold the reader still runs: the header or the lead-in holds its gap."""
    sents = split_sentences(text)
    gated = S.layout(sents)
    assert gated.no_cut[gap]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "_holds", lambda text, chars, k: True)
        _layouts_equal(gated, S.layout(sents))


def _marker_like_every_word(text: str, starts: np.ndarray, ends: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """:func:`~logichunk.text.structure._marker_like` as it read before its first-two-letters gate: every
    candidate's leading word, read a letter at a time (:func:`~logichunk.text.discourse.leading_words`)."""
    out = np.zeros(cand.size, dtype=bool)
    cp = codepoints(text)
    c0 = cp[starts[cand]]
    lead = S._in_table(S._ASCII_BLANK, c0)
    out[lead] = True
    sel = np.flatnonzero(~lead & (ends[cand] - starts[cand] <= S.TITLE_MAX_CHARS + 16) & S._member(c0, S._MARKER_START_CP))
    if sel.size == 0:
        return out
    s = starts[cand[sel]]
    key, length = leading_words(cp, s, ends[cand[sel]], S._WORD_LETTERS)
    after = cp[np.minimum(s + np.maximum(length, 0), cp.size - 1)]
    keys = np.array(sorted(_word_key(w) for w in S._MARKER_WORDS), dtype=np.int64)
    word = (length > 0) & S._member(key, keys) & S._in_table(S._BLANK, after)
    roman = S._member(c0[sel], S._ROMAN_CP)
    sel, word, roman = sel[word | roman], word[word | roman], roman[word | roman]
    span = S._last_at(text, starts, ends, cand[sel], closers=True) - starts[cand[sel]]
    out[sel] = (word | (roman & (span < 8))) & (span < S.TITLE_MAX_CHARS)
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["Chapter 1", "CHAPTER", "chapters", "Cha", "Ch", "C", "ſection 2", "Section\t3",
                                 "Se", "PART II", "Pa", "part", "Appendix", "appendices", "IV.", "XVIII", "Vol",
                                 "volume 2", "letter 1", "Article 5.", "act 1", "Canto", "stave", "Scene", "x",
                                 "  Chapter 1", "chapter_x = 1", "self.data", "Book", "Bo"]), min_size=1, max_size=12))
def test_the_marker_words_read_under_their_first_two_letters_are_the_words_read_everywhere(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    starts = np.asarray([0, *np.cumsum([len(x) + 1 for x in lines[:-1]])], np.int64)
    ends = starts + np.asarray([len(x) + 1 for x in lines], np.int64)
    cand = np.arange(len(lines))
    assert S._marker_like(text, starts, ends, cand).tolist() == _marker_like_every_word(text, starts, ends, cand).tolist()


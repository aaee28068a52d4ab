"""The text layer's one-pass search for its marks (:func:`logichunk.native.first_marks`,
:func:`logichunk.text.line_kinds._first_marks`) gives what ``str.find`` gives for each mark, and the searches
that read it (:func:`~logichunk.text.line_kinds._contains`, :func:`~logichunk.text.line_kinds._find`,
:func:`~logichunk.text.line_kinds.line_openings`) answer as they do without it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import native
from logichunk.text import line_kinds
from logichunk.text.charclass import codepoints

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled kernels are not available")


def _forget() -> None:
    """Drop what the searches kept of earlier texts: the pass's answers and the marks already asked for."""
    line_kinds._first_marks.cache_clear()  # type: ignore[attr-defined]
    line_kinds._marks_known.cache_clear()  # type: ignore[attr-defined]

#: pieces dense in the marks' characters, their prefixes and near misses (and characters past ASCII whose low byte
#: is a mark's first character, "Į" U+012E '.', "为" U+4E3A ':', "🌯" U+1F32F '/': the pass's runs test low bytes)
_PIECES = ["`", "``", "```", "~", "~~~", "<!-", "<!--", "/", "/*", "*/", ":", "::", "::\n", ":: ", "::\r\n", ".",
           ". ", ".. code", ".. sourcecode", ".. cod", "#", "#+", ";", "; urgency=", "; urgency", "a", " ", "\n",
           "\r", "é", "𝔘", "中", "Į", "Į.", "为", "为:", "🌯*"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=200),
       st.lists(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=3).map("".join)
                .filter(lambda m: len(m) >= 2 and 0 < ord(m[0]) < 128 and ord(m[1]) < 128), max_size=12))
def test_first_marks_is_str_find_of_each_mark(pieces: list[str], marks: list[str]) -> None:
    text = "".join(pieces)
    marks = list(line_kinds._MARKS) + marks
    got = native.first_marks(codepoints(text), tuple(marks))
    assert got == [text.find(m) for m in marks]


def test_first_marks_refuses_marks_it_cannot_read() -> None:
    cp = codepoints("a ```b")
    assert native.first_marks(cp, ("`",)) is None  # (one character: str.find's own)
    assert native.first_marks(cp, ("éa",)) is None  # (not ASCII first)
    assert native.first_marks(cp, ("```",)) == [2]
    assert native.first_marks(cp, ()) == []


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=120), st.integers(0, 400), st.sampled_from(line_kinds._MARKS))
def test_the_searches_answer_as_without_the_pass(pieces: list[str], start: int, mark: str) -> None:
    """A text long enough for the pass (its pieces repeated past :data:`~logichunk.text.line_kinds._MARKS_MIN`,
    with runs of a mark's first character dense enough that :func:`_contains` stops hopping), searched with the
    pass's answers and with plain searches."""
    body = "".join(pieces) or "x"
    text = (mark[0] + " ") * 300 + body * (line_kinds._MARKS_MIN // len(body) + 1)
    start = min(start, len(text))
    _forget()
    fast = (line_kinds._contains(text, mark), line_kinds._find(text, mark, start), line_kinds._find(text, mark),
            line_kinds.line_openings(text, mark))
    assert line_kinds._first_marks.peek(text) is not None  # type: ignore[attr-defined]  (the pass ran)
    _forget()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "first_marks", lambda *a: None)
        slow = (line_kinds._contains(text, mark), line_kinds._find(text, mark, start), line_kinds._find(text, mark),
                line_kinds.line_openings(text, mark))
        _forget()
    assert fast == slow
    assert slow == (mark in text, text.find(mark, start), text.find(mark), slow[3])


def test_a_text_whose_marks_are_rare_is_searched_without_the_pass() -> None:
    """Where the marks' first characters are rare (prose), ``str.find`` hops over the text faster than the pass
    reads it: the pass does not run."""
    text = "Plain prose, one line after another.\n" * 400
    _forget()
    assert not line_kinds._contains(text, "```")
    assert line_kinds._first_marks.peek(text) is None  # type: ignore[attr-defined]
    assert np.asarray(line_kinds.line_openings(text, "/*")).size == 0


def test_a_mark_is_read_once_per_long_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The splitter and the layout ask for some marks two or three times: a long text is searched once per first
    character of its marks ("::", ":END:" and ":end:" in one hop over the colons), a short one each time (its
    search costs less than the memo), and the answers stay ``mark in text``."""
    long = "Plain prose: one line after another.\n" * 200 + "run this::\n\n    x = 1\n"
    short = "a /* b"
    _forget()
    groups: list[str] = []
    shorts: list[str] = []
    once, group = line_kinds._contains_once, line_kinds._contains_group
    monkeypatch.setattr(line_kinds, "_contains_group", lambda t, m: groups.append(m) or group(t, m))
    monkeypatch.setattr(line_kinds, "_contains_once", lambda t, m: (len(t) < 100 and shorts.append(m)) or once(t, m))
    for _ in range(3):
        assert [line_kinds._contains(long, m) for m in ("::", "/*", "```")] == [True, False, False]
        assert line_kinds._contains(short, "/*")
    assert sorted(groups) == ["/*", "::", "```"]
    assert shorts == ["/*"] * 3
    for m in (":END:", ":end:", "::\n", ":: ", "::\r\n"):  # (read with "::")
        assert line_kinds._contains(long, m) == (m in long)
    assert sorted(groups) == ["/*", "::", "```"]
    _forget()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=120), st.sampled_from(line_kinds._MARKS), st.integers(0, 2),
       st.booleans())
def test_a_group_of_marks_answers_mark_in_text(pieces: list[str], mark: str, density: int, pass_on: bool) -> None:
    """:func:`~logichunk.text.line_kinds._contains_group` answers ``m in text`` for every mark that opens with
    ``mark``'s character, where the character is rare, dense (the hop gives up and the pass or a search reads the
    rest) or dense before a mark, with the pass and without it."""
    body = "".join(pieces) or "x"
    lead = (mark[0] + " ") * (0, 40, 400)[density]
    text = lead + body * (line_kinds._MARKS_MIN // len(body) + 1)
    _forget()
    with pytest.MonkeyPatch.context() as mp:
        if not pass_on:
            mp.setattr(native, "first_marks", lambda *a: None)
        got = line_kinds._contains_group(text, mark)
        _forget()
    assert got == {m: m in text for m in line_kinds._MARK_GROUPS[mark[0]]}


_DIRECTIVE_PIECES = [".. note::", ".. image:: cat.png", ".. code-block:: c", "..", "::", ":", "   :alt: A cat.",
                     "   :linenos:", "\n", "\n\n", " ", "\t", "text", ".", ": x"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_DIRECTIVE_PIECES), max_size=80), st.booleans())
def test_directive_options_as_without_the_check_for_their_mark(pieces: list[str], long: bool) -> None:
    """:func:`~logichunk.text.line_kinds.directive_options` returns at once where the text holds no "::" (every
    directive holds one): the same options as its search of the whole text finds."""
    text = "".join(pieces)
    if long:
        text = "Prose. " * (line_kinds._MARKS_MIN // 7 + 1) + text
    _forget()
    got = line_kinds.directive_options.__wrapped__(text)  # type: ignore[attr-defined]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(line_kinds, "_contains", lambda t, m: True)
        full = line_kinds.directive_options.__wrapped__(text)  # type: ignore[attr-defined]
    _forget()
    assert got == full

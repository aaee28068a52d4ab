"""A text's line table (:func:`logichunk.text.lines.line_table`) is the same from its compiled pass and its numpy
twin, and the readers that take their lines from it find what their regular expressions' scans of the whole text
found: reStructuredText's ``::`` at a line's end (:func:`~logichunk.text.line_kinds._literal_marks_at`) and its
directives opening a line (:func:`~logichunk.text.line_kinds.directive_options`)."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import native
from logichunk.text import line_kinds, lines
from logichunk.text.charclass import codepoints

#: pieces dense in what the table and its readers look at: blanks, CRs, LFs, colons, dots, a directive's parts
_PIECES = [" ", "  ", "\t", "\r", "\n", "\r\n", "\n\n", "a", "x y", ":", "::", ":::", "..", "...", ".. ", "note",
           "image", "code-block", "py:function", "-", "_", "é", "中", "𝔘", "\f", "\u3000", "\x00"]
_texts = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join)
#: the scans the readers made before the table (their references)
_LITERAL_SCAN = re.compile(r"::[ \t]*\r?\n")


def _columns(text: str) -> tuple[np.ndarray, ...]:
    t = lines.line_table(text)
    return t.start, t.end, t.first, t.last


@settings(max_examples=200, deadline=None)
@given(_texts)
def test_the_compiled_pass_and_the_numpy_passes_agree(text: str) -> None:
    cp = codepoints(text)
    want = lines._line_table_passes(cp)
    got = native.lines(cp)
    if got is not None:
        assert all(g.dtype == np.int64 and np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    # (and what the columns say, read on the string: split at each LF)
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    assert want[0].tolist() == starts
    for a, e, f, la in zip(*(w.tolist() for w in want), strict=True):
        line = text[a:e]
        assert f == a + len(line) - len(line.lstrip(" \t"))
        core = line[:-1] if line.endswith("\r") else line
        assert la == a + len(core.rstrip(" \t")) - 1


def test_the_table_of_an_empty_text_and_of_a_last_empty_line() -> None:
    assert [c.tolist() for c in _columns("")] == [[0], [0], [0], [-1]]
    assert [c.tolist() for c in _columns("  a \r\n")] == [[0, 6], [5, 6], [2, 6], [2, 5]]


@settings(max_examples=200, deadline=None)
@given(_texts)
def test_the_literal_marks_are_the_scans(text: str) -> None:
    assert line_kinds._literal_marks_at(text) == [(m.start(), m.end()) for m in _LITERAL_SCAN.finditer(text)]


@settings(max_examples=200, deadline=None)
@given(_texts)
def test_the_directives_opening_a_line_are_the_scans(text: str) -> None:
    want = [m.start() for m in line_kinds._DIRECTIVE.finditer(text)
            if not text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip(" \t")]
    t = lines.line_table(text)
    got = [int(t.first[k]) for k in lines.head_marks(text, "..").tolist()
           if line_kinds._DIRECTIVE.match(text, int(t.first[k])) is not None]
    assert got == want


def test_directive_options_and_literal_blocks_read_from_the_table() -> None:
    text = ("Intro::\r\n\n    code here\n\nText.\n\n  .. image:: cat.png\n     :alt: A cat. Grey.\n"
            "     :width: 200px\n\nx .. note:: not at a line's start\n   :alt: no\n")
    a = text.index(":alt: A")
    assert line_kinds.directive_options(text) == [(a - 5, text.index("200px") + 5)]
    assert line_kinds.literal_spans(text) == [(5, text.index("code here") + 9, False)]

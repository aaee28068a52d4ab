"""The layout's vectorised prefilters keep every line the exact readings would accept.

``text/structure.py`` and ``text/line_kinds.py`` read most lines with numpy and leave only a few for
their regular expressions and Python checks (a table of numbers, a log, subtitles or code would
otherwise pay a handful of matches per line). Each prefilter must be a superset of what it guards:
here every line it drops is checked against the exact reading it stands in for, on texts built from
the characters those readings turn on (indents, tabs, digits and dots, marks of headings, fences and
comments, closers, sentence marks, CJK, odd whitespace).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.text import records as R
from logichunk.text import structure as S
from logichunk.text._arrays import _member
from logichunk.text.charclass import codepoints
from logichunk.text.line_kinds import _fence_lines, line_openings
from logichunk.text.sentences import BREAK_LINE, BREAK_PARAGRAPH, split_sentences

PIECES = [
    "\n", "\n", "\n\n", " ", "  ", "    ", "        ", "\t", "\r\n", "\x0b", "\x1c", "\u3000", "\u00a0",
    "#", "## ", "#\t", "###### x", "####### x", "#include", "#\n", "1.2 ", "1.2. ", "3.", "3.严格", "12", "123.4 ", "7．", "8、", "2\u3000Scope", "١٢ ", "۳.۴ ", "1١ Scope", "１２ ",
    "Title", "title", "Word", "word", "Results", "x", "。", ".", "!", ":", "：", ",", ")", "\"", "」", "’",
    "```", "````py", "~~~", "<!--", "-->", "<h2>The Nile</h2>", "\\section{A}", "= A", "==", "--", "---", "=",
    "第三章", "一、", "（1）", "(2)", "①", "Chapter 1", "SECTION 2", "Part", "Appendix A", "CSPA",
    "00:00:01,000 --> 00:00:02,000", "00:01.500 --> 00:02.000 line:90%", "1:00:01.000 --> 1:00:02.000", "def f(x):", "x = f(", "- item",
    "|a|b|", "|---|---|", "严", "漢字", "a" * 90, "b" * 79, "c" * 80, "d" * 81,
]
INDENTS = ["", "", " ", "  ", "   ", "    ", "     ", "        ", "\t", " \t", "\t  ", " " * 39, " " * 40, " " * 41]
# lines with indents (a term over a deeper line, code), or the pieces run together
lines = st.lists(st.tuples(st.sampled_from(INDENTS), st.lists(st.sampled_from(PIECES), max_size=4).map("".join),
                           st.sampled_from(["\n", "\n", "\n\n", "\r\n", ""])).map("".join), min_size=1, max_size=30)
texts = st.one_of(st.lists(st.sampled_from(PIECES), min_size=1, max_size=60).map("".join), lines.map("".join))


def _sentences(text: str):
    s = split_sentences(text)
    return s, np.arange(len(s), dtype=np.int64)


@settings(max_examples=250, deadline=None)
@given(texts)
def test_a_line_no_heading_form_opens_matches_none(text: str) -> None:
    s, idx = _sentences(text)
    if idx.size == 0:
        return
    ok = S._opens_heading_form(S.codepoints(text), s.starts, s.ends, idx)
    for i in idx[~ok].tolist():
        line = text[int(s.starts[i]) : int(s.ends[i])]
        assert not S._ATX.match(line), line
        assert not S._ASCIIDOC.match(line), line
        assert not S._LATEX.match(line), line
        assert not S._html_heading(line), line
        assert not S._SETEXT_LINE.match(line.rstrip("\r\n")), line
        assert not S._numbered_heading(line), line


@settings(max_examples=250, deadline=None)
@given(texts)
def test_a_term_read_without_python_is_read_as_the_python_reading_reads_it(text: str) -> None:
    s, idx = _sentences(text)
    if idx.size == 0:
        return
    decided, term = S._read_terms(S.codepoints(text), s.starts, s.ends)
    for i in idx[decided].tolist():
        got = S._terms(text, s.starts, s.ends, np.array([i])).size == 1
        assert got == term[i], repr(text[max(0, int(s.starts[i]) - 45) : int(s.ends[i])])


@settings(max_examples=250, deadline=None)
@given(texts)
def test_cue_timings_read_only_lines_with_a_colon_where_a_time_has_one(text: str) -> None:
    s, idx = _sentences(text)
    idx = idx[[text[int(a)].isascii() and text[int(a)].isdigit() for a in s.starts]]  # (the caller's lines)
    exact = [i for i in idx.tolist() if S._CUE_TIME.fullmatch(text, int(s.starts[i]), int(s.ends[i]))]
    assert S._cue_timings(text, s.starts, s.ends, idx).tolist() == exact


@settings(max_examples=250, deadline=None)
@given(texts, st.integers(min_value=0, max_value=40))
def test_line_openings_find_what_the_multiline_patterns_find(text: str, start: int) -> None:
    start = min(start, len(text))
    # (finditer from ``start``: a match begins at a line start at or after it)
    fences = [(m.start(1), m.end(1)) for m in re.compile(r"^[ \t]*((?:`{3,}|~{3,})[^\n]*)", re.M).finditer(text, start)]
    assert _fence_lines(text, start) == fences
    comments = [m.end() - 4 for m in re.finditer(r"^[ \t]{0,3}<!--", text, re.M)]
    assert line_openings(text, "<!--", 0, 3) == comments


def test_prefilters_keep_the_readings_they_guard() -> None:
    """The lines each prefilter exists for, read as before: numbered and marked headings, a term over
    its deeper definition, a cue's timing, fences and comments; and the lines of data it drops."""
    text = ("1.2 Scope\n\nSome text here.\n\n### Notes\n\nMore text.\n\n"
            "NAMELINK_ONLY\n    This option causes the link to be installed.\n\n"
            "1\n00:00:01,000 --> 00:00:02,000\nHello there.\n\n"
            "```py\nx = 1\n```\n\n<!--\nhidden\n-->\n\n12,34,56\n2026-11-28 12:00:01 INFO served\n")
    s = split_sentences(text)
    lay = S.layout(s)
    lines = [text[int(a) : int(b)].strip() for a, b in zip(s.starts, s.ends, strict=True)]
    heads = {lines[i] for i in np.flatnonzero(lay.heading).tolist()}
    assert {"1.2 Scope", "### Notes"} <= heads
    assert not heads & {"12,34,56", "2026-11-28 12:00:01 INFO served"}
    term = lines.index("NAMELINK_ONLY")
    assert lay.no_cut[term]
    cue = next(i for i, x in enumerate(lines) if x.startswith("00:00:01,000"))
    assert lay.no_cut[cue] and lay.no_cut[cue - 1]
    assert _fence_lines(text, 0) == [(text.index("```py"), text.index("```py") + 5), (text.rindex("```"), text.rindex("```") + 3)]
    assert line_openings(text, "<!--", 0, 3) == [text.index("<!--")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([" ", "\t", "\n", "\u3000", "\u2028", "x", "漢", " " * 7, " " * 9, " " * 31, " " * 33,
                                 " " * 64, "\t" * 40]), max_size=40).map("".join),
       st.lists(st.integers(min_value=0, max_value=400), max_size=30))
def test_whitespace_is_skipped_to_its_end_however_long_the_run(text: str, offsets: list[int]) -> None:
    """The splitter's skip over whitespace (a few steps, then a window of characters, then one regular
    expression match per run) ends where the whitespace class's regular expression ends."""
    from unittest import mock

    from logichunk import native
    from logichunk.text.end_candidates import _WS_RE, _skip_ws, _units
    from logichunk.text.sentence_chars import _flags

    q = np.array(sorted(min(o, len(text)) for o in offsets), dtype=np.int64)
    want = [_WS_RE.match(text, int(p)).end() for p in q.tolist()]
    assert _skip_ws(text, _units(text), _flags(), q).tolist() == want  # (in C)
    with mock.patch.object(native, "skip_ws", lambda *a: None):  # (numpy passes, then one match per run)
        assert _skip_ws(text, _units(text), _flags(), q).tolist() == want


def test_the_digit_table_is_what_a_regular_expression_reads_as_a_digit() -> None:
    """``\\d`` matches every decimal digit; the table is built from one code point in ten (Unicode
    encodes them in runs of ten): on this Python, the two agree everywhere."""
    want = np.array([bool(re.fullmatch(r"\d", chr(c))) for c in range(0x20000)])
    want[0x2E] = True
    assert (S._digit_or_dot() == want).all()
    assert not any(re.fullmatch(r"\d", chr(c)) for c in range(0x20000, 0x110000, 7))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([" ", "\t", "\n", "x", ")", "」", "\u3000", "1", "."]), min_size=1, max_size=60).map("".join),
       st.lists(st.tuples(st.integers(-2, 62), st.integers(-2, 62)), min_size=1, max_size=12),
       st.integers(0, 50), st.booleans(), st.sampled_from(["blank", "space", "closer", "digit"]), st.booleans())
def test_the_compiled_walk_is_the_numpy_walk(text, pairs, steps, back, kind, noting):
    """The layout's walker in C (one pass per walk) and in numpy passes (one per step): where each walk
    stops, whether it ran out of steps, whether it passed a noted character; at the text's ends too."""
    from unittest import mock

    from logichunk import native

    assert native.available(), native.status()
    cp = S.codepoints(text)
    take = {"blank": S._BLANK, "space": S._IS_SPACE, "closer": S._CLOSER_TABLE, "digit": S._digit_or_dot()}[kind]
    note = S._TAB if noting else None
    at = np.array([a for a, _ in pairs], np.int64)
    bound = np.array([b for _, b in pairs], np.int64)
    compiled = S._walk(cp, at, bound, take, steps, back, note)
    with mock.patch.object(native, "walk", lambda *a: None):
        passes = S._walk(cp, at, bound, take, steps, back, note)
    for got, want in zip(compiled, passes, strict=True):
        assert got.tolist() == want.tolist()
    assert at.tolist() == [a for a, _ in pairs]  # (the offsets given are not moved)


def test_terms_at_the_readings_edges() -> None:
    """The term reading at its edges, where random texts seldom land: terms of ``TITLE_MAX_CHARS``
    characters and one more, own indents up to ``_INDENT_MAX - 1`` spaces, a deeper line by one space,
    a line of closers; each decided without Python and read as the Python reading reads it."""
    pad = "Intro line of the text, long enough to pass the first forty characters.\n"
    cases = [
        (pad + " " * 39 + "TERM_AT_39\n" + " " * 40 + "its definition\n", True),
        (pad + "t" * S.TITLE_MAX_CHARS + "\n  its definition\n", True),
        (pad + "t" * (S.TITLE_MAX_CHARS + 1) + "\n  its definition\n", False),
        (pad + "  NAME\n   one deeper\n", True),
        (pad + "  NAME\n  as deep\n", False),
        (pad + "))\n    under closers\n", True),
        (pad + "Ends here.)\n    under a sentence\n", False),
    ]
    for text, is_term in cases:
        s, _ = _sentences(text)
        decided, term = S._read_terms(S.codepoints(text), s.starts, s.ends)
        assert decided[1] and term[1] == is_term, text
        assert (S._terms(text, s.starts, s.ends, np.array([1])).size == 1) == is_term, text


_TABLE_PIECES = ["Option  Default", "Name", "-----", "------  -------", "==  ==", "--  ", "--\t\t--", "-- -- --",
                 "---=  ---", "=====", "value  1", "  ", "\n", "\n", "\n\n", "--", "-=  --", "x"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_TABLE_PIECES), min_size=1, max_size=30).map("".join))
def test_column_rules_read_every_rule_line_the_expression_would(text: str) -> None:
    """A plain-text table's column rules, read in Python only where a second run of rules follows the
    first: the same rows as reading every line that opens with two dashes or equals signs."""
    s, _ = _sentences(text)
    n = len(s)
    if n < 3:
        return
    before = np.full(n, BREAK_PARAGRAPH, np.int8)
    before[1:] = np.asarray(s.breaks, dtype=np.int8)
    line_start = before >= BREAK_LINE
    cp = S.codepoints(text)
    first = cp[s.starts]
    rules = np.flatnonzero(((first == 0x2D) | (first == 0x3D)) & (cp[np.minimum(s.starts + 1, cp.size - 1)] == first))
    want = []
    for i in rules[(rules > 0) & (rules + 1 < n)].tolist():  # (the reading before the prefilter)
        head = text[int(s.starts[i - 1]) : int(s.ends[i - 1])]
        if line_start[i - 1] and head.strip() and head.count("\n") <= 1 \
                and text[int(s.starts[i + 1]) : int(s.ends[i + 1])].strip() \
                and S._COLUMN_RULES.fullmatch(text, int(s.starts[i]), int(s.ends[i])):
            want.append(i)
    assert S._column_rules(text, s.starts, s.ends, line_start, rules).tolist() == want


def test_a_term_over_a_definition_indented_by_a_tab_stays_with_it() -> None:
    """A term indented by spaces over a definition indented by a tab, wider as a tab stop measures it
    (``    NAME`` over ``\\tIts definition``), is a term: a character count called the tab shallower and
    dropped it before the term was read (a C header's continued macro, a man page's option)."""
    text = "An introduction of more than forty characters, to begin.\n    NAME\n\tIts definition, indented.\n"
    s, _ = _sentences(text)
    lay = S.layout(s)
    i = next(k for k in range(len(s)) if text[int(s.starts[k]) : int(s.ends[k])].startswith("NAME"))
    assert lay.no_cut[i]


@settings(max_examples=200, deadline=None)
@given(texts, st.booleans())
def test_a_sentences_last_character_is_found_past_four_blanks_and_two_closers(text: str, closers: bool) -> None:
    """``_last_at`` by the walker: past up to four ASCII blanks and line breaks, then up to two closing
    quotes or brackets, never before the sentence's first character (the loop it replaced, as the oracle)."""
    s, idx = _sentences(text)
    if idx.size == 0:
        return
    cp = S.codepoints(text)
    a, e = s.starts, s.ends - 1
    for _ in range(4):
        e = np.where((e > a) & np.isin(cp[np.maximum(e, 0)], [9, 10, 11, 12, 13, 32]), e - 1, e)
    if closers:
        for _ in range(2):
            e = np.where((e > a) & np.isin(cp[np.maximum(e, 0)], [ord(c) for c in S._CLOSERS]), e - 1, e)
    assert S._last_at(text, s.starts, s.ends, idx, closers).tolist() == np.maximum(e, 0).tolist()


@settings(max_examples=250, deadline=None)
@given(st.lists(st.integers(-5, 70000), min_size=0, max_size=600), st.lists(st.integers(0, 70000), max_size=70),
       st.sampled_from(["uint32", "int64", "uint16"]))
def test_membership_by_table_is_membership_by_search(values, members, dtype) -> None:
    """``_member`` looks small sets of code points up in a table when the values are many: the same
    answers as ``np.isin``, negative values and values past the table's end included."""
    from logichunk.text._arrays import _member

    if dtype != "int64":
        values = [v for v in values if v >= 0 and v < np.iinfo(dtype).max]
        members = [m for m in members if m < np.iinfo(dtype).max]
    m = np.array(sorted(set(members)), dtype=dtype)
    if m.size:  # (the table's edges: its last member, one past it)
        values = values + [int(m[-1]), int(m[-1]) + 1] * 150 + ([-1] * 10 if dtype == "int64" else [])
    v = np.array(values, dtype=dtype)
    assert _member(v, m).tolist() == np.isin(v, m).tolist()


SIGNATURE_PIECES = ["static", "int", "void", "PyObject", "size_t", "名前", "é", " ", "\t", "*", " *", "_x", "x1", "(", ")",
                    "=", ";", ",", ".", "\n", "\r\n", "\x0c", "\u2028", "{", "foo", "Foo_bar", "函数", "\u3000"]


_piece_run = st.lists(st.sampled_from(SIGNATURE_PIECES), min_size=1, max_size=8).map("".join)
# a line of type words over a line that opens with a name (either may hold anything else too)
_type_run = st.lists(st.sampled_from(["static", "int", "void", "PyObject", "size_t", "名前", "é", " ", "\t", "*", " *", "_x",
                                      "\u3000"]), min_size=1, max_size=5).map("".join)
_name_run = st.lists(st.sampled_from(["名前", "é", "_x", "x1", "函数", " ", "\t", "\u3000", ""]), max_size=4).map("".join)
signatures = st.one_of(
    st.tuples(_piece_run, st.sampled_from(["\n", "\r\n", "\x0c", " \n"]), st.sampled_from(["foo", "Foo_bar", "x"]),
              _piece_run).map("".join),
    st.tuples(_type_run, st.sampled_from(["\n", "\r\n", "\u2028"]), st.sampled_from(["foo", "Foo_bar", "x"]), _name_run,
              st.sampled_from(["(", "((", " (", "=("]), _piece_run).map("".join))


@settings(max_examples=250, deadline=None)
@given(st.one_of(signatures, st.lists(st.sampled_from(SIGNATURE_PIECES), min_size=1, max_size=40).map("".join)))
def test_a_line_the_signature_walks_drop_is_no_return_type_over_a_call(text: str) -> None:
    s, idx = _sentences(text)
    if idx.size < 2:
        return
    cand = idx[:-1]
    kept = set(S._may_head_signature(S.codepoints(text), s.starts, s.ends, cand).tolist())
    for i in cand.tolist():
        if i not in kept:
            assert not (S._return_type(text, int(s.starts[i]), int(s.ends[i]))
                        and S._CALL_OPEN.match(text, int(s.starts[i + 1]), int(s.ends[i + 1]))), repr(text)


# a mark's search: marks of every kind the layout looks for, in texts of one, two and four bytes a character
_FIND_MARKS = ["```", "~~~", "<!--", "-->", "/*", "*/", "#+", "::", "::\n", ".. code", ".. sourcecode", "a.b", "(?", "x"]


@settings(max_examples=250, deadline=None)
@given(st.lists(st.sampled_from(["`", "~", "<", "!", "-", "/", "*", "#", "+", ":", ".", " ", "\n", "a", "b", "code",
                                 "é", "漢", "\U0001f600", "(", "?", "x"]), max_size=80).map("".join),
       st.sampled_from(_FIND_MARKS), st.integers(min_value=0, max_value=90))
def test_the_literal_search_finds_what_str_find_finds(text: str, mark: str, start: int) -> None:
    """line_kinds._find searches a mark of two characters or more by a regular expression's literal search
    (faster than ``str.find`` on long texts): the same offset, from any start, the mark's regex
    characters (".", "(", "?", "*", "+") read as themselves."""
    from logichunk.text.line_kinds import _find

    assert _find(text, mark, start) == text.find(mark, start)


_MAIL_PIECES = ["From", "fROM", "To", "to", "Cc", "Bcc", "Date", "Subject", "\u017fubject", "Sent", "Reply-To", "发件人",
                "主题", "发送时间", ":", "：", " ", "\t", "  ", "x", "Fr", "Sub", "def", "return x", "\u00a0", "\n", "\n",
                "\n\n"]


def _mail_headers_both_ways(text: str) -> tuple[list[int], list[int]]:
    """The mail headers :func:`_mail_headers` finds among all sentences of ``text``, and those a match of
    every sentence finds (the reading before its prefilter)."""
    s, idx = _sentences(text)
    after = np.full(len(s), BREAK_PARAGRAPH, np.int8)
    after[:-1] = s.breaks
    exact, run, prev = [], 0, -2
    for i in idx.tolist():
        if not S._MAIL_HEADER.match(text, int(s.starts[i]), int(s.ends[i])):
            run = 0
            continue
        run = run + 1 if prev == i - 1 and after[prev] == BREAK_LINE else 1
        prev = i
        if run >= 2 and after[i] >= BREAK_PARAGRAPH and i + 1 < after.size:
            exact.append(i)
    return S._mail_headers(text, s.starts, s.ends, after, idx).tolist(), exact


@settings(max_examples=250, deadline=None)
@given(st.lists(st.sampled_from(_MAIL_PIECES), min_size=1, max_size=60).map("".join))
def test_mail_headers_read_only_lines_a_field_may_open_as_every_line_read(text: str) -> None:
    """_mail_headers matches its expression only where a field's first two letters follow a line's indent
    (the long s, "ſubject", matches as "s" does when case is ignored): the headers found are those a
    match of every candidate line finds."""
    got, exact = _mail_headers_both_ways(text)
    assert got == exact


@pytest.mark.parametrize("header", ["From: a\nSubject: b\n", "  fROM : a\n\tsUBJECT：b\n", "\u017fubject: a\nTo: b\n",
                                    "From: a\n\u017fent: b\n", "发件人：张三\n主题：会议\n", "Reply-To: a\nCc: b\n",
                                    "Date: x\nreturn: y\n", "Fr: a\nTo: b\n"])
def test_mail_headers_of_every_case_and_indent_are_found_as_every_line_read(header: str) -> None:
    got, exact = _mail_headers_both_ways("Hello.\n\n" + header + "\nThe message.\n")
    assert got == exact
    assert bool(got) == (not header.startswith(("Date: x", "Fr:")))


_COMMENT_PIECES = ["#", "##", "#######", " ", "\t", "  ", "define", "if", "ifdef", "include_next", "pragma", "line",
                   "lines", "x", "Check", "é", "\n", "!", "d", "u"]


@settings(max_examples=250, deadline=None)
@given(st.lists(st.sampled_from(_COMMENT_PIECES), min_size=1, max_size=12).map("".join),
       st.sampled_from(["", "\n", "\n    x", "\r\n"]))
def test_a_line_read_as_a_code_comment_by_walks_is_one_by_the_expressions(line: str, tail: str) -> None:
    """_code_comments drops "#" lines from the layout's reading loop where they are Markdown's ATX form and no C
    directive (the loop passes over such a line indented four columns or more): every line it drops, the
    expressions read so; and a plain comment is dropped ("# Check x"), a directive not ("# define X")."""
    text = "    " + line + tail
    if not line.startswith("#"):
        return
    a, b = np.array([4]), np.array([len(text)])
    if S._code_comments(S.codepoints(text), a, b)[0]:
        assert S._ATX.match(text[4:]) and not S.CPP_DIRECTIVE.match(text[4:]), repr(text)


def test_plain_comments_are_read_by_walks_and_directives_are_not() -> None:
    text = "    # Check x\n    # define X 1\n    ## two\n    #!x\n    #\tif y\n    #\tIf y\n"
    starts = np.array([k for k, ch in enumerate(text) if ch == "#" and text[k - 1] == " "])
    ends = np.array([text.index("\n", a) + 1 for a in starts.tolist()])
    assert S._code_comments(S.codepoints(text), starts, ends).tolist() == [True, False, True, False, False, True]


@settings(max_examples=250, deadline=None)
@given(st.lists(st.sampled_from(["A", "Ar", "Article", "rticle", " ", "\t", "5", ".", ":", "The", "(", "\n", "x"]),
                min_size=1, max_size=10).map("".join))
def test_an_article_opens_with_an_r_after_its_a(line: str) -> None:
    """The layout reads a law's article (:data:`_ARTICLE`) at a line that opens with "A" only where an "r"
    follows it: every line the expression reads as an article and that opens with "A" has one."""
    if line.startswith("A") and S._ARTICLE.match(line):
        assert line[1:2] == "r"


# text/records.py reads gutters (runs of two spaces or more between cells) a block of code points at a time and
# its aligned tables with numpy: both must read what the first, plainer readings below read (kept here verbatim)
def _gutters_as_first_read(text: str) -> np.ndarray:
    cp = codepoints(text)
    if cp.size < 4:
        return np.zeros((0, 2), np.int64)
    sp = cp[1:] == 0x20
    lo = np.flatnonzero((cp[:-2] > 0x20) & sp[:-1] & sp[1:]) + 1
    lo = lo[~_member(cp[lo - 1], R._STOPS)]
    hi = np.asarray([R._SPACES.match(text, a).end() for a in lo.tolist()], np.int64)
    if hi.size:
        keep = cp[np.minimum(hi, cp.size - 1)] > 0x20
        keep &= hi < cp.size
        lo, hi = lo[keep], hi[keep]
    return np.stack((lo, hi), axis=1).astype(np.int64)


def _aligned_tables_as_first_read(text: str) -> tuple:
    at = _gutters_as_first_read(text)
    if at.shape[0] < R.RECORDS_MIN:
        return ()
    lines: dict[int, list[tuple[int, int]]] = {}
    cell: dict[int, int] = {}
    for a, b in at.tolist():
        start = text.rfind("\n", 0, a) + 1
        if start not in cell:
            cell[start] = start + len(text[start:a]) - len(text[start:a].lstrip(" \t"))
            if text[cell[start]] == "|":
                cell[start] = -1
        opened = cell[start]
        if opened < 0:
            continue
        cell[start] = b
        if R._ALNUM.search(text, opened, a) is None:
            continue
        lines.setdefault(start, []).append((a - start, b - start))
    out = []
    starts = sorted(lines)
    k = 0
    while k < len(starts):
        rows = [starts[k]]
        lefts, rights = {b for _, b in lines[starts[k]]}, {a for a, _ in lines[starts[k]]}
        k += 1
        while k < len(starts) and text.rfind("\n", 0, starts[k] - 1) + 1 == rows[-1] and text[starts[k] - 1] == "\n":
            g = lines[starts[k]]
            left, right = lefts & {b for _, b in g}, rights & {a for a, _ in g}
            if not left and not right:
                break
            lefts, rights = left, right
            rows.append(starts[k])
            k += 1
        if len(rows) >= R.RECORDS_MIN:
            firsts = tuple(r + len(text[r : r + 256]) - len(text[r : r + 256].lstrip(" \t")) for r in rows)
            ends = tuple(e if (e := text.find("\n", r)) >= 0 else len(text) for r in rows)
            out.append((firsts, ends))
    return tuple(out)


def _assert_read_as_first(text: str) -> None:
    got, want = R._gutters.__wrapped__(text), _gutters_as_first_read(text)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    assert R._aligned_tables.__wrapped__(text) == _aligned_tables_as_first_read(text)


_CELL_PIECES = [" ", " ", "  ", "   ", " " * 15, " " * 16, " " * 17, "\t", "\n", "\n", "\r\n", "\n\n", ".", "|", ">", "#",
                "1", "42", "a", "Word", "漢", "x. ", "1.  "]
# cells under one another: a few columns of words and numbers, their gutters at one place or ragged
_rows = st.lists(st.lists(st.sampled_from(["a", "Word", "42", "1.", "#", ">", "|", "漢", "x y"]), min_size=1, max_size=4)
                 .flatmap(lambda cells: st.lists(st.sampled_from([" ", "  ", "   ", "\t", "    "]), min_size=len(cells),
                                                 max_size=len(cells))
                          .map(lambda gaps: "".join(g + c for g, c in zip(gaps, cells, strict=True)))),
                 min_size=1, max_size=8).map("\n".join)


@settings(max_examples=250, deadline=None)
@given(st.one_of(st.lists(st.sampled_from(_CELL_PIECES), max_size=80).map("".join),
                 st.lists(_rows, min_size=1, max_size=4).map("\n\n".join)))
def test_gutters_and_aligned_tables_are_read_as_first_read(text: str) -> None:
    _assert_read_as_first(text)


def test_gutters_and_aligned_tables_on_the_bench_corpora_are_read_as_first_read() -> None:
    spec = importlib.util.spec_from_file_location("corpora", Path(__file__).resolve().parents[1] / "bench" / "corpora.py")
    corpora = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpora)
    for name in ("english", "chinese", "english_lines", "code"):
        try:
            text = getattr(corpora, name)(2_000_000)[0]
        except FileNotFoundError:
            pytest.skip("shared corpora not available")
        _assert_read_as_first(text)
        _assert_read_as_first(text[: len(text) // 3] + "  " + text[len(text) // 3 :])  # (a block's edge moved)


# text/structure.py tries a log's time only where its marks stand (_may_log_time): a superset of the pattern's matches
_STAMP_PIECES = ["[", "1", "12", "2024", "٣", "１", ":", "/", ".", "-", "T", " ", "\t", "x", "]", "<a>", "*", "am"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_STAMP_PIECES), min_size=1, max_size=12).map("".join))
def test_a_log_time_the_marks_rule_out_never_matches(line: str) -> None:
    text = "x\n" + line + "\n"
    if not S._may_log_time(codepoints(text), np.array([2], np.int64))[0]:
        assert S._LOG_TIME.match(text, 2, len(text) - 1) is None, line


def test_log_times_of_every_form_pass_the_marks() -> None:
    for line in ("2024-05-03T14:02:00 INFO", "[10:27] <carol> hi", "9:14 <bob> x", "[12/03/24, 09:14:22] Ann: x",
                 "12.03.2024, 9:14 am - Ann: x", "١٢:٣٠] x"):
        text = "x\n" + line + "\n"
        assert S._LOG_TIME.match(text, 2, len(text) - 1) is not None, line
        assert S._may_log_time(codepoints(text), np.array([2], np.int64))[0], line


# text/line_kinds.py reads a rule's and a setext underline's line by two walks where it matched each line's pattern
_MARK_PIECES = ["-", "-", "*", "_", "=", "=", " ", "\t", "\r", "x", "\u3000", "#"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from("-*_="), st.lists(st.sampled_from(_MARK_PIECES), max_size=12).map("".join),
       st.sampled_from(["", "\n", "\r\n", "\n---\n"]))
def test_mark_lines_read_by_walks_are_what_the_patterns_match(mark: str, rest: str, tail: str) -> None:
    from logichunk.text import line_kinds as K
    text = "Title\n" + mark + rest + tail
    f, e = np.array([6], np.int64), np.array([text.find("\n", 6) if "\n" in text[6:] else len(text)], np.int64)
    c0 = np.array([ord(mark)], np.int64)
    line = text[6 : int(e[0])]
    if mark in "=-":
        assert K._mark_lines(codepoints(text), f, e, c0, False)[0] == (K._SETEXT_RE.fullmatch(line) is not None)
    if line.startswith(mark * 3):
        assert K._mark_lines(codepoints(text), f, e, c0, True)[0] == (K._HR_RE.fullmatch(line) is not None)


@pytest.mark.parametrize(("line", "rule", "setext"), [("---", True, True), ("- - -", True, False), ("===\r", True, True),
                                                      ("= = =", False, False), ("***  ", True, False), ("---x", False, False),
                                                      ("--\r-", False, False), ("==-", False, False)])
def test_rules_and_underlines_are_read_as_before(line: str, rule: bool, setext: bool) -> None:
    """A rule's line takes blanks among its marks ("- - -", never "= = ="), an underline none; a carriage return
    only at the end: the layout's reading of each (fails where a walk reads a line the pattern does not)."""
    from logichunk.text import line_kinds as K
    text = "Title\n" + line + "\nText.\n"
    f, e = np.array([6], np.int64), np.array([6 + len(line)], np.int64)
    c0 = np.array([ord(line[0])], np.int64)
    assert bool(K._mark_lines(codepoints(text), f, e, c0, True)[0]) == rule == (K._HR_RE.fullmatch(line) is not None)
    if line[0] in "=-":
        assert bool(K._mark_lines(codepoints(text), f, e, c0, False)[0]) == setext \
            == (K._SETEXT_RE.fullmatch(line) is not None)


# text/records.py reads whether a cell holds a letter or a digit by a walk over a table read off the pattern
def test_the_letter_or_digit_table_is_the_patterns_reading() -> None:
    table = R._not_alnum()
    assert table.size == R._TABLE_TOP
    assert [c for c in range(R._TABLE_TOP) if table[c] == (R._ALNUM.match(chr(c)) is not None)] == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["_", " ", "a", "٣", "ª", "𝟙", "😀", "-", "漢", "\u0301", "\n", "."]), max_size=10).map("".join),
       st.integers(0, 12), st.integers(0, 12))
def test_a_cell_holds_a_letter_or_digit_as_the_pattern_reads(text: str, lo: int, hi: int) -> None:
    lo, hi = min(lo, len(text)), min(max(lo, hi), len(text))
    got = R._holds_alnum(text, np.array([lo], np.int64), np.array([hi], np.int64))
    assert bool(got[0]) == (R._ALNUM.search(text, lo, hi) is not None)


# text/structure.py tries an enclosed number only where its marks stand (_may_enclose): a superset of the matches
_ENCLOSED_PIECES = ["(", "（", "1", "12", "１", "a", "iv", "iiiii", "x", "十二", "一", ")", "）", "、", " ", "\t", "\u3000",
                    "3", ",", "y"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ENCLOSED_PIECES), min_size=1, max_size=8).map("".join))
def test_an_enclosed_number_the_marks_rule_out_never_matches(line: str) -> None:
    text = "x\n" + line + "\n"
    if not S._may_enclose(codepoints(text), np.array([2], np.int64))[0]:
        assert S._ENCLOSED_NUMBER.match(text, 2) is None, line


_ENCLOSED_LINES = st.lists(st.tuples(st.lists(st.sampled_from(_ENCLOSED_PIECES + ["Word.", "①"]), max_size=6).map("".join),
                                     st.sampled_from(["\n", "\n\n", " ", ". "])).map("".join),
                           min_size=1, max_size=8).map("".join)


@settings(max_examples=200, deadline=None)
@given(_ENCLOSED_LINES)
def test_enclosed_items_are_the_lines_the_pattern_opens_short_texts_with_none_included(text: str) -> None:
    # _enclosed_items returns at once where no line opens with a bracket or numeral (and _may_enclose on no
    # offsets): the answer must still be every sentence opening a line that the pattern matches, and no other
    s = split_sentences(text)
    if len(s) == 0:
        return
    before = np.full(len(s), BREAK_PARAGRAPH, np.int8)
    before[1:] = np.asarray(s.breaks, np.int8)
    first = codepoints(text)[s.starts]
    got = S._enclosed_items(text, s.starts, before, first)
    want = [i for i in range(len(s)) if before[i] >= BREAK_LINE
            and (0x2460 <= int(first[i]) <= 0x249B or S._ENCLOSED_NUMBER.match(text, int(s.starts[i])))]
    assert got.dtype == np.int64 and got.tolist() == want, text


def test_the_mark_readers_answer_no_offsets_with_no_answers() -> None:
    cp = codepoints("(1) x\n12:30 y\n")
    for fn in (S._may_enclose, S._may_log_time):
        out = fn(cp, np.zeros(0, np.int64))
        assert out.dtype == bool and out.shape == (0,)


def test_enclosed_numbers_of_every_form_pass_the_marks() -> None:
    for line in ("(1) x", "（十二）x", "(iiiii) x", "(a) x", "一、x", "十二、x", "(12)x", "（１２） x"):
        text = "x\n" + line + "\n"
        assert S._ENCLOSED_NUMBER.match(text, 2) is not None, line
        assert S._may_enclose(codepoints(text), np.array([2], np.int64))[0], line


# text/structure.py reads a line as code (_NO_TITLE) only where it holds a character one of the pattern's
# alternatives needs (_code_like)
_CODE_PIECES = ["=", ";", "{", "}", "(", ")", "_", "-", ">", "$", ":", "/", "#", "@", "\\", "]", "[", "a", "Z", "9",
                " ", "é", "x_y", "f(", "->", "$1", "http://", "](", "_x", "Title", "漢"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_CODE_PIECES), max_size=8).map("".join))
def test_a_line_reads_as_code_exactly_where_the_pattern_finds_code(line: str) -> None:
    assert S._code_like(line) == (S._NO_TITLE.search(line) is not None), line

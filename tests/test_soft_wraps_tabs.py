"""Tabs and the soft-wrap reader: a tab in a line's indent is indentation (to the next multiple of
``TAB_WIDTH`` columns: a man page rendered by ``man | col -b``), a tab in a line's text is tabular data."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.text.sentences import BREAK_LINE, split_many
from logichunk.text.soft_wraps import TAB_WIDTH, _indent_tabs
from structure_helpers import split_both_ways

# tar(1) as `man -P cat tar | col -b` renders it: "\t      " is 14 columns, a word broken with U+2010 HYPHEN
MAN = ("       -A, --catenate, --concatenate\n"
       "\t      Append archive to the end of another archive.  The arguments are\n"
       "\t      treated as the names of archives to append.  All archives  must\n"
       "\t      be  of the same format as the archive they are appended to, oth\u2010\n"
       "\t      erwise the resulting archive might be unusable with non-GNU  im\u2010\n"
       "\t      plementations  of tar.  Notice also that when more than one ar\u2010\n"
       "\t      chive is given, the members from archives other than  the first\n"
       "\t      one  will be  accessible in the resulting archive only if using\n"
       "\t      the -i (--ignore-zeros) option.\n")


def _expand_indents(text: str) -> str:
    """Each line's leading whitespace with its tabs expanded (``col -x``), the rest as it is."""
    out = []
    for line in text.split("\n"):
        body = line.lstrip(" \t")
        out.append(line[: len(line) - len(body)].expandtabs(TAB_WIDTH) + body)
    return "\n".join(out)


def test_a_man_page_indented_with_tabs_is_read_as_wrapped_prose():
    s = split_both_ways(MAN)
    texts = [t.rstrip() for t in s.texts()]
    assert not any(t.endswith("\u2010") for t in texts), texts  # (no sentence ends mid-word)
    assert any("oth\u2010\n\t      erwise the resulting" in t for t in texts), texts
    assert "The arguments are\n\t      treated as the names of archives to append." in texts, texts
    expanded = split_both_ways(_expand_indents(MAN))
    assert s.breaks.tolist() == expanded.breaks.tolist()


def test_a_tab_in_an_indent_counts_to_the_next_tab_stop():
    from logichunk.text.charclass import codepoints

    indents = ["\t", " \t", "       \t", "\t      ", "\t\t", "  \t \t ", "    ", "", "\t" * 5 + "   "]
    text = "\n".join(i + "x" for i in indents)
    cp = codepoints(text)
    a = np.array([text.index(i + "x", sum(len(j) + 2 for j in indents[:k])) for k, i in enumerate(indents)])
    b = a + np.array([len(i) for i in indents])
    want = [len(i.expandtabs(TAB_WIDTH)) - len(i) for i in indents]
    assert _indent_tabs(cp, a, b).tolist() == want
    with _numpy_only():
        assert _indent_tabs(cp, a, b).tolist() == want


def test_tab_separated_rows_and_tab_indented_code_keep_their_line_breaks():
    tsv = ("name\tdescription of the entry in plain words\tcount of the items seen\n"
           "alpha\tthe first entry of the table that we kept here\tone hundred and twelve\n"
           "beta\tthe second entry of the table that we kept too\ttwo hundred and three\n"
           "gamma\tthe third entry of the table that we kept also\tthree hundred and four\n")
    code = ("func main() {\n"
            "\titems := loadTheItemsFromTheConfiguredSourceDirectory(path, options)\n"
            "\tfor _, item := range items {\n"
            "\t\tfmt.Println(item.name, item.size, item.owner, item.group, item.mode)\n"
            "\t}\n"
            "}\n")
    for text in (tsv, code):
        s = split_both_ways(text)
        assert len(s) == text.count("\n"), s.texts()
        assert (s.breaks[: len(s) - 1] >= BREAK_LINE).all(), s.texts()


def test_a_tab_inside_a_line_of_wrapped_prose_still_makes_it_tabular():
    """(A tab between words is a column's edge; it keeps the lines on either side of its line apart.)"""
    text = _expand_indents(MAN).replace("are appended to, oth\u2010", "are\tappended to, oth\u2010")
    texts = [t.rstrip() for t in split_both_ways(text).texts()]
    assert any(t.endswith("oth\u2010") for t in texts), texts


def _numpy_only():
    from logichunk import native

    return mock.patch.object(native, "_load", lambda: None)


_WORDS = ["the", "archive", "members", "of", "a", "tar", "file", "are", "read", "in", "order", "and", "which",
          "option", "oth\u2010", "well-", "may", "be", "given", "GNU", "It", "so.", "--file", "x = 1", "\t", "|",
          "e.g.", "(see", "below)"]


@st.composite
def man_pages(draw) -> str:
    """Paragraphs wrapped at a drawn width, in columns, each indented by spaces or tabs and spaces
    (some deeper than the last, some with a word or a tab inside a line)."""
    paras = []
    for _ in range(draw(st.integers(1, 4))):
        indent = draw(st.sampled_from(["", "       ", "\t", "\t      ", " \t", "\t\t", "        ", "  \t  "]))
        cols = len(indent.expandtabs(TAB_WIDTH))
        width = draw(st.sampled_from([48, 64, 78, 80]))
        words = draw(st.lists(st.sampled_from(_WORDS * 4 + ["\t", "  "]), min_size=5, max_size=80))
        lines, cur = [], ""
        for w in words:
            if cur and cols + len(cur) + 1 + len(w) > width:
                lines.append(cur)
                cur = w
            else:
                cur = f"{cur} {w}" if cur else w
        lines.append(cur)
        paras.append("\n".join(indent + line for line in lines))
    return draw(st.sampled_from(["\n", "\n\n"])).join(paras) + "\n"


@settings(max_examples=200, deadline=None)
@given(st.lists(man_pages(), min_size=1, max_size=3))
def test_the_compiled_and_numpy_readers_agree_on_tab_indented_texts_and_spans_tile(texts):
    import logichunk.text.sentences as sentences_mod
    from logichunk import native
    from logichunk.text.soft_wraps import soft_wraps

    assert native.available(), native.status()
    readings = []
    real = sentences_mod.soft_wraps

    def keep(*args):
        readings.append(args)
        return real(*args)

    with mock.patch.object(sentences_mod, "soft_wraps", keep):
        fast = [split_both_ways(t) for t in texts]
    with _numpy_only():
        slow = [split_both_ways(t) for t in texts]
        by_numpy = [soft_wraps(*args) for args in readings]
        many = split_many(texts)
    for a, b, c, t in zip(fast, slow, many, texts, strict=True):
        assert a.starts.tolist() == b.starts.tolist() == c.starts.tolist(), t
        assert a.breaks.tolist() == b.breaks.tolist() == c.breaks.tolist(), t
        assert "".join(a.texts()) == t
    for args, want in zip(readings, by_numpy, strict=True):
        assert np.array_equal(soft_wraps(*args), want), texts


@settings(max_examples=200, deadline=None)
@given(man_pages())
def test_tabs_in_indents_read_as_the_spaces_they_stand_for(text):
    """Where tabs stand only in indents, the sentences and their breaks are those of the text with its indents
    expanded (a tab in a line's text keeps that line tabular either way)."""
    a, b = split_both_ways(text), split_both_ways(_expand_indents(text))
    assert a.breaks.tolist() == b.breaks.tolist(), text

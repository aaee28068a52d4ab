"""LLM-free chunk context (issue 20): heading path + distinguishing terms, spans untouched."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk import check_tree, chunk
from logichunk.context import add_context, headings, span_contexts

ROOT = Path(__file__).resolve().parents[1]

DOC = """# Guide

Intro text about the guide.

## Install

Run pip to install the package. The package needs numpy. Install numpy first, then the package.

## Usage

Call chunk on a text. The chunk function returns a tree. Each tree node has a span and an id.

### Details

Spans tile the text. Trees keep spans exact.
"""


def test_headings_and_breadcrumbs():
    assert [(lvl, t) for _, lvl, t in headings(DOC)] == [(1, "Guide"), (2, "Install"), (2, "Usage"), (3, "Details")]
    assert [t for _, _, t in headings("前言\n第三章 桃花源\n正文。\n")] == ["第三章 桃花源"]
    at = DOC.index("Spans tile")
    ctx = span_contexts(DOC, [0, DOC.index("Run pip"), at], [10, at, len(DOC)], terms=3)
    assert ctx[0].startswith("Guide")
    assert ctx[1].startswith("Guide > Install;")
    assert ctx[2].startswith("Guide > Usage > Details;")
    assert "package" in ctx[1]  # the document's most frequent content terms follow the path


def test_add_context_keeps_the_tree():
    tree = chunk(DOC, max_size=200, levels=2)
    got = add_context(tree)
    check_tree(got)
    assert [(c.id, c.span, c.method) for c in got] == [(c.id, c.span, c.method) for c in tree]
    for c in got:
        assert isinstance(c.meta["context"], str)
        assert c.meta["size"] == tree.get(c.id).meta["size"]
    inside = [c for c in got if c.span.start > DOC.index("## Usage") and c.span.start < DOC.index("### Details")]
    assert inside and all("Usage" in c.meta["context"] for c in inside)


@settings(max_examples=40, deadline=None)
@example("Words about things. # Title\n第一章 开始\n第一章 开始\nWords about things. 第一章 开始\n第一章 开始\n")  # a heading
# the splitter read over a line break it took for a wrap (CJK goes on across it): one line of the path
@given(st.lists(st.sampled_from(["# Title\n", "## Part\n", "第一章 开始\n", "Words about things. ", "中文内容。",
                                 "\n\n", "Tokens and chunks matter. "]), min_size=1, max_size=40).map("".join))
def test_context_never_touches_spans(text):
    tree = chunk(text, max_size=60, levels=2)
    got = add_context(tree)
    check_tree(got)
    assert [c.span for c in got] == [c.span for c in tree]
    assert all("\n" not in c.meta["context"] for c in got)



def test_add_context_given_no_tree_is_one_line():
    """``add_context(text)`` (the text, not its tree) was an AttributeError: 'str' object has no attribute 'text'."""
    import pytest

    from logichunk.errors import InputError

    for bad in ("# Notes\n\nA text.", None):
        with pytest.raises(InputError, match=r"^add_context takes a chunk tree, got \w+: add_context\(chunk\(text\)\)$"):
            add_context(bad)  # type: ignore[arg-type]

def test_heading_paths_read_every_layout_the_chunker_reads():
    """The heading path comes from the layout's own reading of headings (one reader for the chunker and
    the context): setext, AsciiDoc, LaTeX, HTML, numbered and Chinese headings, and a book's chapters,
    each at its depth; a chapter marker and the title line under it are one heading."""
    cases = {
        "Title\n=====\n\nText here.\n\nSub\n---\n\nMore text.\n": [(1, "Title"), (2, "Sub")],
        "== Installation\n\nRun it.\n\n=== Details\n\nMore.\n": [(2, "Installation"), (3, "Details")],
        "= = Gameplay = =\n\nText.\n\n= = = Reception = = =\n\nMore.\n": [(2, "Gameplay"), (3, "Reception")],
        "\\section{Rivers}\nText on rivers.\n\n\\subsection*{The Nile}\nText on the Nile.\n":
            [(3, "Rivers"), (4, "The Nile")],
        "<h1>Rivers</h1>\n<p>Text.</p>\n<h2 class='x'>The <b>Nile</b></h2>\n<p>More.</p>\n":
            [(1, "Rivers"), (2, "The Nile")],
        "1 Introduction\n\nText.\n\n1.2 Scope\n\nText.\n\n一、总体要求\n\n正文。\n\n（一）指导思想\n正文。\n":
            [(1, "1 Introduction"), (2, "1.2 Scope"), (1, "一、总体要求"), (2, "（一）指导思想")],
        "BOOK I. THE COMING\n\nText.\n\nCHAPTER 1.\nThe Eve of the War\n\nText text.\n\nIII.\n\nMore text.\n":
            [(1, "BOOK I. THE COMING"), (2, "CHAPTER 1. The Eve of the War"), (2, "III.")],
    }
    for text, want in cases.items():
        got = headings(text)
        assert [(lvl, t) for _, lvl, t in got] == want, text
        assert all((off == 0 or text[off - 1] == "\n") and not text[off].isspace() for off, _, _ in got)  # line starts
    text = "\\section{Rivers}\nRivers shape the land.\n\n\\subsection{The Nile}\nThe Nile flows north.\n"
    ctx = span_contexts(text, [text.index("The Nile flows")], [len(text)], terms=0)
    assert ctx == ["Rivers > The Nile"]

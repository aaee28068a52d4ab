"""Front matter (YAML between ``---`` lines, TOML between ``+++`` lines, at a text's start) is one block
of metadata lines: read as Markdown, its closing ``---`` would underline the last key as a heading and
a ``# comment`` would be one, so a chunk could end on a "heading" that is a YAML key."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk import chunk, chunk_many, segment
from logichunk.chunkers.parent_child import blank_line_blocks
from logichunk.text.line_kinds import fence_spans, front_matter
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import BLOCK, LINE, layout
from structure_helpers import assert_headings_open_chunks, split_both_ways

YAML = "---\ntitle: A note\ntags:\n  - x\n# a comment\n---\n"


@pytest.mark.parametrize("text, span", [
    (YAML + "\n# Hello\n", (0, len(YAML) - 1)),
    ("---\ntitle: x\n...\nBody.", (0, 16)),  # YAML's document end closes it too
    ("+++\ntitle = 'x'\n[params]\nk = 1\n+++\n\nBody.", (0, 34)),
    ("---\r\ntitle: x\r\n---\r\n\r\nBody.", (0, 18)),  # CRLF: the span ends before the closing line's \r
    ("\ufeff---\ntitle: x\n---\n", (1, 17)),  # after a byte-order mark
    ("---\n\n# comment first\nkey:\n---", (0, 29)),  # blank and comment lines before the first key
    ("---\ntitle: x\n---", (0, 16)),  # closed at the very end of the text
])
def test_front_matter_is_found(text, span):
    assert front_matter(text) == span
    assert fence_spans(text)[0] == span


@pytest.mark.parametrize("text", [
    "---\nJust prose here. And more.\n---\n\nBody.",  # a rule, a paragraph, a rule: no key
    "---\ntitle: x\n\nNo closing line.\n",  # unclosed
    "Intro.\n---\ntitle: x\n---\n",  # not at the start
    " ---\ntitle: x\n---\n",  # indented
    "----\ntitle: x\n----\n",  # a longer rule
    "+++\ntitle: x\n+++\n",  # TOML marks, YAML entry
    "---\ntitle = 'x'\n---\n",  # YAML marks, TOML entry
    "---", "", "+++\n+++",
])
def test_what_is_not_front_matter(text):
    assert front_matter(text) is None


def test_front_matter_lines_are_metadata_not_markdown():
    text = YAML + "\n# Hello\n\nSome text here. More text follows it.\n"
    sents = split_both_ways(text)  # the scalar and the vector splitter agree
    lay = layout(sents)
    heads = [text[int(sents.starts[i]) : int(sents.ends[i])].strip() for i in np.flatnonzero(lay.heading)]
    assert heads == ["# Hello"]  # not "# a comment", not "tags: - x" over its closing "---"
    end = front_matter(text)[1]
    inside = [i for i in range(len(sents) - 1) if int(sents.ends[i]) <= end]
    assert all(lay.strength[i] <= LINE for i in inside)
    assert lay.no_cut[inside[0]] and lay.no_cut[inside[-1]]  # the marks stay with the entries
    after = len(inside)  # the gap after the closing line
    assert int(sents.ends[after]) > end and lay.strength[after] >= BLOCK


def test_a_blank_line_inside_front_matter_is_no_paragraph_break():
    text = "---\ntitle: x\n\ndescription: y\n---\n\nFirst paragraph.\n\nSecond paragraph.\n"
    blocks = blank_line_blocks(text)
    assert "".join(blocks) == text and blocks[0] == "---\ntitle: x\n\ndescription: y\n---\n\n"
    sents = split_sentences(text)
    lay = layout(sents)
    end = front_matter(text)[1]
    assert all(lay.strength[i] <= LINE for i in range(len(sents) - 1) if int(sents.ends[i]) <= end)


def test_the_reported_note_keeps_its_heading_with_its_text():
    """The file that showed it: the closing ``---`` made ``tags: [a, b]`` a setext heading, and with
    ``# Hello`` under it a chunk ended on a heading."""
    text = "---\ntitle: x\ntags: [a, b]\n---\n\n# Hello\n\nSome text. More text here.\n"
    tree = chunk(text, max_size=30)
    roots = [tree.text_of(c) for c in tree.roots()]
    assert any(r.startswith("# Hello\n\nSome text.") for r in roots), roots
    assert not any(r.rstrip().endswith("# Hello") for r in roots)
    whole = chunk(text, max_size=40)  # the front matter fits: one chunk, cut only where it ends
    assert whole.text_of(whole.roots()[0]) == "---\ntitle: x\ntags: [a, b]\n---\n\n"


_KEYS = st.sampled_from(["title: A note\n", "tags:\n", "  - a tag\n", "# a comment\n", "date: 2026-11-27\n",
                         "summary: One. Two. Three.\n", "\n", "list: [a, b]\n"])
_BODY = st.sampled_from(["# A heading\n\n", "## Sub heading\n", "Plain sentence one. ", "Another sentence here! ",
                         "\n\n", "Title Line\n---\n", "- a list item\n", "```\ncode\n```\n", "中文句子在这里。"])


@settings(max_examples=150, deadline=None)  # 300 took ~20 s of the suite on two cores
@given(st.lists(_KEYS, max_size=8), st.sampled_from(["---", "..."]), st.lists(_BODY, max_size=20),
       st.sampled_from([30, 60, 200]))
@example(["title: A note\n"], "---", [], 30)
def test_front_matter_stays_whole_where_it_fits_and_never_ends_in_a_heading(keys, close, body, max_size):
    text = "---\ntitle: x\n" + "".join(keys) + close + "\n" + "".join(body)
    fm = front_matter(text)
    assert fm is not None and fm[1] == len("---\ntitle: x\n" + "".join(keys) + close)
    split_both_ways(text)
    sizes = (max_size, max_size // 2)
    tree = chunk(text, sizes=sizes)
    assert "".join(tree.text_of(c) for c in tree.roots()) == text
    assert_headings_open_chunks(tree, text, sizes)
    sents = split_sentences(text)
    block_end = int(sents.ends[np.searchsorted(sents.ends, fm[1])])  # with the blank lines after it
    if block_end <= max_size:  # it fits: no level-1 cut inside it
        assert not any(0 < c.span.end < fm[1] for c in tree.roots())
    rows = [(c.id, c.span) for c in tree]
    assert [[(c.id, c.span) for c in t] for t in chunk_many([text, "Other text.\n" + text, text], sizes=sizes)][::2] \
        == [rows, rows]
    assert [f[0] for f in fence_spans(text)][:1] == [0]


def test_topics_do_not_open_at_front_matter_comments():
    text = YAML + "\n" + " ".join(["The cat sat on the mat and purred."] * 6) + "\n"
    tree = segment(text)
    starts = [c.span.start for c in tree.roots()]
    assert not any(0 < s < front_matter(text)[1] for s in starts)


def test_a_list_in_front_matter_and_a_list_after_it_are_not_one_list():
    """Front matter's ``  - a tag`` lines and a list item right after its closing line were read as one
    list, so the gap after the closing line was a list's line break, no block's: the front matter was
    cut inside where it fitted (found by the property test above)."""
    text = "---\ntitle: x\n\n  - a tag\n  - a tag\n---\n- a list item\nPlain sentence one. "
    fm = front_matter(text)
    tree = chunk(text, max_size=60)
    assert [tree.text_of(c) for c in tree.roots()][0] == text[: fm[1] + 1]

"""Lines of markup in a Markdown text: a rule right under a heading (its underline) and lines of HTML
tags alone (GitHub's ``<details>``, an anchor's ``<a id="x"></a>``). Neither may end a chunk with a
heading or leave markup alone in a chunk of its own, and a line of tags is never a title."""

from __future__ import annotations

import re

import pytest

from logichunk import chunk, chunk_many
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import LINE, PARAGRAPH, SECTION, layout

BODY = ("The installer fetches the latest release and puts it under your home folder. It needs git and a "
        "compiler for the optional extension, which makes the shell start faster. ")


def _gap_after(text: str, line: str) -> int:
    """The index of the gap after the sentence that holds the first occurrence of ``line``."""
    s = split_sentences(text)
    at = text.index(line) + len(line) - 1
    return int((s.ends <= at).sum())


@pytest.mark.parametrize("rule", ["----", "***", "___", "* * *", "====", "- - -"])
def test_a_rule_right_under_a_heading_is_its_underline(rule):
    """``### A. Getting Pyenv`` over ``----`` (pyenv's README): the rule goes with the heading, so no
    chunk ends with the two, and the section still opens before the heading."""
    text = (f"Some words before the section, ending a paragraph.\n\n## Installation\n\n### A. Getting it\n{rule}\n"
            f"#### Linux\n\n{BODY * 2}\n\n### B. Set up your shell\n{rule}\n\n**If you upgraded**\n\n{BODY * 2}\n")
    sents = split_sentences(text)
    lay = layout(sents)
    texts = sents.texts()
    for k, t in enumerate(texts[:-1]):
        if t.strip() == rule:
            assert lay.no_cut[k - 1] and lay.no_cut[k], (rule, t)  # glued to the heading and to what follows
            assert lay.strength[k] <= LINE
    assert lay.strength[_gap_after(text, "before the section, ending a paragraph.")] == SECTION
    rule_ends = {int(sents.ends[k]) for k, t in enumerate(texts) if t.strip() == rule}
    heading_ends = {int(sents.ends[k]) for k in range(len(sents)) if lay.heading[k]}
    for max_size in (200, 250, 400, 1000):  # (a heading run and its first sentence fit; past that the limit comes first)
        for c in chunk(text, max_size=max_size, levels=1).roots():
            assert c.span.end not in rule_ends | heading_ends, (max_size, c)


def test_a_rule_is_no_underline_where_a_paragraph_or_a_table_stands_over_it():
    """A rule under a paragraph is a setext heading's underline (read before), a table's column rules
    (two runs or more) are no heading's: neither is read as a heading's rule."""
    text = f"Closing words of the last part.\n\n----\n\n{BODY}\n"
    lay = layout(split_sentences(text))
    assert not lay.heading.any() and not lay.no_cut.any()


def test_lines_of_html_tags_are_no_titles_and_stay_with_what_they_open_or_close():
    """GitHub's folded sections: ``<details>`` stays with what it folds, ``</details>`` with what it
    closes, neither is a title line (each stands alone between blank lines); the ``<summary>`` line,
    which holds words, still titles what follows."""
    text = (f"{BODY}\n\n<details>\n\n<summary>Notes about releases</summary>\n\n{BODY}\n\n{BODY}\n\n</details>\n\n"
            f"----\n\n## Usage\n\n{BODY}\n")
    sents = split_sentences(text)
    lay = layout(sents)
    texts = [t.strip() for t in sents.texts()]
    o, c, s = texts.index("<details>"), texts.index("</details>"), texts.index("<summary>Notes about releases</summary>")
    assert not lay.heading[o] and not lay.heading[c] and lay.heading[s]
    assert lay.no_cut[o] and lay.lead_in[o]  # the opening tag over what it folds
    assert lay.no_cut[c - 1] and lay.lead_in[c - 1]  # the closing tag under what it closes
    assert lay.strength[o - 1] == SECTION  # the folded section (its summary a title) opens before the tag
    for max_size in (200, 300, 450):
        for chunk_ in chunk(text, max_size=max_size, levels=1).roots():
            part = text[chunk_.span.start : chunk_.span.end].strip()
            assert not part.endswith("<details>") and not part.startswith("</details>"), (max_size, part)


@pytest.mark.parametrize("anchor", ['<a id="ERR_ACCESS_DENIED"></a>', '<a name="install"></a>', "<span id='x'></span>"])
def test_an_anchor_line_over_a_heading_opens_the_section_with_it(anchor):
    """Node's documentation puts ``<a id="..."></a>`` over every heading: the anchor is no title, the
    section opens before it, and no chunk ends between the anchor and its heading."""
    text = f"{BODY}\n\n{anchor}\n\n### `ERR_ACCESS_DENIED`\n\n{BODY}\n\n{anchor}\n\n### Next\n\n{BODY}\n"
    sents = split_sentences(text)
    lay = layout(sents)
    a = _gap_after(text, anchor)
    assert not lay.heading[a] and lay.heading[a + 1]
    assert lay.no_cut[a] and lay.lead_in[a] and lay.strength[a] < SECTION  # (the section opens before the anchor)
    assert lay.strength[a - 1] == SECTION
    for max_size in (260, 400):  # (where anchor, heading and first sentence fit; past that the limit comes first)
        ends = {c.span.end for c in chunk(text, max_size=max_size, levels=1).roots()}
        assert int(sents.ends[a]) not in ends, max_size


@pytest.mark.parametrize(("line", "glued_after"), [
    ('<p align="center"><img src="logo.png" width="200"></p>', True),  # a logo: stays with what follows
    ("<table>", True), ("</td></tr>", False), ("</div>", False),
    ("<b>Bold words</b> and plain words after them.", None),  # words outside the tags: no line of tags
    ("<br>", None), ("<hr/>", None),  # a line break, a rule: they open and close nothing
])
def test_which_lines_are_tags_alone(line, glued_after):
    text = f"{BODY}\n\n{line}\n\n{BODY}\n"
    sents = split_sentences(text)
    lay = layout(sents)
    k = _gap_after(text, line)
    if glued_after is None:
        assert not lay.lead_in[k] and not lay.lead_in[k - 1]
    elif glued_after:
        assert lay.no_cut[k] and lay.lead_in[k] and not lay.no_cut[k - 1]
    else:
        assert lay.no_cut[k - 1] and lay.lead_in[k - 1] and not lay.no_cut[k]
    assert lay.strength[k - 1] >= PARAGRAPH or lay.no_cut[k - 1]


NODE_DOC = """# Globals

Some words about the objects that are available in every module of a program. {body}

## Class: `Buffer`

<!-- YAML
added: v0.1.103
changes:
  - version: v10.0.0
    description: The constructor is deprecated.
-->

<!-- type=global -->

* {{Function}}

Used to handle binary data. See the buffer section of the documentation for the details. {body}

<!--type=misc-->

## `console`

<!-- YAML
added: v0.1.100
-->

Used to print to stdout and stderr. See the console section. {body}
"""


def test_comments_between_a_heading_and_its_text_go_with_the_heading():
    """Node's API documents: a heading, a comment of metadata (``<!-- YAML ... -->``) and a comment line,
    then the text. The heading goes on over the comments, so no chunk is a heading and its comments alone;
    a comment line over a heading (``<!--type=misc-->``) opens the section with it."""
    text = NODE_DOC.format(body=BODY)
    sents = split_sentences(text)
    lay = layout(sents)
    texts = [t.strip() for t in sents.texts()]
    assert not any(lay.heading[k] for k, t in enumerate(texts) if t.startswith("<!--"))
    for k, t in enumerate(texts[:-1]):
        if t.endswith("-->"):
            assert lay.no_cut[k], t  # a comment (its closing line) stays with what follows it
    misc = texts.index("<!--type=misc-->")
    assert lay.strength[misc - 1] == SECTION and lay.no_cut[misc]
    for max_size in (200, 250, 400, 1000):  # (at 150 the heading and its metadata alone pass the limit)
        for c in chunk(text, max_size=max_size, levels=1).roots():
            part = text[c.span.start : c.span.end]
            if re.search(r"^#+ ", part, re.MULTILINE):  # no chunk of a heading and its comments alone
                assert re.sub(r"<!--.*?-->|^#+ [^\n]*", "", part, flags=re.MULTILINE | re.DOTALL).strip(), (max_size, part)


@pytest.mark.parametrize("text", ["``TERM``\n-->\n<details>\n\n", "Some words.\n\n</details>\n",
                                  "## A heading\n\n<!-- note\nsaid here\n-->\n", "### A title\n----\n"])
def test_markup_at_a_texts_edge_binds_nothing_in_the_next_text(text):
    """Texts chunked together (``chunk_many``) are each read as if alone: a line of tags or a heading's
    comment at one text's end holds nothing of the next text, and a closing tag at a text's start nothing
    of the one before."""
    sizes = (40, 20)
    alone = [(c.id, c.span) for c in chunk(text, sizes=sizes)]
    assert [[(c.id, c.span) for c in t] for t in chunk_many([text, text, "Plain words. More of them."], sizes=sizes)][:2] \
        == [alone, alone]

"""Source code read as code, not as a document's markup (found by chunking Python, JavaScript, C, Rust and
JSON files as a code index would): a statement alone between blank lines is no title, C's ``# define`` no
Markdown heading, a condition's ``|| x`` no table row, a block comment's `` * `` lines no list items —
each had put the strongest cut of its text before a line of code and glued the line to the code after it."""

from __future__ import annotations

import numpy as np
import pytest

from logichunk import chunk
from logichunk.text.line_kinds import fence_spans
from logichunk.text.sentences import BREAK_HARD, split_sentences
from logichunk.text.structure import SECTION, layout
from structure_helpers import split_both_ways


def _reading(text: str, line: str) -> tuple[bool, int]:
    """Whether the sentence that opens ``line`` is a heading, and the strength of the gap before it."""
    sents = split_sentences(text)
    lay = layout(sents)
    i = int(np.searchsorted(sents.starts, text.index(line), side="right")) - 1
    return bool(lay.heading[i]), int(lay.strength[i - 1])


@pytest.mark.parametrize("line", ["        return self._internal_event", "    const logFiles = []", 'branch="$1"',
                                  ":raises ValueError: when it is empty", "#endif", "__BEGIN_DECLS", 'T = TypeVar("T")',
                                  "    pass"])
def test_a_line_of_code_alone_between_blank_lines_is_no_title(line):
    text = f"x = compute(a, b)\ny = other(x)\n\n{line}\n\nz = finish(y)\nprint(z)\n"
    heading, before = _reading(text, line.strip())
    assert not heading and before < SECTION


@pytest.mark.parametrize("title", ["Results by Region", "Getting started with Node.js", "故乡（鲁迅，1921，节选）",
                                   "Section 2(a) Definitions"])
def test_a_title_line_alone_is_still_a_title(title):
    text = f"The first paragraph ends here, as paragraphs do.\n\n{title}\n\nThe text it titles goes on for a while.\n"
    heading, before = _reading(text, title)
    assert heading and before == SECTION


C_HEADER = ("/* If this bit is set, then character classes are supported.  They are:\n"
            "     [:alpha:], [:upper:], [:lower:],  [:digit:], [:alnum:], [:xdigit:],\n"
            "     [:space:], [:print:], [:punct:], [:graph:], and [:cntrl:].\n"
            "   If not set, then character classes are not supported.  */\n"
            "# define RE_CHAR_CLASSES (RE_BK_PLUS_QM << 1)\n\n")


def test_c_preprocessor_lines_are_no_headings():
    text = C_HEADER * 3 + "#  include <stddef.h>\n# ifdef __USE_GNU\n# endif\n"
    sents = split_both_ways(text)  # (the scalar and the vector splitter agree)
    assert not layout(sents).heading.any()
    assert not (sents.breaks == BREAK_HARD).any()
    md = "# Install\n\nRun the installer.\n\n# define a macro\n\nNot C: a title in lower case.\n"
    assert layout(split_sentences(md)).heading[0]  # (a Markdown heading is still one)
    tree = chunk(C_HEADER * 6, max_size=500, levels=1)
    for c in tree:
        t = tree.text_of(c)
        assert t.startswith("/*") and t.rstrip().endswith("<< 1)"), t  # each comment with its define


def test_a_conditions_bars_are_no_table_rows():
    code = ("        if let Some(attrs) = part.split('\\n').next() {\n"
            "            if !attrs.contains(\"rust\")\n"
            "                && (attrs.is_empty()\n"
            "                    || attrs.contains(\"should_panic\")\n"
            "                    || attrs.contains(\"edition\"))\n"
            "            {\n                acc.push_str(\"rust,\");\n            }\n        }\n")
    assert not (split_both_ways(code).breaks == BREAK_HARD).any()
    table = "Intro.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter.\n"
    assert (split_both_ways(table).breaks == BREAK_HARD).sum() == 2  # (before the first row, after the last)


def test_a_block_comment_is_one_block_whose_star_lines_are_no_items():
    comment = ("    /* The ob_type field must be initialized in the module init function\n"
               "     * to be portable to Windows without using C++.\n"
               "     * - the second line of it\n"
               "     */\n")
    text = "static int x;\n\n" + comment + "static PyTypeObject Xxo_Type = {\n    0,\n};\n"
    a = text.index("/*")
    assert (a, text.index("*/") + 2) in fence_spans(text)
    sents = split_sentences(text)
    lay = layout(sents)
    inside = (sents.starts > a) & (sents.starts < text.index("*/"))
    assert inside.sum() >= 2 and (lay.strength[np.flatnonzero(inside) - 1] <= 2).all()


PYPROJECT = """[build-system]
requires = ["hatchling>=1.6.0,<2"]
build-backend = "hatchling.build"

[project]
name = "urllib3"
description = "HTTP library with thread-safe connection pooling, file post, and more."
readme = "README.md"

[tool.pytest.ini_options]
xfail_strict = true
python_classes = ["Test", "*TestCase"]
markers = ["limit_memory", "requires_network"]

[[tool.mypy.overrides]]  # the tests
module = "tests.*"
disallow_untyped_defs = false
"""


def test_an_ini_or_toml_section_header_heads_its_section():
    # "[tool.pytest.ini_options]" had ended a chunk, cut from its keys; a bracketed line with no key under it
    # (a Markdown link alone, a lyric's "[Chorus]") is none
    from logichunk.text.structure import heading_lines

    sents = split_sentences(PYPROJECT)
    lay = layout(sents)
    assert [(lvl, t) for _, lvl, t in heading_lines(sents, lay)] == [
        (1, "build-system"), (1, "project"), (1, "tool.pytest.ini_options"), (2, "tool.mypy.overrides")]
    for line in ("[tool.pytest.ini_options]", "[[tool.mypy.overrides]]  # the tests"):
        heading, before = _reading(PYPROJECT, line)
        assert heading and before == SECTION
    for size in (60, 90, 140):
        tree = chunk(PYPROJECT, max_size=size, levels=1)
        for c in tree:
            last = tree.text_of(c).rstrip().splitlines()[-1]
            assert not last.startswith("["), (size, tree.text_of(c))
    for text in ("Some prose here.\n\n[Chorus]\nLa la la, and so on.\n", "Read this:\n\n[the docs](https://x.org)\nmore = text\n"):
        sents = split_sentences(text)
        assert not layout(sents).heading.any()


def test_a_block_of_hash_comments_is_no_run_of_headings():
    # textwrap.py's licence lines, a shell script's comment block: "#" lines of one depth right under each
    # other title nothing; a Markdown heading over text, or over a deeper heading, still is one
    from logichunk.text.structure import heading_lines

    code = ('"""Text wrapping and filling."""\n\n# Copyright (C) 1999-2001 Gregory P. Ward.\n'
            "# Copyright (C) 2002, 2003 Python Software Foundation.\n# Written by Greg Ward <gward@python.net>\n\n"
            "import re\n\n# rename ucf-conffile. This was mostly stolen from\n# a short discussion on debian-mentors\n"
            "handle() {\n    local x\n}\n")
    sents = split_sentences(code)
    assert heading_lines(sents, layout(sents)) == []
    md = "# Guide\n## Install\nRun the installer.\n\n# Usage\n\nCall it.\n"
    sents = split_sentences(md)
    assert [(lvl, t) for _, lvl, t in heading_lines(sents, layout(sents))] == [(1, "Guide"), (2, "Install"), (1, "Usage")]


GNU_C = """static void
Xxo_dealloc(XxoObject *self)
{
    Py_XDECREF(self->x_attr);
    PyObject_Free(self);
}

static PyObject *
Xxo_getattro(XxoObject *self, PyObject *name)
{
    if (self->x_attr != NULL) {
        PyObject *v = PyDict_GetItemWithError(self->x_attr, name);
        if (v != NULL) {
            return Py_NewRef(v);
        }
    }
    return PyObject_GenericGetAttr((PyObject *)self, name);
}

static int
Xxo_setattr(XxoObject *self, const char *name, PyObject *v)
{
    return PyDict_SetItemString(self->x_attr, name, v);
}
"""


def test_a_c_return_type_on_its_own_line_stays_with_the_function_name():
    # GNU's and CPython's style: "static int" over "Xxo_setattr(...)" over "{" (xxmodule.c had been cut between
    # the type and the name); a word over a line of prose that opens with a call is no return type
    sents = split_sentences(GNU_C)
    lay = layout(sents)
    texts = sents.texts()
    for i, t in enumerate(texts[:-1]):
        if t.strip() in ("static void", "static PyObject *", "static int"):
            assert lay.no_cut[i], t
    for size in (90, 140, 200, 300):  # (a type and its name's line fit: at 60 "static PyObject *" and its
        tree = chunk(GNU_C, max_size=size, levels=1)  # 46-character name line do not, and the type stands alone)
        for c in tree:
            assert tree.text_of(c).rstrip().splitlines()[-1].strip() not in ("static void", "static PyObject *", "static int")
    sents = split_sentences("Usage\nfoo(bar) is a function that does things.\n")
    assert not layout(sents).no_cut.any()


"""Lines of markup in a Markdown text: a rule right under a heading (its underline) and lines of HTML
tags alone (GitHub's ``<details>``, an anchor's ``<a id="x"></a>``). Neither may end a chunk with a
heading or leave markup alone in a chunk of its own, and a line of tags is never a title."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import chunk, chunk_many
from logichunk.text.line_kinds import fence_spans
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import LINE, PARAGRAPH, SECTION, layout
from structure_helpers import split_both_ways

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


def _readings(text: str):
    sents = split_both_ways(text)
    return sents, layout(sents), [t.strip() for t in sents.texts()]


def test_a_hash_line_indented_four_columns_is_code_not_a_heading():
    """Markdown reads ``#`` lines as headings at an indent of three columns at most; deeper they are code (a
    man page's root prompt, a comment in an example): no heading, and no block break between them."""
    text = ("     The following example connects two networks over the tunnel, provided that the server\n"
            "     allows it.\n\n     On the client:\n\n           # ssh -f -w 0:1 192.168.1.15 true\n"
            "           # ifconfig tun0 10.1.1.1 10.1.1.2 netmask 255.255.255.252\n\n     On the server:\n\n"
            "           # route add 10.0.50.0/24 10.1.1.1\n\n   # A heading at three columns\n\nIts text.\n")
    sents, lay, texts = _readings(text)
    assert [t for t, h in zip(texts, lay.heading, strict=True) if h] == ["# A heading at three columns"]
    k = texts.index("# ssh -f -w 0:1 192.168.1.15 true")
    assert lay.strength[k] <= LINE and lay.strength[k - 1] <= LINE  # (a lead-in's colon above: no cut)
    for max_size in (150, 200, 300):
        ends = {c.span.end for c in chunk(text, max_size=max_size, levels=1).roots()}
        assert int(sents.ends[k]) not in ends, max_size


def test_an_example_inside_a_sentence_is_no_title():
    """A man page's example indented inside a sentence that goes on around it (``the command`` /
    ``info grep`` / ``should give you access``) is no title line; a glossary's lines are not examples."""
    text = ("SEE ALSO\n       The full documentation for grep is maintained as a Texinfo manual.\n\n"
            "       If the info and grep programs are properly installed at your\n       site, the command\n\n"
            "              info grep\n\n       should give you access to the complete manual.\n")
    sents, lay, texts = _readings(text)
    assert not lay.heading[texts.index("info grep")]
    k = texts.index("info grep")
    for max_size in (200, 400):  # (the sentence and its example fit)
        ends = {c.span.end for c in chunk(text, max_size=max_size, levels=1).roots()}
        assert int(sents.ends[k - 1]) not in ends and int(sents.ends[k]) not in ends, max_size


def test_restructuredtext_directives_and_labels_open_what_follows():
    """``.. code-block:: cmake`` stays with its body (a one-line body is no title), ``.. _label:`` with the
    section it names."""
    text = ("Manipulation\n^^^^^^^^^^^^\n\nStore in an output variable a string with every match replaced.\n\n"
            ".. _TOLOWER:\n\n.. code-block:: cmake\n\n  string(TOLOWER <string> <output_variable>)\n\n"
            "Convert the string to lower characters.\n\n.. _`Regex Specification`:\n\nRegex Specification\n"
            "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\n\nThe following characters have special meaning.\n")
    sents, lay, texts = _readings(text)
    for line in (".. _TOLOWER:", ".. code-block:: cmake", ".. _`Regex Specification`:"):
        k = texts.index(line)
        assert lay.no_cut[k] and not lay.heading[k], line
    assert not lay.heading[texts.index("string(TOLOWER <string> <output_variable>)")]
    assert lay.heading[texts.index("Regex Specification")]
    for max_size in (150, 200, 400):  # (a label, its heading and the heading's first sentence fit)
        for c in chunk(text, max_size=max_size, levels=1).roots():
            assert not text[c.span.start : c.span.end].rstrip().endswith(("::", "cmake", ":")), (max_size, c)


def test_vim_help_examples_and_rules():
    """Vim help's ``>`` at a line's end introduces the indented example under it (no title, no cut
    between), and a rule of ``=`` right over a heading opens its section with it."""
    text = ("The basics are explained in the user manual.  This file describes the diff feature.\n\n"
            + "=" * 78 + "\n1. Starting diff mode\t\t\t\t\t*start-vimdiff*\n\n"
            "The easiest way to start editing in diff mode is with the \"vimdiff\" command.  If you prefer\n"
            "horizontal splits add the |-o| argument: >\n\n\tvimdiff -o file1 file2\n\n"
            "If you always prefer horizontal splits include \"horizontal\" in 'diffopt'.\n")
    sents, lay, texts = _readings(text)
    rule = texts.index("=" * 78)
    assert lay.no_cut[rule] and lay.strength[rule - 1] == SECTION and lay.heading[rule + 1]
    k = texts.index("vimdiff -o file1 file2")
    assert not lay.heading[k] and lay.no_cut[k - 1]
    for max_size in (200, 300, 600):  # (the rule, the heading and its first sentence fit)
        for c in chunk(text, max_size=max_size, levels=1).roots():
            part = text[c.span.start : c.span.end].strip()
            assert part != "=" * 78 and not part.endswith(">"), (max_size, part)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=" \t\nx#", min_size=1, max_size=16))
def test_the_vectorised_indent_reads_as_markdown_counts_columns(text):
    """``code_indented`` (four gathers) agrees with ``indent_columns`` (a tab to the next multiple of four)
    on every line's first character: four columns or more."""
    from logichunk.text.charclass import codepoints
    from logichunk.text.line_kinds import code_indented, indent_columns

    firsts = [i for i, ch in enumerate(text) if ch not in " \t\n" and not text[text.rfind("\n", 0, i) + 1 : i].strip()]
    if firsts:
        got = code_indented(codepoints(text), np.array(firsts, dtype=np.int64)).tolist()
        assert got == [indent_columns(text, i) >= 4 for i in firsts]


def _indent_by_the_line(text: str, at: int) -> int:
    """``indent_columns`` as it was written first: the line's text before ``at`` (quadratic on a text whose
    lines end in "\r" or U+2029, the search for a "\n" crossing the whole text each time)."""
    from logichunk.text.end_candidates import _NL_CHARS

    line = text[text.rfind("\n", 0, at) + 1 : at]
    line = line[max(line.rfind(c) for c in _NL_CHARS) + 1 :]
    wide = line.expandtabs(4)
    return len(wide) - len(wide.lstrip(" ")) if not line.strip() else 0


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=" \t\n\r\u2029\u3000\x0cx#", max_size=24), st.integers(0, 24))
def test_the_indent_walk_reads_what_the_line_search_read(text, at):
    from logichunk.text.line_kinds import indent_columns

    at = min(at, len(text))
    assert indent_columns(text, at) == _indent_by_the_line(text, at)


def test_restructuredtext_literal_blocks_are_code():
    """A line that ends with ``::`` over a blank line and lines indented deeper is a literal block: code, so a
    ``#`` line in it is no heading, it stays whole where it fits, and its ``::`` line stays with it."""
    from logichunk.text.line_kinds import literal_spans

    text = ("Assume role\n-----------\n\nIf you do not have MFA authentication required, then you only need to specify\n"
            "a role and a profile. The credentials are cached until they expire.\n\n"
            "Example configuration using ``source_profile``::\n\n  # In ~/.aws/credentials:\n  [development]\n"
            "  aws_access_key_id=foo\n\n  # In ~/.aws/config\n  [profile crossaccount]\n  source_profile=development\n\n"
            "The role is assumed with the credentials of the source profile.\n")
    a, b = text.index("::"), text.index("source_profile=development") + len("source_profile=development")
    assert literal_spans(text) == [(a, b, False)]
    sents, lay, texts = _readings(text)
    assert [t for t, h in zip(texts, lay.heading, strict=True) if h] == ["Assume role"]
    for max_size in (250, 300, 600):
        for c in chunk(text, max_size=max_size, levels=1).roots():
            assert not text.index("Example") < c.span.end < b, (max_size, c)  # whole, its "::" line with it


@pytest.mark.parametrize("text", [
    "Run this::\n  not indented after a blank line: no block\n",  # (no blank line after the "::" line)
    "Run this::\n\nNot indented: no block.\n",
    "The namespace is std::\n\nvector in C++, said plainly.\n",
    "x = a[::2]\ny = b[::-1]\n",
])
def test_no_literal_block_without_a_blank_line_and_a_deeper_indent(text):
    from logichunk.text.line_kinds import literal_spans

    assert literal_spans(text) == []


def test_a_literal_block_ends_at_the_first_line_no_deeper_than_its_mark():
    from logichunk.text.line_kinds import literal_spans

    text = "  Indented paragraph::\n\n      deeper code\n\n      more code\n    still deeper than the mark\n  back at the mark's indent\n"
    (a, b, closed), = literal_spans(text)
    assert text[a:b].endswith("still deeper than the mark") and a == text.index("::") and not closed
    text = "::\n\n    code line\n\nProse again.\n"
    assert literal_spans(text) == [(0, text.index("code line") + len("code line"), False)]


# ------------------------------------------------------------------ found on Chinese documents as written

def test_a_restructuredtext_title_may_open_with_inline_markup_and_be_underlined_with_plus():
    """pypinyin's changelog: ```0.53.0`_ (2024-09-15)`` over ``+++++``: a heading (it had ended chunks)."""
    entry = ("* **[New]** 内置对 pyinstaller 打包的支持，避免使用 pyinstaller 打包时需要额外处理的问题。\n"
             "* **[Improved]** 使用 `phrase-pinyin-data`_ v0.18.0 的词语拼音数据。\n\n\n")
    text = "".join(f"`0.5{k}.0`_ (2024-09-1{k})\n+++++++++++++++++++++++++\n\n{entry}" for k in range(6))
    sents = split_sentences(text)
    lay = layout(sents)
    titles = [k for k, t in enumerate(sents.texts()) if t.startswith("`0.5")]
    assert len(titles) == 6 and all(lay.heading[k] for k in titles)
    tree = chunk(text, max_size=300, levels=1)
    for c in tree:
        assert not tree.text_of(c).rstrip().endswith("+++"), tree.text_of(c)


def test_a_long_line_of_tildes_is_a_rule_not_a_fence():
    """vimtutor draws its lessons' rules in tildes: read as a fence, the lesson between two of them lost its
    headings and lead-ins. A fence's marks are three to a handful; sixteen or more alone are a rule."""
    rule = "~" * 78
    lesson = "\t\t\t第一讲第六节：编辑文件\n\n  1. 请按 :wq 保存文件并退出。\n\n  2. 在 shell 的提示符下输入命令：vim tutor\n\n"
    text = f"{rule}\n{lesson}{rule}\n{lesson}"
    assert fence_spans(text) == []
    code = "Run it:\n\n~~~\nmake install\n~~~\n\nDone.\n"
    assert len(fence_spans(code)) == 1


def test_a_directive_of_code_is_a_literal_block_kept_whole_where_it_fits():
    """reStructuredText's ``.. code-block:: python`` over its options and indented body is code, like a
    literal block: one block, whole where it alone fits the limit, even where its lead-in and it do not."""
    body = "".join(f"    >>> to_tone('zhong{k}')\n    'zhōng'\n" for k in range(5))
    text = ("可以通过辅助函数对标准拼音进行转换，得到不同风格的拼音。比如将 ``zhōng`` 转换为 ``zhong``，"
            "或者获取拼音中的声母或韵母数据：\n\n.. code-block:: python\n   :linenos:\n\n" + body + "\n更多辅助函数详见模块的文档。\n")
    a = text.index(".. code-block")
    spans = fence_spans(text)
    assert len(spans) == 1 and spans[0][0] == a and text[spans[0][1] - 7 : spans[0][1]] == "'zhōng'"
    assert len(text) - a > 120 and spans[0][1] - a < 260
    for size in (260, 300):
        tree = chunk(text, max_size=size, levels=1)
        edges = {c.span.start for c in tree}
        assert not any(a < e < spans[0][1] for e in edges), size


def test_a_fence_that_fits_is_whole_even_where_its_lead_in_and_it_do_not():
    """The issue's rule: a code fence is cut only between lines, and only where it alone exceeds the limit
    (a lead-in's bond to it breaks first)."""
    fence = "```python\n" + "".join(f"value_{k} = compute({k})\n" for k in range(8)) + "```\n"
    text = "The steps below load the data and compute every value the report needs, as follows:\n\n" + fence + \
        "\nThe report then reads the values back.\n"
    a = text.index("```")
    assert len(fence) < 250 < len(text) - 40
    tree = chunk(text, max_size=250, levels=1)
    assert not any(a < c.span.start < a + len(fence) for c in tree)


def test_a_link_or_an_address_alone_is_no_title():
    text = ("# Project Sponsor\n\n## Chatopera 云服务\n\n[https://bot.chatopera.com/](https://bot.chatopera.com/)\n\n"
            "Chatopera 云服务是一站式实现聊天机器人的云服务，按接口调用次数计费。\n\nhttps://example.org/docs\n\n"
            "更多信息请访问网站。\n")
    sents = split_sentences(text)
    lay = layout(sents)
    for k, t in enumerate(sents.texts()):
        if "://" in t:
            assert not lay.heading[k], t


@pytest.mark.parametrize("sep", ["~" * 78, "%", "=" * 40, "* * *"])
def test_a_title_under_a_separator_line_and_over_a_blank_line_is_a_heading(sep):
    """vimtutor's lessons open with a title under a line of tildes, a fortune file's sections under its
    ``%``: such a line stands alone as one between blank lines does (it had ended chunks)."""
    body = "启动系统之后，如果你没有安装 X 窗口系统和显示管理器，那么你就会看到字符登录界面。" * 2
    text = f"上一节的最后一段文字到这里结束。\n{sep}\n\t\t\t  第三讲小结\n\n  {body}\n{sep}\n1.1.1. shell 提示符\n\n  {body}\n"
    sents = split_sentences(text)
    lay = layout(sents)
    heads = [t.strip() for k, t in enumerate(sents.texts()) if lay.heading[k]]
    assert "第三讲小结" in heads and "1.1.1. shell 提示符" in heads
    tree = chunk(text, max_size=220, levels=1)
    assert len(tree) > 1
    for c in tree:
        assert not tree.text_of(c).rstrip().endswith(("第三讲小结", "shell 提示符")), tree.text_of(c)


def test_a_heading_and_its_metadata_comment_stay_together_with_a_block_that_fits():
    """A heading over a ``<!-- YAML ... -->`` of metadata (Node's API documents) that fits the limit alone but
    not with the heading: the comment is a block kept whole, and it is also the heading's run, so neither the heading nor the comment is left in a chunk of its own (the first
    version of the block rule glued the comment apart from the heading's run: 13 of Node's headings stood
    alone at 1000 characters)."""
    text = ("### `store.copy(sourcePath, targetPath, done)`\n\n<!-- YAML\nadded: v0.2.14\nchanges:\n"
            "  - version: v19.0.0\n    pr-url: https://example.org/project/pull/51234\n"
            "    description: Handing over a broken `done` function to the `done` parameter\n"
            "                 raises `ERR_BAD_ARGUMENT_KIND` where it raised\n                 `ERR_BAD_DONE`.\n"
            "  - version: v11.0.0\n    pr-url: https://example.org/project/pull/22345\n"
            "    description: The `done` parameter must be given from now on. Leaving\n"
            "                 it out raises a `TypeError` when the call is made.\n"
            "  - version: v8.2.0\n    pr-url: https://example.org/project/pull/13456\n"
            "    description: The `sourcePath` and `targetPath` parameters may be WHATWG\n"
            "                 `URL` objects with the `file:` scheme. That support is still\n"
            "                 a *trial* for now.\n"
            "  - version: v8.0.0\n    pr-url: https://example.org/project/pull/9876\n"
            "    description: The `done` parameter must be given from now on. Leaving\n"
            "                 it out prints a warning that names it DEP0042.\n-->\n\n"
            "* `sourcePath` {string|Buffer|URL}\n* `targetPath` {string|Buffer|URL}\n* `done` {Function}\n"
            "  * `err` {Error}\n\nCopies the file at `sourcePath` to `targetPath`. See the POSIX\n"
            "copy(1) manual for the details. Nothing but a possible\nerror is handed to the done function.\n\n")
    assert text.index("* `sourcePath`") - text.index("<!--") < 1000 < text.index("* `sourcePath`")  # (it fits alone)
    for t in (text, text * 3):
        tree = chunk(t, max_size=1000, levels=1)
        for c in tree:
            body = re.sub(r"<!--.*?-->|^#{1,6} [^\n]*$", "", tree.text_of(c), flags=re.S | re.M)
            assert body.strip(), tree.text_of(c)[:80]


def test_a_heading_over_a_fence_keeps_its_first_lines_rather_than_stand_alone():
    """Node's N-API reference: ``#### `napi_create_typedarray``` over a short ``<!-- YAML ... -->`` and a C
    fence that fits the limit alone but not with them. The fence is kept whole only where no heading's bond
    reaches into it: here the heading keeps the fence's first lines, and no chunk is a heading and its
    metadata alone."""
    fence = "```c\n" + "".join(f"napi_status napi_call_{k}(napi_env env, napi_value arg_{k});\n" for k in range(6)) + "```\n\n"
    section = ("#### `napi_create_typedarray`\n\n<!-- YAML\nadded: v8.0.0\nnapiVersion: 1\n-->\n\n" + fence
               + "Returns `napi_ok` if the API succeeded.\n\n")
    assert len(fence) < 400 < section.index("Returns")
    tree = chunk(section * 3, max_size=400, levels=1)
    for c in tree:
        body = re.sub(r"<!--.*?-->|^#{1,6} [^\n]*$", "", tree.text_of(c), flags=re.S | re.M)
        assert body.strip(), tree.text_of(c)[:80]

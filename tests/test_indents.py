"""What indentation says, read by every chunker. A line's indent goes with its line: every chunker cuts
between two sentences at their *seam* (:meth:`~logichunk.text.sentences.SentenceSpans.seams`) — the
start of the next sentence's line when a line break lies between them — so no chunk ends in the indent
of the line that opens the next one, and code, nested items, literal blocks and Chinese paragraphs'
full-width indents keep their first line's indent (before, a cut there left it at the end of the chunk
before). A line that ends with a colon introduces the deeper lines under it, and a blank line before a
line indented less than the one over it closes a block."""

from __future__ import annotations

import unicodedata

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk import chunk, chunk_many, segment
from logichunk.chunkers.dispatch import chunk_by
from logichunk.models.embed_hash import HashEmbedder
from logichunk.text.sentences import split_lines, split_sentences
from logichunk.tree import check_tree

LINE_ENDS = "\n\r\x0b\x0c\x85\u2028\u2029"


def _indent(c: str) -> bool:
    return c == "\t" or unicodedata.category(c) == "Zs"


def _seam(text: str, start_before: int, start: int) -> int:
    """The seam by its definition, character by character: back from the next sentence's first
    character over its line's indent; at a line start, there; else the sentence's first character."""
    r = start
    while r > start_before and _indent(text[r - 1]):
        r -= 1
    return r if r > start_before and text[r - 1] in LINE_ENDS else start


def _ends_in_an_indent(text: str, end: int) -> bool:
    """Whether ``text[:end]`` ends with a line break and then only the indent of a line that goes on
    past ``end`` to some text."""
    r = end
    while r > 0 and _indent(text[r - 1]):
        r -= 1
    e = end
    while e < len(text) and _indent(text[e]):
        e += 1
    return r < end and r > 0 and text[r - 1] in LINE_ENDS and e < len(text) and text[e] not in LINE_ENDS


_PIECES = st.sampled_from(
    ["The cat sat. ", "It rained! ", "Why? ", "中文句子。", "第二句！", "\n", "\n\n", "\r\n", "\u2028", "\x0c",
     "    ", "  ", "\t", "\u3000\u3000", "\u00a0", "x = 1", "# note", "- item", "1. step", "```\n", "| a | b |",
     "def f():", "return 2", "word ", "Dr. Smith came. "])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_property_seams_are_the_line_starts_of_indented_sentences(text):
    for ss in (split_sentences(text), split_lines(text)):
        seams = ss.seams()
        assert seams.size == max(len(ss) - 1, 0)
        want = [_seam(text, int(ss.starts[i]), int(ss.starts[i + 1])) for i in range(len(ss) - 1)]
        assert seams.tolist() == want
        starts, ends = ss.seam_spans()
        if len(ss):
            assert starts[0] == 0 and ends[-1] == len(text)
            assert np.array_equal(starts[1:], ends[:-1]) and bool((ends > starts).all())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=60).map("".join), st.sampled_from([12, 30, 60]))
def test_property_no_chunk_ends_in_the_next_lines_indent(text, size):
    """(But where tier 4 cuts a line too long for the limit, indent and all: that cut is the best break
    in the back half of its window, which may lie inside the indent.)"""
    tree = chunk(text, max_size=size, levels=2)
    check_tree(tree)
    for c in tree:
        if c.method != "forced":
            assert not _ends_in_an_indent(text, c.span.end), (text, c.span)


CODE = '''def area(shape):
    """The area of a shape."""
    if shape.kind == "circle":
        return 3.14159 * shape.r ** 2
    if shape.kind == "square":
        return shape.side ** 2
    raise ValueError(shape.kind)


class Shape:
    def __init__(self, kind, **sizes):
        self.kind = kind
        for name, value in sizes.items():
            setattr(self, name, value)
'''


def test_code_chunks_open_on_whole_lines_with_their_indent():
    tree = chunk(CODE, max_size=120, levels=2)
    check_tree(tree)
    assert len(tree) > 3
    for c in tree:
        if c.span.start:
            assert CODE[c.span.start - 1] == "\n", tree.text_of(c)
        assert tree.text_of(c).rstrip("\n").splitlines()[0] == CODE.splitlines()[CODE.count("\n", 0, c.span.start)]


ZH = ("\u3000\u3000话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。\n"
      "\u3000\u3000汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。\n"
      "\u3000\u3000推其致乱之由，殆始于桓、灵二帝。桓帝禁锢善类，崇信宦官。\n")


def test_chinese_paragraphs_keep_their_full_width_indent():
    tree = chunk(ZH, max_size=50, levels=1)
    assert len(tree) >= 3
    opened = [tree.text_of(c) for c in tree if c.span.start and ZH[c.span.start - 1] == "\n"]
    assert opened and all(t.startswith("\u3000\u3000") for t in opened)
    assert not any(tree.text_of(c).endswith("\u3000") for c in tree)


def test_every_chunker_cuts_at_seams():
    """The cascade, the texts chunked together, parent-child, the topics and the flat baselines that
    cut at sentences: no chunk ends in the indent of the next one's first line."""
    docs = [CODE * 3, ZH * 3, "Intro line.\n\n    $ pyenv versions\n      system\n    * 2.7.6\n" * 6]
    emb = HashEmbedder()
    cut = np.zeros(6, int)  # per chunker: the documents it cut
    for text in docs:
        trees = [chunk(text, max_size=150), chunk_many([text, text], max_size=150)[1], segment(text, topics=3),
                 segment(text, units="lines", topics=3), chunk_by("parent-child", text, max_size=300, embedder=emb),
                 chunk_by("cliff", text, max_size=150, embedder=emb)]
        for k, tree in enumerate(trees):
            check_tree(tree)
            cut[k] += len(tree) > 1
            for c in tree:
                assert not _ends_in_an_indent(text, c.span.end), (tree.stats, tree.text_of(c))
    assert cut.min() >= 1, cut


def test_texts_chunked_together_keep_their_edges_and_equal_each_alone():
    texts = ["A paragraph that ends in a line of spaces.\n    ", CODE, "\n    indented opening line\n" + CODE]
    together = chunk_many(texts, max_size=100)
    for t, tree in zip(texts, together, strict=True):
        alone = chunk(t, max_size=100)
        assert [(c.id, c.span.start, c.span.end) for c in tree] == [(c.id, c.span.start, c.span.end) for c in alone]
        assert "".join(tree.text_of(c) for c in tree.roots()) == t


def test_a_colon_over_a_deeper_line_is_read_at_the_lines_own_end():
    """A line that ends with a colon introduces the deeper lines under it (Python's ``def`` over its body,
    YAML's key over its mapping, ``Options:`` over its items): the layout reads the colon at the line's
    own end, before the next line's indent (a sentence's span carries that indent; read from there, a
    colon four or more columns back was missed). Over a line indented deeper the bond is a heading's, not a
    lead-in's (the first a limit breaks: below level 1 every ``def main():`` and ``else:`` stood cut from its
    body)."""
    from logichunk.text.structure import layout

    for text, line in [("def area(shape):\n        return shape.w * shape.h\n", 0),
                       ("x = 1\nserver:\n      port: 80\n      host: example.org\n", 1),
                       ("Options:\n\t-v   say more\n\t-q   say less\n", 0)]:
        sents = split_sentences(text)
        lay = layout(sents)
        assert lay.no_cut[line] and not lay.lead_in[line], (text, sents.texts())
    plain = split_sentences("The result:\nis here.\nNothing: more\n        indented after it.\n")
    assert not layout(plain).lead_in[2]  # (a colon inside a line introduces nothing)


def test_a_blank_line_before_a_shallower_line_closes_a_block():
    """The end of a function's body, of a method's, of a C function at its closing brace, of a quoted
    passage: a block's break (a cut there is worth more than at a paragraph's), read against the first line
    of the paragraph over the blank line; a blank line between two lines at one indent, before a deeper
    one, or after an inner block ("    }" over "    return 0;") stays a paragraph's."""
    from logichunk.text.structure import BLOCK, PARAGRAPH, layout

    def after(text: str) -> dict[str, int]:
        sents = split_sentences(text)
        strength = layout(sents).strength
        lines = [t.strip() for t in sents.texts()]
        return {lines[i]: int(strength[i]) for i in range(len(lines) - 1)}

    py = after("class Shape:\n    def area(self):\n        x = 1\n\n        return x\n\n    def size(self):\n"
               "        return 2\n\n\ndef main():\n    pass\n")
    assert py["x = 1"] == PARAGRAPH  # (a deeper line follows)
    assert py["return x"] == BLOCK and py["return 2"] == BLOCK
    c = after("int f(void)\n{\n    if (x) {\n        y();\n    }\n\n    return 0;\n}\n\nint g(void)\n{\n    return 1;\n}\n")
    assert c["}"] == BLOCK and c["return 1;"] != BLOCK
    assert list(c.values()).count(BLOCK) == 1  # (the inner "}" over "return 0;" stays a paragraph's)
    prose = split_sentences("First paragraph here.\n\nSecond one.\n\n    A quoted line.\n\nBack to the text.\n")
    assert layout(prose).strength.tolist()[:3] == [PARAGRAPH, PARAGRAPH, BLOCK]


def test_lines_of_brackets_stay_with_what_they_open_or_close():
    """A closing bracket's line closes the line over it (JSON's "]" / "}" / "},", C's "}"), an opening one
    alone (Allman's "{") goes on from the line over it into the one under it: no chunk opens with a run of
    closing brackets, nor ends with a bare opening one."""
    import json

    data = {"service": {f"action{k}": {"request": {"operation": f"Op{k}", "params": [{"target": "Arn", "source":
                                                                                        "input"}]}} for k in range(30)}}
    text = json.dumps(data, indent=2)
    for size in (200, 500):
        tree = chunk(text, max_size=size, levels=1)
        for c in tree:
            head = tree.text_of(c).lstrip()
            assert not head.startswith(("]", "}")), head[:40]
    allman = "".join(f"static int f{k}(int x)\n{{\n    if (x > {k})\n    {{\n        return {k};\n    }}\n    return 0;\n}}\n"
                     for k in range(12))
    tree = chunk(allman, max_size=120, levels=1)
    for c in tree:
        t = tree.text_of(c).rstrip()
        assert not t.endswith("{") and not t.lstrip().startswith("}"), t


def test_the_service_curves_read_the_cuts_at_the_seams():
    """The page's curves put each gap where a chunker cuts it, so every cut of an indented text lies on a
    gap of the series and the weakest cut taken is drawn (read at the sentences' ends, the cuts before an
    indented line matched no gap)."""
    from logichunk.service.curves import text_curves

    text = CODE * 4
    tree = chunk(text, max_size=200, levels=1)
    cuts = [c.span.start for c in tree if c.span.start]
    assert any(text[c] == " " for c in cuts)  # (a cut before an indented line: the case to read)
    series = {s["name"]: s for s in text_curves(text, cuts=cuts)["series"]}
    assert set(cuts) <= set(series["entropy"]["x"])
    assert any(t["label"] == "weakest cut taken" for t in series["entropy"]["thresholds"])

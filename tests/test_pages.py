"""Page furniture (a PDF's text, a printed manual, an RFC): running headers, footers and page numbers at
form feeds are lifted out of the text's logic: never a heading, always with the text before them, and
the break after them reads as the break before them (a sentence going on over the page is not cut)."""

from __future__ import annotations

import textwrap

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import chunk, chunk_many
from logichunk.text.pages import MIN_REPEATS, furniture_lines
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import LINE, SECTION, layout
from structure_helpers import split_both_ways

LINES = [
    "The valve opens when the pressure in the {who} chamber rises above the set point.\n",
    "Each spring of the {who} unit is checked by hand before the housing is closed.\n",
    "Operators log every {who} reading in the book kept beside the panel.\n",
    "A reading outside the band is reported to the {who} shift lead at once.\n",
]
WHO = ["north", "south", "east", "west", "upper", "lower", "inner", "outer"]


def body(k: int, lines: list[str] = LINES) -> str:
    """A page's text: the same lines on every page would be a running text of their own."""
    return "".join(t.format(who=WHO[k % len(WHO)]) for t in lines)


def paginate(pages: list[str], header: str | None = "Acme Valve Manual", numbers: bool = True,
             header_numbers: str | None = None) -> tuple[str, list[str]]:
    """Pages joined by form feeds, each with a running header (``header_numbers``: a template whose ``{p}``
    is the page) over its text and its number under it, as ``pdftotext`` lays them out; and the furniture
    lines put at the page breaks."""
    out, furniture = [], []
    for k, body in enumerate(pages, start=1):
        head = header_numbers.format(p=k) if header_numbers else header
        page = body
        if head is not None and k > 1:
            page = head + "\n" + page
            furniture.append(head)
        if numbers and k < len(pages):
            page = page + str(k)
            furniture.append(str(k))
        out.append(page)
    return "\f".join(out), furniture


def found(text: str) -> list[str]:
    return [text[s:e] for s, e in furniture_lines(text)]


def test_running_headers_and_page_numbers_are_found():
    text, furniture = paginate([body(k) for k in range(5)])
    assert found(text) == furniture
    assert found(text).count("Acme Valve Manual") == 4 >= MIN_REPEATS


def test_one_form_feed_is_no_pagination():
    """A single form feed separates sections in many plain-text files: nothing is furniture."""
    text, _ = paginate([body(k) for k in range(2)])
    assert text.count("\f") == 1
    assert found(text) == []


def test_a_line_met_at_too_few_page_breaks_is_text():
    """A line repeated at only two page breaks (and no page's number) is no running header."""
    text, _ = paginate([body(k) for k in range(3)], header="Safety Notes", numbers=False)
    assert found(text) == []
    text, _ = paginate([body(k) for k in range(4)], header="Safety Notes", numbers=False)
    assert found(text) == ["Safety Notes"] * 3


def test_a_running_header_with_the_page_number():
    """``Chapter 2: Widgets 3`` over ``... 4``: a line that changes only in a number that follows the page
    is a header, even where its words are met on two pages only, when the page numbers of other edges
    follow the page by the same constant."""
    pages = [body(k) for k in range(8)]
    heads = [None, None, "Chapter 1: Widgets 3", "Chapter 1: Widgets 4", None, "Chapter 2: Gadgets 6",
             "Chapter 2: Gadgets 7", None]
    text = ""
    for k, text_k in enumerate(pages, start=1):
        page = (heads[k - 1] + "\n" if heads[k - 1] else "") + text_k
        if heads[k - 1] is None and k > 1:
            page = f"{k}\n" + page  # a chapter's first page: its number at the top
        text += page + ("\f" if k < len(pages) else "")
    got = found(text)
    assert [g for g in got if g.startswith("Chapter")] == [h for h in heads if h]
    assert sorted(g for g in got if g.isdigit()) == ["2", "5", "8"]


def test_a_line_met_at_a_few_page_breaks_far_apart_is_text():
    """A code comment closing three pages far apart, a section's label opening three pages under the
    running header: text. A running line runs (every page, or every other one)."""
    pages = [body(k) for k in range(12)]
    for k in (1, 5, 9):
        pages[k] += "Hash some more data.\n"
    for k in (2, 3, 4):  # under the header: met at three breaks in a row, but at fewer than half of them
        pages[k] = "Possible return values:\n" + pages[k]
    text, furniture = paginate(pages, numbers=False)
    assert found(text) == furniture == ["Acme Valve Manual"] * 11
    pages = [body(k) + ("Left page\n" if k % 2 else "Right page\n") for k in range(8)]
    assert found("\f".join(pages)) == ["Right page", "Left page"] * 3 + ["Right page"]


def test_a_line_the_whole_text_runs_under_the_page_number_is_furniture():
    pages = [body(k) + "Confidential\n" + str(k + 1) for k in range(6)]
    text = "\f".join(pages)
    assert found(text) == [x for k in range(5) for x in ("Confidential", str(k + 1))]


def test_a_body_line_whose_number_meets_the_page_once_is_text():
    """``See table 2 for the limits.`` ending printed page 2 and ``See table 7 ...`` ending page 4: one
    template at two page breaks, and 2 is page 2's number, but the number does not follow the page."""
    pages = [body(k) for k in range(5)]
    pages[1] += "See table 2 for the limits.\n"
    pages[3] += "See table 7 for the limits.\n"
    text, furniture = paginate(pages, header=None)
    assert found(text) == furniture == ["1", "2", "3", "4"]


def test_a_chapter_heading_at_the_top_of_its_page_is_no_furniture():
    """A chapter opening a page, its number its own (not the page's), stays the chapter's heading."""
    pages = []
    for k in range(1, 7):
        pages.append((f"Chapter {k // 2 + 1}\n" if k % 2 == 0 else "") + body(k))
    text, _ = paginate(pages)
    assert not [g for g in found(text) if g.startswith("Chapter")]
    sents = split_sentences(text)
    lay = layout(sents)
    heads = [i for i in range(len(sents)) if sents.texts()[i].startswith("Chapter")]
    assert heads and all(lay.heading[i] for i in heads)


def _index(sents, prefix: str) -> int:
    return next(i for i, t in enumerate(sents.texts()) if t.lstrip("\f").startswith(prefix))


def test_furniture_is_no_heading_and_stays_with_the_text_before_it():
    text, _ = paginate([body(k) for k in range(4)])
    sents = split_both_ways(text)
    lay = layout(sents)
    for i, t in enumerate(sents.texts()):
        if t.strip() in ("Acme Valve Manual", "1", "2", "3"):
            assert not lay.heading[i]
            assert lay.no_cut[i - 1]  # no chunk starts with a page's furniture


def test_a_sentence_going_on_over_the_page_is_not_cut():
    """``... found in a`` | page number | running header | ``directory is added ...``: one sentence."""
    first = body(0) + "Information found in each of these folders is added to the information found in a\n"
    second = "directory earlier in the list, so later folders win.\n" + body(1)
    text, _ = paginate([first, second, body(2), body(3)])
    sents = split_both_ways(text)
    assert "Acme Valve Manual\n" in sents.texts()  # never joined to the wrapped text after it
    lay = layout(sents)
    a, b = _index(sents, "Information found"), _index(sents, "directory earlier")
    assert lay.no_cut[a:b].all()
    for max_size in (200, 300, 400):  # the sentence and the furniture in it: 155 characters
        tree = chunk(text, max_size=max_size, levels=1)
        starts = {c.span.start for c in tree.leaves()}
        assert not starts & set(sents.starts[a + 1 : b + 1].tolist())


def test_a_chinese_sentence_going_on_over_the_page_is_not_cut():
    """``第 3 页`` footers and a Chinese running header; a sentence broken by the page goes on in CJK."""
    places = ["北京", "上海", "广州", "深圳", "杭州"]
    pages = []
    for k, place in enumerate(places):
        page = f"{place}的阀门每天由值班长检查一次。操作员把每次读数记在面板旁的本子上。\n"
        if k == 1:
            page = "门的读数也记在同一个本子上。\n" + page
        page = ("阀门维护手册\n" if k else "") + page
        if k == 0:
            page += "值班结束以前，北京的操作员还要检查备用阀\n"
        pages.append(page + f"第 {k + 1} 页\n")
    text = "\f".join(pages)
    assert [text[s:e] for s, e in furniture_lines(text)] == [
        x for k in range(4) for x in (f"第 {k + 1} 页", "阀门维护手册")]
    sents = split_both_ways(text)
    lay = layout(sents)
    a, b = _index(sents, "值班结束以前"), _index(sents, "门的读数")
    assert b == a + 3 and lay.no_cut[a:b].all()
    tree = chunk(text, max_size=120, levels=1)
    assert int(sents.starts[b]) not in {c.span.start for c in tree.leaves()}


def test_a_heading_at_the_top_of_a_page_still_opens_its_section():
    text, _ = paginate([body(0), "3.2 Maintenance\n" + body(1), body(2), body(3)])
    sents = split_both_ways(text)
    lay = layout(sents)
    h = _index(sents, "3.2 Maintenance")
    assert lay.heading[h] and lay.strength[h - 1] == SECTION and not lay.no_cut[h - 1]
    assert lay.no_cut[h - 3 : h - 1].all()  # the page number and the running header go with the page before
    tree = chunk(text, max_size=300, levels=1)
    assert int(sents.starts[h]) in {c.span.start for c in tree.leaves()}


def test_the_break_after_furniture_is_the_break_before_it():
    """A page that ends a sentence, the next opening a new one: a line break, not the form feed's paragraph
    nor the blank line under the running header."""
    text, _ = paginate(["\n" + body(k) for k in range(4)])
    sents = split_both_ways(text)
    lay = layout(sents)
    h = [i for i, t in enumerate(sents.texts()) if t.strip() == "Acme Valve Manual"]
    assert all(lay.strength[i] <= LINE for i in h)


def test_a_running_header_as_wide_as_the_text_is_kept_apart():
    """An RFC's header line spans the wrap width; the sentence going on under it is never joined to it."""
    head = "RFC 9999                    Valve Operating Manual                May 2026"
    pages = []
    for k in range(4):
        page = textwrap.fill(" ".join(line.strip() for line in body(k).splitlines()), 72) + "\n"
        if k < 3:
            page += "The valves of this kind are all checked by hand in the\n" + f"{k + 1}\n"
        if k:
            page = head + "\n" + "presence of the shift lead before the housing is closed again.\n" + page
        pages.append(page)
    text = "\f".join(pages)
    sents = split_both_ways(text)
    assert sents.texts().count(head + "\n") == 3
    lay = layout(sents)
    for i in [i for i, t in enumerate(sents.texts()) if t.startswith("presence")]:
        assert lay.no_cut[i - 3 : i].all()  # "... by hand in the" | "1" | header | "presence of ...": one sentence


def test_furniture_under_the_last_line_of_a_page_is_furniture_only_under_furniture():
    """A bare number is a page's number at the page's edge, not over a line of text there."""
    pages = [body(k) for k in range(5)]
    pages[2] += "Units counted on the line:\n7\nThe count is checked each day.\n"
    text, furniture = paginate(pages, numbers=False)
    assert found(text) == furniture == ["Acme Valve Manual"] * 4


def test_a_heading_ending_a_page_over_a_running_footer_leaves_the_footer_no_heading():
    pages = [body(k) + "Acme Valve Manual\n" for k in range(5)]
    pages[2] = body(2) + "3.2 Maintenance\n" + "Acme Valve Manual\n"
    text = "\f".join(pages)
    assert found(text).count("Acme Valve Manual") == 4  # (the last page's is no page break's)
    sents = split_both_ways(text)
    lay = layout(sents)
    for i, t in enumerate(sents.texts()):
        if t.startswith("Acme"):
            assert not lay.heading[i]


def test_a_numbered_heading_with_a_full_stop_is_one_sentence():
    """``2.2. The source XML files``: the section number's full stop ends no sentence (PDF text, plain-text
    manuals), so the line is read as a heading."""
    text = "Some text ends here.\n2.2. The source XML files\nEach application installs one file. In 2019. Then more.\n"
    sents = split_both_ways(text)
    assert "2.2. The source XML files\n" in sents.texts()
    assert "In 2019. " in sents.texts()  # a number ending a sentence inside a line still ends it
    lay = layout(sents)
    assert lay.heading[sents.texts().index("2.2. The source XML files\n")]
    # a decimal that a hard wrap put at a line's start ends its sentence, and so does a sentence's line
    wrapped = "a coefficient greater than or equal to\n0.75. Quality spots were retained based on the\nmean.\n"
    assert split_both_ways(wrapped).texts()[1] == "0.75. "
    assert "A short one.\n" in split_both_ways("Intro.\n2.2. A short one.\n").texts()
    long_line = "Intro.\n2.2. " + "The parser reads each token " * 4 + "and then\ngoes on.\n"
    assert split_both_ways(long_line).texts()[1] == "2.2. "  # over a heading's length: an item's number
    assert "2.2. The source XML files\n" in split_both_ways("Intro\n\n2.2. The source XML files\nText.\n").texts()


page_bodies = st.lists(st.lists(st.sampled_from([*LINES, "3.1 Setup of the {who} unit\n", "Check the {who} seal before\n",
                                                 "and after each {who} test run.\n"]), min_size=1, max_size=6),
                       min_size=1, max_size=7).map(lambda pages: [body(k, lines) for k, lines in enumerate(pages)])


@settings(max_examples=150, deadline=None)  # 300 took ~11 s of the suite on two cores
@given(page_bodies, st.sampled_from(["Acme Valve Manual", "RFC 9999   Valves   May 2026", None]),
       st.booleans(), st.sampled_from([100, 200, 400]))
def test_paginated_texts_tile_and_no_chunk_starts_with_furniture(bodies, header, numbers, max_size):
    text, furniture = paginate(bodies, header=header, numbers=numbers)
    sents = split_both_ways(text)
    got = furniture_lines(text)
    if text.count("\f") < 2:
        assert got == []
    elif len(bodies) - 1 >= MIN_REPEATS or header is None:
        assert [text[s:e] for s, e in got] == furniture
    else:  # a header met at too few page breaks is text; the page numbers are still found
        assert [text[s:e] for s, e in got] == [f for f in furniture if f != header]
    tree = chunk(text, max_size=max_size, levels=2)
    assert "".join(tree.text_of(c) for c in tree.level(1)) == text
    lay = layout(sents)
    furn = {int(sents.starts[i]) for i in range(len(sents)) if any(s <= sents.starts[i] < e for s, e in got)}
    assert not lay.heading[[i for i in range(len(sents)) if int(sents.starts[i]) in furn]].any()
    # a chunk starts with furniture only when the chunk before it has no room for it
    lengths = {int(sents.starts[i]): len(sents.texts()[i]) for i in range(len(sents))}
    chunks = list(tree.level(1))
    for before, c in zip(chunks, chunks[1:], strict=False):
        if c.span.start in furn:
            assert before.span.end - before.span.start + lengths[c.span.start] > max_size


@settings(max_examples=100, deadline=None)
@given(st.lists(page_bodies, min_size=1, max_size=3))
def test_paginated_texts_in_one_pass_are_one_call_each(batches):
    texts = [paginate(b)[0] for b in batches]
    many = chunk_many(texts, max_size=200, levels=2)
    for text, tree in zip(texts, many, strict=True):
        one = chunk(text, max_size=200, levels=2)
        assert [(c.id, c.span) for c in tree] == [(c.id, c.span) for c in one]


def test_furniture_lines_are_cheap_without_form_feeds():
    assert furniture_lines("no pages here\n" * 1000) == []
    assert np.asarray(furniture_lines("")).size == 0

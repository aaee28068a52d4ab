"""The shared boundary rules: choosing cuts, fitting sizes, splitting inside one sentence."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk import boundaries as bd
from logichunk.boundaries import local as bd_local
from logichunk.errors import InputError
from logichunk.text.measure import Meter


def test_peaks_with_min_drop():
    s = np.array([0.1, 0.5, 0.45, 0.9, 0.1, 0.3])
    assert bd.peaks(s).tolist() == [False, True, False, True, False, True]
    # 0.5 rises 0.4 over its left neighbour, 0.3 rises only 0.2 over its neighbour
    assert bd.peaks(s, min_drop=0.3).tolist() == [False, True, False, True, False, False]


def test_minima_is_mirror_of_peaks():
    v = np.array([5.0, 2.0, 4.0, 4.5, 1.0, 3.0])
    assert bd.minima(v).tolist() == [False, True, False, False, True, False]
    assert bd.minima(v, min_drop=2.5).tolist() == [False, True, False, False, True, False]
    assert bd.minima(v, min_drop=3.1).tolist() == [False, False, False, False, True, False]


def test_top_k_and_above():
    s = np.array([0.2, 0.9, 0.5, 0.9])
    assert bd.top_k(s, 2).tolist() == [False, True, False, True]
    assert bd.above(s, 0.5).tolist() == [False, True, True, True]
    assert not bd.top_k(s, 0).any()


def test_size_limits_validation():
    with pytest.raises(InputError):
        bd.SizeLimits(0)
    with pytest.raises(InputError):
        bd.SizeLimits(100, target=200)
    with pytest.raises(InputError):
        bd.SizeLimits(100, min_size=101)


def test_fit_cuts_at_candidates_and_merges_to_target():
    sizes = np.full(7, 100)
    scores = np.array([0.1, 0.5, 0.2, 0.9, 0.1, 0.3])
    res = bd.fit(sizes, scores, bd.SizeLimits(300), bd.peaks(scores))
    # candidates at gaps 1, 3, 5 -> runs 200/200/300 after merging the weakest (gap 5) into a 300 run
    assert res.cuts.tolist() == [1, 3]
    assert res.oversized.size == 0


def test_fit_splits_run_without_candidates_at_best_gap():
    sizes = np.full(6, 100)
    scores = np.array([0.1, 0.2, 0.8, 0.3, 0.1])
    res = bd.fit(sizes, scores, bd.SizeLimits(300), np.zeros(5, dtype=bool))
    assert 2 in res.cuts.tolist()
    assert res.rank.tolist() == [1] * res.cuts.size


def test_fit_isolates_oversized_atom():
    sizes = np.array([100, 900, 100])
    res = bd.fit(sizes, np.array([0.0, 0.0]), bd.SizeLimits(300), np.zeros(2, dtype=bool))
    assert res.cuts.tolist() == [0, 1]
    assert res.oversized.tolist() == [1]


def test_fit_min_size_absorbs_tiny_run_across_weaker_cut():
    sizes = np.array([200, 20, 200])
    scores = np.array([0.9, 0.2])
    res = bd.fit(sizes, scores, bd.SizeLimits(250, min_size=50), np.ones(2, dtype=bool))
    assert res.cuts.tolist() == [0]  # the 20-unit run joins its right neighbour (weaker cut)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 120), min_size=1, max_size=60),
    st.integers(50, 400),
    st.data(),
)
def test_fit_runs_respect_maximum(sizes, max_size, data):
    n = len(sizes)
    scores = np.array(data.draw(st.lists(st.floats(0, 1), min_size=n - 1, max_size=n - 1)))
    cand = np.array(data.draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1)), dtype=bool)
    target = data.draw(st.integers(1, max_size))
    res = bd.fit(np.array(sizes), scores, bd.SizeLimits(max_size, target=target), cand)
    edges = [0, *(res.cuts + 1).tolist(), n]
    assert edges == sorted(set(edges))
    cum = np.concatenate(([0], np.cumsum(sizes)))
    for a, b in zip(edges, edges[1:], strict=False):
        run = cum[b] - cum[a]
        assert run <= max_size or b - a == 1
    # merging went as far as the target allows: no two neighbours fit together under it
    for a, _b, c in zip(edges, edges[1:], edges[2:], strict=False):
        assert cum[c] - cum[a] > target


def test_inner_breaks_prefers_clause_then_word():
    text = "alpha beta gamma, delta epsilon zeta eta theta iota kappa lambda mu"
    m = Meter(text)
    cuts, worst = bd.inner_breaks(text, 0, len(text), m.prefix, 30)
    assert cuts[0] == text.index("delta")  # after the comma and its space
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=False)]
    assert "".join(pieces) == text and all(len(p) <= 30 for p in pieces)
    assert all(p[0] != " " for p in pieces[1:])  # never a word cut in two: cuts land on word starts
    assert worst == 2


def test_inner_breaks_never_splits_a_character():
    # family emoji (ZWJ sequence), combining accents, CRLF
    unit = "e\u0301" * 3 + "\U0001F468\u200D\U0001F469\u200D\U0001F467" + "\r\n"
    text = unit * 20
    m = Meter(text)
    cuts, _ = bd.inner_breaks(text, 0, len(text), m.prefix, 7)
    ok = set(np.flatnonzero(__import__("logichunk.text.charclass", fromlist=["x"]).cut_allowed(text)).tolist())
    assert cuts and all(c in ok for c in cuts)
    for c in cuts:
        assert text[c] not in "\u0301\u200D\n"


def test_inner_breaks_in_bytes_counts_utf8():
    text = "汉" * 100  # 3 bytes each
    m = Meter(text, "bytes")
    cuts, worst = bd.inner_breaks(text, 0, len(text), m.prefix, 30)
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=False)]
    assert all(len(p.encode()) <= 30 for p in pieces)
    assert worst == 1  # only CJK character boundaries were available


def test_a_forced_cut_keeps_a_url_whole_where_a_break_outside_it_fits():
    # pycorrector's README: a list item of Markdown links, one sentence over the limit; "https:" | "//github..."
    # was the cut (a colon reads as a clause mark), though "、" lay before the link
    link = "MCSC([mcsc_test.tsv](https://github.com/shibing624/pycorrector/blob/master/examples/data/mcsc_test.tsv))"
    text = "EC-LAW([ec_law_test.tsv](https://github.com/shibing624/pycorrector/blob/master/examples/data/ec_law_test.tsv))、" \
        + link + "、" + link
    m = Meter(text)
    cuts, _ = bd.inner_breaks(text, 0, len(text), m.prefix, 140)
    assert cuts
    for c in cuts:
        assert text[c - 1] == "、", text[c - 10 : c + 10]
    # a URL longer than the limit is still cut (inside it, where nothing else fits)
    url = "https://example.com/" + "a" * 200
    cuts, worst = bd.inner_breaks(url, 0, len(url), Meter(url).prefix, 100)
    assert cuts and worst == 0


def test_inner_breaks_character_wider_than_limit():
    text = "😀😀😀"  # 4 bytes each, limit 3 bytes
    m = Meter(text, "bytes")
    cuts, worst = bd.inner_breaks(text, 0, len(text), m.prefix, 3)
    assert cuts == [1, 2] and worst == 0


LINE_ENDS = "\n\r\x0b\x0c\x85\u2028\u2029"


def _break_priorities_one_by_one(text: str, start: int, end: int) -> list[int]:
    """Reference: the rule of break_priorities written per offset, in plain Python."""
    from logichunk.text.charclass import CJK, WS, class_table, cut_allowed

    tab = class_table()
    ok = cut_allowed(text, start, end)
    marks = set("，、,;；:：)）」』”’》】—")
    out = []
    for k in range(start + 1, end):
        if not ok[k - start]:
            out.append(-1)
            continue
        prev, cur = int(tab[ord(text[k - 1])]), int(tab[ord(text[k])])
        p = 1 if (prev & int(CJK)) or (cur & int(CJK)) else 0
        if (prev & int(WS)) and not (cur & int(WS)):
            p = 2
        j = k - 1  # the last non-space character before k, inside the span
        while j >= start and (int(tab[ord(text[j])]) & int(WS)):
            j -= 1
        spaced = j + 1 < end and int(tab[ord(text[j + 1])]) & int(WS)  # (an ASCII ")", ":", ",", ";" ends a clause
        if not (cur & int(WS)) and j >= start and text[j] in marks and not (text[j] in "):,;" and not spaced) \
                and not (text[j] == ")" and any(j - d >= start and text[j - d] == "(" for d in range(2, 6))):
            p = 3  # with a space after it, and ")" closes no "(c)" marker)
        out.append(p)
    # a word after a line break and an indent: its break moves to the start of its line (the indent
    # goes with its line); after an indent that opens the span, it has none
    for k in range(start + 1, end):
        if (out[k - start - 1] <= 0 or int(tab[ord(text[k])]) & int(WS) or not int(tab[ord(text[k - 1])]) & int(WS)
                or text[k - 1] in LINE_ENDS):
            continue
        j = k
        while j > start and (text[j - 1] == "\t" or unicodedata.category(text[j - 1]) == "Zs"):
            j -= 1
        if j == start or text[j - 1] in LINE_ENDS:
            if j > start:
                out[j - start - 1] = max(out[j - start - 1], out[k - start - 1])
            out[k - start - 1] = 0
    # inside a URL (a scheme of ASCII letters, digits and "+.-" from its first letter, at most 32 characters
    # back, then "//" and what is no space, quote, closing bracket nor Chinese mark) a cut is a raw character's
    at = start
    while (i := text.find("://", at, end)) >= 0:
        s = i
        while s > start and i - s < 32 and (text[s - 1].isascii() and (text[s - 1].isalnum() or text[s - 1] in "+.-")):
            s -= 1
        while s < i and not (text[s].isascii() and text[s].isalpha()):
            s += 1
        e = i + 1
        while e < end and not text[e].isspace() and text[e] not in "<>\"'`)]）」』”’》】、，。；：！？":
            e += 1
        if s == i or e < i + 4:  # ("//" and one character at least)
            at = i + 3
            continue
        for k in range(s + 1, e):
            out[k - start - 1] = min(out[k - start - 1], 0)
        at = e
    return out


PIECES = list("ab 中文，、,;:）。 \n\r\u0301\u200d()") + [":a", ",1", "12:30", "😀", "\r\n", "  ", "http", "://", "/x", "7", ".", "(c) ", "](", ") "]


@settings(max_examples=150, deadline=None)
@example("a， b", [(0, 2), (2, 4)])  # a clause mark ending one span must not reach into the next
@example("见：https://x.cn/a，b 7http:// c http://", [(0, 40), (4, 12)])  # a URL, one cut short by a span, none
@given(st.lists(st.sampled_from(PIECES), max_size=80).map("".join),
       st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), max_size=6))
def test_break_priorities_many_is_each_span_on_its_own(text: str, pairs: list[tuple[int, int]]) -> None:
    """The batched priorities of several spans (tier 4 on a hundred over-long sentences at once) are
    each span's priorities on its own, and the rule as written out per offset."""
    n = len(text)
    spans = [tuple(sorted((a % (n + 1), b % (n + 1)))) for a, b in pairs]
    starts = np.array([a for a, _ in spans], dtype=np.int64)
    ends = np.array([b for _, b in spans], dtype=np.int64)
    pri, o = bd.break_priorities_many(text, starts, ends)
    for i, (a, b) in enumerate(spans):
        got = pri[o[i] : max(o[i], o[i + 1] - 1)].tolist()
        assert got == bd.break_priorities(text, a, b).tolist()
        assert got == _break_priorities_one_by_one(text, a, b)


#: every rule's characters: clause marks (ASCII ones with and without a space after, "(c)" markers), spaces and
#: indents (tab, no-break, ideographic), line ends (CRLF, U+2028, form feed), CJK, combining marks, joiners before
#: what they join and what they do not, regional indicators, Hangul jamo, surrogates, astral letters, URLs
_KERNEL_PIECES = PIECES + list("\t\u00a0\u3000\u2028\x0c\x1c；：》—x(") + [
    "\u200d\U0001f466", "\u200d ", "\U0001f1fa", "\U0001f1f8", "\u1100", "\u1161", "\uac00", "\ud83d", "\ude00",
    "\U00020000", "\U0001d400", "(iv) ", "(abcd) ", "https://a.b/c ", "\n  ", "\n\t", "\u3000\u3000",
    "\U0001f1fa\U0001f1f8\U0001f1fa"]


@settings(max_examples=200, deadline=None)
@example("", [])
@example("a\u200d\U0001f466 b\u200d\n", [(0, 8)])
@example("a\u200d\U0001f466\u200d\n" * 140, [(0, 700)])  # more joiners than the kernel reads back: the numpy passes
@given(st.one_of(st.lists(st.sampled_from(_KERNEL_PIECES), max_size=60).map("".join), st.text(max_size=40)),
       st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), max_size=6))
def test_compiled_break_priorities_are_the_numpy_passes(text: str, pairs: list[tuple[int, int]]) -> None:
    """The compiled pass (native.break_priorities) gives break_priorities_many the bits of its numpy passes, every
    pair laid end to end included (those across two spans too), on mixed scripts, marks, spaces and line ends,
    astral characters, joiners, flags, jamo, lone surrogates, empty spans and texts."""
    from unittest import mock

    from logichunk import native

    assert native.available(), native.status()
    n = len(text)
    spans = [tuple(sorted((a % (n + 1), b % (n + 1)))) for a, b in pairs] or [(0, n)]
    starts = np.array([a for a, _ in spans], dtype=np.int64)
    ends = np.array([b for _, b in spans], dtype=np.int64)
    pri, o = bd.break_priorities_many(text, starts, ends)
    with mock.patch.object(native, "break_priorities", lambda *a, **k: None):
        slow, o2 = bd.break_priorities_many(text, starts, ends)
    assert pri.dtype == slow.dtype and o.tolist() == o2.tolist()
    assert pri.tolist() == slow.tolist()


def _merge_reference(cuts, ranks, strengths, cum, goal, pinned):
    """The weakest-cut-first rule on a plain list of runs: visit cuts from least trusted and weakest
    (ties left to right) once each; remove a cut when the two runs it separates fit the goal."""
    order = sorted(range(len(cuts)), key=lambda c: (-int(ranks[c]), float(strengths[c]), c))
    standing = set(range(len(cuts)))
    n = len(cum) - 1
    for c in order:
        if pinned[cuts[c]]:
            continue
        left = max([k for k in standing if k < c], default=None)
        right = min([k for k in standing if k > c], default=None)
        lo = 0 if left is None else int(cuts[left]) + 1
        hi = n if right is None else int(cuts[right]) + 1
        if cum[hi] - cum[lo] <= goal:
            standing.discard(c)
    return [c in standing for c in range(len(cuts))]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=40), st.integers(1, 120), st.integers(0, 2**31 - 1))
def test_merge_matches_the_plain_rule(sizes: list[int], goal: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = len(sizes)
    cum = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    cuts = np.flatnonzero(rng.random(max(n - 1, 0)) < 0.7).astype(np.int64)
    ranks = rng.integers(0, 3, cuts.size)
    strengths = rng.integers(0, 4, cuts.size).astype(np.float64)  # ties on purpose
    pinned = rng.random(max(n - 1, 0)) < 0.1
    limits = bd.SizeLimits(max(goal, 1))
    got = bd_local._merge(cuts, ranks, strengths, cum, limits, pinned).tolist()
    assert got == _merge_reference(cuts, ranks, strengths, cum, limits.goal, pinned)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=60), st.sampled_from(["chars", "bytes", "tokens"]), st.data())
def test_meter_shortcuts_agree_with_the_prefix(text: str, unit: str, data) -> None:
    """Characters need no prefix array (sizes are end - start); every unit's sizes, span prefixes
    and total agree with the measure's own prefix."""
    from logichunk.text.measure import get_measure

    m = Meter(text, unit)
    full = get_measure(unit).prefix(text)
    n = len(text)
    a = data.draw(st.integers(0, n))
    b = data.draw(st.integers(a, n))
    assert m.size(a, b) == int(full[b] - full[a])
    assert m.total() == int(full[-1])
    assert m.span_prefix(a, b).tolist() == (full[a : b + 1] - full[a]).tolist()
    starts = np.array([0, a, a], dtype=np.int64)
    ends = np.array([a, b, n], dtype=np.int64)
    assert m.sizes(starts, ends).tolist() == (full[ends] - full[starts]).tolist()


def test_inner_breaks_takes_the_span_prefix_or_the_whole_texts():
    text = "前言。" + "这是一个非常长的句子，没有句号，" * 20 + "结束。"
    m = Meter(text, "bytes")
    s, e = 3, len(text) - 3
    whole = bd.inner_breaks(text, s, e, m.prefix, 40)
    span = bd.inner_breaks(text, s, e, m.span_prefix(s, e), 40)
    assert whole == span and whole[0] and all(s < c < e for c in whole[0])
    edges = [s, *whole[0], e]
    assert all(m.size(a, b) <= 40 for a, b in zip(edges, edges[1:], strict=False))
    b1 = bd.forced_split_bubble(text, s, e, whole[0], whole[1], m.prefix, limit=40, unit="bytes")
    b2 = bd.forced_split_bubble(text, s, e, span[0], span[1], m.span_prefix(s, e), limit=40, unit="bytes")
    assert b1 == b2 and b1.context["sizes"] == [m.size(a, b) for a, b in zip(edges, edges[1:], strict=False)]


def test_peaks_read_minus_infinity_as_an_edge():
    """Texts laid end to end score their seams -inf: each text's gaps are judged as if alone, and a
    text with a single gap has it as a peak, as a one-element sequence does."""
    inf = float("inf")
    assert bd.peaks(np.array([0.7])).tolist() == [True]
    assert bd.peaks(np.array([1.0, -inf, 0.5, -inf])).tolist() == [True, False, True, False]
    assert bd.peaks(np.array([0.2, 0.5, -inf, 0.3, 0.1])).tolist() == [False, True, False, True, False]
    assert bd.peaks(np.array([0.2, 0.5, -inf, 0.3, 0.1])).tolist() == \
        bd.peaks(np.array([0.2, 0.5])).tolist() + [False] + bd.peaks(np.array([0.3, 0.1])).tolist()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=2, max_size=120), st.data(), st.integers(1, 40))
def test_the_compiled_inner_walk_is_the_python_walk(steps, data, max_size):
    """The C walk through an over-long sentence (native.inner_cuts_many, one span) against the numpy loop it replaces:
    sizes of 0 (inside a token) to 9 per character (bytes, wide characters), priorities anywhere from
    never (-1) to a clause (3), windows where nothing fits."""
    from unittest import mock

    from logichunk import native

    assert native.available(), native.status()
    n = len(steps)
    prefix = np.concatenate(([0], np.cumsum(steps))).astype(np.int64)
    pri = np.asarray(data.draw(st.lists(st.integers(-1, 3), min_size=n - 1, max_size=n - 1)), dtype=np.int8)
    text = "x" * n
    fast = bd.inner_breaks(text, 0, n, prefix, max_size, pri)
    with mock.patch.object(native, "inner_cuts_many", lambda *a, **k: None):
        slow = bd.inner_breaks(text, 0, n, prefix, max_size, pri)
    assert fast == slow


_MANY_TEXT = st.lists(st.sampled_from(list("ab ,。中文") + ["e\u0301", "\U0001f600", "\r\n", "，"]), min_size=1,
                      max_size=90).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_MANY_TEXT, min_size=1, max_size=6), st.sampled_from(["chars", "bytes"]), st.integers(1, 25))
def test_many_inner_walks_at_once_are_each_walk_alone(parts, unit, max_size):
    """inner_breaks_many (one compiled call for every over-long sentence, prefixes and priorities laid end
    to end) gives each span inner_breaks' cuts and roughest break, compiled or not; the spans' own
    prefixes laid end to end are each span_prefix."""
    from unittest import mock

    from logichunk import native

    assert native.available(), native.status()
    text = "".join(parts)
    m = Meter(text, unit)
    ends = np.cumsum([len(p) for p in parts]).astype(np.int64)
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64)
    prefixes, po = m.span_prefixes(starts, ends)
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        assert prefixes[po[i] : po[i + 1]].tolist() == m.span_prefix(a, b).tolist()
    pri, o = bd.break_priorities_many(text, starts, ends)
    alone = [bd.inner_breaks(text, a, b, m.span_prefix(a, b), max_size, pri[o[i] : o[i + 1] - 1])
             for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True))]
    assert bd.inner_breaks_many(text, starts, ends, prefixes, po, max_size, pri) == alone
    with mock.patch.object(native, "inner_cuts_many", lambda *a, **k: None):
        assert bd.inner_breaks_many(text, starts, ends, prefixes, po, max_size, pri) == alone


def test_forced_splits_leave_one_bubble_per_atom_cut_inside():
    """Tier 4 as every chunker runs it: the cuts inside each over-long atom and one bubble each, whose
    pieces fit the limit and tile the atom; an atom one character wider than the limit stays whole and
    its bubble names the roughest break ("char"), whichever chunker asks."""
    long = "alpha beta, gamma delta, " * 12
    text = "Intro.\n\n" + long + "\n\n😀\n\nEnd."
    meter = Meter(text, "bytes")
    starts = np.array([0, 8, 8 + len(long) + 2, 8 + len(long) + 3])
    ends = np.array([8, 8 + len(long) + 2, 8 + len(long) + 3, len(text)])
    limit = 60
    big = np.flatnonzero(meter.sizes(starts, ends) > limit)
    found, bubbles = bd.forced_splits(text, meter, starts, ends, np.zeros(4, bool), big, limit,
                                      attempts=("x", "forced"), source="doc", level=2, where="here")
    assert big.tolist() == [1] and len(found) == len(bubbles) == 1
    b = bubbles[0]
    edges = [int(starts[1]), *found[0], int(ends[1])]
    assert b.context["sizes"] == [meter.size(a, c) for a, c in zip(edges, edges[1:], strict=False)]
    assert max(b.context["sizes"]) <= limit and sum(b.context["sizes"]) == meter.size(int(starts[1]), int(ends[1]))
    assert b.context["attempts"] == ["x", "forced"] and b.context["where"] == "here" and b.context["level"] == 2
    assert b.context["break"] == "clause" and b.context["source"] == "doc"
    # the emoji is 4 bytes: at a limit of 3 it cannot be cut
    emoji = np.flatnonzero(np.asarray([text[a:c] == "😀" for a, c in zip(starts, ends, strict=True)]))
    found, bubbles = bd.forced_splits(text, meter, starts, ends, np.zeros(4, bool), emoji, 3, attempts=("forced",))
    assert found == [[]] and bubbles[0].context["break"] == "char" and bubbles[0].priority == "high"

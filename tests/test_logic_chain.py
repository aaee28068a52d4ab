"""The logic-chain cascade: invariants on any text, tiers, bubbles, units."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logichunk import CascadeSettings, check_tree, chunk, chunk_logic_chain, chunk_many
from logichunk.errors import InputError
from logichunk.text.measure import Meter
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout
from structure_helpers import assert_headings_open_chunks

ZH = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也你对生能而子那得于着下自之年过发后作里"
EN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
PUNCT = "。！？；…，、.!?;:,\"'“”（）()-"
SPACE = " \n\n\t\r\u3000\u2028"
ODD = "😀👍🏽\u200d\u0301\U0001F468\ufe0f\x00\ud800"

alphabet = st.sampled_from(list(ZH + EN + PUNCT + SPACE + ODD))
texts = st.one_of(
    st.text(alphabet, max_size=600),
    st.text(st.sampled_from(list(ZH + "。，！？\n")), max_size=2000),
    st.text(st.sampled_from(list(EN + " .,!?\n")), max_size=2000),
    st.text(max_size=300),  # any unicode, including lone surrogates and control characters
)


def _covered_by_bubble(tree, c) -> bool:
    return any(b.context["span"][0] <= c.span.start and c.span.end <= b.context["span"][1] for b in tree.bubbles)


def assert_invariants(tree, text, sizes, unit="chars"):
    check_tree(tree)
    assert "".join(tree.text_of(c) for c in tree.leaves()) == text
    assert "".join(tree.text_of(c) for c in tree.roots()) == text
    ids = [c.id for c in tree]
    assert len(ids) == len(set(ids))
    meter = Meter(text, unit)
    for c in tree.leaves():
        size = meter.size(c.span.start, c.span.end)
        assert size == c.meta["size"]
        assert size <= sizes[0] or _covered_by_bubble(tree, c), (c, size)
    sents = split_sentences(text)
    lay = layout(sents)
    # a sentence end after a heading is no place to cut: a heading stays with what it titles (each gap read at its
    # seam, where a cut falls: a line's indent goes with its line, "0\r" over "\u30000" is cut before the U+3000)
    ends = set(sents.seams()[~lay.no_cut].tolist()) if len(sents) > 1 else set()
    for c in tree:
        if c.level < len(sizes) and not c.children and c.meta["size"] > min(sizes[c.level :]):
            # a leaf over the finest limit below it (a middle level never leaves a leaf coarser): left whole
            # only when no sentence boundary (but one after a heading) lies inside it
            assert not any(c.span.start < e < c.span.end for e in ends), c
    assert_headings_open_chunks(tree, text, sizes, unit)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.sampled_from([(60, 30, 12), (200, 100), (1000, 500, 200), (25,)]), st.sampled_from(["chars", "bytes", "tokens"]))
def test_invariants_on_random_text(text, sizes, unit):
    tree = chunk(text, sizes=sizes, unit=unit)
    assert_invariants(tree, text, sizes, unit)
    assert (len(tree) == 0) == (text == "")


def test_huge_line_without_punctuation_is_forced_with_one_bubble():
    text = "x" * 2_000_000
    tree = chunk(text, max_size=1000, levels=1)
    assert_invariants(tree, text, (1000,))
    assert len(tree.bubbles) == 1
    b = tree.bubbles[0]
    assert b.category == "forced_split" and b.context["final_method"] == "forced"
    assert b.context["attempts"] == ["entropy", "llm:skipped", "composite", "forced"]
    assert b.context["sizes"] == [1000] * 2000
    assert {c.method for c in tree} == {"forced"}


def test_uniform_unpunctuated_text_reaches_tier_4():
    text = "没有标点的长文本" * 300
    tree = chunk(text, max_size=500)
    assert tree.bubbles and tree.bubbles[0].priority == "high"
    assert tree.stats["methods"].get("forced", 0) >= 4
    assert tree.stats["tier2_skipped"] >= 1


@pytest.mark.parametrize("path", ["examples/en_public_domain.md", "examples/zh_public_domain.txt"])
def test_normal_text_never_bubbles(path):
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / path).read_text(encoding="utf-8")
    tree = chunk(text)  # default limits 1000/500/200: no sentence there is longer than 1000
    assert_invariants(tree, text, (1000, 500, 200))
    assert tree.bubbles == ()
    assert "forced" not in tree.stats["methods"]
    # children only where a chunk exceeds the finest limit (200), and a root that fits the level-2 limit but
    # not the finest is cut straight into pieces that fit it (the middle level has nothing to add)
    assert all(c.meta["size"] > 200 for c in tree if c.children)
    assert any(200 < c.meta["size"] <= 500 and c.children for c in tree.roots())


def test_a_chunk_never_straddles_a_markdown_heading_when_it_does_not_have_to():
    part = "Plain sentence about gardens and soil. " * 6
    text = f"# Gardens\n\n{part}\n\n# Engines\n\n{part.replace('gardens and soil', 'pistons and fuel')}"
    tree = chunk(text, max_size=400, levels=1)
    cut_points = {c.span.end for c in tree.roots()}
    assert text.index("# Engines") in cut_points


def test_llm_tier_marks_breaks_and_is_counted():
    class Scripted:
        def __init__(self):
            self.calls = 0

        def complete(self, messages, *, max_tokens=128, temperature=0.0):
            self.calls += 1
            n = messages[-1]["content"].count("\n") + 1
            return type("R", (), {"text": f"Breaks: [{n // 2}]"})()

    # identical sentences: entropy finds no peak inside, so tier 2 is asked
    text = "同样的句子在这里。" * 60
    llm = Scripted()
    tree = chunk(text, max_size=200, levels=1, llm=llm)
    assert llm.calls >= 1 and tree.stats["llm_calls"] == llm.calls
    assert "llm" in tree.stats["methods"]
    assert_invariants(tree, text, (200,))


def test_bad_settings_are_clear_errors():
    with pytest.raises(InputError):
        chunk("text", sizes=(100, 200))
    with pytest.raises(InputError):
        chunk("text", max_size=0)
    with pytest.raises(InputError):
        chunk("text", unit="lines")
    with pytest.raises(InputError):
        chunk(b"bytes are not text")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        chunk_logic_chain("x", CascadeSettings(target_ratio=0))


def test_token_unit_limits_are_in_tokens():
    text = ("The committee reviewed the annual budget and approved new funding. " * 40
            + "量子计算利用叠加态和纠缠来处理信息。" * 40)
    tree = chunk(text, max_size=64, unit="tokens", levels=1)
    m = Meter(text, "tokens")
    sizes = np.array([m.size(c.span.start, c.span.end) for c in tree.leaves()])
    assert sizes.max() <= 64 and tree.unit == "tokens"
    assert_invariants(tree, text, (64,), "tokens")


def test_deterministic():
    text = "Alpha beta. Gamma delta! 第一句。第二句？" * 50
    a = chunk(text, max_size=120).records()
    b = chunk(text, max_size=120).records()
    assert a == b


def test_without_tier3_failing_runs_are_cut_by_entropy():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "examples/en_public_domain.md").read_text(encoding="utf-8")
    full = chunk(text, max_size=300, levels=2)
    fast = chunk(text, max_size=300, levels=2, composite=False)
    assert "composite" in full.stats["methods"]  # this text has runs entropy alone cannot split
    assert "composite" not in fast.stats["methods"] and fast.stats["methods"].get("entropy", 0) > 0
    assert_invariants(fast, text, (300, 150))
    # the same sentence boundaries are available: only the choice among them differs (a forced
    # split, recorded as a bubble, is the one place a cut may fall inside a sentence)
    ends = set(split_sentences(text).ends.tolist())
    forced = [bb.context["span"] for bb in fast.bubbles]
    assert all(bb.context["attempts"][2] == "composite:skipped" for bb in fast.bubbles)  # the record is honest
    for c in fast.leaves():
        assert c.end in ends or any(a < c.end < b for a, b in forced)


SHORT_RUN = ("Cats purr softly at night. Dogs bark loudly in the yard. Stock markets fell sharply today. "
             "Investors sold bonds quickly. Rain is expected tomorrow.")  # 147 characters, no tier-1 candidate


def test_a_run_shorter_than_tier3s_windows_is_left_to_tier_1(monkeypatch):
    """Tier 3's new component, the bigram divergence, reads 100 characters on each side of a gap: a run of
    147 holds no gap whose windows lie inside it, so tier 3 does not score it, the cuts are those of
    ``composite=False`` and the chunks are named as it names them (never "composite"), and the stats count it."""
    import logichunk.signals.composite as composite

    def unread(*a, **k):
        raise AssertionError("tier 3 scored a run shorter than its windows")

    fast = chunk(SHORT_RUN, max_size=60, levels=1, composite=False)
    monkeypatch.setattr(composite, "divergence_at", unread)
    tree = chunk(SHORT_RUN, max_size=60, levels=1)
    assert [(c.span, c.method) for c in tree] == [(c.span, c.method) for c in fast]
    assert {c.method for c in tree} == {"entropy"} and len(tree) > 1
    assert tree.stats["tier3_skipped"] == 1 and fast.stats["tier3_skipped"] == 0
    many = chunk_many([SHORT_RUN, "", SHORT_RUN], max_size=60, levels=1)
    assert [t.stats["tier3_skipped"] for t in many] == [1, 0, 1]


def test_a_forced_split_s_bubble_says_whether_tier_3_ran():
    """A sentence over the maximum is cut by tier 4 and its bubble lists the tiers tried: it said
    ``composite`` even where tier 3 left the run holding the sentence to tier 1 (shorter than its windows'
    200 characters); now ``composite:skipped`` there, and ``composite`` where tier 3 scored the run."""
    for words, skipped in ((7, True), (15, False)):  # (a sentence of 161 characters, of 345)
        text = "Short one here. Another short one. " + " ".join(["alpha beta gamma delta"] * words) + \
            ". Then a short end. And one more."
        for tree in (chunk(text, max_size=80, levels=1), chunk_many(["", text], max_size=80, levels=1)[1]):
            assert tree.stats["tier3_skipped"] == int(skipped)
            (bubble,) = tree.bubbles
            assert bubble.context["attempts"] == ["entropy", "llm:skipped",
                                                  "composite:skipped" if skipped else "composite", "forced"]


def test_with_an_lm_tier_3_scores_every_run():
    """An LM reads all the text before a gap: tier 3 with an LM has no window a run could be short of."""
    calls = []

    class LM:
        name = "lm"

        def gap_scores(self, sents):
            calls.append(len(sents))
            return np.linspace(0.0, 1.0, len(sents) - 1)

    tree = chunk(SHORT_RUN, max_size=60, levels=1, lm_signal=LM())
    assert calls == [5] and tree.stats["tier3_skipped"] == 0
    assert "composite" in tree.stats["methods"]


def _closing_gaps(tree):
    """Per chunk, the offset of the cut that names it: its end, or its start for the last of its siblings."""
    out = {}
    for parent in [None, *tree]:
        kids = tree.roots() if parent is None else [tree.get(k) for k in parent.children]
        for i, c in enumerate(kids):
            out[c.id] = c.span.end if i < len(kids) - 1 else c.span.start
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.sampled_from([(60, 30, 12), (200, 100), (1000, 500, 200), (300, 150, 60)]))
@example(SHORT_RUN, (60, 30, 12))
@example("# This file is generated by numpy's build process\n# It contains system_info results at the time of "
         "building this package.\nfrom enum import Enum\nfrom numpy._core._multiarray_umath import (\n    "
         "__cpu_features__,\n    __cpu_baseline__,\n    __cpu_dispatch__,\n)\n\n__all__ = [\"show_config\"]\n"
         "_built_with_meson = True\n\n\nclass DisplayModes(Enum):\n    stdout = \"stdout\"\n    dicts = \"dicts\"\n"
         "\n\ndef _cleanup(d):\n   ", (60, 30, 12))  # (7456c5b named a level-1 cut "composite" outside every run it scored)
def test_composite_names_only_gaps_tier_3_scored(text, sizes):
    """No chunk is named "composite" unless tier 3 scored the gap that closes it (a cut the global choice
    makes at a gap outside every failing run, or inside a run tier 3 left to tier 1, is tier 1's)."""
    from logichunk.chunkers.logic_chain import _Run

    scored: set[int] = set()
    real = _Run._composite

    def spy(self, bidx):
        scored.update(self.B[bidx[self.R[bidx] == 2]].tolist())
        return real(self, bidx)

    _Run._composite = spy
    try:
        tree = chunk(text, sizes=sizes)
    finally:
        _Run._composite = real
    closing = _closing_gaps(tree)
    for c in tree:
        if c.method == "composite":
            assert closing[c.id] in scored, c
    assert sum(1 for c in tree if c.method == "composite") == tree.stats.get("methods", {}).get("composite", 0)

@settings(max_examples=120, deadline=None)
@example("Cats purr softly at night. Dogs bark loudly in the yard.\n\nStock markets fell sharply today. Investors "
         "sold bonds quickly.\n\nRain is expected tomorrow morning. Snow may follow in the hills. Farmers worry "
         "about crops.", (300, 1, 0.6), "chars")  # 214 chars: under the maximum, over the 180 target: two chunks
@given(st.lists(st.sampled_from(list("ab cd.。，！?\n中文字") + ["Dr.", "\n\n", "e.g. ", "word "]), max_size=120).map("".join),
       st.sampled_from([(512, 1, 1.0), (1000, 3, 1.0), (300, 2, 0.6), (120, 1, 1.0), (300, 1, 0.6)]),
       st.sampled_from(["chars", "bytes"]))
def test_a_text_that_is_one_chunk_skips_the_signal_but_not_the_result(text, shape, unit):
    """A short text (a knowledge-base paragraph) is one chunk without computing a signal: the tree,
    stats included, is the one the full cascade builds."""
    from logichunk.chunkers import logic_chain as LC

    max_size, levels, ratio = shape
    if not text:
        return
    cfg = LC.CascadeSettings(sizes=LC.level_sizes(max_size, levels), unit=unit, target_ratio=ratio)
    fast = LC.chunk_logic_chain(text, cfg)
    full = LC._cascade(text, cfg, None, None, "<text>", Meter(text, unit), split_sentences(text))
    rows = lambda t: [(c.id, c.span, c.method, dict(c.meta)) for c in t]  # noqa: E731
    assert rows(fast) == rows(full)
    assert dict(fast.stats) == dict(full.stats) and fast.bubbles == full.bubbles and fast.unit == full.unit


@pytest.mark.parametrize("kwargs", [
    {"unit": None}, {"unit": "words"}, {"levels": 2.5}, {"levels": None}, {"sizes": 500}, {"sizes": "100"},
    {"sizes": (100.9, 50.9)}, {"sizes": ("100",)}, {"max_size": 300.0}, {"max_size": True},
    {"target_ratio": "0.5"}, {"target_ratio": 0},
])
@pytest.mark.parametrize("text", ["", "Hi. " * 100])
def test_bad_parameters_are_input_errors_even_on_empty_text(kwargs, text):
    with pytest.raises(InputError):
        chunk(text, **kwargs)


def test_sizes_may_be_a_list_or_an_array():
    import numpy as np

    text = "Hi there. " * 100
    assert chunk(text, sizes=[100, 50]).records() == chunk(text, sizes=np.array([100, 50])).records()


def test_json_lines_extra_replaces_a_record_key_like_a_dict_merge():
    import json

    tree = chunk("Hello there. Bye.")
    for extra in ({"id": "doc-7"}, {"source": "a.txt"}, {"text": 1, "x": [1]}):
        assert [json.loads(x) for x in tree.json_lines(extra)] == [r | extra for r in tree.records()]


def test_chunk_many_refuses_a_single_string():
    from logichunk import chunk_many

    with pytest.raises(InputError, match="list of texts"):
        chunk_many("abc. def.")


def test_a_heading_stays_with_the_list_table_or_fence_under_it():
    from logichunk.text.sentences import BREAK_HARD, split_sentences

    para = "The reactor must be inspected every week by a qualified engineer. Record every reading in the log book. "
    for under in ("- valves closed\n- pressure below 2 bar\n- log book signed\n", "| part | limit |\n|---|---|\n| valve | 2 |\n",
                  "```\ncheck --all\n```\n"):
        text = "## Inspection\n\n" + para * 2 + "\n\n### Checklist\n\n" + under + "\n## Shutdown\n\n" + para + "\n"
        ss = split_sentences(text)
        after = int(np.searchsorted(ss.starts, text.index(under)))  # the sentence right after the heading
        assert ss.breaks[after - 1] != BREAK_HARD
        tree = chunk(text, max_size=250, levels=1)
        assert not any(tree.text_of(c).rstrip().endswith("### Checklist") for c in tree.roots()), under


def test_tier4_leaves_a_heading_room_in_the_first_piece_of_a_long_sentence():
    """A heading over a sentence longer than the maximum: tier 4 cuts the sentence so that its first
    piece fits with the heading, and the heading opens that chunk instead of standing alone (before,
    `## The Declaration of Independence (1776)` was a chunk of its own at --max-size 300)."""
    head = "## The Declaration of Independence (1776)\n\n"
    sentence = ("When in the Course of human events, it becomes necessary for one people to dissolve the political "
                "bands which have connected them with another, and to assume among the powers of the earth, the "
                "separate and equal station to which the Laws of Nature and of Nature's God entitle them, a decent "
                "respect to the opinions of mankind requires that they should declare the causes which impel them.\n")
    text = "Some text before. It ends here.\n\n" + head + sentence
    for max_size in (120, 200, 300):
        tree = chunk(text, max_size=max_size, levels=1)
        assert "".join(tree.text_of(c) for c in tree.roots()) == text
        opening = next(c for c in tree.roots() if tree.text_of(c).startswith("## The"))
        assert len(tree.text_of(opening)) > len(head) and opening.meta["size"] <= max_size
        assert tree.bubbles  # the sentence was still cut by force, and that is recorded


def test_tier4_walks_a_sentence_alone_where_the_headings_room_cannot_hold():
    """Where the only break in reach of the heading's walk is the sentence's own start (one character
    with thirty combining marks, which no cut may enter), the sentence is walked alone as before: no
    empty chunk, the text tiled, the over-long character recorded."""
    text = "# H\n" + "a" + "\u0301" * 30 + " and more words here.\n"
    tree = chunk(text, max_size=20, levels=1)
    spans = [(c.span.start, c.span.end) for c in tree.roots()]
    assert all(b > a for a, b in spans) and "".join(tree.text_of(c) for c in tree.roots()) == text
    assert spans[0] == (0, 4) and tree.bubbles
    assert all(size > 0 for size in tree.bubbles[0].context["sizes"])  # no cut at the sentence's own start

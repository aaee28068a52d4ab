"""Topic segmentation (chunkers/topics.py): segment(), segment_units() and `logichunk segment`."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk import boundaries as bd
from logichunk import segment, segment_units
from logichunk.errors import InputError
from logichunk.models.embed_hash import HashEmbedder
from logichunk.signals.cohesion import item_bags, lexical_rows
from logichunk.text.discourse import opens_with_marker
from logichunk.text.sentences import join_units, split_lines, split_sentences
from logichunk.text.structure import PARAGRAPH, SECTION, layout
from logichunk.tree import check_tree

ROOT = Path(__file__).resolve().parents[1]

_TOPICS = {
    "cats": "Cats purr softly. A cat sleeps most of the day. Kittens chase string and cats hunt mice at night.",
    "rockets": "Rockets burn fuel to climb. A rocket stage drops away in flight. Engines of the rocket gimbal to steer.",
    "bread": "Bread needs flour and yeast. Dough rises while the yeast feeds. Bakers knead bread dough before baking.",
}


def test_a_clear_change_of_subject_is_found_where_it_is():
    text = " ".join([_TOPICS["cats"]] * 3 + [_TOPICS["rockets"]] * 3 + [_TOPICS["bread"]] * 3)
    tree = segment(text)
    check_tree(tree)
    starts = [c.span.start for c in tree.roots()]
    rockets, bread = text.index("Rockets"), text.index("Bread")
    assert starts == [0, rockets, bread]
    assert [c.method for c in tree.roots()] == ["topic"] * 3
    assert tree.stats["topics"] == 3 and tree.stats["vectors"] == "lexical" and tree.stats["cost"] == "evidence"


def test_one_subject_stays_one_topic():
    text = " ".join([_TOPICS["cats"]] * 6)
    assert len(segment(text).roots()) == 1


def test_one_subject_longer_than_the_bound_is_cut_only_at_the_bound():
    """A topic spans at most MAX_SEGMENT_ATOMS units (the bound that keeps the decision linear): a uniform
    run of 600 sentences is one topic up to the bound, and the bound is said in the stats (the README said
    "however long each topic is")."""
    from logichunk.boundaries import MAX_SEGMENT_ATOMS

    tree = segment("The cat sat on the mat. " * 600)
    assert tree.stats["max_topic_units"] == MAX_SEGMENT_ATOMS
    assert [c.meta["sentences"] for c in tree.roots()] == [[0, MAX_SEGMENT_ATOMS], [MAX_SEGMENT_ATOMS, 600]]
    assert len(segment("The cat sat on the mat. " * (MAX_SEGMENT_ATOMS - 12)).roots()) == 1


def test_headings_open_topics_and_never_end_one():
    text = ("# Notes\n\n## Cats\n\n" + _TOPICS["cats"] + "\n\n## Rockets\n\n" + _TOPICS["rockets"]
            + "\n\n## More rockets\n\n" + _TOPICS["rockets"] + "\n")
    tree = segment(text)
    starts = [c.span.start for c in tree.roots()]
    # "# Notes" and "## Cats" stay together (no cut right after a heading); every later heading opens one
    assert starts == [0, text.index("## Rockets"), text.index("## More rockets")]


_SENT = st.sampled_from([*(s + " " for t in _TOPICS.values() for s in t.split(". ")),
                         "However, it went on. ", "They said so. ", "Yes. ", "但是他没来。", "猫在睡觉。"])
_BREAK = st.sampled_from(["", "", "\n", "\n\n"])
_HEAD = st.sampled_from(["# Title\n\n", "## Part\n\n", "1.2 Scope\n\n", ""])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_HEAD, st.lists(st.tuples(_SENT, _BREAK), min_size=1, max_size=6)), min_size=1, max_size=5))
def test_invariants(doc):
    text = "".join(h + "".join(s + b for s, b in body) for h, body in doc)
    tree = segment(text)
    check_tree(tree)  # spans tile the text exactly, ids 1..k
    sents = split_sentences(text)
    lay = layout(sents)
    starts = set(sents.starts.tolist())
    heading_starts = {int(sents.starts[i]) for i in np.flatnonzero(lay.heading)}
    s_ = lay.strength
    has_paragraphs = ((s_ >= PARAGRAPH) & (s_ < SECTION) & ~lay.no_cut).any()  # a heading's blank lines don't count
    for c in tree.roots()[1:]:
        a = c.span.start
        assert a in starts  # topics start at a sentence
        i = int(np.searchsorted(sents.starts, a))
        gap = lay.strength[i - 1]
        if has_paragraphs:
            assert gap >= PARAGRAPH  # between paragraphs (or at a heading) only
        assert not lay.no_cut[i - 1]  # never right after a heading
        if a not in heading_starts:
            assert not opens_with_marker(text, np.array([a]), np.array([c.span.end]))[0]
    for c in tree.roots():  # a heading opens a topic unless it directly follows another heading
        inside = [h for h in heading_starts if c.span.start < h < c.span.end]
        for h in inside:
            i = int(np.searchsorted(sents.starts, h))
            assert lay.heading[i - 1] or lay.no_cut[i - 1]


@settings(max_examples=300, deadline=None)
@given(st.lists(_SENT.map(str.strip).filter(bool), min_size=0, max_size=30))
def test_units_and_lines_agree(units):
    """segment_units over a list = segment(..., units="lines") over the same units one per line."""
    got = segment_units(units).tolist()
    tree = segment("\n".join(units), units="lines")
    lines = split_lines("\n".join(units))
    assert len(lines) == len(units)
    ends = [c.meta["sentences"][1] - 1 for c in tree.roots()[:-1]]
    assert got == ends


@settings(max_examples=300, deadline=None)
@example(["a.", "b.", ""])  # an empty last unit started where the joined text ends: an IndexError once
@example(["", ""])
@given(st.lists(st.one_of(_SENT, st.sampled_from(["", " ", "\t"])), min_size=0, max_size=20))
def test_any_units_empty_ones_included_get_cuts_between_them(units):
    got = segment_units(units).tolist()
    assert got == sorted(set(got)) and all(0 <= c < len(units) - 1 for c in got)
    while units and not units[-1]:  # an empty unit at the end carries nothing: the units before it, alone
        units = units[:-1]
    assert segment_units(units).tolist() == got


def test_segment_units_is_the_global_decision_with_the_structure_rules():
    units = [s for t in _TOPICS.values() for s in t.split(". ")] * 2 + ["However, the end came.", "It did."]
    sents = join_units(units)
    lay = layout(sents)
    glue = lay.leans & (lay.strength < SECTION)  # continuations only: units are lines
    assert glue.any()
    expected = bd.segment_evidence(item_bags(sents.text, sents.starts, sents.ends), glue=glue)
    assert expected.size  # (a case where the choice is not empty)
    assert segment_units(units).tolist() == expected.tolist()
    assert (len(units) - 3) not in expected.tolist()  # no boundary before "However"
    # with an embedder: the scatter of its vectors places the topics, the words' evidence chooses how many
    emb = HashEmbedder()
    X = np.asarray(emb.embed(sents.texts(), kind="passage"), dtype=np.float64)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    bags = item_bags(sents.text, sents.starts, sents.ends)
    want = bd.segment_global(X, glue=glue, select=bd.evidence_scorer(bags))
    assert segment_units(units, embedder=emb).tolist() == want.tolist()
    assert segment_units(units, embedder=emb, topics=4).tolist() == bd.segment_global(X, glue=glue, count=3).tolist()


def test_with_an_embedder():
    text = " ".join([_TOPICS["cats"]] * 3 + [_TOPICS["rockets"]] * 3)
    tree = segment(text, embedder=HashEmbedder())
    check_tree(tree)
    assert tree.stats["vectors"] != "lexical" and tree.stats["cost"] == "scatter"
    assert tree.stats["count"] == "evidence" and tree.stats["penalty"] > 0
    assert [c.span.start for c in tree.roots()] == [0, text.index("Rockets")]
    told = segment(text, embedder=HashEmbedder(), topics=3)
    assert told.stats["count"] == "given" and "penalty" not in told.stats and len(told.roots()) == 3
    assert segment_units(["a cat", "the cat"], embedder=HashEmbedder()).dtype == np.int64


def test_bad_input_is_one_clear_error():
    with pytest.raises(InputError):
        segment(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        segment("text", units="words")
    with pytest.raises(InputError):
        segment_units("not a list")  # type: ignore[arg-type]
    assert segment("").roots() == [] and segment_units([]).size == 0


def test_segment_units_takes_any_iterable_of_units():
    """A generator of turns (an agent's log read line by line) gave no boundaries at all: the type check read the
    generator to its end, leaving nothing to segment. Now it gives the list's boundaries; ``None`` is one line."""
    turns = ["你喜欢猫吗？", "喜欢，我家有两只猫。", "猫很可爱。", "对了，明天的会议几点开始？", "上午十点，在三楼。"]
    want = segment_units(turns).tolist()
    assert want  # (the README's example: the subject changes)
    assert segment_units(t for t in turns).tolist() == want == segment_units(tuple(turns)).tolist()
    assert segment_units(iter(turns), topics=3).tolist() == segment_units(turns, topics=3).tolist()
    for bad in (None, 5, b"bytes", (t for t in [*turns, 5])):
        with pytest.raises(InputError, match="segment_units expects a sequence of str"):
            segment_units(bad)  # type: ignore[arg-type]


def test_cli_segment(tmp_path):
    src = tmp_path / "doc.md"
    src.write_text("## Cats\n\n" + _TOPICS["cats"] + "\n\n## Rockets\n\n" + _TOPICS["rockets"] + "\n", encoding="utf-8")
    run = [sys.executable, "-m", "logichunk.cli", "segment"]
    out = subprocess.run([*run, str(src), "--format", "jsonl"], capture_output=True, text=True, cwd=ROOT, check=True)
    recs = [json.loads(line) for line in out.stdout.splitlines()]
    text = src.read_text(encoding="utf-8")
    assert [r["start"] for r in recs] == [0, text.index("## Rockets")]
    assert "".join(r["text"] for r in recs) == text and all(r["method"] == "topic" for r in recs)
    lines = subprocess.run([*run, "-", "--units", "lines"], input="cats purr\ncats sleep\n", capture_output=True,
                           text=True, cwd=ROOT, check=True)
    assert lines.stdout.count("topic") == 1
    one = subprocess.run([*run, str(src), "--topics", "1", "--format", "json"], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert len(json.loads(one.stdout)["chunks"]) == 2  # a heading still opens its topic
    bad = subprocess.run([*run, str(src), "--topics", "0"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "topics must be a positive integer" in bad.stderr
    empty = subprocess.run([*run, str(tmp_path / "missing.txt")], capture_output=True, text=True, cwd=ROOT)
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1 and "Traceback" not in empty.stderr


@settings(max_examples=60, deadline=None)
@example(["One. ", "Two. ", "Three. "], 3, False)  # 4 topics asked of three sentences gave 1, where 3 gave 3
@given(st.lists(_SENT, min_size=1, max_size=8), st.integers(1, 10), st.booleans())
def test_more_topics_asked_never_give_fewer(units, k, hashed):
    """A count past the gaps there are gives every gap cut (the most topics there are), not the cost's own count."""
    emb = HashEmbedder() if hashed else None
    got = segment_units(units, embedder=emb, topics=k)
    more = segment_units(units, embedder=emb, topics=k + 1)
    assert got.size <= k - 1 and more.size >= got.size
    if k > len(units):  # (lines of sentences: a gap is glued only before a continuation, "However, ...")
        assert more.size == got.size == segment_units(units, embedder=emb, topics=len(units)).size


def test_cli_says_when_fewer_topics_than_asked_are_there(tmp_path, capsys):
    from logichunk.cli import main

    src = tmp_path / "doc.md"
    src.write_text(_TOPICS["cats"] + "\n\n" + _TOPICS["rockets"] + "\n", encoding="utf-8")
    assert main([str(x) for x in ("segment", src, "--topics", "5", "--format", "jsonl")]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 2 and "2 topic(s), not the 5 asked" in err and "1 such gap(s)" in err
    assert main([str(x) for x in ("segment", src, "--topics", "2", "--format", "jsonl")]) == 0
    assert capsys.readouterr().err == ""


def test_blank_lines_around_headings_alone_do_not_make_paragraphs():
    """A heading's own blank lines say nothing of how the text under it is laid out: lines stay cuttable."""
    cats = "\n".join(_TOPICS["cats"].split(". ") * 3)
    rockets = "\n".join(_TOPICS["rockets"].split(". ") * 3)
    text = "# Notes\n\n" + cats + "\n" + rockets + "\n"
    starts = [c.span.start for c in segment(text).roots()]
    assert starts == [0, text.index("Rockets")]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400),
       st.sampled_from(["sentences", "lines"]))
def test_any_text_gets_topics_that_tile_it(text, units):
    tree = segment(text, units=units)
    if text:
        check_tree(tree)
    assert "".join(tree.text_of(c) for c in tree.roots()) == text


def test_bad_shapes_of_input():
    table = "| a | b |\n|---|---|\n" + "| x | y |\n" * 5000          # one giant table
    run_on = "word " * 200_000                                       # no punctuation, no structure
    mixed = ("Русский текст. 中文句子。 English words. العربية. " * 2000)
    for text in (table, run_on, mixed):
        tree = segment(text)
        check_tree(tree)
        assert "".join(tree.text_of(c) for c in tree.roots()) == text


def _drifting_sections(sections: int, per: int, seed: int) -> list[str]:
    """Sections of disjoint vocabulary whose words drift from the first sentence to the last (a window
    of 20 of the section's 30 words, sliding), as long natural sections do."""
    rng = random.Random(seed)
    units = []
    for _ in range(sections):
        vocab = ["".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(3)) for _ in range(30)]
        for k in range(per):
            c = k * 10 // per
            units.append(" ".join(rng.choice(vocab[c : c + 20]) for _ in range(8)).capitalize() + ".")
    return units


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_long_drifting_sections_are_not_cut_at_every_shift_of_vocabulary(seed):
    """Three sections of 60 sentences, each drifting in vocabulary: the evidence finds the two section
    boundaries and nothing else, where the scatter of the lexical rows under the bare permutation price
    cuts inside the sections, at least four times in all; the length-raised price (what an embedder's
    vectors get) finds them with at most two more cuts."""
    units = _drifting_sections(3, 60, seed)
    assert segment_units(units).tolist() == [59, 119]
    sents = join_units(units)
    X = lexical_rows(sents.text, sents.starts, sents.ends)
    assert bd.segment_global(X, penalty=bd.null_penalty(X)).size >= 4
    raised = bd.segment_global(X, penalty=bd.segment_penalty(X)).tolist()
    assert {59, 119} <= set(raised) and len(raised) <= 4


def test_a_short_text_keeps_the_permutation_price():
    units = _drifting_sections(2, 30, 0)  # 60 sentences: at most the knee
    sents = join_units(units)
    X = lexical_rows(sents.text, sents.starts, sents.ends)
    assert bd.segment_penalty(X) == bd.null_penalty(X)
    assert segment_units(units).tolist() == [29]


def test_a_long_text_of_many_sections_keeps_them_all():
    """2,400 sentences in 40 drifting sections: the evidence finds every section boundary and, with the
    vocabulary of a topic's neighbourhood as its prior's support (EVIDENCE_WINDOW items), at most two
    cuts more where a section's words drift (over the whole text's vocabulary: none more). The
    length-raised price stops growing at the longest segment the decision allows (a longer
    text has more sections, not longer ones), so it finds them all too — a price grown with the whole
    length (15x the permutation price) finds fewer than half."""
    units = _drifting_sections(40, 60, 0)
    true = {60 * k - 1 for k in range(1, 40)}
    got = set(segment_units(units).tolist())
    assert true <= got and len(got) <= len(true) + 2
    sents = join_units(units)
    bags = item_bags(sents.text, sents.starts, sents.ends)
    assert set(bd.segment_evidence(bags, window=None).tolist()) == true
    X = lexical_rows(sents.text, sents.starts, sents.ends)
    raised = bd.segment_global(X, penalty=bd.segment_penalty(X)).tolist()
    assert true <= set(raised) and len(raised) <= len(true) + 2
    grown = bd.segment_global(X, penalty=bd.null_penalty(X) * (len(units) / bd.SEGMENT_KNEE) ** bd.SEGMENT_GROWTH)
    assert len(true & set(grown.tolist())) < len(true) // 2


def test_stats_say_which_vocabulary_the_words_were_judged_against():
    short = segment("Cats purr. Cats sleep.\n\nRain falls. Rain stops.")
    assert short.stats["vocabulary"] == "text"
    units = _drifting_sections(12, 40, 3)  # 12 x 40 x 8 = 3,840 items: more than the window
    long = segment("\n\n".join(units))
    assert long.stats["vocabulary"] == "local"
    assert "vocabulary" not in segment("\n\n".join(units), topics=3).stats


# --- no topic starts between two items of one list (a list is one step of the author's logic) ---

_ITEM_SENTS = [s.rstrip(".") + "." for t in _TOPICS.values() for s in t.split(". ")]


@st.composite
def _paragraphs_and_lists(draw):
    """A text of blank-line blocks: paragraphs, bulleted or numbered lists (tight or loose, an item with a nested
    item under it) and definition lists (a term over its definition indented deeper); and the offsets where an
    item of a list opens after the list's first (where no topic may start)."""
    sentences = st.lists(st.sampled_from(_ITEM_SENTS), min_size=1, max_size=3).map(" ".join)
    parts, inside, at = [], [], 0
    for kind in draw(st.lists(st.sampled_from(["para", "bullets", "numbers", "terms"]), min_size=1, max_size=5)):
        if parts:
            parts.append("\n\n")
            at += 2
        if kind == "para":
            block = draw(sentences)
        else:
            sep = draw(st.sampled_from(["\n", "\n\n"]))
            pieces = []
            for k in range(draw(st.integers(2, 4))):
                if k:
                    pieces.append(sep)
                    inside.append(at + sum(map(len, pieces)))
                if kind == "terms":
                    pieces.append(f"Option {k + 1}\n    " + draw(sentences))
                else:
                    pieces.append(("- " if kind == "bullets" else f"{k + 1}. ") + draw(sentences))
                    if draw(st.booleans()):
                        pieces.append("\n  - " + draw(sentences))
            block = "".join(pieces)
        parts.append(block)
        at += len(block)
    return "".join(parts) + "\n", inside


@settings(max_examples=60, deadline=None)
@given(_paragraphs_and_lists())
@example(("Cats purr softly.\n\n- Rockets burn fuel to climb. A rocket stage drops away in flight.\n\n"
          "- Bread needs flour and yeast. Dough rises while the yeast feeds.\n\n- Cats purr softly.\n\n"
          "Bakers knead bread dough before baking.\n", [87, 154]))
def test_no_topic_starts_between_two_items_of_one_list(case):
    """Whatever the items' words, a list's items share a topic: no topic opens at the second item of a list
    or later (the gap before its first item and after its last stay open; on the base, a loose list's items
    and a definition list's terms were cut apart where their vocabulary changed)."""
    text, inside = case
    tree = segment(text)
    check_tree(tree)
    starts = {c.span.start for c in tree.roots()}
    assert not starts & set(inside), (starts, inside)


def test_a_man_pages_options_are_one_list():
    """A man page's options (each a flag over its description indented deeper) are one definition list: the base
    cut between ``-c`` and ``-r`` and between ``-r`` and ``-b``, each description on its own subject. A
    paragraph between two terms parts their lists, and a heading at the margin (``NOTES``, read as a term over
    its indented text) joins no list of the options under the heading before it."""
    t = _TOPICS
    man = ("DESCRIPTION\n       " + t["cats"] + " " + t["cats"] + "\n\n"
           "OPTIONS\n       -c, --cats\n              " + t["cats"] + "\n\n"
           "       -r, --rockets\n              " + t["rockets"] + " " + t["rockets"] + "\n\n"
           "       -b, --bread\n              " + t["bread"] + " " + t["bread"] + "\n\n"
           "       Some words between the lists.\n\n"
           "       -x, --extra\n              " + t["bread"] + "\n\n"
           "       -y, --yeast\n              " + t["bread"] + "\n\n"
           "NOTES\n       " + t["rockets"] + "\n")
    sents = split_sentences(man)
    lay = layout(sents)
    opens = [int(np.searchsorted(sents.starts, man.index(flag))) for flag in ("-r,", "-b,", "-y,")]
    assert np.flatnonzero(lay.in_terms).tolist() == [i - 1 for i in opens]
    starts = [c.span.start for c in segment(man).roots()]
    for flag in ("-r, --rockets", "-b, --bread", "-y, --yeast"):
        assert man.index("       " + flag) not in starts and man.index(flag) not in starts

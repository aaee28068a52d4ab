"""Continuation markers (text/discourse.py): which sentences lean on the one before, and what the
layout and the chunkers make of them."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.discourse import (
    ANSWERS_EN,
    CONNECTIVES_EN,
    MARKERS_ZH_1,
    MARKERS_ZH_2,
    PRONOUNS_EN,
    continues,
    opens_with_marker,
)
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import CONTINUES, LINE, PARAGRAPH, SENTENCE, layout

_LEAD = " \t\r\n\u3000\"'“‘«「『（(【《["


def _reference(s: str) -> bool:
    """The rule written the slow, obvious way: one regex per sentence, on its first 24 characters."""
    s = s[:24]
    body = s.lstrip(_LEAD)
    m = re.match(r"([A-Za-z]+)(.?)", body, re.S)
    if m and len(m.group(1)) <= 12 and not re.match(r"[A-Za-z0-9-]", m.group(2)):
        word = m.group(1).lower()
        if word in CONNECTIVES_EN or word in PRONOUNS_EN:
            return True
        if word in ANSWERS_EN:
            solid = body[len(word): len(word) + 8].lstrip(_LEAD)
            return not solid or solid[0] in ",.!?;:…，。！？；："
    return any(body.startswith(w) for w in MARKERS_ZH_2) or body[:1] in MARKERS_ZH_1


def _spans(parts: list[str]) -> tuple[str, np.ndarray, np.ndarray]:
    text = "".join(parts)
    lens = np.array([len(p) for p in parts], dtype=np.int64)
    ends = np.cumsum(lens)
    return text, ends - lens, ends


def test_markers_and_lookalikes():
    yes = ["However, it rained.", "  “But why?” she asked.", "He's here.", "Yes, I do.", "yes", "No.", "Ok!",
           "Therefore", "And 2 more.", "Their house.", "但是他没来。", "他们走了。", "「但」字", "\n  Moreover x"]
    no = ["Henceforth we go.", "Yes I do", "No one knows.", "So-called things.", "Okay then", "It is.",
          "There is.", "This one.", "这是新的。", "Thus3 ", "- But a list item", "", "   "]
    text, a, b = _spans(yes + no)
    got = opens_with_marker(text, a, b)
    assert got.tolist() == [True] * len(yes) + [False] * len(no)


_WORDS = [*CONNECTIVES_EN, *PRONOUNS_EN, *ANSWERS_EN, *MARKERS_ZH_2, *MARKERS_ZH_1, "this", "it", "there", "This",
          "However", "YES", "sure", "henceforth", "Andrew", "他", "这", "但", "X", "no-one", "so3"]
_GLUE = [" ", ", ", ". ", "! ", "\n", "", "-", "'s ", "“", "(", "  ", "…", "。"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(_WORDS), st.sampled_from(_GLUE), st.text(max_size=3)),
                         max_size=6).map("".join), min_size=1, max_size=12))
def test_vectorised_rule_equals_the_reference(parts):
    text, a, b = _spans(parts)
    got = opens_with_marker(text, a, b)
    assert got.tolist() == [_reference(p) for p in parts]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(_WORDS), st.sampled_from(_GLUE), st.text(max_size=3)),
                         max_size=6).map("".join), min_size=1, max_size=12))
def test_the_numpy_passes_give_the_kernels_answers(parts):
    """Without the compiled pass (no compiler, ``LOGICHUNK_NATIVE=0``) the vectorised numpy passes run:
    the same answers as the kernel and the reference."""
    from unittest import mock

    from logichunk import native

    text, a, b = _spans(parts)
    assert native.available(), native.status()
    fast = opens_with_marker(text, a, b)
    with mock.patch.object(native, "markers", lambda *args, **kw: None):
        slow = opens_with_marker(text, a, b)
    assert fast.tolist() == slow.tolist() == [_reference(p) for p in parts]


def test_layout_marks_continuation_below_sentence_and_line_only():
    text = ("First sentence here. However, the second leans back. A third stands alone.\n"
            "They carry on in a new line.\n\nBut a new paragraph keeps its break.\n\n"
            "```\nthen\nfi\n```\n")
    sents = split_sentences(text)
    lay = layout(sents)
    starts = sents.starts.tolist()
    gap_before = {text[s:s + 12]: lay.strength[i - 1] for i, s in enumerate(starts) if i}
    assert gap_before["However, the"] == CONTINUES
    assert gap_before["A third stan"] == SENTENCE
    assert gap_before["They carry o"] == CONTINUES  # a line break too
    assert gap_before["But a new pa"] >= PARAGRAPH  # the author's blank line stays
    code = [lay.strength[i - 1] for i, s in enumerate(starts) if i and text[s:s + 4] == "then"]
    assert all(v == LINE for v in code)  # code is not prose
    assert continues(sents).sum() >= 3


def test_chunks_do_not_open_on_a_continuation_when_another_cut_fits():
    # one line of sentences: each pair is "X is a thing. It/He/However ..." — the cut that keeps every
    # chunk under the limit can always fall before a sentence that does not lean back
    pairs = [f"Topic {w} opens with a plain sentence about {w}. However, {w} is then explained further."
             for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")]
    text = " ".join(pairs)
    tree = chunk(text, max_size=200, levels=1)
    leaves = [tree.text_of(c) for c in tree.leaves()]
    assert "".join(leaves) == text and len(leaves) > 1
    assert not any(opens_with_marker(t, np.array([0]), np.array([len(t)]))[0] for t in leaves[1:])

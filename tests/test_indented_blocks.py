"""A line of an indented example is no heading (:mod:`logichunk.text.indented_blocks`): a man page's INI example
(``[imap]`` over its keys), a grammar's rule, a configuration's line is one line of its block, so no section opens
there and no chunk cuts the example in two; a title that stands alone between blank lines, centred on the page,
keeps its reading."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout

MAN = """NAME
       git-imap-send - Send a collection of patches from stdin to an IMAP folder

DESCRIPTION
       This command uploads a mailbox generated with git format-patch into an IMAP drafts folder. This allows
       patches to be sent as other email is when using mail clients that cannot read mailbox files directly.

EXAMPLES
       Using tunnel mode:

           [imap]
               folder = "INBOX.Drafts"
               tunnel = "ssh -q -C user@example.com /usr/bin/imapd ./Maildir 2> /dev/null"

       Using direct mode:

           [imap]
               folder = "INBOX.Drafts"
               host = imap://imap.example.com
               user = bob
               pass = p4ssw0rd

       Using Gmail's IMAP interface:

           [imap]
               folder = "[Gmail]/Drafts"
               host = imaps://imap.gmail.com
               user = user@gmail.com
               port = 993

SEE ALSO
       git-format-patch(1), git-send-email(1), mbox(5)
"""


def _headings(text: str) -> list[str]:
    s = split_sentences(text)
    lay = layout(s)
    return [text[int(s.starts[i]) : int(s.ends[i])].strip() for i in np.flatnonzero(lay.heading)]


def test_a_man_pages_ini_example_opens_no_section_and_no_chunk() -> None:
    assert "[imap]" not in _headings(MAN)
    lines = [MAN.index("\n", k) + 1 for k in range(len(MAN)) if MAN.startswith("\n           [imap]", k)]
    assert len(lines) == 3
    tree = chunk(MAN, max_size=500)
    starts = {c.start for c in tree.chunks.values()}
    assert not starts & set(lines)  # (on the base, a chunk opened at each example's "[imap]", its lead-in cut off)
    for k, lead in enumerate(("Using tunnel mode:", "Using direct mode:", "Using Gmail's IMAP interface:")):
        # each example's smallest chunk holding its "[imap]" holds its lead-in too
        leaf = min((c for c in tree.chunks.values() if c.start <= lines[k] < c.end), key=lambda c: c.end - c.start)
        assert lead in MAN[leaf.start : leaf.end]


def test_an_indented_ini_file_section_still_heads_at_the_margin() -> None:
    ini = "[server]\nhost = example.com\nport = 80\n\n[client]\nretries = 3\n"
    assert "[client]" in _headings(ini)


_WORD = st.sampled_from(["alpha", "beta", "gamma", "delta", "mode", "cache", "folder", "host", "remote", "drafts"])
_TITLE = st.lists(st.sampled_from(["Second", "Part", "Great", "River", "North", "Winter", "House", "Garden"]),
                  min_size=1, max_size=4).map(" ".join)
_BLOCK_LINE = st.one_of(
    st.builds(lambda w: f"[{w}]", _WORD),
    st.builds(lambda a, b: f"{a} = {b}", _WORD, _WORD),
    _TITLE,
    st.builds(lambda a, b: f"'{a}' SP <{b}> LF", _WORD, _WORD),
)


def _prose(words: list[str]) -> str:
    return " ".join(["The", *words, "is", "set", "here."]) + " " + " ".join(["It", *words[::-1], "stays", "on."])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(margin=st.sampled_from([0, 3, 7]), extra=st.integers(2, 8), deeper=st.lists(st.integers(0, 8), min_size=1,
       max_size=4), block=st.lists(_BLOCK_LINE, min_size=5, max_size=5), title=_TITLE,
       words=st.lists(_WORD, min_size=3, max_size=8))
def test_a_block_line_is_no_heading_a_lone_centred_title_is(margin: int, extra: int, deeper: list[int],
                                                             block: list[str], title: str, words: list[str]) -> None:
    pad = " " * margin
    first = margin + extra  # (the block deeper than the text's body; every later line as deep or deeper)
    lines = [" " * first + block[0]] + [" " * (first + d) + b for d, b in zip(deeper, block[1:], strict=False)]
    centred = " " * ((72 - len(title)) // 2) + title
    para = pad + _prose(words)
    text = "\n\n".join([para + " Use this:", "\n".join(lines), para, centred, para]) + "\n"
    heads = _headings(text)
    depth = [first] + [first + d for d in deeper[: len(lines) - 1]]
    at = text.index("\n".join(lines))
    offsets = [at + sum(len(x) + 1 for x in lines[:k]) + depth[k] for k in range(len(lines))]
    inside = {offsets[k] for k in range(len(lines))  # (every line right over or under it as deep or deeper)
              if all(depth[j] >= depth[k] for j in (k - 1, k + 1) if 0 <= j < len(lines))}
    assert offsets[0] in inside
    s = split_sentences(text)
    assert not set(s.starts[layout(s).heading].tolist()) & inside
    assert title in heads


_P = "Call me Ishmael. Some years ago I thought I would sail about a little and see the watery part of the world.\n"


@pytest.mark.parametrize("head", [
    ("                     CHAPTER I.", "                      Loomings."),  # (centred, the second line deeper)
    ("  CHAPTER II.", "  The Pool of Tears"),  # (both indented as deep: a division's word makes it a title)
    ("        Part One", "        The Old Pier"),
])
def test_an_indented_chapter_heading_of_two_lines_is_still_a_heading(head: tuple[str, str]) -> None:
    text = _P + "\n" + "\n".join(head) + "\n\n" + _P
    assert head[0].strip() in _headings(text)

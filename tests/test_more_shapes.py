"""Document shapes a new user brought in the thirty-second session (GNU NEWS outlines, org's source blocks, legal
clauses' run-in headings, an IRC client's day lines): each reading fixed from the format's own convention, each
test failing on the reading before it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.line_kinds import fence_spans
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout
from structure_helpers import assert_headings_open_chunks

# --- GNU NEWS in Emacs's outline mode -------------------------------------------------------------------------

NEWS = ("GNU frobutils NEWS                                    -*- outline -*-\n\n"
        "* Noteworthy changes in release 9.1 (2022-04-15) [stable]\n\n"
        "** Bug fixes\n\n"
        "  chmod -R no longer exits with error status when encountering symlinks.\n"
        "  All files would be processed correctly, but the exit status was incorrect.\n"
        "  [bug introduced in frobutils-9.0]\n\n"
        "  'cp --preserve=ownership A B' no longer ignores the umask when creating B.\n"
        "  [bug introduced in frobutils-6.7]\n\n"
        "** New features\n\n"
        "  cksum now supports the -a (--algorithm) option to select any\n"
        "  digest algorithm the other checksum utilities support.\n\n"
        "* Noteworthy changes in release 9.0 (2021-09-24) [stable]\n\n"
        "** Changes in behavior\n\n"
        "  cp now uses the copy_file_range syscall if available, and falls back\n"
        "  to a plain read and write where it is not.\n\n"
        "** Improvements\n\n"
        "  ls -l now better aligns abbreviated months containing digits.\n"
        "  Previously they were aligned to the left of their column.\n\n")


@pytest.mark.parametrize("mode_line", ["-*- outline -*-", "-*- mode: outline; coding: utf-8 -*-", "-*- org -*-",
                                       "-*- Mode: Org -*-"])
def test_a_news_file_in_outline_mode_has_its_stars_for_headings(mode_line):
    """GNU's NEWS files name Emacs's outline mode on their first line; their ``* Noteworthy changes ...`` and ``**
    Bug fixes`` lines are the outline's headings (they were bullets or plain lines: 328 chunks of coreutils' NEWS
    ended in one at 500)."""
    text = NEWS.replace("-*- outline -*-", mode_line)
    sents = split_sentences(text)
    lay = layout(sents)
    texts = sents.texts()
    for title in ("* Noteworthy changes in release 9.1", "** Bug fixes", "** New features", "** Improvements"):
        k = next(i for i, t in enumerate(texts) if t.startswith(title))
        assert lay.heading[k] and lay.no_cut[k], title
    heads = {text.index(t) + len(t) for t in ("** Bug fixes\n\n", "** New features\n\n", "** Improvements\n\n")}
    for max_size in (300, 450, 600):
        tree = chunk(text, max_size=max_size)
        assert_headings_open_chunks(tree, text, (max_size, max_size // 2, max_size // 5))
        assert not heads & {c.span.end for c in tree.roots()}, max_size


@pytest.mark.parametrize("first", ["GNU frobutils NEWS", "GNU frobutils NEWS  -*- coding: utf-8 -*-",
                                   "Notes -*- mode: text -*-", "The outline of the -*- talk"])
def test_stars_without_an_outline_mode_line_stay_what_they_were(first):
    """Without the mode line (or with one naming another mode) the star lines are read as before: a NEWS file
    may use "**" for its items (wget's does), so only the author's own declaration makes them headings."""
    text = NEWS.replace("GNU frobutils NEWS                                    -*- outline -*-", first)
    lay = layout(split_sentences(text))
    sents = split_sentences(text)
    k = next(i for i, t in enumerate(sents.texts()) if t.startswith("** Bug fixes"))
    assert not lay.heading[k]


def test_the_mode_line_read():
    """The mode line's mode, alone or as ``mode:``, on the first line or the second under a ``#!`` line."""
    from logichunk.text.structure import outline_mode

    assert outline_mode("NEWS -*- outline -*-\n* a\n") and outline_mode("#!/bin/sh\n# -*- mode: org -*-\n")
    assert not outline_mode("NEWS -*- coding: utf-8 -*-\n") and not outline_mode("x\n-*- outline -*-\n")
    assert not outline_mode("-*- outlines -*-\n") and not outline_mode("")


def test_an_outlines_star_items_stay_items():
    """GNU's older NEWS entries list their items under "*" in the same outline file: star lines of one depth right
    under each other, or one that ends as a sentence does, title nothing and stay items (gzip's "Major changes from
    1.1 to 1.1.1." over "* Fix serious bug in vms.c." and "* Add workaround in configure.in")."""
    old = ("Major changes from 1.1 to 1.1.1.\n* Fix serious bug in vms.c (affects Vax/VMS only).\n"
           "* Added --ascii option.\n* Add workaround in configure.in for Ultrix (quote eval argument)\n\n"
           "Major changes from 1.0.7 to 1.1.\n* Use .gz suffix by default, add --suffix option.\n\n")
    text = NEWS + old
    sents = split_sentences(text)
    lay = layout(sents)
    for i, t in enumerate(sents.texts()):
        if t.startswith(("* Fix", "* Added", "* Add workaround", "* Use .gz")):
            assert not lay.heading[i], t


def test_an_indented_star_line_in_an_outline_is_no_heading():
    """In org and outline mode a heading's stars open its line; ``  * item`` indented is a list's bullet."""
    text = NEWS.replace("  [bug introduced in frobutils-9.0]\n", "  * see also chown -R\n")
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.startswith("* see also"))
    assert not lay.heading[k]


# --- org-mode's blocks are fences ------------------------------------------------------------------------------

ORG_SRC = ("#+TITLE: Release planning\n\n* Embedding cache\n"
           "Cache embeddings by model name and content hash. The cache is shared between stores on one machine.\n\n"
           "#+BEGIN_SRC python\ndef cache_key(model: str, text: str) -> str:\n\n"
           "    return hashlib.sha256(f\"{model}\\0{text}\".encode()).hexdigest()\n#+END_SRC\n\n"
           "* Risks\n- pgvector 0.8 changes the default index build; test the migration on a copy first.\n")


@pytest.mark.parametrize("case", [str, str.lower])
def test_an_org_source_block_is_a_fence(case):
    """``#+BEGIN_SRC`` ... ``#+END_SRC`` (org's fence, any case) is one block: its blank line is a line of code, its
    opening line stays with the first line of code and its closing line with the last, and a block that fits is
    never cut (``#+BEGIN_SRC python`` ended a chunk of the tester's notes at 200)."""
    text = ORG_SRC.replace("#+BEGIN_SRC", case("#+BEGIN_SRC")).replace("#+END_SRC", case("#+END_SRC"))
    a = text.index(case("#+BEGIN_SRC"))
    b = text.index(case("#+END_SRC")) + len("#+END_SRC")
    assert (a, b) in fence_spans(text)
    for max_size in (100, 160, 300):
        ends = {c.span.end for c in chunk(text, max_size=max_size) if c.span.end < len(text)}
        block = b - a
        inside = {e for e in ends if a < e < b}
        if block <= max_size // 5:
            assert not inside, max_size
        assert text.index("def cache_key") not in ends and text.index(case("#+END_SRC")) not in ends, max_size


@pytest.mark.parametrize("text", ["#+BEGIN_SRC python\nprint(1)\n",  # unclosed: left as text
                                  "# a comment #+BEGIN_SRC mention\nx = 1\n#+END_SRC\n",  # not opening its line
                                  "#+BEGIN_SRC\nx\n#+END_EXAMPLE\n"])  # another block's end
def test_org_block_lines_that_open_no_block(text):
    assert fence_spans(text) == []


# --- a licence's and a contract's numbered clause titles ------------------------------------------------------

GPL = ("  0. Definitions.\n\n"
       "  \"This License\" refers to version 3 of the GNU General Public License.\n\n"
       "  \"Copyright\" also means copyright-like laws that apply to other kinds of works, such as semiconductor "
       "masks.\n\n"
       "  1. Source Code.\n\n"
       "  The \"source code\" for a work means the preferred form of the work for making modifications to it.\n\n"
       "  \"Object code\" means any non-source form of a work.\n\n"
       "  2. Basic Permissions.\n\n"
       "  All rights granted under this License are granted for the term of copyright on the Program, and are "
       "irrevocable provided the stated conditions are met.\n\n")


def test_a_numbered_title_with_a_full_stop_alone_is_a_heading():
    """A licence titles its sections ``  1. Source Code.`` alone between blank lines: a heading, full stop and all
    (it was read as prose and ended GPL-3's chunks: 24 at 200)."""
    sents = split_sentences(GPL)
    lay = layout(sents)
    texts = sents.texts()
    for title in ("0. Definitions.", "1. Source Code.", "2. Basic Permissions."):
        k = next(i for i, t in enumerate(texts) if t.lstrip().startswith(title))
        assert lay.heading[k] and lay.no_cut[k], title
    heads = {GPL.index(t) + len(t) + 2 for t in ("1. Source Code.\n\n", "2. Basic Permissions.\n\n")}
    for max_size in (150, 250, 400):
        tree = chunk(GPL, max_size=max_size)
        assert not heads & {c.span.end for c in tree.roots()}, max_size


@pytest.mark.parametrize("line", ["1. Preheat the oven.", "12 Monkeys.", "2. It works, mostly.", "3. See above."])
def test_a_numbered_sentence_alone_stays_prose(line):
    """A numbered step or a sentence alone between blank lines is no title: not written as one, a bare number
    without its dot, a comma or a lower-case word of four letters."""
    text = f"The steps follow in order.\n\n{line}\n\nThe oven takes ten minutes to warm up and the tray goes in last.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.startswith(line[:4]))
    assert not lay.heading[k] and not lay.no_cut[k]


CONTRACT = ("ARTICLE 2\nLICENSE GRANT\n\n"
            "2.1 Grant. Subject to the terms of this Agreement, Licensor grants Licensee a non-exclusive, "
            "non-transferable license during the Term to install and use the Software for internal purposes.\n\n"
            "2.2 Reservation of Rights. All rights not expressly granted to Licensee under this Agreement are reserved "
            "by Licensor.\n\n"
            "   3. Grant of Patent License. Subject to the terms and conditions of this License, each Contributor "
            "hereby grants to You a perpetual, worldwide, non-exclusive patent license.\n\n"
            "Section 4.2 Termination for Cause. Either party may terminate this Agreement upon written notice if the "
            "other party materially breaches it.\n\n")


@pytest.mark.parametrize("title", ["2.1 Grant. ", "2.2 Reservation of Rights. ", "3. Grant of Patent License. ",
                                   "Section 4.2 Termination for Cause. "])
def test_a_clauses_run_in_title_stays_with_its_text(title):
    """``2.1 Grant. Subject to ...``: the clause's title is a sentence of its own to the splitter; it titles the
    text after it on its line and never ends a chunk (``2.1 Grant.`` ended one of the tester's contract at 200,
    Apache-2.0's ``2. Grant of Copyright License.`` eight at 200 to 1000)."""
    sents = split_sentences(CONTRACT)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.lstrip() == title)
    assert lay.no_cut[k]
    end = int(sents.ends[k])
    for max_size in (250, 400, 700):  # (each title and its clause's first sentence fit together)
        tree = chunk(CONTRACT, max_size=max_size)
        assert_headings_open_chunks(tree, CONTRACT, (max_size, max_size // 2, max_size // 5))
        assert end not in {c.span.end for c in tree.roots()}, max_size


@pytest.mark.parametrize("text", ["1. Preheat the oven. Then add the flour and stir.\n",
                                  "12 Monkeys. The film came out in 1995 and did well.\n",
                                  "In 2019. Then the rules changed again, as they do.\n"])
def test_a_numbered_sentence_before_another_is_no_run_in_title(text):
    sents = split_sentences(text)
    lay = layout(sents)
    assert len(sents) < 2 or not lay.no_cut[0]


# --- irssi's day lines ------------------------------------------------------------------------------------------

IRC = ("--- Log opened Tue Mar 12 09:00:01 2024\n"
       "[09:01] <alice> morning all. anyone looked at the failing CI on main?\n"
       "[09:02] <bob> yes, it is the postgres fixture again. pgserver could not bind the port.\n"
       "[09:03] <alice> ugh. can we give each job a random port?\n"
       "[09:04] <carol> we already do for sqlite, but the pg fixture hardcodes it. I'll send a patch.\n"
       "--- Day changed Wed Mar 13 2024\n"
       "[08:55] <bob> reviewed #512. two comments, otherwise fine.\n"
       "[08:58] <dave> thanks, fixing now.\n"
       "[09:20] <dave> pushed. CI is green.\n"
       "--- Log closed Wed Mar 13 10:20:44 2024\n")


def test_an_irssi_logs_day_line_opens_the_day():
    """irssi writes ``--- Day changed Wed Mar 13 2024`` (no marks after it, unlike a framed title) over the day's
    lines: it opens them and never ends a chunk; ``--- Log closed`` is no heading."""
    sents = split_sentences(IRC)
    lay = layout(sents)
    texts = sents.texts()
    for line in ("--- Log opened", "--- Day changed"):
        k = next(i for i, t in enumerate(texts) if t.startswith(line))
        assert lay.heading[k], line
    k = next(i for i, t in enumerate(texts) if t.startswith("--- Log closed"))
    assert not lay.heading[k]
    day = IRC.index("--- Day changed")
    for max_size in (150, 300):
        tree = chunk(IRC, max_size=max_size)
        assert day + len("--- Day changed Wed Mar 13 2024\n") not in {c.span.end for c in tree.roots()}, max_size


# --- a forced cut inside an over-long line: not inside a token at its ASCII ":" or "," --------------------------

APT = ("Install: lsb-release:amd64 (12.0-1), libssh2-1:amd64 (1.10.0-3+b1, automatic), libperl5.36:amd64 "
       "(5.36.0-7+deb12u2, automatic), libkeyutils1:amd64 (1.6.3-2, automatic), libcurl4:amd64 (7.88.1-10+deb12u12, "
       "automatic), git:amd64 (1:2.39.5-0+deb12u2), gpg:amd64 (2.2.40-1.1, automatic), netbase:amd64 (6.4, automatic)\n")


def test_a_forced_cut_falls_at_a_clause_not_inside_a_token():
    """apt's history lines are one sentence of hundreds of characters; tier 4 cut them after the ASCII ":" of
    ``libcurl4:amd64`` and ``1:2.39`` (196 such cuts in this machine's history.log at 200). A Latin clause's ``:`` or
    ``,`` has a space after it: one inside a token is no clause's end, so the cut moves to a ``, `` or a space."""
    from logichunk.boundaries.forced import break_priorities

    pri = break_priorities(APT, 0, len(APT))
    for token in ("libcurl4:amd64", "1:2.39", "12.0-1)"):
        k = APT.index(token) + token.index(":" if ":" in token else ")")
        assert pri[k] < 3, token  # (the pair after the mark: offset k + 1, index k)
    assert pri[APT.index("(12.0-1), ") + len("(12.0-1), ") - 1] == 3  # (", " still ends a clause)
    for max_size in (100, 200):
        for c in chunk(APT, max_size=max_size):
            if c.span.end < len(APT):
                assert APT[c.span.end - 1] in " (", (max_size, APT[c.span.end - 10 : c.span.end + 5])


# --- the session's shapes mixed at random: spans tile, headings open chunks -----------------------------------

SHAPE_PIECES = ["GNU x NEWS  -*- outline -*-\n\n", "* Noteworthy changes in release 1.2\n\n", "** Bug fixes\n\n",
                "* Fix a crash.\n", "* Added --ascii option\n", "  * nested item\n", "#+BEGIN_SRC python\n",
                "#+END_SRC\n", "#+begin_example\n", "x = 1\n\n", "2.1 Grant. ", "  1. Source Code.\n\n",
                "Section 4.2 Termination for Cause. ", "12 Monkeys. ", "--- Day changed Wed Mar 13 2024\n",
                "--- Log opened Tue Mar 12 09:00:01 2024\n", "[09:01] <bob> yes, it is the fixture again.\n",
                "Subject to the terms of this Agreement, Licensor grants a license. ", "libcurl4:amd64 (1:2.39, auto), ",
                "The release should make ingestion reliable, and users report failures.\n\n", "\n", "\n\n", " "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SHAPE_PIECES), min_size=1, max_size=30).map("".join), st.sampled_from([60, 150, 400]))
def test_the_sessions_shapes_keep_the_invariants(text, max_size):
    sizes = (max_size, max_size // 2, max_size // 5)
    tree = chunk(text, sizes=sizes)
    roots = tree.roots()
    assert "".join(text[c.span.start : c.span.end] for c in roots) == text
    for c in tree:
        kids = tree.children(c.id)
        if kids:
            assert kids[0].span.start == c.span.start and kids[-1].span.end == c.span.end
            assert all(a.span.end == b.span.start for a, b in zip(kids, kids[1:], strict=False))
    assert_headings_open_chunks(tree, text, sizes)

"""Document shapes a tester brought (LaTeX sources, screenplays, reStructuredText guides): the heading and
lead-in rules read on their own markup. Each test fails on the reading before it was fixed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import LINE, SECTION, layout

PARA = ("We implemented the schedule in C and compared it with the merge rule and with the optimal tree on three "
        "families of inputs. Table~\\ref{tab:results} summarises the results.\n\n")


def _ends(tree) -> set[int]:
    return {c.span.end for c in tree}


@pytest.mark.parametrize("markup", ["\\label{sec:exp}", "\\label{sec:exp}\\index{experiments}",
                                    "  \\label{sec:exp}"])
def test_a_latex_label_under_a_section_goes_with_the_heading(markup):
    """``\\section{Experiments}`` over ``\\label{sec:exp}``: the label is markup, not content; the heading goes on
    over it to its first sentence, so no chunk ends with the two (it did at every level: the label was read as
    a paragraph the heading titled)."""
    text = f"\\section{{Experiments}}\n{markup}\n\n" + PARA + "\\section{Results}\n\n" + PARA
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if "\\label" in t)
    assert lay.no_cut[k - 1] and lay.no_cut[k]  # glued to the heading and to what follows
    label_end = int(sents.ends[k])
    for max_size in (200, 300, 500):  # (the heading run and the first sentence fit together)
        assert label_end not in _ends(chunk(text, max_size=max_size)), max_size


def test_latex_environment_lines_open_and_close_what_they_hold():
    """``\\begin{abstract}`` stays with the abstract's first sentence and ``\\end{abstract}`` with its last: no
    chunk ends with a ``\\begin`` line or opens with an ``\\end`` line."""
    abstract = ("Merging sorted runs is the inner loop of every stable sort. We show that a simple schedule is "
                "within a constant of the optimum. It needs no extra memory. ")
    text = ("\\begin{abstract}\n" + abstract * 2 + "\n\\end{abstract}\n\n\\section{Introduction}\n\n" + PARA * 2)
    begin_end = text.index("\\begin{abstract}\n") + len("\\begin{abstract}\n")
    end_start = text.index("\\end{abstract}")
    for max_size in (120, 200, 400):
        tree = chunk(text, max_size=max_size)
        assert begin_end not in _ends(tree), max_size
        assert end_start not in {c.span.start for c in tree}, max_size


@pytest.mark.parametrize("line", ["\\label{x} and some words", "\\textbf{Note:} read this first",
                                  "\\begin{itemize} \\item one"])
def test_a_latex_line_with_text_is_no_markup_line(line):
    """Only a line of environments' edges and labels alone is markup; a command with text is content."""
    text = f"A paragraph before it, closing a thought.\n\n{line}\n\nA paragraph after it, opening a new one.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.startswith(line[:6]))
    assert not lay.no_cut[k]


ACTION = "A cramped room. A coal stove glows in the corner. The stationmaster fills out a ledger by lamplight.\n\n"


@pytest.mark.parametrize("slug", ["INT. KITCHEN - NIGHT", "EXT. SLIPWAY - LATER", "INT./EXT. CAR - DAY",
                                  "EXT/INT. STATION PLATFORM - CONTINUOUS", "INT. MRS. HALE'S PARLOUR - DAY"])
def test_a_screenplay_scene_heading_opens_its_scene(slug):
    """A scene heading reads as two sentences to the splitter (``INT.`` ends one); it is a heading all the
    same: it opens its scene and never ends a chunk (it ended the scene before it: 32 of 201 at level 1)."""
    text = ("She walks out of the kitchen and closes the kitchen door behind her.\n\n" + slug + "\n\n" + ACTION) * 3
    sents = split_sentences(text)
    lay = layout(sents)
    first = text.index(slug)
    ks = [i for i in range(len(sents)) if first <= int(sents.starts[i]) < first + len(slug)]
    assert lay.heading[ks].all()
    assert lay.strength[ks[0] - 1] == SECTION
    slug_ends = {text.index(slug, p) + len(slug) + 2 for p in range(0, len(text)) if text.startswith(slug, p)}
    for max_size in (120, 200, 500):
        assert not slug_ends & _ends(chunk(text, max_size=max_size)), max_size


@pytest.mark.parametrize("line", ["INT. He walked in. Then he sat down.", "EXTRA. KITCHEN, and a long line of prose.",
                                  "INT. kitchen - night, he said, and left."])
def test_lines_like_scene_headings_that_are_none(line):
    """Prose, another word, lower case: no scene heading (nor any title line)."""
    text = f"Words before it close a paragraph here.\n\n{line}\n\n{ACTION}"
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.startswith(line[:3]))
    assert not lay.heading[k]


def test_a_literal_blocks_prose_lead_in_gives_way_to_a_deeper_limit():
    """``... account::`` over its literal block is a paragraph that introduces the block: below level 1 its bond
    gives way to the limit (glued, it made a leaf of 207 characters under 200 holding several sentences), and
    the block, which fits, stays whole."""
    text = ("Installation\n============\n\nCreate a system user\n--------------------\n\n"
            "Harbour should run under its own unprivileged account::\n\n"
            "    sudo useradd --system --home /opt/harbour --shell /usr/sbin/nologin harbour\n"
            "    sudo mkdir -p /opt/harbour\n    sudo chown harbour: /opt/harbour\n\n")
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.rstrip().endswith("account::"))
    assert lay.no_cut[k] and lay.lead_in[k] and lay.introduces is not None and lay.introduces[k]
    tree = chunk(text, sizes=(500, 200))
    block = text.index("    sudo useradd")
    for c in tree:
        size = c.span.end - c.span.start
        if c.level == 2:
            assert size <= 200, (c.id, size)
    assert block in {c.span.start for c in tree if c.level == 2}


def test_a_bare_literal_mark_stays_markup():
    """``::`` alone on its line over a literal block is markup: its bond to the block stays a strong one."""
    text = "Run this:\n\n::\n\n    make install\n    make test\n\nThen read on.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.strip() == "::")
    assert lay.no_cut[k] and not lay.lead_in[k]
    assert lay.strength[k] <= LINE


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["\\section{A}", "\\label{a}", "\\begin{quote}", "\\end{quote}", "INT. ROOM - DAY",
                                 "Words of a sentence.", "More words here, and a clause.", "", "    code line"]),
                min_size=1, max_size=30),
       st.integers(min_value=20, max_value=300))
def test_spans_tile_every_shape(lines, max_size):
    """Whatever the mix of these lines, the roots tile the text exactly within the limit (no line here is one
    character over it), and every chunk's children tile it."""
    text = "\n".join(lines) + "\n"
    tree = chunk(text, max_size=max_size)
    roots = sorted((c.span.start, c.span.end) for c in tree.roots())
    assert roots[0][0] == 0 and roots[-1][1] == len(text)
    assert all(roots[i][1] == roots[i + 1][0] for i in range(len(roots) - 1))
    assert all(b - a <= max_size for a, b in roots)
    for c in tree:
        kids = sorted((k.span.start, k.span.end) for k in tree.children(c.id))
        if kids:
            assert kids[0][0] == c.span.start and kids[-1][1] == c.span.end
            assert all(kids[i][1] == kids[i + 1][0] for i in range(len(kids) - 1))


MESSAGE = ("Thanks for the site visit yesterday. Could you update the quote with the changes we discussed? "
           "The server room needs 48 ports, and the meeting rooms two more outlets each.\n\nBest,\nPriya\n\n")


@pytest.mark.parametrize("header", [
    "From: Priya Natarajan <priya@example.org>\nTo: Tom Becker <tom@example.org>\nDate: Fri, 10 May 2024 11:02\n"
    "Subject: Cabling quote\n",
    "发件人：张伟 <zhang@example.cn>\n收件人：李娜 <li@example.cn>\n主题：关于报价的修改\n",
    "from: a@example.org\nsubject: hello\n"])
def test_a_mail_header_stays_with_its_message(header):
    """A message's header fields over a blank line and the message: the header never ends a chunk (it ended a
    level-1 chunk 78 times in 300K of a tester's mail threads, the body opening the next)."""
    text = (header + "\n" + MESSAGE) * 4
    sents = split_sentences(text)
    lay = layout(sents)
    last = header.rstrip("\n").split("\n")[-1]
    ks = [i for i, t in enumerate(sents.texts()[:-1]) if t.rstrip("\n") == last]
    assert ks and all(lay.no_cut[k] for k in ks)
    header_ends = {p + len(header) + 1 for p in range(len(text)) if text.startswith(header, p)}
    for max_size in (300, 500):
        assert not header_ends & {c.span.end for c in chunk(text, max_size=max_size).roots()}, max_size


def test_one_header_field_is_no_header():
    """One field alone ("Date: 10 May 2024" over a paragraph) is no mail header; two are."""
    from logichunk.text.structure import _mail_headers

    for text, want in (("Notes.\n\nDate: 10 May 2024\n\nWe met at ten.\n", 0),
                       ("Notes.\n\nDate: 10 May 2024\nSubject: plan\n\nWe met at ten.\n", 1)):
        sents = split_sentences(text)
        brk = np.asarray(sents.breaks, np.int8)
        after = np.append(brk, 2)
        got = _mail_headers(text, sents.starts, sents.ends, after, np.arange(len(sents)))
        assert got.size == want, text


def test_a_quoted_blank_line_parts_a_quotes_paragraphs():
    """In a reply that quotes the message before (no blank line anywhere: the quote's blank lines are ">"), the
    attribution and the quote's paragraphs are read as paragraphs: the limit cut the attribution "... wrote:" from
    the quote that fit with it, because the whole thread read as one paragraph and what the attribution introduced
    ran to the end."""
    quote = ("On Mon, 13 May 2024 at 17:40, Tom Becker <tbecker@example.org> wrote:\n> Hi Priya,\n>\n"
             "> Please find attached the revised quote. Changes from v2:\n>\n> - Cat6A on the main floor\n"
             "> - two more wall outlets in meeting room B\n>\n> The total comes to EUR 18,450 excluding VAT.\n>\n"
             "> Kind regards,\n> Tom\n>\n")
    older = ("> On Fri, 10 May 2024 at 11:02, Priya <priya@example.org> wrote:\n>> Hi Tom,\n>>\n"
             ">> Following our site visit yesterday, could you update the quote with the changes we discussed? "
             "Cat6A on the main floor, two more outlets, and the labour for the weekend.\n>>\n"
             ">> Also, a reminder that the server room needs 48 ports.\n>>\n>> Thanks,\n>> Priya\n")
    text = quote + older
    sents = split_sentences(text)
    lay = layout(sents)
    texts = sents.texts()
    blanks = [i for i, t in enumerate(texts[:-1]) if not t.strip(" \r\n>")]
    assert blanks and all(lay.strength[i - 1] >= 3 for i in blanks if i > 0 and not lay.no_cut[i - 1])
    roots = chunk(text, max_size=len(quote) + 20).roots()
    attribution_end = text.index("wrote:\n") + len("wrote:\n")
    assert attribution_end not in {c.span.end for c in roots}


@pytest.mark.parametrize("line, title", [
    ("Keywords: information retrieval, BM25, long documents, question answering", False),
    ("关键词：信息检索；长文档；问答", False),
    ("Index terms: sorting, merging, stable sorts", False),
    ("Chapter 3: Lions, Tigers, and Bears", True),
    ("Part Two: The Return", True)])
def test_a_field_and_its_values_is_no_title(line, title):
    """A paper's "Keywords: ..." line between blank lines was read as a title: with "1 Introduction" under it the
    two made a heading run that stood alone at level 1. A title's list capitalises its words."""
    text = f"Abstract text closes here.\n\n{line}\n\n1 Introduction\n\nQuestion answering over long documents is hard.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.startswith(line[:5]))
    assert bool(lay.heading[k]) is title


def _log(n: int) -> str:
    lines = []
    for k in range(n):
        t = f"2024-05-03T14:{k // 60:02d}:{k % 60:02d}.{k:03d}"
        lines.append(f"{t} INFO  [http] GET /api/v1/orders/{k} 200 {k % 50}ms")
        if k % 7 == 3:
            lines.append(f"{t} ERROR [billing] request failed")
            lines.append('java.lang.NullPointerException: Cannot invoke "Invoice.total()" because "inv" is null')
            lines += [f"\tat com.acme.billing.InvoiceService.step{j}(InvoiceService.java:{40 + j})" for j in range(5)]
            lines.append("\t... 42 more")
            lines.append("Caused by: java.sql.SQLTimeoutException: query timed out after 5000 ms. Retry later.")
            lines.append("\tat org.postgresql.jdbc.PgStatement.execute(PgStatement.java:412)")
    return "\n".join(lines) + "\n"


def test_a_log_record_keeps_its_stack_trace_where_it_fits():
    """An error's line and the trace under it are one record: a chunk never ends on the error's line where the
    record fits (27 of 30 error lines ended a level-1 chunk in a tester's log), and no cut falls inside a record
    that fits."""
    text = _log(60)
    records, at = [], 0
    for line in text.splitlines(keepends=True):
        if line[:1].isdigit():
            records.append(at)
        at += len(line)
    bounds = set(records) | {len(text)}
    for max_size in (1000, 2000):
        for c in chunk(text, max_size=max_size).roots():
            assert c.span.end in bounds, (max_size, text[c.span.end - 60 : c.span.end + 20])


def test_a_few_lines_that_open_with_a_time_are_no_log():
    """Two lines that open with a time in prose ("10:30] ..." is no log) change nothing: a log needs three."""
    text = "Agenda.\n[10:30] coffee and a walk through the plant\nthen lunch and the review.\n"
    lay = layout(split_sentences(text))
    assert (lay.strength <= LINE).all()


@pytest.mark.parametrize("line", ["--- Day changed Mon Mar 12 2024 ---", "== History ==", "=== Early life ==="])
def test_a_title_framed_by_marks_opens_what_follows(line):
    """A chat log's "--- Day changed ... ---" and MediaWiki's "== History ==" are titles: they open what follows
    (the day-changed line ended a chunk)."""
    body = "[09:30] <bob> morning all\n[09:32] <carol> anyone seen the build?\n[09:33] <dave> it is the flaky test\n"
    text = body + line + "\n" + body
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.startswith(line[:3]))
    assert lay.heading[k] and lay.no_cut[k] and lay.strength[k - 1] == SECTION
    end = text.index(line) + len(line) + 1
    assert end not in {c.span.end for c in chunk(text, max_size=150)}


def test_a_pretty_printed_jsons_records_stay_whole_where_they_fit():
    """``json.dumps(records, indent=2)``: "  }," over "  {" parts two records (an opening brace under a closing
    one is no Allman brace, and "}," ends no letter's greeting), so each record that fits is one chunk (every cut
    fell inside a record)."""
    import json

    records = [{"id": 1000 + k, "name": f"Customer {k}", "email": f"user{k}@example.com", "city": "Porto",
                "notes": "Prefers delivery after 6pm. Call before arriving." if k % 2 else None, "active": k % 3 == 0}
               for k in range(12)]
    text = json.dumps(records, indent=2)
    starts = [text.index(f'  {{\n    "id": {r["id"]}') for r in records]
    bounds = set(starts) | {len(text)}
    longest = max(b - a for a, b in zip(starts, [*starts[1:], len(text)], strict=True))
    for max_size in (longest + 10, 2 * longest + 20):
        for c in chunk(text, max_size=max_size).roots()[:-1]:
            assert c.span.end in bounds, (max_size, text[c.span.end - 40 : c.span.end + 20])


def test_an_allman_brace_still_goes_with_the_line_over_it():
    """C's "if (x)" over "{" on its own line: the brace goes on from the line over it, as before."""
    text = "int f(int x)\n{\n    if (x)\n    {\n        return 1;\n    }\n    return 0;\n}\n"
    sents = split_sentences(text)
    lay = layout(sents)
    texts = sents.texts()
    k = next(i for i, t in enumerate(texts) if t.strip() == "{" and i > 2)
    assert lay.no_cut[k - 1] and lay.no_cut[k]


ORG = ("#+TITLE: Home Renovation Notes\n#+STARTUP: overview\n\n* Kitchen\n** TODO Get three quotes for the worktop\n"
       "   We want solid oak or a quartz composite. Oak needs oiling twice a year, so quartz is the favourite.\n\n"
       "* Bathroom\n** TODO Fix the extractor fan\n   The fan runs but barely moves air. Check before buying a new one."
       "\n\n** Tiles\n   | Area        | m² | Tile          | Price/m² | Total |\n"
       "   |-------------+----+---------------+----------+-------|\n"
       "   | Floor       | 4.2 | Grey slate    |       38 | 159.6 |\n"
       "   | Shower wall | 6.5 | White metro   |       22 | 143.0 |\n   #+TBLFM: $5=$2*$4\n\n"
       "   The zellige is expensive but the area is small. Order ten percent extra for cuts and breakage.\n\n"
       "* Garden\n** Ideas\n   - Raised beds along the south fence\n   - A small greenhouse, if the budget allows\n")


def test_an_org_files_outline_is_its_headings():
    """In a file of org-mode's "#+" keywords, "* Bathroom" and "** Tiles" are headings (Markdown's bullets
    otherwise: "** Tiles" ended a chunk and its table opened the next), and a table's "#+TBLFM:" line stays with
    the table."""
    sents = split_sentences(ORG)
    lay = layout(sents)
    texts = sents.texts()
    for title in ("* Kitchen", "* Bathroom", "** Tiles", "* Garden"):
        k = next(i for i, t in enumerate(texts) if t.startswith(title))
        assert lay.heading[k], title
    k = next(i for i, t in enumerate(texts) if t.strip().startswith("#+TBLFM"))
    assert lay.no_cut[k - 1]
    heads = {ORG.index(t) + len(t) for t in ("** Tiles\n", "* Bathroom\n", "* Garden\n")}
    for max_size in (200, 300, 500):
        assert not heads & {c.span.end for c in chunk(ORG, max_size=max_size)}, max_size


def test_stars_without_org_keywords_stay_bullets():
    """The same lines in a file without org's keywords are Markdown's bullets."""
    text = ORG.replace("#+TITLE: Home Renovation Notes\n#+STARTUP: overview\n\n", "").replace("   #+TBLFM: $5=$2*$4\n", "")
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, t in enumerate(sents.texts()) if t.startswith("** Tiles"))
    assert not lay.heading[k]


# --- shapes of the twenty-ninth session: poems' titles, Debian changelogs, aligned tables, records ---

POEMS = [("将进酒\n李白\n\n", "君不见黄河之水天上来，奔流到海不复回。\n君不见高堂明镜悲白发，朝如青丝暮成雪。\n"
          "人生得意须尽欢，莫使金樽空对月。\n天生我材必有用，千金散尽还复来。\n\n"),
         ("静夜思\n唐·李白\n\n", "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n\n"),
         ("水调歌头·明月几时有\n[宋] 苏轼\n", "明月几时有？\n把酒问青天。\n不知天上宫阙，今夕是何年。\n"
          "我欲乘风归去，又恐琼楼玉宇，高处不胜寒。\n起舞弄清影，何似在人间。\n\n"),
         ("The Tyger\nby William Blake\n\n", "Tyger Tyger, burning bright,\nIn the forests of the night;\n"
          "What immortal hand or eye,\nCould frame thy fearful symmetry?\n\n"),
         ("Ozymandias\nby Percy Bysshe Shelley\n\n", "I met a traveller from an antique land,\n"
          "Who said—“Two vast and trunkless legs of stone\nStand in the desert. Near them, on the sand,\n"
          "Half sunk a shattered visage lies, whose frown,\n\n")]


def test_a_poems_title_and_byline_title_the_poem():
    """A poem's title over its author's line (``将进酒`` over ``李白``, ``静夜思`` over ``唐·李白``, ``The Tyger`` over
    ``by William Blake``) titles the poem under it: both are headings, and no chunk ends with them (they ended
    the chunk of the poem before at 200: 3 of the Chinese, 14 of the English samples' chunks)."""
    text = "".join(t + b for t, b in POEMS) * 2
    sents = split_sentences(text)
    lay = layout(sents)
    titles = [line for t, _ in POEMS for line in t.split("\n") if line]
    for k, s in enumerate(sents.texts()):
        if s.strip() in titles:
            assert lay.heading[k], s
    for max_size in (120, 200, 400, 1000):
        for c in chunk(text, max_size=max_size):
            body = text[c.span.start : c.span.end].rstrip()
            assert not any(body.endswith(t) for t in titles), (max_size, body[-60:])


def test_a_list_of_names_is_no_poem():
    """Font names one a line under a lead-in, cities with no verse's marks: no title, no byline."""
    for text in ("Available fonts:\n\nDejaVu Sans\nDejaVu Sans Mono\nDejaVu Serif\nDejaVu Serif Condensed\n",
                 "城市如下。\n\n北京\n上海\n广州\n深圳\n"):
        assert not layout(split_sentences(text)).heading.any()


def test_a_mail_sign_off_is_no_poems_title():
    """``Thanks`` over ``Priya Sharma`` over a blank line and a quote: no byline over verse, no heading."""
    text = ("Hi Bob,\n\nThe build is green again. I pushed the fix to main.\n\nThanks\nby Priya Sharma\n\n"
            "> On Monday you wrote:\n> the build is red\n")
    sents = split_sentences(text)
    lay = layout(sents)
    k = next(i for i, s in enumerate(sents.texts()) if s.startswith("Thanks"))
    assert not lay.heading[k] and not lay.heading[k + 1]


DEB = ("hello (2.10-3) unstable; urgency=medium\n\n"
       "  * Team upload.\n  * d/control: Bump Standards-Version to 4.6.2. No changes needed.\n"
       "  * d/rules: Drop the obsolete override. It was needed for the old toolchain.\n\n"
       " -- Jane Doe <jane@example.org>  Tue, 20 Sep 2022 12:17:15 -0400\n\n")


def test_a_debian_changelogs_entry_line_heads_its_entry_and_the_trailer_closes_it():
    """``pkg (1.2-3) unstable; urgency=medium`` is the entry's heading (it ended the chunk before it: 397 of the
    chunks of eight real changelogs at 200), and `` -- Name <mail>  date`` stays with the entry's last item."""
    text = "".join(DEB.replace("2.10-3", f"2.10-{k}").replace("Team upload", f"Upload {k}") for k in range(8, 0, -1))
    sents = split_sentences(text)
    lay = layout(sents)
    for k, s in enumerate(sents.texts()):
        if s.startswith("hello ("):
            assert lay.heading[k]
            assert k == 0 or lay.strength[k - 1] == SECTION
        if s.lstrip().startswith("-- Jane"):
            assert lay.no_cut[k - 1]
    heads = {text.index("\n\n", m) + 2 for m in range(len(text)) if text.startswith("hello (", m)}
    trailers = {text.index(" -- Jane", m) for m in range(len(text)) if text.startswith(" -- Jane", m)}
    for max_size in (200, 400, 1000):
        tree = chunk(text, max_size=max_size)
        assert not heads & _ends(tree), max_size
        assert not trailers & {c.span.start for c in tree}, max_size


def _aligned_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n" for r in rows)


PS = _aligned_table([["USER", "PID", "%CPU", "COMMAND"]] + [
    [u, str(100 + k), f"{k % 9}.{k % 7}", f"/usr/lib/{c} --flag. Restarted twice. See the log"]
    for k, (u, c) in enumerate([("root", "systemd"), ("www-data", "nginx"), ("postgres", "postgres")] * 4)])


def test_an_aligned_tables_rows_are_units_and_its_header_stays_with_them():
    """A table aligned with spaces (``ps``'s): each row is one unit (a ``. `` in a cell ended a sentence: 81 cuts
    fell inside rows of the sample), and its header row stays with the first row (it ended a chunk)."""
    text = "The processes, as ps printed them:\n\n" + PS + "\nThat is all of them.\n"
    sents = split_sentences(text)
    assert all(any(s.rstrip("\n") == r for s in sents.texts()) for r in PS.splitlines())
    lay = layout(sents)
    k = next(i for i, s in enumerate(sents.texts()) if s.startswith("USER"))
    assert lay.no_cut[k] and not lay.heading[k]
    header_end = text.index("\n", text.index("USER")) + 1
    for max_size in (200, 400, 1000):  # (the header and a row fit together)
        assert header_end not in _ends(chunk(text, max_size=max_size)), max_size


def test_prose_with_two_spaces_after_a_full_stop_is_no_aligned_table():
    text = "".join(f"Line {k} ends here.  Then another sentence follows on it.  And a third one.\n" for k in range(6))
    assert len(split_sentences(text)) > 6


def _cut_inside_a_fitting_line(text: str, max_size: int) -> list[tuple[int, str]]:
    bad, at = [], 0
    ends = _ends(chunk(text, max_size=max_size))
    for line in text.splitlines(keepends=True):
        b = at + len(line.rstrip("\n"))
        fits = len(text) - len(text[b:].lstrip()) - at <= max_size  # (with its line end and any blank lines after)
        if fits and any(at < e < b for e in ends):
            bad.append((at, line))
        at += len(line)
    return bad


_FIELD = st.text(alphabet="abc xyz.", min_size=1, max_size=30).filter(lambda f: f.strip() == f and f)


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(_FIELD, _FIELD, _FIELD), min_size=3, max_size=30),
       max_size=st.integers(40, 400), quoted=st.booleans())
def test_no_cut_falls_inside_a_csv_row_that_fits(rows, max_size, quoted):
    """A CSV's line is one record: cut inside only where the record alone exceeds the limit (a ``. `` inside a
    field ended a sentence: 40 of 40 rows of the sample were cut at level 1 at 1000)."""
    q = '"' if quoted else ""
    text = "".join(f"{k},{q}{a}{q},{q}{b}. {c}{q},{k * 7}\n" for k, (a, b, c) in enumerate(rows))
    assert not _cut_inside_a_fitting_line(text, max_size)


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(_FIELD, _FIELD), min_size=3, max_size=30), max_size=st.integers(40, 400))
def test_no_cut_falls_inside_a_json_lines_record_that_fits(rows, max_size):
    text = "".join(json.dumps({"id": k, "text": f"{a}. {b}. Done.", "tags": ["x"]}) + "\n"
                   for k, (a, b) in enumerate(rows))
    assert not _cut_inside_a_fitting_line(text, max_size)


def test_prose_lines_with_a_comma_each_are_no_csv():
    """One comma per line is verse's or prose's, not a CSV's (three columns at least): its sentences stay."""
    text = "".join(f"When the rain came, we went in. It was cold {k}.\n" for k in range(5))
    assert len(split_sentences(text)) == 10


_CELL = st.text(alphabet="abcxyz01.", min_size=1, max_size=12).filter(lambda c: c.strip(". ") == c)


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.lists(_CELL, min_size=3, max_size=3), min_size=3, max_size=20),
       notes=st.lists(st.sampled_from(["Done. See the log", "Restarted. Twice", "ok"]), min_size=20, max_size=20),
       max_size=st.integers(60, 400))
def test_no_cut_falls_inside_an_aligned_tables_row_that_fits(rows, notes, max_size):
    """Random tables aligned with spaces (three columns and a note with full stops, each column padded): no cut
    falls inside a row that fits with its line end, at any level."""
    table = _aligned_table([["NAME", "SIZE", "KIND", "NOTE"]] + [r + [notes[k]] for k, r in enumerate(rows)])
    text = "Before the table, a sentence. Another one.\n\n" + table + "\nAfter it, a closing sentence.\n"
    at = text.index("NAME")
    assert not [x for x in _cut_inside_a_fitting_line(text, max_size) if x[0] >= at]


def test_a_json_records_inner_array_does_not_part_the_record():
    """``  },`` over ``  {`` parts two records of the outer array only: an inner array's objects are the record's
    parts, so a record that fits is one chunk (at 1000, 2 of 12 records were cut inside at level 1)."""
    recs = [{"id": i, "name": f"Store {i}", "items": [{"sku": f"A{i}{k}", "qty": k, "note": "Fragile. Keep upright."}
                                                      for k in range(3)]} for i in range(12)]
    text = json.dumps(recs, indent=2) + "\n"
    spans = [(m, text.index("\n  }", m) + 4) for m in range(len(text)) if text.startswith("\n  {", m)]
    for max_size in (400, 1000, 2000):
        cuts = {c.span.end for c in chunk(text, max_size=max_size) if c.level == 1}
        assert not [(a, b) for a, b in spans if b - a <= max_size and any(a + 1 < x < b for x in cuts)], max_size

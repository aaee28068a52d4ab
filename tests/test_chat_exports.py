"""Chat exports and letters as users bring them (session 38): a message's header line (a sender and a time alone
on a line, WeChat's, Telegram's, Slack's, Discord's) stays with its message and opens it as a paragraph; WhatsApp's
and irssi's stamped lines open a record as a log's time does; an old letter's ``MY DEAR FRIEND,--`` introduces its
body and its ``Yours ever,`` closes it. Each reading fixed from the format's own layout; each test fails on the
reading before it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import PARAGRAPH, layout

BODIES = ["Morning! Are we still on for the site visit today?", "Yes, 10:30 at the north gate. Bring the drawings.",
          "Not yet. I called twice and left a message.", "ok",
          "Agreed on the fireplace. For windows I liked the second quote. They can start in March.",
          "Photos are in the shared folder. The damp in the back wall is worse than we thought.",
          "好的，三点在三楼会议室。我把数据整理好了。", "Deal."]
NAMES = ["Ann", "Ben Carter", "张三", "Priya"]


def _export(header, blank: bool) -> tuple[str, list[tuple[int, int]]]:
    """A chat of eight messages, the header of each made by ``header(k)``; with the messages' spans."""
    out, spans = "", []
    for k, body in enumerate(BODIES):
        a = len(out)
        out += f"{header(k)}\n{body}\n"
        spans.append((a, len(out)))
        out += "\n" if blank else ""
    return out, spans


HEADERS = {
    "wechat": (lambda k: f"{NAMES[k % 4]} 2024-03-12 09:{10 + k:02d}:0{k}", False),
    "telegram": (lambda k: f"{NAMES[k % 4]}, [12.03.24 09:{10 + k:02d}]", True),
    "slack": (lambda k: f"{NAMES[k % 4]}  {k % 12 + 1}:{10 + k:02d} AM", False),
    "discord": (lambda k: f"{NAMES[k % 4]} — Today at {k % 12 + 1}:{10 + k:02d} PM", True),
    "otter": (lambda k: f"{NAMES[k % 4]}  {k}:{10 + k:02d}", True),
    "rev": (lambda k: f"{NAMES[k % 4]} ({k:02d}:{10 + k:02d}):", True),
    "time first": (lambda k: f"00:{k:02d}:{10 + k:02d} {NAMES[k % 4]}", False),
}


@pytest.mark.parametrize("kind", sorted(HEADERS))
def test_a_message_header_line_stays_with_its_message(kind):
    header, blank = HEADERS[kind]
    text, spans = _export(header, blank)
    sents = split_sentences(text)
    lay = layout(sents)
    starts = list(sents.starts)
    for a, _ in spans:
        k = starts.index(a)
        assert lay.no_cut[k], (kind, text[a : a + 30])  # (header | message: no cut)
        if k:
            assert lay.strength[k - 1] >= PARAGRAPH, (kind, text[a : a + 30])  # (a message opens a paragraph)
    # no message that fits is cut, nor parted from its header
    for max_size in (120, 200):
        tree = chunk(text, sizes=(max_size, max_size // 2))
        for c in tree:
            if c.level != 1:
                continue
            assert not any(a < c.span.end < b and b - a <= max_size for a, b in spans), (kind, max_size, text[c.span.start : c.span.end])


WHATSAPP = {
    "ios": lambda k, who: f"[12/03/24, 09:{10 + k:02d}:22] {who}: ",
    "android": lambda k, who: f"12/03/2024, 9:{10 + k:02d} am - {who}: ",
    "us": lambda k, who: f"3/12/24, {k % 12 + 1}:{10 + k:02d}\u202fPM - {who}: ",
    "irssi": lambda k, who: f"09:{10 + k:02d} <{who.split()[0].lower()}> ",
}


@pytest.mark.parametrize("kind", sorted(WHATSAPP))
def test_a_stamped_chat_line_opens_a_record(kind):
    text, spans = "", []
    for k, body in enumerate(BODIES[:6]):
        a = len(text)
        text += WHATSAPP[kind](k, NAMES[k % 4]) + body + "\n"
        spans.append((a, len(text)))
    sents = split_sentences(text)
    lay = layout(sents)
    starts = list(sents.starts)
    for a, _ in spans[1:]:
        assert lay.strength[starts.index(a) - 1] >= PARAGRAPH, (kind, text[a : a + 30])
    for max_size in (120, 250):
        for c in chunk(text, sizes=(max_size, max_size // 2)):
            if c.level == 1:
                assert not any(a < c.span.end < b and b - a <= max_size for a, b in spans), (kind, max_size, text[c.span.start : c.span.end])


@pytest.mark.parametrize("text", [
    "Breakfast 7:30\nEggs and toast on the terrace. The coffee was cold.\n\nWe left at noon.\n",
    "The talk by Ann Lee 9:30\nwas moved to the afternoon. Nobody told us.\nAnn Lee 14:30\nwas the new time.\n",
])
def test_a_line_naming_a_time_in_prose_is_no_message_header(text):
    """Fewer than three such lines: prose that names a time, not a chat's log; nothing binds or parts."""
    sents = split_sentences(text)
    lay = layout(sents)
    k = list(sents.starts).index(text.index("\n") + 1) - 1  # (the gap under the first line)
    assert not lay.no_cut[k]


LETTER = ("CHAPTER III.\n\n"
          "The next morning brought the following letter, which Jane opened at the breakfast table:\n\n"
          "    \"MY DEAR FRIEND,--\n\n"
          "    \"If you are not so compassionate as to dine to-day with Louisa\n"
          "    and me, we shall be in danger of hating each other for the rest\n"
          "    of our lives, for a whole day's tete-a-tete between two women\n"
          "    can never end without a quarrel. Come as soon as you can on the\n"
          "    receipt of this. My brother and the gentlemen are to dine with\n"
          "    the officers.\n\n"
          "    \"Yours ever,\n"
          "    \"CAROLINE BINGLEY.\"\n\n"
          "\"With the officers!\" cried Lydia. \"I wonder my aunt did not tell us of that.\"\n\n"
          "\"Dining out,\" said Mrs. Bennet, \"that is very unlucky.\"\n")


def test_an_old_letters_salutation_and_closing_stay_with_its_body():
    """``MY DEAR FRIEND,--`` introduces the body as ``Hi Bob,`` does (the comma closed with a dash, as the
    nineteenth century wrote it); ``Yours ever,`` closes the letter over its signature: no paragraph's break over
    it. So the letter, which fits, is one chunk's: the limit breaks the lead-in over it instead."""
    sents = split_sentences(LETTER)
    lay = layout(sents)
    starts = list(sents.starts)
    body = starts.index(LETTER.index("    \"If you") + 4)
    close = starts.index(LETTER.index("    \"Yours") + 4)
    assert lay.no_cut[body - 1] and lay.lead_in[body - 1]
    assert lay.no_cut[close - 1] and lay.strength[close - 1] < PARAGRAPH
    a, b = LETTER.index("    \"MY DEAR"), LETTER.index("\"CAROLINE BINGLEY.\"") + 20
    for max_size in (512, 1000):
        for c in chunk(LETTER, max_size=max_size).roots():
            assert not a < c.span.end < b, (max_size, LETTER[c.span.start : c.span.end])


@pytest.mark.parametrize("line", ["Your eyes are like the sea", "Yours is the earth and everything that's in it.",
                                  "Best of all, the rain stopped."])
def test_a_line_that_opens_as_a_closing_does_is_no_closing(line):
    text = f"The first line of the poem ran on.\n\n{line}\nAnd the last line after it.\n\nA paragraph after.\n"
    sents = split_sentences(text)
    lay = layout(sents)
    k = list(sents.starts).index(text.index(line))
    assert not lay.no_cut[k - 1]


def test_a_chinese_letters_closing():
    text = ("王老师：\n\n您好！上周的材料已经收到，谢谢您。我们会尽快整理，下周一前发给您。\n\n"
            "此致\n敬礼！\n\n学生 李明\n2024年3月12日\n")
    sents = split_sentences(text)
    lay = layout(sents)
    k = list(sents.starts).index(text.index("此致"))
    assert lay.no_cut[k - 1] and lay.strength[k - 1] < PARAGRAPH


@pytest.mark.parametrize("line", ["[12/03/24, 09:{m}:22] Ann: Not yet. I called twice.\n",
                                  "[09:{m}] <ann> not yet. I called twice.\n",
                                  "Ann 2024-03-12 09:{m}\nNot yet. I called twice.\n"])
def test_a_log_counts_its_own_stamped_lines_when_texts_are_read_together(line):
    """Three stamped lines make a log; two in one text and one in the next are no log of either, read together
    (a store's parents in one pass) as each alone: the same layout."""
    from logichunk.text.structure import layouts

    a = "Notes from the call.\n" + "".join(line.format(m=10 + k) for k in range(2)) + "Then we left.\n"
    b = "Later on.\n" + line.format(m=30) + "The end.\n"
    texts = [a, b]
    sents = [split_sentences(t) for t in texts]
    for one, both in zip([layout(s) for s in sents], layouts(texts, sents), strict=True):
        assert one.strength.tolist() == both.strength.tolist()
        assert one.no_cut.tolist() == both.no_cut.tolist()


def test_a_logs_stamped_line_over_the_next_is_no_message_header():
    """A log's line of a time and a few words ("2024-05-03 14:02:00 INFO Server started") reads as a time-first
    header, but a header has its message under it: over the next stamped line it is a record of its own, and the
    two are parted as records are (a guard: the base read them so too)."""
    text = ("2024-05-03 14:02:00 INFO Server started\n2024-05-03 14:02:01 INFO Cache warmed\n"
            "2024-05-03 14:02:05 ERROR Request failed\nTraceback (most recent call last):\n  File app.py, line 3\n"
            "ValueError: bad\n2024-05-03 14:02:09 INFO Shutting down\n")
    sents = split_sentences(text)
    lay = layout(sents)
    starts = list(sents.starts)
    for line in ("2024-05-03 14:02:01", "2024-05-03 14:02:05"):
        k = starts.index(text.index(line))
        assert not lay.no_cut[k - 1] and lay.strength[k - 1] >= PARAGRAPH, line


HEADER_LINES = ["Ann 2024-03-12 09:14", "Ben Carter  9:14 AM", "Ann, [12.03.24 09:14]", "Priya — Today at 9:14 PM",
                "Jess (00:03):", "00:01:02 Jess Smith", "[00:01:02] Jess Smith", "张三 昨天 09:14", "Ann 9:14\u202fpm",
                "def area(shape):", "x = f(10)", "[1, 2, 3]", "Meet at 10:30", "10:30", "Take 2:1 odds (3:45)",
                "ok", "Yours ever,", "  indented 9:14 ", "Ann 9:14\r", "Not yet. I called twice."]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(HEADER_LINES), min_size=3, max_size=24))
def test_the_header_prefilters_drop_no_header_the_expression_reads(lines):
    """The vector filters before :data:`_MESSAGE_HEADER` (the line's last two characters, its first two, a
    clock's colon near an end) keep every line the expression alone would read."""
    from logichunk.text import structure as S
    from logichunk.text.charclass import codepoints

    text = "\n".join(lines) + "\nend\n"
    sents = split_sentences(text)
    starts, ends = sents.starts, sents.ends
    cand = np.flatnonzero(np.asarray([text[int(e) - 1 : int(e)] == "\n" for e in ends]))[:-1]
    got = S._message_headers(text, codepoints(text), codepoints(text)[starts], starts, ends, sents.seams(), None, cand).tolist()
    read = [i for i in cand.tolist() if (m := S._MESSAGE_HEADER.fullmatch(text, int(starts[i]), int(ends[i])))
            and len((m.group("name") or m.group("after")).split()) <= S.LABEL_MAX_WORDS]
    heads = set(read)
    read = [i for i in read if i + 1 not in heads and S._LOG_TIME.match(text, int(starts[i + 1]), int(ends[i + 1])) is None]
    assert got == (read if len(read) >= S._LOG_RECORDS_MIN else [])

"""Soft wraps: the line breaks of hard-wrapped prose (a Project Gutenberg novel, an RFC, an e-mail, text
pulled from a PDF) that fall inside a sentence, where the writer's tool ran out of width.

Why: the splitter (:mod:`.sentences`) ends a sentence at every line break, which is right for
Markdown, transcripts, lists, verse and one-sentence-per-line text, but in wrapped prose it makes
every line a "sentence": the signals then score the middle of sentences, and a chunk boundary at a
line break falls mid-sentence (``...it was the age of`` | ``wisdom, it was...``).

A line break is a soft wrap when all of these hold (each a reading of how wrapping works, fixed
a priori, none fitted to data):

* it is a single line break between two lines with text (not a blank line, a form feed or U+2029),
  outside the lines Markdown keeps whole or hard (headings, tables, fences, front matter, list items,
  rules), and neither line holds a ``|`` or a tab (tabular data);
* the first line does not end a thought: its last character (past spaces) is a letter, a digit, or
  a comma, semicolon or dash (``-`` included: a word hyphenated across the lines), and the next line
  goes on: it starts with a lower-case letter, or, after a CJK character or comma, with a CJK
  character (Chinese wraps need no space and have no case);
* the next line is indented no deeper than the first (deeper: code, a quotation, a nested item),
  and its first word is no label (``bob:``);
* **the next word would not have fitted**: the first line's length, a space and the next line's first
  word (one character in CJK) exceed the text's wrap width, taken as the 90th percentile of the
  lengths of its lines that a single line break follows (at least :data:`MIN_WRAPPED_LINES` of them)
  — and that width is at least
  :data:`MIN_WRAP_WIDTH` characters (:data:`MIN_CJK_WRAP_WIDTH` for a CJK line), so short lines (verse,
  chat turns, a list of names) are never joined.

A line break that is a soft wrap is whitespace inside the sentence (it never ends one, and its gap
is not a line break); the text is not changed.
"""

from __future__ import annotations

import numpy as np

from .sentence_chars import _F_CJK, _F_CJKP, _F_DIGIT, _F_LOWER, _F_TERM, _F_UPPER, _F_WS

__all__ = ["MIN_CJK_WRAP_WIDTH", "MIN_WRAPPED_LINES", "MIN_WRAP_WIDTH", "soft_wraps"]

#: the narrowest wrap width, in characters, at which line breaks can be soft (terminals and mail
#: wrap at 72-80, subtitles at ~42; verse and chat lines are shorter)
MIN_WRAP_WIDTH = 40
#: the same for a line that ends in a CJK character (each is two columns wide)
MIN_CJK_WRAP_WIDTH = 20
#: the share of a text's wrapped lines at most as long as its wrap width
WRAP_QUANTILE = 0.9
#: a wrap width is read from at least this many lines that a single line break follows
MIN_WRAPPED_LINES = 2
#: how far a next word is measured (a longer one counts as this long)
_WORD_MAX = 24
_JOINERS = np.array(sorted(ord(c) for c in ",;-‐‑–—，、；"), dtype=np.uint32)
_TABLE = np.array([0x09, 0x7C], dtype=np.uint32)


def soft_wraps(cp: np.ndarray, fl: np.ndarray, nl: np.ndarray, w_nl: np.ndarray, para: np.ndarray, first: int,
               lo: np.ndarray, hi: np.ndarray, hard: np.ndarray) -> np.ndarray:
    """Per line terminator (``nl``: their offsets, sorted, a CRLF as its LF), whether it is a soft wrap.
    ``cp``, ``fl``: the text's code points and the splitter's flag table; ``w_nl``: per terminator,
    the first non-space offset after it (``len(text)`` at the end); ``para``: per terminator, whether
    it alone makes a paragraph break (form feed, U+2029); ``first``: the text's first non-space
    offset; ``lo``/``hi``: the sorted ranges Markdown keeps whole, ``hard``: the line starts whose
    gap is a hard break (:mod:`.line_kinds`)."""
    m = nl.size
    soft = np.zeros(m, dtype=bool)
    n = cp.size
    if m == 0:
        return soft
    # each terminator's line: it starts after the previous terminator, its text after the indent
    line_start = np.empty(m, np.int64)
    line_start[0] = 0
    line_start[1:] = nl[:-1] + 1
    text_start = np.empty(m, np.int64)
    text_start[0] = first
    text_start[1:] = w_nl[:-1]
    # a single break between two lines with text: the line has text before its terminator, the
    # next line's text comes before any further terminator
    nxt_nl = np.append(nl[1:], n)
    single = (text_start < nl) & (w_nl < nxt_nl) & (w_nl < n) & ~para
    # the next line goes on (a lower-case letter, a CJK character): most lines of most texts do not
    c_next = fl[cp[np.minimum(w_nl, n - 1)]].astype(np.int64)
    cjk_next = ((c_next & _F_CJK) != 0) & ((c_next & (_F_CJKP | _F_TERM)) == 0)
    goes_on = single & (((c_next & _F_LOWER) != 0) | cjk_next)
    if not goes_on.any():
        return soft
    # the line's last character, past up to three spaces (a CR of a CRLF among them)
    last = nl - 1
    for _ in range(3):
        ws = (last >= text_start) & ((fl[cp[np.maximum(last, 0)]] & _F_WS) != 0)
        last = np.where(ws, last - 1, last)
    single &= last >= text_start
    length = last + 1 - line_start
    lengths = length[single]
    if lengths.size < MIN_WRAPPED_LINES:
        return soft
    width = float(np.quantile(lengths, WRAP_QUANTILE))
    if width < MIN_CJK_WRAP_WIDTH:
        return soft
    cand = np.flatnonzero(goes_on & single)
    c_last = fl[cp[np.maximum(last[cand], 0)]].astype(np.int64)
    joiner = np.isin(cp[np.maximum(last[cand], 0)], _JOINERS)
    word_end = (c_last & (_F_LOWER | _F_UPPER | _F_DIGIT)) != 0
    cjk_last = ((c_last & _F_CJK) != 0) & ((c_last & (_F_CJKP | _F_TERM)) == 0)
    latin = (word_end | joiner) & ((c_next[cand] & _F_LOWER) != 0) & (width >= MIN_WRAP_WIDTH)
    cjk = np.zeros(m, dtype=bool)
    cjk[cand] = (cjk_last | joiner) & cjk_next[cand]
    cand = cand[latin | cjk[cand]]
    if cand.size == 0:
        return soft
    cand = cand[length[cand] + 1 + _WORD_MAX > width]  # (no next word is longer than that)
    # the next line indented no deeper than this one
    indent_next = w_nl[cand] - (nl[cand] + 1)
    indent_here = text_start[cand] - line_start[cand]
    cand = cand[indent_next <= indent_here]
    # the next word would not have fitted
    w = w_nl[cand]
    word = np.ones(cand.size, np.int64)
    alive = ~cjk[cand]
    for k in range(1, _WORD_MAX):
        if not alive.any():
            break
        p = np.minimum(w + k, n - 1)
        alive &= (w + k < n) & ((fl[cp[p]] & _F_WS) == 0)
        word += alive
    # ... and is not a speaker's name or a label ("bob:")
    colon = ~cjk[cand] & (cp[np.minimum(w + word - 1, n - 1)] == 0x3A)
    cand = cand[(length[cand] + 1 + word > width) & ~colon]
    if cand.size == 0:
        return soft
    # not inside or next to what Markdown keeps whole or hard
    if lo.size:
        for at in (last, w_nl):
            pos = at[cand]
            k = np.searchsorted(lo, pos, side="right") - 1
            inside = (k >= 0) & (pos < hi[np.maximum(k, 0)])
            cand = cand[~inside]
            if cand.size == 0:
                return soft
    if hard.size:
        cand = cand[~np.isin(w_nl[cand], hard)]
    # no tabular line on either side: the characters of both lines, read for the candidates left
    if cand.size:
        a, b = line_start[cand], nxt_nl[cand]
        size = b - a  # at least one: the line's text and its terminator
        offs = np.concatenate(([0], np.cumsum(size)[:-1]))
        at = np.repeat(a - offs, size) + np.arange(int(size.sum()))
        tabular = np.add.reduceat(np.isin(cp[at], _TABLE), offs) > 0
        cand = cand[~tabular]
    soft[cand] = True
    return soft

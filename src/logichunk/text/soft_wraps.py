"""Soft wraps: the line breaks of hard-wrapped prose (a Project Gutenberg novel, an RFC, an e-mail, text
pulled from a PDF), where the writer's tool ran out of width rather than the writer ended a line.

Why: the splitter (:mod:`.sentences`) ends a sentence at every line break, which is right for
Markdown, transcripts, lists, verse and one-sentence-per-line text, but in wrapped prose it makes
every line a "sentence": the signals then score the middle of sentences, and a chunk boundary at a
line break falls mid-sentence (``...it was the age of`` | ``wisdom, it was...``); and a sentence that
happens to end at a line's end would count as a line break, a stronger place to cut than the
sentence ends inside lines.

Which breaks are the tool's (each a reading of how wrapping works, fixed a priori, none fitted to data):

* **a break at the width**: a single line break between two lines with text (not a blank line, a form
  feed or U+2029), where the next word would not have fitted — the line's length, a space and the next
  line's first word (one character in CJK) exceed the text's wrap width, taken as the 90th percentile
  (the lower neighbour) of the lengths, up to their terminator, of its lines that a single line break
  follows (at least :data:`MIN_WRAPPED_LINES`; not a line aligned in columns, two runs of three spaces
  past its indent, nor a rule: a plain-text or reStructuredText table's rows, wider than the prose around
  them),
  and at least :data:`MIN_WRAP_WIDTH` characters (:data:`MIN_CJK_WRAP_WIDTH` before a CJK line), so
  short lines (verse, chat turns, a list of names) are never joined; outside what Markdown keeps whole
  or hard (headings, tables, fences, front matter, list items, rules), no ``|`` or tab in either line's
  text (tabular data), the next line indented no deeper than this one's text (a list item's text starts past its
  marker: ``* `` or ``12. ``; deeper: code, a quotation, a nested item) and not
  opening with a label (a colon and a space, or a full-width colon, in its first 24 characters:
  ``bob:``, ``Project Manager:``, ``张三：``, a speaker's turn); neither line a statement of code (it holds
  ``=`` or a shell variable, or ends in ``{``, ``}``, ``(``, ``[`` or ``);``: a source file's docstrings and
  comments are wrapped prose, its statements are not);
* such a break is one of three: a sentence **going on** — the line ends in a letter, a digit or a
  comma, semicolon or dash (a word hyphenated across the lines), and the next starts in lower case
  (both read past up to two quotation marks or inline code's backticks, the next line's start past
  opening brackets too: a wrap can fall before or after a quotation or ``code``),
  or after a CJK character or comma with a CJK character or a comma-like mark (Chinese wraps need no
  space and have no case), or, at the width, after a CJK character with a Latin word or a number; a sentence going on **with a capital or a digit** (a name, *I*, a year); or a sentence that
  **ends** there (a terminator or a closing quote last) — but not before a title: a next line well
  short of the width (by :data:`_WORD_MAX`) that does not end as prose does (``2.1 Methods``);
* **the text is wrapped** when breaks of the first kind are at least as many as those of the other
  two (tabular lines counted too): wrapped prose goes on in lower case across most of its line
  breaks, while in a list, a transcript or one sentence per line the lines end sentences or go on
  with a capital. Then every break at the width is the tool's, and so is every break short of it where
  a sentence goes on in lower case or CJK (a text wrapped by hand, line by line); otherwise none is.

A quoted line (an e-mail's ``> `` or ``> > ``) is read past its quote marks, which count as its indent: a
quoted paragraph wraps as any other, and a line quoted deeper than the one over it is no wrap of it.

A tab in a line's indent is indentation, not a column of data: it reaches the next multiple of
:data:`TAB_WIDTH` columns, and lengths and indents are counted in columns (a man page rendered as text,
``man tar | col -b``, indents its paragraphs with tabs and spaces mixed, ``\t      `` for 14 columns;
counted as one character, such lines would seem shorter than the width and less indented than they are).

A soft wrap is whitespace: inside a sentence it ends none, and a sentence that ends at one is an
ordinary sentence end, not a line break. The text is not changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .. import native
from ._arrays import _in_table, _member
from .line_kinds import BULLET_CHARS
from .sentence_chars import (
    _F_CJK,
    _F_CJKP,
    _F_CLOSE,
    _F_DIGIT,
    _F_LOWER,
    _F_TERM,
    _F_UPPER,
    _F_WS,
    _PROSE_END,
)

__all__ = ["LINE_OPENERS", "MIN_CJK_WRAP_WIDTH", "MIN_WRAPPED_LINES", "MIN_WRAP_WIDTH", "QUOTE_CHARS", "soft_wraps",
           "soft_wraps_many"]

#: the narrowest wrap width, in characters, at which line breaks can be soft (terminals and mail
#: wrap at 72-80, subtitles at ~42; verse and chat lines are shorter)
MIN_WRAP_WIDTH = 40
#: the same for a line that ends in a CJK character (each is two columns wide)
MIN_CJK_WRAP_WIDTH = 20
#: the columns a tab stop falls every, as terminals, ``col -x``, ``expand`` and Python's ``str.expandtabs``
#: place them (fixed a priori: what renders a man page or a tab-indented mail is such a terminal)
TAB_WIDTH = 8
#: the share of a text's wrapped lines at most as long as its wrap width
WRAP_QUANTILE = 0.9
#: a wrap width is read from at least this many lines that a single line break follows
MIN_WRAPPED_LINES = 2
#: the characters a rule is drawn with (``-----``, ``=====``, reStructuredText's ``~~~~`` and ``^^^^``)
_RULE = np.zeros(0x7F, dtype=bool)
_RULE[[ord(c) for c in "-=~_*+#^"]] = True
#: how far a next word is measured (a longer one counts as this long)
_WORD_MAX = 24  # (also how far a label is looked for)
_JOINERS = np.array(sorted(ord(c) for c in ",;-‐‑–—，、；"), dtype=np.uint32)
#: the marks a CJK sentence goes on with at a line's start (no sentence nor line opens with one)
_CJK_GOES_ON = np.array(sorted(ord(c) for c in "，、；："), dtype=np.uint32)
_TABLE = (0x09, 0x7C)
#: quotation marks, opening or closing (a wrapped line may start or end with one)
QUOTE_CHARS = "\"'“”‘’«»‹›「」『』"
#: what a wrapped line's next line may open with before its first letter: a quotation mark, an opening
#: bracket (``the river, which we measured`` over ``(see the table below) twice a year``) or the backtick
#: of inline code (``found within the targets or`` over ```target_defaults` sections``); a line's end is
#: read past quotes and backticks only (a line of code ends in ``)`` too often)
LINE_OPENERS = QUOTE_CHARS + "([（【《`"
_LINE_CLOSERS = np.array(sorted(ord(c) for c in QUOTE_CHARS + "`"), dtype=np.uint32)
_BULLET_CP = np.array(sorted(ord(c) for c in BULLET_CHARS), dtype=np.uint32)
_ITEM_MARK_CP = np.array(sorted(ord(c) for c in ".)"), dtype=np.uint32)
_ITEM_FIRST_CP = np.array(sorted(ord(c) for c in BULLET_CHARS + "0123456789"), dtype=np.uint32)
_OPENERS = np.array(sorted(ord(c) for c in LINE_OPENERS), dtype=np.uint32)
_PROSE_END_CP = np.array(sorted(ord(c) for c in _PROSE_END), dtype=np.uint32)


def _item_text(cp: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """Per line text start ``ts``: where the text of the list item that the line opens begins, past
    its marker and the spaces after it (``* `` or ``12. ``: a wrapped item's next lines are indented to
    there), or ``ts`` itself where the line opens no item."""
    n = cp.size
    out = ts.copy()
    sel = np.flatnonzero(_member(cp[np.minimum(ts, n - 1)], _ITEM_FIRST_CP) & (ts < n))  # (a few lines)
    if sel.size == 0:
        return out
    at = ts[sel]
    digits = np.zeros(sel.size, np.int64)
    alive = np.ones(sel.size, dtype=bool)
    for k in range(3):  # an ordered item's number, up to three digits
        c = cp[np.minimum(at + k, n - 1)]
        alive &= (at + k < n) & (c >= 0x30) & (c <= 0x39)
        digits += alive
    mark = at + digits
    is_mark = np.where(digits > 0, _member(cp[np.minimum(mark, n - 1)], _ITEM_MARK_CP), _member(cp[at], _BULLET_CP))
    text = mark + 1
    c = cp[np.minimum(text, n - 1)]
    spaced = is_mark & (text < n) & ((c == 0x20) | (c == 0x09))
    for _ in range(4):  # the spaces after the marker (at most four: more make the text code)
        c = cp[np.minimum(text, n - 1)]
        text = np.where(spaced & (text < n) & ((c == 0x20) | (c == 0x09)), text + 1, text)
    out[sel] = np.where(spaced, text, at)
    return out


def _word_length(cp: np.ndarray, fl: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The length of the word at each offset of ``w``: up to its first whitespace (or the text's end),
    at most ``_WORD_MAX - 1``. A walk a character at a time over the words not yet ended: a word costs
    its own length, not the longest word's."""
    n = cp.size
    out = np.full(w.size, _WORD_MAX - 1, np.int64)
    act = np.arange(w.size)
    for j in range(_WORD_MAX - 1):
        pos = w[act] + j
        space = (pos >= n) | ((fl[cp[np.minimum(pos, n - 1)]] & _F_WS) != 0)
        out[act[space]] = j
        act = act[~space]
        if act.size == 0:
            break
    return out


def _labelled(cp: np.ndarray, fl: np.ndarray, w: np.ndarray, line_end: np.ndarray) -> np.ndarray:
    """Whether the line whose text starts at each offset of ``w`` (sorted; its terminator at ``line_end``)
    opens with a speaker's name or a label: within its first ``_WORD_MAX`` characters a colon before a space
    or a tab (``bob: ``, ``Project Manager: ``; a colon that ends the line is a lead-in's: ``the issue
    tracker is:``), or a full-width colon (``张三：``). The colons are looked for in the lines' first
    characters when those are fewer than a quarter of the text, else in the whole text (one pass in C
    instead of a window of characters per line)."""
    n = cp.size
    if w.size == 0 or n == 0:
        return np.zeros(w.size, dtype=bool)
    if w.size * _WORD_MAX * 4 < n:
        at = np.minimum(w[:, None] + np.arange(_WORD_MAX), n - 1)
        at = np.unique(at[(cp[at] == 0x3A) | (cp[at] == 0xFF1A)])
    else:
        at = np.flatnonzero((cp == 0x3A) | (cp == 0xFF1A))
    after = cp[np.minimum(at + 1, n - 1)]
    colons = at[(cp[at] == 0xFF1A) | ((at + 1 < n) & ((after == 0x20) | (after == 0x09)))]
    if colons.size == 0:
        return np.zeros(w.size, dtype=bool)
    k = np.minimum(np.searchsorted(colons, w), colons.size - 1)
    # ... on the line itself, which ends at ``line_end`` (an item's wrapped last word over the next item's
    # "**GC**: Garbage ..." is no label)
    return (colons[k] >= w) & (colons[k] < np.minimum(w + _WORD_MAX, line_end))


#: what a statement of code ends with (``if (x) {``, ``}``, ``call(``, ``items = [``; and ``foo(x);``, below)
_STATEMENT_ENDS = np.array(sorted(ord(c) for c in "{}(["), dtype=np.uint32)


_VARIABLE_FIRST = np.array(sorted(ord(c) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_{("),
                           dtype=np.uint32)


def _set_bits(sets: tuple[np.ndarray, ...]) -> np.ndarray:
    """A uint16 table by code point: bit ``k`` set for the members of ``sets[k]``."""
    table = np.zeros(max(int(np.max(s)) for s in sets) + 1, np.uint16)
    for bit, members in enumerate(sets):
        table[np.asarray(members, np.int64)] |= 1 << bit
    table.flags.writeable = False
    return table


#: the reader's character sets for its compiled loops (:mod:`logichunk.native`: lc_wrapread, lc_columns), a bit
#: each in the kernel's order (LC_W_*): openers, line closers, joiners, CJK goes-on marks, prose ends, statement
#: ends, a shell variable's first characters, bullets, an ordered item's marks, rules, tabular data (a tab, ``|``),
#: then a tab alone (for :func:`_indent_tabs`, not the kernels)
_WRAP_CLASSES = _set_bits((_OPENERS, _LINE_CLOSERS, _JOINERS, _CJK_GOES_ON, _PROSE_END_CP, _STATEMENT_ENDS,
                           _VARIABLE_FIRST, _BULLET_CP, _ITEM_MARK_CP, np.flatnonzero(_RULE), np.array(_TABLE),
                           np.array([0x09])))
_TABLE_BIT = 1 << 10
_TAB_BIT = 1 << 11


def _indent_tabs(cp: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per indent ``[a[i], b[i])`` (whitespace on one line, in order), the columns its tabs add to its length
    in characters, each tab reaching the next multiple of :data:`TAB_WIDTH` (0 without a tab). Why: a tab in
    an indent is indentation; the reader counts lengths and indents in columns. Only the indents that hold a
    tab are read, character by character (a tab's column depends on what comes before it)."""
    out = np.zeros(a.size, np.int64)
    some = native.spans_any(cp, _WRAP_CLASSES, _TAB_BIT, a, b)
    if some is None:
        tabs = np.flatnonzero(cp == 0x09)
        if tabs.size == 0:
            return out
        some = np.searchsorted(tabs, a) < np.searchsorted(tabs, b)
    sel = np.flatnonzero(some)
    if sel.size == 0:
        return out
    size = b[sel] - a[sel]
    offs = np.zeros(sel.size + 1, np.int64)
    np.cumsum(size, out=offs[1:])
    line = np.repeat(np.arange(sel.size), size)
    loc = np.arange(int(offs[-1])) - offs[:-1][line]  # (each character's offset in its indent)
    t = np.flatnonzero(cp[a[sel][line] + loc] == 0x09)
    t_line, t_loc = line[t], loc[t]
    # after a tab the column is a multiple of TAB_WIDTH; s characters and a tab more reach the s // TAB_WIDTH + 1-th
    # stop past it: the column after a line's last tab is the sum of those steps, then its characters go on
    prev = np.full(t.size, -1, np.int64)
    same = t_line[1:] == t_line[:-1]
    prev[1:][same] = t_loc[:-1][same]
    step = TAB_WIDTH * ((t_loc - prev - 1) // TAB_WIDTH + 1)
    col = np.zeros(sel.size, np.int64)
    np.add.at(col, t_line, step)
    last = np.append(~same, True)
    out[sel[t_line[last]]] = col[t_line[last]] - t_loc[last] - 1
    return out


def _statements(cp: np.ndarray, ts: np.ndarray, last: np.ndarray, marks: list[np.ndarray] | None = None) -> np.ndarray:
    """Per line (its text from ``ts`` to its last character ``last``), whether it reads as a statement of
    code: it holds ``=`` (an assignment, a comparison, a keyword argument, ``=>``) or a shell variable
    (``$name``, ``${x}``, ``$(cmd)``; a price, ``$5``, is none), or ends as a statement does (``{``, ``}``,
    ``(``, ``[``, ``);``; a semicolon alone ends a clause of prose too). Prose does neither; a wrap never
    falls after or before such a line. Reads the lines' own characters, or, for most of the text, the
    text's marks once (kept in ``marks``, when given, for the next call)."""
    n = cp.size
    out = np.zeros(ts.size, dtype=bool)
    if n == 0 or ts.size == 0:
        return out
    at = np.clip(last, 0, n - 1)
    out |= (last >= ts) & (_member(cp[at], _STATEMENT_ENDS)
                           | ((cp[at] == 0x3B) & (last > ts) & (cp[np.maximum(at - 1, 0)] == 0x29)))
    size = np.maximum(last - ts + 1, 0)
    rest = np.flatnonzero(~out & (size > 0))
    if rest.size == 0:
        return out
    size = size[rest]
    if int(size.sum()) * 4 < n:  # a few lines: their own characters
        offs = np.zeros(rest.size + 1, np.int64)
        np.cumsum(size, out=offs[1:])
        pos = np.repeat(ts[rest] - offs[:-1], size) + np.arange(int(offs[-1]))
        out[rest] = np.logical_or.reduceat(_code_marks(cp, pos), offs[:-1])
    else:  # most of the text: its marks once, then a count per line
        if marks:
            at = marks[0]
        else:
            at = np.flatnonzero((cp == 0x3D) | (cp == 0x24))
            at = at[_code_marks(cp, at)]
            if marks is not None:
                marks.append(at)
        out[rest] = np.searchsorted(at, last[rest], side="right") > np.searchsorted(at, ts[rest])
    return out


def _code_marks(cp: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Whether the character at each offset of ``pos`` marks a statement of code: ``=``, or ``$`` before a
    letter, ``_``, ``{`` or ``(`` (a shell variable)."""
    n = cp.size
    c = cp[pos]
    hit = c == 0x3D
    dollar = np.flatnonzero(c == 0x24)
    if dollar.size:
        nx = cp[np.minimum(pos[dollar] + 1, n - 1)]
        hit[dollar] = (pos[dollar] + 1 < n) & _member(nx, _VARIABLE_FIRST)
    return hit


def _columns(cp: np.ndarray, ts: np.ndarray, te: np.ndarray) -> np.ndarray:
    """Per line (text from ``ts`` to its terminator ``te``), whether it is laid out in columns: two runs
    of three spaces or more past its indent, each followed by text (a table's row of three columns or
    more; a reference's ``Blackman MJ   Proteases involved ...`` has one), or a rule's characters at both
    of its ends (``=====  =====``, ``------``). (In C where it is compiled: each line's own characters, not
    the text's.)"""
    fast = native.columns(cp, _WRAP_CLASSES, ts, te)
    if fast is not None:
        return fast
    n = cp.size
    # where text follows three spaces in a row: a gap between columns (two arrays of the text's length, the
    # rest in place: a fresh array of a megabyte costs its pages)
    if n > 3:
        sp = cp == 0x20
        gap = sp[:-3] & sp[1:-2]
        gap &= sp[2:-1]
        np.greater(gap, sp[3:], out=gap)  # (and no space after them)
        gap[ts[(ts >= 3) & (ts < n)] - 3] = False  # (the indent's end: no gap between columns)
        col = np.flatnonzero(gap) + 3
    else:
        col = np.zeros(0, np.int64)
    out = np.searchsorted(col, te) - np.searchsorted(col, ts, side="right") >= 2
    rule = np.flatnonzero((te - ts >= 2) & _in_table(_RULE, cp[np.minimum(ts, n - 1)]))
    for base, step in ((ts, 1), (te, -2), (te, -1)):  # (the second, the last but one and the last)
        rule = rule[_in_table(_RULE, cp[base[rule] + step])]
    out[rule] = True
    return out


def soft_wraps(cp: np.ndarray, fl: np.ndarray, nl: np.ndarray, w_nl: np.ndarray, para: np.ndarray, first: int,
               lo: np.ndarray, hi: np.ndarray, hard: np.ndarray,
               needed: Callable[[], np.ndarray | None] | None = None) -> np.ndarray:
    """Per line terminator (``nl``: their offsets, sorted, a CRLF as its LF), whether it is a soft wrap.
    ``cp``, ``fl``: the text's code points and the splitter's flag table; ``w_nl``: per terminator,
    the first non-space offset after it (``len(text)`` at the end); ``para``: per terminator, whether
    it alone makes a paragraph break (form feed, U+2029); ``first``: the text's first non-space
    offset; ``lo``/``hi``: the sorted ranges Markdown keeps whole, ``hard``: the line starts whose
    gap is a hard break (:mod:`.line_kinds`). ``needed``: asked once the text reads as wrapped, per
    terminator whether the caller reads its answer at all (None: every one); the others answer False,
    unread (a source file's statements, whose breaks the splitter keeps as code: only its comments'
    are read). Several texts: :func:`soft_wraps_many`."""
    one = np.zeros(1, np.int64)
    return _soft_wraps(cp, fl, nl, w_nl, para, np.zeros(nl.size, np.int64), one, one + first, one + cp.size,
                       lo, hi, hard, needed)


def soft_wraps_many(fl: np.ndarray, texts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int,
                                                          np.ndarray, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """:func:`soft_wraps` of several texts, each ``(cp, nl, w_nl, para, first, lo, hi, hard)`` (the flag table
    ``fl`` is theirs), read in one pass: each text's answer, as alone. Why: a short text's reading is a few
    dozen array operations on a handful of lines, ~0.2 ms of fixed cost; a store splits thousands of short
    blocks (a source file's, a README's). The texts are laid end to end with a line feed after each (it ends
    every word, label and walk as a text's end does), and every rule reads a line's own text's end, width
    and verdict."""
    if not texts:
        return []
    sizes = np.fromiter((t[0].size for t in texts), np.int64, len(texts))
    t_start = np.zeros(sizes.size, np.int64)
    np.cumsum(sizes[:-1] + 1, out=t_start[1:])
    sep = np.full(1, 0x0A, np.uint8)
    cp = np.concatenate([x for t in texts for x in (t[0], sep)])
    counts = np.fromiter((t[1].size for t in texts), np.int64, len(texts))
    tid = np.repeat(np.arange(sizes.size), counts)
    shift = t_start[tid]
    nl = np.concatenate([t[1] for t in texts]).astype(np.int64) + shift
    w_nl = np.concatenate([t[2] for t in texts]).astype(np.int64) + shift
    para = np.concatenate([t[3] for t in texts]).astype(bool)
    first = np.fromiter((t[4] for t in texts), np.int64, len(texts)) + t_start
    ranges = [np.concatenate([np.asarray(t[k], np.int64) + t_start[i] for i, t in enumerate(texts)]) for k in (5, 6, 7)]
    soft = _soft_wraps(cp, fl, nl, w_nl, para, tid, t_start, first, t_start + sizes, *ranges)
    return np.split(soft, np.cumsum(counts)[:-1])


def _past_quote_marks(cp: np.ndarray, pos: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Each offset of ``pos`` moved past the quote marks that open its line there (``>``, each with up to
    one space after it, four deep at most), never past ``stop`` (the line's end)."""
    fast = native.quote_marks(cp, pos, stop)
    if fast is not None:
        return fast
    last = cp.size - 1
    for _ in range(4):
        q = (pos < stop) & (cp[np.minimum(pos, last)] == 0x3E)
        if not q.any():
            break
        pos = np.where(q, pos + 1, pos)
        pos = np.where(q & (pos < stop) & (cp[np.minimum(pos, last)] == 0x20), pos + 1, pos)
    return pos


def _soft_wraps(cp: np.ndarray, fl: np.ndarray, nl: np.ndarray, w_nl: np.ndarray, para: np.ndarray, tid: np.ndarray,
                t_start: np.ndarray, t_first: np.ndarray, t_end: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                hard: np.ndarray, needed: Callable[[], np.ndarray | None] | None = None) -> np.ndarray:
    """:func:`soft_wraps` of the texts in ``cp`` (the ``k``-th from ``t_start[k]`` to ``t_end[k]``, its first
    non-space offset ``t_first[k]``), every terminator's text ``tid``. (The width and the vote read every line
    whatever ``needed`` says: only the breaks past them, each read on its own, are left unread.)"""
    m = nl.size
    soft = np.zeros(m, dtype=bool)
    if m < MIN_WRAPPED_LINES:
        return soft
    T = t_start.size
    # each terminator's line: it starts after the previous terminator, its text after the indent (a text's
    # first line at the text's start and first non-space offset)
    opens = np.ones(m, dtype=bool)
    opens[1:] = tid[1:] != tid[:-1]
    closes = np.ones(m, dtype=bool)
    closes[:-1] = opens[1:]
    end = t_end[tid]  # (each line's text's end)
    line_start = np.empty(m, np.int64)
    line_start[1:] = nl[:-1] + 1
    line_start[opens] = t_start[tid[opens]]
    text_start = np.empty(m, np.int64)
    text_start[1:] = w_nl[:-1]
    text_start[opens] = t_first[tid[opens]]
    text_start_in = text_start
    # a single break between two lines with text: the line has text before its terminator, the
    # next line's text comes before any further terminator
    nxt_nl = np.empty(m, np.int64)
    nxt_nl[:-1] = nl[1:]
    nxt_nl[closes] = end[closes]
    # a quoted line's text starts past its quote marks (an e-mail's "> ", "> > "): a quoted reply was wrapped
    # as its writer's text was, and reads as it; its marks count as indent, so a line quoted deeper than the
    # one over it is no wrap of it (a line of marks alone: no text, a quoted blank line). (The compiled walk reads
    # the lines' first characters only; the numpy one runs where a quote mark is in the text at all.)
    if native.available() or (cp == 0x3E).any():
        text_start = _past_quote_marks(cp, text_start, nl)
        # (a line's text start and terminator are the next-line start and terminator of the line before it, but
        # at a text's edges: those are read once, for both)
        shared = np.zeros(m, dtype=bool)
        shared[:-1] = (w_nl[:-1] == text_start_in[1:]) & (nxt_nl[:-1] == nl[1:])
        moved = np.empty(m, np.int64)
        moved[:-1][shared[:-1]] = text_start[1:][shared[:-1]]
        rest = np.flatnonzero(~shared)
        moved[rest] = _past_quote_marks(cp, w_nl[rest], nxt_nl[rest])
        w_nl = moved
    single = (text_start < nl) & (w_nl < nxt_nl) & (w_nl < end) & ~para \
        & (np.bincount(tid, minlength=T) >= MIN_WRAPPED_LINES)[tid]
    # a line aligned in columns (two runs of three spaces past its indent: a plain-text or reStructuredText
    # table's row) or a rule ("=====  ====") is no prose: it neither sets the width nor is read as wrapped
    some = np.flatnonzero(single)
    if some.size:
        single[some[_columns(cp, text_start[some], nl[some])]] = False
    # the columns that tabs add to each line's indent (a man page's "\t      "), and to the next line's: lengths
    # and indents are counted in columns
    tab_in = np.zeros(m, np.int64)
    has = np.flatnonzero(text_start_in < nl)
    tab_in[has] = _indent_tabs(cp, line_start[has], text_start_in[has])
    tab_next = np.zeros(m, np.int64)
    tab_next[:-1] = tab_in[1:]
    tab_next[closes] = 0
    # the wrap width, from the lengths of the lines a single break follows (to their terminator): per text,
    # the WRAP_QUANTILE of them (the lower neighbour)
    length = nl - line_start + tab_in
    some = np.flatnonzero(single)
    lines = np.bincount(tid[some], minlength=T)
    ok = lines >= MIN_WRAPPED_LINES
    if not ok.any():
        return soft
    # (one sort of a single key: each text's lengths after those of the texts before it)
    stride = int(length[some].max()) + 1
    by_text = np.sort(tid[some] * stride + length[some])
    at = np.zeros(T, np.int64)
    np.cumsum(lines[:-1], out=at[1:])
    k = [int(WRAP_QUANTILE * (c - 1)) for c in lines.tolist()]
    width_t = np.zeros(T, np.int64)
    width_t[ok] = by_text[(at + np.asarray(k, np.int64))[ok]] - np.flatnonzero(ok) * stride
    ok &= width_t >= MIN_CJK_WRAP_WIDTH
    width = width_t[tid]
    cand = np.flatnonzero(single & ok[tid] & (length + 1 + _WORD_MAX > width))  # (no next word is longer than that)
    # (in C where it is compiled, next_letter and read below walk each line's own characters, one line at a time,
    # instead of gathering them rule by rule from all over the text: logichunk.native.wrap_read)
    per_line = (nl, w_nl, end, text_start, line_start, nxt_nl, length, width, tab_in, tab_next)
    par = np.array([_F_WS, _F_LOWER, _F_UPPER, _F_DIGIT, _F_CJK, _F_CJKP, _F_TERM, _F_CLOSE, _WORD_MAX,
                    MIN_WRAP_WIDTH], np.int64)

    # the next line's first letter, past up to two quotation marks or opening brackets (a wrap can fall
    # before a quotation: ``thought Alice`` over ``"without pictures or conversations?"``)
    def next_letter(idx: np.ndarray) -> np.ndarray:
        """The flags of the first character of the line after each terminator ``idx``, past its quotes
        and opening brackets."""
        fast = native.wrap_read(cp, fl, _WRAP_CLASSES, par, per_line, idx, 0, lo, hi, hard)
        if fast is not None:
            return fast[0]
        at = w_nl[idx]
        e = end[idx] - 1
        for _ in range(2):
            at = np.where((at < e) & _member(cp[np.minimum(at, e)], _OPENERS), at + 1, at)
        return fl[cp[np.minimum(at, e)]]

    # the next line goes on (a lower-case letter, a CJK character): in most texts no full line does
    cn = next_letter(cand)
    goes = ((cn & _F_LOWER) != 0) | ((cn & _F_CJK) != 0)
    cand = cand[(np.bincount(tid[cand], weights=goes, minlength=T) > 0)[tid[cand]]]
    if cand.size == 0:
        return soft

    marks: list[np.ndarray] = []  # (the texts' code marks, once read: both passes below may ask)

    def read(idx: np.ndarray, at_width: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The breaks among ``idx`` that may be the tool's, and which of them go on in lower case or CJK
        (the evidence of wrapping) or meet the width otherwise; ``at_width``: only breaks at the width."""
        fast = native.wrap_read(cp, fl, _WRAP_CLASSES, par, per_line, idx, 1 if at_width else 2, lo, hi, hard)
        if fast is not None:  # (per break: keep | goes_on << 1 | other << 2)
            keep = (fast[1] & 1) != 0
            kept = fast[1][keep]
            return idx[keep], (kept & 2) != 0, (kept & 4) != 0
        cn = next_letter(idx)
        cjk_next = ((cn & _F_CJK) != 0) & ((cn & (_F_CJKP | _F_TERM)) == 0)
        lower_next = (cn & _F_LOWER) != 0
        # the line's last character, past up to three spaces (a CR of a CRLF among them)
        ts = text_start[idx]
        last = nl[idx] - 1
        for _ in range(3):
            ws = (last >= ts) & ((fl[cp[np.maximum(last, 0)]] & _F_WS) != 0)
            last = np.where(ws, last - 1, last)
        # ... and past up to two closing quotes or backticks: a line ending in ``"quietly"`` or in inline
        # code (```main```) goes on as one ending in the word does, one ending in ``."`` ends a sentence
        # (brackets are not looked past: in code a line ending in ``)`` is common, and no prose)
        core = np.maximum(last, 0)
        for _ in range(2):
            core = np.where((core > ts) & _member(cp[core], _LINE_CLOSERS), core - 1, core)
        c_last = fl[cp[core]]
        joiner = _member(cp[core], _JOINERS)
        wordy = ((c_last & (_F_LOWER | _F_UPPER | _F_DIGIT)) != 0) | joiner
        cjk_last = ((c_last & _F_CJK) != 0) & ((c_last & (_F_CJKP | _F_TERM)) == 0)
        wid = width[idx]
        latin = wid >= MIN_WRAP_WIDTH
        # a sentence going on in lower case or CJK, going on with a capital or a digit, or a sentence
        # ending there by chance of the width
        # (in CJK text a line that ends in a CJK character or comma goes on too over a line that opens with a
        # comma-like mark, ``源代码`` over ``，编译这些程序``, and, at the width, over a Latin word or a number:
        # ``用户通常选择从某个`` over ``Linux 发行版``; a CJK sentence is not over until its full stop)
        nxt_cp = cp[np.minimum(w_nl[idx], end[idx] - 1)]
        cjk_more = _member(nxt_cp, _CJK_GOES_ON) | ((cn & (_F_LOWER | _F_UPPER | _F_DIGIT) != 0) & at_width)
        goes_on = (wordy & lower_next & latin) | ((cjk_last | joiner) & cjk_next) | (cjk_last & cjk_more) \
            | (joiner & _member(nxt_cp, _CJK_GOES_ON))
        other = ~goes_on & (latin | cjk_next) & (
            (wordy & ((cn & (_F_UPPER | _F_DIGIT)) != 0)) | ((c_last & (_F_TERM | _F_CLOSE)) != 0))
        # ... not before a title: a line short of the width that does not end as prose does ("2.1 Methods")
        nxt_end = nxt_nl[idx] - 1
        for _ in range(3):
            nxt_end = np.where((nxt_end > w_nl[idx]) & ((fl[cp[nxt_end]] & _F_WS) != 0), nxt_end - 1, nxt_end)
        other &= ~((nxt_nl[idx] - nl[idx] - 1 + tab_next[idx] + 1 + _WORD_MAX <= wid)
                   & ~_member(cp[nxt_end], _PROSE_END_CP))
        if not at_width:
            other[:] = False
        # ... the next line indented no deeper than this one's text (a list item's text: past its marker), in columns
        item = _item_text(cp, ts)
        keep = (goes_on | other) & (last >= ts) \
            & (w_nl[idx] - nl[idx] - 1 + tab_next[idx] <= item - line_start[idx] + tab_in[idx])
        idx, goes_on, other, last, cjk_next, nxt_end = (idx[keep], goes_on[keep], other[keep], last[keep],
                                                       cjk_next[keep], nxt_end[keep])
        # the next word would not have fitted, and the line opens with no speaker's name or label
        w = w_nl[idx]
        keep = ~_labelled(cp, fl, w, nxt_nl[idx])
        if at_width:
            word = np.where(cjk_next, 1, _word_length(cp, fl, w))
            keep &= length[idx] + 1 + np.maximum(word, 1) > width[idx]
        # not inside or next to what Markdown keeps whole or hard
        if lo.size:
            for pos in (last, w):
                j = np.searchsorted(lo, pos, side="right") - 1
                keep &= ~((j >= 0) & (pos < hi[np.maximum(j, 0)]))
        if hard.size:
            keep &= ~_member(w, hard)
        # ... and neither line a statement of code (an indented docstring's prose is wrapped, the code around
        # it is not: ``self.a = a`` over ``self.b = b``, ``x = f(a);`` over ``if (x) {``); read last, on the
        # lines still kept (their characters only)
        sel = np.flatnonzero(keep)
        if sel.size:
            code = _statements(cp, np.concatenate((text_start[idx[sel]], w[sel])), np.concatenate((last[sel], nxt_end[sel])),
                               marks)
            keep[sel] = ~code[: sel.size] & ~code[sel.size :]
        return idx[keep], goes_on[keep], other[keep]

    cand, goes_on, other = read(cand, True)
    # a text is wrapped where its sentences go on across the width at least as often as anything
    # else meets it there; then every one of these breaks is the tool's, none the writer's, and so is
    # a break short of the width where a sentence goes on in lower case or CJK (wrapped by hand)
    of = tid[cand]
    wrapped = (np.bincount(of, minlength=T) > 0) \
        & (np.bincount(of, weights=goes_on, minlength=T) >= np.bincount(of, weights=other, minlength=T))
    if not wrapped.any():
        return soft
    taken = np.zeros(m, dtype=bool)
    taken[cand[wrapped[of]]] = True
    read_at = wrapped[tid]  # (the breaks whose answer may be True, and is read)
    if needed is not None and (mask := needed()) is not None:
        taken &= mask
        read_at = read_at & mask
    rest = np.flatnonzero(single & ~taken & read_at)
    cn = next_letter(rest)
    rest = rest[((cn & _F_LOWER) != 0) | ((cn & _F_CJK) != 0)]  # (only these can go on)
    more, goes_on, _ = read(rest, False)
    taken[more[goes_on]] = True
    cand = np.flatnonzero(taken)
    # but not where either line's text holds a "|" or a tab (tabular data; a tab in an indent is indentation):
    # the spans [text_start, nl) and [w_nl, nxt_nl) of each break, in order
    a = np.stack((text_start[cand], w_nl[cand]), axis=1).ravel()
    b = np.stack((nl[cand], nxt_nl[cand]), axis=1).ravel()
    tabular = native.spans_any(cp, _WRAP_CLASSES, _TABLE_BIT, a, b)
    if tabular is not None:  # (the lines' own characters)
        cand = cand[~tabular.reshape(-1, 2).any(axis=1)]
    elif (tab := np.flatnonzero((cp == _TABLE[0]) | (cp == _TABLE[1]))).size:
        cand = cand[(np.searchsorted(tab, a) == np.searchsorted(tab, b)).reshape(-1, 2).all(axis=1)]
    soft[cand] = True
    return soft

"""Lines that are records, each one unit the sentence splitter never ends a sentence inside: every line of a
CSV or a JSON Lines file, and each row of a table aligned with spaces (``ps``'s, ``df``'s, a plain-text
document's columns). A ``. `` inside a field or a cell is no sentence's end there: a record is cut inside only
where it alone exceeds a limit, as a Markdown table's row is (:mod:`.line_kinds` reads the ranges).

Read by each file's own conventions, never by a count tuned on an evaluation: a CSV has the same count of
unquoted separators on every line (two commas or more, or one tab or more: three columns of commas keep
verse and prose with a comma per line out; and a comma with no space after it: prose puts one after each); JSON Lines has a ``{...}`` object on every line; an aligned table
is three lines or more in a row where, after runs of two spaces or more, a column of cells opens (left-aligned)
or closes (right-aligned) at one place on every line (ragged text with two spaces here and there does not)."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from ._arrays import _member, _walk
from .cache import text_cache
from .charclass import codepoints
from .lines import line_table

#: the fewest lines a CSV, a JSON Lines file or an aligned table holds (a header and two records)
RECORDS_MIN = 3
#: the fewest separators per line that make a CSV: two commas or semicolons (three columns), one tab
_SEPARATORS = ((",", 2), ("\t", 1), (";", 2))
_QUOTED = re.compile(r'"(?:[^"]|"")*"')
_SPACES = re.compile(" +")
_ALNUM = re.compile(r"[^\W_]")
#: the code points :func:`_not_alnum`'s table covers (Latin-1: an aligned table's cells and a source file's)
_TABLE_TOP = 256


@lru_cache(maxsize=1)
def _not_alnum() -> np.ndarray:
    """A bool table by code point below :data:`_TABLE_TOP`: whether :data:`_ALNUM` does not match the character
    (no letter nor digit, or ``_``), read off the pattern itself, so the two agree."""
    table = np.array([_ALNUM.match(chr(c)) is None for c in range(_TABLE_TOP)], dtype=bool)
    table.flags.writeable = False
    return table


def _holds_alnum(text: str, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per span ``[lo, hi)`` of ``text``, whether :data:`_ALNUM` finds a letter or a digit in it: a walk past what
    is none (:func:`._arrays._walk`, most cells' first character ends it), where the pattern was tried at each
    cell (a source file's, an aligned table's thousands); a walk stopped by a character past the table (a CJK
    cell's), the pattern's."""
    cp = codepoints(text)
    if lo.size == 0 or cp.size == 0:
        return np.zeros(lo.size, dtype=bool)
    at, _, _ = _walk(cp, lo, hi, _not_alnum(), int((hi - lo).max()) + 1)
    out = at < hi
    for k in np.flatnonzero(out & (cp[np.minimum(at, cp.size - 1)] >= _TABLE_TOP)).tolist():
        out[k] = _ALNUM.search(text, int(at[k]), int(hi[k])) is not None
    return out
_STOPS = np.array(sorted(map(ord, ".!?")), dtype=np.uint32)


def _line_starts(first: np.ndarray, nl: np.ndarray) -> np.ndarray:
    """Each line's own start (its indent included) from its first non-space character."""
    k = np.searchsorted(nl, first)
    return np.where(k > 0, nl[np.maximum(k - 1, 0)] + 1, 0)


def _whole_file(text: str, first: np.ndarray, end: np.ndarray, nl: np.ndarray) -> bool:
    """Every line a JSON object, or every line as many unquoted separators as the first (a CSV), the lines one
    under another (a blank line parts paragraphs, no CSV's records). (Its first
    two lines are read first: most texts are neither, and no more of them is read.)"""
    m = first.size
    if m < RECORDS_MIN:
        return False
    def line(i: int) -> str:
        return text[int(first[i]) : int(end[i])].rstrip("\r \t")
    def bare(i: int) -> str:
        x = line(i)
        return _QUOTED.sub("", x) if '"' in x else x
    # (the first two lines first: where they read as neither, no line is read further, not even for blank lines)
    json = all(line(i)[:1] == "{" and line(i)[-1:] == "}" for i in range(2))
    head = [] if json else [bare(0), bare(1)]
    seps = [(sep, head[0].count(sep)) for sep, least in _SEPARATORS if not json and head[0].count(sep) >= least
            and head[1].count(sep) == head[0].count(sep)
            # (prose writes a space after each of its commas; a CSV writer puts none after some)
            and (sep == "\t" or any(h.count(sep) > h.count(sep + " ") for h in head))]
    if not json and not seps:
        return False
    if np.any(np.diff(np.searchsorted(nl, first)) != 1):
        return False
    if json:
        return all(line(i)[:1] == "{" and line(i)[-1:] == "}" for i in range(2, m))
    return any(all(bare(i).count(sep) == count for i in range(2, m)) for sep, count in seps)


#: how far a gutter is read on the code points for its end (a longer one is matched by :data:`_SPACES`)
_GUTTER_READ = 16
#: how many code points :func:`_run_starts` reads at a time (its buffers stay in the CPU's cache and are reused:
#: a fresh array the size of the text costs more in page faults than its comparisons)
_BLOCK = 1 << 16


def _run_starts(cp: np.ndarray) -> np.ndarray:
    """Where a run of two spaces or more opens after a character that is none (> U+0020), a block at a time: a
    block without two spaces in a row (most prose) is read once, to no more than that."""
    sp, two, found = np.empty(_BLOCK + 2, bool), np.empty(_BLOCK, bool), []
    for a in range(0, cp.size - 2, _BLOCK):
        c = cp[a : a + _BLOCK + 2]
        s = np.equal(c, 0x20, out=sp[: c.size])
        t = np.logical_and(s[1:-1], s[2:], out=two[: c.size - 2])  # (at i: spaces at i + 1 and i + 2)
        if t.any():
            t &= np.greater(c[:-2], 0x20, out=s[:-2])  # (s[:-2] read: its memory is reused)
            found.append(np.flatnonzero(t) + (a + 1))
    return np.concatenate(found) if found else np.zeros(0, np.int64)


@text_cache(maxsize=8)
def _gutters(text: str) -> np.ndarray:
    """The runs of two spaces or more between two cells of a line (``[[start, end], ...]``): after a character
    that is no space nor a sentence's full stop (prose's two spaces after one are no gutter), before one that is
    no space. Read on the code points (a regex tried at every character costs ten times more): two spaces in a
    row are looked for first (most prose has none), and the few runs' ends read on the code points."""
    cp = codepoints(text)
    if cp.size < 4:
        return np.zeros((0, 2), np.int64)
    lo = _run_starts(cp)
    if lo.size == 0:  # (no two spaces in a row, most prose: none of the reads below, each a fixed cost on a short text)
        return np.zeros((0, 2), np.int64)
    lo = lo[~_member(cp[lo - 1], _STOPS)]
    window = cp[np.minimum(lo[:, None] + np.arange(2, _GUTTER_READ), cp.size - 1)] == 0x20
    hi = lo + 2 + np.argmin(window, axis=1)  # (the first no space read; past the end reads the last character)
    long = window.all(axis=1)
    if long.any():
        hi[long] = [_SPACES.match(text, a).end() for a in lo[long].tolist()]
    keep = cp[np.minimum(hi, cp.size - 1)] > 0x20
    keep &= hi < cp.size
    return np.stack((lo[keep], hi[keep]), axis=1).astype(np.int64)


@text_cache(maxsize=8)
def _aligned_tables(text: str) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """The tables aligned with spaces, each as its rows' first characters and line ends: three lines or more in
    a row (no blank line between), each with runs of two spaces or more between cells, where a cell opens right
    after such a run at one column on every line, or one closes right before such a run at one column on every
    line. (Read once per text from its gutters alone: the splitter and the layout both ask.)"""
    at = _gutters(text)
    if at.shape[0] < RECORDS_MIN:
        return ()
    a, b = at[:, 0], at[:, 1]
    t = line_table(text)
    line = np.searchsorted(t.start, a, side="right") - 1  # (each gutter's line)
    start = t.start[line]
    head = np.concatenate(([True], start[1:] != start[:-1]))  # (a line's first gutter)
    heads = np.flatnonzero(head)
    # (where a line's first cell opens, past its indent: a gutter follows a character that is no blank on its line;
    # each later cell opens where the gutter before it ends)
    first = t.first[line[heads]]
    opened = np.concatenate(([0], b[:-1]))
    opened[heads] = first
    # (a Markdown table's row, "|" first, is a unit already and its header read as such; a cell of marks alone
    # is no cell: a quote's ">", a comment's "#", a list's "1." before its text)
    piped = codepoints(text)[first] == 0x7C
    kept = np.flatnonzero(~piped[np.cumsum(head) - 1])
    kept = kept[_holds_alnum(text, opened[kept], a[kept])]
    if kept.size == 0:
        return ()
    own = start[kept]  # (the kept gutters' lines, each line's columns in a run: where a cell opens, closes)
    cut = np.flatnonzero(np.concatenate(([True], own[1:] != own[:-1], [True]))).tolist()
    opens, closes = (b[kept] - own).tolist(), (a[kept] - own).tolist()
    starts = own[cut[:-1]].tolist()
    # (whether each line comes right under the one before it: a table's rows do)
    own_line = line[kept][cut[:-1]]
    under = np.concatenate(([False], own_line[1:] == own_line[:-1] + 1)).tolist()
    out = []
    k, n = 0, len(starts)
    while k < n:
        if not (k + 2 < n and under[k + 1] and under[k + 2]):  # (no three rows from here)
            k += 1
            continue
        rows = [starts[k]]
        lefts, rights = set(opens[cut[k] : cut[k + 1]]), set(closes[cut[k] : cut[k + 1]])
        k += 1
        while k < n and under[k]:
            left, right = lefts.intersection(opens[cut[k] : cut[k + 1]]), rights.intersection(closes[cut[k] : cut[k + 1]])
            if not left and not right:
                break
            lefts, rights = left, right
            rows.append(starts[k])
            k += 1
        if len(rows) >= RECORDS_MIN:
            firsts = tuple(r + len(text[r : r + 256]) - len(text[r : r + 256].lstrip(" \t")) for r in rows)
            ends = tuple(e if (e := text.find("\n", r)) >= 0 else len(text) for r in rows)
            out.append((firsts, ends))
    return tuple(out)


def record_lines(text: str, first: np.ndarray, end: np.ndarray, nl: np.ndarray) -> np.ndarray:
    """The indices of the lines (``first``: each line's first non-space character, ``end``: its line end;
    ``nl``: the text's line ends) that are records: each a unit no sentence ends inside."""
    if _whole_file(text, first, end, nl):
        return np.arange(first.size, dtype=np.int64)
    rows = np.asarray([f for firsts, _ in _aligned_tables(text) for f in firsts], np.int64)
    if rows.size == 0 or first.size == 0:
        return np.zeros(0, np.int64)
    k = np.minimum(np.searchsorted(first, rows), first.size - 1)
    return k[first[k] == rows]


def has_gutters(text: str) -> bool:
    """Whether ``text`` holds a table aligned with spaces."""
    return bool(_aligned_tables(text))


def aligned_heads(text: str) -> list[int]:
    """The first character of each table's first row where it is a header row (names of columns: no digit,
    over rows that hold one, as ``ps``'s and ``df``'s): it stays with the rows under it."""
    def digit(a: int, b: int) -> bool:
        return any(ch.isdigit() for ch in text[a:b])
    return [firsts[0] for firsts, ends in _aligned_tables(text)
            if not digit(firsts[0], ends[0]) and any(digit(a, b) for a, b in zip(firsts[1:], ends[1:], strict=True))]

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

import numpy as np

from ._arrays import _member
from .cache import text_cache
from .charclass import codepoints

#: the fewest lines a CSV, a JSON Lines file or an aligned table holds (a header and two records)
RECORDS_MIN = 3
#: the fewest separators per line that make a CSV: two commas or semicolons (three columns), one tab
_SEPARATORS = ((",", 2), ("\t", 1), (";", 2))
_QUOTED = re.compile(r'"(?:[^"]|"")*"')
_SPACES = re.compile(" +")
_ALNUM = re.compile(r"[^\W_]")
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
    if m < RECORDS_MIN or np.any(np.diff(np.searchsorted(nl, first)) != 1):
        return False
    def line(i: int) -> str:
        return text[int(first[i]) : int(end[i])].rstrip("\r \t")
    if all(line(i)[:1] == "{" and line(i)[-1:] == "}" for i in range(2)):
        return all(line(i)[:1] == "{" and line(i)[-1:] == "}" for i in range(2, m))
    def bare(i: int) -> str:
        x = line(i)
        return _QUOTED.sub("", x) if '"' in x else x
    head = [bare(0), bare(1)]
    for sep, least in _SEPARATORS:
        count = head[0].count(sep)
        # (prose writes a space after each of its commas; a CSV writer puts none after some)
        if count >= least and head[1].count(sep) == count and (sep == "\t" or any(
                h.count(sep) > h.count(sep + " ") for h in head)) \
                and all(bare(i).count(sep) == count for i in range(2, m)):
            return True
    return False


@text_cache(maxsize=8)
def _gutters(text: str) -> np.ndarray:
    """The runs of two spaces or more between two cells of a line (``[[start, end], ...]``): after a character
    that is no space nor a sentence's full stop (prose's two spaces after one are no gutter), before one that is
    no space. Read on the code points (a regex tried at every character costs ten times more)."""
    cp = codepoints(text)
    if cp.size < 4:
        return np.zeros((0, 2), np.int64)
    sp = cp[1:] == 0x20
    lo = np.flatnonzero((cp[:-2] > 0x20) & sp[:-1] & sp[1:]) + 1  # (two spaces after a character that is none)
    lo = lo[~_member(cp[lo - 1], _STOPS)]
    hi = np.asarray([_SPACES.match(text, a).end() for a in lo.tolist()], np.int64)  # (a few: one per cell)
    if hi.size:
        keep = cp[np.minimum(hi, cp.size - 1)] > 0x20
        keep &= hi < cp.size
        lo, hi = lo[keep], hi[keep]
    return np.stack((lo, hi), axis=1).astype(np.int64)


@text_cache(maxsize=8)
def _aligned_tables(text: str) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """The tables aligned with spaces, each as its rows' first characters and line ends: three lines or more in
    a row (no blank line between), each with runs of two spaces or more between cells, where a cell opens right
    after such a run at one column on every line, or one closes right before such a run at one column on every
    line. (Read once per text from its gutters alone: the splitter and the layout both ask.)"""
    at = _gutters(text)
    if at.shape[0] < RECORDS_MIN:
        return ()
    lines: dict[int, list[tuple[int, int]]] = {}  # (each line's start: its gutters' columns)
    cell: dict[int, int] = {}  # (where the cell before a line's next gutter opens)
    for a, b in at.tolist():
        start = text.rfind("\n", 0, a) + 1
        if start not in cell:
            cell[start] = start + len(text[start:a]) - len(text[start:a].lstrip(" \t"))
            if text[cell[start]] == "|":
                cell[start] = -1
        opened = cell[start]
        # (a Markdown table's row, "|" first, is a unit already and its header read as such; a cell of marks alone
        # is no cell: a quote's ">", a comment's "#", a list's "1." before its text)
        if opened < 0:
            continue
        cell[start] = b
        if _ALNUM.search(text, opened, a) is None:
            continue
        lines.setdefault(start, []).append((a - start, b - start))
    out = []
    starts = sorted(lines)
    k = 0
    while k < len(starts):
        rows = [starts[k]]
        lefts, rights = {b for _, b in lines[starts[k]]}, {a for a, _ in lines[starts[k]]}
        k += 1
        while k < len(starts) and text.rfind("\n", 0, starts[k] - 1) + 1 == rows[-1] and text[starts[k] - 1] == "\n":
            g = lines[starts[k]]
            left, right = lefts & {b for _, b in g}, rights & {a for a, _ in g}
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

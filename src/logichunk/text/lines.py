"""A text's lines as one table every reader of lines shares: per line (split at each line feed) its start, its
end, its first character that is no space nor tab, and its last one before the end (less a carriage return right
before it). Why: the readers of a text's lines (reStructuredText's literal blocks and directives, aligned tables)
each found their lines on their own, by a regular expression's scan of the whole text or a ``rfind`` per line; the
table is one pass in C (:func:`logichunk.native.lines`), kept per text, and a reader looks only at the few lines
whose edges hold what it wants."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import native
from .cache import text_cache
from .charclass import codepoints


@dataclass(frozen=True)
class LineTable:
    """Per line (int64 arrays, one entry each, in order): ``start`` (0, then past each line feed), ``end`` (its
    line feed's offset; the text's length for the last line), ``first`` (its first offset that is no space nor
    tab; ``end`` where none) and ``last`` (its last such offset before ``end``, a carriage return right before
    ``end`` left out; ``start - 1`` where none). Callers do not change the arrays."""

    start: np.ndarray
    end: np.ndarray
    first: np.ndarray
    last: np.ndarray


@text_cache(maxsize=8)
def line_table(text: str) -> LineTable:
    """The :class:`LineTable` of ``text`` (kept per text)."""
    cp = codepoints(text)
    cols = native.lines(cp)
    return LineTable(*(cols if cols is not None else _line_table_passes(cp)))


def _line_table_passes(cp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`line_table`'s columns in numpy's passes (the compiled pass's twin: the same arrays)."""
    n = cp.size
    end = np.append(np.flatnonzero(cp == 0x0A), n).astype(np.int64)
    start = np.concatenate(([0], end[:-1] + 1)).astype(np.int64)
    if n == 0:
        return start, end, end.copy(), start - 1
    solid = np.flatnonzero((cp != 0x20) & (cp != 0x09))
    first = np.minimum(np.append(solid, n)[np.searchsorted(solid, start)], end)
    stop = end - ((end > start) & (cp[np.maximum(end - 1, 0)] == 0x0D))  # (a CR right before the line feed: out)
    k = np.searchsorted(solid, stop) - 1  # (the last such character before the stop)
    last = np.where(k >= 0, solid[np.maximum(k, 0)] if solid.size else -1, -1)
    last = np.where(last >= start, last, start - 1)
    return start, end, first.astype(np.int64), last.astype(np.int64)


def tail_marks(text: str, mark: str) -> np.ndarray:
    """The indices of the lines of ``text`` whose last characters (past trailing spaces and tabs, and a carriage
    return before the line feed) are ``mark`` (two characters or more), that end with a line feed."""
    t = line_table(text)
    cp = codepoints(text)
    k = len(mark)
    sel = np.flatnonzero((t.last - (k - 1) >= t.start) & (t.end < cp.size))
    for j, c in enumerate(reversed(mark)):
        sel = sel[cp[t.last[sel] - j] == ord(c)]
    return sel


def head_marks(text: str, mark: str) -> np.ndarray:
    """The indices of the lines of ``text`` whose first characters past their indent (spaces and tabs) are
    ``mark``."""
    t = line_table(text)
    cp = codepoints(text)
    sel = np.flatnonzero(t.first + len(mark) <= t.end)
    for j, c in enumerate(mark):
        sel = sel[cp[t.first[sel] + j] == ord(c)]
    return sel

"""Baseline chunkers for comparison: fixed size and recursive separators. Exact spans, no model.

Both return a flat :class:`~logichunk.tree.ChunkTree` (level 1 only) whose chunks tile the text,
or, through the ``*_spans`` functions, an ``(m, 2)`` int64 array of ``[start, end)`` rows.

* ``fixed``: cut every ``size`` units (chars, bytes or tokens), each cut as far from the previous
  one as the size allows. A cut never falls inside a user-perceived character nor, with tokens,
  inside a word piece: it goes just before the next token starts (trailing whitespace stays with
  the chunk before, as everywhere in logichunk).
* ``recursive``: the classic recursive-separator splitter (paragraphs, lines, sentences, clauses,
  words, then characters) on offsets: split a piece at the strongest separator it contains,
  recurse into pieces still over ``size``, then merge neighbours greedily up to ``size``.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import InputError
from ..text.charclass import cut_allowed
from ..text.measure import Measure, Meter
from ..tree import ChunkTree, build_tree

__all__ = ["SEPARATORS", "fixed", "fixed_spans", "recursive", "recursive_spans"]

# Strongest first. A piece ends right after its separator (the separator belongs to the piece before).
SEPARATORS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\n[ \t\r\f\v]*\n\s*"),                                   # blank line(s)
    re.compile(r"\n\s*"),                                                 # line break
    re.compile(r"[.!?。！？；…]+[\"'”’）)\]」』]*\s+|[。！？；…]+[\"'”’）)\]」』]*"),  # sentence end
    re.compile(r"[,;:，、；：]\s*"),                                       # clause
    re.compile(r"\s+"),                                                   # word
)


def _check(size: int) -> int:
    size = int(size)
    if size < 1:
        raise InputError(f"chunk size must be >= 1, got {size}")
    return size


def _to_spans(cuts: np.ndarray, n: int) -> np.ndarray:
    """Cut positions (any order, may repeat, may include 0/n) -> tiling spans of ``[0, n)``."""
    c = np.unique(np.concatenate(([0, n], np.asarray(cuts, dtype=np.int64))))
    c = c[(c >= 0) & (c <= n)]
    return np.stack([c[:-1], c[1:]], axis=1) if n else np.zeros((0, 2), dtype=np.int64)


def _packed_cuts(p: np.ndarray, allowed: np.ndarray, a: int, b: int, size: int) -> list[int]:
    """Cuts strictly inside ``[a, b)``, each as far as ``size`` units from the previous one (or
    from ``a``) allows, only at ``allowed`` offsets (sorted; they keep characters and tokens
    whole). Greedy from the left, so no piece exceeds ``size`` unless one unit alone does. Reads only the
    allowed offsets inside the piece: the recursive splitter calls it once per piece without a separator
    (reading the whole text's each time made a text of many long words quadratic: 10 MB took > 10 minutes)."""
    inside = allowed[int(np.searchsorted(allowed, a, side="right")):int(np.searchsorted(allowed, b, side="left"))]
    pa = p[inside]
    here = p[a]
    i = 0  # the first allowed offset after a
    cuts: list[int] = []
    while p[b] - here > size and i < inside.size:
        j = max(int(np.searchsorted(pa, here + size, side="right")) - 1, i)  # one long unit: just after it
        cuts.append(int(inside[j]))
        here = pa[j]
        i = j + 1
    return cuts


def fixed_spans(text: str, size: int, unit: str | Measure = "chars") -> np.ndarray:
    """Spans of at most ``size`` units each (a single token or character longer than that stays
    whole; a cut never splits a user-perceived character, see :func:`~logichunk.text.charclass.cut_allowed`)."""
    size = _check(size)
    if not text:
        return np.zeros((0, 2), dtype=np.int64)
    meter = Meter(text, unit)
    allowed = _allowed(text, meter)
    return _to_spans(np.asarray(_packed_cuts(meter.prefix, allowed, 0, len(text), size), dtype=np.int64), len(text))


def _allowed(text: str, meter: Meter) -> np.ndarray:
    """Offsets where a cut keeps characters whole and, with tokens, falls where a token starts."""
    ok = cut_allowed(text)
    inside = meter.allowed  # a real tokenizer's own word pieces (it counts a token where the token ends)
    if inside is not None:
        return np.flatnonzero(ok & inside)
    p = meter.prefix  # an estimate counts a unit at its first character: one starts at k when p[k+1] > p[k]
    ok[1:-1] &= p[2:] != p[1:-1]  # no unit starts here (inside a token, or before its spaces): no cut
    return np.flatnonzero(ok)


def _split_points(text: str, a: int, b: int, level: int) -> list[int]:
    rx = SEPARATORS[level]
    return [m.end() for m in rx.finditer(text, a, b) if a < m.end() < b]


def recursive_spans(text: str, size: int, unit: str | Measure = "chars") -> np.ndarray:
    """Recursive-separator spans of at most ``size`` units (a lone token over the limit stays whole)."""
    size = _check(size)
    if not text:
        return np.zeros((0, 2), dtype=np.int64)
    meter = Meter(text, unit)
    p = meter.prefix
    allowed = _allowed(text, meter)
    pieces: list[int] = []  # end offsets of the atomic pieces, in order

    def split(a: int, b: int, level: int) -> None:
        if p[b] - p[a] <= size:
            pieces.append(b)
            return
        while level < len(SEPARATORS):
            pts = _split_points(text, a, b, level)
            if pts:
                for x, y in zip([a, *pts], [*pts, b], strict=True):
                    split(x, y, level + 1)
                return
            level += 1
        # no separator left: packed cuts inside [a, b), characters kept whole
        pieces.extend(_packed_cuts(p, allowed, a, b, size))
        pieces.append(b)

    split(0, len(text), 0)
    ends = np.asarray(pieces, dtype=np.int64)
    starts = np.concatenate(([0], ends[:-1]))
    # greedy merge of neighbours while the merged chunk fits
    cuts: list[int] = []
    cur = 0
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        if s > cur and p[e] - p[cur] > size:
            cuts.append(s)
            cur = s
    return _to_spans(np.asarray(cuts, dtype=np.int64), len(text))


def _tree(text: str, spans: np.ndarray, method: str, unit: str | Measure) -> ChunkTree:
    meter = Meter(text, unit)
    rows = [(str(i + 1), int(s), int(e), method, {"size": meter.size(int(s), int(e))})
            for i, (s, e) in enumerate(spans.tolist())]
    return build_tree(text, rows, stats={"chunks": len(rows)}, unit=meter.unit)


def fixed(text: str, size: int = 1000, *, unit: str | Measure = "chars") -> ChunkTree:
    """Fixed-size chunks as a flat chunk tree."""
    return _tree(text, fixed_spans(text, size, unit), "fixed", unit)


def recursive(text: str, size: int = 1000, *, unit: str | Measure = "chars") -> ChunkTree:
    """Recursive-separator chunks as a flat chunk tree."""
    return _tree(text, recursive_spans(text, size, unit), "recursive", unit)

"""Overlap without altering text: each chunk gets a context window around its own span.

Why a window and not overlapping chunks: chunks are spans that tile the text (DESIGN), and overlap
is what a retriever or an embedder reads *around* a chunk, not part of it. So the tree keeps its
tiling and every chunk records ``meta["overlap_span"] = [start, end]``: its span widened by at most
``overlap`` units on each side — still an exact slice of the source, never inside a token of the
unit's tokenizer or a user-perceived character, and (where the text has them) at a word edge.
Framework adapters hand these windows on as their ``chunk_overlap``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from ..text.charclass import ALNUM, WS, classes, cut_allowed
from ..text.measure import Measure, Meter
from ..tree import ChunkTree, build_tree


def check_overlap(overlap: object) -> int:
    if isinstance(overlap, bool) or not isinstance(overlap, int | np.integer) or overlap < 0:
        raise InputError(f"overlap must be an integer >= 0, got {overlap!r}")
    return int(overlap)


def overlap_edges(text: str, unit: str | Measure, starts: np.ndarray, ends: np.ndarray,
                  overlap: int) -> tuple[np.ndarray, np.ndarray]:
    """The windows ``[ws, we)`` of spans ``[starts, ends)``: as wide as ``overlap`` units allow on
    each side, edges where a cut would be (token edge, whole character, word edge when one is in
    reach), never narrower than the span itself."""
    starts = np.asarray(starts, np.int64)
    ends = np.asarray(ends, np.int64)
    n = len(text)
    if overlap == 0 or n == 0:
        return starts.copy(), ends.copy()
    overlap = min(int(overlap), 1 << 40)  # (past any text's measure: the whole text; a larger one overflowed int64)
    meter = Meter(text, unit)
    good = cut_allowed(text)
    tok = meter.allowed
    if tok is not None:
        good &= tok
    cls = classes(text)
    alnum = (cls & ALNUM) != 0
    word = good.copy()
    word[1:n] &= ~(alnum[:-1] & alnum[1:])  # not between two letters of one word
    space = (cls & WS) != 0
    opens, closes = word.copy(), word.copy()
    # a window opens on a word, not on the space before it — unless the tokenizer glues that space to
    # the word (BPE's " word"): then on the space, where the word's token starts
    lead = ~space
    if tok is not None:
        lead[:-1] |= ~space[1:]
    opens[:n] &= lead
    closes[1:] &= ~space  # and closes after one
    idx = np.arange(n + 1)
    # the next / previous acceptable edge of every offset (word edges first, any whole-token edge else)
    nxt_word = np.minimum.accumulate(np.where(opens, idx, n)[::-1])[::-1]
    nxt_good = np.minimum.accumulate(np.where(good, idx, n)[::-1])[::-1]
    prv_word = np.maximum.accumulate(np.where(closes, idx, 0))
    prv_good = np.maximum.accumulate(np.where(good, idx, 0))
    if meter._chars:
        lo = np.maximum(starts - overlap, 0)
        hi = np.minimum(ends + overlap, n)
    else:
        p = meter.prefix
        lo = np.searchsorted(p, p[starts] - overlap, side="left")
        hi = np.searchsorted(p, p[ends] + overlap, side="right") - 1
    ws = nxt_word[lo]
    ws = np.where(ws <= starts, ws, nxt_good[lo])
    ws = np.minimum(ws, starts)
    we = prv_word[hi]
    we = np.where(we >= ends, we, prv_good[hi])
    we = np.maximum(we, ends)
    return ws, we


def add_overlap(tree: ChunkTree, overlap: int, unit: str | Measure = "chars") -> ChunkTree:
    """``tree`` with ``meta["overlap_span"]`` on every chunk (see the module docstring); the spans,
    ids and everything else unchanged. ``overlap=0`` returns the tree as it is."""
    overlap = check_overlap(overlap)
    if overlap == 0 or not len(tree):
        return tree
    chunks = list(tree)
    s = np.fromiter((c.span.start for c in chunks), np.int64, len(chunks))
    e = np.fromiter((c.span.end for c in chunks), np.int64, len(chunks))
    ws, we = overlap_edges(tree.text, unit, s, e, overlap)
    rows: list[tuple[str, int, int, str, Any]] = [
        (c.id, c.span.start, c.span.end, c.method, {**c.meta, "overlap_span": [a, b]})
        for c, a, b in zip(chunks, ws.tolist(), we.tolist(), strict=True)]
    return build_tree(tree.text, rows, bubbles=tree.bubbles, stats={**tree.stats, "overlap": overlap}, unit=tree.unit)

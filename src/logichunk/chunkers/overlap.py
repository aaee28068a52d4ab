"""Overlap without altering text: each chunk gets a context window around its own span.

Why a window and not overlapping chunks: chunks are spans that tile the text (DESIGN), and overlap
is what a retriever or an embedder reads *around* a chunk, not part of it. So the tree keeps its
tiling and every chunk records ``meta["overlap_span"] = [start, end]``: its span widened by at most
``overlap`` units on each side — still an exact slice of the source, never inside a token of the
unit's tokenizer or a user-perceived character, at a clause's or sentence's edge where one keeps at
least half the reach (a window that opens mid-clause, ``芳草鲜美，落英缤纷`` cut after ``芳草鲜``,
reads as noise), else at a word edge where the text has them. Framework adapters widen only the
start (``after=False``): LangChain's and LlamaIndex's ``chunk_overlap`` is the most text two
neighbouring chunks share, each chunk starting with the end of the one before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..text.charclass import ALNUM, WS, classes, codepoints, cut_allowed
from ..text.measure import Measure, Meter
from ..tree import ChunkTree, build_tree


def check_overlap(overlap: object) -> int:
    if isinstance(overlap, bool) or not isinstance(overlap, int | np.integer) or overlap < 0:
        raise InputError(f"overlap must be an integer >= 0, got {overlap!r}")
    return int(overlap)


#: marks that end a clause or a sentence wherever they stand (Chinese and Japanese: no space follows)
_WIDE_MARKS = np.array([ord(c) for c in "，、；：。！？…‥"], np.uint32)
#: marks that end one only before a space or a closing quote (not ``3.14``, ``1,000``, ``e.g.x``)
_NARROW_MARKS = np.array([ord(c) for c in ",;:.!?"], np.uint32)
#: a closing quote or bracket right after a mark ends the clause with it (``他说：“好。”``, ``said.")``)
_CLOSERS = np.array([ord(c) for c in "\"'”’」』）)]】》〉"], np.uint32)


def clause_marks(text: str, space: np.ndarray) -> np.ndarray:
    """Per character: whether a clause or sentence ends with it (a mark, a closer after one, a newline)."""
    cp = codepoints(text)
    closer = np.isin(cp, _CLOSERS)
    before = np.ones(len(text), bool)  # the next character is a space, a closer, or the text's end
    before[:-1] = space[1:] | closer[1:]
    mark = np.isin(cp, _WIDE_MARKS) | (np.isin(cp, _NARROW_MARKS) & before) | (cp == 10)
    mark[1:] |= closer[1:] & mark[:-1]
    return mark


def overlap_edges(text: str, unit: str | Measure, starts: np.ndarray, ends: np.ndarray,
                  overlap: int | np.ndarray, *, after: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The windows ``[ws, we)`` of spans ``[starts, ends)``: as wide as ``overlap`` units (one for all
    spans, or one per span) allow on
    each side (``after=False``: before the span only, ``we == ends``), edges where a cut would be
    (token edge, whole character; a clause's edge when one keeps at least half of what the nearest
    word edge would, else a word edge when one is in reach), never narrower than the span itself."""
    starts = np.asarray(starts, np.int64)
    ends = np.asarray(ends, np.int64)
    n = len(text)
    if n == 0 or not np.any(np.asarray(overlap)):
        return starts.copy(), ends.copy()
    # (past any text's measure: the whole text; a larger one overflowed int64)
    overlap = np.asarray(np.minimum(np.asarray(overlap, dtype=object), 1 << 40), dtype=np.int64)
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
    # clause edges: a window opens on the first character after a mark (past the spaces of a line) and
    # closes right after a mark; the text's own edges count as both
    mark = clause_marks(text, space)
    idx = np.arange(n + 1)
    inline = space & (codepoints(text) != 10)
    last = np.maximum.accumulate(np.where(~inline, idx[:n], -1))  # last character not a line's space
    after_mark = np.ones(n + 1, bool)
    after_mark[1:] = (last < 0) | mark[np.maximum(last, 0)]
    ends_mark = np.ones(n + 1, bool)
    ends_mark[1:] = mark
    clause_opens, clause_closes = opens & after_mark, closes & ends_mark
    clause_opens[n] = clause_closes[0] = False
    # the next / previous acceptable edge of every offset (clause, word, any whole-token edge)
    nxt_clause = np.minimum.accumulate(np.where(clause_opens, idx, n)[::-1])[::-1]
    nxt_word = np.minimum.accumulate(np.where(opens, idx, n)[::-1])[::-1]
    nxt_good = np.minimum.accumulate(np.where(good, idx, n)[::-1])[::-1]
    prv_clause = np.maximum.accumulate(np.where(clause_closes, idx, 0))
    prv_word = np.maximum.accumulate(np.where(closes, idx, 0))
    prv_good = np.maximum.accumulate(np.where(good, idx, 0))
    if meter._chars:
        lo = np.maximum(starts - overlap, 0)
        hi = np.minimum(ends + overlap, n) if after else ends
    else:
        p = meter.prefix
        lo = np.searchsorted(p, p[starts] - overlap, side="left")
        hi = np.searchsorted(p, p[ends] + overlap, side="right") - 1 if after else ends
    ws = nxt_word[lo]
    ws = np.where(ws <= starts, ws, nxt_good[lo])
    ws = np.minimum(ws, starts)
    wc = nxt_clause[lo]
    ws = np.where((wc <= starts) & (2 * (starts - wc) >= starts - ws), wc, ws)
    we = prv_word[hi]
    we = np.where(we >= ends, we, prv_good[hi])
    we = np.maximum(we, ends)
    wc = prv_clause[hi]
    we = np.where((wc >= ends) & (2 * (wc - ends) >= we - ends), wc, we)
    return ws, we


def add_overlap(tree: ChunkTree, overlap: int, unit: str | Measure = "chars", *, after: bool = True,
                limits: Sequence[int] | None = None) -> ChunkTree:
    """``tree`` with ``meta["overlap_span"]`` on every chunk (see the module docstring); the spans,
    ids and everything else unchanged. ``overlap=0`` returns the tree as it is. ``after=False``
    widens each span before its start only (the frameworks' ``chunk_overlap``); ``limits`` (each
    level's, top first; the last for deeper levels) caps a whole window, for a chunk over its own
    limit (one character, or one CJK character's three tokens, wider than what the overlap left)."""
    overlap = check_overlap(overlap)
    if overlap == 0 or not len(tree):
        return tree
    chunks = list(tree)
    s = np.fromiter((c.span.start for c in chunks), np.int64, len(chunks))
    e = np.fromiter((c.span.end for c in chunks), np.int64, len(chunks))
    reach: int | np.ndarray = overlap
    if limits is not None:
        meter = Meter(tree.text, unit)
        own = e - s if meter._chars else meter.prefix[e] - meter.prefix[s]
        cap = np.fromiter((limits[min(c.level, len(limits)) - 1] for c in chunks), np.int64, len(chunks))
        reach = np.clip(np.minimum(overlap, cap - own), 0, None)
    ws, we = overlap_edges(tree.text, unit, s, e, reach, after=after)
    rows: list[tuple[str, int, int, str, Any]] = [
        (c.id, c.span.start, c.span.end, c.method, {**c.meta, "overlap_span": [a, b]})
        for c, a, b in zip(chunks, ws.tolist(), we.tolist(), strict=True)]
    return build_tree(tree.text, rows, bubbles=tree.bubbles, stats={**tree.stats, "overlap": overlap}, unit=tree.unit)

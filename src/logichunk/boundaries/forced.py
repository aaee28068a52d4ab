"""Splitting a single over-long sentence at the best clause/word break inside it: :func:`inner_breaks`
— never inside a character (combining marks, surrogate pairs, ZWJ emoji, CRLF stay whole) — and the
record of such a split every chunker leaves for review (:func:`forced_split_bubble`).

Why apart: whichever rule chose the other cuts, a sentence that alone exceeds the maximum ends here,
and the break priorities (:func:`break_priorities`) read the text's characters, which no other rule
does.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from .. import native
from ..text._arrays import _in_table, _walk
from ..text.charclass import CJK, MARK, SURR_HI, WS, class_table, codepoints, pair_cut_allowed, zwj_joins
from ..text.sentences import INDENT, LINE_END
from ..types import Bubble, bubble_excerpt
from .local import ranges

if TYPE_CHECKING:
    from ..text.measure import Meter

# --------------------------------------------------------------------------- inside one sentence

# break quality inside a sentence, best first
_CLAUSE_CODES = np.array([ord(c) for c in "，、,;；:：)）」』”’》】—"], dtype=np.uint32)
_CLAUSE_TABLE = np.zeros(0x10000, dtype=bool)  # every clause mark is in the BMP; U+FFFF is none
_CLAUSE_TABLE[_CLAUSE_CODES] = True


def _no_clause_brackets(cp: np.ndarray, is_ws: np.ndarray, marks: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
    """Unmark, in place, the ASCII ``)``, ``:``, ``,`` and ``;`` that end no clause: one with no whitespace after it in
    its span (a ``:`` inside ``libcurl4:amd64``, a ``,`` inside ``12,000``, a
    link's ``](https://...)``, a call's ``f(x).y``), or one that closes an item's marker (``(c) modify``, ``(iv)
    the``: an opening bracket at most four characters before it in its span). A cut there left ``(c) `` at a
    chunk's end. ``lo``, ``hi``: per character, its span's bounds among the concatenated characters."""
    n = cp.size
    # (and an ASCII ":", "," or ";" with no whitespace after it, inside a token: "libcurl4:amd64", "1:2.39",
    # "12,000", "a,b"; a Latin clause's mark is followed by a space, a Chinese one needs none and is not ASCII)
    joined = np.flatnonzero((cp == 0x3A) | (cp == 0x2C) | (cp == 0x3B))
    if joined.size:
        marks[joined[~((joined + 1 < hi[joined]) & is_ws[np.minimum(joined + 1, n - 1)])]] = False
    close = np.flatnonzero(cp == 0x29)
    if close.size == 0:
        return
    spaced = (close + 1 < hi[close]) & is_ws[np.minimum(close + 1, n - 1)]
    marker = np.zeros(close.size, dtype=bool)
    for d in range(2, 6):
        marker |= (close - d >= lo[close]) & (cp[np.maximum(close - d, 0)] == 0x28)
    marks[close[~spaced | marker]] = False


def break_priorities(text: str, start: int, end: int) -> np.ndarray:
    """Priority of cutting at each offset in ``(start, end)`` (array index k = offset start+1+k):
    3 after a clause mark (and its following spaces), 2 at a word start after whitespace (at the start of
    the line, where a line break lies in the whitespace: its indent goes with it), 1 at a CJK character
    boundary, 0 anywhere else a character stays whole, -1 never."""
    return break_priorities_many(text, np.array([start]), np.array([end]))[0]


def break_priorities_many(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`break_priorities` of many spans in one pass (a text may hold a hundred over-long
    sentences): ``(pri, o)`` where span ``i``'s priorities are ``pri[o[i] : o[i+1] - 1]``."""
    starts = np.asarray(starts, dtype=np.int64)
    lens = np.maximum(np.asarray(ends, dtype=np.int64) - starts, 0)
    o = np.zeros(lens.size + 1, np.int64)
    np.cumsum(lens, out=o[1:])
    total = int(o[-1])
    if total < 2:
        return np.zeros(max(total - 1, 0), dtype=np.int8), o
    fast = native.break_priorities(codepoints(text), starts, lens, class_table(), (WS, CJK, MARK, SURR_HI),
                                   _CLAUSE_TABLE, INDENT, LINE_END)
    if fast is not None:  # (the rules below in one compiled pass, but for the URLs and the joiners' category)
        pri, zwj = fast
        if zwj.size:
            pri[zwj[zwj_joins(zwj[:, 1]), 0]] = -1
        _urls_whole(text, starts, lens, o, pri)
        return pri, o
    return _priorities_passes(text, starts, lens, o), o


def _priorities_passes(text: str, starts: np.ndarray, lens: np.ndarray, o: np.ndarray) -> np.ndarray:
    """:func:`break_priorities_many`'s priorities in numpy's passes (the compiled kernel's twin,
    :func:`logichunk.native.break_priorities`): two characters at least in all."""
    total = int(o[-1])
    # pairs (k, k+1) of the concatenated spans; those across two spans are never read
    at = ranges(starts, starts + lens)  # (each concatenated character's offset in the text)
    full = codepoints(text)
    cp = full[at]
    cls = class_table()[cp]
    prev, cur = cls[:-1], cls[1:]
    pri = ((prev | cur) & CJK != 0).astype(np.int8)
    word = ((prev & WS) != 0) & ((cur & WS) == 0)
    pri[word] = 2
    marks = _CLAUSE_TABLE[np.minimum(cp, 0xFFFF)]
    is_ws = (cls & WS) != 0
    _no_clause_brackets(cp, is_ws, marks, np.repeat(o[:-1], lens), np.repeat(o[1:], lens))
    if marks.any():
        # directly after a mark, or where the whitespace run that follows a mark ends (the last
        # non-space character before a pair must lie in the pair's own span)
        last_solid = np.maximum.accumulate(np.where(~is_ws, np.arange(total), -1))[:-1]
        span_start = np.repeat(o[:-1], lens)[:-1]
        after = ~is_ws[1:] & (last_solid >= span_start) & marks[np.maximum(last_solid, 0)]
        pri[after] = 3
    # where a line break lies in the whitespace before a word, the word's break moves to the start of its
    # line: a line's indent stays with it (as at the sentences' seams, SentenceSpans.seams); an indent that
    # opens the span is not cut from its line either
    allowed = pair_cut_allowed(cp, cls)
    k = np.flatnonzero(word)
    k = k[_in_table(INDENT, cp[k]) & allowed[k]]  # (a word after an indent's character, where a cut may fall ...)
    if k.size:
        span = np.searchsorted(o, k, side="right") - 1
        k, span = k[k + 1 < o[span + 1]], span[k + 1 < o[span + 1]]  # (... in its own span: the pair across two is never read)
        # back over the indent, in the text, to the character before it: a line's end, or the span's start
        stop, _, _ = _walk(full, at[k], starts[span], INDENT, total, back=True)
        line = k - (at[k] - stop)  # (its index among the concatenated characters)
        moved = (stop >= starts[span]) & _in_table(LINE_END, full[np.maximum(stop, 0)])
        head = stop < starts[span]
        np.maximum.at(pri, line[moved], pri[k[moved]])
        pri[k[moved | head]] = 0
    _urls_whole(text, starts, lens, o, pri)
    pri[~allowed] = -1
    return pri


#: a URL from its scheme's ``://`` to where it ends: whitespace, a quote or angle bracket, a closing
#: bracket (a Markdown link's ``)``), or a Chinese mark (``链接：https://x.cn/a，见``)
_URL_BODY = re.compile(r"//[^\s<>\"'`)\]）」』”’》】、，。；：！？]+")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SCHEME_CHARS = _LETTERS | frozenset("0123456789+.-")


def _urls_whole(text: str, starts: np.ndarray, lens: np.ndarray, o: np.ndarray, pri: np.ndarray) -> None:
    """Lower every break inside a URL of the spans to a raw character's (0): its ``:`` and ``/`` are no
    clause's marks, and a cut between ``https:`` and ``//github.com/...`` breaks the link for every reader of
    either chunk. A cut still falls inside a URL longer than the limit, or where nothing else fits."""
    for i, (a, n) in enumerate(zip(starts.tolist(), lens.tolist(), strict=True)):
        e = a + n
        at = text.find("://", a, e)
        while at >= 0:
            s = at
            while s > a and at - s < 32 and text[s - 1] in _SCHEME_CHARS:
                s -= 1
            while s < at and text[s] not in _LETTERS:  # (a scheme opens with a letter)
                s += 1
            m = _URL_BODY.match(text, at + 1, e)
            if s < at and m is not None:
                k = int(o[i]) + s - a  # (pri[k] is the cut after the URL's first character)
                inner = pri[k : k + m.end() - s - 1]
                np.minimum(inner, 0, out=inner)
                at = text.find("://", m.end(), e)
            else:
                at = text.find("://", at + 3, e)


def inner_breaks(text: str, start: int, end: int, prefix: np.ndarray, max_size: int,
                 pri: np.ndarray | None = None) -> tuple[list[int], int]:
    """Offsets strictly inside ``[start, end)`` that cut one over-long sentence into pieces of at most
    ``max_size`` units, each cut at the best break in the back half of the allowed window.
    ``prefix`` is the span's own prefix (:meth:`~logichunk.text.measure.Meter.span_prefix`:
    ``prefix[i]`` = size of ``text[start:start+i]``), so the searches stay in a small array; the
    whole text's prefix (``len(text) + 1`` entries) is accepted too.

    Returns ``(cuts, worst)`` where ``worst`` is the lowest break priority used (3 clause, 2 word,
    1 CJK, 0 raw character) so callers can say how rough the split was. A single character larger
    than ``max_size`` (a 4-byte emoji at ``max_size=3`` bytes) becomes its own piece. ``pri``: the
    span's :func:`break_priorities`, when the caller computed many at once."""
    if pri is None:
        pri = break_priorities(text, start, end)
    n = end - start
    prefix = _span_prefix(prefix, start, end)
    fast = native.inner_cuts_many(prefix, np.array([0, n + 1]), pri, max_size) if n > 1 else None
    if fast is not None:  # the same walk in C (a text may hold a hundred over-long sentences)
        return [start + c for c in fast[0][0]], fast[0][1]
    cuts: list[int] = []
    worst = 3
    pos = 0  # local offsets from here on; pri[k] is the priority of a cut at local offset k+1
    while prefix[n] - prefix[pos] > max_size:
        budget = prefix[pos] + max_size
        hi = int(np.searchsorted(prefix, budget, side="right")) - 1  # furthest offset that fits
        hi = min(hi, n - 1)
        lo = int(np.searchsorted(prefix, prefix[pos] + max(1, max_size // 2), side="left"))
        lo = max(lo, pos + 1)
        choice = -1
        for a in (lo, pos + 1):  # the back half of the window first, then all of it
            window = pri[a - 1 : hi] if hi >= pos + 1 else pri[:0]
            if window.size and window.max() >= 0:
                best = int(window.max())
                choice = a + int(np.flatnonzero(window == best)[-1])
                worst = min(worst, best)
                break
        if choice < 0:
            # nothing fits (one character wider than the limit): take the next allowed offset
            nxt = np.flatnonzero(pri[pos:] >= 0)
            if nxt.size == 0:
                break
            choice = pos + 1 + int(nxt[0])
            worst = 0
        cuts.append(start + choice)
        pos = choice
    return cuts, worst


def inner_breaks_many(text: str, starts: np.ndarray, ends: np.ndarray, prefixes: np.ndarray, po: np.ndarray,
                      max_size: int, pri: np.ndarray) -> list[tuple[list[int], int]]:
    """:func:`inner_breaks` of many over-long sentences ``[starts[i], ends[i])`` at once (a text may hold
    a hundred): ``prefixes``/``po`` their own prefixes laid end to end
    (:meth:`~logichunk.text.measure.Meter.span_prefixes`), ``pri`` their priorities as
    :func:`break_priorities_many` lays them out. ``(cuts, worst)`` per sentence, as :func:`inner_breaks`
    gives them; one compiled call for all of them where the kernel is available."""
    starts = np.asarray(starts, dtype=np.int64).tolist()
    ends = np.asarray(ends, dtype=np.int64).tolist()
    po = np.asarray(po, dtype=np.int64)
    fast = native.inner_cuts_many(prefixes, po, pri, max_size) if starts else []
    if fast is not None:
        return [([a + c for c in cuts], worst) for a, (cuts, worst) in zip(starts, fast, strict=True)]
    bounds = po.tolist()
    return [inner_breaks(text, a, b, prefixes[bounds[i] : bounds[i + 1]], max_size,
                         pri[bounds[i] - i : bounds[i + 1] - i - 2])
            for i, (a, b) in enumerate(zip(starts, ends, strict=True))]


def forced_cuts(text: str, meter: Meter, atom_starts: np.ndarray, atom_ends: np.ndarray, glued: np.ndarray,
                big: np.ndarray, limit: int) -> tuple[list[tuple[list[int], int]], np.ndarray, np.ndarray]:
    """Tier 4 for the atoms ``big`` (indices into ``atom_starts``/``atom_ends``, each over ``limit``):
    ``(cuts, worst)`` per atom as :func:`inner_breaks` gives them, and each atom's own prefixes laid end
    to end (``prefixes``, ``po``: :meth:`~logichunk.text.measure.Meter.span_prefixes`, for its bubble).
    ``glued[k]``: the gap before atom ``k`` may not be cut (a heading, a lead-in, a fence's opening line
    before it). Why: a heading over a sentence longer than the maximum would otherwise stand alone, the
    sentence's first piece filled to the limit; so an atom is walked from the start of the run of atoms
    glued to it, when that run takes less than half the limit, and its first piece leaves the heading
    room. Where that walk would cut at or before the atom's own start (no break inside it in reach), the
    atom is walked alone. The one rule the cascade, the Meta-Chunking chunkers and parent-child share."""
    atom_starts = np.asarray(atom_starts, dtype=np.int64)
    starts, ends = atom_starts[big], np.asarray(atom_ends, dtype=np.int64)[big]
    walk = starts
    if glued.any():
        first = np.maximum.accumulate(np.where(glued, 0, np.arange(glued.size)))  # each run's first atom
        run = atom_starts[first[big]]
        walk = np.where((run < starts) & (2 * meter.sizes(run, starts) < limit), run, starts)
    found, prefixes, po = _walks(text, meter, walk, ends, limit)
    redo = [k for k, (w, a, (cuts, _)) in enumerate(zip(walk.tolist(), starts.tolist(), found, strict=True))
            if w < a and (not cuts or cuts[0] <= a)]
    if redo:
        sel = np.asarray(redo, np.int64)
        for k, f in zip(redo, _walks(text, meter, starts[sel], ends[sel], limit)[0], strict=True):
            found[k] = f
    if (walk < starts).any():  # each atom's own prefixes, for its bubble
        prefixes, po = meter.span_prefixes(starts, ends)
    return found, prefixes, po


def forced_splits(text: str, meter: Meter, atom_starts: np.ndarray, atom_ends: np.ndarray, glued: np.ndarray,
                  big: np.ndarray, limit: int, *, attempts: tuple[str, ...], source: str = "<text>", level: int = 1,
                  **context: object) -> tuple[list[list[int]], list[Bubble]]:
    """Tier 4 as every chunker runs it: :func:`forced_cuts` of the atoms ``big`` and the bubble each
    leaves (:func:`forced_split_bubble`; ``attempts``, ``source``, ``level`` and ``context`` as there):
    the cuts inside each atom, and one bubble per atom, in the order of ``big``. An atom that could not
    be cut (one character wider than the limit) stays over it, and its bubble says so with the
    roughest break ("char")."""
    found, prefixes, po = forced_cuts(text, meter, atom_starts, atom_ends, glued, big, limit)
    bounds = po.tolist()
    starts = np.asarray(atom_starts, dtype=np.int64)[big].tolist()
    ends = np.asarray(atom_ends, dtype=np.int64)[big].tolist()
    bubbles = [forced_split_bubble(text, a, b, cuts, worst if cuts else 0, prefixes[bounds[k] : bounds[k + 1]],
                                   limit=limit, unit=meter.unit, source=source, level=level, attempts=attempts,
                                   **context)
               for k, (a, b, (cuts, worst)) in enumerate(zip(starts, ends, found, strict=True))]
    return [cuts for cuts, _ in found], bubbles


def _walks(text: str, meter: Meter, starts: np.ndarray, ends: np.ndarray, limit: int
           ) -> tuple[list[tuple[list[int], int]], np.ndarray, np.ndarray]:
    """:func:`inner_breaks_many` of the spans (their priorities and prefixes made here), and the
    prefixes."""
    pri, _ = break_priorities_many(text, starts, ends)
    prefixes, po = meter.span_prefixes(starts, ends)
    return inner_breaks_many(text, starts, ends, prefixes, po, limit, pri), prefixes, po


def _span_prefix(prefix: np.ndarray, start: int, end: int) -> np.ndarray:
    """The span's own prefix, given it or the whole text's (the two sizes differ unless the span is
    the whole text, where they are the same array)."""
    prefix = np.asarray(prefix)
    if prefix.size == end - start + 1:
        return prefix
    return prefix[start : end + 1] - prefix[start]


BREAK_NAMES = {3: "clause", 2: "word", 1: "cjk-char", 0: "char"}


def forced_split_bubble(text: str, start: int, end: int, cuts: list[int], worst: int, prefix: np.ndarray, *,
                        limit: int, unit: str, source: str = "<text>", level: int = 1,
                        attempts: tuple[str, ...] = ("forced",), **context: object) -> Bubble:
    """The record every chunker leaves when one sentence ``[start, end)`` had to be cut inside
    (at ``cuts``, the roughest break being ``worst`` as :func:`inner_breaks` reports it; ``prefix``
    the span's own prefix, as there), so an LLM reviewer can look at it: the same category,
    priority rule and context keys everywhere."""
    prefix = _span_prefix(prefix, start, end)
    edges = [0, *(c - start for c in cuts), end - start]
    return Bubble(
        category="forced_split",
        content=bubble_excerpt(text, start, end),
        priority="high" if worst <= 1 else "medium",
        context={"source": source, "span": [start, end], "level": level, "limit": limit, "unit": unit,
                 "attempts": list(attempts), "final_method": "forced", "break": BREAK_NAMES[worst],
                 "sizes": [int(prefix[b] - prefix[a]) for a, b in zip(edges, edges[1:], strict=False)], **context},
    )


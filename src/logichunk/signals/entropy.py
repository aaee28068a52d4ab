"""Model-free boundary signals: window entropy, document n-gram perplexity, n-gram divergence,
and the cache-perplexity jump that scores sentence gaps.

Everything is numpy, with no model and no Python loop per character, window or gap.

**Curves** (for plots, and the composite signal) of character n-grams, ``(offsets, values)``:

* :func:`entropy_curve` — Shannon entropy ``H = -sum p log2 p`` of the n-grams inside sliding
  windows (``window``/``step`` characters, default 100/50, bigrams by default);
* :func:`perplexity_curve` — per window, ``2**H`` with ``H`` the mean surprisal of its n-grams under
  the n-gram model estimated from the whole document (``P(c_n | c_1..c_{n-1})`` by maximum
  likelihood): a window that reads like the rest of the document is low, an odd one stands out;
* :func:`divergence_curve` — the information gain of cutting at a grid offset: the Jensen-Shannon
  divergence of the n-gram distributions either side, ``H(L ∪ R) - (|L| H(L) + |R| H(R)) / |L ∪ R|``.

Only *content* n-grams count (at least one letter, digit or CJK character), so runs of spaces,
punctuation or ``-----`` never dominate a window.

**The gap score** of :class:`EntropySignal` (tier 1 of the logic-chain cascade). On six public
segmentation sets (Choi, Wiki-300, Weibo, DialSeg711, TIAGE, DAct; ``bench/bench_signals.py``) the
character-bigram entropy jump ``|H_right - H_left|`` cut no better than random (mean Pk 0.46 vs
0.48) and the bigram divergence barely better (0.42), while vocabulary shift finds topic breaks
(0.31). So the score is a vocabulary-shift statistic with an information-theoretic reading:

1. *Content items*: each word of a space-separated script counts once, as a hash of its first four
   case-folded letters (truncation is a crude but effective stemmer: ``economy``, ``economic``,
   ``economist`` agree; four beat five or more on the English sets), leaving out one-letter words
   and a short English stop list; each CJK character is an item (single characters beat character
   bigrams on the Chinese sets), leaving out frequent function characters (的了是在...).
2. *Cache-model surprisal*: each item's surprisal under a recency cache model — probability
   ``∝ 1/d`` for an item last seen ``d`` items ago, the floor for one not seen in the last
   ``lookback`` items — normalised to ``[0, 1]``: ``min(log2 d, log2 D) / log2 D``. The same is
   computed reading the text backwards (distance to the *next* occurrence). Distances come from
   row sorts (:func:`link_distances`), not a hash table.
3. *Perplexity jump*: by prefix sums, the mean surprisal of the ``K`` items after a gap minus that
   of the ``K`` before it is the log of the ratio of the cache-model perplexities of the right and
   left windows (in units of ``log2 D`` bits: the right window read with a model of what came
   before). The backward reading adds the mirror term: do the left window's items ever come back?
   Either direction alone is a poor detector (mean Pk 0.42 and 0.39); their sum is good. The jump
   is averaged over scales ``K`` = 10/20/40/80 items (a sentence or two up to a few paragraphs:
   no single scale suits both Choi's long segments and Weibo's short ones) and clipped at 0.
4. *Edges*: windows shrink symmetrically near the document edges (``k = min(K, items before,
   items after)``) and a scale's term counts ``k / K``, so a gap judged on little evidence cannot
   become a spurious maximum (without it, 48% of homogeneous English test texts peak at an edge).
5. *Scale*: the score is ``tanh(jump / 0.1)`` in ``[0, 1]``, comparable across documents.

Cost: O(N) passes over the characters plus two row sorts of the items (rows of 2048), in blocks
that stay in cache. :class:`CompositeSignal` (tier 3) mixes this score with the bigram divergence
and, when configured, an LM perplexity signal, each z-normalised within the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import native
from ..text.cache import text_cache
from ..text.charclass import ALNUM, CJK, class_table, codepoints
from ..text.sentences import SentenceSpans
from . import GapSignal

__all__ = [
    "CompositeSignal",
    "EntropySignal",
    "content_items",
    "divergence_curve",
    "entropy_curve",
    "novelty_profile",
    "perplexity_curve",
]

# --------------------------------------------------------------------------- content items

_WORD_PREFIX = 4  # letters of a word that make its id (truncation stemming)
_WORD_BIT = np.uint64(1 << 19)  # word ids live in [2^19, 2^20); CJK items are their code point (< 2^18)
_STOP_EN = (
    "a an and are as at be been but by for from has have had he her his him i in is it its of on or "
    "she that the their them there they this these those to was we were which who will with would "
    "you your not do does did so if then than also can could may might must shall should into out "
    "up down over about after before all any each more most other some such no nor only own same "
    "too very just our ours my me what when where why how here one two"
).split()
_STOP_ZH = "的了是在和与及也就都而又或之其这那个们我你他她它着吗呢吧啊把被对从以为于有很么"
_LEN_MASK = np.array([0, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _word_ids(cp: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """uint32 id in ``[2^19, 2^20)`` of each word's first four letters.

    The letters are folded with ``| 0x20`` (A-Z to a-z; also the basic Latin-1, Greek and
    Cyrillic capitals; digits are unchanged) and kept as 16 bits each (letters of space-separated
    scripts are all in the BMP), so four of them are one unaligned uint64 read per word, masked
    to the word's length and hashed (xor-shift, multiply, top 19 bits).
    """
    u16 = np.zeros(cp.size + 4, dtype=np.uint16)
    np.bitwise_or(cp, np.uint32(0x20), out=u16[: cp.size], casting="unsafe")
    quad = np.ndarray(shape=(cp.size,), dtype=np.uint64, buffer=u16.data, strides=(2,))
    h = quad[starts] & np.take(_LEN_MASK, np.minimum(lens, _WORD_PREFIX))
    h ^= h >> np.uint64(29)  # fold the high letters down, then one multiplicative hash
    h *= _M1
    return ((h >> np.uint64(45)) | _WORD_BIT).astype(np.uint32)


def _word_spans(al: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of nonzero values in ``al`` (bool, or 0 and one value)."""
    n = al.size
    edge = np.empty(n + 1, dtype=bool)
    edge[0], edge[n] = al[0], al[-1]
    np.not_equal(al[1:], al[:-1], out=edge[1:n])
    e = np.flatnonzero(edge)
    return e[0::2], e[1::2] - e[0::2]


@lru_cache(maxsize=1)
def _stop_tables() -> tuple[np.ndarray, np.ndarray]:
    """(word table: 2^20 bools indexed by the low bits of a word id, True for stop words;
    CJK table: one uint8 per code point, 1 for a CJK character that counts as an item)."""
    text = " ".join(_STOP_EN)
    cp = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    starts, lens = _word_spans(cp != 32)
    ids = _word_ids(cp, starts, lens)
    words = np.zeros(1 << 20, dtype=bool)
    words[ids & np.uint32((1 << 20) - 1)] = True
    cjk = ((class_table() & CJK) != 0).astype(np.uint8)
    cjk[[ord(c) for c in _STOP_ZH]] = 0
    return words, cjk


def _merge(pa: np.ndarray, ia: np.ndarray, pb: np.ndarray, ib: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge the position-sorted item list ``(pb, ib)`` (ideally the shorter) into ``(pa, ia)``;
    positions are distinct."""
    if pb.size == 0:
        return pa, ia
    at = np.searchsorted(pa, pb)
    return np.insert(pa, at, pb), np.insert(ia, at, ib)


_BLOCK = 1 << 18  # characters per block: the working set stays in cache, buffers get reused


def _block_items(cp: np.ndarray, cls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Content items of one block of text that does not cut a word (local positions)."""
    stop_w, cjk_tab = _stop_tables()
    pos, ids = np.zeros(0, np.int64), np.zeros(0, np.uint32)
    kind = cls & (ALNUM | CJK)  # 0, ALNUM or CJK: no character is both
    top = int(kind.max()) if kind.size else 0
    if top == 0:
        return pos, ids
    al = kind if top == ALNUM else kind == ALNUM  # without CJK, kind itself marks the words
    if top == ALNUM or al.any():
        starts, lens = _word_spans(al)
        ids = _word_ids(cp, starts, lens)
        keep = lens > 1
        keep &= ~np.take(stop_w, ids & np.uint32((1 << 20) - 1))
        # np.compress: boolean indexing is several times slower on masks this mixed
        pos, ids = np.compress(keep, starts), np.compress(keep, ids)
    if top == CJK:
        cj = kind == CJK
        ncjk = int(np.count_nonzero(cj))
        if ncjk < 4 * pos.size:  # a few CJK characters among words: merge two lists
            cpos = np.flatnonzero(cj)
            cpos = np.compress(cjk_tab[cp[cpos]] != 0, cpos)
            pos, ids = _merge(pos, ids, cpos, cp[cpos])
        else:  # mostly CJK: one block-long buffer, words written in, read back in order
            buf = cp * np.take(cjk_tab, cp)
            buf[pos] = ids
            pos = np.flatnonzero(buf != 0)  # on the bool mask: ~4x np.flatnonzero(buf)
            ids = buf[pos]
    return pos, ids


@text_cache(maxsize=4)
def content_items(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The content items of ``text``: ``(positions, ids)``, sorted by position.

    ``positions`` (int64) are character offsets: a word's first character, or the CJK character.
    ``ids`` (uint32, never 0) identify the item: the code point of a CJK character, or a hash in
    ``[2^19, 2^20)`` of a word's first four letters, case-folded (so ``economy``/``economic``
    agree, a crude but effective stemmer). Stop words, one-letter words and frequent CJK function
    characters are left out. Cached per text (the arrays are read-only). Long texts are processed
    in blocks of about 256K characters, cut between words.
    """
    n = len(text)
    parts_pos: list[np.ndarray] = []
    parts_ids: list[np.ndarray] = []
    if n:
        cp = codepoints(text)
        table = class_table()
        a = 0
        while a < n:
            b = min(a + _BLOCK, n)
            while b < n:  # move the cut past the word it falls in
                tail = (np.take(table, cp[b : b + 1024]) & ALNUM) != 0
                if not tail.all():
                    b += int(np.argmin(tail))
                    break
                b += tail.size
            # classes a block at a time, while the block is in cache (no text-sized array)
            p, i = _block_items(cp[a:b], np.take(table, cp[a:b]))
            parts_pos.append(p + a if a else p)
            parts_ids.append(i)
            a = b
    pos = np.concatenate(parts_pos) if len(parts_pos) > 1 else (parts_pos[0] if parts_pos else np.zeros(0, np.int64))
    ids = np.concatenate(parts_ids) if len(parts_ids) > 1 else (parts_ids[0] if parts_ids else np.zeros(0, np.uint32))
    pos = np.ascontiguousarray(pos, dtype=np.int64)
    ids = np.ascontiguousarray(ids, dtype=np.uint32)
    pos.flags.writeable = False
    ids.flags.writeable = False
    return pos, ids


# --------------------------------------------------------------------------- link distances

_ROW_BITS = 11
_ROW = 1 << _ROW_BITS  # items per sorted row
_KEY_SHIFT = _ROW_BITS + 1  # one spare bit: keys of different ids are always >= _ROW apart
MAX_LOOKBACK = 256  # rows overlap by this many items: every link up to this length is seen
_STRIDE = _ROW - MAX_LOOKBACK
_FIELD = np.uint32(511)  # 9-bit distance fields; 257..511 mean "further than MAX_LOOKBACK"


def _link_rows(ids: np.ndarray) -> np.ndarray:
    """Rows of 2048 items overlapping by 256, each entry ``local << 18 | back << 9 | fwd`` in
    local order (see :func:`link_distances`). ``ids`` must be in ``[1, 2^20)``."""
    n = ids.size
    rows = max(1, -(-(n - MAX_LOOKBACK) // _STRIDE))
    key = np.zeros((rows - 1) * _STRIDE + _ROW, dtype=np.uint32)  # pad id 0 is never an item id
    np.left_shift(ids, np.uint32(_KEY_SHIFT), out=key[:n])
    m = sliding_window_view(key, _ROW)[::_STRIDE] | np.arange(_ROW, dtype=np.uint32)
    m.sort(axis=1)
    f = m.ravel()
    # neighbours with the same id differ by their local distance (< 2048), others by more
    # (the spare key bit), so one subtraction and one clamp give the 9-bit distance field
    d = f[1:] - f[:-1]
    np.minimum(d, _FIELD, out=d)
    d[_ROW - 1 :: _ROW] = _FIELD  # pairs across two rows
    f &= np.uint32(_ROW - 1)  # now the local index ...
    f <<= np.uint32(18)  # ... moved up, distances below
    f[:-1] |= d
    d <<= np.uint32(9)
    f[1:] |= d
    f[::_ROW] |= _FIELD << np.uint32(9)  # first in a row: nothing before it in the row
    f[_ROW - 1 :: _ROW] |= _FIELD  # last in a row: nothing after it
    m.sort(axis=1)  # back to local order
    return m


_ROWS_PER_BLOCK = 128  # rows sorted per block (256K entries): cache-sized working set


def _link_fields(ids: np.ndarray, back_table: np.ndarray, fwd_table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item, ``back_table[field]`` of its entry in the row where 256 items precede it and
    ``fwd_table[field]`` of its entry in the row where 256 follow it, ``field`` being the packed
    18-bit ``back << 9 | fwd`` of :func:`_link_rows`. Rows are processed in blocks."""
    n = ids.size
    rows = max(1, -(-(n - MAX_LOOKBACK) // _STRIDE))
    back = np.empty(n, back_table.dtype)
    fwd = np.empty(n, fwd_table.dtype)
    mask = np.uint32((1 << 18) - 1)
    for r0 in range(0, rows, _ROWS_PER_BLOCK):
        r1 = min(rows, r0 + _ROWS_PER_BLOCK)
        lo = r0 * _STRIDE
        m = _link_rows(ids[lo : min(n, (r1 - 1) * _STRIDE + _ROW)])
        m &= mask
        if r0 == 0:  # the first items have fewer than 256 before them: row 0 is their best
            k = min(MAX_LOOKBACK, n)
            back[:k] = back_table[m[0, :k]]
        a = lo + MAX_LOOKBACK
        k = max(0, min(n, lo + (r1 - r0) * _STRIDE + MAX_LOOKBACK) - a)
        back[a : a + k] = np.take(back_table, m[:, MAX_LOOKBACK:]).ravel()[:k]  # take: ~2x fancy indexing
        k = min(n, lo + (r1 - r0) * _STRIDE) - lo
        fwd[lo : lo + k] = np.take(fwd_table, m[:, :_STRIDE]).ravel()[:k]
        if r1 == rows:  # the last items have fewer than 256 after them: the last row is their best
            a = (rows - 1) * _STRIDE + _STRIDE
            k = max(0, n - a)
            fwd[a:] = fwd_table[m[-1, _STRIDE : _STRIDE + k]]
    return back, fwd


@lru_cache(maxsize=1)
def _distance_tables() -> tuple[np.ndarray, np.ndarray]:
    idx = np.arange(1 << 18)
    b, f = idx >> 9, idx & 511
    return (np.where(b <= MAX_LOOKBACK, b, 0).astype(np.uint16),
            np.where(f <= MAX_LOOKBACK, f, 0).astype(np.uint16))


def link_distances(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each item, the distance (in items) to the previous and to the next item with the same
    id, or 0 when there is none within ``MAX_LOOKBACK`` (256) items. uint16 arrays; ``ids`` must
    be in ``[1, 2^20)``.

    Vectorised, no hash table: items go into rows of 2048 that overlap by 256; each row is sorted
    by ``(id << 12) | local index`` (32 bits), so equal ids next to each other in a sorted row are
    consecutive occurrences and their local indices give the distance. A second row sort by local
    index, carrying both distances packed in the low bits, puts them back in item order (cheaper
    than a scatter). An item takes its backward link from the row where at least 256 items precede
    it and its forward link from the row where at least 256 follow it; longer links are dropped,
    so the result does not depend on where the rows fall.
    """
    n = ids.size
    if n < 2:
        return np.zeros(n, np.uint16), np.zeros(n, np.uint16)
    return _link_fields(ids, *_distance_tables())


def _surprisal(d: np.ndarray, lookback: int) -> np.ndarray:
    """Normalised cache surprisal of link distances: ``min(log2 d, log2 lookback) / log2 lookback``,
    1 for no link (0 or beyond ``MAX_LOOKBACK``)."""
    d = np.asarray(d, dtype=np.float64)
    out = np.ones(d.shape)
    ok = (d >= 1) & (d <= MAX_LOOKBACK)
    out[ok] = np.minimum(np.log2(d[ok]) / np.log2(lookback), 1.0)
    return out


_Q = 1000  # surprisal quantum: the hot path sums integers


@lru_cache(maxsize=8)
def _quantised(lookback: int) -> np.ndarray:
    """round(1000 * surprisal) of every 9-bit distance field (257..511: no link), int16."""
    return np.rint(_Q * _surprisal(np.arange(512), lookback)).astype(np.int16)


@lru_cache(maxsize=8)
def _quantised_tables(lookback: int) -> tuple[np.ndarray, np.ndarray]:
    """int16 tables over packed 18-bit fields: :func:`_quantised` of the backward (bits 9-17) and
    of the forward (bits 0-8) distance."""
    q = _quantised(lookback)
    return np.repeat(q, 512), np.tile(q, 512)  # q[field >> 9], q[field & 511] for every 18-bit field


def _check_lookback(lookback: int) -> None:
    if not 2 <= lookback <= MAX_LOOKBACK:
        raise ValueError(f"lookback must be in [2, {MAX_LOOKBACK}], got {lookback}")


@text_cache(maxsize=4)
def _novelty_prefix(text: str, lookback: int) -> tuple[np.ndarray, np.ndarray]:
    """Item positions and the prefix sums (int64, n+1) of ``q(back) - q(fwd)``."""
    pos, ids = content_items(text)
    prefix = novelty_prefix_of(ids, lookback)
    prefix.flags.writeable = False
    return pos, prefix


def novelty_prefix_of(ids: np.ndarray, lookback: int) -> np.ndarray:
    """Prefix sums (int64, n+1) of ``q(back) - q(fwd)`` over the item ids ``ids`` (in ``[1, 2^20)``)."""
    n = ids.size
    if n >= 2 and (fast := native.novelty_prefix(ids, _quantised(lookback))) is not None:
        return fast  # the same integers, by one walk each way instead of row sorts
    prefix = np.zeros(n + 1, np.int64)
    if n >= 2:
        qb, qf = _link_fields(ids, *_quantised_tables(lookback))
        qb -= qf
        np.cumsum(qb, dtype=np.int64, out=prefix[1:])
    return prefix


@text_cache(maxsize=4)
def novelty_profile(text: str, lookback: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per content item of ``text``: ``(positions, back, fwd)`` where ``back[i]`` is the item's
    normalised surprisal in ``[0, 1]`` under a recency cache model of the preceding ``lookback``
    items (``log2 d / log2 lookback`` for an item last seen ``d`` items ago, 1 if not seen), and
    ``fwd[i]`` the same reading the text backwards. Plot ``back`` against ``positions`` (smoothed)
    to see where new vocabulary enters. Cached per text; arrays are read-only.
    """
    _check_lookback(lookback)
    pos, ids = content_items(text)
    back, fwd = link_distances(ids)
    b, f = _surprisal(back, lookback), _surprisal(fwd, lookback)
    b.flags.writeable = False
    f.flags.writeable = False
    return pos, b, f


def _prefix(x: np.ndarray) -> np.ndarray:
    out = np.zeros(x.size + 1, dtype=np.float64)
    np.cumsum(x, out=out[1:])
    return out


def novelty_gap_scores(text: str, offsets: np.ndarray, scales: tuple[int, ...] = (10, 20, 40, 80),
                       lookback: int = 200) -> np.ndarray:
    """The :class:`EntropySignal` score of a cut at each character offset in ``offsets``
    (see the module docstring): mean over ``scales`` of the cache-model perplexity jump, in
    ``[0, 1]``. Items at an offset belong to the right side."""
    _check_lookback(lookback)
    offsets = np.asarray(offsets, dtype=np.int64)
    out = np.zeros(offsets.size)
    pos, P = _novelty_prefix(text, lookback)
    n = pos.size
    if offsets.size == 0 or n < 2 or not scales:
        return out
    b = np.searchsorted(pos, offsets, side="left")
    return novelty_jump(P, b, np.minimum(b, n - b), scales)


def novelty_jump(P: np.ndarray, b: np.ndarray, room: np.ndarray, scales: tuple[int, ...]) -> np.ndarray:
    """The jump at item indices ``b`` from the prefix ``P`` of :func:`novelty_prefix_of`, judged on at
    most ``room`` items either side (fewer near an edge of the text), in ``[0, 1]``."""
    out = np.zeros(b.size)
    twice = 2 * P[b]
    for K in scales:
        k = np.minimum(room, K)
        # (back surprisal right - left) + (forward surprisal left - right), summed over k items
        # each side, over K: a scale judged on fewer items (near an edge) counts for less
        out += (P[b + k] + P[b - k] - twice) / float(K)
    out /= 2.0 * _Q * len(scales)
    np.clip(out, 0.0, 1.0, out=out)
    return out


# --------------------------------------------------------------------------- character n-gram curves


@lru_cache(maxsize=1)
def _content_table() -> np.ndarray:
    """uint8 per code point: 1 for a letter, digit or CJK character (what makes an n-gram content)."""
    return ((class_table() & (ALNUM | CJK)) != 0).astype(np.uint8)


@text_cache(maxsize=2)
def _gram_keys(text: str, n: int, mask: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Keys of the n-grams of ``text`` with any non-content n-gram replaced by the dtype's maximum
    (the sentinel; not with ``mask=False``), and the content mask; one entry per start ``i`` in
    ``[0, len(text) - n]`` (see :func:`_keys`). Cached for the last two texts: the curves share
    them."""
    cp = codepoints(text)
    key, valid = _keys(cp, np.take(_content_table(), cp).view(bool), n, mask)
    key.flags.writeable = False  # cached per text: shared by every caller
    valid.flags.writeable = False
    return key, valid


def _keys(cp: np.ndarray, content: np.ndarray, n: int, mask: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The n-gram keys and content mask of the code points ``cp`` (``content``: which of them
    are letters, digits or CJK characters).

    Keys are exact: the code point (n = 1), two 16-bit code points in a uint32 (n = 2; outside
    the BMP the alphabet is numbered densely first, when it has fewer than 65535 characters),
    21-bit code points packed in a uint64 (n <= 3); for n > 3 a 64-bit polynomial hash with a
    splitmix finaliser (collisions: ~2^-64 per pair). A content n-gram holds at least one letter,
    digit or CJK character, so it never equals the sentinel. Only key equality matters to the
    entropies computed from them.
    """
    m = cp.size - n + 1
    if m <= 0:
        return np.zeros(0, np.uint32), np.zeros(0, bool)
    valid = content[:m].copy()
    for j in range(1, n):
        valid |= content[j : j + m]
    dense = None
    if n == 2 and int(cp.max()) >= 0x10000:  # beyond the BMP: number the alphabet densely
        present = np.bincount(cp) > 0
        if np.count_nonzero(present) < 0xFFFF:
            dense = np.take((np.cumsum(present) - 1).astype(np.uint32), cp)
    if n == 1:
        key = cp.copy()
    elif n == 2 and (dense is not None or int(cp.max()) < 0x10000):
        c = cp if dense is None else dense
        key = c[:m] << np.uint32(16)
        key |= c[1:]
    elif n <= 3:
        c64 = cp.astype(np.uint64)
        key = c64[:m].copy()
        for j in range(1, n):
            key <<= np.uint64(21)
            key |= c64[j : j + m]
    else:
        c64 = cp.astype(np.uint64)
        key = np.zeros(m, np.uint64)
        for j in range(n):
            key *= np.uint64(0x100000001B3)
            key += c64[j : j + m] + np.uint64(1)
        key ^= key >> np.uint64(30)
        key *= _M1
        key ^= key >> np.uint64(27)
        np.minimum(key, np.uint64(np.iinfo(np.uint64).max - 1), out=key)
    if mask:
        np.putmask(key, ~valid, np.iinfo(key.dtype).max)
    return key, valid


def _windows(length: int, window: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Window starts and ends: every ``step`` characters while a whole window fits, plus one
    window flush with the end of the text when the steps do not land there; one window over the
    whole text when it is shorter than ``window``; none for empty text."""
    if window < 1 or step < 1:
        raise ValueError(f"window and step must be positive, got window={window}, step={step}")
    if length == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if length <= window:
        return np.zeros(1, np.int64), np.full(1, length, np.int64)
    starts = np.arange(0, length - window + 1, step, dtype=np.int64)
    if starts[-1] + window < length:
        starts = np.append(starts, length - window)
    return starts, starts + window


@lru_cache(maxsize=16)
def _clogc(w: int) -> np.ndarray:
    """``c log2 c`` for ``c`` in ``0 .. w``."""
    c = np.arange(w + 1, dtype=np.float64)
    return c * np.log2(np.maximum(c, 1.0))


def _rows_entropy(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Entropy (bits) of the keys of each row of ``rows`` (r, w), sentinels (dtype max) ignored,
    and the number of keys that count (float64).

    Sorts ``rows`` in place; ``H = log2 m - (1/m) sum c log2 c``, the sum over repeated keys only (a
    key seen once adds 0), runs in ascending key order: one branch-free pass in C
    (:func:`logichunk.native.sorted_run_sums`) or the numpy passes of :func:`_run_sums`, the same
    bits."""
    r, w = rows.shape
    if r == 0 or w == 0:
        return np.zeros(r), np.zeros(r)
    rows.sort(axis=1)
    sums = native.sorted_run_sums(rows, _clogc(w))
    sum_clogc, n_sent = sums if sums is not None else _run_sums(rows)
    m = w - n_sent
    mm = np.maximum(m, 1.0)
    return np.maximum(np.log2(mm) - sum_clogc / mm, 0.0), m


def _run_sums(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each sorted row: the sum of ``c log2 c`` over its runs of ``c >= 2`` equal keys other than
    the sentinel, in ascending order, and the number of sentinels (float64). After the sort the
    repeats of one key are consecutive positions, so each run of ``c`` equal keys is one group of
    ``c - 1`` repeat positions, found without a pass over every entry beyond the comparison itself."""
    r, w = rows.shape
    sentinel = np.iinfo(rows.dtype).max
    # sentinels sort last: a row ending in one holds one, or a whole run of them (counted below)
    n_sent = (rows[:, -1] == sentinel).astype(np.float64)
    dup = np.zeros(rows.shape, dtype=bool)
    np.equal(rows[:, 1:], rows[:, :-1], out=dup[:, 1:])
    d = np.flatnonzero(dup.ravel())  # a row's first entry is never a repeat: runs stay in rows
    sum_clogc = np.zeros(r)
    if d.size:
        new = np.ones(d.size, dtype=bool)
        np.not_equal(d[1:], d[:-1] + 1, out=new[1:])
        grp = np.flatnonzero(new)
        count = np.diff(np.append(grp, d.size)) + 1  # keys in the run
        at = np.take(d, grp)
        real = np.take(rows.ravel(), at) != sentinel
        if not real.all():
            fake = ~real
            n_sent[np.compress(fake, at) // w] = np.compress(fake, count)
            at, count = np.compress(real, at), np.compress(real, count)
        sum_clogc = np.bincount(at // w, weights=np.take(_clogc(w), count), minlength=r)
    return sum_clogc, n_sent


def _window_entropy(key: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """Entropy of the (sentinel-masked) keys ``key[s : s + width]`` for each start ``s``."""
    return _window_entropy_counts(key, starts, width)[0]


def _window_entropy_counts(key: np.ndarray, starts: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_window_entropy` and the number of content keys in each window, one block of
    about 256K keys at a time (cache-sized, and memory stays bounded)."""
    out = np.zeros(starts.size)
    cnt = np.zeros(starts.size)
    if width <= 0 or starts.size == 0:
        return out, cnt
    block = max(1, (1 << 18) // width)
    view = sliding_window_view(key, width)
    for a in range(0, starts.size, block):
        out[a : a + block], cnt[a : a + block] = _rows_entropy(view[starts[a : a + block]])
    return out, cnt


def _information_gain(hu: np.ndarray, hl: np.ndarray, hr: np.ndarray, ml: np.ndarray, mr: np.ndarray) -> np.ndarray:
    """``H(U) - (|L| H(L) + |R| H(R)) / |L ∪ R|`` clipped to ``[0, 1]``; 0 where a side has no
    content n-gram."""
    js = hu - (ml * hl + mr * hr) / np.maximum(ml + mr, 1.0)
    return np.where((ml > 0) & (mr > 0), np.clip(js, 0.0, 1.0), 0.0)


def entropy_curve(text: str, window: int = 100, step: int = 50, n: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Shannon entropy of character n-grams in sliding windows.

    Windows are ``[s, s + window)`` for ``s = 0, step, 2*step, ...`` while they fit, plus one
    window ending at ``len(text)`` if the last step falls short (one window over the whole text if
    it is shorter than ``window``). A window counts the n-grams ``text[i:i+n]`` that lie inside it
    (``s <= i`` and ``i + n <= s + window``) and hold at least one letter, digit or CJK character.

    Returns ``(offsets, values)``, float64 arrays with one entry per window: ``offsets`` is the
    window's centre in characters (``(start + end) / 2``), ``values`` its entropy
    ``H = -sum p log2 p`` in bits (0 for a window without content n-grams). Empty text gives two
    empty arrays. Cost: O(N log window), a row sort of every window.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    starts, ends = _windows(len(text), window, step)
    if starts.size == 0:
        return np.zeros(0), np.zeros(0)
    key, _ = _gram_keys(text, n)
    width = min(int(ends[0] - starts[0]) - n + 1, key.size)
    return (starts + ends) / 2.0, _window_entropy(key, starts, width)


def _counts(keys: np.ndarray) -> np.ndarray:
    """For each key, how often it occurs in ``keys`` (float64). Keys of 32 bits go through one
    sort of ``key << 32 | index`` (much cheaper than an argsort); wider keys through np.unique."""
    if keys.size == 0:
        return np.zeros(0)
    if keys.dtype != np.uint32:
        _, inv, cnt = np.unique(keys, return_inverse=True, return_counts=True)
        return cnt[inv.ravel()].astype(np.float64)
    packed = keys.astype(np.uint64) << np.uint64(32)
    packed |= np.arange(keys.size, dtype=np.uint64)
    packed.sort()
    k = packed >> np.uint64(32)
    starts = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
    run = np.diff(np.append(starts, keys.size))
    out = np.empty(keys.size)
    out[(packed & np.uint64(0xFFFFFFFF)).astype(np.int64)] = np.repeat(run, run)
    return out


def _document_surprisal(text: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per n-gram start: surprisal (bits) of the gram under the document's own maximum-likelihood
    n-gram model, ``log2 C(prefix *) - log2 C(gram)``, and the content mask."""
    key, valid = _gram_keys(text, n)
    s = np.zeros(key.size)
    if not valid.any():
        return s, valid
    c_gram = _counts(key[valid])
    if n == 1:
        c_ctx = np.full(c_gram.size, float(c_gram.size))
    else:
        ctx, _ = _gram_keys(text, n - 1, mask=False)  # the first n-1 characters of each gram
        c_ctx = _counts(ctx[: key.size][valid])
    s[valid] = np.log2(c_ctx) - np.log2(c_gram)
    return s, valid


def perplexity_curve(text: str, window: int = 100, step: int = 50, n: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """n-gram perplexity of each sliding window under the document's own n-gram model.

    The model is estimated from the whole text by maximum likelihood over content n-grams:
    ``P(g) = C(g) / C(g[:-1] *)``, the count of the n-gram over the count of content n-grams that
    start with its first n-1 characters (for n = 1: ``C(g) / total``). A window's value is
    ``2**H`` with ``H`` the mean surprisal ``-log2 P(g)`` of the content n-grams inside it (same
    windows and n-grams as :func:`entropy_curve`), 1.0 for a window without any. Returns
    ``(offsets, values)`` with ``offsets`` the window centres. Cost: O(N log N), a sort of the
    document's n-grams.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    starts, ends = _windows(len(text), window, step)
    if starts.size == 0:
        return np.zeros(0), np.zeros(0)
    s, valid = _document_surprisal(text, n)
    cs, cv = _prefix(s), _prefix(valid.astype(np.float64))
    hi = np.clip(ends - n + 1, 0, s.size)  # grams i with start <= i <= end - n
    lo = np.minimum(starts, hi)
    tot, m = cs[hi] - cs[lo], cv[hi] - cv[lo]
    h = np.where(m > 0, tot / np.maximum(m, 1.0), 0.0)
    return (starts + ends) / 2.0, np.exp2(h)


def divergence_curve(text: str, window: int = 100, step: int = 50, n: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Information gain of a cut, on a grid: the Jensen-Shannon divergence (bits, in ``[0, 1]``)
    between the content n-gram distributions of the ``window`` characters before and after each
    grid offset ``t``: ``H(U) - (|L| H(L) + |R| H(R)) / (|L| + |R|)`` with ``L = [t - w, t)``,
    ``R = [t, t + w)`` and ``U = [t - w, t + w)`` (n-grams as in :func:`entropy_curve`; ``U`` also
    holds the n-1 grams straddling ``t``). High where the character statistics change: a new
    subject, but also a table, code, a list of numbers, another language.

    Offsets are ``t = window, window + step, ...`` up to ``len(text) - window`` (plus that last
    offset when the steps do not land on it); a text shorter than two windows gets one offset in
    its middle with ``w = len(text) // 2``. Returns ``(offsets, values)``; 0 where a side has no
    content n-gram. Cost: a row sort of about 4 * window keys per offset.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if window < 1 or step < 1:
        raise ValueError(f"window and step must be positive, got window={window}, step={step}")
    N = len(text)
    if N < 2:
        return np.zeros(0), np.zeros(0)
    if N >= 2 * window:
        w = window
        t = np.arange(w, N - w + 1, step, dtype=np.int64)
        if t[-1] != N - w:
            t = np.append(t, N - w)
    else:
        w = N // 2
        t = np.array([w], dtype=np.int64)
    g = w - n + 1
    out = np.zeros(t.size)
    key, valid = _gram_keys(text, n)
    if g <= 0 or key.size == 0:
        return t.astype(np.float64), out
    hl, hr = np.empty(t.size), np.empty(t.size)
    k = 0  # offsets on the regular grid, where the left and right windows are shared
    if w % step == 0:
        k = t.size if (t[-1] - w) % step == 0 else t.size - 1
    ml, mr = np.empty(t.size), np.empty(t.size)
    if k:
        hw, mw = _window_entropy_counts(key, np.arange(0, t[k - 1] + 1, step, dtype=np.int64), g)
        hl[:k], hr[:k] = hw[:k], hw[w // step : w // step + k]
        ml[:k], mr[:k] = mw[:k], mw[w // step : w // step + k]
    if k < t.size:
        hl[k:], ml[k:] = _window_entropy_counts(key, t[k:] - w, g)
        hr[k:], mr[k:] = _window_entropy_counts(key, t[k:], g)
    hu = _window_entropy(key, t - w, min(2 * w - n + 1, key.size))
    return t.astype(np.float64), _information_gain(hu, hl, hr, ml, mr)


def divergence_at(text: str, offsets: np.ndarray, window: int = 100, n: int = 2, *,
                  edges: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """:func:`divergence_curve`'s information gain, evaluated exactly at the given character
    ``offsets`` instead of on a grid (what tier 3 needs: a few gaps inside runs that entropy could
    not split). Near the text's edges the two windows shrink to ``min(window, t, len - t)``;
    ``edges`` (start and end per offset) puts those edges elsewhere: several texts laid end to end
    are each read as if alone.

    Only the characters the windows cover are read: ``[t - w, t + w)`` around each offset, merged
    where they overlap and laid end to end, so a few gaps in a long text cost a few windows."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if window < 1:
        raise ValueError(f"window must be positive, got {window}")
    t_all = np.asarray(offsets, dtype=np.int64)
    out = np.zeros(t_all.size)
    N = len(text)
    if N < 2 or t_all.size == 0:
        return out
    t_lo, t_hi = (0, N) if edges is None else (np.asarray(edges[0], np.int64), np.asarray(edges[1], np.int64))
    w_all = np.clip(np.minimum(np.minimum(t_all - t_lo, t_hi - t_all), window), 0, None)
    # the covered characters, merged into segments and laid end to end: local offsets
    lo, hi = t_all - w_all, t_all + w_all
    order = np.argsort(lo, kind="stable")
    reach = np.maximum.accumulate(hi[order])
    new = np.ones(order.size, dtype=bool)
    new[1:] = lo[order][1:] > reach[:-1]
    first = np.flatnonzero(new)
    seg_lo = lo[order][first]
    seg_hi = reach[np.append(first[1:], order.size) - 1]
    seg_off = np.zeros(first.size, np.int64)
    np.cumsum((seg_hi - seg_lo)[:-1], out=seg_off[1:])
    seg = np.empty(order.size, np.int64)
    seg[order] = np.cumsum(new) - 1
    t_loc = t_all - seg_lo[seg] + seg_off[seg]
    cp_all = codepoints(text)
    cp = np.concatenate([cp_all[a:b] for a, b in zip(seg_lo.tolist(), seg_hi.tolist(), strict=True)])
    key, _ = _keys(cp, np.take(_content_table(), cp).view(bool), n)
    if key.size == 0:
        return out
    full = N - n + 1  # the union window is clipped to the text's n-gram count, as on the grid
    for w in np.unique(w_all).tolist():
        g = w - n + 1
        if g <= 0:
            continue
        sel = np.flatnonzero(w_all == w)
        t = t_loc[sel]
        hl, ml = _window_entropy_counts(key, t - w, g)
        hr, mr = _window_entropy_counts(key, t, g)
        hu = _window_entropy(key, t - w, min(2 * w - n + 1, full))
        out[sel] = _information_gain(hu, hl, hr, ml, mr)
    return out


# --------------------------------------------------------------------------- signals


@dataclass(frozen=True)
class EntropySignal:
    """Tier 1 of the logic-chain cascade: the model-free gap score (see the module docstring).

    ``window``/``step``/``n`` define the character n-gram curves (:meth:`curves`) and the
    n-gram divergence the composite uses; ``scales`` (in content items) and ``lookback`` (items,
    at most 256) define the gap score, ``saturation`` its scale: the score is
    ``tanh(jump / saturation)`` where ``jump`` is the mean cache-perplexity jump in ``[0, 1]``
    (:func:`novelty_gap_scores`). On the public sets, gold topic boundaries have a median jump of
    about 0.05 and other gaps a 90th percentile of about 0.04, so with 0.1 a clear break scores
    0.5-0.9 and mixes sensibly with the cascade's structure bonuses (0.3 for a blank line).
    Defaults were chosen on six public segmentation sets at once (English and Chinese, prose and
    dialogue), not tuned to one.
    """

    name: str = "entropy"
    window: int = 100
    step: int = 50
    n: int = 2
    scales: tuple[int, ...] = (10, 20, 40, 80)
    lookback: int = 200
    saturation: float = 0.1

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        """float64 array of ``len(sents) - 1`` scores in ``[0, 1]``; higher = stronger break."""
        if len(sents) < 2:
            return np.zeros(0)
        return self.scores_at(sents.text, np.asarray(sents.ends[:-1]))

    def scores_at(self, text: str, offsets: np.ndarray) -> np.ndarray:
        """The gap score of a cut at each character offset (any offsets, not only sentence ends)."""
        return self.squash(novelty_gap_scores(text, np.asarray(offsets), self.scales, self.lookback))

    def squash(self, jump: np.ndarray) -> np.ndarray:
        """The score of a cache-perplexity jump: ``tanh(jump / saturation)``."""
        return np.tanh(jump / self.saturation) if self.saturation > 0 else jump

    def curves(self, text: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The plottable curves of ``text``, each ``(x offsets in characters, values)``:
        ``entropy`` (bits per window), ``perplexity`` (per window, under the document model),
        ``divergence`` (JSD bits at window boundaries), ``novelty`` (per content item, its
        backward cache surprisal in [0, 1])."""
        pos, back, _ = novelty_profile(text, self.lookback)
        return {
            "entropy": entropy_curve(text, self.window, self.step, self.n),
            "perplexity": perplexity_curve(text, self.window, self.step, self.n),
            "divergence": divergence_curve(text, self.window, self.step, self.n),
            "novelty": (pos.astype(np.float64), np.asarray(back)),
        }


def zscore(x: np.ndarray) -> np.ndarray:
    """``(x - mean) / std`` over the document (zeros when it does not vary; non-finite entries count
    as missing and score 0): a score with no unit, so signals of different scale can be mixed or
    weighed against the structure rewards."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    if np.isfinite(x).all():  # the usual case, without the nan-aware reductions (the same numbers)
        mu, sd = x.mean(), x.std()
        return (x - mu) / sd if sd > 1e-12 else np.zeros_like(x)
    x = np.where(np.isfinite(x), x, np.nan)
    mu = np.nanmean(x) if np.isfinite(x).any() else 0.0
    sd = np.nanstd(x) if np.isfinite(x).any() else 0.0
    z = (x - mu) / sd if sd > 1e-12 else np.zeros_like(x)
    return np.nan_to_num(z, nan=0.0)


@dataclass(frozen=True)
class CompositeSignal:
    """Tier 3 of the cascade: a composite of the entropy signal, the character n-gram divergence
    (the information gain of cutting there, an entropy/perplexity-of-windows quantity), and an
    optional ``extra`` signal (an LM perplexity signal when one is configured).

    Each component is z-normalised within the document (so signals of different scale mix), the
    weighted mean ``z`` is squashed with a logistic to ``(0, 1)``; 0.5 is an average gap.
    ``weights`` are (entropy, divergence, extra); the divergence is the information gain of
    cutting exactly at the gap (:func:`divergence_at`, windows of ``entropy.window`` characters).
    """

    name: str = "composite"
    extra: GapSignal | None = None
    weights: tuple[float, float, float] = (1.0, 0.5, 1.0)
    entropy: EntropySignal = EntropySignal()
    squash: bool = True  # False: the weighted mean z itself (a tier-1 signal keeps its contrast)

    def components(self, sents: SentenceSpans, gaps: np.ndarray | None = None, *,
                   entropy: np.ndarray | None = None,
                   edges: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """The raw component scores per gap (before normalisation), for all gaps or the given gap
        indices. ``entropy``: the entropy signal's scores of those gaps when known (tier 1 computed
        them); ``edges``: see :func:`divergence_at`."""
        ns = len(sents)
        if ns < 2:
            return {}
        idx = np.arange(ns - 1) if gaps is None else np.asarray(gaps, dtype=np.int64)
        offsets = np.asarray(sents.ends[:-1], dtype=np.int64)[idx]
        e = self.entropy
        out = {"entropy": e.scores_at(sents.text, offsets) if entropy is None else np.asarray(entropy, np.float64)}
        if self.weights[1]:  # weighted 0 (the fused signal), the divergence is not computed at all
            out["divergence"] = divergence_at(sents.text, offsets, e.window, e.n, edges=edges)
        if self.extra is not None:
            ex = np.asarray(self.extra.gap_scores(sents), dtype=np.float64)
            if ex.shape != (ns - 1,):
                raise ValueError(f"extra signal {getattr(self.extra, 'name', '?')!r} returned shape "
                                 f"{ex.shape}, expected {(ns - 1,)}")
            out["extra"] = ex[idx]
        return out

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        if len(sents) < 2:
            return np.zeros(0)
        return self.gap_scores_at(sents, np.arange(len(sents) - 1))

    def sentence_vectors(self, sents: SentenceSpans) -> np.ndarray | None:
        """The ``extra`` signal's sentence vectors when it has them (the fused signal's embedder),
        else None: what the cascade's global decision measures cohesion with."""
        get = getattr(self.extra, "sentence_vectors", None)
        return None if get is None else get(sents)

    def gap_scores_at(self, sents: SentenceSpans, gaps: np.ndarray) -> np.ndarray:
        """Composite scores of the gap indices ``gaps`` only, z-normalised among them: what tier 3
        needs inside runs that entropy could not split, without scoring the whole document."""
        gaps = np.asarray(gaps, dtype=np.int64)
        if len(sents) < 2 or gaps.size == 0:
            return np.zeros(gaps.size)
        return self.combine(self.components(sents, gaps))

    def combine(self, comp: dict[str, np.ndarray]) -> np.ndarray:
        """Scores in ``(0, 1)`` from raw components (as :meth:`components` returns them), each
        z-normalised among the gaps given, mixed by ``weights``, squashed by a logistic (with
        ``squash=False``, the mixed z-score itself)."""
        if not comp or comp["entropy"].size == 0:
            return np.zeros(0)
        we, wd, wx = self.weights
        z = we * zscore(comp["entropy"])
        tot = we
        if "divergence" in comp:
            z = z + wd * zscore(comp["divergence"])
            tot += wd
        if "extra" in comp:
            z = z + wx * zscore(comp["extra"])
            tot += wx
        z = z / tot if tot > 0 else z
        if not self.squash:
            return z
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))

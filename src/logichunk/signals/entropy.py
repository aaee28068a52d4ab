"""Model-free boundary signals: window entropy, document n-gram perplexity, and the lexical
cache-perplexity jump that scores sentence gaps.

Three things live here, all numpy, no model, no Python loop per character, window or gap:

**Curves** (for plots and for the composite signal), on character n-grams:

* :func:`entropy_curve` — Shannon entropy ``H = -sum p log2 p`` of the character n-grams inside
  sliding windows (``window``/``step`` characters, default 100/50, bigrams by default);
* :func:`perplexity_curve` — per window, ``2**H`` where ``H`` is the mean surprisal of the window's
  n-grams under the n-gram model estimated from the whole document
  (``P(c_n | c_1..c_{n-1}) = C(c_1..c_n) / C(c_1..c_{n-1} .)``, maximum likelihood, bigram by
  default). A window that reads like the rest of the document has a low perplexity; an odd one
  (a table, a quote in another language, a change of subject) stands out.

Only *content* n-grams count: an n-gram made only of whitespace, punctuation, symbols or control
characters is skipped, so runs of spaces or ``-----`` never dominate a window.

**The gap score** of :class:`EntropySignal` (tier 1 of the logic-chain cascade). On the public
segmentation sets (Choi, Wiki-300, Weibo, DialSeg711, TIAGE, DAct; see ``bench/bench_signals.py``)
the plain entropy jump ``|H_right - H_left|`` of character bigrams scored no better than random
cuts, and vocabulary shift is what finds topic breaks, so the score is built on that, with an
information-theoretic reading:

1. *Content items*: each word of a space-separated script counts once, as the hash of its first
   five lower-cased letters (truncation is a crude but effective stemmer: ``economy``,
   ``economic``, ``economist`` agree) with a short English stop list and one-letter words left out;
   each CJK character is an item (frequent function characters such as 的了是在 left out). Item
   ids are exact for CJK and 22-bit hashes for words (collisions only matter within a few hundred
   items, where they are negligible).
2. *Cache-model surprisal*: each item's surprisal under a recency cache model — probability
   ``∝ 1/d`` for an item last seen ``d`` items ago, with everything not seen in the last ``D``
   (``lookback``) items at the floor — normalised to ``[0, 1]``: ``min(log2 d, log2 D) / log2 D``.
   The same is computed reading the text backwards (distance to the *next* occurrence).
   Distances come from one vectorised pass: rows of 512 items overlapping by half are sorted by
   ``(item id, position)`` (a row sort, cheap and cache friendly), equal neighbours are links.
3. *Perplexity jump*: with prefix sums of the surprisals, the mean surprisal of the ``K`` items
   after a gap minus that of the ``K`` items before it is the log of the cache-model perplexity
   ratio (right window under a model of the left context, in units of ``log2 D`` bits); the
   backward reading gives the mirror term. Their mean, over several scales ``K`` (10/20/40/80
   items by default: a sentence or two up to a few paragraphs), clipped to ``[0, 1]``, is the
   score. 0 means the text after the gap is no more novel than the text before it; 1 means every
   item on the right is new and every item on the left never comes back.
4. *Edges*: windows shrink symmetrically near the document edges (``k = min(K, items before,
   items after)``) and a scale's term is weighted by ``k / K``, so a gap near an edge, judged on
   little evidence, cannot become a spurious maximum.

Scores are comparable across documents (same units, ``[0, 1]``), deterministic, and cost O(N) plus
a row sort of the items (O(N log 512)). :class:`CompositeSignal` (tier 3) mixes this score with the
character n-gram divergence of the windows either side of each gap (information gain
``H(L ∪ R) - (|L| H(L) + |R| H(R)) / |L ∪ R|`` from :func:`entropy_curve`'s machinery) and, when
configured, an LM perplexity signal, each z-normalised within the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..text.charclass import ALNUM, CJK, classes, codepoints
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

_WORD_PREFIX = 5  # letters of a word that make its id (truncation stemming)
_WORD_BIT = np.uint32(1 << 22)  # word ids live in [2^22, 2^23); CJK items are their code point (< 2^21)
_STOP_EN = (
    "a an and are as at be been but by for from has have had he her his him i in is it its of on or "
    "she that the their them there they this these those to was we were which who will with would "
    "you your not do does did so if then than also can could may might must shall should into out "
    "up down over about after before all any each more most other some such no nor only own same "
    "too very just our ours my me what when where why how here one two"
).split()
_STOP_ZH = "的了是在和与及也就都而又或之其这那个们我你他她它着吗呢吧啊把被对从以为于有很么"


def _word_hash(cp: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """uint32 id in [2^22, 2^23) of each word's first ``_WORD_PREFIX`` letters, ASCII lower-cased."""
    last = cp.size - 1
    h = np.full(starts.size, 0x811C9DC5, dtype=np.uint32)
    for j in range(_WORD_PREFIX):
        c = cp[np.minimum(starts + j, last)]
        c = c + np.uint32(32) * ((c - np.uint32(65)) < np.uint32(26))  # A-Z -> a-z (wrapping compare)
        c = np.where(lens > j, c, np.uint32(0))
        h = (h ^ c) * np.uint32(0x01000193)  # FNV-1a step
    h ^= h >> np.uint32(15)
    h *= np.uint32(0x2C1B3C6D)
    h ^= h >> np.uint32(12)
    return (h >> np.uint32(10)) | _WORD_BIT


@lru_cache(maxsize=1)
def _stop_tables() -> tuple[np.ndarray, np.ndarray]:
    """(word table: 2^20 bools indexed by the low bits of a word id; CJK table: 2^16 bools)."""
    text = " ".join(_STOP_EN)
    cp = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    ends = np.flatnonzero(np.append(cp == 32, True))
    starts = np.concatenate(([0], ends[:-1] + 1))
    ids = _word_hash(cp, starts, ends - starts)
    words = np.zeros(1 << 20, dtype=bool)
    words[ids & np.uint32((1 << 20) - 1)] = True
    zh = np.zeros(1 << 16, dtype=bool)
    zh[[ord(c) for c in _STOP_ZH]] = True
    return words, zh


@lru_cache(maxsize=4)
def content_items(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The content items of ``text``: ``(positions, ids)``, sorted by position.

    ``positions`` (int64) are character offsets: a word's first character, or the CJK character.
    ``ids`` (uint32, never 0) identify the item: the code point of a CJK character, or a hash in
    ``[2^22, 2^23)`` of a word's first five letters (ASCII lower-cased). Stop words, one-letter
    words and frequent CJK function characters are left out. Results are cached per text (the
    arrays are read-only).
    """
    n = len(text)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.uint32)
    cp = codepoints(text)
    cls = classes(text)
    stop_w, stop_zh = _stop_tables()
    parts: list[tuple[np.ndarray, np.ndarray]] = []

    al = (cls & ALNUM) != 0
    if al.any():
        edge = np.flatnonzero(np.diff(al, prepend=False, append=False))
        starts, ends = edge[0::2], edge[1::2]
        lens = ends - starts
        keep = lens > 1
        starts, lens = starts[keep], lens[keep]
        ids = _word_hash(cp, starts, lens)
        keep = ~stop_w[ids & np.uint32((1 << 20) - 1)]
        parts.append((starts[keep], ids[keep]))

    cj = (cls & CJK) != 0
    if cj.any():
        pos = np.flatnonzero(cj)
        ids = cp[pos]
        keep = ~stop_zh[ids & np.uint32(0xFFFF)] | (ids > np.uint32(0xFFFF))
        parts.append((pos[keep], ids[keep].astype(np.uint32)))

    if not parts:
        pos, ids = np.zeros(0, np.int64), np.zeros(0, np.uint32)
    elif len(parts) == 1:
        pos, ids = parts[0]
    else:  # mixed scripts: merge by position through a text-long buffer (ids are never 0)
        buf = np.zeros(n, dtype=np.uint32)
        for p, i in parts:
            buf[p] = i
        pos = np.flatnonzero(buf)
        ids = buf[pos]
    pos = np.ascontiguousarray(pos, dtype=np.int64)
    ids = np.ascontiguousarray(ids, dtype=np.uint32)
    pos.flags.writeable = False
    ids.flags.writeable = False
    return pos, ids


# --------------------------------------------------------------------------- link distances

_ROW_BITS = 9
_ROW = 1 << _ROW_BITS  # items per sorted row
_HALF = _ROW // 2  # rows overlap by half: every item sees at least _HALF items back and ahead
MAX_LOOKBACK = _HALF


def link_distances(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each item, the distance (in items) to the previous and to the next item with the same
    id, or 0 when there is none within ``MAX_LOOKBACK`` (256) items. uint16 arrays.

    Vectorised: items go into rows of 512 overlapping by 256; each row is sorted by
    ``(id << 9) | local index`` (ids < 2^23, so the key fits 32 bits), equal neighbours in a sorted
    row are consecutive occurrences. An item takes its backward link from the row where it sits in
    the second half and its forward link from the row where it sits in the first half, so both
    look at least 256 items away; longer links are dropped so the result does not depend on where
    the rows fall.
    """
    n = ids.size
    back = np.zeros(n, np.uint16)
    fwd = np.zeros(n, np.uint16)
    if n < 2:
        return back, fwd
    nrows = max(1, -(-n // _HALF) - 1)
    key = np.zeros((nrows + 1) * _HALF, dtype=np.uint32)  # pad id 0 never equals an item id
    key[:n] = ids << np.uint32(_ROW_BITS)
    m = sliding_window_view(key, _ROW)[::_HALF] | np.arange(_ROW, dtype=np.uint32)
    m.sort(axis=1)
    loc = m & np.uint32(_ROW - 1)
    m >>= np.uint32(_ROW_BITS)
    d = loc[:, 1:] - loc[:, :-1]  # > 0 inside runs of equal ids (sorted by local index)
    d *= (m[:, 1:] == m[:, :-1]) & (d <= np.uint32(_HALF))
    d16 = d.astype(np.uint16)
    base = (np.arange(nrows, dtype=np.int64) * _ROW)[:, None]
    bk = np.zeros(nrows * _ROW, np.uint16)
    fw = np.zeros(nrows * _ROW, np.uint16)
    bk[(base + loc[:, 1:]).ravel()] = d16.ravel()
    fw[(base + loc[:, :-1]).ravel()] = d16.ravel()
    bk = bk.reshape(nrows, _ROW)
    fw = fw.reshape(nrows, _ROW)
    back[:] = np.concatenate((bk[0, :_HALF], bk[:, _HALF:].ravel()))[:n]
    fwd[:] = np.concatenate((fw[:, :_HALF].ravel(), fw[-1, _HALF:]))[:n]
    return back, fwd


@lru_cache(maxsize=8)
def _surprisal_lut(lookback: int) -> np.ndarray:
    d = np.arange(MAX_LOOKBACK + 1, dtype=np.float64)
    lut = np.ones(MAX_LOOKBACK + 1)
    lb = np.log2(lookback)
    lut[1:] = np.minimum(np.log2(d[1:]) / lb, 1.0)
    lut[0] = 1.0  # never seen (within the row reach): the floor of the cache model
    return lut


@lru_cache(maxsize=4)
def novelty_profile(text: str, lookback: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per content item of ``text``: ``(positions, back, fwd)`` where ``back[i]`` is the item's
    normalised surprisal in ``[0, 1]`` under a recency cache model of the preceding ``lookback``
    items (``log2 d / log2 lookback`` for an item last seen ``d`` items ago, 1 if not seen), and
    ``fwd[i]`` the same reading the text backwards. Plot ``back`` against ``positions`` (smoothed)
    to see where new vocabulary enters. Cached per text; arrays are read-only.
    """
    if not 2 <= lookback <= MAX_LOOKBACK:
        raise ValueError(f"lookback must be in [2, {MAX_LOOKBACK}], got {lookback}")
    pos, ids = content_items(text)
    back, fwd = link_distances(ids)
    lut = _surprisal_lut(lookback)
    b, f = lut[back], lut[fwd]
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
    offsets = np.asarray(offsets, dtype=np.int64)
    out = np.zeros(offsets.size)
    pos, sb, sf = novelty_profile(text, lookback)
    n = pos.size
    if offsets.size == 0 or n < 2 or not scales:
        return out
    cb, cf = _prefix(sb), _prefix(sf)
    b = np.searchsorted(pos, offsets, side="left")
    room = np.minimum(b, n - b)
    for K in scales:
        k = np.minimum(room, K)
        kk = np.maximum(k, 1)
        lo, hi = b - k, b + k
        right_b, left_b = cb[hi] - cb[b], cb[b] - cb[lo]
        right_f, left_f = cf[hi] - cf[b], cf[b] - cf[lo]
        out += ((right_b - left_b) + (left_f - right_f)) / (2.0 * K) * (k / kk)
    out /= len(scales)
    np.clip(out, 0.0, 1.0, out=out)
    return out


# --------------------------------------------------------------------------- character n-gram curves

_SENTINEL = np.uint64(np.iinfo(np.uint64).max)


def _gram_keys(text: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For each start ``i`` in ``[0, len(text) - n]``: an exact uint64 key of ``text[i:i+n]`` (code
    points packed 21 bits each for n <= 3; a 64-bit polynomial hash with a splitmix finaliser for
    n > 3) and whether the gram holds a letter, digit or CJK character (a *content* gram)."""
    cp = codepoints(text)
    m = cp.size - n + 1
    if m <= 0:
        return np.zeros(0, np.uint64), np.zeros(0, bool)
    c64 = cp.astype(np.uint64)
    if n <= 3:
        key = c64[:m].copy()
        for j in range(1, n):
            key <<= np.uint64(21)
            key |= c64[j : j + m]
    else:
        key = np.zeros(m, np.uint64)
        for j in range(n):
            key = key * np.uint64(0x100000001B3) + c64[j : j + m] + np.uint64(1)
        key ^= key >> np.uint64(30)
        key *= np.uint64(0xBF58476D1CE4E5B9)
        key ^= key >> np.uint64(27)
    content = (classes(text) & (ALNUM | CJK)) != 0
    valid = content[:m].copy()
    for j in range(1, n):
        valid |= content[j : j + m]
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


def _rows_entropy(rows: np.ndarray) -> np.ndarray:
    """Entropy (bits) of the keys of each row of ``rows`` (r, w), ignoring ``_SENTINEL`` entries.
    Sorts ``rows`` in place; ``H = log2 m - (1/m) sum c log2 c`` from the run lengths."""
    r, w = rows.shape
    if r == 0 or w == 0:
        return np.zeros(r)
    rows.sort(axis=1)
    new = np.ones(rows.shape, dtype=bool)
    np.not_equal(rows[:, 1:], rows[:, :-1], out=new[:, 1:])
    flat_new = new.ravel()
    run_start = np.flatnonzero(flat_new)
    run_len = np.diff(np.append(run_start, flat_new.size)).astype(np.float64)
    keep = rows.ravel()[run_start] != _SENTINEL
    run_row = run_start // w
    clogc = np.bincount(run_row, weights=np.where(keep, run_len * np.log2(run_len), 0.0), minlength=r)
    m = np.bincount(run_row, weights=np.where(keep, run_len, 0.0), minlength=r)
    h = np.where(m > 0, np.log2(np.maximum(m, 1.0)) - clogc / np.maximum(m, 1.0), 0.0)
    return np.maximum(h, 0.0)


def _window_entropy(key: np.ndarray, valid: np.ndarray, starts: np.ndarray, width: int,
                    block: int = 1 << 14) -> np.ndarray:
    """Entropy of the valid keys in ``key[s : s + width]`` for each start ``s`` (blocks of rows,
    so memory stays bounded)."""
    out = np.zeros(starts.size)
    if width <= 0 or starts.size == 0:
        return out
    view = sliding_window_view(np.where(valid, key, _SENTINEL), width)
    for a in range(0, starts.size, block):
        out[a : a + block] = _rows_entropy(view[starts[a : a + block]])
    return out


def entropy_curve(text: str, window: int = 100, step: int = 50, n: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Shannon entropy of character n-grams in sliding windows.

    Windows are ``[s, s + window)`` for ``s = 0, step, 2*step, ...`` while they fit, plus one
    window ending at ``len(text)`` if the last step falls short (one window over the whole text if
    it is shorter than ``window``). A window counts the n-grams ``text[i:i+n]`` that lie inside it
    (``s <= i``, ``i + n <= s + window``) and hold at least one letter, digit or CJK character.

    Returns ``(offsets, values)``, float64 arrays of one entry per window: ``offsets`` is the
    window's centre in characters (``s + width / 2``), ``values`` its entropy
    ``H = -sum p log2 p`` in bits (0 for a window without content n-grams). Empty text gives two
    empty arrays. Cost: O(N log window) (a row sort of every window).
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    starts, ends = _windows(len(text), window, step)
    if starts.size == 0:
        return np.zeros(0), np.zeros(0)
    offsets = (starts + ends) / 2.0
    width = int(ends[0] - starts[0]) - n + 1
    key, valid = _gram_keys(text, n)
    return offsets, _window_entropy(key, valid, starts, width)


def _document_surprisal(text: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per n-gram start: surprisal (bits) of the gram's last character given its first n-1 under
    the document's own maximum-likelihood n-gram model, and the content mask."""
    key, valid = _gram_keys(text, n)
    s = np.zeros(key.size)
    if not valid.any():
        return s, valid
    k = key[valid]
    _, inv, cnt = np.unique(k, return_inverse=True, return_counts=True)
    c_gram = cnt[inv].astype(np.float64)
    if n == 1:
        c_ctx = np.full(k.size, float(k.size))
    else:
        ctx, _ = _gram_keys(text, n - 1)
        ctxk = ctx[: key.size][valid]
        _, cinv, ccnt = np.unique(ctxk, return_inverse=True, return_counts=True)
        c_ctx = ccnt[cinv].astype(np.float64)
    s[valid] = np.log2(c_ctx) - np.log2(c_gram)
    return s, valid


def perplexity_curve(text: str, window: int = 100, step: int = 50, n: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """n-gram perplexity of each sliding window under the document's own n-gram model.

    The model is estimated from the whole text: ``P(g) = C(g) / C(g[:-1] .)`` over content n-grams
    (counts of the n-gram, and of content n-grams sharing its first n-1 characters; for n = 1,
    ``C(g) / total``). A window's value is ``2**H`` with ``H`` the mean surprisal
    ``-log2 P(g)`` of the content n-grams inside it (same windows and n-grams as
    :func:`entropy_curve`); 1.0 for a window without content n-grams. Returns
    ``(offsets, values)`` with ``offsets`` the window centres. Cost: O(N log N) (one sort of the
    document's n-grams).
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    starts, ends = _windows(len(text), window, step)
    if starts.size == 0:
        return np.zeros(0), np.zeros(0)
    offsets = (starts + ends) / 2.0
    s, valid = _document_surprisal(text, n)
    cs, cv = _prefix(s), _prefix(valid.astype(np.float64))
    last = np.clip(ends - n + 1, starts, None)  # grams i in [start, end - n]
    last = np.minimum(last, s.size)
    first = np.minimum(starts, last)
    tot, m = cs[last] - cs[first], cv[last] - cv[first]
    h = np.where(m > 0, tot / np.maximum(m, 1.0), 0.0)
    return offsets, np.exp2(h)


def divergence_curve(text: str, offsets: np.ndarray, window: int = 100, n: int = 2,
                     block: int = 1 << 12) -> np.ndarray:
    """Information gain of cutting at each offset: the Jensen-Shannon divergence (bits, in
    ``[0, 1]``) between the content n-gram distributions of ``[p - w, p)`` and ``[p, p + w)``,
    ``H(L ∪ R) - (|L| H(L) + |R| H(R)) / |L ∪ R|``, with ``w = min(window, p, len - p)`` so both
    sides are equally long (n-grams straddling ``p`` belong to neither). 0 where a side has no
    n-gram. Cost: a row sort of about 4·window keys per offset, so callers evaluate it on a grid
    of offsets (see :class:`CompositeSignal`)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    out = np.zeros(offsets.size)
    N = len(text)
    key, valid = _gram_keys(text, n)
    if key.size == 0 or offsets.size == 0:
        return out
    masked = np.where(valid, key, _SENTINEL)
    w = np.minimum(np.minimum(offsets, N - offsets), window)
    for width in np.unique(w).tolist():  # one pass per distinct width (only near the edges > 1)
        g = width - n + 1  # grams fully inside one side
        if g <= 0:
            continue
        sel = np.flatnonzero(w == width)
        view = sliding_window_view(masked, g)
        for a in range(0, sel.size, block):
            s = sel[a : a + block]
            p = offsets[s]
            left, right = view[p - width], view[p]
            union = np.concatenate((left, right), axis=1)
            ml = (left != _SENTINEL).sum(axis=1)
            mr = (right != _SENTINEL).sum(axis=1)
            hl, hr, hu = _rows_entropy(left), _rows_entropy(right), _rows_entropy(union)
            tot = ml + mr
            js = np.where((ml > 0) & (mr > 0), hu - (ml * hl + mr * hr) / np.maximum(tot, 1), 0.0)
            out[s] = np.clip(js, 0.0, 1.0)
    return out


# --------------------------------------------------------------------------- signals


@dataclass(frozen=True)
class EntropySignal:
    """Tier 1 of the logic-chain cascade: the model-free gap score (see the module docstring).

    ``window``/``step``/``n`` define the character n-gram curves (:meth:`curves`) and the
    n-gram divergence the composite uses; ``scales`` (in content items) and ``lookback`` (items,
    at most 256) define the gap score. Defaults were chosen on six public segmentation sets at
    once (English and Chinese, prose and dialogue), not tuned to one.
    """

    name: str = "entropy"
    window: int = 100
    step: int = 50
    n: int = 2
    scales: tuple[int, ...] = (10, 20, 40, 80)
    lookback: int = 200

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        """float64 array of ``len(sents) - 1`` scores in ``[0, 1]``; higher = stronger break."""
        ns = len(sents)
        if ns < 2:
            return np.zeros(0)
        return novelty_gap_scores(sents.text, np.asarray(sents.ends[:-1]), self.scales, self.lookback)

    def curves(self, text: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The plottable curves of ``text``: ``{"entropy": (offsets, bits), "perplexity": (offsets,
        ppl), "novelty": (item positions, backward cache surprisal)}``."""
        pos, back, _ = novelty_profile(text, self.lookback)
        return {
            "entropy": entropy_curve(text, self.window, self.step, self.n),
            "perplexity": perplexity_curve(text, self.window, self.step, self.n),
            "novelty": (pos.astype(np.float64), back),
        }


def _zscore(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
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
    ``weights`` are (entropy, divergence, extra); the divergence is evaluated on a grid of
    ``entropy.step`` characters and interpolated to the gaps.
    """

    name: str = "composite"
    extra: GapSignal | None = None
    weights: tuple[float, float, float] = (1.0, 0.5, 1.0)
    entropy: EntropySignal = EntropySignal()

    def components(self, sents: SentenceSpans) -> dict[str, np.ndarray]:
        """The raw component scores per gap (before normalisation)."""
        ns = len(sents)
        if ns < 2:
            return {}
        text = sents.text
        gaps = np.asarray(sents.ends[:-1], dtype=np.int64)
        out = {"entropy": self.entropy.gap_scores(sents)}
        step = max(1, self.entropy.step // 2)
        grid = np.arange(0, len(text) + step, step, dtype=np.int64)
        grid = np.unique(np.clip(grid, 0, len(text)))
        jsd = divergence_curve(text, grid, self.entropy.window, self.entropy.n)
        out["divergence"] = np.interp(gaps, grid, jsd)
        if self.extra is not None:
            ex = np.asarray(self.extra.gap_scores(sents), dtype=np.float64)
            if ex.shape != (ns - 1,):
                raise ValueError(f"extra signal {getattr(self.extra, 'name', '?')!r} returned shape "
                                 f"{ex.shape}, expected {(ns - 1,)}")
            out["extra"] = ex
        return out

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        ns = len(sents)
        if ns < 2:
            return np.zeros(0)
        comp = self.components(sents)
        we, wd, wx = self.weights
        z = we * _zscore(comp["entropy"]) + wd * _zscore(comp["divergence"])
        tot = we + wd
        if "extra" in comp:
            z = z + wx * _zscore(comp["extra"])
            tot += wx
        z = z / tot if tot > 0 else z
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))

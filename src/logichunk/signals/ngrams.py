"""Character n-grams of a text: exact n-gram keys, and the window entropy, document perplexity and
divergence curves computed from them.

Everything is numpy, with no model and no Python loop per character or window (a text's bigram keys
and the windows' run sums come from :mod:`logichunk.native` where it is compiled: the same bits).

**Curves** (for plots, and the composite signal) of character n-grams, ``(offsets, values)``:

* :func:`entropy_curve` — Shannon entropy ``H = -sum p log2 p`` of the n-grams inside sliding
  windows (``window``/``step`` characters, default 100/50, bigrams by default);
* :func:`perplexity_curve` — per window, ``2**H`` with ``H`` the mean surprisal of its n-grams under
  the n-gram model estimated from the whole document (``P(c_n | c_1..c_{n-1})`` by maximum
  likelihood): a window that reads like the rest of the document is low, an odd one stands out;
* :func:`divergence_curve` — the information gain of cutting at a grid offset: the Jensen-Shannon
  divergence of the n-gram distributions either side, ``H(L ∪ R) - (|L| H(L) + |R| H(R)) / |L ∪ R|``.

:func:`divergence_at` is that information gain at given offsets instead of on a grid: the
divergence component of :class:`~logichunk.signals.composite.CompositeSignal` (tier 3).

Only *content* n-grams count (at least one letter, digit or CJK character), so runs of spaces,
punctuation or ``-----`` never dominate a window.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import native
from ..hashing import _M1
from ..text.cache import text_cache
from ..text.charclass import ALNUM, CJK, class_table, codepoints

__all__ = [
    "divergence_at",
    "divergence_curve",
    "entropy_curve",
    "perplexity_curve",
]


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
    key, valid = _keys_of(codepoints(text), n, mask)
    key.flags.writeable = False  # cached per text: shared by every caller
    valid.flags.writeable = False
    return key, valid


def _keys_of(cp: np.ndarray, n: int, mask: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_keys` of the code points ``cp``: bigrams from one compiled pass
    (:func:`logichunk.native.bigram_keys`, the same keys), other n-grams, or without the kernel, from the
    numpy passes."""
    if n == 2:
        fast = native.bigram_keys(cp, _content_table(), mask)
        if fast is not None:
            return fast
    return _keys(cp, np.take(_content_table(), cp).view(bool), n, mask)


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
    top = int(cp.max()) if n == 2 else 0  # (one pass: read by both tests below)
    if n == 2 and top >= 0x10000:  # beyond the BMP: number the alphabet densely
        present = np.bincount(cp) > 0
        if np.count_nonzero(present) < 0xFFFF:
            dense = np.take((np.cumsum(present) - 1).astype(np.uint32), cp)
    if n == 1:
        key = cp.copy()
    elif n == 2 and (dense is not None or top < 0x10000):
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
    for a in range(0, starts.size, block):
        at = starts[a : a + block]
        rows = native.windows(key, at, width)  # (a copy a row, where the view's index copies key by key)
        if rows is None:  # (the view only here: made for every call, it cost more than a short text's windows)
            rows = sliding_window_view(key, width)[at]
        out[a : a + block], cnt[a : a + block] = _rows_entropy(rows)
    return out, cnt


def _information_gain(hu: np.ndarray, hl: np.ndarray, hr: np.ndarray, ml: np.ndarray, mr: np.ndarray) -> np.ndarray:
    """``H(U) - (|L| H(L) + |R| H(R)) / |L ∪ R|`` clipped to ``[0, 1]``; 0 where a side has no
    content n-gram."""
    js = hu - (ml * hl + mr * hr) / np.maximum(ml + mr, 1.0)
    return np.where((ml > 0) & (mr > 0), np.minimum(np.maximum(js, 0.0), 1.0), 0.0)


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


def _prefix(x: np.ndarray) -> np.ndarray:
    out = np.zeros(x.size + 1, dtype=np.float64)
    np.cumsum(x, out=out[1:])
    return out


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


#: the share of a text :func:`divergence_at`'s windows cover from which it reads the whole text's n-gram keys
#: (cached: the cascade's next levels ask about more gaps of the same text) rather than their own. A tenth: the
#: whole text's keys cost about what a third of it gathered segment by segment costs, and the cascade asks three
#: times (once a level), so keys made once at its first level serve the next two (a half made each level gather
#: its segments again: ~8 ms of 30 on a 2 MB English text); either way the windows read the same grams
_SHARED_KEYS = 0.1


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
    w_all = np.maximum(np.minimum(np.minimum(t_all - t_lo, t_hi - t_all), window), 0)
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
    shared = _gram_keys.peek(text, n)  # (an earlier level's call made them: they serve this one too)
    if shared is not None or int(seg_off[-1] + seg_hi[-1] - seg_lo[-1]) >= _SHARED_KEYS * N:
        # the windows cover much of the text: the whole text's keys, cached, serve this call and the next
        # level's (a window never reaches past its segment, so it reads the same n-grams; any of _keys'
        # numberings orders the grams alike, so the runs are summed in the same order: the same bits)
        key = (shared if shared is not None else _gram_keys(text, n))[0]
        t_loc = t_all
    else:
        t_loc = t_all - seg_lo[seg] + seg_off[seg]
        cp_all = codepoints(text)
        cp = np.concatenate([cp_all[a:b] for a, b in zip(seg_lo.tolist(), seg_hi.tolist(), strict=True)])
        key, _ = _keys_of(cp, n)
    if key.size == 0:
        return out
    full = N - n + 1  # the union window is clipped to the text's n-gram count, as on the grid
    for w in np.unique(w_all).tolist():
        g = w - n + 1
        if g <= 0:
            continue
        sel = np.flatnonzero(w_all == w)
        t = t_loc[sel]
        # (both sides' windows in one call: the same rows, sorted and summed row by row, half the calls)
        h, m = _window_entropy_counts(key, np.concatenate((t - w, t)), g)
        hl, hr, ml, mr = h[: t.size], h[t.size :], m[: t.size], m[t.size :]
        hu = _window_entropy(key, t - w, min(2 * w - n + 1, full))
        out[sel] = _information_gain(hu, hl, hr, ml, mr)
    return out

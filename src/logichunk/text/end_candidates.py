"""Where a sentence may end: the offsets of every terminator (``. ! ? 。 …``...) and line terminator
of a text, and where the whitespace after each one ends. The vectorised path finds them in one pass in C
where the native kernels are compiled, else block by block on the code-point array (no text-sized
temporary), the scalar path with ``str.find``; the splitter (:mod:`.sentences`) then judges which of them
end a sentence."""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

import numpy as np

from .. import native
from ._arrays import _EMPTY_I64, _at, _member
from .charclass import codepoints
from .sentence_chars import _ALL_CAND, _CAND_CODES, _CAND_KINDS, _F_WS, _HIGH_CODES, _K_CR, _K_NL

_WS_CLASS = "\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"  # == charclass WS
_WS_RE = re.compile(f"[{_WS_CLASS}]*")
_WS_STEPS = 8
_WS_WINDOW = 32  # (then a window of characters read at once)
_BLOCK = 1 << 18


def _units(text: str) -> np.ndarray:
    """The code points of ``text`` in the narrowest exact dtype the splitter's passes gain by: uint8 for ASCII;
    else, for the numpy passes, uint16 when no character lies outside the BMP, else uint32. ``units[i]`` is
    ``ord(text[i])``. Where the kernels are compiled, a text that is not ASCII keeps :func:`codepoints`' uint32
    array (cached, the layout's too): the kernels read each character once at any width, and the narrowing's two
    passes (a maximum, a copy of two megabytes a million characters) cost more than the narrower reads save."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    cp = codepoints(text)  # shared with the signals (cached)
    if native.available():
        return cp
    return cp.astype(np.uint16) if int(cp.max()) < 0x10000 else cp


@lru_cache(maxsize=4)
def _cand_table(size: int) -> np.ndarray:
    """``table[c]`` is True for every candidate code point ``c < size``."""
    table = np.zeros(size, dtype=bool)
    table[_CAND_CODES[_CAND_CODES < size]] = True
    table.flags.writeable = False
    return table


@lru_cache(maxsize=4)
def _kind_table(size: int) -> np.ndarray:
    """``table[c]`` is the candidate kind of code point ``c < size`` (0 for other characters)."""
    table = np.zeros(size, dtype=np.uint8)
    keep = _CAND_CODES < size
    table[_CAND_CODES[keep]] = _CAND_KINDS[keep]
    table.flags.writeable = False
    return table


def _candidates(text: str, cp: np.ndarray) -> np.ndarray:
    """Sorted offsets of every terminator and line-terminator character.

    Works block by block so that every pass runs on data in cache and no text-sized temporary is
    allocated. Mostly-Latin text is compared against the few ASCII marks (the rare non-ASCII
    characters are checked one by one); mostly-CJK text goes through a lookup table."""
    n = cp.size
    size = min(n, _BLOCK)
    mask = np.empty(size, dtype=bool)
    found = []
    sample = cp[:: max(1, n // 4096)]
    if cp.dtype != np.uint8 and int(np.count_nonzero(sample >= 0x80)) * 4 > sample.size:
        table = _cand_table(65536 if cp.dtype == np.uint16 else 0x110000)
        for a in range(0, n, _BLOCK):
            blk = cp[a : a + _BLOCK]
            mk = mask[: blk.size]
            np.take(table, blk, out=mk, mode="wrap")
            idx = np.flatnonzero(mk)
            if idx.size:
                found.append(idx + a if a else idx)
        return np.concatenate(found) if found else _EMPTY_I64
    extra = [ord(ch) for ch in "!?" if ch in text]
    high = cp.dtype != np.uint8
    buf = np.empty(size, dtype=bool)
    tmp = np.empty(size, dtype=cp.dtype)
    found_high = []
    for a in range(0, n, _BLOCK):
        blk = cp[a : a + _BLOCK]
        k = blk.size
        mk, bk, tk = mask[:k], buf[:k], tmp[:k]
        np.equal(blk, 0x2E, out=mk)
        np.subtract(blk, 0x0A, out=tk)  # \n \v \f \r (smaller values wrap around)
        np.less(tk, 4, out=bk)
        mk |= bk
        for c in extra:
            np.equal(blk, c, out=bk)
            mk |= bk
        idx = np.flatnonzero(mk)
        if idx.size:
            found.append(idx + a if a else idx)
        if high:
            np.greater_equal(blk, 0x80, out=bk)
            hidx = np.flatnonzero(bk)
            if hidx.size:
                hidx = hidx[_member(blk[hidx].astype(np.uint32), _HIGH_CODES)]
                if hidx.size:
                    found_high.append(hidx + a if a else hidx)
    found += found_high
    if not found:
        return _EMPTY_I64
    out = np.concatenate(found) if len(found) > 1 else found[0]
    if found_high:
        out.sort()
    return out


def _ends(text: str, cp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The line terminators of ``text`` (a CRLF as its LF) and its other candidates (the terminators), each with
    its kind: ``(nl, nl_kind, term, term_kind)``, sorted offsets (int64) and kinds (uint8, ``_K_*``). In C where
    it is compiled (:func:`logichunk.native.ends`: one pass, a table lookup per character, each kind to its own
    arrays); else :func:`_candidates`, then their kinds."""
    fast = native.ends(cp, _kind_table(65536 if cp.dtype.itemsize < 4 else 0x110000), _K_NL, _K_CR)
    if fast is not None:
        return fast
    cand = _candidates(text, cp)
    kind = _kind_table(1 << (8 * cp.itemsize) if cp.itemsize < 4 else 0x110000)[cp[cand]]
    is_nl = kind >= _K_NL
    nl = cand[is_nl]
    nl_kind = kind[is_nl]
    crlf = (nl_kind == _K_CR) & (_at(cp, nl + 1) == 0x0A)
    if crlf.any():
        nl, nl_kind = nl[~crlf], nl_kind[~crlf]
    return nl, nl_kind, cand[~is_nl], kind[~is_nl]


def _skip_ws(text: str, cp: np.ndarray, fl: np.ndarray, q: np.ndarray) -> np.ndarray:
    """For each offset (sorted), the first offset at or after it that is not whitespace (or
    len(text))."""
    n = cp.size
    # queries next to each other inside one whitespace run share their answer: solve the last
    # query of each such chain only (a text of a million newlines is one chain; the compiled walk,
    # :func:`logichunk.native.skip_ws`, skips the queries inside the run it walked last by itself)
    if q.size > 1 and not native.available():
        ws_here = np.zeros(q.size, dtype=bool)
        inside = q < n
        ws_here[inside] = (fl[cp[q[inside]]] & _F_WS) != 0
        ws_next = np.zeros(q.size, dtype=bool)
        inside = q + 1 < n
        ws_next[inside] = (fl[cp[q[inside] + 1]] & _F_WS) != 0
        gap = q[1:] - q[:-1]
        link = (gap == 0) | ((gap == 1) & ws_here[:-1]) | ((gap == 2) & ws_here[:-1] & ws_next[:-1])
        reps = np.flatnonzero(~np.append(link, False))
        w_rep = _skip_ws_each(text, cp, fl, q[reps])
        return w_rep[np.searchsorted(reps, np.arange(q.size))] if reps.size < q.size else w_rep
    return _skip_ws_each(text, cp, fl, q)


def _skip_ws_each(text: str, cp: np.ndarray, fl: np.ndarray, q: np.ndarray) -> np.ndarray:
    """:func:`_skip_ws` for sorted offsets (in C where it is compiled: :func:`logichunk.native.skip_ws`)."""
    fast = native.skip_ws(cp, fl, int(_F_WS), q)
    if fast is not None:
        return fast
    n = cp.size
    w = q.copy()
    act = np.flatnonzero(w < n)
    act = act[(fl[cp[w[act]]] & _F_WS) != 0]
    for _ in range(_WS_STEPS):  # most runs are a space or two
        if act.size == 0:
            return w
        w[act] += 1
        act = act[w[act] < n]
        act = act[(fl[cp[w[act]]] & _F_WS) != 0]
    if act.size == 0:
        return w
    # an indent of code or a table's padding: the next _WS_WINDOW characters at once (rows a block at a
    # time: memory stays bounded)
    longer = []
    step = np.arange(_WS_WINDOW)
    for a in range(0, act.size, _BLOCK // _WS_WINDOW):
        part = act[a : a + _BLOCK // _WS_WINDOW]
        pos = w[part][:, None] + step
        ws = ((fl[cp[np.minimum(pos, n - 1)]] & _F_WS) != 0) & (pos < n)
        end = ws.all(axis=1)
        w[part[~end]] += np.argmin(ws[~end], axis=1)
        longer.append(part[end])
    act = np.concatenate(longer)
    w[act] += _WS_WINDOW
    act = act[w[act] < n]
    act = act[(fl[cp[w[act]]] & _F_WS) != 0]
    if act.size == 0:
        return w
    # long runs: one regex match per distinct run; the offsets stay sorted, so every offset the
    # run covers takes its end without a match of its own
    ws_end = _WS_RE.match
    ps = w[act].tolist()
    ends = []
    i, m = 0, len(ps)
    while i < m:
        end = ws_end(text, ps[i]).end()
        j = i + 1
        if j < m and ps[j] < end:
            j = bisect_left(ps, end, j)
        ends.extend([end] * (j - i))
        i = j
    w[act] = ends
    return w


_RUN_CHARS = "".join(ch for ch, k in _ALL_CAND.items() if k < _K_NL)
_NL_CHARS = "".join(ch for ch, k in _ALL_CAND.items() if k >= _K_NL)


def _find_all(text: str, chars: str) -> list[int]:
    """Sorted offsets of every occurrence of any of ``chars`` (str.find is memchr-fast; a regex
    character class is not)."""
    out: list[int] = []
    hits = 0
    for ch in chars:
        i = text.find(ch)
        if i < 0:
            continue
        hits += 1
        find = text.find
        while i >= 0:
            out.append(i)
            i = find(ch, i + 1)
    if hits > 1:
        out.sort()
    return out

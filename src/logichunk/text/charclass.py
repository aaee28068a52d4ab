"""Code points and character classes as numpy arrays: the base of every vectorised text pass.

Python ``str`` indices are code points, so ``codepoints(text)[i]`` is ``text[i]`` and every
offset computed on these arrays is a valid span offset.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .cache import text_cache

WS = np.uint8(1)  # whitespace
ALNUM = np.uint8(2)  # letters and digits of space-separated scripts
CJK = np.uint8(4)  # ideographs, kana, hangul: one "word" per character
PUNCT = np.uint8(8)  # punctuation and symbols
MARK = np.uint8(16)  # combining marks, joiners, variation selectors: never cut before these
SURR_HI = np.uint8(32)  # high surrogate: never cut after it

_MAX = 0x110000

_RANGES: dict[int, list[tuple[int, int]]] = {
    int(WS): [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
              (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)],
    int(ALNUM): [(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A), (0xAA, 0xAA), (0xB5, 0xB5), (0xBA, 0xBA),
                 (0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0x2FF), (0x370, 0x3FF), (0x400, 0x52F),
                 (0x531, 0x58F), (0x5D0, 0x5EA), (0x620, 0x64A), (0x660, 0x669), (0x900, 0xDFF),
                 (0xE00, 0xE7F), (0x10A0, 0x10FF), (0x1E00, 0x1FFF), (0xFF10, 0xFF19),
                 (0xFF21, 0xFF3A), (0xFF41, 0xFF5A)],
    int(CJK): [(0x2E80, 0x2FDF), (0x3005, 0x3007), (0x3021, 0x3029), (0x3040, 0x30FF), (0x3100, 0x31FF),
               (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF),
               (0x20000, 0x3FFFF)],
    int(MARK): [(0x300, 0x36F), (0x483, 0x489), (0x591, 0x5BD), (0x64B, 0x65F), (0x1AB0, 0x1AFF),
                (0x1DC0, 0x1DFF), (0x200C, 0x200D), (0x20D0, 0x20FF), (0xFE00, 0xFE0F), (0xFE20, 0xFE2F),
                (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F), (0xE0100, 0xE01EF), (0xDC00, 0xDFFF)],
    int(SURR_HI): [(0xD800, 0xDBFF)],
}


@lru_cache(maxsize=1)
def class_table() -> np.ndarray:
    """A uint8 flag per code point (1.1 MB, built once)."""
    table = np.zeros(_MAX, dtype=np.uint8)
    for flag, ranges in _RANGES.items():
        for lo, hi in ranges:
            table[lo : hi + 1] |= flag
    # Everything printable that is neither space, letter, ideograph nor mark counts as punctuation/symbol.
    plain = (table & (WS | ALNUM | CJK | MARK | SURR_HI)) == 0
    plain[:0x20] = False
    table |= plain.view(np.uint8) * PUNCT  # arithmetic, not a mask over a million entries
    return table


@text_cache(maxsize=8)
def codepoints(text: str) -> np.ndarray:
    """The code points of ``text`` as a read-only uint32 array (cached: str hashes are cached too)."""
    arr = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return arr


def classes(text: str) -> np.ndarray:
    """Per-character class flags of ``text`` (see the module constants)."""
    return _classes_cached(text)


_BLOCK = 1 << 18


@text_cache(maxsize=8)
def _classes_cached(text: str) -> np.ndarray:
    # a cache-sized block at a time: the index conversion stays in cache (about 2x a single take)
    cp = codepoints(text)
    table = class_table()
    out = np.empty(cp.size, dtype=np.uint8)
    for a in range(0, cp.size, _BLOCK):
        np.take(table, cp[a : a + _BLOCK], out=out[a : a + _BLOCK])
    out.flags.writeable = False
    return out


def cut_allowed(text: str, start: int = 0, end: int | None = None) -> np.ndarray:
    """``ok[k]`` is True when a cut at offset ``start + k`` (between the characters before and at
    it) keeps every user-perceived character whole: not before a combining mark or joiner, not
    inside a surrogate pair, not inside CRLF, not after a ZWJ. The region's own edges are always
    allowed. Only ``[start, end)`` is examined, so callers pay for the region, not the text."""
    end = len(text) if end is None else end
    cp = codepoints(text)[start:end]
    n = end - start
    ok = np.ones(n + 1, dtype=bool)
    if n > 1:
        ok[1:n] = pair_cut_allowed(cp, class_table()[cp])
    return ok


def pair_cut_allowed(cp: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """For code points ``cp`` and their classes ``cls`` (n each), ``ok[k]`` (n-1) is True when a cut
    between ``cp[k]`` and ``cp[k+1]`` keeps every user-perceived character whole (the rule of
    :func:`cut_allowed`)."""
    ok = (cls[1:] & MARK) == 0
    ok &= (cls[:-1] & SURR_HI) == 0
    ok &= ~((cp[:-1] == 0x0D) & (cp[1:] == 0x0A))
    ok &= cp[:-1] != 0x200D
    return ok

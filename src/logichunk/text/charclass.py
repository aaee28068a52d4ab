"""Code points and character classes as numpy arrays: the base of every vectorised text pass.

Python ``str`` indices are code points, so ``codepoints(text)[i]`` is ``text[i]`` and every
offset computed on these arrays is a valid span offset.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import numpy as np

from . import _marks
from .cache import text_cache

WS = np.uint8(1)  # whitespace
ALNUM = np.uint8(2)  # letters and digits of space-separated scripts
CJK = np.uint8(4)  # ideographs, kana, hangul: one "word" per character
PUNCT = np.uint8(8)  # punctuation and symbols
MARK = np.uint8(16)  # combining marks, joiners, variation selectors: never cut before these
SURR_HI = np.uint8(32)  # high surrogate: never cut between it and a low one

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
    # every combining mark (Mn, Mc, Me: accents, viramas, vowel signs, dakuten, keycaps, variation
    # selectors), the joiners, emoji skin tones, emoji tag characters, and the vowel and final
    # jamo of decomposed Hangul: each belongs to the character before it
    int(MARK): [*_marks.RANGES, (0x200C, 0x200D), (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F),
                (0x1160, 0x11FF), (0xD7B0, 0xD7FF)],
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
    """The code points of ``text`` as a read-only uint32 array (cached). Read through numpy's own string
    array (a copy of the characters, lone surrogates included), not a UTF-32 encoding: the codec checks
    and converts character by character, seven times the instructions on a two-byte-wide text."""
    if text:
        try:  # (0-d, dtype '<U' len(text): each character one uint32; empty, not zeroed: the copy fills it)
            arr = np.empty((), dtype=np.dtype(("U", len(text))))
            arr[()] = text
        except (ValueError, OverflowError, TypeError):  # (numpy 1.x: an item of 2 GB or more)
            return encoded_codepoints(text)
        if arr.dtype.itemsize == 4 * len(text):
            out = np.frombuffer(arr, dtype=np.uint32)
            out.flags.writeable = False
            return out
    return encoded_codepoints(text)


def encoded_codepoints(text: str) -> np.ndarray:
    """:func:`codepoints` by the UTF-32 codec (the reference its faster reading is tested against, and the
    reading of an empty text)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


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
    it) keeps every user-perceived character whole: not before a combining mark, joiner or
    vowel/final jamo, not after a leading jamo that continues, not inside a surrogate pair, CRLF
    or a flag (regional indicators pair up from the start of their run), not after a ZWJ but
    before a space, line break, punctuation or control character (what it cannot join). The
    region's own edges are always allowed. Only ``[start, end)`` is examined, so callers pay for
    the region, not the text (a region should start at an allowed cut)."""
    end = len(text) if end is None else end
    cp = codepoints(text)[start:end]
    n = end - start
    ok = np.ones(n + 1, dtype=bool)
    if n > 1:
        ok[1:n] = pair_cut_allowed(cp, class_table()[cp])
    return ok


def zwj_joins(after: np.ndarray) -> np.ndarray:
    """Whether a joiner (U+200D) joins each code point of ``after`` that follows one, so no cut falls between
    them: what may follow it (an emoji, a letter of a conjunct), not a line break, a space, punctuation or a
    control character, before which a cut keeps every character whole (a rare case, read per joiner:
    "x\u200d\n" at a 2-character limit was one 3-character chunk)."""
    return np.array([unicodedata.category(chr(int(c)))[0] not in "PZC" for c in after.tolist()], dtype=bool)


def pair_cut_allowed(cp: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """For code points ``cp`` and their classes ``cls`` (n each), ``ok[k]`` (n-1) is True when a cut
    between ``cp[k]`` and ``cp[k+1]`` keeps every user-perceived character whole (the rule of
    :func:`cut_allowed`)."""
    a, b = cp[:-1], cp[1:]
    ok = (cls[1:] & MARK) == 0
    ok &= ~(((cls[:-1] & SURR_HI) != 0) & (b >= 0xDC00) & (b <= 0xDFFF))  # a lone surrogate may be cut
    ok &= ~((a == 0x0D) & (b == 0x0A))
    zwj = np.flatnonzero(a == 0x200D)
    if zwj.size:
        ok[zwj[zwj_joins(b[zwj])]] = False
    # a leading Hangul jamo joins a following leading/vowel jamo or a precomposed syllable
    lead = ((a >= 0x1100) & (a <= 0x115F)) | ((a >= 0xA960) & (a <= 0xA97C))
    if lead.any():
        ok &= ~(lead & (((b >= 0x1100) & (b <= 0x115F)) | ((b >= 0xAC00) & (b <= 0xD7A3)) | ((b >= 0xA960) & (b <= 0xA97C))))
    # regional indicators make flags two by two: no cut after the 1st, 3rd, ... of a run
    ri = (cp >= 0x1F1E6) & (cp <= 0x1F1FF)
    if ri.any():
        idx = np.arange(cp.size)
        last_other = np.maximum.accumulate(np.where(ri, -1, idx))
        odd = (idx - last_other) % 2 == 1  # position within its run, counted from 1, is odd
        ok &= ~(ri[:-1] & ri[1:] & odd[:-1])
    return ok

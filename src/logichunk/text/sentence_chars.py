"""The characters the sentence rules know, as tables built once: the terminators and line
terminators with their candidate kinds (``_K_*``), the closing and opening quotes and brackets,
the marks that continue a sentence, and one flag per code point (``_F_*``: whitespace, CJK, case,
digit, closer, opener, ...). The splitter (:mod:`.sentences`), the search for candidates
(:mod:`.end_candidates`), the abbreviation test (:mod:`.abbreviations`) and the line classifier
(:mod:`.line_kinds`) all read the same table, so it lives below them all."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .charclass import CJK, MARK, WS, class_table

_ZH_NUMERALS = "〇零一二三四五六七八九十"
_CLOSERS = "\"'”’」』）】》〉〕〗〙〛﹂﹄)]}›»"
_OPENERS = "\"'“‘「『（【《〈〔〖〘〚﹁﹃([{‹«¿¡"
_CONT = ",;:，、：︰"
#: what ends or continues a sentence: a line that ends so is prose (or a lead-in), not a title
_PROSE_END = "。！？；：，、.!?;:,…"
#: the question marks among them: a numbered line that ends with one may still be a heading
#: (``1.2. What is this spec?``)
_QUESTION_MARKS = "?？"

# candidate kinds: bit flags for terminator runs, plain codes for line terminators
_K_DOT, _K_Q, _K_ZH, _K_FWDOT, _K_ELL = 1, 2, 4, 8, 16
_K_NL, _K_CR, _K_NL2 = 32, 64, 128
_ASCII_CAND = {".": _K_DOT, "\n": _K_NL, "!": _K_Q, "?": _K_Q, "\r": _K_CR, "\x0b": _K_NL, "\x0c": _K_NL2}
_HIGH_CAND = {
    "。": _K_ZH, "！": _K_ZH, "？": _K_ZH, "；": _K_ZH, "｡": _K_ZH, "．": _K_FWDOT,
    "…": _K_ELL, "‥": _K_ELL, "‼": _K_Q, "⁇": _K_Q, "⁈": _K_Q, "⁉": _K_Q,
    "\x85": _K_NL, "\u2028": _K_NL, "\u2029": _K_NL2,
}
_ALL_CAND = {**_ASCII_CAND, **_HIGH_CAND}
_CAND_CODES = np.array(sorted(ord(c) for c in _ALL_CAND), dtype=np.uint32)
_CAND_KINDS = np.array([_ALL_CAND[chr(c)] for c in _CAND_CODES.tolist()], dtype=np.uint8)
_HIGH_CODES = np.array(sorted(ord(c) for c in _HIGH_CAND), dtype=np.uint32)

# per-code-point flags used here (uint16 table, built once)
_F_WS, _F_CJK, _F_MARK, _F_LOWER, _F_UPPER, _F_DIGIT = 1, 2, 4, 8, 16, 32
_F_CLOSE, _F_OPEN, _F_CONT, _F_TOK, _F_CJKP, _F_ZHNUM, _F_TERM = 64, 128, 256, 512, 1024, 2048, 4096


@lru_cache(maxsize=1)
def _flags() -> np.ndarray:
    ct = class_table()
    by_class = np.zeros(256, dtype=np.uint16)  # class flags -> these flags, then one lookup
    for cls, flag in ((WS, _F_WS), (CJK, _F_CJK), (MARK, _F_MARK)):
        by_class[(np.arange(256) & cls) != 0] |= flag
    fl = np.take(by_class, ct)
    fl[0xDC00:0xE000] |= _F_MARK  # no sentence starts on a low surrogate (paired or not)
    low = np.fromiter((chr(i).islower() for i in range(0x2000)), dtype=bool, count=0x2000)
    up = np.fromiter((chr(i).isupper() for i in range(0x2000)), dtype=bool, count=0x2000)
    fl[:0x2000][low] |= _F_LOWER
    fl[:0x2000][up] |= _F_UPPER
    fl[0xFF41:0xFF5B] |= _F_LOWER
    fl[0xFF21:0xFF3B] |= _F_UPPER
    fl[0x30:0x3A] |= _F_DIGIT
    fl[0xFF10:0xFF1A] |= _F_DIGIT
    for chars, flag in ((_CLOSERS, _F_CLOSE), (_OPENERS, _F_OPEN), (_CONT, _F_CONT)):
        fl[[ord(c) for c in chars]] |= flag
    fl[0x41:0x5B] |= _F_TOK
    fl[0x61:0x7B] |= _F_TOK
    fl[0x2E] |= _F_TOK
    for lo, hi in ((0x3001, 0x303F), (0xFF01, 0xFF0F), (0xFF1A, 0xFF20), (0xFF3B, 0xFF40), (0xFF5B, 0xFF65)):
        fl[lo : hi + 1] |= _F_CJKP
    fl[[ord(c) for c in _ZH_NUMERALS]] |= _F_ZHNUM
    fl[[ord(c) for c, k in _ALL_CAND.items() if k < _K_NL]] |= _F_TERM
    fl.flags.writeable = False
    return fl


class _ScalarFlags:
    """``flags[ord(ch)]`` as plain Python ints: a list for the BMP (fast), the table beyond."""

    __slots__ = ("bmp", "table")

    def __init__(self, table: np.ndarray) -> None:
        self.bmp: list[int] = table[:0x10000].tolist()
        self.table = table

    def __getitem__(self, c: int) -> int:
        return self.bmp[c] if c < 0x10000 else int(self.table[c])


@lru_cache(maxsize=1)
def _scalar_flags() -> _ScalarFlags:
    return _ScalarFlags(_flags())

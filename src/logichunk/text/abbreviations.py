"""When a single ``.`` does not end a sentence: the abbreviation lists and the test the splitter
(:mod:`.sentences`) runs on each such dot, in bulk (:func:`_abbreviated`) and one dot at a time
(:func:`_abbreviation`, the scalar path).

A single ``.`` is not an end after a known abbreviation (``Dr. Mr. Mrs. Prof. St. Inc. Ltd. vs. Fig.
Jan.`` ..., see ``ABBREVIATIONS``), after a single letter (initials: ``J. K. Rowling``), after
letter-dot sequences (``U.S.``, ``a.m.``, ``e.g.``), after ``No. Art. Sec.``... when a digit
follows (``NUMBER_ABBREVIATIONS``), and after ``etc. incl. min.``... when a lower-case word follows
(``CONTINUING_ABBREVIATIONS``). The lists can be read and extended here without the splitter."""

from __future__ import annotations

import re

import numpy as np

from .. import native
from ._arrays import _member
from .sentence_chars import _F_CJK, _F_CJKP, _F_CLOSE, _F_OPEN, _F_TOK, _F_WS, _ScalarFlags

__all__ = ["ABBREVIATIONS", "CONTINUING_ABBREVIATIONS", "NUMBER_ABBREVIATIONS"]


#: Words that a single ``.`` after them never ends (case-sensitive, without the dot). Single
#: letters and letter-dot sequences (``U.S``, ``e.g``, ``a.m``) are recognised without a list.
ABBREVIATIONS: frozenset[str] = frozenset(
    # titles and ranks
    "Mr Mrs Ms Mx Dr Drs Prof Profs Sr Jr St Mt Ft Rev Hon Gen Col Capt Cpt Lt Sgt Maj Cmdr Adm Gov "
    "Sen Rep Pres Supt Det Insp Messrs Mme Mlle Esq Rt "
    # Latin and common
    "vs Vs cf Cf viz Viz approx Approx al ca "
    # organisations and addresses
    "Inc Ltd Co Corp Bros Dept Univ Assn Ave Blvd Rd "
    # references
    "Fig Figs fig figs Vol Vols vol vols Eq Eqs eq eqs Ref Refs ref refs pp Ph.D "
    # months
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec "
    # the titles and firms as transcripts, hearings, scripts and letterheads write them in capitals
    # (``DR. MORGAN:`` over a witness's answer), and firms as tables and filings write them in lower case
    # (``cadence design systems inc. | 100.00``)
    "MR MRS MS DR DRS PROF SR JR ST MT REV HON GEN COL CAPT LT SGT MAJ CMDR ADM GOV SEN REP PRES DET INSP "
    "INC LTD CORP BROS DEPT UNIV VS inc ltd corp bros".split()
)

#: Words that a single ``.`` after them does not end when a digit follows (``No. 5``, ``Art. 12``).
NUMBER_ABBREVIATIONS: frozenset[str] = frozenset(
    "No Nos no nos Nr nr Art art Sec sec Ch ch Chap chap Pt pt Op op Ex ex Tab tab Para para "
    "NO NOS NR ART SEC CHAP PARA".split()
)

#: Words that a single ``.`` after them does not end when a lower-case word follows (``etc. and``,
#: ``10 min. later``); after any other word, ``. `` + lower case ends the sentence (``2007. the``).
CONTINUING_ABBREVIATIONS: frozenset[str] = frozenset(
    "etc incl excl esp resp ibid cit ed eds min max avg est govt tel ext misc orig prev sq ft yr yrs mo "
    "mos wk wks hr hrs sec cont dist div lit pl abbr dept approx".split()
)


def _key(token: str) -> int:
    """Token key as computed in bulk by :func:`_abbreviated`: code points, last one first."""
    k = 0
    for ch in reversed(token):
        k = k * 128 + ord(ch)
    return k


_MAX_TOKEN = 7
_ABBR_KEYS = np.array(sorted(_key(t) for t in ABBREVIATIONS if len(t) <= _MAX_TOKEN), dtype=np.int64)
_NUM_ABBR_KEYS = np.array(sorted(_key(t) for t in NUMBER_ABBREVIATIONS if len(t) <= _MAX_TOKEN), dtype=np.int64)
_CONT_ABBR_KEYS = np.array(sorted(_key(t) for t in CONTINUING_ABBREVIATIONS if len(t) <= _MAX_TOKEN),
                           dtype=np.int64)
_ABBR_PAIRS = np.array(sorted({ord(t[-2]) * 128 + ord(t[-1])
                               for t in ABBREVIATIONS | NUMBER_ABBREVIATIONS | CONTINUING_ABBREVIATIONS
                               if len(t) >= 2}), dtype=np.int64)


def _abbreviated(
    cp: np.ndarray, fl: np.ndarray, dots: np.ndarray, digit_next: np.ndarray, lower_next: np.ndarray
) -> np.ndarray:
    """True where the ``.`` at ``dots`` closes an abbreviation or an initial (``digit_next``,
    ``lower_next``: what the next word starts with).

    A quick pass on the two characters before each dot settles single letters and rules out
    every word that ends unlike any listed abbreviation; the rest get the full token check. (In C where it is
    compiled: one pass over the dots, :func:`logichunk.native.abbreviated`.)"""
    sep = _F_WS | _F_OPEN | _F_CLOSE | _F_CJK | _F_CJKP
    fast = native.abbreviated(cp, fl, _F_TOK, sep, dots, digit_next, lower_next,
                              (_ABBR_KEYS, _NUM_ABBR_KEYS, _CONT_ABBR_KEYS, _ABBR_PAIRS))
    if fast is not None:
        return fast
    c1 = cp[np.maximum(dots - 1, 0)].astype(np.int64)
    c2 = cp[np.maximum(dots - 2, 0)].astype(np.int64)
    tok1 = (dots >= 1) & ((fl[c1] & _F_TOK) != 0)
    tok2 = tok1 & (dots >= 2) & ((fl[c2] & _F_TOK) != 0)
    # one letter standing alone: an initial
    out = tok1 & ~tok2 & ((dots < 2) | ((fl[c2] & sep) != 0))
    # longer tokens: only those ending like a listed abbreviation or a letter-dot sequence
    maybe = np.flatnonzero(tok2 & ((c2 == 0x2E) | _member(c2 * 128 + c1, _ABBR_PAIRS)))
    if maybe.size:
        out[maybe] = _abbreviated_full(cp, fl, dots[maybe], digit_next[maybe], lower_next[maybe])
    return out


def _abbreviated_full(
    cp: np.ndarray, fl: np.ndarray, dots: np.ndarray, digit_next: np.ndarray, lower_next: np.ndarray
) -> np.ndarray:
    key = np.zeros(dots.size, dtype=np.int64)
    length = np.zeros(dots.size, dtype=np.int64)
    alive = np.ones(dots.size, dtype=bool)
    chars = []
    for j in range(1, _MAX_TOKEN + 2):
        p = dots - j
        c = cp[np.maximum(p, 0)]
        alive &= (p >= 0) & ((fl[c] & _F_TOK) != 0)
        chars.append(np.where(alive, c, 0).astype(np.int64))
        if j <= _MAX_TOKEN:
            key = np.where(alive, key * 128 + chars[-1], key)
        length += alive
        if not alive.any():
            break
    # a token must stand alone (at the start, after a space, a bracket, a quote or Chinese text)
    # and be short: "x!i." in a URL or "Español." is no abbreviation
    before = dots - length - 1
    alone = (length >= 1) & (length <= _MAX_TOKEN)
    sep = _F_WS | _F_OPEN | _F_CLOSE | _F_CJK | _F_CJKP
    alone &= (before < 0) | ((fl[cp[np.maximum(before, 0)]] & sep) != 0)
    letter = [(c >= 0x41) & (c != 0x2E) for c in chars]  # token chars are ASCII letters or '.'
    out = _member(key, _ABBR_KEYS)
    out |= (length == 1) & letter[0]
    out |= _member(key, _NUM_ABBR_KEYS) & digit_next
    out |= _member(key, _CONT_ABBR_KEYS) & lower_next
    # letter-dot sequences: U.S, e.g, a.m, U.S.A
    for size in (3, 5, 7):
        if len(chars) < size:
            break
        seq = length == size
        for k in range(size):
            seq &= letter[k] if k % 2 == 0 else (chars[k] == 0x2E)
        out |= seq
    # a token never starts with a dot (".Dr." is no title)
    first_dot = np.zeros(dots.size, dtype=bool)
    for k in range(min(len(chars), _MAX_TOKEN)):
        first_dot |= (length == k + 1) & (chars[k] == 0x2E)
    return out & alone & ~first_dot


def _abbreviation(text: str, dot: int, digit_next: bool, lower_next: bool, fl: _ScalarFlags) -> bool:
    """Scalar twin of :func:`_abbreviated` for one ``.`` at ``dot``."""
    j = dot - 1
    while j >= 0 and dot - j <= _MAX_TOKEN + 1 and text[j] in _TOKEN_CHARS:
        j -= 1
    length = dot - 1 - j
    if not 1 <= length <= _MAX_TOKEN:
        return False
    if j >= 0 and not fl[ord(text[j])] & (_F_WS | _F_OPEN | _F_CLOSE | _F_CJK | _F_CJKP):
        return False
    tok = text[j + 1 : dot]
    if tok[0] == ".":
        return False
    if length == 1 or tok in ABBREVIATIONS or (digit_next and tok in NUMBER_ABBREVIATIONS):
        return True
    if lower_next and tok in CONTINUING_ABBREVIATIONS:
        return True
    return length in (3, 5, 7) and _LETTER_DOTS.fullmatch(tok) is not None


_LETTER_DOTS = re.compile(r"[A-Za-z](?:\.[A-Za-z])+")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.")

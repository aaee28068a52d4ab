"""Sentence splitting with exact spans, for Chinese, English, mixed text and Markdown.

Contract:

- ``split_sentences(text) -> SentenceSpans`` whose ``starts``/``ends`` (int64 numpy arrays) tile
  ``text`` exactly: starts[0] == 0, ends[-1] == len(text), starts[i+1] == ends[i], no empty span.
  Whitespace (newlines included) belongs to the sentence before it; whitespace at the very start
  of the text belongs to the first sentence, so every sentence but the first starts on a
  non-space character. Empty text gives zero sentences, a text of only whitespace one.
- ``breaks`` (int8, one per gap, len n-1): structural strength of the gap after sentence i:
  0 = inside a paragraph, 1 = line break, 2 = blank line (paragraph), 3 = hard break (Markdown
  heading, code fence, horizontal rule, list item, table).

Rules:

- Every line break ends a sentence (``\\n``, ``\\r\\n``, ``\\r``, ``\\v``, ``\\f``, U+0085, U+2028,
  U+2029). One break is ``BREAK_LINE``; two or more (a blank line), a form feed or U+2029 is
  ``BREAK_PARAGRAPH``.
- Chinese ``。！？；｡`` and full-width ``．`` (not between digits) always end a sentence, with any
  run of further marks (``！？``, ``……``) and the closing quotes/brackets right after them
  (``”’」』）】》"')]``..., up to four), unless a comma, colon or ``、`` follows. ``…``/``‥`` end
  a sentence when they follow Chinese text.
- English ``. ! ?`` end a sentence only when followed by whitespace and a character that is not
  ``, ; :`` or another mark (or directly by a CJK character, or by the end of the text); so
  decimals, versions, URLs, e-mail addresses and ``a.b`` never split. ``!`` and ``?`` go on before a
  lower-case word (``"Why?" he asked``); a single ``.`` does too after a closing quote or bracket
  and after the ``CONTINUING_ABBREVIATIONS`` (``etc. and``), but otherwise a lower-case start is a
  new sentence (lower-cased text, chat logs). A single ``.`` is not an end after a known
  abbreviation (``Dr. Mr. Mrs. Prof. St. Inc. Ltd. vs. Fig. Jan.`` ..., see ``ABBREVIATIONS``),
  after a single letter (initials: ``J. K. Rowling``), after letter-dot sequences (``U.S.``,
  ``a.m.``, ``e.g.``), and after ``No. Art. Sec.``... when a digit follows; a closing bracket or
  quote after the dot (``(see Fig.) Next``) ends the sentence anyway. A dot between two digits
  or two Chinese numerals is a decimal point (``３．１４``, ``六一．五``).
  ``..``/``...``/``…`` end a sentence only before an upper-case letter, a digit, a CJK character or
  an opening quote/bracket.
- Markdown (lines, after their indentation): ATX headings (``# ...``), setext headings (a text
  line over ``===``/``---``), table rows (``|``...) and horizontal rules are single units (never
  split inside); fenced code (``` or ~~~, paired as in CommonMark; an unclosed fence runs to the
  end of the text) is split only at its line ends, each line one unit. The gap before a heading,
  a fence, a horizontal rule, a list item (``-``, ``*``, ``+``, ``•``, ``1.``, ``1)``, ``1、``) or
  the first row of a table, and the gap after a fence, a rule or a table, is ``BREAK_HARD`` — except
  right after a heading, which belongs to what follows it (a list, table or fence under a heading
  starts with the gap the blank lines give it, not a hard one). The
  ``.`` of an ordered-list marker never ends a sentence.
- No cut ever falls before a combining mark, joiner, variation selector or low surrogate (a line
  break followed by one does not end the sentence).

Two implementations give identical results (property tests check it on random text): a scalar
one for short texts with few marks (a few microseconds per sentence, no fixed cost) and a
vectorised one for the rest, where numpy finds the candidate marks block by block on the
code-point array and judges their neighbourhoods in bulk; its Python loops run only over fence
lines, rule candidates and whitespace runs longer than eight characters.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..types import Sentence, Span
from .charclass import CJK, MARK, WS, class_table, codepoints

BREAK_NONE, BREAK_LINE, BREAK_PARAGRAPH, BREAK_HARD = 0, 1, 2, 3

__all__ = [
    "ABBREVIATIONS", "BREAK_HARD", "BREAK_LINE", "BREAK_NONE", "BREAK_PARAGRAPH", "CONTINUING_ABBREVIATIONS",
    "NUMBER_ABBREVIATIONS", "SMALL_MARKS", "SMALL_TEXT", "SentenceSpans", "fence_spans", "join_units", "sentences",
    "split_lines", "split_sentences",
]


@dataclass(frozen=True, slots=True, eq=False)
class SentenceSpans:
    """All sentences of one text as arrays (fast), with ``Sentence`` objects on demand."""

    text: str
    starts: np.ndarray
    ends: np.ndarray
    breaks: np.ndarray

    def __len__(self) -> int:
        return int(self.starts.size)

    def __getitem__(self, i: int) -> Sentence:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return Sentence(Span(int(self.starts[i]), int(self.ends[i])), i)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def texts(self) -> list[str]:
        t = self.text
        return [t[s:e] for s, e in zip(self.starts.tolist(), self.ends.tolist(), strict=True)]


# --------------------------------------------------------------------------- vocabulary

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
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec".split()
)

#: Words that a single ``.`` after them does not end when a digit follows (``No. 5``, ``Art. 12``).
NUMBER_ABBREVIATIONS: frozenset[str] = frozenset(
    "No Nos no nos Nr nr Art art Sec sec Ch ch Chap chap Pt pt Op op Ex ex Tab tab Para para".split()
)

#: Words that a single ``.`` after them does not end when a lower-case word follows (``etc. and``,
#: ``10 min. later``); after any other word, ``. `` + lower case ends the sentence (``2007. the``).
CONTINUING_ABBREVIATIONS: frozenset[str] = frozenset(
    "etc incl excl esp resp ibid cit ed eds min max avg est govt tel ext misc orig prev sq ft yr yrs mo "
    "mos wk wks hr hrs sec cont dist div lit pl abbr dept approx".split()
)

_ZH_NUMERALS = "〇零一二三四五六七八九十"
_CLOSERS = "\"'”’」』）】》〉〕〗〙〛﹂﹄)]}›»"
_OPENERS = "\"'“‘「『（【《〈〔〖〘〚﹁﹃([{‹«¿¡"
_CONT = ",;:，、：︰"

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

_WS_CLASS = "\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"  # == charclass WS
_WS_RE = re.compile(f"[{_WS_CLASS}]*")
_FENCE_RE = re.compile(r"(`{3,}|~{3,})(.*)", re.DOTALL)
_SETEXT_RE = re.compile(r"(?:=+|-+)[ \t\r]*")
_HR_RE = re.compile(r"([-*_])[ \t]*(?:\1[ \t]*){2,}[ \t\r]*|={3,}[ \t\r]*")
_WS_STEPS = 8

_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_I64.flags.writeable = False
_EMPTY_I8 = np.zeros(0, dtype=np.int8)
_EMPTY_I8.flags.writeable = False


# --------------------------------------------------------------------------- helpers


_BLOCK = 1 << 18


def _units(text: str) -> np.ndarray:
    """The code points of ``text`` in the narrowest exact dtype: uint8 for ASCII, uint16 when no
    character lies outside the BMP, else uint32. ``units[i]`` is ``ord(text[i])``."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    cp = codepoints(text)  # shared with the signals (cached), narrowed when it is cheaper to scan
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


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``np.isin`` for a small sorted set, without its sorting overhead."""
    if values.size == 0 or sorted_set.size == 0:
        return np.zeros(values.shape, dtype=bool)
    i = np.searchsorted(sorted_set, values)
    return sorted_set[np.minimum(i, sorted_set.size - 1)] == values


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    a = np.sort(a)
    if a.size > 1:
        keep = np.empty(a.size, dtype=bool)
        keep[0] = True
        np.not_equal(a[1:], a[:-1], out=keep[1:])
        a = a[keep]
    return a


def _at(cp: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``cp[pos]`` with positions at or past the end reading as 0 (NUL: no flag set)."""
    n = cp.size
    out = cp[np.minimum(pos, n - 1)]
    return np.where(pos < n, out, 0)


def _skip_ws(text: str, cp: np.ndarray, fl: np.ndarray, q: np.ndarray) -> np.ndarray:
    """For each offset (sorted), the first offset at or after it that is not whitespace (or
    len(text))."""
    n = cp.size
    # queries next to each other inside one whitespace run share their answer: solve the last
    # query of each such chain only (a text of a million newlines is one chain)
    if q.size > 1:
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
    """:func:`_skip_ws` for sorted offsets."""
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


def _abbreviated(
    cp: np.ndarray, fl: np.ndarray, dots: np.ndarray, digit_next: np.ndarray, lower_next: np.ndarray
) -> np.ndarray:
    """True where the ``.`` at ``dots`` closes an abbreviation or an initial (``digit_next``,
    ``lower_next``: what the next word starts with).

    A quick pass on the two characters before each dot settles single letters and rules out
    every word that ends unlike any listed abbreviation; the rest get the full token check."""
    sep = _F_WS | _F_OPEN | _F_CLOSE | _F_CJK | _F_CJKP
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


# --------------------------------------------------------------------------- Markdown lines


@dataclass(slots=True)
class _Lines:
    hard: np.ndarray  # offsets whose gap before is a hard break
    lo: np.ndarray  # sorted, disjoint [lo, hi) ranges in which no terminator may end a sentence
    hi: np.ndarray


_NO_LINES = _Lines(_EMPTY_I64, _EMPTY_I64, _EMPTY_I64)

_MD_CHARS = "#`~-*_+=|•‣◦"
_HR_CHARS = "-*_="
_BULLET_CHARS = "-*+•‣◦"
_ORDERED_CHARS = ".)、．）"
_MD_START = np.array(sorted(ord(c) for c in _MD_CHARS), dtype=np.uint32)
_HR_START = np.array(sorted(ord(c) for c in _HR_CHARS), dtype=np.uint32)
_BULLETS = np.array(sorted(ord(c) for c in _BULLET_CHARS), dtype=np.uint32)
_ORDERED_MARKS = np.array(sorted(ord(c) for c in _ORDERED_CHARS), dtype=np.uint32)
_MD_START_SET = frozenset(_MD_CHARS + "0123456789")
_HR_SET = frozenset(map(ord, _HR_CHARS))
_BULLET_SET = frozenset(map(ord, _BULLET_CHARS))
_ORDERED_SET = frozenset(map(ord, _ORDERED_CHARS))


@dataclass(slots=True)
class _Kinds:
    """What the lines that may be Markdown look like (``sel``: their indices in the line list)."""

    sel: np.ndarray
    c0: np.ndarray
    fence: np.ndarray
    heading: np.ndarray
    rule: np.ndarray
    bullet: np.ndarray
    ordered: np.ndarray
    table: np.ndarray
    digits: np.ndarray
    mark: np.ndarray


def _classify_vector(text: str, cp: np.ndarray, fl: np.ndarray, first: np.ndarray, end: np.ndarray) -> _Kinds | None:
    n = cp.size
    c0 = cp[first]
    sel = np.flatnonzero(_member(c0, _MD_START) | ((c0 >= 0x30) & (c0 <= 0x39)))
    if sel.size == 0:
        return None
    f, e, c0 = first[sel], end[sel], c0[sel].astype(np.int64)

    def g(k):  # character k after the line start, 0 past the line end
        p = f + k
        return np.where(p < e, cp[np.minimum(p, n - 1)], 0).astype(np.int64)

    def ws(c):
        return (c == 0) | ((fl[c] & _F_WS) != 0)

    c1, c2 = g(1), g(2)
    fence = ((c0 == 0x60) | (c0 == 0x7E)) & (c1 == c0) & (c2 == c0)
    # ATX heading: 1-6 '#' then a space or the end of the line
    hashes = np.zeros(sel.size, dtype=np.int64)
    alive = c0 == 0x23
    if alive.any():
        for k in range(7):
            alive = alive & (g(k) == 0x23)
            hashes += alive
    heading = (hashes >= 1) & (hashes <= 6) & ws(g(np.minimum(hashes, 6)))
    # horizontal rule candidates, confirmed by a regex
    rule = _member(c0, _HR_START) & (((c1 == c0) & (c2 == c0)) | (((c1 == 0x20) | (c1 == 0x09)) & (c2 == c0)))
    rule &= (c0 != 0x3D) | ((c1 == c0) & (c2 == c0))
    for i in np.flatnonzero(rule).tolist():
        if _HR_RE.fullmatch(text, int(f[i]), int(e[i])) is None:
            rule[i] = False
    bullet = _member(c0, _BULLETS) & ws(c1) & ~rule
    # ordered list: 1-9 digits, then '.', ')', '、'... not followed by a digit
    digits = np.zeros(sel.size, dtype=np.int64)
    alive = (c0 >= 0x30) & (c0 <= 0x39)
    if alive.any():
        for k in range(10):
            ck = g(k)
            alive &= (ck >= 0x30) & (ck <= 0x39)
            digits += alive
    mark = g(digits)
    after = g(digits + 1)
    ordered = (digits >= 1) & (digits <= 9) & _member(mark, _ORDERED_MARKS)
    ordered &= ~((after >= 0x30) & (after <= 0x39))
    ordered &= ((mark != 0x2E) & (mark != 0x29)) | ws(after) | ((fl[after] & (_F_CJK | _F_UPPER)) != 0)
    table = c0 == 0x7C
    return _Kinds(sel, c0, fence, heading, rule, bullet, ordered, table, digits, mark)


def _classify_scalar(text: str, first: list[int], end: list[int]) -> _Kinds | None:
    """Scalar twin of :func:`_classify_vector`, for short texts."""
    fl = _scalar_flags()
    rows = []
    for li, f in enumerate(first):
        if text[f] not in _MD_START_SET:
            continue
        e = end[li]

        def g(k, f=f, e=e):
            return ord(text[f + k]) if f + k < e else 0

        def ws(c):
            return c == 0 or bool(fl[c] & _F_WS)

        c0, c1, c2 = g(0), g(1), g(2)
        fence = c0 in (0x60, 0x7E) and c1 == c0 and c2 == c0
        hashes = 0
        while c0 == 0x23 and hashes < 7 and g(hashes) == 0x23:
            hashes += 1
        heading = 1 <= hashes <= 6 and ws(g(hashes))
        rule = (c0 in _HR_SET and ((c1 == c0 and c2 == c0) or (c1 in (0x20, 0x09) and c2 == c0))
                and (c0 != 0x3D or (c1 == c0 and c2 == c0)) and _HR_RE.fullmatch(text, f, e) is not None)
        bullet = c0 in _BULLET_SET and ws(c1) and not rule
        digits = 0
        while digits < 10 and 0x30 <= g(digits) <= 0x39:
            digits += 1
        mark, after = g(digits), g(digits + 1)
        ordered = (1 <= digits <= 9 and mark in _ORDERED_SET and not 0x30 <= after <= 0x39
                   and (mark not in (0x2E, 0x29) or ws(after) or bool(fl[after] & (_F_CJK | _F_UPPER))))
        rows.append((li, c0, fence, heading, rule, bullet, ordered, c0 == 0x7C, digits, mark))
    if not rows:
        return None
    cols = list(zip(*rows, strict=True))
    i64 = [np.array(cols[k], dtype=np.int64) for k in (0, 1, 8, 9)]
    b = [np.array(cols[k], dtype=bool) for k in range(2, 8)]
    return _Kinds(i64[0], i64[1], *b, i64[2], i64[3])


def _pair_fences(text: str, starts: Sequence[int], ends: Sequence[int]) -> tuple[list[int], list[int], bool]:
    """Fence lines (the ``[start, end)`` of each line's content, in order) paired as in CommonMark: a
    closer uses the opener's character, at least as many of them, and nothing after; a backtick line
    with backticks in its info string is inline code and opens nothing. Returns the indices of the
    openers and of the closers, and whether the last opener is left open (it runs to the end)."""
    match = _FENCE_RE.match
    openers: list[int] = []
    closers: list[int] = []
    opened, o_char, o_len = -1, "", 0
    for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
        marks, info = match(text, a, b).groups()
        if opened < 0:
            if marks[0] == "`" and "`" in info:
                continue
            opened, o_char, o_len = i, marks[0], len(marks)
        elif marks[0] == o_char and len(marks) >= o_len and not info.strip():
            openers.append(opened)
            closers.append(i)
            opened = -1
    if opened >= 0:
        openers.append(opened)
    return openers, closers, opened >= 0


_FENCE_LINE = re.compile(r"^[ \t]*((?:`{3,}|~{3,})[^\n]*)", re.MULTILINE)


def fence_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each fenced code block of ``text``, from its opening marks to the end of
    its closing line (an unclosed fence runs to the end of the text), paired as the sentence
    splitter pairs them: other chunkers use it to keep code whole where they cut by lines."""
    lines = [(m.start(1), m.end(1)) for m in _FENCE_LINE.finditer(text)]
    if not lines:
        return []
    openers, closers, left_open = _pair_fences(text, [a for a, _ in lines], [b for _, b in lines])
    ends = [lines[c][1] for c in closers] + ([len(text)] if left_open else [])
    return [(lines[o][0], e) for o, e in zip(openers, ends, strict=True)]


def _structure(text: str, first: np.ndarray, end: np.ndarray, nl: np.ndarray, kinds: _Kinds | None) -> _Lines:
    """From line kinds to hard breaks and no-split ranges: fences pair up, setext underlines and
    tables are recognised across lines."""
    if kinds is None:
        return _NO_LINES
    m = first.size
    n = len(text)
    sel, c0 = kinds.sel, kinds.c0
    f, e = first[sel], end[sel]
    heading, rule, bullet, ordered, table = kinds.heading, kinds.rule, kinds.bullet, kinds.ordered, kinds.table
    digits, mark = kinds.digits, kinds.mark

    # fences pair up in order (CommonMark): a closer uses the opener's character, at least as many
    # of them, and nothing after; an opener left open runs to the end of the text
    in_fence = np.zeros(sel.size, dtype=bool)
    hard_lines: list[int] = []  # indices into ``sel`` of fence openers (their gap before is hard)
    hard_after: list[int] = []  # ... and of fence closers (their gap after is hard)
    lo: list[int] = []
    hi: list[int] = []
    if kinds.fence.any():
        f_list, e_list = f.tolist(), e.tolist()
        idx = np.flatnonzero(kinds.fence).tolist()
        openers, closers, left_open = _pair_fences(text, [f_list[i] for i in idx], [e_list[i] for i in idx])
        hard_lines = [idx[k] for k in openers]
        hard_after = [idx[k] for k in closers]
        # mark the fenced lines: +1 at each opener, -1 after each closer
        delta = np.zeros(sel.size + 1, dtype=np.int64)
        delta[hard_lines] += 1
        delta[np.asarray(hard_after, dtype=np.int64) + 1] -= 1
        in_fence = np.cumsum(delta[:-1]) > 0
        lo = [f_list[a] for a in hard_lines]
        hi = [e_list[b] for b in hard_after] + ([n] if left_open else [])
        # lines inside a fence are code, whatever they look like
        plain = ~in_fence
        heading, rule, bullet, ordered, table = heading & plain, rule & plain, bullet & plain, ordered & plain, table & plain
    else:
        rule = rule.copy()

    # setext headings: a line of '=' or '-' right under a paragraph line underlines it
    setext: list[int] = []  # indices into the full line list of the heading text
    under = np.flatnonzero(rule & ((c0 == 0x3D) | (c0 == 0x2D)))
    if under.size:
        taken = np.zeros(m, dtype=bool)
        taken[sel[heading | rule | bullet | ordered | table | in_fence]] = True
        for i in under.tolist():
            li = int(sel[i])
            if li == 0 or taken[li - 1] or _SETEXT_RE.fullmatch(text, int(f[i]), int(e[i])) is None:
                continue
            if int(np.searchsorted(nl, first[li]) - np.searchsorted(nl, first[li - 1])) != 1:
                continue  # a blank line in between: a rule, not an underline
            rule[i] = False
            setext.append(li - 1)

    # tables: hard before the first row and after the last (rows are consecutive lines)
    row = np.zeros(m + 2, dtype=bool)
    row[sel[table] + 1] = True
    hard_full = np.zeros(m + 1, dtype=bool)
    hard_full[:m] |= row[1:-1] & ~row[:-2]
    hard_full[1:] |= row[1:-1] & ~row[2:]
    hard_full[sel[heading | rule | bullet | ordered]] = True
    hard_full[sel[rule] + 1] = True
    if hard_lines:
        hard_full[sel[np.asarray(hard_lines)]] = True
    if hard_after:
        hard_full[sel[np.asarray(hard_after)] + 1] = True
    setext_a = np.asarray(setext, dtype=np.int64)
    hard_full[setext_a] = True
    # a heading belongs to what follows it: the gap after one is never hard, even when a list, a
    # table or a fence follows (else the cut lands between a heading and its content)
    heads = np.concatenate((sel[heading], setext_a))
    after = np.concatenate((sel[heading] + 1, setext_a + 2))
    keep = (after < m) & ~np.isin(after, heads)
    hard_full[after[keep]] = False
    hard = first[np.flatnonzero(hard_full[:m])]

    # ranges never split on punctuation: headings, rules, table rows, fences, list-marker dots
    unit = heading | rule | table
    odot = ordered & ((mark == 0x2E) | (mark == 0xFF0E))
    lo_a = np.concatenate((f[unit], np.asarray(lo, dtype=np.int64), first[setext_a], f[odot] + digits[odot]))
    hi_a = np.concatenate((e[unit], np.asarray(hi, dtype=np.int64), end[setext_a], f[odot] + digits[odot] + 1))
    order = np.argsort(lo_a, kind="stable")
    return _Lines(hard, lo_a[order], hi_a[order])


def _inside(pos: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """True where ``pos`` falls in one of the sorted, disjoint ranges ``[lo, hi)``."""
    if lo.size == 0 or pos.size == 0:
        return np.zeros(pos.size, dtype=bool)
    k = np.searchsorted(lo, pos, side="right") - 1
    kk = np.maximum(k, 0)
    return (k >= 0) & (pos < hi[kk])


# --------------------------------------------------------------------------- the splitter

#: Texts up to this many characters with at most ``SMALL_MARKS`` marks and line breaks take the
#: scalar path (a few microseconds per sentence, no fixed cost); the others the vectorised one
#: (a fixed ~0.3 ms, then far less per sentence). Both give identical results (a property test
#: checks it).
SMALL_TEXT = 32768
SMALL_MARKS = 240

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


def _split_vector(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Sentence starts after the first (sorted offsets) and gap strengths, in bulk."""
    n = len(text)
    cp = _units(text)
    fl = _flags()

    cand = _candidates(text, cp)
    kind = _kind_table(1 << (8 * cp.itemsize) if cp.itemsize < 4 else 0x110000)[cp[cand]]
    is_nl = kind >= _K_NL
    nl = cand[is_nl]
    nl_kind = kind[is_nl]
    crlf = (nl_kind == _K_CR) & (_at(cp, nl + 1) == 0x0A)
    if crlf.any():
        nl, nl_kind = nl[~crlf], nl_kind[~crlf]
    term = cand[~is_nl]
    term_kind = kind[~is_nl]

    # terminator runs: consecutive marks ("?!", "...", "。」" is a run plus a closer)
    if term.size:
        new = np.empty(term.size, dtype=bool)
        new[0] = True
        np.not_equal(term[1:], term[:-1] + 1, out=new[1:])
        rs = np.flatnonzero(new)
        r_start = term[rs]
        r_end = term[np.append(rs[1:], term.size) - 1] + 1
        r_flag = np.bitwise_or.reduceat(term_kind, rs)
        q = r_end.copy()
        idx = np.flatnonzero((fl[_at(cp, q)] & _F_CLOSE) != 0)
        for k in range(4):  # closing quotes and brackets (up to 4) stay with the sentence
            if idx.size == 0:
                break
            q[idx] += 1
            if k < 3:
                idx = idx[(fl[_at(cp, q[idx])] & _F_CLOSE) != 0]
    else:
        r_start = r_end = r_flag = q = _EMPTY_I64

    # the whitespace after the text start, the runs (and their closers), the line terminators
    first = int(_WS_RE.match(text).end())
    w = _skip_ws_each(text, cp, fl, q)
    w_nl = _skip_ws(text, cp, fl, nl + 1)

    # which runs end a sentence
    if q.size:
        xf = fl[_at(cp, w)]
        at_end = w >= n
        spaced = w > q
        cjk_next = (xf & _F_CJK) != 0
        digit_next = (xf & _F_DIGIT) != 0
        lower_next = (xf & _F_LOWER) != 0
        pf = np.where(r_start > 0, fl[cp[np.maximum(r_start - 1, 0)]], 0)
        # a dot between two digits or two Chinese numerals is a decimal point (３．１４, 六一．五)
        number = ~spaced & ((pf & xf & (_F_DIGIT | _F_ZHNUM)) != 0)
        zh = ((r_flag & _K_ZH) != 0) | (((r_flag & _K_FWDOT) != 0) & ~number)
        zh |= ((r_flag & _K_ELL) != 0) & ((pf & (_F_CJK | _F_CJKP)) != 0) & ((r_flag & (_K_DOT | _K_Q)) == 0)
        has_q = (r_flag & _K_Q) != 0
        is_ell = ~has_q & (((r_flag & _K_ELL) != 0) | (r_end - r_start >= 2))
        bare = q == r_end  # no closing quote or bracket after the marks
        # "!" and "?" go on before a lower-case word ("Why?" he asked); a single "." only after an
        # abbreviation, or when a quote or bracket closes first ("hi." and left)
        generic = at_end | (spaced & ((xf & (_F_LOWER | _F_CONT | _F_TERM)) == 0)) | (~spaced & cjk_next)
        dot = at_end | (spaced & ((xf & (_F_CONT | _F_TERM)) == 0) & (~lower_next | bare)) | (~spaced & cjk_next)
        ellipsis = at_end | (spaced & ((xf & (_F_UPPER | _F_CJK | _F_OPEN | _F_DIGIT)) != 0)) | (~spaced & cjk_next)
        ok = np.where(zh, at_end | ((xf & _F_CONT) == 0), np.where(is_ell, ellipsis, np.where(has_q, generic, dot)))
        ok &= zh | has_q | is_ell | ~number
        # a closing bracket or quote after the dot ("(see Fig.) Next") ends the sentence anyway
        single = ok & ~zh & ~has_q & ~is_ell & ((r_flag & _K_DOT) != 0) & bare
        idx = np.flatnonzero(single)
        if idx.size:
            ok[idx[_abbreviated(cp, fl, r_start[idx], digit_next[idx], lower_next[idx])]] = False
    else:
        ok = np.zeros(0, dtype=bool)

    # Markdown structure, per line (a line is named by its first non-space character)
    line_first = _sorted_unique(w_nl[w_nl < n])
    if first < n and (line_first.size == 0 or line_first[0] != first):
        line_first = np.concatenate(([first], line_first))
    line_end = np.append(nl, n)[np.searchsorted(nl, line_first)]
    md = _structure(text, line_first, line_end, nl, _classify_vector(text, cp, fl, line_first, line_end))
    if md.lo.size:
        ok &= ~_inside(r_start, md.lo, md.hi)

    bounds = _sorted_unique(np.concatenate((w[ok], w_nl)))
    bounds = bounds[(bounds > first) & (bounds < n)]
    if bounds.size:
        bounds = bounds[(fl[cp[bounds]] & _F_MARK) == 0]

    # gap strength: line terminators in the sentence's trailing whitespace, then Markdown
    cum = np.zeros(nl.size + 1, dtype=np.int64)
    np.cumsum(np.where(nl_kind == _K_NL2, 2, 1), out=cum[1:])
    at_b = cum[np.searchsorted(nl, bounds)]
    before = np.empty_like(at_b)
    if at_b.size:
        before[0] = cum[np.searchsorted(nl, first)]
        before[1:] = at_b[:-1]
    breaks = np.minimum(at_b - before, BREAK_PARAGRAPH).astype(np.int8)
    if md.hard.size and bounds.size:
        j = np.searchsorted(bounds, md.hard)
        jj = np.minimum(j, bounds.size - 1)
        hit = (j < bounds.size) & (bounds[jj] == md.hard)
        breaks[jj[hit]] = BREAK_HARD
    return bounds, breaks


@lru_cache(maxsize=1)
def _ws_chars() -> frozenset[str]:
    return frozenset(map(chr, np.flatnonzero(_flags() & _F_WS).tolist()))


_CLOSER_SET = frozenset(_CLOSERS)


def _split_scalar(text: str, limit: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Scalar twin of :func:`_split_vector`: the same rules, one candidate at a time. Gives up
    (returns None) when the text has more than ``limit`` marks and line breaks."""
    n = len(text)
    fl = _scalar_flags()
    ws_end = _WS_RE.match
    spaces = _ws_chars()
    closers = _CLOSER_SET
    kind_of = _ALL_CAND
    first = ws_end(text, 0).end()

    nl = _find_all(text, _NL_CHARS)
    marks = _find_all(text, _RUN_CHARS)
    if limit is not None and len(marks) + len(nl) > limit:
        return None
    if "\r" in text:
        nl = [p for p in nl if text[p] != "\r" or text[p + 1 : p + 2] != "\n"]
    cum = [0]
    w_nl: list[int] = []
    last = -1
    for p in nl:
        cum.append(cum[-1] + (2 if text[p] in "\x0c\u2029" else 1))
        if p >= last:  # else p lies in the whitespace run measured just before
            last = ws_end(text, p + 1).end()
        w_nl.append(last)

    # terminator runs: consecutive marks
    spans: list[tuple[int, int]] = []
    for p in marks:
        if spans and spans[-1][1] == p:
            spans[-1] = (spans[-1][0], p + 1)
        else:
            spans.append((p, p + 1))
    runs: list[tuple[int, int]] = []  # (start of the marks, sentence boundary)
    for s, e in spans:
        if e - s == 1:
            kinds = kind_of[text[s]]
        else:
            kinds = 0
            for ch in text[s:e]:
                kinds |= kind_of[ch]
        q = e
        while q < n and q - e < 4 and text[q] in closers:
            q += 1
        w = q
        while w < n and text[w] in spaces:
            w += 1
        if w >= n:
            runs.append((s, w))
            continue
        xf = fl[ord(text[w])]
        if kinds == _K_ZH:  # the common Chinese case
            if not xf & _F_CONT:
                runs.append((s, w))
            continue
        spaced = w > q
        cjk_next = bool(xf & _F_CJK)
        pf = fl[ord(text[s - 1])] if s > 0 else 0
        number = not spaced and bool(pf & xf & (_F_DIGIT | _F_ZHNUM))
        zh = bool(kinds & _K_ZH) or (bool(kinds & _K_FWDOT) and not number)
        if not zh and kinds & _K_ELL and not kinds & (_K_DOT | _K_Q):
            zh = bool(pf & (_F_CJK | _F_CJKP))
        has_q = bool(kinds & _K_Q)
        if zh:
            ok = not xf & _F_CONT
        elif not has_q and (kinds & _K_ELL or e - s >= 2):
            ok = (spaced and bool(xf & (_F_UPPER | _F_CJK | _F_OPEN | _F_DIGIT))) or (not spaced and cjk_next)
        elif has_q:
            ok = (spaced and not xf & (_F_LOWER | _F_CONT | _F_TERM)) or (not spaced and cjk_next)
        else:  # one "." (or a "．" between numbers)
            lower_next = bool(xf & _F_LOWER)
            ok = (spaced and not xf & (_F_CONT | _F_TERM) and (not lower_next or q == e)) or (not spaced and cjk_next)
            if ok and number:
                ok = False
            if ok and kinds & _K_DOT and q == e and _abbreviation(text, s, bool(xf & _F_DIGIT), lower_next, fl):
                ok = False
        if ok:
            runs.append((s, w))

    if not nl and not runs:
        return _EMPTY_I64, _EMPTY_I8
    line_first = sorted({x for x in w_nl if x < n} | ({first} if first < n else set()))
    nl_ext = [*nl, n]
    line_end = [nl_ext[bisect_left(nl, f)] for f in line_first]
    kinds_ = _classify_scalar(text, line_first, line_end)
    if kinds_ is None:
        md = _NO_LINES
        cand = [w for _, w in runs]
    else:
        md = _structure(text, np.array(line_first, dtype=np.int64), np.array(line_end, dtype=np.int64),
                        np.array(nl, dtype=np.int64), kinds_)
        lo, hi = md.lo.tolist(), md.hi.tolist()
        cand = []
        for s, w in runs:
            k = bisect_right(lo, s) - 1
            if k < 0 or s >= hi[k]:
                cand.append(w)
    cand.extend(w_nl)
    bounds = sorted({b for b in cand if first < b < n and not fl[ord(text[b])] & _F_MARK})

    breaks = []
    if nl:
        prev = cum[bisect_left(nl, first)]
        for b in bounds:
            here = cum[bisect_left(nl, b)]
            breaks.append(min(here - prev, BREAK_PARAGRAPH))
            prev = here
        for h in md.hard.tolist():
            j = bisect_left(bounds, h)
            if j < len(bounds) and bounds[j] == h:
                breaks[j] = BREAK_HARD
    else:
        breaks = [BREAK_NONE] * len(bounds)
    return np.array(bounds, dtype=np.int64), np.array(breaks, dtype=np.int8)


def split_sentences(text: str) -> SentenceSpans:
    """Split ``text`` into sentences whose spans tile it exactly (see the module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"split_sentences expects str, got {type(text).__name__}")
    n = len(text)
    if n == 0:
        return SentenceSpans(text, _EMPTY_I64, _EMPTY_I64, _EMPTY_I8)
    res = _split_scalar(text, SMALL_MARKS) if n <= SMALL_TEXT else None
    bounds, breaks = res if res is not None else _split_vector(text)
    starts = np.empty(bounds.size + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = bounds
    ends = np.empty(bounds.size + 1, dtype=np.int64)
    ends[:-1] = bounds
    ends[-1] = n
    for a in (starts, ends, breaks):
        a.flags.writeable = False
    return SentenceSpans(text, starts, ends, breaks)


def sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` as ``Sentence`` objects (see :func:`split_sentences`)."""
    return list(split_sentences(text))


def split_lines(text: str) -> SentenceSpans:
    """One unit per non-blank line (a conversation turn, a transcript line, a sentence per line),
    spans tiling ``text``: blank lines and trailing whitespace belong to the unit before, as
    whitespace does in :func:`split_sentences`; the gap before a unit is a paragraph break when a
    blank line precedes it, else a line break."""
    if not isinstance(text, str):
        raise TypeError(f"split_lines expects str, got {type(text).__name__}")
    n = len(text)
    if n == 0:
        return SentenceSpans(text, _EMPTY_I64, _EMPTY_I64, _EMPTY_I8)
    cp = codepoints(text)
    nl = np.flatnonzero(cp == 10)
    line_start = np.concatenate(([0], nl + 1))
    line_start = line_start[line_start < n]
    solid = np.zeros(n + 1, np.int64)
    np.cumsum((class_table()[cp] & WS) == 0, out=solid[1:])
    line_end = np.append(line_start[1:], n)
    filled = solid[line_end] > solid[line_start]
    first = line_start[filled]
    if first.size == 0:
        return SentenceSpans(text, np.array([0], np.int64), np.array([n], np.int64), _EMPTY_I8)
    starts = first.copy()
    starts[0] = 0
    ends = np.append(starts[1:], n)
    # a blank line between two units: the line before a unit's first line is blank
    idx = np.flatnonzero(filled)
    blank_before = np.diff(idx) > 1
    breaks = np.where(blank_before, BREAK_PARAGRAPH, BREAK_LINE).astype(np.int8)
    for a in (starts, ends, breaks):
        a.flags.writeable = False
    return SentenceSpans(text, starts, ends, breaks)


def join_units(units: Sequence[str], sep: str = "\n") -> SentenceSpans:
    """Units given one by one (utterances, pre-split sentences) as one text, joined by ``sep``
    (which belongs to the unit before it), with one span per unit; every gap is a line break."""
    n = len(units)
    lens = np.fromiter((len(u) for u in units), dtype=np.int64, count=n) + len(sep)
    if n:
        lens[-1] -= len(sep)
    ends = np.cumsum(lens)
    starts = ends - lens
    return SentenceSpans(sep.join(units), starts.astype(np.int64), ends.astype(np.int64),
                         np.full(max(n - 1, 0), BREAK_LINE, dtype=np.int8))

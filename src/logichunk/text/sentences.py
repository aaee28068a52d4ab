"""Sentence splitting with exact spans, for Chinese, English, mixed text and Markdown: the
``SentenceSpans`` type, the splitter (a vectorised and a scalar path that judge the candidate ends)
and the public functions.

Contract:

- ``split_sentences(text) -> SentenceSpans`` whose ``starts``/``ends`` (int64 numpy arrays) tile
  ``text`` exactly: starts[0] == 0, ends[-1] == len(text), starts[i+1] == ends[i], no empty span.
  Whitespace (newlines included) belongs to the sentence before it; whitespace at the very start
  of the text belongs to the first sentence, so every sentence but the first starts on a
  non-space character. Empty text gives zero sentences, a text of only whitespace one.
- ``seams()`` (int64, one per gap, len n-1): where every chunker cuts the gap after sentence i: the
  next sentence's first character, or the start of its line where a line break lies between them (a
  line's indent goes with its line; the whitespace before it stays with the sentence before).
- ``breaks`` (int8, one per gap, len n-1): structural strength of the gap after sentence i:
  0 = inside a paragraph, 1 = line break, 2 = blank line (paragraph), 3 = hard break (Markdown
  heading, code fence, horizontal rule, list item, table).

Rules:

- Every line break ends a sentence (``\\n``, ``\\r\\n``, ``\\r``, ``\\v``, ``\\f``, U+0085, U+2028,
  U+2029). One break is ``BREAK_LINE``; two or more (a blank line), a form feed or U+2029 is
  ``BREAK_PARAGRAPH``. Except a *soft wrap*: in a text that reads as hard-wrapped prose, a line break
  at its wrap width, or one where a sentence goes on in lower case or CJK, is whitespace — inside a
  sentence it ends none, after one it is no line break (:mod:`.soft_wraps` says when). A page's
  furniture (a running header, footer or page number at a form feed, :mod:`.pages`) is never joined by
  a soft wrap: it stays a sentence of its own, for the layout to lift out.
  Nor is a line of source code (a text that :mod:`.code_text` reads as a brace language's source, a script
  or a Python module): there every line break ends a sentence, ``for (...) {`` over ``if (...) {``, a list's
  ``'name',`` lines, ``import os`` over ``import sys``; only a comment's or a docstring's own lines are read
  as wrapped prose (:func:`_code_apart`).
- Chinese ``。！？；｡`` and full-width ``．`` (not between digits) always end a sentence, with any
  run of further marks (``！？``, ``……``) and the closing quotes/brackets right after them
  (``”’」』）】》"')]``..., up to four), unless a comma, colon or ``、`` follows. ``…``/``‥`` end
  a sentence when they follow Chinese text.
- English ``. ! ?`` end a sentence only when followed by whitespace and a character that is not
  ``, ; :`` or another mark (or directly by a CJK character, or by the end of the text); so
  decimals, versions, URLs, e-mail addresses and ``a.b`` never split. ``!`` and ``?`` go on before a
  lower-case word (``"Why?" he asked``); a single ``.`` does too after a closing quote or bracket
  and after the ``CONTINUING_ABBREVIATIONS`` (``etc. and``), but otherwise a lower-case start is a
  new sentence (lower-cased text, chat logs). A single ``.`` is not an end after an abbreviation,
  an initial or a letter-dot sequence (:mod:`.abbreviations` says which); a closing bracket or
  quote after the dot (``(see Fig.) Next``) ends the sentence anyway. A dot between two digits
  or two Chinese numerals is a decimal point (``３．１４``, ``六一．五``). The dot of an enumerator written inside
  a line ends nothing, ``.`` or ``．`` alike (``types: 1. firms; 2. ...``, ``类型：１．单项业务；２．主导产品``): one
  or two digits after a clause's mark, whose number the next such in the paragraph continues (``n``, then
  ``n + 1``). The full stop of a dotted section
  number opening a short line that ends without a sentence's mark, under a line that does not go on
  (``2.2. The source files``), ends no sentence: the line is a heading.
  ``..``/``...``/``…`` end a sentence only before an upper-case letter, a digit, a CJK character or
  an opening quote/bracket.
- Markdown lines (headings, table rows, horizontal rules, fenced code, list items) are read by
  :mod:`.line_kinds`, which says the rules: which lines are single units, where a fence splits, which
  gaps are ``BREAK_HARD``.
- No cut ever falls before a combining mark, joiner, variation selector or low surrogate (a line
  break followed by one does not end the sentence).

Two implementations give identical results (property tests check it on random text): a scalar
one for short texts with few marks (a few microseconds per sentence, no fixed cost) and a
vectorised one for the rest, where numpy finds the candidate marks block by block on the
code-point array and judges their neighbourhoods in bulk; its Python loops run only over fence
lines, rule candidates and whitespace runs longer than eight characters.

The modules it stands on, each importing only those listed before it: :mod:`._arrays` and
:mod:`.sentence_chars` (the character tables), then :mod:`.abbreviations`, :mod:`.line_kinds`,
:mod:`.soft_wraps`, :mod:`.end_candidates`, :mod:`.pages` and :mod:`.code_text`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat

import numpy as np

from .. import native
from ..types import Sentence, Span
from ._arrays import (
    _EMPTY_I8,
    _EMPTY_I64,
    _at,
    _chars_table,
    _in_table,
    _member,
    _sorted_unique_runs,
    _walk,
)
from .abbreviations import (
    ABBREVIATIONS,
    CONTINUING_ABBREVIATIONS,
    NUMBER_ABBREVIATIONS,
    _abbreviated,
    _abbreviation,
)
from .charclass import WS, class_table, codepoints
from .code_text import code_lines, docstrings, may_be_code, python_module, slash_comments
from .end_candidates import (
    _NL_CHARS,
    _RUN_CHARS,
    _WS_RE,
    _ends,
    _find_all,
    _skip_ws,
    _skip_ws_each,
    _units,
)
from .line_kinds import (
    _NO_LINES,
    NUMBERED_MAX_CHARS,
    _block_spans,
    _classify_scalar,
    _classify_vector,
    _contains,
    _inside,
    _structure,
    fence_spans,
)
from .pages import MIN_PAGE_BREAKS, furniture_lines, furniture_terminators
from .sentence_chars import (
    _ALL_CAND,
    _CLOSERS,
    _F_CJK,
    _F_CJKP,
    _F_CLOSE,
    _F_CONT,
    _F_DIGIT,
    _F_LOWER,
    _F_MARK,
    _F_OPEN,
    _F_TERM,
    _F_UPPER,
    _F_WS,
    _F_ZHNUM,
    _K_DOT,
    _K_ELL,
    _K_FWDOT,
    _K_NL2,
    _K_Q,
    _K_ZH,
    _PROSE_END,
    _QUESTION_MARKS,
    _flags,
    _scalar_flags,
)
from .soft_wraps import LINE_OPENERS, MIN_WRAPPED_LINES, soft_wraps, soft_wraps_many

BREAK_NONE, BREAK_LINE, BREAK_PARAGRAPH, BREAK_HARD = 0, 1, 2, 3

#: what a line's indent is made of (:meth:`SentenceSpans.seams`, tier 4's breaks), a bool table by code
#: point: tabs and every space separator, the no-break and the ideographic space (a Chinese paragraph's
#: indent) among them
INDENT = _chars_table("\t" + "".join(chr(c) for c in range(0x3001) if unicodedata.category(chr(c)) == "Zs"))
INDENT.flags.writeable = False
#: the line terminators (every one ends a sentence), a bool table by code point
LINE_END = _chars_table(_NL_CHARS)
LINE_END.flags.writeable = False
#: the line terminators that are a paragraph break alone (form feed, U+2029: the splitter's ``_K_NL2``), a bool
#: table by code point
_PARAGRAPH_END_CHARS = "".join(c for c, kind in _ALL_CAND.items() if kind == _K_NL2)  # (the scalar splitter's)
PARAGRAPH_END = _chars_table(_PARAGRAPH_END_CHARS)
PARAGRAPH_END.flags.writeable = False
_MAX_WALK = 1 << 30

__all__ = [
    "ABBREVIATIONS", "BREAK_HARD", "BREAK_LINE", "BREAK_NONE", "BREAK_PARAGRAPH", "CONTINUING_ABBREVIATIONS",
    "NUMBER_ABBREVIATIONS", "SMALL_MARKS", "SMALL_TEXT", "SentenceSpans", "fence_spans", "join_units", "laid_end_to_end",
    "sentences", "split_lines", "split_many", "split_sentences",
]


@dataclass(frozen=True, slots=True, eq=False)
class SentenceSpans:
    """All sentences of one text as arrays (fast), with ``Sentence`` objects on demand."""

    text: str
    starts: np.ndarray
    ends: np.ndarray
    breaks: np.ndarray
    _cache: dict = field(default_factory=dict, repr=False, compare=False)  # (the seams, once read)

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

    def seams(self) -> np.ndarray:
        """Where a chunk cut between each sentence and the next falls (``len - 1`` offsets, increasing):
        the next sentence's first character, or, where a line break lies between the two, the start of
        the next sentence's line. Why: a sentence's span carries the whitespace after it, the next line's
        indent too; a chunk cut there would end in the indent of the line that opens the next chunk and
        leave that line unindented (code, a nested list item, a literal block, a paragraph's first-line
        indent, a Chinese paragraph's full-width spaces). Each seam lies after the content of the sentence
        before it and at or before the next one's first character."""
        seams = self._cache.get("seams")
        if seams is None:
            seams = self._cache["seams"] = _seams(self.text, self.starts)
        return seams

    def seam_spans(self) -> tuple[np.ndarray, np.ndarray]:
        """Each sentence's span between its :meth:`seams` (starts, ends): they tile the text as the
        sentences do, a line's indent at the head of the sentence on that line; what chunkers cut."""
        seams = self.seams()
        return np.concatenate(([0], seams)).astype(np.int64), np.concatenate((seams, [len(self.text)])).astype(np.int64)


def _seams(text: str, starts: np.ndarray) -> np.ndarray:
    """:meth:`SentenceSpans.seams` of the sentences that start at ``starts`` (read-only)."""
    if starts.size < 2:
        return _EMPTY_I64
    nxt = starts[1:]
    cp = codepoints(text)
    stop, _, _ = _walk(cp, nxt - 1, starts[:-1], INDENT, _MAX_WALK, back=True)
    at_line = _in_table(LINE_END, cp[np.maximum(stop, 0)]) & (stop >= starts[:-1])
    out = np.where(at_line, stop + 1, nxt).astype(np.int64)
    out.flags.writeable = False
    return out


# --------------------------------------------------------------------------- the splitter

#: Texts up to this many characters with at most ``SMALL_MARKS`` marks and line breaks take the
#: scalar path (a few microseconds per sentence, no fixed cost); the others the vectorised one
#: (a fixed ~0.3 ms, then far less per sentence). Both give identical results (a property test
#: checks it).
SMALL_TEXT = 32768
SMALL_MARKS = 240


#: a section number with its full stop, opening a line: ``2.2.``, ``1.2.3.`` (one level, ``1.``, is a list item)
_SECTION_NUMBER = re.compile(r"[ \t]{0,3}\d{1,3}(?:\.\d{1,3})+\.")


def _section_number(text: str, dot: int) -> bool:
    """Whether the ``.`` at ``dot`` closes a section number that opens a heading's line (``2.2. The
    source XML files``, as PDF text and plain-text manuals number their headings): a line of at most
    :data:`~.line_kinds.NUMBERED_MAX_CHARS` that ends without a sentence's mark (or with a question mark:
    ``1.2. What is this spec?``), under a line that does not go on (it ends in no lower-case letter nor
    comma). A decimal that a hard wrap put at a line's start (``greater than or equal to`` over ``0.75.
    Quality spots were retained ...``) ends its sentence."""
    a = dot
    while a > 0 and dot - a < 16 and text[a - 1] not in _NL_CHARS:
        a -= 1
    if not (a == 0 or text[a - 1] in _NL_CHARS) or _SECTION_NUMBER.fullmatch(text, a, dot + 1) is None:
        return False
    b = a - 1
    while b > 0 and text[b - 1] in " \t\r":
        b -= 1
    if b > 0 and (text[b - 1].islower() or text[b - 1] in ",，、;-"):
        return False
    e = dot + 1
    while e < len(text) and e - a <= NUMBERED_MAX_CHARS and text[e] not in _NL_CHARS:
        e += 1
    rest = text[dot + 1 : e].rstrip()
    return e - a <= NUMBERED_MAX_CHARS and bool(rest) and (rest[-1] not in _PROSE_END or rest[-1] in _QUESTION_MARKS)


def _explicit_markup(text: str, dots: int) -> bool:
    """Whether the two dots at ``dots`` open reStructuredText's explicit markup: ``..`` and a blank, with
    only an indent before it on its line (``.. Note:: ...``, ``.. Contents::``). Why: an ellipsis before a
    capital ends a sentence, but these dots end none (nothing of a sentence stands before them); a bound
    after them parted ``.. `` from its directive's name."""
    if text[dots : dots + 2] != ".." or text[dots + 2 : dots + 3] not in (" ", "\t"):
        return False
    a = dots
    while a > 0 and text[a - 1] in " \t":
        a -= 1
    return a == 0 or text[a - 1] in _NL_CHARS


#: a table of contents' or an index's dot leader running to a page number at its line's end: three dots or more
#: (spaced or not) over to a page number (Arabic or Roman) and only spaces after it on its line
_LEADER_DOTS = re.compile(r"(?:\. ?){2}\.\Z")
_LEADER_TAIL = re.compile(r"(?:\. ?){2}\.[ \t]*(?:\d{1,4}|[ivxlcdm]{1,7}|[IVXLCDM]{1,7})[ \t]*\Z")
_PAGE_AT_LINE_END = re.compile(r"(?:\d{1,4}|[ivxlcdm]{1,7}|[IVXLCDM]{1,7})[ \t]*(?:[\n\r\x0b\x0c\x85\u2028\u2029]|\Z)")

_ROMAN_CODES = np.array([ord(c) for c in "ivxlcdmIVXLCDM"])


def _leader(text: str, end: int, w: int) -> bool:
    """Whether the dots ending at ``end`` close a dot leader (``3 Utilities . . . . . . 5``, ``asn1_copy_node
    .......... 11``): three dots or more before them, spaced by one blank or none, and after them only a page
    number to the line's end. Why: a table of contents or an index, as a PDF's text layer gives it, sets each
    entry's page number after such a run; read as an ellipsis or a full stop before a number, it parted every
    entry from its page number (a chunk ending in ``. . . .`` and the next opening with ``5``)."""
    return _LEADER_DOTS.search(text, max(0, end - 6), end) is not None and _PAGE_AT_LINE_END.match(text, w) is not None

#: what may stand before an enumerator inside a line (past spaces): a clause's or a sentence's mark, an
#: opening bracket (``types: 1. firms; 2. ...``, ``类型：１．单项业务；２．主导产品``)
_ENUM_AFTER = frozenset(":：;；,，、。.!?！？(（")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v\u3000]*\n")


def _enumerator_dots(text: str, dots: list[int]) -> set[int]:
    """Which of the dots at ``dots`` (``.`` or ``．`` after a digit, each read as a sentence's end) close an
    enumerator written inside a line: one or two digits after a clause's mark (or a line's start), the next
    number (``n + 1``, the same digits and dot) the next such in the same paragraph. Why: ``１．单项业务企业，
    …；２．主导产品企业`` — a sentence ended at each ``N．`` would part every number from its item and leave it
    at the end of the item before. A list's numbers running on is the evidence; one number alone
    (``Score: 3. Then``) stays a sentence's end."""
    found: list[tuple[int, int, str]] = []  # (dot, value, kind: the digits' script and the dot)
    for d in dots:
        a = d
        while a > 0 and d - a < 2 and text[a - 1].isdecimal() and text[a - 1].isascii() == text[d - 1].isascii():
            a -= 1
        if a == d or (a > 0 and (text[a - 1].isalnum() or text[a - 1] in ".．")):
            continue
        b = a
        while b > 0 and text[b - 1] in " \t\u3000":
            b -= 1
        if b > 0 and text[b - 1] not in _ENUM_AFTER and text[b - 1] not in _NL_CHARS:
            continue
        found.append((d, int(text[a:d]), ("a" if text[d - 1].isascii() else "f") + text[d]))
    out: set[int] = set()
    for (d, v, k), (d2, v2, k2) in zip(found, found[1:], strict=False):
        if v2 == v + 1 and k2 == k and _BLANK_LINE.search(text, d, d2) is None:
            out.update((d, d2))
    return out


def _furniture_apart(text: str, cp: np.ndarray, nl: np.ndarray, soft: np.ndarray, para: np.ndarray | None = None
                     ) -> np.ndarray:
    """``soft`` (per line terminator ``nl``) less the terminators around a page's furniture (a running
    header, a page number: :mod:`.pages`): each stays a sentence of its own, for the layout to lift out.
    (Read only where some break is soft and two of the terminators are form feeds; ``para``, when given: per
    terminator, whether it is a paragraph break alone, a form feed or U+2029, so that fewer of those than the
    form feeds needed settle it without reading the text.)"""
    nl = np.asarray(nl, np.int64)
    if not soft.any() or (para is not None and np.count_nonzero(para) < MIN_PAGE_BREAKS) \
            or np.count_nonzero(cp[nl[nl < cp.size]] == 0x0C) < MIN_PAGE_BREAKS:
        return soft
    hard = furniture_terminators(text, furniture_lines(text))
    if hard:
        soft = soft.copy()
        soft[_member(nl, np.array(hard, np.int64))] = False
    return soft


def _line_ends(cp: np.ndarray, nl: np.ndarray) -> np.ndarray:
    """Per line terminator ``nl``, the offset of its line's last character before it (past a CRLF's CR)."""
    last = nl - 1
    return last - ((last >= 0) & (cp[np.maximum(last, 0)] == 0x0D))


def _leaders_apart(text: str, cp: np.ndarray, nl: np.ndarray, soft: np.ndarray) -> np.ndarray:
    """``soft`` (per line terminator ``nl``) less the terminators that end a dot leader's line (:func:`_leader`):
    an entry of a table of contents or an index is a line of its own, not a line of wrapped prose (read as one,
    the entries ran on into one sentence the size of the table, cut where it was full: mid-entry). (Read in
    Python only at the soft breaks after a line that ends in a number or a Roman numeral's letter past up to
    three blanks, with a dot among the twelve characters before it.)"""
    nl = np.asarray(nl, np.int64)
    at = np.flatnonzero(soft)
    if at.size == 0:
        return soft
    last = _line_ends(cp, nl[at])
    for _ in range(3):
        last = np.where((last > 0) & ((cp[np.maximum(last, 0)] == 0x20) | (cp[np.maximum(last, 0)] == 0x09)),
                        last - 1, last)
    c = cp[np.maximum(last, 0)]
    keep = (last >= 4) & (((c >= 0x30) & (c <= 0x39)) | np.isin(c, _ROMAN_CODES))
    at, last = at[keep], last[keep]
    if at.size:
        window = cp[np.clip(last[:, None] - np.arange(1, 13), 0, None)] == 0x2E
        keep = window.any(axis=1)
        at, last = at[keep], last[keep]
    hard = [k for k, e in zip(at.tolist(), nl[at].tolist(), strict=True)
            if _LEADER_TAIL.search(text, max(0, e - 40), e - (text[e - 1] == "\r")) is not None]
    if not hard:
        return soft
    soft = soft.copy()
    soft[hard] = False
    return soft


#: a line that ends in an identifier broken after one of its underscores, over a line that goes on with the rest of
#: it at the margin (``... more than ASN1_MAX_`` over ``NAME_SIZE characters.``, as TeX breaks a long name in a PDF):
#: the name's last part before the break two letters or digits or more
_BROKEN_NAME = re.compile(r"[A-Za-z0-9]{2}_\r?\n[A-Za-z0-9]")
#: a speaker's name or a label opening a line (as :mod:`.soft_wraps` reads one): a colon and a blank within its first
#: characters
_LABEL_OPENING = re.compile(r"[^\n:]{0,24}:[ \t]")


def _names_joined(text: str, cp: np.ndarray, nl: np.ndarray, soft: np.ndarray) -> np.ndarray:
    """``soft`` (per line terminator ``nl``) and the terminators inside an identifier broken after an underscore
    (:data:`_BROKEN_NAME`): the name goes on over the line, so the break is a wrap, never a sentence's end (read as
    one, it ended a chunk in the middle of ``ASN1_MAX_NAME_SIZE``). No such name: a word opening with ``_`` or
    ``*`` (``_emphasis_``), letters spelled out one by one (a transcript's ``P_D_A_``), a line under it that opens
    with a speaker's name or a label (``Marketing: Ah .``). (Read in Python only at the line feeds after ``_``.)"""
    nl = np.asarray(nl, np.int64)
    if nl.size == 0:
        return soft
    last = _line_ends(cp, nl)
    cand = np.flatnonzero((last >= 2) & (cp[nl] == 0x0A) & (cp[np.maximum(last, 0)] == 0x5F))
    joined = []
    for k, at in zip(cand.tolist(), last[cand].tolist(), strict=True):
        after = int(nl[k]) + 1
        if _BROKEN_NAME.match(text, at - 2) is None or _LABEL_OPENING.match(text, after) is not None:
            continue
        word = at
        while word > 0 and (text[word - 1].isalnum() or text[word - 1] == "_"):
            word -= 1
        if text[word - 1 : word] != "*" and text[word] != "_":
            joined.append(k)
    if not joined:
        return soft
    soft = soft.copy()
    soft[joined] = True
    return soft


def _lines_read(text: str, cp: np.ndarray, nl: np.ndarray, soft: np.ndarray, para: np.ndarray | None = None
                ) -> np.ndarray:
    """``soft`` (per line terminator ``nl``, the soft-wrap reading) with what the lines themselves say about their
    breaks: a page's furniture stands apart (:func:`_furniture_apart`, ``para`` as there), a name broken over a line
    goes on (:func:`_names_joined`), a dot leader's line ends its entry (:func:`_leaders_apart`). One order for the
    vector and the scalar splitter, which read the soft wraps each its own way."""
    return _leaders_apart(text, cp, nl, _names_joined(text, cp, nl, _furniture_apart(text, cp, nl, soft, para)))


def _code_apart(text: str, cp: np.ndarray, nl: np.ndarray, w_nl: np.ndarray, ts: np.ndarray, te: np.ndarray,
                soft: np.ndarray, md_lo: np.ndarray, md_hi: np.ndarray,
                apart: Callable[[], np.ndarray | None] | None = None) -> np.ndarray:
    """``soft`` (per line terminator ``nl``; ``w_nl``: where the text goes on after each) less the breaks between
    lines of code, where the text is source code (:func:`_comment_breaks`). Read only where some break is soft.
    ``apart``: :func:`_comment_breaks` of these lines, when the caller has it (read at most once)."""
    if not soft.any():
        return soft
    keep = apart() if apart is not None else _comment_breaks(text, cp, nl, w_nl, ts, te, md_lo, md_hi)
    return soft if keep is None else soft & keep


def _comment_breaks(text: str, cp: np.ndarray, nl: np.ndarray, w_nl: np.ndarray, ts: np.ndarray, te: np.ndarray,
                    md_lo: np.ndarray, md_hi: np.ndarray) -> np.ndarray | None:
    """Per line terminator ``nl`` (``w_nl``: where the text goes on after each), whether it lies between two lines
    of one comment, where the text is source code (:func:`~.code_text.code_lines`: a brace language, a script, a
    Python module); None where it is none (:func:`~.code_text.may_be_code` first). In code a line break ends a
    statement, not a line of wrapped prose (``for (...) {`` over ``if (...) {``, a list's ``'name',`` lines,
    ``import os`` over ``import sys``, ``return x`` over ``y = 1`` each stay a sentence); a break between two lines
    of one comment (``//``, ``/* ... */``, ``#``, a Python docstring) keeps prose's reading: a comment is wrapped
    prose. ``md_lo``, ``md_hi``: what Markdown keeps whole (a Python module's imports and definitions are read
    outside it). ``ts``, ``te``: each line's first non-space offset and its terminator (the splitter's lines)."""
    n = len(text)
    if not may_be_code(text, 0, n):
        return None
    nl = np.asarray(nl, np.int64)
    w_nl = np.asarray(w_nl, np.int64)
    # (a /* ... */ comment over several lines, as the layout reads it: its lines are a comment)
    slash = slash_comments(text, _block_spans(text) if _contains(text, "/*") else [], ts)

    def outside(at: int) -> bool:
        k = int(np.searchsorted(md_lo, at, side="right")) - 1
        return k < 0 or at >= int(md_hi[k])
    read = code_lines(text, cp, 0, n, ts, te, slash, lambda lo: python_module(text, lo, n, outside))
    if read is None:
        return None
    comment = read.comment
    if read.script:  # (a docstring's lines are wrapped prose, as a comment's)
        d_lo, d_hi = docstrings(text, 0, n)
        if d_lo.size:
            k = np.searchsorted(d_lo, ts, side="right") - 1
            comment = comment | ((k >= 0) & (ts < d_hi[np.maximum(k, 0)]))
    over = native.searchsorted(ts, nl, side="right") - 1  # (in order: each search from the one before, in C)
    under = np.minimum(native.searchsorted(ts, w_nl, side="left"), ts.size - 1)
    return (over >= 0) & comment[np.maximum(over, 0)] & comment[under]


def _split_vector(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Sentence starts after the first (sorted offsets) and gap strengths, in bulk."""
    n = len(text)
    cp = _units(text)
    fl = _flags()

    nl, nl_kind, term, term_kind = _ends(text, cp)

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
        # reStructuredText's explicit markup opening a line (".. Note::") ends nothing (read in Python only at
        # two dots spaced after)
        idx = np.flatnonzero(ok & is_ell & bare & spaced & (r_end - r_start == 2) & (cp[r_start] == 0x2E)
                             & (cp[np.minimum(r_start + 1, n - 1)] == 0x2E))
        for i in idx.tolist():
            if _explicit_markup(text, int(r_start[i])):
                ok[i] = False
        # a dot leader's last dot before a page number ("Utilities . . . . 5") ends nothing (read in Python only
        # where a dot before a digit or a Roman numeral's letter follows two dots)
        idx = np.flatnonzero((cp[r_end - 1] == 0x2E) & (r_end >= 3)
                             & ((cp[np.maximum(r_end - 2, 0)] == 0x2E) | (cp[np.maximum(r_end - 3, 0)] == 0x2E)))
        idx = idx[ok[idx] & spaced[idx] & bare[idx]
                  & (((xf[idx] & _F_DIGIT) != 0) | np.isin(_at(cp, w[idx]), _ROMAN_CODES))]
        for i in idx.tolist():
            if ok[i] and _leader(text, int(r_end[i]), int(w[i])):
                ok[i] = False
        # a closing bracket or quote after the dot ("(see Fig.) Next") ends the sentence anyway
        single = ok & ~zh & ~has_q & ~is_ell & ((r_flag & _K_DOT) != 0) & bare
        idx = np.flatnonzero(single)
        if idx.size:
            ok[idx[_abbreviated(cp, fl, r_start[idx], digit_next[idx], lower_next[idx])]] = False
        # the full stop of a section number that opens its line ("2.2. The source XML files") ends nothing
        # (read in Python only where a dot lies two to four characters before: "1990." is none)
        idx = np.flatnonzero(single & ((pf & _F_DIGIT) != 0))
        idx = idx[ok[idx]]
        near = cp[np.maximum(r_start[idx, None] - np.arange(2, 5), 0)] == 0x2E
        for i in idx[near.any(axis=1) & (r_start[idx] >= 3)].tolist():
            if _section_number(text, int(r_start[i])):
                ok[i] = False
        # an enumerator's dot inside a line ("：１．单项业务；２．") ends nothing (read in Python only after a digit)
        idx = np.flatnonzero(ok & (r_end - r_start == 1) & ((pf & _F_DIGIT) != 0)
                             & ((cp[r_start] == 0x2E) | (cp[r_start] == 0xFF0E)))
        if idx.size > 1:  # (not after an ASCII letter, nor a third digit or a letter before two: "v2.", "1999.")
            c2 = cp[np.maximum(r_start[idx] - 2, 0)].astype(np.int64)
            c3 = cp[np.maximum(r_start[idx] - 3, 0)].astype(np.int64)
            letter2 = ((c2 | 0x20) >= 0x61) & ((c2 | 0x20) <= 0x7A)
            digit2 = (c2 >= 0x30) & (c2 <= 0x39)
            alnum3 = (((c3 | 0x20) >= 0x61) & ((c3 | 0x20) <= 0x7A)) | ((c3 >= 0x30) & (c3 <= 0x39))
            idx = idx[(r_start[idx] < 2) | ~(letter2 | (digit2 & alnum3 & (r_start[idx] >= 3)))]
        if idx.size > 1:
            enum = _enumerator_dots(text, r_start[idx].tolist())
            if enum:
                ok[idx[np.isin(r_start[idx], list(enum))]] = False
    else:
        ok = np.zeros(0, dtype=bool)

    # Markdown structure, per line (a line is named by its first non-space character)
    line_first = _sorted_unique_runs(w_nl[w_nl < n])  # (in order already: one run)
    if first < n and (line_first.size == 0 or line_first[0] != first):
        line_first = np.concatenate(([first], line_first))
    line_end = np.append(nl, n)[native.searchsorted(nl, line_first)]
    md = _structure(text, line_first, line_end, nl, _classify_vector(text, cp, fl, line_first, line_end))
    if md.lo.size:
        ok &= ~_inside(r_start, md.lo, md.hi)
    # a line break inside a sentence of hard-wrapped prose is no end
    para = nl_kind == _K_NL2
    # (and read only where the splitter keeps its answer: in source code, between two lines of a comment)
    apart: list[np.ndarray | None] = []

    def comment_breaks() -> np.ndarray | None:
        if not apart:
            apart.append(_comment_breaks(text, cp, nl, w_nl, line_first, line_end, md.lo, md.hi))
        return apart[0]
    soft = _lines_read(text, cp, nl, soft_wraps(cp, fl, nl, w_nl, para, first, md.lo, md.hi, md.hard, comment_breaks),
                       para)
    soft = _code_apart(text, cp, nl, w_nl, line_first, line_end, soft, md.lo, md.hi, comment_breaks)

    bounds = _sorted_unique_runs(np.concatenate((w[ok], w_nl[~soft])))  # (two runs, each in order)
    bounds = bounds[(bounds > first) & (bounds < n)]
    if bounds.size:
        bounds = bounds[(fl[cp[bounds]] & _F_MARK) == 0]

    # gap strength: line terminators in the sentence's trailing whitespace, then Markdown
    cum = np.zeros(nl.size + 1, dtype=np.int64)
    np.cumsum(np.where(soft, 0, np.where(para, 2, 1)), out=cum[1:])  # a soft wrap breaks nothing
    at_b = cum[native.searchsorted(nl, bounds)]
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
    steps = _scalar_steps(text, limit)
    try:
        wraps = next(steps)  # (the text's soft-wrap reading, when it needs one)
        steps.send(soft_wraps(wraps[0], _flags(), *wraps[1:]))
    except StopIteration as done:
        return done.value
    raise AssertionError("the split asks for one soft-wrap reading at most")  # pragma: no cover


_Wraps = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]


def _past_quote_marks(text: str, w: int) -> int:
    """Offset ``w`` past the quote marks that open its line there (an e-mail's ``> ``, ``> > ``), as
    :mod:`.soft_wraps` reads a quoted line."""
    for _ in range(4):
        if text[w : w + 1] != ">":
            break
        w += 2 if text[w + 1 : w + 2] == " " else 1
    return w


def _scalar_steps(text: str, limit: int | None) -> Generator[_Wraps, np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """:func:`_split_scalar`'s rules as a generator: where the text needs its soft wraps read, it yields
    :func:`~.soft_wraps.soft_wraps`' arguments but the flag table and is sent the answer (so that
    :func:`split_many` reads many texts' in one pass); returns the bounds and breaks, or None (too many
    marks: the vector path)."""
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
    weight: list[int] = []  # per line terminator: a form feed or U+2029 is a paragraph break alone
    w_nl: list[int] = []
    last = -1
    for p in nl:
        weight.append(2 if text[p] in _PARAGRAPH_END_CHARS else 1)
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
    enum_at: list[int] = []  # the ends after a digit's dot (an enumerator's, maybe)
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
            if e - s == 1 and text[s] in ".．" and s > 0 and fl[ord(text[s - 1])] & _F_DIGIT:
                enum_at.append(s)
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
            if ok and spaced and q == e and e - s == 2 and _explicit_markup(text, s):
                ok = False
        elif has_q:
            ok = (spaced and not xf & (_F_LOWER | _F_CONT | _F_TERM)) or (not spaced and cjk_next)
        else:  # one "." (or a "．" between numbers)
            lower_next = bool(xf & _F_LOWER)
            ok = (spaced and not xf & (_F_CONT | _F_TERM) and (not lower_next or q == e)) or (not spaced and cjk_next)
            if ok and number:
                ok = False
            if ok and kinds & _K_DOT and q == e and _abbreviation(text, s, bool(xf & _F_DIGIT), lower_next, fl):
                ok = False
            if ok and kinds & _K_DOT and q == e and pf & _F_DIGIT and _section_number(text, s):
                ok = False
        if ok and spaced and q == e and text[e - 1] == "." and _leader(text, e, w):
            ok = False
        if ok:
            runs.append((s, w))
            if e - s == 1 and text[s] in ".．" and pf & _F_DIGIT:
                enum_at.append(s)

    if len(enum_at) > 1 and (enum := _enumerator_dots(text, enum_at)):
        runs = [r for r in runs if r[0] not in enum]
    if not nl and not runs:
        return _EMPTY_I64, _EMPTY_I8
    line_first = sorted({x for x in w_nl if x < n} | ({first} if first < n else set()))
    nl_ext = [*nl, n]
    line_end = [nl_ext[bisect_left(nl, f)] for f in line_first]
    nl_a = np.array(nl, dtype=np.int64)
    md = _structure(text, np.array(line_first, dtype=np.int64), np.array(line_end, dtype=np.int64), nl_a,
                    _classify_scalar(text, line_first, line_end))
    if md is _NO_LINES:
        cand = [w for _, w in runs]
    else:
        lo, hi = md.lo.tolist(), md.hi.tolist()
        cand = []
        for s, w in runs:
            k = bisect_right(lo, s) - 1
            if k < 0 or s >= hi[k]:
                cand.append(w)
    # the same soft wraps as the vector path, read only where a line goes on in lower case or CJK (or
    # opens with a quotation mark or a bracket, which the rule reads past); and a name broken over a line
    soft = [False] * len(nl)
    wrapped = len(nl) >= MIN_WRAPPED_LINES and any(fl[ord(text[w])] & (_F_LOWER | _F_CJK) or text[w] in LINE_OPENERS
                                                   for w in map(_past_quote_marks, repeat(text), w_nl) if w < n)
    if wrapped or (nl and ("_\n" in text or "_\r\n" in text)):
        cp = codepoints(text)
        if wrapped:
            read = yield cp, nl_a, np.array(w_nl, dtype=np.int64), np.array(weight) == 2, first, md.lo, md.hi, md.hard
        else:
            read = np.zeros(len(nl), dtype=bool)
        soft = _code_apart(text, cp, nl_a, np.array(w_nl, dtype=np.int64), np.array(line_first, dtype=np.int64),
                           np.array(line_end, dtype=np.int64), _lines_read(text, cp, nl_a, read), md.lo, md.hi).tolist()
    cand.extend(w for w, sf in zip(w_nl, soft, strict=True) if not sf)
    cum = [0]
    for wt, sf in zip(weight, soft, strict=True):
        cum.append(cum[-1] + (0 if sf else wt))  # a soft wrap breaks nothing
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
    return _spans(text, *(res if res is not None else _split_vector(text)))


def split_many(texts: Sequence[str]) -> list[SentenceSpans]:
    """``[split_sentences(t) for t in texts]``, the short texts' soft wraps read in one pass
    (:func:`~.soft_wraps.soft_wraps_many`). Why: a short text with a few line breaks (a block of code, of a
    README, a list) pays most of its split in that reading's fixed cost, ~0.2 ms; a store splits a chapter's
    blocks by the thousand."""
    out: list[SentenceSpans | None] = [None] * len(texts)
    waiting: list[tuple[int, Generator[_Wraps, np.ndarray, tuple[np.ndarray, np.ndarray] | None], _Wraps]] = []
    size = 0

    def read_waiting() -> None:
        for (i, steps, _), read in zip(waiting, soft_wraps_many(_flags(), [w for _, _, w in waiting]), strict=True):
            try:
                steps.send(read)
            except StopIteration as done:
                out[i] = _spans(texts[i], *done.value)
        waiting.clear()

    for i, text in enumerate(texts):
        if isinstance(text, str) and 0 < len(text) <= SMALL_TEXT:
            steps = _scalar_steps(text, SMALL_MARKS)
            try:
                waiting.append((i, steps, next(steps)))
                size += len(text)
                if size > _MANY_CHARS:  # (a group at a time: memory stays that of one group)
                    read_waiting()
                    size = 0
                continue
            except StopIteration as done:
                if done.value is not None:
                    out[i] = _spans(text, *done.value)
                    continue
        out[i] = split_sentences(text)
    if waiting:
        read_waiting()
    return out  # type: ignore[return-value]


#: :func:`split_many` reads the soft wraps of this many characters of texts in one pass at most
_MANY_CHARS = 1 << 20


def _spans(text: str, bounds: np.ndarray, breaks: np.ndarray) -> SentenceSpans:
    """The sentences of ``text`` from the starts after its first (``bounds``) and the gaps' breaks."""
    n = len(text)
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
    blank line, a form feed or U+2029 precedes it (as :func:`split_sentences` and the layout read them), else
    a line break."""
    if not isinstance(text, str):
        raise TypeError(f"split_lines expects str, got {type(text).__name__}")
    n = len(text)
    if n == 0:
        return SentenceSpans(text, _EMPTY_I64, _EMPTY_I64, _EMPTY_I8)
    cp = codepoints(text)
    # a line ends where the splitter's lines end (LF, CR, VT, FF, NEL, LS, PS; a CRLF at its LF): a transcript
    # with classic-Mac CR endings was one unit, so one topic
    is_nl = _in_table(LINE_END, cp)
    is_nl[:-1] &= ~((cp[:-1] == 13) & (cp[1:] == 10))
    nl = np.flatnonzero(is_nl)
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
    # (line m ends at line_start[m + 1] - 1: how many of lines idx[k]..idx[k + 1] - 1 end a paragraph alone)
    para = np.zeros(line_start.size, np.int64)
    np.cumsum(_in_table(PARAGRAPH_END, cp[line_start[1:] - 1]), out=para[1:])
    blank_before = (np.diff(idx) > 1) | (para[idx[1:]] > para[idx[:-1]])
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


def laid_end_to_end(texts: Sequence[str], sents: Sequence[SentenceSpans], sep: str = "\n"
                    ) -> tuple[SentenceSpans, np.ndarray, np.ndarray]:
    """The sentences of several non-empty ``texts`` (``sents``: each one's own split) as those of one text,
    the texts joined by ``sep``: each text's sentences shifted to its place, each separator a sentence of
    its own with a blank line's break on both sides (a text's edge reads as one, as the edge of a text
    alone does). Returns the spans, each text's start in the joined text, and per gap whether it touches
    a separator. Why: a pass over many short texts pays its fixed costs once (the cascade's
    :func:`~logichunk.chunkers.many.chunk_many`, a parent's children); the sentences stay each text's own,
    since the splitter's rules look at what follows a mark."""
    n = len(texts)
    if n != len(sents):
        raise ValueError(f"{len(sents)} splits for {n} texts")
    lens = np.fromiter((len(t) for t in texts), np.int64, n)
    if n and lens.min() == 0:
        raise ValueError("laid_end_to_end takes non-empty texts")
    starts = np.zeros(n, np.int64)
    np.cumsum(lens[:-1] + len(sep), out=starts[1:])
    s_lo, s_hi, brk, seam = [], [], [], []
    for k, (o, ss) in enumerate(zip(starts.tolist(), sents, strict=True)):
        s_lo.append(ss.starts + o)
        s_hi.append(ss.ends + o)
        brk.append(ss.breaks)
        seam.append(np.zeros(ss.breaks.size, bool))
        if k < n - 1:
            end = o + int(lens[k])
            s_lo.append(np.array([end], np.int64))
            s_hi.append(np.array([end + len(sep)], np.int64))
            brk.append(np.full(2, BREAK_PARAGRAPH, np.int8))
            seam.append(np.ones(2, bool))
    if not n:
        return SentenceSpans("", _EMPTY_I64, _EMPTY_I64, _EMPTY_I8), starts, np.zeros(0, bool)
    spans = SentenceSpans(sep.join(texts), np.concatenate(s_lo), np.concatenate(s_hi),
                          np.concatenate(brk).astype(np.int8))
    return spans, starts, np.concatenate(seam)


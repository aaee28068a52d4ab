"""Length units: characters, UTF-8 bytes, tokens. One prefix array per text makes every size
check O(1): ``size(span) = prefix[end] - prefix[start]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import InputError
from .charclass import ALNUM, CJK, PUNCT, classes, codepoints


@runtime_checkable
class Measure(Protocol):
    """A unit of length. ``prefix(text)[i]`` is the size of ``text[:i]`` (len(text)+1 entries)."""

    name: str

    def prefix(self, text: str) -> np.ndarray: ...


def _cumsum0(per_char: np.ndarray) -> np.ndarray:
    out = np.zeros(per_char.size + 1, dtype=np.int64)
    np.cumsum(per_char, out=out[1:])
    return out


@dataclass(frozen=True)
class Chars:
    name: str = "chars"

    def prefix(self, text: str) -> np.ndarray:
        return np.arange(len(text) + 1, dtype=np.int64)


@dataclass(frozen=True)
class Utf8Bytes:
    name: str = "bytes"

    def prefix(self, text: str) -> np.ndarray:
        cp = codepoints(text)
        width = 1 + (cp >= 0x80).astype(np.int8) + (cp >= 0x800) + (cp >= 0x10000)
        # lone surrogates are written with surrogatepass (3 bytes), matching the ranges above
        return _cumsum0(width)


@dataclass(frozen=True)
class HeuristicTokens:
    """An offline token estimate close to BPE tokenizers on zh/en: one token per CJK character,
    per punctuation mark, and per started ``word_piece`` characters of a letter/digit run."""

    name: str = "tokens"
    word_piece: int = 6

    def prefix(self, text: str) -> np.ndarray:
        cls = classes(text)
        n = cls.size
        if n == 0:
            return np.zeros(1, dtype=np.int64)
        alnum = (cls & ALNUM) != 0
        starts = np.empty(n, dtype=bool)
        starts[0] = alnum[0]
        starts[1:] = alnum[1:] & ~alnum[:-1]
        # position inside the current letter run, to count one token per word_piece characters
        idx = np.arange(n)
        run_start = np.maximum.accumulate(np.where(starts, idx, 0))
        in_run = alnum & ((idx - run_start) % self.word_piece == 0)
        tok = in_run | ((cls & (CJK | PUNCT)) != 0)
        return _cumsum0(tok.astype(np.int8))


UNITS: dict[str, Measure] = {"chars": Chars(), "bytes": Utf8Bytes(), "tokens": HeuristicTokens()}


def get_measure(unit: str | Measure) -> Measure:
    if isinstance(unit, str):
        try:
            return UNITS[unit]
        except KeyError:
            raise InputError(f"unknown unit {unit!r}; choose one of {', '.join(UNITS)}") from None
    if isinstance(unit, Measure):
        return unit
    raise InputError(f"not a unit: {unit!r}")


def piece(text: str) -> str:
    """A text a caller's unit or tokenizer was given, as an error names it: its length and first characters,
    on one line."""
    head = repr(text[:30] + ("…" if len(text) > 30 else ""))
    return f"the {len(text):,}-character text {head}"


def whole_numbers(values: object, who: str, what: str, at: str, where: str) -> np.ndarray:
    """A caller's numbers (a tokenizer's offsets, a unit's sizes) as int64, refused in one line unless each is
    a whole, finite number: NaN or infinity read as int64 became -2**63 (named as the offset), 2.5 became 2,
    silently. The one place they are read; ``who`` gave them, ``what`` each is, ``at`` names its place, ``where``
    the text they are of (:func:`piece`)."""
    try:
        a = np.asarray(values)
        if a.dtype.kind not in "biuf":  # (numbers in a list of objects are read as floats, then checked)
            a = a.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{who} gave {what}s that are not numbers for {where}") from None
    if a.dtype.kind == "f":
        odd = ~np.isfinite(a) | (a != np.floor(a))
        if odd.any():
            i = int(np.flatnonzero(odd)[0])
            kind = "a non-finite" if not np.isfinite(a[i]) else "a non-integer"
            raise InputError(f"{who} gave {kind} {what} ({float(a[i])!r}) {at} {i} of {where}: {what}s must be whole "
                             "numbers")
    return a.astype(np.int64)


def own_prefix(measure: Measure, text: str, prefix: object) -> np.ndarray:
    """``prefix``, a caller's unit's :meth:`Measure.prefix` of ``text``, as int64, refused in one line unless it is
    ``len(text) + 1`` whole, finite sizes from 0 that never fall (NaN read as int64 was -2**63; a falling prefix
    made a chunk of any length fit)."""
    who, n = f"unit {getattr(measure, 'name', type(measure).__name__)!r}", len(text)
    a = whole_numbers(prefix, who, "size", "at character", piece(text))
    if a.shape != (n + 1,):
        raise InputError(f"{who}: prefix(text) must be {n + 1} sizes for {piece(text)} (len(text) + 1), got "
                         f"an array of shape {a.shape}")
    falls = np.flatnonzero(np.diff(a) < 0)
    if a[0] != 0 or falls.size:
        i = 0 if a[0] != 0 else int(falls[0]) + 1
        raise InputError(f"{who} gave the text up to character {i} of {piece(text)} the size {int(a[i])}: sizes "
                         "start at 0 and never fall (a character's size is not negative)")
    return a


class Meter:
    """Sizes of spans of one text in one unit. The prefix array is computed on first use; in
    characters no array is needed at all (a size is ``end - start``), which spares 8 bytes per
    character on the hot path."""

    __slots__ = ("measure", "text", "_prefix", "_chars")

    def __init__(self, text: str, unit: str | Measure = "chars") -> None:
        self.text = text
        self.measure = get_measure(unit)
        self._chars = isinstance(self.measure, Chars)
        self._prefix: np.ndarray | None = None

    @property
    def prefix(self) -> np.ndarray:
        """``prefix[i]`` is the size of ``text[:i]`` (len(text)+1 entries)."""
        if self._prefix is None:
            p = self.measure.prefix(self.text)
            # (a unit of the caller's own: its sizes are read here, once, as ours are trusted)
            self._prefix = p if type(self.measure).__module__.startswith("logichunk.") else own_prefix(
                self.measure, self.text, p)
        return self._prefix

    @property
    def unit(self) -> str:
        return self.measure.name

    def size(self, start: int, end: int) -> int:
        if self._chars:
            return end - start
        return int(self.prefix[end] - self.prefix[start])

    def sizes(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        if self._chars:
            return np.asarray(ends, dtype=np.int64) - np.asarray(starts, dtype=np.int64)
        return self.prefix[ends] - self.prefix[starts]

    def span_prefix(self, start: int, end: int) -> np.ndarray:
        """The prefix of ``text[start:end]`` alone: ``p[i]`` is the size of ``text[start:start+i]``."""
        if self._chars:
            return np.arange(end - start + 1, dtype=np.int64)
        return self.prefix[start : end + 1] - self.prefix[start]

    def span_prefixes(self, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`span_prefix` of many spans at once, laid end to end: span ``i``'s is
        ``out[po[i] : po[i + 1]]`` (``ends[i] - starts[i] + 1`` entries). Returns ``(out, po)``."""
        starts = np.asarray(starts, dtype=np.int64)
        width = np.asarray(ends, dtype=np.int64) - starts + 1
        po = np.zeros(width.size + 1, np.int64)
        np.cumsum(width, out=po[1:])
        local = np.arange(int(po[-1]), dtype=np.int64) - np.repeat(po[:-1], width)  # 0 .. n_i per span
        if self._chars:
            return local, po
        at = local + np.repeat(starts, width)
        return self.prefix[at] - np.repeat(self.prefix[starts], width), po

    def total(self) -> int:
        return len(self.text) if self._chars else int(self.prefix[-1])

    @property
    def allowed(self) -> np.ndarray | None:
        """``allowed[i]`` is False where a cut at ``i`` would fall strictly inside a token of a real
        tokenizer (see :mod:`logichunk.text.tokens`); None when every offset is allowed in this unit."""
        cut_ok = getattr(self.measure, "cut_ok", None)
        return None if cut_ok is None else cut_ok(self.text)

    def snap(self, offsets: np.ndarray) -> np.ndarray:
        """``offsets`` moved back to the start of the token they fall inside, if any. A token counts
        where it ends, so ``prefix`` is the same at both: no measured size changes."""
        snap = getattr(self.measure, "snap", None)
        return np.asarray(offsets, dtype=np.int64) if snap is None else snap(self.text, offsets)

"""Traditional Chinese characters folded to simplified ones, one character for one, for lexical matching.

Why: a knowledge base holds Taiwan/Hong Kong documents beside mainland ones, and ``旷工`` and ``曠工`` are the
same word. A term index (BM25) that folds both its texts and its queries with :func:`fold_han` finds either
from the other; the user's text is never changed (folding is only in the index's terms).

The table is OpenCC's (``opencc``, its ``t2s`` configuration read one character at a time: its
``TSCharacters`` dictionaries, and each CJK compatibility ideograph as its unified one), not its phrases: a
term needs the character, and one character for one keeps every position, so a match in the folded text is
a span of the original. A character with several readings takes the one OpenCC gives it alone (``乾`` is
``干``, though OpenCC's phrases keep ``乾隆``); both sides fold alike, so they still meet.
Without the package (the ``zh`` extra: ``pip install "logichunk[zh]"``), nothing folds and a warning says
so once a process, when a text with Han characters is first folded.
"""

from __future__ import annotations

import functools
import re
import warnings

import numpy as np

from ..errors import outside_stacklevel

__all__ = ["HanFoldWarning", "fold_han", "han_fold_table"]

#: the Han code points read (those BM25 reads as CJK): the iteration marks and 〇, Extension A, the unified
#: block, the compatibility ideographs, and the supplementary planes' extensions
_HAN_RANGES = ((0x3005, 0x3007), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F))

_MISSING = ("opencc is not installed: traditional and simplified Chinese are different terms "
            '(pip install "logichunk[zh]", or pip install opencc)')
_HAN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _HAN_RANGES) + "]")
_warned = False
_absent = False  # (set where the table found no OpenCC: a table OpenCC could not give is warned of there)


class HanFoldWarning(UserWarning):
    """Folding is off for want of OpenCC: ``曠工`` does not find ``旷工``. Warned once a process."""


@functools.cache
def han_fold_table() -> dict[int, int]:
    """``{code point: code point}`` of every Han character OpenCC's ``t2s`` changes alone into another one
    of :data:`_HAN_RANGES`, idempotent (a target that itself folds is followed); empty without OpenCC."""
    global _absent
    try:
        import opencc
    except ImportError:
        _absent = True
        return {}
    chars = [chr(c) for lo, hi in _HAN_RANGES for c in range(lo, hi + 1)]
    # one call over all of them, a line each: no phrase spans a line break, so each is read alone (~50 ms)
    out = opencc.OpenCC("t2s").convert("\n".join(chars)).split("\n")
    if len(out) != len(chars):  # (a line break dropped or made: the table cannot be read character by character)
        warnings.warn("opencc's t2s did not keep one line per character: no folding", HanFoldWarning,
                      stacklevel=outside_stacklevel())
        return {}
    read = set(chars)  # (a few rare ones OpenCC writes in Extension G, which fonts and BM25 do not read, stay)
    table = {ord(a): ord(b) for a, b in zip(chars, out, strict=True) if a != b and b in read}
    for k, v in table.items():  # (a chain a → b → c reads a → c, so folding twice is folding once)
        seen = {k}
        while v in table and v not in seen:
            seen.add(v)
            v = table[v]
        table[k] = v
    return table


@functools.cache
def _lookup() -> np.ndarray | None:
    """:func:`han_fold_table` as an array over every code point it reads (780 KB): a text is folded in one
    lookup, four times as fast as ``str.translate`` with the table (which looks each character up alone)."""
    table = han_fold_table()
    if not table:
        return None
    lut = np.arange(_HAN_RANGES[-1][1] + 1, dtype=np.uint32)
    lut[np.fromiter(table.keys(), np.int64, len(table))] = np.fromiter(table.values(), np.uint32, len(table))
    return lut


def fold_han(text: str) -> str:
    """``text`` with each traditional Han character as its simplified one: the same length, every other
    character as it was."""
    if text.isascii():
        return text
    lut = _lookup()
    if lut is None:
        _warn_missing(text)
        return text
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)  # (a lone surrogate stays)
    folded = np.where(codes < lut.size, lut[np.minimum(codes, lut.size - 1)], codes)
    return folded.tobytes().decode("utf-32-le", "surrogatepass")


def _warn_missing(text: str) -> None:
    """The warning that folding is off, once a process, and only where it would have mattered: a text with Han
    characters (a French or Russian text without them folds nothing anyway)."""
    global _warned
    if not _warned and _absent and _HAN.search(text):
        _warned = True
        warnings.warn(_MISSING, HanFoldWarning, stacklevel=outside_stacklevel())


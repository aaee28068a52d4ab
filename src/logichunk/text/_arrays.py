"""Small numpy helpers shared by the sentence splitter's modules (:mod:`.sentences`,
:mod:`.end_candidates`, :mod:`.abbreviations`, :mod:`.line_kinds`): read-only empty arrays,
membership in a small sorted set, sorted unique values, reads that see 0 past the end, and walks
over runs of a set of characters (the layout's indents and closers, the sentences' seams). They live
apart so that each of those modules can use them without importing another."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import native

_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_I64.flags.writeable = False
_EMPTY_I8 = np.zeros(0, dtype=np.int8)
_EMPTY_I8.flags.writeable = False


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``np.isin`` for a small sorted set, without its sorting overhead: a lookup in a table of the set's
    members (built once per set) when the set is a few code points below 2**17 and the values many, a
    binary search otherwise."""
    if values.size == 0 or sorted_set.size == 0:
        return np.zeros(values.shape, dtype=bool)
    if values.size >= _TABLE_MIN and sorted_set.size <= _TABLE_SET and values.dtype.kind in "iu" \
            and sorted_set.dtype.kind in "iu" and 0 <= sorted_set[0] and sorted_set[-1] < _TABLE_TOP:
        return _in_table(_table(sorted_set.tobytes(), sorted_set.dtype.str), values)
    i = np.searchsorted(sorted_set, values)
    return sorted_set[np.minimum(i, sorted_set.size - 1)] == values


#: values from which, sets up to which, and members below which :func:`_member` looks up a table
_TABLE_MIN, _TABLE_SET, _TABLE_TOP = 256, 256, 1 << 17


#: each integer type's largest value (np.iinfo is a class to build, each call)
_INT_MAX = {np.dtype(t): int(np.iinfo(t).max) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                                         np.uint32, np.uint64)}


#: values from which :func:`_in_table` calls its kernel (below it, the call costs more than numpy's passes save)
_KERNEL_MIN = 256


def _in_table(table: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Whether each integer of ``values`` is in the set ``table`` (a bool table by value; what lies below 0
    or past its end is not). In one compiled pass where the values are many (:func:`logichunk.native.in_table`):
    numpy's four passes each build a temporary, and the layout reads whole columns of its sentences so."""
    if values.size >= _KERNEL_MIN and (fast := native.in_table(table, values)) is not None:
        return fast
    return _in_table_passes(table, values)


def _in_table_passes(table: np.ndarray, values: np.ndarray) -> np.ndarray:
    """:func:`_in_table` in numpy's passes (the compiled kernel's twin: few values, or no kernel)."""
    top = table.size - 1
    inside = values <= top
    # (two ufuncs cost less than np.clip's Python wrapper on short arrays)
    at = values if top >= _INT_MAX.get(values.dtype, top + 1) else np.minimum(values, top)
    if values.dtype.kind == "i":
        inside &= values >= 0
        at = np.maximum(at, 0)
    return inside & table[at]


@lru_cache(maxsize=128)
def _table(members: bytes, dtype: str) -> np.ndarray:
    """A bool table by value of the members (a sorted set's bytes and dtype: sets are module constants)."""
    m = np.frombuffer(members, dtype=np.dtype(dtype)).astype(np.int64)
    table = np.zeros(int(m[-1]) + 1, dtype=bool)
    table[m] = True
    table.flags.writeable = False
    return table


def _sorted_unique(a: np.ndarray, kind: str | None = None) -> np.ndarray:
    """``np.unique(a)`` without its bookkeeping: sorted (by ``kind``), then the repeats dropped."""
    a = np.sort(a, kind=kind)  # type: ignore[call-overload]
    if a.size > 1:
        keep = np.empty(a.size, dtype=bool)
        keep[0] = True
        np.not_equal(a[1:], a[:-1], out=keep[1:])
        a = a[keep]
    return a


def _sorted_unique_runs(a: np.ndarray) -> np.ndarray:
    """:func:`_sorted_unique` of an array made of a few sorted runs laid end to end (offsets found in order, or
    two lists of them): a stable sort (timsort) merges the runs in a pass where a quicksort sorts afresh."""
    return _sorted_unique(a, kind="stable")


def _at(cp: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """``cp[pos]`` with positions at or past the end reading as 0 (NUL: no flag set)."""
    n = cp.size
    out = cp[np.minimum(pos, n - 1)]
    return np.where(pos < n, out, 0)


def _walk(cp: np.ndarray, at: np.ndarray, bound: np.ndarray, take: np.ndarray, steps: int, back: bool = False,
          note: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From each offset of ``at``, past up to ``steps`` characters of the set ``take`` (a bool table by
    code point; what lies past its end is not taken), forwards while below ``bound``, or ``back``wards
    while at or above it. Returns where each walk stops (on the character that stopped it, or at the
    bound), whether it ran out of steps still in the set, and whether it passed a character of the set
    ``note`` (a bool table, as ``take``). The lines' indents, trailing blanks and closers the layout's
    prefilters read, without Python per line: a walk costs its own length (in C,
    :func:`logichunk.native.walk`, where it is compiled)."""
    if at.size == 0:  # (no walk: nothing to pay a kernel call for)
        return np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0, bool)
    fast = native.walk(cp, at, bound, take, steps, back, note)
    if fast is not None:
        return fast
    at = at.copy()
    noted = np.zeros(at.size, dtype=bool)
    act = np.arange(at.size)
    top = cp.size - 1
    for _ in range(steps):
        c = cp[np.clip(at[act], 0, top)]
        inside = at[act] >= bound[act] if back else at[act] < bound[act]
        ok = inside & _in_table(take, c)
        act, c = act[ok], c[ok]
        if act.size == 0:
            break
        if note is not None:
            noted[act] |= _in_table(note, c)
        at[act] += -1 if back else 1
    more = np.zeros(at.size, dtype=bool)
    more[act] = True
    return at, more, noted


def _chars_table(chars: str) -> np.ndarray:
    """A bool table by code point of the set ``chars`` (what :func:`_walk` takes and notes)."""
    table = np.zeros(max(map(ord, chars)) + 1, dtype=bool)
    table[[ord(c) for c in chars]] = True
    return table

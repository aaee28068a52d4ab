"""Dotted hierarchical ids (``1``, ``1.2``, ``1.2.3``): parsing and relations, no tree needed."""

from __future__ import annotations

import numpy as np

from .errors import InputError


def parse_id(chunk_id: str) -> tuple[int, ...]:
    """``"1.2.3" -> (1, 2, 3)``; every part a positive integer."""
    if not isinstance(chunk_id, str):
        raise InputError(f"not a dotted chunk id: {chunk_id!r} (ids are strings, such as '1' or '1.2')")
    try:
        parts = tuple(int(p) for p in chunk_id.split("."))
    except ValueError:
        raise InputError(f"not a dotted chunk id: {chunk_id!r}") from None
    if not parts or any(p < 1 for p in parts):
        raise InputError(f"not a dotted chunk id: {chunk_id!r}")
    return parts


def make_id(parent: str | None, ordinal: int) -> str:
    """Id of the ``ordinal``-th (1-based) child of ``parent`` (``None`` = the document root)."""
    return str(ordinal) if parent is None else f"{parent}.{ordinal}"


def child_ids(parents: np.ndarray | None, piece: np.ndarray, ordinal: np.ndarray) -> np.ndarray:
    """:func:`make_id` for many children at once, as an object array: the ``ordinal[k]``-th child of
    ``parents[piece[k]]`` (``parents`` an object array of ids; ``None``: children of the root). Each
    ordinal's string is made once and numpy joins them: a chunker names tens of thousands of chunks
    per megabyte."""
    if ordinal.size == 0:
        return np.zeros(0, dtype=object)
    digits = np.array([str(k) for k in range(int(ordinal.max()) + 1)], dtype=object)[ordinal]
    return digits if parents is None else (parents + ".")[piece] + digits


def depth(chunk_id: str) -> int:
    return len(parse_id(chunk_id))


def parent_of(chunk_id: str) -> str | None:
    parse_id(chunk_id)
    head, sep, _ = chunk_id.rpartition(".")
    return head if sep else None


def ancestors_of(chunk_id: str) -> list[str]:
    """Nearest first: ``"1.2.3" -> ["1.2", "1"]``."""
    parts = parse_id(chunk_id)
    return [".".join(map(str, parts[:k])) for k in range(len(parts) - 1, 0, -1)]


def is_ancestor(a: str, b: str) -> bool:
    """True when ``a`` is a strict ancestor of ``b``."""
    pa, pb = parse_id(a), parse_id(b)
    return len(pa) < len(pb) and pb[: len(pa)] == pa


def sort_key(chunk_id: str) -> tuple[int, ...]:
    """Document order (pre-order) of ids: ``1 < 1.1 < 1.2 < 2``."""
    return parse_id(chunk_id)

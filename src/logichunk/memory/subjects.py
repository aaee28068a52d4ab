"""A conversation's stored topic subjects as one matrix, for the archive's links (:mod:`.resume`).

The archiver links each topic it archives to the earlier topic it resumes, over every earlier topic of
the conversation in the store. Read and decoded anew for each archive, and compared one by one in
Python, those subjects cost a long conversation time quadratic in its topics (with the hash embedder,
3 s of a 5,000-turn replay's 10 s, 13 s of a 10,000-turn one's 31 s: ``bench/bench_memory_archive.py``).
:class:`StoredSubjects` keeps them as one matrix, so a link is one matrix product, and reads only the
rows it does not hold yet (0.6 s and 2 s).

Held across calls, it is still derived from what the store says in the same call, never trusted on its
own: each call reads the conversation's list of (topic number, document id) (no vectors), and the matrix
is rebuilt to that list. A document id names one ``memory_topics`` row for good: rows are inserted and
deleted (with their document), never updated, and a topic archived again, under its old number or
not, is a new document with a new id. So a row held for an id is that row's subject; a deleted topic's
id is not in the list and its row is dropped; any topic written since, by this process or another, is
read. Nothing any writer does can leave the matrix stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["StoredSubjects"]

_READ_IDS = 500  # document ids per query when reading the rows not held (under every dialect's parameter limit)


@dataclass(frozen=True)
class _Held:
    """The rows held for one (conversation, model, dimension): ``buf[:len(documents)]``, in ``documents``
    order (``buf`` has room for more: a row appended is one copy, not a new matrix)."""

    documents: list[str]
    buf: np.ndarray


class StoredSubjects:
    """The subjects of the conversations' stored topics (see the module docstring), per (conversation,
    embedder model, dimension)."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, str, int], _Held] = {}

    def read(self, store: Any, conv: str, model: str, dim: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """(topic numbers, subjects: one row each, document ids) of the topics of ``conv`` that ``store``
        holds now with a subject of ``dim`` floats made by ``model``, in topic order."""
        rows = store._q("SELECT topic_no, document_id FROM memory_topics WHERE project_id = ? AND conversation_id = ? "
                        "AND model_id = ? AND subject IS NOT NULL AND LENGTH(subject) = ? ORDER BY topic_no",
                        (store.project_id, conv, model, 4 * dim))
        docs = [str(r[1]) for r in rows]
        key = (conv, model, dim)
        held = self._held.get(key)
        if held is None or held.documents != docs[: len(held.documents)]:
            held = self._rebuilt(held, docs, dim)  # (a topic deleted, or one written before the last held)
        if len(held.documents) < len(docs):
            held = self._appended(store, held, docs[len(held.documents):], dim)
        if len(held.documents) < len(docs):  # (one deleted by another process between the two reads)
            gone = set(docs) - set(held.documents)
            rows = [r for r in rows if str(r[1]) not in gone]
        self._held[key] = held
        return (np.asarray([int(r[0]) for r in rows], np.int64), held.buf[: len(held.documents)],
                list(held.documents))

    def _rebuilt(self, held: _Held | None, docs: list[str], dim: int) -> _Held:
        """The rows of ``docs`` held already, in the order of ``docs``, up to the first one not held."""
        at = {} if held is None else {d: i for i, d in enumerate(held.documents)}
        keep: list[str] = []
        for d in docs:
            if d not in at:
                break
            keep.append(d)
        buf = np.empty((max(2 * len(docs), 16), dim), np.float32)
        if keep and held is not None:
            buf[: len(keep)] = held.buf[[at[d] for d in keep]]
        return _Held(keep, buf)

    @staticmethod
    def _appended(store: Any, held: _Held, new: Sequence[str], dim: int) -> _Held:
        """``held`` with the rows of ``new`` read from the store and appended (those found: one may have
        been deleted since the list was read)."""
        got: dict[str, bytes] = {}
        for k in range(0, len(new), _READ_IDS):
            part = list(new[k : k + _READ_IDS])
            marks = ", ".join("?" * len(part))
            for d, v in store._q(f"SELECT document_id, subject FROM memory_topics WHERE document_id IN ({marks})",
                                 part):
                got[str(d)] = bytes(v)
        found = [d for d in new if d in got]
        n = len(held.documents)
        buf = held.buf
        if n + len(found) > len(buf):
            buf = np.empty((2 * (n + len(found)), dim), np.float32)
            buf[:n] = held.buf[:n]
        if found:
            buf[n : n + len(found)] = np.frombuffer(b"".join(got[d] for d in found), dtype="<f4").reshape(-1, dim)
        return _Held(held.documents + found, buf)

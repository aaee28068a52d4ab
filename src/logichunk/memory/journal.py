"""The open turns of a conversation, kept in the store as they arrive (``memory_session_turns``).

Why: a turn lives only in the perception's memory until its topic is archived, so a process that dies
between two flushes lost every turn of its open topics, and the next process numbered on from the
last archived turn as if they never were. Written here before it is observed, a turn survives the
process: the next perception of the conversation observes the stored turns again and carries on. The
library's :class:`~logichunk.memory.perception.Perception` (given a store) and the MCP server's
conversations (:mod:`logichunk.integrations.conversations`) keep the same table through these
functions. The Perception drops a topic's turns from it as soon as the topic is archived (they are in
``memory_turns``), so it holds the open topics only, flushed or not; the MCP server drops a session's
turns when the session ends.

Beside the turns, the Perception keeps its **state** at the moment it last dropped some
(``memory_session_state``, one row a conversation: :func:`save_state`): the open topics' turns alone do not
make the decisions an uninterrupted run makes on them (the kernel, the lexical window and the review read
the turns before, which are archived), so a perception resumed from the turns alone cut the open topics
differently (a topic 4-7 became 4-6 and 7). Resumed from that state and the turns written after it, it
decides as if the process had never stopped.
"""

from __future__ import annotations

import json
import time
import weakref
from typing import Any

from ..store import StoreError, schema
from .archive import _ensure_tables
from .block import LogicalBlock

__all__ = ["TurnTaken", "drop", "ensure_table", "load_state", "rows", "save_state", "stamp", "write"]


class TurnTaken(StoreError):
    """A turn number the store holds already for the conversation: another writer (a second Perception or
    process on the same ``conversation_id``) numbered turns there since this one read the store. Not a
    passing failure to retry: the turns written under it would be cut from the archive as archived already."""

_TABLE = """CREATE TABLE IF NOT EXISTS memory_session_turns (
    project_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    turn_no {INT} NOT NULL,
    data TEXT NOT NULL,
    created_at {REAL} NOT NULL,
    PRIMARY KEY (project_id, conversation_id, turn_no)
)"""
_STATE = """CREATE TABLE IF NOT EXISTS memory_session_state (
    project_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at {REAL} NOT NULL,
    PRIMARY KEY (project_id, conversation_id)
)"""
_ready: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def ensure_table(store: Any) -> None:
    """Create the table on first use (not when a store opens: a read-only database still searches)."""
    if not _ready.get(store):
        with store.tx():
            store._x(_TABLE.format(**schema.DIALECTS[store.dialect]))
            store._x(_STATE.format(**schema.DIALECTS[store.dialect]))
        _ready[store] = True


def rows(store: Any, conv: str, start: int = 0) -> list[tuple[int, LogicalBlock]]:
    """The stored open turns of ``conv`` from turn ``start`` on: ``(turn number, block)`` in order. (``start``:
    MCP's ``recall`` shows the turns after the archived ones, and a session the server keeps whole until it ends
    may hold thousands before them.)"""
    ensure_table(store)
    got = store._q("SELECT turn_no, data FROM memory_session_turns WHERE project_id = ? AND conversation_id = ? "
                   "AND turn_no >= ? ORDER BY turn_no", (store.project_id, conv, start))
    return [(int(n), LogicalBlock.from_dict(json.loads(d))) for n, d in got]


def write(store: Any, conv: str, turns: list[tuple[int, LogicalBlock]]) -> None:
    """Store ``(turn number, block)`` pairs of ``conv``, all or none (one transaction); :class:`TurnTaken` when
    the store holds a turn at or after the first of them (open or archived): checked in the transaction that
    writes them, with the project's writers held off (:meth:`~logichunk.store.Store.lock_documents`), so two writers
    of one conversation cannot both take a number and one lose its turns."""
    ensure_table(store)
    if not turns:
        return
    _ensure_tables(store)
    with store.tx():
        # (PostgreSQL: hold off the project's other writers from the check to the commit — two writers' checks both
        # passed there, and the second's insert failed on the key, its turn kept in memory and never stored)
        store.lock_documents()
        first = min(n for n, _ in turns)
        held = store._q("SELECT MAX(turn_no) FROM memory_session_turns WHERE project_id = ? AND conversation_id = ?",
                        (store.project_id, conv))[0][0]
        done = store._q("SELECT MAX(end_turn) FROM memory_topics WHERE project_id = ? AND conversation_id = ?",
                        (store.project_id, conv))[0][0]
        last = max((int(x) for x in (held, done) if x is not None), default=-1)
        if first <= last:
            raise TurnTaken(f"conversation {conv!r}: turn {first} is taken (the store holds its turns up to {last}): "
                            "another writer is on this conversation at the same time; give each writer its own "
                            "conversation_id, or send the turns through one server (logichunk mcp), which numbers them")
        store._xmany("INSERT INTO memory_session_turns(project_id, conversation_id, turn_no, data, created_at) "
                     "VALUES (?, ?, ?, ?, ?)",
                     [(store.project_id, conv, n, json.dumps(b.to_dict(), ensure_ascii=False), time.time())
                      for n, b in turns])


def drop(store: Any, conv: str, before: int | None = None) -> None:
    """Forget the turns of ``conv`` numbered before ``before`` (archived now); a turn written after them stays.
    ``None``: all of them and the saved state (the conversation deleted, :mod:`.forget`)."""
    ensure_table(store)
    if before is None:
        with store.tx():
            store._x("DELETE FROM memory_session_turns WHERE project_id = ? AND conversation_id = ?",
                     (store.project_id, conv))
            store._x("DELETE FROM memory_session_state WHERE project_id = ? AND conversation_id = ?",
                     (store.project_id, conv))
        return
    store._x("DELETE FROM memory_session_turns WHERE project_id = ? AND conversation_id = ? AND turn_no < ?",
             (store.project_id, conv, before))


def stamp(store: Any, conv: str) -> tuple[int, int | None, int | None]:
    """(count, first, last) of the stored open turns of ``conv``: what tells a cached perception stale (another
    process wrote or archived turns of the conversation since)."""
    ensure_table(store)
    n, lo, hi = store._q("SELECT COUNT(*), MIN(turn_no), MAX(turn_no) FROM memory_session_turns "
                         "WHERE project_id = ? AND conversation_id = ?", (store.project_id, conv))[0]
    return int(n), None if lo is None else int(lo), None if hi is None else int(hi)


def save_state(store: Any, conv: str, before: int, state: dict[str, Any] | None) -> None:
    """:func:`drop` the turns before ``before`` and keep ``state`` (JSON) as the conversation's saved
    perception state, replacing the one before (``None``: none kept), in one transaction: a state never
    stands beside turns it does not match."""
    ensure_table(store)
    with store.tx():
        store._x("DELETE FROM memory_session_turns WHERE project_id = ? AND conversation_id = ? AND turn_no < ?",
                 (store.project_id, conv, before))
        store._x("DELETE FROM memory_session_state WHERE project_id = ? AND conversation_id = ?", (store.project_id, conv))
        if state is not None:
            store._x("INSERT INTO memory_session_state(project_id, conversation_id, data, created_at) VALUES (?, ?, ?, ?)",
                     (store.project_id, conv, json.dumps(state, ensure_ascii=False), time.time()))


def load_state(store: Any, conv: str) -> dict[str, Any] | None:
    """The saved perception state of ``conv`` (:func:`save_state`), or None. (Whether it still matches the
    stored turns is the reader's check: another writer may have carried the conversation on since.)"""
    ensure_table(store)
    got = store._q("SELECT data FROM memory_session_state WHERE project_id = ? AND conversation_id = ?",
                   (store.project_id, conv))
    return json.loads(got[0][0]) if got else None

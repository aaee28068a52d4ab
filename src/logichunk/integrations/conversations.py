"""Conversation memory for agents that come and go: one :class:`~logichunk.memory.Perception` per
open conversation, with the turns of its open topics kept in the store, so a server restarted
between two turns carries on where it stopped.

Finished topics are archived by the perception itself (:mod:`logichunk.memory.archive`: one document
per topic, the exact turns beside it). What a perception holds in memory is only the turns not yet
in an archived topic; they are written to ``memory_open_turns`` as they arrive and dropped once
archived. After a restart, the first call about a conversation rebuilds its perception by observing
those turns again (the embedder is deterministic, so the same decisions come back; a topic the
replay finds finished is archived then). Turn and topic numbers count over the whole
conversation, archived turns included.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from ..errors import InputError
from ..memory import LogicalBlock, Perception, load_conversation, search_topics, topics
from ..store import schema
from .kb import Limits, Project, check_text, plain

_TABLE = """CREATE TABLE IF NOT EXISTS memory_open_turns (
    project_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    turn_no {INT} NOT NULL,
    data TEXT NOT NULL,
    created_at {REAL} NOT NULL,
    PRIMARY KEY (project_id, conversation_id, turn_no)
)"""
RECALL_MODES = ("hybrid", "basic", "parent", "hierarchical", "kernel")
MAX_ID_CHARS = 200


def check_conversation_id(conv: Any) -> str:
    if not isinstance(conv, str) or not conv.strip():
        raise InputError("conversation_id is empty")
    if len(conv) > MAX_ID_CHARS:
        raise InputError(f"conversation_id is {len(conv)} characters; at most {MAX_ID_CHARS}")
    return conv


class _Open:
    """A live conversation: its perception and where its numbering starts."""

    def __init__(self, perception: Perception, turn0: int, topic0: int) -> None:
        self.p = perception
        self.turn0 = turn0  # archived turns before this perception's first turn
        self.topic0 = topic0


class Conversations:
    """The memory tools (remember, recall, end) over one project's store. Thread-safe (one lock:
    a turn is one embedding and a few vector operations)."""

    def __init__(self, project: Project, limits: Limits, *, calibration: Any = None) -> None:
        self.project = project
        self.limits = limits
        self.calibration = calibration
        self._lock = threading.RLock()
        self._open: dict[str, _Open] = {}
        self._ready = False

    def _ensure_table(self) -> None:
        """Created on first use, not at start: a server over a read-only database still searches."""
        if not self._ready:
            store = self.project.store
            with store.tx():
                store._x(_TABLE.format(**schema.DIALECTS[store.dialect]))
            self._ready = True

    # ------------------------------------------------------------------ the stored open turns
    def _rows(self, conv: str) -> list[tuple[int, LogicalBlock]]:
        self._ensure_table()
        rows = self.project.store._q("SELECT turn_no, data FROM memory_open_turns WHERE project_id = ? AND "
                                     "conversation_id = ? ORDER BY turn_no", (self.project.store.project_id, conv))
        return [(int(n), LogicalBlock.from_dict(json.loads(d))) for n, d in rows]

    def _prune(self, conv: str, keep_from: int) -> None:
        self.project.store._x("DELETE FROM memory_open_turns WHERE project_id = ? AND conversation_id = ? AND "
                              "turn_no < ?", (self.project.store.project_id, conv, keep_from))

    def _write(self, conv: str, turn_no: int, block: LogicalBlock) -> None:
        self._ensure_table()
        self.project.store._x("INSERT INTO memory_open_turns(project_id, conversation_id, turn_no, data, created_at) "
                              "VALUES (?, ?, ?, ?, ?)", (self.project.store.project_id, conv, turn_no,
                                                          json.dumps(block.to_dict(), ensure_ascii=False), time.time()))

    def _kept_from(self, o: _Open) -> int:
        """The first turn not safely archived: the open topics', or an episode the store refused."""
        first = o.p.pending()[0]
        if o.p.unarchived:
            first = min(first, min(e.start for e in o.p.unarchived))
        return o.turn0 + first

    # ------------------------------------------------------------------ perceptions
    def _get(self, conv: str, *, create: bool) -> _Open | None:
        o = self._open.get(conv)
        if o is not None:
            return o
        store = self.project.store
        rows = self._rows(conv)
        if not rows and not create:
            return None
        p = Perception(store=store, calibration=self.calibration, conversation_id=conv)
        assert p.archiver is not None
        turn0 = p.archiver.archived_turns(conv)  # also fixes the archiver's numbering for this conversation
        done = topics(store, conv)
        o = _Open(p, turn0, max((t.index for t in done), default=-1) + 1)
        stale = [n for n, _ in rows if n < turn0]
        if stale:
            self._prune(conv, turn0)
        live = [b for n, b in rows if n >= turn0]
        if [n for n, _ in rows if n >= turn0] != list(range(turn0, turn0 + len(live))):
            # numbered anew from the archive's end (a turn lost between a crash and its archive)
            self._prune(conv, turn0 + 10**9)
            for i, b in enumerate(live):
                self._write(conv, turn0 + i, b)
        for b in live:  # rebuild: the same turns give the same decisions
            p.observe(b)
        self._open[conv] = o
        if live:
            self._prune(conv, self._kept_from(o))
        return o

    def _episode(self, o: _Open, conv: str, ep: Any) -> dict[str, Any]:
        return {"topic": o.topic0 + ep.index, "turns": [o.turn0 + ep.start, o.turn0 + ep.end], "title": ep.title,
                "document_id": ep.document_id, "archived": ep.document_id is not None}

    # ------------------------------------------------------------------ tools
    def remember(self, conversation_id: str, user: str, assistant: str = "",
                 rewritten_query: str | None = None) -> dict[str, Any]:
        conv = check_conversation_id(conversation_id)
        lim = self.limits.max_text_chars
        if not isinstance(user, str) or not user.strip():
            raise InputError("user is empty: pass the user's message of this turn")
        check_text(user, "user", lim)
        if not isinstance(assistant, str):
            raise InputError("assistant must be a string")
        if assistant:
            check_text(assistant, "assistant", lim)
        if rewritten_query is not None and rewritten_query.strip():
            check_text(rewritten_query, "rewritten_query", self.limits.max_query_chars)
        else:
            rewritten_query = None
        block = LogicalBlock(user=user, assistant=assistant, rewritten_query=rewritten_query, started_at=time.time())
        with self._lock:
            o = self._get(conv, create=True)
            assert o is not None
            if o.p.unarchived:
                o.p.retry_archive()
            turn = o.turn0 + o.p.turns_observed
            self._write(conv, turn, block)  # first: a crash inside observe() loses nothing
            d = o.p.observe(block)
            self._prune(conv, self._kept_from(o))
            out: dict[str, Any] = {
                "conversation_id": conv, "turn": turn, "decision": str(d.action),
                "decided_by": str(d.step) + (f":{d.arbiter}" if d.arbiter else ""), "score": plain(round(d.score, 4)),
                "similarity": plain(None if d.similarity is None else round(d.similarity, 4)),
                "topic": o.topic0 + d.topic, "reason": d.reason,
                "revisions": [{**r.to_dict(), "turn": o.turn0 + r.turn} for r in d.revisions],
                "archived": [self._episode(o, conv, e) for e in d.closed],
                "open_turns": [o.turn0 + o.p.pending()[0], o.turn0 + o.p.pending()[1] - 1],
            }
            if o.p.note:
                out["note"] = o.p.note
            if o.p.archive_errors:
                out["archive_errors"] = o.p.archive_errors[-3:]
            return out

    def end(self, conversation_id: str) -> dict[str, Any]:
        conv = check_conversation_id(conversation_id)
        with self._lock:
            o = self._get(conv, create=False)
            if o is None:
                done = topics(self.project.store, conv)
                if not done:
                    raise InputError(f"no conversation {conv!r} in this project (remember a turn first)")
                return {"conversation_id": conv, "archived": [], "topics": len(done),
                        "note": "nothing was pending: every turn of this conversation is archived already"}
            eps = o.p.flush()
            keep = self._kept_from(o) if o.p.unarchived else o.turn0 + 10**9
            self._prune(conv, keep)
            out: dict[str, Any] = {"conversation_id": conv, "archived": [self._episode(o, conv, e) for e in eps],
                                   "revisions": [{**r.to_dict(), "turn": o.turn0 + r.turn} for r in o.p.flush_revisions],
                                   "topics": len(topics(self.project.store, conv))}
            if o.p.unarchived:
                out["archive_errors"] = o.p.archive_errors[-3:]
            del self._open[conv]
            return out

    def recall(self, query: str, conversation_id: str | None = None, top_k: int = 5,
               mode: str = "hybrid") -> dict[str, Any]:
        query = check_text(query, "query", self.limits.max_query_chars)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= self.limits.max_top_k:
            raise InputError(f"top_k must be an integer from 1 to {self.limits.max_top_k}, got {top_k!r}")
        if mode not in RECALL_MODES:
            raise InputError(f"unknown mode {mode!r}: use one of {', '.join(RECALL_MODES)}")
        conv = None if conversation_id is None else check_conversation_id(conversation_id)
        store = self.project.store
        with self.project.lock:
            hits = search_topics(store, query, top_k, mode=mode, conversation_id=conv)
        turns_of: dict[str, list[LogicalBlock] | None] = {}
        firsts: dict[str, int] = {}
        episodes = []
        for h in hits:
            t = h.topic
            c = t.conversation_id
            if c not in turns_of:
                try:
                    turns_of[c] = load_conversation(store, c)
                    firsts[c] = min(x.start for x in topics(store, c))
                except InputError:  # a topic of it was deleted: its turns are not contiguous any more
                    turns_of[c] = None
            blocks = turns_of[c]
            exchanges = None
            if blocks is not None:
                a = t.start - firsts[c]
                exchanges = [_exchange(t.start + i, b) for i, b in enumerate(blocks[a : a + t.turns])]
            episodes.append({"conversation_id": c, "topic": t.index, "title": t.title, "turns": [t.start, t.end],
                             "score": round(float(h.score), 4), "matched_text": h.text, "document_id": t.document_id,
                             "started_at": t.started_at, "ended_at": t.ended_at, "exchanges": exchanges})
        out: dict[str, Any] = {"query": query, "mode": mode, "episodes": episodes}
        if conv is not None:
            with self._lock:
                rows = self._rows(conv)
            if rows:  # the open topic is not archived (searchable) yet: its turns, for the agent to read
                out["open_turns"] = [_exchange(n, b) for n, b in rows]
        return out


def _exchange(turn: int, b: LogicalBlock) -> dict[str, Any]:
    d: dict[str, Any] = {"turn": turn, "user": b.user, "assistant": b.assistant}
    if b.rewritten_query is not None:
        d["rewritten_query"] = b.rewritten_query
    return d

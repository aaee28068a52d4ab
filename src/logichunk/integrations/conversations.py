"""Conversation memory for agents that come and go: one :class:`~logichunk.memory.Perception` per
open conversation, its turns kept in the store as they arrive, so a server restarted between two
turns carries on exactly where it stopped.

A *session* of a conversation runs from its first ``remember`` to ``end_conversation`` (after which
a later ``remember`` opens a new session that continues the numbering, as the library's
:class:`~logichunk.memory.archive.Archiver` does for a conversation continued by a new perception).
Every turn of the open session is written to ``memory_session_turns`` before it is observed.
Finished topics are archived by the perception (:mod:`logichunk.memory.archive`: one document per
topic, the exact turns beside it). After a restart, the first call about a conversation rebuilds its
perception by observing the session's turns again, with their anchors embedded in one batch: the
embedder and the rules are deterministic, so the rebuilt perception holds the state the lost one
held (the same decisions, the same kernel and lexical window), and topics it closes on the way that
were archived before are recognised by their first turn, not archived twice. Turn and topic numbers
count over the whole conversation.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..memory import (
    Archiver,
    LogicalBlock,
    Perception,
    anchor_text,
    is_filler,
    load_conversation,
    search_topics,
    topics,
)
from ..store import schema
from .kb import Limits, Project, check_text, plain

_TABLE = """CREATE TABLE IF NOT EXISTS memory_session_turns (
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


def _next_topic(store: Any, conv: str, before_turn: int | None = None) -> int:
    done = [t.index for t in topics(store, conv) if before_turn is None or t.start < before_turn]
    return max(done, default=-1) + 1


class SessionArchiver:
    """The archiver a session's perception uses: episodes numbered from the session's start are
    archived under the conversation's own numbers, and an episode archived before a restart (met
    again while the session is replayed) is not archived twice."""

    def __init__(self, store: Any, conv: str, session_start: int, session_topic: int, kernel_model: str | None) -> None:
        self.store = store
        self.conversation_id = conv
        self.start = session_start  # the session's first turn, in conversation numbers
        self.topic = session_topic  # the session's first topic number
        self.inner = Archiver(store, conv, kernel_model=kernel_model)
        self.turns0 = self.inner.archived_turns(conv)  # fixes the inner archiver's numbering
        self.topics0 = _next_topic(store, conv)
        self.errors = self.inner.errors

    def archive(self, ep: Any) -> str | None:
        start = self.start + ep.start
        if start < self.turns0:  # met again in a replay: archived before the restart
            done = {t.start: t.document_id for t in topics(self.store, self.conversation_id)}
            if start + len(ep.blocks) <= self.turns0:
                return done.get(start)
            cut = self.turns0 - start  # (only if the replay decided otherwise: keep the turns not archived)
            ep, start = replace(ep, start=ep.start + cut, blocks=ep.blocks[cut:]), self.turns0
        return self.inner.archive(replace(ep, start=start - self.turns0, index=self.topic + ep.index - self.topics0))


class _Open:
    """A live conversation session."""

    def __init__(self, perception: Perception, archiver: SessionArchiver) -> None:
        self.p = perception
        self.archiver = archiver

    @property
    def turn0(self) -> int:
        return self.archiver.start

    @property
    def topic0(self) -> int:
        return self.archiver.topic


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

    # ------------------------------------------------------------------ the stored session turns
    def _ensure_table(self) -> None:
        """Created on first use, not at start: a server over a read-only database still searches."""
        if not self._ready:
            store = self.project.store
            with store.tx():
                store._x(_TABLE.format(**schema.DIALECTS[store.dialect]))
            self._ready = True

    def _rows(self, conv: str) -> list[tuple[int, LogicalBlock]]:
        self._ensure_table()
        rows = self.project.store._q("SELECT turn_no, data FROM memory_session_turns WHERE project_id = ? AND "
                                     "conversation_id = ? ORDER BY turn_no", (self.project.store.project_id, conv))
        return [(int(n), LogicalBlock.from_dict(json.loads(d))) for n, d in rows]

    def _write(self, conv: str, turn_no: int, block: LogicalBlock) -> None:
        self._ensure_table()
        self.project.store._x("INSERT INTO memory_session_turns(project_id, conversation_id, turn_no, data, "
                              "created_at) VALUES (?, ?, ?, ?, ?)",
                              (self.project.store.project_id, conv, turn_no,
                               json.dumps(block.to_dict(), ensure_ascii=False), time.time()))

    def _drop(self, conv: str) -> None:
        self._ensure_table()
        self.project.store._x("DELETE FROM memory_session_turns WHERE project_id = ? AND conversation_id = ?",
                              (self.project.store.project_id, conv))

    # ------------------------------------------------------------------ perceptions
    def _get(self, conv: str, *, create: bool) -> _Open | None:
        o = self._open.get(conv)
        if o is not None:
            return o
        store = self.project.store
        rows = self._rows(conv)
        if not rows and not create:
            return None
        embedder = store.embedder
        model = str(getattr(embedder, "model_id", "")) or None
        if rows:
            start = rows[0][0]
            if [n for n, _ in rows] != list(range(start, start + len(rows))):
                raise InputError(f"conversation {conv!r}: its stored session has missing turns; "
                                 "end_conversation closes it")
        else:
            start = Archiver(store, conv).archived_turns(conv)
        archiver = SessionArchiver(store, conv, start, _next_topic(store, conv, start), model)
        p = Perception(embedder=embedder, calibration=self.calibration, conversation_id=conv, archiver=archiver)
        self._replay(p, [b for _, b in rows])
        o = self._open[conv] = _Open(p, archiver)
        return o

    @staticmethod
    def _replay(p: Perception, blocks: list[LogicalBlock]) -> None:
        """Observe the stored turns again, their anchors embedded in one batch (the texts the
        perception embeds one at a time; a model may differ in the last float bits between a batch
        and single texts, the hash embedder not at all)."""
        if not blocks:
            return
        short = p.calibration.short_tokens
        need = [i for i, b in enumerate(blocks) if not is_filler(b.query, short)[0]]
        vecs: dict[int, np.ndarray] = {}
        if need:
            anchors = [anchor_text(blocks[i], blocks[i - 1] if i else None) for i in need]
            arr = np.asarray(p.embedder.embed(anchors, kind="query"), dtype=np.float32)
            vecs = dict(zip(need, arr, strict=True))
        for i, b in enumerate(blocks):
            p.observe(b, vector=vecs.get(i))

    def _episode(self, o: _Open, ep: Any) -> dict[str, Any]:
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
            try:
                d = o.p.observe(block)
            except BaseException:
                self._open.pop(conv, None)  # rebuilt from the store (this turn included) on the next call
                raise
            first, end = o.p.pending()
            out: dict[str, Any] = {
                "conversation_id": conv, "turn": turn, "decision": str(d.action),
                "decided_by": str(d.step) + (f":{d.arbiter}" if d.arbiter else ""), "score": plain(round(d.score, 4)),
                "similarity": plain(None if d.similarity is None else round(d.similarity, 4)),
                "topic": o.topic0 + d.topic, "reason": d.reason,
                "revisions": [{**r.to_dict(), "turn": o.turn0 + r.turn} for r in d.revisions],
                "archived": [self._episode(o, e) for e in d.closed],
                "open_turns": [o.turn0 + first, o.turn0 + end - 1],
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
                return {"conversation_id": conv, "archived": [], "revisions": [], "topics": len(done),
                        "note": "nothing was pending: every turn of this conversation is archived already"}
            eps = o.p.flush()
            out: dict[str, Any] = {"conversation_id": conv, "archived": [self._episode(o, e) for e in eps],
                                   "revisions": [{**r.to_dict(), "turn": o.turn0 + r.turn} for r in o.p.flush_revisions],
                                   "topics": len(topics(self.project.store, conv))}
            del self._open[conv]
            if o.p.unarchived:  # the store refused a topic: the session stays stored, retried on the next call
                out["archive_errors"] = o.p.archive_errors[-3:]
            else:
                self._drop(conv)
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
                archived = max((t.end for t in topics(store, conv)), default=-1)
                rows = [(n, b) for n, b in self._rows(conv) if n > archived]
            if rows:  # the open topics are not archived (searchable) yet: their turns, for the agent to read
                out["open_turns"] = [_exchange(n, b) for n, b in rows]
        return out


def _exchange(turn: int, b: LogicalBlock) -> dict[str, Any]:
    d: dict[str, Any] = {"turn": turn, "user": b.user, "assistant": b.assistant}
    if b.rewritten_query is not None:
        d["rewritten_query"] = b.rewritten_query
    return d

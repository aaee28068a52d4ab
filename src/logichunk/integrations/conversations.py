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

Several processes may serve one database (two agents on ``~/kb.db``, ``serve`` beside ``mcp``): a turn
is numbered, written, observed and its finished topics archived in one write transaction holding the
project's lock (:meth:`~logichunk.store.Store.lock_documents`; SQLite waits for it, ``busy_timeout``),
and a perception is kept only while the stored session is the one it observed, else rebuilt from the
store first. So every process numbers on from what the store holds: no turn is lost, none numbered
twice, no topic archived twice. (Topics are re-chunked after the transaction, outside the lock.)
"""

from __future__ import annotations

import bisect
import math
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..errors import InputError, LogichunkError, check_choice
from ..index.bm25 import BM25Index, tokenize
from ..memory import (
    Archiver,
    LogicalBlock,
    Perception,
    is_filler,
    journal,
    observe_many,
    search_topics,
    topics,
)
from ..memory.archive import (
    MAX_ID_CHARS,
    TOPIC_CUT_VECTORS,
    _ensure_tables,
    check_conversation_id,
    render_block,
    topic_turns,
)
from ..memory.block import check_turn_text, tool_calls_of
from ..memory.episode import decision_json, topic_json
from ..memory.forget import forget
from ..memory.resume import threshold_of
from ..text.han_fold import fold_han
from .kb import Limits, Project, _check_top_k, check_text

RECALL_MODES = ("hybrid", "basic", "parent", "hierarchical", "kernel")
RECALL_CHARS = 8000  # default bound on the text of one recall result (a topic's exchanges, or the open turns)
__all__ = ["MAX_ID_CHARS", "RECALL_CHARS", "RECALL_MODES", "Conversations", "check_conversation_id",
           "server_calibration"]


def server_calibration(path: str | None, embedder: Any) -> tuple[Any, str]:
    """The calibration a memory server's conversations use, and the line saying which, with the links'
    threshold: the file at ``path`` (setting ``memory_calibration``, ``--calibration``; checked against the
    embedder: one line, not a traceback, when it was fitted for another), whose thresholds the perceptions
    and the archive's links both take; else None, and each perception and its archiver take the shipped
    calibration for the embedder (the same one)."""
    from ..memory.evaluate import load_calibration

    cal, note = load_calibration(path or None, embedder)
    return (cal if path else None), f"{note}, resume threshold {threshold_of(cal):g}"


def _next_topic(store: Any, conv: str, before_turn: int | None = None) -> int:
    done = [t.index for t in topics(store, conv) if before_turn is None or t.start < before_turn]
    return max(done, default=-1) + 1


def _archived_upto(store: Any, conv: str) -> int:
    """The first turn of the conversation not archived yet, as the store holds it now (one row read, not its
    topics: recall and remember ask it on every call)."""
    _ensure_tables(store)
    row = store._q("SELECT MAX(end_turn) FROM memory_topics WHERE project_id = ? AND conversation_id = ?",
                   (store.project_id, conv))
    return 0 if not row or row[0][0] is None else int(row[0][0]) + 1


class SessionArchiver:
    """The archiver a session's perception uses: episodes numbered from the session's start are
    archived under the conversation's own numbers, and an episode archived before (by this process
    before a restart, or by another process on the same database, met again while the session is
    replayed) is not archived twice: what is archived is read from the store at each archive, under
    the project's lock, by the library's :class:`~logichunk.memory.archive.Archiver` (its ``start=``
    path: one replay check for both). Topics are stored unchunked; :meth:`rechunk` indexes them after
    the write transaction, so the lock is not held while their chunks are embedded."""

    def __init__(self, store: Any, conv: str, session_start: int, session_topic: int, kernel_model: str | None,
                 resume_threshold: float | None = None) -> None:
        self.store = store
        self.conversation_id = conv
        self.start = session_start  # the session's first turn, in conversation numbers
        self.topic = session_topic  # the session's first topic number
        self.kernel_model = kernel_model
        self.errors: list[str] = []
        self.pending: list[tuple[int, str]] = []  # (topic number, document) archived, not chunked yet
        self.stored: dict[int, int] = {}  # the session's topic index -> its number as stored (archived or met again)
        # (the links' threshold the session's calibration's, as a perception's own archiver takes it; None: the
        # shipped calibration's for the kernels' model, which a perception without one uses too)
        self._inner = Archiver(store, conv, rechunk=False, kernel_model=kernel_model, resume_threshold=resume_threshold)

    @property
    def links(self) -> dict[str, Any]:
        """Per document archived or met again: the stored topic it resumes (memory/resume.py)."""
        return self._inner.links

    @property
    def numbers(self) -> dict[str, tuple[int, int, int]]:
        """Per document archived or met again: (topic number, first turn, last turn) as stored."""
        return self._inner.numbers

    def archive(self, ep: Any) -> str:
        s = self.store
        fresh = len(self._inner.documents)
        with s.tx():
            s.lock_documents()
            doc = self._inner.archive(ep, start=self.start + ep.start, index=self.topic + ep.index)
        self.stored[ep.index] = self.numbers[doc][0]
        if len(self._inner.documents) > fresh:  # (archived now, not met again)
            self.pending.append((self.numbers[doc][0], doc))
        return doc

    def number(self, index: int) -> int:
        """The conversation's number of the session's topic ``index``: the stored one once archived, else the one
        :meth:`~logichunk.memory.archive.Archiver.archive` will store it under now: its own (the session's first
        number plus ``index``), bumped past the conversation's last stored topic, after the session's topics
        before it that wait too (another writer may have taken numbers meanwhile). So ``remember``'s open topic
        and the topics it archives count alike."""
        if index in self.stored:
            return self.stored[index]
        before = max((i for i in self.stored if i < index), default=-1)
        row = self.store._q("SELECT MAX(topic_no) FROM memory_topics WHERE project_id = ? AND conversation_id = ?",
                            (self.store.project_id, self.conversation_id))
        last = row[0][0] if row else None
        return max(self.topic + index, (-1 if last is None else int(last)) + index - before)

    def rechunk(self) -> list[str]:
        """Chunk and embed the topics archived since the last call (after the transaction); returns the
        failures, each in one line (the topic stays stored, its blocks dirty for ``rechunk_dirty()``)."""
        todo, self.pending = self.pending, []
        failed = []
        for topic, doc in todo:
            try:
                for chapter, _order, _title in self.store.chapters(doc):
                    self.store.rechunk_chapter(chapter, cut_vectors=TOPIC_CUT_VECTORS)
            except LogichunkError as e:
                failed.append(f"topic {topic} is stored but not searchable yet: {e}{PENDING_REMEDY}")
        self.errors.extend(failed)
        return failed


#: how a topic left unindexed becomes searchable (said after the error that left it so)
PENDING_REMEDY = (" — it is indexed when a memory server (logichunk mcp) starts with the project's embedder, or "
                  "by `logichunk ingest` of any folder with it")


def index_pending_topics(store: Any) -> list[str]:
    """Chunk and embed the conversation topics whose blocks wait dirty (archived by a server whose embedder
    could not index them): only :meth:`SessionArchiver.rechunk` indexed topics, its own session's, so such a
    topic stayed unrecallable for good. Returns the failures, one line each (the topic stays pending)."""
    failed = []
    for did, _title, source in store.documents():
        if not (source or "").startswith("memory:"):
            continue
        for chapter, _order, _title2 in store.chapters(did):
            if not store.blocks(chapter, dirty=True):
                continue
            try:
                store.rechunk_chapter(chapter, cut_vectors=TOPIC_CUT_VECTORS)
            except LogichunkError as e:
                failed.append(f"{source} is stored but not searchable yet: {e}{PENDING_REMEDY}")
                break
    return failed


class _Open:
    """A live conversation session."""

    def __init__(self, perception: Perception, archiver: SessionArchiver) -> None:
        self.p = perception
        self.archiver = archiver
        self.noted = False  # the perception's note (calibration) was said once

    @property
    def turn0(self) -> int:
        return self.archiver.start

    @property
    def next_turn(self) -> int:
        return self.turn0 + self.p.turns_observed


class Conversations:
    """The memory tools (remember, recall, end) over one project's store. Thread-safe (one lock: a
    turn is one embedding and a few vector operations), and safe beside other processes writing the
    same conversations (see the module docstring)."""

    def __init__(self, project: Project, limits: Limits, *, calibration: Any = None) -> None:
        self.project = project
        self.limits = limits
        self.calibration = calibration
        self._lock = threading.RLock()
        self._open: dict[str, _Open] = {}
        self._indexed = False  # topics left pending by another server: indexed once, before the first recall

    # ------------------------------------------------------------------ the stored session turns
    def _rows(self, conv: str, start: int = 0) -> list[tuple[int, LogicalBlock]]:
        return journal.rows(self.project.store, conv, start)

    def _stamp(self, conv: str) -> tuple[int, int | None, int | None]:
        """(count, first, last) of the stored session's turns: what tells a cached perception stale."""
        return journal.stamp(self.project.store, conv)

    def _write(self, conv: str, turn_no: int, block: LogicalBlock) -> None:
        journal.write(self.project.store, conv, [(turn_no, block)])

    def _drop(self, conv: str, before: int) -> None:
        """Forget the session's turns before ``before`` (archived now); a turn written after them stays."""
        journal.drop(self.project.store, conv, before)

    # ------------------------------------------------------------------ perceptions
    def _build(self, conv: str, *, create: bool) -> _Open | None:
        """A perception of the stored session (its turns observed again), or None when there is none
        and ``create`` is false."""
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
            start = _archived_upto(store, conv)
        archiver = SessionArchiver(store, conv, start, _next_topic(store, conv, start), model,
                                   None if self.calibration is None else threshold_of(self.calibration))
        p = Perception(embedder=embedder, calibration=self.calibration, conversation_id=conv, archiver=archiver)
        self._replay(p, [b for _, b in rows])
        return _Open(p, archiver)

    def _stale(self, conv: str, o: _Open) -> bool:
        """Whether the store's session is no longer the one ``o`` observed (another process wrote a turn
        or ended the conversation since)."""
        n = o.p.turns_observed
        if n == 0:
            return self._stamp(conv)[0] != 0 or _archived_upto(self.project.store, conv) != o.turn0
        return self._stamp(conv) != (n, o.turn0, o.turn0 + n - 1)

    @contextmanager
    def _writing(self, conv: str, *, create: bool) -> Iterator[_Open | None]:
        """The conversation's perception as the store holds it, inside one write transaction under the
        project's lock (call with ``self._lock`` held). A perception is rebuilt before the transaction
        when none is cached (the replay's embeddings hold no lock), and again inside it only when another
        process changed the session in between. On an error the transaction is rolled back and the
        perception dropped (it is rebuilt from the store on the next call)."""
        journal.ensure_table(self.project.store)  # (created on first use: a read-only database still searches)
        store = self.project.store
        o = self._open.get(conv) or self._build(conv, create=create)
        try:
            with store.tx():
                store.lock_documents()
                if o is None or self._stale(conv, o):
                    o = self._build(conv, create=create)
                yield o
        except BaseException:
            self._open.pop(conv, None)
            raise

    @staticmethod
    def _replay(p: Perception, blocks: list[LogicalBlock]) -> None:
        """Observe the stored turns again, their anchors embedded in one batch (:func:`observe_many`)."""
        observe_many(blocks, p)

    def _episode(self, o: _Open, ep: Any) -> dict[str, Any]:
        # (the numbers and the link as stored: a topic number taken meanwhile by another writer is bumped, turns
        # archived already are cut; the link is over the conversation's earlier sessions too)
        topic, first, last = o.archiver.numbers.get(ep.document_id) or \
            (o.archiver.number(ep.index), o.turn0 + ep.start, o.turn0 + ep.end)  # (not archived: the store refused it)
        return {**topic_json(o.archiver.conversation_id, topic, first, last, title=ep.title,
                             document_id=ep.document_id, started_at=ep.started_at, ended_at=ep.ended_at,
                             resumes=ep.resumes, resumes_document=ep.resumes_document,
                             resumes_similarity=ep.resumes_similarity),
                "archived": ep.document_id is not None}

    @staticmethod
    def _anchor_vector(o: _Open | None, block: LogicalBlock) -> tuple[str, np.ndarray | None]:
        """The anchor of ``block`` after the cached perception's last turn and its embedding, made before
        the write transaction (used only if the turn follows the same turn inside it)."""
        if o is None or is_filler(block.query, 0)[0]:
            return "", None
        anchor = o.p.anchor(block)
        try:
            return anchor, np.asarray(o.p.embedder.embed([anchor], kind="query"), np.float32)[0]
        except Exception:  # noqa: BLE001 - the perception embeds it again and says why it failed
            return "", None

    # ------------------------------------------------------------------ tools
    def remember(self, conversation_id: str, user: str, assistant: str = "",
                 rewritten_query: str | None = None, tool_calls: Any = None) -> dict[str, Any]:
        """``tool_calls``: the turn's tool calls (:func:`~logichunk.memory.block.tool_calls_of`), stored with it and
        archived in its topic's text (``Tool: name(arguments) -> result``) as the library and the CLI's files do."""
        conv = check_conversation_id(conversation_id)
        lim = self.limits.max_text_chars
        for name, v in (("user", user), ("assistant", assistant)):
            if not isinstance(v, str):
                raise InputError(f"{name} must be a string")
        if rewritten_query is not None and not isinstance(rewritten_query, str):
            raise InputError("rewritten_query must be a string")
        if rewritten_query is not None and not rewritten_query.strip():
            rewritten_query = None
        # the library's rule (a LogicalBlock's): some text on either side; a blank one (a turn awaiting its reply, a
        # greeting the assistant opens with) is taken as it is
        check_turn_text(user, assistant, rewritten_query)
        for name, v in (("user", user), ("assistant", assistant)):
            if v.strip():
                check_text(v, name, lim)
            elif len(v) > lim:
                raise InputError(f"{name} is {len(v):,} characters; this server takes at most {lim:,}")
        if rewritten_query is not None:
            check_text(rewritten_query, "rewritten_query", self.limits.max_query_chars)
        tools = tool_calls_of(tool_calls)
        if (n := sum(len(t.name) + len(t.arguments) + len(t.result) for t in tools)) > lim:
            raise InputError(f"tool_calls hold {n:,} characters; this server takes at most {lim:,}")
        block = LogicalBlock(user=user, assistant=assistant, rewritten_query=rewritten_query, tool_calls=tools,
                             started_at=time.time())
        with self._lock:
            anchor, vec = self._anchor_vector(self._open.get(conv), block)
            with self._writing(conv, create=True) as o:
                assert o is not None
                if o.p.unarchived:
                    o.p.retry_archive()
                turn = o.next_turn
                self._write(conv, turn, block)  # numbered and written in the transaction the turn is observed in
                d = o.p.observe(block, vector=vec if anchor and o.p.anchor(block) == anchor else None)
                self._open[conv] = o
            return self._remembered(conv, o, turn, d)

    def _remembered(self, conv: str, o: _Open, turn: int, d: Any) -> dict[str, Any]:
        """The answer of ``remember``: the decision in conversation numbers (topics indexed first)."""
        index_errors = o.archiver.rechunk()
        first, end = o.p.pending()
        out: dict[str, Any] = {
            **decision_json(d, conv, turn=turn, topic=o.archiver.number(d.topic),
                            revisions=[{**r.to_dict(), "turn": o.turn0 + r.turn} for r in d.revisions],
                            closed=[self._episode(o, e) for e in d.closed]),
            "open": {"start": o.turn0 + first, "end": o.turn0 + end - 1, "turns": end - first},
        }
        if o.p.note and not o.noted:  # (said once per session, not on every turn)
            out["note"] = o.p.note
            o.noted = True
        errors = o.p.archive_errors[-3:] + index_errors
        if errors:
            out["archive_errors"] = errors[-3:]
        return out

    def end(self, conversation_id: str) -> dict[str, Any]:
        conv = check_conversation_id(conversation_id)
        with self._lock:
            with self._writing(conv, create=False) as o:
                if o is None:
                    self._open.pop(conv, None)
                    done = topics(self.project.store, conv)
                    if not done:
                        raise InputError(f"no conversation {conv!r} in this project (remember a turn first)")
                    return {"conversation_id": conv, "archived": [], "revisions": [], "topics": len(done),
                            "note": "nothing was pending: every turn of this conversation is archived already"}
                upto = o.next_turn
                eps = o.p.flush()
                out: dict[str, Any] = {"conversation_id": conv, "archived": [self._episode(o, e) for e in eps],
                                       "revisions": [{**r.to_dict(), "turn": o.turn0 + r.turn}
                                                     for r in o.p.flush_revisions]}
                self._open.pop(conv, None)
                if o.p.unarchived:  # the store refused a topic: the session stays stored, retried on the next call
                    out["archive_errors"] = o.p.archive_errors[-3:]
                else:
                    self._drop(conv, upto)
            index_errors = o.archiver.rechunk()
            if index_errors:
                out["archive_errors"] = (out.get("archive_errors", []) + index_errors)[-3:]
            out["topics"] = len(topics(self.project.store, conv))
            return out

    def forget(self, conversation_id: str) -> dict[str, Any]:
        """Delete the conversation (:func:`~logichunk.memory.forget.forget`: its archived topics and open turns)
        under the project's lock, and this server's perception of it with them."""
        conv = check_conversation_id(conversation_id)
        store = self.project.store
        with self._lock:
            self._open.pop(conv, None)
            with store.tx():
                store.lock_documents()
                done = forget(store, conv)
        return done.to_dict()

    def recall(self, query: str, conversation_id: str | None = None, top_k: int = 5,
               mode: str = "hybrid", max_chars: int | None = None) -> dict[str, Any]:
        """``max_chars`` None: :data:`RECALL_CHARS`, or the server's text limit when that is lower (a server set
        to take less refused every recall that did not name a bound, over a bound the caller never sent)."""
        if max_chars is None:
            max_chars = min(RECALL_CHARS, self.limits.max_text_chars)
        query = check_text(query, "query", self.limits.max_query_chars)
        top_k = _check_top_k(top_k, self.limits)
        check_choice(mode, RECALL_MODES, "mode")
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or \
                not 1 <= max_chars <= self.limits.max_text_chars:
            raise InputError(f"max_chars must be an integer from 1 to {self.limits.max_text_chars}, got {max_chars!r}")
        conv = None if conversation_id is None else check_conversation_id(conversation_id)
        store = self.project.store
        pending = self._index_pending()
        with self.project.lock:
            hits = search_topics(store, query, top_k, mode=mode, conversation_id=conv)
        terms = _terms(query)
        episodes = []
        for h in hits:
            t = h.topic
            ep: dict[str, Any] = {**h.to_dict(), "exchanges": None}  # (the shape of `memory topics QUERY`'s lines)
            held = topic_turns(store, t.document_id)  # (this topic's turns, not its conversation's: linear in the topic)
            if held:
                full = [_exchange(n, b) for n, b in held]
                ep["exchanges"], cut = _bounded(full, max_chars, terms)
                if cut:
                    ep["truncated"] = (f"{cut} left out (recall shows at most {_chars(max_chars)} of a topic, the "
                                       "texts matching the query first; a cut text is the excerpt around its "
                                       "matches, at `excerpt` [start, end) in it); "
                                       f"the whole topic: get_chunk id '{t.document_id}#1', or the resource "
                                       f"logichunk://documents/{t.document_id}, or recall with a larger max_chars")
            episodes.append(ep)
        out: dict[str, Any] = {"query": query, "mode": mode, "episodes": episodes}
        if conv is not None:
            with self._lock:
                rows = self._rows(conv, _archived_upto(store, conv))
            if rows:  # the open topics are not archived (searchable) yet: their turns, for the agent to read
                out.update(_open_turns(store, query, rows, top_k, max_chars))
        if why := store.embedder_mismatch():
            out["note"] = why
        if pending:
            out["archive_errors"] = pending[-3:]
        return out

    def _index_pending(self) -> list[str]:
        """Once per server, before its first recall: the project's topics left dirty (:func:`index_pending_topics`),
        when this server's embedder is the project's (another one would fail on each)."""
        if self._indexed:
            return []
        self._indexed = True
        store = self.project.store
        if store.embedder_mismatch():
            return []
        with self.project.lock:
            return index_pending_topics(store)


def _exchange(turn: int, b: LogicalBlock) -> dict[str, Any]:
    d: dict[str, Any] = {"turn": turn, "user": b.user, "assistant": b.assistant}
    if b.rewritten_query is not None:
        d["rewritten_query"] = b.rewritten_query
    return d


_TEXT_KEYS = ("user", "rewritten_query", "assistant")


def _chars(n: int) -> str:
    """``n`` characters, in words ("1 character", "8,000 characters")."""
    return f"{n:,} character{'' if n == 1 else 's'}"


def _bounded(exchanges: list[dict[str, Any]], max_chars: int,
             terms: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], str]:
    """The exchanges, in order, with at most ``max_chars`` characters of text in all. Without ``terms`` the
    texts are kept from the first on; with the query's ``terms`` (:func:`_terms`) the texts matching them
    are kept first (the rarer the terms a text holds, the earlier), then the others in order. A text that
    does not fit is cut to an excerpt: around its best matches (:func:`_window`), else its head; its
    exchange says in ``cut`` how many characters of which field were left out and in ``excerpt`` where the
    excerpt lies (``[start, end)`` in that field's text). An exchange none of whose text fits is left out.
    Returns them and what was left out in words ('' when nothing)."""
    pieces = [(i, k, v) for i, ex in enumerate(exchanges) for k in _TEXT_KEYS if isinstance(v := ex.get(k), str)]
    patterns = _patterns(terms)
    found = [_find(v, patterns) for _i, _k, v in pieces]
    weight = _idf(terms, found)
    score = [sum(weight[t] for t in f) for f in found]
    left = max_chars
    spans: list[tuple[int, int]] = [(0, 0)] * len(pieces)
    for p in sorted(range(len(pieces)), key=lambda p: (-score[p], p)):
        v = pieces[p][2]
        take = min(len(v), left)
        spans[p] = (0, take) if take == len(v) or not found[p] else _window(v, found[p], take, weight)
        left -= take
    of: list[list[tuple[str, str, tuple[int, int]]]] = [[] for _ in exchanges]
    for (i, k, v), span in zip(pieces, spans, strict=True):
        of[i].append((k, v, span))
    out: list[dict[str, Any]] = []
    chars = hidden = 0
    for ex, mine in zip(exchanges, of, strict=True):
        if any(len(v) for _k, v, _s in mine) and not any(b > a for _k, _v, (a, b) in mine):
            chars += sum(len(v) for _k, v, _s in mine)
            hidden += 1
            continue
        kept = dict(ex)
        for k, v, (a, b) in mine:
            if b - a == len(v):
                continue
            kept[k] = v[a:b]
            kept.setdefault("cut", {})[k] = len(v) - (b - a)
            if b > a:
                kept.setdefault("excerpt", {})[k] = [a, b]
            chars += len(v) - (b - a)
        out.append(kept)
    return out, _left_out(chars, hidden) if chars else ""


def _left_out(chars: int, turns: int) -> str:
    said = f"{chars:,} characters"
    return said + (f" ({turns} turn{'s' if turns != 1 else ''} not shown)" if turns else "")


MATCHES_PER_TERM = 1000  # the matches of one term an excerpt is placed by (a term on every line of a long turn)
VECTOR_TURNS = 256  # the open turns (the latest) ranked by the embedder too (embedded once, then cached); BM25: all


def _terms(query: str) -> tuple[str, ...]:
    """The query's terms as BM25 reads them (:func:`~logichunk.index.bm25.tokenize`: words, CJK bigrams),
    each once: what an excerpt of a long text is placed by."""
    return tuple(dict.fromkeys(tokenize(query)))


def _patterns(terms: tuple[str, ...]) -> list[tuple[str, re.Pattern[str]]]:
    """Each term's pattern: case-insensitive, and a word (not CJK characters) not inside a longer word,
    as BM25 tokenises."""
    out = []
    for t in terms:
        word = all(ord(c) < 0x2E80 for c in t)
        out.append((t, re.compile(r"(?<![^\W_])" + re.escape(t) + r"(?![^\W_])" if word else re.escape(t),
                                  re.IGNORECASE)))
    return out


def _find(text: str, patterns: list[tuple[str, re.Pattern[str]]]) -> dict[str, list[tuple[int, int]]]:
    """Where each term occurs in ``text`` (``[start, end)``), the terms that do; at most
    :data:`MATCHES_PER_TERM` each. Read in the text folded as BM25 folds it (``曠工`` is ``旷工``), one
    character for one, so the spans are the text's own."""
    out: dict[str, list[tuple[int, int]]] = {}
    folded = fold_han(text)
    for t, pat in patterns:
        spans = []
        for m in pat.finditer(folded):
            spans.append(m.span())
            if len(spans) >= MATCHES_PER_TERM:
                break
        if spans:
            out[t] = spans
    return out


def _idf(terms: tuple[str, ...], found: list[dict[str, list[tuple[int, int]]]]) -> dict[str, float]:
    """Each term's weight over the texts (BM25's idf shape, ``log(1 + N / df)``): a term in every text
    says little about which to keep."""
    n = max(len(found), 1)
    df = {t: sum(t in f for f in found) for t in terms}
    return {t: math.log(1.0 + n / df[t]) if df[t] else 0.0 for t in terms}


def _window(text: str, found: dict[str, list[tuple[int, int]]], size: int,
            weight: dict[str, float]) -> tuple[int, int]:
    """The ``[start, end)`` of the excerpt of ``size`` characters of ``text`` that holds the weightiest set
    of distinct terms (each match a little after the window's start, for the words before it); the
    earliest such window."""
    if size <= 0:
        return 0, 0
    starts = {t: [a for a, _b in spans] for t, spans in found.items()}

    def held(lo: int) -> float:
        total = 0.0
        for t, spans in found.items():
            k = bisect.bisect_left(starts[t], lo)
            if k < len(spans) and spans[k][1] <= lo + size:
                total += weight[t]
        return total

    last = len(text) - size
    best = (-1.0, 0)
    for lo in sorted({min(max(a - size // 4, 0), last) for spans in found.values() for a, _b in spans}):
        got = held(lo)
        if got > best[0]:
            best = (got, lo)
    return best[1], best[1] + size


def _rank_open(store: Any, query: str, rows: list[tuple[int, LogicalBlock]], top_k: int) -> list[tuple[int, dict[str, Any]]]:
    """The ``top_k`` open turns that best match ``query``, best first, as ``(turn, match)``: BM25 over the
    turns' texts and the embedder's cosine (the latest :data:`VECTOR_TURNS`, through the store's embedding
    cache) fused by reciprocal rank, as ``hybrid`` search fuses chunks (:mod:`logichunk.retrieve.hybrid`).
    Open turns are not archived, so no index holds them; BM25 alone when the embedder fails."""
    texts = [render_block(b) for _n, b in rows]
    bm25 = BM25Index()
    last = len(texts) - 1
    bm25.add_many((last - i, t) for i, t in enumerate(texts))  # (numbered from the latest: a tie goes to it)
    ids, scores = bm25.search(query, len(texts))
    ranked = {"bm25": [(last - int(i), float(sc)) for i, sc in zip(ids, scores, strict=True)]}
    recent = range(max(0, len(texts) - VECTOR_TURNS), len(texts))
    try:
        vecs = np.asarray(store.embed([texts[i] for i in recent]), np.float32)
        q = store.embed_query(query)
        cos = vecs @ q / np.maximum(np.linalg.norm(vecs, axis=1) * float(np.linalg.norm(q)), 1e-12)
        ranked["similarity"] = [(recent[int(i)], float(cos[i])) for i in np.argsort(-cos, kind="stable")]
    except LogichunkError:
        pass
    rrf_k = store.settings.rrf_k
    fused: dict[int, float] = {}
    info: dict[int, dict[str, Any]] = {}
    for name, lst in ranked.items():
        for rank, (i, sc) in enumerate(lst, 1):
            fused[i] = fused.get(i, 0.0) + 1.0 / (rrf_k + rank)
            info.setdefault(i, {})[name] = round(sc, 4)
    best = sorted(fused, key=lambda i: (-fused[i], -i))[:top_k]  # (a tie: the later turn)
    return [(rows[i][0], {"score": round(fused[i], 4), **info[i]}) for i in best]


def _open_turns(store: Any, query: str, rows: list[tuple[int, LogicalBlock]], top_k: int,
                max_chars: int) -> dict[str, Any]:
    """Recall's ``open_turns`` (and ``open_turns_truncated``): the open turns, all when they fit in
    ``max_chars``; else the ``top_k`` best matching the query (:func:`_rank_open`; each with ``match``: its
    rank and scores), cut to the excerpts around the matches, in at most half the bound, and the latest
    turns in the rest. A long conversation on one subject archives nothing until the subject changes, so
    the latest turns alone hid what was said early in it. In turn order."""
    full = [_exchange(n, b) for n, b in rows]
    if _text_chars(full) <= max_chars:
        return {"open_turns": full}
    terms = _terms(query)
    best = _rank_open(store, query, rows, top_k)
    at = {n: i for i, (n, _b) in enumerate(rows)}
    shown, cut_m = _bounded([full[at[n]] for n, _m in best], max_chars // 2, terms)
    rank = {n: (r, m) for r, (n, m) in enumerate(best, 1)}
    for x in shown:
        r, m = rank[x["turn"]]
        x["match"] = {"rank": r, **m}
    latest, cut = _bounded([x for x in reversed(full) if x["turn"] not in rank], max_chars - _text_chars(shown))
    out: dict[str, Any] = {"open_turns": sorted([*shown, *latest], key=lambda x: x["turn"])}
    if cut or cut_m:
        missing = _text_chars(full) - _text_chars(out["open_turns"])
        hidden = len(full) - len(out["open_turns"])
        out["open_turns_truncated"] = (f"{_left_out(missing, hidden)} left out, the earliest first, but for the "
                                       f"{len(shown)} turn(s) that best match the query (marked `match`; at most half "
                                       f"of the {_chars(max_chars)} recall shows of open turns); recall with a larger "
                                       "max_chars shows more")
    return out


def _text_chars(exchanges: list[dict[str, Any]]) -> int:
    """The characters of text the exchanges show."""
    return sum(len(v) for x in exchanges for k in _TEXT_KEYS if isinstance(v := x.get(k), str))

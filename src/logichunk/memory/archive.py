"""Finished topics into the store, and the topic index over them.

Each closed :class:`~logichunk.memory.perception.Episode` becomes one store **document**: one chapter,
one block per turn (``User: …`` / ``Assistant: …`` / ``Tool: …``), chunked and embedded like any other
document, so every retrieval mode (:func:`logichunk.retrieve.retrieve`) finds it. Its cuts are read
from the turns' own words (``cut_vectors="lexical"``) whatever the store's setting, and only its
chunks go through the embedder. Why: with a model embedder, cutting by the embedder embedded every
sentence of every topic once to decide the cuts and again inside its chunk — 40 % of a long replay's
time with E5 — while the chunks' vectors, what a query matches, are the same embedder's either way;
and on meeting transcripts the words cut better than E5 (bench/QUALITY.md, twenty-third session).
Two small tables of
this package keep what a document cannot:

* ``memory_topics`` — per topic: conversation id, topic number, first/last turn, time range, title,
  number of turns, and its **kernel** (the topic's mean anchor vector, with the embedder's model id):
  the topic index that answers "what did we discuss about X" without touching the chunks;
* ``memory_turns`` — per turn: the :class:`~logichunk.memory.block.LogicalBlock` as JSON and the block id
  it became, so :func:`load_conversation` gives the conversation back exactly (user text, rewritten
  query, reply, tool calls, timestamps, meta).

Both reference the document (``ON DELETE CASCADE``): deleting a topic's document forgets the topic.
The tables are created on first use with the store's own dialect (SQLite or PostgreSQL), in the
store's transactions. A failed re-chunk (the embedder is down) keeps the topic stored with its blocks
dirty for ``store.rechunk_dirty()`` later, and is counted in :attr:`Archiver.errors`, so a conversation
never stops because indexing failed.
"""

from __future__ import annotations

import json
import secrets
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import InputError, LogichunkError
from ..store import schema
from ..text.decode import check_not_blank, check_unicode
from .block import LogicalBlock, check_count
from .episode import Episode, topic_json
from .resume import Link, best_link, threshold_of
from .subjects import StoredSubjects

__all__ = ["MAX_ID_CHARS", "Archiver", "TopicHit", "TopicRecord", "check_conversation_id", "conversations",
           "load_conversation", "render_block", "search_topics", "stored_link", "topic_turns", "topics"]

MAX_ID_CHARS = 200


def check_conversation_id(conv: Any) -> str:
    """``conv`` when it can name a conversation in any store: a non-blank string of at most
    ``MAX_ID_CHARS`` characters, valid Unicode, no control characters (PostgreSQL refuses a NUL, and a
    newline or NUL in an id cannot be typed back to recall it)."""
    if conv is not None and not isinstance(conv, str):  # (a number was said to be "empty")
        raise InputError(f"conversation_id must be a string, got {type(conv).__name__}")
    if not conv or not conv.strip():
        raise InputError("conversation_id is empty")
    if len(conv) > MAX_ID_CHARS:
        raise InputError(f"conversation_id is {len(conv)} characters; at most {MAX_ID_CHARS}")
    bad = next((i for i, ch in enumerate(conv) if ch < " " or "\x7f" <= ch < "\xa0"), None)
    if bad is not None:
        raise InputError(f"conversation_id holds a control character ({conv[bad]!r}) at character {bad}")
    return check_unicode(conv, "conversation_id")

_TABLES = [
    """CREATE TABLE IF NOT EXISTS memory_topics (
        document_id TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
        project_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        topic_no {INT} NOT NULL,
        start_turn {INT} NOT NULL,
        end_turn {INT} NOT NULL,
        started_at {REAL},
        ended_at {REAL},
        title TEXT NOT NULL,
        turns {INT} NOT NULL,
        model_id TEXT,
        kernel {BLOB},
        created_at {REAL} NOT NULL,
        resumes TEXT,
        resumes_similarity {REAL},
        subject {BLOB}
    )""",
    "CREATE INDEX IF NOT EXISTS memory_topics_conv ON memory_topics(project_id, conversation_id, topic_no)",
    """CREATE TABLE IF NOT EXISTS memory_turns (
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        conversation_id TEXT NOT NULL,
        turn_no {INT} NOT NULL,
        block_id TEXT,
        data TEXT NOT NULL,
        PRIMARY KEY (document_id, turn_no)
    )""",
    "CREATE INDEX IF NOT EXISTS memory_turns_conv ON memory_turns(conversation_id, turn_no)",
]
_ready: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def _ensure_tables(store: Any) -> None:
    if _ready.get(store):
        return
    tokens = schema.DIALECTS[store.dialect]
    with store.tx():
        for stmt in _TABLES:
            store._x(stmt.format(**tokens))
        _add_columns(store, tokens)
    _ready[store] = True


# columns added to memory_topics after its first version (a database made before them gets them on first use)
_LATER_COLUMNS = (("resumes", "TEXT"), ("resumes_similarity", "{REAL}"), ("subject", "{BLOB}"))


def _add_columns(store: Any, tokens: dict[str, str]) -> None:
    have = store._columns("memory_topics")  # (PostgreSQL's ADD COLUMN IF NOT EXISTS also covers two at once)
    for name, kind in _LATER_COLUMNS:
        if name not in have:
            store._x(f"ALTER TABLE memory_topics {tokens['ADD_COLUMN']} {name} {kind.format(**tokens)}")


def render_block(block: LogicalBlock) -> str:
    """The searchable text of one turn (a store block). Ends with a blank line, so a topic's blocks
    read as a transcript. A side that is only whitespace has no line (a turn the assistant opened has no
    ``User:``); the turn itself is kept as given (``memory_turns``)."""
    lines = [f"User: {block.user}"] if block.user.strip() else []
    if block.rewritten_query is not None and block.rewritten_query.strip() and block.rewritten_query != block.user:
        lines.append(f"(Rewritten: {block.rewritten_query})")
    if block.assistant.strip():
        lines.append(f"Assistant: {block.assistant}")
    for t in block.tool_calls:
        res = " ".join(t.result.split())
        lines.append(f"Tool: {t.name}({t.arguments})" + (f" -> {res[:300]}" if res else ""))
    return "\n".join(lines) + "\n\n"


#: what a topic's cuts are read from when it is indexed (the module docstring says why): every indexer of
#: topics (this archiver, the memory server's) passes it to ``Store.rechunk_chapter``
TOPIC_CUT_VECTORS = "lexical"


class Archiver:
    """Archives episodes of one conversation into ``store`` (see the module docstring).

    ``rechunk=False`` stores the blocks dirty (chunk them later with ``store.rechunk_dirty()``, by the
    store's settings). ``cut_vectors``: what a topic's cuts are read from (see the module docstring;
    ``None``: the store's setting)."""

    def __init__(self, store: Any, conversation_id: str | None = None, *, rechunk: bool = True,
                 kernel_model: str | None = None, resume_threshold: float | None = None,
                 cut_vectors: str | None = TOPIC_CUT_VECTORS) -> None:
        self.store = store
        self.kernel_model = kernel_model  # model id of the embedder that made the kernels (default: the store's)
        self.resume_threshold = resume_threshold  # (:mod:`.resume`; default: the kernels' calibration's hi)
        self.conversation_id = check_conversation_id(conversation_id) if conversation_id is not None \
            else f"conv-{secrets.token_hex(4)}"
        self.rechunk = rechunk
        if cut_vectors not in (None, "lexical", "embedder"):
            raise InputError(f"cut_vectors must be lexical, embedder or None (the store's), got {cut_vectors!r}")
        self.cut_vectors = cut_vectors
        self.errors: list[str] = []
        self.documents: list[str] = []
        self.links: dict[str, Link | None] = {}  # per document archived here: the earlier topic it resumes
        # per document archived here or met again: (topic number, first turn, last turn) as the store holds them
        # (not always the ones asked for: a topic number taken already is bumped, turns archived already cut)
        self.numbers: dict[str, tuple[int, int, int]] = {}
        self._offsets: dict[str, tuple[int, int]] = {}
        self._subjects = StoredSubjects()  # the earlier topics' subjects, for the links
        _ensure_tables(store)

    def _offset(self, conv: str) -> tuple[int, int]:
        """(turn, topic) numbers this archiver's episodes of ``conv`` start after: a conversation
        archived before (an agent restarted on it) continues, its earlier turns kept in order."""
        if conv not in self._offsets:
            row = self.store._q("SELECT MAX(t.turn_no), MAX(m.topic_no) FROM memory_topics m JOIN memory_turns t "
                                "ON t.document_id = m.document_id WHERE m.conversation_id = ? AND m.project_id = ?",
                                (conv, self.store.project_id))[0]
            self._offsets[conv] = (0, 0) if row[0] is None else (int(row[0]) + 1, int(row[1]) + 1)
        return self._offsets[conv]

    def archived_turns(self, conversation_id: str | None = None) -> int:
        """How many turns of the conversation this database holds already (0 for a new one)."""
        return self._offset(conversation_id or self.conversation_id)[0]

    def archived_topics(self, conversation_id: str | None = None) -> int:
        """How many topics of the conversation this database holds already (0 for a new one)."""
        return self._offset(conversation_id or self.conversation_id)[1]

    def restart(self) -> None:
        """Number the next episodes after what the store holds now (a perception's next session of the
        same conversation numbers its turns from 0 again)."""
        self._offsets.clear()

    def archive(self, episode: Episode, *, start: int | None = None, index: int | None = None) -> str:
        """Store one episode as a document; returns its id. ``start``/``index``: the conversation's
        numbers of its first turn and of the topic (default: after what the store held at this
        archiver's first episode, plus the episode's own numbers). With ``start``, turns archived
        already (an episode met again when a restarted perception observes its stored turns) are not
        archived twice: a topic archived whole gives its document back, one archived in part keeps
        only the turns after."""
        if not episode.blocks:
            raise InputError("cannot archive an empty episode")
        s = self.store
        conv = episode.conversation_id or self.conversation_id
        kernel = None if episode.kernel is None else np.ascontiguousarray(episode.kernel, "<f4").tobytes()
        subj = None if episode.subject is None else np.ascontiguousarray(episode.subject, "<f4").tobytes()
        model = (self.kernel_model or str(getattr(s.embedder, "model_id", ""))) \
            if kernel is not None or subj is not None else None
        with s.tx():
            if start is None:
                turn0, topic0 = self._offset(conv)
                start, index = turn0 + episode.start, topic0 + episode.index
            else:  # (one row, not every topic of the conversation: a long one archives in linear time)
                last_turn, last_topic = s._q("SELECT MAX(end_turn), MAX(topic_no) FROM memory_topics WHERE "
                                             "project_id = ? AND conversation_id = ?", (s.project_id, conv))[0]
                upto = 0 if last_turn is None else int(last_turn) + 1
                if start + len(episode.blocks) <= upto:
                    t = self._holding(conv, start)
                    self.links[t.document_id] = stored_link(t)
                    self.numbers[t.document_id] = (t.index, t.start, t.end)
                    return t.document_id
                if start < upto:
                    cut = upto - start
                    episode = replace(episode, start=episode.start + cut, blocks=episode.blocks[cut:])
                    start = upto
                index = max(index or 0, 0 if last_topic is None else int(last_topic) + 1)
            link = self._link(episode, conv, index, model)
            title = f"{episode.title} [{conv} #{index}]"
            doc = s.add_document(title, [(episode.title, [render_block(b) for b in episode.blocks])],
                                 source=f"memory:{conv}#{index}")
            chapter = s.chapters(doc)[0][0]
            blocks = s.blocks(chapter)
            s._x("INSERT INTO memory_topics(document_id, project_id, conversation_id, topic_no, start_turn, end_turn, "
                 "started_at, ended_at, title, turns, model_id, kernel, created_at, resumes, resumes_similarity, "
                 "subject) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (doc, s.project_id, conv, index, start, start + (episode.end - episode.start), episode.started_at,
                  episode.ended_at, episode.title, len(episode.blocks), model, kernel, time.time(),
                  None if link is None else link.document_id, None if link is None else link.similarity, subj))
            s._xmany("INSERT INTO memory_turns(document_id, conversation_id, turn_no, block_id, data) VALUES (?, ?, ?, ?, ?)",
                     [(doc, conv, start + i, blocks[i].id, json.dumps(b.to_dict(), ensure_ascii=False))
                      for i, b in enumerate(episode.blocks)])
        self.documents.append(doc)
        self.links[doc] = link
        self.numbers[doc] = (index, start, start + (episode.end - episode.start))
        if self.rechunk:
            try:
                s.rechunk_chapter(chapter, cut_vectors=self.cut_vectors)
            except LogichunkError as e:
                self.errors.append(f"topic {episode.index}: {e}")
        return doc

    def _holding(self, conv: str, turn: int) -> TopicRecord:
        """The stored topic that holds ``turn`` (archived: below the conversation's last archived turn),
        or, that topic deleted, the first one after it. Why holding and not starting at ``turn``: a
        replay after a restart starts afresh at the oldest open topic's start, without the state the
        first perception had there, so the boundaries it finds again may fall inside archived topics;
        an episode met again whose first turn is inside one is that topic's, archived, not a new topic."""
        s = self.store
        rows = s._q(f"SELECT {_TOPIC_COLS} FROM memory_topics m LEFT JOIN memory_topics r ON r.document_id = "
                    "m.resumes WHERE m.project_id = ? AND m.conversation_id = ? AND m.end_turn >= ? "
                    "ORDER BY m.start_turn, m.document_id LIMIT 1", (s.project_id, conv, turn))
        return _topic(rows[0])

    def _link(self, episode: Episode, conv: str, index: int, model: str | None) -> Link | None:
        """The conversation's stored topic this one resumes (:mod:`.resume`): its earlier topics' subjects
        made by the same embedder, so a return is linked across sessions too; one matrix product over
        them (:class:`.subjects.StoredSubjects`, read from the store in this call)."""
        if episode.subject is None or model is None:
            return None
        vec = np.asarray(episode.subject, np.float32).reshape(-1)
        numbers, subjects, documents = self._subjects.read(self.store, conv, model, len(vec))
        if self.resume_threshold is not None:
            threshold = self.resume_threshold
        else:
            from .calibration import default_calibration

            threshold = threshold_of(default_calibration(model)[0])
        return best_link(vec, index, numbers, subjects, documents, threshold)


# --------------------------------------------------------------------------- reading back


def stored_link(t: TopicRecord) -> Link | None:
    """The link the store keeps for topic ``t`` (the earlier topic it resumes), as :meth:`Archiver._link`
    made it: what an archiver reports for a topic it finds archived already."""
    if t.resumes_topic is None or t.resumes_similarity is None:
        return None
    return Link(t.resumes_topic, t.resumes_similarity, t.resumes, t.index)


@dataclass(frozen=True)
class TopicRecord:
    document_id: str
    conversation_id: str
    index: int
    start: int
    end: int
    started_at: float | None
    ended_at: float | None
    title: str
    turns: int
    resumes: str | None = None  # the document of the earlier topic this one returns to (:mod:`.resume`)
    resumes_topic: int | None = None  # that topic's number
    resumes_similarity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The topic's JSON (:func:`~.episode.topic_json`: the shape of every interface's topics)."""
        return topic_json(self.conversation_id, self.index, self.start, self.end, title=self.title,
                          document_id=self.document_id, started_at=self.started_at, ended_at=self.ended_at,
                          resumes=self.resumes_topic, resumes_document=self.resumes,
                          resumes_similarity=self.resumes_similarity)


# (the link is read through the earlier topic's row: a deleted topic links nothing)
_TOPIC_COLS = ("m.document_id, m.conversation_id, m.topic_no, m.start_turn, m.end_turn, m.started_at, m.ended_at, "
               "m.title, m.turns, r.document_id, r.topic_no, m.resumes_similarity")


def _topic(r: Sequence[Any]) -> TopicRecord:
    linked = r[9] is not None
    return TopicRecord(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), None if r[5] is None else float(r[5]),
                       None if r[6] is None else float(r[6]), r[7], int(r[8]), r[9] if linked else None,
                       int(r[10]) if linked else None, float(r[11]) if linked and r[11] is not None else None)


def topics(store: Any, conversation_id: str | None = None) -> list[TopicRecord]:
    """Archived topics of the store's project (of one conversation), in conversation and turn order."""
    _ensure_tables(store)
    sql = (f"SELECT {_TOPIC_COLS} FROM memory_topics m LEFT JOIN memory_topics r ON r.document_id = m.resumes "
           "WHERE m.project_id = ?")
    params: list[Any] = [store.project_id]
    if conversation_id is not None:
        sql += " AND m.conversation_id = ?"
        params.append(conversation_id)
    return [_topic(r) for r in store._q(sql + " ORDER BY m.conversation_id, m.start_turn", params)]


def conversations(store: Any) -> list[str]:
    """Conversation ids with archived topics in the store's project."""
    _ensure_tables(store)
    return [r[0] for r in store._q("SELECT DISTINCT conversation_id FROM memory_topics WHERE project_id = ? "
                                    "ORDER BY conversation_id", (store.project_id,))]


def topic_turns(store: Any, document_id: str) -> list[tuple[int, LogicalBlock]]:
    """The turns of one archived topic, ``(turn number, block)`` in order, exactly as they were observed (none
    when the document is no topic of the store's project). Why not :func:`load_conversation` and a slice: that
    reads and checks every turn of the conversation, so a recall on a 5,000-turn conversation spent nine tenths
    of its time there; this reads the topic's own rows (and a topic shows its turns when another one of its
    conversation was deleted)."""
    _ensure_tables(store)
    rows = store._q("SELECT t.turn_no, t.data FROM memory_turns t JOIN memory_topics m ON m.document_id = t.document_id "
                    "WHERE t.document_id = ? AND m.project_id = ? ORDER BY t.turn_no", (document_id, store.project_id))
    return [(int(n), LogicalBlock.from_dict(json.loads(d))) for n, d in rows]


def load_conversation(store: Any, conversation_id: str) -> list[LogicalBlock]:
    """The archived turns of a conversation, in order, exactly as they were observed. Raises
    :class:`InputError` when the conversation is unknown or has a gap (a topic deleted)."""
    _ensure_tables(store)
    rows = store._q("SELECT t.turn_no, t.data FROM memory_turns t JOIN memory_topics m ON m.document_id = t.document_id "
                    "WHERE t.conversation_id = ? AND m.project_id = ? ORDER BY t.turn_no",
                    (conversation_id, store.project_id))
    if not rows:
        raise InputError(f"no archived conversation {conversation_id!r} in this project")
    nos = [int(r[0]) for r in rows]
    if nos != list(range(nos[0], nos[0] + len(nos))):
        raise InputError(f"conversation {conversation_id!r} has missing turns (a topic was deleted?)")
    return [LogicalBlock.from_dict(json.loads(r[1])) for r in rows]


@dataclass(frozen=True)
class TopicHit:
    """A topic found by :func:`search_topics`: its record, a score and the best matching text."""

    topic: TopicRecord
    score: float
    text: str = ""
    chunk_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The topic's JSON, its ``score`` and the chunk that matched (``matched_text``, ``chunk_id``): the shape
        of ``memory topics QUERY --format jsonl`` and of an episode of MCP's ``recall``."""
        return {**self.topic.to_dict(), "score": round(float(self.score), 4), "matched_text": self.text,
                "chunk_id": self.chunk_id}


def search_topics(store: Any, query: str, top_k: int = 5, *, mode: str = "hybrid", conversation_id: str | None = None,
                  since: float | None = None, until: float | None = None) -> list[TopicHit]:
    """"What did we discuss about X": topics ranked by their best matching chunk (any retrieval
    ``mode`` of :func:`logichunk.retrieve.retrieve`), or with ``mode="kernel"`` by the cosine of the
    query to each topic's kernel. ``since``/``until`` keep topics whose time range overlaps. A topic is
    found whatever else the store holds (documents, other conversations): see :func:`_chunk_search`."""
    if not isinstance(query, str):
        raise InputError(f"query must be a string, got {type(query).__name__}")
    check_not_blank(query, "query")  # (the words of the service and the MCP tools)
    check_count(top_k, "top_k", 1)
    recs = {t.document_id: t for t in topics(store, conversation_id)}

    def keep(t: TopicRecord) -> bool:
        if since is not None and (t.ended_at if t.ended_at is not None else float("inf")) < since:
            return False
        return not (until is not None and (t.started_at if t.started_at is not None else float("-inf")) > until)

    recs = {k: v for k, v in recs.items() if keep(v)}
    if not recs:
        return []
    if mode == "kernel":
        return _kernel_search(store, query, top_k, recs)
    return _chunk_search(store, query, top_k, mode, recs)


def _chunk_search(store: Any, query: str, top_k: int, mode: str, recs: dict[str, TopicRecord]) -> list[TopicHit]:
    """The best ``top_k`` topics of ``recs`` by their best chunk. Retrieval ranks the whole store, so the
    window of chunks read is widened (x4 each round) until it holds ``top_k`` of these topics or every
    chunk the mode can return: a knowledge base or a long conversation ranked above them hides nothing."""
    from ..retrieve import retrieve

    want = max(top_k * 8, 40)
    while True:
        hits = retrieve(store, query, mode=mode, top_k=want)
        best: dict[str, TopicHit] = {}
        for h in hits:
            t = recs.get(h.doc_id)
            if t is None or h.doc_id in best:
                continue
            m = h.chunk.meta
            best[h.doc_id] = TopicHit(t, float(h.score), str(m.get("context_text") or m.get("text") or ""), h.chunk.id)
        if len(best) >= min(top_k, len(recs)) or len(hits) < want:
            return sorted(best.values(), key=lambda x: -x.score)[:top_k]
        want *= 4


def _kernel_search(store: Any, query: str, top_k: int, recs: dict[str, TopicRecord]) -> list[TopicHit]:
    model = str(store.embedder.model_id)
    rows = [r for r in store._q("SELECT document_id, kernel, model_id FROM memory_topics WHERE project_id = ? "
                                "AND kernel IS NOT NULL", (store.project_id,)) if r[0] in recs]
    rows = [r for r in rows if r[2] == model]
    if not rows:
        return []
    mat = np.stack([np.frombuffer(bytes(r[1]), dtype="<f4") for r in rows]).astype(np.float32)
    q = np.asarray(store.embedder.embed([query], kind="query"), np.float32)[0]
    sims = mat @ q
    order = np.argsort(-sims, kind="stable")[:top_k]
    return [TopicHit(recs[rows[i][0]], float(sims[i])) for i in order.tolist()]

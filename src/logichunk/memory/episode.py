"""The records a :class:`~logichunk.memory.perception.Perception` produces: its decisions, the
review's revisions and the finished topics (episodes). Apart from the perception so that the
archive, which stores episodes, does not import the perception, which archives them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from .block import LogicalBlock, is_filler

__all__ = ["Action", "Decision", "Episode", "Revision", "Step", "decision_json", "topic_json"]


def topic_json(conversation_id: str | None, topic: int, start: int, end: int, *, title: str,
               document_id: str | None, started_at: float | None, ended_at: float | None,
               resumes: int | None = None, resumes_document: str | None = None,
               resumes_similarity: float | None = None) -> dict[str, Any]:
    """The JSON of a topic, one shape wherever one is shown: ``memory replay`` and ``memory topics`` (CLI
    jsonl), :meth:`Episode.to_dict` and :meth:`~.archive.TopicRecord.to_dict` (library), MCP's ``remember``,
    ``end_conversation`` and ``recall`` (stdio and ``/mcp``). Why one function: the CLI said
    ``conversation`` and a count of ``turns`` where MCP said ``conversation_id`` and ``turns: [first,
    last]``, so an agent reading both had to know which. Now: ``conversation_id``; ``start`` and ``end``,
    the first and last turn (inclusive, the conversation's numbers); ``turns`` how many; ``resumes`` the
    number of the earlier topic it returns to and ``resumes_document`` that topic's document."""
    return {"conversation_id": conversation_id, "topic": topic, "start": start, "end": end, "turns": end - start + 1,
            "title": title, "document_id": document_id, "started_at": started_at, "ended_at": ended_at,
            "resumes": resumes, "resumes_document": resumes_document, "resumes_similarity": _r(resumes_similarity)}


class Action(StrEnum):
    ADSORB = "adsorb"
    FORCE_ADSORB = "force_adsorb"
    SPLIT = "split"


class Step(StrEnum):
    FIRST = "first"  # the first turn (or the first content turn of a topic: it seeds the kernel)
    HEURISTIC = "heuristic"
    GUARD = "guard"  # the topic is younger than min_topic_turns: no split yet
    SCREEN = "screen"
    ARBITER = "arbiter"
    REVIEW = "review"


@dataclass(frozen=True)
class Revision:
    """The review changed the boundary before turn ``turn``: ``action`` SPLIT (a boundary added) or
    ADSORB (one removed), with ``score`` = P(boundary) from the review."""

    turn: int
    action: Action
    score: float
    reason: str = ""
    step: Step = Step.REVIEW

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "action": str(self.action), "score": _r(self.score), "step": str(self.step),
                "reason": self.reason}


@dataclass(frozen=True, eq=False)
class Episode:
    """A finished topic: turns ``start`` .. ``start + len(blocks) - 1`` of the conversation, its kernel
    (L2-normalised, None if every turn was a filler), the store document it was archived as, and
    the earlier episode it resumes (a return to that subject), if any: with a store, the link the store
    keeps (made over the conversation's stored topics, earlier sessions' too), else the session's own.
    ``index`` and ``start`` count from the first turn of this :class:`Perception`'s session (a flush
    starts the next); the archive numbers the whole conversation, on after the turns and topics stored
    before, so read an archived topic's numbers from the store. ``resumes`` is the conversation's number
    of the earlier topic, the store's (:attr:`~.archive.TopicRecord.index`; without a store, the topics
    of the conversation's earlier sessions counted before this session's), so a topic of an earlier
    session is one the store lists; this episode's own number in that count is ``index`` plus the topics
    the conversation had before the session (``Archiver.archived_topics``)."""

    index: int
    start: int
    blocks: tuple[LogicalBlock, ...]
    kernel: np.ndarray | None = None
    document_id: str | None = None
    conversation_id: str | None = None
    resumes: int | None = None  # the conversation's number of the earlier topic this one returns to (:mod:`.resume`)
    resumes_similarity: float | None = None  # the cosine of the two episodes' subjects (user questions) that made the link
    resumes_document: str | None = None  # that episode's document, when it was archived
    subject: np.ndarray | None = None  # what it is about, one vector (:func:`.resume.subject`): the link's evidence

    @property
    def end(self) -> int:
        """Index of the last turn (inclusive)."""
        return self.start + len(self.blocks) - 1

    @property
    def turns(self) -> range:
        return range(self.start, self.start + len(self.blocks))

    @property
    def started_at(self) -> float | None:
        ts = [b.started_at if b.started_at is not None else b.ended_at for b in self.blocks]
        ts = [t for t in ts if t is not None]
        return min(ts) if ts else None

    @property
    def ended_at(self) -> float | None:
        ts = [b.ended_at if b.ended_at is not None else b.started_at for b in self.blocks]
        ts = [t for t in ts if t is not None]
        return max(ts) if ts else None

    @property
    def title(self) -> str:
        """The first non-filler query, shortened: what the topic was about."""
        for b in self.blocks:
            if not is_filler(b.query)[0]:
                return _short(b.query, 80)
        return _short(self.blocks[0].query, 80)

    def to_dict(self, *, with_blocks: bool = True) -> dict[str, Any]:
        """The topic's JSON (:func:`topic_json`) in this session's numbers, with its turns (``blocks``)."""
        d = topic_json(self.conversation_id, self.index, self.start, self.end, title=self.title,
                       document_id=self.document_id, started_at=self.started_at, ended_at=self.ended_at,
                       resumes=self.resumes, resumes_document=self.resumes_document,
                       resumes_similarity=self.resumes_similarity)
        if with_blocks:
            d["blocks"] = [b.to_dict() for b in self.blocks]
        return d


@dataclass(frozen=True)
class Decision:
    """The immediate decision on one turn.

    ``score`` is the evidence that decided: the cosine for the screen, the arbiter's P(same topic),
    1.0 for a filler, 0.0 for a first turn. ``similarity`` is the anchor's cosine to the kernel (None
    when not computed). ``step`` and ``arbiter`` say who decided; ``topic`` is the topic number the
    turn joined at that moment. ``revisions`` are the review's changes made during this call (about
    earlier turns) and ``closed`` the episodes that became final during it.
    """

    turn: int
    action: Action
    score: float
    step: Step
    topic: int
    arbiter: str | None = None
    similarity: float | None = None
    reason: str = ""
    features: Mapping[str, float] = field(default_factory=dict)
    revisions: tuple[Revision, ...] = ()
    closed: tuple[Episode, ...] = ()

    @property
    def is_split(self) -> bool:
        return self.action is Action.SPLIT

    def to_dict(self, conversation_id: str | None = None) -> dict[str, Any]:
        """The decision's JSON (:func:`decision_json`) in this session's numbers."""
        return decision_json(self, conversation_id)


def decision_json(d: Decision, conversation_id: str | None, *, turn: int | None = None, topic: int | None = None,
                  revisions: list[dict[str, Any]] | None = None,
                  closed: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The JSON of a decision, one shape wherever one is shown: ``memory replay`` (CLI jsonl),
    :meth:`Decision.to_dict` (library) and MCP's ``remember`` (stdio and ``/mcp``). Why one function: the CLI
    and the library said ``action``, ``step`` and ``arbiter`` where MCP said ``decision`` and ``decided_by``
    (``"arbiter:rule"``), and MCP's closed topics were ``archived``, so an agent reading both had to know which.
    ``turn``, ``topic``, ``revisions`` and ``closed`` default to the decision's own (its session's numbers);
    a caller that numbers the conversation (MCP) passes its own. ``closed``: the topics that became final
    with this turn, each in the topic shape (:func:`topic_json`)."""
    return {"conversation_id": conversation_id, "turn": d.turn if turn is None else turn,
            "topic": d.topic if topic is None else topic, "action": str(d.action), "step": str(d.step),
            "arbiter": d.arbiter, "score": _r(d.score), "similarity": _r(d.similarity), "reason": d.reason,
            "features": {k: _r(v) for k, v in d.features.items()},
            "revisions": [r.to_dict() for r in d.revisions] if revisions is None else revisions,
            "closed": [e.to_dict(with_blocks=False) for e in d.closed] if closed is None else closed}


def _r(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 4)


def _short(text: str, n: int) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"

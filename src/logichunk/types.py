"""Core data types. Small, frozen, and span-based: nothing downstream ever edits text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """A half-open range ``[start, end)`` of Python ``str`` indices into the source text."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not (0 <= self.start <= self.end):
            raise ValueError(f"invalid span [{self.start}, {self.end})")

    def __len__(self) -> int:
        return self.end - self.start

    def of(self, text: str) -> str:
        """The slice of ``text`` this span covers."""
        return text[self.start : self.end]

    def contains(self, other: Span) -> bool:
        return self.start <= other.start and other.end <= self.end


@dataclass(frozen=True, slots=True)
class Sentence:
    span: Span
    index: int


@dataclass(frozen=True, slots=True)
class Chunk:
    """One node of a chunk tree.

    ``id`` is dotted (``1``, ``1.2``, ``1.2.3``): its dots give the tree, ``level`` is the number
    of parts, ``parent`` the id without its last part. ``method`` says which tier or algorithm
    produced the chunk's boundaries, so a user can see why a cut is where it is.
    """

    id: str
    span: Span
    level: int
    parent: str | None
    method: str
    meta: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False)
    children: tuple[str, ...] = ()

    @property
    def start(self) -> int:
        return self.span.start

    @property
    def end(self) -> int:
        return self.span.end


@dataclass(frozen=True, slots=True)
class Bubble:
    """A recorded problem for an LLM reviewer: a piece the cascade could only force-split, say."""

    category: str
    content: str
    priority: str
    context: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "content": self.content,
            "priority": self.priority,
            "context": dict(self.context),
        }


def bubble_excerpt(text: str, start: int, end: int, limit: int = 120) -> str:
    """What a bubble about ``text[start:end]`` shows of it (its ``content``): the first ``limit``
    characters, an ellipsis when there is more — one form for every bubble over a span."""
    return text[start : min(end, start + limit)] + ("…" if end - start > limit else "")


@dataclass(frozen=True, slots=True)
class Hit:
    """A retrieval result: ``score`` is what ranking used, ``raw_score`` the similarity before
    normalisation; ``context`` is the window returned instead of the whole chunk, if any."""

    chunk: Chunk
    score: float
    raw_score: float
    doc_id: str
    context: Span | None = None

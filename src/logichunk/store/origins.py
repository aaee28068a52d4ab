"""What a stored document is: a *document* (ingested or added text) or a *conversation* topic archived by the
conversation memory (:mod:`logichunk.memory.archive` stores each as a document whose source is
``memory:CONVERSATION#TOPIC``). Search hits say which (``origin``), so an agent doing RAG does not cite its
own earlier replies as sources, and a search can keep one kind or both (:data:`INCLUDE`)."""

from __future__ import annotations

from typing import Any

from ..errors import check_choice

MEMORY_PREFIX = "memory:"  # the source of an archived conversation topic: memory:CONVERSATION#TOPIC
ORIGINS = ("document", "conversation")
INCLUDE = ("documents", "conversations", "all")  # what a search may keep

__all__ = ["INCLUDE", "MEMORY_PREFIX", "ORIGINS", "check_include", "hit_origin", "kept"]


def hit_origin(source: str | None) -> dict[str, Any]:
    """A hit's ``origin`` ("document" or "conversation") and, for a conversation topic, its
    ``conversation_id`` and ``topic`` (read from the document's source)."""
    if not (source or "").startswith(MEMORY_PREFIX):
        return {"origin": "document"}
    conv, _, topic = str(source)[len(MEMORY_PREFIX):].rpartition("#")
    out: dict[str, Any] = {"origin": "conversation", "conversation_id": conv}
    if topic.isdigit():
        out["topic"] = int(topic)
    return out


def check_include(include: Any) -> str:
    return check_choice(include, INCLUDE, "include")


def kept(source: str | None, include: str) -> bool:
    """Whether a search that keeps ``include`` keeps a hit in the document whose source is ``source``."""
    return include == "all" or (hit_origin(source)["origin"] == "conversation") == (include == "conversations")

"""Deleting a conversation from a store: its archived topics and its open turns, in one transaction.

Why: a conversation lives in two places, its archived topics (documents, with ``memory_topics`` and
``memory_turns`` rows that go with them) and the turns of its open topics (``memory_session_turns``,
:mod:`.journal`). Deleting the topics' documents (``logichunk delete``) left the open turns, and the next
Perception or MCP ``remember`` of that conversation id observed them again and archived them: the deleted
conversation came back. :func:`forget` removes both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from . import journal
from .archive import _ensure_tables, check_conversation_id


@dataclass(frozen=True)
class Forgotten:
    """What :func:`forget` deleted: the conversation's archived topics (their document ids) and open turns."""

    conversation_id: str
    documents: tuple[str, ...]
    open_turns: int

    def to_dict(self) -> dict[str, Any]:
        return {"conversation_id": self.conversation_id, "topics": len(self.documents), "documents": list(self.documents),
                "open_turns": self.open_turns, "deleted": True}


def forget(store: Any, conversation_id: str) -> Forgotten:
    """Delete every archived topic and open turn of ``conversation_id`` in the store's project, all or none;
    an id the project holds nothing of is an :class:`InputError` (a mistyped id deletes nothing, and says so)."""
    conv = check_conversation_id(conversation_id)
    _ensure_tables(store)
    journal.ensure_table(store)
    with store.tx():
        docs = tuple(r[0] for r in store._q("SELECT document_id FROM memory_topics WHERE project_id = ? AND "
                                            "conversation_id = ? ORDER BY start_turn", (store.project_id, conv)))
        held = journal.stamp(store, conv)[0]
        if not docs and not held:
            raise InputError(f"no conversation {conv!r} in this project (nothing archived, no open turns)")
        for d in docs:
            store.delete_document(d)  # (its memory_topics and memory_turns rows cascade)
        journal.drop(store, conv)
    return Forgotten(conv, docs, held)

"""The validator: ask a chat LLM whether each chunk is logically complete, record problems as bubbles.

The LLM sees the chunk (and a little of its neighbours, marked as context) and answers in JSON
``{"complete": true|false, "reason": "..."}``; free-form answers starting with yes/no (是/否) are
understood too. A chunk judged incomplete becomes a :class:`~logichunk.types.Bubble` of category
``"incomplete"``; an answer that cannot be read becomes one of category ``"validator_unreadable"``
(low priority), so nothing is silently dropped. The chunk text itself is never changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from ..tree import ChunkTree
from ..types import Bubble, Chunk
from .llm_breaks import ChatModel

__all__ = ["parse_verdict", "validate", "validate_chunk"]

SYSTEM = (
    "You review the chunks of a document that was split for retrieval. A chunk is logically complete "
    "when it can be understood on its own: it does not stop mid-argument, mid-list or mid-step, and "
    "does not depend on an unresolved reference (\"this method\", \"as shown above\") whose meaning "
    "lies in another chunk. Answer only with JSON: {\"complete\": true or false, \"reason\": \"short "
    "reason\"}."
)

_MAX_CHARS = 4000
_CONTEXT_CHARS = 300


def _clip(s: str, n: int, *, tail: bool = False) -> str:
    if len(s) <= n:
        return s
    return ("…" + s[-n:]) if tail else (s[:n] + "…")


def prompt(tree: ChunkTree, chunk: Chunk, prev: Chunk | None, nxt: Chunk | None) -> list[dict[str, str]]:
    parts = []
    if prev is not None:
        parts.append("Context before (not part of the chunk):\n" + _clip(tree.text_of(prev), _CONTEXT_CHARS, tail=True))
    parts.append("Chunk:\n<<<\n" + _clip(tree.text_of(chunk), _MAX_CHARS) + "\n>>>")
    if nxt is not None:
        parts.append("Context after (not part of the chunk):\n" + _clip(tree.text_of(nxt), _CONTEXT_CHARS))
    parts.append("Is the chunk logically complete?")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


_YES = re.compile(r"^\W*(?:(?:yes|true|complete)\b|是|完整|对)", re.IGNORECASE)
_NO = re.compile(r"^\W*(?:(?:no|false|incomplete|not complete)\b|否|不)", re.IGNORECASE)
_TAKEN_BACK = re.compile(r"\b(?:no|not|incomplete)\b|否|不", re.IGNORECASE)


def parse_verdict(answer: str) -> tuple[bool | None, str]:
    """``(complete, reason)`` from an LLM answer; ``complete`` is None when it cannot be read."""
    text = answer.strip()
    m = re.search(r"\{.*\}", text, re.DOTALL)
    if m:
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "complete" in obj:  # the value decides, never the words around it (the
            # key's own name read as a "complete": {"complete": "incomplete"} was a yes)
            return _verdict_value(obj["complete"]), str(obj.get("reason", "") or "")
    # the negative first: 不完整 contains 完整
    if _NO.search(text):
        return False, text
    if (yes := _YES.search(text)) is not None:
        # a yes taken back at once ("Complete? No, it is cut off") is no verdict: read by a person
        return (None if _TAKEN_BACK.search(text[yes.end() : yes.end() + 40]) else True), text
    return None, text


def _verdict_value(v: Any) -> bool | None:
    """A JSON verdict's ``complete`` value: a bool, 1 or 0, or a word that says it; None for anything else."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int | float) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        w = v.strip().lower()
        if w in ("true", "yes", "complete", "是", "完整", "1"):
            return True
        if w in ("false", "no", "incomplete", "not complete", "否", "不完整", "0"):
            return False
    return None


def validate_chunk(llm: ChatModel, tree: ChunkTree, chunk: Chunk, prev: Chunk | None = None,
                   nxt: Chunk | None = None, *, source: str = "<text>") -> Bubble | None:
    """One LLM call; a bubble when the chunk is incomplete or the answer unreadable, else None."""
    res = llm.complete(prompt(tree, chunk, prev, nxt), max_tokens=128, temperature=0.0)
    answer = str(getattr(res, "text", res))
    complete, reason = parse_verdict(answer)
    if complete:
        return None
    ctx: dict[str, Any] = {"source": source, "chunk_id": chunk.id, "span": [chunk.start, chunk.end],
                           "level": chunk.level, "method": chunk.method, "answer": answer}
    excerpt = _clip(tree.text_of(chunk), 120)
    if complete is None:
        return Bubble("validator_unreadable", excerpt, "low", ctx)
    ctx["reason"] = reason
    return Bubble("incomplete", excerpt, "medium", ctx)


def validate(tree: ChunkTree, llm: ChatModel, *, chunks: Iterable[Chunk] | None = None,
             source: str = "<text>",
             on_judged: Callable[[Chunk, Bubble | None], None] | None = None) -> list[Bubble]:
    """Ask ``llm`` about every leaf chunk of ``tree`` (or the given ``chunks``), in document order.
    Returns the problems found, as bubbles; errors of the LLM client propagate. ``on_judged`` is
    told each chunk as soon as it is judged (with its problem, or None): a long run can show it."""
    todo = list(chunks) if chunks is not None else tree.leaves()
    leaves = tree.leaves()
    order = {c.id: k for k, c in enumerate(leaves)}
    out: list[Bubble] = []
    for c in todo:
        k = order.get(c.id)
        prev = leaves[k - 1] if k is not None and k > 0 else None
        nxt = leaves[k + 1] if k is not None and k + 1 < len(leaves) else None
        b = validate_chunk(llm, tree, c, prev, nxt, source=source)
        if b is not None:
            out.append(b)
        if on_judged is not None:
            on_judged(c, b)
    return out

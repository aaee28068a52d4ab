"""Tier 2 of the cascade: ask a chat LLM where the logic breaks in a piece entropy could not split.

The LLM only *points at* sentence numbers; the text itself is never sent back or rewritten, so
whatever the model answers, the chunks stay exact spans of the original.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol


class ChatModel(Protocol):
    """The slice of the LLM protocol (``logichunk.models.llm``) this tier needs."""

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int = ..., temperature: float = ...) -> Any: ...


SYSTEM = (
    "You split documents into logically complete units. You are given numbered sentences. "
    "Answer with a JSON list of the sentence numbers after which a new topic, step or argument "
    "begins. Do not explain. Example answer: [3, 7]"
)

_MAX_SENTENCE_CHARS = 300


def prompt(sentences: Sequence[str]) -> list[dict[str, str]]:
    lines = []
    for i, s in enumerate(sentences, 1):
        s = " ".join(s.split())
        if len(s) > _MAX_SENTENCE_CHARS:
            s = s[: _MAX_SENTENCE_CHARS - 1] + "…"
        lines.append(f"[{i}] {s}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def parse_breaks(answer: str, n: int) -> list[int]:
    """Sentence numbers (1-based, after which to cut) from a free-form answer, kept only when they
    name a real gap (1..n-1). Tolerates prose around a JSON list, or bare numbers."""
    found: list[int] = []
    m = re.search(r"\[[^\[\]]*\]", answer)
    if m:
        try:
            found = [int(x) for x in json.loads(m.group(0)) if isinstance(x, int | float | str) and str(x).strip().lstrip("-").isdigit()]
        except (ValueError, TypeError):
            found = []
    if not found:
        found = [int(x) for x in re.findall(r"\d+", answer)]
    return sorted({k for k in found if 1 <= k <= n - 1})


def llm_breaks(llm: ChatModel, sentences: Sequence[str]) -> list[int]:
    """0-based gap indices (cut after sentence i) proposed by the LLM for these sentences."""
    if len(sentences) < 2:
        return []
    result = llm.complete(prompt(sentences), max_tokens=128, temperature=0.0)
    text = getattr(result, "text", result)
    return [k - 1 for k in parse_breaks(str(text), len(sentences))]

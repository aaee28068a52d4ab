"""What every causal-LM backend shares (transformers in :mod:`.lm`, llama.cpp, the HTTP completions
client, the GGUF converter and the fused int8 layers): the result type and protocol, prompt layout,
the torch import check, the cache folder and the CPU's feature flags. It imports no backend, so the
backends depend on it and :mod:`.lm` (which picks a backend) depends on them, one way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..cache_dir import cache_root
from ..errors import InputError, ModelUnavailable
from .llm import _check_messages

__all__ = ["LanguageModel", "TokenLogprobs", "chat_prompt", "check_room", "cpu_flags", "default_cache_dir",
           "option_layout", "plain_prompt", "require_torch", "shared_prefix"]


@dataclass(frozen=True, eq=False)
class TokenLogprobs:
    """Per-token results over one text. ``starts``/``ends`` (int64) are each token's character span
    in the text (tokens that cover no character — special tokens — are not listed); ``logprobs``
    (float64) is ``log P(token | everything before it)``, NaN where the model had no context to
    predict from (the text's first token, when the tokenizer adds no BOS)."""

    text: str
    starts: np.ndarray
    ends: np.ndarray
    logprobs: np.ndarray
    model_id: str = ""

    def __len__(self) -> int:
        return int(self.starts.size)


@runtime_checkable
class LanguageModel(Protocol):
    """A causal LM that scores text."""

    model_id: str

    def token_logprobs(self, text: str) -> TokenLogprobs:
        """Every token of ``text`` with ``log P(token | all preceding text)``."""
        ...

    def option_logprobs(self, prompt: str | list[dict[str, str]], options: Sequence[str]) -> np.ndarray:
        """``log P(option | prompt)`` for each option (summed over the option's tokens). A prompt given
        as chat messages goes through the model's chat template when it has one."""
        ...


def plain_prompt(messages: list[dict[str, str]]) -> str:
    """Chat messages for a model without a chat template: ``Role: content`` paragraphs (a system
    message as it is) ending with ``Answer:``, after which options are scored with a leading space."""
    lines = [m["content"] if m["role"] == "system" else f"{m['role'].capitalize()}: {m['content']}" for m in messages]
    return "\n\n".join(lines) + "\n\nAnswer:"


def option_layout(lm: Any, prompt: str | list[dict[str, str]]) -> tuple[str, str]:
    """``(prompt text, what goes before each option)`` for option scoring by any local backend:
    the prompt through ``lm.render``; options after a :func:`plain_prompt` (chat messages, no chat
    template) get a leading space (``Answer: 1``)."""
    space = " " if not isinstance(prompt, str) and not lm.template else ""
    return lm.render(prompt), space


def shared_prefix(prev: np.ndarray | None, ids: np.ndarray) -> int:
    """How many leading tokens of ``ids`` a cache built for ``prev`` already holds: their longest
    common prefix, leaving at least the last token of ``ids`` to decode (its output is what is
    wanted). Exact reuse: a causal model's cache for a prefix does not depend on what follows it."""
    if prev is None:
        return 0
    m = min(prev.size, ids.size - 1)
    neq = np.flatnonzero(prev[:m] != ids[:m])
    return int(neq[0]) if neq.size else m


def require_torch() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as e:  # pragma: no cover - exercised on bare installs
        raise ModelUnavailable(
            "a causal LM needs torch and transformers: pip install 'logichunk[lm]' "
            "(install torch==2.13.0 first, the CPU wheel)"
        ) from e
    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bars in a CLI's output
    return torch, transformers


def default_cache_dir() -> Path:
    """``$LOGICHUNK_CACHE``, else ``$XDG_CACHE_HOME/logichunk``, else ``~/.cache/logichunk``."""
    return cache_root()


def cpu_flags() -> frozenset[str]:
    """The kernel's CPU feature flags (``/proc/cpuinfo``; empty where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[-1].split())
    except OSError:
        pass
    return frozenset()


def chat_prompt(lm: Any, messages: list[dict[str, Any]], max_tokens: int) -> str:
    """Checked messages as ``lm``'s prompt text (``lm.render``: its chat template, else plain lines);
    shared by the in-process chat LLMs (transformers here, llama.cpp in ``lm_llamacpp``)."""
    _check_messages(messages)
    if max_tokens < 1:
        raise InputError(f"max_tokens must be at least 1, got {max_tokens}")
    return lm.render([{"role": m["role"], "content": str(m.get("content", ""))} for m in messages])


def check_room(n_prompt: int, max_tokens: int, limit: int) -> None:
    """A prompt too long for the model's context is an error, never a silent truncation."""
    if n_prompt + max_tokens > limit:
        raise InputError(f"prompt of {n_prompt} tokens (+{max_tokens} to generate) exceeds the local model's "
                         f"{limit}-token limit")

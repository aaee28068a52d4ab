"""A chat LLM that runs in-process on a local causal LM (the packaged Qwen2.5-Coder-0.5B-Instruct by
default): the offline stand-in for an OpenAI-compatible server, for the cascade's tier 2, the
validator, compensation and the conversation arbiter.

Why: on a machine with no server and no network the LLM tiers would otherwise always be skipped.
A 0.5B model is a weak judge, so callers keep their parsers strict and their fallbacks; but it
answers short yes/no and "which sentence numbers" questions usefully, and it is honest about cost
(tokens counted from the tokenizer, not estimated).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..errors import LogichunkError
from .llm import ChatResult, Usage, UsageCounter
from .lm import TransformersLM
from .lm_common import chat_prompt, check_room  # re-exported: their home before lm_common

__all__ = ["LocalChatLLM", "chat_on", "chat_prompt", "check_room"]


class LocalChatLLM:
    """Greedy (``temperature=0``) or sampled generation with the model's chat template.

    ``lm`` is a :class:`~logichunk.models.lm.TransformersLM` (its model and tokenizer are shared,
    so the same loaded weights serve perplexity, margin sampling and chat). ``max_prompt_tokens``
    keeps prompts inside the model's context; longer prompts are an :class:`InputError` rather than a
    silent truncation.
    """

    def __init__(self, lm: TransformersLM, *, max_prompt_tokens: int | None = None) -> None:
        self.lm = lm
        self.model_id = f"local:{lm.model_id}"
        self.usage = UsageCounter()
        self.max_prompt_tokens = int(max_prompt_tokens or min(lm.position_limit, 8192))
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalChatLLM({self.lm.model_id!r})"

    def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 256, temperature: float = 0.0,
                 stop: Sequence[str] | None = None) -> ChatResult:
        prompt = chat_prompt(self.lm, messages, max_tokens)
        torch = self.lm._torch
        tok = self.lm.tokenizer
        ids = tok(prompt, add_special_tokens=True, return_tensors="pt")["input_ids"].to(self.lm.model.device)
        n_prompt = int(ids.shape[1])
        check_room(n_prompt, max_tokens, self.max_prompt_tokens)
        gen: dict[str, Any] = {"max_new_tokens": int(max_tokens), "do_sample": temperature > 0,
                               "pad_token_id": tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id}
        if temperature > 0:
            gen["temperature"] = float(temperature)
        else:  # explicit: the model's generation config may ask for sampling
            gen.update(temperature=None, top_p=None, top_k=None)
        restore = self.lm._set_threads()
        try:
            with self._lock, torch.inference_mode():
                out = self.lm.model.generate(ids, attention_mask=torch.ones_like(ids), **gen)
        finally:
            restore()
        new = out[0, n_prompt:].tolist()  # (from the model's device)
        n_new = len(new)
        text = tok.decode(new, skip_special_tokens=True)
        finish = "length" if n_new >= max_tokens else "stop"
        for s in stop or ():
            cut = text.find(s)
            if cut >= 0:
                text, finish = text[:cut], "stop"
        usage = Usage(n_prompt, n_new)
        self.usage.add(usage)
        return ChatResult(text=text.strip(), usage=usage, model=self.model_id, finish_reason=finish)


def chat_on(lm: Any) -> Any:
    """The in-process chat LLM on ``lm``'s loaded weights: :class:`LocalChatLLM` for a
    :class:`~logichunk.models.lm.TransformersLM`, the llama.cpp one for a ``LlamaCppLM``."""
    if isinstance(lm, TransformersLM):
        return LocalChatLLM(lm)
    from .lm_llamacpp import LlamaCppChatLLM, LlamaCppLM

    if isinstance(lm, LlamaCppLM):
        return LlamaCppChatLLM(lm)
    raise LogichunkError(f"{getattr(lm, 'model_id', lm)!s} is not a local model (a folder or a GGUF file)")

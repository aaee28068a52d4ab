"""Chat LLMs: the protocol the LLM tiers use, an OpenAI-compatible HTTP client, and a scripted LLM.

Why a protocol: the cascade's tier 2, the validator and compensation only need "messages in, text
out"; whether that is vLLM, llama.cpp's server, Ollama, a cloud API or a list of canned answers is
the caller's choice. Every implementation counts calls and tokens in a :class:`UsageCounter`, so a
run can report what it cost.

:class:`ScriptedLLM` is a real (if dumb) offline LLM: answers come from a list or a function. It is
what tests and demos use to drive the LLM tiers without a server, and it records the prompts it got.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import LogichunkError
from .http import JSONClient, MalformedResponse, RetryPolicy, api_key_from_env, default_timeout, require

__all__ = [
    "LLM", "ChatResult", "OpenAIChatLLM", "ScriptedLLM", "ScriptExhausted", "Usage", "UsageCounter",
    "estimate_tokens",
]

Message = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one call. ``estimated`` is True when the server did not report usage and the
    numbers come from :func:`estimate_tokens`."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class ChatResult:
    """One answer: its text, usage, the model that answered and why it stopped."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None

    def __str__(self) -> str:
        return self.text


@runtime_checkable
class LLM(Protocol):
    """A chat model: OpenAI-style messages (``{"role": ..., "content": ...}``) in, one answer out."""

    model_id: str
    usage: UsageCounter

    def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 256, temperature: float = 0.0,
                 stop: Sequence[str] | None = None) -> ChatResult:
        ...


class UsageCounter:
    """Running totals of calls and tokens, and a cost if prices (per million tokens) are given.

    Thread-safe, because the LLM tiers may run pieces of a document concurrently.
    """

    def __init__(self, *, prompt_price_per_m: float = 0.0, completion_price_per_m: float = 0.0) -> None:
        self.prompt_price_per_m = prompt_price_per_m
        self.completion_price_per_m = completion_price_per_m
        self._lock = threading.Lock()
        self.calls = self.failures = self.prompt_tokens = self.completion_tokens = self.estimated_calls = 0

    def add(self, usage: Usage) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += usage.prompt_tokens
            self.completion_tokens += usage.completion_tokens
            self.estimated_calls += int(usage.estimated)

    def fail(self) -> None:
        with self._lock:
            self.failures += 1

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float:
        return (self.prompt_tokens * self.prompt_price_per_m
                + self.completion_tokens * self.completion_price_per_m) / 1e6

    def snapshot(self) -> dict[str, float | int]:
        with self._lock:
            return {"calls": self.calls, "failures": self.failures, "prompt_tokens": self.prompt_tokens,
                    "completion_tokens": self.completion_tokens, "total_tokens": self.total_tokens,
                    "estimated_calls": self.estimated_calls, "cost": self.cost}

    def __repr__(self) -> str:
        return f"UsageCounter({self.snapshot()})"


_TOKEN_RX = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\W_]+|[^\w\s]",
                       re.UNICODE)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free token estimate: one per CJK character, per word (long words count ~4
    characters a token) and per punctuation mark. Close enough for budgets and cost reports."""
    n = 0
    for m in _TOKEN_RX.finditer(text):
        tok = m.group(0)
        n += 1 if len(tok) <= 4 else (len(tok) + 3) // 4
    return n


def _check_messages(messages: Sequence[Message]) -> None:
    if not messages:
        raise LogichunkError("an LLM call needs at least one message")
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or "role" not in m or "content" not in m:
            raise LogichunkError(f"message {i} must be a mapping with 'role' and 'content', got {m!r}")


class OpenAIChatLLM:
    """A client for any OpenAI-compatible ``/v1/chat/completions`` endpoint.

    ``base_url`` is the API root (``http://127.0.0.1:8080/v1``); ``api_key`` defaults to
    ``$LOGICHUNK_API_KEY`` / ``$OPENAI_API_KEY``. Timeouts and retries (5xx, 408/429, timeouts,
    connection errors; never other 4xx) come from :class:`~logichunk.models.http.JSONClient`; failures
    raise :class:`~logichunk.models.http.EndpointError` subclasses, and a 2xx answer without the
    fields the protocol promises raises :class:`~logichunk.models.http.MalformedResponse`.
    ``extra_body`` is merged into every request (e.g. ``{"seed": 0}`` or server-specific options).
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float | None = None,
                 retry: RetryPolicy | None = None, extra_body: Mapping[str, Any] | None = None,
                 prompt_price_per_m: float = 0.0, completion_price_per_m: float = 0.0) -> None:
        self.client = JSONClient(base_url, api_key=api_key or api_key_from_env(), timeout=default_timeout(120.0) if timeout is None else timeout, retry=retry)
        self.model = model
        self.model_id = f"openai:{self.client.base_url}#{model}"
        self.extra_body = dict(extra_body or {})
        self.usage = UsageCounter(prompt_price_per_m=prompt_price_per_m,
                                  completion_price_per_m=completion_price_per_m)

    def __repr__(self) -> str:
        return f"OpenAIChatLLM({self.client.base_url!r}, model={self.model!r})"

    def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 256, temperature: float = 0.0,
                 stop: Sequence[str] | None = None) -> ChatResult:
        _check_messages(messages)
        payload: dict[str, Any] = {"model": self.model, "messages": list(messages), "max_tokens": int(max_tokens),
                                   "temperature": float(temperature), **self.extra_body}
        if stop:
            payload["stop"] = list(stop)
        try:
            answer = self.client.post("chat/completions", payload)
            result = self._parse(answer, messages)
        except LogichunkError:
            self.usage.fail()
            raise
        self.usage.add(result.usage)
        return result

    def _parse(self, answer: Any, messages: Sequence[Message]) -> ChatResult:
        url = self.client.url("chat/completions")
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):  # some servers say 200 + error
            raise MalformedResponse(f"{url} returned an error object: {answer['error'].get('message', answer['error'])}",
                                    url=url, status=200)
        text = require(answer, "choices.0.message.content", url)
        if not isinstance(text, str):
            raise MalformedResponse(f"{url} answer has no text content (content={text!r})", url=url, status=200)
        finish = answer["choices"][0].get("finish_reason")
        usage = answer.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            u = Usage(int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0))
        else:
            u = Usage(sum(estimate_tokens(str(m.get("content", ""))) for m in messages), estimate_tokens(text),
                      estimated=True)
        return ChatResult(text=text, usage=u, model=str(answer.get("model") or self.model), finish_reason=finish)


class ScriptExhausted(LogichunkError):
    """A :class:`ScriptedLLM` was asked more questions than it has answers."""


class ScriptedLLM:
    """An offline LLM whose answers are scripted.

    ``answers`` is either a sequence (returned in order; ``cycle=True`` starts over at the end,
    otherwise running out raises :class:`ScriptExhausted`) or a callable ``messages -> str`` (for
    answers that depend on the prompt). ``prompts`` keeps every message list it was given; token
    usage is estimated with :func:`estimate_tokens`. ``stop`` sequences cut the answer as a server would.
    """

    def __init__(self, answers: Sequence[str] | Callable[[list[dict[str, Any]]], str], *, cycle: bool = False,
                 model_id: str = "scripted") -> None:
        if isinstance(answers, str):
            raise TypeError("answers must be a sequence of strings or a callable, not one string")
        self._answers = answers if callable(answers) else list(answers)
        self.cycle = cycle
        self.model_id = model_id
        self.prompts: list[list[dict[str, Any]]] = []
        self.usage = UsageCounter()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ScriptedLLM(calls={self.calls})"

    @property
    def calls(self) -> int:
        return self.usage.calls

    def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 256, temperature: float = 0.0,
                 stop: Sequence[str] | None = None) -> ChatResult:
        _check_messages(messages)
        with self._lock:
            k = len(self.prompts)
            self.prompts.append([dict(m) for m in messages])
            if callable(self._answers):
                text = str(self._answers(messages))
            else:
                if not self._answers:
                    raise ScriptExhausted("ScriptedLLM has no answers")
                if k >= len(self._answers) and not self.cycle:
                    raise ScriptExhausted(f"ScriptedLLM ran out of answers after {len(self._answers)} calls")
                text = self._answers[k % len(self._answers)]
        finish = "stop"
        for s in stop or ():
            cut = text.find(s)
            if cut >= 0:
                text = text[:cut]
        usage = Usage(sum(estimate_tokens(str(m.get("content", ""))) for m in messages), estimate_tokens(text),
                      estimated=True)
        self.usage.add(usage)
        return ChatResult(text=text, usage=usage, model=self.model_id, finish_reason=finish)

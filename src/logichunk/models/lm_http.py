"""A :class:`~logichunk.models.lm.LanguageModel` over an OpenAI-compatible ``/v1/completions``
endpoint that echoes the prompt's log-probabilities (vLLM, llama.cpp server, the legacy OpenAI API):
``{"prompt": ..., "echo": true, "logprobs": 0, "max_tokens": 0}`` returns, for every prompt token,
its text, ``log P(token | preceding prompt)`` and its character offset (``text_offset``).

Long texts go in windows of ``max_chars`` characters, each sent with up to ``context_chars`` of the
text before it as context; only the tokens that end inside the window are kept, so every character
is scored once, conditioned on at least ``context_chars`` of preceding text. Window edges are moved
back to whitespace or punctuation where possible, so few tokens straddle them (a token straddling the
window's start is kept, its span clipped to the window). Standard library only; transport errors, retries and timeouts
come from :class:`~logichunk.models.http.JSONClient`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from .http import JSONClient, MalformedResponse, RetryPolicy, api_key_from_env, default_timeout
from .lm_common import TokenLogprobs

__all__ = ["CompletionsLM"]


def cat(xs: list[np.ndarray], dt: type) -> np.ndarray:
    return np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)

_SOFT_EDGE = " \t\r\n.,;:!?。，；：！？、）)]}」』”’"


def _check_echo(prompt: str, toks: list[Any], o: np.ndarray, v: np.ndarray, url: str) -> None:
    """The echoed prompt must be the prompt: tokens from offset 0 to its end, their texts where their
    offsets say (tokens of partial UTF-8 characters, shown as U+FFFD or ``bytes:``, are not compared),
    a log-probability for every token but the first, none above 0. Otherwise scores would be pinned
    to the wrong characters, or missing tokens would be spread over text they never scored."""
    if not prompt:
        return
    if not o.size:
        raise MalformedResponse(f"{url}: the answer echoes no token of the prompt", url=url)
    if o[0] != 0:
        raise MalformedResponse(f"{url}: the echoed prompt starts at offset {int(o[0])}, not 0", url=url)
    texts = [t if isinstance(t, str) else "" for t in toks]
    if int(o[-1]) + max(len(texts[-1]), 1) < len(prompt):
        raise MalformedResponse(f"{url}: the echoed tokens end at character {int(o[-1]) + len(texts[-1])} of "
                                f"{len(prompt)}: the prompt was not echoed whole", url=url)
    checked = [(t, int(a)) for t, a in zip(texts, o.tolist(), strict=True)
               if t and "\ufffd" not in t and not t.startswith("bytes:")]
    wrong = sum(prompt[a : a + len(t)] != t for t, a in checked)
    if checked and wrong > max(2, len(checked) // 20):
        raise MalformedResponse(f"{url}: {wrong} of {len(checked)} echoed tokens do not match the prompt at their "
                                "offsets", url=url)
    if np.isnan(v[1:]).any():
        raise MalformedResponse(f"{url}: {int(np.isnan(v[1:]).sum())} echoed tokens have no log-probability", url=url)
    if (v > 1e-6).any():
        raise MalformedResponse(f"{url}: a log-probability above 0 ({float(np.nanmax(v)):.3g}) is impossible", url=url)


class CompletionsLM:
    """See the module docstring. ``base_url`` ends with ``/v1`` (``http://host:8000/v1``)."""

    def __init__(
        self,
        base_url: str,
        model: str = "default",
        *,
        api_key: str | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        max_chars: int = 6000,
        context_chars: int = 2000,
    ) -> None:
        if max_chars < 1 or context_chars < 0:
            raise InputError("max_chars must be positive and context_chars not negative")
        self.client = JSONClient(base_url, api_key=api_key if api_key is not None else api_key_from_env(),
                                 timeout=default_timeout(120.0) if timeout is None else timeout, retry=retry)
        self.model = model
        self.model_id = f"{model}@{self.client.base_url}"
        self.max_chars = int(max_chars)
        self.context_chars = int(context_chars)

    def __repr__(self) -> str:
        return f"CompletionsLM({self.client.base_url!r}, model={self.model!r})"

    # ------------------------------------------------------------------ protocol
    def _echo(self, prompts: list[str]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For each prompt: token (starts, ends, logprobs) within the prompt."""
        body = {"model": self.model, "prompt": prompts if len(prompts) > 1 else prompts[0], "max_tokens": 0,
                "echo": True, "logprobs": 0, "temperature": 0.0}
        path = "completions"
        ans = self.client.post(path, body)
        url = self.client.url(path)
        choices = ans.get("choices") if isinstance(ans, dict) else None
        if not isinstance(choices, list) or len(choices) != len(prompts):
            raise MalformedResponse(f"{url}: expected {len(prompts)} choices with echoed log-probs", url=url)
        choices = sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
        out = []
        for prompt, ch in zip(prompts, choices, strict=True):
            lp = ch.get("logprobs") if isinstance(ch, dict) else None
            if not isinstance(lp, dict):
                raise MalformedResponse(f"{url}: no logprobs in the answer (does the server support echo?)", url=url)
            toks, vals, offs = lp.get("tokens"), lp.get("token_logprobs"), lp.get("text_offset")
            if not (isinstance(toks, list) and isinstance(vals, list) and isinstance(offs, list)
                    and len(toks) == len(vals) == len(offs)):
                raise MalformedResponse(f"{url}: tokens, token_logprobs and text_offset must be lists of one length",
                                        url=url)
            try:
                o = np.asarray(offs, dtype=np.int64)
                v = np.asarray([math.nan if x is None else float(x) for x in vals], dtype=np.float64)
            except (TypeError, ValueError) as e:
                raise MalformedResponse(f"{url}: non-numeric log-probs or offsets ({e})", url=url) from e
            if o.size and (np.any(np.diff(o) < 0) or o[0] < 0):
                raise MalformedResponse(f"{url}: text offsets are not increasing", url=url)
            keep = o < len(prompt)  # echo only: drop anything generated after the prompt
            _check_echo(prompt, [t for t, k in zip(toks, keep.tolist(), strict=True) if k], o[keep], v[keep], url)
            o, v = o[keep], v[keep]
            e = np.append(o[1:], len(prompt)) if o.size else o
            nonempty = e > o
            out.append((o[nonempty], e[nonempty], v[nonempty]))
        return out

    def _windows(self, text: str) -> list[tuple[int, int]]:
        n = len(text)
        out = []
        a = 0
        while a < n:
            b = min(n, a + self.max_chars)
            if b < n:
                lo = a + (self.max_chars * 3) // 4
                for k in range(b, lo, -1):
                    if text[k - 1] in _SOFT_EDGE and text[k] not in _SOFT_EDGE:
                        b = k
                        break
            out.append((a, b))
            a = b
        return out

    def token_logprobs(self, text: str) -> TokenLogprobs:
        if not isinstance(text, str):
            raise InputError(f"text must be str, got {type(text).__name__}")
        starts, ends, lps = [], [], []
        for a, b in self._windows(text):
            c = max(0, a - self.context_chars)
            (o, e, v), = self._echo([text[c:b]])
            keep = e + c > a  # tokens not wholly inside the context; one straddling ``a`` is clipped to it
            starts.append(np.maximum(o[keep] + c, a))
            ends.append(e[keep] + c)
            lps.append(v[keep])
        return TokenLogprobs(text, cat(starts, np.int64), cat(ends, np.int64), cat(lps, np.float64), self.model_id)

    def render(self, prompt: str | list[dict[str, str]]) -> str:
        if isinstance(prompt, str):
            return prompt
        lines = [m["content"] if m["role"] == "system" else f"{m['role'].capitalize()}: {m['content']}" for m in prompt]
        return "\n\n".join(lines) + "\n\nAnswer:"

    def option_logprobs(self, prompt: str | list[dict[str, str]], options: Sequence[str]) -> np.ndarray:
        """``log P(option | prompt)``: the prompt and each option (after a space, for chat prompts,
        which are rendered as plain ``Role: content`` text) echoed in one batched request."""
        if not options:
            return np.zeros(0)
        p = self.render(prompt)
        sep = "" if isinstance(prompt, str) else " "
        res = self._echo([p + sep + o for o in options])
        out = np.zeros(len(options))
        for k, (o, _e, v) in enumerate(res):
            sel = v[o >= len(p)]
            out[k] = float(np.nansum(sel)) if sel.size else -math.inf
        return out

    @property
    def stats(self) -> dict[str, Any]:
        return dict(self.client.stats)

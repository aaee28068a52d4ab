"""A GGUF model run natively by llama.cpp (``llama-cpp-python``): the LanguageModel protocol (token
log-probabilities, option log-probabilities) and a chat LLM on the same loaded weights.

Why beside the transformers path: llama.cpp multiplies the file's quantised weights directly (a
4-bit 7B model stays ~4 GB), where transformers must dequantise the whole file to float32 first
(:mod:`logichunk.models.gguf`; 28 GB for that model). Optional: ``llama-cpp-python`` is built from
source by pip (a C++ compiler and CMake; about 5 minutes on 2 cores).

The pass is the same as :class:`~logichunk.models.lm.TransformersLM`'s: token windows, a KV cache
held to ``max_context`` tokens (the first ``sinks`` kept, the oldest others dropped and the rest
shifted back, llama.cpp's context shift; decoded again where a model's cache cannot shift), each
target token's log-softmax read from one window's logits at a time — never an ``N × vocabulary``
array for the text. Token spans come from the
tokens' own bytes, checked against the text's UTF-8 bytes.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, ModelUnavailable
from .llm import ChatResult, Usage, UsageCounter
from .lm_common import TokenLogprobs, chat_prompt, check_room, option_layout, plain_prompt, shared_prefix

__all__ = ["LlamaCppChatLLM", "LlamaCppLM", "llama_cpp_available"]


def llama_cpp_available() -> bool:
    """Whether ``llama-cpp-python`` is installed (it is optional: a C++ build from source)."""
    return importlib.util.find_spec("llama_cpp") is not None


def byte_spans_to_chars(text: str, pieces: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Character ``(starts, ends)`` of tokens given as consecutive byte pieces of ``text``'s UTF-8.
    A token that ends inside a character's bytes ends after that character (byte-level BPE splits
    some characters over two tokens; both get the character). Raises :class:`ModelUnavailable` when
    the pieces do not spell the text (a tokenizer that normalises or adds spaces)."""
    raw = text.encode("utf-8")
    lens = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
    ends_b = np.cumsum(lens)
    if b"".join(pieces) != raw:
        raise ModelUnavailable("llama.cpp's tokens do not spell the text byte for byte (this tokenizer "
                               "normalises or adds spaces); use --lm-backend transformers")
    starts_b = ends_b - lens
    lead = np.append((np.frombuffer(raw, dtype=np.uint8) & 0xC0) != 0x80, True)  # byte starts a character
    chars_before = np.concatenate(([0], np.cumsum(lead[:-1])))  # characters begun before each byte offset
    starts = chars_before[starts_b] - ~lead[starts_b]  # a piece beginning inside a character takes it
    ends = chars_before[ends_b]  # a piece ending inside a character includes it
    return starts.astype(np.int64), ends.astype(np.int64)


def _log_softmax_at(logits: np.ndarray, targets: np.ndarray, *, rows: int = 16) -> np.ndarray:
    """``log_softmax(logits)[row, targets[row]]`` for each row (float64). ``rows`` rows at a time,
    so the scratch copy stays in cache (the rows × vocabulary logits are llama.cpp's own buffer,
    read in place): 0.46 → 0.07 s per 256 × 151,936 window here."""
    out = np.empty(targets.size, dtype=np.float64)
    for r0 in range(0, targets.size, rows):
        blk = logits[r0 : r0 + rows]
        m = blk.max(axis=1)
        tmp = np.subtract(blk, m[:, None])
        np.exp(tmp, out=tmp)
        lse = np.log(tmp.sum(axis=1, dtype=np.float64)) + m
        t = targets[r0 : r0 + rows]
        out[r0 : r0 + rows] = blk[np.arange(t.size), t] - lse
    return out


class LlamaCppLM:
    """A GGUF file through llama.cpp. ``window``: tokens decoded per batch (their logits exist at
    once: ``window × vocabulary`` floats); ``max_context``: tokens the KV cache holds (at most the
    model's training context); ``sinks``: first tokens always kept; ``threads``: llama.cpp's threads
    (default: all cores)."""

    def __init__(self, path: str | os.PathLike[str], *, window: int = 256, max_context: int = 2048, sinks: int = 4,
                 threads: int | None = None, model_id: str | None = None) -> None:
        if not llama_cpp_available():
            raise ModelUnavailable("llama.cpp needs llama-cpp-python: pip install llama-cpp-python "
                                   "(a C++ compiler and CMake build it), or use --lm-backend transformers")
        if window < 1 or max_context < 2 or sinks < 0:
            raise InputError("window must be positive, max_context at least 2, sinks not negative")
        import llama_cpp

        p = Path(path).expanduser()
        if not p.is_file():
            raise ModelUnavailable(f"no GGUF file at {p}")
        window = min(int(window), int(max_context) - 1)
        try:
            self._llm = llama_cpp.Llama(model_path=str(p), n_ctx=int(max_context), n_batch=window, n_ubatch=window,
                                        n_threads=threads, logits_all=False, verbose=False)
        except (ValueError, RuntimeError, OSError) as e:
            raise ModelUnavailable(f"llama.cpp cannot load {p}: {e}") from e
        self._llama_cpp = llama_cpp
        self.window = window
        self.max_context = min(int(max_context), int(self._llm.n_ctx()))
        self.sinks = int(sinks)
        self.n_vocab = int(self._llm.n_vocab())
        self.model_id = model_id or f"{p.stem}/llama.cpp"
        self.path = str(p)
        self.template = self._llm.metadata.get("tokenizer.chat_template")
        self._lock = threading.Lock()
        self._prompt: np.ndarray | None = None  # the MSP prompt whose tokens the KV cache holds

    def __repr__(self) -> str:
        return f"LlamaCppLM({self.path!r})"

    # ------------------------------------------------------------------ tokens
    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(ids, starts, ends)``: the model's tokens of ``text`` (a BOS first when the model uses
        one, with the empty span ``(0, 0)``) and their character spans."""
        llm = self._llm
        ids = np.asarray(llm.tokenize(text.encode("utf-8"), add_bos=True, special=False), dtype=np.int64)
        pieces = [self._piece(int(t)) for t in ids]
        bos = int(llm.token_bos())
        special = np.zeros(ids.size, dtype=bool)
        if ids.size and int(ids[0]) == bos and llm._model.add_bos_token():
            special[0] = True
            pieces[0] = b""
        starts, ends = byte_spans_to_chars(text, pieces)
        starts[special], ends[special] = 0, 0
        return ids, starts, ends

    def _piece(self, token: int) -> bytes:
        """The token's bytes as the text holds them (no special-token text, no space stripped)."""
        import ctypes

        vocab = self._llm._model.vocab
        size = 64
        while True:
            buf = ctypes.create_string_buffer(size)
            n = self._llama_cpp.llama_token_to_piece(vocab, token, buf, size, 0, False)
            if n >= 0:
                return buf.raw[:n]
            size = -n  # too small: llama.cpp says how many bytes it needs

    # ------------------------------------------------------------------ the pass
    def _memory(self) -> Any:
        return self._llama_cpp.llama_get_memory(self._llm.ctx)

    def _decode(self, ids: np.ndarray, pos: int, *, logits: bool) -> np.ndarray | None:
        """Decode ``ids`` at positions ``pos …``; their logits (a view of llama.cpp's buffer) when asked."""
        llm = self._llm
        llm._batch.set_batch(batch=[int(t) for t in ids], n_past=int(pos), logits_all=logits)
        llm._ctx.decode(llm._batch)
        if not logits:
            return None
        return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(int(ids.size), self.n_vocab))

    @contextmanager
    def _raw_cache(self, *, keep_prompt: bool = False) -> Iterator[None]:
        """The KV cache for decoding by hand: emptied, unless ``keep_prompt`` (the previous MSP
        prompt stays for :meth:`_decode_prompt` to reuse). Afterwards, whatever happened, ``Llama``'s
        own token bookkeeping is reset, since it no longer matches the cache (its generation would
        otherwise reuse a prefix that is not there)."""
        if not keep_prompt:
            self._prompt = None
            self._llama_cpp.llama_memory_clear(self._memory(), True)
        try:
            yield
        except BaseException:
            self._prompt = None  # the cache's content is unknown
            raise
        finally:
            self._llm.reset()

    def _decode_prompt(self, p_ids: np.ndarray) -> np.ndarray:
        """Decode a prompt, reusing the cache of the previous one up to their longest common token
        prefix (:func:`~logichunk.models.lm.shared_prefix`; MSP prompts share the instructions and the
        growing chunk, so only the new end is decoded). Returns the logits after the prompt's last
        token (one row)."""
        common = shared_prefix(self._prompt, p_ids)
        self._llama_cpp.llama_memory_seq_rm(self._memory(), 0, common, -1)
        self._prompt = None
        last = None
        for s in range(common, p_ids.size, self.window):
            e = min(s + self.window, p_ids.size)
            lg = self._decode(p_ids[s:e], s, logits=e == p_ids.size)
            last = None if lg is None else lg[-1:].copy()
        assert last is not None
        self._prompt = p_ids
        return last

    def _make_room(self, ctx: np.ndarray, need: int) -> np.ndarray:
        """Drop cache entries so ``need`` more tokens fit in ``max_context``: keep the first
        ``sinks``, drop the oldest after them, shift the rest back so positions stay contiguous
        (llama.cpp's context shift); a model whose cache cannot shift (``llama_memory_can_shift``)
        has the kept tokens decoded again from position 0 instead. ``ctx``: the token ids the cache
        holds, in order; returns those it holds afterwards."""
        held = int(ctx.size)
        if held + need <= self.max_context:
            return ctx
        drop = held + need - self.max_context
        keep = max(0, min(self.sinks, held - drop))
        lc, mem = self._llama_cpp, self._memory()
        kept = np.concatenate((ctx[:keep], ctx[keep + drop :]))
        if lc.llama_memory_can_shift(mem):
            lc.llama_memory_seq_rm(mem, 0, keep, keep + drop)
            lc.llama_memory_seq_add(mem, 0, keep + drop, -1, -drop)
        else:
            lc.llama_memory_clear(mem, True)
            for s in range(0, kept.size, self.window):
                self._decode(kept[s : s + self.window], s, logits=False)
        return kept

    def token_logprobs(self, text: str) -> TokenLogprobs:
        """One linear pass over ``text`` (see the module docstring)."""
        if not isinstance(text, str):
            raise InputError(f"text must be str, got {type(text).__name__}")
        ids, starts, ends = self.encode(text)
        n = int(ids.size)
        out = np.full(n, np.nan, dtype=np.float64)
        with self._lock, self._raw_cache():
            ctx = ids[:0]  # the tokens the cache holds
            for s in range(0, n, self.window):
                e = min(s + self.window, n)
                ctx = self._make_room(ctx, e - s)
                lg = self._decode(ids[s:e], ctx.size, logits=True)
                ctx = np.concatenate((ctx, ids[s:e]))
                tgt = ids[s + 1 : e + 1]  # row r predicts token s + r + 1 (the last row: the next window's first)
                out[s + 1 : s + 1 + tgt.size] = _log_softmax_at(lg[: tgt.size], tgt)
        real = ends > starts
        return TokenLogprobs(text, starts[real], ends[real], out[real], self.model_id)

    # ------------------------------------------------------------------ options (MSP)
    def render(self, prompt: str | list[dict[str, str]]) -> str:
        """Chat messages through the file's chat template (``tokenizer.chat_template``) when it has
        one, else as plain ``Role: content`` lines ending with ``Answer:``; a string as it is."""
        if isinstance(prompt, str):
            return prompt
        if self.template:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            llm = self._llm
            fmt = Jinja2ChatFormatter(self.template, eos_token=llm._model.token_get_text(llm.token_eos()),
                                      bos_token=llm._model.token_get_text(llm.token_bos()),
                                      add_generation_prompt=True)
            return fmt(messages=prompt).prompt
        return plain_prompt(prompt)

    def option_logprobs(self, prompt: str | list[dict[str, str]], options: Sequence[str]) -> np.ndarray:
        """``log P(option | prompt)`` for each option: the prompt decoded once (its common prefix with
        the previous prompt reused), each option after it (the cache cut back to the prompt between
        options)."""
        if not options:
            return np.zeros(0)
        text, space = option_layout(self, prompt)
        llm = self._llm
        p_ids = np.asarray(llm.tokenize(text.encode("utf-8"), add_bos=True, special=True), dtype=np.int64)
        opt_ids = [np.asarray(llm.tokenize((space + o).encode("utf-8"), add_bos=False, special=False), dtype=np.int64)
                   for o in options]
        if p_ids.size == 0:
            raise InputError("empty prompt")
        if p_ids.size + max(o.size for o in opt_ids) > self.max_context:
            raise InputError(f"prompt of {p_ids.size} tokens exceeds the model's {self.max_context}-token context")
        res = np.zeros(len(options))
        lc = self._llama_cpp
        with self._lock, self._raw_cache(keep_prompt=True):
            last = self._decode_prompt(p_ids)
            for k, o in enumerate(opt_ids):
                if o.size == 0:
                    continue
                lc.llama_memory_seq_rm(self._memory(), 0, int(p_ids.size), -1)
                rows = last
                if o.size > 1:
                    rows = np.concatenate((last, self._decode(o[:-1], int(p_ids.size), logits=True)))
                res[k] = float(_log_softmax_at(rows, o).sum())
            lc.llama_memory_seq_rm(self._memory(), 0, int(p_ids.size), -1)  # the cache holds the prompt only
        return res


class LlamaCppChatLLM:
    """The chat LLM protocol on a :class:`LlamaCppLM`'s loaded model (``--llm local:FILE.gguf``):
    the prompt rendered as :meth:`LlamaCppLM.render` does, greedy at ``temperature=0``, tokens
    counted by llama.cpp."""

    def __init__(self, lm: LlamaCppLM) -> None:
        self.lm = lm
        self.model_id = f"local:{lm.model_id}"
        self.usage = UsageCounter()

    def __repr__(self) -> str:
        return f"LlamaCppChatLLM({self.lm.model_id!r})"

    def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 256, temperature: float = 0.0,
                 stop: Sequence[str] | None = None) -> ChatResult:
        prompt = chat_prompt(self.lm, messages, max_tokens)
        llm = self.lm._llm
        n_prompt = len(llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
        check_room(n_prompt, max_tokens, self.lm.max_context)
        with self.lm._lock:
            self.lm._prompt = None  # generation rewrites the cache
            llm.reset()
            out = llm.create_completion(prompt, max_tokens=int(max_tokens), temperature=float(temperature),
                                        stop=list(stop or []) or None, top_k=1 if temperature <= 0 else 40)
            llm.reset()
        choice = out["choices"][0]
        u = out.get("usage") or {}
        usage = Usage(int(u.get("prompt_tokens", n_prompt)), int(u.get("completion_tokens", 0)))
        self.usage.add(usage)
        return ChatResult(text=str(choice["text"]).strip(), usage=usage, model=self.model_id,
                          finish_reason=choice.get("finish_reason"))

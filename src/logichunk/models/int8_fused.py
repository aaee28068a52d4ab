"""The int8 decoder layer's element-wise work fused into compiled kernels, built once per machine.

Why: with the W8A8 products of :mod:`logichunk.models.int8` at the CPU's int8 rate, about half of a
short LM pass is the float32 work around them — RMSNorm, per-token quantisation (several passes over
each activation), the int32 → float rescaling, bias, rotary, SiLU × up, residual adds — each a
separate torch operation reading and writing memory. Compiled together, a layer's work before and
after attention runs in a few loops that keep the data in cache: a 512-token pass of the packaged
0.5B model took ~930 → ~730 ms, 2,048 tokens ~4.7 → ~3.8 s (``bench/RESULTS.md``).

How, and why this way:

* two *pure functions* per layer — :class:`PreAttention` (norm, q/k/v products, bias, rotary) and
  :class:`PostAttention` (o product, residual, norm, gate/up products, SiLU × up, down product,
  residual) — take the weights as inputs, so one compiled artifact serves every layer; the token
  count is a dynamic dimension. Attention itself (the KV cache and SDPA) stays torch's own;
* compiled ahead of time with AOTInductor (``torch.export`` + ``aoti_compile_and_package``), once
  per machine, and cached on disk (``<cache>/aoti/``) under a key of everything the machine code
  depends on — torch's version, the CPU's vector extensions, the model's shapes, this file's
  functions — so a later process loads it in milliseconds without a compiler. ``torch.compile``
  instead costs 4–8 s of tracing and compiling in *every* process, more than it saves for a
  one-shot CLI call;
* building needs a C++ compiler and ~30 s, once. When it fails (no compiler, an export error) the
  layers stay eager, the reason is kept beside the artifact (``.failed``) and not retried until the
  key changes; an artifact that does not load, or disagrees with the eager functions on a probe, is
  ignored. Nothing about the results depends on the path beyond int8's own rounding noise.

Only Qwen2-architecture models (the packaged LMs) with every projection in int8 are fused; the
rest run eager. ``LOGICHUNK_LM_FUSED=0`` turns fusion off.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import time
import types
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from .int8 import Int8Linear
from .lm_common import cpu_flags

log = logging.getLogger("logichunk.models")

__all__ = ["FORMAT", "Fusion", "PostAttention", "PreAttention", "Shapes", "fuse_layers", "fusion_key", "unsupported"]

FORMAT = 1  # bump when the wiring around the artifacts changes what they must compute
MIN_TOKENS = 2  # the dynamic dimension's lower bound: single-token steps (generation) run eager
MAX_TOKENS = 1 << 16
EXAMPLE_TOKENS = 37  # not a model dimension, so export does not tie the token count to one


# --------------------------------------------------------------------------- the pure functions


def quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row symmetric int8, the rule of :func:`logichunk.models.int8.quantize_rows`."""
    s = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-12) / 127.0
    return (x / s).round().to(torch.int8), s


def int8_product(xq: torch.Tensor, xs: torch.Tensor, wq: torch.Tensor, ws: torch.Tensor) -> torch.Tensor:
    return torch._int_mm(xq, wq.t()).float() * xs * ws


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


class PreAttention(torch.nn.Module):
    """Input RMSNorm, the int8 q/k/v products with their biases, rotary: ``h (M, hidden)`` →
    ``q (1, heads, M, head_dim)``, ``k``, ``v (1, kv_heads, M, head_dim)``."""

    def __init__(self, eps: float, heads: int, kv_heads: int, head_dim: int) -> None:
        super().__init__()
        self.eps, self.heads, self.kv_heads, self.head_dim = eps, heads, kv_heads, head_dim

    def forward(self, h, norm, qw, qs, qb, kw, ks, kb, vw, vs, vb, cos, sin):  # noqa: ANN001, ANN201
        m = h.shape[0]
        xq, xs = quantize(rms_norm(h, norm, self.eps))
        q = (int8_product(xq, xs, qw, qs) + qb).view(m, self.heads, self.head_dim)
        k = (int8_product(xq, xs, kw, ks) + kb).view(m, self.kv_heads, self.head_dim)
        v = (int8_product(xq, xs, vw, vs) + vb).view(m, self.kv_heads, self.head_dim)
        c, s = cos[:, None, :], sin[:, None, :]
        q, k = rotate(q, c, s), rotate(k, c, s)
        return q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None]


class PostAttention(torch.nn.Module):
    """The int8 o product of the attention output, residual, RMSNorm, int8 gate/up, SiLU × up,
    int8 down, residual: ``(h, attn (M, heads·head_dim))`` → the layer's output ``(M, hidden)``."""

    def __init__(self, eps: float) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, h, attn, ow, os_, norm, gw, gs, uw, us, dw, ds):  # noqa: ANN001, ANN201
        aq, a_s = quantize(attn)
        h = h + int8_product(aq, a_s, ow, os_)
        xq, xs = quantize(rms_norm(h, norm, self.eps))
        g = int8_product(xq, xs, gw, gs)
        u = int8_product(xq, xs, uw, us)
        yq, ys = quantize(torch.nn.functional.silu(g) * u)
        return h + int8_product(yq, ys, dw, ds)


# --------------------------------------------------------------------------- what is fused, and its key


@dataclass(frozen=True)
class Shapes:
    """What the compiled code is specialised to (besides the token count)."""

    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    eps: float


def unsupported(model: Any) -> str | None:
    """Why ``model``'s layers cannot be fused (None when they can)."""
    cfg = getattr(model, "config", None)
    if getattr(cfg, "model_type", None) != "qwen2":
        return f"fused kernels cover the Qwen2 architecture, not {getattr(cfg, 'model_type', None)!r}"
    if getattr(cfg, "hidden_act", None) != "silu":
        return f"activation {cfg.hidden_act!r} is not SiLU"
    if any(t == "sliding_attention" for t in (getattr(cfg, "layer_types", None) or ())):
        return "sliding-window layers"
    for layer in model.model.layers:
        a, mlp = layer.self_attn, layer.mlp
        lins = (a.q_proj, a.k_proj, a.v_proj, a.o_proj, mlp.gate_proj, mlp.up_proj, mlp.down_proj)
        if not all(isinstance(x, Int8Linear) for x in lins):
            return "not every projection is int8"
        if any(x.bias is None for x in lins[:3]) or any(x.bias is not None for x in lins[3:]):
            return "unexpected projection biases"
    return None


def shapes_of(model: Any) -> Shapes:
    cfg = model.config
    heads = int(cfg.num_attention_heads)
    head_dim = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // heads)
    return Shapes(int(cfg.hidden_size), int(cfg.intermediate_size), heads, int(cfg.num_key_value_heads), head_dim,
                  float(cfg.rms_norm_eps))


def _cpu_features() -> str:
    """The vector extensions the generated code may use: an artifact built for another CPU could
    stop the process with an illegal instruction, which no ``except`` catches."""

    wanted = ("avx", "amx", "fma", "f16c", "sse", "bmi")
    return " ".join(sorted(f for f in cpu_flags() if f.startswith(wanted)))


def fusion_key(kind: str, shapes: Shapes) -> str:
    """The cache key of one artifact: everything its machine code depends on."""
    source = "".join(inspect.getsource(f) for f in (quantize, int8_product, rms_norm, rotate, PreAttention,
                                                     PostAttention))
    blob = json.dumps({"kind": kind, "format": FORMAT, "shapes": asdict(shapes), "torch": torch.__version__,
                       "capability": torch.backends.cpu.get_cpu_capability(), "cpu": _cpu_features(),
                       "source": hashlib.sha256(source.encode()).hexdigest()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _examples(kind: str, layer: Any, sh: Shapes) -> tuple[torch.nn.Module, tuple[Any, ...], tuple[Any, ...]]:
    """The module, example inputs and dynamic shapes of one artifact, from a real layer's tensors."""
    m = EXAMPLE_TOKENS
    tokens = torch.export.Dim("tokens", min=MIN_TOKENS, max=MAX_TOKENS)
    g = torch.Generator().manual_seed(0)
    if kind == "pre":
        args = (torch.randn(m, sh.hidden, generator=g), *_pre_weights(layer), torch.randn(m, sh.head_dim, generator=g),
                torch.randn(m, sh.head_dim, generator=g))
        dyn = ({0: tokens},) + (None,) * 10 + ({0: tokens}, {0: tokens})
        return PreAttention(sh.eps, sh.heads, sh.kv_heads, sh.head_dim), args, dyn
    args = (torch.randn(m, sh.hidden, generator=g), torch.randn(m, sh.heads * sh.head_dim, generator=g),
            *_post_weights(layer))
    dyn = ({0: tokens}, {0: tokens}) + (None,) * 9
    return PostAttention(sh.eps), args, dyn


def _pre_weights(layer: Any) -> tuple[torch.Tensor, ...]:
    a = layer.self_attn
    out: list[torch.Tensor] = [layer.input_layernorm.weight]
    for lin in (a.q_proj, a.k_proj, a.v_proj):
        out += [lin.weight_q, lin.weight_scale, lin.bias]
    return tuple(out)


def _post_weights(layer: Any) -> tuple[torch.Tensor, ...]:
    a, mlp = layer.self_attn, layer.mlp
    return (a.o_proj.weight_q, a.o_proj.weight_scale, layer.post_attention_layernorm.weight,
            mlp.gate_proj.weight_q, mlp.gate_proj.weight_scale, mlp.up_proj.weight_q, mlp.up_proj.weight_scale,
            mlp.down_proj.weight_q, mlp.down_proj.weight_scale)


# --------------------------------------------------------------------------- build, load, check


def _build(module: torch.nn.Module, args: tuple[Any, ...], dyn: tuple[Any, ...], path: Path) -> None:
    import torch._inductor  # noqa: F401  (imported only to build: 1 s)

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.pt2")
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the exporter's deprecation notes are not the user's business
            program = torch.export.export(module, args, dynamic_shapes=dyn)
            torch._inductor.aoti_compile_and_package(program, package_path=str(tmp))
        os.replace(tmp, path)  # two processes building at once: each writes its own file, the last wins
    finally:
        tmp.unlink(missing_ok=True)


def _load(path: Path) -> Any:
    """The compiled runner (the raw loader: milliseconds, no import of the compiler stack)."""
    return torch._C._aoti.AOTIModelPackageLoader(str(path), "model", False, 1, -1)


def _agrees(runner: Any, module: torch.nn.Module, args: tuple[Any, ...]) -> bool:
    """Whether the artifact computes what the eager function does, on a 3-token probe."""
    probe = tuple(a[:3] if i in _token_args(module) else a for i, a in enumerate(args))
    with torch.no_grad():
        want = module(*probe)
        got = runner.run(list(probe))
    want = want if isinstance(want, tuple) else (want,)
    if len(got) != len(want):
        return False
    return all(g.shape == w.shape and bool(((g - w).abs().max() <= 1e-4 * (w.abs().max() + 1)).item())
               for g, w in zip(got, want, strict=True))


def _token_args(module: torch.nn.Module) -> frozenset[int]:
    return frozenset({0, 11, 12}) if isinstance(module, PreAttention) else frozenset({0, 1})


@dataclass(frozen=True)
class Fusion:
    """How a model's layers run: ``fused`` or not, and ``note`` saying why (for the CLI's line)."""

    fused: bool
    note: str


def fuse_layers(model: Any, cache_dir: str | os.PathLike[str], *, build: bool = True) -> Fusion:
    """Run ``model``'s decoder layers through the compiled pre- and post-attention functions,
    building and caching them under ``cache_dir/aoti`` when missing (``build=False``: only if
    cached). Never raises for a build or load problem: the layers stay eager and the note says why."""
    if os.environ.get("LOGICHUNK_LM_FUSED", "").strip().lower() in ("0", "false", "no", "off"):
        return Fusion(False, "eager layers (LOGICHUNK_LM_FUSED=0)")
    why = unsupported(model)
    if why:
        return Fusion(False, f"eager layers ({why})")
    sh = shapes_of(model)
    layer = model.model.layers[0]
    runners: dict[str, Any] = {}
    built = 0.0
    for kind in ("pre", "post"):
        path = Path(cache_dir) / "aoti" / f"{kind}-{fusion_key(kind, sh)}.pt2"
        failed = path.with_suffix(".failed")
        if failed.exists():
            reason = failed.read_text(encoding="utf-8", errors="replace").strip().splitlines()[:1] or ["?"]
            return Fusion(False, f"eager layers (building fused kernels failed before: {reason[0][:200]}; "
                                 f"delete {failed} to try again)")
        module, args, dyn = _examples(kind, layer, sh)
        if not path.exists():
            if not build:
                return Fusion(False, "eager layers (fused kernels not built yet)")
            if not built:  # once per machine: say why this run pauses (a warning, so it shows unconfigured)
                log.warning("logichunk: compiling fused int8 kernels for this CPU, once (~20-40 s; "
                            "LOGICHUNK_LM_FUSED=0 skips it)")
            t0 = time.perf_counter()
            try:
                _build(module, args, dyn, path)
            except Exception as e:  # noqa: BLE001 - any failure to build means: stay eager, say why
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                failed.parent.mkdir(parents=True, exist_ok=True)
                failed.write_text(f"{type(e).__name__}: {first}\n", encoding="utf-8")
                return Fusion(False, f"eager layers (cannot build fused kernels: {type(e).__name__}: {first[:200]})")
            built += time.perf_counter() - t0
        try:
            runner = _load(path)
        except RuntimeError as e:
            path.unlink(missing_ok=True)  # unreadable: rebuilt next time
            return Fusion(False, f"eager layers (cached fused kernel unreadable: {str(e)[:120]})")
        if not _agrees(runner, module, args):
            path.unlink(missing_ok=True)
            return Fusion(False, "eager layers (a cached fused kernel disagreed with the eager functions)")
        runners[kind] = runner
    for lay in model.model.layers:
        lay._fused = runners
        lay._eager_forward = lay.forward
        lay.forward = types.MethodType(_fused_forward, lay)
    how = f"compiled once in {built:.0f} s" if built else "cached"
    return Fusion(True, f"fused int8 layers ({how})")


def _fused_forward(self: Any, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None,
                   position_ids: torch.Tensor | None = None, past_key_values: Any = None, use_cache: bool | None = False,
                   position_embeddings: tuple[torch.Tensor, torch.Tensor] | None = None, **kwargs: Any) -> torch.Tensor:
    """A Qwen2 decoder layer (transformers' ``Qwen2DecoderLayer.forward``, the same steps) with its
    work before and after attention in the compiled functions; one sequence of ≥ 2 tokens only —
    anything else (a batch, one generated token) takes the eager layer."""
    b, m, _ = hidden_states.shape
    if b != 1 or m < MIN_TOKENS or m > MAX_TOKENS or position_embeddings is None:
        return self._eager_forward(hidden_states, attention_mask=attention_mask, position_ids=position_ids,
                                   past_key_values=past_key_values, use_cache=use_cache,
                                   position_embeddings=position_embeddings, **kwargs)
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    from transformers.models.qwen2 import modeling_qwen2

    attn = self.self_attn
    h = hidden_states[0].contiguous()
    cos, sin = position_embeddings
    q, k, v = self._fused["pre"].run([h, *_pre_weights(self), cos[0].contiguous(), sin[0].contiguous()])
    if past_key_values is not None:
        k, v = past_key_values.update(k, v, attn.layer_idx)
    if attn.config._attn_implementation == "sdpa" and _FLASH is not None:
        out = attend(q, k, v, attn.scaling).transpose(1, 2)
    else:
        interface = ALL_ATTENTION_FUNCTIONS.get_interface(attn.config._attn_implementation,
                                                          modeling_qwen2.eager_attention_forward)
        out, _ = interface(attn, q, k, v, attention_mask, dropout=0.0, scaling=attn.scaling,
                           sliding_window=attn.sliding_window, **kwargs)
    out = self._fused["post"].run([h, out.reshape(m, -1).contiguous(), *_post_weights(self)])[0]
    return out[None]


_FLASH = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """Causal attention of a window's ``m`` queries ``(1, heads, m, d)`` over ``k``/``v``
    ``(1, kv_heads, cached + m, d)``, where every cached token precedes the window (the LM pass's
    rolling cache: no padding, nothing masked but the future).

    Why not SDPA with transformers' mask: with a mask the CPU kernel computes the masked half of
    the window's block too, and grouped-query K/V are first copied once per query head (7× for the
    packaged LM). Here the cached part needs no mask — the query heads that share a K/V head are
    stacked along the sequence, so nothing is copied — and the window's own part is plain causal;
    the two softmaxes are merged through their log-sum-exps (exact up to float rounding)."""
    b, heads, m, d = q.shape
    kv_heads = k.shape[1]
    group = heads // kv_heads
    cached = k.shape[2] - m
    kw, vw = k[:, :, cached:], v[:, :, cached:]
    if group > 1:
        kw, vw = kw.repeat_interleave(group, 1), vw.repeat_interleave(group, 1)
    ow, lw = _FLASH(q, kw, vw, 0.0, True, scale=scale)[:2]
    if cached == 0:
        return ow
    stacked = q.reshape(b, kv_heads, group * m, d)
    oc, lc = _FLASH(stacked, k[:, :, :cached], v[:, :, :cached], 0.0, False, scale=scale)[:2]
    oc, lc = oc.reshape(b, heads, m, d), lc.reshape(b, heads, m)
    top = torch.maximum(lc, lw)
    wc, ww = (lc - top).exp_(), (lw - top).exp_()
    total = wc + ww
    return oc * (wc / total)[..., None] + ow * (ww / total)[..., None]

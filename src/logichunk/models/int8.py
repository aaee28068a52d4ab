"""Int8 matrix products for the causal LM on the CPU: 8-bit weights × 8-bit activations (W8A8).

Why: the LM pass is compute-bound (every token needs the full vocabulary for its log-softmax
normaliser), and on CPUs with VNNI but without AMX tiles an int8 product runs ~4× float32 while
bf16 runs *slower* than float32 (2 cores, 256 × 896 × 4864: float32 221 GFLOP/s, bf16 153, int8
815 GOP/s — ``torch._int_mm``, exact int32 accumulation).

How, and why this way: weights are quantised once per output channel; activations per token (per
row), when they are used. torch's own ``quantize_dynamic`` uses one scale for the whole activation
tensor, so one token with a massive activation (LMs have a few, e.g. on the first token) flattens
every other token in the window: mean NLL 4.30 → 4.49 nats on Chinese text with Qwen2.5-0.5B (a
probe), vs 4.30 → 4.32 with per-token scales (``bench/QUALITY.md``, ``bench/bench_lm_int8.py``).

Only :class:`logichunk.models.lm.TransformersLM` uses this module (``dtype="int8"``); it needs torch.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import torch

__all__ = ["Int8Embedding", "Int8Linear", "int8_supported", "quantize_modules", "quantize_rows", "quantize_tokens"]


def quantize_rows(x: torch.Tensor, *, rows: int = 2048) -> tuple[torch.Tensor, torch.Tensor]:
    """``(q, scale)`` with ``x ≈ q * scale[:, None]``: symmetric int8, one scale per row (the
    row's largest magnitude maps to 127; an all-zero row gets a tiny scale and stays zero).
    ``rows`` at a time, so the float temporaries stay in cache: 6× faster on a 151,936-row head
    than whole-matrix passes (0.19 vs 1.2 s), the same result."""
    x = x.float()
    q = torch.empty(x.shape, dtype=torch.int8)
    scale = torch.empty(x.shape[0], dtype=torch.float32)
    for r0 in range(0, x.shape[0], rows):
        part = x[r0:r0 + rows]
        s = part.abs().amax(dim=1, keepdim=True).clamp_min_(1e-12).div_(127.0)
        q[r0:r0 + rows] = (part / s).round_()
        scale[r0:r0 + rows] = s[:, 0]
    return q, scale


def quantize_tokens(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Activations ``(..., K)`` as int8 rows ``(M, K)`` and their ``(M, 1)`` scales (one per token)."""
    q, scale = quantize_rows(x.reshape(-1, x.shape[-1]))
    return q, scale[:, None]


class Int8Linear(torch.nn.Module):
    """A ``Linear`` layer replaced by its int8 weights (per output channel) and an int8 product with
    the per-token quantised input; output float32. Holds no float weight (a quarter of the memory)."""

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        q, scale = quantize_rows(linear.weight.detach())
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.register_buffer("weight_q", q)  # (N, K) like the float weight; _int_mm reads its transpose view
        self.register_buffer("weight_scale", scale)
        bias = linear.bias
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xq, xs = quantize_tokens(x)
        return self._product(xq, xs, 0, self.out_features).reshape(*x.shape[:-1], self.out_features)

    def blocks(self, x: torch.Tensor, block: int) -> Iterator[tuple[int, torch.Tensor]]:
        """``(n0, y[:, n0:n0 + block])`` for each slice of ``block`` outputs (float32), the input
        rows ``(M, K)`` quantised once: an output head's logits one vocabulary slice at a time, so a
        log-softmax normaliser is accumulated without a ``rows × vocabulary`` tensor."""
        xq, xs = quantize_tokens(x)
        for n0 in range(0, self.out_features, block):
            yield n0, self._product(xq, xs, n0, min(n0 + block, self.out_features))

    def _product(self, xq: torch.Tensor, xs: torch.Tensor, n0: int, n1: int) -> torch.Tensor:
        """Outputs ``n0:n1`` of the quantised rows: the exact int32 product, rescaled by the token
        and channel scales (and the bias added)."""
        y = torch._int_mm(xq, self.weight_q[n0:n1].t()).float().mul_(xs).mul_(self.weight_scale[n0:n1])
        if self.bias is not None:
            y.add_(self.bias[n0:n1])
        return y

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 weights × int8 tokens"


class Int8Embedding(torch.nn.Module):
    """An input embedding table as int8 rows with one scale each (a quarter of the memory); the rows a
    batch looks up are dequantised to float32."""

    def __init__(self, embedding: torch.nn.Embedding) -> None:
        super().__init__()
        q, scale = quantize_rows(embedding.weight.detach())
        self.num_embeddings, self.embedding_dim = embedding.num_embeddings, embedding.embedding_dim
        self.padding_idx = embedding.padding_idx
        self.register_buffer("weight_q", q)
        self.register_buffer("weight_scale", scale)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.weight_q[ids].float().mul_(self.weight_scale[ids].unsqueeze(-1))

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, int8 rows"


def quantize_modules(module: torch.nn.Module) -> int:
    """Replace every ``torch.nn.Linear`` inside ``module`` (in place) by an :class:`Int8Linear` and
    every ``torch.nn.Embedding`` by an :class:`Int8Embedding`; returns how many were replaced."""
    n = 0
    for name, child in list(module.named_children()):
        if isinstance(child, torch.nn.Linear):
            setattr(module, name, Int8Linear(child))
            n += 1
        elif isinstance(child, torch.nn.Embedding):
            setattr(module, name, Int8Embedding(child))
            n += 1
        else:
            n += quantize_modules(child)
    return n


@lru_cache(maxsize=1)
def int8_supported() -> bool:
    """Whether this torch build multiplies int8 matrices on the CPU exactly (probed once)."""
    try:
        a = torch.tensor([[1, -2, 3], [4, 5, -6]], dtype=torch.int8)
        b = torch.tensor([[7, 1], [-8, 2], [9, -3]], dtype=torch.int8)
        return bool(torch.equal(torch._int_mm(a, b), a.int() @ b.int()))
    except (AttributeError, RuntimeError, NotImplementedError):
        return False

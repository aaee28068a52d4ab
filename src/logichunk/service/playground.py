"""Chunk a pasted text with a chosen method and sizes, nothing stored: what the web page's
"Chunk" button calls (``POST /api/chunk``), and a quick way to compare methods from a script.

Methods are those of :func:`logichunk.chunkers.dispatch.chunk_by` that need no causal LM (every one
returns a :class:`~logichunk.tree.ChunkTree` over the exact text): ``logic-chain``, ``cliff`` and
``fused`` (``sizes`` per level), ``parent-child`` (``sizes`` = parent, child limits; the rest from the
settings), ``fixed`` and ``recursive`` (at ``sizes[0]``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..chunkers.dispatch import METHODS as DISPATCH_METHODS
from ..chunkers.dispatch import chunk_by
from ..chunkers.logic_chain import level_sizes
from ..config import Settings
from ..errors import check_choice
from ..tree import ChunkTree
from .curves import text_curves
from .views import cut_points, jsonable


@dataclass(frozen=True)
class Method:
    name: str
    about: str
    embeds: bool  # uses the embedder (slower with a real model)
    default_sizes: tuple[int, ...]


_CASCADE = level_sizes()  # the cascade's own defaults, 1000 / 500 / 200
_DEFAULT_SIZES = {"logic-chain": _CASCADE, "cliff": _CASCADE, "fused": _CASCADE, "parent-child": (1500, 400),
                  "fixed": (500,), "recursive": (500,)}
#: the methods of :mod:`logichunk.chunkers.dispatch` that need no causal LM (the service loads none)
METHODS: dict[str, Method] = {
    name: Method(name, about, "embedder" in need, _DEFAULT_SIZES.get(name, (1000,)))
    for name, (about, need) in DISPATCH_METHODS.items() if "lm" not in need
}


SERVED_TOKENIZERS = ("cl100k_base", "o200k_base", "embedder")


def run(method: str, text: str, sizes: tuple[int, ...], unit: str, embedder: Any, settings: Settings,
        tokenizer: str | None = None) -> ChunkTree:
    check_choice(method, tuple(METHODS), "method")
    if tokenizer is not None:  # a client names no file or hub id of the server's: the bundled and configured ones
        check_choice(tokenizer, (*SERVED_TOKENIZERS, *([settings.tokenizer] if settings.tokenizer else [])),
                     "tokenizer")
    if tokenizer and unit == "chars":
        unit = "tokens"
    if tokenizer == "embedder":  # the service's own embedder sizes the chunks
        return chunk_by(method, text, max_size=sizes[0], sizes=sizes, unit=unit, embedder=embedder,
                        settings=settings, source="<request>", tokenizer=tokenizer)
    return chunk_by(method, text, max_size=sizes[0], sizes=sizes, unit=unit,
                    embedder=embedder if METHODS[method].embeds else None, settings=settings, source="<request>",
                    tokenizer=tokenizer or None)


def analyse(method: str, text: str, sizes: tuple[int, ...] | None, unit: str, embedder: Any, settings: Settings,
            *, similarity: bool | None = None, max_points: int = 4000, tokenizer: str | None = None) -> dict[str, Any]:
    """The tree, its cut points, bubbles, stats and the gap curves of one text, as JSON values."""
    m = METHODS[check_choice(method, tuple(METHODS), "method")]
    sizes = tuple(sizes) if sizes else m.default_sizes
    t0 = time.perf_counter()
    tree = run(method, text, sizes, unit, embedder, settings, tokenizer)
    seconds = time.perf_counter() - t0
    nodes = [{"id": c.id, "level": c.level, "parent": c.parent, "start": c.span.start, "end": c.span.end,
              "size": c.meta.get("size", c.span.end - c.span.start), "method": c.method} for c in tree]
    cuts = cut_points(nodes)
    level1 = [c["offset"] for c in cuts if c["level"] == 1]
    want_sim = m.embeds if similarity is None else similarity
    embed: Callable[[list[str]], np.ndarray] | None = None
    if want_sim:
        def embed(texts: list[str]) -> np.ndarray:
            return np.asarray(embedder.embed(texts, kind="passage"), np.float32)
    t1 = time.perf_counter()
    curves = text_curves(text, cuts=level1, embed=embed,
                         similarity_threshold=settings.similarity_threshold if method == "parent-child" else None,
                         max_points=max_points)
    return {"method": method, "sizes": list(sizes), "unit": tree.unit, "length": len(text), "chunks": nodes,
            "cuts": cuts, "depth": tree.depth(), "stats": jsonable(dict(tree.stats)),
            "bubbles": [jsonable(b.to_dict()) for b in tree.bubbles], "curves": curves,
            "timing": {"chunk_ms": round(seconds * 1000, 2), "curves_ms": round((time.perf_counter() - t1) * 1000, 2)}}

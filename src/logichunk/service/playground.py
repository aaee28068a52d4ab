"""Chunk a pasted text with a chosen method and sizes, nothing stored: what the web page's
"Chunk" button calls (``POST /api/chunk``), and a quick way to compare methods from a script.

Methods (every one returns a :class:`~logichunk.tree.ChunkTree` over the exact text):

* ``logic-chain`` — the four-tier cascade on the model-free entropy signal (``sizes`` per level);
* ``logic-chain-semantic`` — the same cascade on semantic cliffs (the service's embedder);
* ``parent-child`` — blank-line blocks as parents up to ``sizes[0]``, semantic-cliff children up to
  ``sizes[1]`` (the other child sizes come from the settings, capped to fit);
* ``fixed`` and ``recursive`` — the baselines, at ``sizes[0]``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..chunkers.baselines import fixed, recursive
from ..chunkers.logic_chain import chunk
from ..chunkers.parent_child import PCParams, chunk_parent_child
from ..config import Settings
from ..errors import InputError
from ..signals.semantic import SemanticSignal
from ..tree import ChunkTree
from .curves import text_curves
from .views import cut_points, jsonable


@dataclass(frozen=True)
class Method:
    name: str
    about: str
    embeds: bool  # uses the embedder (slower with a real model)
    default_sizes: tuple[int, ...]


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("logic-chain", "four-tier cascade on the entropy signal (no model)", False, (1000, 500, 200)),
    Method("logic-chain-semantic", "the cascade on semantic cliffs (embedder)", True, (1000, 500, 200)),
    Method("parent-child", "blocks as parents, semantic-cliff children (embedder)", True, (1500, 400)),
    Method("fixed", "baseline: fixed size", False, (500,)),
    Method("recursive", "baseline: recursive separators", False, (500,)),
)}


def _pc_params(sizes: tuple[int, ...], unit: str, s: Settings) -> PCParams:
    pmax = sizes[0]
    cmax = sizes[1] if len(sizes) > 1 else min(s.child_max_size, pmax)
    if cmax > pmax:
        raise InputError(f"parent-child sizes must not grow: child limit {cmax} is over the parent limit {pmax}")
    target = min(s.child_target_size, cmax)
    return PCParams(pmax, min(s.min_parent_size, pmax), min(s.child_min_size, target), cmax, target,
                    s.similarity_threshold, s.cliff_drop, unit)


def run(method: str, text: str, sizes: tuple[int, ...], unit: str, embedder: Any, settings: Settings) -> ChunkTree:
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}: use {', '.join(METHODS)}")
    if method == "logic-chain":
        return chunk(text, sizes=sizes, unit=unit, source="<request>")
    if method == "logic-chain-semantic":
        return chunk(text, sizes=sizes, unit=unit, signal=SemanticSignal(embedder), source="<request>")
    if method == "parent-child":
        return chunk_parent_child(text, embedder, _pc_params(sizes, unit, settings))
    if method == "fixed":
        return fixed(text, sizes[0], unit=unit)
    return recursive(text, sizes[0], unit=unit)


def analyse(method: str, text: str, sizes: tuple[int, ...] | None, unit: str, embedder: Any, settings: Settings,
            *, similarity: bool | None = None, max_points: int = 4000) -> dict[str, Any]:
    """The tree, its cut points, bubbles, stats and the gap curves of one text, as JSON values."""
    m = METHODS.get(method)
    if m is None:
        raise InputError(f"unknown method {method!r}: use {', '.join(METHODS)}")
    sizes = tuple(sizes) if sizes else m.default_sizes
    t0 = time.perf_counter()
    tree = run(method, text, sizes, unit, embedder, settings)
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

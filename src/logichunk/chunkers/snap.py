"""Whole tokens only: a chunk tree's cuts moved off the inside of tokens.

Why here, after chunking: with a real tokenizer a sentence seam often falls inside a token (BPE
glues the space after a full stop to the next word: ``" Next"``). A token counts where it ends
(:mod:`logichunk.text.tokens`), so moving a cut back to the start of its token changes no measured
size: the chunkers choose cuts as they always do, and this pass makes every chunk hold whole tokens,
exactly as many as it was measured to hold. A chunk left empty (it lay inside one token) is dropped,
and a parent left with one child keeps its span as a leaf.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ids import make_id
from ..text.measure import Measure
from ..tree import ChunkTree, build_tree
from ..types import Chunk


def snap_tree(tree: ChunkTree, measure: Measure | str) -> ChunkTree:
    """``tree`` with every chunk edge snapped to a token edge of ``measure`` (a no-op for units
    without tokens, and when no edge falls inside a token)."""
    snap = getattr(measure, "snap", None)
    if snap is None or not tree.text or not len(tree):
        return tree
    chunks = list(tree)
    edges = np.fromiter((c.span.end for c in chunks), np.int64, len(chunks))
    starts = np.fromiter((c.span.start for c in chunks), np.int64, len(chunks))
    new_s, new_e = snap(tree.text, starts), snap(tree.text, edges)
    if np.array_equal(new_s, starts) and np.array_equal(new_e, edges):
        return tree
    where = {c.id: k for k, c in enumerate(chunks)}
    rows: list[tuple[str, int, int, str, Any]] = []

    def walk(siblings: list[Chunk], parent: str | None) -> None:
        kept = [c for c in siblings if new_e[where[c.id]] > new_s[where[c.id]]]
        if parent is not None and len(kept) < 2:
            return  # the parent is a leaf now
        for i, c in enumerate(kept, 1):
            cid = make_id(parent, i) if parent is not None else str(i)
            k = where[c.id]
            rows.append((cid, int(new_s[k]), int(new_e[k]), c.method, dict(c.meta)))
            if c.children:
                walk([tree.chunks[x] for x in c.children], cid)

    walk(tree.roots(), None)
    moved = int(np.count_nonzero(new_e != edges))
    stats = {**tree.stats, "snapped_to_tokens": moved}
    return build_tree(tree.text, rows, bubbles=tree.bubbles, stats=stats, unit=tree.unit)

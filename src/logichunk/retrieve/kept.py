"""Retrieval that keeps the hits of one origin: documents, or the conversation topics the memory archived
(:mod:`logichunk.store.origins`). One implementation for the CLI, the HTTP service and the MCP tools."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

from ..store import origins
from . import retrieve

__all__ = ["WIDENINGS", "retrieve_kept"]

WIDENINGS = 4  # how many times a search keeping one origin reads 4x more hits to find top_k of it


def retrieve_kept(store: Any, query: str, mode: str | None, top_k: int, include: str, lock: Any = None,
                  **opts: Any) -> Any:
    """``retrieve``'s results with only the hits in the documents ``include`` keeps, best first, at most
    ``top_k`` (a graph mode's sentences alike). Retrieval ranks the whole store, so when hits of the other origin fill the window it is
    widened (x4, :data:`WIDENINGS` times at most; a note says when that still found fewer). ``lock``: held
    around each retrieval (the service's in-memory indexes are one writer at a time)."""
    include = origins.check_include(include)
    guard = lock if lock is not None else contextlib.nullcontext()
    want = top_k
    for round_ in range(WIDENINGS + 1):
        with guard:
            res = retrieve(store, query, mode=mode, top_k=want, **opts)
        if include == "all":
            return res
        sources = {d: s for d, _t, s in store.documents()}
        hits = tuple(h for h in res if origins.kept(sources.get(h.doc_id), include))
        if len(hits) >= top_k or len(res) < want:
            return replace(res, hits=hits[:top_k])
        if round_ == WIDENINGS:
            return replace(res, hits=hits, notes=(*res.notes, f"only {len(hits)} of the first {want} hits are in "
                                                  f"{include} (include 'all' searches everything)"))
        want *= 4
    raise AssertionError("unreachable")

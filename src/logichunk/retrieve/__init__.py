"""One retrieval entry point, several strategies::

    from logichunk.retrieve import retrieve
    res = retrieve(store, "主角第一次见到师父是在哪里", mode="parent", top_k=5)
    for hit in res:
        print(hit.score, hit.chunk.id, hit.chunk.meta["text"][:80])
    res.fallback   # None, or "document" when the child index was empty or failed

Modes:

* ``basic`` — top-k child chunks by cosine similarity.
* ``parent`` — search children, map each to its parent, keep a parent once (with its best child),
  rank by ``raw`` or, with ``size_normalization`` on (off by default: it hurt recall on most public
  sets, see ``config.py``), by ``raw * sqrt(avg_parent_size / parent_size)`` (
  ``size_normalization_power`` replaces the square root's 0.5, and ``size_normalization_max_boost``
  caps how far a small parent is lifted, so a heading-sized parent cannot win on size alone),
  and for a parent larger than ``context_window_size`` return a window of whole sentences around the
  matched child (``Hit.context``, ``meta["context_text"]``). If the child index is empty or fails,
  it falls back to document-level search (parent vectors, else BM25 over blocks) and says so.
* ``hierarchical`` — basic hits expanded along dotted ids: each hit, then its parent, then its
  siblings (and descendants of a parent hit), deduplicated, in that order; the expansions carry the
  hit's score, and hits tied on score come in document position (document, then dotted id).
* ``hybrid`` — BM25 (Chinese-aware) and vector ranks fused by reciprocal rank fusion.
* ``graph-basic``, ``graph-ssg``, ``graph-tri``, ``graph-hybrid`` — sentences gathered along the
  semantic similarity graph, with the path (``retrieve/graph.py``); ``top_k`` caps the sentences
  (default ``graph_max_results``).

Any mode accepts a ``reranker`` (``score(query, texts) -> array``), applied to the top
``rerank_candidates`` before the cut to ``top_k``; ``raw_score`` keeps the first-stage score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..config import RETRIEVE_MODES
from ..errors import InputError, LogichunkError, check_choice
from ..models.rerank import Reranker
from ..text.decode import check_not_blank
from .basic import basic_hits
from .context import context_window
from .hierarchical import hierarchical_hits
from .hybrid import hybrid_hits
from .parent import document_fallback, parent_hits
from .rerank import rerank_hits
from .results import Results

__all__ = ["Reranker", "Results", "context_window", "retrieve"]


def retrieve(store: Any, query: str, mode: str | None = None, top_k: int | None = None, *,
             size_normalization: bool | None = None, context_window_size: int | None = None,
             reranker: Reranker | None = None, expand: Sequence[str] = ("parent", "siblings", "descendants"),
             candidates: int | None = None, size_normalization_power: float | None = None) -> Results:
    s = store.settings
    mode = mode or s.retrieve_mode
    check_choice(mode, RETRIEVE_MODES, "mode")  # (the words of the service and the MCP tools, as the query's)
    if not isinstance(query, str):
        raise InputError(f"query must be a string, got {type(query).__name__}")
    check_not_blank(query, "query")
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):  # the setting is checked by Settings
        raise InputError(f"top_k must be a positive integer, got {top_k!r}")
    if mode.startswith("graph-"):  # sentences and a path over the similarity graph (retrieve/graph.py)
        from .graph import retrieve_graph

        return retrieve_graph(store, query, mode, top_k, reranker=reranker)
    top_k = s.top_k if top_k is None else top_k
    bad = set(expand) - {"parent", "siblings", "descendants"}
    if bad:
        raise InputError(f"unknown expansion {sorted(bad)}: use parent, siblings, descendants")
    want = max(top_k, s.rerank_candidates) if reranker else top_k
    norm = s.size_normalization if size_normalization is None else size_normalization
    power = s.size_normalization_power if size_normalization_power is None else size_normalization_power
    window = s.context_window_size if context_window_size is None else context_window_size
    notes: list[str] = []
    fallback = None
    if mode == "basic":
        hits = basic_hits(store, query, want)
    elif mode == "hierarchical":
        hits = hierarchical_hits(store, query, want, tuple(expand))
    elif mode == "hybrid":
        hits = hybrid_hits(store, query, want, candidates or max(4 * want, 40), notes)
    else:
        hits = None
        try:
            hits = parent_hits(store, query, want, norm, power, window, candidates or max(10 * want, 50),
                            s.size_normalization_max_boost)
            if not hits:
                notes.append(store.embedder_mismatch() or "child index is empty")
        except LogichunkError as e:
            notes.append(f"child search failed: {e}")
        if not hits:
            fallback = "document"
            hits = document_fallback(store, query, want, window, notes)
    if not hits and fallback is None and not notes and (why := store.embedder_mismatch()):
        notes.append(why)
    if reranker is not None and hits:
        hits = rerank_hits(reranker, query, hits)
    return Results(tuple(hits[:top_k]), mode, query, fallback, tuple(notes))

"""A second-stage reranker over any mode's candidates; ``raw_score`` keeps the first-stage score."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..models.rerank import Reranker
from ..types import Hit


def rerank_hits(reranker: Reranker, query: str, hits: list[Hit]) -> list[Hit]:
    texts = [h.chunk.meta.get("context_text") or h.chunk.meta.get("text", "") for h in hits]
    scores = np.asarray(reranker.score(query, texts), dtype=np.float64).reshape(-1)
    if scores.size != len(hits):
        raise InputError(f"reranker returned {scores.size} scores for {len(hits)} texts")
    order = np.argsort(-scores, kind="stable")
    return [replace(hits[i], score=float(scores[i])) for i in order.tolist()]

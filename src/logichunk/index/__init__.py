"""Vector and lexical indexes: exact numpy cosine search, HNSW (hnswlib) for large collections,
BM25 with Chinese-aware tokenisation. pgvector's HNSW lives in the PostgreSQL store."""

from .bm25 import BM25Index, tokenize
from .vectors import ExactIndex, HnswIndex, VectorIndex, hnsw_available, make_index

__all__ = ["BM25Index", "ExactIndex", "HnswIndex", "VectorIndex", "hnsw_available", "make_index", "tokenize"]

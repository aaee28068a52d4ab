"""Persistence: projects, documents, chapters, user-editable blocks, parent/child chunks,
embeddings (cached by model + content hash) and bubbles, on SQLite or PostgreSQL + pgvector.

    from logichunk.store import Store
    store = Store.open("project.db")                 # or "postgresql://..."
    doc = store.add_document("novel", [("Chapter 1", ["block one...", "block two..."])])
    store.rechunk_dirty()
"""

from .base import (
    BlockRow,
    ChunkRow,
    CutSettingsError,
    EmbedderMismatchError,
    RechunkError,
    RechunkResult,
    StaleRevisionError,
    StaleTextError,
    Store,
    StoreError,
    StoreUnavailable,
    UnknownIdError,
    block_emptied,
    sha256,
)
from .debounce import Debouncer
from .postgres import PostgresStore  # the backends register themselves with Store.open
from .sqlite import SQLiteStore

__all__ = ["BlockRow", "ChunkRow", "CutSettingsError", "Debouncer", "EmbedderMismatchError", "PostgresStore",
           "RechunkError", "RechunkResult", "SQLiteStore", "StaleRevisionError", "StaleTextError", "Store", "StoreError",
           "StoreUnavailable", "UnknownIdError", "block_emptied", "sha256"]

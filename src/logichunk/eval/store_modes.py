"""Store-backed retrieval modes for the harness: the corpus goes through the same path a user's
documents do — :func:`logichunk.store.ingest.ingest_text` into a temporary SQLite store (chapters,
blocks, parent-child chunks, embeddings) — and every query through :func:`logichunk.retrieve.retrieve`.

Every retrieval mode of :data:`logichunk.config.RETRIEVE_MODES` is registered as ``store:MODE``
(``store:basic`` is the store's own child top-k, to tell apart from the harness's no-store
``basic``), and ``parent``, ``hierarchical``, ``hybrid`` and any later store mode under their own
names. A hit is scored by the text the user would get: the context window when the mode returned
one (large parents), else the chunk. Hits are mapped back from block-relative spans to document
coordinates through the blocks' positions, which tile each document exactly.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..config import RETRIEVE_MODES
from ..config import Settings as StoreSettings
from .chunking import register_mode
from .methods import Settings
from .readers import Corpus


class StoreSearcher:
    """One temporary store per (corpus, mode); ``uses_method`` is False: the store chunks with its
    own parent-child chunker, so the harness runs a store mode once, not once per method."""

    uses_method = False

    def __init__(self, mode: str, corpus: Corpus, settings: Settings, runner: Any = None,
                 overrides: dict[str, Any] | None = None) -> None:
        from ..store.base import Store
        from ..store.ingest import ingest_text

        self.mode = mode.removeprefix("store:")
        self.notes: list[str] = []
        self._tmp = tempfile.mkdtemp(prefix="logichunk-eval-")
        url = str(Path(self._tmp) / "eval.db")
        self.settings = StoreSettings(db=url, **(overrides or {}))
        self.store = Store.open(url, settings=self.settings, embedder=settings.embedder)
        doc_index: dict[str, int] = {}
        for i, d in enumerate(corpus.docs):
            doc_index[ingest_text(self.store, d.doc_id, d.text)] = i
        self.store.rechunk_dirty()
        # block id -> (corpus document index, offset of the block in the document)
        self.block_at: dict[str, tuple[int, int]] = {}
        for did, i in doc_index.items():
            pos = 0
            for cid, _, _ in self.store.chapters(did):
                for b in self.store.blocks(cid):
                    self.block_at[b.id] = (i, pos)
                    pos += len(b.content)
            if pos != len(corpus.docs[i].text):
                raise AssertionError(f"blocks of {corpus.docs[i].doc_id} do not tile it ({pos} != "
                                     f"{len(corpus.docs[i].text)})")

    def search(self, queries: Sequence[str], k: int) -> list[np.ndarray]:
        from ..retrieve import retrieve

        out = []
        fallbacks = 0
        for q in queries:
            rows = []
            if q.strip():
                res = retrieve(self.store, q, mode=self.mode, top_k=k)
                fallbacks += res.fallback is not None
                for h in res:
                    m = h.chunk.meta
                    at = self.block_at.get(m.get("block_id"))
                    if at is None:
                        continue
                    span = h.context if h.context is not None else h.chunk.span
                    rows.append((at[0], at[1] + span.start, at[1] + span.end))
            out.append(np.asarray(rows, dtype=np.int64).reshape(-1, 3))
        if fallbacks:
            self.notes.append(f"{self.mode}: {fallbacks} of {len(queries)} queries fell back to document search")
        return out

    def close(self) -> None:
        self.store.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __del__(self) -> None:  # the harness drops searchers without closing them
        try:
            self.close()
        except Exception:  # noqa: BLE001 - best effort at interpreter exit
            pass


def _factory(mode: str):
    def make(corpus: Corpus, settings: Settings, runner: Any) -> StoreSearcher:
        return StoreSearcher(mode, corpus, settings, runner)

    make.uses_method = False  # type: ignore[attr-defined]
    return make


def register_store_modes() -> None:
    for mode in RETRIEVE_MODES:
        register_mode(f"store:{mode}", _factory(mode))
        if mode != "basic":
            register_mode(mode, _factory(mode))


register_store_modes()

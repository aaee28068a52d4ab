"""Ingestion for corpora larger than one machine, on Ray Data (extra ``[ray]``).

    from logichunk.scale import ingest_corpus
    from logichunk.store import Store

    with Store.open("corpus.db") as store:
        report = ingest_corpus(store, ["docs/"], workers=2)          # a local Ray, 2 workers
        report = ingest_corpus(store, ["docs/"], address="auto")     # a running cluster

The stored result is the serial :func:`logichunk.store.ingest.ingest`'s; see
:mod:`logichunk.scale.ingest` for how the work is split. Importing this package does not import Ray.
"""

from __future__ import annotations

from .ingest import DEFAULT_BATCH_SIZE, ingest_corpus
from .session import RayUnavailable

__all__ = ["DEFAULT_BATCH_SIZE", "RayUnavailable", "ingest_corpus"]

"""Ingestion for corpora larger than one machine, on Ray (extra ``[ray]``).

    from logichunk.scale import ingest_corpus
    from logichunk.store import Store

    with Store.open("corpus.db") as store:
        report = ingest_corpus(store, ["docs/"], workers=2)          # a local Ray, 2 workers
        report = ingest_corpus(store, ["docs/"], address="auto")     # a running cluster

The stored result is the serial :func:`logichunk.store.ingest.ingest`'s; see
:mod:`logichunk.scale.ingest` for how the work is split. Importing this package imports neither
Ray nor the ingest machinery; the names below load on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_BATCH_SIZE", "RayUnavailable", "ingest_corpus"]


def __getattr__(name: str) -> Any:
    """The names above, imported on first use (the ``ingest`` verb's parser imports
    :mod:`logichunk.scale.cli` for its flags, and needs nothing else from here)."""
    if name in ("ingest_corpus", "DEFAULT_BATCH_SIZE"):
        from . import ingest

        return getattr(ingest, name)
    if name == "RayUnavailable":
        from .session import RayUnavailable

        return RayUnavailable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

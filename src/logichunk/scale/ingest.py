"""The serial ingest's result, with the heavy work on Ray workers and the writing in the driver.

Two Ray Data passes over the list of files, each streamed back in file order:

1. *read and check* (Ray tasks): every file is decoded as the serial ingest decodes it, and only its
   text's hash comes back. The driver then decides, file by file and before anything is written,
   what the serial ingest decides: refuse a binary or undecodable file, skip a file stored before
   with the same text, refuse or (``replace``) replace one stored with other text.
2. *plan* (a pool of Ray actors, each holding one embedder): every file to store is read again,
   split into chapters and blocks, chunked and embedded with the store's own planner; the driver
   writes each batch of finished documents in one transaction (SQLite has one writer), with the
   chapters' plans and their vectors for the embedding cache.

Why two passes: the serial ingest writes nothing unless every file can be stored, and holding a
corpus in the driver until it knows is what this module exists to avoid; the first pass costs a
second read of each file. The driver never holds more than one batch of plans, and Ray Data's
backpressure bounds what the workers run ahead.

If a worker fails (its embedder raises, its process dies), the driver stops at that file: the files
before it are stored completely (each batch is one transaction) and it and the files after it are
not, so running the same ingest again skips what is stored and finishes the rest. Workers are not
restarted: a file that kills every worker it meets would otherwise loop for ever.
"""

from __future__ import annotations

import logging
import pickle
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import InputError, LogichunkError
from ..store.base import Store
from ..store.ingest import IngestReport, Tally, _Plan, list_files, store_file_document
from .session import ray_session, worker_error
from .workers import DocumentPlan, Planner, read_and_check

__all__ = ["DEFAULT_BATCH_SIZE", "ingest_corpus"]

#: Files per worker call, and per write transaction in the driver.
DEFAULT_BATCH_SIZE = 16


def ingest_corpus(store: Store, paths: Sequence[str], *, rechunk: bool = True, replace: bool = False,
                  workers: int | None = None, address: str | None = None,
                  batch_size: int = DEFAULT_BATCH_SIZE) -> IngestReport:
    """:func:`logichunk.store.ingest.ingest` on Ray: the same documents, chapters, blocks, chunks,
    vectors, bubbles and report, the same skip and ``replace`` rules, with the reading, chunking and
    embedding done by ``workers`` Ray workers (default: every CPU Ray has).

    ``address``: None starts a local Ray for this call (and stops it after); ``"auto"`` or
    ``"ray://host:10001"`` uses a running cluster, whose nodes need logichunk and the embedder's
    packages installed. A Ray already initialised in this process is used as it is. ``batch_size``
    files go to a worker at a time and are written in one transaction.

    Chapters left dirty by an earlier ``rechunk=False`` ingest are chunked afterwards in this process,
    as the serial ingest does."""
    if workers is not None and workers < 1:
        raise InputError(f"workers must be at least 1, got {workers}")
    if batch_size < 1:
        raise InputError(f"batch_size must be at least 1, got {batch_size}")
    files = list_files(paths)  # nothing to ingest is said before Ray starts
    tally = Tally(store)
    checks = _Plan(store, replace)
    embedder = _embedder_for_workers(store) if rechunk else None  # a bad embedder fails before Ray starts
    with ray_session(address, workers) as ray:
        n = _worker_count(ray, workers)
        todo: list[tuple[str, str, list[str]]] = []  # path, text hash, documents it replaces
        for batch in _stream(ray, [{"i": k, "path": str(f)} for k, f in enumerate(files)], read_and_check,
                             batch_size, ray.data.TaskPoolStrategy(size=n)):
            for k, h, err in zip(batch["i"].tolist(), batch["hash"], batch["error"], strict=True):
                if err:
                    raise InputError(str(err))
                earlier = checks.check(files[k], str(h))
                if earlier is not None:
                    todo.append((str(files[k]), str(h), earlier))
        if todo:
            planner_args = (embedder, store.model_id if rechunk else "", store.params, store.settings.embedding_batch_size)
            items = [{"i": k, "path": p, "hash": h} for k, (p, h, _) in enumerate(todo)]
            for batch in _stream(ray, items, Planner, batch_size, ray.data.ActorPoolStrategy(size=n),
                                 fn_constructor_args=planner_args, max_restarts=0):
                _write(store, batch, todo, tally)
    if rechunk:
        tally.rechunked(store.rechunk_dirty())
    return tally.report(checks.unchanged)


def _embedder_for_workers(store: Store) -> Any:
    """What each worker builds its embedder from: the settings' spec when the store resolved its
    embedder from it, else the embedder object given to :meth:`Store.open` (sent pickled)."""
    emb = store.embedder
    if store.embedder_note:
        return store.settings.embedder
    try:
        pickle.dumps(emb)
    except Exception as e:  # noqa: BLE001  (any pickling failure says the same)
        raise InputError(f"the store's embedder {type(emb).__name__} cannot be sent to Ray workers ({e}); "
                         "open the store with an embedder spec (settings.embedder) instead") from None
    return emb


def _worker_count(ray: ModuleType, workers: int | None) -> int:
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    return min(workers, cpus) if workers else cpus


def _stream(ray: ModuleType, items: list[dict[str, Any]], fn: Any, batch_size: int, compute: Any,
            **kwargs: Any) -> Iterator[dict[str, np.ndarray]]:
    """``fn`` over ``items`` in batches on Ray Data, its output batches in input order as they finish.
    Ray Data's own notes (plans, progress) stay out of the user's terminal; its errors do not."""
    ds = ray.data.from_items(items)
    ds.context.execution_options.preserve_order = True  # this dataset's own copy of the context
    ds.context.enable_progress_bars = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # max_restarts as a keyword argument (Ray 2.60)
        ds = ds.map_batches(fn, batch_size=batch_size, batch_format="numpy", compute=compute, num_cpus=1, **kwargs)
    log = logging.getLogger("ray.data")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield from ds.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=1)
    except LogichunkError:
        raise
    except Exception as e:  # a task raising, an actor dying, the cluster going away
        raise worker_error(e) from None
    finally:
        log.setLevel(level)


def _write(store: Store, batch: dict[str, np.ndarray], todo: list[tuple[str, str, list[str]]], tally: Tally) -> None:
    """Write one batch of planned documents in one transaction; at a file a worker could not plan,
    write the ones before it and stop with that file's error."""
    ready: list[tuple[DocumentPlan, list[str]]] = []
    failed: tuple[str, str, bool] | None = None
    for k, blob, err, bad_input in zip(batch["i"].tolist(), batch["plan"], batch["error"], batch["input_error"],
                                       strict=True):
        if err:
            failed = (todo[k][0], str(err), bool(bad_input))
            break
        ready.append((pickle.loads(blob), todo[k][2]))
    with store.tx():
        for plan, earlier in ready:
            did = store_file_document(store, plan.document, earlier)
            tally.document(plan.document, earlier)
            if plan.chapters:
                chapters = [cid for cid, _order, _title in store.chapters(did)]
                tally.rechunked(store.rechunk_chapter(cid, plan=p) for cid, p in zip(chapters, plan.chapters, strict=True))
    if failed is not None:
        path, err, bad_input = failed
        where = f"; ingest stopped there: {tally.docs} file(s) before it are stored, run it again for the rest"
        if bad_input:
            raise InputError(err + where)
        raise LogichunkError(f"{Path(path)}: a Ray worker failed: {err}{where}")

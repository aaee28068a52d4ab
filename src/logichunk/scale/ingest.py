"""The serial ingest's result, with the heavy work on Ray workers and the writing in the driver.

Ray tasks on Ray's worker processes (:func:`~logichunk.scale.workers.check_files`,
:func:`~logichunk.scale.workers.plan_files`; one CPU each; each process keeps one
:class:`~logichunk.scale.workers.IngestWorker` with its embedder between tasks and between ingests with the
same arguments) make two passes over the list of files, their results streamed back in file order:

1. *read and check*: every file is decoded as the serial ingest decodes it, and only its text's
   hash comes back. The driver then decides, file by file and before anything is written, what the
   serial ingest decides (:class:`~logichunk.store.ingest.FileChecks`, the one place it is decided):
   refuse a binary or undecodable file (skipped with its line among several), skip a file stored
   before with the same text or differing only in store edits, and merge one stored with other text
   into its document in place, there in the driver (only its changed blocks dirty, chunked after).
2. *plan*: every file to store is read again, split into chapters and blocks, chunked and embedded
   with the store's own planner; the driver writes each batch of finished documents in one
   transaction (SQLite has one writer), with the chapters' plans and their vectors for the
   embedding cache.

Why two passes: the serial ingest decides every file before it writes any, and holding a
corpus in the driver until it knows is what this module exists to avoid; the first pass costs a
second read of each file. Memory is bounded: at most ``WINDOW`` batches per worker are in flight
or finished but not yet written, and the driver holds one batch of plans at a time.

A file changed, deleted or made unreadable between the two passes is refused in its one line, as the
serial ingest refuses it (:meth:`~logichunk.store.ingest.FileDocument.checked`, the one check), and the
others are stored. If a worker fails (its embedder raises, its process dies), the driver stops at that file: the
batches before it are stored completely (each batch is one transaction) and it and the files after
it are not, so running the same ingest again skips what is stored and finishes the rest. Workers
are not retried: a file that kills every worker it meets would otherwise loop for ever.

Why Ray core tasks rather than Ray Data's ``map_batches``: both passes, and later ingests of the same
driver, run on the same worker processes (Ray Data starts a pool per dataset, and each start of worker
processes cost 1.5-3 s on the 2-core machines this was measured on; so did a pool of actors per ingest),
the plans are Python objects that gain nothing from Arrow blocks, and ``ray`` alone installs without
pyarrow and pandas.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import pickle
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from types import ModuleType
from typing import Any, TypeVar

from ..errors import InputError, LogichunkError
from ..store.base import Store
from ..store.ingest import (
    EMPTY,
    FileChecks,
    FileDocument,
    FileWalk,
    IngestReport,
    Tally,
    check_cuts,
    check_embedder,
    check_paths,
    list_files,
    prune_missing,
    prune_needs_none,
    prune_only,
    reached_path,
    record_again,
    source_of,
    store_file_document,
)
from ..text.decode import check_encoding, speaker
from .session import ray_session, worker_error
from .workers import Planned, check_files, plan_files

__all__ = ["DEFAULT_BATCH_SIZE", "ingest_corpus"]

#: Files per worker call, and per write transaction in the driver.
DEFAULT_BATCH_SIZE = 16
#: Batches per worker submitted or finished-but-unwritten: enough to keep the workers busy while the
#: driver writes, few enough to bound memory.
WINDOW = 3

T = TypeVar("T")


def ingest_corpus(store: Store, paths: Sequence[str], *, rechunk: bool = True, replace: bool = False,
                  workers: int | None = None, address: str | None = None,
                  batch_size: int = DEFAULT_BATCH_SIZE, reembed: bool = False, recut: bool = False,
                  prune: bool = False, encoding: str | None = None) -> IngestReport:
    """:func:`logichunk.store.ingest.ingest` on Ray: the same documents, chapters, blocks, chunks,
    vectors, bubbles and report, the same skip and ``replace`` rules, with the reading, chunking and
    embedding done by ``workers`` Ray workers (default: every CPU Ray has).

    ``address``: None starts a local Ray for this call (and stops it after); ``"auto"`` or
    ``"ray://host:10001"`` uses a running cluster, whose nodes need logichunk and the embedder's
    packages installed and the files at the same paths. A Ray already initialised in this process
    is used as it is. ``batch_size`` files go to a worker at a time and are written in one
    transaction.

    Chapters left dirty by an earlier ``rechunk=False`` ingest are chunked afterwards in this process,
    as the serial ingest does; with ``reembed``, the chapters embedded with another model are re-chunked
    first, in this process, so no chapter is written with this embedder beside another's (without it, such a
    project is refused before Ray starts, as the serial ingest refuses it). A project
    chunked with other size settings is refused too unless ``recut``: then its chapters are cut again in
    this process before the workers start (:meth:`Store.recut`)."""
    check_paths(paths, "ingest_corpus")
    encoding = check_encoding(encoding)  # (``ingest``'s: the codec every file is read with)
    if workers is not None and workers < 1:
        raise InputError(f"workers must be at least 1, got {workers}")
    if batch_size < 1:
        raise InputError(f"batch_size must be at least 1, got {batch_size}")
    others = check_embedder(store, reembed)  # another embedder than the project's: refused before Ray starts
    if rechunk and check_cuts(store, recut):  # other size settings than the project's: so are they, or all cut again
        store.recut()
    walk = FileWalk()
    files = list_files(paths, walk, none_ok=prune_needs_none(paths, prune))  # said before Ray starts
    tally = Tally()
    checks = FileChecks(store, replace, len(files), paths, prune, encoding)
    if not files:  # a pruned folder with no text file left: no Ray to start
        return prune_only(store, paths, walk, tally, checks)
    if others:  # the stored chapters first, here: no chapter is written with this embedder beside another's
        tally.rechunked(store.reembed())
    embedder = _embedder_for_workers(store) if rechunk else None  # a bad embedder fails before Ray starts
    if rechunk:
        store.run_params  # noqa: B018 - and so does a bad tokenizer
    with ray_session(address, workers) as ray:
        pool = _pool(ray, workers, (embedder, store.model_id if rechunk else "", store.params,
                                    store.settings.embedding_batch_size, store.settings.cut_vectors, encoding,
                                    speaker()))  # (the workers' refusals in the driver's words: --encoding NAME...)
        todo: list[tuple[str, str, list[str]]] = []  # path, text hash, documents it replaces
        order = checks.check_order(files)  # (a file named as a gone one's first: :meth:`FileChecks.check_order`)
        rows = ((k, str(files[k])) for k in order)
        for checked in _ordered(ray, pool, check_files, _batches(rows, max(batch_size, 64))):
            for k, text_hash, err, how in checked:
                checks.read_as(files[k], how)
                if text_hash == EMPTY:
                    checks.skip_empty(files[k], err)
                    continue
                if err:  # binary, undecodable, unreadable: its line, and the next file
                    checks.refuse(err)
                    continue
                earlier = checks.check(files[k], text_hash)
                if earlier is not None:
                    todo.append((str(files[k]), text_hash, earlier))
        listed = {str(f): k for k, f in enumerate(files)}
        todo.sort(key=lambda t: listed[t[0]])  # (stored as listed)
        jobs = ((k, path, h) for k, (path, h, _) in enumerate(todo))
        for planned in _ordered(ray, pool, plan_files, _batches(jobs, batch_size), tally):
            _write(store, planned, todo, tally, checks)
    record_again(store, walk.again)
    pruned = prune_missing(store, paths, walk.unlisted, checks.empty, walk.dangling) if prune else None
    if rechunk:
        tally.rechunked(store.rechunk_dirty())
    return tally.report(checks, walk, pruned)


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


@dataclasses.dataclass(frozen=True)
class _Pool:
    """What every task of one ingest is sent: the digest of the workers' arguments (a process keeps its
    worker while it matches), the arguments in Ray's object store, and how many tasks may run at once."""

    key: str
    args: Any  # an ObjectRef, sent inside a list so that a task fetches it only when it makes a worker
    size: int


def _pool(ray: ModuleType, workers: int | None, args: tuple) -> _Pool:
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    try:  # (the embedder was pickled once already: _embedder_for_workers)
        key = hashlib.sha256(pickle.dumps(args)).hexdigest()
    except Exception:  # noqa: BLE001 - an argument pickle cannot digest: a worker for this ingest alone
        key = uuid.uuid4().hex
    return _Pool(key, ray.put(args), min(workers, cpus) if workers else cpus)


def _batches(rows: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(rows)
    while batch := list(islice(it, size)):
        yield batch


def _ordered(ray: ModuleType, pool: _Pool, task: Callable[..., Any], batches: Iterator[list],
             tally: Tally | None = None) -> Iterator[Any]:
    """``task(key, args, batch)`` as a Ray task for each batch of ``(index, path, ...)`` rows, at most
    ``pool.size`` at once, the results yielded in batch order; at most ``WINDOW`` batches per worker
    submitted and not yet yielded. A failure inside Ray is raised when its batch's turn comes, after
    every batch before it; the tasks still running are then cancelled."""
    remote = _remote(ray, task)
    running: dict[Any, tuple[int, list]] = {}  # ref -> (sequence number, batch)
    finished: dict[int, tuple[Any, list]] = {}
    submitted = next_out = 0
    limit = WINDOW * pool.size
    try:
        while True:
            while (len(running) < pool.size and submitted - next_out < limit
                   and (batch := next(batches, None)) is not None):
                running[remote.remote(pool.key, [pool.args], batch)] = (submitted, batch)
                submitted += 1
            if next_out in finished:
                ref, batch = finished.pop(next_out)
                try:
                    result = ray.get(ref)
                except Exception as e:  # a task raising, a worker process dying, the cluster going away
                    more = f" (and {len(batch) - 1} more file(s) of its batch)" if len(batch) > 1 else ""
                    raise LogichunkError(f"{batch[0][1]}{more}: {worker_error(e)}{_stopped(tally)}") from None
                next_out += 1
                yield result
                continue
            if not running:
                return
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                seq, batch = running.pop(ref)
                finished[seq] = (ref, batch)
    finally:
        for ref in running:
            with contextlib.suppress(Exception):  # (finished meanwhile, or the cluster gone)
                ray.cancel(ref)


_REMOTE: dict[Callable[..., Any], Any] = {}


def _remote(ray: ModuleType, task: Callable[..., Any]) -> Any:
    """``task`` as a Ray remote function, made once per process (Ray exports it again to a later
    session by itself). One CPU each; never retried: a file that kills its worker would kill the next."""
    if task not in _REMOTE:
        _REMOTE[task] = ray.remote(num_cpus=1, max_retries=0)(task)
    return _REMOTE[task]


def _write(store: Store, planned: list[Planned], todo: list[tuple[str, str, list[str]]], tally: Tally,
           checks: FileChecks) -> None:
    """Write one batch of planned documents in one transaction. A file refused by its own error (changed since
    its check, as the serial ingest refuses it) is said and skipped; at a file a worker failed on, write the ones
    before it and stop with that error."""
    ready = []
    failed: tuple[str, str] | None = None
    for k, plan, err, bad_input in planned:
        if bad_input:
            checks.refuse(err)
            continue
        if err or plan is None:
            failed = (todo[k][0], err)
            break
        ready.append((plan, todo[k][2]))
    with store.tx():
        for plan, earlier in ready:
            doc = _here(plan.document)
            did = store_file_document(store, doc, earlier, checks)
            if did is None:  # (stored meanwhile by another ingest, with this very text)
                continue
            tally.document(doc, earlier)
            if plan.chapters:
                chapters = [cid for cid, _order, _title in store.chapters(did)]
                tally.rechunked(store.rechunk_chapter(cid, plan=p) for cid, p in zip(chapters, plan.chapters, strict=True))
                checks.wrote()
    if failed is not None:
        path, err = failed
        raise LogichunkError(f"{path}: a Ray worker failed: {err}{_stopped(tally)}")


def _here(doc: FileDocument) -> FileDocument:
    """``doc`` with the source and the path reached by as this process reads its path
    (:func:`~logichunk.store.ingest.source_of`, :func:`~logichunk.store.ingest.reached_path`): a worker's own
    working directory is not the ingest's."""
    return dataclasses.replace(doc, source=source_of(doc.name), reached=reached_path(doc.name))


def _stopped(tally: Tally | None) -> str:
    if tally is None:  # the first pass: nothing is written yet
        return "; nothing was ingested"
    return f"; ingest stopped there: {tally.docs} new document(s) before it are stored, run it again for the rest"

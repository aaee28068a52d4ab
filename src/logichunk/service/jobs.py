"""Projects at run time: one store connection and one debounced re-chunk worker per project.

A :class:`~logichunk.store.Store` works inside one project, so the service keeps one per project it
has touched (:class:`Registry`), each with the store's own :class:`~logichunk.store.Debouncer`
(edits wait ``debounce_delay_ms`` after the last keystroke; new uploads run at once). Threads:
the store serialises its one connection with a lock, the debouncer runs re-chunks on its own thread,
and searches take the project's ``search_lock`` because the in-memory vector and BM25 indexes are
synchronised lazily and are not safe to update from two threads at once.

A block's status is what a writing application shows next to it: ``queued`` (waiting out the
debounce, with ``due_in_ms``), ``running``, ``failed`` (re-chunk failed; ``error`` says why, retried
automatically a few times, then on the next edit or ``POST .../rechunk``), ``dirty`` (changed but
not scheduled, e.g. written by another process) or ``clean``.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from ..config import Settings
from ..models.registry import Resolved
from ..store import BlockRow, CutSettingsError, Debouncer, RechunkResult, Store, UnknownIdError
from .errors import ApiError
from .idempotency import IdempotencyKeys
from .metrics import Metrics

PROJECT_NAME = re.compile(r"^[\w][\w.\-]{0,99}$")

log = logging.getLogger("logichunk.service")


def check_project_name(name: str) -> str:
    if not isinstance(name, str) or not PROJECT_NAME.match(name):
        raise ApiError(422, "invalid_request", f"project name {name!r} is not valid: 1-100 letters, digits, "
                       "'_', '-' or '.', not starting with '.' or '-'")
    return name


class QueryVectors:
    """An LRU cache in front of ``store.embed_query``. The search route embeds the query *before*
    taking the project's search lock (a real model takes tens of milliseconds per query, and many
    searches may embed at once); ``retrieve`` then finds the vector here under the lock, so the lock
    covers only the index work. Repeated queries (a search box) skip the model altogether."""

    def __init__(self, embed_query: Any, size: int = 1024) -> None:
        self._embed = embed_query
        self._size = size
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self.hits = self.misses = 0

    def prime(self, query: str) -> None:
        """Embed ``query`` now unless cached (counted: one per search)."""
        with self._lock:
            hit = query in self._cache
            self.hits += hit
            self.misses += not hit
        if not hit:
            self(query)

    def __call__(self, query: str) -> Any:
        with self._lock:
            v = self._cache.get(query)
            if v is not None:
                self._cache.move_to_end(query)
                return v
        v = self._embed(query)
        with self._lock:
            self._cache[query] = v
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return v

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()


class ProjectRuntime:
    def __init__(self, name: str, store: Store, metrics: Metrics, delay_ms: int) -> None:
        self.name = name
        self.store = store
        self.metrics = metrics
        self.search_lock = threading.Lock()
        # the instance attribute shadows the method for this store object only (see QueryVectors)
        self.query_vectors = QueryVectors(store.embed_query)
        store.embed_query = self.query_vectors  # type: ignore[method-assign]
        self.debouncer = Debouncer(store, delay_ms, on_result=self._done, on_error=self._failed)
        self.uploads = IdempotencyKeys()  # Idempotency-Key -> the document a create stored
        self.create_lock = threading.Lock()  # one create at a time: the same text twice stores one document

    # ------------------------------------------------------------------ job callbacks (worker thread)
    def _done(self, block_id: str, res: RechunkResult) -> None:
        self.metrics.observe_job(True, res.seconds if res.status == "rechunked" else None)

    def _failed(self, block_id: str, exc: BaseException) -> None:
        self.metrics.observe_job(False)
        # the block stays dirty and is retried; the log says why (the database may be what failed,
        # so the error cannot always be written beside the block)
        hopeless = isinstance(exc, CutSettingsError | UnknownIdError)  # (as the debouncer judges it)
        log.warning("re-chunk of block %s in project %s failed (%s: %s); %s", block_id, self.name,
                    type(exc).__name__, exc, "not retried" if hopeless else "retrying")

    # ------------------------------------------------------------------ scheduling
    def schedule(self, block_ids: Iterable[str], *, now: bool = False, bulk: bool = False) -> None:
        """Queue re-chunks: an edit after the debounce delay, ``now`` at once; ``bulk`` (a new document, a
        restart's backlog) after any due edit (:meth:`~logichunk.store.debounce.Debouncer.touch`)."""
        for b in dict.fromkeys(block_ids):
            self.debouncer.touch(b, 0 if now else None, bulk=bulk)

    def schedule_dirty(self) -> int:
        """Queue every dirty chapter at once (one block per chapter re-chunks the whole chapter)."""
        firsts = {}
        for b in self.store.blocks(dirty=True):
            firsts.setdefault(b.chapter_id, b.id)
        self.schedule(firsts.values(), now=True, bulk=True)
        return len(firsts)

    def block_status(self, b: BlockRow) -> dict[str, Any]:
        state, due = self.debouncer.state(b.id)
        if state is None:
            state = ("failed" if b.last_error else "dirty") if b.is_dirty else "clean"
        out: dict[str, Any] = {"status": state, "dirty": b.is_dirty, "revision": b.revision,
                               "last_chunked_at": b.last_chunked_at, "error": b.last_error}
        if due is not None:
            out["due_in_ms"] = round(due * 1000.0)
        return out

    def jobs(self) -> dict[str, int]:
        queued, running = self.debouncer.counts()
        return {"queued": queued, "running": running}

    def close(self, flush: bool = True, timeout: float = 30.0) -> None:
        self.debouncer.close(flush=flush, timeout=timeout)
        self.store.close()


class Registry:
    """The projects of one database, opened on first use and kept open."""

    def __init__(self, settings: Settings, metrics: Metrics, *, embedder: Any = None,
                 delay_ms: int | None = None, embedder_choice: str = "") -> None:
        """``embedder``: a model, its name, or a resolved one (``Resolved``, its description kept);
        ``embedder_choice``: the line saying it is the project's own, as no embedder was named (searches' notes)."""
        self.settings = settings
        self.metrics = metrics
        self.delay_ms = settings.debounce_delay_ms if delay_ms is None else int(delay_ms)
        self._lock = threading.RLock()
        self._open: dict[str, ProjectRuntime] = {}
        self._closed = False
        self.embedder_choice = embedder_choice
        if isinstance(embedder, Resolved):
            embedder, self.embedder_note = embedder.model, embedder.description
        elif embedder is None or isinstance(embedder, str):
            from ..models import resolve_embedder

            r = resolve_embedder(embedder or settings.embedder, cached=False)
            embedder, self.embedder_note = r.model, r.description
        else:
            self.embedder_note = f"{type(embedder).__name__} ({getattr(embedder, 'model_id', '?')})"
        self.embedder = embedder
        self.default = self._open_runtime(check_project_name(settings.project))
        self.started = time.time()

    def _open_runtime(self, name: str) -> ProjectRuntime:
        store = Store.open(self.settings.db, settings=self.settings, embedder=self.embedder, project=name)
        rt = ProjectRuntime(name, store, self.metrics, self.delay_ms)
        self._open[name] = rt
        rt.schedule_dirty()  # left dirty by a crash, a restart or another writer
        return rt

    def names(self) -> list[tuple[str, str, float]]:
        return self.default.store.projects()

    def exists(self, name: str) -> bool:
        return any(n == name for _, n, _ in self.names())

    def get(self, name: str, *, create: bool = False) -> ProjectRuntime:
        with self._lock:
            if self._closed:
                raise ApiError(503, "unavailable", "the service is shutting down")
            rt = self._open.get(name)
            if rt is not None:
                return rt
            check_project_name(name)
            if not create and not self.exists(name):
                raise ApiError(404, "not_found", f"no project named {name!r} (create it with POST /api/projects)")
            return self._open_runtime(name)

    def open_runtimes(self) -> list[ProjectRuntime]:
        with self._lock:
            return list(self._open.values())

    def embedding_stats(self) -> dict[str, Any]:
        rts = self.open_runtimes()
        req = sum(rt.store.embed_requests for rt in rts)
        miss = sum(rt.store.embed_calls for rt in rts)
        qh = sum(rt.query_vectors.hits for rt in rts)
        qm = sum(rt.query_vectors.misses for rt in rts)
        return {"requests": req, "misses": miss, "hits": req - miss,
                "hit_rate": round((req - miss) / req, 4) if req else None,
                "queries": {"requests": qh + qm, "misses": qm}}

    def jobs(self) -> dict[str, int]:
        tot = {"queued": 0, "running": 0, "failed_blocks": 0}
        for rt in self.open_runtimes():
            j = rt.jobs()
            tot["queued"] += j["queued"]
            tot["running"] += j["running"]
            tot["failed_blocks"] += sum(1 for b in rt.store.blocks(dirty=True) if b.last_error)
        return tot

    def close(self, flush: bool = True) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            runtimes = list(self._open.values())
        for rt in runtimes:
            rt.close(flush=flush)

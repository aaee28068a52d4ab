"""Debounced background re-chunking: edits are cheap, the re-chunk runs once the user pauses.

Each block has its own timer: a new edit to a block cancels and reschedules *that block's* pending
re-chunk (``debounce_delay_ms`` after the last edit); blocks never cancel each other. A block edited
without a pause runs anyway once its first pending edit is ``max_wait_ms`` old (ten delays by default,
30 s at the default delay): a writer streaming text into one paragraph with gaps under the delay would
otherwise never see it chunked, nor find it in a search, until they stopped. One worker
thread runs due re-chunks one at a time, so writers (``edit``) never wait for embedding. A failed
re-chunk leaves the block dirty and is retried, the wait doubling from the delay each time (at most
``max_backoff`` seconds): up to ``max_retries`` times, or for as long as it takes while the database
itself is unavailable (:class:`~logichunk.store.base.StoreUnavailable`: an outage must not leave
edits dirty for good). A re-chunk refused for other size settings than the project's chunks were cut with
(:class:`~logichunk.store.base.CutSettingsError`) is not retried: waiting does not change the settings.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ..errors import InputError
from .base import CutSettingsError, RechunkResult, Store, StoreUnavailable, UnknownIdError


def _millis(value: Any, name: str) -> float:
    """A delay given in milliseconds: a number, 0 or more. Why: ``"3000"`` (from a form or an env var) failed with
    a TypeError on the first division, and a negative or NaN delay was taken as given."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise InputError(f"{name} must be a number of milliseconds, 0 or more, got {value!r}")
    return float(value)


class Debouncer:
    def __init__(self, store: Store, delay_ms: int | None = None, *, max_retries: int = 3, history: int = 1000,
                 max_backoff: float = 30.0, max_wait_ms: float | None = None,
                 on_result: Callable[[str, RechunkResult], None] | None = None,
                 on_error: Callable[[str, BaseException], None] | None = None) -> None:
        self.store = store
        self.delay = (store.settings.debounce_delay_ms if delay_ms is None else _millis(delay_ms, "delay_ms")) / 1000.0
        self.max_wait = 10 * self.delay if max_wait_ms is None else _millis(max_wait_ms, "max_wait_ms") / 1000.0
        self.max_retries = max_retries
        self.max_backoff = float(max_backoff)
        self.on_result = on_result
        self.on_error = on_error
        self._due: dict[str, float] = {}
        self._since: dict[str, float] = {}  # when a pending block's first edit since its last run came
        self._bulk: set[str] = set()  # due blocks queued as bulk work (see touch)
        self._tries: dict[str, int] = {}
        self._running: str | None = None
        self._cv = threading.Condition()
        self._stop = False
        self.runs = 0  # re-chunks started
        # the latest outcomes only: a long-running service must not grow these without bound
        self.results: deque[tuple[str, RechunkResult]] = deque(maxlen=history)
        self.errors: deque[tuple[str, BaseException]] = deque(maxlen=history)
        self._thread = threading.Thread(target=self._loop, name="logichunk-debounce", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ API
    def touch(self, block_id: str, delay_ms: float | None = None, *, bulk: bool = False) -> None:
        """(Re)schedule the re-chunk of ``block_id`` ``delay`` from now, and no later than ``max_wait`` after
        the first edit pending (``delay_ms`` overrides the delay for this call: 0 for work nobody is typing
        into, such as a new upload). ``bulk``: work
        nobody waits on as they type (a new document's chapters, a restart's backlog): a due edit runs
        before it, so a user's edit waits for one chapter's re-chunk at most, not for a whole upload's."""
        with self._cv:
            if self._stop:
                raise RuntimeError("debouncer is closed")
            delay = self.delay if delay_ms is None else max(0.0, delay_ms / 1000.0)
            now = time.monotonic()
            since = self._since.setdefault(block_id, now)
            self._due[block_id] = max(now, min(now + delay, since + self.max_wait))
            if bulk:
                self._bulk.add(block_id)
            else:  # (an edit to a block queued as bulk work makes it someone's edit)
                self._bulk.discard(block_id)
            self._tries.pop(block_id, None)
            self._cv.notify()

    def cancel(self, block_id: str) -> bool:
        """Forget a pending re-chunk (the block was deleted, say); a running one finishes. True if one was pending."""
        with self._cv:
            self._tries.pop(block_id, None)
            self._bulk.discard(block_id)
            self._since.pop(block_id, None)
            return self._due.pop(block_id, None) is not None

    def edit(self, block_id: str, content: str, *, expected_revision: int | None = None) -> bool:
        """Write the new content (marks the block dirty) and schedule its re-chunk (``expected_revision``:
        :meth:`~logichunk.store.base.Store.edit_block`'s)."""
        changed = self.store.edit_block(block_id, content, expected_revision=expected_revision)
        self.touch(block_id)
        return changed

    def pending(self) -> list[str]:
        with self._cv:
            return list(self._due) + ([self._running] if self._running else [])

    def state(self, block_id: str) -> tuple[str | None, float | None]:
        """``("running", None)``, ``("queued", seconds until it runs)`` or ``(None, None)``."""
        with self._cv:
            if self._running == block_id:
                return "running", None
            due = self._due.get(block_id)
            return ("queued", max(0.0, due - time.monotonic())) if due is not None else (None, None)

    def counts(self) -> tuple[int, int]:
        """(queued, running) right now."""
        with self._cv:
            return len(self._due), int(self._running is not None)

    def flush(self, timeout: float | None = None) -> bool:
        """Run everything pending now and wait until idle. False on timeout."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            now = time.monotonic()
            for k in self._due:
                self._due[k] = now
            self._cv.notify_all()
            while self._due or self._running:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cv.wait(left if left is not None else 0.5)
        return True

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait (without hurrying timers) until nothing is pending or running."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            while self._due or self._running:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cv.wait(min(left, 0.5) if left is not None else 0.5)
        return True

    def close(self, *, flush: bool = True, timeout: float | None = 30.0) -> None:
        if flush:
            self.flush(timeout)
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        self._thread.join(timeout)

    def __enter__(self) -> Debouncer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ worker
    def _next(self, now: float) -> str | None:
        """The block to run now (under the lock): the earliest due edit, else the earliest due bulk work,
        else None (nothing due yet)."""
        ready = [(due, b) for b, due in self._due.items() if due <= now]
        if not ready:
            return None
        edits = [x for x in ready if x[1] not in self._bulk]
        return min(edits or ready)[1]

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._stop:
                    if self._due:
                        block = self._next(time.monotonic())
                        if block is not None:
                            del self._due[block]
                            self._since.pop(block, None)  # (an edit from now on waits from now)
                            bulk = block in self._bulk
                            self._bulk.discard(block)
                            self._running = block
                            break
                        self._cv.wait(min(self._due.values()) - time.monotonic())
                    else:
                        self._cv.wait()
                if self._stop:
                    return
            self.runs += 1
            try:
                res = self.store.rechunk_block(block)
            except BaseException as e:  # noqa: BLE001 - recorded, retried, never kills the worker
                self.errors.append((block, e))
                if self.on_error:
                    self.on_error(block, e)
                with self._cv:
                    tries = self._tries.get(block, 0) + 1
                    outage = isinstance(e, StoreUnavailable)
                    # the settings will not change by waiting, nor will a block deleted meanwhile come back (its
                    # document deleted while the edit waited: retried with backoff, it held a service's exit)
                    hopeless = isinstance(e, CutSettingsError | UnknownIdError)
                    if (outage or tries <= self.max_retries) and not hopeless and block not in self._due \
                            and not self._stop:
                        self._tries[block] = tries
                        wait = min(self.max_backoff, max(self.delay, 0.05) * 2 ** (tries - 1))
                        self._due[block] = time.monotonic() + wait
                        if bulk:  # (a retry of bulk work stays bulk work)
                            self._bulk.add(block)
            else:
                self.results.append((block, res))
                if self.on_result:
                    self.on_result(block, res)
            finally:
                with self._cv:
                    self._running = None
                    self._cv.notify_all()

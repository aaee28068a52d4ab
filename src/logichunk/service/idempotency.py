"""``Idempotency-Key``: a retried upload (a timeout, a lost answer) gets the first answer's document
instead of a second copy.

A key maps to the fingerprint of the request it first came with and the document that request
stored. The same key with the same request gives that document back; with another request it is
an error (the client reused a key by mistake). Keys live in the server's memory for ``ttl``
seconds (a day by default; at most ``max_keys``, the oldest dropped first): a restart forgets
them, and the content-hash check (the same text is the same document) still stands behind them.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict

from .errors import ApiError

MAX_KEY_CHARS = 255


def fingerprint(*parts: object) -> str:
    """One hash of what makes two requests the same request."""
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


class IdempotencyKeys:
    def __init__(self, ttl: float = 86_400.0, max_keys: int = 10_000) -> None:
        self.ttl, self.max_keys = float(ttl), int(max_keys)
        self._keys: OrderedDict[str, tuple[str, str, float]] = OrderedDict()  # key -> (fingerprint, doc, time)
        self._lock = threading.Lock()

    @staticmethod
    def check_key(key: str) -> str:
        if not key or len(key) > MAX_KEY_CHARS or not key.isprintable():
            raise ApiError(422, "invalid_request", f"Idempotency-Key must be 1 to {MAX_KEY_CHARS} printable characters")
        return key

    def get(self, key: str, fp: str) -> str | None:
        """The document this key stored, None for a key not seen (or expired); a key seen with
        another request is a 422."""
        with self._lock:
            self._expire()
            hit = self._keys.get(key)
        if hit is None:
            return None
        if hit[0] != fp:
            raise ApiError(422, "idempotency_key_reused", "this Idempotency-Key was used with another request "
                           "(other text, title, source or copy flag); use a new key for a new request")
        return hit[1]

    def put(self, key: str, fp: str, doc_id: str) -> None:
        with self._lock:
            self._keys[key] = (fp, doc_id, time.monotonic())
            self._keys.move_to_end(key)
            while len(self._keys) > self.max_keys:
                self._keys.popitem(last=False)

    def _expire(self) -> None:
        limit = time.monotonic() - self.ttl
        while self._keys:
            k, (_, _, t) = next(iter(self._keys.items()))
            if t >= limit:
                break
            del self._keys[k]

"""A small JSON-over-HTTP client for OpenAI-compatible model servers (vLLM, llama.cpp, Ollama, clouds).

Standard library only (``urllib``), so the HTTP backends work on a bare install. What it adds over a
bare ``urlopen``:

* a timeout on every request (a hung server must not hang a chunking job);
* retries with exponential backoff (and ``Retry-After``) on the failures that are worth retrying —
  5xx, 408/429, timeouts, refused or reset connections — and never on other 4xx, which mean the
  request itself is wrong and would fail again;
* errors that say what happened, where, and after how many attempts, as
  :class:`~logichunk.errors.LogichunkError` subclasses the CLI prints as one line. The API key never
  appears in an error or a ``repr``.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import LogichunkError

__all__ = [
    "EndpointError", "EndpointHTTPError", "EndpointTimeout", "EndpointUnreachable", "JSONClient",
    "MalformedResponse", "RetryPolicy", "api_key_from_env", "default_retry", "default_timeout",
]

_RETRYABLE_4XX = frozenset({408, 425, 429})
_BODY_EXCERPT = 300


class EndpointError(LogichunkError):
    """A model endpoint could not give a usable answer. ``url``, ``status`` and ``attempts`` say
    where, what the server said (None when no HTTP status was received) and how often we tried."""

    def __init__(self, message: str, *, url: str, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.attempts = attempts


class EndpointTimeout(EndpointError):
    """The server did not answer within the timeout (on every attempt)."""


class EndpointUnreachable(EndpointError):
    """No connection could be made (refused, reset, DNS): is the server running at that URL?"""


class EndpointHTTPError(EndpointError):
    """The server answered with an HTTP error status: 4xx at once, 5xx after the retries ran out."""


class MalformedResponse(EndpointError):
    """The server answered 2xx but the body is not the JSON the protocol promises."""


def api_key_from_env(*names: str) -> str | None:
    """The first non-empty environment variable among ``names`` (default: ``LOGICHUNK_API_KEY``,
    ``OPENAI_API_KEY``), so keys live in the environment, never in specs or config files."""
    for name in names or ("LOGICHUNK_API_KEY", "OPENAI_API_KEY"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def _env_number(name: str, default: float, *, integer: bool) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        value = -1
    if not (value >= 0 if integer else 0 < value < float("inf")):
        kind = "a whole number >= 0" if integer else "a number of seconds > 0"
        raise LogichunkError(f"${name} must be {kind}, got {raw!r}")
    return value


def default_timeout(fallback: float = 60.0) -> float:
    """Seconds to wait for one answer: ``$LOGICHUNK_HTTP_TIMEOUT``, else ``fallback`` (60; generating
    clients pass 120). An environment variable, so a user facing a slow or silent server changes it for
    every verb, the service and the library at once, without a flag on each."""
    return _env_number("LOGICHUNK_HTTP_TIMEOUT", fallback, integer=False)


def default_retry() -> RetryPolicy:
    """The retry policy of a client built without one: ``$LOGICHUNK_HTTP_RETRIES`` extra attempts
    (else 3)."""
    return RetryPolicy(retries=int(_env_number("LOGICHUNK_HTTP_RETRIES", 3, integer=True)))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry. ``retries`` is the number of *extra* attempts; the
    wait before retry k (0-based) is ``min(max_backoff, backoff * 2**k)``, stretched by up to
    ``jitter`` (a fraction) so that many clients do not retry in lock-step."""

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    jitter: float = 0.1

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        base = min(self.max_backoff, self.backoff * (2.0**attempt))
        if retry_after is not None:
            base = min(self.max_backoff, max(base, retry_after))
        return base * (1.0 + self.jitter * random.random())


class JSONClient:
    """POST/GET JSON to ``base_url`` + path with timeouts, retries and clear errors.

    Thread-safe; ``stats`` counts requests (attempts on the wire), retries and failures, so callers
    and tests can see the retry behaviour without guessing.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise LogichunkError(f"endpoint URL must start with http:// or https://, got {base_url!r}")
        if not urllib.parse.urlsplit(base_url).hostname:
            raise LogichunkError(f"endpoint URL {base_url!r} names no host (expected http://HOST:PORT/v1)")
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout = default_timeout() if timeout is None else float(timeout)
        self.retry = retry or default_retry()
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "User-Agent": "logichunk"}
        self._headers.update(headers or {})
        self._sleep = sleep
        self._lock = threading.Lock()
        self.stats = {"requests": 0, "retries": 0, "failures": 0}

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"JSONClient({self.base_url!r}, timeout={self.timeout}, api_key={key})"

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def post(self, path: str, payload: Mapping[str, Any], *, timeout: float | None = None) -> Any:
        """POST ``payload`` as JSON, return the decoded JSON answer (retrying as the policy says)."""
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return self._request("POST", path, data, timeout)

    def get(self, path: str, *, timeout: float | None = None) -> Any:
        return self._request("GET", path, None, timeout)

    # -- internals -------------------------------------------------------------------------------

    def _count(self, key: str) -> None:
        with self._lock:
            self.stats[key] += 1

    def _request(self, method: str, path: str, data: bytes | None, timeout: float | None) -> Any:
        url = self.url(path)
        headers = dict(self._headers)
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        limit = self.timeout if timeout is None else float(timeout)
        attempts = self.retry.retries + 1
        last: _Retryable | None = None
        for attempt in range(attempts):
            if attempt:
                self._count("retries")
                self._sleep(self.retry.delay(attempt - 1, last.retry_after if last else None))
            self._count("requests")
            try:
                body = self._once(method, url, data, headers, limit, attempt + 1)
            except _Retryable as exc:
                last = exc
                continue
            except EndpointError:
                self._count("failures")
                raise
            try:
                return self._decode(body, url, attempt + 1)
            except EndpointError:  # an answer that is not JSON is a failure too
                self._count("failures")
                raise
        self._count("failures")
        assert last is not None
        err = last.error
        err.attempts = attempts
        hint = "; $LOGICHUNK_HTTP_TIMEOUT sets the wait" if isinstance(err, EndpointTimeout) else ""
        err.args = (f"{err.args[0]} (gave up after {attempts} attempt{'s' * (attempts > 1)}{hint})",)
        raise err

    def _once(self, method: str, url: str, data: bytes | None, headers: dict[str, str],
              timeout: float, attempt: int) -> bytes:
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - URL is the user's endpoint
                return resp.read()
        except urllib.error.HTTPError as exc:
            status = exc.code
            try:
                excerpt = exc.read()[:_BODY_EXCERPT].decode("utf-8", "replace").strip()
            except (OSError, TimeoutError):
                excerpt = ""
            finally:
                exc.close()
            msg = f"{method} {url} answered HTTP {status}" + (f": {excerpt}" if excerpt else "")
            err = EndpointHTTPError(msg, url=url, status=status, attempts=attempt)
            if status >= 500 or status in _RETRYABLE_4XX:
                raise _Retryable(err, _retry_after(exc.headers)) from None
            raise err from None
        except TimeoutError as exc:
            raise _Retryable(EndpointTimeout(f"{method} {url} timed out after {timeout:g}s", url=url,
                                             attempts=attempt)) from exc
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise _Retryable(EndpointTimeout(f"{method} {url} timed out after {timeout:g}s", url=url,
                                                 attempts=attempt)) from exc
            raise _Retryable(EndpointUnreachable(f"cannot reach {url}: {reason}", url=url,
                                                 attempts=attempt)) from exc
        except (ConnectionError, http.client.HTTPException) as exc:
            raise _Retryable(EndpointUnreachable(f"connection to {url} failed: {exc!r}", url=url,
                                                 attempts=attempt)) from exc

    @staticmethod
    def _decode(body: bytes, url: str, attempts: int) -> Any:
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            excerpt = body[:120].decode("utf-8", "replace")
            raise MalformedResponse(f"{url} returned a body that is not JSON ({exc}): {excerpt!r}",
                                    url=url, status=200, attempts=attempts) from None


class _Retryable(Exception):
    """Internal: carries an EndpointError that the retry loop may try again."""

    def __init__(self, error: EndpointError, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def require(obj: Any, path: str, url: str, kind: type | tuple[type, ...] | None = None) -> Any:
    """``obj[a][b]...`` for a dotted ``path`` (integers index lists), or a :class:`MalformedResponse`
    that names the missing field: servers differ, and "KeyError: 'choices'" helps nobody."""
    cur = obj
    for part in path.split("."):
        try:
            cur = cur[int(part)] if part.isdigit() else cur[part]
        except (KeyError, IndexError, TypeError):
            raise MalformedResponse(f"{url} answer has no field {path!r}: {_short(obj)}", url=url,
                                    status=200) from None
    if kind is not None and not isinstance(cur, kind):
        raise MalformedResponse(f"{url} answer field {path!r} has type {type(cur).__name__}: {_short(obj)}",
                                url=url, status=200)
    return cur


def _short(obj: Any) -> str:
    text = json.dumps(obj, ensure_ascii=False)[:200]
    return text

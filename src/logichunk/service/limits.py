"""Request size limits, enforced before the application reads a byte it does not want.

A declared ``Content-Length`` over the limit is refused at once (413); a body without one (chunked
transfer) is counted as it streams and refused as soon as it passes the limit, so an oversized
upload never sits in memory whole. Either way the rest of the refused body is read and dropped (up
to :func:`drain_cap`, for at most ``DRAIN_SECONDS``) before the answer, which says ``Connection: close``: a server that closes a
connection with unread bytes makes the kernel reset it, and a client still sending then reads the
reset instead of the 413. Limits on what a body *contains* (text length, query length, ``top_k``)
are checked by the routes with the settings ``service_max_*``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from .errors import ApiError, error_body

Scope = dict[str, Any]

DRAIN_FACTOR = 4
DRAIN_FLOOR = 16 * 1024 * 1024
#: the longest a refused body is read for: a client trickling its bytes (or stalled) must not hold the
#: connection and a task for ever; 30 s reads the 64 MiB cap at a little over 2 MB/s, slower than any honest
#: upload that the 413 is worth waiting for (fixed a priori)
DRAIN_SECONDS = 30.0
CLOSE = {"Connection": "close"}


def too_large(size: int | None, limit: int, headers: dict[str, str] | None = None) -> ApiError:
    what = f"{size:,} bytes" if size is not None else "over the limit"
    return ApiError(413, "too_large", f"request body is {what}; this server accepts at most {limit:,} bytes "
                    "(setting service_max_body_bytes)", {"limit_bytes": limit}, headers)


def drain_cap(limit: int) -> int:
    """The most bytes of a refused body read and dropped so that its client gets the 413: four times the
    limit, at least 16 MiB (the default limit). An honest client that overshoots sends a file somewhat too
    big; dropping it as it comes holds no memory and takes no longer than the few bodies the server would
    accept in its place. A body beyond the cap is not worth the bandwidth: it is cut off (a reset)."""
    return max(DRAIN_FACTOR * limit, DRAIN_FLOOR)


async def drain(receive: Any, budget: int, seconds: float | None = None) -> None:
    """Read and drop the rest of the request's body: up to its end, the client's leaving, the first message
    past ``budget`` bytes, or ``seconds`` (``DRAIN_SECONDS``) after it began (what is left then is cut off:
    the answer may reach the client as a reset)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (DRAIN_SECONDS if seconds is None else seconds)
    while budget >= 0:
        left = deadline - loop.time()
        if left <= 0:
            return
        try:
            msg = await asyncio.wait_for(receive(), left)
        except TimeoutError:
            return
        if msg["type"] != "http.request" or not msg.get("more_body", False):
            return
        budget -= len(msg.get("body", b""))


def _header(scope: Scope, name: bytes) -> bytes | None:
    return next((v for k, v in scope.get("headers", ()) if k == name), None)


class BodyLimit:
    """ASGI middleware: 413 for request bodies over ``max_bytes``."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = int(max_bytes)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        declared, raw = None, _header(scope, b"content-length")
        if raw is not None:
            try:
                declared = int(raw)
            except ValueError:
                await _reply(send, 400, error_body("bad_request", "the Content-Length header is not a number"))
                return
        if declared is not None and declared > limit:
            await self._refuse_declared(scope, receive, send, declared)
            return
        seen = 0

        async def limited() -> dict[str, Any]:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    if msg.get("more_body", False):
                        await drain(receive, drain_cap(limit) - seen)
                    raise too_large(None, limit, CLOSE)
            return msg

        await self.app(scope, limited, send)

    async def _refuse_declared(self, scope: Scope, receive: Any, send: Any, declared: int) -> None:
        """The 413 for a declared length over the limit, after the body it announced, when that is within
        :func:`drain_cap`; at once when it is not (a part read would not spare the reset), or when the
        client waits for ``100 Continue`` before sending (reading would ask it for the body)."""
        waits = (_header(scope, b"expect") or b"").lower() == b"100-continue"
        if not waits and declared <= drain_cap(self.max_bytes):
            await drain(receive, declared)
        err = too_large(declared, self.max_bytes)
        await _reply(send, 413, error_body(err.code, str(err.detail), err.details), close=True)


async def _reply(send: Any, status: int, body: dict[str, Any], close: bool = False) -> None:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})

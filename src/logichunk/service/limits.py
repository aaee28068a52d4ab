"""Request size limits, enforced before the application reads a byte it does not want.

A declared ``Content-Length`` over the limit is refused at once (413); a body without one (chunked
transfer) is counted as it streams and refused as soon as it passes the limit, so an oversized
upload never sits in memory whole. Limits on what a body *contains* (text length, query length,
``top_k``) are checked by the routes with the settings ``service_max_*``.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import ApiError, error_body

Scope = dict[str, Any]


def too_large(size: int | None, limit: int) -> ApiError:
    what = f"{size:,} bytes" if size is not None else "over the limit"
    return ApiError(413, "too_large", f"request body is {what}; this server accepts at most {limit:,} bytes "
                    "(setting service_max_body_bytes)", {"limit_bytes": limit})


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
        declared = None
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    declared = int(v)
                except ValueError:
                    await _reply(send, 400, error_body("bad_request", "the Content-Length header is not a number"))
                    return
        if declared is not None and declared > limit:
            err = too_large(declared, limit)
            await _reply(send, 413, error_body(err.code, str(err.detail), err.details), close=True)
            return
        seen = 0

        async def limited() -> dict[str, Any]:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    raise too_large(None, limit)
            return msg

        await self.app(scope, limited, send)


async def _reply(send: Any, status: int, body: dict[str, Any], close: bool = False) -> None:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})

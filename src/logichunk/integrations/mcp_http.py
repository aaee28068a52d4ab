"""The MCP server inside ``logichunk serve``: streamable HTTP at ``/mcp``, behind the service's API
key (``X-API-Key: <key>`` or ``Authorization: Bearer <key>``), over the service's own project
stores (the same locks and query cache as ``/api``; documents added either way are seen by both).

:func:`mount_mcp` is called by the service's app factory when the ``mcp`` extra is installed.
"""

from __future__ import annotations

import contextlib
import hmac
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from ..errors import InputError
from . import kb
from .mcp_server import LoneSurrogates, build_server

PATH = "/mcp"


class ServiceStores:
    """:class:`.mcp_server.StoreSource` over the service's project registry."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.default = registry.default.name
        self.embedder = registry.embedder
        self.embedder_choice = getattr(registry, "embedder_choice", "")  # (the tools' results carry it)

    def get(self, project: str | None, *, create: bool = False) -> kb.Project:
        name = self.default if project is None else kb.check_project(project)
        try:
            rt = self.registry.get(name, create=create)
        except Exception as e:  # the service's ApiError (unknown project, shutting down): one sentence
            detail = getattr(e, "detail", None)
            if detail is None:
                raise
            raise InputError(str(detail)) from None
        return kb.Project(rt.name, rt.store, rt.search_lock, prime=rt.query_vectors.prime)


class RequireKey:
    """ASGI wrapper: 401 with the service's error body unless the request carries the key."""

    def __init__(self, app: Any, key: str, header: str = "X-API-Key") -> None:
        self.app = app
        self.key = key.encode("utf-8")
        self.header = header.lower().encode("latin-1")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = None
        for k, v in scope.get("headers", []):
            if k == self.header:
                given = v
            elif k == b"authorization" and given is None and v[:7].lower() == b"bearer ":
                given = v[7:].strip()
        if given is None:
            await _deny(send, "missing_api_key", "/mcp needs the API key: send 'X-API-Key: <key>' or "
                                                 "'Authorization: Bearer <key>' (logichunk serve printed the key)")
            return
        if not hmac.compare_digest(given, self.key):
            await _deny(send, "invalid_api_key", "the API key is not valid for this server")
            return
        await self.app(scope, receive, send)


async def _deny(send: Any, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"www-authenticate", b'Bearer realm="logichunk", header="X-API-Key"')]})
    await send({"type": "http.response.body", "body": body})


def mount_mcp(app: Any, service: Any, allow: Sequence[str] = ()) -> None:
    """Add ``/mcp`` to the service's FastAPI ``app`` and run the MCP session manager in its lifespan;
    ``allow``: the folders ``add_file`` may read (``logichunk serve --mcp-allow DIR``)."""
    server = build_server(ServiceStores(service.registry), service.settings, allow=kb.Folders(allow))
    # the API key guards the route; the SDK's Host/Origin allow-list (for servers without auth on
    # loopback) would refuse a service reached by another name (--host 0.0.0.0, a proxy)
    # and the body limit is the service's (the SDK's 4 MiB would refuse a text /api takes)
    server.streamable_http_app(streamable_http_path=PATH, max_request_body_size=service.settings.service_max_body_bytes,
                               transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    manager = server.session_manager
    # the key first; then a lone surrogate escape answered as on stdio (the SDK's own parse error is cryptic)
    app.router.routes.append(Route(PATH, endpoint=RequireKey(LoneSurrogates(manager.handle_request),
                                                             service.api_key)))
    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        async with manager.run(), inner(a) as state:
            yield state

    app.router.lifespan_context = lifespan
    app.state.mcp = server

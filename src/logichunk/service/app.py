"""The application factory: ``create_app(settings, api_key=...)`` returns a FastAPI app serving the
JSON API under ``/api``, the web page at ``/`` (static files, no build step, no CDN) and the
OpenAPI schema at ``/openapi.json`` with an interactive explorer at ``/docs`` (Swagger UI from the
``swagger-ui-bundle`` package when it is installed, so it too works offline).

The stores are opened here, not at first request, so a wrong ``--db`` fails ``logichunk serve``
with one line instead of failing every request later.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

from .. import __version__
from ..config import Settings
from ..errors import InputError
from ..models.embedding import EmbeddingCache
from ..models.registry import embedder_of
from ..store.embedder_choice import StoreEmbedder
from . import errors
from .auth import check_key
from .jobs import Registry
from .limits import BodyLimit
from .metrics import Metrics, RequestMetrics
from .state import Service

log = logging.getLogger("logichunk.service")

STATIC = Path(str(resources.files("logichunk.service") / "static"))
# the page loads nothing from anywhere else: the browser enforces it
PAGE_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")


def create_app(settings: Settings | None = None, *, api_key: str, embedder: Any = None,
               debounce_ms: int | None = None, mcp_allow: Sequence[str] = (),
               own_embedder: StoreEmbedder | None = None) -> FastAPI:
    """``embedder`` (a model or its name) overrides ``settings.embedder`` (tests pass a small one); ``debounce_ms``
    overrides ``settings.debounce_delay_ms``; ``mcp_allow``: folders the MCP tool ``add_file`` may read;
    ``own_embedder``: the default project's own embedder, taken as no embedder was named
    (:func:`~logichunk.store.embedder_choice.store_embedder`; ``logichunk serve``): searches' notes say so."""
    settings = settings or Settings.load()
    if own_embedder is not None:
        settings, embedder = own_embedder.settings, own_embedder.resolved
    elif embedder is not None and not isinstance(embedder, str):
        embedder = embedder_of(embedder)  # (a wrong kind: one line of error; a name: resolved as the settings' own)
    metrics = Metrics()
    registry = Registry(settings, metrics, embedder=embedder, delay_ms=debounce_ms,
                        embedder_choice=own_embedder.note if own_embedder else "")
    service = Service(settings, check_key(api_key), registry, metrics, EmbeddingCache(registry.embedder))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            service.close()

    app = FastAPI(title="logichunk", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Cut text where its logic breaks, store the hierarchy, search it. Every `/api` route "
                              "except `/api/health` needs the API key (`X-API-Key` or `Authorization: Bearer`).")
    app.state.service = service
    errors.install(app)

    from .routes import blocks, chunk, documents, projects, search, system

    # the error answers each group of routes can give, in the schema with their real body
    codes = {system: (401, 422, 503), projects: (401, 404, 409, 422, 503), documents: (400, 401, 404, 409, 413, 422, 503),
             blocks: (401, 404, 409, 413, 422, 503), search: (401, 404, 413, 422, 503), chunk: (400, 401, 413, 422)}
    for mod in (system, projects, documents, blocks, search, chunk):
        app.include_router(mod.router, responses=errors.error_responses(*codes[mod]))

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _mount_mcp(app, service, mcp_allow)

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        return FileResponse(STATIC / "index.html", headers={"Content-Security-Policy": PAGE_CSP,
                                                             "Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    _docs(app)

    # the last added is the outermost: metrics see every answer, including early 413s
    app.add_middleware(SecurityHeaders)
    app.add_middleware(BodyLimit, max_bytes=settings.service_max_body_bytes)
    app.add_middleware(RequestMetrics, metrics=metrics)
    return app


def _mount_mcp(app: FastAPI, service: Service, allow: Sequence[str]) -> None:
    """The MCP server at ``/mcp`` (streamable HTTP, behind the key) when the ``mcp`` extra is installed."""
    try:
        from ..integrations.mcp_http import mount_mcp
    except ImportError:
        if allow:
            raise InputError("--mcp-allow: the MCP server needs the mcp extra: pip install 'logichunk[mcp]'") from None
        return
    mount_mcp(app, service, allow)


def _docs(app: FastAPI) -> None:
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        swagger_ui_path = None
    if swagger_ui_path is not None:
        app.mount("/docs-assets", StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        if swagger_ui_path is None:
            return HTMLResponse("<!doctype html><meta charset=utf-8><title>logichunk API</title>"
                                "<p>The OpenAPI schema is at <a href='/openapi.json'>/openapi.json</a>. "
                                "Install <code>swagger-ui-bundle</code> (extra <code>[service]</code>) for the "
                                "interactive explorer.</p>")
        from fastapi.openapi.docs import get_swagger_ui_html

        return get_swagger_ui_html(openapi_url="/docs-openapi.json", title="logichunk API",
                                   swagger_js_url="/docs-assets/swagger-ui-bundle.js",
                                   swagger_css_url="/docs-assets/swagger-ui.css",
                                   swagger_favicon_url="/static/favicon.svg")

    @app.get("/docs-openapi.json", include_in_schema=False)
    def docs_schema() -> dict[str, Any]:
        # the bundled Swagger UI (4.x) reads OpenAPI 3.0 only; FastAPI writes 3.1 (/openapi.json stays so)
        return openapi_30(app.openapi())


def openapi_30(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAPI 3.1 document written as 3.0 for older readers: ``anyOf [X, null]`` as ``X`` with
    ``nullable``, ``const`` as a one-value ``enum``, ``examples`` as ``example``, numeric
    ``exclusiveMinimum``/``exclusiveMaximum`` as the 3.0 boolean form, and a ``$ref`` with other
    keys beside it (a description, ``nullable``) as ``allOf [$ref]``, since 3.0 ignores a
    reference's siblings."""
    null = {"type": "null"}

    def walk(x: Any) -> Any:
        if isinstance(x, list):
            return [walk(v) for v in x]
        if not isinstance(x, dict):
            return x
        d = dict(x)
        nullable = False
        any_of = d.get("anyOf")
        if isinstance(any_of, list) and null in any_of:  # before the members are converted themselves
            rest = [v for v in any_of if v != null]
            d.pop("anyOf")
            if len(rest) == 1 and isinstance(rest[0], dict):
                d = {**rest[0], **d}
            elif rest:
                d["anyOf"] = rest
            nullable = True
        d = {k: walk(v) for k, v in d.items()}
        if d.get("type") == "null":
            d.pop("type")
            nullable = True
        if nullable:
            d["nullable"] = True
        if "const" in d:
            d["enum"] = [d.pop("const")]
        if isinstance(d.get("examples"), list) and "example" not in d:
            ex = d.pop("examples")
            if ex:
                d["example"] = ex[0]
        for bound, edge in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(d.get(bound), int | float) and not isinstance(d.get(bound), bool):
                d[edge] = d.pop(bound)
                d[bound] = True
        if isinstance(d.get("$ref"), str) and len(d) > 1:
            d = {"allOf": [{"$ref": d.pop("$ref")}], **d}
        return d

    out = walk(schema)
    out["openapi"] = "3.0.3"
    return out


class SecurityHeaders:
    """ASGI middleware: ``nosniff`` and ``no-referrer`` on every response."""

    EXTRA = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_wrapper(msg: dict[str, Any]) -> None:
            if msg["type"] == "http.response.start":
                msg = {**msg, "headers": [*msg.get("headers", []), *self.EXTRA]}
            await send(msg)

        await self.app(scope, receive, send_wrapper)

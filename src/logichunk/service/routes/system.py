"""Health (no key needed), server info and metrics."""

from __future__ import annotations

import time
from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from ... import __version__
from ... import config as config_mod
from ..metrics import prometheus
from ..playground import METHODS
from ..responses import Health, Metrics, ServerInfo, answer
from .common import AUTH, service

router = APIRouter(prefix="/api", tags=["system"])


@router.get("/health", summary="liveness and database check (no API key needed)",
            responses={**answer(Health, "the service and its database are up"),
                       503: {"model": Health, "description": "the database is unavailable (`status: unavailable`)"}})
def health(request: Request) -> Response:
    svc = service(request)
    body: dict[str, Any] = {"status": "ok", "version": __version__, "uptime_seconds": round(time.time() - svc.started, 3)}
    try:
        svc.registry.default.store.generation()
        body["database"] = "ok"
    except Exception as e:  # noqa: BLE001 - a health check reports, it does not crash
        body.update(status="unavailable", database=f"{type(e).__name__}: {e}")
        return JSONResponse(body, status_code=503)
    return JSONResponse(body)


@router.get("/info", dependencies=AUTH, summary="what this server offers: modes, methods, limits, embedder",
            response_model=None, responses=answer(ServerInfo, "modes, methods, units, limits, embedder"))
def info(request: Request) -> dict[str, Any]:
    svc = service(request)
    s = svc.settings
    return {
        "version": __version__,
        "embedder": svc.registry.embedder_note,
        "default_project": s.project,
        # read at call time: modes registered by other modules appear without a change here
        "retrieve_modes": list(config_mod.RETRIEVE_MODES),
        "default_mode": s.retrieve_mode,
        "methods": [{"name": m.name, "about": m.about, "embeds": m.embeds, "default_sizes": list(m.default_sizes)}
                    for m in METHODS.values()],
        "units": ["chars", "bytes", "tokens"],
        "debounce_ms": svc.registry.delay_ms,
        "limits": {"max_body_bytes": s.service_max_body_bytes, "max_chunk_chars": s.service_max_chunk_chars,
                   "max_query_chars": s.service_max_query_chars, "max_top_k": s.service_max_top_k},
        "store": {"parent": [s.min_parent_size, s.max_parent_size],
                  "child": [s.child_min_size, s.child_target_size, s.child_max_size],
                  "similarity_threshold": s.similarity_threshold},
    }


def snapshot(request: Request) -> dict[str, Any]:
    svc = service(request)
    snap = svc.metrics.snapshot()
    reg = svc.registry
    snap["jobs"] = reg.jobs()
    store_stats = reg.embedding_stats()
    pg = svc.playground_embedder.stats
    req = store_stats["requests"] + pg.hits + pg.misses
    miss = store_stats["misses"] + pg.misses
    snap["embedding"] = {"requests": req, "misses": miss, "hit_rate": round((req - miss) / req, 4) if req else None,
                         "store": store_stats,
                         "playground": {"requests": pg.hits + pg.misses, "misses": pg.misses}}
    snap["projects_open"] = len(reg.open_runtimes())
    return snap


@router.get("/metrics", dependencies=AUTH, summary="jobs, embedding cache, search latency, HTTP counts",
            response_model=None,
            responses={200: {"model": Metrics, "description": "JSON, or the Prometheus text format with "
                             "`?format=prometheus`", "content": {"text/plain": {"schema": {"type": "string"}}}}})
def metrics(request: Request, format: Literal["json", "prometheus"] = Query("json")) -> Any:
    snap = snapshot(request)
    if format == "prometheus":
        return PlainTextResponse(prometheus(snap), media_type="text/plain; version=0.0.4")
    return snap

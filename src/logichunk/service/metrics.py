"""In-process metrics: request counts by route and status, latency percentiles (search per mode,
HTTP overall), re-chunk jobs and the embedding cache, as JSON (``GET /api/metrics``) or in the
Prometheus text format (``GET /api/metrics?format=prometheus``).

Latencies keep the last ``window`` observations per series (a bounded ring), so percentiles reflect
recent behaviour and memory stays flat however long the server runs; totals are all-time.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from typing import Any

import numpy as np

__all__ = ["LatencyWindow", "Metrics", "RequestMetrics", "prometheus"]


class LatencyWindow:
    def __init__(self, window: int = 2048) -> None:
        self._ring: deque[float] = deque(maxlen=window)
        self.count = 0
        self.total = 0.0

    def add(self, seconds: float) -> None:
        self._ring.append(seconds)
        self.count += 1
        self.total += seconds

    def summary(self) -> dict[str, float | int]:
        vals = np.fromiter(self._ring, np.float64, len(self._ring))
        out: dict[str, float | int] = {"count": self.count, "seconds_total": round(self.total, 6)}
        if vals.size:
            p50, p95, p99 = np.percentile(vals, [50, 95, 99]) * 1000.0
            out.update(p50_ms=round(float(p50), 3), p95_ms=round(float(p95), 3), p99_ms=round(float(p99), 3),
                       max_ms=round(float(vals.max()) * 1000.0, 3), window=int(vals.size))
        return out


class Metrics:
    """Thread-safe counters; the routes and the job runner report here."""

    def __init__(self, window: int = 2048) -> None:
        self._lock = threading.Lock()
        self._window = window
        self.started = time.time()
        self.requests: Counter[tuple[str, str, int]] = Counter()
        self.http = LatencyWindow(window)
        self.search: dict[str, LatencyWindow] = {}
        self.search_errors: Counter[str] = Counter()
        self.chunk = LatencyWindow(window)  # POST /api/chunk (the playground)
        self.rechunk = LatencyWindow(window)
        self.jobs_completed = 0
        self.jobs_failed = 0

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self.requests[(method, route, status)] += 1
            self.http.add(seconds)

    def observe_search(self, mode: str, seconds: float, ok: bool = True) -> None:
        with self._lock:
            if ok:
                self.search.setdefault(mode, LatencyWindow(self._window)).add(seconds)
            else:
                self.search_errors[mode] += 1

    def observe_chunk(self, seconds: float) -> None:
        with self._lock:
            self.chunk.add(seconds)

    def observe_job(self, ok: bool, seconds: float | None = None) -> None:
        with self._lock:
            if ok:
                self.jobs_completed += 1
                if seconds is not None:
                    self.rechunk.add(seconds)
            else:
                self.jobs_failed += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            by_status: Counter[str] = Counter()
            routes: dict[str, dict[str, int]] = {}
            for (method, route, status), n in self.requests.items():
                by_status[f"{status // 100}xx"] += n
                per = routes.setdefault(f"{method} {route}", {})
                per[str(status)] = per.get(str(status), 0) + n
            return {
                "uptime_seconds": round(time.time() - self.started, 3),
                "http": {"requests_total": sum(self.requests.values()), "by_status": dict(by_status),
                         "latency": self.http.summary(), "routes": routes},
                "search": {"latency": {m: w.summary() for m, w in sorted(self.search.items())},
                           "errors": dict(self.search_errors)},
                "chunk": {"latency": self.chunk.summary()},
                "rechunk": {"completed_total": self.jobs_completed, "failed_total": self.jobs_failed,
                            "latency": self.rechunk.summary()},
            }


class RequestMetrics:
    """ASGI middleware: count every response by method, route template and status, and time it."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        status = 500

        async def send_wrapper(msg: dict[str, Any]) -> None:
            nonlocal status
            if msg["type"] == "http.response.start":
                status = int(msg["status"])
            await send(msg)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None) or ("/static" if scope.get("path", "").startswith("/static/")
                                                     else "<unmatched>")
            self.metrics.observe_request(scope.get("method", "?"), path, status, time.perf_counter() - t0)


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus(snap: dict[str, Any]) -> str:
    """The JSON snapshot (with its ``projects`` and ``embedding`` parts) in Prometheus text format."""
    lines: list[str] = []

    def metric(name: str, kind: str, help_: str, samples: list[tuple[dict[str, str], float]]) -> None:
        lines.append(f"# HELP {name} {help_}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            lab = ",".join(f'{k}="{_esc(str(v))}"' for k, v in labels.items())
            lines.append(f"{name}{{{lab}}} {value}" if lab else f"{name} {value}")

    metric("logichunk_uptime_seconds", "gauge", "Seconds since the service started.", [({}, snap["uptime_seconds"])])
    reqs = []
    for route, statuses in snap["http"]["routes"].items():
        method, _, path = route.partition(" ")
        for status, n in statuses.items():
            reqs.append(({"method": method, "route": path, "status": status}, n))
    metric("logichunk_http_requests_total", "counter", "HTTP responses by method, route and status.", reqs)
    q = []
    for mode, s in snap["search"]["latency"].items():
        for p in ("p50", "p95", "p99"):
            if f"{p}_ms" in s:
                q.append(({"mode": mode, "quantile": {"p50": "0.5", "p95": "0.95", "p99": "0.99"}[p]},
                          s[f"{p}_ms"] / 1000.0))
    metric("logichunk_search_latency_seconds", "summary", "Search latency over the recent window, by mode.", q)
    metric("logichunk_search_total", "counter", "Searches served, by mode.",
           [({"mode": m}, s["count"]) for m, s in snap["search"]["latency"].items()])
    jobs = snap.get("jobs", {})
    metric("logichunk_chunk_jobs", "gauge", "Re-chunk jobs by state right now.",
           [({"state": st}, jobs.get(st, 0)) for st in ("queued", "running", "failed_blocks")])
    metric("logichunk_chunk_jobs_total", "counter", "Re-chunk jobs finished, by outcome.",
           [({"outcome": "completed"}, snap["rechunk"]["completed_total"]),
            ({"outcome": "failed"}, snap["rechunk"]["failed_total"])])
    emb = snap.get("embedding", {})
    metric("logichunk_embedding_requests_total", "counter", "Texts asked of the embedding cache.",
           [({}, emb.get("requests", 0))])
    metric("logichunk_embedding_misses_total", "counter", "Texts the embedder had to compute.",
           [({}, emb.get("misses", 0))])
    metric("logichunk_embedding_cache_hit_ratio", "gauge", "Share of embedding requests served from cache.",
           [({}, emb.get("hit_rate") or 0.0)])
    return "\n".join(lines) + "\n"

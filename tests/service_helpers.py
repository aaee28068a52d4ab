"""Shared pieces of the service tests: settings, sample texts, tree invariants, a real server process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from logichunk.config import Settings

ROOT = Path(__file__).resolve().parents[1]
ZH = (ROOT / "examples" / "zh_public_domain.txt").read_text(encoding="utf-8")
EN = (ROOT / "examples" / "en_public_domain.md").read_text(encoding="utf-8")
KEY = "test-key-0123456789abcdef"
H = {"X-API-Key": KEY}


def small_settings(db: str, **over: Any) -> Settings:
    """Small sizes so the samples give several parents and children; a fast model-free embedder."""
    base = dict(db=db, embedder="hash:128", max_parent_size=300, min_parent_size=60, child_min_size=20,
                child_target_size=60, child_max_size=120, service_max_body_bytes=256 * 1024,
                service_max_chunk_chars=50_000, service_max_query_chars=200, service_max_top_k=20)
    base.update(over)
    return Settings(**base)


def check_document_tree(tree: dict[str, Any]) -> None:
    """Chapters tile the text; parents tile their chapter and children their parent; offsets agree
    with the text; ids are dotted under their parent's id. Fails on any stale chunk."""
    text = tree["text"]
    nodes = tree["chunks"]
    assert not any(n["stale"] for n in nodes), [n["id"] for n in nodes if n["stale"]]
    by_parent: dict[str | None, list[dict[str, Any]]] = {}
    for n in nodes:
        by_parent.setdefault(n["parent"], []).append(n)
    chapters = by_parent.get(None, [])
    assert chapters and chapters[0]["start"] == 0 and chapters[-1]["end"] == len(text)
    for a, b in zip(chapters, chapters[1:], strict=False):
        assert a["end"] == b["start"]
    for n in nodes:
        kids = by_parent.get(n["id"], [])
        if n["kind"] != "child":
            assert kids, f"{n['id']} has no chunks below it"
        if kids:
            assert kids[0]["start"] == n["start"] and kids[-1]["end"] == n["end"], n["id"]
            for a, b in zip(kids, kids[1:], strict=False):
                assert a["end"] == b["start"], (a["id"], b["id"])
            for k in kids:
                assert k["id"].startswith(n["id"] + "."), (n["id"], k["id"])
        assert n["end"] > n["start"]


@contextmanager
def serve(db: str, *extra: str, env: dict[str, str] | None = None, key: str | None = KEY,
          timeout: float = 30.0) -> Iterator[tuple[str, subprocess.Popen, list[str]]]:
    """Run ``logichunk serve`` on a free loopback port; yields (base URL, process, printed lines)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + e.get("PYTHONPATH", "")
    e.pop("LOGICHUNK_API_KEY", None)
    e.pop("LOGICHUNK_SERVICE_KEY", None)
    if key is not None:
        e["LOGICHUNK_SERVICE_KEY"] = key
    e.update(env or {})
    cmd = [sys.executable, "-m", "logichunk.cli", "serve", "--db", db, "--port", "0", "--embedder", "hash:128",
           *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    lines: list[str] = []
    url = None
    deadline = time.monotonic() + timeout
    try:
        while url is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"server did not start: {lines}")
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise AssertionError(f"server exited ({proc.wait()}): {lines} {proc.stderr.read()}")  # type: ignore[union-attr]
            lines.append(line.rstrip("\n"))
            m = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
            if m:
                url = m.group(1)
        # the remaining banner lines (key, open, docs) come right after
        while len(lines) < 4:
            lines.append(proc.stdout.readline().rstrip("\n"))  # type: ignore[union-attr]
        _wait_healthy(url, deadline)
        yield url.rstrip("/"), proc, lines
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(url: str, deadline: float) -> None:
    import httpx

    while True:
        try:
            if httpx.get(url + "api/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("server never became healthy")
        time.sleep(0.05)

"""Chunk a text without storing it (the web page's playground), and read a file's text for it."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool

from ...text.pdf import PAGE_BREAK
from ..playground import analyse
from ..responses import ChunkAnswer, ReadAnswer, SegmentAnswer, answer
from ..schemas import ChunkIn, SegmentIn
from .common import (
    AUTH,
    ENCODING,
    UPLOAD_BODY,
    check_not_blank,
    check_text,
    check_text_size,
    read_upload,
    service,
)

router = APIRouter(prefix="/api", tags=["chunk"], dependencies=AUTH)


def _checked_text(svc: Any, text: str) -> str:
    """The request's text, checked as both routes here check it: encodable, not only whitespace (the library
    would give one chunk over it: the CLI and the MCP tools refuse it), within ``service_max_chunk_chars``."""
    text = check_not_blank(check_text(text, "text"), "text")
    check_text_size(len(text), svc.settings.service_max_chunk_chars, "the text", "service_max_chunk_chars")
    return text


@router.post("/read", summary="a file's text as the server reads it: a PDF's text layer, or UTF-8/16/32 text (nothing stored)",
             response_model=None, responses=answer(ReadAnswer, "the text"), openapi_extra=UPLOAD_BODY)
async def read_file(request: Request,
                    name: str | None = Query(None, max_length=300, description="the file's name (default: the "
                                             "multipart file name)"),
                    encoding: str | None = ENCODING) -> dict[str, Any]:
    svc = service(request)
    up = await read_upload(request, name or "upload", encoding)
    check_text_size(len(up.text), svc.settings.service_max_chunk_chars, "the text", "service_max_chunk_chars")
    return {"text": up.text, "length": len(up.text), "source": up.filename or name or "upload", "pdf": up.pdf,
            "pages": up.text.count(PAGE_BREAK) + 1 if up.pdf else 1, "decoded": up.decoded}


@router.post("/chunk", summary="chunk a text with a method and sizes: tree, cuts, curves, bubbles (nothing stored)",
             response_model=None, responses=answer(ChunkAnswer, "the chunks, cuts, bubbles and curves"))
async def chunk_text(request: Request, body: ChunkIn) -> dict[str, Any]:
    svc = service(request)
    text = _checked_text(svc, body.text)
    t0 = time.perf_counter()
    out = await run_in_threadpool(analyse, body.method, text, tuple(body.sizes) if body.sizes else None, body.unit,
                                  svc.playground_embedder, svc.settings, similarity=body.similarity,
                                  max_points=body.max_points, tokenizer=body.tokenizer)
    svc.metrics.observe_chunk(time.perf_counter() - t0)
    return out


@router.post("/segment", summary="divide a text into topics, no size limit: where the subject changes (nothing stored)",
             response_model=None, responses=answer(SegmentAnswer, "the topics, tiling the text"))
async def segment_text(request: Request, body: SegmentIn) -> dict[str, Any]:
    from ...chunkers.topics import segment

    svc = service(request)
    text = _checked_text(svc, body.text)
    t0 = time.perf_counter()
    tree = await run_in_threadpool(segment, text, units=body.units, topics=body.topics)
    ms = (time.perf_counter() - t0) * 1000
    topics = [{"id": c.id, "start": c.span.start, "end": c.span.end, "size": c.meta["size"],
               "sentences": c.meta["sentences"]} for c in tree.roots()]
    return {"units": body.units, "length": len(text), "topics": topics, "stats": dict(tree.stats),
            "timing_ms": round(ms, 3)}

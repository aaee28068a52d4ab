"""Documents: create (JSON or a file upload), list, read as a chunk tree, plot, replace the text, delete.

Creating is idempotent by content: a text equal to a stored document's current text returns that
document (200, ``existing: true``) instead of storing it twice, unless ``?copy=true``; an
``Idempotency-Key`` header makes a retried request return what the first one stored (see
:mod:`logichunk.service.idempotency`).

A new document is stored at once and chunked in the background (its chapters are queued without
debounce); ``?wait=SECONDS`` holds the answer until chunking finished or the time is up, which is
what scripts want. Chapters start at headings (Markdown ``#``, ``第…章``, ``Chapter N``), blocks at
blank lines (see :mod:`logichunk.store.ingest`).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import numpy as np
from fastapi import APIRouter, Header, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from ...errors import InputError
from ...store import StaleTextError, sha256
from ...store.ingest import ingest_text
from ...store.replace import replace_text
from ...text.decode import check_title, file_title
from ..curves import text_curves
from ..errors import ApiError
from ..idempotency import IdempotencyKeys, fingerprint
from ..jobs import ProjectRuntime
from ..responses import (
    DocumentCreated,
    DocumentCurves,
    DocumentDetail,
    DocumentList,
    DocumentReplaced,
    DocumentTree,
    answer,
)
from ..schemas import DocumentIn, DocumentText
from ..views import block_json, cut_points, document_summary, document_tree, documents_by_id, layout
from .common import (
    AUTH,
    ENCODING,
    UPLOAD_BODY,
    check_query,
    check_text,
    check_text_size,
    read_upload,
    runtime,
    service,
)

router = APIRouter(prefix="/api/projects/{project}/documents", tags=["documents"], dependencies=AUTH)

# (finite: ``?wait=nan`` failed "less than or equal to 120", which it is not about)
WAIT = Query(0.0, ge=0.0, le=120.0, allow_inf_nan=False,
             description="wait up to this many seconds (0 to 120) for chunking to finish")
CREATED = {**answer(DocumentCreated, "stored; chunked in the background (or before the answer, with `?wait=`)", 201),
           **answer(DocumentCreated, "the same text is stored already (or the Idempotency-Key was seen): that "
                    "document, nothing stored", 200)}
COPY = Query(False, description="store a copy even when a document with the same text exists (default: return it)")
KEY = Header(None, alias="Idempotency-Key", description="a retried request with the same key and body returns the "
             "document the first one stored; the same key with another body is a 422")


def _wait_chunked(rt: ProjectRuntime, doc_id: str, seconds: float) -> bool:
    """True once no block of the document is dirty (chunked), False when the time ran out."""
    end = time.monotonic() + seconds
    ids = {b.id for b, *_ in layout(rt.store, doc_id).blocks}
    while True:
        pending = [b for b in rt.store.blocks(dirty=True) if b.id in ids]
        if not pending or all(b.last_error and rt.debouncer.state(b.id)[0] is None for b in pending):
            return not pending
        if time.monotonic() >= end:
            return False
        time.sleep(0.05)


def _stored(rt: ProjectRuntime, title: str, text: str, source: str | None, copy: bool,
            key: str | None) -> tuple[str, bool]:
    """(document id, True when it was stored by this request). The same text as a stored document
    is that document unless ``copy``; a known Idempotency-Key is the document its first request got."""
    fp = fingerprint(title, source, copy, text)
    with rt.create_lock:
        if key is not None:
            known = rt.uploads.get(key, fp)
            if known is not None and any(d == known for d, _t, _s in rt.store.documents()):  # not deleted since
                return known, False
        if not copy and (same := rt.store.documents_with_text(text)):
            doc_id, new = same[0], False
        else:
            doc_id, new = ingest_text(rt.store, title, text, source=source), True
        if key is not None:
            rt.uploads.put(key, fp, doc_id)
    return doc_id, new


def _create(rt: ProjectRuntime, title: str, text: str, source: str | None, wait: float, copy: bool = False,
            key: str | None = None, decoded: str = "") -> JSONResponse:
    doc_id, new = _stored(rt, title, text, source, copy, key)
    if new:
        lay = layout(rt.store, doc_id)
        firsts: dict[str, str] = {}
        for b, *_ in lay.blocks:
            firsts.setdefault(b.chapter_id, b.id)
        rt.schedule(firsts.values(), now=True, bulk=True)  # (an edit meanwhile goes first)
    else:
        title, source = next((t, s) for d, t, s in rt.store.documents() if d == doc_id)
    chunked = _wait_chunked(rt, doc_id, wait) if wait > 0 else None
    body = document_summary(rt, doc_id, title, source)
    body["existing"] = not new
    if decoded:  # (an upload's bytes not read as UTF-8: how they were, said)
        body["decoded"] = decoded
    if chunked is not None:
        body["chunked"] = chunked
    return JSONResponse(body, status_code=201 if new else 200,
                        headers={"Location": f"/api/projects/{quote(rt.name)}/documents/{doc_id}"})


@router.get("", summary="list documents with their chunking status", response_model=None,
            responses=answer(DocumentList, "every document of the project"))
def list_documents(request: Request, project: str) -> dict[str, Any]:
    rt = _rt(request, project)
    return {"documents": [document_summary(rt, d, t, s) for d, t, s in rt.store.documents()]}


@router.post("", status_code=201, summary="add a document from JSON text (the same text again: the stored one)",
             responses=CREATED)
def create_document(request: Request, project: str, body: DocumentIn, wait: float = WAIT, copy: bool = COPY,
                    idempotency_key: str | None = KEY) -> JSONResponse:
    rt = _rt(request, project)
    key = None if idempotency_key is None else IdempotencyKeys.check_key(idempotency_key)
    return _create(rt, _title(body.title), check_text(body.text, "text"),
                   None if body.source is None else check_text(body.source, "source"), wait, copy, key)


@router.post("/upload", status_code=201, summary="add a document from a file (raw body or multipart field 'file'; "
             "a PDF is read as its text layer)", responses=CREATED, openapi_extra=UPLOAD_BODY)
async def upload_document(request: Request, project: str,
                          title: str | None = Query(None, max_length=300, description="default: the file name"),
                          wait: float = WAIT, copy: bool = COPY, idempotency_key: str | None = KEY,
                          encoding: str | None = ENCODING) -> JSONResponse:
    check_query(request)
    rt = await run_in_threadpool(_rt, request, project)
    key = None if idempotency_key is None else IdempotencyKeys.check_key(idempotency_key)
    up = await read_upload(request, title or "upload", encoding)
    title = _title(title or up.title or (file_title(up.filename.rsplit("/", 1)[-1]) if up.filename else "upload"))
    return await run_in_threadpool(_create, rt, title, up.text, up.filename, wait, copy, key, up.decoded)


@router.get("/{doc_id}", summary="a document: chapters and blocks with their re-chunk status", response_model=None,
            responses=answer(DocumentDetail, "the document, its chapters and blocks"))
def get_document(request: Request, project: str, doc_id: str) -> dict[str, Any]:
    rt = _rt(request, project)
    lay = layout(rt.store, doc_id)
    body = document_summary(rt, doc_id, lay.title, lay.source, lay)
    body["chapters"] = [{"id": c, "rank": r, "title": t, "start": s, "end": e} for c, r, t, s, e in lay.chapters]
    body["blocks"] = [block_json(rt, b, s, e, r) for b, s, e, r in lay.blocks]
    body["sha256"] = sha256(lay.text)
    return body


@router.put("/{doc_id}", status_code=202, summary="replace a document's whole text; only what changed is re-chunked",
            responses={**answer(DocumentReplaced, "written; the touched chapters are re-chunked after the debounce "
                                "delay", 202),
                       **answer(DocumentReplaced, "the text was already this (`changed: false`): nothing to do")})
def replace_document(request: Request, project: str, doc_id: str, body: DocumentText,
                     wait: float = WAIT) -> JSONResponse:
    """The text cut as an ingest cuts it and merged into the stored blocks (:func:`~logichunk.store.replace.
    replace_text`): unchanged blocks keep their ids and chunks; the chapters touched are queued as a block PUT's."""
    rt = _rt(request, project)
    text = check_text(body.text, "text")
    if doc_id not in documents_by_id(rt.store):
        raise ApiError(404, "not_found", f"no document {doc_id!r} in this project")
    try:
        r = replace_text(rt.store, doc_id, text, expected_sha256=body.expected_sha256)
    except StaleTextError as e:
        raise ApiError(409, "conflict", str(e), {"current_sha256": e.sha256}) from None
    except InputError as e:
        raise ApiError(422, "invalid_request", str(e)) from None
    for bid in r.removed:
        rt.debouncer.cancel(bid)
    lay = layout(rt.store, doc_id)
    if r.touched:
        firsts: dict[str, str] = {}
        for b, *_ in lay.blocks:
            if b.is_dirty:
                firsts.setdefault(b.chapter_id, b.id)
        rt.schedule(firsts.values())
    chunked = _wait_chunked(rt, doc_id, wait) if wait > 0 else None
    out = document_summary(rt, doc_id, lay.title, lay.source, None if chunked is not None else lay)
    if chunked is not None:
        out["chunked"] = chunked
    out.update(changed=r.touched, blocks_changed=list(r.changed), blocks_added=list(r.added),
               blocks_removed=list(r.removed), sha256=r.sha256)
    return JSONResponse(out, status_code=202 if r.touched else 200)


@router.get("/{doc_id}/tree", summary="the document's text and chunk tree (chapters > parents > children)",
            response_model=None, responses=answer(DocumentTree, "the text and the chunk tree, in document offsets"))
def get_tree(request: Request, project: str, doc_id: str) -> dict[str, Any]:
    rt = _rt(request, project)
    return document_tree(rt, layout(rt.store, doc_id))


@router.get("/{doc_id}/curves", summary="gap-score curves along the document, with its cut points",
            response_model=None, responses=answer(DocumentCurves, "the curves and the cut points"))
def get_curves(request: Request, project: str, doc_id: str,
               similarity: bool = Query(True, description="add the adjacent-sentence similarity (cached embeddings)"),
               max_points: int = Query(4000, ge=100, le=100_000)) -> dict[str, Any]:
    rt = _rt(request, project)
    svc = service(request)
    lay = layout(rt.store, doc_id)
    check_text_size(len(lay.text), svc.settings.service_max_chunk_chars, "the document", "service_max_chunk_chars")
    tree = document_tree(rt, lay)
    cuts = cut_points(tree["chunks"])
    parent_cuts = [c["offset"] for c in cuts if c["level"] <= 2]

    def embed(texts: list[str]) -> np.ndarray:
        return rt.store.embed(texts)  # the store's cache: sentences embedded when the children were cut

    curves = text_curves(lay.text, cuts=parent_cuts, embed=embed if similarity else None,
                         similarity_threshold=svc.settings.similarity_threshold, max_points=max_points)
    return {"document": tree["document"], "cuts": cuts, "curves": curves}


@router.delete("/{doc_id}", status_code=204, summary="delete a document and its chunks")
def delete_document(request: Request, project: str, doc_id: str) -> Response:
    rt = _rt(request, project)
    if doc_id not in documents_by_id(rt.store):
        raise ApiError(404, "not_found", f"no document {doc_id!r} in this project")
    for b, *_ in layout(rt.store, doc_id).blocks:
        rt.debouncer.cancel(b.id)
    rt.store.delete_document(doc_id)
    return Response(status_code=204)


def _title(title: str) -> str:
    """The title as every interface stores it (:func:`~logichunk.text.decode.check_title`: stripped), or a 422."""
    try:
        return check_title(title)
    except InputError as e:
        raise ApiError(422, "invalid_request", str(e)) from None


def _rt(request: Request, name: str) -> ProjectRuntime:
    return runtime(request, name)

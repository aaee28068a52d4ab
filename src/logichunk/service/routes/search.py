"""Search, in every retrieval mode the library has (read from ``config.RETRIEVE_MODES`` at call
time, so modes added by other modules are served without a change here), a hit read back by its ref,
and the bubbles list."""

from __future__ import annotations

import time
from typing import Any, Literal

from fastapi import APIRouter, Query, Request

from ... import config as config_mod
from ...errors import UnknownChoice
from ...integrations import kb
from ...retrieve.kept import retrieve_kept
from ...store import refs
from ..errors import ApiError, error_responses
from ..responses import BubbleList, ChunkByRef, SearchAnswer, answer
from ..schemas import SearchIn
from ..views import documents_by_id, hits_json, jsonable
from .common import AUTH, check_not_blank, check_query, check_text, runtime, service

router = APIRouter(prefix="/api/projects/{project}", tags=["search"], dependencies=AUTH)


def _search(request: Request, project: str, body: SearchIn) -> dict[str, Any]:
    svc = service(request)
    s = svc.settings
    rt = runtime(request, project)
    modes = tuple(config_mod.RETRIEVE_MODES)
    mode = body.mode or s.retrieve_mode
    if mode not in modes:  # (the 422 every value a field does not take gets; modes read at call time)
        raise UnknownChoice("mode", mode, modes)
    query = check_not_blank(check_text(body.query, "query"), "query")
    if len(query) > s.service_max_query_chars:
        raise ApiError(413, "too_large", f"the query is {len(query):,} characters; at most "
                       f"{s.service_max_query_chars:,} (setting service_max_query_chars)")
    top_k = body.top_k or s.top_k
    if top_k > s.service_max_top_k:
        raise ApiError(422, "invalid_request", kb.top_k_refusal(top_k, s.service_max_top_k))
    opts: dict[str, Any] = {}
    if body.size_normalization is not None:
        opts["size_normalization"] = body.size_normalization
    if body.context_window is not None:
        opts["context_window_size"] = body.context_window
    t0 = time.perf_counter()
    ok = False
    try:
        rt.query_vectors.prime(query)  # the model runs outside the lock (cached for retrieve inside it)
        # (the lock: the lazily synced in-memory indexes are one writer at a time)
        res = retrieve_kept(rt.store, query, mode, top_k, body.include, rt.search_lock, **opts)
        hits = hits_json(rt.store, res)
        ok = True
    finally:
        svc.metrics.observe_search(mode, time.perf_counter() - t0, ok)
    notes = [*res.notes, *([svc.registry.embedder_choice] if svc.registry.embedder_choice else [])]  # (never silent)
    out = {"query": query, "mode": mode, "top_k": top_k, "include": body.include, "fallback": res.fallback,
           "notes": notes,
           "took_ms": round((time.perf_counter() - t0) * 1000, 3), "hits": hits}
    if getattr(res, "result", None) is not None:  # graph modes: the walk behind the sentences (as the CLI's, MCP's)
        out["graph"] = jsonable(res.walk())
    return out


@router.post("/search", summary="search the project (parent-child results carry the matched child)",
             response_model=None, responses=answer(SearchAnswer, "hits, best first"))
def search_post(request: Request, project: str, body: SearchIn) -> dict[str, Any]:
    return _search(request, project, body)


@router.get("/search", summary="the same, with query parameters (for curl and links)", response_model=None,
            responses=answer(SearchAnswer, "hits, best first"))
def search_get(request: Request, project: str, q: str = Query(..., min_length=1), mode: str | None = None,
               top_k: int | None = Query(None, ge=1),
               include: Literal["documents", "conversations", "all"] = "all") -> dict[str, Any]:
    check_query(request)
    return _search(request, project, SearchIn(query=q, mode=mode, top_k=top_k, include=include))


@router.get("/chunk", summary="a chunk by its ref (from a search hit), with its parent's, siblings' and children's refs",
            response_model=None, responses={**answer(ChunkByRef, "the chunk the ref names: its text, or the same text "
                                                                 "renumbered by an edit (`moved_from`)"),
                                            **error_responses(400, 404, 409)})
def chunk_by_ref(request: Request, project: str,
                 ref: str = Query(..., min_length=1, max_length=refs.REF_CHARS,
                                  description="`DOCUMENT_ID#DOTTED_ID@TAG` as a hit gives it (`#` sent as `%23`), "
                                              "or untagged `DOCUMENT_ID#DOTTED_ID` for whatever that id holds "
                                              "now")) -> dict[str, Any]:
    """A tagged ref reads the text it was made for or fails: 409 ``ref_changed`` when an edit changed
    that chunk (search again), 404 for an unknown document or an untagged id that names nothing."""
    rt = runtime(request, project)
    try:  # (a malformed ref: 400 bad_input, as every InputError)
        return kb.get_chunk(kb.Project(rt.name, rt.store, rt.search_lock), ref)
    except refs.RefChanged as e:
        raise ApiError(409, "ref_changed", str(e)) from None
    except refs.RefNotFound as e:
        raise ApiError(404, "not_found", str(e)) from None


@router.get("/bubbles", summary="recorded bubbles (forced splits, oversized sentences) of the project or a document",
            response_model=None, responses=answer(BubbleList, "the bubbles"))
def bubbles(request: Request, project: str, document_id: str | None = None) -> dict[str, Any]:
    rt = runtime(request, project)
    store = rt.store
    if document_id is not None:
        if document_id not in documents_by_id(store):
            raise ApiError(404, "not_found", f"no document {document_id!r} in this project")
        chapters = [c for c, _, _ in store.chapters(document_id)]
        items = [(c, b) for c in chapters for b in store.bubbles(c)]
    else:
        items = [(None, b) for b in store.bubbles()]
    return {"bubbles": [jsonable({**b.to_dict(), "chapter_id": c} if c else b.to_dict()) for c, b in items]}

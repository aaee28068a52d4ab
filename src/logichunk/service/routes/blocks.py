"""Blocks: the user-editable parents. ``PUT`` writes at once (the block turns dirty) and queues a
debounced re-chunk of its chapter; ``GET`` shows the status (queued / running / failed / clean).

Concurrent edits to one block are serialised by the store's write transaction: every accepted
edit gets the next revision, the debounced re-chunk runs once after the last one, and the chunks
always match the block's final text. With ``expected_revision`` a client gets optimistic locking:
of several edits made from the same revision exactly one is accepted and the others get 409 with
the current revision, so no edit is overwritten without its author knowing.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ...store import BlockRow, StaleRevisionError, StoreError, StoreUnavailable, block_emptied
from ..errors import ApiError
from ..jobs import ProjectRuntime
from ..responses import Block, BlockEdited, BlockWithText, answer
from ..schemas import BlockEdit
from ..views import block_json
from .common import AUTH, check_text, runtime

router = APIRouter(prefix="/api/projects/{project}/blocks", tags=["blocks"], dependencies=AUTH)


def _block(rt: ProjectRuntime, block_id: str) -> BlockRow:
    """The block, if it belongs to this project (ids are global; the URL's project must own it: the store's
    ``get_block`` reads a block of its own project only — a second check here read the block's whole chapter on
    every edit, 8 ms a keystroke in a chapter of 1,400 blocks)."""
    try:
        return rt.store.get_block(block_id)
    except StoreUnavailable:  # (the database is down: a 503, not "no block")
        raise
    except StoreError:  # (an unknown id, or one of another project)
        raise ApiError(404, "not_found", f"no block {block_id!r} in project {rt.name!r}") from None


@router.get("/{block_id}", summary="a block's text, revision and re-chunk status", response_model=None,
            responses=answer(BlockWithText, "the block with its text"))
def get_block(request: Request, project: str, block_id: str) -> dict[str, Any]:
    rt = runtime(request, project)
    return block_json(rt, _block(rt, block_id), with_text=True)


@router.put("/{block_id}", status_code=202, summary="replace a block's text; re-chunked after the debounce delay",
            responses={**answer(BlockEdited, "written; its chapter is re-chunked after the debounce delay", 202),
                       **answer(BlockEdited, "the text was already this (`changed: false`): nothing to do")})
def edit_block(request: Request, project: str, block_id: str, body: BlockEdit) -> JSONResponse:
    rt = runtime(request, project)
    content = check_text(body.content, "content")
    store = rt.store
    with store.tx():  # the revision is compared where the block's row is held (edit_block): no edit slips between
        _block(rt, block_id)
        try:
            changed = store.edit_block(block_id, content, expected_revision=body.expected_revision)
        except StaleRevisionError as e:
            raise ApiError(409, "conflict", str(e), {"current_revision": e.revision}) from None
        b = store.get_block(block_id)
    if changed:
        rt.schedule([block_id])
    out = block_json(rt, b)
    out["changed"] = changed
    out["emptied"] = block_emptied(changed, content)  # (a paragraph deleted: said, as `logichunk edit` says it)
    return JSONResponse(out, status_code=202 if changed else 200)


@router.post("/{block_id}/rechunk", status_code=202, summary="re-chunk the block's chapter now (a retry)",
             responses=answer(Block, "queued to run now", 202))
def rechunk_block(request: Request, project: str, block_id: str) -> JSONResponse:
    rt = runtime(request, project)
    b = _block(rt, block_id)
    rt.schedule([block_id], now=True)
    return JSONResponse(block_json(rt, b), status_code=202)

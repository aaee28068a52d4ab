"""Every error the API returns is JSON of one shape, ``{"error": {"code", "message", "details"?}}``,
so a client needs one branch for failures; nothing ever answers with an HTML page or a traceback.

``code`` is a stable machine-readable word (``missing_api_key``, ``not_found``, ``too_large``,
``invalid_request``...), ``message`` one sentence a person can act on.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import (
    InputError,
    LogichunkError,
    ModelUnavailable,
    UnknownChoice,
    literal_choices,
    unknown_choice,
)
from ..store import CutSettingsError, StoreError

log = logging.getLogger("logichunk.service")

_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
          409: "conflict", 413: "too_large", 415: "unsupported_media_type", 422: "invalid_request",
          429: "too_many_requests", 500: "internal_error", 503: "unavailable"}


class ErrorDetail(BaseModel):
    code: str
    message: str
    details: Any = None


class ErrorBody(BaseModel):
    """The body of every error answer (documented in the OpenAPI schema, see :func:`error_responses`)."""

    error: ErrorDetail


_WHY = {400: "bad input (not JSON, not UTF-8 text, a malformed ref...)", 401: "missing or wrong API key",
        404: "unknown project, document or block", 409: "stale revision, or the project exists already",
        413: "body, text or query over the service's limits",
        422: "a field is missing or invalid, or has a value it does not take (an unknown mode or method)",
        503: "the database is unavailable"}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for these error codes, with the one error body they all share."""
    return {c: {"model": ErrorBody, "description": _WHY[c]} for c in codes}


class ApiError(StarletteHTTPException):
    """An HTTP error with a stable ``code``. Subclasses Starlette's HTTPException so that FastAPI
    passes it through untouched even when it is raised while the request body is being read."""

    def __init__(self, status: int, code: str, message: str, details: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(status, message, headers)
        self.code = code
        self.details = details


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        err["details"] = details
    return {"error": err}


def error_response(status: int, code: str, message: str, details: Any = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(code, message, details), status_code=status, headers=headers)


_SOURCES = ("body", "query", "path", "header")  # where a field came from: not part of its name


def _loc(loc: Any) -> str:
    """A field's name as the client wrote it: ``sizes.0``, ``wait`` (a URL parameter), ``text``."""
    if not isinstance(loc, list | tuple):
        return str(loc)
    parts = [str(p) for p in (loc[1:] if loc and loc[0] in _SOURCES else loc)]
    return ".".join(parts) or "body"


def _validation(exc: RequestValidationError) -> JSONResponse:
    errs = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errs):
        e = next(e for e in errs if e.get("type") == "json_invalid")
        pos = e.get("loc", ("body", "?"))[-1]
        why = (e.get("ctx") or {}).get("error", "JSON decode error")
        return error_response(400, "invalid_json", f"the request body is not valid JSON ({why} at character {pos})")
    details = [{"field": _loc(e.get("loc", ())), "problem": _problem(e), "type": e.get("type", "")} for e in errs]
    for d, e in zip(details, errs, strict=True):
        if d["type"] == "literal_error" and "expected" in (e.get("ctx") or {}):  # as a route's own refusal says it
            d.update(type="unknown_choice", choices=literal_choices(str(e["ctx"]["expected"])))
    first = details[0] if details else {"field": "body", "problem": "invalid"}
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    problem, field = first["problem"], first["field"]
    said = problem if problem.startswith((f"{field} ", f"unknown {field} ")) else f"{field}: {problem}"
    return error_response(422, "invalid_request", f"{said}{more}", details)


def choice_details(field: str, problem: str, choices: Any) -> list[dict[str, Any]]:
    """The ``details`` of a value a field does not take: the list every other invalid field gets, its entry naming
    the values the field takes (a client reads one shape whether a schema or a route refused it)."""
    return [{"field": field, "problem": problem, "type": "unknown_choice", "choices": list(choices)}]


def _problem(e: Any) -> str:
    """What is wrong with one field, in the words the MCP tools and the CLI use where they say the same: an empty
    text is ``text is empty`` (pydantic: "String should have at least 1 character"), a validator's refusal its
    own sentence (pydantic prefixes "Value error, "), a value a ``Literal`` does not take
    :func:`~logichunk.errors.unknown_choice`'s, anything else pydantic's words with the value given."""
    ctx = e.get("ctx") or {}
    field = _loc(e.get("loc", ()))
    if e.get("type") == "string_too_short" and ctx.get("min_length") == 1:
        return f"{field} is empty"
    if e.get("type") == "value_error" and ctx.get("error") is not None:
        return str(ctx["error"])
    if e.get("type") == "literal_error" and "expected" in ctx:  # as a mode or method the route checks itself
        return unknown_choice(field, e.get("input"), literal_choices(str(ctx["expected"])))
    got = f" (got {e['input']!r:.60})" if "input" in e and e.get("type") != "missing" else ""
    return f"{e.get('msg', '')}{got}"  # (as the MCP tools say it: `?wait=nan` is no "less than 120")


def _not_utf8(body: bytes, e: UnicodeDecodeError) -> JSONResponse:
    """The 400 for a JSON body that is not UTF-8 (the only encoding of JSON, RFC 8259), with its first bad
    byte and that byte's offset in ``body``; the framework said only "There was an error parsing the body"."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as u:
        return error_response(400, "invalid_json", f"the request body is not UTF-8 (byte 0x{body[u.start]:02X} at "
                              f"byte offset {u.start}: {u.reason}); send JSON as UTF-8 text")
    # UTF-8 with NUL bytes, which the framework took for UTF-16/32
    return error_response(400, "invalid_json", f"the request body is not JSON: its NUL bytes made it read as "
                          f"{e.encoding}, invalid at byte offset {e.start}; send JSON as UTF-8 text")


def _body_read(request: Request, e: UnicodeDecodeError) -> bytes:
    """The body the framework failed to decode: as the request kept it (Starlette's cache, ``_body``), else
    the bytes the error holds (the same, less a leading UTF-8 byte-order mark)."""
    kept = getattr(request, "_body", None)
    return kept if isinstance(kept, bytes) else bytes(e.object)


def store_error_status(exc: StoreError) -> tuple[int, str]:
    """An unknown id is the caller's mistake (404); settings other than the project's chunks were cut with,
    the service's configuration's (409); anything else is the database's (503)."""
    if isinstance(exc, CutSettingsError):
        return 409, "settings_conflict"
    return (404, "not_found") if str(exc).startswith("unknown ") else (503, "store_unavailable")


def install(app: FastAPI) -> None:
    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc, ApiError):
            return error_response(exc.status_code, exc.code, str(exc.detail), exc.details, exc.headers)
        if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeDecodeError):
            return _not_utf8(_body_read(request, exc.__cause__), exc.__cause__)
        code = _CODES.get(exc.status_code, "error")
        msg = str(exc.detail)
        if exc.status_code == 404 and msg == "Not Found":
            msg = f"no route {request.method} {request.url.path} (the API is under /api; see /docs)"
        elif exc.status_code == 405:
            msg = f"{request.method} is not allowed on {request.url.path}"
        return error_response(exc.status_code, code, msg, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # a surrogate encoded as UTF-8 bytes (ED A0 80) is no UTF-8, but JSON's reader lets it through
        # ("surrogatepass") and the schema then says "unable to parse raw data": the same 400 as other bad bytes
        kept = getattr(request, "_body", None)
        if isinstance(kept, bytes) and any(e.get("type") == "string_unicode" for e in exc.errors()):
            try:
                kept.decode("utf-8")
            except UnicodeDecodeError as u:
                return _not_utf8(kept, u)
        return _validation(exc)

    @app.exception_handler(UnknownChoice)
    async def _choice(request: Request, exc: UnknownChoice) -> JSONResponse:
        # a field with a value it does not take is an invalid body (422), as a value a schema's Literal refuses
        return error_response(422, "invalid_request", str(exc), choice_details(exc.field, str(exc), exc.choices))

    @app.exception_handler(InputError)
    async def _input(request: Request, exc: InputError) -> JSONResponse:
        return error_response(400, "bad_input", str(exc))

    @app.exception_handler(StoreError)
    async def _store(request: Request, exc: StoreError) -> JSONResponse:
        status, code = store_error_status(exc)
        if status >= 500:
            log.error("store error on %s %s: %s", request.method, request.url.path, exc)
        return error_response(status, code, str(exc))

    @app.exception_handler(ModelUnavailable)
    async def _model(request: Request, exc: ModelUnavailable) -> JSONResponse:
        return error_response(503, "model_unavailable", str(exc))

    @app.exception_handler(LogichunkError)
    async def _lc(request: Request, exc: LogichunkError) -> JSONResponse:
        return error_response(400, "bad_input", str(exc))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal_error", f"internal error ({type(exc).__name__}); see the server log")

"""Small helpers the route modules share: the service object, a project's runtime, limits."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl

from fastapi import Depends, Query, Request
from fastapi.concurrency import run_in_threadpool

from ...errors import InputError
from ...text.decode import Undecoded, check_encoding, check_storable, empty_input, read_text
from ...text.decode import check_not_blank as check_not_blank_text
from ...text.pdf import is_pdf
from ..auth import require_key
from ..errors import ApiError
from ..jobs import ProjectRuntime
from ..state import Service

AUTH = [Depends(require_key)]


def service(request: Request) -> Service:
    return request.app.state.service


def runtime(request: Request, project: str) -> ProjectRuntime:
    return service(request).registry.get(project)


def check_text_size(n: int, limit: int, what: str, setting: str) -> None:
    if n > limit:
        raise ApiError(413, "too_large", f"{what} is {n:,} characters; this server takes at most {limit:,} "
                       f"(setting {setting})", {"limit_chars": limit})


def check_text(text: str, what: str) -> str:
    """Text from JSON may carry unpaired surrogates (``"\\ud800"``) or NUL characters, which no store can hold:
    a 422, as for any body the schema refuses, in the MCP tools' words, which refuse the same texts
    (:func:`~logichunk.text.decode.check_storable`: a NUL stored a document on SQLite and failed on PostgreSQL;
    in a text only chunked or a query, the CLI refuses it as binary)."""
    try:
        return check_storable(text, what)
    except InputError as e:
        raise ApiError(422, "invalid_request", str(e)) from None


def check_not_blank(text: str, what: str) -> str:
    """A text that is empty or only whitespace (nothing to chunk, store or search): a 422, ``{what} is only
    whitespace``, as the MCP tools and the CLI say it (:func:`~logichunk.text.decode.check_not_blank`)."""
    try:
        return check_not_blank_text(text, what)
    except InputError as e:
        raise ApiError(422, "invalid_request", str(e)) from None


def check_query(request: Request) -> None:
    """A URL's parameters that are no UTF-8 (an encoded lone surrogate ``%ED%A0%80``, ``%FF``): a 422, as the
    same text in a JSON body gets; the framework had decoded them with U+FFFD in their place, stored as such."""
    raw = request.scope.get("query_string", b"").decode("latin-1")
    try:
        parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise ApiError(422, "invalid_request", "a URL parameter is not UTF-8 (percent-encode the text's UTF-8 "
                       "bytes; an unpaired surrogate is no text)") from None


#: the OpenAPI body of a file upload: the raw bytes, or a multipart field ``file``
UPLOAD_BODY = {"requestBody": {"content": {
    "text/plain": {"schema": {"type": "string"}},
    "application/pdf": {"schema": {"type": "string", "format": "binary"}},
    "multipart/form-data": {"schema": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}}}}}


@dataclass(frozen=True)
class Upload:
    """An uploaded file, read: its text, the multipart file name and title field (None when absent),
    whether it was a PDF, and how its bytes were read when not as UTF-8 (``gb18030``, ``utf-16-le``, the
    encoding named: :func:`~logichunk.text.decode.read_blocks`' words; '' for UTF-8)."""

    text: str
    filename: str | None
    title: str | None
    pdf: bool
    decoded: str = ""


#: the ``encoding`` URL parameter of an upload
ENCODING = Query(None, max_length=64, description="the codec the file's bytes are read with (any Python codec: gbk, "
                 "gb18030, big5, shift_jis, cp1252...; a byte it cannot read is a 400). Default: UTF-8, UTF-16/32 with "
                 "a byte-order mark, GB18030 when the bytes are not UTF-8 and read as Chinese (said in `decoded`)")


async def read_upload(request: Request, fallback_name: str, encoding: str | None = None) -> Upload:
    """An uploaded file's text: the raw body or a multipart field ``file``, decoded once by
    :func:`~logichunk.text.decode.read_text` (a PDF's text layer; UTF-8, or UTF-16/32 with a mark; gzip,
    bzip2 or xz holding no more bytes than a plain upload may) in a worker thread (a long PDF takes
    seconds; ``encoding``: a codec named instead). An empty upload, a missing field, an unknown encoding and
    undecodable bytes are one-line 4xx answers (an encoding Python has no codec for is a value the parameter does
    not take: a 422, said before the upload is read; bytes it cannot decode, a 400)."""
    try:
        check_encoding(encoding)
    except InputError as e:
        raise ApiError(422, "invalid_request", str(e)) from None
    ctype = request.headers.get("content-type", "")
    filename, title = None, None
    if ctype.startswith("multipart/form-data"):
        try:
            form = await request.form(max_files=1, max_fields=10)
        except AssertionError as e:  # python-multipart missing
            raise ApiError(415, "unsupported_media_type", f"multipart uploads need python-multipart ({e}); "
                           "send the file as the raw body instead") from None
        f = form.get("file")
        if f is None or isinstance(f, str):
            raise ApiError(422, "invalid_request", "multipart upload: put the file in a field named 'file'")
        filename = f.filename
        data = await f.read()
        title = form.get("title") if isinstance(form.get("title"), str) else None
    else:
        data = await request.body()
    name = filename or fallback_name
    if not data:  # (the words of a blank one below, and of the CLI's for a file: the name, then why)
        raise ApiError(422, "invalid_request", f"{name}: {empty_input('')}")
    # binary, invalid UTF-8, a scan -> a clear 400; a compressed upload holds no more than a plain one may
    limit = service(request).settings.service_max_body_bytes
    how: list[str] = []
    try:
        text = await run_in_threadpool(lambda: read_text(data, source=name, max_unpacked=limit, encoding=encoding,
                                                         on_decoding=how.append))
    except Undecoded as e:  # (said with this service's way of naming an encoding, not the CLI's flag)
        raise e.said_by("service") from None
    if empty_input(text):  # (the CLI's words for a file: `logichunk chunk` and `ingest` refuse it so)
        raise ApiError(422, "invalid_request", f"{name}: {empty_input(text)}")
    return Upload(text, filename, title, is_pdf(data), "".join(how))

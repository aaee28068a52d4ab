"""Small helpers the route modules share: the service object, a project's runtime, limits."""

from __future__ import annotations

from fastapi import Depends, Request

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
    """Text from JSON may carry unpaired surrogates (``"\\ud800"``), which no store can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ApiError(422, "invalid_request", f"{what} holds an unpaired surrogate at character {e.start}; "
                       "send valid Unicode") from None
    return text

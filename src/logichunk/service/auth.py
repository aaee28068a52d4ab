"""API-key authentication: every ``/api`` route but ``/api/health`` needs the key.

The key travels as ``X-API-Key: <key>`` or ``Authorization: Bearer <key>`` and is compared in
constant time. The web page and its static files are public (they hold no data); the page asks for
the key, or takes it from the URL fragment ``#key=...`` that ``logichunk serve`` prints (a fragment
never reaches the server or its logs).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from typing import Annotated

from fastapi import Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from .errors import ApiError

API_KEY_HEADER = "X-API-Key"
ENV_VAR = "LOGICHUNK_SERVICE_KEY"
# the key logichunk sends to OpenAI-compatible model endpoints; accepted for the service only when
# ENV_VAR is unset, with a note, because one secret would then serve two purposes
SHARED_ENV_VAR = "LOGICHUNK_API_KEY"
MIN_KEY_LENGTH = 16

_header = APIKeyHeader(name=API_KEY_HEADER, auto_error=False, description="the key `logichunk serve` printed")
_bearer = HTTPBearer(auto_error=False, description="the same key as a bearer token")


def new_key() -> str:
    return secrets.token_urlsafe(24)


def check_key(key: str, source: str = ENV_VAR) -> str:
    """A usable configured key, or a clear error (a short key is guessable)."""
    key = key.strip()
    if len(key) < MIN_KEY_LENGTH:
        from ..errors import InputError

        raise InputError(f"the API key must be at least {MIN_KEY_LENGTH} characters (${source} is too short)")
    return key


def key_from_env(environ: Mapping[str, str]) -> tuple[str | None, str, str]:
    """``(key or None, the variable it came from, a note)``: ``$LOGICHUNK_SERVICE_KEY``, else
    ``$LOGICHUNK_API_KEY`` with a note saying why a separate key is better."""
    if environ.get(ENV_VAR):
        return check_key(environ[ENV_VAR], ENV_VAR), ENV_VAR, ""
    if environ.get(SHARED_ENV_VAR):
        note = (f"note: the service key comes from ${SHARED_ENV_VAR}, which logichunk also sends to model "
                f"endpoints; set ${ENV_VAR} to keep the two apart")
        return check_key(environ[SHARED_ENV_VAR], SHARED_ENV_VAR), SHARED_ENV_VAR, note
    return None, "", ""


def require_key(request: Request, key: Annotated[str | None, Security(_header)] = None,
                bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None) -> None:
    """FastAPI dependency: 401 unless the request carries the service's key."""
    expected: str = request.app.state.service.api_key
    given = key or (bearer.credentials if bearer is not None else None)
    challenge = {"WWW-Authenticate": f'Bearer realm="logichunk", header="{API_KEY_HEADER}"'}
    if not given:
        raise ApiError(401, "missing_api_key", f"this route needs the API key: send '{API_KEY_HEADER}: <key>' "
                       "or 'Authorization: Bearer <key>' (logichunk serve printed the key)", headers=challenge)
    if not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8")):
        raise ApiError(401, "invalid_api_key", "the API key is not valid for this server", headers=challenge)

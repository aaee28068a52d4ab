"""The body limit as an ASGI middleware, driven message by message: how much of a refused body it reads
before it answers (the wire itself: test_service_live.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service tests need the [service] extra")

from logichunk.service.errors import ApiError  # noqa: E402
from logichunk.service.limits import BodyLimit, drain_cap  # noqa: E402

LIMIT = 1000
PIECE = 500


class Client:
    """A request of ``pieces`` body messages of PIECE bytes; counts what the server read and keeps its answer."""

    def __init__(self, pieces: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.left = pieces
        self.read = 0
        self.scope = {"type": "http", "method": "POST", "path": "/api/x", "headers": headers}
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if self.left == 0:
            return {"type": "http.disconnect"}
        self.left -= 1
        self.read += PIECE
        return {"type": "http.request", "body": b"x" * PIECE, "more_body": self.left > 0}

    async def send(self, msg: dict[str, Any]) -> None:
        self.sent.append(msg)

    def answer(self) -> tuple[int, dict[bytes, bytes]]:
        return self.sent[0]["status"], dict(self.sent[0]["headers"])


async def _reads_all(scope: Any, receive: Any, send: Any) -> None:
    """The application: reads the whole body, as a route does."""
    while (await receive()).get("more_body"):
        pass


def _run(client: Client) -> None:
    asyncio.run(BodyLimit(_reads_all, LIMIT)(client.scope, client.receive, client.send))


def _declared(n: int, *extra: tuple[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    return [(b"content-length", str(n).encode()), *extra]


def test_the_cap_is_four_times_the_limit_at_least_16_mib() -> None:
    assert drain_cap(LIMIT) == 16 * 1024 * 1024
    assert drain_cap(16 * 1024 * 1024) == 64 * 1024 * 1024


def test_a_declared_body_over_the_limit_is_read_before_the_413() -> None:
    """Answered before a byte was read, the client still sending read a reset instead of the 413."""
    c = Client(40, _declared(40 * PIECE))
    _run(c)
    assert c.read == 40 * PIECE and c.left == 0
    status, headers = c.answer()
    assert status == 413 and headers[b"connection"] == b"close"


def test_a_body_beyond_the_cap_or_awaiting_100_continue_is_answered_unread() -> None:
    """A part read would not spare the reset; a client waiting for 100 Continue has sent nothing and the 413
    tells it not to (reading would make the server ask it for the body)."""
    for headers in (_declared(drain_cap(LIMIT) + 1), _declared(40 * PIECE, (b"expect", b"100-continue"))):
        c = Client(40, headers)
        _run(c)
        assert c.read == 0 and c.answer()[0] == 413


def test_a_streamed_body_over_the_limit_is_read_to_its_end_then_refused() -> None:
    c = Client(40, [])
    with pytest.raises(ApiError) as e:  # the app's error handler answers it
        _run(c)
    assert e.value.status_code == 413 and e.value.headers == {"Connection": "close"}
    assert c.read == 40 * PIECE and c.left == 0


def test_a_streamed_body_is_read_no_further_than_the_cap() -> None:
    pieces = drain_cap(LIMIT) // PIECE + 100
    c = Client(pieces, [])
    with pytest.raises(ApiError):
        _run(c)
    assert drain_cap(LIMIT) < c.read <= drain_cap(LIMIT) + PIECE and c.left > 0


class Stalled(Client):
    """A client that sends a few pieces of its body, then nothing more, without leaving."""

    async def receive(self) -> dict[str, Any]:
        if self.read >= 4 * PIECE:
            await asyncio.Event().wait()  # (never set)
        return await super().receive()


@pytest.mark.parametrize("headers", [_declared(40 * PIECE), []], ids=["declared", "streamed"])
def test_a_stalled_body_is_read_no_longer_than_the_drain_time(monkeypatch: pytest.MonkeyPatch,
                                                                headers: list[tuple[bytes, bytes]]) -> None:
    """A client that stops sending mid-body must not hold the connection for ever: the 413 goes out when the
    drain time is up (before, the drain awaited the next piece for good)."""
    import logichunk.service.limits as limits

    monkeypatch.setattr(limits, "DRAIN_SECONDS", 0.05)
    c = Stalled(40, headers)

    async def go() -> None:
        await asyncio.wait_for(BodyLimit(_reads_all, LIMIT)(c.scope, c.receive, c.send), 20)

    if headers:
        asyncio.run(go())
        assert c.answer()[0] == 413
    else:
        with pytest.raises(ApiError) as e:
            asyncio.run(go())
        assert e.value.status_code == 413
    assert c.read == 4 * PIECE and c.left > 0

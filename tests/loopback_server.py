"""A real HTTP server on 127.0.0.1 that speaks the OpenAI-compatible protocol, with scripted answers.

Tests of HTTP model clients run against it instead of mocking the client: real sockets, real
timeouts, real status codes. It serves

* ``POST /v1/embeddings``       — deterministic vectors (``embed_fn``, default: hashed character bigrams);
* ``POST /v1/chat/completions`` — answers from ``chat`` (a list consumed in order, or a function of the
  request body); usage counts whitespace/CJK tokens;
* ``POST /v1/completions``      — text completion with ``logprobs`` / ``echo`` (legacy format: tokens,
  token_logprobs, top_logprobs, text_offset), the way vLLM and llama.cpp return prompt log-probs;
* ``GET  /v1/models``.

Faults are queued per path and consumed before normal answers: ``fail(path, 500, times=2)``,
``slow(path, seconds)``, ``malformed(path)``, ``drop(path)`` (close without answering) or any
:class:`Reply`. Every request is recorded in ``requests``.

Use it as a context manager, or through the ``loopback`` pytest fixture::

    pytest_plugins = ["loopback_server"]        # in a test module or conftest.py

    def test_x(loopback):
        loopback.chat = ["hello"]
        llm = OpenAIChatLLM(loopback.base_url, "m")

(PYTEST_DONT_REWRITE: imported by test modules before pytest loads it as a plugin.)
"""

from __future__ import annotations

import base64
import json
import re
import struct
import threading
import zlib
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer", "RecordedRequest", "Reply", "loopback", "tokenize"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``body`` (raw bytes) wins over ``json``; ``delay`` seconds pass before
    anything is sent (longer than the client's timeout = a timeout); ``drop`` closes the connection
    without an answer."""

    status: int = 200
    json: Any = None
    body: bytes | None = None
    delay: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)
    drop: bool = False


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    body: Any  # decoded JSON, or the raw bytes if the body was not JSON


_TOKEN_RX = re.compile(r"\s*(?:[A-Za-z0-9_]+|[^\sA-Za-z0-9_])|\s+$")


def tokenize(text: str) -> list[str]:
    """Deterministic toy tokenizer whose tokens concatenate back to ``text`` exactly: a word or a
    single other character, each with the whitespace before it; trailing whitespace is one token."""
    toks = _TOKEN_RX.findall(text)
    if "".join(toks) != text:
        raise ValueError(f"tokenize lost text: {text!r}")
    return toks


def _hash_embed(text: str, dim: int) -> list[float]:
    vec = [0.0] * dim
    chars = f"^{text.lower()}$"
    for a, b in zip(chars, chars[1:], strict=False):
        h = zlib.crc32((a + b).encode("utf-8"))
        vec[h % dim] += 1.0 if (h >> 16) & 1 else -1.0
    return vec


def _default_logprob(token: str) -> float:
    """A stable pseudo log-probability in [-6, -0.05] for a token."""
    return -0.05 - (zlib.crc32(token.encode("utf-8")) % 1000) / 1000 * 5.95


class LoopbackServer:
    """See the module docstring. ``base_url`` is ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, *, dim: int = 16, api_key: str | None = None, model: str = "loopback-model") -> None:
        self.dim = dim
        self.api_key = api_key  # when set, requests without "Authorization: Bearer <key>" get a 401
        self.model = model
        self.chat: list[str] | Callable[[dict[str, Any]], str] = lambda body: "echo: " + _last_user(body)
        self.embed_fn: Callable[[str], list[float]] = lambda text: _hash_embed(text, self.dim)
        self.logprob_fn: Callable[[str], float] = _default_logprob
        self.completion_fn: Callable[[str, dict[str, Any]], str] = lambda prompt, body: " ok"
        self.requests: list[RecordedRequest] = []
        self._queues: dict[str, deque[Reply]] = defaultdict(deque)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> LoopbackServer:
        handler = type("Handler", (_Handler,), {"server_ref": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="loopback-openai", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # wakes handlers sleeping in a scripted delay
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting --------------------------------------------------------------------------------

    @staticmethod
    def _norm(path: str) -> str:
        path = "/" + path.strip("/")
        return path if path.startswith("/v1/") else "/v1" + path

    def enqueue(self, path: str, *replies: Reply) -> None:
        """Queue replies for ``path`` (``"chat/completions"`` or ``"/v1/chat/completions"``)."""
        with self._lock:
            self._queues[self._norm(path)].extend(replies)

    def fail(self, path: str, status: int = 500, *, times: int = 1, message: str = "scripted failure",
             headers: Mapping[str, str] | None = None) -> None:
        self.enqueue(path, *[Reply(status=status, json={"error": {"message": message, "code": status}},
                                   headers=dict(headers or {}))] * times)

    def slow(self, path: str, delay: float, *, times: int = 1) -> None:
        """The next ``times`` requests wait ``delay`` seconds and then get their normal answer."""
        self.enqueue(path, *[Reply(delay=delay, json=_NORMAL)] * times)

    def malformed(self, path: str, *, times: int = 1, body: bytes = b'{"choices": [{"message": ') -> None:
        self.enqueue(path, *[Reply(body=body)] * times)

    def drop(self, path: str, *, times: int = 1) -> None:
        self.enqueue(path, *[Reply(drop=True)] * times)

    def count(self, path: str) -> int:
        """How many requests reached ``path``."""
        p = self._norm(path)
        with self._lock:
            return sum(1 for r in self.requests if r.path == p)

    def _next(self, path: str) -> Reply | None:
        with self._lock:
            q = self._queues.get(path)
            return q.popleft() if q else None

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    # -- default answers --------------------------------------------------------------------------

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if method == "GET" and path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]}
        if method != "POST":
            return 405, {"error": {"message": f"{method} not allowed"}}
        if not isinstance(body, dict):
            return 400, {"error": {"message": "body must be a JSON object"}}
        if path == "/v1/embeddings":
            return self._embeddings(body)
        if path == "/v1/chat/completions":
            return self._chat(body)
        if path == "/v1/completions":
            return self._completions(body)
        return 404, {"error": {"message": f"no route {path}"}}

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, Any]:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            return 400, {"error": {"message": "input must be a string or a list of strings"}}
        data = []
        for i, text in enumerate(inputs):
            vec = self.embed_fn(text)
            if body.get("encoding_format") == "base64":
                emb: Any = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii")
            else:
                emb = vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        n_tok = sum(len(tokenize(t)) for t in inputs)
        return 200, {"object": "list", "data": data, "model": body.get("model", self.model),
                     "usage": {"prompt_tokens": n_tok, "total_tokens": n_tok}}

    def _chat(self, body: dict[str, Any]) -> tuple[int, Any]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, {"error": {"message": "messages must be a non-empty list"}}
        with self._lock:
            if callable(self.chat):
                text = None
            elif self.chat:
                text = self.chat.pop(0)
            else:
                return 500, {"error": {"message": "loopback: no scripted chat answer left"}}
        if text is None:
            text = str(self.chat(body))  # type: ignore[operator]
        finish = "stop"
        for stop in body.get("stop") or []:
            if stop in text:
                text, finish = text[: text.index(stop)], "stop"
        prompt_tokens = sum(len(tokenize(str(m.get("content", "")))) for m in messages)
        completion_tokens = len(tokenize(text))
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }

    def _completions(self, body: dict[str, Any]) -> tuple[int, Any]:
        prompts = body.get("prompt")
        if isinstance(prompts, str):
            prompts = [prompts]
        if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
            return 400, {"error": {"message": "prompt must be a string or a list of strings"}}
        max_tokens = int(body.get("max_tokens", 16) or 0)
        echo = bool(body.get("echo", False))
        top = body.get("logprobs")
        choices, p_tok, c_tok = [], 0, 0
        for i, prompt in enumerate(prompts):
            gen = self.completion_fn(prompt, body) if max_tokens > 0 else ""
            gen_toks = tokenize(gen)[:max_tokens] if gen else []
            gen = "".join(gen_toks)
            p_toks = tokenize(prompt)
            p_tok += len(p_toks)
            c_tok += len(gen_toks)
            toks = (p_toks if echo else []) + gen_toks
            choice: dict[str, Any] = {"index": i, "text": (prompt if echo else "") + gen,
                                      "finish_reason": "length" if max_tokens and gen_toks else "stop"}
            if top is not None:
                lps: list[float | None] = [self.logprob_fn(t) for t in toks]
                if echo and lps:
                    lps[0] = None  # the first prompt token has no context, as in OpenAI/vLLM
                offsets, pos = [], 0
                for t in toks:
                    offsets.append(pos)
                    pos += len(t)
                choice["logprobs"] = {
                    "tokens": toks, "token_logprobs": lps, "text_offset": offsets,
                    "top_logprobs": [None if lp is None else {t: lp} for t, lp in zip(toks, lps, strict=True)]
                    if int(top) > 0 else None,
                }
            choices.append(choice)
        return 200, {"id": f"cmpl-{len(self.requests)}", "object": "text_completion", "created": 0,
                     "model": body.get("model", self.model), "choices": choices,
                     "usage": {"prompt_tokens": p_tok, "completion_tokens": c_tok, "total_tokens": p_tok + c_tok}}


_NORMAL = object()  # marker: a scripted Reply whose body is the normal answer


def _last_user(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if isinstance(m, dict) and m.get("role") == "user":
            return str(m.get("content", ""))
    return ""


class _Handler(BaseHTTPRequestHandler):
    server_ref: LoopbackServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def _serve(self, method: str) -> None:
        srv = self.server_ref
        path = self.path.split("?", 1)[0]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if method == "POST" else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except (ValueError, UnicodeDecodeError):
            body = raw
        srv._record(RecordedRequest(method, path, dict(self.headers.items()), body))
        reply = srv._next(path)
        if reply is not None and reply.delay > 0 and srv._closing.wait(reply.delay):
            return
        if reply is not None and reply.drop:
            self.close_connection = True
            return
        if srv.api_key is not None and self.headers.get("Authorization") != f"Bearer {srv.api_key}":
            status, payload, raw_out, headers = 401, {"error": {"message": "invalid api key"}}, None, {}
        elif reply is None or reply.json is _NORMAL:
            status, payload = srv.answer(method, path, body)
            raw_out, headers = None, dict(reply.headers) if reply else {}
        else:
            status, payload, raw_out, headers = reply.status, reply.json, reply.body, dict(reply.headers)
        data = raw_out if raw_out is not None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): fine
            self.close_connection = True


try:
    import pytest
except ImportError:  # usable without pytest, e.g. from a benchmark script
    pass
else:

    @pytest.fixture
    def loopback():
        """A started :class:`LoopbackServer`, closed after the test."""
        with LoopbackServer() as srv:
            yield srv

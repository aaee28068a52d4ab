"""/api/chunk with a tokenizer (issue 20): exact tokens, and no file or hub id of the client's."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the service tests need the [service] extra (fastapi, httpx)")
pytest.importorskip("tiktoken")
from fastapi.testclient import TestClient  # noqa: E402

from logichunk.service.app import create_app  # noqa: E402
from logichunk.text.tokens import resolve_tokenizer  # noqa: E402
from service_helpers import EN, KEY, H, small_settings  # noqa: E402


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = create_app(small_settings(str(tmp_path_factory.mktemp("svc") / "api.db")), api_key=KEY, debounce_ms=150)
    with TestClient(app) as c:
        yield c


def test_chunk_in_cl100k_tokens(client):
    enc = resolve_tokenizer("cl100k_base").tokenizer
    j = client.post("/api/chunk", headers=H, json={"text": EN, "method": "fixed", "sizes": [64],
                                                   "tokenizer": "cl100k_base"}).json()
    assert j["unit"] == "tokens"
    assert "".join(EN[c["start"]:c["end"]] for c in j["chunks"]) == EN
    for c in j["chunks"]:
        assert c["size"] == len(enc.encode_ordinary(EN[c["start"]:c["end"]])) <= 64


def test_client_cannot_name_server_files(client, tmp_path):
    for bad in (str(tmp_path), "/etc/passwd", "org/some-model"):
        r = client.post("/api/chunk", headers=H, json={"text": "x y z", "tokenizer": bad})
        assert r.status_code == 422 and r.json()["error"]["message"].startswith("unknown tokenizer '")
        assert r.json()["error"]["message"].endswith(": use one of cl100k_base, o200k_base, embedder")

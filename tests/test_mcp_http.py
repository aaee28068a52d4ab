"""The MCP server mounted in ``logichunk serve`` at ``/mcp`` (streamable HTTP), driven by the ``mcp``
SDK's own client: the same tools behind the service's API key (401 without it or with a wrong
one), over the service's stores (what MCP adds, ``/api`` sees), memory across a service restart."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")
pytest.importorskip("fastapi")

import httpx2  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from mcp_helpers import TOOLS, TURNS, call, refused  # noqa: E402
from service_helpers import EN, KEY, ZH, serve  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


async def _session(url: str, headers: dict[str, str], fn: Any) -> Any:
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
            streamable_http_client(url + "/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as s:
        await s.initialize()
        return await fn(s)


def test_http_mcp_behind_the_api_key(tmp_path):
    db = str(tmp_path / "kb.db")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "tea.md").write_text("# Tea\n\nGreen tea is steamed or pan-fired soon after picking.\n", encoding="utf-8")
    with serve(db, "--mcp-allow", str(notes)) as (url, proc, _lines):
        assert proc.stdout.readline().startswith(f"mcp:     {url}/mcp ")  # the banner names the endpoint
        # without the key, with a wrong one: 401 before any MCP message is read
        for headers, code in (({}, "missing_api_key"), ({"X-API-Key": "wrong-key-0123456789"}, "invalid_api_key"),
                              ({"Authorization": "Bearer nope-nope-nope-nope"}, "invalid_api_key")):
            r = httpx.post(url + "/mcp", json=INIT, headers={"Accept": "application/json, text/event-stream", **headers})
            assert r.status_code == 401 and r.json()["error"]["code"] == code, r.text
            assert "bearer" in r.headers["www-authenticate"].lower()
        with pytest.raises(Exception):  # noqa: B017,PT011 - the SDK's client cannot even initialize without it
            anyio.run(_session, url, {}, lambda s: s.list_tools())

        async def work(s: ClientSession) -> dict[str, Any]:
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            zh = await call(s, "add_document", title="桃花源记", text=ZH)
            en = await call(s, "add_document", title="three texts", text=EN)
            hit = (await call(s, "search", query="渔人沿着溪水进入桃花林", top_k=1))["hits"][0]
            assert hit["document_id"] == zh["id"]
            hit = (await call(s, "search", query="consent of the governed", top_k=1))["hits"][0]
            assert hit["document_id"] == en["id"]
            tea = await call(s, "add_file", path="tea.md")
            assert tea["source"] == str((notes / "tea.md").resolve())
            assert "outside the folders" in await refused(s, "add_file", path="/etc/passwd")
            msg = await refused(s, "search", query="q" * 1_000_000)
            assert "1,000,000 characters" in msg
            for u, a in TURNS[:4]:
                await call(s, "remember", conversation_id="web-1", user=u, assistant=a)
            return {"zh": zh["id"], "en": en["id"]}

        ids = anyio.run(_session, url, {"X-API-Key": KEY}, work)
        # the service's own API sees what MCP added: one set of stores
        listed = httpx.get(url + "/api/projects/default/documents", headers={"X-API-Key": KEY}).json()
        titles = {d["id"]: d["title"] for d in listed["documents"]}
        assert titles[ids["zh"]] == "桃花源记" and titles[ids["en"]] == "three texts" and "tea" in titles.values()

    with serve(db) as (url, _proc, _lines):  # a restart (no --mcp-allow now: add_file is off) of the service: the conversation goes on

        async def more(s: ClientSession) -> dict[str, Any]:
            for u, a in TURNS[4:]:
                d = await call(s, "remember", conversation_id="web-1", user=u, assistant=a)
            assert d["turn"] == 5
            assert "--mcp-allow DIR" in await refused(s, "add_file", path="tea.md")
            ended = await call(s, "end_conversation", conversation_id="web-1")
            assert [[e["start"], e["end"]] for e in ended["archived"]] == [[0, 2], [3, 5]]
            return await call(s, "recall", query="饺子要点几次凉水", top_k=1)

        res = anyio.run(_session, url, {"Authorization": f"Bearer {KEY}"}, more)
        assert [(e["user"], e["assistant"]) for e in res["episodes"][0]["exchanges"]] == TURNS[3:]


def test_a_lone_surrogate_is_refused_as_on_stdio(tmp_path):
    """The SDK's parser answered "Parse error: unexpected end of hex escape at line 1 column 128" (no id):
    now the same error stdio gives, naming the surrogate, for the request's id; the session goes on."""
    headers = {"X-API-Key": KEY, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    call_7 = ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember","arguments":'
              '{"conversation_id":"s","user":"bad \\ud800 surrogate text"}}}')
    with serve(str(tmp_path / "kb.db")) as (url, _proc, _lines), httpx.Client(base_url=url, headers=headers) as c:
        r = c.post("/mcp", json=INIT)
        assert r.status_code == 200, r.text
        session = {"mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": INIT["params"]["protocolVersion"]}
        assert c.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session).status_code == 202
        r = c.post("/mcp", content=call_7.encode(), headers=session)
        assert r.status_code == 400 and r.headers["content-type"].startswith("application/json"), r.text
        err = r.json()
        assert err["id"] == 7 and err["error"]["code"] == -32700, err
        assert "unpaired surrogate" in err["error"]["message"] and "\\ud800" in err["error"]["message"], err
        # without the key: still 401 first; a pair (an emoji, as json.dumps escapes it) is text, and the session goes on
        assert httpx.post(url + "/mcp", content=call_7.encode(), headers={**headers, "X-API-Key": ""}).status_code == 401
        # bytes that are no UTF-8: the parse error stdio gives, with the id (the SDK said "invalid unicode code
        # point at line 1 column 93", id null)
        r = c.post("/mcp", content=call_7.replace("bad \\ud800 surrogate", "bad \xff byte").encode("latin-1"),
                   headers=session)
        assert r.status_code == 400 and r.json()["id"] == 7, r.text
        assert r.json()["error"]["message"].startswith("Parse error: the message is not UTF-8 (byte 0xFF at byte offset")
        r = c.post("/mcp", headers=session, content=call_7.replace("bad \\ud800 surrogate", "a cat \\ud83d\\udc08").encode())
        assert r.status_code == 200 and '"turn":0' in r.text and '"isError":false' in r.text, r.text

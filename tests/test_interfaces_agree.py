"""One behaviour whichever interface a user meets it through: the HTTP service (a real ``logichunk serve``
process), the MCP tools (the server object, the SDK's client) and the CLI refuse the same bad input with the
same words, and a graph search's hit has one shape in all three.

- A text that is empty or only whitespace: the CLI said ``empty input (only whitespace)`` and MCP ``chunk``
  refused it, but ``POST /api/chunk`` and ``/api/segment`` answered 200 with one chunk over the spaces. Now a
  422 ``text is only whitespace`` in the service, the same sentence as the MCP tool error; the library still
  cuts such a text as it is (exact spans).
- A NUL character: MCP refused it everywhere; the service chunked, segmented and searched it, and a JSON
  document with one got a 400 naming "block 1". Now the same 422 sentence.
- Counts and switches: MCP refused ``true`` and ``"100"``; the service read ``"sizes": [true]`` as 1.
- A graph hit: the CLI's line, the service's hit and the MCP hit had different fields for the sentence found.
  Now one ``sentence`` object (:func:`logichunk.retrieve.graph.graph_hit`) and the same core fields in all
  three.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from mcp import Client  # noqa: E402

from logichunk import chunk, segment  # noqa: E402
from logichunk.cli import main  # noqa: E402
from logichunk.config import Settings  # noqa: E402
from logichunk.integrations import kb  # noqa: E402
from logichunk.integrations.mcp_server import build_server  # noqa: E402
from mcp_helpers import call, refused  # noqa: E402
from service_helpers import EN, H, serve  # noqa: E402

BLANKS = ["   ", " \n\t\n", "\u3000\n"]
PROSE = "Alice was tired of sitting by her sister. Then a White Rabbit ran close by her."


def _mcp(db: Path, fn: Any, allow: tuple[str, ...] = ()) -> Any:
    s = Settings(db=str(db), embedder="hash:128")
    stores = kb.Stores(s)
    try:
        server = build_server(stores, s, allow=kb.Folders(allow))

        async def go() -> Any:
            async with Client(server) as c:
                return await fn(c)

        return anyio.run(go)
    finally:
        stores.close()


def _blank(text: str) -> str:
    return "empty" if not text else "only whitespace" if text.isspace() else ""


def test_the_library_keeps_exact_spans_of_a_blank_text():
    """What the interfaces refuse, the library cuts as it is: no chunk of "", one chunk over the spaces."""
    from logichunk.text.decode import blank

    assert list(chunk("")) == [] and list(segment("").roots()) == []
    for t in BLANKS:
        assert blank(t) == "only whitespace"
        assert [(c.span.start, c.span.end) for c in chunk(t).roots()] == [(0, len(t))]
        assert [(c.span.start, c.span.end) for c in segment(t).roots()] == [(0, len(t))]
    assert blank("") == "empty" and blank(" x ") == ""


# (the HTTP request, the MCP call with the same input) -> refused by both, in the same words
SAME = [
    *[(("/api/chunk", {"text": t}), ("chunk", {"text": t})) for t in ["", *BLANKS]],
    *[(("/api/segment", {"text": t}), ("segment", {"text": t})) for t in ["", *BLANKS]],
    (("/api/projects/default/documents", {"title": "t", "text": " \n"}), ("add_document", {"title": "t", "text": " \n"})),
    (("/api/projects/default/documents", {"title": "t", "text": ""}), ("add_document", {"title": "t", "text": ""})),
    (("/api/projects/default/search", {"query": "  "}), ("search", {"query": "  "})),
    (("/api/chunk", {"text": "a\x00b. Then c."}), ("chunk", {"text": "a\x00b. Then c."})),
    (("/api/segment", {"text": "a\x00b. Then c."}), ("segment", {"text": "a\x00b. Then c."})),
    (("/api/projects/default/search", {"query": "a\x00b"}), ("search", {"query": "a\x00b"})),
    (("/api/projects/default/documents", {"title": "t", "text": "a\x00b"}), ("add_document", {"title": "t", "text": "a\x00b"})),
    (("/api/projects/default/documents", {"title": "t\x00", "text": "ab"}), ("add_document", {"title": "t\x00", "text": "ab"})),
    (("/api/projects/default/documents", {"title": " ", "text": "ab"}), ("add_document", {"title": " ", "text": "ab"})),
]


def test_the_service_and_the_mcp_tools_refuse_the_same_input_in_the_same_words(tmp_path):
    async def mcp_side(c: Client) -> list[str]:
        return [await refused(c, tool, **args) for _, (tool, args) in SAME]

    said_mcp = _mcp(tmp_path / "m.db", mcp_side)
    with serve(str(tmp_path / "h.db")) as (url, _proc, _lines):
        for ((route, body), _), mcp_msg in zip(SAME, said_mcp, strict=True):
            r = httpx.post(url + route, json=body, headers=H, timeout=60)
            assert r.status_code == 422, (route, body, r.status_code, r.text)
            msg = r.json()["error"]["message"]
            assert r.json()["error"]["code"] == "invalid_request" and "\n" not in msg
            assert mcp_msg.endswith(msg), (route, body, msg, mcp_msg)  # (the SDK puts "Error executing tool" first)
            field = "query" if "query" in body else "title" if _blank(body.get("title", "x")) else "text"
            if _blank(body[field]):
                assert msg == f"{field} is {_blank(body[field])}", (body, msg)
            else:
                assert "NUL character" in msg, msg
        # a query string and an upload: the same words (a file's in the CLI's: `logichunk chunk` says them)
        r = httpx.get(url + "/api/projects/default/search", params={"q": " \t"}, headers=H)
        assert (r.status_code, r.json()["error"]["message"]) == (422, "query is only whitespace")
        r = httpx.post(url + "/api/projects/default/documents/upload?title=x", content=b" \n\t\n", headers=H)
        assert (r.status_code, r.json()["error"]["message"]) == (422, "x: empty input (only whitespace)")
        # counts and switches are strict, as the MCP tools' (JSON's true was the size 1)
        for route, body, field in [("/api/chunk", {"text": PROSE, "sizes": [True]}, "sizes.0"),
                                   ("/api/chunk", {"text": PROSE, "sizes": ["100"]}, "sizes.0"),
                                   ("/api/segment", {"text": PROSE, "topics": True}, "topics"),
                                   ("/api/projects/default/search", {"query": "x", "context_window": True},
                                    "context_window"),
                                   ("/api/projects/default/search", {"query": "x", "size_normalization": "yes"},
                                    "size_normalization")]:
            r = httpx.post(url + route, json=body, headers=H)
            assert r.status_code == 422 and r.json()["error"]["message"].startswith(f"{field}: "), (body, r.text)
        ok = httpx.post(url + "/api/chunk", json={"text": PROSE, "sizes": [40]}, headers=H)  # (and text still works)
        assert ok.status_code == 200 and len(ok.json()["chunks"]) > 1


def test_mcp_add_file_of_whitespace_and_a_long_ref_say_one_short_line(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "blank.md").write_text(" \n\t\n", encoding="utf-8")

    async def fn(c: Client) -> list[str]:
        return [await refused(c, "add_file", path="blank.md"), await refused(c, "get_chunk", id="x" * 100_000)]

    blank_file, long_ref = _mcp(tmp_path / "m.db", fn, (str(folder),))
    assert blank_file.endswith("blank.md: empty input (only whitespace), nothing to store")
    assert "100,000 characters" in long_ref and len(long_ref) < 200  # (the id was echoed back whole)


def test_a_size_limit_past_any_text_is_read_as_one(tmp_path, capsys):
    """``max_size=10**400`` overflowed a float in the levels' ratios: a traceback from ``logichunk chunk
    --max-size``, an internal error from MCP ``chunk``. Now a limit past SIZE_CAP is read as it, as an overlap
    past any text reaches its edges: the same tree."""
    from logichunk.chunkers.logic_chain import SIZE_CAP

    big = 10**400
    spans = [(c.id, c.span.start, c.span.end) for c in chunk(EN, max_size=SIZE_CAP)]
    assert [(c.id, c.span.start, c.span.end) for c in chunk(EN, max_size=big)] == spans
    assert [(c.id, c.span.start, c.span.end) for c in chunk(EN, sizes=(big, 2**70))] == spans
    f = tmp_path / "en.md"
    f.write_text(EN, encoding="utf-8")
    assert main(["chunk", str(f), "--max-size", str(big), "--format", "jsonl"]) == 0
    assert [(r["id"], r["start"], r["end"]) for r in map(json.loads, capsys.readouterr().out.splitlines())] == spans

    async def fn(c: Client) -> dict[str, Any]:
        return await call(c, "chunk", text=EN, max_size=big)

    assert [(x["id"], *x["span"]) for x in _mcp(tmp_path / "m.db", fn)["chunks"]] == spans


def test_calibrate_with_missing_data_names_the_dialogue_format(tmp_path, capsys):
    """``memory calibrate --data`` a missing path named the retrieval sets' files (STEM.corpus.jsonl)."""
    for data in (str(tmp_path / "missing.jsonl"), str(tmp_path)):
        assert main(["memory", "calibrate", "--data", data, "--out", str(tmp_path / "cal.json")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "corpus.jsonl" not in err
        assert "'units'" in err and "dialogue" in err, err


# --------------------------------------------------------------------------- a graph hit, one shape

CORE = ("rank", "ref", "id", "level", "method", "document_id", "document_title", "origin")
SENTENCE = {"text", "block_id", "block_span", "document_span", "step"}


@pytest.mark.parametrize("mode", ["graph-ssg", "graph-tri"])
def test_a_graph_hit_has_one_shape_in_the_cli_http_and_mcp(tmp_path, capsys, mode):
    from fastapi.testclient import TestClient

    from logichunk.service.app import create_app

    db = str(tmp_path / "kb.db")
    (tmp_path / "en.md").write_text(EN, encoding="utf-8")
    assert main(["ingest", str(tmp_path / "en.md"), "--db", db, "--embedder", "hash:128", "--quiet"]) == 0
    capsys.readouterr()
    query, common = "who sailed on the Beagle as a naturalist", ["--db", db, "--embedder", "hash:128"]
    assert main(["search", query, "--mode", mode, "--format", "jsonl", "--top-k", "4", *common]) == 0
    cli = [r for r in map(json.loads, capsys.readouterr().out.splitlines()) if r["type"] == "sentence"]
    key = "k" * 24
    with TestClient(create_app(Settings(db=db, embedder="hash:128"), api_key=key)) as c:
        r = c.post("/api/projects/default/search", headers={"X-API-Key": key},
                   json={"query": query, "mode": mode, "top_k": 4})
        assert r.status_code == 200, r.text
        http = r.json()["hits"]
        text = c.get(f"/api/projects/default/documents/{http[0]['document_id']}/tree",
                     headers={"X-API-Key": key}).json()["text"]

    async def fn(c: Client) -> dict[str, Any]:
        return await call(c, "search", query=query, mode=mode, top_k=4)

    mcp = _mcp(Path(db), fn)["hits"]
    assert cli and len(cli) == len(http) == len(mcp)
    for a, b, m in zip(cli, http, mcp, strict=True):
        assert {k: a[k] for k in CORE} == {k: b[k] for k in CORE} == {k: m[k] for k in CORE}
        assert a["score"] == pytest.approx(b["score"]) and a["score"] == pytest.approx(m["score"])
        assert set(a["sentence"]) == set(b["sentence"]) == SENTENCE and set(m["sentence"]) == SENTENCE | {"span"}
        assert a["sentence"] == b["sentence"] == {k: v for k, v in m["sentence"].items() if k != "span"}
        s = a["sentence"]
        x, y = s["document_span"]
        assert text[x:y] == s["text"] and m["sentence"]["span"] == [x, y]  # (MCP's `span`: document offsets)
        # the CLI's earlier names stay: the sentence's text, block and span in it
        assert (a["text"], a["block_id"], a["span"], a["step"]) == (s["text"], s["block_id"], s["block_span"],
                                                                   s["step"])

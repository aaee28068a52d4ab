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
- A value a field does not take: an unknown chunk ``method`` (and ``tokenizer``) was a 400 ``bad_input``, an unknown
  search ``mode`` a 422; now every such field is a 422 ``invalid_request``, ``unknown FIELD 'x': use one of ...``,
  the MCP tools' words too (:func:`logichunk.errors.unknown_choice`).
- ``?wait=nan`` (inf, 1e999) said "less than or equal to 120"; now ``wait: Input should be a finite number``.
- A title's surrounding spaces: MCP stripped them, the service stored them (:func:`~logichunk.text.decode.check_title`).
- A hit of the plain modes: MCP's had no ``raw_score`` nor ``level`` (:func:`~logichunk.retrieve.results.hit_record`).
- A topic's ``resumes``: a document id in ``memory topics --format jsonl``, a topic number in MCP's ``recall``.
- A turn with a blank ``user``: refused by MCP's ``remember``, taken by the library and the CLI
  (:func:`~logichunk.memory.block.check_turn_text`).
- A ``Perception`` with a store and no ``conversation_id``: stored under a made-up id, unsaid.
- ``logichunk edit`` with an empty text emptied a block unsaid (and so did the service).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from mcp import Client  # noqa: E402

from logichunk import chunk, config, segment  # noqa: E402
from logichunk.cli import main  # noqa: E402
from logichunk.config import Settings  # noqa: E402
from logichunk.integrations import kb  # noqa: E402
from mcp_helpers import call, refused, run_in_process  # noqa: E402
from service_helpers import EN, H, serve  # noqa: E402

BLANKS = ["   ", " \n\t\n", "\u3000\n"]
PROSE = "Alice was tired of sitting by her sister. Then a White Rabbit ran close by her."


def _mcp(db: Path, fn: Any, allow: tuple[str, ...] = (), embedder: str = "hash:128") -> Any:
    return run_in_process(db, fn, allow, embedder)


@pytest.fixture(scope="module")
def kb_db(tmp_path_factory) -> Path:
    """A database holding the English sample, ingested by the CLI."""
    d = tmp_path_factory.mktemp("agree")
    (d / "en.md").write_text(EN, encoding="utf-8")
    assert main(["ingest", str(d / "en.md"), "--db", str(d / "kb.db"), "--embedder", "hash:128", "--quiet"]) == 0
    return d / "kb.db"


@pytest.fixture(scope="module")
def server(kb_db):
    """One ``logichunk serve`` process over ``kb_db`` for the module (it takes seconds to start)."""
    with serve(str(kb_db)) as (url, _proc, _lines):
        yield url


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


def test_the_service_and_the_mcp_tools_refuse_the_same_input_in_the_same_words(tmp_path, server):
    async def mcp_side(c: Client) -> list[str]:
        return [await refused(c, tool, **args) for _, (tool, args) in SAME]

    said_mcp = _mcp(tmp_path / "m.db", mcp_side)
    url = server  # (the module's one server process)
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


# --------------------------------------------------------------------------- one rule (session 35)


P = "/api/projects/default"
EMB = "hash:128"


def _refusal(r: Any) -> str:
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request", (r.status_code, r.text)
    msg = r.json()["error"]["message"]
    assert "\n" not in msg
    return msg


# --------------------------------------------------------------------------- a value a field does not take


def _choices(field: str, value: str, choices: Any) -> str:
    return f"unknown {field} {value!r}: use one of {', '.join(choices)}"


METHODS = ("logic-chain", "cliff", "fused", "parent-child", "fixed", "recursive")
# (HTTP request, MCP call or None, the sentence both say)
UNKNOWN = [
    (("/api/chunk", {"text": "Alice ran.", "method": "nope"}), ("chunk", {"text": "Alice ran.", "method": "nope"}),
     _choices("method", "nope", METHODS)),
    ((f"{P}/search", {"query": "rabbit", "mode": "nope"}), ("search", {"query": "rabbit", "mode": "nope"}),
     _choices("mode", "nope", config.RETRIEVE_MODES)),
    ((f"{P}/search", {"query": "rabbit", "include": "nope"}), ("search", {"query": "rabbit", "include": "nope"}),
     _choices("include", "nope", ("documents", "conversations", "all"))),
    (("/api/segment", {"text": "Alice ran.", "units": "words"}), ("segment", {"text": "Alice ran.", "units": "words"}),
     _choices("units", "words", ("sentences", "lines"))),
    (("/api/chunk", {"text": "Alice ran.", "unit": "words"}), None, _choices("unit", "words", ("chars", "bytes", "tokens"))),
    (("/api/chunk", {"text": "Alice ran.", "tokenizer": "/etc/passwd"}), None,
     _choices("tokenizer", "/etc/passwd", ("cl100k_base", "o200k_base", "embedder"))),
]


def test_a_value_a_field_does_not_take_is_one_422_in_the_mcp_tools_words(kb_db, server):
    async def fn(c: Client) -> list[str]:
        return [await refused(c, m[0], **m[1]) for _, m, _ in UNKNOWN if m is not None]

    said_mcp = iter(_mcp(kb_db, fn))
    for (route, body), m, want in UNKNOWN:
        assert _refusal(httpx.post(server + route, json=body, headers=H, timeout=60)) == want, body
        if m is not None:
            mcp_msg = next(said_mcp)
            assert mcp_msg.endswith(want), (mcp_msg, want)  # ("chunk: " first, as the tool's other refusals)
    # a query string and a URL parameter: the same rule
    r = httpx.get(server + f"{P}/search", params={"q": "rabbit", "mode": "nope"}, headers=H)
    assert _refusal(r) == _choices("mode", "nope", config.RETRIEVE_MODES)
    assert r.json()["error"]["details"] == [{"field": "mode", "problem": _refusal(r), "type": "unknown_choice",
                                             "choices": list(config.RETRIEVE_MODES)}]
    r = httpx.post(server + "/api/chunk", json={"text": "x", "unit": "words"}, headers=H)  # (a schema's Literal: the same)
    assert r.json()["error"]["details"] == [{"field": "unit", "problem": _refusal(r), "type": "unknown_choice",
                                             "choices": ["chars", "bytes", "tokens"]}]
    assert _refusal(httpx.get(server + "/api/metrics", params={"format": "xml"}, headers=H)) == \
        _choices("format", "xml", ("json", "prometheus"))
    # MCP's recall: its own modes, the same words
    async def recall(c: Client) -> str:
        return await refused(c, "recall", query="x", mode="graph-ssg")

    assert _mcp(kb_db, recall).endswith(_choices("mode", "graph-ssg", ("hybrid", "basic", "parent", "hierarchical",
                                                                        "kernel")))


def test_segment_topics_are_bounded_alike_in_the_service_and_the_mcp_tools(kb_db, server):
    """``segment``'s topics: one bound (``kb.MAX_TOPICS``) in both schemas, and the bound itself taken."""
    top = kb.MAX_TOPICS

    async def fn(c: Client) -> tuple[str, dict[str, Any]]:
        return await refused(c, "segment", text=PROSE, topics=top + 1), await call(c, "segment", text=PROSE, topics=top)

    over, at = _mcp(kb_db, fn)
    assert "topics" in over and str(top) in over.replace(",", "") and len(at["topics"]) >= 1
    r = httpx.post(server + "/api/segment", json={"text": PROSE, "topics": top + 1}, headers=H)
    assert _refusal(r).startswith("topics: ") and str(top) in _refusal(r).replace(",", "")
    assert httpx.post(server + "/api/segment", json={"text": PROSE, "topics": top}, headers=H).status_code == 200


def test_a_top_k_over_the_setting_is_one_sentence_in_the_service_and_the_mcp_tools(kb_db, server):
    """The service said 'top_k is at most 100 (setting service_max_top_k)', MCP 'top_k must be an integer from
    1 to 100, got 101': now :func:`kb.top_k_refusal`'s words in both (both at the default setting, 100)."""
    async def fn(c: Client) -> str:
        return await refused(c, "search", query="rabbit", top_k=101)

    said_mcp = _mcp(kb_db, fn)
    r = httpx.post(server + f"{P}/search", json={"query": "rabbit", "top_k": 101}, headers=H)
    assert _refusal(r) == kb.top_k_refusal(101, 100) and said_mcp.endswith(_refusal(r)), (r.text, said_mcp)


@pytest.mark.parametrize("wait", ["nan", "inf", "-inf", "1e999", "NaN"])
def test_a_wait_that_is_no_finite_number_says_so(server, wait):
    r = httpx.post(server + f"{P}/documents?wait={wait}", json={"title": "t", "text": "Alice ran."}, headers=H)
    assert _refusal(r) == f"wait: Input should be a finite number (got {wait!r})"


def test_a_wait_out_of_range_names_the_field_and_the_value(server):
    r = httpx.post(server + f"{P}/documents?wait=-1", json={"title": "t", "text": "Alice ran."}, headers=H)
    assert _refusal(r) == "wait: Input should be greater than or equal to 0 (got '-1')"
    r = httpx.post(server + f"{P}/documents?wait=121", json={"title": "t", "text": "Alice ran."}, headers=H)
    assert _refusal(r) == "wait: Input should be less than or equal to 120 (got '121')"


# --------------------------------------------------------------------------- titles


def test_a_title_is_stored_without_its_surrounding_whitespace_by_every_interface(kb_db, server):
    from logichunk.text.decode import check_title, file_title

    assert check_title("  桃花源记 \n") == "桃花源记" and check_title("a  b") == "a  b"
    r = httpx.post(server + f"{P}/documents", json={"title": "  Spaced title \n", "text": "The first text here."},
                   headers=H)
    assert r.status_code == 201 and r.json()["title"] == "Spaced title", r.text
    up = httpx.post(server + f"{P}/documents/upload", params={"title": "\tUploaded  "}, content=b"Another text.",
                    headers=H)
    assert up.status_code == 201 and up.json()["title"] == "Uploaded", up.text
    listed = {d["id"]: d["title"] for d in httpx.get(server + f"{P}/documents", headers=H).json()["documents"]}
    assert listed[r.json()["id"]] == "Spaced title" and listed[up.json()["id"]] == "Uploaded"
    blank = httpx.post(server + f"{P}/documents/upload", params={"title": "   "}, content=b"Third text.", headers=H)
    assert _refusal(blank) == "title is only whitespace"
    # no title given: the file's name, stripped as a given title is, by the service and `ingest` alike
    named = httpx.post(server + f"{P}/documents/upload", files={"file": (" Notes .md", b"Fourth text.")}, headers=H)
    assert named.status_code == 201 and named.json()["title"] == "Notes", named.text
    assert [file_title(n) for n in (" Notes .md", "  .md", "a.md.gz")] == ["Notes", ".md", "a"]

    async def fn(c: Client) -> dict[str, Any]:
        return await call(c, "add_document", title="  Spaced title \n", text="A third text, by MCP.")

    assert _mcp(kb_db, fn)["title"] == "Spaced title"


# --------------------------------------------------------------------------- a hit, one shape in every mode

@pytest.mark.parametrize("mode", ["basic", "parent", "hybrid", "hierarchical"])
def test_a_hit_of_every_plain_mode_has_one_shape_in_the_cli_http_and_mcp(kb_db, server, capsys, mode):
    query = "who sailed on the Beagle as a naturalist"
    assert main(["search", query, "--mode", mode, "--format", "jsonl", "--top-k", "4", "--db", str(kb_db),
                 "--embedder", EMB]) == 0
    cli = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    r = httpx.post(server + f"{P}/search", json={"query": query, "mode": mode, "top_k": 4}, headers=H)
    assert r.status_code == 200, r.text
    http = r.json()["hits"]

    async def fn(c: Client) -> dict[str, Any]:
        return await call(c, "search", query=query, mode=mode, top_k=4, include="all")

    mcp = _mcp(kb_db, fn)["hits"]
    assert cli and len(cli) == len(http) == len(mcp)
    for a, b, m in zip(cli, http, mcp, strict=True):
        assert {k: a[k] for k in CORE} == {k: b[k] for k in CORE} == {k: m[k] for k in CORE}
        for k in ("score", "raw_score"):
            assert a[k] == pytest.approx(b[k]) and a[k] == pytest.approx(m[k]), k
        # the earlier names stay: the CLI's ``title``, MCP's ``kind``
        assert a["title"] == a["document_title"] and m["kind"] == m["level"]
        # the hit in the document's offsets: the CLI's ``document_span`` is the service's (and MCP's ``span``)
        assert a["document_span"] == b["document_span"] == m["span"] and a["document_span"] is not None
        assert a["document_context"] == b["document_context"]


# --------------------------------------------------------------------------- memory


def test_a_topic_resumes_a_topic_number_in_the_cli_and_mcp(tmp_path, capsys):
    from logichunk.memory import Perception, replay, topics
    from logichunk.store import Store
    from test_memory_digress import EN as TURNS
    from test_memory_digress import RETURN

    db = tmp_path / "mem.db"
    with Store.open(str(db), settings=Settings(embedder="hash")) as store:
        replay(TURNS, Perception(store=store, conversation_id="chat"))
        first, back = topics(store, "chat")[0], next(t for t in topics(store, "chat") if t.start == RETURN)
    assert back.resumes_topic == first.index
    assert main(["memory", "topics", "--db", str(db), "--embedder", "hash", "--format", "jsonl"]) == 0
    rows = {r["topic"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    cli = rows[back.index]
    assert (cli["resumes"], cli["resumes_document"]) == (first.index, first.document_id)

    async def fn(c: Client) -> dict[str, Any]:
        return await call(c, "recall", query="sticky sourdough bread dough", conversation_id="chat", top_k=5)

    eps = {e["topic"]: e for e in _mcp(db, fn, embedder="hash")["episodes"]}
    assert (eps[back.index]["resumes"], eps[back.index]["resumes_document"]) == (cli["resumes"],
                                                                                cli["resumes_document"])


def test_a_turn_needs_text_on_either_side_in_the_library_the_cli_and_mcp(tmp_path, capsys):
    from logichunk.errors import InputError
    from logichunk.memory import LogicalBlock
    from logichunk.memory.archive import render_block

    greeting = LogicalBlock(user="  ", assistant="Hello! What shall we cook today?")
    assert render_block(greeting) == "Assistant: Hello! What shall we cook today?\n\n"  # (no empty "User:")
    with pytest.raises(InputError) as e:
        LogicalBlock(user=" \n", assistant="")
    said = str(e.value)
    assert said == "a turn needs some text: user is only whitespace, assistant is empty"
    f = tmp_path / "turns.jsonl"
    f.write_text(json.dumps({"user": "  ", "assistant": "Hello! What shall we cook today?"}) + "\n"
                 + json.dumps({"user": "Dumplings, please.", "assistant": "Pork and cabbage, then."}) + "\n",
                 encoding="utf-8")
    assert main(["memory", "replay", str(f), "--embedder", "hash", "--quiet", "--format", "jsonl"]) == 0
    capsys.readouterr()

    async def fn(c: Client) -> tuple[dict[str, Any], str]:
        ok = await call(c, "remember", conversation_id="c", user="  ", assistant="Hello! What shall we cook today?")
        return ok, await refused(c, "remember", conversation_id="c", user=" \n", assistant="")

    ok, no = _mcp(tmp_path / "m.db", fn)
    assert ok["turn"] == 0 and no.endswith(said)


def test_a_perception_with_a_store_and_no_conversation_id_says_the_id_it_stores_under(tmp_path):
    from logichunk.memory import LogicalBlock, Perception
    from logichunk.memory.perception import UnnamedConversationWarning
    from logichunk.store import Store

    with Store.open(str(tmp_path / "p.db"), settings=Settings(embedder="hash")) as store:
        with pytest.warns(UnnamedConversationWarning, match="no conversation_id") as w:
            p = Perception(store=store)
        assert len(w) == 1 and w[0].filename == __file__  # (the user's line, not the library's)
        assert p.conversation_id.startswith("conv-") and repr(p.conversation_id) in p.note
        p.observe(LogicalBlock("How do I knead dough?", "Ten minutes, by hand."))
        assert store._q("SELECT DISTINCT conversation_id FROM memory_session_turns", ()) == [(p.conversation_id,)]
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnnamedConversationWarning)
            assert "conversation_id" not in Perception(store=store, conversation_id="chat").note


# --------------------------------------------------------------------------- an edit that empties a block


def test_an_edit_that_empties_a_block_says_so_in_the_cli_and_the_service(kb_db, server, capsys):
    blocks = httpx.get(server + f"{P}/documents", headers=H).json()["documents"]
    doc = next(d for d in blocks if d["title"] == "en")
    ids = [b["id"] for b in httpx.get(server + f"{P}/documents/{doc['id']}", headers=H).json()["blocks"]]
    cli_block, http_block = ids[3], ids[4]
    n = len(httpx.get(server + f"{P}/blocks/{cli_block}", headers=H).json()["content"])
    common = ["--db", str(kb_db), "--embedder", EMB]
    assert main(["edit", "--block", cli_block, "--text", "", "--no-rechunk", *common]) == 0
    assert capsys.readouterr().out.strip() == f"block {cli_block}: emptied (its {n:,} characters removed), marked dirty"
    assert main(["edit", "--block", cli_block, "--text", "Back again.", "--no-rechunk", "--format", "jsonl", *common]) == 0
    assert json.loads(capsys.readouterr().out)["emptied"] is False
    r = httpx.put(server + f"{P}/blocks/{http_block}", json={"content": " \n"}, headers=H)
    assert r.status_code == 202 and r.json()["emptied"] is True and r.json()["changed"] is True
    r = httpx.put(server + f"{P}/blocks/{http_block}", json={"content": " \n"}, headers=H)
    assert r.status_code == 200 and r.json()["emptied"] is False  # (unchanged: nothing emptied now)


def test_an_edit_to_whitespace_or_of_a_blank_block_says_what_it_did(kb_db, server, capsys):
    """Whitespace sent is kept, so "its N characters removed" was untrue for it, and "0 characters removed" for a
    block blank already: each edit that leaves a block blank says what it did."""
    doc = next(d for d in httpx.get(server + f"{P}/documents", headers=H).json()["documents"] if d["title"] == "en")
    block = httpx.get(server + f"{P}/documents/{doc['id']}", headers=H).json()["blocks"][5]["id"]
    n = len(httpx.get(server + f"{P}/blocks/{block}", headers=H).json()["content"])
    common = ["--db", str(kb_db), "--embedder", EMB, "--no-rechunk"]
    said = []
    for text in (" \n", "", "\t", "\t\n\n", "Back again."):
        assert main(["edit", "--block", block, "--text", text, *common]) == 0
        said.append(capsys.readouterr().out.strip())
    assert said == [f"block {block}: emptied (its {n:,} characters replaced by 2 characters of whitespace), marked dirty",
                    f"block {block}: still empty (its 2 characters of whitespace removed), marked dirty",
                    f"block {block}: still empty (now 1 character of whitespace), marked dirty",
                    f"block {block}: still empty (its 1 character of whitespace now 3), marked dirty",
                    f"block {block}: marked dirty"]
    assert httpx.get(server + f"{P}/blocks/{block}", headers=H).json()["content"] == "Back again."

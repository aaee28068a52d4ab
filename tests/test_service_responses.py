"""The OpenAPI schema's success answers are true: every route is called for real (Chinese and English
documents, every search mode, every chunk method the service runs, a block being re-chunked, the
fallbacks, an empty project) and each body is validated against the model the schema names for that
route and status, with unknown fields forbidden and no type coercion — so an undocumented, renamed
or retyped field fails here. The schema itself must name a model for every success answer, and
both its 3.1 form and the 3.0 view for Swagger UI must be valid OpenAPI.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
import pkgutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service tests need the [service] extra (fastapi, httpx)")
from fastapi.routing import APIRoute  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from pydantic import BaseModel, ValidationError  # noqa: E402

from logichunk import config  # noqa: E402
from logichunk.errors import LogichunkError  # noqa: E402
from logichunk.service import responses  # noqa: E402
from logichunk.service import routes as routes_pkg  # noqa: E402
from logichunk.service.app import create_app  # noqa: E402
from service_helpers import EN, KEY, ZH, H, small_settings  # noqa: E402

P = "/api/projects/{project}"
LONG_SENTENCE = "这是一句没有任何标点符号而且非常非常长的句子" * 20 + "。\n\n"


@dataclass(frozen=True)
class Answer:
    method: str
    route: str  # the path template, as in the schema
    status: int
    body: Any
    label: str


class Caller:
    """Calls routes by their template and keeps every answer for validation."""

    def __init__(self, client: TestClient) -> None:
        self.c = client
        self.answers: list[Answer] = []

    def __call__(self, method: str, route: str, status: int = 200, *, label: str = "", project: str = "default",
                 **kw: Any) -> Any:
        path_args = {k: kw.pop(k) for k in ("doc_id", "block_id") if k in kw}
        url = route.format(project=project, **path_args)
        r = self.c.request(method, url, headers=H if route != "/api/health" else {}, **kw)
        assert r.status_code == status, (method, url, label, r.status_code, r.text[:500])
        body = r.json() if r.content else None
        self.answers.append(Answer(method.lower(), route, status, body, label or url))
        return body


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _wait(pred, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    # edits wait a minute: a block stays queued (and its chunks stale) until it is re-chunked on demand
    return create_app(small_settings(str(tmp_path_factory.mktemp("contract") / "c.db")), api_key=KEY,
                      debounce_ms=60_000)


@pytest.fixture(scope="module")
def run(app) -> Iterator[dict[str, Any]]:
    """The whole tour; yields the answers and a few snapshots the tests look into."""
    with TestClient(app) as client:
        call = Caller(client)
        out: dict[str, Any] = {"call": call}
        call("GET", "/api/health")
        call("GET", "/api/metrics", label="metrics of a fresh server (empty latencies, no hit rate)")
        info = call("GET", "/api/info")

        # projects
        call("POST", "/api/projects", 201, json={"name": "小说"})
        call("GET", "/api/projects")
        call("GET", P, project="小说")
        empty = call("GET", P, project="小说", label="a project with nothing in it")
        assert empty["documents"] == 0

        # documents in both languages; with and without ?wait
        docs = {}
        for key, title, text, source in (("zh", "桃花源记", ZH, None), ("en", "three texts", EN, "en.md"),
                                         ("edit", "桃花源记 (edited)", ZH, "zh.txt")):
            # the same text twice is one document unless a copy is asked for (the edit test needs one)
            d = call("POST", f"{P}/documents", 201, params={"wait": 30, "copy": key == "edit"},
                     json={"title": title, "text": text, "source": source})
            assert d["chunked"] is True, d
            docs[key] = d["id"]
        again = call("POST", f"{P}/documents", 200, json={"title": "桃花源记", "text": ZH},
                     label="the same text again: the stored document, existing")
        assert again["existing"] is True and again["id"] == docs["zh"]
        d = call("POST", f"{P}/documents", 201, json={"title": "no wait", "text": "Tea.\n\nRain on the hills.\n"},
                 label="created without ?wait: no `chunked`")
        assert "chunked" not in d
        call("POST", f"{P}/documents/upload", 201, params={"title": "上传", "wait": 30},
             content="第一章 开始\n\n山有小口，仿佛若有光。\n".encode())
        call("POST", f"{P}/documents/upload", 201, params={"wait": 30},
             files={"file": ("notes.md", b"# Notes\n\nOne line about tea.\n\nAnother about rain.\n")})
        call("POST", f"{P}/documents/upload", 200, files={"file": ("notes.md", b"# Notes\n\nOne line about tea.\n\n"
                                                                              b"Another about rain.\n")},
             label="the same file again: the stored document")
        long = call("POST", f"{P}/documents", 201, params={"wait": 30},
                    json={"title": "长句", "text": "开头一句。\n\n" + LONG_SENTENCE})
        docs["long"] = long["id"]
        out["docs"] = docs
        _wait(lambda: all(x["status"] == "ready" for x in client.get(
            "/api/projects/default/documents", headers=H).json()["documents"]))
        call("GET", f"{P}/documents")
        out["trees"] = {}
        for key, doc in docs.items():
            call("GET", f"{P}/documents/{{doc_id}}", doc_id=doc)
            out["trees"][key] = call("GET", f"{P}/documents/{{doc_id}}/tree", doc_id=doc)
            call("GET", f"{P}/documents/{{doc_id}}/curves", doc_id=doc, params={"max_points": 200})
        call("GET", f"{P}/documents/{{doc_id}}/curves", doc_id=docs["en"],
             params={"similarity": "false", "max_points": 100}, label="curves without similarity")
        call("GET", f"{P}/bubbles", params={"document_id": docs["long"]})
        call("GET", f"{P}/bubbles", label="bubbles of the whole project (no chapter_id)")

        # search: every mode, both languages, the GET form, options
        out["searches"] = []
        for mode in config.RETRIEVE_MODES:
            for q in ("渔人在桃花林里看到了什么", "who wrote about the Beagle"):
                out["searches"].append(call("POST", f"{P}/search", json={"query": q, "mode": mode, "top_k": 4},
                                            label=f"search {mode}: {q}"))
        call("GET", f"{P}/search", params={"q": "Beagle", "mode": "hybrid", "top_k": 2})
        for h in out["searches"][0]["hits"][:2]:  # a hit read back by its ref
            call("GET", f"{P}/chunk", params={"ref": h["ref"]}, label=f"chunk by ref {h['ref']}")
        out["searches"].append(call("POST", f"{P}/search", label="parent with a context window",
                                    json={"query": "桃花林 芳草鲜美", "mode": "parent", "top_k": 3,
                                          "context_window": 30, "size_normalization": True}))
        call("POST", f"{P}/search", json={"query": "rabbit"}, label="the default mode")
        for mode in config.RETRIEVE_MODES:
            call("POST", f"{P}/search", project="小说", json={"query": "雨", "mode": mode},
                 label=f"search {mode} in an empty project")
        # the document-level fallbacks: parent vectors, then BM25 over blocks
        store = app.state.service.registry.default.store
        real = store.vector_search
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(store, "vector_search", lambda q, k, level: [] if level == "child" else real(q, k, level))
            out["searches"].append(call("POST", f"{P}/search", json={"query": "桃花林", "mode": "parent"},
                                        label="fallback to parent vectors"))

            def broken(*a: Any, **k: Any) -> Any:
                raise LogichunkError("vector index unavailable (test)")

            mp.setattr(store, "vector_search", broken)
            out["searches"].append(call("POST", f"{P}/search", label="fallback to BM25 over blocks",
                                        json={"query": "桃花林 渔人", "mode": "parent", "context_window": 40}))
            call("POST", f"{P}/search", json={"query": "Beagle", "mode": "hybrid"}, label="hybrid, BM25 only")
        out["fallbacks"] = out["searches"][-2:]

        # the playground: every method it lists, both languages, every unit, bubbles, a one-chunk text
        out["methods"] = [m["name"] for m in info["methods"]]
        for method in out["methods"]:
            for text in (ZH, EN):
                call("POST", "/api/chunk", json={"text": text, "method": method, "max_points": 200},
                     label=f"chunk {method}")
        for unit in ("bytes", "tokens"):
            call("POST", "/api/chunk", json={"text": ZH, "method": "logic-chain", "unit": unit, "sizes": [400, 200]})
        call("POST", "/api/chunk", json={"text": "短句。" + "很长的一句话没有标点" * 60 + "。结尾。",
                                          "method": "logic-chain", "sizes": [100, 50], "similarity": True})
        call("POST", "/api/chunk", json={"text": "One short line.", "method": "parent-child"})
        for text in (ZH, EN):
            call("POST", "/api/segment", json={"text": text}, label="topics")
        call("POST", "/api/segment", json={"text": "a turn\nanother turn\n", "units": "lines"}, label="topics of lines")
        from pdf_helpers import make_pdf

        call("POST", "/api/read", files={"file": ("manual.pdf", make_pdf([["Page one."], ["Page two."]]))}, label="a PDF")
        call("POST", "/api/read", params={"name": "notes.md"}, content="# Notes\n\n笔记。\n".encode(), label="a text")
        call("POST", "/api/segment", json={"text": EN, "topics": 3}, label="topics, count given")

        # a block edited: queued, its chunks stale, then re-chunked on demand
        blocks = call("GET", f"{P}/documents/{{doc_id}}", doc_id=docs["edit"])["blocks"]
        blk = next(b for b in blocks[1:] if any(o["chapter_id"] == b["chapter_id"] and o["id"] != b["id"]
                                                for o in blocks))
        call("GET", f"{P}/blocks/{{block_id}}", block_id=blk["id"])
        edited = call("PUT", f"{P}/blocks/{{block_id}}", 202, block_id=blk["id"],
                      json={"content": "渔人又来到桃花林。\n\n", "expected_revision": blk["revision"]})
        assert edited["changed"] and edited["status"] == "queued" and "due_in_ms" in edited
        call("GET", f"{P}/blocks/{{block_id}}", block_id=blk["id"], label="a queued block")
        call("PUT", f"{P}/blocks/{{block_id}}", 200, block_id=blk["id"], json={"content": "渔人又来到桃花林。\n\n"},
             label="the same text again: 200, changed false")
        out["stale_tree"] = call("GET", f"{P}/documents/{{doc_id}}/tree", doc_id=docs["edit"], label="stale tree")
        call("GET", f"{P}/documents/{{doc_id}}", doc_id=docs["edit"], label="a document being re-chunked")
        call("GET", f"{P}/documents", label="documents while one is pending")
        call("GET", P, label="a project with a queued job")
        call("POST", f"{P}/search", json={"query": "渔人又来到桃花林", "mode": "parent"}, label="search during an edit")
        call("POST", f"{P}/blocks/{{block_id}}/rechunk", 202, block_id=blk["id"])
        _wait(lambda: client.get(f"/api/projects/default/blocks/{blk['id']}", headers=H).json()["status"] == "clean")
        call("GET", f"{P}/blocks/{{block_id}}", block_id=blk["id"], label="re-chunked")

        # a document's whole text replaced: written at once, its chapter queued; then the same text again
        put = call("PUT", f"{P}/documents/{{doc_id}}", 202, doc_id=d["id"],
                   json={"text": "Tea.\n\nCoffee.\n\nRain on the hills.\n", "expected_sha256": _sha("Tea.\n\nRain on the hills.\n")})
        assert put["changed"] and len(put["blocks_added"]) == 1 and put["status"] == "pending"
        call("PUT", f"{P}/documents/{{doc_id}}", 200, doc_id=d["id"], json={"text": "Tea.\n\nCoffee.\n\nRain on the hills.\n"},
             label="the same text again: 200, changed false")
        call("DELETE", f"{P}/documents/{{doc_id}}", 204, doc_id=d["id"])
        call("GET", "/api/metrics", label="metrics after the tour")
        prom = client.get("/api/metrics", headers=H, params={"format": "prometheus"})
        assert prom.status_code == 200 and prom.headers["content-type"].startswith("text/plain")
        out["schema"] = client.get("/openapi.json").json()
        out["schema30"] = client.get("/docs-openapi.json").json()
        yield out


def _model(schema: dict[str, Any], method: str, route: str, status: int) -> type[BaseModel]:
    """The model the schema names for this answer, looked up in the responses module."""
    content = schema["paths"][route][method]["responses"][str(status)]["content"]["application/json"]
    name = content["schema"]["$ref"].rsplit("/", 1)[-1]
    model = getattr(responses, name)
    assert issubclass(model, BaseModel), name
    return model


def test_every_answer_matches_its_documented_model(run):
    failures = []
    checked = 0
    for a in run["call"].answers:
        if a.status == 204:
            assert a.body is None
            continue
        model = _model(run["schema"], a.method, a.route, a.status)
        try:
            model.model_validate(a.body, extra="forbid", strict=True)
        except ValidationError as e:
            failures.append(f"{a.method.upper()} {a.route} {a.status} [{a.label}] as {model.__name__}:\n{e}")
        checked += 1
    assert not failures, "\n\n".join(failures)
    assert checked >= 80


def test_the_tour_reached_every_documented_success_answer(run):
    """Every (route, success status) of the schema was called, so no model goes unchecked."""
    documented = {(m, path, int(code)) for path, ops in run["schema"]["paths"].items() if path.startswith("/api")
                  for m, op in ops.items() for code in op["responses"] if code.startswith("2")}
    seen = {(a.method, a.route, a.status) for a in run["call"].answers}
    assert documented - seen == set()
    assert len({(m, p) for m, p, _ in documented}) >= 20


def test_the_tour_saw_the_optional_parts(run):
    """The cases meant to show the optional and nullable fields really did."""
    answers = run["call"].answers
    nodes = [n for n in run["stale_tree"]["chunks"] if n["stale"]]
    assert any(n.get("start") is None and "text" in n for n in nodes)  # text moved under it
    assert any(n.get("start") is not None and n["kind"] != "chapter" for n in nodes)  # still in place, stale
    hits = [h for s in run["searches"] for h in s["hits"]]
    assert {h["level"] for h in hits} >= {"child", "parent", "block"}
    assert any(h["context"] is not None for h in hits if h["level"] == "parent")
    assert {"relation", "vector_rank", "bm25_rank", "child", "sentence_block_id", "fallback"} <= {
        k for h in hits for k in h["meta"]}
    assert all(s["fallback"] == "document" for s in run["fallbacks"])
    during = next(a.body for a in answers if a.label == "search during an edit")
    assert any(h["document_span"] is None for h in during["hits"])  # the edited block's old chunks: no offsets
    assert any(a.body.get("graph", {}).get("stop") == "empty" for a in answers if a.route.endswith("/search"))
    metrics = [a.body for a in answers if a.route == "/api/metrics"]
    assert metrics[0]["embedding"]["hit_rate"] is None and "p50_ms" not in metrics[0]["chunk"]["latency"]
    assert metrics[-1]["chunk"]["latency"]["p50_ms"] >= 0
    chunk_methods = {a.body["method"] for a in answers if a.route == "/api/chunk"}
    assert chunk_methods == set(run["methods"]) and len(chunk_methods) >= 6
    units = {a.body["unit"] for a in answers if a.route == "/api/chunk"}
    assert units == {"chars", "bytes", "tokens"}


def test_hit_spans_are_counted_from_their_block(run):
    """What the schema says of ``span``, ``context`` and ``view.highlight`` holds for every mode."""
    by_doc = {t["document"]["id"]: t for t in run["trees"].values()}
    checked = 0
    for s in run["searches"]:
        for h in s["hits"]:
            tree = by_doc.get(h["document_id"])
            if tree is None:
                continue
            start = next(b["start"] for b in tree["blocks"] if b["id"] == h["block_id"])
            text = tree["text"]
            a, b = h["span"]
            assert text[start + a : start + b] == h["text"], (s["mode"], h["id"])
            assert h["document_span"] == [start + a, start + b], (s["mode"], h["id"])  # the same, in document offsets
            if h["context"] is not None:
                c0, c1 = h["context"]
                assert a <= c0 < c1 <= b, (s["mode"], h["id"])
                assert h["document_context"] == [start + c0, start + c1]
            else:
                assert h["document_context"] is None
            v = h["view"]
            if v is not None and v["highlight"] is not None:
                x, y = v["highlight"]
                assert 0 <= x < y <= len(v["text"]) and v["text"][x:y] in text
            checked += 1
        if "graph" in s:  # a graph hit's context is its sentence, the one the walk returned at that rank
            for h, sent in zip(s["hits"], s["graph"]["sentences"], strict=True):
                a, c0, c1 = h["span"][0], *h["context"]
                assert h["text"][c0 - a : c1 - a] == sent["text"] and sent["id"] == h["id"]
    assert checked >= 40


def test_validation_refuses_undocumented_renamed_and_null_fields(run):
    """The check above has teeth: an extra field, a renamed one, a null where a field is only ever
    absent, or a number sent as a string all fail."""
    tree = run["stale_tree"]
    responses.DocumentTree.model_validate(tree, extra="forbid", strict=True)
    bad = []
    extra = copy.deepcopy(tree)
    extra["chunks"][-1]["colour"] = "red"
    bad.append(extra)
    renamed = copy.deepcopy(tree)
    renamed["chunks"][0]["is_stale"] = renamed["chunks"][0].pop("stale")
    bad.append(renamed)
    null = copy.deepcopy(tree)
    null["blocks"][0]["due_in_ms"] = None
    bad.append(null)
    stringy = copy.deepcopy(tree)
    stringy["length"] = str(stringy["length"])
    bad.append(stringy)
    for body in bad:
        with pytest.raises(ValidationError):
            responses.DocumentTree.model_validate(body, extra="forbid", strict=True)
    hit = next(h for s in run["searches"] for h in s["hits"])
    with pytest.raises(ValidationError):
        responses.Hit.model_validate({**hit, "meta": {**hit["meta"], "pk": 1}}, extra="forbid", strict=True)


def test_every_route_documents_a_success_body(app):
    """Each API route names a model for its success status (204 has no body), in the router and in
    the schema, and keeps its documented error answers."""
    schema = app.openapi()
    modules = [importlib.import_module(f"{routes_pkg.__name__}.{m.name}")  # every route module, a new one too
               for m in pkgutil.iter_modules(routes_pkg.__path__)]
    routes = [r for mod in modules if hasattr(mod, "router") for r in mod.router.routes
              if isinstance(r, APIRoute) and r.include_in_schema]
    assert len(routes) >= 20
    api_ops = {(m, p) for p, ops in schema["paths"].items() if p.startswith("/api") for m in ops}
    assert {(m.lower(), r.path) for r in routes for m in r.methods} == api_ops
    for r in routes:
        for method in r.methods:
            op = schema["paths"][r.path][method.lower()]
            codes = {int(c) for c in op["responses"] if c.startswith("2")}
            assert r.status_code in codes or (r.status_code is None and 200 in codes), (method, r.path)
            for code in codes:
                if code == 204:
                    assert "content" not in op["responses"]["204"], r.path
                    continue
                model = _model(schema, method.lower(), r.path, code)
                assert model.model_fields, (r.path, model)
                assert r.responses[code]["model"] is model
                comp = schema["components"]["schemas"][model.__name__]
                assert comp["properties"] and comp.get("description"), model.__name__
            if r.path != "/api/health":
                assert "401" in op["responses"], r.path
            assert any(c.startswith("4") for c in op["responses"]), r.path


def test_the_schema_is_valid_openapi_in_both_versions(run):
    validator = pytest.importorskip("openapi_spec_validator", reason="openapi-spec-validator (the [dev] extra)")
    assert run["schema"]["openapi"].startswith("3.1") and run["schema30"]["openapi"] == "3.0.3"
    validator.validate(run["schema"])
    validator.validate(run["schema30"])


def test_the_30_view_keeps_nullable_and_described_references(run):
    """3.0 has no ``null`` type and ignores anything beside a ``$ref``: ``anyOf [X, null]`` becomes
    ``X`` with ``nullable``, and a reference with a description or ``nullable`` is wrapped in ``allOf``."""
    old = run["schema30"]
    sc = old["components"]["schemas"]

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            assert not ("$ref" in x and len(x) > 1), x
            members = x.get("anyOf") or x.get("oneOf") or []
            assert not any(m == {"nullable": True} or m.get("type") == "null" for m in members), x
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(old)
    assert sc["Hit"]["properties"]["view"] == {"allOf": [{"$ref": "#/components/schemas/HitView"}], "nullable": True}
    assert sc["HitView"]["properties"]["highlight"]["type"] == "array"
    assert sc["HitView"]["properties"]["highlight"]["nullable"] is True
    assert sc["SearchIn"]["properties"]["mode"]["type"] == "string"  # a request body's optional field, too
    assert sc["SearchAnswer"]["properties"]["graph"]["allOf"][0]["$ref"].endswith("/GraphWalk")
    assert "graph" not in sc["SearchAnswer"]["required"] and "fallback" in sc["SearchAnswer"]["required"]
    # the tree's nodes: one of two shapes, told apart by `kind`
    items = sc["DocumentTree"]["properties"]["chunks"]["items"]
    assert items["discriminator"]["propertyName"] == "kind" and len(items["oneOf"]) == 2
    assert json.dumps(old).count('"nullable": true') >= 20


def test_health_answers_its_documented_body_when_the_database_is_gone(tmp_path):
    """/api/health's 503 is not the error body but the health report, and the schema says so."""
    app = create_app(small_settings(str(tmp_path / "h.db")), api_key=KEY, debounce_ms=50)
    with TestClient(app) as c:
        app.state.service.registry.default.store.close()
        r = c.get("/api/health")
        assert r.status_code == 503
        model = _model(app.openapi(), "get", "/api/health", 503)
        assert model is responses.Health
        body = model.model_validate(r.json(), extra="forbid", strict=True)
        assert body.status == "unavailable" and body.database != "ok"

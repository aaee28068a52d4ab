"""The HTTP API through FastAPI's test client: every route, auth, bad bodies, limits, status, metrics."""

from __future__ import annotations

import json
import time
from urllib.parse import unquote

import pytest

pytest.importorskip("fastapi", reason="the service tests need the [service] extra (fastapi, httpx)")
from fastapi.testclient import TestClient  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from logichunk import config  # noqa: E402
from logichunk.service.app import create_app  # noqa: E402
from logichunk.text.structure import PARAGRAPH, SECTION, STRENGTH_NAMES  # noqa: E402
from service_helpers import EN, KEY, ZH, H, check_document_tree, small_settings  # noqa: E402

P = "/api/projects/default"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("svc") / "api.db")
    app = create_app(small_settings(db), api_key=KEY, debounce_ms=150)
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="module")
def docs(client):
    """A Chinese and an English document, chunked."""
    zh = client.post(f"{P}/documents?wait=20", headers=H, json={"title": "桃花源记", "text": ZH})
    en = client.post(f"{P}/documents?wait=20", headers=H, json={"title": "three texts", "text": EN, "source": "en.md"})
    assert zh.status_code == 201 and en.status_code == 201, (zh.text, en.text)
    assert zh.json()["chunked"] and en.json()["chunked"]
    return {"zh": zh.json()["id"], "en": en.json()["id"]}


def wait_clean(client, block_id: str, timeout: float = 10.0) -> dict:
    end = time.monotonic() + timeout
    while True:
        b = client.get(f"{P}/blocks/{block_id}", headers=H).json()
        if b["status"] == "clean" or time.monotonic() > end:
            return b
        time.sleep(0.05)


# ----------------------------------------------------------------------------- auth


def _api_routes(app):
    """Every API route, from the OpenAPI schema (a route added later is checked too)."""
    for path, ops in app.openapi()["paths"].items():
        if path.startswith("/api"):
            for method in ops:
                yield method.upper(), path


def test_every_api_route_but_health_needs_the_key(client):
    routes = list(_api_routes(client.app))
    assert len(routes) >= 15
    fill = {"{project}": "default", "{doc_id}": "nope", "{block_id}": "nope"}
    checked = 0
    for method, path in routes:
        url = path
        for k, v in fill.items():
            url = url.replace(k, v)
        for headers, code in (({}, "missing_api_key"), ({"X-API-Key": "wrong-key-wrong-key"}, "invalid_api_key"),
                              ({"Authorization": "Bearer wrong-key-wrong-key"}, "invalid_api_key")):
            r = client.request(method, url, headers=headers)
            if path == "/api/health":
                assert r.status_code == 200
                continue
            assert r.status_code == 401, (method, url, r.status_code)
            assert r.json()["error"]["code"] == code
            assert "Bearer" in r.headers["www-authenticate"]
            checked += 1
    assert checked >= 3 * (len(routes) - 1)


def test_bearer_and_header_keys_both_work(client):
    assert client.get("/api/info", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    assert client.get("/api/info", headers=H).status_code == 200


def test_short_configured_key_is_refused(tmp_path):
    from logichunk.errors import InputError

    with pytest.raises(InputError, match="at least 16"):
        create_app(small_settings(str(tmp_path / "k.db")), api_key="short")


# ----------------------------------------------------------------------------- system


def test_health_info_page_and_docs(client):
    h = client.get("/api/health")
    assert h.status_code == 200 and h.json()["status"] == "ok" and h.json()["database"] == "ok"
    info = client.get("/api/info", headers=H).json()
    assert info["retrieve_modes"] == list(config.RETRIEVE_MODES)
    assert {m["name"] for m in info["methods"]} >= {"logic-chain", "parent-child", "fixed", "recursive"}
    assert info["limits"]["max_body_bytes"] == 256 * 1024
    page = client.get("/")
    assert page.status_code == 200 and "logichunk" in page.text
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "http" not in page.text.replace("http-equiv", "")  # nothing fetched from elsewhere
    for asset in ("/static/app.js", "/static/style.css", "/static/samples/zh.txt", "/static/favicon.svg"):
        assert client.get(asset).status_code == 200, asset
    docs = client.get("/docs")
    assert docs.status_code == 200 and "cdn" not in docs.text.lower()
    assert client.get("/docs-assets/swagger-ui-bundle.js").status_code == 200
    schema = client.get("/openapi.json").json()
    assert "/api/projects/{project}/search" in schema["paths"]
    assert client.get("/").headers["x-content-type-options"] == "nosniff"


def test_unknown_route_and_method_are_json(client):
    r = client.get("/api/nope", headers=H)
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = client.delete("/api/info", headers=H)
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


# ----------------------------------------------------------------------------- projects


def test_projects_create_list_conflict_and_validation(client):
    r = client.post("/api/projects", headers=H, json={"name": "小说-2"})
    assert r.status_code == 201 and r.json()["name"] == "小说-2"
    assert unquote(r.headers["location"]) == "/api/projects/小说-2"
    names = [p["name"] for p in client.get("/api/projects", headers=H).json()["projects"]]
    assert "default" in names and "小说-2" in names
    assert client.post("/api/projects", headers=H, json={"name": "小说-2"}).status_code == 409
    for bad in ({"name": "../etc"}, {"name": ""}, {"name": "a" * 101}, {}, {"name": "x", "extra": 1}):
        r = client.post("/api/projects", headers=H, json=bad)
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request", bad
    r = client.get("/api/projects/missing", headers=H)
    assert r.status_code == 404 and "missing" in r.json()["error"]["message"]
    got = client.get("/api/projects/小说-2", headers=H).json()
    assert got["documents"] == 0 and got["jobs"] == {"queued": 0, "running": 0}


# ----------------------------------------------------------------------------- documents


def test_document_tree_tiles_the_text(client, docs):
    for key, text in (("zh", ZH), ("en", EN)):
        tree = client.get(f"{P}/documents/{docs[key]}/tree", headers=H).json()
        assert tree["text"] == text
        check_document_tree(tree)
        kinds = {n["kind"] for n in tree["chunks"]}
        assert kinds == {"chapter", "parent", "child"}
        assert tree["stats"]["parents"] >= 2 and tree["stats"]["children"] >= tree["stats"]["parents"]
        blocks = tree["blocks"]
        assert "".join(text[b["start"] : b["end"]] for b in blocks) == text
        assert all(b["status"] == "clean" for b in blocks)
    en_tree = client.get(f"{P}/documents/{docs['en']}/tree", headers=H).json()
    assert en_tree["stats"]["chapters"] >= 3  # markdown headings start chapters


def test_document_list_get_and_summary(client, docs):
    listed = {d["id"]: d for d in client.get(f"{P}/documents", headers=H).json()["documents"]}
    assert listed[docs["zh"]]["status"] == "ready" and listed[docs["zh"]]["chars"] == len(ZH)
    d = client.get(f"{P}/documents/{docs['en']}", headers=H).json()
    assert d["title"] == "three texts" and d["source"] == "en.md"
    assert d["chapters"][0]["start"] == 0 and d["chapters"][-1]["end"] == len(EN)
    assert client.get(f"{P}/documents/nope", headers=H).status_code == 404
    assert client.get(f"{P}/documents/nope/tree", headers=H).status_code == 404


def test_curves_agree_with_the_tree(client, docs):
    cv = client.get(f"{P}/documents/{docs['zh']}/curves", headers=H).json()
    series = {s["name"]: s for s in cv["curves"]["series"]}
    assert {"entropy", "composite", "similarity", "window_entropy", "perplexity", "novelty"} <= set(series)
    for s in series.values():
        assert len(s["x"]) == len(s["y"]) and all(0 <= x <= len(ZH) for x in s["x"])
        assert s["x"] == sorted(s["x"])
    sim = series["similarity"]
    assert {"value": 0.3, "label": "similarity threshold", "kind": "setting"} in sim["thresholds"]
    assert not sim["higher_is_break"] and series["entropy"]["higher_is_break"]
    # the author's structure at each gap: a title line of the zh text opens a section there
    st_ = series["structure"]
    assert set(st_["y"]) <= set(STRENGTH_NAMES) and SECTION in st_["y"] and PARAGRAPH in st_["y"]
    heading_end = ZH.index("\n", ZH.index("论语"))
    assert any(y == SECTION and x < heading_end for x, y in zip(st_["x"], st_["y"], strict=True))
    tree = client.get(f"{P}/documents/{docs['zh']}/tree", headers=H).json()
    starts = {n["start"] for n in tree["chunks"] if n["kind"] != "chapter"}
    assert cv["cuts"] and all(c["offset"] in starts for c in cv["cuts"])
    assert all(c["level"] in (2, 3) for c in cv["cuts"])
    thin = client.get(f"{P}/documents/{docs['zh']}/curves?similarity=false&max_points=100", headers=H).json()
    names = {s["name"] for s in thin["curves"]["series"]}
    assert "similarity" not in names
    assert all(len(s["x"]) <= 100 for s in thin["curves"]["series"])


def test_upload_and_read_with_an_encoding(client):
    zh = "第一章 长城\n\n长城是中国古代的军事防御工程。它东起山海关，西至嘉峪关。\n"
    r = client.post("/api/read?name=zh.txt", headers=H, content=zh.encode("gbk"))  # not UTF-8, read as Chinese: said
    assert r.status_code == 200 and r.json()["text"] == zh and r.json()["decoded"] == "gb18030"
    assert client.post("/api/read", headers=H, content=zh.encode()).json()["decoded"] == ""
    tw = "長城是中國古代的軍事防禦工程。\n"
    refused = client.post("/api/read", headers=H, content=tw.encode("big5"))
    said = refused.json()["error"]["message"]
    # what to do in this service's words: its URL parameter, not the CLI's flag
    assert refused.status_code == 400 and "not valid UTF-8" in said and "the `encoding` URL parameter" in said
    assert "--encoding" not in said
    wrong = client.post("/api/read?encoding=shift_jis", headers=H, content=tw.encode("big5"))
    assert wrong.status_code == 400 and "not valid shift_jis at byte" in wrong.json()["error"]["message"]
    # a codec Python lacks is a value the parameter does not take: a 422, as every such field (README), before the
    # upload is read; so is one that is no text encoding
    for bad, said in (("nope", "unknown encoding 'nope'"), ("base64", "not a text encoding")):
        for url in ("/api/read", f"{P}/documents/upload"):
            unknown = client.post(f"{url}?encoding={bad}", headers=H, content=b"text")
            err = unknown.json()["error"]
            assert unknown.status_code == 422 and err["code"] == "invalid_request" and said in err["message"], url
    up = client.post(f"{P}/documents/upload?encoding=big5&title=tw", headers=H, files={"file": ("tw.txt", tw.encode("big5"))})
    assert up.status_code == 201 and up.json()["decoded"] == "big5", up.text
    tree = client.get(f"{P}/documents/{up.json()['id']}/tree", headers=H).json()
    assert tree["text"] == tw


def test_upload_raw_multipart_and_bad_files(client):
    body = "\ufeff第一章 开始\n\n山有小口，仿佛若有光。便舍船，从口入。\n\n初极狭，才通人。\n".encode()
    r = client.post(f"{P}/documents/upload?title=上传&wait=10", headers=H, content=body)
    assert r.status_code == 201, r.text
    tree = client.get(f"{P}/documents/{r.json()['id']}/tree", headers=H).json()
    assert tree["text"] == body.decode("utf-8-sig")  # the BOM is not text
    assert tree["document"]["title"] == "上传"
    r = client.post(f"{P}/documents/upload?wait=10", headers=H,
                    files={"file": ("notes.md", b"# Notes\n\nOne line about tea.\n\nAnother about rain.\n")})
    assert r.status_code == 201 and r.json()["title"] == "notes" and r.json()["source"] == "notes.md"
    bad = client.post(f"{P}/documents/upload", headers=H, content=b"caf\xe9 au lait, not UTF-8 " * 3)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_input"
    assert "UTF-8" in bad.json()["error"]["message"]
    binary = client.post(f"{P}/documents/upload", headers=H, content=bytes(range(256)) * 8)
    assert binary.status_code == 400 and "binary" in binary.json()["error"]["message"]
    empty = client.post(f"{P}/documents/upload", headers=H, content=b"")
    assert empty.status_code == 422
    blank = client.post(f"{P}/documents/upload", headers=H, content=b"   \n\n ")
    assert blank.status_code == 422
    said = []  # one wording for nothing and for whitespace, each naming the file (the CLI's)
    for content in (b"", b" \n\t"):
        r = client.post(f"{P}/documents/upload", headers=H, files={"file": ("x.txt", content)})
        assert r.status_code == 422
        said.append(r.json()["error"]["message"])
    assert said == ["x.txt: empty input", "x.txt: empty input (only whitespace)"]
    assert empty.json()["error"]["message"] == "upload: empty input"  # (a raw body: the name it is stored under)
    assert blank.json()["error"]["message"] == "upload: empty input (only whitespace)"
    wrong_field = client.post(f"{P}/documents/upload", headers=H, files={"doc": ("a.txt", b"text")})
    assert wrong_field.status_code == 422 and "'file'" in wrong_field.json()["error"]["message"]


def test_upload_compressed_text_is_its_text_and_a_bomb_is_refused(client, tmp_path):
    import gzip

    text = "# Notes\n\n山有小口，仿佛若有光。\n\nOne line about tea.\n"
    r = client.post(f"{P}/documents/upload?wait=10", headers=H,
                    files={"file": ("notes.md.gz", gzip.compress(text.encode()))})
    assert r.status_code == 201 and r.json()["title"] == "notes", r.text
    assert client.get(f"{P}/documents/{r.json()['id']}/tree", headers=H).json()["text"] == text
    # a few KB that would be far more than the largest body the service takes
    bomb = gzip.compress(b"a" * (2 * 1024 * 1024))
    assert len(bomb) < 16 * 1024
    r = client.post(f"{P}/documents/upload", headers=H, content=bomb)
    assert r.status_code == 400 and "decompresses to more than 262,144 bytes" in r.json()["error"]["message"]


def test_upload_a_pdf_reads_its_text_layer(client):
    from logichunk.text.pages import furniture_lines
    from pdf_helpers import make_pdf

    pages = [(["Acme Valve Manual"] if k else []) + [f"Page {k + 1} says the valve is checked by hand.", str(k + 1)]
             for k in range(4)]
    r = client.post(f"{P}/documents/upload?wait=10", headers=H, files={"file": ("manual.pdf", make_pdf(pages))})
    assert r.status_code == 201, r.text
    assert r.json()["title"] == "manual"
    tree = client.get(f"{P}/documents/{r.json()['id']}/tree", headers=H).json()
    assert tree["text"].count("\f") == 3 and "Page 4 says the valve" in tree["text"]
    scan = client.post(f"{P}/documents/upload", headers=H, files={"file": ("scan.pdf", make_pdf([[]]))})
    assert scan.status_code == 400 and "no text layer" in scan.json()["error"]["message"]
    # a search hit in the PDF names the page its text lies on; one in a document without pages, none
    for mode in ("basic", "parent", "hybrid"):
        hits = client.post(f"{P}/search", headers=H, json={"query": "Page 3 says the valve", "mode": mode,
                                                           "top_k": 10}).json()["hits"]
        mine = [h for h in hits if h["document_id"] == r.json()["id"] and h["document_span"] is not None]
        assert mine, mode
        furniture = furniture_lines(tree["text"])  # (the running headers and page numbers are no page's text)
        for h in mine:
            a, b = h["document_span"]
            on = sorted({tree["text"][:p].count("\f") + 1 for p in range(a, b) if not tree["text"][p].isspace()
                         and not any(s <= p < e for s, e in furniture)})
            assert h["document_pages"] == [on[0], on[-1]], (mode, h)
        assert all(h["document_pages"] is None for h in hits if h["document_id"] != r.json()["id"])
    # the page reads a file's text without storing it: a PDF's pages joined by form feeds
    read = client.post("/api/read", headers=H, files={"file": ("manual.pdf", make_pdf(pages))}).json()
    assert read["text"] == tree["text"] and read["pdf"] and read["pages"] == 4 and read["source"] == "manual.pdf"
    raw = client.post("/api/read?name=a.txt", headers=H, content="第一行。\n".encode("utf-16")).json()
    assert raw == {"text": "第一行。\n", "length": 5, "source": "a.txt", "pdf": False, "pages": 1,
                   "decoded": "utf-16-le"}
    bad = client.post("/api/read", headers=H, content=b"%PDF-1.4\n" + bytes(range(256)))
    assert bad.status_code == 400 and bad.json()["error"]["message"].startswith("upload: not a readable PDF")


def test_bad_document_bodies(client):
    cases = [
        (b"{not json", {"Content-Type": "application/json"}, 400, "invalid_json"),
        (b'{"title": "x"}', {"Content-Type": "application/json"}, 422, "invalid_request"),
        (b'{"title": "x", "text": ""}', {"Content-Type": "application/json"}, 422, "invalid_request"),
        (b'{"title": "x", "text": "  \\n\\n "}', {"Content-Type": "application/json"}, 422, "invalid_request"),
        (b'{"title": "x", "text": 5}', {"Content-Type": "application/json"}, 422, "invalid_request"),
        (b'{"title": "x", "text": "ok", "colour": "red"}', {"Content-Type": "application/json"}, 422, "invalid_request"),
        (b'{"title": "x", "text": "bad \\ud800 surrogate"}', {"Content-Type": "application/json"}, 422, "invalid_request"),
    ]
    for body, headers, status, code in cases:
        r = client.post(f"{P}/documents", headers={**H, **headers}, content=body)
        assert r.status_code == status, (body, r.text)
        err = r.json()["error"]
        assert err["code"] == code and err["message"], body
    r = client.post(f"{P}/documents", headers={**H, "Content-Type": "application/json"}, content=b'{"title": "x"}')
    assert r.json()["error"]["details"][0]["field"] == "text"


def test_a_json_body_that_is_not_utf8_says_so_and_where(client):
    """Invalid UTF-8 in a JSON body was a bare 400 "There was an error parsing the body"."""
    cases = [(f"{P}/documents", b'{"title": "x", "text": "caf\xe9 au lait"}', "byte 0xE9 at byte offset 27"),
             (f"{P}/documents", b'\xef\xbb\xbf{"title": "x", "text": "caf\xe9"}', "byte 0xE9 at byte offset 30"),
             ("/api/chunk", b'{"text": "ok \xed\xa0\x80 then \xff"}', "byte 0xED at byte offset 13"),
             ("/api/chunk", b'\xff{"text": "x"}', "byte 0xFF at byte offset 0"),
             # a surrogate's UTF-8-like bytes alone: JSON's reader passes them, the schema said "unable to parse"
             ("/api/chunk", b'{"text": "ok \xed\xa0\x80 then"}', "byte 0xED at byte offset 13"),
             (f"{P}/documents", b'{"title": "x", "text": "ok \xed\xb0\x80"}', "byte 0xED at byte offset 27")]
    for path, body, where in cases:
        r = client.post(path, headers={**H, "Content-Type": "application/json"}, content=body)
        assert r.status_code == 400, (body, r.text)
        err = r.json()["error"]
        assert err["code"] == "invalid_json" and "not UTF-8" in err["message"] and where in err["message"], err
        assert "\n" not in err["message"] and "Traceback" not in r.text


def test_oversized_bodies_are_refused_before_reading(client):
    big = b"a" * (256 * 1024 + 1)
    r = client.post(f"{P}/documents/upload", headers=H, content=big)
    assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
    assert r.json()["error"]["details"]["limit_bytes"] == 256 * 1024

    def stream():  # no Content-Length: counted while it streams
        for _ in range(40):
            yield b"b" * 10_000

    r = client.post(f"{P}/documents/upload", headers=H, content=stream())
    assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
    r = client.post("/api/chunk", headers=H, json={"text": "x" * 50_001})
    assert r.status_code == 413 and "service_max_chunk_chars" in r.json()["error"]["message"]


def test_delete_document(client):
    r = client.post(f"{P}/documents?wait=10", headers=H, json={"title": "gone", "text": "Short text.\n\nAnother block.\n"})
    did = r.json()["id"]
    assert client.delete(f"{P}/documents/{did}", headers=H).status_code == 204
    assert client.get(f"{P}/documents/{did}", headers=H).status_code == 404
    assert client.delete(f"{P}/documents/{did}", headers=H).status_code == 404


# ----------------------------------------------------------------------------- blocks


def test_edit_block_debounced_rechunk_and_status(client, docs):
    tree = client.get(f"{P}/documents/{docs['zh']}/tree", headers=H).json()
    blk = tree["blocks"][2]
    new = "渔人又来到桃花林。这一次他带来了酒和书，与村中老人谈到深夜。\n\n"
    r = client.put(f"{P}/blocks/{blk['id']}", headers=H, json={"content": new})
    assert r.status_code == 202
    j = r.json()
    assert j["changed"] and j["status"] in ("queued", "running") and j["revision"] == blk["revision"] + 1
    assert j["dirty"]
    b = wait_clean(client, blk["id"])
    assert b["status"] == "clean" and b["content"] == new and not b["dirty"]
    tree2 = client.get(f"{P}/documents/{docs['zh']}/tree", headers=H).json()
    check_document_tree(tree2)
    assert new in tree2["text"]
    same = client.put(f"{P}/blocks/{blk['id']}", headers=H, json={"content": new})
    assert same.status_code == 200 and not same.json()["changed"]


def test_edit_with_stale_revision_is_409(client, docs):
    blk = client.get(f"{P}/documents/{docs['en']}", headers=H).json()["blocks"][1]
    rev = blk["revision"]
    ok = client.put(f"{P}/blocks/{blk['id']}", headers=H, json={"content": "First edit.\n\n", "expected_revision": rev})
    assert ok.status_code == 202
    late = client.put(f"{P}/blocks/{blk['id']}", headers=H, json={"content": "Second.\n\n", "expected_revision": rev})
    assert late.status_code == 409
    assert late.json()["error"]["details"]["current_revision"] == rev + 1
    assert client.get(f"{P}/blocks/{blk['id']}", headers=H).json()["content"] == "First edit.\n\n"
    wait_clean(client, blk["id"])


def test_block_errors_and_project_scoping(client, docs):
    blk = client.get(f"{P}/documents/{docs['zh']}", headers=H).json()["blocks"][0]
    assert client.get(f"{P}/blocks/nope", headers=H).status_code == 404
    client.post("/api/projects", headers=H, json={"name": "other"})
    r = client.get(f"/api/projects/other/blocks/{blk['id']}", headers=H)
    assert r.status_code == 404  # ids are global, the URL's project must own the block
    assert client.put(f"/api/projects/other/blocks/{blk['id']}", headers=H, json={"content": "x"}).status_code == 404
    assert client.put(f"{P}/blocks/{blk['id']}", headers=H, json={"text": "x"}).status_code == 422
    assert client.put(f"{P}/blocks/{blk['id']}", headers=H, json={"content": "a", "expected_revision": 0}).status_code == 422
    for lax in ("1", 1.0, True):  # (strict, as top_k: a string, a float or a boolean is no revision)
        r = client.put(f"{P}/blocks/{blk['id']}", headers=H, json={"content": "a", "expected_revision": lax})
        assert r.status_code == 422, lax
    r = client.post(f"{P}/blocks/{blk['id']}/rechunk", headers=H)
    assert r.status_code == 202 and r.json()["id"] == blk["id"]
    assert wait_clean(client, blk["id"])["status"] == "clean"


def test_failed_rechunk_is_visible_and_retried(tmp_path):
    from pg_fixture import CountingEmbedder

    emb = CountingEmbedder()
    app = create_app(small_settings(str(tmp_path / "f.db")), api_key=KEY, embedder=emb, debounce_ms=50)
    with TestClient(app) as c:
        did = c.post(f"{P}/documents?wait=10", headers=H, json={"title": "t", "text": "Tea and rain.\n\nThe market.\n"}).json()["id"]
        blk = c.get(f"{P}/documents/{did}", headers=H).json()["blocks"][0]
        emb.fail = True
        c.put(f"{P}/blocks/{blk['id']}", headers=H, json={"content": "A new text about snow.\n\n"})
        end = time.monotonic() + 10
        while c.get(f"{P}/blocks/{blk['id']}", headers=H).json()["error"] is None and time.monotonic() < end:
            time.sleep(0.02)
        b = c.get(f"{P}/blocks/{blk['id']}", headers=H).json()
        assert b["dirty"] and b["error"] and b["status"] in ("failed", "queued", "running")
        assert c.get("/api/metrics", headers=H).json()["rechunk"]["failed_total"] >= 1
        emb.fail = False
        c.post(f"{P}/blocks/{blk['id']}/rechunk", headers=H)
        b = wait_clean(c, blk["id"])
        assert b["status"] == "clean" and b["error"] is None


def test_a_service_with_other_sizes_leaves_the_chunks_alone_and_says_why(tmp_path):
    db = str(tmp_path / "sizes.db")
    with TestClient(create_app(small_settings(db), api_key=KEY, debounce_ms=50)) as c:
        did = c.post(f"{P}/documents?wait=10", headers=H, json={"title": "t", "text": "Tea and rain.\n\nThe market.\n"}).json()["id"]
        blk = c.get(f"{P}/documents/{did}", headers=H).json()["blocks"][0]
    with TestClient(create_app(small_settings(db, max_parent_size=250), api_key=KEY, debounce_ms=50)) as c:
        c.put(f"{P}/blocks/{blk['id']}", headers=H, json={"content": "A new text about snow.\n\n"})
        end = time.monotonic() + 10
        while c.get(f"{P}/blocks/{blk['id']}", headers=H).json()["error"] is None and time.monotonic() < end:
            time.sleep(0.02)
        b = c.get(f"{P}/blocks/{blk['id']}", headers=H).json()
        assert b["dirty"] and "max_parent_size 300, now 250" in b["error"]
        runs = c.get("/api/metrics", headers=H).json()["rechunk"]
        # a new document is stored, not chunked, and says so; the refusal is not retried
        r = c.post(f"{P}/documents?wait=10", headers=H, json={"title": "u", "text": "More tea.\n"})
        assert r.status_code == 201 and r.json()["status"] == "failed" and not r.json()["chunked"]
        time.sleep(0.5)
        later = c.get("/api/metrics", headers=H).json()["rechunk"]
        assert later["failed_total"] == runs["failed_total"] + 1
        r = c.post(f"{P}/blocks/{blk['id']}/rechunk", headers=H)
        assert r.status_code == 202


# ----------------------------------------------------------------------------- search and bubbles


def test_search_every_mode(client, docs):
    for mode in config.RETRIEVE_MODES:
        r = client.post(f"{P}/search", headers=H, json={"query": "渔人在桃花林里看到了什么", "mode": mode, "top_k": 3})
        assert r.status_code == 200, (mode, r.text)
        j = r.json()
        assert j["mode"] == mode and 1 <= len(j["hits"]) <= (3 if mode != "hierarchical" else 50)
        assert [h["rank"] for h in j["hits"]] == list(range(1, len(j["hits"]) + 1))
        for h in j["hits"]:
            assert h["document_id"] in (docs["zh"], docs["en"]) or h["document_title"]
        if mode.startswith("graph-"):  # the walk behind the sentences comes with them
            assert "path" in j["graph"] and "stop" in json.dumps(j["graph"])
        else:
            assert "graph" not in j
    g = client.get(f"{P}/search", headers=H, params={"q": "Beagle", "mode": "hybrid", "top_k": 2})
    assert g.status_code == 200 and len(g.json()["hits"]) <= 2


def test_parent_hits_highlight_the_matched_child(client, docs):
    r = client.post(f"{P}/search", headers=H, json={"query": "桃花林 芳草鲜美 落英缤纷", "mode": "parent", "top_k": 5})
    hits = r.json()["hits"]
    assert hits
    tree = client.get(f"{P}/documents/{docs['zh']}/tree", headers=H).json()
    nodes = {n["id"]: n for n in tree["chunks"]}
    checked = 0
    for h in hits:
        v = h["view"]
        assert v["parent_id"] == h["id"] and v["child_id"].startswith(h["id"] + ".")
        a, b = v["highlight"]
        child_text = h["meta"].get("child") and v["text"][a:b]
        assert child_text
        if h["document_id"] == docs["zh"]:
            child = nodes[v["child_id"]]
            assert child_text == tree["text"][child["start"] : child["end"]]
            checked += 1
    assert checked
    basic = client.post(f"{P}/search", headers=H, json={"query": "桃花林", "mode": "basic", "top_k": 3}).json()["hits"]
    for h in basic:  # a child hit is shown inside its parent, too
        a, b = h["view"]["highlight"]
        assert h["view"]["text"][a:b] == h["text"] and h["view"]["child_id"] == h["id"]


def test_search_validation(client):
    r = client.post(f"{P}/search", headers=H, json={"query": "x", "mode": "psychic"})
    assert r.status_code == 422 and r.json()["error"]["details"][0]["choices"] == list(config.RETRIEVE_MODES)
    r = client.post(f"{P}/search", headers=H, json={"query": "q" * 201})
    assert r.status_code == 413
    r = client.post(f"{P}/search", headers=H, json={"query": "x", "top_k": 21})
    assert r.status_code == 422 and "service_max_top_k" in r.json()["error"]["message"]
    for bad in ({"query": ""}, {"query": "   "}, {"query": "x", "top_k": 0}, {"q": "x"}, {"query": "x", "top_k": True}):
        assert client.post(f"{P}/search", headers=H, json=bad).status_code == 422, bad
    assert client.post("/api/projects/missing/search", headers=H, json={"query": "x"}).status_code == 404
    # a URL parameter that is no UTF-8 (an encoded lone surrogate, a stray byte) is refused, not read as U+FFFD
    for raw in ("%ED%A0%80", "%FF%FE"):
        r = client.get(f"{P}/search?q={raw}", headers=H)
        assert r.status_code == 422 and "UTF-8" in r.json()["error"]["message"], raw
        r = client.post(f"{P}/documents/upload?title={raw}", headers=H, content=b"Some text here.\n")
        assert r.status_code == 422, raw
    assert client.get(f"{P}/search?q=%E6%A1%83%E8%8A%B1", headers=H).status_code == 200  # (UTF-8: 桃花)


def test_bubbles_for_an_unbreakable_sentence(client):
    long_sentence = "这是一句没有任何标点符号而且非常非常长的句子" * 20 + "。\n\n"
    did = client.post(f"{P}/documents?wait=10", headers=H,
                      json={"title": "长句", "text": "开头一句。\n\n" + long_sentence}).json()["id"]
    by_doc = client.get(f"{P}/bubbles", headers=H, params={"document_id": did}).json()["bubbles"]
    assert by_doc and all(b["category"] and b["priority"] in ("high", "medium", "low") for b in by_doc)
    assert any(b["category"] == "forced_split" for b in by_doc)
    tree = client.get(f"{P}/documents/{did}/tree", headers=H).json()
    assert len(tree["bubbles"]) == len(by_doc)
    check_document_tree(tree)
    everything = client.get(f"{P}/bubbles", headers=H).json()["bubbles"]
    assert len(everything) >= len(by_doc)
    assert client.get(f"{P}/bubbles", headers=H, params={"document_id": "nope"}).status_code == 404


# ----------------------------------------------------------------------------- playground


@pytest.mark.parametrize("method,sizes", [("logic-chain", [300, 150]), ("cliff", [400, 200]), ("fused", [400, 200]),
                                          ("parent-child", [400, 120]), ("fixed", [200]), ("recursive", [200])])
def test_chunk_methods_tile_the_text(client, method, sizes):
    for text in (ZH, EN):
        r = client.post("/api/chunk", headers=H, json={"text": text, "method": method, "sizes": sizes})
        assert r.status_code == 200, r.text
        j = r.json()
        roots = [c for c in j["chunks"] if c["level"] == 1]
        assert roots[0]["start"] == 0 and roots[-1]["end"] == len(text)
        assert all(a["end"] == b["start"] for a, b in zip(roots, roots[1:], strict=False))
        assert [c["offset"] for c in j["cuts"] if c["level"] == 1] == [c["start"] for c in roots[1:]]
        names = {s["name"] for s in j["curves"]["series"]}
        assert "entropy" in names and ("similarity" in names) == (method in ("cliff", "fused", "parent-child"))
        if method in ("logic-chain", "fused"):
            assert max(c["size"] for c in roots) <= sizes[0]


def test_chunk_bubbles_and_bad_requests(client):
    text = "短句。" + "很长的一句话没有标点" * 60 + "。结尾。"
    j = client.post("/api/chunk", headers=H, json={"text": text, "method": "logic-chain", "sizes": [100, 50]}).json()
    assert j["bubbles"] and j["bubbles"][0]["category"] == "forced_split"
    assert j["stats"]["bubbles"] == len(j["bubbles"])
    bad = [({"text": "x", "method": "magic"}, 422), ({"text": "x", "sizes": [100, 200]}, 400),
           ({"text": "x", "sizes": [0]}, 422), ({"text": "x", "sizes": []}, 422), ({"text": "x", "unit": "words"}, 422),
           ({"text": ""}, 422), ({"method": "fixed"}, 422), ({"text": "x", "max_points": 5}, 422)]
    for body, status in bad:
        r = client.post("/api/chunk", headers=H, json=body)
        assert r.status_code == status, (body, r.text)
        assert r.json()["error"]["message"]


_texts = st.lists(st.sampled_from(["渔人甚异之。", "Alice was tired. ", "“为什么？”", "\n\n", "😀 emoji 👩‍👩‍👧. ",
                                   "Mr. Smith paid $3.50 at 5 p.m. ", "第二章 开始\n", "# Title\n", "a" * 40]),
                   min_size=1, max_size=30).map("".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_texts, method=st.sampled_from(["logic-chain", "fixed", "recursive"]))
def test_chunk_spans_always_tile_any_text(client, text, method):
    r = client.post("/api/chunk", headers=H, json={"text": text, "method": method, "sizes": [60, 30]})
    if text.isspace():  # (nothing to chunk: refused as the CLI and the MCP tool refuse it)
        assert (r.status_code, r.json()["error"]["message"]) == (422, "text is only whitespace")
        return
    j = r.json()
    roots = [c for c in j["chunks"] if c["level"] == 1]
    assert "".join(text[c["start"] : c["end"]] for c in roots) == text
    kids: dict[str, list[dict]] = {}
    for c in j["chunks"]:
        if c["parent"]:
            kids.setdefault(c["parent"], []).append(c)
    by_id = {c["id"]: c for c in j["chunks"]}
    for pid, ks in kids.items():
        assert "".join(text[k["start"] : k["end"]] for k in ks) == text[by_id[pid]["start"] : by_id[pid]["end"]]


# ----------------------------------------------------------------------------- metrics, failures


def test_metrics_count_searches_jobs_and_cache(client, docs):
    before = client.get("/api/metrics", headers=H).json()
    n0 = before["search"]["latency"].get("hybrid", {}).get("count", 0)
    for _ in range(3):
        client.post(f"{P}/search", headers=H, json={"query": "tea", "mode": "hybrid"})
    m = client.get("/api/metrics", headers=H).json()
    lat = m["search"]["latency"]["hybrid"]
    assert lat["count"] == n0 + 3 and lat["p50_ms"] <= lat["p99_ms"] <= lat["max_ms"]
    assert m["rechunk"]["completed_total"] >= 2
    assert set(m["jobs"]) == {"queued", "running", "failed_blocks"}
    emb = m["embedding"]
    assert emb["requests"] >= emb["misses"] > 0 and 0.0 <= emb["hit_rate"] <= 1.0
    q = emb["store"]["queries"]
    assert q["requests"] >= 3 and q["misses"] <= q["requests"] - 2  # the same query thrice: embedded once
    assert m["http"]["routes"]["POST /api/projects/{project}/search"]["200"] >= 3
    text = client.get("/api/metrics?format=prometheus", headers=H).text
    assert 'logichunk_search_latency_seconds{mode="hybrid",quantile="0.99"}' in text
    assert "logichunk_embedding_cache_hit_ratio" in text and "# TYPE logichunk_chunk_jobs gauge" in text
    assert client.get("/api/metrics?format=xml", headers=H).status_code == 422


def test_internal_errors_are_json_without_traceback(tmp_path, monkeypatch):
    app = create_app(small_settings(str(tmp_path / "e.db")), api_key=KEY, debounce_ms=50)
    with TestClient(app, raise_server_exceptions=False) as c:
        store = app.state.service.registry.default.store

        def boom(*a, **k):
            raise RuntimeError("disk on fire")

        monkeypatch.setattr(store, "documents", boom)
        r = c.get(f"{P}/documents", headers=H)
        assert r.status_code == 500 and r.json()["error"]["code"] == "internal_error"
        assert "Traceback" not in r.text and "disk on fire" not in r.text
        monkeypatch.undo()
        store.close()  # the database goes away: health says so, routes answer 503
        h = c.get("/api/health")
        assert h.status_code == 503 and h.json()["status"] == "unavailable"
        r = c.get(f"{P}/documents", headers=H)
        assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable"


def test_the_explorer_schema_is_openapi_30(client):
    full = client.get("/openapi.json").json()
    old = client.get("/docs-openapi.json").json()
    assert full["openapi"].startswith("3.1") and old["openapi"] == "3.0.3"
    assert set(old["paths"]) == set(full["paths"])
    text = json.dumps(old)
    assert '{"type": "null"}' not in text and '"const"' not in text
    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("exclusiveMinimum", "exclusiveMaximum"):
                    assert isinstance(v, bool)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(old)


def test_the_schema_documents_the_real_error_answers(client):
    schema = client.get("/openapi.json").json()
    text = json.dumps(schema)
    assert "HTTPValidationError" not in text  # 422 has the body the service really sends
    put = schema["paths"]["/api/projects/{project}/blocks/{block_id}"]["put"]["responses"]
    assert {"401", "404", "409", "422", "503"} <= set(put)
    ref = put["409"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert set(schema["components"]["schemas"][ref]["properties"]) == {"error"}
    # and the answer of a real conflict has that shape
    r = client.put(f"{P}/blocks/nope", headers=H, json={"content": "x"})
    assert r.status_code == 404 and set(r.json()) == {"error"} and {"code", "message"} <= set(r.json()["error"])


# ----------------------------------------------------------------------------- issue 21: idempotent uploads


def test_the_same_text_twice_is_one_document_unless_a_copy_is_asked(client):
    text = "# Idempotent\n\nThe same upload twice is one document. Rain on the tea house.\n"
    before = len(client.get(f"{P}/documents", headers=H).json()["documents"])
    a = client.post(f"{P}/documents", headers=H, json={"title": "same", "text": text})
    b = client.post(f"{P}/documents", headers=H, json={"title": "same", "text": text})
    assert a.status_code == 201 and a.json()["existing"] is False
    assert b.status_code == 200 and b.json()["existing"] is True and b.json()["id"] == a.json()["id"]
    assert b.headers["location"].endswith(a.json()["id"])
    up = client.post(f"{P}/documents/upload", headers=H, files={"file": ("same.md", text.encode())})
    assert up.status_code == 200 and up.json()["id"] == a.json()["id"]  # an upload of the same bytes too
    assert len(client.get(f"{P}/documents", headers=H).json()["documents"]) == before + 1
    c = client.post(f"{P}/documents?copy=true", headers=H, json={"title": "same", "text": text})
    assert c.status_code == 201 and c.json()["id"] != a.json()["id"]
    assert len(client.get(f"{P}/documents", headers=H).json()["documents"]) == before + 2
    other = client.post(f"{P}/documents", headers=H, json={"title": "same", "text": text + "More.\n"})
    assert other.status_code == 201  # other text: a new document


def test_idempotency_key_returns_the_first_answers_document(client):
    k = {**H, "Idempotency-Key": "retry-7f3a"}
    text = "A retried request with a key. Kept once.\n"
    a = client.post(f"{P}/documents?copy=true", headers=k, json={"title": "k", "text": text})
    b = client.post(f"{P}/documents?copy=true", headers=k, json={"title": "k", "text": text})
    assert a.status_code == 201 and b.status_code == 200 and a.json()["id"] == b.json()["id"]  # copy asked, once
    reused = client.post(f"{P}/documents", headers=k, json={"title": "k", "text": "Another text.\n"})
    assert reused.status_code == 422 and reused.json()["error"]["code"] == "idempotency_key_reused"
    bad = client.post(f"{P}/documents", headers={**H, "Idempotency-Key": "x" * 300}, json={"title": "k", "text": "t"})
    assert bad.status_code == 422
    assert client.delete(f"{P}/documents/{a.json()['id']}", headers=H).status_code in (200, 204)
    again = client.post(f"{P}/documents?copy=true", headers=k, json={"title": "k", "text": text})
    assert again.status_code == 201 and again.json()["id"] != a.json()["id"]  # the document is gone: stored anew


def test_an_upload_with_a_stray_utf16_mark_is_refused_not_stored_as_mojibake(client):
    # issue 21: FF FE in front of UTF-8 text was decoded as UTF-16 and stored (201)
    r = client.post(f"{P}/documents/upload", headers=H, content=b"\xff\xfe" + b"Plain text, not UTF-16.\n")
    assert r.status_code == 400 and "UTF-16" in r.json()["error"]["message"]
    real = client.post(f"{P}/documents/upload?copy=true", headers=H,
                       content=b"\xff\xfe" + "Real UTF-16 text.\n".encode("utf-16-le"))
    assert real.status_code == 201


def test_segment_route_gives_topics_that_tile_the_text(client):
    text = "## Cats\n\nCats purr softly. A cat sleeps all day.\n\n## Rockets\n\nRockets burn fuel. A stage drops.\n"
    r = client.post("/api/segment", headers=H, json={"text": text})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [t["start"] for t in body["topics"]] == [0, text.index("## Rockets")]
    assert body["topics"][-1]["end"] == len(text) == body["length"] and body["stats"]["vectors"] == "lexical"
    assert body["stats"]["cost"] == "evidence" and body["stats"]["penalty"] > 0
    assert client.post("/api/segment", headers=H, json={"text": "x", "units": "words"}).status_code == 422
    one = client.post("/api/segment", headers=H, json={"text": text, "topics": 1}).json()
    assert len(one["topics"]) == 2 and one["stats"]["count"] == "given"  # headings still open topics
    assert client.post("/api/segment", headers=H, json={"text": text, "topics": 0}).status_code == 422
    assert client.post("/api/segment", json={"text": "x"}).status_code == 401

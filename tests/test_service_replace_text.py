"""``PUT /api/projects/{p}/documents/{doc}``: a document's whole text replaced (an editor's buffer); only the
blocks where it changed are written and their chapters re-chunked after the debounce delay; the tree then
tiles the new text; 409 on a stale base with nothing written, 422 on bad values, 404 on an unknown document."""

from __future__ import annotations

import hashlib

import pytest

pytest.importorskip("fastapi", reason="the service tests need the [service] extra (fastapi, httpx)")
from fastapi.testclient import TestClient  # noqa: E402

from logichunk.service.app import create_app  # noqa: E402
from service_helpers import KEY, H, check_document_tree, small_settings  # noqa: E402

P = "/api/projects/default/documents"
TEXT = "".join(f"# Part {c}\n\n" + "".join(f"Paragraph {c}.{i} tells of tea, rain and the hills in turn. It goes on a while "
                                            f"about the market.\n\n" for i in range(4)) for c in range(3))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = create_app(small_settings(str(tmp_path_factory.mktemp("put") / "p.db")), api_key=KEY, debounce_ms=30)
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="module")
def doc(client) -> str:
    r = client.post(f"{P}?wait=20", headers=H, json={"title": "t", "text": TEXT})
    assert r.status_code == 201 and r.json()["chunked"]
    return r.json()["id"]


def _blocks(client, doc: str) -> dict[str, dict]:
    return {b["id"]: b for b in client.get(f"{P}/{doc}", headers=H).json()["blocks"]}


def test_a_paragraph_inserted_touches_its_chapter_only_and_the_tree_tiles_the_text(client, doc):
    before = client.get(f"{P}/{doc}", headers=H).json()
    tree = client.get(f"{P}/{doc}/tree", headers=H).json()
    text = tree["text"]
    assert before["sha256"] == _sha(text)
    cut = text.index("\n\n", len(text) // 2) + 2
    new = text[:cut] + "A paragraph the assistant wrote. 新的一段 🐱\r\n\r\n" + text[cut:]
    r = client.put(f"{P}/{doc}?wait=20", headers=H, json={"text": new, "expected_sha256": before["sha256"]})
    body = r.json()
    assert r.status_code == 202 and body["changed"] and body["chunked"] and body["sha256"] == _sha(new)
    assert len(body["blocks_added"]) == 1 and body["blocks_changed"] == [] and body["blocks_removed"] == []
    after = client.get(f"{P}/{doc}", headers=H).json()
    old = {b["id"]: b for b in before["blocks"]}
    moved = [b for b in after["blocks"] if b["id"] in old and b["revision"] != old[b["id"]]["revision"]]
    chapter = next(b["chapter_id"] for b in after["blocks"] if b["id"] == body["blocks_added"][0])
    assert all(b["chapter_id"] == chapter for b in moved)  # (blocks of other chapters untouched)
    assert len(after["blocks"]) == len(before["blocks"]) + 1 and after["status"] == "ready"
    tree = client.get(f"{P}/{doc}/tree", headers=H).json()
    assert tree["text"] == new
    check_document_tree(tree)
    same = client.put(f"{P}/{doc}", headers=H, json={"text": new})
    assert same.status_code == 200 and not same.json()["changed"]


def test_a_stale_base_is_a_409_with_nothing_written(client, doc):
    now = client.get(f"{P}/{doc}", headers=H).json()
    r = client.put(f"{P}/{doc}", headers=H, json={"text": "Other text.\n", "expected_sha256": "0" * 64})
    err = r.json()["error"]
    assert r.status_code == 409 and err["code"] == "conflict" and err["details"]["current_sha256"] == now["sha256"]
    assert client.get(f"{P}/{doc}", headers=H).json()["blocks"] == now["blocks"]


@pytest.mark.parametrize("body, status", [({"text": ""}, 422), ({"text": "x", "expected_sha256": "abc"}, 422),
                                          ('{"text": "a\\ud800"}', 422), ({"text": "x", "other": 1}, 422),
                                          ({"text": "x" * 300_000}, 413)])
def test_bad_values(client, doc, body, status):
    if isinstance(body, str):  # (an unpaired surrogate: JSON can say it, httpx cannot encode it)
        r = client.put(f"{P}/{doc}", headers={**H, "Content-Type": "application/json"}, content=body)
    else:
        r = client.put(f"{P}/{doc}", headers=H, json=body)
    assert r.status_code == status, r.text
    assert client.put(f"{P}/nope", headers=H, json={"text": "x"}).status_code == 404

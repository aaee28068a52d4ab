"""The HTTP service's refs: every search hit's ``ref`` reads its text back at ``GET .../chunk?ref=``;
kept across a block edit (``PUT .../blocks/B``, re-chunked), a ref reads the same text, renumbered
(``moved_from``, the answer true to its documented model) or is refused with 409 ``ref_changed``;
a malformed ref is a 400, an unknown document or an untagged id naming nothing a 404."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("fastapi", reason="the service tests need the [service] extra (fastapi, httpx)")
from fastapi.testclient import TestClient  # noqa: E402

from logichunk.service import responses  # noqa: E402
from logichunk.service.app import create_app  # noqa: E402
from service_helpers import KEY, H, small_settings  # noqa: E402

P = "/api/projects/default"
BLOCKS = ["".join(f"Paragraph {b}, sentence {k}: the river runs past the tea market in winter. " for k in range(4))
          + "\n\n" for b in range(5)]


def _wait_clean(c: TestClient, block: str) -> None:
    end = time.monotonic() + 30
    while c.get(f"{P}/blocks/{block}", headers=H).json()["status"] != "clean":
        assert time.monotonic() < end, "the re-chunk did not finish"
        time.sleep(0.05)


def test_refs_kept_across_an_edit(tmp_path):
    app = create_app(small_settings(str(tmp_path / "r.db"), child_target_size=50, child_max_size=80), api_key=KEY,
                     debounce_ms=60_000)
    with TestClient(app) as c:
        doc = c.post(f"{P}/documents", params={"wait": 30}, json={"title": "river", "text": "".join(BLOCKS)},
                     headers=H).json()["id"]
        hits = c.post(f"{P}/search", json={"query": "river tea winter", "mode": "basic", "top_k": 20},
                      headers=H).json()["hits"]
        assert len(hits) >= 8
        for h in hits:
            got = c.get(f"{P}/chunk", params={"ref": h["ref"]}, headers=H)
            assert got.status_code == 200 and got.json()["text"] == h["text"] and got.json()["ref"] == h["ref"]
        blocks = c.get(f"{P}/documents/{doc}", headers=H).json()["blocks"]
        for b, content in ((blocks[0], BLOCKS[0].rstrip() + " " + BLOCKS[3] * 2), (blocks[-1], "Nothing old.\n\n")):
            assert c.put(f"{P}/blocks/{b['id']}", json={"content": content}, headers=H).status_code == 202
        for b in (blocks[0], blocks[-1]):  # now, not after the debounce
            assert c.post(f"{P}/blocks/{b['id']}/rechunk", headers=H).status_code == 202
            _wait_clean(c, b["id"])
        moved = changed = 0
        for h in hits:
            got = c.get(f"{P}/chunk", params={"ref": h["ref"]}, headers=H)
            if got.status_code == 409:
                err = got.json()["error"]
                assert err["code"] == "ref_changed" and err["message"].endswith("search again")
                changed += 1
                continue
            body = got.json()
            assert got.status_code == 200 and body["text"] == h["text"]
            responses.ChunkByRef.model_validate(body, extra="forbid", strict=True)
            if "moved_from" in body:
                assert body["moved_from"] == h["ref"] and body["ref"] != h["ref"]
                moved += 1
        assert moved >= 3 and changed >= 1, (moved, changed)
        for ref, status, code in ((hits[0]["ref"][:-1] + "g", 400, "bad_input"), ("nope#1.1", 404, "not_found"),
                                  (f"{doc}#1.99", 404, "not_found"), (f"{doc}#9", 404, "not_found")):
            got = c.get(f"{P}/chunk", params={"ref": ref}, headers=H)
            assert (got.status_code, got.json()["error"]["code"]) == (status, code), ref

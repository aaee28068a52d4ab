"""The service as users run it: ``logichunk serve`` on a real uvicorn process on loopback."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

httpx = pytest.importorskip("httpx", reason="the service tests need the [service] extra")
pytest.importorskip("uvicorn", reason="the service tests need the [service] extra")

from logichunk import config  # noqa: E402
from logichunk.config import Settings  # noqa: E402
from logichunk.store import Store  # noqa: E402
from service_helpers import EN, KEY, ROOT, ZH, H, check_document_tree, serve  # noqa: E402

P = "/api/projects/default"
SMALL = ["--debounce-ms", "200", "--max-body-bytes", "65536"]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("live") / "live.db")
    with serve(db, *SMALL) as (url, proc, lines):
        with httpx.Client(base_url=url, headers=H, timeout=30) as c:
            zh = c.post(f"{P}/documents?wait=30", json={"title": "桃花源记", "text": ZH}).json()
            en = c.post(f"{P}/documents?wait=30", json={"title": "three texts", "text": EN}).json()
            yield {"url": url, "client": c, "proc": proc, "lines": lines, "db": db, "zh": zh["id"], "en": en["id"]}


def test_banner_and_key_from_the_environment(live):
    lines = live["lines"]
    assert lines[0].startswith("logichunk serve: http://127.0.0.1:")
    assert "API key: from $LOGICHUNK_SERVICE_KEY" in lines
    assert not any(KEY in line for line in lines)  # a key from the environment is never echoed
    c = live["client"]
    assert httpx.get(live["url"] + "/api/health").json()["status"] == "ok"
    assert httpx.get(live["url"] + "/api/info").status_code == 401
    assert httpx.get(live["url"] + "/api/info", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    assert c.get("/").headers["content-security-policy"].startswith("default-src 'self'")


def test_generated_key_is_printed_and_works(tmp_path):
    with serve(str(tmp_path / "g.db"), key=None) as (url, _proc, lines):
        key_line = next(line for line in lines if line.startswith("API key: "))
        key = key_line.split(": ", 1)[1]
        assert len(key) >= 24 and "$" not in key
        assert any(line.startswith("open:") and f"#key={key}" in line for line in lines)
        assert httpx.get(url + "/api/info", headers={"X-API-Key": key}).status_code == 200
        wrong = key[:-1] + ("y" if key.endswith("x") else "x")  # always a different key
        assert httpx.get(url + "/api/info", headers={"X-API-Key": wrong}).status_code == 401


def _serve_fails(args, env_key=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("LOGICHUNK_API_KEY", None)
    env.pop("LOGICHUNK_SERVICE_KEY", None)
    if env_key:
        env["LOGICHUNK_SERVICE_KEY"] = env_key
    return subprocess.run([sys.executable, "-m", "logichunk.cli", "serve", *args], capture_output=True, text=True,
                          env=env, timeout=60)


def test_startup_errors_are_one_line(tmp_path):
    r = _serve_fails(["--db", str(tmp_path / "no" / "such" / "x.db"), "--port", "0"])
    assert r.returncode == 2 and "Traceback" not in r.stderr and "does not exist" in r.stderr
    r = _serve_fails(["--db", str(tmp_path / "k.db"), "--port", "0"], env_key="short")
    assert r.returncode == 2 and "at least 16" in r.stderr and "Traceback" not in r.stderr
    import socket

    with socket.socket() as s:  # a port held open here (bound at once: no other process can take it first)
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = _serve_fails(["--db", str(tmp_path / "p.db"), "--port", str(port)], env_key=KEY)
    assert r.returncode == 2 and "in use" in r.stderr and "Traceback" not in r.stderr


def test_oversized_uploads_on_the_wire(live):
    c = live["client"]
    r = c.post(f"{P}/documents/upload", content=b"x" * 70_000)
    assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"

    def chunks():  # chunked transfer encoding: no Content-Length to refuse up front
        for _ in range(20):
            yield b"y" * 8192

    r = c.post(f"{P}/documents/upload", content=chunks())
    assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
    assert c.get("/api/health").status_code == 200  # and the server is fine


def _post_whole(url: str, path: str, body: bytes, *, chunked: bool) -> tuple[int, dict, str | None]:
    """POST with the standard library's client, which sends the whole body before it reads the answer (as
    requests and urllib do; httpx reads an answer that comes while it writes, so it never met the reset):
    the status, the JSON body and the Connection header."""
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        if chunked:  # no Content-Length: the limit is passed mid-stream
            pieces = (body[i:i + 65536] for i in range(0, len(body), 65536))
            conn.request("POST", path, body=pieces, headers=H, encode_chunked=True)
        else:
            conn.request("POST", path, body=body, headers=H)
        r = conn.getresponse()
        return r.status, json.loads(r.read()), r.getheader("connection")
    finally:
        conn.close()


def test_an_oversized_body_gets_its_413_not_a_reset(live):
    """The 413 was sent before the body was read and the connection closed under a client still sending
    (ConnectionResetError, BrokenPipeError): 8 MiB is far more than the socket buffers hold. The refused
    body is now read and dropped first (up to limits.drain_cap: here 16 MiB)."""
    big = b"x" * (8 * 1024 * 1024)
    for chunked in (False, True):
        status, body, connection = _post_whole(live["url"], f"{P}/documents/upload", big, chunked=chunked)
        assert status == 413 and body["error"]["code"] == "too_large", (chunked, body)
        assert body["error"]["details"]["limit_bytes"] == 65536 and connection == "close"
    assert live["client"].get("/api/health").status_code == 200


def test_a_client_waiting_for_100_continue_gets_the_413_at_once(live):
    """Reading a refused body makes the server send 100 Continue: a client that waits for it before sending
    (curl does for large bodies) would be asked for the body only to have it dropped."""
    u = urlsplit(live["url"])
    head = (f"POST {P}/documents/upload HTTP/1.1\r\nHost: {u.netloc}\r\nX-API-Key: {KEY}\r\n"
            f"Content-Length: {8 * 1024 * 1024}\r\nExpect: 100-continue\r\n\r\n")
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(head.encode())
        answer = s.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:80]


def test_every_route_over_the_wire(live):
    c = live["client"]
    assert c.post("/api/projects", json={"name": "wire"}).status_code == 201
    assert any(p["name"] == "wire" for p in c.get("/api/projects").json()["projects"])
    assert c.get("/api/projects/wire").status_code == 200
    doc = c.post("/api/projects/wire/documents/upload?title=t&wait=20",
                 files={"file": ("t.txt", "甲乙丙。丁戊己。\n\n庚辛壬癸。\n".encode())}).json()
    assert doc["status"] == "ready"
    d = c.get(f"/api/projects/wire/documents/{doc['id']}").json()
    assert c.get("/api/projects/wire/documents").json()["documents"][0]["id"] == doc["id"]
    check_document_tree(c.get(f"/api/projects/wire/documents/{doc['id']}/tree").json())
    assert c.get(f"/api/projects/wire/documents/{doc['id']}/curves").status_code == 200
    b = d["blocks"][0]
    assert c.get(f"/api/projects/wire/blocks/{b['id']}").json()["content"] == "甲乙丙。丁戊己。\n\n"
    assert c.put(f"/api/projects/wire/blocks/{b['id']}", json={"content": "子丑寅卯。\n\n"}).status_code == 202
    assert c.post(f"/api/projects/wire/blocks/{b['id']}/rechunk").status_code == 202
    for mode in config.RETRIEVE_MODES:
        assert c.get("/api/projects/wire/search", params={"q": "庚辛", "mode": mode}).status_code == 200
    assert c.get("/api/projects/wire/bubbles").status_code == 200
    assert c.post("/api/chunk", json={"text": EN, "method": "recursive", "sizes": [300]}).status_code == 200
    assert "logichunk_http_requests_total" in c.get("/api/metrics", params={"format": "prometheus"}).text
    assert c.delete(f"/api/projects/wire/documents/{doc['id']}").status_code == 204


def test_concurrent_edits_to_one_block(live):
    """Twelve writers hit one block at once: every write is applied in some order (revisions count
    them all), the debounced re-chunk runs far fewer than twelve times, and the final chunks match the
    final text exactly - nothing lost, nothing stale."""
    c = live["client"]
    doc = c.get(f"{P}/documents/{live['zh']}").json()
    blk = doc["blocks"][3]
    rev0 = blk["revision"]
    jobs0 = c.get("/api/metrics").json()["rechunk"]["completed_total"]
    texts = [f"第{i}次修改：渔人第{i}次来到桃花源，村人又设酒杀鸡作食。\n\n" for i in range(12)]
    barrier = threading.Barrier(len(texts))

    def put(t: str) -> int:
        with httpx.Client(base_url=live["url"], headers=H, timeout=30) as own:
            barrier.wait()
            return own.put(f"{P}/blocks/{blk['id']}", json={"content": t}).status_code

    with ThreadPoolExecutor(len(texts)) as ex:
        codes = list(ex.map(put, texts))
    assert codes == [202] * len(texts)
    after = c.get(f"{P}/blocks/{blk['id']}").json()
    assert after["revision"] == rev0 + len(texts)
    assert after["content"] in texts
    end = time.monotonic() + 20
    while c.get(f"{P}/blocks/{blk['id']}").json()["status"] != "clean" and time.monotonic() < end:
        time.sleep(0.05)
    final = c.get(f"{P}/blocks/{blk['id']}").json()
    assert final["status"] == "clean" and final["content"] == after["content"]
    tree = c.get(f"{P}/documents/{live['zh']}/tree").json()
    check_document_tree(tree)
    assert after["content"] in tree["text"]
    jobs = c.get("/api/metrics").json()["rechunk"]["completed_total"] - jobs0
    assert 1 <= jobs <= len(texts) // 2, jobs  # debounced: usually 1; a starved machine may split the burst


def test_concurrent_edits_with_expected_revision_one_wins(live):
    c = live["client"]
    blk = c.get(f"{P}/documents/{live['en']}").json()["blocks"][2]
    rev = blk["revision"]
    texts = [f"Writer {i} rewrote this block about the garden.\n\n" for i in range(8)]
    barrier = threading.Barrier(len(texts))

    def put(t: str) -> tuple[int, str]:
        with httpx.Client(base_url=live["url"], headers=H, timeout=30) as own:
            barrier.wait()
            r = own.put(f"{P}/blocks/{blk['id']}", json={"content": t, "expected_revision": rev})
            return r.status_code, t

    with ThreadPoolExecutor(len(texts)) as ex:
        results = list(ex.map(put, texts))
    winners = [t for code, t in results if code == 202]
    assert len(winners) == 1 and sorted(code for code, _ in results) == [202] + [409] * 7
    assert c.get(f"{P}/blocks/{blk['id']}").json()["content"] == winners[0]


def test_searches_during_edits_never_fail(live):
    c = live["client"]
    blocks = c.get(f"{P}/documents/{live['en']}").json()["blocks"]
    errors: list[str] = []
    stop = time.monotonic() + 2.0

    def searcher(i: int) -> int:
        n = 0
        with httpx.Client(base_url=live["url"], headers=H, timeout=30) as own:
            while time.monotonic() < stop:
                mode = config.RETRIEVE_MODES[(i + n) % len(config.RETRIEVE_MODES)]
                r = own.post(f"{P}/search", json={"query": "Alice and the rabbit" if n % 2 else "桃花", "mode": mode})
                if r.status_code != 200:
                    errors.append(f"{mode}: {r.status_code} {r.text[:200]}")
                n += 1
        return n

    def editor() -> int:
        n = 0
        with httpx.Client(base_url=live["url"], headers=H, timeout=30) as own:
            while time.monotonic() < stop:
                b = blocks[n % len(blocks)]
                r = own.put(f"{P}/blocks/{b['id']}", json={"content": f"Edit {n}: the Beagle sailed on.\n\n"})
                if r.status_code not in (200, 202):
                    errors.append(f"edit: {r.status_code} {r.text[:200]}")
                n += 1
                time.sleep(0.05)
        return n

    with ThreadPoolExecutor(5) as ex:
        futs = [ex.submit(searcher, i) for i in range(4)] + [ex.submit(editor)]
        done = [f.result() for f in futs]
    assert not errors, errors[:5]
    assert sum(done[:4]) > 10 and done[4] > 3


def test_sigterm_flushes_pending_edits(tmp_path):
    db = str(tmp_path / "stop.db")
    with serve(db, "--debounce-ms", "60000") as (url, proc, _lines):
        with httpx.Client(base_url=url, headers=H, timeout=30) as c:
            doc = c.post(f"{P}/documents?wait=20", json={"title": "t", "text": "One block.\n\nTwo block.\n"}).json()
            blk = c.get(f"{P}/documents/{doc['id']}").json()["blocks"][0]
            r = c.put(f"{P}/blocks/{blk['id']}", json={"content": "Changed before shutdown.\n\n"})
            assert r.json()["status"] == "queued" and r.json()["due_in_ms"] > 50_000
        proc.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then re-raises the signal it caught (the conventional status)
        assert proc.wait(60) in (0, -signal.SIGTERM)
    with Store.open(db, settings=Settings(embedder="hash:128")) as store:
        b = store.get_block(blk["id"])
        assert not b.is_dirty and b.content == "Changed before shutdown.\n\n"
        assert any("Changed before shutdown" in ch.content for ch in store.chunks(level="child"))


def test_readme_curl_lines_work(live):
    """The README's curl examples, run as written against the live server (KEY, DOC and BLOCK filled in)."""
    import json
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## HTTP service and web page", 1)[1].split("\n## ", 1)[0]
    block = next(b for b in re.findall(r"```bash\n(.*?)```", section, re.S) if "curl" in b)
    commands = [c.strip() for c in re.sub(r"\\\n\s*", " ", block).splitlines()
                if c.strip().startswith("curl")]
    assert len(commands) >= 10
    c = live["client"]
    env = dict(os.environ, K=KEY, U=live["url"])
    doc = block_id = None
    for cmd in commands:
        if "DOC" in cmd or "BLOCK" in cmd:
            if doc is None:
                docs = c.get(f"{P}/documents").json()["documents"]
                # the README's upload (or, its text being stored already by the module's server, that document:
                # an upload is idempotent by content)
                doc = next(d["id"] for d in docs if d["source"] == "zh_public_domain.txt" or d["title"] == "桃花源记")
                block_id = c.get(f"{P}/documents/{doc}").json()["blocks"][0]["id"]
            cmd = cmd.replace("DOC", doc).replace("BLOCK", block_id)
        cmd = cmd.split("  #", 1)[0]  # the trailing comments
        r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
        assert r.returncode == 0, (cmd, r.stderr)
        if "prometheus" in cmd:
            assert "logichunk_search_latency_seconds" in r.stdout
            continue
        body = json.loads(r.stdout)
        assert not isinstance(body.get("error"), dict), (cmd, body)  # an error body, not a block's error: null


def test_service_key_is_separate_from_the_model_endpoints_key():
    from logichunk.errors import InputError
    from logichunk.service.auth import key_from_env

    own, shared = "s" * 20, "m" * 20
    assert key_from_env({"LOGICHUNK_SERVICE_KEY": own, "LOGICHUNK_API_KEY": shared}) == (own, "LOGICHUNK_SERVICE_KEY", "")
    key, name, note = key_from_env({"LOGICHUNK_API_KEY": shared})
    assert (key, name) == (shared, "LOGICHUNK_API_KEY") and "LOGICHUNK_SERVICE_KEY" in note
    assert key_from_env({}) == (None, "", "")
    with pytest.raises(InputError, match="LOGICHUNK_API_KEY is too short"):
        key_from_env({"LOGICHUNK_API_KEY": "short"})

"""Load test of ``logichunk serve`` on loopback: N concurrent clients for a fixed time, a mix of
searches (every retrieval mode, Chinese and English queries) and block edits (which queue debounced
re-chunks in the background), then a check that every edit was re-chunked.

    python bench/bench_service.py                         # 30 s, 20 clients, 20 % edits, default embedder
    python bench/bench_service.py --embedder hash --duration 10 --clients 8

The server is a real ``logichunk serve`` subprocess on 127.0.0.1 with a fresh SQLite database, loaded
with public data from ``../shared/data`` (see ``bench/corpora.py``; the repository's two examples
when the data is absent). Prints a markdown table: requests, errors, client-side p50/p95/p99 per
operation, throughput, server-side search percentiles per mode, re-chunk jobs, the time the queue
took to drain after the load stopped, CPU seconds of server and client, and the load average.
Exit status 1 when any request failed or a block was left dirty.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

QUERIES = ["渔人在桃花林里看到了什么", "学而时习之", "故乡的天气怎么样", "比赛的结果如何", "这座城市的历史",
           "who wrote about the Beagle", "what did Alice see", "the right of the people to alter government",
           "interest rates and inflation", "patients in the clinical trial", "the president spoke about the economy"]


def corpus(per_lang: int) -> list[tuple[str, str]]:
    """(title, text) documents: public data when present, else the repository's examples."""
    why = "bench/corpora.py could not be imported"
    try:
        import corpora

        why = corpora.missing_message() or ""
        if not why:
            out = []
            for name, (text, _info) in corpora.build(("en", "zh"), per_lang).items():
                # whole corpus documents can be far over the target: cut at the blank line before it
                cut = text.encode("utf-8")[:per_lang].decode("utf-8", "ignore").rfind(corpora.DOC_SEP)
                text = text[: cut if cut > 0 else per_lang]
                parts = text.split(corpora.DOC_SEP)
                step = max(1, len(parts) // 8)  # eight documents per language
                for i in range(0, len(parts), step):
                    # every line its own block, as a writing application would edit paragraphs
                    doc = corpora.DOC_SEP.join(parts[i : i + step])
                    out.append((f"{name}-{i // step}", re.sub(r"(?<!\n)\n(?!\n)", "\n\n", doc)))
            return out
    except ImportError:
        pass
    print(f"note: {why}; serving the repository's two examples instead (numbers not comparable with "
          "bench/RESULTS.md)", file=sys.stderr)
    ex = ROOT / "examples"
    return [("zh", (ex / "zh_public_domain.txt").read_text(encoding="utf-8")),
            ("en", (ex / "en_public_domain.md").read_text(encoding="utf-8"))]


def start_server(db: str, embedder: str, debounce_ms: int) -> tuple[subprocess.Popen, str, str]:
    key = "bench-key-" + os.urandom(12).hex()
    env = dict(os.environ, LOGICHUNK_API_KEY=key, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "logichunk.cli", "serve", "--db", db, "--port", "0",
                             "--embedder", embedder, "--debounce-ms", str(debounce_ms)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    m = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    if not m:
        raise SystemExit(f"server did not start: {line} {proc.stderr.read()}")  # type: ignore[union-attr]
    return proc, m.group(1), key


def pct(xs: list[float]) -> tuple[float, float, float]:
    a = np.asarray(xs, np.float64) * 1000.0
    if not a.size:
        return (float("nan"),) * 3  # type: ignore[return-value]
    p = np.percentile(a, [50, 95, 99])
    return float(p[0]), float(p[1]), float(p[2])


async def load(base: str, key: str, modes: list[str], blocks: list[dict], clients: int, duration: float,
               edit_share: float, seed: int, unique: bool) -> dict:
    import httpx

    lat: dict[str, list[float]] = {"search": [], "edit": []}
    errors: list[str] = []
    stop = time.monotonic() + duration
    rng = random.Random(seed)

    async def worker(i: int) -> None:
        r = random.Random(seed * 1000 + i)
        async with httpx.AsyncClient(base_url=base, headers={"X-API-Key": key}, timeout=60) as c:
            n = 0
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                try:
                    if r.random() < edit_share:
                        b = r.choice(blocks)
                        body = b["content"].rstrip("\n") + f" [edit {i}.{n}]" + "\n\n"
                        resp = await c.put(f"/api/projects/default/blocks/{b['id']}", json={"content": body})
                        kind, ok = "edit", resp.status_code in (200, 202)
                    else:
                        mode = modes[(i + n) % len(modes)]
                        q = r.choice(QUERIES) + (f" {i}.{n}" if unique else "")  # unique: never a cached vector
                        resp = await c.post("/api/projects/default/search", json={"query": q, "mode": mode, "top_k": 5})
                        kind, ok = "search", resp.status_code == 200
                    if not ok:
                        errors.append(f"{kind} {resp.status_code}: {resp.text[:200]}")
                except Exception as e:  # noqa: BLE001 - a failed request is counted, not fatal
                    kind = "error"
                    errors.append(f"{type(e).__name__}: {e}")
                if kind != "error":
                    lat[kind].append(time.perf_counter() - t0)
                n += 1

    rng.shuffle(blocks)
    t0 = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(clients)))
    return {"lat": lat, "errors": errors, "wall": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--edit-share", type=float, default=0.2)
    ap.add_argument("--embedder", default="auto")
    ap.add_argument("--debounce-ms", type=int, default=3000)
    ap.add_argument("--corpus-bytes", type=int, default=50_000, help="UTF-8 bytes of public data per language")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--unique-queries", action="store_true",
                    help="make every query distinct (no query-vector cache hits: the model runs each time)")
    args = ap.parse_args(argv)

    import httpx
    import psutil

    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        proc, base, key = start_server(os.path.join(tmp, "bench.db"), args.embedder, args.debounce_ms)
        try:
            c = httpx.Client(base_url=base, headers={"X-API-Key": key}, timeout=600)
            info = c.get("/api/info").json()
            docs = corpus(args.corpus_bytes)
            t0 = time.perf_counter()
            for title, text in docs:
                r = c.post("/api/projects/default/documents", json={"title": title, "text": text})
                if r.status_code != 201:
                    raise SystemExit(f"upload of {title} failed: {r.status_code} {r.text[:300]}")
            while any(d["status"] != "ready" for d in c.get("/api/projects/default/documents").json()["documents"]):
                time.sleep(0.5)
            ingest_s = time.perf_counter() - t0
            blocks = []
            for d in c.get("/api/projects/default/documents").json()["documents"]:
                for b in c.get(f"/api/projects/default/documents/{d['id']}").json()["blocks"]:
                    if 40 < b["size"] <= 2000:
                        blocks.append({"id": b["id"], "content": c.get(f"/api/projects/default/blocks/{b['id']}").json()["content"]})
            counts = c.get("/api/projects/default").json()["counts"]
            modes = info["retrieve_modes"]
            for m in modes:  # warm the indexes once per mode
                c.post("/api/projects/default/search", json={"query": "warm up", "mode": m}).raise_for_status()
            server = psutil.Process(proc.pid)
            cpu_s0 = sum(server.cpu_times()[:2])
            cpu_c0 = sum(os.times()[:2])
            res = asyncio.run(load(base, key, modes, blocks, args.clients, args.duration, args.edit_share, args.seed,
                                   args.unique_queries))
            cpu_s = sum(server.cpu_times()[:2]) - cpu_s0
            cpu_c = sum(os.times()[:2]) - cpu_c0
            load1 = os.getloadavg()
            t1 = time.perf_counter()
            while True:  # the edits' re-chunks: drained, and nothing left dirty?
                j = c.get("/api/metrics").json()["jobs"]
                dirty = c.get("/api/projects/default").json()["counts"]["dirty_blocks"]
                if (j["queued"] == 0 and j["running"] == 0 and dirty == 0) or time.perf_counter() - t1 > 600:
                    break
                time.sleep(0.2)
            drain_s = time.perf_counter() - t1
            m = c.get("/api/metrics").json()
        finally:
            proc.terminate()
            proc.wait(60)

    lat, errors, wall = res["lat"], res["errors"], res["wall"]
    n_req = sum(len(v) for v in lat.values()) + sum(1 for e in errors if not e.startswith(("search", "edit")))
    print(f"## logichunk serve under load: {args.clients} clients, {args.duration:.0f} s, "
          f"{args.edit_share:.0%} edits, {'unique' if args.unique_queries else 'repeated'} queries, "
          f"embedder {info['embedder']}")
    print()
    print(f"corpus: {len(docs)} documents, {counts['parent']} parents, {counts['child']} children, "
          f"{len(blocks)} editable blocks; ingest + chunk + embed {ingest_s:.1f} s; debounce {args.debounce_ms} ms")
    print()
    print("| operation | requests | errors | p50 ms | p95 ms | p99 ms | per s |")
    print("|---|---|---|---|---|---|---|")
    for kind in ("search", "edit"):
        p50, p95, p99 = pct(lat[kind])
        errs = sum(1 for e in errors if e.startswith(kind))
        print(f"| {kind} | {len(lat[kind])} | {errs} | {p50:.1f} | {p95:.1f} | {p99:.1f} | {len(lat[kind]) / wall:.1f} |")
    allv = lat["search"] + lat["edit"]
    p50, p95, p99 = pct(allv)
    print(f"| all | {n_req} | {len(errors)} | {p50:.1f} | {p95:.1f} | {p99:.1f} | {len(allv) / wall:.1f} |")
    print()
    print("server-side search latency by mode (ms, from /api/metrics; includes the warm-up query):")
    print()
    print("| mode | count | p50 | p95 | p99 |")
    print("|---|---|---|---|---|")
    for mode, s in m["search"]["latency"].items():
        print(f"| {mode} | {s['count']} | {s.get('p50_ms', 0):.1f} | {s.get('p95_ms', 0):.1f} | {s.get('p99_ms', 0):.1f} |")
    rc = m["rechunk"]
    print()
    print(f"re-chunks: {rc['completed_total']} completed (including ingest), {rc['failed_total']} failed; "
          f"queue drained {drain_s:.1f} s after the load stopped; dirty blocks left: {dirty}; "
          f"embedding cache hit rate {m['embedding']['hit_rate']}")
    print(f"CPU: server {cpu_s:.1f} s, client {cpu_c:.1f} s over {wall:.1f} s wall; "
          f"load average {load0[0]:.2f} before, {load1[0]:.2f} at the end ({os.cpu_count()} CPUs)")
    if errors:
        print("\nfirst errors:", *errors[:5], sep="\n  ")
    return 1 if errors or dirty else 0


if __name__ == "__main__":
    sys.exit(main())

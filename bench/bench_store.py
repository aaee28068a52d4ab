"""Store and retrieval benchmark: prints one table.

    python bench/bench_store.py                      # 10k and 100k child chunks, SQLite and PostgreSQL
    python bench/bench_store.py --sizes 10000 --backends sqlite --million

Measures
* ingest throughput (chars/s) of a real text through the parent-child chunker + hash embedder;
* search latency p50/p99 over synthetic child vectors (dim 384, like e5-small): exact numpy vs HNSW
  (hnswlib) on SQLite, pgvector HNSW vs exact scan on PostgreSQL, raw index and ``retrieve(parent)``;
* re-chunk latency of one edited block in the large project vs re-ingesting the document.
PostgreSQL comes from pgserver in a temporary folder (skipped if it cannot start).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np

from logichunk.config import Settings
from logichunk.models import HashEmbedder
from logichunk.retrieve import retrieve
from logichunk.store import Store
from logichunk.store.base import sha256
from logichunk.store.ingest import ingest_text

warnings.filterwarnings("ignore")
ROWS: list[tuple[str, ...]] = []


def row(*cells) -> None:
    ROWS.append(tuple(str(c) for c in cells))
    print(" | ".join(ROWS[-1]), file=sys.stderr, flush=True)


def pct(xs, p):
    return float(np.percentile(np.asarray(xs) * 1000, p))


def make_text(rng, n_chapters=8, blocks=25, words=None):
    words = words or ["tea", "rain", "mountain", "teacher", "sword", "market", "price", "winter", "snow", "road",
                      "师父", "山路", "商人", "粮食", "剑法", "大雨", "茶馆", "少年", "小镇", "冬天"]
    out = []
    for c in range(n_chapters):
        out.append(f"# Chapter {c + 1}\n\n")
        for _ in range(blocks):
            sents = []
            for _ in range(int(rng.integers(3, 14))):
                sents.append(" ".join(rng.choice(words, int(rng.integers(5, 16)))).capitalize() + ". ")
            out.append("".join(sents) + "\n\n")
    return "".join(out)


def clustered(rng, n: int, dim: int, centers: np.ndarray, spread: float = 0.6) -> np.ndarray:
    """Unit vectors around random topic centres: text embeddings cluster by topic, and isotropic
    random vectors (every pair nearly orthogonal) make approximate search look worse than it is."""
    v = centers[rng.integers(0, centers.shape[0], n)] + spread * rng.standard_normal((n, dim)) / np.sqrt(dim)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def synthetic(store: Store, n_children: int, dim: int, rng) -> None:
    """n_children child rows (4 per parent) with clustered unit vectors (a parent's children near it),
    written straight to the tables."""
    centers = rng.standard_normal((max(8, n_children // 500), dim))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    doc = store.add_document("synthetic", [("c", ["x\n\n"])])
    chapter = store.chapters(doc)[0][0]
    block = store.blocks(chapter)[0].id
    model = store.model_id
    ins = ("INSERT INTO chunks(project_id, document_id, chapter_id, block_id, parent_pk, chunk_level, dotted_id, "
           "chunk_order, start_offset, end_offset, size, content, content_hash, method, meta, embedding_model, embedding) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    per = 4
    n_par = n_children // per
    batch = 2000
    for lo in range(0, n_par, batch):
        with store.tx():
            for i in range(lo, min(n_par, lo + batch)):
                size = int(rng.integers(300, 1500))
                pv = clustered(rng, 1, dim, centers)[0]
                text = f"parent {i} " + "p" * size
                ppk = store._insert_pk(ins, (store.project_id, doc, chapter, block, None, "parent", f"9.{i + 1}", i + 1, 0,
                                             size, size, text, sha256(text), "synthetic", None, model, store._vec_param(pv)))
                cv = clustered(rng, per, dim, pv[None, :], spread=0.4)
                store._xmany(ins, [(store.project_id, doc, chapter, block, ppk, "child", f"9.{i + 1}.{k + 1}", k + 1,
                                    k * size // per, (k + 1) * size // per, size // per, f"child {i}.{k}",
                                    sha256(f"child {i}.{k}"), "synthetic", None, model, store._vec_param(cv[k]))
                                   for k in range(per)])
            store._bump()


def bench_search(store: Store, label: str, n: int, dim: int, rng, kinds) -> None:
    # queries near stored vectors (a question about something in the collection)
    ids, vecs = store._load_vectors("child", store.model_id, None)
    queries = clustered(rng, 60, dim, vecs[rng.integers(0, len(vecs), 60)].astype(np.float64), spread=0.4)
    for kind in kinds:
        t0 = time.perf_counter()
        if kind in ("exact", "hnsw"):
            store.settings = Settings(**{**store.settings.__dict__, "vector_index": kind, "hnsw_threshold": 0})
            store._vindex.clear()
            store.vector_index("child")
            build = time.perf_counter() - t0

            def search(q, k=10):
                return store.vector_search(q, k)
        else:
            store.settings = Settings(**{**store.settings.__dict__, "vector_index": "pgvector"})
            build = 0.0
            exact = kind == "pg-exact"

            def search(q, k=10, exact=exact):
                return store.vector_search(q, k, exact=exact)
        lat = []
        for q in queries[:5]:
            search(q)
        for q in queries:
            t = time.perf_counter()
            search(q)
            lat.append(time.perf_counter() - t)
        # recall@10 against exact numpy
        recall = ""
        if kind != "exact":
            from logichunk.index import ExactIndex

            if not hasattr(bench_search, "_exact") or bench_search._exact[0] != (label, n):
                ids, vecs = store._load_vectors("child", store.model_id, None)
                bench_search._exact = ((label, n), ExactIndex(dim, ids, vecs))
            e = bench_search._exact[1]
            r = [len({p for p, _ in search(q)} & set(e.search(q, 10)[0].tolist())) / 10 for q in queries[:30]]
            recall = f"{np.mean(r):.3f}"
        # end to end: retrieve(parent) with the hash embedder for the query
        lat_r = []
        for i in range(30):
            t = time.perf_counter()
            retrieve(store, f"query number {i} about tea", mode="parent", top_k=5)
            lat_r.append(time.perf_counter() - t)
        row(label, f"{n:,}", kind, f"{build:.1f}", f"{pct(lat, 50):.2f}", f"{pct(lat, 99):.2f}", recall,
            f"{pct(lat_r, 50):.2f}", f"{pct(lat_r, 99):.2f}")


def bench_ingest_and_edit(store: Store, label: str, rng) -> None:
    text = make_text(rng)
    emb_before = store.embed_calls
    t0 = time.perf_counter()
    doc = ingest_text(store, "bench", text)
    store.rechunk_dirty()
    dt = time.perf_counter() - t0
    row(label, "ingest", f"{len(text):,} chars", f"{dt:.2f} s", f"{len(text) / dt:,.0f} chars/s",
        f"{store.embed_calls - emb_before} texts embedded", "", "", "")
    chapters = store.chapters(doc)
    blocks = store.blocks(chapters[len(chapters) // 2][0])
    lat = []
    for i in range(5):
        b = blocks[(i * 3) % len(blocks)]
        store.edit_block(b.id, b.content.rstrip() + f" An added sentence number {i} about rain.\n\n")
        t = time.perf_counter()
        r = store.rechunk_block(b.id)
        lat.append(time.perf_counter() - t)
    row(label, "edit 1 block", "", f"{pct(lat, 50):.1f} ms p50", f"{pct(lat, 99):.1f} ms p99",
        f"last: kept {r.parents_kept} / wrote {r.parents_written} parents, embedded {r.embedded}", "", "", "")
    # re-ingesting the same document (all embeddings cached) vs a fresh one
    t0 = time.perf_counter()
    ingest_text(store, "bench-again", text)
    store.rechunk_dirty()
    row(label, "re-ingest doc (cached)", "", f"{(time.perf_counter() - t0) * 1000:.0f} ms", "", "", "", "", "")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--million", action="store_true", help="also 1M synthetic vectors, in-memory index only")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    tmp = tempfile.mkdtemp(prefix="lc-bench-")
    urls = {}
    if "sqlite" in args.backends:
        urls["sqlite"] = lambda n: os.path.join(tmp, f"b{n}.db")
    srv = None
    if "postgres" in args.backends:
        try:
            import pgserver
            import psycopg

            srv = pgserver.get_server(os.path.join(tmp, "pg"), cleanup_mode="stop")
            base = srv.get_uri()

            def pg(n, base=base):
                with psycopg.connect(base, autocommit=True) as c:
                    c.execute(f"CREATE DATABASE b{n}")
                return base.replace("/postgres?", f"/b{n}?")

            urls["postgres"] = pg
        except Exception as e:  # noqa: BLE001
            print(f"postgres skipped: {e}", file=sys.stderr)
    row("backend", "children", "index", "build s", "search p50 ms", "p99 ms", "recall@10", "retrieve p50 ms", "p99 ms")
    for name, mk in urls.items():
        for n in [int(x) for x in args.sizes.split(",")]:
            s = Settings(embedder="hash", hnsw_ef_construction=100 if name == "sqlite" else 64)
            store = Store.open(mk(n), settings=s, embedder=HashEmbedder(args.dim))
            t0 = time.perf_counter()
            synthetic(store, n, args.dim, rng)
            if name == "postgres":
                store._after_vectors_written(store.model_id, args.dim)
            row(name, f"{n:,}", "load", f"{time.perf_counter() - t0:.1f}", "", "", "", "", "")
            kinds = ("exact", "hnsw") if name == "sqlite" else ("pgvector", "pg-exact", "exact")
            bench_search(store, name, n, args.dim, rng, kinds)
            if n == max(int(x) for x in args.sizes.split(",")):
                store.settings = Settings(embedder="hash")
                bench_ingest_and_edit(store, name, rng)
            store.close()
    if args.million:
        from logichunk.index import ExactIndex, make_index

        n = 1_000_000
        centers = rng.standard_normal((2000, args.dim))
        centers /= np.linalg.norm(centers, axis=1, keepdims=True)
        vecs = np.concatenate([clustered(rng, 100_000, args.dim, centers) for _ in range(n // 100_000)])
        qs = clustered(rng, 40, args.dim, vecs[rng.integers(0, n, 40)].astype(np.float64), spread=0.4)
        exact = ExactIndex(args.dim, np.arange(n), vecs)
        truth = [set(exact.search(q, 10)[0].tolist()) for q in qs]
        indexes = [("exact", exact, 0.0)]
        t0 = time.perf_counter()
        h = make_index(args.dim, n, kind="hnsw", ef_construction=100)
        h.update(np.arange(n), vecs, np.zeros(0, np.int64))
        indexes.append((f"hnsw ({os.cpu_count()} build threads)", h, time.perf_counter() - t0))
        for kind, idx, build in indexes:
            lat = []
            hits = []
            for q, t in zip(qs, truth, strict=True):
                t1 = time.perf_counter()
                ids, _ = idx.search(q, 10)
                lat.append(time.perf_counter() - t1)
                hits.append(len(set(ids.tolist()) & t) / 10)
            row("memory", f"{n:,}", kind, f"{build:.1f}", f"{pct(lat, 50):.2f}", f"{pct(lat, 99):.2f}",
                f"{np.mean(hits):.3f}", "", "")
    if srv is not None:
        srv.cleanup()
    widths = [max(len(r[i]) for r in ROWS if i < len(r)) for i in range(max(len(r) for r in ROWS))]
    for r in ROWS:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Similarity-graph benchmark: build and update time, and query latency against basic retrieval.

    python bench/bench_graph.py                         # synthetic 2k/10k/50k chunks + HotpotQA store
    python bench/bench_graph.py --sizes 10000 --no-hotpot --queries 50

Part 1 (synthetic, no model): n chunks of d=384 random unit vectors in documents of ~8 chunks, 3
sentences each with their vectors given (so only graph construction is timed): a build from
scratch with exact neighbours and with HNSW (index build included), then one edit (3 chunks
removed, 3 added in one document) applied incrementally vs rebuilt from scratch.

Part 2 (``../shared/data/retrieval/hotpot_dev_distractor100``, hash embedder): the store is built
once, then per query: ``retrieve(mode)`` wall time for basic (top-5 child chunks), hybrid, and the
graph modes; and the walk alone on a pre-embedded query vector (what the graph adds).

Prints one markdown table per part with the load average and the process CPU time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

from logichunk.index.graph import GraphParams, NodeBatch, build_graph, update_graph
from logichunk.index.vectors import HnswIndex, hnsw_available

warnings.filterwarnings("ignore")


def _pct(xs, p) -> float:
    return float(np.percentile(np.asarray(xs) * 1000, p)) if len(xs) else float("nan")


def synthetic(n: int, dim: int, rng) -> NodeBatch:
    per_doc = 8
    keys = np.arange(1, n + 1, dtype=np.int64)
    docs = [f"d{i // per_doc}" for i in range(n)]
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    # documents are topical: chunks of one document share a direction
    centers = rng.standard_normal((n // per_doc + 1, dim)).astype(np.float32)
    vecs += 1.5 * centers[np.arange(n) // per_doc]
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    texts = tuple("One sentence. Two sentence. Three sentence." for _ in range(n))
    ptr = np.arange(0, 3 * n + 1, 3, dtype=np.int64)
    st = np.tile(np.asarray([0, 14, 28], np.int64), n)
    en = np.tile(np.asarray([13, 27, 43], np.int64), n)
    sv = np.repeat(vecs, 3, axis=0) + 0.1 * rng.standard_normal((3 * n, dim)).astype(np.float32)
    return NodeBatch(keys, tuple(docs), np.arange(n, dtype=np.int64) % per_doc, vecs, texts, (), None,
                     (ptr, st, en, sv))


def _no_embed(texts):
    raise AssertionError("the synthetic benchmark gives every sentence vector")


def part1(sizes: list[int], dim: int, with_hnsw: bool) -> list[str]:
    rng = np.random.default_rng(0)
    p = GraphParams()
    rows = ["| chunks | neighbours | build wall / CPU (s) | edges | edit: incremental wall / CPU (ms) "
            "| edit: rebuild wall / CPU (s) | relinked |", "|---|---|---|---|---|---|---|"]
    for n in sizes:
        b = synthetic(n, dim, rng)
        for kind in ("exact", "hnsw") if with_hnsw else ("exact",):
            ann = None
            c0, t0 = time.process_time(), time.perf_counter()
            if kind == "hnsw":
                ann = HnswIndex(dim, m=16, ef_construction=200, ef_search=64, capacity=n + 64)
                ann.update(b.keys, b.vecs, np.zeros(0, np.int64))
            g = build_graph(b, _no_embed, p, ann=ann)
            build_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
            # one edit: 3 chunks of document d5 replaced by 3 new ones
            victims = b.keys[40:43]
            new = synthetic(3, dim, rng)
            add = NodeBatch(np.asarray([n + 1, n + 2, n + 3]), ("d5",) * 3, np.asarray([0, 1, 2]), new.vecs,
                            new.texts, (), None, new.sentences)
            c1, t1 = time.process_time(), time.perf_counter()
            if ann is not None:
                ann.update(add.keys, add.vecs, victims)
            g2, d = update_graph(g, victims, add, _no_embed, p, ann=ann)
            inc_ms, inc_cpu = (time.perf_counter() - t1) * 1000, (time.process_time() - c1) * 1000
            rebuild = ""
            if kind == "exact" and n <= 20_000:
                keep = ~np.isin(b.keys, victims)
                allb = NodeBatch(np.concatenate([b.keys[keep], add.keys]),
                                 tuple(x for x, k in zip(b.docs, keep, strict=True) if k) + add.docs,
                                 np.concatenate([b.positions[keep], add.positions]),
                                 np.concatenate([b.vecs[keep], add.vecs]),
                                 tuple(x for x, k in zip(b.texts, keep, strict=True) if k) + add.texts, (), None,
                                 _concat_sentences(b, keep, add))
                c2, t2 = time.process_time(), time.perf_counter()
                ref = build_graph(allb, _no_embed, p)
                rebuild = f"{time.perf_counter() - t2:.2f} / {time.process_time() - c2:.2f}"
                same = {e[:3] for e in ref.edges()} == {e[:3] for e in g2.edges()}
                rebuild += "" if same else " (differs!)"
            rows.append(f"| {n:,} | {kind} | {build_s:.2f} / {cpu_s:.2f} | {g.n_edges:,} | {inc_ms:.0f} / {inc_cpu:.0f} | "
                        f"{rebuild or '—'} | {d.relinked.size} |")
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def _concat_sentences(b: NodeBatch, keep: np.ndarray, add: NodeBatch):
    ptr, st, en, sv = b.sentences
    rows = np.concatenate([np.arange(ptr[i], ptr[i + 1]) for i in np.flatnonzero(keep).tolist()])
    aptr, ast, aen, asv = add.sentences
    counts = np.concatenate([np.diff(ptr)[keep], np.diff(aptr)])
    return (np.concatenate([[0], np.cumsum(counts)]), np.concatenate([st[rows], ast]), np.concatenate([en[rows], aen]),
            np.concatenate([sv[rows], asv]))


def part2(n_queries: int) -> list[str]:
    from logichunk.config import Settings
    from logichunk.eval.readers import data_dir, read_corpus
    from logichunk.index.graph_store import sync_graph
    from logichunk.models import HashEmbedder
    from logichunk.retrieve import retrieve
    from logichunk.retrieve.graph import ALGORITHMS, WalkParams
    from logichunk.store import Store
    from logichunk.store.ingest import ingest_text

    stem = data_dir() / "retrieval" / "hotpot_dev_distractor100"
    if not os.path.exists(str(stem) + ".corpus.jsonl"):
        return [f"(skipped: no data at {stem})"]
    corpus = read_corpus(stem)
    store = Store.open(":memory:", settings=Settings(), embedder=HashEmbedder())
    t0 = time.perf_counter()
    for d in corpus.docs:
        ingest_text(store, d.doc_id, d.text)
    store.rechunk_dirty()
    ingest_s = time.perf_counter() - t0
    c0, t1 = time.process_time(), time.perf_counter()
    g, rep = sync_graph(store)
    graph_s, graph_cpu = time.perf_counter() - t1, time.process_time() - c0
    queries = [q.question for q in corpus.queries][:n_queries]
    rows = [f"HotpotQA store: {len(corpus.docs)} documents, {g.n_chunks} child chunks, {g.n_sentences} sentences, "
            f"{g.n_edges} edges; ingest+chunk+embed {ingest_s:.1f} s; graph build {graph_s:.2f} s "
            f"(CPU {graph_cpu:.2f} s, sentence vectors from the store's cache)", "",
            "| mode | retrieve() wall p50 / p95 (ms) | retrieve() CPU per query (ms) | walk only wall p50 / p95 (ms) "
            "| walk only CPU per query (ms) |", "|---|---|---|---|---|"]
    qvecs = [store.embed_query(q) for q in queries]
    for mode in ("basic", "hybrid", "graph-basic", "graph-hybrid", "graph-ssg", "graph-tri"):
        retrieve(store, queries[0], mode=mode)  # warm caches (indexes, graph)
        lat, walk = [], []
        c0 = time.process_time()
        for q in queries:
            t = time.perf_counter()
            retrieve(store, q, mode=mode, top_k=10 if mode.startswith("graph-") else 5)
            lat.append(time.perf_counter() - t)
        cpu = time.process_time() - c0
        wcpu = float("nan")
        if mode in ALGORITHMS and mode != "graph-hybrid":
            algo = ALGORITHMS[mode](WalkParams())
            c1 = time.process_time()
            for qv in qvecs:
                t = time.perf_counter()
                algo.run(g, qv)
                walk.append(time.perf_counter() - t)
            wcpu = (time.process_time() - c1) * 1000 / len(qvecs)
        w = f"{_pct(walk, 50):.2f} / {_pct(walk, 95):.2f} | {wcpu:.2f}" if walk else "— | —"
        rows.append(f"| {mode} | {_pct(lat, 50):.2f} / {_pct(lat, 95):.2f} | {cpu * 1000 / len(queries):.2f} | {w} |")
        print(rows[-1], file=sys.stderr, flush=True)
    store.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2000,10000,50000")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--no-hnsw", action="store_true")
    ap.add_argument("--no-hotpot", action="store_true")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores shared)")
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    if sizes:
        for r in part1(sizes, args.dim, hnsw_available() and not args.no_hnsw):
            print(r)
    if not args.no_hotpot:
        print()
        for r in part2(args.queries):
            print(r)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}; process CPU {time.process_time():.1f} s")


if __name__ == "__main__":
    main()

"""Many short documents, one call each: the per-call cost that a 5 MB string hides.

A knowledge base is mostly paragraphs and short articles, chunked one document at a time. This runs
every method of ``bench_throughput.py`` (same factories, same 512-character target) over each document
separately, and ``logichunk.chunk_many`` over all of them at once (``logichunk-many``, with tier 3;
``-fast`` without), which gives the same trees — en: HotpotQA's 991 Wikipedia paragraphs; zh: CMRC 2018's 848 paragraphs and DRCD's 383
articles (``bench/corpora.py: documents``, read from ``../shared/data``, never copied) — each method in
its own process, thread pools pinned to one thread, one warm-up pass and ``--runs`` timed passes
(median), per-text caches cleared before every pass. For logichunk it also checks that every
document's leaves tile it exactly.

    python bench/bench_small_docs.py            # markdown table on stdout
    python bench/bench_small_docs.py --runs 1   # quick look
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import corpora  # noqa: E402

METHODS = ("logichunk", "logichunk-fast", "logichunk-many", "logichunk-many-fast", "langchain", "chonkie", "semchunk")
BATCH = {"logichunk-many": True, "logichunk-many-fast": False}  # chunk_many(all documents), composite


def worker(method: str, lang: str, runs: int) -> dict:
    from bench_throughput import FACTORIES, MAX_SIZE, clear_caches, extract

    docs = corpora.documents(lang)
    nbytes = sum(len(d.encode("utf-8")) for d in docs)
    if method in BATCH:
        from logichunk.chunkers.many import chunk_many

        composite = BATCH[method]

        def run_all() -> list[object]:
            return list(chunk_many(docs, max_size=MAX_SIZE, levels=1, composite=composite))
    else:
        try:
            FACTORIES[method]()
        except ImportError as e:
            return {"skipped": str(e)}

        def run_all() -> list[object]:
            fn = FACTORIES[method]()
            return [fn(d) for d in docs]
    times = []
    results: list[object] = []
    for i in range(1 + runs):
        clear_caches()
        t0 = time.perf_counter()
        results = run_all()
        dt = time.perf_counter() - t0
        if i:
            times.append(dt)
    kind = "logichunk" if method.startswith("logichunk") else method
    tiles = None
    if method.startswith("logichunk"):
        tiles = all("".join(extract(kind, r)[0]) == d for r, d in zip(results, docs, strict=True))
    chunks = sum(len(extract(kind, r)[0]) for r in results)
    t = statistics.median(times)
    return {"docs": len(docs), "bytes": nbytes, "seconds": t, "ms_per_doc": 1e3 * t / len(docs),
            "mb_s": nbytes / 1e6 / t, "chunks": chunks, "tiles": tiles}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "LANG"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.runs)))
        return 0
    msg = corpora.missing_message()
    if msg:
        print(msg)
        return 0
    rows = []
    for lang in [x.strip() for x in args.langs.split(",") if x.strip()]:
        for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
            print(f"[small-docs] {lang} {method} ...", file=sys.stderr, flush=True)
            p = subprocess.run([sys.executable, __file__, "--worker", method, lang, "--runs", str(args.runs)],
                               capture_output=True, text=True)
            try:
                r = json.loads(p.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                r = {"error": (p.stderr.strip().splitlines() or ["no output"])[-1]}
            rows.append((lang, method, r))
    print(f"Median of {args.runs} passes after a warm-up pass; each document chunked by its own call, "
          "512-character target, one thread.\n")
    print("| corpus | method | documents | ms per document | docs/s | MB/s | chunks | leaves tile each document |")
    print("|---|---|---|---|---|---|---|---|")
    for lang, method, r in rows:
        if "docs" not in r:
            print(f"| {lang} | {method} | — | {r.get('skipped') or r.get('error')} | | | | |")
            continue
        tiles = "" if r["tiles"] is None else ("yes" if r["tiles"] else "**no**")
        print(f"| {lang} | {method} | {r['docs']} | {r['ms_per_doc']:.3f} | {r['docs'] / r['seconds']:,.0f} | "
              f"{r['mb_s']:.2f} | {r['chunks']:,} | {tiles} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

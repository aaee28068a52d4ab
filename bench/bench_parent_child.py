"""Parent-child chunking and store ingest throughput, side by side with the two-splitter recipe peers use.

What a knowledge base runs on every document it takes in: parents (``max_parent_size`` 1500 characters)
with children inside each (``child_max_size`` 400, target 250), the defaults of ``logichunk ingest``.

* ``logichunk-pc``     ``chunk_parent_child(text, HashEmbedder())``: parents at blank-line blocks and
                       semantic lows, children by the global decision on the sentences' hashed vectors
                       (the vectors are part of the decision, so their cost is counted)
* ``logichunk-ingest`` ``ingest_text`` into a new SQLite ``Store`` with the hash embedder: the above,
                       every child and parent embedded, the blocks, chunks and vectors written
* ``langchain-pc``     LangChain's ``ParentDocumentRetriever`` recipe: ``RecursiveCharacterTextSplitter``
                       (1500) for parents, then one (400) over each parent; no vectors
* ``chonkie-pc``       the same recipe with Chonkie's ``RecursiveChunker`` (character tokenizer)

Each (method, corpus) runs in a fresh subprocess, BLAS and thread pools pinned to one thread: one warm-up
run, then ``--runs`` timed runs; MB/s is UTF-8 MB over the median time; peak RSS is the subprocess's
``ru_maxrss``. Corpora: ``bench/corpora.py`` (English prose, Chinese, Python source).

Usage::

    python bench/bench_parent_child.py --mb 1 --runs 3
    PYTHONPATH=<an older checkout>/src python bench/bench_parent_child.py --methods logichunk-pc  # before/after
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

PARENT, CHILD = 1500, 400
METHODS = ("logichunk-pc", "logichunk-ingest", "langchain-pc", "chonkie-pc")


def _logichunk_pc() -> Callable[[str], int]:
    from logichunk.chunkers.parent_child import chunk_parent_child
    from logichunk.models import HashEmbedder

    emb = HashEmbedder()
    return lambda text: len(chunk_parent_child(text, emb).leaves())


def _logichunk_ingest() -> Callable[[str], int]:
    from logichunk.config import Settings
    from logichunk.models import HashEmbedder
    from logichunk.store import Store
    from logichunk.store.ingest import ingest_text

    def run(text: str) -> int:
        with tempfile.TemporaryDirectory(prefix="logichunk-pc-") as tmp:
            store = Store.open(str(Path(tmp) / "bench.db"), settings=Settings(), embedder=HashEmbedder())
            try:
                ingest_text(store, "bench", text, source="bench.txt")
                store.rechunk_dirty()  # (what ``logichunk ingest`` does next)
                return int(store.counts().get("child", 0))
            finally:
                store.close()

    return run


def _two_splitters(parent: Callable[[str], list[str]], child: Callable[[str], list[str]]) -> Callable[[str], int]:
    return lambda text: sum(len(child(p)) for p in parent(text))


def _langchain_pc() -> Callable[[str], int]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return _two_splitters(RecursiveCharacterTextSplitter(chunk_size=PARENT, chunk_overlap=0).split_text,
                          RecursiveCharacterTextSplitter(chunk_size=CHILD, chunk_overlap=0).split_text)


def _chonkie_pc() -> Callable[[str], int]:
    from chonkie import RecursiveChunker

    big, small = (RecursiveChunker(tokenizer="character", chunk_size=s) for s in (PARENT, CHILD))
    return _two_splitters(lambda t: [c.text for c in big.chunk(t)], lambda t: [c.text for c in small.chunk(t)])


FACTORIES: dict[str, Callable[[], Callable[[str], int]]] = {
    "logichunk-pc": _logichunk_pc, "logichunk-ingest": _logichunk_ingest, "langchain-pc": _langchain_pc,
    "chonkie-pc": _chonkie_pc,
}


def _worker(method: str, path: str, runs: int) -> dict:
    text = Path(path).read_text(encoding="utf-8")
    try:
        fn = FACTORIES[method]()
    except ImportError as e:
        return {"skipped": f"not installed ({e})"}
    times, children = [], 0
    for i in range(1 + runs):
        gc.collect()
        t0 = time.perf_counter()
        children = fn(text)
        if i:
            times.append(time.perf_counter() - t0)
    return {"times": times, "bytes": len(text.encode("utf-8")), "children": children,
            "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=1.0, help="corpus size in MB (default 1)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--corpora", default="en,zh,code")
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "PATH"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(_worker(a.worker[0], a.worker[1], a.runs)))
        return 0
    sys.path.insert(0, str(Path(__file__).parent))
    import corpora

    methods = a.methods.split(",")
    unknown = set(methods) - set(METHODS)
    if unknown:
        ap.error(f"unknown methods {sorted(unknown)}; choose from {', '.join(METHODS)}")
    print("| corpus | method | MB/s | median s | children | peak RSS MiB |\n|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="logichunk-bench-pc-") as tmp:
        for name in a.corpora.split(","):
            path = Path(tmp) / f"{name}.txt"
            path.write_text(corpora.BUILDERS[name](int(a.mb * 1e6))[0], encoding="utf-8")
            for m in methods:
                p = subprocess.run([sys.executable, __file__, "--runs", str(a.runs), "--worker", m, str(path)],
                                   capture_output=True, text=True, check=False)
                try:
                    r = json.loads(p.stdout.strip().splitlines()[-1])
                except (IndexError, json.JSONDecodeError):
                    r = {"skipped": (p.stderr.strip().splitlines() or ["failed"])[-1]}
                if "skipped" in r:
                    print(f"| {name} | {m} | skipped: {r['skipped']} | | | |", flush=True)
                    continue
                med = statistics.median(r["times"])
                print(f"| {name} | {m} | {r['bytes'] / 1e6 / med:.2f} | {med:.2f} | {r['children']} | {r['rss_mib']:.0f} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

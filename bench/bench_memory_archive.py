"""CPU time of a long conversation replayed into a store: the archive side of the conversation memory.

One conversation of ``--turns`` turns (the units of DialSeg711 from ``../shared/data`` or
``$LOGICHUNK_DATA``, one unit a turn, concatenated in file order: topics change every few turns) is
replayed through a :class:`~logichunk.memory.Perception` with a fresh SQLite store, the hash embedder
and its default calibration; topics are archived unchunked (``rechunk`` off: chunking is measured by
the other benches). Reported: the CPU time of the replay, the share of it spent linking each archived
topic to the earlier one it resumes (``Archiver._link``), topics, links, and a digest of the stored
links (topic, the topic it resumes) to compare two versions' links. BLAS/OpenMP run one thread.

Usage::

    python bench/bench_memory_archive.py --turns 5000
    python bench/bench_memory_archive.py --turns 10000 --json
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from logichunk.memory import LogicalBlock, Perception, replay, topics  # noqa: E402
from logichunk.memory.archive import Archiver  # noqa: E402
from logichunk.models import HashEmbedder  # noqa: E402
from logichunk.store import Store  # noqa: E402


def data_dir() -> Path:
    env = os.environ.get("LOGICHUNK_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


def turns(n: int) -> list[LogicalBlock]:
    units: list[str] = []
    with open(data_dir() / "dialogue" / "dialseg_711.jsonl", encoding="utf-8") as f:
        for line in f:
            units.extend(json.loads(line)["units"])
            if len(units) >= n:
                break
    if len(units) < n:
        raise SystemExit(f"DialSeg711 has {len(units)} units, fewer than --turns {n}")
    return [LogicalBlock(user=u) for u in units[:n]]


def run(n: int) -> dict[str, object]:
    blocks = turns(n)
    spent = [0.0]
    link = Archiver._link

    def timed(self, *a, **k):
        t = time.process_time()
        try:
            return link(self, *a, **k)
        finally:
            spent[0] += time.process_time() - t

    Archiver._link = timed
    try:
        with tempfile.TemporaryDirectory() as d:
            store = Store.open(os.path.join(d, "m.db"), embedder=HashEmbedder(), project="bench")
            p = Perception(store=store, embedder=store.embedder, conversation_id="c")
            p.archiver.rechunk = False
            t0 = time.process_time()
            replay(blocks, p)
            cpu = time.process_time() - t0
            recs = topics(store, "c")
            store.close()
    finally:
        Archiver._link = link
    pairs = ";".join(f"{t.index}>{t.resumes_topic}" for t in recs)
    return {"turns": n, "topics": len(recs), "links": sum(t.resumes_topic is not None for t in recs),
            "cpu_s": round(cpu, 3), "link_cpu_s": round(spent[0], 3),
            "links_digest": hashlib.sha256(pairs.encode()).hexdigest()[:12]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=5000, help="turns of the conversation (default 5000)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    row = run(args.turns)
    print(json.dumps(row) if args.json else ", ".join(f"{k} {v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

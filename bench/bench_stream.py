"""A text of any length: memory and speed of ``chunk_stream`` (windows) against ``chunk()`` (whole) and the
peers' splitters, and how many of the whole text's cuts the windows keep.

Each row is one fresh subprocess on one core (BLAS/OpenMP pinned to one thread) that reads a file of
``--mb`` MB and chunks it at a 512-character limit:

* ``whole``    ``read_path(file)`` then ``chunk(text, max_size=512)`` (three levels, the default)
* ``stream``   ``chunk_stream(read_blocks(file), window=W, max_size=512)``, each part dropped once counted:
               what ``logichunk chunk FILE --window W --format jsonl`` does
* ``langchain`` / ``chonkie``  the peers' recursive splitters at 512 characters on the whole text (they
               hold it and their chunks as strings)

CPU seconds are the process time of reading and chunking; peak RSS is the process's high-water mark
(``VmHWM``) over the state after imports. The files are bench/corpora.py's English prose and Chinese, repeated to the size asked (the
English builder holds ~8.5 MB of distinct text). "Cuts kept" is the share of the whole text's cut
positions (level 1; all levels) that the windows also cut.

Usage::

    python bench/bench_stream.py                       # en and zh at 4, 16, 64 MB, window 1,048,576
    python bench/bench_stream.py --mb 8 --corpora en --windows 262144,1048576,4194304
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import os, sys, json, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import numpy as np
from logichunk import chunk, chunk_stream, read_blocks
from logichunk.text.decode import read_path
mode, path, window, cuts_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
if mode == "langchain":
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    split = RecursiveCharacterTextSplitter(chunk_size=512, chunk_overlap=0).split_text
elif mode == "chonkie":
    from chonkie import RecursiveChunker
    split = RecursiveChunker(tokenizer="character", chunk_size=512).chunk
def hwm():  # VmHWM, not ru_maxrss: that one keeps the parent's high-water mark across fork and exec
    return next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM"))
base = hwm()
t0, w0 = time.process_time(), time.perf_counter()
l1, allc, chars, n = [], [], 0, 0
if mode == "whole":
    text = read_path(path)
    tree = chunk(text, max_size=512)
    ends = np.array(tree.chunks.ends()); ids = tree.chunks.ids()
    top = np.array(["." not in i for i in ids])
    l1, allc, chars, n = ends[top], ends, len(text), len(ids)
    del tree, text
elif mode == "stream":
    for part in chunk_stream(read_blocks(path), window=window, max_size=512):
        ends = np.array(part.tree.chunks.ends()) + part.offset
        top = np.array(["." not in i for i in part.tree.chunks.ids()])
        l1.append(ends[top]); allc.append(ends); chars = part.end; n += len(part.tree)
    l1, allc = np.concatenate(l1), np.concatenate(allc)
else:
    text = read_path(path)
    pieces = split(text)
    chars, n = len(text), len(pieces)
cpu, wall = time.process_time() - t0, time.perf_counter() - w0
peak = hwm()
if len(l1):
    np.savez(cuts_out, l1=np.unique(l1[l1 < chars]), all=np.unique(allc[allc < chars]))
print(json.dumps({"cpu": cpu, "wall": wall, "chars": chars, "chunks": n, "peak_mib": (peak - base) / 1024}))
"""


def build(corpus: str, mb: float, folder: Path) -> Path:
    sys.path.insert(0, str(HERE))
    import corpora

    target = int(mb * 1e6)
    text = corpora.BUILDERS[corpus](target)[0]
    data = text.encode()
    if len(data) < target:
        data = (data * (target // len(data) + 1))[:target]
        while True:  # cut back to a whole character
            try:
                data.decode()
                break
            except UnicodeDecodeError:
                data = data[:-1]
    path = folder / f"{corpus}-{mb:g}MB.txt"
    path.write_bytes(data)
    return path


def run(mode: str, path: Path, window: int, cuts: Path) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               RAYON_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(path), str(window), str(cuts)], env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def kept(whole: Path, part: Path) -> tuple[float, float]:
    import numpy as np

    a, b = np.load(whole), np.load(part)
    return (float(np.isin(a["l1"], b["l1"]).mean()), float(np.isin(a["all"], b["all"]).mean()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", default="4,16,64", help="file sizes in MB, comma-separated")
    ap.add_argument("--corpora", default="en,zh")
    ap.add_argument("--windows", default="1048576", help="window sizes in characters, comma-separated")
    ap.add_argument("--peers", default="langchain,chonkie", help="peers to run on the same files ('' for none)")
    args = ap.parse_args(argv)
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"Python {platform.python_version()}; {platform.platform()}")
    print()
    print("| corpus | MB | method | CPU s | MB/s by CPU | peak RSS MiB over imports | chunks | "
          "level-1 cuts kept | all cuts kept |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for corpus in args.corpora.split(","):
            for mb in [float(x) for x in args.mb.split(",")]:
                path = build(corpus, mb, folder)
                size = path.stat().st_size / 1e6
                whole_cuts = folder / "whole.npz"
                rows = [("whole", 0, whole_cuts)]
                rows += [("stream", int(w), folder / f"w{w}.npz") for w in args.windows.split(",")]
                rows += [(p, 0, folder / "peer.npz") for p in args.peers.split(",") if p]
                for mode, window, cuts in rows:
                    r = run(mode, path, window, cuts)
                    name = f"stream, window {window:,}" if mode == "stream" else mode
                    if "error" in r:
                        print(f"| {corpus} | {size:.1f} | {name} | failed: {r['error']} | | | | | |", flush=True)
                        continue
                    keep = ("", "")
                    if mode == "stream" and whole_cuts.exists():
                        keep = tuple(f"{k:.4f}" for k in kept(whole_cuts, cuts))
                    print(f"| {corpus} | {size:.1f} | {name} | {r['cpu']:.2f} | {size / r['cpu']:.1f} | "
                          f"{r['peak_mib']:.0f} | {r['chunks']:,} | {keep[0]} | {keep[1]} |", flush=True)
                whole_cuts.unlink(missing_ok=True)
                path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

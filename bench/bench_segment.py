"""Topic segmentation speed, side by side: ``segment()`` (the evidence of each topic's words) against the
previous rule (the scatter of the lexical rows, the permutation price raised with length), same text,
same structure rules, one process, one thread.

Corpora (``bench/corpora.py``): ``en`` and ``zh`` as built there (documents joined by blank lines),
``en-lines`` (one sentence per line, blank lines between paragraphs) and ``en-flat`` (the ``en`` corpus
with every run of whitespace made one space: no layout at all, every sentence an atom). Each rule runs
once to warm up, then ``--runs`` times; the best CPU time is reported, and the number of topics.

Usage::

    python bench/bench_segment.py --mb 2 --runs 3
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
from logichunk import native, segment  # noqa: E402
from logichunk.eval.methods import scatter_topic_cuts  # noqa: E402
from logichunk.text.sentences import split_sentences  # noqa: E402


def previous_rule(text: str) -> int:
    """The number of topics the previous default gives (the eval's ``global-scatter`` row, on text)."""
    return int(scatter_topic_cuts(split_sentences(text)).size) + 1


def best_cpu(fn, text: str, runs: int) -> tuple[float, int]:
    topics = fn(text)
    times = []
    for _ in range(runs):
        t0 = time.process_time()
        topics = fn(text)
        times.append(time.process_time() - t0)
    return min(times), topics


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=2.0)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    try:
        built = corpora.build(("en", "zh", "en-lines"), int(args.mb * 1e6))
    except FileNotFoundError as e:
        print(e)
        return 0
    texts = {k: v[0] for k, v in built.items()}
    texts["en-flat"] = re.sub(r"\s+", " ", texts["en"])
    print(f"native kernels: {native.status()}\n")
    print("| corpus | MB | sentences | segment() ms | topics | previous rule ms | topics |")
    print("|---|---|---|---|---|---|---|")
    for name, text in texts.items():
        new_t, new_k = best_cpu(lambda t: len(segment(t).roots()), text, args.runs)
        old_t, old_k = best_cpu(previous_rule, text, args.runs)
        n = len(split_sentences(text))
        print(f"| {name} | {len(text.encode()) / 1e6:.2f} | {n:,} | {new_t * 1000:.0f} | {new_k} | {old_t * 1000:.0f} | {old_k} |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

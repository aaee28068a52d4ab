"""Speed of the conversation memory: decisions per second per conversation, on one core.

Each conversation is replayed turn by turn through ``Perception.observe`` (what an agent calls once
per turn), in four configurations, side by side in one process:

* ``baseline``        — the plain cosine threshold on adjacent turns (embedding excluded): the peer;
* ``online``          — steps 1-3 (heuristic, screen, calibrated rule), embedding excluded (anchor
  vectors computed beforehand in one batch, passed with ``vector=``);
* ``full``            — steps 1-3 plus the lookahead review (the calibration's lookahead), embedding
  excluded;
* ``full+embed``      — the same, each anchor embedded inside ``observe`` (one embedder call per turn,
  as online use does), embedding included.

Rates are turns (= decisions) per second of wall time within each conversation, reported as the
median over conversations and as the total (all turns / all time), and per second of CPU time (the
process time of the timed loops: the honest figure on a shared, loaded machine). The process is pinned to one core (``sched_setaffinity``) and BLAS/OpenMP to one
thread before numpy loads. Conversations: the first ``--docs`` of DialSeg711 (English) and DAct
(Chinese) from ``../shared/data`` (``$LOGICHUNK_DATA``), or, without the data, synthetic ones (said so).

Usage::

    python bench/bench_memory.py                       # hash embedder, 100 conversations per set
    python bench/bench_memory.py --embedder e5 --docs 10 --sets dialseg
    python bench/bench_memory.py --json                 # one JSON object per row
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from logichunk.memory import LogicalBlock, Perception  # noqa: E402
from logichunk.memory.block import anchor_text, is_filler  # noqa: E402
from logichunk.memory.calibration import default_calibration  # noqa: E402
from logichunk.models import resolve_embedder  # noqa: E402

SETS = {"dialseg": "dialogue/dialseg_711.jsonl", "dact": "dialogue/dact_dev.jsonl", "tiage": "dialogue/tiage_train_dev.jsonl"}


def data_dir() -> Path:
    env = os.environ.get("LOGICHUNK_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


def synthetic(n: int, seed: int = 0) -> list[list[str]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(400)]
    out = []
    for _ in range(n):
        conv = []
        for _t in range(4):
            topic = rng.sample(vocab, 20)
            conv += [" ".join(rng.choice(topic) for _ in range(rng.randint(6, 14))) for _ in range(rng.randint(4, 9))]
        out.append(conv)
    return out


def load(name: str, docs: int) -> list[list[str]] | None:
    p = data_dir() / SETS[name]
    if not p.exists():
        return None
    out = []
    with open(p, encoding="utf-8") as f:
        for line in f:
            if len(out) >= docs:
                break
            out.append([u if u.strip() else "." for u in json.loads(line)["units"]])
    return out


def time_conv(fn, n_turns: int) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def bench(convs: list[list[str]], embedder, cal) -> dict[str, dict[str, float]]:
    modes: dict[str, list[tuple[int, float, float]]] = {"baseline": [], "online": [], "full": [], "full+embed": []}
    online_cal = cal.with_(lookahead=0)
    for units in convs:
        blocks = [LogicalBlock(u) for u in units]
        # anchor vectors in one batch (not timed): what "embedding excluded" means
        prev = None
        anchors, idx = [], []
        for i, b in enumerate(blocks):
            if not is_filler(b.query, cal.short_tokens)[0]:
                anchors.append(anchor_text(b, prev))
                idx.append(i)
            prev = b
        vecs = dict(zip(idx, np.asarray(embedder.embed(anchors, kind="query"), np.float32), strict=True)) if anchors else {}
        raw = np.asarray(embedder.embed(units, kind="query"), np.float32)

        def baseline(raw=raw):
            for t in range(1, len(raw)):
                _ = float(raw[t] @ raw[t - 1]) < cal.baseline_threshold

        def run(c, with_vecs, blocks=blocks, vecs=vecs):
            p = Perception(embedder=embedder, calibration=c)
            for t, b in enumerate(blocks):
                p.observe(b, vector=vecs.get(t) if with_vecs else None)
            p.flush()

        for mode, fn in (("baseline", baseline), ("online", lambda: run(online_cal, True)),
                         ("full", lambda: run(cal, True)), ("full+embed", lambda: run(cal, False))):
            w, c = time_conv(fn, len(blocks))
            modes[mode].append((len(blocks), w, c))
    out = {}
    for mode, rows in modes.items():
        turns = sum(r[0] for r in rows)
        wall = sum(r[1] for r in rows)
        cpu = sum(r[2] for r in rows)
        per = [r[0] / r[1] for r in rows if r[1] > 0]
        out[mode] = {"conversations": len(rows), "turns": turns, "median_per_s": statistics.median(per) if per else 0.0,
                     "total_per_s": turns / wall if wall else 0.0, "per_cpu_s": turns / cpu if cpu else 0.0,
                     "wall_s": wall, "cpu_s": cpu}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="hash", help="hash (default), e5, ...")
    ap.add_argument("--docs", type=int, default=100, help="conversations per set (default 100)")
    ap.add_argument("--sets", default="dialseg,dact", help="comma list of dialseg, dact, tiage")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    r = resolve_embedder(args.embedder, cached=False)
    emb = r.model
    cal, note = default_calibration(emb.model_id)
    if note:
        print(f"# {note}", file=sys.stderr)
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# embedder {r.description}; lookahead {cal.lookahead}; one core; load average {load1:.2f}",
          file=sys.stderr)
    if not args.json:
        print(f"{'set':<10} {'mode':<11} {'convs':>5} {'turns':>6} {'median/s':>10} {'total/s':>10} {'per CPU s':>10} "
              f"{'wall s':>8} {'cpu s':>8}")
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        convs = load(name, args.docs)
        label = name
        if convs is None:
            print(f"# {name}: no data at {data_dir()}; using synthetic conversations", file=sys.stderr)
            convs, label = synthetic(args.docs), f"{name}(synth)"
        res = bench(convs, emb, cal)
        for mode, v in res.items():
            if args.json:
                print(json.dumps({"set": label, "mode": mode, "embedder": args.embedder, **v,
                                  "load_average": load1}))
            else:
                print(f"{label:<10} {mode:<11} {v['conversations']:>5} {v['turns']:>6} {v['median_per_s']:>10,.0f} "
                      f"{v['total_per_s']:>10,.0f} {v['per_cpu_s']:>10,.0f} {v['wall_s']:>8.2f} {v['cpu_s']:>8.2f}")
    if hasattr(os, "getloadavg"):
        print(f"# load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What an agent waits for on a long conversation: the latency of adding a turn and of recall.

One conversation of ``--turns`` turns, zh and en in turn (a DialSeg711 dialogue, then a DAct one, ...,
from ``../shared/data`` or ``$LOGICHUNK_DATA``; a dialogue's units paired as user / assistant), fed turn by
turn into a fresh SQLite store: through the library (``Perception.observe``, then ``flush``) or through the
MCP server's memory (``Conversations.remember``, the functions the stdio and ``/mcp`` tools call, then
``end_conversation``). Then ten recall questions, twice: the library's ``search_topics`` (hybrid, top 5), or
MCP's ``recall`` with the conversation id, while it is open (the session's turns not ended) and after it
ended. Reported per call: CPU time (``time.process_time``: the machine is shared) and wall time, median,
p90, p99 and max. BLAS/OpenMP run one thread.

Usage::

    python bench/bench_memory_recall.py --via library --embedder hash --turns 5000
    python bench/bench_memory_recall.py --via mcp --embedder hash --turns 5000
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

from logichunk.config import Settings  # noqa: E402
from logichunk.memory import LogicalBlock, Perception, load_conversation, search_topics, topics  # noqa: E402

QUERIES = ["what did we decide about the hotel booking", "the train to Cambridge on Saturday",
           "restaurant in the centre serving Italian food", "weather forecast for Los Angeles", "上次说的垃圾食品",
           "番茄可以美容吗", "公交车几点停", "taxi to the airport", "周末去哪里玩", "考试复习"]


def data_dir() -> Path:
    env = os.environ.get("LOGICHUNK_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


def dialogues(name: str) -> Iterator[list[LogicalBlock]]:
    with open(data_dir() / "dialogue" / name, encoding="utf-8") as f:
        for line in f:
            u = json.loads(line)["units"]
            yield [LogicalBlock(u[i], u[i + 1] if i + 1 < len(u) else "") for i in range(0, len(u), 2)]


def conversation(n: int) -> list[LogicalBlock]:
    out: list[LogicalBlock] = []
    for en, zh in zip(dialogues("dialseg_711.jsonl"), dialogues("dact_dev.jsonl"), strict=False):
        out += en + zh
        if len(out) >= n:
            break
    return out[:n]


def timed(fn: Callable[[], object], cpu: list[float], wall: list[float]) -> None:
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    cpu.append(time.process_time() - c0)
    wall.append(time.perf_counter() - w0)


def say(what: str, cpu: list[float], wall: list[float]) -> None:
    def row(xs: list[float]) -> str:
        ms = sorted(x * 1000 for x in xs)
        at = [ms[min(len(ms) - 1, int(p * len(ms)))] for p in (0.9, 0.99)]
        return f"median {statistics.median(ms):.1f}, p90 {at[0]:.1f}, p99 {at[1]:.1f}, max {ms[-1]:.1f}"

    print(f"{what} ({len(cpu)} calls), ms — CPU: {row(cpu)}; wall: {row(wall)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--via", choices=["library", "mcp"], default="library")
    ap.add_argument("--embedder", default="hash")
    ap.add_argument("--turns", type=int, default=5000)
    args = ap.parse_args()
    turns = conversation(args.turns)
    print(f"{args.via}, {args.embedder}: {len(turns)} turns, {sum(len(t.user) + len(t.assistant) for t in turns):,} "
          "characters", flush=True)
    db = str(Path(tempfile.mkdtemp()) / "memory.db")
    cpu: list[float] = []
    wall: list[float] = []
    if args.via == "library":
        from logichunk.store import Store

        with Store.open(db, settings=Settings(embedder=args.embedder)) as store:
            p = Perception(store=store, conversation_id="long")
            for t in turns:
                timed(lambda t=t: p.observe(t), cpu, wall)
            say("add a turn (Perception.observe)", cpu, wall)
            p.flush()
            assert load_conversation(store, "long") == turns
            print(f"topics: {len(topics(store, 'long'))}; every turn stored exactly", flush=True)
            for r in range(2):
                cpu, wall = [], []
                for q in QUERIES:
                    timed(lambda q=q: search_topics(store, q, 5, conversation_id="long"), cpu, wall)
                say(f"recall (search_topics, hybrid, top 5), round {r + 1}", cpu, wall)
        return
    from logichunk.integrations import kb
    from logichunk.integrations.conversations import Conversations

    stores = kb.Stores(Settings(db=db, embedder=args.embedder))
    try:
        m = Conversations(stores.get(None, create=True), kb.Limits())
        for t in turns:
            timed(lambda t=t: m.remember("long", t.user, t.assistant), cpu, wall)
        say("add a turn (MCP remember)", cpu, wall)
        for when in ("open", "ended"):
            if when == "ended":
                m.end("long")
            for r in range(2):
                cpu, wall = [], []
                for q in QUERIES:
                    timed(lambda q=q: m.recall(q, "long", 5), cpu, wall)
                say(f"recall (MCP, top 5, conversation {when}), round {r + 1}", cpu, wall)
    finally:
        stores.close()


if __name__ == "__main__":
    main()

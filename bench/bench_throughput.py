"""Chunking throughput, side by side: logichunk (API and CLI) against LangChain, Chonkie and semchunk.

Every method cuts the same corpus (bench/corpora.py: ~5 MB each of English prose, Chinese, English one
sentence per line and hard-wrapped, and Python source; one string each) at the same 512-character target:

* ``logichunk``      ``chunk(text, max_size=512, levels=1)`` — the cascade: tier 1 (entropy signal),
                     tier 3 (composite signal) at the gaps of runs tier 1 could not split, size fitting
* ``logichunk-fast``  the same with ``composite=False`` (CLI ``--fast``): no tier 3
* ``logichunk-3``    ``chunk(text, max_size=512)``: the default three-level tree (512/256/102), what a
                     user gets without options; its chunks in the table are the level-1 roots
* ``logichunk-cli-fast`` the CLI with ``--fast``: the issue's "``logichunk chunk``, tier 1 only"
* ``logichunk-cli``  ``logichunk chunk FILE --max-size 512 --levels 1 --format jsonl > /dev/null``,
                     wall time of the whole command (interpreter start-up, reading, writing JSONL)
* ``langchain``      ``RecursiveCharacterTextSplitter(chunk_size=512, chunk_overlap=0).split_text``
* ``chonkie``        ``RecursiveChunker(tokenizer="character", chunk_size=512).chunk`` (chunk_size is in
                     tokens of its tokenizer; the "character" tokenizer makes it characters)
* ``semchunk``       ``semchunk.chunkerify(lambda s: len(s), 512)(text, offsets=True)``

Each method runs in a fresh subprocess (one process, numpy/BLAS/OpenMP/Rayon pinned to one
thread): one warm-up run, then ``--runs`` timed runs; MB/s is UTF-8 MB (10**6 bytes) over the
median time. Before every run the chunker is rebuilt and per-text caches are cleared (logichunk
caches code points per text; Chonkie's token counts and semchunk's memoised counter are
``lru_cache``\\ s) so that no run reuses the work of the previous one on the same string. The
**cold** columns (``cold MB/s``, ``cold MB/s by CPU time``; JSON ``cold_times``, ``cold_cpu``,
``cold_bytes``; off with ``--no-cold``) answer what a user pays who chunks each document once: each of
``--runs`` further runs, interleaved with the plain ones, chunks a *fresh* string, the corpus behind a
short prefix of its own (``cold_text``: not the same object, not equal to any earlier text, its hash not
yet computed), after the same rebuild and cache clearing. A new text defeats every cache keyed by the
whole text, cleared or not (logichunk's ``text_cache`` entries, any memo by object or equality); the
clearing defeats caches keyed by pieces of it, which a prefix leaves equal (Chonkie's and semchunk's
token counts of the same sentences). Where cold and plain agree, the plain column hides no per-text
cache. The very first call in the process (the warm-up, one-time tables and lazy imports included) is
kept in the JSON as ``first_time`` / ``first_cpu``, not in the table. Peak RSS
is the high-water mark (``VmHWM``) of that subprocess (of the CLI child for the CLI, started from a small
helper process so that it inherits no larger mark), with the growth over the
state after imports and reading the corpus.

Where cuts fall: a cut is the gap between one chunk and the next (widened over whitespace, since
peers strip it). It is "at a sentence end" by logichunk's own ``split_sentences`` when a sentence
end lies in that gap, and by the simple independent rule when the gap holds a newline or follows
``[.!?。！？；…]`` plus optional closing quotes/brackets.

Offsets: for peers, can every chunk be found in order with ``text.find`` from the previous end,
does the concatenation reproduce the text, and (Chonkie, semchunk) are their own offsets exact.

Usage::

    python bench/bench_throughput.py                 # the table (markdown) on stdout
    python bench/bench_throughput.py --mb 1 --runs 1 # quick look
    python bench/bench_throughput.py --profile 15    # cProfile of logichunk.chunk on the en corpus
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import corpora

# Pin every thread pool to one thread. numpy and the peers are imported lazily, after this line,
# and the worker subprocesses inherit the environment.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

MAX_SIZE = 512
WARMUP, RUNS = 1, 3
INPROC_METHODS = ("logichunk", "logichunk-fast", "logichunk-3", "langchain", "chonkie", "semchunk")
METHODS = ("logichunk", "logichunk-fast", "logichunk-3", "logichunk-cli", "logichunk-cli-fast", "langchain", "chonkie",
           "semchunk")
DISTRIBUTIONS = {
    "logichunk": "logichunk", "logichunk-fast": "logichunk", "logichunk-3": "logichunk", "logichunk-cli": "logichunk",
    "logichunk-cli-fast": "logichunk",
    "langchain": "langchain-text-splitters",
    "chonkie": "chonkie", "semchunk": "semchunk",
}
CLI_ARGS = ("--max-size", str(MAX_SIZE), "--levels", "1", "--format", "jsonl")
CACHE_OWNERS = ("logichunk", "chonkie", "semchunk", "langchain_text_splitters")
SIMPLE_END = frozenset(".!?。！？；…")
CLOSERS = frozenset("\"'”’」』）)]】》〉")


# ----------------------------------------------------------------------------- the methods
def _logichunk() -> Callable[[str], object]:
    from logichunk import chunk

    return lambda text: chunk(text, max_size=MAX_SIZE, levels=1)


def _logichunk_fast() -> Callable[[str], object]:
    from logichunk import chunk

    return lambda text: chunk(text, max_size=MAX_SIZE, levels=1, composite=False)


def _logichunk_3() -> Callable[[str], object]:
    from logichunk import chunk

    return lambda text: chunk(text, max_size=MAX_SIZE)


def _langchain() -> Callable[[str], object]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=MAX_SIZE, chunk_overlap=0).split_text


def _chonkie() -> Callable[[str], object]:
    from chonkie import RecursiveChunker

    return RecursiveChunker(tokenizer="character", chunk_size=MAX_SIZE).chunk


def _semchunk() -> Callable[[str], object]:
    import semchunk

    chunker = semchunk.chunkerify(lambda s: len(s), MAX_SIZE)  # a fresh counter: a fresh memo
    return lambda text: chunker(text, offsets=True)


FACTORIES: dict[str, Callable[[], Callable[[str], object]]] = {
    "logichunk": _logichunk, "logichunk-fast": _logichunk_fast, "logichunk-3": _logichunk_3, "langchain": _langchain,
    "chonkie": _chonkie,
    "semchunk": _semchunk,
}


def extract(method: str, result: object) -> tuple[list[str], list[tuple[int, int]] | None]:
    """Chunk texts in order, and the method's own offsets when it gives any."""
    if method == "logichunk-3":
        roots = result.roots()  # type: ignore[attr-defined]
        return [result.text_of(c) for c in roots], [(c.span.start, c.span.end) for c in roots]  # type: ignore[attr-defined]
    if method in ("logichunk", "logichunk-fast"):
        leaves = sorted(result.leaves(), key=lambda c: c.span.start)  # type: ignore[attr-defined]
        return [result.text_of(c) for c in leaves], [(c.span.start, c.span.end) for c in leaves]  # type: ignore[attr-defined]
    if method == "langchain":
        return list(result), None  # type: ignore[call-overload]
    if method == "chonkie":
        return [c.text for c in result], [(c.start_index, c.end_index) for c in result]  # type: ignore[attr-defined]
    if method == "semchunk":
        texts, offs = result  # type: ignore[misc]
        return list(texts), [tuple(o) for o in offs]
    raise ValueError(method)


def clear_caches(owners: Sequence[str] = CACHE_OWNERS) -> int:
    """Clear every ``functools`` cache that takes arguments (per-text caches) in the given packages,
    and semchunk's table of memoised counters. One-time, argument-free caches (tables) are kept."""
    cleared = 0

    def maybe(obj: object) -> None:
        nonlocal cleared
        if not hasattr(obj, "cache_clear"):
            return
        try:
            params = inspect.signature(obj.__wrapped__).parameters  # type: ignore[attr-defined]
        except (AttributeError, TypeError, ValueError):
            params = {"?": None}
        if params:
            obj.cache_clear()  # type: ignore[attr-defined]
            cleared += 1

    for name, mod in list(sys.modules.items()):
        if mod is None or not any(name == o or name.startswith(o + ".") for o in owners):
            continue
        for obj in list(vars(mod).values()):
            maybe(obj)
            if isinstance(obj, type) and obj.__module__ == name:
                for attr in list(vars(obj).values()):
                    maybe(attr)
        memo = getattr(mod, "_memoized_token_counters", None)
        if isinstance(memo, dict):
            memo.clear()
    return cleared


# ----------------------------------------------------------------------------- quality measures
def _maxrss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """Peak RSS in MiB: this process's own high-water mark (``VmHWM``), or its waited-for children's
    ``ru_maxrss``. Not ``ru_maxrss`` for this process: Linux carries a parent's high-water mark into a
    child across ``fork`` and ``exec``, so a worker started by a parent that built the corpora reported
    the parent's peak whenever its own was lower."""
    if who == resource.RUSAGE_SELF:
        try:
            with open("/proc/self/status", encoding="ascii") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024
        except (OSError, StopIteration):
            pass
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


#: runs a command and prints its peak RSS (KiB) on stderr's last line: a fresh, small process, so the
#: command it starts inherits no high-water mark but this one's (~10 MiB)
_PEAK_OF = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)")


def _sentence_ends(text: str):
    from logichunk import split_sentences

    return split_sentences(text).ends


def measure_chunks(text: str, texts: list[str], own: list[tuple[int, int]] | None) -> dict:
    import numpy as np

    n = len(texts)
    sizes = [len(t) for t in texts]
    # find-based location, in order
    located: list[tuple[int, int]] = []
    pos = 0
    for t in texts:
        i = text.find(t, pos)
        if i < 0:
            break
        located.append((i, i + len(t)))
        pos = i + len(t)
    locatable = len(located) == n
    own_exact = None
    if own is not None:
        own_exact = len(own) == n and all(text[a:b] == t for (a, b), t in zip(own, texts, strict=True)) and all(
            own[k][1] <= own[k + 1][0] for k in range(n - 1))
    concat = "".join(texts) == text
    spans = own if own_exact else (located if locatable else None)
    out = {
        "chunks": n, "mean_chars": statistics.fmean(sizes) if sizes else 0.0, "max_chars": max(sizes, default=0),
        "over_max": sum(s > MAX_SIZE for s in sizes), "empty": sum(s == 0 for s in sizes),
        "locatable": locatable, "concat_exact": concat, "own_offsets_exact": own_exact,
        "chars_not_in_chunks": (len(text) - sum(b - a for a, b in spans)) if spans else None,
    }
    if not spans or n < 2:
        out.update(cuts=0, cut_sentence_end_ours=None, cut_sentence_end_simple=None)
        return out
    ends = _sentence_ends(text)
    L = len(text)
    ours = simple = 0
    for k in range(n - 1):
        a, b = spans[k][1], spans[k + 1][0]
        a, b = min(a, b), max(a, b)
        while a > 0 and text[a - 1].isspace():
            a -= 1
        while b < L and text[b].isspace():
            b += 1
        j = int(np.searchsorted(ends, a, side="left"))
        if j < len(ends) and ends[j] <= b:
            ours += 1
        if "\n" in text[a:b]:
            simple += 1
            continue
        q = a
        while q > 0 and text[q - 1] in CLOSERS:
            q -= 1
        if q > 0 and text[q - 1] in SIMPLE_END:
            simple += 1
    cuts = n - 1
    out.update(cuts=cuts, cut_sentence_end_ours=ours / cuts, cut_sentence_end_simple=simple / cuts)
    return out


# ----------------------------------------------------------------------------- the worker (one method, one corpus)
def cold_text(text: str, i: int) -> str:
    """A new string for cold run ``i``: ``text`` behind a short prefix of its own, so neither the same
    object nor equal to ``text`` or to any other run's text (a whole-text cache cannot hit), its hash not
    yet computed, and a paragraph of its own (it moves no cut of the text behind it)."""
    return f"Cold run {i:03d}.\n\n" + text


def _worker(method: str, path: str, runs: int, warmup: int, cold: bool = True) -> dict:
    text = Path(path).read_text(encoding="utf-8")
    nbytes = len(text.encode("utf-8"))
    if method in ("logichunk-cli", "logichunk-cli-fast"):
        return _worker_cli(text, path, nbytes, runs, warmup, fast=method.endswith("-fast"), cold=cold)
    try:
        FACTORIES[method]()  # (a peer not installed is skipped here, before any run)
    except ImportError as e:
        return {"skipped": f"{DISTRIBUTIONS[method]} not installed ({e})"}
    gc.collect()
    rss0 = _maxrss_mib()
    times, cpu, result = [], [], None
    cold_times, cold_cpu, cold_bytes = [], [], []
    first = None

    def timed(t: str) -> tuple[object, float, float]:
        """One run on ``t`` after a rebuilt chunker and cleared caches: (result, wall s, CPU s)."""
        gc.collect()
        clear_caches()
        fn = FACTORIES[method]()
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn(t)
        return out, time.perf_counter() - t0, time.process_time() - c0

    for i in range(warmup + runs):
        if i >= warmup and cold:  # interleaved with the plain run: both see the same load on the machine
            fresh = cold_text(text, i - warmup)
            result = None
            result, dt, dc = timed(fresh)
            cold_times.append(dt)
            cold_cpu.append(dc)
            cold_bytes.append(len(fresh.encode("utf-8")))
            del fresh
        result = None
        result, dt, dc = timed(text)
        if first is None:
            first = {"first_time": dt, "first_cpu": dc}
        if i >= warmup:
            times.append(dt)
            cpu.append(dc)
    peak = _maxrss_mib()
    texts, own = extract(method, result)
    stats = {}
    if method in ("logichunk", "logichunk-fast", "logichunk-3"):
        stats = {k: v for k, v in dict(result.stats).items() if isinstance(v, int | float | str | dict)}  # type: ignore[attr-defined]
    del result
    extra = {"cold_times": cold_times, "cold_cpu": cold_cpu, "cold_bytes": cold_bytes} if cold else {}
    return {"times": times, "cpu": cpu, "bytes": nbytes, "rss_base_mib": rss0, "rss_peak_mib": peak,
            "how": "in-process", "lib_stats": stats, **(first or {}), **extra, **measure_chunks(text, texts, own)}


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _last_line(s: str) -> str:
    lines = [ln.strip() for ln in s.strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else "(no message)").replace("|", "\\|")[:300]


def cli_command() -> list[str]:
    exe = shutil.which("logichunk")
    if exe:
        return [exe]
    return [sys.executable, "-c", "import sys; from logichunk.cli import main; sys.exit(main())"]


def _worker_cli(text: str, path: str, nbytes: int, runs: int, warmup: int, fast: bool = False,
                cold: bool = True) -> dict:
    args = (*CLI_ARGS, "--fast") if fast else CLI_ARGS
    cmd = [*cli_command(), "chunk", path, *args]
    times, cpu = [], []
    # as on a user's machine, the warm-up call leaves compiled bytecode behind (a sandbox that sets
    # PYTHONDONTWRITEBYTECODE would recompile every logichunk module on every call: ~35 ms)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    first = None
    with tempfile.TemporaryDirectory(prefix="logichunk-cli-") as cwd:  # any bubbles file lands here
        for i in range(warmup + runs):
            c0, t0 = _child_cpu(), time.perf_counter()
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=env)
            dt, dc = time.perf_counter() - t0, _child_cpu() - c0
            if p.returncode != 0:
                return {"error": f"CLI exit {p.returncode}: {_last_line(p.stderr.decode(errors='replace'))}"}
            if first is None:
                first = {"first_time": dt, "first_cpu": dc}
            if i >= warmup:
                times.append(dt)
                cpu.append(dc)
        out_path = Path(cwd) / "out.jsonl"
        with out_path.open("wb") as f:  # once more for the output, its peak RSS measured on the way
            p = subprocess.run([sys.executable, "-c", _PEAK_OF, *cmd], stdout=f, stderr=subprocess.PIPE, cwd=cwd,
                               env=env, check=True)
        peak = int(p.stderr.decode(errors="replace").strip().splitlines()[-1]) / 1024
        recs = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    parents = {r.get("parent") for r in recs}
    leaves = sorted((r for r in recs if r["id"] not in parents), key=lambda r: r["start"])
    texts = [r["text"] for r in leaves]
    own = [(r["start"], r["end"]) for r in leaves]
    # every CLI call is a fresh process: no cache outlives it, so each timed call is already a cold one
    extra = {"cold_times": times, "cold_cpu": cpu, "cold_bytes": [nbytes] * len(times)} if cold else {}
    return {"times": times, "cpu": cpu, "bytes": nbytes, "rss_base_mib": None, "rss_peak_mib": peak, **(first or {}),
            **extra, "how": " ".join(["logichunk" if cmd[0].endswith("logichunk") else "python -m", "chunk FILE", *args]),
            **measure_chunks(text, texts, own)}


# ----------------------------------------------------------------------------- the parent: run all, print the table
def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> dict:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    import numpy

    return {"cpu": model, "cores": usable, "python": platform.python_version(), "numpy": numpy.__version__,
            "platform": platform.platform()}


def run_worker(method: str, path: Path, runs: int, warmup: int, cold: bool = True) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", method, str(path),
           "--runs", str(runs), "--warmup", str(warmup), *(() if cold else ("--no-cold",))]
    p = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    if p.returncode != 0:
        return {"error": f"worker exit {p.returncode}: {_last_line(p.stderr)}"}
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {"error": f"no result from worker: {p.stdout[-300:]} {p.stderr[-300:]}"}


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def _yn(x: bool | None) -> str:
    return "—" if x is None else ("yes" if x else "no")


def _offsets_cell(method: str, r: dict) -> str:
    if method.startswith("logichunk"):
        ok = r["own_offsets_exact"] and r["concat_exact"]
        return "exact spans, tile the text" if ok else f"NOT exact (own {_yn(r['own_offsets_exact'])}, tile {_yn(r['concat_exact'])})"
    parts = [f"find in order: {_yn(r['locatable'])}", f"concat = text: {_yn(r['concat_exact'])}"]
    if r.get("chars_not_in_chunks"):
        parts[-1] += f" ({r['chars_not_in_chunks']:,} chars dropped)"
    if r["own_offsets_exact"] is not None:
        parts.append(f"own offsets: {_yn(r['own_offsets_exact'])}")
    return "; ".join(parts)


def _cold_cells(r: dict) -> tuple[str, str]:
    """The cold columns: MB/s over the median wall and CPU time of the runs on fresh texts."""
    if not r.get("cold_times"):
        return "—", "—"
    mb = statistics.fmean(r["cold_bytes"]) / 1e6
    return (f"{mb / max(statistics.median(r['cold_times']), 1e-9):.2f}",
            f"{mb / max(statistics.median(r['cold_cpu']), 1e-9):.2f}")


def table(results: list[tuple[str, str, dict]], runs: int) -> str:
    head = ("| corpus | method | MB/s | MB/s by CPU time | cold MB/s | cold MB/s by CPU time | median s | CPU/wall | chunks | mean / max chars | cuts at sentence end "
            "(logichunk splitter) | cuts at sentence end (simple rule) | offsets | peak RSS MiB (Δ) |")
    rows = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for corpus, method, r in results:
        if "skipped" in r or "error" in r:
            rows.append(f"| {corpus} | {method} | — | — | — | — | — | — | — | — | — | — | — | {r.get('skipped') or r.get('error')} |")
            continue
        med = statistics.median(r["times"])
        cpu_wall = sum(r["cpu"]) / sum(r["times"])
        mbs_cpu = r["bytes"] / 1e6 / max(statistics.median(r["cpu"]), 1e-9)
        mbs = r["bytes"] / 1e6 / med
        rss = f"{r['rss_peak_mib']:.0f}"
        if r.get("rss_base_mib") is not None:
            rss += f" (+{r['rss_peak_mib'] - r['rss_base_mib']:.0f})"
        over = f", {r['over_max']} over {MAX_SIZE}" if r["over_max"] else ""
        cold, cold_cpu = _cold_cells(r)
        rows.append(
            f"| {corpus} | {method} | **{mbs:.2f}** | {mbs_cpu:.2f} | {cold} | {cold_cpu} | {med:.3f} | {cpu_wall:.2f} | {r['chunks']:,} | "
            f"{r['mean_chars']:.0f} / {r['max_chars']}{over} | {_pct(r['cut_sentence_end_ours'])} | "
            f"{_pct(r['cut_sentence_end_simple'])} | {_offsets_cell(method, r)} | {rss} |")
    return "\n".join(rows)


def profile(top: int, target_bytes: int) -> int:
    import cProfile
    import pstats

    from logichunk import chunk

    text, info = corpora.english(target_bytes)
    info.update(chars=len(text), bytes=len(text.encode("utf-8")))
    print(f"profile of logichunk.chunk(text, max_size={MAX_SIZE}, levels=1) on {corpora.describe('en', info)}")
    chunk(text, max_size=MAX_SIZE, levels=1)  # warm-up (one-time tables)
    clear_caches()
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    tree = chunk(text, max_size=MAX_SIZE, levels=1)
    prof.disable()
    dt = time.perf_counter() - t0
    print(f"{len(tree.leaves()):,} chunks in {dt:.3f} s under cProfile ({info['bytes'] / 1e6 / dt:.2f} MB/s)\n")
    for key in ("tottime", "cumulative"):
        print(f"--- top {top} by {key}")
        pstats.Stats(prof, stream=sys.stdout).strip_dirs().sort_stats(key).print_stats(top)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="logichunk vs peers: chunking throughput at a 512-char target")
    ap.add_argument("--mb", type=float, default=corpora.DEFAULT_TARGET_BYTES / 1e6, help="corpus size in MB")
    ap.add_argument("--runs", type=int, default=RUNS, help="timed runs (median)")
    ap.add_argument("--warmup", type=int, default=WARMUP)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--corpora", default="en,zh,en-lines,en-wrapped,code",
                    help="en, zh, en-lines (one sentence per line), en-wrapped (hard-wrapped at 72 columns), "
                         "code (numpy's Python source)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="chunk each corpus repeated N times end to end (texts larger than the data: scaling)")
    ap.add_argument("--json", metavar="PATH", help="also write the raw results here")
    ap.add_argument("--no-cold", dest="cold", action="store_false",
                    help="skip the cold runs (each on a fresh text) and their columns: half the time")
    ap.add_argument("--profile", type=int, metavar="TOP", help="profile logichunk.chunk on the en corpus instead")
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        print(json.dumps(_worker(args.worker[0], args.worker[1], args.runs, args.warmup, cold=args.cold)))
        return 0
    msg = corpora.missing_message()
    if msg:
        print(msg)
        return 0
    if args.profile:
        return profile(args.profile, int(args.mb * 1e6))

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = set(methods) - set(METHODS)
    if unknown:
        ap.error(f"unknown methods {sorted(unknown)}; choose from {', '.join(METHODS)}")
    names = tuple(c.strip() for c in args.corpora.split(",") if c.strip())
    built = corpora.build(names, int(args.mb * 1e6))
    if args.repeat > 1:
        built = {n: (t * args.repeat, {**i, "bytes": i["bytes"] * args.repeat, "chars": i["chars"] * args.repeat,
                                       "docs": i["docs"] * args.repeat, "passes": i["passes"] * args.repeat})
                 for n, (t, i) in built.items()}
    m = machine()
    load0 = os.getloadavg()
    results: list[tuple[str, str, dict]] = []
    with tempfile.TemporaryDirectory(prefix="logichunk-bench-") as tmp:
        for name, (text, _info) in built.items():
            path = Path(tmp) / f"{name}.txt"
            path.write_text(text, encoding="utf-8")
            for method in methods:
                print(f"[bench] {name} {method} ...", file=sys.stderr, flush=True)
                results.append((name, method, run_worker(method, path, args.runs, args.warmup, args.cold)))
    load1 = os.getloadavg()

    print(f"Machine: {m['cpu']}, {m['cores']} usable cores; Python {m['python']}, numpy {m['numpy']}; {m['platform']}")
    print(f"Load average (1/5/15 min) before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; "
          f"after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    print("Versions: " + ", ".join(f"{d} {_version(d)}" for d in dict.fromkeys(DISTRIBUTIONS[x] for x in methods)))
    print("Corpora: " + "; ".join(corpora.describe(n, i) for n, (_t, i) in built.items()))
    print(f"Target {MAX_SIZE} chars for all; MB = 10**6 UTF-8 bytes; median of {args.runs} runs after "
          f"{args.warmup} warm-up, each method in its own process, thread pools pinned to 1. MB/s uses the median "
          "wall time; 'by CPU time' uses the median process CPU time (user+sys; for the CLI, of the child), which "
          "other load on the machine disturbs less. CPU/wall: their ratio over the timed runs (about 1.00 = one "
          "busy core, not starved by other load)." + (
              " cold MB/s: the same, over as many runs each on a fresh text (a new prefix per run: neither the "
              "same object nor equal), interleaved with the plain runs; for the CLI each call is a fresh process "
              "anyway, so its cold columns repeat the plain ones." if args.cold else "") + "\n")
    print(table(results, args.runs))
    notes = [f"- {c} / {mm}: {r.get('skipped') or r.get('error')}" for c, mm, r in results if "skipped" in r or "error" in r]
    if notes:
        print("\nSkipped or failed:\n" + "\n".join(notes))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": m, "load_before": load0, "load_after": load1,
                                               "results": results}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

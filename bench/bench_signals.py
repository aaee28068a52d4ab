"""Micro-benchmark of the model-free signals: speed (MB/s) and a quick segmentation check (Pk).

Speed: ``EntropySignal.gap_scores`` and the curves on ~5 MB of English (Chroma general corpus,
field ``text``, repeated to size) and ~5 MB of Chinese (DRCD dev articles), one process, one
string per language; MB = 10**6 UTF-8 bytes; best of ``--runs`` after clearing the per-text
caches. Sentences come from ``split_sentences`` (not timed).

Quality: public segmentation sets (``segmentation/{choi,wiki300,weibo_short_dev_sample1000}``,
``dialogue/*``; units = sentences, boundaries = indices after which a gold boundary falls). Each
document becomes ``" ".join(units)`` (English) or ``"".join(units)`` (Chinese) — no newline, so
structure does not leak — with sentence spans at the unit boundaries. A method's gap scores pick
as many cuts as there are gold boundaries (local maxima first, highest first) and Pk is computed
with k = half the mean gold segment length (in units), averaged over documents. Baselines: random
cuts (same number, seed 0) and even spacing. This is a quick check; the real harness lives in
``logichunk.eval``.

The data folder is ``<repo>/../shared/data`` or ``$LOGICHUNK_DATA``; without it the script says
so and exits 0.

Usage::

    python bench/bench_signals.py                 # speed + Pk (200 docs per set)
    python bench/bench_signals.py --only pk --docs 100 --sets choi,weibo
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from logichunk.signals import entropy as E
from logichunk.signals import ngrams, novelty
from logichunk.signals.composite import CompositeSignal
from logichunk.text.charclass import _classes_cached, classes, codepoints
from logichunk.text.sentences import SentenceSpans, split_sentences

SETS = {
    "choi": "segmentation/choi.jsonl",
    "wiki300": "segmentation/wiki300.jsonl",
    "weibo": "segmentation/weibo_short_dev_sample1000.jsonl",
    "dialseg": "dialogue/dialseg_711.jsonl",
    "tiage": "dialogue/tiage_train_dev.jsonl",
    "dact": "dialogue/dact_dev.jsonl",
}


def data_dir() -> Path:
    env = os.environ.get("LOGICHUNK_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


# --------------------------------------------------------------------------- speed


def _corpus(path: Path, target: int) -> str:
    docs = [json.loads(line)["text"] for line in path.open(encoding="utf-8")]
    parts: list[str] = []
    size = 0
    while size < target:
        for d in docs:
            parts.append(d)
            size += len(d.encode("utf-8")) + 2
            if size >= target:
                break
    return "\n\n".join(parts)


def _clear_caches() -> None:
    for f in (codepoints, _classes_cached, E.content_items, novelty.novelty_profile, novelty._novelty_prefix):
        f.cache_clear()


def _best(fn: Callable[[], object], runs: int, prep: Callable[[], object] | None = None) -> float:
    best = float("inf")
    for _ in range(runs):
        _clear_caches()
        if prep is not None:
            prep()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _calibration() -> str:
    """The machine's speed right now, on the primitives quoted in the design notes."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**63, 1_000_000, dtype=np.uint64)
    b = rng.integers(0, 2**20, 1_000_000)
    t_sort = _best(lambda: np.sort(a), 7)
    t_bin = _best(lambda: np.bincount(b, minlength=2**20), 7)
    return f"np.sort of 1M uint64: {t_sort * 1e3:.1f} ms; np.bincount of 1M into 2^20 bins: {t_bin * 1e3:.1f} ms"


def speed(runs: int, target: int) -> None:
    d = data_dir()
    corpora = {
        "en": _corpus(d / "chunking/chroma_general.corpus.jsonl", target),
        "zh": _corpus(d / "chunking/drcd_dev_article.corpus.jsonl", target),
    }
    print(f"\n## speed (MB = 10^6 UTF-8 bytes, best of {runs}, per-text caches cleared before each run)\n")
    print(f"machine now: {_calibration()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    print(f"| {'signal':46s} | {'lang':4s} | {'MB':>5s} | {'sentences':>9s} | {'seconds':>8s} | {'MB/s':>7s} |")
    print(f"|{'-' * 48}|------|-------|-----------|----------|---------|")
    for lang, text in corpora.items():
        mb = len(text.encode("utf-8")) / 1e6
        sents = split_sentences(text)
        sig = E.EntropySignal()

        def shared(t: str = text) -> None:  # what the sentence splitter has already computed
            codepoints(t)
            classes(t)

        jobs: list[tuple[str, Callable[[], object], Callable[[], object] | None]] = [
            ("EntropySignal.gap_scores", lambda s=sents, g=sig: g.gap_scores(s), None),
            ("EntropySignal.gap_scores (code points cached)", lambda s=sents, g=sig: g.gap_scores(s), shared),
            ("  of which content_items", lambda t=text: E.content_items(t), None),
            ("entropy_curve (100/50, n=2)", lambda t=text: E.entropy_curve(t), None),
            ("perplexity_curve (100/50, n=2)", lambda t=text: E.perplexity_curve(t), None),
            ("divergence_curve (100/50, n=2)", lambda t=text: E.divergence_curve(t), None),
            ("CompositeSignal.gap_scores", lambda s=sents: CompositeSignal().gap_scores(s), None),
        ]
        for name, fn, prep in jobs:
            sec = _best(fn, runs, prep)
            print(f"| {name:46s} | {lang:4s} | {mb:5.2f} | {len(sents):9d} | {sec:8.3f} | {mb / sec:7.1f} |",
                  flush=True)


# --------------------------------------------------------------------------- quality


def load(name: str, limit: int, seed: int = 0) -> list[dict]:
    docs = [json.loads(line) for line in (data_dir() / SETS[name]).open(encoding="utf-8")]
    docs = [d for d in docs if len(d["units"]) >= 2]
    if len(docs) > limit:
        docs = random.Random(seed).sample(docs, limit)
    return docs


def as_spans(doc: dict) -> SentenceSpans:
    """The document as one text with sentence spans at the unit boundaries (separator in the
    sentence before it, as the splitter's contract says)."""
    sep = "" if doc["lang"] == "zh" else " "
    units = doc["units"]
    text = sep.join(units)
    lens = np.array([len(u) for u in units], dtype=np.int64) + len(sep)
    lens[-1] -= len(sep)
    ends = np.cumsum(lens)
    starts = np.concatenate(([0], ends[:-1]))
    return SentenceSpans(text, starts, ends, np.zeros(len(units) - 1, np.int8))


def pk(ref: Iterable[int], hyp: Iterable[int], n: int, k: int) -> float:
    r = np.zeros(n - 1, np.int64)
    h = np.zeros(n - 1, np.int64)
    r[list(ref)] = 1
    h[list(hyp)] = 1
    if n - k <= 0:
        return 0.0
    cr = np.concatenate(([0], np.cumsum(r)))
    ch = np.concatenate(([0], np.cumsum(h)))
    i = np.arange(n - k)
    return float(np.mean(((cr[i + k] - cr[i]) > 0) != ((ch[i + k] - ch[i]) > 0)))


def pick(scores: np.ndarray, k: int) -> list[int]:
    """``k`` cuts: local maxima first (highest first), then the rest by score; ties by position."""
    s = np.asarray(scores, dtype=np.float64)
    if k <= 0 or s.size == 0:
        return []
    left = np.concatenate(([-np.inf], s[:-1]))
    right = np.concatenate((s[1:], [-np.inf]))
    is_peak = (s >= left) & (s >= right)
    order = np.lexsort((np.arange(s.size), -s, ~is_peak))
    return sorted(order[:k].tolist())


def evaluate(docs: list[dict], method: Callable[[dict, SentenceSpans], list[int]]) -> float:
    out = []
    for d in docs:
        n = len(d["units"])
        k = max(1, int(round(n / (len(d["boundaries"]) + 1) / 2)))
        out.append(pk(d["boundaries"], method(d, as_spans(d)), n, k))
    return float(np.mean(out))


def by_signal(signal) -> Callable[[dict, SentenceSpans], list[int]]:
    return lambda d, s: pick(signal.gap_scores(s), len(d["boundaries"]))


def by_threshold(signal, k: float = 1.0) -> Callable[[dict, SentenceSpans], list[int]]:
    """Cuts without knowing how many: local maxima scoring above mean + k * std."""

    def method(d: dict, s: SentenceSpans) -> list[int]:
        x = np.asarray(signal.gap_scores(s), dtype=np.float64)
        if x.size == 0:
            return []
        left = np.concatenate(([-np.inf], x[:-1]))
        right = np.concatenate((x[1:], [-np.inf]))
        return np.flatnonzero((x >= left) & (x >= right) & (x > x.mean() + k * x.std())).tolist()

    return method


def random_cuts(seed: int = 0) -> Callable[[dict, SentenceSpans], list[int]]:
    rng = np.random.default_rng(seed)

    def method(d: dict, s: SentenceSpans) -> list[int]:
        n, k = len(d["units"]), len(d["boundaries"])
        return sorted(rng.choice(n - 1, size=min(k, n - 1), replace=False).tolist())

    return method


def even_cuts(d: dict, s: SentenceSpans) -> list[int]:
    n, k = len(d["units"]), len(d["boundaries"])
    return sorted({int(round((j + 1) * n / (k + 1))) - 1 for j in range(k)} & set(range(n - 1)))


class _JumpSignal:
    """``|H_right - H_left|``: character-bigram entropy of the ``w`` characters after the gap minus
    that of the ``w`` before (windows shrink symmetrically at the edges). Kept to show why the
    entropy jump alone is not the default."""

    name = "entropy-jump"

    def __init__(self, w: int = 100) -> None:
        self.w = w

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        text, p = sents.text, np.asarray(sents.ends[:-1], dtype=np.int64)
        key, _ = ngrams._gram_keys(text, 2)
        out = np.zeros(p.size)
        if key.size == 0:
            return out
        w = np.minimum(np.minimum(p, len(text) - p), self.w)
        pad = np.concatenate((key, np.full(self.w, np.iinfo(key.dtype).max, key.dtype)))
        for width in np.unique(w).tolist():
            if width >= 2:
                sel = np.flatnonzero(w == width)
                hl = ngrams._window_entropy(pad, p[sel] - width, width - 1)
                hr = ngrams._window_entropy(pad, p[sel], width - 1)
                out[sel] = np.abs(hr - hl)
        return out


class _Divergence:
    """Character-bigram JSD of the windows either side (:func:`divergence_curve`, grid of 25
    characters, interpolated at the gaps)."""

    name = "divergence"

    def __init__(self, w: int = 100) -> None:
        self.w = w

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        t, v = E.divergence_curve(sents.text, self.w, max(1, self.w // 4), 2)
        gaps = np.asarray(sents.ends[:-1])
        return np.interp(gaps, t, v) if t.size else np.zeros(gaps.size)


def variants() -> dict[str, Callable[[dict, SentenceSpans], list[int]]]:
    return {
        "random cuts": random_cuts(),
        "even spacing": even_cuts,
        "entropy jump |dH| (100 ch)": by_signal(_JumpSignal(100)),
        "bigram JSD (100 ch)": by_signal(_Divergence(100)),
        "EntropySignal K=10": by_signal(E.EntropySignal(scales=(10,))),
        "EntropySignal K=80": by_signal(E.EntropySignal(scales=(80,))),
        "EntropySignal (default)": by_signal(E.EntropySignal()),
        "CompositeSignal (default)": by_signal(CompositeSignal()),
        "EntropySignal, peaks > mean+std": by_threshold(E.EntropySignal(), 1.0),
    }


def quality(sets: list[str], limit: int) -> None:
    loaded = {s: load(s, limit) for s in sets}
    print(f"\n## Pk (lower is better; {limit} docs per set at most, seed 0; as many cuts as gold, "
          "except the last row)\n")
    print(f"| {'method':32s} | " + " | ".join(f"{s:>7s}" for s in sets) + " |    mean |")
    print(f"|{'-' * 34}|" + "|".join("-" * 9 for _ in sets) + "|---------|")
    for name, method in variants().items():
        vals = [evaluate(loaded[s], method) for s in sets]
        print(f"| {name:32s} | " + " | ".join(f"{v:7.3f}" for v in vals) + f" | {np.mean(vals):7.3f} |",
              flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["speed", "pk"], default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mb", type=float, default=5.0, help="corpus size per language for speed (MB)")
    ap.add_argument("--docs", type=int, default=200, help="documents per set for Pk")
    ap.add_argument("--sets", default="choi,wiki300,weibo,dialseg,tiage,dact")
    args = ap.parse_args(argv)
    d = data_dir()
    need = ["chunking/chroma_general.corpus.jsonl", "chunking/drcd_dev_article.corpus.jsonl",
            *SETS.values()]
    missing = [p for p in need if not (d / p).is_file()]
    if missing:
        print(f"bench_signals: benchmark data not found under {d} (missing: {', '.join(missing)}); "
              "set LOGICHUNK_DATA to the shared data folder. Skipping.")
        return 0
    if args.only in (None, "speed"):
        speed(args.runs, int(args.mb * 1e6))
    if args.only in (None, "pk"):
        quality([s for s in args.sets.split(",") if s], args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

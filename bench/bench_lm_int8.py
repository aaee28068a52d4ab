"""The default LM in int8 against float32, side by side: speed of the PPL pass and agreement of what
the chunkers read from it (token log-probs for PPL, yes/no margins for MSP), and the speed of
generation through the in-process chat LLM.

    python bench/bench_lm_int8.py                   # 1,024 tokens zh + en, 72 MSP sentence pairs
    python bench/bench_lm_int8.py --tokens 2048 --pairs 30

Needs the ``[lm]`` extra (the packaged Qwen2.5-Coder-0.5B); text from ``../shared/data`` (DRCD
articles for zh, wiki300 for en; Weibo and DAct for the MSP pairs), skipped with a message when absent.
Both models live in one process and are timed alternately (3 rounds, median), so a noisy neighbour
hits both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ppl import load_text  # noqa: E402

DATA = Path(os.environ.get("LOGICHUNK_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def msp_pairs(n: int) -> list[tuple[str, str, str]]:
    """(current chunk = up to three units, next unit, language) from the first documents of Weibo
    (zh) and DAct (en)."""
    out: list[tuple[str, str, str]] = []
    for rel, lang in (("segmentation/weibo_short_dev_sample1000.jsonl", "zh"), ("dialogue/dact_dev.jsonl", "en")):
        with open(DATA / rel, encoding="utf-8") as fh:
            for line in fh:
                units = json.loads(line)["units"]
                for i in range(min(len(units) - 1, 12)):
                    out.append((" ".join(units[max(0, i - 2):i + 1]), units[i + 1], lang))
                if len([p for p in out if p[2] == lang]) >= n // 2:
                    break
    return out


def gemm(m: int = 256, k: int = 896, n: int = 4864, reps: int = 30) -> None:
    """The arithmetic alone: one MLP-sized product in float32, bfloat16 and int8 (what decides the
    default dtype on a CPU)."""
    import torch

    a, w = torch.randn(m, k), torch.randn(n, k)
    ab, wb = a.bfloat16(), w.bfloat16()
    qa, qw = torch.randint(-127, 128, (m, k), dtype=torch.int8), torch.randint(-127, 128, (k, n), dtype=torch.int8)
    runs = {"float32": lambda: torch.nn.functional.linear(a, w),
            "bfloat16": lambda: torch.nn.functional.linear(ab, wb),
            "int8 (torch._int_mm)": lambda: torch._int_mm(qa, qw)}
    cells = []
    for name, f in runs.items():
        f()
        t = time.perf_counter()
        for _ in range(reps):
            f()
        cells.append(f"{name} {2 * m * k * n * reps / (time.perf_counter() - t) / 1e9:.0f}")
    print(f"product {m} × {k} × {n}, G(FL)OP/s: " + ", ".join(cells) + "\n")


def generation(lms: dict, tokens: int = 64) -> None:
    """Greedy decoding through the in-process chat LLM (``--llm local``: tier 2, validation,
    compensation), one token at a time — memory-bound, where int8 weights are a quarter of the bytes."""
    from logichunk.models.local_llm import LocalChatLLM

    msgs = [{"role": "user", "content": "Explain in three sentences why the sky is blue."}]
    cells = []
    for dt, lm in lms.items():
        llm = LocalChatLLM(lm)
        llm.complete(msgs, max_tokens=4)  # warm-up
        t = time.perf_counter()
        n = llm.complete(msgs, max_tokens=tokens).usage.completion_tokens
        cells.append(f"{dt} {n / (time.perf_counter() - t):.1f}")
    print(f"\ngreedy generation, {tokens} tokens, tokens/s: " + ", ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--pairs", type=int, default=72)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    try:
        from logichunk.chunkers.meta import msp_margin
        from logichunk.models.int8 import int8_supported
        from logichunk.models.lm import load_default_lm
    except ImportError as e:
        print(f"bench_lm_int8: needs the [lm] extra ({e}); skipped")
        return
    if not int8_supported():
        print("bench_lm_int8: this torch build has no CPU int8 product; skipped")
        return
    if not (DATA / "dialogue" / "dact_dev.jsonl").exists():
        print(f"bench_lm_int8: no benchmark data under {DATA} (set LOGICHUNK_DATA); skipped")
        return
    gemm()
    lms = {dt: load_default_lm(dtype=dt) for dt in ("float32", "int8")}
    print(f"default LM, float32 vs int8, torch threads {__import__('torch').get_num_threads()}\n")
    print("| text | tokens | float32 tok/s | int8 tok/s | speed-up | mean NLL float32 → int8 | corr | mean abs diff |")
    print("|---|---|---|---|---|---|---|---|")
    for lang in ("zh", "en"):
        text, src = load_text(lang, 5 * args.tokens)
        ids = lms["float32"].encode(text)[0][: args.tokens]
        lp, secs = {}, {dt: [] for dt in lms}
        for lm in lms.values():
            lm._logprobs_ids(ids[:256])  # warm-up
        for _ in range(args.rounds):
            for dt, lm in lms.items():
                t = time.perf_counter()
                lp[dt] = lm._logprobs_ids(ids)
                secs[dt].append(time.perf_counter() - t)
        a, b = lp["float32"], lp["int8"]
        ok = ~np.isnan(a)
        sf, si = float(np.median(secs["float32"])), float(np.median(secs["int8"]))
        print(f"| {src} ({lang}) | {ids.size} | {ids.size / sf:.1f} | {ids.size / si:.1f} | {sf / si:.2f}× | "
              f"{-a[ok].mean():.3f} → {-b[ok].mean():.3f} | {np.corrcoef(a[ok], b[ok])[0, 1]:.4f} | "
              f"{np.abs(a[ok] - b[ok]).mean():.3f} |")
    pairs = msp_pairs(args.pairs)
    m = {dt: np.array([msp_margin(lm, x, y, lang) for x, y, lang in pairs]) for dt, lm in lms.items()}
    a, b = m["float32"], m["int8"]
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    print(f"\nMSP margins P(keep) − P(split), {len(pairs)} sentence pairs (Weibo zh + DAct en): "
          f"Pearson {np.corrcoef(a, b)[0, 1]:.3f}, Spearman {np.corrcoef(ra, rb)[0, 1]:.3f}, "
          f"same sign {np.mean(np.sign(a) == np.sign(b)):.0%}, mean |Δ| {np.abs(a - b).mean():.3f} "
          f"(spread of the float32 margins: sd {a.std():.3f})")
    generation(lms)


if __name__ == "__main__":
    main()

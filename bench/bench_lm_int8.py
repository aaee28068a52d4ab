"""The default LM by backend, side by side: transformers in float32 (the reference) and in int8,
and llama.cpp on the GGUF file the packages ship (when ``llama-cpp-python`` is installed): speed of
the PPL pass and agreement of what the chunkers read from it (token log-probs for PPL, yes/no
margins for MSP), and the speed of generation through the in-process chat LLM.

    python bench/bench_lm_int8.py                   # 1,024 tokens zh + en, 72 MSP sentence pairs
    python bench/bench_lm_int8.py --tokens 2048 --pairs 30 --no-llamacpp
    python bench/bench_lm_int8.py --model qwen2.5-coder-1.5b-instruct --no-llamacpp --pairs 0

Needs the ``[lm]`` extra (the packaged Qwen2.5-Coder-0.5B); text from ``../shared/data`` (DRCD
articles for zh, wiki300 for en; Weibo and DAct for the MSP pairs), skipped with a message when absent.
All models live in one process and are timed alternately (3 rounds, median), so a noisy neighbour
hits them alike.
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
    msgs = [{"role": "user", "content": "Explain in three sentences why the sky is blue."}]
    cells = []
    from logichunk.models.local_llm import chat_on

    for name, lm in lms.items():
        llm = chat_on(lm)
        llm.complete(msgs, max_tokens=4)  # warm-up
        t = time.perf_counter()
        n = llm.complete(msgs, max_tokens=tokens).usage.completion_tokens
        cells.append(f"{name} {n / (time.perf_counter() - t):.1f}")
    print(f"\ngreedy generation, {tokens} tokens, tokens/s: " + ", ".join(cells))


def load_backends(model: str, llamacpp: bool, threads: int) -> dict:
    """float32 and int8 through transformers; llama.cpp on the shipped GGUF (reassembled into a
    temporary folder) when asked and installed."""
    from logichunk.models.lm import PACKAGED_LMS, assemble_gguf, load_default_lm
    from logichunk.models.lm_llamacpp import LlamaCppLM, llama_cpp_available

    spec = PACKAGED_LMS[model]
    lms = {dt: load_default_lm(dtype=dt, spec=spec) for dt in ("float32", "int8")}
    if llamacpp and llama_cpp_available():
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="bench-gguf-"))
        lms["llama.cpp"] = LlamaCppLM(assemble_gguf(spec, tmp), threads=threads)
    elif llamacpp:
        print("(llama-cpp-python is not installed: no llama.cpp rows)")
    return lms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--pairs", type=int, default=72)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-llamacpp", action="store_true", help="leave llama.cpp out even when it is installed")
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct",
                    help="a packaged LM (logichunk.models.lm.PACKAGED_LMS), e.g. qwen2.5-coder-1.5b-instruct")
    args = ap.parse_args()
    try:
        import torch

        from logichunk.chunkers.meta import msp_margin
        from logichunk.models.int8 import int8_supported
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
    lms = load_backends(args.model, not args.no_llamacpp, torch.get_num_threads())
    print(f"{args.model} by backend ({', '.join(lms)}), threads {torch.get_num_threads()}\n")
    print("| text | tokens | backend | tokens/s | vs float32 | mean NLL | corr with float32 | mean abs diff |")
    print("|---|---|---|---|---|---|---|---|")
    for lang in ("zh", "en"):
        text, src = load_text(lang, 5 * args.tokens)
        ids, starts, ends = lms["float32"].encode(text)
        text = text[: int(ends[min(args.tokens, ids.size) - 1])]  # the same text for every backend
        res, secs = {}, {name: [] for name in lms}
        for lm in lms.values():
            lm.token_logprobs(text[:300])  # warm-up
        for _ in range(args.rounds):
            for name, lm in lms.items():
                t = time.perf_counter()
                res[name] = lm.token_logprobs(text)
                secs[name].append(time.perf_counter() - t)
        ref = res["float32"]
        for name, r in res.items():
            sec = float(np.median(secs[name]))
            same = len(r) == len(ref) and bool((r.starts == ref.starts).all())
            ok = np.isfinite(ref.logprobs) & np.isfinite(r.logprobs)
            agree = (f"{np.corrcoef(ref.logprobs[ok], r.logprobs[ok])[0, 1]:.4f} | "
                     f"{np.abs(ref.logprobs[ok] - r.logprobs[ok]).mean():.3f}") if same else "other tokens | –"
            print(f"| {src} ({lang}) | {len(r)} | {name} | {len(r) / sec:.1f} | "
                  f"{float(np.median(secs['float32'])) / sec:.2f}× | {-r.logprobs[ok].mean():.3f} | {agree} |")
    pairs = msp_pairs(args.pairs) if args.pairs > 0 else []
    m = {} if not pairs else {name: np.array([msp_margin(lm, x, y, lang) for x, y, lang in pairs]) for name, lm in lms.items()}
    a = m.get("float32", np.zeros(0))
    ra = np.argsort(np.argsort(a))
    for name, b in m.items():
        if name == "float32":
            continue
        rb = np.argsort(np.argsort(b))
        print(f"\nMSP margins P(keep) − P(split), {len(pairs)} sentence pairs (Weibo zh + DAct en), {name} vs "
              f"float32: Pearson {np.corrcoef(a, b)[0, 1]:.3f}, Spearman {np.corrcoef(ra, rb)[0, 1]:.3f}, "
              f"same sign {np.mean(np.sign(a) == np.sign(b)):.0%}, mean |Δ| {np.abs(a - b).mean():.3f} "
              f"(spread of the float32 margins: sd {a.std():.3f})")
    generation(lms)


if __name__ == "__main__":
    main()

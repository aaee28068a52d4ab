"""One short device check of the local LM on a CUDA GPU (``TransformersLM(device="cuda")``), for a machine
where nothing can be downloaded and no model files exist: every model here is randomly initialised.

Needs only the standard library, numpy, torch and transformers (with its ``tokenizers``), plus logichunk
from ``src`` (``PYTHONPATH=src``). Writes ``gpu_check.json`` (after every section, so a run cut short
still leaves what it measured) and ``gpu_check.txt`` (a human summary, also printed) to ``--out``
(default ``$OUT``, else ``./gpu_out``). Sections, each guarded (a failure is recorded as its one-line
error and the next section runs):

* ``a_tiny_fp32`` — a tiny random Qwen2, CPU float32 vs CUDA float32 token log-probs over a ~3,000-token
  zh+en text with ``window`` < ``max_context`` < the text (the rolling cache is trimmed): max and mean
  differences, and option log-probs.
* ``b_tiny_bf16`` — the same model saved and loaded with ``from_pretrained(dtype="auto", device="cuda")``
  (auto = bfloat16 on CUDA) vs CPU float32: mean NLL difference; and ``load_lm(device="auto")``'s note.
* ``c_default_shape`` — a random model of the default LM's shape (Qwen2.5-0.5B: hidden 896, 24 layers,
  14 heads, 2 KV heads, intermediate 4864, vocabulary 151,936; tokenizer trained on the text in-process):
  CPU float32 tokens/s on ``--cpu-tokens`` tokens; CUDA float32 and bfloat16 on the same tokens (their
  differences from the CPU's) and bfloat16 tokens/s on ``--gpu-tokens`` tokens; ``c2_variants``: the same
  with ``vocab_block`` 32768 (fewer head slices) for comparison.
* ``d_ppl_chunker`` — ``chunk_by("ppl", ...)`` with that bfloat16 model on CUDA: spans tile the text, no
  text altered; and the tiny model's PPL cuts on CPU float32 vs CUDA float32 / bfloat16.

``--cpu-only`` runs the very same code with the "GPU" device set to ``cpu`` and small sizes (2 layers,
few tokens): the proof that the script works before it is handed to a GPU machine. ``LOGICHUNK_NATIVE``
defaults to ``0`` here (the compiled kernels' numpy twins give the same bits; no compiler is needed
or waited for on the device machine).

    PYTHONPATH=src python3 bench/gpu_check.py --out "$OUT"        # on the GPU machine, ~1-2 min
    PYTHONPATH=src python bench/gpu_check.py --cpu-only --out /tmp/gpu_out
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("LOGICHUNK_NATIVE", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
T0 = time.perf_counter()
RESULTS: dict = {}
SUMMARY: list[str] = []

# The default LM's shape (Qwen2.5-Coder-0.5B-Instruct's config.json), random weights.
QWEN05 = {"hidden": 896, "layers": 24, "heads": 14, "kv_heads": 2, "intermediate": 4864, "model_vocab": 151936,
          "positions": 32768}

EN_EXTRA = (
    "Solar panels turn light into electricity. Their efficiency has doubled in twenty years, and costs fell even "
    "faster. Meanwhile, the city council voted on the new bus routes. Route 7 will run every ten minutes, and "
    "residents welcomed the change. The library reopened after a long renovation; its reading room now has "
    "daylight from three sides, and the archive moved to the basement, where the humidity is easier to control.")
ZH_EXTRA = (
    "在歐洲，梵語的學術研究由德國學者開創。後來威廉·瓊斯發現印歐語系，也要歸功於對梵語的研究。此外，梵語研究也對西方文字學及"
    "歷史語言學的發展貢獻不少。太陽能電池板把光變成電。效率二十年翻了一番，成本下降得更快。市議會投票通過了新的公車路線，七路車"
    "每十分鐘一班，居民都很歡迎。圖書館整修後重新開放，閱覽室三面採光，檔案室搬到了地下室，那裡的濕度比較容易控制。")


def corpus() -> str:
    """A zh+en text from the repository's own examples and README, with built-in paragraphs (no data files
    travel to the device machine)."""
    parts = []
    for name in ("examples/en_public_domain.md", "examples/zh_public_domain.txt"):
        try:
            parts.append((ROOT / name).read_text(encoding="utf-8"))
        except OSError:
            pass
    parts += [EN_EXTRA, ZH_EXTRA]
    try:
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        parts.append(readme[:12000])
    except OSError:
        pass
    return "\n\n".join(parts)


def upto_tokens(lm, text: str, n: int) -> tuple[str, int]:
    """``text`` repeated as needed and cut at a token boundary to about ``n`` of ``lm``'s tokens."""
    base = text
    while True:
        ids, starts, ends = lm.encode(text)
        if ids.size >= n + 1:
            cut = int(starts[n])
            return text[:cut], n
        text = text + "\n\n" + base


def first_line(e: BaseException) -> str:
    s = f"{type(e).__name__}: {e}".strip().splitlines()
    return s[0][:500] if s else type(e).__name__


def save(out: Path) -> None:
    RESULTS["elapsed_s"] = round(time.perf_counter() - T0, 2)
    (out / "gpu_check.json").write_text(json.dumps(RESULTS, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "gpu_check.txt").write_text("\n".join(SUMMARY) + "\n", encoding="utf-8")


def say(line: str) -> None:
    SUMMARY.append(line)
    print(line, flush=True)


def section(name: str, out: Path, budget: float, need: float):
    """Run the decorated function as section ``name``: its dict is recorded, an exception as a one-line error;
    skipped when fewer than ``need`` seconds of the ``budget`` are left."""
    def wrap(fn):
        left = budget - (time.perf_counter() - T0)
        if left < need:
            RESULTS[name] = {"skipped": f"time budget: {left:.0f} s left, needs ~{need:.0f} s"}
            say(f"[{name}] skipped: time budget ({left:.0f} s left)")
            save(out)
            return None
        t = time.perf_counter()
        try:
            res = fn()
            res["section_s"] = round(time.perf_counter() - t, 2)
            RESULTS[name] = res
        except Exception as e:  # noqa: BLE001 - every failure is recorded, the next section runs
            RESULTS[name] = {"error": first_line(e), "where": traceback.format_exc().strip().splitlines()[-3:],
                             "section_s": round(time.perf_counter() - t, 2)}
            say(f"[{name}] FAILED: {first_line(e)}")
        save(out)
        return RESULTS[name]
    return wrap


def diffs(ref: np.ndarray, got: np.ndarray) -> dict:
    """How far ``got``'s token log-probs are from ``ref``'s (finite entries of both)."""
    ok = np.isfinite(ref) & np.isfinite(got)
    d = got[ok] - ref[ok]
    return {"tokens": int(ok.sum()), "max_abs_diff": float(np.abs(d).max()) if d.size else None,
            "mean_abs_diff": float(np.abs(d).mean()) if d.size else None,
            "mean_diff": float(d.mean()) if d.size else None,
            "mean_nll_ref": float(-ref[ok].mean()), "mean_nll": float(-got[ok].mean()),
            "mean_nll_diff": float(-got[ok].mean() + ref[ok].mean())}


def sync(torch, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(torch, device: str, fn):
    sync(torch, device)
    w, c = time.perf_counter(), time.process_time()
    res = fn()
    sync(torch, device)
    return res, time.perf_counter() - w, time.process_time() - c


def rolling(trace) -> dict:
    """Whether the pass trimmed its cache (a window saw fewer tokens than all before it)."""
    return {"windows": len(trace), "trimmed_windows": sum(1 for t in trace if t.context.size < t.start),
            "max_context_seen": max((int(t.context.size) + t.end - t.start for t in trace), default=0)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or "gpu_out")
    ap.add_argument("--cpu-only", action="store_true", help="the same code on the CPU, small sizes")
    ap.add_argument("--gpu-tokens", type=int, default=None, help="tokens for the CUDA bf16 timing (50000)")
    ap.add_argument("--cpu-tokens", type=int, default=None, help="tokens for the CPU float32 timing (2000)")
    ap.add_argument("--layers", type=int, default=None, help="layers of the default-shape model (24)")
    ap.add_argument("--budget", type=float, default=180.0, help="seconds; a section that would not fit is skipped")
    args = ap.parse_args(argv)
    small = args.cpu_only
    gpu_tokens = args.gpu_tokens or (1200 if small else 50000)
    cpu_tokens = args.cpu_tokens or (300 if small else 2000)
    layers = args.layers or (2 if small else QWEN05["layers"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    import torch
    import transformers

    import logichunk
    from logichunk import native
    from logichunk.models.lm import TransformersLM, build_tiny_lm, load_lm

    dev = "cpu" if small else "cuda"
    RESULTS["env"] = {
        "argv": sys.argv[1:], "cpu_only": small, "device_under_test": dev, "python": platform.python_version(),
        "torch": torch.__version__, "torch_cuda": torch.version.cuda, "transformers": transformers.__version__,
        "numpy": np.__version__, "logichunk": getattr(logichunk, "__version__", "?"),
        "cuda_available": torch.cuda.is_available(), "cpu_threads": torch.get_num_threads(),
    }
    for key, probe in (("gpu", lambda: torch.cuda.get_device_name(0) if torch.cuda.is_available() else None),
                       ("tf32_matmul", lambda: torch.backends.cuda.matmul.allow_tf32),
                       ("native", native.status)):
        try:
            RESULTS["env"][key] = probe()
        except Exception as e:  # noqa: BLE001 - a probe's failure is recorded, not fatal
            RESULTS["env"][key] = f"unknown ({first_line(e)})"
    say(f"gpu_check: device under test {dev}; torch {torch.__version__} (cuda {torch.version.cuda}), "
        f"transformers {transformers.__version__}; gpu {RESULTS['env']['gpu']}")
    if dev == "cuda" and not torch.cuda.is_available():
        RESULTS["fatal"] = "torch sees no CUDA device; run with --cpu-only to test the script itself"
        say(RESULTS["fatal"])
        save(out)
        return 2
    save(out)
    text = corpus()
    state: dict = {}

    # ---------------------------------------------------------------- (a) tiny, CPU fp32 vs device fp32
    @section("a_tiny_fp32", out, args.budget, 10)
    def _a() -> dict:
        tiny = build_tiny_lm([text], vocab_size=1000, hidden=64, layers=2, heads=4, kv_heads=2,
                             window=256, max_context=1024, sinks=4)
        ta, n = upto_tokens(tiny, text, 3000)
        state["tiny"], state["tiny_text"] = tiny, ta
        on_dev = TransformersLM(copy.deepcopy(tiny.model), tiny.tokenizer, window=256, max_context=1024, sinks=4,
                                model_id="tiny", device=dev)
        tr_c, tr_d = [], []
        a = tiny.token_logprobs(ta, trace=tr_c)
        b = on_dev.token_logprobs(ta, trace=tr_d)
        state["tiny_ref"] = a.logprobs
        assert (a.starts == b.starts).all() and (a.ends == b.ends).all(), "token spans differ between devices"
        prompt = [{"role": "user", "content": "Is the second paragraph about the same topic? Answer 1 or 2."}]
        oa = tiny.option_logprobs(prompt, ["1", "2", "yes indeed"])
        ob = on_dev.option_logprobs(prompt, ["1", "2", "yes indeed"])
        from logichunk.models.local_llm import LocalChatLLM

        chat = [LocalChatLLM(m).complete(prompt, max_tokens=4).text for m in (tiny, on_dev)]  # greedy, 4 tokens
        r = {"text_chars": len(ta), **diffs(a.logprobs, b.logprobs), "cache": rolling(tr_d),
             "chat_same_text": chat[0] == chat[1],
             "same_trace": [(t.start, t.end, t.context.size) for t in tr_c] == [(t.start, t.end, t.context.size)
                                                                                for t in tr_d],
             "option_max_abs_diff": float(np.abs(oa - ob).max()), "model_id": on_dev.model_id,
             "dtype_returned": str(b.logprobs.dtype)}
        say(f"[a] tiny fp32 cpu vs {dev}: {r['tokens']} tokens, max |diff| {r['max_abs_diff']:.2e}, mean diff "
            f"{r['mean_diff']:+.2e}, {r['cache']['trimmed_windows']}/{r['cache']['windows']} windows on a trimmed "
            f"cache, options max |diff| {r['option_max_abs_diff']:.2e}, greedy chat same text: {r['chat_same_text']}")
        return r

    # ---------------------------------------------------------------- (b) tiny, device bf16 (auto) vs CPU fp32
    @section("b_tiny_bf16", out, args.budget, 10)
    def _b() -> dict:
        tiny, ta = state["tiny"], state["tiny_text"]
        with tempfile.TemporaryDirectory() as tmp:
            tiny.model.save_pretrained(tmp)
            tiny.tokenizer.save_pretrained(tmp)
            kw = {"window": 256, "max_context": 1024, "sinks": 4}
            lm = TransformersLM.from_pretrained(tmp, dtype="auto", device=dev, **kw)
            got = lm.token_logprobs(ta).logprobs
            # the reference through the same saved tokenizer (a reloaded one may split a few places otherwise)
            ref = TransformersLM.from_pretrained(tmp, dtype="float32", device="cpu", **kw).token_logprobs(ta).logprobs
            auto = load_lm(tmp, device="auto", **kw)
            r = {"model_id": lm.model_id, "weights_dtype": str(next(lm.model.parameters()).dtype),
                 **diffs(ref, got), "auto_device": auto.device, "auto_note": auto.device_note,
                 "auto_model_id": auto.model_id, "reloaded_tokenizer_tokens": int(ref.size),
                 "built_tokenizer_tokens": int(state["tiny_ref"].size)}
        say(f"[b] tiny {r['model_id']} vs cpu fp32: mean NLL {r['mean_nll']:.4f} vs {r['mean_nll_ref']:.4f} "
            f"(diff {r['mean_nll_diff']:+.4f}), max |diff| {r['max_abs_diff']:.3f}; load_lm(device=auto) -> "
            f"{r['auto_device']} ({r['auto_note']})")
        return r

    # ---------------------------------------------------------------- (c) default LM's shape: speed and drift
    @section("c_default_shape", out, args.budget, 40)
    def _c() -> dict:
        shape = dict(QWEN05, layers=layers)
        t = time.perf_counter()
        fallback = ""
        try:  # initialised where it runs (a GPU draws 494 M random weights in ms, 2 busy cores took a minute)
            with torch.device(dev):
                built = build_tiny_lm([text], vocab_size=4000, seed=1, **shape)
        except Exception as e:  # noqa: BLE001 - then on the CPU, said in the results
            fallback = f"built on the CPU: {first_line(e)}"
            built = build_tiny_lm([text], vocab_size=4000, seed=1, **shape)
        model, tok = built.model, built.tokenizer
        with torch.no_grad():  # logits of a few nats' spread, as a trained LM's (the tied head is this table)
            model.get_input_embeddings().weight.normal_(0.0, 3.0 / shape["hidden"] ** 0.5)
        cpu = TransformersLM(copy.deepcopy(model).to("cpu"), tok, model_id="qwen05-shape")
        build_s = time.perf_counter() - t
        tc, _ = upto_tokens(cpu, text, cpu_tokens)
        tg, _ = upto_tokens(cpu, text, gpu_tokens)
        r: dict = {"shape": shape, "params_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
                   "build_s": round(build_s, 1), "cpu_tokens": cpu_tokens, "gpu_tokens": gpu_tokens,
                   "window": cpu.window, "max_context": cpu.max_context, "vocab_block": cpu.vocab_block,
                   "build_fallback": fallback}
        say(f"[c] default shape built ({r['params_m']} M params, {layers} layers) in {build_s:.1f} s")
        short, _ = upto_tokens(cpu, text, 32)
        cpu.token_logprobs(short)  # warm-up
        ref, w, c = timed(torch, "cpu", lambda: cpu.token_logprobs(tc))
        cpu = None  # (its weights: 2 GB of memory)
        r["cpu_fp32"] = {"tokens_per_s": round(cpu_tokens / w, 1), "wall_s": round(w, 2), "cpu_s": round(c, 2),
                         "threads": torch.get_num_threads()}
        say(f"[c] cpu fp32 {r['cpu_fp32']['tokens_per_s']} tokens/s ({cpu_tokens} tokens, {torch.get_num_threads()} "
            "threads)")
        f32 = TransformersLM(model, tok, model_id="qwen05-shape", device=dev)
        f32.token_logprobs(short)  # warm-up (CUDA context, kernels)
        got, w, _ = timed(torch, dev, lambda: f32.token_logprobs(tc))
        r[f"{dev}_fp32"] = {**diffs(ref.logprobs, got.logprobs), "tokens_per_s": round(cpu_tokens / w, 1),
                            "wall_s": round(w, 3)}
        model.to(torch.bfloat16)
        bf = TransformersLM(model, tok, model_id="qwen05-shape", device=dev)
        bf.token_logprobs(short)
        got, w, _ = timed(torch, dev, lambda: bf.token_logprobs(tc))
        r[f"{dev}_bf16_drift"] = diffs(ref.logprobs, got.logprobs)
        if dev == "cuda":
            torch.cuda.reset_peak_memory_stats()
        res, w, _ = timed(torch, dev, lambda: bf.token_logprobs(tg))
        r[f"{dev}_bf16"] = {"tokens_per_s": round(gpu_tokens / w, 1), "wall_s": round(w, 2), "tokens": gpu_tokens,
                            "finite": int(np.isfinite(res.logprobs).sum()),
                            "peak_gpu_mem_mb": round(torch.cuda.max_memory_allocated() / 2**20) if dev == "cuda"
                            else None}
        state["bf16"], state["tg"] = bf, tg
        d32, d16 = r[f"{dev}_fp32"], r[f"{dev}_bf16_drift"]
        say(f"[c] {dev} fp32 vs cpu fp32: max |diff| {d32['max_abs_diff']:.2e}, mean NLL diff "
            f"{d32['mean_nll_diff']:+.2e}; {dev} bf16 vs cpu fp32: mean NLL diff {d16['mean_nll_diff']:+.4f} "
            f"(NLL {d16['mean_nll_ref']:.3f}), max |diff| {d16['max_abs_diff']:.3f}")
        say(f"[c] {dev} bf16: {r[f'{dev}_bf16']['tokens_per_s']} tokens/s over {gpu_tokens} tokens "
            f"({r[f'{dev}_bf16']['wall_s']} s, peak GPU memory {r[f'{dev}_bf16']['peak_gpu_mem_mb']} MB); "
            f"{dev} fp32 {d32['tokens_per_s']} tokens/s over {cpu_tokens}")
        return r

    # ---------------------------------------------------------------- (c2) a variant: fewer head slices
    @section("c2_variants", out, args.budget, 30)
    def _c2() -> dict:
        bf = state["bf16"]
        tg = state["tg"]
        r = {}
        for name, kw in (("vocab_block_32768", {"vocab_block": 32768}),
                         ("window_1024_context_4096", {"window": 1024, "max_context": 4096})):
            lm = TransformersLM(bf.model, bf.tokenizer, model_id="qwen05-shape", device=dev, **kw)
            res, w, _ = timed(torch, dev, lambda lm=lm: lm.token_logprobs(tg))
            r[name] = {"tokens_per_s": round(gpu_tokens / w, 1), "wall_s": round(w, 2)}
        say(f"[c2] {dev} bf16 tokens/s: vocab_block 32768 {r['vocab_block_32768']['tokens_per_s']}, window 1024 / "
            f"context 4096 {r['window_1024_context_4096']['tokens_per_s']} (default 512 / 2048 / 4096 above)")
        return r

    # ---------------------------------------------------------------- (d) the PPL chunker end to end
    @section("d_ppl_chunker", out, args.budget, 20)
    def _d() -> dict:
        from logichunk.chunkers.dispatch import chunk_by
        from logichunk.tree import check_tree

        r: dict = {}
        doc = text[:3000] if small else text + "\n\n" + text  # ~40k characters on the GPU
        if "bf16" in state:
            tree, w, _ = timed(torch, dev, lambda: chunk_by("ppl", doc, lm=state["bf16"], max_size=400))
            check_tree(tree)  # level-1 spans tile the text, children tile their parent, none empty
            roots = tree.roots()
            assert tree.text == doc, "the tree's text is not the input"
            assert "".join(doc[c.start:c.end] for c in roots) == doc, "level-1 chunks do not rebuild the text"
            r["default_shape_bf16"] = {"chars": len(doc), "chunks": len(tree), "roots": len(roots),
                                       "wall_s": round(w, 2), "tiles": True, "text_intact": True}
            say(f"[d] ppl chunker, default shape bf16 on {dev}: {len(doc)} chars -> {len(roots)} chunks in {w:.2f} s; "
                "spans tile the text, no text altered")
        tiny = state["tiny"]
        cuts = {}
        for name, dtype in (("ref_cpu_fp32", None), (f"{dev}_fp32", torch.float32), (f"{dev}_bf16", torch.bfloat16)):
            lm = tiny if dtype is None else TransformersLM(copy.deepcopy(tiny.model).to(dtype), tiny.tokenizer,
                                                           window=256, max_context=1024, sinks=4, device=dev)
            tree = chunk_by("ppl", text, lm=lm, max_size=300)
            check_tree(tree)
            assert tree.text == text
            cuts[name] = [c.span.end for c in tree.roots()][:-1]
        base = set(cuts["ref_cpu_fp32"])
        r["tiny_cuts"] = {name: {"cuts": len(v), "same_as_cpu_fp32": len(base & set(v))} for name, v in cuts.items()}
        say("[d] tiny model's ppl cuts vs cpu fp32: " + ", ".join(
            f"{k} {v['same_as_cpu_fp32']}/{v['cuts']}" for k, v in r["tiny_cuts"].items()))
        return r

    # ---------------------------------------------------------------- what was imported
    third = sorted({m.split(".")[0] for m, mod in list(sys.modules.items()) if mod is not None}
                   - set(sys.stdlib_module_names) - {"__main__"})
    RESULTS["third_party_modules"] = third
    failed = [k for k, v in RESULTS.items() if isinstance(v, dict) and "error" in v]
    RESULTS["failed_sections"] = failed
    say(f"done in {time.perf_counter() - T0:.1f} s; failed sections: {failed or 'none'}; results in {out}")
    save(out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

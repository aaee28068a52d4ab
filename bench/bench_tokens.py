"""Tokenizer-exact chunking speed (issue 20): logichunk with ``tokenizer=`` beside Chonkie and
LangChain given the same tokenizer (tiktoken cl100k_base, the same Encoding object for all).

Each row: MB/s (10^6 UTF-8 bytes per wall second, median of ``--runs``), chunks, the largest chunk in
tokens counted by tiktoken on the chunk alone, how many chunks exceed the limit that way, and whether
the chunks concatenate to the text. logichunk's time includes tokenising the text (a fresh measure
per run, so nothing is cached between runs).

    python bench/bench_tokens.py --mb 1 --size 512
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402


def methods(enc, size: int):
    from logichunk import chunk
    from logichunk.chunkers.dispatch import chunk_by
    from logichunk.text.tokens import resolve_tokenizer

    def ours(**kw):
        def run(text: str) -> list[str]:
            tree = chunk(text, max_size=size, levels=1, tokenizer=resolve_tokenizer(enc), **kw)
            return [tree.text_of(c) for c in tree.leaves()]
        return run

    def ours_recursive(text: str) -> list[str]:
        tree = chunk_by("recursive", text, max_size=size, tokenizer=resolve_tokenizer(enc))
        return [tree.text_of(c) for c in tree.leaves()]

    def chonkie_recursive(text: str) -> list[str]:
        from chonkie import RecursiveChunker

        return [c.text for c in RecursiveChunker(tokenizer=enc, chunk_size=size)(text)]

    def chonkie_token(text: str) -> list[str]:
        from chonkie import TokenChunker

        return [c.text for c in TokenChunker(tokenizer=enc, chunk_size=size, chunk_overlap=0)(text)]

    def langchain_recursive(text: str) -> list[str]:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        # what from_tiktoken_encoder builds, with the offline Encoding object
        s = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0,
                                           length_function=lambda t: len(enc.encode_ordinary(t)))
        return s.split_text(text)

    return {"logichunk": ours(), "logichunk-fast": ours(composite=False), "logichunk-recursive": ours_recursive,
            "chonkie-recursive": chonkie_recursive, "chonkie-token": chonkie_token,
            "langchain-recursive": langchain_recursive}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0, help="MB of text per language (default 1)")
    ap.add_argument("--size", type=int, default=512, help="chunk limit in cl100k tokens (default 512)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--methods", default="all")
    args = ap.parse_args(argv)
    msg = corpora.missing_message()
    if msg:
        print(msg)
        return 0
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    from logichunk.text.tokens import resolve_tokenizer

    enc = resolve_tokenizer("cl100k_base").tokenizer
    table = methods(enc, args.size)
    chosen = list(table) if args.methods == "all" else args.methods.split(",")
    target = int(args.mb * 1_000_000)
    print(f"| corpus | method | MB/s | median s | chunks | max tokens | over {args.size} | concat = text |")
    print("|---|---|---|---|---|---|---|---|")
    for lang, (text, _info) in corpora.build(("en", "zh"), target).items():
        mb = len(text.encode("utf-8")) / 1e6
        for name in chosen:
            fn = table[name]
            fn(text[:20_000])  # warm-up: imports, the tokenizer's tables
            times, parts = [], []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                parts = fn(text)
                times.append(time.perf_counter() - t0)
            counts = [len(enc.encode_ordinary(p)) for p in parts]
            med = statistics.median(times)
            print(f"| {lang} | {name} | **{mb / med:.2f}** | {med:.3f} | {len(parts):,} | {max(counts)} | "
                  f"{sum(c > args.size for c in counts)} | {'yes' if ''.join(parts) == text else 'no'} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

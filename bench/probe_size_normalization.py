"""Does size normalisation help parent-mode search? One store per data set (ingested once, as the
eval harness does), then every question through ``retrieve`` with normalisation off, on (sqrt, capped
boost 1.5) and at power 0.25, beside basic and hybrid; scored at k = 5, and cut to an equal
1,000-token budget.

    python bench/probe_size_normalization.py ../shared/data/retrieval/cmrc2018_dev [hash|e5] [LIMIT]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from logichunk.eval import chunking as C
from logichunk.eval import readers as R
from logichunk.eval.methods import Settings
from logichunk.eval.store_modes import StoreSearcher
from logichunk.models.registry import resolve_embedder
from logichunk.retrieve import retrieve

VARIANTS = {
    "basic": {"mode": "basic"},
    "parent, normalised (sqrt, cap 1.5)": {"mode": "parent", "size_normalization": True},
    "parent, not normalised": {"mode": "parent", "size_normalization": False},
    "parent, power 0.25": {"mode": "parent", "size_normalization": True, "size_normalization_power": 0.25},
    "hybrid": {"mode": "hybrid"},
}


def main() -> None:
    stem = sys.argv[1]
    emb = resolve_embedder(sys.argv[2] if len(sys.argv) > 2 else "hash").model
    try:
        corpus = R.read_corpus(stem, int(sys.argv[3]) if len(sys.argv) > 3 else None)
    except (R.DataMissing, FileNotFoundError) as e:  # the shared data is not on this machine: say so, skip
        print(f"skipped: {e}")
        return
    t0 = time.time()
    searcher = StoreSearcher("parent", corpus, Settings(size=200, unit="tokens", embedder=emb, embedder_name="x"))
    print(f"ingest {time.time() - t0:.1f} s, {searcher.store.counts()}")
    layout = C.Layout.of(corpus, "tokens")
    questions = [q.question for q in corpus.queries]
    for name, kw in VARIANTS.items():
        hits = []
        for q in questions:
            rows = []
            for h in retrieve(searcher.store, q, top_k=5, **kw):
                at = searcher.block_at.get(h.chunk.meta.get("block_id"))
                if at is None:
                    continue
                sp = h.context if h.context is not None else h.chunk.span
                base = layout.offsets[at[0]] + at[1]
                rows.append((at[0], base + sp.start, base + sp.end))
            r = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
            hits.append(C.Hitlist(r[:, 1], r[:, 2], r[:, 0]))
        full = C.score_hits(hits, corpus, layout)
        cut = C.score_hits([C._cut_to_budget(h, layout, 1000) for h in hits], corpus, layout)
        tokens = np.mean([float((layout.prefix[h.ends] - layout.prefix[h.starts]).sum()) for h in hits])
        print(f"{name:<36} doc R@5 {full['recall_at_k']:.3f}  evidence R@5 {full['evidence_recall_at_k']:.3f}  "
              f"MRR {full['mrr']:.3f}  tokens/q {tokens:6.0f} | at 1000 tokens: evidence {cut['evidence_recall_at_k']:.3f}")


if __name__ == "__main__":
    main()

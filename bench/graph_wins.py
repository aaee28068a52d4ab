"""Where does graph traversal help? Per-question comparison of the graph modes against graph-basic.

    python bench/graph_wins.py --data ../shared/data/retrieval/hotpot_dev_distractor100 --embedder hash --k 10
    LOGICHUNK_EVAL_STORE=/tmp/e5.db python bench/graph_wins.py --embedder e5 --k 10   # reuse a built store

Runs the store-backed eval modes (``logichunk.eval.store_modes``) and scores every question with the
harness's metrics (supporting-sentence recall@k, all-gold-documents hit@k), then prints, per question
type (HotpotQA ``meta.type``: bridge / comparison; others: all), the means per mode and how many
questions each mode wins, ties and loses against ``graph-basic`` — and the questions where a walk
reached a gold document that graph-basic did not (the second hop it exists for).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

import numpy as np

from logichunk.eval import metrics as M
from logichunk.eval.chunking import MODES, Layout
from logichunk.eval.cli import _embedder
from logichunk.eval.methods import Settings
from logichunk.eval.readers import DataMissing, data_dir, read_corpus


def _wtl(d: np.ndarray) -> str:
    """wins / ties / losses of per-question differences."""
    return f"{int((d > 1e-9).sum())}/{int((np.abs(d) <= 1e-9).sum())}/{int((d < -1e-9).sum())}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(data_dir() / "retrieval" / "hotpot_dev_distractor100"))
    ap.add_argument("--embedder", default="hash")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--modes", default="graph-basic,graph-ssg,graph-tri,graph-hybrid,hybrid")
    args = ap.parse_args()
    from logichunk.eval import store_modes  # noqa: F401 - registers the modes

    try:
        corpus = read_corpus(args.data, args.limit)
    except (DataMissing, FileNotFoundError) as e:  # the shared data is not on this machine: say so, skip
        print(f"skipped: {e}")
        return
    emb, name = _embedder(args.embedder)
    s = Settings(size=200, unit="tokens", embedder=emb, embedder_name=name)
    layout = Layout.of(corpus, "chars")
    index = corpus.by_id()
    modes = [m for m in args.modes.split(",") if m]
    per: dict[str, dict[str, np.ndarray]] = {}
    docs_found: dict[str, list[set[str]]] = {}
    all_rows: dict[str, list[np.ndarray]] = {}
    for mode in modes:
        searcher = MODES[mode](corpus, s, None)
        all_rows[mode] = searcher.search([q.question for q in corpus.queries], args.k)
        print(f"{mode}: done", file=sys.stderr, flush=True)
    base = "graph-basic" if "graph-basic" in modes else modes[0]
    # the baseline cut, per question, to as many sentences as each walk returned: the walk's choice
    # of sentences at the walk's own budget
    for mode in list(modes):
        if mode in ("graph-ssg", "graph-tri") and base == "graph-basic":
            cut = f"{base}@same-n-as-{mode}"
            all_rows[cut] = [b[: len(w)] for b, w in zip(all_rows[base], all_rows[mode], strict=True)]
            modes.append(cut)
    for mode in modes:
        sup, both, found = [], [], []
        for q, r in zip(corpus.queries, all_rows[mode], strict=True):
            r = np.asarray(r, np.int64).reshape(-1, 3)
            off = layout.offsets[r[:, 0]] if r.size else np.zeros(0, np.int64)
            gs, ge = layout.gold(q, index)
            got = [layout.doc_ids[i] for i in r[:, 0].tolist()]
            sup.append(M.supporting_recall(r[:, 1] + off, r[:, 2] + off, gs, ge))
            both.append(M.all_docs_hit(got, q.gold_doc_ids))
            found.append(set(got) & set(q.gold_doc_ids))
        per[mode] = {"support": np.asarray(sup), "both": np.asarray(both),
                     "n": np.asarray([len(x) for x in all_rows[mode]], float)}
        docs_found[mode] = found
    types = defaultdict(list)
    for i, q in enumerate(corpus.queries):
        types[str(q.meta.get("type", "all"))].append(i)
    print(f"**{args.data.rsplit('/', 1)[-1]}**, embedder {name}, k = {args.k} "
          f"(wins/ties/losses per question against {base})\n")
    print("| type | n | mode | sentences | supp.R@k | all-docs@k | supp.R W/T/L | all-docs W/T/L | new gold doc |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t, idx in sorted(types.items()):
        ix = np.asarray(idx)
        for mode in modes:
            a, b = per[mode], per[base]
            new = sum(1 for i in idx if docs_found[mode][i] - docs_found[base][i])
            print(f"| {t} | {ix.size} | {mode} | {a['n'][ix].mean():.1f} | {a['support'][ix].mean():.3f} | "
                  f"{a['both'][ix].mean():.3f} | "
                  f"{_wtl(a['support'][ix] - b['support'][ix])} | {_wtl(a['both'][ix] - b['both'][ix])} | {new} |")


if __name__ == "__main__":
    main()

"""What one edit costs in a long chapter: the store's re-chunk after a word changes in one block, beside
taking the whole chapter in again (what a pipeline without incremental re-chunking does on every edit).

A writing assistant's user edits a long document live; each debounced edit re-plans the edited block's
chapter (``Store.rechunk_dirty``: parents laid out again over every block, the changed parents cut into
children and embedded, the rows written). The time that takes should follow the edit, not the chapter.

For each corpus (``bench/corpora.py``: English prose, Chinese, Python source) and chapter size, in a fresh
SQLite store with the hash embedder (model-free; with a model, the edited parent's new sentences are embedded
too):

* ``ingest``   ``add_document`` + ``rechunk_dirty`` of the chapter as one chapter of blank-line blocks
* ``edit``     the median of ``--edits`` re-chunks, each after one block in the middle of the chapter was
               changed (a word replaced, or one appended), every one a different block

Each (corpus, size) runs in a fresh subprocess, thread pools pinned to one thread.

Usage::

    python bench/bench_edit.py --kb 200 2000 --edits 7
    PYTHONPATH=<an older checkout>/src python bench/bench_edit.py --kb 200 2000   # before/after
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

HERE = Path(__file__).resolve().parent


def run_one(corpus: str, kb: int, edits: int) -> dict:
    """Ingest one chapter of ``kb`` thousand characters, then time ``edits`` one-block edits."""
    sys.path.insert(0, str(HERE))
    import corpora
    from logichunk.chunkers.parent_child import blank_line_blocks
    from logichunk.config import Settings
    from logichunk.store import Store

    text = corpora.BUILDERS[corpus](kb * 1000)[0][: kb * 1000]
    blocks = blank_line_blocks(text)
    with tempfile.TemporaryDirectory() as d:
        store = Store.open(os.path.join(d, "kb.db"), settings=Settings(embedder="hash"))
        t = time.perf_counter()
        doc = store.add_document("chapter", [(None, blocks)])
        store.rechunk_dirty()
        ingest = time.perf_counter() - t
        rows = store.blocks(store.chapters(doc)[0][0])
        times = []
        for i in range(edits):
            b = rows[len(rows) // 2 + i - edits // 2]
            new = b.content.replace(" the ", " a ", 1) if " the " in b.content else b.content.rstrip() + " x\n\n"
            store.edit_block(b.id, new)
            t = time.perf_counter()
            store.rechunk_dirty()
            times.append(time.perf_counter() - t)
        store.close()
    return {"corpus": corpus, "kb": kb, "blocks": len(blocks), "ingest_s": ingest,
            "edit_ms": 1000 * statistics.median(times), "edit_ms_all": [round(1000 * x, 1) for x in times]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="en,zh,code")
    ap.add_argument("--kb", type=int, nargs="+", default=[200, 2000], help="chapter sizes, thousands of characters")
    ap.add_argument("--edits", type=int, default=7)
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # (the subprocess's own job)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(run_one(a.one[0], int(a.one[1]), a.edits)))
        return 0
    print("| corpus | chapter | blocks | ingest the chapter, s | one edit re-chunked, ms (median) | edit / ingest |")
    print("|---|---|---|---|---|---|")
    for corpus in a.corpora.split(","):
        for kb in a.kb:
            out = subprocess.run([sys.executable, __file__, "--one", corpus, str(kb), "--edits", str(a.edits)],
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {corpus} | {kb} K chars | {r['blocks']} | {r['ingest_s']:.2f} | {r['edit_ms']:.0f} "
                  f"| {r['edit_ms'] / 1000 / r['ingest_s']:.1%} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

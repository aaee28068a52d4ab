"""CLI for the similarity graph: ``logichunk graph build|stats|drop`` and the printing of graph
search results (``logichunk search --mode graph-ssg``). Registered by ``logichunk.cli``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..cli_args import one_line
from ..jsonable import jsonable
from ..store.cli_options import DOC_COLUMN, document_cell, open_store, store_options
from ..store.document_layout import DocLayout


def print_graph_results(res: Any, fmt: str, docs: dict[str, tuple[str, str | None]] | None = None,
                        store: Any = None) -> None:
    """Sentences (ranked) and the path: JSON lines (``type`` = ``sentence`` / ``path``) or a table; ``docs``
    (``{document id: (title, source)}``) names each sentence's document. A sentence carries what the other
    modes' hits carry: the ``ref`` of the chunk holding it (the table's ``ref`` column, as theirs) and, in
    its JSON line, the fields a graph hit has in every interface (:func:`~logichunk.retrieve.graph.graph_hit`:
    its ``origin``, its ``sentence`` with its ``document_span`` when ``store`` is given) and, the project's own
    embedder taken, ``embedder_note``, as the other modes' lines."""
    docs = docs or {}
    if fmt == "jsonl":
        layouts: dict[str, Any] = {}

        def layout(doc_id: str) -> Any:
            if doc_id not in layouts:
                layouts[doc_id] = DocLayout.of(store, doc_id) if doc_id in docs else None
            return layouts[doc_id]

        note = getattr(store, "embedder_choice", "") if store is not None else ""
        for rec in res.records(docs, layout if store is not None else None):
            if note and rec.get("type") == "sentence":
                rec["embedder_note"] = note
            print(json.dumps(jsonable(rec), ensure_ascii=False))
        return
    r = res.result
    if r is not None and r.path:
        steps = " → ".join(f"{p.label}{'' if p.via == 'hop' else '*'}({p.similarity:.2f})" for p in r.path)
        print(f"# path ({res.mode}, stopped: {r.stop}): {steps}")
    for n in res.notes:
        print(f"# {n}")
    recs = [r for r in res.records() if r.get("type") == "sentence"]
    width = max([3, *(len(r["ref"] or r["id"]) for r in recs)])
    print(f"{'#':>2}  {'score':>7}  {'ref':<{width}} {'step':>4}  {'document':<{DOC_COLUMN}}  sentence")
    for rank, (h, r) in enumerate(zip(res, recs, strict=True), 1):
        step = "" if r["step"] is None else r["step"]
        print(f"{rank:>2}  {h.score:7.4f}  {r['ref'] or r['id']:<{width}} {step:>4}  {document_cell(docs, h.doc_id)}  "
              f"{one_line(r['text'] or '', 80)}")
    if not len(res):
        print("(no results)")


def cmd_graph(args: argparse.Namespace) -> int:
    from ..index.graph_store import drop_graph, sync_graph

    with open_store(args, own_embedder=args.graph_verb != "drop") as store:  # (drop embeds nothing)
        if args.graph_verb == "drop":
            drop_graph(store)
            if args.format == "jsonl":
                print(json.dumps({"status": "dropped"}))
            else:
                print("graph dropped (rebuilt on next use)")
            return 0
        g, rep = sync_graph(store, force=args.graph_verb == "build" and args.force)
        rec = {"status": rep.status, "chunks": g.n_chunks, "sentences": g.n_sentences, "edges": g.n_edges,
               "added": rep.added, "removed": rep.removed, "relinked": rep.relinked,
               "embedded_sentences": rep.embedded_sentences, "seconds": round(rep.seconds, 3),
               "neighbours": rep.neighbours, **{k: v for k, v in g.stats().items() if k not in ("chunks", "sentences",
                                                                                             "edges")}}
        if args.format == "jsonl":
            print(json.dumps(rec, ensure_ascii=False))
        else:
            print(f"graph {rep.status}: {g.n_chunks} chunks, {g.n_sentences} sentences, {g.n_edges} edges "
                  f"(seq {rec['out_edges']['seq']}, intra {rec['out_edges']['intra']}, cross "
                  f"{rec['out_edges']['cross']} out-edges; {rec['isolated']} isolated) — added {rep.added}, "
                  f"removed {rep.removed}, relinked {rep.relinked}, {rep.neighbours} neighbours, "
                  f"{rep.seconds:.2f} s")
    return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("graph", help="the semantic similarity graph of a store: build, stats, drop")
    sub = p.add_subparsers(dest="graph_verb", metavar="ACTION")
    sub.required = True
    b = sub.add_parser("build", help="bring the graph up to date now (otherwise the first graph search does)")
    b.add_argument("--force", action="store_true", help="relink every edge from the stored nodes")
    s = sub.add_parser("stats", help="sync if needed, then print sizes")
    d = sub.add_parser("drop", help="delete the stored graph")
    for q in (b, s, d):
        q.add_argument("--format", choices=["table", "jsonl"], default="table")
        store_options(q)
        q.set_defaults(func=cmd_graph)
    b.set_defaults(force=False)
    s.set_defaults(force=False)
    d.set_defaults(force=False)

"""The store-backed eval modes (parent, hybrid, graph-*) through the harness on a toy corpus whose
supporting sentences are known: hits map back to exact document spans, metrics are computed."""

from __future__ import annotations

import json

import pytest

from logichunk.eval import chunking as C
from logichunk.eval import readers as R
from logichunk.eval import store_modes
from logichunk.eval.methods import METHODS, Settings, build
from logichunk.models import HashEmbedder

DOCS = [
    ("p1", "Ada Lovelace wrote the first published program. She worked with Charles Babbage on the engine."),
    ("p2", "Charles Babbage designed the Analytical Engine. The engine was never finished in his lifetime."),
    ("p3", "Tea is grown in Darjeeling. The leaves are picked by hand in spring."),
    ("p4", "第一句讲茶叶。第二句讲山路和雨水。"),
]


def _write(tmp_path):
    stem = tmp_path / "toy"
    with open(str(stem) + ".corpus.jsonl", "w", encoding="utf-8") as f:
        for did, text in DOCS:
            f.write(json.dumps({"doc_id": did, "title": did, "text": text, "lang": "en"}) + "\n")
    t1, t2 = DOCS[0][1], DOCS[1][1]
    q = {"qid": "q1", "question": "Who designed the engine that Ada Lovelace worked on?", "answers": ["Babbage"],
         "lang": "en", "gold_doc_ids": ["p1", "p2"],
         "gold_spans": [{"doc_id": "p1", "start": t1.index("She"), "end": len(t1)},
                        {"doc_id": "p2", "start": 0, "end": t2.index(" The engine")}]}
    with open(str(stem) + ".queries.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps(q) + "\n")
    return stem


GRAPH_MODES = ("graph-basic", "graph-ssg", "graph-tri", "graph-hybrid")


@pytest.mark.parametrize("mode", ("parent", "hybrid", *GRAPH_MODES))
def test_store_modes_map_hits_to_exact_document_spans(tmp_path, mode):
    corpus = R.read_corpus(_write(tmp_path))
    s = Settings(size=50, unit="tokens", embedder=HashEmbedder(256), embedder_name="hash")
    searcher = C.MODES[mode](corpus, s, build(METHODS["parent-child"], s))
    rows = searcher.search([q.question for q in corpus.queries], 10)
    assert len(rows) == 1 and rows[0].shape[1] == 3 and len(rows[0]) > 0
    for d, a, b in rows[0].tolist():
        text = corpus.docs[d].text[a:b]
        assert text.strip() and 0 <= a < b <= len(corpus.docs[d].text)
        if mode.startswith("graph-"):  # whole trimmed sentences
            assert text == text.strip() and text[-1] in ".。"
    st = searcher.stats
    assert st["p50_ms"] >= 0 and st["build_s"] >= 0 and st["items_per_query"] == len(rows[0])
    if mode.startswith("graph-"):
        assert st["graph_chunks"] > 0 and sum(st["stops"].values()) == 1
    row, notes = C.run_retrieval(corpus, mode, "parent-child", build(METHODS["parent-child"], s), s,
                                 dataset="toy", k=10)
    assert row["method"] == mode and row["store_reused"] is False  # the modes of a run share one store
    for key in ("support_recall_at_k", "all_docs_at_k", "recall_at_k", "p50_ms"):
        assert key in row
    # ten sentences/chunks cover this tiny corpus: both supporting sentences and both documents are found
    assert row["support_recall_at_k"] == 1.0 and row["all_docs_at_k"] == 1.0
    store_modes.reset()


def test_store_reuse_through_the_environment(tmp_path, monkeypatch):
    corpus = R.read_corpus(_write(tmp_path))
    monkeypatch.setenv("LOGICHUNK_EVAL_STORE", str(tmp_path / "eval.db"))
    s = Settings(size=50, unit="tokens", embedder=HashEmbedder(256), embedder_name="hash")
    first = C.MODES["graph-ssg"](corpus, s, None)
    assert first.stats["store_reused"] is False
    store_modes.reset()
    again = C.MODES["graph-ssg"](corpus, s, None)
    assert again.stats["store_reused"] is True and again.stats["graph_status"] == "loaded"
    store_modes.reset()

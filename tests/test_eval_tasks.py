"""The evaluation tasks, readers, baselines, peer mapping, report and CLI — on small synthetic data,
plus a quick smoke run on the shared benchmark data when it is present."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from logichunk.chunkers.baselines import fixed, fixed_spans, recursive, recursive_spans
from logichunk.eval import chunking as C
from logichunk.eval import readers as R
from logichunk.eval import segmentation as S
from logichunk.eval.methods import METHODS, Settings, build, locate, select_methods
from logichunk.tree import check_tree

DATA = R.data_dir()
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"benchmark data not found at {DATA} "
                                                          "(set LOGICHUNK_DATA to run these)")

TEXT_EN = ("Chunking splits documents. It keeps spans exact!\n\nA second paragraph starts here; it is about "
           "retrieval, and it goes on for a while with many words in a row. Short one.\nLast line? Yes.")
TEXT_ZH = "第一段讲分块。它保留精确的位置！\n\n第二段讲检索，内容比较长，有很多字，一直写下去。最后一句？是的。"



def _eval_cli(argv, capsys):
    """(exit code, stdout, stderr) of ``logichunk eval ...`` through the CLI's main() in this process: these
    tests are about the verb's answers, not the process boundary (an interpreter each costs ~1 s of CPU); an
    argparse refusal is its SystemExit's code, an exception main() let out fails the test."""
    from logichunk.cli import main

    try:
        code = main(["eval", *argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err

def _embedder():
    try:
        from logichunk.models import HashEmbedder

        return HashEmbedder(256)
    except ImportError:
        from logichunk.eval.cli import _FallbackEmbedder

        return _FallbackEmbedder()


# --------------------------------------------------------------------------- baselines


@pytest.mark.parametrize("fn", [fixed_spans, recursive_spans])
@pytest.mark.parametrize("unit", ["chars", "tokens"])
@pytest.mark.parametrize("size", [1, 7, 30, 1000])
def test_baselines_tile_and_respect_size(fn, unit, size):
    from logichunk.text.measure import Meter

    for text in (TEXT_EN, TEXT_ZH, "", "x"):
        sp = fn(text, size, unit)
        if not text:
            assert sp.shape == (0, 2)
            continue
        assert sp[0, 0] == 0 and sp[-1, 1] == len(text)
        assert (sp[1:, 0] == sp[:-1, 1]).all() and (sp[:, 1] > sp[:, 0]).all()
        m = Meter(text, unit)
        sizes = m.sizes(sp[:, 0], sp[:, 1])
        # a chunk may exceed the limit only if it holds a single unit (one token cannot be cut)
        assert ((sizes <= size) | (sizes <= 1)).all(), (fn.__name__, unit, size, sizes.max())


def test_recursive_prefers_strong_separators():
    sp = recursive_spans(TEXT_EN, 30, "tokens")
    ends = sp[:, 1].tolist()
    assert TEXT_EN.index("\n\n") + 2 in ends  # the paragraph break is a cut
    first = TEXT_EN[sp[0, 0]:sp[0, 1]]
    assert first.startswith("Chunking") and first.rstrip().endswith(("!", "."))
    tree = recursive(TEXT_EN, 30, unit="tokens")
    check_tree(tree)
    assert [c.method for c in tree.leaves()] == ["recursive"] * len(tree.leaves())
    check_tree(fixed(TEXT_ZH, 10))


# --------------------------------------------------------------------------- peer mapping


def test_locate_maps_peer_strings_back_to_spans():
    text = "Alpha beta.  Gamma\n delta.\n\nEpsilon zeta."
    loc = locate(text, ["Alpha beta.", "Gamma delta.", "  ", "Epsilon zeta.", "not in the text"])
    assert loc.unlocated == 1 and loc.produced == 4
    got = [text[a:b] for a, b in loc.spans.tolist()]
    assert got == ["Alpha beta.", "Gamma\n delta.", "Epsilon zeta."]
    # repeated text: the search goes forward from the previous chunk, not back to the first copy
    rep = "same. same. same."
    loc = locate(rep, ["same.", "same.", "same."])
    assert loc.spans[:, 0].tolist() == [0, 6, 12]


# --------------------------------------------------------------------------- segmentation


def test_depth_and_selection_hand_computed():
    s = np.array([0.0, 1.0, 0.0, 0.0, 3.0, 0.0])
    assert S.peaks(s).tolist() == [1, 4]
    d = S.depth_scores(s)
    assert d[1] == 2.0 and d[4] == 6.0
    # peaks' depths 2 and 6: half the deepest is 3, which keeps only the deep one (TextTiling's
    # mean - std/2 = 3 agrees here)
    assert S.select_boundaries(s).tolist() == [4]
    assert S.select_boundaries(s, relative=None).tolist() == [4]
    assert S.select_boundaries(s, k=2).tolist() == [1, 4]
    assert S.select_boundaries(s, k=3).tolist() == [0, 1, 4]  # peaks run out: highest others
    assert S.select_boundaries(np.zeros(5)).size == 0
    assert S.select_boundaries(np.array([])).size == 0


def test_count_rule_does_not_grow_with_length():
    # one deep break in a long, gently rippling curve: TextTiling's cutoff keeps a share of the
    # ripples (more cuts the longer the text); "at least half the deepest" keeps the one break
    rng = np.random.default_rng(0)
    for n in (60, 600):
        s = 0.1 * rng.random(n)
        s[n // 2] = 2.0
        assert S.select_boundaries(s).tolist() == [n // 2]
        assert S.select_boundaries(s, relative=None).size > n // 10
    # depths 4, 2.2 and 1.6: >= 2 keeps two; the cutoff is inclusive of exactly half
    s = np.array([0.0, 2.0, 0.0, 1.1, 0.0, 0.8, 0.0])
    assert S.depth_scores(s)[[1, 3, 5]].tolist() == [4.0, 2.2, 1.6]
    assert S.select_boundaries(s).tolist() == [1, 3]
    assert S.select_boundaries(s, relative=0.55).tolist() == [1, 3]
    assert S.select_boundaries(s, relative=0.56).tolist() == [1]
    with pytest.raises(ValueError):
        S.select_boundaries(s, relative=0.0)


def test_harness_applies_the_chosen_count_rule():
    # a ripple curve with one deep break, scored by a fixed runner: the harness must cut once
    # under the relative rule and many times under TextTiling's cutoff
    rng = np.random.default_rng(1)
    scores = 0.1 * rng.random(79)
    scores[40] = 2.0

    class Fixed:
        def gap_scores(self, sents):
            return scores

    doc = R.SegDoc("d", "en", [f"Unit {i}." for i in range(80)], np.array([40]))
    rel = S.run_segmentation([doc], "fixed", Fixed(), peer=False, dataset="toy")
    tt = S.run_segmentation([doc], "fixed", Fixed(), peer=False, dataset="toy", relative=None)
    assert rel.rows[0]["hyp_per_doc"] == 1 and rel.rows[0]["pk"] == 0.0
    assert tt.rows[0]["hyp_per_doc"] > 8 and tt.rows[0]["pk"] > 0.1


def test_units_to_sents_and_snapping():
    sents = S.units_to_sents(["ab", "c", "def"])
    assert sents.text == "ab\nc\ndef"
    assert sents.starts.tolist() == [0, 3, 5] and sents.ends.tolist() == [3, 5, 8]
    assert sents.texts() == ["ab\n", "c\n", "def"]
    # chunk ends at 3 (after unit 0), 6 (nearest unit end: 5, after unit 1) and 8 (the end: dropped)
    assert S.snap_to_units(np.array([3, 6, 8]), sents.ends).tolist() == [0, 1]


class _Oracle:
    """A fake signal that peaks exactly at the gold boundaries of the document it was given."""

    name = "oracle"

    def __init__(self, gold: dict[str, np.ndarray]) -> None:
        self.gold = gold

    def gap_scores(self, sents):
        b = self.gold[sents.text]
        s = np.zeros(len(sents) - 1)
        s[b] = 1.0
        return s


def _seg_docs() -> list[R.SegDoc]:
    rng = np.random.default_rng(1)
    docs = []
    for i in range(4):
        units = [f"unit {i}-{j} " + "x" * int(rng.integers(1, 9)) for j in range(20)]
        docs.append(R.SegDoc(f"d{i}", "en", units, np.array([4, 11, 15])))
    return docs


def test_run_segmentation_perfect_and_none():
    docs = _seg_docs()
    gold = {S.units_to_sents(d.units).text: d.boundaries for d in docs}
    out = S.run_segmentation(docs, "oracle", _Oracle(gold), peer=False, dataset="toy", oracle=True)
    main, orc = out.rows
    assert main["pk"] == 0.0 and main["windowdiff"] == 0.0 and main["f1"] == 1.0 and main["n"] == 4
    assert orc["method"] == "oracle@gold-k" and orc["oracle"] and orc["f1"] == 1.0
    assert out.curve is not None and out.curve["gold"] == [4, 11, 15]
    none = build(METHODS["none"], Settings())
    row = S.run_segmentation(docs, "none", none, peer=False, dataset="toy").rows[0]
    assert row["f1"] == 0.0 and 0 < row["pk"] < 1 and row["hyp_per_doc"] == 0


def test_entropy_beats_no_boundaries_on_topic_switches():
    # three very different "topics"; the entropy signal should find the switches
    topics = [["the cat sat on the mat and the cat purred"] * 6,
              ["数据库索引使用平衡树结构以便快速查找记录"] * 6,
              ["1234 5678 9012 3456 7890 1234 5678"] * 6]
    units = [u for t in topics for u in t]
    doc = R.SegDoc("t", "en", units, np.array([5, 11]))
    runner = build(METHODS["entropy"], Settings())
    got = S.run_segmentation([doc], "entropy", runner, peer=False, dataset="toy").rows[0]
    none = S.run_segmentation([doc], "none", build(METHODS["none"], Settings()), peer=False, dataset="toy").rows[0]
    assert got["pk"] < none["pk"]
    assert got["boundary_recall"] == 1.0


# --------------------------------------------------------------------------- readers


def _write_sets(root: Path) -> None:
    (root / "seg").mkdir(parents=True)
    rows = [{"id": "a", "lang": "en", "units": ["u1", "u2", "u3", "u4"], "segments": [2, 2], "boundaries": [1]},
            {"id": "b", "lang": "zh", "units": ["一", "二", "三"], "segments": [1, 2]}]
    (root / "seg" / "toy.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    (root / "spans").mkdir()
    docs = [{"doc_id": "d1", "title": "t", "text": "Cats purr. Dogs bark loudly at night.", "lang": "en"},
            {"doc_id": "d2", "title": "t", "text": "Databases index rows with B-trees for fast lookup.", "lang": "en"},
            {"doc_id": "d3", "title": "t", "text": "Rivers flow to the sea.", "lang": "en"}]
    qs = [{"qid": "q1", "question": "Which animal barks at night?", "answers": ["Dogs"], "lang": "en",
           "gold_doc_ids": ["d1"], "gold_spans": [{"doc_id": "d1", "start": 11, "end": 37}]},
          {"qid": "q2", "question": "What do databases use to index rows?", "answers": ["B-trees"], "lang": "en",
           "gold_doc_ids": ["d2"], "gold_spans": [{"doc_id": "d2", "start": 30, "end": 37}]}]
    (root / "spans" / "toy.corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    (root / "spans" / "toy.queries.jsonl").write_text("\n".join(json.dumps(q) for q in qs), encoding="utf-8")


def test_readers(tmp_path):
    _write_sets(tmp_path)
    docs = R.read_segmentation(tmp_path / "seg" / "toy.jsonl")
    assert [d.boundaries.tolist() for d in docs] == [[1], [0]] and docs[1].n == 3
    assert len(R.read_segmentation(tmp_path / "seg" / "toy.jsonl", limit=1)) == 1
    c = R.read_corpus(tmp_path / "spans" / "toy")
    assert len(c.docs) == 3 and c.queries[0].gold_spans == (("d1", 11, 37),)
    assert c.docs[0].text[11:37] == "Dogs bark loudly at night."
    c1 = R.read_corpus(tmp_path / "spans" / "toy", limit=1)  # query 1 + its gold doc + first doc
    assert len(c1.queries) == 1 and [d.doc_id for d in c1.docs] == ["d1"]
    # resolution: folder, stem, either file of a pair
    sets, note = R.resolve([str(tmp_path)], "chunking")
    assert note is None and [s.name for s in sets] == ["toy"] and sets[0].kind == "spans"
    sets, _ = R.resolve([str(tmp_path / "spans" / "toy.queries.jsonl")], "retrieval")
    assert sets[0].path == tmp_path / "spans" / "toy"
    sets, _ = R.resolve([str(tmp_path)], "segmentation")
    assert [s.name for s in sets] == ["toy"] and sets[0].kind == "segmentation"


def test_readers_reject_bad_input(tmp_path, monkeypatch):
    with pytest.raises(R.DataMissing, match="no such"):
        R.resolve([str(tmp_path / "nope")], "segmentation")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"units": ["a", "b"], "segments": [1, 2]}) + "\n")
    with pytest.raises(R.DataFormatError, match="sum"):
        R.read_segmentation(bad)
    bad.write_text(json.dumps({"units": ["a", "b", "c"], "segments": [1, 2], "boundaries": [1]}) + "\n")
    with pytest.raises(R.DataFormatError, match="disagree"):
        R.read_segmentation(bad)
    # no data named, default folder absent: a note and nothing to run (the CLI exits 0)
    monkeypatch.setenv("LOGICHUNK_DATA", str(tmp_path / "absent"))
    sets, note = R.resolve(None, "segmentation")
    assert sets == [] and "no benchmark data" in note


# --------------------------------------------------------------------------- chunking


def test_budget_take():
    tokens = np.array([5, 5, 5])
    taken, keep = C.budget_take(np.array([2, 0, 1]), tokens, 7)
    assert taken.tolist() == [2, 0] and keep == 2
    taken, keep = C.budget_take(np.array([1, 0]), tokens, 10)
    assert taken.tolist() == [1, 0] and keep == 5
    taken, keep = C.budget_take(np.array([1, 0, 2]), tokens, 100)  # corpus smaller than the budget
    assert taken.tolist() == [1, 0, 2]


def test_retrieval_budget_counts_overlapping_text_once():
    layout = C.Layout(np.array([0]), np.array([100]), np.arange(101), ["d"])
    # a child [10, 20), then its parent [0, 40), then another chunk: the parent adds only what is new
    h = C.Hitlist(np.array([10, 0, 50]), np.array([20, 40, 60]), np.array([0, 0, 0]))
    cut = C._cut_to_budget(h, layout, 35)
    assert list(zip(cut.starts.tolist(), cut.ends.tolist(), strict=True)) == [(10, 20), (0, 10), (20, 35)]
    assert C._subtract(2, 8, [(0, 3), (7, 9)]) == [(3, 7)] and C._subtract(0, 5, [(0, 5)]) == []
    whole = C._cut_to_budget(h, layout, 1000)
    assert int((whole.ends - whole.starts).sum()) == 50  # 40 of the parent (child inside) + 10


def test_run_chunking_on_toy_corpus(tmp_path):
    _write_sets(tmp_path)
    corpus = R.read_corpus(tmp_path / "spans" / "toy")
    s = Settings(size=8, unit="tokens", embedder=_embedder(), embedder_name="test")
    qv = C.embed(s.embedder, [q.question for q in corpus.queries], "query")
    runner = build(METHODS["fixed"], s)
    row, notes, items = C.run_chunking(corpus, "fixed", runner, s, peer=False, dataset="toy", budget=8, query_vecs=qv)
    assert notes == []
    # the per-query scores behind the row's means (what the paired comparison resamples)
    assert items["recall"].shape == (2,) and row["recall"] == pytest.approx(items["recall"].mean())
    assert row["iou"] == pytest.approx(items["iou"].mean())
    assert row["n"] == 2 and row["budget_tokens"] == 8 and row["chunks"] >= 3
    for k in ("recall", "precision", "iou", "evidence_recall_at_k", "recall_at_k", "mrr"):
        assert 0.0 <= row[k] <= 1.0
    # with a budget as large as the corpus everything is retrieved: recall 1, precision = gold share
    big, _, _ = C.run_chunking(corpus, "fixed", runner, s, peer=False, dataset="toy", budget=10_000, query_vecs=qv)
    assert big["recall"] == 1.0 and big["evidence_recall_at_k"] == 1.0 and big["recall_at_k"] == 1.0
    total = sum(len(d.text) for d in corpus.docs)
    assert big["precision"] == pytest.approx(np.mean([26 / total, 7 / total]), rel=0.02)


def test_retrieval_basic_mode_and_extension_point(tmp_path):
    _write_sets(tmp_path)
    corpus = R.read_corpus(tmp_path / "spans" / "toy")
    s = Settings(size=50, unit="tokens", embedder=_embedder(), embedder_name="test")
    runner = build(METHODS["recursive"], s)
    row, _ = C.run_retrieval(corpus, "basic", "recursive", runner, s, dataset="toy", k=1)
    assert row["task"] == "retrieval" and row["method"] == "basic:recursive" and row["k"] == 1
    assert row["recall_at_k"] == 1.0 and row["mrr"] == 1.0  # one chunk per doc, lexical overlap wins

    class Everything:
        def __init__(self, corpus, settings, runner):
            self.rows = np.array([[i, 0, len(d.text)] for i, d in enumerate(corpus.docs)])

        def search(self, queries, k):
            return [self.rows[:k] for _ in queries]

    C.register_mode("test-everything", Everything)
    try:
        row, _ = C.run_retrieval(corpus, "test-everything", "recursive", runner, s, dataset="toy", k=3)
        assert row["recall_at_k"] == 1.0 and row["mrr"] == pytest.approx((1 + 1 / 2) / 2)
    finally:
        C.MODES.pop("test-everything")


def _multi_block_corpus(tmp_path) -> R.Corpus:
    """Documents of several blank-line blocks and chapters, so hits must be mapped back from
    block-relative spans through the blocks' positions."""
    paras = {
        "garden": ["Tomatoes need full sun and steady watering through the summer months.",
                   "Compost enriches the soil; worms break it down into rich humus for the roots."],
        "engine": ["# Pistons", "The piston compresses the fuel and air mixture inside the cylinder.",
                   "# Sparks", "A spark plug ignites the compressed mixture at the top of the stroke."],
        "river": ["河流从山上流下来，最后汇入大海。", "洪水季节，河水会漫过堤岸，淹没附近的农田。"],
    }
    docs, queries = [], []
    for name, ps in paras.items():
        text = "\n\n".join(ps) + "\n"
        docs.append({"doc_id": name, "title": name, "text": text, "lang": "zh" if name == "river" else "en"})
    target = [("engine", "A spark plug ignites the compressed mixture"), ("garden", "worms break it down"),
              ("river", "淹没附近的农田")]
    for i, (d, needle) in enumerate(target):
        text = next(x["text"] for x in docs if x["doc_id"] == d)
        a = text.index(needle)
        queries.append({"qid": f"q{i}", "question": needle, "answers": [needle], "lang": "en",
                        "gold_doc_ids": [d], "gold_spans": [{"doc_id": d, "start": a, "end": a + len(needle)}]})
    root = tmp_path / "mb"
    root.mkdir()
    (root / "mb.corpus.jsonl").write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")
    (root / "mb.queries.jsonl").write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in queries),
                                           encoding="utf-8")
    return R.read_corpus(root / "mb")


@pytest.mark.parametrize("mode", ["parent", "hybrid", "hierarchical", "store:basic"])
def test_store_modes_map_hits_back_to_document_spans(tmp_path, mode):
    from logichunk.eval import store_modes

    corpus = _multi_block_corpus(tmp_path)
    s = Settings(size=50, unit="tokens", embedder=_embedder(), embedder_name="test")
    searcher = store_modes.StoreSearcher(mode, corpus, s)
    try:
        rows = searcher.search([q.question for q in corpus.queries], 3)
        for q, r in zip(corpus.queries, rows, strict=True):
            assert r.shape[1] == 3 and len(r) >= 1
            for d, a, b in r.tolist():
                assert 0 <= a < b <= len(corpus.docs[d].text)
            # the query is a verbatim sentence piece: the top hit is in the gold document and covers it
            d, a, b = r[0].tolist()
            g_doc, g_a, g_b = q.gold_spans[0]
            assert corpus.docs[d].doc_id == g_doc
            assert a <= g_a and g_b <= b, (mode, q.question, corpus.docs[d].text[a:b])
    finally:
        searcher.close()
    row, _ = C.run_retrieval(corpus, mode, "entropy", None, s, dataset="mb", k=3)
    assert row["method"] == mode and row["recall_at_k"] == 1.0 and row["evidence_recall_at_k"] == 1.0
    assert row["tokens_per_query"] > 0


def test_select_methods():
    names = [m.name for m in select_methods("all", "chunking")]
    assert "fixed" in names and "texttiling" not in names and "ppl" not in names  # ppl is slow: named only
    assert [m.name for m in select_methods("ppl,fixed", "chunking")] == ["ppl", "fixed"]
    assert all(m.peer for m in select_methods("peers", "segmentation"))
    from logichunk.errors import LogichunkError

    with pytest.raises(LogichunkError, match="unknown method"):
        select_methods("nope", "chunking")
    with pytest.raises(LogichunkError, match="does not apply"):
        select_methods("texttiling", "chunking")


# --------------------------------------------------------------------------- CLI and report


def test_cli_end_to_end(tmp_path, capsys):
    from logichunk.cli import main

    _write_sets(tmp_path)
    out = tmp_path / "rep"
    rc = main(["eval", "segmentation", "--data", str(tmp_path / "seg" / "toy.jsonl"), "--methods",
               "entropy,none", "--json", "--oracle", "--out", str(out)])
    assert rc == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert [r["method"] for r in rows] == ["entropy", "entropy@gold-k", "none"]
    for r in rows:
        assert {"task", "dataset", "method", "peer", "n", "seconds", "pk", "windowdiff", "f1"} <= set(r)
        assert r["task"] == "segmentation" and r["n"] == 2 and r["peer"] is False
    rc = main(["eval", "chunking", "--data", str(tmp_path / "spans" / "toy"), "--methods", "fixed,recursive",
               "--size", "8", "--budget", "2", "--json", "--out", str(out)])
    assert rc == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert {r["method"] for r in rows} == {"fixed", "recursive"}
    assert all(r["budget_tokens"] == 16 and {"recall", "precision", "iou"} <= set(r) for r in rows)
    saved = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(saved) == 5
    rc = main(["eval", "report", "--out", str(out)])
    assert rc == 0
    md = (out / "REPORT.md").read_text()
    assert "| entropy |" in md and "## Chunking" in md and "entropy@gold-k*" in md
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "pk.png").stat().st_size > 1000 and (out / "chunking_iou.png").exists()
        assert list(out.glob("curve_*.png"))


def test_global_embed_alone_gets_its_embedder(tmp_path, capsys):
    """The method that segments on the embedder's vectors builds the embedder even when no other
    method asked for one (it once read None and died with a traceback)."""
    from logichunk.cli import main

    _write_sets(tmp_path)
    rc = main(["eval", "segmentation", "--data", str(tmp_path / "seg" / "toy.jsonl"), "--methods", "global-embed",
               "--embedder", "hash", "--json", "--no-save"])
    assert rc == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert [r["method"] for r in rows] == ["global-embed"] and rows[0]["embedder"] == "hash"


def test_cli_missing_data(tmp_path, capsys, monkeypatch):
    from logichunk.cli import main

    assert main(["eval", "segmentation", "--data", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    monkeypatch.setenv("LOGICHUNK_DATA", str(tmp_path / "absent"))
    assert main(["eval", "chunking", "--no-save"]) == 0
    assert "skipping" in capsys.readouterr().err
    assert main(["eval", "report", "--out", str(tmp_path / "empty")]) == 2


# --------------------------------------------------------------------------- real data (quick)


@needs_data
def test_smoke_on_shared_data():
    choi = DATA / "segmentation" / "choi.jsonl"
    if not choi.exists():
        pytest.skip(f"{choi} not found")
    docs = R.read_segmentation(choi, limit=5)
    assert all(d.boundaries.size > 0 for d in docs)
    runner = build(METHODS["entropy"], Settings())
    row = S.run_segmentation(docs, "entropy", runner, peer=False, dataset="choi").rows[0]
    none = S.run_segmentation(docs, "none", build(METHODS["none"], Settings()), peer=False, dataset="choi").rows[0]
    assert row["pk"] < none["pk"]  # Choi's document switches are easy: any real signal beats no cuts
    stem = DATA / "chunking" / "drcd_dev_article"
    if not Path(str(stem) + ".corpus.jsonl").exists():
        pytest.skip(f"{stem} not found")
    corpus = R.read_corpus(stem, limit=10)
    s = Settings(size=200, unit="tokens", embedder=_embedder(), embedder_name="hash")
    qv = C.embed(s.embedder, [q.question for q in corpus.queries], "query")
    row, _, _ = C.run_chunking(corpus, "fixed", build(METHODS["fixed"], s), s, peer=False, dataset="drcd",
                            budget=1000, query_vecs=qv)
    assert row["n"] == 10 and row["recall"] > 0.3 and row["recall_at_k"] > 0.5


@pytest.mark.parametrize("name", ["langchain-recursive", "chonkie-recursive", "semchunk", "chonkie-semantic"])
def test_peers_map_back_to_exact_spans(name):
    from logichunk.eval.methods import Unavailable

    s = Settings(size=12, unit="tokens", embedder=_embedder(), embedder_name="test")
    try:
        runner = build(METHODS[name], s)
    except Unavailable as e:
        pytest.skip(f"peer not installed: {e}")
    for text, lang in ((TEXT_EN, "en"), (TEXT_ZH, "zh")):
        loc = runner.chunk(text, lang)
        assert loc.unlocated == 0 and loc.produced == loc.spans.shape[0] >= 1
        if "semantic" not in name:  # size-bounded splitters must cut this text
            assert loc.produced > 1
        sp = loc.spans
        assert (sp[1:, 0] >= sp[:-1, 1]).all()  # in order, no overlap
        covered = sum(b - a for a, b in sp.tolist())
        assert covered >= len(text.strip()) - 3 * len(sp)  # only whitespace between chunks is lost


def test_budget_argument():
    from logichunk.errors import LogichunkError
    from logichunk.eval.cli import _budget

    assert _budget("5", 200) == 1000 and _budget("2.5", 100) == 250
    assert _budget("1000t", 200) == 1000 and _budget("750tokens", 200) == 750
    for bad in ("x", "0", "-3", "5 chunks"):
        with pytest.raises(LogichunkError):
            _budget(bad, 200)



def test_segmentation_of_no_documents_has_no_scores(tmp_path, capsys):
    """Zero documents scored (all skipped) is no result, not a perfect one."""
    f = tmp_path / "d.jsonl"
    f.write_text(json.dumps({"id": "a", "units": ["x y", "z w", "u v"], "boundaries": [1]}) + "\n", encoding="utf-8")
    code, out, _ = _eval_cli(["segmentation", "--data", str(f), "--skip", "5", "--methods", "entropy", "--json",
                              "--no-save"], capsys)
    row = json.loads(out.splitlines()[0])
    assert code == 0 and row["n"] == 0
    assert all(row[k] is None for k in ("pk", "windowdiff", "f1", "boundary_precision", "boundary_recall"))


def test_eval_speaks_jsonl_like_every_verb(tmp_path, monkeypatch, capsys):
    code, out, err = _eval_cli(["methods", "--format", "jsonl"], capsys)
    assert code == 0, err
    recs = [json.loads(x) for x in out.splitlines()]
    assert recs and all({"method", "group", "tasks", "runnable"} <= set(r) for r in recs)
    f = tmp_path / "d.jsonl"
    f.write_text(json.dumps({"id": "a", "units": ["x y", "z w", "u v"], "boundaries": [1]}) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # a relative --data path is named by its folder, not "/d"
    _, out, _ = _eval_cli(["segmentation", "--data", "d.jsonl", "--methods", "entropy", "--format", "jsonl",
                           "--no-save"], capsys)
    row = json.loads(out.splitlines()[0])
    assert row["dataset"] == f"{tmp_path.name}/d" and row["n"] == 1


@pytest.mark.parametrize("line, needle", [
    ({"id": "x", "units": ["a", "b"], "boundaries": ["zero"]}, "list of integers"),
    ({"id": "x", "units": ["a", "b", "c"], "segments": [1, "two"]}, "list of integers"),
    ({"id": "x", "units": ["a", "b"], "boundaries": [0.5]}, "list of integers"),
    ({"id": "x", "units": ["a", "b"], "boundaries": 0}, "list of integers"),
    ({"id": "x", "units": "abc", "boundaries": [0]}, "'units' list of strings"),
])
def test_segmentation_fields_of_the_wrong_type_are_data_errors(tmp_path, line, needle):
    from logichunk.eval.readers import DataFormatError, read_segmentation

    f = tmp_path / "d.jsonl"
    f.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=needle):
        read_segmentation(f)


@pytest.mark.parametrize("corpus, query, needle", [
    ({"doc_id": "a", "text": None}, {"qid": "1", "question": "q", "gold_spans": []}, "'text' must be a string"),
    ({"doc_id": "a", "text": "Hi."}, {"qid": "1", "question": "q", "gold_spans": [{"doc_id": "a", "start": "x", "end": 2}]},
     "start/end"),
    ({"doc_id": "a", "text": "Hi."}, {"qid": "1", "question": "q", "gold_spans": {"doc_id": "a"}}, "list of objects"),
])
def test_corpus_fields_of_the_wrong_type_are_data_errors(tmp_path, corpus, query, needle):
    from logichunk.eval.readers import DataFormatError, read_corpus

    (tmp_path / "s.corpus.jsonl").write_text(json.dumps(corpus) + "\n", encoding="utf-8")
    (tmp_path / "s.queries.jsonl").write_text(json.dumps(query) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=needle):
        read_corpus(tmp_path / "s")


def test_a_byte_order_mark_before_the_first_line_is_read(tmp_path):
    from logichunk.eval.readers import read_segmentation

    f = tmp_path / "d.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps({"id": "x", "units": ["a", "b"], "boundaries": [0]}).encode() + b"\n")
    assert [d.id for d in read_segmentation(f)] == ["x"]


@pytest.mark.parametrize("argv", [["segmentation", "--skip", "-1"], ["retrieval", "--k", "0"],
                                  ["chunking", "--size", "0"]])
def test_out_of_range_numbers_are_refused(argv, capsys):
    code, _, err = _eval_cli([*argv, "--no-save"], capsys)
    assert code == 2 and "must be at least" in err and "Traceback" not in err


def test_an_unknown_retrieval_mode_is_one_line(tmp_path, capsys):
    """A mode that is no mode among known ones was skipped with a note and the rest run (two lines for a typo):
    it is an error now, naming the modes."""
    from logichunk.cli import main

    _write_sets(tmp_path)
    spans = str(tmp_path / "spans" / "toy.queries.jsonl")
    assert main(["eval", "retrieval", "--data", spans, "--modes", "basic,nope", "--no-save"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown retrieval mode(s) 'nope'" in err and "store:parent" in err


def test_global_gives_an_oracle_row_with_its_own_cuts_at_the_gold_count(tmp_path):
    rows = [{"id": str(i), "lang": "en", "units": [f"cats purr {j}" for j in range(4)] + [f"rockets fly {j}" for j in range(4)]
             + [f"bread rises {j}" for j in range(4)], "segments": [4, 4, 4], "boundaries": [3, 7]} for i in range(3)]
    path = tmp_path / "seg.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    docs = R.read_segmentation(path)
    runner = build(METHODS["global"], Settings(embedder=_embedder(), embedder_name="test"))
    out = S.run_segmentation(docs, "global", runner, peer=False, dataset="toy", oracle=True)
    by = {r["method"]: r for r in out.rows}
    assert set(by) == {"global", "global@gold-k"} and by["global@gold-k"]["oracle"]
    assert by["global@gold-k"]["hyp_per_doc"] == 2.0 and by["global@gold-k"]["pk"] == 0.0


def test_global_scatter_is_the_previous_rule_as_its_own_row(tmp_path):
    """The comparison row runs the scatter of the lexical rows with the length-raised permutation price,
    under the same structure rules; told the count it gives that many cuts."""
    from logichunk import boundaries as bd
    from logichunk.chunkers.topics import topic_rules
    from logichunk.signals.cohesion import lexical_rows
    from logichunk.text.sentences import join_units
    from logichunk.text.structure import layout

    units = [f"cats purr {j}" for j in range(5)] + [f"rockets fly {j}" for j in range(5)] + ["However, it ended."]
    runner = build(METHODS["global-scatter"], Settings(embedder=_embedder(), embedder_name="test"))
    sents = join_units(units)
    fixed, glue = topic_rules(layout(sents))
    X = lexical_rows(sents.text, sents.starts, sents.ends)
    want = bd.segment_global(X, penalty=bd.segment_penalty(X), fixed=fixed, glue=glue)
    got = runner.segment(units, "en")
    assert got.tolist() == want.tolist() and 4 in got.tolist() and 9 not in got.tolist()
    assert runner.segment_count(units, 2).size == 2
    assert runner.segment(["one"], "en").size == 0


def test_documents_laid_end_to_end_keep_their_boundaries_and_gain_the_joins():
    docs = [R.SegDoc("a", "en", ["a1", "a2", "a3"], np.array([0])), R.SegDoc("b", "en", ["b1"], np.zeros(0, np.int64)),
            R.SegDoc("c", "zh", [], np.zeros(0, np.int64)), R.SegDoc("d", "en", ["d1", "d2"], np.array([0])),
            R.SegDoc("e", "en", ["e1", "e2"], np.zeros(0, np.int64))]
    long = R.end_to_end(docs, 4)
    assert [d.id for d in long] == ["a+b+c+d", "e"]
    assert long[0].units == ["a1", "a2", "a3", "b1", "d1", "d2"]
    assert long[0].boundaries.tolist() == [0, 2, 3, 4]  # a's own, a|b, b|d (c has no units), d's own
    assert long[1].units == ["e1", "e2"] and long[1].boundaries.tolist() == []
    assert [d.units for d in R.end_to_end(docs, 1)] == [d.units for d in docs]
    with pytest.raises(ValueError):
        R.end_to_end(docs, 0)


def test_the_end_to_end_flag_scores_the_long_texts(tmp_path, capsys):
    f = tmp_path / "d.jsonl"
    f.write_text("".join(json.dumps({"id": str(i), "units": ["x y", "z w", "u v"], "boundaries": [1]}) + "\n"
                         for i in range(5)), encoding="utf-8")
    code, out, err = _eval_cli(["segmentation", "--data", str(f), "--end-to-end", "2", "--methods", "none", "--json",
                                "--no-save"], capsys)
    assert code == 0, err
    row = json.loads(out.splitlines()[0])
    assert row["n"] == 3 and row["end_to_end"] == 2 and row["dataset"].endswith("@end-to-end-2")
    assert row["gold_per_doc"] == pytest.approx((3 + 3 + 1) / 3)  # 2 docs: 1 + 1 + the join; the last alone: 1

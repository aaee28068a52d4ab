"""logichunk.scale: the Ray ingest stores exactly what the serial ingest stores.

Ray runs in local mode, started once for the module (2 CPUs) and shut down after it. Every store is
compared with a serial twin row by row: documents, chapters, blocks (text, hash, dirty flag),
chunks (level, dotted id, span, text, hash, method, the blocks a parent covers), chunk vectors,
bubbles and the embedding cache, and the IngestReport."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.config import Settings
from logichunk.errors import InputError, LogichunkError
from logichunk.models.embed_hash import HashEmbedder
from logichunk.models.embedding import LRUMapping
from logichunk.scale.workers import RecordingEmbed
from logichunk.store import Store
from logichunk.store.ingest import chapter_blocks, ingest
from logichunk.store.plan import plan_chapter

SMALL = Settings(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50,
                 child_max_size=80, embedder="hash:64")
SRC = Path(__file__).resolve().parents[1] / "src"

ZH = ("# 第一章 山门\n\n主角第一次见到师父是在山脚下的小镇。那天下着大雨，茶馆里挤满了躲雨的商人。"
      "商人们在谈论粮价。\n\n少年在山上练剑三年。冬天来了，雪封住了山路。师父说：“剑法不在手上，在心里。”\n\n"
      "第二章 下山\n\n少年下山去城里卖剑。城里的商人囤积粮食，粮价一天比一天高。\n\n")
EN = ("# Penguins\n\nEmperor penguins live in Antarctica. They huddle together through the winter. "
      "The males keep the eggs warm for two months.\n\n## Food\n\nThey eat fish, squid and krill. "
      "A dive can last twenty minutes.\n\n```\ncode block\n\nwith a blank line\n```\n\n"
      "Chapter 2 Storms\n\n" + "An endless storm sentence that runs on and on without a stop " * 6 + ".\n\n"
      "They huddle together through the winter.\n")  # a sentence also in the first chapter: one cache entry


def write_corpus(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "novel.md").write_text(ZH, encoding="utf-8")
    (root / "penguins.txt").write_text(EN, encoding="utf-8")
    (root / "mixed.md").write_text("笔记：企鹅住在南极。\n\nPenguins eat krill. 它们冬天挤在一起。\n", encoding="utf-8")
    (root / "sub" / "empty.txt").write_text("", encoding="utf-8")
    (root / "sub" / "bom.txt").write_bytes("\ufeffA file with a byte-order mark. It is dropped.\n".encode("utf-8-sig"))
    (root / "sub" / "image.bin").write_bytes(bytes(range(256)) * 4)  # not a text suffix: neither path reads it
    return root


def stored(store: Store) -> tuple[dict, dict[str, np.ndarray]]:
    """Everything a store holds for its project, with random ids replaced by positions; the vectors
    (chunks' and the embedding cache's) apart, to compare with a tolerance."""
    docs, vectors = [], {}
    for d, (did, title, source) in enumerate(store.documents()):
        chapters = store.chapters(did)
        ch = {cid: k for k, (cid, _o, _t) in enumerate(chapters)}
        blocks = [b for cid, _o, _t in chapters for b in store.blocks(cid)]
        pos = {b.id: (ch[b.chapter_id], b.order) for b in blocks}
        chunks = sorted((ch[c.chapter_id], c.level, c.dotted_id, c.order, c.start, c.end, c.size, c.content,
                         c.content_hash, c.method, pos[c.block_id],
                         json.dumps({**c.meta, "blocks": [pos[b] for b in c.meta.get("blocks", [])]}))
                        for c in store.chunks(document_id=did))
        bubbles = sorted((ch[c], pos[b], cat, content, prio, ctx) for c, b, cat, content, prio, ctx in store._q(
            "SELECT chapter_id, block_id, category, content, priority, context FROM bubbles WHERE document_id = ?",
            (did,)))
        for dotted, model, blob in store._q("SELECT dotted_id, embedding_model, embedding FROM chunks "
                                            "WHERE document_id = ?", (did,)):
            vectors[f"{d}/{model}/{dotted}"] = store._vec_value(blob)
        docs.append({"title": title, "source": source, "reached_by": store.reached_paths().get(did),
                     "chapters": [(o, t) for _c, o, t in chapters],
                     "blocks": [(pos[b.id], b.content, b.is_dirty, b.content_hash, b.last_error) for b in blocks],
                     "chunks": chunks, "bubbles": bubbles})
    for model, kind, h, dim, blob in store._q("SELECT model_id, kind, content_hash, dim, vector FROM embeddings"):
        vectors[f"cache/{model}/{kind}/{h}/{dim}"] = np.frombuffer(bytes(blob), "<f4")
    return {"documents": docs}, vectors


def assert_same(a: Store, b: Store) -> None:
    (ra, va), (rb, vb) = stored(a), stored(b)
    assert ra == rb
    assert va.keys() == vb.keys()
    for k in va:
        np.testing.assert_allclose(va[k], vb[k], atol=1e-6, err_msg=k)


def parents_text(store: Store, document_id: str) -> str:
    """The document's parents, in order, joined: its text again when nothing was lost or altered."""
    return "".join(p.content for cid, _o, _t in store.chapters(document_id)
                   for p in sorted(store.chunks(level="parent", chapter_id=cid), key=lambda p: p.order))


def same_report(x, y) -> bool:
    return dataclasses.replace(x, seconds=0.0) == dataclasses.replace(y, seconds=0.0)


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason="Ray is not installed (extra [ray])")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the test embedders below, in the workers
    yield ray
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    if started:
        ray.shutdown()


def open_pair(tmp_path: Path, s: Settings = SMALL, **kw) -> tuple[Store, Store]:
    return Store.open(str(tmp_path / "serial.db"), settings=s, **kw), Store.open(str(tmp_path / "ray.db"), settings=s, **kw)


# ----------------------------------------------------------------------------- without Ray


def test_a_plan_made_away_from_the_store_is_what_the_store_would_plan(tmp_path):
    s = SMALL
    a, b = open_pair(tmp_path)
    with a, b:
        chapters = chapter_blocks(ZH + EN)
        for st_ in (a, b):
            st_.add_document("d", chapters, source="x")
        a.rechunk_dirty()
        memo = LRUMapping(1000)
        for rank, (cid, _o, _t) in enumerate(b.chapters(b.documents()[0][0]), 1):
            rec = RecordingEmbed(HashEmbedder(64), s.embedding_batch_size, memo)
            plan = dataclasses.replace(plan_chapter(chapters[rank - 1][1], rank, rec, b.params),
                                       model_id=b.model_id, vectors=rec.used)
            r = b.rechunk_chapter(cid, plan=plan)
            assert r.status == "rechunked" and b.embed_calls == 0  # written as planned: nothing embedded here
        assert_same(a, b)


def test_a_plan_that_no_longer_fits_is_set_aside(tmp_path):
    with Store.open(str(tmp_path / "x.db"), settings=SMALL) as store:
        did = store.add_document("d", [("c", ["River and mountain. Tea in winter.\n\n"])])
        cid = store.chapters(did)[0][0]
        rec = RecordingEmbed(HashEmbedder(64), 8, LRUMapping(10))
        other = dataclasses.replace(plan_chapter(["Something else entirely.\n\n"], 1, rec, store.params),
                                    model_id=store.model_id, vectors=rec.used)
        r = store.rechunk_chapter(cid, plan=other)
        assert r.status == "rechunked" and r.embedded > 0  # planned here instead
        assert "".join(c.content for c in store.chunks(level="parent")) == "River and mountain. Tea in winter.\n\n"


WORDS = ["river", "mountain", "teacher", "sword", "market", "winter", "师父", "山路", "商人", "粮食", "大雨"]
sentences = st.builds(lambda ws, end: " ".join(ws) + end, st.lists(st.sampled_from(WORDS), min_size=1, max_size=20),
                      st.sampled_from([". ", "。", "！", ".\n", "\n\n", "\n\n# Heading\n\n", "\n\n第三章 雪\n\n"]))


@settings(max_examples=25, deadline=None)
@given(st.lists(sentences, min_size=0, max_size=40).map("".join))
def test_property_planning_away_from_the_store_changes_nothing(text):
    with Store.open(":memory:", settings=SMALL) as a, Store.open(":memory:", settings=SMALL) as b:
        chapters = chapter_blocks(text)
        assert "".join(blk for _t, bl in chapters for blk in bl) == text  # nothing lost before planning
        da, db = a.add_document("d", chapters), b.add_document("d", chapters)
        a.rechunk_dirty()
        memo = LRUMapping(100)
        for rank, ((cid, _o, _t), (_title, blocks)) in enumerate(zip(b.chapters(db), chapters, strict=True), 1):
            rec = RecordingEmbed(HashEmbedder(64), 4, memo)
            plan = dataclasses.replace(plan_chapter(blocks, rank, rec, b.params), model_id=b.model_id, vectors=rec.used)
            b.rechunk_chapter(cid, plan=plan)
        assert_same(a, b)
        assert parents_text(b, db) == text
        assert da != db


def test_without_ray_the_api_and_the_verb_say_install_the_extra(tmp_path, monkeypatch, capsys):
    from logichunk.cli import main
    from logichunk.scale import RayUnavailable, ingest_corpus

    corpus = write_corpus(tmp_path / "c")
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with Store.open(str(tmp_path / "x.db"), settings=SMALL) as store:
        with pytest.raises(RayUnavailable, match=r"install logichunk\[ray\]"):
            ingest_corpus(store, [str(corpus)])
        assert store.documents() == []
    db = tmp_path / "never.db"
    assert main(["ingest", str(corpus), "--db", str(db), "--ray"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "install logichunk[ray]" in err and "Traceback" not in err
    assert not db.exists()  # refused before a database was created
    with pytest.raises(LogichunkError, match="add --ray"):
        main_args = ["ingest", str(corpus), "--db", str(db), "--workers", "2"]
        from logichunk.cli import build_parser

        args = build_parser().parse_args(main_args)
        args.func(args)


def test_an_unreachable_cluster_is_said_in_one_line(monkeypatch):
    ray = pytest.importorskip("ray", reason="Ray is not installed (extra [ray])")
    from logichunk.scale.session import RayUnavailable, ray_session

    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as in a fresh process
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(RayUnavailable, match=f"cannot reach Ray at {re.escape(address)}: "), ray_session(address):
            pass


# ----------------------------------------------------------------------------- on Ray


def test_ray_ingest_stores_what_the_serial_ingest_stores(tmp_path, ray_local):
    from logichunk.scale import ingest_corpus

    corpus = write_corpus(tmp_path / "corpus")
    a, b = open_pair(tmp_path)
    with a, b:
        ra = ingest(a, [str(corpus)])
        rb = ingest_corpus(b, [str(corpus)], workers=2, batch_size=2)  # several batches, both workers
        assert same_report(ra, rb) and rb.documents == 4 and rb.children > 0 and rb.embedded > 0
        assert rb.empty == (str(corpus / "sub" / "empty.txt"),)  # skipped by both (issue 21: never stored)
        assert_same(a, b)
        assert any(bub for d in stored(b)[0]["documents"] for bub in d["bubbles"])  # the run-on sentence's
        for did, _title, source in b.documents():  # and the text is the file's, byte for byte
            text = "".join(b.chapter_text(cid) for cid, _o, _t in b.chapters(did))
            assert text == parents_text(b, did) == Path(source).read_text(encoding="utf-8-sig")
        assert b.counts()["dirty_blocks"] == 0
    assert ray_local.is_initialized()  # the caller's Ray is left running


def test_skip_update_and_replace_as_the_serial_ingest_does(tmp_path, ray_local):
    """A changed file updates its document in place (it was refused, ``--replace`` needed), by both engines
    alike; a store edit it conflicts with is kept, and ``replace`` drops it for the file, the document kept."""
    from logichunk.scale import ingest_corpus

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\nRiver and mountain. Tea in winter.\n", encoding="utf-8")
    (corpus / "b.md").write_text("# B\n\n少年下山去城里卖剑。\n", encoding="utf-8")
    a, b = open_pair(tmp_path)
    with a, b:
        assert same_report(ingest(a, [str(corpus)]), ingest_corpus(b, [str(corpus)]))
        ra, rb = ingest(a, [str(corpus)]), ingest_corpus(b, [str(corpus)])  # the same text again: skipped
        assert same_report(ra, rb) and rb.documents == 0 and len(rb.unchanged) == 2
        docs = [d for d, _t, _s in b.documents()]
        (corpus / "b.md").write_text("# B\n\n少年下山去城里卖剑。师父没有说话。\n", encoding="utf-8")
        (corpus / "c.md").write_text("A new file.\n", encoding="utf-8")
        ra, rb = ingest(a, [str(corpus / "b.md")]), ingest_corpus(b, [str(corpus / "b.md")])  # updated in place
        assert same_report(*map(_no_ids, (ra, rb))) and rb.updated == (str(corpus / "b.md"),) and not rb.failed
        assert rb.documents == 0 and [d for d, _t, _s in b.documents()] == docs
        ra, rb = ingest(a, [str(corpus)]), ingest_corpus(b, [str(corpus)])  # c.md stored
        assert same_report(ra, rb) and rb.documents == 1 and len(rb.unchanged) == 2
        for s in (a, b):  # a store edit of b.md's paragraph, which the file then changes too
            s.edit_block(next(x.id for x in s.blocks() if "少年" in x.content), "少年留在山上。\n")
        (corpus / "b.md").write_text("# B\n\n少年下山去城里卖剑。师父说话了。\n", encoding="utf-8")
        ra, rb = ingest(a, [str(corpus)]), ingest_corpus(b, [str(corpus)])  # a conflict: the store's text kept
        assert same_report(*map(_no_ids, (ra, rb))) and rb.failed and len(rb.conflicts) == 1
        ra, rb = ingest(a, [str(corpus)], replace=True), ingest_corpus(b, [str(corpus)], replace=True)
        assert same_report(*map(_no_ids, (ra, rb))) and rb.replaced == (str(corpus / "b.md"),) and rb.documents == 0
        assert len(rb.overwritten) == 1 and [d for d, _t, _s in b.documents()][:2] == docs
        assert_same(a, b)


def _no_ids(r):
    """A report with the document and block ids of its lines said as ``ID``: two stores' ids differ."""
    lines = ("refused", "conflicts", "added", "removed", "overwritten")
    return dataclasses.replace(r, **{k: tuple(re.sub(r"(document|block) \w+", r"\1 ID", x) for x in getattr(r, k))
                                     for k in lines})


def without_ids(line: str) -> str:
    return re.sub(r"document \w+", "document ID", line)


def test_a_binary_file_is_refused_as_the_serial_ingest_refuses_it(tmp_path, ray_local):
    """Alone, a binary or undecodable file is the error; among others, each is skipped with its line (all named
    in one run) and the rest stored, by both engines alike."""
    from logichunk.scale import ingest_corpus

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.txt").write_text("Fine text.\n", encoding="utf-8")
    (corpus / "b.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    (corpus / "c.txt").write_bytes("caf\xe9".encode("latin-1"))
    a, b = open_pair(tmp_path)
    with a, b:
        with pytest.raises(InputError) as serial_err:
            ingest(a, [str(corpus / "b.txt")])
        with pytest.raises(InputError) as ray_err:
            ingest_corpus(b, [str(corpus / "b.txt")])
        assert str(ray_err.value) == str(serial_err.value) and "binary" in str(ray_err.value)
        assert a.documents() == b.documents() == []
        ra, rb = ingest(a, [str(corpus)]), ingest_corpus(b, [str(corpus)])
        assert same_report(ra, rb) and rb.documents == 1 and rb.failed
        assert [line.split(":")[0] for line in rb.refused] == [str(corpus / "b.txt"), str(corpus / "c.txt")]
        assert "binary" in rb.refused[0] and "UTF-8" in rb.refused[1]
        assert_same(a, b)


def test_no_chunk_then_chunk_as_the_serial_ingest_does(tmp_path, ray_local):
    from logichunk.scale import ingest_corpus

    corpus = write_corpus(tmp_path / "c")
    a, b = open_pair(tmp_path)
    with a, b:
        assert same_report(ingest(a, [str(corpus)], rechunk=False), ingest_corpus(b, [str(corpus)], rechunk=False))
        assert b.counts()["dirty_blocks"] > 0 and b.counts()["child"] == 0
        assert_same(a, b)
        (corpus / "late.txt").write_text("Added later. It is chunked with the rest.\n", encoding="utf-8")
        assert same_report(ingest(a, [str(corpus)]), ingest_corpus(b, [str(corpus)]))
        assert b.counts()["dirty_blocks"] == 0
        assert_same(a, b)


def test_a_file_changed_between_the_passes_is_refused_as_the_serial_ingest_refuses_it(tmp_path, ray_local,
                                                                                       monkeypatch):
    """A file edited between its check and its plan stopped the whole Ray ingest (the files after it not stored,
    rerun needed); the serial ingest refuses it in one line and stores the others. Both do that now, in the same
    words (one check: FileDocument.checked)."""
    import logichunk.store.ingest as ing
    from logichunk.scale import ingest_corpus

    corpus = tmp_path / "c"
    corpus.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (corpus / name).write_text(f"The file {name}. It holds a sentence or two.\n", encoding="utf-8")
    first, check = (corpus / "b.txt").read_text(encoding="utf-8"), ing.FileChecks.check

    def check_then_edit(self, path, text_hash, text=None):  # b.txt is edited right after its check, before its plan
        out = check(self, path, text_hash, text)
        if Path(path).name == "b.txt":
            Path(path).write_text(first + "Edited meanwhile.\n", encoding="utf-8")
        return out

    monkeypatch.setattr(ing.FileChecks, "check", check_then_edit)
    a, b = open_pair(tmp_path)
    with a, b:
        ra = ingest(a, [str(corpus)])
        (corpus / "b.txt").write_text(first, encoding="utf-8")
        rb = ingest_corpus(b, [str(corpus)], batch_size=1)
        assert same_report(ra, rb) and rb.failed and rb.documents == 2
        assert rb.refused == (f"{corpus / 'b.txt'} changed while it was being ingested; not stored this time — "
                              "ingest again to store it",)
        assert sorted(Path(src).name for _d, _t, src in b.documents()) == ["a.txt", "c.txt"]
        assert b.counts()["dirty_blocks"] == 0
        assert_same(a, b)


class Exploding:
    """The hash embedder, until it meets a text with BOOM (a model server going away) or EXIT (the
    worker process dying)."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(64)
        self.model_id, self.dim = self.inner.model_id, 64

    def embed(self, texts, *, kind="passage"):
        if any("EXIT" in t for t in texts):
            os._exit(3)
        if any("BOOM" in t for t in texts):
            raise RuntimeError("the model server went away")
        return self.inner.embed(texts, kind=kind)


def test_a_worker_failure_stops_cleanly_and_a_rerun_finishes(tmp_path, ray_local):
    from logichunk.scale import ingest_corpus

    corpus = tmp_path / "c"
    corpus.mkdir()
    for name, text in (("1.txt", "River and mountain.\n"), ("2.txt", "The BOOM file.\n")):
        (corpus / name).write_text(text, encoding="utf-8")
    with Store.open(str(tmp_path / "x.db"), settings=SMALL, embedder=Exploding()) as store:
        for stops_at, says in (("2.txt", "RuntimeError: the model server went away"),  # the embedder raises
                               ("3.txt", "a Ray worker failed: WorkerCrashedError")):  # the worker process dies
            if stops_at == "3.txt":  # only now: the files before the one that kills its worker are all stored
                (corpus / "3.txt").write_text("The EXIT file.\n", encoding="utf-8")
            with pytest.raises(LogichunkError, match=says) as err:
                ingest_corpus(store, [str(corpus)], batch_size=1)
            assert "\n" not in str(err.value) and str(err.value).startswith(str(corpus / stops_at))
            stored_files = sorted(Path(src).name for _d, _t, src in store.documents())
            assert stored_files == sorted(f for f in ("1.txt", "2.txt") if f < stops_at)  # the batches before it
            assert store.counts()["dirty_blocks"] == 0  # and nothing half-written
            assert store.counts()["child"] == len(stored_files)
            (corpus / stops_at).write_text(f"The file {stops_at}, mended.\n", encoding="utf-8")
        rep = ingest_corpus(store, [str(corpus)], batch_size=1)
        assert rep.unchanged == (str(corpus / "1.txt"), str(corpus / "2.txt")) and rep.documents == 1


class CountedLoads(HashEmbedder):
    """The hash embedder, which notes each time a process loads it (a worker receiving it) in ``log``."""

    def __init__(self, log: str) -> None:
        super().__init__(64)
        self.log = log

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")


def test_later_ingests_reuse_the_workers_and_their_embedder(tmp_path, ray_local):
    """A worker process keeps its embedder between tasks and between ingests with the same arguments (a pool of
    actors started per ingest loaded it again each time: 3-12 s here)."""
    from logichunk.scale import ingest_corpus

    log = tmp_path / "loads.txt"
    corpus = tmp_path / "c"
    corpus.mkdir()
    for k in range(6):
        (corpus / f"{k}.txt").write_text(f"File {k}. River and mountain.\n\nTea in winter, cup {k}.\n", encoding="utf-8")
    for db in ("x.db", "y.db", "z.db"):  # three ingests, each two passes of six batches
        with Store.open(str(tmp_path / db), settings=SMALL, embedder=CountedLoads(str(log))) as store:
            rep = ingest_corpus(store, [str(corpus)], workers=2, batch_size=1)
            assert rep.documents == 6 and not rep.failed
    loads = log.read_text(encoding="utf-8").split()
    assert len(loads) == len(set(loads)) <= 2  # once per worker process, never again


def test_the_verb_end_to_end_matches_the_serial_verb(tmp_path, ray_local):
    corpus = write_corpus(tmp_path / "corpus")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    address = ray_local.get_runtime_context().gcs_address  # the module's Ray, joined as a cluster

    def verb(db: str, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "logichunk", "ingest", str(corpus), "--db", str(tmp_path / db),
                               "--embedder", "hash:64", "--format", "jsonl", *extra],
                              capture_output=True, text=True, env=env, timeout=120)

    serial, on_ray = verb("serial.db"), verb("ray.db", "--ray-address", address, "--workers", "2", "--batch-size", "2")
    assert serial.returncode == 0 and on_ray.returncode == 0, on_ray.stderr
    assert "Traceback" not in on_ray.stderr and on_ray.stderr.strip() == serial.stderr.strip()  # notes only
    rs, rr = json.loads(serial.stdout), json.loads(on_ray.stdout)
    assert (rs.pop("engine"), rr.pop("engine")) == ("serial", "ray")
    for r in (rs, rr):
        r.pop("seconds"), r.pop("chars_per_second")
    assert rs == rr and rr["documents"] == 4 and len(rr["empty"]) == 1  # the empty file skipped by both
    s = Settings(embedder="hash:64")
    with Store.open(str(tmp_path / "serial.db"), settings=s) as a, Store.open(str(tmp_path / "ray.db"), settings=s) as b:
        assert_same(a, b)


def test_another_embedder_is_refused_or_reembedded_as_the_serial_ingest_does(tmp_path, ray_local):
    # issue 21: ingest into a project embedded with another model says so, or re-embeds it all
    from logichunk.scale import ingest_corpus

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\nRiver and mountain. Tea in winter.\n", encoding="utf-8")
    (corpus / "b.md").write_text("# B\n\n少年下山去城里卖剑。\n", encoding="utf-8")
    a, b = open_pair(tmp_path)  # SMALL: hash:64
    with a, b:
        ingest(a, [str(corpus / "a.md")])
        ingest_corpus(b, [str(corpus / "a.md")])
    a, b = open_pair(tmp_path, dataclasses.replace(SMALL, embedder="hash:128"))
    with a, b:
        with pytest.raises(InputError, match="--reembed"):
            ingest(a, [str(corpus)])
        with pytest.raises(InputError, match="--reembed"):
            ingest_corpus(b, [str(corpus)])
        assert len(a.documents()) == len(b.documents()) == 1  # refused before anything was written
        ra, rb = ingest(a, [str(corpus)], reembed=True), ingest_corpus(b, [str(corpus)], reembed=True)
        assert same_report(ra, rb) and rb.documents == 1 and rb.embedded > 0
        assert set(a.stored_embedders()) == set(b.stored_embedders()) == {"hash-v2-d128"}
        assert_same(a, b)


def test_ray_ingest_in_exact_tokens_stores_what_the_serial_ingest_stores(tmp_path, ray_local):
    """The settings' tokenizer travels to the workers as its name; they size in its exact tokens."""
    pytest.importorskip("tiktoken")
    from logichunk.scale import ingest_corpus
    from logichunk.text.tokens import resolve_tokenizer

    corpus = write_corpus(tmp_path / "corpus")
    s = dataclasses.replace(SMALL, unit="tokens", tokenizer="cl100k_base", max_parent_size=40, min_parent_size=10,
                            child_max_size=12, child_target_size=8, child_min_size=3)
    a, b = open_pair(tmp_path, s)
    with a, b:
        ra, rb = ingest(a, [str(corpus)]), ingest_corpus(b, [str(corpus)], workers=2, batch_size=2)
        assert same_report(ra, rb)
        assert_same(a, b)
        enc = resolve_tokenizer("cl100k_base").tokenizer
        kids = b.chunks(level="child")
        assert max(len(k.content) for k in kids) > 12  # tokens, not characters
        assert all(len(enc.encode_ordinary(k.content)) <= 12 for k in kids)
        assert all(len(enc.encode_ordinary(p.content)) <= 40 for p in b.chunks(level="parent"))

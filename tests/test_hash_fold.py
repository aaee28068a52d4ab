"""The hash embedder reads traditional and simplified Chinese (and full-width forms) as one (version 2, its
model id ``hash-v2-d…``), on every install alike; version 1's vectors stay buildable for the stores embedded
with them, and ``logichunk ingest --reembed`` with no paths moves a project to the new version."""

from __future__ import annotations

import hashlib
import json
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.cli import main
from logichunk.config import Settings
from logichunk.models import resolve_embedder
from logichunk.models.embed_hash import HashEmbedder
from logichunk.retrieve import retrieve
from logichunk.store import Store
from logichunk.store.embedder_choice import store_embedder
from logichunk.text import han_fold
from logichunk.text.han_fold import fold_han

TRAD = "員工曠工三日以上者，公司得解除勞動合同。"
SIMP = "员工旷工三日以上者，公司得解除劳动合同。"
OTHER = "The cafeteria opens at eight and closes at two; parking permits come from the front desk."

_ALPHABET = "曠工請假臺灣後髮發乾員勞動這個們旷请台湾后发干员劳动这个们\uf900豈〇々ＡBc1２ ，。\n"


@pytest.fixture(autouse=True)
def _no_settings_from_the_environment(monkeypatch):
    """The user of these tests named no embedder: no ``LOGICHUNK_*`` variable or settings file says one."""
    import os

    for k in [k for k in os.environ if k.startswith("LOGICHUNK_")]:
        monkeypatch.delenv(k)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(st.sampled_from(_ALPHABET), max_size=25), min_size=1, max_size=4))
def test_a_text_and_its_simplified_twin_are_one_vector(texts):
    e = HashEmbedder(64)
    assert np.array_equal(e.embed(texts), e.embed([fold_han(t) for t in texts]))


@settings(max_examples=30, deadline=None)
@given(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30))
def test_full_width_letters_and_digits_are_their_ascii(text):
    wide = "".join(chr(ord(c) + 0xFEE0) for c in text)  # (ＭＱＴＴ２０２６: U+FF01..U+FF5E)
    e = HashEmbedder(64)
    assert np.array_equal(e.embed([wide + "斷線"]), e.embed([text + "断线"]))


def test_version_2_is_the_default_and_version_1_reads_the_characters_as_written():
    new, old = HashEmbedder(64), HashEmbedder(64, version=1)
    assert new.model_id == "hash-v2-d64" and old.model_id == "hash-v1-d64"
    assert resolve_embedder("hash:64").model.model_id == "hash-v2-d64"
    assert resolve_embedder("hash-v1:64").model.model_id == "hash-v1-d64"
    a, b = new.embed([TRAD, SIMP])
    assert float(a @ b) == pytest.approx(1.0)
    a, b = old.embed([TRAD, SIMP])
    assert float(a @ b) < 0.6
    # no traditional character: both versions give the same vectors
    assert np.array_equal(new.embed([SIMP, OTHER]), old.embed([SIMP, OTHER]))


def test_version_1_gives_the_previous_release_s_very_bits():
    texts = [TRAD, SIMP, "ＭＱＴＴ断线重连 2026年", "Chunking text where its logic breaks.", ""]
    v = HashEmbedder(64, version=1).embed(texts)
    digest = hashlib.sha256(np.ascontiguousarray(v, "<f4").tobytes()).hexdigest()
    assert digest == "e4195da8dd0f1723cb752ac294fe926837d976f111124c281371a7781c4794ff"  # (logichunk at 715dbeb)


def test_the_vectors_do_not_depend_on_whether_opencc_is_installed(monkeypatch):
    with_it = HashEmbedder(64).embed([TRAD, SIMP])
    monkeypatch.setitem(sys.modules, "opencc", None)  # (import opencc raises ImportError)
    han_fold.han_fold_table.cache_clear()
    han_fold._lookup.cache_clear()
    try:
        without = HashEmbedder(64).embed([TRAD, SIMP])
        assert np.array_equal(without, with_it) and np.array_equal(without[0], without[1])  # (folded, still)
    finally:
        han_fold.han_fold_table.cache_clear()
        han_fold._lookup.cache_clear()


def test_an_unknown_version_is_said_in_one_line():
    with pytest.raises(Exception, match="no hash embedder version 9"):
        resolve_embedder("hash-v9:64")


def _old_store(db: str) -> None:
    """A project embedded by the previous release's default hash embedder (``hash-v1-d64``)."""
    with Store.open(db, settings=Settings(db=db, embedder="hash-v1:64")) as store:
        for title, text in (("hr", TRAD + "\n"), ("misc", OTHER + "\n")):
            doc = store.add_document(title, [(title, [text])])
            store.rechunk_chapter(store.chapters(doc)[0][0])


def test_an_old_version_store_opens_and_searches_with_its_own_vectors(tmp_path):
    db = str(tmp_path / "old.db")
    _old_store(db)
    took = store_embedder(Settings(db=db), named=False)
    assert took is not None and took.settings.embedder == "hash-v1:64"
    assert took.resolved.model.model_id == "hash-v1-d64" and "ingest --reembed" in took.note
    with Store.open(db, settings=took.settings, embedder=took.resolved.model, create=False) as store:
        hits = retrieve(store, SIMP, mode="basic", top_k=2).hits
        assert not store.embedder_mismatch()
    old = HashEmbedder(64, version=1)
    q = old.embed([SIMP], kind="query")[0]
    for h in hits:  # the scores are version 1's cosines
        assert h.raw_score == pytest.approx(float(old.embed([h.chunk.meta["text"]])[0] @ q), abs=1e-5)
    hr = next(h for h in hits if h.chunk.meta["text"].startswith("員工"))
    assert hr.raw_score < 0.6  # (the characters as written: the simplified question meets few of them)


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_project_moves_to_the_new_version_by_ingest_reembed_with_no_paths(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "hr.txt").write_text(TRAD + "\n", encoding="utf-8")
    (docs / "misc.txt").write_text(OTHER + "\n", encoding="utf-8")
    db = str(tmp_path / "k.db")
    code, _, _ = run(["ingest", str(docs), "--db", db, "--embedder", "hash-v1:64"], capsys)
    assert code == 0
    # the new version named: its search says which flag reads the store, and how to move it
    code, out, _ = run(["search", SIMP, "--db", db, "--mode", "basic", "--embedder", "hash:64"], capsys)
    assert code == 0 and "--embedder hash-v1:64" in out and "ingest --reembed" in out  # (the table's note)
    code, _, err = run(["ingest", "--db", db, "--embedder", "hash:64"], capsys)  # no paths, nothing to redo
    assert code != 0 and "--reembed" in err and err.count("\n") == 1
    code, _, err = run(["ingest", "--reembed", "--db", db, "--embedder", "hash:64"], capsys)
    assert code == 0 and "re-embedding" in err and "hash-v1-d64" in err
    with Store.open(db, settings=Settings(db=db, embedder="hash:64"), create=False) as store:
        assert set(store.stored_embedders()) == {"hash-v2-d64"} and len(store.documents()) == 2
    code, out, err = run(["search", SIMP, "--db", db, "--mode", "basic", "--format", "jsonl"], capsys)
    top = json.loads(out.splitlines()[0])
    assert code == 0 and "hash-v2-d64" in err and "--reembed" not in err
    assert top["text"].startswith("員工曠工") and top["raw_score"] == pytest.approx(1.0, abs=1e-5)


def test_a_memory_calibration_for_version_1_serves_version_2_of_its_dimension(tmp_path):
    """A calibration file fitted for ``hash-v1-d64`` (the shipped one, ``bench/memory/``'s, a user's) is not
    refused by ``hash-v2-d64``: the same features, traditional Chinese aside. Another dimension still is."""
    from logichunk.errors import LogichunkError
    from logichunk.memory import Calibration, Perception
    from logichunk.memory.evaluate import load_calibration

    Calibration(embedder="hash-v1-d64").save(tmp_path / "v1.json")
    cal, _ = load_calibration(str(tmp_path / "v1.json"), HashEmbedder(64))
    assert cal.embedder == "hash-v1-d64"
    Perception(embedder=HashEmbedder(64), calibration=cal)
    with pytest.raises(LogichunkError, match="fitted for embedder"):
        load_calibration(str(tmp_path / "v1.json"), HashEmbedder(128))
    with pytest.raises(LogichunkError, match="fitted for embedder"):
        Perception(embedder=HashEmbedder(128), calibration=cal)

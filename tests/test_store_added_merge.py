"""A document stored from a file and edited through the API (a paragraph added: :func:`replace_text` or
``add_block``, a block with no record of a file's text), its file ingested again: merged in the one merge, the
added paragraph aligned around (kept where the store put it), never refused for ``--replace``. The unchanged
file keeps the document as edited; a file changed elsewhere has its change merged; a conflict only where both
changed the same block."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.config import Settings
from logichunk.store import Store
from logichunk.store.ingest import _other_text, chapter_blocks, ingest
from logichunk.store.replace import replace_text
from pg_fixture import backend, make_store, pg_url  # noqa: F401

PARAS = ["# Intro\n\n", "Cats purr.\n\n", "Dogs bark.\n\n", "Birds sing.\n\n", "# Usage\n\n", "Run it.\n\n",
         "Stop it.\n"]
ADDED = "Fish swim.\n\n"
HASH = Settings(embedder="hash:64")


def _text(store: Store, did: str) -> str:
    return "".join(b.content for row in store.source_blocks(did) for b in row)


def _ingested(make_store, tmp_path: Path, paras=PARAS) -> tuple[Store, Path, str]:
    f = tmp_path / "a.md"
    f.write_text("".join(paras), encoding="utf-8")
    store = make_store(settings=HASH)
    ingest(store, [str(f)], rechunk=False)
    return store, f, store.documents()[0][0]


def _added_by_api(store: Store, did: str) -> str:
    """A paragraph added after "Dogs bark." through :func:`replace_text`: the document's text now."""
    text = _text(store, did).replace("Dogs bark.\n\n", "Dogs bark.\n\n" + ADDED)
    assert replace_text(store, did, text).added
    return text


def test_the_unchanged_file_keeps_the_paragraph_added_by_the_api(make_store, tmp_path):
    """It was refused ("--replace" needed); now: kept as edited, nothing written."""
    store, f, did = _ingested(make_store, tmp_path)
    text = _added_by_api(store, did)
    before = [(b.id, b.revision, b.source_hash) for row in store.source_blocks(did) for b in row]
    rep = ingest(store, [str(f)], rechunk=False)
    assert rep.refused == rep.conflicts == rep.updated == rep.added == rep.removed == () and rep.edited == (str(f),)
    assert _text(store, did) == text
    assert [(b.id, b.revision, b.source_hash) for row in store.source_blocks(did) for b in row] == before


def test_a_file_changed_elsewhere_is_merged_around_the_added_paragraph(make_store, tmp_path):
    store, f, did = _ingested(make_store, tmp_path)
    text = _added_by_api(store, did)
    added = next(b.id for b in store.blocks() if b.content == ADDED)
    f.write_text("".join(PARAS).replace("Run it.", "Run it now.").replace("Cats purr.\n\n", "")
                 + "\n\nMore in the file.\n", encoding="utf-8")
    rep = ingest(store, [str(f)], rechunk=False)
    assert rep.refused == rep.conflicts == () and rep.updated == rep.edited == (str(f),)
    assert len(rep.added) == 1 and len(rep.removed) == 1
    assert _text(store, did) == text.replace("Run it.", "Run it now.").replace("Cats purr.\n\n", "") \
        + "\n\nMore in the file.\n"
    assert added in {b.id for b in store.blocks()}
    again = ingest(store, [str(f)], rechunk=False)  # (the same file again: nothing to do)
    assert again.updated == again.added == again.removed == again.conflicts == ()


def test_a_block_both_changed_is_the_only_conflict(make_store, tmp_path):
    store, f, did = _ingested(make_store, tmp_path)
    text = _added_by_api(store, did).replace("Run it.", "Run it, the API's.")
    replace_text(store, did, text)
    f.write_text("".join(PARAS).replace("Run it.", "Run it, the file's.").replace("Cats purr.\n\n", "Cats purr.\n\n"
                                                                                 "Owls hoot.\n\n"), encoding="utf-8")
    rep = ingest(store, [str(f)], rechunk=False)
    run = next(b.id for b in store.blocks() if b.content.startswith("Run it"))
    assert rep.refused == () and len(rep.conflicts) == 1 and run in rep.conflicts[0] and len(rep.added) == 1
    assert _text(store, did) == text.replace("Cats purr.\n\n", "Cats purr.\n\nOwls hoot.\n\n")


def test_add_block_then_a_file_with_a_new_paragraph(make_store, tmp_path):
    store, f, did = _ingested(make_store, tmp_path)
    chapter = store.blocks()[0].chapter_id
    added = store.add_block(chapter, ADDED)
    f.write_text("".join(PARAS).replace("Dogs bark.\n\n", "Dogs bark.\n\nOwls hoot.\n\n"), encoding="utf-8")
    rep = ingest(store, [str(f)], rechunk=False)
    assert rep.refused == rep.conflicts == () and len(rep.added) == 1
    assert [b.content for b in store.blocks(chapter)] == ["# Intro\n\n", "Cats purr.\n\n", "Dogs bark.\n\n",
                                                          "Owls hoot.\n\n", "Birds sing.\n\n", ADDED]
    assert added in {b.id for b in store.blocks(chapter)}


def test_the_refusal_names_each_edited_block_once(make_store, tmp_path):
    """A block added in the store and edited since (no record, a revision past 1) was named twice."""
    store, f, did = _ingested(make_store, tmp_path)
    added = store.add_block(store.blocks()[0].chapter_id, ADDED)
    store.edit_block(added, "Fish swim fast.\n\n")
    said = _other_text(store, f, did)
    assert "1 block(s) edited in the store" in said and f"({added})" in said


WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]


@st.composite
def _case(draw):
    n = draw(st.integers(3, 7))
    base = [f"# Head {k}\n\n" if draw(st.booleans()) and k else f"Line {k} of {WORDS[k % 8]}.\n\n" for k in range(n)]
    at = draw(st.integers(0, n))  # where the API adds its paragraph
    ops = draw(st.lists(st.tuples(st.sampled_from("kcdi"), st.integers(0, 99)), min_size=n, max_size=n))
    return base, at, ops


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_case())
def test_a_paragraph_added_by_the_api_survives_any_file_change(case):
    """Whatever the file does (blocks kept, changed, removed, new ones inserted), the ingest is never refused, the
    API's paragraph is kept, once, and the same file again changes nothing. Where the file holds as many blocks as
    the document and every other block at its place (a paragraph inserted where the API inserted its own: read as
    an older logichunk's unrecorded edit, :func:`_in_place`) it is the one conflict, said; else there is none and
    the document is the file's text with the API's paragraph."""
    base, at, ops = case
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "a.md"
        f.write_text("".join(base) + "End.\n", encoding="utf-8")
        with Store.open(str(Path(d) / "kb.db"), settings=HASH) as store:
            ingest(store, [str(f)], rechunk=False)
            did = store.documents()[0][0]
            api = "Added through the API.\n\n"
            replace_text(store, did, "".join(base[:at]) + api + "".join(base[at:]) + "End.\n")
            new = []
            for p, (op, r) in zip(base, ops, strict=True):
                new += {"k": [p], "c": [p.replace(".\n", f", changed {r}.\n").replace("d ", f"d {r} ")],
                        "d": [], "i": [p, f"New {r} in the file.\n\n"]}[op]
            f.write_text("".join(new) + "End.\n", encoding="utf-8")
            rep = ingest(store, [str(f)], rechunk=False)
            mine = next(b.id for b in store.blocks() if b.content == api)
            now = _text(store, did)
            assert rep.refused == () and now.count(api) == 1
            if rep.conflicts:
                assert len(rep.conflicts) == 1 and mine in rep.conflicts[0]
                blocks = [sum(len(row) for _t, row in chapter_blocks(t)) for t in (now, "".join(new) + "End.\n")]
                assert blocks[0] == blocks[1]  # (paired place by place)
            else:
                assert now.replace(api, "", 1) == "".join(new) + "End.\n"
            again = ingest(store, [str(f)], rechunk=False)
            assert again.updated == again.added == again.removed == () and again.conflicts == rep.conflicts
            assert _text(store, did) == now


def test_a_paragraph_added_at_the_same_place_in_both_is_a_conflict_losing_nothing(make_store, tmp_path):
    """The store and the file each add a paragraph at the end: every other block stays at its place, as when an
    older logichunk's edit stood there, so the two are paired, a conflict said (neither dropped in silence)."""
    store, f, did = _ingested(make_store, tmp_path)
    added = store.add_block(store.chapters(did)[-1][0], "\n\nAdded in the store.\n")
    f.write_text("".join(PARAS) + "\n\nAdded in the file.\n", encoding="utf-8")
    rep = ingest(store, [str(f)], rechunk=False)
    assert rep.refused == () and len(rep.conflicts) == 1 and added in rep.conflicts[0]
    assert "added there" in rep.conflicts[0] and _text(store, did).endswith("Added in the store.\n")

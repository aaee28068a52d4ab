"""A document's whole text replaced in one call (:func:`logichunk.store.replace.replace_text`, ``PUT
/api/projects/{p}/documents/{doc}``): only the blocks where the text changed are written, only their chapters
re-chunked; the stored text is the text sent, exactly; a stale base is refused with nothing written; the text is
written as store edits are, so an ingest of the document's file still tells its own changes from these."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.store import StaleTextError, Store, sha256
from logichunk.store.ingest import chapter_blocks, ingest, ingest_text
from logichunk.store.replace import document_sha256, replace_text
from pg_fixture import backend, make_store, pg_url  # noqa: F401

PARAS = ["# Intro\n\n", "Cats purr.\n\n", "Dogs bark.\n\n", "Birds sing.\n\n", "# Usage\n\n", "Run it.\n\n",
         "Stop it.\n"]
SMALL = Settings(embedder="hash:64", max_parent_size=40, min_parent_size=10, child_min_size=5, child_target_size=12,
                 child_max_size=30)


def _doc(make_store, paras=PARAS) -> tuple[Store, str]:
    store = make_store(settings=SMALL)
    did = ingest_text(store, "t", "".join(paras))
    store.rechunk_dirty()
    return store, did


def _text(store: Store, did: str) -> str:
    return "".join(b.content for row in store.source_blocks(did) for b in row)


def _state(store: Store) -> dict[str, tuple[int, bool]]:
    return {b.id: (b.revision, b.is_dirty) for b in store.blocks()}


def _parents(store: Store, did: str) -> list[tuple[str, str, list[str]]]:
    """The document's chunk tree: (dotted id, text, its children's texts) of each parent, in order."""
    return [(r.dotted_id, r.content, [k.content for k in sorted(store.children_of(r.pk), key=lambda k: k.order)])
            for c, _o, _t in store.chapters(did)
            for r in sorted(store.chunks(level="parent", chapter_id=c), key=lambda r: r.order)]


def _fresh_parents(make_store, text: str) -> list[str]:
    store = make_store(settings=SMALL)
    did = ingest_text(store, "fresh", text)
    store.rechunk_dirty()
    return _parents(store, did)


def _check_tiles(store: Store, did: str, text: str) -> None:
    """The text is the document's; its blocks and chapters are a fresh ingest's; once chunked, each chapter's
    parents tile it and each parent's children tile the parent."""
    assert _text(store, did) == text
    fresh = chapter_blocks(text)
    assert [[b.content for b in row] for row in store.source_blocks(did)] == [row for _t, row in fresh]
    assert [t for _c, _o, t in store.chapters(did)] == [t for t, _row in fresh]
    store.rechunk_dirty()
    for c, _o, _t in store.chapters(did):
        parents = sorted(store.chunks(level="parent", chapter_id=c), key=lambda r: r.order)
        assert "".join(r.content for r in parents) == store.chapter_text(c)
        for p in parents:
            assert "".join(k.content for k in sorted(store.children_of(p.pk), key=lambda r: r.order)) == p.content


def test_the_same_text_again_writes_nothing(make_store):
    store, did = _doc(make_store)
    before, pks = _state(store), {r.pk for r in store.chunks()}
    r = replace_text(store, did, "".join(PARAS), expected_sha256=sha256("".join(PARAS)))
    assert not r.touched and r.sha256 == sha256("".join(PARAS)) == document_sha256(store, did)
    assert _state(store) == before and {r.pk for r in store.chunks()} == pks


def test_a_paragraph_inserted_adds_one_block_and_touches_its_chapter_only(make_store):
    store, did = _doc(make_store)
    ids = [b.id for b in store.blocks()]
    usage = {r.pk for r in store.chunks(chapter_id=store.blocks()[5].chapter_id)}
    new = [*PARAS[:2], "Cows moo.\n\n", *PARAS[2:]]
    r = replace_text(store, did, "".join(new))
    assert r.changed == () and r.removed == () and len(r.added) == 1
    now = [b.id for b in store.blocks()]
    assert now[:2] == ids[:2] and now[3:] == ids[2:] and now[2] == r.added[0]
    assert [b.is_dirty for b in store.blocks()] == [True] * 5 + [False] * 3  # (the first chapter only)
    res = {x.chapter_id: x for x in store.rechunk_dirty()}
    assert len(res) == 1  # one chapter re-chunked; the other kept its chunks, rows and all
    assert {r.pk for r in store.chunks(chapter_id=store.blocks()[6].chapter_id)} == usage
    _check_tiles(store, did, "".join(new))
    assert _parents(store, did) == _fresh_parents(make_store, "".join(new))


def test_a_paragraph_inserted_in_a_long_chapter_keeps_every_other_parent(make_store):
    paras = [PARAS[0], *(f"Paragraph {i} says something about cats.\n\n" for i in range(12)), *PARAS[4:]]
    store, did = _doc(make_store, paras)
    new = [*paras[:7], "Cows moo loudly today.\n\n", *paras[7:]]
    assert len(replace_text(store, did, "".join(new)).added) == 1
    [res] = store.rechunk_dirty()
    assert (res.parents_kept, res.parents_written, res.embedded) == (15, 1, 1)  # (the new paragraph's parent only)
    assert _parents(store, did) == _fresh_parents(make_store, "".join(new))


def test_a_paragraph_split_deleted_and_moved(make_store):
    store, did = _doc(make_store)
    ids = [b.id for b in store.blocks()]
    split = [*PARAS[:2], "Dogs\n\n", "bark.\n\n", *PARAS[3:]]
    r = replace_text(store, did, "".join(split))
    assert len(r.changed) + len(r.added) == 2 and len(r.changed) + len(r.removed) <= 1  # (the one block, in two)
    _check_tiles(store, did, "".join(split))
    kept = [b.id for b in store.blocks()]
    gone = [*split[:2], *split[4:]]
    r = replace_text(store, did, "".join(gone))
    assert r.changed == () and r.added == () and len(r.removed) == 2
    assert [b.id for b in store.blocks()] == [k for k in kept if k not in r.removed]
    _check_tiles(store, did, "".join(gone))
    moved = [PARAS[0], PARAS[3], PARAS[1], *PARAS[4:]]  # (Birds before Cats)
    r = replace_text(store, did, "".join(moved))
    assert len(r.changed) + len(r.added) <= 2 and [b.id for b in store.blocks()][3:] == ids[4:]
    _check_tiles(store, did, "".join(moved))
    assert _parents(store, did) == _fresh_parents(make_store, "".join(moved))


def test_a_heading_added_and_removed_recuts_chapters(make_store):
    store, did = _doc(make_store)
    more = [*PARAS[:2], "# Dogs\n\n", *PARAS[2:]]
    r = replace_text(store, did, "".join(more))
    assert len(r.added) == 1 and [t for _c, _o, t in store.chapters(did)] == ["Intro", "Dogs", "Usage"]
    _check_tiles(store, did, "".join(more))
    fewer = [*PARAS[:4], *PARAS[5:]]
    replace_text(store, did, "".join(fewer))
    assert [t for _c, _o, t in store.chapters(did)] == ["Intro"]
    _check_tiles(store, did, "".join(fewer))
    assert _parents(store, did) == _fresh_parents(make_store, "".join(fewer))


def test_crlf_emoji_and_cjk_are_stored_exactly(make_store):
    store, did = _doc(make_store)
    text = "# 第一章\r\n\r\n桃花源记。晋太元中，武陵人捕鱼为业。\r\n\r\n🐱🐶 emoji\u200d here\r\n\r\n\r\n第二章 结尾\r\nlast"
    r = replace_text(store, did, text)
    assert r.chars == len(text) and r.sha256 == sha256(text)
    _check_tiles(store, did, text)


def test_a_stale_base_is_refused_with_nothing_written(make_store):
    store, did = _doc(make_store)
    base = document_sha256(store, did)
    store.edit_block(store.blocks()[1].id, "Cats nap.\n\n")  # (someone else's edit first)
    before, now = _state(store), _text(store, did)
    with pytest.raises(StaleTextError, match="not " + base) as e:
        replace_text(store, did, "".join([*PARAS[:2], "Cows moo.\n\n", *PARAS[2:]]), expected_sha256=base)
    assert e.value.sha256 == sha256(now) and "\n" not in str(e.value)
    assert _state(store) == before and _text(store, did) == now
    r = replace_text(store, did, now.replace("nap", "purr"), expected_sha256=e.value.sha256)  # (rebased: taken)
    assert len(r.changed) == 1 and _text(store, did) == "".join(PARAS)


def test_an_ingest_of_the_file_still_tells_its_own_changes(make_store, tmp_path):
    """The API's text is a store edit, not the file's text: the file's next change of another block is taken,
    the API's edit kept (said as a store edit), never overwritten by the file's older text."""
    f = tmp_path / "a.md"
    f.write_text("".join(PARAS), encoding="utf-8")
    store = make_store(settings=SMALL)
    ingest(store, [str(f)])
    did = store.documents()[0][0]
    replace_text(store, did, "".join(PARAS).replace("Cats purr.", "Cats purr loudly."))
    f.write_text("".join(PARAS).replace("Run it.", "Run it now."), encoding="utf-8")
    rep = ingest(store, [str(f)])
    assert not rep.failed and rep.updated == rep.edited == (str(f),) and rep.conflicts == ()
    assert _text(store, did) == "".join(PARAS).replace("Cats purr.", "Cats purr loudly.").replace("Run it.", "Run it now.")


def test_bad_values_are_one_line_errors(make_store):
    store, did = _doc(make_store)
    from logichunk.store import StoreError

    for text, what in (("", "empty"), (123, "string"), ("a\x00b", "NUL")):
        with pytest.raises(InputError, match=what):
            replace_text(store, did, text)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="unknown document"):
        replace_text(store, "nope", "x")
    assert _text(store, did) == "".join(PARAS)


PIECES = st.sampled_from(["# A\n\n", "# B\r\n\r\n", "Cats.\n\n", "Dogs 🐶.\n\n", "桃花。\n\n", "x", "\n", "\r\n",
                          "Long line of words here.\n\n", "第二章 尾\n"])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(PIECES, min_size=1, max_size=8), min_size=1, max_size=4))
def test_random_edit_sequences_store_the_last_text(tmp_path_factory, edits):
    store = Store.open(str(tmp_path_factory.mktemp("h") / "h.db"), settings=SMALL)
    text = "".join(PARAS)
    did = ingest_text(store, "h", text)
    for pieces in edits:
        new = "".join(pieces)
        if not new.strip():  # (only line breaks: refused as adding it is, the stored text kept)
            with pytest.raises(InputError, match="only whitespace"):
                replace_text(store, did, new)
            assert _text(store, did) == text
            continue
        text = new
        r = replace_text(store, did, text)
        assert r.sha256 == sha256(text) and _text(store, did) == text
    _check_tiles(store, did, text)
    fresh = Store.open(str(tmp_path_factory.mktemp("f") / "f.db"), settings=SMALL)
    fid = ingest_text(fresh, "f", text)
    fresh.rechunk_dirty()
    assert _parents(store, did) == _parents(fresh, fid)  # (the design's promise: a fresh store's chunks)
    store.close()
    fresh.close()


def test_the_cli_edits_a_document_whole(tmp_path, capsys):
    import json

    from logichunk.cli import main

    f, db = tmp_path / "a.md", str(tmp_path / "s.db")
    f.write_text("".join(PARAS), encoding="utf-8")
    assert main(["ingest", str(f), "--db", db, "--embedder", "hash:64"]) == 0
    store = Store.open(db, settings=Settings(embedder="hash:64"))
    did, ids = store.documents()[0][0], [b.id for b in store.blocks()]
    store.close()
    g = tmp_path / "b.md"
    g.write_text("".join([*PARAS[:2], "Cows moo.\n\n", *PARAS[2:]]), encoding="utf-8")
    capsys.readouterr()
    assert main(["edit", "--db", db, "--embedder", "hash:64", "--document", did, "--file", str(g), "--format", "jsonl",
                 "--expected-sha256", sha256("".join(PARAS))]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "rechunked" and len(out["added"]) == 1 and out["changed"] == out["removed"] == []
    assert out["chapters_rechunked"] == 1 and out["sha256"] == sha256(g.read_text(encoding="utf-8"))
    assert main(["edit", "--db", db, "--embedder", "hash:64", "--document", did, "--text", "x",
                 "--expected-sha256", sha256("".join(PARAS))]) == 2
    assert "not " + sha256("".join(PARAS)) in capsys.readouterr().err
    store = Store.open(db, settings=Settings(embedder="hash:64"))
    assert [b.id for b in store.blocks()] == [*ids[:2], out["added"][0], *ids[2:]] and not store.blocks(dirty=True)
    store.close()

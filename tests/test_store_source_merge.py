"""A file ingested again after it changed, into a document edited in the store (defect F6): each block tells a
change of the file from an edit made in the store by the text the file gave it at the last ingest. A block
edited only in the store keeps the edit, one changed only in the file takes the file's text, one changed in
both keeps the store's text and is said as a conflict (file, document, block; exit status 1) — before, it was
"kept as edited" and the file's change dropped in silence. An older store (no record of those texts) is
upgraded where it can be written and still read where it cannot."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.cli import main
from logichunk.config import Settings
from logichunk.retrieve import retrieve
from logichunk.store import Store, StoreError
from logichunk.store.ingest import ingest
from logichunk.store.schema import LATEST
from pg_fixture import backend, fresh_pg_database, make_store, pg_url  # noqa: F401

HASH = ["--embedder", "hash:64"]
PARAS = ["# Notes\n\n", "Apples grow in orchards.\n\n", "Pears ripen in autumn.\n\n", "Plums are small.\n"]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def texts(store: Store) -> list[str]:
    return [b.content for b in store.blocks()]


def write(path: Path, paras: list[str]) -> None:
    path.write_text("".join(paras), encoding="utf-8")


# ----------------------------------------------------------------------------- the three cases, both backends


def test_a_block_changed_in_the_file_and_in_the_store_is_a_conflict_never_dropped(make_store, tmp_path):
    f = tmp_path / "notes.md"
    write(f, PARAS)
    store = make_store(settings=Settings(embedder="hash:64"))
    ingest(store, [str(f)])
    doc = store.documents()[0][0]
    apples, pears = store.blocks()[1].id, store.blocks()[2].id
    store.edit_block(apples, "Apples grow in orchards, EDITED IN THE STORE.\n\n")
    write(f, [PARAS[0], "Apples grow in orchards, CHANGED IN THE FILE.\n\n", *PARAS[2:]])
    rep = ingest(store, [str(f)])
    assert texts(store)[1] == "Apples grow in orchards, EDITED IN THE STORE.\n\n"  # the store's edit is kept
    assert len(rep.conflicts) == 1 and rep.failed and rep.edited == () and rep.updated == ()
    line = rep.conflicts[0]
    assert str(f) in line and f"document {doc}" in line and f"block {apples}" in line and "kept" in line
    rep = ingest(store, [str(f)])  # said again on every ingest until it is settled
    assert len(rep.conflicts) == 1 and texts(store)[1].endswith("EDITED IN THE STORE.\n\n")

    # changed only in the file: that block takes the file's text; the store's edit of another stays
    write(f, [PARAS[0], "Apples grow in orchards, EDITED IN THE STORE.\n\n", "Pears ripen LATE.\n\n", PARAS[3]])
    rep = ingest(store, [str(f)])
    assert rep.conflicts == () and not rep.failed and rep.updated == (str(f),)
    assert texts(store) == [PARAS[0], "Apples grow in orchards, EDITED IN THE STORE.\n\n", "Pears ripen LATE.\n\n",
                            PARAS[3]]
    assert [b.id for b in store.blocks()][2] == pears and store.blocks(dirty=True) == []  # in place, re-chunked
    hits = retrieve(store, "Pears ripen LATE", mode="hybrid", top_k=1)
    assert "LATE" in hits[0].chunk.meta["text"]

    # the file took the store's text above (the two agree now, recorded): its next change of that block is the
    # file's alone, taken (beside another edit of the store's, kept), not a conflict with an edit it holds already
    store.edit_block(store.blocks()[3].id, "Plums, edited in the store.\n")
    write(f, [PARAS[0], "Apples, as the file has them now.\n\n", "Pears ripen LATE.\n\n", PARAS[3]])
    rep = ingest(store, [str(f)])
    assert rep.conflicts == () and rep.updated == (str(f),) and rep.edited == (str(f),)
    assert texts(store) == [PARAS[0], "Apples, as the file has them now.\n\n", "Pears ripen LATE.\n\n",
                            "Plums, edited in the store.\n"]


def test_a_file_that_takes_the_store_s_edit_settles_it(make_store, tmp_path):
    """The store's edit copied into the file (the file is the document's text again: unchanged): the block's
    text is the file's now, so the file's next change of it is taken, not said as a conflict."""
    f = tmp_path / "notes.md"
    write(f, PARAS)
    store = make_store(settings=Settings(embedder="hash:64"))
    ingest(store, [str(f)])
    store.edit_block(store.blocks()[1].id, "Apples, the store's.\n\n")
    write(f, [PARAS[0], "Apples, the store's.\n\n", *PARAS[2:]])
    assert ingest(store, [str(f)]).unchanged == (str(f),)
    store.edit_block(store.blocks()[3].id, "Plums, the store's.\n")
    write(f, [PARAS[0], "Apples, the file's again.\n\n", *PARAS[2:]])
    rep = ingest(store, [str(f)])
    assert rep.conflicts == () and rep.updated == rep.edited == (str(f),)
    assert texts(store) == [PARAS[0], "Apples, the file's again.\n\n", PARAS[2], "Plums, the store's.\n"]


def test_an_edit_only_in_the_store_is_kept_as_before(make_store, tmp_path):
    f = tmp_path / "notes.md"
    write(f, PARAS)
    store = make_store(settings=Settings(embedder="hash:64"))
    ingest(store, [str(f)])
    store.edit_block(store.blocks()[3].id, "Plums are small and EDITED.\n")
    rep = ingest(store, [str(f)])
    assert rep.edited == (str(f),) and rep.conflicts == () and rep.updated == () and not rep.failed
    assert texts(store)[3] == "Plums are small and EDITED.\n"


def test_a_document_never_edited_in_the_store_is_updated_in_place(tmp_path):
    """No edit to keep: the changed file updates its document in place (it was refused, ``--replace`` needed,
    which made a new document): the same document and block ids, the changed block the file's."""
    f = tmp_path / "notes.md"
    write(f, PARAS)
    with Store.open(str(tmp_path / "kb.db"), settings=Settings(embedder="hash:64")) as store:
        ingest(store, [str(f)])
        docs, ids = store.documents(), [b.id for b in store.blocks()]
        write(f, [PARAS[0], "Apples, changed.\n\n", *PARAS[2:]])
        rep = ingest(store, [str(f)])
        assert rep.updated == (str(f),) and not rep.failed and rep.replaced == ()
        assert texts(store) == [PARAS[0], "Apples, changed.\n\n", *PARAS[2:]]
        assert store.documents() == docs and [b.id for b in store.blocks()] == ids


def test_the_cli_says_each_conflict_in_one_line_and_exits_1(tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    write(kb / "a.md", PARAS)
    db = str(tmp_path / "kb.db")
    assert cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--quiet")[0] == 0
    _, out, _ = cli(capsys, "blocks", "--db", db, "--format", "jsonl")
    block = json.loads(out.splitlines()[2])["id"]
    assert cli(capsys, "edit", "--db", db, "--block", block, "--text", "Pears, the store's.\n\n", *HASH)[0] == 0
    write(kb / "a.md", [*PARAS[:2], "Pears, the file's.\n\n", PARAS[3]])
    code, out, err = cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--quiet")  # said even when quiet
    said = [line for line in err.splitlines() if line.startswith("conflict: ")]
    assert code == 1 and len(said) == 1 and block in said[0] and str(kb / "a.md") in said[0]
    assert "kept as edited" not in err and "Traceback" not in err and "changed in the file and in the store" in out
    code, out, _ = cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--format", "jsonl")
    rep = json.loads(out)
    assert code == 1 and len(rep["conflicts"]) == 1 and block in rep["conflicts"][0] and rep["edited"] == []


# ----------------------------------------------------------------------------- chapter titles, settled conflicts


def titles(store: Store) -> list[str | None]:
    did = store.documents()[0][0]
    return [t for _c, _o, t in store.chapters(did)]


SECTIONS = ["# Intro\n\n", "Cats purr.\n\n", "Dogs bark.\n\n", "# Usage\n\n", "Run it.\n\n", "Stop it.\n"]


def test_a_heading_renamed_in_the_file_renames_its_chapter(make_store, tmp_path):
    """The heading block took the file's text; its chapter's title follows (before: the block said
    "Introduction", the chapter "Intro", in ``documents``' chapters, ``document_text`` and hits)."""
    f = tmp_path / "notes.md"
    write(f, SECTIONS)
    store = make_store(settings=Settings(embedder="hash:64"))
    ingest(store, [str(f)])
    store.edit_block(store.blocks()[5].id, "Stop it, said the store.\n")
    write(f, ["# Introduction\n\n", *SECTIONS[1:]])
    rep = ingest(store, [str(f)])
    assert rep.updated == rep.edited == (str(f),) and not rep.failed
    assert texts(store)[0] == "# Introduction\n\n" and titles(store) == ["Introduction", "Usage"]
    from logichunk.store.document_layout import DocLayout

    assert [t for _c, _r, t, _a, _b in DocLayout.of(store, store.documents()[0][0]).chapters] == ["Introduction",
                                                                                                  "Usage"]
    # a heading edited in the store, the edit copied into the file (settled): the title follows it too
    store.edit_block(store.blocks()[3].id, "# How to use it\n\n")
    write(f, ["# Introduction\n\n", *SECTIONS[1:3], "# How to use it\n\n", SECTIONS[4], "Stop it, said the store.\n"])
    assert ingest(store, [str(f)]).unchanged == (str(f),)
    assert titles(store) == ["Introduction", "How to use it"]


def test_a_store_edit_that_holds_a_heading_settles_without_retitling(tmp_path):
    """An edit in the store that put a heading inside a block, copied into the file: the store's chapters no longer
    line up with a fresh ingest of that text, so no title is guessed; the settle is recorded all the same. The file
    then cutting that block as a fresh ingest does is merged, the chapters re-derived (before: refused)."""
    f = tmp_path / "notes.md"
    write(f, SECTIONS)
    with Store.open(str(tmp_path / "kb.db"), settings=Settings(embedder="hash:64")) as store:
        ingest(store, [str(f)], rechunk=False)
        store.edit_block(store.blocks()[1].id, "Cats.\n\n# Purring\n\nThey purr.\n\n")
        write(f, texts(store))
        assert ingest(store, [str(f)], rechunk=False).unchanged == (str(f),)
        assert titles(store) == ["Intro", "Usage"] and len(store.blocks()) == len(SECTIONS)
        # the file then cut that block as a fresh ingest does (a heading of its own): merged, chapters re-derived
        write(f, [*texts(store)[:4], "Run it later.\n\n", SECTIONS[5]])
        rep = ingest(store, [str(f)], rechunk=False)
        assert not rep.failed and "".join(texts(store)) == f.read_text(encoding="utf-8")
        assert titles(store) == ["Intro", "Purring", "Usage"]


def _conflict(store: Store, f: Path) -> str:
    """``f`` ingested, its second block then changed in the store and in the file: the conflict's block id."""
    write(f, PARAS)
    ingest(store, [str(f)])
    block = store.blocks()[1].id
    store.edit_block(block, "Apples, the store's.\n\n")
    write(f, [PARAS[0], "Apples, the file's.\n\n", *PARAS[2:]])
    assert len(ingest(store, [str(f)]).conflicts) == 1
    return block


@pytest.mark.parametrize("settle", ["file", "store"])
def test_once_a_conflict_is_settled_the_file_s_next_change_is_merged(make_store, tmp_path, settle):
    """Settled as the conflict's line says (the file given the store's text, or the block the file's), no edit of
    the store's left: the file's next change is merged, not refused as if ``--replace`` were needed (before: the
    settle recorded every block as the file's, and a document with no edit left was taken for one never edited)."""
    f = tmp_path / "notes.md"
    store = make_store(settings=Settings(embedder="hash:64"))
    block = _conflict(store, f)
    if settle == "file":
        write(f, [PARAS[0], "Apples, the store's.\n\n", *PARAS[2:]])
    else:
        store.edit_block(block, "Apples, the file's.\n\n")
    assert ingest(store, [str(f)]).unchanged == (str(f),)  # the two the same: settled, nothing said
    now = texts(store)
    write(f, [*now[:2], "Pears, changed later in the file.\n\n", now[3]])
    rep = ingest(store, [str(f)])
    assert rep.updated == (str(f),) and rep.conflicts == () and rep.edited == () and not rep.failed
    assert texts(store) == [*now[:2], "Pears, changed later in the file.\n\n", now[3]]
    assert store.blocks()[1].id == block and store.blocks(dirty=True) == []


def test_a_settled_conflict_then_a_file_change_from_the_cli(tmp_path, capsys):
    """As a user goes: the conflict's line, the block edited as it says, ingest (unchanged), the file changed."""
    f = tmp_path / "a.md"
    write(f, PARAS)
    db = str(tmp_path / "kb.db")
    assert cli(capsys, "ingest", str(f), "--db", db, *HASH, "--quiet")[0] == 0
    block = json.loads(cli(capsys, "blocks", "--db", db, "--format", "jsonl")[1].splitlines()[1])["id"]
    assert cli(capsys, "edit", "--db", db, "--block", block, "--text", "Apples, the store's.\n\n", *HASH)[0] == 0
    write(f, [PARAS[0], "Apples, the file's.\n\n", *PARAS[2:]])
    code, _out, err = cli(capsys, "ingest", str(f), "--db", db, *HASH)
    assert code == 1 and f"logichunk edit --block {block}" in err
    assert cli(capsys, "edit", "--db", db, "--block", block, "--text", "Apples, the file's.\n\n", *HASH)[0] == 0
    assert cli(capsys, "ingest", str(f), "--db", db, *HASH)[0] == 0
    write(f, [PARAS[0], "Apples, the file's.\n\n", "Pears, later.\n\n", PARAS[3]])
    code, _out, err = cli(capsys, "ingest", str(f), "--db", db, *HASH)
    assert code == 0 and "updated from the file" in err and "--replace" not in err


_HEADS = ["# Intro\n\n", "Cats purr.\n\n", "Dogs bark.\n\n", "# Usage\n\n", "Run it.\n\n", "Stop it.\n\n",
          "# Notes\n\n", "None yet.\n"]


def _variant(i: int, tag: str) -> str:
    """Block ``i`` of :data:`_HEADS` changed by ``tag``, a heading staying a heading."""
    base = _HEADS[i]
    return f"# {base[2:-2]} {tag}\n\n" if base.startswith("# ") else f"{base.rstrip()} {tag}.{base[len(base.rstrip()):]}"


@settings(max_examples=40, deadline=None)
@given(store_edits=st.sets(st.integers(0, len(_HEADS) - 1), max_size=3),
       rounds=st.lists(st.sets(st.integers(0, len(_HEADS) - 1), min_size=1), min_size=1, max_size=3))
def test_a_re_ingest_is_a_fresh_ingest_where_the_store_edited_nothing(store_edits, rounds):
    """For file edits (headings renamed, paragraphs changed) touching no block edited in the store, round after
    round (the store's edits copied into the file after the first: settled): the document's blocks are the new
    file's, but the store's edits, and its chapter titles those of a fresh ingest of that text (the file's, once
    settled)."""
    from logichunk.store.ingest import chapter_blocks

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / f"doc{next(_files)}.md"
        write(f, _HEADS)
        with Store.open(":memory:", settings=Settings(embedder="hash:16")) as store:
            ingest(store, [str(f)], rechunk=False)
            ids = [b.id for b in store.blocks()]
            mine = {i: _variant(i, "store") for i in store_edits or {1}}
            for i, text in mine.items():
                store.edit_block(ids[i], text)
            for k, changed in enumerate(rounds):
                theirs = [_variant(i, f"file{k}") if i in changed and i not in mine else
                          (mine[i] if k and i in mine else _HEADS[i]) for i in range(len(_HEADS))]
                write(f, theirs)
                rep = ingest(store, [str(f)], rechunk=False)
                want = [mine.get(i, t) for i, t in enumerate(theirs)]
                assert not rep.failed and texts(store) == want and [b.id for b in store.blocks()] == ids
                assert titles(store) == [t for t, _b in chapter_blocks("".join(want))]
                if k == 0:  # settle: the store's edits copied into the file
                    write(f, want)
                    assert ingest(store, [str(f)], rechunk=False).unchanged == (str(f),)


# ----------------------------------------------------------------------------- the invariant


N = 4
_files = itertools.count()


@settings(max_examples=40, deadline=None)
@given(store_edits=st.lists(st.sampled_from(["", "store A", "store B"]), min_size=N, max_size=N),
       file_edits=st.lists(st.sampled_from(["", "store A", "file B"]), min_size=N, max_size=N))
def test_no_text_of_either_side_is_lost_in_silence(store_edits, file_edits):
    """Whatever blocks the store and the file changed: a block changed on one side only ends with that side's
    text; one changed on both to the same text has it, no conflict; one changed on both to different texts
    keeps the store's and its id is in exactly one conflict line. So every text of the file is in the store
    or said, and every edit of the store is still there."""
    base = [f"Paragraph {i} as ingested.\n\n" for i in range(N)]
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / f"doc{next(_files)}.txt"
        write(f, base)
        with Store.open(":memory:", settings=Settings(embedder="hash:16")) as store:
            ingest(store, [str(f)], rechunk=False)
            ids = [b.id for b in store.blocks()]
            mine = [f"Paragraph {i}, {e}.\n\n" if e else base[i] for i, e in enumerate(store_edits)]
            theirs = [f"Paragraph {i}, {e}.\n\n" if e else base[i] for i, e in enumerate(file_edits)]
            for bid, text, e in zip(ids, mine, store_edits, strict=True):
                if e:
                    store.edit_block(bid, text)
            write(f, theirs)
            rep = ingest(store, [str(f)], rechunk=False)  # (never refused: a document never edited is updated)
            now = texts(store)
            for i, bid in enumerate(ids):
                said = [c for c in rep.conflicts if f"block {bid} " in c]
                if mine[i] == theirs[i] or theirs[i] == base[i]:
                    assert now[i] == mine[i] and not said
                elif mine[i] == base[i]:
                    assert now[i] == theirs[i] and not said
                else:
                    assert now[i] == mine[i] and len(said) == 1
            assert [b.id for b in store.blocks()] == ids


# ----------------------------------------------------------------------------- older stores


def _older_store(url: str, f: Path) -> tuple[str, str]:
    """A store as logichunk wrote it before it recorded its blocks' texts at ingest (no ``source_hash``), holding
    ``f`` ingested with its third block edited in the store: (document id, the edited block's id)."""
    with Store.open(url, settings=Settings(embedder="hash:64")) as s:
        ingest(s, [str(f)])
        did, edited = s.documents()[0][0], s.blocks()[2].id
        s.edit_block(edited, "Pears, edited in the older store.\n\n")
        s.rechunk_dirty()
        with s.tx():
            s._x("ALTER TABLE blocks DROP COLUMN source_hash")
        assert "source_hash" not in s._columns("blocks")
    return did, edited


def test_an_older_store_is_upgraded_and_its_unrecorded_edits_are_conflicts(backend, request, tmp_path):
    url = fresh_pg_database(request.getfixturevalue("pg_url")) if backend == "postgres" else str(tmp_path / "old.db")
    f = tmp_path / "notes.md"
    write(f, PARAS)
    did, edited = _older_store(url, f)
    write(f, [PARAS[0], "Apples, changed in the file.\n\n", "Pears, changed in the file.\n\n", PARAS[3]])
    with Store.open(url, settings=Settings(embedder="hash:64")) as s:
        assert "source_hash" in s._columns("blocks") and s.schema_version() == LATEST  # added, no version moved
        rep = ingest(s, [str(f)])
        # the block never edited (its text at ingest known from its chunked hash) takes the file's; the edited
        # one has no record of what the file gave it: a conflict, the store's edit kept
        assert texts(s) == [PARAS[0], "Apples, changed in the file.\n\n", "Pears, edited in the older store.\n\n",
                            PARAS[3]]
        assert rep.updated == (str(f),) and len(rep.conflicts) == 1
        assert f"block {edited} of document {did}" in rep.conflicts[0] and "not recorded" in rep.conflicts[0]
        assert len(retrieve(s, "Apples changed", mode="hybrid", top_k=1)) == 1


def test_an_older_store_that_may_not_be_written_is_still_read(tmp_path, monkeypatch):
    import logichunk.store.sqlite as sq

    f = tmp_path / "notes.md"
    write(f, PARAS)
    db = str(tmp_path / "old.db")
    _older_store(db, f)
    monkeypatch.setattr(sq, "_writable", lambda path: False)
    with Store.open(db, settings=Settings(embedder="hash:64"), create=False) as s:
        assert s.read_only and "source_hash" not in s._columns("blocks")
        assert len(retrieve(s, "Plums", mode="hybrid", top_k=1)) == 1 and len(s.blocks()) == 4
        with pytest.raises(StoreError, match="read-only here"):
            s.add_document("new", [(None, ["text\n"])])
        write(f, [*PARAS[:2], "Pears, edited in the older store.\n\n", PARAS[3]])
        assert ingest(s, [str(f)]).unchanged == (str(f),)  # the file as the store has it: read, nothing written
        write(f, [PARAS[0], "Apples, changed in the file.\n\n", "Pears, edited in the older store.\n\n", PARAS[3]])
        rep = ingest(s, [str(f)])  # no record of the texts here: every block the file changed is a conflict, said
        assert len(rep.conflicts) == 1 and "not recorded" in rep.conflicts[0] and rep.updated == ()

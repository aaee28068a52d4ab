"""A folder kept in sync holds links to files outside it: the store keeps each file's real path (its source)
and the path the ingest reached it by, so ``--prune`` removes the document of a link once it is deleted (by the
real path alone, outside the folder, it was never pruned); an older store gains that column and works on."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import os
from pathlib import Path

from logichunk.config import Settings
from logichunk.retrieve import retrieve
from logichunk.store import Store
from logichunk.store.ingest import ingest
from logichunk.store.schema import LATEST
from pg_fixture import backend, fresh_pg_database, make_store, pg_url  # noqa: F401

HASH = Settings(embedder="hash:64")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def linked_folder(tmp: Path) -> tuple[Path, Path]:
    """``kb`` (the folder synced) holding a.md, a link l.md to a file outside it and a link sub to a folder
    outside it; ``out`` holding what they lead to: (kb, out)."""
    kb, out = tmp / "kb", tmp / "out"
    write(kb / "a.md", "# Apples\n\nApples grow in orchards.\n")
    write(out / "x.md", "# Xylophones\n\nXylophones ring.\n")
    write(out / "z.md", "# Zithers\n\nZithers hum.\n")
    write(out / "dir" / "y.md", "# Yaks\n\nYaks graze high.\n")
    (kb / "l.md").symlink_to(out / "x.md")
    (kb / "sub").symlink_to(out / "dir", target_is_directory=True)
    return kb, out


def sources(store: Store) -> list[str]:
    return sorted(Path(s).name for _d, _t, s in store.documents())


def test_a_link_to_a_file_outside_the_folder_is_pruned_once_deleted(make_store, tmp_path):
    kb, out = linked_folder(tmp_path)
    store = make_store(settings=HASH)
    rep = ingest(store, [str(kb)])
    assert rep.documents == 3 and sources(store) == ["a.md", "x.md", "y.md"]
    assert sorted(store.reached_paths().values()) == [(str(kb / "a.md"),), (str(kb / "l.md"),), (str(kb / "sub" / "y.md"),)]
    (kb / "l.md").unlink()
    (kb / "sub").unlink()
    assert ingest(store, [str(kb)]).pruned == () and len(store.documents()) == 3  # no --prune: kept
    rep = ingest(store, [str(kb)], prune=True)
    assert rep.pruned == (str(kb / "l.md"), str(kb / "sub" / "y.md")) and rep.emptied == ()  # said by the link
    assert sources(store) == ["a.md"] and rep.unchanged == (str(kb / "a.md"),)
    assert (out / "x.md").exists() and (out / "dir" / "y.md").exists()  # the files themselves untouched
    assert not any("Xylo" in c.content for c in store.chunks())  # nothing of it left to find


def test_a_link_that_leads_elsewhere_now_or_nowhere(make_store, tmp_path):
    """A link pointed at another file: that file is stored, the one it led to pruned (said by its real path: the
    link is there). A link whose target was deleted: pruned as a deleted file is."""
    kb, out = linked_folder(tmp_path)
    store = make_store(settings=HASH)
    ingest(store, [str(kb)])
    (kb / "l.md").unlink()
    (kb / "l.md").symlink_to(out / "z.md")
    (out / "dir" / "y.md").unlink()
    rep = ingest(store, [str(kb)], prune=True)
    assert rep.documents == 1 and sorted(rep.pruned) == sorted([str(out / "x.md"), str(kb / "sub" / "y.md")])
    assert sources(store) == ["a.md", "z.md"]
    assert ingest(store, [str(kb)], prune=True).pruned == ()  # in step: the next prune removes nothing


def test_a_file_reached_through_a_link_and_its_own_path_is_kept_while_either_is_there(make_store, tmp_path):
    """Reached first through a link, then by its own path in another folder synced: the path recorded follows,
    and deleting the link then prunes nothing."""
    kb, out = linked_folder(tmp_path)
    store = make_store(settings=HASH)
    ingest(store, [str(kb)])
    assert ingest(store, [str(out)]).unchanged == (str(out / "x.md"), str(out / "dir" / "y.md"))
    (kb / "l.md").unlink()
    rep = ingest(store, [str(kb)], prune=True)
    assert rep.pruned == () and sources(store) == ["a.md", "x.md", "y.md", "z.md"]


def test_emptied_files_are_carried_by_the_prune_as_emptied(make_store, tmp_path):
    """``Pruned`` says which of its documents went for an empty file (a link's too), so no report re-derives it."""
    kb, out = linked_folder(tmp_path)
    store = make_store(settings=HASH)
    ingest(store, [str(kb)])
    write(out / "x.md", "\n")
    write(kb / "a.md", "")
    (kb / "sub").unlink()
    rep = ingest(store, [str(kb)], prune=True)
    assert sorted(rep.pruned) == sorted([str(kb / "a.md"), str(kb / "l.md"), str(kb / "sub" / "y.md")])
    assert sorted(rep.emptied) == sorted([str(kb / "a.md"), str(kb / "l.md")]) and store.documents() == []


def _older_store(url: str, kb: Path) -> None:
    """A store as logichunk wrote it before it recorded the paths files were reached by: ``kb`` ingested, the
    ``reached_by`` column dropped."""
    with Store.open(url, settings=HASH) as s:
        ingest(s, [str(kb)])
        with s.tx():
            s._x("ALTER TABLE documents DROP COLUMN reached_by")
        assert "reached_by" not in s._columns("documents")


def test_an_older_store_gains_the_column_and_records_the_paths_on_the_next_ingest(backend, request, tmp_path):
    url = fresh_pg_database(request.getfixturevalue("pg_url")) if backend == "postgres" else str(tmp_path / "old.db")
    kb, _out = linked_folder(tmp_path)
    _older_store(url, kb)
    with Store.open(url, settings=HASH) as s:
        assert "reached_by" in s._columns("documents") and s.schema_version() == LATEST  # added, no version moved
        assert s.reached_paths() == {} and len(s.documents()) == 3  # not known yet
        rep = ingest(s, [str(kb)])
        assert len(rep.unchanged) == 3 and rep.documents == 0 and len(s.reached_paths()) == 3
        (kb / "l.md").unlink()
        assert ingest(s, [str(kb)], prune=True).pruned == (str(kb / "l.md"),)


def test_an_older_store_that_may_not_be_written_is_still_read_and_ingested(tmp_path, monkeypatch):
    import logichunk.store.sqlite as sq

    kb, _out = linked_folder(tmp_path)
    db = str(tmp_path / "old.db")
    _older_store(db, kb)
    monkeypatch.setattr(sq, "_writable", lambda path: False)
    with Store.open(db, settings=HASH, create=False) as s:
        assert s.read_only and "reached_by" not in s._columns("documents") and s.reached_paths() == {}
        assert len(ingest(s, [str(kb)]).unchanged) == 3  # read, nothing to write
        assert len(retrieve(s, "Yaks graze", mode="hybrid", top_k=1)) == 1


def test_a_link_inside_the_folder_to_a_file_inside_it_prunes_by_the_file(make_store, tmp_path):
    """A link to a file of the folder itself: one document (the file's), kept while the file is there."""
    kb = tmp_path / "kb"
    write(kb / "notes" / "n.md", "# Notes\n\nNotes on nettles.\n")
    os.symlink(kb / "notes" / "n.md", kb / "alias.md")
    store = make_store(settings=HASH)
    rep = ingest(store, [str(kb)])
    assert rep.documents == 1 and len(rep.duplicates) == 1
    (kb / "alias.md").unlink()
    assert ingest(store, [str(kb)], prune=True).pruned == () and sources(store) == ["n.md"]
    (kb / "notes" / "n.md").unlink()
    assert ingest(store, [str(kb)], prune=True).pruned == (str(kb / "notes" / "n.md"),)



def test_a_file_moved_or_renamed_keeps_its_document_and_its_store_edits(make_store, tmp_path):
    """A renamed file was stored anew and ``--prune`` removed its old document, the edits made in the store with
    it (said only as a file gone): its document follows the file now, id, chunks and edits kept. A file with
    other text, or a copy whose original is still there, is another document."""
    kb = tmp_path / "kb"
    write(kb / "a.md", "# Apples\n\nApples grow in orchards.\n\nPears too.\n")
    write(kb / "p.txt", "Plain plums.\n")
    write(kb / "q.txt", "Quiet quinces.\n")
    store = make_store(settings=HASH)
    ingest(store, [str(kb)])
    ids = {Path(s).name: d for d, _t, s in store.documents()}
    edited = store.source_blocks(ids["a.md"])[0][1].id
    store.edit_block(edited, "Apples grow in orchards. An edit made in the store.\n\n")
    store.rechunk_dirty()
    (kb / "a.md").rename(kb / "apples.md")
    write(kb / "sub" / "p.txt", "Plain plums.\n")
    (kb / "p.txt").unlink()
    write(kb / "q2.txt", "Quiet quinces, and more.\n")  # q.txt renamed and changed: not the same file by its text
    (kb / "q.txt").unlink()
    write(kb / "copy.md", "# Apples\n\nApples grow in orchards.\n\nPears too.\n")  # a.md's text, a.md gone: taken once
    rep = ingest(store, [str(kb)], prune=True)
    assert sorted(rep.moved) == [(str(kb / "a.md"), str(kb / "apples.md")), (str(kb / "p.txt"), str(kb / "sub" / "p.txt"))]
    assert rep.edited == (str(kb / "apples.md"),) and rep.pruned == (str(kb / "q.txt"),) and rep.documents == 2
    docs = {d: (t, s) for d, t, s in store.documents()}
    assert docs[ids["a.md"]] == ("apples", str(kb / "apples.md")) and docs[ids["p.txt"]] == ("p", str(kb / "sub" / "p.txt"))
    assert store.get_block(edited).content == "Apples grow in orchards. An edit made in the store.\n\n"
    assert sorted(t for t, _s in docs.values()) == ["apples", "copy", "p", "q2"]
    rep = ingest(store, [str(kb)], prune=True)  # in step: nothing moves again
    assert rep.moved == () and rep.pruned == () and rep.documents == 0


def test_the_cli_says_a_move_and_a_prune_in_one_line_each(tmp_path, monkeypatch, capsys):
    from logichunk.cli import main

    kb = tmp_path / "kb"
    write(kb / "a.md", "# Apples\n\nApples grow in orchards.\n")
    write(kb / "b.md", "# Bananas\n\nBananas bend.\n")
    monkeypatch.chdir(tmp_path)
    argv = ["ingest", "kb", "--db", "kb.db", "--embedder", "hash:64"]
    assert main(argv) == 0
    capsys.readouterr()
    (kb / "a.md").rename(kb / "apples.md")
    (kb / "b.md").unlink()
    assert main([*argv, "--prune"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("ingested 0 documents in ") and len(out.splitlines()) == 1
    assert out.rstrip().endswith("s; followed 1 file(s) moved or renamed; removed 1 document(s) whose file is gone")
    assert err.splitlines()[-2:] == [
        "moved: kb/a.md -> kb/apples.md (its document followed the file: its id, chunks and store edits kept)",
        "removed, its file is gone: kb/b.md"]

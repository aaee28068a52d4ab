"""A knowledge base kept in step with a folder (``ingest FOLDER`` again, ``--prune``): what a user's run
never does — remove a document whose file is there, store one file twice, hold back the folder for one bad
or edited file — and what it says: one line per file skipped, control characters escaped in the tables."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.cli import main
from logichunk.config import Settings
from logichunk.store import Store
from logichunk.store.ingest import chapter_blocks, ingest, ingest_text
from pg_fixture import backend, make_store, pg_url  # noqa: F401

HASH = ["--embedder", "hash:64"]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``logichunk ARGV``: exit status, stdout, stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def documents(db: str) -> list[tuple[str, str, str | None]]:
    with Store.open(db, settings=Settings(embedder="hash:64")) as s:
        return s.documents()


def blocks(db: str) -> list:
    with Store.open(db, settings=Settings(embedder="hash:64")) as s:
        return s.blocks()


def edit_second_block(capsys, db: str, text: str) -> str:
    """``logichunk edit`` on the project's second block (the first file's body under its heading): its id."""
    _, out, _ = cli(capsys, "blocks", "--db", db, "--format", "jsonl")
    block = json.loads(out.splitlines()[1])["id"]
    assert cli(capsys, "edit", "--db", db, "--block", block, "--text", text, *HASH)[0] == 0
    return block


# ----------------------------------------------------------------------------- prune (defects 1 and 2)


def test_prune_from_another_working_directory_keeps_the_files_that_are_there(tmp_path, monkeypatch, capsys):
    """Ingested as ``notes`` from its parent folder, the folder spelled ``.`` from inside it: the stored
    source named ``notes/a.md`` read from there, a prune removed the document (and its edit) of a file that
    is there. Sources are full paths now: nothing is pruned, the edit stays."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n\nApples and orchards.\n", encoding="utf-8")
    db = str(tmp_path / "kb.db")
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "ingest", "notes", "--db", db, *HASH, "--quiet")[0] == 0
    assert [src for _d, _t, src in documents(db)] == [str(tmp_path / "notes" / "a.md")]
    edit_second_block(capsys, db, "Apples, orchards and an IMPORTANT manual edit.\n")
    monkeypatch.chdir(tmp_path / "notes")
    code, out, err = cli(capsys, "ingest", ".", "--db", db, *HASH, "--prune", "--verbose")
    assert code == 0 and "removed" not in err and "removed" not in out
    assert "kept as edited in the store: a.md" in err
    code, out, _ = cli(capsys, "search", "IMPORTANT", "--db", db, *HASH, "--mode", "hybrid", "--format", "jsonl")
    assert len(documents(db)) == 1 and "IMPORTANT manual edit" in json.loads(out.splitlines()[0])["text"]
    code, out, _ = cli(capsys, "documents", "--db", db)
    assert out.splitlines()[1].endswith("a (a.md)")  # the table: a full path inside the working folder, from it


def test_a_relative_source_of_an_older_store_is_kept_said_and_recorded_in_full(make_store, tmp_path, monkeypatch):
    """A store written before sources were full paths holds ``notes/a.md``: from another folder no prune can
    tell whether that file is gone, so it keeps the document and says so. An ingest from the folder it was
    ingested from records the full path, and a prune then follows the file wherever it is run from."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("Apples and orchards.\n", encoding="utf-8")
    (notes / "b.md").write_text("Bananas.\n", encoding="utf-8")
    store = make_store(settings=Settings(embedder="hash:64"))
    monkeypatch.chdir(tmp_path)
    old = ingest_text(store, "a", "Apples and orchards.\n", source="notes/a.md")  # as an older logichunk stored it
    monkeypatch.chdir(notes)
    rep = ingest(store, ["."], prune=True)
    assert rep.pruned == () and rep.unpruned == (f"notes/a.md (a relative path, not found from here; document {old})",)
    assert "notes/a.md" in {src for _d, _t, src in store.documents()}  # kept (a.md is stored anew beside it)
    monkeypatch.chdir(tmp_path)
    rep = ingest(store, ["notes"], prune=True)  # the old document is a.md by its text: two for one file, said
    sources = sorted(src for _d, _t, src in store.documents())
    assert rep.unpruned == () and sources.count(str(notes / "a.md")) == 1 and str(notes / "b.md") in sources
    assert len(rep.refused) == 1 and "2 documents are stored for this one file" in rep.refused[0]
    (notes / "a.md").unlink()
    monkeypatch.chdir(notes)
    rep = ingest(store, ["."], prune=True)
    assert rep.pruned == (str(notes / "a.md"),) and "notes/a.md" in {s for _d, _t, s in store.documents()}


def test_a_relative_source_never_matches_another_projects_file(make_store, tmp_path, monkeypatch):
    """An older store's ``docs/README.md`` (ingested in project X) read from project Y: Y's file at that
    relative path was "stored already with other text", and ``--replace`` deleted X's document. A relative
    source is matched only by its text: Y's file is stored as new, X's document kept, even with ``replace``,
    and the report names X's document as not matched."""
    for proj, text in (("x", "# X\n\nProject X about xylophones.\n"), ("y", "# Y\n\nProject Y about yaks.\n")):
        (tmp_path / proj / "docs").mkdir(parents=True)
        (tmp_path / proj / "docs" / "README.md").write_text(text, encoding="utf-8")
    store = make_store(settings=Settings(embedder="hash:64"))
    old = ingest_text(store, "README", "# X\n\nProject X about xylophones.\n", source="docs/README.md")
    monkeypatch.chdir(tmp_path / "y")
    for replace in (False, True):
        rep = ingest(store, ["docs"], replace=replace)
        assert rep.refused == () and rep.replaced == () and rep.unmatched == (old,)
    docs = {d: s for d, _t, s in store.documents()}
    assert docs[old] == "docs/README.md" and str(tmp_path / "y" / "docs" / "README.md") in docs.values()
    assert len(docs) == 2 and "xylophones" in "".join(b.content for b in store.blocks())


def test_a_relative_source_outside_the_folders_ingested_is_not_theirs_to_report(make_store, tmp_path, monkeypatch):
    """A document the service stored under a client's file name (``up.txt``, a relative source) was reported on
    every later ingest of any folder as "not matched ... stored by an older logichunk", and on every prune as
    "not pruned": only a relative source that, read from here, lies among the paths ingested is theirs to say."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n\nApples.\n", encoding="utf-8")
    store = make_store(settings=Settings(embedder="hash:64"))
    upload = ingest_text(store, "up", "Uploaded through the service.\n", source="up.txt")
    legacy = ingest_text(store, "gone", "A file of the folder, since deleted.\n", source="notes/gone.md")
    monkeypatch.chdir(tmp_path)
    rep = ingest(store, ["notes"], prune=True)
    assert rep.unmatched == (legacy,) and upload not in rep.unmatched
    assert [u for u in rep.unpruned if "up.txt" in u] == [] and any("notes/gone.md" in u for u in rep.unpruned)
    assert {d for d, _t, _s in store.documents()} >= {upload, legacy}


def test_a_folder_ingested_through_a_link_then_its_real_path_is_stored_once(tmp_path, capsys):
    """Sources were the link's name while matches and prunes went by real path: once the link was gone, the
    real folder's files were stored again and the link's documents never pruned (every hit twice)."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "r.md").write_text("# R\n\nReal rhubarb.\n", encoding="utf-8")
    (tmp_path / "link").symlink_to("real")
    db = str(tmp_path / "kb.db")
    assert cli(capsys, "ingest", str(tmp_path / "link"), "--db", db, *HASH, "--quiet")[0] == 0
    (tmp_path / "link").unlink()
    code, out, err = cli(capsys, "ingest", str(tmp_path / "real"), "--db", db, *HASH, "--prune", "--verbose")
    assert code == 0 and "ingested 0 documents" in out and "unchanged, skipped" in err
    assert [s for _d, _t, s in documents(db)] == [str((tmp_path / "real" / "r.md").resolve())]


def test_prune_of_a_folder_left_without_text_files_still_prunes(tmp_path, capsys):
    """``ingest B --prune`` once B's last text file was deleted stopped at "no text files" (exit status 2)
    before the prune: the gone file's document stayed searchable. It is removed now, and the run says that
    nothing was ingested."""
    b = tmp_path / "B"
    b.mkdir()
    (b / "b1.md").write_text("# B1\n\nBeetles.\n", encoding="utf-8")
    db = str(tmp_path / "kb.db")
    assert cli(capsys, "ingest", str(b), "--db", db, *HASH, "--quiet")[0] == 0
    (b / "b1.md").unlink()
    (b / "NOTES").write_text("not a text file name\n", encoding="utf-8")
    code, out, err = cli(capsys, "ingest", str(b), "--db", db, *HASH, "--prune")
    assert code == 0 and documents(db) == [] and "removed 1 document(s)" in out
    assert "nothing was ingested: no text files" in err and f"removed, its file is gone: {b / 'b1.md'}" in err
    code, _out, err = cli(capsys, "ingest", str(b), "--db", db, *HASH)  # without --prune: still the error
    assert code == 2 and "no text files" in err


def test_prune_removes_the_document_of_a_file_emptied_since(tmp_path, capsys):
    """A file emptied since its ingest was skipped as empty, and with ``--prune`` its document stayed with the
    old text, which every search still found: the store was not what a fresh ingest of the folder gives. It
    is pruned now, said as emptied, the folder's last file too (it stopped at "empty input" before the prune);
    without ``--prune`` it is kept, as a deleted file's is."""
    from logichunk.retrieve import retrieve

    b = tmp_path / "B"
    b.mkdir()
    (b / "a.md").write_text("# A\n\nApples grow in orchards.\n", encoding="utf-8")
    (b / "z.md").write_text("# Z\n\nZebras graze on savannahs.\n", encoding="utf-8")
    db = str(tmp_path / "kb.db")
    assert cli(capsys, "ingest", str(b), "--db", db, *HASH, "--quiet")[0] == 0
    (b / "z.md").write_text("", encoding="utf-8")
    code, _out, err = cli(capsys, "ingest", str(b), "--db", db, *HASH)
    assert code == 0 and len(documents(db)) == 2  # no --prune: kept, as a deleted file's document is
    code, out, err = cli(capsys, "ingest", str(b), "--db", db, *HASH, "--prune")
    assert code == 0 and f"removed, its file is empty: {b / 'z.md'}" in err and "whose file is gone or empty" in out
    assert [src for _d, _t, src in documents(db)] == [str(b / "a.md")]
    with Store.open(db, settings=Settings(embedder="hash:64")) as s:
        for mode in ("basic", "parent", "hierarchical", "hybrid"):
            hits = retrieve(s, "zebras graze savannahs", mode=mode, top_k=5)
            assert all("Zebras" not in (h.chunk.meta.get("text") or "") for h in hits), mode
    (b / "a.md").write_text("\n", encoding="utf-8")  # the folder's last file emptied: pruned as if deleted
    code, out, err = cli(capsys, "ingest", str(b), "--db", db, *HASH, "--prune")
    assert code == 0 and documents(db) == [] and f"removed, its file is empty: {b / 'a.md'}" in err
    code, _out, err = cli(capsys, "ingest", str(b / "a.md"), "--db", db, *HASH)  # named alone: still the error
    assert code == 2 and err.strip().endswith(f"{b / 'a.md'}: empty input (only whitespace); nothing was ingested")


def _deny(monkeypatch, folder: Path) -> None:
    """``chmod 000 folder`` as the kernel answers a user that is not root: listing it and looking at what
    is inside it fail with EACCES (root passes any permission, so the tests' root is told so here)."""
    real_scandir, real_lstat = os.scandir, os.lstat
    inside = str(folder)

    def scandir(path=".", *a, **k):
        if os.path.abspath(path) == inside:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path, *a, **k)

    def lstat(path, *a, **k):
        if os.path.abspath(path).startswith(inside + os.sep):
            raise PermissionError(13, "Permission denied", str(path))
        return real_lstat(path, *a, **k)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "lstat", lstat)


def test_an_unreadable_subfolder_is_said_and_nothing_under_it_is_pruned(tmp_path, monkeypatch, capsys):
    kb = tmp_path / "kb"
    (kb / "team").mkdir(parents=True)
    (kb / "top.md").write_text("# Top\n\nTop notes about owls.\n", encoding="utf-8")
    (kb / "team" / "t.md").write_text("# Team\n\nTeam notes about salaries.\n", encoding="utf-8")
    db = str(tmp_path / "kb.db")
    assert cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--quiet")[0] == 0
    (kb / "new.md").write_text("A new note.\n", encoding="utf-8")
    _deny(monkeypatch, kb / "team")
    code, out, err = cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--prune", "--quiet")
    assert code == 1 and err.splitlines() == [f"skipped {kb / 'team'}: permission denied; its files were not read"]
    assert "removed" not in out and {t for _d, t, _s in documents(db)} == {"top", "t", "new"}
    with Store.open(db, settings=Settings(embedder="hash:64")) as s:  # a file that cannot be looked at: kept
        ingest_text(s, "elsewhere", "Kept.\n", source=str(kb / "team" / "gone.md"))
        rep = ingest(s, [str(kb)], prune=True)
    assert rep.pruned == () and rep.unreadable and rep.failed


def test_only_no_such_file_prunes(tmp_path, monkeypatch, capsys):
    """A file the system will not let us look at is no proof that it is gone: kept, said with its document's id
    (what ``logichunk delete`` takes, should the file be gone indeed: the line gave none); one that is not
    there is removed."""
    kb = tmp_path / "kb"
    kb.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (kb / name).write_text(f"Text of {name}.\n", encoding="utf-8")
    with Store.open(str(tmp_path / "kb.db"), settings=Settings(embedder="hash:64")) as s:
        ingest(s, [str(kb)])
        (kb / "c.md").unlink()
        real_lstat = os.lstat

        def lstat(path, *a, **k):
            if str(path) == str(kb / "b.md"):
                raise PermissionError(13, "Permission denied", str(path))
            return real_lstat(path, *a, **k)

        monkeypatch.setattr(os, "lstat", lstat)
        rep = ingest(s, [str(kb)], prune=True)
        b_id = next(d for d, t, _s in s.documents() if t == "b")
        assert rep.pruned == (str(kb / "c.md"),)
        assert rep.unpruned == (f"{kb / 'b.md'} (permission denied; document {b_id})",)
        assert {t for _d, t, _s in s.documents()} == {"a", "b"}
    code, _out, err = cli(capsys, "ingest", str(kb), "--db", str(tmp_path / "kb.db"), *HASH, "--prune")
    said = [line for line in err.splitlines() if line.startswith("not pruned")]
    assert code == 0 and len(said) == 1 and f"{kb / 'b.md'} (permission denied; document {b_id})" in said[0]


# ----------------------------------------------------------------------------- the same file twice (defect 3)


@pytest.mark.parametrize("names", [["dd", "dd/x", "dd/x/notes.md"], ["dd/x/notes.md", "dd/x/notes.md", "dd", "dd/x"],
                                   ["dd/x/notes.md", "dd/x/link.md"], ["dd/x/./notes.md", "dd/../dd/x/notes.md"]])
def test_a_file_reached_twice_in_one_ingest_is_stored_once(tmp_path, monkeypatch, capsys, names):
    (tmp_path / "dd" / "x").mkdir(parents=True)
    (tmp_path / "dd" / "x" / "notes.md").write_text("# N\n\nnotes about ants\n", encoding="utf-8")
    (tmp_path / "dd" / "x" / "link.md").symlink_to("notes.md")  # a link to a file of the same folder
    monkeypatch.chdir(tmp_path)
    code, _out, err = cli(capsys, "ingest", *names, "--db", "kb.db", *HASH)
    assert code == 0 and len(documents("kb.db")) == 1
    assert sum(line.startswith("skipped ") and "already read in this run" in line for line in err.splitlines()) >= 1
    code, out, _ = cli(capsys, "search", "ants", "--db", "kb.db", *HASH, "--mode", "basic", "--format", "jsonl")
    assert code == 0 and len(out.splitlines()) == 1  # one hit, not one per copy
    code, _out, err = cli(capsys, "ingest", *names, "--db", "kb.db", *HASH, "--verbose")  # again: one, unchanged
    assert code == 0 and err.count("unchanged, skipped") == 1 and len(documents("kb.db")) == 1


# ----------------------------------------------------------------------------- store edits (defect 4)


def test_an_edited_document_does_not_hold_back_the_folder(tmp_path, capsys):
    """After ``logichunk edit``, ingesting the folder again refused every file ("or edit its blocks"). The file
    that differs from its document only in the edited block is kept as edited; a new file is stored; a file
    changed in another block is merged (that block takes the file's text, the edit stays), and so is one with a
    paragraph added, and one whose paragraphs moved around a block added in the store (it holds no text of the
    file's: kept where the store put it; before, that file was skipped, ``--replace`` needed)."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nApples.\n\nAnd a second paragraph.\n", encoding="utf-8")
    db = str(tmp_path / "kb.db")
    assert cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--quiet")[0] == 0
    edit_second_block(capsys, db, "Apples and pears.\n\n")
    (kb / "b.md").write_text("# B\n\nBananas.\n", encoding="utf-8")
    code, out, err = cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--verbose")
    assert code == 0 and "ingested 1 document(s)" in out
    assert f"kept as edited in the store: {kb / 'a.md'}" in err and "edit its blocks" not in err
    assert {t for _d, t, _s in documents(db)} == {"a", "b"}
    (kb / "a.md").write_text("# A\n\nApples.\n\nA changed second paragraph.\n", encoding="utf-8")
    code, out, err = cli(capsys, "ingest", str(kb), "--db", db, *HASH)
    assert code == 0 and f"updated from the file: {kb / 'a.md'}" in err and "updated 1 document(s)" in out
    assert "Apples and pears.\n\nA changed second paragraph.\n" in "".join(b.content for b in blocks(db))
    (kb / "a.md").write_text("# A\n\nApples.\n\nA changed second paragraph.\n\nAnd a third.\n", encoding="utf-8")
    code, out, err = cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--format", "jsonl")
    assert code == 0 and len(json.loads(out)["added"]) == 1  # a paragraph added in the file: merged, the edit kept
    assert "Apples and pears.\n\n" in [b.content for b in blocks(db)]
    with Store.open(db, settings=Settings(embedder="hash:64")) as s:
        s.add_block(blocks(db)[0].chapter_id, "Added in the store.\n\n")
    (kb / "a.md").write_text("# A\n\nApples.\n\nAnd a third.\n", encoding="utf-8")
    (kb / "c.md").write_text("# C\n\nCherries.\n", encoding="utf-8")
    code, out, err = cli(capsys, "ingest", str(kb), "--db", db, *HASH)
    assert code == 0 and not [line for line in err.splitlines() if line.startswith("skipped ")]
    assert f"updated from the file: {kb / 'a.md'}" in err and f"kept as edited in the store: {kb / 'a.md'}" in err
    assert [b.content for b in blocks(db)][:4] == ["# A\n\n", "Apples and pears.\n\n", "And a third.\n",
                                                   "Added in the store.\n\n"]
    assert {t for _d, t, _s in documents(db)} == {"a", "b", "c"}
    code, out, _ = cli(capsys, "search", "pears", "--db", db, *HASH, "--mode", "hybrid", "--format", "jsonl")
    assert "Apples and pears" in json.loads(out.splitlines()[0])["text"]  # the edit is still there
    code, _out, err = cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--replace")
    assert code == 0 and f"replaced: {kb / 'a.md'}" in err


def test_one_file_stored_with_other_text_alone_updates_its_document(tmp_path):
    """It was the error ("stored already ... --replace"); a document the store never edited now follows its file."""
    f = tmp_path / "a.md"
    f.write_text("Apples.\n", encoding="utf-8")
    with Store.open(str(tmp_path / "kb.db"), settings=Settings(embedder="hash:64")) as s:
        ingest(s, [str(f)])
        did = s.documents()[0][0]
        f.write_text("Pears.\n", encoding="utf-8")
        rep = ingest(s, [str(f)])
        assert rep.updated == (str(f),) and [d for d, _t, _s in s.documents()] == [did]
        assert [b.content for b in s.blocks()] == ["Pears.\n"]


# ----------------------------------------------------------------------------- bad files (defect 6)


def test_every_bad_file_of_a_folder_is_named_in_one_run_and_the_rest_stored(tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "good.md").write_text("# Good\n\nGood text.\n", encoding="utf-8")
    (kb / "big5.txt").write_bytes("長城是中國古代的軍事防禦工程。".encode("big5"))  # (GBK is read: test_encodings)
    (kb / "latin1.txt").write_bytes("Café crème.".encode("latin-1"))
    (kb / "png.md").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    (kb / "nul.txt").write_bytes(b"text \x00 with a NUL byte\n")
    db = str(tmp_path / "kb.db")
    code, out, err = cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--quiet")
    lines = err.splitlines()
    assert code == 1 and "Traceback" not in err and len(lines) == 4 and all(x.startswith("skipped ") for x in lines)
    assert sorted(x.split(":")[0].removeprefix("skipped ") for x in lines) == sorted(
        str(kb / n) for n in ("big5.txt", "latin1.txt", "png.md", "nul.txt"))
    assert [t for _d, t, _s in documents(db)] == ["good"] and "4 file(s) not ingested" in out
    code, out, _ = cli(capsys, "ingest", str(kb), "--db", db, *HASH, "--quiet", "--format", "jsonl")
    rep = json.loads(out)
    assert code == 1 and len(rep["refused"]) == 4 and rep["unchanged"] == [str(kb / "good.md")]
    code, out, err = cli(capsys, "ingest", str(kb / "big5.txt"), "--db", db, *HASH)  # alone: the error
    assert code == 2 and err.count("\n") == 1 and "not valid UTF-8" in err


# ----------------------------------------------------------------------------- line ends (defect 5)

_LINES = st.lists(st.sampled_from(["# One", "## Two", "Chapter 3 Storms", "第一章 山门", "Text about owls.", "",
                                   "", "  indented", "```", "code # not a heading", "- a list item"]),
                  min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(_LINES, st.sampled_from(["\r", "\u2028", "\u2029", "\x85"]), st.booleans())
def test_other_line_ends_give_the_chapters_and_blocks_of_lf(lines, eol, last):
    """A file with CR-only (old Mac) line ends was one chapter of one block: the store read lines by "\\n".
    Every line end the sentence splitter reads gives the chapters and blocks its LF twin gives, at the
    same offsets, and the blocks are the file's text exactly."""
    lf = "\n".join(lines) + ("\n" if last else "")
    other = lf.replace("\n", eol)
    a, b = chapter_blocks(lf), chapter_blocks(other)
    assert "".join(x for _t, blocks in b for x in blocks) == other
    assert [(t, [len(x) for x in blocks]) for t, blocks in a] == [(t, [len(x) for x in blocks]) for t, blocks in b]


@settings(max_examples=100, deadline=None)
@given(_LINES, st.booleans())
def test_crlf_and_cr_give_the_chapters_and_blocks_of_lf(lines, last):
    lf = "\n".join(lines) + ("\n" if last else "")
    shapes = []
    for eol in ("\n", "\r\n", "\r"):
        text = lf.replace("\n", eol)
        got = chapter_blocks(text)
        assert "".join(x for _t, blocks in got for x in blocks) == text
        shapes.append([(t, len(blocks)) for t, blocks in got])
    assert shapes[0] == shapes[1] == shapes[2]


def test_a_cr_only_file_is_stored_as_its_lf_twin(tmp_path, capsys):
    (tmp_path / "cr.md").write_bytes(b"# One\r\rText about owls.\r\r# Two\r\rText about cats.\r")
    (tmp_path / "lf.md").write_bytes(b"# One\n\nText about owls.\n\n# Two\n\nText about cats.\n")
    db = str(tmp_path / "kb.db")
    code, out, _ = cli(capsys, "ingest", str(tmp_path / "cr.md"), str(tmp_path / "lf.md"), "--db", db, *HASH, "--quiet")
    assert code == 0 and "2 document(s), 4 chapter(s), 8 block(s)" in out
    with Store.open(db, settings=Settings(embedder="hash:64")) as s:
        cr = next(d for d, t, _s in s.documents() if t == "cr")
        assert "".join(s.chapter_text(c) for c, _o, _t in s.chapters(cr)) == (tmp_path / "cr.md").read_bytes().decode()


# ----------------------------------------------------------------------------- tables (defects 7 and 8)


def test_tables_escape_control_characters_and_name_the_document(tmp_path, capsys):
    (tmp_path / "ctl.md").write_text("Control chars: \x1b[31m red \x07 bell.\n", encoding="utf-8")
    db = str(tmp_path / "kb.db")
    assert cli(capsys, "ingest", str(tmp_path / "ctl.md"), "--db", db, *HASH, "--quiet")[0] == 0
    for argv in (["blocks"], ["search", "red", "--mode", "basic"], ["search", "red", "--mode", "graph-ssg"],
                 ["documents"]):
        code, out, _ = cli(capsys, *argv, "--db", db, *HASH)
        assert code == 0 and "\x1b" not in out and "\x07" not in out
        if argv[0] != "documents":
            assert "\\x1b[31m red \\x07 bell" in out
        if argv[0] == "search":
            header, row = (line for line in out.splitlines() if not line.startswith("# "))
            assert "document" in header.split() and " ctl " in row
    code, out, _ = cli(capsys, "search", "red", "--db", db, *HASH, "--mode", "basic", "--format", "jsonl")
    hit = json.loads(out.splitlines()[0])
    assert hit["title"] == "ctl" and hit["source"] == str(tmp_path / "ctl.md")
    code, out, _ = cli(capsys, "blocks", "--db", db, "--format", "jsonl")
    assert json.loads(out.splitlines()[0])["preview"] == "Control chars: \\x1b[31m red \\x07 bell."

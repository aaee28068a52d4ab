# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
"""A folder synced daily from cron (``logichunk ingest ~/kb --db kb.db --prune``): quiet and exit 0 when nothing is
wrong, each run's stderr saying what happened since the last one. Before: a dangling link in the folder (a link to
a drive not mounted) made every run exit 1, and a prune removed the document stored through it, store edits and
all; ``kept as edited in the store`` was said for every file with store edits on every run, as ``unchanged,
skipped`` for every file; a heading edited renamed only the first part of a chapter stored in parts."""

from __future__ import annotations

import json
import re

from logichunk.cli import main
from logichunk.config import Settings
from logichunk.store import Store
from logichunk.store import ingest as ingest_mod
from pg_fixture import backend, make_store, pg_url  # noqa: F401

HASH = ["--embedder", "hash:64"]


def run(capsys, *argv: str) -> tuple[int, str, list[str]]:
    code = main(["ingest", *argv, *HASH])
    out, err = capsys.readouterr()
    lines = err.splitlines()
    embedded = re.search(r"embedded [1-9][0-9]* texts", out) is not None or ("--verbose" in argv and code != 2)
    assert any(line.startswith("embedder: ") for line in lines) == embedded  # said when it embedded (or asked)
    return code, out, [line for line in lines if not line.startswith("embedder: ")]


def test_a_scripted_week_says_each_run_only_what_happened_since_the_last(tmp_path, capsys):
    """Twice a day: a file edited, a dangling link kept on purpose, a store edit, a file that cannot be read, a
    drive unmounted then back. Each run's stderr names only that run's news, the exit status is 1 only while a
    file is refused, and the jsonl report carries everything (unchanged, edited, dangling) on every run."""
    kb, drive = tmp_path / "kb", tmp_path / "drive"
    kb.mkdir()
    drive.mkdir()
    (kb / "a.md").write_text("# A\n\nApples.\n\nPears.\n", encoding="utf-8")
    (kb / "b.md").write_text("# B\n\nBananas.\n", encoding="utf-8")
    (drive / "x.md").write_text("# X\n\nOn the drive.\n", encoding="utf-8")
    (kb / "x.md").symlink_to(drive / "x.md")
    (kb / "old.md").symlink_to(tmp_path / "nowhere.md")  # dangling from the start, kept on purpose
    sync = [str(kb), "--db", str(tmp_path / "kb.db"), "--prune"]

    code, _out, err = run(capsys, *sync)  # day 1 am: all new
    assert code == 0 and sorted(err[:3]) == [f"new: {kb / n}" for n in ("a.md", "b.md", "x.md")]
    assert err[3:] == [f"note: 1 symbolic link(s) in the folders lead to no file, not read ({kb / 'old.md'} -> "
                       f"{tmp_path / 'nowhere.md'})"]
    code, out, err = run(capsys, *sync)  # day 1 pm: nothing happened
    assert code == 0 and len(err) == 1 and err[0].startswith("note: 1 symbolic link(s)")
    assert "; 3 file(s) unchanged" in out

    assert main(["blocks", "--db", sync[2], "--format", "jsonl"]) == 0  # a store edit to a's second block
    block = json.loads(capsys.readouterr().out.splitlines()[1])["id"]
    assert main(["edit", "--db", sync[2], "--block", block, "--text", "Apples, edited in the store.\n\n", *HASH]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, *sync)  # day 2: the edit kept; said in the summary's count, not named each run
    assert code == 0 and len(err) == 1 and "; 1 file(s) keep their store edits" in out
    code, out, _ = run(capsys, *sync, "--format", "jsonl")
    rep = json.loads(out)
    assert code == 0 and rep["edited"] == [str(kb / "a.md")] and rep["dangling"] == [str(kb / "old.md")]
    assert sorted(rep["unchanged"]) == [str(kb / "b.md"), str(kb / "x.md")]
    _code, _out, err = run(capsys, *sync, "--verbose")  # named on asking
    assert f"kept as edited in the store: {kb / 'a.md'} (--replace would take the file's text over the edits)" in err
    assert f"unchanged, skipped: {kb / 'b.md'}" in err

    (kb / "a.md").write_text("# A\n\nApples.\n\nPears, ripe.\n", encoding="utf-8")  # day 3: a changed in the file
    code, _out, err = run(capsys, *sync)
    assert code == 0 and f"kept as edited in the store: {kb / 'a.md'} (--replace would take the file's text over " \
        "the edits)" in err and any(line.startswith(f"updated from the file: {kb / 'a.md'}") for line in err)
    code, _out, err = run(capsys, *sync)
    assert code == 0 and len(err) == 1

    (kb / "bin.txt").write_bytes(b"\x00\x01\x02 not text \x00" * 10)  # day 4: a file refused: exit 1, said
    code, _out, err = run(capsys, *sync)
    assert code == 1 and any(line.startswith(f"skipped {kb / 'bin.txt'}") for line in err)
    (kb / "bin.txt").unlink()

    (drive / "x.md").rename(tmp_path / "x.md")  # day 5: the drive unmounted: its document kept, exit 0
    code, out, err = run(capsys, *sync)
    assert code == 0 and "removed" not in out and not any(line.startswith("removed") for line in err)
    assert any(line.startswith("not pruned") and f"its link {kb / 'x.md'} leads to no file now" in line for line in err)
    assert "2 symbolic link(s) in the folders lead to no file" in " ".join(err)
    (tmp_path / "x.md").rename(drive / "x.md")  # day 6: back, nothing to say but the link kept dangling
    code, out, err = run(capsys, *sync)
    assert code == 0 and len(err) == 1 and "; 2 file(s) unchanged; 1 file(s) keep their store edits" in out
    with Store.open(sync[2], settings=Settings(embedder="hash:64")) as s:
        assert sorted(t for _d, t, _s in s.documents()) == ["a", "b", "x"]

    (kb / "x.md").unlink()  # day 7: the link itself deleted: its document pruned, said once
    code, _out, err = run(capsys, *sync)
    assert code == 0 and f"removed, its file is gone: {kb / 'x.md'}" in err and len(err) == 2
    code, _out, err = run(capsys, *sync)
    assert code == 0 and len(err) == 1


def test_exit_statuses_of_ingest(tmp_path, capsys):
    """0: all done (a dangling link in a folder is a note); 1: a file refused; 2: usage or fatal (a path given
    by name that is a dangling link, or missing)."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nApples.\n", encoding="utf-8")
    (kb / "gone.md").symlink_to(tmp_path / "nowhere.md")
    db = ["--db", str(tmp_path / "kb.db")]
    assert run(capsys, str(kb), *db)[0] == 0
    code, _out, err = run(capsys, str(kb / "gone.md"), *db)
    assert code == 2 and "is a dangling symbolic link" in err[0]
    assert run(capsys, str(tmp_path / "missing"), *db)[0] == 2
    (kb / "b.txt").write_bytes(b"\x00\x01 binary \x00" * 10)
    assert run(capsys, str(kb), *db)[0] == 1
    code, _out, err = run(capsys, str(kb), *db, "--quiet")
    assert code == 1 and len(err) == 1 and err[0].startswith(f"skipped {kb / 'b.txt'}")  # quiet: the cause only


def test_a_heading_edited_renames_every_part_of_a_long_chapter(make_store, tmp_path, monkeypatch):
    """A chapter over CHAPTER_PART_CHARS is stored as consecutive chapters of its title: a heading edited in the
    store renamed the first part only; the next chapter (a heading of its own) keeps its title."""
    monkeypatch.setattr(ingest_mod, "CHAPTER_PART_CHARS", 120)
    paras = "".join(f"Paragraph {i} of the long chapter, with some words.\n\n" for i in range(12))
    (tmp_path / "a.md").write_text(f"# Long\n\n{paras}# Next\n\nShort.\n", encoding="utf-8")
    s = make_store(settings=Settings(embedder="hash:64"))
    ingest_mod.ingest(s, [str(tmp_path / "a.md")], rechunk=False)
    (did, _t, _src), = s.documents()
    titles = [t for _c, _o, t in s.chapters(did)]
    assert titles.count("Long") >= 3 and titles[-1] == "Next"
    first = s.blocks(s.chapters(did)[0][0])[0]
    assert s.edit_block(first.id, "# Longer\n\n")
    assert [t for _c, _o, t in s.chapters(did)] == ["Longer"] * (len(titles) - 1) + ["Next"]


def test_a_link_to_a_file_of_the_folder_deleted_keeps_nothing(tmp_path, capsys):
    """A link in the folder to a file of the same folder: the file deleted, its document is pruned (the walk
    sees it gone), the link said as dangling; only a link leading outside the folders keeps its document."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "b.md").write_text("# B\n\nBananas.\n", encoding="utf-8")
    (kb / "a.md").symlink_to("b.md")
    sync = [str(kb), "--db", str(tmp_path / "kb.db"), "--prune"]
    assert run(capsys, *sync)[0] == 0
    (kb / "b.md").unlink()
    code, _out, err = run(capsys, *sync)
    assert code == 0 and any(line.startswith("removed, its file is gone") for line in err)
    assert not any(line.startswith("not pruned") for line in err) and "1 symbolic link(s)" in " ".join(err)
    with Store.open(sync[2], settings=Settings(embedder="hash:64")) as s:
        assert s.documents() == []

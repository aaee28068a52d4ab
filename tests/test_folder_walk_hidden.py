"""A folder's hidden files and folders (.git, .venv, .notes.txt) are no one's documents: chunk, segment and
ingest walk a folder alike (text.folders.walk_text_files) and read none of them, saying in one line what they
left out. Before, ``logichunk ingest .`` in a project stored its virtualenv's dist-info *.txt files, and
``chunk`` read them in silence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logichunk.cli import main


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "proj"
    (d / ".venv" / "lib" / "pkg-1.0.dist-info").mkdir(parents=True)
    (d / ".venv" / "lib" / "pkg-1.0.dist-info" / "top_level.txt").write_text("pkg\n", encoding="utf-8")
    (d / ".git").mkdir()
    (d / ".git" / "description").write_text("Unnamed repository.\n", encoding="utf-8")
    (d / ".notes.txt").write_text("A hidden note. Not a document.\n", encoding="utf-8")
    (d / "docs").mkdir()
    (d / "docs" / "guide.md").write_text("# Guide\n\nPenguins huddle in winter. They share warmth.\n",
                                         encoding="utf-8")
    (d / "data.bin").write_bytes(b"\x00\x01")
    return d


def _sources(out: str) -> list[str]:
    return sorted({json.loads(line)["source"] for line in out.splitlines()})


@pytest.mark.parametrize("verb", ["chunk", "segment"])
def test_chunk_and_segment_leave_hidden_files_and_folders_out_and_say_so(tmp_path, capsys, verb):
    d = _folder(tmp_path)
    assert main([verb, str(d), "--format", "jsonl"]) == 0
    out, err = capsys.readouterr()
    assert _sources(out) == [str(d / "docs" / "guide.md")]
    assert "3 hidden file(s) or folder(s) in the folders not read (.git/, .venv/, .notes.txt)" in err
    assert "1 file(s) in the folders skipped, their names not of text files (1 .bin)" in err
    assert main([verb, str(d), "--format", "jsonl", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    hidden = str(d / ".notes.txt")  # named on the command line, a hidden file is read
    assert main([verb, hidden, "--format", "jsonl"]) == 0
    assert _sources(capsys.readouterr().out) == [hidden]


def test_a_folder_of_hidden_files_alone_is_one_line_naming_them(tmp_path, capsys):
    d = tmp_path / "only"
    (d / ".cache").mkdir(parents=True)
    (d / ".cache" / "a.txt").write_text("Cached. Text.\n", encoding="utf-8")
    assert main(["chunk", str(d)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no files ending in" in err
    assert "(1 hidden file(s) or folder(s) in the folders not read (.cache/)" in err


def test_ingest_leaves_hidden_files_out_and_reports_them(tmp_path, capsys):
    d = _folder(tmp_path)
    db = str(tmp_path / "p.db")
    assert main(["ingest", str(d), "--db", db, "--embedder", "hash:64", "--format", "jsonl"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["documents"] == 1
    assert rep["hidden"] == [str(d / ".git"), str(d / ".venv"), str(d / ".notes.txt")]
    assert rep["skipped"] == [str(d / "data.bin")]
    assert main(["ingest", str(d), "--db", db, "--embedder", "hash:64"]) == 0
    assert "3 hidden file(s) or folder(s) in the folders not read" in capsys.readouterr().err


def test_the_walk_follows_a_link_to_a_folder_once_and_never_loops(tmp_path):
    """A link to a folder was passed over in silence (its files neither read nor said skipped) while a link to a
    file is read: it is followed now, each real folder entered once (a link to a folder above is no loop)."""
    import os

    from logichunk.text.folders import walk_text_files

    kb, out = tmp_path / "kb", tmp_path / "out"
    (out / "dir").mkdir(parents=True)
    kb.mkdir()
    (kb / "a.md").write_text("A.\n", encoding="utf-8")
    (out / "dir" / "y.md").write_text("Y.\n", encoding="utf-8")
    for name, target in (("again", out / "dir"), ("loop", kb), ("sub", out / "dir")):
        os.symlink(target, kb / name, target_is_directory=True)
    assert list(walk_text_files(kb, (".md",))) == [kb / "a.md", kb / "again" / "y.md"]


def test_a_named_pipe_in_a_folder_is_said_and_not_read_a_dangling_link_said_as_one(tmp_path, capsys):
    """A named pipe with a text name (``notes.txt``) was read, and the verb waited for a writer for good: the walk
    says it, reads it not; a dangling link was "no such file" though the folder lists it (now an ingest's note, one
    line: tests/test_ingest_daily_sync.py)."""
    import os

    from logichunk.text.folders import walk_text_files

    d = tmp_path / "kb"
    d.mkdir()
    (d / "a.md").write_text("# A\n\nApples grow in orchards.\n", encoding="utf-8")
    os.mkfifo(d / "pipe.txt")
    os.symlink(tmp_path / "nowhere.md", d / "gone.md")
    unreadable: list[OSError] = []
    assert list(walk_text_files(d, (".md", ".txt"), unreadable=unreadable)) == [d / "a.md", d / "gone.md"]
    assert [str(e.filename) for e in unreadable] == [str(d / "pipe.txt")]
    assert main(["ingest", str(d), "--db", str(tmp_path / "kb.db"), "--embedder", "hash:64"]) == 1
    out, err = capsys.readouterr()
    assert f"skipped {d / 'pipe.txt'}: a named pipe, not a regular file; not read" in err.splitlines()
    assert (f"note: 1 symbolic link(s) in the folders lead to no file, not read ({d / 'gone.md'} -> "
            f"{tmp_path / 'nowhere.md'})") in err.splitlines()  # (a note, no failure: the pipe makes the 1)
    assert out.startswith("ingested 1 document(s)") and out.rstrip().endswith(
        "; 1 file(s) or folder(s) not ingested, said on stderr")
    assert main(["ingest", str(d / "pipe.txt"), "--db", str(tmp_path / "kb.db"), "--embedder", "hash:64"]) == 2
    assert "is a named pipe, not a regular file: an ingest reads a file twice" in capsys.readouterr().err
    assert main(["chunk", str(d)]) == 1
    assert f"{d / 'pipe.txt'}: a named pipe, not a regular file; not read" in capsys.readouterr().err


def test_chunk_and_ingest_read_the_same_files_of_a_folder(tmp_path, capsys):
    """``chunk`` read 12 endings from a folder, ``ingest`` 6 (its .html, .json, .csv, .org, .tex skipped): a folder
    chunked and then ingested was other files. One list (text.folders.TEXT_SUFFIXES) now serves both."""
    ends = (".txt", ".md", ".markdown", ".rst", ".text", ".org", ".tex", ".html", ".htm", ".csv", ".json")  # (and .pdf)
    d = tmp_path / "mixed"
    d.mkdir()
    for end in ends:
        (d / f"f{end}").write_text(f"Penguins huddle in winter, said {end}. They share warmth.\n", encoding="utf-8")
    (d / "data.bin").write_bytes(b"\x00\x01")
    (d / "README").write_text("No suffix, skipped by both.\n", encoding="utf-8")
    want = sorted(str(d / f"f{end}") for end in ends)
    assert main(["chunk", str(d), "--format", "jsonl", "--quiet"]) == 0
    assert _sources(capsys.readouterr().out) == want
    assert main(["ingest", str(d), "--db", str(tmp_path / "m.db"), "--embedder", "hash:64", "--format", "jsonl"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert sorted(rep["new"]) == want and rep["skipped"] == [str(d / "README"), str(d / "data.bin")]

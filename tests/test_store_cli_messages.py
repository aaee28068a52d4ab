"""Store verbs' errors say what the user typed: the ``--top-k`` flag (not two internal settings), and a
symbolic link that loops or dangles (not "no such file or folder")."""

from __future__ import annotations

import os

import pytest

from logichunk.cli import main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path, capsys):
    f = tmp_path / "a.md"
    f.write_text("Penguins huddle together.\n", encoding="utf-8")
    path = str(tmp_path / "p.db")
    assert run(["ingest", str(f), "--db", path, "--embedder", "hash:64", "--quiet"], capsys)[0] == 0
    return path


@pytest.mark.parametrize("k, said", [("100000", "--top-k must be at most 100, got 100000"),
                                     ("0", "--top-k must be at least 1, got 0")])
def test_top_k_past_its_limit_is_said_as_the_flag(db, capsys, k, said):
    code, out, err = run(["search", "huddle", "--db", db, "--embedder", "hash:64", "--top-k", k], capsys)
    assert code == 2 and out == "" and said in err and err.count("\n") == 1
    assert "setting top_k" not in err


def test_top_k_limit_follows_the_setting(db, capsys, monkeypatch):
    monkeypatch.setenv("LOGICHUNK_SERVICE_MAX_TOP_K", "500")
    code, out, err = run(["search", "huddle", "--db", db, "--embedder", "hash:64", "--top-k", "200"], capsys)
    assert code == 0 and "huddle" in out


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_a_link_that_loops_or_dangles_is_not_called_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.symlink("loop", "loop")
    os.symlink("nowhere", "dangling")
    for name, said in [("loop", "loop is a symbolic link that loops"),
                       ("loop/a.md", "loop/a.md goes through a symbolic link that loops"),
                       ("dangling", "dangling is a dangling symbolic link (it points to nowhere")]:
        code, _, err = run(["ingest", name, "--db", "k.db", "--embedder", "hash:64"], capsys)
        assert code == 2 and said in err and "no such file" not in err and err.count("\n") == 1, err
    code, _, err = run(["ingest", "missing.md", "--db", "k.db", "--embedder", "hash:64"], capsys)
    assert code == 2 and "no such file or folder: missing.md" in err
    code, _, err = run(["ingest", "-", "--db", "k.db", "--embedder", "hash:64"], capsys)  # (as `chunk -` reads it)
    assert code == 2 and "-: an ingest reads files and folders, not stdin" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, said", [
    (["search", "x", "--context-window", "0"], "argument --context-window: must be at least 1, got 0"),
    (["serve", "--debounce-ms", "-5"], "argument --debounce-ms: must be at least 0, got -5"),
    (["serve", "--max-body-bytes", "0"], "argument --max-body-bytes: must be at least 1, got 0")])
def test_a_numeric_flag_out_of_range_is_said_as_the_flag(tmp_path, capsys, argv, said):
    """Said as the flag typed, before a store is opened or a server started: the settings' checks named
    ``context_window_size``, ``debounce_delay_ms``, ``service_max_body_bytes``, which no user typed."""
    with pytest.raises(SystemExit) as e:
        main([*argv, "--db", str(tmp_path / "none.db")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and said in err and "setting" not in err and err.count("\n") == 1


def test_one_path_given_for_a_list_is_one_line(tmp_path):
    """``ingest(store, "docs/")`` read each character as a path ("no such file or folder: d"); a Path was a
    TypeError. Both are refused saying the call to write, before a worker starts (``ingest_corpus``)."""
    from pathlib import Path

    from logichunk.config import Settings
    from logichunk.errors import InputError
    from logichunk.scale import ingest_corpus
    from logichunk.store import Store
    from logichunk.store.ingest import ingest

    db = str(tmp_path / "p.db")
    with Store.open(db, settings=Settings(db=db, embedder="hash:64")) as store:
        for fn, name in ((ingest, "ingest"), (ingest_corpus, "ingest_corpus")):
            for paths in ("docs/", Path("docs")):
                with pytest.raises(InputError, match=rf"^{name} takes a list of files and folders, got one \w+: "
                                                     rf"{name}\(store, \['docs/?'\]\)$"):
                    fn(store, paths)
            for paths in (None, 5):  # (a TypeError from inside the walk before)
                with pytest.raises(InputError, match=rf"^{name} takes a list of files and folders, got (NoneType|int)$"):
                    fn(store, paths)


def test_an_empty_path_is_refused_not_read_as_the_current_folder(tmp_path, capsys, monkeypatch):
    """``Path("")`` is ".": ``logichunk ingest "$DIR"`` with the variable unset stored the folder it ran in."""
    from logichunk.errors import InputError
    from logichunk.store.ingest import ingest
    from logichunk.text.decode import read_blocks, read_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "here.md").write_text("A text in the current folder.\n", encoding="utf-8")
    said = "an empty path (an unset variable?): name a file or a folder"
    for argv in (["chunk", ""], ["segment", "here.md", ""], ["ingest", "", "--db", "k.db", "--embedder", "hash:64"]):
        code, out, err = run(argv, capsys)
        assert code == 2 and out == "" and said in err and err.count("\n") == 1, argv
    assert run(["documents", "--db", "k.db"], capsys)[1].count("here") == 0
    from logichunk.config import Settings
    from logichunk.store import Store

    with Store.open("p.db", settings=Settings(db="p.db", embedder="hash:64")) as store:
        for read in (lambda: read_path(""), lambda: list(read_blocks("")), lambda: ingest(store, [""])):
            with pytest.raises(InputError, match=r"^an empty path"):
                read()
        assert store.documents() == []

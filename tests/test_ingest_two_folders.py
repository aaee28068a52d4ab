"""A knowledge base synced from several folders: a file reached from two of them (two links, or a link and its own
path) stays while either still reaches it, its store edits kept; a file moved is followed only within the folders
of the ingest (the one it was found in first), a gone file elsewhere is said, not taken; a file is read once to be
checked; a search's table tells two documents of one title apart."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import logichunk.store.ingest as ing
from logichunk.config import Settings
from logichunk.store import Store
from logichunk.store.base import reached_of, reached_value
from logichunk.store.ingest import ingest
from pg_fixture import backend, make_store, pg_url  # noqa: F401

HASH = Settings(embedder="hash:64")
X = "# Xylophones\n\nXylophones ring.\n\nThey are struck.\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def sqlite_store(tmp: Path) -> Store:
    """A store for the tests of which file an ingest takes for which document: that is decided above the store, the
    same on either backend (the paths recorded, written by each store, are tested on both)."""
    return Store.open(str(tmp / "kb.db"), settings=HASH)


def edit_first(store: Store, did: str) -> str:
    bid = store.source_blocks(did)[0][1].id
    store.edit_block(bid, "Xylophones ring. An edit made in the store.\n\n")
    return bid


def test_a_file_linked_from_two_folders_stays_while_either_links_it(make_store, tmp_path):
    """Pruned by the folder whose link was deleted, it was stored anew by the other's next ingest: its id and its
    store edit lost. Now the document stays, its edit kept, until no folder links it."""
    kb1, kb2, out = tmp_path / "kb1", tmp_path / "kb2", tmp_path / "out"
    write(out / "x.md", X)
    kb1.mkdir()
    kb2.mkdir()
    (kb1 / "l.md").symlink_to(out / "x.md")
    (kb2 / "m.md").symlink_to(out / "x.md")
    store = make_store(settings=HASH)
    ingest(store, [str(kb1)], prune=True)
    ingest(store, [str(kb2)], prune=True)
    [(did, _t, _s)] = store.documents()
    assert sorted(store.reached_paths()[did]) == [str(kb1 / "l.md"), str(kb2 / "m.md")]
    bid = edit_first(store, did)
    (kb2 / "m.md").unlink()
    rep = ingest(store, [str(kb2)], prune=True)
    assert rep.pruned == () and rep.kept == ((str(kb2 / "m.md"), did, str(kb1 / "l.md")),)
    assert store.reached_paths()[did] == (str(kb1 / "l.md"),)  # the link gone forgotten
    rep = ingest(store, [str(kb1)], prune=True)
    assert rep.documents == 0 and rep.pruned == () and [d for d, _t, _s in store.documents()] == [did]
    assert store.get_block(bid).content == "Xylophones ring. An edit made in the store.\n\n"
    (kb1 / "l.md").unlink()
    assert ingest(store, [str(kb1)], prune=True).pruned == (str(kb1 / "l.md"),) and store.documents() == []


def test_a_file_reached_by_its_own_path_then_through_a_link_is_kept_once_the_link_goes(make_store, tmp_path):
    """The reverse order of test_ingest_reached's: the link recorded last, its deletion pruned a file still lying
    in the other folder synced."""
    kb, out = tmp_path / "kb", tmp_path / "out"
    write(out / "x.md", X)
    kb.mkdir()
    (kb / "l.md").symlink_to(out / "x.md")
    store = make_store(settings=HASH)
    ingest(store, [str(out)], prune=True)
    ingest(store, [str(kb)], prune=True)
    (kb / "l.md").unlink()
    assert ingest(store, [str(kb)], prune=True).pruned == () and len(store.documents()) == 1
    (out / "x.md").unlink()
    assert ingest(store, [str(out)], prune=True).pruned == (str(out / "x.md"),) and store.documents() == []


def test_a_link_still_there_keeps_the_file_when_another_is_repointed(make_store, tmp_path):
    """One link of two leads elsewhere now: that one is forgotten, the file kept by the other; the file stored
    for the new target is another document."""
    kb1, kb2, out = tmp_path / "kb1", tmp_path / "kb2", tmp_path / "out"
    write(out / "x.md", X)
    write(out / "z.md", "# Zithers\n\nZithers hum.\n")
    kb1.mkdir()
    kb2.mkdir()
    (kb1 / "l.md").symlink_to(out / "x.md")
    (kb2 / "l.md").symlink_to(out / "x.md")
    store = make_store(settings=HASH)
    rep = ingest(store, [str(kb1), str(kb2)])  # (kb2's link skipped as the same file, its path recorded all the same)
    assert rep.documents == 1 and rep.duplicates and len(next(iter(store.reached_paths().values()))) == 2
    (kb1 / "l.md").unlink()
    (kb1 / "l.md").symlink_to(out / "z.md")
    rep = ingest(store, [str(kb1)], prune=True)
    assert rep.documents == 1 and rep.pruned == ()
    assert sorted(Path(s).name for _d, _t, s in store.documents()) == ["x.md", "z.md"]
    (kb2 / "l.md").unlink()
    assert ingest(store, [str(kb2)], prune=True).pruned == (str(kb2 / "l.md"),)


def _gone_with_copy(tmp: Path, store: Store) -> tuple[Path, Path, str]:
    """kb1/a.md ingested and edited in the store, then deleted; kb2/b.md, new, holds the text it had: (kb1, kb2,
    the document of a.md)."""
    kb1, kb2 = tmp / "kb1", tmp / "kb2"
    write(kb1 / "a.md", X)
    write(kb2 / "other.md", "# Other\n\nOther things.\n")
    ingest(store, [str(kb1)])
    ingest(store, [str(kb2)])
    did = next(d for d, _t, s in store.documents() if s.endswith("a.md"))
    edit_first(store, did)
    (kb1 / "a.md").unlink()
    write(kb2 / "b.md", X)
    return kb1, kb2, did


def test_a_file_moved_between_folders_synced_in_separate_runs_keeps_its_document(tmp_path):
    """A file moved from kb1 to kb2, the folders synced apart (kb2 first): its document follows it, edits kept, and
    kb1's prune then finds nothing to remove — not followed, the prune deleted the document with its edits."""
    store = sqlite_store(tmp_path)
    kb1, kb2, did = _gone_with_copy(tmp_path, store)
    rep = ingest(store, [str(kb2)], prune=True)
    assert rep.moved == ((str(kb1 / "a.md"), str(kb2 / "b.md")),) and rep.documents == 0 and rep.pruned == ()
    assert rep.edited == (str(kb2 / "b.md"),)  # the store's edit kept
    assert ingest(store, [str(kb1)], prune=True).pruned == ()
    assert dict((d, s) for d, _t, s in store.documents())[did] == str(kb2 / "b.md")


def test_a_gone_file_of_the_runs_folders_is_followed_before_one_elsewhere(tmp_path):
    """Two gone files of one text, one outside the run's folders and one inside: the one inside is followed."""
    store = sqlite_store(tmp_path)
    out, kb = tmp_path / "out", tmp_path / "kb"
    write(out / "a.md", X)
    write(kb / "z.md", X)
    ingest(store, [str(out)])
    ingest(store, [str(kb)])
    ids = {Path(s).parent.name: d for d, _t, s in store.documents()}
    (out / "a.md").unlink()
    (kb / "z.md").rename(kb / "y.md")
    rep = ingest(store, [str(kb)])
    assert rep.moved == ((str(kb / "z.md"), str(kb / "y.md")),) and rep.documents == 0
    assert dict((d, s) for d, _t, s in store.documents())[ids["out"]] == str(out / "a.md")  # left as it was


def test_a_file_moved_between_folders_ingested_in_one_run_is_followed(tmp_path):
    store = sqlite_store(tmp_path)
    kb1, kb2, did = _gone_with_copy(tmp_path, store)
    rep = ingest(store, [str(kb1), str(kb2)], prune=True)
    assert rep.moved == ((str(kb1 / "a.md"), str(kb2 / "b.md")),) and rep.documents == 0 and rep.pruned == ()
    assert rep.edited == (str(kb2 / "b.md"),)


def test_a_file_renamed_and_named_alone_is_followed(tmp_path):
    store = sqlite_store(tmp_path)
    a = write(tmp_path / "d" / "a.md", X)
    ingest(store, [str(a)])
    a.rename(tmp_path / "d" / "b.md")
    rep = ingest(store, [str(tmp_path / "d" / "b.md")])
    assert rep.moved == ((str(a), str(tmp_path / "d" / "b.md")),) and rep.documents == 0


def test_the_gone_file_of_the_same_folder_is_followed_first(tmp_path):
    """Two gone files of the same text, one in the folder the new file is found in: that one is followed."""
    store = sqlite_store(tmp_path)
    kb1, kb2 = tmp_path / "kb1", tmp_path / "kb2"
    write(kb1 / "a.md", X)
    write(kb2 / "a.md", X)
    ingest(store, [str(kb1), str(kb2)])
    ids = {s: d for d, _t, s in store.documents()}
    (kb1 / "a.md").unlink()
    (kb2 / "a.md").rename(kb2 / "b.md")
    rep = ingest(store, [str(kb1), str(kb2)], prune=True)
    assert rep.moved == ((str(kb2 / "a.md"), str(kb2 / "b.md")),) and rep.pruned == (str(kb1 / "a.md"),)
    assert [d for d, _t, _s in store.documents()] == [ids[str(kb2 / "a.md")]]


def test_a_copy_listed_before_the_file_moved_does_not_take_its_document(tmp_path):
    """A folder renamed (projects -> proj) holding a copy made of a file (plan-copy.md, listed before plan.md): the
    copy took the document, plan.md itself was stored anew."""
    store = sqlite_store(tmp_path)
    kb = tmp_path / "kb"
    write(kb / "projects" / "plan.md", X)
    ingest(store, [str(kb)])
    [did] = [d for d, _t, _s in store.documents()]
    (kb / "projects").rename(kb / "proj")
    write(kb / "proj" / "plan-copy.md", X)
    rep = ingest(store, [str(kb)], prune=True)
    assert rep.moved == ((str(kb / "projects" / "plan.md"), str(kb / "proj" / "plan.md")),)
    assert rep.new == (str(kb / "proj" / "plan-copy.md"),) and rep.pruned == ()
    assert dict((d, s) for d, _t, s in store.documents())[did] == str(kb / "proj" / "plan.md")


def test_each_file_is_read_once_to_be_checked(tmp_path, monkeypatch):
    """A file moved, and one changed, were read again by their check (:meth:`FileChecks._moved`, ``_merge``) after
    the caller read them to hash them."""
    kb = tmp_path / "kb"
    write(kb / "a.md", X)
    write(kb / "c.md", "# Cellos\n\nCellos sing.\n")
    store = Store.open(str(tmp_path / "kb.db"), settings=HASH)
    ingest(store, [str(kb)])
    (kb / "a.md").rename(kb / "b.md")
    write(kb / "c.md", "# Cellos\n\nCellos sing low.\n")
    reads: list[str] = []
    real = ing.read_text_file
    monkeypatch.setattr(ing, "read_text_file", lambda p, *a, **k: reads.append(Path(p).name) or real(p, *a, **k))
    rep = ingest(store, [str(kb)], prune=True)
    assert rep.moved == ((str(kb / "a.md"), str(kb / "b.md")),) and rep.updated == (str(kb / "c.md"),)
    assert sorted(reads) == ["b.md", "c.md"]
    store.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12).map(lambda t: "/" + t), unique=True, max_size=3))
def test_reached_paths_come_back_as_written(paths):
    """Any paths (brackets, quotes, newlines in names) come back as written; one path is stored as itself, what
    a store of the last logichunk holds and still reads."""
    assert reached_of(reached_value(paths)) == tuple(paths)
    assert reached_value(paths[:1]) == (paths[0] if paths else None)


def test_the_cli_names_new_files_and_a_link_gone_whose_file_stays(tmp_path, monkeypatch, capsys):
    from logichunk.cli import main

    write(tmp_path / "out" / "x.md", X)
    for kb in ("kb1", "kb2"):
        (tmp_path / kb).mkdir()
        (tmp_path / kb / "l.md").symlink_to(tmp_path / "out" / "x.md")
    monkeypatch.chdir(tmp_path)
    db = ["--db", "kb.db", "--embedder", "hash:64"]
    assert main(["ingest", "kb1", "--prune", *db]) == 0 and main(["ingest", "kb2", "--prune", "--verbose", *db]) == 0
    err = capsys.readouterr().err
    assert "new: kb1/l.md" in err.splitlines() and "unchanged, skipped: kb2/l.md" in err.splitlines()
    (tmp_path / "kb2" / "l.md").unlink()
    assert main(["ingest", "kb2", "--prune", *db]) == 0
    out, err = capsys.readouterr()
    assert "removed" not in out
    assert err.splitlines()[-1].startswith("not removed, gone from here but still reached elsewhere: kb2/l.md (document ")
    assert err.splitlines()[-1].endswith(" stays: its file is still reached by kb1/l.md)")


def test_the_search_table_tells_two_documents_of_one_title_apart(tmp_path, monkeypatch, capsys):
    from logichunk.cli import main

    write(tmp_path / "kb1" / "README.md", "# Readme\n\nInstall alpha with pip.\n")
    write(tmp_path / "kb2" / "deep" / "README.md", "# Readme\n\nInstall beta with conda.\n")
    write(tmp_path / "kb2" / "notes.md", "# Notes\n\nInstall nothing.\n")
    monkeypatch.chdir(tmp_path)
    assert main(["ingest", "kb1", "kb2", "--db", "kb.db", "--embedder", "hash:64", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "install", "--db", "kb.db", "--embedder", "hash:64", "--top-k", "3"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    cells = {c for r in rows for c in ("kb1/README.md", "deep/README.md", "notes ") if f" {c}" in r}
    assert cells == {"kb1/README.md", "deep/README.md", "notes "}  # a title of its own stays the title
    assert main(["search", "install", "--db", "kb.db", "--embedder", "hash:64", "--format", "jsonl"]) == 0
    import json

    sources = {json.loads(line)["source"] for line in capsys.readouterr().out.splitlines()}
    assert str(tmp_path / "kb1" / "README.md") in sources and str(tmp_path / "kb2" / "deep" / "README.md") in sources

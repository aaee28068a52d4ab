"""A file ingested again after paragraphs or headings were added or removed in it, into a document edited in the
store: merged as git merges lines (the file's blocks at the last ingest, by their hashes, aligned with its blocks
now) — blocks added in the file are added, removed ones removed, new headings make chapters, removed ones join
them, the store's edits stay, and untouched blocks keep their ids. Before, every such change was refused ("a
heading added, removed or moved ... --replace") and the store's edits had to be copied into the file by hand."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.cli import main
from logichunk.config import Settings
from logichunk.retrieve import retrieve
from logichunk.store import Store
from logichunk.store.ingest import chapter_blocks, ingest
from pg_fixture import backend, make_store, pg_url  # noqa: F401

SECTIONS = ["# Intro\n\n", "Cats purr.\n\n", "Dogs bark.\n\n", "# Usage\n\n", "Run it.\n\n", "Stop it.\n"]
STORE_EDIT = "Stop, the store's.\n"


def texts(store: Store) -> list[str]:
    return [b.content for b in store.blocks()]


def titles(store: Store) -> list[str | None]:
    return [t for _c, _o, t in store.chapters(store.documents()[0][0])]


def write(path: Path, paras: list[str]) -> None:
    path.write_text("".join(paras), encoding="utf-8")


def _edited(make_store, tmp_path) -> tuple[Store, Path, list[str]]:
    """:data:`SECTIONS` ingested and chunked, its last block then edited in the store: (store, file, block ids)."""
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    store = make_store(settings=Settings(embedder="hash:64"))
    ingest(store, [str(f)])
    ids = [b.id for b in store.blocks()]
    store.edit_block(ids[5], STORE_EDIT)
    ingest(store, [str(f)])  # (unchanged file: the edit re-chunked)
    return store, f, ids


def _check_fresh(store: Store, want: list[str]) -> None:
    """The document is ``want``, cut in chapters and blocks as a fresh ingest of that text would be, and chunked."""
    fresh = chapter_blocks("".join(want))
    assert texts(store) == want == [t for _t, row in fresh for t in row]
    assert titles(store) == [t for t, _row in fresh]
    did = store.documents()[0][0]
    assert [len(store.blocks(c)) for c, _o, _t in store.chapters(did)] == [len(row) for _t, row in fresh]
    assert store.blocks(dirty=True) == []
    for rank, (c, _o, _t) in enumerate(store.chapters(did), 1):  # each chapter's parents tile it, numbered by rank
        rows = sorted(store.chunks(level="parent", chapter_id=c), key=lambda r: r.order)
        assert rows and "".join(r.content for r in rows) == store.chapter_text(c)
        assert [r.dotted_id for r in rows] == [f"{rank}.{i}" for i in range(1, len(rows) + 1)]


def test_a_paragraph_added_in_the_file_is_added_beside_a_store_edit(make_store, tmp_path):
    store, f, ids = _edited(make_store, tmp_path)
    usage = {r.pk for r in store.chunks(level="parent", chapter_id=store.blocks()[3].chapter_id)}
    write(f, [*SECTIONS[:2], "Cats sleep.\n\n", *SECTIONS[2:]])
    rep = ingest(store, [str(f)])
    want = [*SECTIONS[:2], "Cats sleep.\n\n", *SECTIONS[2:5], STORE_EDIT]
    assert not rep.failed and rep.updated == rep.edited == (str(f),) and rep.conflicts == () and rep.removed == ()
    assert len(rep.added) == 1 and str(f) in rep.added[0]
    _check_fresh(store, want)
    now = [b.id for b in store.blocks()]
    assert now[:2] == ids[:2] and now[3:] == ids[2:] and now[2] not in ids and now[2] in rep.added[0]
    # the untouched chapter kept its chunks (rows, vectors): only the chapter the file changed was cut again
    assert {r.pk for r in store.chunks(level="parent", chapter_id=store.blocks()[4].chapter_id)} == usage
    assert "Cats sleep" in retrieve(store, "Cats sleep", mode="hybrid", top_k=1)[0].chunk.meta["text"]


def test_a_paragraph_removed_in_the_file_is_removed_beside_a_store_edit(make_store, tmp_path):
    store, f, ids = _edited(make_store, tmp_path)
    usage = {r.pk for r in store.chunks(level="parent", chapter_id=store.blocks()[3].chapter_id)}
    write(f, [SECTIONS[0], *SECTIONS[2:]])
    rep = ingest(store, [str(f)])
    assert not rep.failed and rep.added == () and len(rep.removed) == 1 and ids[1] in rep.removed[0]
    _check_fresh(store, [SECTIONS[0], *SECTIONS[2:5], STORE_EDIT])
    assert [b.id for b in store.blocks()] == [ids[0], *ids[2:]]
    # the untouched chapter kept its chunks (rows, vectors): only the chapter the file changed was cut again
    assert {r.pk for r in store.chunks(level="parent", chapter_id=store.blocks()[2].chapter_id)} == usage


def test_a_section_added_in_the_file_makes_a_chapter(make_store, tmp_path):
    store, f, ids = _edited(make_store, tmp_path)
    write(f, [*SECTIONS[:3], "# Birds\n\n", "Birds sing.\n\n", *SECTIONS[3:]])
    rep = ingest(store, [str(f)])
    assert not rep.failed and len(rep.added) == 2 and rep.removed == ()
    _check_fresh(store, [*SECTIONS[:3], "# Birds\n\n", "Birds sing.\n\n", *SECTIONS[3:5], STORE_EDIT])
    assert titles(store) == ["Intro", "Birds", "Usage"]
    now = [b.id for b in store.blocks()]
    assert now[:3] == ids[:3] and now[5:] == ids[3:]


def test_a_heading_removed_in_the_file_joins_its_chapter_to_the_one_before(make_store, tmp_path):
    store, f, ids = _edited(make_store, tmp_path)
    write(f, [*SECTIONS[:3], *SECTIONS[4:]])
    rep = ingest(store, [str(f)])
    assert not rep.failed and rep.added == () and len(rep.removed) == 1 and ids[3] in rep.removed[0]
    _check_fresh(store, [*SECTIONS[:3], SECTIONS[4], STORE_EDIT])
    assert titles(store) == ["Intro"] and [b.id for b in store.blocks()] == [*ids[:3], *ids[4:]]


def test_a_block_removed_in_the_file_but_edited_in_the_store_is_a_conflict_nothing_lost(make_store, tmp_path):
    store, f, ids = _edited(make_store, tmp_path)
    write(f, SECTIONS[:5])
    rep = ingest(store, [str(f)])
    assert rep.failed and len(rep.conflicts) == 1 and ids[5] in rep.conflicts[0]
    assert "removed (or rewritten around) in the file but edited in the store" in rep.conflicts[0]
    assert "kept" in rep.conflicts[0]
    assert texts(store) == [*SECTIONS[:5], STORE_EDIT] and [b.id for b in store.blocks()] == ids
    rep = ingest(store, [str(f)])  # said again until settled
    assert len(rep.conflicts) == 1 and texts(store)[-1] == STORE_EDIT
    write(f, [*SECTIONS[:5], STORE_EDIT])  # settled: the store's text put back in the file
    rep = ingest(store, [str(f)])
    assert not rep.failed and texts(store) == [*SECTIONS[:5], STORE_EDIT]


def test_the_cli_reports_added_and_removed_blocks(tmp_path, capsys):
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    db = str(tmp_path / "kb.db")
    assert main(["ingest", str(f), "--db", db, "--embedder", "hash:64", "--quiet"]) == 0
    capsys.readouterr()
    with Store.open(db, settings=Settings(embedder="hash:64")) as store:
        block = store.blocks()[5].id
    assert main(["edit", "--db", db, "--block", block, "--text", STORE_EDIT, "--embedder", "hash:64"]) == 0
    write(f, ["# Intro\n\n", "Cats purr.\n\n", "# Dogs\n\n", "Dogs bark.\n\n", "Dogs dig.\n\n", *SECTIONS[3:]])
    capsys.readouterr()
    assert main(["ingest", str(f), "--db", db, "--embedder", "hash:64", "--format", "jsonl"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert len(rep["added"]) == 2 and rep["removed"] == [] and rep["conflicts"] == []
    write(f, [*SECTIONS[:2], *SECTIONS[3:]])
    assert main(["ingest", str(f), "--db", db, "--embedder", "hash:64"]) == 0
    out, err = capsys.readouterr()
    assert "removed 3 block(s)" in out and "Traceback" not in err
    with Store.open(db, settings=Settings(embedder="hash:64")) as store:
        assert texts(store) == [*SECTIONS[:2], *SECTIONS[3:5], STORE_EDIT]


# ----------------------------------------------------------------------------- the invariant


_files = itertools.count()
_BASE = ["# Intro\n\n", "P0 cats purr.\n\n", "P1 dogs bark.\n\n", "# Usage\n\n", "P2 run it.\n\n", "P3 stop it.\n\n",
         "# Notes\n\n", "P4 none yet.\n\n"]
_edit = st.tuples(st.sampled_from(["insert", "delete", "modify"]), st.integers(0, 40), st.booleans())


@settings(max_examples=60, deadline=None)
@given(store_edits=st.sets(st.integers(0, len(_BASE) - 1), min_size=1, max_size=2),
       rounds=st.lists(st.lists(_edit, min_size=1, max_size=5), min_size=1, max_size=2))
def test_file_edits_away_from_the_store_s_merge_as_git_would(store_edits, rounds):
    """Random file edits (paragraphs and headings inserted, deleted, changed), round after round, that leave the
    store-edited blocks alone: after each re-ingest the document's text is the new file's with the store's edits
    applied, cut in chapters as a fresh ingest cuts it and chunked (each chapter's parents tile it, numbered by
    its rank), nothing is a conflict, and every block the file did not touch keeps its id."""
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / f"doc{next(_files)}.md"
        write(f, _BASE)
        with Store.open(":memory:", settings=Settings(embedder="hash:16")) as store:
            ingest(store, [str(f)])
            ids = [b.id for b in store.blocks()]
            mine = {ids[i]: (f"# {_BASE[i][2:-2]} by the store\n\n" if _BASE[i].startswith("#") else
                             f"{_BASE[i][:-2]} by the store.\n\n") for i in store_edits}
            for bid, text in mine.items():
                store.edit_block(bid, text)
            theirs: list[tuple[str | None, str]] = list(zip(ids, _BASE, strict=True))  # (block id or None, text)
            fresh = itertools.count()
            for edits in rounds:
                for op, at, heading in edits:
                    free = [k for k, (bid, _t) in enumerate(theirs) if bid not in mine]
                    new = f"# New {next(fresh)}\n\n" if heading else f"New paragraph {next(fresh)}.\n\n"
                    if op == "insert":
                        theirs.insert(at % (len(theirs) + 1), (None, new))
                    elif free and op == "delete" and len(theirs) > 1:
                        del theirs[free[at % len(free)]]
                    elif free:
                        theirs[free[at % len(free)]] = (None, new)
                write(f, [t for _b, t in theirs])
                rep = ingest(store, [str(f)])
                want = [mine.get(bid, t) if bid is not None else t for bid, t in theirs]
                assert not rep.failed and rep.conflicts == ()
                _check_fresh(store, want)
                now = [b.id for b in store.blocks()]
                untouched = [b for b, _t in theirs if b is not None]  # (a changed block may keep its id too)
                assert [b for b in now if b in set(untouched)] == untouched
                theirs = [(b, t) for b, (_b, t) in zip(now, theirs, strict=True)]
                ids = now


def test_a_paragraph_removed_and_another_added_pairs_blocks_by_their_text_not_their_place(make_store, tmp_path):
    """As many blocks as before, but one removed and one added: the store's edit stays with its block (before,
    the blocks were paired by place, the edited one with its neighbour's text: a conflict, the new one dropped)."""
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    store = make_store(settings=Settings(embedder="hash:64"))
    ingest(store, [str(f)])
    ids = [b.id for b in store.blocks()]
    store.edit_block(ids[2], "Dogs bark, the store's.\n\n")
    write(f, [SECTIONS[0], *SECTIONS[2:], "\n\nAdded.\n"])
    rep = ingest(store, [str(f)])
    assert not rep.failed and len(rep.added) == 1 and len(rep.removed) == 1 and ids[1] in rep.removed[0]
    _check_fresh(store, [SECTIONS[0], "Dogs bark, the store's.\n\n", *SECTIONS[3:5], "Stop it.\n\n\n", "Added.\n"])
    assert [b.id for b in store.blocks()][:4] == [ids[0], *ids[2:5]]


def test_a_block_added_in_the_store_is_kept_when_the_file_s_blocks_move(tmp_path):
    """A block added in the store holds no text of the file's: it is no part of the base, the others are aligned
    and it stays where the store put it, a store edit kept (before: the file was refused, ``--replace`` needed).
    The next ingest of the same file changes nothing."""
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    with Store.open(str(tmp_path / "kb.db"), settings=Settings(embedder="hash:64")) as store:
        ingest(store, [str(f)], rechunk=False)
        ids = [b.id for b in store.blocks()]
        added = store.add_block(store.blocks()[0].chapter_id, "Added in the store.\n\n")
        store.edit_block(ids[5], STORE_EDIT)
        write(f, [SECTIONS[0], *SECTIONS[2:]])
        rep = ingest(store, [str(f)], rechunk=False)
        assert not rep.failed and rep.edited == rep.updated == (str(f),) and len(rep.removed) == 1
        assert ids[1] in rep.removed[0] and rep.added == ()
        want = [SECTIONS[0], SECTIONS[2], "Added in the store.\n\n", *SECTIONS[3:5], STORE_EDIT]
        assert texts(store) == want and [b.id for b in store.blocks()] == [ids[0], ids[2], added, *ids[3:]]
        again = ingest(store, [str(f)], rechunk=False)
        assert again.updated == again.added == again.removed == again.conflicts == () and texts(store) == want


def test_a_block_added_in_the_store_alone_is_a_store_edit_replace_would_lose(tmp_path):
    """The only store change a block added there (``add_block``: revision 1, no record of a file's text): the
    merge keeps it (an edit, said), and ``--replace`` names it among the edits it drops for the file's text."""
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    with Store.open(str(tmp_path / "kb.db"), settings=Settings(embedder="hash:64")) as store:
        ingest(store, [str(f)], rechunk=False)
        added = store.add_block(store.blocks()[0].chapter_id, "Added in the store.\n\n")
        write(f, [SECTIONS[0], *SECTIONS[2:]])
        rep = ingest(store, [str(f)], rechunk=False)
        assert not rep.failed and rep.edited == (str(f),) and "Added in the store.\n\n" in texts(store)
        rep = ingest(store, [str(f)], rechunk=False, replace=True)
        assert any(added in line for line in rep.overwritten) and texts(store) == [SECTIONS[0], *SECTIONS[2:]]


def test_a_paragraph_of_two_alike_removed_beside_an_edit_of_one_keeps_the_edit(make_store, tmp_path):
    """Two blocks of one text, one edited in the store, one removed in the file: the edited one stays (an edit
    kept, no conflict), the other goes — whichever of the two the alignment matched — and the next ingest of
    the same file changes nothing."""
    f = tmp_path / "a.md"
    write(f, ["Intro.\n\n", "Same.\n\n", "Same.\n\n", "End.\n"])
    store = make_store(settings=Settings(embedder="hash:64"))
    ingest(store, [str(f)])
    ids = [b.id for b in store.blocks()]
    store.edit_block(ids[2], "Same, edited.\n\n")
    write(f, ["Intro.\n\n", "Same.\n\n", "End.\n"])
    rep = ingest(store, [str(f)])
    assert not rep.failed and rep.edited == (str(f),) and len(rep.removed) == 1 and ids[1] in rep.removed[0]
    _check_fresh(store, ["Intro.\n\n", "Same, edited.\n\n", "End.\n"])
    rep = ingest(store, [str(f)])
    assert rep.removed == rep.added == rep.conflicts == () and texts(store) == ["Intro.\n\n", "Same, edited.\n\n",
                                                                                  "End.\n"]


_ANY_EDIT = st.tuples(st.sampled_from(["insert", "delete", "modify"]), st.integers(0, 40),
                      st.sampled_from(["heading", "paragraph", "same"]))


@settings(max_examples=60, deadline=None)
@given(store_edits=st.lists(st.tuples(st.integers(0, len(_BASE) - 1), st.booleans()), min_size=1, max_size=3),
       file_edits=st.lists(_ANY_EDIT, min_size=1, max_size=6))
def test_file_edits_anywhere_lose_no_text_and_settle(store_edits, file_edits):
    """Random file edits anywhere, the store-edited blocks too: every store edit is still in its block; a block of
    the file missing from the document is said in a conflict; each chapter is chunked; and ingesting the same file
    again changes nothing (no block added or removed, the same text, the same conflicts)."""
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / f"doc{next(_files)}.md"
        base = [*_BASE, "Same.\n\n"]
        write(f, base)
        with Store.open(":memory:", settings=Settings(embedder="hash:16")) as store:
            ingest(store, [str(f)])
            ids = [b.id for b in store.blocks()]
            mine = {ids[i]: (f"{base[i][:-2]} by the store.\n\n" if plain else "# Store\n\nheading and body.\n\n")
                    for i, plain in store_edits}
            for bid, text in mine.items():
                store.edit_block(bid, text)
            theirs = list(base)
            for k, (op, at, kind) in enumerate(file_edits):
                new = {"heading": f"# New {k}\n\n", "paragraph": f"New paragraph {k}.\n\n", "same": "Same.\n\n"}[kind]
                if op == "insert":
                    theirs.insert(at % (len(theirs) + 1), new)
                elif op == "delete" and len(theirs) > 1:
                    del theirs[at % len(theirs)]
                else:
                    theirs[at % len(theirs)] = new
            write(f, theirs)
            rep = ingest(store, [str(f)])
            now = {b.id: b.content for b in store.blocks()}
            assert all(now.get(bid) == text for bid, text in mine.items())  # every store edit still there
            edited_base = {base[i] for i, _p in store_edits}  # (the file's text of a block the store edited)
            missing = [t for _h, row in chapter_blocks("".join(theirs)) for t in row
                       if t not in now.values() and t not in edited_base]
            assert len(rep.conflicts) >= min(1, len(missing))  # a file's text not taken is said
            assert store.blocks(dirty=True) == []
            did = store.documents()[0][0]
            for rank, (c, _o, _t) in enumerate(store.chapters(did), 1):
                rows = sorted(store.chunks(level="parent", chapter_id=c), key=lambda r: r.order)
                assert "".join(r.content for r in rows) == store.chapter_text(c)
                assert [r.dotted_id for r in rows] == [f"{rank}.{i}" for i in range(1, len(rows) + 1)]
            again = ingest(store, [str(f)])
            assert again.added == again.removed == () and {b.id: b.content for b in store.blocks()} == now
            assert len(again.conflicts) == len(rep.conflicts)


def test_a_rewrite_decided_before_an_edit_writes_nothing(make_store, tmp_path):
    """The rewrite checks the document's blocks are still at the revisions the merge read (an edit meanwhile:
    decide again): a stale one writes nothing."""
    from logichunk.store.ingest import structure_merge

    store, f, ids = _edited(make_store, tmp_path)
    did = store.documents()[0][0]
    sm = structure_merge(store.source_blocks(did), did, chapter_blocks("".join([SECTIONS[0], *SECTIONS[2:]])))
    store.edit_block(ids[1], "Cats purr, edited meanwhile.\n\n")
    assert store.rewrite_document(did, dict(sm.revisions), sm.chapters) is None
    assert texts(store) == [SECTIONS[0], "Cats purr, edited meanwhile.\n\n", *SECTIONS[2:5], STORE_EDIT]
    write(f, [SECTIONS[0], *SECTIONS[2:]])  # the file removed that block: a conflict now, the edit kept
    rep = ingest(store, [str(f)])
    assert len(rep.conflicts) == 1 and ids[1] in rep.conflicts[0] and texts(store)[1].endswith("meanwhile.\n\n")

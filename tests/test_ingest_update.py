"""A changed file ingested again updates its document in place, on both backends: the same document id, the
blocks the file kept keep their ids, chunks and vectors, the rest follow the file, and the document is what a fresh
ingest of the file gives (chapters, blocks, chunk spans). Before, a changed file whose document the store never
edited was refused ("stored already ... with other text"), and ``--replace`` stored it as a new document: every id,
chunk row and ref into it gone. ``--replace`` on a document edited in the store drops those edits for the file's
text, but in place too."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.cli import main
from logichunk.config import Settings
from logichunk.integrations import kb
from logichunk.store import Store
from logichunk.store.ingest import ingest
from logichunk.store.refs import RefChanged, make_ref
from pg_fixture import CountingEmbedder, backend, make_store, pg_url  # noqa: F401

SMALL = Settings(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50,
                 child_max_size=80, embedder="hash:64")
EN = ["river", "mountain", "teacher", "sword", "market", "price", "winter", "snow", "tea", "rain", "road", "bread"]
ZH = ["师父", "山路", "商人", "粮食", "剑法", "大雨", "茶馆", "少年", "冬天", "小镇", "集市", "雪花"]


def para(k: int, n: int = 4, zh: bool = False) -> str:
    """A paragraph of ``n`` sentences, its words picked by ``k`` (told apart from the others by its number)."""
    if zh:
        return "".join(f"第{k}段{ZH[(k + i) % 12]}和{ZH[(3 * k + i) % 12]}在一起。" for i in range(n)) + "\n\n"
    return "".join(f"Paragraph {k} says the {EN[(k + i) % 12]} met the {EN[(3 * k + i) % 12]}. " for i in range(n)
                   ).rstrip() + "\n\n"


SECTIONS = ["# Intro\n\n", para(1), para(2), "# Usage\n\n", para(3), para(4), "# Notes\n\n", para(5), para(6)]


def write(path: Path, paras: list[str]) -> None:
    path.write_text("".join(paras), encoding="utf-8")


def texts(store: Store) -> list[str]:
    return [b.content for b in store.blocks()]


def shape(store: Store) -> tuple[list, list]:
    """The one document as a fresh ingest is compared with: its chapters (title, block texts), and its chunks
    (chapter rank, level, dotted id, span, text)."""
    (did, _t, _s), = store.documents()
    chapters = store.chapters(did)
    rank = {cid: k for k, (cid, _o, _t) in enumerate(chapters)}
    rows = [(title, [b.content for b in store.blocks(cid)]) for cid, _o, title in chapters]
    chunks = sorted((rank[r.chapter_id], r.level, r.dotted_id, r.start, r.end, r.content)
                    for r in store.chunks(document_id=did))
    return rows, chunks


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------------- one change, in place


def test_a_changed_paragraph_updates_the_document_in_place(make_store, tmp_path):
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    emb = CountingEmbedder()
    store = make_store(settings=SMALL, embedder=emb)
    ingest(store, [str(f)])
    (did, _t, _s), = store.documents()
    ids = [b.id for b in store.blocks()]
    others = {r.pk for r in store.chunks(document_id=did) if r.chapter_id != store.blocks()[4].chapter_id}
    emb.texts.clear()
    changed = para(3).replace("Paragraph 3 says", "Paragraph 3 now says")
    write(f, [*SECTIONS[:4], changed, *SECTIONS[5:]])
    rep = ingest(store, [str(f)])
    assert rep.updated == (str(f),) and not rep.failed and rep.documents == 0 and rep.replaced == ()
    assert [d for d, _t, _s in store.documents()] == [did] and [b.id for b in store.blocks()] == ids
    assert "".join(texts(store)) == f.read_text(encoding="utf-8") and store.blocks(dirty=True) == []
    # the chapters the file did not touch kept their chunk rows (and vectors); only new text was embedded
    assert {r.pk for r in store.chunks(document_id=did)} >= others
    assert emb.texts and all(t in changed or "Paragraph 3 now" in t for t in emb.texts), emb.texts


def test_paragraphs_and_headings_added_and_removed_follow_the_file(make_store, tmp_path):
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    store = make_store(settings=SMALL)
    ingest(store, [str(f)])
    (did, _t, _s), = store.documents()
    ids = [b.id for b in store.blocks()]
    want = [*SECTIONS[:2], "# Birds\n\n", para(7), *SECTIONS[2:3], *SECTIONS[4:]]  # (# Usage removed)
    write(f, want)
    rep = ingest(store, [str(f)])
    assert rep.updated == (str(f),) and len(rep.added) == 2 and len(rep.removed) == 1 and ids[3] in rep.removed[0]
    assert [d for d, _t, _s in store.documents()] == [did] and texts(store) == want
    now = [b.id for b in store.blocks()]
    assert now[:2] == ids[:2] and now[4] == ids[2] and now[5:] == ids[4:]
    assert [t for _c, _o, t in store.chapters(did)] == ["Intro", "Birds", "Notes"]


def test_a_heading_added_above_kept_paragraphs_takes_their_chunks_into_its_chapter(make_store, tmp_path):
    """The kept paragraphs' parents move to a chapter the rewrite makes: it failed on a foreign key (the chapter
    was inserted after its parents were moved into it)."""
    f = tmp_path / "a.md"
    write(f, [para(0), para(1), para(2)])
    store = make_store(settings=SMALL)
    ingest(store, [str(f)])
    ids = [b.id for b in store.blocks()]
    write(f, [para(9), "# Later\n\n", para(1), para(2)])
    rep = ingest(store, [str(f)])
    assert rep.updated == (str(f),) and [b.id for b in store.blocks()][2:] == ids[1:]
    fresh = make_store(settings=SMALL)
    ingest(fresh, [str(f)])
    assert shape(store) == shape(fresh)


def test_the_cli_reports_updated_in_text_and_jsonl_and_exits_0(tmp_path, capsys):
    f, db = tmp_path / "a.md", str(tmp_path / "kb.db")
    write(f, ["# T\n\n", "Para one.\n\n", "Para two.\n"])
    assert cli(capsys, "ingest", str(f), "--db", db, "--embedder", "hash:64")[0] == 0
    write(f, ["# T\n\n", "Para one, changed.\n\n", "Para two.\n\n", "Para three.\n"])
    code, out, err = cli(capsys, "ingest", str(f), "--db", db, "--embedder", "hash:64")
    assert code == 0 and "updated 1 document(s)" in out and "added 1 block(s)" in out
    assert f"updated from the file: {f}" in err and "--replace" not in err
    write(f, ["# T\n\n", "Para one, changed.\n\n", "Para three.\n"])
    code, out, _err = cli(capsys, "ingest", str(f), "--db", db, "--embedder", "hash:64", "--format", "jsonl")
    rep = json.loads(out)
    assert code == 0 and rep["updated"] == [str(f)] and len(rep["removed"]) == 1 and rep["documents"] == 0


# ----------------------------------------------------------------------------- --replace over store edits


def test_replace_drops_the_store_edits_for_the_file_but_keeps_the_document(make_store, tmp_path):
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    store = make_store(settings=SMALL)
    ingest(store, [str(f)])
    (did, _t, _s), = store.documents()
    ids = [b.id for b in store.blocks()]
    store.edit_block(ids[4], "Edited in the store.\n\n")
    store.add_block(store.blocks()[7].chapter_id, "Added in the store.\n\n")
    want = [*SECTIONS[:4], para(8), *SECTIONS[5:7], para(9)]  # (block 4 changed in both, block 8 removed)
    write(f, want)
    rep = ingest(store, [str(f)])  # (merged around the block added in the store: it and the edit kept)
    assert rep.refused == () and len(rep.conflicts) == 1 and ids[4] in rep.conflicts[0]  # (block 4: both changed)
    assert texts(store) == [*SECTIONS[:4], "Edited in the store.\n\n", *SECTIONS[5:7], para(9), "Added in the store.\n\n"]
    rep = ingest(store, [str(f)], replace=True)
    assert not rep.failed and rep.replaced == (str(f),) and rep.documents == 0
    assert {line.split("block ")[1].split()[0] for line in rep.overwritten} == {ids[4], store_added(ids, rep)}
    assert [d for d, _t, _s in store.documents()] == [did] and texts(store) == want
    assert [b.id for b in store.blocks()][:8] == ids[:8]
    assert ingest(store, [str(f)]).unchanged == (str(f),)  # the file's text is the document's, recorded


def store_added(ids: list[str], rep) -> str:
    """The id of the block added in the store, among those the report says dropped."""
    return next(bid for line in rep.overwritten if (bid := line.split("block ")[1].split()[0]) not in ids)


def test_several_documents_for_one_file_are_still_refused_or_replaced_by_a_new_one(make_store, tmp_path):
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    store = make_store(settings=SMALL)
    for _ in range(2):
        store.add_document("a", [(None, SECTIONS)], source=str(f.resolve()))
    write(f, [*SECTIONS[:2], para(9)])
    with pytest.raises(Exception, match="2 documents are stored for this one file"):
        ingest(store, [str(f)])
    before = {d for d, _t, _s in store.documents()}
    rep = ingest(store, [str(f)], replace=True)
    assert rep.documents == 1 and rep.replaced == (str(f),) and not ({d for d, _t, _s in store.documents()} & before)


# ----------------------------------------------------------------------------- refs into an updated document


def test_tagged_refs_survive_an_update_or_say_changed(make_store, tmp_path):
    f = tmp_path / "a.md"
    write(f, SECTIONS)
    store = make_store(settings=SMALL)
    ingest(store, [str(f)])
    (did, _t, _s), = store.documents()
    project = kb.Project("p", store)
    before = {make_ref(did, r.dotted_id, r.content): r.content for r in store.chunks(document_id=did)}
    write(f, [SECTIONS[0], para(0), *SECTIONS[1:4], para(3, zh=True), *SECTIONS[5:]])  # renumbers, changes one
    ingest(store, [str(f)])
    now = {r.content for r in store.chunks(document_id=did)}
    moved = changed = 0
    for ref, text in before.items():
        if text in now:
            got = kb.get_chunk(project, ref)
            assert got["text"] == text
            moved += "moved_from" in got
        else:
            with pytest.raises(RefChanged, match="changed since that ref was made"):
                kb.get_chunk(project, ref)
            changed += 1
    assert moved and changed


# ----------------------------------------------------------------------------- the invariant


def _file(draw, zh: bool) -> list[str]:
    n = draw(st.integers(2, 9))
    out = []
    for k in range(n):
        kind = draw(st.sampled_from(["p", "p", "p", "h1", "h2", "fence"]))
        out.append(_piece(kind, k, zh, draw(st.integers(1, 6))))
    return out


def _piece(kind: str, k: int, zh: bool, n: int) -> str:
    if kind == "h1":
        return f"# {'标题' if zh else 'Title'} {k}\n\n"
    if kind == "h2":
        return f"## {'小节' if zh else 'Section'} {k}\n\n"
    if kind == "fence":
        return f"```sh\n# install {k}\npip install pkg{k}\n```\n\n"
    return para(k, n, zh)


@st.composite
def edited_files(draw):
    zh = draw(st.booleans())
    old = _file(draw, zh)
    new = list(old)
    fresh = iter(range(100, 200))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["change", "insert", "delete", "heading", "merge"]))
        i = draw(st.integers(0, max(len(new) - 1, 0)))
        if op == "change" and new:
            new[i] = para(next(fresh), draw(st.integers(1, 6)), zh)
        elif op == "insert":
            new.insert(i, _piece(draw(st.sampled_from(["p", "h1", "h2", "fence"])), next(fresh), zh,
                                 draw(st.integers(1, 6))))
        elif op == "delete" and len(new) > 1:
            del new[i]
        elif op == "heading":
            new.insert(i, _piece("h1", next(fresh), zh, 1))
        elif op == "merge" and i + 1 < len(new):  # two paragraphs joined (a blank line removed)
            new[i : i + 2] = [new[i].rstrip("\n") + "\n" + new[i + 1]]
    trail = draw(st.booleans())  # (a file ending without its blank line: its last block changes with it)
    return "".join(old), "".join(new).rstrip("\n") + "\n" if trail else "".join(new)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=edited_files(), store_edit=st.one_of(st.none(), st.integers(0, 40)), store_add=st.booleans())
def test_an_updated_document_is_what_a_fresh_ingest_of_its_file_gives(make_store, tmp_path_factory, files,
                                                                       store_edit, store_add):
    """Random edits of a random Markdown-ish file (zh or en): after the update the stored text is the file's, byte
    for byte, its chapters, blocks and chunk spans those of a fresh ingest of the file into an empty store, the
    document id kept, and every block whose text the file kept (told apart: once in each) keeps its id. So too
    with ``replace`` over a block edited, or added, in the store before (the file wins every block)."""
    old, new = files
    f = tmp_path_factory.mktemp("u") / "doc.md"
    f.write_text(old, encoding="utf-8")
    store = make_store(settings=SMALL)
    ingest(store, [str(f)])
    (did, _t, _s), = store.documents()
    replace = store_edit is not None or store_add
    if store_edit is not None:
        b = store.blocks()[store_edit % len(store.blocks())]
        store.edit_block(b.id, b.content.rstrip("\n") + " Edited in the store.\n\n")
    if store_add:
        store.add_block(store.blocks()[-1].chapter_id, "\n\nAdded in the store.\n\n")
    before = {b.content: b.id for b in store.blocks()}
    once = {t for t in before if texts(store).count(t) == 1}
    f.write_text(new, encoding="utf-8")
    rep = ingest(store, [str(f)], replace=replace)
    assert not rep.failed and rep.documents == 0 and [d for d, _t, _s in store.documents()] == [did]
    assert "".join(texts(store)) == new and store.blocks(dirty=True) == []
    fresh = make_store(settings=SMALL)
    ingest(fresh, [str(f)])
    assert shape(store) == shape(fresh)
    now = texts(store)
    for b in store.blocks():
        if b.content in once and now.count(b.content) == 1:
            assert b.id == before[b.content]

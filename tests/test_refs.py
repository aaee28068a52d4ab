"""A chunk's ref stays safe after its document is edited (logichunk.store.refs, kb.get_chunk), on both
backends: an edit that lengthens a block renumbers the untouched chunks after it, and a tagged ref
(``DOC#1.2.3@TAG``) made before reads the same text (``moved_from``) or fails saying it changed, never
other text; an untagged ref reads what its id holds now, as before; a malformed tag is one line."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.integrations import kb
from logichunk.store.document_layout import DocLayout
from logichunk.store.refs import (
    TAG_CHARS,
    Ref,
    RefChanged,
    RefNotFound,
    Resolved,
    content_tag,
    make_ref,
    parse_ref,
    resolve,
)
from pg_fixture import CountingEmbedder, backend, make_store, pg_url  # noqa: F401

SMALL = Settings(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50,
                 child_max_size=80, embedder="hash:64")
WORDS = ["river", "mountain", "teacher", "sword", "market", "price", "winter", "snow", "tea", "rain",
         "师父", "山路", "商人", "粮食", "剑法", "大雨", "茶馆", "少年"]


def _block(b: int, n: int) -> str:
    return "".join(f"Block {b} sentence {k} about {WORDS[(b * 5 + k) % len(WORDS)]} and "
                   f"{WORDS[(b + 3 * k) % len(WORDS)]}. " for k in range(n)) + "\n\n"


def _doc(store, blocks: list[str]) -> tuple[kb.Project, str]:
    doc = store.add_document("d", [("c", blocks)])
    store.rechunk_dirty()
    return kb.Project("p", store), doc


def _all_refs(project: kb.Project, doc: str) -> dict[str, str]:
    """Every chunk's and chapter's tagged ref -> its text, as search and get_chunk hand them out."""
    lay = DocLayout.of(project.store, doc)
    out = {make_ref(doc, str(rank), lay.text[a:b]): lay.text[a:b] for _c, rank, _t, a, b in lay.chapters}
    out.update({make_ref(doc, r.dotted_id, r.content): r.content for r in project.store.chunks(document_id=doc)})
    return out


def _lengthen_first_block(store, doc: str) -> None:
    b0 = store.blocks(store.chapters(doc)[0][0])[0]
    store.edit_block(b0.id, b0.content.rstrip() + " " + "".join(
        f"Added sentence {k} about the {WORDS[k % len(WORDS)]} in winter. " for k in range(10)) + "\n\n")
    store.rechunk_block(b0.id)


# ----------------------------------------------------------------------------- parsing


def test_parse_tagged_untagged_and_with_document_id():
    assert parse_ref("ab12#1.2.3@9C1E07AB") == Ref("ab12", "1.2.3", "9c1e07ab")
    assert parse_ref(" ab12#2 ") == Ref("ab12", "2", None)
    assert parse_ref("1.2@" + "f" * 64, document_id="ab12") == Ref("ab12", "1.2", "f" * 64)
    assert str(parse_ref("ab12#1.2@0123abcd")) == "ab12#1.2@0123abcd"
    assert make_ref("ab12", "1.2", "text") == f"ab12#1.2@{content_tag('text')}" and len(content_tag("x")) == TAG_CHARS


@pytest.mark.parametrize("bad", ["ab12#1.2@", "ab12#1.2@xyz12345", "ab12#1.2@1234567", "ab12#1.2@" + "a" * 65,
                                 "ab12#1.2@12 34 56 78", "ab12#1.2@1234\n5678", "ab12#1.02@12345678",
                                 "ab12#1.x@12345678", "#1.2@12345678", "ab12#١.٢"])
def test_a_malformed_ref_is_one_line(bad):
    with pytest.raises(InputError) as e:
        parse_ref(bad)
    assert "\n" not in str(e.value) and str(e.value)


# ----------------------------------------------------------------------------- resolving after edits


def test_an_edit_that_renumbers_resolves_tagged_refs_to_the_same_text(make_store):
    store = make_store(settings=SMALL)
    project, doc = _doc(store, [_block(b, 4) for b in range(5)])
    before = _all_refs(project, doc)
    untagged = {ref: ref.rpartition("@")[0] for ref in before}
    _lengthen_first_block(store, doc)
    moved = changed = same = 0
    for ref, text in before.items():
        try:
            got = kb.get_chunk(project, ref)
        except RefChanged as e:
            assert str(e) == (f"chunk {ref.rpartition('@')[0]} changed since that ref was made (re-chunked after "
                              "an edit); search again")
            changed += 1
            continue
        assert got["text"] == text
        if "moved_from" in got:
            assert got["moved_from"] == ref and got["ref"] != ref and got["ref"] in got["note"]
            assert kb.get_chunk(project, got["ref"])["text"] == text  # the new ref reads it without a move
            assert "moved_from" not in kb.get_chunk(project, got["ref"])
            moved += 1
        else:
            same += 1
    assert moved >= 5 and changed >= 1 and same >= 1, (moved, changed, same)
    # what the tester saw: the same refs untagged now read other text (the reason for the tag)
    assert sum(kb.get_chunk(project, untagged[r])["text"] != t for r, t in before.items()
               if _exists(project, untagged[r])) >= 5


def _exists(project: kb.Project, ref: str) -> bool:
    try:
        kb.get_chunk(project, ref)
    except InputError:
        return False
    return True


def test_an_edit_of_the_chunk_itself_is_a_clear_error(make_store):
    store = make_store(settings=SMALL)
    project, doc = _doc(store, [_block(b, 3) for b in range(3)])
    last = store.blocks(store.chapters(doc)[0][0])[-1]
    row = next(r for r in store.chunks(document_id=doc, level="child") if r.block_id == last.id)
    ref = make_ref(doc, row.dotted_id, row.content)
    assert kb.get_chunk(project, ref)["text"] == row.content and "moved_from" not in kb.get_chunk(project, ref)
    chapter = kb.get_chunk(project, f"{doc}#1")["ref"]
    store.edit_block(last.id, "Completely different words now: tea and snow in the market.\n\n")
    store.rechunk_block(last.id)
    with pytest.raises(RefChanged, match=rf"^chunk {doc}#{row.dotted_id} changed since that ref was made "
                                         r"\(re-chunked after an edit\); search again$"):
        kb.get_chunk(project, ref)
    with pytest.raises(RefChanged):  # a chapter's text changed with it
        kb.get_chunk(project, chapter)


def test_untagged_refs_and_document_id_still_work(make_store):
    store = make_store(settings=SMALL)
    project, doc = _doc(store, [_block(b, 3) for b in range(3)])
    row = store.chunks(document_id=doc, level="child")[0]
    got = kb.get_chunk(project, f"{doc}#{row.dotted_id}")
    assert got["text"] == row.content and got["ref"] == make_ref(doc, row.dotted_id, row.content)
    assert kb.get_chunk(project, row.dotted_id, document_id=doc)["ref"] == got["ref"]
    tagged = kb.get_chunk(project, got["ref"])
    assert tagged == got  # the same answer, refs of the neighbours tagged too
    assert all("@" in n["ref"] for n in [got["parent"], *got["siblings"], *got["children"]] if n)
    with pytest.raises(InputError, match="no chunk '1.99'"):
        kb.get_chunk(project, f"{doc}#1.99")
    with pytest.raises(InputError, match="no chapter 7"):
        kb.get_chunk(project, f"{doc}#7")
    with pytest.raises(RefNotFound, match="no document 'nope' in this project: deleted, or replaced by a re-ingest"):
        kb.get_chunk(project, f"nope#1.1@{content_tag('x')}")
    with pytest.raises(RefChanged):  # a tagged ref to an id that never held that text
        kb.get_chunk(project, f"{doc}#1.99@{content_tag('nothing like this')}")


def test_moved_picks_the_same_depth_then_the_nearest_id():
    """Several chunks may hold the text (a parent of one child has its child's, a block may repeat): a
    child's ref goes to a child, a chapter's to a chapter, the one nearest the id it named."""
    t = "the same text"
    texts = {"1": t, "1.3": t, "1.3.1": t, "2.1.1": t, "1.2": "other", "1.2.1": "other"}

    def at(d):
        return texts.get(d)

    def every():
        return texts

    assert resolve(Ref("d", "1.2.1", content_tag(t)), at, every) == Resolved("1.3.1", moved_from="1.2.1")
    assert resolve(Ref("d", "2.2.1", content_tag(t)), at, every).dotted_id == "2.1.1"
    assert resolve(Ref("d", "1.2", content_tag(t)), at, every).dotted_id == "1.3"
    assert resolve(Ref("d", "2", content_tag(t)), at, every).dotted_id == "1"
    assert resolve(Ref("d", "1.2", content_tag("other")), at, lambda: pytest.fail("searched")) == Resolved("1.2")


# a block: sentences of the words above (or none)
_sentences = st.builds(lambda ws, end: " ".join(ws) + end, st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
                       st.sampled_from([". ", "! ", "。", "？", ".\n"]))
_blocks = st.lists(_sentences, min_size=0, max_size=10).map(lambda ss: "".join(ss) + "\n\n")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_blocks, min_size=1, max_size=6), st.data())
def test_every_tagged_ref_reads_its_text_or_says_it_changed(make_store, blocks, data):
    """For a random edit of a random block (lengthened, shortened, replaced), every tagged ref made
    before resolves to exactly its text or to the 'changed' error, never to other text; and the error
    only when no chunk or chapter of the document holds that text any more."""
    store = make_store(settings=SMALL)
    project, doc = _doc(store, blocks)
    before = _all_refs(project, doc)
    which = data.draw(st.integers(0, len(blocks) - 1))
    old = store.blocks(store.chapters(doc)[0][0])[which]
    how = data.draw(st.sampled_from(["lengthen", "shorten", "replace"]))
    extra = data.draw(_blocks)
    new = {"lengthen": old.content.rstrip("\n") + " " + extra, "replace": extra,
           "shorten": old.content[: len(old.content) // 2].rstrip() + "\n\n"}[how]
    store.edit_block(old.id, new)
    store.rechunk_block(old.id)
    now = set(_all_refs(project, doc).values())
    for ref, text in before.items():
        try:
            got = kb.get_chunk(project, ref)
        except RefChanged:
            assert text not in now, ref
            continue
        assert got["text"] == text, ref


# ----------------------------------------------------------------------------- the CLI, end to end


def test_cli_search_refs_survive_a_cli_edit(tmp_path, capsys):
    """The tester's case: refs from ``logichunk search`` kept across ``logichunk edit``."""
    from logichunk.cli import build_parser
    from logichunk.store import Store

    def run(argv: list[str]) -> str:
        args = build_parser().parse_args(argv)
        assert args.func(args) == 0
        return capsys.readouterr().out

    f = tmp_path / "notes.md"
    f.write_text("# Notes\n\n" + "".join(_block(b, 18) for b in range(5)), encoding="utf-8")  # a parent a block
    db = str(tmp_path / "k.db")
    common = ["--db", db, "--embedder", "hash:64"]
    run(["ingest", str(f), *common, "--quiet"])
    hits = [json.loads(line) for line in run(["search", "river tea winter", *common, "--top-k", "20",
                                               "--format", "jsonl"]).splitlines()]
    assert hits and all(h["ref"] == make_ref(h["document_id"], h["id"], h["text"]) for h in hits)
    table = run(["search", "river tea winter", *common, "--top-k", "3"])
    assert " ref " in table.splitlines()[0] and hits[0]["ref"] in table
    blocks = [json.loads(line) for line in run(["blocks", *common, "--format", "jsonl"]).splitlines()]
    run(["edit", "--block", blocks[1]["id"], "--text", _block(9, 40), *common])  # two parents now: the rest renumbered
    moved = 0
    store = Store.open(db, settings=Settings(embedder="hash:64"))
    try:
        project = kb.Project("default", store)
        for h in hits:
            try:
                got = kb.get_chunk(project, h["ref"])
            except RefChanged:
                continue
            assert got["text"] == h["text"]
            moved += "moved_from" in got
    finally:
        store.close()
    assert moved >= 1


def test_every_search_hit_ref_reads_its_text(tmp_path):
    from logichunk import config as config_mod
    from logichunk.store import Store

    store = Store.open(str(tmp_path / "s.db"), settings=SMALL, embedder=CountingEmbedder(), create=True)
    try:
        project, doc = _doc(store, [_block(b, 4) for b in range(5)])
        for mode in config_mod.RETRIEVE_MODES:
            res = kb.search(project, "river and tea in winter", kb.Limits(), mode=mode, top_k=4)
            for h in res["hits"]:
                got = kb.get_chunk(project, h["ref"])
                assert got["text"] == h["text"] and got["ref"] == h["ref"] and "moved_from" not in got, mode
                if "matched_child" in h:
                    assert kb.get_chunk(project, h["matched_child"]["ref"])["text"] == h["matched_child"]["text"]
    finally:
        store.close()

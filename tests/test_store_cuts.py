"""A store remembers the settings its chunks were cut with (sizes, unit, tokenizer, cut_vectors) and never
mixes two kinds of chunks: other settings are refused, in one line, until every chapter is cut again."""

# ruff: noqa: F811  (pytest fixtures imported from pg_fixture)
from __future__ import annotations

import argparse
import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.chunkers.parent_child import lf_lines
from logichunk.config import Settings
from logichunk.errors import InputError
from logichunk.store import EmbedderMismatchError, Store
from logichunk.store.base import RechunkError
from logichunk.store.cli import add_parser
from logichunk.store.ingest import ingest, ingest_text
from pg_fixture import TableEmbedder, backend, pg_url  # noqa: F401

EN = ("# Penguins\n\nEmperor penguins live in Antarctica. They huddle together through the winter. The males keep the "
      "eggs warm for two months. A storm can last a week. They eat fish, squid and krill. A dive can last twenty "
      "minutes. Seals hunt them near the ice. The chicks wait on land. Their feathers keep out the cold wind and "
      "the sea.\n\n") * 4
ZH = "# 第二章 山门\n\n主角第一次见到师父是在山脚下的小镇。那天下着大雨，茶馆里挤满了躲雨的商人。商人们在谈论粮价。\n\n" * 6
A = Settings(embedder="hash", max_parent_size=600, min_parent_size=60, child_min_size=20, child_target_size=60,
             child_max_size=120)
B = dataclasses.replace(A, max_parent_size=300)


@pytest.fixture
def opener(backend, request, tmp_path):
    """``opener(settings, embedder=None)`` -> the same store (one URL, one project) opened with ``settings``."""
    url = request.getfixturevalue("pg_url") if backend == "postgres" else str(tmp_path / "kb.db")
    project = f"cuts-{tmp_path.name}"
    opened: list[Store] = []

    def open_(settings, embedder=None):
        s = Store.open(url, settings=settings, embedder=embedder or "hash", project=project)
        opened.append(s)
        return s

    yield open_
    for s in opened:
        s.close()


def _parents(store):
    return sorted((c.dotted_id, c.size) for c in store.chunks(level="parent"))


def test_other_sizes_are_refused_until_every_chapter_is_cut_again(opener):
    first = opener(A)
    ingest_text(first, "en", EN)
    first.rechunk_dirty()
    assert first.stored_cut_settings() == first.cut_settings()
    assert first.stored_cut_settings()["max_parent_size"] == 600
    before = _parents(first)
    assert max(size for _, size in before) > 300  # parents the new limit would not allow

    second = opener(B)
    why = second.cut_mismatch()
    assert "max_parent_size 600, now 300" in why
    with pytest.raises(InputError, match="nothing was ingested.*--recut"):
        ingest(second, [])  # checked before any file is listed
    block = next(b for b in second.blocks() if "Antarctica" in b.content)
    assert second.edit_block(block.id, block.content.replace("Antarctica", "the Antarctic"))
    with pytest.raises(RechunkError, match="max_parent_size 600, now 300.*recut"):
        second.rechunk_block(block.id)
    assert _parents(second) == before  # nothing mixed in
    waiting = second.get_block(block.id)
    assert waiting.is_dirty and "max_parent_size 600, now 300" in waiting.last_error  # the edit waits, and says why

    results = second.recut()
    assert results and all(r.status == "rechunked" for r in results)
    assert second.stored_cut_settings()["max_parent_size"] == 300 and second.cut_mismatch() == ""
    assert max(c.size for c in second.chunks(level="parent")) <= 300
    assert "the Antarctic" in "".join(c.content for c in second.chunks(level="parent"))
    assert not second.blocks(dirty=True) and all(b.last_error is None for b in second.blocks())
    # and now the first settings are the other ones
    assert "max_parent_size 300, now 600" in opener(A).cut_mismatch()


def test_another_embedder_is_refused_until_everything_is_re_embedded(opener, tmp_path):
    """A store opened with another embedder than its project's (an edit, a service or an agent with the default)
    re-chunked the edited chapter with it and stored its chunks beside the others': searches with either
    embedder then silently missed part of the project. Now that re-chunk is refused in one line, the edit waits
    and says why, nothing of the other model is written, and ingest --reembed brings every chapter over."""
    first = opener(A)
    ingest_text(first, "en", EN)
    ingest_text(first, "zh", ZH)
    first.rechunk_dirty()
    assert not first.other_embedders()
    other = opener(A, "hash:64")
    assert other.other_embedders()
    block = next(b for b in other.blocks() if "Antarctica" in b.content)
    assert other.edit_block(block.id, block.content.replace("Antarctica", "the Antarctic"))
    with pytest.raises(EmbedderMismatchError, match="embedded with hash-v2-d1024 .*not with the current embedder "
                                                    "hash-v2-d64.*--reembed"):
        other.rechunk_block(block.id)
    assert set(other.stored_embedders()) == {"hash-v2-d1024"}  # nothing mixed in
    assert "hash-v2-d64" in other.get_block(block.id).last_error and other.get_block(block.id).is_dirty
    (tmp_path / "c.md").write_text("A third text about glaciers and sea ice.\n", encoding="utf-8")
    rep = ingest(other, [str(tmp_path / "c.md")], reembed=True)
    assert rep.documents == 1 and set(other.stored_embedders()) == {"hash-v2-d64"} and not other.other_embedders()
    assert not other.blocks(dirty=True) and "the Antarctic" in "".join(c.content for c in other.chunks(level="child"))


def test_ingest_recut_cuts_the_old_and_the_new_files(opener, tmp_path):
    (tmp_path / "a.md").write_text(EN, encoding="utf-8")
    (tmp_path / "b.md").write_text(ZH, encoding="utf-8")
    ingest(opener(A), [str(tmp_path / "a.md")])
    second = opener(B)
    with pytest.raises(InputError, match="max_parent_size 600, now 300"):
        ingest(second, [str(tmp_path / "b.md")])
    assert len(second.documents()) == 1  # nothing was stored
    rep = ingest(second, [str(tmp_path / "b.md")], recut=True)
    assert rep.documents == 1 and len(second.documents()) == 2
    assert max(c.size for c in second.chunks(level="parent")) <= 300 and second.cut_mismatch() == ""


def test_a_project_without_chunks_takes_the_new_settings(opener):
    first = opener(A)
    doc = ingest_text(first, "en", EN)
    first.rechunk_dirty()
    second = opener(B)
    second.delete_document(doc)
    assert second.cut_mismatch() == ""  # nothing of the old kind left
    ingest_text(second, "zh", ZH)
    second.rechunk_dirty()
    assert second.stored_cut_settings()["max_parent_size"] == 300


def test_a_store_from_before_the_record_takes_its_next_settings(opener):
    first = opener(A)
    ingest_text(first, "en", EN)
    first.rechunk_dirty()
    with first.tx():
        first._x("DELETE FROM store_meta WHERE key = ?", (first._cuts_key(),))
    assert first.stored_cut_settings() is None and first.cut_mismatch() == ""
    block = first.blocks()[0]
    first.edit_block(block.id, block.content + "One more sentence.\n\n")
    first.rechunk_block(block.id)
    assert first.stored_cut_settings() == first.cut_settings()


def test_lexical_cuts_are_the_hash_embedders_own(opener):
    first = opener(A)
    ingest_text(first, "en", EN)
    first.rechunk_dirty()
    # with the hash embedder the texts' own words are its vectors: the same cuts, no mismatch
    assert opener(dataclasses.replace(A, cut_vectors="lexical")).cut_mismatch() == ""


def test_lexical_cuts_differ_from_a_models(opener):
    first = opener(A, TableEmbedder(16))
    ingest_text(first, "en", EN)
    first.rechunk_dirty()
    other = opener(dataclasses.replace(A, cut_vectors="lexical"), TableEmbedder(16))
    assert "cut_vectors 'embedder', now 'lexical'" in other.cut_mismatch()


def test_the_cli_refuses_in_one_line_and_recut_cuts_again(tmp_path, capsys, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(EN, encoding="utf-8")
    (tmp_path / "more.md").write_text(ZH, encoding="utf-8")
    common = ["--db", str(tmp_path / "kb.db"), "--embedder", "hash"]

    def run(argv):
        p = argparse.ArgumentParser(prog="logichunk")
        add_parser(p.add_subparsers(dest="verb"))
        args = p.parse_args(argv)
        return args.func(args)

    monkeypatch.setenv("LOGICHUNK_MAX_PARENT_SIZE", "1500")
    assert run(["ingest", str(tmp_path / "docs"), *common, "--quiet"]) == 0
    monkeypatch.setenv("LOGICHUNK_MAX_PARENT_SIZE", "800")
    capsys.readouterr()
    with pytest.raises(InputError, match="max_parent_size 1500, now 800.*--recut"):
        run(["ingest", str(tmp_path / "more.md"), *common])
    assert run(["ingest", str(tmp_path / "more.md"), *common, "--recut", "--format", "jsonl"]) == 0
    out, err = capsys.readouterr()
    assert "cutting every chapter again" in err and json.loads(out)["documents"] == 1


def test_a_file_that_changes_between_the_check_and_the_write_is_refused(tmp_path, monkeypatch):
    """ingest reads every file once to check it (keeping only its hash, so a folder's texts are never all
    held), then again to store it: a file edited in between is not stored as something never checked. It
    stopped the whole ingest: the files after it were not stored, those before it not chunked (stored, found
    by no search) — one edited file held back the folder. It is refused in one line naming it now, as a bad
    file among several is; the others are stored and chunked. Alone, it is the error."""
    import logichunk.store.ingest as ing

    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text(EN, encoding="utf-8")
    store = Store.open(str(tmp_path / "kb.db"), settings=A, embedder="hash")
    real, reads = ing.read_text_file, []

    def read_twice(p, **kw):  # b.md's second read finds it edited
        reads.append(p.name)
        return real(p, **kw) + ("edited meanwhile\n" if reads.count("b.md") % 2 == 0 and p.name == "b.md" else "")

    monkeypatch.setattr(ing, "read_text_file", read_twice)
    rep = ingest(store, [str(tmp_path)])
    assert list(rep.refused) == [f"{tmp_path / 'b.md'} changed while it was being ingested; not stored this time — "
                           "ingest again to store it"]
    assert sorted(t for _, t, _ in store.documents()) == ["a", "c"]
    assert store.blocks(dirty=True) == [] and {r.document_id for r in store.chunks()} == {
        d for d, _, _ in store.documents()}  # the others chunked, not left pending
    with pytest.raises(InputError, match="b.md changed while it was being ingested"):
        ingest(store, [str(tmp_path / "b.md")])
    store.close()


def test_a_long_chapter_is_stored_in_parts_cut_between_blocks(tmp_path, monkeypatch):
    """A chapter over CHAPTER_PART_CHARS is stored as consecutive chapters of its title, cut between blocks
    (planned one part at a time); the document's text is the file's, block for block."""
    import logichunk.store.ingest as ing

    monkeypatch.setattr(ing, "CHAPTER_PART_CHARS", 1000)
    text = "# One long chapter\n\n" + EN.replace("# Penguins\n\n", "") * 3 + "# Short\n\nA last paragraph.\n"
    chapters = ing.chapter_blocks(text)
    assert "".join(b for _, blocks in chapters for b in blocks) == text
    titles = [t for t, _ in chapters]
    assert titles.count("One long chapter") > 2 and titles[-1] == "Short"
    assert all(sum(map(len, blocks)) <= 1000 or len(blocks) == 1 for _, blocks in chapters)
    assert [b for _, blocks in chapters for b in blocks] == [b for _, blocks in
                                                             [(None, ing.blank_line_blocks(body))
                                                              for _, body in ing.split_chapters(text)] for b in blocks]
    (tmp_path / "long.md").write_text(text, encoding="utf-8")
    store = Store.open(str(tmp_path / "kb.db"), settings=A, embedder="hash")
    rep = ingest(store, [str(tmp_path / "long.md")])
    assert rep.chapters == len(chapters) and store.documents_with_text(text)
    store.close()


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("ab \n中\r")), max_size=400), st.integers(1, 60))
def test_a_long_block_is_cut_in_lines_and_nothing_is_lost(block, limit):
    import logichunk.store.ingest as ing

    pieces = ing.long_block_pieces(block, limit)
    assert "".join(pieces) == block and all(pieces[:-1])
    assert all(len(p) <= limit for p in pieces)
    lines = lf_lines(block)  # a line ends at \n, \r\n or a lone \r (an old Mac file): read there as \n
    at = 0
    for p in pieces[:-1]:  # each cut after a line break where one is within reach, else after a space
        seen, at = lines[at : at + len(p)], at + len(p)
        if "\n" in seen:
            assert seen.endswith("\n")
        elif " " in p:
            assert p.endswith(" ")


def test_a_file_of_one_long_block_is_stored_in_parts(tmp_path, monkeypatch):
    import logichunk.store.ingest as ing

    monkeypatch.setattr(ing, "CHAPTER_PART_CHARS", 2000)
    log = "".join(f"2026-11-29 12:{k // 60:02d}:{k % 60:02d} worker {k % 7} finished job {k}\n" for k in range(600))
    chapters = ing.chapter_blocks(log)
    assert len(chapters) > 5 and "".join(b for _, bs in chapters for b in bs) == log
    assert all(b.endswith("\n") for _, bs in chapters for b in bs)
    (tmp_path / "run.log.txt").write_text(log, encoding="utf-8")
    store = Store.open(str(tmp_path / "kb.db"), settings=A, embedder="hash")
    ingest(store, [str(tmp_path / "run.log.txt")])
    assert store.documents_with_text(log) and max(len(b.content) for b in store.blocks()) <= 2000
    store.close()


@pytest.mark.parametrize("kind", ["log", "book"])
def test_lines_added_in_the_middle_of_a_long_file_change_only_the_parts_around_them(monkeypatch, kind):
    """The parts of a long chapter and the pieces of a long block were cut by offset: lines added in the middle
    of a 22 MB log moved every cut after them, and its ingest re-chunked and re-embedded half the file. Cut by
    their text now (CUT_ODDS): the parts after the edit are the parts they were."""
    import logichunk.store.ingest as ing

    monkeypatch.setattr(ing, "CHAPTER_PART_CHARS", 20_000)  # (lines of ~50 characters, as a log's: ~400 a part)
    end = "\n" if kind == "log" else ".\n\n"
    lines = [f"2026-11-29 12:{k // 60:02d}:{k % 60:02d} worker {k % 7} finished job {k * 7919 % 1000}{end}"
             for k in range(6000)]
    before = ing.chapter_blocks("".join(lines))
    text = "".join([*lines[:3000], *(f"A line added in the middle, {k} of 5{end}" for k in range(5)), *lines[3000:]])
    after = ing.chapter_blocks(text)
    assert "".join(b for _, bs in after for b in bs) == text and len(before) > 10
    assert all(sum(map(len, bs)) <= 20_000 for _, bs in after)
    parts = {tuple(bs) for _, bs in before}
    assert sum(tuple(bs) not in parts for _, bs in after) <= 2  # (by offset: every part after them, ~half)


def test_a_chapter_cut_by_words_on_request_is_cut_as_a_lexical_store_cuts_it(tmp_path):
    """``rechunk_chapter(cut_vectors="lexical")`` (what memory's archive asks for its topics) cuts that chapter
    as a store set to lexical cuts would, whatever the store's setting; the project's record stays the
    settings', and a later re-chunk follows them again."""
    def layout(store):
        doc = store.add_document("en", [(None, [EN])])
        chapter = store.chapters(doc)[0][0]
        return chapter, doc

    ref = Store.open(str(tmp_path / "ref.db"), settings=dataclasses.replace(A, cut_vectors="lexical"),
                     embedder=TableEmbedder(16))
    c_ref, d_ref = layout(ref)
    ref.rechunk_chapter(c_ref)
    want = [(c.level, c.start, c.end) for c in ref.chunks(document_id=d_ref)]
    emb = TableEmbedder(16)
    s = Store.open(str(tmp_path / "kb.db"), settings=A, embedder=emb)
    chapter, doc = layout(s)
    s.rechunk_chapter(chapter, cut_vectors="lexical")
    assert [(c.level, c.start, c.end) for c in s.chunks(document_id=doc)] == want
    assert s.stored_cut_settings() == s.cut_settings() and s.cut_settings()["cut_vectors"] == "embedder"
    s.rechunk_chapter(chapter, force=True)
    assert [(c.level, c.start, c.end) for c in s.chunks(document_id=doc)] != want
    with pytest.raises(InputError, match="cut_vectors must be lexical or embedder"):
        s.rechunk_chapter(chapter, cut_vectors="words")
    ref.close()
    s.close()

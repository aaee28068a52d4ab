"""The store's CLI verbs through argparse: ingest a folder, search it, edit a block."""

from __future__ import annotations

import argparse
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.errors import LogichunkError
from logichunk.store.cli import add_parser


def run(argv, capsys):
    p = argparse.ArgumentParser(prog="logichunk")
    sub = p.add_subparsers(dest="verb")
    add_parser(sub)
    args = p.parse_args(argv)
    code = args.func(args)
    return code, capsys.readouterr().out


def test_ingest_search_edit(tmp_path, capsys):
    (tmp_path / "novel").mkdir()
    (tmp_path / "novel" / "book.md").write_text(
        "# 第一章\n\n主角第一次见到师父是在山脚下的小镇。那天下着大雨。\n\n商人囤积粮食。\n\n"
        "# 第二章\n\n少年在山上练剑三年。冬天来了，雪封住了山路。\n\n", encoding="utf-8")
    db = str(tmp_path / "p.db")
    common = ["--db", db, "--embedder", "hash:128"]
    code, out = run(["ingest", str(tmp_path / "novel"), *common, "--quiet"], capsys)
    assert code == 0 and "1 document(s), 2 chapter(s)" in out
    code, out = run(["search", "主角第一次见到师父是在哪里", *common, "--mode", "parent", "--top-k", "2",
                     "--format", "jsonl"], capsys)
    recs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and recs and "师父" in recs[0]["text"] and recs[0]["level"] == "parent"
    code, out = run(["search", "练剑", *common, "--mode", "hybrid"], capsys)
    assert code == 0 and "练剑" in out
    code, out = run(["blocks", *common, "--format", "jsonl"], capsys)
    blocks = [json.loads(line) for line in out.splitlines()]
    target = blocks[-1]["id"]
    new = tmp_path / "new.txt"
    new.write_text("少年下山去城里卖剑。\n\n", encoding="utf-8")
    code, out = run(["edit", "--block", target, "--file", str(new), *common], capsys)
    assert code == 0 and "rechunked" in out
    code, out = run(["search", "卖剑", *common, "--mode", "basic", "--format", "jsonl"], capsys)
    assert "卖剑" in json.loads(out.splitlines()[0])["text"]
    # the same verb for a script: one JSON object; the same text again changes nothing
    code, out = run(["edit", "--block", target, "--text", "少年在城里卖剑，换了一匹马。\n\n", *common, "--format", "jsonl"],
                    capsys)
    rec = json.loads(out)
    assert code == 0 and rec["block"] == target and rec["changed"] and rec["status"] == "rechunked"
    assert rec["parents_written"] >= 1 and rec["children_written"] >= 1
    code, out = run(["edit", "--block", target, "--text", "少年在城里卖剑，换了一匹马。\n\n", *common, "--format", "jsonl",
                     "--no-rechunk"], capsys)
    assert json.loads(out) == {"block": target, "changed": False, "emptied": False, "status": "unchanged"}
    with pytest.raises(LogichunkError, match="unknown block id"):
        run(["edit", "--block", "nope", "--text", "x", *common], capsys)
    with pytest.raises(LogichunkError, match="query is only whitespace"):  # (the service's and MCP's words)
        run(["search", " ", *common], capsys)


def test_ingest_twice_skips_the_same_text_and_updates_other_text_in_place(tmp_path, capsys):
    f = tmp_path / "notes.md"
    f.write_text("# Penguins\n\nEmperor penguins live in Antarctica. They huddle together.\n", encoding="utf-8")
    common = ["--db", str(tmp_path / "p.db"), "--embedder", "hash:64", "--quiet"]
    assert run(["ingest", str(f), *common], capsys)[0] == 0
    code, out = run(["ingest", str(f), *common], capsys)  # same path, same text: skipped
    assert code == 0 and out.startswith("ingested 0 documents")
    code, out = run(["blocks", *common[:-1], "--format", "jsonl"], capsys)
    assert len(out.splitlines()) == 2  # still one copy: heading block + body block
    f.write_text("# Penguins\n\nEmperor penguins live in Antarctica. They huddle together.\n\nNew line.\n",
                 encoding="utf-8")
    before = [json.loads(x)["id"] for x in run(["blocks", *common[:-1], "--format", "jsonl"], capsys)[1].splitlines()]
    code, out = run(["ingest", str(f), *common], capsys)  # other text: its document updated in place
    assert code == 0 and "updated 1 document(s)" in out and "added 1 block(s)" in out
    code, out = run(["search", "huddle", *common[:-1], "--format", "jsonl"], capsys)
    assert code == 0 and len(out.splitlines()) == 1  # still one copy
    code, out = run(["blocks", *common[:-1], "--format", "jsonl"], capsys)
    assert [json.loads(x)["id"] for x in out.splitlines()][:2] == before  # the kept blocks kept their ids
    code, out = run(["search", "New line", *common[:-1], "--mode", "hybrid", "--format", "jsonl"], capsys)
    assert "New line" in json.loads(out.splitlines()[0])["text"]


@pytest.mark.parametrize("verb", [["search", "penguins"], ["blocks"], ["edit", "--block", "abc", "--text", "x"],
                                  ["documents"], ["delete", "abc"]])
def test_reading_verbs_never_create_a_database_or_project(tmp_path, capsys, verb):
    missing = tmp_path / "typo.db"
    with pytest.raises(LogichunkError, match="no database"):
        run([*verb, "--db", str(missing), "--embedder", "hash:64"], capsys)
    assert not missing.exists()
    f = tmp_path / "a.md"
    f.write_text("Some text here.\n", encoding="utf-8")
    db = str(tmp_path / "p.db")
    run(["ingest", str(f), "--db", db, "--embedder", "hash:64", "--quiet"], capsys)
    with pytest.raises(LogichunkError, match="no project 'defualt'"):
        run([*verb, "--db", db, "--embedder", "hash:64", "--project", "defualt"], capsys)
    from logichunk.config import Settings
    from logichunk.store import Store

    with Store.open(db, settings=Settings(embedder="hash:64")) as s:
        assert [p[1] for p in s.projects()] == ["default"]


def test_parent_search_jsonl_text_is_the_text_at_its_span(tmp_path, capsys):
    long = " ".join(f"Entry {i}: the keeper saw a light over the harbour." for i in range(60)) + "\n"
    (tmp_path / "log.md").write_text("# Log\n\n" + long, encoding="utf-8")
    common = ["--db", str(tmp_path / "p.db"), "--embedder", "hash:64"]
    run(["ingest", str(tmp_path / "log.md"), *common, "--quiet"], capsys)
    code, out = run(["search", "Entry 37 keeper", *common, "--mode", "parent", "--context-window", "300",
                     "--format", "jsonl"], capsys)
    from logichunk.config import Settings
    from logichunk.store import Store

    with Store.open(str(tmp_path / "p.db"), settings=Settings(embedder="hash:64")) as s:
        blocks = {b.id: b.content for b in s.blocks()}
    chapter = "".join(blocks.values())
    for r in map(json.loads, out.splitlines()):
        assert r["text"] in chapter and len(r["text"]) == r["span"][1] - r["span"][0]
        if r["context_text"] is not None:  # the window around the match, inside the parent
            assert r["context_text"] in r["text"] and r["child_text"] in r["context_text"]


# ---------------------------------------------------------------- issue 21: what a new user tripped on


def _penguins(tmp_path):
    f = tmp_path / "a.md"
    f.write_text("# Penguins\n\nEmperor penguins live in Antarctica. They huddle together.\n", encoding="utf-8")
    return f


def test_ingest_with_another_embedder_refuses_in_one_line_unless_reembed(tmp_path, capsys):
    f = _penguins(tmp_path)
    db = str(tmp_path / "p.db")
    assert run(["ingest", str(f), "--db", db, "--embedder", "hash:64", "--quiet"], capsys)[0] == 0
    g = tmp_path / "b.md"
    g.write_text("Seals swim under the ice.\n", encoding="utf-8")
    with pytest.raises(LogichunkError) as e:
        run(["ingest", str(f), str(g), "--db", db, "--embedder", "hash:128", "--quiet"], capsys)
    msg = str(e.value)
    assert "\n" not in msg and "hash-v2-d64" in msg and "hash-v2-d128" in msg and "--reembed" in msg
    from logichunk.config import Settings
    from logichunk.store import Store

    with Store.open(db, settings=Settings(embedder="hash:64")) as s:  # the refusal wrote nothing
        assert len(s.documents()) == 1 and set(s.stored_embedders()) == {"hash-v2-d64"}
    code, out = run(["ingest", str(f), str(g), "--db", db, "--embedder", "hash:128", "--reembed", "--quiet"], capsys)
    assert code == 0 and "1 document(s)" in out
    with Store.open(db, settings=Settings(embedder="hash:128")) as s:  # everything now under the new one
        assert len(s.documents()) == 2 and set(s.stored_embedders()) == {"hash-v2-d128"}
        assert s.embedder_mismatch() == ""
    code, out = run(["search", "huddle", "--db", db, "--embedder", "hash:128", "--mode", "basic",
                     "--format", "jsonl"], capsys)
    assert any("huddle" in json.loads(line)["text"] for line in out.splitlines())


def test_hybrid_with_another_embedder_names_it_in_the_notes(tmp_path, capsys):
    db = str(tmp_path / "p.db")
    run(["ingest", str(_penguins(tmp_path)), "--db", db, "--embedder", "hash:64", "--quiet"], capsys)
    code, out = run(["search", "huddle", "--db", db, "--embedder", "hash:128", "--mode", "hybrid",
                     "--format", "jsonl"], capsys)
    recs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and recs  # BM25 still finds it
    assert any("hash-v2-d64" in n and "hash-v2-d128" in n for n in recs[0]["notes"])
    code, out = run(["search", "huddle", "--db", db, "--embedder", "hash:128", "--mode", "hybrid"], capsys)
    assert "hash-v2-d64" in out.splitlines()[0]  # the table says it too
    code, out = run(["search", "huddle", "--db", db, "--embedder", "hash:64", "--mode", "hybrid",
                     "--format", "jsonl"], capsys)
    assert json.loads(out.splitlines()[0])["notes"] == []  # the same embedder: nothing to say


def test_ingest_refuses_an_empty_file_alone_and_skips_it_among_others(tmp_path, capsys):
    # as ``chunk`` does: the one input given is empty -> an error; in a folder -> a note, the rest stored
    empty = tmp_path / "empty.md"
    empty.write_text(" \n\n", encoding="utf-8")
    db = tmp_path / "p.db"
    with pytest.raises(LogichunkError, match="empty"):
        run(["ingest", str(empty), "--db", str(db), "--embedder", "hash:64"], capsys)
    from logichunk.config import Settings
    from logichunk.store import Store

    with Store.open(str(db), settings=Settings(embedder="hash:64")) as s:
        assert s.documents() == []
    _penguins(tmp_path)
    code, out = run(["ingest", str(tmp_path), "--db", str(db), "--embedder", "hash:64"], capsys)
    assert code == 0 and "1 document(s)" in out
    with Store.open(str(db), settings=Settings(embedder="hash:64")) as s:
        assert [t for _, t, _ in s.documents()] == ["a"]
    code, out = run(["ingest", str(tmp_path), "--db", str(db), "--embedder", "hash:64", "--format", "jsonl"], capsys)
    assert json.loads(out)["empty"] == [str(empty)]


def test_no_results_is_a_line_of_its_own(tmp_path, capsys):
    db = str(tmp_path / "p.db")
    run(["ingest", str(_penguins(tmp_path)), "--db", db, "--embedder", "hash:64", "--quiet"], capsys)
    code, out = run(["search", "huddle", "--db", db, "--embedder", "hash:128", "--mode", "basic"], capsys)
    lines = out.splitlines()
    assert code == 0 and out.endswith("\n") and "(no results)" in lines
    assert any("hash-v2-d64" in line for line in lines[lines.index("(no results)") + 1 :])


def test_no_results_in_jsonl_say_why_on_stderr(tmp_path, capsys):
    """jsonl carries notes inside each hit: with none, the reason (another embedder) goes to stderr, so a script
    can tell "nothing matched" from "searched with the wrong embedder"."""
    db = str(tmp_path / "p.db")
    run(["ingest", str(_penguins(tmp_path)), "--db", db, "--embedder", "hash:64", "--quiet"], capsys)
    p = argparse.ArgumentParser(prog="logichunk")
    add_parser(p.add_subparsers(dest="verb"))
    args = p.parse_args(["search", "huddle", "--db", db, "--embedder", "hash:128", "--mode", "basic", "--format", "jsonl"])
    code = args.func(args)
    got = capsys.readouterr()
    assert code == 0 and got.out == ""
    assert "no results" in got.err and "hash-v2-d64" in got.err and got.err.count("\n") == 1


def test_search_with_a_mistyped_embedder_is_an_error_not_a_fallback(tmp_path, capsys):
    db = str(tmp_path / "p.db")
    run(["ingest", str(_penguins(tmp_path)), "--db", db, "--embedder", "hash:64", "--quiet"], capsys)
    with pytest.raises(LogichunkError, match="unknown embedder spec 'nope'"):
        run(["search", "huddle", "--db", db, "--embedder", "nope"], capsys)


def test_blocks_table_has_a_header_row_over_its_columns(tmp_path, capsys):
    db = str(tmp_path / "p.db")
    run(["ingest", str(_penguins(tmp_path)), "--db", db, "--embedder", "hash:64", "--quiet"], capsys)
    code, out = run(["blocks", "--db", db, "--embedder", "hash:64"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["id", "chapter", "order", "state", "chars", "text"]
    assert len(lines) == 3 and lines[1].split()[3] == "clean"
    assert [line.index("clean") for line in lines[1:]] == [lines[0].index("state")] * 2  # columns line up
    code, out = run(["blocks", "--db", db, "--embedder", "hash:64", "--dirty"], capsys)
    assert out.splitlines()[1] == "(no dirty blocks)"


_README = """# Project

Intro text.

```bash
# install the package
pip install x
# run it
x --help
```

<!--
Chapter 3 in a comment: no chapter
-->

## Usage

More text.

第一章 总则
"""


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["# Title\n", "## Sub\n", "Chapter 2\n", "第二章 起\n", "text line\n", "\n",
                                 "```\n", "~~~\n", "<!--\n", "-->\n", "---\n", "# comment in code\n"]),
                max_size=30).map("".join))
def test_chapters_open_at_headings_outside_code_and_tile_the_text(text):
    from logichunk.store.ingest import split_chapters
    from logichunk.text.line_kinds import fence_spans

    parts = split_chapters(text)
    assert "".join(body for _, body in parts) == text
    inside = fence_spans(text)
    at = 0
    for k, (title, body) in enumerate(parts):
        if at > 0:  # every chapter after the first opens at a heading, outside every fence
            assert title is not None and not any(a < at < b for a, b in inside)
        if title is not None and k < len(parts) - 1:  # ... and holds more than its heading's line
            assert body.strip().count("\n") > 0
        at += len(body)


def test_a_readme_is_not_cut_into_chapters_at_its_shell_comments():
    from logichunk.store.ingest import split_chapters

    assert [t for t, _ in split_chapters(_README)] == ["Project", "Usage", "第一章 总则"]


@pytest.mark.parametrize("text, titles", [
    # books' layouts: a marker alone, over its title, with its title, a number word, a 回目 with its couplet
    ("Preface.\n\nCHAPTER I.\nDown the Rabbit-Hole\n\nAlice was\n", [None, "CHAPTER I."]),
    ("x\n\nCHAPTER 1. Loomings.\n\nCall me Ishmael.\n", [None, "CHAPTER 1. Loomings."]),
    ("x\n\nChapter Twenty-One: The Fall\n\ny\n", [None, "Chapter Twenty-One: The Fall"]),
    ("序\n\n第一回　甄士隐梦幻识通灵　贾雨村风尘怀闺秀\n\n此开卷第一回也。\n", [None, "第一回　甄士隐梦幻识通灵　贾雨村风尘怀闺秀"]),
    ("Intro.\r\n\r\nChapter 5\r\n\r\nText.\r\n", [None, "Chapter 5"]),
    # prose that begins with the words: a sentence, a wrapped line inside a paragraph, a run-on number
    ("Intro.\n\nChapter 3 covers the store, and chapter 4\nthe search.\n\nMore.\n", [None]),
    ("The plan is simple.\nChapter 2 The End is a line inside a paragraph.\n", [None]),
    ("引言\n\n第三章讲述了他的童年，以及他的家乡。\n\n正文\n", [None]),
    ("Chapter 3rd time lucky\n\nx\n", [None]),
    # a heading over nothing but the next heading keeps it in its chapter (no chapter of a heading alone);
    # a contents page of chapter lines is one chapter
    ("## How do I...\n\n\n\n### Use numpy types?\n\nData types.\n\n## Next\n\nMore.\n", ["How do I...", "Next"]),
    ("# A\n\n## B\n\n### C\n\ntext\n\n# D\n", ["A", "D"]),
    ("Contents\n\nChapter 1\n\nChapter 2\n\nChapter 3\n\nPreface text.\n", [None, "Chapter 1"]),
    # "#" lines of one depth right under each other are a config file's or a script's comments
    ("# trusted keys, one per line\n# lines starting with # are ignored\n#\nABCD 1234 S\n\n# Section\n\ntext\n",
     [None, "Section"]),
    ("# Title\n## Subtitle\n\ntext\n", ["Title"]),
])
def test_chapters_open_at_a_book_s_chapter_lines_not_at_prose_that_begins_with_the_words(text, titles):
    from logichunk.store.ingest import split_chapters

    parts = split_chapters(text)
    assert [t for t, _ in parts] == titles and "".join(b for _, b in parts) == text


def test_ingest_says_which_files_of_a_folder_it_skipped_by_their_names(tmp_path, capsys):
    # a docs folder's README without a suffix and a compressed changelog are not read, and the report says
    # so (in one line on stderr, by suffix; in the jsonl report, file by file); hidden files and folders
    # (.git) are no one's documents and are not listed; a file named on the command line is read whatever
    # its name
    docs = tmp_path / "docs"
    (docs / ".git").mkdir(parents=True)
    (docs / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (docs / ".hidden").write_text("x\n", encoding="utf-8")
    (docs / "guide.md").write_text("# Guide\n\nPenguins huddle in winter.\n", encoding="utf-8")
    (docs / "README").write_text("Read the guide first.\n", encoding="utf-8")
    (docs / "changelog.gz").write_bytes(b"\x1f\x8b\x08\x00")
    db = str(tmp_path / "p.db")
    code, out = run(["ingest", str(docs), "--db", db, "--embedder", "hash:64", "--format", "jsonl"], capsys)
    rep = json.loads(out)
    assert code == 0 and rep["documents"] == 1
    assert rep["skipped"] == [str(docs / "README"), str(docs / "changelog.gz")]
    p = argparse.ArgumentParser(prog="logichunk")
    add_parser(p.add_subparsers(dest="verb"))
    args = p.parse_args(["ingest", str(docs), "--db", db, "--embedder", "hash:64"])
    assert args.func(args) == 0
    err = capsys.readouterr().err  # (the notes go to stderr)
    assert "2 file(s) in the folders skipped" in err and "1 .gz, 1 without a suffix" in err
    code, out = run(["ingest", str(docs / "README"), "--db", db, "--embedder", "hash:64", "--format", "jsonl"], capsys)
    assert json.loads(out)["documents"] == 1 and json.loads(out)["skipped"] == []
    only = tmp_path / "only"
    only.mkdir()
    (only / "NEWS").write_text("News.\n", encoding="utf-8")
    with pytest.raises(LogichunkError, match=r"no text files .*1 file\(s\) in the folders skipped.*1 without a suffix"):
        run(["ingest", str(only), "--db", db, "--embedder", "hash:64"], capsys)


def test_compressed_text_files_are_ingested_and_chunked_as_their_text(tmp_path, capsys):
    """A folder's notes.md.gz (or .bz2, .xz) is a text file: stored as the text it holds, titled by its
    name without the suffixes; changelog.gz, whose name says no text, is still left out."""
    import gzip
    import lzma

    docs = tmp_path / "docs"
    docs.mkdir()
    text = "# Notes\n\nPenguins huddle together through the winter.\n\n企鹅在冬天挤在一起取暖。\n"
    (docs / "notes.md.gz").write_bytes(gzip.compress(text.encode()))
    (docs / "more.TXT.xz").write_bytes(lzma.compress(b"Seals hunt them near the ice.\n"))
    (docs / "changelog.gz").write_bytes(gzip.compress(b"1.0: first release\n"))
    db = str(tmp_path / "p.db")
    code, out = run(["ingest", str(docs), "--db", db, "--embedder", "hash:64", "--format", "jsonl"], capsys)
    rep = json.loads(out)
    assert code == 0 and rep["documents"] == 2 and rep["skipped"] == [str(docs / "changelog.gz")]
    from logichunk.config import Settings
    from logichunk.store import Store

    with Store.open(db, settings=Settings(), embedder="hash:64") as store:
        assert len(store.documents_with_text(text)) == 1  # the text it holds, exactly
        assert sorted(t for _, t, _ in store.documents()) == ["more", "notes"]
    from logichunk.cli import main

    assert main(["chunk", str(docs), "--format", "jsonl", "--quiet"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["source"] for r in rows} == {str(docs / "notes.md.gz"), str(docs / "more.TXT.xz")}
    top = [r for r in rows if r["source"].endswith("notes.md.gz") and r["level"] == 1]
    assert "".join(r["text"] for r in top) == text


def test_a_folder_kept_in_sync_documents_listed_deleted_and_pruned(tmp_path, capsys):
    """A knowledge base that follows a folder: ``documents`` lists what is stored, ``delete`` removes documents by
    id (every id checked first), ``ingest --prune`` removes those whose source names a file of the folder that is
    gone — and nothing else: not a file of another folder, not a text whose source is no file (a conversation
    topic's ``memory:...``)."""
    from logichunk.store import Store
    from logichunk.store.ingest import ingest_text

    kb, other = tmp_path / "kb", tmp_path / "other"
    (kb / "sub").mkdir(parents=True)
    other.mkdir()
    (kb / "a.md").write_text("# Alpha\n\nAlpha text about rivers.\n", encoding="utf-8")
    (kb / "sub" / "b.txt").write_text("Beta text about mountains.\n", encoding="utf-8")
    (other / "c.txt").write_text("Gamma text about deserts.\n", encoding="utf-8")
    db = str(tmp_path / "p.db")
    common = ["--db", db, "--embedder", "hash:64"]
    for folder in (kb, other):
        assert run(["ingest", str(folder), *common, "--quiet"], capsys)[0] == 0
    with Store.open(db, embedder="hash:64") as s:  # texts without a file of their own, whatever their source says
        ingest_text(s, "topic", "A conversation topic.\n", source="memory:c1#1")
        ingest_text(s, "upload", "An uploaded note.\n", source=str(kb / "uploaded.md"))  # (says: from a file gone)
        s.rechunk_dirty()
    code, out = run(["documents", *common, "--format", "jsonl"], capsys)
    docs = {d["title"]: d for d in map(json.loads, out.splitlines())}
    assert code == 0 and set(docs) == {"a", "b", "c", "topic", "upload"}
    assert all(d["status"] == "ready" and d["children"] >= 1 for d in docs.values())
    (kb / "sub" / "b.txt").unlink()
    (other / "c.txt").unlink()
    code, out = run(["ingest", str(kb), *common, "--prune", "--format", "jsonl"], capsys)
    rep = json.loads(out)
    assert code == 0 and sorted(rep["pruned"]) == sorted([str(kb / "sub" / "b.txt"), str(kb / "uploaded.md")])
    code, out = run(["documents", *common, "--format", "jsonl"], capsys)
    assert {d["title"] for d in map(json.loads, out.splitlines())} == {"a", "c", "topic"}  # c: another folder's
    with pytest.raises(LogichunkError, match="unknown document id.*nothing was deleted"):
        run(["delete", docs["a"]["id"], "nope", *common], capsys)
    code, out = run(["delete", docs["a"]["id"], docs["c"]["id"], *common, "--format", "jsonl"], capsys)
    assert code == 0 and [json.loads(x)["title"] for x in out.splitlines()] == ["a", "c"]
    code, out = run(["documents", *common, "--format", "jsonl"], capsys)
    assert [json.loads(x)["title"] for x in out.splitlines()] == ["topic"]
    code, out = run(["search", "rivers", *common, "--mode", "basic", "--format", "jsonl"], capsys)
    assert all(json.loads(x)["document_id"] == docs["topic"]["id"] for x in out.splitlines())


def test_edit_with_another_embedder_is_refused_before_the_block_is_written(tmp_path, capsys):
    """``logichunk edit`` without the project's --embedder (the default is another model) re-chunked the chapter
    with that model beside the project's chunks; now it is refused in one line and the block is untouched."""
    db = str(tmp_path / "p.db")
    run(["ingest", str(_penguins(tmp_path)), "--db", db, "--embedder", "hash:64", "--quiet"], capsys)
    code, out = run(["blocks", "--db", db, "--embedder", "hash:64", "--format", "jsonl"], capsys)
    block = json.loads(out.splitlines()[-1])
    with pytest.raises(LogichunkError, match="embedded with hash-v2-d64.*not with the current embedder hash-v2-d128.*not edited"):
        run(["edit", "--block", block["id"], "--text", "Penguins swim.\n", "--db", db, "--embedder", "hash:128"],
            capsys)
    code, out = run(["blocks", "--db", db, "--embedder", "hash:64", "--format", "jsonl"], capsys)
    after = json.loads(out.splitlines()[-1])
    assert after["size"] == block["size"] and not after["dirty"]
    code, out = run(["edit", "--block", block["id"], "--text", "Penguins swim.\n", "--db", db, "--embedder", "hash:64",
                     "--format", "jsonl"], capsys)
    assert code == 0 and json.loads(out)["status"] == "rechunked"


def test_a_store_ingested_in_tokens_is_edited_with_its_tokenizer(tmp_path, capsys):
    """README's ``ingest --tokenizer cl100k_base`` store could not be edited from the CLI: edit had no
    --tokenizer, and without it the text was stored and its re-chunk refused. Now edit takes the option, and
    without it refuses before writing, naming what to give."""
    pytest.importorskip("tiktoken")
    db = str(tmp_path / "p.db")
    common = ["--db", db, "--embedder", "hash:64"]
    run(["ingest", str(_penguins(tmp_path)), *common, "--tokenizer", "cl100k_base", "--quiet"], capsys)
    code, out = run(["blocks", *common, "--format", "jsonl"], capsys)
    block = json.loads(out.splitlines()[-1])
    with pytest.raises(LogichunkError, match="tokenizer 'cl100k_base'.*not edited.*--tokenizer"):
        run(["edit", "--block", block["id"], "--text", "Penguins swim.\n", *common], capsys)
    code, out = run(["blocks", *common, "--format", "jsonl"], capsys)
    assert json.loads(out.splitlines()[-1]) == block  # untouched
    code, out = run(["edit", "--block", block["id"], "--text", "Penguins swim.\n", *common, "--tokenizer",
                     "cl100k_base", "--format", "jsonl"], capsys)
    assert code == 0 and json.loads(out)["status"] == "rechunked"


def test_an_ingest_that_stores_nothing_new_says_what_it_chunked(tmp_path, capsys):
    """After a crash or --no-chunk, the next ingest chunks what was left; it printed "ingested 0 document(s)
    ... 0 chars -> 171 parents ... (0 chars/s)", a rate per stored character of nothing."""
    (tmp_path / "a.md").write_text("# One\n\nFirst paragraph here. It has two sentences.\n\nSecond.\n", encoding="utf-8")
    common = ["--db", str(tmp_path / "p.db"), "--embedder", "hash:128"]
    code, out = run(["ingest", str(tmp_path / "a.md"), *common, "--no-chunk", "--quiet"], capsys)
    assert code == 0 and out.startswith("ingested 1 document(s)") and "0 parents" in out
    code, out = run(["ingest", str(tmp_path / "a.md"), *common, "--quiet"], capsys)
    assert code == 0 and out.startswith("ingested 0 documents; chunked what was stored before and left unchunked")
    assert "chars/s" not in out and " 0 parents" not in out
    code, out = run(["ingest", str(tmp_path / "a.md"), *common, "--quiet"], capsys)
    assert code == 0 and out.startswith("ingested 0 documents in ")

"""The README's Python examples run as written (the chunking ones; store examples need a database)."""

from __future__ import annotations

import os
import re

import pytest

from readme_helpers import ROOT, check_shown, python_blocks, run_block, shown_output


def test_readme_chunk_examples_run_and_print_what_they_show(monkeypatch):
    """Each example prints something, and what the README shows it printing (a ``# [...]`` line after a print, a
    print's ``# ('1.1', '1.2') — ...``) is what it prints: before, a shown output could drift unseen."""
    chunk_blocks = [b for b in python_blocks() if "from logichunk import chunk" in b or "import chunk_by" in b]
    assert len(chunk_blocks) >= 3  # an English and a Chinese example, and the methods by name
    monkeypatch.chdir(ROOT)
    checked = 0
    for code in chunk_blocks:
        printed = run_block(code)
        assert printed.strip(), "an example printed nothing"
        checked += check_shown(code, printed)
    assert checked >= 5  # (the tree's children, headings, a PDF's pages, GB18030 and Big5)
    assert os.getcwd() == str(ROOT)


def test_shown_output_is_read_as_the_readme_writes_it():
    code = ("print(t.children)   # ('1.1', '1.2') — ids of its children\nprint(xs)  # ['a', ...] and more\n"
            "for x in y:\n    print(x)\n# 1 'a'\n# 2 'b'     <- a remark\nz = 1\n# not output\n")
    assert shown_output(code) == [("('1.1', '1.2')", True), ("['a', ", False), ("1 'a'", True), ("2 'b'", True)]
    assert check_shown(code, "('1.1', '1.2')\n['a', 'b']\n0\n1 'a'\n2 'b'\n") == 4
    with pytest.raises(AssertionError, match="README shows"):
        check_shown(code, "('1.1', '1.2', '1.3')\n['a', 'b']\n1 'a'\n2 'b'\n")
    with pytest.raises(AssertionError, match="README shows"):  # (in the order shown)
        check_shown(code, "('1.1', '1.2')\n['a']\n2 'b'\n1 'a'\n")


def test_readme_graph_examples_run(monkeypatch, tmp_path):
    graph_blocks = [b for b in python_blocks() if 'mode="graph-' in b]
    assert len(graph_blocks) >= 2  # an English and a Chinese example
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    for code in graph_blocks:
        printed = run_block(code)
        assert len(printed.strip().splitlines()) >= 2, "an example printed no sentence"
        check_shown(code, printed)


def test_readme_edit_example_runs(monkeypatch, tmp_path):
    """The writing assistant's example: a block edited through the debouncer, re-chunked when it closes."""
    from logichunk.config import Settings
    from logichunk.store import Store
    from logichunk.store.ingest import ingest

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    (code,) = [b for b in blocks if "Debouncer(store)" in b]
    monkeypatch.setenv("LOGICHUNK_EMBEDDER", "hash:64")
    monkeypatch.chdir(tmp_path)
    with Store.open("project.db", settings=Settings.load()) as store:
        ingest(store, [str(ROOT / "examples")])
        before = store.blocks()[1]
    assert "Alice" in before.content
    exec(compile(code, "README.md", "exec"), {})
    with Store.open("project.db", settings=Settings.load()) as store:
        after = store.get_block(before.id)
        assert after.content == before.content.replace("Alice", "Alicia") and after.revision == before.revision + 1
        assert not after.is_dirty and any("Alicia" in c.content for c in store.chunks(chapter_id=after.chapter_id))

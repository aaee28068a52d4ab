"""`logichunk chunk --tokenizer / --overlap` (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logichunk.cli import main

ROOT = Path(__file__).resolve().parents[1]
EN = ROOT / "examples" / "en_public_domain.md"
ZH = ROOT / "examples" / "zh_public_domain.txt"


def run(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_chunk_in_cl100k_tokens_with_windows(capsys):
    pytest.importorskip("tiktoken")
    from logichunk.text.tokens import resolve_tokenizer

    enc = resolve_tokenizer("cl100k_base").tokenizer
    for path in (EN, ZH):
        code, out, _ = run(["chunk", str(path), "--tokenizer", "cl100k_base", "--max-size", "128", "--levels", "1",
                            "--overlap", "16", "--format", "jsonl"], capsys)
        assert code == 0
        rows = [json.loads(line) for line in out.splitlines()]
        text = path.read_text(encoding="utf-8")
        assert "".join(r["text"] for r in rows) == text
        for r in rows:
            assert r["size"] == len(enc.encode_ordinary(r["text"])) <= 128
            assert r["overlap_start"] <= r["start"] < r["end"] <= r["overlap_end"]
            assert len(enc.encode_ordinary(text[r["overlap_start"] : r["start"]])) <= 16


def test_tokenizer_errors_are_one_line(capsys):
    code, _, err = run(["chunk", str(EN), "--tokenizer", "no-such-tokenizer"], capsys)
    assert code != 0 and "unknown tokenizer" in err and "Traceback" not in err
    code, _, err = run(["chunk", str(EN), "--tokenizer", "embedder", "--embedder", "hash"], capsys)
    assert code != 0 and "exposes no tokenizer" in err

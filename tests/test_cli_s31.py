"""The CLI's leftovers of s31: validate and compensate name the decoding their offsets count in, as chunk
does."""

from __future__ import annotations

import json

import pytest

from test_cli import _scripted_llm, run

BOM_TEXT = "Alice founded the lab in 1990. It grew fast.\n\nShe retired in 2020. Her students run it now."


def rows(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


# ----------------------------------------------------------------------------- 1. decoded


@pytest.fixture
def bom_file(tmp_path):
    f = tmp_path / "bom.txt"
    f.write_bytes(b"\xef\xbb\xbf" + BOM_TEXT.encode("utf-8"))
    return f


def test_validate_jsonl_names_the_decoding(bom_file, capsys, monkeypatch, tmp_path):
    _scripted_llm(monkeypatch, ['{"complete": true, "reason": ""}'])
    code, out, _ = run(["validate", str(bom_file), "--llm", "local", "--max-size", "60", "--levels", "1",
                        "--format", "jsonl", "--quiet"], capsys)
    recs = rows(out)
    assert code == 0 and len(recs) > 2
    assert all(r["decoded"] == "utf-8-sig" and r["source"] == str(bom_file) for r in recs)
    assert "".join(BOM_TEXT[r["span"][0]:r["span"][1]] for r in recs if r["type"] == "chunk") == BOM_TEXT


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_compensate_names_the_decoding(bom_file, capsys, monkeypatch, fmt):
    _scripted_llm(monkeypatch, ["a short summary"])
    code, out, _ = run(["compensate", str(bom_file), "--mode", "summary", "--llm", "local", "--max-size", "60",
                        "--levels", "1", "--format", fmt, "--quiet"], capsys)
    assert code == 0
    if fmt == "json":
        doc = json.loads(out)
        assert doc["decoded"] == "utf-8-sig" and doc["source"] == str(bom_file)
        return
    recs = rows(out)
    assert recs and all(r["decoded"] == "utf-8-sig" and BOM_TEXT[r["start"]:r["end"]] == r["text"] for r in recs)


def test_plain_utf8_has_no_decoded_key(tmp_path, capsys, monkeypatch):
    f = tmp_path / "plain.txt"
    f.write_text(BOM_TEXT, encoding="utf-8")
    _scripted_llm(monkeypatch, ["a short summary"])
    code, out, _ = run(["compensate", str(f), "--mode", "summary", "--llm", "local", "--max-size", "60",
                        "--levels", "1", "--quiet"], capsys)
    assert code == 0 and all("decoded" not in r and r["source"] == str(f) for r in rows(out))


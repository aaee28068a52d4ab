"""The CLI: validate and compensate name the decoding their offsets count in, as chunk
does; every output of chunk records marks bubbles the same way; a text read in windows keeps the bubble
of a forced split that crosses a window's edge."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk import chunk_stream
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


# ----------------------------------------------------------------------------- 2-3. bubbles, whole and in windows

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "river", "stone", "cloud", "field", "light", "风", "水"]


def _run_on(words: list[int]) -> str:
    """A text with no punctuation or structure at all: every cut in it is forced."""
    return " ".join(WORDS[k % len(WORDS)] for k in words)


def _recorded(p: int, bubbles) -> bool:
    """Whether the cut at ``p`` lies in a forced split's span (or ends one that continues in the next part)."""
    for b in bubbles:
        a, e = b.context["span"]
        if b.category == "forced_split" and (a < p < e or (p == e and b.context.get("continues"))):
            return True
    return False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 50), min_size=300, max_size=1500), st.integers(300, 3000), st.sampled_from([80, 200]))
def test_every_forced_cut_of_a_text_read_in_windows_is_recorded(words, window, max_size):
    text = _run_on(words)
    parts = list(chunk_stream(text, window=window, max_size=max_size, levels=1))
    bubbles = [b for p in parts for b in p.bubbles]
    cuts = [r["end"] for p in parts for r in p.records(with_text=False) if r["level"] == 1][:-1]
    assert all(_recorded(p, bubbles) for p in cuts)
    for b in bubbles:  # a cut bubble names the text it covers, and only the pieces it holds
        a, e = b.context["span"]
        assert text[a:e].startswith(b.content.removesuffix("…")) and len(b.content) <= 121
        assert len(b.context["sizes"]) == sum(1 for c in cuts + [len(text)] if a < c <= e)


def test_a_text_read_in_windows_marks_every_forced_piece_in_every_output(tmp_path, capsys):
    f = tmp_path / "run.txt"
    f.write_text(_run_on(list(range(6000))), encoding="utf-8")
    got = {}
    for window in ("0", "8000"):  # whole, and in windows
        for fmt in ("jsonl", "json"):
            code, out, _ = run(["chunk", str(f), "--max-size", "500", "--levels", "1", "--window", window,
                                "--format", fmt, "--quiet"], capsys)
            assert code == 0
            recs = rows(out) if fmt == "jsonl" else json.loads(out)["chunks"]
            got[window, fmt] = [r.get("bubble") for r in recs]
    assert got["8000", "jsonl"] == got["8000", "json"] and got["0", "jsonl"] == got["0", "json"]
    assert set(got["8000", "json"]) == set(got["0", "json"]) == {"forced_split"}

"""The memory methods in the eval harness (``logichunk eval segmentation --methods memory...``)."""

from __future__ import annotations

import json

from logichunk.cli import main
from logichunk.eval.methods import METHODS, select_methods
from logichunk.memory import calibrate
from logichunk.models import HashEmbedder
from memory_data import conversations


def _data(tmp_path, n, seed):
    lines = [{"id": c.id, "lang": "en", "units": [b.user for b in c.blocks],
              "boundaries": sorted(s - 1 for s in c.starts)} for c in conversations(n, seed=seed)]
    p = tmp_path / f"dialogues{seed}.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return str(p)


def test_memory_methods_are_registered():
    names = {m.name for m in select_methods("all", "segmentation")}
    assert {"memory-cosine", "memory-online", "memory"} <= names
    assert {"memory-lm", "memory-llm"}.isdisjoint(names), "model-backed arbiters are run by name"
    assert METHODS["memory-cosine"].group == "baseline"


def test_eval_segmentation_with_a_calibration(tmp_path, capsys, loopback, monkeypatch):
    cal = calibrate(conversations(20, seed=11), HashEmbedder(128), lookahead=2)
    cal.save(tmp_path / "cal.json")
    data = _data(tmp_path, 8, 12)
    loopback.chat = lambda body: "NO"
    monkeypatch.setenv("LOGICHUNK_MEMORY_LLM", f"openai:{loopback.base_url}#judge")
    code = main(["eval", "segmentation", "--data", data, "--methods",
                 "memory-cosine,memory-online,memory,memory-llm-online,none", "--embedder", "hash:128",
                 "--calibration", str(tmp_path / "cal.json"), "--json", "--no-save"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = {r["method"]: r for r in map(json.loads, out.splitlines())}
    assert set(rows) == {"memory-cosine", "memory-online", "memory", "memory-llm-online", "none"}
    assert rows["memory"]["pk"] < rows["none"]["pk"] and rows["memory"]["pk"] < rows["memory-cosine"]["pk"]
    assert rows["memory"]["calibration"].endswith("cal.json") and rows["memory"]["embedder"] == "hash:128"
    assert loopback.count("/v1/chat/completions") > 0, "the LLM arbiter was asked in the grey zone"


def test_eval_refuses_a_calibration_for_another_embedder(tmp_path, capsys):
    calibrate(conversations(6, seed=13), HashEmbedder(64), lookahead=1).save(tmp_path / "c64.json")
    code = main(["eval", "segmentation", "--data", _data(tmp_path, 2, 14), "--methods", "memory",
                 "--embedder", "hash:128", "--calibration", str(tmp_path / "c64.json"), "--no-save"])
    _, err = capsys.readouterr()
    assert code == 2 and "fitted for embedder" in err


def test_memory_llm_without_an_endpoint_is_skipped_with_a_note(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("LOGICHUNK_MEMORY_LLM", raising=False)
    calibrate(conversations(6, seed=15), HashEmbedder(64), lookahead=1).save(tmp_path / "c.json")
    code = main(["eval", "segmentation", "--data", _data(tmp_path, 2, 16), "--methods", "memory-llm,memory",
                 "--embedder", "hash:64", "--calibration", str(tmp_path / "c.json"), "--no-save", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and "LOGICHUNK_MEMORY_LLM" in err
    assert [json.loads(line)["method"] for line in out.splitlines()] == ["memory"]

"""``logichunk eval methods`` says an LM method is runnable only when its causal LM can load here: without
torch it named ppl, msp and memory-lm "ok", and the run then skipped them."""

from __future__ import annotations

import importlib.util
import json

import pytest

from logichunk.cli import main

LM_METHODS = {"ppl", "msp", "ppl-paper", "ppl-global", "msp-paper", "msp-global", "memory-lm", "memory-lm-online"}


def _methods(capsys) -> dict[str, dict]:
    assert main(["eval", "methods", "--format", "jsonl"]) == 0
    return {r["method"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}


@pytest.fixture
def no_torch(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name in ("torch", "transformers") else real(name, *a, **k))
    monkeypatch.delenv("LOGICHUNK_LM", raising=False)


def test_lm_methods_are_not_runnable_without_torch(no_torch, capsys):
    rows = _methods(capsys)
    for name in LM_METHODS:
        assert rows[name]["runnable"] is False, name
        assert rows[name]["install"] == ["torch and transformers (logichunk[lm])"]
    assert rows["memory-llm"]["runnable"] and rows["global"]["runnable"]  # an endpoint's or no model at all


def test_a_completions_endpoint_needs_no_torch(no_torch, monkeypatch, capsys):
    monkeypatch.setenv("LOGICHUNK_LM", "http://127.0.0.1:9/v1")
    rows = _methods(capsys)
    assert all(rows[name]["runnable"] for name in LM_METHODS)


def test_the_table_says_what_to_install(no_torch, capsys):
    assert main(["eval", "methods"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("ppl "))
    assert "missing torch and transformers (logichunk[lm])" in line

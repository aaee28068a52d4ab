"""Global information compensation with a scripted LLM: three-stage rewrite, two-stage summary,
stored as metadata beside unchanged spans."""

from __future__ import annotations

import json

import pytest

from logichunk.chunkers.compensate import compensate, document_context, parse_json
from logichunk.errors import InputError
from logichunk.models.llm import ScriptedLLM
from logichunk.tree import build_tree, check_tree

TEXT = ("# Widget report\n\nThe Widget is a solar lamp made by Acme. It costs 20 dollars.\n\n"
        "It charges in four hours. This design was chosen after the 2019 trial.\n\n"
        "Sales doubled last year.")


def _tree():
    a = TEXT.index("It charges")
    b = TEXT.index("Sales")
    rows = [("1", 0, a, "ppl", {"size": a}), ("2", a, b, "ppl", {"size": b - a}),
            ("3", b, len(TEXT), "ppl", {"size": len(TEXT) - b})]
    tree = build_tree(TEXT, rows, stats={"method": "ppl"})
    check_tree(tree)
    return tree


def _rewriter(messages: list[dict]) -> str:
    system, user = messages[0]["content"], messages[-1]["content"]
    chunk = user.rsplit("Chunk:\n", 1)[1]
    if system.startswith("You read one chunk") and "List what" in system:  # 1. identify
        if chunk.startswith("It charges"):
            return ('Missing: ```json\n[{"item": "It", "kind": "reference"}, '
                    '{"item": "This design", "kind": "reference"}, {"item": "2019 trial", "kind": "premise"}]\n```')
        return "[]"
    if system.startswith("For each item"):  # 2. filter and score
        return json.dumps([
            {"item": "It", "resolution": "the Widget, a solar lamp by Acme", "score": 0.95},
            {"item": "This design", "resolution": "the Widget's solar design", "score": 0.4},
            {"item": "2019 trial", "resolution": "", "score": 0.9},
            {"item": "invented", "resolution": "made up by the model", "score": 1.0},
        ])
    if system.startswith("Rewrite"):  # 3. merge
        assert "- It: the Widget, a solar lamp by Acme" in user and "This design:" not in user
        return "The Widget (Acme's solar lamp) charges in four hours. This design was chosen after the 2019 trial."
    raise AssertionError(system)


def test_three_stage_rewrite_is_metadata_only() -> None:
    tree = _tree()
    llm = ScriptedLLM(_rewriter)
    out = compensate(tree, llm, mode="rewrite")
    check_tree(out)
    assert out.text == TEXT
    assert [(c.id, c.start, c.end, c.method) for c in out] == [(c.id, c.start, c.end, c.method) for c in tree]
    c2 = out.get("2")
    assert c2.meta["rewritten"].startswith("The Widget (Acme's solar lamp)")
    assert [m["item"] for m in c2.meta["missing"]] == ["It"]  # low score, no resolution, invented: dropped
    assert c2.meta["missing"][0]["score"] == 0.95 and c2.meta["missing"][0]["kind"] == "reference"
    assert c2.meta["size"] == tree.get("2").meta["size"]  # earlier metadata kept
    for cid in ("1", "3"):
        assert out.get(cid).meta["rewritten"] is None and out.get(cid).meta["missing"] == []
    # 1 identify call for chunks 1 and 3, 3 calls for chunk 2
    assert llm.calls == 5
    assert out.stats["compensation"] == {"mode": "rewrite", "chunks": 3, "llm_calls": 5, "rewritten": 1,
                                         "summarised": 0, "unreadable": 0}
    assert out.bubbles == tree.bubbles
    assert out.stats["method"] == "ppl"
    # the identify prompt shows the document context around the chunk and the chunk itself
    first_for_2 = llm.prompts[1][-1]["content"]
    assert "<<<CHUNK>>>" in first_for_2 and "The Widget is a solar lamp" in first_for_2
    assert first_for_2.endswith("Chunk:\n" + tree.text_of(tree.get("2")))
    assert tree.get("2").meta.get("rewritten") is None  # the input tree is unchanged


def test_two_stage_summary() -> None:
    tree = _tree()

    def summariser(messages: list[dict]) -> str:
        system, user = messages[0]["content"], messages[-1]["content"]
        if "background from the rest" in system:
            return "The Widget is Acme's solar lamp."
        assert user.startswith("Background:\nThe Widget is Acme's solar lamp.")
        return "Summary of: " + user.rsplit("Chunk:\n", 1)[1][:12]

    llm = ScriptedLLM(summariser)
    out = compensate(tree, llm, mode="summary", chunks=["2", tree.get("3")])
    assert llm.calls == 4
    assert out.get("2").meta["summary"] == "Summary of: It charges i"
    assert out.get("2").meta["supplement"] == "The Widget is Acme's solar lamp."
    assert "summary" not in out.get("1").meta
    assert out.stats["compensation"]["summarised"] == 2
    check_tree(out)


def test_errors_and_helpers() -> None:
    tree = _tree()
    with pytest.raises(InputError):
        compensate(tree, ScriptedLLM(["x"]), mode="paraphrase")
    with pytest.raises(InputError):
        compensate(tree, ScriptedLLM(["x"]), chunks=["9"])
    # unreadable identify answers mean nothing missing, not a crash
    out = compensate(tree, ScriptedLLM(["no idea"], cycle=True))
    assert all(c.meta["rewritten"] is None for c in out)
    assert parse_json('prose [1, 2] more') == [1, 2]
    assert parse_json('{"a": 1}') == {"a": 1}
    assert parse_json("nothing") is None
    ctx = document_context(tree, tree.get("3"), head_chars=10, window_chars=40)
    assert ctx.startswith("[Document opening]\n# Widget r") and ctx.endswith("<<<CHUNK>>>")


def test_unreadable_answers_are_bubbles_not_nothing_missing() -> None:
    def garbage_then_prose(messages: list[dict]) -> str:
        chunk = messages[-1]["content"].rsplit("Chunk:\n", 1)[1]
        if messages[0]["content"].startswith("For each item"):
            return "I could not decide."  # stage 2 unreadable
        if chunk.startswith("It charges"):
            return '[{"item": "It", "kind": "reference"}]'
        return "I am a teapot {not json" if chunk.startswith("#") else "[]"

    out = compensate(_tree(), ScriptedLLM(garbage_then_prose), mode="rewrite")
    got = {b.context["chunk_id"]: (b.category, b.context["stage"]) for b in out.bubbles}
    assert got == {"1": ("compensation_unreadable", "identify"), "2": ("compensation_unreadable", "resolve")}
    assert out.stats["compensation"]["unreadable"] == 2
    assert all(out.get(c).meta["rewritten"] is None and "unreadable" not in out.get(c).meta for c in "123")

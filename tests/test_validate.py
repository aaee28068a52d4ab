"""The LLM validator: chunks judged incomplete become bubbles; spans and text are never touched."""

from __future__ import annotations

import json

import pytest

from logichunk.chunkers.validate import parse_verdict, validate
from logichunk.models.llm import ScriptedLLM
from logichunk.tree import build_tree, check_tree

TEXT = ("Photosynthesis turns light into chemical energy. Plants store it as sugar.\n\n"
        "This method is then repeated by every leaf, which")  # the second chunk stops mid-sentence
ZH = "光合作用把光能变成化学能。植物把它储存为糖。\n\n这种方法随后在每片叶子中重复，而"


def _flat(text: str) -> object:
    cut = text.index("\n\n") + 2
    return build_tree(text, [("1", 0, cut, "ppl", {"size": cut}), ("2", cut, len(text), "ppl", {})])


def _judge(messages: list[dict]) -> str:
    user = messages[-1]["content"]
    body = user.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
    if body.rstrip().endswith(("which", "而")):
        return 'Sure. {"complete": false, "reason": "stops mid-sentence"}'
    return '{"complete": true, "reason": "self-contained"}'


@pytest.mark.parametrize("text", [TEXT, ZH], ids=["en", "zh"])
def test_incomplete_chunk_becomes_a_bubble(text: str) -> None:
    tree = _flat(text)
    llm = ScriptedLLM(_judge)
    bubbles = validate(tree, llm, source="doc.md")
    assert llm.calls == 2
    assert [b.category for b in bubbles] == ["incomplete"]
    b = bubbles[0]
    c2 = tree.get("2")
    assert b.context["chunk_id"] == "2" and b.context["span"] == [c2.start, c2.end]
    assert b.context["reason"] == "stops mid-sentence" and "complete" in b.context["answer"]
    assert b.context["source"] == "doc.md" and b.priority == "medium"
    assert text[c2.start:c2.end].startswith(b.content.rstrip("…"))
    # the prompt holds the chunk verbatim and marks its neighbour as context
    user = llm.prompts[1][-1]["content"]
    assert "<<<\n" + tree.text_of(c2) + "\n>>>" in user
    assert "Context before" in user and "Context after" not in user
    check_tree(tree)


def test_unreadable_answers_and_free_form_verdicts() -> None:
    tree = _flat(TEXT)
    answers = ["Hmm, hard to say.", "No — it ends mid-sentence."]
    bubbles = validate(tree, ScriptedLLM(answers))
    assert [b.category for b in bubbles] == ["validator_unreadable", "incomplete"]
    assert bubbles[0].priority == "low"
    assert validate(tree, ScriptedLLM(["Yes.", "是的，完整。"])) == []


def test_leaves_of_a_deep_tree_and_chosen_chunks() -> None:
    text = "Alpha one. Alpha two. Beta one. Beta two."
    rows = [("1", 0, 22, "x", {}), ("1.1", 0, 11, "x", {}), ("1.2", 11, 22, "x", {}), ("2", 22, len(text), "x", {})]
    tree = build_tree(text, rows)
    check_tree(tree)
    llm = ScriptedLLM(['{"complete": false, "reason": "r"}'], cycle=True)
    bubbles = validate(tree, llm)
    assert [b.context["chunk_id"] for b in bubbles] == ["1.1", "1.2", "2"]
    only = validate(tree, ScriptedLLM(['{"complete": "no"}']), chunks=[tree.get("1")])
    assert [b.context["chunk_id"] for b in only] == ["1"]


@pytest.mark.parametrize("answer,expected", [
    ('{"complete": true}', True),
    ('```json\n{"complete": false, "reason": "x"}\n```', False),
    ('{"complete": "yes"}', True),
    ("YES, it is complete", True),
    ("Incomplete: it depends on the previous chunk", False),
    ("不完整。", False),
    ("完整", True),
    ("否", False),
    ("It depends.", None),
    (json.dumps({"reason": "no verdict"}), None),
    # the value decides, not the key's own name read as a "complete" (each of these was a yes)
    ('{"complete": "incomplete"}', False), ('{"complete": 0, "reason": "cut off"}', False),
    ('{"complete": "否"}', False), ('{"complete": null}', None), ('{"complete": "maybe"}', None),
    ('{"complete": 1}', True),
    ("Complete? No, it is cut off", None),  # a yes taken back: for a person to read, not a pass
])
def test_parse_verdict(answer: str, expected: bool | None) -> None:
    assert parse_verdict(answer)[0] is expected

"""LogicalBlock, anchor text and the filler heuristic (Chinese and English)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logichunk.errors import InputError
from logichunk.memory import LogicalBlock, ToolCall, anchor_text, is_filler


@pytest.mark.parametrize("text", ["ok", "OK!", "继续", "继续吧！", "好的，继续", "是的", "不对", "报错了", "go on",
                                  "yes", "Thanks!", "okay, thank you.", "嗯嗯", "👍", "  ", "why?"])
def test_fillers(text):
    assert is_filler(text)[0]


@pytest.mark.parametrize("text", ["now deploy it to the server please", "是的，但是我想换成 Go 语言来重写这个服务",
                                  "报错了：ModuleNotFoundError: No module named pygame",
                                  "Can I replace ricotta with cottage cheese?", "写一个贪吃蛇游戏"])
def test_not_fillers(text):
    assert not is_filler(text)[0]


def test_short_rule_counts_content_tokens():
    assert is_filler("I need a taxi.") == (True, "short (4 tokens)")
    assert not is_filler("I need a taxi now.")[0]
    assert not is_filler("I need a taxi.", short_tokens=0)[0], "short_tokens=0 keeps only the stop phrases"
    assert is_filler("部署一下") == (True, "short (4 tokens)") and not is_filler("部署到服务器")[0]


def test_anchor_text():
    prev = LogicalBlock("write a snake game", "Here is the game: " + "x" * 200)
    cur = LogicalBlock("now   deploy\nit", rewritten_query=None)
    assert anchor_text(cur, prev) == "Context: Here is the game: " + "x" * 82 + "\nQuery: now deploy it"
    assert anchor_text(cur, None) == "Context: \nQuery: now deploy it"
    summ = LogicalBlock("q", "long " * 100, assistant_summary="A snake game in pygame.")
    assert anchor_text(LogicalBlock("it crashes", rewritten_query="the snake game crashes"), summ) == \
        "Context: A snake game in pygame.\nQuery: the snake game crashes"
    # a turn without a reply (one utterance of a transcript) gives its own text as the next context
    assert anchor_text(cur, LogicalBlock("hello there")).startswith("Context: hello there\n")


def test_block_validation():
    with pytest.raises(InputError):
        LogicalBlock("")
    with pytest.raises(InputError):
        LogicalBlock(3)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        LogicalBlock("x", tool_calls=("ls",))  # type: ignore[arg-type]
    b = LogicalBlock("x", tool_calls=[ToolCall("ls")])  # a list is accepted and frozen
    assert b.tool_calls == (ToolCall("ls"),)
    assert LogicalBlock.from_dict({"query": "q", "reply": "r", "ts": 3}).to_dict() == \
        {"user": "q", "assistant": "r", "started_at": 3.0}


text = st.text(min_size=1, max_size=40).filter(lambda s: s.strip())
opt = st.none() | st.text(max_size=20)
ts = st.none() | st.floats(allow_nan=False, allow_infinity=False, width=32)


@given(user=text, assistant=st.text(max_size=40), rq=opt, summ=opt, start=ts, end=ts,
       tools=st.lists(st.builds(ToolCall, st.text(min_size=1, max_size=8), st.text(max_size=8), st.text(max_size=8)),
                      max_size=3), meta=st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3))
def test_block_round_trip(user, assistant, rq, summ, start, end, tools, meta):
    b = LogicalBlock(user, assistant, rq, tuple(tools), start, end, summ, meta)
    assert LogicalBlock.from_dict(b.to_dict()) == b

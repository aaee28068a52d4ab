"""LogicalBlock, anchor text and the filler heuristic (Chinese and English)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logichunk.errors import InputError
from logichunk.memory import LogicalBlock, ToolCall, anchor_text, is_filler
from logichunk.memory.block import check_count, content_tokens, new_items
from logichunk.signals.items import content_items


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


storable = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")  # what every store holds
text = st.text(storable, min_size=1, max_size=40).filter(lambda s: s.strip())
opt = st.none() | st.text(storable, max_size=20)
ts = st.none() | st.floats(allow_nan=False, allow_infinity=False, width=32)


@given(user=text, assistant=st.text(storable, max_size=40), rq=opt, summ=opt, start=ts, end=ts,
       tools=st.lists(st.builds(ToolCall, st.text(storable, min_size=1, max_size=8), st.text(storable, max_size=8),
                                st.text(storable, max_size=8)),
                      max_size=3), meta=st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3))
def test_block_round_trip(user, assistant, rq, summ, start, end, tools, meta):
    b = LogicalBlock(user, assistant, rq, tuple(tools), start, end, summ, meta)
    assert LogicalBlock.from_dict(b.to_dict()) == b


@pytest.mark.parametrize("text", ["What is Kubernetes?", "Explain Rust lifetimes", "What about Python decorators?",
                                  "讲讲黑洞", "pip install numpy fails", "SELECT * FROM users;", "Translate: 我爱你"])
def test_a_short_turn_that_names_something_new_is_no_filler(text):
    """Short topic-change questions were fillers (under 5 tokens), so the next topic merged into the old one."""
    assert is_filler(text)[0], "without what the conversation said, a short turn is still a filler"
    assert is_filler(text, known=frozenset()) == (False, "")
    assert is_filler(text, known=frozenset(content_items(text)[1].tolist()))[0], "nothing new: a filler"


@given(st.text(max_size=30), st.lists(st.sampled_from("the kube pods 我 爱 你 what is cooking pork".split()), max_size=6))
def test_the_conversation_only_ever_turns_a_filler_into_content_by_new_words(text, said):
    """Knowing the conversation changes a verdict only for a short turn that brings a content word it had not
    used; the stop phrases and long turns are judged as before."""
    known = frozenset(content_items(" ".join(said))[1].tolist())
    before, now = is_filler(text)[0], is_filler(text, known=known)[0]
    assert not (now and not before)
    if before and not now:
        assert new_items(text, known) > 0 and content_tokens(text) < 5


@pytest.mark.parametrize("make, field", [
    (lambda: LogicalBlock("cat \ud83d litter"), "user"),
    (lambda: LogicalBlock("q", "reply \udc80"), "assistant"),
    (lambda: LogicalBlock("q", rewritten_query="\ud800"), "rewritten_query"),
    (lambda: LogicalBlock("q", tool_calls=(ToolCall("ls", "\udfff"),)), "tool call arguments"),
    (lambda: LogicalBlock("q", meta={"k": "\ud800"}), "meta"),
    (lambda: LogicalBlock("log line \x00 here"), "user holds a NUL character"),
    (lambda: LogicalBlock("q", "a\x00"), "assistant holds a NUL"),
    (lambda: LogicalBlock("q", assistant_summary="\x00"), "assistant_summary holds a NUL"),
    (lambda: LogicalBlock("q", tool_calls=(ToolCall("cat", "{}", "\x00\x01"),)), "tool call result holds a NUL"),
    (lambda: LogicalBlock.from_dict({"user": "x", "meta": {"k": object()}}), "meta"),
])
def test_text_the_store_cannot_hold_is_refused_at_once(make, field):
    """A lone surrogate passed observe() and then kept the whole topic out of the store, silently."""
    with pytest.raises(InputError, match=field) as e:
        make()
    assert "\n" not in str(e.value)


@given(st.text(max_size=20), st.text(max_size=20))
def test_a_nul_anywhere_in_a_turns_text_is_refused(before, after):
    """PostgreSQL text cannot hold a NUL: such a turn failed only when its topic was archived there (every turn
    of the topic out of the store), and was taken on SQLite. Refused when made, on every backend."""
    for make in (lambda t: LogicalBlock(t), lambda t: LogicalBlock("q", t), lambda t: LogicalBlock("q", rewritten_query=t),
                 lambda t: LogicalBlock("q", tool_calls=(ToolCall("f", t),))):
        with pytest.raises(InputError, match="NUL character"):
            make(before + "\x00" + after)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(storable, max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(storable, max_size=4), inner,
                                                                                max_size=3), max_leaves=8)


@given(JSON.filter(lambda v: v is not None and not isinstance(v, str)), JSON.filter(lambda v: not isinstance(v, str)))
def test_tool_call_values_are_kept_as_json_exactly(result, arguments):
    """A result given as a JSON object was stored as a Python repr ("{'ok': True}"), and 0 or false as ""."""
    import json

    b = LogicalBlock.from_dict({"user": "q", "tool_calls": [{"name": "f", "arguments": arguments, "result": result}]})
    t = b.tool_calls[0]
    assert json.loads(t.result) == result and type(json.loads(t.result)) is type(result)
    assert (t.arguments == "") if arguments is None else (json.loads(t.arguments) == arguments)
    assert LogicalBlock.from_dict(b.to_dict()) == b


def test_tool_call_results_read_as_json():
    tc = LogicalBlock.from_dict({"user": "weather in Paris?", "tool_calls": [
        {"name": "get_weather", "arguments": {"city": "Paris"}, "result": {"temp": 21, "ok": True, "note": None}},
        {"name": "count", "result": 0}, {"name": "flag", "result": False}, {"name": "text", "result": "as it is"},
        {"name": "none", "result": None}]}).tool_calls
    assert [t.result for t in tc] == ['{"temp": 21, "ok": true, "note": null}', "0", "false", "as it is", ""]
    with pytest.raises(InputError, match="tool call's arguments and result must be text or JSON"):
        LogicalBlock.from_dict({"user": "q", "tool_calls": [{"name": "f", "result": object()}]})


@pytest.mark.parametrize("value", ["3", 3.0, True, None])
def test_check_count_refuses_what_is_not_a_whole_number(value):
    with pytest.raises(InputError, match="must be an integer"):
        check_count(value, "top_k", 1)
    assert check_count(3, "top_k", 1) == 3
    with pytest.raises(InputError, match="at least 1"):
        check_count(0, "top_k", 1)

"""Grey-zone arbiters: the calibrated rule, a reranker, an LM scorer and a chat LLM (scripted and over
a real loopback HTTP server), with fallbacks recorded."""

from __future__ import annotations

import numpy as np
import pytest

from logichunk.errors import LogichunkError
from logichunk.memory import (
    ArbiterQuery,
    Calibration,
    LLMArbiter,
    LMArbiter,
    LogicalBlock,
    Logistic,
    Perception,
    RerankerArbiter,
    RuleArbiter,
)
from logichunk.memory.arbiter import same_task_messages
from logichunk.models import OpenAIChatLLM, RetryPolicy, ScriptedLLM

Q = ArbiterQuery(summary="First request: write a snake game in Python", query="now deploy it to my server",
                 anchor="Context: here is the game\nQuery: now deploy it to my server", similarity=0.5,
                 features={"sim": 0.5, "novelty": 0.9})
QZ = ArbiterQuery(summary="First request: 用 Python 写一个贪吃蛇游戏", query="报错了，帮我修一下", anchor="", similarity=0.5,
                  language="zh")


def rule_cal(threshold: float = 0.5) -> Calibration:
    rule = Logistic(("novelty",), (0.5,), (0.1,), (-1.0,), 0.0)  # novel words -> less likely the same topic
    return Calibration(embedder="x", rule=rule, rule_threshold=threshold)


def test_rule_arbiter_follows_its_logistic_and_threshold():
    a = RuleArbiter(rule_cal())
    v = a.judge(Q)
    assert not v.same_topic and v.arbiter == "rule" and v.score == pytest.approx(1 / (1 + np.exp(4.0)))
    familiar = ArbiterQuery("s", "q", "a", 0.5, {"novelty": 0.2})
    assert a.judge(familiar).same_topic
    assert not RuleArbiter(rule_cal(0.99)).judge(familiar).same_topic
    # without a fitted rule: the midpoint of the grey zone
    bare = RuleArbiter(Calibration(embedder="x", hi=0.8, lo=0.4))
    assert bare.judge(ArbiterQuery("s", "q", "a", 0.61)).same_topic
    assert not bare.judge(ArbiterQuery("s", "q", "a", 0.59)).same_topic


def test_prompts_follow_the_language_and_carry_the_pair():
    en = same_task_messages(Q)
    assert "Causal, progressive or referring" in en[0]["content"]
    assert "snake game" in en[1]["content"] and "deploy it" in en[1]["content"]
    zh = same_task_messages(QZ)
    assert "因果、递进或指代" in zh[0]["content"] and "报错了" in zh[1]["content"]


def test_llm_arbiter_yes_no_and_fallbacks():
    llm = ScriptedLLM(["YES", " no.", "是", "Maybe, it depends", "否"])
    a = LLMArbiter(llm, fallback=RuleArbiter(rule_cal()))
    v = a.judge(Q)
    assert v.same_topic and v.arbiter == "llm" and v.score == 1.0
    assert not a.judge(Q).same_topic
    assert a.judge(QZ).same_topic
    v = a.judge(Q)  # unclear -> the rule decides, and says so
    assert v.arbiter == "rule" and "unclear" in v.detail and a.failures == 1
    assert not a.judge(QZ).same_topic
    assert "snake game" in llm.prompts[0][1]["content"]
    v = a.judge(Q)  # the script ran out: an error, handled by the fallback
    assert v.arbiter == "rule" and "ScriptExhausted" in v.detail and a.failures == 2
    with pytest.raises(LogichunkError, match="no fallback"):
        LLMArbiter(ScriptedLLM(["perhaps"])).judge(Q)


def test_llm_arbiter_over_http(loopback):
    loopback.chat = lambda body: "YES" if "deploy" in body["messages"][-1]["content"] else "NO"
    llm = OpenAIChatLLM(loopback.base_url, "judge", retry=RetryPolicy(retries=0), timeout=5)
    a = LLMArbiter(llm, fallback=RuleArbiter(rule_cal()))
    assert a.judge(Q).same_topic and a.judge(Q).arbiter == "llm"
    assert not a.judge(QZ).same_topic
    body = loopback.requests[-1].body
    assert body["max_tokens"] == 4 and body["temperature"] == 0.0
    loopback.fail("/v1/chat/completions", 500, times=1)
    v = a.judge(Q)
    assert v.arbiter == "rule" and "failed" in v.detail
    loopback.slow("/v1/chat/completions", 3.0)
    llm2 = OpenAIChatLLM(loopback.base_url, "judge", retry=RetryPolicy(retries=0), timeout=0.5)
    v = LLMArbiter(llm2, fallback=RuleArbiter(rule_cal())).judge(Q)
    assert v.arbiter == "rule" and "failed" in v.detail


class FakeReranker:
    def __init__(self):
        self.calls = []

    def score(self, query, texts):
        self.calls.append((query, list(texts)))
        return np.asarray([0.8 if "deploy" in query else 0.1])


def test_reranker_arbiter_scores_the_pair():
    r = FakeReranker()
    a = RerankerArbiter(r, threshold=0.5, name="xenc")
    v = a.judge(Q)
    assert v.same_topic and v.score == pytest.approx(0.8) and v.arbiter == "xenc"
    assert r.calls == [("now deploy it to my server", ["First request: write a snake game in Python"])]
    assert not a.judge(QZ).same_topic


class FakeLM:
    model_id = "fake-lm"

    def __init__(self, yes: float, no: float):
        self.lp = np.log([yes, no])
        self.prompts = []

    def option_logprobs(self, prompt, options):
        self.prompts.append((prompt, tuple(options)))
        return self.lp


def test_lm_arbiter_normalises_yes_and_no():
    lm = FakeLM(0.02, 0.06)
    v = LMArbiter(lm).judge(Q)
    assert not v.same_topic and v.score == pytest.approx(0.25) and v.arbiter == "lm"
    assert lm.prompts[0][1] == ("YES", "NO") and "deploy" in lm.prompts[0][0][1]["content"]
    assert LMArbiter(FakeLM(0.3, 0.1)).judge(Q).same_topic


def test_lm_arbiter_with_a_real_tiny_transformer():
    pytest.importorskip("torch")
    from logichunk.models.lm import build_tiny_lm

    lm = build_tiny_lm(["YES NO same task deploy snake game"], chat_template=(
        "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}<assistant>"))
    v = LMArbiter(lm).judge(Q)
    assert 0.0 < v.score < 1.0 and v.same_topic == (v.score >= 0.5)


def test_llm_arbiter_in_the_perception_is_recorded(loopback):
    """Dev -> deploy: the LLM says it is the same task flow; the decision names the LLM."""
    loopback.chat = lambda body: "YES"
    from logichunk.models import HashEmbedder

    emb = HashEmbedder(64)
    c = Calibration(embedder=emb.model_id, hi=1.0, lo=-1.0)  # everything goes to the arbiter
    llm = OpenAIChatLLM(loopback.base_url, "judge", retry=RetryPolicy(retries=0), timeout=5)
    p = Perception(embedder=emb, calibration=c, arbiter=LLMArbiter(llm, fallback=RuleArbiter(c)))
    p.observe(LogicalBlock("Write a snake game in Python with pygame", "Here is the game loop and the snake class."))
    d = p.observe(LogicalBlock("now deploy it to my server please", "Copy it with scp and run it with systemd."))
    assert d.action.value == "adsorb" and d.step.value == "arbiter" and d.arbiter == "llm"
    prompt = loopback.requests[-1].body["messages"][-1]["content"]
    assert "snake game" in prompt and "deploy it" in prompt


def test_an_unreachable_llm_is_not_asked_again_during_its_cooldown():
    from logichunk.models.http import EndpointUnreachable

    calls = []

    def down(messages):
        calls.append(messages)
        raise EndpointUnreachable("connection refused", url="http://127.0.0.1:9/v1")

    a = LLMArbiter(ScriptedLLM(down), fallback=RuleArbiter(rule_cal()), cooldown=60.0)
    verdicts = [a.judge(Q) for _ in range(5)]
    assert len(calls) == 1 and a.failures == 5  # asked once; the fallback answered all five
    assert all(v.arbiter == "rule" for v in verdicts) and "not asked" in verdicts[-1].detail
    a._down_until = 0.0  # the cooldown over: asked again
    a.judge(Q)
    assert len(calls) == 2
    b = LLMArbiter(ScriptedLLM(["maybe", "YES"]), fallback=RuleArbiter(rule_cal()), cooldown=60.0)
    b.judge(Q)  # an unclear answer is no outage: the next turn asks again
    assert b.judge(Q).arbiter == "llm"

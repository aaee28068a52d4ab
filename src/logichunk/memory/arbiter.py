"""Step 3: who decides a turn whose cosine to the topic kernel falls in the grey zone.

An :class:`Arbiter` gets an :class:`ArbiterQuery` (a summary of the current topic, the new query, its
anchor, the cosine and the online features) and answers a :class:`Verdict`: same topic or not, a score
(P(same topic) where the arbiter has one) and its own name, which the decision records. Four ship:

* :class:`RuleArbiter` — the calibrated default: a logistic rule over the online features (cosine to
  the kernel and to the previous turn, lexical novelty of the turn and of what preceded it, topic
  length), fitted by ``logichunk memory calibrate``. No model, microseconds.
* :class:`RerankerArbiter` — any cross-encoder / reranker (``score(query, texts) -> array``, the
  protocol :mod:`logichunk.retrieve` uses) scoring the pair (topic summary, new query).
* :class:`LMArbiter` — a causal LM as the scorer: P(YES) of the same-task question through its chat
  template, from :meth:`~logichunk.models.lm.LanguageModel.option_logprobs` (the packaged
  Qwen2.5-Coder-0.5B-Instruct works offline).
* :class:`LLMArbiter` — a chat LLM over the OpenAI-compatible client, answering YES or NO. A failed
  call or an answer that is neither falls back to another arbiter (the rule by default), and the
  verdict says so: the conversation never stops because an endpoint did.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ..errors import LogichunkError
from .calibration import Calibration

if TYPE_CHECKING:
    from ..models.rerank import Reranker

__all__ = [
    "Arbiter", "ArbiterQuery", "LLMArbiter", "LMArbiter", "RerankerArbiter", "RuleArbiter", "Verdict",
    "same_task_messages",
]


@dataclass(frozen=True)
class ArbiterQuery:
    """What an arbiter sees: ``summary`` of the current topic, the new ``query``, its ``anchor`` text,
    ``similarity`` (cosine of the anchor to the topic kernel) and the online ``features``."""

    summary: str
    query: str
    anchor: str
    similarity: float
    features: Mapping[str, float] = field(default_factory=dict)
    language: str = "en"


@dataclass(frozen=True)
class Verdict:
    """``same_topic``; ``score`` in [0, 1] = P(same topic) (1/0 for a plain YES/NO); ``arbiter`` = the
    name of whoever decided (a fallback names itself); ``detail`` says why, briefly."""

    same_topic: bool
    score: float
    arbiter: str
    detail: str = ""


@runtime_checkable
class Arbiter(Protocol):
    name: str

    def judge(self, query: ArbiterQuery) -> Verdict: ...


class RuleArbiter:
    """The calibrated default rule: ``P(same) = calibration.rule(features)``, same when
    ``P >= calibration.rule_threshold``; without a fitted rule, the midpoint of the grey zone."""

    name = "rule"
    reads_text = False  # it judges from the features alone

    def __init__(self, calibration: Calibration) -> None:
        self.calibration = calibration

    def judge(self, query: ArbiterQuery) -> Verdict:
        c = self.calibration
        if c.rule is None:
            mid = (c.hi + c.lo) / 2
            same = query.similarity >= mid
            return Verdict(same, float(query.similarity), self.name,
                           f"cosine {_versus(float(query.similarity), mid, same)} midpoint")
        p = c.rule.prob(query.features)
        same = p >= c.rule_threshold
        return Verdict(same, p, self.name, f"P(same)={_versus(p, c.rule_threshold, same)} threshold")


def _versus(value: float, bound: float, above: bool) -> str:
    """``value >= bound`` or ``value < bound``, with as many decimals as tell them apart (0.698 < 0.700, not
    0.70 vs 0.70)."""
    digits = 2
    while digits < 6 and f"{value:.{digits}f}" == f"{bound:.{digits}f}":
        digits += 1
    return f"{value:.{digits}f} {'>=' if above else '<'} {bound:.{digits}f}"


class RerankerArbiter:
    """A cross-encoder or reranker scores (new query, topic summary); same topic when the score is at
    least ``threshold`` (set it for the reranker's scale; 0.5 suits one that outputs probabilities)."""

    def __init__(self, reranker: Reranker, *, threshold: float = 0.5, name: str = "reranker") -> None:
        self.reranker = reranker
        self.threshold = float(threshold)
        self.name = name

    def judge(self, query: ArbiterQuery) -> Verdict:
        s = float(np.asarray(self.reranker.score(query.query, [query.summary]), dtype=np.float64).reshape(-1)[0])
        return Verdict(s >= self.threshold, s, self.name, f"score {s:.3f} vs {self.threshold:.3f}")


# --------------------------------------------------------------------------- the same-task question

_PROMPTS = {
    "en": (
        "You track the topic of a conversation between a user and an assistant. Decide whether the new "
        "message continues the current task flow. Causal, progressive or referring relations count as the "
        "same task flow: writing code and then running, deploying, testing or fixing it; a bug report and "
        "its fix; a follow-up question that refers back to the task. A request about an unrelated subject "
        "is a new task. Answer with one word: YES (same task flow) or NO (new task).",
        "Current task (summary of the conversation so far):\n{summary}\n\nNew message:\n{query}\n\n"
        "Same task flow? Answer YES or NO.",
    ),
    "zh": (
        "你负责跟踪用户与助手对话的话题。判断新消息是否延续当前的任务流。因果、递进或指代关系都算同一任务流："
        "写完代码再运行、部署、测试或修复；报告错误再修复；回指当前任务的追问。与当前任务无关的新请求算新任务。"
        "只回答一个词：YES（同一任务流）或 NO（新任务）。",
        "当前任务（到目前为止的对话摘要）：\n{summary}\n\n新消息：\n{query}\n\n是否同一任务流？回答 YES 或 NO。",
    ),
}


def same_task_messages(query: ArbiterQuery) -> list[dict[str, str]]:
    """The chat messages of the same-task question (Chinese when the turn is Chinese)."""
    system, user = _PROMPTS["zh" if query.language.startswith("zh") else "en"]
    return [{"role": "system", "content": system},
            {"role": "user", "content": user.format(summary=query.summary, query=query.query)}]


class LMArbiter:
    """A causal LM as the scorer: ``P(YES) / (P(YES) + P(NO))`` after the same-task question; same
    topic when it is at least ``threshold``. Any :class:`~logichunk.models.lm.LanguageModel` works
    (``load_default_lm()`` is the packaged Qwen2.5-Coder-0.5B-Instruct)."""

    def __init__(self, lm: Any, *, threshold: float = 0.5, name: str = "lm") -> None:
        self.lm = lm
        self.threshold = float(threshold)
        self.name = name

    def judge(self, query: ArbiterQuery) -> Verdict:
        lp = np.asarray(self.lm.option_logprobs(same_task_messages(query), ["YES", "NO"]), dtype=np.float64)
        m = lp.max()
        p = float(np.exp(lp[0] - m) / np.exp(lp - m).sum())
        return Verdict(p >= self.threshold, p, self.name, f"P(YES)={p:.2f}")


_YES = re.compile(r"^\W*(?:(?:yes|y|same)\b|是|对|相同|同一)", re.IGNORECASE)
_NO = re.compile(r"^\W*(?:(?:no|n|new|different)\b|否|不|新)", re.IGNORECASE)


class LLMArbiter:
    """A chat LLM (:class:`~logichunk.models.llm.LLM`: the OpenAI-compatible client, or a
    :class:`~logichunk.models.llm.ScriptedLLM`) answering YES or NO. Errors and unclear answers go to
    ``fallback`` (a :class:`RuleArbiter` is typical); ``failures`` counts them. An endpoint that
    cannot be reached at all is not asked again for ``cooldown`` seconds (every turn would otherwise
    wait through the client's retries: 19 s for 7 turns of a replay against a stopped server)."""

    def __init__(self, llm: Any, *, fallback: Arbiter | None = None, name: str = "llm", max_tokens: int = 4,
                 cooldown: float = 30.0, on_fallback: Callable[[str], None] | None = None) -> None:
        self.llm = llm
        self.fallback = fallback
        self.name = name
        self.max_tokens = int(max_tokens)
        self.cooldown = float(cooldown)
        self.on_fallback = on_fallback  # told the first time the fallback decides (a fallback is never silent)
        self.failures = 0
        self._down_until = 0.0

    def _fall(self, query: ArbiterQuery, why: str) -> Verdict:
        self.failures += 1
        if self.fallback is None:
            raise LogichunkError(f"LLM arbiter: {why}, and no fallback arbiter is configured")
        if self.failures == 1 and self.on_fallback is not None:
            self.on_fallback(f"the {self.name} arbiter {why}; the {getattr(self.fallback, 'name', 'fallback')} "
                             "arbiter decides instead")
        v = self.fallback.judge(query)
        return Verdict(v.same_topic, v.score, v.arbiter, f"{self.name} {why}; {v.detail}")

    def judge(self, query: ArbiterQuery) -> Verdict:
        from ..models.http import EndpointUnreachable

        if time.monotonic() < self._down_until:
            return self._fall(query, "not asked (unreachable moments ago)")
        try:
            answer = self.llm.complete(same_task_messages(query), max_tokens=self.max_tokens, temperature=0.0).text
        except LogichunkError as e:
            if isinstance(e, EndpointUnreachable):
                self._down_until = time.monotonic() + self.cooldown
            msg = str(e)
            msg = msg if len(msg) <= 160 else msg[:100] + " … " + msg[-50:]  # keep the end: "(gave up after 4 attempts)"
            return self._fall(query, f"failed ({type(e).__name__}: {msg})")
        text = answer.strip()
        if _YES.match(text):
            return Verdict(True, 1.0, self.name, f"answered {text[:20]!r}")
        if _NO.match(text):
            return Verdict(False, 0.0, self.name, f"answered {text[:20]!r}")
        return self._fall(query, f"gave an unclear answer {text[:40]!r}")

"""Rerankers (LM scorers behind one protocol) and the in-process chat LLM, on a tiny local model and
on a scripted LM whose preferences are known."""

from __future__ import annotations

import numpy as np
import pytest

from logichunk.errors import InputError
from logichunk.models.rerank import LikelihoodReranker, Reranker, YesNoReranker, resolve_reranker
from logichunk.retrieve import retrieve
from logichunk.store import Store

TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")


class KnowingLM:
    """A LanguageModel whose option log-probs follow word overlap between prompt and options: a
    stand-in with known preferences, to test the plumbing (prompt shape, option mapping, order)."""

    model_id = "knowing"

    def __init__(self) -> None:
        self.prompts: list[object] = []

    def token_logprobs(self, text):  # pragma: no cover - not used by rerankers
        raise NotImplementedError

    def option_logprobs(self, prompt, options):
        self.prompts.append(prompt)
        text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
        if isinstance(prompt, str):  # likelihood: the option is the query
            passage = text.split("Passage:", 1)[1]
            q = options[0].split()
            return np.array([-10.0 + sum(w in passage for w in q)])
        question = text.split("Question:", 1)[1].split("\n", 1)[0].split()
        passage = text.split("Passage:", 1)[1]
        overlap = sum(w in passage for w in question)
        yes = -1.0 if overlap >= 2 else -4.0
        return np.array([yes, yes - 1, -2.5, -3.5])


PASSAGES = ["The cat sat on the mat.", "Rivers flow into the sea near the delta.", "Bread needs flour and yeast."]


@pytest.mark.parametrize("cls", [LikelihoodReranker, YesNoReranker])
def test_lm_rerankers_follow_the_model(cls):
    lm = KnowingLM()
    r = cls(lm)
    assert isinstance(r, Reranker)
    s = r.score("where do rivers flow into the sea", PASSAGES)
    assert s.shape == (3,) and int(np.argmax(s)) == 1
    assert len(lm.prompts) == 3
    with pytest.raises(InputError):
        r.score("  ", PASSAGES)


def test_yesno_prompt_puts_the_question_first():
    lm = KnowingLM()
    YesNoReranker(lm).score("q words", ["p one", "p two"])
    users = [p[-1]["content"] for p in lm.prompts]
    assert all(u.startswith("Question: q words") for u in users)
    assert users[0].split("Passage:")[0] == users[1].split("Passage:")[0]  # shared prefix, cached by the LM


def test_resolve_reranker_specs():
    assert resolve_reranker("none") is None and resolve_reranker(None) is None
    assert isinstance(resolve_reranker("yesno", lm=KnowingLM()), YesNoReranker)
    assert isinstance(resolve_reranker("likelihood", lm=KnowingLM()), LikelihoodReranker)
    with pytest.raises(InputError):
        resolve_reranker("magic")
    with pytest.raises(InputError):
        resolve_reranker("cross:")


def test_retrieve_reranks_with_the_protocol(tmp_path):
    from logichunk.models import HashEmbedder

    with Store.open(str(tmp_path / "r.db"), embedder=HashEmbedder(256)) as store:
        store.add_document("d", [(None, ["Rivers flow into the sea near the delta. " * 4 + "\n\n",
                                         "The cat sat on the mat all day long. " * 4 + "\n\n",
                                         "Bread needs flour and yeast to rise well. " * 4])])
        store.rechunk_dirty()
        base = retrieve(store, "cat mat", mode="basic", top_k=3)

        class Reverse:
            def score(self, query, texts):
                return -np.arange(len(texts), dtype=float)[::-1]  # prefers the last candidate

        rr = retrieve(store, "cat mat", mode="basic", top_k=3, reranker=Reverse())
        assert len(rr) == len(base) and rr[0].score == 0.0
        assert rr[0].chunk.id != base[0].chunk.id or len(base) == 1


@pytest.fixture(scope="module")
def tiny():
    pytest.importorskip("torch")
    from logichunk.models.lm import build_tiny_lm

    return build_tiny_lm(["yes no Question Passage rivers sea cat mat 1 2"], window=32, max_context=128,
                         chat_template=TEMPLATE)


def test_rerankers_on_a_real_tiny_model_are_finite_and_deterministic(tiny):
    for cls in (LikelihoodReranker, YesNoReranker):
        a = cls(tiny).score("rivers sea", PASSAGES)
        b = cls(tiny).score("rivers sea", PASSAGES)
        assert a.shape == (3,) and np.isfinite(a).all()
        np.testing.assert_allclose(a, b)


def test_local_chat_llm_generates_and_counts_tokens(tiny):
    from logichunk.models.local_llm import LocalChatLLM

    llm = LocalChatLLM(tiny, max_prompt_tokens=96)
    r1 = llm.complete([{"role": "user", "content": "Say yes"}], max_tokens=4)
    r2 = llm.complete([{"role": "user", "content": "Say yes"}], max_tokens=4)
    assert r1.text == r2.text  # greedy
    assert r1.usage.prompt_tokens > 0 and 0 < r1.usage.completion_tokens <= 4 and not r1.usage.estimated
    assert llm.usage.calls == 2 and llm.usage.total_tokens == 2 * r1.usage.total_tokens
    with pytest.raises(InputError):
        llm.complete([{"role": "user", "content": "x " * 200}], max_tokens=4)  # over the prompt limit


def test_resolve_llm_local_folder(tiny, tmp_path):
    from logichunk.models.local_llm import LocalChatLLM
    from logichunk.models.registry import resolve_llm

    tiny.model.save_pretrained(str(tmp_path / "m"))
    tiny.tokenizer.save_pretrained(str(tmp_path / "m"))
    r = resolve_llm(f"local:{tmp_path / 'm'}")
    assert r.backend == "local" and isinstance(r.model, LocalChatLLM)
    assert isinstance(r.model.complete([{"role": "user", "content": "hi"}], max_tokens=2).text, str)

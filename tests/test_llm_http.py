"""HTTP model clients against a real loopback server speaking the OpenAI protocol (no mocks)."""

from __future__ import annotations

import socket
import time

import numpy as np
import pytest

from logichunk.errors import LogichunkError
from logichunk.models import (
    EndpointHTTPError,
    EndpointTimeout,
    EndpointUnreachable,
    MalformedResponse,
    OpenAIChatLLM,
    OpenAIEmbedder,
    RetryPolicy,
    ScriptedLLM,
    ScriptExhausted,
    resolve_embedder,
    resolve_llm,
)
from logichunk.models.llm import estimate_tokens
from loopback_server import LoopbackServer, Reply, tokenize

pytest_plugins = ["loopback_server"]

FAST = RetryPolicy(retries=2, backoff=0.01, max_backoff=0.05)
MSG = [{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": "Where is the break?"}]


def llm_for(srv: LoopbackServer, **kw) -> OpenAIChatLLM:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout", 5.0)
    return OpenAIChatLLM(srv.base_url, "test-model", **kw)


# -- chat: success and counters -------------------------------------------------------------------


def test_chat_success_sends_protocol_fields_and_counts_usage(loopback):
    loopback.chat = ["[3, 7]", "第二个回答"]
    llm = llm_for(loopback, api_key="sk-test", prompt_price_per_m=1.0, completion_price_per_m=2.0)
    r1 = llm.complete(MSG, max_tokens=32, temperature=0.2, stop=["\n\n"])
    r2 = llm.complete([{"role": "user", "content": "再来"}], max_tokens=8, temperature=0.0)
    assert (r1.text, r2.text) == ("[3, 7]", "第二个回答")
    assert r1.finish_reason == "stop" and r1.model == "test-model"

    req = loopback.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "test-model" and req.body["messages"] == MSG
    assert req.body["max_tokens"] == 32 and req.body["temperature"] == 0.2 and req.body["stop"] == ["\n\n"]
    assert req.headers["Authorization"] == "Bearer sk-test"

    p1 = sum(len(tokenize(m["content"])) for m in MSG)
    assert r1.usage.prompt_tokens == p1 and r1.usage.completion_tokens == len(tokenize("[3, 7]"))
    assert not r1.usage.estimated
    snap = llm.usage.snapshot()
    assert snap["calls"] == 2 and snap["failures"] == 0
    assert snap["prompt_tokens"] == p1 + len(tokenize("再来"))
    assert snap["completion_tokens"] == len(tokenize("[3, 7]")) + len(tokenize("第二个回答"))
    assert snap["cost"] == pytest.approx((snap["prompt_tokens"] * 1.0 + snap["completion_tokens"] * 2.0) / 1e6)
    assert "sk-test" not in repr(llm.client)


def test_chat_without_usage_is_estimated(loopback):
    loopback.enqueue("chat/completions", Reply(json={"choices": [{"message": {"content": "好的，明白。"}}]}))
    llm = llm_for(loopback)
    r = llm.complete(MSG, max_tokens=8)
    assert r.text == "好的，明白。" and r.usage.estimated
    assert r.usage.completion_tokens == estimate_tokens("好的，明白。") == 6
    assert llm.usage.estimated_calls == 1


def test_api_key_is_required_when_server_demands_it():
    with LoopbackServer(api_key="right") as srv:
        with pytest.raises(EndpointHTTPError) as ei:
            OpenAIChatLLM(srv.base_url, "m", api_key="wrong", retry=FAST).complete(MSG)
        assert ei.value.status == 401 and srv.count("chat/completions") == 1  # 4xx: not retried
        assert "right" not in str(ei.value) and "wrong" not in str(ei.value)
        assert OpenAIChatLLM(srv.base_url, "m", api_key="right", retry=FAST).complete(MSG).text.startswith("echo:")


# -- chat: failures and retries -------------------------------------------------------------------


def test_timeout_raises_clear_error_quickly(loopback):
    loopback.slow("chat/completions", 3.0, times=5)
    llm = llm_for(loopback, timeout=0.3, retry=RetryPolicy(retries=1, backoff=0.01))
    t0 = time.perf_counter()
    with pytest.raises(EndpointTimeout) as ei:
        llm.complete(MSG)
    elapsed = time.perf_counter() - t0
    assert elapsed < 2.0, elapsed  # two attempts of 0.3 s, not the server's 3 s
    assert ei.value.attempts == 2 and "timed out after 0.3s" in str(ei.value)
    assert loopback.count("chat/completions") == 2
    assert llm.usage.failures == 1 and llm.usage.calls == 0


def test_timeout_then_success_is_retried(loopback):
    loopback.slow("chat/completions", 2.0, times=1)
    loopback.chat = ["late but fine"]
    llm = llm_for(loopback, timeout=0.3)
    assert llm.complete(MSG).text == "late but fine"
    assert loopback.count("chat/completions") == 2 and llm.client.stats["retries"] == 1


def test_500_then_success(loopback):
    loopback.fail("chat/completions", 500, times=2)
    loopback.chat = ["recovered"]
    llm = llm_for(loopback)
    assert llm.complete(MSG).text == "recovered"
    assert loopback.count("chat/completions") == 3
    assert llm.client.stats == {"requests": 3, "retries": 2, "failures": 0}


def test_500_forever_gives_up_after_n_retries(loopback):
    loopback.fail("chat/completions", 503, times=10, message="overloaded")
    sleeps: list[float] = []
    llm = llm_for(loopback, retry=RetryPolicy(retries=3, backoff=0.5, max_backoff=1.5, jitter=0.0))
    llm.client._sleep = sleeps.append  # record the backoff instead of waiting for it
    with pytest.raises(EndpointHTTPError) as ei:
        llm.complete(MSG)
    err = ei.value
    assert err.status == 503 and err.attempts == 4
    assert "HTTP 503" in str(err) and "overloaded" in str(err) and "gave up after 4 attempts" in str(err)
    assert loopback.count("chat/completions") == 4
    assert sleeps == [0.5, 1.0, 1.5]  # exponential, capped
    assert isinstance(err, LogichunkError)


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_4xx_is_not_retried(loopback, status):
    loopback.fail("chat/completions", status, times=3, message="bad request")
    llm = llm_for(loopback)
    with pytest.raises(EndpointHTTPError) as ei:
        llm.complete(MSG)
    assert ei.value.status == status and ei.value.attempts == 1
    assert loopback.count("chat/completions") == 1


def test_429_is_retried_and_honours_retry_after(loopback):
    loopback.fail("chat/completions", 429, times=1, headers={"Retry-After": "0.2"})
    loopback.chat = ["after rate limit"]
    sleeps: list[float] = []
    llm = llm_for(loopback, retry=RetryPolicy(retries=2, backoff=0.01, max_backoff=1.0, jitter=0.0))
    llm.client._sleep = sleeps.append
    assert llm.complete(MSG).text == "after rate limit"
    assert sleeps == [0.2]


def test_malformed_json_is_a_clear_error_and_not_retried(loopback):
    loopback.malformed("chat/completions", times=3)
    llm = llm_for(loopback)
    with pytest.raises(MalformedResponse) as ei:
        llm.complete(MSG)
    assert "not JSON" in str(ei.value)
    assert loopback.count("chat/completions") == 1
    assert llm.usage.failures == 1


@pytest.mark.parametrize("payload, needle", [
    ({"choices": []}, "choices.0.message.content"),
    ({"id": "x"}, "choices.0.message.content"),
    ({"choices": [{"message": {"role": "assistant", "content": None}}]}, "no text content"),
    ({"error": {"message": "model not loaded"}}, "model not loaded"),
    ([1, 2, 3], "choices.0.message.content"),
])
def test_missing_fields_are_clear_errors(loopback, payload, needle):
    loopback.enqueue("chat/completions", Reply(json=payload))
    with pytest.raises(MalformedResponse) as ei:
        llm_for(loopback).complete(MSG)
    assert needle in str(ei.value)


def test_dropped_connection_is_retried(loopback):
    loopback.drop("chat/completions", times=1)
    loopback.chat = ["second try"]
    assert llm_for(loopback).complete(MSG).text == "second try"
    assert loopback.count("chat/completions") == 2


def test_connection_refused_is_unreachable_after_retries():
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAIChatLLM(f"http://127.0.0.1:{port}/v1", "m", retry=FAST, timeout=2.0)
    with pytest.raises(EndpointUnreachable) as ei:
        llm.complete(MSG)
    assert ei.value.attempts == 3 and f"127.0.0.1:{port}" in str(ei.value)


def test_bad_messages_and_urls_are_rejected_before_sending(loopback):
    llm = llm_for(loopback)
    with pytest.raises(LogichunkError):
        llm.complete([])
    with pytest.raises(LogichunkError):
        llm.complete([{"content": "no role"}])
    with pytest.raises(LogichunkError):
        OpenAIChatLLM("127.0.0.1:8080/v1", "m")
    assert loopback.count("chat/completions") == 0


# -- embeddings endpoint --------------------------------------------------------------------------


def _expected(srv: LoopbackServer, texts: list[str]) -> np.ndarray:
    v = np.asarray([srv.embed_fn(t) for t in texts], dtype=np.float64)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_openai_embedder_batches_and_normalises(loopback):
    texts = ["alpha beta", "第一句话。", "gamma", "第二句话。", "delta epsilon"]
    emb = OpenAIEmbedder(loopback.base_url, "emb-model", batch_size=2, retry=FAST)
    out = emb.embed(texts)
    assert out.dtype == np.float32 and out.shape == (5, loopback.dim)
    np.testing.assert_allclose(out, _expected(loopback, texts), atol=1e-6)
    assert loopback.count("embeddings") == 3  # 2 + 2 + 1
    assert [r.body["input"] for r in loopback.requests] == [texts[0:2], texts[2:4], texts[4:5]]
    assert emb.dim == loopback.dim and emb.usage["calls"] == 3 and emb.usage["texts"] == 5
    assert emb.usage["prompt_tokens"] == sum(len(tokenize(t)) for t in texts)
    assert emb.embed([]).shape == (0, loopback.dim)


def test_openai_embedder_reorders_by_index_and_prefixes_queries(loopback):
    texts = ["one", "two", "three"]
    vecs = [loopback.embed_fn(t) for t in texts]
    shuffled = [{"index": i, "embedding": vecs[i]} for i in (2, 0, 1)]
    loopback.enqueue("embeddings", Reply(json={"data": shuffled}))
    emb = OpenAIEmbedder(loopback.base_url, "m", dim=loopback.dim, retry=FAST, query_prefix="query: ")
    np.testing.assert_allclose(emb.embed(texts), _expected(loopback, texts), atol=1e-6)
    emb.embed(["find me"], kind="query")
    assert loopback.requests[-1].body["input"] == ["query: find me"]


def test_openai_embedder_learns_dim_with_one_probe(loopback):
    emb = OpenAIEmbedder(loopback.base_url, "m", retry=FAST)
    assert loopback.count("embeddings") == 0
    assert emb.dim == loopback.dim
    assert loopback.count("embeddings") == 1


def test_openai_embedder_accepts_base64(loopback):
    import base64

    vec = np.arange(1, loopback.dim + 1, dtype="<f4")
    loopback.enqueue("embeddings", Reply(json={"data": [{"index": 0, "embedding": base64.b64encode(vec.tobytes()).decode()}]}))
    out = OpenAIEmbedder(loopback.base_url, "m", retry=FAST).embed(["x"])
    np.testing.assert_allclose(out[0], vec / np.linalg.norm(vec), atol=1e-6)


@pytest.mark.parametrize("payload, needle", [
    ({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}, "1 embeddings for 2 inputs"),
    ({"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 0, "embedding": [0.0, 1.0]}]}, "repeated index"),
    ({"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}]}, "sizes"),
    ({"data": [{"index": 0, "embedding": [1.0, "x"]}, {"index": 1, "embedding": [1.0, 2.0]}]}, "finite (float32) numbers"),
    # finite JSON numbers that overflow float32 (then NaN once normalised), booleans and numeric strings
    ({"data": [{"index": 0, "embedding": [1e300, 0.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}, "finite (float32)"),
    ({"data": [{"index": 0, "embedding": [True, False]}, {"index": 1, "embedding": [1.0, 2.0]}]}, "finite (float32)"),
    ({"data": [{"index": 0, "embedding": ["0.1", "0.2"]}, {"index": 1, "embedding": [1.0, 2.0]}]}, "finite (float32)"),
    ({"data": [{"index": 0}, {"index": 1}]}, "'embedding'"),
    ({"object": "list"}, "'data'"),
])
def test_openai_embedder_rejects_bad_answers(loopback, payload, needle):
    loopback.enqueue("embeddings", Reply(json=payload))
    with pytest.raises(MalformedResponse) as ei:
        OpenAIEmbedder(loopback.base_url, "m", retry=FAST).embed(["a", "b"])
    assert needle in str(ei.value)


def test_openai_embedder_retries_5xx(loopback):
    loopback.fail("embeddings", 502, times=2)
    out = OpenAIEmbedder(loopback.base_url, "m", retry=FAST).embed(["retry me"])
    assert out.shape == (1, loopback.dim) and loopback.count("embeddings") == 3


# -- registry over HTTP ---------------------------------------------------------------------------


def test_registry_builds_http_models(loopback, monkeypatch):
    monkeypatch.setenv("LOGICHUNK_API_KEY", "env-key")
    loopback.chat = ["pong"]
    r = resolve_llm(f"openai:{loopback.base_url}#chat-model")
    assert r.backend == "openai" and r.model.complete([{"role": "user", "content": "ping"}]).text == "pong"
    assert loopback.requests[-1].headers["Authorization"] == "Bearer env-key"
    assert loopback.requests[-1].body["model"] == "chat-model"
    e = resolve_embedder(f"openai:{loopback.base_url}#emb-model")
    assert e.backend == "openai" and e.model.embed(["x", "x"]).shape == (2, loopback.dim)
    assert "openai" in e.description
    for bad in ("openai:127.0.0.1:8080#m", f"openai:{loopback.base_url}", "nonsense:x"):
        with pytest.raises(LogichunkError):
            resolve_llm(bad)


# -- the loopback completions endpoint (used by LM-logprob clients) -------------------------------


def test_loopback_completions_return_prompt_logprobs(loopback):
    from logichunk.models.http import JSONClient

    prompt = "第一句。 Second sentence here.\n"
    ans = JSONClient(loopback.base_url).post("completions", {"model": "m", "prompt": prompt, "max_tokens": 0,
                                                             "echo": True, "logprobs": 1})
    lp = ans["choices"][0]["logprobs"]
    assert "".join(lp["tokens"]) == prompt and ans["choices"][0]["text"] == prompt
    assert lp["text_offset"] == [prompt.index(t, o) for t, o in zip(lp["tokens"], lp["text_offset"], strict=True)]
    assert lp["token_logprobs"][0] is None and all(-6.0 <= x < 0 for x in lp["token_logprobs"][1:])
    loopback.logprob_fn = lambda tok: -1.0
    ans = JSONClient(loopback.base_url).post("completions", {"model": "m", "prompt": ["a b", "c"], "max_tokens": 1,
                                                             "logprobs": 0})
    assert [c["text"] for c in ans["choices"]] == [" ok", " ok"]
    assert ans["choices"][1]["logprobs"]["token_logprobs"] == [-1.0]


# -- the scripted LLM -----------------------------------------------------------------------------


def test_scripted_llm_answers_in_order_and_counts():
    llm = ScriptedLLM(["[2]", "不需要切分。STOP ignored"])
    assert llm.complete(MSG, max_tokens=10).text == "[2]"
    r = llm.complete([{"role": "user", "content": "第二次"}], stop=["STOP"])
    assert r.text == "不需要切分。" and r.usage.estimated
    assert llm.calls == 2 and llm.prompts[1][0]["content"] == "第二次"
    assert llm.usage.prompt_tokens == sum(estimate_tokens(m["content"]) for m in MSG) + estimate_tokens("第二次")
    with pytest.raises(ScriptExhausted):
        llm.complete(MSG)


def test_scripted_llm_callable_and_cycle():
    llm = ScriptedLLM(lambda msgs: str(len(msgs[-1]["content"])))
    assert llm.complete([{"role": "user", "content": "abcd"}]).text == "4"
    cyc = ScriptedLLM(["a", "b"], cycle=True)
    assert [cyc.complete(MSG).text for _ in range(5)] == ["a", "b", "a", "b", "a"]
    with pytest.raises(TypeError):
        ScriptedLLM("one string")


def test_a_url_without_host_is_refused_before_any_request():
    from logichunk.errors import LogichunkError
    from logichunk.models.http import JSONClient

    with pytest.raises(LogichunkError, match="names no host"):
        JSONClient("http://")


def test_an_answer_that_is_not_json_counts_as_a_failure(loopback):
    from logichunk.models.http import JSONClient

    loopback.enqueue("embeddings", Reply(status=200, body=b"<html>oops</html>"))
    client = JSONClient(loopback.base_url, retry=FAST)
    with pytest.raises(MalformedResponse):
        client.post("embeddings", {"input": ["a"]})
    assert client.stats["failures"] == 1


# -- timeouts and retries from the environment (every client, every verb) -----------------------------


def test_environment_sets_the_timeout_and_retries_of_every_client(loopback, monkeypatch):
    monkeypatch.setenv("LOGICHUNK_HTTP_TIMEOUT", "0.3")
    monkeypatch.setenv("LOGICHUNK_HTTP_RETRIES", "0")
    loopback.slow("chat/completions", 3.0, times=3)
    llm = OpenAIChatLLM(loopback.base_url, "m")  # no timeout, no retry given: the environment decides
    t0 = time.perf_counter()
    with pytest.raises(EndpointTimeout) as ei:
        llm.complete(MSG)
    assert time.perf_counter() - t0 < 2.0
    assert ei.value.attempts == 1 and "timed out after 0.3s" in str(ei.value)
    emb = OpenAIEmbedder(loopback.base_url, "m")
    assert emb.client.timeout == 0.3 and emb.client.retry.retries == 0
    # an explicit argument still wins over the environment
    assert OpenAIChatLLM(loopback.base_url, "m", timeout=7.0).client.timeout == 7.0


def test_without_environment_the_defaults_stay(loopback, monkeypatch):
    monkeypatch.delenv("LOGICHUNK_HTTP_TIMEOUT", raising=False)
    monkeypatch.delenv("LOGICHUNK_HTTP_RETRIES", raising=False)
    assert OpenAIChatLLM(loopback.base_url, "m").client.timeout == 120.0  # generating takes longer
    emb = OpenAIEmbedder(loopback.base_url, "m")
    assert emb.client.timeout == 60.0 and emb.client.retry.retries == 3


@pytest.mark.parametrize(("name", "value"), [("LOGICHUNK_HTTP_TIMEOUT", "0"), ("LOGICHUNK_HTTP_TIMEOUT", "soon"),
                                             ("LOGICHUNK_HTTP_TIMEOUT", "inf"), ("LOGICHUNK_HTTP_RETRIES", "-1"),
                                             ("LOGICHUNK_HTTP_RETRIES", "2.5")])
def test_bad_environment_values_are_clear_errors(loopback, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(LogichunkError, match=f"\\${name} must be"):
        OpenAIChatLLM(loopback.base_url, "m")


def test_cli_validate_gives_up_after_the_environment_timeout(loopback, tmp_path):
    import os
    import subprocess
    import sys

    loopback.slow("chat/completions", 5.0, times=10)
    src = tmp_path / "a.txt"
    src.write_text("第一句话说了一件事。第二句话说了另一件事。", encoding="utf-8")
    env = dict(os.environ, LOGICHUNK_HTTP_TIMEOUT="0.5", LOGICHUNK_HTTP_RETRIES="0")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "logichunk", "validate", str(src), "--llm",
                           f"openai:{loopback.base_url}#m"], capture_output=True, text=True, env=env, timeout=60)
    elapsed = time.perf_counter() - t0
    assert "Traceback" not in proc.stderr
    assert "timed out after 0.5s" in proc.stderr + proc.stdout
    assert elapsed < 20, elapsed  # one 0.5 s attempt per chunk, not 4 × 120 s

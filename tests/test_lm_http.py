"""The completions-logprobs LM against a real HTTP server on loopback (tests/loopback_server.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from logichunk.chunkers.meta import chunk_msp, chunk_ppl
from logichunk.models.http import MalformedResponse, RetryPolicy
from logichunk.models.lm import LanguageModel
from logichunk.models.lm_http import CompletionsLM
from logichunk.tree import check_tree
from loopback_server import LoopbackServer, Reply, tokenize

TEXT = ("The council met on Monday. It approved the budget!  Then it adjourned.\n\n"
        "今天天气很好。我们去公园。 Odd\tspacing and emoji 😀 too. ") * 6


@pytest.fixture
def srv():
    with LoopbackServer() as s:
        yield s


def _expected(s: LoopbackServer, text: str, a: int, b: int) -> float:
    return s.logprob_fn(text[a:b])


def test_single_request_scores_every_token(srv: LoopbackServer) -> None:
    lm = CompletionsLM(srv.base_url, "m", max_chars=10_000)
    assert isinstance(lm, LanguageModel)
    text = TEXT[:200]
    r = lm.token_logprobs(text)
    toks = tokenize(text)
    assert len(r) == len(toks) and "".join(text[a:b] for a, b in zip(r.starts, r.ends, strict=True)) == text
    assert math.isnan(r.logprobs[0])
    assert r.logprobs[1:] == pytest.approx([srv.logprob_fn(t) for t in toks[1:]])
    body = srv.requests[-1].body
    assert body["echo"] is True and body["max_tokens"] == 0 and body["logprobs"] == 0 and body["prompt"] == text


def test_long_text_in_windows_with_context(srv: LoopbackServer) -> None:
    lm = CompletionsLM(srv.base_url, "m", max_chars=120, context_chars=50)
    r = lm.token_logprobs(TEXT)
    n_req = srv.count("completions")
    assert n_req >= len(TEXT) // 120
    assert (np.diff(r.starts) > 0).all() and (r.ends > r.starts).all() and r.ends[-1] == len(TEXT)
    # every token is scored once, by its own text (the loopback's log-probs ignore context) ...
    assert np.isfinite(r.logprobs[1:]).all()
    clipped = 0
    for a, b, lp in zip(r.starts[1:].tolist(), r.ends[1:].tolist(), r.logprobs[1:].tolist(), strict=True):
        if lp != pytest.approx(srv.logprob_fn(TEXT[a:b])):
            # a token straddling a window start: its span was clipped to the window
            clipped += 1
            assert any(lp == pytest.approx(srv.logprob_fn(TEXT[a - k : b])) for k in range(1, 4))
    assert clipped < n_req
    # ... and each later request carried up to 50 characters of preceding text as context
    prompts = [q.body["prompt"] for q in srv.requests]
    assert all(len(p) <= 170 for p in prompts)
    pos = 0
    for p in prompts[1:]:
        start = TEXT.index(p, max(0, pos - 60))
        assert start > 0 and TEXT[start:].startswith(p)
        pos = start + len(p)
    assert pos == len(TEXT)
    # the spans tile the text: nothing dropped, nothing scored twice
    assert r.starts[0] == 0 and (r.starts[1:] == r.ends[:-1]).all()


def test_option_logprobs_batched(srv: LoopbackServer) -> None:
    lm = CompletionsLM(srv.base_url, "m")
    msgs = [{"role": "system", "content": "Decide."}, {"role": "user", "content": "Split?"}]
    got = lm.option_logprobs(msgs, ["1", "2 more"])
    assert srv.count("completions") == 1
    assert got[0] == pytest.approx(srv.logprob_fn(" 1"))
    assert got[1] == pytest.approx(srv.logprob_fn(" 2") + srv.logprob_fn(" more"))
    assert srv.requests[-1].body["prompt"][0].endswith("User: Split?\n\nAnswer: 1")


def test_malformed_and_retried_answers(srv: LoopbackServer) -> None:
    lm = CompletionsLM(srv.base_url, "m", retry=RetryPolicy(retries=2, backoff=0.01))
    srv.enqueue("completions", Reply(json={"choices": [{"index": 0, "text": "x"}]}))
    with pytest.raises(MalformedResponse, match="logprobs"):
        lm.token_logprobs("Hello there.")
    srv.enqueue("completions", Reply(json={"choices": [{"index": 0, "logprobs": {
        "tokens": ["a", "b"], "token_logprobs": [None, -1.0], "text_offset": [1, 0]}}]}))
    with pytest.raises(MalformedResponse, match="increasing"):
        lm.token_logprobs("ab")
    srv.fail("completions", 503, times=2)
    assert len(lm.token_logprobs("Hello there.")) == len(tokenize("Hello there."))
    assert lm.stats["retries"] >= 2


def test_ppl_and_msp_chunking_over_http(srv: LoopbackServer) -> None:
    lm = CompletionsLM(srv.base_url, "m", max_chars=150, context_chars=40)
    tree = chunk_ppl(TEXT, lm, max_size=200, target=150)
    check_tree(tree)
    assert "".join(tree.text_of(c) for c in tree.roots()) == TEXT
    assert all(c.meta["size"] <= 200 for c in tree.roots())
    assert np.isfinite(tree.stats["curve"]).all()
    short = TEXT[:300]
    t2 = chunk_msp(short, lm, max_size=200)
    check_tree(t2)
    assert len(t2.stats["margins"]) == t2.stats["sentences"] - 1


def _echo(tokens, logprobs, offsets):
    return Reply(json={"choices": [{"index": 0, "logprobs": {
        "tokens": tokens, "token_logprobs": logprobs, "text_offset": offsets}}]})


@pytest.mark.parametrize("reply, needle", [
    (_echo(["ab"], [None], [5]), "echoes no token"),  # every offset past the prompt
    (_echo(["b", " c"], [None, -1.0], [1, 2]), "starts at offset 1"),  # shifted
    (_echo(["a", "b"], [None, -1.0], [0, 1]), "not echoed whole"),  # half the tokens
    (_echo(["x", "y", "z", "w", "v"], [None, -1.0, -1.0, -1.0, -1.0], [0, 1, 2, 3, 4]), "do not match"),
    (_echo(["a", "b", " c", "d"], [None, None, -1.0, -1.0], [0, 1, 2, 4]), "no log-probability"),
    (_echo(["a", "b", " c", "d"], [None, 5.0, -1.0, -1.0], [0, 1, 2, 4]), "above 0"),
])
def test_an_echo_that_is_not_the_prompt_is_refused(srv: LoopbackServer, reply, needle) -> None:
    srv.enqueue("completions", reply)
    with pytest.raises(MalformedResponse, match=needle):
        CompletionsLM(srv.base_url, "m", retry=RetryPolicy(retries=0)).token_logprobs("ab cd")


def test_tokens_of_partial_characters_are_not_compared(srv: LoopbackServer) -> None:
    # byte-level tokenizers echo a split character as U+FFFD (or "bytes:..."): not a mismatch
    srv.enqueue("completions", _echo(["中", "\ufffd", "\ufffd", "文"], [None, -1.0, -1.0, -2.0], [0, 1, 1, 1]))
    r = CompletionsLM(srv.base_url, "m", retry=RetryPolicy(retries=0)).token_logprobs("中文")
    assert r.ends[-1] == 2

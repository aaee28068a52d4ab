"""Meta-Chunking's two selections: the paper's per-point rules (kept as they were) and the global
choice fed by the LM's signal (tiling, size limit, headings, response to the signal).

The LM is the scripted one of ``test_meta`` (every character one token, NLL = its sentence's value);
MSP runs on a scripted ``margin_fn``. No model, no network."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.chunkers.dispatch import chunk_by
from logichunk.chunkers.meta import SELECTIONS, chunk_meta, chunk_msp, chunk_ppl, standardised
from logichunk.errors import InputError
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout
from logichunk.tree import check_tree
from structure_helpers import assert_headings_open_chunks
from test_meta import EN_DOC, ZH_DOC, CurveLM, tiny  # noqa: F401 (tiny: the random real LM fixture)

# six sentences of ten characters each (the last one without its trailing space: nine)
SIX = "".join(f"Sen{k} aaa. " for k in range(6)).rstrip()
#: a curve with two local minima, at sentences 1 and 4: meta-chunks [0-1], [2-4], [5]
DIPS = np.array([5.0, 2.0, 6.0, 7.0, 3.0, 8.0])


def _ends(tree) -> list[int]:
    return [c.span.end for c in tree.roots()]


def test_six_sentences_are_as_the_expectations_assume() -> None:
    s = split_sentences(SIX)
    assert len(s) == 6
    assert (s.ends - s.starts).tolist() == [10, 10, 10, 10, 10, 9]


@pytest.mark.parametrize("theta", [0.0, 4.5])
def test_paper_rule_on_a_constructed_curve(theta: float) -> None:
    """Reasoned by hand, not copied from a run. Minima of DIPS: sentence 1 (drops 3 and 4) and 4
    (drops 4 and 5). Up to three sentences per chunk no two meta-chunks fit together: cuts after
    sentences 1 and 4 (offsets 20 and 50). With θ = 4.5 only sentence 4 is a minimum; the meta-chunk
    [0-4] is over the maximum and is split at its deepest dip, sentence 1 (depth 3.5): the same cuts.
    Up to four sentences, [2-4] and [5] merge (four sentences, 39 characters) while [0-1] + [2-4] would
    not fit. Up to six, all is one chunk."""
    lm = CurveLM({SIX: DIPS})
    t3 = chunk_ppl(SIX, lm, max_size=30, theta=theta, selection="paper")
    assert _ends(t3) == [20, 50, 59]
    assert [c.meta["cut"] for c in t3.roots()] == (["meta", "meta", "end"] if theta == 0 else ["size", "meta", "end"])
    assert _ends(chunk_ppl(SIX, lm, max_size=40, theta=theta, selection="paper")) == [20, 59]
    assert _ends(chunk_ppl(SIX, lm, max_size=59, theta=theta, selection="paper")) == [59]


def test_paper_msp_rule_on_scripted_margins() -> None:
    """Threshold 0, then the mean of the margins so far (history 5, warmup 1): margins 0.5, 0.6, −0.2,
    0.9, 0.1 against thresholds 0, 0.5, 0.55, 0.3, 0.45 split before sentences 3 and 5 (margin not
    above its threshold): meta-chunks [0-2] (30 characters), [3-4] (20) and [5] (9); the last two
    merge within 30 characters."""
    margins = iter([0.5, 0.6, -0.2, 0.9, 0.1])
    tree = chunk_msp(SIX, None, max_size=30, margin_fn=lambda a, b: next(margins), language="en", selection="paper")
    assert tree.stats["thresholds"] == pytest.approx([0.0, 0.5, 0.55, 0.3, 0.45])
    assert _ends(tree) == [30, 59]


def test_standardised_is_scale_free() -> None:
    x = np.array([1.0, 2.0, 4.0, 7.0])
    z = standardised(x)
    assert z.mean() == pytest.approx(0.0) and z.std() == pytest.approx(1.0)
    assert np.allclose(standardised(10 * x + 3), z)  # same rewards whatever the unit of the curve
    assert standardised(np.full(5, 2.0)).tolist() == [0.0] * 5


# --------------------------------------------------------------------------- global: the signal decides

#: twelve identical paragraphs: no lexical cohesion and no structure to choose between gaps
TWELVE = "\n\n".join(["The same words again."] * 12)


def _curve_with_dip(n: int, at: int | None) -> np.ndarray:
    v = np.full(n, 5.0)
    if at is not None:
        v[at] = 1.0  # a deep PPL minimum: Meta-Chunking's break after sentence `at`
    return v


def test_global_cuts_a_strong_break_in_the_signal_and_nothing_without_signal() -> None:
    sents = split_sentences(TWELVE)
    assert len(sents) == 12
    per = int(sents.ends[0] - sents.starts[0])  # 23 characters a paragraph (the last 21)
    max_size = 8 * per  # two chunks are needed, and eight paragraphs fit one
    flat = chunk_ppl(TWELVE, CurveLM({TWELVE: _curve_with_dip(12, None)}), max_size=max_size, selection="global")
    check_tree(flat)
    assert len(flat.roots()) == 2  # no signal: as few chunks as fit, filled evenly
    assert flat.roots()[0].span.end == int(sents.ends[5])
    for at in (3, 4, 7):  # each leaves both sides within eight paragraphs
        lm = CurveLM({TWELVE: _curve_with_dip(12, at)})
        tree = chunk_ppl(TWELVE, lm, max_size=max_size, selection="global")
        check_tree(tree)
        # the break in the signal is cut, and no gap without signal is
        assert _ends(tree) == [int(sents.ends[at]), len(TWELVE)], at
        assert tree.roots()[0].meta["cut"] == "global"
        assert tree.stats["selection"] == "global"
    # a text that fits the target stays one chunk, however strong the break
    whole = chunk_ppl(TWELVE, CurveLM({TWELVE: _curve_with_dip(12, 3)}), max_size=len(TWELVE), selection="global")
    assert _ends(whole) == [len(TWELVE)]


def test_global_msp_follows_the_split_margin_and_judges_against_the_text_before() -> None:
    sents = split_sentences(TWELVE)
    per = int(sents.ends[0] - sents.starts[0])
    seen: list[tuple[str, str]] = []

    def margin(a: str, b: str) -> float:
        seen.append((a, b))
        return -0.9 if len(seen) == 4 else 0.9  # "split" before sentence 4 only (gap 3)

    tree = chunk_msp(TWELVE, None, max_size=8 * per, margin_fn=margin, language="en", selection="global",
                     context_chars=60)
    check_tree(tree)
    assert _ends(tree) == [int(sents.ends[3]), len(TWELVE)]
    assert len(seen) == 11 and tree.stats["margins"][3] == -0.9
    # the context is the text before the gap (its last 60 characters), not a meta-chunk
    for j, (a, b) in enumerate(seen, start=1):
        assert a == TWELVE[max(0, int(sents.ends[j - 1]) - 60) : int(sents.ends[j - 1])].strip()
        assert b == "The same words again."


def test_global_keeps_a_heading_with_what_it_titles() -> None:
    body = " ".join(["Cats purr and sleep."] * 3)
    text = f"# Cats\n\n{body}\n\n# Dogs\n\n{body}\n\n# Birds\n\n{body}"
    sents = split_sentences(text)
    lay = layout(sents)
    heads = np.flatnonzero(lay.heading)
    assert heads.size == 3
    # the curve says: break right after each heading (a deep minimum there)
    v = np.full(len(sents), 5.0)
    v[heads] = 0.5
    tree = chunk_ppl(text, CurveLM({text: v}), max_size=90, selection="global")
    check_tree(tree)
    assert_headings_open_chunks(tree, text, (90,))
    assert [tree.text_of(c).lstrip().split("\n")[0] for c in tree.roots()] == ["# Cats", "# Dogs", "# Birds"]


def test_selection_is_checked_and_passed_on() -> None:
    lm = CurveLM({SIX: DIPS})
    assert SELECTIONS == ("paper", "global")
    # the defaults chosen on the dev split: global for both
    assert chunk_ppl(SIX, lm, max_size=30).stats["selection"] == "global"
    assert chunk_msp(SIX, None, max_size=30, margin_fn=lambda a, b: 0.0, language="en").stats["selection"] == "global"
    assert "thresholds" in chunk_msp(SIX, None, max_size=30, margin_fn=lambda a, b: 0.0, language="en",
                                     selection="paper").stats
    assert chunk_by("ppl", SIX, lm=lm, max_size=30).stats["selection"] == "global"
    with pytest.raises(InputError, match="selection"):
        chunk_ppl(SIX, lm, max_size=30, selection="local")
    with pytest.raises(InputError, match="selection"):
        chunk_msp(SIX, None, max_size=30, margin_fn=lambda a, b: 0.0, selection="best")
    assert chunk_meta(SIX, lm, "ppl", max_size=30, selection="global").stats["selection"] == "global"
    assert chunk_by("ppl", SIX, lm=lm, max_size=30, selection="global").stats["selection"] == "global"
    assert _ends(chunk_by("ppl", SIX, lm=lm, max_size=30, selection="paper")) == [20, 50, 59]
    with pytest.raises(InputError, match="selection"):
        chunk_by("ppl", SIX, lm=lm, max_size=30, selection="local")
    with pytest.raises(InputError, match="selection"):
        chunk_by("logic-chain", SIX, max_size=30, selection="paper")


# --------------------------------------------------------------------------- invariants, both selections

parts = st.lists(st.sampled_from([
    "# A heading\n\n", "## Sub heading\n", "Plain sentence one. ", "Another sentence here! ", "\n\n",
    "1.2 Numbered title\n\n", "中文句子在这里。", "- a list item\n", "Short\n\n", "word " * 30 + "end. ",
]), min_size=1, max_size=30).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts, st.sampled_from([25, 60, 150]), st.sampled_from(SELECTIONS), st.sampled_from(["ppl", "msp"]),
       st.integers(0, 2**32 - 1))
def test_spans_tile_and_fit(text: str, max_size: int, selection: str, kind: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    sents = split_sentences(text)
    if kind == "ppl":
        tree = chunk_ppl(text, CurveLM({text: rng.uniform(0.5, 8.0, len(sents))}), max_size=max_size,
                         selection=selection)
    else:
        tree = chunk_msp(text, None, max_size=max_size, margin_fn=lambda a, b: float(rng.uniform(-1, 1)),
                         language="en", selection=selection)
    check_tree(tree)
    roots = tree.roots()
    assert "".join(tree.text_of(c) for c in roots) == text
    assert [c.span.start for c in roots[1:]] == [c.span.end for c in roots[:-1]]
    for c in roots:
        # over the limit only where one sentence alone is, and then it was cut inside (a bubble says so)
        assert c.meta["size"] <= max_size or any(b.category == "forced_split" for b in tree.bubbles), c
    if selection == "global":
        assert_headings_open_chunks(tree, text, (max_size,))


# --------------------------------------------------------------------------- a real (tiny, random) LM, units, CLI


@pytest.mark.parametrize("doc", [EN_DOC, ZH_DOC], ids=["en", "zh"])
def test_global_end_to_end_on_tiny_model(tiny, doc: str) -> None:  # noqa: F811
    for tree in (chunk_ppl(doc, tiny, max_size=150, selection="global"),
                 chunk_msp(doc, tiny, max_size=150, selection="global")):
        check_tree(tree)
        assert "".join(tree.text_of(c) for c in tree.roots()) == doc
        assert all(c.meta["size"] <= 150 for c in tree.roots())
        assert tree.stats["selection"] == "global" and len(tree.roots()) >= len(doc) // 150


def test_ppl_on_given_units_cuts_only_between_them() -> None:
    from logichunk.eval.segmentation import units_to_sents

    units = ["We met at noon. It rained.", "The bus was late", "Prices rose. Markets fell.", "Stocks dipped"]
    sents = units_to_sents(units)
    lm = CurveLM.__new__(CurveLM)  # one value per given unit, not per splitter sentence
    lm.calls, lm.values_for = 0, {}

    def token_logprobs(text: str):
        from logichunk.models.lm import TokenLogprobs

        idx = np.arange(len(text))
        v = np.array([5.0, 1.0, 5.0, 5.0])[np.searchsorted(sents.ends, idx, side="right")]
        return TokenLogprobs(text, idx, idx + 1, -v, "scripted")

    lm.token_logprobs = token_logprobs  # type: ignore[method-assign]
    for sel in SELECTIONS:
        tree = chunk_ppl(sents.text, lm, max_size=50, sentences=sents, selection=sel)
        assert [c.span.end for c in tree.roots()] == [int(sents.ends[1]), len(sents.text)], sel
    with pytest.raises(InputError):
        chunk_ppl("other text", lm, sentences=sents)


def test_cli_selection_paper_is_for_the_meta_chunkers_only(tmp_path, capsys) -> None:
    from logichunk.cli import main

    f = tmp_path / "doc.txt"
    f.write_text(TWELVE, encoding="utf-8")
    assert main(["chunk", str(f), "--selection", "paper", "--quiet"]) != 0
    err = capsys.readouterr().err
    assert "selection" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["chunk", str(f), "--max-size", "100", "--quiet"]) == 0  # logic-chain: global by default


def test_readme_example_of_the_selection_runs_and_prints_what_it_says() -> None:
    import contextlib
    import io
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "selection=sel" in b]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    said = [line[2:] for line in code.splitlines() if line.startswith(("# paper", "# global"))]
    assert out.getvalue().splitlines() == said


def test_eval_rows_run_both_selections_on_one_lm_pass(monkeypatch) -> None:
    """``ppl-paper`` and ``ppl-global`` (the harness's rows) cut the given units, sharing one LM pass."""
    from logichunk.eval import methods as M
    from logichunk.eval.segmentation import units_to_sents
    from logichunk.models.lm import TokenLogprobs

    units = ["We met at noon. It rained.", "The bus was late", "Prices rose. Markets fell.", "Stocks dipped"]
    sents = units_to_sents(units)
    calls: list[str] = []

    class UnitLM:
        model_id = "scripted-units"

        def token_logprobs(self, text: str) -> TokenLogprobs:
            calls.append(text)
            idx = np.arange(len(text))
            v = np.array([5.0, 1.0, 5.0, 5.0])[np.searchsorted(sents.ends, idx, side="right")]
            return TokenLogprobs(text, idx, idx + 1, -v, self.model_id)

    lm = UnitLM()
    monkeypatch.setattr(M, "env_lm", lambda kind: lm)
    for sel in SELECTIONS:
        runner = M.build(M.METHODS[f"ppl-{sel}"], M.Settings(size=50, unit="chars"))
        assert runner.segment(units, "en").tolist() == [1], sel  # the dip after the second unit
    assert calls == [sents.text]
    assert {m.name for m in M.select_methods("ppl-paper,ppl-global,msp-paper,msp-global", "segmentation")} == {
        "ppl-paper", "ppl-global", "msp-paper", "msp-global"}
    assert not {"ppl-paper", "ppl-global"} & {m.name for m in M.select_methods("all", "segmentation")}

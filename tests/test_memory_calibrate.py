"""Fitting a calibration: the logistic fit, the whole procedure on synthetic labelled dialogues, and the
JSON format."""

from __future__ import annotations

import numpy as np
import pytest

from logichunk.errors import InputError
from logichunk.memory import Calibration, Logistic, calibrate
from logichunk.memory.calibrate import LabelledConversation, _Vectors, cosine_baseline, pk_of, segment
from logichunk.memory.calibration import default_calibration
from logichunk.models import HashEmbedder
from memory_data import conversations


def test_logistic_fit_recovers_a_planted_rule():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 3))
    p = 1 / (1 + np.exp(-(2.0 * x[:, 0] - 1.0 * x[:, 2] + 0.5)))
    y = (rng.random(4000) < p).astype(float)
    m = Logistic.fit(x, y, ("a", "b", "c"), l2=0.1)
    w = np.asarray(m.weights) / np.asarray(m.scale)
    assert w[0] == pytest.approx(2.0, abs=0.25) and abs(w[1]) < 0.15 and w[2] == pytest.approx(-1.0, abs=0.2)
    assert m.prob({"a": 1.0, "b": 0.0, "c": 0.0}) == pytest.approx(float(m.probs(np.array([[1.0, 0.0, 0.0]]))[0]))
    assert m.prob({}) == pytest.approx(1 / (1 + np.exp(-m.bias)))  # missing features count as their means
    with pytest.raises(InputError, match="both classes"):
        Logistic.fit(x, np.ones(4000), ("a", "b", "c"))


def test_calibrate_beats_the_baselines_on_held_out_dialogues():
    emb = HashEmbedder(128)
    train, test = conversations(30, seed=1), conversations(20, seed=2)
    cal = calibrate(train, emb, lookahead=2)
    assert cal.embedder == emb.model_id and cal.rule is not None and cal.review is not None
    assert cal.source["conversations"] == 30 and cal.lo <= cal.hi
    vecs = _Vectors(test, emb, None)
    memo: dict = {}
    full = np.mean([pk_of(c, segment(c, i, vecs, cal, emb, memo)) for i, c in enumerate(test)])
    online = np.mean([pk_of(c, segment(c, i, vecs, cal.with_(lookahead=0), emb, memo)) for i, c in enumerate(test)])
    none = np.mean([pk_of(c, set()) for c in test])
    _, _, base = cosine_baseline(test, emb, cal.baseline_threshold)
    assert full < 0.15 < none, (full, none)
    assert full <= online + 0.02 and full < base, (full, online, base)


def test_calibrate_on_chinese_dialogues():
    emb = HashEmbedder(128)
    cal = calibrate(conversations(20, seed=4, lang="zh"), emb, lookahead=1)
    test = conversations(10, seed=5, lang="zh")
    vecs = _Vectors(test, emb, None)
    pk = np.mean([pk_of(c, segment(c, i, vecs, cal, emb, {})) for i, c in enumerate(test)])
    assert pk < 0.2, pk


def test_calibration_json_round_trip(tmp_path):
    cal = calibrate(conversations(8, seed=6), HashEmbedder(64), lookahead=1)
    cal.save(tmp_path / "c.json")
    back = Calibration.load(tmp_path / "c.json")
    assert back == cal
    with pytest.raises(InputError, match="unknown calibration keys"):
        Calibration.from_dict({**cal.to_dict(), "typo": 1})
    with pytest.raises(InputError, match="not found"):
        Calibration.load(tmp_path / "missing.json")
    with pytest.raises(InputError):
        Calibration(hi=0.2, lo=0.5)
    with pytest.raises(InputError, match="review model"):
        Calibration(lookahead=2)


def test_calibrate_refuses_unusable_data():
    from logichunk.memory import LogicalBlock

    emb = HashEmbedder(64)
    with pytest.raises(InputError, match="at least two turns"):
        calibrate([], emb)
    flat = [LabelledConversation("x", tuple(LogicalBlock(f"turn number {i} about trains and stations") for i in range(6)),
                                 frozenset())]
    with pytest.raises(InputError, match="boundary"):
        calibrate(flat, emb)


def test_shipped_calibrations_load_and_match_their_embedder():
    cal, note = default_calibration(HashEmbedder().model_id)
    assert note == "" and cal.embedder == HashEmbedder().model_id and cal.rule is not None
    assert cal.source.get("sets"), "a shipped calibration says what it was fitted on"
    other, note = default_calibration("some-other-model")
    assert "no calibration" in note and all(not f.startswith("sim") for f in other.rule.features)


def test_ablation_without_embedding_features():
    emb = HashEmbedder(128)
    cal = calibrate(conversations(12, seed=21), emb, lookahead=1, without=("sim", "sim_prev", "window_sim"))
    assert not any(f.startswith(("sim", "window")) for f in cal.rule.features + cal.review.features)
    assert (cal.hi, cal.lo) == (1.0, -1.0), "no cosine screen when the cosine is left out"
    assert cal.source["without"] == ["sim", "sim_prev", "window_sim"]
    with pytest.raises(InputError, match="unknown features"):
        calibrate(conversations(2, seed=22), emb, without=("typo",))


def test_optional_question_feature():
    emb = HashEmbedder(128)
    cal = calibrate(conversations(10, seed=23), emb, lookahead=1, extra=("question",))
    assert "question" in cal.rule.features and "question" in cal.review.features
    assert "question" not in calibrate(conversations(10, seed=23), emb, lookahead=1).rule.features
    with pytest.raises(InputError, match="unknown features"):
        calibrate(conversations(2, seed=22), emb, extra=("sim",))


def test_arbiter_threshold_is_fitted_on_the_grey_zone():
    from logichunk.memory import Verdict
    from logichunk.memory.calibrate import arbiter_threshold

    class Shifted:
        """A scorer that is informative but badly centred (like a small LM's P(YES)): always below 0.5."""

        name = "shifted"

        def __init__(self):
            self.calls = 0

        def judge(self, q):
            self.calls += 1
            s = 0.4 * (1.0 - q.features["novelty"])
            return Verdict(s >= 0.5, s, self.name)

    emb = HashEmbedder(128)
    convs = conversations(10, seed=31)
    cal = Calibration(embedder=emb.model_id, hi=1.0, lo=-1.0)
    arb = Shifted()
    th, info = arbiter_threshold(arb, convs, emb, cal)
    assert arb.calls == info["questions"] > 0
    assert 0.0 < th < 0.4 and info["balanced_accuracy"] > 0.7, (th, info)
    assert info["mean_score_same"] > info["mean_score_new"]
    c2 = cal.with_(arbiter_thresholds={"lm": th})
    assert Calibration.from_dict(c2.to_dict()).arbiter_thresholds == {"lm": th}


def test_hash_embedders_of_other_dimensions_share_the_hash_calibration():
    cal, note = default_calibration(HashEmbedder(64).model_id)
    assert cal.embedder == HashEmbedder(64).model_id and "other dimension" in note
    assert cal.rule == default_calibration(HashEmbedder().model_id)[0].rule


class _SameVector:
    """An embedder that cannot see topics: every text gets the same vector (all cosines 1)."""

    model_id = "same-vector"
    dim = 8

    def embed(self, texts, kind="passage"):
        v = np.zeros((len(texts), self.dim), np.float32)
        v[:, 0] = 1.0
        return v


def test_a_baseline_that_cannot_separate_says_so_and_uses_the_stated_default():
    # issue 21: the hash embedder on TIAGE wrote a cosine threshold of -1.01 (never split)
    convs = conversations(6, seed=3)
    notes: list[str] = []
    said: list[str] = []
    th, _starts, _pk = cosine_baseline(convs, _SameVector(), progress=said.append, notes=notes)
    default = Calibration().baseline_threshold
    assert th == default and -1.0 <= th <= 1.0
    assert notes and "cannot separate" in notes[0] and str(default) in notes[0] and notes == said
    th_ok, _, _ = cosine_baseline(convs, HashEmbedder(64), notes=(ok := []))  # one that can: its own fit, no note
    assert -1.0 <= th_ok <= 1.0 and (ok == [] or th_ok == default)
    with pytest.raises(InputError, match="within"):
        cosine_baseline(convs, HashEmbedder(64), threshold=-1.01)


def test_a_calibration_never_holds_a_cosine_threshold_outside_minus_one_one():
    with pytest.raises(InputError, match="baseline_threshold"):
        Calibration(baseline_threshold=-1.01)
    cal, _ = default_calibration(HashEmbedder().model_id)  # the shipped one had -1.01
    assert -1.0 <= cal.baseline_threshold <= 1.0


def _degenerate_baseline(monkeypatch):
    import importlib

    calmod = importlib.import_module("logichunk.memory.calibrate")  # the package exports the function too

    def degenerate(convs, embedder, threshold=None, progress=None, notes=None):
        return cosine_baseline(convs, _SameVector(), threshold, progress, notes)

    monkeypatch.setattr(calmod, "cosine_baseline", degenerate)


def test_calibrate_records_the_fallback_and_the_cli_warns(tmp_path, capsys, monkeypatch):
    import json

    from logichunk.cli import main

    _degenerate_baseline(monkeypatch)
    cal = calibrate(conversations(8, seed=1), HashEmbedder(64), lookahead=0)
    assert cal.baseline_threshold == Calibration().baseline_threshold
    assert "cannot separate" in cal.source["baseline_fallback"]
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps({"id": c.id, "units": [b.user for b in c.blocks],
                                        "boundaries": sorted(s - 1 for s in c.starts)}) + "\n"
                            for c in conversations(8, seed=2)), encoding="utf-8")
    out_file = tmp_path / "cal.json"
    code = main(["memory", "calibrate", "--data", str(data), "--embedder", "hash:64", "--lookahead", "0",
                 "--out", str(out_file), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0 and "warning" in err and "cannot separate" in err  # said even with --quiet
    assert Calibration.load(out_file).baseline_threshold == Calibration().baseline_threshold


@pytest.mark.parametrize("key, value, message", [
    ("lookahead", 1.5, "lookahead must be a whole number"),  # was a TypeError traceback at the first review
    ("min_topic_turns", 2.5, "min_topic_turns must be a whole number"),  # was taken as it was
    ("short_tokens", "5", "short_tokens must be a whole number"),
    ("lookahead_items", True, "lookahead_items must be a whole number"),
    ("kernel_decay", None, "kernel_decay must be a finite number"),  # was "'<=' not supported between ..."
    ("hi", float("nan"), "hi must be a finite number"),
    ("arbiter_thresholds", "x", "arbiter_thresholds must map"),  # was taken, then an AttributeError or ignored
    ("arbiter_thresholds", {"lm": "0.5"}, "arbiter_thresholds must map"),
    ("source", [1], "source must be an object"),
    ("embedder", 5, "embedder must be a model id"),
])
def test_a_calibration_field_of_the_wrong_kind_is_one_line(key, value, message):
    d = {**default_calibration("hash-v2-d1024")[0].to_dict(), key: value}
    with pytest.raises(InputError, match=message) as e:
        Calibration.from_dict(d)
    assert "\n" not in str(e.value)


def test_numbers_of_numpy_are_stored_as_python_numbers():
    cal = default_calibration("hash-v2-d1024")[0].with_(lookahead=np.int64(2), hi=np.float32(0.5))
    assert type(cal.lookahead) is int and type(cal.hi) is float and cal.lookahead == 2 and cal.hi == 0.5
    assert Calibration.from_dict(cal.to_dict()) == cal

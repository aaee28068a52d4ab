"""The paired comparison of two methods on the same items (eval/paired.py) and its place in the
``logichunk eval`` rows: is a lead real or a few items' luck?"""

from __future__ import annotations

import json

import numpy as np
import pytest

from logichunk.eval.paired import ROUNDS, paired, paired_keys
from test_eval_tasks import _write_sets


def test_identical_scores_tie_exactly():
    a = np.linspace(0, 1, 50)
    p = paired(a, a.copy(), higher_is_better=True)
    assert (p.diff, p.lo, p.hi, p.wins, p.losses, p.n) == (0.0, 0.0, 0.0, 0, 0, 50)


def test_constant_lead_has_a_point_interval():
    b = np.random.default_rng(1).random(40)
    p = paired(b + 0.25, b, higher_is_better=True)
    assert p.diff == pytest.approx(0.25) and p.lo == pytest.approx(0.25) and p.hi == pytest.approx(0.25)
    assert (p.wins, p.losses) == (40, 0)


def test_interval_finds_a_real_lead_and_not_a_false_one():
    rng = np.random.default_rng(7)
    b = rng.random(400)
    noise = rng.normal(0.0, 0.3, 400)
    real = paired(b + 0.1 + noise, b, higher_is_better=True)
    assert real.lo > 0 and real.lo < 0.1 + np.mean(noise) < real.hi
    # the interval's width is about that of the mean's standard error (normal theory: 2 * 1.96 * sd / sqrt(n))
    assert real.hi - real.lo == pytest.approx(2 * 1.96 * np.std(noise) / np.sqrt(400), rel=0.15)
    none = paired(b + noise - np.mean(noise), b, higher_is_better=True)
    assert none.lo < 0 < none.hi


def test_lower_is_better_counts_wins_the_other_way():
    b = np.array([0.5, 0.5, 0.5, 0.5])
    a = np.array([0.4, 0.4, 0.6, 0.5])  # two better (lower), one worse, one tie
    p = paired(a, b, higher_is_better=False)
    assert (p.wins, p.losses, p.n) == (2, 1, 4)
    q = paired(a, b, higher_is_better=True)
    assert (q.wins, q.losses) == (1, 2) and q.diff == p.diff


def test_items_either_side_cannot_score_are_left_out():
    a = np.array([0.1, np.nan, 0.3, 0.2])
    b = np.array([0.2, 0.2, np.inf, 0.1])
    p = paired(a, b, higher_is_better=False)
    assert p.n == 2 and p.diff == pytest.approx(0.0) and (p.wins, p.losses) == (1, 1)
    assert paired([np.nan], [0.1], higher_is_better=False) is None
    with pytest.raises(ValueError, match="same items"):
        paired([0.1, 0.2], [0.1], higher_is_better=True)


def test_reproducible_and_seeded():
    rng = np.random.default_rng(3)
    a, b = rng.random(300), rng.random(300)
    assert paired(a, b, higher_is_better=True) == paired(a, b, higher_is_better=True)
    other = paired(a, b, higher_is_better=True, seed=1)
    assert other.diff == paired(a, b, higher_is_better=True).diff  # the mean does not resample
    assert other.lo != paired(a, b, higher_is_better=True).lo


def test_many_items_resampled_in_blocks_keep_the_right_width():
    """More items than one block of resamples holds (the index matrix is built a block at a time)."""
    rng = np.random.default_rng(5)
    d = rng.normal(0.02, 0.5, 20_000)
    p = paired(d, np.zeros_like(d), higher_is_better=True, rounds=ROUNDS)
    assert p.hi - p.lo == pytest.approx(2 * 1.96 * np.std(d) / np.sqrt(d.size), rel=0.15)
    assert p.lo < d.mean() < p.hi


def test_row_keys():
    assert paired_keys("pk", None) == {"pk_diff": None, "pk_ci95": None, "pk_wins": None, "pk_losses": None}
    k = paired_keys("recall", paired([1.0, 0.0], [0.0, 0.0], higher_is_better=True))
    assert k["recall_diff"] == 0.5 and k["recall_wins"] == 1 and k["recall_losses"] == 0
    assert k["recall_ci95"][0] <= 0.5 <= k["recall_ci95"][1]


def _rows(capsys) -> list[dict]:
    return [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]


def test_cli_rows_carry_their_comparison(tmp_path, capsys):
    from logichunk.cli import main

    _write_sets(tmp_path)
    spans = str(tmp_path / "spans" / "toy")
    assert main(["eval", "chunking", "--data", spans, "--methods", "fixed,recursive", "--size", "8", "--budget", "2",
                 "--json", "--no-save"]) == 0
    rows = _rows(capsys)
    assert [r["method"] for r in rows] == ["fixed", "recursive"]  # no global here: the first is the reference
    assert "against" not in rows[0]
    r = rows[1]
    assert r["against"] == "fixed"
    assert r["recall_diff"] == pytest.approx(r["recall"] - rows[0]["recall"])
    assert r["iou_diff"] == pytest.approx(r["iou"] - rows[0]["iou"])
    assert r["recall_ci95"][0] <= r["recall_diff"] <= r["recall_ci95"][1]
    assert r["recall_wins"] + r["recall_losses"] <= r["n"]
    # --against puts the reference first, whatever the order asked
    assert main(["eval", "chunking", "--data", spans, "--methods", "fixed,recursive", "--size", "8", "--budget", "2",
                 "--json", "--no-save", "--against", "recursive"]) == 0
    rows = _rows(capsys)
    assert [r["method"] for r in rows] == ["recursive", "fixed"] and rows[1]["against"] == "recursive"
    assert main(["eval", "chunking", "--data", spans, "--methods", "fixed,recursive", "--size", "8", "--budget", "2",
                 "--json", "--no-save", "--against", "off"]) == 0
    assert all("against" not in r for r in _rows(capsys))
    # a reference that is not among the methods is an error with one method too (it was ignored there)
    assert main(["eval", "chunking", "--data", spans, "--methods", "fixed", "--size", "8", "--budget", "2", "--json",
                 "--no-save", "--against", "nope"]) == 2
    assert "--against nope: not among the methods" in capsys.readouterr().err


def test_cli_segmentation_defaults_to_the_default_method(tmp_path, capsys):
    from logichunk.cli import main

    _write_sets(tmp_path)
    seg = str(tmp_path / "seg" / "toy.jsonl")
    assert main(["eval", "segmentation", "--data", seg, "--methods", "none,global", "--json", "--no-save"]) == 0
    rows = _rows(capsys)
    assert [r["method"] for r in rows] == ["global", "none"]
    assert rows[1]["against"] == "global"
    assert rows[1]["pk_diff"] == pytest.approx(rows[1]["pk"] - rows[0]["pk"])
    assert "windowdiff_diff" in rows[1]
    # the table shows the comparison as its last column
    assert main(["eval", "segmentation", "--data", seg, "--methods", "none,global", "--no-save"]) == 0
    out = capsys.readouterr().out
    assert "pk vs global [95% CI]" in out and "(reference)" in out


def test_cli_against_an_absent_method_is_one_line(tmp_path, capsys):
    from logichunk.cli import main

    _write_sets(tmp_path)
    rc = main(["eval", "segmentation", "--data", str(tmp_path / "seg" / "toy.jsonl"), "--methods", "none,global",
               "--json", "--no-save", "--against", "entropy"])
    err = capsys.readouterr().err
    assert rc == 2 and "--against entropy: not among the methods" in err and "Traceback" not in err

"""The numbers a :class:`~logichunk.memory.Perception` decides with, as one frozen, JSON-able object.

Why one object: cosine thresholds only mean something for the embedder they were measured with (the
hash embedder gives unrelated turns a cosine near 0, E5 near 0.8), and the default rule's weights only
for the features and thresholds they were fitted with. So they travel together, with the model id of
the embedder and a record of the data they were fitted on; ``logichunk memory calibrate`` writes one,
``--calibration FILE`` reads it.

Shipped calibrations (``calibrations/*.json``, chosen by embedder model id) were produced by that
command on the calibration splits named inside them; an embedder without one gets the seed thresholds
(0.75 / 0.40) and a rule that ignores the embedding (its weights are those of the hash calibration's
lexical features), with a note saying so.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError

__all__ = ["Calibration", "Logistic", "ONLINE_FEATURES", "OPTIONAL_FEATURES", "REVIEW_FEATURES", "default_calibration",
           "fitted_for"]

# Features of the immediate decision (all known when the turn arrives) and of the review (which also
# sees the `lookahead` turns after the gap). Names are the keys of Perception's feature dicts.
ONLINE_FEATURES: tuple[str, ...] = ("sim", "sim_prev", "novelty", "novelty_left", "topic_turns", "answers")
REVIEW_FEATURES: tuple[str, ...] = ("sim", "sim_prev", "novelty", "novelty_left", "answers", "jump", "window_sim",
                                    "split_now")
# Computed for every turn but left out of the rules unless asked for (``calibrate(extra=...)``):
# "the turn is a question" opens topics in chit-chat (TIAGE) and does not in task dialogues, where the
# assistant's questions are mid-task (DialSeg711): fitted on one kind, it misleads on the other.
OPTIONAL_FEATURES: tuple[str, ...] = ("question",)


@dataclass(frozen=True)
class Logistic:
    """``P = sigmoid(bias + sum(weights * (x - mean) / scale))`` over named features."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float

    def __post_init__(self) -> None:
        n = len(self.features)
        for name in ("mean", "scale", "weights"):
            v = getattr(self, name)
            if len(v) != n:
                raise InputError(f"Logistic.{name} has {len(v)} values for {n} features")
            object.__setattr__(self, name, tuple(float(x) for x in v))
        object.__setattr__(self, "features", tuple(str(f) for f in self.features))
        if any(s <= 0 for s in self.scale):
            raise InputError("Logistic.scale values must be positive")

    def prob(self, values: Mapping[str, float]) -> float:
        """P for one feature dict (a missing feature counts as its mean: no evidence)."""
        z = self.bias
        for f, m, s, w in zip(self.features, self.mean, self.scale, self.weights, strict=True):
            v = values.get(f)
            if v is not None and math.isfinite(v):
                z += w * (v - m) / s
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def probs(self, x: np.ndarray) -> np.ndarray:
        """P for rows of ``x`` (columns in ``features`` order)."""
        z = (np.asarray(x, np.float64) - np.asarray(self.mean)) / np.asarray(self.scale) @ np.asarray(self.weights)
        return 1.0 / (1.0 + np.exp(-np.clip(z + self.bias, -40, 40)))

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, features: Sequence[str], *, l2: float = 1.0,
            weights: np.ndarray | None = None, iterations: int = 50) -> Logistic:
        """Maximum-likelihood fit by Newton's method with an L2 penalty on the standardised weights
        (not the bias); ``weights`` per row balance classes if given."""
        x = np.asarray(x, np.float64)
        y = np.asarray(y, np.float64)
        if x.ndim != 2 or x.shape[0] != y.size or x.shape[1] != len(features):
            raise InputError(f"fit wants x of shape (n, {len(features)}) and y of n labels")
        if y.size == 0 or y.min() == y.max():
            raise InputError("fitting needs both classes among the labels")
        mean = x.mean(0)
        scale = x.std(0)
        scale[scale < 1e-9] = 1.0
        z = np.hstack([(x - mean) / scale, np.ones((x.shape[0], 1))])
        sw = np.ones(y.size) if weights is None else np.asarray(weights, np.float64)
        w = np.zeros(z.shape[1])
        pen = np.full(z.shape[1], l2)
        pen[-1] = 0.0
        for _ in range(iterations):
            p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -40, 40)))
            g = z.T @ (sw * (p - y)) + pen * w
            h = (z.T * (sw * p * (1 - p))) @ z + np.diag(pen) + 1e-9 * np.eye(z.shape[1])
            step = np.linalg.solve(h, g)
            w -= step
            if np.abs(step).max() < 1e-8:
                break
        return cls(tuple(features), tuple(mean.tolist()), tuple(scale.tolist()), tuple(w[:-1].tolist()), float(w[-1]))

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
                "weights": list(self.weights), "bias": self.bias}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Logistic:
        try:
            return cls(tuple(d["features"]), tuple(d["mean"]), tuple(d["scale"]), tuple(d["weights"]), float(d["bias"]))
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"bad logistic model in calibration: {e}") from None


@dataclass(frozen=True)
class Calibration:
    """Thresholds and fitted rules.

    * ``short_tokens`` — step 1: a turn under this many content tokens is FORCE_ADSORBed.
    * ``hi`` / ``lo`` — step 2: cosine(anchor, topic kernel) above ``hi`` adsorbs, below ``lo`` splits.
    * ``rule`` / ``rule_threshold`` — step 3 without another arbiter: P(same topic) from the online
      features; same topic when ``P >= rule_threshold``.
    * ``kernel_decay`` — the kernel is ``normalise(decay * kernel + (1 - decay) * anchor)``; 0 keeps
      the running mean instead.
    * ``lookahead`` / ``lookahead_items`` / ``review`` / ``review_threshold`` — step 4: once ``lookahead``
      turns have followed a gap (or, sooner, once the turns from the gap on hold ``lookahead_items``
      content items: evidence is counted in words, so long turns are reviewed after one turn and short
      utterances wait), the gap is a boundary when P(boundary) from the review features is
      ``>= review_threshold`` (``lookahead=0``: no review, the immediate decisions are final).
    * ``min_topic_turns`` — a topic holds at least this many turns before a new split can close it.
    * ``resume_threshold`` — an episode resumes an earlier one when their subjects' cosine reaches it
      (:mod:`.resume`; None: ``hi``).
    * ``baseline_threshold`` — the plain cosine baseline (split when cosine of adjacent turns is below).
    * ``arbiter_thresholds`` — fitted thresholds of scoring arbiters by name (``{"lm": 0.31}``): an
      LM's P(YES) is not calibrated at 0.5.
    """

    embedder: str = ""
    hi: float = 0.75
    lo: float = 0.40
    short_tokens: int = 5
    rule: Logistic | None = None
    rule_threshold: float = 0.5
    kernel_decay: float = 0.8
    lookahead: int = 0
    lookahead_items: int = 0
    review: Logistic | None = None
    review_threshold: float = 0.5
    min_topic_turns: int = 1
    baseline_threshold: float = 0.3
    resume_threshold: float | None = None
    arbiter_thresholds: Mapping[str, float] = field(default_factory=dict)
    source: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._check_types()
        if not (-1.0 <= self.lo <= self.hi <= 1.0 + 1e-9):
            raise InputError(f"thresholds must satisfy -1 <= lo <= hi <= 1, got lo={self.lo}, hi={self.hi}")
        if self.short_tokens < 0 or self.lookahead < 0 or self.lookahead_items < 0 or self.min_topic_turns < 1:
            raise InputError("short_tokens, lookahead and lookahead_items must be >= 0, min_topic_turns >= 1")
        if not 0.0 <= self.kernel_decay < 1.0:
            raise InputError(f"kernel_decay must be in [0, 1), got {self.kernel_decay}")
        if self.resume_threshold is not None and not -1.0 <= self.resume_threshold <= 1.0:
            raise InputError(f"resume_threshold must be a cosine within [-1, 1], got {self.resume_threshold}")
        if not -1.0 <= self.baseline_threshold <= 1.0:  # a cosine: outside [-1, 1] it means nothing
            raise InputError(f"baseline_threshold must be a cosine within [-1, 1], got {self.baseline_threshold}")
        for name in ("rule_threshold", "review_threshold"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InputError(f"{name} must be in [0, 1]")
        if self.lookahead and self.review is None:
            raise InputError("a lookahead needs a review model (calibrate one, or set lookahead=0)")

    def _check_types(self) -> None:
        """Each field of its kind, in one line (a calibration file's ``"lookahead": 1.5`` was a TypeError traceback
        at the first review, ``"min_topic_turns": 2.5`` or ``"arbiter_thresholds": "x"`` taken silently); whole
        and real numbers (numpy's too) stored as int and float."""
        for name in ("short_tokens", "lookahead", "lookahead_items", "min_topic_turns"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise InputError(f"calibration {name} must be a whole number, got {v!r}")
            object.__setattr__(self, name, int(v))
        for name in ("hi", "lo", "rule_threshold", "kernel_decay", "review_threshold", "baseline_threshold",
                     "resume_threshold"):
            v = getattr(self, name)
            if v is None and name == "resume_threshold":
                continue
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
                raise InputError(f"calibration {name} must be a finite number, got {v!r}")
            object.__setattr__(self, name, float(v))
        if not isinstance(self.embedder, str):
            raise InputError(f"calibration embedder must be a model id (a string), got {self.embedder!r}")
        th = self.arbiter_thresholds
        if not isinstance(th, Mapping) or any(not isinstance(k, str) or isinstance(v, bool)
                                              or not isinstance(v, numbers.Real) for k, v in th.items()):
            raise InputError(f"calibration arbiter_thresholds must map arbiter names to numbers, got {th!r}")
        if not isinstance(self.source, Mapping):
            raise InputError(f"calibration source must be an object, got {self.source!r}")

    def with_(self, **changes: Any) -> Calibration:
        """A copy with ``changes`` (validated)."""
        return replace(self, **changes)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["rule"] = self.rule.to_dict() if self.rule else None
        d["review"] = self.review.to_dict() if self.review else None
        d["source"] = dict(self.source)
        d["arbiter_thresholds"] = dict(self.arbiter_thresholds)
        return d

    def save(self, path: str | Path) -> None:
        """Written to a temporary file beside ``path`` and moved over it: a failed write never
        leaves an earlier calibration truncated."""
        from ..models._files import staged_file

        with staged_file(path) as f:
            f.write(json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Calibration:
        if not isinstance(d, Mapping):
            raise InputError("a calibration must be a JSON object")
        known = {f for f in cls.__dataclass_fields__}
        extra = set(d) - known
        if extra:
            raise InputError(f"unknown calibration keys: {', '.join(sorted(extra))}")
        kw = dict(d)
        for name in ("rule", "review"):
            if kw.get(name) is not None:
                kw[name] = Logistic.from_dict(kw[name])
        try:
            return cls(**kw)
        except TypeError as e:
            raise InputError(f"bad calibration: {e}") from None

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"calibration file not found: {p}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise InputError(f"calibration file {p} is not valid JSON: {e}") from None
        return cls.from_dict(data)


def _shipped() -> dict[str, Calibration]:
    out: dict[str, Calibration] = {}
    folder = resources.files("logichunk.memory") / "calibrations"
    if not folder.is_dir():
        return out
    for f in folder.iterdir():
        if f.name.endswith(".json"):
            c = Calibration.from_dict(json.loads(f.read_text(encoding="utf-8")))
            out[c.embedder] = c
    return out


def _dim_of_hash(model_id: str) -> int | None:
    """The dimension a hash embedder's model id names (``hash-v2-d1024`` → ``1024``), None for another model."""
    from ..models.embed_hash import hash_id

    parts = hash_id(model_id)
    return parts[1] if parts else None


def fitted_for(calibration_embedder: str, model_id: str) -> bool:
    """Whether a calibration fitted for ``calibration_embedder`` holds for ``model_id``: the same model, or two
    versions of the hash embedder of one dimension (they differ only in reading traditional Chinese as
    simplified, version 2: the same features, the cosines on the same scale), so a calibration file written
    for ``hash-v1-d1024`` still serves ``hash-v2-d1024``."""
    if calibration_embedder == model_id:
        return True
    dim = _dim_of_hash(model_id)
    return dim is not None and dim == _dim_of_hash(calibration_embedder)


def default_calibration(model_id: str) -> tuple[Calibration, str]:
    """The shipped calibration for an embedder's model id, and a note ('' when one matched).

    A hash embedder of another version but the same dimension gets the shipped hash calibration as its own, no
    note: the versions differ only in reading traditional Chinese as simplified (version 2), and the calibration
    sets are English, where their vectors are the same. Of another dimension it gets it too (same features, the
    cosine keeps its scale), with a note; any other model gets seed thresholds and a lexical-only rule."""
    shipped = _shipped()
    if model_id in shipped:
        return shipped[model_id], ""
    base = next((c for c in shipped.values() if c.embedder.startswith("hash")), None)
    if base is not None and fitted_for(base.embedder, model_id):
        return base.with_(embedder=model_id), ""
    if base is not None and _dim_of_hash(model_id) is not None:
        # the same hashed features in fewer or more buckets: cosines keep their scale, with more noise
        return base.with_(embedder=model_id), (f"calibration of {base.embedder} used for {model_id} (same features, "
                                               "other dimension)")
    rule = None
    if base is not None and base.rule is not None:
        # keep only the lexical part of the hash rule: the cosine features are embedder-specific
        keep = [i for i, f in enumerate(base.rule.features) if not f.startswith("sim")]
        r = base.rule
        rule = Logistic(tuple(r.features[i] for i in keep), tuple(r.mean[i] for i in keep),
                        tuple(r.scale[i] for i in keep), tuple(r.weights[i] for i in keep), r.bias)
    note = (f"no calibration for embedder {model_id!r}: seed thresholds 0.75/0.40 and a lexical-only rule; "
            "run `logichunk memory calibrate` for this embedder")
    return Calibration(embedder=model_id, rule=rule, rule_threshold=base.rule_threshold if base else 0.5,
                       short_tokens=base.short_tokens if base else 5, source={"note": note}), note

"""The memory pipeline as segmentation methods of the eval harness (``logichunk eval segmentation``).

Each unit of a dialogue set is one turn (a :class:`~logichunk.memory.block.LogicalBlock` with the unit
as its user text; the previous unit is its anchor's context). The methods:

* ``memory-cosine`` — the baseline the design replaces: a topic starts where the cosine of adjacent
  turns' embeddings falls below the calibrated ``baseline_threshold``;
* ``memory-online`` — steps 1-3 (heuristic, screen, default rule), immediate decisions only;
* ``memory`` — the full pipeline: steps 1-3 and the review (the calibration's ``lookahead``);
* ``memory-lm`` / ``memory-lm-online`` — the same with the LM arbiter (the packaged Qwen2.5-Coder-0.5B-Instruct, or
  ``$LOGICHUNK_LM``) in the grey zone, its threshold from the calibration's ``arbiter_thresholds["lm"]``
  (``logichunk memory calibrate --fit-lm N``; 0.5 without); slow on a CPU, so run by name;
* ``memory-llm`` / ``memory-llm-online`` — the LLM arbiter over an OpenAI-compatible endpoint named by
  ``$LOGICHUNK_MEMORY_LLM`` (``openai:http://host:port/v1#model``), the rule as its fallback.

The calibration comes from ``--calibration FILE`` (``logichunk memory calibrate``), else the shipped
one for the embedder; calibrate on other data than you report.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import LogichunkError
from ..eval.env import Unavailable, env_lm
from .arbiter import LLMArbiter, LMArbiter, RuleArbiter
from .block import LogicalBlock
from .calibration import Calibration, default_calibration, fitted_for
from .perception import Perception, replay

__all__ = ["CosineBaseline", "MemorySegmenter", "load_calibration", "make_runner", "unit_blocks"]


def unit_blocks(units: Sequence[str]) -> list[LogicalBlock]:
    """One turn per unit (an empty unit becomes "." so that no turn is lost)."""
    return [LogicalBlock(user=u if u.strip() else ".") for u in units]


def load_calibration(path: str | None, embedder: Any) -> tuple[Calibration, str]:
    """The calibration at ``path`` (checked against the embedder), else the shipped default; and a note."""
    model = str(getattr(embedder, "model_id", ""))
    if path:
        cal = Calibration.load(path)
        if cal.embedder and not fitted_for(cal.embedder, model):
            raise LogichunkError(f"calibration {path} was fitted for embedder {cal.embedder!r}, not {model!r}: "
                                 "pass the same --embedder, or calibrate for this one")
        return cal, f"calibration {path}"
    cal, note = default_calibration(model)
    return cal, note or f"shipped calibration for {model}"


class MemorySegmenter:
    """``segment(units, lang)`` -> boundaries (gap indices) from the pipeline's final episodes."""

    def __init__(self, embedder: Any, calibration: Calibration, *, arbiter: Any = None, online: bool = False) -> None:
        self.embedder = embedder
        self.calibration = calibration.with_(lookahead=0) if online else calibration
        self.arbiter = arbiter
        self.failures = 0

    def segment(self, units: Sequence[str], lang: str = "en", gold_count: int | None = None) -> np.ndarray:
        p = Perception(embedder=self.embedder, calibration=self.calibration, arbiter=self.arbiter, links=False)
        replay(unit_blocks(units), p)
        return np.asarray(sorted(s - 1 for s in p.boundaries() if 0 < s < len(units)), dtype=np.int64)


class CosineBaseline:
    """The plain cosine threshold on adjacent turns (their raw texts embedded)."""

    def __init__(self, embedder: Any, threshold: float) -> None:
        self.embedder = embedder
        self.threshold = float(threshold)

    def segment(self, units: Sequence[str], lang: str = "en", gold_count: int | None = None) -> np.ndarray:
        if len(units) < 2:
            return np.zeros(0, dtype=np.int64)
        v = np.asarray(self.embedder.embed([u if u.strip() else "." for u in units], kind="query"), np.float32)
        sims = np.einsum("ij,ij->i", v[1:], v[:-1])
        return np.flatnonzero(sims < self.threshold).astype(np.int64)


class _Memo:
    """One arbiter shared by the harness's methods, its verdicts remembered by (summary, query): the
    online and the full pipeline ask the same questions, and an LM call costs a second on a CPU."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.memo: dict[tuple[str, str, str], Any] = {}

    def judge(self, q: Any) -> Any:
        key = (q.summary, q.query, q.language)
        if key not in self.memo:
            self.memo[key] = self.inner.judge(q)
        return self.memo[key]


_SHARED: dict[str, _Memo] = {}


def _lm_arbiter(cal: Calibration) -> _Memo:
    """The arbiter over the LM the environment names (``$LOGICHUNK_LM``, ``$LOGICHUNK_LM_DTYPE``),
    loaded once per process and shared with the eval's ppl / msp methods."""
    lm = env_lm("memory-lm")
    threshold = float(cal.arbiter_thresholds.get("lm", 0.5))
    key = f"{id(lm)}@{threshold}"
    if key not in _SHARED:
        _SHARED[key] = _Memo(LMArbiter(lm, threshold=threshold))
    return _SHARED[key]


def _llm_arbiter(cal: Calibration) -> LLMArbiter:
    spec = os.environ.get("LOGICHUNK_MEMORY_LLM", "").strip()
    if not spec:
        raise Unavailable("memory-llm: set LOGICHUNK_MEMORY_LLM=openai:http://host:port/v1#model (an "
                          "OpenAI-compatible chat endpoint) to evaluate the LLM arbiter")
    from ..models.registry import resolve_llm

    return LLMArbiter(resolve_llm(spec).model, fallback=RuleArbiter(cal))


def make_runner(kind: str, settings: Any) -> Any:
    """The harness runner for method ``kind`` (see the module docstring) from its ``Settings``."""
    emb = settings.embedder
    cal, _note = load_calibration(getattr(settings, "calibration", None), emb)
    if kind == "memory-cosine":
        return CosineBaseline(emb, cal.baseline_threshold)
    online = kind.endswith("-online")
    base = kind.removesuffix("-online")
    arbiter = None
    if base == "memory-lm":
        arbiter = _lm_arbiter(cal)
    elif base == "memory-llm":
        arbiter = _llm_arbiter(cal)
    elif base != "memory":
        raise LogichunkError(f"unknown memory method {kind!r}")
    return MemorySegmenter(emb, cal, arbiter=arbiter, online=online)

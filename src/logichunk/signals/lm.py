"""LM perplexity per sentence (Meta-Chunking's PPL signal).

Each sentence gets the mean negative log-likelihood of its tokens, every token conditioned on *all*
the text before it (one linear pass of :meth:`LanguageModel.token_logprobs`, so long texts cost
O(N), not O(N²)). Tokens are attributed to the sentence that holds their **last** character, so a
token like ``" The"`` — whose leading space the splitter gives to the previous sentence — counts for
the sentence it starts. A sentence left without a scored token (its only token is the text's first,
or a token straddles it) borrows the tokens that overlap it, and failing that the mean of the curve;
:attr:`SentencePPL.scored` says which sentences had their own tokens.

Low values mean "the model saw this coming": Meta-Chunking cuts after sentences at local minima of
this curve. As a :class:`~logichunk.signals.GapSignal`, the gap after sentence ``i`` scores how far
sentence ``i`` dips below its neighbours (the mean of its two drops), so minima give the peaks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..models.lm import LanguageModel, TokenLogprobs
from ..text.sentences import SentenceSpans

__all__ = ["PerplexitySignal", "SentencePPL", "minimum_depth", "next_sentence_surprise", "sentence_nll"]


@dataclass(frozen=True, eq=False)
class SentencePPL:
    """The raw per-sentence curve (for plotting and for the meta chunker).

    ``nll``: mean token NLL per sentence (nats); ``ppl``: ``exp(nll)``; ``tokens``: tokens attributed
    to each sentence; ``scored``: whether the sentence had its own scored tokens."""

    nll: np.ndarray
    tokens: np.ndarray
    scored: np.ndarray
    model_id: str = ""

    @property
    def ppl(self) -> np.ndarray:
        return np.exp(self.nll)

    def to_dict(self) -> dict:
        return {"model": self.model_id, "nll": self.nll.tolist(), "tokens": self.tokens.tolist(),
                "scored": self.scored.tolist()}


def sentence_nll(tl: TokenLogprobs, starts: np.ndarray, ends: np.ndarray) -> SentencePPL:
    """Aggregate token log-probs onto sentences ``[starts[i], ends[i])`` (they must tile the text)."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    n = starts.size
    if n == 0:
        z = np.zeros(0)
        return SentencePPL(z, z.astype(np.int64), z.astype(bool), tl.model_id)
    lp = np.asarray(tl.logprobs, dtype=np.float64)
    ok = np.isfinite(lp)
    # sentence of each token = the one holding its last character
    owner = np.searchsorted(ends, tl.ends - 1, side="right")
    owner = np.clip(owner, 0, n - 1)
    nll = -np.where(ok, lp, 0.0)
    tot = np.bincount(owner, weights=nll, minlength=n)
    cnt = np.bincount(owner, weights=ok.astype(np.float64), minlength=n)
    ntok = np.bincount(owner, minlength=n).astype(np.int64)
    scored = cnt > 0
    out = np.full(n, np.nan)
    out[scored] = tot[scored] / cnt[scored]
    missing = np.flatnonzero(~scored)
    if missing.size:
        # borrow the scored tokens that overlap the sentence
        for i in missing.tolist():
            a, b = int(starts[i]), int(ends[i])
            lo = int(np.searchsorted(tl.ends, a, side="right"))  # first token ending after a
            hi = int(np.searchsorted(tl.starts, b, side="left"))  # tokens starting before b
            sel = lp[lo:hi]
            sel = sel[np.isfinite(sel)]
            if sel.size:
                out[i] = -float(sel.mean())
        still = ~np.isfinite(out)
        if still.any():
            fill = float(np.nanmean(out)) if np.isfinite(out).any() else 0.0
            out[still] = fill
    return SentencePPL(out, ntok, scored, tl.model_id)


def next_sentence_surprise(values: np.ndarray) -> np.ndarray:
    """Gap scores (n-1) from a per-sentence NLL curve (n): the value of the sentence after each gap."""
    v = np.asarray(values, dtype=np.float64)
    return v[1:].copy() if v.size >= 2 else np.zeros(0)


def minimum_depth(values: np.ndarray) -> np.ndarray:
    """Gap scores (n-1) from a per-sentence curve (n): for the gap after sentence ``i``, the mean of
    how far ``values[i]`` lies below its neighbours (one neighbour at the text's start). Positive at
    dips, highest at deep local minima — where Meta-Chunking cuts."""
    v = np.asarray(values, dtype=np.float64)
    n = v.size
    if n < 2:
        return np.zeros(0)
    left = np.empty(n)
    left[0] = np.nan
    left[1:] = v[:-1] - v[1:]
    right = np.empty(n)
    right[-1] = np.nan
    right[:-1] = v[1:] - v[:-1]
    depth = np.nanmean(np.vstack((left, right)), axis=0)
    return depth[:-1]


class PerplexitySignal:
    """Meta-Chunking's PPL curve as a gap signal. The last text's curve is cached, so the cascade and
    a plot can share one LM pass."""

    name = "lm-ppl"

    def __init__(self, lm: LanguageModel) -> None:
        self.lm = lm
        self._last: tuple[str, bytes, SentencePPL] | None = None

    @property
    def model_id(self) -> str:
        return getattr(self.lm, "model_id", "")

    def curve(self, sents: SentenceSpans) -> SentencePPL:
        """Per-sentence mean NLL (the raw curve, one value per sentence)."""
        key = sents.starts.tobytes() + sents.ends.tobytes()
        if self._last is not None and self._last[1] == key and self._last[0] == sents.text:
            return self._last[2]
        if len(sents) == 0:
            res = sentence_nll(TokenLogprobs(sents.text, np.zeros(0, np.int64), np.zeros(0, np.int64),
                                             np.zeros(0)), sents.starts, sents.ends)
        else:
            res = sentence_nll(self.lm.token_logprobs(sents.text), sents.starts, sents.ends)
        self._last = (sents.text, key, res)
        return res

    def sentence_scores(self, sents: SentenceSpans) -> np.ndarray:
        return self.curve(sents).nll

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        """The gap after sentence ``i`` scores the surprise of sentence ``i+1`` (its mean token NLL
        given everything before): a new topic is what the context does not predict. Measured on ten
        documents each of Choi, DialSeg711, Weibo and DAct (Pk 0.381 / 0.351 / 0.468 / 0.455), it beat
        the depth of NLL minima (0.454 / 0.458 / 0.501 / 0.510) on all four; Meta-Chunking's own
        minima rule stays in :func:`logichunk.chunkers.meta.chunk_ppl`."""
        return next_sentence_surprise(self.curve(sents).nll)

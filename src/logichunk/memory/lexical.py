"""Lexical signals over the recent turns, reusing the model-free entropy signal.

Embeddings of two short turns are a weak witness of a topic change (the hash embedder barely
separates them; E5 puts everything at a cosine of 0.8). Vocabulary is a strong one: a new topic
brings words that were not used in the last few hundred items, and the old topic's words stop coming
back. :mod:`logichunk.signals.novelty` already measures both with a recency cache model; this module
only keeps a sliding window of the last turns' texts and asks it:

* ``novelty`` — mean cache surprisal (``[0, 1]``) of the new turn's content items given the window
  before it (:func:`~logichunk.signals.novelty.novelty_profile`): online, nothing after the turn;
* ``novelty_left`` — the same for the ~20 items before the turn, so a turn is judged against how new
  the conversation was just before it;
* ``jump`` — the entropy signal's gap score (:func:`~logichunk.signals.novelty.novelty_gap_scores`,
  cache-perplexity jump both ways, edge-corrected, ``tanh``-scaled as :class:`EntropySignal` does)
  at the gap before a turn, once some turns after it have arrived: the evidence of the review step.

The window holds whole turns (joined by newlines) and is trimmed to what the signal can see (its
lookback plus its largest scale), so one turn costs a fraction of a millisecond whatever the length
of the conversation. ``memo`` (a dict) caches the results by window text: calibration replays the
same conversation many times with different thresholds, and these values do not depend on decisions.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..signals.entropy import EntropySignal
from ..signals.items import content_items
from ..signals.novelty import novelty_profile

__all__ = ["LexicalWindow", "TurnLexical"]

_SIG = EntropySignal()
LEFT_ITEMS = 20  # items before a turn that ``novelty_left`` averages


@dataclass(frozen=True)
class TurnLexical:
    """The online lexical features of one turn (see the module docstring); ``items`` = its count of
    content items. A turn without content items has ``novelty`` 0.5 (no evidence either way)."""

    novelty: float
    novelty_left: float
    items: int


class LexicalWindow:
    """The last turns' texts and the lexical features over them. ``add(index, text)`` returns the new
    turn's :class:`TurnLexical`; ``jump(index)`` scores the gap before an earlier turn still in the
    window, with every turn added since as its right context."""

    def __init__(self, *, lookback: int = _SIG.lookback, scales: tuple[int, ...] = _SIG.scales,
                 saturation: float = _SIG.saturation, memo: dict[Any, Any] | None = None) -> None:
        # the review's jump is exactly the entropy signal's gap score at the turn's start
        self.signal = EntropySignal(scales=tuple(int(s) for s in scales), lookback=int(lookback),
                                    saturation=float(saturation))
        self.lookback = self.signal.lookback
        self.scales = self.signal.scales
        self.memo = memo
        self._turns: deque[tuple[int, str, int]] = deque()  # (turn index, text, content items)
        self._keep_items = self.lookback + max(self.scales, default=0)
        self._text = ""  # the turns joined by newlines, and where each starts in it
        self._starts: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._turns)

    def reset(self) -> None:
        self._turns.clear()
        self._text, self._starts = "", {}

    def state(self) -> list[list[Any]]:
        """The window's turns, ``[index, text, items]`` each: all it holds (a resumed perception's window)."""
        return [[i, t, n] for i, t, n in self._turns]

    def restore(self, turns: list[list[Any]]) -> None:
        """Hold ``turns`` (from :meth:`state`) and nothing else."""
        self._turns = deque((int(i), str(t), int(n)) for i, t, n in turns)
        self._relayout()

    def _layout(self) -> tuple[str, dict[int, int]]:
        return self._text, self._starts

    def _relayout(self) -> None:
        self._text = "\n".join(t for _, t, _ in self._turns)
        self._starts = {}
        at = 0
        for idx, t, _ in self._turns:
            self._starts[idx] = at
            at += len(t) + 1

    def add(self, index: int, text: str, *, pin: int | None = None) -> TurnLexical:
        """Append turn ``index``; turns older than ``pin`` (the oldest gap still to be reviewed) are
        dropped once enough items precede it for the signal's lookback and scales."""
        n_items = 0
        if text:
            hit = self.memo.get(("items", text)) if self.memo is not None else None
            n_items = int(content_items(text)[0].size) if hit is None else hit
            if self.memo is not None and hit is None:
                self.memo[("items", text)] = n_items
        self._turns.append((index, text, n_items))
        if self._trim(index if pin is None else pin):
            self._relayout()
        else:
            self._starts[index] = len(self._text) + 1 if len(self._turns) > 1 else 0
            self._text = self._text + "\n" + text if len(self._turns) > 1 else text
        text, starts = self._layout()
        key = None
        if self.memo is not None:
            key = ("add", text, starts[index])
            hit = self.memo.get(key)
            if hit is not None:
                return hit
        out = self._features(text, starts[index])
        if key is not None:
            self.memo[key] = out
        return out

    def _trim(self, pin: int) -> bool:
        # keep every turn from `pin` on, and before it enough turns for lookback + largest scale items
        before = 0
        keep_from = 0
        for k in range(len(self._turns) - 1, -1, -1):
            idx, _, n = self._turns[k]
            if idx < pin:
                before += n
                if before >= self._keep_items:
                    keep_from = k
                    break
        for _ in range(keep_from):
            self._turns.popleft()
        return keep_from > 0

    def _features(self, text: str, start: int) -> TurnLexical:
        pos, back, _ = novelty_profile(text, self.lookback)
        cut = int(np.searchsorted(pos, start, side="left"))
        mine = back[cut:]
        left = back[max(0, cut - LEFT_ITEMS) : cut]
        nov = float(mine.mean()) if mine.size else 0.5
        nleft = float(left.mean()) if left.size else 1.0
        return TurnLexical(nov, nleft, int(mine.size))

    def known(self) -> frozenset[int]:
        """The content item ids of the window (the recent conversation: at least the signal's lookback of
        items): what a short turn must go beyond to carry a topic of its own (:func:`~.block.is_filler`)."""
        key = ("known", self._text)
        hit = self.memo.get(key) if self.memo is not None else None
        if hit is None:
            hit = frozenset(content_items(self._text)[1].tolist()) if self._text else frozenset()
            if self.memo is not None:
                self.memo[key] = hit
        return hit

    def jump(self, index: int) -> float:
        """The entropy gap score (``[0, 1]``) of the gap before turn ``index`` given the window."""
        text, starts = self._layout()
        if index not in starts:
            raise KeyError(f"turn {index} is no longer in the lexical window")
        key = None
        if self.memo is not None:
            key = ("jump", text, starts[index])
            hit = self.memo.get(key)
            if hit is not None:
                return hit
        out = float(self.signal.scores_at(text, np.asarray([starts[index]]))[0])
        if key is not None:
            self.memo[key] = out
        return out

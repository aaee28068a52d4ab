"""Sentence splitting with exact spans (PLACEHOLDER — being replaced by the full zh/en splitter).

Contract (kept by the full implementation):
- ``split_sentences(text) -> SentenceSpans`` whose ``starts``/``ends`` (int64 numpy arrays) tile
  ``text`` exactly: starts[0] == 0, ends[-1] == len(text), starts[i+1] == ends[i], no empty span.
  Whitespace belongs to the sentence before it. Empty text gives zero sentences.
- ``breaks`` (int8, one per gap, len n-1): structural strength of the gap after sentence i:
  0 = inside a paragraph, 1 = line break, 2 = blank line (paragraph), 3 = hard break (Markdown
  heading, code fence, horizontal rule, list start).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..types import Sentence, Span

BREAK_NONE, BREAK_LINE, BREAK_PARAGRAPH, BREAK_HARD = 0, 1, 2, 3


@dataclass(frozen=True, slots=True, eq=False)
class SentenceSpans:
    """All sentences of one text as arrays (fast), with ``Sentence`` objects on demand."""

    text: str
    starts: np.ndarray
    ends: np.ndarray
    breaks: np.ndarray

    def __len__(self) -> int:
        return int(self.starts.size)

    def __getitem__(self, i: int) -> Sentence:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return Sentence(Span(int(self.starts[i]), int(self.ends[i])), i)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def texts(self) -> list[str]:
        t = self.text
        return [t[s:e] for s, e in zip(self.starts.tolist(), self.ends.tolist(), strict=True)]


_RX = re.compile(r"[.!?。！？；…]+[\"'”’）)\]」』]*\s*|\n\s*")


def split_sentences(text: str) -> SentenceSpans:
    ends = [m.end() for m in _RX.finditer(text) if m.end() > 0]
    ends = sorted(set(e for e in ends if 0 < e < len(text))) + ([len(text)] if text else [])
    e = np.asarray(ends, dtype=np.int64)
    s = np.concatenate(([0], e[:-1])).astype(np.int64) if e.size else np.zeros(0, np.int64)
    br = np.zeros(max(e.size - 1, 0), dtype=np.int8)
    for i in range(br.size):
        seg = text[s[i] : e[i]]
        br[i] = BREAK_PARAGRAPH if seg.count("\n") >= 2 else (BREAK_LINE if "\n" in seg else 0)
    return SentenceSpans(text, s, e, br)


def sentences(text: str) -> list[Sentence]:
    return list(split_sentences(text))

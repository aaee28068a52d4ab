"""Gap signals: n sentences in, n-1 gap scores out (higher = stronger logic break)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..text.sentences import SentenceSpans


@runtime_checkable
class GapSignal(Protocol):
    """Anything that scores the gaps between consecutive sentences of one text."""

    name: str

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        """float64 array of len(sents)-1; higher means a stronger break after sentence i."""
        ...


@runtime_checkable
class VectorSignal(GapSignal, Protocol):
    """A gap signal that embeds sentences (semantic cliffs, the fused signal): the cascade's global
    decision then measures cohesion with these vectors instead of the model-free lexical ones."""

    def sentence_vectors(self, sents: SentenceSpans) -> np.ndarray | None:
        """One vector per sentence (rows of a float array), or None when there are none."""
        ...

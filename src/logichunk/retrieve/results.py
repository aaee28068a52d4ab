"""What every retrieval mode returns: the hits, the mode, and any fallback or notes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..types import Hit


@dataclass(frozen=True)
class Results(Sequence[Hit]):
    hits: tuple[Hit, ...]
    mode: str
    query: str
    fallback: str | None = None  # "document" when the child index was empty or failed
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i):  # type: ignore[override]
        return self.hits[i]

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

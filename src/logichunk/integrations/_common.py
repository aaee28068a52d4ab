"""What the framework adapters share: one call from their options to a chunk tree, and the chunks a
framework gets from it. Framework-free (the adapters import their frameworks, this does not)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..chunkers.dispatch import chunk_by
from ..errors import InputError
from ..text.measure import Meter
from ..text.tokens import measure_for
from ..tree import ChunkTree
from ..types import Chunk


@dataclass(frozen=True)
class SplitOptions:
    """A splitter's settings: ``method`` (see ``logichunk.chunkers.dispatch.METHODS``), ``chunk_size``
    (the top level's limit) or ``sizes`` (every level's), ``levels``, ``unit``/``tokenizer``,
    ``chunk_overlap`` (context windows, in the unit), and the models a method needs."""

    method: str = "logic-chain"
    chunk_size: int = 1000
    sizes: tuple[int, ...] | None = None
    levels: int = 1
    unit: str = "chars"
    tokenizer: Any = None
    chunk_overlap: int = 0
    embedder: Any = None
    llm: Any = None
    lm: Any = None

    def measure(self) -> Any:
        return measure_for(self.unit, self.tokenizer, embedder=self.embedder)

    def tree(self, text: str) -> ChunkTree:
        if not isinstance(text, str):
            raise InputError(f"text must be str, got {type(text).__name__}")
        return chunk_by(self.method, text, max_size=self.chunk_size, sizes=self.sizes, levels=self.levels,
                        unit=self.unit, tokenizer=self.tokenizer, embedder=self.embedder, llm=self.llm, lm=self.lm,
                        overlap=self.chunk_overlap)

    def length(self, text: str) -> int:
        return Meter(text, self.measure()).total()


def window(chunk: Chunk) -> tuple[int, int]:
    """The span a framework reads for ``chunk``: its overlap window when there is one, else its span."""
    w = chunk.meta.get("overlap_span")
    return (int(w[0]), int(w[1])) if w else (chunk.span.start, chunk.span.end)


def chunk_fields(chunk: Chunk, method_default: str) -> dict[str, Any]:
    """The metadata every adapter adds to a chunk (besides the source document's own)."""
    return {"chunk_id": chunk.id, "parent_id": chunk.parent, "level": chunk.level,
            "method": chunk.method or method_default, "chunk_start": chunk.span.start, "chunk_end": chunk.span.end,
            "is_leaf": not chunk.children}


def as_sizes(sizes: Sequence[int] | None) -> tuple[int, ...] | None:
    return None if sizes is None else tuple(int(s) for s in sizes)

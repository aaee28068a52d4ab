"""The size limits of a chunk: :class:`SizeLimits` (a hard maximum, a target that merging fills up to,
a minimum under which a piece joins a neighbour).

Why a module of its own: both ways of deciding under a size limit take it — the local rule
(:func:`~logichunk.boundaries.local.fit`) and the global choice
(:func:`~logichunk.boundaries.sized.fit_global`) — and neither should import the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError


@dataclass(frozen=True, slots=True)
class SizeLimits:
    """``max_size`` is a hard ceiling; pieces are merged up to ``target`` (default: the maximum);
    pieces under ``min_size`` are merged into a neighbour when that fits under the maximum."""

    max_size: int
    target: int | None = None
    min_size: int = 0

    def __post_init__(self) -> None:
        if self.max_size < 1:
            raise InputError(f"max size must be at least 1, got {self.max_size}")
        if self.target is not None and not (1 <= self.target <= self.max_size):
            raise InputError(f"target size must be between 1 and max size ({self.max_size}), got {self.target}")
        if not (0 <= self.min_size <= self.max_size):
            raise InputError(f"min size must be between 0 and max size ({self.max_size}), got {self.min_size}")

    @property
    def goal(self) -> int:
        return self.max_size if self.target is None else self.target


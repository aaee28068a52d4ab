"""A one-line progress counter on stderr for long CLI runs, drawn only on a terminal (a pipe or a
log file gets nothing), so verbs that take minutes show they are alive without dirtying output."""

from __future__ import annotations

import sys


class Progress:
    """``step(label)`` after each item of ``total``; ``close()`` ends the line. Off unless ``enabled``,
    more than one item, and stderr a terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled and total > 1 and sys.stderr.isatty()
        self.done = 0

    def step(self, label: str) -> None:
        self.done += 1
        if self.enabled:
            width = 30
            filled = width * self.done // self.total
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {label[-40:]:<40}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")

"""The folder logichunk keeps what it builds for later processes (the compiled kernels, converted
models, saved vector indexes): one rule, so each finds the others' files where the user expects them."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$LOGICHUNK_CACHE``, else ``$XDG_CACHE_HOME/logichunk``, else ``~/.cache/logichunk``."""
    env = os.environ.get("LOGICHUNK_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "logichunk"

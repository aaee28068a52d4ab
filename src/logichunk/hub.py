"""Hugging Face hub ids that a user names (a tokenizer, an embedder, a local LM, a reranker), looked up
without hanging on a machine that cannot reach the hub.

Why: given a hub id, ``tokenizers`` and ``transformers`` ask the hub first even when the files are in
the local cache, and on a machine without internet they retry each request with growing waits: a
mistyped folder read as ``org/name`` took 24 s to fail as a tokenizer and 78 s as an embedder, and a
cached model still waited for every retry before it loaded. One connection attempt per process says
whether the hub answers; when it does not, a cached id loads from the cache at once and an uncached
one fails at once, in one line. Nothing on logichunk's default path names a hub id.
"""

from __future__ import annotations

import os
import socket
from functools import lru_cache
from urllib.parse import urlsplit

from .errors import ModelUnavailable

#: seconds one connection attempt to the hub may take before the hub counts as unreachable
PROBE_TIMEOUT = 3.0

_TRUE = {"1", "on", "yes", "true"}


def offline() -> bool:
    """Whether the user asked for the cache only (``HF_HUB_OFFLINE``, as huggingface_hub reads it)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


def endpoint() -> str:
    """The hub's address (``HF_ENDPOINT`` for a mirror)."""
    return os.environ.get("HF_ENDPOINT", "").strip() or "https://huggingface.co"


@lru_cache(maxsize=4)
def _reachable(url: str) -> bool:
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return False
    port = parts.port or (80 if parts.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT):
            return True
    except OSError:  # (no route, no name resolution, refused, timed out)
        return False


def reachable() -> bool:
    """Whether the hub accepts a connection (asked once per process and endpoint)."""
    return _reachable(endpoint())


def cached(repo: str, filename: str | None = None) -> str | None:
    """The local path of ``filename`` of ``repo`` (or of its snapshot folder) in the hub cache, or None;
    reads the disk only."""
    try:
        from huggingface_hub import hf_hub_download, snapshot_download
    except ImportError:
        return None
    try:
        if filename is None:
            return str(snapshot_download(repo, local_files_only=True))
        return str(hf_hub_download(repo, filename, local_files_only=True))
    except Exception:  # (not cached, a malformed id: huggingface_hub's own errors, none worth more here)
        return None


def _hub_installed() -> bool:
    """Whether ``huggingface_hub`` imports (without it :func:`cached` cannot tell; the loader's own error
    then says what to install)."""
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        return False
    return True


def cache_only(repo: str, filename: str | None = None) -> bool:
    """Whether ``repo`` must load from the local cache alone (``local_files_only``): the user asked for
    it, or the hub cannot be reached and the files are cached. Raises :class:`ModelUnavailable` at once
    when the hub cannot be reached and the cache lacks them, or the user asked for the cache alone
    (``HF_HUB_OFFLINE``) and it lacks them: said before torch or transformers are imported (~20 s on a busy
    machine before transformers said the same)."""
    if offline():
        if _hub_installed() and cached(repo, filename) is None:
            raise ModelUnavailable(f"{repo!r} was read as a Hugging Face hub id: it is not in the local hub cache, "
                                   "and HF_HUB_OFFLINE=1 asks for the cache alone (a local folder's path, or the "
                                   "model downloaded once with HF_HUB_OFFLINE unset)")
        return True
    if reachable():
        return False
    if cached(repo, filename) is not None:
        return True
    raise ModelUnavailable(f"{repo!r} was read as a Hugging Face hub id: it is not in the local hub cache and "
                           f"the hub ({urlsplit(endpoint()).hostname}) cannot be reached (a local folder's path, "
                           "or the model downloaded once on a machine that is online)")

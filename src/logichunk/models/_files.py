"""Checksums of model files: a model we load must be the model we pinned (supply-chain check)."""

from __future__ import annotations

import hashlib
import os
import threading

from ..errors import ModelUnavailable

_verified: dict[tuple[str, int, int], str] = {}
_lock = threading.Lock()


def sha256_file(path: str, *, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, memoised per (path, size, mtime) so a process hashes a model once."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    with _lock:
        if key in _verified:
            return _verified[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    digest = h.hexdigest()
    with _lock:
        _verified[key] = digest
    return digest


def verify_sha256(path: str, expected: str, *, what: str) -> None:
    """Raise :class:`ModelUnavailable` unless ``path`` hashes to ``expected``."""
    got = sha256_file(path)
    if got != expected.lower():
        raise ModelUnavailable(
            f"{what}: {path} has sha256 {got[:16]}..., expected {expected[:16]}... "
            "(a different or corrupted model; reinstall the pinned package)"
        )

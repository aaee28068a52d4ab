"""Model files: checksums (a model we load must be the model we pinned, a supply-chain check) and
staged writes (a converted model appears whole or not at all, whatever interrupts the conversion)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import hub
from ..errors import ModelUnavailable

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")

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


@contextmanager
def staged_dir(dest: str | os.PathLike[str], prefix: str = ".staging-") -> Iterator[Path]:
    """A fresh folder beside ``dest`` to fill; when the block ends without an exception it replaces
    ``dest`` in one rename, otherwise it is removed and ``dest`` is left as it was."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=prefix))
    try:
        yield tmp
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def staged_file(dest: str | os.PathLike[str], mode: str = "w") -> Iterator[Any]:
    """A file opened beside ``dest`` (``mode`` "w" for UTF-8 text, "wb" for bytes) to fill; when the
    block ends without an exception it replaces ``dest`` in one rename, otherwise it is removed and
    ``dest`` is left as it was: an interrupted or failed write never truncates an earlier file."""
    dest = Path(dest)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.resolve().parent)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def model_source(spec: str | os.PathLike[str]) -> tuple[str, bool]:
    """``(source, local)`` for a model a user names: a local folder, else a Hugging Face hub id
    ``org/name``, which transformers resolves from the local hub cache or downloads when the machine is
    online (``HF_HUB_OFFLINE=1``: the cache only). ``local``: load with ``local_files_only`` (a folder; a
    hub id the cache must serve, the hub being unreachable: :func:`logichunk.hub.cache_only`, which fails
    at once for an id neither has). Nothing on logichunk's default path names a hub id."""
    p = Path(spec).expanduser()
    if p.is_dir():
        return str(p), True
    text = str(spec)
    if not p.exists() and _HUB_ID.fullmatch(text):
        return text, hub.cache_only(text)
    raise ModelUnavailable(f"no model folder at {p} (nor a Hugging Face hub id like org/name)")


def hub_hint(source: str) -> str:
    """What to add to a loading error for a hub id (empty for a folder)."""
    if os.path.isdir(source):
        return ""
    return (f" ({source!r} was read as a Hugging Face hub id: it must be in the local hub cache, or the hub "
            "reachable; with HF_HUB_OFFLINE=1 only the cache is used)")

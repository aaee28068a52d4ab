"""An HNSW index of a store's vectors saved between processes (SQLite stores: the file's own processes).

Why: an HNSW index is built in memory, at about a millisecond a vector, and every process built its own:
past the store's ``hnsw_threshold`` (50,000 chunks) a CLI search, an agent's call through the MCP server
or a service's first query after a restart took 30–60 s instead of one. Saved once, a later process loads
it (reading a file) and brings it up to date with what changed since, as a long-lived process does.

What keeps a loaded index honest: it is found by the database's path, project, model, level and the
index's parameters (the cache folder: ``$LOGICHUNK_CACHE``, else ``$XDG_CACHE_HOME/logichunk``, else
``~/.cache/logichunk``, under ``hnsw/``); the rows it holds that the store no longer has are deleted, the
store's rows it lacks are added, and every row both hold is compared with the store's vector, so a
replaced or restored database (the same path, pks reused for other text) costs a rebuild of what differs,
never a wrong answer. It is saved again when what a load had to add or change passes a tenth of it.
Nothing here is needed for correctness: a file that cannot be read or written is ignored (the index is
built as before).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from ..cache_dir import cache_root
from ..index.vectors import HnswIndex

#: a saved index is written again when a load had to add, replace or remove more than this share of it
RESAVE_SHARE = 0.1

_FORMAT = 1


def index_folder(db_path: str, project_id: str, model: str, level: str, index: HnswIndex) -> Path:
    """Where the index of these rows is saved (one folder per database, project, model, level and
    parameters)."""
    key = json.dumps([os.path.abspath(db_path), project_id, model, level, index.dim, index.m,
                      index.ef_construction, _FORMAT])
    return cache_root() / "hnsw" / hashlib.sha256(key.encode()).hexdigest()[:32]


def save(index: HnswIndex, folder: Path) -> bool:
    """Write ``index`` to ``folder``, replacing what is there in two renames (a reader sees the old folder,
    the new one, or none: then it builds). False when it could not be written."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
        try:
            index.save_to(tmp)
            old = None
            if folder.exists():
                old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
                os.replace(folder, old)
            os.replace(tmp, folder)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    except OSError:
        return False
    return True


def load_synced(folder: Path, index: HnswIndex, ids: np.ndarray, vecs: np.ndarray) -> tuple[HnswIndex, bool] | None:
    """The saved index in ``folder`` brought level with the store's rows (``ids``, their ``vecs``), and
    whether it should be saved again; None when there is none to read (or another kind of index)."""
    saved = index.load_from(folder, capacity=int(ids.size * 1.2) + 1024)
    if saved is None:
        return None
    ids = np.asarray(ids, np.int64)
    order = np.argsort(ids)
    ids, vecs = ids[order], np.asarray(vecs, np.float32)[order]
    have = saved.ids()
    gone = np.setdiff1d(have, ids)
    both = np.intersect1d(have, ids)
    mine = vecs[np.searchsorted(ids, both)]
    norm = np.linalg.norm(mine, axis=1, keepdims=True)
    mine = mine / np.where(norm > 0, norm, 1.0)
    # (a row both hold with another vector: a replaced or restored database reusing the pk)
    differ = both[np.abs(saved.vectors(both) - mine).max(axis=1, initial=0.0) > 1e-4] if both.size else both
    add = np.union1d(np.setdiff1d(ids, have), differ)
    saved.update(add, vecs[np.searchsorted(ids, add)], np.union1d(gone, differ))
    return saved, add.size + gone.size > RESAVE_SHARE * max(have.size, 1)

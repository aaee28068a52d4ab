"""An HNSW index of a store's vectors saved between processes (SQLite stores: the file's own processes).

Why: an HNSW index is built in memory, at about a millisecond a vector, and every process built its own:
past the store's ``hnsw_threshold`` (50,000 chunks) a CLI search, an agent's call through the MCP server
or a service's first query after a restart took 30–60 s instead of one. Saved once, a later process loads
it (reading a file) and brings it up to date with what changed since, as a long-lived process does.

What keeps a loaded index honest: it is found by the database's path, project, model, level and the
index's parameters (the cache folder: ``$LOGICHUNK_CACHE``, else ``$XDG_CACHE_HOME/logichunk``, else
``~/.cache/logichunk``, under ``hnsw/``); the rows it holds that the store no longer has are deleted, the
store's rows it lacks are added, and every row both hold is compared with the store's vector (by two
fixed random projections saved with it), so a
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


def fingerprints(vecs: np.ndarray) -> np.ndarray:
    """Two projections of each row on fixed random directions: equal rows give equal numbers, a row
    changed gives others (reading the index's own vectors back cost 600 MB and a second at 15k rows)."""
    dirs = np.random.default_rng(20261130).standard_normal((np.asarray(vecs).shape[1], 2))
    return np.asarray(vecs, np.float64) @ dirs


def save(index: HnswIndex, folder: Path, ids: np.ndarray, vecs: np.ndarray) -> bool:
    """Write ``index`` (whose rows are ``ids``, their ``vecs``) to ``folder``, replacing what is there in two
    renames (a reader sees the old folder, the new one, or none: then it builds). False when it could not
    be written."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
        try:
            index.save_to(tmp)
            np.savez(tmp / "rows.npz", ids=np.asarray(ids, np.int64), prints=fingerprints(vecs))
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
    try:
        with np.load(folder / "rows.npz", allow_pickle=False) as f:
            was_ids, was_prints = np.asarray(f["ids"], np.int64), np.asarray(f["prints"], np.float64)
    except (OSError, ValueError, KeyError):
        return None
    if was_ids.shape[0] != was_prints.shape[0]:
        return None
    o = np.argsort(was_ids)
    was_ids, was_prints = was_ids[o], was_prints[o]
    saved = index.load_from(folder, capacity=int(ids.size * 1.2) + 1024)
    if saved is None or not np.array_equal(was_ids, np.sort(saved.ids())):
        return None
    ids = np.asarray(ids, np.int64)
    order = np.argsort(ids)
    ids, vecs = ids[order], np.asarray(vecs, np.float32)[order]
    gone = np.setdiff1d(was_ids, ids)
    both = np.intersect1d(was_ids, ids)
    # (a row both hold with another vector: a replaced or restored database reusing the pk)
    now = fingerprints(vecs[np.searchsorted(ids, both)])
    then = was_prints[np.searchsorted(was_ids, both)]
    differ = both[~np.isclose(now, then, rtol=1e-9, atol=1e-9).all(axis=1)] if both.size else both
    add = np.union1d(np.setdiff1d(ids, was_ids), differ)
    saved.update(add, vecs[np.searchsorted(ids, add)], np.union1d(gone, differ))
    return saved, add.size + gone.size > RESAVE_SHARE * max(was_ids.size, 1)

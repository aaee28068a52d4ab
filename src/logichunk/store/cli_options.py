"""The flags every store verb shares (``--db``, ``--project``, ``--embedder``, ``--config``) and the
store they open: one module below the verbs' modules (``store/cli.py``, ``retrieve/graph_cli.py``), so
they need not import each other."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import Settings
from .base import Store


def store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: setting db, logichunk.db)")
    p.add_argument("--project", help="project name inside the database (default: default)")
    p.add_argument("--embedder", help="embedder spec: auto, hash[:DIM], e5, minilm, st:PATH, openai:URL#MODEL")
    p.add_argument("--config", help="TOML settings file (also $LOGICHUNK_CONFIG)")


def open_store(args: argparse.Namespace, *, create: bool = False, **over: Any) -> Store:
    """The store the flags name. Only ``ingest`` creates a database or a project: for the other
    verbs a mistyped ``--db`` or ``--project`` is an error, not a new empty store."""
    s = Settings.load(args.config, db=args.db, project=args.project, embedder=args.embedder, **over)
    return Store.open(s.db, settings=s, create=create)


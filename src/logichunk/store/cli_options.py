"""The flags every store verb shares (``--db``, ``--project``, ``--embedder``, ``--config``) and the
store they open: one module below the verbs' modules (``store/cli.py``, ``retrieve/graph_cli.py``), so
they need not import each other."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..cli_args import one_line
from ..config import Settings
from ..models.registry import EMBEDDER_SPECS
from .base import Store
from .embedder_choice import embedder_named, store_embedder


def store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: setting db, logichunk.db)")
    p.add_argument("--project", help="project name inside the database (default: default)")
    p.add_argument("--embedder",
                   help=f"embedder spec: {EMBEDDER_SPECS}")
    p.add_argument("--config", help="TOML settings file (also $LOGICHUNK_CONFIG)")


def open_store(args: argparse.Namespace, *, create: bool = False, own_embedder: bool = False, **over: Any) -> Store:
    """The store the flags name. Only ``ingest`` creates a database or a project: for the other
    verbs a mistyped ``--db`` or ``--project`` is an error, not a new empty store. ``own_embedder`` (the
    verbs that read vectors): with no embedder named, the project's own when it can be built here,
    said on stderr (:func:`~logichunk.store.embedder_choice.store_embedder`)."""
    s = Settings.load(args.config, db=args.db, project=args.project, embedder=args.embedder, **over)
    if own_embedder and (took := store_embedder(s, named=embedder_named(args.embedder, args.config))):
        if took.note:
            print(f"logichunk {getattr(args, 'verb', None) or 'store'}: note: {took.note}", file=sys.stderr)
        store = Store.open(s.db, settings=took.settings, embedder=took.resolved.model, create=create)
        store.embedder_choice = took.note
        return store
    return Store.open(s.db, settings=s, create=create)


#: the width of a search table's document column: a hit's document by its title (a file's name)
DOC_COLUMN = 20


def document_cell(docs: dict[str, tuple[str, str | None]], doc_id: str) -> str:
    """A search table's document column: the hit's document title, cut to :data:`DOC_COLUMN` (many documents
    share the dotted ids ``1.1.1``...: the id alone does not say which file a hit is from). A title other documents
    of the project share (a ``README`` in each folder) is shown as the end of the file's path that tells them
    apart (``kb1/README.md``: :func:`path_tail`), the path's end kept where it is cut."""
    title, source = docs.get(doc_id, (doc_id, None))
    title = title or doc_id
    others = [s for d, (t, s) in docs.items() if t == title and d != doc_id]
    if others and source and os.path.isabs(source):
        tail = path_tail(source, [s for s in others if s])
        cell = tail if len(tail) <= DOC_COLUMN else "…" + tail[-(DOC_COLUMN - 1):]
        return f"{one_line(cell, DOC_COLUMN):<{DOC_COLUMN}}"
    return f"{one_line(title, DOC_COLUMN):<{DOC_COLUMN}}"


def path_tail(path: str, others: Sequence[str]) -> str:
    """The fewest last parts of ``path`` (the folder and the name at least) that none of ``others`` ends in."""
    parts = Path(path).parts
    for k in range(2, len(parts) + 1):
        tail = os.path.join(*parts[-k:])
        if not any(o == tail or o.endswith(os.sep + tail) for o in others):
            return tail
    return path

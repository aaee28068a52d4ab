"""``logichunk mcp``: the MCP server on stdio (what desktop and CLI agents start as a subprocess).

    logichunk mcp --db kb.db [--project P] [--embedder hash|e5|...] [--allow DIR ...] [--calibration FILE]

stdout carries the protocol, so every note goes to stderr. The same server is mounted in
``logichunk serve`` at ``/mcp`` (streamable HTTP behind the service's API key).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import LogichunkError
from ..models.registry import EMBEDDER_SPECS


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..config import Settings
    from ..models import resolve_embedder
    from ..store.embedder_choice import embedder_named, store_embedder
    from . import kb

    try:
        from .mcp_server import build_server
    except ImportError as e:  # pragma: no cover - the extra is missing
        raise LogichunkError(f"logichunk mcp needs the mcp extra ({e.name} is missing): "
                             "pip install 'logichunk[mcp]'") from None
    settings = Settings.load(args.config, db=args.db, project=args.project, embedder=args.embedder,
                             memory_calibration=args.calibration)
    folders = kb.Folders(args.allow or ())
    took = store_embedder(settings, named=embedder_named(args.embedder, args.config))
    if took is not None:  # no embedder named: the project's own (the tools' results say so)
        settings, r = took.settings, took.resolved
    else:
        r = resolve_embedder(settings.embedder, cached=False)
    stores = kb.Stores(settings, r.model, embedder_choice=took.note if took else "")
    print(f"logichunk mcp: database {settings.db}, project {settings.project}, embedder {r.description}, "
          f"add_file folders: {', '.join(map(str, folders.roots)) or 'none (--allow DIR)'}", file=sys.stderr, flush=True)
    if stores.embedder_choice:
        print(f"logichunk mcp: note: {stores.embedder_choice}", file=sys.stderr, flush=True)
    if why := stores.get(None).store.embedder_mismatch():  # (as search and memory topics say it; recall adds a note)
        print(f"logichunk mcp: note: {why} (--embedder); until then search and recall match them by words only "
              "(basic and kernel modes find nothing)", file=sys.stderr, flush=True)
    try:
        server = build_server(stores, settings, allow=folders)
        print(f"logichunk mcp: conversation memory: {server.memory_calibration}", file=sys.stderr, flush=True)
        server.run("stdio")
    finally:
        stores.close()
    return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("mcp", help="Model Context Protocol server on stdio: search, add documents, "
                                          "conversation memory (for agents)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: setting db, logichunk.db)")
    p.add_argument("--project", help="default project (default: default)")
    p.add_argument("--embedder",
                   help=f"embedder spec: {EMBEDDER_SPECS}")
    p.add_argument("--config", help="TOML settings file (also $LOGICHUNK_CONFIG)")
    p.add_argument("--allow", action="append", metavar="DIR",
                   help="a folder add_file may read (repeatable); without one, add_file is off")
    p.add_argument("--calibration", metavar="FILE", help="conversation memory thresholds from `logichunk memory "
                                                         "calibrate` (default: setting memory_calibration, else "
                                                         "the shipped one for the embedder)")
    p.set_defaults(func=cmd_mcp)

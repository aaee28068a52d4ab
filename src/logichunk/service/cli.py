"""``logichunk serve``: the HTTP API and the web page on uvicorn.

The API key comes from ``$LOGICHUNK_SERVICE_KEY`` (at least 16 characters; ``$LOGICHUNK_API_KEY``,
the model endpoints' key, is accepted with a note when it is unset), or is generated and printed. The socket is bound before uvicorn starts, so ``--port 0`` picks a free port and the
printed URL is always the real one; a port in use is one line on stderr, not a traceback.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
from typing import Any

from ..cli_args import int_at_least
from ..config import Settings
from ..errors import LogichunkError
from ..models.registry import EMBEDDER_SPECS


def _listen(host: str, port: int) -> socket.socket:
    if not 0 <= port <= 65535:
        raise LogichunkError(f"--port {port}: a port is 0-65535 (0 picks a free one)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        why = "the port is in use" if e.errno == errno.EADDRINUSE else (e.strerror or str(e))
        raise LogichunkError(f"cannot listen on {host}:{port}: {why}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from .app import create_app
    except ImportError as e:
        raise LogichunkError(f"logichunk serve needs the service extra ({e.name} is missing): "
                             "pip install 'logichunk[service]'") from None
    from ..store.embedder_choice import embedder_named, store_embedder
    from .auth import key_from_env, new_key

    settings = Settings.load(args.config, db=args.db, project=args.project, embedder=args.embedder,
                             debounce_delay_ms=args.debounce_ms, service_max_body_bytes=args.max_body_bytes,
                             memory_calibration=args.calibration)
    env_key, env_name, note = key_from_env(os.environ)
    key = env_key or new_key()
    if note:
        print(note, file=sys.stderr)
    sock = _listen(args.host, args.port)
    try:
        took = store_embedder(settings, named=embedder_named(args.embedder, args.config))
        if took is not None and took.note:  # no embedder named: the project's own (searches' notes say it too)
            print(f"logichunk serve: note: {took.note}", file=sys.stderr)
        app = create_app(settings, api_key=key, mcp_allow=args.mcp_allow or (), own_embedder=took)
    except BaseException:
        sock.close()
        raise
    host, port = sock.getsockname()[:2]
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else (f"[{host}]" if ":" in host else host)
    url = f"http://{shown}:{port}/"
    svc = app.state.service
    out = sys.stdout
    from ..store.base import redact_url

    out.write(f"logichunk serve: {url}  (database {redact_url(settings.db)}, project {settings.project}, "
              f"embedder {svc.registry.embedder_note})\n")
    if env_key:
        out.write(f"API key: from ${env_name}\n")
        out.write(f"open:    {url}  (enter the key on the page)\n")
    else:
        out.write(f"API key: {key}\n")
        out.write(f"open:    {url}#key={key}\n")
    out.write(f"docs:    {url}docs   health: {url}api/health\n")
    if getattr(app.state, "mcp", None) is not None:
        out.write(f"mcp:     {url}mcp  (Model Context Protocol, streamable HTTP, the same key)\n")
        out.write(f"memory:  {app.state.mcp.memory_calibration}\n")
    if host not in ("127.0.0.1", "::1", "localhost"):
        out.write("note: listening beyond this machine; the API key is the only protection and HTTP is plain text "
                  "(put TLS in front)\n")
    out.flush()
    config = uvicorn.Config(app, log_level=args.log_level, access_log=args.access_log, lifespan="on",
                            timeout_graceful_shutdown=30)
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help="HTTP API and web page (prints the URL and the API key)")
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default: setting db, logichunk.db)")
    p.add_argument("--project", help="default project (default: default)")
    p.add_argument("--embedder",
                   help=f"embedder spec: {EMBEDDER_SPECS}")
    p.add_argument("--config", help="TOML settings file (also $LOGICHUNK_CONFIG)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    # (checked as the flags the user typed: the settings' own checks name settings, debounce_delay_ms...)
    p.add_argument("--debounce-ms", type=int_at_least(0),
                   help="re-chunk this long after the last edit of a block (default 3000)")
    p.add_argument("--max-body-bytes", type=int_at_least(1), help="largest request body accepted (default 16 MiB)")
    p.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--access-log", action="store_true", help="log every request")
    p.add_argument("--mcp-allow", action="append", metavar="DIR",
                   help="a folder the MCP tool add_file (at /mcp) may read; repeatable (default: none, add_file off)")
    p.add_argument("--calibration", metavar="FILE", help="the memory tools' (at /mcp) thresholds from `logichunk "
                                                         "memory calibrate` (default: setting memory_calibration, "
                                                         "else the shipped one for the embedder)")
    p.set_defaults(func=cmd_serve)

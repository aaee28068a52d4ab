"""The ``ingest`` verb's Ray flags (``--ray``, ``--workers``, ``--ray-address``, ``--batch-size``).

They live here, next to :func:`~logichunk.scale.ingest_corpus` whose arguments they mirror, and
``logichunk.store.cli`` adds them to its ``ingest`` verb: one verb, two engines, one report.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError


def _positive(v: str) -> int:
    from ..cli_args import int_at_least

    return int_at_least(1)(v)


def add_ingest_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Ray (extra [ray]): read, chunk and embed on Ray workers, write here")
    g.add_argument("--ray", action="store_true",
                   help="run the reading, chunking and embedding on Ray (a local Ray unless --ray-address)")
    g.add_argument("--workers", type=_positive, metavar="N", help="Ray workers (default: every CPU Ray has)")
    g.add_argument("--ray-address", metavar="ADDR",
                   help="a running Ray cluster: auto, or ray://host:10001 (implies --ray)")
    g.add_argument("--batch-size", type=_positive, metavar="N",
                   help="files per worker call and per write transaction (default 16)")


def ray_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """``ingest_corpus`` keyword arguments from the flags, or None for the serial ingest. Checks that
    Ray is importable before anything is opened or created."""
    use = bool(args.ray or args.ray_address)
    if not use:
        for flag, value in (("--workers", args.workers), ("--batch-size", args.batch_size)):
            if value is not None:
                raise InputError(f"{flag} is a Ray option: add --ray")
        return None
    from .session import import_ray

    import_ray()
    kw: dict[str, Any] = {"workers": args.workers, "address": args.ray_address}
    if args.batch_size is not None:
        kw["batch_size"] = args.batch_size
    return kw

"""Ray for the length of one job: imported with an install hint, started locally or joined, shut down
after, and its errors turned into one line.

Why a module of its own: ``ray`` is an optional extra, slow to import (~0.5 s) and loud; nothing in
logichunk should import it before a user asks for it, and a caller who already runs Ray (a notebook,
the tests, a cluster job) must keep theirs: we shut down only a Ray we started.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Iterator
from types import ModuleType

from ..errors import LogichunkError

__all__ = ["RayUnavailable", "import_ray", "ray_session", "worker_error"]

CONNECT_TIMEOUT_S = 5.0
INSTALL_HINT = 'Ray is not installed; install logichunk[ray] (pip install "logichunk[ray]")'


class RayUnavailable(LogichunkError):
    """``ray`` is not installed, or the Ray cluster named cannot be reached."""


def import_ray() -> ModuleType:
    """``ray``, or :class:`RayUnavailable` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(INSTALL_HINT) from None
    return ray


@contextlib.contextmanager
def ray_session(address: str | None = None, workers: int | None = None) -> Iterator[ModuleType]:
    """Ray, initialised for the ``with`` block. A Ray already initialised in this process is used as
    it is (and left running). Otherwise ``address`` None (or ``"local"``) starts a private local
    instance with ``workers`` CPUs (default: all of this machine's), and ``"auto"`` or
    ``"ray://host:10001"`` joins an existing cluster; on the way out a local one is stopped, a
    cluster only left. Ray's start-up notes stay quiet (its errors still reach us)."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    local = address in (None, "", "local")
    if not local:
        _check_reachable(str(address))
    try:
        if local:
            ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, **quiet)
        else:
            ray.init(address=address, **quiet)
    except Exception as e:  # ConnectionError, ValueError, RuntimeError...: Ray's own wording, on one line
        raise RayUnavailable(f"cannot start or reach Ray at {address or 'local'}: {first_line(e)}") from e
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_reachable(address: str) -> None:
    """A ``host:port`` or ``ray://host:port`` that nothing answers on is said in seconds: Ray itself
    waits 30 s (client) or several minutes (GCS) before it gives up."""
    hostport = address.removeprefix("ray://").rsplit("/", 1)[0]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" and the like: Ray resolves and reports them itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise RayUnavailable(f"cannot reach Ray at {address}: {e.strerror or type(e).__name__}") from None


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def worker_error(e: BaseException) -> LogichunkError:
    """What a failure inside Ray (a task raising, an actor dying) tells the user: the logichunk error
    it carries when there is one, else the first line of the innermost cause."""
    seen: list[BaseException] = []
    cur: BaseException | None = e
    while isinstance(cur, BaseException) and cur not in seen:
        seen.append(cur)
        if isinstance(cur, LogichunkError) and type(cur).__module__.startswith("logichunk"):
            return cur
        cur = getattr(cur, "cause", None) or cur.__cause__ or cur.__context__  # RayTaskError.cause: the original
    return LogichunkError(f"a Ray worker failed: {first_line(seen[-1])}")

"""The one loop numpy cannot vectorise — the boundary DP's recurrence — in C, compiled once per
machine with the system's C compiler and loaded with :mod:`ctypes`.

Why: the global boundary decision (:func:`logichunk.boundaries.optimal_cuts`) is sequential: the
best cost of a chunk ending at atom ``b`` needs the best costs before it. In Python that is ~0.1 µs
per (start, end) pair, seconds on a megabyte of short sentences; in C it is nanoseconds. The kernel
is 20 lines with no dependencies; it is built into ``native/`` of the cache folder (``$LOGICHUNK_CACHE``,
else ``$XDG_CACHE_HOME/logichunk``, else ``~/.cache/logichunk``) under a name keyed by its source and the platform, so a later process only
loads it. Without a compiler, when the build fails (remembered by a ``.failed`` file, not retried),
or with ``LOGICHUNK_NATIVE=0``, the caller runs the same recurrence in Python: the same answer, ties
included (property-tested), only slower. :func:`status` says which runs and why.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

_SRC = r"""
#include <stdint.h>
/* back[b]: start of the best last chunk ending at b (ties: the latest start); see boundaries.py */
void lc_dp(int64_t n, int64_t w, const double *cost, const int64_t *lo, const double *rw,
           const uint8_t *restart, double *fm, int64_t *back) {
    for (int64_t b = 1; b <= n; b++) {
        const double *row = cost + b * w;
        double best = 1.0 / 0.0;
        int64_t arg = b - 1;
        for (int64_t a = lo[b]; a < b; a++) {
            double v = fm[a] + row[b - a - 1];
            if (v <= best) { best = v; arg = a; }
        }
        back[b] = arg;
        if (b < n) fm[b] = restart[b] ? 0.0 : best - rw[b];  /* a forced cut: a fresh start */
    }
}
"""

_lib: ctypes.CDLL | None = None
_why: str = "not loaded yet"


def _cache_dir() -> Path:
    env = os.environ.get("LOGICHUNK_CACHE")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "logichunk"
    return base / "native"


def _key() -> str:
    h = hashlib.sha256()
    h.update(_SRC.encode())
    h.update(f"{platform.machine()}|{platform.system()}|{sys.implementation.cache_tag}".encode())
    return h.hexdigest()[:16]


def _load() -> ctypes.CDLL | None:
    global _lib, _why
    if _lib is not None or _why != "not loaded yet":
        return _lib
    if os.environ.get("LOGICHUNK_NATIVE", "1") == "0":
        _why = "off (LOGICHUNK_NATIVE=0)"
        return None
    folder = _cache_dir()
    suffix = ".dll" if sys.platform == "win32" else ".so"
    so = folder / f"lc_dp_{_key()}{suffix}"
    failed = so.with_suffix(".failed")
    try:
        if not so.exists():
            if failed.exists():
                _why = f"the earlier build failed ({failed})"
                return None
            cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
            if not cc:
                _why = "no C compiler (cc, gcc or clang) on PATH"
                return None
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=folder) as tmp:
                src = Path(tmp) / "lc_dp.c"
                src.write_text(_SRC)
                out = Path(tmp) / so.name
                r = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out), str(src)],
                                   capture_output=True, text=True, timeout=120)
                if r.returncode != 0 or not out.exists():
                    failed.write_text(r.stderr[-2000:] or "build failed")
                    _why = f"the build failed ({failed})"
                    return None
                os.replace(out, so)  # atomic: another process sees the whole file or none
        lib = ctypes.CDLL(str(so))
        fn = lib.lc_dp
        fn.restype = None
        fn.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 6
        _lib, _why = lib, f"compiled ({so})"
    except (OSError, subprocess.SubprocessError) as e:
        _why = f"unavailable ({type(e).__name__}: {e})"
        _lib = None
    return _lib


def status() -> str:
    """How the boundary DP runs in this process: ``compiled (path)`` or why it runs in Python."""
    _load()
    return _why


def dp_back(cost: np.ndarray, lo: np.ndarray, rw: np.ndarray, restart: np.ndarray) -> np.ndarray | None:
    """The DP's back pointers from the compiled kernel, or None when it is not available."""
    lib = _load()
    if lib is None:
        return None
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    lo = np.ascontiguousarray(lo, dtype=np.int64)
    rw = np.ascontiguousarray(rw, dtype=np.float64)
    rs = np.ascontiguousarray(restart, dtype=np.uint8)
    n = cost.shape[0] - 1
    fm = np.zeros(n + 1)
    back = np.zeros(n + 1, dtype=np.int64)
    lib.lc_dp(n, cost.shape[1], cost.ctypes.data, lo.ctypes.data, rw.ctypes.data, rs.ctypes.data,
              fm.ctypes.data, back.ctypes.data)
    return back

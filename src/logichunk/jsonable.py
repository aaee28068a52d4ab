"""Plain JSON values from what the library hands out (numpy scalars and arrays, tuples, mappings,
non-finite floats): one conversion for the HTTP service and the MCP server alike."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def jsonable(v: Any) -> Any:
    """``v`` as JSON-ready values: numpy to Python, tuples and sets to lists, NaN/inf to None, other
    objects to their ``str``."""
    if isinstance(v, dict) or hasattr(v, "items"):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple | set | frozenset):
        return [jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return jsonable(v.tolist())
    if isinstance(v, np.generic):
        return jsonable(v.item())
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if v is None or isinstance(v, str | int | float | bool):
        return v
    return str(v)

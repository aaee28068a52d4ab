"""What every route reads from ``app.state.service``: one object below the app factory and the route
modules, so the routes need not import the factory that mounts them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..config import Settings
from .jobs import Registry
from .metrics import Metrics


@dataclass
class Service:
    """Everything a route needs, on ``app.state.service``."""

    settings: Settings
    api_key: str
    registry: Registry
    metrics: Metrics
    playground_embedder: Any
    started: float = field(default_factory=time.time)

    def close(self) -> None:
        self.registry.close(flush=True)

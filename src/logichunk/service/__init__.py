"""The HTTP service: a JSON API and a web page over the store, the chunkers and retrieval.

    logichunk serve --db project.db --port 8000     # prints the URL and the API key

or from Python (any ASGI server)::

    from logichunk.service import create_app
    app = create_app(Settings.load(db="project.db"), api_key="...")

FastAPI and uvicorn come with the ``[service]`` extra; importing this package does not need them,
only :func:`create_app` does (so ``logichunk --help`` works on a bare install).
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(name)

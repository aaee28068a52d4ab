"""One settings object with the defaults of the seed design, overridable in layers.

Precedence, lowest first: the defaults below, a TOML file (top-level keys or a ``[logichunk]``
table), environment variables ``LOGICHUNK_<NAME>`` (``LOGICHUNK_MAX_PARENT_SIZE=2000``), and explicit
keyword overrides (what CLI flags pass). Unknown keys and values of the wrong type are errors, so a
typo never silently keeps a default::

    s = Settings.load("logichunk.toml", top_k=10)
    s.max_parent_size, s.debounce_delay_ms
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .errors import InputError

ENV_PREFIX = "LOGICHUNK_"
RETRIEVE_MODES = ("basic", "parent", "hierarchical", "hybrid", "graph-basic", "graph-ssg", "graph-tri", "graph-hybrid")


@dataclass(frozen=True)
class Settings:
    # --- storage
    db: str = "logichunk.db"
    project: str = "default"
    # --- embedding
    embedder: str = "auto"
    embedding_batch_size: int = 32
    # --- parents (user blocks)
    max_parent_size: int = 1500
    min_parent_size: int = 150
    # --- children (the global decision inside each parent)
    child_min_size: int = 100
    child_max_size: int = 400
    child_target_size: int = 250
    similarity_threshold: float = 0.3  # a child whose cut falls under this cosine is labelled a semantic cliff
    cliff_drop: float = 0.15  # ... or where the cosine dips this deep below its neighbours
    # what a store's parents and children are cut by: "embedder", the embedder's sentence vectors (its cliffs);
    # "lexical", the hash embedder's vectors of the texts' own words, whatever embedder the chunks are stored
    # with: with E5, ingest 1.7-3.6x faster (each sentence is no longer embedded once to cut and again inside its
    # child), retrieval on the dev and held halves -0.026 to +0.029 by set and mode (bench/QUALITY.md)
    cut_vectors: str = "embedder"
    # --- incremental re-chunking
    debounce_delay_ms: int = 3000
    # --- retrieval
    retrieve_mode: str = "parent"
    top_k: int = 5
    # off by default: measured on CMRC, DRCD, Chroma and HotpotQA, multiplying a cosine by a size
    # factor lost recall on three of four sets with the hash embedder and collapsed parent search
    # with E5 (doc recall@5 0.86 -> 0.40 on HotpotQA), whose cosines all sit in 0.7-0.95 (bench/QUALITY.md)
    size_normalization: bool = False
    size_normalization_power: float = 0.5  # score = raw * (avg_size / size) ** power; 0.5 is the seed's sqrt
    # a 30-char heading parent must not beat real matches on size alone: cap the boost of small parents
    size_normalization_max_boost: float = 1.5
    context_window_size: int = 1000
    rrf_k: int = 60
    vector_index: str = "auto"  # auto | exact | hnsw | pgvector (auto: pgvector on PostgreSQL, else exact/HNSW)
    hnsw_threshold: int = 50_000
    hnsw_m: int = 16
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = 64
    rerank_candidates: int = 30
    reranker: str = "none"  # none | yesno[:PATH] | likelihood[:PATH] | cross:PATH (see logichunk.models.rerank)
    # --- semantic similarity graph (logichunk.index.graph, retrieve modes graph-*)
    graph_similarity_threshold: float = 0.3  # same-document "similar" edges need at least this cosine
    graph_intra_k: int = 3  # similar chunks linked inside a document (besides the previous/next one)
    graph_cross_k: int = 3  # similar chunks linked in other documents
    graph_cross_threshold: float = 0.0  # cross-document edges need at least this cosine
    graph_neighbours: str = "auto"  # auto | exact | hnsw (auto: HNSW from hnsw_threshold chunks)
    graph_max_hops: int = 5
    graph_early_stop: bool = True  # SSG stops when the best next hop is no more similar than the last one
    graph_min_sentences: int = 10  # a walk stops once it has collected this many sentences
    graph_max_results: int = 10  # sentences returned (ranked against the query)
    # --- conversation memory: a `logichunk memory calibrate` file ("" = the shipped one for the embedder)
    memory_calibration: str = ""
    # --- logic-chain chunking defaults
    chunk_sizes: tuple[int, ...] = (1000, 500, 200)
    unit: str = "chars"
    tokenizer: str = ""  # "" = the offline token estimate; else exact tokens (logichunk.text.tokens)
    # --- HTTP service (logichunk serve): request limits, enforced before any work is done
    service_max_body_bytes: int = 16 * 1024 * 1024  # whole request body (JSON or upload), 413 above
    service_max_chunk_chars: int = 1_000_000  # text chunked/plotted in one request (POST /api/chunk, curves)
    service_max_query_chars: int = 1000
    service_max_top_k: int = 100

    def __post_init__(self) -> None:
        pos = ("embedding_batch_size", "max_parent_size", "child_max_size", "child_target_size", "top_k",
               "context_window_size", "rrf_k", "hnsw_m", "hnsw_ef_construction", "hnsw_ef_search",
               "rerank_candidates", "service_max_body_bytes", "service_max_chunk_chars", "service_max_query_chars",
               "service_max_top_k", "graph_max_results")
        for name in pos:
            if getattr(self, name) < 1:
                raise InputError(f"setting {name} must be at least 1, got {getattr(self, name)}")
        for name in ("min_parent_size", "child_min_size", "debounce_delay_ms", "hnsw_threshold", "graph_intra_k",
                     "graph_cross_k", "graph_max_hops", "graph_min_sentences"):
            if getattr(self, name) < 0:
                raise InputError(f"setting {name} must not be negative, got {getattr(self, name)}")
        if self.min_parent_size > self.max_parent_size:
            raise InputError(f"min_parent_size ({self.min_parent_size}) exceeds max_parent_size ({self.max_parent_size})")
        if not (self.child_min_size <= self.child_target_size <= self.child_max_size):
            raise InputError("child sizes must satisfy child_min_size <= child_target_size <= child_max_size, got "
                             f"{self.child_min_size}/{self.child_target_size}/{self.child_max_size}")
        if not -1.0 <= self.similarity_threshold <= 1.0:
            raise InputError(f"similarity_threshold must be in [-1, 1], got {self.similarity_threshold}")
        for name in ("graph_similarity_threshold", "graph_cross_threshold"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise InputError(f"{name} must be in [-1, 1], got {getattr(self, name)}")
        if self.graph_neighbours not in ("auto", "exact", "hnsw"):
            raise InputError(f"graph_neighbours must be auto, exact or hnsw, got {self.graph_neighbours!r}")
        if self.retrieve_mode not in RETRIEVE_MODES:
            raise InputError(f"retrieve_mode must be one of {', '.join(RETRIEVE_MODES)}, got {self.retrieve_mode!r}")
        if self.cut_vectors not in ("lexical", "embedder"):
            raise InputError(f"cut_vectors must be lexical or embedder, got {self.cut_vectors!r}")
        if self.vector_index not in ("auto", "exact", "hnsw", "pgvector"):
            raise InputError(f"vector_index must be auto, exact, hnsw or pgvector, got {self.vector_index!r}")
        if self.unit not in ("chars", "bytes", "tokens"):
            raise InputError(f"unit must be chars, bytes or tokens, got {self.unit!r}")
        if not self.chunk_sizes or any(s < 1 for s in self.chunk_sizes) or \
                list(self.chunk_sizes) != sorted(self.chunk_sizes, reverse=True):
            raise InputError(f"chunk_sizes must be positive and not grow with depth, got {self.chunk_sizes}")
        if self.child_max_size > self.max_parent_size:
            raise InputError(f"child_max_size ({self.child_max_size}) exceeds max_parent_size ({self.max_parent_size})")
        for name, lo in (("size_normalization_power", 0.0), ("size_normalization_max_boost", 1.0), ("cliff_drop", 0.0)):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= lo):
                raise InputError(f"setting {name} must be a finite number >= {lo:g}, got {v}")
        if self.top_k > self.service_max_top_k:
            raise InputError(f"setting top_k ({self.top_k}) exceeds service_max_top_k ({self.service_max_top_k})")

    # ------------------------------------------------------------------ layers
    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def with_overrides(self, values: Mapping[str, Any], *, source: str = "override") -> Settings:
        """A copy with ``values`` applied (``None`` values are skipped, so unset CLI flags keep the rest)."""
        known = {f.name: f for f in fields(self)}
        changes: dict[str, Any] = {}
        for key, raw in values.items():
            if raw is None:
                continue
            name = key.replace("-", "_")
            if name not in known:
                raise InputError(f"unknown setting {key!r} in {source}")
            changes[name] = _coerce(name, getattr(self, name), raw, source)
        if not changes:
            return self
        try:
            return replace(self, **changes)
        except InputError as e:  # a value checked in __post_init__: say where it came from, as _coerce does
            if source == "override":
                raise
            raise InputError(f"{e} (from {source})") from None

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str], base: Settings | None = None) -> Settings:
        p = Path(path)
        return (base or cls()).with_overrides(_toml_values(p), source=str(p))

    def with_env(self, env: Mapping[str, str] | None = None) -> Settings:
        """These settings under the ``LOGICHUNK_*`` variables set. An empty one (``LOGICHUNK_EMBEDDER=``, what a
        shell script leaves to clear a variable) sets nothing: the settings file's value, else the default, holds."""
        env = os.environ if env is None else env
        vals = {}
        for name in self.names():
            key = ENV_PREFIX + name.upper()
            if env.get(key, "").strip():
                vals[name] = env[key]
        return self.with_overrides(vals, source="environment")

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] | None = None,
             **overrides: Any) -> Settings:
        """Defaults < TOML file (``path``, or ``$LOGICHUNK_CONFIG``) < env vars < ``overrides``."""
        env = os.environ if env is None else env
        path = path or env.get(ENV_PREFIX + "CONFIG") or None
        s = cls.from_toml(path) if path else cls()
        return s.with_env(env).with_overrides(overrides)


def _toml_values(p: Path) -> dict[str, Any]:
    """A settings file's keys and values: its top-level keys and a ``[logichunk]`` table's together."""
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"settings file not found: {p}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"settings file {p} is not valid TOML: {e}") from None
    table = data.pop("logichunk", None)
    if isinstance(table, dict):  # top-level keys and a [logichunk] table together: both count
        both = sorted(set(data) & set(table))
        if both:
            raise InputError(f"settings file {p} sets {', '.join(both)} both at the top and in [logichunk]")
        data = {**data, **table}
    elif table is not None:
        data["logichunk"] = table  # not a table: an unknown setting, reported as such
    return data


def setting_named(name: str, path: str | os.PathLike[str] | None = None, *,
                  env: Mapping[str, str] | None = None) -> bool:
    """Whether the user named setting ``name``: a ``LOGICHUNK_<NAME>`` variable, or the settings file
    (``path``, else ``$LOGICHUNK_CONFIG``) sets it, even to its default. Why: a default the program may
    replace by a better guess (a store's own embedder) must never override what the user wrote."""
    env = os.environ if env is None else env
    if ENV_PREFIX + name.upper() in env:
        return True
    path = path or env.get(ENV_PREFIX + "CONFIG") or None
    return bool(path) and name in {str(k).replace("-", "_") for k in _toml_values(Path(path))}


def _coerce(name: str, default: Any, raw: Any, source: str) -> Any:
    def bad() -> InputError:
        return InputError(f"setting {name} from {source}: expected {type(default).__name__}, got {raw!r}")

    if isinstance(default, bool):
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            return raw.strip().lower() in ("1", "true", "yes", "on")
        raise bad()
    if isinstance(default, int):
        if isinstance(raw, bool):
            raise bad()
        if isinstance(raw, int):
            return raw
        if isinstance(raw, str):
            try:
                return int(raw.strip().replace("_", ""))
            except ValueError:
                raise bad() from None
        raise bad()
    if isinstance(default, float):
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            return float(raw)
        if isinstance(raw, str):
            try:
                return float(raw)
            except ValueError:
                raise bad() from None
        raise bad()
    if isinstance(default, tuple):
        items = raw.split(",") if isinstance(raw, str) else raw
        if not isinstance(items, list | tuple):
            raise bad()
        try:
            return tuple(int(str(x).strip()) for x in items)
        except ValueError:
            raise bad() from None
    if isinstance(raw, str):
        return raw
    raise bad()

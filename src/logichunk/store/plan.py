"""What a chapter's chunks are, computed away from the database.

A plan is a pure function of the chapter's block texts, its rank in the document (the first part of
every dotted id), the embedder and the parent-child knobs: parents laid out over the blocks,
children cut inside each parent, and their vectors. Why apart from :class:`~logichunk.store.Store`:
the store plans a chapter between a snapshot and a short write transaction, and a Ray worker
(:mod:`logichunk.scale`) plans whole documents that no database holds yet; both must store the
same thing, so there is one planner. Blocks are named by their index in the chapter; the store maps
indexes to block ids when it writes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..chunkers.parent_child import (
    ParentSpec,
    PCParams,
    Splits,
    VecFn,
    block_of,
    children_of,
    layout_parents,
)
from ..errors import LogichunkError
from ..models.embedding import unit
from ..text.sentences import SentenceSpans
from ..types import Bubble

__all__ = ["ChapterPlan", "OldParents", "ParentKey", "PlannedParent", "embed_batches", "parent_key", "plan_chapter",
           "sha256"]

#: A parent as laid out: ``(covered block indexes, the first its owner; start; end; content hash; method; segments)``
#: (:func:`parent_key`). Why all of it, not the text and where it starts alone: the same text over other block
#: parts (a boundary moved by two edits) has other segments, which its children never cross, so its stored
#: children are not the ones a fresh plan cuts.
ParentKey = tuple[tuple[int, ...], int, int, str, str, tuple[tuple[int, int], ...]]
#: ``parent key -> (pk, order, dotted id)`` of a chapter's stored parents.
OldParents = Mapping[ParentKey, tuple[int, int, str]]


def parent_key(blocks: Sequence[int], start: int, end: int, content_hash: str, method: str,
               segments: Sequence[Sequence[int]]) -> ParentKey:
    """What tells a stored parent (its row, its meta read back from JSON) is the very parent a plan lays out
    (a :class:`ParentSpec`): :data:`ParentKey`, one shape for both."""
    return (tuple(int(b) for b in blocks), int(start), int(end), content_hash, method,
            tuple((int(s), int(e)) for s, e in segments))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def embed_batches(embedder: Any, texts: Sequence[str], batch_size: int, *, kind: str = "passage",
                  error: type[LogichunkError] = LogichunkError) -> np.ndarray:
    """``texts`` through ``embedder`` in batches of ``batch_size``, in their order, each answer's
    shape checked. One routine for the store and the Ray workers: a backend that pads per batch
    gives the same vectors only for the same batches."""
    dim = int(embedder.dim)
    out = np.empty((len(texts), dim), np.float32)
    for lo in range(0, len(texts), batch_size):
        part = texts[lo : lo + batch_size]
        vecs = np.asarray(embedder.embed(list(part), kind=kind), dtype=np.float32)
        if vecs.shape != (len(part), dim):
            raise error(f"embedder {embedder.model_id} returned shape {vecs.shape}, expected ({len(part)}, {dim})")
        out[lo : lo + len(part)] = vecs
    return out


@dataclass(frozen=True)
class PlannedParent:
    """A parent to write (``spec``: its blocks, as block indexes, and its offsets, relative to the
    owner block — the first of them) with its place and its children: each child is ``(start, end,
    text, method, vector)``, its offsets relative to the owner block too."""

    order: int
    dotted: str
    spec: ParentSpec
    vec: np.ndarray
    children: tuple[tuple[int, int, str, str, np.ndarray], ...]

    @property
    def owner(self) -> int:
        return self.spec.blocks[0]


@dataclass(frozen=True)
class ChapterPlan:
    """Everything a re-chunk of one chapter writes.

    ``block_hashes`` are the contents the plan was made from (a store applies it only to a chapter
    that still holds them, at ``rank``); ``kept`` are stored parents that stay, as ``(pk, order,
    dotted, old dotted, old order)``; ``bubbles`` are ``(block index, bubble)``. ``model_id`` names
    the embedder of the vectors; ``vectors`` (content hash -> vector) are the passage embeddings the
    planner used, for the store's embedding cache, when the plan was made away from the store."""

    rank: int
    block_hashes: tuple[str, ...]
    kept: tuple[tuple[int, int, str, str, int], ...]
    new: tuple[PlannedParent, ...]
    bubbles: tuple[tuple[int, Bubble], ...]
    model_id: str = ""
    vectors: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def children(self) -> int:
        return sum(len(p.children) for p in self.new)


def cut_mode(mode: str, embedder: Any) -> str:
    """What ``Settings.cut_vectors = mode`` cuts by with this embedder: ``"lexical"`` only when it asks for
    the texts' own words and the embedder is not a hash embedder already (whose vectors they are)."""
    from ..models.embed_hash import HashEmbedder

    if mode == "embedder" or isinstance(embedder, HashEmbedder) or isinstance(getattr(embedder, "inner", None),
                                                                             HashEmbedder):
        return "embedder"
    return "lexical"


def cut_vectors(mode: str, embedder: Any, embed: VecFn, batch_size: int) -> VecFn:
    """What a store's plan cuts its parents and children by (``Settings.cut_vectors``): ``embed``, the
    store's own (its embedder's vectors, cached), when ``mode`` is ``"embedder"`` or the embedder is a
    hash embedder already; else, for ``"lexical"``, the vectors of a :class:`~logichunk.models.HashEmbedder`
    (the texts' own words, computed, never stored). Why the choice: with E5 every sentence is embedded once
    to decide the cuts and again inside its child; the lexical cuts ingest 1.7-3.6x faster, and retrieve
    better on some sets and modes and worse on others (bench/QUALITY.md, "Twenty-third session")."""
    from ..models.embed_hash import HashEmbedder

    if cut_mode(mode, embedder) == "embedder":
        return embed
    lexical = HashEmbedder()
    return lambda texts: embed_batches(lexical, list(texts), batch_size)


def plan_chapter(contents: Sequence[str], rank: int, embed: VecFn, params: PCParams, *,
                 old: OldParents | None = None, force: bool = False,
                 memo: tuple[MutableMapping[str, SentenceSpans], MutableMapping[str, Any]] | None = None,
                 cut: VecFn | None = None) -> ChapterPlan:
    """Plan the chapter whose blocks hold ``contents``. A parent found in ``old`` (the same blocks, offsets,
    text, method and segments: :func:`parent_key`) is kept as stored unless ``force``; the others are cut
    into children (by ``cut``'s vectors, :func:`cut_vectors`; None: ``embed``'s) and embedded through
    ``embed`` (texts -> L2-normalised float32 rows). ``params`` with a tokenizer
    size in its exact tokens (:meth:`PCParams.resolved`; resolve ``"embedder"`` before, with the
    embedder). ``memo``: texts' sentences and over-long blocks' pieces kept from earlier plans with this
    ``cut`` and ``params`` (a store's two :func:`~logichunk.chunkers.parent_child.text_memo`: the same plan,
    sooner — an edit splits and cuts again only the blocks it changed)."""
    params = params.resolved()
    old = dict(old or {})
    bubbles: list[tuple[int, Bubble]] = []
    layout_bubbles: list[Bubble] = []
    splits = Splits(memo[0] if memo is not None else None)
    cut = embed if cut is None else cut
    parents = layout_parents(list(contents), cut, params, layout_bubbles, splits, memo[1] if memo is not None else None)
    bubbles.extend((block_of(b), b) for b in layout_bubbles)
    kept: list[tuple[int, int, str, str, int]] = []
    todo: list[tuple[int, ParentSpec]] = []
    for i, par in enumerate(parents, 1):
        key = parent_key(par.blocks, par.start, par.end, sha256(par.text), par.method, par.segments)
        hit = old.pop(key, None)
        if hit is not None and not force:
            kept.append((hit[0], i, f"{rank}.{i}", hit[2], hit[1]))
        else:
            todo.append((i, par))
    # the parents to cut, in one pass (their layouts read together, their sentences embedded together)
    found: list[list[Bubble]] = [[] for _ in todo]
    children = children_of([par.text for _, par in todo], cut, params, [par.segments for _, par in todo], found,
                           [f"parent {rank}.{i}" for i, _ in todo], splits)
    texts = [[par.text[c.start : c.end] for c in kids] for (_, par), kids in zip(todo, children, strict=True)]
    flat = [t for ts in texts for t in ts]
    vecs = embed(flat) if flat else np.zeros((0, 0), np.float32)
    new: list[PlannedParent] = []
    o = 0
    for (i, par), kids, cb, ts in zip(todo, children, found, texts, strict=True):
        bubbles.extend((par.blocks[0], b) for b in cb)
        mine = vecs[o : o + len(ts)]
        o += len(ts)
        pv = unit(mine.mean(axis=0).astype(np.float32))
        new.append(PlannedParent(i, f"{rank}.{i}", par, pv,
                                 tuple((par.start + c.start, par.start + c.end, t, c.method, v)
                                       for c, t, v in zip(kids, ts, mine, strict=True))))
    return ChapterPlan(rank, tuple(sha256(c) for c in contents), tuple(kept), tuple(new), tuple(bubbles))

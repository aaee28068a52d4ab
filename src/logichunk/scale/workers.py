"""What runs inside the Ray workers: reading and checking files, and planning whole documents.

Both are Ray Data ``map_batches`` callables over batches of ``{"i", "path", ...}`` rows. They never
touch the store: a worker returns, per file, either an error line or a pickled :class:`DocumentPlan`
(the document as :class:`~logichunk.store.ingest.FileDocument` plus one
:class:`~logichunk.store.plan.ChapterPlan` per chapter), which the driver writes. The planning is the
store's own :func:`~logichunk.store.plan.plan_chapter`, so a plan made here is what the serial path
would have computed.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..chunkers.parent_child import PCParams
from ..errors import InputError, LogichunkError
from ..models.embedding import Embedder, LRUMapping
from ..store.ingest import FileDocument, read_text_file
from ..store.plan import ChapterPlan, plan_chapter, sha256

__all__ = ["DocumentPlan", "Planner", "RecordingEmbed", "read_and_check"]


@dataclass(frozen=True)
class DocumentPlan:
    """A file ready to be written: the document, and its chapters' plans (empty when not chunking)."""

    document: FileDocument
    chapters: tuple[ChapterPlan, ...] = ()


def _rows(batch: Mapping[str, Any]) -> list[tuple[int, str]]:
    return list(zip((int(i) for i in batch["i"]), (str(p) for p in batch["path"]), strict=True))


def read_and_check(batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """First pass: decode each file as the serial ingest does and return its text's hash and length,
    or the one-line error that refuses it (binary, invalid UTF-8, unreadable)."""
    out: dict[str, list[Any]] = {"i": [], "hash": [], "error": []}
    for i, path in _rows(batch):
        try:
            text = read_text_file(Path(path))
            h, err = sha256(text), ""
        except LogichunkError as e:
            h, err = "", str(e)
        out["i"].append(i)
        out["hash"].append(h)
        out["error"].append(err)
    return {"i": np.asarray(out["i"], np.int64), "hash": np.asarray(out["hash"], object),
            "error": np.asarray(out["error"], object)}


class RecordingEmbed:
    """The planner's ``vec_fn`` away from a store: texts embedded once per worker (by content hash,
    in batches of ``batch_size``, as :meth:`Store.embed` sends them), and every vector handed out
    kept in ``used`` so the store can put the chapter's vectors in its embedding cache."""

    def __init__(self, embedder: Embedder, batch_size: int, memo: LRUMapping) -> None:
        self.embedder, self.batch_size, self.memo = embedder, batch_size, memo
        self.dim = int(embedder.dim)
        self.used: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        hashes = [sha256(t) for t in texts]
        todo: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h in self.used or h in todo:
                continue
            v = self.memo.get(h)
            if v is None:
                todo[h] = t
            else:
                self.used[h] = v
        keys = list(todo)
        for lo in range(0, len(keys), self.batch_size):
            part = keys[lo : lo + self.batch_size]
            vecs = np.asarray(self.embedder.embed([todo[h] for h in part], kind="passage"), dtype=np.float32)
            if vecs.shape != (len(part), self.dim):
                raise LogichunkError(f"embedder {self.embedder.model_id} returned shape {vecs.shape}, "
                                     f"expected ({len(part)}, {self.dim})")
            for h, v in zip(part, vecs, strict=True):
                self.used[h] = self.memo[h] = v
        if not hashes:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self.used[h] for h in hashes])


class Planner:
    """Second pass, one instance per Ray actor: the embedder is built once, in ``__init__``, from a
    spec (``resolve_embedder``) or an embedder object shipped by the driver; then every batch of
    files is read, split into chapters and blocks, chunked and embedded."""

    def __init__(self, embedder: str | Embedder | None, model_id: str, params: PCParams, batch_size: int) -> None:
        self.params, self.batch_size = params, batch_size
        self.embedder: Embedder | None = None
        if embedder is not None:  # None: store the blocks only (rechunk=False)
            if isinstance(embedder, str):
                from ..models.registry import resolve_embedder

                embedder = resolve_embedder(embedder, cached=False).model
            if str(embedder.model_id) != model_id:
                raise LogichunkError(f"the Ray workers resolved the embedder {embedder.model_id}, the store uses "
                                     f"{model_id}; install the same models on every node")
            self.embedder = embedder
        self.memo = LRUMapping(20_000)  # sentences repeated across a worker's documents (headers, boilerplate)
        self.model_id = model_id

    def plan(self, path: Path, text_hash: str) -> DocumentPlan:
        text = read_text_file(path)
        doc = FileDocument.of(path, text)
        if doc.text_hash != text_hash:
            raise InputError(f"{path} changed while it was being ingested; run the ingest again")
        if self.embedder is None:
            return DocumentPlan(doc)
        plans = []
        for rank, (_title, blocks) in enumerate(doc.chapters, 1):
            rec = RecordingEmbed(self.embedder, self.batch_size, self.memo)
            plan = plan_chapter(blocks, rank, rec, self.params)
            plans.append(replace(plan, model_id=self.model_id, vectors=rec.used))
        return DocumentPlan(doc, tuple(plans))

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        out: dict[str, list[Any]] = {"i": [], "plan": [], "error": [], "input_error": []}
        for (i, path), h in zip(_rows(batch), batch["hash"], strict=True):
            blob, err, bad_input = b"", "", False
            try:
                blob = pickle.dumps(self.plan(Path(path), str(h)), protocol=pickle.HIGHEST_PROTOCOL)
            except LogichunkError as e:
                err, bad_input = str(e), isinstance(e, InputError)
            except Exception as e:  # an embedder failing in any way: the driver stops at this file
                err = f"{type(e).__name__}: {e}"
            out["i"].append(i)
            out["plan"].append(blob)
            out["error"].append(err)
            out["input_error"].append(bad_input)
        return {"i": np.asarray(out["i"], np.int64), "plan": np.asarray(out["plan"], object),
                "error": np.asarray(out["error"], object), "input_error": np.asarray(out["input_error"], bool)}

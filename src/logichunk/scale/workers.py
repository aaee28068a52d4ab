"""What runs inside the Ray workers: reading and checking files, and planning whole documents.

One :class:`IngestWorker` per Ray worker process, kept there between tasks (:func:`check_files`,
:func:`plan_files`) and between ingests with the same arguments (:func:`worker_for`). It never touches
the store: per file it returns either an error line or a :class:`DocumentPlan` (the document as
:class:`~logichunk.store.ingest.FileDocument` plus one :class:`~logichunk.store.plan.ChapterPlan` per
chapter), which the driver writes. The planning is the store's own
:func:`~logichunk.store.plan.plan_chapter`, so a plan made here is what the serial path would have
computed.

Why tasks on Ray's own worker processes rather than actors: Ray reuses an idle worker process for the
next task of the same driver, so an ingest after the first (a notebook, a service syncing folders, the
tests) starts nothing, and an idle pool holds no CPU another driver needs; a pool of actors was started
for every ingest and cost 3-12 s each time on the 2-core machines this was measured on
(``bench/RESULTS.md``). What a process keeps between tasks is its one worker: the embedder, built once,
and the memo of sentences it embedded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..chunkers.parent_child import PCParams
from ..errors import InputError, LogichunkError
from ..models.embedding import Embedder, LRUMapping
from ..store.ingest import EMPTY, EmptyFile, FileDocument, read_ingest_text
from ..store.plan import ChapterPlan, cut_vectors, embed_batches, plan_chapter, sha256
from ..text.decode import speaking_as

__all__ = ["Checked", "DocumentPlan", "IngestWorker", "Planned", "RecordingEmbed", "check_files", "plan_files",
           "worker_for"]

#: ``(file index, text hash, error, how its bytes were read)``: a file read and decoded (error ``""``) or
#: refused.
Checked = tuple[int, str, str, str]


@dataclass(frozen=True)
class DocumentPlan:
    """A file ready to be written: the document, and its chapters' plans (empty when not chunking)."""

    document: FileDocument
    chapters: tuple[ChapterPlan, ...] = ()


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
        for h, v in zip(keys, embed_batches(self.embedder, [todo[h] for h in keys], self.batch_size), strict=True):
            self.used[h] = self.memo[h] = v
        if not hashes:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self.used[h] for h in hashes])


#: ``(file index, plan, error, the error is the file's)``: a document ready to write, or why not.
Planned = tuple[int, DocumentPlan | None, str, bool]


class IngestWorker:
    """The state of one Ray worker process: the settings, and an embedder built on first use (from a spec,
    with ``resolve_embedder``, or an embedder object sent by the driver) and kept for every later
    batch, with a memo of the sentences it has embedded."""

    def __init__(self, embedder: str | Embedder | None, model_id: str, params: PCParams, batch_size: int,
                 cut: str = "embedder", encoding: str | None = None, speaker: str | None = "python") -> None:
        self.source, self.model_id, self.params, self.batch_size = embedder, model_id, params, batch_size
        self.cut = cut  # what the chapters are cut by (Settings.cut_vectors), as the store cuts them
        self.encoding = encoding  # the codec the files are read with (the ingest's ``encoding``)
        self.speaker = speaker  # whose words a file's refusal is said in (the driver's :func:`speaker`: ``cli``...)
        self.embedder: Embedder | None = None
        self.memo = LRUMapping(20_000)  # sentences repeated across this worker's documents (headers, boilerplate)

    def check(self, rows: Sequence[tuple[int, str]]) -> list[Checked]:
        """First pass: decode each file as the serial ingest does; its text's hash, or the one-line
        error that refuses it (binary, invalid UTF-8, unreadable), and how its bytes were read (the report's)."""
        out: list[Checked] = []
        for i, path in rows:
            how: list[str] = []
            try:
                with speaking_as(self.speaker):
                    text = read_ingest_text(Path(path), self.encoding, how.append)
                out.append((i, sha256(text), "", "".join(how)))
            except EmptyFile as e:  # the driver skips it, or refuses it when it is the only file
                out.append((i, EMPTY, str(e), ""))
            except LogichunkError as e:
                out.append((i, "", str(e), ""))
        return out

    def plan(self, rows: Sequence[tuple[int, str, str]]) -> list[Planned]:
        """Second pass: each file planned (read again, split, chunked, embedded), or its error: the file's own
        (changed, deleted or made unreadable since the first pass: the driver refuses that file in its line and
        writes the others) or the worker's (the driver stops at that file)."""
        out: list[Planned] = []
        for i, path, text_hash in rows:
            try:
                out.append((i, self._plan(Path(path), text_hash), "", False))
            except LogichunkError as e:
                out.append((i, None, str(e), isinstance(e, InputError)))
            except Exception as e:  # an embedder failing in any way: the driver stops at this file
                out.append((i, None, f"{type(e).__name__}: {e}", False))
        return out

    def _embedder(self) -> Embedder:
        if self.embedder is None:
            emb = self.source
            if isinstance(emb, str):
                from ..models.registry import resolve_embedder

                emb = resolve_embedder(emb, cached=False).model
            if emb is None or str(emb.model_id) != self.model_id:
                raise LogichunkError(f"the Ray workers resolved the embedder {getattr(emb, 'model_id', None)}, the "
                                     f"store uses {self.model_id}; install the same models on every node")
            self.embedder = emb
        return self.embedder

    def _plan(self, path: Path, text_hash: str) -> DocumentPlan:
        with speaking_as(self.speaker):
            doc = FileDocument.checked(path, text_hash, self.encoding)
        if self.source is None:  # rechunk=False: the blocks only
            return DocumentPlan(doc)
        emb = self._embedder()
        plans = []
        params = self.params.resolved(emb if self.params.tokenizer == "embedder" else None)  # exact tokens
        for rank, (_title, blocks) in enumerate(doc.chapters, 1):
            rec = RecordingEmbed(emb, self.batch_size, self.memo)
            cut = cut_vectors(self.cut, emb, rec, self.batch_size)
            plans.append(replace(plan_chapter(blocks, rank, rec, params, cut=cut), model_id=self.model_id,
                                 vectors=rec.used))
        return DocumentPlan(doc, tuple(plans))


#: This process's worker and the key of the arguments it was made from: the one kept between tasks.
_KEPT: tuple[str, IngestWorker] | None = None


def worker_for(key: str, args: Sequence[Any]) -> IngestWorker:
    """The worker this process keeps for ``key`` (a digest of the arguments, made by the driver), or a new
    one made from ``args`` (an object ref, fetched only then: an embedder object sent pickled can be large),
    replacing one made for other arguments."""
    global _KEPT
    if _KEPT is None or _KEPT[0] != key:
        import ray

        _KEPT = None  # (the old embedder freed before the new one loads)
        _KEPT = (key, IngestWorker(*ray.get(args[0])))
    return _KEPT[1]


def check_files(key: str, args: Sequence[Any], rows: Sequence[tuple[int, str]]) -> list[Checked]:
    """The first pass over a batch, as a Ray task: :meth:`IngestWorker.check`."""
    return worker_for(key, args).check(rows)


def plan_files(key: str, args: Sequence[Any], rows: Sequence[tuple[int, str, str]]) -> list[Planned]:
    """The second pass over a batch, as a Ray task: :meth:`IngestWorker.plan`."""
    return worker_for(key, args).plan(rows)

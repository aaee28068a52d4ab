"""What the framework adapters share: one call from their options to a chunk tree, and the chunks a
framework gets from it. Framework-free (the adapters import their frameworks, this does not)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..chunkers.dispatch import check_models, chunk_by
from ..chunkers.many import chunk_many
from ..chunkers.overlap import add_overlap
from ..errors import InputError
from ..text.measure import Meter
from ..text.tokens import measure_for
from ..tree import ChunkTree, bubble_marks
from ..types import Chunk


@dataclass(frozen=True)
class SplitOptions:
    """A splitter's settings: ``method`` (see ``logichunk.chunkers.dispatch.METHODS``), ``chunk_size``
    (the top level's limit) or ``sizes`` (every level's), ``levels``, ``unit``/``tokenizer``,
    ``chunk_overlap`` (in the unit: the most text two neighbouring chunks share, as in LangChain and
    LlamaIndex), and the models a method needs. Build it with
    :func:`split_options`, which checks every value the way the frameworks' own splitters would fail."""

    method: str = "logic-chain"
    chunk_size: int = 1000
    sizes: tuple[int, ...] | None = None
    levels: int = 1
    unit: str = "chars"
    tokenizer: Any = None
    chunk_overlap: int = 0
    embedder: Any = None
    llm: Any = None
    lm: Any = None

    def measure(self) -> Any:
        return measure_for(self.unit, self.tokenizer, embedder=self.embedder)

    def own_sizes(self) -> tuple[int, ...]:
        """Each level's limit for a chunk's own text: the framework's size less the overlap it may gain
        before its start, so the text a framework embeds (``page_content``, a node's text) stays within
        ``chunk_size``, as it does with the frameworks' own splitters."""
        return tuple(s - self.chunk_overlap for s in (self.sizes or (self.chunk_size,)))

    def less(self, taken: int, what: str) -> SplitOptions:
        """These options with ``taken`` units of every level's size given to ``what`` (LlamaIndex embeds a
        node's metadata with its text, and its splitters take the metadata's length from the size)."""
        if taken <= 0:
            return self
        unit = self.unit if self.tokenizer is None else "tokens"
        for s in self.sizes or (self.chunk_size,):
            if s - taken - self.chunk_overlap < 1:
                raise InputError(f"{what} takes {taken} of chunk_size {s} ({unit})"
                                 f"{f' with chunk_overlap {self.chunk_overlap}' if self.chunk_overlap else ''}, "
                                 "leaving no room for text: raise chunk_size, shorten the metadata or keep keys out "
                                 "of it (excluded_embed_metadata_keys, excluded_llm_metadata_keys)")
        return replace(self, chunk_size=self.chunk_size - taken,
                       sizes=tuple(s - taken for s in self.sizes) if self.sizes else None)

    def widened(self, tree: ChunkTree, measure: Any) -> ChunkTree:
        """``tree`` with each chunk's window: its span and up to ``chunk_overlap`` of the text before it
        (never after), so neighbours share at most ``chunk_overlap``: LangChain's and LlamaIndex's meaning,
        where ``chunk(overlap=)`` widens both sides."""
        return add_overlap(tree, self.chunk_overlap, measure, after=False, limits=self.sizes or (self.chunk_size,))

    def tree(self, text: str) -> ChunkTree:
        if not isinstance(text, str):
            raise InputError(f"text must be str, got {type(text).__name__}")
        own = self.own_sizes()
        return self.widened(chunk_by(self.method, text, max_size=own[0], sizes=own if self.sizes else None,
                                     levels=self.levels, unit=self.unit, tokenizer=self.tokenizer,
                                     embedder=self.embedder, llm=self.llm, lm=self.lm), self.measure())

    def trees(self, texts: Sequence[str]) -> list[ChunkTree]:
        """:meth:`tree` of each text. Many short texts (a framework's list of documents) share one pass of
        :func:`~logichunk.chunk_many` where the method allows (logic-chain with no LLM or LM): the same trees,
        about 3x faster on a knowledge base's paragraphs."""
        for text in texts:
            if not isinstance(text, str):
                raise InputError(f"text must be str, got {type(text).__name__}")
        if self.method != "logic-chain" or self.llm is not None or self.lm is not None or len(texts) < 2:
            return [self.tree(t) for t in texts]
        own, measure = self.own_sizes(), self.measure()
        return [self.widened(t, measure) for t in chunk_many(texts, max_size=own[0], sizes=own if self.sizes else None,
                                                             levels=self.levels, unit=measure)]

    def length(self, text: str) -> int:
        return Meter(text, self.measure()).total()


def whole(name: str, value: Any, *, least: int) -> int:
    """``value`` as an int of at least ``least``: a whole number (an integral float too), never a bool or
    a string; a one-line error naming the option otherwise (``int("abc")`` said nothing of which)."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be a whole number, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        if not (isinstance(value, float) and value.is_integer()):
            raise InputError(f"{name} must be a whole number, got {value!r}") from None
        v = int(value)
    if v < least:
        raise InputError(f"{name} must be at least {least}, got {v}")
    return v


def split_options(*, method: str, chunk_size: Any, chunk_overlap: Any, sizes: Sequence[Any] | None, levels: Any,
                  unit: str, tokenizer: Any, embedder: Any, llm: Any, lm: Any) -> SplitOptions:
    """Checked :class:`SplitOptions`: a known method, whole positive sizes, and an overlap less than each
    size (LangChain's rule: room for a chunk's own text once the overlap before it is taken from the size);
    the unit or tokenizer resolved once, so a bad one fails here and not at the first document."""
    if not isinstance(method, str):  # (LangChain's splitters take chunk_size first: ``Splitter(500)``)
        raise InputError(f"method must be a method's name (such as 'logic-chain'), got {method!r}"
                         f"{f': pass the size as chunk_size={method!r}' if isinstance(method, int) else ''}")
    check_models(method, embedder, lm)  # (chunk_by says so too, but only at the first document)
    size = whole("chunk_size", chunk_size, least=1)
    overlap = whole("chunk_overlap", chunk_overlap, least=0)
    if sizes is not None:
        if isinstance(sizes, str | bytes) or not isinstance(sizes, Sequence) or not sizes:
            raise InputError(f"sizes must be a list of whole numbers, top level first, got {sizes!r}")
        sizes = tuple(whole("sizes", s, least=1) for s in sizes)
    depth = len(sizes) if sizes else whole("levels", levels, least=1)
    for s in sizes or (size,):
        if s <= overlap:
            raise InputError(f"chunk_overlap {overlap} leaves no room in a chunk of {s}: a chunk's text is up to "
                             "chunk_overlap of the text before it plus its own, within the size (overlap < size)")
    opts = SplitOptions(method=method, chunk_size=size, sizes=sizes, levels=depth, unit=unit, tokenizer=tokenizer,
                        chunk_overlap=overlap, embedder=embedder, llm=llm, lm=lm)
    opts.measure()
    return opts


def window(chunk: Chunk) -> tuple[int, int]:
    """The span a framework reads for ``chunk``: its overlap window when there is one, else its span."""
    w = chunk.meta.get("overlap_span")
    return (int(w[0]), int(w[1])) if w else (chunk.span.start, chunk.span.end)


#: the keys :func:`chunk_fields` adds
FIELDS = ("chunk_id", "parent_id", "level", "method", "chunk_start", "chunk_end", "is_leaf", "bubble")
#: those a chunk may lack (a top-level chunk has no parent; most chunks are about no bubble)
OPTIONAL = ("parent_id", "bubble")
#: where one of ours goes when the document's metadata has that key already
PREFIX = "logichunk_"


def chunk_fields(chunk: Chunk, method_default: str, bubble: str | None = None) -> dict[str, Any]:
    """The metadata every adapter adds to a chunk (besides the source document's own). A top-level chunk has
    no ``parent_id`` and a chunk no bubble is about no ``bubble`` (no None value: several vector stores refuse
    one, Chroma's "Expected metadata value to be a str, int, float or bool, got None"). ``bubble`` is the
    category of the bubble the chunk is part of (:func:`bubbles_of`), as the CLI's records say it."""
    out = {"chunk_id": chunk.id, "parent_id": chunk.parent, "level": chunk.level,
           "method": chunk.method or method_default, "chunk_start": chunk.span.start, "chunk_end": chunk.span.end,
           "is_leaf": not chunk.children, "bubble": bubble}
    return {k: v for k, v in out.items() if v is not None or k not in OPTIONAL}


def bubbles_of(tree: ChunkTree) -> dict[str, str]:
    """``chunk id -> category`` of the bubble (a forced split: a sentence cut where no break fitted) each chunk
    is part of, found as the CLI's json/jsonl records mark them (:func:`~logichunk.tree.bubble_marks`): a RAG
    user can filter or review such chunks by metadata, as the CLI user reads ``"bubble"``."""
    if not tree.bubbles:
        return {}
    records = tree.records(with_text=False)
    return {records[k]["id"]: category for k, category in bubble_marks(records, tree.bubbles).items()}


def placed(meta: dict[str, Any], keys: Sequence[str] = FIELDS) -> dict[str, str]:
    """Where each of our ``keys`` goes in the metadata of a chunk of a document whose metadata is ``meta``.
    A key the document has already keeps the document's value, and ours goes under ``logichunk_<key>``: a
    user's ``level`` or ``parent_id`` was silently replaced, and a filter on it found nothing. A chunk of an
    earlier logichunk split (it has all of our keys) is split again with its keys replaced by the new
    chunk's, as the frameworks' splitters replace their own (LangChain's ``start_index``)."""
    again = split_before(meta)
    return {k: PREFIX + k if k in meta and not again else k for k in keys}


def split_before(meta: dict[str, Any]) -> bool:
    """Whether ``meta`` is a chunk's of an earlier logichunk split: it has our keys (a top-level chunk has no
    ``parent_id``, most chunks no ``bubble``)."""
    return all(k in meta for k in FIELDS if k not in OPTIONAL)


def with_fields(meta: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """``meta`` (the document's metadata, not changed) with ``fields`` added where :func:`placed` puts them."""
    out = dict(meta)
    if split_before(meta):  # (split again: an earlier chunk's parent_id or bubble is not the new chunk's)
        for key in OPTIONAL:
            out.pop(key, None)
    for key, name in placed(meta, list(fields)).items():
        out[name] = fields[key]
    return out


def blank(text: str, span: tuple[int, int]) -> bool:
    """Whether a chunk's window is whitespace only: the frameworks' splitters return no such chunk (a run of
    blank lines of its own, a text of spaces), and an embedding of nothing finds nothing."""
    return not text[span[0] : span[1]].strip()

"""LlamaIndex: :class:`LogichunkNodeParser`, a real ``NodeParser``, and :class:`LogichunkEmbedding`.

Why: LlamaIndex users build indexes from nodes. By default the parser is a drop-in for
``SentenceSplitter`` (one level, the leaves: a flat index gets no nested duplicates). Its small-to-big
retrieval (the ``AutoMergingRetriever``) needs a hierarchy: PARENT/CHILD relationships and a docstore
holding every level. A logichunk tree is exactly that, cut where the logic breaks (``levels=3,
leaves_only=False``), so each chunk becomes a ``TextNode`` with ``start_char_idx``/``end_char_idx``
from its window (never found by a text search), PARENT/CHILD from its dotted id, PREVIOUS/NEXT to the
nodes whose text comes right before and after it (of its own level where that level goes on), SOURCE
to its document (after another parser too: that parser's node hands on its own SOURCE), and the
document's metadata plus ``chunk_id``,
``parent_id`` (not on a top-level chunk), ``level``, ``method``, ``chunk_start``/``chunk_end``,
``is_leaf`` (kept out of what is embedded and shown to the LLM; with ``include_metadata=False`` a node has
no metadata, as LlamaIndex's own parsers' nodes have none then: its span is ``start_char_idx``/``end_char_idx``,
its place in the tree its relationships). Use
``llama_index.core.node_parser.get_leaf_nodes`` to index the leaves and put all nodes in the
docstore, as with ``HierarchicalNodeParser``.

:class:`LogichunkEmbedding` wraps any logichunk embedder (the model-free hash embedder, E5) as a
LlamaIndex embedding model, so an index works offline.

Install with ``pip install 'logichunk[llamaindex]'``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.callbacks import CallbackManager
from llama_index.core.node_parser.interface import NodeParser
from llama_index.core.node_parser.node_utils import default_id_func
from llama_index.core.schema import (
    BaseNode,
    Document,
    MetadataMode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from pydantic import ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from ..errors import InputError
from ..text.decode import check_unicode
from ..text.tokens import resolve_tokenizer
from ..tree import ChunkTree
from ..types import Chunk
from ._common import SplitOptions, blank, bubbles_of, chunk_fields, placed, split_options, window, with_fields

__all__ = ["LogichunkEmbedding", "LogichunkNodeParser"]


class LogichunkNodeParser(NodeParser):
    """Parse documents into a node per leaf (``leaves_only=False``: a node per chunk of every level).
    ``method``, ``chunk_size`` (the top level's limit; ``sizes`` every level's, top first), ``levels``
    (default 1), ``unit``/``tokenizer`` and ``chunk_overlap`` (the most text two neighbouring nodes
    share: a node's text starts with up to that much of the text before it, in the unit) as in
    :class:`logichunk.integrations.langchain.LogichunkTextSplitter`. The defaults are a drop-in for
    ``SentenceSplitter`` (a flat index of the leaves); ``levels=3, leaves_only=False`` (or ``sizes``)
    gives every level for ``get_leaf_nodes`` and the ``AutoMergingRetriever``.

    What LlamaIndex embeds (a node's metadata string and its text, ``MetadataMode.EMBED``; the LLM's
    string when longer) stays within ``chunk_size``: the metadata's length is taken from the size, as
    ``SentenceSplitter`` takes it; metadata that leaves no room is a one-line error.

    ``chunk_size`` counts **characters** unless a tokenizer is given (LlamaIndex's own splitters count
    tokens): ``tokenizer="cl100k_base"`` (offline, the encoding LlamaIndex uses), a ``tokenizer.json``,
    a tokenizer object, or LlamaIndex's ``get_tokenizer()`` counts exact tokens; ``unit="tokens"`` without
    one is an estimate (one token per CJK character).

    Offsets (``start_char_idx``/``end_char_idx``, ``chunk_start``/``chunk_end``) are into the document's
    text, after another parser too where its nodes say where they lie (``MarkdownNodeParser``'s do), else
    into the input node's text; after another parser, PREVIOUS / NEXT run on from one of its nodes to the
    next of the same document, as LlamaIndex's parsers link them. A chunk of whitespace only makes no
    node; a chunk a bubble is about (a forced split) has ``bubble`` in its metadata. Node ids are
    ``<document id>:<dotted id>``, or ``<document id>:<start>-<end>:<dotted id>`` under an earlier parser's node
    lying at ``start:end`` of its document (a node that does not say where it lies: ``<its id>:<dotted id>``; a
    second input node of the same span or id in one call: ``...#1:<dotted id>``): the same on every run and
    whichever batch a node comes in (an ``IngestionPipeline``'s ``num_workers``, a parser called on one node
    at a time); ``id_func(i, node)``, when given, names them.
    A metadata key of the document that we add too keeps the document's value, ours going under
    ``logichunk_<key>``."""

    method: str = Field(default="logic-chain", description="logichunk chunking method")
    chunk_size: int = Field(default=1000, gt=0, description="limit of the top level, in the unit")
    sizes: list[int] | None = Field(default=None, description="limit per level, top first")
    levels: int = Field(default=1, ge=1, description="depth of the tree when sizes is not given")
    unit: str = Field(default="chars", description="chars, bytes or tokens")
    tokenizer: Any = Field(default=None, description="exact tokens: an encoding name, tokenizer.json, 'embedder', ...")
    chunk_overlap: int = Field(default=0, ge=0, description="most text two neighbouring nodes share, in the unit")
    leaves_only: bool = Field(default=True, description="only the leaves (False: every level, for auto-merging)")
    embedder: Any = Field(default=None, exclude=True, description="logichunk embedder (cliff, fused, parent-child)")
    llm: Any = Field(default=None, exclude=True)
    lm: Any = Field(default=None, exclude=True)
    # the options are read at each call, as LlamaIndex's own parsers read theirs (a copy taken once kept
    # cutting at the old size, under an ingestion cache key that named the new one), and checked when set;
    # a misspelt option (HierarchicalNodeParser's ``chunk_sizes``) is an error, not the default silently
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", validate_assignment=True)

    def _options(self) -> SplitOptions:
        return split_options(method=self.method, chunk_size=self.chunk_size, sizes=self.sizes, levels=self.levels,
                             unit=self.unit, tokenizer=self.tokenizer, chunk_overlap=self.chunk_overlap,
                             embedder=self.embedder, llm=self.llm, lm=self.lm)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:
            raise _one_line(err) from None

    @classmethod
    def from_defaults(cls, method: str = "logic-chain", chunk_size: int = 1000, chunk_overlap: int = 0,
                      sizes: list[int] | None = None, levels: int = 1, unit: str = "chars", tokenizer: Any = None,
                      leaves_only: bool | None = None, embedder: Any = None, llm: Any = None, lm: Any = None,
                      callback_manager: CallbackManager | None = None, include_metadata: bool = True,
                      include_prev_next_rel: bool = True, id_func: Any = None, chunk_sizes: list[int] | None = None,
                      **kwargs: Any) -> LogichunkNodeParser:
        """The parser, as ``SentenceSplitter.from_defaults`` and ``HierarchicalNodeParser.from_defaults`` make
        theirs (code written for them calls this). ``chunk_sizes`` is ``HierarchicalNodeParser``'s: every level's
        size, top first, and a node per chunk of every level (``leaves_only=False`` unless given), for
        ``get_leaf_nodes`` and the ``AutoMergingRetriever``: it was a TypeError. Another parser's option
        (``paragraph_separator``, ``node_parser_ids``) is a one-line error, as the constructor says it."""
        if chunk_sizes is not None:
            if sizes is not None:
                raise InputError("give sizes= or chunk_sizes= (HierarchicalNodeParser's name), not both")
            sizes, leaves_only = chunk_sizes, False if leaves_only is None else leaves_only
        return cls(method=method, chunk_size=chunk_size, chunk_overlap=chunk_overlap, sizes=sizes, levels=levels,
                   unit=unit, tokenizer=tokenizer, leaves_only=True if leaves_only is None else leaves_only,
                   embedder=embedder, llm=llm, lm=lm, callback_manager=callback_manager or CallbackManager([]),
                   include_metadata=include_metadata, include_prev_next_rel=include_prev_next_rel, id_func=id_func,
                   **kwargs)

    @model_validator(mode="after")
    def _checked(self) -> LogichunkNodeParser:
        self._options()
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        """A value the check refuses leaves the parser as it was (pydantic has stored it by then)."""
        fields = type(self).model_fields
        old = self.__dict__.get(name) if name in fields else None
        try:
            super().__setattr__(name, value)
        except ValueError as err:
            if name in fields:
                self.__dict__[name] = old
            if isinstance(err, ValidationError):
                raise _one_line(err) from None
            raise

    @classmethod
    def class_name(cls) -> str:
        return "LogichunkNodeParser"

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        """The options, and each model given by its ``model_id``: LlamaIndex's ingestion cache keys a
        transformation by this dict, and the models (kept out of the dump: not serialisable) decide the
        chunks of ``cliff``, ``fused``, ``ppl``, ``msp``: with another embedder the cache gave the first
        one's nodes."""
        data = super().to_dict(**kwargs)
        for name in _MODELS:
            model = getattr(self, name)
            if model is not None:
                data[name] = str(getattr(model, "model_id", None) or type(model).__name__)
        return data

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON, a tokenizer object given by what names it (it was a TypeError, "Object of type
        Encoding is not JSON serializable"): a tiktoken encoding (or its ``encode_ordinary``) by its name, which
        :meth:`from_json` reads back as the same tokens. Any other tokenizer object has no name that reads back
        as the same tokens: a one-line error says to pass a name or path."""
        data = self.to_dict(**kwargs)
        if self.tokenizer is not None and not isinstance(self.tokenizer, str):
            data["tokenizer"] = _tokenizer_name(self.tokenizer)
        return json.dumps(data)

    @classmethod
    def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> LogichunkNodeParser:
        """The parser :meth:`to_dict` (or ``to_json``) described; a model named there by its id is given again
        (``from_dict(data, embedder=...)``), or the method's one-line error says which is missing. (A model's
        id read back as the model failed at the first document; LlamaIndex's serialised ``id_func`` was
        refused: "Input should be callable".)"""
        data = {**data, **kwargs}
        data.pop("class_name", None)
        for name in _MODELS:
            if isinstance(data.get(name), str):
                del data[name]
        func = data.get("id_func")
        if isinstance(func, dict) and func.get("id_func_name") == default_id_func.__name__:
            del data["id_func"]  # (LlamaIndex writes ``id_func`` as its name; only the default's is known)
        return cls(**data)

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> list[BaseNode]:
        out: list[BaseNode] = []
        opts = self._options()
        texts = [node.get_content(metadata_mode=MetadataMode.NONE) for node in nodes]
        for node, text in zip(nodes, texts, strict=True):  # (LlamaIndex's own hash of the node fails on one)
            if isinstance(text, str):
                check_unicode(text, f"the text of node {node.node_id!r}")
        # each node's metadata, as LlamaIndex will embed it with every chunk, comes off the size (nodes with
        # the same cost are chunked in one pass)
        costs = [self._metadata_cost(node, opts) for node in nodes]
        trees: list[ChunkTree | None] = [None] * len(nodes)
        for cost in sorted(set(costs)):
            at = [i for i, c in enumerate(costs) if c == cost]
            less = opts.less(cost, f"the metadata of node {nodes[at[0]].node_id!r}, embedded with each chunk,")
            for i, tree in zip(at, less.trees([texts[i] for i in at]), strict=True):
                trees[i] = tree
        parts: list[_Part] = []
        bases: dict[str, int] = {}  # how often each base was given: a second node of one span or id is told apart
        for node, text, tree in zip(nodes, texts, trees, strict=True):
            assert tree is not None
            source = node.source_node  # a node of an earlier parser: its document; a document: itself
            at = _place(node, text)
            if source is None:
                base, source = node.node_id, node.as_related_node_info()
            else:  # (numbering the input nodes per call gave the same ids to the nodes of two batches)
                base = f"{source.node_id}:{at}-{at + len(text)}" if at is not None else node.node_id
            again = bases[base] = bases.get(base, -1) + 1
            base = f"{base}#{again}" if again else base
            made = self._parse_one(node, text, tree, source, base, at or 0)
            parts.append(_Part(source.node_id, at, len(text), tree, made))
            out.extend(made.values())
        if self.include_prev_next_rel:
            for before, after in zip(parts, parts[1:], strict=False):
                if before.source == after.source and _in_order(before, after):
                    _link_across(before, after, self.leaves_only)
        return out

    def _metadata_cost(self, node: BaseNode, opts: SplitOptions) -> int:
        """What ``node``'s metadata adds to each of its chunks where LlamaIndex reads them (the longer of the
        embedder's and the LLM's string, in the template around the text), in the unit: ``SentenceSplitter``
        takes it from its size too (``MetadataAwareTextSplitter``). Our own keys are kept out of both."""
        if not self.include_metadata:
            return 0
        cost = 0
        for mode in (MetadataMode.EMBED, MetadataMode.LLM):
            meta = node.get_metadata_str(mode=mode)
            if meta:
                cost = max(cost, opts.length(node.text_template.format(metadata_str=meta, content="")))
        return cost

    def _parse_one(self, node: BaseNode, text: str, tree: ChunkTree, source: RelatedNodeInfo,
                   base: str, at: int) -> dict[str, TextNode]:
        """The nodes of one input node's tree, by chunk id. SOURCE is its document (an earlier parser's node
        hands its own SOURCE on, as LlamaIndex's parsers do: ``delete_ref_doc`` and the ingestion docstore
        find every node of a document by it); ids are ``base`` and the dotted id, the same on every run;
        offsets are ``at`` on (where ``text`` lies in the document, :func:`_place`)."""
        chunks = [c for c in (tree.leaves() if self.leaves_only else tree) if not blank(text, window(c))]
        if self.id_func is default_id_func:  # (ids stable across runs: the document's and the dotted id)
            nid = {c.id: f"{base}:{c.id}" for c in chunks}
        else:  # the user's ids, as LlamaIndex's parsers give them: by each node's place in the document's list
            nid = {c.id: str(self.id_func(i, node)) for i, c in enumerate(chunks)}
        made: dict[str, TextNode] = {}
        kept = node.metadata if self.include_metadata else {}
        ours = list(placed(kept).values())  # kept out of what is embedded and shown to the LLM
        bubbles = bubbles_of(tree)
        for c in chunks:
            a, b = window(c)
            fields = chunk_fields(c, self.method, bubbles.get(c.id))
            fields["chunk_start"], fields["chunk_end"] = c.span.start + at, c.span.end + at
            # include_metadata=False: no metadata, as LlamaIndex's parsers give none then (neither the document's
            # nor their own keys, MarkdownNodeParser's header_path); the span is start_char_idx/end_char_idx
            meta = with_fields(kept, fields) if self.include_metadata else {}
            rel: dict[NodeRelationship, Any] = {NodeRelationship.SOURCE: source}
            n = TextNode(id_=nid[c.id], text=text[a:b], start_char_idx=a + at, end_char_idx=b + at, metadata=meta,
                         excluded_embed_metadata_keys=[*node.excluded_embed_metadata_keys, *ours],
                         excluded_llm_metadata_keys=[*node.excluded_llm_metadata_keys, *ours],
                         metadata_seperator=node.metadata_separator, metadata_template=node.metadata_template,
                         text_template=node.text_template, relationships=rel)
            made[c.id] = n
        for c in chunks:
            n = made[c.id]
            if not self.leaves_only:
                if c.parent is not None and c.parent in made:
                    n.relationships[NodeRelationship.PARENT] = made[c.parent].as_related_node_info()
                if c.children:
                    n.relationships[NodeRelationship.CHILD] = [made[k].as_related_node_info() for k in c.children
                                                               if k in made]
        if self.include_prev_next_rel:
            adjacent = _adjacency(tree, self.leaves_only)
            for c in chunks:
                for rel, step in ((NodeRelationship.PREVIOUS, -1), (NodeRelationship.NEXT, 1)):
                    k = adjacent(c, step)
                    while k is not None and k.id not in made:  # (a chunk of whitespace made no node)
                        k = adjacent(k, step)
                    if k is not None:
                        made[c.id].relationships[rel] = made[k.id].as_related_node_info()
        return made

    def _postprocess_parsed_nodes(self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]) -> list[BaseNode]:
        """Our nodes carry their offsets and relationships already (the base class would search each
        node's text in its document and link neighbours across levels)."""
        return nodes


@dataclass(frozen=True)
class _Part:
    """One input node's nodes, as :func:`_link_across` links them to the next input node's: its document's id,
    where its text lies there (None: unknown) and how long it is, its tree, and its nodes by chunk id."""

    source: str
    at: int | None
    length: int
    tree: ChunkTree
    made: dict[str, TextNode]


def _place(node: BaseNode, text: str) -> int | None:
    """Where ``text`` (an earlier parser's node's) starts in its document: the node's ``start_char_idx`` when
    the node says where it lies and its text is that long (``MarkdownNodeParser``'s, ``SentenceSplitter``'s,
    ours), so our nodes' offsets are the document's, as SOURCE names it (they were into the earlier node's
    text: ``doc.text[start:end]`` was another passage). None for a document, or a node that does not say."""
    if node.source_node is None or not isinstance(node, TextNode):
        return None
    a, b = node.start_char_idx, node.end_char_idx
    return a if isinstance(a, int) and isinstance(b, int) and 0 <= a and b - a == len(text) else None


def _in_order(before: _Part, after: _Part) -> bool:
    """Whether ``after``'s text follows ``before``'s in their document (LlamaIndex's parsers link the nodes
    of consecutive input nodes of a document; nested or overlapping ones, such as a hierarchy's, are not
    linked: their text does not follow). Unknown places: in the order given, as LlamaIndex takes them."""
    if before.at is None or after.at is None:
        return True
    return after.at >= before.at + before.length


def _link_across(before: _Part, after: _Part, leaves_only: bool) -> None:
    """PREVIOUS / NEXT between the nodes at the end of ``before`` and the start of ``after``, two consecutive
    input nodes of one document (after another parser: ``MarkdownNodeParser``'s sections): the rule
    :func:`_adjacency` keeps within a tree (a node of the same level where that level goes on, else the leaf
    there), across the seam. They were left unlinked, so the text ran on where NEXT said it ended."""
    def edge(part: _Part, step: int) -> dict[int | None, TextNode]:
        """The nodes at ``part``'s start (``step`` 1: those with no PREVIOUS in their tree, only whitespace
        before them) or end (-1: no NEXT), one per level, and the leaf there under None."""
        rel = NodeRelationship.PREVIOUS if step > 0 else NodeRelationship.NEXT
        chunks = [c for c in part.tree if c.id in part.made]
        if not chunks:
            return {}
        leaves = [c for c in chunks if leaves_only or not any(k in part.made for k in c.children)]
        leaf = min(leaves, key=lambda c: c.span.start) if step > 0 else max(leaves, key=lambda c: c.span.end)
        found: dict[int | None, TextNode] = {None: part.made[leaf.id]}
        for c in chunks:
            if rel not in part.made[c.id].relationships:
                found.setdefault(c.level, part.made[c.id])
        return found

    ends, starts = edge(before, -1), edge(after, 1)
    if not ends or not starts:
        return
    for level, n in ends.items():
        if level is not None:
            n.relationships[NodeRelationship.NEXT] = starts.get(level, starts[None]).as_related_node_info()
    for level, n in starts.items():
        if level is not None:
            n.relationships[NodeRelationship.PREVIOUS] = ends.get(level, ends[None]).as_related_node_info()


def _adjacency(tree: ChunkTree, leaves_only: bool) -> Callable[[Chunk, int], Chunk | None]:
    """``adjacent(chunk, step)``: the chunk whose span comes right after ``chunk``'s (``step=1``) or right
    before it (``-1``): one of its own level, as ``HierarchicalNodeParser`` links each level, or where its
    level does not go on there (deeper levels cover only what needed cutting), the leaf there; with
    ``leaves_only``, the next or previous leaf. (Linking a level's chunks in order jumped over text: the next
    level-2 chunk could lie a kilobyte on.)"""
    leaves = {step: {(k.span.start if step > 0 else k.span.end): k for k in tree.leaves()} for step in (1, -1)}
    levels = {step: {(k.level, k.span.start if step > 0 else k.span.end): k for k in tree} for step in (1, -1)}

    def adjacent(chunk: Chunk, step: int) -> Chunk | None:
        at = chunk.span.end if step > 0 else chunk.span.start
        same = None if leaves_only else levels[step].get((chunk.level, at))
        return same or leaves[step].get(at)

    return adjacent


def _tokenizer_name(tokenizer: Any) -> str:
    """The name :meth:`LogichunkNodeParser.to_json` writes for a tokenizer object: a tiktoken encoding's, for the
    encoding or its ``encode_ordinary`` (the same tokens as the name); ``encode`` and ``get_tokenizer()``'s partial
    treat special tokens otherwise (one token, or an error), which a name would drop. A path is its text."""
    if isinstance(tokenizer, os.PathLike):
        return os.fspath(tokenizer)
    measure = resolve_tokenizer(tokenizer)
    exact = tokenizer is measure.tokenizer or getattr(tokenizer, "__name__", "") == "encode_ordinary"
    if exact and type(measure.tokenizer).__module__.startswith("tiktoken"):
        return str(measure.tokenizer.name)
    raise InputError(f"to_json: the tokenizer {measure.label!r} ({type(tokenizer).__name__}) has no name that reads "
                     "back as the same tokens: give the parser a tokenizer name or path (such as 'cl100k_base' or a "
                     "tokenizer.json) to write it out")


#: the fields holding models, which the dump leaves out (:meth:`LogichunkNodeParser.to_dict` names them)
_MODELS = ("embedder", "llm", "lm")


#: what to pass instead of another LlamaIndex parser's option
_HINTS = {
    "chunk_sizes": ": pass sizes=[...] (top level first) with leaves_only=False for every level, or "
                   "LogichunkNodeParser.from_defaults(chunk_sizes=[...]) as with HierarchicalNodeParser",
    "node_parser_ids": ": the levels are logichunk's own (sizes=[...], leaves_only=False)",
    "node_parser_map": ": the levels are logichunk's own (sizes=[...], leaves_only=False)",
} | {name: ": logichunk finds its own cut points (where the text's logic breaks); drop it"
     for name in ("separator", "paragraph_separator", "secondary_chunking_regex", "backup_separators")}


def _one_line(err: ValidationError) -> InputError:
    """pydantic's refusal (three or four lines and a link) as one line naming the option: ours as we raised it."""
    first = err.errors()[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, InputError):
        return cause
    name = ".".join(str(x) for x in first["loc"]) or "options"
    if first["type"] == "extra_forbidden":
        return InputError(f"LogichunkNodeParser has no option {name!r}{_HINTS.get(name, '')}")
    msg = first["msg"]
    return InputError(f"{name}: {msg[:1].lower()}{msg[1:]}, got {first.get('input')!r}")


class LogichunkEmbedding(BaseEmbedding):
    """A logichunk embedder (``logichunk.models``: ``HashEmbedder``, ``E5Embedder``, ...) as a LlamaIndex
    embedding model: queries are embedded as queries, texts as passages."""

    _embedder: Any = PrivateAttr()

    def __init__(self, embedder: Any = None, **kwargs: Any) -> None:
        """``embedder``: a model, or its name as the CLI takes it (``"e5"``, ``"hash"``, ``"auto"``), as every
        ``embedder=`` of logichunk's (a name was kept as the model: ``'str' object has no attribute 'embed'`` at the
        first embedding); None: the model-free hash embedder."""
        if embedder is None:
            from ..models.embed_hash import HashEmbedder

            embedder = HashEmbedder()
        else:
            from ..models.registry import embedder_of

            embedder = embedder_of(embedder)
        kwargs.setdefault("model_name", getattr(embedder, "model_id", type(embedder).__name__))
        super().__init__(**kwargs)
        self._embedder = embedder

    @classmethod
    def class_name(cls) -> str:
        return "LogichunkEmbedding"

    def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        return [row.tolist() for row in self._embedder.embed(list(texts), kind=kind)]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query], "query")[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text], "passage")[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts, "passage")

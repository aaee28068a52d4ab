"""LangChain: :class:`LogichunkTextSplitter`, a real ``langchain_text_splitters.TextSplitter``.

Why an adapter and not a recipe: LangChain users plug a splitter into the pipeline they have (and
through it reach every vector store LangChain knows). This one cuts where the text's logic breaks,
sizes chunks in any tokenizer's exact tokens, and says where each chunk lies: ``split_documents``
keeps each input document's metadata and adds ``chunk_id`` (dotted: ``2.1`` is the first child of
``2``), ``parent_id`` (not on a top-level chunk: no None values), ``level``, ``method``,
``start_index``/``end_index`` (where ``page_content`` lies in the source, found from our spans, never
by a text search), ``chunk_start``/``chunk_end`` (always: the chunk's own span, the same as
``start_index``/``end_index`` unless ``chunk_overlap`` widened ``page_content``; own spans tile the
text) and ``is_leaf``. ``page_content`` is always an exact slice of the source: nothing is stripped
or joined.

Install with ``pip install 'logichunk[langchain]'``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_text_splitters import TextSplitter
from pydantic import ConfigDict

from ..errors import InputError
from ..text.tokens import TiktokenEncode
from ._common import blank, bubbles_of, chunk_fields, split_options, window, with_fields

__all__ = ["LogichunkRetriever", "LogichunkTextSplitter"]

#: ``keep_separator`` values that keep every separator (LangChain's True is "start"): we keep them all, where
#: the cut leaves them (in characters, whitespace ends the chunk before a cut); False would drop them
_KEPT = (True, "start", "end")
#: options of LangChain's other splitters a user brings along, and what to pass instead
_UNKNOWN = {
    name: f"{name}= does not apply: logichunk finds its own cut points (where the text's logic breaks); drop it"
    for name in ("separators", "separator")
} | {
    name: f"{name}= is TokenTextSplitter's: pass tokenizer='cl100k_base' (or another encoding), or use "
          "LogichunkTextSplitter.from_tiktoken_encoder(encoding_name=..., model_name=...)"
    for name in ("encoding_name", "model_name", "allowed_special", "disallowed_special")
}


class LogichunkTextSplitter(TextSplitter):
    """Split with logichunk. ``method``: ``logic-chain`` (default, model-free), ``cliff``/``fused``/
    ``parent-child`` (need ``embedder``), ``ppl``/``msp`` (need ``lm``), ``fixed``, ``recursive``.
    ``chunk_size`` limits the top level (``sizes`` sets every level, top first; ``levels`` makes a
    deeper tree, default 1 level); ``unit`` ``chars``/``bytes``/``tokens``, or ``tokenizer`` for exact
    tokens (``cl100k_base``, a ``tokenizer.json``, ``embedder``, a tokenizer object or callable).
    ``chunk_overlap`` (in the unit) is LangChain's: the most text two neighbouring chunks share. Each
    chunk's ``page_content`` starts with up to that much of the text before it (from a clause's or a
    word's start), within ``chunk_size`` (a chunk's own text is limited to ``chunk_size - chunk_overlap``;
    ``chunk_overlap < chunk_size``). Chunks of whitespace only are left out, as LangChain's are.
    ``leaves_only=False`` makes :meth:`split_documents` return every level (parents first), for small-to-big
    retrieval by ``parent_id``. ``page_content`` keeps its whitespace (LangChain's splitters strip it):
    ``strip_whitespace=True`` and ``keep_separator=False`` are refused (True, ``"start"`` and ``"end"`` all
    keep every separator, where the cut leaves it: in characters, whitespace ends the chunk before a cut). What
    ``RecursiveCharacterTextSplitter`` is usually given is accepted: ``length_function=len`` (characters,
    the default unit; any other length function is refused: pass ``tokenizer=``) and ``is_separator_regex``
    (no separators to read); ``separators=`` and any other unknown option are one-line errors. A metadata
    key of the document that we add too keeps the document's value, ours going under ``logichunk_<key>``."""

    def __init__(self, method: str = "logic-chain", *, chunk_size: int = 1000, chunk_overlap: int = 0,
                 sizes: Sequence[int] | None = None, levels: int = 1, unit: str = "chars", tokenizer: Any = None,
                 embedder: Any = None, llm: Any = None, lm: Any = None, add_start_index: bool = True,
                 leaves_only: bool = True, **kwargs: Any) -> None:
        length_function = kwargs.pop("length_function", None)
        if length_function is not None and not (length_function is len and tokenizer is None and unit == "chars"):
            # (a count cannot say where a chunk may end; a silent drop gave chunks of 512 characters to a user
            # who asked for 512 tokens. ``len`` is the characters we count anyway: the habit of LangChain's docs)
            raise InputError("length_function cannot size logichunk's chunks, which need each token's place: pass "
                             "tokenizer= (a tiktoken encoding name, a tokenizer.json, a tokenizer object, or a "
                             "callable giving each token's (start, end)), or unit='bytes'; only length_function=len "
                             "(characters, the default unit) applies")
        # page_content is an exact slice of the text, separators and whitespace included: what would drop or
        # strip some is refused (it was accepted and ignored, or a TypeError about a duplicate keyword)
        if kwargs.pop("keep_separator", True) not in _KEPT:
            raise InputError("keep_separator: logichunk keeps every separator where its cut leaves it "
                             "(page_content is an exact slice of the text); only keep_separator=True, 'start' or "
                             "'end' applies")
        if kwargs.pop("strip_whitespace", False):
            raise InputError("strip_whitespace=True would drop text: page_content keeps its whitespace, an exact "
                             "slice of the text (chunks of whitespace only are left out)")
        if not isinstance(kwargs.pop("is_separator_regex", False), bool):  # (no separators to read as regexes)
            raise InputError("is_separator_regex must be True or False")
        for name in kwargs:  # (TextSplitter's TypeError named its own __init__, not the option)
            raise InputError(_UNKNOWN.get(name, f"LogichunkTextSplitter has no option {name!r}"))
        opts = split_options(method=method, chunk_size=chunk_size, sizes=sizes, levels=levels, unit=unit,
                             tokenizer=tokenizer, chunk_overlap=chunk_overlap, embedder=embedder, llm=llm, lm=lm)
        top = opts.sizes[0] if opts.sizes else opts.chunk_size
        super().__init__(chunk_size=top, chunk_overlap=opts.chunk_overlap, length_function=opts.length,
                         add_start_index=add_start_index, strip_whitespace=False, keep_separator=True)
        self._opts = opts
        self._leaves_only = leaves_only

    @classmethod
    def from_tiktoken_encoder(cls, encoding_name: str = "cl100k_base", model_name: str | None = None,
                              allowed_special: Any = None, disallowed_special: Any = None,
                              **kwargs: Any) -> LogichunkTextSplitter:
        """Sizes in a tiktoken encoding's exact tokens (offline for cl100k_base and o200k_base).
        ``allowed_special``/``disallowed_special`` as tiktoken's ``encode`` takes them (an allowed special
        token counts as one; a disallowed one in a text is an error); without either, special-token text
        counts as ordinary text."""
        if model_name is not None:
            import tiktoken

            try:
                encoding_name = tiktoken.encoding_name_for_model(model_name)
            except KeyError:  # (tiktoken's KeyError, a traceback to the user)
                raise InputError(f"tiktoken knows no encoding for model {model_name!r}: pass encoding_name= "
                                 "(such as 'cl100k_base' or 'o200k_base')") from None
        if allowed_special is None and disallowed_special is None:
            return cls(tokenizer=encoding_name, **kwargs)
        special = {k: v for k, v in (("allowed_special", allowed_special), ("disallowed_special", disallowed_special))
                   if v is not None}
        return cls(tokenizer=TiktokenEncode(encoding_name, **special), **kwargs)

    @classmethod
    def from_huggingface_tokenizer(cls, tokenizer: Any, **kwargs: Any) -> LogichunkTextSplitter:
        """Sizes in a Hugging Face (fast) tokenizer's exact tokens."""
        return cls(tokenizer=tokenizer, **kwargs)

    def split_text(self, text: str) -> list[str]:
        """The leaves' text (their overlap windows with ``chunk_overlap``), in document order; none of
        whitespace only."""
        tree = self._opts.tree(text)
        return [text[a:b] for a, b in map(window, tree.leaves()) if not blank(text, (a, b))]

    def create_documents(self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None) -> list[Document]:
        """A document per chunk of each text (see the class docstring), the texts chunked in one pass where the
        method allows (:meth:`SplitOptions.trees`). A key of ``metadatas`` that we add too keeps its value, and
        ours goes under ``logichunk_<key>`` (``start_index``/``end_index`` are LangChain's: always ours)."""
        if isinstance(texts, str):
            raise InputError("create_documents takes a list of texts; for one text use split_text(text)")
        texts = list(texts)
        metas = _metadatas(metadatas, len(texts))
        out: list[Document] = []
        for text, meta, tree in zip(texts, metas, self._opts.trees(texts), strict=True):
            chunks = tree.leaves() if self._leaves_only else list(tree)
            bubbles = bubbles_of(tree)
            for c in chunks:
                a, b = window(c)
                if blank(text, (a, b)):
                    continue
                md = with_fields(copy.deepcopy(dict(meta)), chunk_fields(c, self._opts.method, bubbles.get(c.id)))
                if self._add_start_index:
                    md["start_index"], md["end_index"] = a, b
                out.append(Document(page_content=text[a:b], metadata=md))
        return out

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        docs = list(documents)
        return self.create_documents([d.page_content for d in docs], [d.metadata for d in docs])


def _metadatas(metadatas: Iterable[Any] | None, n: int) -> list[dict[Any, Any]]:
    """``create_documents``' ``metadatas`` as a dict per text: any iterable (a generator had no ``len``), an entry
    of None as no metadata (as ``metadatas=None`` is; it was a TypeError deep in ``deepcopy``), anything else
    but a mapping a one-line error."""
    if metadatas is None:
        return [{}] * n
    if isinstance(metadatas, Mapping | str | bytes):
        raise InputError(f"metadatas must be a list of dicts, one per text, got {type(metadatas).__name__}")
    metas = list(metadatas)
    if len(metas) != n:
        raise InputError(f"metadatas has {len(metas)} entries for {n} texts")
    for i, meta in enumerate(metas):
        if meta is not None and not isinstance(meta, Mapping):
            raise InputError(f"metadatas[{i}] must be a dict or None, got {type(meta).__name__}")
    return [{} if meta is None else meta for meta in metas]


class LogichunkRetriever(BaseRetriever):
    """A LangChain retriever over a logichunk store (``logichunk.store.Store``): ``retrieve`` with
    ``mode`` (``basic``, ``parent``, ``hierarchical``, ``hybrid``; default the store's setting) and
    ``top_k``. Each hit is a ``Document`` whose ``page_content`` is the chunk's text (in ``parent``
    mode a large parent's window around the matched child) and whose metadata holds the chunk's
    ``chunk_id``, ``level``, ``document_id``, ``document_title``, ``span`` (where ``page_content`` lies in
    the document: ``[start, end]``, None while its block awaits a re-chunk), ``score`` and ``raw_score``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    store: Any
    mode: str | None = None
    top_k: int | None = None

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        from ..retrieve import retrieve
        from ..store.document_layout import DocLayout

        out: list[Document] = []
        hits = retrieve(self.store, query, mode=self.mode, top_k=self.top_k)
        titles = {d: t for d, t, _source in self.store.documents()} if hits else {}
        layouts: dict[str, DocLayout] = {}
        for hit in hits:
            meta = dict(hit.chunk.meta)
            context = meta.pop("context_text", None)
            text = context or meta.get("text", "")
            meta.pop("text", None)
            doc_id = meta.get("document_id", hit.doc_id)
            # where page_content lies in its document, to cite it (None while its block awaits a re-chunk)
            if context and "sentence_block_span" in meta:  # a graph mode's sentence
                block, (a, b) = meta.get("sentence_block_id"), meta["sentence_block_span"]
            elif context and hit.context is not None:  # a large parent's window around the matched child
                block, (a, b) = meta.get("block_id"), (hit.context.start, hit.context.end)
            else:
                block, (a, b) = meta.get("block_id"), (hit.chunk.span.start, hit.chunk.span.end)
            if hit.doc_id not in layouts:
                layouts[hit.doc_id] = DocLayout.of(self.store, hit.doc_id)
            md = {k: v for k, v in meta.items() if isinstance(v, str | int | float | bool) or v is None}
            md.update({"chunk_id": hit.chunk.id, "level": hit.chunk.level, "score": float(hit.score),
                       "raw_score": float(hit.raw_score), "document_id": doc_id,
                       "document_title": titles.get(hit.doc_id), "span": layouts[hit.doc_id].span(block, a, b, text)})
            out.append(Document(page_content=text, metadata=md))
        return out

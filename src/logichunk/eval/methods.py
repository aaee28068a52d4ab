"""The registry of methods the harness runs side by side: logichunk's own, the baselines, and the
peers from their own PyPI packages.

A method is built lazily from :class:`Settings` (target size, unit, embedder) into a *runner*
with one or more of:

* ``gap_scores(sents) -> np.ndarray`` — a gap signal; the segmentation task chooses the boundaries
  itself (see :mod:`.segmentation`), the chunking task hands the signal to :func:`logichunk.chunk`;
* ``segment(units, lang) -> np.ndarray`` — boundaries between given units (TextTiling);
* ``chunk(text, lang, units=False) -> Located`` — spans of one text. For segmentation, a chunker
  runs on the units joined by newlines and told that each line is a sentence; its chunk ends are
  snapped to the nearest unit boundary.

Peers return strings, not spans: :func:`locate` maps them back by sequential search from the
previous end (exact, then stripped, then whitespace-insensitive); chunks that cannot be found are
counted (``unlocated``) and left out. Every peer that embeds gets the *same* embedder as logichunk,
through a small adapter for its framework.

A method whose module or package is missing is skipped with a note (:func:`build`); nothing here
imports a peer before it is asked for.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import LogichunkError
from ..text.measure import Meter, get_measure
from .env import Unavailable, env_lm  # re-exported: the harness and memory.evaluate use them

__all__ = [
    "EMBEDS", "METHODS", "Located", "MethodSpec", "Settings", "Unavailable", "build", "locate", "method_names",
    "select_methods",
]


#: segmentation methods that embed (they need ``--embedder``; their rows say which one)
EMBEDS = frozenset({"cliff", "fused", "global-embed", "langchain-semantic", "llamaindex-semantic", "chonkie-semantic"})


@dataclass
class Settings:
    """What every method is built with. ``size`` is the target chunk size in ``unit``."""

    size: int = 200
    unit: Any = "tokens"  # a unit name, or a Measure (exact tokens: logichunk.text.tokens)
    embedder: Any = None
    embedder_name: str = "hash"
    calibration: str | None = None  # conversation memory: a `logichunk memory calibrate` file
    embed_context: bool = False  # chunking: embed each chunk's LLM-free context with it (logichunk.context)

    def count(self, text: str) -> int:
        return int(get_measure(self.unit).prefix(text)[-1])


@dataclass(frozen=True)
class Located:
    """Spans of one text, ``(m, 2)`` int64; ``unlocated`` chunks (peers) could not be found in it."""

    spans: np.ndarray
    unlocated: int = 0
    produced: int = 0


@dataclass(frozen=True)
class MethodSpec:
    name: str
    group: str  # "logichunk" | "baseline" | "peer"
    tasks: frozenset[str]
    requires: tuple[str, ...]
    make: Callable[[Settings], Any]
    about: str
    oracle: bool = False
    slow: bool = False  # left out of "all" (named explicitly to run)
    lm: bool = False  # runs the causal LM the environment names (env.env_lm)

    @property
    def peer(self) -> bool:
        return self.group == "peer"


# --------------------------------------------------------------------------- locating peer chunks


def _flex_pattern(chunk: str) -> re.Pattern[str] | None:
    parts = chunk.split()
    if not parts:
        return None
    return re.compile(r"\s*".join(re.escape(p) for p in parts))


def locate(text: str, chunks: Sequence[str]) -> Located:
    """Spans of peer chunks in ``text``, searched in order from the previous chunk's end (then from
    its start, for overlapping chunks). Whitespace-only chunks are ignored."""
    out: list[tuple[int, int]] = []
    cursor = prev_start = 0
    missing = produced = 0
    for c in chunks:
        if not c or not c.strip():
            continue
        produced += 1
        hit = None
        for frm in dict.fromkeys((cursor, prev_start)):
            i = text.find(c, frm)
            if i >= 0:
                hit = (i, i + len(c))
                break
            s = c.strip()
            i = text.find(s, frm)
            if i >= 0:
                hit = (i, i + len(s))
                break
            rx = _flex_pattern(c)
            if rx is not None:
                m = rx.search(text, frm, min(len(text), frm + 2 * len(c) + 2000))
                if m:
                    hit = (m.start(), m.end())
                    break
        if hit is None:
            missing += 1
            continue
        out.append(hit)
        prev_start, cursor = hit[0], max(cursor, hit[1])
    spans = np.asarray(out, dtype=np.int64).reshape(-1, 2)
    return Located(spans, missing, produced)


def _tree_spans(tree) -> np.ndarray:
    leaves = tree.leaves()
    return np.asarray([(c.span.start, c.span.end) for c in leaves], dtype=np.int64).reshape(-1, 2)


# --------------------------------------------------------------------------- sentence rules

_ZH_SENT = re.compile(r"(?<=[。！？!?；…])|(?<=[.?!])\s+")
_UNITS = re.compile(r"(?<=\n)")


def _zh(lang: str) -> bool:
    return lang.startswith("zh")


# --------------------------------------------------------------------------- logichunk methods


class _Signal:
    """A logichunk gap signal; as a chunker it drives :func:`logichunk.chunk` (one level)."""

    def __init__(self, signal, s: Settings) -> None:
        self.signal = signal
        self.s = s

    def gap_scores(self, sents) -> np.ndarray:
        return np.asarray(self.signal.gap_scores(sents), dtype=np.float64)

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        from .. import chunk

        tree = chunk(text, max_size=self.s.size, levels=1, unit=self.s.unit, signal=self.signal)
        return Located(_tree_spans(tree), 0, len(tree.leaves()))


def _entropy(s: Settings):
    from ..signals.entropy import EntropySignal

    return _Signal(EntropySignal(), s)


class _Global:
    """The global boundary decision without a size limit, as users run it:
    :func:`logichunk.segment_units` over the given units, on model-free lexical cohesion (``global``) or
    the configured embedder's vectors (``global-embed``). As a chunker it is :func:`logichunk.chunk` as
    users run it (one level: the global choice is the cascade's default)."""

    def __init__(self, s: Settings, embedded: bool) -> None:
        self.s = s
        self.embedded = embedded

    def segment(self, units: Sequence[str], lang: str, gold_count: int | None = None) -> np.ndarray:
        from ..chunkers.topics import segment_units

        return segment_units(units, embedder=self.s.embedder if self.embedded else None)

    def segment_count(self, units: Sequence[str], k: int) -> np.ndarray:
        """The oracle row (``--oracle``, ``@gold-k``): the same cost and rules, told the gold count."""
        from ..chunkers.topics import segment_units

        return segment_units(units, embedder=self.s.embedder if self.embedded else None, topics=k + 1)

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        from .. import chunk

        tree = chunk(text, max_size=self.s.size, levels=1, unit=self.s.unit)
        return Located(_tree_spans(tree), 0, len(tree.leaves()))


def scatter_topic_cuts(sents: Any, count: int | None = None) -> np.ndarray:
    """The previous segmentation default, kept for comparison (the ``global-scatter`` row,
    ``bench/bench_segment.py``): the structure rules of :func:`logichunk.segment` and its global
    decision, on the scatter of the model-free lexical rows with the permutation price raised with a
    long text's length (:func:`logichunk.boundaries.segment_penalty`) instead of the evidence of the
    words; ``count``: that many cuts instead. Sorted gap indices of ``sents`` (a
    :class:`~logichunk.text.sentences.SentenceSpans`)."""
    from .. import boundaries as bd
    from ..chunkers.topics import topic_rules
    from ..signals.cohesion import lexical_rows
    from ..text.structure import layout

    if len(sents) < 2:
        return np.zeros(0, np.int64)
    fixed, glue = topic_rules(layout(sents))
    X = lexical_rows(sents.text, sents.starts, sents.ends)
    if count is not None:
        return bd.segment_global(X, fixed=fixed, glue=glue, count=count)
    return bd.segment_global(X, penalty=bd.segment_penalty(X), fixed=fixed, glue=glue)


class _GlobalScatter:
    """:func:`scatter_topic_cuts` over the given units, as a segmentation row."""

    def __init__(self, s: Settings) -> None:
        self.s = s

    def segment(self, units: Sequence[str], lang: str, gold_count: int | None = None) -> np.ndarray:
        from ..text.sentences import join_units

        return scatter_topic_cuts(join_units(list(units)))

    def segment_count(self, units: Sequence[str], k: int) -> np.ndarray:
        from ..text.sentences import join_units

        return scatter_topic_cuts(join_units(list(units)), count=k)


class _GlobalWholeVocabulary:
    """``global`` with the whole text's vocabulary as every topic's prior support (as before the
    neighbourhood window, :data:`logichunk.boundaries.EVIDENCE_WINDOW`), for comparison: the two differ
    only on texts of more items than the window."""

    def __init__(self, s: Settings) -> None:
        self.s = s

    def segment(self, units: Sequence[str], lang: str, gold_count: int | None = None) -> np.ndarray:
        from ..chunkers.topics import topic_cuts
        from ..text.sentences import join_units

        return topic_cuts(join_units(list(units)), window=None)[0]


class _LocalCascade(_Signal):
    """The cascade with the earlier local rule (peaks merged weakest first), for comparison."""

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        from ..chunkers.logic_chain import CascadeSettings, chunk_logic_chain

        cfg = CascadeSettings(sizes=(self.s.size,), unit=self.s.unit, signal=self.signal, selection="local")
        tree = chunk_logic_chain(text, cfg)
        return Located(_tree_spans(tree), 0, len(tree.leaves()))


def _entropy_local(s: Settings):
    from ..signals.entropy import EntropySignal

    return _LocalCascade(EntropySignal(), s)


def _cliff(s: Settings):
    try:
        from ..signals.semantic import SemanticSignal
    except ImportError as e:
        raise Unavailable(f"logichunk.signals.semantic is not available yet ({e})") from None
    return _Signal(SemanticSignal(s.embedder), s)


def _fused(s: Settings):
    from ..signals.semantic import fused_signal

    return _Signal(fused_signal(s.embedder), s)


def _ppl(s: Settings):
    from ..signals.lm import PerplexitySignal

    return _PPL(PerplexitySignal(env_lm("ppl")), s)


class _MSP:
    """Segmentation: margin sampling run over the units (the LM judges each next unit against the
    current meta-chunk), gap strength = dynamic threshold − keep-margin. Chunking: Meta-Chunking's
    MSP chunker (:func:`logichunk.chunkers.meta.chunk_msp`) at the target size."""

    def __init__(self, s: Settings) -> None:
        self.lm = env_lm("msp")
        self.s = s

    def gap_scores(self, sents) -> np.ndarray:
        from ..chunkers.meta import chunk_msp

        if len(sents) < 2:
            return np.zeros(0)
        tree = chunk_msp(sents.text, self.lm, max_size=max(1, len(sents.text)), sentences=sents, selection="paper")
        st = tree.stats
        return np.asarray(st["thresholds"], dtype=np.float64) - np.asarray(st["margins"], dtype=np.float64)

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        from ..chunkers.meta import chunk_msp

        tree = chunk_msp(text, self.lm, max_size=self.s.size, unit=self.s.unit)
        return Located(_tree_spans(tree), 0, len(tree.leaves()))


class _PPL(_Signal):
    """Segmentation: the PPL gap signal (the next sentence's surprise under the LM). Chunking:
    Meta-Chunking's PPL chunker (:func:`logichunk.chunkers.meta.chunk_ppl`) at the target size."""

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        from ..chunkers.meta import chunk_ppl

        tree = chunk_ppl(text, self.signal, max_size=self.s.size, unit=self.s.unit)
        return Located(_tree_spans(tree), 0, len(tree.leaves()))


#: one memoising PPL signal per LM (it holds the LM, so an id is never reused while it is here)
_PPL_MEMO: dict[int, Any] = {}


def _memo_ppl(lm):
    """A PPL signal that keeps every curve it computed (keyed by text and sentence spans), one per LM,
    so the ``ppl-paper`` and ``ppl-global`` rows share one LM pass per document."""
    from ..signals.lm import PerplexitySignal

    class _MemoPPL(PerplexitySignal):
        def __init__(self, lm) -> None:
            super().__init__(lm)
            self.memo: dict[tuple[str, bytes], Any] = {}

        def curve(self, sents):
            key = (sents.text, sents.starts.tobytes() + sents.ends.tobytes())
            if key not in self.memo:
                self.memo[key] = super().curve(sents)
            return self.memo[key]

    if id(lm) not in _PPL_MEMO:
        _PPL_MEMO[id(lm)] = _MemoPPL(lm)
    return _PPL_MEMO[id(lm)]


class _Meta:
    """Meta-Chunking's chunker (``ppl`` or ``msp``) with one ``selection`` (``paper`` or ``global``),
    as users run it at the target size. Segmentation: it chunks the units (each one sentence) at the
    target size, and its cuts are the boundaries — the two selections compared on the same LM signal."""

    def __init__(self, s: Settings, kind: str, selection: str) -> None:
        self.s = s
        self.kind = kind
        self.selection = selection
        self.lm = env_lm(kind)
        self.model: Any = _memo_ppl(self.lm) if kind == "ppl" else self.lm

    def _tree(self, text: str, sents=None):
        from ..chunkers.meta import chunk_msp, chunk_ppl

        if self.kind == "ppl":
            return chunk_ppl(text, self.model, max_size=self.s.size, unit=self.s.unit, selection=self.selection,
                             sentences=sents)
        return chunk_msp(text, self.lm, max_size=self.s.size, unit=self.s.unit, selection=self.selection,
                         sentences=sents)

    def segment(self, units: Sequence[str], lang: str, gold_count: int | None = None) -> np.ndarray:
        from .segmentation import snap_to_units, units_to_sents

        if len(units) < 2:
            return np.zeros(0, dtype=np.int64)
        sents = units_to_sents(units)
        spans = _tree_spans(self._tree(sents.text, sents))
        return snap_to_units(spans[:-1, 1], sents.ends)

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        tree = self._tree(text)
        return Located(_tree_spans(tree), 0, len(tree.leaves()))


class _ParentChild:
    def __init__(self, s: Settings) -> None:
        from ..chunkers.parent_child import PCParams, chunk_parent_child

        self.fn = chunk_parent_child
        m = s.size
        self.params = PCParams(max_parent_size=6 * m, min_parent_size=m // 2, child_min_size=max(1, m // 4),
                               child_max_size=m, child_target_size=max(1, (5 * m) // 8), unit=s.unit)
        self.embedder = s.embedder

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        tree = self.fn(text, self.embedder, self.params)
        return Located(_tree_spans(tree), 0, len(tree.leaves()))


class _Baseline:
    def __init__(self, fn, s: Settings) -> None:
        self.fn = fn
        self.s = s

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        spans = self.fn(text, self.s.size, self.s.unit)
        return Located(spans, 0, len(spans))


def _fixed(s: Settings):
    from ..chunkers.baselines import fixed_spans

    return _Baseline(fixed_spans, s)


def _recursive(s: Settings):
    from ..chunkers.baselines import recursive_spans

    return _Baseline(recursive_spans, s)


class _NoBoundaries:
    def segment(self, units: Sequence[str], lang: str, gold_count: int | None = None) -> np.ndarray:
        return np.zeros(0, dtype=np.int64)


class _Even:
    """Equal-length segments with the gold number of segments (Choi's 'known k' baseline): an oracle."""

    oracle = True

    def segment(self, units: Sequence[str], lang: str, gold_count: int | None = None) -> np.ndarray:
        n = len(units)
        k = int(gold_count or 0)
        if n < 2 or k <= 0:
            return np.zeros(0, dtype=np.int64)
        b = np.round(np.arange(1, k + 1) * n / (k + 1)).astype(np.int64) - 1
        return np.unique(np.clip(b, 0, n - 2))


# --------------------------------------------------------------------------- peer adapters


def _token_counter(s: Settings) -> Callable[[str], int]:
    measure = get_measure(s.unit)
    return lambda t: int(measure.prefix(t)[-1])


class _LangchainEmbeddings:
    """Built on first use: a langchain ``Embeddings`` over our embedder."""

    @staticmethod
    def make(embedder):
        from langchain_core.embeddings import Embeddings

        class Adapter(Embeddings):
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                return embedder.embed(list(texts), kind="passage").tolist() if texts else []

            def embed_query(self, text: str) -> list[float]:
                return embedder.embed([text], kind="query")[0].tolist()

        return Adapter()


class _LangchainRecursive:
    def __init__(self, s: Settings) -> None:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        self.splitter = RecursiveCharacterTextSplitter(chunk_size=s.size, chunk_overlap=0,
                                                       length_function=_token_counter(s))

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        return locate(text, self.splitter.split_text(text))


class _LangchainSemantic:
    def __init__(self, s: Settings) -> None:
        from langchain_experimental.text_splitter import SemanticChunker

        self.cls = SemanticChunker
        self.emb = _LangchainEmbeddings.make(s.embedder)
        self.cache: dict[str, Any] = {}

    def _splitter(self, regex: str):
        if regex not in self.cache:
            self.cache[regex] = self.cls(self.emb, sentence_split_regex=regex)
        return self.cache[regex]

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        if units:
            regex = r"\n"
        elif _zh(lang):
            regex = r"(?<=[。！？!?；])\s*|(?<=[.?!])\s+"
        else:
            regex = r"(?<=[.?!])\s+"  # the package's default
        return locate(text, self._splitter(regex).split_text(text))


class _LlamaSemantic:
    def __init__(self, s: Settings) -> None:
        import os

        import llama_index.core as li

        # llama-index looks for nltk's punkt in its own bundled cache; say so explicitly (no download)
        os.environ.setdefault("NLTK_DATA", os.path.join(os.path.dirname(li.__file__), "_static", "nltk_cache"))
        from llama_index.core import Document
        from llama_index.core.base.embeddings.base import BaseEmbedding
        from llama_index.core.node_parser import SemanticSplitterNodeParser

        embedder = s.embedder

        class Adapter(BaseEmbedding):
            def _get_query_embedding(self, query: str) -> list[float]:
                return embedder.embed([query], kind="query")[0].tolist()

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return self._get_query_embedding(query)

            def _get_text_embedding(self, text: str) -> list[float]:
                return embedder.embed([text], kind="passage")[0].tolist()

            def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
                return embedder.embed(list(texts), kind="passage").tolist()

        self.Document = Document
        self.embed = Adapter(model_name=getattr(embedder, "model_id", "logichunk"), embed_batch_size=256)
        self.cls = SemanticSplitterNodeParser
        self.cache: dict[str, Any] = {}

    def _parser(self, mode: str):
        if mode not in self.cache:
            kw: dict[str, Any] = {}
            if mode == "units":
                kw["sentence_splitter"] = lambda t: [p for p in _UNITS.split(t) if p]
            elif mode == "zh":
                kw["sentence_splitter"] = lambda t: [p for p in _ZH_SENT.split(t) if p]
            self.cache[mode] = self.cls.from_defaults(embed_model=self.embed, include_metadata=False,
                                                      include_prev_next_rel=False, **kw)
        return self.cache[mode]

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        mode = "units" if units else ("zh" if _zh(lang) else "default")
        nodes = self._parser(mode).get_nodes_from_documents([self.Document(text=text)])
        return locate(text, [n.get_content() for n in nodes])


def _chonkie_tokenizer(s: Settings):
    """A chonkie tokenizer over logichunk's token measure: tokens are the measure's pieces, so
    decode(encode(t)) == t and counts match the harness's."""
    from chonkie.tokenizer import Tokenizer

    measure = get_measure(s.unit)

    class LogichunkTokenizer(Tokenizer):
        def __repr__(self) -> str:
            return f"LogichunkTokenizer({measure.name})"

        def tokenize(self, text: str) -> list[str]:
            if not text:
                return []
            p = measure.prefix(text)
            starts = np.flatnonzero(np.diff(p) > 0)
            if starts.size == 0 or starts[0] != 0:
                starts = np.concatenate(([0], starts))
            edges = np.concatenate((starts, [len(text)])).tolist()
            return [text[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]

        def encode(self, text: str) -> list[int]:
            out = []
            for piece in self.tokenize(text):
                if piece not in self.token2id:
                    self.token2id[piece] = len(self.vocab)
                    self.vocab.append(piece)
                out.append(self.token2id[piece])
            return out

        def decode(self, tokens: Sequence[int]) -> str:
            return "".join(self.vocab[t] for t in tokens)

        def count_tokens(self, text: str) -> int:
            return int(measure.prefix(text)[-1])

    return LogichunkTokenizer()


class _ChonkieRecursive:
    def __init__(self, s: Settings) -> None:
        from chonkie import RecursiveChunker

        self.chunker = RecursiveChunker(tokenizer=_chonkie_tokenizer(s), chunk_size=s.size)

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        return locate(text, [c.text for c in self.chunker.chunk(text)])


class _ChonkieSemantic:
    def __init__(self, s: Settings) -> None:
        from chonkie import SemanticChunker
        from chonkie.embeddings import BaseEmbeddings

        embedder = s.embedder
        tok = _chonkie_tokenizer(s)

        class Adapter(BaseEmbeddings):
            def embed(self, text: str) -> np.ndarray:
                return embedder.embed([text], kind="passage")[0]

            def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
                return list(embedder.embed(list(texts), kind="passage")) if texts else []

            @property
            def dimension(self) -> int:
                return int(embedder.dim)

            def similarity(self, u: np.ndarray, v: np.ndarray) -> np.float32:
                return np.float32(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v) + 1e-12))

            def get_tokenizer(self):
                return tok

        self.adapter = Adapter()
        self.cls = SemanticChunker
        self.size = s.size
        self.cache: dict[str, Any] = {}

    def _chunker(self, mode: str):
        if mode not in self.cache:
            kw: dict[str, Any] = {}
            if mode == "units":
                kw.update(delim=["\n"], min_characters_per_sentence=1)
            elif mode == "zh":
                kw.update(delim=["。", "！", "？", "；", ". ", "! ", "? ", "\n"], min_characters_per_sentence=6)
            self.cache[mode] = self.cls(embedding_model=self.adapter, chunk_size=self.size, **kw)
        return self.cache[mode]

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        mode = "units" if units else ("zh" if _zh(lang) else "default")
        return locate(text, [c.text for c in self._chunker(mode).chunk(text)])


class _Semchunk:
    def __init__(self, s: Settings) -> None:
        import semchunk

        self.fn = semchunk.chunk
        self.size = s.size
        self.counter = _token_counter(s)

    def chunk(self, text: str, lang: str, units: bool = False) -> Located:
        return locate(text, self.fn(text, chunk_size=self.size, token_counter=self.counter))


# A small English stop list for TextTiling (nltk's own list needs a corpus download).
_STOP = frozenset("""a about above after again against all am an and any are as at be because been before being
below between both but by can did do does doing down during each few for from further had has have having he
her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
now of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with you your yours yourself yourselves""".split())


class _TextTiling:
    """nltk's TextTiling over the units, one unit per paragraph (it only cuts at paragraph breaks)."""

    def __init__(self, s: Settings) -> None:
        from nltk.tokenize.texttiling import TextTilingTokenizer

        self.cls = TextTilingTokenizer
        self.failures = 0

    def segment(self, units: Sequence[str], lang: str, gold_count: int | None = None) -> np.ndarray:
        n = len(units)
        flat = [" ".join(u.split()) or "." for u in units]
        text = "\n\n".join(flat)
        # w (pseudo-sentence length in words) must fit short texts: 20 by default, less when short
        words = len(re.findall(r"\w+", text))
        w = max(3, min(20, words // 8))
        try:
            segs = self.cls(w=w, k=max(2, min(10, n // 4)), stopwords=_STOP).tokenize(text)
        except (ValueError, IndexError, ZeroDivisionError):
            self.failures += 1
            return np.zeros(0, dtype=np.int64)
        ends = np.cumsum([len(u) for u in flat]) + 2 * np.arange(n)  # end of unit i in `text`
        cuts = np.cumsum([len(x) for x in segs])[:-1]
        j = np.searchsorted(ends, cuts, side="left")
        j = np.clip(j, 0, n - 1)
        return np.unique(j[j <= n - 2])


def _memory(kind: str) -> Callable[[Settings], Any]:
    def make(s: Settings) -> Any:
        from ..memory.evaluate import make_runner

        return make_runner(kind, s)

    return make


# --------------------------------------------------------------------------- the registry

_SEG, _CH = "segmentation", "chunking"
_BOTH = frozenset({_SEG, _CH})


def _spec(name, group, tasks, requires, make, about, oracle=False, slow=False, lm=False) -> MethodSpec:
    return MethodSpec(name, group, frozenset(tasks), tuple(requires), make, about, oracle, slow, lm)


METHODS: dict[str, MethodSpec] = {m.name: m for m in [
    _spec("global", "logichunk", _BOTH, ["logichunk.signals.cohesion"], lambda s: _Global(s, False),
          "logichunk default: global boundary choice (DP) on model-free lexical cohesion; segmentation: "
          "segment_units, the Bayesian evidence of each topic's words with a price of log N per topic; chunking: "
          "chunk() as users run it"),
    _spec("global-scatter", "logichunk", {_SEG}, ["logichunk.signals.cohesion"], _GlobalScatter,
          "logichunk: the previous segmentation default, for comparison: scatter of the lexical rows, the "
          "permutation price raised with a long text's length"),
    _spec("global-whole", "logichunk", {_SEG}, ["logichunk.signals.cohesion"], _GlobalWholeVocabulary,
          "logichunk: global with every topic's prior over the whole text's vocabulary (before the "
          "neighbourhood window), for comparison on long texts (--end-to-end)"),
    _spec("global-embed", "logichunk", {_SEG}, ["logichunk.signals.cohesion"], lambda s: _Global(s, True),
          "logichunk: global boundary choice (DP) on the embedder's sentence vectors (--embedder), as many "
          "topics as the words' evidence finds"),
    _spec("entropy", "logichunk", _BOTH, ["logichunk.signals.entropy"], _entropy,
          "logichunk: entropy signal; segmentation = local peaks with the depth count rule; chunking = "
          "logic-chain cascade (no LLM), global choice"),
    _spec("entropy-local", "logichunk", {_CH}, ["logichunk.signals.entropy"], _entropy_local,
          "logichunk: the cascade with the earlier local rule (peaks merged weakest first)"),
    _spec("cliff", "logichunk", _BOTH, ["logichunk.signals.semantic"], _cliff,
          "logichunk: semantic cliffs (1 - cosine of adjacent sentence embeddings)"),
    _spec("fused", "logichunk", _BOTH, ["logichunk.signals.semantic"], _fused,
          "logichunk: entropy and semantic cliffs, each z-scored within the document, mixed"),
    _spec("ppl", "logichunk", _BOTH, ["logichunk.signals.lm"], _ppl,
          "logichunk: causal-LM perplexity (Meta-Chunking PPL); ~200 tokens/s on 2 cores, so not in 'all'",
          slow=True, lm=True),
    _spec("msp", "logichunk", _BOTH, ["logichunk.chunkers.meta"], _MSP,
          "logichunk: margin sampling of an instruct LM (Meta-Chunking MSP); one LM call per gap, not in 'all'",
          slow=True, lm=True),
    *[_spec(f"{kind}-{sel}", "logichunk", _BOTH, ["logichunk.chunkers.meta"],
            (lambda k, x: lambda s: _Meta(s, k, x))(kind, sel),
            f"logichunk: Meta-Chunking {kind.upper()} chunker at the target size with selection={sel!r} "
            f"({'per-point rule, dynamic merge' if sel == 'paper' else 'the LM signal as rewards of the global DP'}); "
            "segmentation: its cuts on the units; not in 'all'", slow=True, lm=True)
      for kind in ("ppl", "msp") for sel in ("paper", "global")],
    _spec("parent-child", "logichunk", {_CH}, ["logichunk.chunkers.parent_child"], _ParentChild,
          "logichunk: parent-child chunker (children scored; parents are a retrieval-time feature)"),
    _spec("fixed", "baseline", {_CH}, [], _fixed, "baseline: fixed size, no overlap"),
    _spec("recursive", "baseline", {_CH}, [], _recursive, "baseline: recursive separators, no overlap"),
    _spec("none", "baseline", {_SEG}, [], lambda s: _NoBoundaries(), "baseline: no boundary at all"),
    _spec("even", "baseline", {_SEG}, [], lambda s: _Even(), "baseline: equal segments, gold count (oracle)", True),
    _spec("langchain-recursive", "peer", {_CH}, ["langchain_text_splitters"], _LangchainRecursive,
          "LangChain RecursiveCharacterTextSplitter (our token counter)"),
    _spec("langchain-semantic", "peer", _BOTH, ["langchain_experimental"], _LangchainSemantic,
          "LangChain SemanticChunker (percentile breakpoints; our embedder)"),
    _spec("llamaindex-semantic", "peer", _BOTH, ["llama_index.core"], _LlamaSemantic,
          "LlamaIndex SemanticSplitterNodeParser (95th percentile; our embedder)"),
    _spec("chonkie-recursive", "peer", {_CH}, ["chonkie"], _ChonkieRecursive,
          "Chonkie RecursiveChunker (our token counter)"),
    _spec("chonkie-semantic", "peer", _BOTH, ["chonkie"], _ChonkieSemantic,
          "Chonkie SemanticChunker (our embedder)"),
    _spec("semchunk", "peer", {_CH}, ["semchunk"], _Semchunk, "semchunk (our token counter)"),
    _spec("texttiling", "peer", {_SEG}, ["nltk"], _TextTiling, "nltk TextTilingTokenizer (Hearst 1997)"),
    _spec("memory-cosine", "baseline", {_SEG}, ["logichunk.memory"], _memory("memory-cosine"),
          "baseline: conversation memory's plain cosine threshold on adjacent turns (calibrated)"),
    _spec("memory-online", "logichunk", {_SEG}, ["logichunk.memory"], _memory("memory-online"),
          "logichunk: conversation memory, immediate decisions (heuristic, screen, calibrated rule)"),
    _spec("memory", "logichunk", {_SEG}, ["logichunk.memory"], _memory("memory"),
          "logichunk: conversation memory, full pipeline (immediate decisions + lookahead review)"),
    _spec("memory-lm", "logichunk", {_SEG}, ["logichunk.memory"], _memory("memory-lm"),
          "logichunk: conversation memory with the LM arbiter (packaged Qwen2.5-Coder-0.5B-Instruct, YES/NO log-probs)", slow=True,
          lm=True),
    _spec("memory-lm-online", "logichunk", {_SEG}, ["logichunk.memory"], _memory("memory-lm-online"),
          "logichunk: conversation memory with the LM arbiter, immediate decisions only", slow=True, lm=True),
    _spec("memory-llm", "logichunk", {_SEG}, ["logichunk.memory"], _memory("memory-llm"),
          "logichunk: conversation memory with the LLM arbiter ($LOGICHUNK_MEMORY_LLM endpoint)", slow=True),
    _spec("memory-llm-online", "logichunk", {_SEG}, ["logichunk.memory"], _memory("memory-llm-online"),
          "logichunk: conversation memory with the LLM arbiter, immediate decisions only", slow=True),
]}

# Install hints for missing peers (the `eval` extra pins them all).
INSTALL = {
    "langchain_text_splitters": "langchain-text-splitters", "langchain_experimental": "langchain-experimental",
    "llama_index.core": "llama-index-core", "chonkie": "chonkie", "semchunk": "semchunk", "nltk": "nltk",
}


_GROUPS = {"peers": "peer", "logichunk": "logichunk", "baselines": "baseline"}


def method_names(task: str) -> list[str]:
    return [n for n, m in METHODS.items() if task in m.tasks]


def select_methods(arg: str | None, task: str) -> list[MethodSpec]:
    """``all``/None: every method for the task except slow ones (PPL: name it); else a comma list of
    names and groups (``logichunk``, ``baselines``, ``peers``)."""
    if not arg or arg.strip() == "all":
        return [METHODS[n] for n in method_names(task) if not METHODS[n].slow]
    out = []
    for name in (x.strip() for x in arg.split(",")):
        if not name:
            continue
        if name in _GROUPS:
            out.extend(m for m in METHODS.values() if task in m.tasks and m.group == _GROUPS[name] and not m.slow)
            continue
        if name not in METHODS:
            raise LogichunkError(f"unknown method {name!r}; known: {', '.join(METHODS)} (or all, peers, "
                                 f"logichunk, baselines)")
        if task not in METHODS[name].tasks:
            raise LogichunkError(f"method {name!r} does not apply to {task} (it does: "
                                 f"{', '.join(sorted(METHODS[name].tasks))})")
        out.append(METHODS[name])
    return list(dict.fromkeys(out))


def build(spec: MethodSpec, s: Settings) -> Any:
    """The runner of a method, or :class:`Unavailable` with a one-line note."""
    for mod in spec.requires:
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            hint = f" (pip install {INSTALL[mod]}, or logichunk[eval])" if mod in INSTALL else ""
            raise Unavailable(f"{spec.name}: {mod} is not installed{hint}")
    try:
        return spec.make(s)
    except Unavailable:
        raise
    except ImportError as e:
        raise Unavailable(f"{spec.name}: {e}") from None


def sizes_of(spans: np.ndarray, meter: Meter) -> np.ndarray:
    if spans.size == 0:
        return np.zeros(0, dtype=np.int64)
    return meter.sizes(spans[:, 0], spans[:, 1])

"""Exact token sizes: one place that turns a user's tokenizer into a :class:`~.measure.Measure`.

Why one module: a RAG user sizes chunks in the tokens of *their* embedder or LLM, and names that
tokenizer in many ways (``cl100k_base``, a ``tokenizer.json``, a Hugging Face folder or hub id, the
configured embedder, an object, a function). Each is resolved here to a :class:`TokenMeasure`, which
tokenises a text **once** with character offsets; every size check after that is a prefix-sum lookup.

How a token is counted, and why cuts snap: a token covers ``[start, end)`` of the text (a BPE token
often starts with the space before its word: ``" Next"``). A token counts at its **end**: the
prefix is ``prefix[i]`` = tokens that end at or before ``i``. A cut strictly inside a token would give
both sides a piece of it, so no cut may stay there: :meth:`TokenMeasure.snap` moves such a position
back to the token's start. Because nothing ends between a token's start and a position inside it,
``prefix`` is equal at both, so snapping never changes a measured size — chunkers may compute cuts on
any offsets and snap them at the end (:func:`logichunk.chunkers.snap.snap_tree`), and every chunk then
holds whole tokens only, as many as it was measured to hold. Tokens whose character ranges overlap (byte
pieces of one character) form one group that is never cut.

Sizes are those of the text tokenised as a whole; a chunk tokenised alone can differ where the
tokenizer looks across the cut (BPE pre-tokenisation, a leading metaspace), which the property tests
check against each tokenizer itself. Special tokens (BOS/EOS, ``[CLS]``) are not counted: leave room
for them in the limit (E5 reads 512 tokens, two of them specials: use 510).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .. import hub
from ..errors import InputError, ModelUnavailable, first_line
from .cache import text_cache
from .charclass import cut_allowed
from .measure import Measure, get_measure, piece, whole_numbers

__all__ = ["TIKTOKEN_FILES", "TiktokenEncode", "TokenMeasure", "TokenSpans", "measure_for", "resolve_tokenizer"]

#: tiktoken encodings we load offline: the file inside ``llama-index-core``'s bundled cache (named by
#: tiktoken's own cache key, the sha1 of the download URL) and its sha256, the one tiktoken itself pins.
TIKTOKEN_FILES: dict[str, tuple[str, str]] = {
    "cl100k_base": ("9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": ("fb374d419588a4632f3f557e76b4b70aebbca790",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}
_INSTALL = "pip install 'logichunk[tokenizers]'"
SpansFn = Callable[[str], Any]
_PROBES = ("中文句子，第二句。", "Hello (world), next-line.\nNew 12.5 words", "「引號」和 English 混合", "a  b\tc")
#: what a tokenizer may be, for the errors that refuse something else
FORMS = ("pass the tokenizer object (a tiktoken Encoding, a tokenizers.Tokenizer, a transformers tokenizer) or its "
         "name (cl100k_base, a tokenizer.json), or a callable returning each token's (start, end) character offsets")


@dataclass(frozen=True)
class TokenSpans:
    """Token groups of one text: group ``k`` covers ``[starts[k], ends[k])`` and holds ``counts[k]``
    tokens (1 unless tokens overlapped). Groups are sorted and disjoint; gaps between them (text no
    token covers, like the spaces a WordPiece tokenizer drops) are free to cut."""

    starts: np.ndarray
    ends: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_offsets(cls, starts: Any, ends: Any, n: int, who: str = "the tokenizer", piece: str = "") -> TokenSpans:
        """The groups of tokens at character offsets ``[starts[k], ends[k])`` of a text of ``n`` characters: the
        one place a tokenizer's offsets are read and checked. A refusal is one line naming ``who`` gave them, the
        first bad token and the text it was given (``piece``, an excerpt; else its length)."""
        where = piece or f"a text of {n} characters"
        s = whole_numbers(starts, who, "start offset", "for token", where).reshape(-1)
        e = whole_numbers(ends, who, "end offset", "for token", where).reshape(-1)
        if s.size != e.size:
            raise InputError(f"{who} gave {s.size} starts and {e.size} ends for {where}")
        bad = (s < 0) | (e > n) | (e < s)  # (a token outside the text, or ending before it starts: a broken
        if bad.any():  # adapter, whose sizes would mean nothing — one huge token made every limit hold)
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{who} gave token {i} the offsets ({int(s[i])}, {int(e[i])}) in {where}: "
                             "offsets must be 0 <= start <= end <= len(text)")
        s, e = np.clip(s, 0, n), np.clip(e, 0, n)
        keep = e > s  # special tokens and tokens a normaliser removed cover nothing
        s, e = s[keep], e[keep]
        if s.size == 0:
            z = np.zeros(0, np.int64)
            return cls(z, z, z)
        order = np.lexsort((e, s))
        s, e = s[order], e[order]
        reach = np.maximum.accumulate(e)
        new = np.ones(s.size, dtype=bool)
        new[1:] = s[1:] >= reach[:-1]  # a group starts where no earlier token reaches
        first = np.flatnonzero(new)
        last = np.concatenate((first[1:], [s.size])) - 1
        return cls(s[first], reach[last], np.diff(np.concatenate((first, [s.size]))).astype(np.int64))

    def whole_characters(self, text: str) -> TokenSpans:
        """These groups, each that starts where no cut may fall (a combining mark, a vowel sign, the second
        half of a flag: :func:`~.charclass.cut_allowed`) joined to the one before it. A byte-level tokenizer
        starts tokens inside a character (cl100k cuts Thai and Devanagari between a consonant and its
        vowel or tone mark), and a chunk edge moved to a token's start must not split what a reader sees
        as one character."""
        if self.starts.size < 2 or text.isascii() and "\r\n" not in text:
            return self
        bad = ~cut_allowed(text)[self.starts[1:]]
        if not bad.any():
            return self
        first = np.flatnonzero(np.concatenate(([True], ~bad)))  # the groups that open a joined one
        last = np.concatenate((first[1:], [self.starts.size])) - 1
        return TokenSpans(self.starts[first], self.ends[last], np.add.reduceat(self.counts, first))


@dataclass(frozen=True, eq=False)
class TokenMeasure:
    """A :class:`~.measure.Measure` in the tokens of a real tokenizer. ``spans_fn(text)`` returns the
    tokens' character ``(starts, ends)``; ``label`` names the tokenizer (``cl100k_base``, a path...)."""

    spans_fn: SpansFn = field(repr=False)
    label: str = "callable"
    name: str = "tokens"
    #: the tokenizer object itself (for adapters that want to hand it on), if there is one
    tokenizer: Any = field(default=None, repr=False, compare=False)
    _cache: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_cache", text_cache(maxsize=2)(self._spans))

    def _spans(self, text: str) -> TokenSpans:
        return self._read(text).whole_characters(text)

    def _read(self, text: str) -> TokenSpans:
        out = self.spans_fn(text)
        if isinstance(out, TokenSpans):
            return out
        arr = np.asarray(out)
        who, where = f"tokenizer {self.label!r}", piece(text)
        if arr.ndim == 2 and arr.shape[1] == 2:
            return TokenSpans.from_offsets(arr[:, 0], arr[:, 1], len(text), who, where)
        if isinstance(out, tuple) and len(out) == 2:
            return TokenSpans.from_offsets(out[0], out[1], len(text), who, where)
        if arr.ndim == 1 and (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
            # start offsets only: a token reaches the next one's start. Token ids are whole numbers too (what
            # tiktoken's and Hugging Face's ``encode`` return): read as offsets they gave a "100-token" chunk
            # thousands of tokens, so numbers that cannot be starts (out of order, past the text) are refused
            s = arr.astype(np.int64)
            if s.size and (s[0] < 0 or s[-1] >= len(text) or (s[1:] <= s[:-1]).any()):
                raise InputError(f"tokenizer {self.label!r} returned {s.size} numbers that are not token start "
                                 f"offsets (token ids?): {FORMS}")
            return TokenSpans.from_offsets(s, np.append(s[1:], len(text))[: s.size], len(text), who, where)
        raise InputError(f"tokenizer {self.label!r} must return (start, end) character offsets per token: {FORMS}")

    def spans(self, text: str) -> TokenSpans:
        """The token groups of ``text`` (computed once per text, then cached)."""
        return self._cache(text)

    def prefix(self, text: str) -> np.ndarray:
        """``prefix[i]``: tokens that end at or before offset ``i`` (a group counts at its end)."""
        g = self.spans(text)
        per = np.zeros(len(text) + 1, dtype=np.int64)
        np.add.at(per, g.ends, g.counts)
        return np.cumsum(per)

    def cut_ok(self, text: str) -> np.ndarray:
        """``ok[i]`` is False where offset ``i`` lies strictly inside a token group."""
        g = self.spans(text)
        d = np.zeros(len(text) + 2, dtype=np.int64)
        np.add.at(d, g.starts + 1, 1)
        np.add.at(d, g.ends, -1)
        return np.cumsum(d)[: len(text) + 1] == 0

    def snap(self, text: str, offsets: Any) -> np.ndarray:
        """Each offset, moved back to the start of the token group it lies strictly inside (others
        unchanged). Measured sizes are the same before and after (see the module docstring)."""
        g = self.spans(text)
        off = np.asarray(offsets, dtype=np.int64)
        k = np.searchsorted(g.starts, off, side="right") - 1  # the last group starting at or before
        kk = np.maximum(k, 0)
        inside = (k >= 0) & (off > g.starts[kk]) & (off < g.ends[kk]) if g.starts.size else np.zeros(off.shape, bool)
        return np.where(inside, g.starts[kk] if g.starts.size else off, off)

    def count(self, text: str) -> int:
        """Tokens of ``text`` tokenised on its own (what the property tests compare chunks with)."""
        return int(self.spans(text).counts.sum())

    @property
    def overhead(self) -> int:
        """Tokens a piece tokenised on its own may hold beyond its share of the whole text's tokens:
        0 for tiktoken; 1 for a tokenizer that opens every text with a metaspace (SentencePiece, E5),
        which a chunk starting inside a Chinese sentence gets and its share did not have. Chunkers run
        with each limit lowered by this much, so a chunk tokenised alone stays within the limit.
        Found once per tokenizer by cutting a few probe texts at every token edge."""
        got = self.__dict__.get("_overhead")
        if got is None:
            got = 0
            for probe in _PROBES:
                g = self.spans(probe)
                for k in g.starts[1:].tolist():
                    for piece, inside in ((probe[:k], int(g.counts[g.ends <= k].sum())),
                                          (probe[k:], int(g.counts[g.starts >= k].sum()))):
                        got = max(got, self.count(piece) - inside)
            object.__setattr__(self, "_overhead", got)
        return got


# --------------------------------------------------------------------------- tiktoken


def _bundled_tiktoken_file(name: str) -> Path | None:
    """The encoding's file bundled with llama-index-core, its folder found without importing the package
    (importing it cost ~1.7 s of CPU in every process that sized in tokens, a Ray worker or the CLI's)."""
    if name not in TIKTOKEN_FILES:
        return None
    try:
        spec = importlib.util.find_spec("llama_index.core")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    path = folder / "_static" / "tiktoken_cache" / TIKTOKEN_FILES[name][0]
    return path if path.is_file() else None


_TIKTOKEN_LOCK = threading.Lock()


@lru_cache(maxsize=8)
def _tiktoken_encoding(name: str) -> Any:
    try:
        import tiktoken
    except ImportError:
        raise ModelUnavailable(f"tokenizer {name!r} needs tiktoken: {_INSTALL}") from None
    path = _bundled_tiktoken_file(name)
    if path is not None:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != TIKTOKEN_FILES[name][1]:
            raise ModelUnavailable(f"the bundled {name} file {path} has sha256 {digest}, expected "
                                   f"{TIKTOKEN_FILES[name][1]}: reinstall {_INSTALL}")
        # tiktoken reads its cache folder from the environment; point it at the bundled files for this
        # one load (tiktoken checks the same sha256 again before it builds the encoding)
        with _TIKTOKEN_LOCK:
            old = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = str(path.parent)
            try:
                return tiktoken.get_encoding(name)
            finally:
                if old is None:
                    os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = old
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # a download that failed offline, mostly
        raise ModelUnavailable(f"tiktoken encoding {name!r} is not available offline ({type(exc).__name__}); "
                               f"cl100k_base and o200k_base are, with {_INSTALL}") from None


@dataclass(frozen=True)
class TiktokenEncode:
    """``encode`` of the tiktoken encoding ``name`` with tiktoken's special-token options (its defaults): a
    special token counts as the caller's own ``encode`` counts it. Named, not bound, so that a splitter
    holding it pickles and loads offline (a bound ``enc.encode`` pickles its encoding, which tiktoken then
    downloads again in the new process)."""

    name: str
    allowed_special: Any = frozenset()
    disallowed_special: Any = "all"

    def __call__(self, text: str) -> list[int]:
        return _tiktoken_encoding(self.name).encode(text, allowed_special=self.allowed_special,
                                                    disallowed_special=self.disallowed_special)


@lru_cache(maxsize=8)
def _byte_lengths(enc: Any) -> np.ndarray:
    """UTF-8 length of every token id of a tiktoken encoding (looked up, not decoded, per text)."""
    out = np.zeros(enc.max_token_value + 1, dtype=np.int64)
    for i in range(out.size):
        try:
            out[i] = len(enc.decode_single_token_bytes(i))
        except Exception:  # ids with no token (gaps in the vocabulary)
            pass
    return out


def tiktoken_spans(enc: Any, encode: Callable[[str], Any] | None = None) -> SpansFn:
    """Character spans of a tiktoken encoding's tokens, from token byte lengths: a token covers the
    characters its bytes touch (two tokens splitting one character overlap, and form one group).
    ``encode`` gives the ids (default ``enc.encode_ordinary``: special-token text is ordinary text; the
    user's ``partial(enc.encode, allowed_special=...)`` counts a special token as one, as they count it)."""
    lengths = _byte_lengths(enc)
    encode = encode or enc.encode_ordinary

    def spans(text: str) -> tuple[np.ndarray, np.ndarray]:
        if not text:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        clean = _no_surrogates(text)
        try:
            ids = np.asarray(encode(clean), dtype=np.int64)
        except ValueError as exc:  # special-token text that disallowed_special refuses (a paragraph of advice)
            raise InputError(f"tokenizer {enc.name}: {first_line(exc)} (allowed_special= counts it as one token, "
                             "disallowed_special=() as ordinary text)") from None
        raw = clean.encode("utf-8")
        lead = (np.frombuffer(raw, np.uint8) & 0xC0) != 0x80
        char_of = np.cumsum(lead) - 1  # byte -> character index
        b_end = np.cumsum(lengths[ids])
        b_start = b_end - lengths[ids]
        return char_of[b_start], char_of[b_end - 1] + 1

    return spans


_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_surrogates(text: str) -> str:
    """``text`` with lone surrogates (which no tokenizer accepts) read as U+FFFD, one for one, so
    offsets stay those of the text (for measuring only; the text itself is never changed)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


# --------------------------------------------------------------------------- Hugging Face tokenizers


def hf_spans(tok: Any) -> SpansFn:
    """Character spans of a ``tokenizers.Tokenizer`` (no specials, no truncation, no padding)."""
    try:
        tok = tok.__class__.from_str(tok.to_str())  # a copy: the caller's truncation stays as it was
    except Exception:
        pass
    for off in ("no_truncation", "no_padding"):
        if hasattr(tok, off):
            getattr(tok, off)()

    def spans(text: str) -> np.ndarray:
        if not text:
            return np.zeros((0, 2), np.int64)
        enc = tok.encode(_no_surrogates(text), add_special_tokens=False)
        return np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)

    return spans


def _hf_from_path(path: Path) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ModelUnavailable(f"a tokenizer.json needs the tokenizers library: {_INSTALL}") from None
    file = path / "tokenizer.json" if path.is_dir() else path
    if not file.is_file():
        raise InputError(f"no tokenizer.json in {path}")
    try:
        return Tokenizer.from_file(str(file))
    except Exception as exc:
        raise InputError(f"cannot read tokenizer {file}: {first_line(exc)}") from None


def _hf_from_hub(repo: str) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ModelUnavailable(f"a hub tokenizer needs the tokenizers library: {_INSTALL}") from None
    local = hub.cache_only(repo, "tokenizer.json")  # (fails at once where the hub cannot be reached)
    try:
        if local:
            from huggingface_hub import hf_hub_download

            return Tokenizer.from_file(hf_hub_download(repo, "tokenizer.json", local_files_only=True))
        return Tokenizer.from_pretrained(repo)
    except Exception as exc:
        raise ModelUnavailable(f"tokenizer {repo!r} could not be loaded from the Hugging Face hub"
                               f"{' cache (HF_HUB_OFFLINE=1)' if hub.offline() else ' cache' if local else ''}: {type(exc).__name__}") from None


# --------------------------------------------------------------------------- resolution


def _known_tiktoken(name: str) -> bool:
    if name in TIKTOKEN_FILES:
        return True
    try:
        import tiktoken
    except ImportError:
        return False
    return name in tiktoken.list_encoding_names()


@lru_cache(maxsize=16)
def _resolve_name(spec: str) -> TokenMeasure:
    if _known_tiktoken(spec):
        enc = _tiktoken_encoding(spec)
        return TokenMeasure(tiktoken_spans(enc), label=spec, tokenizer=enc)
    path = Path(spec).expanduser()
    if path.exists():
        tok = _hf_from_path(path)
        return TokenMeasure(hf_spans(tok), label=str(path), tokenizer=tok)
    if spec.endswith(".json") or spec.startswith((".", "/", "~")) or spec.count("/") > 1 or "\\" in spec:
        raise InputError(f"tokenizer file not found: {spec}")  # (a path: no name of ours, no hub id looks so)
    if spec.count("/") == 1 and " " not in spec:
        tok = _hf_from_hub(spec)
        return TokenMeasure(hf_spans(tok), label=spec, tokenizer=tok)
    raise InputError(f"unknown tokenizer {spec!r}: give a tiktoken encoding (cl100k_base, o200k_base), a "
                     "tokenizer.json or Hugging Face folder, a hub id (org/name), 'embedder', or a callable")


def resolve_tokenizer(spec: Any, *, embedder: Any = None) -> TokenMeasure:
    """A :class:`TokenMeasure` for ``spec``: a tiktoken encoding name; a path to a ``tokenizer.json`` or
    a folder holding one; a Hugging Face hub id (``org/name``; with ``HF_HUB_OFFLINE=1`` only the local
    cache is read); ``"embedder"`` (the tokenizer of ``embedder``, which must expose
    ``token_spans(text)``); a ``tiktoken.Encoding``, a ``tokenizers.Tokenizer`` or a transformers fast
    tokenizer; a :class:`TiktokenEncode`; or any callable ``fn(text)`` returning ``(start, end)`` character
    offsets per token (or token start offsets, strictly increasing). A tokenizer's own ``encode``
    (``enc.encode``, ``tok.encode``, LlamaIndex's ``get_tokenizer()``, a ``functools.partial`` of one)
    returns token ids, not places: it is read as the tokenizer that owns it. Unknown or unloadable: a
    one-line :class:`~logichunk.errors.InputError` or :class:`~logichunk.errors.ModelUnavailable`."""
    if isinstance(spec, TokenMeasure):
        return spec
    if isinstance(spec, str):
        if spec == "embedder":
            return embedder_tokens(embedder)
        return _resolve_name(spec.strip())
    if isinstance(spec, Path):
        return _resolve_name(str(spec))
    if _library(spec) == "tiktoken" and hasattr(spec, "encode_ordinary"):
        return TokenMeasure(tiktoken_spans(spec), label=getattr(spec, "name", "tiktoken"), tokenizer=spec)
    if isinstance(spec, TiktokenEncode):
        enc = _tiktoken_encoding(spec.name)
        return TokenMeasure(tiktoken_spans(enc, spec), label=spec.name, tokenizer=enc)
    if _library(spec) == "tokenizers" and hasattr(spec, "encode"):
        return TokenMeasure(hf_spans(spec), label="tokenizers", tokenizer=spec)
    backend = getattr(spec, "backend_tokenizer", None)  # a transformers *Fast tokenizer
    if backend is not None:
        return TokenMeasure(hf_spans(backend), label=getattr(spec, "name_or_path", "transformers") or "transformers",
                            tokenizer=spec)
    if hasattr(spec, "token_spans") or hasattr(spec, "inner"):  # an embedder (or a cache around one)
        return embedder_tokens(spec)
    owned = _owner_of(spec)
    if owned is not None:
        return owned
    if callable(spec):
        m = TokenMeasure(spec, label=getattr(spec, "__name__", "callable"), tokenizer=spec)
        try:  # once, on a short text: a callable giving ids or words fails here, not at the first document
            m._read(_PROBES[1])
        except InputError:
            raise
        except Exception as exc:
            raise InputError(f"tokenizer {m.label!r} failed on a short text: {type(exc).__name__}: "
                             f"{first_line(exc)}") from None
        return m
    raise InputError(f"not a tokenizer: {type(spec).__name__}")


def _library(obj: Any) -> str:
    """The top-level package of ``obj``'s class (``tiktoken``, ``tokenizers``, ``transformers``...)."""
    return type(obj).__module__.split(".")[0]


_ENCODERS = ("encode", "encode_ordinary", "tokenize")


def _owner_of(fn: Any) -> TokenMeasure | None:
    """The measure of the tokenizer whose ``encode`` (or ``encode_ordinary``, ``tokenize``) ``fn`` is, bound
    or in a ``functools.partial`` with keywords only; None for any other callable. Why: those return token
    ids or strings, which say how many tokens but not where they lie; their owner tells both. A tiktoken
    ``encode`` keeps the partial's ``allowed_special``/``disallowed_special`` (LlamaIndex's
    ``get_tokenizer()`` is ``partial(enc.encode, allowed_special="all")``): a special token counts as one,
    as the caller counts it. Hugging Face's specials are never counted (see the module docstring)."""
    keywords: dict[str, Any] = {}
    if isinstance(fn, functools.partial) and not fn.args:
        keywords, fn = dict(fn.keywords), fn.func
    owner, name = getattr(fn, "__self__", None), getattr(fn, "__name__", "")
    if owner is None or name not in _ENCODERS:
        return None
    if _library(owner) == "tiktoken" and hasattr(owner, "encode_ordinary"):
        if name == "encode_ordinary":
            return resolve_tokenizer(owner)
        encode = functools.partial(owner.encode, **keywords)
        return TokenMeasure(tiktoken_spans(owner, encode), label=getattr(owner, "name", "tiktoken"), tokenizer=owner)
    if _library(owner) == "tokenizers" or getattr(owner, "backend_tokenizer", None) is not None:
        return resolve_tokenizer(owner)
    return None


def embedder_tokens(embedder: Any) -> TokenMeasure:
    """The configured embedder's own tokenizer, so chunks never exceed what it reads."""
    if embedder is None:
        raise InputError("tokenizer 'embedder' needs an embedder: embedder= in Python, --embedder on the command line")
    fn, inner = getattr(embedder, "token_spans", None), embedder
    while fn is None and getattr(inner, "inner", None) is not None:  # a cache around the model
        inner = inner.inner
        fn = getattr(inner, "token_spans", None)
    if fn is None:
        raise InputError(f"the embedder {getattr(embedder, 'model_id', type(embedder).__name__)} exposes no "
                         "tokenizer; name one with --tokenizer (a tiktoken encoding or a tokenizer.json)")
    return TokenMeasure(fn, label=f"embedder:{getattr(embedder, 'model_id', type(embedder).__name__)}",
                        tokenizer=embedder)


def measure_for(unit: str | Measure = "chars", tokenizer: Any = None, *, embedder: Any = None) -> str | Measure:
    """The unit a chunker runs with: ``unit`` as given, or the tokenizer's exact tokens when one is
    named (``unit`` must then be ``"tokens"``, or the default ``"chars"`` which a tokenizer overrides)."""
    if tokenizer is None:
        get_measure(unit)
        return unit
    if not (isinstance(unit, str) and unit in ("tokens", "chars")):
        raise InputError(f"a tokenizer measures tokens; it cannot size in {getattr(unit, 'name', unit)!r}")
    return resolve_tokenizer(tokenizer, embedder=embedder)


def fit_limit(limit: int, unit: str | Measure) -> int:
    """The limit a chunker runs with so a chunk tokenised on its own stays within ``limit``
    (:attr:`TokenMeasure.overhead` less; at least 1, so a limit of 1 with an overhead of 1 cannot be
    kept: such a chunk holds one token in context and two alone)."""
    over = unit.overhead if isinstance(unit, TokenMeasure) else 0
    return max(1, int(limit) - over)


def unit_label(unit: str | Measure) -> str:
    """A unit as reports name it: ``chars``, ``tokens``, ``tokens:cl100k_base``."""
    if isinstance(unit, str):
        return unit
    return f"{unit.name}:{unit.label}" if isinstance(unit, TokenMeasure) else unit.name


def offsets_of(seq: Sequence[tuple[int, int]]) -> np.ndarray:
    """``[(start, end), ...]`` as an ``(n, 2)`` array (for callables written by hand)."""
    return np.asarray(seq, dtype=np.int64).reshape(-1, 2)

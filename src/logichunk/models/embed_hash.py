"""A model-free embedder: signed feature hashing of character and word n-grams.

Why it exists: every model-backed part of logichunk needs a fallback that works on a bare install
(numpy only), in any process, with identical results — so semantic cliffs, indexes and caches keep
working (less well) without a model. Features:

* CJK runs (Han, kana, Hangul): character 1-, 2- and 3-grams — Chinese has no spaces, and shared
  bigrams are the cheapest good proxy for shared words;
* other scripts: whole words plus character 3- and 4-grams of ``<word>`` (fastText style), which
  match inflections (``chunk`` / ``chunking``) and survive typos.

Each feature is hashed with a 64-bit polynomial hash over code points and a splitmix64 finaliser —
never Python's salted ``hash()`` — into ``dim`` buckets with a sign bit, so unrelated texts have a
cosine near 0 rather than a positive bias. A few very frequent function words/characters count less.
Everything is vectorised over the whole batch (one code-point array, ``np.bincount`` to accumulate),
memory is bounded by ``batch_size`` x ``dim`` whatever the vocabulary, and the vectors do not depend
on which other texts share the batch (so they can be cached).

Traditional and simplified Chinese are one text to it (version 2, ``hash-v2-d1024``): after NFKC (which
already reads full-width ``ＭＱＴＴ２０２６`` as ``mqtt2026``) each traditional Han character is read as its
simplified one (:func:`~logichunk.text.han_fold.fold_codes`, the table BM25 folds by), so ``員工曠工`` and
``员工旷工`` are one vector and a simplified question finds a traditional passage (DRCD, simplified questions:
vectors' recall@5 0.63 → 0.94; bench/QUALITY.md, thirty-seventh session). The table is a file shipped with the
package, not OpenCC read at run time: a store embedded where OpenCC is installed and searched where it is not (or
the reverse) would otherwise get other vectors without a word (why a file: :mod:`logichunk.text.han_fold`).
Version 1 (``hash-v1-d…``, the characters as written) stays buildable, ``hash-v1[:DIM]``, bit for bit, for the
stores embedded with it: a model id names its vectors, and a store's are never silently read by another version
(``logichunk ingest --reembed --embedder hash``, no paths needed, moves a project to the new one).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from .. import native
from ..errors import InputError
from ..hashing import splitmix64
from ..text.charclass import ALNUM, CJK, class_table
from ..text.han_fold import fold_codes
from .embedding import EmbedKind

__all__ = ["HashEmbedder", "hash_id", "hash_spec"]

_P = np.uint64(0x100000001B3)  # odd multiplier (FNV-64 prime)
_LT = 0x110001  # word-begin marker: beyond Unicode, so it never collides with a character
_GT = 0x110002  # word-end marker

# Feature families: a distinct seed each, so a CJK unigram and a Latin word never share a hash.
_SEED = {"cjk1": 0x9E3779B97F4A7C15, "cjk2": 0xC2B2AE3D27D4EB4F, "cjk3": 0x165667B19E3779F9,
         "word": 0xD6E8FEB86659FD93, "gram3": 0xFF51AFD7ED558CCD, "gram4": 0xC4CEB9FE1A85EC53}

_STOP_EN = ("a an and are as at be been but by for from has have he her his i in is it its of on or "
            "she that the their them there they this to was we were which will with you your not do does "
            "did so if then than").split()
_STOP_ZH = "的了是在和与及也就都而又或之其这那个们我你他她它着吗呢吧啊把被对从以为于"


def _ngram_hash(codes: np.ndarray, starts: np.ndarray, n: int, seed: int) -> np.ndarray:
    h = np.full(starts.size, seed, dtype=np.uint64)
    for k in range(n):
        h = h * _P + codes[starts + k]
    return splitmix64(h)


class _Features:
    """Flat (row, hash, weight) triples for a batch, accumulated family by family."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.hashes: list[np.ndarray] = []
        self.weights: list[np.ndarray] = []

    def add(self, rows: np.ndarray, hashes: np.ndarray, weights: np.ndarray | float) -> None:
        if rows.size:
            self.rows.append(rows)
            self.hashes.append(hashes)
            self.weights.append(np.broadcast_to(np.asarray(weights, dtype=np.float32), rows.shape))


_SEEDS = np.array([_SEED[f] for f in ("cjk1", "cjk2", "cjk3", "word", "gram3", "gram4")], dtype=np.uint64)


@lru_cache(maxsize=4)
def _family_weights(weights: tuple[tuple[str, float], ...]) -> np.ndarray:
    """Each family's weight as :func:`_features` computes it in float32 (cjk1, cjk2, cjk3, word, gram3, gram4),
    then the same for a stop character or word (cjk1's and the word families'; the others unused): the C pass
    must add the very float32 values the numpy passes add."""
    W = dict(weights)
    stop = np.array([False, True])
    c1 = np.full(2, W["cjk1"], dtype=np.float32)
    c1[stop] *= W["stop"]
    ww = np.where(stop, W["stop"], 1.0).astype(np.float32)
    word, g3, g4 = ww * W["word"], ww * W["gram3"], ww * W["gram4"]
    c2, c3 = np.full(1, W["cjk2"], dtype=np.float32), np.full(1, W["cjk3"], dtype=np.float32)
    return np.array([c1[0], c2[0], c3[0], word[0], g3[0], g4[0], c1[1], 0, 0, word[1], g3[1], g4[1]], dtype=np.float32)


def _prepare(texts: Sequence[str], fold: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """NFKC + lower-case (+ traditional Han read as simplified where ``fold``), joined with NUL separators;
    returns (code points as uint32, row per position)."""
    norm = [unicodedata.normalize("NFKC", t).lower().replace("\x00", " ") for t in texts]
    joined = "\x00" + "\x00".join(norm) + "\x00"
    cp = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if fold and not joined.isascii():
        cp = fold_codes(cp)
    row = np.cumsum(cp == 0) - 1
    return cp, row


def _classify(cp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cls = class_table()[np.minimum(cp, 0x10FFFF)]
    cjk = (cls & CJK) != 0
    return cjk, ((cls & ALNUM) != 0) & ~cjk


def _words(codes: np.ndarray, row: np.ndarray, word: np.ndarray):
    """Compact the word characters, wrap each word in ``<...>``; returns the extended code array,
    the word id of every extended position, each word's row and each word's whole-word hash."""
    wpos = np.flatnonzero(word)
    prev_word = np.concatenate(([False], word[:-1]))
    s_idx = np.flatnonzero(~prev_word[wpos])
    e_idx = np.concatenate((s_idx[1:], [wpos.size]))
    word_row = row[wpos[s_idx]]
    # Stable insertion: where one word ends and the next begins, '>' goes before '<'.
    ext = np.insert(codes[wpos], np.concatenate((e_idx, s_idx)),
                    np.concatenate((np.full(e_idx.size, _GT, np.uint64), np.full(s_idx.size, _LT, np.uint64))))
    is_lt = ext == _LT
    wid = np.cumsum(is_lt) - 1
    ext_start = np.flatnonzero(is_lt)
    # Whole-word hash: sum of code * P**position over each word (uint64 arithmetic wraps).
    pos = np.arange(ext.size) - ext_start[wid]
    pows = np.cumprod(np.concatenate(([np.uint64(1)], np.full(int(pos.max()), _P, dtype=np.uint64))))
    whash = splitmix64(np.add.reduceat(ext * pows[pos], ext_start) ^ np.uint64(_SEED["word"]))
    return ext, wid, word_row, whash


@lru_cache(maxsize=1)
def _stop_tables() -> tuple[np.ndarray, np.ndarray]:
    """Code points of Chinese function characters; whole-word hashes of English function words
    (hashed by the very code path used for text, so they match)."""
    zh = np.sort(np.frombuffer(_STOP_ZH.encode("utf-32-le"), dtype=np.uint32))
    cp, row = _prepare([" ".join(_STOP_EN)])
    _, word = _classify(cp)
    whash = _words(cp.astype(np.uint64), row, word)[3]
    return zh, np.unique(whash)


def _features(cp: np.ndarray, row: np.ndarray, weights: dict[str, float]) -> _Features:
    """The (row, hash, weight) triples of a batch's code points ``cp`` (``row``: each one's text), family by
    family: what :func:`logichunk.native.hash_features` adds up in one pass."""
    cjk, word = _classify(cp)
    codes = cp.astype(np.uint64)
    feats = _Features()
    stop_zh, stop_words = _stop_tables()

    # CJK character 1-3 grams, only inside CJK runs (a cumulative count tells whether a window is all CJK).
    ccount = np.concatenate(([0], np.cumsum(cjk, dtype=np.int64)))
    size = cp.size
    for n in (1, 2, 3):
        m = size - n + 1
        if m <= 0:
            continue
        starts = np.flatnonzero((ccount[n : n + m] - ccount[:m]) == n)
        if not starts.size:
            continue
        w = np.full(starts.size, weights[f"cjk{n}"], dtype=np.float32)
        if n == 1:
            w[np.isin(cp[starts], stop_zh)] *= weights["stop"]
        feats.add(row[starts], _ngram_hash(codes, starts, n, _SEED[f"cjk{n}"]), w)

    # Words of the other scripts: whole words, and character 3/4-grams inside each <word>.
    if word.any():
        ext, wid, word_row, whash = _words(codes, row, word)
        wweight = np.where(np.isin(whash, stop_words), weights["stop"], 1.0).astype(np.float32)
        feats.add(word_row, whash, wweight * weights["word"])
        for n in (3, 4):
            m = ext.size - n + 1
            if m <= 0:
                continue
            starts = np.flatnonzero(wid[:m] == wid[n - 1 : n - 1 + m])
            if starts.size:
                g = wid[starts]
                feats.add(word_row[g], _ngram_hash(ext, starts, n, _SEED[f"gram{n}"]),
                          wweight[g] * weights[f"gram{n}"])
    return feats


#: a batch's dense sums (texts x dim, float64) stay within this many cells, 2 MiB, so they stay in a core's
#: cache through the passes that fill, measure and scale them: 2,048 texts a batch at 1,024 dimensions (16 MiB)
#: embedded sentences 1.6-1.8x slower, for the same vectors (a batch never changes a row)
ACC_CELLS = 1 << 18


_HASH_ID = re.compile(r"hash-v(\d+)-d(\d+)")


def hash_id(model_id: str) -> tuple[int, int] | None:
    """``(version, dimension)`` of a hash embedder's model id (``hash-v2-d1024`` → ``(2, 1024)``), None for
    another model's."""
    m = _HASH_ID.fullmatch(model_id)
    return (int(m[1]), int(m[2])) if m else None


def hash_spec(model_id: str) -> str | None:
    """The embedder spec that builds the hash embedder a stored model id names (``hash-v2-d1024`` →
    ``hash:1024``, ``hash-v1-d64`` → ``hash-v1:64``); None for another model or an unknown version."""
    parts = hash_id(model_id)
    if parts is None or parts[0] not in HashEmbedder.VERSIONS:
        return None
    version, dim = parts
    return f"hash:{dim}" if version == HashEmbedder.VERSION else f"hash-v{version}:{dim}"


class HashEmbedder:
    """Deterministic hashed n-gram vectors (see module docstring). ``dim`` buckets, float32 rows;
    ``version``: 2 (the default) folds traditional Han characters to simplified ones, 1 reads them as written."""

    WEIGHTS = {"cjk1": 0.5, "cjk2": 1.0, "cjk3": 0.7, "word": 1.0, "gram3": 0.35, "gram4": 0.35, "stop": 0.15}
    VERSION = 2
    #: the versions it can build: each one's vectors, unchanged, for the stores embedded with it
    VERSIONS = (1, 2)
    asymmetric = False
    #: cheaper to compute again than to read back from a database: a store caches these in memory only
    #: (a sentence's 1024 floats on disk made a store's file 2.3 times as large, for nothing)
    persist_vectors = False

    def __init__(self, dim: int = 1024, *, batch_size: int | None = None, version: int = VERSION) -> None:
        if dim < 8:
            raise InputError(f"the hash embedder's dimension must be >= 8, got {dim}")
        if version not in self.VERSIONS:
            raise InputError(f"no hash embedder version {version}: this release builds {self.VERSIONS}")
        self.dim = int(dim)
        self.version = int(version)
        # (default: as many texts as keep a batch's float64 sums within ACC_CELLS, 256 at 1024 dimensions)
        self.batch_size = max(1, int(batch_size) if batch_size is not None else ACC_CELLS // self.dim)
        self.model_id = f"hash-v{self.version}-d{self.dim}"

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim})" if self.version == self.VERSION else \
            f"HashEmbedder(dim={self.dim}, version={self.version})"

    def embed(self, texts: Sequence[str], *, kind: EmbedKind = "passage") -> np.ndarray:
        """Symmetric: ``kind`` is accepted for the protocol and ignored."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        n = len(texts)
        out = np.zeros((n, self.dim), dtype=np.float32)
        for lo in range(0, n, self.batch_size):
            out[lo : lo + self.batch_size] = self._embed_batch(texts[lo : lo + self.batch_size])
        return out

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        n = len(texts)
        cp, row = _prepare(texts, fold=self.version >= 2)
        stop_zh, stop_words = _stop_tables()
        acc = native.hash_features(cp, row, class_table(), int(CJK), int(ALNUM), stop_zh, stop_words,
                                   _family_weights(tuple(self.WEIGHTS.items())), _SEEDS, n, self.dim)
        if acc is None:  # no compiler: the numpy passes, the same sums
            feats = _features(cp, row, self.WEIGHTS)
            if not feats.rows:
                return np.zeros((n, self.dim), dtype=np.float32)
            rows = np.concatenate(feats.rows)
            h = np.concatenate(feats.hashes)
            w = np.concatenate(feats.weights)
            bucket = (h % np.uint64(self.dim)).astype(np.int64)
            sign = np.where((h >> np.uint64(63)) == 1, -1.0, 1.0).astype(np.float32)
            acc = np.bincount(rows * self.dim + bucket, weights=sign * w, minlength=n * self.dim)
        mat = acc.reshape(n, self.dim)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        mat = np.divide(mat, norms, out=np.zeros_like(mat), where=norms > 0)
        return mat.astype(np.float32)


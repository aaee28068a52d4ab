"""BM25 over an inverted index, with Chinese-aware tokenisation.

Latin letters and digits form lower-cased words (NFKC-folded: full-width ``ＡＢ１`` is ``ab1``); a run of CJK
characters, wherever it starts (``5G模组`` is ``5g`` and ``模组``), becomes its character bigrams (a lone
character stays a unigram, and a query's lone character finds the bigrams that hold it), which needs no
dictionary and matches Chinese queries well. Traditional Han characters are read as simplified ones
(:func:`~logichunk.text.han_fold.fold_han`, OpenCC's table), so ``曠工`` and ``旷工`` are one term. With
``segmenter="jieba"`` (optional package) CJK runs are cut into words by jieba's search mode instead. The index is incremental: ``add``/``remove`` touch only the postings of one text.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

import numpy as np

from ..errors import InputError, ModelUnavailable
from ..text.han_fold import fold_han

#: the CJK scripts read by bigrams: Han (with 〇, the ideographic zero, and the iteration marks), kana, Hangul
_CJK_CHARS = "\u3005-\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\u3040-\u30ff\uac00-\ud7af"
#: a CJK run, or a word of other letters and digits; CJK characters are no word characters here, so a run right
#: after a letter or digit (``5G模组``, ``2026年11月``, ``MQTT断线重连``) is read as its own bigrams, not glued to it
_TOKEN = re.compile(rf"[{_CJK_CHARS}]+|[^\W_{_CJK_CHARS}]+")
_CJK = re.compile(rf"[{_CJK_CHARS}]")


def _jieba():
    try:
        import jieba
    except ImportError:
        raise ModelUnavailable("segmenter 'jieba' needs the jieba package: pip install jieba") from None
    return jieba


def tokenize(text: str, segmenter: str = "bigram") -> list[str]:
    """Tokens of ``text``: words for Latin script, bigrams (or jieba words) for CJK runs, traditional Han
    characters read as simplified ones (:func:`~logichunk.text.han_fold.fold_han`)."""
    if segmenter not in ("bigram", "jieba"):
        raise InputError(f"unknown segmenter {segmenter!r}: use bigram or jieba")
    out: list[str] = []
    for m in _TOKEN.finditer(fold_han(text)):  # (Han into Han, one for one: the same runs, folded)
        tok = m.group()
        if _CJK.match(tok):
            if segmenter == "jieba":
                out.extend(w for w in _jieba().lcut_for_search(tok) if w.strip())
            elif len(tok) == 1:
                out.append(tok)
            else:
                out.extend(tok[i : i + 2] for i in range(len(tok) - 1))
        elif tok.isascii():
            out.append(tok.lower())
        else:  # (full-width ``ＭＱＴＴ``/``２０２６`` and compatibility forms read as what they are; the word alone:
            out.append(unicodedata.normalize("NFKC", tok).lower())  # the whole text costs twice the tokenising)
    return out


class BM25Index:
    def __init__(self, *, k1: float = 1.5, b: float = 0.75, segmenter: str = "bigram") -> None:
        self.k1 = k1
        self.b = b
        self.segmenter = segmenter
        self._post: dict[str, dict[int, int]] = {}
        self._terms: dict[int, Counter[str]] = {}
        self._len: dict[int, int] = {}
        self._total = 0
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._lens_cache: dict[int, int] | None = None
        # per CJK character, the bigrams indexed that hold it: made at the first query of a lone character, then
        # kept up to date (a large index pays for it only when such a query comes)
        self._chars: dict[str, set[str]] | None = None

    def __len__(self) -> int:
        return len(self._len)

    def __contains__(self, doc_id: int) -> bool:
        return doc_id in self._len

    def ids(self) -> np.ndarray:
        return np.fromiter(self._len.keys(), np.int64, len(self._len))

    def add(self, doc_id: int, text: str) -> None:
        if doc_id in self._len:
            self.remove(doc_id)
        counts = Counter(tokenize(text, self.segmenter))
        self._terms[doc_id] = counts
        n = sum(counts.values())
        self._len[doc_id] = n
        self._total += n
        for t, c in counts.items():
            post = self._post.get(t)
            if post is None:
                post = self._post[t] = {}
                if self._chars is not None and len(t) == 2 and _CJK.match(t):
                    self._chars.setdefault(t[0], set()).add(t)
                    self._chars.setdefault(t[1], set()).add(t)
            post[doc_id] = c
            self._arrays.pop(t, None)

    def add_many(self, items: Iterable[tuple[int, str]]) -> None:
        for i, t in items:
            self.add(i, t)

    def remove(self, doc_id: int) -> None:
        counts = self._terms.pop(doc_id, None)
        if counts is None:
            return
        self._total -= self._len.pop(doc_id)
        for t in counts:
            post = self._post.get(t)
            if post is not None:
                post.pop(doc_id, None)
                if not post:
                    del self._post[t]
                    if self._chars is not None and len(t) == 2:
                        for ch in t:
                            self._chars.get(ch, set()).discard(t)
            self._arrays.pop(t, None)

    def _postings(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        arr = self._arrays.get(term)
        if arr is None:
            post = self._post.get(term)
            if not post:
                return None
            ids = np.fromiter(post.keys(), np.int64, len(post))
            tf = np.fromiter(post.values(), np.float64, len(post))
            lens = np.fromiter((self._len[i] for i in post), np.float64, len(post))
            arr = (ids, tf, lens)
            self._arrays[term] = arr
        return arr

    def _char_postings(self, ch: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The postings of a lone CJK character of a query (``假``, ``税``): the text holds it inside bigrams
        (``婚假``, ``假期``), never alone, so it is read from the bigrams that hold it: per text, the more of
        those that open with it and those that end with it (each of its places inside a run is in one of each,
        at a run's edge in one), and its own count where it stood alone."""
        if self._chars is None:
            chars: dict[str, set[str]] = {}
            for t in self._post:
                if len(t) == 2 and _CJK.match(t):
                    chars.setdefault(t[0], set()).add(t)
                    chars.setdefault(t[1], set()).add(t)
            self._chars = chars
        terms = sorted(self._chars.get(ch, ()))
        sides = []
        for side in (0, 1):
            got = [p for p in (self._postings(t) for t in terms if t[side] == ch) if p is not None]
            if got:
                ids = np.concatenate([p[0] for p in got])
                uniq, inv = np.unique(ids, return_inverse=True)
                sides.append((uniq, np.bincount(inv, weights=np.concatenate([p[1] for p in got]))))
        alone = self._postings(ch)
        if not sides and alone is None:
            return None
        parts = [u for u, _ in sides] + ([alone[0]] if alone is not None else [])
        ids = np.unique(np.concatenate(parts))
        tf = np.zeros(ids.size)
        for uniq, counts in sides:
            tf = np.maximum(tf, np.bincount(np.searchsorted(ids, uniq), weights=counts, minlength=ids.size))
        if alone is not None:
            tf += np.bincount(np.searchsorted(ids, alone[0]), weights=alone[1], minlength=ids.size)
        lens = np.fromiter((self._len[int(i)] for i in ids), np.float64, ids.size)
        return ids, tf, lens

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, BM25 scores), best first; only documents sharing a term with the query."""
        n = len(self._len)
        qterms = Counter(tokenize(query, self.segmenter))
        if n == 0 or not qterms or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        avgdl = max(self._total / n, 1e-9)
        all_ids, all_sc = [], []
        for term, qtf in qterms.items():
            lone = self.segmenter == "bigram" and len(term) == 1 and _CJK.match(term) is not None
            p = self._char_postings(term) if lone else self._postings(term)
            if p is None:
                continue
            ids, tf, lens = p
            df = ids.size
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            sc = idf * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * lens / avgdl))
            all_ids.append(ids)
            all_sc.append(sc * qtf)
        if not all_ids:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        ids = np.concatenate(all_ids)
        uniq, inv = np.unique(ids, return_inverse=True)
        scores = np.bincount(inv, weights=np.concatenate(all_sc))
        k = min(k, uniq.size)
        top = np.argpartition(-scores, k - 1)[:k] if k < uniq.size else np.arange(uniq.size)
        order = top[np.lexsort((uniq[top], -scores[top]))]
        return uniq[order], scores[order]

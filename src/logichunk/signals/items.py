"""Content items of a text: the words and CJK characters that the model-free signals count.

Each word of a space-separated script counts once, as a hash of its first four case-folded letters
(truncation is a crude but effective stemmer: ``economy``, ``economic``, ``economist`` agree; four
beat five or more on the English sets), leaving out one-letter words and a short English stop list;
each CJK character is an item (single characters beat character bigrams on the Chinese sets),
leaving out frequent function characters (的了是在...).

A module of its own because several jobs read the same items: the entropy signal's cache-perplexity
novelty (:mod:`logichunk.signals.novelty`), the lexical cohesion rows, the context terms and the
memory's lexical features. One C pass over the text (:func:`logichunk.native.content_items`), or
numpy passes with no Python loop per character or word: the same items.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import native
from ..hashing import _M1
from ..text.cache import text_cache
from ..text.charclass import ALNUM, CJK, class_table, codepoints

__all__ = ["content_items"]

_WORD_PREFIX = 4  # letters of a word that make its id (truncation stemming)
_WORD_BIT = np.uint64(1 << 19)  # word ids live in [2^19, 2^20); CJK items are their code point (< 2^18)
_STOP_EN = (
    "a an and are as at be been but by for from has have had he her his him i in is it its of on or "
    "she that the their them there they this these those to was we were which who will with would "
    "you your not do does did so if then than also can could may might must shall should into out "
    "up down over about after before all any each more most other some such no nor only own same "
    "too very just our ours my me what when where why how here one two"
).split()
_STOP_ZH = "的了是在和与及也就都而又或之其这那个们我你他她它着吗呢吧啊把被对从以为于有很么"
_LEN_MASK = np.array([0, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)


def _word_ids(cp: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """uint32 id in ``[2^19, 2^20)`` of each word's first four letters.

    The letters are folded with ``| 0x20`` (A-Z to a-z; also the basic Latin-1, Greek and
    Cyrillic capitals; digits are unchanged) and kept as 16 bits each (letters of space-separated
    scripts are all in the BMP), so four of them are one unaligned uint64 read per word, masked
    to the word's length and hashed (xor-shift, multiply, top 19 bits).
    """
    u16 = np.zeros(cp.size + 4, dtype=np.uint16)
    np.bitwise_or(cp, np.uint32(0x20), out=u16[: cp.size], casting="unsafe")
    quad = np.ndarray(shape=(cp.size,), dtype=np.uint64, buffer=u16.data, strides=(2,))
    h = quad[starts] & np.take(_LEN_MASK, np.minimum(lens, _WORD_PREFIX))
    h ^= h >> np.uint64(29)  # fold the high letters down, then one multiplicative hash
    h *= _M1
    return ((h >> np.uint64(45)) | _WORD_BIT).astype(np.uint32)


def _word_spans(al: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of nonzero values in ``al`` (bool, or 0 and one value)."""
    n = al.size
    edge = np.empty(n + 1, dtype=bool)
    edge[0], edge[n] = al[0], al[-1]
    np.not_equal(al[1:], al[:-1], out=edge[1:n])
    e = np.flatnonzero(edge)
    return e[0::2], e[1::2] - e[0::2]


@lru_cache(maxsize=1)
def _stop_tables() -> tuple[np.ndarray, np.ndarray]:
    """(word table: 2^20 bools indexed by the low bits of a word id, True for stop words;
    CJK table: one uint8 per code point, 1 for a CJK character that counts as an item)."""
    text = " ".join(_STOP_EN)
    cp = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    starts, lens = _word_spans(cp != 32)
    ids = _word_ids(cp, starts, lens)
    words = np.zeros(1 << 20, dtype=bool)
    words[ids & np.uint32((1 << 20) - 1)] = True
    cjk = ((class_table() & CJK) != 0).astype(np.uint8)
    cjk[[ord(c) for c in _STOP_ZH]] = 0
    return words, cjk


@lru_cache(maxsize=1)
def _stop_bits() -> np.ndarray:
    """The word table of :func:`_stop_tables` as bits (128 KB, little-endian in each byte): what the
    compiled pass reads, a table that stays in cache."""
    return np.packbits(_stop_tables()[0], bitorder="little")


def _merge(pa: np.ndarray, ia: np.ndarray, pb: np.ndarray, ib: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge the position-sorted item list ``(pb, ib)`` (ideally the shorter) into ``(pa, ia)``;
    positions are distinct."""
    if pb.size == 0:
        return pa, ia
    at = np.searchsorted(pa, pb)
    return np.insert(pa, at, pb), np.insert(ia, at, ib)


_BLOCK = 1 << 18  # characters per block: the working set stays in cache, buffers get reused


def _block_items(cp: np.ndarray, cls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Content items of one block of text that does not cut a word (local positions)."""
    stop_w, cjk_tab = _stop_tables()
    pos, ids = np.zeros(0, np.int64), np.zeros(0, np.uint32)
    kind = cls & (ALNUM | CJK)  # 0, ALNUM or CJK: no character is both
    top = int(kind.max()) if kind.size else 0
    if top == 0:
        return pos, ids
    al = kind if top == ALNUM else kind == ALNUM  # without CJK, kind itself marks the words
    if top == ALNUM or al.any():
        starts, lens = _word_spans(al)
        ids = _word_ids(cp, starts, lens)
        keep = lens > 1
        keep &= ~np.take(stop_w, ids & np.uint32((1 << 20) - 1))
        # np.compress: boolean indexing is several times slower on masks this mixed
        pos, ids = np.compress(keep, starts), np.compress(keep, ids)
    if top == CJK:
        cj = kind == CJK
        ncjk = int(np.count_nonzero(cj))
        if ncjk < 4 * pos.size:  # a few CJK characters among words: merge two lists
            cpos = np.flatnonzero(cj)
            cpos = np.compress(cjk_tab[cp[cpos]] != 0, cpos)
            pos, ids = _merge(pos, ids, cpos, cp[cpos])
        else:  # mostly CJK: one block-long buffer, words written in, read back in order
            buf = cp * np.take(cjk_tab, cp)
            buf[pos] = ids
            pos = np.flatnonzero(buf != 0)  # on the bool mask: ~4x np.flatnonzero(buf)
            ids = buf[pos]
    return pos, ids


@text_cache(maxsize=4)
def content_items(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The content items of ``text``: ``(positions, ids)``, sorted by position.

    ``positions`` (int64) are character offsets: a word's first character, or the CJK character.
    ``ids`` (uint32, never 0) identify the item: the code point of a CJK character, or a hash in
    ``[2^19, 2^20)`` of a word's first four letters, case-folded (so ``economy``/``economic``
    agree, a crude but effective stemmer). Stop words, one-letter words and frequent CJK function
    characters are left out. Cached per text (the arrays are read-only). Memory stays bounded: the
    compiled pass writes 64K items at a time, the numpy passes read blocks of about 256K characters.
    """
    n = len(text)
    if n:
        fast = native.content_items(codepoints(text), class_table(), int(ALNUM), int(CJK), _stop_bits(),
                                    _stop_tables()[1], int(_M1))
        if fast is not None:
            return _frozen(*fast)
    return _frozen(*_items_numpy(text))


def _frozen(pos: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pos = np.ascontiguousarray(pos, dtype=np.int64)
    ids = np.ascontiguousarray(ids, dtype=np.uint32)
    pos.flags.writeable = False
    ids.flags.writeable = False
    return pos, ids


def _items_numpy(text: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`content_items` in numpy passes (what :func:`logichunk.native.content_items` does in one C
    pass), a block of about 256K characters at a time, cut between words."""
    n = len(text)
    parts_pos: list[np.ndarray] = []
    parts_ids: list[np.ndarray] = []
    if n:
        cp = codepoints(text)
        table = class_table()
        a = 0
        while a < n:
            b = min(a + _BLOCK, n)
            while b < n:  # move the cut past the word it falls in
                tail = (np.take(table, cp[b : b + 1024]) & ALNUM) != 0
                if not tail.all():
                    b += int(np.argmin(tail))
                    break
                b += tail.size
            # classes a block at a time, while the block is in cache (no text-sized array)
            p, i = _block_items(cp[a:b], np.take(table, cp[a:b]))
            parts_pos.append(p + a if a else p)
            parts_ids.append(i)
            a = b
    pos = np.concatenate(parts_pos) if len(parts_pos) > 1 else (parts_pos[0] if parts_pos else np.zeros(0, np.int64))
    ids = np.concatenate(parts_ids) if len(parts_ids) > 1 else (parts_ids[0] if parts_ids else np.zeros(0, np.uint32))
    return pos, ids

"""Which sentences continue the one before them: a sentence that opens with a connective
(*However*, *Therefore*, 但是, 因此), a third-person pronoun (*He*, *They*, 他, 它们) or a bare answer
(*Yes,* *Sure.*) leans on what came before, so a chunk or a topic that starts there starts mid-thought.

Why a fixed word list and not a model: these words are the language's own cohesion markers
(Halliday & Hasan's reference and conjunction), a closed class, the same in every domain. On the
development splits (``bench/QUALITY.md``, issue 18) a gold topic boundary falls before such a
sentence 2-4x less often than before any other. Only the narrow classes are listed: demonstratives
and expletives (*This*, *It*, *There*, 这) also open new topics, so they are not here.

Everything is array work on the code points: the first characters of every sentence read position
by position, the first word packed into an integer, one ``np.isin`` against the list. No Python per
sentence.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import native
from .charclass import codepoints
from .sentences import SentenceSpans

#: connectives that tie a sentence to the one before it
CONNECTIVES_EN = (
    "however but and or so thus therefore hence moreover furthermore additionally also besides "
    "nevertheless nonetheless instead otherwise meanwhile consequently accordingly likewise similarly then yet"
).split()
#: third-person personal pronouns and possessives: they point back to someone already named
PRONOUNS_EN = "he she they him her them his its their".split()
#: answers that only mean something after a question; they count when punctuation or the end follows
ANSWERS_EN = "yes yeah no sure okay ok thanks".split()
#: Chinese (simplified and traditional) connectives and pronouns, two characters, then one
MARKERS_ZH_2 = (
    "但是 可是 然而 不过 不過 所以 因此 因而 于是 於是 而且 并且 並且 此外 另外 同时 同時 然后 然後 接着 接著 "
    "他们 他們 她们 她們 它们 它們"
).split()
MARKERS_ZH_1 = tuple("但他她它其该該")

_WINDOW = 24  # characters read at a sentence start: leading quotes plus the longest word, with room
_MAX_WORD = 12  # letters packed into one key (5 bits each)
_SKIP = np.array([ord(c) for c in " \t\r\n\u3000\"'“‘«「『（(【《["], dtype=np.uint32)
_ANSWER_END = np.array([ord(c) for c in ",.!?;:…，。！？；："], dtype=np.uint32)


def _word_key(word: str) -> int:
    """A lower-case ASCII word packed into an int: 5 bits a letter (a=1 ... z=26), the first letter
    lowest — the key :func:`opens_with_marker` builds for every span at once."""
    return sum(((ord(ch) | 0x20) - 96) << (5 * k) for k, ch in enumerate(word))


@lru_cache(maxsize=1)
def _keys() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    plain = np.array(sorted(_word_key(w) for w in CONNECTIVES_EN + PRONOUNS_EN), dtype=np.int64)
    answers = np.array(sorted(_word_key(w) for w in ANSWERS_EN), dtype=np.int64)
    two = np.array(sorted((ord(w[0]) << 21) | ord(w[1]) for w in MARKERS_ZH_2), dtype=np.int64)
    one = np.array(sorted(ord(c) for c in MARKERS_ZH_1), dtype=np.int64)
    return plain, answers, two, one


def leading_words(cp: np.ndarray, first: np.ndarray, lim: np.ndarray, letters: int) -> tuple[np.ndarray, np.ndarray]:
    """The run of ASCII letters at each offset ``first`` of the code points ``cp`` (read before
    ``lim``): its key (:func:`_word_key` of the lower-cased letters) and its length, -1 where it runs
    past ``letters`` letters. One gather per letter position, over the offsets whose word goes on there (most
    end after a letter or two: a source file's lines read a gather each, not nine)."""
    m = first.size
    last = cp.size - 1
    key = np.zeros(m, np.int64)
    length = np.full(m, -1, np.int64)  # -1: still inside the word
    on = np.arange(m)  # (the offsets whose word goes on)
    at = np.asarray(first, np.int64)
    lim = np.broadcast_to(np.asarray(lim, np.int64), at.shape)
    for k in range(letters + 1):
        p = at + k
        low = np.where(p < lim, cp[np.minimum(p, last)], 0).astype(np.int64) | 0x20
        letter = (low >= 0x61) & (low <= 0x7A)
        length[on[~letter]] = k
        on, at, lim, low = on[letter], at[letter], lim[letter], low[letter]
        if on.size == 0:
            break
        if k < letters:
            key[on] += (low - 96) << (5 * k)
    return key, length


def opens_with_marker(text: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per span ``[starts[i], ends[i])`` of ``text``: does it open (after quotes, brackets and
    spaces) with a continuation marker of this module? Only the span's first :data:`_WINDOW`
    characters are read: an English marker is a word of ASCII letters there, ended by anything but a
    letter, digit or hyphen (*He's* counts, *So-called* does not); an answer word counts when, within
    the 8 characters after it, only spaces or quotes come before punctuation or the window's end.

    One pass per span in C (:func:`logichunk.native.markers`), or, without it, one gather per
    character position read (a few dozen), each over all the spans at once: the same answers."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    m = starts.size
    cp = codepoints(text)
    if m == 0 or cp.size == 0:
        return np.zeros(m, dtype=bool)
    fast = native.markers(cp, starts, np.minimum(ends, cp.size), _skip_table(), _stop_table(), _keys())
    if fast is not None:
        return fast
    lim = np.minimum(ends, starts + _WINDOW)  # what may be read of each span
    last = cp.size - 1

    def char(p: np.ndarray) -> np.ndarray:  # the code point at p, 0 past the span's window
        return np.where(p < lim, cp[np.minimum(p, last)], 0).astype(np.int64)

    skip = _skip_table()
    first = starts.copy()
    for _ in range(_WINDOW):  # past the quotes, brackets and spaces that open the span
        lead = skip[np.minimum(char(first), 0xFFFF)]
        if not lead.any():
            break
        first += lead
    plain, answers, two, one = _keys()
    # English: the run of ASCII letters at the start, ended by anything but a letter, digit or hyphen
    key, length = leading_words(cp, first, lim, _MAX_WORD)
    after = char(first + np.maximum(length, 0))
    word_ok = (length > 0) & ~(((after >= 0x30) & (after <= 0x39)) | (after == 0x2D))
    hit = word_ok & np.isin(key, plain)
    # an answer word counts when the span ends after it or punctuation follows (spaces allowed)
    is_answer = word_ok & np.isin(key, answers)
    if is_answer.any():
        rows = np.flatnonzero(is_answer)
        at = first[rows] + length[rows]
        done = np.zeros(rows.size, bool)
        ends_after = np.ones(rows.size, bool)  # nothing solid in the 8 characters: the end
        for k in range(8):
            p = at + k
            c = np.where(p < lim[rows], cp[np.minimum(p, last)], 0)
            solid = ~done & (c != 0) & ~skip[np.minimum(c, 0xFFFF)]
            ends_after[solid] = np.isin(c[solid], _ANSWER_END)
            done |= solid
        hit[rows] |= ends_after
    # Chinese: two characters, then one
    c0 = char(first)
    hit |= np.isin((c0 << 21) | char(first + 1), two) | np.isin(c0, one)
    return hit


@lru_cache(maxsize=1)
def _skip_table() -> np.ndarray:
    """True for the quotes, brackets and spaces a span may open with (all in the BMP)."""
    t = np.zeros(0x10000, dtype=bool)
    t[_SKIP] = True
    return t


@lru_cache(maxsize=1)
def _stop_table() -> np.ndarray:
    """True for the punctuation that may end an answer word (:data:`_ANSWER_END`, all in the BMP)."""
    t = np.zeros(0x10000, dtype=bool)
    t[_ANSWER_END] = True
    return t


def continues(sents: SentenceSpans) -> np.ndarray:
    """Per gap (``len(sents) - 1``): does the sentence after it open with a continuation marker?"""
    if len(sents) < 2:
        return np.zeros(0, dtype=bool)
    return opens_with_marker(sents.text, sents.starts[1:], sents.ends[1:])

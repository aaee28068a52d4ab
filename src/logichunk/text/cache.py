"""Per-text caches whose memory is bounded by the characters they hold, not only by entry count.

Why: one chunk call asks for the same per-text arrays many times (code points, classes, content
items, n-gram keys: sentences, the signal, tier 3 and tier 4 all read them), so they are cached per
text. A plain ``lru_cache(maxsize=8)`` of code points keeps 4 bytes per character of the last eight
texts alive after the calls return: 1.6 GB after chunking eight 50 MB files. Here the entries also
share a character budget; the newest entry always stays, so a text larger than the budget is still
computed once per call chain, and the older ones are let go. ``peek`` reads a kept value without computing
one (a caller that only profits from a value some other caller paid for).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")

DEFAULT_MAX_CHARS = 1 << 24  # characters of text per cache (16 M: 64 MB of code points)
_EDGE = 32  # characters at each end of a text that its key hashes
_KWARGS = object()  # (in a key, between the positional arguments and the keyword ones)

_CACHES: weakref.WeakSet[Any] = weakref.WeakSet()  # every text cache's wrapper, for forget_text


def forget_text(text: str) -> None:
    """Drop every cache entry made for ``text`` (the same string object): a text that will not be seen
    again, such as a window of a long text read in windows, whose arrays would otherwise stay until
    newer texts push them out (eight windows of a megabyte: a hundred MiB)."""
    for cache in list(_CACHES):
        cache.forget(text)


class _Key:
    """A cache entry's key: the text and the other arguments, hashed by the text's length and its two ends (with
    the arguments), compared by identity first, then by value. Why: a ``str`` hashes every character once (12 M
    instructions for two megabytes, a tenth of the sentence splitter) only to find an entry that the same text
    object nearly always made; texts alike at both ends only share a bucket, and equality still decides."""

    __slots__ = ("_hash", "rest", "text")

    def __init__(self, text: Any, rest: tuple[Any, ...]) -> None:
        self.text = text
        self.rest = rest
        edges = (len(text), text[:_EDGE], text[-_EDGE:]) if isinstance(text, str) else text
        self._hash = hash((edges, rest))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self._hash == other._hash and self.rest == other.rest \
            and (self.text is other.text or self.text == other.text)


def text_cache(maxsize: int, max_chars: int = DEFAULT_MAX_CHARS) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Decorate ``fn(text, *args)``: results are kept for at most ``maxsize`` argument tuples and,
    beyond the newest entry, at most ``max_chars`` characters of text in all; least recently used go
    first. Thread-safe. Like ``functools.lru_cache`` it exposes ``cache_clear`` and
    ``__wrapped__``."""

    def decorate(fn: Callable[..., R]) -> Callable[..., R]:
        lock = threading.Lock()
        entries: OrderedDict[_Key, tuple[R, int]] = OrderedDict()
        held = 0

        @functools.wraps(fn)
        def wrapper(text: str, *args: Any, **kwargs: Any) -> R:
            nonlocal held
            key = _Key(text, (*args, _KWARGS, *sorted(kwargs.items())) if kwargs else args)
            with lock:
                hit = entries.get(key)
                if hit is not None:
                    entries.move_to_end(key)
                    return hit[0]
            value = fn(text, *args, **kwargs)
            with lock:
                if key not in entries:
                    entries[key] = (value, len(text))
                    held += len(text)
                    while len(entries) > 1 and (len(entries) > maxsize or held > max_chars):
                        _, (_, n) = entries.popitem(last=False)
                        held -= n
            return value

        def cache_clear() -> None:
            nonlocal held
            with lock:
                entries.clear()
                held = 0

        def cache_info() -> dict[str, int]:
            with lock:
                return {"entries": len(entries), "chars": held, "maxsize": maxsize, "max_chars": max_chars}

        def peek(text: str, *args: Any) -> R | None:
            """The value kept for ``(text, *args)`` without computing it: None where none is kept."""
            with lock:
                hit = entries.get(_Key(text, args))
                return None if hit is None else hit[0]

        def forget(text: str) -> None:
            nonlocal held
            with lock:
                for key in [k for k in entries if k.text is text]:
                    held -= entries.pop(key)[1]

        wrapper.cache_clear = cache_clear  # type: ignore[attr-defined]
        wrapper.cache_info = cache_info  # type: ignore[attr-defined]
        wrapper.forget = forget  # type: ignore[attr-defined]
        wrapper.peek = peek  # type: ignore[attr-defined]
        _CACHES.add(wrapper)
        return wrapper

    return decorate

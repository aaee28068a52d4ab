"""A text of any length chunked in windows, in memory bounded by the window, not by the text.

:func:`~logichunk.chunkers.logic_chain.chunk` holds per-character and per-sentence arrays of the whole
text (about 20 MiB per MB of English), so a log or a dump of a gigabyte would need tens of gigabytes.
Here the text is read ``window`` characters at a time; each window is chunked whole (with whatever
text the last one left over), and its level-1 chunks are kept except the last :data:`CARRY`, whose
text goes to the front of the next window. A cut near a window's end, where the decision saw too little
of what follows, is so always made again with the following text in view; the kept chunks are the
same kind of tree as :func:`chunk`'s, their level-1 ids counted on through the whole text.

The windows are fixed by the text alone (every window but the last holds exactly ``window`` new
characters), so the parts do not depend on how the text arrives (one string, lines of a file, blocks of
:func:`~logichunk.text.decode.read_blocks`). A text no longer than one window gives :func:`chunk`'s
tree itself. A longer one is not the same tree as chunking it whole: each window's decision is global
within the window only (the signals' normalisation and the price of a cut are read from the window's
text); ``bench/RESULTS.md`` measures how many of the whole text's cuts the windows keep.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..text.cache import forget_text
from ..tree import ChunkTree, bubble_span
from ..types import Bubble, Chunk, Span

__all__ = ["CARRY", "DEFAULT_WINDOW", "WHOLE_UP_TO", "StreamPart", "chunk_stream", "merge_stats"]

#: characters read per window: ~20–40 MiB of working memory for the three-level default
DEFAULT_WINDOW = 1 << 20
#: the longest text the CLI chunks whole by default (~0.3 GiB of working memory); longer ones in windows
WHOLE_UP_TO = 1 << 24
#: level-1 chunks of a window given to the next one to decide again (fixed a priori: a few chunks
#: is where the global decision stops depending on the text after them)
CARRY = 8


@dataclass(frozen=True)
class StreamPart:
    """The chunks of one stretch of a longer text: ``tree`` is an ordinary :class:`ChunkTree` of the
    stretch's text (spans count from its start), which begins ``offset`` characters into the whole
    text; level-1 ids continue from the parts before. :meth:`records`, :meth:`chunks` and
    :attr:`bubbles` give offsets into the whole text."""

    offset: int
    tree: ChunkTree
    pages_before: int = 0  # form feeds in the text before this part (a text of pages: page numbers)

    @property
    def end(self) -> int:
        return self.offset + len(self.tree.text)

    def records(self, *, with_text: bool = True) -> list[dict[str, Any]]:
        """:meth:`ChunkTree.records` with ``start``/``end`` (and ``pages``) in the whole text."""
        return self.tree.records(with_text=with_text, offset=self.offset, pages_before=self.pages_before)

    def json_lines(self, extra: Mapping[str, Any] | None = None) -> list[str]:
        """:meth:`ChunkTree.json_lines` with offsets in the whole text (the CLI's ``--format jsonl``)."""
        return self.tree.json_lines(extra, offset=self.offset, pages_before=self.pages_before)

    def chunks(self) -> Iterator[Chunk]:
        """The part's chunks in document order, their spans in the whole text."""
        off = self.offset
        for c in self.tree:
            yield dataclasses.replace(c, span=Span(c.span.start + off, c.span.end + off)) if off else c

    @property
    def bubbles(self) -> tuple[Bubble, ...]:
        """The part's bubbles, the span each names in the whole text."""
        return tuple(_shifted(b, self.offset) for b in self.tree.bubbles)


def _shifted(b: Bubble, off: int) -> Bubble:
    span = bubble_span(b)
    if not off or span is None:
        return b
    return dataclasses.replace(b, context={**b.context, "span": [span[0] + off, span[1] + off]})


def _windows(source: str | Iterable[str], window: int) -> Iterator[str]:
    """``source`` as strings of exactly ``window`` characters, the last one shorter."""
    if isinstance(source, str):
        for i in range(0, len(source), window):
            yield source[i : i + window]
        return
    if isinstance(source, bytes | bytearray | memoryview) or not isinstance(source, Iterable):
        raise InputError(f"chunk_stream takes a str or an iterable of str (decode bytes first: read_blocks), "
                         f"got {type(source).__name__}")
    held: list[str] = []
    size = 0
    for piece in source:
        if not isinstance(piece, str):
            raise InputError(f"a text read in windows takes strings, got {type(piece).__name__}")
        held.append(piece)
        size += len(piece)
        if size >= window:
            joined = "".join(held)
            k = 0
            while len(joined) - k >= window:
                yield joined[k : k + window]
                k += window
            held, size = ([joined[k:]], len(joined) - k) if k < len(joined) else ([], 0)
    if size:
        yield "".join(held)


def _root_count(tree: ChunkTree) -> int:
    return sum(1 for cid in tree.chunks if "." not in cid)


def chunk_stream(source: str | Iterable[str], *, window: int = DEFAULT_WINDOW,
                 chunker: Callable[[str], ChunkTree] | None = None, **options: Any) -> Iterator[StreamPart]:
    """Chunk a text of any length window by window, yielding :class:`StreamPart` s whose texts, joined,
    are the text itself (see the module docstring).

    ``source``: the text, or its pieces in order (a text file's lines, :func:`~logichunk.text.decode.
    read_blocks`). ``options`` go to :func:`~logichunk.chunkers.logic_chain.chunk` (``max_size``,
    ``levels``, ``unit``, ...); ``chunker``: any ``text -> ChunkTree`` callable instead. ``overlap`` is
    refused: a part cannot widen its chunks into text it has not seen.
    """
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise InputError(f"window must be a positive number of characters, got {window!r}")
    if options.get("overlap"):
        raise InputError("overlap is not available for a text read in windows; chunk it whole")
    if chunker is None:
        from .logic_chain import chunk

        def chunker(text: str) -> ChunkTree:
            return chunk(text, **options)
    elif options:
        raise InputError("give chunk() options or a chunker, not both")

    pieces = _windows(source, window)
    buf = ""
    offset = pages = 0
    first = 1
    ahead = next(pieces, None)  # one window read ahead: the last window is known as the last
    while ahead is not None:
        buf += ahead
        ahead = next(pieces, None)
        done = ahead is None
        tree = chunker(buf)
        forget_text(buf)  # this window's per-text arrays: never asked for again
        roots = _root_count(tree)
        keep = roots if done else roots - CARRY
        if keep <= 0:
            continue  # too little text for a decision that the rest cannot change: read on
        part = tree.head(keep, number_from=first) if keep < roots else _renumbered(tree, first)
        yield StreamPart(offset, part, pages)
        n = len(part.text)
        offset += n
        pages += part.text.count("\f")
        first += keep
        buf = buf[n:]


def _renumbered(tree: ChunkTree, first: int) -> ChunkTree:
    """The whole tree, level-1 ids counted from ``first`` (the tree itself when that is 1)."""
    return tree if first == 1 else tree.head(_root_count(tree), number_from=first)


def merge_stats(total: dict[str, Any], stats: Mapping[str, Any]) -> dict[str, Any]:
    """``total`` with one more part's ``tree.stats`` added (a whole text's stats from its parts'):
    counts are summed, counts by name summed name by name, anything else kept from the first part."""
    for k, v in stats.items():
        have = total.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and isinstance(have, int):
            total[k] = have + v
        elif isinstance(v, Mapping) and isinstance(have, dict) \
                and all(isinstance(x, int) for x in (*v.values(), *have.values())):
            for name, n in v.items():
                have[name] = have.get(name, 0) + n
        elif k not in total:
            total[k] = dict(v) if isinstance(v, Mapping) else v
    return total

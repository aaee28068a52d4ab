"""The chunk tree: dotted ids over exact spans, and the relations retrieval expands along."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]
from types import MappingProxyType
from typing import Any

from . import ids
from .errors import InputError
from .text.pages import chunk_pages
from .types import Bubble, Chunk, Span, bubble_excerpt


@dataclass(frozen=True, eq=False)
class ChunkTree:
    """All chunks of one text, in document (pre-)order.

    Level-1 chunks tile the text; the children of a chunk tile it. A chunk's ``children`` holds
    child ids; :meth:`children` returns the chunks themselves.
    """

    text: str
    chunks: Mapping[str, Chunk]
    bubbles: tuple[Bubble, ...] = ()
    stats: Mapping[str, Any] = field(default_factory=dict)
    unit: str = "chars"

    # ---------------------------------------------------------------- navigation
    def __len__(self) -> int:
        return len(self.chunks)

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.chunks.values())

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.chunks

    def get(self, chunk_id: str) -> Chunk:
        try:
            return self.chunks[chunk_id]
        except KeyError:
            ids.parse_id(chunk_id)  # a malformed id says so
            raise InputError(f"no chunk with id {chunk_id!r}") from None

    def roots(self) -> list[Chunk]:
        t = self.chunks
        if isinstance(t, _ChunkTable):
            return [t[i] for i in t.ids() if "." not in i]
        return [c for c in t.values() if c.level == 1]

    def leaves(self) -> list[Chunk]:
        t = self.chunks
        if isinstance(t, _ChunkTable):
            return [t[i] for i in t.ids() if t.is_leaf(i)]
        return [c for c in t.values() if not c.children]

    def children(self, chunk_id: str) -> list[Chunk]:
        return [self.chunks[i] for i in self.get(chunk_id).children]

    def parent(self, chunk_id: str) -> Chunk | None:
        p = self.get(chunk_id).parent
        return None if p is None else self.chunks[p]

    def ancestors(self, chunk_id: str) -> list[Chunk]:
        """Nearest first."""
        self.get(chunk_id)
        return [self.chunks[a] for a in ids.ancestors_of(chunk_id)]

    def siblings(self, chunk_id: str) -> list[Chunk]:
        """The other children of the same parent (level-1 chunks are siblings of each other)."""
        c = self.get(chunk_id)
        pool = self.roots() if c.parent is None else self.children(c.parent)
        return [s for s in pool if s.id != chunk_id]

    def descendants(self, chunk_id: str) -> list[Chunk]:
        """All chunks below, in document order."""
        out: list[Chunk] = []
        stack = list(reversed(self.get(chunk_id).children))
        while stack:
            c = self.chunks[stack.pop()]
            out.append(c)
            stack.extend(reversed(c.children))
        return out

    def level(self, depth: int) -> list[Chunk]:
        """The cut of the tree at ``depth``: chunks of that level, plus shallower leaves, so the
        result tiles the text."""
        return [c for c in self.chunks.values() if c.level == depth or (c.level < depth and not c.children)]

    def depth(self) -> int:
        return max((c.level for c in self.chunks.values()), default=0)

    def text_of(self, chunk: Chunk | str) -> str:
        c = self.get(chunk) if isinstance(chunk, str) else chunk
        return self.text[c.span.start : c.span.end]

    def head(self, roots: int, *, number_from: int = 1) -> ChunkTree:
        """The first ``roots`` level-1 chunks and everything under them, as the tree of the text they
        cover (a prefix of this one), their level-1 numbers counted from ``number_from``: what a text
        read in windows keeps of one window's tree (:func:`~logichunk.chunkers.stream.chunk_stream`).
        Bubbles are kept where they begin inside the prefix; one crossing its end (a forced split whose
        sentence goes on past the window's kept text, cut at the prefix's end) is kept cut there
        (:func:`_cut_bubble`), so every forced cut the prefix holds stays recorded. ``stats["methods"]``
        counts the kept chunks, ``stats["sentences"]`` (the whole text's count) is left out of a prefix
        shorter than the text."""
        col_ids, _, col_ends, _, _ = self._columns()
        all_roots = [i for i, cid in enumerate(col_ids) if "." not in cid]
        if not 0 <= roots <= len(all_roots):
            raise ValueError(f"a tree of {len(all_roots)} level-1 chunks has no first {roots}")
        rows = all_roots[roots] if roots < len(all_roots) else len(col_ids)
        end = col_ends[all_roots[roots - 1]] if roots else 0
        shift = number_from - 1

        def renumber(cid: str) -> str:
            if not shift:
                return cid
            head, dot, rest = cid.partition(".")
            return f"{int(head) + shift}{dot}{rest}"

        t = self.chunks
        if isinstance(t, _ChunkTable):
            cols = {k: t.meta_column(k)[:rows] for k in t._cols} if t._metas is None else None
            table = _ChunkTable([renumber(c) for c in t.ids()[:rows]], t.starts()[:rows], t.ends()[:rows],
                                t.methods()[:rows], metas=None if t._metas is None else t._metas[:rows], cols=cols)
        else:
            table = _ChunkTable.from_rows([(renumber(c.id), c.span.start, c.span.end, c.method, c.meta)
                                           for c in list(t.values())[:rows]])
        stats = dict(self.stats)
        if rows < len(col_ids):
            stats.pop("sentences", None)  # the whole window's count: not known for the prefix
        if "methods" in stats:
            counts: dict[str, int] = {}
            for m in table.methods():
                counts[m] = counts.get(m, 0) + 1
            order = [*stats["methods"], *counts]
            stats["methods"] = {m: counts[m] for m in dict.fromkeys(order) if counts.get(m)}
        kept_list: list[Bubble] = []
        for b in self.bubbles:
            span = bubble_span(b) or (0, 0)
            if span[1] <= end:
                kept_list.append(b)
            elif span[0] < end:
                kept_list.append(_cut_bubble(b, self.text, end, col_ids, col_ends))
        kept = tuple(kept_list)
        if "bubbles" in stats:
            stats["bubbles"] = len(kept)
        return ChunkTree(self.text[:end], table, kept, MappingProxyType(stats), self.unit)

    # ---------------------------------------------------------------- export
    def _columns(self) -> tuple[list[str], list[int], list[int], list[str], list[Any]]:
        """ids, starts, ends, methods and ``meta["size"]`` of every chunk, in order."""
        t = self.chunks
        if isinstance(t, _ChunkTable):
            return t.ids(), t.starts(), t.ends(), t.methods(), t.meta_column("size")
        cs = list(t.values())
        return ([c.id for c in cs], [c.span.start for c in cs], [c.span.end for c in cs],
                [c.method for c in cs], [c.meta.get("size") for c in cs])

    def records(self, *, with_text: bool = True, offset: int = 0, pages_before: int = 0) -> list[dict[str, Any]]:
        """One plain dict per chunk (the JSONL/JSON output of the CLI); in a text of pages joined by form
        feeds (a PDF), each also names the ``pages`` its text lies on, first and last
        (:func:`~logichunk.text.pages.chunk_pages`). ``offset``: characters of a longer text before this
        tree's own (one window of a stream), added to every ``start`` and ``end``; ``pages_before``: the form
        feeds in it, added to every page number."""
        text = self.text
        out = []
        columns = self._columns()
        pages = chunk_pages(text, columns[1], columns[2])
        for k, (cid, start, end, method, size) in enumerate(zip(*columns, strict=True)):
            head, _, _ = cid.rpartition(".")
            r: dict[str, Any] = {"id": cid, "level": cid.count(".") + 1, "parent": head or None,
                                 "start": start + offset, "end": end + offset, "size": size, "method": method}
            if with_text:
                r["text"] = text[start:end]
            if pages is not None:
                r["pages"] = [p + pages_before for p in pages[k]]
            out.append(r)
        return out

    def json_lines(self, extra: Mapping[str, Any] | None = None, *, offset: int = 0,
                   pages_before: int = 0) -> list[str]:
        """:meth:`records` as JSON text, one line per chunk, ``extra`` keys appended to each (the
        CLI's ``--format jsonl``; ``offset`` and ``pages_before`` as there). Written directly rather than
        through dicts and the generic encoder (a third of a ``logichunk chunk`` call went there); the same bytes as
        ``json.JSONEncoder(ensure_ascii=False).encode(record | extra)`` — but for a text holding a lone
        surrogate (which Python's strings allow and UTF-8 cannot hold): every line is then escaped to ASCII,
        so the lines can still be written as UTF-8."""
        text = self.text
        lone = _SURROGATE.search(text) is not None
        whole = _JSON_ASCII if lone else _JSON
        enc = whole.encode
        extra = dict(extra or {})
        if extra.keys() & _RECORD_KEYS or "\f" in text:  # a key replaced, as record | extra would; pages
            return [whole.encode(r | extra) for r in self.records(offset=offset, pages_before=pages_before)]
        tail = "".join(f", {enc(k)}: {enc(v)}" for k, v in extra.items()) + "}"
        out = []
        for cid, start, end, method, size in zip(*self._columns(), strict=True):
            head = cid.rpartition(".")[0]
            piece = text[start:end]
            # the ASCII encoder writes the same bytes for an ASCII string, about twice as fast
            body = encode_basestring_ascii(piece) if lone or piece.isascii() else encode_basestring(piece)
            out.append(f'{{"id": {enc(cid)}, "level": {cid.count(".") + 1}, '
                       f'"parent": {enc(head) if head else "null"}, "start": {start + offset}, "end": {end + offset}, '
                       f'"size": {size if type(size) is int else enc(size)}, "method": {enc(method)}, '
                       f'"text": {body}{tail}')
        return out


def _cut_bubble(b: Bubble, text: str, end: int, col_ids: list[str], col_ends: list[int]) -> Bubble:
    """Bubble ``b`` of a forced split whose span crosses ``end`` (where a window's kept text stops), as the
    kept text holds it: its span up to ``end`` (its ``content`` the head of that span, as
    :func:`~logichunk.boundaries.forced.forced_split_bubble` makes it), ``sizes`` those of the pieces before
    ``end`` (as many as the chunks of its level ending after its start, up to ``end``), and ``continues``: the
    sentence goes on in the next part, whose window decides the rest again (and records its own forced split
    if it needs one)."""
    start = bubble_span(b)[0]  # type: ignore[index]
    level = b.context.get("level", 1)
    pieces = sum(1 for cid, e in zip(col_ids, col_ends, strict=True)
                 if start < e <= end and cid.count(".") + 1 == level)
    ctx = {**b.context, "span": [start, end], "continues": True}
    if isinstance(ctx.get("sizes"), list):
        ctx["sizes"] = ctx["sizes"][:pieces]
    return Bubble(b.category, bubble_excerpt(text, start, end), b.priority, ctx)


def bubble_span(b: Bubble) -> tuple[int, int] | None:
    """The span of the text a bubble is about (its ``context["span"]``), or None when it names none."""
    span = b.context.get("span")
    return (int(span[0]), int(span[1])) if isinstance(span, (list, tuple)) and len(span) == 2 else None


def bubble_marks(records: list[dict[str, Any]], bubbles: Sequence[Bubble]) -> dict[int, str]:
    """The records a bubble is about, by index, with its category: the chunks at its level (at any level when
    it names none) whose span meets its span (offsets as the records'). Their json/jsonl records carry it as
    ``"bubble"`` (the framework adapters' metadata too), so a forced split is seen in its chunks whatever
    method their chunker names (parent-child's are ``block-split``) and with no bubbles log kept."""
    marks: dict[int, str] = {}
    if not bubbles:
        return marks
    by_level: dict[int, list[int]] = {}  # record indices, level by level: in document order, never overlapping
    for k, r in enumerate(records):
        by_level.setdefault(r["level"], []).append(k)
    starts = {lv: [records[k]["start"] for k in ks] for lv, ks in by_level.items()}
    for b in bubbles:
        span = bubble_span(b)
        if span is None:
            continue
        level = b.context.get("level")
        for lv in by_level if level is None else [level] if level in by_level else []:
            ks = by_level[lv]
            i = max(bisect_right(starts[lv], span[0]) - 1, 0)
            while i < len(ks) and records[ks[i]]["start"] < max(span[1], span[0] + 1):
                if records[ks[i]]["end"] > span[0]:
                    marks.setdefault(ks[i], b.category)
                i += 1
    return marks


_JSON = json.JSONEncoder(ensure_ascii=False, check_circular=False)
_JSON_ASCII = json.JSONEncoder(ensure_ascii=True, check_circular=False)
_SURROGATE = re.compile("[\ud800-\udfff]")
_RECORD_KEYS = frozenset({"id", "level", "parent", "start", "end", "size", "method", "text"})


class _ChunkTable(Mapping[str, Chunk]):
    """``id -> Chunk`` over columns given in pre-order; a :class:`Chunk` object (and its ``meta``
    dict) is made on first access. Chunkers emit tens of thousands of chunks per megabyte and
    callers often read only the leaves or the records, so eager objects would be most of the cost
    of a chunk call. ``metas`` is one mapping per chunk, or ``None`` with ``cols`` holding the
    meta values by key, one list each."""

    __slots__ = ("_ids", "_starts", "_ends", "_methods", "_metas", "_cols", "_index", "_made", "_kids",
                 "_parents")

    def __init__(self, ids: list[str], starts: list[int], ends: list[int], methods: list[str],
                 metas: list[Mapping[str, Any]] | None = None, cols: Mapping[str, list[Any]] | None = None) -> None:
        self._ids, self._starts, self._ends, self._methods = ids, starts, ends, methods
        self._metas = metas
        self._cols = dict(cols or {})
        self._index: dict[str, int] | None = None  # built on the first lookup by id
        self._parents: list[str | None] | None = None  # derived on first use (see _links)
        self._kids: dict[str, list[str]] = {}
        self._made: list[Chunk | None] = [None] * len(ids)

    @classmethod
    def from_rows(cls, rows: list[tuple[str, int, int, str, Mapping[str, Any]]]) -> _ChunkTable:
        return cls([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows],
                   metas=[r[4] for r in rows])

    def _idx(self) -> dict[str, int]:
        if self._index is None:
            self._index = {cid: i for i, cid in enumerate(self._ids)}
        return self._index

    def _links(self) -> tuple[list[str | None], dict[str, list[str]]]:
        """Parent of each row and children of each parent. Ids come from the chunkers (well formed
        by construction), so parents are string operations; a one-level tree needs none."""
        if self._parents is None:
            all_ids = self._ids
            parents: list[str | None] = [None] * len(all_ids)
            kids: dict[str, list[str]] = {}
            for i in [i for i, cid in enumerate(all_ids) if "." in cid]:
                cid = all_ids[i]
                parent = cid.rpartition(".")[0]
                parents[i] = parent
                kids.setdefault(parent, []).append(cid)
            self._kids = kids  # before _parents: a reader in another thread tests _parents
            self._parents = parents
        return self._parents, self._kids

    def _meta(self, i: int) -> Mapping[str, Any]:
        if self._metas is not None:
            return self._metas[i]
        return {k: col[i] for k, col in self._cols.items()}

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __contains__(self, key: object) -> bool:
        return key in self._idx()

    def __getitem__(self, key: str) -> Chunk:
        i = self._idx()[key]
        c = self._made[i]
        if c is None:
            cid = self._ids[i]
            parents, kids = self._links()
            c = Chunk(id=cid, span=Span(self._starts[i], self._ends[i]), level=cid.count(".") + 1,
                      parent=parents[i], method=self._methods[i], meta=MappingProxyType(dict(self._meta(i))),
                      children=tuple(kids.get(cid, ())))
            self._made[i] = c
        return c

    def values(self):  # type: ignore[override]
        return [self[cid] for cid in self._ids]

    def ids(self) -> list[str]:
        return self._ids

    def starts(self) -> list[int]:
        return self._starts

    def ends(self) -> list[int]:
        return self._ends

    def methods(self) -> list[str]:
        return self._methods

    def meta_column(self, key: str) -> list[Any]:
        """``meta.get(key)`` of every chunk, in order."""
        if self._metas is None:
            col = self._cols.get(key)
            return col if col is not None else [None] * len(self._ids)
        return [m.get(key) for m in self._metas]

    def is_leaf(self, chunk_id: str) -> bool:
        return chunk_id not in self._links()[1]


def build_tree(
    text: str,
    nodes: list[tuple[str, int, int, str, Mapping[str, Any]]],
    *,
    bubbles: tuple[Bubble, ...] = (),
    stats: Mapping[str, Any] | None = None,
    unit: str = "chars",
) -> ChunkTree:
    """Assemble a tree from ``(id, start, end, method, meta)`` rows given in pre-order."""
    return ChunkTree(text, _ChunkTable.from_rows(list(nodes)), tuple(bubbles), MappingProxyType(dict(stats or {})),
                     unit)


def build_tree_columns(
    text: str,
    ids: list[str],
    starts: list[int],
    ends: list[int],
    methods: list[str],
    meta: Mapping[str, list[Any]],
    *,
    bubbles: tuple[Bubble, ...] = (),
    stats: Mapping[str, Any] | None = None,
    unit: str = "chars",
) -> ChunkTree:
    """:func:`build_tree` from columns (pre-order): each chunk's ``meta`` is ``{key: column[i]}``
    over the ``meta`` columns, made only when that chunk is read."""
    n = len(ids)
    if not (len(starts) == len(ends) == len(methods) == n and all(len(c) == n for c in meta.values())):
        raise ValueError("columns of a chunk tree must have one entry per chunk")
    return ChunkTree(text, _ChunkTable(ids, starts, ends, methods, cols=meta), tuple(bubbles),
                     MappingProxyType(dict(stats or {})), unit)


def check_tree(tree: ChunkTree, *, first: int = 1) -> None:
    """Raise AssertionError unless the tree keeps the invariants of DESIGN.md: level-1 chunks tile
    the text, children tile their parent, no empty chunk, ids unique and consistent with the tree, the
    level-1 ids counted from ``first`` (a part of a text read in windows counts on from the parts before)."""
    text = tree.text
    roots = tree.roots()
    pos = 0
    for c in roots:
        assert c.span.start == pos, f"gap/overlap before {c.id}"
        pos = c.span.end
    assert pos == len(text), "level-1 chunks do not reach the end of the text"
    assert (not text) == (not roots), "empty text must give no chunks, and only empty text"
    for c in tree:
        assert c.span.end > c.span.start, f"empty chunk {c.id}"
        assert ids.parent_of(c.id) == c.parent and c.level == ids.depth(c.id)
        if c.children:
            kids = tree.children(c.id)
            assert [k.id for k in kids] == [ids.make_id(c.id, i + 1) for i in range(len(kids))]
            assert kids[0].span.start == c.span.start and kids[-1].span.end == c.span.end
            for a, b in zip(kids, kids[1:], strict=False):
                assert a.span.end == b.span.start, f"children of {c.id} do not tile it"
            assert len(kids) >= 2, f"{c.id} has a single child equal to itself"
    assert [c.id for c in roots] == [str(first + i) for i in range(len(roots))]

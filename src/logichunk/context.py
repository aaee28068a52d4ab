"""LLM-free chunk context: where a chunk sits (its heading path) and what its surroundings are about.

Why: "contextual retrieval" embeds each chunk together with a short text that situates it in its
document; the shipped versions ask an LLM once per chunk. The tree already knows most of it: the
headings above a chunk (its breadcrumb) and the content terms that distinguish its parent from the
parent's siblings (for a top-level chunk: the terms its document keeps coming back to). So
``meta["context"]`` is built from the text alone, in one pass per document, and is never part of a
chunk's span (it is for embedding: ``context + "\\n" + chunk text``).

Terms are the entropy signal's content items (:func:`logichunk.signals.items.content_items`: words
without stop words, CJK characters without function characters), read back as text: a word as it
is written, lower-cased; a CJK pair of adjacent content characters.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from .errors import InputError
from .signals.items import content_items
from .text.charclass import CJK, classes
from .text.sentences import split_sentences
from .text.structure import heading_lines, layout
from .tree import ChunkTree, build_tree

__all__ = ["add_context", "headings", "span_contexts"]

_WORD = re.compile(r"\w+")


def headings(text: str) -> list[tuple[int, int, str]]:
    """``(offset, level, title)`` of the headings in ``text``, in order: the layout's own reading
    (:func:`logichunk.text.structure.heading_lines`: Markdown, setext, AsciiDoc, LaTeX and HTML
    headings, numbered ones such as ``1.2 Scope`` or ``第三章``, a book's chapters, title lines), so a
    chunk's heading path names the headings the chunker kept with their text."""
    sents = split_sentences(text)
    return heading_lines(sents, layout(sents)) if len(sents) else []


def _breadcrumb(heads: list[tuple[int, int, str]], at: int) -> str:
    path: list[tuple[int, str]] = []
    for off, level, title in heads:
        if off > at:
            break
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, title))
    return " > ".join(t for _, t in path)


def _terms(text: str, start: int, end: int) -> list[tuple[str, int]]:
    """Content terms of ``text[start:end]`` with their first offsets (words lower-cased, CJK pairs)."""
    pos, _ids = content_items(text)
    a, b = np.searchsorted(pos, [start, end])
    pos = pos[a:b]
    if pos.size == 0:
        return []
    cjk = (classes(text)[pos] & CJK) != 0
    out: list[tuple[str, int]] = []
    p = pos.tolist()
    c = cjk.tolist()
    for i, at in enumerate(p):
        if c[i]:
            if i + 1 < len(p) and c[i + 1] and p[i + 1] == at + 1 and at + 2 <= end:
                out.append((text[at : at + 2], at))
        else:
            m = _WORD.match(text, at, end)
            if m and len(m.group()) > 2:
                out.append((m.group().lower(), at))
    return out


def _distinctive(own: Counter, siblings: Sequence[Counter], k: int) -> list[str]:
    """The ``k`` terms of ``own`` most frequent in it and rarest among ``siblings`` (tf-idf, a term
    seen only once left out); with no siblings, the most frequent."""
    n = len(siblings)
    df: Counter = Counter()
    for s in siblings:
        df.update(s.keys())
    scored = [(tf * math.log((n + 1) / (df[t] + 1)) + (tf if n == 0 else 0), t) for t, tf in own.items() if tf > 1]
    scored.sort(key=lambda x: -x[0])
    return [t for s, t in scored[:k] if s > 0]


def span_contexts(text: str, starts: Sequence[int], ends: Sequence[int], *, terms: int = 5) -> list[str]:
    """A context string per span of one document, the spans taken as its top-level chunks: the
    heading path at the span's start, then the document's ``terms`` most frequent content terms."""
    heads = headings(text)
    doc = Counter(t for t, _ in _terms(text, 0, len(text)))
    top = _distinctive(doc, [], terms)
    tail = ("; " + ", ".join(top)) if top else ""
    return [(_breadcrumb(heads, int(a)) + tail).strip("; ") for a in starts]


def add_context(tree: ChunkTree, *, terms: int = 5) -> ChunkTree:
    """``tree`` with ``meta["context"]`` on every chunk: its heading path, then the terms that
    distinguish its parent from the parent's siblings (a top-level chunk: its document's most
    frequent terms). Spans and ids unchanged."""
    if not isinstance(tree, ChunkTree):  # (a text given for its tree met an AttributeError: no .text)
        raise InputError(f"add_context takes a chunk tree, got {type(tree).__name__}: add_context(chunk(text))")
    text = tree.text
    if not len(tree):
        return tree
    heads = headings(text)
    bags = {c.id: Counter(t for t, _ in _terms(text, c.span.start, c.span.end)) for c in tree if c.children}
    doc = Counter(t for t, _ in _terms(text, 0, len(text)))
    doc_terms = _distinctive(doc, [], terms)
    cache: dict[str | None, list[str]] = {None: doc_terms}
    rows = []
    for c in tree:
        p = c.parent
        if p not in cache:
            sibs = [bags[s.id] for s in tree.siblings(p) if s.id in bags] if p is not None else []
            cache[p] = _distinctive(bags[p], sibs, terms) or doc_terms
        words = cache[p]
        ctx = _breadcrumb(heads, c.span.start) + (("; " + ", ".join(words)) if words else "")
        rows.append((c.id, c.span.start, c.span.end, c.method, {**c.meta, "context": ctx.strip("; ")}))
    return build_tree(text, rows, bubbles=tree.bubbles, stats=tree.stats, unit=tree.unit)

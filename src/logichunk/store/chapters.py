"""Where a stored text's chapters open: at a Markdown heading, or at a ``第…章/回/节/卷`` or ``Chapter N`` line
laid out as a book opens a chapter, never inside fenced code or a comment block — and the title each takes.

Why a module of its own: an ingest splits a text into chapters by it, and the store keeps a chapter's title
following its heading block when that block is edited (:meth:`~logichunk.store.base.Store.edit_block`), so
both read one rule from below them.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from ..chunkers.parent_child import lf_lines
from ..text.line_kinds import fence_spans
from ..text.structure import chapter_opening

__all__ = ["heading_title", "split_chapters"]

_HEADING = re.compile(
    r"^(?:#{1,6}[ \t]+\S.*|第[0-9０-９零〇一二三四五六七八九十百千两]+[章回节卷].*|(?:Chapter|CHAPTER)[ \t]+\w+.*)$",
    re.MULTILINE,
)


def split_chapters(text: str) -> list[tuple[str | None, str]]:
    """``[(title, chapter text), ...]``; the texts concatenate back to ``text``. A line that looks like a
    heading inside fenced code, front matter or a comment block (:func:`~logichunk.text.line_kinds.fence_spans`:
    a shell script's ``# install it``) opens no chapter: it would tear the block across two and title a
    chapter with a comment; nor do ``#`` lines of one depth right under each other (a config file's or a
    script's comments, as the layout reads them). A heading with nothing but blank lines under it before the
    next (``## How do I...`` over ``### Use numpy types?``) keeps that one in its chapter: a chapter of a
    heading alone would be a parent and a child of no text, found by its title's words alone. Lines end at
    ``\\r``, ``\\r\\n`` and ``\\n`` alike (:func:`~logichunk.chunkers.parent_child.lf_lines`: a CR-only file has
    the chapters of its LF twin)."""
    lines = lf_lines(text)  # (the same length: offsets found in it cut ``text``)
    starts = [m.start() for m in _HEADING.finditer(lines)
              if (not _comment_line(lines, m) if m.group().startswith("#") else _opens_chapter(lines, m))]
    if starts:
        inside: list[tuple[int, int]] = []
        for a, b in sorted(fence_spans(lines)):  # (merged where they overlap)
            if inside and a < inside[-1][1]:
                inside[-1] = (inside[-1][0], max(b, inside[-1][1]))
            else:
                inside.append((a, b))
        lo = [a for a, _ in inside]
        starts = [s for s in starts if (k := bisect_right(lo, s) - 1) < 0 or s >= inside[k][1]]
    starts = [s for k, s in enumerate(starts) if k == 0 or lines[starts[k - 1] : s].strip().count("\n") > 0]
    opened = set(starts)
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    edges = [*starts, len(text)]
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b <= a:
            continue
        m = _HEADING.match(lines[a:b]) if a in opened else None
        title = m.group().lstrip("#").strip() if m else None
        out.append((title, text[a:b]))
    return out


def _lines_around(text: str, m: re.Match) -> tuple[str, str]:
    """The lines right over and under a line (a match of :data:`_HEADING`), without their line breaks; ""
    where there is none."""
    a, b = m.start(), m.end()
    above = text[text.rfind("\n", 0, a - 1) + 1 : a - 1] if a > 0 else ""
    end = text.find("\n", b + 1)
    under = text[b + 1 : len(text) if end < 0 else end] if b < len(text) else ""
    return above, under


def _hash_depth(line: str) -> int:
    """How many ``#`` open ``line`` when a blank or its end follows them (a heading's or a comment's
    marks), else 0."""
    d = len(line) - len(line.lstrip("#"))
    return d if d and (d == len(line) or line[d] in " \t\r") else 0


def _comment_line(text: str, m: re.Match) -> bool:
    """Whether a ``#`` line (a match of :data:`_HEADING`) has a ``#`` line of its depth right over or under
    it: one of a block of comments, not a heading (as :func:`~logichunk.text.structure.layout` reads it)."""
    depth = _hash_depth(m.group())
    return depth in map(_hash_depth, _lines_around(text, m))


def _opens_chapter(text: str, m: re.Match) -> bool:
    """Whether a ``Chapter N`` / ``第N章`` line (a match of :data:`_HEADING`) opens a chapter: read by the
    layout's rule, from the lines over and under it (blank, or none: the text's start or end)."""
    above, under = _lines_around(text, m)
    return chapter_opening(m.group(), not above.strip(), not under.strip())


def heading_title(text: str) -> str | None:
    """The title of the chapter ``text`` opens when it starts with a heading (``## Methods`` -> ``Methods``),
    read by :func:`split_chapters`' rule; None when it opens none."""
    return split_chapters(text)[0][0] if text else None

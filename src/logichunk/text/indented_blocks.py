"""Lines inside an indented block: an example laid out deeper than the text's body.

Why: a man page's or a plain text's example is set off by indentation alone, as Markdown's indented code and
reStructuredText's literal block after ``::`` are: ``[imap]`` over ``host = mail.example.com``, a grammar's
``'ls' SP <path> LF`` over its next rule, ``DirectoryIndex gitweb.cgi`` among an Apache section's lines. Such a
line may look like a title (short, no full stop, a bracketed name), yet it is one line of its block: no
section opens there, and no chunk cuts the example in two. A line that stands alone between blank lines (a
title centred on the page, an example's caption) has no block around it and keeps its reading, and so does a
line centred over or under its neighbour (a Gutenberg book's ``CHAPTER I.`` over its centred title).
"""

from __future__ import annotations

import numpy as np

from .charclass import codepoints
from .line_kinds import indent_columns


def _line_at(text: str, start: int) -> tuple[int, int, str]:
    """The line that opens at ``start``: its indent in columns, its first character's offset, its stripped text."""
    end = text.find("\n", start)
    line = text[start : len(text) if end < 0 else end].rstrip("\r")
    body = line.lstrip(" \t")
    at = start + len(line) - len(body)
    return indent_columns(text, at), at, body.rstrip()


def _line_above(text: str, at: int) -> int:
    """The offset where the line above the line of ``at`` opens (-1 at the text's first line)."""
    ls = text.rfind("\n", 0, at)
    return -1 if ls < 0 else text.rfind("\n", 0, ls) + 1


def _line_below(text: str, at: int) -> int:
    """The offset where the line under the line of ``at`` opens (-1 at the text's last line)."""
    le = text.find("\n", at)
    return -1 if le < 0 or le + 1 >= len(text) else le + 1


def _centred(d: int, body: str, d2: int, body2: str) -> bool:
    """Whether two lines share their middle column (within one column) but not their left edge: centred text."""
    return d != d2 and abs((2 * d + len(body)) - (2 * d2 + len(body2))) <= 2


def in_indented_block(text: str, at: np.ndarray, margin: np.ndarray) -> np.ndarray:
    """Per offset of ``at`` (each a line's first character), whether its line lies inside an indented block:
    deeper than its ``margin`` (its text's body, per offset), with a line right over or under it (no blank line between) and
    every such neighbour indented as deep or deeper, as the lines of an example are. A line whose only
    neighbour is the line under it, indented deeper, opens a block only where it is itself deeper than the
    text over it (an example's ``[diff "tex"]`` over ``wordRegex = ...``, under a paragraph less indented);
    as deep as the paragraph over it, it is a subheading over its indented text, a term over its
    definition. A line centred on a neighbour is a centred title's, never a block's."""
    out = np.zeros(len(at), dtype=bool)
    for k, (a, m) in enumerate(zip(np.asarray(at, np.int64).tolist(), np.asarray(margin).tolist(), strict=True)):
        d = indent_columns(text, a)
        if d <= m:
            continue
        ls = text.rfind("\n", 0, a) + 1
        _, _, body = _line_at(text, ls)
        up, down = _line_above(text, a), _line_below(text, a)
        above = _line_at(text, up) if up >= 0 else None
        under = _line_at(text, down) if down >= 0 else None
        near = [x for x in (above, under) if x is not None and x[2]]
        if not near or any(x[0] < d or _centred(d, body, x[0], x[2]) for x in near):
            continue
        if len(near) == 1 and under is not None and near[0] is under and under[0] > d:
            # (only a deeper line under it: a block's opener only where deeper than the text over it)
            p = up
            while p >= 0 and not _line_at(text, p)[2]:
                p = _line_above(text, p) if p > 0 else -1
            if p >= 0 and _line_at(text, p)[0] >= d:
                continue
        out[k] = True
    return out


def line_indents(text: str, at: np.ndarray) -> np.ndarray:
    """Per offset of ``at``, how many characters lie before it on its line (its indent, where it opens the line's
    text)."""
    at = np.asarray(at, np.int64)
    nl = np.flatnonzero(codepoints(text) == 0x0A)
    k = np.searchsorted(nl, at)
    return at - np.where(k > 0, nl[np.maximum(k - 1, 0)] + 1, 0)


def body_margins(indents: np.ndarray, part: np.ndarray, parts: int) -> np.ndarray:
    """Per text of ``parts`` laid end to end, its body margin: the least of ``indents`` (of its body's lines, in
    characters: :func:`line_indents`; ``part``: each one's text), 0 where it has none. Read over every line of the
    body, not its paragraphs' first lines alone: a text whose every line is indented one space (WikiText's
    ``" = = History = = "`` over ``" The town ..."``) has its body there, and its headings are no block's; and per
    text, as each has its own margin."""
    out = np.zeros(parts, np.int64)
    if len(indents) == 0:
        return out
    top = np.iinfo(np.int64).max
    out[:] = top
    np.minimum.at(out, part, indents)
    return np.where(out == top, 0, out)

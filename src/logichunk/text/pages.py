"""Page furniture: the running headers, running footers and page numbers that a paginated text repeats
at every page break (a form feed: ``pdftotext``'s output, a printed manual, an RFC).

Why: they are the printer's, not the author's. Read as text, a running header looks like a title, so it
opened a section in the middle of a list or of a sentence that goes on over the page, and a page
number ended a chunk; the page break itself read as a paragraph break. The splitter (:mod:`.sentences`)
keeps each furniture line a sentence of its own (a wrapped sentence is never joined into one), and the
layout (:mod:`.structure`) lifts them out: they stay with the text before them, and the break after them
is the break before them, so a sentence that goes on over the page is not cut and a heading at the top
of a page still opens its section. The text is not changed.

Which lines are furniture (fixed readings of how pages are printed, none fitted to data):

* only a text with at least :data:`MIN_PAGE_BREAKS` form feeds is read as pages (a single form feed is a
  section separator in many plain-text files);
* at each page break, from the page's edge inward, up to :data:`EDGE_LINES` non-blank lines on each side
  (the last lines before the form feed, a footer; the first after it, a header), each one furniture only
  while the lines nearer the edge are, and at most :data:`FURNITURE_MAX_CHARS` long:

  - a page number alone (``12``, ``xiv``, ``- 12 -``, ``[12]``, ``Page 3 of 10``, ``第 3 页``);
  - a line repeated word for word at the same edge of at least :data:`MIN_REPEATS` page breaks in a
    run (each at most two page breaks from the next: every page, or every other one) (``Shared
    MIME-info Database``, ``RFC 793  Transmission Control Protocol  September 1981``); under another
    furniture line, only a line met so at half the page breaks or more (a document-wide ``Confidential``,
    not a section's ``Possible return values:`` that happens to open a few pages);
  - at the page's very edge, a line that differs from page to page only in its numbers, at the same edge of two page breaks or
    more with its first (or its last) number its page's plus one constant, a constant that at least
    :data:`MIN_REPEATS` lines at that edge share: the page's number in a running header or footer (``Chapter 2: ASN.1
    structure handling 3`` and, a page on, ``... 4``; ``Postel  [Page 5]``). A chapter's own heading at
    the top of its first page is none: its line is not repeated.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ._arrays import _chars_table, _in_table
from .cache import text_cache
from .charclass import codepoints
from .end_candidates import _NL_CHARS

__all__ = ["EDGE_LINES", "FURNITURE_MAX_CHARS", "MIN_PAGE_BREAKS", "MIN_REPEATS", "PAGE_LABEL", "chunk_pages",
           "furniture_lines", "furniture_terminators", "paginated"]

#: a text is read as pages from this many form feeds on (three pages)
MIN_PAGE_BREAKS = 2
#: how many non-blank lines next to a page break, on each side, may be furniture
EDGE_LINES = 2
#: a running header or footer is one printed line
FURNITURE_MAX_CHARS = 120
#: a running header or footer recurs at this many page breaks at least
MIN_REPEATS = 3

#: a page's number with its word, as a footer has it ("Page 3 of 10", "p. 12", "第 3 页 共 10 页")
PAGE_LABEL = re.compile(r"(?:page|p\.|pg\.?)\s*\d+(?:\s*(?:of|/)\s*\d+)?|第\s*\d+\s*页(?:\s*[,，/／]?\s*共\s*\d+\s*页)?",
                        re.IGNORECASE)
#: a page's number alone, bare or between dashes or brackets ("12", "- 12 -", "[12]", "xiv", "3 / 10")
_PAGE_NUMBER = re.compile(
    r"[-–—\[(]?\s*(?:\d{1,5}(?:\s*/\s*\d{1,5})?|(?=[ivxlcdm]+\b)m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3}))"
    r"\s*[-–—\])]?", re.IGNORECASE)
#: the line terminators (the splitter's: \n, \r, \v, \f, NEL, LS, PS), a bool table by code point
_NL_TABLE = _chars_table(_NL_CHARS)
_NUMBER = re.compile(r"\d+")
#: how far from a page break its edge lines are looked for (characters): a few short lines
_REACH = 4 * FURNITURE_MAX_CHARS


def _is_page_number(line: str) -> bool:
    s = line.strip()
    return bool(s) and (bool(PAGE_LABEL.fullmatch(s)) or bool(_PAGE_NUMBER.fullmatch(s)))


def _paged_keys(line: str, page: int) -> tuple[tuple[str, int, int], ...]:
    """How a line may carry its page's number: its template (its numbers read as any number), which of
    its numbers (0 the first, 1 the last) and that number less the page's index. A running header's line
    keeps one template and one difference from page to page; a body line with a number does not."""
    nums = [int(x) for x in _NUMBER.findall(line) if len(x) <= 5]
    if not nums:
        return ()
    shape = _NUMBER.sub("#", line.casefold())
    return (shape, 0, nums[0] - page), (shape, 1, nums[-1] - page)


def _edge_lines(text: str, lo: int, hi: int, backward: bool, nl: list[int], j: int) -> list[tuple[int, int]]:
    """Up to :data:`EDGE_LINES` non-blank lines of ``text[lo:hi]`` nearest to its end (``backward``) or
    start, nearest first, as the spans of their text without the spaces around it; none longer than
    :data:`FURNITURE_MAX_CHARS`, and none cut by the reach (a longer line stops the walk). ``nl``: the offsets
    of the text's line terminators, sorted; ``j``: the index in it of the first one at or past ``hi``
    (``backward``) or ``lo``. The walk reads line by line from the edge: its work is bounded per page."""
    a, b = (max(lo, hi - _REACH), hi) if backward else (lo, min(hi, lo + _REACH))
    out: list[tuple[int, int]] = []
    found = 0
    while a < b and found < EDGE_LINES:
        if backward:  # the last line of text[a:b]: from past the last terminator in it
            j -= 1
            t = nl[j] if j >= 0 and nl[j] >= a else a - 1
            s, e = t + 1, b
            b = t
        else:  # the first line of text[a:b]: up to the first terminator in it
            t = nl[j] if j < len(nl) and nl[j] < b else b
            j += 1
            s, e = a, t
            a = t + 1
        stripped = text[s:e]
        if s >= e or not stripped.strip():
            continue
        found += 1
        if not ((s == lo or text[s - 1] in _NL_CHARS) and (e == hi or text[e] in _NL_CHARS)):
            break
        s += len(stripped) - len(stripped.lstrip())
        e -= len(stripped) - len(stripped.rstrip())
        if e - s > FURNITURE_MAX_CHARS:
            break
        out.append((s, e))
    return out


def paginated(text: str, lo: int = 0, hi: int | None = None) -> bool:
    """Whether ``text[lo:hi]`` holds at least :data:`MIN_PAGE_BREAKS` form feeds (a search, not a count:
    a text without any costs a fifth of a millisecond per 2 MB)."""
    hi = len(text) if hi is None else hi
    p = lo - 1
    for _ in range(MIN_PAGE_BREAKS):
        p = text.find("\f", p + 1, hi)
        if p < 0:
            return False
    return True


def furniture_lines(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """The furniture lines of ``text[lo:hi]`` (see the module docstring), sorted, as the spans of their
    text without the spaces around it. Empty unless the text has at least :data:`MIN_PAGE_BREAKS` form
    feeds: a text without any costs one search (:func:`paginated`). Read once per text and range: the
    splitter, the layout and a chunk's pages all ask for them (:func:`_furniture_lines`)."""
    hi = len(text) if hi is None else hi
    if not paginated(text, lo, hi):
        return []
    return list(_furniture_lines(text, lo, hi))


@text_cache(maxsize=4)
def _furniture_lines(text: str, lo: int, hi: int) -> tuple[tuple[int, int], ...]:
    """:func:`furniture_lines` of a paginated text. Linear in the pages: a bounded walk per page break
    (:func:`_edge_lines`), each edge line read once, and per line a few look-ups in tables of counts."""
    feeds = _feeds(text, lo, hi)
    bounds = [lo - 1, *feeds, hi]
    # the line terminators of text[lo:hi] (the form feeds among them), and each form feed's index among them
    nl_at = np.flatnonzero(_in_table(_NL_TABLE, codepoints(text)[lo:hi])) + lo
    at_feed = np.searchsorted(nl_at, feeds).tolist()
    nl = nl_at.tolist()
    # per page break and side (0 the footer before it, 1 the header after it), its candidate lines, nearest to
    # the edge first, each (start, end, the line with its spaces folded, its page-number keys: _paged_keys)
    edges: list[tuple[tuple[tuple[int, int, str, tuple[tuple[str, int, int], ...]], ...], ...]] = []
    # how often each line recurs at an edge, per side: word for word (the page breaks it is at, in order);
    # as a template (its numbers read as any number); and how many edge lines carry a number that is the
    # page's plus a constant (their first or last number: "Page 5 of 30", "Chapter 4: Function reference 9")
    same: tuple[dict[str, list[int]], ...] = ({}, {})
    paged: tuple[dict[tuple[int, int], list[int]], ...] = ({}, {})
    template: tuple[dict[tuple[str, int, int], list[int]], ...] = ({}, {})
    for k, f in enumerate(feeds):
        sides = (_edge_lines(text, bounds[k] + 1, f, True, nl, at_feed[k]),
                 _edge_lines(text, f + 1, bounds[k + 2], False, nl, at_feed[k] + 1))
        read = []
        for side, lines in enumerate(sides):
            page = k + side  # a footer is on the page the form feed ends, a header on the next
            cands = []
            for s, e in lines:
                line = " ".join(text[s:e].split())
                keys = _paged_keys(line, page)
                cands.append((s, e, line, keys))
                at = same[side].setdefault(line, [])
                if not at or at[-1] != k:
                    at.append(k)
                for key in keys:
                    _tally(paged[side], key[1:], k)
                    _tally(template[side], key, k)
            read.append(tuple(cands))
        edges.append(tuple(read))
    runs = tuple({line: _runs(at) for line, at in by_line.items() if len(at) >= MIN_REPEATS} for by_line in same)
    out: list[tuple[int, int]] = []
    for k, sides in enumerate(edges):
        for side, lines in enumerate(sides):
            for depth, (s, e, line, keys) in enumerate(lines):
                run = runs[side][line][k] if line in runs[side] else 0
                if _is_page_number(line):
                    pass
                elif depth == 0:  # at the page's edge: a running line, or one that carries the page's number
                    if run < MIN_REPEATS and not any(
                            template[side][key][1] >= 2 and paged[side][key[1:]][1] >= MIN_REPEATS for key in keys):
                        break
                elif run < MIN_REPEATS or 2 * len(same[side][line]) < len(feeds):
                    break  # under furniture: a line the whole text runs ("Confidential"), not a section's label
                out.append((s, e))
    return tuple(sorted(set(out)))


def _tally(table: dict[Any, list[int]], key: Any, k: int) -> None:
    """Count page break ``k`` under ``key`` once (the breaks come in order): ``table[key]`` is the last break
    counted and how many (where a set of them was kept, of which only the size was read)."""
    seen = table.get(key)
    if seen is None:
        table[key] = [k, 1]
    elif seen[0] != k:
        seen[0] = k
        seen[1] += 1


def _runs(at: Iterable[int]) -> dict[int, int]:
    """Per page break of ``at``, how many of them lie in its run, neighbours at most two breaks apart: a
    running header is on every page, or on every other one (a book's left and right pages); a line met
    at a few page breaks far apart (a code comment, a section's label) runs none. Linear in ``at``."""
    ks = sorted(at)
    out: dict[int, int] = {}
    i = 0
    while i < len(ks):
        j = i
        while j + 1 < len(ks) and ks[j + 1] - ks[j] <= 2:
            j += 1
        out.update((k, j - i + 1) for k in ks[i : j + 1])
        i = j + 1
    return out


def furniture_terminators(text: str, lines: Sequence[tuple[int, int]]) -> list[int]:
    """The line terminators on both sides of each furniture line in ``lines`` (past the spaces and tabs
    around its text; of a CRLF, the LF, as the splitter counts it): no soft wrap joins a furniture line
    to the text around it."""
    out = []
    for s, e in lines:
        b = s - 1
        while b >= 0 and text[b] in " \t":
            b -= 1
        if b >= 0 and text[b] in _NL_CHARS:
            out.append(b)
        a = e
        while a < len(text) and text[a] in " \t":
            a += 1
        if a < len(text) and text[a] in _NL_CHARS:
            out.append(a + 1 if text[a] == "\r" and text[a + 1 : a + 2] == "\n" else a)
    return sorted(set(out))


def chunk_pages(text: str, starts: Sequence[int], ends: Sequence[int]) -> list[tuple[int, int]] | None:
    """Per span ``[starts[i], ends[i])``, the first and last page (1-based) its text lies on, in a text
    whose pages are joined by form feeds (a PDF read by :mod:`.pdf`, ``pdftotext`` output): what a
    citation names. Whitespace and the page's furniture (:func:`furniture_lines`) count for no page, so a
    chunk that ends with the next page's running header still ends on its own page; a span of nothing
    else gets the pages of its ends. None when the text has no form feed (no pages to name)."""
    if "\f" not in text:
        return None
    feeds = _feeds(text)
    furn = furniture_lines(text)
    f_starts = [s for s, _ in furn]

    def skip(p: int, lo: int, hi: int, step: int) -> int:
        """From ``p`` towards ``lo`` (step -1) or ``hi`` (step 1), the first character of text proper."""
        while lo <= p < hi:
            k = bisect_right(f_starts, p) - 1
            if k >= 0 and p < furn[k][1]:
                p = furn[k][0] - 1 if step < 0 else furn[k][1]
            elif text[p].isspace():
                p += step
            else:
                return p
        return -1

    out = []
    for a, b in zip(starts, ends, strict=True):
        a, b = int(a), int(b)
        first, last = skip(a, a, b, 1), skip(b - 1, a, b, -1)
        if first < 0:
            first, last = a, max(a, b - 1)
        out.append((bisect_right(feeds, first) + 1, bisect_right(feeds, last) + 1))
    return out


def _feeds(text: str, lo: int = 0, hi: int | None = None) -> list[int]:
    """The offsets of the form feeds in ``text[lo:hi]``."""
    hi = len(text) if hi is None else hi
    out = []
    p = text.find("\f", lo, hi)
    while p >= 0:
        out.append(p)
        p = text.find("\f", p + 1, hi)
    return out

"""The page-furniture search (:func:`logichunk.text.pages.furniture_lines`) walks each page break's edge lines
and counts them in tables; it gives what the first reading of the rule gave, kept here as the reference: a
regular expression over each edge's reach, sets of page breaks per line and per page-number key, and each
line's keys read twice."""

from __future__ import annotations

import re
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk.text.end_candidates import _NL_CHARS
from logichunk.text.pages import (
    _REACH,
    EDGE_LINES,
    FURNITURE_MAX_CHARS,
    MIN_REPEATS,
    _feeds,
    _is_page_number,
    _paged_keys,
    _runs,
    furniture_lines,
    paginated,
)

_LINE = re.compile(f"[^{re.escape(_NL_CHARS)}]+")


def _edge_lines(text: str, lo: int, hi: int, backward: bool) -> list[tuple[int, int]]:
    a, b = (max(lo, hi - _REACH), hi) if backward else (lo, min(hi, lo + _REACH))
    found = [m.span() for m in _LINE.finditer(text, a, b) if text[m.start():m.end()].strip()]
    if backward:
        found.reverse()
    out = []
    for s, e in found[:EDGE_LINES]:
        if not ((s == lo or text[s - 1] in _NL_CHARS) and (e == hi or text[e] in _NL_CHARS)):
            break
        stripped = text[s:e]
        s += len(stripped) - len(stripped.lstrip())
        e -= len(stripped) - len(stripped.rstrip())
        if e - s > FURNITURE_MAX_CHARS:
            break
        out.append((s, e))
    return out


def reference(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The furniture lines of ``text[lo:hi]`` as the first implementation read them."""
    if not paginated(text, lo, hi):
        return []
    feeds = _feeds(text, lo, hi)
    bounds = [lo - 1, *feeds, hi]
    edges = [(_edge_lines(text, bounds[k] + 1, f, True), _edge_lines(text, f + 1, bounds[k + 2], False))
             for k, f in enumerate(feeds)]
    same: dict[tuple[int, str], set[int]] = defaultdict(set)
    paged: dict[tuple[int, int, int], set[int]] = defaultdict(set)
    template: dict[tuple[int, str, int, int], set[int]] = defaultdict(set)
    for k, sides in enumerate(edges):
        for side, lines in enumerate(sides):
            for s, e in lines:
                line = " ".join(text[s:e].split())
                same[(side, line)].add(k)
                for key in _paged_keys(line, k + side):
                    paged[(side, *key[1:])].add(k)
                    template[(side, *key)].add(k)
    runs = {key: _runs(at) for key, at in same.items() if len(at) >= MIN_REPEATS}
    out = []
    for k, sides in enumerate(edges):
        for side, lines in enumerate(sides):
            for depth, (s, e) in enumerate(lines):
                line = " ".join(text[s:e].split())
                run = runs[(side, line)][k] if (side, line) in runs else 0
                if _is_page_number(line):
                    pass
                elif depth == 0:
                    if run < MIN_REPEATS and not any(
                            len(template[(side, *key)]) >= 2 and len(paged[(side, *key[1:])]) >= MIN_REPEATS
                            for key in _paged_keys(line, k + side)):
                        break
                elif run < MIN_REPEATS or 2 * len(same[(side, line)]) < len(feeds):
                    break
                out.append((s, e))
    return sorted(set(out))


_WORDS = ["valve", "spring", "Manual", "Chapter", "2:", "RFC", "Confidential", "the", "§", "长城", "页"]


@st.composite
def _line(draw: st.DrawFn, page: int) -> str:
    """A line of a page: furniture-like (a running title, a page's number, a line carrying it), body text,
    spaces, or a line long enough to be none (or to reach past an edge's reach)."""
    kind = draw(st.integers(0, 8))
    if kind == 0:
        return draw(st.sampled_from(["Acme Valve Manual", "RFC 9999   Valves   May 2026", "Confidential"]))
    if kind == 1:
        return draw(st.sampled_from(["{p}", "- {p} -", "[{p}]", "Page {p} of 40", "第 {p} 页", "xiv"])).format(p=page)
    if kind == 2:
        return f"Chapter 2: Valves {page + draw(st.integers(0, 2))}"
    if kind == 3:
        return draw(st.sampled_from(["", " ", "\t ", "\u3000"]))
    if kind == 4:
        return "word " * draw(st.integers(20, 110))
    return " ".join(draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8)))


@st.composite
def paginated_texts(draw: st.DrawFn) -> tuple[str, int, int]:
    """Pages of a few lines each, their lines ended by any terminator the splitter reads, joined by form
    feeds (with or without a line break beside them); and a range of the text to read."""
    pages = []
    for page in range(1, draw(st.integers(3, 10)) + 1):
        lines = draw(st.lists(_line(page), min_size=0, max_size=6))
        ends = draw(st.lists(st.sampled_from(["\n", "\n", "\r\n", "\r", "\u2028", "\x85", "\x0b"]),
                             min_size=len(lines), max_size=len(lines)))
        pages.append("".join(a + b for a, b in zip(lines, ends, strict=True)))
    glue = draw(st.lists(st.sampled_from(["\f", "\n\f", "\f\n", "\n\f\n"]), min_size=len(pages) - 1,
                         max_size=len(pages) - 1))
    text = pages[0] + "".join(g + p for g, p in zip(glue, pages[1:], strict=True))
    lo = draw(st.integers(0, len(text)))
    hi = draw(st.integers(lo, len(text)))
    return text, *draw(st.sampled_from([(0, len(text)), (lo, hi)]))


@settings(max_examples=60, deadline=None)  # (3,000 checked once by hand)
@given(paginated_texts())
def test_furniture_lines_are_the_reference_s(case):
    text, lo, hi = case
    assert furniture_lines(text, lo, hi) == reference(text, lo, hi)


def test_furniture_lines_of_many_short_pages_are_the_reference_s():
    """Thousands of pages of one short line and a number: the shape whose cost grew faster than the text."""
    text = "".join(f"The {'north south east west'.split()[k % 4]} valve opens.\n{k + 1}\n\f" for k in range(3000))
    found = furniture_lines(text)
    assert found == reference(text, 0, len(text)) and len(found) == 3000

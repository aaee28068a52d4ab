"""What each line of a text is, for the sentence splitter (:mod:`.sentences`): a code fence, an ATX
heading, a horizontal rule (or a setext underline), a bullet or ordered list item, a table row, or
text; and what the lines mean together: the offsets whose gap before is a hard break, and the
ranges no terminator may end a sentence in. :func:`fence_spans` pairs fences the same way for
:mod:`.structure` and the chunkers that cut by lines.

Markdown (lines, after their indentation): ATX headings (``# ...``), setext headings (a text
line over ``===``/``---``), table rows (``|``...) and horizontal rules are single units (never
split inside); fenced code (``` or ~~~, paired as in CommonMark; an unclosed fence runs to the
end of the text) is split only at its line ends, each line one unit. The gap before a heading,
a fence, a horizontal rule, a list item (``-``, ``*``, ``+``, ``•``, ``1.``, ``1)``, ``1、``) or
the first row of a table, and the gap after a fence, a rule or a table, is ``BREAK_HARD`` — except
right after a heading, which belongs to what follows it (a list, table or fence under a heading
starts with the gap the blank lines give it, not a hard one). The
``.`` of an ordered-list marker never ends a sentence. reStructuredText's literal blocks (:func:`literal_spans`)
are code as a fence is, and each directive's options (:func:`directive_options`) one unit. Front matter at a text's start (YAML or TOML
between marks, :func:`front_matter`) is read like a fence: its lines are no Markdown, each is one
unit, and the gap after it is hard.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import native
from ._arrays import _EMPTY_I64, _chars_table, _member, _walk
from .cache import text_cache
from .charclass import codepoints
from .end_candidates import _NL_CHARS
from .lines import head_marks, line_table, tail_marks
from .records import record_lines
from .sentence_chars import _F_CJK, _F_UPPER, _F_WS, _scalar_flags

__all__ = ["BULLET_CHARS", "fence_spans", "front_matter"]


_FENCE_RE = re.compile(r"(`{3,}|~{3,})(.*)", re.DOTALL)
#: a C preprocessor line written with a space after its ``#`` (glibc's ``# define``, ``#  include``), which
#: an ATX heading's form holds: code, never a heading
CPP_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(?:define|undef|include|include_next|import|if|ifdef|ifndef|elif|else|endif"
                           r"|pragma|error|warning|line)\b")
#: a table's row has a ``|`` after some text, not only before it (a multi-line condition's ``|| x.y()``
#: in code is no row); cells before it may be empty (pandas' ``to_markdown`` leaves the index's header blank:
#: ``|    | month | region |``)
_TABLE_ROW = re.compile(r"[ \t]*\|(?:[ \t]*\|)*[ \t]*[^|\s][^|]*\|")
_SETEXT_RE = re.compile(r"(?:=+|-+)[ \t\r]*")
_HR_RE = re.compile(r"([-*_])[ \t]*(?:\1[ \t]*){2,}[ \t\r]*|={3,}[ \t\r]*")
#: per mark of a rule or an underline, the characters of its body as :data:`_HR_RE` and :data:`_SETEXT_RE` read it
#: (the mark alone; the mark, spaces and tabs: ``- - -``), and what may trail it (:func:`_mark_lines`)
_MARK_BODY = {(c, spaced): _chars_table(c + (" \t" if spaced else "")) for c in "-*_=" for spaced in (False, True)}
_MARK_TAIL = _chars_table(" \t\r")


def _mark_lines(cp: np.ndarray, f: np.ndarray, e: np.ndarray, c0: np.ndarray, spaced: bool) -> np.ndarray:
    """Per line ``[f, e)`` whose first character is ``c0`` (one of ``-*_=``), whether it is that mark and more of it
    (and spaces and tabs among them, where ``spaced``, but for ``=``), then only spaces, tabs and carriage returns: two walks a
    line (:func:`._arrays._walk`), where a regular expression was tried at each (a docstring's ``----------`` under
    its ``Parameters``, a source file's thousands). What :data:`_SETEXT_RE` (not ``spaced``) and, on a line whose
    mark opens it three times in a row, :data:`_HR_RE` (``spaced``) match in full."""
    out = np.zeros(f.size, dtype=bool)
    if f.size == 0:
        return out
    steps = int((e - f).max()) + 1  # (a walk never runs out of steps before its line's end)
    for c in np.unique(c0).tolist():
        at = np.flatnonzero(c0 == c)
        body, _, _ = _walk(cp, f[at], e[at], _MARK_BODY[chr(c), spaced and c != 0x3D], steps)
        tail, _, _ = _walk(cp, body, e[at], _MARK_TAIL, steps)
        out[at] = tail >= e[at]
    return out


@dataclass(slots=True)
class _Lines:
    hard: np.ndarray  # offsets whose gap before is a hard break
    lo: np.ndarray  # sorted, disjoint [lo, hi) ranges in which no terminator may end a sentence
    hi: np.ndarray


_NO_LINES = _Lines(_EMPTY_I64, _EMPTY_I64, _EMPTY_I64)

_MD_CHARS = "#`~-*_+=|•‣◦"
_HR_CHARS = "-*_="
#: the marks a bullet list item opens with (a space after them)
BULLET_CHARS = "-*+•‣◦"
#: a numbered heading line (``1.2 Scope``, ``2.2. The source files``) is at most this long
NUMBERED_MAX_CHARS = 100
_ORDERED_CHARS = ".)、．）"
_MD_START = np.array(sorted(ord(c) for c in _MD_CHARS), dtype=np.uint32)
_HR_START = np.array(sorted(ord(c) for c in _HR_CHARS), dtype=np.uint32)
_BULLETS = np.array(sorted(ord(c) for c in BULLET_CHARS), dtype=np.uint32)
_ORDERED_MARKS = np.array(sorted(ord(c) for c in _ORDERED_CHARS), dtype=np.uint32)
_MD_START_SET = frozenset(_MD_CHARS + "0123456789０１２３４５６７８９")
_HR_SET = frozenset(map(ord, _HR_CHARS))
_BULLET_SET = frozenset(map(ord, BULLET_CHARS))
_ORDERED_SET = frozenset(map(ord, _ORDERED_CHARS))


def _digit(c: np.ndarray | int) -> np.ndarray | bool:
    """Whether each code point is an ASCII or a full-width digit: an ordered item's number is either
    (``1．`` and ``１．`` in a Chinese document's list alike)."""
    return ((c >= 0x30) & (c <= 0x39)) | ((c >= 0xFF10) & (c <= 0xFF19))


@dataclass(slots=True)
class _Kinds:
    """What the lines that may be Markdown look like (``sel``: their indices in the line list)."""

    sel: np.ndarray
    c0: np.ndarray
    fence: np.ndarray
    heading: np.ndarray
    rule: np.ndarray
    bullet: np.ndarray
    ordered: np.ndarray
    table: np.ndarray
    digits: np.ndarray
    mark: np.ndarray


def indent_columns(text: str, at: int) -> int:
    """The columns of whitespace before offset ``at`` on its line, a tab to the next multiple of four (as
    Markdown counts them: four or more make a line code, so ``    # not a heading``); 0 where text stands
    before it on the line."""
    k = at  # (a walk back over the whitespace alone: a search for the line's start crossed the whole text
    while k > 0 and text[k - 1].isspace() and text[k - 1] not in _NL_CHARS:  # where lines end in "\r" or
        k -= 1  # U+2029, not "\n", and every title line asked made the chunker quadratic: 54 s for 4 MB)
    if k > 0 and text[k - 1] not in _NL_CHARS:
        return 0
    return _indent_of(text[k:at])


def _comment_under(text: str, above: int, at: int) -> bool:
    """Whether the indented ``#`` line at ``at`` lies right under the line whose first character is at
    ``above`` (no blank line between) and that line is indented at least as deep: a comment inside an
    indented block (YAML's ``  # Trusted proxies`` under ``  port: 8080``, a script's), not a heading."""
    return text.count("\n", above, at) == 1 and indent_columns(text, above) >= indent_columns(text, at)


def code_indented(cp: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Whether the whitespace right before each offset of ``at`` spans four columns or more (four spaces, or
    a tab among its blanks): :func:`indent_columns` ``>= 4`` for a line's first character, in four gathers."""
    deep = np.zeros(at.size, dtype=bool)
    if at.size == 0:
        return deep
    run = np.ones(at.size, dtype=bool)  # still inside the blanks before the offset
    for k in range(1, 5):
        c = cp[np.maximum(at - k, 0)]
        run &= (at - k >= 0) & ((c == 0x20) | (c == 0x09))
        deep |= run & (c == 0x09)
    return deep | run


def _classify_vector(text: str, cp: np.ndarray, fl: np.ndarray, first: np.ndarray, end: np.ndarray) -> _Kinds | None:
    n = cp.size
    c0 = cp[first]
    sel = np.flatnonzero(_member(c0, _MD_START) | _digit(c0))
    if sel.size == 0:
        return None
    f, e, c0 = first[sel], end[sel], c0[sel].astype(np.int64)

    def g(k, at=None):  # character k after the line start, 0 past the line end (of the lines ``at`` only: all)
        p = f + k if at is None else f[at] + k
        return np.where(p < (e if at is None else e[at]), cp[np.minimum(p, n - 1)], 0).astype(np.int64)

    def run(alive: np.ndarray, longest: int, member: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Per line, how many of its first ``longest`` characters in a row are of the set (``member``), read where
        a run has none yet only at the lines whose run goes on (in most texts a run ends at its first or second
        character, and each step read every line)."""
        count = np.zeros(sel.size, dtype=np.int64)
        at = np.flatnonzero(alive)
        for k in range(longest):
            if at.size == 0:
                break
            at = at[member(g(k, at))]
            count[at] += 1
        return count

    def ws(c):
        return (c == 0) | ((fl[c] & _F_WS) != 0)

    c1, c2 = g(1), g(2)
    fence = ((c0 == 0x60) | (c0 == 0x7E)) & (c1 == c0) & (c2 == c0)
    # ATX heading: 1-6 '#' then a space or the end of the line
    hashes = run(c0 == 0x23, 7, lambda c: c == 0x23)
    heading = (hashes >= 1) & (hashes <= 6) & ws(g(np.minimum(hashes, 6)))
    heading &= ~code_indented(cp, f)  # (a "#" line indented four columns or more is code)
    for i in np.flatnonzero(heading & (g(1) != 0x23)).tolist():  # (a "# define" line is C's)
        if CPP_DIRECTIVE.match(text, int(f[i]), int(e[i])):
            heading[i] = False
    for i in np.flatnonzero(heading & (sel > 0) & ((cp[np.maximum(f - 1, 0)] == 0x20) | (cp[np.maximum(f - 1, 0)] == 0x09))).tolist():
        if _comment_under(text, int(first[sel[i] - 1]), int(f[i])):
            heading[i] = False
    # horizontal rule candidates, confirmed by a regex
    rule = _member(c0, _HR_START) & (((c1 == c0) & (c2 == c0)) | (((c1 == 0x20) | (c1 == 0x09)) & (c2 == c0)))
    rule &= (c0 != 0x3D) | ((c1 == c0) & (c2 == c0))
    # (where the mark opens its line three times in a row, by two walks a line; "- -" read by the regex)
    three = np.flatnonzero(rule & (c1 == c0) & (c2 == c0))
    rule[three] = _mark_lines(cp, f[three], e[three], c0[three], True)
    for i in np.flatnonzero(rule & ~((c1 == c0) & (c2 == c0))).tolist():
        if _HR_RE.fullmatch(text, int(f[i]), int(e[i])) is None:
            rule[i] = False
    bullet = _member(c0, _BULLETS) & ws(c1) & ~rule
    # ordered list: 1-9 digits, then '.', ')', '、'... not followed by a digit
    digits = run(_digit(c0), 10, _digit)
    mark = g(digits)
    after = g(digits + 1)
    ordered = (digits >= 1) & (digits <= 9) & _member(mark, _ORDERED_MARKS)
    ordered &= ~_digit(after)
    ordered &= ((mark != 0x2E) & (mark != 0x29)) | ws(after) | ((fl[after] & (_F_CJK | _F_UPPER)) != 0)
    table = c0 == 0x7C
    for i in np.flatnonzero(table).tolist():
        if _TABLE_ROW.match(text, int(f[i]), int(e[i])) is None:
            table[i] = False
    return _Kinds(sel, c0, fence, heading, rule, bullet, ordered, table, digits, mark)


def _classify_scalar(text: str, first: list[int], end: list[int]) -> _Kinds | None:
    """Scalar twin of :func:`_classify_vector`, for short texts."""
    fl = _scalar_flags()
    rows = []
    for li, f in enumerate(first):
        if text[f] not in _MD_START_SET:
            continue
        e = end[li]

        def g(k, f=f, e=e):
            return ord(text[f + k]) if f + k < e else 0

        def ws(c):
            return c == 0 or bool(fl[c] & _F_WS)

        c0, c1, c2 = g(0), g(1), g(2)
        fence = c0 in (0x60, 0x7E) and c1 == c0 and c2 == c0
        hashes = 0
        while c0 == 0x23 and hashes < 7 and g(hashes) == 0x23:
            hashes += 1
        heading = 1 <= hashes <= 6 and ws(g(hashes)) and indent_columns(text, f) <= 3 \
            and not (hashes == 1 and CPP_DIRECTIVE.match(text, f, e)) \
            and not (li > 0 and text[f - 1] in " \t" and _comment_under(text, first[li - 1], f))
        rule = (c0 in _HR_SET and ((c1 == c0 and c2 == c0) or (c1 in (0x20, 0x09) and c2 == c0))
                and (c0 != 0x3D or (c1 == c0 and c2 == c0)) and _HR_RE.fullmatch(text, f, e) is not None)
        bullet = c0 in _BULLET_SET and ws(c1) and not rule
        digits = 0
        while digits < 10 and _digit(g(digits)):
            digits += 1
        mark, after = g(digits), g(digits + 1)
        ordered = (1 <= digits <= 9 and mark in _ORDERED_SET and not _digit(after)
                   and (mark not in (0x2E, 0x29) or ws(after) or bool(fl[after] & (_F_CJK | _F_UPPER))))
        table = c0 == 0x7C and _TABLE_ROW.match(text, f, e) is not None
        rows.append((li, c0, fence, heading, rule, bullet, ordered, table, digits, mark))
    if not rows:
        return None
    cols = list(zip(*rows, strict=True))
    i64 = [np.array(cols[k], dtype=np.int64) for k in (0, 1, 8, 9)]
    b = [np.array(cols[k], dtype=bool) for k in range(2, 8)]
    return _Kinds(i64[0], i64[1], *b, i64[2], i64[3])


#: the characters reStructuredText underlines a title with (a line of one of them, at least as long)
RST_MARKS = "=-~^\"'`#*+_:.<>"


def rst_underline(line: str, above: str) -> bool:
    """Whether ``line`` underlines ``above`` as a reStructuredText title does (Sphinx documentation):
    three or more of one punctuation character, at least as long as the title, right under a line
    of text. ``~~~~`` or ``````` there is an underline, not a code fence (a fence opened under a title
    of Markdown would not be that long)."""
    title, under = above.strip(), line.strip()
    return (len(under) >= max(3, len(title)) and under[0] in RST_MARKS and under == under[0] * len(under)
            and bool(title) and (title[0].isalnum() or (title[0] in _INLINE_OPENERS and any(c.isalnum() for c in title))))


#: what a reStructuredText title may open with besides a letter or digit: inline markup (```0.53.0`_``,
#: ``*Emphasis*``, ``:ref:``...), a bracket or a quote
_INLINE_OPENERS = "`*_:[(\"'“‘"


def _above(text: str, a: int) -> str:
    """The line right above the line that holds offset ``a`` ("" at the text's first line)."""
    p = text.rfind("\n", 0, a)
    return "" if p < 0 else text[text.rfind("\n", 0, p) + 1 : p]


#: a line of this many backticks or tildes alone or more is a rule drawn in them, no fence's opener (a
#: fence's marks are three to a handful)
RULE_MARKS_MIN = 16


def _pair_fences(text: str, starts: Sequence[int], ends: Sequence[int]) -> tuple[list[int], list[int], bool]:
    """Fence lines (the ``[start, end)`` of each line's content, in order) paired as in CommonMark: a
    closer uses the opener's character, at least as many of them, and nothing after; a backtick line
    with backticks in its info string is inline code and opens nothing, nor does a title's
    reStructuredText underline (:func:`rst_underline`). Returns the indices of the
    openers and of the closers, and whether the last opener is left open (it runs to the end)."""
    match = _FENCE_RE.match
    openers: list[int] = []
    closers: list[int] = []
    opened, o_char, o_len = -1, "", 0
    for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
        marks, info = match(text, a, b).groups()
        if opened < 0:
            if marks[0] == "`" and "`" in info:
                continue
            if not info.strip() and (rst_underline(text[a:b], _above(text, a)) or len(marks) >= RULE_MARKS_MIN):
                continue  # a title's underline, a rule drawn in the marks (vimtutor's line of tildes)
            opened, o_char, o_len = i, marks[0], len(marks)
        elif marks[0] == o_char and len(marks) >= o_len and not info.strip():
            openers.append(opened)
            closers.append(i)
            opened = -1
    if opened >= 0:
        openers.append(opened)
    return openers, closers, opened >= 0


def line_openings(text: str, mark: str, start: int = 0, indent: int | None = None) -> list[int]:
    """Where ``mark`` opens a line of ``text`` that starts at or after ``start``: only spaces and tabs (at most
    ``indent`` of them, any number when None) between the line's start (the text's, or after a ``\n``)
    and the mark, in order. What ``^[ \t]*`` before the mark in a multi-line regular expression
    finds, by ``str.find`` (memchr-fast: a text without the mark costs one pass in C, where the regular
    expression tries every line)."""
    out = []
    rfind = text.rfind
    i = _find(text, mark, start)
    while i >= 0:
        line = rfind("\n", 0, i) + 1
        if line >= start and (indent is None or i - line <= indent) and not text[line:i].strip(" \t"):
            out.append(i)
            nxt = text.find("\n", i)  # (one per line)
            if nxt < 0:
                break
            i = _find(text, mark, nxt)
        else:
            i = _find(text, mark, i + 1)
    return out


def _fence_lines(text: str, start: int) -> list[tuple[int, int]]:
    """Each line at or after ``start`` that opens with three backticks or tildes past its indent: from
    the marks to the line's end (its ``\n`` left out), in order."""
    at = sorted(line_openings(text, "```", start) + line_openings(text, "~~~", start))
    out = []
    for a in at:
        b = text.find("\n", a)
        out.append((a, len(text) if b < 0 else b))
    return out

# front matter: YAML between "---" lines (closed by "---" or "..."), TOML between "+++" lines, at the very
# start of a text (after a byte-order mark), its first entry a key ("title: x", "title = 'x'", "[params]")
_FRONT_OPEN = re.compile(r"(?:---|(\+\+\+))[ \t]*\r?\n(?:[ \t]*(?:#[^\n]*)?\r?\n)*"
                         r"(?(1)[ \t]*(?:[\w\"'.-]+[ \t]*=|\[)|[\w\"'][^\n:]*:(?:[ \t]|\r?\n))")
_FRONT_CLOSE = {False: re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE),
                True: re.compile(r"^\+\+\+[ \t]*\r?$", re.MULTILINE)}


def front_matter(text: str, start: int = 0, stop: int | None = None) -> tuple[int, int] | None:
    """``[start, end)`` of the front matter that opens ``text[start:stop]`` (a static site's or a notes
    app's metadata: YAML between ``---`` lines, TOML between ``+++`` lines), from its opening marks to
    the end of its closing line; None if there is none. Read as Markdown its closing ``---`` would
    underline the last key as a setext heading, and ``# comment`` lines would be headings; it is one
    block of lines, like fenced code. Only a closed block whose first entry is a key counts (a text
    that opens with a rule and a paragraph is not metadata)."""
    stop = len(text) if stop is None else stop
    a = start + 1 if text.startswith("\ufeff", start, stop) else start
    if not (text.startswith("---", a) or text.startswith("+++", a)):
        return None
    m = _FRONT_OPEN.match(text, a, stop)
    if m is None:
        return None
    c = _FRONT_CLOSE[m.group(1) is not None].search(text, m.end() - 1, stop)
    if c is None:
        return None
    end = c.end() - (text[c.end() - 1] == "\r")
    return a, end


def fence_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each fenced code block of ``text``, from its opening marks to the end of
    its closing line (an unclosed fence runs to the end of the text), paired as the sentence
    splitter pairs them, of the text's front matter (:func:`front_matter`), of each HTML or C comment over
    several lines and of each reStructuredText literal block (:func:`literal_spans`), in order: other chunkers use it to keep code and metadata whole where they
    cut by lines."""
    return [(a, b) for a, b, _ in _block_spans(text)]


def _contains(text: str, mark: str) -> bool:
    """``mark in text``, each mark of :data:`_MARKS` read at most once per long text (:func:`_marks_known`: the
    splitter and the layout ask for "::", "/*" and "#+" two or three times each, every ask a scan of a prose text
    that holds none), and with the marks that open with its character (:func:`_contains_group`: "::", ":END:"
    and ":end:" are asked of every long text, and each hopped over all of its colons), the others by
    :func:`_contains_once`."""
    if len(text) < _MARKS_MIN or mark not in _MARK_INDEX:
        return _contains_once(text, mark)
    known = _marks_known(text)
    hit = known.get(mark)
    if hit is None:
        known.update(_contains_group(text, mark))
        hit = known[mark]
    return hit


def _contains_group(text: str, mark: str) -> dict[str, bool]:
    """``m in text`` for ``mark`` and every other mark of :data:`_MARKS` that opens with its first character, in
    one hop over that character's occurrences where :func:`_contains_once` made one per mark (each hop a
    ``str.find`` over the text, a few tenths of a millisecond a megabyte where the text's characters are two or
    four bytes wide); where the character is dense, :func:`_contains_once`'s own reading of each."""
    group = _MARK_GROUPS[mark[0]]
    if len(group) == 1 or _first_mark(text, mark, False) is not None:
        return {m: _contains_once(text, m) for m in group}
    left = list(group)
    out: dict[str, bool] = {}
    c, find, starts = mark[0], text.find, text.startswith
    second = _MARK_SECONDS[c]  # (most occurrences are followed by none of the marks' second characters)
    i = find(c)
    seen = 0
    while i >= 0 and left:
        if text[i + 1 : i + 2] in second:
            for m in [m for m in left if starts(m, i)]:
                out[m] = True
                left.remove(m)
        seen += 1
        if seen >= _FEW and i < _SPARSE * seen:  # (dense: the rest as _contains_once reads it, the pass or a search)
            read = _first_mark(text, mark, True) is not None
            out.update((m, (_first_mark(text, m, False) if read else _find(text, m, i)) >= 0) for m in left)  # type: ignore[operator]
            return out
        i = find(c, i + 1)
    out.update((m, False) for m in left)
    return out


@text_cache(maxsize=8)
def _marks_known(text: str) -> dict[str, bool]:
    """The answers :func:`_contains` has read for the marks of :data:`_MARKS` in ``text``, filled as they are
    asked (a value per text, kept with it; two threads asking at once both store the same answer)."""
    return {}


def _contains_once(text: str, mark: str) -> bool:
    """``mark in text``, sooner where its first character is rare: that character is found with
    ``str.find`` (a single character's search, some 0.35 ns a character), and the whole mark compared only
    where it occurs. A search for two characters or more reads some 1 ns a character, so the hops go
    on while the first character stays rarer than one in :data:`_SPARSE` (a colon in prose, ``/`` in
    text that is not code); past :data:`_FEW` occurrences denser than that, the plain search runs from
    there (:func:`_find`); for one of :data:`_MARKS` in a long text, the pass that finds all of them at
    once runs instead (:func:`_first_marks`: a text of code, dense in backticks, hashes, dots and slashes,
    would be searched again for each), and its answers serve every later search for them in that text."""
    first = _first_mark(text, mark, False)
    if first is not None:
        return first >= 0
    i = text.find(mark[0])
    seen = 0
    while i >= 0:
        if text.startswith(mark, i):
            return True
        seen += 1
        if seen >= _FEW and i < _SPARSE * seen:
            first = _first_mark(text, mark, True)
            return (first if first is not None else _find(text, mark, i)) >= 0
        i = text.find(mark[0], i + 1)
    return False


def _find(text: str, mark: str, start: int = 0) -> int:
    """``text.find(mark, start)`` (``start`` at or past 0), sooner for a mark of two characters or more: a
    regular expression's literal search reads some 0.3 ns a character of a long text where ``str.find``
    reads 0.7 to 2 (measured on the bench's corpora: English, Chinese, code)."""
    if len(mark) < 2:
        return text.find(mark, start)
    first = _first_mark(text, mark, False)
    if first is not None and (first < 0 or start <= first):  # (none at all, or the first is at or past start)
        return first
    m = _literal(mark).search(text, start)
    return -1 if m is None else m.start()


@lru_cache(maxsize=64)
def _literal(mark: str) -> re.Pattern[str]:
    """The regular expression that finds ``mark`` as it is (marks are module constants)."""
    return re.compile(re.escape(mark))


#: the marks the splitter and the layout look for in every text (fences, comments, reStructuredText's literal
#: blocks and directives, org-mode's keywords and drawers, a Debian changelog's entries), each found at most once
#: per text
_MARKS = ("```", "~~~", "<!--", "/*", "::", "::\n", "::\r\n", ":: ", ".. code", ".. sourcecode", "#+", "; urgency=",
          ":END:", ":end:")
#: characters from which a text's marks are looked for in one pass (a shorter text's searches cost less than
#: the pass's call)
_MARKS_MIN = 1 << 12


def _first_mark(text: str, mark: str, read: bool) -> int | None:
    """``text.find(mark)`` where ``mark`` is one of :data:`_MARKS` and the text is long, from
    :func:`_first_marks`: read now where ``read``, else only where an earlier search read it; None otherwise
    (the caller searches: where the marks' first characters are rare, ``str.find`` hops over a text faster
    than the pass reads it)."""
    if len(text) < _MARKS_MIN or mark not in _MARK_INDEX:
        return None
    first = _first_marks(text) if read else _first_marks.peek(text)  # type: ignore[attr-defined]
    return None if first is None else first[_MARK_INDEX[mark]]


_MARK_INDEX = {m: k for k, m in enumerate(_MARKS)}
#: per first character of the marks of :data:`_MARKS`, those that open with it (:func:`_contains_group`)
_MARK_GROUPS = {c: tuple(m for m in _MARKS if m[0] == c) for c in {m[0] for m in _MARKS}}
_MARK_SECONDS = {c: frozenset(m[1] for m in g) for c, g in _MARK_GROUPS.items()}


@text_cache(maxsize=8)
def _first_marks(text: str) -> list[int] | None:
    """Where each mark of :data:`_MARKS` first occurs in ``text`` (-1: nowhere), in one compiled pass over its
    code points (:func:`logichunk.native.first_marks`): a text of code holds many backticks, hashes and slashes,
    and a search per mark read it a dozen times. None where the kernel is not available."""
    return native.first_marks(codepoints(text), _MARKS)


#: occurrences of a mark's first character :func:`_contains` looks at one by one in any case
_FEW = 256
#: characters per occurrence of a mark's first character past which :func:`_contains` keeps hopping (a
#: hop costs some 0.25 µs in Python, the plain search of what the hop skips ~1 ns a character)
_SPARSE = 250


def _literal_marks(text: str) -> bool:
    """Whether a line of ``text`` ends with reStructuredText's ``::`` or holds a directive of code (a literal
    block may follow)."""
    if not _contains(text, "::"):  # (one search where most texts hold none)
        return False
    return _contains(text, "::\n") or ("\r" in text and _contains(text, "::\r\n")) \
        or (_contains(text, ":: ") and (_find(text, ".. code") >= 0 or _find(text, ".. sourcecode") >= 0))  # (".. code-block:: c")


def _in_taken(a: int, lo: list[int], taken: list[tuple[int, int, bool]]) -> bool:
    """Whether offset ``a`` lies inside one of the ``taken`` blocks (sorted, disjoint; ``lo`` their starts): a
    mark there is the block's text, not a new block's opening."""
    k = bisect_right(lo, a) - 1
    return k >= 0 and a < taken[k][1]


@text_cache(maxsize=8)
def _block_spans(text: str) -> list[tuple[int, int, bool]]:
    """:func:`fence_spans`, each with whether a closing line ends it, in order (kept per text: the splitter reads
    its literal blocks, the layout all of them; callers do not change the list)."""
    fm = front_matter(text)
    lines = _fence_lines(text, fm[1] if fm else 0) if _contains(text, "```") or _contains(text, "~~~") else []
    out = [(*fm, True)] if fm else []
    if lines:
        openers, closers, left_open = _pair_fences(text, [a for a, _ in lines], [b for _, b in lines])
        ends = [lines[c][1] for c in closers] + ([len(text)] if left_open else [])
        out += [(lines[o][0], e, k < len(closers)) for k, (o, e) in enumerate(zip(openers, ends, strict=True))]
    for opener, closer in _COMMENTS:
        if _contains(text, opener):
            out = sorted(out + _comment_spans(text, out, opener, closer))
    if _literal_marks(text):
        out = sorted(out + literal_spans(text, out))
    if _contains(text, "#+"):
        out = sorted(out + _org_block_spans(text, out))
    if _contains(text, ":END:") or _contains(text, ":end:"):
        out = sorted(out + _drawer_spans(text, out))
    return out


#: org-mode's block lines (``#+BEGIN_SRC python``, ``#+begin_example``, ``#+END_SRC``): the block's name
_ORG_BLOCK = re.compile(r"#\+(begin|end)_(\w+)", re.IGNORECASE)


def _org_block_spans(text: str, taken: list[tuple[int, int, bool]]) -> list[tuple[int, int, bool]]:
    """org-mode's blocks (``#+BEGIN_SRC python`` ... ``#+END_SRC``, an example's, a quote's), outside the
    ``taken`` blocks: org's fences, each from its opening line to the end of the ``#+END_`` line of its name
    (an unclosed one is left as text, as an unclosed comment is). What a source block holds is code, its blank
    lines no paragraph breaks, and the block is kept whole where it fits."""
    out: list[tuple[int, int, bool]] = []
    edge = 0
    lo = [x for x, _, _ in taken]
    marks = [(a, m) for a in line_openings(text, "#+") if (m := _ORG_BLOCK.match(text, a))]
    ends: dict[str, list[int]] = {}  # (per block name, its "#+END_" lines' openings, in order: one search per opening)
    for a, m in marks:
        if m.group(1).lower() == "end":
            ends.setdefault(m.group(2).lower(), []).append(a)
    for a, m in marks:
        if a < edge or _in_taken(a, lo, taken) or m.group(1).lower() != "begin":
            continue
        named = ends.get(m.group(2).lower(), [])
        at = bisect_right(named, a)
        if at == len(named):
            continue
        close = named[at]
        line_end = text.find("\n", close)
        edge = b = len(text) if line_end < 0 else line_end
        out.append((a, b, True))
    return out


#: org-mode's drawer lines: an opening one (``:PROPERTIES:``, ``:LOGBOOK:``, its name in the group) and the closing
#: ``:END:``, each alone on its line past its indent
_DRAWER_OPEN = re.compile(r"[ \t]*:([A-Za-z][\w-]*):[ \t]*\r?$", re.MULTILINE)
_DRAWER_END = re.compile(r"[ \t]*:END:[ \t]*\r?$", re.MULTILINE | re.IGNORECASE)
_ORG_HEADLINE = re.compile(r"^\*+[ \t]", re.MULTILINE)


def _drawer_spans(text: str, taken: list[tuple[int, int, bool]]) -> list[tuple[int, int, bool]]:
    """org-mode's drawers (``:PROPERTIES:`` ... ``:END:`` under a heading, a ``:LOGBOOK:`` of clock lines and
    notes), outside the ``taken`` blocks: each from its opening line to the end of the next ``:END:`` line, with no
    headline between (a drawer never holds one; an unclosed one is left as text). Why: a drawer is its heading's
    metadata, one block kept whole where it fits, as a source block is (a chunk ended mid-drawer, the next opened
    with ``:END:``)."""
    out: list[tuple[int, int, bool]] = []
    closes = sorted(line_openings(text, ":END:") + line_openings(text, ":end:"))
    if not closes:
        return out
    lo = [x for x, _, _ in taken]
    edge = 0
    for a in line_openings(text, ":"):
        if a < edge or _in_taken(a, lo, taken):
            continue
        line = text.rfind("\n", 0, a) + 1
        m = _DRAWER_OPEN.match(text, line)
        if m is None or m.group(1).upper() == "END":
            continue
        k = bisect_right(closes, a)
        if k == len(closes) or not _DRAWER_END.match(text, text.rfind("\n", 0, closes[k]) + 1) \
                or _ORG_HEADLINE.search(text, a, closes[k]):
            continue
        end = text.find("\n", closes[k])
        edge = b = len(text) if end < 0 else end
        out.append((a, b, True))
    return out


#: a line that ends with reStructuredText's ``::`` (its literal block follows), or a directive of code
#: (``.. code-block:: python``, ``.. code::``, ``.. sourcecode::``: its indented body follows, options first)
_LITERAL_MARK = re.compile(r"::[ \t]*\r?\n")
_CODE_DIRECTIVE = re.compile(r"\.\. (?:code-block|code|sourcecode)::[^\n]*\n")
#: a line of reStructuredText's explicit markup (a directive, a comment, a target), past its indent
_EXPLICIT_LINE = re.compile(r"[ \t]*\.\.[ \t]")


def literal_spans(text: str, taken: list[tuple[int, int, bool]] | None = None) -> list[tuple[int, int, bool]]:
    """reStructuredText's literal blocks: a line that ends with ``::`` (``run this::``, a lone ``::``) over a
    blank line and lines indented deeper than it, up to the first line that is not; each from the ``::`` to
    the end of its last indented line (no closing line ends it), outside the ``taken``
    blocks. What it holds is code: ``# In ~/.aws/config`` in one is no heading. A block starts at its ``::``
    (the sentence that holds the mark opens it, as a fence's opening line opens a fence). So does a directive
    of code (``.. code-block:: cmake``) over its options (``:linenos:``, indented, before the blank line) and
    its body, from the directive's line."""
    out: list[tuple[int, int, bool]] = []
    taken = taken or []
    lo = [x for x, _, _ in taken]
    edge = 0
    # (the directives found by str.find: a multi-line pattern would try every line of the text)
    directives = [m for mark in (".. code", ".. sourcecode") for at in line_openings(text, mark)
                  if (m := _CODE_DIRECTIVE.match(text, at))]
    for m_start, m_end in sorted([*_literal_marks_at(text), *((m.start(), m.end()) for m in directives)]):
        a = text.rfind("\n", 0, m_start) + 1  # the "::" line's start
        if a < edge or _in_taken(a, lo, taken):
            continue
        directive = text[m_start] != ":"
        if not directive and _EXPLICIT_LINE.match(text, a):
            continue  # (a directive's "::" opens its body, no literal block: ".. note::" over its text)
        base = _indent_of(text[a:m_start] if not directive else text[a:m_end])
        at, end, blank = m_end, -1, False
        while at < len(text):
            nl = text.find("\n", at)
            line_end = len(text) if nl < 0 else nl
            line = text[at:line_end]
            if line.strip():
                deeper = _indent_of(line) > base
                if directive and not blank and deeper and line.lstrip().startswith(":"):
                    at = nl + 1 if nl >= 0 else len(text)  # (a directive's option)
                    continue
                if not blank or not deeper:  # (a blank line first, then deeper lines)
                    break
                end = line_end
            else:
                blank = True
            if nl < 0:
                break
            at = nl + 1
        if end > 0:
            out.append((a if directive else m_start, end, False))
            edge = end
    return out


def _literal_marks_at(text: str) -> list[tuple[int, int]]:
    """Where :data:`_LITERAL_MARK` matches in ``text``, as ``(start, end)``: the lines that end with ``::`` (past
    spaces and tabs and a carriage return) before a line feed, read from the text's :func:`~.lines.line_table`
    (a regular expression's scan read every character of a text of code, dense in ``::``)."""
    t = line_table(text)
    k = tail_marks(text, "::")
    return list(zip((t.last[k] - 1).tolist(), (t.end[k] + 1).tolist(), strict=True))


#: reStructuredText's directive opening a line (``.. note::``, ``.. image:: cat.png``, ``.. py:function::``)
_DIRECTIVE = re.compile(r"\.\.[ \t]+\w[\w.+-]*(?::[\w.+-]+)*::(?=[ \t\r\n]|$)")
#: a field's marker, reStructuredText's ``:name:`` (``:alt:``, ``:param x:``, ``:noindex:``)
_FIELD_MARKER = r":[^:\s][^:\n]*:"
#: a field line, a directive's option (``   :alt: A cat.``, ``   :linenos:``): indented, ``:name:``, a blank or the end
_OPTION = re.compile(rf"[ \t]+{_FIELD_MARKER}(?=[ \t\r\n]|$)")
#: a field's marker alone, its line stripped (``:noindex:``, ``:returns:``): a field list's item, no lead-in
FIELD_ALONE = re.compile(_FIELD_MARKER)
#: a doctest's prompt opening a line (``>>> for i in x:``), or its continuation's (``...     total += i``)
DOCTEST_PROMPT = re.compile(r"[ \t]*(?:>>>|\.\.\.)(?:[ \t]|$)")


@text_cache(maxsize=8)
def directive_options(text: str) -> list[tuple[int, int]]:
    """reStructuredText's directives' options: the field lines right under a directive's line (``.. image::
    cat.png`` over ``   :alt: A picture. Of a cat.``), indented deeper, before any blank line; per directive,
    from its first option line's start to its last one's end (the line break left out), in order. Why: an
    option's value is one field, not sentences (its ``. `` ends none), and the options are the directive's
    head, which opens its body as the directive's line does."""
    out: list[tuple[int, int]] = []
    if not _contains(text, "::"):  # (every directive holds "::", most texts none: known once, where the regex
        return out  # search read the whole text, ~2 ns a character)
    t = line_table(text)  # (the lines that open with ".." past their indent, a directive's mark tried at each: a
    for k in head_marks(text, "..").tolist():  # regular expression's scan read every character of the text)
        at, line = int(t.first[k]), int(t.start[k])
        if _DIRECTIVE.match(text, at) is None:
            continue
        base = _indent_of(text[line:at])
        nl = text.find("\n", at)
        first = last = -1
        while nl >= 0:
            line_end = text.find("\n", nl + 1)
            line_end = len(text) if line_end < 0 else line_end
            line = text[nl + 1 : line_end]
            if _OPTION.match(line) is None or _indent_of(line) <= base:
                break
            first = nl + 1 if first < 0 else first
            last = line_end - (line.endswith("\r"))
            nl = line_end if line_end < len(text) else -1
        if first >= 0:
            out.append((first, last))
    return out


def _indent_of(line: str) -> int:
    """The columns of a line's indent, a tab to the next multiple of four."""
    wide = line.expandtabs(4)
    return len(wide) - len(wide.lstrip(" "))


#: the comments read as blocks where they open a line and close on a later one: HTML's (Markdown's hidden
#: notes and metadata) and C's, which C, C++, Java, JavaScript, Go, Rust, CSS and SQL share (a doc comment
#: whose `` * `` lines are no list items)
_COMMENTS = (("<!--", "-->"), ("/*", "*/"))


def _comment_spans(text: str, taken: list[tuple[int, int, bool]], opener: str = "<!--", closer: str = "-->"
                   ) -> list[tuple[int, int, bool]]:
    """The comments (``opener`` ... ``closer``) that open a line and close on a later one (outside the
    ``taken`` blocks), each from its opening marks to the end of the line that closes it: a block like a
    fence, kept whole where it fits (an unclosed one is left as text: nothing says where it would end).
    HTML's opens past an indent of at most three columns, as Markdown reads it; C's past any indent."""
    out: list[tuple[int, int, bool]] = []
    edge = 0
    lo = [x for x, _, _ in taken]  # (sorted, disjoint)
    for a in line_openings(text, opener, 0, 3 if opener == "<!--" else None):
        if a < edge or _in_taken(a, lo, taken):
            continue
        close = _find(text, closer, a + len(opener))
        if close < 0:
            break
        line_end = text.find("\n", close)
        b = len(text) if line_end < 0 else line_end
        if "\n" in text[a:close]:  # (a comment on one line is one line already)
            out.append((a, b, True))
        edge = b
    return out


def _structure(text: str, first: np.ndarray, end: np.ndarray, nl: np.ndarray, kinds: _Kinds | None) -> _Lines:
    """From line kinds to hard breaks and no-split ranges: fences pair up, setext underlines and
    tables are recognised across lines."""
    fm = front_matter(text)
    records = record_lines(text, first, end, nl)  # (a CSV's, a JSON Lines file's, an aligned table's rows)
    if kinds is None:
        if fm is None and records.size == 0 and not _contains(text, "::"):
            return _NO_LINES
        kinds = _Kinds(_EMPTY_I64, _EMPTY_I64, *(np.zeros(0, dtype=bool) for _ in range(6)), _EMPTY_I64, _EMPTY_I64)
    m = first.size
    n = len(text)
    sel, c0 = kinds.sel, kinds.c0
    f, e = first[sel], end[sel]
    heading, rule, bullet, ordered, table = kinds.heading, kinds.rule, kinds.bullet, kinds.ordered, kinds.table
    digits, mark = kinds.digits, kinds.mark

    # front matter: its lines are metadata, whatever they look like (one block, split at line ends)
    in_front = f < fm[1] if fm else np.zeros(sel.size, dtype=bool)
    # fences pair up in order (CommonMark): a closer uses the opener's character, at least as many
    # of them, and nothing after; an opener left open runs to the end of the text
    in_fence = in_front.copy()
    hard_lines: list[int] = []  # indices into ``sel`` of fence openers (their gap before is hard)
    hard_after: list[int] = []  # ... and of fence closers (their gap after is hard)
    lo: list[int] = [fm[0]] if fm else []
    hi: list[int] = [fm[1]] if fm else []
    fence = kinds.fence & ~in_front
    if fence.any():
        f_list, e_list = f.tolist(), e.tolist()
        idx = np.flatnonzero(fence).tolist()
        openers, closers, left_open = _pair_fences(text, [f_list[i] for i in idx], [e_list[i] for i in idx])
        hard_lines = [idx[k] for k in openers]
        hard_after = [idx[k] for k in closers]
        # mark the fenced lines: +1 at each opener, -1 after each closer
        delta = np.zeros(sel.size + 1, dtype=np.int64)
        delta[hard_lines] += 1
        delta[np.asarray(hard_after, dtype=np.int64) + 1] -= 1
        in_fence |= np.cumsum(delta[:-1]) > 0
        lo += [f_list[a] for a in hard_lines]
        hi += [e_list[b] for b in hard_after] + ([n] if left_open else [])
    # reStructuredText's literal blocks (``run this::`` over indented lines, ``.. code-block::`` over its options
    # and body) are code as a fence's lines are; a directive's options are one field each (``:alt: A cat. Grey.``)
    kept: list[tuple[int, int]] = []
    if _literal_marks(text):  # (the literal blocks among the text's blocks: each opens at its "::" or its directive)
        for a, b, _ in _block_spans(text):
            if text.startswith("::", a) or _EXPLICIT_LINE.match(text, a):
                in_fence |= (f >= a) & (f < b)
                kept.append((a, b))
    kept += directive_options(text)
    if in_fence.any():  # lines inside a fence are code, whatever they look like
        plain = ~in_fence
        heading, rule, bullet, ordered, table = heading & plain, rule & plain, bullet & plain, ordered & plain, table & plain
    else:
        rule = rule.copy()

    # setext headings: a line of '=' or '-' right under a paragraph line underlines it
    setext: list[int] = []  # indices into the full line list of the heading text
    under = np.flatnonzero(rule & ((c0 == 0x3D) | (c0 == 0x2D)))
    if under.size:
        taken = np.zeros(m, dtype=bool)
        taken[sel[heading | rule | bullet | ordered | table | in_fence]] = True
        li = sel[under]
        ok = li > 0
        prev = np.maximum(li - 1, 0)
        ok &= ~taken[prev]
        # a blank line in between: a rule, not an underline
        ok &= np.searchsorted(nl, first[li]) - np.searchsorted(nl, first[prev]) == 1
        under = under[ok]
        under = under[_mark_lines(codepoints(text), f[under], e[under], c0[under], False)]  # (what _SETEXT_RE matches)
        rule[under] = False
        setext = (sel[under] - 1).tolist()

    # tables: hard before the first row and after the last (rows are consecutive lines)
    row = np.zeros(m + 2, dtype=bool)
    row[sel[table] + 1] = True
    hard_full = np.zeros(m + 1, dtype=bool)
    hard_full[:m] |= row[1:-1] & ~row[:-2]
    hard_full[1:] |= row[1:-1] & ~row[2:]
    hard_full[sel[heading | rule | bullet | ordered]] = True
    hard_full[sel[rule] + 1] = True
    if hard_lines:
        hard_full[sel[np.asarray(hard_lines)]] = True
    if hard_after:
        hard_full[sel[np.asarray(hard_after)] + 1] = True
    if fm:  # the line after the front matter's closing marks opens a new block
        hard_full[int(np.searchsorted(first, fm[1], side="right"))] = True
    setext_a = np.asarray(setext, dtype=np.int64)
    hard_full[setext_a] = True
    # a heading belongs to what follows it: the gap after one is never hard, even when a list, a
    # table or a fence follows (else the cut lands between a heading and its content)
    heads = np.concatenate((sel[heading], setext_a))
    after = np.concatenate((sel[heading] + 1, setext_a + 2))
    keep = (after < m) & ~np.isin(after, heads)
    hard_full[after[keep]] = False
    hard = first[np.flatnonzero(hard_full[:m])]

    # ranges never split on punctuation: headings, rules, table rows, fences, list-marker dots
    unit = heading | rule | table
    odot = ordered & ((mark == 0x2E) | (mark == 0xFF0E))
    lo_a = np.concatenate((f[unit], np.asarray(lo, dtype=np.int64), first[setext_a], f[odot] + digits[odot]))
    hi_a = np.concatenate((e[unit], np.asarray(hi, dtype=np.int64), end[setext_a], f[odot] + digits[odot] + 1))
    order = np.argsort(lo_a, kind="stable")
    lo_a, hi_a = lo_a[order], hi_a[order]
    if records.size or kept:  # (a record's line may hold a unit already: the ranges are merged, to stay disjoint)
        lo_a, hi_a = _merged(np.concatenate((lo_a, first[records], np.array([a for a, _ in kept], np.int64))),
                             np.concatenate((hi_a, end[records], np.array([b for _, b in kept], np.int64))))
    return _Lines(hard, lo_a, hi_a)


def _merged(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of the ranges ``[lo, hi)`` as sorted, disjoint ranges."""
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)
    opens = np.ones(lo.size, dtype=bool)
    opens[1:] = lo[1:] > reach[:-1]
    return lo[opens], np.maximum.reduceat(hi, np.flatnonzero(opens)) if lo.size else hi


def _inside(pos: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """True where ``pos`` falls in one of the sorted, disjoint ranges ``[lo, hi)``."""
    if lo.size == 0 or pos.size == 0:
        return np.zeros(pos.size, dtype=bool)
    k = native.searchsorted(lo, pos, side="right") - 1  # (positions mostly in order: each search from the one before)
    kk = np.maximum(k, 0)
    return (k >= 0) & (pos < hi[kk])

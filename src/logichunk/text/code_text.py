"""Which texts are source code and which of their lines are comments: the one reading of code by its lines, for
the sentence splitter (:mod:`.sentences`: in code a line break ends a sentence, a comment's lines keep prose's
soft-wrap reading) and for the layout's marks of code (:mod:`.code_lines`: nesting, closing lines, lead-ins).

Why a module of its own, under the splitter: the splitter must know a text is code before it joins lines as
soft-wrapped prose (``for (...) {`` over ``if (...) {``, a list's ``'name',`` lines, ``import os`` over
``import sys``), and :mod:`.code_lines`, which reads sentences, stands on the splitter. Both read the same lines
through :func:`code_lines`, each from its own offsets, so one text is code for both or for neither.

What makes a text code is evidence in the text, never its file's name: a brace language's line ends
(:func:`brace_code`: a C macro's continued lines are its directive's, an ES module's import lines are directives, a
fence in a comment or a string is no Markdown, nor is a reStructuredText title's ``~~~~`` underline), or a script's
``#!`` line, or a Python module's definitions at column 0 with its imports there or a docstring or a definition on
its first line of code, or a docstring on its first line and imports at column 0 (:func:`python_module`); or the
form of a whole text: a JavaScript module that is one object (``module.exports = {`` to its closing line). Every
bound is set a priori, none fitted. The lines of a ``/* ... */`` comment are read once for both readers
(:func:`slash_comments`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .. import native
from ._arrays import _chars_table, _in_table, _walk
from .cache import text_cache
from .line_kinds import CPP_DIRECTIVE, rst_underline

__all__ = ["BRACE_SLACK", "CODE_LINE_SHARE", "OPEN_LINE_SHARE", "CodeLines", "brace_code", "code_lines",
           "docstrings", "may_be_code", "python_module", "slash_comments"]

#: a brace language's text: at least this share of its lines of code (its comments aside) end as code does, with
#: ``;``, ``{``, ``}``, a bracket or a comma, or are a C preprocessor's directive (prose ends most of its lines with a
#: word or a full stop; semicolon-free JavaScript and Go end theirs with a call's ``)`` or a list's ``,``)
CODE_LINE_SHARE = 1 / 2
#: ... and at least this share with ``;`` or ``{`` or a directive (a statement's end, a block's opening: what
#: LaTeX's ``\end{figure}`` and a verse's commas never are)
OPEN_LINE_SHARE = 1 / 16
#: ... and its braces balance: ``{`` and ``}`` as many, to within this share (a brace in a string, a macro's
#: half); it holds a block (two ``{`` at least, one ending a line) or two directives
BRACE_SLACK = 1 / 10

_ENDS_CODE = _chars_table(";{}()[],")
_ENDS_OPEN = _chars_table(";{")
_ENDS_IMPORT = _chars_table(";'\"")
_MAY_OPEN = _chars_table(";{:")  # (and Python's block opening)
_TRAIL = _chars_table(" \t\r\n\f\v")
_SLASH, _STAR, _HASH, _BACKSLASH = ord("/"), ord("*"), ord("#"), ord("\\")
_TICK, _TILDE = ord("`"), ord("~")

#: a JavaScript module's line that imports or re-exports (``import x from './x.js';``, ``import './polyfill.js'``,
#: ``export * from './options.js'``): the module's directive, as ``#include`` is C's, read as one; it ends with a
#: module's path in quotes (prose does not). Why: an ES module of only such lines holds no block, so the brace
#: evidence alone passed it by.
_MODULE_LINE = re.compile(r"[ \t]*(?:(?:import|export)\b[^\n]*?[ \t}*]from[ \t]*|import[ \t]*)(['\"])[^'\"\n]+\1"
                          r"[ \t]*;?[ \t\r\n]*")

#: a Python module's lines at column 0: an import (``import os``, ``from .x import y``) and a definition (``def f(``,
#: ``async def f(``, ``class X:``)
_PY_IMPORT = re.compile(r"^(?:import[ \t]+[A-Za-z_][\w.]*|from[ \t]+\.*[\w.]*[ \t]+import[ \t])", re.MULTILINE)
_PY_DEF = re.compile(r"^(?:(?:async[ \t]+)?def[ \t]+[A-Za-z_]\w*[ \t]*\(|class[ \t]+[A-Za-z_]\w*[ \t]*[(:])", re.MULTILINE)
#: ... or, where it imports nothing at column 0, its first line of code (blank lines and ``#`` lines above it
#: aside: a licence, an encoding) opens a docstring or is a definition: no prose, Markdown or data opens so
_PY_HEAD = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\r?\n)*(?:[rRuU]?(?:\"\"\"|''')|(?:async[ \t]+)?def[ \t]+[A-Za-z_]\w*[ \t]*\("
                      r"|class[ \t]+[A-Za-z_]\w*[ \t]*[(:])")

#: a text that opens (blank lines aside) with a docstring's quotes: a Python module of mostly its docstring may hold
#: no brace, hash nor definition, and its lines need not end as code's do
_DOC_HEAD = re.compile(r"(?:[ \t]*\r?\n)*[rRuU]?(?:\"\"\"|\'\'\')")
#: a JavaScript module that is one object or array (``module.exports = {``, ``export default [``; its comments and a
#: ``'use strict'`` line above it aside) to its closing line (``}``, ``};``, ``]``): code of one block, whose lines end
#: with a comma, not as statements do
_ONE_BLOCK = re.compile(r"(?:[ \t]*(?://[^\n]*|/\*(?:[^*]|\*(?!/))*\*/[ \t]*|(['\"])use strict\1;?)?\r?\n)*"
                        r"(?:module\.exports|export[ \t]+default)[ \t]*=?[ \t]*[{\[][ \t]*\r?\n")
_ONE_BLOCK_END = re.compile(r"[}\]][ \t]*;?[ \t\r\n]*")


@dataclass(frozen=True)
class CodeLines:
    """Per line of a text of code (as given to :func:`code_lines`): ``first`` and ``last``, the code points its
    text opens and ends with, ``second``, the one after its first (the text's last past its end), ``back``, the
    offset of its last character, and ``comment``, whether it is a comment (``//``, a line of a ``/* ... */``
    comment, ``#`` in a script or a Python module); ``script``: the text is a script or a Python module (read as
    such, not by the brace evidence)."""

    first: np.ndarray
    second: np.ndarray
    last: np.ndarray
    back: np.ndarray
    comment: np.ndarray
    script: bool


def brace_code(text: str, lo: int, hi: int, last: np.ndarray, directive: np.ndarray, fenced: bool = False) -> bool:
    """Whether ``text[lo:hi]`` is a brace language's source, read from its lines of code (comments aside): ``last``,
    the character each ends with (a code point), and ``directive``, whether it is a C preprocessor's line (or one
    it continues with ``\\``, or a JavaScript module's import line); ``fenced``: whether one of them opens a Markdown
    fence. It must open no fence (a ````` in a comment or a string is no Markdown) and not be a JSON document (one
    that opens with ``{`` or ``[``: data, read as such elsewhere); of its lines, :data:`CODE_LINE_SHARE` end as
    code does and :data:`OPEN_LINE_SHARE` as a statement or a block's opening; its braces balance
    (:data:`BRACE_SLACK`) and it holds a block or two directives. Why these: they are what statements and blocks
    look like at a line's end, which prose, Markdown, LaTeX and verse lines are not; every bound is set a priori,
    none fitted."""
    n = last.size
    code = int((_in_table(_ENDS_CODE, last) | directive).sum())
    open_ = int((_in_table(_ENDS_OPEN, last) | directive).sum())
    if n < 3 or fenced or code < CODE_LINE_SHARE * n or open_ < OPEN_LINE_SHARE * n:
        return False
    opens, shuts = text.count("{", lo, hi), text.count("}", lo, hi)
    if abs(opens - shuts) > BRACE_SLACK * max(opens, shuts):
        return False
    if not ((opens >= 2 and bool((last == ord("{")).any())) or int(directive.sum()) >= 2):
        return False
    return text[lo : min(hi, lo + 256)].lstrip()[:1] not in ("{", "[")


def python_module(text: str, lo: int, hi: int, outside: Callable[[int], bool]) -> bool:
    """Whether ``text[lo:hi]`` is a script (its first line a ``#!`` line) or a Python module: at column 0 it
    defines a function or a class, and it imports at column 0 or opens (blank and ``#`` lines aside) with a
    docstring or a definition (:data:`_PY_HEAD`); or, defining nothing at column 0, it opens with a docstring and
    imports at column 0; each at an offset that ``outside`` says lies outside a fence or a literal block (the
    example of a README is no module)."""
    if text.startswith("#!", lo):
        return True

    def found(pattern: re.Pattern) -> bool:
        m = pattern.search(text, lo, hi)
        while m is not None:
            if outside(m.start()):
                return True
            m = pattern.search(text, m.end(), hi)
        return False
    head = _PY_HEAD.match(text, lo, hi)
    headed = head is not None and outside(head.end() - 1)
    if not found(_PY_DEF):
        # (a module with no definition at column 0, mostly its docstring: a package's __init__, a module of
        # constants: its first line of code opens a docstring, and it imports at column 0)
        return headed and text[head.end() - 1] in "\"'" and found(_PY_IMPORT)
    return headed or found(_PY_IMPORT)


def may_be_code(text: str, lo: int, hi: int) -> bool:
    """Whether ``text[lo:hi]`` may be code at all, by searches of a few characters: a brace, a hash, a Python
    definition's ``def `` (a module with no comment and no brace), or a text that opens with a docstring's quotes (a
    module of mostly its docstring). Prose without them pays nothing more."""
    return text.find("{", lo, hi) >= 0 or text.find("#", lo, hi) >= 0 or text.find("def ", lo, hi) >= 0 \
        or _DOC_HEAD.match(text, lo, hi) is not None


def slash_comments(text: str, spans: Sequence[tuple[int, int, bool]], at: np.ndarray) -> np.ndarray:
    """Per offset of ``at`` (a line's or a sentence's first), whether it lies in a ``/* ... */`` comment over several
    lines: one of ``spans`` (the blocks :func:`~.line_kinds._block_spans` reads, ``(start, end, closed)`` in order:
    fences, literal blocks, comments) that opens with ``/*``. One reading for the splitter, per line, and for the
    layout, per sentence, so that both take the same lines for a C comment's."""
    blocks = [(a, b) for a, b, _ in spans if text.startswith("/*", a)]
    if not blocks:
        return np.zeros(at.size, bool)
    lo = np.array([a for a, _ in blocks], np.int64)
    hi = np.array([b for _, b in blocks], np.int64)
    k = np.searchsorted(lo, at, side="right") - 1
    return (k >= 0) & (at < hi[np.maximum(k, 0)])


@text_cache(maxsize=8)
def docstrings(text: str, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The triple-quoted strings of ``text[lo:hi]`` (a Python module's docstrings), as ``[start, end)`` offsets
    from the opening quotes to past the closing ones (the same quotes), in order; an unclosed one is none: wrapped
    prose inside code. (A search for each string's quotes, not a pattern's walk over every character; kept per text:
    the splitter and the layout both read them. Callers do not change the arrays. ``'''`` is looked for only up to
    the next three double quotes: its search never reads the inside of such a string, a module's docstrings, where
    it read the whole text.)"""
    starts: list[int] = []
    ends: list[int] = []
    find = text.find
    at = lo  # (where the next string may open)
    double = find('"""', lo, hi)  # (the next """ at or past at, kept until a string passes it)
    while True:
        single = find("'''", at, double if double >= 0 else hi)  # (a ''' before it opens first)
        if single >= 0:
            a, q = single, "'''"
        elif double >= 0:
            a, q = double, '"""'
        else:
            break
        b = find(q, a + 3, hi)
        if b < 0:
            break
        at = b + 3
        starts.append(a)
        ends.append(at)
        if 0 <= double < at:
            double = find('"""', at, hi)
    return np.array(starts, np.int64), np.array(ends, np.int64)


def _underline(text: str, a: int, b: int) -> bool:
    """Whether the line at ``[a, b)`` underlines the line right above it as a reStructuredText title
    (:func:`~.line_kinds.rst_underline`): ``~~~~`` under ``Usage`` in a docstring or a string is no Markdown fence."""
    p = text.rfind("\n", 0, a)
    above = "" if p < 0 else text[text.rfind("\n", 0, p) + 1 : p]
    return rst_underline(text[a:b], above)


def _line_reads(cp: np.ndarray, ts: np.ndarray, te: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per line (its text from ``ts``, up to ``te``), the code points :func:`code_lines` reads: the one its text
    opens with and the one after it, the one before ``te``, where a walk back from ``te - 1`` past trailing blanks
    stops (its last character, never before ``ts``) and the code points there and right before it. Why one
    function: the compiled kernel (:func:`logichunk.native.code_lines`) reads them in one pass over the lines, where
    these six numpy gathers each miss the cache once per line (a source file's tens of thousands); this is its
    twin, the same values."""
    fast = native.code_lines(cp, ts, te, _TRAIL)
    if fast is not None:
        return fast
    back, _, _ = _walk(cp, te - 1, ts, _TRAIL, 256, back=True)
    return (cp[ts], cp[np.minimum(ts + 1, cp.size - 1)], cp[np.maximum(te - 1, 0)], back, cp[np.maximum(back, 0)],
            cp[np.maximum(back - 1, 0)])


def code_lines(text: str, cp: np.ndarray, lo: int, hi: int, ts: np.ndarray, te: np.ndarray, slash: np.ndarray,
               hashed: Callable[[int], bool] | None) -> CodeLines | None:
    """The lines of ``text[lo:hi]`` read as code, or None where it is no code: each line's text from ``ts`` (its
    first non-space offset, in order) up to ``te`` (where the next line starts, or its terminator); ``slash``, per
    line, whether it lies in a ``/* ... */`` comment over several lines; ``hashed(lo)``: whether the text is a
    script or a Python module (:func:`python_module`, asked only where the lines may be code).

    Prose pays little: three searches (:func:`may_be_code`: a brace, a hash, ``def``), then, where one is found, a
    look at each line's first characters and last ones (:func:`_line_reads`, one compiled pass over the lines); a
    text of which not one line in :data:`OPEN_LINE_SHARE`'s share ends with ``;``, ``{`` or ``:``, opens with ``#``
    or is a comment is no code of any kind, and is read no further."""
    if ts.size < 2 or not may_be_code(text, lo, hi):
        return None
    first, second, tail, back, last, before = _line_reads(cp, ts, te)
    # (a JavaScript module of one object, a Python module of mostly its docstring: code by their form, whose lines
    # need not end as statements do; read by a match at the text's head)
    one = _ONE_BLOCK.match(text, lo, hi) is not None and _ONE_BLOCK_END.fullmatch(text, int(ts[-1]), hi) is not None
    doc = not one and hashed is not None and _DOC_HEAD.match(text, lo, hi) is not None and hashed(lo)
    # (what can pass the test below, read before the walk's answer: the character before each line's end a mark of
    # code or whitespace, past which the walk reads; a line that opens as a comment's may)
    maybe = _in_table(_MAY_OPEN, tail) | _in_table(_TRAIL, tail) | (first == _HASH) | (first == _SLASH) | slash
    if maybe.sum() < OPEN_LINE_SHARE * ts.size and not (one or doc):
        return None
    comment = ((first == _SLASH) & (second == _SLASH)) | slash
    comment |= (first == _SLASH) & (second == _STAR) & (last == _SLASH) & (before == _STAR)
    if (_in_table(_MAY_OPEN, last) | (first == _HASH) | comment).sum() < OPEN_LINE_SHARE * ts.size and not (one or doc):
        return None  # (no statement, block, directive nor comment to speak of: prose)
    script = doc or (not one and hashed is not None and hashed(lo))
    if script:
        comment |= first == _HASH
    elif not one:
        directive = np.zeros(ts.size, bool)
        hashes_at = np.flatnonzero(first == _HASH)
        directive[hashes_at] = [CPP_DIRECTIVE.match(text, int(ts[j]), int(te[j])) is not None
                                for j in hashes_at.tolist()]
        go_on = np.flatnonzero(last[:-1] == _BACKSLASH) + 1  # (a directive's lines continued by "\\" are its own)
        if go_on.size and directive.any():
            head = np.arange(ts.size)
            head[go_on] = 0
            directive = directive[np.maximum.accumulate(head)]
        fences = np.flatnonzero(((first == _TICK) | (first == _TILDE)) & ~comment)
        fenced = any(text.startswith(("```", "~~~"), int(ts[j])) and not _underline(text, int(ts[j]), int(te[j]))
                     for j in fences.tolist())  # (a reStructuredText title's underline is no fence)
        if not brace_code(text, lo, hi, last[~comment], directive[~comment], fenced):
            # (a line that opens with "i" or "e" and ends with a quote or ";", in a text that says "import" or
            # "export", may be a module's import: read only where the brace evidence fails)
            modules = np.flatnonzero(((first == 0x69) | (first == 0x65)) & ~comment & _in_table(_ENDS_IMPORT, last))
            if fenced or not modules.size or (text.find("import", lo, hi) < 0 and text.find("export", lo, hi) < 0):
                return None
            directive[modules] |= [_MODULE_LINE.fullmatch(text, int(ts[j]), int(te[j])) is not None
                                   for j in modules.tolist()]
            if not brace_code(text, lo, hi, last[~comment], directive[~comment], fenced):
                return None
    return CodeLines(first, second, last, back, comment, script)

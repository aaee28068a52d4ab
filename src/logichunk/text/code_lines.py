"""Source code passed as text, read as its author laid it out: which texts are code, how deep each line
is nested, which lines only close a block, and which comments lead into the code right under them.

Why a pass of its own: a brace language's file (JavaScript, TypeScript, C and its headers, Java, Go, Rust,
CSS) or a script has no headings and few blank lines, so prose's marks leave every line break of a function
alike, and a size limit cut a function where filling chunks pointed (``} else {`` opened a chunk while a cut
between two statements of the function's own body was there to take). What code does mark is read here,
each a fixed reading of the layout, no constant fitted to any evaluation:

* **nesting** — a line's indent is its depth (:attr:`CodeMarks.depth`, per gap: the rank of the next line's
  indent among the distinct indents of the text's lines of code; a cut inside a line is one deeper than the
  line): where a block must be cut, the gap before its shallowest line is taken first;
* **closing lines** — a line that only closes (``}``, ``});``, ``},``, ``]``, ``end``, ``fi``, ``done``)
  ends what it closes, so the gap before it is a heading's bond (:attr:`CodeMarks.closes`), not the weak
  bond a bracket line of any text keeps (:mod:`.structure`): it never opens a chunk;
* **comments as lead-ins** — a run of comment lines (``//``, ``/* ... */``, ``#`` in a script or a Python
  module) right above a line of code, no blank line between, is that code's lead-in: the gap under it is a
  heading's bond (:attr:`CodeMarks.leads`), and the run is a block kept whole where it fits
  (:attr:`CodeMarks.comment`), so the comment opens the chunk that holds the code and never ends one.

What makes a text code (:func:`brace_code`) is evidence in the text, never its file's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._arrays import _chars_table, _in_table, _walk
from .charclass import codepoints
from .line_kinds import CPP_DIRECTIVE
from .sentences import BREAK_LINE

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
_MAY_OPEN = _chars_table(";{:")  # (and Python's block opening)
_TRAIL = _chars_table(" \t\r\n\f\v")
#: a line that only closes: brackets, a statement's or a list's punctuation after them, a comment after that
#: (``}``, ``});``, ``},``, ``]``, ``} // for``), or a keyword that ends a block (``end``, shell's ``fi``,
#: ``done``, ``esac``)
_CLOSING = re.compile(r"(?:[)\]}][)\]};,]*|(?:end|fi|done|esac)\b[;,.]?)[ \t]*(?://.*|/\*.*\*/)?[ \t\r\n\f\v]*")
_CLOSING_FIRST = _chars_table(")]}efd")
_SLASH, _STAR, _HASH = ord("/"), ord("*"), ord("#")


@dataclass(frozen=True)
class CodeMarks:
    """Per gap of a layout's sentences (``n - 1``), what :func:`read_code` read in its texts of code: ``depth``
    (int: how much deeper than the text's shallowest line the gap lies; 0 outside code), ``closes`` (the
    sentence after opens a line that only closes), ``leads`` (under a comment run, over the code it leads
    into), ``comment`` (between two lines of one comment run), ``ends_block`` (a blank line under a line that only
    closes, at the text's shallowest indent: the end of a top-level definition, a block's break as a dedent's),
    ``opens`` (under a line that ends with ``{``, over a deeper line: the block's bond to its head, which a size
    limit breaks before a closing line's or a comment's, so where a block must be cut inside its bonds the next
    chunk opens with a line of its body, never with ``}``)."""

    depth: np.ndarray
    closes: np.ndarray
    leads: np.ndarray
    comment: np.ndarray
    ends_block: np.ndarray
    opens: np.ndarray


def brace_code(text: str, lo: int, hi: int, last: np.ndarray, directive: np.ndarray) -> bool:
    """Whether ``text[lo:hi]`` is a brace language's source, read from its lines of code (comments aside): ``last``,
    the character each ends with (a code point), and ``directive``, whether it is a C preprocessor's line. It
    must hold no Markdown fence and not be a JSON document (one that opens with ``{`` or ``[``: data, read as
    such elsewhere); of its lines, :data:`CODE_LINE_SHARE` end as code does and :data:`OPEN_LINE_SHARE` as a
    statement or a block's opening; its braces balance (:data:`BRACE_SLACK`) and it holds a block or two
    directives. Why these: they are what statements and blocks look like at a line's end, which prose,
    Markdown, LaTeX and verse lines are not; every bound is set a priori, none fitted."""
    n = last.size
    code = int((_in_table(_ENDS_CODE, last) | directive).sum())
    open_ = int((_in_table(_ENDS_OPEN, last) | directive).sum())
    if n < 3 or code < CODE_LINE_SHARE * n or open_ < OPEN_LINE_SHARE * n:
        return False
    opens, shuts = text.count("{", lo, hi), text.count("}", lo, hi)
    if abs(opens - shuts) > BRACE_SLACK * max(opens, shuts):
        return False
    if not ((opens >= 2 and bool((last == ord("{")).any())) or int(directive.sum()) >= 2):
        return False
    head = text[lo : min(hi, lo + 256)].lstrip()
    return head[:1] not in ("{", "[") and text.find("```", lo, hi) < 0 and text.find("~~~", lo, hi) < 0


def read_code(text: str, starts: np.ndarray, brk: np.ndarray, seams: np.ndarray, texts: list[tuple[int, int, int, int]],
              slash_blocks: np.ndarray, hashed: Callable[[int], bool] | None = None) -> CodeMarks | None:
    """The marks of the module docstring for the texts of code among ``texts`` (each ``(lo, hi, s0, s1)``: its
    offsets and its sentences ``[s0, s1)``; ``hashed(lo)``: whether the text at ``lo`` is a script or a Python
    module, read by the caller, whose ``#`` lines are comments and which is code without the brace evidence).
    ``starts``, ``brk`` and ``seams`` are the sentences' (:class:`~.sentences.SentenceSpans`); ``slash_blocks``: per
    sentence, whether it lies in a ``/* ... */`` comment over several lines. None where no text is code.

    Prose pays little: two searches of one character (a brace, a hash), then, where one is found, a walk over
    its lines' ends; a text of which not one line in :data:`OPEN_LINE_SHARE`'s share ends with ``;``, ``{`` or
    ``:``, opens with ``#`` or is a comment is no code of any kind, and is read no further (no search of several
    characters, no Python module's reading)."""
    n = starts.size
    out: CodeMarks | None = None
    cp = None
    for lo, hi, s0, s1 in texts:
        if s1 - s0 < 2 or (text.find("{", lo, hi) < 0 and text.find("#", lo, hi) < 0):
            continue
        cp = codepoints(text) if cp is None else cp
        idx = np.arange(s0, s1)
        opens_line = np.ones(idx.size, bool)
        opens_line[1:] = brk[s0 : s1 - 1] >= BREAK_LINE
        lines = idx[opens_line]
        line_at = np.empty(lines.size, np.int64)  # (each line's first offset, its indent's)
        line_at[1:] = seams[lines[1:] - 1]
        line_at[0] = max(text.rfind("\n", lo, int(starts[s0])) + 1, lo)
        line_end = np.append(line_at[1:], hi)
        back, _, _ = _walk(cp, line_end - 1, starts[lines], _TRAIL, 256, back=True)
        last = cp[np.maximum(back, 0)]
        first = cp[starts[lines]]
        second = cp[np.minimum(starts[lines] + 1, cp.size - 1)]
        comment = ((first == _SLASH) & (second == _SLASH)) | slash_blocks[lines]
        comment |= (first == _SLASH) & (second == _STAR) & (last == _SLASH) & (cp[np.maximum(back - 1, 0)] == _STAR)
        if (_in_table(_MAY_OPEN, last) | (first == _HASH) | comment).sum() < OPEN_LINE_SHARE * lines.size:
            continue  # (no statement, block, directive nor comment to speak of: prose)
        script = hashed is not None and hashed(lo)
        if script:
            comment |= first == _HASH
        else:
            directive = np.zeros(lines.size, bool)
            hashes_at = np.flatnonzero(first == _HASH)
            directive[hashes_at] = [CPP_DIRECTIVE.match(text, int(starts[lines[j]]), int(line_end[j])) is not None
                                    for j in hashes_at.tolist()]
            if not brace_code(text, lo, hi, last[~comment], directive[~comment]):
                continue
        if out is None:
            g = max(n - 1, 0)
            out = CodeMarks(np.zeros(g, np.int64), np.zeros(g, bool), np.zeros(g, bool), np.zeros(g, bool),
                            np.zeros(g, bool), np.zeros(g, bool))
        cand = np.flatnonzero(_in_table(_CLOSING_FIRST, first) & (line_end - starts[lines] <= 64) & ~comment)
        closing = np.zeros(lines.size, bool)
        closing[cand] = [_CLOSING.fullmatch(text, int(starts[lines[j]]), int(line_end[j])) is not None
                         for j in cand.tolist()]
        # nesting: each line's indent ranked among the distinct indents of the text's lines of code
        indent = starts[lines] - line_at
        levels = np.unique(indent[~comment])
        rank = np.searchsorted(levels, indent, side="left")
        owner = np.cumsum(opens_line) - 1  # (per sentence of the text: its line)
        gaps = idx[:-1]  # (the gap after each sentence but the text's last)
        nxt = owner[1:]
        out.depth[gaps] = rank[nxt] + np.where(opens_line[1:], 0, 1)
        # a line that only closes ends what it closes: the gap before it is a heading's bond
        shut = lines[closing]
        shut = shut[shut > s0]
        out.closes[shut - 1] = True
        # ... and a blank line under one at the shallowest indent ends a top-level definition
        top = np.flatnonzero(closing[:-1] & (rank[:-1] == 0))
        top = top[brk[lines[top + 1] - 1] > BREAK_LINE]
        out.ends_block[lines[top + 1] - 1] = True
        # a line that ends with "{" over a deeper line opens a block: its bond to the body
        head = np.flatnonzero((last[:-1] == ord("{")) & (indent[1:] > indent[:-1]) & ~comment[:-1])
        out.opens[lines[head + 1] - 1] = True
        # a comment run right above a line of code (no blank line between) leads into it
        joined = brk[lines[1:] - 1] == BREAK_LINE  # (line j and j + 1: no blank line between)
        leads = comment[:-1] & joined & ~comment[1:] & ~closing[1:]
        out.leads[lines[1:][leads] - 1] = True
        # ... and is one block, kept whole where it fits: every gap from its first line to its last
        same = np.zeros(idx.size, bool)  # (per sentence: it and the next lie in one comment run)
        same[:-1] = comment[owner[:-1]] & comment[owner[1:]] & (opens_line[1:] == 0)
        inner = np.flatnonzero(comment[:-1] & comment[1:] & joined)
        same[lines[inner + 1] - 1 - s0] = True
        out.comment[gaps[same[:-1]]] = True
    return out

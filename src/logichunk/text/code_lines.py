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
  bond a bracket line of any text keeps (:mod:`.structure`): it never opens a chunk; nor does a line that closes
  and reopens one construct (``} else {``, ``} catch (e) {``, ``} finally {``, ``} while (x);``), bonded so too;
* **comments as lead-ins** — a run of comment lines (``//``, ``/* ... */``, ``#`` in a script or a Python
  module) right above a line of code, no blank line between, is that code's lead-in: the gap under it is a
  heading's bond (:attr:`CodeMarks.leads`), and the run is a block kept whole where it fits
  (:attr:`CodeMarks.comment`), so the comment opens the chunk that holds the code and never ends one.

What makes a text code, and which of its lines are comments, is read by :mod:`.code_text` (the sentence splitter
reads it too): evidence in the text, never its file's name. A Python docstring's closing quotes alone on their line
close as ``}`` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._arrays import _chars_table, _in_table, _member
from .charclass import codepoints
from .code_text import brace_code, code_lines, docstrings, may_be_code
from .sentences import BREAK_HARD, BREAK_LINE

__all__ = ["CodeMarks", "brace_code", "read_code"]

#: a line that only closes: brackets, a statement's or a list's punctuation after them, a comment after that
#: (``}``, ``});``, ``},``, ``]``, ``} // for``), or a keyword that ends a block (``end``, shell's ``fi``,
#: ``done``, ``esac``); in a script or a Python module, a docstring's closing quotes alone (:data:`_QUOTES_ALONE`)
_CLOSING = re.compile(r"(?:[)\]}][)\]};,]*|(?:end|fi|done|esac)\b[;,.]?)[ \t]*(?://.*|/\*.*\*/)?[ \t\r\n\f\v]*")
_CLOSERS = _chars_table(")]}")
#: a line that closes a block and reopens the same construct (``} else {``, ``} else if (x) {``, ``} catch (e) {``,
#: ``} finally {``, a do-while's ``} while (x);``): the construct goes on, so the line is bonded to what it closes as a
#: closing line is; it is no closing-only line (:data:`_CLOSING`: a definition's end, a lead-in's end), its body
#: follows it
_REOPENS = re.compile(r"[)\]}]+[ \t]*(?:else|catch|finally|while)\b")
#: a triple-quoted string's closing quotes alone on their line (a bracket or a comma after them: ``""")``)
_QUOTES_ALONE = re.compile(r"(?:\"\"\"|''')[)\]};,]*[ \t\r\n\f\v]*")


@dataclass(frozen=True)
class CodeMarks:
    """Per gap of a layout's sentences (``n - 1``), what :func:`read_code` read in its texts of code: ``depth``
    (int: how much deeper than the text's shallowest line the gap lies; 0 outside code), ``closes`` (the
    sentence after opens a line that only closes, or one that closes and reopens one construct, ``} else {``), ``leads`` (under a comment run, over the code it leads
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


def indent_ranks(indent: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Per line, the rank of its ``indent`` (columns, >= 0) among the distinct indents of the ``counted`` lines: how
    many of those are shallower (``np.searchsorted(np.unique(indent[counted]), indent)``, by a count per indent
    instead of a sort of the text's lines)."""
    if indent.size == 0:
        return np.zeros(0, np.int64)
    present = np.bincount(indent[counted], minlength=int(indent.max()) + 1) > 0
    return (np.cumsum(present) - present)[indent]


def read_code(text: str, starts: np.ndarray, brk: np.ndarray, seams: np.ndarray, texts: list[tuple[int, int, int, int]],
              slash_blocks: np.ndarray, hashed: Callable[[int], bool] | None = None) -> CodeMarks | None:
    """The marks of the module docstring for the texts of code among ``texts`` (each ``(lo, hi, s0, s1)``: its
    offsets and its sentences ``[s0, s1)``; ``hashed(lo)``: whether the text at ``lo`` is a script or a Python
    module, read by the caller, whose ``#`` lines are comments and which is code without the brace evidence).
    ``starts``, ``brk`` and ``seams`` are the sentences' (:class:`~.sentences.SentenceSpans`); ``slash_blocks``: per
    sentence, whether it lies in a ``/* ... */`` comment over several lines. None where no text is code.

    Prose pays little: three searches (:func:`~.code_text.may_be_code`: a brace, a hash, ``def``), then, where one is found, a walk over
    its lines' ends; a text of which not one line in :data:`OPEN_LINE_SHARE`'s share ends with ``;``, ``{`` or
    ``:``, opens with ``#`` or is a comment is no code of any kind, and is read no further (no search of several
    characters, no Python module's reading)."""
    n = starts.size
    out: CodeMarks | None = None
    cp = None
    for lo, hi, s0, s1 in texts:
        if s1 - s0 < 2 or not may_be_code(text, lo, hi):  # (code_lines' pre-check)
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
        read = code_lines(text, cp, lo, hi, starts[lines], line_end, slash_blocks[lines], hashed)
        if read is None:
            continue
        first, last, comment = read.first, read.last, read.comment
        if out is None:
            g = max(n - 1, 0)
            out = CodeMarks(np.zeros(g, np.int64), np.zeros(g, bool), np.zeros(g, bool), np.zeros(g, bool),
                            np.zeros(g, bool), np.zeros(g, bool))
        # (a keyword that ends a block opens with its own two letters: "en", "es", "fi", "do" — not "def", "for",
        # "else", which open most lines of Python that open with those letters)
        second = read.second
        word = ((first == 0x65) & ((second == 0x6E) | (second == 0x73))) | ((first == 0x66) & (second == 0x69)) \
            | ((first == 0x64) & (second == 0x6F))
        cand = np.flatnonzero((_in_table(_CLOSERS, first) | word) & (line_end - starts[lines] <= 64) & ~comment)
        closing = np.zeros(lines.size, bool)
        closing[cand] = [_CLOSING.fullmatch(text, int(starts[lines[j]]), int(line_end[j])) is not None
                         for j in cand.tolist()]
        if read.script:  # (a docstring's closing quotes alone: its string's end)
            _, ends = docstrings(text, lo, hi)
            quotes = np.flatnonzero(((first == 0x22) | (first == 0x27)) & (line_end - starts[lines] <= 64))
            quotes = quotes[_member(starts[lines[quotes]] + 3, ends)]  # (ends: sorted)
            closing[quotes] = [_QUOTES_ALONE.fullmatch(text, int(starts[lines[j]]), int(line_end[j])) is not None
                               for j in quotes.tolist()]
        # nesting: each line's indent ranked among the distinct indents of the text's lines of code
        indent = starts[lines] - line_at
        rank = indent_ranks(indent, ~comment)
        owner = np.cumsum(opens_line) - 1  # (per sentence of the text: its line)
        gaps = idx[:-1]  # (the gap after each sentence but the text's last)
        nxt = owner[1:]
        out.depth[gaps] = rank[nxt] + np.where(opens_line[1:], 0, 1)
        # a line that only closes ends what it closes: the gap before it is a heading's bond
        shut = lines[closing]
        shut = shut[shut > s0]
        out.closes[shut - 1] = True
        # ... and so does a line that closes and reopens one construct ("} else {"): it goes on with what it closes
        again = np.flatnonzero((first == ord("}")) & ~closing & ~comment)
        again = again[[_REOPENS.match(text, int(starts[lines[j]]), int(line_end[j])) is not None
                       for j in again.tolist()]] if again.size else again
        again = lines[again]
        out.closes[again[again > s0] - 1] = True
        # ... and a blank line under one at the shallowest indent ends a top-level definition
        top = np.flatnonzero(closing[:-1] & (rank[:-1] == 0))
        top = top[brk[lines[top + 1] - 1] > BREAK_LINE]
        out.ends_block[lines[top + 1] - 1] = True
        # a line that ends with "{" over a deeper line opens a block: its bond to the body
        head = np.flatnonzero((last[:-1] == ord("{")) & (indent[1:] > indent[:-1]) & ~comment[:-1])
        out.opens[lines[head + 1] - 1] = True
        # a comment run right above a line of code (no blank line between) leads into it
        joined = brk[lines[1:] - 1] == BREAK_LINE  # (line j and j + 1: no blank line between)
        hard = np.flatnonzero((brk[lines[1:] - 1] == BREAK_HARD) & comment[:-1] & comment[1:])
        if hard.size:  # (Markdown read a script's "#" line as a heading: a hard break, blank line or not)
            joined[hard] = [text.count("\n", int(read.back[j]), int(line_at[j + 1])) == 1 for j in hard.tolist()]
        leads = comment[:-1] & joined & ~comment[1:] & ~closing[1:]
        out.leads[lines[1:][leads] - 1] = True
        # ... and is one block, kept whole where it fits: every gap from its first line to its last
        same = np.zeros(idx.size, bool)  # (per sentence: it and the next lie in one comment run)
        same[:-1] = comment[owner[:-1]] & comment[owner[1:]] & (opens_line[1:] == 0)
        inner = np.flatnonzero(comment[:-1] & comment[1:] & joined)
        same[lines[inner + 1] - 1 - s0] = True
        out.comment[gaps[same[:-1]]] = True
    return out

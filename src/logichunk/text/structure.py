"""The document's own structure, read once: which sentences are headings, and how strongly the
author's layout separates every pair of neighbouring sentences.

Why it is a separate pass: headings, blank-line paragraphs, lists, tables and fences are the
author's own logic markup, the strongest evidence of where a text's logic breaks. The sentence
splitter (:mod:`.sentences`) already keeps Markdown lines whole and marks every gap with a break
kind (none, line, paragraph, hard); this module adds what a sentence-by-sentence view cannot see:

* **headings** — Markdown ATX (``# Title``) and setext (``Title`` over ``===``/``---``), AsciiDoc
  (``== Section``; WikiText's ``= = Gameplay = =``, indented or not), LaTeX's sectioning commands
  (``\\section{Methods}``), an HTML heading element alone on its line (``<h2>The Nile</h2>``), a
  reStructuredText title over a line of ``~``, ``^``, ``"``... at least as long, numbered headings
  standing on their own line (``1.2 Scope``, ``2.2. The source files``, ``第三章 总则``, ``二、方法``, ``（一）指导思想``; ``1．加强组织领导``,
  ``（1）成立领导小组`` and ``①制定方案`` at a Chinese official document's depths 3 to 5; ``1. Install it`` over a
  line that is no next list item; a numbered question alone between blank lines over its answer, ``1.2. What is this
  spec?``; never lines of one numbering in a row, a list's items), a book's
  division markers, their number's full stop and all (``CHAPTER II.``, ``Book the First.``, ``ACT IV.``;
  a bare Roman number ``III.`` standing alone between blank lines), a marker and its title on one line
  (``CHAPTER XII. ALICE'S EVIDENCE``, a play's ``SCENE II. Elsinore. A room of state in the Castle.``,
  every sentence of the line), short title lines standing alone between blank lines
  (``故乡（鲁迅，1921，节选）``): a line that is a whole paragraph, short, without the punctuation that ends or
  continues a sentence, followed by more text, unless it is one of three or more in a row (a glossary, a
  contents page: a list, of which only the last may title the paragraph under it); a title line right
  under a heading and over a blank line (``CHAPTER I.`` over ``Down the Rabbit-Hole``: the heading's
  second line); and a line that opens a paragraph as one run of bold or italic text
  (``**Results by region**``, ``__Outlook__``: chat assistants', Notion's and many exports' headings); an
  outline's star lines in a file of org's keywords or whose mode line names Emacs's outline or org mode (GNU's
  NEWS: ``* Noteworthy changes in release 9.1``, ``** Bug fixes``); a numbered title that ends with a full stop
  alone between blank lines (a licence's ``  1. Source Code.``, its small words in lower case: ``13. Use with
  the GNU ...``); irssi's ``--- Day changed ...`` lines; but a ``#`` line of source code passed as text (a script,
  a Python module: :func:`_in_source`) is a comment, no heading;
* **strengths** per gap: :data:`SECTION` before a heading > :data:`BLOCK` around lists, tables, fences
  and rules (between two items of one list: a line, or a blank line in a loose list; an FAQ's marked question over
  its answer opens an item as a number does), and at a blank line
  before a line indented less than the first line of the paragraph over it (the end of a function's body,
  of a quoted passage) > :data:`PARAGRAPH`
  (blank line; in a text laid out one paragraph per line, with no blank line in it, a line break after a
  sentence's end — an article as corpora keep them — but not between a transcript's turns, a line that
  opens with a speaker's label, nor a list's items) > :data:`LINE` > :data:`SENTENCE` > :data:`CONTINUES`
  (a sentence or line break before a
  sentence that opens with a connective, a third-person pronoun or a bare answer — *However*, *He*,
  *Yes,*, 但是, 他们 — :mod:`.discourse`: it leans on what came before, so a chunk that starts there starts
  mid-thought);
* **no-cut gaps**: right after a heading (it titles what follows, so it opens a chunk and never ends
  one), after a paragraph that ends as a lead-in does (a colon or a comma: ``as follows:`` over its
  list, ``Hi Bob,`` over the letter) and after a line that ends with a colon (a mail's ``... wrote:``
  over the quote: the weakest no-cut, which a size limit breaks first; over a line indented deeper with no
  blank line between, Python's ``def area(shape):`` over its body or YAML's ``key:`` over its mapping, a
  heading's bond, read at the colon's own line), after a speaker's name on a line
  of its own (a play's ``BARNARDO.``), a subtitle cue's number and timing line (SRT, WebVTT) and an
  FAQ's marked question over its answer (``Q:`` over ``A:``), a clause's run-in title (``2.1 Grant.`` before
  ``Subject to ...`` on its line), after a Markdown table's header row and
  its delimiter row (they stay with its first row of values), after a definition list's term over its
  definition indented deeper (reStructuredText's, a man page's option), between a setext heading's text
  and its underline (and a rule right under any heading: ``### Setup`` over ``----``), and right after a
  code fence's opening line and before its closing line; an INI or TOML section header over its first key
  (``[tool.pytest.ini_options]``) is a heading, and a block of ``#`` lines of one depth right under each
  other is comments (a script's, a licence atop a source file), not a run of headings;
* **markup lines**: a line of HTML tags or comments alone is never a title; it opens the paragraph
  under it (``<details>``, ``<p align="center">``, an anchor's ``<a id="x"></a>`` over its heading: the
  section opens before the anchor; ``<!--type=misc-->``), a line of closing tags (``</details>``) closes
  the one over it, each bond as weak as a lead-in's; and a heading goes on over the comments right under
  it (Node's ``<!-- YAML added: v0.1.103 -->``), so no chunk is a heading and its metadata; so do
  reStructuredText's explicit markup lines (``.. code-block:: cmake``, ``.. _label:``, with a directive's options
  under it, ``:alt: A cat.``, one head) and a rule right over a heading (vim help's ``=====``, an overline);
* **what a line introduces is no title**: a line under a paragraph that ends with a colon (``run this::``,
  ``The command is:``), vim help's `` >`` or a directive, and an example indented inside a sentence that goes
  on around it (a man page's ``the command`` / ``info grep`` / ``should give you ...``); a ``#`` line
  indented four columns or more is code, never a heading (a man page's root prompt), and neither is a line of an
  indented block (a man page's example, ``[imap]`` over its keys: :mod:`.indented_blocks`);
* **fenced code is one block**: a blank line inside a fence is a line of code, not a paragraph
  break, so a chunker keeps a fence that fits whole and cuts one that does not between lines; so is a
  reStructuredText literal block (a line ending with ``::`` over a blank line and deeper lines), and
  an HTML comment over several lines (Markdown's hidden notes and metadata, ``<!-- YAML ... -->``), and
  an org-mode block (``#+BEGIN_SRC`` ... ``#+END_SRC``) or drawer (``:PROPERTIES:`` ... ``:END:``, a block's
  break at its edges but its heading's bond), and
  a text's **front matter** (YAML between ``---`` lines, TOML between ``+++``,
  :func:`~.line_kinds.front_matter`), whose keys, comments and closing marks are no headings;
* **source code** passed as text (a brace language's file, a script, a Python module: :mod:`.code_lines`, by
  evidence in the text): each gap's nesting depth (where a block must be cut, before its shallowest line first),
  a line that only closes (``}``, ``});``) bonded to what it closes as a heading is, blank line or not, a comment
  right above code bonded to it so, the bond of a ``{`` line to its body the first a limit breaks, and a blank
  line under a closing line at the text's shallowest indent a block's break;
* **page furniture** (a PDF's text, a printed manual, an RFC: :mod:`.pages`): a running header or
  footer and a page's number at a form feed is never a heading nor a lead-in; it stays with the text
  before it, and the gap after it reads as the gap before it did, so a sentence going on over the page
  is not cut and a heading at the top of a page still opens its section.

Every rule is a fixed reading of the layout, not a tuned number: a title line is at most
:data:`TITLE_MAX_CHARS` characters, a numbered heading line at most :data:`NUMBERED_MAX_CHARS`, a
division marker at most :data:`MARKER_MAX_CHARS`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import native
from ._arrays import _EMPTY_I64, _chars_table, _in_table, _member, _walk
from .charclass import CJK, class_table, codepoints
from .code_lines import CodeMarks, read_code
from .code_text import python_module, slash_comments
from .discourse import continues
from .indented_blocks import body_margins, in_indented_block, line_indents
from .line_kinds import (
    _DRAWER_OPEN,
    _HR_RE,
    BULLET_CHARS,
    CPP_DIRECTIVE,
    DOCTEST_PROMPT,
    FIELD_ALONE,
    NUMBERED_MAX_CHARS,
    RST_MARKS,
    _block_spans,
    _contains,
    _literal_marks,
    code_indented,
    directive_options,
    front_matter,
    indent_columns,
    rst_underline,
)
from .pages import PAGE_LABEL, furniture_lines, paginated
from .records import aligned_heads, has_gutters
from .sentence_chars import _CLOSERS, _QUESTION_MARKS
from .sentence_chars import _PROSE_END as _PROSE_END_CHARS
from .sentences import (
    BREAK_HARD,
    BREAK_LINE,
    BREAK_NONE,
    BREAK_PARAGRAPH,
    LINE_END,
    SentenceSpans,
    laid_end_to_end,
)

CONTINUES, SENTENCE, LINE, PARAGRAPH, BLOCK, SECTION = 0, 1, 2, 3, 4, 5
STRENGTH_NAMES = {CONTINUES: "continues", SENTENCE: "sentence", LINE: "line", PARAGRAPH: "paragraph", BLOCK: "block",
                  SECTION: "section"}

#: a title line standing alone between blank lines is at most this long (characters, stripped)
TITLE_MAX_CHARS = 80

_ATX = re.compile(r"[ \t]{0,3}(#{1,6})(?:[ \t]|$)")
#: an HTML heading element on a line of its own (``<h2>The Nile</h2>``, ``<h1 id="top">Rivers</h1>``)
_HTML_HEADING = re.compile(r"[ \t]*<h([1-6])(?:[ \t][^>\n]*)?>([^\n]*?)</h\1>[ \t]*(?:\r?\n)*", re.IGNORECASE)
#: LaTeX's sectioning commands and their depth in the outline
_LATEX_DEPTH = {"part": 1, "chapter": 2, "section": 3, "subsection": 4, "subsubsection": 5, "paragraph": 6,
                "subparagraph": 7}
#: a LaTeX sectioning command opening its line (``\section{Methods}``, ``\subsection*{Data}``): the command
#: and the title
_LATEX = re.compile(rf"[ \t]*\\({'|'.join(_LATEX_DEPTH)})\*?(?:\[[^\]\n]*\])?\{{([^}}\n]*)\}}?")
#: AsciiDoc's "== Section" at the line's start; WikiText's "= = Gameplay = =", which a tokenised dump
#: indents by a space (a text's first line keeps it: a later line's goes to the line before)
_ASCIIDOC = re.compile(r"[ \t]{0,3}={1,6}[ \t]+\S")
_SETEXT_LINE = re.compile(r"[ \t]{0,3}(?:=+|-+)[ \t]*$")
_NUMBERED = re.compile(
    r"\s*(?:"
    r"(?P<num>\d{1,3}(?:\.\d{1,3})+\.?|\d{1,3}\.?)[ \t\u3000]+(?P<first>\S)"  # 1 Intro, 1.2 Scope, 1.2.3. Terms
    r"|第[0-9一二三四五六七八九十百千零〇两]+(?P<zhpart>[章节篇部回卷编条])"  # 第三章 总则
    r"|(?P<zhcn>[一二三四五六七八九十]+[、．.])[^\s]"  # 二、方法
    r"|(?P<zhparcn>[（(][一二三四五六七八九十]+[）)])[ \t\u3000]*[^\s]"  # （一）指导思想
    r"|(?P<zhnum>\d{1,3}(?:[．、]|\.(?=[\u3400-\u9fff])))[^\s\d.．]"  # 1．加强组织领导, 3.严格考核
    r"|(?P<zhpar>（\d{1,2}）|\(\d{1,2}\)(?=[ \t\u3000]*[\u3400-\u9fff]))[ \t\u3000]*[^\s\d]"  # （1）成立领导小组
    r"|(?P<circled>[\u2460-\u2473])[ \t\u3000]*[^\s\d]"  # ①制定方案
    r"|(?P<word>Chapter|CHAPTER|Section|SECTION|Part|PART|Appendix|APPENDIX)\s+[0-9IVXLC]+\b"
    r")"
)
#: the depth of each numbering form of a Chinese official document (GB/T 9704: 一、 over （一） over 1． over
#: （1）; ① under those)
_ZH_FORM_DEPTH = {"zhnum": 3, "zhpar": 4, "circled": 5}
#: the characters a match of :data:`_NUMBERED` can open with past its blanks, beside the decimal digits (its ``\d``):
#: its Chinese forms' first characters, its brackets, its circled numbers and its division words' capitals
_NUMBERED_FIRST = frozenset("第一二三四五六七八九十（(CSPA" + "".join(map(chr, range(0x2460, 0x2474))))


def _number_form(m: re.Match) -> tuple[str, str]:
    """Which numbering a numbered line uses (a match of :data:`_NUMBERED`): its form and, for section
    numbers, their depth, for a Chinese division its kind (章, 节...). Lines of one form in a row with no
    text between are a list's items, not headings."""
    if m.group("num") is not None:
        return "num", str(len([x for x in m.group("num").split(".") if x]))
    if m.group("zhpart") is not None:
        return "zhpart", m.group("zhpart")
    for form in ("zhcn", "zhparcn", "zhnum", "zhpar", "circled", "word"):
        if m.group(form) is not None:
            return form, ""
    return "", ""


_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    "seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|first|second|third|fourth|fifth|sixth|seventh|"
    "eighth|ninth|tenth|eleventh|twelfth|last"
)
_ROMAN = r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"
#: a book's (or a play's, or a law's) division marker alone on its line, its number's full stop allowed
#: ("CHAPTER II.", "Book 3.", "ACT IV.", "Article 12.", "Chapter Twenty-One", "BOOK THE FIRST"): Project
#: Gutenberg's and many books' layout
_MARKER = re.compile(
    r"\s*(?:chapter|book|part|section|appendix|volume|canto|act|scene|stave|letter|article)[ \t]+"
    rf"(?:\d{{1,3}}|(?=[mdclxvi]){_ROMAN}|(?:the[ \t]+)?(?:{_NUMBER_WORDS})(?:[- ](?:{_NUMBER_WORDS}))?)"
    r"[ \t]*[.:]?\s*", re.IGNORECASE)
#: a Roman number alone on its line, a full stop after it allowed ("IV.", "XII"): a chapter's number
_ROMAN_LINE = re.compile(rf"\s*(?=[MDCLXVI])(?:{_ROMAN})\.?\s*")
_MARKER_WORDS = ("chapter", "book", "part", "section", "appendix", "volume", "canto", "act", "scene", "stave",
                 "letter", "article")


def _chapter_marker(line: str, alone: bool) -> bool:
    """A line that marks a book's division by its number alone: a marker word and a number
    (:data:`_MARKER`), or, standing ``alone`` between blank lines, a Roman number; a full stop after
    the number allowed, where a numbered heading with a title (:func:`_numbered_heading`) must not end
    as prose does."""
    return bool(_MARKER.fullmatch(line)) or (alone and bool(_ROMAN_LINE.fullmatch(line)) and line.strip() != "")


#: a chapter's opening words: ``Chapter`` and its number (digits, a Roman number, a number word) or
#: ``第…章/回/节/卷``; ``rest`` is what follows on the line (a title, punctuation, nothing)
_CHAPTER_OPENING = re.compile(
    r"[ \t\u3000]*(?:(?P<en>(?:Chapter|CHAPTER)[ \t]+"
    rf"(?i:\d{{1,4}}|(?=[mdclxvi]){_ROMAN}|(?:{_NUMBER_WORDS})(?:[- ](?:{_NUMBER_WORDS}))?)\b)"
    r"|第[0-9０-９零〇一二三四五六七八九十百千两]+[章回节卷])(?P<rest>[^\r\n]*)")
#: what may stand between a division's number and its title (``Chapter 1: The Fall``, ``CHAPTER I. Loomings``)
_TITLE_LEAD = " \t\u3000.:：、．-–—"
#: commas and semicolons: a title that ends as prose does has none
_TITLE_COMMAS = ",，、;；"
#: a Chinese clause's comma or semicolon: a 第…章 title has none (``第三章讲述了他的童年，以及……``
#: is prose)
_CLAUSE_MARKS = "，；"


def _division_title(rest: str) -> str | None:
    """The title after a division's number (``rest``: what follows ``Chapter 3`` or ``第三章`` on its line),
    "" for none, None where the words read as prose: one that starts in lower case (``Chapter 3 covers
    the store``) or holds a Chinese clause's comma (``第三章讲述了他的童年，以及他的家乡``)."""
    title = rest.strip().lstrip(_TITLE_LEAD).strip()
    if title[:1].islower() or any(c in title for c in _CLAUSE_MARKS):
        return None
    return title


def chapter_opening(line: str, starts_paragraph: bool, alone: bool) -> bool:
    """Whether ``line`` opens a book's chapter as books lay one out: ``Chapter 3``, ``CHAPTER II.``,
    ``Chapter 1: Down the Rabbit-Hole``, ``第三章 总则`` — and not a line of prose that begins with those
    words (``Chapter 3 covers the store, and ...``, ``第三章讲述了他的童年，...。``). It must open its
    paragraph (``starts_paragraph``: a blank line or the text's start above it); the words after the
    number must read as a title (:func:`_division_title`, as the layout reads them), and the line is at
    most :data:`NUMBERED_MAX_CHARS` and does not end as prose ends, unless it stands ``alone`` (a blank
    line under it too) with a short title and no comma in it (``CHAPTER 1. Loomings.``)."""
    m = _CHAPTER_OPENING.fullmatch(line.rstrip("\r\n"))
    if m is None or not starts_paragraph:
        return False
    rest = m.group("rest")
    if m.group("en") is not None and rest[:1].isalnum():
        return False  # "Chapter 3rd", "Chapter IVy": the number runs on
    title = _division_title(rest)
    if title is None or len(line.strip()) > NUMBERED_MAX_CHARS:
        return False
    if not title:
        return True
    if title.rstrip("".join(_CLOSERS))[-1:] not in _PROSE_END:
        return True
    return alone and len(title) <= 40 and not any(c in title for c in _TITLE_COMMAS)


def _numbered_heading(line: str) -> bool:
    """A line that opens with a section number and reads as a title. After an Arabic number the title
    starts with a capital or a letter of a script without case (``1.2 Scope``, ``3 総則``), not with
    a lower-case word, a digit or a mark (``5 pm``, ``2 miles away``, ``1 759 540 km²``); after a bare
    number (no dot: the most ambiguous form) a comma also says prose (``113 Anton Ct, I sent it``). After
    a division's number (``Chapter 3``, ``第三章``) the words must read as its title (:func:`_division_title`)."""
    c = line.lstrip()[:1]  # (what :data:`_NUMBERED` can open with past its ``\s*``: no match tried on the rest,
    if not (c.isdecimal() or c in _NUMBERED_FIRST):  # a source file's lines by the thousand)
        return False
    m = _NUMBERED.match(line)
    if m is None:
        return False
    if m.group("num") is None:
        division = m.group("word") is not None or m.group("zhpart") is not None
        return not division or _division_title(line[m.end():]) is not None
    first = m.group("first")
    if not first.isalpha() or first.islower():
        return False
    bare = "." not in m.group("num")
    return not (bare and any(c in line for c in ",，、"))


_PROSE_END = set(_PROSE_END_CHARS)
#: the question marks (a numbered line that ends with one may still head what answers it)
_QUESTION_CP = np.array(sorted(map(ord, _QUESTION_MARKS)), dtype=np.uint32)
#: the fewest columns a dedent closes a block by (an indent of one space is a typo's or an extraction's)
_DEDENT_MIN = 2
#: a line of brackets alone, a statement's or a list's comma or semicolon among them (``}``, ``});``,
#: ``},``, ``{``, ``]``): code's or data's, at most this long past its indent
_BRACKETS_MAX = 8
_BRACKET_FIRST = _chars_table("[](){}")
_BRACKET_CHARS = _chars_table("[](){};,")
_OPENER_CHARS = _chars_table("[({")
#: what a separator line is made of (a rule of marks, vimtutor's tildes, a fortune file's "%", box drawing;
#: the blanks between and after them, its line break)
_SEPARATOR_CHARS = _chars_table("~%-=*_#+.:<>/\\|·•—– \t\r\n" + "".join(map(chr, range(0x2500, 0x2580))))
# first characters a Markdown, setext or numbered heading line can start with (after its indent)
_FENCE_MARK = re.compile(r"```|~~~|<!--|/\*|::\r?\n|#\+(?i:begin_)|(?i::end:)")
_RST_FIRST = np.array(sorted({ord(c) for c in RST_MARKS}), dtype=np.uint32)
_EMPH_FIRST = np.array([ord("*"), ord("_")], dtype=np.uint32)
_HEAD_FIRST = np.array(sorted({ord(c) for c in "#=-0123456789第一二三四五六七八九十CSPA \t\\<（("}
                              | set(range(0x2460, 0x2474))), dtype=np.uint32)  # (and ① to ⑳)
#: a division marker line is at most this long ("CHAPTER THE TWENTY-FIRST.")
MARKER_MAX_CHARS = 40


#: a C return type alone on its line: up to five words and the pointer's stars (``static PyObject *``,
#: ``unsigned long``, ``struct node *``), at most this long; and the line under it, a function's name and "("
_TYPE_LINE_MAX = 48
_IDENT_FIRST = _chars_table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_TYPE_LINE = re.compile(r"[ \t]*((?:[A-Za-z_]\w*[ \t]+){0,4}[A-Za-z_]\w*)[ \t]*(\**)[ \t]*\r?\n?")
_CALL_OPEN = re.compile(r"[ \t]*[A-Za-z_]\w*[ \t]*\(")


def _but_ascii(allowed: str) -> np.ndarray:
    """A table by code point of every character but the ASCII ones not in ``allowed``: what a walk may pass
    where a pattern's ``\\w`` reads any script's letters (a superset of them, for a prefilter)."""
    table = np.ones(0x110000, dtype=bool)
    table[:0x80] = False
    table[[ord(c) for c in allowed]] = True
    return table


_WORD_ASCII = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
_TYPE_CHARS = _but_ascii(_WORD_ASCII + " \t*")  # (what a return type's line may hold)
_NAME_CHARS = _but_ascii(_WORD_ASCII)  # (what a function's name may hold)
#: words only a C type is made of (one of them, or the pointer's star, makes a line a return type)
_C_TYPE_WORDS = frozenset("void int char short long float double signed unsigned static inline extern const volatile "
                          "struct union enum register size_t ssize_t bool _Bool".split())

#: a definition line as Texinfo sets one (``@deftypefun``, ``@defmac``): its category in brackets (``[Function]``,
#: ``[Macro]``, ``[Data Type]``), then the definition with its arguments' ``(`` on the line
_DEFINITION_LINE = re.compile(r"[ \t]*\[[A-Z][a-z]+(?: [A-Za-z][a-z]+){0,2}\][ \t]*[^\s(][^\n(]*\(")

def _may_head_signature(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Those of the lines ``cand`` (each the whole line, another line right under it) that may be a C return
    type over a function's name and ``(`` (:func:`_return_type`, :data:`_CALL_OPEN`): the line holds only
    word characters, blanks and stars up to its end, and the next opens with word characters, blanks and
    ``(``. Walks, no match per line (code has a short line over a call in every few lines): a superset of
    what the two patterns accept."""
    stop, _, _ = _walk(cp, starts[cand], ends[cand], _TYPE_CHARS, _TYPE_LINE_MAX)
    cand = cand[_in_table(LINE_END, cp[np.minimum(stop, cp.size - 1)])]
    if cand.size == 0:
        return cand
    longest = int((ends[cand + 1] - starts[cand + 1]).max())
    stop, _, _ = _walk(cp, starts[cand + 1], ends[cand + 1], _NAME_CHARS, longest)
    stop, _, _ = _walk(cp, stop, ends[cand + 1], _BLANK, longest)
    return cand[(stop < ends[cand + 1]) & (cp[np.minimum(stop, cp.size - 1)] == 0x28)]


def _return_type(text: str, a: int, b: int) -> bool:
    """Whether ``text[a:b]`` is a C function's return type alone on its line: words and stars only, one of the
    words a C type's (:data:`_C_TYPE_WORDS`), ending in ``_t``, or a star after them (``PyObject *``)."""
    m = _TYPE_LINE.fullmatch(text, a, b)
    if m is None:
        return False
    words = m.group(1).split()
    return bool(m.group(2)) or any(w in _C_TYPE_WORDS or w.endswith("_t") for w in words)


@dataclass(frozen=True, slots=True, eq=False)
class Layout:
    """The structure of one text's sentences: ``heading`` (bool per sentence), ``strength`` (int8
    per gap, the constants above), ``no_cut`` (bool per gap: a cut there would end a chunk with
    a heading or split one), ``leans`` (bool per gap: the sentence after it opens with a
    continuation marker, whatever the gap's strength; :data:`CONTINUES` marks it only where the gap
    is no stronger than a line break, since a chunker keeps the author's blank lines) and ``lead_in``
    (bool per gap: a no-cut after a paragraph or line that ends as a lead-in does, ``as follows:`` over
    its list: the weakest no-cut, which a size limit breaks first) and ``in_block`` (bool per gap: inside a
    block kept whole where it fits, a fence, a literal block, a comment over several lines, front matter;
    None: no gap is) and ``introduces`` (bool per gap: the lead-in gaps after a paragraph or line that ends
    with a colon or a comma — what follows, a list, a table, a quote, a body, is what it introduces, kept
    whole where it fits alone; None: no gap is) and ``block_parts`` (bool per gap: a blank line inside such a
    block: one over the limit is cut at its blank lines first, between functions rather than inside one;
    None: no gap is) and ``in_list`` (bool per gap: between two items of one list, tight or loose: a list
    that fits stays whole, its items' blank lines no paragraph breaks for that rule; None: no gap is) and ``depth``
    (int per gap, in a text of source code: how deep the line after it is nested, :mod:`.code_lines`; where a block
    must be cut, the gap before its shallowest line goes first; -1 at the end of a top-level definition, a blank
    line under its closing line: one level above the top level's statements, so that a cut there is never refused
    to fill the chunks it parts, as a cut one level deeper is never taken to fill them; None: no text is code) and
    ``in_terms`` (bool per gap: between two items of one definition list, a term over its definition indented
    deeper, a man page's options: :func:`_between_terms`; read by the topic rules, not the chunkers; None: no gap is)."""

    heading: np.ndarray
    strength: np.ndarray
    no_cut: np.ndarray
    leans: np.ndarray
    lead_in: np.ndarray
    in_block: np.ndarray | None = None
    introduces: np.ndarray | None = None
    block_parts: np.ndarray | None = None
    in_list: np.ndarray | None = None
    depth: np.ndarray | None = None
    in_terms: np.ndarray | None = None

    def marks_at(self, dest: np.ndarray, src: np.ndarray, size: int) -> GapMarks:
        """The per-gap marks a chunker's own gaps take from this layout: gap ``src`` of the layout for each of
        its gaps ``dest`` (a mask or indices; the others none), as :func:`structure_rewards` reads them."""
        def take(marks: np.ndarray | None) -> np.ndarray:
            out = np.zeros(size, dtype=bool)
            if marks is not None:
                out[dest] = marks[src]
            return out
        depth = None
        if self.depth is not None:
            depth = np.zeros(size, np.int64)
            depth[dest] = self.depth[src]
        return GapMarks(take(self.in_block), take(self.introduces), take(self.block_parts), take(self.in_list), depth)

    def paragraph_ids(self) -> np.ndarray:
        """Per sentence, the index of the paragraph (or block, or section) it lies in."""
        n = self.heading.size
        out = np.zeros(n, np.int64)
        if n > 1:
            np.cumsum(self.strength >= PARAGRAPH, out=out[1:])
        return out


@dataclass(frozen=True)
class GapMarks:
    """A layout's optional per-gap marks, taken onto a chunker's own gaps (:meth:`Layout.marks_at`)."""

    block: np.ndarray
    introduces: np.ndarray
    parts: np.ndarray
    lists: np.ndarray
    depth: np.ndarray | None = None


#: the marks a line of speech broken off ends with (an em or en dash, a horizontal bar)
_BROKEN_OFF = "—–―"
#: a caption's opening: a figure, table, chart, plate or exhibit and its number ("Table S1", "Fig. 3a", "图2")
_CAPTION = re.compile(r"(?:(?:supplementary\s+)?(?:figure|fig\.|table|chart|plate|exhibit)\s*[a-z]?\d+[a-z]?\b|[图表]\s*\d+)",
                      re.IGNORECASE)


#: a line of HTML tags and nothing else (GitHub's ``<details>``, ``</details>``, ``<p align="center">``,
#: ``</div></td>``): each tag's name in the first group (a closing tag's with its slash)
_TAG = r"<(/?[A-Za-z][\w:-]*)(?:[ \t][^<>\n]*)?/?>"
_TAG_LINE = re.compile(rf"[ \t]*(?:{_TAG}[ \t]*)+(?:\r?\n)*")
_TAG_NAME = re.compile(_TAG)
#: the tags of a line break or a rule (``<br>``, ``<hr/>``): a line of them alone is markup that holds nothing
_BREAK_TAGS = frozenset({"br", "hr", "wbr"})
#: reStructuredText's explicit markup opening a line: a directive (``.. code-block:: cmake``, ``.. note::``), a
#: hyperlink target (``.. _TOLOWER:``), a substitution or a comment
_EXPLICIT = re.compile(r"\.\.[ \t]+\S")
#: a line of HTML comments and nothing else (Node's ``<!-- type=global -->``, ``<!--lint disable-->``)
_COMMENT_LINE = re.compile(r"[ \t]*(?:<!--.*?-->[ \t]*)+(?:\r?\n)*")
#: a paragraph that ends with reStructuredText's ``::`` and opens its literal block (text before the marks, on its
#: line or wrapped over several: ``... specified by`` over ``creating a section titled "profile"::``)
_PROSE_LITERAL = re.compile(r".*\S[ \t]*::\s*", re.DOTALL)
#: a line of LaTeX's markup that holds no text: environments' edges and labels (``\begin{abstract}``,
#: ``\end{figure}``, ``\label{sec:exp}`` under its ``\section``, ``\begin{figure}[h]``); the command's name in
#: the first group
_LATEX_CMD = r"\\(begin|end|label|index)\*?(?:\[[^\]\n]*\])?\{[^{}\n]*\}(?:\[[^\]\n]*\]|\{[^{}\n]*\})*"
_LATEX_LINE = re.compile(rf"[ \t]*(?:{_LATEX_CMD}[ \t]*)+(?:\r?\n)*")
_LATEX_NAME = re.compile(_LATEX_CMD)


def _markup_lines(text: str, starts: np.ndarray, ends: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Among the lines ``idx``, those that are markup alone: HTML tags that only close elements
    (``</details>``, ``</div></td>``: they stay with what they close), and the other lines of HTML tags
    (``<details>``, ``<div align="center">``, an anchor's ``<a id="x"></a>``, a logo's
    ``<p><img src="logo.png"></p>``) and of HTML comments (Node's ``<!--type=misc-->``, a linter's
    ``<!-- eslint-disable -->``): they stay with what follows. A line of line breaks or rules (``<br>``,
    ``<hr>``) is neither. LaTeX's as HTML's: ``\\end{abstract}`` closes, ``\\begin{figure}`` and ``\\label{...}``
    open."""
    opening, closing = [], []
    for i in idx.tolist():
        line = text[int(starts[i]) : int(ends[i])]
        if _LATEX_LINE.fullmatch(line):
            names = _LATEX_NAME.findall(line)
            (closing if all(name == "end" for name in names) else opening).append(i)
        elif _TAG_LINE.fullmatch(line):
            names = _TAG_NAME.findall(line)
            if all(name.lower() in _BREAK_TAGS for name in names):  # a line break or rule opens and closes nothing
                continue
            (closing if all(name.startswith("/") for name in names) else opening).append(i)
        elif _COMMENT_LINE.fullmatch(line):
            opening.append(i)
    return np.array(opening, np.int64), np.array(closing, np.int64)


def _in_source(text: str, starts: np.ndarray, not_code: np.ndarray, edges: tuple[np.ndarray, np.ndarray] | None,
               at: int, seen: dict[int, bool]) -> bool:
    """Whether the text that holds offset ``at`` (one of several laid end to end, by ``edges``) is source code
    passed as text: a script (its first line a ``#!`` line) or a Python module (outside its fences, at column 0,
    it imports and it defines a function or a class). Why: there a ``#`` line is a comment on the code under it,
    not a Markdown heading (``# Helpers`` over ``def parse(argv):`` opened a section and cut the function from
    the comment's paragraph); what the text is decides, not its file's name. ``seen`` caches each text's answer."""
    t = 0 if edges is None else int(np.searchsorted(edges[0], at, side="right")) - 1
    if t not in seen:
        lo, hi = (0, len(text)) if edges is None else (int(edges[0][t]), int(edges[1][t]))

        def outside(at: int) -> bool:  # (outside a fence, a literal block ...)
            return bool(not_code[max(int(np.searchsorted(starts, at, side="right")) - 1, 0)])
        seen[t] = python_module(text, lo, hi, outside)
    return seen[t]


def _is_title(line: str, code: bool = False) -> bool:
    """Whether ``line`` reads as a title (``code``: whether or not it holds code or a link)."""
    s = line.strip()
    if not s or len(s) > TITLE_MAX_CHARS:
        return False
    end = s.rstrip(_CLOSERS)  # ("He left." ends as prose does; "Part One (Draft)" as a title)
    if not end or end[-1] in _PROSE_END or s[0] in "-*+•|>=`~":  # prose, a list item, a table row, a quote, a rule
        return False
    if end[-1] in _BROKEN_OFF:  # speech broken off ("AUDIENCE: Booo —", "And then he —"): no title ends so
        return False
    if _CAPTION.match(s) or PAGE_LABEL.fullmatch(s):  # a caption ("Figure 5 Phaseogram of ...", "表2 样本"), a page's
        return False  # number ("Page 3 of 10", "第 3 页", from a PDF's footer): no title
    if s[0] == "<" and _TAG_LINE.fullmatch(s):  # a line of HTML tags alone ("</details>") is markup: no title
        return False
    if _field_list(s):  # a field and its values ("Keywords: retrieval, BM25, long documents"): no title
        return False
    if not code and _code_like(s):  # a line of code alone between blank lines ("return self._x", "#endif"),
        return False  # a link alone: no title
    # a title line carries a word: not a lone number, rule or bullet
    return any(ch.isalpha() for ch in s)


_WORD = re.compile(r"[^\W\d_][\w'’-]*")
#: a field's name, its colon, and what follows (``Keywords: ...``, ``关键词：...``)
_FIELD = re.compile(r"[^:：\r\n]{1,40}[:：][ \t\u3000]*(?P<values>\S.*)")
_VALUE_SEPARATORS = re.compile(r"[,;，；]")
_CONJUNCTION = re.compile(r"(?:and|or|&)\s+", re.IGNORECASE)


def _field_list(line: str) -> bool:
    """Whether ``line`` is a field and a list of three values or more (``Keywords: information retrieval, BM25,
    long documents``, ``关键词：信息检索；长文档；问答``): a paper's, a form's metadata, no title. A title's list capitalises
    its words (``Chapter 3: Lions, Tigers, and Bears``): one value at least opens in lower case or in a script
    without case."""
    if ":" not in line and "：" not in line:  # (no field's colon: no match tried, a title line's or code's)
        return False
    m = _FIELD.fullmatch(line)
    if m is None:
        return False
    values = [_CONJUNCTION.sub("", v.strip(), count=1) for v in _VALUE_SEPARATORS.split(m["values"])]
    firsts = [v[0] for v in values if v]
    return len(firsts) >= 3 and any(not c.isupper() and c.isalpha() for c in firsts)

#: what a line of code or a link holds and a title does not: an assignment or comparison, braces, a
#: statement's ``;``, a call (a name right before ``(``), a name with an underscore in it or before it
#: (``self._x``, ``__init__``, ``max_len``), an arrow, a shell's variable (``$1``, ``${x}``), an opening as
#: a directive, a comment, a decorator or a docstring's field has (``#endif``, ``// ...``, ``@property``,
#: ``:raises X:``), a lower-case ASCII letter first (``return x``, ``const a = []``, ``pass``), a URL or a
#: Markdown link or image (``[docs](https://...)``)
_NO_TITLE = re.compile(r"[=;{}]|[A-Za-z_][A-Za-z0-9_]*\(|(?<![^\W_])_\w|[A-Za-z0-9]_[A-Za-z0-9]|->|\$[\w{(]"
                       r"|^[#/@:\\]|^[a-z]|\w://|\]\(")
#: a character one of :data:`_NO_TITLE`'s alternatives needs somewhere in the line, and those it needs first
_NO_TITLE_MARKS = re.compile(r"[=;{}(_>$:]")
_NO_TITLE_FIRST = frozenset("#/@:\\abcdefghijklmnopqrstuvwxyz")


def _code_like(line: str) -> bool:
    """``_NO_TITLE.search(line)``, its ten alternatives tried (at every character) only where the line holds a
    character one of them needs, or opens with one (a title line, most of the lines read, holds none: one scan for
    a set of characters, some six times cheaper)."""
    return (line[:1] in _NO_TITLE_FIRST or _NO_TITLE_MARKS.search(line) is not None) \
        and _NO_TITLE.search(line) is not None


#: a section's number (``2.1``, ``4.``, ``Section 4.2``, ``Article 5.``, ``§ 3``) and a title that ends with a full stop
#: (:func:`stopped_title`): the title's words in the group
_STOPPED_TITLE = re.compile(r"[ \t]*(?:(?:Section|SECTION|Article|ARTICLE|§)[ \t]*)?\d{1,3}(?:\.\d{1,3})*\.?[ \t]+"
                            r"(?P<title>[^\W\d_][^.!?;:,\r\n]{0,60}?)\.\s*")
#: a Chinese official document's title at its first two depths that ends with a full stop (``（一）加强消防安全管理。``,
#: ``二、突出工作重点。``, GB/T 9704's 一、 and （一）): the number and 2 to 20 characters with no other mark
_ZH_STOPPED_TITLE = re.compile(r"[ \t\u3000]*(?:[一二三四五六七八九十]{1,3}、|[（(][一二三四五六七八九十]{1,3}[）)])[ \t\u3000]*"
                               r"[^\s\d，,、；;：:。！？!?“”\"'（）()《》]{2,20}。\s*")
#: the first characters of a Chinese official document's numbered title (:data:`_ZH_STOPPED_TITLE`)
_ZH_NUMBER_FIRST = _chars_table("（(一二三四五六七八九十")
#: the first characters of a run-in heading (a digit, "S" of Section, "A" of Article, "§"; a Chinese number or its
#: bracket)
_RUNIN_FIRST = np.array(sorted(map(ord, "0123456789SA§（(一二三四五六七八九十")), dtype=np.uint32)
#: a numbered title is at most this many words (a clause's title, not a sentence)
_STOPPED_WORDS_MAX = 10


def stopped_title(line: str) -> bool:
    """Whether ``line`` (a line or a sentence) is a section's number and a title that ends with a full stop, as a
    licence's or a contract's clauses are titled (``1. Source Code.``, ``2.1 Grant.``, ``4.2 Termination for
    Cause.``): a bare number needs its dot or a second level (``12 Monkeys.`` is prose), and the title is written as
    one (:func:`_title_case`: ``1. Preheat the oven.`` is a step, not a title). A Chinese official document titles
    its first two depths so too (``（一）加强消防安全管理。``, :data:`_ZH_STOPPED_TITLE`: a short title, no other mark;
    its 1． and （1） depths are items)."""
    if _ZH_STOPPED_TITLE.fullmatch(line):
        return True
    m = _STOPPED_TITLE.fullmatch(line)
    if m is None:
        return False
    head = line[: m.start("title")].strip()
    if not (head.endswith(".") or "." in head or not head[:1].isdigit()):
        return False
    title = m.group("title")
    return _title_case(title, _FUNCTION_WORDS) and len(_WORD.findall(title)) <= _STOPPED_WORDS_MAX


#: English's closed-class words of four letters or more (prepositions, conjunctions, demonstratives), which a
#: title written in title case keeps in lower case (the GPL's ``13. Use with the GNU Affero General Public
#: License.``, ``14. Revised Versions of this License.``)
_FUNCTION_WORDS = frozenset(
    "with within without from into onto upon over under than that this these those about above across after "
    "against along among around before behind below beneath beside besides between beyond during except "
    "inside outside since through throughout toward towards until unto unless when where whereas while "
    "whether both either neither".split())


def _title_case(line: str, lower: frozenset[str] = frozenset()) -> bool:
    """Whether ``line`` is written the way a title with no blank line under it must be: every word of
    four letters or more capitalised (``Related Work``, ``Nathan of Gaza``, ``Costs``) but the ``lower``
    words before the last, no label (``:``); in a script without case, at most 20 characters. A turn of a conversation that
    ends without a full stop (``The hotel should include free wifi``) is not one."""
    s = line.strip()
    if ":" in s or "：" in s:
        return False
    words = _WORD.findall(s)
    if not any(ch.isupper() or ch.islower() for w in words for ch in w):
        return len(s) <= 20
    last = len(words) - 1  # (title case capitalises the last word whatever it is: "See above." is prose)
    return all(w[0].isupper() or (w in lower and k < last) for k, w in enumerate(words) if len(w) >= 4) \
        and not words[0][0].islower()


def _asciidoc_title(line: str) -> bool:
    """The title of an AsciiDoc (or WikiText) section line reads as one: ``== Installation``,
    ``= = Gameplay = =``; not ``= 42`` or ``= x + y`` (the last step of a calculation)."""
    title = line.strip().strip("= \t")
    return _is_title(title) and not title[:1].islower()


_EMPHASIS = ("**", "__", "*", "_")


def _emphasized_title(line: str) -> bool:
    """A line that is one run of bold or italic text (``**Results by region**``, ``__Outlook__``,
    ``*Steps:*``, ``**第一部分**``): how chat assistants, Notion and many Markdown exports write a heading.
    Its text reads as a title (:func:`_is_title`), a closing colon allowed (``**Steps:**``)."""
    s = line.strip()
    for mark in _EMPHASIS:
        k = len(mark)
        if len(s) > 2 * k and s.startswith(mark) and s.endswith(mark):
            inner = s[k:-k]
            if mark in inner or inner != inner.strip():  # "**a** and **b**", "** a **": not one run
                return False
            inner = inner.removesuffix(":").removesuffix("：")
            return _is_title(inner) or (inner[:1] in ("*", "_") and _emphasized_title(inner))  # ***bold italic***
    return False


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.union1d`` of two index arrays as int64, at no cost where both are empty (most texts' lines of
    markup, headings and underlines: none), and without its sort where one is empty and the other already
    increases (a ``flatnonzero``'s answer: the paragraphs' first sentences beside no enclosed number)."""
    if a.size == 0 and b.size == 0:
        return np.zeros(0, np.int64)
    one = b if a.size == 0 else a if b.size == 0 else None
    if one is not None and one.ndim == 1 and (one.size < 2 or bool((one[1:] > one[:-1]).all())):
        return one.astype(np.int64)
    return np.union1d(a, b).astype(np.int64)


def layout(sents: SentenceSpans, edges: tuple[np.ndarray, np.ndarray] | None = None) -> Layout:
    """Read the structure of ``sents`` (see the module docstring). Python touches only the sentences
    that start a line and are short, a small share of any text. ``edges`` (starts, ends): several
    texts laid end to end, each read on its own (a fence never pairs across two texts)."""
    token = _LAST_MEMO.set(_LastMemo(sents.text, sents.starts, sents.ends))
    try:
        return _layout(sents, edges)
    finally:
        _LAST_MEMO.reset(token)


def _layout(sents: SentenceSpans, edges: tuple[np.ndarray, np.ndarray] | None) -> Layout:
    """:func:`layout`'s reading, its sentences' last characters memoised (:data:`_LAST_MEMO`)."""
    n = len(sents)
    brk = np.asarray(sents.breaks, dtype=np.int8)
    strength = np.where(brk >= BREAK_HARD, BLOCK, brk + SENTENCE).astype(np.int8)
    heading = np.zeros(n, dtype=bool)
    no_cut = np.zeros(max(n - 1, 0), dtype=bool)
    leans = np.zeros(max(n - 1, 0), dtype=bool)
    lead_in = np.zeros(max(n - 1, 0), dtype=bool)
    introduces = np.zeros(max(n - 1, 0), dtype=bool)
    if n == 0:
        return Layout(heading, strength, no_cut, leans, lead_in)
    text = sents.text
    starts, ends = sents.starts, sents.ends
    before = np.full(n, BREAK_PARAGRAPH, np.int8)  # the text's start counts as a blank line
    before[1:] = brk
    after = np.full(n, BREAK_PARAGRAPH, np.int8)
    after[:-1] = brk
    line_start = before >= BREAK_LINE
    line_whole = line_start & (after >= BREAK_LINE)
    short = (ends - starts) <= max(TITLE_MAX_CHARS, NUMBERED_MAX_CHARS) + 8  # + trailing blank lines
    # only lines that could be a heading reach the Python checks: a heading's first character, or a
    # line standing alone between blank lines (a title line)
    first = codepoints(text)[starts]
    # fenced code is code, whatever its lines look like (a "# comment" is no heading, "  - a tag" of front
    # matter no list item)
    f_lo, f_hi, f_closed, f_spans = _fences(sents, edges)
    code = np.zeros(n + 1, np.int64)
    np.add.at(code, f_lo, 1)  # from the opening line's sentence ...
    np.add.at(code, np.minimum(f_hi, n - 1) + 1, -1)  # ... to the closing line's
    not_code = np.cumsum(code[:-1]) == 0
    # between two items of one list the break is the items' own (a line, or a blank line in a loose list),
    # not a block's: the list's edges are its block breaks, so a list that fits stays whole
    # (an FAQ's marked question over its answer opens an item: the pair is one, its list the FAQ)
    asked, questions = _questions(text, starts, np.flatnonzero(
        line_start & (before >= BREAK_LINE) & (before <= BREAK_PARAGRAPH) & not_code
        & ((first == 0x41) | (first == 0x7B54) | (first == 0x56DE))), line_start)
    items, loose = _between_items(text, starts, ends, before, first, not_code, questions)
    strength[items] = np.where(loose, PARAGRAPH, LINE)
    in_list = np.zeros(max(n - 1, 0), dtype=bool)
    in_list[items] = True
    # a line under a separator line (a rule, vimtutor's tildes, a fortune file's "%": no letter nor digit)
    # and over a blank line stands alone as one between blank lines does
    sep_above = np.zeros(n, dtype=bool)
    below = np.flatnonzero(((before == BREAK_LINE) | (before == BREAK_HARD)) & (after >= BREAK_PARAGRAPH) & line_whole
                           & short)
    below = below[(below > 0) & line_whole[np.maximum(below - 1, 0)] & (ends - starts)[np.maximum(below - 1, 0)]
                  <= 2 * TITLE_MAX_CHARS]
    below = below[_in_table(_SEPARATOR_CHARS, first[below - 1])] if below.size else below
    if below.size:  # (a walk over the line above's marks: it must reach the line's end)
        past, _, _ = _walk(codepoints(text), starts[below - 1], ends[below - 1], _SEPARATOR_CHARS, 2 * TITLE_MAX_CHARS)
        sep_above[below[past >= ends[below - 1]]] = True
    maybe = _member(first, _HEAD_FIRST) | ((before == BREAK_PARAGRAPH) & (after >= BREAK_PARAGRAPH)) | sep_above
    emph = np.flatnonzero((before >= BREAK_PARAGRAPH) & line_whole & short)
    emph = emph[_member(first[emph], _EMPH_FIRST)]
    emph = emph[_last_char(text, starts, ends, emph) == first[emph]]  # **a bold title line**
    maybe[emph] = True
    maybe &= not_code
    # and a line right under another that opens with a reStructuredText underline's character
    rst = np.flatnonzero(line_whole & short & not_code & (before == BREAK_LINE))
    rst = rst[_member(first[rst], _RST_FIRST)]
    rst = rst[_last_char(text, starts, ends, rst) == first[rst]]  # one character repeated
    opens_text = np.zeros(n, dtype=bool)  # a text's first sentence (each text's, when several are laid end to end)
    opens_text[0] = True
    if edges is not None:
        k = np.minimum(np.searchsorted(starts, edges[0]), n - 1)
        opens_text[k[starts[k] == edges[0]]] = True
    # per gap: both sentences lie in one text (several texts laid end to end: no bond reaches across)
    one_text = np.ones(max(n - 1, 0), dtype=bool)
    if edges is not None and n > 1:
        t = np.searchsorted(edges[0], starts, side="right") - 1
        inside = (t >= 0) & (ends <= edges[1][np.maximum(t, 0)])
        one_text = inside[:-1] & inside[1:] & (t[:-1] == t[1:])
    above = _titles_above(text, starts, ends, line_start, line_whole & short & not_code & (after == BREAK_LINE),
                          opens_text)
    maybe[list(above)] = True
    # and a book's division markers ("Book the First.", "IV."), read further only where they may be one
    # (and the sentences that open a line of a marker and its title, read after the headings below: one
    # pass for both)
    opens_line = (before == BREAK_PARAGRAPH) & not_code & (ends - starts <= TITLE_MAX_CHARS + 16)
    pool = np.flatnonzero((line_whole & not_code & ((ends - starts <= MARKER_MAX_CHARS + 16) | (np.arange(n) == 0)))
                          | opens_line)
    found = pool[_marker_like(text, starts, ends, pool)]
    marker = np.zeros(n, dtype=bool)
    marker[found] = True
    maybe |= marker
    setext_under = np.zeros(n, dtype=bool)
    weak = np.zeros(n, dtype=bool)  # titles with no blank line under them
    alone = np.zeros(n, dtype=bool)  # title lines standing alone between blank lines
    coded = np.zeros(n, dtype=bool)  # ... and lines of code or links that stand so
    rst_set, emph_set = set(rst.tolist()), set(emph.tolist())
    # a page's running header, footer and number (a PDF's text: :mod:`.pages`) are the printer's: never a
    # heading, never a lead-in
    furn = _furniture(text, starts, n, edges)
    maybe &= ~furn
    # a line of HTML tags alone is markup, never a heading (read only where a line opens with "<" or a
    # blank and ends with ">")
    tagged = np.flatnonzero(line_whole & not_code & short & _in_table(_TAG_FIRST, first))
    last = _last_char(text, starts, ends, tagged)
    tagged = tagged[(last == 0x3E) | ((last == 0x7D) | (last == 0x5D)) & _in_table(_LATEX_FIRST, first[tagged])]
    opening, closing = _markup_lines(text, starts, ends, tagged)
    # and reStructuredText's explicit markup (".. code-block:: cmake", ".. note::", ".. _label:") opens what
    # follows it: its body, the section a label names
    dots = np.flatnonzero(line_whole & not_code & (first == 0x2E))
    dots = dots[[_EXPLICIT.match(text, int(starts[i]), int(ends[i])) is not None for i in dots.tolist()]]
    head_gaps = _EMPTY_I64
    if dots.size:  # ... and so do a directive's options under it (":alt: A cat.", ":width: 200px"): its head
        opts = directive_options(text)
        if opts:
            o_lo, o_hi = np.array(opts, np.int64).T
            k = np.searchsorted(o_lo, starts, side="right") - 1
            in_head = np.flatnonzero((k >= 0) & (starts < o_hi[np.maximum(k, 0)]) & not_code)
            in_head = in_head[in_head > 0]
            dots = _union(dots, in_head)
            head_gaps = in_head - 1  # (inside a head: one unit, a heading's bond, not a lead-in's)
    opening = _union(opening, dots)
    explicit = set(dots.tolist())
    maybe[opening] = maybe[closing] = False
    cand = _could_head(text, starts, ends, np.flatnonzero(line_whole & short & maybe), first, marker,
                       (before >= BREAK_PARAGRAPH) & (after >= BREAK_PARAGRAPH))
    # a line that opens as no heading form does (code, a table's or a log's lines) is one only as a title,
    # by where it stands: between blank lines, over a paragraph, a bold line, a division marker
    form = np.zeros(n, dtype=bool)
    form[cand] = _opens_heading_form(codepoints(text), starts, ends, cand)
    form[rst] = True
    titled = (before == BREAK_PARAGRAPH) & (after >= BREAK_PARAGRAPH) | marker | sep_above
    titled[emph] = True
    titled[list(above)] = True
    deep = np.zeros(n, dtype=bool)  # (a line indented four columns or more: code, to Markdown's "#")
    deep[cand] = code_indented(codepoints(text), starts[cand])
    depth: dict[int, int] = {}  # each "#" line's number of marks
    loop = _union(cand[form[cand] | titled[cand]], rst[~furn[rst]])
    # (less the "#" lines indented four columns or more that are a comment of code by their form alone, read by
    # walks: the loop would pass over each, a source file's thousands)
    hashed = loop[(first[loop] == 0x23) & form[loop] & deep[loop]]
    if hashed.size:
        loop = np.setdiff1d(loop, hashed[_code_comments(codepoints(text), starts[hashed], ends[hashed])],
                            assume_unique=True)
    if loop.size:  # (less the lines its rules read as nothing: a source file's by the thousand)
        placed = titled.copy()
        placed[rst] = True
        loop = loop[~_indented_hash(first[loop], deep[loop], placed[loop])]
        other = marker.copy()  # (the places of a rule other than a title line's)
        other[emph] = other[rst] = True
        other[list(above)] = True
        lone = ((before == BREAK_PARAGRAPH) | sep_above) & (after >= BREAK_PARAGRAPH)
        loop = loop[~_unlisted_code(first[loop], _in_runs(lone, LISTED_TITLES)[loop], other[loop])]
    # (read as Python values: no numpy scalar per read; and each regular expression tried only on a line that
    # holds the character it needs, "#", "=", "\\" or "<": a source file's lines pass here by the thousand)
    sources: dict[int, bool] = {}  # (per text laid end to end, whether it is a script or Python's source)
    # (and the sentences over and under each, as Python ints: read where the line has one, clipped elsewhere)
    up, down = np.maximum(loop - 1, 0), np.minimum(loop + 1, n - 1)
    for i, a, b, form_i, deep_i, before_i, after_i, marker_i, sep_i, pa, pb, na, nb in zip(
            loop.tolist(), starts[loop].tolist(), ends[loop].tolist(), form[loop].tolist(), deep[loop].tolist(),
            before[loop].tolist(), after[loop].tolist(), marker[loop].tolist(), sep_above[loop].tolist(),
            starts[up].tolist(), ends[up].tolist(), starts[down].tolist(), ends[down].tolist(), strict=True):
        line = text[a:b]
        atx = form_i and "#" in line and _ATX.match(line) and not CPP_DIRECTIVE.match(line)  # (C's "# define" is code)
        if atx and deep_i:  # a "#" line indented four columns or more is code: a shell's prompt, an example's comment
            continue
        if atx and _in_source(text, starts, not_code, edges, a, sources):
            continue  # (a comment of a script's or a Python module's: "# Helpers" over "def parse(argv):")
        if atx and i > 0 and 0 < indent_columns(text, a) and _line_ends_before(text, a) == 1 \
                and not _deeper_under(text, starts, sents.seams(), np.array([i - 1]))[0]:
            continue  # (an indented "#" line right under a line indented as deep: YAML's "  # ..." under "  port: 80")
        if atx:
            depth[i] = len(_ATX.match(line).group(1))  # type: ignore[union-attr]
        if atx or (form_i and (("=" in line and _ASCIIDOC.match(line) and _asciidoc_title(line))
                                or ("\\" in line and _LATEX.match(line)) or ("<" in line and _html_heading(line)))):
            heading[i] = True
        elif form_i and i > 0 and before_i == BREAK_LINE and not heading[i - 1] \
                and text[pa:pb].strip() \
                and (_SETEXT_LINE.match(line.rstrip("\r\n")) or (i in rst_set and rst_underline(line, text[pa:pb]))):
            heading[i - 1] = True
            setext_under[i] = True
        elif form_i and len(line.strip()) <= NUMBERED_MAX_CHARS and _numbered_heading(line) \
                and (line.strip()[-1] not in _PROSE_END
                     or (before_i >= BREAK_PARAGRAPH and after_i >= BREAK_PARAGRAPH
                         and (line.strip()[-1] in _QUESTION_MARKS or stopped_title(line)))) \
                and not _listed_number(text, starts, ends, opens_text, i, line, _line_opener(before, i - 1)) \
                and (before_i != BREAK_HARD or after_i == BREAK_LINE
                     or (after_i == BREAK_PARAGRAPH and not (i > 0 and before[up := _line_opener(before, i - 1)] == BREAK_HARD
                                                             and _opens_item(text, starts, first, [up])[0]))):
            # (a numbered question alone between blank lines heads its answer: a specification's or an FAQ's
            # "1.2. What is this spec?"; so does a numbered title that ends with a full stop, a licence's or a
            # contract's "  1. Source Code." over its clauses; a numbered line the splitter took for a list item heads what is under it when that is no
            # next item: "1．加强组织领导" over its text, "1. Install" over the steps, "1. Test Files" alone
            # over a paragraph; "1. Apples" over "2. Pears" stays an item, and so does a loose list's last)
            heading[i] = True
        elif marker_i and before_i != BREAK_HARD and i < n - 1 \
                and _chapter_marker(line, bool(before_i == BREAK_PARAGRAPH and after_i >= BREAK_PARAGRAPH)) \
                and text[na:nb].strip():  # "CHAPTER II.", "IV." over a chapter
            heading[i] = True
        elif i in emph_set and i < n - 1 and _emphasized_title(line) \
                and text[na:nb].strip():  # titles what follows, even on the next line
            heading[i] = True
        elif (before_i == BREAK_PARAGRAPH or sep_i) and after_i >= BREAK_PARAGRAPH and i < n - 1 \
                and _is_title(line, code=True) \
                and text[na:nb].strip() \
                and not (i > 0 and (_introduces(text[pa:pb])
                                    or i - 1 in explicit or _inside_sentence(text, starts, ends, i))) \
                and not (furn[i + 1] and _goes_on_over_page(text, starts, furn, i)):
            if _code_like(line.strip()):  # a line of code or a link alone: no title, but a line of a
                coded[i] = True  # list laid out one per paragraph, as a title line there is
                continue
            # (a title has text to title; a line a colon or a directive introduces is what it introduces:
            # "run this::" over "    $ make install", "The command is:" or vim help's "... this way: >" over it,
            # ".. code-block::" over its
            # one line; a line a sentence goes on around is an example in it: "the command" / "info grep" /
            # "should give you access ..."; so is a paragraph's one line over a page's footer, its sentence going
            # on under the next page's header)
            heading[i] = alone[i] = True
        elif i in above and _is_title(line) and _title_case(line):
            heading[i] = weak[i] = True
    # two or more "#" lines of one depth right under each other are a block of comments (a script's, a
    # Makefile's, a licence's lines atop a source file), not headings: two headings of one depth with nothing
    # between them title nothing
    def _right_under(i: int) -> bool:  # (sentence i on the line right under sentence i - 1: no blank line)
        gap = text[int(starts[i - 1]) : int(starts[i])]
        return gap.count("\n", len(gap.rstrip())) + gap.count("\r", len(gap.rstrip())) - gap.count("\r\n") == 1
    for i, d in depth.items():
        if (depth.get(i - 1) == d and _right_under(i)) or (depth.get(i + 1) == d and _right_under(i + 1)):
            heading[i] = False
    # three or more title lines in a row with nothing under any but the last are a list laid out one entry
    # per paragraph (a glossary, a contents page, an address), not headings: only the last, where a
    # paragraph longer than a title follows, still titles it
    heading[_listed_titles(alone | coded, ends - starts)] = False
    # a division marker and its title on one line ("CHAPTER XII. ALICE'S EVIDENCE", "SCENE II. Elsinore. A
    # room of state in the Castle."), which the splitter may read as two or three sentences: every
    # sentence of the line is the heading
    for i in found[opens_line[found] & ~heading[found]].tolist():
        j = _division_line(text, starts, ends, after, i)
        if j is not None:
            heading[i : j + 1] = True
    # a screenplay's scene heading ("INT. KITCHEN - NIGHT", "EXT. SLIPWAY - LATER"), which the splitter reads as
    # two sentences (read in Python only where a paragraph opens with "INT"/"EXT" in capitals)
    cp = codepoints(text)
    slug = np.flatnonzero(opens_line & ((first == 0x49) | (first == 0x45)) & (ends - starts > 4))
    second, third = cp[starts[slug] + 1], cp[starts[slug] + 2]  # (INT, EXT)
    slug = slug[((second == 0x4E) | (second == 0x58)) & (third == 0x54)]
    for i in slug.tolist():
        j = _scene_heading(text, starts, ends, after, i)
        if j is not None:
            heading[i : j + 1] = True
    # a title between runs of one mark on a line of its own (MediaWiki's "== History ==", a chat log's "--- Day
    # changed Mon Mar 12 2024 ---"), and the lines by which irssi's logs open a log and a day ("--- Log opened Tue
    # Mar 12 09:00:01 2024", "--- Day changed Wed Mar 13 2024", no marks after them)
    framed = np.flatnonzero(line_whole & not_code & short & ((first == 0x2D) | (first == 0x3D)) & ~heading)
    framed = framed[_may_frame(cp, starts, ends, framed)]
    framed = [i for i in framed.tolist() if i + 1 < n and (_FRAMED_TITLE.fullmatch(text, int(starts[i]), int(ends[i]))
                                                           or _LOG_OPENS.fullmatch(text, int(starts[i]), int(ends[i])))]
    heading[framed] = True
    # an org-mode file's outline ("* Kitchen", "** TODO Tiles"; Markdown's bullets, but for a file that holds
    # org's "#+" keywords, "#+TITLE:", "#+TBLFM:", or whose first line names Emacs's outline or org mode, as GNU's
    # NEWS files do: "GNU coreutils NEWS  -*- outline -*-" over "* Noteworthy changes in release 9.1" and "** Bug
    # fixes"); a heading's stars open its line (indented, "  * item" is a list's bullet in org too), and in a text
    # that only its mode line declares an outline, a star line is a heading where what follows the stars reads as
    # a title and no line of as many stars lies right over or under it (GNU's older NEWS entries list their items
    # under "*" too: "* Fix serious bug for VMS." over "* Add workaround in configure.in": two headings of one depth
    # with nothing between them title nothing, as "#" lines in a row are comments)
    org_lines: list[int] = []
    keywords = _contains(text, "#+") and _ORG_KEYWORD.search(text) is not None
    if keywords or outline_mode(text):
        org = np.flatnonzero(line_whole & not_code & short & (first == 0x2A))
        stars = {i: len(line) - len(line.lstrip("*")) for i in org.tolist()
                 if _ORG_HEADING.match(line := text[int(starts[i]) : int(ends[i])]) and indent_columns(text, int(starts[i])) == 0}
        org = np.asarray([i for i, d in stars.items() if i + 1 < n and (keywords or (
            _is_title(text[int(starts[i]) : int(ends[i])].lstrip("*"), code=True)
            and not (stars.get(i - 1) == d and _one_line_apart(text, int(starts[i - 1]), int(starts[i])))
            and not (stars.get(i + 1) == d and _one_line_apart(text, int(starts[i]), int(starts[i + 1])))))], np.int64)
        heading[org] = True
    if keywords:  # ... and a table's formula line ("#+TBLFM: $5=$2*$4") stays with its table
        org_lines = [i for i in np.flatnonzero(line_whole & (first == 0x23)).tolist()
                     if i > 0 and _ORG_TBLFM.match(text, int(starts[i]), int(ends[i]))]
    # a speaker's name on a line of its own over the speech (a play's "BARNARDO.", a screenplay's cue)
    # (each read only where the line's first character may open one: most lines are none)
    size = ends - starts
    over_line = line_whole & (after == BREAK_LINE) & not_code
    lead = np.zeros(n, dtype=bool)  # sentences that stay with the next, as a lead-in does (by index: a mask, no set unions)
    lead[_speaker_labels(text, starts, ends, np.flatnonzero(
        over_line & (before == BREAK_PARAGRAPH) & (size <= LABEL_MAX_CHARS + 2) & ~opens_text
        & (((first >= 0x41) & (first <= 0x5A)) | ((first > 0x7F) & (first < 0x2000)))))] = True  # (not at a text's start)
    # a subtitle cue's timing line (SRT, WebVTT), and the cue's number or name right above it
    cues = _cue_timings(text, starts, ends, np.flatnonzero(over_line & (size <= CUE_MAX_CHARS + 2)
                                                           & (first >= 0x30) & (first <= 0x39)))
    named = cues[(cues > 0) & (before[cues] == BREAK_LINE)] - 1
    lead[cues] = True
    lead[named[line_whole[named] & (size[named] <= CUE_MAX_CHARS)]] = True
    # a chat export's message header (a sender's name and a time on a line of its own) stays with the message
    # (each header's clock holds a colon: a text with fewer colons holds fewer headers than a chat's log)
    messages = _message_headers(text, cp, first, starts, ends, sents.seams(), edges, np.flatnonzero(
        over_line & (size <= LABEL_MAX_CHARS + _STAMP_MAX_CHARS + 2))) if _holds(text, ":", _LOG_RECORDS_MIN) \
        else _EMPTY_I64
    lead[messages] = True
    # a mail's header (From:, To:, Subject:, ... or 发件人：, 主题：, ..., two lines or more) stays with the message
    if _holds(text, _COLONS, 2):  # (two fields or more, each with its colon)
        lead[_mail_headers(text, starts, ends, after, np.flatnonzero(
            line_whole & not_code & (before >= BREAK_LINE) & _member(first, _MAIL_HEADER_FIRST)))] = True
    # a question marked as one (an FAQ's "Q: ..." over "A: ...") stays with its answer
    lead[asked] = True
    # a clause's run-in heading ("2.1 Grant. Subject to the terms ...", a licence's "2. Grant of Copyright License.
    # Subject to ...", "Section 4.2 Termination for Cause. Either party ..."), a sentence of its own to the splitter,
    # that opens a line with the clause's text after it on the line: it titles that text and stays with it
    runin = np.flatnonzero(line_start & (before >= BREAK_LINE) & (after == BREAK_NONE) & not_code
                           & (size <= NUMBERED_MAX_CHARS) & _member(first, _RUNIN_FIRST))
    if runin.size:  # (a sentence that opens with "S" or "A" is read only where "Se" or "Ar" opens it: prose's "She")
        second = codepoints(text)[np.minimum(starts[runin] + 1, len(text) - 1)] | 0x20
        runin = runin[((first[runin] != 0x53) | (second == 0x65)) & ((first[runin] != 0x41) | (second == 0x72))]
    lead[[i for i in runin.tolist() if i + 1 < n and stopped_title(text[int(starts[i]) : int(ends[i])])]] = True
    # a number alone on its line ("（2）" or "①" over a blank line and the paragraph it numbers) stays with it
    bare = np.flatnonzero(line_whole & not_code & (size <= _BARE_NUMBER_MAX) & _member(first, _BARE_FIRST))
    lead[[i for i in bare.tolist() if i + 1 < n and _BARE_NUMBER.fullmatch(text, int(starts[i]), int(ends[i]))]] = True
    # a term over its definition, indented deeper on the next line (a reStructuredText definition list,
    # a man page's option over its description), stays with it
    terms = np.flatnonzero(line_whole & (after == BREAK_LINE) & not_code & (size <= TITLE_MAX_CHARS + _INDENT_MAX)
                           & _in_table(_BLANK, codepoints(text)[np.maximum(ends - 1, 0)]))
    at = _last_at(text, starts, ends, terms, closers=True)  # (past up to four spaces: a deeper indent stops it early)
    last = codepoints(text)[at]
    terms = terms[~_member(last, _PROSE_END_CP) & ((at - starts[terms] < TITLE_MAX_CHARS) | _in_table(_BLANK, last))]
    decided, term = _read_terms(codepoints(text), starts[terms], ends[terms])
    terms = _union(terms[decided & term], _terms(text, starts, ends, terms[~decided]))  # (tabs, odd whitespace: Python)
    lead[terms] = True
    # a table's header row and its delimiter row stay with the table's first row: no chunk ends with the
    # names of columns it holds no values of
    if n > 1:
        lead[_table_heads(text, starts, ends, np.flatnonzero(
            line_whole[:-1] & not_code[:-1] & (first[:-1] == 0x7C) & (after[:-1] == BREAK_LINE)))] = True
    # a table aligned with spaces ("USER   PID %CPU" over its rows, as ps and df print them): its header row
    # stays with its rows, as a Markdown table's does (each row is one unit already: :mod:`.records`)
    if n > 1 and has_gutters(text):
        heads = np.asarray(aligned_heads(text), np.int64)
        k = np.minimum(np.searchsorted(starts, heads), n - 1)
        heads = k[(starts[k] == heads) & line_whole[k] & not_code[k] & (k < n - 1)]
        heads = heads[after[heads] == BREAK_LINE]
        lead[heads] = True
        heading[heads] = False
    # a poem's title over its author's line ("将进酒" over "李白" or "唐·李白", "Ozymandias" over "by Percy Bysshe
    # Shelley"), over the poem's lines: the two title the poem, never end a chunk (read in Python only where a
    # byline's first character may open one: a Han character, a bracket, "b")
    pair = np.flatnonzero(line_whole[:-1] & line_whole[1:] & short[:-1] & short[1:] & not_code[:-1]
                          & ((before[:-1] >= BREAK_PARAGRAPH) | opens_text[:-1]) & (after[:-1] == BREAK_LINE)
                          & (after[1:] >= BREAK_LINE) & ~heading[:-1] & ~heading[1:]
                          & (_member(first[1:], _BYLINE_FIRST) | ((first[1:] >= 0x4E00) & (first[1:] <= 0x9FFF))))
    for i in pair[pair < n - 3].tolist():
        if _BYLINE.fullmatch(text, int(starts[i + 1]), int(ends[i + 1])) and _verse_under(text, starts, ends, after, i + 2) \
                and _is_title(text[int(starts[i]) : int(ends[i])]):
            heading[i] = heading[i + 1] = True
    # a Debian changelog's entry line ("hello (2.10-3) unstable; urgency=medium") heads its entry, and its trailer
    # (" -- Name <mail>  date") closes it: it stays with the entry's last item
    if n > 1 and _contains(text, "; urgency="):
        for m in _DEB_ENTRY.finditer(text):
            k = int(np.searchsorted(starts, m.start()))
            if k < n and starts[k] == m.start() and not_code[k]:
                heading[k : int(np.searchsorted(starts, m.end()))] = True
        for m in _DEB_TRAILER.finditer(text):
            k = int(np.searchsorted(starts, m.start() + 2, side="right")) - 1  # (the sentence of its "--")
            if 0 < k and not_code[k] and starts[k] >= m.start():
                lead[k - 1] = True
    # an INI or TOML file's section header over its first key ("[tool.pytest.ini_options]" over
    # "xfail_strict = true", "[[tool.mypy.overrides]]") heads its section, as a Markdown heading does
    if n > 1:
        heading[_ini_sections(text, starts, ends, np.flatnonzero(
            line_whole[:-1] & not_code[:-1] & short[:-1] & (first[:-1] == 0x5B) & (after[:-1] == BREAK_LINE)))] = True
    # a line of an indented block (a man page's example: "[imap]" over its keys, a grammar's rule) is the
    # block's, no heading, unless a mark, a division's word or an underline makes it one ("CHAPTER II." over its
    # title, both indented: :mod:`.indented_blocks`)
    deep_heads = np.flatnonzero(heading & line_start & not_code & ~marker & _in_table(_BLANK, cp[np.maximum(starts - 1, 0)]))
    deep_heads = deep_heads[~setext_under[np.minimum(deep_heads + 1, n - 1)] & ~_member(first[deep_heads], _MARKED_FIRST)]
    deep_heads = np.setdiff1d(deep_heads, np.array(framed, np.int64))  # (and a title framed by dashes)
    if deep_heads.size:  # (a title over a list's first item, a changelog's "  [ Name ]" over "  * Fixed ...", heads it)
        over = deep_heads[(deep_heads < n - 1) & ((after[deep_heads] == BREAK_LINE) | (after[deep_heads] == BREAK_HARD))]
        deep_heads = np.setdiff1d(deep_heads, over[_opens_item(text, starts, first, over + 1)])
        part = np.zeros(n, np.int64) if edges is None else np.maximum(np.searchsorted(edges[0], starts, side="right") - 1, 0)
        body = line_start & ~heading & not_code  # (each text laid end to end its own margin)
        margin = body_margins(line_indents(text, starts[body]), part[body], int(part[-1]) + 1)[part[deep_heads]]
        heading[deep_heads[in_indented_block(text, starts[deep_heads], margin)]] = False
    # a title line right under a heading and over a blank line is the heading's second line ("CHAPTER I."
    # over "Down the Rabbit-Hole"): it too opens what follows and never ends a chunk
    for i in np.flatnonzero(heading[:-2] & ~setext_under[1:-1] & (after[:-2] == BREAK_LINE)).tolist():
        j = i + 1
        if after[j] >= BREAK_PARAGRAPH and short[j] and not heading[j] and not_code[j] \
                and _is_title(text[int(starts[j]) : int(ends[j])]) and text[int(starts[j + 1]) : int(ends[j + 1])].strip():
            heading[j] = True
    heading &= ~furn
    lead &= ~furn
    terms = terms[lead[terms]]  # (a page's furniture is no term)
    # a plain-text table's header row over its delimiter row of column rules ("Option  Default" over
    # "------  -------"; a man page's, an RFC's, a README's): the header is no title, and the two rows
    # stay with the first row of values
    # (read in Python only where a line opens with two dashes or two equals signs)
    cp = codepoints(text)
    cols = _column_rules(text, starts, ends, line_start, np.flatnonzero(
        line_whole & ((first == 0x2D) | (first == 0x3D)) & (cp[np.minimum(starts + 1, cp.size - 1)] == first)))
    if cols.size:
        heading[cols - 1] = False
        lead[cols - 1] = lead[cols] = True
    # a rule right under a heading ("### A. Getting Pyenv" over "----", a thematic break as Markdown reads
    # one) underlines it, as a setext underline does: the heading goes on over it, and a chunk never ends
    # with the two (a plain-text table's header over its column rules is no heading: read above)
    ruled = np.flatnonzero(heading[:-1] & (after[:-1] == BREAK_LINE) & line_whole[1:] & not_code[1:] & short[1:]
                           & _in_table(_RULE_FIRST, first[1:]) & one_text) + 1
    setext_under[[j for j in ruled.tolist() if _HR_RE.fullmatch(text[int(starts[j]) : int(ends[j])].strip())]] = True
    # ... and a rule right over a heading (vim help's "=====" over "1. Starting diff mode", a
    # reStructuredText overline) opens its section, as a line of tags does
    over = np.flatnonzero(heading[1:] & line_whole[:-1] & not_code[:-1] & one_text
                          & _in_table(_RULE_FIRST, first[:-1]) & ~setext_under[:-1])
    over = [j for j in over.tolist() if _HR_RE.fullmatch(text[int(starts[j]) : int(ends[j])].strip())
            and text.count("\n", int(starts[j]), int(ends[j])) == 1]  # (right over it: no blank line between)
    opening = _union(opening, np.array(over, np.int64))
    in_code = np.zeros(max(n - 1, 0), dtype=bool)
    block_parts = in_code
    if n > 1:
        # a heading's underline belongs to it; a heading is never the end of a chunk
        no_cut |= setext_under[1:]
        ends_heading = heading[:-1] | setext_under[:-1]
        no_cut |= ends_heading
        no_cut |= lead[:-1]  # a speaker's name, a cue's header, a question: they stay with what follows, as a lead-in does
        no_cut[np.asarray(org_lines, np.int64) - 1] = True  # (an org table's formula line with its table)
        # a title read without a blank line under it keeps its paragraph but is too weak a sign to
        # open a section (a caption or a closing "Thank you" reads the same)
        opens = heading[1:] & ~setext_under[1:] & ~weak[1:]
        strength = np.where(opens, SECTION, strength).astype(np.int8)
        strength = np.where(no_cut, np.minimum(strength, LINE), strength).astype(np.int8)
        # a line of HTML tags opens the paragraph under it ("<details>" over the text it folds; an anchor's
        # "<a id="x"></a>" over its heading: the section opens before the anchor), and so does a line of
        # comments; a line of closing tags closes the paragraph over it: the break moves past the markup,
        # whose bond is as weak as a lead-in's
        opening, closing = opening[opening < n - 1], closing[closing > 0] - 1  # (gaps after / before them)
        opening, closing = opening[one_text[opening]], closing[one_text[closing]]
        for i in opening[::-1].tolist():
            if i > 0 and not no_cut[i - 1]:
                strength[i - 1] = max(strength[i - 1], strength[i])
            strength[i] = min(strength[i], LINE)
        for i in closing.tolist():
            if i + 1 < n - 1 and not no_cut[i + 1]:
                strength[i + 1] = max(strength[i + 1], strength[i])
            strength[i] = min(strength[i], LINE)
        no_cut[opening] = lead_in[opening] = no_cut[closing] = lead_in[closing] = True
        lead_in[closing] &= ~ends_heading[closing]  # (a heading over "</details>" keeps a heading's bond)
        lead_in[head_gaps[one_text[head_gaps]]] = False
        # inside a fence a blank line is a line of code, not a paragraph break: the fence is one
        # block (its edges are hard breaks already), kept whole where it fits and cut only between
        # lines where it alone exceeds the limit; its opening line stays with the first line of code
        # and its closing line with the last, so no chunk is bare backticks
        inside = np.zeros(n, np.int64)
        np.add.at(inside, f_lo, 1)
        np.add.at(inside, f_hi, -1)
        in_code = np.cumsum(inside[:-1]) > 0
        block_parts = in_code & (brk == BREAK_PARAGRAPH)  # (its blank lines: where one over the limit is cut first)
        strength = np.where(in_code, np.minimum(strength, LINE), strength).astype(np.int8)
        # a blank line before a line indented less than the first line of the paragraph over it closes a
        # block (a function's body, C's "}" included, a quoted passage): a block's break, not a paragraph's;
        # not a dedent inside a body ("    if (x)" / "        return;" over a blank line and "    y = 1;")
        # (each sentence's indent where it opens a line, 0 mid-line: read by the dedent and the bracket lines)
        indent = starts - np.concatenate(([text.rfind("\n", 0, int(starts[0])) + 1], sents.seams()))
        para = np.flatnonzero(strength == PARAGRAPH)
        if para.size:  # (each step below reads only where its candidates are: most short texts have none)
            # (each sentence's paragraph opens on the sentence after the last blank line or stronger break)
            opened = np.zeros(n, np.int64)
            opened[1:] = np.where(strength >= PARAGRAPH, np.arange(1, n), 0)
            np.maximum.accumulate(opened, out=opened)
            strength[para[(indent[opened[para]] >= indent[para + 1] + _DEDENT_MIN) & one_text[para]]] = BLOCK
        # a line of brackets alone (code): an opening one (Allman's "{" under "if (x)") goes on from the line
        # over it and into the one under it, a closing one ("}", "});", "]") closes the line over it, each
        # bond as weak as a lead-in's: no chunk opens with "]" / "}" / "}," or ends with a bare "{"
        closed = np.zeros(n - 1, dtype=bool)  # (the gaps after a line of closing brackets: no lead-in's comma)
        brackets = np.flatnonzero(line_whole & _in_table(_BRACKET_FIRST, first))
        if brackets.size:
            brackets = brackets[np.append(sents.seams(), len(text))[brackets] - starts[brackets] <= _BRACKETS_MAX + 2]
        if brackets.size:  # (walks, not a match per line: JSON and C have a bracket line in three)
            cpt = codepoints(text)
            past, _, opener = _walk(cpt, starts[brackets], ends[brackets], _BRACKET_CHARS, _BRACKETS_MAX, note=_OPENER_CHARS)
            past, _, _ = _walk(cpt, past, ends[brackets], _BLANK, _BRACKETS_MAX)
            lone = (past >= ends[brackets]) | _in_table(LINE_END, cpt[np.minimum(past, cpt.size - 1)])
            opens, shuts = brackets[lone & opener], brackets[lone & ~opener]
            # (an opening line under a closing one is no Allman brace: JSON's "  }," over "  {" parts two records)
            bond = np.concatenate((opens[~np.isin(opens - 1, shuts)] - 1, opens, shuts - 1))
            bond = bond[(bond >= 0) & (bond < n - 1)]
            bond = bond[(strength[bond] <= LINE) & ~no_cut[bond] & one_text[bond]]
            no_cut[bond] = lead_in[bond] = True
            # ... and a closing line right over an opening one as deep parts two blocks (JSON's "  }," over the next
            # record's "  {"), so a record that fits stays whole, as a paragraph does (every cut fell inside a
            # pretty-printed JSON's records)
            after_shut = shuts[np.isin(shuts + 1, opens)]
            if after_shut.size:
                after_shut = after_shut[(strength[after_shut] == LINE) & ~no_cut[after_shut] & one_text[after_shut]
                                        & (indent[after_shut + 1] == indent[after_shut])]
                # (only the outer records, the least indented of each block — lines between blank lines or a fence's
                # edges, a JSON file or one example of it: an inner array's objects are parts of the record that
                # holds them, and a record that fits stays whole)
                _, owner = np.unique(np.cumsum(brk >= BREAK_PARAGRAPH)[after_shut], return_inverse=True)
                outer = np.full(int(owner.max(initial=0)) + 1, np.iinfo(np.int64).max)
                np.minimum.at(outer, owner, indent[after_shut])
                after_shut = after_shut[indent[after_shut] == outer[owner]]
                strength[after_shut] = PARAGRAPH
                closed[after_shut] = True
        # a C function's return type on a line of its own (GNU's and CPython's style: "static PyObject *" over
        # "spam_system(PyObject *self, PyObject *args)" over "{") goes on into the name's line, as a heading's
        # bond does (not a lead-in's, the first a limit breaks: the type is the signature's first line)
        cand = np.flatnonzero(line_whole[:-1] & line_start[1:] & (after[:-1] == BREAK_LINE) & ~in_code
                              & (ends[:-1] - starts[:-1] <= _TYPE_LINE_MAX) & _in_table(_IDENT_FIRST, first[:-1])
                              & _in_table(_IDENT_FIRST, first[1:]))
        if cand.size:  # (read in Python only where walks find a line of words and stars over a name and "(")
            cand = _may_head_signature(codepoints(text), starts, ends, cand)
            sig = np.asarray([i for i in cand.tolist() if _return_type(text, int(starts[i]), int(ends[i]))
                              and _CALL_OPEN.match(text, int(starts[i + 1]), int(ends[i + 1]))], np.int64)
            sig = sig[(strength[sig] <= LINE) & ~no_cut[sig] & one_text[sig]] if sig.size else sig
            no_cut[sig] = True
        # a definition's title over its definition line (Texinfo's: "asn1 parser2array" over "[Function]int
        # asn1_parser2array (const char * file, ...)", the category set at the right margin read first from a PDF)
        # goes on into it, as a heading's bond does: the title ended the definition before it, cut from its own
        cand = np.flatnonzero(line_whole[:-1] & line_start[1:] & (after[:-1] == BREAK_LINE) & ~in_code
                              & (ends[:-1] - starts[:-1] <= _TYPE_LINE_MAX) & (first[1:] == 0x5B))
        if cand.size:  # (read in Python only under a short line, at a line opening with "[")
            defn = np.asarray([i for i in cand.tolist() if _DEFINITION_LINE.match(text, int(starts[i + 1]), int(ends[i + 1]))
                               and text[int(starts[i]) : int(ends[i])].rstrip()[-1:] not in _PROSE_END], np.int64)
            defn = defn[(strength[defn] <= LINE) & ~no_cut[defn] & one_text[defn]] if defn.size else defn
            no_cut[defn] = True
        has = f_hi > f_lo
        no_cut[f_lo[has]] = True
        # (a block's closing line closes it: org's ":END:" introduces nothing, for all its colon)
        shut = f_hi[has & f_closed]
        closed[shut[shut < n - 1]] = True
        # org's drawers are blocks as a fence is: a block's break at each edge (their heading's bond holds the one
        # before), so a drawer that fits stays whole beside the next (":PROPERTIES:" over ":LOGBOOK:")
        drawer = [k for k in np.flatnonzero(has & f_closed).tolist()
                  if _DRAWER_OPEN.match(text, int(starts[f_lo[k]])) is not None]
        if drawer:
            edge = np.concatenate((f_lo[drawer] - 1, f_hi[drawer]))
            edge = edge[(edge >= 0) & (edge < n - 1)]
            edge = edge[~no_cut[edge] & one_text[edge]]
            strength[edge] = np.maximum(strength[edge], BLOCK)
        # (reStructuredText's "... its own account::" over its literal block is a paragraph that introduces it: a
        # lead-in's bond, not markup's — the limit breaks it first, below level 1 too)
        prose = [g for g in f_lo[has].tolist() if _PROSE_LITERAL.fullmatch(text, int(starts[g]), int(ends[g]))]
        lead_in[prose] = introduces[prose] = True
        no_cut[f_hi[has & f_closed] - 1] = True
        # markup between a heading and what it titles (Node's "<!-- YAML ... -->" of metadata, a comment's
        # line, a line of tags) is no content: the heading goes on over it, as over a second line of its
        # own (no cut inside a comment of it, nor after), so no chunk is a heading and its markup alone
        c_lo, c_hi = f_lo[has & f_closed], f_hi[has & f_closed]
        cpt = codepoints(text)
        at, _, _ = _walk(cpt, starts[c_lo], ends[c_lo], _BLANK, _INDENT_MAX)  # (past an indent)
        remark = (cpt[np.minimum(at, cpt.size - 1)] == 0x3C) & (cpt[np.minimum(at + 1, cpt.size - 1)] == 0x21)  # "<!--"
        held = set(np.flatnonzero(ends_heading).tolist())  # gaps that hold a heading to what follows them
        over_it = []
        pairs = [*zip(c_lo[remark].tolist(), c_hi[remark].tolist(), strict=True), *((i, i) for i in opening.tolist())]
        for lo, hi in sorted(pairs):
            # (the heading's own bond, as strong: a heading under the comment goes on the run of headings)
            if lo - 1 in held and hi < n - 1 and one_text[lo - 1] and one_text[hi]:
                over_it.append((lo, hi))
                held.add(hi)
        if over_it:
            run = np.zeros(n, np.int64)
            np.add.at(run, [lo for lo, _ in over_it], 1)
            np.add.at(run, [hi + 1 for _, hi in over_it], -1)
            held_gaps = np.cumsum(run)[: n - 1] > 0
            no_cut |= held_gaps
            strength = np.where(held_gaps, np.minimum(strength, LINE), strength).astype(np.int8)
        # a quoted blank line (">" alone in a mail's quote, ">>" in a quote of a quote) parts the quote's paragraphs
        # as a blank line does: the break before it is a paragraph's (the quote's first line under a blank one
        # opens with ">" too)
        quoted = np.flatnonzero(line_whole[1:] & not_code[1:] & (first[1:] == 0x3E) & (size[1:] <= _QUOTED_BLANK_MAX)
                                & (strength < PARAGRAPH) & ~no_cut & one_text)
        quoted = [g for g in quoted.tolist() if not text[int(starts[g + 1]) : int(ends[g + 1])].strip(" \t\r\n>")]
        strength[quoted] = PARAGRAPH
        # a log's record opens at a line that opens with its time ("2024-05-03T14:02:00.929 ERROR ...", "[10:27]
        # <carol> ..."); the lines under it (a stack trace, "Caused by: ...") are the record's: a record is a
        # paragraph, kept whole where it fits (an error's line was cut from its trace)
        stamped = np.flatnonzero(line_start[1:] & not_code[1:] & (strength == LINE) & ~no_cut & one_text
                                 & (((first[1:] >= 0x30) & (first[1:] <= 0x39)) | (first[1:] == 0x5B)))
        stamped = stamped[_may_log_time(cp, starts[stamped + 1])]  # (by its marks first: a source file's numbers)
        stamped = [g for g in stamped.tolist() if _LOG_TIME.match(text, int(starts[g + 1]), int(ends[g + 1]))]
        stamped = _in_logs(np.asarray(stamped, np.int64), starts, edges, 1)
        strength[stamped] = PARAGRAPH
        # ... and so does a chat export's message at its header line (above): a message is a paragraph
        opened = messages[messages > 0] - 1
        opened = opened[(strength[opened] < PARAGRAPH) & ~no_cut[opened] & one_text[opened]]
        strength[opened] = PARAGRAPH
        # a paragraph that ends as a lead-in does ("as follows:", "Hi Bob,", "例如：") introduces the
        # next one (a list, a quote, the body of a letter): the two stay together, like a heading
        gap = np.flatnonzero((strength >= PARAGRAPH) & (strength < SECTION) & ~in_code & ~no_cut & ~closed)
        if gap.size:
            # (past the blank lines and the indent of what it introduces: reStructuredText's "run this::" over
            # its indented literal block, a colon over an indented code block)
            at = _last_at(text, starts, ends, gap, blanks=4 + _INDENT_MAX)
            cp = codepoints(text)
            # ... and vim help's " >" at a line's end over its indented example
            vim = (cp[at] == 0x3E) & _in_table(_BLANK, cp[np.maximum(at - 1, 0)]) \
                & _in_table(_BLANK, cp[np.maximum(starts[np.minimum(gap + 1, n - 1)] - 1, 0)])
            at = _past_dashes(cp, at)  # (an old letter's "MY DEAR FRIEND,--" or "Sir,—" over its body)
            mark = _member(cp[at], _LEAD_IN_CP)
            mark[mark] = _introducing_mark(text, at[mark])
            lead = gap[mark | vim]
            # (a colon over a deeper line with no blank line between, YAML's "ports:" over "  - name:", is code's
            # and a config's bond, as in the pass below)
            deep = (brk[lead] != BREAK_PARAGRAPH) & _deeper_under(text, starts, sents.seams(), lead)
            no_cut[lead] = True
            lead_in[lead[~deep]] = introduces[lead[~deep]] = True
            strength[lead] = LINE
        # ... and so does a line that ends with a colon over the next line (a mail's "... wrote:" over the
        # quote, "The steps are:" over a list without a blank line; a comma at a line's end is verse's)
        gap = np.flatnonzero((strength == LINE) & ~in_code & ~no_cut & ~closed) if _holds(text, _COLONS, 1) \
            else _EMPTY_I64
        if gap.size:
            # (read at the line's own end, before the next line's indent: a colon over a deeper line, Python's
            # "def area(shape):" over its body, YAML's "key:" over its mapping, "Options:" over indented items)
            line_end = ends.copy()
            line_end[:-1] = sents.seams()
            if not native.available():  # (a colon among the last characters first, by gathers: the walks below
                gap = gap[_near_end(text, line_end, gap, _COLON_CP)]  # are numpy's too; compiled, one walk reads all)
            gap = gap[_member(_last_char(text, starts, line_end, gap), _COLON_CP)]
            at = _last_at(text, starts, line_end, gap)
            keep = _introducing_mark(text, at)
            gap, at = gap[keep], at[keep]
            deep = _deeper_under(text, starts, line_end, gap) | _doctest_block(text, at, starts[gap + 1])
            # (over a line indented deeper, code's and a config's "key:" over its body: a heading's bond, glued
            # below level 1 — a limit broke every "def main():" and "else:" from its body there)
            no_cut[gap] = True
            lead_in[gap[~deep]] = introduces[gap[~deep]] = True
        # a letter's closing over its signature ("Yours ever," over "CAROLINE BINGLEY.", "此致" over "敬礼！") ends the
        # letter it closes: the break over it is no paragraph's, its bond the first a limit breaks (as a closing
        # bracket's line: a letter that fits stays whole, and no chunk opens with its closing)
        close = np.flatnonzero(_member(first[1:], _VALEDICTION_FIRST) & (size[1:] <= _VALEDICTION_MAX))  # (a few first)
        close = close[line_whole[close + 1] & (before[close + 1] >= BREAK_LINE) & (after[close + 1] == BREAK_LINE)
                      & not_code[close + 1] & (strength[close] <= PARAGRAPH) & ~no_cut[close] & ~in_code[close]
                      & one_text[close] & (close + 2 < n)]
        if close.size:  # (read in Python only where the line's first word opens as a closing's does, "Yo", "Si",
            opens = starts[close + 1] + _member(first[close + 1], _QUOTE_OPEN_CP)  # "Be", ... past a quotation mark,
            pair = (_folded(cp[np.minimum(opens, cp.size - 1)]) << 21) | _folded(cp[np.minimum(opens + 1, cp.size - 1)])
            close = close[_member(pair, _VALEDICTION_PAIRS)]
        if close.size:  # and a comma ends it, or it is 此致)
            close = close[_member(_last_char(text, starts, ends, close + 1, blanks=4 + _INDENT_MAX), _VALEDICTION_LAST)]
        close = np.asarray([g for g in close.tolist() if _VALEDICTION.fullmatch(text, int(starts[g + 1]), int(ends[g + 1]))
                            and ends[g + 2] - starts[g + 2] <= _VALEDICTION_MAX], np.int64)
        no_cut[close] = lead_in[close] = True
        strength[close] = LINE
        # a text laid out one paragraph per line (no blank line in it: an article as corpora keep them, the
        # People's Daily's, an encyclopedia's): a line break after a sentence's end is its paragraph break, so
        # a paragraph that fits stays whole
        para = _line_paragraphs(text, starts, ends, brk, strength, no_cut | in_code, items, one_text, edges)
        strength[para] = PARAGRAPH
        # a law's article opens a block ("第二条　…", "Article 5. …" at a line's start, its text on the line): an
        # article's second paragraph stays with it rather than go to the next article's chunk
        art = np.flatnonzero(line_start[1:] & ~in_code & ~no_cut & (strength >= LINE) & (strength < BLOCK)
                             & _member(first[1:], _ARTICLE_FIRST))
        cpt = codepoints(text)  # (a line that opens with "A" is read only where an "r" follows: "Article", not "A ...")
        art = art[(first[art + 1] != 0x41) | (cpt[np.minimum(starts[art + 1] + 1, cpt.size - 1)] == 0x72)]
        strength[[g for g in art.tolist() if _ARTICLE.match(text, int(starts[g + 1]))]] = BLOCK
        # a sentence's end inside a quotation ("「…。…」", "“… . …”", a speech of several sentences) is cut as
        # one before a sentence that leans on the one before: a speech is one thought
        strength[_inside_quotes(text, starts, ends, strength)] = CONTINUES
        # a sentence or line break before a sentence that leans on the one before (not in code)
        leans = continues(sents) & ~in_code
        strength = np.where(leans & (strength <= LINE), CONTINUES, strength).astype(np.int8)
        if furn.any():
            _lift_furniture(text, starts, ends, furn, heading, strength, no_cut, lead_in, opens_text)
    depth = None
    if n > 1:  # source code passed as text: its nesting, its closing lines, its comments over code (.code_lines)
        code = _code_marks(sents, edges, f_spans, not_code)
        if code is not None:
            bond = code.closes | code.leads  # (a heading's bond: no chunk opens with "}" nor ends with a comment)
            no_cut |= bond
            lead_in &= ~bond
            introduces &= ~bond
            strength = np.where(bond, np.minimum(strength, LINE), strength).astype(np.int8)
            strength[code.ends_block & ~no_cut] = np.maximum(strength[code.ends_block & ~no_cut], BLOCK)
            lead_in |= code.opens & no_cut & ~bond  # (a block's bond to its head: the first a limit breaks)
            in_code = in_code | code.comment
            # (nor does prose's lead-in read inside one: "// npm registry quirk:" over the comment's next line is no
            # lead-in over what it introduces, as a colon in a fence is none; held so, the run was no block kept whole
            # and its colon's weak bond the first a limit broke, inside a comment that fitted)
            colon = code.comment & lead_in
            no_cut &= ~colon
            lead_in &= ~colon
            introduces &= ~colon
            # (a comment run's lines are one block's, as a fence's are: no break between two of them is more than a
            # line's, though Markdown read a script's "#" line as a heading's hard break)
            strength = np.where(code.comment, np.minimum(strength, LINE), strength).astype(np.int8)
            depth = code.depth if code.depth.any() else None
            if depth is not None:  # (the end of a top-level definition lies above the top level: -1, see Layout)
                depth = np.where(code.ends_block & ~no_cut, -1, depth)
    introduces &= lead_in  # (a page's furniture between a lead-in and what it introduces lifts the bond)
    in_list &= strength <= PARAGRAPH  # (an item read as a heading after all opens a section)
    in_terms = np.zeros(max(n - 1, 0), dtype=bool)
    in_terms[_between_terms(text, starts, terms, before, edges)] = True
    in_terms &= strength <= PARAGRAPH  # (a term read as a heading after all opens a section)
    if edges is not None:  # no bond of any rule reaches across texts laid end to end (a text's last line, a lead-in
        # or a chat's "Ann: ", binds nothing of the next text, as it binds nothing alone: chunk_many read these gaps)
        no_cut, leans, lead_in, in_code, introduces, block_parts, in_list, in_terms = (
            m & one_text for m in (no_cut, leans, lead_in, in_code, introduces, block_parts, in_list, in_terms))
    return Layout(heading, strength, no_cut, leans, lead_in, in_code if in_code.any() else None,
                  introduces if introduces.any() else None, block_parts if block_parts.any() else None,
                  in_list if in_list.any() else None, depth, in_terms if in_terms.any() else None)


def _code_marks(sents: SentenceSpans, edges: tuple[np.ndarray, np.ndarray] | None,
                spans: list[tuple[int, int, bool]], not_code: np.ndarray) -> CodeMarks | None:
    """:func:`~.code_lines.read_code` for each text of ``sents`` (several laid end to end, by ``edges``): its
    ``/* ... */`` comments are the blocks (:func:`_fences`' ``spans``) that open with ``/*``
    (:func:`~.code_text.slash_comments`, as the splitter reads them), and a script or a Python
    module (:func:`_in_source`, read only where :func:`~.code_lines.read_code` finds lines that may be code) has
    ``#`` comments."""
    text, starts = sents.text, sents.starts
    bounds = [(0, len(text))] if edges is None else list(zip(edges[0].tolist(), edges[1].tolist(), strict=True))
    first = np.searchsorted(starts, [a for a, _ in bounds], side="left")
    last = np.searchsorted(starts, [b for _, b in bounds], side="left")
    texts = [(a, b, int(s0), int(s1)) for (a, b), s0, s1 in zip(bounds, first.tolist(), last.tolist(), strict=True)]
    seen: dict[int, bool] = {}

    def hashed(a: int) -> bool:
        return text.startswith("#!", a) or _in_source(text, starts, not_code, edges, a, seen)
    slash = slash_comments(text, spans, starts)  # (per sentence: from the comment's opening line to its closing)
    return read_code(text, starts, sents.breaks, sents.seams(), texts, slash, hashed)


def layouts(texts: Sequence[str], sents: Sequence[SentenceSpans]) -> list[Layout]:
    """:func:`layout` of each of ``texts`` (``sents``: each one's own split), read in one pass over the
    texts laid end to end (:func:`~.sentences.laid_end_to_end`), each read on its own: the answers one
    call per text gives (a property test checks it). Why: :func:`layout` costs some hundred small numpy
    operations whatever the text's length (~0.4 ms a paragraph); a store's parents are a few paragraphs
    each."""
    full = [k for k, ss in enumerate(sents) if len(ss)]
    if len(full) < 2:
        return [layout(ss) for ss in sents]
    out: list[Layout | None] = [None if len(ss) else layout(ss) for ss in sents]
    joined, starts, _ = laid_end_to_end([texts[k] for k in full], [sents[k] for k in full])
    lens = np.fromiter((len(texts[k]) for k in full), np.int64, len(full))
    lay = layout(joined, (starts, starts + lens))
    o = 0
    for k in full:
        n = len(sents[k])
        g = slice(o, o + n - 1)
        block = lay.in_block[g] if lay.in_block is not None else None
        intro = lay.introduces[g] if lay.introduces is not None else None
        parts = lay.block_parts[g] if lay.block_parts is not None else None
        lists = lay.in_list[g] if lay.in_list is not None else None
        depth = lay.depth[g] if lay.depth is not None else None
        terms = lay.in_terms[g] if lay.in_terms is not None else None
        out[k] = Layout(lay.heading[o : o + n], lay.strength[g], lay.no_cut[g], lay.leans[g], lay.lead_in[g],
                        block if block is not None and block.any() else None,
                        intro if intro is not None and intro.any() else None,
                        parts if parts is not None and parts.any() else None,
                        lists if lists is not None and lists.any() else None,
                        depth if depth is not None and depth.any() else None,
                        terms if terms is not None and terms.any() else None)
        o += n + 1  # (and the separator)
    return [x for x in out if x is not None]


def _furniture(text: str, starts: np.ndarray, n: int, edges: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Per sentence, whether it is a page's furniture (:func:`~.pages.furniture_lines`, each text of
    ``edges`` read alone): the splitter keeps each furniture line a sentence, or several, of its own."""
    out = np.zeros(n, dtype=bool)
    if not paginated(text):
        return out
    ranges = [(0, len(text))] if edges is None else list(zip(edges[0].tolist(), edges[1].tolist(), strict=True))
    spans = [span for lo, hi in ranges for span in furniture_lines(text, lo, hi)]
    if spans:
        fs, fe = np.array(spans, np.int64).T
        j = np.searchsorted(fs, starts, side="right") - 1
        out = (j >= 0) & (starts < fe[np.maximum(j, 0)])
    return out


def _lift_furniture(text: str, starts: np.ndarray, ends: np.ndarray, furn: np.ndarray, heading: np.ndarray,
                    strength: np.ndarray, no_cut: np.ndarray, lead_in: np.ndarray, opens_text: np.ndarray) -> None:
    """Lift each run of furniture sentences out of the text's logic, in place: it stays with the text
    before it (no cut before it or inside it), and the gap after it reads as the gap before it did, as
    if the page had not broken: the weaker of the two breaks, a no-cut there (after a heading, a lead-in)
    carried over, and no cut where a sentence goes on over the page (no sentence end before the
    furniture, a lower-case or CJK letter after it). A heading after it still opens its section."""
    n = furn.size
    run = np.flatnonzero(np.diff(np.concatenate(([0], furn.astype(np.int8), [0]))))
    for i0, i1 in zip(run[::2].tolist(), (run[1::2] - 1).tolist(), strict=True):
        if i0 == 0 or opens_text[i0]:  # a text that opens with furniture: no gap before it to carry over (texts
            no_cut[i0 : min(i1, n - 1)] = True  # laid end to end: each its own, the separator's no gap of it)
            continue
        before = (int(strength[i0 - 1]), bool(no_cut[i0 - 1]), bool(lead_in[i0 - 1]))
        no_cut[i0 - 1 : i1] = True
        lead_in[i0 - 1 : i1] = False
        strength[i0 - 1 : i1] = np.minimum(strength[i0 - 1 : i1], LINE)
        if i1 >= n - 1 or heading[i1 + 1]:
            continue
        strength[i1] = min(before[0], int(strength[i1]))
        last = text[int(starts[i0 - 1]) : int(ends[i0 - 1])].rstrip()[-1:]
        nxt = text[int(starts[i1 + 1]) : int(starts[i1 + 1]) + 1]
        goes_on = bool(last) and last not in _PROSE_END and last not in _CLOSERS \
            and (nxt.islower() or (_is_cjk(last) and _is_cjk(nxt)))
        no_cut[i1] = before[1] or goes_on
        lead_in[i1] = before[1] and before[2] and not goes_on
        if no_cut[i1]:
            strength[i1] = min(int(strength[i1]), LINE)


def _is_cjk(ch: str) -> bool:
    """A CJK character by the project's one class table (a Chinese, Japanese or Korean sentence goes on
    over a page with no case to show it)."""
    return bool(ch) and bool(class_table()[ord(ch)] & CJK)


_BULLET_FIRST = np.array(sorted(ord(c) for c in BULLET_CHARS), dtype=np.uint32)


def _between_items(text: str, starts: np.ndarray, ends: np.ndarray, before: np.ndarray,
                   first: np.ndarray, not_code: np.ndarray, questions: np.ndarray = _EMPTY_I64
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The gaps (indices) between two items of one list: the splitter's hard break before a sentence
    that opens a list item (a bullet and a space, or a number), where the block the sentence before lies
    in opened with an item too, none of the three in code or front matter (``not_code``, per sentence:
    a front matter's ``  - a tag`` and the list after its closing line are no one list); and, per gap,
    whether a blank line lies in it (two line breaks among the last characters of the sentence before:
    a loose list). ``questions``: the sentences that open an FAQ's marked question over its answer
    (:func:`_questions`), each an item's opening as a number is: a question and its answer are one item."""
    none = np.zeros(0, np.int64)
    enclosed = _enclosed_items(text, starts, before, first)
    hard = _union(np.flatnonzero(before[1:] == BREAK_HARD) + 1, enclosed[enclosed > 0])  # (after a hard break: a few)
    if hard.size:
        hard = hard[_opens_item(text, starts, first, hard) & not_code[hard] & not_code[hard - 1]]
    hard = _union(hard, questions[questions > 0])
    if hard.size == 0:
        return none, none.astype(bool)
    # (a list's first item may follow a heading: no hard break; an item numbered in brackets opens a block as
    # one after a hard break does, and so does a marked question)
    opens = _union(_union(np.flatnonzero(before >= BREAK_PARAGRAPH), enclosed), questions)
    block = opens[np.searchsorted(opens, hard - 1, side="right") - 1]  # the sentence opening the block before
    gap = hard[(_opens_item(text, starts, first, block) | _member(block, questions)) & not_code[block]] - 1
    cp = codepoints(text)
    tail = np.minimum(np.maximum(ends[gap, None] - np.arange(1, 7), starts[gap, None]), cp.size - 1)
    return gap, (cp[tail] == 0x0A).sum(axis=1) >= 2


def _between_terms(text: str, starts: np.ndarray, terms: np.ndarray, before: np.ndarray,
                   edges: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The gaps (indices) between two items of one definition list: before a term (``terms``, sorted: a line
    over its definition indented deeper, a man page's ``-a, --all``, reStructuredText's term) where the block
    the sentence before lies in opened with a term as deeply indented, as :func:`_between_items` reads a list's
    items: a paragraph between two terms parts their lists, and the gap before the first term and after the last
    stay as they are. A term left of every paragraph that is no term is the text's heading, not an item: a
    man page's ``OPTIONS`` at the margin over its indented text reads as a term, and the page's next heading
    shall not join its last section (``edges``: of several texts laid end to end, each its own margin)."""
    if terms.size < 2:  # (most texts: no definition list, no pass over the text's line breaks)
        return _EMPTY_I64
    opening = before >= BREAK_PARAGRAPH
    paras = np.flatnonzero(opening)
    opening[terms] = True  # (a mask, not a union's sort: a definition list of 100,000 terms)
    opens = np.flatnonzero(opening)
    indent = np.zeros(starts.size, np.int64)  # (of the blocks' openers only: a line's spaces before it)
    indent[opens] = line_indents(text, starts[opens])
    prose = paras[~_member(paras, terms)]
    part = np.zeros(starts.size, np.int64) if edges is None else np.searchsorted(edges[0], starts, side="right") - 1
    if edges is not None:  # (a separator between two texts is neither's paragraph)
        prose = prose[(part[prose] >= 0) & (starts[prose] < edges[1][np.maximum(part[prose], 0)])]
    margin = body_margins(indent[prose], part[prose], int(part.max()) + 1)  # (its prose's least indent, per text)
    items = terms[indent[terms] >= margin[part[terms]]]
    later = items[items > 0]
    block = opens[np.searchsorted(opens, later - 1, side="right") - 1]
    return later[_member(block, items) & (indent[block] == indent[later])] - 1


def _opens_item(text: str, starts: np.ndarray, first: np.ndarray, idx: np.ndarray | list[int]) -> np.ndarray:
    """Whether each sentence of ``idx`` opens as a list item does: a bullet and a space, a digit (ASCII or
    full-width), a number in brackets or circled (``（一）``, ``(1)``, ``①``) or a Chinese numeral and ``、``
    (:data:`_ENCLOSED_NUMBER`) (``first``: each sentence's first character)."""
    idx = np.asarray(idx, dtype=np.int64)
    cp = codepoints(text)
    nxt = cp[np.minimum(starts[idx] + 1, cp.size - 1)]
    out = ((_member(first[idx], _BULLET_FIRST) & ((nxt == 0x20) | (nxt == 0x09)))
           | ((first[idx] >= 0x30) & (first[idx] <= 0x39)) | ((first[idx] >= 0xFF10) & (first[idx] <= 0xFF19))
           | ((first[idx] >= 0x2460) & (first[idx] <= 0x249B)))  # (a circled number: read without a match)
    read = np.flatnonzero(~out & _member(first[idx], _ENCLOSED_FIRST))
    for k in read[_may_enclose(cp, starts[idx[read]])].tolist():  # (by its marks first)
        out[k] = _ENCLOSED_NUMBER.match(text, int(starts[idx[k]])) is not None
    return out


#: a list item's number in brackets or circled, as Chinese laws and official documents number an article's
#: items (``（一）登记申请书；``, ``（1）``, ``(2)``, ``①``, ``⑴``, ``⒈``), or a Chinese numeral and its ``、``
#: (``一、事假：…``, ``二、病假：…``, the items of a rule's article line by line; one read as a heading opens a
#: section all the same), and a contract's clauses (``(a) any loss``, ``(iv) the``: a letter or a Roman numeral
#: in brackets, a space after it)
_ZH_NUMERALS = "一二三四五六七八九十"
_ITEM_NUMBER = rf"[{_ZH_NUMERALS}]{{1,3}}|[0-9]{{1,2}}|[０-９]{{1,2}}"  # (in brackets: a number, or a letter or Roman)
_ITEM_LETTER = r"[a-zA-Z]|[ivxIVX]{2,5}"
_ENCLOSED_NUMBER = re.compile(rf"[（(](?:{_ITEM_NUMBER}|{_ITEM_LETTER})[）)][ \t\u3000](?![ \t\u3000]*\d)"
                              rf"|[（(](?:{_ITEM_NUMBER})[）)]|[\u2460-\u249b]|[{_ZH_NUMERALS}]{{1,3}}、")
_ENCLOSED_FIRST = np.array(sorted({ord("（"), ord("(")} | set(range(0x2460, 0x249C)) | set(map(ord, _ZH_NUMERALS))),
                           dtype=np.uint32)
#: the brackets that close :data:`_ENCLOSED_NUMBER`'s number, and its mark after a Chinese numeral
_ENCLOSED_CLOSERS = np.array(sorted(map(ord, ")）")), np.int64)
_ENUMERATION_COMMA = 0x3001


def _may_enclose(cp: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Per offset of ``at``, whether :data:`_ENCLOSED_NUMBER` may match there, by its marks alone: a closing bracket
    two to six characters on (``(1)``, ``(iv)``, ``（十二）``) or ``、`` one to three on (``一、``). A superset of its
    matches, read on the code points where the pattern was tried at each line that opens with a bracket (a
    source file's ``(x, y)`` by the hundred)."""
    out = np.zeros(at.size, bool)
    if at.size == 0:  # (no line opens with a bracket or a numeral: six rounds of lookups on nothing, skipped)
        return out
    top = cp.size - 1
    for k in range(1, 7):
        c = cp[np.minimum(at + k, top)]
        if k >= 2:
            out |= _member(c.astype(np.int64), _ENCLOSED_CLOSERS)
        if k <= 3:
            out |= c == _ENUMERATION_COMMA
    return out


#: a list item's number alone on its line, the item's text under it: ``（2）``, ``①``, ``3.``, ``(b)``, ``二、``
_BARE_NUMBER = re.compile(rf"[ \t\u3000]*(?:[（(](?:{_ITEM_NUMBER}|{_ITEM_LETTER})[）)]|[\u2460-\u249b]"
                          r"|[0-9０-９]{1,3}[.．、)）]|[一二三四五六七八九十]{1,3}、)\s*")
_BARE_NUMBER_MAX = 16
_BARE_FIRST = np.array(sorted(set(map(ord, " \t\u3000（(0123456789０１２３４５６７８９一二三四五六七八九十"))
                              | set(range(0x2460, 0x249C))), dtype=np.uint32)


#: a law's article at a line's start, its text on the same line (``第十二条　某某主管部门…``, ``Article 5. The``)
_ARTICLE = re.compile(r"[ \t\u3000]*(?:第[0-9０-９一二三四五六七八九十百千零〇两]+条[ \t\u3000]+\S"
                      r"|Article[ \t]+\d{1,3}(?:[.:][ \t]+\S|[ \t]+[A-Z(\"“]))")  # (not "Article 5 of the GDPR")
_ARTICLE_FIRST = np.array(sorted(map(ord, " \t\u3000第A")), dtype=np.uint32)
#: the quotation marks that open (+1) and close (-1) a quotation, by code point from :data:`_QUOTE_LO`
#: (straight quotes and ``’``, an apostrophe as often as a closing mark, are left out); all lie between U+201C
#: and U+300F, so a text's CJK characters and letters are never looked up. The curly double quotes (2: ``“``
#: and ``”``) open or close by where they stand, as typography reads them: after a space, a line's start or an
#: opening bracket they open, after anything else they close (German ``„…“``, Swedish ``”…”``, English ``“…”``),
#: but ``“`` opens after a CJK character or mark too, where Chinese sets it with no space (:data:`_QUOTE_OPENS_CJK`)
_QUOTE_LO, _QUOTE_HI = 0x201C, 0x300F
_QUOTE_SIDE = np.zeros(_QUOTE_HI - _QUOTE_LO + 1, np.int64)
_QUOTE_SIDE[[ord(c) - _QUOTE_LO for c in "「『《„"]] = 1
_QUOTE_SIDE[[ord(c) - _QUOTE_LO for c in "」』》"]] = -1
_QUOTE_SIDE[[ord(c) - _QUOTE_LO for c in "“”"]] = 2
_QUOTE_AFTER_OPEN = _chars_table(" \t\n\r\u3000([{—–-‘\u2028\u2029")
#: where Chinese sets ``“``, which it only ever opens with: right after a word or a mark, no space between
#: (``呼曰：“逆贼！吾何负尔？”``, ``他说“好”“走吧”``): after CJK punctuation or a full-width form, or a closing ``”``
#: (a CJK character is told by the class table)
_QUOTE_OPENS_CJK = _chars_table("”" + "".join(map(chr, range(0x3001, 0x3040)))
                               + "".join(map(chr, range(0xFF01, 0xFF66))))


def _inside_quotes(text: str, starts: np.ndarray, ends: np.ndarray, strength: np.ndarray) -> np.ndarray:
    """The sentence breaks (gaps of ``strength`` :data:`SENTENCE`) inside a quotation opened in the same
    paragraph: more opening marks than closing ones between the paragraph's start and the gap (a quotation
    left open at a paragraph's end, as English prose leaves a speech that goes on, ends with it)."""
    out = np.zeros(strength.size, dtype=bool)
    gaps = np.flatnonzero(strength == SENTENCE)
    if gaps.size == 0 or text.isascii():  # (an ASCII text holds none of the marks: an answer at no cost)
        return out
    cp = codepoints(text)
    pos = native.table_hits(cp, _QUOTE_LO, _QUOTE_SIDE)  # (one pass in C: the numpy passes cost ~2.5 ms a 2 MB text)
    if pos is not None:
        side = _QUOTE_SIDE[cp[pos] - _QUOTE_LO]
    else:
        pos = np.flatnonzero((cp >= _QUOTE_LO) & (cp <= _QUOTE_HI))  # (two compares: a lookup of every character
        side = _QUOTE_SIDE[cp[pos] - _QUOTE_LO]  # cost ~7 ms a 2 MB English text)
        pos, side = pos[side != 0], side[side != 0]
    curly = np.flatnonzero(side == 2)
    if curly.size:
        prev = cp[np.maximum(pos[curly] - 1, 0)]
        after_open = (pos[curly] == 0) | _in_table(_QUOTE_AFTER_OPEN, prev)
        cjk = _in_table(_QUOTE_OPENS_CJK, prev) | ((class_table()[prev] & CJK) != 0)
        after_open |= (cp[pos[curly]] == 0x201C) & cjk
        side[curly] = np.where(after_open, 1, -1)
    if not (side > 0).any():
        return out
    level = np.concatenate(([0], np.cumsum(side)))  # (opened less closed before each mark, and after the last)
    n = starts.size
    mark = np.zeros(n, np.int64)
    mark[1:] = np.where(strength >= PARAGRAPH, np.arange(1, n), 0)
    para = np.maximum.accumulate(mark)  # (per sentence, the sentence its paragraph opens with)
    at, since = ends[gaps], starts[para[gaps]]
    depth = level[np.searchsorted(pos, at)] - level[np.searchsorted(pos, since)]
    out[gaps[depth > 0]] = True
    return out


def _enclosed_items(text: str, starts: np.ndarray, before: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The sentences that open a line with a number in brackets or circled, or ``一、``
    (:data:`_ENCLOSED_NUMBER`): a list item, whatever break the splitter gave the line before it (no Markdown marks it with a hard one)."""
    cand = np.flatnonzero((before >= BREAK_LINE) & _member(first, _ENCLOSED_FIRST))
    if cand.size == 0:  # (most texts: no line opens with a bracket or a numeral)
        return cand
    circled = (first[cand] >= 0x2460) & (first[cand] <= 0x249B)  # (a circled number is one: no match to read)
    read = cand[~circled]
    read = read[_may_enclose(codepoints(text), starts[read])]  # (by its marks first: a source file's brackets)
    return np.union1d(cand[circled], np.array([i for i in read.tolist()
                                               if _ENCLOSED_NUMBER.match(text, int(starts[i]))], np.int64))


#: how deep a line's indent is read, in columns (a tab to the next multiple of 8)
_INDENT_MAX = 40


def _read_terms(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_terms`' reading of each sentence without Python where the layout is plain: whether it is
    decided here, and if so whether the sentence is a term. Decided where the sentence opens with no
    whitespace past the text's first :data:`_INDENT_MAX` characters, ends with a line break and the next
    line's indent, and both indents are spaces (no tab, no other whitespace before its own); then it is
    a term exactly when the line, stripped, is at most :data:`TITLE_MAX_CHARS` long and, past every
    closing quote or bracket, does not end as prose does (``def f(x):``, ``See also.`` are no terms), its
    own line holds nothing before it, and the next line is indented deeper. The walks over the trailing
    whitespace, the closers and both indents are :func:`_walk`'s; one too long leaves the sentence to
    :func:`_terms` (Python), as do tabs and odd whitespace."""
    if starts.size == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    fast = native.read_terms(cp, starts, ends, (_IS_SPACE, _NEWLINE, _CLOSER_TABLE, _BLANK, _TAB, _prose_end_table()),
                             _INDENT_MAX, TITLE_MAX_CHARS)
    if fast is not None:  # (one pass per sentence in C, where numpy makes each walk and test a pass over all of them)
        return fast
    n = cp.size
    q, long_q, saw_nl = _walk(cp, ends - 1, starts, _IS_SPACE, _INDENT_MAX + 8, back=True, note=_NEWLINE)
    r, long_c, _ = _walk(cp, q, starts + 1, _CLOSER_TABLE, 8, back=True)  # (the line's last character past closers)
    e, long_e, tab_e = _walk(cp, ends - 1, starts, _BLANK, _INDENT_MAX + 1, back=True, note=_TAB)
    s, long_s, tab_s = _walk(cp, starts - 1, np.maximum(starts - _INDENT_MAX, 0), _BLANK, _INDENT_MAX + 1, back=True,
                             note=_TAB)
    nxt, own = ends - 1 - e, starts - 1 - s  # the next line's indent, the sentence's own (spaces)
    first, before = cp[np.minimum(starts, n - 1)], cp[np.maximum(s, 0)]
    decided = ~(long_q | long_c | long_e | tab_e | long_s | tab_s) & (cp[np.maximum(e, 0)] == 0x0A) \
        & (starts > _INDENT_MAX) & ~_is_space(first) & ((before == 0x0A) | ~_is_space(before))
    term = saw_nl & (q >= starts) & (q - starts < TITLE_MAX_CHARS) & ~_member(cp[np.maximum(r, 0)], _PROSE_END_CP)
    return decided, term & (before == 0x0A) & (nxt > own)  # (decided: both indents at most _INDENT_MAX)


@lru_cache(maxsize=1)
def _prose_end_table() -> np.ndarray:
    """:data:`_PROSE_END_CP` as a bool table by code point (what the compiled reading of terms looks up)."""
    table = np.zeros(int(_PROSE_END_CP[-1]) + 1, dtype=bool)
    table[_PROSE_END_CP] = True
    table.flags.writeable = False
    return table


def _is_space(c: np.ndarray) -> np.ndarray:
    """Whether each code point is whitespace as ``str.isspace`` reads it."""
    return _in_table(_IS_SPACE, c)


def _terms(text: str, starts: np.ndarray, ends: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Among ``cand`` (sentences that are a whole line, a single line break and spaces after them),
    the terms of a definition list: a line no longer than a title (:data:`TITLE_MAX_CHARS`), not ending
    as prose does, over a line indented deeper (``NAMELINK_ONLY`` over ``  This option causes ...``,
    ``-a, --all`` over its description)."""
    out = []
    for i in cand.tolist():
        a, b = int(starts[i]), int(ends[i])
        span = text[a:b]
        nl = span.rfind("\n")
        term = span[:nl].strip()
        if nl < 0 or not term or len(term) > TITLE_MAX_CHARS or term.rstrip(_CLOSERS)[-1:] in _PROSE_END:
            continue
        p = text.rfind("\n", max(0, a - _INDENT_MAX), a)
        if p < 0 and a > _INDENT_MAX:  # indented deeper than it is read
            continue
        own = text[p + 1 : a] + span[: len(span) - len(span.lstrip(" \t"))]  # its indent (a text's first line's: its own)
        if own.strip() == "" and len(span[nl + 1 :].expandtabs(8)) > len(own.expandtabs(8)):
            out.append(i)
    return np.asarray(out, dtype=np.int64)


#: a Markdown table's delimiter row (``|---|:---:|``, ``| --- | --- |``)
_TABLE_DELIMITER = re.compile(r"[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?[ \t]*\r?\n?")
_DELIM_CP = np.array(sorted(ord(c) for c in "-:"), dtype=np.uint32)


#: an INI or TOML section header: a name in square brackets (two for TOML's array of tables), dotted or
#: quoted parts, a comment after it
_INI_SECTION = re.compile(r"\s*(\[\[?)\s*([\w.\-\"' ]+?)\s*\]\]?\s*(?:[#;].*)?\s*")
_INI_KEY = re.compile(r"\s*[\w.\-\"']+\s*=")


def _ini_sections(text: str, starts: np.ndarray, ends: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Those of the lines ``idx`` (each the whole line, another line right under it) that are an INI or
    TOML file's section header (:data:`_INI_SECTION`) over a ``key = value`` line: a Markdown line of a
    link in brackets has no key under it."""
    keep = [i for i in idx.tolist()
            if _INI_SECTION.fullmatch(text, int(starts[i]), int(ends[i]))
            and _INI_KEY.match(text, int(starts[i + 1]), int(ends[i + 1]))]
    return np.asarray(keep, np.int64)


def _table_heads(text: str, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Among the table rows ``rows`` (sentences that are a line opening with ``|``, a line break after
    them), the header rows with a delimiter row right under them and a row under that: the gaps after
    the header and after the delimiter (indices of the header and the delimiter). Python reads only the
    lines whose first characters after the pipe may open a delimiter."""
    n = starts.size
    rows = rows[rows + 2 < n]
    if rows.size == 0:
        return rows
    cp = codepoints(text)
    nxt = starts[rows + 1]
    c1 = cp[np.minimum(nxt + 1, cp.size - 1)]
    c2 = cp[np.minimum(nxt + 2, cp.size - 1)]
    cand = rows[(cp[nxt] == 0x7C) & (_member(c1, _DELIM_CP) | ((c1 == 0x20) & _member(c2, _DELIM_CP)))]
    cand = cand[cp[starts[cand + 2]] == 0x7C]
    heads = [i for i in cand.tolist() if _TABLE_DELIMITER.fullmatch(text, int(starts[i + 1]), int(ends[i + 1]))]
    return np.asarray(sorted(heads + [i + 1 for i in heads]), dtype=np.int64)


#: a plain-text table's delimiter row: two or more runs of ``-`` or ``=`` apart by two spaces or more
_COLUMN_RULES = re.compile(r"[ \t]{0,3}(?:-{2,}|={2,})(?:[ \t]{2,}(?:-{2,}|={2,}))+[ \t]*\r?\n?")


def _column_rules(text: str, starts: np.ndarray, ends: np.ndarray, line_start: np.ndarray, rules: np.ndarray) -> np.ndarray:
    """Among the rule lines ``rules`` (sentences), the delimiter rows of a plain-text table: column runs
    (:data:`_COLUMN_RULES`) right under a whole line of text (one line break between) and over another
    (a first row of values). A rule of one run under a line is a setext underline, read elsewhere."""
    n = starts.size
    out = []
    rules = rules[(rules > 0) & (rules + 1 < n)]
    if rules.size == 0:
        return np.zeros(0, dtype=np.int64)
    # (read in Python only where a second run of rules follows the first past two blanks or more: a setext
    # or reStructuredText underline of one run, the most common rule line, has none)
    cp = codepoints(text)
    p, long_p, _ = _walk(cp, starts[rules], ends[rules], _RULE_MARKS, 2 * TITLE_MAX_CHARS)
    q, long_q, _ = _walk(cp, p, ends[rules], _BLANK, 8)
    second = (q - p >= 2) & (q < ends[rules]) & _in_table(_RULE_MARKS, cp[np.minimum(q, cp.size - 1)])
    for i in rules[long_p | long_q | second].tolist():
        head = text[int(starts[i - 1]) : int(ends[i - 1])]
        if line_start[i - 1] and head.strip() and head.count("\n") <= 1 \
                and text[int(starts[i + 1]) : int(ends[i + 1])].strip() \
                and _COLUMN_RULES.fullmatch(text, int(starts[i]), int(ends[i])):
            out.append(i)
    return np.asarray(out, dtype=np.int64)


def _deeper_under(text: str, starts: np.ndarray, seams: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """Per gap of ``gaps`` (each a line's end; ``seams[g]``: where the next line starts), whether the line after
    it is indented deeper than the line the gap ends (its own line, not its sentence's first: code joins
    ``return 127`` and ``else:`` into one sentence), in characters. Walks, no Python per line; a line longer
    than a walk reads as not deeper."""
    cp = codepoints(text)
    g = np.asarray(gaps, np.int64)
    if g.size == 0:
        return np.zeros(0, dtype=bool)
    last, _, _ = _walk(cp, seams[g] - 1, starts[g], _IS_SPACE, _INDENT_MAX + 8, back=True)  # (the colon)
    head, far, _ = _walk(cp, last, np.zeros(g.size, np.int64), _NOT_LINE_END, _LINE_WALK, back=True)
    line = np.where((head >= 0) & ~_in_table(_NOT_LINE_END, cp[np.maximum(head, 0)]), head + 1, head)
    first, _, _ = _walk(cp, line, last, _BLANK, _INDENT_MAX)
    return ~far & (starts[g + 1] - seams[g] > first - line)


#: every character but a line's end (what a walk back to a line's start passes), and how far it walks
_LINE_END_CHARS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # (as str.splitlines reads them)
_NOT_LINE_END = np.ones(0x110000, dtype=bool)
_NOT_LINE_END[[ord(c) for c in _LINE_END_CHARS]] = False
_LINE_WALK = 1024


def _line_ends_before(text: str, at: int) -> int:
    """How many line ends lie in the whitespace right before offset ``at`` (1: the line above is right above;
    2 or more: a blank line between; "\r\n" counts once)."""
    k, n = at, 0
    while k > 0 and text[k - 1].isspace():
        k -= 1
        n += text[k] in _LINE_END_CHARS and not (text[k] == "\r" and text[k + 1 : k + 2] == "\n")
    return n


def _line_opener(before: np.ndarray, j: int) -> int:
    """The sentence that opens the line sentence ``j`` lies on (``j`` itself when it opens one; -1 stays -1):
    a list item of two sentences (``2. Why is it needed? Link the ticket.``) is read by its first."""
    while j > 0 and before[j] < BREAK_LINE:
        j -= 1
    return j


def _listed_number(text: str, starts: np.ndarray, ends: np.ndarray, opens_text: np.ndarray, i: int,
                   line: str, above: int | None = None) -> bool:
    """Whether the numbered line ``line`` (sentence ``i``) has a line of the same numbering right above
    (the line's first sentence, ``above``; default the sentence before) or under it, in its text (``（1）苹果`` over ``（2）香蕉``, ``Chapter 1`` over ``Chapter 2`` in a contents
    list): a list's items, not headings, which would each be glued to the next. A number that does not go on
    from its neighbour's (``第四章　附则``, the contents' last line, over ``第一章　总则``, where the text
    begins) is no item of its list."""
    m = _NUMBERED.match(line)
    form = _number_form(m) if m else ("", "")
    value = _number_value(m) if m else None
    up = i - 1 if above is None else above
    for j, ok in ((up, i > 0 and not opens_text[i]), (i + 1, i + 1 < starts.size and not opens_text[min(i + 1, starts.size - 1)])):
        if ok:
            other = _NUMBERED.match(text[int(starts[j]) : int(ends[j])])
            if other is not None and _number_form(other) == form:
                near = _number_value(other)
                if value is None or near is None or (near < value if j < i else near > value):
                    return True
    return False


_ZH_DIGITS = {c: k for k, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}


def _zh_number(s: str) -> int | None:
    """The value of a number in Chinese numerals (``十二``, ``二十``, ``一百零五``), or of ASCII or full-width
    digits; None for anything else."""
    if s.isdecimal():
        return int(s)
    total, digit = 0, None
    for c in s:
        if c in _ZH_DIGITS:
            digit = _ZH_DIGITS[c]
        elif c in _ZH_UNITS:
            total += (1 if digit is None else digit) * _ZH_UNITS[c]
            digit = None
        else:
            return None
    return total + (digit or 0)


def _number_value(m: re.Match) -> tuple[int, ...] | None:
    """The value of a numbered line's number (a match of :data:`_NUMBERED`; a section number's parts in order,
    ``1.2`` as (1, 2)), where it is read: a list's numbers go on from one line to the next (``1.1`` over ``1.2``
    in a contents list), a contents list's to the text's."""
    if m.group("circled") is not None:
        return (ord(m.group("circled")) - 0x245F,)
    if m.group("num") is not None:
        return tuple(int(x) for x in m.group("num").split(".") if x)
    digits = re.match(r"[0-9０-９]+|[零〇一二三四五六七八九十百千两]+", m.group(0).strip().lstrip("第（("))
    value = _zh_number(digits.group(0)) if digits else None
    return None if value is None else (value,)


#: a run of title lines this long, one after another, is a list, not headings
LISTED_TITLES = 3


def _listed_titles(alone: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Per sentence, whether it is one of the title lines of ``alone`` (a title line standing alone
    between blank lines) that lie in a run of :data:`LISTED_TITLES` or more in a row, less each run's
    last where the sentence after it is longer than any title (then the last one titles that
    paragraph)."""
    n = alone.size
    if np.count_nonzero(alone) < LISTED_TITLES:
        return np.zeros(n, dtype=bool)
    lo, hi = _long_runs(alone, LISTED_TITLES)
    titles = (hi < n) & (size[np.minimum(hi, n - 1)] > TITLE_MAX_CHARS)
    return _marked(n, lo, np.where(titles, hi - 1, hi))


def _long_runs(mask: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs ``[lo, hi)`` of ``True`` elements of ``mask`` (bool) that are ``k`` or more long."""
    edge = np.diff(np.concatenate(([0], mask.view(np.int8), [0])))
    lo, hi = np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)
    keep = hi - lo >= k
    return lo[keep], hi[keep]


def _marked(n: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per element of ``n``, whether it lies in one of the ranges ``[lo, hi)`` (an empty one marks none)."""
    mark = np.zeros(n + 1, np.int64)
    np.add.at(mark, lo, 1)
    np.add.at(mark, hi, -1)
    return np.cumsum(mark[:-1]) > 0


#: a speaker's name on a line of its own is at most this long (characters, stripped: "FIRST GRAVEDIGGER.")
LABEL_MAX_CHARS = 32
#: ... and at most this many words ("KING HENRY V.", "JOHN (V.O.)")
LABEL_MAX_WORDS = 4
#: a turn of a conversation opens its line with a speaker's label: a name, a colon and a space, or a
#: full-width colon ("Professor E: So.", "Grad G: ...", "张三：好的")
_TURN = re.compile(r"[ \t]*[^\s:：][^:：\n]{0," + str(LABEL_MAX_CHARS - 1) + r"}(?::[ \t]|：)")


def _line_paragraphs(text: str, starts: np.ndarray, ends: np.ndarray, brk: np.ndarray, strength: np.ndarray,
                     held: np.ndarray, items: np.ndarray, one_text: np.ndarray,
                     edges: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """The gaps that are a paragraph's break in a text laid out one paragraph per line: a single line break
    (``brk``) read as a line's (``strength``), none ``held`` (a heading's or a lead-in's bond, code) nor
    between a list's ``items``, after a sentence's end (``。``, ``.``, ``?``..., closers past), in a text that
    holds no blank line and whose lines hold two sentences or more on average (each text on its own,
    ``edges``: a paragraph is more than a sentence; a text of one sentence per line, subtitles, verse, a list
    of units, is laid out in sentences), where neither line is a turn of a conversation
    (:data:`_TURN`: a transcript's turns are lines, not paragraphs, and one turn of a few words shares a
    chunk with the next). Why: the issue's rule that no cut falls inside a paragraph that fits reads the
    author's paragraphs, and there a paragraph's end is a line's."""
    gap = np.flatnonzero((brk == BREAK_LINE) & (strength == LINE) & ~held & one_text)
    if gap.size == 0:
        return gap
    if items.size:
        gap = gap[~_member(gap, np.sort(items))]
    # (each text on its own: none that holds a blank line, nor one laid out a sentence per line)
    owner = np.zeros(starts.size, np.int64) if edges is None else np.searchsorted(edges[0], starts, side="right") - 1
    owner = np.maximum(owner, 0)
    texts = int(owner[-1]) + 1
    inside = np.ones(starts.size, dtype=bool) if edges is None else ends <= edges[1][owner]  # (not a separator)
    blank = np.bincount(owner[:-1][(brk == BREAK_PARAGRAPH) & one_text], minlength=texts)
    lines = np.bincount(owner[:-1][(brk >= BREAK_LINE) & one_text], minlength=texts) + 1
    sentences = np.bincount(owner[inside], minlength=texts)
    laid = (blank == 0) & (sentences >= 2 * lines)
    gap = gap[laid[owner[gap]]]
    cp = codepoints(text)
    gap = gap[_member(cp[_last_at(text, starts, ends, gap, closers=True)], _PROSE_END_CP)]
    if gap.size == 0:
        return gap
    # each line's first sentence (a line may hold several); a turn is read only where a colon opens its line
    line = np.zeros(starts.size, np.int64)
    line[1:] = np.where(brk >= BREAK_LINE, np.arange(1, starts.size), 0)
    np.maximum.accumulate(line, out=line)
    opens = np.unique(np.concatenate((line[gap], gap + 1)))
    colon = np.flatnonzero((cp == 0x3A) | (cp == 0xFF1A))
    if colon.size == 0:
        return gap
    k = np.minimum(np.searchsorted(colon, starts[opens]), colon.size - 1)
    near = (colon[k] >= starts[opens]) & (colon[k] < starts[opens] + LABEL_MAX_CHARS + 4)
    turns = [i for i in opens[near].tolist() if _TURN.match(text, int(starts[i]))]
    if turns:
        t = np.asarray(turns, np.int64)
        gap = gap[~_member(line[gap], t) & ~_member(gap + 1, t)]
    return gap


def _division_line(text: str, starts: np.ndarray, ends: np.ndarray, after: np.ndarray, i: int) -> int | None:
    """The last sentence of the line that sentence ``i`` opens when that line is a division marker
    and its title ("Chapter IV. In Which Pooh Loses a Tail", "SCENE II. Elsinore. A room of state in
    the Castle."), else None. The line stands alone between blank lines, with text after it, is at
    most :data:`TITLE_MAX_CHARS` long and holds at most three sentences; it opens with a marker
    (:data:`_MARKER`, or a Roman number) whose number ends with a full stop or a colon, and the rest
    opens as a title does (a capital, or a letter of a script without case). A rest that ends as prose
    does is a title only in capitals of every longer word (:func:`_title_case`: "A MYSTERIOUS
    DISAPPEARANCE.") or after a play's ACT or SCENE, whose line names the place ("Elsinore. A platform
    before the Castle."): "Article 5. This Regulation shall enter into force." is the article itself."""
    alone = _line_alone(text, starts, ends, after, i)
    if alone is None:
        return None
    j, line = alone
    m = _MARKER.match(line) or _ROMAN_LINE.match(line)
    if m is None or len(line) > TITLE_MAX_CHARS or m.group().rstrip()[-1:] not in (".", ":"):
        return None
    rest = line[m.end():]
    first = next((ch for ch in rest if ch.isalpha()), "")
    if not first or first.islower() or rest[0] in "-*+•|>=`~(":
        return None
    if rest.rstrip(_CLOSERS)[-1:] in _PROSE_END and not _title_case(rest) \
            and line.split(None, 1)[0].lower() not in ("act", "scene"):
        return None
    return j


#: a screenplay's scene heading: interior or exterior (``INT.``, ``EXT.``, ``INT./EXT.``, ``EXT/INT.``), then the
#: place and the time in capitals (``INT. KITCHEN - NIGHT``; no lower-case letter)
_SCENE_HEADING = re.compile(r"(?:INT|EXT)(?:\.?/(?:INT|EXT))?\.[ \t]+[^a-z\r\n]*[A-Z][^a-z\r\n]*")


def _scene_heading(text: str, starts: np.ndarray, ends: np.ndarray, after: np.ndarray, i: int) -> int | None:
    """The last sentence of the line that sentence ``i`` opens when that line is a screenplay's scene heading
    (:data:`_SCENE_HEADING`) standing alone between blank lines, with text after it, else None."""
    alone = _line_alone(text, starts, ends, after, i)
    if alone is None:
        return None
    j, line = alone
    return j if len(line) <= TITLE_MAX_CHARS and _SCENE_HEADING.fullmatch(line) else None


def _line_alone(text: str, starts: np.ndarray, ends: np.ndarray, after: np.ndarray, i: int
                ) -> tuple[int, str] | None:
    """The line that sentence ``i`` opens, when it holds at most three sentences and stands over a blank line
    with text after it: its last sentence and its text (stripped); else None."""
    n = after.size
    j = i
    while j < n - 1 and j - i < 2 and after[j] == BREAK_NONE:
        j += 1
    if after[j] < BREAK_PARAGRAPH or j >= n - 1 or not text[int(starts[j + 1]) : int(ends[j + 1])].strip():
        return None
    return j, text[int(starts[i]) : int(ends[j])].strip()


#: a subtitle cue's timing line is at most this long (with WebVTT's cue settings after the times)
CUE_MAX_CHARS = 80
_CUE_TIME = re.compile(r"\s*(?:\d{1,2}:)?\d{2}:\d{2}[,.]\d{3}[ \t]+-->[ \t]+(?:\d{1,2}:)?\d{2}:\d{2}[,.]\d{3}(?:[ \t]+\S.*)?\s*")


def _cue_timings(text: str, starts: np.ndarray, ends: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """The lines among ``cand`` that time a subtitle cue (``00:00:04,500 --> 00:00:08,000`` in SRT,
    ``00:04.500 --> 00:08.000 line:90%`` in WebVTT): with the cue's number or name above them they
    head the cue's text, so none may end a chunk (a transcript of a lecture or a film, laid out as
    subtitles). ``cand``: whole lines over one line break that open with a digit (the caller's filter),
    the few of them in prose."""
    if cand.size == 0:
        return cand
    # only a line whose second or third character is a colon is read (``00:04``, ``1:02:03``): a table's, a
    # log's or a list's lines that open with a digit are not
    cp = codepoints(text)
    s = starts[cand]
    cand = cand[(cp[np.minimum(s + 1, cp.size - 1)] == 0x3A) | (cp[np.minimum(s + 2, cp.size - 1)] == 0x3A)]
    return np.asarray([i for i in cand.tolist() if _CUE_TIME.fullmatch(text, int(starts[i]), int(ends[i]))], np.int64)


_ANSWER = re.compile(r"[ \t]*(?:A|Ans|Answer|ANSWER|答|回答)[ \t]*[:：.．][ \t]*\S")
_QUESTION = re.compile(r"[ \t]*(?:Q|Question|QUESTION|问|提问)[ \t]*[:：.．][ \t]*\S")
_ANSWER_NEXT = np.array(sorted(ord(c) for c in ":：.．nN"), dtype=np.uint32)


#: a mail header's field at a line's start (``From: Tom <tom@x>``, ``Subject: Quote``, ``发件人：张三``)
_MAIL_FIELDS = ("From", "To", "Cc", "Bcc", "Date", "Subject", "Sent", "Reply-To", "发件人", "收件人", "抄送", "日期", "主题",
                "发送时间")
_MAIL_HEADER = re.compile(rf"[ \t]*(?:{'|'.join(_MAIL_FIELDS)})[ \t]*[:：]", re.IGNORECASE)
_MAIL_HEADER_FIRST = np.array(sorted({ord(c) for w in _MAIL_FIELDS for c in (w[0], w[0].lower())} | {0x20, 0x09}),
                              dtype=np.uint32)


def _folded(c: np.ndarray) -> np.ndarray:
    """Code points as :data:`_MAIL_HEADER` compares them to a field's first two letters, its case ignored (int64):
    an ASCII capital as its small letter, the long s "ſ" as "s" (the one other character that matches one of
    those letters so)."""
    c = c.astype(np.int64)
    return np.where((c >= 0x41) & (c <= 0x5A), c | 0x20, np.where(c == 0x17F, 0x73, c))


#: each field's first two characters, folded (:func:`_folded`), as one key: what a header line opens with past
#: its indent
_MAIL_FIELD_PAIRS = np.unique([(ord(w[0].lower()) << 21) | ord(w[1].lower()) for w in _MAIL_FIELDS]).astype(np.int64)
#: each field, folded (:func:`_folded`), as a row of code points (0 past its end), with its length; a row per
#: first two characters (no two fields share them: :data:`_MAIL_FIELD_PAIRS`' order)
_MAIL_FIELD_ROWS = np.zeros((len(_MAIL_FIELDS), max(map(len, _MAIL_FIELDS))), np.int64)
_MAIL_FIELD_LENS = np.zeros(len(_MAIL_FIELDS), np.int64)
for _w in _MAIL_FIELDS:
    _k = int(np.searchsorted(_MAIL_FIELD_PAIRS, (ord(_w[0].lower()) << 21) | ord(_w[1].lower())))
    _MAIL_FIELD_ROWS[_k, : len(_w)] = [ord(c) for c in _w.lower()]
    _MAIL_FIELD_LENS[_k] = len(_w)
assert _MAIL_FIELD_PAIRS.size == len(_MAIL_FIELDS) and _MAIL_FIELD_LENS.all()  # (one field per pair)
del _w, _k
#: what may follow a field's name in :data:`_MAIL_HEADER`: a blank or its colon
_MAIL_AFTER_FIELD = np.array(sorted(map(ord, " \t:：")), np.int64)
#: a title framed by runs of one mark, two or more each side (``== History ==``, ``--- Day changed ... ---``)
_FRAMED_TITLE = re.compile(r"(?P<mark>(?P<m>[-=])(?P=m)+)[ \t]*[^\W\d_][^\r\n]*?[^-=\s][ \t]*(?P=mark)[ \t]*\s*")
#: the lines that open a log and a day in irssi's logs (``--- Log opened Tue Mar 12 09:00:01 2024``, ``--- Day changed
#: Wed Mar 13 2024``); its ``--- Log closed`` closes what is over it
_LOG_OPENS = re.compile(r"---[ \t]+(?:Log opened|Day changed)[ \t]+\S[^\r\n]*\s*")
#: org-mode: a keyword line ("#+TITLE: ...", "#+BEGIN_SRC"), a heading ("* Kitchen", "** TODO Tiles"), a table's
#: formula line
_ORG_KEYWORD = re.compile(r"(?m)^[ \t]*#\+[A-Za-z_]+:?")
_ORG_HEADING = re.compile(r"\*+[ \t]+\S")
_ORG_TBLFM = re.compile(r"[ \t]*#\+TBLFM:", re.IGNORECASE)
#: Emacs's mode line: what lies between its "-*-" marks (on a text's first line, or its second under a "#!" line)
_MODE_LINE = re.compile(r"-\*-(.*?)-\*-")


def _one_line_apart(text: str, a: int, b: int) -> bool:
    """Whether the line that opens at ``a`` (one line of text) lies right over the one that opens at ``b``: no blank
    line between them."""
    gap = text[a:b]
    tail = gap[len(gap.rstrip()) :]
    return tail.count("\n") + tail.count("\r") - tail.count("\r\n") == 1


def outline_mode(text: str) -> bool:
    """Whether ``text`` names Emacs's outline or org mode in its mode line (``-*- outline -*-``, ``-*- mode: org;
    coding: utf-8 -*-``): its author wrote it as an outline, whose lines of stars are its headings."""
    head = text[:400].split("\n", 2)
    line = head[1] if head[0].startswith("#!") and len(head) > 1 else head[0]
    m = _MODE_LINE.search(line)
    if m is None:
        return False
    body = m.group(1).strip().lower()
    if ":" not in body:
        return body in ("outline", "org")
    pairs = (part.split(":", 1) for part in body.split(";") if ":" in part)
    return any(k.strip() == "mode" and v.strip() in ("outline", "org") for k, v in pairs)
#: a clock time, with a 12-hour clock's am/pm after it where there is one ("09:14", "9:14:22", "9:14 AM", "9:14\u202fpm")
_CLOCK = r"\d{1,2}:\d{2}(?::\d{2})?(?:[ \t\u202f]?[AaPp]\.?[Mm]\.?)?"
#: a log record's time at its line's start: an ISO date and a time ("2024-05-03T14:02:00.929", "2024/05/03 14:02"),
#: a time in brackets ("[10:27]", "[2024-05-03 14:02:00]"), a chat export's date and time before the sender
#: (WhatsApp's "[12/03/24, 09:14:22] Ann: ..." and "12/03/2024, 9:14 am - Ann: ..."), or a time before an IRC
#: log's nick or event (irssi's "09:14 <carol> ...", "09:14  * carol waves", "09:14 -!- eve has joined")
_LOG_TIME = re.compile(r"\[?(?:\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}|\d{1,2}:\d{2}(?::\d{2})?\]"
                       rf"|\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2,4}},?[ \t]{_CLOCK}(?:\][ \t]|[ \t]+[-–][ \t])"
                       r"|\d{1,2}:\d{2}(?::\d{2})?[ \t]+(?:<[^\s<>]{1,32}>|\*[ \t]|-!-[ \t]))")
#: the marks :data:`_LOG_TIME` reads right after a time's or a date's first one or two digits, and after a date's
#: four digits of its year
_LOG_TIME_SEPARATORS = np.array(sorted(map(ord, ":/.")), np.int64)
_LOG_DATE_SEPARATORS = np.array(sorted(map(ord, "-/")), np.int64)


def _may_log_time(cp: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per offset of ``starts``, whether :data:`_LOG_TIME` may match there, by its marks alone (past a ``[``): a
    ``:``, ``/`` or ``.`` one or two characters on (a time's ``9:14``, a date's ``12/03``), or a ``-`` or ``/`` four
    on (``2024-05-03``). A superset of its matches, whatever the digits are (``\\d`` reads any script's), read on
    the code points where the pattern was tried at each line that opens with a digit (a source file's thousands:
    ``0.5 * x``, ``1, 2, 3``)."""
    if starts.size == 0:  # (no line opens with a digit: three lookups on nothing, skipped)
        return np.zeros(0, bool)
    top = cp.size - 1
    at = starts + (cp[np.minimum(starts, top)] == 0x5B)
    out = np.zeros(starts.size, bool)
    for k, marks in ((1, _LOG_TIME_SEPARATORS), (2, _LOG_TIME_SEPARATORS), (4, _LOG_DATE_SEPARATORS)):
        out |= _member(cp[np.minimum(at + k, top)].astype(np.int64), marks)
    return out


#: a chat message's date before its time on a header line: a numeric date in either order, or a day named
#: relative to today (Discord's "Today at", WeChat's "昨天")
_CHAT_DATE = r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|(?:Today|Yesterday)[ \t]+at|今天|昨天)"
#: a chat export's message header on a line of its own, over the message: the sender's name, then the time, a
#: date before it or not, bracketed or not, nothing else (WeChat's "张三 2024-03-12 09:14", Telegram's "Ann,
#: [12.03.24 09:14]", Slack's "Ann  9:14 AM", Discord's "Ann — Today at 9:14 AM"); the name opens with no
#: digit nor bracket and holds no colon (a turn's label) nor bracket; or the time first and the name after it (a
#: meeting transcript's "00:01:02 Jess Smith", "[00:01:02] Jess Smith"), the name opening with a letter; a colon
#: may end the line (Rev's "Jess Smith (00:03):")
_STAMP = rf"(?:{_CHAT_DATE}[ \t,T]+)?{_CLOCK}"
_SENDER = rf"[^\r\n\[\]<>:：]{{0,{LABEL_MAX_CHARS - 1}}}?"
_MESSAGE_HEADER = re.compile(rf"[ \t]*(?:(?P<name>[^\s\d\[\]<>:：]{_SENDER})[ \t]*[,，—–-]?[ \t]*"
                             rf"(?:\[{_STAMP}\]|\({_STAMP}\)|{_STAMP})"
                             rf"|\[?{_STAMP}\]?[ \t]+(?P<after>[^\W\d_]{_SENDER}))[ \t]*[:：]?\s*")
#: the most a message header's stamp adds to the name's length ("[12.03.2024 09:14:22]", "— Yesterday at 12:34 PM")
_STAMP_MAX_CHARS = 28
#: how far from a header line's start the clock's colon lies, the time first ("9:14" to "[2024-03-12 09:14]")
_CLOCK_NEAR = 16
_AMPM_CP = np.array(sorted(map(ord, "Mm")), dtype=np.uint32)
_STAMP_CLOSE_CP = np.array(sorted(map(ord, "])")), dtype=np.uint32)
_STAMP_SPACE_CP = np.array(sorted(map(ord, " \t\u202f\r")), dtype=np.uint32)
_AM_PM_CP = np.array(sorted(map(ord, "ap")), dtype=np.uint32)
#: a header line's last character, and its first where the time opens it (tables by code point)
_STAMP_END = np.zeros(0x110000, dtype=bool)
_STAMP_END[list(map(ord, "0123456789])Mm:：\t\r \u202f"))] = True
_STAMP_OPEN = np.zeros(0x110000, dtype=bool)
_STAMP_OPEN[list(map(ord, "0123456789["))] = True
_DIGIT_COLON_CP = np.array(sorted(map(ord, "0123456789:")), dtype=np.uint32)
#: a text is a log where this many of its lines open with a time, or more
_LOG_RECORDS_MIN = 3
#: a poem's byline: its author's name (two to four Han characters, after a dynasty's name and a dot or in
#: brackets: "李白", "唐·李白", "[宋] 苏轼"; or "by" and a name: a name alone reads as a list's item)
_BYLINE = re.compile(r"[ \t\u3000]*(?:(?:[\[［(（【〔][\u4e00-\u9fff]{1,2}[\]］)）】〕]|[\u4e00-\u9fff]{1,2}[·・•‧])[ \t\u3000]*)?"
                     r"[\u4e00-\u9fff]{2,4}[ \t\u3000]*\s*"
                     r"|[ \t]*(?:by|By|BY)[ \t]+[A-Z][\w.'’-]*(?:[ \t]+[A-Z][\w.'’-]*){0,3}[ \t]*\s*")
_BYLINE_FIRST = np.array(sorted(map(ord, "[［(（【〔bB")), dtype=np.uint32)
#: the marks a line of Chinese verse ends with (a list of names or places has none)
_VERSE_END = "，。？！；、"
#: the fewest lines of verse under a poem's title and byline
VERSE_LINES_MIN = 2


def _verse_under(text: str, starts: np.ndarray, ends: np.ndarray, after: np.ndarray, i: int) -> bool:
    """Whether lines of verse open at sentence ``i``: two lines or more of twice a title's length at most, one under
    the other (Chinese verse's ending with its marks: "，", "。"), none a mail's header field or a quote (a mail's sign-off over a blank line reads as a title and a
    byline: "Thanks" over "Priya Sharma")."""
    lines = 0
    while i < starts.size and lines < VERSE_LINES_MIN:
        line = text[int(starts[i]) : int(ends[i])]
        if not line.strip() or len(line.strip()) > 2 * TITLE_MAX_CHARS or line.lstrip()[:1] == ">" \
                or _MAIL_HEADER.match(line) or (_is_cjk(line.lstrip()[0]) and line.rstrip()[-1] not in _VERSE_END):
            return False
        while after[i] < BREAK_LINE and i + 1 < starts.size:  # (the line's further sentences)
            i += 1
        lines += 1
        if lines < VERSE_LINES_MIN and after[i] != BREAK_LINE:
            return False
        i += 1
    return lines >= VERSE_LINES_MIN


#: a Debian changelog's entry line (its package, version, distributions and urgency) and its trailer (the
#: maintainer's name, mail and the date, after " -- ")
_DEB_ENTRY = re.compile(r"(?m)^[a-z0-9][a-z0-9+.\-]* \([^()\s]+\)(?: [\w+/.\-]+)+; urgency=\w+[^\n]*")
_DEB_TRAILER = re.compile(r"(?m)^ -- [^\n<]*<[^>\n]*>[ \t]+\S")
#: a quoted blank line is at most this long (its marks, spaces and line end)
_QUOTED_BLANK_MAX = 8


def _may_frame(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Which sentences of ``idx`` (each opening with ``-`` or ``=``) may be a framed title or a log's opening line
    (:data:`_FRAMED_TITLE`, :data:`_LOG_OPENS`): both open with marks and blanks, then a letter, so a line of marks
    alone (a rule, a docstring's underline: a source file's thousands) is neither. A walk, no match per line: a
    superset of what the two patterns accept."""
    if idx.size == 0:
        return np.zeros(0, bool)
    past, _, _ = _walk(cp, starts[idx], ends[idx], _FRAME_CHARS, int((ends[idx] - starts[idx]).max()))
    return (past < ends[idx]) & ~_in_table(_IS_SPACE, cp[np.minimum(past, cp.size - 1)])


def _mail_headers(text: str, starts: np.ndarray, ends: np.ndarray, after: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """The last line of each mail header among the whole lines ``cand``: two header fields or more
    (:data:`_MAIL_HEADER`), one per line, the last over a blank line and the message under it. The header
    goes with its message: a chunk never ends with a message's From, To and Subject."""
    out: list[int] = []
    if cand.size < 2:  # (two fields or more)
        return np.asarray(out, np.int64)
    # (matched only where a field's first two letters follow the indent, and a colon may: a line that is no
    # field breaks the run as a line that is no candidate does)
    cp = codepoints(text)
    s, e = starts[cand], ends[cand]
    at, _, _ = _walk(cp, s, e, _BLANK, int((e - s).max()))
    top = cp.size - 1
    pair = (_folded(cp[np.minimum(at, top)]) << 21) | _folded(cp[np.minimum(at + 1, top)])
    keep = np.flatnonzero((at + 2 < e) & _member(pair, _MAIL_FIELD_PAIRS))
    # (and where the whole field's name follows, then a blank or the colon: "return x" and "self.data" open as
    # "Reply-To" and "Sent" do, and a source file has them by the thousand; a match needs the name)
    field = np.searchsorted(_MAIL_FIELD_PAIRS, pair[keep])
    name_at, length = at[keep], _MAIL_FIELD_LENS[field]
    width = np.arange(_MAIL_FIELD_ROWS.shape[1])
    read = _folded(cp[np.minimum(name_at[:, None] + width, top)])
    named = ((read == _MAIL_FIELD_ROWS[field]) | (width >= length[:, None])).all(axis=1)
    past = name_at + length
    named &= (past < e[keep]) & _member(cp[np.minimum(past, top)].astype(np.int64), _MAIL_AFTER_FIELD)
    keep = keep[named]
    run = 0
    prev = -2
    match = _MAIL_HEADER.match
    for i, a, b in zip(cand[keep].tolist(), s[keep].tolist(), e[keep].tolist(), strict=True):
        if not match(text, a, b):
            continue
        run = run + 1 if prev == i - 1 and after[prev] == BREAK_LINE else 1
        prev = i
        if run >= 2 and after[i] >= BREAK_PARAGRAPH and i + 1 < after.size:
            out.append(i)
    return np.asarray(out, np.int64)


def _questions(text: str, starts: np.ndarray, cand: np.ndarray, line_start: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """The last sentence of each question line marked as one (``Q:``, ``Question:``, ``问：``) right
    above a line that answers it (``A:``, ``Answer:``, ``答：``; one line break or a blank line between),
    among the line-opening sentences ``cand`` (those that open with ``A``, ``答`` or ``回``: the caller's
    filter): the gap between a question and its answer is no place to cut (an FAQ, an interview, a
    knowledge base's pairs); and the first sentence of each such question line (where the pair opens: an
    item of the FAQ, :func:`_between_items`)."""
    if cand.size == 0:
        return cand, cand
    cp = codepoints(text)
    cand = cand[cand > 0]
    # "A:", "A.", "Ans", "ANSWER", "答", "回答" (most lines of prose that open with "A" go on with a space)
    c1 = cp[np.minimum(starts[cand] + 1, cp.size - 1)]
    cand = cand[(cp[starts[cand]] != 0x41) | _member(c1, _ANSWER_NEXT)]
    out, asked = [], []
    opens = np.flatnonzero(line_start)
    for i in cand.tolist():
        if not _ANSWER.match(text, int(starts[i]), int(starts[i]) + 16):
            continue
        q = int(opens[np.searchsorted(opens, i) - 1])  # the line above: its first sentence
        if _QUESTION.match(text, int(starts[q]), int(starts[q]) + 16):
            out.append(i - 1)
            asked.append(q)
    return np.asarray(out, np.int64), np.asarray(asked, np.int64)


def _speaker_labels(text: str, starts: np.ndarray, ends: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """The lines among ``cand`` (whole lines after a blank line and over one line break that open with a
    capital: the caller's filter) that name who
    speaks next, as a play or a screenplay lays out its turns ("BARNARDO." over "Who's there?",
    "FIRST CLOWN.", "JOHN (V.O.)"): at most :data:`LABEL_MAX_WORDS` words in capitals, at least two
    letters, nothing in lower case, a full stop or a colon at the end allowed. A fixed reading of the
    layout, like a lead-in's colon: the name introduces the speech, so the two stay together."""
    if cand.size == 0:
        return cand
    cp = codepoints(text)
    c1 = cp[np.minimum(starts[cand] + 1, cp.size - 1)]
    cand = cand[~((c1 >= 0x61) & (c1 <= 0x7A))]  # no lower-case ASCII letter second (most short lines of prose)
    out = []
    for i in cand.tolist():
        s = text[int(starts[i]) : int(ends[i])].strip()
        core = s.rstrip(".:：")
        if len(s) > LABEL_MAX_CHARS or len(core.split()) > LABEL_MAX_WORDS:
            continue
        letters = [ch for ch in core if ch.isalpha()]
        if len(letters) >= 2 and all(ch.isupper() for ch in letters if ch.isupper() or ch.islower()) \
                and any(ch.isupper() for ch in letters) and not any(ch.isdigit() for ch in core):
            out.append(i)
    return np.asarray(out, np.int64)


_DASH_CP = np.array(sorted(map(ord, "-–—")), dtype=np.uint32)


def _past_dashes(cp: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Each position in ``at`` moved back past one or two dashes to the comma or colon before them, where one
    stands there (an old letter's salutation, "MY DEAR FRIEND,--", "Sir,—", or lead-in, "as follows:—", closes
    its mark so), else left where it is."""
    one = _member(cp[at], _DASH_CP)
    if not one.any():
        return at
    back = np.where(_member(cp[np.maximum(at - 1, 0)], _DASH_CP), at - 2, at - 1)
    ok = one & (back >= 0) & _member(cp[np.maximum(back, 0)], _LEAD_IN_CP)
    return np.where(ok, back, at)


#: a letter's closing on a line of its own over the signature: "Yours ever,", "Yours very truly,", "Your
#: affectionate brother,", "Sincerely,", "Faithfully yours,", "With kind regards,", "Best wishes,", "此致"
#: (a quotation's opening mark before it where the letter is quoted in a novel)
_VALEDICTION = re.compile(r"[ \t\u3000]*[\"“'‘]?(?:(?:(?:Yours|Your|Ever yours|Believe me)\b[^\n,.;:!?]{0,30}"
                          r"|(?:Very |Most |Yours )?(?:Sincerely|Faithfully|Truly|Respectfully|Affectionately|Cordially)(?: yours)?"
                          r"|(?:With )?(?:(?:Best|Kind|Kindest|Warm|Warmest|Many)[ \t]+)?(?:regards|wishes)"
                          r"|With (?:love|best wishes))[,，]|此致)[ \t\u3000]*\s*", re.IGNORECASE)
_VALEDICTION_MAX = 48
_VALEDICTION_LAST = np.array(sorted(map(ord, ",，致")), dtype=np.uint32)
_VALEDICTION_WORDS = ("Yours", "Your", "Ever", "Believe", "Very", "Most", "Sincerely", "Faithfully", "Truly",
                      "Respectfully", "Affectionately", "Cordially", "With", "Best", "Kind", "Kindest", "Warm", "Warmest",
                      "Many", "regards", "wishes", "此致")
_VALEDICTION_PAIRS = np.unique([(ord(w[0].lower()) << 21) | ord(w[1].lower()) for w in _VALEDICTION_WORDS]).astype(np.int64)
_QUOTE_OPEN_CP = np.array(sorted(map(ord, "\"“'‘")), dtype=np.uint32)
_VALEDICTION_FIRST = np.array(sorted(set(map(ord, "\"“'‘YySsFfTtRrAaCcWwBbKkMmEeVv此"))), dtype=np.uint32)


def _in_logs(idx: np.ndarray, starts: np.ndarray, edges: tuple[np.ndarray, np.ndarray] | None, shift: int
             ) -> np.ndarray:
    """Those of ``idx`` (sentences, or gaps with ``shift`` 1: the sentence after each) that lie in a text holding
    :data:`_LOG_RECORDS_MIN` of them or more, each text laid end to end (``edges``) counted on its own."""
    if idx.size < _LOG_RECORDS_MIN:
        return _EMPTY_I64
    if edges is None:
        return idx
    owner = np.searchsorted(edges[0], starts[idx + shift], side="right") - 1
    return idx[np.bincount(owner - owner.min())[owner - owner.min()] >= _LOG_RECORDS_MIN]


def _message_headers(text: str, cp: np.ndarray, first: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                     seams: np.ndarray, edges: tuple[np.ndarray, np.ndarray] | None, cand: np.ndarray) -> np.ndarray:
    """The lines among ``cand`` (whole lines over one line break: the caller's filter) that head a chat
    export's message (:data:`_MESSAGE_HEADER`: a sender's name and a time alone on the line, the message
    under it), where the text holds :data:`_LOG_RECORDS_MIN` of them or more (a chat's log, not a line of
    prose that names a time; each text laid end to end on its own, ``edges``). A fixed reading of the export's
    layout: the header opens the message as a log's stamp opens its record, so the two stay together and the
    message is the unit a cut keeps whole. ``cp``: the text's code points; ``first``: each sentence's first;
    ``seams``: the sentences' seams (each line's end: the start of the line after it)."""
    if cand.size < _LOG_RECORDS_MIN:
        return _EMPTY_I64
    fast = native.stamps(cp, starts[cand], seams[cand], _stamp_bits(), _CLOCK_NEAR)
    if fast is not None:  # (in C: the candidates' own characters, one line at a time)
        if np.count_nonzero(fast & 1) < _LOG_RECORDS_MIN:
            return _EMPTY_I64
        cand = cand[(fast & 2) != 0]
    else:
        cand = _stamp_lines(cp, first, starts, seams, cand)
    out = [i for i in cand.tolist() if (m := _MESSAGE_HEADER.fullmatch(text, int(starts[i]), int(ends[i])))
           and len((m.group("name") or m.group("after")).split()) <= LABEL_MAX_WORDS]
    # (a header has its message under it: a line under which another such line or a log's stamped line opens is
    # a record of its own, a log's "2024-05-03 14:02:00 INFO Server started")
    heads = set(out)
    out = [i for i in out if i + 1 not in heads and _LOG_TIME.match(text, int(starts[i + 1]), int(ends[i + 1])) is None]
    return _in_logs(np.asarray(out, np.int64), starts, edges, 0)


@lru_cache(maxsize=1)
def _stamp_bits() -> np.ndarray:
    """The sets :func:`_stamp_lines` reads, as bits of one uint16 table by code point (the compiled pass's:
    :func:`logichunk.native.stamps`, its ``LC_ST_*`` in this order)."""
    sets = (np.flatnonzero(_STAMP_END), np.flatnonzero(_STAMP_OPEN), _COLON_CP, _STAMP_CLOSE_CP, _AMPM_CP, _AM_PM_CP,
            _STAMP_SPACE_CP, _DIGIT_COLON_CP, np.flatnonzero(_BLANK))
    bits = np.zeros(max(int(x.max()) for x in sets) + 1, np.uint16)
    for k, members in enumerate(sets):
        bits[members.astype(np.int64)] |= np.uint16(1 << k)
    bits.flags.writeable = False
    return bits


def _stamp_lines(cp: np.ndarray, first: np.ndarray, starts: np.ndarray, seams: np.ndarray, cand: np.ndarray
                 ) -> np.ndarray:
    """The lines among ``cand`` (three or more) that :func:`_message_headers` reads with its regular expression: a
    clock's colon near the line's end or near its start (none where fewer than :data:`_LOG_RECORDS_MIN` lines pass
    the first step). The numpy passes of :func:`logichunk.native.stamps` (its twin: the same lines)."""
    # (read in Python only where a clock's colon, a digit on each side, ends the line, past "AM", "]", ")" or "):",
    # or lies near its start, a digit or "[" opening it: a few lines of prose or code)
    def digit(c: np.ndarray) -> np.ndarray:
        return (c >= 0x30) & (c <= 0x39)
    # (first by the line's last two characters, before its break: two digits, a digit and "]" or ")", ")" and a
    # colon, "AM"; or a blank or "\r" there, read further below; and by its first two, the time first)
    # (each step reads only the lines the one before kept: a source file's lines end with ")" or ":" by the thousand)
    end = seams[cand] - 2
    keep = _STAMP_END[cp[end]] | _STAMP_OPEN[first[cand]]  # (by value, no bounds to check: a code point is < 0x110000)
    cand, end = cand[keep], end[keep]
    last = cp[end]
    opens = digit(first[cand]) | (first[cand] == 0x5B)
    prev = cp[np.maximum(end - 1, 0)]
    rev = _member(last, _COLON_CP) & (prev == 0x29)  # (")" and a colon: a digit before the ")", not code's "f(x):")
    rev[rev] = digit(cp[np.maximum(end[rev] - 2, 0)])
    opens[opens] = _member(cp[np.minimum(starts[cand[opens]] + 1, cp.size - 1)], _DIGIT_COLON_CP)
    cand = cand[(digit(prev) & (digit(last) | _member(last, _STAMP_CLOSE_CP))) | rev
                | (_member(last, _AMPM_CP) & _member(prev | 0x20, _AM_PM_CP)) | _member(last, _STAMP_SPACE_CP) | opens]
    if cand.size < _LOG_RECORDS_MIN:
        return _EMPTY_I64
    at = seams[cand] - 1  # (the line's last character: back from the next line's start past the break, a "\r",
    for _ in range(3):  # a trailing blank)
        at = np.where(_in_table(_BLANK, cp[at]) | (cp[at] == 0x0A) | (cp[at] == 0x0D), at - 1, at)
    a, first, last = starts[cand], first[cand], cp[at]
    def clock(p: np.ndarray) -> np.ndarray:  # (a clock's colon at p)
        p = np.minimum(np.maximum(p, 1), cp.size - 2)
        return (cp[p] == 0x3A) & digit(cp[p - 1]) & digit(cp[p + 1])
    e = np.where(_member(last, _AMPM_CP), at - 2, np.where(_member(last, _STAMP_CLOSE_CP), at - 1, at))
    e = np.where(_member(last, _COLON_CP) & (cp[np.maximum(at - 1, 0)] == 0x29), at - 2, e)  # (Rev's "(00:03):")
    e = e - _member(cp[np.maximum(e, 0)], _STAMP_SPACE_CP)  # (the space before "AM")
    near_end = digit(cp[np.maximum(e, 0)]) & clock(e - 2) & (e - 2 > a)
    near_start = digit(first) | (first == 0x5B)
    hits = np.zeros(int(near_start.sum()), dtype=bool)
    for k in range(1, _CLOCK_NEAR):
        hits |= clock(a[near_start] + k)
    near_start[near_start] = hits
    return cand[near_end | near_start]


#: the depth of a division marker's word: a volume holds books and parts, a book chapters, a chapter sections
_MARKER_DEPTH = {"volume": 1, "book": 1, "part": 1, "chapter": 2, "act": 2, "appendix": 2, "section": 3, "scene": 3,
                 "canto": 3, "stave": 3, "letter": 3, "article": 3}
_HTML_TAG = re.compile(r"<[^>\n]*>")
_ZH_DEEP = re.compile(r"[ \t\u3000]*(?:第[0-9一二三四五六七八九十百千零〇两]+[节節回条]|[（(][一二三四五六七八九十]+[）)])")


def _html_heading(line: str) -> tuple[int, str] | None:
    """The level and the text of an HTML heading element that is the whole line (its inline tags
    dropped), or None where the line is none or the heading is empty."""
    m = _HTML_HEADING.fullmatch(line)
    title = _HTML_TAG.sub("", m.group(2)).strip() if m else ""
    return (int(m.group(1)), title) if m and title else None


def heading_lines(sents: SentenceSpans, lay: Layout) -> list[tuple[int, int, str]]:
    """``(offset, level, title)`` of every heading line :func:`layout` found, in order: where a heading
    sits in the document's outline, for a chunk's heading path (:mod:`logichunk.context`). The offset is
    the heading line's first character; a line of several heading sentences is one heading, and a title line
    right under a division marker is that marker's title (``CHAPTER I.`` over ``Down the Rabbit-Hole``).
    Levels: Markdown's ``#`` count, setext ``=`` 1 and ``-`` 2, AsciiDoc's ``=`` count, HTML's ``hN``,
    LaTeX's part to subparagraph 1-7, a numbered heading's depth (``1.2`` is 2; ``第三章``, ``一、`` 1;
    ``第二节``, ``（一）`` 2), a division marker's word (volume, book, part 1; chapter, act 2; section,
    scene 3; a bare Roman number 2), and 1 for a title line, which says nothing of its depth. A title's
    whitespace runs read as one space (a line break the splitter took for a wrap among them)."""
    text = sents.text
    out: list[tuple[int, int, str]] = []
    idx = np.flatnonzero(lay.heading).tolist()
    n = len(sents)
    k, last = 0, -2  # the last sentence of the heading line before
    while k < len(idx):
        i = j = idx[k]
        while k + 1 < len(idx) and idx[k + 1] == j + 1 and sents.breaks[j] == BREAK_NONE:  # one line
            k += 1
            j = idx[k]
        a, b = int(sents.starts[i]), int(sents.ends[j])
        line = text[a:b].strip()
        offset = a + len(text[a:b]) - len(text[a:b].lstrip())
        under = text[int(sents.starts[j + 1]) : int(sents.ends[j + 1])].strip() if j + 1 < n else ""
        level, title = _heading_level(line, under if j < n - 1 and sents.breaks[j] == BREAK_LINE else "")
        if out and last == i - 1 and sents.breaks[i - 1] == BREAK_LINE and _chapter_marker(out[-1][2], True):
            off, lvl, head = out.pop()  # the marker's title line
            level, title, offset = lvl, f"{head} {title}", off
        title = " ".join(title.split())  # (a heading the splitter read over a soft wrap: one line of a path)
        if title:
            out.append((offset, level, title))
        last = j
        k += 1
    return out


def _heading_level(line: str, under: str) -> tuple[int, str]:
    """The level and the title of one heading line (``under``: the line right under it, for a setext
    underline); see :func:`heading_lines`."""
    m = _ATX.match(line)
    if m:
        return len(m.group(1)), line[m.end():].strip().rstrip("#").strip()
    if under and (set(under) <= {"="} or set(under) <= {"-"}):
        return (1 if under[0] == "=" else 2), line
    m = _LATEX.match(line)
    if m:
        return _LATEX_DEPTH[m.group(1)], m.group(2).strip()
    html = _html_heading(line)
    if html:
        return html
    if _ASCIIDOC.match(line):
        title = line.strip().strip("= \t")
        return max(1, re.match(r"[= \t]*", line).group().count("=")), title  # ("= = = Reception = = =": 3)
    m = _INI_SECTION.fullmatch(line)
    if m and line.lstrip().startswith("["):
        return len(m.group(1)), m.group(2)
    word = line.split(None, 1)[0].lower().rstrip(".:") if line.split() else ""
    if word in _MARKER_DEPTH and _MARKER.match(line):
        return _MARKER_DEPTH[word], line
    m = _NUMBERED.match(line)
    if m:
        form, key = _number_form(m)
        if form == "num":
            return int(key), line
        if form in _ZH_FORM_DEPTH:
            return _ZH_FORM_DEPTH[form], line
        return (2 if _ZH_DEEP.match(line) else 1), line
    if _ROMAN_LINE.match(line) and line.split(None, 1)[0].rstrip(".").isupper():
        return 2, line
    return 1, line


def _titles_above(text: str, starts: np.ndarray, ends: np.ndarray, line_start: np.ndarray, cand: np.ndarray,
                  opens_text: np.ndarray) -> set[int]:
    """The sentences among ``cand`` (whole lines followed by one line break) that may title the
    paragraph right under them, in a text without blank lines (a Word or PDF export: ``Costs`` over
    ``Operating costs stayed flat, ...``): after a finished sentence (or at a text's start:
    ``opens_text``, per sentence, each text's first when several are laid end to end), and followed by a line longer than
    any title (:data:`TITLE_MAX_CHARS`); the title checks come after."""
    idx = np.flatnonzero(cand)
    idx = idx[~_member(_last_char(text, starts, ends, idx), _PROSE_END_CP)]  # a title does not end as prose
    if idx.size == 0:
        return set()
    line = np.cumsum(line_start) - 1  # the line of each sentence
    length = np.bincount(line, weights=ends - starts)
    nxt = line[idx] + 1
    idx = idx[(nxt < length.size) & (length[np.minimum(nxt, length.size - 1)] > TITLE_MAX_CHARS)]
    if idx.size == 0:
        return set()
    # the sentence before ends as prose does
    done = opens_text[idx] | _member(_last_char(text, starts, ends, np.maximum(idx - 1, 0), closers=True), _PROSE_END_CP)
    return set(idx[done].tolist())


_LEAD_IN_CP = np.array(sorted(ord(c) for c in ":,：，"), dtype=np.uint32)
#: the colons that end a lead-in's line (``... wrote:``, ``具体如下：``)
_COLONS = ":："
_COLON_CP = np.array(sorted(map(ord, _COLONS)), dtype=np.uint32)
_PROSE_END_CP = np.array(sorted(ord(c) for c in _PROSE_END), dtype=np.uint32)
_MARKUP_FIRST = np.array(sorted(ord(c) for c in "#=- \t\\<"), dtype=np.uint32)  # ATX, setext, LaTeX, HTML, their indent


def _holds(text: str, chars: str, k: int) -> bool:
    """Whether ``text`` holds ``k`` or more of the characters ``chars`` (all of them counted): finds that stop at the
    ``k``-th. Why: a reader that needs that many (a mail's header fields, a chat's clocks, a lead-in's colon) is
    skipped before any pass over the sentences where the text cannot hold it (most short texts of prose)."""
    found = 0
    for ch in chars:
        at = text.find(ch)
        while at >= 0:
            found += 1
            if found >= k:
                return True
            at = text.find(ch, at + 1)
    return False


def _near_end(text: str, ends: np.ndarray, idx: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """Whether one of ``marks`` is among the last five characters of each sentence in ``idx``: a superset
    of those whose last character past up to four spaces (:func:`_last_char`) is one, found in five
    gathers rather than its loop."""
    hit = np.zeros(idx.size, dtype=bool)
    if idx.size == 0:
        return hit
    cp = codepoints(text)
    e = ends[idx]
    for k in range(1, 6):
        c = cp[np.maximum(e - k, 0)]  # (a sentence shorter than that reads the text's start: a candidate at worst)
        for m in marks.tolist():  # (a mark or two: plain comparisons beat a search per character)
            hit |= c == m
    return hit


def _introduces(sentence: str) -> bool:
    """Whether ``sentence`` ends as one that introduces what follows: a colon (``The command is:``,
    reStructuredText's ``run this::``) or vim help's ``>`` after a blank (``... this way: >``)."""
    s = sentence.rstrip()
    return (s[-1:] != "" and s[-1] in _COLONS) or (s[-1:] == ">" and s[-2:-1] in (" ", "\t"))


#: what closes a program's value before its comma (``[[0.]]],``, ``f(a),``, ``{"a": 1},``)
_VALUE_CLOSER_CP = np.array(sorted(map(ord, ")]}")), dtype=np.uint32)
#: the longest field's marker read alone (``:param invalidation_mode:``): a longer one is read as no field
_FIELD_MAX = 48
#: what the walk back from a lead-in's colon passes to the colon or line feed before it (:func:`_introducing_mark`)
_NOT_FIELD_STOP = np.ones(0x110000, dtype=bool)
_NOT_FIELD_STOP[[0x3A, 0x0A]] = False


def _introducing_mark(text: str, at: np.ndarray) -> np.ndarray:
    """Whether each colon or comma at ``at``, the last mark of its line, can end a lead-in: a comma not after a
    closing bracket nor an ellipsis, which part a program's values (numpy's ``array([[[[0.]],`` over a blank line,
    ``...,``, ``assert_equal(f(a),``), where a word's comma ends one (``Hi Bob,``, ``例如，``, ``e.g.,``, ``over
    3.3.3,``); a colon not of a field's marker alone (reStructuredText's ``:noindex:``, a docstring's ``:returns:``:
    a field list's item, not what opens the paragraph under it). Read by gathers; Python only for the few colons
    whose line opens with another colon (a source file has a colon line in ten)."""
    cp = codepoints(text)
    out = np.ones(at.size, dtype=bool)
    if at.size == 0:
        return out
    def back(k: int) -> np.ndarray:
        return cp[np.maximum(at - k, 0)]
    comma = ~_member(cp[at], _COLON_CP)
    value = _member(back(1), _VALUE_CLOSER_CP) | ((back(1) == 0x2E) & (back(2) == 0x2E) & (back(3) == 0x2E))
    out[comma & value] = False
    colon = np.flatnonzero(~comma)
    if colon.size:  # (the nearest colon or line feed back from each, a walk: a colon there, after a blank, opens a field)
        opens, far, _ = _walk(cp, at[colon] - 1, np.zeros(colon.size, np.int64), _NOT_FIELD_STOP, _FIELD_MAX, back=True)
        field = ~far & (opens >= 0) & (cp[np.maximum(opens, 0)] == 0x3A) \
            & ((opens == 0) | _in_table(_BLANK, cp[np.maximum(opens - 1, 0)]) | (cp[np.maximum(opens - 1, 0)] == 0x0A))
        for i, a in zip(colon[field].tolist(), at[colon[field]].tolist(), strict=True):
            out[i] = FIELD_ALONE.fullmatch(text[text.rfind("\n", 0, a) + 1 : a + 1].strip()) is None
    return out


def _doctest_block(text: str, at: np.ndarray, under: np.ndarray) -> np.ndarray:
    """Whether each line ending at the colon at ``at`` is a doctest's line over its continuation (``>>> for i in
    x:`` over ``...     total += i``; ``under``: where the next line's text opens): a program's block opening, its
    colon code's bond as ``def f():``'s is."""
    cp = codepoints(text)
    nxt = [np.minimum(under + k, cp.size - 1) for k in range(3)]
    out = (cp[nxt[0]] == 0x2E) & (cp[nxt[1]] == 0x2E) & (cp[nxt[2]] == 0x2E)
    for i in np.flatnonzero(out).tolist():
        out[i] = DOCTEST_PROMPT.match(text, text.rfind("\n", 0, int(at[i])) + 1) is not None
    return out


def _goes_on_over_page(text: str, starts: np.ndarray, furn: np.ndarray, i: int) -> bool:
    """Whether sentence ``i``, right over a page's furniture (a running footer, a page's number, the next page's
    header: :mod:`.pages`), goes on under it: the text after the furniture opens in lower case. Why: a page break
    that leaves one line of a paragraph at a page's foot (an RFC's ``   The session opens with a greeting from
    the client to the server`` over ``Author ... [Page 1]``) stands that line alone between blank lines, as a
    title stands; its sentence goes on over the page."""
    j = i + 1
    while j < furn.size and furn[j]:
        j += 1
    return i + 1 < j < furn.size and text[int(starts[j])].islower()


def _inside_sentence(text: str, starts: np.ndarray, ends: np.ndarray, i: int) -> bool:
    """Whether sentence ``i`` is an example inside a sentence that goes on around it: the one before ends as
    a sentence goes on (a letter, a digit, a comma), the one after opens in lower case, and the example
    is indented deeper than what goes on (a man page's ``the command`` / ``       info grep`` /
    ``should give you access ...``)."""
    before = text[int(starts[i - 1]) : int(ends[i - 1])].rstrip()
    after = text[int(starts[i + 1]) : int(ends[i + 1])].lstrip()
    return bool(before) and (before[-1].isalnum() or before[-1] in ",;") and after[:1].islower() \
        and indent_columns(text, int(starts[i])) > indent_columns(text, int(starts[i + 1]))


#: the blanks :func:`_last_at` looks past unless told otherwise (the count :func:`_last_ats` reads for every sentence)
_LAST_BLANKS = 4


class _LastMemo:
    """The sentences of the :func:`layout` under way, how many of their last characters were asked so far and, once
    those pass :data:`_LAST_TABLE_SHARE` of them, :func:`_last_ats` of them all."""

    __slots__ = ("text", "starts", "ends", "lasts", "asked")

    def __init__(self, text: str, starts: np.ndarray, ends: np.ndarray) -> None:
        self.text, self.starts, self.ends = text, starts, ends
        self.lasts: tuple[np.ndarray, np.ndarray] | None = None
        self.asked = 0


#: the share of a layout's sentences whose last characters, asked, make the memo read them all (:func:`_last_ats`):
#: the table is a pass over every sentence, which prose, asking of a few (its short lines), never repays, where a
#: source file asks of each several times. A quarter: the pass costs about what the walks of that many queries do
#: (their calls and gathers), fixed a priori, not tuned.
_LAST_TABLE_SHARE = 0.25
#: the sentences up to which the memo reads them all at the first ask: below it the pass costs less than one more
#: call of the walks (a call's fixed cost, some thousands of instructions, is a few hundred sentences' reads), and a
#: short text's layout asks some ten times (an edited document re-chunked on each keystroke pays each ask). Fixed a
#: priori from that ratio, not tuned.
_LAST_TABLE_ALL = 512


#: the :func:`layout` under way in this thread (a one-entry memo, or None): its sentences' last characters read once
#: for all (:func:`_last_ats`), where a layout asks some 100,000 times of a 2 MB code file, most sentences several
#: times. Matched by identity (the memo holds the objects, so no other takes their ids; a layout never writes into
#: its spans). A context variable: each thread sees only its own layout's, and the call's end puts back exactly what
#: was there (a module-wide slot let one thread's finish restore another's memo, keeping its text alive).
_LAST_MEMO: ContextVar[_LastMemo | None] = ContextVar("_LAST_MEMO", default=None)


def _last_ats(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_last_at` of every sentence, without and with the closers (its default ``blanks``): one compiled pass
    (:func:`logichunk.native.last_ats`), else its two walks over all."""
    cp = codepoints(text)
    fast = native.last_ats(cp, starts, ends, _ASCII_BLANK, _LAST_BLANKS, _CLOSER_TABLE)
    if fast is not None:
        return fast
    return _walked_last(cp, starts, ends, _LAST_BLANKS)


def _last_char(text: str, starts: np.ndarray, ends: np.ndarray, idx: np.ndarray, closers: bool = False,
               blanks: int = _LAST_BLANKS) -> np.ndarray:
    """The last character of each sentence in ``idx``, past up to ``blanks`` spaces and line breaks (and,
    with ``closers``, up to two closing quotes or brackets: ``"He left."`` ends with its full stop),
    never before the sentence's first."""
    return codepoints(text)[_last_at(text, starts, ends, idx, closers, blanks)]


def _last_at(text: str, starts: np.ndarray, ends: np.ndarray, idx: np.ndarray, closers: bool = False,
             blanks: int = _LAST_BLANKS) -> np.ndarray:
    """Where :func:`_last_char` finds each one (an offset into the text): read off :func:`layout`'s table of every
    sentence's (:data:`_LAST_MEMO`) where it asks of its own sentences, else walked for ``idx``."""
    memo = _LAST_MEMO.get()
    if blanks == _LAST_BLANKS and memo is not None and memo.text is text and memo.starts is starts and memo.ends is ends:
        if memo.lasts is None:
            memo.asked += np.size(idx)
            if memo.asked >= _LAST_TABLE_SHARE * starts.size or starts.size <= _LAST_TABLE_ALL:  # (else walked:
                # prose asks of a few)
                memo.lasts = _last_ats(text, starts, ends)
        if memo.lasts is not None:
            return memo.lasts[closers][idx]
    return _walked_last(codepoints(text), starts[idx], ends[idx], blanks, closers)[closers]


def _walked_last(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, blanks: int, closers: bool = True
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Each span's last character by the walks (:func:`_last_at` for a few, :func:`_last_ats`' numpy twin for all):
    past up to ``blanks`` spaces and line breaks, and then, with ``closers``, past up to two closing quotes or
    brackets (else the second array is the first); never before the span's first character."""
    s = starts + 1  # (never before the sentence's first character)
    e, _, _ = _walk(cp, ends - 1, s, _ASCII_BLANK, blanks, back=True)
    c = _walk(cp, e, s, _CLOSER_TABLE, 2, back=True)[0] if closers else e
    return np.maximum(e, 0), np.maximum(c, 0)


_ROMAN_CP = np.array(sorted(ord(c) for c in "IVXLCDM"), dtype=np.uint32)
_MARKER_START_CP = np.array(sorted({ord(c) for w in _MARKER_WORDS for c in (w[0], w[0].upper())} | set(_ROMAN_CP.tolist())),
                            dtype=np.uint32)
_WORD_LETTERS = max(map(len, _MARKER_WORDS))
#: each marker word's first two letters, as one key (the first shifted by 21 bits), and each word by its key's place:
#: its letters (0 past its end) and its length (no two words share their first two letters)
_MARKER_PAIRS = np.unique([(ord(w[0]) << 21) | ord(w[1]) for w in _MARKER_WORDS]).astype(np.int64)
_MARKER_ROWS = np.zeros((len(_MARKER_WORDS), _WORD_LETTERS), np.int64)
_MARKER_LENS = np.zeros(len(_MARKER_WORDS), np.int64)
for _w in _MARKER_WORDS:
    _k = int(np.searchsorted(_MARKER_PAIRS, (ord(_w[0]) << 21) | ord(_w[1])))
    _MARKER_ROWS[_k, : len(_w)] = [ord(c) for c in _w]
    _MARKER_LENS[_k] = len(_w)
assert _MARKER_PAIRS.size == len(_MARKER_WORDS) and _MARKER_LENS.all()  # (one word per pair)
del _w, _k


def _marker_like(text: str, starts: np.ndarray, ends: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Which lines ``cand`` may be division markers (:func:`_chapter_marker`) or open a line of a marker
    and its title (:func:`_division_line`), without Python per line:
    at most :data:`TITLE_MAX_CHARS` characters (and 16 of line breaks and spaces after them), and a
    marker word first (any case) and then a space or tab, or at most eight characters opening with a
    capital Roman digit (``XVIII.``); or a line with leading blank lines (a text's first sentence, read
    in Python). A superset: the regular expression decides. Cheapest tests first: most lines of
    prose fail the length or the first letter."""
    out = np.zeros(cand.size, dtype=bool)
    if cand.size == 0:
        return out
    cp = codepoints(text)
    c0 = cp[starts[cand]]
    lead = _in_table(_ASCII_BLANK, c0)
    out[lead] = True
    sel = np.flatnonzero(~lead & (ends[cand] - starts[cand] <= TITLE_MAX_CHARS + 16) & _member(c0, _MARKER_START_CP))
    if sel.size == 0:
        return out
    s = starts[cand[sel]]
    # (a marker word, any case, then a blank: read only where a marker word's first two letters open the line, and
    # then against that word alone, its letters before the line's end: a source file's lines open with a letter by
    # the thousand, few with "ch", "se", "pa", ...; the words :func:`leading_words` reads, without a pass a letter)
    last = cp.size - 1
    pair = ((c0[sel].astype(np.int64) | 0x20) << 21) | (cp[np.minimum(s + 1, last)].astype(np.int64) | 0x20)
    two = np.flatnonzero(_member(pair, _MARKER_PAIRS))
    word = np.zeros(sel.size, dtype=bool)
    if two.size:
        field = np.searchsorted(_MARKER_PAIRS, pair[two])
        at, lim, length = s[two], ends[cand[sel[two]]], _MARKER_LENS[field]
        width = np.arange(_WORD_LETTERS)
        p = at[:, None] + width
        read = np.where(p < lim[:, None], cp[np.minimum(p, last)].astype(np.int64) | 0x20, -1)
        word[two] = ((read == _MARKER_ROWS[field]) | (width >= length[:, None])).all(axis=1) \
            & _in_table(_BLANK, cp[np.minimum(at + length, last)])
    roman = _member(c0[sel], _ROMAN_CP)
    sel, word, roman = sel[word | roman], word[word | roman], roman[word | roman]
    span = _last_at(text, starts, ends, cand[sel], closers=True) - starts[cand[sel]]
    out[sel] = (word | (roman & (span < 8))) & (span < TITLE_MAX_CHARS)
    return out


def _could_head(text: str, starts: np.ndarray, ends: np.ndarray, cand: np.ndarray, first: np.ndarray,
                marker: np.ndarray, stopped: np.ndarray) -> np.ndarray:
    """The candidate lines ``cand`` less those that cannot be headings, found without Python per line:
    a line that ends as prose does (its last character, past spaces and line breaks, in
    :data:`_PROSE_END`) is neither a numbered heading nor a title line, so it is one only as Markdown
    (ATX or setext), which opens with ``#``, ``=``, ``-`` or their indent. Sentences that open with a
    capital of *Chapter*, *Section*, *Part* or *Appendix*, or stand alone as a paragraph, are most of
    the candidates in prose laid out one sentence per line; the checks in Python then read only the
    few that remain."""
    if cand.size == 0:
        return cand
    last = _last_at(text, starts, ends, cand, closers=True)
    cp = codepoints(text)
    prose = _member(cp[last], _PROSE_END_CP)
    # (but a numbered question may head its answer: "1.2. What is this spec?")
    prose &= ~(_member(cp[last], _QUESTION_CP) & (_in_table(_digit_or_dot(), first[cand]) | _member(first[cand], _FORM_FIRST)
                                                 | _in_table(_BLANK, first[cand])))
    # ... or a numbered title that ends with a full stop, alone between blank lines (``stopped``: a licence's "1.
    # Source Code.", :func:`stopped_title`)
    prose &= ~(((cp[last] == 0x2E) & _in_table(_digit_or_dot(), first[cand])
                | ((cp[last] == 0x3002) & _in_table(_ZH_NUMBER_FIRST, first[cand]))) & stopped[cand])
    # ... or a division marker (``marker``, :func:`_marker_like`), whose number may end with a full stop
    return cand[~prose | _member(first[cand], _MARKUP_FIRST) | marker[cand]]


#: how many characters of a line's indent :func:`_opens_heading_form` reads (past them: maybe)
_INDENT_READ = 16
#: what ``\s`` matches below U+3001 (above it: nothing)
_IS_SPACE = np.array([chr(c).isspace() for c in range(0x3001)], dtype=bool)
#: what a heading form may open with past its indent, but a section number and ATX's ``#``, read further:
#: AsciiDoc's and setext's marks, LaTeX's backslash, HTML's angle bracket, a Chinese, parenthesised or
#: circled number, a division word's capital (Chapter, Section, Part, Appendix)
_FORM_FIRST = np.array(sorted({ord(c) for c in "=-\\<第一二三四五六七八九十（(CSPA"} | set(range(0x2460, 0x2474))),
                       dtype=np.uint32)


@lru_cache(maxsize=1)
def _digit_or_dot() -> np.ndarray:
    """A bool table by code point: what a section number's ``\\d`` and dots match (every decimal digit,
    the last of them below U+20000), built once. Unicode encodes decimal digits in runs of ten, zero to
    nine (a stability policy), so one code point in ten is read and each digit found marks its run."""
    table = np.zeros(0x20000, dtype=bool)
    for c in range(0, 0x20000, 10):
        if chr(c).isdecimal():
            zero = c - unicodedata.decimal(chr(c))
            table[zero : zero + 10] = True
    table[0x2E] = True
    return table
#: what follows a section number's digits and dots: a space, or a Chinese number's mark
_NUM_NEXT = np.array(sorted(ord(c) for c in " \t\u3000．、"), dtype=np.uint32)
_HASH_NEXT = np.array(sorted(ord(c) for c in " \t\r\n"), dtype=np.uint32)


_BLANK = _chars_table(" \t")
#: the first characters of a markup language's heading, which its mark makes one wherever it stands: Markdown's
#: ``#``, AsciiDoc's and MediaWiki's ``=`` (``" = = History = = "``), LaTeX's ``\\section``, HTML's ``<h2>``
_MARKED_FIRST = np.array(sorted(ord(c) for c in "#=\\<"), np.uint32)
_HASH = _chars_table("#")
#: the first letters of C's preprocessor directives (:data:`~.line_kinds.CPP_DIRECTIVE`: ``define``, ``if``, ...)
_DIRECTIVE_FIRST = _chars_table("".join(w[0] for w in re.search(r"\(\?:([\w|]+)\)", CPP_DIRECTIVE.pattern)
                                        .group(1).split("|")))


def _code_comments(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Whether each line ``[starts, ends)`` (each opening with ``#``) is an ATX heading's form (:data:`_ATX`: one
    to six ``#`` and a blank) and no C directive (:data:`~.line_kinds.CPP_DIRECTIVE`: after a lone ``#`` and its
    blanks, no directive's first letter), read by walks: where such a line is indented four columns or more it
    is a comment of code, which the layout's reading loop passes over. Exact where it says yes: each line found
    here the loop's expressions read so; one it leaves is read by them."""
    if starts.size == 0:
        return np.zeros(0, dtype=bool)
    top = cp.size - 1
    p, _, _ = _walk(cp, starts, ends, _HASH, 7)
    marks = p - starts
    atx = (marks >= 1) & (marks <= 6) & (p < ends) & _in_table(_BLANK, cp[np.minimum(p, top)])
    q, _, _ = _walk(cp, p, ends, _BLANK, int((ends - starts).max()) + 1)
    word = np.where(q < ends, cp[np.minimum(q, top)], 0)
    return atx & ((marks >= 2) | ~_in_table(_DIRECTIVE_FIRST, word))
_TAB = _chars_table("\t")
_NEWLINE = _chars_table("\n")
_CLOSER_TABLE = _chars_table(_CLOSERS)
_ASCII_BLANK = _chars_table("\t\n\x0b\x0c\r ")  # (the line breaks and spaces :func:`_last_at` looks past)
_RULE_MARKS = _chars_table("-=")
_HASH = _chars_table("#")
_TAG_FIRST = _chars_table("< \t\\")  # (an HTML tag's, a LaTeX command's, or an indent)
_LATEX_FIRST = _chars_table("\\ \t")
_RULE_FIRST = _chars_table("-*_= \t")
#: what opens a framed title before its first letter (:data:`_FRAMED_TITLE`, :data:`_LOG_OPENS`): marks, blanks
_FRAME_CHARS = _chars_table("-= \t")


def _opens_heading_form(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Whether each line of ``cand`` may open as one of the heading forms the reading loop of
    :func:`layout` matches (Markdown, AsciiDoc, setext, LaTeX, HTML, numbered): past its whitespace, a
    form's mark (:data:`_FORM_FIRST`), one to six ``#`` and a space or the line's end, or digits and dots
    and a space, a Chinese number's mark or, after a dot, a CJK character. A superset of the regular
    expressions, read without Python per line, so that the lines of a table of numbers, a log, subtitles
    or code, which open with a digit or an indent, do not each pay a handful of matches."""
    if cand.size == 0:
        return np.zeros(0, dtype=bool)
    s, e = starts[cand], ends[cand]
    p, deep, _ = _walk(cp, s, e, _IS_SPACE, _INDENT_READ)
    c = cp[np.minimum(p, cp.size - 1)]
    ok = deep | ((p < e) & _member(c, _FORM_FIRST))
    digit = (c >= 0x30) & (c <= 0x39)
    wide = np.flatnonzero(c >= 0x660)  # (``\\d`` is any decimal digit: Arabic-Indic, Devanagari, full-width...)
    if wide.size:
        digit[wide] = _in_table(_digit_or_dot(), c[wide])
    digit = np.flatnonzero(~ok & (p < e) & digit)
    if digit.size:
        q, long, _ = _walk(cp, p[digit], e[digit], _digit_or_dot(), _INDENT_READ)
        d = cp[np.minimum(q, cp.size - 1)]
        dot = cp[q - 1] == 0x2E
        ok[digit] = long | ((q < e[digit]) & (_member(d, _NUM_NEXT) | (dot & (d >= 0x3400) & (d <= 0x9FFF))))
    hashes = np.flatnonzero(~ok & (p < e) & (c == 0x23))
    if hashes.size:
        q, long, _ = _walk(cp, p[hashes], e[hashes], _HASH, 7)
        ok[hashes] = ~long & (q - p[hashes] <= 6) & ((q >= e[hashes]) | _member(cp[np.minimum(q, cp.size - 1)], _HASH_NEXT))
    return ok & ~_no_form_past_mark(cp, p, e, c, deep)


#: per division word of :data:`_NUMBERED` (Chapter, Section, Part, Appendix, either case), its second to fourth letters
_WORD_NEXT = {ord(w[0]): np.array([[ord(ch) for ch in w[1:4]] for w in (w, w.upper())], dtype=np.uint32)
              for w in ("Chapter", "Section", "Part", "Appendix")}
_SETEXT_CHARS = _chars_table("- \t")
#: the marks :func:`_no_form_past_mark` reads past
_PAST_MARK = _chars_table("-(0123456789ACPS")
_CR_LF = _chars_table("\r\n")


def _indented_hash(first: np.ndarray, deep: np.ndarray, placed: np.ndarray) -> np.ndarray:
    """Which lines of the layout's reading loop (their first characters ``first``; ``deep``: indented four columns
    or more; ``placed``: standing where a title, a bold line, a marker or an underline may) no rule of the loop
    reads as anything: a ``#`` line indented so and placed as none of those. Its ATX form, where it has one, is
    passed over as code; without one, the only rules left that a ``#`` may open are those of the places. Why: a
    source file's indented comments (``    # import with ...``: a word a C directive may open with, so not
    found by :func:`_code_comments`) are loop lines by the hundred."""
    return (first == 0x23) & deep & ~placed


#: what a line of code opens with that :data:`_NO_TITLE` reads as code at once (``return x``, ``@property``,
#: ``// note``), and no heading form
_CODE_FIRST = _chars_table("abcdefghijklmnopqrstuvwxyz@/:")


def _unlisted_code(first: np.ndarray, listed: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Which lines of the layout's reading loop (their first characters ``first``) its rules would read as no
    more than a line of code standing alone (``coded``), which counts only in a run of title lines that may be a
    list (``listed``: in a run of :data:`LISTED_TITLES` lines or more each between blank lines): a line that opens
    with a lower-case letter, ``@``, ``/`` or ``:`` (no heading form, and :data:`_NO_TITLE`'s code at its start)
    outside such a run and where no other rule reads it (``other``: a marker, a bold line, a title over text, an
    underline). Why: a source file's statements between blank lines (``return total``) are loop lines by the
    hundred."""
    return _in_table(_CODE_FIRST, first) & ~listed & ~other


def _in_runs(mask: np.ndarray, k: int) -> np.ndarray:
    """Per element, whether it lies in a run of ``k`` or more ``True`` elements of ``mask`` in a row."""
    return _marked(mask.size, *_long_runs(mask, k))


def _no_form_past_mark(cp: np.ndarray, p: np.ndarray, e: np.ndarray, c: np.ndarray, deep: np.ndarray) -> np.ndarray:
    """Which lines (their text from ``p``, its first character ``c``, to ``e``; ``deep``: an indent past what was
    read) open with a form's mark but match none of the forms that mark opens: a ``-`` with more on its line than
    dashes and blanks (no setext underline: a docstring's ``----------`` over an indented line, a list item,
    ``--flag``), a ``(`` with neither a non-ASCII character nor a digit or two and ``)`` after it (no ``(1)``,
    ``(一)``: a call's or a tuple's line, ``(0, 1)``), a capital C, S, P or A that opens no *Chapter*, *Section*,
    *Part* or *Appendix* (``See Also``, ``Parameters``), four digits in a row (a year, a table's figure: no section
    number has more than three). Why: a source file's lines open so by the thousand, and each paid the reading
    loop's rules. Exact where it says yes (each such line the loop's expressions read as no form); a line read no
    further (non-ASCII after ``(``, the next characters of a word) stays a maybe."""
    out = np.zeros(p.size, dtype=bool)
    read = np.flatnonzero(~deep & (p < e) & _in_table(_PAST_MARK, c))
    if read.size == 0:  # (most calls: a short text's few lines, none opening so)
        return out
    top = cp.size - 1
    p, e, c = p[read], e[read], c[read]
    no = np.zeros(read.size, dtype=bool)
    dash = np.flatnonzero(c == 0x2D)  # (setext: "[ \t]{0,3}-+[ \t]*" and line breaks to the end)
    if dash.size:
        q, _, _ = _walk(cp, p[dash], e[dash], _SETEXT_CHARS, int((e[dash] - p[dash]).max()) + 1)
        r, _, _ = _walk(cp, q, e[dash], _CR_LF, int((e[dash] - q).max()) + 1)
        no[dash] = r < e[dash]
    par = np.flatnonzero(c == 0x28)  # ("\(\d{1,2}\)" or "[（(][一二...]+[）)]")
    if par.size:
        d1, d2, d3 = (np.where(p[par] + k < e[par], cp[np.minimum(p[par] + k, top)], 0) for k in (1, 2, 3))
        digit1, digit2 = (d1 >= 0x30) & (d1 <= 0x39), (d2 >= 0x80) | (d2 >= 0x30) & (d2 <= 0x39)
        no[par] = (d1 < 0x80) & ~(digit1 & ((d2 == 0x29) | digit2 & (d3 == 0x29)))
    num = np.flatnonzero((c >= 0x30) & (c <= 0x39))  # (a section number: \d{1,3} before a dot or a blank)
    if num.size:
        four = cp[np.minimum(p[num, None] + np.arange(1, 4), top)]
        no[num] = (p[num] + 3 < e[num]) & ((four >= 0x30) & (four <= 0x39)).all(axis=1)
    for mark, words in _WORD_NEXT.items():
        cap = np.flatnonzero(c == mark)
        if cap.size:
            nxt = cp[np.minimum(p[cap, None] + np.arange(1, 4), top)]
            no[cap] = ~(nxt[:, None, :] == words[None]).all(axis=2).any(axis=1)
    out[read] = no
    return out




def _fences(sents: SentenceSpans, edges: tuple[np.ndarray, np.ndarray] | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, int, bool]]]:
    """The fenced code blocks, reStructuredText's literal blocks and the front matter
    (:func:`~.line_kinds.fence_spans`) as gap indices: per block, its first gap inside (after the opening
    line) and one past its last (``lo``, ``hi``), and whether a closing line ends it; and the blocks as offsets
    (``(start, end, closed)``, in order: what :func:`~.code_text.slash_comments` reads)."""
    text = sents.text
    none = np.zeros(0, np.int64)
    if edges is None:
        spans = _block_spans(text)  # (it reads only the marks the text holds)
    else:  # only the texts that open with front matter, or hold a fence mark, are read
        starts = [a for a, b in zip(edges[0].tolist(), edges[1].tolist(), strict=True)
                  if front_matter(text, a, b)]
        if _contains(text, "```") or _contains(text, "~~~") or _contains(text, "<!--") or _contains(text, "/*") \
                or _literal_marks(text) or _contains(text, "#+") or _contains(text, ":END:") \
                or _contains(text, ":end:"):
            marks = [m.start() for m in _FENCE_MARK.finditer(text)]
            starts = sorted(set(starts) | set(edges[0][np.unique(np.searchsorted(edges[0], marks, side="right") - 1)]
                                             .tolist()))
        spans = []
        for a in starts:
            b = int(edges[1][np.searchsorted(edges[0], a)])
            spans += [(a + x, a + y, c) for x, y, c in _block_spans(text[a:b])]
    if not spans:
        return none, none, none.astype(bool), spans
    gap = sents.ends[:-1]  # the offset of each gap
    lo = np.searchsorted(gap, [a for a, _, _ in spans], side="right")
    hi = np.searchsorted(gap, [b for _, b, _ in spans], side="left")
    return lo.astype(np.int64), hi.astype(np.int64), np.asarray([c for _, _, c in spans], dtype=bool), spans

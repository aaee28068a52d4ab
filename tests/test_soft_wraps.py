"""Hard-wrapped prose (a Gutenberg novel, an RFC, mail, text from a PDF): a line break inside a sentence
is a soft wrap, not a sentence end; short lines, transcripts, tables, code and Markdown keep theirs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.sentences import (
    BREAK_LINE,
    BREAK_NONE,
    BREAK_PARAGRAPH,
    split_many,
    split_sentences,
)
from logichunk.text.soft_wraps import MIN_WRAP_WIDTH, MIN_WRAPPED_LINES, WRAP_QUANTILE
from logichunk.text.structure import layout
from structure_helpers import split_both_ways

# the bench's wrapping (bench/corpora.py: the wrapped eval and the en-wrapped corpus use it too)
_spec = importlib.util.spec_from_file_location("corpora", Path(__file__).resolve().parents[1] / "bench" / "corpora.py")
_corpora = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_corpora)
wrap = _corpora.wrap

TALE = """It was the best of times, it was the worst of times, it was the age of
wisdom, it was the age of foolishness, it was the epoch of belief, it
was the epoch of incredulity. It was the season of Light, it was the
season of Darkness, it was the spring of hope, it was the winter of
despair.

There were a king with a large jaw and a queen with a plain face, on the
throne of England; there were a king with a large jaw and a queen with
a fair face, on the throne of France.
"""


def test_wrapped_prose_splits_into_its_sentences():
    s = split_both_ways(TALE)
    assert [t.split()[-1] for t in s.texts()] == ["incredulity.", "despair.", "France."]
    assert s.breaks.tolist() == [BREAK_NONE, BREAK_PARAGRAPH]  # the wraps inside a sentence break nothing


@pytest.mark.parametrize("mark", ["> ", ">> ", "> > ", ">"])
def test_quoted_wrapped_prose_splits_as_the_prose_does(mark):
    """An e-mail's quoted reply is wrapped prose behind quote marks: every quoted line break was read as
    the writer's, and a chunk limit cut a quoted sentence at a line's end with no bubble."""
    quoted = "".join(mark + line + "\n" for line in TALE.splitlines())
    s = split_both_ways(quoted)
    words = [t.replace(">", " ").split() for t in s.texts()]
    assert [w[-1] for w in words if w] == ["incredulity.", "despair.", "France."]
    # a line quoted deeper than the one over it is no wrap of it (a nested quote opens in lower case)
    nested = "".join("> " + line + "\n" for line in TALE.splitlines()[:3]) + "> > was the epoch of belief, it\n"
    nested += "".join("> " + line + "\n" for line in TALE.splitlines()[3:5])
    t = split_both_ways(nested)
    assert any(x.startswith("> > was") for x in t.texts())


def test_a_word_hyphenated_across_lines_and_wrapped_chinese_stay_one_sentence():
    text = ("The committee agreed that the proposal, once revised, was a well-\n"
            "founded plan for the coming year and deserved the support of all of\n"
            "the members present at the meeting that evening in the town hall.\n")
    assert len(split_both_ways(text)) == 1
    zh = ("在很久很久以前的一个小村庄里住着一位老人他每天清晨都会\n"
          "到河边去打水然后沿着弯弯曲曲的小路慢慢地走回家中从来不\n"
          "曾间断过哪怕是刮风下雨的日子也是如此。村里的孩子们都很\n"
          "喜欢听他讲故事。\n")
    assert [t.rstrip() for t in split_both_ways(zh).texts()] == [
        "在很久很久以前的一个小村庄里住着一位老人他每天清晨都会\n到河边去打水然后沿着弯弯曲曲的小路慢慢地走回家中从来不\n"
        "曾间断过哪怕是刮风下雨的日子也是如此。", "村里的孩子们都很\n喜欢听他讲故事。"]


def test_wrapped_chinese_goes_on_over_a_comma_and_at_the_width_over_a_latin_word():
    """Debian's FAQ in Chinese, hard-wrapped: a line that opens with a comma-like mark (``，编译这些程序``) goes
    on the sentence over it, and so, at the width, does a Latin word or a number after a CJK character
    (``从某个`` over ``Linux 发行版``): a Chinese sentence is not over until its full stop (both had ended
    sentences, and a chunk could end mid-sentence there)."""
    zh = ("在很久很久以前的一个小村庄里住着一位老人他每天清晨都会去\n"
          "河边打水然后沿着弯弯曲曲的小路慢慢地走回家中他从来不选择\n"
          "Linux 发行版之外的东西哪怕是刮风下雨的日子也是如此从来\n"
          "，不曾间断。村里的孩子们都很喜欢听他讲故事每天傍晚都会\n"
          "来到他的小院子里坐在那棵老槐树下面听他讲那些古老的传说。\n")
    assert [t.rstrip() for t in split_both_ways(zh).texts()] == [zh[: zh.index("。") + 1], zh[zh.index("。") + 1 :].rstrip()]
    short = "他说：\n你好\nLinux 很好。\n"  # (short lines: no wrap to read)
    assert len(split_both_ways(short)) == 3


@pytest.mark.parametrize("text", [
    "roses are red\nviolets are blue\nsugar is sweet\nand so are you\n",  # verse: short lines
    "alice: what do you think about the weather we had today my friend\nbob: sunny and warm all day long"
    " i would say\nalice: yes that is what i thought as well to be honest\nbob: great\n",  # speakers
    "name | value | note\nalpha beta gamma | 1 | first row of the data table\nbeta | 2 | second row here"
    "\ngamma | 3 | third row of the table\n",  # tabular lines
    "    result = compute_the_value(first_argument, second_argument, third_arg\n"
    "        another_argument, yet_another_argument)\n    return result and more result\n"
    "    value = other\n",  # deeper indentation: code
    "- the first item of a list that is long enough to fill the line width\n- the second item of the list"
    " that is long enough too\n- and the third item of the list that is also long\n",  # list items
])
def test_short_lines_speakers_tables_code_and_lists_keep_their_line_breaks(text):
    s = split_both_ways(text)
    assert len(s) == text.count("\n"), s.texts()


def test_in_wrapped_prose_a_capital_goes_on_and_a_sentence_ending_at_the_width_is_no_line_break():
    text = ("The river ran past the old mill and through the village where the miller\n"
            "lived with his wife and their three children in a small house by the\n"
            "bridge, and every morning they walked together down to the water to see\n"
            "if the boats had come in from the sea during the night while they slept.\n"
            "Then they went back up the hill to the house and had their breakfast with\n"
            "Peter, who was the eldest of the three children and who had come home\n"
            "from the city in the spring after his studies there had come to an end.\n")
    s = split_both_ways(text)
    assert [t.split()[0] for t in s.texts()] == ["The", "Then"]  # "with\nPeter" is a wrap too
    assert s.breaks.tolist() == [BREAK_NONE]  # the sentence ended at the width: no line break
    mixed = ("This line is long enough to be a wrapped line of prose but it ends here.\n"
             "this next line starts in lower case, yet the line above ended with a dot\n"
             "So here is a line that starts with a capital letter and goes on a while\n"
             "and this one is a plain continuation of the sentence above it, wrapped.\n")
    # as many breaks go on in lower case as end a sentence or go on with a capital: not read as wrapped
    assert [t.split()[0] for t in split_both_ways(mixed).texts()] == ["This", "this", "So", "and"]


def test_a_text_wrapped_by_hand_joins_its_short_lines_too():
    """Wrapped by a person (lines end where they chose, some well short of the width): once the text
    reads as wrapped, a sentence that goes on in lower case across a short line is one sentence too."""
    lines = ["Install the development extras and run the tests, in a virtualenv (the make target installs",
             "torch first, then the dev extras,",  # a line ended early, by choice
             "which hold everything the tests import; the summary lists every skip with its reason.",
             "The continuous integration runs the same command in a fresh clone: it installs the",
             "browser and a font when they are missing, creates a new virtualenv, runs the tests in it,",
             "then builds the wheel and installs it alone."]
    text = "\n".join(lines) + "\n"
    assert len(lines[1]) + 1 + len("which") < min(len(x) for x in lines[2:5]) - 20  # far short of the width
    s = split_both_ways(text)
    assert [t.split()[0] for t in s.texts()] == ["Install", "The"]


def test_a_wrapped_transcript_keeps_its_turns():
    """Each turn wrapped at the width: the wraps inside a turn are joined, the break before a speaker's
    name (one word or several, then a colon) stays a line break, even where the line before is full."""
    turns = [("Project Manager", "so we should look at the budget for the remote control first and then"
              " decide what the case is made of before the next meeting starts on monday"),
             ("Industrial Designer", "i think the case could be made of rubber or of plastic and it should"
              " be light enough to hold in one hand for a long time without getting tired"),
             ("Marketing", "our survey says that most of them want a fancy look and feel for the"
              " remote control rather than many buttons on the front of it and that matters")]
    text = "".join(wrap(f"{who}: {what}.", 60) + "\n" for who, what in turns)
    s = split_both_ways(text)
    assert [t.split(":")[0] for t in s.texts()] == [who for who, _ in turns]
    assert s.breaks.tolist() == [BREAK_LINE, BREAK_LINE]


def test_a_wrapped_chinese_transcript_keeps_its_turns():
    body = "我们今天开会主要是讨论下个季度的预算安排以及新产品的设计方案大家有什么想法都可以提出来"
    # 48 characters a turn: two full lines, so the break before each speaker is at the width too
    turns = [f"{who}：{body[k:]}{body[:k]}啊。" for k, who in enumerate(["张三", "李四", "王五", "赵六"])]
    lines = []
    for t in turns:  # each turn wrapped every 24 characters, as a fixed-width layout does
        lines += [t[i : i + 24] for i in range(0, len(t), 24)]
    s = split_both_ways("\n".join(lines) + "\n")
    assert [t[:2] for t in s.texts()] == ["张三", "李四", "王五", "赵六"]
    assert s.breaks.tolist() == [BREAK_LINE] * 3


def test_a_title_after_a_paragraph_that_ends_at_the_width_keeps_its_line():
    """Text pulled from a PDF: a numbered section title on its own line right after a paragraph whose
    last line is full. The break before it is no wrap (the title is short and ends as no prose does),
    so it stays a line of its own and a heading."""
    body = ("Earlier systems split text every few hundred characters, or at sentence ends, without looking"
            " at what the text says. Later work used embeddings to find the places where the topic changes,"
            " at a much higher cost per document.")
    text = (wrap(body, 72) + "\n2.1 Methods\n" + wrap("We measure the quality of each split on public benchmarks"
            " with gold answers, and we report where our method loses as well as where it wins against the"
            " other methods.", 72) + "\n")
    assert text.split("\n")[2].endswith("per document.")  # the paragraph's last line is at the width
    s = split_both_ways(text)
    heads = [t.strip() for t, h in zip(s.texts(), layout(s).heading, strict=True) if h]
    assert heads == ["2.1 Methods"]


def test_lines_that_mostly_go_on_with_a_capital_keep_their_breaks():
    """A list or a transcript without punctuation: its long lines go on with a capital more often than
    in lower case, so the text is not read as wrapped, and no break is joined (not even the one before
    a lower-case word)."""
    text = ("Project Manager we should look at the budget for the remote control first\n"
            "Industrial Designer I think the case could be made of rubber or of plastic\n"
            "User Interface the buttons should be large enough for older people to use\n"
            "Marketing Expert our survey says that most of them want a fancy look and\n"
            "feel for the remote control rather than many buttons on the front of it\n")
    s = split_both_ways(text)
    assert [t.split()[0] for t in s.texts()] == ["Project", "Industrial", "User", "Marketing", "feel"]


_WORDS = st.sampled_from(["the", "old", "man", "walked", "slowly", "towards", "river", "and", "a", "of",
                          "morning", "light,", "quiet", "houses;", "well-known", "x", "extraordinarily", "I",
                          '"quietly"', '"Then"', "“gently”", "(see", "[the", "`config`", "``main``"])


@st.composite
def paragraphs(draw):
    paras = []
    for _ in range(draw(st.integers(1, 3))):
        sents = []
        for _ in range(draw(st.integers(1, 4))):
            words = draw(st.lists(_WORDS, min_size=3, max_size=25))
            sents.append(" ".join([words[0].capitalize(), *words[1:]]).rstrip(",;") + ".")
        paras.append(" ".join(sents))
    return "\n\n".join(paras) + "\n"


def read_as_wrapped(wrapped):
    """Whether the splitter should read ``wrapped`` (made by :func:`wrap`) as wrapped, by the module's
    rule: enough wrapped lines, a width of at least the minimum, and as many wraps going on in lower
    case as wraps before a capital or after a sentence's end (every wrap here is at the width)."""
    lines = wrapped.split("\n")
    widths = [len(a) for a, b in zip(lines[:-1], lines[1:], strict=True) if a and b]
    if len(widths) < MIN_WRAPPED_LINES or sorted(widths)[int(WRAP_QUANTILE * (len(widths) - 1))] < MIN_WRAP_WIDTH:
        return False
    # the line's last character and the next line's first letter, past their quotation marks
    # (and past opening brackets at the next line's start), and past inline code's backticks
    wraps = [(a.rstrip('"”`')[-1:], b.lstrip('"“([`')[:1]) for a, b in zip(lines[:-1], lines[1:], strict=True)
             if a and b]
    going_on = sum(1 for x, y in wraps if x != "." and y.islower())
    return going_on >= len(wraps) - going_on


@settings(max_examples=300, deadline=None)  # 500 took ~12 s of the suite
@given(paragraphs(), st.integers(40, 100))
def test_wrapped_prose_has_its_sentences_and_a_list_its_lines(text, width):
    """Wrapping a text (spaces turned into line breaks at the width) keeps every sentence end. Read as
    wrapped, it has exactly the sentences of the unwrapped text, with the same gap strengths; else every
    line break of the wrapping ends a sentence too (a line break, as in a list)."""
    wrapped = wrap(text, width)
    assert len(wrapped) == len(text)
    plain, got = split_both_ways(text), split_both_ways(wrapped)
    line_starts = {i + 1 for i, ch in enumerate(wrapped) if ch == "\n" and text[i] == " "}
    if read_as_wrapped(wrapped):
        assert got.starts.tolist() == plain.starts.tolist() and got.breaks.tolist() == plain.breaks.tolist()
    else:
        assert set(got.starts.tolist()) == set(plain.starts.tolist()) | line_starts


CHANGES = """Changes
-------

* The ``ctest_coverage`` command learned to read the ``CTEST_EXTRA_FLAGS``
  variable to set the extra flags of every coverage run, and to support
  ``Intel`` coverage files with the ``codecov`` tool.
* The ``ctest_memcheck`` command learned to support sanitizer modes,
  including ``AddressSanitizer`` and ``MemorySanitizer``; options may be set
  using the new ``CTEST_MEMORYCHECK_SANITIZER_OPTIONS`` variable, as before.
12. Generator expressions may now be used in the sources of a target, which
    was found within the targets or
    `target_defaults` sections of older projects and went on in the same way.
- A short item.
"""


def test_a_wrapped_list_item_is_its_sentences():
    """A wrapped Markdown or reStructuredText list item, its next lines indented to its text (past ``* ``
    or ``12. ``), is one sentence, across lines that open or end with inline code too; each item still
    opens its own."""
    got = [t.strip() for t in split_both_ways(CHANGES).texts()]
    items = [" ".join(t.split()) for t in got]
    assert items == ["Changes", "-------",
                     "* The ``ctest_coverage`` command learned to read the ``CTEST_EXTRA_FLAGS`` variable to set the extra "
                     "flags of every coverage run, and to support ``Intel`` coverage files with the ``codecov`` tool.",
                     "* The ``ctest_memcheck`` command learned to support sanitizer modes, including ``AddressSanitizer`` "
                     "and ``MemorySanitizer``; options may be set using the new ``CTEST_MEMORYCHECK_SANITIZER_OPTIONS`` "
                     "variable, as before.",
                     "12. Generator expressions may now be used in the sources of a target, which was found within the "
                     "targets or `target_defaults` sections of older projects and went on in the same way.",
                     "- A short item."], got
    # indented deeper than the item's text, a line is code or a nested block: it keeps its break
    nested = CHANGES.replace("  including ``Addr", "      including ``Addr")
    assert any(t.lstrip().startswith("including") for t in split_both_ways(nested).texts())


@settings(max_examples=300, deadline=None)
@given(paragraphs(), st.integers(60, 80))
def test_chunks_of_wrapped_prose_end_where_its_sentences_do(text, width):
    """Where every sentence fits the limit, wrapping the text moves no chunk boundary into a sentence."""
    wrapped = wrap(text, width)
    assume(read_as_wrapped(wrapped))
    sizes = (400, 200)
    sents = split_sentences(text)
    assume((sents.ends - sents.starts).max() <= sizes[-1])
    plain = set(sents.ends.tolist())
    tree = chunk(wrapped, sizes=sizes)
    assert "".join(tree.text_of(c) for c in tree.roots()) == wrapped
    assert all(c.span.end in plain for c in tree), wrapped


def test_breaks_between_wrapped_lines_are_no_line_breaks():
    s = split_both_ways(TALE.replace("\n\n", "\n"))  # no blank line: the paragraph edge is one line break
    assert s.breaks.tolist() == [BREAK_NONE, BREAK_LINE]
    assert np.all(s.ends[:-1] <= len(TALE))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a", "word", " ", "\n", ":", ": ", "：", "Dr.", "Lee", "x" * 30, "\t", "漢"]),
                min_size=1, max_size=30).map("".join), st.lists(st.integers(0, 200), min_size=1, max_size=20))
def test_the_next_word_and_a_label_are_read_as_a_window_would_read_them(text, offsets):
    """The wrap reader's next word and label tests, walked and searched instead of read from a window of
    ``_WORD_MAX + 1`` characters per line (what they were): the same answers, at the text's end too. A label's
    colon stands before a space or a tab on the line itself (``bob: hi``; not ``tracker is:`` at a line's end,
    nor the next line's ``**GC**: Garbage``)."""
    from logichunk.text import soft_wraps as sw
    from logichunk.text.end_candidates import _units
    from logichunk.text.sentence_chars import _F_WS, _flags

    cp, fl = _units(text), _flags()
    n = cp.size
    w = np.array(sorted(min(o, n - 1) for o in offsets), dtype=np.int64)
    at = np.minimum(w[:, None] + np.arange(sw._WORD_MAX + 1), n - 1)
    chars = cp[at]
    space = ((fl[chars] & _F_WS) != 0) | (w[:, None] + np.arange(sw._WORD_MAX + 1) >= n)
    word = np.argmax(space[:, :-1] | (np.arange(sw._WORD_MAX) == sw._WORD_MAX - 1), axis=1)
    assert sw._word_length(cp, fl, w).tolist() == word.tolist()

    def labels(units: np.ndarray) -> list[bool]:
        """A colon before a space or a tab (a colon that ends its line is a lead-in's), or a full-width
        colon, in the window, with no line break before it."""
        m = units.size
        c = units[np.minimum(w[:, None] + np.arange(sw._WORD_MAX + 1), m - 1)]
        blank = ((c[:, 1:] == 0x20) | (c[:, 1:] == 0x09)) & (w[:, None] + np.arange(1, sw._WORD_MAX + 1) < m)
        colon = ((c[:, :-1] == 0x3A) & blank) | (c[:, :-1] == 0xFF1A)
        return (colon & (np.cumsum(c[:, :-1] == 0x0A, axis=1) == 0)).any(axis=1).tolist()

    def line_ends(units: np.ndarray) -> np.ndarray:
        breaks = np.append(np.flatnonzero(units == 0x0A), units.size)
        return breaks[np.searchsorted(breaks, w)]

    assert sw._labelled(cp, fl, w, line_ends(cp)).tolist() == labels(cp)
    # in a long text the colons are looked for in the lines' own first characters: the same answers
    padded = _units(text + " " * (sw._WORD_MAX * 4 * w.size + 1))
    assert sw._labelled(padded, fl, w, line_ends(padded)).tolist() == labels(padded)


def _simple_table(rows: int) -> str:
    """A reStructuredText simple table wider than the prose around it (aws-cli's documents lay their
    settings out so): rules of ``=`` and ``-`` and rows aligned in columns by runs of spaces."""
    rule = "=" * 24 + " " + "=" * 14 + " " + "=" * 26 + " " + "=" * 32
    sep = rule.replace("=", "-")
    out = [rule, f"{'Variable':<24} {'Option':<14} {'Config Entry':<26} {'Description':<32}", rule]
    for k in range(rows):
        out += [f"{'name_' + str(k):<24} {'--name-' + str(k):<14} {'entry_' + str(k):<26} {'What setting ' + str(k) + ' does':<32}",
                sep]
    return "\n".join(out[:-1] + [rule]) + "\n"


@pytest.mark.parametrize("rows", [3, 12, 30])
def test_a_table_wider_than_the_prose_does_not_set_the_wrap_width(rows):
    """The width is read from the lines that a single line break follows: a wide table's rows and rules
    (aligned by runs of three spaces or more, or a rule's characters at both ends) are no prose, so the
    prose around a table of any length is still read as wrapped."""
    text = f"{TALE}\n{_simple_table(rows)}\n{TALE}"
    assert max(map(len, _simple_table(rows).splitlines())) > 90 > max(map(len, TALE.splitlines()))
    s = split_both_ways(text)
    prose = [t for t in s.texts() if not t.startswith(("name_", "===", "---", "Variable"))]
    assert [t.split()[-1] for t in prose] == ["incredulity.", "despair.", "France."] * 2  # its sentences
    table = [t for t in s.texts() if t.startswith(("name_", "===", "---"))]
    assert len(table) == 2 * rows + 2  # every row and rule a line of its own


def test_a_wrapped_lead_in_and_wrapped_items_are_read_as_wrapped():
    """A line that ends with a colon is a lead-in's last line, not a speaker's label (``the issue tracker
    is:`` goes on from the line above); and a label is read on its own line only (an item's wrapped last
    word is no label because the next item opens ``* **GC**: Garbage``)."""
    text = ("## Voting\n\nThe council meets every month and records each decision in the public minutes so\n"
            "that everyone can follow along. Members who miss a meeting can catch up later on the\n"
            "mailing list. The council seeks to resolve as many issues as possible outside of\n"
            "meetings using the issue tracker. The process in\nthe issue tracker is:\n\n"
            "* A member opens an issue explaining the proposal.\n* Other members comment and vote within one week.\n\n"
            "* **ESM**: ECMAScript modules - the official standard format to package JavaScript code for\n  reuse.\n"
            "* **GC**: Garbage collection - the automatic process that reclaims memory no longer used by the\n"
            "  program.\n")
    s = split_both_ways(text)
    texts = s.texts()
    assert any(t.startswith("The process in\nthe issue tracker is:") for t in texts)
    assert any("code for\n  reuse." in t for t in texts)
    for max_size in (200, 300):
        for c in chunk(text, max_size=max_size, levels=1).roots():
            part = text[c.span.start : c.span.end]
            assert not part.startswith(("the issue", "reuse.")), (max_size, part)


CODE_WITH_DOCSTRINGS = '''class Limiter:
    """A context manager for ensuring that a resource is only used by a single task at a
    time, and for counting the tasks that wait on it until the resource is free again.

    Acquire a token for the current task, waiting if necessary for one to become
    available; release it when the work is done, or the next task waits forever.
    """

    def __init__(self, total_tokens, fast_acquire, borrowed_tokens, initial_value):
        self.total_tokens_of_this_limiter_for_every_task = total_tokens
        self.fast_acquire_of_this_limiter_for_every_task = fast_acquire
        self.borrowed_tokens_of_this_limiter_for_each_one = borrowed_tokens
        if initial_value_of_this_limiter_is_not_given_here_at_all_now(initial_value) {
            return get_async_backend_of_this_library().create_capacity_limiter(total_tokens);
        }
        run_the_shell_command_over_here_with_every_argument_that_we_have $argument
        and_then_the_next_one_over_here_with_every_argument_that_we_have = result
'''


def test_code_statements_are_not_wrapped_prose_around_their_wrapped_docstrings():
    """A source file whose docstrings are wrapped prose reads as wrapped; its statements are not: a line that
    assigns (``=``) or runs a shell variable, or ends as a statement does (``{``, ``}``, ``(``,
    ``[``, ``);``) is never joined to the line before or after it, while the docstring's lines still are."""
    s = split_both_ways(CODE_WITH_DOCSTRINGS)
    texts = [" ".join(t.split()) for t in s.texts()]
    assert any(t.startswith('"""A context manager') and t.endswith("resource is free again.") for t in texts)
    assert any(t.startswith("Acquire a token") and t.endswith("the next task waits forever.") for t in texts)
    starts = [t.split()[0] for t in texts]
    for first in ("self.total_tokens_of_this_limiter_for_every_task", "self.fast_acquire_of_this_limiter_for_every_task",
                  "self.borrowed_tokens_of_this_limiter_for_each_one", "if", "return", "}",
                  "run_the_shell_command_over_here_with_every_argument_that_we_have",
                  "and_then_the_next_one_over_here_with_every_argument_that_we_have"):
        assert first in starts, first


_MANY_PIECES = ["The old man walked slowly towards the\nriver and the morning light, the quiet\nhouses of the town. ",
                "def area(shape):\n    return shape.w * shape.h\n", "x = f(a);\nif (x) {\n", "- an item of a list\n",
                "bob: hello there\nalice: hi\n", "| a | b |\n|---|---|\n", "用户通常选择从某个\nLinux 发行版安装软件，\n",
                "源代码\n，编译这些程序\n", "\n\n", "\n", "  indented line\n", "Short Title\n", "\"Quoted\" start\n",
                "(see the table below) twice a year\n", "```\ncode block\n```\n", "wrapped by hand, line\nby line it goes\n",
                "A" * 45 + "\n", "end.", "\f", "|", "\t", ":", "$x", "12. item\n", "# heading\n", "漢字の文。"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_MANY_PIECES), min_size=0, max_size=25).map("".join), min_size=0, max_size=12))
def test_many_texts_split_together_are_each_split_as_alone(texts):
    """``split_many`` reads the short texts' soft wraps in one pass (their lines laid end to end): each
    text's sentences, breaks and wraps are the ones it has alone — its own width, its own verdict."""
    for got, text in zip(split_many(texts), texts, strict=True):
        alone = split_sentences(text)
        assert got.text == text
        assert got.starts.tolist() == alone.starts.tolist() and got.breaks.tolist() == alone.breaks.tolist()


def test_a_wrapped_text_among_unwrapped_ones_keeps_its_wraps_and_they_keep_their_lines():
    wrapped = wrap(TALE, 72)
    texts = ["def f(x):\n    return x\n", wrapped, "bob: hi\nalice: hello\n", "", wrapped.replace("\n", "\n\n")]
    got = split_many(texts)
    assert [len(g) for g in got] == [len(split_sentences(t)) for t in texts]
    assert got[1].texts() == split_sentences(wrapped).texts() and len(got[1]) < wrapped.count("\n")


def test_many_texts_read_a_group_at_a_time_are_the_same(monkeypatch):
    import logichunk.text.sentences as sentences_mod

    texts = [wrap(TALE, w) for w in (60, 72, 80)] + [p * 3 for p in _MANY_PIECES]
    whole = split_many(texts)
    monkeypatch.setattr(sentences_mod, "_MANY_CHARS", 64)  # a pass every few texts
    for a, b in zip(split_many(texts), whole, strict=True):
        assert a.starts.tolist() == b.starts.tolist() and a.breaks.tolist() == b.breaks.tolist()


# --------------------------------------------------------------------------- the compiled reader

_PROSE_WORDS = ["the", "river", "which", "we", "measured", "and", "over", "quiet", "houses", "of", "a", "town",
                "thought,", "slowly", "walked", "towards", "morning", "light;", "well-", "known", "中文的", "源代码"]
_ODD_WORDS = ["Alice", "It", "I", "then.", "(see", "table)", '"quietly"', "“gently”", "`code`", "x = 1", "f(a);",
              "if (x) {", "}", "items = [", "$HOME", "${x}", "$5", "bob:", "tracker is:", "张三：", "1.", "12.", "2.2.",
              "*", "-", "•", "，编译", "Linux", "|", "\t", "-----", "== ==", "   ", "Fig.", "e.g.", "😀", 'end."', "```",
              "# Title", "| a | b |", "1990", "。", "！"]
_LINE_QUIRKS = ["> ", "> > ", ">", ">  ", "  ", "    ", "* ", "12. ", "- ", "\n", "\r", " ", "\f", "\u3000", "\t"]


@st.composite
def wrapped_texts(draw) -> str:
    """Mostly lower-case prose broken into lines at a drawn width (so that most texts read as wrapped), with
    odd words among it and some lines opened by a quirk (a blank line, quote marks, an indent, a list marker,
    a CR, a form feed): every rule of the wrap reader meets some line."""
    odd = draw(st.integers(0, 8))  # (one word in 10 odd, at most)
    words = draw(st.lists(st.sampled_from(_PROSE_WORDS * 10 + _ODD_WORDS * odd), min_size=40, max_size=300))
    width = draw(st.sampled_from([16, 40, 48, 60, 72]))
    quirks = draw(st.lists(st.one_of(st.just(""), st.sampled_from(_LINE_QUIRKS)), min_size=1, max_size=40))
    lines, cur = [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return "\n".join(quirks[i % len(quirks)] + line for i, line in enumerate(lines))


def _numpy_only():
    """The splitter's numpy passes instead of the compiled kernels (as with ``LOGICHUNK_NATIVE=0``)."""
    from unittest import mock

    from logichunk import native

    return mock.patch.object(native, "_load", lambda: None)


# 120 cases of up to four texts (250 took ~30 s of the suite); the kernels' bits are also held by the
# quote-marks test below and tests/test_speed_identity*.py
@settings(max_examples=120, deadline=None)
@given(st.lists(wrapped_texts(), min_size=1, max_size=4))
def test_the_compiled_wrap_reader_reads_as_the_numpy_passes(texts):
    """The soft wraps read in C (next letters, the reader's verdicts, quote marks, columns, tabular lines:
    :func:`logichunk.native.wrap_read` and its kin, on 1-, 2- and 4-byte code units) are the numpy passes'
    ones, bit for bit: each text's own reading, the splits of both paths, and several texts read together."""
    import logichunk.text.sentences as sentences_mod
    from logichunk import native
    from logichunk.text.sentences import _split_scalar, _split_vector
    from logichunk.text.soft_wraps import soft_wraps

    assert native.available(), native.status()
    readings = []
    real = sentences_mod.soft_wraps

    def keep(*args):
        readings.append(args)
        return real(*args)

    def run():
        return ([_split_vector(t) for t in texts], [_split_scalar(t, None) for t in texts],
                [(s.starts, s.breaks) for s in split_many(texts)])

    from unittest import mock

    with mock.patch.object(sentences_mod, "soft_wraps", keep):
        fast = run()
    with _numpy_only():
        slow = run()
        by_numpy = [soft_wraps(*args) for args in readings]
    for a, b in zip(fast, slow, strict=True):
        for x, y in zip(a, b, strict=True):
            assert all(np.array_equal(p, q) and p.dtype == q.dtype for p, q in zip(x, y, strict=True)), texts
    for args, want in zip(readings, by_numpy, strict=True):
        got = soft_wraps(*args)
        assert got.dtype == want.dtype and np.array_equal(got, want), texts


@settings(max_examples=400, deadline=None)
@given(wrapped_texts(), st.lists(st.tuples(st.integers(0, 40), st.integers(0, 3)), min_size=1, max_size=30),
       st.sampled_from([np.uint8, np.uint16, np.uint32]))
def test_the_compiled_quote_marks_and_columns_read_as_the_numpy_passes(text, moves, dtype):
    """``_past_quote_marks`` and ``_columns`` in C and in numpy, on every line of a text (its text start moved
    into the line by a drawn step, its end at its terminator or short of it), in every code unit width."""
    from logichunk.text import soft_wraps as sw
    from logichunk.text.charclass import codepoints

    cp = codepoints(text)
    if dtype != np.uint32:
        if int(cp.max(initial=0)) > np.iinfo(dtype).max:
            return
        cp = cp.astype(dtype)
    n = cp.size
    nl = np.flatnonzero(cp == 0x0A)
    if n == 0 or nl.size == 0:
        return
    start = np.concatenate(([0], nl[:-1] + 1))
    step = np.array([moves[i % len(moves)][0] for i in range(nl.size)], np.int64)
    short = np.array([moves[i % len(moves)][1] for i in range(nl.size)], np.int64)
    ts = np.minimum(start + step, nl)
    te = np.maximum(nl - short, ts)
    fast = sw._past_quote_marks(cp, ts, te), sw._columns(cp, ts, te)
    with _numpy_only():
        slow = sw._past_quote_marks(cp, ts, te), sw._columns(cp, ts, te)
    for a, b in zip(fast, slow, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b), (text, ts, te)

"""In a text read as source code, a line break ends a sentence: lines of code are never joined as soft-wrapped
prose (text/sentences.py's ``_code_apart``, read by text/code_text.py); a comment's and a docstring's wrapped lines
still are. A Python docstring's closing quotes alone on their line close it (text/code_lines.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.sentences import _split_scalar, _split_vector, split_many, split_sentences
from logichunk.text.structure import layout

# (semicolon-free JavaScript whose long comments go on in lower case into the code under them: the splitter read
# the text as hard-wrapped prose and joined a list's lines, "i--" to "continue", a comment to its code)
JS = """const cli = require('./cli.js')

// run the resulting command as the exec command, with every argument passed on as it was given
process.argv.splice(2, 0, 'exec')

// the switches that take no value, in the order the help text lists them for the user
const switches = new Set([
  'always-spawn',
  'ignore-existing',
  'shell-auto-fallback',
  'quiet',
])

let i = 2
for (; i < process.argv.length; i++) {
  const arg = process.argv[i]
  if (arg === '--') {
    i--
    continue
  }
  // a positional argument was found: put the separator in front of it, and the reading is done
  process.argv.splice(i, 0, '--')
}
/*
  The parser reads the arguments one by one and it stops at the first one that
  is not an option, which names the package to run.
*/
cli(process)
"""

PY = '''"""Read the configuration of a project and merge it with the defaults that
the command line gives.
"""

import os
import sys


def load(path):
    """Load the file at path and return its parsed contents as a mapping of
    names to values.
    """
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        text = f.read()
    return parse(text)
'''

PROSE = """The reader of a configuration file (the one named in the {braces} of the template) goes on
reading until the end of the line, and the comment marks, # or ;, start a comment that
runs to the end of that line; a value may be quoted, and then it keeps its spaces and
the marks inside it are no comment at all, which most readers of such files expect.
"""


def _opens_sentence(text: str, line: str) -> bool:
    sents = split_sentences(text)
    return text.index(line) in set(sents.starts.tolist())


def _one_sentence(text: str, a: str, b: str) -> bool:
    sents = split_sentences(text)
    i, j = (int(np.searchsorted(sents.starts, text.index(x), side="right")) - 1 for x in (a, b))
    return i == j


def test_each_line_of_code_is_a_sentence():
    for line in ("process.argv.splice(2, 0, 'exec')", "'ignore-existing',", "'quiet',", "continue",
                 "process.argv.splice(i, 0, '--')"):
        assert _opens_sentence(JS, line), line
    assert _opens_sentence(PY, "import sys")
    assert _opens_sentence(PY, "return parse(text)")


def test_a_comment_and_a_docstring_keep_their_wrapped_lines_together():
    assert _one_sentence(JS, "The parser reads", "is not an option")
    assert _one_sentence(PY, '"""Read the configuration', "the command line gives.")
    assert _one_sentence(PY, '"""Load the file', "names to values.")
    # (prose that holds a brace and a hash is no code: its wrapped lines stay one sentence)
    assert _one_sentence(PROSE, "The reader", "runs to the end")


def test_the_scalar_and_vector_paths_and_split_many_agree_on_code():
    for text in (JS, PY, PROSE):
        a, b = _split_scalar(text, None), _split_vector(text)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        one, many = split_sentences(text), split_many([text, PROSE])[0]
        assert np.array_equal(one.starts, many.starts) and np.array_equal(one.breaks, many.breaks)


def test_a_docstrings_closing_quotes_alone_close_it():
    sents = split_sentences(PY)
    lay = layout(sents)
    shut = [i for i, s in enumerate(sents.texts()) if s.strip() == '"""']
    assert len(shut) == 2
    assert all(lay.no_cut[i - 1] for i in shut)  # (a heading's bond before it: it never opens a chunk)
    for m in (150, 180, 220, 260):  # (each function head, docstring and closing line fit)
        tree = chunk(PY, sizes=(m,))
        assert all(PY[c.span.start : c.span.end].strip().split("\n", 1)[0].strip() != '"""'
                   for c in tree if c.level == 1 and c.span.start > 0), m


_NAMES = st.sampled_from(["a", "b", "n", "total", "item", "x"])


@st.composite
def _lines(draw, depth: int = 1) -> list[str]:
    """Lines of a brace language, some without a semicolon and opening in lower case, and long comments that go
    on in lower case into the code under them (what the soft-wrap reading took for wrapped prose)."""
    out: list[str] = []
    pad = "  " * depth
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["stmt", "bare", "block", "comment"] if depth < 3 else ["stmt", "bare", "comment"]))
        name = draw(_NAMES)
        if kind == "stmt":
            out.append(f"{pad}{name} = {name} + {draw(st.integers(0, 99))};")
        elif kind == "bare":
            out.append(f"{pad}{name}++")
            out.append(f"{pad}continue")
        elif kind == "comment":
            out.append(f"{pad}// the value of {name} goes up once more here, as the loop over the items asks it to do")
            out.append(f"{pad}update({name}, 'x')")
        else:
            out.append(f"{pad}if ({name} > {draw(st.integers(0, 9))}) {{")
            out.extend(draw(_lines(depth + 1)))
            out.append(f"{pad}}}")
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_lines(), min_size=2, max_size=4))
def test_generated_code_keeps_every_line_a_sentence(bodies):
    text = "\n\n".join("function f{}(a, b) {{\n{}\n  return a;\n}}".format(k, "\n".join(b))
                       for k, b in enumerate(bodies)) + "\n"
    sents = split_sentences(text)
    starts = set(sents.starts.tolist())
    at = 0
    for line in text.split("\n"):
        if line.strip() and at:
            assert at + len(line) - len(line.lstrip()) in starts, line
        at += len(line) + 1
    a, b = _split_scalar(text, None), _split_vector(text)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])

"""The user's maximum over documents generated from many kinds' lines at once (issue 18: "no chunk over its
limit unless one sentence is"): Markdown, reStructuredText literal blocks and directives, org-mode, source code
passed as text, Chinese official documents, licences, man pages' tabs and hyphens, doctests. Each kind's rules
keep some run whole where it fits; two such runs that overlap without nesting chained into a level-1 chunk over the
maximum with no bubble (a literal block's ``::`` line: 514 under 450, 154 under 120, 306 under 291)."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.chunkers.logic_chain import level_sizes
from logichunk.text.sentences import split_sentences

_PARTS = ["# A heading\n\n", "## Sub heading\n", "Plain sentence one. ", "Another sentence here! ", "\n\n",
          "1.2 Numbered title\n\n", "标题行\n\n", "中文句子在这里。", "- a list item\n", "| a | b |\n",
          "```\ncode line\n```\n", "```py\n", "```\n", "Short\n\n", "The steps are:\n", "步骤如下：\n",
          "In an ideal world we could do this, something like::\n\n", "    indented code line\n",
          "        deeper = code(1)\n", ".. note::\n\n   The note's body goes here.\n\n",
          ".. code-block:: python\n   :linenos:\n\n", "   :alt: A picture. Of a cat.\n", "* Org heading\n",
          ":PROPERTIES:\n:ID: 8f2a\n:END:\n", "  :LOGBOOK:\n  CLOCK: [2024]\n  :END:\n", "#+BEGIN_SRC sh\n",
          "#+END_SRC\n", "#!/bin/sh\n", "import os\n", "def f(x):\n", "    return x\n", "# a comment line\n",
          "class A:\n", "（一）加强消防安全管理。\n\n", "一、提高思想认识\n\n",
          "13. Use with the GNU Affero General Public License.\n\n", "\tTabbed indent line goes on here and on\n",
          "follow‐\n\ting words\n", "<!-- note\n", "-->\n",
          "A long paragraph line that goes on well past eighty characters, so a title line can title it.\n",
          "\f", "--- Day changed Mon Jan 01 2024\n", "  1. Source Code.\n\n", ">>> array([[0.],\n", "       [1.]])\n",
          ":param x: the value.\n", ":noindex:\n"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PARTS), min_size=1, max_size=50), st.sampled_from([30, 40, 60, 80, 120, 200, 300]),
       st.booleans())
@example(["In an ideal world we could do this, something like::\n\n", "    indented code line\n",
          "    indented code line\n", "In an ideal world we could do this, something like::\n\n"], 120, False)
@example(["Conversion from ctypes to dtype.\n\n", "In an ideal world, we could achieve this through the PEP3118 buffer "
          "protocol, something like::\n\n"] + ["    value = compute(1)\n"] * 12 + ["\n", "    def f(t):\n",
          "    def f(t):\n", "\nUnfortunately, this fails.\n"], 291, True)
def test_no_level_1_chunk_exceeds_the_maximum_and_levels_tile(parts, max_size, three):
    text = "".join(parts)
    sizes = level_sizes(max_size) if three else (max_size, max_size // 2)
    tree = chunk(text, sizes=sizes)
    roots = list(tree.roots())
    assert "".join(tree.text_of(c) for c in roots) == text
    seams = split_sentences(text).seams().tolist()
    for c in roots:
        if c.span.end - c.span.start > max_size:  # (only one sentence over the maximum may be)
            assert not any(c.span.start < s < c.span.end for s in seams), (c.id, c.span, max_size)
    for c in tree:
        kids = list(tree.children(c.id))
        if kids:
            assert kids[0].span.start == c.span.start and kids[-1].span.end == c.span.end
            assert all(a.span.end == b.span.start for a, b in zip(kids, kids[1:], strict=False))

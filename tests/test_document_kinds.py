"""Document kinds the layout read wrongly (the thirty-third session, issue 18): reStructuredText's directives,
numbered licence clauses whose titles keep small words in lower case, org-mode's drawers, and source code passed
as text. Each reading is fixed from the format's own convention; each test fails on the reading before it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.text.line_kinds import fence_spans
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import SECTION, layout
from structure_helpers import assert_headings_open_chunks, split_both_ways


class _LevelOne:
    """A tree's level-1 chunks, as :func:`assert_headings_open_chunks` reads a tree (its deeper levels' limits are
    the chunker's own)."""

    def __init__(self, tree):
        self.tree = tree

    def __iter__(self):
        return iter(self.tree.roots())

    def get(self, cid):
        return self.tree.get(cid)


def _sentence_at(sents, text: str, piece: str) -> int:
    return int(np.searchsorted(sents.starts, text.index(piece), side="right")) - 1


def _ends(tree) -> set[int]:
    return {c.span.end for c in tree}


# --- reStructuredText's directives ------------------------------------------------------------------------------

RST = ("Using the thing\n===============\n\n"
       "Some intro text that explains what the module does. It has two sentences.\n\n"
       ".. Note:: The cache is shared. Clear it with care.\n\n"
       ".. note::\n\n   This is a note. It has a second sentence inside the note.\n\n"
       ".. image:: picture.png\n   :alt: A picture. Of a cat.\n   :width: 200px\n\n"
       "After the directives the text goes on. Another sentence here.\n")
RST_ZH = ("使用说明\n========\n\n"
          ".. Note:: 缓存是共享的。清理时要小心。\n\n"
          ".. image:: picture.png\n   :alt: 一张图。一只猫。\n   :width: 200px\n\n"
          "指令之后正文继续。还有一句。\n")


@pytest.mark.parametrize("text, directive", [(RST, ".. Note:: The cache"), (RST_ZH, ".. Note:: 缓存")])
def test_a_directive_with_a_capital_name_is_no_ellipsis(text, directive):
    """``.. Note::`` opens a line with two dots and a capital: an ellipsis before a capital ends a sentence, so
    the splitter parted ``.. `` from the directive's name (numpy's ``.. Contents::``); both splitter paths."""
    sents = split_both_ways(text)
    k = _sentence_at(sents, text, directive)
    assert sents.texts()[k].startswith(directive)


@pytest.mark.parametrize("text, option", [(RST, "   :alt: A picture. Of a cat.\n"), (RST_ZH, "   :alt: 一张图。一只猫。\n")])
def test_a_directives_option_is_one_field(text, option):
    """An option's value is one field (``:alt: A picture. Of a cat.``), not sentences; the options stay with
    their directive's line as its head: no chunk ends inside the head."""
    sents = split_both_ways(text)
    k = _sentence_at(sents, text, option.strip())
    assert sents.texts()[k].strip() == option.strip()
    from logichunk.text.line_kinds import directive_options

    head_start = text.index(".. image::")
    head_end = text.index(":width: 200px") + len(":width: 200px\n")
    assert directive_options(text) == [(text.index(option), head_end - 1)]
    after = text.index("After") if "After" in text else text.index("指令之后")
    for max_size in range(after - head_start, 200, 5):  # (level 1, where the head fits with its blank line)
        roots = chunk(text, max_size=max_size).roots()
        assert not {e for e in _ends(roots) if head_start < e < head_end}, max_size


def test_a_directive_line_over_its_body_is_no_literal_block():
    """``.. note::`` over a blank line and indented lines is a directive and its body, not reStructuredText's
    literal block (only a paragraph's ``::`` opens one): its text is prose, cut into sentences; a code directive
    is still code."""
    assert not [a for a, _ in fence_spans(RST) if RST[a:].startswith(".. note::") or RST[a:].startswith("::")]
    sents = split_both_ways(RST)
    assert "This is a note. " in sents.texts()
    code = ".. code-block:: python\n   :caption: Example. See the docs.\n\n   x = f(1). y = 2\n\nText after it.\n"
    assert [code[a:b] for a, b in fence_spans(code)] == [code[: code.index("y = 2") + 5]]
    texts = split_both_ways(code).texts()
    assert ":caption: Example. See the docs.\n\n   " in texts and "x = f(1). y = 2\n\n" in texts


def test_a_wrapped_paragraph_over_a_literal_block_is_its_lead_in():
    """A paragraph that ends with ``::`` introduces its literal block even where it wraps over two lines (awscli's
    ``... specified by`` over ``creating a section titled "profile profilename"::``): the limit breaks that lead-in's
    bond, not the block, which fits alone (read only for one line, the wrapped one held the block as a heading does
    and the cut fell inside the block)."""
    text = ("Config File Format\n==================\n\n"
            "The AWS CLI config file, which defaults to ``~/.aws/config``, holds one section\n"
            "for each profile you use, and a profile that is not the default one is named\n"
            "by a section titled with the word profile and its name, as\nfollows::\n\n"
            "    [default]\n    aws_access_key_id=foo\n    aws_secret_access_key=bar\n    region=us-west-2\n\n"
            "The ``default`` section refers to the configuration values for the default profile.\n")
    sents = split_sentences(text)
    lay = layout(sents)
    k = _sentence_at(sents, text, "follows::")
    assert sents.texts()[k].startswith("The AWS CLI") and lay.lead_in[k] and lay.introduces[k]
    block = (text.index("    [default]"), text.index("region=us-west-2") + len("region=us-west-2"))
    for max_size in range(block[1] - block[0] + 8, len(text), 5):
        ends = _ends(chunk(text, max_size=max_size).roots())
        assert not {e for e in ends if block[0] < e < block[1]}, max_size


# --- a licence's numbered clauses --------------------------------------------------------------------------------

def _gpl_like(title: str) -> str:
    return ("  12. No Surrender of Others' Freedom.\n\n"
            "  If conditions are imposed on you that contradict the conditions of this License, they do not\n"
            "excuse you from the conditions of this License.\n\n"
            f"  {title}\n\n"
            "  Notwithstanding any other provision of this License, you have permission to link or combine any\n"
            "covered work with a work licensed under version 3 of the GNU Affero General Public License.\n")


@pytest.mark.parametrize("title", ["13. Use with the GNU Affero General Public License.",
                                   "14. Revised Versions of this License.",
                                   "3. Protecting Users' Legal Rights From Anti-Circumvention Law."])
def test_a_clause_title_keeps_its_small_words_in_lower_case(title):
    """Title case keeps prepositions, conjunctions and demonstratives in lower case whatever their length (the
    GPL's ``13. Use with the GNU ...``): the four-letter ``with`` and ``this`` made clauses 13 and 14 prose."""
    text = _gpl_like(title)
    sents = split_sentences(text)
    lay = layout(sents)
    k = _sentence_at(sents, text, title)
    assert lay.heading[k] and lay.strength[k - 1] == SECTION
    for max_size in (150, 250, 400):
        assert_headings_open_chunks(_LevelOne(chunk(text, max_size=max_size)), text, (max_size,))


@pytest.mark.parametrize("line", ["1. Preheat the oven.", "3. Mix with the flour.", "2. Wait with them there.",
                                  "4. Stir this mixture well.", "5. Read the notes above.",
                                  "6. Try it without."])
def test_a_numbered_step_stays_prose(line):
    """Only the closed class of small words is let off, and not as the last word (title case capitalises it): a
    step's other lower-case words still make it prose."""
    text = _gpl_like(line)
    sents = split_sentences(text)
    assert not layout(sents).heading[_sentence_at(sents, text, line)]


ZH_NOTICE = ("关于做好冬季安全生产工作的通知\n\n各区县人民政府，市政府各部门：\n\n"
             "为切实做好今年冬季安全生产工作，现将有关事项通知如下。\n\n"
             "一、提高思想认识\n\n"
             "（一）强化责任意识。各地各部门要充分认识冬季安全生产工作的重要性和紧迫性，牢固树立安全发展理念。\n\n"
             "二、突出工作重点\n\n"
             "（一）加强道路交通安全管理。\n\n"
             "1. 严查超速、超载、疲劳驾驶等违法行为。各级交警部门要加大路面巡逻力度。\n"
             "2. 做好雨雪冰冻天气应对准备。及时发布预警信息，必要时采取交通管制措施。\n"
             "3. 加强客运车辆和危险品运输车辆的动态监控。\n\n"
             "（二）加强消防安全管理。\n\n"
             "1. 开展人员密集场所消防安全检查。重点检查商场、医院、学校、养老院等场所。\n"
             "2. 加强居民用火用电安全宣传，防止因取暖引发火灾。\n\n"
             "特此通知。\n")


def test_a_chinese_notices_numbered_title_with_a_full_stop_heads_its_items():
    """A Chinese official document titles its 一、 and （一） depths with a full stop too (GB/T 9704's
    ``（二）加强消防安全管理。`` alone over its items): a heading, so no chunk ends with it (one did at 60 and 80);
    run in at its paragraph's start (``（一）强化责任意识。各地...``) it is bonded to its text; an item under it, a longer
    sentence or one with other marks stays prose."""
    text = ZH_NOTICE
    sents = split_sentences(text)
    lay = layout(sents)
    for title in ("（一）加强道路交通安全管理。", "（二）加强消防安全管理。"):
        assert lay.heading[_sentence_at(sents, text, title)], title
    assert lay.no_cut[_sentence_at(sents, text, "（一）强化责任意识。")]
    for max_size in range(50, 300, 10):
        tree = chunk(text, max_size=max_size)
        assert_headings_open_chunks(_LevelOne(tree), text, (max_size,))
        assert not [c for c in tree.roots() if text[: c.span.end].rstrip().endswith("加强消防安全管理。")], max_size


@pytest.mark.parametrize("line", ["（二）甲方应于合同签订后支付百分之五十，余款验收后支付。",
                                  "3. 加强客运车辆和危险品运输车辆的动态监控。", "一、我们在会议上讨论了今年冬季安全生产工作的主要任务和具体安排。"])
def test_a_chinese_numbered_sentence_stays_prose(line):
    text = f"第三条 服务费用\n\n{line}\n\n甲方应当为乙方提供必要的工作条件和技术资料。\n"
    sents = split_sentences(text)
    assert not layout(sents).heading[_sentence_at(sents, text, line)]


# --- org-mode's drawers ------------------------------------------------------------------------------------------

ORG = ("#+TITLE: Project notes\n\n"
       "* Planning the release\n"
       "  :PROPERTIES:\n  :ID:       8f2a-11\n  :CREATED:  [2024-05-03 Fri 10:12]\n  :END:\n"
       "  :LOGBOOK:\n  CLOCK: [2024-05-03 Fri 10:12]--[2024-05-03 Fri 11:40] =>  1:28\n"
       "  - Note taken on [2024-05-03 Fri 11:00] \\\\\n    Talked to Ann. She agreed.\n  :END:\n\n"
       "The release needs a changelog and a tag. We also want the docs rebuilt before the tag goes out.\n\n"
       "** Tasks for the docs\n   :PROPERTIES:\n   :EFFORT: 2:00\n   :END:\n\n"
       "Rebuild the manual. Check every link. Upload the result to the site.\n")
ORG_ZH = ("#+TITLE: 计划\n\n* 发布计划\n  :PROPERTIES:\n  :ID:       8f2a-11\n  :CREATED:  [2024-05-03 Fri 10:12]\n  :END:\n\n"
          "发布需要更新日志和标签。文档也要在打标签之前重新生成。\n\n"
          "** 文档任务\n   :PROPERTIES:\n   :EFFORT: 2:00\n   :END:\n\n"
          "重新生成手册。检查每个链接。把结果上传到网站。\n")


def _drawers(text: str) -> list[tuple[int, int]]:
    out, at = [], 0
    while (a := text.find(":PROPERTIES:", at)) >= 0 or (a := text.find(":LOGBOOK:", at)) >= 0:
        b = text.index(":END:", a) + len(":END:")
        out.append((a, b))
        at = b
    return out


@pytest.mark.parametrize("text", [ORG, ORG_ZH])
def test_an_org_drawer_is_one_block_under_its_heading(text):
    """A drawer (``:PROPERTIES:`` ... ``:END:``) is its heading's metadata: one block, kept whole where it fits
    (a chunk ended mid-drawer, the next opened with ``:END:``); the heading still opens its section, and the
    closing ``:END:`` introduces nothing, for all its colon."""
    drawers = _drawers(text)
    assert [s for s in fence_spans(text) if any(a <= s[0] < b for a, b in drawers)] == drawers
    sents = split_sentences(text)
    lay = layout(sents)
    for title in ("* Planning the release", "** Tasks for the docs", "* 发布计划", "** 文档任务"):
        if title in text:
            assert lay.heading[_sentence_at(sents, text, title)], title
    for _, b in drawers:
        assert not lay.lead_in[_sentence_at(sents, text, text[b - len(":END:") : b])]
    for max_size in range(60, 400, 10):
        tree = chunk(text, max_size=max_size)
        assert_headings_open_chunks(_LevelOne(tree), text, (max_size,))
        for a, b in drawers:
            line = text.rfind("\n", 0, a) + 1
            above = text.rfind("\n", 0, line - 1) + 1
            held = above if text[above] == "*" else a  # (a headline over the drawer: the heading's bond holds it)
            if b - held <= max_size - 8:  # (the drawer, its heading and blank lines fit level 1)
                assert not {e for e in _ends(tree.roots()) if a < e < b}, (max_size, text[a:b])


def test_a_drawer_needs_its_end_line():
    """Without its ``:END:`` line (or with a headline before it) a line like ``:PROPERTIES:`` opens nothing."""
    assert fence_spans("* A\n  :PROPERTIES:\n  :ID: 1\n\nText.\n") == []
    assert fence_spans("* A\n  :NOTES:\n  text\n* B\n  :END:\n") == []


# --- source code passed as text ----------------------------------------------------------------------------------

PY = ('"""A tool."""\n\nimport os\nimport sys\n\nDEFAULT_PATH = "/tmp"\n\n\n'
      "# Helpers for the command line\n"
      "def parse(argv):\n    args = argv[1:]\n    return args\n\n\n"
      "# Main entry point\n"
      'def main():\n    path = os.environ.get("X", DEFAULT_PATH)\n    print(path)\n    return 0\n')


@pytest.mark.parametrize("text", [PY, "#!/bin/sh\nset -e\n\n# Build the docs\nmake html\n\n# Upload them\nrsync -a out/ host:\n"])
def test_a_comment_of_source_code_is_no_heading(text):
    """A Python module (it imports and defines at column 0, outside any fence) or a script (its ``#!`` line)
    passed as text: its ``# ...`` lines are comments on the code, not Markdown headings that open sections."""
    sents = split_sentences(text)
    lay = layout(sents)
    for i, t in enumerate(sents.texts()):
        if t.startswith("# "):
            assert not lay.heading[i] and lay.strength[i - 1] < SECTION, t


def test_markdown_with_a_fenced_module_keeps_its_headings():
    """The code reading counts only lines outside fences: a README that shows a module in a fence is Markdown."""
    text = ("# Usage\n\nRun the tool as shown below, from the project's root.\n\n"
            "```python\nimport os\n\ndef main():\n    return os.getcwd()\n```\n\n"
            "# Options\n\nThe tool takes no options yet, but it will.\n")
    sents = split_sentences(text)
    lay = layout(sents)
    for title in ("# Usage", "# Options"):
        assert lay.heading[_sentence_at(sents, text, title)], title


# --- a paragraph over a page break ---------------------------------------------------------------------------------

def _rfc_pages() -> str:
    header = "RFC 9999                 Frobnication Transfer              November 2026\n"
    def foot(n: int) -> str:
        return f"\n\nAuthor                       Experimental                     [Page {n}]\n\f" + header + "\n"
    page = "".join(f"   Line {k} of the page holds words about frobs and hosts and sessions.\n" for k in range(30))
    return ("1.  Introduction\n\n" + page + "\n   The session opens with a greeting from the client to the server"
            + foot(1) + "   and the server answers with its own greeting before any frob moves.\n\n"
            "2.  Overview\n\n" + page + foot(2) + "   More text closes the overview here.\n\n" + page + foot(3))


def test_a_paragraphs_one_line_over_a_page_footer_is_no_title():
    """A page break that leaves one line of a paragraph at a page's foot stands the line alone between blank lines
    (over the footer), as a title stands; the text under the next page's header goes on in lower case, so its
    sentence goes on over the page: no heading, and no cut between its two halves where the paragraph fits."""
    text = _rfc_pages()
    sents = split_sentences(text)
    lay = layout(sents)
    k = _sentence_at(sents, text, "The session opens")
    assert not lay.heading[k]
    a, b = text.index("The session opens"), text.index("and the server answers")
    for max_size in (400, 600, 1000):
        assert not {e for e in _ends(chunk(text, max_size=max_size).roots()) if a < e <= b}, max_size


# --- every reading keeps the spans --------------------------------------------------------------------------------

_PIECES = [RST, RST_ZH, ORG, ORG_ZH, PY, _gpl_like("13. Use with the GNU Affero General Public License."),
           ".. Contents::\n", "   :alt: x. Y.\n", ":END:\n", "  :LOGBOOK:\n", "# note\n", "#!/bin/sh\n", "\n", "A. B. "]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6), st.sampled_from([60, 150, 400]))
def test_spans_tile_over_these_kinds(pieces, max_size):
    """Whatever the mix, the splitter's two paths agree and every level of the tree tiles the text."""
    text = "".join(pieces)
    split_both_ways(text)
    tree = chunk(text, max_size=max_size)
    for level in {c.level for c in tree}:
        spans = sorted((c.span.start, c.span.end) for c in tree if c.level == level)
        parents = [c for c in tree if c.level == level - 1] if level > 1 else None
        if parents is None:
            assert spans[0][0] == 0 and spans[-1][1] == len(text)
            assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    for c in tree:
        kids = sorted((k.span.start, k.span.end) for k in tree if k.parent == c.id)
        if kids:
            assert kids[0][0] == c.span.start and kids[-1][1] == c.span.end
            assert all(a[1] == b[0] for a, b in zip(kids, kids[1:], strict=False))

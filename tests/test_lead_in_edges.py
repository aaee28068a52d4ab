"""Lead-ins at the edges the levels make (issue 18: a lead-in such as ``The steps are:`` / ``步骤如下：`` goes with
what it introduces where its bond and the start of that fit): a parent that ends with a lead-in, a fence a
level-1 cut parts, a chain of lead-ins; and the level-1 maximum around a fence's inner paragraph breaks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logichunk import boundaries as bd
from logichunk import chunk
from logichunk.boundaries import dp as bd_dp
from logichunk.chunkers.logic_chain import level_sizes
from logichunk.text.measure import Meter
from logichunk.text.sentences import split_sentences
from structure_helpers import assert_headings_open_chunks

_EDGES = {
    # a level-1 cut after the second lead-in: its parent ends with it, and what the first introduces ran on to it
    "en-parent": "A plain opening line is here.\nThe first steps are:\nStep alpha goes first.\nThe next steps are:\n"
                 "Step beta is a long line that goes on and on with many more words in it so that it is long.\n\n"
                 "An end paragraph is here.\n",
    "zh-parent": "这是开头的一行普通的话。\n第一组步骤如下：\n先做第一步。\n下一组步骤如下：\n"
                 "再做第二步，这一行很长很长，里面有很多很多的字，一直写下去，写到这一行足够长为止，还要再多写几个字。\n\n最后一段在这里。\n",
    # a level-1 cut inside the fence: the fence's part inside the parent fitted and was kept whole
    "en-fence": "Some text is here.\n\nAn addon can thus be initialized as\nin the following example:\n\n```cpp\n"
                "using namespace v8;\n\nextern void Initialize(Local<Object> exports) {\n"
                "  NODE_SET_METHOD(exports, \"hello\", Method);\n  NODE_SET_METHOD(exports, \"world\", Method);\n"
                "  NODE_SET_METHOD(exports, \"again\", Method);\n}\n```\n\nMore text follows.\n",
    "zh-fence": "这里是一些文字。\n\n插件可以这样初始化，代码如下：\n\n```cpp\nusing namespace v8;\n\n"
                "extern void Initialize(Local<Object> exports) {\n  NODE_SET_METHOD(exports, \"hello\", Method);\n"
                "  NODE_SET_METHOD(exports, \"world\", Method);\n  NODE_SET_METHOD(exports, \"again\", Method);\n}\n"
                "```\n\n后面还有文字。\n",
}


@pytest.mark.parametrize("name", sorted(_EDGES))
def test_below_level_1_a_lead_in_at_a_parents_edge_or_over_a_fence_it_cuts_off_keeps_its_run(name):
    """Below level 1 a chunk ended with ``The first steps are:`` / ``第一组步骤如下：`` where its parent ended with the
    next lead-in (that one's head did not part what the first introduces, kept whole to the parent's end), and
    with ``in the following example:`` / ``代码如下：`` where a level-1 cut parted the fence under it (the fence's part
    inside the parent was kept whole as a fence that fits): every limit, two and three levels."""
    text = _EDGES[name]
    for max_size in range(20, 400, 5):
        for sizes in ((max_size, max_size // 2), level_sizes(max_size)):
            assert_headings_open_chunks(chunk(text, sizes=sizes), text, sizes)


_BLANK_EDGE = ("### 函数工厂\n\n另一个常见的场景是创建包装 C++ 函数的 JavaScript 函数，\n并把它们返回给 JavaScript，代码如下：\n\n"
               "```cpp\n// addon.cc\n#include <node.h>\n\nnamespace demo {\n\nusing v8::Context;\nusing v8::Function;\n"
               "using v8::FunctionCallbackInfo;\nusing v8::Isolate;\nusing v8::Local;\n\n}  // namespace demo\n```\n\n"
               "要测试它，运行这段代码。\n")


def test_below_level_1_a_fence_a_parent_cuts_off_at_a_blank_line_is_not_kept_whole():
    """A level-1 cut at a blank line inside a fence: the fence's part inside the parent (to that blank line) fitted
    the deeper limit and was kept whole, so ``代码如下：`` ended a level-2 chunk alone; the fence goes on past the
    edge, so its part is not known to fit and the lead-in keeps the fence's first stretch."""
    bond = _BLANK_EDGE.index("```cpp")
    for max_size in range(130, 155, 5):
        tree = chunk(_BLANK_EDGE, max_size=max_size)
        assert all(c.span.end != bond for c in tree if c.level <= 2), max_size  # (level 3: 26 chars, no room)
    tree = chunk(_BLANK_EDGE, max_size=130)
    assert tree.text_of(tree.get("1.2")) == "并把它们返回给 JavaScript，代码如下：\n\n```cpp\n// addon.cc\n#include <node.h>\n\n"


def test_a_parent_ending_with_a_lead_in_is_cut_before_that_lead_in():
    text = _EDGES["en-parent"]
    tree = chunk(text, sizes=(95, 47))
    assert [tree.text_of(c) for c in tree.children("1")] == [
        "A plain opening line is here.\n", "The first steps are:\nStep alpha goes first.\n", "The next steps are:\n"]


_ITEM_LEAD_INS = {
    "en": "Updates in this release:\n\n - The describe command uses better criteria to pick a base ref than it used to.\n\n"
          " - The describe command now counts the commits made since then. For example, the commit before the tag is:\n\n"
          "\tv2.6.20-rc5-306-ga21b069\n\n   which tells you that its name begins with a21b069.\n\nThat is all.\n",
    "zh": "本版更新：\n\n - 描述命令选择基准引用的方法比以前更好了，结果也更短。\n\n - 描述命令会给出自基准引用以来的提交数。例如标签之前的那个提交是：\n\n"
          "\tv2.6.20-rc5-306-ga21b069\n\n   这说明它的名字以 a21b069 开头。\n\n就是这些。\n",
}


@pytest.mark.parametrize("name", sorted(_ITEM_LEAD_INS))
def test_a_lead_in_that_ends_a_list_item_keeps_the_rest_of_its_items_paragraph(name):
    """A lead-in at the end of a list item (git's release notes: ``... the commit before the tag is:`` over its
    indented line, the item's paragraph): the list's run was parted at the lead-in's bond, so the list to the
    lead-in fitted and was kept whole, and the bond was the only cut left, though the item's paragraph fitted; the
    cut now falls between the items (every limit, two and three levels)."""
    text = _ITEM_LEAD_INS[name]
    for max_size in range(20, 400, 5):
        for sizes in ((max_size, max_size // 2), level_sizes(max_size)):
            assert_headings_open_chunks(chunk(text, sizes=sizes), text, sizes)


_CHAINS = {
    "en": ("Some text is here.\n\nTo get the same results, use the helper:\n\n", "On POSIX and Windows:\n\n",
           "```js\npath.basename('a/b.html');\n// Returns: 'b.html'\n```\n\nMore text follows.\n"),
    "zh": ("这里是一些文字。\n\n要得到同样的结果，请用这个函数：\n\n", "在各个系统上：\n\n",
           "```js\npath.basename('a/b.html');\n// Returns: 'b.html'\n```\n\n后面还有文字。\n"),
}


@pytest.mark.parametrize("name", sorted(_CHAINS))
def test_where_a_chain_of_lead_ins_must_break_the_last_stays_with_what_it_introduces(name):
    """Two lead-ins in a row over a fence (``use the helper:`` over ``On POSIX and Windows:`` over its code): where the
    chain and the fence do not fit together one of the two bonds breaks; the first's, so the lead-in that names the
    code stays with it (both bonds were priced alike, and the limit broke the second's): every limit, every level."""
    outer, inner, rest = _CHAINS[name]
    text = outer + inner + rest
    bond = len(outer) + len(inner)
    fence = Meter(text).size(len(outer), len(text) - len(rest.split("```\n\n")[-1]))
    for max_size in range(20, 400, 5):
        sizes = level_sizes(max_size)
        tree = chunk(text, sizes=sizes)
        for c in tree:
            if c.span.end != bond or (c.parent is not None and tree.get(c.parent).span.end == bond):
                continue
            limit = sizes[0]  # (only where the inner lead-in and its fence exceed the limit its chunk was cut
            if c.parent is not None:  # under: the first its parent exceeds)
                parent = tree.get(c.parent)
                limit = next(x for x in sizes[c.level - 1 :] if parent.span.end - parent.span.start > x)
            assert fence > limit, (max_size, c.id)


def test_a_weak_no_cut_priced_as_a_lead_ins_opening_keeps_that_price():
    """``forbid`` prices a weak no-cut (a lead-in's bond) below a lead-in's opening, except a bond the structure
    prices as one already (where the next lead-in of a chain opens): that is the one the limit breaks first."""
    reward = np.array([0.5, bd.HEAD_FORBIDDEN + 0.3, 0.2, 0.1])
    out = bd.forbid(reward, np.array([False, True, True, True]), np.array([False, True, True, False]))
    assert out[0] == 0.5 and out[1] == reward[1] and out[2] == bd_dp._WEAK_FORBIDDEN and np.isneginf(out[3])


_CODE = st.sampled_from(["value = compute(1)\n", "  {\n", "  },\n", "    name: 'x',\n", "\n", "run(\n", ");\n",
                         "  () => {\n", "    throw err;\n"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_CODE, min_size=4, max_size=60), st.integers(40, 300))
@example(["const a = new Error('Wrong value');\n", "a.code = 404;\n", "\n", "assert.throws(\n", "  () => {\n",
          "    throw a;\n", "  },\n", "  {\n", "    name: 'TypeError',\n", "    message: 'Wrong value',\n", "  },\n",
          ");\n", "\n", "assert.throws(\n", "  () => {\n", "    throw a;\n", "  },\n"], 160)
def test_level_1_chunks_never_exceed_the_maximum_around_a_fences_inner_breaks(lines, max_size):
    """A fence over the limit is cut at its blank lines first, a stretch between two that fits kept whole; a
    paragraph-strength break inside it (``  },`` over ``  {``) parts the paragraphs that fit: a stretch across such
    a break, glued, chained two paragraphs that fit into a level-1 chunk over the maximum (646 under 512 in Node's
    ``assert.md``). No level-1 chunk exceeds the maximum unless it is one sentence."""
    text = "Custom validation object:\n\n```mjs\n" + "".join(lines) + "```\n\nMore text follows.\n"
    tree = chunk(text, max_size=max_size)
    sents = split_sentences(text)
    seams = set(sents.seams().tolist())
    for c in tree.roots():
        if c.span.end - c.span.start > max_size:
            assert not any(c.span.start < s < c.span.end for s in seams), (c.span, max_size)


_LITERAL = st.sampled_from(["    value = compute(1)\n", "    def f(t):\n", "        return t\n", "    # a comment line\n",
                            "\n", "        x = [('a', t)]\n", "    mv = memoryview(b)\n"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_LITERAL, min_size=3, max_size=40), st.sampled_from(["", "\n"]), st.integers(40, 600))
@example(["    def dtype_from_ctypes_type(t):\n", "        # needed to ensure that the shape of `t` is within memoryview\n",
          "        class DummyStruct(ctypes.Structure):\n", "            _fields_ = [('a', t)]\n", "\n",
          "        # empty to avoid memory allocation\n", "        ctype_0 = (DummyStruct * 0)()\n",
          "        mv = memoryview(ctype_0)\n", "\n", "        # convert the struct, and slice back out the field\n",
          "        return _dtype_from_pep3118(mv.format)['a']\n"], "\n", 450)
def test_level_1_chunks_never_exceed_the_maximum_under_a_literal_blocks_lead_in(lines, wrap, max_size):
    """A paragraph that ends with ``::`` over its literal block: the block is its first atom's run, kept whole
    where it fits, and the ``::`` line a lead-in whose bond the limit breaks first. The block's partition did not
    part at the lead-in's bond, so its first stretch, kept whole with the lead-in, chained with the block kept
    whole behind that bond into one level-1 chunk over the maximum (numpy's ``_dtype_ctypes.py``: 514 under 450
    and under 512, no bubble). No level-1 chunk exceeds the maximum unless it is one sentence; spans tile."""
    intro = ("In an ideal world, we could achieve this through the PEP3118 buffer protocol,"
             + (wrap or " ") + "something like::\n\n")
    text = "Conversion from ctypes to dtype.\n\n" + intro + "".join(lines) + "\nUnfortunately, this fails.\n"
    tree = chunk(text, max_size=max_size)
    roots = list(tree.roots())
    assert roots[0].span.start == 0 and roots[-1].span.end == len(text)
    assert all(a.span.end == b.span.start for a, b in zip(roots, roots[1:], strict=False))
    seams = set(split_sentences(text).seams().tolist())
    for c in roots:
        if c.span.end - c.span.start > max_size:
            assert not any(c.span.start < s < c.span.end for s in seams), (c.span, max_size)

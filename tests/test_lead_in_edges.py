"""Lead-ins at the edges the levels make (issue 18: a lead-in such as ``The steps are:`` / ``步骤如下：`` goes with
what it introduces where its bond and the start of that fit): a parent that ends with a lead-in, a fence a
level-1 cut parts."""

from __future__ import annotations

import pytest

from logichunk import chunk
from logichunk.chunkers.logic_chain import level_sizes
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


def test_a_parent_ending_with_a_lead_in_is_cut_before_that_lead_in():
    text = _EDGES["en-parent"]
    tree = chunk(text, sizes=(95, 47))
    assert [tree.text_of(c) for c in tree.children("1")] == [
        "A plain opening line is here.\n", "The first steps are:\nStep alpha goes first.\n", "The next steps are:\n"]

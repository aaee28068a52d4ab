"""A list's items kept whole at every level of the cascade (issue 18's rule for paragraphs, read for items): where an
item fits a level's limit no cut of that level falls inside it, and a heading opens a chunk, never ends one. A tight
list's items are parted by line breaks, not blank lines (a notice's ``（一）…`` lines, minutes' ``1．…``, a manual's
``①…``, an FAQ's ``问：`` over ``答：``), so the paragraph rule kept none of them whole: where the list did not fit,
the limit cut between an item's two sentences next to the line break before it."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logichunk import chunk
from logichunk.chunkers.logic_chain import level_sizes
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout

NOTICE = """关于做好今冬供暖季安全检查的通知
各科室、各班组：
为做好供暖季安全工作，防止发生火灾和燃气事故，现就有关事项通知如下。
一、检查范围
（一）锅炉房、换热站及室外管网。检查时须由两人以上共同进行。
（二）职工宿舍、食堂和仓库。重点查看电线是否老化，灭火器是否在有效期内。
二、工作要求
（一）各班组于本月十日前完成自查。自查记录由班组长签字后交安全科。
（二）发现隐患要当场整改。不能当场整改的，要明确责任人和整改期限，并设置警示标志。
（三）安全科将组织抽查，抽查结果在全厂通报。
特此通知。
"""

CONTRACT = """设备采购合同
第一条 标的物
（一）乙方向甲方提供数控机床两台，型号和技术参数见附件一。设备须为全新未使用过的产品。
（二）乙方应随设备提供中文使用说明书和合格证书。
第二条 交货与验收
（一）乙方应于合同生效后六十日内将设备运至甲方厂区。运输费用和保险费用由乙方承担。
（二）甲方在设备到货后十五日内组织验收。验收不合格的，乙方应在三十日内更换。
第三条 付款方式
（一）合同生效后七日内，甲方支付合同总价的百分之三十作为预付款。
（二）设备验收合格后，甲方支付其余款项。乙方应同时开具等额增值税专用发票。
"""

MINUTES = """质量分析会会议纪要
时间：十一月十八日上午
地点：三楼会议室
会议确定以下事项：
1．十月份产品一次合格率为百分之九十六。比上月提高了一个百分点，但仍低于年度目标。
2．装配线返工主要集中在焊接工序。工艺科负责在两周内修订焊接作业指导书。
3．来料检验发现一批轴承尺寸超差。采购部已通知供应商退换，并暂停其供货资格。
4．下月起每周五召开质量例会。请各车间主任按时参加。
"""

MANUAL = """空气净化器使用说明
开机前请取下滤网外的包装袋。
日常操作：
①接通电源，按电源键开机。屏幕显示当前空气质量。
②按模式键可在自动、睡眠和强力三种模式之间切换。睡眠模式下风速最低，指示灯自动熄灭。
③按定时键设定运行时间。再次长按定时键可取消定时。
更换滤网：
①关机并拔下电源插头。
②打开背部盖板，取出旧滤网。装入新滤网时注意正反面，标签一面朝外。
③盖好盖板后，长按复位键三秒，滤网提示灯熄灭。
"""

FAQ = """社保卡办理常见问题
问：首次申领社保卡需要带什么材料？
答：本人身份证原件即可。未满十六周岁的，由监护人携带户口簿代为办理。
问：社保卡丢失了怎么办？
答：请先拨打服务热线办理临时挂失。临时挂失有效期为五天，期间需到网点办理正式挂失和补卡。
问：补办社保卡要多长时间？
答：一般在十五个工作日内制成。部分网点可当场制卡，具体以网点公告为准。
"""

DOCUMENTS = {"notice": NOTICE, "contract": CONTRACT, "minutes": MINUTES, "manual": MANUAL, "faq": FAQ}
#: where an item opens its line: a numeral in brackets, a full-width ordinal, a circled number, a marked question
_OPENS = re.compile(r"（[一二三四五六七八九十]+）|\d+[．.] |\d+．|[①-⑳]|问：|- |\([a-z]\) |Q: ")


def _items(text: str) -> list[tuple[int, int]]:
    """Each item's span, by reading the test's own documents: a line an item marker opens, and an answer's line
    with the question over it (every item here is one line, its question's pair two)."""
    out: list[list[int]] = []
    at = 0
    for line in text.splitlines(keepends=True):
        if line.startswith(("答：", "A: ")) and out:
            out[-1][1] = at + len(line)
        elif _OPENS.match(line):
            out.append([at, at + len(line)])
        at += len(line)
    return [(a, b) for a, b in out]


def _headed(text: str, a: int) -> int:
    """Where the run of heading lines right over the item at ``a`` starts (``一、…`` lines, the title on the first
    line), or ``a``: a heading keeps its item's first sentence rather than end a chunk, so an item is kept whole
    only where it fits with the headings over it, as a paragraph is."""
    k = a
    while k > 0:
        p = text.rfind("\n", 0, k - 1) + 1
        if p > 0 and not (text[p] in "一二三四五六七八九十" and text[p + 1] == "、"):
            break
        k = p
    return k


def _limit_of(tree, c, sizes) -> int:
    """The limit of the level that cut ``c`` from its parent: a piece that fits a level is left whole there, and
    the next level whose limit it exceeds cuts it (as the cascade goes down)."""
    if c.parent is None:
        return sizes[0]
    p = tree.get(c.parent)
    return next((x for x in sizes[c.level - 1 :] if p.span.end - p.span.start > x), sizes[-1])


def _cut_inside(tree, items, sizes) -> list[tuple[str, int]]:
    """The chunk starts that fall inside an item that fits the limit of the level that made them."""
    out = []
    for c in tree:
        if c.parent is not None and c.span.start == tree.get(c.parent).span.start:
            continue  # (a first child's start is its parent's)
        limit = _limit_of(tree, c, sizes)
        out += [(c.id, c.span.start) for a, b in items if b - a <= limit and a < c.span.start < b]
    return out


def _ends_in_heading(text: str, tree) -> list[str]:
    """The chunks whose last sentence is a heading (the layout's reading), but for one that ends the text."""
    sents = split_sentences(text)
    heading = layout(sents).heading
    ends = np.asarray(sents.ends)
    out = []
    for c in tree:
        if c.span.end >= len(text.rstrip()):
            continue
        k = int(np.searchsorted(ends, c.span.end, side="left"))
        k = min(k, len(heading) - 1)
        while k > 0 and sents.starts[k] >= c.span.end:
            k -= 1
        if heading[k]:
            out.append(c.id)
    return out


@pytest.mark.parametrize("name", list(DOCUMENTS))
@pytest.mark.parametrize("max_size", [120, 200, 300, 512])
def test_a_chinese_documents_items_stay_whole_at_every_level(name, max_size):
    """A notice's ``（一）`` items, a contract's, minutes' ``1．`` items, a manual's ``①`` steps and an FAQ's question
    and answer: no level cuts inside one that fits its limit, no chunk ends with a heading, the levels tile."""
    text = DOCUMENTS[name]
    sizes = level_sizes(max_size, 3)
    tree = chunk(text, max_size=max_size, levels=3)
    assert _cut_inside(tree, _items(text), sizes) == [], (name, max_size)
    assert _ends_in_heading(text, tree) == [], (name, max_size)
    assert "".join(tree.text_of(c) for c in tree.roots()) == text


def test_an_english_lists_items_stay_whole_too():
    """The same shapes in English (a numbered list of two-sentence items, an FAQ's ``Q:`` over ``A:``): an item
    that fits a level is not cut there (the base cut three of five minutes' items at level 1 under 120)."""
    minutes = ("Weekly project meeting\nPresent: Ann, Bob, Carl, Dina\nAgreed:\n"
               "1. The backend API is 80% done. Carl owns the payment endpoint and delivers it by Wednesday.\n"
               "2. The test database keeps timing out. Bob traced it to a small connection pool and will fix it.\n"
               "3. The client asked for report export. We moved it to phase two and left it out of this release.\n"
               "4. Next meeting on 27 November; please bring your updates.\n"
               "5. Dina collects user feedback. She sends a summary every Friday.\n")
    faq = ("Tax deductions: common questions\nQ: How much is the child education deduction?\n"
           "A: Parents may deduct 2,000 a month for each child in full-time education.\nQ: Can both parents claim it?\n"
           "A: One parent may claim all of it, or both may claim half each. The choice holds for the whole tax year.\n"
           "Q: Can I claim both mortgage interest and rent?\n"
           "A: No. A taxpayer and their spouse cannot claim both in the same tax year.\n")
    for text in (minutes, faq):
        for max_size in (120, 200, 300):
            sizes = level_sizes(max_size, 3)
            tree = chunk(text, max_size=max_size)
            assert _cut_inside(tree, _items(text), sizes) == [], (text[:20], max_size)


def test_an_faqs_question_opens_an_item_of_its_list():
    """A marked question over its answer opens an item, as a number does: the gap before the next question is
    the list's (a line's strength, ``in_list``), the one between a question and its answer no-cut."""
    sents = split_sentences(FAQ)
    lay = layout(sents)
    texts = sents.texts()
    before_q = [i - 1 for i, t in enumerate(texts) if t.startswith("问：") and i > 1]
    before_a = [i - 1 for i, t in enumerate(texts) if t.startswith("答：")]
    assert lay.in_list is not None and lay.in_list[before_q].all() and lay.in_list.sum() == len(before_q)
    assert lay.no_cut[before_a].all()


_SENTENCES = ["检查时须由两人以上共同进行。", "重点查看电线是否老化。", "自查记录由班组长签字后交安全科。",
              "不能当场整改的，要明确责任人和整改期限。", "屏幕显示当前空气质量。", "睡眠模式下风速最低，指示灯自动熄灭。",
              "运输费用和保险费用由乙方承担。", "请各车间主任按时参加。", "比上月提高了一个百分点，但仍低于年度目标。"]
_MARKS = [lambda i: f"（{'一二三四五六七八九十'[i % 10]}）", lambda i: f"{i + 1}．", lambda i: chr(0x2460 + i % 20),
          lambda i: f"{i + 1}. "]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.lists(st.sampled_from(_SENTENCES), min_size=1, max_size=3), min_size=2, max_size=5),
                min_size=1, max_size=3),
       st.sampled_from(range(len(_MARKS))), st.sampled_from([120, 200, 300, 512]), st.booleans())
@example([[["比上月提高了一个百分点，但仍低于年度目标。", "检查时须由两人以上共同进行。"]] * 4], 1, 200, True)
def test_generated_items_that_fit_are_never_cut(sections, mark, max_size, lead):
    """Documents of sections (a ``一、`` heading over items of one to three sentences, one a line, no blank line,
    under a lead-in or not): an item that fits the finest limit (with the headings right over it) is cut at no level,
    one that fits the maximum by no level-1 cut; no chunk ends with a heading; the levels tile."""
    heads = "一二三四五六七八九十"
    lines = ["关于某项工作的通知\n"]
    for k, items in enumerate(sections):
        lines.append(f"{heads[k]}、第{heads[k]}项工作\n")
        if lead:
            lines.append("具体要求如下：\n")
        lines += [_MARKS[mark](i) + "".join(s) + "\n" for i, s in enumerate(items)]
    text = "".join(lines)
    sizes = level_sizes(max_size, 3)
    tree = chunk(text, max_size=max_size, levels=3)
    items = _items(text)
    assert len(items) == sum(map(len, sections))
    for c in tree:
        for a, b in items:
            inside, size = a < c.span.start < b, b - _headed(text, a)
            assert not (inside and size <= sizes[-1]), (tree.text_of(c), text[a:b], sizes)
            assert not (inside and c.parent is None and size <= sizes[0]), (tree.text_of(c), text[a:b], sizes)
    assert _ends_in_heading(text, tree) == []
    for c in tree:
        kids = list(tree.children(c.id))
        if kids:
            assert kids[0].span.start == c.span.start and kids[-1].span.end == c.span.end
            assert all(x.span.end == y.span.start for x, y in zip(kids, kids[1:], strict=False))
    assert "".join(tree.text_of(c) for c in tree.roots()) == text

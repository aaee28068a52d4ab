"""Synthetic labelled conversations for the memory tests: topics with their own vocabularies (English
and Chinese), turns drawn from the current topic plus shared filler words, short acknowledgements
mixed in. Topic changes are real vocabulary shifts, so a working pipeline must find most of them and a
broken one cannot (the tests compare with the no-boundary baseline)."""

from __future__ import annotations

import random

from logichunk.memory import LogicalBlock
from logichunk.memory.calibrate import LabelledConversation

TOPICS_EN = [
    "python function loop variable compile error stack trace module import package debug".split(),
    "recipe oven flour butter sugar bake dough minutes knead yeast bread".split(),
    "train station ticket platform departure arrival railway carriage journey timetable".split(),
    "hotel room booking reservation night breakfast reception suite checkout guests".split(),
    "invoice payment budget account balance salary expense refund transfer bank".split(),
    "football match goal striker league season referee stadium coach penalty".split(),
    "garden tomato seeds soil watering compost harvest plant greenhouse weeds".split(),
]
TOPICS_ZH = ["程序代码函数变量编译报错调试模块接口部署", "面粉黄油烤箱面包蛋糕发酵甜点厨房烘焙鸡蛋",
             "火车车站车票站台出发到达旅行行程座位列车", "酒店房间预订入住早餐前台退房客人套房夜晚",
             "工资预算账户余额付款转账银行发票报销费用", "足球比赛进球球队联赛裁判球场教练点球赛季"]
SHARED_EN = "i you we the a please can could would like need want about that this it".split()
ACKS = ["ok", "thanks", "好的", "继续", "yes", "嗯"]


def _turn(rng: random.Random, topic: int, lang: str) -> str:
    if lang == "zh":
        chars = TOPICS_ZH[topic % len(TOPICS_ZH)]
        body = "".join(rng.choice(chars) for _ in range(rng.randint(8, 14)))
        return "我想" + body + "。"
    words = TOPICS_EN[topic % len(TOPICS_EN)]
    toks = [rng.choice(words) for _ in range(rng.randint(5, 9))] + [rng.choice(SHARED_EN) for _ in range(3)]
    rng.shuffle(toks)
    return " ".join(toks) + "."


def conversation(seed: int, lang: str = "en", topics: int = 4, turns: tuple[int, int] = (4, 8),
                 acks: float = 0.15) -> LabelledConversation:
    rng = random.Random(seed)
    pool = list(range(len(TOPICS_EN if lang == "en" else TOPICS_ZH)))
    rng.shuffle(pool)
    blocks: list[LogicalBlock] = []
    starts: set[int] = set()
    for k in range(topics):
        if k:
            starts.add(len(blocks))
        for j in range(rng.randint(*turns)):
            if j and rng.random() < acks:
                blocks.append(LogicalBlock(user=rng.choice(ACKS)))
            else:
                blocks.append(LogicalBlock(user=_turn(rng, pool[k], lang)))
    return LabelledConversation(f"{lang}-{seed}", tuple(blocks), frozenset(starts))


def conversations(n: int, seed: int = 0, lang: str = "en") -> list[LabelledConversation]:
    return [conversation(seed * 1000 + i, lang) for i in range(n)]

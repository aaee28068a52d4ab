"""One conversation turn as the memory sees it: :class:`LogicalBlock`, and its *anchor text*.

Why an anchor: a long assistant reply (code, a stack trace, a table) dominates its own embedding and
drowns the user's intent, while a bare follow-up ("now deploy it") means nothing without what came
before. The anchor is the short text that carries the turn's intent in context::

    Context: {summary of the previous assistant reply, or its first 100 characters}
    Query: {rewritten_query or the user's text}

and only the anchor is embedded. The whole block (query, reply, tool calls) still feeds the cheap
lexical signals, which see every word.

Also here: the step-1 heuristic (:func:`is_filler`): a turn made only of stop phrases (继续, 好的, 报错了,
ok, go on, yes, ...), or a short one (under ``short_tokens`` content tokens) that names nothing new to
the conversation, carries no topic of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..signals.items import content_items
from ..text.decode import blank, check_storable

__all__ = [
    "STOP_PHRASES", "LogicalBlock", "ToolCall", "anchor_text", "check_count", "check_storable", "content_tokens",
    "is_filler",
    "is_question", "new_items", "normalize_phrase", "tool_calls_of",
]


def check_count(value: object, what: str, least: int = 0) -> int:
    """``value`` when it is a whole number (not a bool) of at least ``least``; else one InputError line
    (a string "3" or a float would otherwise fail later as a raw TypeError, or be taken silently)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{what} must be an integer, got {value!r}")
    if value < least:
        raise InputError(f"{what} must be at least {least}, got {value}")
    return value


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant turn: its name, arguments (as the agent wrote them) and result."""

    name: str
    arguments: str = ""
    result: str = ""

    def __post_init__(self) -> None:
        for what in ("name", "arguments", "result"):
            v = getattr(self, what)
            if not isinstance(v, str):
                raise InputError(f"ToolCall.{what} must be a string, got {type(v).__name__}")
            check_storable(v, f"tool call {what}")

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "arguments": self.arguments, "result": self.result}


def check_turn_text(user: str, assistant: str = "", rewritten_query: str | None = None) -> None:
    """The one rule of a turn's text, in the library, the CLI's files and MCP's ``remember``: some text that is
    not only whitespace, on either side (the user's, the rewritten query or the assistant's: a turn an assistant
    opens, a greeting, has no user text). A blank side is kept as given, its label left out of the archived
    topic's text (:func:`~logichunk.memory.archive.render_block`), never filled in ("." was)."""
    sides = {"user": user, "assistant": assistant, **({} if rewritten_query is None else
                                                        {"rewritten_query": rewritten_query})}
    if all(blank(v) for v in sides.values()):
        raise InputError("a turn needs some text: " + ", ".join(f"{k} is {blank(v)}" for k, v in sides.items()))


@dataclass(frozen=True)
class LogicalBlock:
    """A user query, an optional rewritten query (coreference resolved upstream), the assistant's reply,
    its tool calls and timestamps (seconds since the epoch, or any monotone clock).

    ``assistant_summary`` is an upstream summary of the reply; without one, the anchor of the *next*
    turn uses the reply's first characters. ``meta`` travels with the turn into the archive.
    """

    user: str
    assistant: str = ""
    rewritten_query: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    started_at: float | None = None
    ended_at: float | None = None
    assistant_summary: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("user", "assistant"):
            if not isinstance(getattr(self, name), str):
                raise InputError(f"LogicalBlock.{name} must be a string, got {type(getattr(self, name)).__name__}")
        for name in ("rewritten_query", "assistant_summary"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                raise InputError(f"LogicalBlock.{name} must be a string or None")
        check_turn_text(self.user, self.assistant, self.rewritten_query)
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        for t in self.tool_calls:
            if not isinstance(t, ToolCall):
                raise InputError("tool_calls must be ToolCall objects")
        self._check_storable()

    def _check_storable(self) -> None:
        """Refuse now what the archive could not store later: a lone surrogate (from JSON's "\\ud800") or a
        meta value JSON cannot hold would keep the whole topic out of the store, its other turns too."""
        for name in ("user", "assistant", "rewritten_query", "assistant_summary"):
            v = getattr(self, name)
            if v is not None:
                check_storable(v, name)
        try:
            meta = json.dumps(dict(self.meta), ensure_ascii=False)
        except (TypeError, ValueError) as e:
            raise InputError(f"LogicalBlock.meta must hold JSON values (str, number, bool, None, list, dict): {e}") from None
        try:
            meta.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError("meta holds an unpaired surrogate; send valid Unicode") from None

    @property
    def query(self) -> str:
        """What the turn asks: the rewritten query when there is one, else the user's text."""
        q = self.rewritten_query
        return q if q is not None and q.strip() else self.user

    @property
    def context_text(self) -> str:
        """What the *next* turn's anchor shows as context: the reply's summary, else the reply, else
        (a turn without a reply, e.g. one utterance of a transcript) the query."""
        if self.assistant_summary and self.assistant_summary.strip():
            return self.assistant_summary
        return self.assistant if self.assistant.strip() else self.query

    def anchor_text(self, previous: LogicalBlock | None = None, context_chars: int = 100) -> str:
        """This turn's anchor after ``previous`` (see :func:`anchor_text`)."""
        return anchor_text(self, previous, context_chars)

    def lexical_text(self) -> str:
        """Everything the lexical signals read: query, reply and tool calls (names and arguments;
        results can be huge and are mostly data, so they are left out)."""
        parts = [self.query]
        if self.assistant:
            parts.append(self.assistant)
        parts.extend(f"{t.name} {t.arguments}".strip() for t in self.tool_calls)
        return "\n".join(p for p in parts if p)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the replay/archive format); :meth:`from_dict` reads it back exactly."""
        d: dict[str, Any] = {"user": self.user}
        if self.assistant:
            d["assistant"] = self.assistant
        if self.rewritten_query is not None:
            d["rewritten_query"] = self.rewritten_query
        if self.tool_calls:
            d["tool_calls"] = [t.to_dict() for t in self.tool_calls]
        if self.started_at is not None:
            d["started_at"] = self.started_at
        if self.ended_at is not None:
            d["ended_at"] = self.ended_at
        if self.assistant_summary is not None:
            d["assistant_summary"] = self.assistant_summary
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LogicalBlock:
        """From the replay format; ``query``/``text``/``content`` are accepted for ``user``, ``reply``
        for ``assistant``, ``ts`` for ``started_at``. Raises :class:`InputError` on a bad record."""
        if not isinstance(d, Mapping):
            raise InputError("a turn must be a JSON object")
        user = _first(d, ("user", "query", "text", "content"))
        assistant = _first(d, ("assistant", "reply", "response"))
        if user is None and assistant is None and d.get("rewritten_query") is None:
            raise InputError("a turn needs a 'user' (or 'assistant') text field")
        tools = tool_calls_of(d.get("tool_calls") or None)  # (an empty value, "" or {} too, is none, as before)
        meta = d.get("meta") or {}
        if not isinstance(meta, Mapping):
            raise InputError("'meta' must be an object")
        return cls(user=_text(user, "user"), assistant=_text(assistant, "assistant"),
                   rewritten_query=_opt_text(d.get("rewritten_query"), "rewritten_query"),
                   tool_calls=tools, started_at=_time(d.get("started_at", d.get("ts"))),
                   ended_at=_time(d.get("ended_at")),
                   assistant_summary=_opt_text(d.get("assistant_summary"), "assistant_summary"), meta=dict(meta))


def tool_calls_of(calls: Any) -> tuple[ToolCall, ...]:
    """A turn's ``tool_calls`` as the replay files and MCP's ``remember`` give them: a list of ``{"name",
    "arguments"?, "result"?}`` (arguments and result text or any JSON value, kept as JSON text) or of names;
    None for none. One reading for both, so a tool call is stored alike whichever way it came."""
    if calls is None:
        return ()
    if not isinstance(calls, Sequence) or isinstance(calls, str):
        raise InputError("'tool_calls' must be a list")
    tools = []
    for c in calls:
        if isinstance(c, str):
            tools.append(ToolCall(c))
        elif isinstance(c, Mapping) and isinstance(c.get("name"), str):
            tools.append(ToolCall(c["name"], _json(c.get("arguments")), _json(c.get("result"))))
        else:
            raise InputError("each tool call needs a 'name'")
    return tuple(tools)


def _first(d: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if d.get(k) is not None:
            return d[k]
    return None


def _text(v: Any, name: str) -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise InputError(f"'{name}' must be a string, got {type(v).__name__}")
    return v


def _opt_text(v: Any, name: str) -> str | None:
    return None if v is None else _text(v, name)


def _time(v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise InputError(f"timestamps must be numbers (seconds), got {v!r}")
    return float(v)


def _json(v: Any) -> str:
    """A tool call's arguments or result as text: a string as it is, None (absent) as "", any other
    value as JSON, keys in the agent's order (a result ``0`` or ``false`` is "0" / "false", not "")."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise InputError(f"a tool call's arguments and result must be text or JSON values: {e}") from None


def anchor_text(block: LogicalBlock, previous: LogicalBlock | None, context_chars: int = 100) -> str:
    """``Context: …\\nQuery: …`` — the previous turn's reply summary (or its first ``context_chars``
    characters, whitespace collapsed) and this turn's query."""
    ctx = ""
    if previous is not None:
        src = previous.context_text
        if previous.assistant_summary and previous.assistant_summary.strip():
            ctx = " ".join(src.split())
        else:
            ctx = " ".join(src[: context_chars * 2].split())[:context_chars]
    return f"Context: {ctx}\nQuery: {' '.join(block.query.split())}"


# --------------------------------------------------------------------------- step 1: fillers

# A content token: a run of letters/digits, or one CJK character (Han, kana, Hangul).
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\W_]+")
_SEP = re.compile(r"[\s\W_]+")

STOP_PHRASES: frozenset[str] = frozenset(
    # zh: acknowledgements, go-ahead, yes/no, "it failed" — meaningful only against the current topic
    "继续 继续吧 接着 接着来 下一步 然后呢 还有呢 是的 是 对 对的 对啊 嗯 嗯嗯 好 好的 好吧 行 可以 没问题 收到 明白 了解 "
    "谢谢 多谢 不对 不是 不行 错了 报错了 又报错了 还是报错 失败了 不可以 再来 重试 换一个 再试试 怎么办 为什么 然后 "
    # en
    "ok okay k yes yeah yep yup sure right correct no nope not quite wrong thanks thank you thx ty "
    "go on continue next and then then what more keep going please do it do that great good cool nice "
    "got it i see understood fine alright error it failed failed still failing again retry try again why how".split()
)
_MULTI = frozenset(p for p in (
    "thank you", "go on", "and then", "then what", "keep going", "please do", "do it", "do that", "got it",
    "i see", "not quite", "it failed", "still failing", "try again",
))


def normalize_phrase(text: str) -> str:
    """Lower case, punctuation and spacing collapsed to single spaces."""
    return " ".join(_SEP.sub(" ", text.lower()).split())


def content_tokens(text: str) -> int:
    """Content tokens: words of space-separated scripts and single CJK characters (punctuation and
    emoji do not count)."""
    return len(_TOKEN.findall(text))


_CJK_RUN = re.compile(r"^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+$")


def _cjk_cover(piece: str, stops: frozenset[str]) -> bool:
    """Whether a run of CJK characters is a concatenation of stop phrases ("好的继续", "嗯嗯对")."""
    n = len(piece)
    ok = [True] + [False] * n
    for i in range(1, n + 1):
        for k in range(1, min(i, 6) + 1):
            if ok[i - k] and piece[i - k : i] in stops:
                ok[i] = True
                break
    return ok[n]


def _only_stop_phrases(norm: str, stops: frozenset[str]) -> bool:
    if not norm:
        return True
    if norm in stops or norm in _MULTI:
        return True
    words = norm.split(" ")
    # greedy cover by one- and two-word phrases ("ok thanks", "好的 继续"); CJK runs by stop phrases
    i = 0
    while i < len(words):
        two = " ".join(words[i : i + 2])
        if i + 1 < len(words) and (two in _MULTI or two in stops):
            i += 2
        elif words[i] in stops or (_CJK_RUN.match(words[i]) and _cjk_cover(words[i], stops)):
            i += 1
        else:
            return False
    return True


_QUESTION = re.compile(r"(?:[?？]|[吗呢嘛么][。.!！~～]*)[\s\"'”’)）\]]*$")


def is_question(text: str) -> bool:
    """Whether a text ends as a question (``?``/``？``, or a Chinese question particle 吗/呢/嘛/么).
    Why it matters: the answer to a question belongs to the question's topic (an adjacency pair), so
    a turn that follows a question rarely starts a topic, and a question often opens one."""
    return bool(_QUESTION.search(text.rstrip()))


def new_items(text: str, known: Container[int]) -> int:
    """How many distinct content items of ``text`` (:func:`logichunk.signals.items.content_items`: content
    words by their first four letters, CJK characters; stop words left out) are not in ``known``."""
    return len({i for i in content_items(text)[1].tolist() if i not in known})


def is_filler(text: str, short_tokens: int = 5, stop_phrases: frozenset[str] | None = None, *,
              known: Container[int] | None = None) -> tuple[bool, str]:
    """(True, why) when a turn carries no topic of its own: no words, only stop phrases (Chinese or
    English), or fewer than ``short_tokens`` content tokens that name nothing new. ``known``: the content
    items the conversation has used so far (:meth:`~logichunk.memory.lexical.LexicalWindow.known`); a
    short turn with an item outside it ("What is Kubernetes?" after turns about cooking) opens content
    and is judged like any turn. Without ``known`` every short turn is a filler. ``short_tokens=0``
    keeps only the stop-phrase rule."""
    norm = normalize_phrase(text)
    if not norm:
        return True, "no words"
    if _only_stop_phrases(norm, STOP_PHRASES if stop_phrases is None else stop_phrases):
        return True, "stop phrase"
    n = content_tokens(text)
    if n >= short_tokens:
        return False, ""
    short = f"short ({n} token{'s' if n != 1 else ''})"
    if known is None:
        return True, short
    if new_items(text, known):
        return False, ""
    return True, f"{short}, no word new to the conversation"

"""Conversation memory: turn-by-turn topic continuity for agent dialogue, and archiving of finished
topics into the store.

    from logichunk.memory import LogicalBlock, Perception
    p = Perception(store=store, conversation_id="chat-42")   # embedder, calibration and arbiter have defaults
    for turn in conversation:
        d = p.observe(LogicalBlock(user=..., assistant=...))
        print(d.action, d.score, d.step, d.arbiter)   # ADSORB / FORCE_ADSORB / SPLIT, and who decided
    p.flush()                                          # the last topic is archived too

See :mod:`logichunk.memory.perception` for the steps, :mod:`.arbiter` for the grey-zone arbiters,
:mod:`.archive` for the store side and the topic index, :mod:`.calibrate` for fitting the thresholds.
"""

from .arbiter import Arbiter, ArbiterQuery, LLMArbiter, LMArbiter, RerankerArbiter, RuleArbiter, Verdict
from .archive import Archiver, TopicHit, TopicRecord, conversations, load_conversation, search_topics, topics
from .block import STOP_PHRASES, LogicalBlock, ToolCall, anchor_text, is_filler
from .calibrate import LabelledConversation, arbiter_threshold, calibrate, conversations_from_units
from .calibration import Calibration, Logistic, default_calibration
from .dialogs import Conversation, read_conversations
from .forget import Forgotten, forget
from .perception import (
    Action,
    Decision,
    Episode,
    Perception,
    Revision,
    Step,
    observe_many,
    replay,
    topic_summary,
)

__all__ = [
    "STOP_PHRASES", "Action", "Arbiter", "ArbiterQuery", "Archiver", "Calibration", "Conversation", "Decision",
    "Episode", "Forgotten", "LLMArbiter", "LMArbiter", "LabelledConversation", "LogicalBlock", "Logistic", "Perception",
    "RerankerArbiter", "Revision", "RuleArbiter", "Step", "ToolCall", "TopicHit", "TopicRecord", "Verdict",
    "anchor_text", "arbiter_threshold", "calibrate", "conversations", "conversations_from_units", "default_calibration",
    "forget", "is_filler", "load_conversation", "observe_many", "read_conversations", "replay", "search_topics", "topic_summary", "topics",
]

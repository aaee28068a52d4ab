"""Reading conversations from JSONL, for ``logichunk memory replay`` and calibration.

Three line shapes are accepted (one shape per file):

* **a turn per line** — ``{"user": "...", "assistant": "...", "rewritten_query"?, "tool_calls"?: [{"name",
  "arguments", "result"}], "started_at"?, "ended_at"?, "meta"?, "conversation_id"?: "id"}``
  (``conversation`` is read as ``conversation_id``); the lines of one ``conversation_id`` form one
  conversation, in file order, even when other conversations' lines come between them (an agent's log
  interleaves its users); consecutive lines without one form one conversation;
* **a conversation per line** — ``{"id": "...", "turns": [turn, ...]}`` (or ``"conversation_id"``);
* **a labelled dialogue per line** — the segmentation format of ``../shared/data/dialogue``:
  ``{"id", "units": [str], "boundaries"?: [int]}``; each unit is one turn and the gold boundaries are
  kept (replay then reports Pk against them).

Blank lines are skipped. Anything else — invalid JSON, a line that is not an object, a turn (or unit) without
text, a text with an unpaired surrogate (``"\\ud800"``: JSON can say it, no file or database can store
it), mixed shapes, a file with no turns — is an :class:`~logichunk.errors.InputError` naming the file
and line, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..text.decode import Undecoded, read_path, read_text
from .block import LogicalBlock

__all__ = ["Conversation", "read_conversations"]


@dataclass(frozen=True)
class Conversation:
    """Turns of one conversation; ``gold_starts`` (turns that start a topic) when the file had labels."""

    id: str
    blocks: tuple[LogicalBlock, ...]
    gold_starts: frozenset[int] | None = None


def _shape(row: Mapping[str, Any]) -> str:
    if "units" in row:
        return "units"
    if "turns" in row:
        return "turns"
    return "turn"


def read_conversations(path: str | Path) -> list[Conversation]:
    """Conversations of a JSONL file (``-`` = stdin); see the module docstring."""
    source = str(path)
    if source != "-" and Path(path).is_dir():
        raise InputError(f"{path}: is a folder, expected a JSONL file")
    try:
        text = read_text(sys.stdin.buffer.read(), source="<stdin>") if source == "-" else read_path(Path(path))
    except Undecoded as e:  # (no encoding is taken here: JSON Lines are UTF-8)
        raise e.said_by(None) from None
    source = "<stdin>" if source == "-" else source
    out: list[Conversation] = []
    shape: str | None = None
    # turn-per-line files: the turns of each conversation in file order (None: a run of lines without an id),
    # the conversations in the order of their first line
    groups: list[tuple[str | None, list[LogicalBlock]]] = []
    named: dict[str, int] = {}

    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source}:{no}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object, got {type(row).__name__}")
        s = _shape(row)
        if shape is None:
            shape = s
        elif s != shape:
            raise InputError(f"{where}: a {s!r} line in a file of {shape!r} lines (one shape per file)")
        try:
            if s == "units":
                out.append(_units(row, len(out)))
            elif s == "turns":
                turns = row["turns"]
                if not isinstance(turns, list) or not turns:
                    raise InputError("'turns' must be a non-empty list of turn objects")
                blocks = []
                for k, t in enumerate(turns):
                    try:
                        blocks.append(LogicalBlock.from_dict(t))
                    except InputError as e:
                        raise InputError(f"turn {k}: {e}") from None
                conv = _conversation_id(row, ("id", "conversation_id"))
                out.append(Conversation(conv or f"conversation-{len(out)}", tuple(blocks)))
            else:
                conv = _conversation_id(row, ("conversation_id", "conversation"))
                block = LogicalBlock.from_dict(row)
                if conv is None and groups and groups[-1][0] is None:
                    groups[-1][1].append(block)
                elif conv is not None and conv in named:
                    groups[named[conv]][1].append(block)
                else:
                    if conv is not None:
                        named[conv] = len(groups)
                    groups.append((conv, [block]))
        except InputError as e:
            raise InputError(f"{where}: {e}") from None
    out.extend(Conversation(conv or f"conversation-{k}", tuple(blocks)) for k, (conv, blocks) in enumerate(groups))
    if not out:
        raise InputError(f"{source}: no turns (the file is empty or only blank lines)")
    return out


def _conversation_id(row: Mapping[str, Any], keys: tuple[str, str]) -> str | None:
    """The conversation id of a line under either of its two ``keys`` (``conversation_id``, the name every
    JSON output and MCP use, and the file format's earlier name): a string, or a whole number taken as its
    digits (a dataset's numeric id); None when neither is given. Anything else (true, 5.0, a list) would
    become an id nobody typed, and two keys naming different ids leave the turn's conversation unsaid: both
    refused. (``conversation_id`` was not read before: the turns of every conversation of a file that used
    it were replayed, and archived, as one conversation.)"""
    got: dict[str, str] = {}
    for k in keys:
        v = row.get(k)
        if v is None:
            continue
        if isinstance(v, int) and not isinstance(v, bool):
            v = str(v)
        if not isinstance(v, str):
            raise InputError(f"{k!r} must be a string, got {json.dumps(v)}")
        got[k] = v
    if len(set(got.values())) > 1:
        raise InputError(f"{keys[0]!r} and {keys[1]!r} name different conversations "
                         f"({got[keys[0]]!r}, {got[keys[1]]!r}): give one")
    return next(iter(got.values()), None)


def _units(row: Mapping[str, Any], k: int) -> Conversation:
    units = row["units"]
    if not isinstance(units, list) or not units or not all(isinstance(u, str) for u in units):
        raise InputError("'units' must be a non-empty list of strings")
    blank = next((i for i, u in enumerate(units) if not u.strip()), None)
    if blank is not None:  # (a "." in its place would be archived with --db as what was said: texts stay exact)
        raise InputError(f"unit {blank} is blank: a turn needs some text")
    blocks = tuple(LogicalBlock(user=u) for u in units)
    gold = None
    b = row.get("boundaries")
    if b is not None:
        if not isinstance(b, list) or not all(isinstance(x, int) and 0 <= x < len(units) - 1 for x in b):
            raise InputError(f"'boundaries' must be unit indices in 0..{len(units) - 2}")
        gold = frozenset(x + 1 for x in b)
    return Conversation(str(row.get("id", f"conversation-{k}")), blocks, gold)

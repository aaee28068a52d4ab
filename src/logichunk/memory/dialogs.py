"""Reading conversations from JSONL, for ``logichunk memory replay`` and calibration.

Three line shapes are accepted (one shape per file):

* **a turn per line** — ``{"user": "...", "assistant": "...", "rewritten_query"?, "tool_calls"?: [{"name",
  "arguments", "result"}], "started_at"?, "ended_at"?, "meta"?, "conversation"?: "id"}``; consecutive
  lines with the same ``conversation`` (or none) form one conversation;
* **a conversation per line** — ``{"id": "...", "turns": [turn, ...]}``;
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
from ..text.decode import read_path, read_text
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
    if source == "-":
        text = read_text(sys.stdin.buffer.read(), source="<stdin>")
        source = "<stdin>"
    else:
        p = Path(path)
        if p.is_dir():
            raise InputError(f"{p}: is a folder, expected a JSONL file")
        text = read_path(p)
    out: list[Conversation] = []
    shape: str | None = None
    cur_id: str | None = None
    cur: list[LogicalBlock] = []

    def close() -> None:
        nonlocal cur
        if cur:
            out.append(Conversation(cur_id or f"conversation-{len(out)}", tuple(cur)))
        cur = []

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
                out.append(Conversation(str(row.get("id", f"conversation-{len(out)}")), tuple(blocks)))
            else:
                conv = _conversation_id(row.get("conversation"))
                if cur and conv != cur_id:
                    close()
                cur_id = conv
                cur.append(LogicalBlock.from_dict(row))
        except InputError as e:
            raise InputError(f"{where}: {e}") from None
    close()
    if not out:
        raise InputError(f"{source}: no turns (the file is empty or only blank lines)")
    return out


def _conversation_id(v: Any) -> str | None:
    """A turn's ``conversation``: a string, or a whole number taken as its digits (a dataset's numeric id);
    anything else (true, 5.0, a list) would become an id nobody typed, so it is refused."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    raise InputError(f"'conversation' must be a string, got {json.dumps(v)}")


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

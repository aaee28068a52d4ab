"""Global information compensation (Meta-Chunking): give each chunk what it misses from the document.

A chunk cut from a document can depend on things said elsewhere: a definition, a premise, the noun
behind "it" or "this method". Two modes, both stored as chunk **metadata** — the span and the text
stay exactly as they are, so retrieval can embed the compensated version and still return the
original:

* ``"rewrite"`` — three stages per chunk: (1) *identify* what the chunk is missing (premises,
  definitions, references), looking at the document context; (2) *filter and score* each item —
  only what the context actually resolves, with a confidence score, above ``min_score``; (3)
  *merge* the kept items into a rewritten chunk. Stored as ``meta["rewritten"]`` (None when nothing
  was missing) and ``meta["missing"]`` (the kept items with their resolution and score). An answer
  of stage 1 or 2 that holds no JSON list is recorded as a ``compensation_unreadable`` bubble
  (``rewritten`` stays None), never taken for "nothing is missing".
* ``"summary"`` — two stages per chunk: (1) a *global supplementary* summary — what the rest of the
  document says that this chunk needs; (2) a *local* summary of the chunk fused with it. Stored as
  ``meta["summary"]`` and ``meta["supplement"]``.

The document context shown to the LLM is the document's opening (its title and framing) plus a
window of text around the chunk, so the cost per chunk is bounded whatever the document's length.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InputError
from ..tree import ChunkTree, build_tree
from ..types import Bubble, Chunk
from .llm_breaks import ChatModel

__all__ = ["compensate", "document_context", "parse_json"]

MODES = ("rewrite", "summary")

_IDENTIFY = (
    "You read one chunk cut from a longer document. List what a reader of the chunk alone would miss: "
    "premises it relies on, terms it uses without defining them, and references (pronouns, \"this "
    "method\", \"the above\") whose meaning lies outside the chunk. Answer only with a JSON list of "
    "objects {\"item\": \"...\", \"kind\": \"premise|definition|reference\"}; answer [] if nothing is missing."
)
_RESOLVE = (
    "For each item a chunk is missing, find what the document context says about it. Answer only with "
    "a JSON list of objects {\"item\": \"...\", \"resolution\": \"what the context says, or empty if it "
    "says nothing\", \"score\": a number from 0 to 1 for how sure and how necessary it is}."
)
_MERGE = (
    "Rewrite the chunk so that it can be understood on its own: weave the given missing information "
    "into it where it is needed, resolve references, and change nothing else. Keep the chunk's "
    "language. Answer only with the rewritten chunk."
)
_GLOBAL = (
    "You read one chunk cut from a longer document and the document context. Write, in two or three "
    "sentences, the background from the rest of the document that a reader of this chunk needs (who or "
    "what it is about, definitions, premises). Write in the chunk's language. Answer with the text only."
)
_LOCAL = (
    "Summarise the chunk in two or three sentences, fused with the given background so that the "
    "summary stands on its own. Write in the chunk's language. Answer with the summary only."
)


def _ask(llm: ChatModel, system: str, user: str, max_tokens: int) -> str:
    res = llm.complete([{"role": "system", "content": system}, {"role": "user", "content": user}],
                       max_tokens=max_tokens, temperature=0.0)
    return str(getattr(res, "text", res)).strip()


def parse_json(answer: str) -> Any:
    """The first JSON list or object in an answer (code fences and prose around it tolerated);
    None when there is none."""
    s = re.sub(r"```(?:json)?", "", answer)
    for open_, close in (("[", "]"), ("{", "}")):
        i = s.find(open_)
        j = s.rfind(close)
        if 0 <= i < j:
            try:
                return json.loads(s[i : j + 1])
            except ValueError:
                continue
    return None


def document_context(tree: ChunkTree, chunk: Chunk, *, head_chars: int = 600, window_chars: int = 3000) -> str:
    """The document's opening plus ``window_chars`` of text around ``chunk`` (the chunk marked)."""
    text = tree.text
    half = window_chars // 2
    lo = max(0, chunk.start - half)
    hi = min(len(text), chunk.end + half)
    parts = []
    if lo > 0:
        parts.append("[Document opening]\n" + text[: min(head_chars, lo)] + ("\n…" if lo > head_chars else ""))
    parts.append("[Around the chunk]\n" + text[lo : chunk.start] + "<<<CHUNK>>>" + text[chunk.end : hi])
    return "\n\n".join(parts)


def _rewrite(llm: ChatModel, tree: ChunkTree, chunk: Chunk, ctx: str, min_score: float,
             max_items: int) -> dict[str, Any]:
    body = tree.text_of(chunk)
    # 1. identify
    answer = _ask(llm, _IDENTIFY, f"Document context:\n{ctx}\n\nChunk:\n{body}", 400)
    found = parse_json(answer)
    if not isinstance(found, list):  # not "nothing is missing" ([]): an answer we could not read
        return {"rewritten": None, "missing": [], "compensation": "rewrite", "unreadable": ("identify", answer)}
    items = []
    for x in found:
        name = x.get("item") if isinstance(x, dict) else x
        if isinstance(name, str) and name.strip():
            items.append({"item": name.strip(), "kind": str(x.get("kind", "")) if isinstance(x, dict) else ""})
    items = items[:max_items]
    if not items:
        return {"rewritten": None, "missing": [], "compensation": "rewrite"}
    # 2. filter and score against the context
    listing = "\n".join(f"- {it['item']}" for it in items)
    answer = _ask(llm, _RESOLVE, f"Document context:\n{ctx}\n\nChunk:\n{body}\n\nMissing items:\n{listing}", 600)
    scored = parse_json(answer)
    if not isinstance(scored, list):
        return {"rewritten": None, "missing": [], "compensation": "rewrite", "unreadable": ("resolve", answer)}
    by_name = {it["item"]: it for it in items}
    kept = []
    for x in scored:
        if not isinstance(x, dict):
            continue
        name = str(x.get("item", "")).strip()
        res = str(x.get("resolution", "") or "").strip()
        try:
            score = float(x.get("score", 0.0))
        except (TypeError, ValueError):
            score = 0.0
        if name in by_name and res and score >= min_score:
            kept.append({**by_name[name], "resolution": res, "score": score})
    if not kept:
        return {"rewritten": None, "missing": [], "compensation": "rewrite"}
    # 3. merge into a rewritten chunk
    info = "\n".join(f"- {k['item']}: {k['resolution']}" for k in kept)
    rewritten = _ask(llm, _MERGE, f"Missing information:\n{info}\n\nChunk:\n{body}", 1024)
    return {"rewritten": rewritten or None, "missing": kept, "compensation": "rewrite"}


def _summary(llm: ChatModel, tree: ChunkTree, chunk: Chunk, ctx: str) -> dict[str, Any]:
    body = tree.text_of(chunk)
    supplement = _ask(llm, _GLOBAL, f"Document context:\n{ctx}\n\nChunk:\n{body}", 300)
    summary = _ask(llm, _LOCAL, f"Background:\n{supplement}\n\nChunk:\n{body}", 300)
    return {"summary": summary or None, "supplement": supplement or None, "compensation": "summary"}


def compensate(
    tree: ChunkTree,
    llm: ChatModel,
    mode: str = "rewrite",
    *,
    chunks: Iterable[Chunk | str] | None = None,
    min_score: float = 0.5,
    max_items: int = 8,
    head_chars: int = 600,
    window_chars: int = 3000,
    source: str = "<text>",
) -> ChunkTree:
    """A new tree whose chunks (the leaves, or the given ``chunks``) carry compensation metadata
    (see the module docstring); ``source`` names the text in the bubbles of unreadable answers.
    Spans, ids and text are unchanged; ``stats["compensation"]`` counts
    the chunks done and the LLM calls made."""
    if mode not in MODES:
        raise InputError(f"compensation mode must be one of {', '.join(MODES)}, got {mode!r}")
    if not 0.0 <= min_score <= 1.0:
        raise InputError(f"min_score must be in [0, 1], got {min_score}")
    ids = [c if isinstance(c, str) else c.id for c in chunks] if chunks is not None else [c.id for c in tree.leaves()]
    for cid in ids:
        tree.get(cid)  # raises on unknown ids
    calls = _Counting(llm)
    extra: dict[str, dict[str, Any]] = {}
    for cid in ids:
        c = tree.get(cid)
        ctx = document_context(tree, c, head_chars=head_chars, window_chars=window_chars)
        if mode == "rewrite":
            extra[cid] = _rewrite(calls, tree, c, ctx, min_score, max_items)
        else:
            extra[cid] = _summary(calls, tree, c, ctx)
    # an answer that could not be read is a bubble, not a silent "nothing was missing"
    unreadable = [Bubble("compensation_unreadable", tree.text_of(tree.get(cid))[:120], "low",
                         {"source": source, "chunk_id": cid, "span": [tree.get(cid).start, tree.get(cid).end],
                          "stage": e["unreadable"][0],
                          "answer": e.pop("unreadable")[1][:500]})
                  for cid, e in extra.items() if "unreadable" in e]
    rows = []
    for c in tree:
        meta: Mapping[str, Any] = c.meta
        if c.id in extra:
            meta = {**c.meta, **extra[c.id]}
        rows.append((c.id, c.start, c.end, c.method, meta))
    stats = {**tree.stats, "compensation": {"mode": mode, "chunks": len(ids), "llm_calls": calls.n,
                                            "rewritten": sum(1 for e in extra.values() if e.get("rewritten")),
                                            "summarised": sum(1 for e in extra.values() if e.get("summary")),
                                            "unreadable": len(unreadable)}}
    return build_tree(tree.text, rows, bubbles=(*tree.bubbles, *unreadable), stats=stats, unit=tree.unit)


class _Counting:
    def __init__(self, llm: ChatModel) -> None:
        self.llm = llm
        self.n = 0

    def complete(self, messages: list[dict[str, str]], **kw: Any) -> Any:
        self.n += 1
        return self.llm.complete(messages, **kw)

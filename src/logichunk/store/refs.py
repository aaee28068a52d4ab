"""A stored chunk's *ref*, ``DOCUMENT_ID#DOTTED_ID@TAG`` (``4f3a…#2.3.1@9c1e07ab``): made here, and
read back and resolved here, by everything that hands refs out (search hits, ``get_chunk``'s nodes, the
CLI, the HTTP service, the MCP tools).

Why the tag: a dotted id is a position, not a name. An edit that lengthens a block re-chunks its
chapter, and the untouched chunks after it keep their text but move to other ids (``1.3`` becomes
``1.4``), so a bare ``DOC#1.3`` kept by an agent would silently name other text. The tag is the first
:data:`TAG_CHARS` hex digits of the sha256 of the chunk's text (the ``content_hash`` the store keeps
for every chunk), so resolving a tagged ref gives the text it named or says that it changed: the chunk
at that id if it still has that text; else the chunk of that document that has it (renumbered:
``moved_from`` says so); else :class:`RefChanged`, an :class:`~logichunk.errors.InputError` of one line. An untagged ref
(``DOC#2.3``) reads whatever is at that id now, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..errors import InputError
from ..ids import parse_id
from .plan import sha256

__all__ = ["REF_CHARS", "TAG_CHARS", "Ref", "RefChanged", "RefNotFound", "Resolved", "content_tag", "hit_ref", "make_ref", "parse_ref", "resolve"]

#: hex digits of a ref's tag: 32 bits, so a chunk's text is told from another's of its document with
#: a chance of a mistake of one in four billion per chunk; a longer tag (up to the whole sha256) is read too
TAG_CHARS = 8
#: the longest ref read (a document id, a dotted id and a tag of 64 hex digits fit many times over): a longer
#: one is refused by its length, not echoed back whole in the error (the service's ``?ref=`` bound too)
REF_CHARS = 300
_HEX = frozenset("0123456789abcdef")


class RefNotFound(InputError):
    """An untagged ref whose dotted id names no chunk of its document (now)."""


class RefChanged(InputError):
    """A tagged ref whose text is nowhere in its document any more: the chunk was edited."""


def content_tag(text: str) -> str:
    """The tag of a chunk's text: the head of its sha256 (the store's ``content_hash``)."""
    return sha256(text)[:TAG_CHARS]


def make_ref(document_id: str, dotted_id: str, text: str) -> str:
    """The ref of the chunk (or chapter) ``dotted_id`` of ``document_id`` whose text is ``text``."""
    return f"{document_id}#{dotted_id}@{content_tag(text)}"


def hit_ref(document_id: str, dotted_id: object, level: object, text: object) -> str | None:
    """A search hit's ref (from its meta's ``level_name`` and ``text``); None for a lexical fallback hit over
    a block not chunked yet, which has no dotted id to name."""
    if level == "block" or not isinstance(dotted_id, str) or not isinstance(text, str):
        return None
    return make_ref(document_id, dotted_id, text)


@dataclass(frozen=True)
class Ref:
    """A ref read back: ``tag`` is None for an untagged (older) ref."""

    document_id: str
    dotted_id: str
    tag: str | None = None

    def __str__(self) -> str:
        return f"{self.document_id}#{self.dotted_id}" + (f"@{self.tag}" if self.tag else "")


def parse_ref(ref: object, document_id: str | None = None) -> Ref:
    """``DOC#DOTTED[@TAG]``, or ``DOTTED[@TAG]`` with ``document_id``; a one-line InputError otherwise."""
    if not isinstance(ref, str) or not ref.strip():
        raise InputError("id is empty")
    if len(ref) > REF_CHARS:
        raise InputError(f"id is {len(ref):,} characters; a ref is at most {REF_CHARS} (pass the ref as search "
                         "gave it)")
    text = ref.strip()
    doc, sep, rest = text.rpartition("#")
    if not sep:
        doc, rest = (document_id or ""), text
    if not doc:
        raise InputError(f"id {ref!r} names no document: use the ref from search (DOCUMENT_ID#DOTTED_ID@TAG), "
                         "or pass document_id")
    dotted, at, tag = rest.partition("@")
    parts = dotted.split(".")
    if not all(p.isdigit() and p.isascii() and not p.startswith("0") for p in parts):
        raise InputError(f"{dotted!r} is not a dotted id (like 2 or 2.3 or 2.3.1)")
    if at:
        tag = tag.lower()
        if not TAG_CHARS <= len(tag) <= 64 or not set(tag) <= _HEX:
            raise InputError(f"ref {text!r}: the tag after '@' must be {TAG_CHARS} to 64 hex digits, got {tag!r} "
                             "(pass the ref as search gave it, or drop '@…' to read what that id holds now)")
    return Ref(doc, dotted, tag if at else None)


@dataclass(frozen=True)
class Resolved:
    """Where a ref's text is now: ``dotted_id``, and ``moved_from``, the id the ref named, when that differs."""

    dotted_id: str
    moved_from: str | None = None


def resolve(ref: Ref, text_at: Callable[[str], str | None], texts: Callable[[], Mapping[str, str]]) -> Resolved:
    """Where ``ref``'s text is in its document now. ``text_at(dotted)``: the text at that id (None: no such
    chunk); ``texts()``: every chunk and chapter of the document by dotted id, asked only when the text
    moved. Several with the text (a parent of one child has its child's): the one nearest the named id,
    at its depth first. An untagged ref resolves to its id as it is (what older refs did)."""
    here = text_at(ref.dotted_id)
    if ref.tag is None:
        if here is None:
            raise RefNotFound(f"no chunk {ref.dotted_id!r} in document {ref.document_id!r} (it may have been "
                             "re-chunked; search again)")
        return Resolved(ref.dotted_id)
    if here is not None and sha256(here).startswith(ref.tag):
        return Resolved(ref.dotted_id)
    same = [d for d, t in texts().items() if sha256(t).startswith(ref.tag)]
    if not same:
        raise RefChanged(f"chunk {ref.document_id}#{ref.dotted_id} changed since that ref was made (re-chunked "
                         "after an edit); search again")
    want = parse_id(ref.dotted_id)

    def nearness(dotted: str) -> tuple[bool, tuple[int, ...], tuple[int, ...]]:
        got = parse_id(dotted)
        return len(got) != len(want), tuple(abs(a - b) for a, b in zip(got, want, strict=False)), got

    return Resolved(min(same, key=nearness), moved_from=ref.dotted_id)

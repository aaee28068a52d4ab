"""A document's whole text replaced in one call: what an editor holding the text (a writing assistant's buffer)
sends instead of mapping each keystroke onto blocks itself.

The new text is cut as an ingest cuts it (:func:`~logichunk.store.ingest.chapter_blocks`) and merged into the
stored blocks by the ingest's own merge (:func:`~logichunk.store.ingest.merge_file`, the text winning every block):
unchanged blocks keep their ids, chunks and vectors; changed ones are edited, new ones added, gone ones removed;
chapters follow the headings. Only the chapters touched are marked for a re-chunk, and a re-chunk keeps their
parents that did not change. The text is written as store edits are, never as the document's file's text: an
ingest of the file later still tells the file's own changes from these (and keeps them, or says a conflict).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..text.decode import blank
from .base import Store
from .ingest import _text_of, chapter_blocks, merge_file
from .plan import sha256


@dataclass(frozen=True)
class TextReplaced:
    """What :func:`replace_text` did: the blocks whose text changed, those added and those removed (ids), and the
    document's text now (its sha256, the base of the next call, and its length)."""

    document_id: str
    changed: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    sha256: str
    chars: int

    @property
    def touched(self) -> bool:
        return bool(self.changed or self.added or self.removed)


def document_sha256(store: Store, document_id: str) -> str:
    """The hash of a document's text (its blocks in order): the base a client sends back (``expected_sha256``)."""
    return sha256(_text_of(store.source_blocks(document_id)))


def replace_text(store: Store, document_id: str, text: str, *, expected_sha256: str | None = None) -> TextReplaced:
    """Make ``text`` the document's text (see the module docstring). ``expected_sha256``: optimistic locking — a
    :class:`~logichunk.store.base.StaleTextError` (its ``sha256``: the text's now), nothing written, unless the
    document's text still hashes to it. The same text again is no write at all, whatever its blocks."""
    if not isinstance(text, str):
        raise InputError("a document's text must be a string")
    why = blank(text)  # (only whitespace too, as adding one refuses it: a document of blanks has nothing to find)
    if why:
        raise InputError(f"the text is {why}: delete the document instead")
    if expected_sha256 is not None and not isinstance(expected_sha256, str):
        raise InputError(f"expected_sha256 must be a text's sha256 (a hex string), got {expected_sha256!r}")
    store._require("documents", document_id, "document")
    new = sha256(text)
    if document_sha256(store, document_id) == new and expected_sha256 in (None, new):
        return TextReplaced(document_id, (), (), (), new, len(text))
    m = merge_file(store, document_id, chapter_blocks(text), as_source=False, base_sha256=expected_sha256)
    if m is None:  # pragma: no cover - the store's text as the base records every block: the merge always aligns
        raise InputError(f"document {document_id}: its blocks could not be aligned with the text; nothing written")
    return TextReplaced(document_id, tuple(bid for bid, _rev, _t in m.take), m.added, m.removed, new, len(text))

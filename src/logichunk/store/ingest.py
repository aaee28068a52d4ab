"""Files -> documents -> chapters (by headings) -> blocks (by blank lines) in a store.

A chapter starts at a Markdown heading, a ``第…章/回/节/卷`` line or a ``Chapter N`` line; text
before the first heading is a chapter of its own. Blocks are blank-line blocks that keep their
trailing whitespace, so the blocks of a chapter concatenate back to it exactly.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..chunkers.parent_child import blank_line_blocks
from ..errors import InputError
from .base import Store

SUFFIXES = (".txt", ".md", ".markdown", ".rst", ".text")

_HEADING = re.compile(
    r"^(?:#{1,6}[ \t]+\S.*|第[0-9０-９零〇一二三四五六七八九十百千两]+[章回节卷].*|(?:Chapter|CHAPTER)[ \t]+\w+.*)$",
    re.MULTILINE,
)


def split_chapters(text: str) -> list[tuple[str | None, str]]:
    """``[(title, chapter text), ...]``; the texts concatenate back to ``text``."""
    starts = [m.start() for m in _HEADING.finditer(text)]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    edges = [*starts, len(text)]
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b <= a:
            continue
        part = text[a:b]
        m = _HEADING.match(part)
        title = m.group().lstrip("#").strip() if m else None
        out.append((title, part))
    return out


def read_text_file(path: Path) -> str:
    try:
        from ..text.decode import read_path  # the shared decoder, when present

        return read_path(path)
    except ImportError:
        pass
    data = path.read_bytes()
    if b"\x00" in data[:4096]:
        raise InputError(f"{path} looks like a binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not valid UTF-8") from None


def iter_files(paths: Sequence[str], suffixes: Sequence[str] = SUFFIXES) -> Iterator[Path]:
    for p in paths:
        path = Path(p)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for f in sorted(files):
                    if f.lower().endswith(tuple(suffixes)):
                        yield Path(root) / f
        elif path.exists():
            yield path
        else:
            raise InputError(f"no such file or folder: {p}")


@dataclass(frozen=True)
class IngestReport:
    documents: int
    chapters: int
    blocks: int
    chars: int
    parents: int
    children: int
    embedded: int
    seconds: float
    unchanged: tuple[str, ...] = ()  # files already stored with the same text: skipped
    replaced: tuple[str, ...] = ()  # files whose earlier document was replaced (``replace=True``)

    @property
    def chars_per_second(self) -> float:
        return self.chars / self.seconds if self.seconds > 0 else 0.0


def ingest_text(store: Store, title: str, text: str, source: str | None = None) -> str:
    chapters = [(t, blank_line_blocks(body)) for t, body in split_chapters(text)]
    return store.add_document(title, chapters, source=source)


def _stored_sources(store: Store) -> dict[str, list[str]]:
    """Resolved source path -> ids of this project's documents ingested from it."""
    out: dict[str, list[str]] = {}
    for did, _title, source in store.documents():
        if source:
            out.setdefault(os.path.realpath(source), []).append(did)
    return out


def _document_text(store: Store, document_id: str) -> str:
    return "".join(store.chapter_text(cid) for cid, _order, _title in store.chapters(document_id))


def ingest(store: Store, paths: Sequence[str], *, rechunk: bool = True, replace: bool = False) -> IngestReport:
    """Store each file as a document (folders: their text files), then chunk and embed every dirty
    block of the project (so a later call also chunks what ``rechunk=False`` left). A file stored before from the same path is not stored twice: with the same text it is
    skipped (``unchanged``); with other text it is an :class:`InputError` naming the document,
    unless ``replace`` — then the earlier document (and any edits made to it in the store) is
    replaced by the file."""
    t0 = time.perf_counter()
    calls0 = store.embed_calls
    docs = chapters = blocks = chars = parents = children = 0
    unchanged: list[str] = []
    replaced: list[str] = []
    known = _stored_sources(store)
    todo: list[tuple[Path, str, list[str]]] = []
    files = list(iter_files(paths))
    if not files:
        raise InputError(f"no text files ({', '.join(SUFFIXES)}) in {', '.join(map(str, paths))}")
    for f in files:  # read and check every file before anything is written
        text = read_text_file(f)
        earlier = known.get(os.path.realpath(f), [])
        if earlier and all(_document_text(store, d) == text for d in earlier):
            unchanged.append(str(f))
        elif earlier and not replace:
            raise InputError(f"{f} is stored already (document {earlier[0]}) with other text; nothing was "
                             "ingested — use --replace to replace that document, or edit its blocks")
        else:
            todo.append((f, text, earlier))
    for f, text, earlier in todo:
        for d in earlier:
            store.delete_document(d)
        if earlier:
            replaced.append(str(f))
        chs = split_chapters(text)
        store.add_document(f.stem, [(t, blank_line_blocks(body)) for t, body in chs], source=str(f))
        docs += 1
        chapters += len(chs)
        blocks += sum(len(blank_line_blocks(b)) for _, b in chs)
        chars += len(text)
    if rechunk:
        for r in store.rechunk_dirty():
            parents += r.parents_written
            children += r.children_written
    return IngestReport(docs, chapters, blocks, chars, parents, children, store.embed_calls - calls0,
                        time.perf_counter() - t0, tuple(unchanged), tuple(replaced))

"""Files -> documents -> chapters (by headings) -> blocks (by blank lines) in a store.

A chapter starts at a Markdown heading, or at a ``第…章/回/节/卷`` or ``Chapter N`` line laid out as a
book opens a chapter (:func:`~logichunk.text.structure.chapter_opening`: not a line of prose that begins with
those words), never inside fenced code, front matter or a comment block; text before the first heading is
a chapter of its own. Blocks are blank-line blocks that keep their
trailing whitespace, so the blocks of a chapter concatenate back to it exactly. A chapter longer than
:data:`CHAPTER_PART_CHARS` is stored as consecutive chapters of the same title, cut between blocks; a block
longer than that (a log without blank lines) is first cut in lines.
"""

from __future__ import annotations

import errno
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as with_fields
from difflib import SequenceMatcher
from pathlib import Path

from ..chunkers.parent_child import blank_line_blocks, lf_lines
from ..errors import InputError
from ..text.decode import check_encoding, check_path, dangling_link, empty_input, file_title, read_path
from ..text.folders import (
    TEXT_SUFFIXES,
    dangling_summary,
    hidden_summary,
    skipped_summary,
    special_kind,
    unreadable_line,
    walk_text_files,
)
from .base import MergedBlock, RechunkResult, SourcedBlock, StaleTextError, Store
from .chapters import split_chapters
from .plan import sha256


def read_text_file(path: Path, max_unpacked: int | None = None, *, encoding: str | None = None,
                   on_decoding: Callable[[str], None] | None = None) -> str:
    """A file's text as every verb reads it (:func:`~logichunk.text.decode.read_path`: ``encoding`` a codec
    named, ``on_decoding`` told how its bytes were read)."""
    return read_path(path, max_unpacked=max_unpacked, encoding=encoding, on_decoding=on_decoding)


def iter_files(paths: Sequence[str], suffixes: Sequence[str] = TEXT_SUFFIXES,
               skipped: list[Path] | None = None, unreadable: list[OSError] | None = None,
               hidden: list[Path] | None = None, dangling: list[Path] | None = None) -> Iterator[Path]:
    """The files of ``paths``: a file as given (whatever its name), a folder's files whose names end in
    one of ``suffixes`` (:func:`~logichunk.text.folders.walk_text_files`). The folder's other files go to
    ``skipped``, so a report can say what was left out: a ``README`` or ``NEWS`` without a suffix is ingested
    only when named; its hidden files and folders (``.git``, ``.venv``: no one's documents) are not read, and go
    to ``hidden``. The error of a folder that cannot be listed (permission denied) goes to ``unreadable``: a
    walk that passed over it in silence left its files out unsaid, and a prune took them for deleted. A link in a
    folder that leads to no file goes to ``dangling`` (None: it is listed, and its reading refused)."""
    for p in paths:
        check_path(p)  # ("": the current folder, every text file of it stored)
        path = Path(p)
        if path.is_dir():
            yield from walk_text_files(path, tuple(suffixes), skipped=skipped, hidden=hidden, unreadable=unreadable,
                                       dangling=dangling)
        elif path.exists():
            if kind := special_kind(path):  # (``chunk`` reads one as named: ``<(cmd)``; an ingest reads it twice)
                raise InputError(f"{p} is {kind}, not a regular file: an ingest reads a file twice (to check it, then "
                                 "to store it) — save it to a file and ingest that")
            yield path
        else:
            raise InputError(missing_path_said(p))


def check_paths(paths: object, verb: str = "ingest") -> None:
    """Refuse ``paths`` given as one path, not a list of them, in one line: a str is a sequence of characters,
    each read as a path (``ingest(store, "examples/")`` said "no such file or folder: e"), and a ``Path`` is
    not iterable (a TypeError)."""
    if isinstance(paths, str | bytes | os.PathLike):
        raise InputError(f"{verb} takes a list of files and folders, got one {type(paths).__name__}: "
                         f"{verb}(store, [{os.fsdecode(paths)!r}])")
    if not isinstance(paths, Iterable):  # (None, a number: a TypeError from deep inside the walk before)
        raise InputError(f"{verb} takes a list of files and folders, got {type(paths).__name__}")


def missing_path_said(p: str) -> str:
    """The one line for a named path that is neither a file nor a folder. Why: a symbolic link that loops
    (``ln -s loop loop``) or points nowhere reads as missing, and "no such file" sent the user looking
    for a file that is there, as a link."""
    try:
        os.stat(p)
    except OSError as e:
        if e.errno == errno.ELOOP:
            what = "is a symbolic link that loops" if os.path.islink(p) else "goes through a symbolic link that loops"
            return f"{p} {what} (it leads back to itself): not a file or folder"
        if dangling := dangling_link(p):
            return f"{p} is {dangling}: not a file or folder"
        if p == "-":  # (``chunk -`` reads stdin; an ingest reads a file twice, which a stream cannot give)
            return ("-: an ingest reads files and folders, not stdin (it reads a file twice: to check it, then to "
                    "store it) — save the text to a file and ingest that")
    return f"no such file or folder: {p}"


@dataclass
class FileWalk:
    """What :func:`list_files` met besides the files it lists, for the report."""

    skipped: list[Path] = field(default_factory=list)  # names not of text files: not read
    hidden: list[Path] = field(default_factory=list)  # hidden files and folders (.git): not read
    unreadable: list[OSError] = field(default_factory=list)  # the errors of folders that could not be listed
    duplicates: list[str] = field(default_factory=list)  # "path: the same file as first": reached again
    again: list[Path] = field(default_factory=list)  # the paths of ``duplicates``: each a path to its file too
    dangling: list[Path] = field(default_factory=list)  # links in the folders that lead to no file: not read

    @property
    def unlisted(self) -> list[str]:
        """The folders that could not be listed: nothing under them is pruned."""
        return [str(e.filename) for e in self.unreadable]


def list_files(paths: Sequence[str], walk: FileWalk | None = None, none_ok: bool = False) -> list[Path]:
    """:func:`iter_files` of ``paths``, each file once (:func:`once_each`); none at all is an
    :class:`InputError` (naming what was skipped) unless ``none_ok`` (a prune of a folder emptied since: the
    gone files' documents are still to remove)."""
    walk = FileWalk() if walk is None else walk
    files = once_each(iter_files(paths, skipped=walk.skipped, unreadable=walk.unreadable, hidden=walk.hidden,
                                 dangling=walk.dangling),
                      walk.duplicates, walk.again)
    if not files and not none_ok:
        raise InputError(no_files_said(paths, walk))
    return files


def no_files_said(paths: Sequence[str], walk: FileWalk) -> str:
    """The one line for folders holding no text file, naming what was skipped (each reason once)."""
    left = [skipped_summary([str(f) for f in walk.skipped])] if walk.skipped else []
    left += [hidden_summary([str(f) for f in walk.hidden])] if walk.hidden else []
    left += [dangling_summary([str(f) for f in walk.dangling])] if walk.dangling else []
    said = [*map(unreadable_line, walk.unreadable), *left]
    return (f"no text files ({', '.join(TEXT_SUFFIXES)}) in {', '.join(map(str, paths))}"
            + (f": {'; '.join(said)}" if said else ""))


def prune_needs_none(paths: Sequence[str], prune: bool) -> bool:
    """Whether an ingest goes on with no text file to store: a ``--prune`` of a folder given (its files all
    deleted since) still removes their documents, which an early "no text files" left searchable."""
    return prune and any(os.path.isdir(p) for p in paths)


def once_each(files: Iterable[Path], duplicates: list[str], again: list[Path] | None = None) -> list[Path]:
    """``files`` with each file once by its real path: a file named again, or reached again through another
    folder given or a link, was stored once more (every hit in it twice). The first name stays; each other
    goes to ``duplicates`` as one line, and its path to ``again`` (a path its document is reached by too)."""
    first: dict[str, Path] = {}
    out: list[Path] = []
    for f in files:
        real = os.path.realpath(f)
        if real not in first:
            first[real] = f
            out.append(f)
        else:
            duplicates.append(f"{f}: already read in this run" if str(f) == str(first[real]) else
                              f"{f}: the same file as {first[real]}, already read in this run")
            if again is not None:
                again.append(f)
    return out


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
    replaced: tuple[str, ...] = ()  # files taken over their document's store edits, or over several (``replace=True``)
    empty: tuple[str, ...] = ()  # empty files among several: skipped (one empty file alone is an error)
    skipped: tuple[str, ...] = ()  # files in the folders given whose names are not of text files: not read
    pruned: tuple[str, ...] = ()  # files of documents removed: gone from the folder, or emptied (``prune=True``)
    edited: tuple[str, ...] = ()  # files whose document keeps blocks edited only in the store (the rest merged)
    refused: tuple[str, ...] = ()  # "file: why" of files among several not ingested (undecodable, binary, other text)
    duplicates: tuple[str, ...] = ()  # "file: the same file as first" of files reached again in this run: skipped
    unreadable: tuple[str, ...] = ()  # "folder: why" of folders that could not be listed: their files not read
    unpruned: tuple[str, ...] = ()  # "source (why; document ID)" of documents ``prune`` could not check: kept
    unmatched: tuple[str, ...] = ()  # ids of documents with a relative source (an older logichunk's) matched to no file
    nothing: str = ""  # why nothing was read (a folder pruned with no text file left in it), else ""
    updated: tuple[str, ...] = ()  # files whose document was updated in place: took the blocks changed in them
    conflicts: tuple[str, ...] = ()  # "file: block B of document D ..." of blocks changed in the file and the store
    added: tuple[str, ...] = ()  # "file: block B of document D" of blocks new in the file, added to its document
    removed: tuple[str, ...] = ()  # "file: block B of document D" of blocks removed in the file, from its document
    overwritten: tuple[str, ...] = ()  # "file: block B of document D" of store edits ``replace`` dropped for the file
    hidden: tuple[str, ...] = ()  # hidden files and folders in the folders given (.git, .venv): not read
    emptied: tuple[str, ...] = ()  # of ``pruned``, the files removed because they are empty (the others are gone)
    moved: tuple[tuple[str, str], ...] = ()  # (old source, file) of files moved or renamed: their documents followed
    # "file: codec" of files whose bytes were not read as UTF-8: GB18030 read as Chinese (``gb18030``, the guess
    # said), the ``encoding`` named, UTF-16/32 by their byte-order mark (offsets count in the decoded text)
    decoded: tuple[str, ...] = ()
    new: tuple[str, ...] = ()  # files stored as new documents (not ``replaced``): named, as the others are
    kept: tuple[tuple[str, str, str], ...] = ()  # (path, document, other path) of files gone from the folders
    # pruned whose document stays, the other path still leading to the file
    dangling: tuple[str, ...] = ()  # links in the folders that lead to no file (a drive not mounted): not read, a
    # note, no failure; a document stored through one is kept by a prune (``unpruned``)

    @property
    def failed(self) -> bool:
        """Whether some input was not ingested for an error (the CLI's exit status 1, as ``chunk`` gives for a
        folder with a bad file): a refused file, an unreadable folder, or a block whose change in the file was
        not taken (a conflict with an edit made in the store); skips by rule (unchanged, empty, edited, named
        twice) are not failures, nor a link in a folder that leads to no file (``dangling``: a drive not mounted
        is no error of a daily sync; a document stored through it is kept)."""
        return bool(self.refused or self.unreadable or self.conflicts)

    @property
    def chars_per_second(self) -> float:
        return self.chars / self.seconds if self.seconds > 0 else 0.0


#: the most characters of blocks a stored chapter holds: a longer chapter (a book without chapter lines, a
#: transcript, a log) is stored as consecutive chapters of the same title cut between blocks, since a chapter
#: is planned in one pass, at ~95 MB of memory per MB of its text (one 8 MB chapter: 767 MB; as 8 parts: 379 MB)
CHAPTER_PART_CHARS = 1 << 20

#: where a part of a long chapter (or a piece of a long block) ends, once it holds half its limit: after the first
#: block (line) whose text's CRC-32 is 0 modulo this, else at the limit. Why by the text: cut by offset alone, a
#: paragraph or a line added in the middle of a book or a log moved every cut after it, and an ingest of that one
#: line re-chunked and re-embedded the half of the file after it (a 22 MB log: 10,087 parents, 95 s); cut by
#: content, the cuts after an edit fall where they fell, and only the parts around it change. 64: fixed a priori,
#: a cut within some tens of blocks or lines of the half-way mark.
CUT_ODDS = 64


def _cuts_after(piece: str) -> bool:
    """Whether a part may end after ``piece`` (a block or a line), by its text alone (:data:`CUT_ODDS`)."""
    return zlib.crc32(piece.encode("utf-8", "surrogatepass")) % CUT_ODDS == 0


def chapter_blocks(text: str) -> list[tuple[str | None, list[str]]]:
    """What a text is stored as: ``[(chapter title, [block texts...]), ...]`` (see the module docstring);
    a chapter over :data:`CHAPTER_PART_CHARS` as parts of its blocks, each ending after a block chosen by its
    text once it holds half of that (:data:`CUT_ODDS`), a block over it first cut in lines
    (:func:`long_block_pieces`)."""
    out: list[tuple[str | None, list[str]]] = []
    for title, body in split_chapters(text):
        part: list[str] = []
        size, first = 0, len(out)
        long = len(body) > CHAPTER_PART_CHARS  # (a chapter within the limit stays whole)
        for block in (p for b in blank_line_blocks(body) for p in long_block_pieces(b)):
            if part and size + len(block) > CHAPTER_PART_CHARS:
                out.append((title, part))
                part, size = [], 0
            part.append(block)
            size += len(block)
            if long and size >= CHAPTER_PART_CHARS // 2 and _cuts_after(block):
                out.append((title, part))
                part, size = [], 0
        if part or len(out) == first:
            out.append((title, part))
    return out


def long_block_pieces(block: str, limit: int | None = None) -> list[str]:
    """``block`` as pieces of at most ``limit`` characters (:data:`CHAPTER_PART_CHARS`), each cut after the
    last line break within reach, else after the last space, else at the limit (a line of a log or a dump
    with no blank line in megabytes: a block is planned whole). A block within the limit is itself."""
    limit = CHAPTER_PART_CHARS if limit is None else limit
    pieces: list[str] = []
    start = 0
    lines = lf_lines(block) if len(block) > limit else block  # (a CR-only log is cut after its lines too)
    while len(block) - start > limit:
        end = start + limit
        cut = _line_cut(lines, start, start + limit // 2, end) or lines.rfind("\n", start, end) + 1 or \
            block.rfind(" ", start, end) + 1
        if cut <= start:
            cut = end
        pieces.append(block[start:cut])
        start = cut
    pieces.append(block[start:])
    return pieces


def _line_cut(lines: str, start: int, lo: int, hi: int) -> int:
    """The end of the first line of ``lines`` ending in ``[lo, hi)`` after which a piece may end by its text
    (:func:`_cuts_after`), 0 when none: a piece of a long block cut by content, as a long chapter's parts are."""
    at = lines.rfind("\n", start, lo) + 1 or start
    while (nl := lines.find("\n", at, hi)) >= 0:
        if nl + 1 >= lo and nl + 1 > start and _cuts_after(lines[at : nl + 1]):
            return nl + 1
        at = nl + 1
    return 0


def ingest_text(store: Store, title: str, text: str, source: str | None = None) -> str:
    return store.add_document(title, chapter_blocks(text), source=source)


def source_of(path: str | os.PathLike[str]) -> str:
    """The source a file's document records: its real path (absolute, links resolved). A path as given
    (``notes/a.md``) names the file only from the folder the ingest ran in: read from another one, a prune
    took the file for deleted and removed its document, edits and all. A link's own name was matched and
    pruned by its target (realpath) while stored as named: once the link was gone, the files read through
    their real folder were stored a second time and the link's documents never pruned."""
    return os.path.realpath(path)


def reached_path(path: str | os.PathLike[str]) -> str:
    """The path a file was reached by, recorded beside its source (:meth:`Store.set_reached_by`): absolute, links
    not resolved. Through a link in a folder to a file outside it (``kb/l.md -> /elsewhere/x.md``) it is what
    lies in the folder: a prune of the folder goes by it once the link is deleted (:func:`prune_missing`)."""
    return os.path.abspath(path)


@dataclass(frozen=True)
class FileDocument:
    """A file as the document it is stored as: its stem as title, its absolute path as source
    (:func:`source_of`), its path as given as ``name`` (what the report says), the path it was reached by as
    ``reached`` (:func:`reached_path`)."""

    title: str
    source: str
    chapters: tuple[tuple[str | None, tuple[str, ...]], ...]
    chars: int
    text_hash: str
    name: str = ""
    reached: str | None = None

    @classmethod
    def of(cls, path: Path, text: str) -> FileDocument:
        chapters = tuple((t, tuple(blocks)) for t, blocks in chapter_blocks(text))
        return cls(file_title(path), source_of(path), chapters, len(text), sha256(text), str(path),
                   reached_path(path))

    @classmethod
    def checked(cls, path: Path, text_hash: str, encoding: str | None = None) -> FileDocument:
        """The file read again to be stored, as its check read it (``text_hash``): the serial and the Ray ingest
        alike. A file deleted, made unreadable or changed since (emptied too) is an :class:`InputError`, its one
        line (:func:`_changed`): refused, never stored as something its check did not read."""
        doc = cls.of(path, read_text_file(path, encoding=encoding))
        if doc.text_hash != text_hash:
            raise InputError(_changed(path))
        return doc

    @property
    def blocks(self) -> int:
        return sum(len(b) for _, b in self.chapters)


def _stored_sources(store: Store, relative: bool = False) -> dict[str, list[str]]:
    """Real source path -> ids of this project's documents ingested from it: the absolute sources, or with
    ``relative`` the relative ones (stored by a logichunk before :func:`source_of`) resolved from the working
    directory. Those are only candidates: from another folder the same relative name is another project's
    file (:meth:`FileChecks.check` matches one only by its text)."""
    out: dict[str, list[str]] = {}
    for did, _title, source in store.documents():
        if source and os.path.isabs(source) != relative and "://" not in source and not source.startswith("memory:"):
            out.setdefault(os.path.realpath(source), []).append(did)
    return out


def _document_text(store: Store, document_id: str) -> str:
    return _text_of(store.source_blocks(document_id))


def _text_of(blocks: Sequence[Sequence[SourcedBlock]]) -> str:
    return "".join(b.content for row in blocks for b in row)


def _edited_in_store(b: SourcedBlock) -> bool:
    """Whether the store's text of a block is not what its file gave it at the last ingest (unrecorded: whether
    it was edited, as an older logichunk told it: a revision past 1)."""
    return b.revision > 1 if b.source_hash is None else sha256(b.content) != b.source_hash


def _written_in_store(b: SourcedBlock) -> bool:
    """Whether the store wrote a block since its file gave it (:func:`_edited_in_store`, or an edit settled since,
    or a merge that took the file's text: a revision past 1). Why apart from an edit standing now: a document
    whose file is merged into it stays merged once its edits are settled (the file copied the store's text, or
    the block the file's), not refused as one the store never touched."""
    return b.revision > 1 or _edited_in_store(b)


def _added_in_store(stored: Sequence[Sequence[SourcedBlock]]) -> list[str]:
    """The blocks added in the store (``add_block``): no record of a file's text, in a document whose other
    blocks have one (a store of an older logichunk recorded none). A store edit like any other: a merge keeps it
    or names it, and ``--replace`` is never said to lose nothing while one stands."""
    if not any(b.source_hash is not None for row in stored for b in row):
        return []
    return [b.id for row in stored for b in row if b.source_hash is None]


@dataclass(frozen=True)
class BlockMerge:
    """A file against its stored document, block by block at the same places (:func:`block_merge`). Each
    block's text at the last ingest (its source hash) tells a change of the file from an edit made in the
    store: changed only in the file, it takes the file's text (``take``); edited only in the store, the edit
    stays (``kept``); changed in both, or edited with no record of its text at the last ingest (an older
    logichunk's store), the store's text stays and the block is a conflict, said, never decided in silence."""

    document_id: str
    take: tuple[tuple[str, int, str], ...] = ()  # (block id, revision, the file's text): changed only in the file
    agree: tuple[tuple[str, int, str], ...] = ()  # (block id, revision, hash): the store's text is the file's, unrecorded
    kept: tuple[str, ...] = ()  # ids of the blocks edited only in the store
    conflicts: tuple[str, ...] = ()  # ids of the blocks changed in the file and in the store: the store's text kept
    unknown: tuple[str, ...] = ()  # of ``conflicts``, those whose text at the last ingest is not recorded
    edited: bool = False  # whether the store wrote the document since it was ingested (:func:`_written_in_store`)
    added: tuple[str, ...] = ()  # ids of the file's blocks new to the document (:func:`structure_merge`): added
    removed: tuple[str, ...] = ()  # ids of the blocks the file no longer holds, not edited in the store: removed
    dropped: tuple[str, ...] = ()  # of ``conflicts``, those removed in the file but edited in the store: kept
    overwritten: tuple[str, ...] = ()  # ids of blocks edited in the store whose edit the file's text replaced (``replace``)


def block_merge(stored: Sequence[Sequence[SourcedBlock]], document_id: str,
                chapters: Sequence[tuple[str | None, Sequence[str]]]) -> BlockMerge | None:
    """How the file read as ``chapters`` (:func:`chapter_blocks`) meets its document's blocks ``stored``
    (:meth:`Store.source_blocks`), place by place; None when the two do not line up (another number of chapters
    or of blocks in one: a paragraph added, removed or split, in the file or in the store)."""
    if [len(row) for row in stored] != [len(texts) for _t, texts in chapters]:
        return None
    take: list[tuple[str, int, str]] = []
    agree: list[tuple[str, int, str]] = []
    kept: list[str] = []
    conflicts: list[str] = []
    unknown: list[str] = []
    for row, (_title, texts) in zip(stored, chapters, strict=True):
        for b, text in zip(row, texts, strict=True):
            if b.content == text:
                if b.source_hash != (h := sha256(text)):
                    agree.append((b.id, b.revision, h))
            elif b.source_hash is None:
                conflicts.append(b.id)
                unknown.append(b.id)
            elif sha256(text) == b.source_hash:
                kept.append(b.id)
            elif sha256(b.content) == b.source_hash:
                take.append((b.id, b.revision, text))
            else:
                conflicts.append(b.id)
    edited = any(_written_in_store(b) for row in stored for b in row) or bool(_added_in_store(stored))
    return BlockMerge(document_id, tuple(take), tuple(agree), tuple(kept), tuple(conflicts), tuple(unknown), edited)


@dataclass(frozen=True)
class StructureMerge:
    """A file merged into its document where its blocks no longer line up (:func:`structure_merge`): what the
    document becomes (``chapters``, for :meth:`Store.rewrite_document`), and what that did (``merge``)."""

    merge: BlockMerge
    chapters: tuple[tuple[str | None, tuple[MergedBlock, ...]], ...]
    revisions: tuple[tuple[str, int], ...]
    paired: tuple[tuple[str, int | None], ...] = ()  # (stored block id, the file's block it aligned with, or None)


def structure_merge(stored: Sequence[Sequence[SourcedBlock]], document_id: str,
                    chapters: Sequence[tuple[str | None, Sequence[str]]]) -> StructureMerge | None:
    """A three-way merge of the file read as ``chapters`` into its document's blocks ``stored``, as git merges
    lines: the hashes the file gave the blocks at the last ingest (the base: its text is not stored) aligned with
    the hashes of the file's blocks now (:class:`difflib.SequenceMatcher`). A block the file kept stays as the
    store has it (edited or not), with its id; one the file changed takes its text unless edited in the store (a
    conflict, the store's text kept); one the file removed goes unless edited in the store (a conflict, kept);
    the file's new blocks are added. The chapters are those a fresh ingest gives the merged text, or, where a
    store edit does not split as a fresh ingest would (it holds a blank line), the file's around its blocks.
    A block with no record of its file's text where others have one (added in the store: ``add_block``,
    :func:`~logichunk.store.replace.replace_text`) is no part of the base: the others are aligned, and it is kept
    where the store put it (after the block before it), a store edit (``kept``). None when no block has a record
    (an older logichunk's store): nothing to align by."""
    every = [b for row in stored for b in row]
    if not any(b.source_hash is not None for b in every):
        return None
    blocks = [b for b in every if b.source_hash is not None]
    texts = [(k, t) for k, (_title, row) in enumerate(chapters) for t in row]
    hashes = [sha256(t) for _k, t in texts]
    matcher = SequenceMatcher(None, [b.source_hash for b in blocks], hashes, autojunk=False)
    out: list[tuple[int | None, MergedBlock]] = []  # (the file's chapter index, or None: a block it no longer holds)
    take: list[tuple[str, int, str]] = []
    kept: list[str] = []
    conflicts: list[str] = []
    removed: list[str] = []
    dropped: list[str] = []
    added = 0  # (their ids are the store's to give: :func:`merge_file` fills them in)
    pairs = _prefer_edited(list(_aligned(matcher, blocks, [t for _k, t in texts])), blocks, hashes)
    paired = tuple((blocks[i].id, j) for i, j in pairs if i is not None)
    for b, j in _with_unrecorded(every, blocks, pairs):
        k, text = texts[j] if j is not None else (None, "")
        if b is not None and b.source_hash is None:  # (added in the store: no base, the file has nothing of it)
            kept.append(b.id)
            out.append((None, MergedBlock(b.id, b.content, None)))
        elif b is None:
            added += 1
            out.append((k, MergedBlock(None, text, sha256(text))))
        elif j is None and _edited_in_store(b):  # (removed or rewritten in the file, edited in the store)
            conflicts.append(b.id)
            dropped.append(b.id)
            out.append((None, MergedBlock(b.id, b.content, b.source_hash)))
        elif j is None:
            removed.append(b.id)
        elif sha256(text) == b.source_hash or b.content == text:  # (the file kept it, or took the store's text)
            if _edited_in_store(b) and b.content != text:
                kept.append(b.id)
            out.append((k, MergedBlock(b.id, b.content, sha256(text) if b.content == text else b.source_hash)))
        elif not _edited_in_store(b):
            take.append((b.id, b.revision, text))
            out.append((k, MergedBlock(b.id, text, sha256(text), take=True)))
        else:
            conflicts.append(b.id)
            out.append((k, MergedBlock(b.id, b.content, b.source_hash)))
    m = BlockMerge(document_id, tuple(take), (), tuple(kept), tuple(conflicts), (), True, ("",) * added,
                   tuple(removed), tuple(dropped))
    return StructureMerge(m, _merged_chapters(out, chapters), tuple((b.id, b.revision) for b in every), paired)


def _in_place(stored: Sequence[Sequence[SourcedBlock]], sm: StructureMerge) -> bool:
    """Whether a file whose blocks line up with the stored ones one to one (:func:`block_merge`) is to be merged
    so, place by place, though a block has no record of its file's text: where every other block aligns by its
    record (``sm``) with the file's block at its own place. Then that block stood there in the file (an older
    logichunk's edit: paired with the file's block, a conflict if they differ); else the counts met by chance (a
    paragraph added in the store, another in the file) and place by place would give blocks their neighbours' text."""
    at = {b.id: k for k, b in enumerate(b for row in stored for b in row)}
    return all(j == at[bid] for bid, j in sm.paired)


def _with_unrecorded(every: Sequence[SourcedBlock], recorded: Sequence[SourcedBlock],
                     pairs: Sequence[tuple[int | None, int | None]]) -> Iterator[tuple[SourcedBlock | None, int | None]]:
    """``pairs`` (indexes into ``recorded``, :func:`_aligned`) as ``(stored block or None, file block index)``,
    each block of ``every`` with no record of its file's text put right after the recorded block it follows in
    the store (those before the first recorded block first): where the store added it, beside its neighbour."""
    after: dict[int, list[SourcedBlock]] = {}
    r = -1
    for b in every:
        if b.source_hash is None:
            after.setdefault(r, []).append(b)
        else:
            r += 1
    yield from ((b, None) for b in after.get(-1, ()))
    for i, j in pairs:
        yield (recorded[i] if i is not None else None), j
        if i is not None:
            yield from ((b, None) for b in after.get(i, ()))


def _aligned(matcher: SequenceMatcher, blocks: Sequence[SourcedBlock], texts: Sequence[str]
             ) -> Iterator[tuple[int | None, int | None]]:
    """``(stored block index, file block index)`` in the merged order, None on the side a block is missing from:
    the hash alignment's matches; a changed run of as many blocks on both sides paired in place (each block with
    the file's block at its place, as when nothing moved); another run first aligned by text (a block whose store
    text the file now holds pairs with it), then its blocks not edited in the store paired in order with the file's
    new ones, the rest removed or added. An edited block of such a run pairs with nothing (a conflict, kept): once
    merged the file's text is in the store by its hash, so the next ingest of the same file changes nothing."""
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal" or i2 - i1 == j2 - j1:
            yield from zip(range(i1, i2), range(j1, j2), strict=True)
            continue
        by_text = SequenceMatcher(None, [b.content for b in blocks[i1:i2]], texts[j1:j2], autojunk=False)
        for sop, a1, a2, b1, b2 in by_text.get_opcodes():
            if sop == "equal":
                yield from zip(range(i1 + a1, i1 + a2), range(j1 + b1, j1 + b2), strict=True)
                continue
            free = iter(range(j1 + b1, j1 + b2))
            for i in range(i1 + a1, i1 + a2):
                yield (i, None if _edited_in_store(blocks[i]) else next(free, None))
            yield from ((None, j) for j in free)


def _prefer_edited(pairs: list[tuple[int | None, int | None]], blocks: Sequence[SourcedBlock],
                   hashes: Sequence[str]) -> list[tuple[int | None, int | None]]:
    """``pairs`` (:func:`_aligned`) where the file removed one of two blocks of the same text: the match goes to
    the one edited in the store, the other removed, rather than that edit said as a conflict (the alignment
    matches either; on the next ingest it took the other, a change from the same file)."""
    for d, (i, j) in enumerate(pairs):
        if i is None or j is not None or not _edited_in_store(blocks[i]):
            continue
        for step in (-1, 1):
            u = d + step
            while 0 <= u < len(pairs) and pairs[u][0] is not None and pairs[u][1] is None:
                u += step
            if 0 <= u < len(pairs) and (iu := pairs[u][0]) is not None and (ju := pairs[u][1]) is not None and \
                    hashes[ju] == blocks[iu].source_hash == blocks[i].source_hash == sha256(blocks[iu].content):
                pairs[u], pairs[d] = (iu, None), (i, ju)
                break
    return pairs


def _merged_chapters(out: Sequence[tuple[int | None, MergedBlock]], chapters: Sequence[tuple[str | None, Sequence[str]]]
                     ) -> tuple[tuple[str | None, tuple[MergedBlock, ...]], ...]:
    """The merged blocks ``out`` cut in chapters: as a fresh ingest of their text cuts it where its blocks are
    theirs (titles following headings); else by the file's chapters (``out``'s indexes into ``chapters``), a
    block the file no longer holds staying with the block before it (the first chapter's, at the start)."""
    merged = [b for _k, b in out]
    fresh = chapter_blocks("".join(b.text for b in merged))
    if [t for _title, row in fresh for t in row] == [b.text for b in merged]:
        rows, at = [], 0
        for title, row in fresh:
            rows.append((title, tuple(merged[at : at + len(row)])))
            at += len(row)
        return tuple(rows)
    groups: dict[int, list[MergedBlock]] = {}
    last = next((k for k, _b in out if k is not None), 0)
    for k, b in out:
        last = last if k is None else k
        groups.setdefault(last, []).append(b)
    return tuple((chapters[k][0], tuple(row)) for k, row in sorted(groups.items()))


def merge_file(store: Store, document_id: str, chapters: Sequence[tuple[str | None, Sequence[str]]],
               file_wins: bool = False, *, as_source: bool = True, base_sha256: str | None = None
               ) -> BlockMerge | None:
    """A changed file merged into its document, written. Where the store edited the document (:func:`_written_in_store`)
    and not ``file_wins``, a three-way merge on the text the file gave each block at the last ingest; else (a document
    the store never edited: nothing of its own to lose; or ``file_wins``, ``--replace``) the same merge with the
    store's text as the base (:func:`_store_as_base`), so the file wins every block and the document becomes its text,
    its id and its untouched blocks' ids and chunks kept. Where the file's blocks still pair one to one with the stored
    ones, in the same chapters, :func:`block_merge`: the blocks changed only in the file take its text (dirty,
    re-chunked as edits are) and those that agree with it record that they do; nothing else is touched (the store's
    edits, the conflicts). Otherwise (blocks or headings added, removed, moved) :func:`structure_merge`, the document
    rewritten around the blocks it keeps (:meth:`Store.rewrite_document`), a block added in the store kept where it
    is; where the store added a block and the file another, so that the counts meet by chance, the structural merge
    too (:func:`_in_place`). None, nothing written, where the blocks no longer line up and none holds a record of its
    file's text (an older logichunk's store: nothing to align by). Decided again when a block is
    edited meanwhile: an edit is never overwritten by a decision made before it.

    Not ``as_source`` (a text that is no file's, :func:`~logichunk.store.replace.replace_text`): the text wins as with
    ``file_wins``, but is written as store edits are (the blocks' records of their file's text stay, new blocks have
    none, as ``add_block``'s), so an ingest of the document's file later still tells its changes from these.
    ``base_sha256``: :class:`~logichunk.store.base.StaleTextError`, nothing written, unless the document's text
    hashes to it, checked on the blocks the write is held to."""
    for _ in range(5):
        stored = store.source_blocks(document_id)
        if base_sha256 is not None and (now := sha256(_text_of(stored))) != base_sha256:
            raise StaleTextError(document_id, base_sha256, now)
        written = any(_written_in_store(b) for row in stored for b in row) or bool(_added_in_store(stored))
        wins = file_wins or not written or not as_source
        base = _store_as_base(stored) if wins else stored
        m = block_merge(base, document_id, chapters)
        sm = structure_merge(base, document_id, chapters)
        unrecorded = any(b.source_hash is None for row in base for b in row)
        if sm is not None and m is not None and (_in_place(base, sm) if unrecorded else
                                                  not (sm.merge.added or sm.merge.removed or sm.merge.dropped)):
            sm = None  # (one to one: the same decisions, written in place)
        if sm is not None:
            rows = sm.chapters if as_source else _unrecorded(stored, sm.chapters)
            if _as_stored(store, document_id, stored, rows):  # (a store addition kept, the file as it was: no write)
                return with_fields(sm.merge, edited=written)
            added = store.rewrite_document(document_id, dict(sm.revisions), rows)
            if added is not None:
                return with_fields(sm.merge, added=tuple(added), edited=written,
                                   overwritten=_overwritten(stored, sm.merge) if wins else ())
            continue
        if m is None:
            return None
        if wins:  # (the record of blocks whose store text the file holds now: from the stored blocks, not the base)
            m = with_fields(m, agree=block_merge(stored, document_id, chapters).agree,  # type: ignore[union-attr]
                            edited=written, overwritten=_overwritten(stored, m))
        agree = () if store.read_only or not as_source else m.agree  # (a record only: none where nothing may be written)
        titles = {} if store.read_only else retitled(store, document_id, merged_titles(stored, m.take, chapters))
        held = None if as_source else {b.id: b.revision for row in stored for b in row}
        if not (m.take or agree or titles) or store.take_source_texts(document_id, m.take, agree, titles,
                                                                      revisions=held):
            return m
    raise InputError(f"document {document_id}: its blocks were edited in the store while this ingest merged its file "
                     "into it; nothing of the file was written — ingest again")


def _as_stored(store: Store, document_id: str, stored: Sequence[Sequence[SourcedBlock]],
               rows: Sequence[tuple[str | None, Sequence[MergedBlock]]]) -> bool:
    """Whether a merge's document ``rows`` is the document as stored: the same chapters and titles, blocks, texts and
    records of their file's text (nothing to write)."""
    titles = [t for _c, _o, t in store.chapters(document_id)]
    return titles == [t for t, _row in rows] and \
        [[(b.id, b.content, b.source_hash) for b in row] for row in stored] == \
        [[(b.id, b.text, b.source_hash) for b in row] for _t, row in rows] and not any(b.take for _t, r in rows for b in r)


def _unrecorded(stored: Sequence[Sequence[SourcedBlock]], chapters: Sequence[tuple[str | None, Sequence[MergedBlock]]]
                ) -> tuple[tuple[str | None, tuple[MergedBlock, ...]], ...]:
    """``chapters`` (a merge on :func:`_store_as_base`) with each kept block's record of its file's text as stored, and
    none for a new block: what a text that is no file's writes (:func:`merge_file`, not ``as_source``)."""
    recorded = {b.id: b.source_hash for row in stored for b in row}
    return tuple((title, tuple(with_fields(b, source_hash=recorded.get(b.id) if b.id is not None else None)
                               for b in row)) for title, row in chapters)


def _store_as_base(stored: Sequence[Sequence[SourcedBlock]]) -> list[list[SourcedBlock]]:
    """``stored`` with each block's text as the text its file gave it: every block counted as unedited, so a merge
    (:func:`block_merge`, :func:`structure_merge`) takes the file's text wherever it differs."""
    return [[with_fields(b, source_hash=sha256(b.content)) for b in row] for row in stored]


def _overwritten(stored: Sequence[Sequence[SourcedBlock]], m: BlockMerge) -> tuple[str, ...]:
    """The blocks edited (or added) in the store that a merge with the file winning (:func:`_store_as_base`) gave the
    file's text or removed: the store edits it dropped, for the report."""
    edited = {b.id for row in stored for b in row if _edited_in_store(b)} | set(_added_in_store(stored))
    gone = {bid for bid, _rev, _text in m.take} | set(m.removed)
    return tuple(b.id for row in stored for b in row if b.id in edited and b.id in gone)


def merged_titles(stored: Sequence[Sequence[SourcedBlock]], take: Sequence[tuple[str, int, str]],
                  chapters: Sequence[tuple[str | None, Sequence[str]]]) -> dict[int, str | None]:
    """The document's chapter titles once ``take`` is written into ``stored``, by the chapter's index: a title
    follows its heading block, as a fresh ingest of the document's merged text gives them (a heading renamed in
    the file, or in the store, renames its chapter; the parts of a long chapter share its title). Where that
    text's chapters no longer line up with the stored ones (an edit in the store split a block, or made a line a
    heading), the file's titles (``chapters``) of the chapters whose first block holds the file's text; the
    others are left as they are."""
    took = {bid: text for bid, _rev, text in take}
    merged = [[took.get(b.id, b.content) for b in row] for row in stored]
    fresh = chapter_blocks("".join(t for row in merged for t in row))
    if [len(row) for row in merged] == [len(texts) for _t, texts in fresh]:
        return {i: title for i, (title, _texts) in enumerate(fresh)}
    if len(chapters) != len(merged):
        return {}
    return {i: title for i, (row, (title, texts)) in enumerate(zip(merged, chapters, strict=True))
            if row and texts and row[0] == texts[0]}


def retitled(store: Store, document_id: str, titles: dict[int, str | None]) -> dict[str, str | None]:
    """Chapter id -> title of the document's chapters whose title is not ``titles``' (by the chapter's index)."""
    return {cid: titles[i] for i, (cid, _order, title) in enumerate(store.chapters(document_id))
            if i in titles and titles[i] != title}


def _conflict_lines(path: Path, m: BlockMerge) -> list[str]:
    """One line per conflicting block: which (file, document, block), that the store's text was kept, and how
    to settle it."""
    out = []
    for bid in m.conflicts:
        what = ("was written in the store and differs from the file's block at its place, whose text at the last "
                "ingest is not recorded (added there, or edited in a store of an older logichunk)" if bid in m.unknown else
                "was removed (or rewritten around) in the file but edited in the store since the last ingest"
                if bid in m.dropped else
                "was changed both in the file and in the store since the last ingest")
        if bid in m.dropped:
            out.append(f"{path}: block {bid} of document {m.document_id} {what}; the block is kept with the store's "
                       "text, beside what the file has there now — put that text in the file where the block is "
                       "(then it merges), or --replace to take the whole file (losing the store's edits)")
            continue
        out.append(f"{path}: block {bid} of document {m.document_id} {what}; the store's text is kept, the file's "
                   "not taken — make the two the same (edit the file, or the block: logichunk edit --block "
                   f"{bid}), or --replace to take the whole file (losing the store's edits)")
    return out


class FileChecks:
    """Which files an ingest stores and which stored documents they replace, decided for every file
    before anything is written (both the serial and the Ray ingest go through here). One file refused
    (unreadable, binary, stored with other text) is an error when it is the only file, as for ``chunk``;
    among several it is skipped with its one line (``refused``) and the others are ingested."""

    def __init__(self, store: Store, replace: bool, files: int = 1, paths: Sequence[str] = (),
                 prune: bool = False, encoding: str | None = None) -> None:
        self.store, self.replace, self.files = store, replace, files
        self.encoding = encoding  # the codec every file is read with (None: UTF-8, or what the bytes say)
        self.decoded: list[str] = []  # "file: codec" of files not read as UTF-8 (:attr:`IngestReport.decoded`)
        self.prune = prune_needs_none(paths, prune)  # a folder's prune goes on without a file to store
        self.seen = store.generation()  # the store as ``known`` read it (read first: a write between reads again)
        self.known = _stored_sources(store)
        self.old = _stored_sources(store, relative=True)  # candidates only: matched by their text
        self.reached = store.reached_paths()  # document id -> the paths its file was reached by
        self.roots = _ingest_roots(paths)  # where a file moved is looked for (:meth:`_moved`)
        self.gone: dict[tuple[str, ...], list[str]] | None = None  # (:func:`_gone_documents`, read when needed)
        self.moved: list[tuple[str, str]] = []  # (old source, new path) of files moved or renamed: documents followed
        # not matched yet, said in the report: those that would lie among the ``paths`` ingested, read from here
        # (a document the service stored under a client's file name, "up.txt", is no older ingest of them)
        self.relative = {d for real, ids in self.old.items() if not paths or _among(real, paths) for d in ids}
        self.unchanged: list[str] = []
        self.empty: list[str] = []
        self.edited: list[str] = []
        self.refused: list[str] = []
        self.updated: list[str] = []  # files whose document took the blocks changed only in them (:meth:`_merge`)
        self.conflicts: list[str] = []  # a line per block changed in the file and in the store: the store's kept
        self.added: list[str] = []  # a line per block new in the file, added to its document (:func:`structure_merge`)
        self.removed: list[str] = []  # a line per block removed in the file, removed from its document
        self.replaced: list[str] = []  # files whose document took them over its store edits (``replace``), in place
        self.overwritten: list[str] = []  # a line per block whose store edit such a file's text dropped

    def read_as(self, path: Path, decoding: str) -> None:
        """Record how ``path``'s bytes were read (:func:`~logichunk.text.decode.read_blocks`' words), when not
        as UTF-8 or a PDF: the report says it (a file read as GB18030 by a guess is never stored unsaid)."""
        codec = decoding.rsplit("+", 1)[-1]
        if codec not in ("", "utf-8", "utf-8-sig", "pdf"):
            self.decoded.append(f"{path}: {codec}")

    def skip_empty(self, path: Path, error: str) -> None:
        """An empty file: an error when it is the only file (as ``chunk`` does), else skipped; skipped too when
        a folder is pruned: the last file of a folder emptied is pruned as a deleted one is."""
        if self.files <= 1 and not self.prune:
            raise EmptyFile(f"{error}; nothing was ingested")
        self.empty.append(str(path))

    def refuse(self, why: str, alone: str = "") -> None:
        """A file not ingested, ``why`` its one line: the error when it is the only file (``alone`` added), else
        skipped so that one bad file of a folder does not hold back the others (each named in one run)."""
        if self.files <= 1:
            raise InputError(why + alone)
        self.refused.append(why)

    def check_order(self, files: Sequence[Path]) -> list[int]:
        """The indexes of ``files`` in the order to check them: first the new files (no document of their path) named
        as a gone document's file was, then the others as listed. Why: a file moved or renamed is followed by the
        first new file of its text (:meth:`_moved`); a copy made before the move (``plan-copy.md``, listed before
        ``plan.md``) took the document, and the file itself was stored anew."""
        new = [k for k, f in enumerate(files) if os.path.realpath(f) not in self.known]
        if not new or self.store.read_only:
            return list(range(len(files)))
        if self.gone is None:
            self.gone = _gone_documents(self.store, self.known)
        gone = {d for ids in self.gone.values() for d in ids}
        names = {os.path.basename(real) for real, ids in self.known.items() if gone.intersection(ids)}
        first = [k for k in new if files[k].name in names]
        return first + [k for k in range(len(files)) if k not in set(first)]

    def check(self, path: Path, text_hash: str, text: str | None = None) -> list[str] | None:
        """The ids of the documents ``path`` replaces ([] for a new file; several stored for it, with
        ``replace``), or None when it is not written as a new document: stored already with the same text
        (``unchanged``), or merged into its one document (:meth:`_merge`: updated in place; where the store edited
        it, its edits kept unless ``replace``, the blocks changed in both said as conflicts), or refused. ``text``:
        the file's text as the caller read it to hash it (None: read here where needed, as the Ray ingest, whose
        workers read it, leaves it)."""
        real = os.path.realpath(path)
        earlier = self.known.get(real, [])
        old = [d for d in self.old.get(real, []) if d in self.relative and self._same_text(d, path, text_hash)]
        if len(earlier) + len(old) > 1 and not (self.replace and not old):
            self.relative.difference_update(old)  # (named in this line, not again as unmatched)
            self.refuse(_several(path, [*earlier, *old], not old), "; nothing was ingested")
            return None
        if old:  # an older logichunk's relative source, shown to be this file by its text: never replaced
            return self._old_match(path, old[0], text_hash)
        moved = not earlier and self._moved(path, text_hash, text)
        earlier = [moved] if moved else earlier
        stored = {d: self.store.source_blocks(d) for d in earlier}
        differ = [d for d in earlier if sha256(_text_of(stored[d])) != text_hash]
        if not earlier or (differ and self.replace and len(earlier) > 1):
            return earlier
        self._record_reached(path, earlier)
        if not differ:
            if not moved:
                self.unchanged.append(str(path))
            for d in earlier:
                self._settle(d, stored[d])
        else:  # (one document: several for one file are refused above)
            self._merge(path, differ[0], text_hash, text)
        return None

    def _moved(self, path: Path, text_hash: str, text: str | None) -> str:
        """The id of the document whose file ``path`` is, moved or renamed since (``moved``: its old source), else
        "": a document whose file is gone (no such file) and whose blocks the file gives again, each as the file
        gave it at the last ingest (its source hashes: a store edit does not hide it). Its source and title then
        follow the file, and the file is checked against it as against its own (unchanged, or merged, the store's
        edits kept). Why: a renamed file was stored anew, and ``--prune`` removed its old document with the edits
        made in the store, its ids and its vectors, said only as a file gone. A document whose file lay in the
        folder ``path`` was found in is followed first, then one of another folder of this ingest, then one of a
        gone file elsewhere (:func:`_move_rank`): a file moved between two folders synced in separate runs
        (``ingest work`` then ``ingest home --prune``) kept its store edits only so. (Followed wrongly, a file of
        a drive not mounted now, the cost is small: the file, back, is stored anew; not followed, its edits went
        with the prune.)"""
        if self.store.read_only:
            return ""
        if self.gone is None:
            self.gone = _gone_documents(self.store, self.known)
        if not self.gone:
            return ""
        if text is None:
            try:
                text = read_ingest_text(path, self.encoding)
            except InputError:
                return ""
            if sha256(text) != text_hash:
                return ""
        ids = self.gone.get(tuple(sha256(t) for _title, row in chapter_blocks(text) for t in row), [])
        olds = {d: next(real for real, docs in self.known.items() if d in docs) for d in ids}
        ranked = sorted((_move_rank(reached_path(path), [olds[d], *self.reached.get(d, ())], self.roots),
                         os.path.basename(olds[d]) != path.name, k) for k, d in enumerate(ids))
        if not ranked:
            return ""
        did = ids.pop(ranked[0][-1])
        old = olds[did]
        self.store.set_document_source(did, source_of(path), title=file_title(path))
        self.unsure()
        self.known[old].remove(did)
        self.known.setdefault(os.path.realpath(path), []).append(did)
        self.moved.append((old, str(path)))
        return did

    def _record_reached(self, path: Path, documents: Sequence[str]) -> None:
        """The path ``path`` was reached by this time, added to those recorded for its documents (a link renamed,
        the file now reached by its own path too, or none recorded: stored by an older logichunk): a prune keeps
        the document while one of them still leads to its file (:func:`prune_missing`)."""
        reached = reached_path(path)
        for d in documents:
            if reached not in self.reached.get(d, ()) and not self.store.read_only:
                self.store.add_reached_by(d, reached)
                self.reached[d] = (*self.reached.get(d, ()), reached)

    def _settle(self, document_id: str, stored: Sequence[Sequence[SourcedBlock]]) -> None:
        """A document whose text is its file's again (an edit made in the store copied into the file): each
        block's text is now what the file gives it, recorded, so that the file's next change of such a block is
        taken as one, not said as a conflict with an edit the file holds already; a chapter whose heading was
        so settled takes the title it gives (:func:`merged_titles`)."""
        agree = [(b.id, b.revision, h) for row in stored for b in row if (h := sha256(b.content)) != b.source_hash]
        if not agree or self.store.read_only:  # (nothing settled since the last ingest: no title to follow either)
            return
        titles = retitled(self.store, document_id, merged_titles(stored, [], chapter_blocks(_text_of(stored))))
        if self.store.take_source_texts(document_id, [], agree, titles):
            self.unsure()

    def _merge(self, path: Path, document_id: str, text_hash: str, text: str | None = None) -> None:
        """A file changed since its document was stored, merged into it in place (:func:`merge_file`): the blocks
        it changed take its text (``updated``), those added or removed in it are (``added``, ``removed``); where
        the store edited the document, its edits are kept (``edited``; a block changed in both said,
        ``conflicts``) unless ``replace``: then the file wins them too (``replaced``, the edits dropped said,
        ``overwritten``). Refused where the blocks no longer line up and none holds a record of its file's text
        (:func:`_other_text`). ``text``: the file's as its check read it (None: read again here)."""
        if text is None:
            try:
                text = read_ingest_text(path, self.encoding)
            except InputError as e:  # deleted, emptied or made unreadable since its check
                self.refuse(str(e))
                return
        if sha256(text) != text_hash:
            self.refuse(_changed(path))
            return
        chapters = chapter_blocks(text)
        m = merge_file(self.store, document_id, chapters, file_wins=self.replace)
        if m is None:
            self.refuse(_other_text(self.store, path, document_id), "; nothing was ingested")
            return
        self.unsure()
        self._merged(path, m)

    def _merged(self, path: Path, m: BlockMerge) -> None:
        """What a merge did, into the report."""
        if m.take or m.added or m.removed:
            self.updated.append(str(path))
        if m.kept:
            self.edited.append(str(path))
        self.conflicts.extend(_conflict_lines(path, m))
        self.added.extend(f"{path}: block {bid} of document {m.document_id}" for bid in m.added)
        self.removed.extend(f"{path}: block {bid} of document {m.document_id}" for bid in m.removed)
        if m.overwritten:
            self.replaced.append(str(path))
            self.overwritten.extend(f"{path}: block {bid} of document {m.document_id}" for bid in m.overwritten)

    def _same_text(self, document_id: str, path: Path, text_hash: str) -> bool:
        """Whether a document holds the file's text (edited blocks aside: no block the file changed and the
        store did not): what shows that a relative source names this file, and not another project's file at
        the same relative path."""
        stored = self.store.source_blocks(document_id)
        if sha256(_text_of(stored)) == text_hash:
            return True
        m = block_merge(stored, document_id, chapter_blocks(read_ingest_text(path, self.encoding)))
        edited = {b.id for row in stored for b in row if b.revision > 1}  # (unrecorded: an edit, or no match)
        return m is not None and not m.take and set(m.unknown) <= edited

    def _old_match(self, path: Path, document_id: str, text_hash: str) -> None:
        """A relative source matched by its text: skipped (unchanged; or edited, a block changed in both said),
        never written through, its full path recorded."""
        stored = self.store.source_blocks(document_id)
        if sha256(_text_of(stored)) == text_hash:
            self.unchanged.append(str(path))
        else:
            m = block_merge(stored, document_id, chapter_blocks(read_ingest_text(path, self.encoding)))
            if m is not None:
                self._merged(path, m)
        self._record_full_path(path, [document_id])

    def _record_full_path(self, path: Path, documents: Sequence[str]) -> None:
        """Documents found by a relative source (stored before sources were absolute) get the file's full path:
        a later ingest or prune finds them from any folder."""
        for d in (d for d in documents if d in self.relative):
            self.store.set_document_source(d, source_of(path))
            self.relative.discard(d)
        self._record_reached(path, documents)

    def recheck(self, doc: FileDocument, earlier: Sequence[str]) -> bool:
        """Whether to write ``doc`` in place of ``earlier``, asked again inside the transaction that writes it,
        under the project's document lock: two processes ingesting one folder both found a file new and
        stored it twice. The stored sources are read again only where another writer moved the store's
        generation since they were read; either way ``earlier`` (decided from them as they were at the check) is
        compared with them as they are now, not taken on the generation alone: once they were read again for
        one file, the next file's generation matches while its ``earlier`` still predates the read. The file
        stored meanwhile with this very text is skipped as unchanged (False); with other text, or replaced
        meanwhile, it is an error."""
        if self.store.generation() != self.seen:
            self.known = _stored_sources(self.store)
            self.seen = self.store.generation()
        now = self.known.get(os.path.realpath(doc.source), [])
        if sorted(now) == sorted(earlier):
            return True
        if now and all(sha256(_document_text(self.store, d)) == doc.text_hash for d in now):
            self.unchanged.append(doc.name or doc.source)
            return False
        raise InputError(f"{doc.name or doc.source} was stored by another ingest while this one ran, with other "
                         "text; the files before it were stored — ingest again")

    def wrote(self) -> None:
        """This ingest wrote (a document, its chunks) inside the transaction of its re-check: the store as it
        now stands is the one checked."""
        self.seen = self.store.generation()

    def unsure(self) -> None:
        """This ingest wrote outside a re-check's transaction (a merge, a settle while checking): another
        writer may have written between its last read and this write, so the generation read now would vouch
        for stored sources never read (two ingests of one folder stored its new file twice); the next
        re-check reads them again."""
        self.seen = -1


def _gone_documents(store: Store, known: dict[str, list[str]]) -> dict[tuple[str, ...], list[str]]:
    """The documents of ``known`` (:func:`_stored_sources`) whose file is gone (no such file), by the source hashes
    of their blocks (what their file gave each at the last ingest), those with every one recorded:
    :meth:`FileChecks._moved` finds a file moved or renamed by them."""
    out: dict[tuple[str, ...], list[str]] = {}
    for real, ids in known.items():
        if _file_state(real) != "gone":
            continue
        for d in ids:
            blocks = [b for row in store.source_blocks(d) for b in row]
            if blocks and all(b.source_hash for b in blocks):
                out.setdefault(tuple(str(b.source_hash) for b in blocks), []).append(d)
    return out


def _ingest_roots(paths: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The folders of an ingest, each in its spellings (:func:`_spellings`): a folder given, or the folder of a file
    given by name (renamed beside it, it is followed)."""
    out = []
    for p in paths:
        folder = p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p))
        out.append(tuple(_spellings([folder])))
    return tuple(out)


def _move_rank(new: str, old: Sequence[str], roots: Sequence[Sequence[str]]) -> int:
    """How near a gone file's paths ``old`` (its source, the paths it was reached by) lie to the file ``new`` (its
    path reached by): 0 in a folder of the ingest that holds ``new`` too, 1 in another folder of the ingest, 2
    in none."""
    near = [root for root in roots if any(_inside(o, root) for o in old)]
    if any(_inside(new, root) for root in near):
        return 0
    return 1 if near else 2


def _changed(path: Path) -> str:
    """The line refusing a file edited between its check and its write: not stored as something never
    checked, and, one of several, not holding back the others (they are stored and chunked)."""
    return f"{path} changed while it was being ingested; not stored this time — ingest again to store it"


def _several(path: Path, documents: Sequence[str], replaceable: bool) -> str:
    """The line refusing a file that several stored documents hold (a relative and an absolute source of one
    file, two ingests): which documents, and how to keep one."""
    return (f"{path}: {len(documents)} documents are stored for this one file ({', '.join(documents)}) — delete "
            "all but one by id (logichunk delete ID)" + (", or --replace replaces them all with the file"
                                                          if replaceable else ""))


def _other_text(store: Store, path: Path, document_id: str) -> str:
    """The line refusing a file stored before with other text, the one case :func:`merge_file` cannot merge: a
    document the store wrote whose blocks no longer line up with the file's and none of which holds a record of
    the text its file gave it (an older logichunk's store). Those blocks are told, and which edits of the store's
    ``--replace`` would lose, by block id (each once), to copy first."""
    stored = store.source_blocks(document_id)
    edited = list(dict.fromkeys([b.id for row in stored for b in row if _edited_in_store(b)] + _added_in_store(stored)))
    blind = [b.id for row in stored for b in row if b.source_hash is None]
    what = (f"its blocks no longer line up with those of its document {document_id} (a paragraph or heading added, "
            f"removed or split), and {len(blind)} block(s) of it ({_ids_said(blind)}) hold no record of the text the "
            "file gave them (added in the store, or edited in a store of an older logichunk), so the file cannot be "
            "merged around them")
    if not edited:
        return (f"{path}: {what} — no block is edited in the store: --replace makes the document the file's "
                "text, losing nothing")
    return (f"{path}: {what}; it has {len(edited)} block(s) edited in the store ({_ids_said(edited)}) — copy those "
            "edits into the file, then --replace makes the document the file's text (--replace alone: those edits "
            "are lost)")


def _ids_said(ids: Sequence[str]) -> str:
    """Block ids for a line: the first five, then how many more."""
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


class Tally:
    """Counts for an :class:`IngestReport`, added up as documents are written and chapters chunked."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.docs = self.chapters = self.blocks = self.chars = self.parents = self.children = self.embedded = 0
        self.replaced: list[str] = []
        self.new: list[str] = []

    def document(self, doc: FileDocument, earlier: Sequence[str]) -> None:
        self.docs += 1
        self.chapters += len(doc.chapters)
        self.blocks += doc.blocks
        self.chars += doc.chars
        if earlier:
            self.replaced.append(doc.name or doc.source)
        else:
            self.new.append(doc.name or doc.source)

    def rechunked(self, results: Iterable[RechunkResult]) -> None:
        for r in results:
            self.parents += r.parents_written
            self.children += r.children_written
            self.embedded += r.embedded

    def report(self, checks: FileChecks, walk: FileWalk, pruned: Pruned | None = None,
               nothing: str = "") -> IngestReport:
        pruned = Pruned() if pruned is None else pruned
        return IngestReport(self.docs, self.chapters, self.blocks, self.chars, self.parents, self.children,
                            self.embedded, time.perf_counter() - self.t0, tuple(checks.unchanged),
                            (*self.replaced, *checks.replaced), tuple(checks.empty), tuple(map(str, walk.skipped)),
                            tuple(pruned.removed), tuple(checks.edited), tuple(checks.refused),
                            tuple(walk.duplicates), tuple(map(unreadable_line, walk.unreadable)),
                            tuple(pruned.unchecked), tuple(sorted(checks.relative)), nothing,
                            updated=tuple(checks.updated), conflicts=tuple(checks.conflicts),
                            added=tuple(checks.added), removed=tuple(checks.removed),
                            overwritten=tuple(checks.overwritten), hidden=tuple(map(str, walk.hidden)),
                            emptied=tuple(pruned.emptied), moved=tuple(checks.moved), decoded=tuple(checks.decoded),
                            new=tuple(self.new), kept=tuple(pruned.kept), dangling=tuple(map(str, walk.dangling)))


@dataclass
class Pruned:
    """What :func:`prune_missing` did: the files of the documents it removed (the source; the link's path for a
    file reached through a link that is gone), of them those it removed because the file is empty
    (``emptied``: the rest are gone), and the documents it kept because it could not tell whether their file is
    gone (``"source (why; document ID)"``: the id to delete one by, should its file be gone indeed). ``kept``:
    ``(path, document id, another path)`` of the paths gone from the folders whose document stays, its file still
    reached by the other."""

    removed: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    emptied: list[str] = field(default_factory=list)
    kept: list[tuple[str, str, str]] = field(default_factory=list)


def prune_missing(store: Store, paths: Sequence[str], unlisted: Sequence[str] = (),
                  emptied: Sequence[str] = (), dangling: Sequence[str | os.PathLike[str]] = ()) -> Pruned:
    """Delete the project's documents whose file was in one of the folders among ``paths`` and is no longer
    there (a folder kept in sync: a file deleted or renamed since it was ingested), in one transaction. A file
    is in a folder by its source (its real path) or by a path it was reached by (:func:`reached_path`: a link in
    the folder to a file outside it, whose document goes once the link is deleted, or leads elsewhere). Such a
    document goes only once no path recorded for it still reaches its file (:func:`_prune_state`): a file linked
    from two folders synced, or linked from one and lying in another, stays while either holds it (pruned by the
    one, it was stored anew by the other, its store edits lost); the paths in the folders that no longer reach it
    are forgotten. A file this ingest found empty (``emptied``, :attr:`FileChecks.empty`) holds no text either: its
    document goes too (said in ``emptied``), as a fresh ingest of the folder would hold none (else its old text came
    back in searches). Only a definite "no such file" prunes (:func:`_file_state`): a file that cannot be looked at
    (permission denied), one under a folder that could not be listed (``unlisted``) or a relative source
    (stored by an older logichunk: from which folder?) is kept, said in ``unchecked``. A source that names no
    file path (a conversation topic's ``memory:...``, a URL) is never pruned. Files given one by one prune
    nothing: a missing one is an error of the ingest itself. A document whose file is reached through a link in
    the folders that now leads to no file outside them (``dangling``: a drive not mounted, its link kept) is kept
    too, said in ``unchecked``: unmounted and deleted read alike, and a prune took the document with its store
    edits; a link to a file of the folders deleted keeps nothing (the walk sees that file gone)."""
    out = Pruned()
    folders = [p for p in paths if os.path.isdir(p)]
    if not folders:
        return out
    roots = _spellings(folders)
    locked = _spellings(unlisted)
    empty = {os.path.realpath(f) for f in emptied}
    reached = store.reached_paths()
    # the links as reached -> where they point, outside the folders (a file gone from the folders is seen gone)
    links = {reached_path(p): real for p in dangling if not _inside(real := os.path.realpath(p), roots)}
    gone: list[tuple[str, str, bool]] = []  # (document id, its file as said, emptied)
    stale: list[tuple[str, tuple[str, ...]]] = []  # (document id, its paths in the folders that no longer reach its file)
    for did, _title, source in store.documents():
        link = next((p for p, real in links.items() if p in reached.get(did, ()) or real == source), "")
        if link:
            out.unchecked.append(f"{source} (its link {link} leads to no file now: a drive not mounted?; document {did})")
            continue
        state = _prune_state(source, reached.get(did, ()), roots, locked, empty)
        if state.state in ("gone", "empty"):
            gone.append((did, state.said, state.state == "empty"))
        elif state.state:
            out.unchecked.append(f"{source} ({state.state}; document {did})")
        if state.stale and state.state not in ("gone", "empty") and not store.read_only:
            stale.append((did, state.stale))
        if state.by and not state.state:
            out.kept.extend((p, did, state.by) for p in state.stale)
    if gone:
        with store.tx():
            for did, _said, _empty in gone:
                store.delete_document(did)
    for did, paths_gone in stale:
        store.drop_reached_by(did, paths_gone)
    out.removed = [said for _did, said, _empty in gone]
    out.emptied = [said for _did, said, empty in gone if empty]
    return out


def _spellings(folders: Sequence[str]) -> list[str]:
    """Each folder as its real path and as given (absolute): a real path is matched with the first, a path a file
    was reached by (links not resolved) with either."""
    return sorted({f(p) for p in folders for f in (os.path.realpath, os.path.abspath)})


@dataclass(frozen=True)
class PruneState:
    """What :func:`prune_missing` makes of one document: ``state`` ``"gone"`` or ``"empty"``: prune it; ``""``: keep
    it, nothing to say; else why it is kept unchecked. ``said``: its file as the report names it; ``stale``: its
    recorded paths in the folders pruned that no longer reach its file (forgotten where it is kept); ``by``: where
    it is kept all the same, a path that still does."""

    state: str = ""
    said: str = ""
    stale: tuple[str, ...] = ()
    by: str = ""  # where the document is kept though a path in the folders no longer reaches it: a path that still does


def _prune_state(source: str | None, reached: Sequence[str], roots: Sequence[str], locked: Sequence[str],
                 empty: set[str]) -> PruneState:
    """The document of ``source`` reached by the paths ``reached``, against a prune of the folders ``roots``.
    Kept, nothing to say: no file path, not in the folders, under a folder that could not be listed. In the
    folders by its real path, the file itself is looked at. Only by paths it was reached by (links in them to a
    file outside), each of those is: deleted, or leading to another file now, it no longer holds this one; the
    document goes once none of them does and no other path recorded for it (a link in another folder, the file's
    own path in a folder synced apart) still leads to the file, or once the file itself is gone or empty."""
    if not source or "://" in source or source.startswith("memory:"):
        return PruneState()
    if not os.path.isabs(source):  # stored by an older logichunk: relative to which folder? (read from here, one
        if not _inside(os.path.realpath(source), roots):  # outside the folders pruned is none of theirs to say)
            return PruneState()
        return PruneState("" if os.path.lexists(source) else "a relative path, not found from here", source)
    real = os.path.realpath(source)
    mine = [p for p in reached if _inside(p, roots)]
    own = _inside(real, roots)
    if not (own or mine) or _inside(real, locked) or any(_inside(p, locked) for p in mine):
        return PruneState()
    reaching = {p: _reaches(p, real) for p in reached}
    stale = tuple(p for p in mine if reaching[p] in ("gone", "elsewhere"))
    state = _file_state(source)
    if not state and real in empty:
        state = "empty"
    if own:
        return PruneState(state, source, stale)
    said = next((p for p in mine if reaching[p] != "elsewhere"), source)  # (by the link, unless it leads elsewhere)
    if state:  # (the file itself gone, emptied, or not to be looked at: every path to it alike)
        return PruneState(state, said, stale)
    if by := next((p for p, r in reaching.items() if r == ""), ""):  # (a path still leads to it: kept)
        return PruneState("", said, stale, by)
    unsure = next((r for p, r in reaching.items() if p in mine and r not in ("gone", "elsewhere")), "")
    return PruneState(unsure or "gone", said, stale)


def _reaches(path: str, real: str) -> str:
    """Whether ``path`` still leads to the file whose real path is ``real``: ``""`` yes, ``"gone"`` (no such file),
    ``"elsewhere"`` (to another file now), else why it could not be looked at."""
    state = _file_state(path)
    if state:
        return state
    return "" if os.path.realpath(path) == real else "elsewhere"


def _among(real: str, paths: Sequence[str]) -> bool:
    """Whether the real path ``real`` is one of ``paths`` or lies in one of its folders."""
    reals = [os.path.realpath(p) for p in paths]
    return real in reals or _inside(real, reals)


def _inside(path: str, folders: Sequence[str]) -> bool:
    return any(path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def _file_state(path: str) -> str:
    """``""`` when the file is there, ``"gone"`` when the system says there is no such file, else why it
    could not be looked at (a permission denied is no proof that a file is gone)."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "gone"
    except OSError as e:
        return "permission denied" if isinstance(e, PermissionError) else (e.strerror or type(e).__name__)
    return ""


def store_file_document(store: Store, doc: FileDocument, earlier: Sequence[str], checks: FileChecks) -> str | None:
    """Write ``doc`` in place of the ``earlier`` documents, in one transaction; its blocks start dirty. None:
    another ingest stored the same text meanwhile (:meth:`FileChecks.recheck`), nothing written."""
    with store.tx():
        store.lock_documents()
        if not checks.recheck(doc, earlier):
            return None
        for d in earlier:
            store.delete_document(d)
        did = store.add_document(doc.title, doc.chapters, source=doc.source, reached_by=doc.reached)
        checks.wrote()
        return did


def check_embedder(store: Store, reembed: bool = False) -> dict[str, int]:
    """The project's chunks embedded with other models than the store's embedder
    (``{model: chunks}``). Adding documents under another embedder would leave a store whose
    searches silently miss half of it, so that is an :class:`InputError` unless ``reembed`` (then
    the caller re-embeds them: :meth:`Store.reembed`)."""
    others = store.other_embedder_counts()
    if others and not reembed:
        raise InputError(f"{store.other_embedders_said(others)}; nothing was ingested — give the same --embedder, "
                         "or --reembed to re-embed everything with the new one")
    return others


def check_cuts(store: Store, recut: bool = False) -> str:
    """Why the project's chunks are of other settings than the store's (:meth:`Store.cut_mismatch`), or
    ''. Chunking more under the new ones would leave a store of two kinds of chunks, so that is an
    :class:`InputError` unless ``recut`` (then the caller cuts every chapter again: :meth:`Store.recut`)."""
    why = store.cut_mismatch()
    if why and not recut:
        raise InputError(f"{why}; nothing was ingested — give the same settings, or --recut to cut every "
                         "chapter again with these")
    return why


EMPTY = "empty"  # what the Ray workers' first pass gives for an empty file instead of its text hash


class EmptyFile(InputError):
    """A file with no text (or only whitespace): it would store a document with nothing to find."""


def read_ingest_text(path: Path, encoding: str | None = None,
                     on_decoding: Callable[[str], None] | None = None) -> str:
    """A file's text to store (``encoding``, ``on_decoding``: :func:`read_text_file`'s); :class:`EmptyFile` when
    it has none."""
    text = read_text_file(path, encoding=encoding, on_decoding=on_decoding)
    why = empty_input(text)
    if why:
        raise EmptyFile(f"{path}: {why}")  # (alone: "; nothing was ingested" after it, :meth:`FileChecks.skip_empty`)
    return text


def ingest(store: Store, paths: Sequence[str], *, rechunk: bool = True, replace: bool = False,
           reembed: bool = False, recut: bool = False, prune: bool = False,
           encoding: str | None = None) -> IngestReport:
    """Store each file as a document (folders: their text files; a file reached twice, by two names or a
    link, once: ``duplicates``), then chunk and embed every dirty block of the project (so a later call
    also chunks what ``rechunk=False`` left). A file stored before from the same path is not stored twice:
    with the same text it is skipped (``unchanged``); with other text its document is updated in place, its id
    kept (:func:`merge_file`: the blocks changed in the file take its text, ``updated``, those added or removed
    in it are, ``added``, ``removed``, chapters following its headings; the blocks it kept keep their ids, chunks
    and vectors). Where the store edited the document (even if settled since) the edits are kept (``edited``; a
    block changed in both, or removed in the file and edited in the store, keeps the store's text and is said,
    ``conflicts``, a failure) unless ``replace``: then the file wins every block (``replaced``, each store edit
    dropped said in ``overwritten``); several documents stored for one file are refused, or with ``replace``
    replaced by a new one. A file refused
    (that one, or one that is binary, undecodable or unreadable) is an :class:`InputError` when it is the only
    one, else skipped with its one line (``refused``) while the others are stored; an empty file likewise (``empty``), as ``chunk`` does. A project embedded before with another
    model than the store's embedder is an :class:`InputError` unless ``reembed``: then every chapter
    embedded with another model is re-chunked and re-embedded with the new one (counted in the
    report). A project chunked before with other size settings (or ``cut_vectors``) is an
    :class:`InputError` unless ``recut``: then every chapter is cut again with the store's
    (:func:`check_cuts`). ``prune``: documents ingested from a file of one of the folders that is gone
    since are deleted too (:func:`prune_missing`), so the project follows the folder. :func:`logichunk.scale.
    ingest_corpus` stores the same, with the reading, chunking and embedding spread over Ray workers. ``encoding``:
    the codec every file is read with (:func:`~logichunk.text.decode.check_encoding`; default UTF-8, UTF-16/32
    by their mark, GB18030 read as Chinese: said in ``decoded``); the same must be named again to re-ingest them.
    No ``paths``: nothing read, the stored project re-embedded (``reembed``) or cut again (``recut``) alone.
    """
    check_paths(paths)
    encoding = check_encoding(encoding)
    tally = Tally()
    others = check_embedder(store, reembed)
    recut_all = bool(check_cuts(store, recut)) if rechunk else False
    if rechunk:
        store.run_params  # noqa: B018 - an unknown or unloadable tokenizer is refused before anything is written
    walk = FileWalk()
    # (no paths: only what is stored, re-embedded or cut again: the way a project moves to a new embedder)
    files = list_files(paths, walk, none_ok=prune_needs_none(paths, prune)) if paths else []
    checks = FileChecks(store, replace, len(files), paths, prune, encoding)
    if not files and paths:
        return prune_only(store, paths, walk, tally, checks)
    for f, text_hash, earlier in _checked(files, checks):  # read again, one at a time: never all texts held
        try:
            doc = FileDocument.checked(f, text_hash, encoding)
        except InputError as e:  # deleted, made unreadable or changed since its check: its line, and the next file
            checks.refuse(str(e))
            continue
        if store_file_document(store, doc, earlier, checks) is not None:
            tally.document(doc, earlier)
    record_again(store, walk.again)
    pruned = prune_missing(store, paths, walk.unlisted, checks.empty, walk.dangling) if prune else None
    if recut_all:  # every chapter, the new ones too, with this store's settings (and embedder)
        tally.rechunked(store.recut())
        return tally.report(checks, walk, pruned)
    if others:  # first: no chapter is re-chunked with this embedder while another's chunks are stored
        tally.rechunked(store.reembed())
    if rechunk:
        tally.rechunked(store.rechunk_dirty())
    return tally.report(checks, walk, pruned)


def record_again(store: Store, again: Sequence[Path]) -> None:
    """The paths a file was reached by again in this run (a second link to it, a link and its own path: skipped as
    duplicates, :func:`once_each`) recorded for its document beside the first: a prune of the folder of the first
    keeps the document while one of the others still leads to it."""
    if not again or store.read_only:
        return
    stored = _stored_sources(store)
    reached = store.reached_paths()
    for f in again:
        path = reached_path(f)
        for d in stored.get(os.path.realpath(f), []):
            if path not in reached.get(d, ()):
                store.add_reached_by(d, path)


def prune_only(store: Store, paths: Sequence[str], walk: FileWalk, tally: Tally, checks: FileChecks) -> IngestReport:
    """An ingest with ``prune`` of folders holding no text file: nothing read, the gone files' documents removed,
    and why nothing was ingested said in the report (``nothing``)."""
    pruned = prune_missing(store, paths, walk.unlisted, checks.empty, walk.dangling)
    nothing = f"no text files ({', '.join(TEXT_SUFFIXES)}) in {', '.join(map(str, paths))}"  # (what was skipped: its own lines)
    return tally.report(checks, walk, pruned, nothing=nothing)


def _checked(files: Sequence[Path], checks: FileChecks) -> list[tuple[Path, str, list[str]]]:
    """Every file read and checked before anything is written, only its hash kept: ``(file, text hash,
    documents it replaces)`` of those to store; the others skipped or refused by ``checks``."""
    todo: list[tuple[int, Path, str, list[str]]] = []
    for k in checks.check_order(files):
        f = files[k]
        try:
            text = read_ingest_text(f, checks.encoding, lambda d, f=f: checks.read_as(f, d))
        except EmptyFile as e:
            checks.skip_empty(f, str(e))
            continue
        except InputError as e:  # binary, undecodable, unreadable: its line, and the next file
            checks.refuse(str(e))
            continue
        text_hash = sha256(text)
        earlier = checks.check(f, text_hash, text)
        del text  # (only the hash is kept: the file is read again to be stored)
        if earlier is not None:
            todo.append((k, f, text_hash, earlier))
    return [(f, h, earlier) for _k, f, h, earlier in sorted(todo, key=lambda t: t[0])]  # (stored as listed)

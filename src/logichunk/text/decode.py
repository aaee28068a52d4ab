"""Bytes to text, once, at the edge: every offset logichunk reports refers to the string returned
here.

- UTF-8 is the default. A leading UTF-8 byte-order mark is dropped (``utf-8-sig``), so offsets
  count from the first character after it; nothing else in the text is ever changed (no newline or
  Unicode normalisation).
- UTF-16 and UTF-32 are accepted when they start with a byte-order mark (which is dropped too)
  *and* the content reads as such text: a mark in front of bytes that are not UTF-16 (a UTF-8 or
  8-bit file that happens to start with FF FE) would otherwise decode to mojibake. Refused as
  implausible: the bytes after the mark contain no NUL and read as UTF-8 text on their own (valid,
  few control bytes) (real
  UTF-16 of any text with a space, digit, newline or Latin letter has NUL bytes; the rare short
  all-CJK text whose bytes also read as UTF-8 is refused too: ambiguous), or more than 2 % of the
  first characters are unassigned or private-use code points (what 8-bit bytes paired up become).
- Binary input is refused: a NUL byte in the first 8 KiB, or more than 10 % control characters
  there (tab, newline, carriage return, form feed, vertical tab and escape excepted).
- Invalid UTF-8 is refused with the byte offset of the first bad byte (counted in the input,
  byte-order mark included), unless it reads as Chinese text in GB18030 (below).
- GB18030 (a superset of GBK and GB2312: what Windows Notepad and many Chinese corpora save) is read
  when, and only when, the first :data:`DETECT_BYTES` bytes are not UTF-8, carry no byte-order mark,
  decode as GB18030 and read as Chinese (:func:`plausibly_chinese`); the reading is reported
  (``gb18030``, as ``utf-16-le`` is), never silent. Every other encoding is refused, saying to name it.
- A named encoding (``encoding=``, any Python text codec: ``gbk``, ``big5``, ``shift_jis``, ``cp1252``)
  decodes the bytes as that codec says, strictly: a byte it cannot read is refused with its offset,
  never replaced (no character of the text is ever altered). No byte-order mark is looked for then
  (the codec decides: ``utf-16`` reads one), but a UTF-8 one is dropped under ``utf-8`` as by default.

- A PDF (a file opening with ``%PDF-``) is read as its text layer, its pages joined by form feeds
  (:mod:`.pdf`): the extracted string is then the text every offset refers to.
- A gzip, bzip2 or xz file (told by its first bytes, whatever its name) is decompressed as it is read (the
  standard library's codecs): offsets then count in the decompressed text, and a byte offset in an error is
  one of the decompressed bytes. A zstd file or an archive (zip, .docx, .epub) is refused, saying what it is.

Every refusal is an :class:`~logichunk.errors.InputError` with a one-line message that starts with
the source name.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import functools
import gzip
import io
import lzma
import os
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from types import EllipsisType
from typing import BinaryIO

from ..errors import InputError
from .pdf import is_pdf, pdf_text

__all__ = ["COMPRESSED_SUFFIXES", "DETECT_BYTES", "ENCODING_WAYS", "SNIFF_BYTES", "Undecoded", "check_encoding",
           "check_path", "check_storable", "check_unicode",
           "plain_stem", "plausibly_chinese", "read_blocks", "read_path", "read_text", "speaker", "speaking_as",
           "text_file_name"]

#: How much of the input is inspected for signs of a binary file.
SNIFF_BYTES = 8192
#: How much of the input decides whether bytes that are not UTF-8 are read as GB18030: the same window
#: for a file read whole and one read in blocks, so both read it alike.
DETECT_BYTES = 1 << 16
_MAX_CONTROL_RATIO = 0.10
# C0 controls and DEL, minus the ones plain text uses: \t \n \v \f \r and ESC (terminal colours)
_CONTROL = bytes(c for c in [*range(0x20), 0x7F] if c not in b"\t\n\x0b\x0c\r\x1b")
_CONTROL_STR = _CONTROL.decode("ascii")

# longest first: the UTF-32-LE mark starts with the UTF-16-LE one
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)


def check_unicode(text: str, what: str = "text") -> str:
    """``text``, when UTF-8 can encode it: a string from JSON (``"\\ud800"``) or from bytes decoded with
    ``surrogateescape`` may hold unpaired surrogates, which no file, database or UTF-8 output can hold.
    Refused in one line with the first one's offset (replacing it would change the user's text)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(f"{what} holds an unpaired surrogate at character {e.start}; send valid Unicode") from None
    return text


def blank(text: str) -> str:
    """Why ``text`` gives nothing to chunk or store, in words ('' when it does): ``empty``, or ``only
    whitespace``. The library cuts such a text as it is (``chunk("")`` is no chunk, ``chunk("   ")`` one chunk
    over it: exact spans); every interface refuses it as a client error with these words (the CLI's
    ``empty input (only whitespace)``, the service's and the MCP tools' ``text is only whitespace``)."""
    if not text:
        return "empty"
    return "only whitespace" if text.isspace() else ""


def empty_input(text: str) -> str:
    """A file's or an upload's :func:`blank` text in the CLI's words ('' when it has text): ``empty input``, or
    ``empty input (only whitespace)``; ``logichunk chunk``, ``ingest``, the service's uploads and the MCP
    ``add_file`` say it so, after the file's name."""
    why = blank(text)
    return "" if not why else "empty input" if why == "empty" else f"empty input ({why})"


def check_not_blank(text: str, what: str = "text") -> str:
    """``text``, unless it is empty or only whitespace (:func:`blank`): then an :class:`InputError`,
    ``{what} is empty`` or ``{what} is only whitespace``, one wording for every interface's field."""
    why = blank(text)
    if why:
        raise InputError(f"{what} is {why}")
    return text


#: the longest document title any interface stores (the service's schema, the MCP tools)
TITLE_CHARS = 300


def check_title(title: object, what: str = "title") -> str:
    """A document's title as every interface stores it (the service's JSON and uploads, the MCP tools):
    without its surrounding whitespace (MCP stripped it, the service kept it, so one title listed two ways);
    refused in one line when it is no string, empty or only whitespace, over :data:`TITLE_CHARS` or not storable."""
    if not isinstance(title, str):
        raise InputError(f"{what} must be a string")
    check_not_blank(title, what)
    check_storable(title, what)
    title = title.strip()
    if len(title) > TITLE_CHARS:
        raise InputError(f"{what} is {len(title):,} characters; at most {TITLE_CHARS}")
    return title


def check_storable(text: str, what: str = "text") -> str:
    """``text`` when every store can hold it: valid Unicode (:func:`check_unicode`) and no NUL character, which
    a PostgreSQL text field refuses. Refused on SQLite too, so a text fares the same on both backends and is
    refused when it is given, in one line, not by the database driver when it is written (a conversation's
    turn there kept its whole topic out of the archive)."""
    check_unicode(text, what)
    at = text.find("\x00")
    if at >= 0:
        raise InputError(f"{what} holds a NUL character (\\x00) at character {at}, which a store cannot hold "
                         "(PostgreSQL text refuses it); remove or escape it")
    return text


#: the first bytes of compressed files and archives: the format's name, what an error calls it and says to do
#: (a compressed file inside one), and the reader that decompresses it (None: refused, named)
_PACKED: tuple[tuple[bytes, str, str, str, Callable[[BinaryIO], BinaryIO] | None], ...] = (
    (b"\x1f\x8b", "gzip", "gzip-compressed", "decompress it first (gunzip -k)",
     lambda f: gzip.GzipFile(fileobj=f, mode="rb")),
    (b"BZh", "bzip2", "bzip2-compressed", "decompress it first (bunzip2 -k)", lambda f: bz2.BZ2File(f, "rb")),
    (b"\xfd7zXZ\x00", "xz", "xz-compressed", "decompress it first (unxz -k)", lambda f: lzma.LZMAFile(f, "rb")),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstd-compressed", "decompress it first (unzstd)", None),
    (b"PK\x03\x04", "zip", "a zip archive (or a .docx, .xlsx, .epub)", "extract its text first", None))
#: a name ending in one of these is a compressed file (a folder's ``notes.md.gz`` is a text file's name)
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")


def text_file_name(name: str, suffixes: tuple[str, ...]) -> bool:
    """Whether a file's name says text: it ends in one of ``suffixes`` (``.md``), or in one of them and
    a compression suffix (``.md.gz``)."""
    low = name.lower()
    for c in COMPRESSED_SUFFIXES:
        if low.endswith(c):
            low = low[: -len(c)]
            break
    return low.endswith(suffixes)


def plain_stem(path: str | os.PathLike[str]) -> str:
    """A file's name without its suffix, and without a compression suffix first (``notes.md.gz`` -> ``notes``)."""
    p = Path(path)
    if p.suffix.lower() in COMPRESSED_SUFFIXES:
        p = p.with_suffix("")
    return p.stem


def file_title(path: str | os.PathLike[str]) -> str:
    """The title of a document read from a file when none is given, as every interface stores it (``ingest``,
    the service's uploads, MCP's ``add_file``): its :func:`plain_stem` without surrounding whitespace (as
    :func:`check_title` keeps a given title), else its whole name (``  .md``), else ``untitled``."""
    return plain_stem(path).strip() or Path(path).name.strip() or "untitled"


def _compression(head: bytes) -> tuple[str, Callable[[BinaryIO], BinaryIO]] | None:
    """The format and reader of a compressed file's first bytes, or None. bzip2's ``BZh`` must be followed
    by a block size digit and a block's (or the end's) magic: a text may begin with the letters."""
    for magic, name, _what, _todo, reader in _PACKED:
        if reader is not None and head.startswith(magic):
            if name == "bzip2" and not (head[3:4].isdigit() and head[3:4] != b"0"
                                        and head[4:10] in (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")):
                return None
            return name, reader
    return None


def _decompressed(data: bytes, source: str, limit: int | None = None) -> tuple[bytes, str]:
    """``data`` decompressed when it is a gzip, bzip2 or xz file (a compressed file inside is not opened
    again), and the format's name (else ``data`` and ''); more than ``limit`` bytes of it is refused (a
    service's upload: a small file can hold gigabytes)."""
    kind = _compression(data)
    if kind is None:
        return data, ""
    try:
        with kind[1](io.BytesIO(data)) as f:
            out = f.read(-1 if limit is None else limit + 1)
    except (OSError, EOFError, lzma.LZMAError) as e:
        raise InputError(f"{source}: a damaged {kind[0]} file ({e})") from None
    if limit is not None and len(out) > limit:
        raise InputError(f"{source}: its {kind[0]} data decompresses to more than {limit:,} bytes, the most "
                         "accepted here")
    return out, kind[0]


def _binary(source: str, head: bytes = b"") -> InputError:
    """The one-line error for data that is not text; a compressed file or an archive says what it is."""
    for magic, _name, what, todo, _reader in _PACKED:
        if head.startswith(magic):
            return InputError(f"{source}: looks like a binary file: {what}; {todo}")
    return InputError(f"{source}: looks like a binary file")


def _too_many_controls(sample: str | bytes) -> bool:
    if isinstance(sample, bytes):
        count = len(sample) - len(sample.translate(None, _CONTROL))
    else:
        count = sum(sample.count(c) for c in _CONTROL_STR)
    return count > _MAX_CONTROL_RATIO * len(sample)


_MAX_ODD_RATIO = 0.02
_ODD_CATEGORIES = ("Cn", "Co")  # unassigned, private use


def _implausible(body: bytes, sample: str) -> str:
    """Why ``sample`` (decoded after a byte-order mark from ``body``) is not real text in that
    encoding, or '' (see the module docstring)."""
    head = body[:SNIFF_BYTES]
    if head and b"\x00" not in head and not _too_many_controls(head):
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return "the bytes after the mark read as UTF-8"
    odd = sum(1 for c in sample if unicodedata.category(c) in _ODD_CATEGORIES)
    if odd > _MAX_ODD_RATIO * len(sample):
        return f"{odd} of its first {len(sample)} characters are unassigned or private-use code points"
    return ""


#: how each interface takes the codec a file's bytes are read with, which a refusal of bytes that are not UTF-8
#: names (:class:`Undecoded`): a Python caller, a service's or an agent's user cannot pass the CLI's flag
ENCODING_WAYS = {
    "python": "the `encoding=` argument",
    "cli": "--encoding NAME",
    "service": "the `encoding` URL parameter",
    "mcp": "add_file's `encoding` argument",
}

#: the interface reading files now (a key of :data:`ENCODING_WAYS`; None: one that takes no encoding), whose words
#: an :class:`Undecoded` says what to do in: a Python caller's unless an interface says otherwise (:func:`speaking_as`)
_SPEAKER: ContextVar[str | None] = ContextVar("logichunk_encoding_way", default="python")


def speaker() -> str | None:
    """The interface reading files now (:func:`speaking_as`; ``"python"`` unless one is set)."""
    return _SPEAKER.get()


@contextlib.contextmanager
def speaking_as(interface: str | None) -> Iterator[None]:
    """Within it, a refusal of bytes that are not UTF-8 says what to do in ``interface``'s words (``cli`` while
    ``logichunk`` runs a verb: ``--encoding NAME``; None: a file that takes no encoding, a JSON Lines log). Why a
    context, not an argument: the CLI reads through the Python API's own readers (and the ingest keeps a file's
    refusal as its line in a report), where a Python caller must be told ``encoding=``, not a flag."""
    token = _SPEAKER.set(interface)
    try:
        yield
    finally:
        _SPEAKER.reset(token)


class Undecoded(InputError):
    """Bytes that are not UTF-8 and that no reading of ours decodes. The message ends saying what to do, in the
    words of the interface that read them (:meth:`said_by`; by default the one reading now, :func:`speaker`): one
    sentence, each interface's own way of naming an encoding filled in."""

    def __init__(self, what: str, interface: str | None | EllipsisType = ...) -> None:
        self.what = what
        if isinstance(interface, EllipsisType):
            interface = speaker()
        self.interface = interface
        way = ENCODING_WAYS.get(interface or "")
        todo = (f"convert the file to UTF-8 or name its encoding ({way}: gbk, big5, shift_jis, cp1252...)" if way
                else "convert the file to UTF-8")  # (an interface that takes no encoding)
        super().__init__(f"{what}; {todo}")

    def __reduce__(self) -> tuple[type[Undecoded], tuple[str, str | None]]:
        # (pickled as what it was made from: the default, from the message alone, said what to do twice)
        return Undecoded, (self.what, self.interface)

    def said_by(self, interface: str | None) -> Undecoded:
        """This refusal as ``interface`` (a key of :data:`ENCODING_WAYS`; None: one that takes no encoding) says it."""
        return Undecoded(self.what, interface)


def check_encoding(name: str | None) -> str | None:
    """The Python codec ``name`` stands for, by its canonical name (``cp936`` -> ``gbk``, ``latin-1`` ->
    ``iso8859-1``), or None for none (the default reading). Refused in one line when Python has no such
    codec, or when it is no text encoding (``base64``, ``rot13``)."""
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip() or len(name) > 64:
        raise InputError(f"encoding must be a codec name such as gbk, big5, shift_jis or cp1252, got {name!r}")
    try:
        info = codecs.lookup(name.strip())
    except (LookupError, ValueError, TypeError):
        raise InputError(f"unknown encoding {name!r}; give a Python codec name such as gb18030, gbk, big5, "
                         "shift_jis, euc-kr, cp1252 or latin-1") from None
    if not getattr(info, "_is_text_encoding", True):
        raise InputError(f"encoding {name!r} is not a text encoding; give one such as gbk, big5 or cp1252")
    return info.name


@functools.lru_cache(maxsize=64)
def _ascii_compatible(codec: str) -> bool:
    """Whether ``codec`` reads every ASCII byte as that character: then a NUL byte means binary, as in
    UTF-8 (in UTF-16 it is half of most characters: there the decoded text is checked instead)."""
    try:
        return bytes(range(128)).decode(codec) == "".join(map(chr, range(128)))
    except UnicodeError:  # (punycode and undefined raise the base class)
        return False


# A priori (from what GB2312 is, not fitted to any data): GB2312 holds the characters of everyday
# simplified Chinese: its level 1 (lead bytes B0-D7) the 3,755 commonest hanzi, which make up more than
# 99 % of running modern text, level 2 (D8-F7) 3,008 rarer ones, and rows A1-A9 the CJK punctuation and
# full-width forms. Bytes of another encoding that happen to decode as GB18030 give a spread of
# characters unlike that: Latin-1/cp1252 and Cyrillic letters pair into level-2 hanzi or GBK-only
# characters (lead bytes E0-FF), Big5 and Shift_JIS into characters outside GB2312 in large part.
_IN_GB2312 = 0.95  # at least this share of the non-ASCII characters are in GB2312
_HANZI = 0.5  # at least this share of them are hanzi (the rest punctuation, full-width forms, others)
_LEVEL1 = 0.8  # at least this share of those hanzi are of level 1


def plausibly_chinese(text: str) -> bool:
    """Whether ``text`` (bytes that are not UTF-8, decoded as GB18030) reads as Chinese: it holds
    non-ASCII characters, at least 95 % of them in GB2312, at least half of them hanzi, and at least
    80 % of those hanzi among GB2312's 3,755 of level 1 (the commonest). "Größe" in Latin-1 reads as
    "Gr鲞e" (a level-2 hanzi), "naïve résumé" does not decode at all: neither is taken for Chinese."""
    counts = Counter(c for c in text if c >= "\x80")
    total = sum(counts.values())
    gb = hanzi = level1 = 0
    for c, n in counts.items():
        try:
            lead = c.encode("gb2312")[0]
        except UnicodeEncodeError:
            continue
        gb += n
        if lead >= 0xB0:
            hanzi += n
            level1 += n if lead <= 0xD7 else 0
    return total > 0 and gb >= _IN_GB2312 * total and hanzi >= _HANZI * total and level1 >= _LEVEL1 * hanzi


def _auto_codec(window: bytes, whole: bool) -> str:
    """How bytes without a byte-order mark are read, decided on ``window``, their first :data:`DETECT_BYTES`
    (``whole``: all of them): ``gb18030`` when they are not UTF-8 but decode as GB18030 into text that
    :func:`plausibly_chinese`, else ``utf-8`` (whose error then says where the bytes stop being UTF-8). Bytes
    that read as Chinese up to one GB18030 cannot read are taken for GB18030 too: the error then names that byte."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(window, final=whole)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        sample = codecs.getincrementaldecoder("gb18030")().decode(window, final=whole)
    except UnicodeDecodeError as e:
        sample = window[: e.start].decode("gb18030")  # (e.start: where the first bad sequence begins)
    return "gb18030" if plausibly_chinese(sample) else "utf-8"


def _bad_bytes(source: str, codec: str, at: int, bad: int, packed: str, named: bool) -> InputError:
    """The error for bytes ``codec`` cannot read at byte ``at``: the codec ``named`` by the caller, or GB18030
    chosen by :func:`_auto_codec` from the file's first bytes."""
    where = f"byte {at} of the decompressed text ({packed})" if packed else f"byte {at}"
    if named:
        return InputError(f"{source}: not valid {codec} at {where} (0x{bad:02x}), the encoding named; name the one "
                          "the file was saved in, or convert it to UTF-8")
    return Undecoded(f"{source}: not UTF-8, and read as GB18030 (its first bytes read as Chinese), but not valid "
                     f"GB18030 at {where} (0x{bad:02x})")


def _check_decoded(sample: str, source: str) -> None:
    """Refuse text decoded by a codec that is not ASCII-compatible when it looks binary (NUL, control characters)."""
    if "\x00" in sample or _too_many_controls(sample):
        raise _binary(source)


def read_text(data: bytes, *, source: str = "<input>", max_unpacked: int | None = None,
              encoding: str | None = None, on_decoding: Callable[[str], None] | None = None) -> str:
    """Decode ``data`` (UTF-8, or UTF-16/32 with a byte-order mark, or GB18030 read as Chinese; a PDF's text
    layer; gzip, bzip2 or xz decompressed first) into the text to chunk; ``encoding``: a codec named instead
    (:func:`check_encoding`), which must read every byte. ``on_decoding`` is told how, as by :func:`read_blocks`.

    Raises :class:`InputError` for binary data or invalid encodings, and for compressed data that holds
    more than ``max_unpacked`` bytes. Offsets into the result count from the first character after a
    byte-order mark, if there was one."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"read_text expects bytes, got {type(data).__name__}")
    encoding = check_encoding(encoding)
    plain, packed = _decompressed(bytes(data), source, max_unpacked)
    text, codec = _decoded(plain, packed, source=source, encoding=encoding)
    if on_decoding is not None:
        on_decoding(_decoding(packed, codec))
    return text


def _plain_text(data: bytes, packed: str = "", *, source: str) -> str:
    """:func:`read_text` of bytes already decompressed (a compressed file inside is not opened again;
    ``packed``: the format they were decompressed from, for the errors)."""
    return _decoded(data, packed, source=source)[0]


def _decoded(data: bytes, packed: str = "", *, source: str, encoding: str | None = None) -> tuple[str, str]:
    """:func:`_plain_text`, and how: ``pdf``, the codec of the byte-order mark it dropped, ``utf-8-sig``,
    ``utf-8``, ``gb18030`` (read as Chinese) or the ``encoding`` named (a canonical codec name)."""
    if is_pdf(data):
        return pdf_text(data, source=source), "pdf"
    if encoding is not None and encoding not in ("utf-8", "utf-8-sig"):
        return _decoded_as(data, encoding, packed, source), encoding
    error: InputError | None = None
    for bom, codec, name in _BOMS if encoding is None else ():
        if not data.startswith(bom):
            continue
        try:
            text = data[len(bom) :].decode(codec)
        except UnicodeDecodeError as e:
            # FF FE 00 00 is the UTF-32-LE mark, or the UTF-16-LE one before U+0000: try both
            error = error or InputError(
                f"{source}: invalid {name} at byte {e.start + len(bom)} (the text starts with a "
                f"{name} byte-order mark)"
            )
            continue
        sample = text[:SNIFF_BYTES]
        if "\x00" in sample or _too_many_controls(sample):
            raise _binary(source)
        why = _implausible(data[len(bom) :], sample)
        if why:
            raise InputError(f"{source}: starts with a {name} byte-order mark but is not {name} text ({why}); "
                             "convert the file to UTF-8")
        return text, codec
    if error is not None:
        raise error
    head = data[:SNIFF_BYTES]
    _check_head(head, source)
    try:
        return data.decode("utf-8-sig"), "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
    except UnicodeDecodeError:
        pass
    # (bytes that are all UTF-8 have a first window that is too: deciding after the decode is the same decision)
    if encoding is None and not data.startswith(codecs.BOM_UTF8) \
            and _auto_codec(data[:DETECT_BYTES], len(data) < DETECT_BYTES) == "gb18030":
        try:
            return data.decode("gb18030"), "gb18030"
        except UnicodeDecodeError as e:
            raise _bad_bytes(source, "gb18030", e.start, data[e.start], packed, named=False) from None
    # the plain codec reports offsets into ``data`` itself (a BOM is valid UTF-8, so nothing moves)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _not_utf8(source, head, e.start, data[e.start], packed) from None
    raise AssertionError("unreachable: utf-8-sig failed where utf-8 succeeded")  # pragma: no cover


def _decoded_as(data: bytes, codec: str, packed: str, source: str) -> str:
    """``data`` read as the ``codec`` named (not UTF-8), strictly: a byte it cannot read is refused with its offset."""
    if _ascii_compatible(codec):
        _check_head(data[:SNIFF_BYTES], source)
    _check_byte_order(data, codec, source)
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as e:
        raise _bad_bytes(source, codec, e.start, data[e.start], packed, named=True) from None
    except UnicodeError as e:  # a codec that fails without a byte offset (punycode, undefined)
        raise _unreadable_as(source, codec, e) from None
    if not _ascii_compatible(codec):
        _check_decoded(text[:SNIFF_BYTES], source)
    return text


#: the codecs whose byte order only a byte-order mark tells (Python's decoder guesses the machine's order
#: without one, and its incremental decoder raises): named without a mark, the file is refused in one line
_ORDER_MARKS = {"utf-16": (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE),
                "utf-32": (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)}


def _check_byte_order(head: bytes, codec: str, source: str) -> None:
    """Refuse bytes named as ``utf-16``/``utf-32`` that lack the byte-order mark saying which order they are in."""
    marks = _ORDER_MARKS.get(codec)
    if marks and head and not head.startswith(marks):
        raise InputError(f"{source}: {codec.upper()} without a byte-order mark; name its byte order "
                         f"({codec}-le or {codec}-be)")


def _unreadable_as(source: str, codec: str, e: UnicodeError) -> InputError:
    """The error for a codec named that cannot read the bytes and says no offset (a ``UnicodeError`` only)."""
    why = str(e).splitlines()[0] if str(e) else type(e).__name__
    return InputError(f"{source}: cannot be read as {codec} ({why}), the encoding named; name the one the file was "
                      "saved in, or convert it to UTF-8")


def _packed(head: bytes) -> bool:
    return head.startswith(tuple(entry[0] for entry in _PACKED))


def _check_head(head: bytes, source: str) -> None:
    """Refuse data without a byte-order mark whose first bytes are not text (see the module docstring)."""
    packed = _packed(head)  # named in the error, where there is one
    if b"\x00" in head and not packed:
        hint = ""
        if len(head) >= 4 and (head[1::2].count(0) > len(head) // 4 or head[0::2].count(0) > len(head) // 4):
            hint = " (or UTF-16 without a byte-order mark)"
        raise InputError(f"{source}: looks like a binary file{hint}")
    if b"\x00" in head or _too_many_controls(head):
        raise _binary(source, head)


def _not_utf8(source: str, head: bytes, at: int, bad: int, packed: str = "") -> InputError:
    """The error for invalid UTF-8 at byte ``at`` of the input (a compressed file says what it is; in a
    file decompressed as it was read, ``packed`` names its format and ``at`` counts decompressed bytes)."""
    if _packed(head):
        return _binary(source, head)
    where = f"byte {at} of the decompressed text ({packed})" if packed else f"byte {at}"
    return Undecoded(f"{source}: not valid UTF-8 at {where} (0x{bad:02x})")


def read_blocks(path: str | os.PathLike[str] | BinaryIO, *, block: int = 1 << 20,
                source: str | None = None, on_decoding: Callable[[str], None] | None = None,
                encoding: str | None = None) -> Iterator[str]:
    """The text of a file (or an open binary stream such as ``sys.stdin.buffer``) in pieces of about
    ``block`` bytes, decoded as :func:`read_text` decodes it, without holding the whole file: what a text
    read in windows needs (:func:`~logichunk.chunkers.stream.chunk_stream`). The pieces joined are
    exactly :func:`read_text`'s string. UTF-8, GB18030 and a codec named (``encoding``) are decoded as
    they are read (a character split between two blocks is joined): invalid bytes far into the file
    raise the same one-line error only when they are reached. A PDF, and UTF-16/32 (with a byte-order
    mark), are read whole. ``on_decoding`` is told, before the first piece, how the bytes are decoded
    when not as plain UTF-8 (else ''): ``utf-8-sig`` (a UTF-8 byte-order mark dropped), ``utf-16-le``,
    ``utf-16-be``, ``utf-32-le``, ``utf-32-be`` (their mark dropped), ``gb18030`` (not UTF-8, read as
    Chinese: see the module docstring), the codec named (``gbk``, ``big5``), ``pdf`` (the text layer), each after
    ``gzip+``, ``bzip2+`` or ``xz+`` for a compressed file (``gzip+utf-8``): what a reader needs to map
    offsets in the text back to the file's bytes."""
    if block < 1:
        raise ValueError("block must be at least one byte")
    encoding = check_encoding(encoding)
    if isinstance(path, (str, os.PathLike)):
        check_path(path)
        src = source or str(path)
        try:
            f: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed below, after the generator's last piece
        except OSError as e:
            raise _unreadable(Path(path), e) from None
        with f:
            yield from _blocks(f, src, block, on_decoding, encoding)
    else:  # (a text file, sys.stdin itself, failed deep in the sniffing: "startswith first arg must be str")
        if isinstance(path, io.TextIOBase) or not callable(getattr(path, "read", None)):
            raise TypeError("read_blocks expects a path or a file opened in binary mode (open(path, 'rb'), "
                            f"sys.stdin.buffer), got {type(path).__name__}")
        yield from _blocks(path, source or "<stream>", block, on_decoding, encoding)


def _decoding(packed: str, codec: str) -> str:
    """What ``read_blocks`` tells ``on_decoding``: '' for plain UTF-8, else the codec after the compression."""
    return "" if not packed and codec == "utf-8" else "+".join(x for x in (packed, codec) if x)


def _blocks(f: BinaryIO, source: str, block: int, on_decoding: Callable[[str], None] | None = None,
            encoding: str | None = None) -> Iterator[str]:
    packed = ""
    want = max(block, DETECT_BYTES)  # (at least the window the reading is decided on, as read_text decides it)
    first = _read_full(f, want, source)
    kind = _compression(first)
    if kind is not None:  # the bytes it holds, decompressed as they are read, then read as any file's
        packed = kind[0]
        f = kind[1](io.BufferedReader(_Prefixed(first, f)))
        first = _read_full(f, want, source, packed)
    if is_pdf(first) or (encoding is None and first.startswith(tuple(bom for bom, _, _ in _BOMS))):
        rest = _read(f, -1, source, packed)
        text, codec = _decoded(first + rest, packed, source=source)
        if on_decoding is not None:
            on_decoding(_decoding(packed, codec))
        yield text
        return
    head = first[:SNIFF_BYTES]
    checked = encoding is None or _ascii_compatible(encoding)  # else the first piece's characters are checked
    if checked:
        _check_head(head, source)
    if first.startswith(codecs.BOM_UTF8) and encoding in (None, "utf-8", "utf-8-sig"):
        codec = "utf-8-sig"
    elif encoding is None:  # (the window is all of the bytes when shorter: ``first`` holds at least as many)
        codec = _auto_codec(first[:DETECT_BYTES], len(first) < DETECT_BYTES)
    else:
        codec = "utf-8" if encoding == "utf-8-sig" else encoding
        _check_byte_order(first, codec, source)
    if on_decoding is not None:
        on_decoding(_decoding(packed, codec))
    fed = 0  # bytes given to the decoder before the current piece
    if codec == "utf-8-sig":
        first, fed, codec = first[len(codecs.BOM_UTF8):], len(codecs.BOM_UTF8), "utf-8"
    dec = codecs.getincrementaldecoder(codec)()
    data, final = first, len(first) < want
    while True:
        pending = dec.getstate()[0]
        try:
            piece = dec.decode(data, final=final)
        except UnicodeDecodeError as e:
            joined = pending + data
            at = fed - len(pending) + e.start
            if codec == "utf-8":
                raise _not_utf8(source, head, at, joined[e.start], packed) from None
            raise _bad_bytes(source, codec, at, joined[e.start], packed, named=encoding is not None) from None
        except UnicodeError as e:  # a codec that fails without a byte offset (punycode, undefined)
            raise _unreadable_as(source, codec, e) from None
        fed += len(data)
        if not checked and piece:
            _check_decoded(piece[:SNIFF_BYTES], source)
            checked = True
        if piece:
            yield piece
        if final:
            return
        data = _read(f, block, source, packed)
        final = not data


def _read_full(f: BinaryIO, n: int, source: str, packed: str = "") -> bytes:
    """``n`` bytes of ``f``, fewer only at its end (a raw stream or a pipe may give fewer at a time)."""
    out = _read(f, n, source, packed)
    while 0 < len(out) < n:
        more = _read(f, n - len(out), source, packed)
        if not more:
            break
        out += more
    return out


def _read(f: BinaryIO, n: int, source: str, packed: str = "") -> bytes:
    try:
        return f.read(n)
    except (OSError, EOFError, lzma.LZMAError) as e:
        if packed:
            raise InputError(f"{source}: a damaged {packed} file ({e})") from None
        raise InputError(f"{source}: cannot read: {getattr(e, 'strerror', None) or e.__class__.__name__}") from None


class _Prefixed(io.RawIOBase):
    """Bytes already read from a stream, then the rest of it: what a decompressor reads a stream from."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = memoryview(head), rest

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head.nbytes:
            n = min(len(b), self._head.nbytes)
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(b))
        b[: len(data)] = data
        return len(data)


def check_path(path: str | os.PathLike[str]) -> None:
    """Refuse an empty path in one line. Why: ``Path("")`` is the current folder, so ``logichunk ingest "$DIR"``
    with the variable unset stored every text file of the folder it ran in, and ``chunk ""`` chunked them."""
    if isinstance(path, str | bytes) and not path:
        raise InputError("an empty path (an unset variable?): name a file or a folder")


def dangling_link(p: str | os.PathLike[str]) -> str:
    """``"a dangling symbolic link (it points to X, which does not exist)"`` when ``p`` is one, else "". Why:
    "no such file" for a link a folder lists sent the user looking for a file that is there, as a link."""
    if not os.path.islink(p):
        return ""
    try:
        target = f" to {os.readlink(p)}"
    except OSError:
        target = ""
    return f"a dangling symbolic link (it points{target}, which does not exist)"


def read_path(path: str | os.PathLike[str], *, max_unpacked: int | None = None, encoding: str | None = None,
              on_decoding: Callable[[str], None] | None = None) -> str:
    """Read and decode a file (see :func:`read_text`, whose ``encoding`` and ``on_decoding`` these are;
    ``max_unpacked``: a compressed file is refused as soon as it unpacks to more bytes than that, before they
    are all in memory); file-system errors become one-line :class:`InputError` messages."""
    check_path(path)
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise _unreadable(p, e) from None
    return read_text(data, source=str(p), max_unpacked=max_unpacked, encoding=encoding, on_decoding=on_decoding)


def _unreadable(p: Path, e: OSError) -> InputError:
    """The one-line error for a file the system would not let us read."""
    if isinstance(e, FileNotFoundError):
        return InputError(f"{p}: {dangling_link(p) or 'no such file'}")
    if isinstance(e, IsADirectoryError) or (isinstance(e, PermissionError) and p.is_dir()):
        return InputError(f"{p}: is a directory, not a file")
    if isinstance(e, PermissionError):
        return InputError(f"{p}: permission denied")
    return InputError(f"{p}: cannot read: {e.strerror or e.__class__.__name__}")

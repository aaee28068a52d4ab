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
  byte-order mark included).

- A PDF (a file opening with ``%PDF-``) is read as its text layer, its pages joined by form feeds
  (:mod:`.pdf`): the extracted string is then the text every offset refers to.

Every refusal is an :class:`~logichunk.errors.InputError` with a one-line message that starts with
the source name.
"""

from __future__ import annotations

import codecs
import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import InputError
from .pdf import is_pdf, pdf_text

__all__ = ["SNIFF_BYTES", "check_unicode", "read_blocks", "read_path", "read_text"]

#: How much of the input is inspected for signs of a binary file.
SNIFF_BYTES = 8192
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


#: the first bytes of compressed files and archives, and what to do with one
_PACKED = ((b"\x1f\x8b", "gzip-compressed", "decompress it first (gunzip -k)"),
           (b"BZh", "bzip2-compressed", "decompress it first (bunzip2 -k)"),
           (b"\xfd7zXZ\x00", "xz-compressed", "decompress it first (unxz -k)"),
           (b"\x28\xb5\x2f\xfd", "zstd-compressed", "decompress it first (unzstd)"),
           (b"PK\x03\x04", "a zip archive (or a .docx, .xlsx, .epub)", "extract its text first"))


def _binary(source: str, head: bytes = b"") -> InputError:
    """The one-line error for data that is not text; a compressed file or an archive says what it is."""
    for magic, what, todo in _PACKED:
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


def read_text(data: bytes, *, source: str = "<input>") -> str:
    """Decode ``data`` (UTF-8, or UTF-16/32 with a byte-order mark; a PDF's text layer) into the text to chunk.

    Raises :class:`InputError` for binary data or invalid encodings. Offsets into the result count
    from the first character after a byte-order mark, if there was one."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"read_text expects bytes, got {type(data).__name__}")
    data = bytes(data)
    if is_pdf(data):
        return pdf_text(data, source=source)
    error: InputError | None = None
    for bom, codec, name in _BOMS:
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
        return text
    if error is not None:
        raise error
    head = data[:SNIFF_BYTES]
    _check_head(head, source)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    # the plain codec reports offsets into ``data`` itself (a BOM is valid UTF-8, so nothing moves)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _not_utf8(source, head, e.start, data[e.start]) from None
    raise AssertionError("unreachable: utf-8-sig failed where utf-8 succeeded")  # pragma: no cover


def _packed(head: bytes) -> bool:
    return head.startswith(tuple(m for m, _, _ in _PACKED))


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


def _not_utf8(source: str, head: bytes, at: int, bad: int) -> InputError:
    """The error for invalid UTF-8 at byte ``at`` of the input (a compressed file says what it is)."""
    if _packed(head):
        return _binary(source, head)
    return InputError(f"{source}: not valid UTF-8 at byte {at} (0x{bad:02x}); convert the file to UTF-8")


def read_blocks(path: str | os.PathLike[str] | BinaryIO, *, block: int = 1 << 20,
                source: str | None = None) -> Iterator[str]:
    """The text of a file (or an open binary stream such as ``sys.stdin.buffer``) in pieces of about
    ``block`` bytes, decoded as :func:`read_text` decodes it, without holding the whole file: what a text
    read in windows needs (:func:`~logichunk.chunkers.stream.chunk_stream`). The pieces joined are
    exactly :func:`read_text`'s string. UTF-8 is decoded as it is read: invalid bytes far into the file
    raise the same one-line error only when they are reached. A PDF, and UTF-16/32 (with a byte-order
    mark), are read whole."""
    if block < 1:
        raise ValueError("block must be at least one byte")
    if isinstance(path, (str, os.PathLike)):
        src = source or str(path)
        try:
            f: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed below, after the generator's last piece
        except OSError as e:
            raise _unreadable(Path(path), e) from None
        with f:
            yield from _blocks(f, src, block)
    else:
        yield from _blocks(path, source or "<stream>", block)


def _blocks(f: BinaryIO, source: str, block: int) -> Iterator[str]:
    first = _read(f, max(block, SNIFF_BYTES), source)
    if is_pdf(first) or first.startswith(tuple(bom for bom, _, _ in _BOMS)):
        rest = _read(f, -1, source)
        yield read_text(first + rest, source=source)
        return
    head = first[:SNIFF_BYTES]
    _check_head(head, source)
    fed = 0  # bytes given to the decoder before the current piece
    if first.startswith(codecs.BOM_UTF8):
        first, fed = first[len(codecs.BOM_UTF8):], len(codecs.BOM_UTF8)
    dec = codecs.getincrementaldecoder("utf-8")()
    data, final = first, False
    while True:
        pending = dec.getstate()[0]
        try:
            piece = dec.decode(data, final=final)
        except UnicodeDecodeError as e:
            joined = pending + data
            raise _not_utf8(source, head, fed - len(pending) + e.start, joined[e.start]) from None
        fed += len(data)
        if piece:
            yield piece
        if final:
            return
        data = _read(f, block, source)
        final = not data


def _read(f: BinaryIO, n: int, source: str) -> bytes:
    try:
        return f.read(n)
    except OSError as e:
        raise InputError(f"{source}: cannot read: {e.strerror or e.__class__.__name__}") from None


def read_path(path: str | os.PathLike[str]) -> str:
    """Read and decode a file (see :func:`read_text`); file-system errors become one-line
    :class:`InputError` messages."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise _unreadable(p, e) from None
    return read_text(data, source=str(p))


def _unreadable(p: Path, e: OSError) -> InputError:
    """The one-line error for a file the system would not let us read."""
    if isinstance(e, FileNotFoundError):
        return InputError(f"{p}: no such file")
    if isinstance(e, IsADirectoryError) or (isinstance(e, PermissionError) and p.is_dir()):
        return InputError(f"{p}: is a directory, not a file")
    if isinstance(e, PermissionError):
        return InputError(f"{p}: permission denied")
    return InputError(f"{p}: cannot read: {e.strerror or e.__class__.__name__}")

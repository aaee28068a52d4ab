"""A PDF's text layer, read once at the edge (:func:`~.decode.read_text` sends a file that starts with
``%PDF-`` here): the text every offset then refers to.

Why here and why so: a knowledge base is mostly PDFs, and what a chunker needs from one is its text in
reading order with its pages kept apart. Each page's text is extracted by ``pypdf`` (pure Python, no
system tools) and the pages are joined by form feeds, as ``pdftotext`` joins them, so the layout reads
the running headers, footers and page numbers at each page break as the printer's furniture
(:mod:`.pages`), not as the author's text. The extracted string is the text: it is what a chunk's span
points into, what the store keeps, and what ``--format jsonl`` prints; nothing in it is rewritten after
extraction.

Refused, each with a one-line :class:`~logichunk.errors.InputError` that names the file: a PDF that is
encrypted with a password (an empty user password, common on "protected" files, is tried first), a PDF
``pypdf`` cannot parse, a page whose text cannot be extracted (no page is dropped silently), and a PDF
with no text at all (a scan: run OCR first).
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator

from ..errors import InputError

__all__ = ["PDF_MAGIC", "is_pdf", "pdf_text"]

#: every PDF file starts with these bytes (ISO 32000: the header line ``%PDF-1.7``)
PDF_MAGIC = b"%PDF-"
#: what joins two pages' text: a form feed, the page break ``pdftotext`` writes and :mod:`.pages` reads
PAGE_BREAK = "\f"


def is_pdf(data: bytes) -> bool:
    """Whether ``data`` is a PDF file: it opens with the header (past whitespace). A text that merely
    mentions ``%PDF-`` further in stays text."""
    return data[:64].lstrip().startswith(PDF_MAGIC)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


@contextlib.contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf's own warnings ("EOF marker not found") off while it reads: a broken PDF is one line, ours."""
    log = logging.getLogger("pypdf")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def pdf_text(data: bytes, *, source: str = "<input>") -> str:
    """The text layer of the PDF ``data``: each page's text in ``pypdf``'s reading order, pages joined by
    :data:`PAGE_BREAK`. Raises :class:`InputError` (see the module docstring)."""
    with _quiet_pypdf():
        return _pdf_text(data, source)


def _pdf_text(data: bytes, source: str) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import FileNotDecryptedError, PyPdfError
    except ImportError:  # pragma: no cover - a core dependency; only a broken install lacks it
        raise InputError(f"{source}: is a PDF, and reading PDFs needs pypdf (pip install pypdf)") from None
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputError(f"{source}: the PDF is encrypted with a password; decrypt it first")
        pages = list(reader.pages)
    except InputError:
        raise
    except FileNotDecryptedError:
        raise InputError(f"{source}: the PDF is encrypted with a password; decrypt it first") from None
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as e:
        raise InputError(f"{source}: not a readable PDF ({_first_line(e)})") from None
    texts = []
    for number, page in enumerate(pages, start=1):
        try:
            texts.append(page.extract_text() or "")
        except Exception as e:  # noqa: BLE001 - a broken content stream may raise anything; name the page
            raise InputError(f"{source}: cannot extract the text of page {number} ({_first_line(e)})") from None
    if not any(t.strip() for t in texts):
        raise InputError(f"{source}: the PDF has no text layer ({len(pages)} page(s): a scan?); run OCR first")
    return PAGE_BREAK.join(texts)

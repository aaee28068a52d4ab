"""A development set of natural documents with short sections, built from the Markdown documents
on this machine: the long descriptions of installed Python packages (their PyPI READMEs) and
``/usr/share/doc/*/*.md``. For choosing rules (the segmentation count rule, the continuation
markers), never for reporting.

Why: the other dev splits are synthetic (Choi, Weibo, DAct), short dialogues (DialSeg711, TIAGE) or
manual pages (``devset_man.py``: long sections of option lists). READMEs, governance and
contribution guides are prose by many authors, sectioned by their own Markdown headings, with
sections of a few sentences: a third kind of natural document.

How: a heading (``#`` to ``######``, or setext) opens a section; fenced code, indented code, list
items, tables, quotes, HTML and badge lines are dropped; paragraphs are split into sentences by
logichunk's splitter, keeping sentences of at least four words that are mostly letters; a document
is kept with at least three sections of three sentences each and 30-600 sentences (the sentence and
document rules are ``devset_man.py``'s, imported from it); logichunk's own README is left out (we wrote it). Documents are ordered by the MD5 of their name. Output: the
segmentation format of ``../shared/data``.

    python bench/devset_readme.py --out /tmp/devset_readme.jsonl
    logichunk eval segmentation --data /tmp/devset_readme.jsonl --methods global,entropy,none --no-save

Which documents exist differs from machine to machine; the file written names each one.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import os
import re
import sys
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from devset_man import dev_document, prose_units, write_devset  # noqa: E402  (the same sentences and document rules)

_HEAD = re.compile(r"^(#{1,6})\s+\S")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
_METADATA = ("/root/.pyenv/versions/*/lib/python*/site-packages/*.dist-info/METADATA",
             "/usr/lib/python3*/dist-packages/*.dist-info/METADATA",
             "/usr/lib/google-cloud-sdk/platform/bundledpythonunix/lib/python*/site-packages/*.dist-info/METADATA")
_OWN = {"logichunk"}


def _site_metadata() -> list[str]:
    here = [os.path.join(p, "*.dist-info", "METADATA") for p in sys.path if p.endswith("site-packages")]
    return sorted({f for pat in (*here, *_METADATA) for f in glob.glob(pat)})


def sources() -> Iterator[tuple[str, str]]:
    """(name, Markdown text) of every package long description and shipped Markdown document."""
    seen: set[str] = set()
    for path in _site_metadata():
        name = os.path.basename(os.path.dirname(path)).split("-")[0].lower()
        if name in seen or name in _OWN:
            continue
        seen.add(name)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        head, sep, body = text.partition("\n\n")
        if sep and "text/markdown" in head:
            yield f"pypi:{name}", body
    for path in sorted(glob.glob("/usr/share/doc/*/*.md*")):
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8", errors="replace") as f:
                yield f"doc:{path}", f.read()
        except OSError:
            continue


def sections(md: str) -> list[list[str]]:
    """Paragraphs of prose per section, in order; text before the first heading is dropped."""
    out: list[list[str]] = []
    cur: list[str] | None = None
    para: list[str] = []

    def flush() -> None:
        if cur is not None and para:
            cur.append(" ".join(para))
        para.clear()

    lines = md.splitlines()
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if _HEAD.match(line) or (line.strip() and _SETEXT.match(nxt) and not _LIST.match(line)):
            flush()
            cur = []
            out.append(cur)
            continue
        s = line.strip()
        if not s or _SETEXT.match(line) or _LIST.match(line) or line.startswith(("    ", "\t")) \
                or s.startswith(("|", ">", "<", "[!", "![")):
            flush()
            continue
        para.append(s)
    flush()
    return out


def document(name: str, md: str) -> dict | None:
    return dev_document(name, [[u for p in sec for u in prose_units(p)] for sec in sections(md)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="a path outside the repository")
    a = ap.parse_args(argv)
    docs = [d for name, md in sources() if (d := document(name, md)) is not None]
    docs.sort(key=lambda d: hashlib.md5(d["id"].encode()).hexdigest())
    write_devset(a.out, docs, "devset_readme", "documents")
    return 0


if __name__ == "__main__":
    sys.exit(main())

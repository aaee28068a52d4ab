"""A development set of long natural documents, built from this machine's manual pages: for
choosing rules (the segmentation count rule first), never for reporting.

Why: the public segmentation sets we report on hold one set of long natural documents (wiki300,
~195 sentences and ~26 per section) and it has no documents to spare for a dev split; every other
dev split we have is synthetic (Choi, Weibo, DAct) or short dialogue. Manual pages are long,
natural, written by many authors, sectioned by them (DESCRIPTION, OPTIONS, EXAMPLES, ...), and
present on any Debian machine with ``man``. Their section boundaries stand in for a natural
document's topic boundaries.

How: ``man`` renders each page of sections 1, 5 and 7 (generated ``gcloud``/``bq``/``gsutil``
pages left out: thousands of near-copies); a line at column 0 in capitals opens a section;
NAME, SYNOPSIS, SEE ALSO, AUTHOR(S), COPYRIGHT, BUGS, REPORTING BUGS and COLOPHON are dropped
(lists, not prose); the rest is split into sentences by logichunk's splitter, keeping sentences
of at least four words that are mostly letters; a page is kept with at least three sections of
three sentences each and 30-600 sentences. Pages are taken in the order of the MD5 of their path
(a fixed, content-blind shuffle) until ``--docs`` are kept. Output: the segmentation format of
``../shared/data`` (``units``, ``segments``, ``boundaries``), one page per line.

    python bench/devset_man.py --docs 200 --out /tmp/devset_man.jsonl
    logichunk eval segmentation --data /tmp/devset_man.jsonl --methods global,entropy,none --json --no-save

The pages present differ from machine to machine; the file written says which pages it holds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

from logichunk.text.sentences import split_sentences

SECTIONS = ("man1", "man5", "man7")
GENERATED = ("gcloud", "bq", "gsutil")
DROPPED = {"NAME", "SYNOPSIS", "SEE ALSO", "AUTHOR", "AUTHORS", "COPYRIGHT", "REPORTING BUGS", "BUGS", "COLOPHON"}
_HEADING = re.compile(r"^[A-Z][A-Z /-]+$")
_OVERSTRIKE = re.compile(r".\x08")


def render(path: str) -> str:
    """The page as plain text, one paragraph line per output line (a very wide page)."""
    env = {**os.environ, "MANWIDTH": "3000", "MAN_KEEP_FORMATTING": "0", "LANG": "C.UTF-8"}
    out = subprocess.run(["man", "-l", path], capture_output=True, text=True, timeout=20, env=env).stdout
    return _OVERSTRIKE.sub("", out)


def sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) in order; lines at column 0 that are not headings (the page's header
    and footer) close the current section."""
    out: list[tuple[str, list[str]]] = []
    cur: list[str] | None = None
    para: list[str] = []

    def flush() -> None:
        if cur is not None and para:
            cur.append(" ".join(para))
        para.clear()

    for line in text.splitlines():
        if line and not line[0].isspace():
            flush()
            head = line.strip()
            if _HEADING.match(head):
                cur = []
                out.append((head, cur))
            else:
                cur = None
        elif line.strip():
            para.append(line.strip())
        else:
            flush()
    flush()
    return out


def prose_units(paragraph: str) -> list[str]:
    s = split_sentences(paragraph)
    units = []
    for a, b in zip(s.starts.tolist(), s.ends.tolist(), strict=True):
        u = paragraph[a:b].strip()
        if len(u.split()) >= 4 and sum(ch.isalpha() for ch in u) >= 0.6 * len(u):
            units.append(u)
    return units


def dev_document(name: str, sections_units: list[list[str]]) -> dict | None:
    """A dev document from its sections' sentences, in the format of ``../shared/data``: sections of
    fewer than three sentences dropped; kept with at least three sections and 30-600 sentences.
    (``devset_readme.py`` builds its documents the same way.)"""
    segs = [u for u in sections_units if len(u) >= 3]
    units = [u for s in segs for u in s]
    if len(segs) < 3 or not 30 <= len(units) <= 600:
        return None
    lens = [len(s) for s in segs]
    ends, acc = [], 0
    for n in lens[:-1]:
        acc += n
        ends.append(acc - 1)
    return {"id": name, "lang": "en", "units": units, "segments": lens, "boundaries": ends, "split": "dev"}


def page_doc(path: str) -> dict | None:
    return dev_document(os.path.basename(path), [[u for p in paras for u in prose_units(p)]
                                                 for head, paras in sections(render(path)) if head not in DROPPED])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--out", required=True, help="a path outside the repository")
    ap.add_argument("--root", default="/usr/share/man")
    a = ap.parse_args(argv)
    if shutil.which("man") is None or not os.path.isdir(a.root):
        print(f"devset_man: skipped: no `man` or no {a.root} on this machine")
        return 0
    pages = [os.path.join(a.root, s, f) for s in SECTIONS if os.path.isdir(os.path.join(a.root, s))
             for f in os.listdir(os.path.join(a.root, s)) if f.endswith(".gz") and not f.startswith(GENERATED)]
    pages.sort(key=lambda p: hashlib.md5(p.encode()).hexdigest())
    kept, seen = [], set()
    for p in pages:
        if len(kept) >= a.docs:
            break
        try:
            doc = page_doc(p)
        except (subprocess.SubprocessError, OSError, UnicodeDecodeError):
            continue
        if doc is None or tuple(doc["units"][:3]) in seen:
            continue
        seen.add(tuple(doc["units"][:3]))
        kept.append(doc)
    write_devset(a.out, kept, "devset_man", "pages")
    return 0


def write_devset(path: str, docs: list[dict], name: str, what: str) -> None:
    """One document per line, and a line saying what was written."""
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    n = sum(len(d["units"]) for d in docs)
    b = sum(len(d["boundaries"]) for d in docs)
    print(f"{name}: {len(docs)} {what}, {n / max(len(docs), 1):.0f} sentences and "
          f"{b / max(len(docs), 1):.1f} boundaries each -> {path}")


if __name__ == "__main__":
    sys.exit(main())

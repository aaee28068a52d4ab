"""Chunks without content in Markdown files: a chunk that is nothing once its HTML comments and tags,
its ATX headings and its rules are taken away (``## Usage`` over ``<!-- YAML added: v0.1 -->``, a lone
``</details>``). Such a chunk is a heading cut off from what it titles, or markup cut off from what it
opens or closes: retrieved, it answers nothing.

Why: no public chunking set here is written in Markdown with HTML in it, while the documentation users
chunk often is (GitHub READMEs fold sections in ``<details>``; Node's API documents put a comment of
metadata under every heading). This counts, on any folder of such files, what the default ``chunk()``
leaves empty at level 1, with the method's own structure reading, not a gold answer.

The peers' chunks are counted the same way (``--peers``): LangChain's ``RecursiveCharacterTextSplitter``
and its ``MarkdownTextSplitter`` (Markdown's separators first), Chonkie's ``RecursiveChunker`` in characters.

Usage (Debian's ``nodejs`` package ships Node's API documents; any Markdown folder works)::

    python bench/empty_chunks.py --max-size 1000 400 --peers -- /usr/share/doc/nodejs/api
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from logichunk import chunk

#: what carries no content in a chunk of Markdown: comments, tags, ATX heading lines, rules
_MARKUP = re.compile(r"<!--.*?-->|<[^<>\n]*>|^[ \t]{0,3}#{1,6}[ \t][^\n]*|^[ \t]{0,3}([-*_=])(?:[ \t]?\1){2,}[ \t]*$",
                     re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]", re.MULTILINE)


def _chunkers(max_size: int, peers: bool) -> dict[str, Callable[[str], list[str]]]:
    """The default ``chunk()`` at level 1 and, with ``peers``, the size-bounded peers, each giving chunk texts."""
    out: dict[str, Callable[[str], list[str]]] = {
        "logichunk": lambda text: [text[c.span.start : c.span.end] for c in chunk(text, max_size=max_size, levels=1).roots()]}
    if peers:
        from chonkie import RecursiveChunker
        from langchain_text_splitters import MarkdownTextSplitter, RecursiveCharacterTextSplitter

        out["langchain-recursive"] = RecursiveCharacterTextSplitter(chunk_size=max_size, chunk_overlap=0).split_text
        out["langchain-markdown"] = MarkdownTextSplitter(chunk_size=max_size, chunk_overlap=0).split_text
        rc = RecursiveChunker(tokenizer="character", chunk_size=max_size)
        out["chonkie-recursive"] = lambda text: [c.text for c in rc.chunk(text)]
    return out


def empty_chunks(chunks: list[str]) -> tuple[int, int, int]:
    """Of ``chunks``: how many, how many hold no content, and how many of those hold a heading."""
    empty = [t for t in chunks if not _MARKUP.sub("", t).strip()]
    return len(chunks), len(empty), sum(bool(_HEADING.search(t)) for t in empty)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-size", type=int, nargs="+", default=[1000])
    ap.add_argument("--peers", action="store_true", help="also count LangChain's and Chonkie's chunks")
    ap.add_argument("paths", nargs="+", help="Markdown files or folders (read recursively for *.md)")
    args = ap.parse_args(argv)
    files = sorted({f for p in map(Path, args.paths) for f in ([p] if p.is_file() else p.rglob("*.md"))})
    if not files:
        print(f"no Markdown files under {' '.join(args.paths)}: nothing to count", file=sys.stderr)
        return 1
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
    print(f"{len(files)} files, {sum(map(len, texts)):,} characters")
    print("| max size | chunker | chunks | without content | of them a heading and its markup |")
    print("|---|---|---|---|---|")
    for m in args.max_size:
        for name, split in _chunkers(m, args.peers).items():
            total, empty, heads = (sum(x) for x in zip(*(empty_chunks(split(t)) for t in texts), strict=True))
            print(f"| {m} | {name} | {total} | {empty} | {heads} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

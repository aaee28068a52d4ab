"""Edit locality: how many cuts far from an edit move when a user edits one place of a long document.

Why: our users' writing assistants re-chunk documents their users are editing. A chunker whose cuts
move far from an edit re-embeds and re-stores chunks nobody touched, and a reader sees the chunks of
an unchanged chapter change. The store re-chunks by blocks, so its locality holds whatever the
chunker does; ``chunk()`` on a whole document is what this measures.

Two edits per file and limit, each a new paragraph (a blank line, then one sentence), so that the
edit changes no structure around it: inserted at the first blank line after the middle of the text,
and appended at its end. A *far* cut is a top-level cut (a level-1 chunk's end) more than ``--far``
characters from the edit; it *moved* when the edited text has no cut at the same place (shifted by
the insertion when it lies after it). Files shorter than four times ``--far`` are skipped.

With ``--peers``, LangChain's ``RecursiveCharacterTextSplitter`` and Chonkie's ``RecursiveChunker`` (in
characters, no overlap) are counted the same way: they fill chunks from the left, so a cut before an
edit never moves, while those after it may.

Usage (Debian's ``nodejs`` package ships Node's API documents; any folder of Markdown or text works)::

    python bench/edit_locality.py --max-size 1000 400 --peers -- /usr/share/doc/nodejs/api
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from logichunk import chunk

#: the paragraph each edit adds
PARAGRAPH = "\n\nThis paragraph was added by an edit, and it speaks of unrelated gardening tools."


def _chunkers(max_size: int, peers: bool) -> dict[str, Callable[[str], list[int]]]:
    """Each method's top-level cut offsets (chunk ends but the text's own) for a text."""
    def ours(text: str) -> list[int]:
        return [c.span.end for c in chunk(text, max_size=max_size, levels=1).roots()][:-1]

    out: dict[str, Callable[[str], list[int]]] = {"logichunk": ours}
    if peers:
        from chonkie import RecursiveChunker
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        lc = RecursiveCharacterTextSplitter(chunk_size=max_size, chunk_overlap=0, add_start_index=True)
        out["langchain-recursive"] = lambda text: sorted(
            d.metadata["start_index"] + len(d.page_content) for d in lc.create_documents([text]))[:-1]
        rc = RecursiveChunker(tokenizer="character", chunk_size=max_size)
        out["chonkie-recursive"] = lambda text: [c.end_index for c in rc.chunk(text)][:-1]
    return out


def moved_cuts(cuts: Callable[[str], list[int]], text: str, far: int) -> tuple[int, int, int, int]:
    """For the two edits of ``text``: far cuts and moved ones, ``(far_mid, moved_mid, far_end, moved_end)``."""
    before = cuts(text)
    at = text.find("\n\n", len(text) // 2)
    at = len(text.rstrip()) if at < 0 else at
    mid = set(cuts(text[:at] + PARAGRAPH + text[at:]))
    far_mid = [c for c in before if abs(c - at) > far]
    moved_mid = sum((c if c < at else c + len(PARAGRAPH)) not in mid for c in far_mid)
    end = len(text.rstrip())
    after = set(cuts(text[:end] + PARAGRAPH + text[end:]))
    far_end = [c for c in before if c < end - far]
    return len(far_mid), moved_mid, len(far_end), sum(c not in after for c in far_end)


def _files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.suffix in (".md", ".txt", ".rst") and f.is_file())
        elif p.is_file():
            out.append(p)
        else:
            print(f"skip {p}: not found", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-size", type=int, nargs="+", default=[1000])
    ap.add_argument("--far", type=int, default=2000, help="characters from the edit beyond which a cut is far")
    ap.add_argument("--peers", action="store_true", help="also count LangChain's and Chonkie's cuts")
    ap.add_argument("paths", nargs="+", help="files or folders (read recursively for *.md, *.txt, *.rst)")
    args = ap.parse_args(argv)
    texts = [(f, f.read_text(encoding="utf-8", errors="replace")) for f in _files(args.paths)]
    texts = [(f, t) for f, t in texts if len(t.rstrip()) >= 4 * args.far]
    if not texts:
        print(f"no file of {4 * args.far} characters or more under {' '.join(args.paths)}", file=sys.stderr)
        return 1
    print(f"{len(texts)} files; a far cut lies more than {args.far} characters from the edit\n")
    print("| limit | method | inserted mid-text: far cuts / moved | appended at the end: far cuts / moved "
          "| files with a far cut moved |")
    print("|---|---|---|---|---|")
    for size in args.max_size:
        for name, cuts in _chunkers(size, args.peers).items():
            tot = [0, 0, 0, 0]
            touched = 0
            for _f, text in texts:
                got = moved_cuts(cuts, text, args.far)
                tot = [a + b for a, b in zip(tot, got, strict=True)]
                touched += bool(got[1] or got[3])
            print(f"| {size} | {name} | {tot[0]} / {tot[1]} ({tot[1] / max(tot[0], 1):.2%}) "
                  f"| {tot[2]} / {tot[3]} ({tot[3] / max(tot[2], 1):.2%}) | {touched} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

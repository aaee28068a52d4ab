"""Chunking sets as hard-wrapped text: every line longer than ``--width`` characters is wrapped greedily
by turning the space before the word that would pass the width into a line break, as a mail client,
an RFC or Project Gutenberg lays text out. The text keeps its length and every character offset, so
the gold spans stay exact; the wrapped copies are written to a temporary folder (the data is never
copied into the repository), then ``logichunk eval chunking`` runs on them with the arguments after
``--``.

Why: the public chunking sets are not wrapped, while many texts users chunk are (novels, RFCs,
mail, text pulled from PDFs); this shows what wrapping alone does to each chunker at an equal budget.

Usage::

    python bench/wrapped.py --width 72 -- --methods global,recursive,langchain-recursive --json --no-save
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import wrap  # noqa: E402
from logichunk.eval.readers import data_dir  # noqa: E402


def main() -> int:
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--width", type=int, default=72)
    ap.add_argument("--sets", default="chroma_general,qmsum_val", help="stems under the data's chunking/ folder")
    args = ap.parse_args(own)
    src = data_dir() / "chunking"
    if not src.is_dir():
        print(f"no chunking data at {src}: nothing to wrap")
        return 0
    with tempfile.TemporaryDirectory() as tmp_root:
        tmp = Path(tmp_root) / "chunking"  # rows name a set folder/name: chunking/<stem>_wrapped<width>
        tmp.mkdir()
        stems = []
        for stem in args.sets.split(","):
            corpus, queries = src / f"{stem}.corpus.jsonl", src / f"{stem}.queries.jsonl"
            out = tmp / f"{stem}_wrapped{args.width}"
            with corpus.open(encoding="utf-8") as f, open(f"{out}.corpus.jsonl", "w", encoding="utf-8") as g:
                for line in f:
                    doc = json.loads(line)
                    wrapped = wrap(doc["text"], args.width)
                    assert len(wrapped) == len(doc["text"])
                    g.write(json.dumps({**doc, "text": wrapped}, ensure_ascii=False) + "\n")
            Path(f"{out}.queries.jsonl").write_bytes(queries.read_bytes())
            stems.append(str(out))
        cmd = [sys.executable, "-m", "logichunk", "eval", "chunking", "--data", *stems, *rest]
        return subprocess.call(cmd)


if __name__ == "__main__":
    raise SystemExit(main())

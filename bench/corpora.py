"""Benchmark corpora built from the public data in ``../shared/data`` (never copied into the repo).

* **en** — the five Chroma "general" corpora (chatlogs, finance, pubmed, state of the union,
  wikitexts; ~1.45 MB), then wiki300 documents (units joined with a space inside a gold segment,
  segments separated by a blank line) until the target size is reached.
* **en-lines** / **en-wrapped** — wiki300's articles (a paragraph per gold section, blank lines between
  them), one sentence per line / hard-wrapped at 72 columns (:func:`wrap`).
* **code** — Python source: the ``.py`` files of the installed numpy package (a dependency of
  logichunk, so on every machine that runs the bench; public code we did not write), in path order,
  each file's text as it is. A code base's layout: indented blocks, comments, docstrings, short lines.
  Its size and content follow the numpy version, which the results name.
* **zh** — DRCD dev articles (Traditional) and CMRC 2018 dev paragraphs (Simplified), field
  ``text``. Together they hold only ~2.5 MB of UTF-8, so to reach the target the same documents
  are taken again in further passes (stated in the results; the size is what throughput needs).

Documents are joined with a blank line into one string per corpus; the target is in UTF-8 bytes
(MB = 10**6 bytes), and whole documents are added until it is reached.

The data folder is ``<repo>/../shared/data``, or ``$LOGICHUNK_DATA``. When it is absent every entry
point says so and skips (exit status 0).

Run ``python bench/corpora.py`` to print the corpus sizes, ``--write DIR`` to write ``en.txt`` and
``zh.txt`` there (outside the repository, please).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

DEFAULT_TARGET_BYTES = 5_000_000
DOC_SEP = "\n\n"


def data_dir() -> Path:
    env = os.environ.get("LOGICHUNK_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


def missing_message() -> str | None:
    """None when the data is there, else a one-line explanation for a skip."""
    d = data_dir()
    need = [
        "chunking/chroma_general.corpus.jsonl",
        "segmentation/wiki300.jsonl",
        "chunking/drcd_dev_article.corpus.jsonl",
        "retrieval/cmrc2018_dev.corpus.jsonl",
        "retrieval/hotpot_dev_distractor100.corpus.jsonl",
    ]
    absent = [p for p in need if not (d / p).is_file()]
    if absent:
        return (f"benchmark data not found under {d} (missing: {', '.join(absent)}); "
                "set LOGICHUNK_DATA to the shared data folder. Skipping.")
    return None


def _jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _corpus_texts(rel: str) -> list[str]:
    return [r["text"] for r in _jsonl(data_dir() / rel) if r.get("text")]


def _wiki300_texts(line_sep: str = " ") -> list[str]:
    """wiki300's articles, one paragraph per gold section; ``line_sep="\n"`` lays each sentence on a
    line of its own (a novel's or a transcript's layout: one sentence per line, blank lines between
    paragraphs)."""
    out = []
    for r in _jsonl(data_dir() / "segmentation/wiki300.jsonl"):
        units, segs, paras, i = r["units"], r.get("segments") or [len(r["units"])], [], 0
        for n in segs:
            paras.append(line_sep.join(u.strip() for u in units[i : i + n] if u.strip()))
            i += n
        if i < len(units):
            paras.append(line_sep.join(units[i:]))
        text = DOC_SEP.join(p for p in paras if p)
        if text:
            out.append(text)
    return out


def _fill(docs: list[str], target_bytes: int, max_passes: int) -> tuple[str, dict]:
    parts: list[str] = []
    size, used, passes = 0, 0, 0
    while size < target_bytes and passes < max_passes and docs:
        passes += 1
        for d in docs:
            parts.append(d)
            used += 1
            size += len(d.encode("utf-8")) + (len(DOC_SEP) if len(parts) > 1 else 0)
            if size >= target_bytes:
                break
    text = DOC_SEP.join(parts)
    return text, {"docs": used, "passes": passes, "unique_docs": len(docs)}


def english(target_bytes: int = DEFAULT_TARGET_BYTES) -> tuple[str, dict]:
    docs = _corpus_texts("chunking/chroma_general.corpus.jsonl") + _wiki300_texts()
    return _fill(docs, target_bytes, max_passes=1)


def chinese(target_bytes: int = DEFAULT_TARGET_BYTES) -> tuple[str, dict]:
    docs = _corpus_texts("chunking/drcd_dev_article.corpus.jsonl") + _corpus_texts("retrieval/cmrc2018_dev.corpus.jsonl")
    return _fill(docs, target_bytes, max_passes=4)


def english_lines(target_bytes: int = DEFAULT_TARGET_BYTES) -> tuple[str, dict]:
    """English prose laid out one sentence per line, blank lines between paragraphs (wiki300)."""
    return _fill(_wiki300_texts("\n"), target_bytes, max_passes=4)


def wrap(text: str, width: int = 72) -> str:
    """``text`` hard-wrapped as a mail client, an RFC or Project Gutenberg lays it out: each line longer
    than ``width`` characters is broken greedily by turning the space before the word that would pass
    the width into a line break. The length and every character offset stay the same."""
    out = list(text)
    start, last_space = 0, -1
    for i, ch in enumerate(text):
        if ch == "\n":
            start, last_space = i + 1, -1
        elif ch == " ":
            if i - start > width and last_space > start:
                out[last_space] = "\n"
                start = last_space + 1
            last_space = i
    return "".join(out)


def english_wrapped(target_bytes: int = DEFAULT_TARGET_BYTES) -> tuple[str, dict]:
    """English prose hard-wrapped at 72 columns, blank lines between paragraphs (wiki300): a novel's or
    an RFC's layout."""
    return _fill([wrap(d) for d in _wiki300_texts()], target_bytes, max_passes=4)


def code(target_bytes: int = DEFAULT_TARGET_BYTES) -> tuple[str, dict]:
    """Python source laid end to end: numpy's ``.py`` files, in path order (a code base's layout)."""
    import numpy

    root = Path(numpy.__file__).parent
    docs = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob("*.py"))]
    text, info = _fill(docs, target_bytes, max_passes=4)
    info["source"] = f"numpy {numpy.__version__}"
    return text, info


BUILDERS = {"en": english, "zh": chinese, "en-lines": english_lines, "en-wrapped": english_wrapped, "code": code}


def documents(lang: str) -> list[str]:
    """Many short documents, as a knowledge base holds them: en, HotpotQA's 991 Wikipedia
    paragraphs (median ~490 characters); zh, CMRC 2018's 848 paragraphs and DRCD's 383 articles
    (median ~455 / ~707). Raises FileNotFoundError (with the skip message) when data is absent."""
    msg = missing_message()
    if msg:
        raise FileNotFoundError(msg)
    if lang == "en":
        return _corpus_texts("retrieval/hotpot_dev_distractor100.corpus.jsonl")
    return _corpus_texts("retrieval/cmrc2018_dev.corpus.jsonl") + _corpus_texts("chunking/drcd_dev_article.corpus.jsonl")


def build(names: tuple[str, ...] = ("en", "zh"), target_bytes: int = DEFAULT_TARGET_BYTES) -> dict[str, tuple[str, dict]]:
    """``{name: (text, info)}``; raises FileNotFoundError (with the skip message) when data is absent."""
    msg = missing_message()
    if msg:
        raise FileNotFoundError(msg)
    out = {}
    for n in names:
        text, info = BUILDERS[n](target_bytes)
        info.update(chars=len(text), bytes=len(text.encode("utf-8")))
        out[n] = (text, info)
    return out


def describe(name: str, info: dict) -> str:
    rep = f", {info['passes']} passes over {info['unique_docs']} documents" if info["passes"] > 1 else ""
    src = f" ({info['source']})" if info.get("source") else ""
    return (f"{name}: {info['bytes'] / 1e6:.2f} MB UTF-8, {info['chars']:,} chars, "
            f"{info['docs']} documents{rep}{src}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=DEFAULT_TARGET_BYTES / 1e6, help="target size per corpus in MB")
    ap.add_argument("--write", metavar="DIR", help="write en.txt and zh.txt into DIR")
    args = ap.parse_args(argv)
    try:
        corpora = build(target_bytes=int(args.mb * 1e6))
    except FileNotFoundError as e:
        print(e)
        return 0
    for name, (text, info) in corpora.items():
        print(describe(name, info))
        if args.write:
            Path(args.write).mkdir(parents=True, exist_ok=True)
            (Path(args.write) / f"{name}.txt").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

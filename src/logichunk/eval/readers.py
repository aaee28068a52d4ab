"""Readers for the two benchmark formats of ``../shared/data`` (see its README).

* Segmentation (one document per JSON line): ``{"id", "lang", "units": [str], "segments": [int],
  "boundaries": [int], ...}`` — ``boundaries`` are gap indices (a boundary after ``units[i]``).
* Retrieval / chunking (a *stem* names two files): ``STEM.corpus.jsonl`` with ``{"doc_id", "title",
  "text", "lang"}`` and ``STEM.queries.jsonl`` with ``{"qid", "question", "answers", "lang",
  "gold_doc_ids", "gold_spans": [{"doc_id", "start", "end"}], "meta"}``.

``--data`` accepts a segmentation file, a stem (``.../chroma_general``), either file of a pair, or a
folder (every set inside, recursively). Missing data: :func:`resolve` raises :class:`DataMissing` when
the user named the path; when nothing was named and the default folder is absent, the CLI prints one
line and exits 0 (a machine without the shared data skips the benchmarks, it does not fail).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..errors import LogichunkError

__all__ = [
    "Corpus", "DataMissing", "DataSet", "Doc", "Query", "SegDoc", "data_dir", "dataset_name", "end_to_end",
    "read_corpus", "read_segmentation", "resolve",
]

CORPUS, QUERIES = ".corpus.jsonl", ".queries.jsonl"
Task = Literal["segmentation", "chunking", "retrieval"]
# Default sets per task, relative to the data folder.
DEFAULT_FOLDERS: dict[str, tuple[str, ...]] = {
    "segmentation": ("segmentation", "dialogue"),
    "chunking": ("chunking",),
    "retrieval": ("retrieval",),
}


#: each kind of set in words, for a message naming what the task reads (a missing ``--data`` of ``memory calibrate``
#: named the retrieval sets' files)
FORMATS: dict[str, str] = {
    "segmentation": "JSONL, one document or dialogue a line: its 'units' (sentences, or turns) and 'boundaries' or "
                    "'segments', as under shared/data/segmentation and shared/data/dialogue",
    "spans": f"STEM{CORPUS} + STEM{QUERIES}",
}


class DataMissing(LogichunkError):
    """A named data file or folder does not exist, or holds nothing in the expected format."""


class DataFormatError(LogichunkError):
    """A data file is not in the documented format."""


def data_dir() -> Path:
    """``$LOGICHUNK_DATA`` if set, else ``<repo>/../shared/data`` (the repo holding this package)."""
    env = os.environ.get("LOGICHUNK_DATA")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[3]  # src/logichunk/eval/readers.py -> repo
    return repo.parent / "shared" / "data"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class SegDoc:
    """One segmentation document: ``boundaries`` are sorted gap indices in ``[0, n-2]``."""

    id: str
    lang: str
    units: list[str]
    boundaries: np.ndarray

    @property
    def n(self) -> int:
        return len(self.units)


@dataclass(frozen=True)
class Doc:
    doc_id: str
    title: str
    text: str
    lang: str


@dataclass(frozen=True)
class Query:
    qid: str
    question: str
    lang: str
    gold_doc_ids: tuple[str, ...]
    gold_spans: tuple[tuple[str, int, int], ...]  # (doc_id, start, end)
    answers: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Corpus:
    docs: list[Doc]
    queries: list[Query]

    def by_id(self) -> dict[str, int]:
        return {d.doc_id: i for i, d in enumerate(self.docs)}


@dataclass(frozen=True)
class DataSet:
    """One benchmark set found on disk: ``kind`` is ``segmentation`` or ``spans``; ``path`` is the
    file (segmentation) or the stem (spans)."""

    name: str
    kind: Literal["segmentation", "spans"]
    path: Path

    @property
    def label(self) -> str:
        """``folder/name`` as results name a set (the folder of a relative path resolved first)."""
        return f"{self.path.resolve().parent.name}/{self.name}"


def dataset_name(path: Path) -> str:
    name = path.name
    for suf in (CORPUS, QUERIES, ".jsonl"):
        if name.endswith(suf):
            return name[: -len(suf)]
    return name


# --------------------------------------------------------------------------- reading


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        yield from _json_rows(path)
    except UnicodeDecodeError as e:
        raise DataFormatError(f"{path}: not valid UTF-8 (byte {e.start}): not a JSON-lines data file") from None


def _json_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(path, encoding="utf-8-sig") as f:  # a leading byte-order mark is not part of line 1
        for no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise DataFormatError(f"{path}:{no}: not a JSON line") from None
            if not isinstance(row, dict):
                raise DataFormatError(f"{path}:{no}: expected a JSON object per line")
            yield no, row


def _int_list(x: Any, what: str, where: str) -> list[int]:
    """A JSON list of integers, or :class:`DataFormatError` (no silent truncation of 0.5 or "2")."""
    if not isinstance(x, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in x):
        raise DataFormatError(f"{where}: {what!r} must be a list of integers, got {json.dumps(x)[:60]}")
    return x


def _text(x: Any, what: str, where: str, *, ids: bool = False) -> str:
    """A JSON string (or, for ids, an integer), or :class:`DataFormatError` (no "None" documents)."""
    if isinstance(x, str) or (ids and isinstance(x, int) and not isinstance(x, bool)):
        return str(x)
    raise DataFormatError(f"{where}: {what!r} must be a {'string or integer' if ids else 'string'}, "
                          f"got {json.dumps(x)[:60]}")


def read_segmentation(path: str | Path, limit: int | None = None) -> list[SegDoc]:
    """Documents of a segmentation JSONL file (the first ``limit`` if given). Boundaries come from
    ``boundaries`` or, if absent, from ``segments``; when both are present they must agree."""
    path = Path(path)
    docs: list[SegDoc] = []
    rows = 0
    for no, row in _lines(path):
        rows += 1
        if limit is not None and len(docs) >= limit:
            break
        where = f"{path}:{no}"
        units = row.get("units")
        if not isinstance(units, list) or not all(isinstance(u, str) for u in units):
            raise DataFormatError(f"{where}: a segmentation line needs a 'units' list of strings")
        n = len(units)
        b = row.get("boundaries")
        seg = row.get("segments")
        if b is None and seg is None:
            raise DataFormatError(f"{where}: needs 'boundaries' or 'segments'")
        if b is not None:
            b = _int_list(b, "boundaries", where)
        if seg is not None:
            seg = _int_list(seg, "segments", where)
            if sum(seg) != n or any(s <= 0 for s in seg):
                raise DataFormatError(f"{path}:{no}: 'segments' must be positive and sum to {n} units")
            from_seg = np.cumsum(np.asarray(seg, dtype=np.int64))[:-1] - 1
        bounds = np.unique(np.asarray(b if b is not None else from_seg, dtype=np.int64))
        if bounds.size and (bounds[0] < 0 or bounds[-1] > n - 2):
            raise DataFormatError(f"{path}:{no}: boundary index outside 0..{n - 2}")
        if seg is not None and b is not None and not np.array_equal(bounds, from_seg):
            raise DataFormatError(f"{path}:{no}: 'boundaries' and 'segments' disagree")
        docs.append(SegDoc(_text(row.get("id", f"{path.name}:{no}"), "id", where, ids=True),
                           _text(row.get("lang", "en"), "lang", where), units, bounds))
    if not rows:  # (a run over it would print a row of n=0 per method and succeed: a wrong path, most likely)
        raise DataFormatError(f"{path}: no documents in it (the file is empty or only blank lines)")
    return docs


def end_to_end(docs: Sequence[SegDoc], group: int) -> list[SegDoc]:
    """Every ``group`` consecutive documents laid end to end as one (the last group may be shorter):
    units in order, each document's own boundaries kept, and a boundary where one document ends and the
    next begins. Why: a long text — many articles, an afternoon of conversation — is made of topics of
    ordinary length, and segmentation must not get coarser as the text gets longer (Choi's set is built
    the same way, from shorter pieces)."""
    if group < 1:
        raise ValueError(f"group must be at least 1, got {group}")
    out = []
    for g in range(0, len(docs), group):
        part = docs[g : g + group]
        units: list[str] = []
        bounds: list[np.ndarray] = []
        for d in part:
            if not d.units:
                continue
            if units:
                bounds.append(np.asarray([len(units) - 1], np.int64))
            bounds.append(np.asarray(d.boundaries, np.int64) + len(units))
            units.extend(d.units)
        out.append(SegDoc("+".join(d.id for d in part), part[0].lang, units,
                          np.unique(np.concatenate(bounds)) if bounds else np.zeros(0, np.int64)))
    return out


def read_corpus(stem: str | Path, limit: int | None = None) -> Corpus:
    """A corpus and its queries. With ``limit``: the first ``limit`` queries, and the corpus cut to
    their gold documents plus the first ``limit`` documents of the file (so distractors remain)."""
    stem = Path(stem)
    cpath, qpath = Path(str(stem) + CORPUS), Path(str(stem) + QUERIES)
    for p in (cpath, qpath):
        if not p.exists():
            raise DataMissing(f"{p}: no such file (a retrieval set is STEM{CORPUS} + STEM{QUERIES})")
    docs: list[Doc] = []
    for no, row in _lines(cpath):
        where = f"{cpath}:{no}"
        try:
            docs.append(Doc(_text(row["doc_id"], "doc_id", where, ids=True), _text(row.get("title", ""), "title", where),
                            _text(row["text"], "text", where), _text(row.get("lang", "en"), "lang", where)))
        except KeyError as e:
            raise DataFormatError(f"{where}: missing {e}") from None
    index = {d.doc_id: d for d in docs}
    if len(index) != len(docs):
        raise DataFormatError(f"{cpath}: duplicate doc_id")
    queries: list[Query] = []
    for no, row in _lines(qpath):
        if limit is not None and len(queries) >= limit:
            break
        where = f"{qpath}:{no}"
        gold = row.get("gold_spans", [])
        if not isinstance(gold, list) or not all(isinstance(g, dict) for g in gold):
            raise DataFormatError(f"{where}: 'gold_spans' must be a list of objects")
        try:
            spans = []
            for s in gold:
                did = _text(s["doc_id"], "doc_id", where, ids=True)
                a, b = _int_list([s["start"], s["end"]], "start/end", where)
                d = index.get(did)
                if d is None or not (0 <= a <= b <= len(d.text)):
                    raise DataFormatError(f"{qpath}:{no}: gold span {did}[{a}:{b}] is outside the corpus")
                spans.append((did, a, b))
            gold_docs = tuple(str(x) for x in row.get("gold_doc_ids", [])) or tuple(dict.fromkeys(s[0] for s in spans))
            queries.append(Query(_text(row["qid"], "qid", where, ids=True), _text(row["question"], "question", where),
                                 _text(row.get("lang", "en"), "lang", where), gold_docs,
                                 tuple(spans), tuple(str(a) for a in row.get("answers", [])),
                                 dict(row.get("meta") or {})))
        except KeyError as e:
            raise DataFormatError(f"{qpath}:{no}: missing {e}") from None
    if limit is not None:
        keep = {d.doc_id for d in docs[:limit]}
        keep.update(did for q in queries for did in q.gold_doc_ids)
        keep.update(s[0] for q in queries for s in q.gold_spans)
        docs = [d for d in docs if d.doc_id in keep]
    return Corpus(docs, queries)


# --------------------------------------------------------------------------- finding sets


def _sets_in(folder: Path) -> list[DataSet]:
    out: list[DataSet] = []
    for f in sorted(folder.rglob("*.jsonl")):
        n = f.name
        if n.endswith(CORPUS):
            stem = Path(str(f)[: -len(CORPUS)])
            if Path(str(stem) + QUERIES).exists():
                out.append(DataSet(stem.name, "spans", stem))
        elif n.endswith(QUERIES):
            continue
        else:
            out.append(DataSet(dataset_name(f), "segmentation", f))
    return out


def _one(path: Path, wanted: str = "spans") -> list[DataSet]:
    s = str(path)
    if path.is_dir():
        return _sets_in(path)
    for suf in (CORPUS, QUERIES):
        if s.endswith(suf):
            path = Path(s[: -len(suf)])
            s = str(path)
    if Path(s + CORPUS).exists() or Path(s + QUERIES).exists():
        return [DataSet(path.name, "spans", path)]
    if path.is_file():
        return [DataSet(dataset_name(path), "segmentation", path)]
    if Path(s + ".jsonl").is_file():
        return [DataSet(path.name, "segmentation", Path(s + ".jsonl"))]
    raise DataMissing(f"{path}: no such file, folder or set ({FORMATS[wanted]})" if wanted == "spans" else
                      f"{path}: no such file or folder ({FORMATS[wanted]})")


def resolve(data: list[str] | None, task: Task) -> tuple[list[DataSet], str | None]:
    """The data sets to run for ``task``, and a note when the default folder is absent (then the
    list is empty and the caller skips). Paths the user named must exist: :class:`DataMissing`."""
    wanted = "segmentation" if task == "segmentation" else "spans"
    if data:
        sets: list[DataSet] = []
        for d in data:
            found = _one(Path(d), wanted)
            sets.extend(s for s in found if s.kind == wanted)
            if not found:
                raise DataMissing(f"{d}: holds no data set ({FORMATS[wanted]})")
        if not sets:
            raise DataMissing(f"{', '.join(data)}: no {task} data there ({FORMATS[wanted]})")
        return sets, None
    root = data_dir()
    if not root.is_dir():
        return [], (f"no benchmark data at {root} (set LOGICHUNK_DATA or pass --data); "
                    f"skipping {task}")
    sets = []
    for sub in DEFAULT_FOLDERS[task]:
        if (root / sub).is_dir():
            sets.extend(s for s in _sets_in(root / sub) if s.kind == wanted)
    if not sets:
        return [], f"no {task} sets under {root}; skipping"
    return sets, None

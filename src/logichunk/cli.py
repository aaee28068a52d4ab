"""``logichunk`` — one command, many verbs. Verbs mirror the Python API; errors are one line.

Every verb that prints results takes ``--format jsonl`` (one JSON object per line) for scripts.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from . import __version__
from .cli_args import (  # check_out_path re-exported: the verbs' modules used it from here
    check_out_path,
    encoding_option,
    one_line,
    visible,
)
from .errors import InputError, LogichunkError
from .progress import Progress as _Progress
from .text.folders import TEXT_SUFFIXES
from .tree import ChunkTree, bubble_marks
from .types import Bubble

if TYPE_CHECKING:
    from .chunkers.stream import StreamPart

DEFAULT_BUBBLES = "logichunk-bubbles.jsonl"  # what ``logichunk bubbles`` lists by default (an older run's log)


# ----------------------------------------------------------------------------- helpers


def _err(msg: str) -> None:
    print(f"logichunk: {msg}", file=sys.stderr)


def _inputs(paths: Sequence[str], suffixes: tuple[str, ...], verb: str = "chunk",
            quiet: bool = False) -> Iterator[tuple[str, Callable[..., Iterator[str]]]]:
    """(source name, reader) for each input: files, folders (recursive, sorted, as ``ingest`` walks them:
    :func:`~logichunk.text.folders.walk_text_files`, what it left out said in a note) and ``-`` (stdin). A
    reader gives the text in pieces (:func:`~logichunk.text.decode.read_blocks`, whose ``on_decoding`` it
    passes on); ``"".join`` of them is the whole text, decoded as :func:`~logichunk.text.decode.read_text`
    decodes it."""
    from .text.decode import check_path, read_blocks
    from .text.folders import hidden_summary, skipped_summary, unreadable_line, walk_text_files

    for p in paths:
        check_path(p)  # ("": the current folder, every text file of it read)
        if p == "-":
            yield "<stdin>", lambda **kw: read_blocks(sys.stdin.buffer, source="<stdin>", **kw)
            continue
        path = Path(p)
        if path.is_dir():
            skipped: list[Path] = []
            hidden: list[Path] = []
            unreadable: list[OSError] = []
            files = list(walk_text_files(path, suffixes, skipped=skipped, hidden=hidden, unreadable=unreadable))
            said = [*map(unreadable_line, unreadable),
                    *([skipped_summary([str(f) for f in skipped], verb)] if skipped else []),
                    *([hidden_summary([str(f) for f in hidden], verb)] if hidden else [])]
            if not files:
                raise LogichunkError(f"{p}: no files ending in {', '.join(suffixes)} in this folder"
                                     + (f" ({'; '.join(said)})" if said else ""))
            if not quiet:
                for line in said:
                    _err(f"note: {line}")
            for f in files:
                yield str(f), (lambda f=f, **kw: read_blocks(f, **kw))
        else:
            yield str(path), (lambda path=path, **kw: read_blocks(path, **kw))


def _empty(text: str) -> str:
    """Why ``text`` gives nothing to chunk ('' when it does): empty, or whitespace alone (no chunk of it is
    worth a vector; the LangChain and LlamaIndex splitters return none for it). One rule for every verb: the
    only input given is then an error, one of many is skipped with a note (:func:`~.text.decode.blank`: the
    service and the MCP tools refuse such a text with the same words)."""
    from .text.decode import empty_input

    return empty_input(text)


class _Decodings:
    """How each input's bytes were decoded, when not as plain UTF-8 (``utf-8-sig``, ``utf-16-le``, ``gb18030``,
    ``pdf``, ``gzip+utf-8``...: :func:`~logichunk.text.decode.read_blocks`' ``on_decoding``), for the ``decoded``
    key of its json/jsonl records: the offsets count in that decoded text, not in the file's bytes. ``encoding``:
    the codec named (``--encoding``); without one, a file read as GB18030 (not UTF-8, read as Chinese: a guess)
    is said in a note on stderr too, unless ``quiet``."""

    def __init__(self, encoding: str | None = None, quiet: bool = False) -> None:
        self.seen: dict[str, str] = {}
        self.encoding, self.quiet = encoding, quiet

    def read(self, source: str, read: Callable[..., Iterator[str]]) -> Iterator[str]:
        def heard(decoding: str) -> None:
            if decoding:
                self.seen[source] = decoding
            if decoding.endswith("gb18030") and self.encoding is None and not self.quiet:
                _err(f"note: {source}: not UTF-8; read as GB18030 (Chinese; --encoding NAME reads it otherwise)")

        return read(on_decoding=heard, encoding=self.encoding)

    def extra(self, source: str) -> dict[str, str]:
        """The keys every record of ``source`` carries: ``source``, and ``decoded`` when it applies."""
        d = self.seen.get(source)
        return {"source": source, "decoded": d} if d else {"source": source}


class _Windows:
    """``--window`` as ``chunk`` and ``segment`` read it: None (auto) reads a text whole up to
    :data:`~logichunk.chunkers.stream.WHOLE_UP_TO` characters and in windows beyond, with a note; 0 always
    whole; N in windows of N once it is longer (no longer, one window is the whole text). ``whole_only``:
    an option that needs the whole text (``--overlap``, ``--topics``) reads it whole when no window is given."""

    def __init__(self, arg: int | None, whole_only: bool) -> None:
        from .chunkers.stream import DEFAULT_WINDOW, WHOLE_UP_TO

        self.auto = arg is None
        self.size = DEFAULT_WINDOW if arg is None else arg
        self.whole_up_to = None if arg == 0 or (self.auto and whole_only) else WHOLE_UP_TO if self.auto else arg

    def note(self, source: str, done: str, what: str, quiet: bool) -> None:
        """Say on stderr that ``source`` is read in windows, when that was not asked for."""
        if self.auto and not quiet:
            _err(f"{source}: longer than {self.whole_up_to:,} characters: {done} in windows of {self.size:,} "
                 f"(each window's {what} decided whole; --window 0 reads it whole)")


def _read_up_to(blocks: Iterator[str], limit: int | None) -> str | Iterator[str]:
    """The whole text when it is at most ``limit`` characters long (or ``limit`` is None), else its
    pieces from the first on (what was read already, then the rest), to be chunked in windows."""
    held: list[str] = []
    size = 0
    for piece in blocks:
        held.append(piece)
        size += len(piece)
        if limit is not None and size > limit:
            return itertools.chain(held, blocks)
    return "".join(held)


def _chunk_defaults(args: argparse.Namespace, verb_reads: frozenset[str] = frozenset()) -> None:
    """Fill the chunking flags left unset from the settings (``--config`` / ``$LOGICHUNK_CONFIG``,
    ``LOGICHUNK_*``): ``unit``, and ``chunk_sizes`` for the cascade's methods when no size flag is given."""
    from .chunkers.dispatch import check_selection
    from .config import Settings

    s = Settings.load(args.config)
    args.settings = s  # parent-child takes its parameters from them, as ingest does
    if args.unit is None:
        args.unit = s.unit
    if getattr(args, "tokenizer", None) is None and s.tokenizer:
        args.tokenizer = s.tokenizer
    if getattr(args, "tokenizer", None) and args.unit == "chars":
        args.unit = "tokens"  # a tokenizer measures tokens
    if args.sizes is None and args.max_size is None and args.levels is None and args.method in CASCADE:
        args.sizes = ",".join(map(str, s.chunk_sizes))
    _drop_ignored(args, verb_reads)
    check_selection(args.method, args.selection)  # before a model loads
    if args.levels is None:
        args.levels = 3


#: chunk_by's option -> (its flag, the value that leaves it unset)
_OPTION_FLAGS = {"levels": ("--levels", None), "embedder": ("--embedder", None), "llm": ("--llm", None),
                 "lm": ("--lm", None), "theta": ("--theta", None), "composite": ("--fast", False),
                 "selection": ("--selection", None)}


def _drop_overridden_by_sizes(args: argparse.Namespace, quiet: bool) -> None:
    """``--sizes`` sets every level's limit, so the tree's depth and its top limit too: a ``--levels`` that
    disagrees, or a ``--max-size``, is said in one note and unset, as an ignored flag is."""
    if args.sizes is None:
        return
    depth = len(args.sizes.split(","))
    for flag, name in (("--levels", "levels"), ("--max-size", "max_size")):
        value = getattr(args, name, None)
        if value is None or (name == "levels" and value == depth):
            continue
        if not quiet:
            what = f"the depth ({depth} level{'s' if depth > 1 else ''})" if name == "levels" else "the top limit"
            _err(f"note: --sizes {args.sizes} sets {what}; {flag} {value} is ignored")
        setattr(args, name, None)


def _drop_ignored(args: argparse.Namespace, verb_reads: frozenset[str]) -> None:
    """Each flag given that the method does not read is said in one note and unset (its model not loaded):
    a flag that changes nothing must not look as if it did. ``verb_reads``: what the verb itself reads
    (validate's and compensate's LLM)."""
    from .chunkers.dispatch import ignored_options, methods_reading, needs

    attr, quiet = {"composite": "fast"}, getattr(args, "quiet", False)
    given = [o for o, (_flag, unset) in _OPTION_FLAGS.items() if getattr(args, attr.get(o, o), None) != unset]
    for option in ignored_options(args.method, given):
        if option in verb_reads or (option == "embedder" and getattr(args, "tokenizer", None) == "embedder"):
            continue
        flag, unset = _OPTION_FLAGS[option]
        if not quiet:
            _err(f"note: {flag} is read by {', '.join(methods_reading(option))}; {args.method} ignores it")
        setattr(args, attr.get(option, option), unset)
    if getattr(args, "overlap", 0) and getattr(args, "format", None) in ("tree", "markdown"):
        if not quiet:
            _err(f"note: --overlap is written in the json and jsonl records (overlap_start, overlap_end); "
                 f"--format {args.format} ignores it")
        args.overlap = 0
    _drop_overridden_by_sizes(args, quiet)
    lm_runs = "lm" in needs(args.method) or bool(getattr(args, "lm", None))
    for flag, name, unset in (("--lm-dtype", "lm_dtype", "auto"), ("--lm-backend", "lm_backend", "auto"),
                              ("--lm-device", "lm_device", "cpu")):
        if not lm_runs and not quiet and getattr(args, name, unset) not in (None, unset):
            _err(f"note: {flag} sets how the causal LM runs; none runs here (give --lm, or --method ppl or msp), "
                 "so it is ignored")


def _needs(args: argparse.Namespace, need: tuple[str, ...]) -> tuple[str, ...]:
    """A method's models, plus the embedder when its tokenizer sizes the chunks."""
    return (*need, "embedder") if getattr(args, "tokenizer", None) == "embedder" else need


CASCADE = ("logic-chain", "cliff", "fused")  # the methods whose default sizes are the chunk_sizes setting


def _sizes(arg: str | None) -> tuple[int, ...] | None:
    if arg is None:
        return None
    try:  # (every item a number: "1000,,200" or "" is a typo, not a request for the defaults)
        return tuple(int(x) for x in arg.split(","))
    except ValueError:
        raise LogichunkError(f"--sizes wants comma-separated integers, got {arg!r}") from None


# ----------------------------------------------------------------------------- output formats


def _write_tree(out: TextIO, source: str, tree: ChunkTree, many: bool) -> None:
    if many:
        out.write(f"== {source}\n")
    for c in tree:
        indent = "  " * (c.level - 1)
        out.write(f"{indent}{c.id:<10} {c.meta.get('size', len(c.span)):>6} {tree.unit:<6} "
                  f"{c.method:<9} {one_line(tree.text_of(c))}\n")


def _write_jsonl(out: TextIO, extra: dict[str, Any], tree: ChunkTree) -> None:
    if tree.stats.get("overlap"):
        lines = [json.dumps(r | extra, ensure_ascii=False) for r in _records(tree)]
    else:
        lines = _with_bubbles(tree.json_lines(extra), tree)
    lines.append("")
    out.write("\n".join(lines))


def _records(tree: ChunkTree) -> list[dict[str, Any]]:
    """The tree's records, with each chunk's context window (``--overlap``) when it has one, and the
    category of the bubble it is part of (:func:`_with_bubbles`)."""
    recs = tree.records()
    if tree.stats.get("overlap"):
        for r, c in zip(recs, tree, strict=True):
            r["overlap_start"], r["overlap_end"] = c.meta["overlap_span"]
    return _with_bubbles(recs, tree)


def _with_bubbles(rows: list[Any], of: ChunkTree | StreamPart) -> list[Any]:
    """``rows`` with ``"bubble"`` added to those a bubble of ``of`` is about (:func:`bubble_marks`): every
    output of chunk records marks them here. ``rows``: ``of``'s records (dicts, marked in place), or their
    JSON lines (each ending in ``}``; the records are then read without their text to find the marks)."""
    bubbles = of.bubbles
    if not bubbles or not rows:
        return rows
    lines = isinstance(rows[0], str)
    for k, category in bubble_marks(of.records(with_text=False) if lines else rows, bubbles).items():
        if lines:
            rows[k] = f"{rows[k][:-1]}, \"bubble\": {json.dumps(category)}}}"
        else:
            rows[k]["bubble"] = category
    return rows


def _tree_json(source: str, tree: ChunkTree, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        **(extra or {"source": source}),
        "unit": tree.unit,
        "stats": dict(tree.stats),
        "chunks": _records(tree),
        "bubbles": [b.to_dict() for b in tree.bubbles],
    }


def _write_markdown(out: TextIO, source: str, tree: ChunkTree, head: bool = True) -> None:
    """The tree for reading: a heading per chunk, each leaf's text quoted line by line, its control characters
    (ESC, NUL, BEL...: they drove the terminal the page was read in) written as escapes (:func:`visible`)."""
    if head:
        out.write(f"# {visible(source)}\n\n")
    for c in tree:
        hashes = "#" * min(6, c.level + 1)
        out.write(f"{hashes} {c.id} · {c.meta.get('size', len(c.span))} {tree.unit} · {c.method}\n\n")
        if not c.children:
            body = visible(tree.text_of(c))
            out.write("".join(f"> {line}\n" for line in body.splitlines()) or ">\n")
            out.write("\n")


def _skip(e: LogichunkError, many: bool) -> None:
    """One input of many failed: say so and go on; the only input failed: the error is the answer."""
    if not many:
        raise e
    _err(f"skipped {e}")


def _write(out: TextIO, fmt: str, source: str, tree: ChunkTree, many: bool, docs: _JsonDocs,
           extra: dict[str, Any] | None = None) -> None:
    """One input's tree in ``fmt`` (``json``: one document of ``docs``); ``extra``: the keys its json/jsonl
    records carry (:meth:`_Decodings.extra`; default ``source`` alone)."""
    extra = extra or {"source": source}
    if fmt == "tree":
        _write_tree(out, source, tree, many)
    elif fmt == "jsonl":
        _write_jsonl(out, extra, tree)
    elif fmt == "markdown":
        _write_markdown(out, source, tree)
    else:
        docs.add(_tree_json(source, tree, extra))


def _dumps(value: Any, level: int) -> str:
    """``value`` as JSON indented by two spaces a level, as it reads nested ``level`` deep."""
    return json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + "  " * level)


class _JsonDocs:
    """``--format json`` written as it goes: one document, or a list of them for many inputs (the same
    text ``json.dump(docs, indent=2)`` writes); a text read in windows writes its chunks part by part."""

    def __init__(self, out: TextIO, many: bool) -> None:
        self.out, self.many, self.count = out, many, 0
        self.level = 1 if many else 0

    def _next(self) -> None:
        self.out.write((",\n" if self.count else "[\n" if self.many else "") + "  " * self.level)
        self.count += 1

    def add(self, doc: dict[str, Any]) -> None:
        self._next()
        self.out.write(_dumps(doc, self.level))

    def add_parts(self, head: dict[str, Any], parts: Iterator[StreamPart], tail: Callable[[], dict[str, Any]]) -> None:
        """A document whose ``chunks`` come part by part; ``tail()`` (its stats and bubbles) is read after
        the last. An error on the way closes the document with an ``error`` key, then goes on up."""
        self._next()
        pad = "  " * (self.level + 1)
        out = self.out
        out.write("{\n" + "".join(f"{pad}{json.dumps(k)}: {_dumps(v, self.level + 1)},\n" for k, v in head.items())
                  + f'{pad}"chunks": [')
        first = True
        rest: dict[str, Any] = {}
        try:
            for part in parts:
                for r in _with_bubbles(part.records(), part):
                    out.write(("\n" if first else ",\n") + pad + "  " + _dumps(r, self.level + 2))
                    first = False
        except LogichunkError as e:
            rest["error"] = str(e)
            raise
        finally:
            out.write(("]" if first else "\n" + pad + "]") + "".join(
                f",\n{pad}{json.dumps(k)}: {_dumps(v, self.level + 1)}" for k, v in (tail() | rest).items())
                + "\n" + "  " * self.level + "}")

    def close(self) -> None:
        if self.many:
            self.out.write("\n]\n" if self.count else "[]\n")
        elif self.count:
            self.out.write("\n")


# ----------------------------------------------------------------------------- verbs


class _Models:
    """The models a verb was asked for, resolved once, with a note to stderr saying which backend
    each is (users must know whether the real model or a fallback ran)."""

    def __init__(self, args: argparse.Namespace, need: tuple[str, ...]) -> None:
        self.embedder = self.llm = self.lm = None
        quiet = getattr(args, "quiet", False)
        if "embedder" in need or getattr(args, "embedder", None):
            from .models.registry import ModelFallbackWarning, resolve_embedder

            with warnings.catch_warnings():  # (said on the line below, as the CLI says every model it uses)
                warnings.simplefilter("ignore", ModelFallbackWarning)
                r = resolve_embedder(getattr(args, "embedder", None) or "auto")
            self.embedder = r.model
            if not quiet:
                _err(f"embedder: {r.description}")
        if getattr(args, "llm", None):
            from .models.registry import resolve_llm

            r2 = resolve_llm(args.llm)
            self.llm = r2.model
            if not quiet:
                _err(f"llm: {r2.description}")
        if "lm" in need or getattr(args, "lm", None):
            from .models.lm import load_lm

            spec = getattr(args, "lm", None) or "default"
            self.lm = load_lm(spec, dtype=getattr(args, "lm_dtype", None) or "auto",
                              backend=getattr(args, "lm_backend", None) or "auto",
                              device=getattr(args, "lm_device", None) or "cpu")
            if not quiet:
                note = "; ".join(n for n in (getattr(self.lm, "device_note", ""), getattr(self.lm, "fusion_note", ""))
                                 if n)
                _err(f"lm: {getattr(self.lm, 'model_id', spec)}" + (f" — {note}" if note else ""))

    def report_usage(self, quiet: bool) -> None:
        """One stderr line with the LLM's calls, tokens and cost, when it was called."""
        u = getattr(self.llm, "usage", None)
        if quiet or u is None or not u.calls:
            return
        _err(f"llm calls: {u.calls}, tokens: {u.total_tokens}" + (f", cost: {u.cost:.4f}" if u.cost else ""))


def _chunk_one(args: argparse.Namespace, text: str, source: str, models: _Models) -> ChunkTree:
    from .chunkers.dispatch import chunk_by

    return chunk_by(args.method, text, max_size=args.max_size, sizes=_sizes(args.sizes), levels=args.levels,
                    unit=args.unit, embedder=models.embedder, llm=models.llm, lm=models.lm, theta=args.theta or 0.0,
                    composite=not args.fast, selection=args.selection, settings=getattr(args, "settings", None),
                    source=source, tokenizer=getattr(args, "tokenizer", None) or None,
                    overlap=getattr(args, "overlap", 0) or 0)


def _ext(arg: str) -> tuple[str, ...]:
    """``--ext md,.TXT`` as the endings a folder's file names are matched with (lower case: ``.MD`` finds
    ``notes.md``, as ``.md`` finds ``NOTES.MD``); an empty item (``md,``) is a typo, said in one line."""
    items = [x.strip().lower() for x in arg.split(",")]
    if not all(x.strip(".") for x in items):
        raise InputError(f"--ext wants comma-separated file endings (md,txt), got {arg!r}")
    return tuple(x if x.startswith(".") else "." + x for x in items)


def cmd_chunk(args: argparse.Namespace) -> int:
    from .chunkers.dispatch import needs

    _chunk_defaults(args)
    models = _Models(args, _needs(args, needs(args.method)))
    suffixes = _ext(args.ext) if args.ext is not None else TEXT_SUFFIXES  # (`--ext ""`: an empty list, said)
    sources = list(_inputs(args.paths, suffixes, "chunk", args.quiet))
    if args.out:
        check_out_path(args.out, [s for s, _ in sources])
    if getattr(args, "bubbles", None):  # (bubbles are appended after the chunks: a bad path fails now, not then)
        check_out_path(args.bubbles, [s for s, _ in sources], "bubbles", "--bubbles")
    many = len(sources) > 1
    progress = _Progress(len(sources), not args.quiet)
    bubbles: list[Bubble] = []
    failures = 0
    overlap = getattr(args, "overlap", 0) or 0
    windows = _Windows(args.window, bool(overlap))
    decodings = _Decodings(args.encoding, args.quiet)

    def emit(source: str, tree: ChunkTree) -> None:
        bubbles.extend(tree.bubbles)
        _write(out, args.format, source, tree, many, docs, decodings.extra(source))

    # many small files through the model-free cascade share one pass (chunk_many: the same trees)
    shared = args.method == "logic-chain" and models.llm is None and models.lm is None and many \
        and not getattr(args, "tokenizer", None) and not overlap
    group: list[tuple[str, str]] = []
    group_chars = 0

    def flush() -> None:
        nonlocal group_chars
        if group:
            from .chunkers.dispatch import max_size_for
            from .chunkers.many import chunk_many

            trees = chunk_many([t for _, t in group], max_size=max_size_for(args.method, args.max_size),
                               sizes=_sizes(args.sizes),
                               levels=args.levels, unit=args.unit, composite=not args.fast,
                               selection=args.selection or "global", sources=[s for s, _ in group])
            for (source, _), tree in zip(group, trees, strict=True):
                emit(source, tree)
            group.clear()
            group_chars = 0

    def stream(source: str, pieces: Iterator[str]) -> None:
        """A text longer than ``windows.whole_up_to``: chunked window by window and written as it goes."""
        from .chunkers.stream import chunk_stream

        flush()  # the inputs' outputs stay in order
        windows.note(source, "chunked", "cuts", args.quiet)
        parts = chunk_stream(pieces, window=windows.size, chunker=lambda t: _chunk_one(args, t, source, models),
                             **({"overlap": overlap} if overlap else {}))
        _write_parts(out, args.format, source, parts, many, docs, bubbles, windows.size, decodings.extra(source))

    from .models._files import staged_file

    # --out: written beside the target and moved over it only when the run ends well
    target = staged_file(args.out) if args.out else contextlib.nullcontext(sys.stdout)
    try:
        with target as out:
            docs = _JsonDocs(out, many)
            for source, read in sources:
                progress.step(source)
                try:
                    text = _read_up_to(decodings.read(source, read), windows.whole_up_to)
                    if not isinstance(text, str):
                        stream(source, text)
                        continue
                    empty = _empty(text)
                    if empty:
                        if not many:  # the one input given is empty: an error (README: non-zero exit)
                            raise InputError(f"{source}: {empty}, no chunks")
                        _err(f"skipped {source}: {empty}, no chunks")  # (one of many: noted, no failure)
                        continue
                    if shared:
                        group.append((source, text))
                        group_chars += len(text)
                        if len(group) >= 512 or group_chars >= 1 << 22:
                            flush()
                        continue
                    tree = _chunk_one(args, text, source, models)
                except LogichunkError as e:
                    _skip(e, many)
                    failures += 1
                    continue
                emit(source, tree)
            flush()
            if args.format == "json":
                docs.close()
    finally:
        progress.close()
    _record_bubbles(args, bubbles)
    models.report_usage(args.quiet)
    return 1 if failures else 0


def _write_parts(out: TextIO, fmt: str, source: str, parts: Iterator[StreamPart], many: bool, docs: _JsonDocs,
                 bubbles: list[Bubble], window: int, extra: dict[str, Any] | None = None) -> None:
    """A text read in windows, in ``fmt``, part by part as :func:`_write` writes a whole tree (``extra`` as
    there); its bubbles (spans in the whole text) are added to ``bubbles``."""
    extra = extra or {"source": source}
    from .chunkers.stream import merge_stats

    stats: dict[str, Any] = {"window": window, "windows": 0}
    unit = "chars"
    kept: list[Bubble] = []

    def each() -> Iterator[StreamPart]:
        nonlocal unit
        for k, part in enumerate(parts):
            unit = part.tree.unit
            merge_stats(stats, {key: v for key, v in part.tree.stats.items() if key != "sentences"})
            stats["windows"] += 1
            kept.extend(part.bubbles)
            if fmt == "tree":
                _write_tree(out, source, part.tree, many and k == 0)
            elif fmt == "markdown":
                _write_markdown(out, source, part.tree, head=k == 0)
            elif fmt == "jsonl":
                lines = _with_bubbles(part.json_lines(extra), part)
                lines.append("")
                out.write("\n".join(lines))
            yield part

    try:
        if fmt == "json":
            docs.add_parts(extra, each(), lambda: {"unit": unit, "stats": stats,
                                                                 "bubbles": [b.to_dict() for b in kept]})
        else:
            for _ in each():
                pass
    finally:
        bubbles.extend(kept)


def cmd_segment(args: argparse.Namespace) -> int:
    """Topic segmentation: each file's topics, with no size limit (:func:`logichunk.segment`)."""
    from .chunkers.stream import chunk_stream
    from .chunkers.topics import segment

    if args.topics and args.window:
        raise InputError("--topics counts the whole text's topics: it cannot be read in windows (--window 0)")
    models = _Models(args, ())
    sources = list(_inputs(args.paths, TEXT_SUFFIXES, "segment", getattr(args, "quiet", False)))
    many = len(sources) > 1
    docs = _JsonDocs(sys.stdout, many)
    failures = 0
    windows = _Windows(args.window, bool(args.topics))
    decodings = _Decodings(args.encoding, getattr(args, "quiet", False))

    def topics_of(text: str) -> ChunkTree:
        return segment(text, units=args.units, embedder=models.embedder, topics=args.topics)

    for source, read in sources:
        try:
            text = _read_up_to(decodings.read(source, read), windows.whole_up_to)
            if not isinstance(text, str):
                windows.note(source, "divided", "topics", args.quiet)
                _write_parts(sys.stdout, args.format, source, chunk_stream(text, window=windows.size,
                                                                           chunker=topics_of),
                             many, docs, [], windows.size, decodings.extra(source))
                continue
            empty = _empty(text)
            if empty:
                if not many:  # the one input given is empty: an error; one of many is noted, as chunk does
                    raise InputError(f"{source}: {empty}, no topics")
                _err(f"skipped {source}: {empty}, no topics")
                continue
            tree = topics_of(text)
        except LogichunkError as e:
            _skip(e, many)
            failures += 1
            continue
        got = tree.stats.get("topics", 0)
        if args.topics and got < args.topics and not getattr(args, "quiet", False):  # (else fewer said nowhere)
            _err(f"note: {source}: {got} topic(s), not the {args.topics} asked: topics part only at headings and "
                 "between paragraphs (or lines, where no blank line parts any), and its layout leaves "
                 f"{tree.stats.get('open_gaps', got - 1)} such gap(s)")
        _write(sys.stdout, args.format, source, tree, many, docs, decodings.extra(source))
    if args.format == "json":
        docs.close()
    return 1 if failures else 0


def _record_bubbles(args: argparse.Namespace, bubbles: list[Bubble]) -> None:
    """Say the run's bubbles on stderr, and append them to a log only where one was asked for: ``--bubbles
    FILE``, or ``OUT.bubbles.jsonl`` beside ``--out``. The output holds them already (``json``: its
    ``bubbles``; json and jsonl: ``"bubble"`` in the records of the chunks each is about; validate's problems),
    so a scripted run writes no file of its own into the working folder. Each bubble is logged once: a rerun of the
    same input adds no line. A log asked for (``--bubbles FILE``) is there after a run without bubbles too, as it
    was or empty, so ``logichunk bubbles FILE`` lists none (it said "no such file": a failure, for a clean run)."""
    if not bubbles:
        if getattr(args, "bubbles", None):
            with open(args.bubbles, "a", encoding="utf-8"):
                pass
            if not args.quiet:
                _err(f"0 bubble(s): nothing forced, nothing new in {args.bubbles}")
        return
    target = args.bubbles or (f"{args.out}.bubbles.jsonl" if getattr(args, "out", None) else None)
    kinds = ", ".join(f"{k} {n}" for k, n in Counter(b.category for b in bubbles).items())
    if target is None:
        if not args.quiet:
            _err(f"{len(bubbles)} bubble(s) ({kinds}); --bubbles FILE keeps them for `logichunk bubbles FILE`")
        return
    lines = dict.fromkeys(json.dumps(b.to_dict(), ensure_ascii=False) for b in bubbles)
    path = Path(target)
    ends_line = True
    if path.exists():
        with open(path, "rb") as f:
            held = {line.rstrip(b"\r\n") for line in f}
            if f.tell():
                f.seek(-1, os.SEEK_END)
                ends_line = f.read(1) == b"\n"
        new = [line for line in lines if line.encode("utf-8") not in held]
    else:
        new = list(lines)
    if new:
        with open(path, "a", encoding="utf-8") as f:
            f.write(("" if ends_line else "\n") + "".join(line + "\n" for line in new))
    if not args.quiet:
        logged = "all new" if len(new) == len(bubbles) else f"{len(new)} new" if new else "all there already"
        _err(f"{len(bubbles)} bubble(s) ({kinds}) recorded in {target} ({logged}; list them: logichunk bubbles "
             f"{target})")



def _one_text(args: argparse.Namespace) -> tuple[str, str, dict[str, str]]:
    """``validate`` / ``compensate``'s one input: its name, its text, and the keys its json/jsonl records
    carry (:meth:`_Decodings.extra`: ``source``, and ``decoded`` as ``chunk`` gives it)."""
    sources = list(_inputs([args.path], TEXT_SUFFIXES))
    if len(sources) != 1:
        raise LogichunkError(f"{args.path}: give one file (or - for stdin), not a folder of {len(sources)}")
    source, read = sources[0]
    decodings = _Decodings(args.encoding, getattr(args, "quiet", False))
    text = "".join(decodings.read(source, read))
    empty = _empty(text)
    if empty:
        raise InputError(f"{source}: {empty}, nothing to do")
    return source, text, decodings.extra(source)


def cmd_validate(args: argparse.Namespace) -> int:
    """Chunk, then ask the LLM whether each leaf is logically complete; problems become bubbles."""
    from .chunkers.dispatch import needs
    from .chunkers.validate import validate

    if not args.llm:
        raise LogichunkError("validate needs an LLM: --llm openai:http://HOST:PORT/v1#MODEL, or --llm local")
    _chunk_defaults(args, frozenset({"llm"}))  # (the verb's own LLM, whatever the method)
    models = _Models(args, _needs(args, needs(args.method)))
    source, text, extra = _one_text(args)
    tree = _chunk_one(args, text, source, models)
    jsonl = args.format == "jsonl"
    progress = _Progress(len(tree.leaves()), not args.quiet)  # one LLM call per chunk: minutes on a local LLM

    def judged(c: Any, b: Bubble | None) -> None:
        if jsonl:  # one record per chunk judged, as it is judged: a run that finds nothing still says so
            complete = True if b is None else (False if b.category == "incomplete" else None)  # None: unreadable
            print(json.dumps({"type": "chunk", "chunk_id": c.id, "span": [c.start, c.end], "level": c.level,
                              "complete": complete, "problem": None if b is None else b.to_dict(), **extra},
                             ensure_ascii=False), flush=True)
        progress.step(c.id)

    try:
        problems = validate(tree, models.llm, source=source, on_judged=judged)
    finally:
        progress.close()
    if jsonl:
        print(json.dumps({"type": "summary", **extra, "chunks": len(tree.leaves()),
                          "problems": len(problems)}, ensure_ascii=False))
    else:
        for b in problems:
            ctx = b.context
            print(f"{b.priority:<7} {ctx.get('chunk_id', '?'):<10} {one_line(b.content, 60)}  — {ctx.get('reason', '')}")
        print(f"{len(problems)} problem(s) in {len(tree.leaves())} chunk(s)")
    _record_bubbles(args, [*tree.bubbles, *problems])  # the chunker's own (forced splits) as well
    models.report_usage(args.quiet)
    return 0


def cmd_compensate(args: argparse.Namespace) -> int:
    """Chunk, then add rewritten (missing-aware) or summary metadata to each leaf; spans unchanged."""
    from .chunkers.compensate import compensate
    from .chunkers.dispatch import needs

    if not args.llm:
        raise LogichunkError("compensate needs an LLM: --llm openai:http://HOST:PORT/v1#MODEL, or --llm local")
    _chunk_defaults(args, frozenset({"llm"}))  # (the verb's own LLM, whatever the method)
    models = _Models(args, _needs(args, needs(args.method)))
    source, text, extra = _one_text(args)
    tree = compensate(_chunk_one(args, text, source, models), models.llm, args.mode, source=source)
    _record_bubbles(args, list(tree.bubbles))
    if args.format == "json":
        json.dump(_tree_json(source, tree, extra), sys.stdout, ensure_ascii=False, indent=2)
        print()
    else:
        for c in tree.leaves():
            r = {"id": c.id, "start": c.start, "end": c.end, "text": tree.text_of(c), **extra}
            for k in ("rewritten", "missing", "summary", "supplement"):
                if k in c.meta:
                    r[k] = c.meta[k]
            print(json.dumps(r, ensure_ascii=False))
    models.report_usage(args.quiet)
    return 0


def cmd_bubbles(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if not path.exists():
        if args.file == DEFAULT_BUBBLES:
            _err(f"no bubbles log here ({DEFAULT_BUBBLES}): `logichunk chunk ... --bubbles FILE` keeps one, "
                 "`logichunk bubbles FILE` lists it")
            return 0
        raise LogichunkError(f"{args.file}: no such file")
    from .text.decode import read_path, speaking_as

    with speaking_as(None):  # (a log this tool writes in UTF-8: no --encoding to name)
        lines = read_path(path).splitlines()
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise LogichunkError(f"{args.file}:{n}: not a JSON line") from None
        if not isinstance(row, dict) or not isinstance(row.get("context", {}), dict):
            raise LogichunkError(f"{args.file}:{n}: not a bubble (a JSON object with a context object)")
        rows.append(row)
    if args.priority:
        rows = [r for r in rows if r.get("priority") == args.priority]
    if args.format == "jsonl":
        for r in rows:
            print(json.dumps(r, ensure_ascii=False))
        return 0
    for r in rows:
        ctx = r.get("context", {})
        span = ctx.get("span", ["?", "?"])
        print(f"{r.get('priority', '?'):<7} {r.get('category', '?'):<14} {ctx.get('source', '?')}"
              f"[{span[0]}:{span[1]}] break={ctx.get('break', '?')}  {one_line(r.get('content', ''), 50)}")
    print(f"{len(rows)} bubble(s)")
    return 0


def cmd_version(args: argparse.Namespace) -> int:
    info = {"logichunk": __version__, "python": sys.version.split()[0]}
    if args.format == "jsonl":
        print(json.dumps(info))
    else:
        for k, v in info.items():
            print(f"{k} {v}")
    return 0


# ----------------------------------------------------------------------------- parser


def _chunk_options(c: argparse.ArgumentParser) -> None:
    from .chunkers.dispatch import METHODS

    c.add_argument("--method", choices=list(METHODS), default="logic-chain",
                   help="chunking method (default logic-chain, model-free); " + "; ".join(
                       f"{k}: {v[0]}" for k, v in METHODS.items()))
    c.add_argument("--max-size", type=int, default=None,
                   help="limit of top-level chunks (default 1000; for parent-child parents the max_parent_size setting, 1500)")
    c.add_argument("--sizes",
                   help="limits per level, top first, e.g. 1000,500,200: their count is the depth (a --max-size "
                        "or another --levels given too is ignored, said in a note)")
    c.add_argument("--levels", type=int, default=None,
                   help="depth of the tree when --sizes is not given (default 3; with --sizes, a note says it is "
                        "ignored unless it is their count)")
    c.add_argument("--unit", choices=["chars", "bytes", "tokens"], default=None,
                   help="unit of the sizes (default: setting unit, chars)")
    c.add_argument("--tokenizer", default=None,
                   help="exact token sizes (implies --unit tokens): a tiktoken encoding (cl100k_base, o200k_base), "
                        "a tokenizer.json or Hugging Face folder, a hub id, or 'embedder' (the --embedder's own); "
                        "default: setting tokenizer, else the offline estimate")
    c.add_argument("--overlap", type=int, default=0, metavar="N",
                   help="context window per chunk: overlap_start/overlap_end widen each chunk by at most N units a "
                        "side (json/jsonl; the chunks still tile the text)")
    c.add_argument("--config", help="TOML settings file (also $LOGICHUNK_CONFIG): its unit and chunk_sizes are the "
                                    "defaults of --unit and --sizes for logic-chain, cliff and fused")
    c.add_argument("--embedder", help="embedder for cliff / parent-child: auto (default), hash, e5, st:PATH, "
                                      "openai:URL#MODEL; minilm#cuda or st:PATH#cuda runs one on a GPU")
    c.add_argument("--llm", help="chat LLM for tier 2 / validation / compensation: openai:URL#MODEL, local, local:PATH")
    c.add_argument("--lm", help="causal LM for ppl / msp (and tier-3 perplexity): default (packaged 0.5B), "
                                "qwen2.5-coder-1.5b-instruct (packaged, extra [lm-large]), a local folder, a hub "
                                "id, a .gguf file, or an http(s) completions endpoint")
    c.add_argument("--lm-backend", choices=["auto", "transformers", "llama.cpp"], default="auto",
                   help="what runs a .gguf file: auto = transformers (converted to float32 once, then cached), "
                        "or llama.cpp (extra [llamacpp]) when that conversion would not fit in memory")
    c.add_argument("--lm-dtype", choices=["auto", "float32", "bfloat16", "float16", "int8"], default="auto",
                   help="the local LM's arithmetic: auto (bf16 on CUDA or with AMX tiles; else int8 for the packaged "
                        "LM on a CPU with VNNI; else float32, and float32 for a folder of yours)")
    c.add_argument("--lm-device", default="cpu", metavar="DEVICE",
                   help="where the local LM runs: cpu (default), cuda, cuda:N, or auto (cuda when torch sees one, "
                        "else cpu; the lm line says which). A CUDA device that is not there is an error, never a "
                        "silent run on the CPU")
    c.add_argument("--theta", type=float, default=None, help="ppl: minimum drop θ of a perplexity minimum")
    c.add_argument("--fast", action="store_true",
                   help="logic-chain/cliff: skip tier 3 (the composite signal); runs entropy cannot split are cut "
                        "at their strongest entropy gaps — up to 1.3x faster on English prose, no faster on Chinese")
    c.add_argument("--selection", choices=["global", "local", "paper"], default=None,
                   help="logic-chain/cliff/fused: how each level's cuts are chosen — global (default: one optimal "
                        "choice for the whole text, structure first) or local (the earlier rule: score peaks merged "
                        "weakest first); ppl/msp: paper (Meta-Chunking's per-point rules, then the dynamic merge) "
                        "or global (the LM's signal as rewards of the same global choice)")
    c.add_argument("--bubbles", metavar="FILE",
                   help="keep a log of the bubbles (forced splits; validate's problems) in this JSONL file, each "
                        "bubble once; default: none kept (said on stderr; json output lists them), or beside --out")
    c.add_argument("--quiet", action="store_true", help="no progress bar or notes on stderr")
    encoding_option(c)


CORE_VERBS = frozenset({"chunk", "segment", "validate", "compensate", "bubbles", "version"})
EXTENSIONS = ("logichunk.store.cli", "logichunk.eval.cli", "logichunk.service.cli", "logichunk.retrieve.graph_cli",
              "logichunk.memory.cli", "logichunk.integrations.mcp_cli")


class _Parser(argparse.ArgumentParser):
    """argparse with a bad argument said in one line (what and where to read more), not the verb's whole
    usage block over it: bad input is one line, here as everywhere (its sub-parsers are of this class too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(extensions: bool = True) -> argparse.ArgumentParser:
    """The whole parser; ``extensions=False`` leaves out the verbs of the store, eval, service, graph
    and memory packages, whose imports cost ~0.1-0.2 s that a plain ``chunk`` should not pay."""
    p = _Parser(prog="logichunk", description="Cut text where its logic breaks.")
    p.add_argument("--version", action="version", version=f"logichunk {__version__}")
    sub = p.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True

    c = sub.add_parser("chunk", help="chunk files, folders or stdin into a tree of dotted ids")
    c.add_argument("paths", nargs="+", help="files, folders (recursive) or - for stdin")
    _chunk_options(c)
    c.add_argument("--format", choices=["tree", "jsonl", "json", "markdown"], default="tree",
                   help="tree (default: ids, sizes, first words), jsonl or json (each chunk's exact text), markdown "
                        "(for reading: each leaf's text quoted, control characters such as ESC shown as \\x1b)")
    c.add_argument("--out", help="write here instead of stdout (bubbles go to OUT.bubbles.jsonl)")
    c.add_argument("--ext", help="file endings to read from folders, comma-separated (default: "
                                 f"{' '.join(TEXT_SUFFIXES)}, and those compressed: the endings ingest reads too)")
    _window_option(c, "read a text in windows of CHARS characters, each window's cuts decided whole, in memory "
                      "bounded by the window (level-1 ids run on through the text; offsets are the whole text's)")
    c.set_defaults(func=cmd_chunk)

    sg = sub.add_parser("segment", help="topic segmentation: where the subject changes, with no size limit")
    sg.add_argument("paths", nargs="+", help="files, folders (recursive) or - for stdin")
    sg.add_argument("--units", choices=["sentences", "lines"], default="sentences",
                    help="what a topic is made of: sentences (default) or lines (one turn or transcript line each)")
    sg.add_argument("--embedder", help="measure cohesion with an embedder's sentence vectors (hash, e5, st:PATH, "
                                       "openai:URL#MODEL); default: the document's own words, no model")
    sg.add_argument("--topics", type=int, default=None, metavar="N",
                    help="as many topics as N (the best cuts for that many; headings still open topics) instead "
                         "of the count the text's cohesion gives; fewer where the layout leaves fewer gaps to cut "
                         "(topics part only between paragraphs, or lines where no blank line parts any), with a note")
    sg.add_argument("--format", choices=["tree", "jsonl", "json"], default="tree")
    _window_option(sg, "divide a text in windows of CHARS characters, each window's topics decided whole, in "
                       "memory bounded by the window")
    sg.add_argument("--quiet", action="store_true", help="no notes on stderr")
    encoding_option(sg)
    sg.set_defaults(func=cmd_segment)

    va = sub.add_parser("validate", help="chunk a text, then ask an LLM whether each chunk is logically complete")
    va.add_argument("path", help="a file, or - for stdin")
    _chunk_options(va)
    va.add_argument("--format", choices=["table", "jsonl"], default="table")
    va.set_defaults(func=cmd_validate)

    co = sub.add_parser("compensate", help="chunk a text, then add LLM rewrites or summaries as chunk metadata")
    co.add_argument("path", help="a file, or - for stdin")
    _chunk_options(co)
    co.add_argument("--mode", choices=["rewrite", "summary"], default="rewrite",
                    help="rewrite: missing-aware rewrite (3 stages); summary: global + local summary (2 stages)")
    co.add_argument("--format", choices=["jsonl", "json"], default="jsonl")
    co.set_defaults(func=cmd_compensate)

    b = sub.add_parser("bubbles", help="list recorded bubbles (problems for an LLM reviewer)")
    b.add_argument("file", nargs="?", default=DEFAULT_BUBBLES,
                   help=f"a log written by --bubbles FILE (default {DEFAULT_BUBBLES}, an older logichunk's)")
    b.add_argument("--priority", choices=["high", "medium", "low"])
    b.add_argument("--format", choices=["table", "jsonl"], default="table")
    b.set_defaults(func=cmd_bubbles)

    v = sub.add_parser("version", help="print versions")
    v.add_argument("--format", choices=["text", "jsonl"], default="text")
    v.set_defaults(func=cmd_version)

    for module in EXTENSIONS if extensions else ():
        try:
            mod = __import__(module, fromlist=["add_parser"])
        except ImportError:
            continue
        mod.add_parser(sub)
    return p


def _window_option(p: argparse.ArgumentParser, what: str) -> None:
    from .chunkers.stream import DEFAULT_WINDOW, WHOLE_UP_TO

    p.add_argument("--window", type=_window_arg, default=None, metavar="CHARS",
                   help=f"{what}; 0: always whole; default: whole up to {WHOLE_UP_TO:,} characters, beyond that "
                        f"in windows of {DEFAULT_WINDOW:,}, with a note")


def _window_arg(value: str) -> int:
    try:
        n = int(value.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of characters: {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError("a window is 0 (whole) or a positive number of characters")
    return n


def _check_arguments(args: argparse.Namespace) -> None:
    """Text given on the command line must be valid UTF-8: undecodable bytes reach Python as lone
    surrogates, which no file, database or JSON line can hold."""
    for name, value in vars(args).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in v):
                raise InputError(f"--{name.replace('_', '-')}: not valid UTF-8 ({v.encode('utf-8', 'surrogateescape')!r})")


def _warning_shower(shown: Callable[..., None]) -> Callable[..., None]:
    """``warnings.showwarning`` for the command: a model's fallback (the library's warning) said in one line as the
    CLI says its notes, not as a Python warning with a source line; any other warning as ``shown`` shows it."""

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: TextIO | None = None,
             line: str | None = None) -> None:
        from .models.registry import ModelFallbackWarning

        if issubclass(category, ModelFallbackWarning):
            _err(f"note: {message}")
        else:
            shown(message, category, filename, lineno, file, line)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verb = next((a for a in argv if not a.startswith("-")), None)  # global options take no value
    parser = build_parser(extensions=verb not in CORE_VERBS)
    args = parser.parse_args(argv)
    from .text.decode import speaking_as

    try:
        _check_arguments(args)
        # (a file that is not UTF-8 is refused naming --encoding NAME, not the Python API's ``encoding=``)
        with warnings.catch_warnings(), speaking_as("cli"):
            warnings.showwarning = _warning_shower(warnings.showwarning)
            return int(args.func(args) or 0)
    except LogichunkError as e:
        _err(f"error: {e}")
        return 2
    except BrokenPipeError:
        # `logichunk chunk big.txt | head`: the reader left; that is not an error
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except OSError as e:
        _err(f"error: {e.strerror or e}{': ' + str(e.filename) if e.filename else ''}")
        return 2


if __name__ == "__main__":
    sys.exit(main())

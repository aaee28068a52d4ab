"""``logichunk eval``: benchmarks on the public sets, every method and the peers side by side.

    logichunk eval segmentation [--data PATH...] [--methods all|LIST] [--limit N] [--oracle]
    logichunk eval chunking     [--data STEM...] [--methods ...] [--size 200] [--budget 5] [--embedder hash]
    logichunk eval retrieval    [--data STEM...] [--modes basic] [--methods entropy] [--k 5]
    logichunk eval report       [--out DIR] [--results FILE...]
    logichunk eval methods      (what is available here, and why not)

Rows go to stdout (a table, or JSON lines with ``--json``) and are merged into ``OUT/results.jsonl``
(``--out``, default ``eval-report``); ``report`` turns that file into markdown and PNG plots. In
segmentation and chunking every row is compared with a reference method (``--against``; default
``global``) item by item: the difference, its 95 % interval by a paired bootstrap (:mod:`.paired`),
the items won and lost.

LM methods (``ppl``, ``msp``, ``memory-lm``): the causal LM is ``$LOGICHUNK_LM`` (a local folder or a
completions URL; default: the packaged model) in ``$LOGICHUNK_LM_DTYPE`` (``auto``, ``int8``,
``float32``, ``bfloat16``) on ``$LOGICHUNK_LM_DEVICE`` (``cpu``, the default; ``cuda``, ``cuda:N``, ``auto``).

Missing data: a path named with ``--data`` that does not exist is an error (exit 2, one line);
with no ``--data`` and no ``../shared/data`` folder (or ``$LOGICHUNK_DATA``), the verb prints one
note and exits 0, so a machine without the benchmark data skips instead of failing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any

from ..cli_args import int_at_least
from ..errors import LogichunkError
from ..progress import Progress

DEFAULT_OUT = "eval-report"


def _note(msg: str) -> None:
    print(f"logichunk eval: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- shared pieces


class _FallbackEmbedder:
    """Used only when ``logichunk.models`` cannot be imported: hashed, log-scaled counts of words
    and CJK character bigrams (no IDF: an embedder has no corpus to fit), L2-normalised."""

    model_id = "eval-fallback-tf-hash-512"
    dim = 512

    def embed(self, texts, *, kind: str = "passage"):
        import re
        import zlib

        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            feats = re.findall(r"[^\W\d_]+|\d+", t.lower())
            cjk = re.findall(r"[\u3400-\u9fff]", t)
            feats += [a + b for a, b in zip(cjk, cjk[1:], strict=False)]
            for f in feats:
                h = zlib.crc32(f.encode("utf-8"))
                out[i, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        out = np.sign(out) * np.log1p(np.abs(out))
        n = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(n, 1e-12)


def _embedder(spec: str) -> tuple[Any, str]:
    try:
        from ..models import resolve_embedder
    except ImportError as e:
        _note(f"logichunk.models unavailable ({e}); using the fallback hashed-TF embedder")
        return _FallbackEmbedder(), "fallback-tf"
    r = resolve_embedder(spec)
    if getattr(r, "note", ""):
        _note(str(r.note))
    return r.model, spec


def _settings(args: argparse.Namespace, need_embedder: bool = True):
    from .methods import Settings

    emb, name = _embedder(args.embedder) if need_embedder else (None, args.embedder)
    from ..text.tokens import measure_for

    unit = measure_for(args.unit, getattr(args, "tokenizer", None), embedder=emb)
    return Settings(size=args.size, unit=unit, embedder=emb, embedder_name=name,
                    embed_context=bool(getattr(args, "embed_context", False)),
                    calibration=getattr(args, "calibration", None))


def _runners(specs, settings) -> list[tuple[Any, Any]]:
    from .methods import Unavailable, build

    out = []
    for spec in specs:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append((spec, build(spec, settings)))
        except Unavailable as e:
            _note(f"skipped {e}")
    return out


class _Printer:
    """Rows to stdout as they come: JSON lines, or an aligned table."""

    def __init__(self, as_json: bool, cols: list[tuple[str, str]], names: Sequence[str] = (),
                 paired: tuple[str, str] | None = None) -> None:
        self.as_json = as_json
        self.cols = cols
        self.width = max([28, *map(len, names)])  # the data sets' names whole, not cut
        self.header_done = False
        self.paired = paired  # (metric, reference method): a last column, the row's lead and its interval

    def row(self, r: dict[str, Any]) -> None:
        if self.as_json:
            print(json.dumps(r, ensure_ascii=False), flush=True)
            return
        if not self.header_done:
            extra = f"  {self.paired[0]} vs {self.paired[1]} [95% CI]" if self.paired else ""
            print(f"{'dataset':<{self.width}} {'method':<24} {'n':>5} " + " ".join(f"{h:>9}" for _, h in self.cols)
                  + f" {'seconds':>8}" + extra)
            self.header_done = True
        cells = []
        for k, _ in self.cols:
            v = r.get(k)
            cells.append(f"{v:>9.3f}" if isinstance(v, float) else f"{'' if v is None else v!s:>9}")
        name = r["method"] + ("†" if r.get("peer") else "")
        print(f"{r['dataset']:<{self.width}} {name:<24} {r['n']:>5} " + " ".join(cells) + f" {r['seconds']:>8.1f}"
              + self._paired_cell(r), flush=True)

    def _paired_cell(self, r: dict[str, Any]) -> str:
        if not self.paired:
            return ""
        m = self.paired[0]
        d, ci = r.get(f"{m}_diff"), r.get(f"{m}_ci95")
        if d is None or ci is None:
            return "  (reference)" if r.get("method") == self.paired[1] else ""
        return f"  {d:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}] {r[f'{m}_wins']}/{r[f'{m}_losses']}"


def _save(args: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    """Merge rows into OUT/results.jsonl as they come (a long run keeps what it finished)."""
    if args.no_save or not rows:
        return
    from .report import save_rows

    save_rows(args.out, rows)


def _done(args: argparse.Namespace, task: str, count: int, seconds: float) -> None:
    where = "" if args.no_save else (f"; saved in {args.out}/results.jsonl (report: logichunk eval report "
                                     f"--out {args.out})")
    _note(f"{task}: {count} row(s) in {seconds:.0f} s{where}")


def _budget(arg: str, size: int) -> int:
    """``5`` = five chunks of the target size; ``1000t`` (or ``1000tokens``) = 1000 units of ``--unit``."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(t|tok|tokens)?\s*", arg.lower())
    if not m:
        raise LogichunkError(f"--budget wants a number of chunks (5) or of tokens (1000t), got {arg!r}")
    b = int(float(m.group(1))) if m.group(2) else round(float(m.group(1)) * size)
    if b < 1:
        raise LogichunkError("--budget must be positive")
    return b


def _reference(args: argparse.Namespace, runners: list[tuple[Any, Any]]) -> tuple[str | None, list[tuple[Any, Any]]]:
    """The method every other row is compared with (``--against``; default ``global``, the default
    chunker, when it runs, else the first method) and the runners with it first, so each row can
    carry its comparison as it is printed. ``--against off``: no comparison."""
    names = [spec.name for spec, _ in runners]
    want = getattr(args, "against", None)
    if want not in (None, "off") and want not in names:  # (with one method too: a typo is said, not ignored)
        raise LogichunkError(f"--against {want}: not among the methods that run here ({', '.join(names)})")
    if want == "off" or len(runners) < 2:
        return None, runners
    if want is None:
        want = "global" if "global" in names else names[0]
    first = [r for r in runners if r[0].name == want]
    return want, first + [r for r in runners if r[0].name != want]


def _compare(row: dict[str, Any], items: dict[str, Any], ref: str | None, ref_items: dict[str, Any] | None,
             metrics: Sequence[tuple[str, bool]]) -> None:
    """Add to ``row`` its paired comparison with the reference's per-item scores
    (:func:`logichunk.eval.paired.paired`) for each ``(metric, higher_is_better)``."""
    if ref is None or ref_items is None or row["method"] == ref:
        return
    from .paired import paired, paired_keys

    row["against"] = ref
    for metric, higher in metrics:
        a, b = items.get(metric), ref_items.get(metric)
        ok = a is not None and b is not None and len(a) == len(b)
        row.update(paired_keys(metric, paired(a, b, higher_is_better=higher) if ok else None))


def _jsonl(args: argparse.Namespace) -> bool:
    """``--json`` and ``--format jsonl`` mean the same: one JSON object per line."""
    return bool(args.json or args.format == "jsonl")




# --------------------------------------------------------------------------- verbs


def cmd_segmentation(args: argparse.Namespace) -> int:
    from ..boundaries import RELATIVE_DEPTH
    from .methods import EMBEDS, select_methods
    from .readers import end_to_end, read_segmentation
    from .report import save_curve
    from .segmentation import run_segmentation

    specs = select_methods(args.methods, "segmentation")  # (a typo is said before any data is looked for)
    sets = _data_sets(args, "segmentation")
    if not sets:
        return 0
    need = any(s.name in EMBEDS or s.name.startswith("memory") for s in specs)
    settings = _settings(args, need)
    runners = _runners(specs, settings)
    if not runners:
        raise LogichunkError("no method could run here (see the notes above)")
    ref, runners = _reference(args, runners)
    # documents laid end to end are data sets of their own names: a saved report keeps them apart
    suffix = f"@end-to-end-{args.end_to_end}" if args.end_to_end > 1 else ""
    printer = _Printer(_jsonl(args), [("pk", "Pk"), ("windowdiff", "WD"), ("f1", "F1"), ("hyp_per_doc", "cuts/doc"),
                                      ("gold_per_doc", "gold/doc")], [ds.label + suffix for ds in sets],
                       paired=("pk", ref) if ref else None)
    all_rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for ds in sets:
        skip = getattr(args, "skip", 0) or 0
        docs = read_segmentation(ds.path, None if args.limit is None else args.limit + skip)[skip:]
        if args.end_to_end > 1:
            docs = end_to_end(docs, args.end_to_end)
        name = ds.label + suffix
        ref_items = None
        for spec, runner in runners:
            bar = Progress(len(docs), True)  # a terminal only: the memory methods take minutes per set
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    out = run_segmentation(docs, spec.name, runner, peer=spec.peer, dataset=name,
                                           oracle=args.oracle, method_is_oracle=spec.oracle,
                                           progress=lambda _i, b=bar, label=f"{name} {spec.name}": b.step(label),
                                           relative=None if args.count_rule == "texttiling" else RELATIVE_DEPTH)
                finally:
                    bar.close()
            for n in out.notes:
                _note(n)
            if spec.name == ref:
                ref_items = out.per_doc
            _compare(out.rows[0], out.per_doc, ref, ref_items, (("pk", False), ("windowdiff", False)))
            for r in out.rows:
                memory = spec.name.startswith("memory")
                r["embedder"] = settings.embedder_name if spec.name in EMBEDS or memory else None
                if memory:
                    r["calibration"] = args.calibration
                if skip:
                    r["skip"] = skip
                if args.end_to_end > 1:
                    r["end_to_end"] = args.end_to_end
                printer.row(r)
            all_rows.extend(out.rows)
            if out.curve is not None and not args.no_save:
                save_curve(args.out, out.curve)
            _save(args, out.rows)
    _done(args, "segmentation", len(all_rows), time.perf_counter() - t0)
    return 0


def _data_sets(args: argparse.Namespace, task: str):
    """The data sets a run reads; none (no ``--data``, and no default folder) is a note, and the run stops with
    exit status 0 (the methods and modes asked for were checked first: a typo is an error either way)."""
    from .readers import resolve

    sets, note = resolve(args.data, task)
    if note:
        _note(note)
    return sets


def cmd_chunking(args: argparse.Namespace) -> int:
    from .chunking import Layout, embed, run_chunking
    from .methods import select_methods
    from .readers import read_corpus

    specs = select_methods(args.methods, "chunking")
    sets = _data_sets(args, "chunking")
    if not sets:
        return 0
    settings = _settings(args)
    budget = _budget(args.budget, args.size)
    runners = _runners(specs, settings)
    if not runners:
        raise LogichunkError("no method could run here (see the notes above)")
    ref, runners = _reference(args, runners)
    printer = _Printer(_jsonl(args), [("recall", "recall"), ("precision", "prec"), ("iou", "IoU"),
                                      ("evidence_recall_at_k", "evid.R"), ("recall_at_k", "docR"), ("mrr", "MRR"),
                                      ("chunks", "chunks"), ("mean_tokens", "tok/chunk")], [ds.label for ds in sets],
                       paired=("recall", ref) if ref else None)
    t0 = time.perf_counter()
    count = 0
    for ds in sets:
        corpus = read_corpus(ds.path, args.limit)
        name = ds.label
        layout = Layout.of(corpus, settings.unit)
        qv = embed(settings.embedder, [q.question for q in corpus.queries], "query")
        ref_items = None
        for spec, runner in runners:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row, notes, items = run_chunking(corpus, spec.name, runner, settings, peer=spec.peer, dataset=name,
                                                 budget=budget, query_vecs=qv, layout=layout)
            if spec.name == ref:
                ref_items = items
            _compare(row, items, ref, ref_items, (("recall", True), ("iou", True)))
            count += _emit(args, printer, row, notes)
    _done(args, "chunking", count, time.perf_counter() - t0)
    return 0


def _emit(args: argparse.Namespace, printer: _Printer, row: dict[str, Any], notes: list[str]) -> int:
    """Notes first, then the row on screen and in the results file, as it comes (a long run can be
    stopped without losing what is done). Returns 1: one row more."""
    for n in notes:
        _note(n)
    printer.row(row)
    _save(args, [row])
    return 1


def cmd_retrieval(args: argparse.Namespace) -> int:
    from . import store_modes  # noqa: F401 - registers the store-backed modes (graph-* too)
    from .chunking import MODES, run_retrieval
    from .methods import select_methods
    from .readers import read_corpus

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:  # (a typo is said in one line, not run around: every mode is registered by now)
        raise LogichunkError(f"unknown retrieval mode(s) {', '.join(map(repr, unknown)) or repr(args.modes)} "
                             f"(known: {', '.join(MODES)})")
    ready = modes
    specs = select_methods(args.methods, "chunking")
    sets = _data_sets(args, "retrieval")
    if not sets:
        return 0
    settings = _settings(args)
    runners = _runners(specs, settings)
    if not runners:
        raise LogichunkError("no chunking method could run here (see the notes above)")
    budget = _budget(args.budget, args.size) if args.budget else None
    cols = [("recall_at_k", "docR@k"), ("evidence_recall_at_k", "evid.R@k"), ("mrr", "MRR"), ("recall", "spanR"),
            ("precision", "spanP"), ("tokens_per_query", "tok/q"), ("support_recall_at_k", "suppR@k"),
            ("all_docs_at_k", "allDoc@k"), ("p50_ms", "p50 ms")]
    if budget is not None:
        cols += [("evidence_recall_at_k_at_budget", "evid.R@B"), ("recall_at_budget", "spanR@B")]
    printer = _Printer(_jsonl(args), cols, [ds.label for ds in sets])
    t0 = time.perf_counter()
    count = 0
    for ds in sets:
        corpus = read_corpus(ds.path, args.limit)
        name = ds.label
        for mode in ready:
            # a store mode chunks with the store's own parent-child chunker: run it once
            pairs = runners if getattr(MODES[mode], "uses_method", True) else runners[:1]
            for spec, runner in pairs:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    row, notes = run_retrieval(corpus, mode, spec.name, runner, settings, dataset=name, k=args.k,
                                               budget=budget)
                row["peer"] = spec.peer
                count += _emit(args, printer, row, notes)
    _done(args, "retrieval", count, time.perf_counter() - t0)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report

    path, notes = write_report(args.out, args.results)
    for n in notes:
        _note(n)
    print(path)
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    import importlib.util

    from .env import env_lm_missing
    from .methods import INSTALL, METHODS

    lm_missing = env_lm_missing()  # (the LM methods' torch and transformers, unless $LOGICHUNK_LM is an endpoint)
    for m in METHODS.values():
        missing = [r for r in m.requires if importlib.util.find_spec(r.split(".")[0]) is None
                   or _missing(r)]
        install = [INSTALL.get(r, r) for r in missing]
        if m.lm and lm_missing:
            missing += lm_missing
            install.append(f"{' and '.join(lm_missing)} (logichunk[lm])")
        state = "ok" if not missing else "missing " + ", ".join(install)
        if args.format == "jsonl":
            print(json.dumps({"method": m.name, "group": m.group, "tasks": sorted(m.tasks), "runnable": not missing,
                              "install": install, "about": m.about}, ensure_ascii=False))
        else:
            print(f"{m.name:<20} {m.group:<9} {'/'.join(sorted(m.tasks)):<23} {state:<28} {m.about}")
    return 0


def _missing(mod: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(mod) is None
    except (ImportError, ValueError):
        return True


# --------------------------------------------------------------------------- parser


def _common(p: argparse.ArgumentParser, task: str) -> None:
    p.add_argument("--data", nargs="+", metavar="PATH",
                   help="file, folder or STEM (STEM.corpus.jsonl + STEM.queries.jsonl); default: the "
                        f"{task} sets under ../shared/data (or $LOGICHUNK_DATA)")
    p.add_argument("--methods", default="all",
                   help="comma list, or all / logichunk / baselines / peers (see: logichunk eval methods)")
    p.add_argument("--limit", type=int_at_least(1), metavar="N", help="first N documents (segmentation) or queries")
    p.add_argument("--json", action="store_true", help="one JSON object per line per (method, data set)")
    p.add_argument("--format", choices=["table", "jsonl"], default="table", help="jsonl: the same as --json")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"results folder (default {DEFAULT_OUT})")
    p.add_argument("--no-save", action="store_true", help="do not write OUT/results.jsonl")
    p.add_argument("--embedder", default="hash",
                   help="embedder for every method that embeds, peers included: hash (default, model-free), "
                        "e5, minilm, auto, ...")
    p.add_argument("--size", type=int_at_least(1), default=200, help="target chunk size (default 200)")
    p.add_argument("--unit", choices=["tokens", "chars"], default="tokens", help="unit of --size and --budget")
    p.add_argument("--tokenizer", default=None, help="exact tokens for --size and --budget, ours and the peers' "
                   "(cl100k_base, o200k_base, a tokenizer.json, 'embedder'); default: the offline estimate")
    p.add_argument("--embed-context", action="store_true", help="chunking: embed each chunk's LLM-free context "
                   "(heading path + its document's terms) before its text; the budget still counts spans")


def _against(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--against", metavar="METHOD",
                   help=f"compare every other row with this method, item by item: the difference in {what}, "
                        "its 95%% interval (paired bootstrap) and the items won and lost (default: global when it "
                        "runs, else the first method; off: no comparison)")


def add_parser(subparsers) -> None:
    """Register ``eval`` and its verbs on the main CLI's subparsers."""
    ev = subparsers.add_parser("eval", help="benchmarks: segmentation, chunking, retrieval, report",
                               description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ev.add_subparsers(dest="eval_verb", metavar="TASK")
    sub.required = True

    s = sub.add_parser("segmentation", help="choose boundaries between given units; Pk, WindowDiff, F1")
    _common(s, "segmentation")
    s.add_argument("--oracle", action="store_true",
                   help="also score each signal with the gold number of boundaries (rows named METHOD@gold-k)")
    s.add_argument("--skip", type=int_at_least(0), default=0, metavar="N",
                   help="leave out the first N documents of each set (then --limit counts from there)")
    s.add_argument("--end-to-end", type=int_at_least(1), default=1, metavar="G",
                   help="lay every G consecutive documents end to end as one long text (a boundary where one "
                        "ends and the next begins; after --skip/--limit): does segmentation keep its scale "
                        "in a long text?")
    s.add_argument("--count-rule", choices=["relative", "texttiling"], default="relative",
                   help="how many cuts a gap signal gets: peaks at least half as deep as the deepest "
                        "(default), or TextTiling's mean - std/2 of the peaks' depths")
    s.add_argument("--calibration", metavar="FILE",
                   help="memory-* methods: thresholds from `logichunk memory calibrate` (default: the shipped "
                        "calibration of the embedder)")
    _against(s, "Pk")
    s.set_defaults(func=cmd_segmentation)

    c = sub.add_parser("chunking", help="chunk, embed, retrieve within a token budget; span recall/precision/IoU")
    _common(c, "chunking")
    c.add_argument("--budget", default="5",
                   help="retrieved tokens per query: N chunks of --size (default 5), or 1000t for 1000 tokens")
    _against(c, "recall and IoU")
    c.set_defaults(func=cmd_chunking)

    r = sub.add_parser("retrieval", help="retrieve top-k per mode; doc recall@k, evidence recall@k, MRR")
    _common(r, "retrieval")
    r.set_defaults(methods="entropy")
    r.add_argument("--modes", default="basic",
                   help="comma list of retrieval modes (default basic): basic (no store: one method's chunks), "
                        "and the store's modes parent, hybrid, hierarchical, store:basic, ...")
    r.add_argument("--k", type=int_at_least(1), default=5, help="hits per query (default 5)")
    r.add_argument("--budget", default=None,
                   help="also score the hits cut to a token budget (N chunks of --size, or 1000t), so modes that "
                        "return more text are compared at equal cost")
    r.set_defaults(func=cmd_retrieval)

    rp = sub.add_parser("report", help="markdown tables and PNG plots from saved results")
    rp.add_argument("--out", default=DEFAULT_OUT, help=f"results folder; the report goes there too (default {DEFAULT_OUT})")
    rp.add_argument("--results", nargs="+", help="results files to read instead of OUT/results.jsonl")
    rp.set_defaults(func=cmd_report)

    m = sub.add_parser("methods", help="list methods and whether they can run here")
    m.add_argument("--format", choices=["table", "jsonl"], default="table")
    m.set_defaults(func=cmd_methods)

"""``logichunk memory``: replay a conversation through the perception, calibrate it, search topics.

    logichunk memory replay dialog.jsonl [--format jsonl] [--embedder hash] [--calibration FILE]
                                         [--arbiter rule|lm|llm --llm openai:URL#model] [--lookahead N]
                                         [--db memory.db]      # also archive the topics into a store
    logichunk memory calibrate --data FILE... [--docs 300:] --embedder hash --out calibration.json
    logichunk memory topics ["what did we discuss about X"] --db memory.db [--mode hybrid|kernel]
    logichunk memory forget CONVERSATION --db memory.db   # delete its archived topics and open turns

Input files: see :mod:`logichunk.memory.dialogs` (a turn per line, a conversation per line, or the
labelled dialogue format of ``../shared/data/dialogue``, which replay scores against its labels).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from ..cli_args import check_out_path, int_at_least, one_line
from ..errors import InputError, LogichunkError


def _note(msg: str) -> None:
    print(f"logichunk memory: {msg}", file=sys.stderr, flush=True)


def _settings(args: argparse.Namespace) -> Any:
    """The settings of a memory verb (``--config`` / ``$LOGICHUNK_CONFIG``, ``LOGICHUNK_*``, the store
    flags), read once and always, so a bad file is an error even when flags cover what it sets."""
    from ..config import Settings

    return Settings.load(getattr(args, "config", None), db=getattr(args, "db", None),
                         project=getattr(args, "project", None))


def _embedder(args: argparse.Namespace, settings: Any, *, store: bool = False) -> Any:
    """The ``--embedder`` flag, else the ``embedder`` setting, else (``store``: a verb on ``--db``) the
    project's own when it can be built here, said on stderr (:mod:`logichunk.store.embedder_choice`), else auto."""
    from ..models import resolve_embedder

    if store:
        from ..store.embedder_choice import embedder_named, store_embedder

        took = store_embedder(settings, named=embedder_named(args.embedder, getattr(args, "config", None)), cached=True)
        if took is not None:
            if took.note:
                _note(f"note: {took.note}")
            return took.resolved.model, took.resolved.description
    r = resolve_embedder(args.embedder or settings.embedder or "auto")
    return r.model, r.description


def _calibration(path: str | None, embedder: Any, settings: Any):
    from .evaluate import load_calibration

    return load_calibration(path or settings.memory_calibration or None, embedder)


def _arbiter(args: argparse.Namespace, cal) -> Any:
    from .arbiter import LLMArbiter, LMArbiter, RuleArbiter

    kind = args.arbiter
    if args.llm and kind == "rule":
        kind = "llm"
    if kind == "rule":
        return None
    if kind == "lm":
        from ..models.lm import load_lm

        return LMArbiter(load_lm(args.lm or None))
    if kind == "llm":
        if not args.llm:
            raise InputError("--arbiter llm needs --llm openai:http://host:port/v1#model")
        from ..models.registry import resolve_llm

        return LLMArbiter(resolve_llm(args.llm).model, fallback=RuleArbiter(cal),
                          on_fallback=lambda why: _note(f"warning: {why} (once; a count at the end)"))
    raise InputError(f"unknown arbiter {kind!r}: use rule, lm or llm")


def _open_store(settings: Any, embedder: Any, *, create: bool = True):
    """The store the settings name; ``create=False`` (``topics``, which only reads): a mistyped
    ``--db`` or ``--project`` is an error, not a new empty store."""
    from ..store import Store

    return Store.open(settings.db, settings=settings, embedder=embedder, create=create)


# --------------------------------------------------------------------------- replay


def cmd_replay(args: argparse.Namespace) -> int:
    from ..eval.metrics import boundary_counts, pk, prf, windowdiff
    from .dialogs import read_conversations
    from .perception import Perception, replay

    convs = read_conversations(args.file)
    settings = _settings(args)
    embedder, desc = _embedder(args, settings, store=bool(args.db))
    cal, cal_note = _calibration(args.calibration, embedder, settings)
    if args.lookahead is not None:
        if args.lookahead and cal.review is None:
            raise InputError("this calibration has no review model: --lookahead must be 0")
        cal = cal.with_(lookahead=args.lookahead)
    arbiter = _arbiter(args, cal)
    if not args.quiet:
        _note(f"embedder: {desc}; {cal_note}; arbiter: {getattr(arbiter, 'name', 'rule')}; "
              f"lookahead {cal.lookahead} turn(s)")
    store = _open_store(settings, embedder) if args.db else None
    jsonl = args.format == "jsonl"
    totals = {"conversations": 0, "turns": 0, "episodes": 0, "topic_changes": 0, "immediate_splits": 0,
              "revisions": 0, "pk": [], "wd": [], "counts": None}
    t0 = time.perf_counter()
    try:
        for conv in convs:
            p = Perception(store=store, embedder=embedder, calibration=cal, arbiter=arbiter,
                           conversation_id=conv.id)
            before = p.archiver.archived_turns(conv.id) if p.archiver is not None and conv.id else 0
            topics_before = p.archiver.archived_topics(conv.id) if before else 0
            if before and not args.quiet:  # replaying a file into the same database again appends it
                _note(f"conversation {conv.id} has {before} turn(s) in {args.db} already: these turns continue it "
                      f"(numbered as stored: turns from {before}, topics from {topics_before})")
            if p.resumed and not args.quiet:  # (a run that died left them open: they come first, not lost)
                _note(f"conversation {conv.id}: {p.resumed} open turn(s) stored in {args.db} by a run that stopped "
                      "before archiving them were observed again; these turns follow them")
            turn0, topic0 = p.first_turn, p.first_topic  # (the store's numbers of this replay's first turn and topic)
            decisions, episodes = replay(conv.blocks, p)
            starts = p.boundaries()
            totals["conversations"] += 1
            totals["turns"] += len(conv.blocks)
            totals["episodes"] += len(episodes)
            totals["topic_changes"] += len(starts)  # (final: after the review)
            totals["immediate_splits"] += sum(1 for d in decisions if d.is_split and d.turn > 0)
            totals["revisions"] += sum(len(d.revisions) for d in decisions) + len(p.flush_revisions)
            score: dict[str, Any] = {}
            if conv.gold_starts is not None:
                import numpy as np

                n = len(conv.blocks)
                ref = np.asarray(sorted(s - 1 for s in conv.gold_starts), dtype=np.int64)
                hyp = np.asarray(sorted(s - 1 for s in starts), dtype=np.int64)
                score = {"pk": pk(ref, hyp, n), "windowdiff": windowdiff(ref, hyp, n)}
                c = boundary_counts(ref, hyp, tolerance=1)
                totals["counts"] = c if totals["counts"] is None else totals["counts"] + c
                totals["pk"].append(score["pk"])
                totals["wd"].append(score["windowdiff"])
            if jsonl:  # (numbered as the store numbers them when these turns continue a stored conversation)
                for d, b in zip(decisions, conv.blocks, strict=True):
                    print(json.dumps({"type": "decision", **_as_stored(d.to_dict(conv.id), turn0, topic0),
                                      "text": b.query},
                                     ensure_ascii=False))
                for r in p.flush_revisions:  # made at the end of the conversation, after the last decision
                    print(json.dumps({"type": "revision", "conversation_id": conv.id, "at": "flush",
                                      **_as_stored(r.to_dict(), turn0, topic0)}, ensure_ascii=False))
                for e in episodes:
                    print(json.dumps({"type": "episode",
                                      **_as_stored(e.to_dict(with_blocks=args.blocks), turn0, topic0)},
                                     ensure_ascii=False))
                if score:
                    print(json.dumps({"type": "score", "conversation_id": conv.id, **score}, ensure_ascii=False))
            else:
                _print_conversation(conv, decisions, episodes, score, p.flush_revisions, turn0, topic0)
    finally:
        if store is not None:
            store.close()
    seconds = time.perf_counter() - t0
    if getattr(arbiter, "failures", 0):  # even with --quiet: the decisions were not the arbiter asked for
        _note(f"warning: the {arbiter.name} arbiter fell back on {arbiter.failures} grey-zone turn(s): "
              f"{getattr(arbiter.fallback, 'name', 'the fallback')} decided them")
    summary: dict[str, Any] = {k: totals[k] for k in ("conversations", "turns", "episodes", "topic_changes",
                                                       "immediate_splits", "revisions")}
    summary["seconds"] = round(seconds, 3)
    summary["turns_per_second"] = round(totals["turns"] / seconds, 1) if seconds > 0 else None
    if totals["pk"]:
        import numpy as np

        _, _, f1 = prf(totals["counts"])
        summary.update(pk=round(float(np.nanmean(totals["pk"])), 4), windowdiff=round(float(np.nanmean(totals["wd"])), 4),
                       f1=round(f1, 4))
    if jsonl:
        print(json.dumps({"type": "summary", **summary}, ensure_ascii=False))
    else:
        print("summary: " + ", ".join(f"{k} {v}" for k, v in summary.items()))
    return 0


def _review_line(r, turns: int = 0) -> str:
    what = "boundary added" if str(r.action) == "split" else "boundary removed"
    return f"review: {what} before turn {r.turn + turns} (P={r.score:.2f})"


_TURN_KEYS = ("turn", "start", "end")
_TOPIC_KEYS = ("topic",)  # (an episode's ``resumes`` is the conversation's number already)


def _as_stored(rec: dict[str, Any], turns: int, topics: int) -> dict[str, Any]:
    """A decision's, revision's or episode's record with its turn and topic numbers moved past the ``turns`` and
    ``topics`` a database held of the conversation before this replay (its turns continue it: the store numbers
    them on), in the records nested in it too (a decision's revisions and closed episodes); unchanged for a new
    conversation. Why: a replay counts from its file's first turn, and an episode's number beside the stored
    topic's ``document_id`` must be that topic's."""
    if not turns and not topics:
        return rec
    out: dict[str, Any] = {}
    for k, v in rec.items():
        if isinstance(v, int) and not isinstance(v, bool) and k in _TURN_KEYS:
            v += turns
        elif isinstance(v, int) and not isinstance(v, bool) and k in _TOPIC_KEYS:
            v += topics
        elif isinstance(v, list) and k in ("revisions", "closed"):
            v = [_as_stored(x, turns, topics) if isinstance(x, dict) else x for x in v]
        out[k] = v
    return out


def _print_conversation(conv, decisions, episodes, score, flush_revisions=(), turns: int = 0, topics: int = 0) -> None:
    print(f"conversation {conv.id} ({len(conv.blocks)} turns)" + (f", numbered on from turn {turns}, topic {topics}"
                                                                   if turns else ""))
    for d, b in zip(decisions, conv.blocks, strict=True):
        who = f"{d.step}" + (f":{d.arbiter}" if d.arbiter else "")
        sim = "" if d.similarity is None else f"cos {d.similarity:5.2f}"
        gold = ""
        if conv.gold_starts is not None and d.turn in conv.gold_starts:
            gold = "  ◆gold"
        print(f"  {d.turn + turns:>4}  {str(d.action).upper():<12} {who:<16} {d.score:6.3f}  {sim:<9} {one_line(b.query)}{gold}")
        for r in d.revisions:
            print(f"        ↳ {_review_line(r, turns)}")
    for r in flush_revisions:
        print(f"  at the end: {_review_line(r, turns)}")
    print("  episodes:")
    for e in episodes:
        doc = f"  doc {e.document_id}" if e.document_id else ""
        back = "" if e.resumes is None else f"  (resumes #{e.resumes}, cos {e.resumes_similarity:.2f})"
        print(f"    #{e.index + topics:<3} turns {e.start + turns}-{e.end + turns} ({len(e.blocks)}){doc}  "
              f"{one_line(e.title, 70)}{back}")
    if score:
        print(f"  Pk {score['pk']:.3f}  WindowDiff {score['windowdiff']:.3f}")


# --------------------------------------------------------------------------- calibrate


def _slice(spec: str | None) -> slice:
    if not spec:
        return slice(None)
    a, sep, b = spec.partition(":")
    try:
        if not sep:
            raise ValueError
        return slice(int(a) if a.strip() else None, int(b) if b.strip() else None)
    except ValueError:
        raise InputError(f"--docs wants START:END (e.g. 300: or :100), got {spec!r}") from None


class _StoreCached:
    """An embedder whose vectors go through a store's persistent embedding cache (same model, kind and
    text: read back, never embedded again), so calibrating twice with a slow model embeds once."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.model_id = store.model_id
        self.dim = int(store.embedder.dim)

    def embed(self, texts, *, kind: str = "passage"):
        return self.store.embed(list(texts), kind=kind)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ..eval.readers import read_segmentation, resolve
    from .calibrate import calibrate, conversations_from_units

    sets, _ = resolve(args.data, "segmentation")
    check_out_path(args.out, [str(ds.path) for ds in sets], "the calibration")
    spans = args.docs or [":"]
    if len(spans) not in (1, len(sets)):
        raise InputError(f"--docs takes one START:END for every file, or one per file ({len(sets)}), got {len(spans)}")
    docs = []
    used = []
    for k, ds in enumerate(sets):
        span = spans[k if len(spans) > 1 else 0]
        part = read_segmentation(ds.path)[_slice(span)]
        if args.limit:
            part = part[: args.limit]
        docs.extend(part)
        used.append({"data": str(ds.path), "docs": span, "n": len(part)})
    if not docs:
        raise InputError("no documents selected for calibration (check --docs / --limit)")
    embedder, desc = _embedder(args, _settings(args))
    cache = None
    if args.cache:
        from ..store import Store

        cache = Store.open(args.cache, embedder=embedder, project="memory-calibration-cache")
        embedder = _StoreCached(cache)
        desc += f", embeddings cached in {args.cache}"
    if not args.quiet:
        _note(f"calibrating on {len(docs)} conversation(s) with {desc}")
    try:
        cal = calibrate(conversations_from_units(docs), embedder, lookahead=args.lookahead,
                        lookahead_items=args.lookahead_items, short_tokens=args.short_tokens,
                        without=[f.strip() for f in (args.without or "").split(",") if f.strip()],
                        extra=[f.strip() for f in (args.extra or "").split(",") if f.strip()],
                        source={"sets": used, "embedder_spec": args.embedder},
                        progress=None if args.quiet else _note)
        if args.fit_lm:
            from ..models.lm import load_lm
            from .arbiter import LMArbiter
            from .calibrate import arbiter_threshold

            lm_convs = conversations_from_units(docs[: args.fit_lm])
            th, info = arbiter_threshold(LMArbiter(load_lm(args.lm or None)), lm_convs, embedder, cal,
                                         progress=None if args.quiet else _note)
            src = dict(cal.source)
            src["lm_threshold_fit"] = {**info, "conversations": len(lm_convs)}
            cal = cal.with_(arbiter_thresholds={**cal.arbiter_thresholds, "lm": round(th, 6)}, source=src)
    finally:
        if cache is not None:
            cache.close()
    cal.save(args.out)
    if cal.source.get("baseline_fallback"):  # even with --quiet: the file holds a default, not a fit
        _note(f"warning: {cal.source['baseline_fallback']}")
    rec = {k: v for k, v in cal.to_dict().items() if k not in ("rule", "review")}
    rec["out"] = args.out
    if args.format == "jsonl":
        print(json.dumps(rec, ensure_ascii=False))
    else:
        src = rec.pop("source")
        print(f"wrote {args.out}: hi {cal.hi:.4f}, lo {cal.lo:.4f}, rule threshold {cal.rule_threshold}, "
              f"lookahead {cal.lookahead} (items {cal.lookahead_items}), review threshold {cal.review_threshold}, "
              f"min topic turns {cal.min_topic_turns}, baseline threshold {cal.baseline_threshold:.4f}")
        print("calibration Pk: " + ", ".join(f"{k[3:]} {v}" for k, v in src.items() if k.startswith("pk_"))
              + (" (baseline: the default threshold, see the warning)" if src.get("baseline_fallback") else ""))
    return 0


# --------------------------------------------------------------------------- topics


def cmd_topics(args: argparse.Namespace) -> int:
    from .archive import search_topics, topics

    settings = _settings(args)
    embedder, _ = _embedder(args, settings, store=True)
    with _open_store(settings, embedder, create=False) as store:
        if (why := store.embedder_mismatch()) and args.format != "jsonl":
            _note(why)
        if args.query:
            rows = [h.to_dict() for h in search_topics(store, args.query, args.top_k, mode=args.mode,
                                                       conversation_id=args.conversation)]
        else:
            rows = [t.to_dict() for t in topics(store, args.conversation)]
    for r in rows:
        if args.format == "jsonl":
            print(json.dumps(r, ensure_ascii=False))
        else:
            score = f"{r['score']:7.4f}  " if "score" in r else ""
            back = "" if r.get("resumes") is None else \
                f"  (resumes #{r['resumes']}, cos {r['resumes_similarity']:.2f})"
            print(f"{score}{r['conversation_id']} #{r['topic']:<3} turns {r['start']}-{r['end']}  {one_line(r['title'], 60)}"
                  f"{back}")
    if not rows and args.format != "jsonl":
        print("(no topics)")
    return 0


# --------------------------------------------------------------------------- forget


def cmd_forget(args: argparse.Namespace) -> int:
    from .forget import forget

    settings = _settings(args)
    embedder, _ = _embedder(args, settings, store=True)
    with _open_store(settings, embedder, create=False) as store:
        done = forget(store, args.conversation)
    if args.format == "jsonl":
        print(json.dumps(done.to_dict(), ensure_ascii=False))
    else:
        print(f"forgot conversation {one_line(done.conversation_id)}: {len(done.documents)} archived topic(s), "
              f"{done.open_turns} open turn(s)")
    return 0


# --------------------------------------------------------------------------- parser


_limit = int_at_least(1)
_nonneg = int_at_least(0)


def _store_args(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument("--db", required=required, help="SQLite file or postgresql:// URL of the store")
    p.add_argument("--project", help="project inside the store (default: default)")
    p.add_argument("--config", help="TOML settings file (also $LOGICHUNK_CONFIG)")


def add_parser(subparsers: Any) -> None:
    """Register ``memory`` and its verbs on the main CLI's subparsers."""
    m = subparsers.add_parser("memory", help="conversation memory: replay, calibrate, topics",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = m.add_subparsers(dest="memory_verb", metavar="VERB")
    sub.required = True

    r = sub.add_parser("replay", help="observe each turn of a JSONL conversation; print decisions and episodes")
    r.add_argument("file", help="JSONL file (- for stdin)")
    r.add_argument("--format", choices=["text", "jsonl"], default="text")
    r.add_argument("--embedder", help="auto (E5 if installed, else hash), hash, e5, st:PATH, openai:URL#M "
                                      "(default: setting embedder, auto)")
    r.add_argument("--calibration", metavar="FILE", help="thresholds from `logichunk memory calibrate`")
    r.add_argument("--arbiter", choices=["rule", "lm", "llm"], default="rule",
                   help="grey-zone arbiter: the calibrated rule (default), a local LM scorer, or a chat LLM")
    r.add_argument("--llm", metavar="SPEC", help="chat endpoint for --arbiter llm: openai:http://host:port/v1#model")
    r.add_argument("--lm", metavar="PATH", help="local LM folder for --arbiter lm (default: the packaged Qwen2.5-Coder-0.5B-Instruct)")
    r.add_argument("--lookahead", type=_nonneg, help="turns the review waits for (0: immediate decisions are final)")
    r.add_argument("--blocks", action="store_true", help="jsonl: include each episode's turns")
    r.add_argument("--quiet", action="store_true", help="no notes on stderr")
    _store_args(r)
    r.set_defaults(func=cmd_replay)

    c = sub.add_parser("calibrate", help="fit thresholds and rules on labelled dialogues (Pk)")
    c.add_argument("--data", nargs="+", required=True, metavar="PATH",
                   help="labelled dialogue JSONL files or folders (the ../shared/data/dialogue format)")
    c.add_argument("--docs", nargs="+", metavar="START:END",
                   help="which documents: one slice for every file, or one per --data file (e.g. 300: :300)")
    c.add_argument("--limit", type=_limit, help="at most N documents of each file (after --docs)")
    c.add_argument("--embedder", help="the embedder the calibration is for (default: setting embedder, auto)")
    c.add_argument("--lookahead", type=_nonneg, default=3, help="review after N turns (default 3; 0: no review)")
    c.add_argument("--lookahead-items", type=_nonneg, default=0,
                   help="review sooner once the turns after a gap hold N content items (default 0: off)")
    c.add_argument("--short-tokens", type=_nonneg, default=5, help="filler turns are under N tokens (default 5)")
    c.add_argument("--without", metavar="FEATURES",
                   help="leave these features out of the rules (comma list; ablations, e.g. sim,sim_prev,window_sim)")
    c.add_argument("--with", dest="extra", metavar="FEATURES",
                   help="add optional features to the rules (question: helps within chit-chat, hurts transfer)")
    c.add_argument("--fit-lm", type=_nonneg, default=0, metavar="N",
                   help="also fit the LM arbiter's threshold on the first N conversations (one LM call per grey turn)")
    c.add_argument("--lm", metavar="PATH", help="local LM folder for --fit-lm (default: the packaged Qwen2.5-Coder-0.5B-Instruct)")
    c.add_argument("--out", required=True, help="calibration JSON to write")
    c.add_argument("--cache", metavar="DB", help="keep the embeddings in this SQLite file (a store): a second "
                                                 "calibration with the same model and data embeds nothing")
    c.add_argument("--format", choices=["text", "jsonl"], default="text")
    c.add_argument("--quiet", action="store_true")
    c.set_defaults(func=cmd_calibrate)

    t = sub.add_parser("topics", help="list archived topics, or search them (what did we discuss about X)")
    t.add_argument("query", nargs="?", help="search text; without it, list the topics")
    t.add_argument("--conversation", help="only this conversation id")
    t.add_argument("--mode", default="hybrid", choices=["basic", "parent", "hierarchical", "hybrid", "kernel"],
                   help="retrieval mode over the topics' chunks, or kernel (topic vectors); default hybrid")
    t.add_argument("--top-k", type=_limit, default=5)
    t.add_argument("--embedder", help="embedder of the store (default: setting embedder, auto)")
    t.add_argument("--format", choices=["table", "jsonl"], default="table")
    _store_args(t, required=True)
    t.set_defaults(func=cmd_topics)

    f = sub.add_parser("forget", help="delete a conversation: its archived topics and its open turns")
    f.add_argument("conversation", help="the conversation id")
    f.add_argument("--embedder", help="embedder of the store (default: setting embedder, auto)")
    f.add_argument("--format", choices=["text", "jsonl"], default="text")
    _store_args(f, required=True)
    f.set_defaults(func=cmd_forget)


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - convenience for python -m
    p = argparse.ArgumentParser(prog="logichunk")
    add_parser(p.add_subparsers(dest="verb"))
    args = p.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LogichunkError as e:
        print(f"logichunk: error: {e}", file=sys.stderr)
        return 2

"""CLI verbs for the store: ``ingest``, ``search``, ``edit``, ``documents``, ``delete``, ``blocks``. Wired in by ``logichunk.cli``
through :func:`add_parser`; handlers return an exit code and raise LogichunkError for user errors."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from typing import Any

from ..cli_args import encoding_option, int_at_least, one_line
from ..config import RETRIEVE_MODES
from ..errors import InputError, ModelUnavailable
from ..scale.cli import add_ingest_options
from ..text.folders import TEXT_SUFFIXES
from .base import Store, block_emptied
from .cli_options import DOC_COLUMN, document_cell, open_store, store_options
from .origins import INCLUDE
from .refs import hit_ref

_open, _common = open_store, store_options  # their names here before store/cli_options.py


def cmd_ingest(args: argparse.Namespace) -> int:
    from ..scale.cli import ray_options
    from .ingest import check_cuts, check_embedder, ingest

    if not args.paths and not (args.reembed or args.recut):
        raise InputError("ingest: give the files or folders to store (with no paths, --reembed or --recut redoes "
                         "the project's stored chunks alone)")
    on_ray = ray_options(args) if args.paths else None  # Ray asked for but missing: said before a database is created
    # with no embedder named, new documents join the project's own model (as its searches read it), not the
    # default, which was refused as another model; --reembed with none named moves the project to the default
    with open_store(args, create=True, own_embedder=not args.reembed, tokenizer=args.tokenizer) as store:
        _ = store.embedder  # a bad --embedder fails here, before anything is stored
        others = check_embedder(store, args.reembed)  # another embedder than the stored one: refused here
        # other size settings than the project's chunks were cut with: refused here, or all cut again
        why = check_cuts(store, args.recut) if not args.no_chunk else ""
        if why and not args.quiet:
            print(f"cutting every chapter again: {why}", file=sys.stderr)
        if others and not args.quiet:
            print(f"re-embedding {sum(others.values())} chunk(s) stored with {', '.join(sorted(others))} "
                  f"with {store.model_id}", file=sys.stderr)
        if on_ray is not None:
            from ..scale import ingest_corpus

            rep = ingest_corpus(store, args.paths, rechunk=not args.no_chunk, replace=args.replace,
                                reembed=args.reembed, recut=args.recut, prune=args.prune, encoding=args.encoding,
                                **on_ray)
        else:
            rep = ingest(store, args.paths, rechunk=not args.no_chunk, replace=args.replace, reembed=args.reembed,
                         recut=args.recut, prune=args.prune, encoding=args.encoding)
        if not args.quiet and store.embedder_note and (rep.embedded or args.verbose):  # (nothing embedded: no news)
            print(f"embedder: {store.embedder_note}", file=sys.stderr)
        _ingest_notes(rep, args.quiet, args.encoding, args.verbose)
        if args.format == "jsonl":
            print(json.dumps({**dataclasses.asdict(rep), "chars_per_second": rep.chars_per_second,
                              "engine": "ray" if on_ray is not None else "serial"}, ensure_ascii=False))
            return 1 if rep.failed else 0
        if rep.documents:
            said = (f"ingested {rep.documents} document(s), {rep.chapters} chapter(s), {rep.blocks} block(s), "
                    f"{rep.chars} chars -> {rep.parents} parents, {rep.children} children; embedded {rep.embedded} "
                    f"texts in {rep.seconds:.2f} s ({rep.chars_per_second:,.0f} chars/s)")
        else:  # (nothing new stored: a rate per stored character would read 0; what was chunked was left before)
            what = "the blocks updated and what was left unchunked" if rep.updated else \
                "what was stored before and left unchunked"
            said = "ingested 0 documents" + (
                f"; chunked {what} -> {rep.parents} parents, {rep.children} "
                f"children; embedded {rep.embedded} texts" if rep.parents or rep.children or rep.embedded else "") + \
                f" in {rep.seconds:.2f} s"
        print(said + (f"; {len(rep.unchanged)} file(s) unchanged" if rep.unchanged else "")
              + (f"; {len(rep.edited)} file(s) keep their store edits" if rep.edited else "")
              + (f"; followed {len(rep.moved)} file(s) moved or renamed" if rep.moved else "")
              + (f"; updated {len(rep.updated)} document(s) from their files" if rep.updated else "")
              + (f"; added {len(rep.added)} block(s)" if rep.added else "")
              + (f"; removed {len(rep.removed)} block(s)" if rep.removed else "")
              + (f"; dropped {len(rep.overwritten)} store edit(s) for the file's text (--replace)"
                 if rep.overwritten else "")
              + (f"; removed {len(rep.pruned)} document(s) whose file is gone" + (" or empty" if rep.emptied else "")
                 if rep.pruned else "")
              + (f"; {len(rep.refused) + len(rep.unreadable)} file(s){' or folder(s)' if rep.unreadable else ''} not "
                 "ingested, said on stderr" if rep.refused or rep.unreadable else "")
              + (f"; {len(rep.conflicts)} block(s) changed in the file and in the store, the store's text kept, "
                 "said on stderr" if rep.conflicts else ""))
    return 1 if rep.failed else 0


def _ingest_notes(rep: Any, quiet: bool, encoding: str | None = None, verbose: bool = False) -> None:
    """An ingest's report on stderr, one line a file: what was skipped and why. The refused files and the
    folders that could not be read are said even with ``--quiet`` (they are the exit status's cause). A file
    read as GB18030 without ``--encoding`` (not UTF-8, read as Chinese: a guess) is said too. What is as it was
    at the last run is named only with ``verbose`` (counted in the summary, listed in the jsonl report): the
    files unchanged, and those kept as edited in the store whose file did not change — a daily sync said every
    file with store edits every day, forever, which hid what changed that day."""
    from ..text.folders import dangling_summary, hidden_summary, skipped_summary

    for line in (*rep.refused, *rep.unreadable):
        print(f"skipped {line}", file=sys.stderr)
    for line in rep.conflicts:
        print(f"conflict: {line}", file=sys.stderr)
    if rep.nothing:
        print(f"nothing was ingested: {rep.nothing}", file=sys.stderr)
    if quiet:
        return
    for line in rep.decoded:
        if encoding is None and line.endswith(": gb18030"):
            print(f"note: {line.removesuffix(': gb18030')}: not UTF-8; read as GB18030 (Chinese; --encoding NAME "
                  "reads it otherwise)", file=sys.stderr)
    if rep.unmatched:
        print(_unmatched_line(rep.unmatched), file=sys.stderr)
    for line in rep.duplicates:
        print(f"skipped {line}", file=sys.stderr)
    for old, new in rep.moved:
        print(f"moved: {_shown_source(old)} -> {new} (its document followed the file: its id, chunks and store edits "
              "kept)", file=sys.stderr)
    for f in rep.new:
        print(f"new: {f}", file=sys.stderr)
    for f in rep.unchanged if verbose else ():
        print(f"unchanged, skipped: {f}", file=sys.stderr)
    for f in rep.updated:
        print(f"updated from the file: {f} (its document kept its id; the blocks changed in the file took its text, "
              "those added or removed in it were added or removed, the others kept their chunks)", file=sys.stderr)
    changed = {*rep.updated, *rep.replaced, *(new for _old, new in rep.moved)}
    for f in (f for f in rep.edited if verbose or f in changed):
        print(f"kept as edited in the store: {f} (--replace would take the file's text over the edits)",
              file=sys.stderr)
    for f in rep.empty:
        print(f"empty, skipped: {f}", file=sys.stderr)
    for f in rep.replaced:
        print(f"replaced: {f}", file=sys.stderr)
    for line in rep.overwritten:
        print(f"store edit dropped for the file's text (--replace): {line}", file=sys.stderr)
    for f in rep.pruned:
        print(f"removed, its file is {'empty' if f in rep.emptied else 'gone'}: {_shown_source(f)}", file=sys.stderr)
    for path, did, other in rep.kept:
        print(f"not removed, gone from here but still reached elsewhere: {_shown_source(path)} (document {did} stays: "
              f"its file is still reached by {_shown_source(other)})", file=sys.stderr)
    if rep.unpruned:
        print(_unpruned_line(rep.unpruned), file=sys.stderr)
    if rep.skipped:
        print(skipped_summary(rep.skipped), file=sys.stderr)
    if rep.hidden:
        print(hidden_summary(rep.hidden), file=sys.stderr)
    if rep.dangling:
        print(f"note: {dangling_summary(rep.dangling)}", file=sys.stderr)


def _unmatched_line(ids: Any) -> str:
    """One line on the documents whose relative source (an older logichunk's) matched no file of this run: a
    file at that relative path from here may be another project's, so it was not taken for theirs."""
    shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more (logichunk documents)" if len(ids) > 10 else "")
    return (f"not matched: {len(ids)} document(s) stored by an older logichunk with a relative source, which names "
            f"no file from here ({shown}); a file here was stored as new if it was not one of them — ingest their "
            "folder once from the folder they were ingested from (their full paths are then recorded), or delete "
            "them by id (logichunk delete ID)")


def _unpruned_line(unpruned: Any) -> str:
    """One line on the documents ``--prune`` kept because it could not tell whether their file is gone, each
    with its document id (what ``logichunk delete`` takes, should the file be gone indeed)."""
    shown = "; ".join(unpruned[:3]) + (f"; and {len(unpruned) - 3} more (logichunk documents, or --format jsonl: "
                                       "unpruned)" if len(unpruned) > 3 else "")
    hint = (" — a relative source was stored by an older logichunk: ingest its folder once from the folder it was "
            "first ingested from (its full path is then recorded), or delete the document by id"
            if any("(a relative path, not found from here;" in u for u in unpruned) else "")
    return f"not pruned, their files could not be checked: {shown}{hint}"


def cmd_documents(args: argparse.Namespace) -> int:
    from .document_layout import document_summary

    with open_store(args) as store:
        docs = [document_summary(store, d, t, s) for d, t, s in store.documents()]
    if args.format == "jsonl":
        for d in docs:
            print(json.dumps(d, ensure_ascii=False))
        return 0
    w = max((len(d["id"]) for d in docs), default=2)
    print(f"{'id':<{w}}  {'chars':>9}  {'chapters':>8}  {'parents':>7}  {'children':>8}  {'status':<7}  title (source)")
    for d in docs:
        src = f" ({_shown_source(d['source'])})" if d["source"] else ""
        print(f"{d['id']:<{w}}  {d['chars']:>9}  {d['chapters']:>8}  {d['parents']:>7}  {d['children']:>8}  "
              f"{d['status']:<7}  {one_line(d['title'] + src, 60)}")
    if not docs:
        print("(no documents)")
    return 0


def _shown_source(source: str) -> str:
    """A source as the documents table shows it: a full path inside the working directory relative to it (as
    the user named the file; the jsonl keeps it whole), any other as stored."""
    here = os.getcwd()
    if os.path.isabs(source) and source.startswith(here.rstrip(os.sep) + os.sep):
        return os.path.relpath(source, here)
    return source


def cmd_delete(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        known = {d: (t, s) for d, t, s in store.documents()}
        unknown = [d for d in args.ids if d not in known]
        if unknown:  # every id checked before anything is deleted
            raise InputError(f"unknown document id(s): {', '.join(unknown)} (list them: logichunk documents)"
                             "; nothing was deleted")
        ids = list(dict.fromkeys(args.ids))
        with store.tx():
            for d in ids:
                store.delete_document(d)
    for d in ids:
        title, source = known[d]
        if args.format == "jsonl":
            print(json.dumps({"id": d, "title": title, "source": source, "deleted": True}, ensure_ascii=False))
        else:
            print(f"deleted {d}: {title}" + (f" ({source})" if source else ""))
    return 0


def _check_top_k(args: argparse.Namespace) -> None:
    """``--top-k`` past the limit, said as the flag: the settings' own check names two settings the user
    never typed (``setting top_k (100000) exceeds service_max_top_k (100)``)."""
    if args.top_k is None:
        return
    if args.top_k < 1:
        raise InputError(f"--top-k must be at least 1, got {args.top_k}")
    from ..config import Settings

    limit = Settings.load(args.config).service_max_top_k
    if args.top_k > limit:
        raise InputError(f"--top-k must be at most {limit}, got {args.top_k} (the service_max_top_k setting raises it)")


def cmd_search(args: argparse.Namespace) -> int:
    from ..retrieve import retrieve
    from ..retrieve.results import hit_record

    _check_top_k(args)
    over = {}
    if args.normalize is not None:
        over["size_normalization"] = args.normalize
    with open_store(args, own_embedder=True, retrieve_mode=args.mode, top_k=args.top_k,
                    context_window_size=args.context_window, reranker=args.rerank, **over) as store:
        reranker = None
        if store.settings.reranker != "none":
            from ..models.rerank import resolve_reranker

            reranker = resolve_reranker(store.settings.reranker)
            print(f"reranker: {getattr(reranker, 'model_id', store.settings.reranker)}", file=sys.stderr)
        try:
            store.embedder  # noqa: B018 (a mistyped spec is the user's error, not a search's fallback)
        except ModelUnavailable:
            pass  # (a model this install lacks: the search falls back, and says so)
        if args.include == "all":
            res = retrieve(store, args.query, top_k=args.top_k, reranker=reranker)
        else:  # (documents or conversation topics alone: retrieval ranks them all, so it reads further)
            from ..retrieve.kept import retrieve_kept

            res = retrieve_kept(store, args.query, None, args.top_k or store.settings.top_k, args.include,
                                reranker=reranker)
        docs = {d: (t, src) for d, t, src in store.documents()}  # a hit's document named: its dotted id is not
        if hasattr(res, "records"):  # graph modes: sentences and the path (logichunk.retrieve.graph)
            from ..retrieve.graph_cli import print_graph_results

            print_graph_results(res, args.format, docs, store)
            return 0
        if args.format == "jsonl":
            spans, pages = _hit_spans(store, list(res))
            for rank, h in enumerate(res, 1):
                m = h.chunk.meta
                title, source = docs.get(h.doc_id, (None, None))
                rec = {**hit_record(h, rank, title, source),  # (the fields the service's and MCP's hits have)
                       "title": title, "source": source,  # (``title``: document_title's earlier name)
                       "block_id": m.get("block_id"),
                       "span": [h.chunk.span.start, h.chunk.span.end],
                       "context": None if h.context is None else [h.context.start, h.context.end],
                       "child": m.get("child"), "relation": m.get("relation"), "fallback": res.fallback,
                       "text": m.get("text"),  # the text at ``span``; the window around the match beside it
                       "context_text": m.get("context_text"), "child_span": m.get("child_span"),
                       "child_text": m.get("child_text"), "notes": list(res.notes),
                       # the hit in offsets of the document's text, as the service's and MCP's hits give it
                       "document_span": spans[rank - 1][0], "document_context": spans[rank - 1][1]}
                if pages[rank - 1] is not None:  # a PDF's hit: the pages its text lies on, to cite
                    rec["pages"] = pages[rank - 1]
                if store.embedder_choice:  # the project's own embedder, none named: which model ranked the hits,
                    rec["embedder_note"] = store.embedder_choice  # for a reader of the lines alone (stderr dropped);
                    # a field of its own: a consumer reading ``notes`` as trouble (a fallback, BM25 only) is not misled
                print(json.dumps(rec, ensure_ascii=False))
            if not len(res) and (res.fallback or res.notes):  # no record to carry them: why, on stderr
                why = f"fallback: {res.fallback}" if res.fallback else "note"
                print(f"logichunk search: no results; {why}: {'; '.join(res.notes)}", file=sys.stderr)
        else:
            if res.fallback:
                print(f"# fallback: {res.fallback} ({'; '.join(res.notes)})")
            elif res.notes and len(res):
                print(f"# note: {'; '.join(res.notes)}")
            refs = [hit_ref(h.doc_id, h.chunk.id, h.chunk.meta.get("level_name"), h.chunk.meta.get("text")) or
                    f"block:{h.chunk.id}" for h in res]  # (a block of the fallback, not chunked yet, has no ref)
            width = max([3, *(len(r) for r in refs)])
            print(f"{'#':>2}  {'score':>7}  {'raw':>7}  {'ref':<{width}} {'level':<7} {'document':<{DOC_COLUMN}}  text")
            for rank, (h, ref) in enumerate(zip(res, refs, strict=True), 1):
                m = h.chunk.meta
                print(f"{rank:>2}  {h.score:7.4f}  {h.raw_score:7.4f}  {ref:<{width}} {str(m.get('level_name')):<7} "
                      f"{document_cell(docs, h.doc_id)}  {one_line(m.get('context_text') or m.get('text', ''), 70)}")
            if not len(res):
                print("(no results)")  # a line of its own; why (when known) on the next one
                if res.notes and not res.fallback:
                    print(f"# note: {'; '.join(res.notes)}")
    return 0


def _hit_spans(store: Any, hits: list[Any]) -> tuple[list[tuple[list[int] | None, list[int] | None]],
                                                   list[list[int] | None]]:
    """Per hit, its span and context in offsets of its document's text (:meth:`DocLayout.hit_spans`), and the
    pages its text lies on in a document of pages (a PDF), else None."""
    from .document_layout import DocLayout, hit_pages

    layouts = {d: DocLayout.of(store, d) for d in {h.doc_id for h in hits}}
    spans = [layouts[h.doc_id].hit_spans(h) for h in hits]
    return spans, hit_pages(layouts, [(h.doc_id, sp) for h, (sp, _c) in zip(hits, spans, strict=True)])


def _edit_document(store: Store, args: argparse.Namespace, content: str) -> int:
    """``edit --document``: the document's whole text replaced (:func:`~logichunk.store.replace.replace_text`), then
    its touched chapters re-chunked (their unchanged parents kept)."""
    from .replace import replace_text

    r = replace_text(store, args.document, content, expected_sha256=args.expected_sha256)
    said = f"{len(r.changed)} block(s) changed, {len(r.added)} added, {len(r.removed)} removed"
    done = [] if args.no_rechunk else [store.rechunk_chapter(c) for c, _o, _t in store.chapters(args.document)
                                        if any(b.is_dirty for b in store.blocks(c))]
    if args.format == "jsonl":
        print(json.dumps({"document": r.document_id, "changed": list(r.changed), "added": list(r.added),
                          "removed": list(r.removed), "sha256": r.sha256, "chars": r.chars,
                          "status": "dirty" if args.no_rechunk and r.touched else "unchanged" if not r.touched
                          else "rechunked", "chapters_rechunked": len(done),
                          "parents_kept": sum(x.parents_kept for x in done),
                          "parents_written": sum(x.parents_written for x in done),
                          "embedded": sum(x.embedded for x in done)}, ensure_ascii=False))
    elif not r.touched:
        print(f"document {r.document_id}: unchanged")
    elif args.no_rechunk:
        print(f"document {r.document_id}: {said}; marked dirty")
    else:
        print(f"document {r.document_id}: {said}; re-chunked {len(done)} chapter(s) — kept "
              f"{sum(x.parents_kept for x in done)} parent(s), wrote {sum(x.parents_written for x in done)}, embedded "
              f"{sum(x.embedded for x in done)} text(s)")
    return 0


def _chars(n: int) -> str:
    return f"{n:,} character{'' if n == 1 else 's'}"


def _emptied_said(before: str, content: str) -> str:
    """What an edit that left a block blank did, in words that are true: its text removed, or replaced by
    whitespace (which is kept), or a block blank already that stays so."""
    if not before.strip():
        if not before:
            return f"still empty (now {_chars(len(content))} of whitespace)"
        return "still empty (its " + _chars(len(before)) + " of whitespace " \
            + (f"now {len(content):,})" if content else "removed)")
    if not content:
        return f"emptied (its {_chars(len(before))} removed)"
    return f"emptied (its {_chars(len(before))} replaced by {_chars(len(content))} of whitespace)"


def cmd_edit(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.text is None):
        raise InputError("give exactly one of --file or --text")
    if (args.block is None) == (args.document is None):
        raise InputError("give exactly one of --block or --document")
    if args.expected_sha256 is not None and args.document is None:
        raise InputError("--expected-sha256 goes with --document (a block's edit has no such base)")
    if args.file is not None:
        from pathlib import Path

        from .ingest import read_text_file

        if args.file == "-":
            from ..text.decode import read_text

            content = read_text(sys.stdin.buffer.read(), source="<stdin>", encoding=args.encoding)
        else:
            content = read_text_file(Path(args.file), encoding=args.encoding)
    else:
        content = args.text
    with open_store(args, own_embedder=True, tokenizer=args.tokenizer) as store:  # (none named: the project's own)
        if not args.no_rechunk and (said := store.other_embedders_said()):  # refused before the block is written
            raise InputError(f"{said}; the block was not edited — give the project's --embedder (or re-embed it all: "
                             "logichunk ingest --reembed)")
        if not args.no_rechunk and (why := store.cut_mismatch()):  # (so are other size settings)
            raise InputError(f"{why}; the block was not edited — give the project's settings (--tokenizer, --config), "
                             "or cut everything again with these: logichunk ingest --recut")
        if args.document is not None:
            return _edit_document(store, args, content)
        before = store.get_block(args.block).content
        changed = store.edit_block(args.block, content)
        emptied = block_emptied(changed, content)  # (a deleted paragraph: done, and said, as the service says it)
        said = _emptied_said(before, content) + ", " if emptied else ""
        if args.no_rechunk:
            if args.format == "jsonl":
                print(json.dumps({"block": args.block, "changed": changed, "emptied": emptied,
                                  "status": "dirty" if changed else "unchanged"}))
            else:
                print(f"block {args.block}: {said}{'marked dirty' if changed else 'unchanged'}")
            return 0
        r = store.rechunk_block(args.block)
        if args.format == "jsonl":
            print(json.dumps({"block": args.block, "changed": changed, "emptied": emptied, **dataclasses.asdict(r),
                              "seconds": round(r.seconds, 4)}, ensure_ascii=False))
        else:
            print(f"block {args.block}: {said}{r.status} — kept {r.parents_kept} parent(s), wrote {r.parents_written} "
                  f"parent(s) and {r.children_written} child(ren), embedded {r.embedded} text(s) in "
                  f"{r.seconds * 1000:.0f} ms")
    return 0


def cmd_blocks(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        blocks = store.blocks(dirty=True if args.dirty else None)
        if args.format != "jsonl":
            w = max((len(b.id) for b in blocks), default=2)
            wc = max((len(b.chapter_id) for b in blocks), default=7)
            print(f"{'id':<{w}}  {'chapter':<{wc}}  {'order':>5}  {'state':<5}  {'chars':>6}  text")
            if not blocks:
                print("(no blocks)" if not args.dirty else "(no dirty blocks)")
        for b in blocks:
            if args.format == "jsonl":
                print(json.dumps({"id": b.id, "chapter_id": b.chapter_id, "order": b.order, "dirty": b.is_dirty,
                                  "size": len(b.content), "error": b.last_error,
                                  "preview": one_line(b.content, 50)}, ensure_ascii=False))
            else:
                print(f"{b.id:<{w}}  {b.chapter_id:<{wc}}  {b.order:>5}  {'dirty' if b.is_dirty else 'clean'}  "
                      f"{len(b.content):>6}  {one_line(b.content, 50)}")
    return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("ingest", help="store files as documents/chapters/blocks, chunk and embed them")
    p.add_argument("paths", nargs="*", help=f"files or folders (a folder's files ending in {' '.join(TEXT_SUFFIXES)}, or those "
                   "compressed, as chunk reads them); none with --reembed or --recut: "
                   "only the project's stored text is re-embedded or cut again")
    p.add_argument("--no-chunk", action="store_true",
                   help="only store the blocks (dirty); the next ingest without it chunks them")
    p.add_argument("--replace", action="store_true",
                   help="the file wins over its document's store edits too (dropped, each said); the document "
                        "keeps its id and the blocks the file kept their chunks. Default: a file with the same text "
                        "is skipped; one with other text updates its document in place (blocks and headings added, "
                        "removed or changed in the file follow it, the others keep ids, chunks and vectors); where "
                        "the store edited it, as git merges lines: the store's edits stay, a block changed in both "
                        "said as a conflict")
    p.add_argument("--reembed", action="store_true",
                   help="the project was embedded with another embedder: re-chunk and re-embed all of it with "
                        "this one (default: an error, nothing ingested); with no paths, that alone (moving a "
                        "project to another embedder: logichunk ingest --reembed --embedder hash)")
    p.add_argument("--recut", action="store_true",
                   help="the project was chunked with other size settings (sizes, unit, tokenizer, cut_vectors): "
                        "cut every chapter again with these (default: an error, nothing ingested)")
    p.add_argument("--prune", action="store_true",
                   help="also remove the documents ingested from a file of these folders that is gone since "
                        "(deleted or renamed): the project follows the folder")
    p.add_argument("--quiet", action="store_true",
                   help="no notes on stderr (embedder, skipped and replaced files); files refused and folders "
                        "that could not be read are still said")
    p.add_argument("--verbose", action="store_true",
                   help="also name on stderr what is as it was at the last ingest: the files unchanged, those kept "
                        "as edited in the store whose file did not change (default: counted in the summary), and the "
                        "embedder when nothing was embedded")
    p.add_argument("--format", choices=["text", "jsonl"], default="text",
                   help="jsonl: the report as one JSON object (documents, chunks, unchanged and replaced files...)")
    p.add_argument("--tokenizer", default=None,
                   help="size parents and children in exact tokens (the size settings count tokens then): a "
                        "tiktoken encoding (cl100k_base, o200k_base), a tokenizer.json or Hugging Face folder, a hub "
                        "id, or 'embedder' (the --embedder's own); default: setting tokenizer, else setting unit")
    store_options(p)
    add_ingest_options(p)
    encoding_option(p)
    p.set_defaults(func=cmd_ingest)

    p = subparsers.add_parser("search", help="search a store (basic, parent, hierarchical, hybrid, graph-*)")
    p.add_argument("query")
    p.add_argument("--mode", choices=RETRIEVE_MODES, help="retrieval mode (default: parent)")
    p.add_argument("--top-k", type=int, help="number of results (default 5; graph modes: sentences, default 10)")
    p.add_argument("--include", choices=INCLUDE, default="all",
                   help="the hits kept: all (default; each says its origin), documents, or conversations (the topics "
                        "the conversation memory archived)")
    p.add_argument("--context-window", type=int_at_least(1),  # (said as the flag, not as context_window_size)
                   help="context window around the matched child (default 1000)")
    p.add_argument("--normalize", action=argparse.BooleanOptionalAction, default=None,
                   help="parent mode: rank by raw * sqrt(avg_size / size) (default: off, raw similarity; see "
                        "bench/QUALITY.md for why)")
    p.add_argument("--rerank", help="rerank the candidates: none (default), yesno[:PATH] or likelihood[:PATH] (an "
                                    "LM scorer, the packaged default LM or a local folder), cross:PATH (a local "
                                    "cross-encoder)")
    p.add_argument("--format", choices=["table", "jsonl"], default="table")
    store_options(p)
    p.set_defaults(func=cmd_search)

    p = subparsers.add_parser("edit", help="replace a block's text, or a document's whole text; re-chunks only what "
                              "changed")
    p.add_argument("--block", help="block id (see `logichunk blocks`)")
    p.add_argument("--document", help="document id (see `logichunk documents`): its whole text replaced, only the "
                   "blocks where it changed written")
    p.add_argument("--expected-sha256", help="with --document: refuse unless its text still hashes to this (the text "
                   "the edit started from)")
    p.add_argument("--file", help="new content from this file (- for stdin)")
    p.add_argument("--text", help="new content given inline")
    p.add_argument("--no-rechunk", action="store_true", help="only mark the block dirty")
    p.add_argument("--tokenizer", default=None,
                   help="the tokenizer the project was ingested with (--tokenizer of ingest): its sizes count tokens")
    p.add_argument("--format", choices=["text", "jsonl"], default="text",
                   help="jsonl: what was re-chunked as one JSON object (status, parents kept and written...)")
    store_options(p)
    encoding_option(p)
    p.set_defaults(func=cmd_edit)

    p = subparsers.add_parser("documents", help="list the documents of a store (ids for `delete`)")
    p.add_argument("--format", choices=["table", "jsonl"], default="table")
    store_options(p)
    p.set_defaults(func=cmd_documents)

    p = subparsers.add_parser("delete", help="remove documents from a store, with their chunks")
    p.add_argument("ids", nargs="+", help="document ids (see `logichunk documents`)")
    p.add_argument("--format", choices=["text", "jsonl"], default="text")
    store_options(p)
    p.set_defaults(func=cmd_delete)

    p = subparsers.add_parser("blocks", help="list the blocks of a store (ids for `edit`)")
    p.add_argument("--dirty", action="store_true", help="only dirty blocks")
    p.add_argument("--format", choices=["table", "jsonl"], default="table")
    store_options(p)
    p.set_defaults(func=cmd_blocks)

"""How the default chunker cuts source code passed as text: public code we did not write, on no evaluation set
(bench/QUALITY.md, thirty-fourth session). JavaScript under /usr/lib/node_modules/npm (Debian's npm package), C
headers under /usr/include, and with --py numpy's own modules; 1.5–40 KB files sampled evenly, N of each kind.

    python bench/code_layout_check.py [--files N] [--py] [--out result.json]

Counts, at max sizes 200/512/1000 (levels 1..3, the cascade's limits), over every cut between two sibling chunks:
  open_close  chunks that open with a closing-only line (}, });, ], end ...)
  reopen      chunks that open with a line that closes and reopens one construct (} else {, } catch (e) {,
              } finally {, } while (x);)
  after_cmt   cuts right after a comment line that lies directly above code (no blank line between);
              _avoidable: those where the comment run and the code line under it fit the level's limit
  deeper      cuts at a gap deeper than the shallowest gap available inside the two chunks the cut parts
              (available: a line start where both sides fit the level's limit, not before a closing-only
              line nor one that opens with a closer ("} else {"), not right under a comment line nor under a
              line that ends with an opener ("{", "[", "("); a cut inside a comment run is not counted)
  in_cmt      cuts between two lines of one comment run (no blank line between); _avoidable: those where the
              run (from its first line to the line under its last) fits the limit the cut was made under (the
              cascade level that made the cut); _below1: at cascade levels 2, 3
  tail_next   chunks that open inside a block (an indented line) and hold the end of a top-level definition (a
              closing line at column 0, a blank line) and text after it: a definition's tail filled with what follows
  code        files read as code with nesting (the layout's depth: some line deeper than another)
Every limit is the one of the cascade level that made the cut (:func:`cut_levels`), not the tree's level: a level
that leaves a piece whole (one child) is no level of the tree, its child level's chunks are cut under the next limit,
and a level that could not cut a glued run over its limit hands it on so too.
A folder that is absent is skipped with a line saying so; a file that is not UTF-8 is skipped.
"""

import json
import re
import sys
from pathlib import Path

from logichunk import chunk
from logichunk.chunkers import logic_chain
from logichunk.chunkers.logic_chain import level_sizes
from logichunk.text.sentences import split_sentences
from logichunk.text.structure import layout

#: a closing line at column 0, then a blank line, then more text: the end of a top-level definition inside a chunk
TOP_END = re.compile(r"^[)\]}][)\]};,]*[ \t]*\r?\n[ \t]*\r?\n(?=[ \t]*\S)", re.MULTILINE)
CLOSING = re.compile(r"(?:[)\]}][)\]};,]*|(?:end|fi|done|esac)\b[;,.]?)[ \t]*(?://.*|/\*.*\*/)?")
REOPEN = re.compile(r"[)\]}]+[ \t]*(?:else|catch|finally|while)\b.*")


def files(n):
    def sized(root, ext):
        if not Path(root).is_dir():
            print(f"{root} not found: its files skipped", file=sys.stderr)
            return []
        return sorted(p for p in Path(root).rglob(f"*.{ext}") if p.is_file() and 1500 <= p.stat().st_size <= 40000)
    js, hs = sized("/usr/lib/node_modules/npm", "js"), sized("/usr/include", "h")
    pick = lambda xs: xs[:: max(1, len(xs) // n)][:n]  # noqa: E731
    return pick(js) + pick(hs)


def line_kinds(text, py=False):
    """Per line start offset: (indent, kind) where kind is blank/comment/close/code (a stateful scan: a line
    inside or opening a /* */ comment, or opening with //, is a comment; a trailing comment leaves code code)."""
    out = {}
    at = 0
    inside = False
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        s = body.strip()
        if not s:
            kind = "blank"
        elif py:
            kind = "comment" if s.startswith("#") else "close" if CLOSING.fullmatch(s) else "code"
        elif inside:
            kind = "comment"
            inside = "*/" not in s
        elif s.startswith("//"):
            kind = "comment"
        elif s.startswith("/*"):
            kind = "comment"
            inside = "*/" not in s[2:]
        else:
            kind = "close" if CLOSING.fullmatch(s) else "code"
        out[at] = (len(body.expandtabs(8)) - len(body.expandtabs(8).lstrip()), kind)
        at += len(line)
    return out


def comment_run_start(starts, kinds, k):
    """The offset of the first line of the comment run whose last line starts at starts[k]."""
    while k > 0 and kinds[starts[k - 1]][1] == "comment":
        k -= 1
    return starts[k]


def cut_levels(text, m):
    """The tree of ``chunk(text, max_size=m)`` and, per offset cut between two chunks, the cascade level that made
    the cut: the first level whose chunks open there (read from the cascade's columns as each level adds them; a
    cut made by one level stays a chunk's edge at every level under it)."""
    made = {}
    add = logic_chain._Columns.add

    def record(self, level, ids, starts, *rest):
        for s in starts.tolist():
            made.setdefault(s, level)
        return add(self, level, ids, starts, *rest)
    logic_chain._Columns.add = record
    try:
        tree = chunk(text, max_size=m)
    finally:
        logic_chain._Columns.add = add
    return tree, made


def check(text, m, py=False):
    kinds = line_kinds(text, py)
    starts = sorted(kinds)
    tree, made = cut_levels(text, m)
    limits = level_sizes(m)
    by_parent = {}
    for c in tree:
        by_parent.setdefault(c.parent, []).append(c)
    r = dict(cuts=0, open_close=0, reopen=0, after_cmt=0, after_cmt_avoidable=0, deeper=0, in_cmt=0, in_cmt_avoidable=0, in_cmt_below1=0, tail_next=0,
             chunks=0, code=0)
    r["code"] = int(layout(split_sentences(text)).depth is not None)
    import bisect
    for sibs in by_parent.values():
        sibs.sort(key=lambda c: c.span.start)
        for c in sibs:
            r["chunks"] += 1
            first = text[c.span.start : c.span.end].strip().split("\n", 1)[0].strip() if text[c.span.start : c.span.end].strip() else ""
            if first and CLOSING.fullmatch(first) and c.span.start > 0:
                r["open_close"] += 1
            if first and REOPEN.fullmatch(first) and c.span.start > 0:
                r["reopen"] += 1
            body = text[c.span.start : c.span.end]
            if body[:1] in (" ", "\t") and TOP_END.search(body):
                r["tail_next"] += 1
        for a, b in zip(sibs, sibs[1:], strict=False):
            cut = a.span.end
            r["cuts"] += 1
            level = made[cut]  # (the cascade level that made the cut: the tree's level where none was dropped)
            lim = limits[min(level, len(limits)) - 1]
            # the line before the cut and the line at it
            k = bisect.bisect_right(starts, cut - 1) - 1
            at_line = cut in kinds
            if at_line and k >= 0:
                pk = kinds[starts[k]][1]
                # skip back over nothing: "directly above" means the previous line is the comment itself
                if pk == "comment" and kinds[cut][1] == "code":
                    r["after_cmt"] += 1
                    # avoidable: the comment run and the code line under it fit the level's limit together
                    j = bisect.bisect_right(starts, cut)
                    nxt = starts[j] if j < len(starts) else len(text)
                    if nxt - comment_run_start(starts, kinds, k) <= lim:
                        r["after_cmt_avoidable"] += 1
            # available gaps inside a ∪ b
            lo, hi = a.span.start, b.span.end
            i0, i1 = bisect.bisect_right(starts, lo), bisect.bisect_left(starts, hi)
            best = None
            for j in range(i0, i1):
                p = starts[j]
                ind, kind = kinds[p]
                if kind in ("blank", "close"):
                    continue
                if j > 0 and kinds[starts[j - 1]][1] == "comment" and kind in ("code", "comment"):
                    continue  # (under a comment: the code it leads into, or the comment's next line)
                if text[p : p + 200].lstrip()[:1] in ")]}":
                    continue  # (a line that opens by closing: "} else {", "})")
                if j > 0 and text[starts[j - 1] : p].rstrip()[-1:] in ("{", "[", "(") + ((":",) if py else ()):
                    continue  # (right under a line that opens a block: the chunk would end with "{")
                if p - lo > lim or hi - p > lim:
                    continue
                best = ind if best is None else min(best, ind)
            own = kinds[cut][0] if at_line and kinds[cut][1] != "blank" else None
            if at_line and kinds[cut][1] == "blank":  # a cut before blank lines: the next non-blank line's indent
                j = bisect.bisect_left(starts, cut)
                while j < len(starts) and kinds[starts[j]][1] == "blank":
                    j += 1
                own = kinds[starts[j]][0] if j < len(starts) else 0
            if at_line and kinds[cut][1] == "comment" and k >= 0 and kinds[starts[k]][1] == "comment":
                r["in_cmt"] += 1  # (a cut inside a comment run: prose, no nesting to compare)
                r["in_cmt_below1"] += level > 1
                j = bisect.bisect_left(starts, cut)
                while j < len(starts) and kinds[starts[j]][1] == "comment":
                    j += 1
                end = starts[j] if j < len(starts) else len(text)
                if end - comment_run_start(starts, kinds, k) <= lim:
                    r["in_cmt_avoidable"] += 1
                continue
            if best is not None and (own is None or own > best):
                r["deeper"] += 1
    return r


def main():
    n = int(sys.argv[sys.argv.index("--files") + 1]) if "--files" in sys.argv else 150
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    fs = files(n)
    res = {}
    groups = [("js", [p for p in fs if p.suffix == ".js"]), ("h", [p for p in fs if p.suffix == ".h"])]
    if "--py" in sys.argv:  # numpy's own Python modules (cmp.py's np: cases are its first 400)
        import numpy
        root = Path(numpy.__file__).parent
        pys = sorted(p for p in root.rglob("*.py") if 1500 <= p.stat().st_size <= 40000)
        groups = [("py", pys[:: max(1, len(pys) // n)][:n])]
    for group, sel in groups:
        for m in (200, 512, 1000):
            tot = dict(cuts=0, open_close=0, reopen=0, after_cmt=0, after_cmt_avoidable=0, deeper=0, in_cmt=0, in_cmt_avoidable=0, in_cmt_below1=0, tail_next=0,
                       chunks=0, code=0, files=0)
            for p in sel:
                try:
                    text = p.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    continue
                r = check(text, m, group == "py")
                for k, v in r.items():
                    tot[k] += v
                tot["files"] += 1
            res[f"{group}@{m}"] = tot
            print(group, m, tot, flush=True)
    if out:
        json.dump(res, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()

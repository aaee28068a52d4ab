"""The parent-child ("small-to-big") chunker.

Parents are the user's blocks, brought into bounds: a block over ``max_parent_size`` is split at
its semantic low points, and pieces under ``min_parent_size`` merge with a neighbour *in the same
chapter* (never across one; callers lay out one chapter at a time); the parents' size rules go through
:func:`logichunk.boundaries.fit`. Children are cut inside each parent by the global decision every
chunker uses (:func:`logichunk.boundaries.fit_global`: the scatter of the sentences' embeddings, the
parent's structure as :mod:`logichunk.text.structure` reads it, each gap's standardised ``1 - cos``),
fitted to ``child_min_size``/``child_target_size``/``child_max_size``; a child whose cut falls where the
cosine of adjacent sentences is under ``similarity_threshold`` or drops to a local minimum by more than
``cliff_drop`` is labelled a semantic cliff. :func:`~logichunk.boundaries.forced_splits` cuts a sentence
longer than a limit, which also records a bubble.

Embeddings come from ``vec_fn(texts) -> float32 (n, dim)`` with L2-normalised rows, so the store can
put its persistent embedding cache in front of the model. :func:`chunk_parent_child` is the plain
library entry: one text, blank-line blocks, a :class:`~logichunk.tree.ChunkTree` back. A chapter's
parents are cut in one pass (:func:`children_of`: their layouts read together, their sentences embedded
together, each text split once, :class:`Splits`); every parent gets the children a call for it alone
(:func:`split_children`) gives, so an edit re-chunks one parent as the first ingest did.

Exact tokens (``PCParams.tokenizer``): :meth:`PCParams.resolved` turns the knobs into the unit the
chunker runs with (:func:`logichunk.text.tokens.measure_for`) and lowers the limits by the tokenizer's
overhead (:func:`~logichunk.text.tokens.fit_limit`). A block is tokenised once and its pieces cut at
token starts; a parent is tokenised once (as it is stored) and its children cut at its token starts
(:meth:`~logichunk.text.measure.Meter.snap`: a token counts where it ends, so snapping changes no
measured size). Block edges are the user's and stay where they are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import boundaries as bd
from ..config import Settings as _D
from ..errors import InputError
from ..models.embedding import LRUMapping
from ..models.registry import embedder_of
from ..signals.cohesion import span_keys
from ..signals.entropy import zscore
from ..text.line_kinds import fence_spans
from ..text.measure import Measure, Meter, get_measure
from ..text.sentences import INDENT, SentenceSpans, split_many, split_sentences
from ..text.structure import CONTINUES, PARAGRAPH, SENTENCE, GapMarks, Layout, layout, layouts
from ..tree import ChunkTree, build_tree
from ..types import Bubble
from .logic_chain import structure_rewards

VecFn = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class PCParams:
    """The parent-child layout's knobs; defaults are :class:`~logichunk.config.Settings`'s."""

    max_parent_size: int = _D.max_parent_size
    min_parent_size: int = _D.min_parent_size
    child_min_size: int = _D.child_min_size
    child_max_size: int = _D.child_max_size
    child_target_size: int = _D.child_target_size
    similarity_threshold: float = _D.similarity_threshold
    cliff_drop: float = _D.cliff_drop
    #: ``chars``, ``bytes``, ``tokens`` (the offline estimate), or a resolved measure
    unit: str | Measure = "chars"
    #: exact tokens: a tokenizer spec (``cl100k_base``, a ``tokenizer.json``, ``embedder``...) or
    #: object, resolved by :meth:`resolved`; kept as given so the knobs travel to Ray workers as text
    tokenizer: Any = None

    @classmethod
    def from_settings(cls, s) -> PCParams:
        tok = getattr(s, "tokenizer", "") or None
        unit = "tokens" if tok is not None and s.unit == "chars" else s.unit  # a tokenizer measures tokens
        if tok is not None and unit != "tokens":
            raise InputError(f"a tokenizer measures tokens; it cannot size in {unit!r} (setting unit)")
        return cls(s.max_parent_size, s.min_parent_size, s.child_min_size, s.child_max_size,
                   s.child_target_size, s.similarity_threshold, s.cliff_drop, unit, tok)

    def resolved(self, embedder: Any = None) -> PCParams:
        """The knobs the chunker runs with: the tokenizer resolved to its measure (``"embedder"``:
        ``embedder``'s own) and each limit lowered by its overhead, so a parent or child tokenised
        on its own stays within the limit given. Without a tokenizer: ``self``."""
        if self.tokenizer is None:
            return self
        from ..text.tokens import fit_limit, measure_for

        unit = measure_for(self.unit, self.tokenizer, embedder=embedder)
        pmax, cmax = fit_limit(self.max_parent_size, unit), fit_limit(self.child_max_size, unit)
        target = min(self.child_target_size, cmax)
        return replace(self, max_parent_size=pmax, min_parent_size=min(self.min_parent_size, pmax),
                       child_max_size=cmax, child_target_size=target,
                       child_min_size=min(self.child_min_size, target), unit=unit, tokenizer=None)

    def __post_init__(self) -> None:
        if self.max_parent_size < 1 or self.child_max_size < 1:
            raise InputError("maximum sizes must be at least 1")
        if not 0 <= self.min_parent_size <= self.max_parent_size:
            raise InputError("min_parent_size must be between 0 and max_parent_size")
        if not 0 <= self.child_min_size <= self.child_target_size <= self.child_max_size:
            raise InputError("child sizes must satisfy min <= target <= max")


@dataclass(frozen=True)
class ParentSpec:
    """One parent. ``blocks`` are the indexes of the blocks it covers (the first one owns it);
    ``start``/``end`` are offsets from the start of the owning block into the concatenation of the
    covered blocks; ``segments`` are the parent-relative ``(start, end)`` of each covered block part."""

    blocks: tuple[int, ...]
    start: int
    end: int
    text: str
    method: str
    segments: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class ChildSpec:
    start: int  # relative to the parent text
    end: int
    method: str


# ----------------------------------------------------------------------------- helpers


class Splits(dict[str, SentenceSpans]):
    """Each text's sentences (:func:`~logichunk.text.sentences.split_sentences`), split once. Why: a
    chapter's pieces, its parents and their segments are mostly the same texts (a paragraph is a piece,
    a parent and its one segment), and a short text's split costs a few hundred microseconds, mostly
    fixed. One per chapter: it holds every text it was asked for; ``shared`` (a store's
    :func:`text_memo`) also keeps them for the next plan, and is asked first."""

    def __init__(self, shared: MutableMapping[str, SentenceSpans] | None = None) -> None:
        super().__init__()
        self.shared = shared

    def __missing__(self, text: str) -> SentenceSpans:
        self.prefetch([text])
        return self[text]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Split, in one pass (:func:`~logichunk.text.sentences.split_many`), those of ``texts`` not split yet:
        a chapter's blocks, a group's parents — the same splits, without a short text's fixed cost each."""
        todo = [t for t in dict.fromkeys(texts) if t not in self]
        if self.shared is not None:
            for t in todo:
                ss = self.shared.get(t)
                if ss is not None:
                    self[t] = ss
            todo = [t for t in todo if t not in self]
        for t, ss in zip(todo, split_many(todo), strict=True):
            self[t] = ss
            if self.shared is not None:
                self.shared[t] = ss


#: :func:`text_memo`'s bound: the texts of this many characters (a few MB of chapters; what was computed from
#: them, a split's arrays or a block's pieces, takes about as many bytes again at most)
MEMO_CHARS = 1 << 22


def text_memo() -> MutableMapping[str, Any]:
    """What a store computed from texts, kept from one plan of a chapter to the next (the latest
    :data:`MEMO_CHARS` characters of texts): their sentences (:class:`Splits`' ``shared``), an over-long
    block's pieces (:func:`layout_parents`' ``cut_blocks``). Why: an edit re-plans its whole chapter, and
    every block but the edited one was split and cut the time before — most of an edit's cost (a block of
    code: ~0.5 ms to split). Each is a function of the text (and of the store's embedder and knobs, fixed
    for a store), so what is kept is what would be computed. Thread-safe: a service plans chapters in
    several threads."""
    return LRUMapping(1 << 30, max_key_chars=MEMO_CHARS)


def _no_cut_ends(text: str, splits: Splits) -> np.ndarray:
    """The seams of ``text`` (:meth:`~logichunk.text.sentences.SentenceSpans.seams`) that no chunk may
    end at (after a heading, a lead-in: :func:`~logichunk.text.structure.layout`'s no-cut gaps), sorted."""
    ss = splits[text]
    if len(ss) < 2:
        return np.zeros(0, np.int64)
    return ss.seams()[layout(ss).no_cut]


def _atoms(text: str, segments: Sequence[tuple[int, int]], meter: Meter, max_size: int,
           bubbles: list[Bubble] | None, where: str, no_cut_ends: np.ndarray | None = None,
           splits: Splits | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The sentences of each segment ``text[lo:hi]`` as atoms (offsets in ``text``), a sentence over
    ``max_size`` cut at its inner breaks; one right after a no-cut gap (``no_cut_ends``:
    :func:`_no_cut_ends` of ``text``, read here only when a sentence is over and the caller has none),
    even across a segment's edge, leaves the heading room in its first piece
    (:func:`~logichunk.boundaries.forced_splits`). Returns starts, ends and two per-gap masks:
    ``inner`` (a gap inside one sentence) and ``edge`` (a segment's edge)."""
    splits = splits if splits is not None else Splits()
    st_l, en_l, last_l = [], [], []
    for lo, hi in segments:
        ss = splits[text[lo:hi]]
        st, en = ss.seam_spans()  # a line's indent goes with its line
        st_l.append(st + lo)
        en_l.append(en + lo)
        last = np.zeros(len(ss), bool)
        last[-1:] = True  # a segment ends after its last sentence
        last_l.append(last)
    s_starts = np.concatenate(st_l).astype(np.int64) if st_l else np.zeros(0, np.int64)
    s_ends = np.concatenate(en_l).astype(np.int64) if en_l else np.zeros(0, np.int64)
    seg_last = np.concatenate(last_l) if last_l else np.zeros(0, bool)
    big = np.flatnonzero(meter.sizes(s_starts, s_ends) > max_size)
    inside: dict[int, list[int]] = {}
    if big.size:
        if no_cut_ends is None:
            no_cut_ends = _no_cut_ends(text, splits)
        glued = np.zeros(s_starts.size, bool)
        glued[1:] = np.isin(s_ends[:-1], no_cut_ends)
        found, made = bd.forced_splits(text, meter, s_starts, s_ends, glued, big, max_size,
                                       attempts=("parent-child", "forced"), where=where)
        inside = dict(zip(big.tolist(), found, strict=True))
        if bubbles is not None:
            bubbles.extend(made)
    if not inside:  # (no sentence over the limit: the atoms are the sentences)
        return s_starts, s_ends, np.zeros(max(s_starts.size - 1, 0), bool), seg_last[:-1].copy()
    starts: list[int] = []
    ends: list[int] = []
    inner: list[bool] = []
    edge: list[bool] = []
    for i, (s, e) in enumerate(zip(s_starts.tolist(), s_ends.tolist(), strict=True)):
        pieces = [s, *inside.get(i, ()), e]
        for k in range(len(pieces) - 1):
            if starts:
                inner.append(k > 0)
                edge.append(k == 0 and bool(seg_last[i - 1]))
            starts.append(pieces[k])
            ends.append(pieces[k + 1])
    return np.asarray(starts, np.int64), np.asarray(ends, np.int64), np.asarray(inner, bool), np.asarray(edge, bool)


def _adjacent_cos(vecs: np.ndarray) -> np.ndarray:
    v = np.asarray(vecs, dtype=np.float32)
    if len(v) < 2:
        return np.zeros(0, np.float64)
    return np.einsum("ij,ij->i", v[:-1], v[1:]).astype(np.float64)


def _texts(text: str, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    return [text[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]


# ----------------------------------------------------------------------------- parents


def split_block(text: str, vec_fn: VecFn, p: PCParams, bubbles: list[Bubble] | None = None,
                where: str = "", splits: Splits | None = None) -> tuple[list[tuple[int, int]], list[float]]:
    """Pieces ``(start, end)`` of one block, each within ``max_parent_size``, cut at semantic lows.
    Also the break score (``1 - cos``) of the gap after each piece but the last."""
    meter = Meter(text, p.unit)
    total = meter.total()
    if total <= p.max_parent_size:
        return [(0, len(text))], []
    starts, ends, inner, _ = _atoms(text, [(0, len(text))], meter, p.max_parent_size, bubbles, where,
                                    splits=splits)
    cos = _adjacent_cos(vec_fn(_texts(text, starts, ends)))
    scores = np.where(inner, -1.0, 1.0 - cos)
    k = math.ceil(total / p.max_parent_size)
    target = min(p.max_parent_size, max(p.min_parent_size, 1, math.ceil(1.1 * total / k)))
    f = bd.fit(meter.sizes(starts, ends), scores,
               bd.SizeLimits(p.max_parent_size, target, min(p.min_parent_size, target)), ~inner)
    cuts = f.cuts.tolist()
    edges, kept = _snapped(meter, [int(ends[c]) for c in cuts])
    return [(edges[i], edges[i + 1]) for i in range(len(edges) - 1)], [float(scores[cuts[k]]) for k in kept]


def _snapped(meter: Meter, cuts: Sequence[int]) -> tuple[list[int], list[int]]:
    """``[0, *cuts, len]`` with each cut moved to the start of the token it lies inside (real
    tokenizers only), and the indexes of the cuts kept: a cut that lands on the one before it
    (both lay inside one token) goes, so no piece is empty."""
    n = len(meter.text)
    moved = meter.snap(np.asarray(cuts, np.int64)).tolist() if cuts else []
    edges, kept = [0], []
    for k, c in enumerate(moved):
        if edges[-1] < c < n:
            edges.append(int(c))
            kept.append(k)
    return [*edges, n], kept


def _ends_in_heading(blocks: Sequence[str], pieces: Sequence[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per piece ``(block, start, end)``: whether its last sentence belongs to what follows — a heading,
    a lead-in (``as follows:``), a fence's opening line — and whether it is a heading, which also opens
    a parent (read once over the chapter's text, :func:`logichunk.text.structure.layout`)."""
    text = "".join(blocks)
    sents = split_sentences(text)
    lay = layout(sents)
    base = np.concatenate(([0], np.cumsum([len(b) for b in blocks])))
    ends = np.asarray([base[b] + e for b, _, e in pieces], np.int64)
    seam_ends = sents.seam_spans()[1]
    i = np.searchsorted(seam_ends, ends)
    ok = (i < len(sents)) & (seam_ends[np.minimum(i, len(sents) - 1)] == ends)
    glued = np.zeros(len(pieces), dtype=bool)
    opens = np.zeros(len(pieces), dtype=bool)
    opens[ok] = lay.heading[i[ok]]
    glued[ok] = opens[ok] | np.concatenate((lay.no_cut, [False]))[i[ok]]
    return glued, opens


def _headings_open_parents(cuts: list[int], heads: np.ndarray, sizes: np.ndarray, limit: int,
                           opens: np.ndarray | None = None) -> list[int]:
    """Cuts (after piece ``c``) moved so that no parent ends with a heading: a cut right after a
    heading moves before it (the heading opens the next parent) or, where the heading stands alone,
    goes, when the parent that results fits ``limit`` (else it stays: the size limit comes first).
    A piece that belongs to what follows without opening a section (``heads`` but not ``opens``: a
    lead-in) first tries to keep its parent and take the next one in, which buries nothing."""
    cut = set(cuts)
    cum = np.concatenate(([0], np.cumsum(sizes)))
    n = len(sizes)
    for c in sorted(cuts):
        if c not in cut or not heads[c]:
            continue
        a = c  # the run of headings ending at piece c starts at piece a
        while a > 0 and heads[a - 1] and (a - 1) not in cut:
            a -= 1
        nxt = min([x for x in cut if x > c], default=n - 1)  # the next parent ends after piece nxt
        if opens is not None and not opens[a : c + 1].any():
            prev = max([x for x in cut if x < a], default=-1)  # this parent starts after piece prev
            if cum[nxt + 1] - cum[prev + 1] <= limit:
                cut.discard(c)
                continue
        if cum[nxt + 1] - cum[a] > limit:
            continue
        cut.discard(c)
        if a > 0 and (a - 1) not in cut:
            cut.add(a - 1)
    return sorted(cut)


def _small_parents_joined(cuts: list[int], heads: np.ndarray, sizes: np.ndarray, least: int, limit: int) -> list[int]:
    """``cuts`` without the ones that leave a parent under ``least`` beside a neighbour it fits with under ``limit``,
    except a cut before a piece that ends with a heading (it opens its parent: joined, it would be buried). Why:
    moving a cut so that a heading opens its parent (:func:`_headings_open_parents`) can strand the piece the fit
    had merged across it (a 37-character parent beside one of 65, under a minimum of 60)."""
    if least <= 0:
        return cuts
    cut = sorted(cuts)
    cum = np.concatenate(([0], np.cumsum(sizes)))
    i = 0
    while i <= len(cut):  # (parent i: pieces after cut[i - 1] through cut[i])
        lo = cut[i - 1] + 1 if i > 0 else 0
        hi = cut[i] if i < len(cut) else len(sizes) - 1
        if cum[hi + 1] - cum[lo] < least:
            if i > 0 and not heads[lo]:  # (into the parent before: the cut before this one goes)
                before = cut[i - 2] + 1 if i > 1 else 0
                if cum[hi + 1] - cum[before] <= limit:
                    del cut[i - 1]
                    continue
            if i < len(cut) and not heads[hi + 1]:  # (the parent after takes this one in)
                after = cut[i + 1] if i + 1 < len(cut) else len(sizes) - 1
                if cum[after + 1] - cum[lo] <= limit:
                    del cut[i]
                    continue
        i += 1
    return cut


def _fit_merged(cuts: list[int], texts: Sequence[str], scores: np.ndarray, p: PCParams) -> list[int]:
    """``cuts`` between pieces, with a merged parent that is over the maximum when its own text is
    measured cut again at its strongest inner gap, until every parent fits. Why: the merge adds the
    pieces' sizes, and a tokenizer's count is not additive where two pieces meet (cl100k reads the
    blank line ending one block and the spaces opening the next as one token or two)."""
    if isinstance(p.unit, str) and p.unit in ("chars", "bytes"):
        return cuts  # additive units: the sums are exact
    cut = sorted(cuts)
    changed = True
    while changed:
        changed = False
        bounds = [0] + [c + 1 for c in cut] + [len(texts)]
        for a, z in zip(bounds[:-1], bounds[1:], strict=True):
            if z - a > 1 and Meter("".join(texts[a:z]), p.unit).total() > p.max_parent_size:
                inner = range(a, z - 1)
                cut = sorted({*cut, max(inner, key=lambda i: float(scores[i]))})
                changed = True
                break
    return cut


def layout_parents(blocks: Sequence[str], vec_fn: VecFn, p: PCParams,
                   bubbles: list[Bubble] | None = None, splits: Splits | None = None,
                   cut_blocks: MutableMapping[str, Any] | None = None) -> list[ParentSpec]:
    """Parents of one chapter whose blocks (in order) are ``blocks``. Empty blocks own nothing.
    ``splits``: the chapter's :class:`Splits`, to share with :func:`children_of`. ``cut_blocks``: the
    pieces of over-long blocks from earlier plans with the same ``vec_fn`` and ``p`` (a store's
    :func:`text_memo`: :func:`split_block` is a function of the block's text, the embedder and the knobs),
    so an edit cuts again only the block it changed."""
    splits = splits if splits is not None else Splits()
    splits.prefetch([b for b in blocks if b])
    pieces: list[tuple[int, int, int]] = []  # (block, start, end)
    gap_scores: list[float] = []  # between consecutive pieces
    whole: list[bool] = []
    ends_first: list[tuple[str, str]] = []  # (first sentence, last sentence) per piece
    for b, text in enumerate(blocks):
        if not text:
            continue
        where = f"block {b}"
        got = cut_blocks.get(text) if cut_blocks is not None else None
        if got is None:
            made: list[Bubble] = []
            parts, inner_scores = split_block(text, vec_fn, p, made, where=where, splits=splits)
            if cut_blocks is not None and (len(parts) > 1 or made):
                cut_blocks[text] = (tuple(parts), tuple(inner_scores), tuple(made))  # (shared: read-only)
        else:  # (its bubbles name the block where it is now)
            parts, inner_scores, kept = got
            made = [replace(x, context={**x.context, "where": where}) for x in kept]
        if bubbles is not None:
            bubbles.extend(made)
        for j, (s, e) in enumerate(parts):
            if pieces:
                gap_scores.append(inner_scores[j - 1] if j > 0 else float("nan"))  # nan: block edge, below
            pieces.append((b, s, e))
            whole.append(len(parts) == 1)
            ss = splits[text[s:e]]
            ends_first.append((text[s + int(ss.starts[0]) : s + int(ss.ends[0])],
                               text[s + int(ss.starts[-1]) : s + int(ss.ends[-1])]))
    if not pieces:
        return []
    scores = np.asarray(gap_scores, dtype=np.float64)
    edge_gaps = np.flatnonzero(np.isnan(scores))
    if edge_gaps.size:
        left = vec_fn([ends_first[g][1] for g in edge_gaps.tolist()])
        right = vec_fn([ends_first[g + 1][0] for g in edge_gaps.tolist()])
        cos = np.einsum("ij,ij->i", left, right)
        scores[edge_gaps] = 1.0 + (1.0 - cos) / 2.0  # block edges are the strongest cuts
    heads, opens = _ends_in_heading(blocks, pieces) if len(pieces) > 1 else (np.zeros(len(pieces), bool),) * 2
    # a piece that ends with a heading belongs to the piece after it: the weakest cut of all
    scores[heads[:-1]] = -1e6
    sizes = np.asarray([Meter(blocks[b][s:e], p.unit).total() for b, s, e in pieces], np.int64)
    if p.min_parent_size > 0 and len(pieces) > 1:
        f = bd.fit(sizes, scores, bd.SizeLimits(p.max_parent_size, p.min_parent_size, p.min_parent_size))
        cuts = f.cuts.tolist()
    else:
        cuts = list(range(len(pieces) - 1))
    cuts = _headings_open_parents(cuts, heads, sizes, p.max_parent_size, opens)
    cuts = _small_parents_joined(cuts, heads, sizes, p.min_parent_size, p.max_parent_size)
    cuts = _fit_merged(cuts, [blocks[b][s:e] for b, s, e in pieces], scores, p)
    bounds = [0] + [c + 1 for c in cuts] + [len(pieces)]
    out: list[ParentSpec] = []
    for a, z in zip(bounds[:-1], bounds[1:], strict=True):
        run = pieces[a:z]
        owner = run[0][0]
        covered = tuple(sorted({b for b, _, _ in run}))
        # offset of each covered block's start from the owner's start
        base = {}
        acc = 0
        for b in range(owner, covered[-1] + 1):
            base[b] = acc
            acc += len(blocks[b])
        start = base[owner] + run[0][1]
        end = base[run[-1][0]] + run[-1][2]
        segs = []
        for b, s, e in run:
            segs.append((base[b] + s - start, base[b] + e - start))
        text = "".join(blocks[b][s:e] for b, s, e in run)
        if len(covered) > 1:
            method = "block-merge"
        elif all(whole[i] for i in range(a, z)):
            method = "block"
        else:
            method = "block-split"
        # merge adjacent segments of one block (pieces of a split block that merged back)
        merged: list[tuple[int, int]] = []
        seg_blocks = [b for b, _, _ in run]
        for i, (s, e) in enumerate(segs):
            if merged and seg_blocks[i] == seg_blocks[i - 1] and merged[-1][1] == s:
                merged[-1] = (merged[-1][0], e)
            else:
                merged.append((s, e))
        out.append(ParentSpec(covered, start, end, text, method, tuple(merged)))
    return out


# ----------------------------------------------------------------------------- children


def split_children(text: str, vec_fn: VecFn, p: PCParams, segments: Sequence[tuple[int, int]] | None = None,
                   bubbles: list[Bubble] | None = None, where: str = "") -> list[ChildSpec]:
    """Children tiling ``text`` (a parent), chosen by the global decision every chunker uses
    (:func:`~logichunk.boundaries.fit_global`): cohesion is the scatter of the atoms' embeddings, the
    rewards are the parent's structure as the cascade reads it (:func:`~.logic_chain.structure_rewards`:
    a heading opens a child and never ends one, a paragraph that fits stays whole) plus each gap's
    ``1 - cos`` standardised over the parent (no unit: an embedder whose cosines all lie low cuts no
    more than one whose cosines lie high); the children fit ``child_max_size`` and lean towards
    ``child_target_size``. Why not cliffs first, then sizes (as before): a rule that picks cliffs gap by
    gap and then fits them to the limits cuts where the next cliff happens to fall; on the dev splits
    (``bench/QUALITY.md``) the global choice was as good on recall and better on IoU and rank. Each
    child is labelled by the cut that ends it: ``semantic-cliff`` where the cosine there is under
    ``similarity_threshold`` or a local minimum deeper than ``cliff_drop``, ``size-split`` where the
    limits chose it elsewhere, ``inner-break`` inside a sentence. ``segments`` (block parts) are never
    crossed by a sentence and their edges are candidate cuts. Several parents: :func:`children_of`."""
    return children_of([text], vec_fn, p, [segments], [bubbles], [where])[0]


#: :func:`children_of` reads parents in groups of about this many characters: their sentences' vectors
#: (and an embedder's work on them) are held together, so a long text's memory stays flat; a larger
#: group gains little speed (the layout's fixed costs are already shared by ~20 parents) and costs
#: memory (Chinese at 64 K characters: +20 MB in the hash embedder's batch)
GROUP_CHARS = 1 << 15


def children_of(texts: Sequence[str], vec_fn: VecFn, p: PCParams,
                segments: Sequence[Sequence[tuple[int, int]] | None] | None = None,
                bubbles: Sequence[list[Bubble] | None] | None = None,
                wheres: Sequence[str] | None = None, splits: Splits | None = None) -> list[list[ChildSpec]]:
    """:func:`split_children` of each parent of ``texts`` (with its ``segments``, ``bubbles`` list and
    ``where``), the children each call alone gives, in one pass per group of parents: their layouts read
    in one call (:func:`~logichunk.text.structure.layouts`) and their sentences embedded in one call of
    ``vec_fn``. Why: each parent alone paid the layout's fixed costs (~0.4 ms a paragraph), and an
    embedder is fastest on many texts at once; a store's parents are a few paragraphs each. ``splits``:
    the chapter's :class:`Splits` (:func:`layout_parents` has split most parents and segments already)."""
    splits = splits if splits is not None else Splits()
    n = len(texts)
    segs = list(segments) if segments is not None else [None] * n
    bubs = list(bubbles) if bubbles is not None else [None] * n
    where = list(wheres) if wheres is not None else [""] * n
    if not len(segs) == len(bubs) == len(where) == n:
        raise InputError("children_of: one segments, bubbles and where per parent")
    out: list[list[ChildSpec]] = []
    k = 0
    while k < n:
        z, size = k, 0
        while z < n and (z == k or size + len(texts[z]) <= GROUP_CHARS):
            size += len(texts[z])
            z += 1
        out.extend(_children_group(texts[k:z], vec_fn, p, segs[k:z], bubs[k:z], where[k:z], splits))
        k = z
    return out


def _children_group(texts: Sequence[str], vec_fn: VecFn, p: PCParams,
                    segments: Sequence[Sequence[tuple[int, int]] | None], bubbles: Sequence[list[Bubble] | None],
                    wheres: Sequence[str], splits: Splits) -> list[list[ChildSpec]]:
    """:func:`children_of` for one group of parents."""
    splits.prefetch([t for t in texts if t])
    sents = [splits[t] for t in texts]
    full = [k for k, t in enumerate(texts) if t]
    lays = dict(zip(full, layouts([texts[k] for k in full], [sents[k] for k in full]), strict=True))
    read = {}  # per parent: its meter, seams and layout, and its atoms (starts, ends, inner, edge)
    for k in full:
        meter = Meter(texts[k], p.unit)
        segs = list(segments[k]) if segments[k] else [(0, len(texts[k]))]
        lay = lays[k] if len(sents[k]) > 1 else None
        seams = sents[k].seams() if lay is not None else np.zeros(0, np.int64)
        no_cut_ends = seams[lay.no_cut] if lay is not None else np.zeros(0, np.int64)
        read[k] = (meter, seams, lay, *_atoms(texts[k], segs, meter, p.child_max_size, bubbles[k], wheres[k],
                                               no_cut_ends, splits))
    # every parent's atoms embedded at once (one that is one atom is one child: no vector needed)
    many = [k for k in full if read[k][3].size > 1]
    pieces = [t for k in many for t in _texts(texts[k], read[k][3], read[k][4])]
    vecs = np.asarray(vec_fn(pieces)) if pieces else np.zeros((0, 0))
    rows = {}
    o = 0
    for k in many:
        m = read[k][3].size
        rows[k] = vecs[o : o + m]  # (as the embedder gives them; in float64 one parent at a time)
        o += m
    out: list[list[ChildSpec]] = []
    for k, text in enumerate(texts):
        if not text:
            out.append([])
        elif k not in rows:
            out.append([ChildSpec(0, len(text), "semantic-cliff")])
        else:
            out.append(_cut_children(text, *read[k], np.asarray(rows[k], dtype=np.float64), p))
    return out


def _cut_children(text: str, meter: Meter, seams: np.ndarray, lay: Layout | None, starts: np.ndarray,
                  ends: np.ndarray, inner: np.ndarray, edge: np.ndarray, vecs: np.ndarray,
                  p: PCParams) -> list[ChildSpec]:
    """One parent's children from its atoms (``starts``/``ends``, gaps ``inner`` to a sentence or at a
    segment's ``edge``), their vectors and the parent's layout (None: one sentence)."""
    n = starts.size
    cos = _adjacent_cos(vecs)
    # each gap between sentences read as the parent's layout reads it; a cut inside a sentence is the
    # weakest structure, and a gap the parent's sentences do not have (a segment read alone may split
    # otherwise) a sentence's break, or a paragraph's at a block's edge
    strength = np.where(inner, CONTINUES, np.where(edge, PARAGRAPH, SENTENCE)).astype(np.int64)
    heading, weak = np.zeros(n - 1, bool), np.zeros(n - 1, bool)
    none = np.zeros(n - 1, bool)
    m = GapMarks(none, none, none, none)
    if lay is not None:
        k = np.minimum(np.searchsorted(seams, ends[:-1]), seams.size - 1)
        at = np.flatnonzero(~inner & (seams[k] == ends[:-1]))
        strength[at] = lay.strength[k[at]]
        heading[at] = lay.no_cut[k[at]]
        weak[at] = lay.lead_in[k[at]]
        m = lay.marks_at(at, k[at], n - 1)
    sizes = meter.sizes(starts, ends)
    reward, forbid = structure_rewards(strength, sizes, p.child_max_size, block=m.block, held=heading, weak=weak,
                                       introduces=m.introduces, parts=m.parts, lists=m.lists, depth=m.depth)
    signal = np.zeros(n - 1)
    signal[~inner] = zscore(1.0 - cos[~inner])
    reward = bd.forbid(reward + signal, heading & ~inner, weak)
    norm = np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = vecs / np.where(norm > 0, norm, 1.0)
    limits = bd.SizeLimits(p.child_max_size, p.child_target_size, p.child_min_size)
    cuts = bd.fit_global(sizes, rows, reward, limits, glue=forbid & ~inner,
                         penalty=bd.chunk_prices(rows, span_keys(text, starts, ends)),
                         apart=strength >= PARAGRAPH).tolist()
    edges, kept = _snapped(meter, [int(ends[c]) for c in cuts])
    cuts = [cuts[k] for k in kept]
    cliff = (cos < p.similarity_threshold) | bd.minima(cos, p.cliff_drop)
    method = ["inner-break" if inner[c] else "semantic-cliff" if cliff[c] else "size-split" for c in cuts]
    method.append("semantic-cliff" if not cuts or cliff[cuts[-1]] else "size-split")  # the last: as its start
    return [ChildSpec(edges[i], edges[i + 1], method[i]) for i in range(len(edges) - 1)]


# ----------------------------------------------------------------------------- library entry

_BLANK = re.compile(r"\n[ \t\r]*\n\s*")  # CRLF files too: \r\n\r\n (read in :func:`lf_lines`)
#: line ends that are not ``\n`` nor the ``\r`` of a ``\r\n``, as the sentence splitter reads them (but the form
#: feed and vertical tab, which join a PDF's pages inside a block): a lone ``\r`` (old Mac), NEL, U+2028, U+2029
_OTHER_LINE_ENDS = re.compile("\r(?!\n)|[\x85\u2028\u2029]")


def lf_lines(text: str) -> str:
    """``text`` with every other line end (:data:`_OTHER_LINE_ENDS`) read as ``\\n``, one character for one, so
    that a search by ``\\n`` lines finds the same blocks and headings in a CR-only file as in its LF twin, at
    offsets that are the text's own (the text itself is never changed: only this copy is searched)."""
    if "\r" not in text and "\x85" not in text and "\u2028" not in text and "\u2029" not in text:
        return text
    return _OTHER_LINE_ENDS.sub("\n", text)


def _line_start(text: str, at: int) -> int:
    """``at`` moved back over the indent of its line (a line's indent goes with its line, as at the
    sentences' seams: :meth:`~logichunk.text.sentences.SentenceSpans.seams`)."""
    while at > 0 and ord(text[at - 1]) < INDENT.size and INDENT[ord(text[at - 1])]:
        at -= 1
    return at


def blank_line_blocks(text: str) -> list[str]:
    """``text`` cut after each blank-line run (before the indent of the line that follows it), except
    inside fenced code, front matter or an HTML comment (a block with blank lines stays one block), and
    except the text's leading whitespace, which belongs to the first block (as it belongs to the first
    sentence); the pieces concatenate back to ``text``."""
    lead = len(text) - len(text.lstrip())
    lines = lf_lines(text)
    cuts = [_line_start(text, m.end()) for m in _BLANK.finditer(lines) if lead < m.end() < len(text)]
    fences = fence_spans(lines) if cuts else []  # (it reads only the marks the text holds)
    if fences:
        cuts = [c for c in cuts if not any(a < c < b for a, b in fences)]
    edges = [0, *cuts, len(text)] if text else [0]
    return [text[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


#: :func:`chunk_parent_child` remembers the vectors of this many texts it embedded last (a block's edge
#: sentences are asked for again by its neighbours; every vector kept made a long text's memory grow with it:
#: 8 MB of English held ~250 MB of them)
MEMO_TEXTS = 4096


def chunk_parent_child(text: str, embedder, params: PCParams | None = None,
                       blocks: Sequence[str] | None = None, *, source: str = "<text>") -> ChunkTree:
    """Parents (level 1) and children (level 2) of one text. ``blocks`` (concatenating to ``text``)
    default to blank-line blocks. ``embedder`` follows the :class:`logichunk.models.Embedder` protocol.
    Bubbles carry document offsets, the level whose limit forced the cut, and ``source``; a sentence
    cut for its parent is one bubble (its pieces cut again for the children are not reported twice).
    ``embedder`` may also be named (``"hash"``, ``"e5"``, ...: :func:`~logichunk.models.registry.embedder_of`)."""
    embedder = embedder_of(embedder, cached=False)  # (its vectors are remembered below)
    if embedder is None:
        raise InputError("chunk_parent_child needs an embedder: a model or its name (hash, e5, auto, ...)")
    p = (params or PCParams()).resolved(embedder)
    if not isinstance(text, str):
        raise InputError("text must be a str")
    blocks = list(blocks) if blocks is not None else blank_line_blocks(text)
    if "".join(blocks) != text:
        raise InputError("blocks must concatenate to the text")
    memo: LRUMapping[np.ndarray] = LRUMapping(MEMO_TEXTS)  # the latest texts' vectors (a text asked again)

    def vec_fn(texts: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in memo))
        fresh = dict(zip(todo, np.asarray(embedder.embed(todo, kind="passage"), np.float32), strict=True)) \
            if todo else {}
        out = [fresh[t] if t in fresh else memo[t] for t in texts]
        for t, v in zip(texts, out, strict=True):
            memo[t] = v
        return np.stack(out) if texts else np.zeros((0, embedder.dim), np.float32)

    layout: list[Bubble] = []
    splits = Splits()
    parents = layout_parents(blocks, vec_fn, p, layout, splits)
    offs = np.concatenate(([0], np.cumsum([len(b) for b in blocks]))).tolist()
    # block-relative spans -> document offsets (``where`` is "block N")
    bubbles = [_placed(b, offs[block_of(b)], 1, source) for b in layout]
    covered = [tuple(b.context["span"]) for b in bubbles]
    nodes = []
    found: list[list[Bubble]] = [[] for _ in parents]
    children = children_of([par.text for par in parents], vec_fn, p, [par.segments for par in parents], found,
                           [f"parent {i + 1}" for i in range(len(parents))], splits)
    for i, (par, kids, child_bubbles) in enumerate(zip(parents, children, found, strict=True)):
        pid = str(i + 1)
        g0 = offs[par.blocks[0]] + par.start
        pm = Meter(par.text, p.unit)  # sizes in the unit, as the other chunkers report them (chars: len)
        nodes.append((pid, g0, g0 + len(par.text), par.method, {"size": pm.total()}))
        for b in child_bubbles:
            placed = _placed(b, g0, 2, source)
            a, e = placed.context["span"]
            if not any(ca <= a and e <= ce for ca, ce in covered):  # a piece of a sentence reported above
                bubbles.append(placed)
        if len(kids) > 1:
            for k, c in enumerate(kids):
                nodes.append((f"{pid}.{k + 1}", g0 + c.start, g0 + c.end, c.method, {"size": pm.size(c.start, c.end)}))
    return build_tree(text, nodes, bubbles=tuple(bubbles), unit=get_measure(p.unit).name)


def block_of(bubble: Bubble) -> int:
    """The index of the block a :func:`layout_parents` bubble is about (its ``where``: "block N")."""
    return int(str(bubble.context["where"]).split()[-1])


def _placed(b: Bubble, offset: int, level: int, source: str) -> Bubble:
    """``b`` with its span moved by ``offset`` into the document, its level and source set."""
    a, e = b.context["span"]
    return Bubble(b.category, b.content, b.priority,
                  {**b.context, "span": [a + offset, e + offset], "level": level, "source": source})

"""The logic-chain chunker: a four-tier cascade that falls back from pure algorithm to LLM help to a
forced split, level by level, and records every failure.

For each piece (the whole text at level 1, a chunk at deeper levels) with a size limit ``L``:

* **tier 1, entropy** — the model-free gap signal scores every sentence gap; its peaks (and
  paragraph or heading breaks) are the trusted candidates; a run between candidates over ``L`` is
  where tier 1 failed;
* **tier 2, llm** — runs still over ``L`` are shown to the LLM, which points at sentence numbers
  where the logic breaks (skipped, and counted as skipped, without an LLM);
* **tier 3, composite** — the gaps of runs still over ``L`` are rescored by a composite of entropy
  and n-gram perplexity (and LM perplexity when one is configured), where a run is long enough for
  the composite's windows (:meth:`~logichunk.signals.composite.CompositeSignal.window`): its new
  component, the bigram divergence, reads 100 characters on each side of a gap, so in a run under 200
  characters no gap has its windows inside the run, and its entropy component is tier 1's own score.
  Such a run is left to tier 1 (cut at its best tier-1 gaps, as with ``composite=False``) and counted
  in ``stats["tier3_skipped"]``; with an LM, whose reading has no such bound, every run is rescored;
* **tier 4, forced** — a single sentence over ``L`` is cut inside at its best clause/word break,
  and a :class:`~logichunk.types.Bubble` records it for an LLM reviewer.

Then the level's cuts are chosen. By default (``selection="global"``) one dynamic programme decides
them for every piece at once (:func:`~logichunk.boundaries.fit_global`): cohesion inside chunks (the
scatter of sentence vectors: the document's own content words, or the embedder's vectors when the
tier-1 signal embeds), the author's structure (:mod:`~logichunk.text.structure`: a heading opens a
chunk and never ends one, no cut inside a paragraph or code fence that fits) and the tiers' scores
as rewards, every chunk within ``L``. ``selection="local"`` keeps the earlier rule: candidates
merged least trusted and weakest cut first, up to the target. Pieces over the next level's limit get
children the same way, down to ``len(sizes)`` levels. Every chunk records the tier of the cut that
closes it (the last chunk of a piece: the cut that opens it): ``composite`` only where tier 3 scored
that gap; a cut the global choice makes at a gap tier 3 did not score (in a run it left to tier 1, or
outside every failing run) is tier 1's, named by its signal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from .. import boundaries as bd
from .. import native
from ..errors import InputError
from ..ids import child_ids
from ..signals import GapSignal
from ..signals.cohesion import lexical_rows, lexical_rows_keys, span_keys
from ..signals.composite import CompositeSignal
from ..signals.entropy import EntropySignal
from ..sparse_rows import SparseRows
from ..text.measure import Measure, Meter, get_measure
from ..text.sentences import BREAK_PARAGRAPH, SentenceSpans, split_sentences
from ..text.structure import LINE, PARAGRAPH, layout
from ..text.tokens import fit_limit, measure_for
from ..tree import ChunkTree, build_tree, build_tree_columns
from ..types import Bubble
from .llm_breaks import ChatModel, llm_breaks
from .overlap import add_overlap, check_overlap
from .snap import snap_tree


def level_sizes(max_size: int = 1000, levels: int = 3) -> tuple[int, ...]:
    """Default limits per level, from the top down: the maximum, half, a fifth (1000/500/200); at
    most :data:`MAX_LEVELS` of them."""
    max_size = check_size(max_size)
    if not _is_int(levels) or levels < 1:
        raise InputError(f"levels must be a positive integer, got {levels!r}")
    ratios = (1.0, 0.5, 0.2, 0.1, 0.05)
    out = []
    for k in range(min(int(levels), MAX_LEVELS)):  # type: ignore[call-overload]
        r = ratios[k] if k < len(ratios) else ratios[-1] / 2 ** (k - len(ratios) + 1)
        out.append(max(1, int(max_size * r)))
    return tuple(out)


@dataclass(frozen=True)
class CascadeSettings:
    """Knobs of the cascade. ``sizes`` are the limits per level (top first), in ``unit``.

    ``target_ratio``: pieces merge up to ``ratio * limit``. ``peak_drop``: θ, how far a gap score
    must rise above a neighbour to be a tier-1 candidate. ``structure_bonus``: added to gap scores
    by break kind (none, line, paragraph, heading/fence) so structure the author wrote counts.
    ``composite``: run tier 3 on the runs long enough for its windows (shorter ones are left to
    tier 1 and counted in ``stats["tier3_skipped"]``; see the module docstring); off, every run that
    tier 1 (and 2) could not split is split at its strongest tier-1 gaps instead — the fastest cascade
    (up to 1.3× on English prose), labelled ``entropy``.
    ``selection``: how a level's cuts are chosen among the scored gaps. ``"global"`` (default): the
    dynamic programme of :func:`~logichunk.boundaries.fit_global` — lexical cohesion inside chunks,
    the author's structure and the gap scores as rewards, headings opening chunks, no cut inside a
    paragraph that fits. ``"local"``: the earlier rule, candidates at score peaks merged weakest
    first (:func:`~logichunk.boundaries.fit`), kept for comparison.
    """

    sizes: tuple[int, ...] = (1000, 500, 200)
    unit: str | Measure = "chars"
    target_ratio: float = 1.0
    peak_drop: float = 0.0
    structure_bonus: tuple[float, float, float, float] = (0.0, 0.05, 0.3, 1.0)
    signal: GapSignal = field(default_factory=EntropySignal)
    composite: bool = True
    selection: str = "global"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sizes", check_sizes(self.sizes))  # (a limit past SIZE_CAP read as it)
        if self.selection not in SELECTIONS:
            raise InputError(f"selection must be one of {', '.join(SELECTIONS)}, got {self.selection!r}")
        if isinstance(self.target_ratio, bool) or not isinstance(self.target_ratio, int | float | np.floating) \
                or not 0 < self.target_ratio <= 1:
            raise InputError(f"target ratio must be a number in (0, 1], got {self.target_ratio!r}")
        get_measure(self.unit)  # an unknown unit is an InputError here, even for an empty text


SELECTIONS = ("global", "local")

#: reward of cutting at a gap of each structural strength (continues, sentence, line, paragraph, block,
#: section): a paragraph break is neutral, a cut inside one costs, a section break is sought, and a cut
#: before a sentence that leans on the one before costs one step more than a plain sentence break;
#: in units of one sentence's scatter; an ordering of the author's marks, set once on the zh example
#: (bench/QUALITY.md), the continuation step fixed a priori as the same step below a sentence break
STRUCTURE_REWARD = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 2.0])
#: reward of a gap the LLM (tier 2) named as a break: as strong as a section heading
LLM_REWARD = 2.0
#: what a cut costs per level of nesting in source code (:mod:`logichunk.text.code_lines`): the fill preference
#: of both chunks it parts (:data:`~logichunk.boundaries.sized.FILL_WEIGHT` each), so a cut one level deeper is
#: never taken to fill chunks towards the target (fixed a priori, not tuned); at every level of the cascade alike
#: (each level's fill cost is its own target's, at most ``FILL_WEIGHT`` a chunk). The end of a top-level definition
#: (depth -1) earns it: a cut there is not refused to fill the chunks it parts, so a function's tail no longer takes
#: the next top-level statement in (a new chunk's own price, the null penalty, still weighs against it)
DEPTH_STEP = 2 * bd.FILL_WEIGHT


def structure_rewards(strength: np.ndarray, sizes: np.ndarray, max_size: int,
                      edges: np.ndarray | None = None, block: np.ndarray | None = None,
                      held: np.ndarray | None = None, weak: np.ndarray | None = None,
                      introduces: np.ndarray | None = None, parts: np.ndarray | None = None,
                      lists: np.ndarray | None = None, runs_on: np.ndarray | None = None,
                      lead_edges: np.ndarray | None = None,
                      depth: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The author's structure as the global choice reads it, for atoms of ``sizes`` whose gaps have
    structural ``strength`` (:mod:`logichunk.text.structure`): the reward of cutting each gap
    (:data:`STRUCTURE_REWARD`), and the gaps where no cut may fall — inside a paragraph that fits
    ``max_size``, and inside a block (``block``: per gap, inside a fence, a literal block, a comment) that
    fits it, even where the lead-in over it makes the paragraph too long (a code block is cut only where
    it alone exceeds the limit), unless a heading's run reaches into the block — every gap of it is
    ``held`` (no-cut) already (Node's ``<!-- YAML ... -->`` under its heading), or the gap before it is held
    and not ``weak`` (a heading's bond, not a lead-in's: a heading over its fence) — where the heading's
    rules say where that run breaks: the heading keeps the block's first lines rather than stand alone.
    ``edges``: gaps that are always cut (piece edges: they also close a paragraph). ``introduces``: the
    gaps after a lead-in (``as follows:`` over its list): what follows one, up to the next paragraph break or
    the next lead-in (:func:`_lead_ins_open`), is kept whole where it fits alone, though the lead-in joins it
    into a paragraph too long — the limit then breaks the lead-in's bond, or a sentence before it, never the
    list, the table or the body it introduces. ``parts``: the gaps of a block where a blank line falls (between two functions of a fence): a
    block over the limit is cut there first — a stretch between two of them that fits stays whole, as a
    paragraph that fits does. ``lists``: the gaps between two items of one list: a list that fits stays
    whole, though a blank line parts its items (a loose list; an article's ``（一）…；`` items), and what a
    lead-in introduces runs over all its items; where the list does not fit, each item's line that fits stays whole
    (:func:`_items_whole`: a tight list's items are parted by line breaks, no paragraph's). ``runs_on``: per atom, a piece ends after it where the text goes on
    in the same paragraph and no lead-in opens there (below level 1, a piece edge inside what a lead-in
    introduces): what a lead-in introduces, or a list it introduces, that reaches it is cut off, not known to fit,
    so it is not kept whole (kept whole, the lead-in's bond was the only cut and a chunk ended with the lead-in);
    ``block`` at an edge (a piece edge inside a block: a fence a level-1 cut parted): the block's part inside the
    piece is not known to fit, so it is cut between its lines where the lead-in over it and its first stretch
    fit, not kept whole behind the lead-in's bond; nor is the stretch that reaches the edge, unless ``parts`` at
    the edge (a blank line, or a paragraph break, of the block) ends it there.
    ``lead_edges``: the piece edges that are a lead-in's bond (a piece that ends with a lead-in, below level 1):
    that lead-in still opens before its head, parting what another lead-in introduces there (kept whole
    through it, the first lead-in's bond was the only cut left and a chunk ended with it). In a chain of lead-ins
    (``The helper is:`` over ``On POSIX:`` over its code) the bond of one where the next opens is priced
    :data:`~logichunk.boundaries.HEAD_FORBIDDEN`, above the last one's bond: where the chain must break, the
    last lead-in stays with what it introduces.
    The reward of the gap before a lead-in that follows what another introduces, inside a paragraph that fits, is :data:`~logichunk.boundaries.HEAD_FORBIDDEN` (no cut by choice;
    where the paragraph must break, there first). ``depth``: per gap, how deep the line after it is nested in a
    text of source code (:mod:`logichunk.text.code_lines`): each level costs :data:`DEPTH_STEP`, so where a block
    of code must be cut the gap before its shallowest line goes first. Shared by the cascade, parent-child and the
    Meta-Chunking chunkers' global selection."""
    strength = np.asarray(strength, dtype=np.int64)
    cut = strength >= PARAGRAPH if edges is None else (strength >= PARAGRAPH) | edges
    # what the fit rule keeps whole where it fits, by three partitions whose glued runs nest, so that they never
    # chain into a run over the limit (two that overlapped made a level-1 chunk of 187 under 150): paragraphs,
    # a lead-in's own bond left out (a weak no-cut, priced, not glued: the limit breaks it first), and the gap
    # where a lead-in opens after what another introduces (priced a step above); what a lead-in introduces, up to
    # the next paragraph break or the next lead-in; and paragraphs parted where lead-ins open, with a list's items
    # as one (a list that fits stays whole, what a lead-in introduces running over all its items; its items keep
    # their own protection where it does not fit). The three part at the same lead-in gaps (``opens``), so they
    # still nest (a list's run parted before a lead-in inside a paragraph that fits, glued, chained with that
    # paragraph's run into a level-1 chunk of 1,059 under 1,000)
    forbid = _fits_whole(cut, sizes, max_size)
    in_paragraph = forbid.copy()  # (inside a paragraph that fits)
    reward = STRUCTURE_REWARD[strength]
    if depth is not None:
        reward = reward - DEPTH_STEP * np.asarray(depth, dtype=np.float64)
    listed = cut if lists is None or not lists.any() else cut & ~lists if edges is None else (cut & ~lists) | edges
    opens = introduces
    leads = introduces if introduces is None or lead_edges is None else introduces | lead_edges
    if leads is not None and introduces is not None and leads.any():
        # (what a lead-in introduces ends where the next lead-in opens: inside a paragraph that fits, the gap
        # there is priced, not glued, so where the paragraph must break it breaks there before a lead-in's bond;
        # a lead-in's bond where the next opens, a step above the next one's bond)
        heads = _lead_in_heads(leads, held)
        opens = _lead_ins_open(leads, heads, parted=listed, kept=forbid)
        chained = np.zeros(introduces.size, bool)
        chained[heads] = True
        reward = np.where((forbid & opens & ~introduces) | (chained & introduces), bd.HEAD_FORBIDDEN, reward)
        forbid &= ~opens
        part = cut | opens
        ids, fits = _parts(part, sizes, max_size)
        opened = np.zeros(fits.size, bool)
        opened[ids[1:][introduces]] = True  # (the parts that open right after a lead-in)
        if runs_on is not None:
            fits[ids[runs_on]] = False  # (cut off by a piece edge: what it introduces goes on past it)
        forbid |= ~part & (fits & opened)[ids[:-1]]
    if lists is not None and lists.any():
        merged = listed if opens is None else listed | (opens & ~_item_lead_ins(introduces, listed, lists, in_paragraph))
        ids, fits = _parts(merged, sizes, max_size)
        has_list = np.zeros(fits.size, bool)
        has_list[ids[:-1][lists & ~merged]] = True  # (only the parts that hold a list: the others are paragraphs)
        if runs_on is not None and introduces is not None:  # (a list a lead-in introduces, cut off by a piece edge)
            opened = np.zeros(fits.size, bool)
            opened[ids[1:][introduces & merged]] = True
            off = ids[runs_on]
            fits[off[opened[off]]] = False
        forbid |= ~merged & (fits & has_list)[ids[:-1]]
        lines, items = (strength >= LINE, lists) if held is None else ((strength >= LINE) & ~held, lists & ~held)
        forbid |= _items_whole(merged, items, lines, sizes, max_size)
    if block is not None and block.any():
        inside = block if edges is None else block & ~edges
        if introduces is not None:
            # (a block's first gap that is a lead-in's bond, the ``something like::`` line over its literal block, is
            # the lead-in's, not the block's: kept in the block's run, the block with its lead-in that fitted was
            # glued, and chained with what the lead-in introduces, kept whole up to the next paragraph break, into a
            # level-1 chunk over the maximum: 154 under 120; over the limit, its first stretch kept whole with the
            # lead-in chained so with the block behind the bond: 514 under 450)
            inside = inside & ~(introduces & ~np.concatenate(([False], inside[:-1])))
        run = np.diff(np.concatenate(([0], inside.view(np.int8), [0])))
        g0, g1 = np.flatnonzero(run == 1), np.flatnonzero(run == -1)  # gaps [g0, g1): atoms g0 .. g1
        total = np.zeros(sizes.size + 1)
        np.cumsum(sizes, out=total[1:])
        fits = total[g1 + 1] - total[g0] <= max_size
        open_end = None  # (per atom: a piece ends after it inside a block's stretch that goes on past the edge)
        through = block & edges if edges is not None else None  # (a piece edge inside a block)
        if through is not None and through.any():
            fits &= ~np.append(through, False)[g1]  # (a block a piece edge cuts off: not known to fit)
            open_end = np.append(through if parts is None else through & ~parts, False)
        over = ~fits  # (the blocks only their size keeps from staying whole)
        if held is not None and fits.any():
            free = np.zeros(strength.size + 1, np.int64)
            np.cumsum(~held, out=free[1:])
            fits &= free[g1] > free[g0]  # (a gap of the block no no-cut holds)
            strong = held if weak is None else held & ~weak
            fits &= ~((g0 > 0) & strong[np.maximum(g0 - 1, 0)])  # (no heading's bond into the block)
        forbid |= _in_runs(g0[fits], g1[fits], strength.size)
        if parts is not None and parts.any() and over.any():
            # (a paragraph break inside the block parts its stretches too, so that they nest in the paragraphs:
            # a stretch across one, glued, chained two paragraphs that fit into a level-1 chunk of 646 under 512)
            edge = ~_in_runs(g0[over], g1[over], strength.size) | (parts if held is None else parts & ~held) | cut
            if opens is not None:  # (and where what a lead-in introduces is parted, so that the two nest: a line
                edge |= opens  # read as a lead-in inside the block, its run kept whole to it, chained with the stretch
                # after it kept whole, made a level-1 chunk of 306 under 291)
            if held is not None:
                # (a heading's run into a block over the limit: the block's first stretch is not kept whole, so the
                # heading keeps the block's first lines rather than stand alone)
                strong = held if weak is None else held & ~weak
                headed = over & (g0 > 0) & strong[np.maximum(g0 - 1, 0)]
                if headed.any():
                    marks = np.append(np.flatnonzero(edge), strength.size)
                    upto = marks[np.searchsorted(marks, g0[headed])]
                    edge |= _in_runs(g0[headed], upto, strength.size)
                # (a markup line's weak bond at the block's edge, its closing line's to a "</details>" under it, a
                # line of tags' over its opening line, holds what it bonds to the block's stretch there: that stretch
                # stays whole only where it fits with it, else the limit cuts between the block's lines, never at the
                # bond; a heading's bond keeps the heading's rules above, a lead-in's is the first the limit breaks)
                soft = held & ~strong if introduces is None else held & ~strong & ~introduces
                free = np.append(np.flatnonzero(~held if edges is None else ~held | edges), strength.size)
                shut = over & (g1 < strength.size) & soft[np.minimum(g1, strength.size - 1)]
                after = free[np.searchsorted(free, g1[shut])]  # (the bonds that chain on from the closing line)
                tags = over & (g0 > 0) & soft[np.maximum(g0 - 1, 0)]
                below = free[np.maximum(np.searchsorted(free, g0[tags]) - 1, 0)]
                before = np.where(below < g0[tags], below + 1, 0)  # (... and into the opening line)
                edge &= ~_in_runs(np.concatenate((g1[shut], before)), np.concatenate((after, g0[tags])), strength.size)
            ids, whole = _parts(edge, sizes, max_size)  # (an edge: not a blank line before its closing marks)
            if open_end is not None:
                whole[ids[open_end]] = False
            forbid |= ~edge & whole[ids[:-1]]
    return reward, _unglue_over(forbid, sizes, max_size)


def _unglue_over(forbid: np.ndarray, sizes: np.ndarray, max_size: int) -> np.ndarray:
    """``forbid`` without the runs of forbidden gaps whose atoms together exceed ``max_size``. Each partition of
    :func:`structure_rewards` keeps whole only what fits, and they are built to nest; where two still chain (each
    run fits, their union does not), the glued union would be one atom over the limit, a chunk over the user's
    maximum with no bubble. The guard keeps the promise that comes first: such a run's gaps are left to their
    prices, so the limit cuts it where they are lowest. (The glued runs are the text parted where no gap is
    forbidden: the gaps kept are those inside a part that fits.)"""
    return _fits_whole(~forbid, sizes, max_size)


def _unglue_comment_runs(glue: np.ndarray, forbid: np.ndarray, block: np.ndarray, heading: np.ndarray,
                         weak: np.ndarray, sizes: np.ndarray, max_size: int) -> np.ndarray:
    """``glue`` (below level 1, in source code) where a comment kept whole (``forbid & block``) lies in a glued run over
    ``max_size``: there the level had no cut, and the next level's smaller limit cut inside the comment. In such a
    run the weak bonds (a block's to its ``{`` line: the first a limit breaks) are left to their prices, and the
    comment kept whole; the comment's bond to the code it leads into stays glued (a heading's, below level 1), and so
    does the weak bond of the line right under it where the comment and that line do not fit together:
    ``formatdict = {`` under its comment stays with what it opens, not the end of a chunk over the limit that holds
    the comment and that line alone."""
    ids = np.zeros(sizes.size, np.int64)
    np.cumsum(~glue, out=ids[1:])  # (per atom: its glued run)
    kept = np.zeros(int(ids[-1]) + 1, bool)
    kept[ids[:-1][forbid & block]] = True
    over = ~_fits_whole(~glue, sizes, max_size)
    under = np.zeros(glue.size, bool)  # (the comment's bond to the line under it)
    under[1:] = forbid[:-1] & block[:-1] & ~block[1:] & heading[1:] & ~weak[1:] & ~forbid[1:]
    led = np.zeros(glue.size, bool)  # (that line's weak bond)
    led[1:] = weak[1:] & under[:-1]
    held = over & kept[ids[:-1]] & weak & ~forbid
    glue = glue & ~(held & ~led)
    # (the line's weak bond gives way too where the comment and that line fit the limit together: a chunk of the
    # comment and the function's head, as the block's bond gives way elsewhere; where they do not, the chunk would
    # be over the limit anyway and end with "{")
    ids = np.zeros(sizes.size, np.int64)
    np.cumsum(~glue, out=ids[1:])
    total = np.concatenate(([0], np.cumsum(sizes)))
    first = np.flatnonzero(np.concatenate(([True], ~glue)))  # (each glued run's first atom)
    g = np.flatnonzero(held & led)
    fit = total[g + 1] - total[first[ids[g]]] <= max_size
    glue[g[fit]] = False
    return glue


def _lead_in_heads(introduces: np.ndarray, held: np.ndarray | None) -> np.ndarray:
    """Where each lead-in opens (its bond among ``introduces``): the gap before its sentence, or before the
    lines a strong bond ties to it (``held``, not a lead-in's: a heading over it, the lines of one statement);
    none for a lead-in that opens the text."""
    tie = held & ~introduces if held is not None else np.zeros(introduces.size, bool)
    free = np.flatnonzero(~tie)  # (every lead-in's bond among them)
    at = np.searchsorted(free, np.flatnonzero(introduces)) - 1  # (the last free gap before each lead-in's head)
    return free[at[at >= 0]]


def _lead_ins_open(introduces: np.ndarray, head: np.ndarray, *, parted: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The gaps that end what a lead-in introduces, and a list's run, beside the ``parted`` gaps (paragraph
    breaks, a list's edges): each lead-in's own bond (``introduces``), and the gap where a lead-in opens
    (``head``, :func:`_lead_in_heads`), so that it goes with what it introduces, not with what comes before
    it: a list's items, or what another lead-in introduces (two lead-ins in a row, ``The steps are:`` over a
    list, then another over another: run on to the second's bond, the first's run was kept whole with the
    second lead-in at its end, so the chunk ended there). Inside a paragraph that fits (``kept``) only the
    second of two in a row opens so: a lead-in that ends a list item's paragraph stays in it."""
    opens = introduces.copy()
    bound = np.flatnonzero(parted | introduces)
    prev = np.searchsorted(bound, head) - 1  # (the gap that opens the run the head lies in)
    run_on = prev >= 0
    run_on[run_on] = introduces[bound[prev[run_on]]]
    opens[head[run_on | ~kept[head]]] = True
    return opens


def _item_lead_ins(introduces: np.ndarray, listed: np.ndarray, lists: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The bonds of lead-ins that end an item of a list begun before them (an item gap of the list, parted at
    ``listed``, lies before the bond) inside a paragraph that fits (``kept``): what such a lead-in introduces is
    the rest of its item's paragraph (a release note's ``... in the kernel repository is:`` over its indented
    line), so the list's run does not part there — parted, the run to the lead-in fitted and was kept whole, and
    the lead-in's bond was the only cut the limit had left, though the item's paragraph fitted."""
    g = np.arange(introduces.size)
    start = np.maximum.accumulate(np.where(listed, g + 1, 0))  # (the first gap of each gap's list run)
    items = np.zeros(introduces.size + 1, np.int64)
    np.cumsum(lists & ~listed, out=items[1:])
    return introduces & kept & (items[:-1] > items[start])  # (items[:-1]: each gap's own count, read without a gather)


def _items_whole(parted: np.ndarray, lists: np.ndarray, line: np.ndarray, sizes: np.ndarray, max_size: int
                 ) -> np.ndarray:
    """The gaps inside an item's line that fits ``max_size``: the line on each side of a gap between two items of
    one list (``lists``), parted at ``parted`` (a paragraph break, a lead-in's opening: the list's own partition in
    :func:`structure_rewards`) and at the ``line`` breaks no bond holds (an FAQ's question and the answer under it
    are one item's lines; a heading over an item is read with it, as with a paragraph: where the two exceed the
    limit the item is not kept whole, so the heading keeps the item's first sentence rather than end a chunk). Why: a tight list's items are parted by line breaks, not paragraph breaks (a notice's
    ``（一）…`` lines, minutes' ``1．…``, a manual's ``①…``), so the paragraph rule kept none of them whole, and where
    the list did not fit, the limit cut inside an item of two sentences that fitted, next to the line break before
    it. An item is read as its line, not as all up to the next item: the lines between two items that the layout
    reads as one list are not all the item's (a corpus's lines broken at ``(No.`` read ``10) to date.`` as an item
    and the next sentence's line with it); a list's first item is the line before its first gap where that line
    opens after a part edge (a lead-in's bond, a paragraph break)."""
    edges = parted | lists | line
    ids, fits = _parts(edges, sizes, max_size)
    at = np.flatnonzero(lists)
    item = np.zeros(fits.size, bool)
    item[ids[at + 1]] = True  # (the line each gap between two items opens)
    # (and the line before such a gap where it opens after a part edge or another item: a list's first item, under
    # a lead-in, a paragraph break or a heading of the list; not a line an unheld line break opens, which may be
    # an item's last line or no item's: a function's head over its docstring whose list's first item it reached)
    opened = np.concatenate(([True], (parted | lists)[np.flatnonzero(edges)]))
    before = ids[at]
    item[before[opened[before]]] = True
    return ~edges & (fits & item)[ids[:-1]]


def _parts(cut: np.ndarray, sizes: np.ndarray, max_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The text parted at the ``cut`` gaps: each atom's part (``len(sizes)`` ids) and, per part, whether it
    fits ``max_size`` (one compiled pass where it is there, :func:`logichunk.native.parts`: the same answers)."""
    fast = native.parts(cut, sizes, max_size)
    if fast is not None:
        return fast[0], fast[1]
    ids = np.zeros(cut.size + 1, np.int64)
    np.cumsum(cut, out=ids[1:])
    return ids, np.bincount(ids, weights=sizes) <= max_size


def _fits_whole(cut: np.ndarray, sizes: np.ndarray, max_size: int) -> np.ndarray:
    """The gaps inside a part that fits ``max_size``, the text parted at the ``cut`` gaps."""
    fast = native.parts(cut, sizes, max_size, whole=True)
    if fast is not None and fast[2] is not None:
        return fast[2]
    ids, fits = _parts(cut, sizes, max_size)
    return ~cut & fits[ids[:-1]]


def _in_runs(g0: np.ndarray, g1: np.ndarray, n: int) -> np.ndarray:
    """Per gap of ``n``, whether it lies in one of the disjoint runs of gaps ``[g0, g1)``."""
    mark = np.zeros(n + 1, np.int64)
    np.add.at(mark, g0, 1)
    np.add.at(mark, g1, -1)
    return np.cumsum(mark[:-1]) > 0


def _is_int(x: object) -> bool:
    """An integer, and not a bool, a float or a numeric string (no silent truncation)."""
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


#: the largest size limit taken as it is: a larger one is past any text (none held in memory has 2**62
#: characters, bytes or tokens) and is read as this one, as an overlap past any text reaches its edges. Why:
#: ``max_size=10**400`` overflowed the float arithmetic of the levels' ratios (a traceback in the CLI, an
#: internal error in the MCP tool); 2**62 stays exact in a float and an int64.
SIZE_CAP = 2**62

#: the deepest default level: from level 62 down every limit is 1 whatever the maximum (at most
#: :data:`SIZE_CAP`), and a level whose limit is its parent level's cuts nothing more, so ``levels``
#: beyond it are read as it (``levels=10**5`` overflowed the ratios' float arithmetic, and 1,000 levels
#: re-read every uncuttable piece a thousand times)
MAX_LEVELS = 64


def check_size(size: object, what: str = "max size") -> int:
    """A user's size limit: a positive integer (2.7, "300" or NaN is an :class:`InputError`), at most
    :data:`SIZE_CAP` (a larger one is read as it: no text is that long)."""
    if not _is_int(size) or size < 1:  # type: ignore[operator]
        raise InputError(f"{what} must be a positive integer, got {size!r}")
    return min(int(size), SIZE_CAP)  # type: ignore[call-overload]


def check_sizes(sizes: object) -> tuple[int, ...]:
    """Per-level limits as a user gives them (top first): a non-empty sequence (a numpy array too)
    of positive integers that does not grow with depth. Every chunker checks them here."""
    if isinstance(sizes, np.ndarray):
        sizes = sizes.tolist()
    if isinstance(sizes, str | bytes) or not isinstance(sizes, Sequence) or not sizes:
        raise InputError(f"sizes must be a non-empty sequence of positive integers, got {sizes!r}")
    for s in sizes:
        if not _is_int(s) or s < 1:
            raise InputError(f"size limits must be positive integers, got {sizes!r}")
    if list(sizes) != sorted(sizes, reverse=True):
        raise InputError(f"size limits must not grow with depth, got {tuple(sizes)}")
    return tuple(min(int(s), SIZE_CAP) for s in sizes)


class _Run:
    """State of one cascade over one text.

    The boundaries ``B`` (character offsets), their scores ``S`` and tier ranks ``R`` are global;
    tier 4 inserts offsets inside over-long sentences. Each level is processed for all its pieces
    in one batch: piece edges become pinned cuts of a single :func:`~logichunk.boundaries.fit`, so
    the per-piece cost is array work, not Python calls, and the result does not depend on the
    order pieces are visited in.
    """

    def __init__(self, text: str, settings: CascadeSettings, llm: ChatModel | None,
                 lm_signal: GapSignal | None, source: str, meter: Meter, sents: SentenceSpans,
                 raw: np.ndarray | None = None, gap_text: np.ndarray | None = None,
                 text_edges: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.text = text
        self.cfg = settings
        self.llm = llm
        self.lm_signal = lm_signal
        self.source = source
        self.meter = meter
        self.sents = sents
        ns = len(self.sents)
        if raw is None:  # (many texts in one pass bring their own, computed text by text)
            raw = settings.signal.gap_scores(self.sents) if ns > 1 else np.zeros(0)
        self.bonus = np.asarray(settings.structure_bonus, dtype=np.float64)[self.sents.breaks.astype(np.int64)]
        score = np.asarray(raw, dtype=np.float64) + self.bonus
        # the author's structure per boundary (strength, no-cut after a heading) and each boundary's
        # bonus, kept aligned with B when tier 4 inserts offsets inside sentences
        lay = layout(self.sents, text_edges)
        self.T = lay.strength.astype(np.int64)
        self.NC = lay.no_cut.copy()
        self.LI = lay.lead_in.copy()
        self.IB = lay.in_block.copy() if lay.in_block is not None else np.zeros(max(ns - 1, 0), bool)
        self.IN = lay.introduces.copy() if lay.introduces is not None else np.zeros(max(ns - 1, 0), bool)
        self.BP = lay.block_parts.copy() if lay.block_parts is not None else np.zeros(max(ns - 1, 0), bool)
        self.IL = lay.in_list.copy() if lay.in_list is not None else np.zeros(max(ns - 1, 0), bool)
        self.CD = lay.depth.copy() if lay.depth is not None else None  # (code's nesting per gap; None: no code)
        self.Bn = self.bonus.copy()
        cand = bd.peaks(score, settings.peak_drop) | (self.sents.breaks >= BREAK_PARAGRAPH)
        # boundary offsets inside the text (each gap's seam: a line's indent goes with its line), their
        # scores and their tier rank (0..3); texts chunked together keep their edges where they are
        self.seams = self.sents.seams().astype(np.int64) if ns else np.zeros(0, np.int64)
        if text_edges is not None and self.seams.size:
            at_edge = np.isin(self.sents.ends[:-1], text_edges[1])
            self.seams[at_edge] = self.sents.ends[:-1][at_edge]
        self.B = self.seams.copy()
        self.S = score
        self.R = np.where(cand, 0, 2).astype(np.int64)
        # tier 3's signal (the LM's curve, when one is given, computed at its first scored gap) and the span a
        # run needs for its windows to read inside it (None: no bound, it scores every run)
        self._comp = CompositeSignal(extra=None if lm_signal is None else _Once(lm_signal))
        self.reach = self._comp.window(settings.signal)
        self.T3 = np.zeros(self.B.size, bool)  # per boundary: tier 3 scored it (only then is a cut there "composite")
        # tier-3 components per sentence gap, NaN until computed (cached across levels)
        self._raw: dict[str, np.ndarray] = {"entropy": np.full(max(ns - 1, 0), np.nan)}
        self.bubbles: list[Bubble] = []
        self.bubbled: set[int] = set()
        self.stats: dict[str, Any] = {"llm_calls": 0, "tier2_skipped": 0, "tier3_skipped": 0, "sentences": ns,
                                      "signal": settings.signal.name}
        # a chunk's method names what decided it: tier 1 by its signal's name (a cliff chunk is not
        # "entropy"); without tier 3, or at a gap it did not score (a run too short for its windows, a gap
        # outside every failing run), a cut forced to fit a run is tier 1 recursing at its best gap
        t1 = settings.signal.name
        self.tiers = (t1, "llm", "composite" if settings.composite else t1, "forced")
        self.method_counts = np.zeros(len(self.tiers) + 1, np.int64)  # "whole", then by tier rank
        self.skipped_at: list[int] = []  # where each run that tier 2 skipped starts
        self.t3_skipped_at: list[int] = []  # where each run that tier 3 left to tier 1 starts
        # a shared pass over many texts (chunkers/many.py) gives the text of each gap, the texts' edges
        # and tier-1 entropy scores, so tier 3 reads and normalises each text on its own
        self.gap_text = gap_text
        self.text_edges = text_edges
        self.raw = np.asarray(raw, dtype=np.float64)
        self._lex: tuple[np.ndarray, SparseRows | np.ndarray, np.ndarray] | None = None  # see _cohesion_vectors
        self._spans_rise = False  # (the spans' starts rise strictly: an atom's span is its count of boundaries)
        self._tie: tuple[np.ndarray, np.ndarray] | None = None  # see _ties

    # ------------------------------------------------------------------ tiers 2-4 helpers
    def _composite(self, bidx: np.ndarray) -> None:
        """Tier 3: rescore the sentence gaps at boundary indices ``bidx`` (runs entropy could not
        split, long enough for the composite's windows) with the composite signal, computed for those
        gaps only (raw components cached across levels) and normalised among them — only their order
        inside failing runs matters; each gap scored is marked (``T3``), so a cut there is named
        ``composite`` and no other is."""
        bidx = bidx[self.R[bidx] == 2]
        if bidx.size == 0:
            return
        self.T3[bidx] = True
        gaps = native.searchsorted(self.seams, self.B[bidx])
        todo = gaps[np.isnan(self._raw["entropy"][gaps])]
        if todo.size:
            kw = {}
            if self.gap_text is not None and self.text_edges is not None:
                t = self.gap_text[todo]
                kw = {"entropy": self.raw[todo], "edges": (self.text_edges[0][t], self.text_edges[1][t])}
            elif self.cfg.signal == self._comp.entropy:  # tier 1 scored these gaps with this very signal
                kw = {"entropy": self.raw[todo]}
            for name, v in self._comp.components(self.sents, todo, **kw).items():
                self._raw.setdefault(name, np.full(len(self.sents) - 1, np.nan))[todo] = v
        comp = {name: v[gaps] for name, v in self._raw.items()}
        # normalised text by text (one text unless many share the pass), as each text alone would be
        owner = self.gap_text[gaps] if self.gap_text is not None else np.zeros(gaps.size, np.int64)
        for k in np.unique(owner).tolist():
            sel = np.flatnonzero(owner == k)
            self.S[bidx[sel]] = self._comp.combine({name: v[sel] for name, v in comp.items()}) + self.bonus[gaps[sel]]

    def _insert(self, offsets: list[int]) -> None:
        offsets = sorted(offsets)
        at = np.searchsorted(self.B, offsets)
        # a cut inside a sentence is in a block as the gap after the sentence is; after a text's last sentence
        # (the text's end, or, texts chunked together, the seam to the next text) as the gap before it is
        side = np.minimum(at, max(self.IB.size - 1, 0))
        if self.text_edges is not None and self.B.size:
            after = self.B[np.minimum(at, self.B.size - 1)]
            last = (at < self.B.size) & np.isin(after, self.text_edges[1]) & (at > 0)
            side = np.where(last, at - 1, side)
        inside = self.IB[side] if self.IB.size else False
        insert = _Inserts(np.asarray(at, np.int64), self.B.size)
        self._tie = None
        self.B = insert(self.B, offsets)
        self.S = insert(self.S, -1.0)
        self.R = insert(self.R, 3)
        self.T3 = insert(self.T3, False)
        self.T = insert(self.T, 0)
        self.NC = insert(self.NC, False)
        self.LI = insert(self.LI, False)
        self.IB = insert(self.IB, inside)
        self.IN = insert(self.IN, False)
        self.BP = insert(self.BP, False)
        self.IL = insert(self.IL, False)
        if self.CD is not None:  # (a cut inside a sentence: as deep as the gap after it)
            self.CD = insert(self.CD, self.CD[np.minimum(at, self.CD.size - 1)] if self.CD.size else 0)
        self.Bn = insert(self.Bn, 0.0)

    def _force_oversized(self, limit: int, level: int) -> None:
        """Tier 4 for the user's maximum: cut inside every atom over ``limit`` (twice at most: a
        second pass only finds atoms a single character wide, which stay whole), every atom's walk in
        one call; an atom under a heading leaves it room in its first piece
        (:func:`~logichunk.boundaries.forced_splits`), and each sentence cut leaves one bubble."""
        attempts = (self.tiers[0], "llm" if self.llm is not None else "llm:skipped",
                    "composite" if self.cfg.composite else "composite:skipped", "forced")
        for rnd in range(2):
            offs = np.concatenate(([0], self.B, [len(self.text)]))
            big = np.flatnonzero(self.meter.sizes(offs[:-1], offs[1:]) > limit)
            if big.size == 0:
                return
            glued = np.zeros(offs.size - 1, dtype=bool)  # per atom: the gap before it is no-cut
            if rnd == 0:
                glued[1:] = self.NC
            found, bubbles = bd.forced_splits(self.text, self.meter, offs[:-1], offs[1:], glued, big, limit,
                                              attempts=attempts, source=self.source, level=level)
            new: list[int] = []
            sent = np.searchsorted(self.seams, offs[big], side="right").tolist()
            for cuts, bubble, s in zip(found, bubbles, sent, strict=True):
                new.extend(cuts)
                if s not in self.bubbled:  # once per sentence
                    self.bubbled.add(s)
                    self.bubbles.append(bubble)
            if not new:
                return
            self._insert(new)

    def _tier3_skipped_bubbles(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """The forced splits' bubbles inside the runs ``[starts, ends)`` tier 3 left to tier 1 say so
        (``composite:skipped`` among their attempts): a bubble records the tiers that ran, and the run
        holding an over-long sentence's pieces is one tier 3 scores only when its windows fit in it."""
        for i, b in enumerate(self.bubbles):
            tried = b.context.get("attempts", ())
            if "composite" not in tried:
                continue
            a, e = b.context["span"]
            k = int(np.searchsorted(starts, a, side="right")) - 1
            if k >= 0 and e <= ends[k]:
                skipped = ["composite:skipped" if t == "composite" else t for t in tried]
                self.bubbles[i] = replace(b, context={**b.context, "attempts": skipped})

    def _global_cuts(self, a_start: np.ndarray, a_end: np.ndarray, asz: np.ndarray, sc: np.ndarray,
                     gaps: _Gaps, inner: np.ndarray, sep: np.ndarray, limits: bd.SizeLimits,
                     level: int, ends_at: np.ndarray, spans: np.ndarray) -> np.ndarray:
        """The level's cuts by :func:`~logichunk.boundaries.fit_global`: rewards are the structure's
        strength plus the gap score (tier 3's where it rescored); a cut right after a heading, or
        inside a paragraph that fits the limit, is forbidden. Below level 1, where an over-long
        sentence stays whole, a heading stays glued to what follows even past the limit. ``ends_at``: per piece,
        the first boundary at or after its end; ``spans``: each atom's span of the text (see :meth:`level`)."""
        A = asz.size
        strength = gaps.read(self.T)
        block = gaps.read(self.IB)
        heading = gaps.read(self.NC)  # (a heading's or a lead-in's no-cut)
        weak = gaps.read(self.LI)  # (a lead-in's)
        parts = gaps.read(self.BP)
        lists = gaps.read(self.IL)
        intro = gaps.read(self.IN)  # (what a lead-in introduces opens after these: a limit breaks the lead-in's
        # bond first, at every level)
        lead_edges = runs_on = None
        if level > 1:  # (below level 1, a piece edge at a lead-in's bond, or inside a block: at a blank line?)
            eg = np.flatnonzero(sep)  # (the edges of every piece but the last: each piece's end boundary, known)
            b = np.minimum(ends_at[:-1], max(self.B.size - 1, 0))
            at = self.B[b] == a_end[eg] if self.B.size else np.zeros(eg.size, bool)
            lead_edges = np.zeros(A - 1, bool)
            lead_edges[eg[at]] = self.IN[b[at]]
            block[eg[at]] = self.IB[b[at]]
            parts[eg[at]] = self.BP[b[at]] | (self.T[b[at]] >= PARAGRAPH)
            lists[eg[at]] = self.IL[b[at]]  # (an item a level above parted from the next: it ends at the edge)
            runs_on = self._runs_on(a_end, sep, ends_at)
        depth = None if self.CD is None else gaps.read(self.CD)
        reward, forbid = structure_rewards(strength, asz, limits.max_size, sep, block, heading, weak, intro, parts,
                                           lists, runs_on, lead_edges, depth)
        reward += sc  # (0.0 at piece edges)
        reward -= gaps.read(self.Bn)
        # a piece that fits the target and the next level's limit stays whole, as a text that is one
        # chunk does without running the cascade at all (_one_chunk)
        nxt = self.cfg.sizes[level] if level < len(self.cfg.sizes) else np.inf
        piece = np.zeros(A, np.int64)
        np.cumsum(sep, out=piece[1:])
        pfit = np.bincount(piece, weights=asz)
        forbid |= inner & (pfit[piece[:-1]] <= min(limits.goal, nxt))
        # what is forbidden here always fits, so it is glued (fewer atoms for the DP); a heading's gap
        # is glued below level 1 (the sentence it titles stays whole there) and forbidden at level 1,
        # where the user's maximum comes first; a lead-in's over what it introduces is a cost at every level (the
        # first bond a limit breaks: glued below level 1, it made chunks over their limit that were no single
        # sentence); markup's and a bracket line's weak bonds stay glued there ("}" alone is no chunk)
        glue = forbid | (heading & ~(weak & intro)) if level > 1 else forbid
        if level > 1 and self.CD is not None and (forbid & block).any():
            glue = _unglue_comment_runs(glue, forbid, block, heading, weak, asz, limits.max_size)
        reward = bd.forbid(reward, heading, weak)
        span_start, rows, span_penalty = self._cohesion_vectors()
        # every atom is one span of the text: the level's own count of boundaries before it, where the spans' starts
        # rise strictly (else, a boundary repeated, the first span that starts there, as a search finds it)
        idx = spans if self._spans_rise else native.searchsorted(span_start, a_start)
        return bd.fit_global(asz, rows, reward, limits, fixed=sep, glue=glue, penalty=span_penalty[idx], atoms=idx,
                             apart=strength >= PARAGRAPH)

    def _runs_on(self, a_end: np.ndarray, sep: np.ndarray, ends_at: np.ndarray) -> np.ndarray:
        """Per atom, whether a piece ends after it where the text goes on in the same paragraph (no paragraph
        break, no lead-in's bond, no lead-in opening there, not a text's end): what a lead-in introduces may run
        on past that edge, so its part inside the piece is not known to fit (:func:`structure_rewards`).
        ``ends_at``: per piece, the first boundary at or after its end."""
        ends = np.flatnonzero(np.append(sep, True))  # (each piece's last atom)
        b = np.minimum(ends_at, max(self.B.size - 1, 0))
        on = np.zeros(a_end.size, bool)
        if self.B.size == 0:
            return on
        inside = (self.B[b] == a_end[ends]) & (self.T[b] < PARAGRAPH) & ~self.IN[b]
        if self.text_edges is not None:
            inside &= ~np.isin(a_end[ends], self.text_edges[1])
        tie, free = self._ties()
        nxt = free[np.searchsorted(free, b, side="right")]
        inside &= tie[b] | ~((nxt < self.B.size) & self.IN[np.minimum(nxt, self.B.size - 1)])
        on[ends[inside]] = True
        return on

    def _ties(self) -> tuple[np.ndarray, np.ndarray]:
        """Per boundary, whether a strong bond ties it (a no-cut, not a lead-in's), and the boundaries none ties,
        the boundary count last: a lead-in opens after the last of these before its bond (a heading over it goes
        with it). Per text: the boundaries and their marks are fixed after level 1's forced splits, so the levels
        below read them, not each its own (:meth:`_insert` forgets them)."""
        if self._tie is None:
            tie = self.NC & ~self.IN
            self._tie = (tie, np.append(np.flatnonzero(~tie), self.B.size))
        return self._tie

    def _cohesion_vectors(self) -> tuple[np.ndarray, SparseRows | np.ndarray, np.ndarray]:
        """The spans between the boundaries (after level 1's forced splits, so every atom of every
        level is one of them), their vectors and each span's chunk penalty: computed once per text,
        the document's own idf and each window's permutation price (:func:`~logichunk.boundaries.chunk_prices`:
        an edit moves only its window's) serving all its levels (texts chunked together: each its own
        vocabulary and prices, as alone). The vectors are the model-free
        lexical rows, or, when the tier-1 signal embeds sentences (cliff, fused), the embedder's
        unit vectors: a piece of a sentence split by tier 4 takes its sentence's."""
        if self._lex is None:
            offs = np.concatenate(([0], self.B, [len(self.text)]))
            s, e = offs[:-1], offs[1:]
            get = getattr(self.cfg.signal, "sentence_vectors", None)
            V = get(self.sents) if get is not None and self.text_edges is None and len(self.sents) > 1 else None
            rows: SparseRows | np.ndarray
            # keys: the shuffles' order, the spans' content, stable under edits
            if V is not None:
                keys = span_keys(self.text, s, e)
                V = np.asarray(V, dtype=np.float64)[np.searchsorted(self.seams, s, side="right")]
                norm = np.linalg.norm(V, axis=1, keepdims=True)
                rows = V / np.where(norm > 0, norm, 1.0)
                pen = bd.chunk_prices(rows, keys)
            elif self.text_edges is None:
                rows, keys = lexical_rows_keys(self.text, s, e)  # (the spans' items found once for both)
                pen = bd.chunk_prices(rows, keys)
            else:  # the spans of each text; those of the separators between texts stay empty rows
                keys = span_keys(self.text, s, e)
                lo = np.searchsorted(s, self.text_edges[0]).tolist()
                hi = np.searchsorted(s, self.text_edges[1]).tolist()
                parts, pens, prev = [], [], 0
                for a, b in zip(lo, hi, strict=True):
                    parts += [SparseRows.empty(a - prev), lexical_rows(self.text, s[a:b], e[a:b])]
                    pens += [np.zeros(a - prev), bd.chunk_prices(parts[-1], keys[a:b])]
                    prev = b
                parts.append(SparseRows.empty(s.size - prev))
                pens.append(np.zeros(s.size - prev))
                rows, pen = SparseRows.concat(parts), np.concatenate(pens)
            self._lex = (s, rows, pen)
            self._spans_rise = bool(np.all(s[1:] > s[:-1]))
        return self._lex

    # ------------------------------------------------------------------ one level, all pieces
    def levels(self, pieces: Pieces, out: _Columns) -> None:
        """Every level, from the top, down to the deepest or until no chunk needs another."""
        nxt: Pieces | None = pieces
        for level in range(1, len(self.cfg.sizes) + 1):
            if nxt is None or nxt.starts.size == 0:
                break
            nxt = self.level(nxt, level, out)

    def level(self, pieces: Pieces, level: int, out: _Columns) -> Pieces | None:
        """Cut every piece of ``level`` at once; returns the chunks that need a next level (None at
        the last level)."""
        limit = self.cfg.sizes[level - 1]
        if level == 1:
            # only the user's maximum cuts inside a sentence; deeper levels keep an over-long
            # sentence whole as a leaf rather than break it for a finer view
            self._force_oversized(limit, level)
        lo = native.searchsorted(self.B, pieces.starts, side="right")
        hi = native.searchsorted(self.B, pieces.ends, side="left")
        if level > 1:
            cuttable = _cuttable(pieces, lo, hi, self.IN | self.IB | self.IL | self.BP | self.NC)
            if cuttable is None:
                return None
            pieces, lo, hi = cuttable
        cs, ce = pieces.starts, pieces.ends
        P = cs.size
        cnt = hi - lo
        A = int(cnt.sum()) + P  # atoms
        off = np.zeros(P + 1, np.int64)
        np.cumsum(cnt + 1, out=off[1:])
        # each atom's span of the text (the boundaries before it: after level 1's forced splits every atom of every
        # level is one span), each gap's boundary the span before it
        spans = bd.ranges(lo, hi + 1)
        gaps = _Gaps(spans[:-1], off[1:-1] - 1, self.B.size)
        inner = gaps.inner()
        sep = ~inner  # gap after a piece's last atom: a piece edge, always cut
        # each atom's span: a boundary (read at every gap: each atom ends at the one after it, the next starts there),
        # a piece's own edge at its first and last atom
        a_start = np.empty(A, np.int64)
        a_end = np.empty(A, np.int64)
        if A > 1 and self.B.size:
            bs = self.B.take(gaps.at)
            a_start[1:] = bs
            a_end[:-1] = bs
        a_start[off[:-1]] = cs
        a_end[off[1:] - 1] = ce
        asz = self.meter.sizes(a_start, a_end)

        def refresh() -> tuple[np.ndarray, np.ndarray]:
            return gaps.read(self.S), gaps.read(self.R)

        sc, rk = refresh()
        gap_b = gaps.read(np.arange(self.B.size), -1)
        # runs between trusted candidates that are still too big: tier 1 failed there
        edges = np.concatenate(([0], np.flatnonzero((rk <= 1) | sep) + 1, [A]))
        cum = np.zeros(A + 1, np.int64)
        np.cumsum(asz, out=cum[1:])
        bad = np.flatnonzero((cum[edges[1:]] - cum[edges[:-1]] > limit) & (edges[1:] - edges[:-1] > 1))
        if bad.size:
            fa, fb = edges[bad], edges[bad + 1]
            if self.llm is not None:
                for a, b in zip(fa.tolist(), fb.tolist(), strict=True):
                    texts = [self.text[int(a_start[k]) : int(a_end[k])] for k in range(a, b)]
                    self.stats["llm_calls"] += 1
                    for g in llm_breaks(self.llm, texts):
                        gi = gap_b[a + g]
                        if self.R[gi] >= 1:
                            self.R[gi] = 1
            else:
                self.stats["tier2_skipped"] += int(bad.size)
                self.skipped_at.extend(a_start[fa].tolist())
            if self.cfg.composite:
                # tier 3 only where its windows fit inside the run; a shorter run is tier 1's, as without tier 3
                sees = np.ones(bad.size, bool) if self.reach is None else a_end[fb - 1] - a_start[fa] >= self.reach
                if not sees.all():
                    self.stats["tier3_skipped"] += int(bad.size - sees.sum())
                    self.t3_skipped_at.extend(a_start[fa[~sees]].tolist())
                    self._tier3_skipped_bubbles(a_start[fa[~sees]], a_end[fb[~sees] - 1])
                self._composite(gap_b[bd.ranges(fa[sees], fb[sees] - 1)])
            if self.cfg.composite or self.llm is not None:  # (tiers 2 and 3 rescore or re-rank gaps)
                sc, rk = refresh()
        target = max(1, int(limit * self.cfg.target_ratio))
        limits = bd.SizeLimits(limit, target=target)
        cut = np.zeros(A - 1, bool)
        if self.cfg.selection == "global":
            cut[self._global_cuts(a_start, a_end, asz, sc + LLM_REWARD * (rk == 1), gaps, inner, sep, limits,
                                  level, hi, spans)] = True
        else:
            cut[bd.fit(asz, sc, limits, (rk <= 1) | sep, rank=rk, fixed=sep).cuts] = True
        # runs = chunks; a piece edge always closes one
        rs = np.concatenate(([0], np.flatnonzero(cut) + 1))  # first atom of each run
        re_ = np.concatenate((rs[1:], [A])) - 1  # last atom of each run
        piece = native.searchsorted(off, rs, side="right") - 1
        nruns = np.bincount(piece, minlength=P)
        first_run = np.concatenate(([0], np.cumsum(nruns)[:-1]))
        ordinal = np.arange(rs.size) - first_run[piece] + 1
        is_last = ordinal == nruns[piece]
        # the cut that closes a chunk names it (a piece's last chunk: the cut that opens it)
        closing = np.where(is_last, rs - 1, re_)
        has_cut = nruns[piece] > 1
        crank = np.where(has_cut, rk[np.minimum(np.maximum(closing, 0), max(A - 2, 0))] if A > 1 else 0, -1)
        if self.cfg.composite and A > 1:  # a rank-2 cut tier 3 did not score is tier 1's
            t3 = gaps.read(self.T3)
            crank[(crank == 2) & ~t3[np.minimum(np.maximum(closing, 0), A - 2)]] = 0
        cscore = sc[np.minimum(re_, max(A - 2, 0))] if A > 1 else np.zeros(rs.size)
        starts = a_start[rs]
        ends = a_end[re_]
        sizes = self.meter.sizes(starts, ends)
        keep = has_cut | (level == 1)
        nxt = min(self.cfg.sizes[level:]) if level < len(self.cfg.sizes) else None  # (the finest limit below)
        # chunks in bulk, one array per column (tens of thousands of chunks per megabyte): no Python
        # loop per chunk
        kr = np.flatnonzero(keep)
        cids = child_ids(pieces.ids, piece[kr], ordinal[kr])
        starts, ends, sizes = starts[kr], ends[kr], sizes[kr]
        scores = np.where(is_last[kr], np.nan, cscore[kr])
        names = np.array((*self.tiers, "whole"), dtype=object)  # index -1: a piece left whole
        self.method_counts += np.bincount(crank[kr] + 1, minlength=names.size)
        out.add(level, cids, starts, ends, names[crank[kr]], sizes, scores)
        if nxt is None:
            return None
        # a chunk goes on down while it exceeds a deeper level's limit, and so does a piece this level left
        # whole (it fits this level as it is: no chunk of its own here, its cuts come at the next level that
        # has any), so every leaf fits the finest limit but a sentence longer than it: a middle level never
        # makes the leaves coarser (sizes 1000/500/200 left a 468-character chunk of twenty sentences a leaf,
        # 1000/200 cut it)
        more = sizes > nxt
        whole = np.flatnonzero(~keep)
        whole = whole[self.meter.sizes(a_start[rs[whole]], a_end[re_[whole]]) > nxt]
        if whole.size == 0:
            return Pieces(starts[more], ends[more], cids[more])
        ws, we = a_start[rs[whole]], a_end[re_[whole]]
        wid = pieces.ids[piece[whole]] if pieces.ids is not None else np.full(whole.size, None, object)
        order = np.argsort(np.concatenate((starts[more], ws)), kind="stable")
        return Pieces(np.concatenate((starts[more], ws))[order], np.concatenate((ends[more], we))[order],
                      np.concatenate((cids[more], wid))[order])


def _cuttable(pieces: Pieces, lo: np.ndarray, hi: np.ndarray,
              bonded: np.ndarray) -> tuple[Pieces, np.ndarray, np.ndarray] | None:
    """The pieces of a level below the first that hold a gap (``lo``, ``hi``: each piece's first boundary after
    its start and first at or after its end), with their ``lo`` and ``hi``; None where none does. Why: a piece of
    one atom (a sentence over a deeper limit, kept whole below level 1) has no gap to cut, here or at any level
    below (the boundaries are fixed after level 1's forced splits): it makes no chunk of its own and nothing to
    pass down, and a level's choice is piece by piece (its edges are fixed cuts, where the DP restarts its running
    total; the structure's partitions part there; tier 3 normalises among failing runs' gaps, none in it), so the
    other pieces' cuts are the same without it. Left out before the level's work: on 2 MB of English, two thirds of
    level 3's pieces and two fifths of its atoms (6,318 of 9,578 pieces); all of a level that has nothing left to
    cut. A piece of one atom at a marked boundary stays (``bonded``, per boundary: a lead-in's, a block's, a list's
    or a heading's bond): the structure reads a level's piece edges in a row (a chain of lead-ins across them), so
    without it a neighbour's cuts could change."""
    many = hi > lo
    if bonded.size and not many.all():  # (a piece's boundaries: lo - 1 at its start, hi at its end)
        one = np.flatnonzero(~many)
        near = bonded[np.clip(lo[one] - 1, 0, bonded.size - 1)] | bonded[np.minimum(hi[one], bonded.size - 1)]
        many[one[near]] = True
    if many.all():
        return pieces, lo, hi
    if not many.any():
        return None
    ids = None if pieces.ids is None else pieces.ids[many]
    return Pieces(pieces.starts[many], pieces.ends[many], ids), lo[many], hi[many]


class _Gaps:
    """A level's gaps between atoms, pieces in order, as indices into the per-boundary arrays: each inner gap's
    boundary (``at``), and the piece edges (``edges``: positions of the gaps after a piece's last atom). Why:
    every per-boundary column a level reads (scores, ranks, the structure's marks) is then one gather, where a
    scatter into a zeroed array through a mask of the inner gaps costs about twice as much, a dozen times a
    level."""

    def __init__(self, at: np.ndarray, edges: np.ndarray, n: int) -> None:
        self.at = np.minimum(at, n - 1) if n else at  # (an edge's own index is read, then overwritten)
        self.edges = edges
        self.n = n

    def inner(self) -> np.ndarray:
        """Which gaps are inner gaps (not a piece edge)."""
        out = np.ones(self.at.size, bool)
        out[self.edges] = False
        return out

    def read(self, column: np.ndarray, edge: float | int | bool = 0) -> np.ndarray:
        """``column`` (one entry per boundary) at each gap, ``edge`` at the piece edges."""
        if self.n == 0:
            return np.full(self.at.size, edge, column.dtype)
        out = column.take(self.at)
        out[self.edges] = edge
        return out


class _Inserts:
    """``np.insert(column, at, values)`` for many columns of one length at the same sorted positions ``at``, the
    positions found once: the inserted entries land at ``at + 0, 1, 2, ...``, the column's own entries in the
    places left (np.insert finds them again for every column: tier 4 inserts into a dozen)."""

    def __init__(self, at: np.ndarray, n: int) -> None:
        self.put = at + np.arange(at.size)
        kept = np.ones(n + at.size, bool)
        kept[self.put] = False
        self.old = np.flatnonzero(kept)

    def __call__(self, column: np.ndarray, values: Any) -> np.ndarray:
        out = np.empty(self.old.size + self.put.size, column.dtype)
        out[self.old] = column
        out[self.put] = values
        return out


class Pieces(NamedTuple):
    """What a level cuts: the spans of its pieces and their chunk ids (an object array; None for the
    texts themselves, at level 1)."""

    starts: np.ndarray
    ends: np.ndarray
    ids: np.ndarray | None = None


def method_counts(names: Sequence[str], counts: Sequence[int]) -> dict[str, int]:
    """Chunks per method name (a name shared by two ranks counts once), in the order of ``names``."""
    out: dict[str, int] = {}
    for name, c in zip(names, counts, strict=True):
        out[name] = out.get(name, 0) + int(c)
    return {name: c for name, c in out.items() if c}


class _Columns:
    """The chunks of every level, one array per column and level, put in pre-order at the end."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, ...]] = []  # per level: depth, ids, starts, ends, methods, sizes, scores

    def add(self, level: int, ids: np.ndarray, starts: np.ndarray, ends: np.ndarray, methods: np.ndarray,
            sizes: np.ndarray, scores: np.ndarray) -> None:
        """One level's chunks; ``scores`` NaN where a chunk has no cut score."""
        self.parts.append((np.full(ids.size, level), ids, starts, ends, methods, sizes, scores))

    def ordered(self) -> tuple[list[str], list[int], list[int], list[str], list[int], list[float | None]]:
        """ids, starts, ends, methods, sizes and cut scores (None where there is none) in pre-order
        (a parent before its children)."""
        if not self.parts:
            return [], [], [], [], [], []
        depth, *cols = (np.concatenate(c) for c in zip(*self.parts, strict=True))
        if depth[-1] > 1:  # levels were appended one after another
            order = np.lexsort((depth, cols[1]))
            cols = [c[order] for c in cols]
        ids, starts, ends, methods, sizes, score = cols
        scores = score.astype(object)
        scores[np.isnan(score)] = None
        return ids.tolist(), starts.tolist(), ends.tolist(), methods.tolist(), sizes.tolist(), scores.tolist()

    def tree(self, text: str, **kw: Any) -> ChunkTree:
        ids, starts, ends, methods, sizes, scores = self.ordered()
        return build_tree_columns(text, ids, starts, ends, methods, {"size": sizes, "cut_score": scores}, **kw)


class _Once:
    """A gap signal computed at its first use and kept: the LM curve, one pass per text whatever the
    number of levels, and none where tier 3 scores no gap."""

    def __init__(self, signal: GapSignal) -> None:
        self.signal = signal
        self.name = getattr(signal, "name", "lm")
        self._scores: np.ndarray | None = None

    def gap_scores(self, sents: SentenceSpans) -> np.ndarray:
        if self._scores is None:
            self._scores = np.asarray(self.signal.gap_scores(sents), dtype=np.float64)
        return self._scores


def chunk_logic_chain(
    text: str,
    settings: CascadeSettings | None = None,
    *,
    llm: ChatModel | None = None,
    lm_signal: GapSignal | None = None,
    source: str = "<text>",
) -> ChunkTree:
    """Run the cascade over ``text`` and return its chunk tree (see the module docstring)."""
    if not isinstance(text, str):
        raise InputError(f"text must be str, got {type(text).__name__}; decode bytes with logichunk.text.decode.read_text")
    cfg = settings or CascadeSettings()
    unit = cfg.unit if isinstance(cfg.unit, str) else cfg.unit.name
    if not text:
        return build_tree(text, [], stats={"llm_calls": 0, "tier2_skipped": 0, "tier3_skipped": 0, "sentences": 0},
                          unit=unit)
    meter = Meter(text, cfg.unit)
    sents = split_sentences(text)
    whole = _one_chunk(text, cfg, meter, sents)
    if whole is not None:
        return whole
    return snap_tree(_cascade(text, cfg, llm, lm_signal, source, meter, sents), cfg.unit)


def _one_chunk(text: str, cfg: CascadeSettings, meter: Meter, sents: SentenceSpans) -> ChunkTree | None:
    """The tree of a text that is one chunk at every level (most paragraphs of a knowledge base), or
    None. The cascade would merge every cut of such a text away, so no signal is computed for it: the
    same tree, stats included."""
    total = meter.total()
    if total > max(1, int(cfg.sizes[0] * cfg.target_ratio)) or (len(cfg.sizes) > 1 and total > min(cfg.sizes[1:])):
        return None
    stats = {"llm_calls": 0, "tier2_skipped": 0, "tier3_skipped": 0, "sentences": len(sents), "signal": cfg.signal.name,
             "methods": {"whole": 1}, "bubbles": 0}
    return build_tree_columns(text, ["1"], [0], [len(text)], ["whole"], {"size": [total], "cut_score": [None]},
                              stats=stats, unit=meter.unit)


def _cascade(text: str, cfg: CascadeSettings, llm: ChatModel | None, lm_signal: GapSignal | None, source: str,
             meter: Meter, sents: SentenceSpans, raw: np.ndarray | None = None) -> ChunkTree:
    """The cascade proper, level by level (what :func:`chunk_logic_chain` runs unless the whole text
    is one chunk); ``raw``: the tier-1 signal's gap scores when they are known already."""
    run = _Run(text, cfg, llm, lm_signal, source, meter, sents, raw=raw)
    out = _Columns()
    run.levels(Pieces(np.zeros(1, np.int64), np.full(1, len(text), np.int64)), out)
    run.stats["methods"] = method_counts(("whole", *run.tiers), run.method_counts.tolist())
    run.stats["bubbles"] = len(run.bubbles)
    return out.tree(text, bubbles=tuple(run.bubbles), stats=run.stats, unit=meter.unit)


def chunk(
    text: str,
    *,
    max_size: int = 1000,
    sizes: Sequence[int] | None = None,
    levels: int = 3,
    unit: str | Measure = "chars",
    target_ratio: float = 1.0,
    llm: ChatModel | None = None,
    lm_signal: GapSignal | None = None,
    signal: GapSignal | None = None,
    composite: bool = True,
    selection: str = "global",
    source: str = "<text>",
    tokenizer: Any = None,
    overlap: int = 0,
) -> ChunkTree:
    """Chunk ``text`` where its logic breaks, as a tree of dotted ids.

    ``max_size`` is the limit of level-1 chunks (in ``unit``: ``"chars"``, ``"bytes"``,
    ``"tokens"`` or a :class:`~logichunk.text.measure.Measure`); deeper levels default to half and
    a fifth of it (``levels`` deep). Pass ``sizes`` to set every level's limit yourself.
    ``composite=False`` skips tier 3 (see :class:`CascadeSettings`): faster, a little rougher; with it on,
    tier 3 still leaves to tier 1 the runs too short for its windows (``stats["tier3_skipped"]``).
    ``selection="local"``: the earlier local rule instead of the global decision (for comparison).
    ``tokenizer`` sizes in its exact tokens (``unit="tokens"``): a tiktoken encoding name, a
    ``tokenizer.json`` or Hugging Face folder, a hub id, or a tokenizer object or callable (see
    :func:`logichunk.text.tokens.resolve_tokenizer`); no cut then falls inside a token.
    ``overlap`` (in ``unit``) gives every chunk ``meta["overlap_span"]``: its span widened by at most
    that much on each side, an exact slice of the text (the chunks still tile it).
    """
    unit = measure_for(unit, tokenizer)
    lim = check_sizes(sizes) if sizes is not None else level_sizes(max_size, levels)
    lim = tuple(fit_limit(s, unit) for s in lim)
    cfg = CascadeSettings(sizes=lim, unit=unit, target_ratio=target_ratio,
                          signal=signal if signal is not None else EntropySignal(), composite=composite,
                          selection=selection)
    check_overlap(overlap)
    return add_overlap(chunk_logic_chain(text, cfg, llm=llm, lm_signal=lm_signal, source=source), overlap, unit)

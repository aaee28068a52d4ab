"""Topic segmentation: a document's topics, with no size limit — the global boundary decision
(:func:`~logichunk.boundaries.segment_global`) on the whole text, structure first.

What decides the cuts, in order:

1. **The author's structure** (:mod:`logichunk.text.structure`): a heading opens a topic (always a
   cut) and never ends one; where the text has blank-line paragraphs a topic boundary falls only
   between paragraphs, and where it has lines but no blank lines (a transcript, one turn per line),
   only between lines — the author's smallest unit of layout is the smallest unit of a topic;
2. **continuation**: no topic starts at a sentence that leans on the one before (*However*, *He*,
   *Yes,*, 但是: :mod:`logichunk.text.discourse`), even after a blank line — only a heading overrides;
   nor between two items of one list (``Layout.in_list``: bullets, numbers; ``Layout.in_terms``: a
   definition list, a man page's options, each a term over its description indented deeper): a list is
   one step of the author's logic, however far its items' words drift (the gaps before its first item
   and after its last stay open; a paragraph between two items parts their lists);
3. **cohesion**: among the gaps left, the best cut set for the whole text
   (:mod:`logichunk.boundaries`). Model-free (the default), on the document's own content words:
   the cut set under which the words are most probable when each topic draws them from its own
   unknown distribution — the Bayesian evidence of each topic's words, Jeffreys' prior, and
   Utiyama and Isahara's price of ``log N`` per topic for a text of ``N`` words
   (:func:`~logichunk.boundaries.segment_evidence`); in a text longer than 1,536 words the prior
   spreads over the words in use around each topic, not over every word of the text (else a long
   text — a meeting, many articles end to end — got one or two topics; the one constant, chosen on
   dev splits). With an
   embedder: its sentence vectors place the topics — for each number of topics, where their
   within-topic scatter is least (every cut set optimal for some price,
   :func:`~logichunk.boundaries.penalty_path`) — and the words' evidence with its price chooses
   among those placements (an embedding has no likelihood to price a topic with; the price per topic
   from shuffled sentences, raised with length, under-cut dialogues — chosen on dev splits,
   ``bench/QUALITY.md``).

Why no size limit here: chunking for retrieval wants pieces of a size (:func:`logichunk.chunk`);
the topic level of a document, a conversation's topic shifts, or an outline want the places where
the subject changes, however long the stretches between them. What this measures like on public
sets, and where "no boundary at all" still scores better, is in ``bench/QUALITY.md`` (issue 18).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import boundaries as bd
from ..errors import InputError, check_choice
from ..models.embedding import l2_normalize
from ..models.registry import embedder_of
from ..signals.cohesion import item_bags
from ..text.sentences import SentenceSpans, join_units, split_lines, split_sentences
from ..text.structure import LINE, PARAGRAPH, SECTION, SENTENCE, Layout, layout
from ..tree import ChunkTree, build_tree_columns

__all__ = ["UNITS", "segment", "segment_units", "topic_cuts"]

#: what one atom of a text is: a sentence (split by :func:`~logichunk.text.sentences.split_sentences`)
#: or a line (:func:`~logichunk.text.sentences.split_lines`: a turn, a transcript line)
UNITS = ("sentences", "lines")


def topic_rules(lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """The structure rules above as ``(fixed, glue)`` gap masks: headings open a topic; no cut after
    a heading, before a continuation, between two items of one list, or below the author's smallest
    unit of layout."""
    strength = lay.strength
    fixed = (strength == SECTION) & ~lay.no_cut
    # the author's smallest unit of layout: blank-line paragraphs (or blocks) if there are any, else lines
    # (a heading alone says nothing of how the text between headings is laid out)
    between = strength[~fixed & ~lay.no_cut]
    floor = PARAGRAPH if ((between >= PARAGRAPH) & (between < SECTION)).any() else LINE if (between >= LINE).any() \
        else SENTENCE
    glue = lay.no_cut | (strength < floor) | (lay.leans & (strength < SECTION))
    for items in (lay.in_list, lay.in_terms):  # a list is one step of the author's logic: its items share a topic
        if items is not None:
            glue |= items
    return fixed, glue & ~fixed


def _vectors(sents: SentenceSpans, embedder: Any) -> tuple[np.ndarray, str]:
    """Per-sentence unit vectors of the embedder, and its name."""
    X = np.asarray(embedder.embed(sents.texts(), kind="passage"))
    if X.ndim != 2 or X.shape[0] != len(sents):
        raise InputError(f"the embedder gave {X.shape} vectors for {len(sents)} sentences")
    return l2_normalize(X).astype(np.float64), str(getattr(embedder, "model_id", type(embedder).__name__))


def topic_cuts(sents: SentenceSpans, *, embedder: Any = None, topics: int | None = None,
               window: int | None = bd.EVIDENCE_WINDOW) -> tuple[np.ndarray, dict]:
    """Sorted gap indices (a cut after sentence ``i``) of the topic boundaries of ``sents``, and what
    decided them (``vectors``, ``penalty``, ``vocabulary``, the structure counts). ``topics``: as many
    topics as that, where the structure rules allow it (headings still open topics; fewer where fewer
    gaps are open), instead of the count the cost and its price per topic give. ``window``: how far a
    topic's vocabulary reaches, in items (:data:`logichunk.boundaries.EVIDENCE_WINDOW`; None: the whole
    text's, as before; for comparison in the benchmarks)."""
    if topics is not None and (isinstance(topics, bool) or not isinstance(topics, int | np.integer) or topics < 1):
        raise InputError(f"topics must be a positive integer, got {topics!r}")
    if len(sents) < 2:
        return np.zeros(0, np.int64), {"vectors": "lexical" if embedder is None else "embedder", "penalty": 0.0}
    fixed, glue = topic_rules(layout(sents))
    count = None if topics is None else int(topics) - 1
    info: dict[str, Any] = {}
    if embedder is None or count is None:
        bags = item_bags(sents.text, sents.starts, sents.ends)
        penalty = bd.evidence_penalty(bags)
        if count is None:
            info["penalty"] = round(penalty, 6)
            # the prior of a topic's words spreads over the text's kinds, or, in a text longer than the
            # window, over those of the topic's neighbourhood
            info["vocabulary"] = "local" if bd.local_vocabulary(bags, window) else "text"
    if embedder is None:
        cuts = bd.segment_evidence(bags, penalty=penalty, fixed=fixed, glue=glue, count=count, window=window)
        info.update(vectors="lexical", cost="evidence")
    else:  # the embedder's vectors place the topics; unless told how many, the words' evidence chooses
        X, name = _vectors(sents, embedder)
        info.update(vectors=name, cost="scatter")
        if count is None:
            info["count"] = "evidence"
            # the words judge the placements of up to twice the topics they find alone, plus one (on the
            # dev splits the choice never came near that bound; beyond it the path costs thousands of
            # programmes on a long text)
            alone = bd.segment_evidence(bags, penalty=penalty, fixed=fixed, glue=glue, window=window).size
            cuts = bd.segment_global(X, fixed=fixed, glue=glue, select=bd.evidence_scorer(bags, window=window),
                                     max_cuts=2 * alone + 2)
        else:
            cuts = bd.segment_global(X, fixed=fixed, glue=glue, count=count)
    if topics is not None:
        info["count"] = "given"
    return cuts, {**info, "headings": int(fixed.sum()), "open_gaps": int((~glue).sum())}


def segment(text: str, *, units: str = "sentences", embedder: Any = None, topics: int | None = None) -> ChunkTree:
    """The topics of ``text`` as a one-level :class:`~logichunk.tree.ChunkTree` (ids ``1``, ``2``, ...;
    method ``topic``): spans that tile the text exactly, cut where the subject changes (see the
    module docstring: headings, paragraphs, continuations, no topic opening between two items of one
    list). ``units``: ``"sentences"`` (default) or ``"lines"`` (one unit per non-blank
    line: turns of a conversation, a transcript). ``embedder``: measure cohesion with its sentence
    vectors instead of the document's own words: a model, or its name as the CLI takes it (``"e5"``,
    ``"hash"``, ...: :func:`logichunk.models.registry.embedder_of`). ``topics``: how many topics you want
    (an outline's chapters, say): the best cuts for that many, instead of the count the text's cohesion
    gives; headings still open topics, so there may be more, and fewer where the structure leaves fewer
    places to cut. A topic spans at most :data:`~logichunk.boundaries.MAX_SEGMENT_ATOMS` of the units the
    decision reads (paragraphs, else lines or sentences): the bound that keeps it linear in length."""
    if not isinstance(text, str):
        raise InputError(f"segment expects a str, got {type(text).__name__}")
    check_choice(units, UNITS, "units")
    embedder = embedder_of(embedder)
    sents = split_lines(text) if units == "lines" else split_sentences(text)
    cuts, info = topic_cuts(sents, embedder=embedder, topics=topics)
    stats = {"sentences": len(sents), "topics": 0, "units": units, "max_topic_units": bd.MAX_SEGMENT_ATOMS, **info}
    if not len(sents):
        return build_tree_columns(text, [], [], [], [], {"size": [], "sentences": []}, stats=stats)
    first = np.concatenate(([0], cuts + 1)).astype(np.int64)
    last = np.concatenate((cuts, [len(sents) - 1])).astype(np.int64)
    cut_starts, cut_ends = sents.seam_spans()  # a line's indent goes with its line
    starts, ends = cut_starts[first].tolist(), cut_ends[last].tolist()
    k = len(starts)
    stats["topics"] = k
    meta = {"size": [b - a for a, b in zip(starts, ends, strict=True)],
            "sentences": [[a, b + 1] for a, b in zip(first.tolist(), last.tolist(), strict=True)]}
    return build_tree_columns(text, [str(i + 1) for i in range(k)], starts, ends, ["topic"] * k, meta, stats=stats)


def segment_units(units: Iterable[str], *, embedder: Any = None, topics: int | None = None) -> np.ndarray:
    """Topic boundaries of units given one by one (utterances, turns, pre-split sentences): sorted gap
    indices, ``i`` meaning a boundary after ``units[i]`` (the format of the segmentation benchmarks).
    ``embedder`` and ``topics`` as in :func:`segment`."""
    if isinstance(units, str | bytes) or not isinstance(units, Iterable):
        raise InputError(f"segment_units expects a sequence of str (one per unit), got {type(units).__name__}")
    units = list(units)  # (a generator too: checking its items first had used it up, leaving no units, no topics)
    if not all(isinstance(u, str) for u in units):
        raise InputError("segment_units expects a sequence of str (one per unit)")
    embedder = embedder_of(embedder)
    while units and not units[-1]:  # empty units at the end join the last topic (nothing to read in them)
        units.pop()
    if len(units) < 2:
        return np.zeros(0, np.int64)
    return topic_cuts(join_units(units), embedder=embedder, topics=topics)[0]

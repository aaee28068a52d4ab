"""Shared checks of the author's structure in chunk trees (used by several test files)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from logichunk.text.measure import Meter
from logichunk.text.sentences import _split_scalar, _split_vector, split_sentences
from logichunk.text.structure import PARAGRAPH, layout


def split_both_ways(text):
    """The sentences of ``text``, the scalar and the vector splitter agreeing on them, tiling it."""
    s = split_sentences(text)
    for impl in (_split_scalar, _split_vector):
        bounds, brk = impl(text)
        assert bounds.tolist() == s.starts[1:].tolist() and brk.tolist() == s.breaks.tolist(), impl.__name__
    assert "".join(s.texts()) == text
    return s


def assert_headings_open_chunks(tree, text, sizes, unit="chars"):
    """No chunk breaks the rules of :func:`heading_rule_breaks`."""
    for c in heading_rule_breaks(tree, text, sizes, unit):
        raise AssertionError(c)


@lru_cache(maxsize=8)
def _read(text):
    """The sentences, layout and seams of ``text`` for :func:`heading_rule_breaks`, read once per text: a sweep
    of limits over one text (hundreds of trees) read them again for each tree, a third of its time."""
    sents = split_sentences(text)
    if len(sents) < 2:
        return None
    s_starts, s_ends = sents.seam_spans()  # (where chunkers cut: a line's indent goes with its line)
    return sents, layout(sents), s_starts, s_ends, {int(e): i for i, e in enumerate(s_ends.tolist())}


def heading_rule_breaks(tree, text, sizes, unit="chars"):
    """The chunks that end at a bond they should not. No chunk ends with a heading, unless the text ends
    there or, at level 1, the heading and the sentence after it together exceed the user's maximum (the size
    limit comes first) and either that sentence fits alone (it is not cut to make room) or the headings take
    half the maximum or more (tier 4 makes room for shorter ones in the first piece of a longer sentence). What
    a heading or lead-in goes on into includes the rest of a block kept whole (a fence, a comment that
    fits the maximum: no cut falls inside it, so the bond to it is what the limit breaks). Below level 1 a
    chunk ends at a bond only where it is a lead-in's and the run it holds exceeds that level's limit (at
    every level, a lead-in's run is all it introduces where that fits alone: the limit breaks its bond first)."""
    read = _read(text)
    if read is None:
        return
    sents, lay, s_starts, s_ends, last = read
    meter = Meter(text, unit)
    block = lay.in_block if lay.in_block is not None else np.zeros(len(sents) - 1, bool)
    intro = lay.introduces if lay.introduces is not None else np.zeros(len(sents) - 1, bool)

    def whole_block(g: int) -> bool:
        """Gap ``g`` lies inside a block (a fence, a comment) that fits the maximum: no cut falls there, so
        a lead-in over the block is the bond the limit breaks."""
        if not block[g]:
            return False
        a, b = g, g
        while a > 0 and block[a - 1]:
            a -= 1
        while b < block.size - 1 and block[b + 1]:
            b += 1
        return meter.size(int(s_starts[a]), int(s_ends[b + 1])) <= sizes[0]

    def next_opens(g: int) -> bool:
        """A lead-in's head opens after gap ``g``: its sentence, or the lines a strong bond ties to it."""
        while g + 1 < intro.size and lay.no_cut[g + 1] and not intro[g + 1]:
            g += 1
        return g + 1 < intro.size and bool(intro[g + 1])

    for c in tree:
        i = last.get(c.span.end)
        if i is None or i == len(sents) - 1 or not lay.no_cut[i]:
            continue
        j = i + 1  # the heading, the headings right under it, and the first sentence they title (and the
        while j < len(sents) - 1 and (lay.no_cut[j] or whole_block(j)):  # rest of a block kept whole there)
            j += 1
        if c.level > 1 and c.span.end == tree.get(c.parent).span.end:
            continue  # its parent ends there too, and is checked itself
        limit = sizes[0]
        if c.level > 1:  # (the limit its children were cut under: the first the parent exceeds)
            parent = tree.get(c.parent)
            limit = next(x for x in sizes[c.level - 1 :] if meter.size(parent.span.start, parent.span.end) > x)
        if lay.lead_in[i] and intro[i:j].any():  # a lead-in (or a weak bond over one: a "<details>" line over
            # "The steps are:") goes on into all it introduces where that fits alone (at every level: the
            e = j  # limit breaks its bond first, and keeps what it introduces whole) — up to the next lead-in's
            while e < len(sents) - 1 and lay.strength[e] < PARAGRAPH and not intro[e] and not next_opens(e):
                e += 1  # head, which goes with what it introduces in turn
            g = i + int(np.flatnonzero(intro[i:j])[-1])  # (the lead-in the chain ends in)
            if meter.size(int(s_starts[g + 1]), int(s_ends[e])) <= limit:
                j = e
        k = i  # back to the first of a run of headings (and over a block kept whole that a closing line's bond
        while k > 0 and (lay.no_cut[k - 1] or whole_block(k - 1)):  # holds: a comment over "</details>")
            k -= 1
        if c.level > 1:  # below level 1 only a lead-in's bond (the weakest) gives way, to a run over the limit
            if not (lay.lead_in[i] and meter.size(int(s_starts[k]), int(s_ends[j])) > limit):
                yield c
        elif meter.size(int(s_starts[k]), int(s_ends[j])) <= sizes[0] \
                or (meter.size(int(s_starts[j]), int(s_ends[j])) > sizes[0]
                    and 2 * meter.size(int(s_starts[k]), int(s_starts[j])) < sizes[0]):
            yield c

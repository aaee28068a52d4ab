"""logichunk — cut text where its logic breaks, keep the cuts as a tree of exact spans.

Quick use::

    from logichunk import chunk
    tree = chunk(text, max_size=1000)
    for c in tree.leaves():
        print(c.id, c.span, tree.text_of(c))

    topics = segment(text)      # where the subject changes, no size limit
"""

from __future__ import annotations

from .chunkers.logic_chain import CascadeSettings, chunk, chunk_logic_chain, level_sizes
from .chunkers.many import chunk_many
from .chunkers.topics import segment, segment_units
from .errors import InputError, LogichunkError, ModelUnavailable
from .text.sentences import SentenceSpans, sentences, split_sentences
from .tree import ChunkTree, check_tree
from .types import Bubble, Chunk, Hit, Sentence, Span

__version__ = "0.1.0"

__all__ = [
    "Bubble", "CascadeSettings", "Chunk", "ChunkTree", "Hit", "InputError", "LogichunkError",
    "ModelUnavailable", "Sentence", "SentenceSpans", "Span", "check_tree", "chunk", "chunk_logic_chain", "chunk_many",
    "level_sizes", "segment", "segment_units", "sentences", "split_sentences", "__version__",
]

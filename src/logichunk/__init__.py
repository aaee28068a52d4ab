"""logichunk — cut text where its logic breaks, keep the cuts as a tree of exact spans.

Quick use::

    from logichunk import chunk
    tree = chunk(text, max_size=1000)
    for c in tree.leaves():
        print(c.id, c.span, tree.text_of(c))

    topics = segment(text)      # where the subject changes, no size limit

    for part in chunk_stream(read_blocks("huge.log"), max_size=1000):  # any length, bounded memory
        for record in part.records():   # offsets into the whole text, ids counted on
            ...
"""

from __future__ import annotations

from .chunkers.logic_chain import CascadeSettings, chunk, chunk_logic_chain, level_sizes
from .chunkers.many import chunk_many
from .chunkers.stream import StreamPart, chunk_stream
from .chunkers.topics import segment, segment_units
from .errors import InputError, LogichunkError, ModelUnavailable
from .text.decode import read_blocks
from .text.sentences import SentenceSpans, sentences, split_sentences
from .tree import ChunkTree, check_tree
from .types import Bubble, Chunk, Hit, Sentence, Span

__version__ = "0.1.0"

__all__ = [
    "Bubble", "CascadeSettings", "Chunk", "ChunkTree", "Hit", "InputError", "LogichunkError",
    "ModelUnavailable", "Sentence", "SentenceSpans", "Span", "StreamPart", "check_tree", "chunk", "chunk_logic_chain",
    "chunk_many", "chunk_stream", "level_sizes", "read_blocks", "segment", "segment_units", "sentences",
    "split_sentences", "__version__",
]

"""QA s30: the framework adapters as LangChain / LlamaIndex users expect them. ``chunk_overlap`` is the most
text two neighbouring chunks share (it was twice that), PREVIOUS/NEXT link the text right before and after
a node (they jumped a kilobyte), the LlamaIndex defaults index no nested duplicates, what LlamaIndex embeds
(metadata + text) stays within ``chunk_size``, no metadata value is None, and overlap windows open at a
clause's start."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import InputError

pytest.importorskip("langchain_text_splitters")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document as LCDocument  # noqa: E402
from llama_index.core import Document, VectorStoreIndex  # noqa: E402
from llama_index.core.schema import MetadataMode, NodeRelationship  # noqa: E402

from logichunk.integrations.langchain import LogichunkTextSplitter  # noqa: E402
from logichunk.integrations.llamaindex import LogichunkEmbedding, LogichunkNodeParser  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EN = (ROOT / "examples" / "en_public_domain.md").read_text(encoding="utf-8")
ZH = (ROOT / "examples" / "zh_public_domain.txt").read_text(encoding="utf-8")

WORDS = st.sampled_from(["Hello", "world", "overlap", "naïve", "中文", "句子", "桃花", "😀", "12.5", "x" * 12, "said"])
SEPS = st.sampled_from([" ", ", ", ". ", "。", "，", "\n", "\n\n", ""])
TEXTS = st.lists(st.tuples(WORDS, SEPS), min_size=1, max_size=90).map(lambda xs: "".join(a + b for a, b in xs))
CLAUSE_END = set("，、；：。！？…,;:.!?\n”’」』）)\"'")


def _size(text: str, unit: str) -> int:
    return len(text.encode()) if unit == "bytes" else len(text)


@settings(max_examples=80, deadline=None)
@given(text=TEXTS, size=st.integers(8, 120), frac=st.floats(0, 0.99), unit=st.sampled_from(["chars", "bytes"]),
       levels=st.integers(1, 2))
def test_neighbours_share_at_most_chunk_overlap(text, size, frac, unit, levels):
    """Every LangChain-legal setting (overlap < size) is accepted; neighbours share at most chunk_overlap (it
    was 2 x), a chunk's text is the source's slice within chunk_size, and the chunks' own spans tile the
    text (gaps only where a chunk of whitespace was left out)."""
    overlap = int(size * frac)
    s = LogichunkTextSplitter(chunk_size=size, chunk_overlap=overlap, unit=unit, levels=levels)
    docs = s.create_documents([text])
    for d in docs:
        a, b = d.metadata["start_index"], d.metadata["end_index"]
        assert d.page_content == text[a:b]
        assert _size(d.page_content, unit) <= size  # (own room under one character too: "中" is 3 bytes)
        assert b == d.metadata["chunk_end"] and a <= d.metadata["chunk_start"]  # widened before, never after
    for x, y in zip(docs, docs[1:], strict=False):
        shared = text[y.metadata["start_index"] : max(y.metadata["start_index"], x.metadata["end_index"])]
        assert _size(shared, unit) <= overlap
    own = [(d.metadata["chunk_start"], d.metadata["chunk_end"]) for d in docs]
    edges = [0, *[e for span in own for e in span], len(text)]
    for gap_start, gap_end in zip(edges[::2], edges[1::2], strict=True):  # between own spans: whitespace only
        assert gap_start <= gap_end and not text[gap_start:gap_end].strip()


def test_chunk_overlap_means_langchain_s_on_the_examples():
    """1000/200 embedded 2.07x the text with neighbours sharing 400; 1000/500 was refused."""
    text = EN + ZH
    for size, overlap in ((1000, 200), (500, 50), (1000, 500)):
        docs = LogichunkTextSplitter(chunk_size=size, chunk_overlap=overlap).create_documents([text])
        shared = [x.metadata["end_index"] - y.metadata["start_index"] for x, y in zip(docs, docs[1:], strict=False)]
        assert max(shared) <= overlap and max(len(d.page_content) for d in docs) <= size
        if overlap == 200:
            assert sum(len(d.page_content) for d in docs) / len(text) < 1.5
    with pytest.raises(InputError, match=r"chunk_overlap 300 leaves no room in a chunk of 300.*overlap < size"):
        LogichunkTextSplitter(chunk_size=300, chunk_overlap=300)


def _check_links(nodes, text, leaves_only):
    by = {n.node_id: n for n in nodes}
    own = {n.node_id: (n.metadata["chunk_start"], n.metadata["chunk_end"]) for n in nodes}
    for n in nodes:
        for rel, step in ((NodeRelationship.NEXT, 1), (NodeRelationship.PREVIOUS, -1)):
            info = n.relationships.get(rel)
            if info is None:  # nothing (but whitespace) on that side
                rest = text[own[n.node_id][1] :] if step > 0 else text[: own[n.node_id][0]]
                assert not rest.strip(), (n.node_id, rel)
                continue
            m = by[info.node_id]
            gap = (own[n.node_id][1], own[m.node_id][0]) if step > 0 else (own[m.node_id][1], own[n.node_id][0])
            assert gap[0] <= gap[1] and not text[gap[0] : gap[1]].strip(), (n.node_id, rel, m.node_id)
            if leaves_only:  # the leaves' chain goes both ways
                back = m.relationships[NodeRelationship.PREVIOUS if step > 0 else NodeRelationship.NEXT]
                assert back.node_id == n.node_id
            elif gap[0] == gap[1]:  # a node of the same level where that level goes on, else a leaf
                same = [k for k in nodes if k.metadata["level"] == n.metadata["level"]
                        and own[k.node_id][0 if step > 0 else 1] == gap[0 if step > 0 else 1]]
                assert m.node_id == same[0].node_id if same else m.metadata["is_leaf"]


@settings(max_examples=60, deadline=None)
@given(text=TEXTS, size=st.integers(30, 150), leaves_only=st.booleans(), overlap=st.sampled_from([0, 5]))
def test_previous_and_next_are_the_text_right_before_and_after(text, size, leaves_only, overlap):
    nodes = LogichunkNodeParser(chunk_size=size, levels=3, leaves_only=leaves_only, chunk_overlap=overlap
                                ).get_nodes_from_documents([Document(text=text, id_="d")])
    _check_links(nodes, text, leaves_only)


def test_include_metadata_false_gives_no_metadata_as_llamaindex_s_parsers():
    """NodeParser.include_metadata=False: SentenceSplitter's and MarkdownNodeParser's nodes (and
    HierarchicalNodeParser's, its SentenceSplitters') have no metadata (neither the document's nor their own keys); ours had chunk_id, level, ... The span is
    start_char_idx/end_char_idx, the tree PARENT/CHILD, as with metadata."""
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter

    doc = Document(text=EN, id_="d", metadata={"author": "Someone"})
    # (SentenceSplitter's own sentence splitter loads NLTK's model, five seconds; its contract is not in it)
    theirs = [SentenceSplitter(chunk_size=100, chunk_overlap=0, include_metadata=False, tokenizer=str.split,
                               chunking_tokenizer_fn=lambda t: t.split(". ")),
              MarkdownNodeParser(include_metadata=False)]
    assert all(n.metadata == {} for p in theirs for n in p.get_nodes_from_documents([doc]))
    # (the document's metadata comes off the size when included: the same cuts are those of a document without it)
    with_meta = LogichunkNodeParser(chunk_size=300, levels=2, leaves_only=False).get_nodes_from_documents(
        [Document(text=EN, id_="d")])
    for after in (None, MarkdownNodeParser(include_metadata=False)):
        first = [doc] if after is None else after.get_nodes_from_documents([doc])
        nodes = LogichunkNodeParser(chunk_size=300, levels=2, leaves_only=False,
                                    include_metadata=False).get_nodes_from_documents(first)
        assert nodes and all(n.metadata == {} and EN[n.start_char_idx : n.end_char_idx] == n.text for n in nodes)
        if after is None:  # the same nodes, offsets and tree as with metadata: only the metadata left out
            assert [(n.node_id, n.start_char_idx, n.end_char_idx, sorted(r.name for r in n.relationships))
                    for n in nodes] == [(n.node_id, n.start_char_idx, n.end_char_idx,
                                         sorted(r.name for r in n.relationships)) for n in with_meta]
            assert any(NodeRelationship.PARENT in n.relationships for n in nodes)
    assert all({"chunk_id", "level", "chunk_start"} <= n.metadata.keys() for n in with_meta)


def test_previous_and_next_on_the_example():
    """d:2.1.2 (ending at 852) had NEXT d:5.1.1 (starting at 1981): the next level-3 node, far ahead."""
    nodes = LogichunkNodeParser(chunk_size=800, levels=3, leaves_only=False).get_nodes_from_documents(
        [Document(text=EN, id_="d")])
    by = {n.node_id: n for n in nodes}
    for n in nodes:
        nxt = n.relationships.get(NodeRelationship.NEXT)
        if nxt is not None:
            assert by[nxt.node_id].start_char_idx == n.end_char_idx, (n.node_id, nxt.node_id)
    _check_links(nodes, EN, False)


def test_llamaindex_defaults_are_a_drop_in_for_sentence_splitter():
    """Every level was indexed by default: a flat index returned a chunk and the chunks inside it."""
    p = LogichunkNodeParser(chunk_size=800)
    lc = LogichunkTextSplitter(chunk_size=800)
    assert (p.levels, p.leaves_only) == (1, True) == (lc._opts.levels, lc._leaves_only)
    assert (LogichunkNodeParser.from_defaults().levels, LogichunkNodeParser.from_defaults().leaves_only) == (1, True)
    index = VectorStoreIndex.from_documents([Document(text=EN, id_="en")], transformations=[p],
                                            embed_model=LogichunkEmbedding())
    hits = [(h.node.start_char_idx, h.node.end_char_idx) for h in
            index.as_retriever(similarity_top_k=6).retrieve("Alice White Rabbit")]
    assert len(hits) == 6
    assert not any(a != b and b[0] <= a[0] and a[1] <= b[1] for a in hits for b in hits)  # none inside another


META = {"file_path": "/data/corpus/some/very/long/path/to/a/knowledge/base/document/about/things.md",
        "title": "A rather long title for the document that a reader adds as metadata to every node",
        "author": "Someone"}


def test_what_llamaindex_embeds_stays_within_chunk_size_in_tokens():
    """Metadata + text reached 173 tokens with chunk_size=128 (SentenceSplitter: 128)."""
    pytest.importorskip("tiktoken")
    from llama_index.core.utils import get_tokenizer

    tok = get_tokenizer()
    doc = Document(text=EN + ZH, id_="d", metadata=META)
    nodes = LogichunkNodeParser(chunk_size=128, tokenizer=tok).get_nodes_from_documents([doc])
    for mode in (MetadataMode.EMBED, MetadataMode.LLM):
        assert max(len(tok(n.get_content(mode))) for n in nodes) <= 128
    assert "".join(n.text for n in nodes) == EN + ZH


@settings(max_examples=40, deadline=None)
@given(text=TEXTS, size=st.integers(60, 200), meta=st.text(max_size=40), overlap=st.sampled_from([0, 10]),
       levels=st.integers(1, 2))
def test_what_llamaindex_embeds_stays_within_chunk_size_in_chars(text, size, meta, overlap, levels):
    doc = Document(text=text, id_="d", metadata={"source": meta})
    nodes = LogichunkNodeParser(chunk_size=size, chunk_overlap=overlap, levels=levels,
                                leaves_only=False).get_nodes_from_documents([doc])
    for n in nodes:
        assert len(n.get_content(MetadataMode.EMBED)) <= size and len(n.get_content(MetadataMode.LLM)) <= size
        assert text[n.start_char_idx : n.end_char_idx] == n.text


def test_metadata_with_no_room_left_is_a_one_line_error():
    doc = Document(text=EN, id_="d", metadata=META)
    with pytest.raises(InputError, match=r"^the metadata of node 'd'.* takes \d+ of chunk_size 100 .*no room") as err:
        LogichunkNodeParser(chunk_size=100).get_nodes_from_documents([doc])
    assert "\n" not in str(err.value)
    # kept out of what is embedded, it takes nothing
    doc = Document(text=EN, id_="d", metadata=META, excluded_embed_metadata_keys=list(META),
                   excluded_llm_metadata_keys=list(META))
    assert LogichunkNodeParser(chunk_size=100).get_nodes_from_documents([doc])


def test_no_metadata_value_is_none():
    """A top-level chunk had ``parent_id: None``, which some vector stores refuse."""
    out = LogichunkTextSplitter(chunk_size=300, levels=2, leaves_only=False).split_documents(
        [LCDocument(page_content=EN)])
    nodes = LogichunkNodeParser(chunk_size=300, levels=2, leaves_only=False).get_nodes_from_documents(
        [Document(text=EN)])
    for md in [d.metadata for d in out] + [n.metadata for n in nodes]:
        assert None not in md.values()
        assert ("parent_id" in md) == (md["level"] > 1)
        assert {"chunk_start", "chunk_end", "is_leaf"} <= md.keys()
    # a child split again: its chunks are top-level now, with no stale parent_id
    child = next(d for d in out if d.metadata["level"] == 2)
    again = LogichunkTextSplitter(chunk_size=60).split_documents([child])
    assert again and all("parent_id" not in d.metadata for d in again)


def test_overlap_windows_open_at_a_clause_start():
    """The README's zh example showed ``美，落英缤纷。`` (opened after 芳草鲜, mid-clause)."""
    s = LogichunkTextSplitter(chunk_size=256, tokenizer="cl100k_base", chunk_overlap=32)
    for text in (ZH, EN):
        widened = [d for d in s.create_documents([text]) if d.metadata["start_index"] < d.metadata["chunk_start"]]
        assert len(widened) > 3
        for d in widened:  # zh: a clause's start; en (long clauses): a clause's where it keeps half, else a word's
            a = d.metadata["start_index"]
            before = text[:a].rstrip(" \t")
            word = not before[-1:].isalnum() or text[a].isspace()  # (BPE's " word" opens on its space)
            assert not before or before[-1] in CLAUSE_END or (text is EN and word), repr(text[a - 10 : a + 20])
    # the clause's start is taken over a word's when it keeps at least half the reach
    from logichunk.chunkers.overlap import overlap_edges

    text = "Alice sat on the bank, and then she saw it. Then a Rabbit ran by."
    start = text.index("Then")
    ws, we = overlap_edges(text, "chars", [start], [len(text)], 40)
    assert text[ws[0] : we[0]] == "and then she saw it. Then a Rabbit ran by."
    ws, _ = overlap_edges(text, "chars", [start], [len(text)], 15)  # no clause start within 15: a word's
    assert text[ws[0] : start] == "she saw it. "

"""QA s35: a RAG engineer swaps our splitters into a working LangChain or LlamaIndex pipeline, passing what
the peers' docs have them pass. ``RecursiveCharacterTextSplitter``'s usual options were refused
(``length_function=len``) or a TypeError naming ``TextSplitter.__init__``; the chunks of a forced split did
not say so in their metadata (the CLI's records do); after ``MarkdownNodeParser`` a node's offsets were into
the section, not the document its SOURCE names, and PREVIOUS/NEXT stopped at each section's end."""

from __future__ import annotations

import pickle
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logichunk import InputError, chunk
from logichunk.models.embedding import l2_normalize

pytest.importorskip("langchain_text_splitters")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document as LCDocument  # noqa: E402
from langchain_text_splitters import TextSplitter  # noqa: E402
from llama_index.core import Document  # noqa: E402
from llama_index.core.ingestion import IngestionCache, IngestionPipeline  # noqa: E402
from llama_index.core.node_parser import MarkdownNodeParser  # noqa: E402
from llama_index.core.schema import NodeRelationship  # noqa: E402

from logichunk.integrations.langchain import LogichunkTextSplitter  # noqa: E402
from logichunk.integrations.llamaindex import LogichunkNodeParser  # noqa: E402
from test_integrations_s30 import TEXTS, _check_links  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EN = (ROOT / "examples" / "en_public_domain.md").read_text(encoding="utf-8")
MD = "\n\n".join(f"# Part {i}\n\n{EN[i * 700:(i + 1) * 700]}" for i in range(5))  # sections for MarkdownNodeParser


def test_recursive_character_text_splitter_s_usual_options_are_a_drop_in():
    """LangChain's docs make a splitter with ``length_function=len, is_separator_regex=False``: both were
    refused (len was read as a token counter); ``separators=`` or a typo was a TypeError naming
    ``TextSplitter.__init__``; ``Splitter(500)`` said 'unknown chunking method 500'."""
    usual = LogichunkTextSplitter(chunk_size=300, chunk_overlap=50, length_function=len, is_separator_regex=False,
                                  add_start_index=True)
    plain = LogichunkTextSplitter(chunk_size=300, chunk_overlap=50)
    assert isinstance(usual, TextSplitter)
    docs = usual.split_documents([LCDocument(page_content=EN, metadata={"source": "en"})])
    assert [d.page_content for d in docs] == plain.split_text(EN)
    assert all(EN[d.metadata["start_index"] : d.metadata["end_index"]] == d.page_content for d in docs)
    assert pickle.loads(pickle.dumps(usual)).split_text(EN) == plain.split_text(EN)  # (multiprocessing pools)
    for kw, needle in (({"length_function": len, "tokenizer": "cl100k_base"}, "only length_function=len"),
                       ({"length_function": len, "unit": "bytes"}, "only length_function=len"),
                       ({"separators": ["\n\n", "\n", " ", ""]}, "separators= does not apply"),
                       ({"encoding_name": "cl100k_base"}, "tokenizer='cl100k_base'"),
                       ({"chunk_sise": 300}, "has no option 'chunk_sise'"),
                       ({"is_separator_regex": "yes"}, "is_separator_regex must be True or False")):
        with pytest.raises(InputError, match=needle) as err:
            LogichunkTextSplitter(**kw)
        assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="pass the size as chunk_size=500"):
        LogichunkTextSplitter(500)


def test_the_chunks_of_a_forced_split_say_so_in_their_metadata():
    """A bubble (a sentence cut where no break fitted) marked the CLI's records of its chunks, never the
    adapters' metadata: ``bubble`` is there now, on those chunks only (no None values elsewhere)."""
    tree = chunk(EN, max_size=300, levels=1)
    spans = [(b.context["span"], b.category) for b in tree.bubbles]
    assert spans  # (the example has forced splits at 300)
    docs = LogichunkTextSplitter(chunk_size=300).split_documents([LCDocument(page_content=EN)])
    nodes = LogichunkNodeParser(chunk_size=300).get_nodes_from_documents([Document(text=EN, id_="en")])
    for metas in ([d.metadata for d in docs], [n.metadata for n in nodes]):
        assert [(m["chunk_start"], m["chunk_end"]) for m in metas] == [(c.span.start, c.span.end) for c in tree]
        for m in metas:
            about = [cat for (a, b), cat in spans if m["chunk_start"] < b and a < m["chunk_end"]]
            assert m.get("bubble") == (about[0] if about else None), m
            assert None not in m.values()
        assert sum("bubble" in m for m in metas) >= 2
    assert "bubble" in nodes[0].excluded_embed_metadata_keys  # (ours: not embedded)
    # split again: an earlier chunk's bubble is not the new chunk's
    again = LogichunkTextSplitter(chunk_size=5000).split_documents(docs[:1])
    assert "bubble" not in again[0].metadata and "logichunk_bubble" not in again[0].metadata


def _after_markdown(parser: LogichunkNodeParser) -> list:
    return IngestionPipeline(transformations=[MarkdownNodeParser(), parser]).run(
        documents=[Document(text=MD, id_="md-doc")])


@pytest.mark.parametrize("leaves_only", [True, False])
def test_after_markdown_offsets_are_the_document_s_and_links_run_on(leaves_only):
    """After ``MarkdownNodeParser`` a node's start_char_idx/end_char_idx were into its section (MD[a:b] was
    other text) and the last node of a section had no NEXT: the document's text (SOURCE) went on."""
    nodes = _after_markdown(LogichunkNodeParser(chunk_size=200, levels=3, leaves_only=leaves_only))
    assert {n.ref_doc_id for n in nodes} == {"md-doc"}
    for n in nodes:
        assert MD[n.start_char_idx : n.end_char_idx] == n.text, n.node_id
        assert n.metadata["chunk_start"] >= n.start_char_idx and n.metadata["chunk_end"] == n.end_char_idx
    _check_links(nodes, MD, leaves_only)
    firsts = [n for n in nodes if n.text.startswith("# Part")]
    assert len(firsts) >= 4 and all(NodeRelationship.PREVIOUS in n.relationships for n in firsts[1:])


def test_nested_input_nodes_keep_the_document_s_offsets_and_are_not_linked_across():
    """Our own hierarchy fed to a second parser: parents and children overlap, so offsets are shifted by
    each input node's place and no link joins a parent's nodes to its child's."""
    doc = Document(text=EN[:3000], id_="en")
    nodes = IngestionPipeline(transformations=[LogichunkNodeParser(chunk_size=800, levels=2, leaves_only=False),
                                               LogichunkNodeParser(chunk_size=200)]).run(documents=[doc])
    assert all(doc.text[n.start_char_idx : n.end_char_idx] == n.text for n in nodes)
    by = {n.node_id: n for n in nodes}
    for n in nodes:
        nxt = n.relationships.get(NodeRelationship.NEXT)
        assert nxt is None or by[nxt.node_id].start_char_idx >= n.metadata["chunk_end"], n.node_id


@settings(max_examples=25, deadline=None)
@given(text=TEXTS, first=st.integers(20, 200), size=st.integers(8, 60), leaves_only=st.booleans())
def test_after_another_parser_nodes_are_the_document_s_text_linked_through(text, first, size, leaves_only):
    """Any text, cut by a first parser into pieces that tile it (our leaves) and again into a tree: every
    node is the document's text at its offsets, and PREVIOUS/NEXT name the text right before and after it
    across the pieces' seams (of its own level where that level goes on there, else the leaf)."""
    doc = Document(text=text, id_="d")
    nodes = IngestionPipeline(transformations=[
        LogichunkNodeParser(chunk_size=first, include_metadata=False),
        LogichunkNodeParser(chunk_size=size, levels=3, leaves_only=leaves_only)]).run(documents=[doc])
    assert all(text[n.start_char_idx : n.end_char_idx] == n.text for n in nodes)
    _check_links(nodes, text, leaves_only)


class _Seeded:
    """A stand-in embedder whose vectors depend on a seed: two of them place cliff's cuts differently."""

    dim = 16

    def __init__(self, seed: int) -> None:
        self.seed, self.model_id = seed, f"seeded-{seed}"

    def embed(self, texts, *, kind="passage"):
        rows = [np.random.default_rng([self.seed, zlib.crc32(t.encode())]).standard_normal(self.dim) for t in texts]
        return l2_normalize(np.array(rows).reshape(len(texts), self.dim))


def test_the_ingestion_cache_tells_the_models_apart_and_the_dump_reads_back():
    """LlamaIndex keys its ingestion cache by the parser's dump, which left the models out: a pipeline with
    another embedder got the first one's nodes. The dump read back was refused ('Input should be
    callable': LlamaIndex's serialised id_func), and a model's id was read back as the model."""
    doc = Document(text=EN[:2000], id_="en")
    one, two = (LogichunkNodeParser(method="cliff", embedder=_Seeded(k), chunk_size=300) for k in (1, 2))
    fresh = [[n.text for n in p.get_nodes_from_documents([doc])] for p in (one, two)]
    assert fresh[0] != fresh[1]
    cache = IngestionCache()
    for parser, want in zip((one, two), fresh, strict=True):
        got = IngestionPipeline(transformations=[parser], cache=cache).run(documents=[doc])
        assert [n.text for n in got] == want
    plain = LogichunkNodeParser(chunk_size=300, levels=2, unit="bytes", chunk_overlap=20, leaves_only=False)
    assert LogichunkNodeParser.from_json(plain.to_json()).to_dict() == plain.to_dict()
    assert LogichunkNodeParser.from_dict(one.to_dict(), embedder=_Seeded(1)).to_dict() == one.to_dict()
    with pytest.raises(InputError, match="method 'cliff' needs an embedder: pass embedder="):
        LogichunkNodeParser.from_json(one.to_json())

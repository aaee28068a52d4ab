"""The framework adapters (issue 20), against the real LangChain and LlamaIndex packages."""

from __future__ import annotations

from pathlib import Path

import pytest

from logichunk import InputError

ROOT = Path(__file__).resolve().parent.parent
EN = (ROOT / "examples" / "en_public_domain.md").read_text(encoding="utf-8")
ZH = (ROOT / "examples" / "zh_public_domain.txt").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- LangChain

lc_docs = pytest.importorskip("langchain_core.documents")
lc_split = pytest.importorskip("langchain_text_splitters")


def _splitter(**kw):
    from logichunk.integrations.langchain import LogichunkTextSplitter

    return LogichunkTextSplitter(**kw)


def test_langchain_splitter_is_a_text_splitter_and_keeps_metadata():
    from langchain_core.documents import BaseDocumentTransformer, Document

    s = _splitter(chunk_size=300)
    assert isinstance(s, lc_split.TextSplitter) and isinstance(s, BaseDocumentTransformer)
    docs = [Document(page_content=EN, metadata={"source": "en.md", "tags": ["a"]}),
            Document(page_content=ZH, metadata={"source": "zh.txt"})]
    out = s.split_documents(docs)
    for src, text in (("en.md", EN), ("zh.txt", ZH)):
        mine = [d for d in out if d.metadata["source"] == src]
        assert len(mine) > 3
        # leaves in order tile the document exactly, and each page_content is where start_index says
        assert "".join(d.page_content for d in mine) == text
        pos = 0
        for d in mine:
            assert d.metadata["start_index"] == pos and d.metadata["end_index"] == pos + len(d.page_content)
            assert text[d.metadata["start_index"] : d.metadata["end_index"]] == d.page_content
            assert len(d.page_content) <= 300
            pos = d.metadata["end_index"]
            assert {"chunk_id", "level", "method", "chunk_start", "chunk_end", "is_leaf"} <= d.metadata.keys()
            assert ("parent_id" in d.metadata) == (d.metadata["level"] > 1)  # (no None value for a root)
    # input metadata is copied, not shared
    out[0].metadata["tags"].append("b")
    assert docs[0].metadata["tags"] == ["a"] and out[1].metadata["tags"] == ["a"]
    # the LangChain entry points agree
    assert [d.page_content for d in s.transform_documents(docs[:1])] == s.split_text(EN)


def test_langchain_hierarchy_and_overlap():
    s = _splitter(chunk_size=600, levels=3, leaves_only=False)
    out = s.split_documents([lc_docs.Document(page_content=EN)])
    by_id = {d.metadata["chunk_id"]: d for d in out}
    assert any(d.metadata["level"] > 1 for d in out)
    for d in out:
        p = d.metadata.get("parent_id")
        if p is not None:  # a child lies inside its parent
            parent = by_id[p].metadata
            assert parent["start_index"] <= d.metadata["start_index"] < d.metadata["end_index"] <= parent["end_index"]
    leaves = [d for d in out if d.metadata["is_leaf"]]
    assert [d.page_content for d in leaves] == s.split_text(EN)

    o = _splitter(chunk_size=300, chunk_overlap=40)
    # (a chunk's own text gets 300 - 40: page_content, the overlap before it included, stays within
    # chunk_size as with LangChain's own splitters, and neighbours share at most 40)
    plain = _splitter(chunk_size=260).split_documents([lc_docs.Document(page_content=EN)])
    wide = o.split_documents([lc_docs.Document(page_content=EN)])
    assert [(d.metadata["chunk_start"], d.metadata["chunk_end"]) for d in wide] == \
        [(d.metadata["start_index"], d.metadata["end_index"]) for d in plain]
    grew = 0
    for d in wide:
        a, b = d.metadata["start_index"], d.metadata["end_index"]
        assert EN[a:b] == d.page_content and len(d.page_content) <= 300
        assert d.metadata["chunk_start"] - a <= 40 and b == d.metadata["chunk_end"]
        grew += a < d.metadata["chunk_start"]
    assert grew >= len(wide) - 1  # every chunk but the first starts with the end of the one before


def test_langchain_exact_tokens():
    tiktoken = pytest.importorskip("tiktoken")
    from logichunk.integrations.langchain import LogichunkTextSplitter

    s = LogichunkTextSplitter.from_tiktoken_encoder("cl100k_base", chunk_size=64)
    enc = tiktoken.get_encoding  # noqa: F841  (the bundled file is used; no download)
    from logichunk.text.tokens import resolve_tokenizer

    cl = resolve_tokenizer("cl100k_base").tokenizer
    for text in (EN, ZH):
        parts = s.split_text(text)
        assert "".join(parts) == text
        assert max(len(cl.encode_ordinary(p)) for p in parts) <= 64
        assert s._length_function(text) == len(cl.encode_ordinary(text))


def test_langchain_bad_options_fail_at_construction():
    with pytest.raises(InputError, match="unknown tokenizer"):
        _splitter(tokenizer="no-such-tokenizer")
    with pytest.raises(ValueError):
        _splitter(chunk_size=10, chunk_overlap=20)  # LangChain's own check
    # a length function cannot say where a token lies: it was dropped, and 512 "tokens" were 512 characters
    with pytest.raises(InputError, match="length_function .* tokenizer="):
        _splitter(chunk_size=100, length_function=lambda t: len(t.split()))
    for bad, needle in (({"chunk_size": "abc"}, "chunk_size must be a whole number, got 'abc'"),
                        ({"chunk_size": 100.7}, "chunk_size must be a whole number"),
                        ({"chunk_size": True}, "chunk_size must be a whole number"),
                        ({"chunk_size": 0}, "chunk_size must be at least 1"),
                        ({"chunk_size": 100, "chunk_overlap": 100}, "chunk_overlap 100 leaves no room"),
                        ({"sizes": [300, "x"]}, "sizes must be a whole number"),
                        ({"method": "nonsense"}, "unknown method 'nonsense': use one of logic-chain, ")):
        with pytest.raises(InputError, match=needle):
            _splitter(**bad)
    assert _splitter(chunk_size=100.0)._chunk_size == 100  # (an integral float is that number)
    with pytest.raises(InputError, match="metadatas has 1 entries for 2 texts"):
        _splitter(chunk_size=300).create_documents([EN, ZH], [{}])


def test_adapters_leave_out_chunks_of_whitespace_only():
    """A run of blank lines of its own, or a text of spaces, is no chunk a framework embeds (LangChain's
    splitters return none); what is kept is still where its offsets say."""
    text = " " * 2500 + EN[:1500] + "\n" * 3000
    s = _splitter(chunk_size=200)
    docs = s.create_documents([text, "   \n  "])
    assert docs and all(d.page_content.strip() for d in docs)
    for d in docs:
        assert text[d.metadata["start_index"] : d.metadata["end_index"]] == d.page_content
    assert [w for d in docs for w in d.page_content.split()] == text.split()  # every word kept, in order
    assert s.split_text("   \n  ") == []
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document

    from logichunk.integrations.llamaindex import LogichunkNodeParser

    nodes = LogichunkNodeParser(chunk_size=200, levels=2, leaves_only=False).get_nodes_from_documents(
        [Document(text=text, id_="d")])
    assert nodes and all(n.text.strip() for n in nodes)
    from llama_index.core.schema import NodeRelationship as R

    ids = {n.node_id for n in nodes}
    for n in nodes:  # no relationship names a node left out
        for key in (R.PREVIOUS, R.NEXT, R.PARENT, R.CHILD):
            r = n.relationships.get(key)
            for info in (r if isinstance(r, list) else [r] if r is not None else []):
                assert info.node_id in ids


# --------------------------------------------------------------------------- LlamaIndex


def test_llamaindex_nodes_carry_spans_and_the_tree():
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document
    from llama_index.core.node_parser import NodeParser, get_leaf_nodes, get_root_nodes
    from llama_index.core.schema import NodeRelationship

    from logichunk.integrations.llamaindex import LogichunkNodeParser

    p = LogichunkNodeParser(chunk_size=800, levels=3, leaves_only=False)
    assert isinstance(p, NodeParser)
    docs = [Document(text=EN, id_="en", metadata={"source": "en.md"}), Document(text=ZH, id_="zh", metadata={"source": "zh"})]
    nodes = p.get_nodes_from_documents(docs)
    assert len({n.node_id for n in nodes}) == len(nodes)
    by_id = {n.node_id: n for n in nodes}
    for doc in docs:
        mine = [n for n in nodes if n.ref_doc_id == doc.id_]
        for n in mine:
            assert doc.text[n.start_char_idx : n.end_char_idx] == n.text
            assert n.metadata["source"] == doc.metadata["source"]
            assert "chunk_id" not in n.get_content(metadata_mode="embed")  # ours stay out of embeddings
            parent = n.relationships.get(NodeRelationship.PARENT)
            if parent is not None:
                pn = by_id[parent.node_id]
                assert n.node_id in [c.node_id for c in pn.child_nodes]
                assert pn.start_char_idx <= n.start_char_idx and n.end_char_idx <= pn.end_char_idx
        leaves = [n for n in get_leaf_nodes(mine)]
        assert "".join(n.text for n in sorted(leaves, key=lambda n: n.start_char_idx)) == doc.text
        roots = get_root_nodes(mine)
        assert "".join(n.text for n in roots) == doc.text
        for a, b in zip(roots, roots[1:], strict=False):  # neighbours on one level
            assert a.next_node.node_id == b.node_id and b.prev_node.node_id == a.node_id


def test_llamaindex_auto_merging_retriever_merges_our_children():
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.core.node_parser import get_leaf_nodes
    from llama_index.core.retrievers import AutoMergingRetriever
    from llama_index.core.storage.docstore import SimpleDocumentStore

    from logichunk.integrations.llamaindex import LogichunkEmbedding, LogichunkNodeParser

    nodes = LogichunkNodeParser(chunk_size=800, levels=3, leaves_only=False).get_nodes_from_documents(
        [Document(text=EN, id_="en")])
    leaves = get_leaf_nodes(nodes)
    docstore = SimpleDocumentStore()
    docstore.add_documents(nodes)
    storage = StorageContext.from_defaults(docstore=docstore)
    index = VectorStoreIndex(leaves, storage_context=storage, embed_model=LogichunkEmbedding())
    base = index.as_retriever(similarity_top_k=6)
    # a parent whose children are all leaves: asking for its text finds the children first
    parent = next(n for n in nodes if n.child_nodes and all(
        docstore.get_document(c.node_id).child_nodes is None for c in n.child_nodes) and len(n.child_nodes) <= 3)
    query = parent.text
    plain = base.retrieve(query)
    assert all(h.node.child_nodes is None for h in plain)  # the index holds leaves only
    kids = {c.node_id for c in parent.child_nodes}
    assert kids <= {h.node.node_id for h in plain}
    merged = AutoMergingRetriever(base, storage).retrieve(query)
    got = {h.node.node_id for h in merged}
    doc, dotted = parent.node_id.split(":")
    parts = dotted.split(".")
    up = {f"{doc}:{'.'.join(parts[:k])}" for k in range(1, len(parts) + 1)}  # the parent or an ancestor of it
    assert up & got  # merged into the parent (and maybe further up)
    assert not kids & got


def test_readme_integration_examples_run(monkeypatch):
    import contextlib
    import io
    import re

    from readme_helpers import check_shown

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    ours = [b for b in blocks if "logichunk.integrations" in b or 'tokenizer="cl100k_base"' in b]
    assert len(ours) >= 3  # tokens + overlap, LangChain, LlamaIndex
    monkeypatch.chdir(ROOT)
    for code in ours:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        assert len(out.getvalue().strip().splitlines()) >= 2, code[:80]
        check_shown(code, out.getvalue())  # (the LangChain examples' shown lines, as printed)



def test_llamaindex_embedding_takes_an_embedder_by_name():
    """``LogichunkEmbedding("hash")`` kept the string as the model: ``'str' object has no attribute 'embed'`` at the
    first embedding. A name is resolved as every ``embedder=`` resolves it; a wrong one is one line at once."""
    pytest.importorskip("llama_index.core")
    from logichunk.errors import LogichunkError
    from logichunk.integrations.llamaindex import LogichunkEmbedding

    emb = LogichunkEmbedding("hash:64")
    assert emb.model_name == "hash-v2-d64" and len(emb.get_text_embedding("桃花源记")) == 64
    assert len(emb.get_query_embedding("who followed the rabbit")) == 64
    with pytest.raises(LogichunkError, match="unknown embedder spec 'nope'"):
        LogichunkEmbedding("nope")
    with pytest.raises(InputError, match="embedder must be a model"):
        LogichunkEmbedding(5)
    assert LogichunkEmbedding().model_name.startswith("hash-")  # (the default, as before)

def test_langchain_retriever_over_a_store(tmp_path):
    from langchain_core.retrievers import BaseRetriever

    from logichunk.config import Settings
    from logichunk.integrations.langchain import LogichunkRetriever
    from logichunk.store import Store
    from logichunk.store.ingest import ingest

    store = Store.open(str(tmp_path / "kb.db"), settings=Settings(embedder="hash"))
    ingest(store, [str(ROOT / "examples")])
    r = LogichunkRetriever(store=store, mode="parent", top_k=3)
    assert isinstance(r, BaseRetriever)
    docs = r.invoke("渔人在桃花林里看到了什么")
    assert 1 <= len(docs) <= 3
    assert "桃花" in docs[0].page_content
    titles = {title for _did, title, _source in store.documents()}
    for d in docs:
        assert d.page_content in ZH or d.page_content in EN  # exact text of the stored documents
        assert {"chunk_id", "level", "score", "document_id"} <= d.metadata.keys()
        # where it lies in its document, to cite it
        a, b = d.metadata["span"]
        whole = ZH if d.metadata["document_title"] == "zh_public_domain" else EN
        assert d.metadata["document_title"] in titles and whole[a:b] == d.page_content
    for mode in ("basic", "graph-basic"):
        for d in LogichunkRetriever(store=store, mode=mode, top_k=3).invoke("Alice and the White Rabbit"):
            a, b = d.metadata["span"]
            assert EN[a:b] == d.page_content or ZH[a:b] == d.page_content
    assert [d.metadata["score"] for d in docs] == sorted((d.metadata["score"] for d in docs), reverse=True)


def test_llamaindex_options_are_read_when_set_and_checked():
    """LlamaIndex's parsers read their fields at each call; ours took a copy once, so a parser whose
    chunk_size was set later kept cutting at the old size (and an ingestion cache keyed it by the new)."""
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document

    from logichunk.integrations.llamaindex import LogichunkNodeParser

    doc = Document(text=EN, id_="en")
    fresh = len(LogichunkNodeParser(chunk_size=200, levels=1).get_nodes_from_documents([doc]))
    p = LogichunkNodeParser(chunk_size=2000, levels=1)
    wide = len(p.get_nodes_from_documents([doc]))
    p.chunk_size = 200
    assert wide < fresh == len(p.get_nodes_from_documents([doc]))
    q = LogichunkNodeParser(chunk_size=2000, levels=1).model_copy(update={"chunk_size": 200})
    assert len(q.get_nodes_from_documents([doc])) == fresh
    with pytest.raises(ValueError, match="unknown method 'nonsense': use one of "):
        p.method = "nonsense"
    with pytest.raises(ValueError):
        p.chunk_size = -5
    assert p.method == "logic-chain" and p.chunk_size == 200  # a refused value leaves the parser as it was
    with pytest.raises(ValueError, match="chunk_sizes"):  # HierarchicalNodeParser's spelling: not ignored
        LogichunkNodeParser(chunk_sizes=[2048, 512, 128])
    with pytest.raises(ValueError, match="leaves no room"):
        LogichunkNodeParser(chunk_size=100, chunk_overlap=500)


def test_llamaindex_id_func_and_metadata_separator_are_honoured():
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document
    from llama_index.core.schema import NodeRelationship

    from logichunk.integrations.llamaindex import LogichunkNodeParser

    doc = Document(text=EN, id_="en", metadata={"a": 1, "b": 2}, metadata_separator=" | ")
    nodes = LogichunkNodeParser(chunk_size=800, levels=2, leaves_only=False,
                                id_func=lambda i, d: f"{d.id_}-n{i}").get_nodes_from_documents([doc])
    assert [n.node_id for n in nodes] == [f"en-n{i}" for i in range(len(nodes))]
    ids = {n.node_id for n in nodes}
    assert all(n.relationships[NodeRelationship.PARENT].node_id in ids for n in nodes
               if NodeRelationship.PARENT in n.relationships)
    assert all(n.metadata_separator == " | " for n in nodes)
    assert "a: 1 | b: 2" in nodes[0].get_content(metadata_mode="all")
    # without one, ids stay the document's and the dotted id: the same on every run
    plain = LogichunkNodeParser(chunk_size=800, levels=2, leaves_only=False).get_nodes_from_documents([doc])
    assert plain[0].node_id == "en:1"


def test_llamaindex_node_with_an_unpaired_surrogate_is_one_line():
    # before: UnicodeEncodeError from LlamaIndex's own hash of the node, a traceback out of our parser
    llama = pytest.importorskip("llama_index.core", reason="the LlamaIndex adapter needs llama-index-core")
    from logichunk.integrations.llamaindex import LogichunkNodeParser

    parser = LogichunkNodeParser(chunk_size=200)
    with pytest.raises(InputError, match=r"^the text of node 'd1' holds an unpaired surrogate at character 8; send "):
        parser.get_nodes_from_documents([llama.Document(text="Hello. a\udc80b. Hello world.", id_="d1")])
    assert parser.get_nodes_from_documents([llama.Document(text="Hello. ab. Hello world.", id_="d1")])

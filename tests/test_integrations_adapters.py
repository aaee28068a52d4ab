"""The framework adapters as a RAG developer switching from LangChain or LlamaIndex uses them (QA s28):
parsers chained after LlamaIndex's own, pipelines that upsert and delete by document, the frameworks'
conventions (tokens, from_defaults, one-line errors, metadata), and many documents in one pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk import InputError

pytest.importorskip("langchain_text_splitters")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document as LCDocument  # noqa: E402
from llama_index.core import Document, VectorStoreIndex  # noqa: E402
from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline  # noqa: E402
from llama_index.core.node_parser import MarkdownNodeParser  # noqa: E402
from llama_index.core.schema import MetadataMode, NodeRelationship  # noqa: E402
from llama_index.core.storage.docstore import SimpleDocumentStore  # noqa: E402
from llama_index.core.vector_stores import SimpleVectorStore  # noqa: E402

from logichunk.integrations.langchain import LogichunkTextSplitter  # noqa: E402
from logichunk.integrations.llamaindex import LogichunkEmbedding, LogichunkNodeParser  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EN = (ROOT / "examples" / "en_public_domain.md").read_text(encoding="utf-8")
ZH = (ROOT / "examples" / "zh_public_domain.txt").read_text(encoding="utf-8")
MD = "\n\n".join(f"# Part {i}\n\n{EN[i * 900:(i + 1) * 900]}" for i in range(6))  # sections for MarkdownNodeParser


# --------------------------------------------------------------------------- after another parser


def _chain(parser: LogichunkNodeParser, text: str = MD) -> list:
    return IngestionPipeline(transformations=[MarkdownNodeParser(), parser]).run(
        documents=[Document(text=text, id_="md-doc", metadata={"source": "md"})])


def test_nodes_after_another_parser_point_at_the_document_with_stable_ids():
    """SOURCE pointed at MarkdownNodeParser's node (a random id): delete_ref_doc deleted nothing, and ids
    were ``<uuid>:<dotted>``, new on every run."""
    nodes = _chain(LogichunkNodeParser(chunk_size=300, levels=2))
    assert len(nodes) > 6
    assert {n.ref_doc_id for n in nodes} == {"md-doc"}
    assert {n.relationships[NodeRelationship.SOURCE].node_id for n in nodes} == {"md-doc"}
    assert len({n.node_id for n in nodes}) == len(nodes)
    assert all(n.node_id.startswith("md-doc:") for n in nodes)
    again = _chain(LogichunkNodeParser(chunk_size=300, levels=2))
    assert [n.node_id for n in again] == [n.node_id for n in nodes]  # the same on every run
    ids = {n.node_id for n in nodes}
    for n in nodes:  # the tree's relationships name nodes that exist
        parent = n.relationships.get(NodeRelationship.PARENT)
        assert parent is None or parent.node_id in ids
    # a document given directly keeps its ids as they were
    direct = LogichunkNodeParser(chunk_size=300, levels=2).get_nodes_from_documents([Document(text=EN, id_="en")])
    assert direct[0].node_id == "en:1" and {n.ref_doc_id for n in direct} == {"en"}


def test_delete_ref_doc_deletes_the_nodes_made_after_another_parser():
    doc = Document(text=MD, id_="md-doc")
    index = VectorStoreIndex.from_documents(
        [doc], transformations=[MarkdownNodeParser(), LogichunkNodeParser(chunk_size=300, levels=1)],
        embed_model=LogichunkEmbedding())
    assert len(index.vector_store.data.embedding_dict) > 6
    index.delete_ref_doc("md-doc", delete_from_docstore=True)
    assert len(index.vector_store.data.embedding_dict) == 0


@pytest.mark.parametrize("chained", [False, True])
def test_upserts_replace_a_document_s_vectors(chained):
    """An edited document's old vectors went stale beside its new ones (twice the vectors after each edit)."""
    vs, ds = SimpleVectorStore(), SimpleDocumentStore()
    steps = [MarkdownNodeParser()] if chained else []
    pipe = IngestionPipeline(transformations=[*steps, LogichunkNodeParser(chunk_size=400, levels=2), LogichunkEmbedding()],
                             docstore=ds, vector_store=vs, docstore_strategy=DocstoreStrategy.UPSERTS)
    first = pipe.run(documents=[Document(text=MD, id_="md-doc")])
    assert len(vs.data.embedding_dict) == len(first)
    second = pipe.run(documents=[Document(text=MD + "\n\nA new closing paragraph is here.", id_="md-doc")])
    assert set(vs.data.embedding_dict) == {n.node_id for n in second}


# --------------------------------------------------------------------------- many documents in one pass


DOC_TEXTS = st.lists(st.sampled_from(["Cats purr softly. ", "Dogs bark at night. ", "\n\n", "## Heading\n",
                                      "猫在夜里轻轻地叫。", "股市今天大幅下跌！", "word " * 12, "x" * 90, "   ", "- item\n"]),
                     max_size=30).map("".join)
OPTIONS = st.sampled_from([dict(chunk_size=120), dict(chunk_size=200, chunk_overlap=20, levels=2),
                           dict(chunk_size=150, unit="bytes", levels=3), dict(chunk_size=60, unit="tokens"),
                           dict(chunk_size=40, tokenizer="cl100k_base", chunk_overlap=5, levels=2),
                           dict(chunk_size=90, sizes=[90, 40], chunk_overlap=10)])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(DOC_TEXTS, min_size=1, max_size=8), OPTIONS, st.booleans())
def test_many_documents_at_once_are_one_document_at_a_time(texts, options, leaves_only):
    if "tokenizer" in options:
        pytest.importorskip("tiktoken")
    lc = LogichunkTextSplitter(leaves_only=leaves_only, **options)
    docs = [LCDocument(page_content=t, metadata={"n": i}) for i, t in enumerate(texts)]
    assert [(d.page_content, d.metadata) for d in lc.split_documents(docs)] == \
        [(d.page_content, d.metadata) for doc in docs for d in lc.split_documents([doc])]
    li = LogichunkNodeParser(leaves_only=leaves_only, **{"levels": 1, **options})
    ldocs = [Document(text=t, id_=f"d{i}") for i, t in enumerate(texts)]

    def rows(nodes):
        return [(n.node_id, n.text, n.start_char_idx, n.end_char_idx, n.metadata,
                 {k: getattr(v, "node_id", None) for k, v in n.relationships.items()}) for n in nodes]

    assert rows(li.get_nodes_from_documents(ldocs)) == \
        rows([n for d in ldocs for n in li.get_nodes_from_documents([d])])


def test_adapters_chunk_many_documents_in_one_pass(monkeypatch):
    """split_documents cost one chunk() per document (3.9 s where chunk_many took 1.3 s on 3,678 short
    documents): the short ones now share the pass."""
    import logichunk.chunkers.many as many_mod

    calls = []
    real = many_mod._shared_pass
    monkeypatch.setattr(many_mod, "_shared_pass", lambda texts, *a: calls.append(len(texts)) or real(texts, *a))
    texts = [f"Paragraph {i}. " + "Cats purr softly. Dogs bark at night. " * 8 for i in range(40)]
    LogichunkTextSplitter(chunk_size=120).split_documents([LCDocument(page_content=t) for t in texts])
    assert calls == [40]
    calls.clear()
    LogichunkNodeParser(chunk_size=120).get_nodes_from_documents([Document(text=t) for t in texts])
    assert calls == [40]


# --------------------------------------------------------------------------- options and conventions


def test_a_method_without_its_model_fails_when_the_splitter_is_made():
    for make in (LogichunkTextSplitter, LogichunkNodeParser):
        with pytest.raises(InputError, match="method 'cliff' needs an embedder"):
            make(method="cliff")
        with pytest.raises(InputError, match="method 'ppl' needs an LM"):
            make(method="ppl")
    from logichunk.models.embed_hash import HashEmbedder

    assert LogichunkTextSplitter(method="cliff", embedder=HashEmbedder(), chunk_size=300).split_text(EN)


def test_langchain_options_that_would_drop_text_are_refused_in_one_line():
    for kw, needle in (({"strip_whitespace": True}, "strip_whitespace=True would drop text"),
                       ({"keep_separator": False}, "keep_separator")):
        with pytest.raises(InputError, match=needle) as err:
            LogichunkTextSplitter(**kw)
        assert "\n" not in str(err.value)
    # what LangChain users pass by habit and we do anyway: accepted
    for keep in (True, "start", "end"):  # (each keeps every separator: LangChain's True is "start")
        s = LogichunkTextSplitter(chunk_size=200, keep_separator=keep, strip_whitespace=False)
        assert "".join(s.split_text(EN)) == EN


def test_from_tiktoken_encoder_honours_special_tokens():
    tiktoken = pytest.importorskip("tiktoken")  # noqa: F841
    from logichunk.text.tokens import resolve_tokenizer

    enc = resolve_tokenizer("cl100k_base").tokenizer
    text = "Before <|endoftext|> after, and a sentence more. " * 20
    plain = LogichunkTextSplitter.from_tiktoken_encoder(chunk_size=50)
    assert plain._length_function(text) == len(enc.encode_ordinary(text))
    allowed = LogichunkTextSplitter.from_tiktoken_encoder(chunk_size=50, allowed_special="all")
    assert allowed._length_function(text) == len(enc.encode(text, allowed_special="all"))
    assert max(len(enc.encode(p, allowed_special="all")) for p in allowed.split_text(text)) <= 50
    refused = LogichunkTextSplitter.from_tiktoken_encoder(chunk_size=50, disallowed_special="all")
    with pytest.raises(InputError, match="disallowed special token"):
        refused.split_text(text)
    assert refused.split_text("No special tokens here. " * 10)
    # it pickles and loads in a new process offline (a bound enc.encode made tiktoken download the encoding)
    import os
    import pickle
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    code = "import pickle, sys; s = pickle.loads(sys.stdin.buffer.read()); print(len(s.split_text(sys.argv[1])))"
    run = subprocess.run([sys.executable, "-c", code, text], input=pickle.dumps(allowed), capture_output=True,
                         env=env, timeout=120)
    assert run.returncode == 0 and int(run.stdout) == len(allowed.split_text(text)), run.stderr[-300:]


def test_llamaindex_bad_options_are_one_line_errors():
    p = LogichunkNodeParser(chunk_size=300)
    cases = [(lambda: LogichunkNodeParser(chunk_size=0), "chunk_size"),
             (lambda: LogichunkNodeParser(levels=0), "levels"),
             (lambda: LogichunkNodeParser(chunk_sizes=[2048, 512]), "no option 'chunk_sizes'"),
             (lambda: LogichunkNodeParser(method="semantic"), "unknown method 'semantic': use one of logic-chain, "),
             (lambda: LogichunkNodeParser(chunk_size=100, chunk_overlap=100), "leaves no room"),
             (lambda: setattr(p, "chunk_size", -1), "chunk_size"),
             (lambda: setattr(p, "unit", "words"), "unknown unit 'words'")]
    for make, needle in cases:
        with pytest.raises(InputError, match=needle) as err:
            make()
        assert "\n" not in str(err.value) and "pydantic" not in str(err.value)
    assert p.chunk_size == 300 and p.unit == "chars"  # a refused value leaves the parser as it was


def test_llamaindex_from_defaults_like_sentence_splitter():
    from llama_index.core.callbacks import CallbackManager

    doc = Document(text=EN, id_="en")
    p = LogichunkNodeParser.from_defaults(chunk_size=400, levels=2, include_prev_next_rel=False,
                                          callback_manager=CallbackManager([]))
    assert isinstance(p, LogichunkNodeParser) and p.chunk_size == 400 and p.levels == 2
    nodes = p.get_nodes_from_documents([doc])
    assert [n.text for n in nodes] == [n.text for n in LogichunkNodeParser(chunk_size=400, levels=2)
                                      .get_nodes_from_documents([doc])]
    assert not any(NodeRelationship.NEXT in n.relationships for n in nodes)
    with pytest.raises(InputError, match="needs an embedder"):
        LogichunkNodeParser.from_defaults(method="cliff")


def test_llamaindex_counts_tokens_when_given_llama_index_s_tokenizer():
    tiktoken = pytest.importorskip("tiktoken")  # noqa: F841
    from llama_index.core.utils import get_tokenizer

    count = get_tokenizer()
    nodes = LogichunkNodeParser(chunk_size=100, levels=1, tokenizer=count).get_nodes_from_documents(
        [Document(text=EN + ZH)])
    assert max(len(count(n.text)) for n in nodes) <= 100  # it was 600 tokens in a "100-token" node


def test_metadata_keys_of_the_document_are_kept():
    """A document's own ``level``/``method`` were overwritten by ours without a word."""
    meta = {"source": "course.md", "level": "beginner", "method": "lab"}
    out = LogichunkTextSplitter(chunk_size=300, levels=2, leaves_only=False).split_documents(
        [LCDocument(page_content=EN, metadata=meta)])
    for d in out:
        md = d.metadata
        assert md["level"] == "beginner" and md["method"] == "lab" and md["source"] == "course.md"
        assert md["logichunk_level"] in (1, 2) and md["logichunk_method"] and md["chunk_id"]
        assert "logichunk_chunk_id" not in md
    assert meta == {"source": "course.md", "level": "beginner", "method": "lab"}  # the input is not changed
    # a chunk of ours split again gets the new chunk's keys, not a second set
    parent = LogichunkTextSplitter(chunk_size=1000).split_documents([LCDocument(page_content=EN[:1000])])[0]
    again = LogichunkTextSplitter(chunk_size=100).split_documents([parent])
    assert len(again) > 1 and not any(k.startswith("logichunk_") for d in again for k in d.metadata)
    assert [d.metadata["chunk_id"] for d in again] == [str(i) for i in range(1, len(again) + 1)]

    nodes = LogichunkNodeParser(chunk_size=300, levels=2).get_nodes_from_documents([Document(text=EN, metadata=meta)])
    for n in nodes:
        assert n.metadata["level"] == "beginner" and n.metadata["logichunk_level"] in (1, 2)
        embedded = n.get_content(metadata_mode=MetadataMode.EMBED)
        assert "level: beginner" in embedded and "logichunk_level" not in embedded and "chunk_id" not in embedded

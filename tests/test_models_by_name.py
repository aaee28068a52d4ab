"""Models are taken by name wherever the library takes a model (``embedder="e5"``, ``"hash:64"``...), as the
CLI and the settings take them; a name nobody knows, or a value of the wrong kind, is one line of error — not
an ``AttributeError`` at the model's first use (in a store: at its first re-chunk)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.chunkers import parent_child as pc
from logichunk.chunkers.dispatch import chunk_by
from logichunk.chunkers.topics import segment, segment_units
from logichunk.errors import InputError, LogichunkError
from logichunk.models import HashEmbedder
from logichunk.models.registry import embedder_of, llm_of, lm_of
from logichunk.store import Store

P = pc.PCParams(max_parent_size=300, min_parent_size=60, child_min_size=20, child_target_size=50, child_max_size=80)

TEXT = ("The river runs past the mill. The miller grinds the corn. " * 6
        + "Stock markets fell sharply today. Investors sold bonds. " * 6)


def test_an_embedder_is_taken_by_its_name_as_by_the_object():
    obj = HashEmbedder(64)
    assert embedder_of(None) is None and embedder_of(obj) is obj
    assert embedder_of("hash:64").model_id == obj.model_id
    assert segment(TEXT, embedder="hash:64").records() == segment(TEXT, embedder=obj).records()
    units = TEXT.split(". ")
    assert segment_units(units, embedder="hash:64").tolist() == segment_units(units, embedder=obj).tolist()
    assert chunk_by("cliff", TEXT, max_size=200, embedder="hash:64").records() \
        == chunk_by("cliff", TEXT, max_size=200, embedder=obj).records()
    assert pc.chunk_parent_child(TEXT, "hash:64", P).records() == pc.chunk_parent_child(TEXT, obj, P).records()


def test_a_store_opened_with_an_embedders_name_uses_that_embedder(tmp_path):
    store = Store.open(str(tmp_path / "kb.db"), embedder="hash:64")
    store.add_document("d", [("c", [TEXT + "\n\n"])])
    assert all(r.status == "rechunked" for r in store.rechunk_dirty())
    assert store.model_id == HashEmbedder(64).model_id
    assert store.counts()["child"] > 0
    store.close()


@pytest.mark.parametrize("call", [
    lambda: segment(TEXT, embedder=3),
    lambda: segment_units(["a.", "b."], embedder=[1]),
    lambda: chunk_by("cliff", TEXT, embedder=object()),
    lambda: pc.chunk_parent_child(TEXT, None),
    lambda: Store.open(":memory:", embedder=3.5),
    lambda: llm_of(7),
    lambda: lm_of(b"default"),
])
def test_a_model_of_the_wrong_kind_is_one_clear_error(call):
    with pytest.raises(InputError) as e:
        call()
    assert "\n" not in str(e.value) and ("embedder" in str(e.value) or "llm" in str(e.value) or "lm" in str(e.value))


def test_an_unknown_models_name_says_which_names_there_are():
    with pytest.raises(LogichunkError, match="unknown embedder spec 'nope'.*hash"):
        segment(TEXT, embedder="nope")
    with pytest.raises(LogichunkError, match="unknown LLM spec"):
        chunk_by("logic-chain", TEXT, llm="nope")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["hash", "hash:32", "HASH:16"]))
def test_hash_names_resolve_to_the_embedder_they_name(name):
    e = embedder_of(name)
    dim = int(name.split(":")[1]) if ":" in name else 1024
    assert e.dim == dim and np.asarray(e.embed(["a b c"])).shape == (1, dim)


def test_the_service_takes_its_embedder_by_name(tmp_path):
    pytest.importorskip("fastapi", reason="the service tests need the [service] extra (fastapi, httpx)")
    from logichunk.config import Settings
    from logichunk.service.app import create_app

    app = create_app(Settings(db=str(tmp_path / "a.db")), api_key="k" * 32, embedder="hash:64")
    registry = app.state.service.registry
    assert registry.embedder.model_id == HashEmbedder(64).model_id and registry.embedder_note.startswith("hash")
    app.state.service.close()
    with pytest.raises(InputError, match="embedder must be a model"):
        create_app(Settings(db=str(tmp_path / "b.db")), api_key="k" * 32, embedder=5)


def test_every_store_verb_names_every_embedder_spec_the_registry_builds():
    """``mcp`` and ``serve`` named fewer specs than ``ingest`` (no ``minilm``), though all three build any."""
    import argparse

    from logichunk.cli import build_parser

    def embedder_help(p: argparse.ArgumentParser, verb: str) -> str:
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices[verb]
        return next(a.help for a in sub._actions if "--embedder" in a.option_strings)

    parser = build_parser()
    for verb in ("ingest", "search", "mcp", "serve"):
        h = embedder_help(parser, verb)
        for spec in ("hash[:DIM]", "hash-v1[:DIM]", "e5", "minilm", "minilm-onnx", "st:PATH", "onnx:PATH",
                     "openai:URL#MODEL"):
            assert spec in h, (verb, spec)
    with pytest.raises(LogichunkError, match="minilm-onnx, st:PATH, onnx:PATH, openai"):
        embedder_of("nope")

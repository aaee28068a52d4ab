"""The similarity graph's construction: edges against a brute-force reference, incremental updates
equal to builds from scratch, approximate neighbours, exact sentence spans."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.errors import InputError
from logichunk.index.graph import (
    CROSS,
    INTRA,
    SEQ,
    GraphParams,
    NodeBatch,
    build_graph,
    empty_graph,
    graph_from_parts,
    sentence_spans,
    update_graph,
)
from logichunk.index.vectors import HnswIndex, hnsw_available
from logichunk.models import HashEmbedder

DIM = 12
_EMB = HashEmbedder(DIM)


def embed(texts):
    return _EMB.embed(list(texts))


def _batch(rng, keys, n_docs):
    keys = np.asarray(keys, np.int64)
    docs = [f"d{int(rng.integers(n_docs))}" for _ in keys]
    pos = rng.integers(0, 50, keys.size)
    vecs = rng.standard_normal((keys.size, DIM))
    texts = [f"Chunk {k} opens here. It says {k % 7} things! Does it end?" for k in keys.tolist()]
    return NodeBatch.of(keys, docs, pos, vecs, texts)


def reference_edges(batch: NodeBatch, p: GraphParams) -> set[tuple[int, int, str]]:
    """Out-lists by the definition, one node at a time, in plain Python."""
    v = batch.vecs / np.linalg.norm(batch.vecs, axis=1, keepdims=True)
    keys = batch.keys.tolist()
    n = len(keys)
    out: dict[tuple[int, int], str] = {}
    for i in range(n):
        same = [j for j in range(n) if batch.docs[j] == batch.docs[i]]
        same.sort(key=lambda j: (int(batch.positions[j]), keys[j]))
        at = same.index(i)
        for j in (same[at - 1] if at > 0 else None, same[at + 1] if at + 1 < len(same) else None):
            if j is not None:
                out[(keys[i], keys[j])] = "seq"
        sims = {j: round(float(v[i] @ v[j]), 6) for j in range(n) if j != i}
        intra = sorted((j for j in same if j != i and sims[j] >= p.similarity_threshold),
                       key=lambda j: (-sims[j], keys[j]))[: p.intra_k]
        for j in intra:
            out.setdefault((keys[i], keys[j]), "intra")
        cross = sorted((j for j in range(n) if batch.docs[j] != batch.docs[i] and sims[j] >= p.cross_threshold),
                       key=lambda j: (-sims[j], keys[j]))[: p.cross_k]
        for j in cross:
            out[(keys[i], keys[j])] = "cross"
    return {(a, b, k) for (a, b), k in out.items()}


def edge_set(g) -> set[tuple[int, int, str]]:
    return {(a, b, k) for a, b, k, _ in g.edges()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_edges_match_the_definition(seed):
    rng = np.random.default_rng(seed)
    b = _batch(rng, rng.choice(1000, 60, replace=False), 7)
    p = GraphParams(similarity_threshold=0.1, intra_k=2, cross_k=3, cross_threshold=-0.2)
    g = build_graph(b, embed, p)
    assert edge_set(g) == reference_edges(b, p)
    # weights are the cosines of the endpoints; the adjacency is their symmetric union
    ia, ib = g.index_of([e[0] for e in g.edges()]), g.index_of([e[1] for e in g.edges()])
    assert np.allclose([e[3] for e in g.edges()], np.einsum("ij,ij->i", g.vecs[ia], g.vecs[ib]), atol=1e-5)
    for a, c in zip(ia.tolist(), ib.tolist(), strict=True):
        assert c in g.neighbours(a) and a in g.neighbours(c)


def test_thresholds_and_k_are_respected():
    rng = np.random.default_rng(5)
    b = _batch(rng, np.arange(80), 4)
    p = GraphParams(similarity_threshold=0.5, intra_k=2, cross_k=1, cross_threshold=0.3)
    g = build_graph(b, embed, p)
    kinds = g.edge_kind
    assert (g.edge_weight[kinds == INTRA] >= 0.5 - 1e-6).all()
    assert (g.edge_weight[kinds == CROSS] >= 0.3 - 1e-6).all()
    for k in np.unique(g.edge_src).tolist():
        m = g.edge_src == k
        assert (kinds[m] == CROSS).sum() <= 1 and (kinds[m] == INTRA).sum() <= 2 and (kinds[m] == SEQ).sum() <= 2
    docs = np.asarray(g.docs)
    src, dst = g.index_of(g.edge_src), g.index_of(g.edge_dst)
    assert (docs[src][kinds == CROSS] != docs[dst][kinds == CROSS]).all()
    assert (docs[src][kinds != CROSS] == docs[dst][kinds != CROSS]).all()


def test_sentences_are_exact_trimmed_spans_of_each_chunk():
    texts = ["  First one. Second, with U.S. inside!  \n", "第一句。第二句？\n\n第三句", "no end mark"]
    b = NodeBatch.of([3, 1, 2], ["a", "a", "b"], [0, 1, 0], np.eye(3, DIM), texts)
    g = build_graph(b, embed, GraphParams())
    for i in range(g.n_chunks):
        t = g.texts[i]
        got = [t[s:e] for s, e in zip(g.sent_start[g.sent_ptr[i]:g.sent_ptr[i + 1]].tolist(),
                                      g.sent_end[g.sent_ptr[i]:g.sent_ptr[i + 1]].tolist(), strict=True)]
        s, e = sentence_spans(t)
        assert got == [t[a:z] for a, z in zip(s.tolist(), e.tolist(), strict=True)]
        assert all(x == x.strip() and x for x in got)
    assert [g.sentence_text(j) for j in g.sentence_rows(int(g.index_of([3])[0]))] == ["First one.",
                                                                                    "Second, with U.S. inside!"]
    assert [g.sentence_text(j) for j in g.sentence_rows(int(g.index_of([1])[0]))] == ["第一句。", "第二句？", "第三句"]
    # sentence vectors are the embedder's, normalised, of the untrimmed piece (the chunker's text)
    i = int(g.index_of([1])[0])
    j = int(g.sent_ptr[i]) + 2
    raw = embed(["第三句"])[0]
    assert np.allclose(g.sent_vecs[j], raw / np.linalg.norm(raw), atol=1e-6)
    j = int(g.sent_ptr[int(g.index_of([3])[0])])
    raw = embed(["  First one. "])[0]
    assert np.allclose(g.sent_vecs[j], raw / np.linalg.norm(raw), atol=1e-6)


def test_empty_and_single_node_graphs():
    g = build_graph(NodeBatch.of([], [], [], np.zeros((0, DIM)), []), embed, GraphParams(), dim=DIM)
    assert g.n_chunks == 0 and g.n_edges == 0 and g.search(np.ones(DIM), 3)[0].size == 0
    g1 = build_graph(NodeBatch.of([7], ["x"], [0], np.ones((1, DIM)), ["Alone here."]), embed, GraphParams())
    assert g1.n_chunks == 1 and g1.n_edges == 0 and g1.neighbours(0).size == 0 and g1.n_sentences == 1


def test_bad_input_is_a_clear_error():
    with pytest.raises(InputError):
        NodeBatch.of([1, 1], ["a", "a"], [0, 1], np.ones((2, DIM)), ["x", "y"])
    with pytest.raises(InputError):
        GraphParams(intra_k=-1)
    with pytest.raises(InputError):
        GraphParams(neighbours="lsh")
    g = build_graph(NodeBatch.of([1], ["a"], [0], np.ones((1, DIM)), ["x."]), embed, GraphParams())
    with pytest.raises(InputError):  # key already present
        update_graph(g, np.zeros(0, np.int64), NodeBatch.of([1], ["a"], [0], np.ones((1, DIM)), ["y."]), embed,
                     GraphParams())


def _apply_ops(rng, batch: NodeBatch, n_remove: int, n_add: int, n_move: int, next_key: int):
    keys = batch.keys
    rem = rng.choice(keys, min(n_remove, keys.size), replace=False) if keys.size else np.zeros(0, np.int64)
    add = _batch(rng, np.arange(next_key, next_key + n_add), 6)
    kept = np.setdiff1d(keys, rem)
    mv = rng.choice(kept, min(n_move, kept.size), replace=False) if kept.size else np.zeros(0, np.int64)
    docs = list(batch.docs)
    pos = batch.positions.copy()
    at = {int(k): i for i, k in enumerate(keys.tolist())}
    for k in mv.tolist():
        docs[at[k]] = f"d{int(rng.integers(6))}"
        pos[at[k]] = int(rng.integers(0, 50))
    moved = NodeBatch.of(mv, [docs[at[k]] for k in mv.tolist()], [pos[at[k]] for k in mv.tolist()],
                         np.zeros((mv.size, DIM)), [""] * mv.size)
    keep = ~np.isin(keys, rem)
    full = NodeBatch.of(np.concatenate([keys[keep], add.keys]), [d for d, k in zip(docs, keep, strict=True) if k]
                        + list(add.docs), np.concatenate([pos[keep], add.positions]),
                        np.concatenate([batch.vecs[keep], add.vecs]),
                        [t for t, k in zip(batch.texts, keep, strict=True) if k] + list(add.texts))
    return rem, add, moved, full


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(0, 40), ops=st.lists(
    st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 3)), min_size=1, max_size=3))
def test_incremental_updates_equal_a_build_from_scratch(seed, n, ops):
    rng = np.random.default_rng(seed)
    p = GraphParams(similarity_threshold=0.2, intra_k=2, cross_k=2, cross_threshold=-1.0)
    batch = _batch(rng, np.arange(n), 6)
    g = build_graph(batch, embed, p, dim=DIM)
    next_key, low_key = 1000, -1000
    for step, (n_rem, n_add, n_mv) in enumerate(ops):
        # added keys above every key (a store's pks) and, every other step, below (the general path)
        start = next_key if step % 2 == 0 else low_key - n_add
        rem, add, moved, full = _apply_ops(rng, batch, n_rem, n_add, n_mv, start)
        if step % 2 == 0:
            next_key += n_add
        else:
            low_key -= n_add
        g, delta = update_graph(g, rem, add, embed, p, moved=moved)
        ref = build_graph(full, embed, p, dim=DIM)
        assert edge_set(g) == edge_set(ref)
        assert np.array_equal(g.keys, ref.keys) and g.docs == ref.docs and g.texts == ref.texts
        assert np.array_equal(g.sent_ptr, ref.sent_ptr) and np.array_equal(g.sent_start, ref.sent_start)
        assert np.allclose(g.sent_vecs, ref.sent_vecs)
        assert delta.embedded_sentences == sum(len(sentence_spans(t)[0]) for t in add.texts)
        batch = full


def test_an_edit_relinks_only_what_it_can_change():
    rng = np.random.default_rng(11)
    p = GraphParams(similarity_threshold=0.2, intra_k=2, cross_k=2)
    batch = _batch(rng, np.arange(400), 60)
    g = build_graph(batch, embed, p)
    victim = int(batch.keys[17])
    add = NodeBatch.of([5000], [batch.docs[17]], [batch.positions[17]], rng.standard_normal((1, DIM)),
                       ["A rewritten chunk. With new words."])
    g2, d = update_graph(g, np.asarray([victim]), add, embed, p)
    same_doc = sum(1 for x in batch.docs if x == batch.docs[17])
    assert same_doc <= d.relinked.size < 60, d.relinked.size  # its document and a few neighbours, not all 400
    assert d.embedded_sentences == 2


def test_graph_from_parts_round_trip():
    rng = np.random.default_rng(3)
    g = build_graph(_batch(rng, np.arange(30), 4), embed, GraphParams(cross_k=2))
    b = NodeBatch(g.keys[::-1].copy(), g.docs[::-1], g.positions[::-1].copy(), g.vecs[::-1].copy(), g.texts[::-1],
                  g.labels[::-1], g.offsets[::-1].copy(), None)
    # sentences in the reversed node order
    order = np.arange(g.n_chunks)[::-1]
    counts = np.diff(g.sent_ptr)[order]
    ptr = np.concatenate([[0], np.cumsum(counts)])
    rows = np.concatenate([g.sentence_rows(i) for i in order.tolist()])
    b = NodeBatch(b.keys, b.docs, b.positions, b.vecs, b.texts, b.labels, b.offsets,
                  (ptr, g.sent_start[rows], g.sent_end[rows], g.sent_vecs[rows]))
    h = graph_from_parts(b, g.edge_src[::-1], g.edge_dst[::-1], g.edge_weight[::-1], g.edge_kind[::-1])
    assert h.edges() == g.edges() and np.array_equal(h.keys, g.keys) and h.texts == g.texts
    assert np.array_equal(h.sent_start, g.sent_start) and np.allclose(h.sent_vecs, g.sent_vecs)


@pytest.mark.skipif(not hnsw_available(), reason="hnswlib not installed")
def test_approximate_neighbours_agree_with_exact_and_fall_back_inside_big_documents():
    rng = np.random.default_rng(9)
    b = _batch(rng, np.arange(300), 25)
    p = GraphParams(similarity_threshold=0.2, intra_k=2, cross_k=3)
    exact = build_graph(b, embed, p)
    ann = HnswIndex(DIM, capacity=400)
    ann.update(b.keys, b.vecs, np.zeros(0, np.int64))
    approx = build_graph(b, embed, p, ann=ann)
    e, a = edge_set(exact), edge_set(approx)
    assert len(e & a) / len(e) > 0.95
    # one huge document and two small ones: HNSW candidates are all from the big one, so its rows
    # must be redone exactly, and still get cross-document edges
    docs = ["big"] * 200 + ["s1"] * 3 + ["s2"] * 3
    vecs = np.concatenate([np.tile(rng.standard_normal((1, DIM)), (200, 1)) + 0.01 * rng.standard_normal((200, DIM)),
                           rng.standard_normal((6, DIM))])
    b2 = NodeBatch.of(np.arange(206), docs, np.arange(206), vecs, ["x."] * 206)
    ann2 = HnswIndex(DIM, capacity=300)
    ann2.update(b2.keys, b2.vecs, np.zeros(0, np.int64))
    p2 = GraphParams(intra_k=1, cross_k=2, cross_threshold=-1.0)
    g = build_graph(b2, embed, p2, ann=ann2)
    ref = build_graph(b2, embed, p2)
    big = set(range(200))
    assert {e for e in edge_set(g) if e[0] in big} == {e for e in edge_set(ref) if e[0] in big}
    cross = g.edge_src[g.edge_kind == CROSS]
    assert np.array_equal(np.bincount(cross, minlength=206), np.full(206, 2))


@pytest.mark.skipif(not hnsw_available(), reason="hnswlib not installed")
def test_approximate_neighbours_a_block_of_rows_at_a_time_are_the_same(monkeypatch):
    """The candidates' vectors were gathered for every row at once (13 GiB for a 51k-chunk store); a block
    of rows at a time gives the same edges, the exact redo of short rows included."""
    from logichunk.index import graph as G

    rng = np.random.default_rng(11)
    docs = ["big"] * 120 + [f"d{i}" for i in range(80) for _ in range(2)]
    vecs = np.concatenate([np.tile(rng.standard_normal((1, DIM)), (120, 1)) + 0.05 * rng.standard_normal((120, DIM)),
                           rng.standard_normal((160, DIM))])
    b = NodeBatch.of(np.arange(280), docs, np.arange(280), vecs, ["x."] * 280)
    p = GraphParams(similarity_threshold=0.1, intra_k=2, cross_k=3, cross_threshold=-1.0)
    ann = HnswIndex(DIM, capacity=400)
    ann.update(b.keys, b.vecs, np.zeros(0, np.int64))
    whole = build_graph(b, embed, p, ann=ann)
    monkeypatch.setattr(G, "_block_rows", lambda n_cols: 7)
    blocks = build_graph(b, embed, p, ann=ann)
    assert edge_set(blocks) == edge_set(whole) and np.allclose(np.sort(blocks.edge_weight), np.sort(whole.edge_weight))


def test_use_ann_follows_the_setting():
    assert not GraphParams(neighbours="exact").use_ann(10**9)
    assert GraphParams(neighbours="hnsw").use_ann(1)
    assert GraphParams(neighbours="auto", ann_threshold=100).use_ann(99) is False
    assert GraphParams(neighbours="auto", ann_threshold=100).use_ann(100) is hnsw_available()


def test_empty_graph_shapes():
    g = empty_graph(5)
    assert g.dim == 5 and g.n_chunks == 0 and g.adjacency[0].tolist() == [0] and g.stats()["chunks"] == 0

"""Graph retrieval algorithms on small hand-built graphs whose right answer is known.

Vectors are 2-d unit vectors given by their angle, so every cosine is ``cos(angle difference)`` and
each expected path can be checked by hand (the comments give the numbers). The query is at 0°.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logichunk.errors import InputError
from logichunk.index.graph import INTRA, NodeBatch, empty_graph, graph_from_parts, sentence_spans
from logichunk.retrieve.graph import BasicRetrieval, SSGTraversal, Triangulation, WalkParams

Q = np.array([1.0, 0.0], np.float32)


def u(deg: float) -> np.ndarray:
    r = math.radians(deg)
    return np.array([math.cos(r), math.sin(r)], np.float32)


def hand_graph(chunks: dict[str, tuple[float, list[float]]], edges: list[tuple[str, str]], doc_of=None):
    """Chunks ``name -> (angle, [sentence angles])``; keys 1, 2, ... in the given order; text
    ``"<name> s0. <name> s1."``; undirected ``edges`` by name."""
    names = list(chunks)
    key = {n: i + 1 for i, n in enumerate(names)}
    texts = [" ".join(f"{n} s{j}." for j in range(len(chunks[n][1]))) for n in names]
    ptr, st_, en_, sv = [0], [], [], []
    for n, t in zip(names, texts, strict=True):
        s, e = sentence_spans(t)
        assert s.size == len(chunks[n][1])
        st_ += s.tolist()
        en_ += e.tolist()
        sv += [u(a) for a in chunks[n][1]]
        ptr.append(ptr[-1] + s.size)
    docs = [doc_of(n) if doc_of else "doc" for n in names]
    b = NodeBatch.of([key[n] for n in names], docs, list(range(len(names))), [u(chunks[n][0]) for n in names],
                     texts, names)
    b = NodeBatch(b.keys, b.docs, b.positions, b.vecs, b.texts, b.labels, b.offsets,
                  (np.asarray(ptr), np.asarray(st_, np.int64), np.asarray(en_, np.int64),
                   np.asarray(sv, np.float32).reshape(-1, 2)))
    src = [key[a] for a, c in edges] + [key[c] for a, c in edges]
    dst = [key[c] for a, c in edges] + [key[a] for a, c in edges]
    w = [float(u(chunks[names[s - 1]][0]) @ u(chunks[names[d - 1]][0])) for s, d in zip(src, dst, strict=True)]
    return graph_from_parts(b, np.asarray(src), np.asarray(dst), np.asarray(w), np.full(len(src), INTRA))


# SSG graph: anchor A (10°, cos to query 0.985); A–B cos 0.643, A–C cos 0.342; B–D cos 0.819; D–F cos 0.574
SSG = dict(A=(10, [5, 15]), B=(60, [55, 65]), C=(-60, [-55, -65]), D=(95, [90, 100]), F=(150, [145, 155]))
SSG_EDGES = [("A", "B"), ("A", "C"), ("B", "D"), ("D", "F"), ("C", "D")]


def labels(res) -> list[str]:
    return [p.label for p in res.path]


def test_ssg_hops_to_the_most_similar_neighbour_and_stops_early():
    g = hand_graph(SSG, SSG_EDGES)
    res = SSGTraversal(WalkParams(max_hops=5, min_sentences=10)).run(g, Q)
    # A → B (0.643 beats C's 0.342) → D (0.819 > 0.643) → F would be 0.574 ≤ 0.819: early stop
    assert labels(res) == ["A", "B", "D"]
    assert [p.via for p in res.path] == ["anchor", "hop", "hop"]
    assert res.stop == "early-stop"
    assert res.path[1].similarity == pytest.approx(math.cos(math.radians(50)), abs=1e-5)
    assert res.path[2].similarity == pytest.approx(math.cos(math.radians(35)), abs=1e-5)
    assert res.path[0].similarity == pytest.approx(math.cos(math.radians(10)), abs=1e-5)
    # the six sentences of A, B, D ranked against the query: 5°, 15°, 55°, 65°, 90°, 100°
    assert [s.text for s in res.sentences] == ["A s0.", "A s1.", "B s0.", "B s1.", "D s0.", "D s1."]
    assert [s.step for s in res.sentences] == [0, 0, 1, 1, 2, 2]
    assert res.collected == 6


def test_ssg_without_early_stopping_walks_to_a_dead_end_skipping_read_chunks():
    g = hand_graph(SSG, SSG_EDGES)
    res = SSGTraversal(WalkParams(max_hops=5, min_sentences=100, early_stop=False)).run(g, Q)
    # from D: B is read, so F (0.574) or C (cos 155° < 0) → F; from F only D (read): dead end
    assert labels(res) == ["A", "B", "D", "F"] and res.stop == "no-neighbours"


def test_ssg_budgets_max_hops_min_sentences_and_max_results():
    g = hand_graph(SSG, SSG_EDGES)
    assert labels(SSGTraversal(WalkParams(max_hops=1)).run(g, Q)) == ["A", "B"]
    assert SSGTraversal(WalkParams(max_hops=1)).run(g, Q).stop == "max-hops"
    res = SSGTraversal(WalkParams(min_sentences=4)).run(g, Q)
    assert labels(res) == ["A", "B"] and res.stop == "enough-sentences"
    res = SSGTraversal(WalkParams(max_results=3)).run(g, Q)
    assert [s.text for s in res.sentences] == ["A s0.", "A s1.", "B s0."] and res.collected == 6
    assert SSGTraversal(WalkParams(max_hops=0)).run(g, Q).stop == "max-hops"


# Triangulation graph: |centroid − q| = |cur + x − 2q| / 3
#   from A (10°): G (−12°) 0.017 < A's sentence 5° 0.087 < C… → hop G
#   from G: H (25°) 0.081 < G's sentence −7° 0.110 → hop H
#   from H: its sentence 20° 0.260 < F (150°) 0.722 → the sentence ends the walk
TRI = dict(A=(10, [5, 15]), G=(-12, [-7, -17]), H=(25, [20, 30]), F=(150, [145]), C=(-60, [-60]))
TRI_EDGES = [("A", "G"), ("A", "C"), ("G", "H"), ("H", "F"), ("A", "F")]


def test_triangulation_hops_by_centroid_distance_and_ends_on_a_sentence():
    g = hand_graph(TRI, TRI_EDGES)
    res = Triangulation(WalkParams()).run(g, Q)
    assert labels(res) == ["A", "G", "H"]
    assert res.stop == "sentence"
    assert res.end_sentence is not None and res.end_sentence.text == "H s0." and res.end_sentence.step == 2
    # collected: A, G, H sentences, ranked by cosine to the query: 5°, −7°, 15°, −17°, 20°, 30°
    assert [s.text for s in res.sentences] == ["A s0.", "G s0.", "A s1.", "G s1.", "H s0.", "H s1."]


def test_triangulation_stops_at_once_when_a_sentence_of_the_anchor_wins():
    g = hand_graph(SSG, SSG_EDGES)  # from A: its sentence at 5° (0.087) beats B (0.387) and C (0.288)
    res = Triangulation(WalkParams()).run(g, Q)
    assert labels(res) == ["A"] and res.stop == "sentence" and res.end_sentence.text == "A s0."


def test_basic_reads_the_query_best_chunks_until_enough_sentences():
    g = hand_graph(TRI, TRI_EDGES)
    # chunks by cosine to the query: A 10°, G −12°, H 25°, C −60°, F 150°
    res = BasicRetrieval(WalkParams(max_hops=5, min_sentences=5)).run(g, Q)
    assert labels(res) == ["A", "G", "H"] and res.stop == "enough-sentences"
    assert [p.via for p in res.path] == ["anchor", "query", "query"]
    res = BasicRetrieval(WalkParams(max_hops=1, min_sentences=50)).run(g, Q)
    assert labels(res) == ["A", "G"] and res.stop == "max-chunks"
    res = BasicRetrieval(WalkParams(max_hops=9, min_sentences=50)).run(g, Q)
    assert labels(res) == ["A", "G", "H", "C", "F"] and res.stop == "exhausted"


def test_seeds_from_a_first_stage_choose_the_anchor():
    g = hand_graph(SSG, SSG_EDGES)
    c = int(g.index_of([3])[0])  # C
    res = SSGTraversal().run(g, Q, seeds=[-1, c])
    assert labels(res)[0] == "C" and res.path[0].via == "anchor"
    assert SSGTraversal().run(g, Q, seeds=[-1]).stop == "no-anchor"


def test_disconnected_anchor_returns_its_own_sentences():
    chunks = dict(SSG, Z=(0, [1, -1, 2]))  # Z is the best chunk for the query and has no edge
    g = hand_graph(chunks, SSG_EDGES)
    res = SSGTraversal().run(g, Q)
    assert labels(res) == ["Z"] and res.stop == "no-neighbours"
    assert sorted(s.text for s in res.sentences) == ["Z s0.", "Z s1.", "Z s2."]
    tri = Triangulation().run(g, Q)
    assert labels(tri) == ["Z"] and tri.stop == "sentence"
    bare = hand_graph({"Z": (0, [])} | {k: SSG[k] for k in ("A", "B")}, [("A", "B")])
    assert Triangulation().run(bare, Q).stop == "no-neighbours"
    assert Triangulation().run(bare, Q).sentences == ()


def test_empty_graph():
    for algo in (BasicRetrieval(), SSGTraversal(), Triangulation()):
        res = algo.run(empty_graph(2), Q)
        assert res.stop == "empty" and res.sentences == () and res.path == ()


def test_query_of_the_wrong_dimension_is_an_error():
    with pytest.raises(InputError):
        SSGTraversal().run(hand_graph(SSG, SSG_EDGES), np.ones(3))


def test_ties_go_to_the_smaller_key_and_runs_are_deterministic():
    chunks = dict(A=(0, [0]), B=(40, [40]), C=(-40, [-40]))  # B and C equally similar to A
    g = hand_graph(chunks, [("A", "B"), ("A", "C")])
    first = SSGTraversal().run(g, Q)
    assert labels(first) == ["A", "B"]
    for _ in range(3):
        again = SSGTraversal().run(g, Q)
        assert again == first
    # the same graph given in another order (keys travel with their nodes)
    chunks2 = dict(C=chunks["C"], A=chunks["A"], B=chunks["B"])
    g2 = hand_graph(chunks2, [("A", "B"), ("A", "C")])
    # now C has key 1: the tie goes to C
    assert labels(SSGTraversal().run(g2, Q)) == ["A", "C"]


def test_identical_sentences_are_returned_once():
    chunks = dict(A=(0, [0, 3]), B=(20, [0, 25]))
    g = hand_graph(chunks, [("A", "B")])
    # give B's first sentence the same text as A's first: rebuild texts by hand
    b = NodeBatch(g.keys, g.docs, g.positions, g.vecs, ("Same words. A s1.", "Same  words. B s1."), g.labels,
                  g.offsets, (g.sent_ptr, np.asarray([0, 12, 0, 13]), np.asarray([11, 17, 12, 18]), g.sent_vecs))
    g = graph_from_parts(b, g.edge_src, g.edge_dst, g.edge_weight, g.edge_kind)
    res = BasicRetrieval(WalkParams(min_sentences=10)).run(g, Q)
    texts = [s.text for s in res.sentences]
    assert texts.count("Same words.") == 1 and "Same  words." not in texts and len(texts) == 3


@st.composite
def random_graphs(draw):
    n = draw(st.integers(1, 14))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    angles = rng.uniform(-180, 180, n).round(1).tolist()
    chunks = {f"c{i}": (angles[i], rng.uniform(-180, 180, int(rng.integers(0, 4))).round(1).tolist())
              for i in range(n)}
    pairs = [(f"c{i}", f"c{j}") for i in range(n) for j in range(i + 1, n) if rng.random() < 0.3]
    params = WalkParams(draw(st.integers(0, 6)), draw(st.integers(0, 12)), draw(st.integers(1, 12)),
                        draw(st.booleans()))
    return chunks, pairs, params, float(rng.uniform(-180, 180))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_walk_invariants(case):
    chunks, pairs, params, qdeg = case
    g = hand_graph(chunks, pairs)
    q = u(qdeg)
    for algo in (BasicRetrieval(params), SSGTraversal(params), Triangulation(params)):
        res = algo.run(g, q)
        keys = [p.key for p in res.path]
        assert len(keys) == len(set(keys)) >= 1  # no chunk read twice
        assert len(keys) <= params.max_hops + 1
        rows = [s.row for s in res.sentences]
        assert len(rows) == len(set(rows)) and len({s.text for s in res.sentences}) == len(rows)
        assert len(rows) <= params.max_results
        scores = [s.score for s in res.sentences]
        assert scores == sorted(scores, reverse=True)
        for s in res.sentences:
            assert keys[s.step] == s.key and s.text == g.texts[int(g.index_of([s.key])[0])][s.chunk_span.start:
                                                                                          s.chunk_span.end]
            assert s.score == pytest.approx(float(g.sent_vecs[s.row] @ q), abs=1e-5)
        if algo.name in ("ssg", "tri"):
            for a, b in zip(res.path, res.path[1:], strict=False):  # every hop follows an edge
                ia, ib = g.index_of([a.key, b.key]).tolist()
                assert ib in g.neighbours(ia).tolist()
        if algo.name == "ssg" and params.early_stop:
            hops = [p.similarity for p in res.path if p.via == "hop"]
            assert all(b > a for a, b in zip(hops, hops[1:], strict=False))  # strictly rising, or it stopped
        assert res == algo.run(g, q)  # deterministic

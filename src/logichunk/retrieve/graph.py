"""Graph retrieval: walks over the semantic similarity graph that return sentences and their path.

Plain top-k retrieval misses evidence that is only *indirectly* similar to the question — the
second hop of a multi-hop question. These algorithms start where top-k starts (the chunk most
similar to the query) and then move along the graph of :mod:`logichunk.index.graph`:

* :class:`BasicRetrieval` (``graph-basic``; ``graph-hybrid`` feeds it BM25+vector fused chunks) —
  the baseline: the query's best chunks in order, their sentences, until ``min_sentences`` are
  collected or ``max_hops + 1`` chunks are read (the same budget a walk has).
* :class:`SSGTraversal` (``graph-ssg``) — anchor = the chunk most similar to the query; then hop to
  the connected chunk most similar to the *current chunk*, skipping chunks already read; stop when
  the best next hop is no more similar than the previous hop (early stopping), after ``max_hops``
  hops, or once ``min_sentences`` sentences are collected.
* :class:`Triangulation` (``graph-tri``) — at each step, every candidate connected to the current
  chunk (its unread neighbour chunks and its own sentences) forms a triangle (query, current,
  candidate) in the full embedding space; the candidate whose triangle centroid lies closest to
  the query wins. A sentence ends the walk (the best extraction point), a chunk is a hop. Since
  ``|centroid - q| = |c + x - 2q| / 3``, this prefers candidates close to the query *and* far from
  the current chunk: new information rather than more of the same.

All share :class:`RetrievalAlgorithm`: the anchor search, the walk state (read chunks, collected
sentences without duplicates — by sentence and by identical text), the final ranking of sentences
by cosine to the query (ties: earlier on the path, then reading order) and the cut to
``max_results``. All return one :class:`GraphResult` with the sentences, their exact spans and the
path, so they can be swapped by ``mode`` and compared.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError
from ..index.graph import SimilarityGraph
from ..models.embedding import unit
from ..models.rerank import Reranker
from ..types import Hit, Span
from .hybrid import hybrid_hits
from .rerank import rerank_hits
from .results import Results, hit_record

__all__ = [
    "ALGORITHMS", "BasicRetrieval", "GraphResult", "GraphResults", "GraphSentence", "PathStep",
    "RetrievalAlgorithm", "SSGTraversal", "Triangulation", "WalkParams", "graph_hit", "retrieve_graph",
]

_ROUND = 6


@dataclass(frozen=True)
class WalkParams:
    max_hops: int = 5
    min_sentences: int = 10
    max_results: int = 10
    early_stop: bool = True

    def __post_init__(self) -> None:
        if self.max_hops < 0 or self.min_sentences < 0 or self.max_results < 1:
            raise InputError("graph walk: max_hops and min_sentences must be >= 0, max_results >= 1")

    @classmethod
    def from_settings(cls, s: Any, max_results: int | None = None) -> WalkParams:
        return cls(s.graph_max_hops, s.graph_min_sentences, max_results or s.graph_max_results, s.graph_early_stop)


@dataclass(frozen=True)
class PathStep:
    """One chunk read by a walk. ``via``: ``anchor`` (best for the query), ``query`` (next best for
    the query: basic retrieval) or ``hop`` (along an edge); ``similarity``: cosine to the previous
    chunk of the path (to the query for ``anchor``/``query``)."""

    key: int
    label: str
    document: str
    via: str
    similarity: float
    query_similarity: float
    new_sentences: int

    def to_dict(self) -> dict[str, Any]:
        return {"chunk": self.key, "id": self.label, "document_id": self.document, "via": self.via,
                "similarity": round(self.similarity, 6), "query_similarity": round(self.query_similarity, 6),
                "new_sentences": self.new_sentences}


@dataclass(frozen=True)
class GraphSentence:
    """A returned sentence: ``span`` in the chunk's own coordinates (its block, for store chunks;
    ``text == block[span]``), ``chunk_span`` inside the chunk text; ``step`` = index of its chunk
    in the path; ``score`` = cosine to the query."""

    text: str
    score: float
    key: int
    label: str
    document: str
    span: Span
    chunk_span: Span
    step: int
    row: int

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "score": round(self.score, 6), "chunk": self.key, "id": self.label,
                "document_id": self.document, "span": [self.span.start, self.span.end], "step": self.step}


@dataclass(frozen=True)
class GraphResult:
    """What every algorithm returns: sentences (best first), the path, why the walk stopped
    (``enough-sentences``, ``early-stop``, ``max-hops``, ``no-neighbours``, ``sentence``,
    ``max-chunks``, ``exhausted``, ``empty``, ``no-anchor``), the sentence that ended a
    triangulation walk, and how many sentences were collected before the cut."""

    algorithm: str
    sentences: tuple[GraphSentence, ...]
    path: tuple[PathStep, ...]
    stop: str
    end_sentence: GraphSentence | None = None
    collected: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "stop": self.stop, "collected": self.collected,
                "path": [p.to_dict() for p in self.path], "sentences": [s.to_dict() for s in self.sentences],
                "end_sentence": None if self.end_sentence is None else self.end_sentence.to_dict()}


class _Walk:
    """The state a walk shares: chunks read (in order), sentences collected (no duplicates)."""

    def __init__(self, graph: SimilarityGraph, q: np.ndarray, params: WalkParams) -> None:
        self.g = graph
        self.q = q
        self.p = params
        self.visited: set[int] = set()
        self.path: list[PathStep] = []
        self.rows: list[int] = []
        self.steps: list[int] = []
        self._texts: set[str] = set()
        self.end_row: int | None = None

    @property
    def enough(self) -> bool:
        return len(self.rows) >= self.p.min_sentences

    def qsim(self, nodes: np.ndarray) -> np.ndarray:
        return self.g.vecs[nodes] @ self.q

    def cos(self, i: int, nodes: np.ndarray) -> np.ndarray:
        return self.g.vecs[nodes] @ self.g.vecs[i]

    def unvisited_neighbours(self, i: int) -> np.ndarray:
        nb = self.g.neighbours(i)
        if not self.visited or nb.size == 0:
            return nb
        return nb[~np.isin(nb, np.fromiter(self.visited, np.int64, len(self.visited)))]

    def best(self, nodes: np.ndarray, sims: np.ndarray) -> int:
        """Position of the highest ``sims`` (rounded), ties to the smallest key."""
        return int(np.lexsort((self.g.keys[nodes], -np.round(sims, _ROUND)))[0])

    def visit(self, i: int, via: str, similarity: float) -> None:
        g = self.g
        self.visited.add(int(i))
        step = len(self.path)
        new = 0
        for r in g.sentence_rows(int(i)).tolist():
            norm = " ".join(g.sentence_text(r).split())
            if norm in self._texts:
                continue
            self._texts.add(norm)
            self.rows.append(r)
            self.steps.append(step)
            new += 1
        self.path.append(PathStep(int(g.keys[i]), g.label(int(i)), g.docs[int(i)], via, float(similarity),
                                  float(self.qsim(np.asarray([i]))[0]), new))

    def sentence(self, r: int, score: float, step: int) -> GraphSentence:
        g = self.g
        i = int(g.sent_node[r])
        s, e = int(g.sent_start[r]), int(g.sent_end[r])
        off = g.offset(i)
        return GraphSentence(g.texts[i][s:e], float(score), int(g.keys[i]), g.label(i), g.docs[i],
                             Span(off + s, off + e), Span(s, e), step, int(r))

    def result(self, name: str, stop: str) -> GraphResult:
        end = None
        if self.end_row is not None:
            step = next((k for k, p in enumerate(self.path) if p.key == int(self.g.keys[self.g.sent_node[self.end_row]])),
                        len(self.path) - 1)
            end = self.sentence(self.end_row, float(self.g.sent_vecs[self.end_row] @ self.q), step)
        if not self.rows:
            return GraphResult(name, (), tuple(self.path), stop, end, 0)
        rows = np.asarray(self.rows, np.int64)
        steps = np.asarray(self.steps, np.int64)
        scores = self.g.sent_vecs[rows] @ self.q
        order = np.lexsort((rows, steps, -np.round(scores, _ROUND)))[: self.p.max_results]
        sents = tuple(self.sentence(int(rows[o]), float(scores[o]), int(steps[o])) for o in order.tolist())
        return GraphResult(name, sents, tuple(self.path), stop, end, len(self.rows))


class RetrievalAlgorithm(ABC):
    """One walk over a :class:`SimilarityGraph`. Subclasses implement :meth:`walk`; the base finds
    the anchor (or takes ``seeds`` from a first-stage search), keeps the state and ranks the result."""

    name: ClassVar[str] = ""

    def __init__(self, params: WalkParams | None = None) -> None:
        self.params = params or WalkParams()

    def seeds_needed(self) -> int:
        """How many first-stage chunks (best first) the walk may use."""
        return 1

    def run(self, graph: SimilarityGraph, query_vec: np.ndarray, *, seeds: Sequence[int] | np.ndarray | None = None
            ) -> GraphResult:
        """Walk ``graph`` for the query vector. ``seeds``: node indices ranked by a first stage
        (default: exact cosine over the graph's chunks); -1 entries are ignored."""
        if graph.n_chunks == 0:
            return GraphResult(self.name, (), (), "empty")
        q = unit(np.asarray(query_vec, np.float32).reshape(-1))
        if q.size != graph.dim:
            raise InputError(f"query vector has dimension {q.size}, the graph has {graph.dim}")
        if seeds is None:
            s, _ = graph.search(q, self.seeds_needed())
        else:
            s = np.asarray(seeds, np.int64).reshape(-1)
            s = s[(s >= 0) & (s < graph.n_chunks)]
            s = s[np.sort(np.unique(s, return_index=True)[1])]  # first occurrence order
        if s.size == 0:
            return GraphResult(self.name, (), (), "no-anchor")
        w = _Walk(graph, q, self.params)
        stop = self.walk(w, s)
        return w.result(self.name, stop)

    @abstractmethod
    def walk(self, w: _Walk, seeds: np.ndarray) -> str:
        """Read chunks with ``w.visit``; return why the walk stopped."""


class BasicRetrieval(RetrievalAlgorithm):
    """Query → best chunks in order → their sentences (the baseline), with a walk's budget."""

    name = "basic"

    def seeds_needed(self) -> int:
        return self.params.max_hops + 1

    def walk(self, w: _Walk, seeds: np.ndarray) -> str:
        sims = w.qsim(seeds)
        budget = self.params.max_hops + 1
        for k, (i, s) in enumerate(zip(seeds[:budget].tolist(), sims[:budget].tolist(), strict=True)):
            w.visit(i, "anchor" if k == 0 else "query", s)
            if w.enough:
                return "enough-sentences"
        return "max-chunks" if seeds.size >= budget else "exhausted"


class SSGTraversal(RetrievalAlgorithm):
    """Hop to the unread neighbour most similar to the current chunk, while that similarity rises."""

    name = "ssg"

    def walk(self, w: _Walk, seeds: np.ndarray) -> str:
        cur = int(seeds[0])
        w.visit(cur, "anchor", float(w.qsim(seeds[:1])[0]))
        prev: float | None = None
        for _hop in range(self.params.max_hops):
            if w.enough:
                return "enough-sentences"
            nb = w.unvisited_neighbours(cur)
            if nb.size == 0:
                return "no-neighbours"
            sims = w.cos(cur, nb)
            b = w.best(nb, sims)
            sim = float(sims[b])
            if self.params.early_stop and prev is not None and round(sim, _ROUND) <= round(prev, _ROUND):
                return "early-stop"
            cur = int(nb[b])
            w.visit(cur, "hop", sim)
            prev = sim
        return "enough-sentences" if w.enough else "max-hops"


class Triangulation(RetrievalAlgorithm):
    """Full-dimension triangulation: the candidate whose (query, current, candidate) centroid is
    nearest the query; a sentence ends the walk, a chunk is a hop."""

    name = "tri"

    def walk(self, w: _Walk, seeds: np.ndarray) -> str:
        g = w.g
        cur = int(seeds[0])
        w.visit(cur, "anchor", float(w.qsim(seeds[:1])[0]))
        for _hop in range(self.params.max_hops):
            if w.enough:
                return "enough-sentences"
            nb = w.unvisited_neighbours(cur)
            rows = g.sentence_rows(cur)
            if nb.size == 0 and rows.size == 0:
                return "no-neighbours"
            base = g.vecs[cur] - 2.0 * w.q
            d_chunk = np.linalg.norm(g.vecs[nb] + base, axis=1) / 3.0
            d_sent = np.linalg.norm(g.sent_vecs[rows] + base, axis=1) / 3.0
            dist = np.round(np.concatenate([d_chunk, d_sent]), _ROUND)
            is_sent = np.concatenate([np.zeros(nb.size, np.int64), np.ones(rows.size, np.int64)])
            ident = np.concatenate([g.keys[nb], rows])
            b = int(np.lexsort((ident, is_sent, dist))[0])  # ties: a chunk before a sentence, then by id
            if is_sent[b]:
                w.end_row = int(rows[b - nb.size])
                return "sentence"
            nxt = int(nb[b])
            w.visit(nxt, "hop", float(w.cos(cur, np.asarray([nxt]))[0]))
            cur = nxt
        return "enough-sentences" if w.enough else "max-hops"


ALGORITHMS: dict[str, type[RetrievalAlgorithm]] = {
    "graph-basic": BasicRetrieval, "graph-hybrid": BasicRetrieval, "graph-ssg": SSGTraversal,
    "graph-tri": Triangulation,
}


# --------------------------------------------------------------------------- over a store


@dataclass(frozen=True)
class GraphResults(Results):
    """:class:`~logichunk.retrieve.Results` of a graph mode: one hit per sentence, plus ``result``
    (:class:`GraphResult`: the path, the stop reason) and the graph's sync report. For each hit,
    ``meta["context_text"]`` is the sentence, ``meta["sentence_block_id"]`` and
    ``meta["sentence_block_span"]`` locate it exactly (``block.content[start:end]``), and
    ``hit.context`` is the same span in the chunk's own coordinates (like ``hit.chunk.span``: from
    the start of the block owning the chunk's parent)."""

    result: GraphResult | None = None
    sync: Any = field(default=None, compare=False)
    #: the block holding the sentence that ended a triangulation walk, and its span there: the
    #: coordinates of the hits' ``sentence_block_id`` / ``sentence_block_span``
    end_block: tuple[str, tuple[int, int]] | None = field(default=None, compare=False)

    @property
    def path(self) -> tuple[PathStep, ...]:
        return () if self.result is None else self.result.path

    def records(self, docs: Mapping[str, tuple[str, str | None]] | None = None,
                layout: Callable[[str], Any] | None = None) -> Iterator[dict[str, Any]]:
        """JSON-ready lines (the CLI's ``--format jsonl``): one per sentence, :func:`graph_hit` (``docs``:
        ``{document id: (title, source)}``; ``layout``: a document's :class:`~logichunk.store.document_layout.DocLayout`
        by id, for the sentence's ``document_span``), then one with the path. A sentence line also keeps its
        earlier names: ``text``, ``span`` and ``block_id`` are its sentence's (``sentence.text``,
        ``.block_span``, ``.block_id``), ``step`` its step, ``chunk`` the stored key of its chunk, ``title``
        and ``source`` its document's."""
        docs = docs or {}
        for rank, h in enumerate(self.hits, 1):
            title, source = docs.get(h.doc_id, (None, None))
            rec = graph_hit(h, rank, title, source, None if layout is None else layout(h.doc_id))
            s = rec["sentence"]
            yield {"type": "sentence", **rec, "text": s["text"], "span": s["block_span"],
                   "block_id": s["block_id"] or h.chunk.meta.get("block_id"), "step": s["step"],
                   "chunk": h.chunk.meta.get("pk"), "title": title, "source": source}
        yield {"type": "path", **self.walk(), "notes": list(self.notes)}

    def walk(self) -> dict[str, Any]:
        """The walk behind the sentences, as every interface gives it: the CLI's ``path`` line, the HTTP
        search's and the MCP search's ``graph`` (one shape: a user reads the same fields whichever asked).
        ``mode``, ``algorithm``, why it stopped, the sentences collected before the cut, the ``path`` (one
        step per chunk read), the ``sentences`` returned (the hits, in their order) and the triangulation's
        ``end_sentence``, each sentence with ``span`` in its own block, ``block_id`` naming it, as the hits'
        ``sentence_block_id`` / ``sentence_block_span`` (the walk's own record counts from the block owning
        its chunk)."""
        r = self.result
        sentences = []
        for h in self.hits:
            m = h.chunk.meta
            bs = m.get("sentence_block_span")
            sentences.append({"text": m.get("context_text"), "score": round(float(h.raw_score), 6), "chunk": m.get("pk"),
                              "id": h.chunk.id, "document_id": h.doc_id, "block_id": m.get("sentence_block_id"),
                              "span": None if bs is None else list(bs), "step": m.get("step")})
        return {"mode": self.mode, "algorithm": None if r is None else r.algorithm,
                "stop": None if r is None else r.stop, "collected": 0 if r is None else r.collected,
                "path": [] if r is None else [p.to_dict() for p in r.path], "sentences": sentences,
                "end_sentence": self._end_sentence()}

    def _end_sentence(self) -> dict[str, Any] | None:
        """The walk's end sentence as :meth:`walk` gives the others: ``span`` in its own block, ``block_id``
        naming it (None: its chunk deleted since)."""
        r = self.result
        if r is None or r.end_sentence is None:
            return None
        d = r.end_sentence.to_dict()
        d["block_id"], d["span"] = (None, None) if self.end_block is None else \
            (self.end_block[0], list(self.end_block[1]))
        return d


def graph_hit(h: Hit, rank: int, title: str | None = None, source: str | None = None,
              layout: Any = None) -> dict[str, Any]:
    """A graph mode's hit, one shape whichever interface asked (the CLI's ``--format jsonl``, the HTTP
    search, the MCP ``search``; each adds its own fields around it): ``rank``, ``score`` (the ranking's) and
    ``raw_score`` (the sentence's cosine to the query), the chunk holding the sentence (``ref``, dotted
    ``id``, ``level``, ``method``), its document (``document_id``, ``document_title``, and its ``origin``: a
    document or a conversation topic, :func:`~logichunk.store.origins.hit_origin`), and the ``sentence``:
    its ``text``, the block holding it (``block_id``) and its span there (``block_span``,
    ``block.content[start:end]``), the same in document offsets (``document_span``; null without
    ``layout``, the document's :class:`~logichunk.store.document_layout.DocLayout`, or where an edit changed
    the text there since), and ``step``, the index in the walk's path of the chunk it came from."""
    m = h.chunk.meta
    text = m.get("context_text")
    block = m.get("sentence_block_id")
    bs = m.get("sentence_block_span")
    doc_span = None if layout is None or bs is None else layout.span(block, int(bs[0]), int(bs[1]), text)
    return {**hit_record(h, rank, title, source),  # (the fields every mode's hit has)
            "sentence": {"text": text, "block_id": block, "block_span": None if bs is None else [int(x) for x in bs],
                         "document_span": doc_span, "step": m.get("step")}}


def _locate(blocks: list[tuple[str, int]], owner: str, span: Span) -> tuple[str, Span]:
    """The block holding ``span`` (given relative to ``owner``, in the concatenation of the
    chapter's blocks from ``owner`` on: a merged parent's coordinates) and the span inside it."""
    ids = [b for b, _ in blocks]
    if owner not in ids:
        return owner, span
    i = ids.index(owner)
    s, e = span.start, span.end
    while i + 1 < len(blocks) and s >= blocks[i][1]:
        s -= blocks[i][1]
        e -= blocks[i][1]
        i += 1
    if e <= blocks[i][1]:
        return blocks[i][0], Span(s, e)
    return owner, span  # straddles two blocks (blocks not cut at blank lines): owner coordinates


def retrieve_graph(store: Any, query: str, mode: str, top_k: int | None = None, *,
                   reranker: Reranker | None = None) -> GraphResults:
    """Run one graph mode on a store (the graph is synced first: see :mod:`logichunk.index.graph_store`).
    ``top_k`` caps the sentences returned (default ``graph_max_results``)."""
    from ..index.graph_store import sync_graph

    if mode not in ALGORITHMS:
        raise InputError(f"unknown graph mode {mode!r}: use {', '.join(ALGORITHMS)}")
    s = store.settings
    params = WalkParams.from_settings(s, top_k)
    graph, rep = sync_graph(store)
    algo = ALGORITHMS[mode](params)
    notes: list[str] = []
    if graph.n_chunks == 0:
        mismatch = store.embedder_mismatch()
        why = f"the graph is empty: {mismatch or 'no chunks yet (nothing ingested, or only with --no-chunk)'}"
        return GraphResults((), mode, query, None, (why,), algo.run(graph, np.zeros(graph.dim, np.float32)), rep)
    qv = store.embed_query(query)
    want = algo.seeds_needed()
    if mode == "graph-hybrid":
        pks = [h.chunk.meta["pk"] for h in hybrid_hits(store, query, want, max(4 * want, 40), notes)]
    else:
        pks = [pk for pk, _ in store.vector_search(qv, want, "child")]
    res = algo.run(graph, qv, seeds=graph.index_of(pks))
    rows = store.chunks_by_pk([x.key for x in res.sentences])
    chapters: dict[str, list[tuple[str, int]]] = {}
    hits = []
    for x in res.sentences:
        row = rows.get(x.key)
        if row is None:  # deleted since the graph sync
            continue
        if row.chapter_id not in chapters:
            chapters[row.chapter_id] = [(b.id, len(b.content)) for b in store.blocks(row.chapter_id)]
        bid, bspan = _locate(chapters[row.chapter_id], row.block_id, x.span)
        chunk = row.to_chunk(context_text=x.text, sentence_block_id=bid, sentence_block_span=(bspan.start, bspan.end),
                             step=x.step, algorithm=algo.name)
        hits.append(Hit(chunk, x.score, x.score, row.document_id, x.span))
    end_block = None
    if res.end_sentence is not None:
        end = res.end_sentence
        row = rows.get(end.key) or store.chunks_by_pk([end.key]).get(end.key)
        if row is not None:
            if row.chapter_id not in chapters:
                chapters[row.chapter_id] = [(b.id, len(b.content)) for b in store.blocks(row.chapter_id)]
            bid, bspan = _locate(chapters[row.chapter_id], row.block_id, end.span)
            end_block = (bid, (bspan.start, bspan.end))
    if reranker is not None and hits:
        hits = rerank_hits(reranker, query, hits)
    return GraphResults(tuple(hits), mode, query, None, tuple(notes), res, rep, end_block)

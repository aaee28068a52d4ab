"""What every route answers on success, as Pydantic models, for the OpenAPI schema only.

The routes build plain dicts (:mod:`.views`, :mod:`.playground`, :mod:`.curves`) and attach these
models with ``responses={200: ...}``, never as ``response_model``: a model that lags behind a route
can then never turn a good answer into a 500. What keeps them true is the contract test
(``tests/test_service_responses.py``), which calls every route for real and validates each body with
``extra="forbid"`` and ``strict=True``, so an undocumented, renamed or retyped field fails it.

The published models stay open (no ``additionalProperties: false``), so a client generated today
keeps working when a field is added. Fields that are sometimes *absent* (never ``null``) are declared
with :func:`absent`; ``X | None`` means the field is always there and may be ``null``.

Offsets are Python ``str`` indices (Unicode code points, not bytes or UTF-16 units), and a span is
``[start, end)``. Where a span is counted from is said on each field: the document's text (the
document tree, curves, cut points), the text sent (``POST /api/chunk``) or the start of a block
(search hits, whose chunks are stored relative to the block that owns them).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

__all__ = ["answer"]


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def absent(description: str) -> Any:
    """A field that is left out of some answers and is never ``null`` when present (the schema
    marks it optional with its real type; validation still refuses an explicit ``null``)."""
    return Field(None, description=description, json_schema_extra=_no_default)


def answer(model: type[BaseModel], description: str, *codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` saying that the success answer(s) ``codes`` (default 200) have the body
    ``model``: documentation only (see the module docstring)."""
    return {c: {"model": model, "description": description} for c in (codes or (200,))}


Span = Annotated[list[int], Field(min_length=2, max_length=2, description="[start, end)")]

BlockStatus = Literal["queued", "running", "failed", "dirty", "clean"]
BLOCK_STATUS = ("the block's re-chunk status: `queued` (waiting out the debounce, see `due_in_ms`), `running`, "
                "`failed` (the last re-chunk failed, `error` says why; retried automatically, then on the next edit "
                "or `POST .../rechunk`), `dirty` (changed but not scheduled, e.g. written by another process) or "
                "`clean` (its chunks match its text)")


# ----------------------------------------------------------------------------- system


class Health(BaseModel):
    """Liveness: 200 with ``status: ok``, or 503 with ``status: unavailable`` when the database is gone."""

    status: Literal["ok", "unavailable"]
    version: str
    uptime_seconds: float
    database: str = Field(description="`ok`, or the database error (`ExceptionName: message`)")


class MethodInfo(BaseModel):
    name: str = Field(description="the value for `method` in `POST /api/chunk`")
    about: str
    embeds: bool = Field(description="runs the embedder (slower with a real model)")
    default_sizes: list[int] = Field(description="the size limit per level, top first, when `sizes` is not sent")


class InfoLimits(BaseModel):
    max_body_bytes: int = Field(description="largest request body (setting `service_max_body_bytes`)")
    max_chunk_chars: int = Field(description="longest text `POST /api/chunk` and the curves take")
    max_query_chars: int
    max_top_k: int


class InfoStore(BaseModel):
    parent: list[int] = Field(min_length=2, max_length=2,
                              description="stored parents' [min, max] size, in characters")
    child: list[int] = Field(min_length=3, max_length=3,
                             description="stored children's [min, target, max] size, in characters")
    similarity_threshold: float = Field(description="adjacent-sentence similarity below which a child's cut is "
                                                    "labelled a semantic cliff")


class ServerInfo(BaseModel):
    """What this server offers."""

    version: str
    embedder: str = Field(description="the embedder in use, in words (a model-free fallback says so)")
    default_project: str
    retrieve_modes: list[str] = Field(description="every value `mode` takes in search (read at call time: "
                                      "modes registered by other modules are listed too)")
    default_mode: str = Field(description="the mode used when a search names none")
    methods: list[MethodInfo] = Field(description="the chunking methods of `POST /api/chunk` (none needs a causal LM)")
    units: list[Literal["chars", "bytes", "tokens"]]
    debounce_ms: int = Field(description="how long after the last edit a block is re-chunked")
    limits: InfoLimits
    store: InfoStore


class Latency(BaseModel):
    """A latency series: totals since start, percentiles over the last ``window`` observations."""

    count: int
    seconds_total: float
    p50_ms: float = absent("left out until the first observation")
    p95_ms: float = absent("left out until the first observation")
    p99_ms: float = absent("left out until the first observation")
    max_ms: float = absent("the slowest in the window; left out until the first observation")
    window: int = absent("how many recent observations the percentiles cover; left out until the first")


class HttpMetrics(BaseModel):
    requests_total: int
    by_status: dict[str, int] = Field(description="responses by class: `2xx`, `4xx`, `5xx`...")
    latency: Latency
    routes: dict[str, dict[str, int]] = Field(
        description="`METHOD /route/{template}` -> HTTP status -> count (unmatched paths under `<unmatched>`)")


class SearchMetrics(BaseModel):
    latency: dict[str, Latency] = Field(description="by retrieval mode (only modes searched so far)")
    errors: dict[str, int] = Field(description="failed searches by mode")


class ChunkMetrics(BaseModel):
    latency: Latency = Field(description="`POST /api/chunk`")


class RechunkMetrics(BaseModel):
    completed_total: int
    failed_total: int
    latency: Latency = Field(description="re-chunks that wrote new chunks")


class JobCounts(BaseModel):
    queued: int = Field(description="blocks waiting out the debounce")
    running: int = Field(description="re-chunks running now (0 or 1 per project)")


class AllJobs(JobCounts):
    failed_blocks: int = Field(description="blocks whose last re-chunk failed (over all open projects)")


class QueryCache(BaseModel):
    requests: int = Field(description="searches")
    misses: int = Field(description="queries the embedder had to embed (repeated queries are cached)")


class StoreEmbedding(BaseModel):
    requests: int = Field(description="texts asked of the stores' embedding cache")
    misses: int = Field(description="texts the embedder had to compute")
    hits: int
    hit_rate: float | None = Field(description="`(requests - misses) / requests`; null before any request")
    queries: QueryCache


class PlaygroundEmbedding(BaseModel):
    requests: int
    misses: int


class EmbeddingMetrics(BaseModel):
    requests: int = Field(description="stores and playground together")
    misses: int
    hit_rate: float | None = Field(description="null before any request")
    store: StoreEmbedding
    playground: PlaygroundEmbedding = Field(description="`POST /api/chunk`'s own cache")


class Metrics(BaseModel):
    """In-process metrics (``?format=prometheus`` gives the same in the Prometheus text format)."""

    uptime_seconds: float
    http: HttpMetrics
    search: SearchMetrics
    chunk: ChunkMetrics
    rechunk: RechunkMetrics
    jobs: AllJobs
    embedding: EmbeddingMetrics
    projects_open: int = Field(description="projects with an open store in this process")


# ----------------------------------------------------------------------------- projects


class ProjectListed(BaseModel):
    name: str
    id: str
    created_at: float = Field(description="Unix time")
    open: bool = Field(description="opened by this server process since it started")


class ProjectList(BaseModel):
    """The projects of this database."""

    projects: list[ProjectListed] = Field(description="oldest first")


class ProjectCreated(BaseModel):
    """The new project (its URL is in the ``Location`` header)."""

    name: str
    id: str


class ProjectCounts(BaseModel):
    document: int = Field(description="stored chunks at level `document` (not the number of documents: see "
                          "`documents`)")
    parent: int = Field(description="stored parent chunks")
    child: int = Field(description="stored child chunks")
    dirty_blocks: int = Field(description="blocks changed since they were last chunked")


class ProjectDetail(BaseModel):
    """A project's counts and its re-chunk jobs right now."""

    name: str
    id: str
    documents: int = Field(description="number of documents")
    counts: ProjectCounts
    jobs: JobCounts


# ----------------------------------------------------------------------------- blocks


class Block(BaseModel):
    """A block: the user-editable unit (a run of text between blank lines), with its re-chunk status."""

    id: str
    chapter_id: str
    order: int = Field(description="position in its chapter")
    title: str | None
    size: int = Field(description="length of its text, in characters")
    status: BlockStatus = Field(description=BLOCK_STATUS)
    dirty: bool = Field(description="its text changed since its chunks were cut")
    revision: int = Field(description="bumped by every accepted edit (send it as `expected_revision`)")
    last_chunked_at: float | None = Field(description="Unix time of the last re-chunk; null if never chunked")
    error: str | None = Field(description="why the last re-chunk failed; null unless it failed")
    due_in_ms: int = absent("milliseconds until the queued re-chunk runs; only while `status` is `queued`")


class BlockInDocument(Block):
    start: int = Field(description="where the block starts in the document's text")
    end: int = Field(description="where it ends (exclusive); the blocks, in order, tile the text")
    chapter: int = Field(description="rank (1-based) of its chapter in the document")


class BlockWithText(Block):
    """A block with its text."""

    content: str = Field(description="the block's text")


class BlockEdited(Block):
    """The block after an edit: written at once, re-chunked after the debounce delay."""

    changed: bool = Field(description="false when the new text equals the old (then nothing is re-chunked and the "
                          "answer is 200, not 202)")
    emptied: bool = Field(False, description="true when this edit left the block empty or only whitespace (a "
                          "paragraph deleted: a legitimate edit, said so that a mistaken empty text is seen)")


# ----------------------------------------------------------------------------- documents


DocumentStatus = Literal["ready", "pending", "failed"]
BLOCK_COUNTS = "number of blocks by status (statuses with none are left out)"
DOC_STATUS = "`ready` (every block clean), `pending` (some queued, running or dirty) or `failed` (some failed)"


class DocumentSummary(BaseModel):
    """A document: sizes and chunking status."""

    id: str
    title: str
    source: str | None = Field(description="where it came from (a path, a URL, an uploaded file's name)")
    chars: int = Field(description="length of the document's text, in characters")
    chapters: int = Field(description="number of chapters")
    blocks: int = Field(description="number of blocks")
    block_status: dict[str, int] = Field(description=BLOCK_COUNTS)
    status: DocumentStatus = Field(description=DOC_STATUS)


class DocumentCreated(DocumentSummary):
    """The new document (its URL is in the ``Location`` header), chunked in the background."""

    chunked: bool = absent("only with `?wait=`: true when chunking finished in time, false when the wait ran out")
    existing: bool = Field(False, description="true: the same text was stored already (or the Idempotency-Key "
                                              "seen): this is that document, nothing new was stored (200)")
    decoded: str = absent("an upload whose bytes were not read as UTF-8: how they were (gb18030: not UTF-8, read as "
                          "Chinese; the `encoding` named; utf-16-le...)")


class DocumentList(BaseModel):
    """The project's documents with their chunking status."""

    documents: list[DocumentSummary]


class Chapter(BaseModel):
    id: str
    rank: int = Field(description="1-based position in the document")
    title: str | None = Field(description="its heading, if it starts at one")
    start: int = Field(description="offset in the document's text")
    end: int


class DocumentDetail(BaseModel):
    """A document with its chapters and blocks (``chapters`` and ``blocks`` are lists here, counts in
    the summary)."""

    id: str
    title: str
    source: str | None
    chars: int
    chapters: list[Chapter]
    blocks: list[BlockInDocument]
    block_status: dict[str, int] = Field(description=BLOCK_COUNTS)
    status: DocumentStatus = Field(description=DOC_STATUS)
    sha256: str = Field(description="sha256 of the document's text: the `expected_sha256` of a text replaced from it")


class DocumentReplaced(DocumentSummary):
    """The document after its text was replaced: written at once, its touched chapters re-chunked after the
    debounce delay."""

    changed: bool = Field(description="false when the text equals the stored one (nothing written, 200, not 202)")
    blocks_changed: list[str] = Field(description="ids of the blocks whose text changed")
    blocks_added: list[str] = Field(description="ids of the blocks added")
    blocks_removed: list[str] = Field(description="ids of the blocks removed")
    sha256: str = Field(description="sha256 of the document's text now: the next call's `expected_sha256`")
    chunked: bool = absent("only with `?wait=`: true when chunking finished in time, false when the wait ran out")


class DocumentRef(BaseModel):
    id: str
    title: str
    source: str | None


STALE = ("true when the chunk's chapter has a block edited since it was cut (it is being re-chunked): "
         "the chunk no longer describes the current text")


class TreeChapter(BaseModel):
    """Level 1 of the tree: a chapter (never stored as a chunk; it starts at a heading or at the top)."""

    kind: Literal["chapter"]
    id: str = Field(description="the chapter's rank as a string (`1`, `2`...): the root of its chunks' dotted ids")
    level: Literal[1]
    parent: None = Field(description="always null")
    method: Literal["chapter"]
    title: str | None
    start: int = Field(description="offset in the document's text")
    end: int
    size: int = Field(description="`end - start`")
    stale: bool = Field(description=STALE)
    chapter_id: str = Field(description="the chapter's stored id")


class TreeChunk(BaseModel):
    """Level 2 (a parent) or 3 (a child inside its parent)."""

    kind: Literal["parent", "child"]
    id: str = Field(description="dotted id: `2.3` is the 3rd parent of chapter 2, `2.3.1` its first child")
    level: int = Field(ge=2, le=3, description="2 for parents, 3 for children")
    parent: str = Field(description="the dotted id of the chunk (or chapter) above")
    pk: int = Field(description="the chunk's stored key")
    method: str = Field(description="how its start was chosen (`block`, `block-merge`, `semantic-cliff`...)")
    size: int = Field(description="length in characters")
    block_id: str = Field(description="the block that owns it: its parent's first block (a merged parent spans "
                          "several), which its stored offsets are counted from")
    stale: bool = Field(description=STALE)
    start: int | None = Field(description="offset in the document's text; null when an edit moved the text under "
                              "it (then `text` holds what it covered)")
    end: int | None
    text: str = absent("the chunk's text as it was cut; only when `start` is null")


TreeNode = Annotated[TreeChapter | TreeChunk, Field(discriminator="kind")]


class TreeStats(BaseModel):
    chapters: int
    parents: int
    children: int
    methods: dict[str, int] = Field(description="chunks (not chapters) by `method`")
    stale: int = Field(description="nodes with `stale: true`")


BUBBLE_CONTEXT = ("free-form details for a reviewer; a forced split has `source`, `span` (the sentence, counted from "
                  "the start of the piece named by `where`), `level`, `limit` and `unit`, `attempts` (the methods "
                  "tried), `final_method`, `break` (the roughest break used: `clause`, `word`, `cjk-char`, `char`) "
                  "and `sizes` (of the pieces); stored bubbles add `where` (`block N`, `parent 1.2`)")


class Bubble(BaseModel):
    """A recorded problem for a reviewer (a sentence that had to be cut inside, a chunk a validator
    could not read...): nothing is silently dropped."""

    category: str = Field(description="`forced_split`, `incomplete`, `validator_unreadable`, `compensation_unreadable`...")
    content: str = Field(description="the start of the text concerned (at most 120 characters, then `…`)")
    priority: Literal["high", "medium", "low"]
    context: dict[str, Any] = Field(description=BUBBLE_CONTEXT)


class TreeBubble(Bubble):
    chapter: int = Field(description="rank (1-based) of the chapter it was recorded in")


class StoredBubble(Bubble):
    chapter_id: str = absent("the chapter's stored id; only when listing one document's bubbles (`?document_id=`)")


class BubbleList(BaseModel):
    """The bubbles of the project, or of one document."""

    bubbles: list[StoredBubble] = Field(description="in the order they were recorded")


class DocumentTree(BaseModel):
    """The document's text and its chunk tree in document offsets: chapters (level 1) > parents (2) >
    children (3), in pre-order. Children tile their parent and parents their chapter, except where
    ``stale`` says an edit is being re-chunked."""

    document: DocumentRef
    text: str = Field(description="the document's text: the blocks, in order, concatenated")
    length: int = Field(description="`len(text)` in characters")
    chunks: list[TreeNode]
    blocks: list[BlockInDocument]
    stats: TreeStats
    bubbles: list[TreeBubble]


class Cut(BaseModel):
    """Where a chunk that is not the first of its parent starts."""

    offset: int = Field(description="the chunk's start in the text")
    level: int = Field(description="the chunk's level")
    id: str = Field(description="the chunk's dotted id")
    method: str = Field(description="how that cut was found")


class Threshold(BaseModel):
    value: float
    label: str
    kind: Literal["setting", "reference", "derived"] = Field(
        description="`setting` (configured), `reference` (a fixed guide) or `derived` (the weakest cut actually "
                    "taken on this series: why a lower peak was not cut)")


class Series(BaseModel):
    """One signal along the text. Long series are thinned to a min/max envelope, peaks kept."""

    name: Literal["entropy", "composite", "similarity", "structure", "window_entropy", "perplexity", "divergence", "novelty"]
    label: str
    kind: Literal["gap", "window"] = Field(description="`gap`: one value per sentence gap, at the gap's offset; "
                                           "`window`: a sliding-window profile")
    higher_is_break: bool = Field(description="true when a higher value means a stronger break (false for similarity)")
    x: list[int] = Field(description="offsets in the text, ascending")
    y: list[float] = Field(description="the values at `x` (finite)")
    points: int = Field(description="points before thinning")
    thresholds: list[Threshold]


class Curves(BaseModel):
    length: int = Field(description="characters in the text")
    sentences: int
    series: list[Series]


class DocumentCurves(BaseModel):
    """The gap-score curves along a document, with its cut points (parents' and children's)."""

    document: DocumentRef
    cuts: list[Cut] = Field(description="in document offsets; stale chunks are left out")
    curves: Curves


# ----------------------------------------------------------------------------- search


class HitMeta(BaseModel):
    """What the retrieval mode knows about a hit beyond its chunk."""

    level_name: Literal["child", "parent", "block"]
    block_id: str
    chapter_id: str
    document_id: str
    size: int
    child: str = absent("parent mode: the dotted id of the best matching child")
    child_span: Span = absent("parent mode: that child's span, in the same coordinates as the hit's `span`")
    relation: Literal["hit", "parent", "sibling", "descendant"] = absent(
        "hierarchical mode: how this chunk relates to the search hit it was expanded from")
    expanded_from: str = absent("hierarchical mode: the dotted id of that search hit")
    vector_rank: int = absent("hybrid mode: rank among the vector results (left out when not among them)")
    cosine: float = absent("hybrid mode: cosine similarity to the query")
    bm25_rank: int = absent("hybrid mode: rank among the BM25 results (left out when not among them)")
    bm25: float = absent("hybrid mode: BM25 score")
    fallback: bool = absent("true on hits of the document-level fallback (see the answer's `fallback`)")
    sentence_block_id: str = absent("graph modes: the block holding the hit's sentence")
    sentence_block_span: Span = absent("graph modes: the sentence inside that block (`block.content[start:end]`)")
    step: int = absent("graph modes: index in `graph.path` of the chunk the sentence came from")
    algorithm: Literal["basic", "ssg", "tri"] = absent("graph modes: the walk")


class HitView(BaseModel):
    """The text to show for a hit: its parent (or a window of it) with the matched child highlighted."""

    text: str
    highlight: Span | None = Field(description="the matched child inside `text`; null when none is known")
    window: bool = Field(description="true when `text` is a window of the parent, not all of it")
    parent_id: str | None = Field(description="dotted id of the chunk `text` comes from")
    child_id: str | None = Field(description="dotted id of the highlighted child")


class HitSentence(BaseModel):
    """A graph mode's sentence, the same fields in the CLI's `--format jsonl` and the MCP search
    (`logichunk.retrieve.graph.graph_hit`)."""

    text: str
    block_id: str | None = Field(description="the block holding the sentence (`meta.sentence_block_id`)")
    block_span: Span | None = Field(description="the sentence inside that block, `block.content[start:end]` "
                                    "(`meta.sentence_block_span`)")
    document_span: Span | None = Field(description="the sentence in document offsets; null while the document's "
                                       "text there is not the sentence (its block was edited and is being "
                                       "re-chunked)")
    step: int | None = Field(description="index in `graph.path` of the chunk the sentence came from")


class Hit(BaseModel):
    rank: int = Field(description="1-based")
    score: float = Field(description="what ranking used (size-normalised, fused or reranked)")
    raw_score: float = Field(description="the first-stage similarity before normalisation")
    ref: str | None = Field(description="the chunk's ref, `DOCUMENT_ID#DOTTED_ID@TAG` (TAG: the first 8 hex digits "
                            "of the sha256 of its text): `GET .../chunk?ref=` reads it, now or after an edit (the "
                            "same text, or 409 `ref_changed`); null for a lexical fallback hit (a block not chunked "
                            "yet)")
    id: str = Field(description="the chunk's dotted id (a block id for a lexical fallback hit)")
    level: Literal["child", "parent", "block"] = Field(description="`block`: the lexical fallback over blocks")
    method: str
    document_id: str
    document_title: str | None = Field(description="null if the document was deleted meanwhile")
    origin: Literal["document", "conversation"] = Field(description="what the hit's document is: a `document` "
                                                        "(text added or ingested) or a `conversation` topic archived "
                                                        "by the memory (its exchanges; the request's `include` "
                                                        "keeps one or both)")
    conversation_id: str = absent("conversation hits only: the conversation the topic is of")
    topic: int = absent("conversation hits only: the topic's number in its conversation")
    block_id: str = Field(description="the block that owns the chunk (its parent's first block; the block itself "
                          "for a `block` hit): `span` is counted from its start")
    span: Span = Field(description="the chunk, counted from the start of block `block_id` (a merged parent runs on "
                       "into the blocks after it); add that block's `start` (`GET .../documents/{doc_id}`) for "
                       "document offsets")
    size: int
    text: str = Field(description="the chunk's text")
    context: Span | None = Field(description="same coordinates as `span`: parent mode, the window of whole sentences "
                                 "around the matched child in a parent over `context_window` characters; graph modes, "
                                 "the returned sentence; else null")
    meta: HitMeta
    sentence: HitSentence = absent("graph modes: the sentence found (one hit per sentence)")
    view: HitView | None
    document_span: Span | None = Field(description="`span` in document offsets (the text of `GET .../documents/{doc_id}"
                                       "/tree`); null while the document's text there is not the chunk's (its block "
                                       "was edited and is being re-chunked)")
    document_context: Span | None = Field(description="`context` in document offsets (null when `context` is, or "
                                          "with `document_span`)")
    document_pages: list[int] | None = Field(description="[first, last] page the hit's text lies on, in a document "
                                             "of pages such as a PDF (whitespace and running headers, footers and "
                                             "page numbers count for none); null in a document without pages, or "
                                             "with `document_span`")


class PathStep(BaseModel):
    chunk: int = Field(description="the chunk's stored key (`pk` in the document tree)")
    id: str = Field(description="its dotted id")
    document_id: str
    via: Literal["anchor", "query", "hop"] = Field(
        description="`anchor` (best for the query), `query` (next best for the query) or `hop` (along an edge)")
    similarity: float = Field(description="cosine to the previous chunk of the path (to the query for anchor/query)")
    query_similarity: float
    new_sentences: int = Field(description="sentences this chunk added")


class GraphSentence(BaseModel):
    text: str
    score: float = Field(description="cosine to the query")
    chunk: int = Field(description="stored key of the chunk it belongs to")
    id: str = Field(description="that chunk's dotted id")
    document_id: str
    block_id: str | None = Field(description="the block holding the sentence (the hit's `sentence_block_id`; "
                                             "null: its chunk was deleted since the walk)")
    span: Span | None = Field(description="the sentence inside that block, `block.content[start:end]` (the hit's "
                                          "`sentence_block_span`)")
    step: int = Field(description="index in `path` of its chunk")


class GraphWalk(BaseModel):
    """The walk over the semantic similarity graph behind a graph mode's sentences: the same fields as the
    CLI's `path` line (`--format jsonl`) and the MCP search's `graph`."""

    mode: str = Field(description="the graph mode searched")
    algorithm: Literal["basic", "ssg", "tri"]
    stop: Literal["enough-sentences", "early-stop", "max-hops", "no-neighbours", "sentence", "max-chunks",
                  "exhausted", "empty", "no-anchor"] = Field(description="why the walk stopped")
    collected: int = Field(description="sentences collected before the cut to `top_k`")
    path: list[PathStep]
    sentences: list[GraphSentence] = Field(description="the hits' sentences, in their order")
    end_sentence: GraphSentence | None = Field(description="graph-tri: the sentence that ended the walk")


class SearchAnswer(BaseModel):
    """Hits, best first. Parent-mode hits are parents carrying their best child (``meta.child``,
    ``view.highlight``); graph modes return one hit per sentence and the walk in ``graph``."""

    query: str
    mode: str = Field(description="one of `GET /api/info`'s `retrieve_modes`")
    top_k: int
    include: Literal["documents", "conversations", "all"] = Field(description="the hits kept (the request's "
                                                                 "`include`): each hit says its `origin`")
    fallback: Literal["document"] | None = Field(
        description="`document` when the child index was empty or failed and parent vectors, else BM25 over "
                    "blocks, answered instead (`notes` say which)")
    notes: list[str] = Field(description="what happened on the way (a fallback, an embedder mismatch, an empty graph)")
    took_ms: float
    hits: list[Hit]
    graph: GraphWalk = absent("graph modes only")


class ChunkNode(BaseModel):
    """A chunk or chapter near the one read (its parent, a sibling, a child), without its text."""

    ref: str = Field(description="its ref (`DOCUMENT_ID#DOTTED_ID@TAG`), to read it next")
    id: str = Field(description="its dotted id: `2` chapter 2, `2.3` its third parent, `2.3.1` that parent's first child")
    kind: Literal["chapter", "parent", "child"]
    method: str = Field(description="how its start was chosen (`chapter` for a chapter)")
    title: str | None = absent("chapters only: the heading, null when the chapter has none")
    size: int = Field(description="characters")
    span: Span | None = Field(description="[start, end) in the document's text (`GET .../documents/{doc_id}/tree`); "
                              "null while its block is edited and not re-chunked yet")


class ChunkByRef(ChunkNode):
    """A chunk read by its ref, with its text and its neighbours' refs (chapter > parent > child)."""

    text: str
    document_id: str
    document_title: str
    parent: ChunkNode | None = Field(description="null for a chapter")
    siblings: list[ChunkNode] = Field(description="the others under the same parent, in order")
    children: list[ChunkNode]
    moved_from: str = absent("the ref asked for, when a re-chunk after an edit renumbered that text: this is the "
                             "same text at its new `ref`")
    note: str = absent("with `moved_from`: that sentence, for a person")


# ----------------------------------------------------------------------------- playground


class PlaygroundChunk(BaseModel):
    id: str = Field(description="dotted id (`1`, `1.2`, `1.2.3`)")
    level: int = Field(description="1 at the top")
    parent: str | None = Field(description="dotted id of the chunk above; null at level 1")
    start: int = Field(description="offset in the text sent")
    end: int
    size: int = Field(description="size in `unit`")
    method: str = Field(description="how its start was chosen (`entropy`, `composite`, `forced`, `whole`, "
                        "`semantic-cliff`, `fixed`...)")


class ChunkStats(BaseModel):
    """The chunker's own counters: which keys depends on the method."""

    llm_calls: int = absent("logic-chain, cliff, fused: calls to an LLM (0 here: the service runs none)")
    tier2_skipped: int = absent("logic-chain, cliff, fused")
    tier3_skipped: int = absent("logic-chain, cliff, fused: runs too short for tier 3's windows, left to tier 1")
    sentences: int = absent("logic-chain, cliff, fused")
    signal: str = absent("logic-chain, cliff, fused: the tier-1 signal")
    methods: dict[str, int] = absent("logic-chain, cliff, fused: chunks by method")
    bubbles: int = absent("logic-chain, cliff, fused")
    chunks: int = absent("fixed, recursive")
    embedder: str = absent("a method that embeds (cliff, fused...): the model its cuts were measured with")
    embedder_fallback: str = absent("when the `auto` embedder fell back to another model: why")


class Timing(BaseModel):
    chunk_ms: float
    curves_ms: float


class ChunkAnswer(BaseModel):
    """A text chunked with one method (nothing stored): the chunks in pre-order, the cut points, the
    bubbles and the gap curves."""

    method: str
    sizes: list[int] = Field(description="the limits used, per level, top first")
    unit: Literal["chars", "bytes", "tokens"]
    length: int = Field(description="characters in the text")
    chunks: list[PlaygroundChunk] = Field(description="pre-order; each level tiles the text, children tile their parent")
    cuts: list[Cut]
    depth: int = Field(description="number of levels")
    stats: ChunkStats
    bubbles: list[Bubble]
    curves: Curves
    timing: Timing


class Topic(BaseModel):
    id: str = Field(description="`1`, `2`, ... in text order")
    start: int = Field(description="offset in the text sent")
    end: int
    size: int = Field(description="characters")
    sentences: Span = Field(description="the sentences (or lines) it holds, [first, last + 1)")


class TopicStats(BaseModel):
    sentences: int = Field(description="sentences (or lines) in the text")
    topics: int
    units: Literal["sentences", "lines"]
    max_topic_units: int = Field(description="the most units one topic spans (paragraphs where the text has "
                                             "them, else lines or sentences): the bound that keeps the decision "
                                             "linear in the text's length")
    vectors: str = Field(description="what cohesion was measured with: `lexical` (the text's own words, no model)")
    cost: Literal["evidence", "scatter"] = absent(
        "`evidence`: the Bayesian evidence of each topic's words (model-free); `scatter`: the within-topic "
        "scatter of an embedder's vectors")
    penalty: float = absent("the price of one more topic under the words' evidence: log N for a text of N "
                            "words; absent when `topics` was given")
    vocabulary: Literal["text", "local"] = absent(
        "what the prior of a topic's words spreads over: `text`, the text's kinds of word; `local`, in a text "
        "longer than the window (1,536 words), the kinds within that many words around the topic; absent when "
        "`topics` was given")
    count: Literal["given", "evidence"] = absent(
        "`given` when the request named how many topics; `evidence` when an embedder placed as many topics as "
        "the words' evidence found")
    headings: int = absent("headings that opened a topic")
    open_gaps: int = absent("gaps where a topic could start after the structure rules")


class ReadAnswer(BaseModel):
    """A file's text as the server reads it (nothing stored): what the page puts in its text box."""

    text: str = Field(description="the text every span of a chunk of it will point into (a PDF's pages joined by form feeds)")
    length: int = Field(description="characters in the text")
    source: str = Field(description="the file's name, or the name given")
    pdf: bool = Field(description="true: the file was a PDF, read as its text layer")
    pages: int = Field(description="pages: form feeds + 1 for a PDF, else 1")
    decoded: str = Field("", description="how the bytes were read when not as UTF-8: gb18030 (not UTF-8, read as "
                         "Chinese), the `encoding` named, utf-16-le..., pdf; '' for UTF-8")


class SegmentAnswer(BaseModel):
    """A text divided into topics with no size limit (nothing stored): spans that tile the text."""

    units: Literal["sentences", "lines"]
    length: int = Field(description="characters in the text")
    topics: list[Topic]
    stats: TopicStats
    timing_ms: float

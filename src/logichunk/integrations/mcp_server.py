"""logichunk as a Model Context Protocol server: a knowledge base to search and a conversation
memory, as tools an agent calls, on the official ``mcp`` SDK (extra ``[mcp]``).

    logichunk mcp --db kb.db --allow ~/notes          # stdio, for desktop and CLI agents
    logichunk serve --db kb.db                        # the same server at /mcp (streamable HTTP, API key)

Tools: ``search``, ``add_document``, ``add_file``, ``list_documents``, ``get_chunk``, ``chunk``,
``remember``, ``recall``, ``end_conversation``. Resources: ``logichunk://documents`` (the list),
``logichunk://documents/{id}`` (a document's text), ``logichunk://bubbles`` and
``logichunk://documents/{id}/bubbles`` (problems chunking recorded). The operations themselves live in
:mod:`.kb` and :mod:`.conversations`; this module only describes them to the SDK and turns every
refusal into an MCP tool error (``isError`` with one sentence), never a traceback.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal, Protocol

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from .. import __version__
from ..config import Settings
from ..errors import LogichunkError
from . import kb
from .conversations import Conversations

log = logging.getLogger("logichunk.mcp")

INSTRUCTIONS = """logichunk: a knowledge base cut where the text's logic breaks (chapter > parent > child
chunks, Chinese and English), and a long-conversation memory that files finished topics as episodes.
Knowledge base: `search` first; a hit's `ref` (DOCUMENT_ID#DOTTED_ID) opens the chunk and its parent,
siblings and children with `get_chunk`. Add text with `add_document` (or `add_file` for a file in a
folder the server may read). Memory: call `remember` once per exchange with the same conversation_id;
`recall` finds earlier topics with their exact turns; `end_conversation` files the last topic."""

Mode = Literal["hybrid", "parent", "basic", "hierarchical", "graph-basic", "graph-ssg", "graph-tri", "graph-hybrid"]
RecallMode = Literal["hybrid", "basic", "parent", "hierarchical", "kernel"]
Method = Literal["logic-chain", "cliff", "fused", "parent-child", "fixed", "recursive"]
Unit = Literal["chars", "tokens"]

ProjectArg = Annotated[str | None, Field(description="project (a separate collection) in the database; "
                                                   "omit for the server's default project")]


class StoreSource(Protocol):
    """Where the tools find a project's store: :class:`.kb.Stores` (stdio) or the HTTP service's."""

    default: str
    embedder: Any

    def get(self, project: str | None, *, create: bool = False) -> kb.Project: ...


def _errors_as_tool_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A refusal (any logichunk error) is the tool error's message; anything else is logged and
    reported in one line, so the agent sees a sentence and the server keeps serving."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except LogichunkError as e:
            raise ToolError(str(e)) from None
        except Exception as e:  # noqa: BLE001 - one line for the agent, the details in the server's log
            log.warning("tool %s failed: %s: %s", fn.__name__, type(e).__name__, e, exc_info=log.isEnabledFor(10))
            raise ToolError(f"internal error ({type(e).__name__}: {str(e)[:200]})") from None

    return wrapper


class _Server(MCPServer):
    """The SDK's server with a call's arguments that fail the tool's schema said in one line (the SDK gives
    pydantic's report: a line per field, a URL under each), as every other refusal is."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(f"{name}: {_arguments_said(e.__cause__)}") from None
            raise


def _arguments_said(e: ValidationError) -> str:
    """Each failing argument, what it should be and what it was, on one line."""
    parts = []
    for err in e.errors(include_url=False):
        where = ".".join(str(x) for x in err.get("loc", ())) or "arguments"
        got = f" (got {err['input']!r:.60})" if "input" in err and err.get("type") != "missing" else ""
        parts.append(f"{where}: {err.get('msg', 'invalid')}{got}")
    return "; ".join(parts)


def build_server(stores: StoreSource, settings: Settings, *, allow: kb.Folders | None = None,
                 limits: kb.Limits | None = None, name: str = "logichunk") -> MCPServer:
    """The MCP server over ``stores`` (see the module docstring); ``allow``: folders ``add_file`` reads."""
    limits = limits or kb.Limits.from_settings(settings)
    folders = allow or kb.Folders(())
    memory = Conversations(stores.get(None, create=True), limits)
    server: MCPServer = _Server(name, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    def tool(annotations: ToolAnnotations) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            server.add_tool(_errors_as_tool_errors(fn), annotations=annotations)
            return fn

        return deco

    @tool(read_only)
    def search(query: Annotated[str, Field(description="what to look for, in any language (zh and en mixed is fine)")],
               mode: Annotated[Mode, Field(description="hybrid (BM25 + vectors, the default), parent (whole "
                                                      "parents with a window around the matched child), basic, "
                                                      "hierarchical (hit + parent + siblings), or graph-* (sentences "
                                                      "gathered along a similarity graph, with the path)")] = "hybrid",
               top_k: Annotated[int, Field(description="how many hits", ge=1)] = 5,
               project: ProjectArg = None) -> dict[str, Any]:
        """Search the knowledge base. Returns hits best first, each with its text, `ref` (pass it to
        get_chunk to read around it), dotted id, document, `span` ([start, end) in the document's
        text) and score; parent mode adds the matched child and a `context` window for large
        parents; graph modes return one hit per `sentence` (text and span) and the walk's `path`."""
        return kb.search(stores.get(project), query, limits, mode, top_k)

    @tool(writes)
    def add_document(title: Annotated[str, Field(description="the document's title")],
                     text: Annotated[str, Field(description="the full text; Markdown headings and 第…章 / Chapter N "
                                                            "start chapters, blank lines start blocks")],
                     project: ProjectArg = None) -> dict[str, Any]:
        """Store a text in the knowledge base and chunk it now (it is searchable when this returns).
        Returns the document's id and its chunk counts; when the same text is stored already, that
        document (`existing` true) and nothing is stored again."""
        return kb.add_document(stores.get(project, create=True), title, text, limits)

    @tool(writes)
    def add_file(path: Annotated[str, Field(description="a text file (.txt, .md, .rst) inside a folder this "
                                                        "server was started with (--allow); relative paths are "
                                                        "read from the first such folder")],
                 title: Annotated[str | None, Field(description="title (default: the file name)")] = None,
                 project: ProjectArg = None) -> dict[str, Any]:
        """Store a text file from the server's allowed folders as a document and chunk it now."""
        return kb.add_file(stores.get(project, create=True), path, folders, limits, title)

    @tool(read_only)
    def list_documents(project: ProjectArg = None) -> dict[str, Any]:
        """List the documents of the knowledge base: id, title, source, size, chapters and chunk counts.
        Archived conversation topics are documents too (source `memory:CONVERSATION#TOPIC`), so
        search finds what was discussed as well as what was added."""
        return kb.list_documents(stores.get(project))

    @tool(read_only)
    def get_chunk(id: Annotated[str, Field(description="a `ref` from search (DOCUMENT_ID#DOTTED_ID, e.g. "
                                                       "'4f3a2b1c9d0e#2.3.1'), or a dotted id with document_id")],
                  document_id: Annotated[str | None, Field(description="the document, when `id` is only a "
                                                                       "dotted id")] = None,
                  project: ProjectArg = None) -> dict[str, Any]:
        """Read one chunk by its dotted id (2 = chapter 2, 2.3 = its third parent, 2.3.1 = that parent's
        first child) with its text and span, and the refs of its parent, siblings and children, to
        widen or narrow what you read."""
        return kb.get_chunk(stores.get(project), id, document_id)

    @tool(read_only)
    def chunk(text: Annotated[str, Field(description="the text to cut (nothing is stored)")],
              method: Annotated[Method, Field(description="logic-chain (model-free four-tier cascade, default), "
                                                          "cliff or fused (with the embedder), parent-child, "
                                                          "fixed or recursive (baselines)")] = "logic-chain",
              max_size: Annotated[int | None, Field(description="largest chunk (default: the method's, 1000; "
                                                                "1500 for parent-child)", ge=1)] = None,
              unit: Annotated[Unit, Field(description="what max_size counts")] = "chars") -> dict[str, Any]:
        """Cut a text into a chunk tree without storing it: every chunk's dotted id, parent, level,
        [start, end) span into the text, the method that made the cut, and the bubbles (pieces that
        could only be force-split)."""
        return kb.chunk_text(text, limits, settings, lambda: stores.embedder, method, max_size, unit)

    @tool(read_only)
    def segment(text: Annotated[str, Field(description="the text to divide into topics (nothing is stored)")],
                units: Annotated[Literal["sentences", "lines"], Field(description="sentences (default), or lines: "
                                                                                  "one turn or transcript line each")]
                = "sentences",
                topics: Annotated[int | None, Field(description="how many topics you want (headings still open "
                                                                "topics); default: as many as the text's cohesion "
                                                                "gives", ge=1)] = None) -> dict[str, Any]:
        """Divide a text into its topics, with no size limit: where the subject changes. Headings open
        topics; cuts fall between paragraphs (or lines) and never before a sentence that leans on the
        one before. Each topic's id, [start, end) span, sentence range and text."""
        return kb.segment_text(text, limits, None, units, topics)

    @tool(writes)
    def remember(conversation_id: Annotated[str, Field(description="your id for this conversation; use the same "
                                                                   "one for every turn")],
                 user: Annotated[str, Field(description="the user's message of this turn")],
                 assistant: Annotated[str, Field(description="your reply in this turn")] = "",
                 rewritten_query: Annotated[str | None, Field(description="the user's message made self-contained "
                                                                          "(pronouns resolved), if you have it")] = None
                 ) -> dict[str, Any]:
        """Record one exchange of a conversation. Returns the decision on it: `adsorb` (same topic),
        `split` (a new topic starts here) or `force_adsorb` (a short filler such as 'ok, go on'),
        who decided (`decided_by`: heuristic, screen, arbiter, guard, first) and the evidence
        `score`; and any earlier topic that is now final and `archived` (searchable with recall)."""
        return memory.remember(conversation_id, user, assistant, rewritten_query)

    @tool(read_only)
    def recall(query: Annotated[str, Field(description="what was discussed, e.g. 'the deployment error'")],
               conversation_id: Annotated[str | None, Field(description="only this conversation (its turns not "
                                                                        "archived yet come back as open_turns)")] = None,
               top_k: Annotated[int, Field(description="how many topics", ge=1)] = 5,
               mode: Annotated[RecallMode, Field(description="hybrid (default), basic, parent, hierarchical, or "
                                                             "kernel (topic vectors)")] = "hybrid") -> dict[str, Any]:
        """Find earlier topics of conversations ("what did we discuss about X"): episodes best first,
        each with its turn range, title, score and its exact exchanges (user and assistant text)."""
        return memory.recall(query, conversation_id, top_k, mode)

    @tool(writes)
    def end_conversation(conversation_id: Annotated[str, Field(description="the conversation to close")]
                         ) -> dict[str, Any]:
        """Close a conversation: its last topics are judged with what is there and archived, so recall
        finds them. A later remember with the same id continues it."""
        return memory.end(conversation_id)

    _resources(server, stores)
    return server


def _resources(server: MCPServer, stores: StoreSource) -> None:
    def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except LogichunkError as e:
                raise ResourceError(str(e)) from None

        return wrapper

    def as_json(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False, indent=1)

    @server.resource("logichunk://documents", name="documents", mime_type="application/json",
                     description="the documents of the default project (id, title, size, chunk counts)")
    @guarded
    def documents() -> str:
        return as_json(kb.list_documents(stores.get(None)))

    @server.resource("logichunk://documents/{document_id}", name="document", mime_type="text/plain",
                     description="a document's full text")
    @guarded
    def document(document_id: str) -> str:
        return kb.document_text(stores.get(None), document_id)["text"]

    @server.resource("logichunk://bubbles", name="bubbles", mime_type="application/json",
                     description="problems chunking recorded in the default project (forced splits, oversized "
                                 "sentences), for a reviewer")
    @guarded
    def bubbles() -> str:
        return as_json(kb.project_bubbles(stores.get(None)))

    @server.resource("logichunk://documents/{document_id}/bubbles", name="document-bubbles",
                     mime_type="application/json", description="the bubbles of one document")
    @guarded
    def document_bubbles(document_id: str) -> str:
        return as_json(kb.project_bubbles(stores.get(None), document_id))


def run_stdio(stores: StoreSource, settings: Settings, *, allow: kb.Folders | None = None) -> None:
    build_server(stores, settings, allow=allow).run("stdio")

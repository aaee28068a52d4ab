"""logichunk as a Model Context Protocol server: a knowledge base to search and a conversation
memory, as tools an agent calls, on the official ``mcp`` SDK (extra ``[mcp]``).

    logichunk mcp --db kb.db --allow ~/notes          # stdio, for desktop and CLI agents
    logichunk serve --db kb.db                        # the same server at /mcp (streamable HTTP, API key)

Tools: ``search``, ``add_document``, ``add_file``, ``list_documents``, ``get_chunk``, ``chunk``,
``remember``, ``recall``, ``end_conversation``, ``forget_conversation``. Resources: ``logichunk://documents`` (the list),
``logichunk://documents/{id}`` (a document's text), ``logichunk://bubbles`` and
``logichunk://documents/{id}/bubbles`` (problems chunking recorded). The operations themselves live in
:mod:`.kb` and :mod:`.conversations`; this module only describes them to the SDK and turns every
refusal into an MCP tool error (``isError`` with one sentence), never a traceback: arguments are
checked strictly (``top_k: "3"``, ``3.0`` or ``true`` is refused, not coerced; an unknown argument is
refused, not dropped), ``remember`` calls are served in the order they arrive (the SDK runs tools in
threads, which would take them in any order), and on stdio a line the SDK cannot read (not JSON, not UTF-8,
or a lone surrogate escape such as ``"\\ud800"``) is answered with a JSON-RPC error instead of no answer (bytes
that are no UTF-8 were read as U+FFFD into the tool's text).
"""

from __future__ import annotations

import functools
import io
import json
import logging
import re
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal, Protocol

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from .. import __version__
from ..config import Settings
from ..errors import LogichunkError, literal_choices, unknown_choice
from . import kb
from .conversations import RECALL_CHARS, Conversations, server_calibration

log = logging.getLogger("logichunk.mcp")

INSTRUCTIONS = """logichunk: a knowledge base cut where the text's logic breaks (chapter > parent > child
chunks, Chinese and English), and a long-conversation memory that files finished topics as episodes.
Knowledge base: `search` first (documents only unless `include` says conversations or all; each hit's
`origin` says which); a hit's `ref` (DOCUMENT_ID#DOTTED_ID@TAG) opens the chunk and its parent,
siblings and children with `get_chunk`; the TAG (the text's hash) keeps a saved ref safe across edits: it
reads the same text, renumbered (`moved_from`) or not, or fails saying the chunk changed. Add text with `add_document` (or `add_file` for a file in a
folder the server may read). Memory: call `remember` once per exchange with the same conversation_id;
`recall` finds earlier topics with their exact turns (and, with conversation_id, the turns not archived yet
that match); `end_conversation` files the last topic. The memory tools take `project` as the others do."""

# (in the order of config.RETRIEVE_MODES and kb.CHUNK_METHODS: an unknown value lists them as the service does)
Mode = Literal["basic", "parent", "hierarchical", "hybrid", "graph-basic", "graph-ssg", "graph-tri", "graph-hybrid"]
RecallMode = Literal["hybrid", "basic", "parent", "hierarchical", "kernel"]
Method = Literal["logic-chain", "cliff", "fused", "parent-child", "fixed", "recursive"]
Unit = Literal["chars", "tokens"]

ProjectArg = Annotated[str | None, Field(description="project (a separate collection) in the database; "
                                                   "omit for the server's default project")]
Include = Literal["documents", "conversations", "all"]


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


_IN_ORDER = frozenset({"remember", "end_conversation", "forget_conversation"})  # the tools whose calls must take effect in arrival order


class _Server(MCPServer):
    """The SDK's server with a call's arguments that fail the tool's schema said in one line (the SDK gives
    pydantic's report: a line per field, a URL under each), as every other refusal is; an argument the tool
    does not take refused (the SDK drops it: a misspelt ``assistant`` would be lost); ``remember`` and
    ``end_conversation`` calls served one at a time in the order they arrived (an anyio lock is first
    come, first served), so turns sent without waiting for the replies are stored in the order they were
    sent, and an end sent after them ends after them; and on stdio, lines the SDK would drop without an
    answer answered (:func:`_checked_lines`, which reads stdin itself: fd 0 is not diverted to the null
    device as the SDK's reader does, harmless here as no tool reads stdin)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_order: anyio.Lock | None = None
        self.memory_calibration = ""  # the calibration the memory tools use, in words (said at the server's start)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        _refuse_unknown(self, name, arguments)
        if name in _IN_ORDER:
            if self._in_order is None:
                self._in_order = anyio.Lock()
            async with self._in_order:
                return await self._call(name, arguments, context)
        return await self._call(name, arguments, context)

    async def _call(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(f"{name}: {_arguments_said(e.__cause__)}") from None
            raise

    async def run_stdio_async(self) -> None:
        replies, answers = anyio.create_memory_object_stream[mcp_types.JSONRPCError](100)
        # (bytes that are no UTF-8 kept as lone surrogates, so that the line is refused: with "replace" their
        # U+FFFD went into the tool's text, changed silently)
        lines = anyio.wrap_file(_UnownedText(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape"))
        async with stdio_server(stdin=_checked_lines(lines, replies)) as (read_stream, write_stream):  # type: ignore[arg-type]
            async with anyio.create_task_group() as tg:
                tg.start_soon(_answer, answers, write_stream)
                await self._lowlevel_server.run(read_stream, write_stream,
                                                self._lowlevel_server.create_initialization_options())
                tg.cancel_scope.cancel()


def _refuse_unknown(server: MCPServer, name: str, arguments: Any) -> None:
    tool = server._tool_manager.get_tool(name)
    if tool is None or not isinstance(arguments, dict):
        return
    known = tool.parameters.get("properties", {})
    extra = sorted(k for k in arguments if k not in known)
    if extra:
        raise ToolError(f"{name}: unknown argument{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} "
                        f"(it takes: {', '.join(known)})")


class _UnownedText(io.TextIOWrapper):
    """stdin's text layer; closing it leaves ``sys.stdin.buffer`` open (as the SDK's own wrapper does)."""

    def close(self) -> None:
        try:
            self.detach()
        except ValueError:
            pass


async def _checked_lines(lines: Any, replies: Any) -> AsyncIterator[str]:
    """The stdin lines the SDK's reader can read; any other is answered here. The SDK parses each line
    with pydantic, which refuses a lone surrogate escape (``"\\ud800"``, what Python's ``json.dumps``
    writes for such a string) and anything not JSON, and then drops the line without an answer, so
    the client would wait forever for that request."""
    async for line in lines:
        if not line.strip():
            continue
        bad = _NOT_UTF8.search(line)
        if bad is not None:  # a byte that is no UTF-8 (read with "surrogateescape"): the HTTP service's 400 words
            await replies.send(_not_utf8(line, bad.start()))
            continue
        try:
            mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError:
            reply = _unreadable(line)
            if reply is not None:
                await replies.send(reply)
            continue
        yield line


#: a byte that is no UTF-8, as ``errors="surrogateescape"`` reads it (U+DC80..U+DCFF)
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def _not_utf8(line: str, at: int) -> mcp_types.JSONRPCError:
    """The parse error for a message (a stdin line, an HTTP body read with ``surrogateescape``) with a byte
    that is no UTF-8 at character ``at`` (the request's id when it can be read), in the words the HTTP
    service's API answers such a body with."""
    try:
        rid = _request_id(json.loads(line))
    except ValueError:
        rid = None
    offset = len(line[:at].encode("utf-8", "surrogateescape"))
    log.warning("a message that is not UTF-8 (byte offset %d)", offset)
    return _rpc_error(rid, mcp_types.PARSE_ERROR, f"Parse error: the message is not UTF-8 (byte "
                      f"0x{ord(line[at]) - 0xDC00:02X} at byte offset {offset}); send JSON as UTF-8 text")


def _unreadable(line: str) -> mcp_types.JSONRPCError | None:
    """The JSON-RPC error for a line the SDK cannot read: -32700 for text that is not JSON or holds a lone
    surrogate escape, -32600 for JSON that is not a JSON-RPC message; with the request's id when it can
    be read, else null. None for a notification (never answered)."""
    try:
        msg = json.loads(line)
    except ValueError as e:
        log.warning("stdin: a line that is not JSON: %s", e)
        return _rpc_error(None, mcp_types.PARSE_ERROR, f"Parse error: the line is not JSON ({e})")
    rid = _request_id(msg)
    if rid is None and isinstance(msg, dict) and "method" in msg and "id" not in msg:
        log.warning("stdin: dropped a notification the SDK cannot read")
        return None
    said = _lone_surrogate(msg)
    if said is not None:
        return _rpc_error(rid, mcp_types.PARSE_ERROR, said)
    return _rpc_error(rid, mcp_types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request, "
                      "notification or response")


def _request_id(msg: Any) -> str | int | None:
    """A parsed message's id, when it is one JSON-RPC allows (a string or an integer)."""
    rid = msg.get("id") if isinstance(msg, dict) else None
    return rid if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)) else None


def _lone_surrogate(msg: Any) -> str | None:
    """The parse error's message for a parsed message holding an unpaired surrogate (``json.loads`` reads
    ``"\\ud800"`` as one), naming it; None when UTF-8 can encode the whole message."""
    try:
        json.dumps(msg, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as e:
        return (f"Parse error: the message holds an unpaired surrogate (a lone \\u{ord(e.object[e.start]):04x} "
                "escape); send valid Unicode")
    return None


def _rpc_error(rid: str | int | None, code: int, message: str) -> mcp_types.JSONRPCError:
    return mcp_types.JSONRPCError(jsonrpc="2.0", id=rid, error=mcp_types.ErrorData(code=code, message=message))


# a \uD800-\uDFFF escape: the only way UTF-8 JSON can carry an unpaired surrogate (paired ones match too)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class LoneSurrogates:
    """ASGI wrapper for the MCP endpoint: a POSTed message holding a lone surrogate escape, or bytes that are
    no UTF-8, is answered with the parse error stdio gives (with the request's id), where the SDK says only
    "unexpected end of hex escape at line 1 column 128" or "invalid unicode code point" (no id). Any other request goes to the SDK untouched, its body replayed; the body
    is read whole here as the SDK reads it anyway (the service's body limit bounds it)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        messages = await _read_request(receive)
        error = _unreadable_body(b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request"))
        if error is not None:
            await _send_rpc_error(send, error)
            return
        await self.app(scope, _replay(messages, receive), send)


async def _read_request(receive: Any) -> list[dict[str, Any]]:
    """The request's messages up to the end of its body (or the client's leaving)."""
    messages = []
    while True:
        msg = await receive()
        messages.append(msg)
        if msg["type"] != "http.request" or not msg.get("more_body", False):
            return messages


def _replay(messages: list[dict[str, Any]], receive: Any) -> Callable[[], Any]:
    """A ``receive`` that gives ``messages`` again, then the connection's own."""
    queue = list(reversed(messages))

    async def replay() -> dict[str, Any]:
        return queue.pop() if queue else await receive()

    return replay


def _unreadable_body(body: bytes) -> mcp_types.JSONRPCError | None:
    """The parse error for a body that is no UTF-8 or holds a lone surrogate escape, as stdio answers such a
    line; None for any other (the SDK reads it and says what else may be wrong)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", "surrogateescape")
        bad = _NOT_UTF8.search(text)
        if bad is not None:
            return _not_utf8(text, bad.start())
    if not _SURROGATE_ESCAPE.search(body):
        return None
    try:
        msg = json.loads(body.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON
        return None
    said = _lone_surrogate(msg)
    return None if said is None else _rpc_error(_request_id(msg), mcp_types.PARSE_ERROR, said)


async def _send_rpc_error(send: Any, error: mcp_types.JSONRPCError) -> None:
    """A 400 with the JSON-RPC error as its JSON body, as the SDK answers its own parse errors."""
    data = error.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


async def _answer(answers: Any, write_stream: Any) -> None:
    """Send the errors :func:`_checked_lines` made through the SDK's own writer (one line each)."""
    async with answers:
        async for reply in answers:
            try:
                await write_stream.send(SessionMessage(reply))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the session ended first
                return


def _arguments_said(e: ValidationError) -> str:
    """Each failing argument, what it should be and what it was, on one line."""
    parts = []
    for err in e.errors(include_url=False):
        where = ".".join(str(x) for x in err.get("loc", ())) or "arguments"
        if err.get("type") == "literal_error" and "expected" in (err.get("ctx") or {}):  # the service's words
            parts.append(unknown_choice(where, err.get("input"), literal_choices(str(err["ctx"]["expected"]))))
            continue
        got = f" (got {err['input']!r:.60})" if "input" in err and err.get("type") != "missing" else ""
        parts.append(f"{where}: {err.get('msg', 'invalid')}{got}")
    return "; ".join(parts)


def _with_choice(out: dict[str, Any], stores: StoreSource, key: Literal["notes", "note"]) -> dict[str, Any]:
    """A search's (``notes``, a list) or recall's (``note``, a line) answer with the line saying the embedder
    is the project's own, when it was taken so (no embedder named: ``stores.embedder_choice``): an agent
    never has that choice made silently."""
    said = getattr(stores, "embedder_choice", "")
    if said and key == "notes":
        out["notes"] = [*out.get("notes", ()), said]
    elif said:
        out["note"] = f"{out['note']}; {said}" if out.get("note") else said
    return out


def build_server(stores: StoreSource, settings: Settings, *, allow: kb.Folders | None = None,
                 limits: kb.Limits | None = None, name: str = "logichunk") -> _Server:
    """The MCP server over ``stores`` (see the module docstring); ``allow``: folders ``add_file`` reads."""
    limits = limits or kb.Limits.from_settings(settings)
    folders = allow or kb.Folders(())
    memories: dict[str, Conversations] = {}
    memories_lock = threading.Lock()

    def memory(project: str | None, *, create: bool = False) -> Conversations:
        """The memory tools over a project's store (one per project, made on first use: it holds the
        project's open conversations)."""
        p = stores.get(project, create=create)
        with memories_lock:
            if p.name not in memories:
                cal, said[p.name] = server_calibration(settings.memory_calibration, p.store.embedder)
                memories[p.name] = Conversations(p, limits, calibration=cal)
            return memories[p.name]

    said: dict[str, str] = {}  # per project: the calibration its conversations use, in words
    memory(None, create=True)
    server = _Server(name, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    server.memory_calibration = next(iter(said.values()))  # (the default project's)
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
               top_k: Annotated[int, Field(description="how many hits", ge=1, strict=True)] = 5,
               include: Annotated[Include, Field(description="documents (the default: the texts added, what "
                                                            "to cite), conversations (topics archived by remember; "
                                                            "recall is the memory tool) or all")] = "documents",
               project: ProjectArg = None) -> dict[str, Any]:
        """Search the knowledge base. Returns hits best first, each with its `origin` (document, or
        conversation with its conversation_id and topic), its text, `ref`
        (DOCUMENT_ID#DOTTED_ID@TAG, TAG the first 8 hex digits of the sha256 of the chunk's text: pass it to
        get_chunk to read around it, now or after the document is edited), dotted id, `level` (parent, child...;
        also as `kind`), the `method` that cut it, document, `span` ([start, end) in the document's text), `score` and
        `raw_score` (before fusion or size normalisation): the fields the CLI's and the HTTP API's hits have;
        parent mode adds the matched child and a `context` window for large parents; graph modes return one hit per `sentence` (text and span) and the walk in `graph` (its
        path, why it stopped, its sentences in their blocks: as the CLI and HTTP searches give it; also as
        `path`, its earlier name)."""
        return _with_choice(kb.search(stores.get(project), query, limits, mode, top_k, include), stores, "notes")

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
                 project: ProjectArg = None,
                 encoding: Annotated[str | None, Field(description="the codec the file's bytes are read with (gbk, "
                                                                   "big5, shift_jis, cp1252...); default: UTF-8, "
                                                                   "or GB18030 when the bytes are not UTF-8 and "
                                                                   "read as Chinese (said in `decoded`)")] = None,
                 ) -> dict[str, Any]:
        """Store a text file from the server's allowed folders as a document and chunk it now."""
        return kb.add_file(stores.get(project, create=True), path, folders, limits, title, encoding=encoding)

    @tool(read_only)
    def list_documents(project: ProjectArg = None) -> dict[str, Any]:
        """List the documents of the knowledge base: id, title, source, size, chapters and chunk counts.
        Archived conversation topics are documents too (source `memory:CONVERSATION#TOPIC`): search
        finds them with include "conversations" or "all" (its hits say their `origin`)."""
        return kb.list_documents(stores.get(project))

    @tool(read_only)
    def get_chunk(id: Annotated[str, Field(description="a `ref` from search or get_chunk (DOCUMENT_ID#DOTTED_ID"
                                                       "@TAG, e.g. '4f3a2b1c9d0e#2.3.1@9c1e07ab'), or a dotted id "
                                                       "with document_id; without '@TAG' it reads whatever that "
                                                       "id holds now")],
                  document_id: Annotated[str | None, Field(description="the document, when `id` is only a "
                                                                       "dotted id")] = None,
                  project: ProjectArg = None) -> dict[str, Any]:
        """Read one chunk by its dotted id (2 = chapter 2, 2.3 = its third parent, 2.3.1 = that parent's
        first child) with its text and span, and the refs of its parent, siblings and children, to
        widen or narrow what you read. A tagged ref always reads the text it was made for: if an edit
        renumbered that chunk, the answer is the same text at its new `ref`, with `moved_from` (the ref
        you gave) and a `note`; if the text itself changed, an error says so (search again)."""
        return kb.get_chunk(stores.get(project), id, document_id)

    @tool(read_only)
    def chunk(text: Annotated[str, Field(description="the text to cut (nothing is stored)")],
              method: Annotated[Method, Field(description="logic-chain (model-free four-tier cascade, default), "
                                                          "cliff or fused (with the embedder), parent-child, "
                                                          "fixed or recursive (baselines)")] = "logic-chain",
              max_size: Annotated[int | None, Field(description="largest chunk (default: the method's, 1000; "
                                                                "1500 for parent-child)", ge=1, strict=True)] = None,
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
                                                                "gives", ge=1, le=kb.MAX_TOPICS, strict=True)] = None) -> dict[str, Any]:
        """Divide a text into its topics, with no size limit: where the subject changes. Headings open
        topics; cuts fall between paragraphs (or lines) and never before a sentence that leans on the
        one before. Each topic's id, [start, end) span, sentence range and text."""
        return kb.segment_text(text, limits, None, units, topics)

    @tool(writes)
    def remember(conversation_id: Annotated[str, Field(description="your id for this conversation; use the same "
                                                                   "one for every turn")],
                 user: Annotated[str, Field(description="the user's message of this turn (may be empty when the "
                                                       "assistant speaks first: a turn needs text on either side)")],
                 assistant: Annotated[str, Field(description="your reply in this turn")] = "",
                 rewritten_query: Annotated[str | None, Field(description="the user's message made self-contained "
                                                                          "(pronouns resolved), if you have it")] = None,
                 tool_calls: Annotated[list[dict[str, Any]] | None,
                                       Field(description="the tools you called in this turn: [{name, arguments, "
                                                         "result}] (arguments and result as text or JSON), kept "
                                                         "with the turn and searchable in its topic")] = None,
                 project: ProjectArg = None) -> dict[str, Any]:
        """Record one exchange of a conversation. Returns the decision on it: `action` `adsorb` (same topic),
        `split` (a new topic starts here) or `force_adsorb` (a short filler such as 'ok, go on'),
        who decided (`step`: first, heuristic, guard, screen, arbiter; `arbiter`: which one, e.g. rule) and the
        evidence `score`; any earlier topic that is now final, `closed` (archived, searchable with recall; its turns
        `start`..`end`, `turns` of them; its `resumes`: the earlier topic of the conversation it returns to,
        or null); and the turns still `open` (not in a final topic yet)."""
        return memory(project, create=True).remember(conversation_id, user, assistant, rewritten_query, tool_calls)

    @tool(read_only)
    def recall(query: Annotated[str, Field(description="what was discussed, e.g. 'the deployment error'")],
               conversation_id: Annotated[str | None, Field(description="only this conversation (its turns not "
                                                                        "archived yet come back as open_turns)")] = None,
               top_k: Annotated[int, Field(description="how many topics", ge=1, strict=True)] = 5,
               mode: Annotated[RecallMode, Field(description="hybrid (default), basic, parent, hierarchical, or "
                                                             "kernel (topic vectors)")] = "hybrid",
               max_chars: Annotated[int | None, Field(description="the most characters of text shown per topic (and "
                                                                   f"of open turns; default {RECALL_CHARS:,}, or the server's text "
                                                                   "limit when lower); the rest is cut, and `truncated` "
                                                                   "says how much and where to read it",
                                                       ge=1, strict=True)] = None,
               project: ProjectArg = None) -> dict[str, Any]:
        """Find earlier topics of conversations ("what did we discuss about X"): episodes best first,
        each with its turns (`start`..`end`, `turns` of them), title, score, `resumes` (the earlier topic
        of its conversation it returns to: its number, `resumes_document`, and `resumes_similarity`, the cosine of the two
        topics' subjects; null when none) and its exact exchanges (user and assistant text, at most
        `max_chars` characters per topic: a longer topic says what was cut in `truncated`, and a cut text
        is the excerpt around the query's matches, its place in `excerpt`). With conversation_id, its turns
        not archived yet as `open_turns`: all that fit, else the latest and the best matching earlier ones
        (marked `match`)."""
        return _with_choice(memory(project).recall(query, conversation_id, top_k, mode, max_chars), stores, "note")

    @tool(writes)
    def end_conversation(conversation_id: Annotated[str, Field(description="the conversation to close")],
                         project: ProjectArg = None) -> dict[str, Any]:
        """Close a conversation: its last topics are judged with what is there and archived, so recall
        finds them. A later remember with the same id continues it."""
        return memory(project).end(conversation_id)

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False))
    def forget_conversation(conversation_id: Annotated[str, Field(description="the conversation to delete")],
                            project: ProjectArg = None) -> dict[str, Any]:
        """Delete a conversation for good: its archived topics and its turns not archived yet (what the user
        asked to be forgotten). A later remember with the same id starts it anew."""
        return memory(project).forget(conversation_id)

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
